"""The checkout's import roots: the top-level packages and modules it provides, and where.

Found from the tree and the project's metadata (the package folders that pyproject.toml,
setup.cfg or setup.py declare, and those pytest's ``pythonpath`` puts on the import path, with
the root and ``src/`` as defaults), not from a fixed list: a package is
a folder holding ``.py`` files at some depth (``__init__.py`` or not: a namespace package is
found too). Test folders, virtual environments and build output are not the project's code.
"""

from __future__ import annotations

import functools
import os
import re
import sys
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from genstamp import stdlib
from genstamp.atomic import read_kept
from genstamp.config import read_setup_cfg
from genstamp.paths import environment, inside, installed

if sys.version_info < (3, 11):  # pragma: no cover
    import tomli as tomllib  # type: ignore[import-not-found,unused-ignore]
elif TYPE_CHECKING:
    import tomllib
else:  # the standard library's, whatever the checkout under test names its own
    tomllib = stdlib.module("tomllib")

# Folders of tests, documentation, build output and environments: no project's code.
_NOT_CODE = frozenset(
    {"tests", "test", "testing", "docs", "doc", "build", "dist", "site-packages", "node_modules"}
    | {"venv", "env", "__pycache__", "examples"}
    | {"dist-packages", "__pypackages__"}  # installers' folders too (PEP 582's, pdm's)
)
# Folders that hold no import root of the project, whatever they contain.
_SKIP = _NOT_CODE | {"bench", "benchmarks", "scripts", "tools"}
_SKIP_FILES = frozenset({"setup", "conftest", "noxfile", "tasks", "fabfile", "manage"})
_DEPTH = 6  # how deep a namespace package's first .py may lie
# Projects below the top (a monorepo's `libs/common`, a repository's `python/`): how deep
# their metadata may lie, how many folders are looked into at most, and the folders that hold
# other people's code (vendored copies are theirs, and may be installed from elsewhere).
_PROJECT_DEPTH = 3
_PROJECT_FOLDERS = 2000
_THEIRS = frozenset({"vendor", "vendored", "third_party", "thirdparty", "external", "extern"})
# Folders whose projects are no part of the checkout's code: tests' and docs' own projects,
# examples, samples, fixtures and templates (a test copies or bakes them into a temporary
# folder), build output, environments, vendored code.
_NOT_PROJECTS = (
    _NOT_CODE - {"testing", "env"}  # `packages/testing`: a library of test helpers is code
    | _THEIRS
    | {"example", "samples", "sample", "fixtures", "testdata", "test_data", "templates"}
    | {"template"}
)
_METADATA = ("pyproject.toml", "setup.py", "setup.cfg")


def find(workdir: Path, extra: Iterable[Path] = ()) -> dict[str, str]:
    """Import root name -> the absolute folder it lives in (its ``sys.path`` entry); ``extra``:
    more folders the run puts on the import path (pytest's ``pythonpath``). The projects
    below the top (``projects``) provide theirs too: a monorepo's library, installed once
    and not editable, is still the checkout's code wherever it loads from."""
    found: dict[str, str] = {}
    shared: set[str] = set()  # names two projects below the top both provide
    below: set[str] = set()
    for project in [workdir, *projects(workdir)]:
        top = project == workdir
        mine = dict(mapped(project))  # each the folder of the package itself
        theirs = {Path(folder) for folder in mine.values()}
        dirs = package_dirs(project, extra if top else ())
        declared = declared_names(project)
        for base in dirs:
            for name in _roots_in(base, declared):
                # ``src`` holds roots, and a mapped package's folder is that package: neither
                if base / name not in dirs and (base / name).resolve() not in theirs:
                    # unless it is the project's own (an old install of it may be what loads)
                    if _shadowed(base / name) and normalised(name) != project_name(project):
                        continue
                    # a project below the top is on no import path: a module of it named like
                    # the standard library's (`queue.py`) is never what loads under that name
                    if not top and (name in sys.stdlib_module_names or name in _BUILTIN):
                        continue
                    mine.setdefault(name, str(base))
        for name in _extension_names(project):  # built in place: a root before it is built
            mine.setdefault(name, str(project.resolve()))
        # a namespace package the project gives portions of only as folders its metadata maps
        # (`package-dir = {"ns.a" = "lib/a"}`): no folder of the tree is named as it (not a
        # regular package another distribution provides, a framework a plugin maps into)
        for name in mapped(project, dotted=True):
            first = name.partition(".")[0]
            if first not in mine and _namespace_here(first):
                mine[first] = str(project.resolve())
        for name, folder in mine.items():
            if name in below and found.get(name) != folder:
                shared.add(name)  # portions of one namespace package: no one folder holds it
            elif name not in found:
                found[name] = folder
                if not top:
                    below.add(name)
    return {name: folder for name, folder in found.items() if name not in shared}


