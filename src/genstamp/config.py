"""``[tool.genstamp]`` in the checkout's pyproject.toml."""

from __future__ import annotations

import posixpath
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from genstamp import stdlib
from genstamp.atomic import read_kept
from genstamp.errors import GenstampError
from genstamp.typedtuple import NamedTuple

if TYPE_CHECKING:
    import configparser

if sys.version_info < (3, 11):  # pragma: no cover
    import tomli as tomllib  # type: ignore[import-not-found,unused-ignore]
elif TYPE_CHECKING:
    import tomllib
else:  # the standard library's, whatever the checkout under test names its own
    tomllib = stdlib.module("tomllib")


class Config(NamedTuple):
    evidence: Path | None = None  # where the evidence goes; None: inside the git dir
    packages: tuple[str, ...] | None = None  # top-level packages to audit; None: found
    allow_partial: bool = False  # may a partial run count as evidence?
    scrub_venvs: bool = False  # does scrub enter virtual environments in the tree?
    # Globs of git-ignored files the build makes (a setuptools-scm _version.py): the tests may
    # load them though no tree holds them.
    generated: tuple[str, ...] = ()
    suites: tuple[str, ...] = ()  # a monorepo's suite folders, each with its own pytest config
    # git's allowed signers file that attestations must be signed against (None: not required)
    attestation_signers: Path | None = None
    # `genstamp clean-run`: how the clean environment installs the project (pip install
    # arguments; None: the project with its test extra, if any), and whether the gate requires
    # passing clean-room evidence for the tree it judges.
    clean_install: tuple[str, ...] | None = None
    require_clean_room: bool = False
    # The version files the build writes (setuptools-scm, hatch-vcs, versioneer; generated
    # too): an installed copy of one is the build's, whatever it holds.
    built: tuple[str, ...] = ()
    # Sources whose version line the build rewrites in the copy it installs (versioningit's
    # ``onbuild``): an installed copy is the tree's where all else is the same.
    version_lines: tuple[str, ...] = ()  # (globs)
    # Of ``generated``, the globs [tool.genstamp] declares (the rest the build's settings give).
    declared: tuple[str, ...] = ()


_KEYS: dict[str, type] = {
    "evidence": str,
    "packages": list,
    "allow-partial": bool,
    "scrub-venvs": bool,
    "generated": list,
    "suites": list,
    "attestation-signers": str,
    "clean-install": list,
    "require-clean-room": bool,
}


def load(workdir: Path) -> Config:
    path = workdir / "pyproject.toml"
    try:
        raw = read_kept(path)
    except FileNotFoundError:  # the defaults, and the version files setup.py or setup.cfg name
        raw = b""
    except OSError as exc:
        raise GenstampError(
            f"cannot read {path}: {exc.strerror or exc}", "make it readable for this user"
        ) from exc
    return from_bytes(raw, workdir, path)


def from_bytes(raw: bytes, workdir: Path, path: Path) -> Config:
    """The settings a ``pyproject.toml`` holding ``raw`` gives the checkout at ``workdir``."""
    try:
        data = tomllib.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, tomllib.TOMLDecodeError, RecursionError) as exc:
        raise GenstampError(f"{path} is not valid TOML: {exc}", "fix the file") from exc
    tool = data.get("tool", {})
    section = tool.get("genstamp", {}) if isinstance(tool, dict) else {}
    if not isinstance(section, dict):
        raise GenstampError(
            f"{path}: [tool.genstamp] must be a table", "write its settings under [tool.genstamp]"
        )
    found = parse(section, workdir, path)
    versions = version_files(tool, workdir) + setup_py_version_files(workdir)
    versions += versioneer_file(tool, workdir)
    for folder in found.suites:  # a monorepo's subprojects: each its own build settings
        below = workdir / folder
        versions += [
            f"{folder}/{v}"
            for v in version_files(_tool(below), below) + setup_py_version_files(below)
        ]
    found = found._replace(
        built=tuple(dict.fromkeys(versions)),
        version_lines=tuple(versioningit_files(tool)),
        declared=found.generated,
    )
    versions = [v for v in dict.fromkeys(versions) if v not in found.generated]
    return found._replace(generated=found.generated + tuple(versions)) if versions else found


def with_projects_below(settings: Config, workdir: Path) -> Config:
    """``settings`` with the version files the projects below the top declare (a monorepo
    library's setuptools-scm ``version_file``) generated too: asked where code is judged (the
    gate, the plugin's forecast), not by every reader of the configuration (a walk)."""
    from genstamp.roots import projects

    versions: list[str] = []
    for folder in projects(workdir):
        rel = folder.relative_to(workdir).as_posix()
        found = version_files(_tool(folder), folder) + setup_py_version_files(folder)
        versions += [f"{rel}/{v}" for v in found]
    versions = [v for v in dict.fromkeys(versions) if v not in settings.generated]
    return (
        settings._replace(generated=settings.generated + tuple(versions)) if versions else settings
    )


