"""The clean room's virtual environments: made fresh, cached in the git dir by their inputs.

An environment holds the project's dependencies, its build requirements, pytest and genstamp.
It is keyed by a digest of everything that decides what gets installed (``key``): the
dependency tables of pyproject.toml, lock and requirements files, the Python, the installer and
its arguments, the index settings, and genstamp's own code. A key seen before reuses the
environment; the project itself is always installed again from the clean checkout.

Nothing of the user's environment reaches it (``clean_environ``): no user site, no PYTHONPATH,
no VIRTUAL_ENV, no editable install (the environment is created empty from the base
interpreter). The user's package index configuration (pip's and uv's) is passed on.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import posixpath
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import IO, Any

from genstamp import __version__, build, selfwheel, versioned
from genstamp.atomic import write_atomic
from genstamp.errors import GenstampError
from genstamp.typedtuple import NamedTuple

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib  # type: ignore[import-not-found,unused-ignore]

FORMAT = "genstamp-clean-env"
VERSION = 1
KEEP = 3  # environments kept per checkout; the least recently used are removed

# Lock and requirement files whose content decides the dependencies (at the checkout's root).
DEPENDENCY_FILES = (
    "uv.lock",
    "poetry.lock",
    "pdm.lock",
    "Pipfile",
    "Pipfile.lock",
    "setup.py",
    "setup.cfg",
)
DEPENDENCY_GLOBS = ("requirements*.txt", "requirements/*.txt", "constraints*.txt")
# The parts of pyproject.toml that decide what is installed (not the version, not tool config).
PYPROJECT_TABLES = (
    ("build-system",),
    ("project", "dependencies"),
    ("project", "optional-dependencies"),
    ("project", "requires-python"),
    ("dependency-groups",),
    ("tool", "poetry", "dependencies"),
    ("tool", "poetry", "group"),
    ("tool", "uv"),
    ("tool", "setuptools", "dynamic"),  # dependencies read from files it names
)
# pip's and uv's settings from the environment: each may change what an install resolves
# (the index, a constraint or override, prereleases, the lowest resolution, a cut-off date,
# binaries only) but those that change how it is fetched or shown (timeouts, caches, colours,
# certificates, proxies, progress, verbosity); one unknown here counts.
INSTALLER_VARIABLES = re.compile(r"^(PIP|UV)_")
FETCHING_VARIABLES = re.compile(
    r"^(PIP_(DISABLE_PIP_VERSION_CHECK|DEFAULT_TIMEOUT|TIMEOUT|RETRIES|PROGRESS_BAR|NO_COLOR"
    r"|QUIET|VERBOSE|CACHE_DIR|NO_CACHE_DIR|LOG|LOG_FILE|NO_INPUT|CERT|CLIENT_CERT|PROXY"
    r"|TRUSTED_HOST|KEYRING_PROVIDER|ROOT_USER_ACTION|REQUIRE_VIRTUALENV|EXISTS_ACTION)"
    r"|UV_(CACHE_DIR|NO_CACHE|NO_PROGRESS|HTTP_TIMEOUT|REQUEST_TIMEOUT|CONCURRENT_\w+"
    r"|LINK_MODE|NATIVE_TLS|KEYRING_PROVIDER|QUIET|VERBOSE|LOG_\w+|INSECURE_HOST|CACHE_\w+"
    r"|HTTP_RETRIES|COMPILE_BYTECODE|NO_\w*COLOR\w*))$"
)
# What a user's environment may carry into a Python process that a clean runner would not.
DROPPED = (
    "PYTHONPATH",
    "PYTHONHOME",
    "PYTHONUSERBASE",
    "PYTHONSTARTUP",
    "PYTHONPYCACHEPREFIX",
    "PYTHONSAFEPATH",
    "VIRTUAL_ENV",
    "CONDA_PREFIX",
    "PYTEST_ADDOPTS",
    "PYTEST_PLUGINS",
    "PYTEST_DISABLE_PLUGIN_AUTOLOAD",  # the clean run needs genstamp's plugin, loaded as installed
    "GENSTAMP_RUN",
    "GIT_DIR",
    "GIT_WORK_TREE",
    "GIT_INDEX_FILE",
    "GIT_COMMON_DIR",
    "GIT_OBJECT_DIRECTORY",
    "GIT_ALTERNATE_OBJECT_DIRECTORIES",
    "GIT_PREFIX",
)


class Installer(NamedTuple):
    tool: str  # "uv" or "pip"
    uv: str | None  # the uv executable, for "uv"


class Env(NamedTuple):
    path: Path
    key: str
    reused: bool  # an environment of the same key was there: dependencies not installed

    @property
    def python(self) -> Path:
        return self.path / "bin" / "python"


def find_installer(choice: str = "auto") -> Installer:
    """uv when it is installed (the ``genstamp[clean]`` extra, or on PATH), else pip;
    ``choice`` ("uv", "pip") insists on one."""
    if choice == "pip":
        return Installer("pip", None)
    uv = _uv()
    if uv is not None:
        return Installer("uv", uv)
    if choice == "uv":
        raise GenstampError(
            "uv is not installed", "pip install 'genstamp[clean]', or use --installer pip"
        )
    return Installer("pip", None)


def _uv() -> str | None:
    try:
        from uv import find_uv_bin  # type: ignore[import-not-found,unused-ignore]

        return str(find_uv_bin())
    except (ImportError, FileNotFoundError):
        return shutil.which("uv")


def clean_environ(env_path: Path | None, base: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment for the clean room's processes: ``base`` (default ``os.environ``) less
    what would carry the user's environment in, with the clean environment first on PATH."""
    source = os.environ if base is None else base
    env = {k: v for k, v in source.items() if k not in DROPPED}
    env["PYTHONNOUSERSITE"] = "1"
    if env_path is not None:
        env["VIRTUAL_ENV"] = str(env_path)
        kept = _without_environments(env.get("PATH", os.defpath), source)
        env["PATH"] = os.pathsep.join([str(env_path / "bin"), kept])
    return env