_BUILTIN = frozenset(sys.builtin_module_names)


def _namespace_here(name: str) -> bool:
    """Whether the top-level package ``name`` is, as this interpreter finds it now, a
    namespace package or none at all (never a regular package: its ``__init__.py``); found
    without running it."""
    import importlib.util

    try:
        spec = importlib.util.find_spec(name)
    except (ImportError, ValueError):
        return True
    return spec is None or spec.origin in (None, "namespace")


def projects(workdir: Path) -> list[Path]:
    """The folders below the top, up to ``_PROJECT_DEPTH`` deep, that hold a Python project's
    metadata (pyproject.toml, setup.py, setup.cfg): not in test, documentation, example,
    sample, fixture, template or build folders (``_NOT_PROJECTS``), templates' own folders,
    environments, hidden folders, submodules or vendored code. Each folder is listed once, and
    nothing else is asked of the file system (the plugin asks this at every run)."""
    out: list[Path] = []
    level = [_listing(workdir)]
    seen = 0
    # a submodule's folder holds a .git too: its projects are the checkout's (the tree records
    # the commit of each), where a clone merely kept in the work tree is not
    subs = _submodules(workdir)
    for depth in range(1, _PROJECT_DEPTH + 1):
        below: list[list[os.DirEntry[str]]] = []
        for entries in level:
            for e in sorted((e for e in entries if _is_folder(e)), key=lambda e: e.name):
                name = e.name
                if name.startswith(".") or name in _NOT_PROJECTS or seen > _PROJECT_FOLDERS:
                    continue
                if "{{" in name or "{%" in name:
                    continue  # a template's folder (cookiecutter's `{{cookiecutter.slug}}`)
                seen += 1
                if depth == _PROJECT_DEPTH:  # the deepest: not listed, three names asked
                    base = e.path + os.sep  # (a listed entry's path: no separator at its end)
                    for metadata in _METADATA:  # a loop, not a generator: asked of hundreds
                        if _is_file(base + metadata):
                            if not any(
                                os.path.lexists(base + n)
                                for n in _NOT_A_PROJECT
                                if n != ".git" or e.path not in subs
                            ):
                                out.append(Path(e.path))
                            break
                    continue
                inner = _listing(Path(e.path))
                names = {c.name for c in inner}
                if names & _NOT_A_PROJECT - ({".git"} if e.path in subs else set()):
                    continue  # an environment's (pyvenv.cfg, conda-meta), a nested clone's (.git)
                if names & set(_METADATA):
                    out.append(Path(e.path))
                below.append(inner)
        level = below
    return out


_NOT_A_PROJECT = frozenset({"pyvenv.cfg", "conda-meta", ".git"})
_SUBMODULE_PATH = re.compile(r"^\s*path\s*=\s*(.+?)\s*$", re.MULTILINE)


def submodule_paths(workdir: Path) -> list[str]:
    """The ``path =`` values of the work tree's ``.gitmodules``, as written there."""
    try:
        text = (workdir / ".gitmodules").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return []
    return _SUBMODULE_PATH.findall(text)


def _submodules(workdir: Path) -> frozenset[str]:
    """The folders of the submodules ``.gitmodules`` names, as paths below ``workdir``
    spelled as ``os.scandir`` spells them."""
    top = str(workdir)
    return frozenset(os.path.join(top, *p.strip('"').split("/")) for p in submodule_paths(workdir))


def _listing(folder: Path) -> list[os.DirEntry[str]]:
    try:
        with os.scandir(folder) as it:
            return list(it)
    except OSError:
        return []


def _is_file(path: str) -> bool:
    """``os.path.isfile``, asked first whether anything is there (``os.access`` says no
    without raising: half the cost, for the hundreds of folders that hold none); a path the
    system cannot take (``ValueError``) is no file, as for ``isfile``."""
    try:
        there = os.access(path, os.F_OK)
    except ValueError:
        return False
    return there and os.path.isfile(path)