def _tool(folder: Path) -> object:
    """The ``[tool]`` table of ``folder``'s pyproject.toml; None when there is none to read (a
    subproject's file that is not TOML is not genstamp's to refuse)."""
    try:
        data = tomllib.loads((folder / "pyproject.toml").read_text("utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError, RecursionError):
        return None
    return data.get("tool")


def version_files(tool: object, folder: Path | None = None) -> list[str]:
    """The version files the project's build writes from git (and git ignores): setuptools-scm's
    ``version_file`` (or ``write_to``; ``[tool.vcs-versioning]`` too, where setuptools-scm 10
    reads them), hatch-vcs's ``version-file`` (the build's hook, or a target's), and
    pdm-backend's ``[tool.pdm.version] write_to`` (below its package folder, as an editable
    install writes it: ``package-dir``, or ``src`` when ``folder`` has one). The project
    declares them generated there already; they count as ``generated`` without a second
    declaration."""
    if not isinstance(tool, dict):
        return []
    tables: list[tuple[object, str, str]] = []
    for name in ("setuptools_scm", "vcs-versioning"):
        table = tool.get(name)
        tables += [(table, "version_file", ""), (table, "write_to", "")]
    build = _table(_table(tool.get("hatch")).get("build"))
    hooks = [_table(build.get("hooks"))]
    hooks += [_table(_table(t).get("hooks")) for t in _table(build.get("targets")).values()]
    tables += [(h.get("vcs"), "version-file", "") for h in hooks]
    pdm = _table(tool.get("pdm"))
    version = _table(pdm.get("version"))
    if version.get("source") in ("scm", "call") and folder is not None:
        tables.append((version, "write_to", _pdm_package_dir(_table(pdm.get("build")), folder)))
    out = []
    for table, key, below in tables:
        rel = _relative(table.get(key) if isinstance(table, dict) else None)
        rel = _relative(f"{below}/{rel}") if rel is not None and below else rel
        if rel is not None and rel not in out:
            out.append(rel)
    return out


def _table(value: object) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _pdm_package_dir(build: dict[str, Any], folder: Path) -> str:
    """pdm-backend's package folder: its ``package-dir``, else ``src`` when there is one (and
    no ``includes`` name a folder out of it), else the project's own."""
    given = build.get("package-dir")
    if isinstance(given, str):
        return given.strip("/")
    includes = build.get("includes")
    if (folder / "src").is_dir() and (
        not includes
        or any(isinstance(i, str) and i.lstrip("./").startswith("src/") for i in includes)
    ):
        return "src"
    return ""


def setup_py_version_files(folder: Path) -> list[str]:
    """setuptools-scm's version file as the project's ``setup.py`` names it (``setup(...,
    use_scm_version={"write_to": "pkg/_version.py"})``, or ``version_file``), read without
    running it; a setting that is no literal is not read (declare the file ``generated``)."""
    try:
        text = read_kept(folder / "setup.py")
    except OSError:
        return []
    if b"use_scm_version" not in text:
        return []
    import ast  # only for a project whose setup.py configures setuptools-scm

    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return []
    out: list[str] = []
    for node in ast.walk(tree):
        if not (isinstance(node, ast.keyword) and node.arg == "use_scm_version"):
            continue
        if not isinstance(node.value, ast.Dict):
            continue
        for key, value in zip(node.value.keys, node.value.values, strict=True):
            name = key.value if isinstance(key, ast.Constant) else None
            if name in ("version_file", "write_to") and isinstance(value, ast.Constant):
                rel = _relative(value.value)
                if rel is not None and rel not in out:
                    out.append(rel)
    return out


def versioningit_files(tool: object) -> list[str]:
    """The sources whose version line the build rewrites in the package it builds, as globs:
    versioningit's ``onbuild`` step (``[tool.versioningit.onbuild] source-file``), and
    poetry-dynamic-versioning's substitution, where it is enabled (its ``files`` in each of
    its ``folders``: by default ``*.py``, ``*/__init__.py``, ``*/__version__.py`` and
    ``*/_version.py`` at the top)."""
    table = _table(_table(_table(tool).get("versioningit")).get("onbuild"))
    rel = _relative(table.get("source-file"))
    out = [rel] if rel is not None else []
    dynamic = _table(_table(tool).get("poetry-dynamic-versioning"))
    if dynamic.get("enable") is True:
        # as it reads its settings: the top always, with its `files`, and each of its
        # `folders` with the folder's own `files`, else those
        substitution = _table(dynamic.get("substitution"))
        files = substitution.get("files", _SUBSTITUTED)
        folders = substitution.get("folders", [])
        for folder in [{"path": "."}, *(folders if isinstance(folders, list) else ())]:
            base = _relative(_table(folder).get("path", "."))
            own = _table(folder).get("files", files)
            names = [n for n in own if isinstance(n, str)] if isinstance(own, list) else []
            globs = [_relative(posixpath.join(base or ".", name)) for name in names]
            out += [glob for glob in globs if glob]
    return list(dict.fromkeys(out))


# poetry-dynamic-versioning's substitution files, by default
_SUBSTITUTED = ["*.py", "*/__init__.py", "*/__version__.py", "*/_version.py"]


def versioneer_file(tool: object, workdir: Path) -> list[str]:
    """versioneer's version module, which its build rewrites in the installed package with the
    static version (``versionfile_source``, in pyproject.toml's ``[tool.versioneer]``, whose
    ``[tool]`` table is ``tool``, or in ``setup.cfg``'s ``[versioneer]``)."""
    table = tool.get("versioneer") if isinstance(tool, dict) else None
    found = table.get("versionfile_source") if isinstance(table, dict) else None
    if not isinstance(found, str):
        parser = read_setup_cfg(workdir / "setup.cfg")
        found = parser.get("versioneer", "versionfile_source", fallback=None) if parser else None
    rel = _relative(found)
    return [rel] if rel is not None else []


# what each list of ``tool.genstamp`` holds: the check of one item, what the items are, an example
_LISTS: dict[str, tuple[Callable[[str], bool], str, str]] = {
    "packages": (bool, "module names", '["calc", "calc_cli"]'),
    "generated": (
        lambda glob: bool(glob) and not glob.startswith("/"),
        "globs relative to the work tree",
        '["src/calc/_version.py", "build/**/*.py"]',
    ),
    # one leading out of the repository is none of its folders
    "suites": (
        lambda folder: bool(folder.strip()) and _suite_folder(folder) is not None,
        "folders inside the repository",
        '["svc_a", "svc_b"]',
    ),
    "clean-install": (
        bool,
        "pip install arguments",
        '["-e", ".[test]"] or ["-r", "requirements-dev.txt", "."]',
    ),
}


def _suite_folder(given: str) -> str | None:
    """A ``suites`` entry as a folder of the tree ("" for the top; a leading ``/`` is the
    top's, as in a gitignore); None when it leads out of the repository."""
    folder = posixpath.normpath(given.strip().replace("\\", "/").lstrip("/") or ".")
    if folder == ".":
        return ""
    return None if folder.split("/")[0] == ".." else folder


def _relative(value: object) -> str | None:
    """A build setting's path, relative to the project and ``/``-separated; None when it is
    none, absolute or leads out of the project."""
    if not isinstance(value, str) or not value.strip() or value.startswith("/"):
        return None
    rel = value.strip().replace("\\", "/").removeprefix("./")
    return None if ".." in rel.split("/") else rel


def read_setup_cfg(path: Path) -> configparser.ConfigParser | None:
    """The ``setup.cfg`` at ``path`` as setuptools reads it; None when there is none or it
    cannot be read. ``configparser`` is imported only then (about 1 ms of each run)."""
    if not path.is_file():
        return None
    import configparser

    parser = configparser.ConfigParser(interpolation=None)
    try:
        parser.read(path, encoding="utf-8")
    except (configparser.Error, OSError, UnicodeDecodeError):
        return None
    return parser


# how each type of setting is written, for the remedy of one written as another
_EXAMPLES: dict[type, str] = {
    bool: "true or false",
    str: 'a string in quotes ("…")',
    list: 'a list in brackets (["…"])',
}


def parse(section: dict[str, Any], workdir: Path, path: Path) -> Config:
    for key, value in section.items():
        if key not in _KEYS:
            known = ", ".join(sorted(_KEYS))
            raise GenstampError(
                f"{path}: unknown key tool.genstamp.{key}", f"the keys genstamp knows: {known}"
            )
        if not isinstance(value, _KEYS[key]):
            raise GenstampError(
                f"{path}: tool.genstamp.{key} must be a {_KEYS[key].__name__}, "
                f"not {type(value).__name__}",
                f"write it as {_EXAMPLES[_KEYS[key]]} (README: Configuration)",
            )
        # a path, a glob or an argument: none holds a NUL (no system call takes one)
        if any(
            "\0" in v for v in (value if isinstance(value, list) else [value]) if isinstance(v, str)
        ):
            raise GenstampError(
                f"{path}: tool.genstamp.{key} holds a NUL character (\\u0000)",
                "remove it: no path or argument can hold one",
            )
    for key, (fits, what, example) in _LISTS.items():
        if not all(isinstance(v, str) and fits(v) for v in section.get(key, [])):
            raise GenstampError(
                f"{path}: tool.genstamp.{key} must be a list of {what}", f"for example {example}"
            )
    packages = section.get("packages")
    generated = section.get("generated", [])
    # as the tree names its folders: `./svc_a` is svc_a, `.` the top (a project with
    # subprojects)
    suites = [_suite_folder(p) for p in section.get("suites", [])]
    clean_install = section.get("clean-install")
    evidence = section.get("evidence")
    return Config(
        evidence=(workdir / evidence) if evidence else None,
        packages=tuple(packages) if packages is not None else None,
        allow_partial=section.get("allow-partial", False),
        scrub_venvs=section.get("scrub-venvs", False),
        generated=tuple(generated),
        suites=tuple(dict.fromkeys(p for p in suites if p is not None)),
        attestation_signers=_signers(section, workdir),
        clean_install=tuple(clean_install) if clean_install is not None else None,
        require_clean_room=section.get("require-clean-room", False),
    )


def _signers(section: dict[str, Any], workdir: Path) -> Path | None:
    value = section.get("attestation-signers")
    return workdir / value if value else None