def _without_environments(path: str, environ: Mapping[str, str]) -> str:
    """``path`` (a PATH) less the scripts folders of virtual environments (the active one's,
    genstamp's own, any folder beside a ``pyvenv.cfg``): a command a test runs that the clean
    environment lacks (a console script an earlier install left there) must not be answered
    by the warm one. A conda environment's stays: it is often where git and the compilers
    come from."""
    active = {environ.get("VIRTUAL_ENV", "")}
    if sys.prefix != sys.base_prefix:
        active.add(sys.prefix)
    scripts = {os.path.join(p, "bin") for p in active if p}

    def an_environment(entry: str) -> bool:
        parent = os.path.dirname(os.path.normpath(entry))
        return entry.rstrip(os.sep) in scripts or os.path.exists(os.path.join(parent, "pyvenv.cfg"))

    return os.pathsep.join(e for e in path.split(os.pathsep) if e and not an_environment(e))


# -- the key ------------------------------------------------------------------------------------


def key(
    checkout: Path,
    install_args: Sequence[str],
    installer: Installer,
    environ: Mapping[str, str] | None = None,
) -> str:
    """The digest of everything that decides what the environment's dependencies are."""
    environ = os.environ if environ is None else environ
    h = hashlib.sha256()

    def add(label: str, data: bytes) -> None:
        h.update(f"{label}\0{len(data)}\0".encode("utf-8", "surrogateescape") + data)

    add("format", str(VERSION).encode())
    add("python", f"{sys.version}\0{_base_python()}".encode())
    add("installer", installer.tool.encode())
    add("args", json.dumps(list(install_args)).encode())
    add("pyproject", _pyproject_inputs(checkout / "pyproject.toml"))
    files = _dependency_files(checkout, install_args)
    for rel in files:
        try:
            add(f"file:{rel}", (checkout / rel).read_bytes())
        except OSError:
            add(f"missing:{rel}", b"")
    for folder, listing in _find_links(checkout, install_args, files, environ):
        add(f"find-links:{folder}", listing)
    index = {
        k: v
        for k, v in environ.items()
        if INSTALLER_VARIABLES.match(k) and not FETCHING_VARIABLES.match(k)
    }
    add("index", json.dumps(index, sort_keys=True).encode())
    for path in installer_inputs(environ):
        try:
            add(f"config:{path}", Path(path).read_bytes())
        except OSError:
            add(f"missing:{path}", b"")
    add("genstamp", build.digest().encode())
    add("genstamp-metadata", selfwheel.identity().encode())  # its requirements, entry points
    return h.hexdigest()