def _is_folder(entry: os.DirEntry[str]) -> bool:
    try:
        return entry.is_dir(follow_symlinks=False)
    except OSError:
        return False


def below_the_top(workdir: Path, found: Mapping[str, str]) -> set[str]:
    """The names of ``found`` (``find``) that a project below the top provides."""
    folders = [str(p.resolve()) for p in projects(workdir)]
    return {n for n, f in found.items() if any(inside(f, p) for p in folders)}


def _shadowed(folder: Path) -> bool:
    """A folder with no ``__init__.py`` (scripts in ``code/``, alembic's ``alembic/``) is at most
    a portion of a namespace package, which Python imports under that name only when no module
    or regular package of the name is found anywhere on the import path: when the standard
    library, a built-in or an installed package is, the folder is no import root (the code
    loaded under that name is theirs)."""
    name = folder.name
    if not folder.is_dir() or (folder / "__init__.py").exists():
        return False
    if name in sys.builtin_module_names:
        return True
    from importlib.machinery import PathFinder

    try:
        spec = PathFinder.find_spec(name)
    except (ImportError, ValueError, OSError):
        return False
    return spec is not None and spec.origin not in (None, "namespace")


def mapped(workdir: Path, *, dotted: bool = False) -> dict[str, str]:
    """Top-level packages the project's metadata maps to a folder of another name
    (setuptools' ``package-dir = {"pkgx" = "source"}``, the same in setup.cfg or setup.py): the
    package's name -> that folder, absolute (the folder holds the package's own files). With
    ``dotted``, subpackages so mapped too (``{"calc.plugins" = "plugins"}``, hatch's
    ``force-include`` of a folder as ``calc/shared``)."""
    found: dict[str, str] = {}
    try:
        data = _toml(read_kept(workdir / "pyproject.toml"))
        setuptools = _table(_table(data.get("tool")).get("setuptools"))
        pairs = [(str(k), v) for k, v in _table(setuptools.get("package-dir")).items()]
        pairs += [  # (one named as its folder is found in the folder holding it)
            (name, folder)
            for name, folder in _scikit_build_packages(data).items()
            if os.path.basename(folder.rstrip("/")) != name
        ]
        pairs += _hatch_renamed(_table(data.get("tool")))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError, RecursionError):
        pairs = []
    pairs += _mapped_setup(workdir)
    root = workdir.resolve()
    for name, folder in pairs:
        names = name.split(".")
        if not all(n.isidentifier() for n in names) or (len(names) > 1 and not dotted):
            continue
        if isinstance(folder, str) and folder:
            path = (workdir / folder).resolve()
            if path.is_dir() and (path == root or root in path.parents):
                found.setdefault(name, str(path))
    return found


def _mapped_setup(workdir: Path) -> list[tuple[str, object]]:
    """setup.cfg's ``package_dir`` lines and setup.py's ``package_dir={...}`` literals that
    name a package."""
    pairs: list[tuple[str, object]] = []
    parser = read_setup_cfg(workdir / "setup.cfg")
    if parser is not None:
        for line in parser.get("options", "package_dir", fallback="").splitlines():
            name, _, folder = line.rpartition("=")
            pairs.append((name.strip(), folder.strip()))
    import ast

    for node in _setup_py_nodes(workdir / "setup.py"):
        if isinstance(node, ast.keyword) and node.arg == "package_dir":
            if isinstance(node.value, ast.Dict):
                pairs += [
                    (_string(k) or "", _string(v))
                    for k, v in zip(node.value.keys, node.value.values, strict=True)
                ]
    return pairs


def installed_only(workdir: Path, found: Mapping[str, str]) -> dict[str, str]:
    """The import roots that an installed distribution of this very project provides and the
    tree does not, but once did (a ``pip install .`` made before a package was renamed or
    dropped): code of the project that no clean install has. Each maps to where the checkout
    would hold it, so that its loads are recorded and judged (``audit.judge``: no counterpart
    in the tree). A name the tree's history never held is the build's (maturin's generated
    package, an extension built from a C file), unless the install was built from another
    folder that holds it (another clone of the project, on a branch that adds it), and a name
    with no Python source is left to
    ``stale-extension``."""
    tops: set[str] = set()
    for file in _own_files(workdir):
        parts = file.split("/")
        first = parts[0]
        if first in ("..", "__pycache__") or first.endswith((".dist-info", ".egg-info", ".data")):
            continue  # scripts, metadata, the installer's data
        if len(parts) > 1 and parts[-1].endswith(".py"):
            tops.add(first)
        elif len(parts) == 1 and first.endswith(".py"):
            tops.add(first[: -len(".py")])  # a module (calc.py)
    # setuptools' editable finder (``__editable___calc_0_1_finder``) is the installer's own
    tops = {t for t in tops - set(found) if t.isidentifier() and not t.startswith("__editable__")}
    # an editable install of this project made from another copy of it (an export, a copy
    # without .git): its code is that copy's, not the tree's
    elsewhere = _installed_elsewhere(workdir, editable=True)
    if elsewhere is not None:
        tops |= {t for t in find(elsewhere) if t not in found}
    # one built from another folder (`pip install ../other-clone`): a name it provides that the
    # tree does not and that folder holds (a package of the other clone's) is that folder's
    # code, whatever this tree's history held; one it does not hold either is the build's (a
    # module protoc writes, from a worktree or an export of the same commit)
    built = _installed_elsewhere(workdir, editable=False)
    held_there = set(find(built)) - set(found) if built is not None else set()
    tops = {t for t in tops if t in held_there or _ever_held(workdir, t)}
    if not tops:
        return {}
    dirs = package_dirs(workdir)
    home = str(dirs[0]) if dirs else str(workdir)
    return dict.fromkeys(sorted(tops), home)


def _installed_elsewhere(workdir: Path, *, editable: bool) -> Path | None:
    """The folder an install of this project (by its name), ``editable`` or not, was made
    from, when that is not this work tree (PEP 610 ``direct_url.json``: a folder, not an
    archive); None otherwise."""
    import json

    name = project_name(workdir)
    if name is None:
        return None
    try:
        from importlib.metadata import distributions
        from urllib.parse import unquote, urlparse

        for dist in distributions(name=name):
            record = dist.read_text("direct_url.json")
            if _editable(record) != editable or '"dir_info"' not in (record or ""):
                continue
            data = json.loads(record or "{}")
            url = data.get("url") if isinstance(data, dict) else None
            if not isinstance(url, str) or not url.startswith("file://"):
                continue
            folder = Path(os.path.realpath(unquote(urlparse(url).path)))
            if not inside(str(folder), os.path.realpath(workdir)) and folder.is_dir():
                return folder
    except Exception:  # metadata that cannot be read: none known
        return None
    return None


def _ever_held(workdir: Path, top: str) -> bool:
    """Whether a commit of HEAD's history held a package folder or a module named ``top``."""
    from genstamp.changed import git_output

    specs = [f":(glob)**/{top}/**/*.py", f":(glob)**/{top}.py"]
    out = git_output(workdir, "log", "-1", "--format=%H", "HEAD", "--", *specs)
    return out is None or bool(out.strip())  # None: cannot tell, judged as a name the tree lacks


def own_installed_files(workdir: Path) -> dict[str, str] | None:
    """The files (``/``-separated, as its RECORD lists them) of the installed, not editable,
    distribution of this very project -> their real paths; empty when there is none (an
    editable install's files are its finder and ``.pth``: the code is the tree's), None when
    the project names itself nowhere genstamp reads (then none can be told apart)."""
    if project_name(workdir) is None:
        return None
    files: dict[str, str] = {}
    for dist in [_own_distribution(workdir), *_installed_from_here(workdir)]:
        try:
            for f in dist.files or [] if dist is not None else []:
                if f.parts:
                    files.setdefault("/".join(f.parts), os.path.realpath(str(dist.locate_file(f))))
        except Exception:  # a damaged RECORD, a distribution of another kind: none known
            continue
    return files


def _own_files(workdir: Path) -> list[str]:
    """The files (``/``-separated) of this project's installed, not editable, distributions:
    the one of its name, and any the installer recorded as installed from this very folder
    (a ``pip install .`` made before the project was renamed)."""
    files: list[str] = []
    for dist in [_own_distribution(workdir), *_installed_from_here(workdir)]:
        try:
            files += ["/".join(f.parts) for f in (dist.files or [] if dist is not None else [])]
        except Exception:  # a damaged RECORD: as if none
            continue
    return files