# pip's configuration files (global, user) and uv's, where they are looked for
PIP_CONFIGS = ("/etc/pip.conf", "~/.pip/pip.conf", "~/.config/pip/pip.conf")
UV_CONFIGS = ("/etc/uv/uv.toml", "~/.config/uv/uv.toml")


def installer_inputs(environ: Mapping[str, str]) -> list[str]:
    """The files whose contents decide what an install resolves besides the project's own:
    pip's and uv's configuration files, and the constraint and override files they or the
    environment name (``PIP_CONSTRAINT``, ``UV_CONSTRAINT``, ``UV_OVERRIDE``, pip's
    ``constraint``): editing one changes the environment, its name unchanged."""
    import configparser

    home = environ.get("HOME", os.path.expanduser("~"))
    xdg = environ.get("XDG_CONFIG_HOME") or os.path.join(home, ".config")
    dirs = (environ.get("XDG_CONFIG_DIRS") or "/etc/xdg").split(os.pathsep)
    configs = [os.path.join(d, "pip", "pip.conf") for d in dirs if d]
    configs += [c.replace("~/.config", xdg).replace("~", home) for c in PIP_CONFIGS]
    configs += [environ[v] for v in ("PIP_CONFIG_FILE",) if environ.get(v)]
    uv = [c.replace("~/.config", xdg).replace("~", home) for c in UV_CONFIGS]
    uv += [environ[v] for v in ("UV_CONFIG_FILE",) if environ.get(v)]
    found = [c for c in [*configs, *uv] if os.path.isfile(c)]
    variables = [*("PIP_CONSTRAINT", "PIP_BUILD_CONSTRAINT"), "UV_BUILD_CONSTRAINT"]
    variables += ["UV_CONSTRAINT", "UV_OVERRIDE"]
    named = [n for v in variables for n in environ.get(v, "").split()]
    for conf in (c for c in found if c.endswith(".conf") or c in configs):
        parser = configparser.RawConfigParser()
        with contextlib.suppress(configparser.Error, OSError, UnicodeDecodeError):
            parser.read(conf, encoding="utf-8")
            for section in ("global", "install"):
                if parser.has_option(section, "constraint"):
                    named += parser.get(section, "constraint").split()
    local = [n.removeprefix("file://") for n in named if "://" not in n or n.startswith("file://")]
    return sorted(dict.fromkeys([*found, *(os.path.abspath(n) for n in local)]))


def _pyproject_inputs(path: Path) -> bytes:
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return b""
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError, RecursionError):
        return path.read_bytes() if path.is_file() else b""  # what it is decides; whole
    picked: dict[str, Any] = {}
    for table in PYPROJECT_TABLES:
        value: Any = data
        for part in table:
            value = value.get(part) if isinstance(value, dict) else None
        if value is not None:
            picked[".".join(table)] = value
    return json.dumps(picked, sort_keys=True, default=str).encode()


def _dependency_files(checkout: Path, install_args: Sequence[str]) -> list[str]:
    found = {name for name in DEPENDENCY_FILES if (checkout / name).is_file()}
    for pattern in DEPENDENCY_GLOBS:
        found |= {p.relative_to(checkout).as_posix() for p in checkout.glob(pattern)}
    found |= set(_named_files(list(install_args), ""))
    found |= set(_dynamic_files(checkout / "pyproject.toml"))
    # and the files those name in turn (a requirements file's own -r/-c lines)
    todo = sorted(found)
    while todo and len(found) < _MOST_FILES:
        rel = todo.pop()
        try:
            lines = (checkout / rel).read_text(encoding="utf-8", errors="replace").split()
        except OSError:
            continue
        for more in _named_files(lines, posixpath.dirname(rel)):
            if more not in found:
                found.add(more)
                todo.append(more)
    return sorted(found)


_MOST_FILES = 200  # requirement files followed from one another