def _installed_from_here(workdir: Path) -> list[Any]:
    """The installed, not editable, distributions whose installer's record (PEP 610
    ``direct_url.json``) names this folder or an archive in it, whatever their name; each
    ``.dist-info`` folder of the import path is asked directly (one open each), not through
    ``importlib.metadata``."""
    import json

    root = os.path.realpath(workdir)
    found: list[Any] = []
    seen: set[str] = set()
    for entry in sys.path:
        if not entry or not installed(entry) or entry in seen:
            continue
        seen.add(entry)
        for e in _listing(Path(entry)):
            if not e.name.endswith(".dist-info"):
                continue
            try:
                with open(os.path.join(e.path, "direct_url.json"), "rb") as fh:
                    data = json.loads(fh.read())
            except (OSError, ValueError):
                continue
            url = data.get("url") if isinstance(data, dict) else None
            if not isinstance(url, str) or not url.startswith("file://"):
                continue
            from urllib.parse import unquote, urlparse

            # this folder, or an archive built in it (`pip wheel . -w dist`, then installed)
            if not inside(os.path.realpath(unquote(urlparse(url).path)), root):
                continue
            info = data.get("dir_info")
            if isinstance(info, dict) and info.get("editable") is True:
                continue  # an editable install's code is the tree's
            from importlib.metadata import PathDistribution

            found.append(PathDistribution(Path(e.path)))
    return found


def _own_distribution(workdir: Path) -> Any:
    """This project's installed distribution (``importlib.metadata``), None when there is none
    or it is an editable install."""
    name = project_name(workdir)
    if name is None:
        return None
    root = str(workdir.resolve())
    try:
        from importlib.metadata import distributions

        dist = next(
            (
                d
                for d in distributions(name=name)
                # a build's metadata in the tree (``src/calc.egg-info``) is not an install
                if installed(where := os.path.realpath(str(d.locate_file(""))))
                or not inside(where, root)
            ),
            None,
        )
        if dist is None or _editable(dist.read_text("direct_url.json")):
            return None
        return dist
    except Exception:  # metadata that cannot be read: no distribution of it
        return None


def _editable(direct_url: str | None) -> bool:
    """Whether the installer's PEP 610 record says the install is editable (``pip install
    -e``: setuptools', hatchling's or pdm's finder module and ``.pth`` import the tree)."""
    import json

    try:
        info = json.loads(direct_url or "{}").get("dir_info")
    except (ValueError, AttributeError):
        return False
    return isinstance(info, dict) and info.get("editable") is True


def project_name(root: Path) -> str | None:
    """The project's distribution name, normalised (PEP 503), from ``root``'s pyproject.toml
    or setup.cfg; None when neither names it."""
    name: object = None
    try:
        data = _toml(read_kept(root / "pyproject.toml"))
        project = data.get("project")
        name = project.get("name") if isinstance(project, dict) else None
    except (OSError, UnicodeDecodeError, ValueError):
        name = None
    if not isinstance(name, str):
        parser = read_setup_cfg(root / "setup.cfg")
        name = parser.get("metadata", "name", fallback=None) if parser is not None else None
    if not isinstance(name, str) or not name.strip():
        return None
    return normalised(name)


def normalised(name: str) -> str:
    """A distribution name as PEP 503 compares them (``My_Pkg`` is ``my-pkg``)."""
    return re.sub(r"[-_.]+", "-", name.strip()).lower()


def bases(workdir: Path, names: Iterable[str], extra: Iterable[Path] = ()) -> dict[str, str]:
    """The folders of ``names`` (``[tool.genstamp] packages``) in the checkout: the first
    package folder holding each (the root when none does)."""
    dirs = package_dirs(workdir, extra)
    out: dict[str, str] = {}
    for name in names:
        top = name.partition(".")[0]
        out[top] = next(
            (
                str(d)
                for d in dirs
                if (d / top).is_dir() or (d / f"{top}.py").is_file() or _has_ext(d, top)
            ),
            str(workdir),
        )
    return out


def package_dirs(workdir: Path, extra: Iterable[Path] = ()) -> list[Path]:
    """The folders the project's metadata declares as holding its packages, and ``extra``,
    then the root and ``src/``; only those inside the work tree."""
    declared: list[str | Path] = []
    declared += _from_pyproject(workdir / "pyproject.toml")
    declared += _from_setup_cfg(workdir / "setup.cfg")
    declared += _from_setup_py(workdir / "setup.py")
    root = workdir.resolve()
    # pytest's pythonpath may name a test folder too (for its helpers): not the project's code
    declared += [p for p in extra if not _SKIP.intersection(_parts_below(Path(p), root))]
    out: list[Path] = []
    for rel in [*declared, "src", ""]:
        folder = (workdir / rel).resolve() if rel else root
        if folder.is_dir() and (folder == root or root in folder.parents) and folder not in out:
            out.append(folder)
    return out


def _parts_below(folder: Path, root: Path) -> tuple[str, ...]:
    """The names of ``folder`` below ``root`` (none when it is not below it)."""
    try:
        return folder.resolve().relative_to(root).parts
    except ValueError:
        return ()


def _roots_in(base: Path, declared: frozenset[str] = frozenset()) -> list[str]:
    """The import roots in the folder ``base``: its packages and modules, but for folders and
    files of those names no project's code has (``tools/``, ``setup.py``, ``test_*.py``),
    unless the project's metadata names them (``declared``)."""
    names: list[str] = []
    try:
        entries = list(os.scandir(base))
    except OSError:
        return names
    for e in entries:
        name = e.name
        if name.startswith((".", "_")) and name != "__init__.py" and not _private_ok(name):
            continue
        if e.is_dir(follow_symlinks=False):
            if (
                name.isidentifier()
                and (name not in _SKIP or name in declared)
                and not environment(e.path)
                and _holds_python(e.path, _DEPTH)
            ):
                names.append(name)
        elif name.endswith(".py"):
            stem = name[:-3]
            skipped = stem in _SKIP_FILES or stem.startswith("test")
            if stem.isidentifier() and (not skipped or stem in declared):
                names.append(stem)
        else:
            stem = name.partition(".")[0]
            if stem.isidentifier() and name.endswith((".so", ".pyd")):
                names.append(stem)
    return names


def declared_names(project: Path) -> frozenset[str]:
    """The top-level packages and modules the project's metadata names one by one:
    setuptools' ``packages`` and ``py-modules`` (pyproject.toml, setup.cfg, literals of
    setup.py), hatch's wheel ``packages``, poetry's ``packages`` includes, flit's module;
    roots of the project whatever their folder is named (``packages = ["tools"]``)."""
    names: list[str] = []
    try:
        data = _toml(read_kept(project / "pyproject.toml"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError, RecursionError):
        data = {}
    tool = _table(data.get("tool"))
    setuptools = _table(tool.get("setuptools"))
    names += _strings(setuptools.get("packages")) + _strings(setuptools.get("py-modules"))
    names += [
        os.path.basename(p.rstrip("/")) for p in _strings(_hatch_wheel(tool)[1].get("packages"))
    ]
    poetry = _table(tool.get("poetry"))
    for entry in poetry.get("packages", []) if isinstance(poetry.get("packages"), list) else []:
        include = entry.get("include") if isinstance(entry, Mapping) else None
        if isinstance(include, str):
            names.append(include.strip("/").partition("/")[0])
    names += _strings(_table(_table(tool.get("flit")).get("module")).get("name"))
    parser = read_setup_cfg(project / "setup.cfg")
    for option in ("packages", "py_modules"):
        if parser is not None and parser.has_option("options", option):
            names += parser.get("options", option).replace(",", " ").split()
    names += _setup_py_names(project / "setup.py")
    tops = (n.strip().partition(".")[0] for n in names)
    # setup.py is the build's and conftest.py pytest's, whatever the metadata says
    return frozenset(n for n in tops if n.isidentifier()) - {"setup", "conftest"}


def _setup_py_names(path: Path) -> list[str]:
    """The literal strings of a ``setup.py``'s ``packages=[...]`` and ``py_modules=[...]``."""
    import ast

    out: list[str] = []
    for node in _setup_py_nodes(path):
        if isinstance(node, ast.keyword) and node.arg in ("packages", "py_modules"):
            if isinstance(node.value, (ast.List, ast.Tuple)):
                out += [s for s in map(_string, node.value.elts) if s]
    return out


def _private_ok(name: str) -> bool:
    """A top-level ``_name`` package or module (``_version.py``, ``_cffi``) is a root too."""
    return name.startswith("_") and not name.startswith("__")


def _holds_python(folder: str, depth: int) -> bool:
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return False
    if any(e.name.endswith(".py") and e.is_file() for e in entries):
        return True
    if depth <= 0:
        return False
    return any(
        e.is_dir(follow_symlinks=False)
        and not e.name.startswith(".")
        and e.name not in _SKIP
        and _holds_python(e.path, depth - 1)
        for e in entries
    )


def _has_ext(folder: Path, stem: str) -> bool:
    try:
        return any(
            n.startswith(stem + ".") and n.endswith((".so", ".pyd")) for n in os.listdir(folder)
        )
    except OSError:
        return False


def _from_pyproject(path: Path) -> list[str]:
    try:
        data = _toml(read_kept(path))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError, RecursionError):
        return []
    tool = _table(data.get("tool"))
    out: list[str] = []
    setuptools = _table(tool.get("setuptools"))
    package_dir = _table(setuptools.get("package-dir"))
    out += [str(v) for k, v in package_dir.items() if isinstance(v, str) and not k]
    maturin = _table(tool.get("maturin"))
    out += [str(v) for v in (maturin.get("python-source"),) if isinstance(v, str)]
    find = _table(_table(setuptools.get("packages")).get("find"))
    out += [str(w) for w in _strings(find.get("where"))]
    build, wheel = _hatch_wheel(tool)
    for pkg in _strings(wheel.get("packages")):
        out.append(os.path.dirname(pkg.rstrip("/")))
    # hatch's `sources`: prefixes taken off the paths (a list, or a table of prefix -> ""), so
    # `sources = ["lib"]` with `only-include = ["lib/foo"]` puts lib/foo at foo
    for table in (build, wheel):
        sources = table.get("sources")
        if isinstance(sources, list):
            out += [p.strip("/") for p in _strings(sources) if p.strip("/")]
        elif isinstance(sources, dict):
            out += [str(k).strip("/") for k, v in sources.items() if v == "" and str(k).strip("/")]
    poetry = _table(tool.get("poetry"))
    for entry in poetry.get("packages", []) if isinstance(poetry.get("packages"), list) else []:
        if isinstance(entry, Mapping):
            base = entry.get("from", "")
            include = entry.get("include", "")
            if isinstance(base, str) and isinstance(include, str):
                if any(c in include for c in "*?["):  # a glob: its first part is the package
                    out.append(base)
                else:
                    out.append(os.path.join(base, os.path.dirname(include.rstrip("/"))))
    pdm = _table(_table(_table(tool.get("pdm")).get("build")))
    out += [str(d) for d in _strings(pdm.get("package-dir"))]
    out += _scikit_build_bases(data)
    return out