def _find_links(
    checkout: Path, install_args: Sequence[str], files: Sequence[str], environ: Mapping[str, str]
) -> list[tuple[str, bytes]]:
    """The local folders the install finds packages in (``--find-links``/``-f`` of the install
    arguments, and of the requirement files, taken from the file's own folder as pip takes
    them; ``PIP_FIND_LINKS``, ``UV_FIND_LINKS``), each with what it holds: a wheel rebuilt
    under the same version (a vendored one) is another environment. The checkout's files by
    their blob ids (the clean checkout writes them anew; git knows them), another folder's by
    their size and time."""
    given = [(v, checkout) for v in _find_links_in(list(install_args))]
    for rel in files:
        with contextlib.suppress(OSError):
            words = (checkout / rel).read_text(encoding="utf-8", errors="replace").split()
            given += [(v, (checkout / rel).parent) for v in _find_links_in(words)]
    given += [(v, checkout) for v in environ.get("PIP_FIND_LINKS", "").split()]
    given += [(v, checkout) for v in environ.get("UV_FIND_LINKS", "").split(",") if v.strip()]
    out = []
    for value, base in dict.fromkeys(given):
        where = value.strip()
        if where.startswith("file://"):
            where = where[len("file://") :]
        elif "://" in where:
            continue  # an index page: fetched, not a folder here
        folder = base / os.path.expanduser(where)
        if folder.is_dir():
            out.append((value, _held_in(checkout, folder)))
    return out


def _find_links_in(words: list[str]) -> list[str]:
    """The values of ``--find-links V``, ``--find-links=V``, ``-f V`` and ``-fV`` in ``words``."""
    out = []
    for n, word in enumerate(words):
        if word in ("-f", "--find-links") and n + 1 < len(words):
            out.append(words[n + 1])
        elif word.startswith("--find-links="):
            out.append(word.partition("=")[2])
        elif word.startswith("-f") and len(word) > 2 and not word.startswith("--"):
            out.append(word[2:])
    return out


def _held_in(checkout: Path, folder: Path) -> bytes:
    """What ``folder`` holds, as the environment's key takes it: each file by its blob id
    where git's index has it (inside the checkout: one ``git ls-files``), else by its size
    and time."""
    tracked: dict[str, str] = {}
    with contextlib.suppress(OSError, ValueError, subprocess.SubprocessError):
        if folder.resolve().is_relative_to(checkout.resolve()):
            done = subprocess.run(
                ["git", "ls-files", "-s", "-z", "--", "."],
                cwd=folder,
                capture_output=True,
                timeout=60,
            )
            for line in os.fsdecode(done.stdout).split("\0") if done.returncode == 0 else ():
                meta, _, name = line.partition("\t")
                if name and "/" not in name:
                    tracked[name] = meta.split()[1]
    listing = []
    for entry in sorted(folder.iterdir()):
        with contextlib.suppress(OSError):
            if entry.name in tracked:
                listing.append(f"{entry.name}\0{tracked[entry.name]}")
            elif entry.is_file():
                info = entry.stat()
                listing.append(f"{entry.name}\0{info.st_size}:{info.st_mtime_ns}")
    return "\n".join(listing).encode("utf-8", "surrogateescape")


def _named_files(words: list[str], folder: str) -> list[str]:
    """The files ``-r FILE``, ``-c FILE``, ``--requirement=FILE`` (...) name among ``words``
    (install arguments, or a requirements file's words), relative to ``folder``."""
    out = []
    for i, word in enumerate(words):
        if word in ("-r", "-c", "--requirement", "--constraint") and i + 1 < len(words):
            out.append(words[i + 1])
        elif word.startswith(("--requirement=", "--constraint=")):
            out.append(word.split("=", 1)[1])
        elif word[:2] in ("-r", "-c") and len(word) > 2 and not word.startswith("--"):
            out.append(word[2:])
    return [posixpath.normpath(posixpath.join(folder, name)) for name in out]


def _dynamic_files(path: Path) -> list[str]:
    """The files ``[tool.setuptools.dynamic]`` reads dependencies from (``{file = [...]}``)."""
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError, RecursionError):
        return []
    dynamic: Any = data
    for part in ("tool", "setuptools", "dynamic"):
        dynamic = dynamic.get(part) if isinstance(dynamic, dict) else None
    if not isinstance(dynamic, dict):
        return []
    extras = dynamic.get("optional-dependencies")
    tables = [dynamic.get("dependencies"), *(extras.values() if isinstance(extras, dict) else ())]
    out: list[str] = []
    for table in tables:
        named = table.get("file") if isinstance(table, dict) else None
        names = [named] if isinstance(named, str) else named if isinstance(named, list) else []
        out += [posixpath.normpath(n) for n in names if isinstance(n, str)]
    return out


def _base_python() -> str:
    """The interpreter environments are made from: the base one under a virtual environment,
    so that nothing installed in the user's environment comes along."""
    return str(getattr(sys, "_base_executable", sys.executable) or sys.executable)


# -- the cache ----------------------------------------------------------------------------------


def _meta_path(env: Path) -> Path:
    return env / "genstamp-env.json"


def _ready(env: Path, digest: str, project: str = "") -> bool:
    path = _meta_path(env)
    try:
        raw = path.read_bytes()
    except OSError:
        return False
    try:
        data = versioned.parse(raw, path, FORMAT, VERSION, "clean environment", "")
    except GenstampError:
        return False  # another version's environment: made again, never trusted
    if data.get("key") != digest or not (env / "bin" / "python").exists():
        return False
    # what an earlier run installed into it (a test's `pip install`) makes it another one
    try:
        kept = json.loads(_contents_path(env).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return isinstance(kept, str) and kept == contents_digest(env, project)


def _contents_path(env: Path) -> Path:
    return env / "genstamp-env-contents.json"


def contents(env: Path, project: str) -> list[str]:
    """What is installed in ``env``: every file of its site-packages with its size and
    modification time (a loose module a test wrote there, sourceless bytecode too, an installed
    file it edited, a distribution it installed or removed), but the bytecode of
    ``__pycache__`` (a cache of sources counted here) and ``project``'s own files (its
    distribution's metadata and the files its ``RECORD`` lists: reinstalled on every run, its
    version may move)."""
    from genstamp.roots import normalised

    own = normalised(project) if project else ""
    out = []
    for site in env.glob("lib/python*/site-packages"):
        mine: set[str] = set()
        for entry in site.iterdir():
            name = entry.name
            if not name.endswith((".dist-info", ".egg-info", ".egg-link", ".pth")):
                continue
            dist = normalised(name.removeprefix("__editable__.").partition("-")[0])
            if own and dist == own:  # both PEP 503-normalised (`_` and `.` are `-`)
                mine.add(name)
                with contextlib.suppress(OSError):
                    for line in (entry / "RECORD").read_text(encoding="utf-8").splitlines():
                        mine.add(posixpath.normpath(line.rpartition(",")[0].rpartition(",")[0]))
        for folder, dirs, files in os.walk(site):
            dirs[:] = [d for d in dirs if d != "__pycache__"]
            base = Path(folder).relative_to(site).as_posix()
            for name in dirs:  # (an empty folder too: a package's, a distribution's metadata)
                rel = name if base == "." else f"{base}/{name}"
                if rel.split("/")[0] not in mine:
                    out.append(f"{rel}/")
            for name in files:
                rel = name if base == "." else f"{base}/{name}"
                if rel.split("/")[0] in mine or rel in mine:
                    continue  # (bytecode outside __pycache__ is counted: Python imports it)
                with contextlib.suppress(OSError):
                    st = os.lstat(os.path.join(folder, name))
                    out.append(f"{rel}\t{st.st_size}\t{st.st_mtime_ns}")
    return sorted(out)


def contents_digest(env: Path, project: str) -> str:
    return hashlib.sha256(
        "\n".join(contents(env, project)).encode("utf-8", "surrogateescape")
    ).hexdigest()


def remember_contents(env: Path, project: str) -> None:
    """Keep what ``env`` holds once the install step is done: a reuse must find it so."""
    write_atomic(_contents_path(env), json.dumps(contents_digest(env, project)).encode())


class Local(NamedTuple):
    """A distribution installed into an environment from a local folder or file (the project,
    ``./libs/helper`` that a requirements file names, a folder beside the checkout): where
    (relative to the checkout, or an absolute path outside it), whether editable, and the
    requirements its metadata states (what decides its dependencies, whatever its build read
    them from: a file ``setup.py`` opens)."""

    path: str
    editable: bool
    requires: tuple[str, ...]


def local_distributions(env: Path, work: Path) -> dict[str, Local]:
    """The distributions of ``env`` installed from a local folder or file (PEP 610's
    ``direct_url.json``), by PEP 503 name: a folder of ``work`` by its path there, another by
    its absolute path (`helper @ file:///…/helper`: a fresh clone's install takes it as it is
    then). genstamp's own is the environment's key's."""
    from urllib.parse import unquote, urlparse

    from genstamp.paths import inside
    from genstamp.roots import normalised

    top = os.path.realpath(work)
    out: dict[str, Local] = {}
    for site in env.glob("lib/python*/site-packages"):
        for info in sorted(site.glob("*.dist-info")):
            try:
                data = json.loads((info / "direct_url.json").read_text(encoding="utf-8"))
                meta = (info / "METADATA").read_text(encoding="utf-8", errors="replace")
            except (OSError, ValueError):
                continue
            url = data.get("url") if isinstance(data, dict) else None
            if not isinstance(url, str) or not url.startswith("file://"):
                continue
            if "vcs_info" in data:  # (`git+file://…@v1`: the revision named, the key's text)
                continue
            folder = os.path.realpath(unquote(urlparse(url).path))
            name = normalised(info.name.partition("-")[0])
            if name == "genstamp":
                continue
            headers = meta.split("\n\n", 1)[0].splitlines()
            requires = sorted(
                h.partition(":")[2].strip() for h in headers if h.startswith("Requires-Dist:")
            )
            dir_info = data.get("dir_info")
            editable = isinstance(dir_info, dict) and dir_info.get("editable") is True
            mine = inside(folder, top)
            rel = os.path.relpath(folder, top).replace(os.sep, "/") if mine else folder
            out[name] = Local(rel, editable, tuple(requires))
    return out


def _local_path(env: Path) -> Path:
    return env / "genstamp-env-local.json"


def remember_local(env: Path, work: Path) -> None:
    """Keep what was installed from the checkout as the environment was made."""
    found = {name: list(local) for name, local in local_distributions(env, work).items()}
    write_atomic(_local_path(env), json.dumps(found, sort_keys=True).encode())


def remembered_local(env: Path) -> dict[str, Local] | None:
    """What ``remember_local`` kept; None when nothing readable was kept."""
    try:
        kept = json.loads(_local_path(env).read_text(encoding="utf-8"))
        return {
            str(name): Local(str(path), bool(editable), tuple(str(r) for r in requires))
            for name, (path, editable, requires) in kept.items()
        }
    except (OSError, ValueError, TypeError, AttributeError):
        return None


@contextlib.contextmanager
def locked(cache: Path, digest: str) -> Iterator[None]:
    """One clean run at a time per environment: two runs must not install into it at once."""
    cache.mkdir(parents=True, exist_ok=True)
    with open(cache / f"{digest[:16]}.lock", "w") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def prepare(
    cache: Path,
    digest: str,
    installer: Installer,
    dependencies: Callable[[], Sequence[str]],
    environ: Mapping[str, str],
    log: IO[str],
    project: str = "",
    build: Sequence[str] = (),
) -> Env:
    """The environment for ``digest``: the cached one, unless something was installed into
    it or taken from it since its install step (``remember_contents``; ``project``'s own
    distribution aside), or a new one with ``dependencies()`` installed (asked only then),
    and what building the project needs (``build``) kept apart from them (``build_environ``:
    a fresh install builds in an environment of its own, and the tests never see it). The
    caller holds ``locked``. A failure leaves no environment behind."""
    env = cache / digest[:16]
    if _ready(env, digest, project):
        os.utime(_meta_path(env))  # recently used: pruned last
        return Env(env, digest, True)
    shutil.rmtree(env, ignore_errors=True)
    try:
        create(env, installer, environ, log)
        install(env, installer, list(dependencies()), environ, log, cwd=None)
        if build:
            target = ["--target", str(env / BUILD_FOLDER)]
            install(env, installer, [*target, *build], environ, log, cwd=None)
    except BaseException:
        shutil.rmtree(env, ignore_errors=True)
        raise
    meta = {
        "format": FORMAT,
        "version": VERSION,
        "key": digest,
        "installer": installer.tool,
        "python": sys.version.split()[0],
        "genstamp": __version__,
        "created": int(time.time()),
    }
    write_atomic(_meta_path(env), json.dumps(meta, sort_keys=True).encode())
    _prune(cache, keep=env)
    return Env(env, digest, False)


BUILD_FOLDER = "genstamp-build"  # in an environment: what building the project needs


BUILD_SITE = "genstamp-build-site"  # in an environment: the isolating ``sitecustomize``
# As pip's isolated build environment does it (its ``sitecustomize``): a build backend's process
# drops what the environment's site-packages put on the path, and reads the build requirements'
# folder as a site (its .pth files: setuptools' distutils shim). The import hooks their .pth
# files installed go too (an editable install's finder: a fresh clone's build has none). The
# installer's own process (`python -m pip`) keeps its path: it runs from the environment.
ISOLATING = """\
import os, site, sys
if sys.argv[:1] != ["-m"]:
    before, known = sys.path[:], set()
    sites = [os.path.normcase(f) for f in site.getsitepackages()]
    for folder in sites:
        site.addsitedir(folder, known_paths=known)
    theirs = {os.path.normcase(p) for p in sys.path[len(before):]}
    sys.path[:] = [p for p in before if os.path.normcase(p) not in theirs]

    def installed(hook):
        module = sys.modules.get(getattr(hook, "__module__", None) or type(hook).__module__)
        where = os.path.normcase(os.path.dirname(getattr(module, "__file__", None) or ""))
        return any(where == s or where.startswith(s + os.sep) for s in sites)

    sys.meta_path[:] = [h for h in sys.meta_path if not installed(h)]
    sys.path_hooks[:] = [h for h in sys.path_hooks if not installed(h)]
    sys.path_importer_cache.clear()
    site.addsitedir(BUILD)
"""


def build_environ(env: Path) -> dict[str, str]:
    """The clean environment for the steps that rebuild the project in a reused environment
    (``--no-deps --no-build-isolation``: no index), isolated as pip isolates a fresh clone's
    build: the build backend imports the build requirements and the standard library, never
    what the environment has installed (a package whose version ``setuptools`` reads with
    ``attr:`` and that imports a dependency fails there, as in a fresh clone's install). The
    tests' environment (``clean_environ``) has no such path: a module the project imports
    without declaring it (``pathspec``, which hatchling brings) fails there as after a fresh
    install."""
    build = env / BUILD_FOLDER
    site = env / BUILD_SITE
    text = ISOLATING.replace("BUILD", repr(str(build)))
    path = site / "sitecustomize.py"
    with contextlib.suppress(OSError):
        if path.read_text(encoding="utf-8") == text:
            text = ""
    if text:
        site.mkdir(exist_ok=True)
        write_atomic(path, text.encode())
    environ = clean_environ(env)
    environ["PYTHONPATH"] = os.pathsep.join([str(site), str(build)])
    return environ


def discard(env: Path) -> None:
    """Remove an environment that is not the tree's after all: ``prepare`` makes it anew."""
    shutil.rmtree(env, ignore_errors=True)


def _prune(cache: Path, keep: Path) -> None:
    envs = [p for p in cache.iterdir() if p.is_dir() and p != keep]
    envs.sort(key=lambda p: _meta_path(p).stat().st_mtime if _meta_path(p).exists() else 0)
    for old in envs[: max(0, len(envs) - (KEEP - 1))]:
        shutil.rmtree(old, ignore_errors=True)
        (cache / f"{old.name}.lock").unlink(missing_ok=True)


class StepFailed(Exception):
    """A command of a step failed; its output is in the step's log."""

    def __init__(self, command: Sequence[str], code: int, meaning: str = "") -> None:
        said = f" ({meaning})" if meaning else ""
        super().__init__(f"`{' '.join(command)}` exited with {code}{said}")
        self.command = tuple(command)
        self.code = code


def call(command: Sequence[str], environ: Mapping[str, str], log: IO[str], cwd: Path | None) -> int:
    """Run ``command`` with its output in ``log``; its exit status."""
    log.write(f"$ {' '.join(command)}\n")
    log.flush()
    try:
        proc = _spawn(
            list(command),
            env=dict(environ),
            cwd=cwd,
            stdout=log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
        )
    except OSError as exc:
        log.write(f"cannot start: {exc}\n")
        return 127
    try:
        code = proc.wait()
    except BaseException:  # Ctrl-C: the command ends with this process, not after it
        proc.kill()
        proc.wait()
        raise
    log.flush()
    return code


def _spawn(argv: list[str], **options: Any) -> subprocess.Popen[bytes]:
    """``subprocess.Popen``, with a Ctrl-C that comes while the child is being started taken
    once it has started: the child is then ended, not left running unowned (Popen raises
    before the caller holds it)."""
    import signal

    interrupted: list[int] = []
    before = signal.getsignal(signal.SIGINT)
    if before is signal.SIG_IGN or before is None:
        # ignored (the child inherits that, as it should), or a handler Python cannot restore
        return subprocess.Popen(argv, **options)
    try:
        signal.signal(signal.SIGINT, lambda sig, frame: interrupted.append(sig))
    except ValueError:  # not the main thread: no handler can be set, nor is one needed
        return subprocess.Popen(argv, **options)
    try:
        proc = subprocess.Popen(argv, **options)
    finally:
        signal.signal(signal.SIGINT, before)
    if interrupted:
        proc.kill()
        proc.wait()
        raise KeyboardInterrupt
    return proc


def must(
    command: Sequence[str], environ: Mapping[str, str], log: IO[str], cwd: Path | None
) -> None:
    code = call(command, environ, log, cwd)
    if code != 0:
        raise StepFailed(command, code)


def create(env: Path, installer: Installer, environ: Mapping[str, str], log: IO[str]) -> None:
    """A new virtual environment, made by ``python -m venv`` whichever installer fills it: it
    holds what a fresh clone's ``python -m venv`` holds (setuptools, before Python 3.12, which
    a project's tests may import undeclared), so both installers give the same verdict. With
    uv, an interpreter that cannot (a system Python without its ``venv`` package) gets uv's
    own, seeded with what ``venv`` would put there."""
    venv = [_base_python(), "-m", "venv", str(env)]
    if installer.uv is None:
        must(venv, environ, log, None)
        return
    if call(venv, environ, log, None) == 0:
        return
    shutil.rmtree(env, ignore_errors=True)
    log.write("`python -m venv` failed here: uv's own environment, seeded as venv seeds one\n")
    uv = [installer.uv, "venv", "--quiet", "--seed", "--python", _base_python(), str(env)]
    must(uv, environ, log, None)


def install(
    env: Path,
    installer: Installer,
    args: Sequence[str],
    environ: Mapping[str, str],
    log: IO[str],
    cwd: Path | None,
) -> None:
    if not args:
        return
    python = str(env / "bin" / "python")
    if installer.uv is not None:
        # The project alone (--no-deps) needs no index: pip is not asked for its settings.
        # Dependencies are compiled once, as pip does: uv does not by default, and a run that
        # may not write bytecode (PYTHONDONTWRITEBYTECODE) would compile pytest every time.
        extra = [] if "--no-deps" in args else [*pip_index_flags(), "--compile-bytecode"]
        command = [installer.uv, "pip", "install", "--python", python, *extra, *args]
    else:
        command = [python, "-m", "pip", "install", "--quiet", *args]
    must(command, environ, log, cwd)


def uninstall(
    env: Path,
    installer: Installer,
    names: Sequence[str],
    environ: Mapping[str, str],
    log: IO[str],
    cwd: Path | None,
) -> None:
    """Remove the distributions ``names`` from ``env``."""
    if not names:
        return
    python = str(env / "bin" / "python")
    if installer.uv is not None:
        command = [installer.uv, "pip", "uninstall", "--python", python, *names]
    else:
        command = [python, "-m", "pip", "uninstall", "--yes", "--quiet", *names]
    must(command, environ, log, cwd)


def pip_index_flags() -> list[str]:
    """pip's index settings (pip.conf and PIP_* variables) as uv flags, so that uv finds what
    pip would and nothing beyond it; uv's own settings (uv.toml, UV_*) apply as well."""
    try:
        proc = subprocess.run(
            [sys.executable, "-m", "pip", "config", "list"],
            capture_output=True,
            text=True,
            stdin=subprocess.DEVNULL,
        )
    except OSError:
        return []
    if proc.returncode != 0:
        return []
    return index_flags(proc.stdout)


def index_flags(pip_config: str) -> list[str]:
    """uv's flags for ``pip config list`` output (``scope.name='value'`` lines)."""
    values: dict[str, list[str]] = {}
    for line in pip_config.splitlines():
        name, sep, value = line.partition("=")
        if not sep:
            continue
        option = name.rsplit(".", 1)[-1]
        values.setdefault(option, []).extend(value.strip().strip("'\"").split())
    flags: list[str] = []
    for option in ("index-url", "extra-index-url", "find-links", "constraint"):
        for value in dict.fromkeys(values.get(option, [])):
            if option == "index-url":
                flags += ["--index-url", value]
            else:
                flags += [f"--{option}", value]
    if values.get("no-index"):
        flags.append("--no-index")
    return flags