def _hatch_wheel(tool: Mapping[str, Any]) -> tuple[Mapping[str, Any], Mapping[str, Any]]:
    """hatch's ``[tool.hatch.build]`` table and its wheel target's."""
    build = _table(_table(tool.get("hatch")).get("build"))
    return build, _table(_table(build.get("targets")).get("wheel"))


def _hatch_renamed(tool: Mapping[str, Any]) -> list[tuple[str, object]]:
    """Packages hatch's wheel puts under another name than their folder's: a ``sources``
    prefix rewritten to a package (``"lib/foo_impl" = "foo"``) and a ``force-include`` of a
    folder (``"lib/foo_impl" = "foo"``): the package's name -> that folder."""
    build, wheel = _hatch_wheel(tool)
    pairs: list[tuple[str, object]] = []
    for table in (build, wheel):
        for key in ("sources", "force-include"):
            given = table.get(key)
            for folder, dest in given.items() if isinstance(given, dict) else ():
                if isinstance(dest, str) and dest.strip("/"):  # a subpackage's: dotted
                    pairs.append((dest.strip("/").replace("/", "."), str(folder).strip("/")))
    return pairs


def _scikit_build_packages(data: Mapping[str, Any]) -> dict[str, str]:
    """scikit-build-core's ``[tool.scikit-build] wheel.packages``: each package's name -> its
    folder (a list of folders, each named as its package, or a table of name = folder); when
    none is set, the folder its auto-discovery takes for the project's name (``src/NAME``,
    ``python/NAME`` or ``NAME`` holding an ``__init__.py``), for a project it builds."""
    tool = _table(data.get("tool"))
    packages = _table(_table(tool.get("scikit-build")).get("wheel")).get("packages")
    if isinstance(packages, dict):
        return {str(k): v for k, v in packages.items() if isinstance(v, str)}
    if isinstance(packages, list):
        return {os.path.basename(p.rstrip("/")): p for p in _strings(packages)}
    backend = _table(data.get("build-system")).get("build-backend")
    name = _table(data.get("project")).get("name")
    if packages is not None or backend != "scikit_build_core.build" or not isinstance(name, str):
        return {}
    name = name.replace("-", "_").replace(".", "_")  # as scikit-build-core names it
    return {name: f"python/{name}"}  # (src/NAME and NAME lie in folders searched anyway)


def _scikit_build_bases(data: Mapping[str, Any]) -> list[str]:
    """The folders holding scikit-build-core's packages (``_scikit_build_packages``) where each
    is named as its package (a package mapped to a folder of another name is ``mapped``)."""
    return [
        os.path.dirname(folder.rstrip("/"))
        for name, folder in _scikit_build_packages(data).items()
        if os.path.basename(folder.rstrip("/")) == name
    ]


def _from_setup_cfg(path: Path) -> list[str]:
    parser = read_setup_cfg(path)
    if parser is None:
        return []
    out: list[str] = []
    if parser.has_option("options", "package_dir"):
        for line in parser.get("options", "package_dir").splitlines():
            name, _, folder = line.rpartition("=")
            if folder.strip() and not name.strip():
                out.append(folder.strip())
    if parser.has_option("options.packages.find", "where"):
        out += parser.get("options.packages.find", "where").split()
    return out


def _setup_py_nodes(path: Path) -> Iterator[Any]:
    """Every node of a ``setup.py`` (read, never run); none where there is no such Python."""
    if not path.is_file():
        return iter(())
    import ast  # only for a project that has a setup.py

    try:
        return ast.walk(_python(read_kept(path)))
    except (OSError, SyntaxError, ValueError):
        return iter(())


def _from_setup_py(path: Path) -> list[str]:
    """The folders a ``setup.py`` names as literals, read without running it: the values of
    ``package_dir={...}`` and where ``find_packages``/``find_namespace_packages`` look."""
    import ast

    found: list[str | None] = []
    for node in _setup_py_nodes(path):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
        finds = name in ("find_packages", "find_namespace_packages")
        for kw in node.keywords:
            if kw.arg == "package_dir" and isinstance(kw.value, ast.Dict):
                found += [
                    _string(v)
                    for k, v in zip(kw.value.keys, kw.value.values, strict=True)
                    if _string(k) == ""
                ]
            elif kw.arg == "where" and finds:
                found.append(_string(kw.value))
        if finds and node.args:
            found.append(_string(node.args[0]))
    return [f for f in found if f]


def _extension_names(project: Path) -> list[str]:
    """The top-level import names of the extension modules the project's metadata declares
    (``Extension("_fast", [...])`` in ``setup.py``, read without running it; setuptools'
    ``[tool.setuptools] ext-modules`` in pyproject.toml): the checkout's code wherever it is
    loaded from, as its built file is in no tree (another clone's build on the path runs in
    its place)."""
    names: list[str | None] = []
    try:
        data = _toml(read_kept(project / "pyproject.toml"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError, RecursionError):
        data = {}
    modules = _table(_table(data.get("tool")).get("setuptools")).get("ext-modules")
    for entry in modules if isinstance(modules, list) else []:
        name = entry.get("name") if isinstance(entry, dict) else None
        names.append(name if isinstance(name, str) else None)
    import ast

    for node in _setup_py_nodes(project / "setup.py"):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        called = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
        if called not in ("Extension", "Pybind11Extension", "CppExtension", "CUDAExtension"):
            continue
        given = node.args[0] if node.args else None
        given = next((kw.value for kw in node.keywords if kw.arg == "name"), given)
        names.append(_string(given))
    tops = (n.partition(".")[0] for n in names if n)
    return list(dict.fromkeys(t for t in tops if t.isidentifier()))


@functools.lru_cache(maxsize=8)
def _python(raw: bytes) -> Any:
    """A setup.py's syntax tree (``ast.Module``), parsed once for its several readers (package
    folders, mapped packages, extension names), which only read it. SyntaxError or ValueError
    as ``ast.parse`` raises them."""
    import ast  # only for a project that has a setup.py

    return ast.parse(raw)


@functools.lru_cache(maxsize=16)
def _toml(raw: bytes) -> dict[str, Any]:
    """A pyproject.toml's data, parsed once for the several readers of one file (callers only
    read it). UnicodeDecodeError or TOMLDecodeError as ``tomllib`` raises them."""
    data: dict[str, Any] = tomllib.loads(raw.decode("utf-8"))
    return data


def _string(node: object) -> str | None:
    value = getattr(node, "value", None) if type(node).__name__ == "Constant" else None
    return value if isinstance(value, str) else None


def _table(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, dict) else {}


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, list):
        return [v for v in value if isinstance(v, str)]
    return []
