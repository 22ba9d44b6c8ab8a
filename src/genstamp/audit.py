"""The loaded-code audit: where each of the checkout's modules was really loaded from."""

from __future__ import annotations

import contextlib
import importlib.machinery
import importlib.util
import marshal
import os
import posixpath
import re
import stat
import sys
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from types import CodeType, ModuleType
from typing import TYPE_CHECKING, Any

from genstamp import bytecode, versioned
from genstamp.paths import environment, generated, gitfile_target, inside, installed, site_relative
from genstamp.typedtuple import NamedTuple

if TYPE_CHECKING:
    from genstamp.loads import Load

FOREIGN = "foreign-origin"  # a checkout module loaded from outside the checkout
SOURCELESS = "sourceless"  # loaded from a .pyc with no source
STALE = "stale-bytecode"  # loaded from bytecode older than the generation, or not its source's
STALE_EXT = "stale-extension"  # an extension module older than a native source of the tree
MODE = "mode"  # a file run as a program, executable here, that the tested tree records as not
NOT_EXECUTABLE = "run as a program, executable here, not in the tested tree (core.fileMode=false)"

# 2: ``loaded`` holds every distinct blob a path was loaded with (a reload, another process).
# 3: ``notes``: what the audit could not see (child processes not followed, and why);
# ``namespaces`` (optional: a reader without it judges as before).
AUDIT_VERSION = 3
READABLE = (2, 3)

# (matched whatever their case: `.C` and `.CPP` are C++ to gcc and setuptools)
EXTENSION_SOURCES = (".c", ".cc", ".cpp", ".cxx", ".c++", ".cp", ".cu", ".pyx", ".pxd", ".rs")
# ... and what setuptools' compilers take as well, which are native sources only where a build
# file names them: SWIG's interfaces (``Extension("_fast", ["fast.i"])``) and their includes,
# Objective-C, assembly (a MATLAB ``.m``, a data file named ``.s``, are nobody's source)
NAMED_SOURCES = (".i", ".swg", ".m", ".mm", ".s", ".sx", ".asm")
# What a build of an extension can read besides the sources above: headers and includes (C++'s
# inline and template implementation files too).
NATIVE_SOURCES = (
    *EXTENSION_SOURCES,
    *(".h", ".hh", ".hpp", ".hxx", ".cuh", ".inl", ".ipp", ".tcc", ".tpp", ".pxi"),
    # f2py's Fortran and signature files, and the other languages extensions are built from
    *(".f", ".for", ".f77", ".f90", ".f95", ".f03", ".f08", ".pyf", ".zig", ".go", ".nim"),
)
# A template a build makes one of the above from (Tempita's ``_fast.pyx.in``, numpy's
# ``loops.c.src``, a configured ``config.h.in``): a source of the build too.
TEMPLATE_SUFFIXES = (".in", ".src")


class Flag(NamedTuple):
    kind: str
    module: str
    path: str
    detail: str


# the names of the files Python imports as modules
MODULE_SUFFIXES = tuple(importlib.machinery.all_suffixes())


def searched(audited: Audit) -> list[str]:
    """The folders of the work tree where the tests' imports looked for modules: those of the
    modules they loaded (not of a file read as code: pytest's configuration), and of the
    namespace packages they imported (no ``__init__.py``)."""
    modules = [p for p in audited.loaded if p.endswith(MODULE_SUFFIXES)]
    return sorted({*(posixpath.dirname(p) for p in modules), *audited.namespaces})


class Audit(NamedTuple):
    packages: tuple[str, ...]
    # work-tree-relative posix path -> the git blob ids of the source bytes loaded, in order
    loaded: dict[str, tuple[str, ...]]
    flags: tuple[Flag, ...]
    notes: tuple[str, ...] = ()  # what was not observed, for the user (not a flag)
    # work-tree-relative folders the tests imported namespace packages from
    namespaces: tuple[str, ...] = ()
    # work-tree-relative files (not code) the tests opened to read; ("*",) when too many
    read: tuple[str, ...] = ()
    # work-tree-relative files of code the run itself made (written after it began) and loaded
    made: tuple[str, ...] = ()
    # work-tree-relative folders the tests used (wrote into, made a folder in, listed) that
    # held no file when they used them (git keeps no empty folder: a clean clone has none) and
    # that no run made
    folders: tuple[str, ...] = ()
    # work-tree-relative path -> {git blob id of bytes loaded: the blob ``git add`` stored for
    # them at the run's end}, where that is the tested tree's blob (autocrlf, a clean filter):
    # the gate needs no longer find those bytes in the file (an edit since)
    converted: dict[str, dict[str, str]] = {}  # noqa: RUF012 - never mutated

    def to_json(self) -> str:
        data: dict[str, Any] = {
            "version": AUDIT_VERSION,
            "packages": list(self.packages),
            "loaded": {path: list(blobs) for path, blobs in sorted(self.loaded.items())},
            "flags": [f._asdict() for f in self.flags],
            "notes": list(self.notes),
        }
        if self.namespaces:  # written only when there are some: the same bytes as before
            data["namespaces"] = list(self.namespaces)
        if self.read:
            data["read"] = list(self.read)
        if self.made:
            data["made"] = list(self.made)
        if self.folders:
            data["folders"] = list(self.folders)
        if self.converted:
            data["converted"] = self.converted
        return json_dumps(data)


def json_dumps(data: Any) -> str:
    import json

    return json.dumps(data, sort_keys=True, separators=(",", ":"))


def from_json(text: str) -> Audit:
    import json

    data = json.loads(text)
    if not isinstance(data, dict) or not versioned.matches(data.get("version"), *READABLE):
        raise ValueError(f"audit format {data.get('version') if isinstance(data, dict) else '?'}")
    return Audit(
        tuple(data["packages"]),
        {str(k): tuple(str(b) for b in v) for k, v in data["loaded"].items()},
        tuple(Flag(**f) for f in data["flags"]),
        tuple(str(n) for n in data.get("notes", ())),
        tuple(str(n) for n in data.get("namespaces", ())),
        tuple(str(n) for n in data.get("read", ())),
        tuple(str(n) for n in data.get("made", ())),
        tuple(str(n) for n in data.get("folders", ())),
        {
            str(path): {str(raw): str(blob) for raw, blob in forms.items()}
            for path, forms in data.get("converted", {}).items()
        },
    )


READ_LIMIT = 2000  # files read listed at most; more are ("*",): every file counts as read


def _reads(found: Iterable[str]) -> tuple[str, ...]:
    paths = sorted(set(found))
    return ("*",) if "*" in paths or len(paths) > READ_LIMIT else tuple(paths)


def merge(audits: Iterable[Audit]) -> Audit:
    packages: set[str] = set()
    loaded: dict[str, dict[str, None]] = {}
    flags: dict[Flag, None] = {}
    notes: dict[str, None] = {}
    namespaces: dict[str, None] = {}
    read: dict[str, None] = {}
    made: dict[str, None] = {}
    folders: dict[str, None] = {}
    converted: dict[str, dict[str, str]] = {}
    for a in audits:
        packages.update(a.packages)
        for path, forms in a.converted.items():
            converted.setdefault(path, {}).update(forms)
        read.update(dict.fromkeys(a.read))
        made.update(dict.fromkeys(a.made))
        folders.update(dict.fromkeys(a.folders))
        for path, blobs in a.loaded.items():
            loaded.setdefault(path, {}).update(dict.fromkeys(blobs))
        flags.update(dict.fromkeys(a.flags))
        notes.update(dict.fromkeys(a.notes))
        namespaces.update(dict.fromkeys(a.namespaces))
    return Audit(
        tuple(sorted(packages)),
        {p: tuple(b) for p, b in loaded.items()},
        tuple(flags),
        tuple(notes),
        tuple(sorted(namespaces)),
        _reads(read),
        tuple(sorted(made)),
        tuple(sorted(folders)),
        converted,
    )


def checkout_packages(root: Path) -> tuple[str, ...]:
    """Top-level packages and modules of the checkout (``roots.find``)."""
    from genstamp import roots

    return tuple(sorted(roots.find(root)))


def audit_modules(
    root: Path,
    packages: Iterable[str],
    generation_ns: int | None,
    modules: Mapping[str, ModuleType] | None = None,
    trusted_cache: str | None = None,
    bases: Mapping[str, str] | None = None,
    made_by_the_build: Sequence[str] = (),
    version_lines: Sequence[str] = (),
) -> Audit:
    """``bases``: where the checkout holds each import root (``roots``). ``trusted_cache``: a
    pycache prefix keyed by the tested tree, whose bytecode can only have been compiled from
    that tree's sources. ``made_by_the_build``, ``version_lines``: as ``judge``'s.

    Audits every module of ``packages``, and every module loaded from inside ``root``.
    """
    wanted = set(packages)
    bases = bases or {}
    own = _Own(root)
    root_s = str(root)
    loaded: dict[str, tuple[str, ...]] = {}
    flags: list[Flag] = []
    copies: set[str] = set()  # the installed copies' folders compared (``stale_copy``)
    for name, module in list((modules if modules is not None else sys.modules).items()):
        if module is None:
            continue
        top = name.partition(".")[0]
        spec = getattr(module, "__spec__", None)
        origin = getattr(spec, "origin", None) or getattr(module, "__file__", None)
        if not isinstance(origin, str) or origin in ("built-in", "frozen"):
            if top in wanted and spec is not None and spec.submodule_search_locations:
                for location in spec.submodule_search_locations:
                    real = os.path.realpath(location)
                    if not inside(real, root_s) and not installed(real):
                        flags.append(
                            Flag(FOREIGN, name, location, "namespace outside the checkout")
                        )
            continue
        real = os.path.realpath(origin)
        if not inside(real, root_s) or installed(real):
            if top in wanted:
                # Only an installer's copy may stand for the checkout's file: a copy in another
                # clone brings that clone's data files and neighbours along with it.
                held = [bases[top]] if top in bases else []
                copy = _identical_copy(name, real, root, held) if installed(real) else None
                cached = getattr(spec, "cached", None)
                if copy is None and installed(real) and _namespace_root(top, bases):
                    if own.dependency(real):
                        continue  # a dependency's portion of a namespace package
                if copy is None:
                    flags.append(Flag(FOREIGN, name, real, "loaded from outside the checkout"))
                elif isinstance(cached, str) and _stale_cache(real, cached, root_s, None):
                    flags.append(Flag(STALE, name, real, f"bytecode not compiled from {copy[0]}"))
                else:
                    loaded[copy[0]] = (copy[1],)  # an installed copy, byte for byte the checkout's
                    folder = _installed_folder(real)
                    if folder is not None and folder not in copies:
                        copies.add(folder)
                        flags += stale_copy(folder, root, bases, made_by_the_build, version_lines)
            continue
        rel = os.path.relpath(real, root_s).replace(os.sep, "/")
        if real.endswith((".pyc", ".pyo")):
            flags.append(Flag(SOURCELESS, name, rel, "loaded from bytecode with no source"))
            continue
        if not real.endswith(".py"):
            continue  # an extension module: no source to bind
        try:
            loaded[rel] = (blob_id(real),)
        except OSError:
            continue
        cached = getattr(spec, "cached", None)
        if isinstance(cached, str) and not (trusted_cache and inside(cached, trusted_cache)):
            stale = _stale_cache(real, cached, root_s, generation_ns)
            if stale:
                flags.append(Flag(STALE, name, rel, stale))
    return Audit(tuple(sorted(wanted)), loaded, tuple(flags))


class _Own:
    """The files this project's own installed, not editable, distribution holds
    (``roots.own_installed_files``), asked once and only when needed."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.files: set[str] | None = None
        self.asked = False

    def dependency(self, path: str) -> bool:
        """Whether installed ``path`` is surely not this project's (a dependency's portion
        of a namespace package): False when the project's own files cannot be told (it names
        itself nowhere genstamp reads)."""
        if not self.asked:
            from genstamp.roots import own_installed_files

            files = own_installed_files(self.root)
            self.files = None if files is None else {os.path.normcase(p) for p in files.values()}
            self.asked = True
        return self.files is not None and os.path.normcase(path) not in self.files


# what an ``__init__.py`` of a namespace package of the older kind says (zope's, repoze's):
# ``pkgutil.extend_path(__path__, __name__)`` or ``pkg_resources.declare_namespace(__name__)``
_EXTENDS = (b"extend_path(", b"declare_namespace(")


def _namespace_root(top: str, roots: Mapping[str, str]) -> bool:
    """Whether the checkout holds import root ``top`` as a namespace package, which installed
    distributions may add portions to: a folder with no ``__init__.py``, or one whose
    ``__init__.py`` extends its ``__path__`` as ``pkgutil`` or ``pkg_resources`` do."""
    if not roots.get(top):
        return False
    folder = os.path.join(roots[top], top)
    init = os.path.join(folder, "__init__.py")
    if not os.path.isdir(folder):
        # one whose portions the project's metadata maps to folders of other names
        return _mapped_namespace(roots[top], top)
    try:
        with open(init, "rb") as fh:
            text = fh.read(1 << 16)
    except FileNotFoundError:
        return True
    except OSError:
        return False
    return any(marker in text for marker in _EXTENDS)


def _sibling_portion(
    ld: Load, root: Path, roots: Mapping[str, str], bases: Sequence[str] | None
) -> bool:
    """Whether ``ld``, loaded from outside the work tree, is a portion of the checkout's
    namespace package that another project provides, installed editable from its own folder
    (``pip install -e ../acme-c`` beside the tree's ``acme/a``: PEP 610 ``direct_url.json``):
    that project's code, as its installed release would be. Never a module the tree holds
    too (``bases``: the module's; None for a namespace folder, which holds no code itself),
    nor a project of this name (another clone of this one) or one holding this work tree,
    nor bytes this repository ever held (an old copy of this project under another name)."""
    top = ld.module.partition(".")[0]
    if not top or not _namespace_root(top, roots):
        return False
    project = _editable_project_of(ld.path)
    if project is None:
        return False
    name, folder = project
    if inside(folder, str(root)) or inside(str(root), folder):
        return False
    from genstamp.roots import project_name

    if name == project_name(root):
        return False
    if bases is None:
        return True
    # bytes this repository ever held are a copy of its own past (an export, before a
    # rename or where the project names itself nowhere genstamp reads), not another's
    # (at the module's own path below any folder; an empty file is every package's)
    parts = ld.module.split(".")
    tail = "/".join(
        [*parts, "__init__.py"]
        if os.path.basename(ld.path) == "__init__.py"
        else [*parts[:-1], parts[-1] + ".py"]
    )
    held = ld.blob not in ("", _EMPTY_BLOB) and _in_history(root, ld.blob, tail)
    return counterpart(ld.module, ld.path, root, bases) is None and not held


_EDITABLE: list[tuple[str, str]] = []  # (name, folder) of the editable installs, once a process


def _editable_project_of(path: str) -> tuple[str, str] | None:
    """(normalised name, folder) of the distribution installed editable (PEP 610) from the
    folder holding ``path``, among those of this process's import path; None if none is."""
    if not _EDITABLE:
        _EDITABLE.append(("", ""))  # asked once
        _EDITABLE.extend(_editable_projects(sys.path))
    real = os.path.realpath(path)
    return next(((n, f) for n, f in _EDITABLE[1:] if inside(real, f)), None)


def _editable_projects(entries: Iterable[str]) -> Iterator[tuple[str, str]]:
    import json
    from urllib.parse import unquote, urlsplit

    from genstamp.roots import normalised

    for entry in dict.fromkeys(entries):
        if not entry or not installed(os.path.join(os.path.abspath(entry), "")):
            continue
        try:
            infos = [n for n in os.listdir(entry) if n.endswith(".dist-info")]
        except OSError:
            continue
        for info in infos:
            try:
                with open(os.path.join(entry, info, "direct_url.json"), encoding="utf-8") as fh:
                    data = json.load(fh)
                dir_info = data.get("dir_info")
                split = urlsplit(data.get("url"))
            except (OSError, ValueError, AttributeError, TypeError):
                continue
            if not (isinstance(dir_info, dict) and dir_info.get("editable") is True):
                continue
            if split.scheme == "file" and split.netloc in ("", "localhost"):
                folder = os.path.realpath(unquote(split.path))
                yield normalised(info.partition("-")[0]), folder


def _mapped_namespace(project: str, top: str) -> bool:
    """Whether the project in ``project`` maps subpackages of ``top`` to folders (setuptools'
    ``package-dir = {"ns.a" = "lib/a"}``) and not ``top`` itself: a namespace package."""
    try:
        names = _layout(project)[0]
    except OSError:
        return False
    return top not in names and any(n.startswith(top + ".") for n in names)


def _identical_copy(
    name: str, real: str, root: Path, bases: Iterable[str] = ()
) -> tuple[str, str] | None:
    """(path in the checkout, blob id) when ``real`` is a byte-identical installed copy of the
    checkout's own source for module ``name`` (``pip install .`` rather than ``-e``)."""
    if not real.endswith(".py"):
        return None
    try:
        theirs = blob_id(real)
    except OSError:
        return None
    rel = counterpart(name, real, root, bases)
    if rel is not None:
        try:
            if blob_id(str(root / rel)) == theirs:
                return rel, theirs
        except OSError:
            pass
    return None


def _installed_folder(path: str) -> str | None:
    """The folder of the installed regular package the installed file ``path`` lies in, its
    outermost (``…/site-packages/calc`` for ``…/site-packages/calc/sub/m.py``; below a
    namespace package, ``…/site-packages/acme/calc``: the namespace's folder is shared with
    other distributions); None for a module of its own (``calc.py``), a namespace's own file
    or a file that is not installed code."""
    rel = site_relative(path)
    if rel is None:
        return None
    site = path[: len(path) - len(rel)]
    parts = rel.split("/")[:-1]
    for n in range(1, len(parts) + 1):
        folder = site + "/".join(parts[:n])
        try:
            with open(os.path.join(folder, "__init__.py"), "rb") as fh:
                text = fh.read(1 << 16)
        except OSError:
            continue  # a namespace package's folder: the next one down
        if not any(marker in text for marker in _EXTENDS):
            return folder
    return None


def stale_copy(
    folder: str,
    root: Path,
    bases: Mapping[str, str],
    made_by_the_build: Sequence[str] = (),
    version_lines: Sequence[str] = (),
) -> tuple[Flag, ...]:
    """The files of an installed (not editable) copy of one of the checkout's packages, in
    ``folder`` (``_installed_folder``), that are not the tested tree's, where a module of it
    stood for the tree's (byte for byte the tree's): one the tree holds at its place with
    other bytes (a data file read as the package was imported, before any recording began: a
    ``pytest11`` plugin), and one the tree no longer holds that a commit held there with those
    bytes (a file the tree deleted, which an older install still ships). The copy is then an
    older version's, whose files the run may have read. Its modules (judged as each loads),
    bytecode, extension modules (judged by their sources) and the files the build writes are
    not compared. And one the tree added after the copy was installed, which the copy lacks
    (``_copy_lacks``): a module found by listing the package (``pkgutil.iter_modules``) or
    imported before any recording began, or a data file read where it may be missing, is
    never a failed import the run could see."""
    rel = site_relative(folder)
    if rel is None:
        return ()
    prefix = rel.split("/")
    top = prefix[0]
    flags: list[Flag] = []
    # the work tree's files git ignores there are no file of the tree (built assets): asked
    # of git once a file differs
    ignored: tuple[str, ...] | None = None
    dropped: list[tuple[str, str, str]] = []  # (installed path, its blob, its tree place)
    # (its modules are judged as they load, one by one: what they read is the rest)
    skipped = (".py", ".pyc", ".pyo", *importlib.machinery.EXTENSION_SUFFIXES)
    for dirpath, dirnames, filenames in os.walk(folder):
        dirnames[:] = sorted(d for d in dirnames if d != "__pycache__")
        for name in sorted(filenames):
            path = os.path.join(dirpath, name)
            if name.endswith(skipped) or os.path.islink(path):
                continue
            tail = [*prefix, *os.path.relpath(path, folder).split(os.sep)]
            try:
                theirs = blob_id(path)
            except OSError:
                continue
            found = _copy_differs(path, theirs, tail, root, bases, made_by_the_build, version_lines)
            if found is None:
                continue
            if ignored is None:
                package = os.path.join(bases[top], *prefix) if top in bases else None
                ignored = _ignored_below(root, package) if package else ()
            if _under(found[0], ignored):
                continue
            place, why = found
            if why is None:
                dropped.append((path, theirs, place))
            else:
                flags.append(Flag(FOREIGN, top, path, why))
    # whether a commit held each file the tree does not: git asked once for them all
    known = _blobs_known(root, {blob for _, blob, _ in dropped if blob != _EMPTY_BLOB})
    here = os.path.realpath(root)
    for path, blob, place in dropped:
        shown = "/".join([*prefix, *os.path.relpath(path, folder).split(os.sep)])
        if blob in known and _in_history(root, blob, place):
            why = f"{INSTALLED_COPY} holds {shown}, which the tested tree dropped ({place})"
            flags.append(Flag(FOREIGN, top, path, why + "; reinstall it"))
        elif (source := _from_another_tree(path, blob, place, here)) is not None:
            # installed from another folder (a clone, an export) whose own tree holds the file
            # there: that tree's, not a build's of this one
            why = f"{INSTALLED_COPY} holds {shown}, which the tested tree does not ({place})"
            flags.append(Flag(FOREIGN, top, path, f"{why}, from {source}; reinstall from here"))
    flags += _copy_lacks(folder, prefix, root, bases)
    return tuple(flags)


def _from_another_tree(path: str, blob: str, place: str, here: str) -> str | None:
    """The folder other than the work tree ``here`` that the installed file ``path`` (its blob
    ``blob``) came from (the installer's PEP 610 record), where that folder holds it at
    ``place`` with those bytes (not a wheel, nor a file a build made: hatch's
    ``force-include`` of ``LICENSE``); None otherwise."""
    source = installed_from(path)
    if source is None or inside(source, here):
        return None
    theirs = os.path.join(source, *place.split("/"))
    try:
        return source if os.path.isfile(theirs) and blob_id(theirs) == blob else None
    except OSError:
        return None


def _copy_differs(
    path: str,
    theirs: str,
    tail: Sequence[str],
    root: Path,
    bases: Mapping[str, str],
    made_by_the_build: Sequence[str],
    version_lines: Sequence[str],
) -> tuple[str, str | None] | None:
    """The tree's place of the installed file ``path`` (its blob ``theirs``; ``tail``: its
    parts from the package on) and why it is not the tested tree's (``stale_copy``); None when
    it is or the tree cannot tell. Why is None where the tree does not hold it, in a folder
    the tree still has (not a package the project's metadata maps to folders of other names):
    a file the tree may have dropped."""
    top = tail[0]
    held = [bases[top]] if top in bases else []
    other = _held(root, held, tail) or _held_by_source(root, path, tail)
    shown = "/".join(tail)
    if other is not None:
        if generated(other, made_by_the_build):
            return None
        try:
            if blob_id(str(root / other)) == theirs:
                return None
        except OSError:
            return None
        if generated(other, version_lines) and _same_but_the_version(root / other, path, theirs):
            return None
        return (
            other,
            f"{INSTALLED_COPY} its {shown} is not the tested tree's {other} (reinstall it)",
        )
    folder = Path(held[0]) if held else None
    if folder is None or (folder / "__init__.py").is_file():
        return None
    at = folder.joinpath(*tail)
    place = os.path.relpath(at, root).replace(os.sep, "/")
    if not at.parent.is_dir() or place.startswith("../"):
        return None
    return place, None


def _ignored_below(root: Path, folder: str) -> tuple[str, ...]:
    """The files and folders (``name/``) git ignores below ``folder`` of the work tree at
    ``root``, relative to ``root``; none where git cannot tell."""
    import subprocess

    try:
        done = subprocess.run(
            ["git", "ls-files", "-z", "--others", "--ignored", "--exclude-standard", "--directory"],
            cwd=folder,
            capture_output=True,
            timeout=60,
        )
    except (OSError, subprocess.SubprocessError):
        return ()
    if done.returncode != 0:
        return ()
    rel = os.path.relpath(folder, root).replace(os.sep, "/")
    names = [n for n in os.fsdecode(done.stdout).split("\0") if n]
    return tuple(
        posixpath.normpath(posixpath.join(rel, n)) + ("/" if n.endswith("/") else "") for n in names
    )


def _under(path: str, ignored: Sequence[str]) -> bool:
    """Whether the tree path ``path`` is one of ``ignored`` or below a folder of them."""
    return any(path == i or (i.endswith("/") and path.startswith(i)) for i in ignored)


def _blobs_known(root: Path, blobs: Iterable[str]) -> set[str]:
    """Those of ``blobs`` the repository at ``root`` holds (one ``git cat-file
    --batch-check``); all of them where git cannot tell (then asked one by one)."""
    import subprocess

    wanted = sorted(blobs)
    if not wanted:
        return set()
    try:
        done = subprocess.run(
            ["git", "cat-file", "--batch-check"],
            cwd=root,
            input="".join(f"{b}\n" for b in wanted).encode(),
            capture_output=True,
            timeout=60,
        )
    except (OSError, subprocess.SubprocessError):
        return set(wanted)
    if done.returncode != 0:
        return set(wanted)
    return {line.split()[0] for line in done.stdout.decode().splitlines() if " blob " in line}


def _copy_lacks(
    folder: str, prefix: Sequence[str], root: Path, bases: Mapping[str, str]
) -> list[Flag]:
    """The files of the tree's package (``prefix``: its parts, ``calc``, ``acme/calc``) that its
    installed copy in ``folder`` lacks (a module, a data file, a folder of them), where they came
    into the checkout after the copy was installed (``_came_after``: a file the tree held then
    is one the build leaves out, hatch's ``exclude``, and a file not committed cannot be
    dated): an install older than the file, whose package may have gone on without it (a
    fallback, a default, a plugin not listed) where no import failed. Only files of the tree
    count (not ignored)."""
    import subprocess

    top = prefix[0]
    if top not in bases:
        return []
    package = os.path.join(bases[top], *prefix)
    try:
        listed = subprocess.run(
            ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard", "--", "."],
            cwd=package,
            capture_output=True,
            timeout=60,
        )
        installed_ns = os.stat(os.path.join(folder, "__init__.py")).st_mtime_ns
    except (OSError, subprocess.SubprocessError):
        return []
    if listed.returncode != 0:
        return []
    compiled = (".pyc", ".pyo", *importlib.machinery.EXTENSION_SUFFIXES)
    lacked: dict[str, str] = {}  # the tree's path -> the name in the package
    for name in sorted(os.fsdecode(listed.stdout).split("\0")):
        if not name or name.endswith(compiled) or "__pycache__" in name.split("/"):
            continue
        if os.path.lexists(os.path.join(folder, *name.split("/"))):
            continue  # the copy has it (a folder it lacks, a subpackage, is lacked whole)
        held = os.path.relpath(os.path.join(package, name), root).replace(os.sep, "/")
        lacked[held] = name
    came = _came_after(root, list(lacked), installed_ns) if lacked else set()
    flags = []
    for held, name in lacked.items():
        if held in came:
            shown = "/".join([*prefix, name])
            why = f"{INSTALLED_COPY} lacks {shown}, which the tested tree has ({held}; reinstall)"
            flags.append(Flag(FOREIGN, top, os.path.join(folder, *name.split("/")), why))
    return flags


def _came_after(root: Path, held: list[str], installed_ns: int) -> set[str]:
    """Of the tree's files ``held`` (committed), those that came into the checkout after
    ``installed_ns``: not in the commit HEAD named then, as HEAD's reflog tells (a merge, a
    fast-forward, a pull or a switch that brought them since, whenever their commits were
    written; an amend or a rebase of the commit that added them is no coming); where HEAD
    moved within the install's second (``git switch old && pip install .``), not in every
    commit it named then. Where the reflog does not reach back that far, those a commit added
    since then, by its author's time (which an amend or a rebase keeps). A file no commit
    holds yet cannot be dated."""
    before = _whole_seconds(installed_ns)
    now = _in_commit(root, "HEAD", held)
    was: set[str] | None = None
    for then in _heads_at(root, before // 1_000_000_000):
        found = _in_commit(root, then, held)
        if found is None:
            was = None
            break
        was = found if was is None else was & found
    if now is None or was is None:
        return {rel for rel in held if _added_ns(root, rel) >= before}
    return now - was


def _heads_at(root: Path, seconds: int) -> list[str]:
    """The commits HEAD may have named during the second ``seconds``: the newest entry of
    HEAD's reflog written before it, and those written in it (a reflog counts whole seconds:
    which came first, the install or they, it cannot tell); none when the reflog has no entry
    so old (expired, turned off, a clone made since) or cannot be read."""
    from genstamp.changed import git_output  # (the gate's rules import this module: no I/O)

    out = git_output(root, "log", "-g", "--format=%H %gd", "--date=unix", "HEAD", "--")
    during: list[str] = []
    for line in (out or b"").decode("ascii", "replace").splitlines():
        commit, _, selector = line.partition(" ")  # HEAD@{1767225600}, the newest first
        when = selector.rpartition("@{")[2].rstrip("}")
        if not when.isdigit():
            continue
        if int(when) < seconds:
            return [*during, commit]
        if int(when) == seconds:
            during.append(commit)
    return []


def _in_commit(root: Path, commit: str, paths: list[str]) -> set[str] | None:
    """Those of ``paths`` that ``commit``'s tree holds (a file, a link or a submodule); None
    when that commit cannot be read (gone since: pruned, or never fetched)."""
    from genstamp.changed import git_output

    asked = [p for p in paths if "\n" not in p]  # (git reads the names one per line)
    lines = [f"{commit}^{{commit}}", *(f"{commit}:{p}" for p in asked)]
    told = "".join(f"{line}\n" for line in lines).encode("utf-8", "surrogateescape")
    out = git_output(root, "cat-file", "--batch-check=%(objecttype)", stdin=told)
    answers = (out or b"").decode("ascii", "replace").splitlines()
    if len(answers) != len(lines) or answers[0] != "commit":
        return None
    return {p for p, kind in zip(asked, answers[1:], strict=True) if kind in ("blob", "commit")}


def _whole_seconds(ns: int) -> int:
    """``ns`` down to its second: a commit's time has no finer part, so one made in the same
    second as a copy cannot be told to come before it."""
    return ns - ns % 1_000_000_000


def _added_ns(root: Path, rel: str) -> int:
    """When the tree's file ``rel`` came: the author time of the last commit that added it
    (an amend or a rebase keeps it, where the commit's own time moves); 0 when it cannot be
    told, or the file is not committed (its time is its last edit's, not its coming)."""
    from genstamp.changed import git_output

    out = git_output(root, "log", "-1", "--diff-filter=A", "--format=%at", "--", rel)
    told = (out or b"").strip()
    return int(told) * 1_000_000_000 if told.isdigit() else 0


def _installed_data(ld: Load, root: Path, roots: Mapping[str, str]) -> str | None:
    """Why the data file ``ld`` the tests read from an installed copy of one of the checkout's
    import roots is not the tree's (None when it is, or when the tree has no such file to
    tell: a file the build makes)."""
    rel = site_relative(ld.path)
    if rel is None or not ld.blob:
        return None
    top = rel.partition("/")[0]
    other = _held(root, [roots[top]] if top in roots else [], rel.split("/"))
    if other is None:
        return None
    try:
        if blob_id(str(root / other)) == ld.blob:
            return None
    except OSError:
        return None
    return f"{INSTALLED_COPY} its {rel} is not the tested tree's {other} (reinstall it)"


def counterpart(name: str, real: str, root: Path, bases: Iterable[str] = ()) -> str | None:
    """The work-tree-relative path of the checkout's file for module ``name`` (loaded from
    ``real``, elsewhere), if the checkout has one. A base may be a package's own folder that
    the project maps to its name (``roots.mapped``: ``package-dir = {"pkgx" = "source"}``)."""
    parts = name.split(".")
    if os.path.basename(real) == "__init__.py":
        tail = [*parts, "__init__.py"]
    else:
        tail = [*parts[:-1], parts[-1] + ".py"]
    found = _held(root, bases, tail)
    if found is None and installed(real):
        found = _held_by_source(root, real, tail)
    if found is None:  # a subpackage the work tree's own metadata maps (`"ns.a" = "lib/a"`)
        found = _held_in(root, root, tail, packages=False)
    return found


def _held_by_source(root: Path, real: str, tail: Sequence[str]) -> str | None:
    """The checkout's file at ``tail`` in the project of the work tree that the installer
    recorded the installed file ``real`` as built from (PEP 610: ``pip install ./libs/a``,
    ``pip install .``): below a folder its metadata maps the package, or a subpackage, to
    (``package-dir``, hatch's ``force-include``), or one holding its packages."""
    project = _source_project(real, root)
    return None if project is None else _held_in(root, project, tail)


def _held_in(
    root: Path, project: Path, tail: Sequence[str], *, packages: bool = True
) -> str | None:
    """The checkout's file at ``tail`` in ``project``: below a folder its metadata maps the
    package, or a subpackage, to, or (``packages``) one holding its packages."""
    folders, bases = _layout(str(project))
    names = [t.removesuffix(".py") for t in tail if t != "__init__.py"]
    found = [
        Path(folders[prefix]).joinpath(*tail[n:])
        for n in range(len(names), 0, -1)
        if (prefix := ".".join(names[:n])) in folders
    ]
    found += [base.joinpath(*tail) for base in bases] if packages else []
    return _first_file(root, found)


_LAYOUTS: dict[str, tuple[dict[str, str], list[Path]]] = {}


def _layout(project: str) -> tuple[dict[str, str], list[Path]]:
    """What ``project``'s metadata maps (``roots.mapped``, subpackages too) and the folders
    holding its packages, read once per process (asked for each module an audit looks up)."""
    known = _LAYOUTS.get(project)
    if known is None:
        from genstamp import roots as roots_

        known = _LAYOUTS[project] = (
            roots_.mapped(Path(project), dotted=True),
            roots_.package_dirs(Path(project)),
        )
    return known


_VERSION_LINE = re.compile(rb"^[ \t]*__version(?:_tuple)?__[ \t]*(?::[^=\n]*)?=.*$", re.MULTILINE)


def _same_but_the_version(tree_file: Path, installed_file: str, blob: str) -> bool:
    """Whether the installed file (still the bytes that ran, ``blob``) is the tree's file but
    for its ``__version__ = ...`` (and ``__version_tuple__``) lines, as versioningit's
    ``onbuild`` and poetry-dynamic-versioning rewrite them."""
    try:
        theirs = Path(installed_file).read_bytes()
        mine = tree_file.read_bytes()
    except OSError:
        return False
    from genstamp.loads import blob_of

    return blob_of(theirs) == blob and _VERSION_LINE.sub(b"", theirs) == _VERSION_LINE.sub(
        b"", mine
    )


def _first_file(root: Path, candidates: Iterable[Path]) -> str | None:
    """The work-tree-relative path of the first of ``candidates`` that is a file in it."""
    for candidate in candidates:
        if candidate.is_file():
            try:
                return candidate.relative_to(root).as_posix()
            except ValueError:
                continue
    return None


def _source_project(real: str, root: Path) -> Path | None:
    """The folder of the work tree holding the project (its pyproject.toml, setup.py or
    setup.cfg) that the installed file ``real`` was installed from, or built into an archive
    in (``dist/*.whl``); None when its installer did not record one there."""
    source = installed_from(real)
    root_s = str(root)
    if source is None or not inside(source, root_s):
        return None
    folder = source if os.path.isdir(source) else os.path.dirname(source)
    while inside(folder, root_s):
        if any(os.path.isfile(os.path.join(folder, m)) for m in _METADATA):
            return Path(folder)
        if folder == root_s:
            break
        folder = os.path.dirname(folder)
    return None


_METADATA = ("pyproject.toml", "setup.py", "setup.cfg")


def _held(root: Path, bases: Iterable[str], tail: Sequence[str]) -> str | None:
    """The work-tree-relative path of the checkout's file at ``tail`` (``pkg/cfg.json`` as its
    parts) below one of ``bases``, the root or ``src/``; None when the checkout has none."""
    given = [Path(b) for b in bases]

    def candidates() -> Iterator[Path]:
        for base in (*given, root, root / "src"):
            candidate = base.joinpath(*tail)
            own = base in given and (base / "__init__.py").is_file()
            if own and not candidate.is_file():
                candidate = base.joinpath(*tail[1:])  # the package's own folder, renamed
            yield candidate

    return _first_file(root, candidates())


def judge(
    loads: Iterable[Load],
    root: Path,
    roots: Mapping[str, str],
    generation_ns: int | None,
    notes: Iterable[str] = (),
    began_ns: int | None = None,
    made_by_the_build: Sequence[str] = (),
    folders_made: Iterable[str] = (),
    version_lines: Sequence[str] = (),
) -> Audit:
    """The audit of the loads every process of a run recorded, as they happened. A work tree
    made after ``began_ns`` (a clone the tests made, to run a release check in, say) is the
    tests' own, not another clone. ``made_by_the_build``: the version files the project's
    build writes (an installed copy of one is the build's: versioneer rewrites
    ``_version.py`` in the package it installs). ``folders_made``: the folders earlier runs
    made (``madefolders``)."""
    from genstamp import loads as loads_  # the gate's rules import this module: no I/O there

    root_s = str(root)
    natives: list[str] | None = None  # read once, and only when an extension was loaded
    below: set[str] | None = None  # the roots of projects below the top, when asked
    builders: dict[str, list[str]] = {}
    loaded: dict[str, dict[str, None]] = {}
    flags: dict[Flag, None] = {}
    namespaces: dict[str, None] = {}
    elsewhere: dict[str, list[Load]] = {}  # another git work tree -> the code loaded from it
    gone: list[Load] = []  # from a plain folder outside, of a name the tree gives nowhere now
    by_path: list[Load] = []  # run by path from a plain folder outside (a script): whose bytes?
    programs: dict[str, None] = {}  # files of the work tree started as programs, executable
    in_tree: list[tuple[Load, str]] = []  # modules of the roots loaded from the work tree
    unnamed: list[Load] = []  # a loader's code under a name not the module's (loads.UNNAMED)
    read: dict[str, None] = {}
    made: dict[str, None] = {}
    heads: dict[str, str | None] = {}  # commits checked out, by work tree (asked of git once)
    missing: list[Load] = []  # submodules an installed copy of a root's package did not hold
    copies: set[str] = set()  # the installed copies' folders compared (``stale_copy``)
    folders = sorted({*roots.values(), root_s, os.path.join(root_s, "src")}, key=len)[::-1]
    own = _Own(root)
    loads = list(loads)
    # Files a process of the run wrote, and those it touched (Path.touch) and never wrote: a
    # new time is no proof that the run made the bytes that ran.
    wrote = {ld.path for ld in loads if ld.via == loads_.WROTE}
    touched = {ld.path for ld in loads if ld.via == loads_.TOUCHED} - wrote
    opened = frozenset(ld.path for ld in loads if ld.via == loads_.READ)
    # folders the tests used as they found them, and those this run or an earlier one made
    used = {ld.path for ld in loads if ld.via == loads_.FOLDER}
    made_dirs = made_folders(loads) | set(folders_made)
    env_files = [(ld.path, ld.detail) for ld in loads if ld.via == loads_.COPIED]
    for ld in loads:
        if ld.via in (loads_.FOLDER, loads_.MKDIR, loads_.NEW, loads_.COPIED):
            continue
        if ld.via == loads_.ELSEWHERE:  # (a clone kept in an environment of the tree too)
            elsewhere.setdefault(ld.detail, []).append(ld)
            continue
        if ld.via == loads_.MISSING:
            missing.append(ld)
            continue
        if ld.via == loads_.GONE:
            if not (made_by_the_tests(ld.path, began_ns) or _made_during(ld, began_ns)):
                gone.append(ld)
            continue
        if ld.via == loads_.RAN:
            by_path.append(ld)
            continue
        if ld.via == loads_.EXECUTED:
            if inside(ld.path, root_s):
                programs[os.path.relpath(ld.path, root_s).replace(os.sep, "/")] = None
            continue
        name = ld.module or module_name(ld.path, folders)
        if inside(ld.path, root_s) and not installed(ld.path):
            rel = os.path.relpath(ld.path, root_s).replace(os.sep, "/")
            if ld.via == loads_.NAMESPACE:
                if rel != ".":
                    namespaces[rel] = None
                continue
            if ld.via == loads_.READ:
                read[rel] = None
                continue
            if ld.via == loads_.SOURCELESS:
                top = ld.module.partition(".")[0]
                if (
                    top in roots
                    and _made_during(ld, began_ns)
                    and _compiled_from_the_tree(ld, root, [roots[top]])
                ):
                    continue  # the tree's own code the run compiled (compileall into build/)
                flags[Flag(SOURCELESS, name, rel, _sourceless(ld.path, root_s))] = None
            elif ld.via == loads_.EXTENSION:
                if in_environment(ld.path, root_s):
                    continue  # a Python environment kept in the work tree: the installer's
                read[rel] = None  # its bytes ran: a change hidden from git counts (hidden-change)
                if natives is None:
                    natives, builders = native_sources(root), cffi_builders(root)
                built_ns = int(ld.detail or 0)
                if _made_during(ld, began_ns):  # put in place by the run: a copy of which build?
                    built_ns = _built_at(ld.path, built_ns, root_s)
                stale = stale_extension(
                    ld.path,
                    built_ns,
                    _sources_of(ld.path, natives, builders),
                    root_s,
                    rebuild_command(root, ld.path, builders, module=bool(ld.module)),
                    module=bool(ld.module),
                )
                if stale:
                    flags[Flag(STALE_EXT, name, rel, stale)] = None
            elif ld.via in (loads_.SOURCE, loads_.BYTECODE) and ld.blob:
                loaded.setdefault(rel, {})[ld.blob] = None
                new = ld.detail == loads_.MADE
                # written with its old time put back (copy2, cp -p, an archive unpacked)
                kept_time = ld.detail == loads_.CHANGED and ld.path in wrote
                if ld.via == loads_.SOURCE and (new or kept_time):
                    # an empty file only touched is what a touch makes in a clean clone too
                    if kept_time or ld.path not in touched or ld.blob == _EMPTY_BLOB:
                        made[rel] = None
                    top = ld.module.partition(".")[0]
                    bases = [roots[top]] if top in roots else []
                    if (
                        bases
                        and counterpart(ld.module, ld.path, root, bases) not in (None, rel)
                        and not _not_a_past_version(ld, root, bases, opened)
                    ):
                        # a module of an import root the run made in the tree (a copy, a zip
                        # in build/) from a past version: a stale artifact's bytes ran
                        why = "made by the run from a past version of the checkout's module"
                        flags[Flag(FOREIGN, ld.module, ld.path, why)] = None
                elif ld.module.partition(".")[0] in roots:
                    in_tree.append((ld, rel))  # the module's own file, or a copy of it?
                if ld.via == loads_.BYTECODE and ld.detail:
                    flags[Flag(STALE, name, rel, ld.detail)] = None
            continue
        if ld.via == loads_.READ:
            stale = _installed_data(ld, root, roots)
            if stale is not None:
                flags[Flag(FOREIGN, ld.module, ld.path, stale)] = None
            continue
        if ld.via == loads_.SHADOW:  # in place of the module a folder of the work tree gives
            rel = os.path.relpath(ld.detail, root_s).replace(os.sep, "/")
            try:
                same = blob_id(ld.detail) == ld.blob
            except OSError:
                same = False
            head = None if same else _a_clone_of_head(ld, root, began_ns, heads)
            if same:
                loaded.setdefault(rel, {})[ld.blob] = None  # byte for byte the tree's file
            elif head is not None:
                flags[Flag(FOREIGN, ld.module, ld.path, head)] = None
            elif not (made_by_the_tests(ld.path, began_ns) or _made_during(ld, began_ns)):
                why = f"loaded from outside the checkout in place of {rel}"
                flags[Flag(FOREIGN, ld.module, ld.path, why)] = None
            continue
        if not ld.module:
            continue
        if ld.path.startswith("<"):  # module code compiled under a name of no file
            if ld.detail == loads_.UNNAMED:
                unnamed.append(ld)  # judged once every load is known
            else:
                _pseudo(ld, root, roots, loaded, flags)
            continue
        if ld.via == loads_.NAMESPACE:
            # an installed portion is a dependency's (google.*), and so is one of a sibling
            # project installed editable (`pip install -e ../acme-c`)
            if not installed(ld.path) and not _sibling_portion(ld, root, roots, None):
                flags[Flag(FOREIGN, ld.module, ld.path, "namespace outside the checkout")] = None
            continue
        source = installed_from(ld.path) if ld.via == loads_.EXTENSION else None
        # built from the tree as it was imported (pyximport, into ``~/.pyxbld``), or an
        # extension the run itself made (a test's build or copy): judged by its sources' age
        made_of = (
            _pyximport_origin(ld.path, ld.module, root_s) if ld.via == loads_.EXTENSION else None
        )
        if made_of:
            why = f"{PYXIMPORT_ELSEWHERE} {made_of}, not this one's (rebuild it here)"
            flags[Flag(FOREIGN, ld.module, ld.path, why)] = None
            continue
        pyximported = made_of is not None or _PYXIMPORT in ld.path.split(os.sep)
        built_on_import = ld.via == loads_.EXTENSION and (pyximported or _made_during(ld, began_ns))
        if built_on_import or (source is not None and inside(source, root_s)):
            # Built and installed from this very checkout (``pip install .``, the clean room,
            # ``pip install ./libs/cx`` of a project below the top), or built from its ``.pyx``
            # as it was imported (pyximport, into ``~/.pyxbld``): current unless a native
            # source of the checkout changed since.
            if natives is None:
                natives, builders = native_sources(root), cffi_builders(root)
            built_ns = int(ld.detail or 0)
            if built_on_import and not pyximported:
                built_ns = _built_at(ld.path, built_ns, root_s)
            rebuild = REINSTALL
            if built_on_import:
                rebuild = PYXIMPORT_REBUILD if pyximported else MADE_REBUILD
            stale = stale_extension(
                ld.path,
                built_ns,
                _sources_of(ld.path, natives, builders),
                root_s,
                rebuild,
                committed=False,
            )
            if stale:
                flags[Flag(STALE_EXT, ld.module, ld.path, stale)] = None
            continue
        top = ld.module.partition(".")[0]
        bases = [roots[top]] if top in roots else []
        # Only an installed copy (``pip install .``) may stand for the checkout's file: a
        # byte-identical module in another clone still brings that clone's data files and
        # neighbours along with it.
        copied = ld.blob and installed(ld.path)
        other = counterpart(ld.module, ld.path, root, bases) if copied else None
        same = False
        if other is not None:
            try:
                same = blob_id(str(root / other)) == ld.blob
            except OSError:
                same = False
        if copied and other is None and _namespace_root(top, roots):
            # A portion of a namespace package that an installed dependency provides (the
            # tree's portion is ns/a, theirs ns/b) is theirs, unless this project installed it.
            if own.dependency(ld.path):
                continue
        if copied and not same:
            if below is None:
                from genstamp.roots import below_the_top

                below = below_the_top(root, roots)
            if top in below and installed_from(ld.path) is None:
                # a project below the top (a fork kept in the tree, a library the monorepo
                # also develops) whose release the tests use, installed from an index: a
                # dependency, as a clean clone has it
                continue
        if copied and other is not None and not same and generated(other, made_by_the_build):
            continue  # the build writes the installed file: not the tree's bytes, nor foreign
        counted = ld.blob
        if copied and other is not None and not same and generated(other, version_lines):
            # the build rewrote its version line (versioningit's onbuild, poetry-dynamic-
            # versioning's substitution): the rest is the tree's, which it stands for
            same = _same_but_the_version(root / other, ld.path, ld.blob)
            counted = blob_id(str(root / other)) if same else counted
        if not same or other is None:
            head = _a_clone_of_head(ld, root, began_ns, heads)
            if head is not None:
                flags[Flag(FOREIGN, ld.module, ld.path, head)] = None
            elif (
                not made_by_the_tests(ld.path, began_ns)
                and not _the_runs_own(ld, began_ns, root, bases, opened)
                and not (other is None and _sibling_portion(ld, root, roots, bases))
            ):
                why = (
                    f"{INSTALLED_COPY} the tested tree has no such module"
                    if copied and other is None
                    else "loaded from outside the checkout"
                )
                flags[Flag(FOREIGN, ld.module, ld.path, why)] = None
            elif _bytecode_from_before(ld, began_ns):
                flags[Flag(STALE, ld.module, ld.path, ld.detail)] = None
        elif ld.via == loads_.BYTECODE and ld.detail:
            flags[Flag(STALE, ld.module, ld.path, f"bytecode not compiled from {other}")] = None
        else:
            loaded.setdefault(other, {})[counted] = None  # byte for byte the checkout's
            folder = _installed_folder(ld.path) if copied else None
            if folder is not None and folder not in copies:
                copies.add(folder)
                for flag in stale_copy(folder, root, roots, made_by_the_build, version_lines):
                    flags[flag] = None
    # Text a loader ran under a name that is not the module's (``<string>``): the tree's file's
    # text counts as that file; other text is the module's body, foreign, unless the module's
    # file (or text named as it) ran: then it was the loader's own scratch code.
    others = []
    for ld in unnamed:
        other, ran = _pseudo_file(ld, root, roots)
        if ran:
            loaded.setdefault(other or "", {})[ran] = None
        elif other is not None:
            others.append((ld, other))
    for ld, other in others:
        if other not in loaded:
            why = f"run by its loader from text compiled under {ld.path}, not the tree's {other}"
            flags[Flag(FOREIGN, ld.module, ld.path, why)] = None
    for ld in missing:
        top = ld.module.partition(".")[0]
        bases = [roots[top]] if top in roots else []
        if below is None:
            from genstamp.roots import below_the_top

            below = below_the_top(root, roots)
        init = os.path.join(ld.path, "__init__.py")
        if top in below and installed_from(init) is None:
            continue  # a release of a project below the top, from an index: a dependency
        held = [counterpart(ld.module, f, root, bases) for f in ("m.py", "__init__.py")]
        held_rel = next((h for h in held if h is not None), None)
        if bases and held_rel is not None and held_rel not in made:
            # an install older than the module: the tests ran its package without it (a
            # fallback ran where the tree's code would have)
            why = f"{NOT_INSTALLED}: the tested tree has it ({held_rel}), so the install is stale"
            flags[Flag(FOREIGN, ld.module, ld.path, why)] = None
    if env_files:  # the project's scripts and data files an install copied (bin/, share/)
        from genstamp import installedfiles
        from genstamp.roots import project_name

        for st in installedfiles.stale(env_files, root, project_name(root)):
            why = (
                f"{INSTALLED_COPY} its {st.shown} is a past version of the tested tree's"
                f" {st.source}, copied by the install of {st.distribution} (reinstall it)"
            )
            flags[Flag(FOREIGN, st.distribution, st.path, why)] = None
    for ld, rel in _dropped(gone, root):
        why = (
            f"loaded from outside the checkout in place of {rel}, which the tested tree dropped"
            if rel
            else "loaded from a copy of this project outside the checkout that is no git work"
            " tree (an export, an unpacked sdist: another version's code); the tested tree has"
            " no such module"
        )
        flags[Flag(FOREIGN, ld.module, ld.path, why)] = None
    for flag in _stale_copies(in_tree, root, roots, made_by_the_build, version_lines):
        flags[flag] = None
    for rel in _executable_unrecorded(list(programs), root):
        flags[Flag(MODE, "", rel, NOT_EXECUTABLE)] = None
    for ld, rel, how in _versions_run(by_path, root, began_ns):
        # (a copy of the tree's file, byte for byte, is not its file: what ran from that file,
        # a module's body a loader ran from a copy, is judged as it is without it)
        if how != CURRENT and not (opened and ld.blob in _archived_blobs(root_s, opened)):
            why = (
                f"{PAST_VERSION} {rel}, run from a copy of the"
                " project outside the checkout that is no git work tree (an export, an unpacked"
                " sdist): make it anew from the tested tree"
                if how == PAST
                else f"{PAST_VERSION} {rel}, run from an export of HEAD the tests made while the"
                " work tree's differs (they ran the last commit, not the tree they tested):"
                " commit the change, then rerun"
            )
            flags[Flag(FOREIGN, ld.module or "__main__", ld.path, why)] = None
    for tree, found in elsewhere.items():
        if began_ns is not None and _made_since(tree, began_ns):
            for ld in found:
                head = _a_clone_of_head(ld, root, began_ns, heads)
                if head is not None:
                    name = ld.module or module_name(ld.path, [tree, os.path.join(tree, "src")])
                    flags[Flag(FOREIGN, name, ld.path, head)] = None
            continue
        if clone_of(root, tree):  # another clone of this repository: its code is foreign
            why = f"loaded from {tree}, another clone of this repository"
            for ld in found:
                name = ld.module or module_name(ld.path, [tree, os.path.join(tree, "src")])
                flags[Flag(FOREIGN, name, ld.path, why)] = None
    return Audit(
        tuple(sorted(roots)),
        {p: tuple(b) for p, b in loaded.items()},
        tuple(flags),
        tuple(notes),
        tuple(sorted(namespaces)),
        _reads(r for r in read if r not in loaded),
        tuple(sorted(made)),
        _empty_folders(used, made_dirs, root_s),
    )


def as_text(data: bytes) -> frozenset[str]:
    """The blob ids of a source file's bytes as a loader may compile them: as they are, with
    universal newlines (a text-mode read, zipimport), and as the import system decodes them
    (``decode_source``: its coding declaration or byte-order mark, universal newlines) in
    UTF-8."""
    from genstamp.loads import blob_of

    blobs = {blob_of(data), blob_of(data.replace(b"\r\n", b"\n").replace(b"\r", b"\n"))}
    # (not Python source text: its bytes alone)
    with contextlib.suppress(SyntaxError, LookupError, UnicodeError, ValueError):
        blobs.add(blob_of(importlib.util.decode_source(data).encode("utf-8")))
    return frozenset(blobs)


def _pseudo(
    ld: Load,
    root: Path,
    roots: Mapping[str, str],
    loaded: dict[str, dict[str, None]],
    flags: dict[Flag, None],
) -> None:
    """A module of an import root whose body a loader compiled from text under a name of no
    file (``<gen pkg.mod>``, ``loads._pseudo_module``): the tree's file of that module when the
    text is its bytes or its text as decoded (``as_text``); another text (another clone's
    file, a past version) is foreign. A module
    the tree has no file for is the loader's own making (a plugin generated under the
    package's name), as a module a test writes is."""
    other, ran = _pseudo_file(ld, root, roots)
    if ran:
        loaded.setdefault(other or "", {})[ran] = None  # the file's own bytes ran
    elif other is not None:
        why = f"compiled under {ld.path} from text that is not the tree's {other}"
        flags[Flag(FOREIGN, ld.module, ld.path, why)] = None


def _pseudo_file(ld: Load, root: Path, roots: Mapping[str, str]) -> tuple[str | None, str]:
    """The tree's file of the module ``ld`` ran under a name of no file (None: the tree has
    none), and that file's blob when ``ld``'s text is its (``""`` when not)."""
    top = ld.module.partition(".")[0]
    bases = [roots[top]] if top in roots else []
    other = counterpart(ld.module, "module.py", root, bases) or counterpart(
        ld.module, "__init__.py", root, bases
    )
    if other is None:
        return None, ""
    try:
        data = (root / other).read_bytes()
    except OSError:
        return other, ""
    if ld.blob not in as_text(data):
        return other, ""
    from genstamp.loads import blob_of

    return other, blob_of(data)


def _dropped(gone: Sequence[Load], root: Path) -> list[tuple[Load, str]]:
    """Of the modules loaded from plain folders outside the checkout under names no folder of
    the work tree on their process's import path gives (``loads.GONE``), the old copies of a
    file the tree dropped, each with that file's work-tree-relative path: a module of a copy of
    this project that is no git work tree (a ``git archive`` export, an unpacked sdist: its
    ``pyproject.toml`` or ``setup.cfg`` names this project) whose file a commit of HEAD's
    history held below one of those folders (``helpers.py``, removed by ``git rm`` while a test
    still imports it); with "" for one of such a copy that no commit of HEAD's held (a package
    another branch added: that branch's code, which the tree does not have). A module of that
    name from anywhere else (a shared ``utils.py`` on ``PYTHONPATH``, a ``local_settings.py``
    kept outside, code generated outside the tree) is the environment's: nothing tells it from
    an old copy. git is asked once, for all of them."""
    import subprocess

    from genstamp.roots import project_name

    mine = project_name(root)
    if mine is None or not gone:
        return []
    wanted: dict[Load, list[str]] = {}
    for ld in gone:
        parts = ld.module.split(".")
        if not _of_this_project(ld.path, len(parts), mine):
            continue
        files = []
        for entry in ld.detail.split(os.pathsep):
            if not inside(entry, str(root)):
                continue
            base = os.path.relpath(entry, root).replace(os.sep, "/")
            stem = "/".join(p for p in (base if base != "." else "", *parts) if p)
            files += [f"{stem}.py", f"{stem}/__init__.py"]
        if files:
            wanted[ld] = files

    every = sorted({p for files in wanted.values() for p in files})
    if not every:
        return []
    try:
        log = ["git", "--literal-pathspecs", "log", "-z", "--format=", "--name-only", "HEAD"]
        out = subprocess.run([*log, "--", *every], cwd=root, capture_output=True, check=True)
    except (OSError, subprocess.CalledProcessError):
        return []  # git cannot say: judged as the environment's
    held = {name.strip("\n") for name in out.stdout.decode("utf-8", "surrogateescape").split("\0")}
    return [(ld, next((p for p in files if p in held), "")) for ld, files in wanted.items()]


def _versions_run(
    ran: Sequence[Load], root: Path, began_ns: int | None
) -> list[tuple[Load, str, str]]:
    """Of the Python files run from plain folders outside the checkout under no name the tree
    gives (``loads.RAN``: a script run by its path, ``runpy.run_path``), those whose bytes
    this repository holds as a file's version: each with such a path and how it came to run:
    ``CURRENT`` (the work tree's file there holds those bytes now: the tree's code, run from
    a copy), ``HEAD_COPY`` (the run made the copy, of HEAD's file, where the work tree's
    differs: an export of the last commit, not of the tree tested) or ``PAST`` (a copy made
    before the run, of a version the work tree's file no longer holds: a stale export, an
    unpacked sdist; or one the run made of this project, whose folder, or one of the two
    above, names it: an sdist from ``dist/`` it unpacks). Other files the run made (a test's
    own script whose bytes a past commit held by chance), bytes no commit held (an object git
    holds for no commit, a blob written for a scratch index) and an empty file are not judged.
    git is asked once which blobs it holds; then the index and HEAD's tree, and, for a copy
    judged as made before the run whose bytes neither holds, which commit (merges too) held
    them."""
    from genstamp import loads as loads_
    from genstamp.changed import git_output
    from genstamp.roots import project_name

    blobs = sorted({ld.blob for ld in ran if ld.blob and ld.blob != _EMPTY_BLOB})
    if not blobs:
        return []
    listed = "".join(f"{b}\n" for b in blobs).encode()
    out = git_output(root, "cat-file", "--batch-check=%(objectname) %(objecttype)", stdin=listed)
    held = {b for b in (out or b"").decode("ascii", "replace").split() if b in blobs}
    if not held:
        return []
    known: dict[str, list[str]] = {}  # blob -> the paths the index or HEAD hold it at
    head: dict[str, list[str]] = {}
    # `<mode> <blob> <stage>\t<path>` from the index, `<mode> <type> <blob>\t<path>` from HEAD
    for args, column, into in (
        (("ls-files", "-s", "-z"), 1, None),
        (("ls-tree", "-r", "-z", "HEAD"), 2, head),
    ):
        listing = (git_output(root, *args) or b"").decode("utf-8", "surrogateescape")
        for entry in listing.split("\0"):
            info, _, path = entry.partition("\t")
            words = info.split()
            blob = words[column] if len(words) > column else ""
            if path and blob in held:
                known.setdefault(blob, []).append(path)
                if into is not None:
                    into.setdefault(blob, []).append(path)
    mine = project_name(root)
    found = []
    for ld in ran:
        if ld.blob not in held:
            continue
        made = ld.detail in (loads_.MADE, loads_.CHANGED) or _made_during(ld, began_ns)
        # a copy the run made of this project (an sdist of dist/ it unpacks: the folder above
        # names the project) is judged as one made before it: a clean clone has no such copy
        exported = made and mine is not None and _of_this_project(ld.path, 1, mine)
        where = known.get(ld.blob, [])
        if not where and (exported or not made):
            where = _held_at(root, ld.blob)
        current = [p for p in where if _holds_blob(root / p, ld.blob)]
        if current:
            found.append((ld, current[0], CURRENT))
        elif made and head.get(ld.blob):
            found.append((ld, head[ld.blob][0], HEAD_COPY))
        elif (exported or not made) and where:
            found.append((ld, where[0], PAST))
    return found


CURRENT, HEAD_COPY, PAST = "current", "head", "past"  # how a file run by path came (above)


def _held_at(root: Path, blob: str) -> list[str]:
    """The paths the newest commit (of any ref) that holds ``blob`` has it at (a merge's
    resolution too), [] where none does."""
    from genstamp.changed import git_output

    log = git_output(
        root, "log", "--all", "-m", "-1", "-z", "--format=", "--name-only", f"--find-object={blob}"
    )
    names = (log or b"").decode("utf-8", "surrogateescape").split("\0")
    return list(dict.fromkeys(n.strip("\n") for n in names if n.strip("\n")))


def _stale_copies(
    found: Sequence[tuple[Load, str]],
    root: Path,
    roots: Mapping[str, str],
    made_by_the_build: Sequence[str],
    version_lines: Sequence[str],
) -> list[Flag]:
    """Modules of the checkout's import roots that ran from another file of the work tree than
    their own, one git ignores (a build's ``build/lib/calc/core.py`` on the import path,
    made before the run): foreign where its bytes are not the module's own file's (a stale
    build output), or where the tested tree dropped the module (a commit of HEAD's history held
    its own file), whether or not the configuration declares it ``generated``: the build made
    it of the checkout's code, which is what must have run. The version file the build writes
    (and a ``__version__`` line it rewrites) is the build's."""
    from genstamp.changed import git_output

    copies: list[tuple[Load, str, str | None, str]] = []  # (load, rel, own file, own path)
    for ld, rel in found:
        top = ld.module.partition(".")[0]
        base = os.path.relpath(roots[top], root) if os.path.isabs(roots[top]) else roots[top]
        parts = ld.module.split(".")
        package = rel.endswith("/__init__.py")
        tail = [*parts, "__init__.py"] if package else [*parts[:-1], f"{parts[-1]}.py"]
        own = "/".join(p for p in (base if base != "." else "", *tail) if p)
        if own == rel:
            continue  # the module's own file, where its root puts it (no file asked)
        other = counterpart(ld.module, ld.path, root, [roots[top]])
        if other == rel:
            continue  # the module's own file
        if other is None:
            copies.append((ld, rel, None, own))
            continue
        if generated(other, made_by_the_build):
            continue
        try:
            same = ld.blob in as_text((root / other).read_bytes())
        except OSError:
            same = False
        if not same and generated(other, version_lines):
            same = _same_but_the_version(root / other, ld.path, ld.blob)
        if not same:
            copies.append((ld, rel, other, other))
    if not copies:
        return []
    # a copy git ignores: one it tracks, or would add (a subpackage moved into a project of its
    # own, a submodule's file), is the tree's own
    rels = sorted({rel for _, rel, _, _ in copies})
    out = git_output(
        root,
        "--literal-pathspecs",
        "ls-files",
        "-z",
        "--others",
        "--ignored",
        "--exclude-standard",
        "--",
        *rels,
    )
    ignored = set((out or b"").decode("utf-8", "surrogateescape").split("\0"))
    copies = [c for c in copies if c[1] in ignored]
    gone = sorted({own for _, _, other, own in copies if other is None})
    held: set[str] = set()
    if gone:
        log = git_output(
            root,
            "--literal-pathspecs",
            "log",
            "-z",
            "--format=",
            "--name-only",
            "HEAD",
            "--",
            *gone,
        )
        held = {n.strip("\n") for n in (log or b"").decode("utf-8", "surrogateescape").split("\0")}
    flags = []
    for ld, _, other, own in copies:
        if other is not None:
            why = f"{IN_TREE_COPY} {other} that differs from it (a stale build output)"
        elif own in held:
            why = f"{IN_TREE_COPY} {own}, which the tested tree dropped"
        else:
            continue
        flags.append(
            Flag(FOREIGN, ld.module, ld.path, why + ": rebuild it, or take it off the import path")
        )
    return flags


def _executable_unrecorded(paths: Sequence[str], root: Path) -> list[str]:
    """Of ``paths`` (files of the work tree at ``root`` that the tests started as programs,
    executable here), those git records as not executable: under ``core.fileMode=false`` git
    keeps a tracked file's mode as its index entry has it, and adds a new one as 100644,
    whatever the file's bit (a file of a submodule is its repository's, not asked here)."""
    if not paths:
        return []
    from genstamp.changed import git_output

    mode = git_output(root, "config", "--bool", "core.fileMode")
    if mode is None or mode.strip() != b"false":
        return []  # git sees the bit: the tested tree has it as the file does
    listed = git_output(root, "--literal-pathspecs", "ls-files", "-s", "-z", "--", *paths)
    new = git_output(
        root, "--literal-pathspecs", "ls-files", "-o", "--exclude-standard", "-z", "--", *paths
    )
    recorded: dict[str, str] = {}
    for entry in (listed or b"").decode("utf-8", "surrogateescape").split("\0"):
        info, _, path = entry.partition("\t")
        if path:
            recorded[path] = info.split(" ", 1)[0]
    untracked = set((new or b"").decode("utf-8", "surrogateescape").split("\0"))
    return [p for p in paths if recorded.get(p) == "100644" or p in untracked]


def _holds_blob(path: Path, blob: str) -> bool:
    """Whether the work tree's file ``path`` holds the bytes of ``blob``, or their text."""
    try:
        return blob in as_text(path.read_bytes()) if path.is_file() else False
    except OSError:
        return False


def _of_this_project(path: str, depth: int, name: str) -> bool:
    """Whether the module ``depth`` names deep at ``path`` (its file, a member of an archive, or
    its bytecode) comes from a copy of the project ``name``: the first of its import-path
    folder and the two above it that holds a ``pyproject.toml`` or ``setup.cfg`` names it."""
    from genstamp.roots import project_name

    folder = os.path.dirname(path)
    if os.path.basename(path).startswith("__init__."):
        folder = os.path.dirname(folder)
    for _ in range(depth - 1):
        folder = os.path.dirname(folder)
    while not os.path.isdir(folder) and folder != os.path.dirname(folder):
        folder = os.path.dirname(folder)  # an archive on the path: the folder holding it
    for _ in range(3):
        here = Path(folder)
        if (here / "pyproject.toml").is_file() or (here / "setup.cfg").is_file():
            return project_name(here) == name
        folder = os.path.dirname(folder)
    return False


def made_folders(loads: Iterable[Load], *, asked: bool = True) -> set[str]:
    """The folders the run made: those a process made (os.mkdir; ``asked``: or asked to make
    where they were already, as ``makedirs(exist_ok=True)`` does), and those newer than the run
    when a process used them that no process found there before it (another process of the run
    may have changed a folder it found)."""
    from genstamp import loads as loads_

    loads = list(loads)
    found = {ld.path for ld in loads if ld.via == loads_.FOLDER}
    made = {
        ld.path for ld in loads if ld.via == loads_.MKDIR and (asked or ld.detail != loads_.THERE)
    }
    return made | {ld.path for ld in loads if ld.via == loads_.NEW and ld.path not in found}


def _empty_folders(used: set[str], made: set[str], root: str) -> tuple[str, ...]:
    """The folders that held no file when the tests used them (``loads.FOLDER``), as
    work-tree-relative paths: none the run made, nor any below one it made."""
    found = {
        os.path.relpath(folder, root).replace(os.sep, "/")
        for folder in used
        if inside(folder, root) and folder != root and not _below_made(folder, made, root)
    }
    return tuple(sorted(found))[:READ_LIMIT]


def _below_made(folder: str, made: set[str], root: str) -> bool:
    while inside(folder, root) and folder != root:
        if folder in made:
            return True
        folder = os.path.dirname(folder)
    return False


def configuration(ini: str | None, conftests: Iterable[str], root: Path) -> Audit:
    """What shaped the run besides the code it loaded: pytest's configuration file ``ini``,
    inside the work tree, is loaded as the checkout's code is (its blob: ignored, untracked
    or changed, the gate judges it so); that file, or a ``conftest.py`` pytest loaded, outside
    the work tree is foreign (a clean clone does not have it)."""
    from genstamp.loads import blob_of, real_path

    root_s = str(root)
    loaded: dict[str, tuple[str, ...]] = {}
    flags: list[Flag] = []
    named = [(ini, "pytest configuration")] if ini else []
    for path, what in [*named, *((c, "conftest") for c in conftests)]:
        real = real_path(path)
        if installed(real):
            continue  # an installed package's (``--pyargs``): the installer's
        if inside(real, root_s):
            if what != "conftest":  # (the recorder saw the conftests of the work tree load)
                try:
                    with open(real, "rb") as fh:
                        loaded[os.path.relpath(real, root_s).replace(os.sep, "/")] = (
                            blob_of(fh.read()),
                        )
                except OSError:
                    pass
        elif what == "conftest" or _configures_pytest(real):  # (`-c /dev/null`: none)
            why = (
                f"{OUTSIDE_READ} (a clean clone does not have it: keep the suite's "
                + ("conftest.py files and " if what == "conftest" else "")
                + "configuration in the repository, an empty pytest.ini at its top at least, "
                "where pytest stops looking for its rootdir and conftests)"
            )
            flags.append(Flag(FOREIGN, what, real, why))
    return Audit((), loaded, tuple(flags), (), ())


def _configures_pytest(path: str) -> bool:
    """Whether the file pytest took for its configuration holds settings of pytest's: a
    pyproject.toml above the repository with only ``[project]`` in it, or ``-c /dev/null``,
    does not (pytest falls back on such a file for its rootdir)."""
    try:
        st = os.stat(path)
        if not stat.S_ISREG(st.st_mode) or st.st_size == 0:
            return False
        with open(path, "rb") as fh:
            text = fh.read().decode("utf-8", "replace")
    except OSError:
        return False
    name = os.path.basename(path)
    if name.endswith(".toml"):  # pyproject.toml: [tool.pytest...]; pytest.toml: [pytest]
        try:
            data = _toml(text)
        except ValueError:
            return True  # pytest could not have read it either: say it
        tool = data.get("tool")
        return "pytest" in data or (isinstance(tool, dict) and "pytest" in tool)
    if name in ("setup.cfg", "tox.ini"):
        from genstamp import ini

        try:
            sections = ini.parse(text)
        except ValueError:
            return True
        return ("tool:pytest" if name == "setup.cfg" else "pytest") in sections
    return True  # pytest.ini, .pytest.ini, or a file named with -c


def _toml(text: str) -> dict[str, Any]:
    if sys.version_info < (3, 11):  # pragma: no cover
        import tomli as tomllib  # type: ignore[import-not-found,unused-ignore]
    else:  # the standard library's, whatever the checkout under test names its own
        from genstamp import stdlib

        tomllib = stdlib.module("tomllib")
    data: dict[str, Any] = tomllib.loads(text)
    return data


def _the_runs_own(
    ld: Load,
    began_ns: int | None,
    root: Path,
    bases: Sequence[str],
    opened: frozenset[str] = frozenset(),
) -> bool:
    """Whether ``ld`` loaded code the run itself made of the checkout's (``_made_during``) that
    is not stale: the tree's own bytes (a copy, a zipapp of the tree), bytes no version of the
    checkout ever held (a module a test writes under a root's name), or a past version that an
    archive the tree tracks holds and the run read (``opened``: an old release a compatibility
    test unpacks from ``tests/data/``; every clone unpacks the same). Any other past version's
    bytes came from a stale artifact (a wheel built at an older commit, unpacked by a test)."""
    if not _made_during(ld, began_ns):
        return False
    return _not_a_past_version(ld, root, bases, opened)


def _bytecode_from_before(ld: Load, began_ns: int | None) -> bool:
    """Whether ``ld`` ran bytecode that is not its source's (``loads.BYTECODE``, and why) from a
    ``.pyc`` last written before the run began: the run's copy of a stale cache of the checkout
    (``shutil.copytree`` keeps times, so the copied header still vouches for the copied
    source), which no clean clone holds. Bytecode the run compiled is its own, as a clean
    clone's run compiles it too."""
    from genstamp import loads as loads_

    if began_ns is None or ld.via != loads_.BYTECODE or not ld.detail:
        return False
    cached = set()
    if ld.detail.startswith("loaded from "):  # ``_stale_cache``'s: the .pyc that ran first
        cached.add(ld.detail.removeprefix("loaded from ").partition(", ")[0])
    with contextlib.suppress(ValueError, NotImplementedError):
        cached.add(importlib.util.cache_from_source(ld.path))
    for pyc in cached:
        try:
            if os.stat(pyc).st_mtime_ns < began_ns:
                return True
        except (OSError, ValueError):
            continue
    return False


def _not_a_past_version(
    ld: Load, root: Path, bases: Sequence[str], opened: frozenset[str] = frozenset()
) -> bool:
    """Whether the bytes of ``ld``, code the run made of the checkout's, are the tree's own,
    bytes no version of the checkout ever held, or a past version an archive the tree tracks
    holds and the run read (``_the_runs_own``), not a stale artifact's."""
    if not ld.module or ld.blob == _EMPTY_BLOB:
        return True  # no module to compare with; an empty file (a test's package) is anyone's
    if not ld.blob:
        # bytecode with no source (compiled by the test, from whatever text): the tree's own
        # code only when it is what compiling the tree's file gives
        return _compiled_from_the_tree(ld, root, bases) is not False
    other = counterpart(ld.module, ld.path, root, bases)
    if other is not None:
        try:
            if ld.blob in as_text(Path(root, other).read_bytes()):
                return True  # the file's bytes (or its text: zipimport's universal newlines)
        except OSError:
            pass
    if not _in_history(root, ld.blob, other):
        return True
    return bool(opened) and ld.blob in _archived_blobs(str(root), opened)


def _compiled_from_the_tree(ld: Load, root: Path, bases: Sequence[str]) -> bool | None:
    """Whether the sourceless bytecode ``ld`` ran (its ``.pyc``) holds the code that compiling
    the tree's file of its module gives; None when the tree has no such file, or either file
    cannot be read now."""
    from genstamp import loads as loads_

    pyc = ld.detail or ld.path
    # the module's file, or its package's (bytecode named after either runs as either)
    package = os.path.join(os.path.dirname(pyc), "__init__.py")
    other = counterpart(ld.module, pyc, root, bases) or counterpart(ld.module, package, root, bases)
    if other is None:
        return None
    try:
        with open(pyc, "rb") as fh:
            data = fh.read()
        source = (root / other).read_bytes()
    except OSError:
        return None
    if data[:4] != importlib.util.MAGIC_NUMBER:
        return False
    try:
        code = marshal.loads(data[16:])
    except (EOFError, ValueError, TypeError):
        return False
    # at any optimisation level (compileall -o 2 builds a sourceless distribution so)
    return isinstance(code, CodeType) and any(
        loads_.compiled_from(code, source, level) for level in (-1, 1, 2)
    )


_EMPTY_BLOB = "e69de29bb2d1d6434b8b29ae775ad8c2e48c5391"  # git's id of no bytes
_ARCHIVES = ("*.whl", "*.zip", "*.pyz", "*.egg", "*.tar", "*.tar.gz", "*.tgz", "*.tar.bz2")
_ARCHIVE_MOST = 64 << 20  # bytes of one archive read for its members


def _archived_blobs(root: str, opened: frozenset[str]) -> frozenset[str]:
    """The blob ids of the members of the archives git tracks in the work tree at ``root``
    that the run read (``opened``: absolute paths), each up to ``_ARCHIVE_MOST`` bytes (one
    that cannot be read is passed over)."""
    import subprocess
    import tarfile
    import zipfile

    from genstamp.loads import blob_of

    try:
        listed = subprocess.run(
            ["git", "ls-files", "-z", "--", *_ARCHIVES], cwd=root, capture_output=True, check=True
        ).stdout
    except (OSError, subprocess.CalledProcessError):
        return frozenset()
    found: set[str] = set()
    for rel in (os.fsdecode(p) for p in listed.split(b"\0") if p):
        path = os.path.join(root, rel)
        if path not in opened:
            continue
        try:
            if os.path.getsize(path) > _ARCHIVE_MOST:
                continue
            if zipfile.is_zipfile(path):
                with zipfile.ZipFile(path) as archive:
                    members = [archive.read(i) for i in archive.infolist() if not i.is_dir()]
            else:
                with tarfile.open(path) as tar:
                    files = (tar.extractfile(m) for m in tar.getmembers() if m.isfile())
                    members = [f.read() for f in files if f is not None]
        except (OSError, ValueError, EOFError, zipfile.BadZipFile, tarfile.TarError):
            continue
        found.update(blob_of(data) for data in members)
    return frozenset(found)


def _in_history(root: Path, blob: str, path: str | None = None) -> bool:
    """Whether the repository at ``root`` holds the blob ``blob`` (committed or staged once),
    and, where ``path`` (the module's file in the tree) is known, whether a commit held it at
    that path (the same bytes at another path, an empty file such as ``py.typed``, are no past
    version of this module; a past version kept under another folder, before a move to
    ``src/``, is one: the module's path below any folder counts). True when git cannot say
    (judged as stale, not as the run's own)."""
    import subprocess

    try:
        found = subprocess.run(
            ["git", "cat-file", "-e", f"{blob}^{{blob}}"], cwd=root, capture_output=True
        )
        if found.returncode != 0 or path is None:
            return found.returncode == 0
        tail = _module_tail(root, path)
        paths = [path, tail, f":(glob)**/{tail}"]
        commits = subprocess.run(
            ["git", "log", "--all", "--format=%H", f"--find-object={blob}", "--", *paths],
            cwd=root,
            capture_output=True,
        )
    except OSError:
        return True
    if commits.returncode != 0:
        return True
    if commits.stdout.strip():
        return True
    # staged at that path now, never committed
    staged = subprocess.run(["git", "ls-files", "-s", "--", path], cwd=root, capture_output=True)
    return blob.encode() in staged.stdout


def _module_tail(root: Path, path: str) -> str:
    """A module's tree path from its top package on (``src/pkg/sub/mod.py``: ``pkg/sub/mod.py``
    where ``src`` holds no ``__init__.py``): where another layout kept the same module."""
    parts = path.split("/")
    start = len(parts) - 1  # the file itself
    while start > 0 and (root / "/".join(parts[:start]) / "__init__.py").is_file():
        start -= 1
    return "/".join(parts[start:])


def _made_during(ld: Load, began_ns: int | None) -> bool:
    """Whether the file ``ld`` loaded (or the archive holding it: a zipapp) was written after the
    run began: code the tests made of the checkout's (a copy, ``pip install --target``, a
    zipapp, a module a test writes under a root's name) is theirs, as a clean clone's run makes
    it too."""
    from genstamp import loads as loads_

    if began_ns is None:
        return False
    path = ld.path
    if installed(path):
        # An installed file's time says little (a hard link made to its inode by an installer's
        # cache, a chmod): its virtual environment must be one the run made (as tox makes one).
        return _environment_made_since(path, began_ns)
    if ld.detail == loads_.MADE:
        return True
    while path and path != os.path.dirname(path):
        try:
            st = os.stat(path)
        except OSError:
            path = os.path.dirname(path)  # a member of an archive: the archive's own time
            continue
        return os.path.isfile(path) and st.st_ctime_ns >= began_ns
    return False


def _environment_made_since(path: str, since_ns: int) -> bool:
    """Whether the virtual environment holding ``path`` was made after ``since_ns``."""
    folder = os.path.dirname(path)
    while folder and folder != os.path.dirname(folder):
        marker = os.path.join(folder, "pyvenv.cfg")
        try:
            return os.stat(marker).st_ctime_ns >= since_ns
        except OSError:
            folder = os.path.dirname(folder)
    return False


def _built_at(path: str, mtime_ns: int, root: str) -> int:
    """When the extension at ``path``, which the run made, was built: a copy's own time is when
    it was copied, so the build in the work tree holding the same bytes gives it (the newest,
    if several do; not the copy itself, where the run put it in the work tree); with none
    there, or where the tree holds those bytes (a prebuilt binary committed: every clone's run
    copies the same), the file's own time (a build the tests made)."""
    import subprocess
    from importlib.machinery import EXTENSION_SUFFIXES

    stem = os.path.basename(path).partition(".")[0]
    try:
        listed = subprocess.run(  # each with a tag: "? " untracked or ignored, else tracked
            ["git", "ls-files", "-z", "-t", "--cached", "--others", "--", f":(glob)**/{stem}.*"],
            cwd=root,
            capture_output=True,
            check=True,
        ).stdout
        with open(path, "rb") as fh:
            data = fh.read()
    except (OSError, subprocess.CalledProcessError):
        return mtime_ns
    found = []
    for entry in os.fsdecode(listed).split("\0"):
        tag, name = entry[:2], entry[2:]
        if not name.endswith(tuple(EXTENSION_SUFFIXES)):
            continue
        original = os.path.join(root, name)
        try:
            st = os.stat(original)
            if st.st_size == len(data) and not os.path.samefile(original, path):
                with open(original, "rb") as fh:
                    if fh.read() == data:
                        if tag != "? ":
                            return mtime_ns
                        found.append(st.st_mtime_ns)
        except OSError:
            continue
    return max(found, default=mtime_ns)


def _a_clone_of_head(
    ld: Load, root: Path, began_ns: int | None, heads: dict[str, str | None]
) -> str | None:
    """Why code the run loaded from a work tree the tests made (``git clone ROOT``, ``git
    worktree add``) is not the tested tree's, when it is not: that work tree has this
    checkout's HEAD checked out, the file is HEAD's as committed, and the work tree's own file
    at that path holds other bytes (an edit not committed yet). The tests then ran the last
    commit's code, not the tree they tested (the clone of that tree, once committed, fails
    where this passed). None otherwise: a clone of another commit (a release tag an upgrade
    test checks out) or a file the tests changed there is theirs."""
    from genstamp.loads import work_tree_of

    if began_ns is None or not ld.blob or ld.path.startswith("<"):
        return None
    tree = work_tree_of(ld.path)
    if not tree or tree == str(root) or not _made_since(tree, began_ns):
        return None
    rel = os.path.relpath(ld.path, tree).replace(os.sep, "/")
    try:
        if blob_id(str(root / rel)) == ld.blob:
            return None
    except OSError:
        pass  # the work tree has no such file (deleted, not committed yet)
    for where in (str(root), tree):
        if where not in heads:
            heads[where] = _git_rev(where, "HEAD")
    if heads[tree] is None or heads[tree] != heads[str(root)]:
        return None
    if _git_rev(str(root), f"HEAD:{rel}") != ld.blob:
        return None
    return (
        f"{CLONE_OF_HEAD} ({tree}): the last commit's {rel}, not the work tree's, ran (commit "
        "the change, then rerun)"
    )


CLONE_OF_HEAD = "a clone of HEAD the tests made"  # the flag's detail says how it came about
NOT_INSTALLED = "not in the installed copy of its package"
INSTALLED_COPY = "installed, and"  # an installed copy of the checkout's package, not the tree's
# details the refusal shows: the path alone does not
# a file run from a copy outside the checkout whose bytes a commit held (``_versions_run``)
PAST_VERSION = "its bytes are a past version of"
IN_TREE_COPY = "loaded from a copy in the work tree of"  # ``_stale_copies``
PYXIMPORT_ELSEWHERE = "built by pyximport from another checkout's"  # its C file, named
OUTSIDE_READ = "read by pytest from outside the work tree"  # a configuration, a conftest
SAYS_HOW = (
    CLONE_OF_HEAD,
    NOT_INSTALLED,
    INSTALLED_COPY,
    PAST_VERSION,
    IN_TREE_COPY,
    PYXIMPORT_ELSEWHERE,
    OUTSIDE_READ,
)


def _git_rev(where: str, rev: str) -> str | None:
    """``git rev-parse rev`` in ``where`` (read only), None when git cannot tell."""
    import subprocess

    from genstamp.gitwalk import _env

    try:
        proc = subprocess.run(
            ["git", "-c", "safe.directory=*", "rev-parse", "-q", "--verify", rev],
            cwd=where,
            env=_env(os.environ),
            capture_output=True,
            text=True,
            check=False,
        )
    except OSError:
        return None
    return proc.stdout.strip() or None if proc.returncode == 0 else None


def made_by_the_tests(path: str, began_ns: int | None) -> bool:
    """Whether ``path`` lies in a git work tree made during the run (a clone of the project
    the tests made, to run a release check in): the tests' own, not another checkout."""
    from genstamp.loads import work_tree_of

    tree = work_tree_of(path) if began_ns is not None else ""
    return bool(tree) and began_ns is not None and _made_since(tree, began_ns)


def _made_since(tree: str, since_ns: int) -> bool:
    """Whether the git work tree ``tree`` was made after ``since_ns``: its git dir's HEAD and
    the entries that only its making writes (``refs/tags`` and ``objects/info``, or a linked
    worktree's ``commondir``) are all newer. A checkout in an older clone rewrites its HEAD
    alone: that clone stays another clone."""
    dotgit = os.path.join(tree, ".git")
    gitdir = dotgit
    if os.path.isfile(dotgit):  # a linked worktree's or a submodule's: "gitdir: PATH"
        try:
            with open(dotgit, "rb") as fh:
                named = gitfile_target(fh.read(65536))
        except OSError:
            return False
        if named is not None:
            gitdir = os.path.join(tree, os.fsdecode(named))
    made = []
    for entry in ("HEAD", "refs/tags", "objects/info", "commondir"):
        try:
            made.append(os.lstat(os.path.join(gitdir, entry)).st_ctime_ns >= since_ns)
        except OSError:
            continue
    return len(made) > 1 and all(made)


def clone_of(root: Path, other: str) -> bool:
    """Whether the git work tree ``other`` is a checkout of the same project as ``root``
    (another clone, a fork, a linked worktree): it names the same project (pyproject's
    ``[project] name``, setup.cfg's ``[metadata] name``), or the two share their history:
    the same root commits (one renamed the project since), or, unnamed, any root commit (a
    diverged clone). A library whose history was merged into this repository (``git
    subtree``: its roots are some of this one's) that names another project is not. Asked
    of git only for a work tree code was loaded from, and only as far as needed."""
    from genstamp.roots import project_name

    names = {project_name(Path(where)) for where in (str(root), other)}
    if len(names) == 1 and None not in names:
        return True
    import subprocess

    from genstamp.gitwalk import _env

    env = _env(os.environ)

    def git(where: str, *args: str) -> str | None:
        try:  # (read only: another user's clone is asked too, as a CI container has them)
            proc = subprocess.run(
                ["git", "-c", "safe.directory=*", *args],
                cwd=where,
                env=env,
                capture_output=True,
                text=True,
                check=False,
            )
        except OSError:
            return None
        return proc.stdout.strip() if proc.returncode == 0 else None

    here, there = str(root), other
    related = False
    for a, b in ((here, there), (there, here)):
        head = git(a, "rev-parse", "--verify", "-q", "HEAD^{commit}")
        related = related or bool(
            head and git(b, "cat-file", "-e", f"{head}^{{commit}}") is not None
        )
    if not related and None not in names:
        return False  # two named projects with no commit of one in the other: unrelated
    if related and None in names:
        return True  # unnamed, and one history: a shallow clone too (its roots are not ours)
    found = [git(where, "rev-list", "--max-parents=0", "HEAD") for where in (here, there)]
    if found[0] is None or found[1] is None:
        return False
    ours, theirs = set(found[0].split()), set(found[1].split())
    if ours == theirs:
        return True
    if None not in names:
        return False
    if ours & theirs:
        return True
    # A shallow clone's parentless commits are its boundary, not roots: unnamed, it shares
    # this history when the other holds one of them (it went on apart since).
    return any(
        git(a, "rev-parse", "--is-shallow-repository") == "true"
        and any(git(b, "cat-file", "-e", f"{c}^{{commit}}") is not None for c in mine)
        for a, b, mine in ((here, there, ours), (there, here, theirs))
    )


def _sourceless(path: str, root: str) -> str:
    """What a module loaded from bytecode with no source (``path``) ran: a member of an archive
    (``dist/app.zip/pkg/mod.pyc``, zipimport) is named by its archive, which no scrub removes."""
    folder = os.path.dirname(path)
    while inside(folder, root) and folder != root and not os.path.isdir(folder):
        if os.path.isfile(folder):
            rel = os.path.relpath(folder, root).replace(os.sep, "/")
            return (
                f"loaded from bytecode with no source, in the archive {rel} (remove or rebuild it)"
            )
        folder = os.path.dirname(folder)
    return "loaded from bytecode with no source"


def in_environment(path: str, root: str) -> bool:
    """Whether ``path`` lies in a Python environment inside the work tree ``root`` (a virtual
    or conda environment, an installation: ``paths.environment``)."""
    folder = os.path.dirname(path)
    while inside(folder, root) and folder != root:
        if environment(folder):
            return True
        folder = os.path.dirname(folder)
    return False


def module_name(path: str, folders: Iterable[str]) -> str:
    """The dotted name ``path`` has below the first of ``folders`` holding it."""
    for folder in folders:
        if inside(path, folder) and path != folder:
            parts = os.path.relpath(path, folder).split(os.sep)
            parts[-1] = parts[-1].partition(".")[0]
            if parts[-1] == "__init__" and len(parts) > 1:
                parts.pop()
            return ".".join(parts)
    return os.path.basename(path)


def native_sources(root: Path) -> list[str]:
    """The native sources of the checkout (C, C++, Cython, Rust, SWIG, their headers...) that git
    tracks or would add: what a build of an extension module can read, wherever the build
    configuration names them. Read from git, not guessed from a folder layout."""
    import subprocess

    names: list[str] = []
    # tracked ones in the submodules too (a header a submodule provides): ``--others`` cannot
    # recurse, so the untracked ones are the superproject's
    for which in (["--cached", "--recurse-submodules"], ["--others", "--exclude-standard"]):
        try:
            out = subprocess.run(
                ["git", "ls-files", "-z", *which], cwd=root, capture_output=True, check=True
            ).stdout
        except (OSError, subprocess.CalledProcessError):
            continue
        names += os.fsdecode(out).split("\0")
    listed = list(dict.fromkeys(names))
    found = [n for n in listed if _native(n.lower())]
    others = [n for n in listed if n.lower().endswith(NAMED_SOURCES)]
    if others:
        named = _source_names(str(root))
        found += [n for n in others if n.rpartition("/")[2] in named]
    if found:  # what they include, whatever its name (``#include "ops.inc"``), and so on
        taken = set(found)
        scanned: list[str] = []  # first the native sources' and their templates' kinds
        for _ in range(_INCLUDE_DEPTH):
            included = _included_names(str(root), scanned)
            new = [n for n in listed if n not in taken and n.rpartition("/")[2] in included]
            if not new:
                break
            found += new
            taken.update(new)
            scanned = new
    return [os.path.join(root, n) for n in found]


def _native(name: str) -> bool:
    """Whether the (lower-case) file name is a native source's, or a template of one."""
    if name.endswith(TEMPLATE_SUFFIXES):
        name = name.rpartition(".")[0]
    return name.endswith(NATIVE_SOURCES)


# ``#include "ops.inc"`` (or ``<ops.inc>``, found through ``-I``) of C and C++ (``#import``,
# ``#include_next``), Cython's ``include "defs.pxi"``, Fortran's ``INCLUDE 'x.inc'``, SWIG's
# and NASM's ``%include``; the keyword in any case
_INCLUDE = (
    r"^[[:space:]]*(#[[:space:]]*(include_next|include|import)|%[[:space:]]*include|include)"
    r"""[[:space:]]*("[^"]+"|'[^']+'|<[^>]+>)"""
)
_INCLUDE_DEPTH = 8  # included files that include others, so many levels deep


def _included_names(root: str, paths: Sequence[str] = ()) -> set[str]:
    """The names of the files the given ``paths`` of the tree include (default: the native
    sources' kinds and their templates'): the last part of each, as one found through the
    compiler's include path is named without its folder; not a name in angle brackets
    without a suffix (C++'s ``<vector>``, ``<format>``: the standard library's)."""
    if paths:
        specs = [f":(literal){p}" for p in paths]
    else:
        suffixes = dict.fromkeys(s.lower() for s in (*NATIVE_SOURCES, *NAMED_SOURCES))
        kinds = [f"{s}{t}" for s in suffixes for t in ("", *TEMPLATE_SUFFIXES)]
        specs = [f":(glob,icase)**/*{k}" for k in kinds]
    _, out = _grep(root, "-h", "-o", "-i", "-I", "-E", "-e", _INCLUDE, "--", *specs)
    found = set()
    for line in os.fsdecode(out).splitlines():
        line = line.rstrip()
        closing = line[-1:]
        name = line[:-1].rpartition({">": "<"}.get(closing, closing))[2]
        if closing == ">" and "." not in name:
            continue
        if name:
            found.add(name.replace("\\", "/").rpartition("/")[2])
    return found


def _grep(root: str | Path, *args: str) -> tuple[int, bytes]:
    """``git grep --untracked ARGS`` in ``root``: its exit code (1: nothing found; -1: git
    could not be run) and what it printed."""
    import subprocess

    try:
        done = subprocess.run(
            ["git", "grep", "--no-color", "--untracked", *args], cwd=root, capture_output=True
        )
    except OSError:
        return -1, b""
    return done.returncode, done.stdout


def _source_names(root: str) -> set[str]:
    """The names of the files of ``NAMED_SOURCES``' kinds the build files of the tree (its
    library builds' too: a Makefile) name, as build files name sources."""
    kinds = "|".join(re.escape(k[1:]) for k in NAMED_SOURCES)
    pattern = rf"[A-Za-z0-9_.+-]+\.({kinds})\b"
    _, out = _grep(root, "-h", "-o", "-i", "-I", "-E", "-e", pattern, "--", *_LIBRARY_BUILD_FILES)
    return {line.rpartition("/")[2] for line in os.fsdecode(out).splitlines()}


_SET_SOURCE = r"""set_source\s*\(\s*[rRuU]?["']([A-Za-z_][\w.]*)["']"""


def cffi_builders(root: Path) -> dict[str, list[str]]:
    """The Python build scripts of the checkout (tracked, or that git would add) that define a
    cffi extension in API mode (``ffibuilder.set_source("_foo", "<C code>")``): the module's
    name (its last part) -> those scripts. The C code lives in the script, and the C file the
    build writes is git-ignored: the script is the extension's source."""
    _, out = _grep(root, "-l", "-z", "-e", "set_source", "--", "*.py")
    found: dict[str, list[str]] = {}
    for rel in filter(None, os.fsdecode(out).split("\0")):
        path = os.path.join(root, rel)
        try:
            text = Path(path).read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        for name in dict.fromkeys(re.findall(_SET_SOURCE, text)):
            found.setdefault(name.rpartition(".")[2], []).append(path)
    return found


def rebuild_command(
    root: Path, path: str, builders: dict[str, list[str]], *, module: bool = True
) -> str:
    """How to rebuild the extension module (``module``) or the library ``ctypes`` loads at
    ``path`` in the work tree ``root``, from what the project holds: setuptools' in-place build
    for a ``setup.py`` project (``--force``: every extension is judged against every native
    source, and setuptools alone rebuilds only one older than its own sources), an editable
    install for a ``pyproject.toml`` one, the cffi build script that defines it, and ``make``
    for a top-level Makefile (first for a library: a Python build seldom makes one); words, not
    a command, where the top holds none of them."""
    make = any((root / name).is_file() for name in _MAKEFILES)
    if make and not module:
        return "make"
    if (root / "setup.py").is_file():
        return SETUP_PY_REBUILD
    if _builds_a_project(root / "pyproject.toml"):
        return "pip install -e ."
    scripts = builders.get(os.path.basename(path).partition(".")[0], []) if module else []
    if scripts:
        return "python " + os.path.relpath(scripts[0], root).replace(os.sep, "/")
    if make:
        return "make"
    return "with the build that made it: the top holds no setup.py, pyproject.toml or Makefile"


_MAKEFILES = ("GNUmakefile", "makefile", "Makefile")  # the names make reads, in its order


def _builds_a_project(pyproject: Path) -> bool:
    """Whether ``pyproject`` makes its folder a project pip can install (a ``[build-system]``
    or a ``[project]`` table), not only the settings of tools (pytest's, ruff's)."""
    from genstamp.atomic import read_kept

    try:
        data = _toml(read_kept(pyproject).decode("utf-8"))
    except FileNotFoundError:
        return False
    except (OSError, UnicodeDecodeError, ValueError):
        return True  # unreadable here: pip will say what is wrong with it
    return "build-system" in data or "project" in data


def _sources_of(path: str, natives: list[str], builders: dict[str, list[str]]) -> list[str]:
    """The native sources an extension at ``path`` may be built from, with the cffi build
    scripts that define a module of its name."""
    extra = builders.get(os.path.basename(path).partition(".")[0], [])
    return [*natives, *extra] if extra else natives


def as_committed(root: str, paths: Sequence[str]) -> bool:
    """Every one of ``paths`` (absolute, in the work tree) is tracked and as HEAD holds it: git
    wrote them all, nothing was built or edited here since."""
    from genstamp.changed import git_output

    rels = [os.path.relpath(p, root) for p in paths]
    if git_output(root, "ls-files", "--error-unmatch", "--", *rels) is None:
        return False
    status = git_output(root, "status", "--porcelain", "-z", "--untracked-files=all", "--", *rels)
    return status == b""


def stale_extension(
    path: str,
    mtime_ns: int,
    natives: Iterable[str],
    root: str,
    rebuild: str,
    *,
    committed: bool = True,
    module: bool = True,
) -> str | None:
    """Why the extension module at ``path`` (built at ``mtime_ns``) is not known to be built
    from the sources now in the tree, if it is not: a native source of the checkout (beside it
    or anywhere a build configuration may name it) changed after it was built. git writes every
    file a checkout, merge or pull changes, so a source the extension predates is one it was not
    built from. An extension built before the generation from sources that have not changed
    since is current: a build, then ``genstamp stamp``, is not refused. A committed extension
    (``committed``: one in the work tree) that git wrote as HEAD holds it, with every newer
    source as HEAD holds it too, is the tree's own binary: a fresh clone writes files in path
    order, not build order, and a clean clone runs that very binary. ``module``: an extension
    module imported by name (not a library ``ctypes`` loaded), which hides the Python module of
    its name beside it."""
    natives = list(natives)
    newer = newer_sources(path, mtime_ns, natives)
    if newer:  # written since, with the very bytes it was built from (a switch away and back)
        same = built_from(root, path, mtime_ns)
        newer = [s for s in newer if s not in same or _file_blob(s) != same[s]]
    elif committed:
        remember_built(root, path, mtime_ns, natives)
    # an extension module hides the Python module of its name (not a library ctypes loads)
    beside = _module_beside(path) if module else None
    if committed and beside is not None and beside not in newer:
        try:
            if os.stat(beside).st_mtime_ns > mtime_ns:
                newer.insert(0, beside)  # the tree's module of that name, which it hides
        except OSError:
            pass
    if not newer:
        # (mypyc's shared helper library, `<hash>__mypyc`, is built from the tree's modules)
        helper = "__mypyc." in os.path.basename(path)
        stem = os.path.basename(path).partition(".")[0]
        # for a module imported by name: no native source of its name nor any build file that
        # names it; for a library ctypes loads, no native source of its name nor any build
        # file (a Makefile) that names it, a Python one only where the tree holds a native
        # source (the module that loads it names it too) (the git commands only where the
        # cheap checks leave it open)
        # a module beside it is its source only where the project compiles Python modules
        # (mypyc, Cython's pure-Python mode); else the build came from elsewhere
        if (
            committed
            and (
                beside is None
                or not _in_build_files(root, re.compile(_COMPILERS), "mypyc", "cython")
            )
            and not helper
            and _git_ignored(root, path)
            and (
                not _named(root, stem, natives)
                if module
                else not _library_named(root, stem, natives, scripts=bool(natives))
            )
        ):
            return (
                f"{os.path.basename(path)} is built from no source the tree holds (a clean "
                "clone has no such module): delete it, or commit what builds it"
            )
        return None
    if committed and as_committed(root, [path, *newer]):
        return None
    name = os.path.relpath(newer[0], root).replace(os.sep, "/")
    if newer[0] == beside:
        return (
            f"{os.path.basename(path)} is older than {name}, the module of that name it hides "
            f"(a clean clone runs {name}): rebuild it ({rebuild}), or delete it"
        )
    return f"{os.path.basename(path)} is older than {name}: rebuild it ({rebuild})"


# The files a build of an extension module names it in (setuptools, meson, CMake, cargo)
_BUILD_FILES = (
    "setup.py",
    "setup.cfg",
    "pyproject.toml",
    ":(glob)**/meson.build",
    ":(glob)**/CMakeLists.txt",
    ":(glob)**/*.cmake",
    ":(glob)**/Cargo.toml",
)


def _named(root: str, stem: str, natives: Sequence[str]) -> bool:
    """Whether anything in the tree can build the extension module ``stem``: a native source
    of that name (``fast.pyx``, ``fast.c``; a cffi build script naming it is one), or a build
    file that names it (``Extension("pkg.fast", …)``, ``pybind11_add_module(fast …)``)."""
    if any(os.path.basename(n).partition(".")[0] == stem for n in natives):
        return True
    if any(n.endswith(".py") for n in natives):
        return True  # a cffi build script defining a module of that name (``cffi_builders``)
    # a build file naming it; a native source defining its module (``PyInit_fast``, or by
    # its name: pybind11's ``PYBIND11_MODULE(fast, m)``, pyo3's ``fn fast``); or a cffi build
    # script naming it (its name in a variable: ``set_source(NAME, …)``)
    if _in_build_files(root, re.compile(rf"(?<!\w){re.escape(stem)}(?!\w)"), stem):
        return True
    sources = [f":(glob)**/*{ext}" for ext in EXTENSION_SOURCES]
    for how, where in (
        (["-w", "-e", stem], sources),
        (["-e", f"PyInit_{stem}"], sources),
        (["-w", "--all-match", "-e", "set_source", "-e", stem], [":(glob)**/*.py"]),
    ):
        if _grep(root, "-q", "-F", *how, "--", *where)[0] != 1:
            return True  # 0: named; an error: not known, so not refused
    return False


# The files that may build a shared library a test loads with ctypes, beside the build files
# of extension modules: make's, a shell's, a task runner's, a Python build script's or a
# conftest's (a fixture that builds it); not a test module (the test that loads it names it)
_LIBRARY_BUILD_FILES = (
    *_BUILD_FILES,
    ":(glob)**/[Mm]akefile",
    ":(glob)**/GNUmakefile",
    ":(glob)**/*.mk",
    ":(glob)**/build.rs",
    ":(glob)**/*.sh",
    ":(glob)**/*.bat",
    ":(glob)**/*.cmd",
    ":(glob)**/*.ps1",
    ":(glob)**/SConstruct",
    ":(glob)**/BUILD",
    ":(glob)**/BUILD.bazel",
    ":(glob)**/justfile",
    ":(glob)**/[Tt]askfile.yml",
    ":(glob)**/tox.ini",
    ":(glob)**/*.py",
    ":(exclude,glob)**/test_*.py",
    ":(exclude,glob)**/*_test.py",
)


# ... but Python's: with no native source in the tree, a build script holds it as text (a
# Makefile's from a vendored archive), and the module that loads the library names it too
_LIBRARY_BUILD_FILES_NOT_PYTHON = tuple(f for f in _LIBRARY_BUILD_FILES if ".py" not in f)


def _library_named(root: str, stem: str, natives: Sequence[str], *, scripts: bool = True) -> bool:
    """Whether anything in the tree can build the shared library ``stem`` (``libfast`` of
    ``libfast.so.1``) that ctypes loads: a native source of its name or of its link name
    (``fast.c``, ``fast/``'s ``Cargo.toml`` naming ``fast``), or a build file naming either
    (``gcc -shared -o libfast.so``, ``add_library(fast SHARED …)``)."""
    names = {stem}
    if stem.startswith("lib") and len(stem) > 3:
        names.add(stem[3:])  # the name a linker takes (-lfast), and CMake's or cargo's
    if any(os.path.basename(n).partition(".")[0] in names for n in natives):
        return True
    word = re.compile("|".join(rf"(?<!\w){re.escape(n)}(?!\w)" for n in sorted(names)))
    files = _LIBRARY_BUILD_FILES if scripts else _LIBRARY_BUILD_FILES_NOT_PYTHON
    return _in_build_files(root, word, *sorted(names), files=files)


# what a build configuration that compiles Python modules into extensions names
_COMPILERS = r"(?i)(?<![\w.])(mypyc|mypycify|cythonize|cython)(?!\w)"
# a project's words about itself, not its build: pyproject's and Cargo's metadata text
_PROSE = frozenset(
    {"description", "keywords", "classifiers", "urls", "readme", "authors", "maintainers"}
    | {"license", "categories", "homepage", "documentation", "repository"}
)


def _in_build_files(
    root: str, word: re.Pattern[str], *fixed: str, files: Sequence[str] = _BUILD_FILES
) -> bool:
    """Whether a build file of the tree (``_BUILD_FILES``: setuptools', meson's, CMake's,
    cargo's, tracked or not) names ``word`` in what the build reads: not in a comment, nor
    in a TOML file's descriptive text (a changelog line in ``description``). ``fixed``: the
    strings (any case) one of which every match holds, for git to find the candidate files."""
    how = ["-i", "-F", *(a for f in fixed for a in ("-e", f))]
    code, out = _grep(root, "-l", *how, "--", *files)
    if code not in (0, 1):
        return True  # not known: not refused
    for rel in os.fsdecode(out).splitlines():
        try:
            with open(os.path.join(root, rel), encoding="utf-8", errors="replace") as fh:
                text = fh.read()
        except OSError:
            return True
        if _names(rel, text, word):
            return True
    return False


def _names(rel: str, text: str, word: re.Pattern[str]) -> bool:
    """Whether the build file ``rel`` holding ``text`` names ``word`` outside its comments
    (``#`` in all of them) and, in a TOML file, outside its descriptive text."""
    if rel.endswith(".toml"):
        try:
            data = _toml(text)
        except ValueError:
            pass
        else:
            return any(word.search(s) for s in _strings(data))
    return any(word.search(line.partition("#")[0]) for line in text.splitlines())


def _strings(value: object, key: str = "") -> Iterator[str]:
    """The keys and string values of a TOML document, but the descriptive ones (``_PROSE``)."""
    if key in _PROSE:
        return
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for k, v in value.items():
            yield k
            yield from _strings(v, k)
    elif isinstance(value, list):
        for v in value:
            yield from _strings(v, key)


def _git_ignored(root: str, path: str) -> bool:
    """Whether git ignores ``path`` (untracked and matched by an ignore rule): no tree holds it."""
    import subprocess

    try:
        done = subprocess.run(
            ["git", "check-ignore", "-q", "--", os.path.relpath(path, root)],
            cwd=root,
            capture_output=True,
        )
    except OSError:
        return False
    return done.returncode == 0


def _module_beside(path: str) -> str | None:
    """The Python module an extension module hides (the same name beside it, ``mod.py`` for
    ``mod.cpython-311-x86_64-linux-gnu.so``: Cython's pure-Python mode builds one from the
    other), when there is one."""
    folder, base = os.path.split(path)
    module = os.path.join(folder, base.partition(".")[0] + ".py")
    return module if os.path.isfile(module) else None


BUILT_FILE = "extensions.json"  # in the git dir's genstamp folder (``remember_built``)
BUILT_VERSION = 1


def _built_file(root: str) -> Path | None:
    from genstamp.repo import find_place

    try:
        place = find_place(root)
    except Exception:  # (a work tree genstamp cannot place: nothing kept)
        return None
    return None if place is None else Path(place.gitdir, "genstamp", BUILT_FILE)


def _read_built(file: Path) -> dict[str, Any]:
    import json

    try:
        data = json.loads(file.read_bytes())
    except (OSError, ValueError, RecursionError):
        return {}
    if not isinstance(data, dict) or data.get("version") != BUILT_VERSION:
        return {}  # (a kept record of another version: written anew)
    built = data.get("built")
    return built if isinstance(built, dict) else {}


def built_from(root: str, path: str, mtime_ns: int) -> dict[str, str]:
    """The native sources (path -> blob) that the extension at ``path``, as built at
    ``mtime_ns``, was found no older than at a run (``remember_built``): {} when not known."""
    file = _built_file(root)
    entry = _read_built(file).get(path) if file is not None else None
    if not isinstance(entry, dict) or entry.get("mtime_ns") != mtime_ns:
        return {}
    sources = entry.get("sources")
    return (
        {k: v for k, v in sources.items() if isinstance(v, str)}
        if isinstance(sources, dict)
        else {}
    )


def remember_built(root: str, path: str, mtime_ns: int, natives: Iterable[str]) -> None:
    """Keep the blobs of the native sources the extension at ``path`` (built at ``mtime_ns``)
    is no older than: git may write one again with the very same bytes (a switch to another
    branch and back, a stash and its pop), which makes it newer and leaves it what the
    extension was built from. Once per build; never a failure of the run."""
    file = _built_file(root)
    if file is None:
        return
    built = _read_built(file)
    entry = built.get(path)
    if isinstance(entry, dict) and entry.get("mtime_ns") == mtime_ns:
        return
    sources = {}
    for source in _candidates(path, natives):
        blob = _file_blob(source)
        if blob:
            sources[source] = blob
    built = {p: e for p, e in built.items() if os.path.exists(p)}  # (removed extensions go)
    built[path] = {"mtime_ns": mtime_ns, "sources": sources}
    import json

    from genstamp.atomic import write_atomic

    with contextlib.suppress(OSError):
        file.parent.mkdir(exist_ok=True)
        data = {"version": BUILT_VERSION, "built": built}
        write_atomic(file, json.dumps(data, sort_keys=True).encode())


def _file_blob(path: str) -> str:
    from genstamp.loads import blob_of

    try:
        with open(path, "rb") as fh:
            return blob_of(fh.read())
    except OSError:
        return ""


def _candidates(path: str, natives: Iterable[str]) -> list[str]:
    """The native sources the extension at ``path`` may be built from: those of its name
    beside it, then ``natives``."""
    folder, base = os.path.split(path)
    stem = base.partition(".")[0]
    exts = (*EXTENSION_SOURCES, *(e.upper() for e in EXTENSION_SOURCES))
    return list(dict.fromkeys([*(os.path.join(folder, stem + e) for e in exts), *natives]))


def newer_sources(path: str, mtime_ns: int, natives: Iterable[str]) -> list[str]:
    """The native sources changed after the extension at ``path`` was built (at ``mtime_ns``),
    newest first."""
    # setuptools copies an in-place extension from its build folder keeping whole seconds only
    # (distutils' copy_file): such a time is compared in whole seconds, or a build in the same
    # second as the last edit (a script that clones, then builds) would be older than it.
    second = 10**9
    coarse = mtime_ns % second == 0
    found: list[tuple[int, str]] = []
    for source in _candidates(path, natives):
        try:
            mtime = os.stat(source).st_mtime_ns
        except OSError:
            continue
        if coarse:
            mtime -= mtime % second
        if mtime > mtime_ns:
            found.append((mtime, source))
    return [source for _, source in sorted(found, reverse=True)]


SETUP_PY_REBUILD = "python setup.py build_ext --inplace --force"
REINSTALL = "pip install ."  # an extension installed from the checkout: install it again


def _pyximport_origin(path: str, module: str, root: str) -> str | None:
    """Where pyximport's build of the extension module ``module`` at ``path`` comes from: ""
    this checkout's source, else the C file it generated of another checkout's (None when
    ``path`` is no such build). Its build folder (``~/.pyxbld``, or ``build_dir=``) holds the
    module in ``lib.PLATFORM/pkg/`` by its name alone, shared by every checkout, and the C
    files in ``temp.PLATFORM/ABSOLUTE/PATH/pkg/``, one for each source path: the module is a
    build of the latest made before it, which is this checkout's own where its C file holds
    the same but for the source's path (another clone's, or worktree's, of the same text)."""
    built = _pyximport_builds(path, module)
    if not built:
        return None
    _, latest, raw, real = built[-1]
    if inside(real, root):
        return ""
    for _, c, own_raw, own_real in reversed(built):
        if inside(own_real, root):
            try:
                with open(latest, "rb") as fh, open(c, "rb") as mine:
                    same = fh.read().replace(os.fsencode(raw), os.fsencode(own_raw)) == mine.read()
            except OSError:
                same = False
            return "" if same else latest
    return latest


def _pyximport_builds(path: str, module: str) -> list[tuple[int, str, str, str]]:
    """(mtime, C file, its source's folder as pyximport named it, and resolved) of each C file
    of ``module`` in the pyximport build folder holding ``path`` that was made before it, the
    latest last; none when ``path`` lies in no such folder."""
    parts = module.split(".")
    folder = os.path.dirname(path)
    for name in reversed(parts[:-1]):  # up to the lib.* folder holding the package
        if os.path.basename(folder) != name:
            return []
        folder = os.path.dirname(folder)
    if not os.path.basename(folder).startswith("lib."):
        return []
    build = os.path.dirname(folder)
    try:
        built_ns = os.stat(path).st_mtime_ns
        temps = [e.path for e in os.scandir(build) if e.name.startswith("temp.") and e.is_dir()]
    except OSError:
        return []
    wanted = {f"{parts[-1]}{ext}" for ext in (".c", ".cpp")}
    package = parts[:-1]
    found: list[tuple[int, str, str, str]] = []
    for temp in temps:
        seen = 0
        for where, dirs, files in os.walk(temp):
            seen += len(files) + len(dirs)
            if seen > _PYXBLD_MOST:
                break
            held = os.path.relpath(where, temp).split(os.sep)  # an absolute path's parts
            if package and held[-len(package) :] != package:
                continue
            for file in wanted.intersection(files):
                c = os.path.join(where, file)
                try:
                    made = os.stat(c).st_mtime_ns
                except OSError:
                    continue
                if made <= built_ns:  # made before the module was: what it may be built of
                    raw = os.sep + os.path.join(*held)
                    found.append((made, c, raw, os.path.realpath(raw)))
    return sorted(found)


_PYXBLD_MOST = 20000  # entries of a pyximport build folder looked through at most

# pyximport's build folder (``pyximport.install(build_dir=...)``, default ``~/.pyxbld``)
_PYXIMPORT = ".pyxbld"
PYXIMPORT_REBUILD = "rm -r ~/.pyxbld (pyximport builds it again as the tests import it)"
# one the tests built or copied as they ran: from the checkout's build, or its sources
MADE_REBUILD = "rebuild the checkout's extension the tests copy or build it from"


def installed_from(path: str) -> str | None:
    """The local folder the distribution that installed ``path`` (a file in a site-packages)
    was installed from, as the installer recorded it (PEP 610 ``direct_url.json``, written by
    pip and uv for ``pip install DIR``), resolved; None when it is not known."""
    parts = path.split(os.sep)
    tops = [i for i, part in enumerate(parts) if part in ("site-packages", "dist-packages")]
    if not tops:
        return None
    site = os.sep.join(parts[: tops[-1] + 1])
    return _sources_in(site).get("/".join(parts[tops[-1] + 1 :]))


_SOURCES: dict[str, dict[str, str]] = {}


def _sources_in(site: str) -> dict[str, str]:
    """The files of ``site`` (as its distributions' RECORDs list them) installed from a local
    folder or archive, each -> that, resolved (each RECORD read once per process)."""
    known = _SOURCES.get(site)
    if known is not None:
        return known
    import csv
    import json
    from urllib.parse import unquote, urlsplit

    out: dict[str, str] = {}
    try:
        infos = [n for n in os.listdir(site) if n.endswith(".dist-info")]
    except OSError:
        infos = []
    for info in infos:
        try:
            with open(os.path.join(site, info, "direct_url.json"), encoding="utf-8") as fh:
                url = json.load(fh).get("url")
            if not isinstance(url, str):
                continue
            split = urlsplit(url)
            if split.scheme != "file" or split.netloc not in ("", "localhost"):
                continue
            source = os.path.realpath(unquote(split.path))
            with open(os.path.join(site, info, "RECORD"), encoding="utf-8", newline="") as fh:
                for row in csv.reader(fh):
                    if row:
                        out.setdefault(row[0], source)
        except (OSError, ValueError, AttributeError):
            continue
    _SOURCES[site] = out
    return out


def blob_id(path: str) -> str:
    """The id git gives the file's bytes as a blob (``git hash-object``, no filters), in pure
    Python: the pytest process never needs libgit2 for it."""
    from genstamp.loads import blob_of

    with open(path, "rb") as fh:
        return blob_of(fh.read())


def _checks_hashes() -> bool:
    """Whether this interpreter, the one that loaded the bytecode, checks checked hash-based
    pycs against their source (``--check-hash-based-pycs never`` turns that off)."""
    import _imp

    return str(getattr(_imp, "check_hash_based_pycs", "default")) != "never"


def _stale_cache(
    source: str,
    cached: str,
    root: str,
    generation_ns: int | None,
    transformed: bool = False,
    checked: bool = True,
) -> str | None:
    """Why the bytecode CPython would have used for ``source`` is not that source's, if it is.
    ``transformed``: an import hook's own compile loaded it (judged by its header and age).
    ``checked``: what ran it compared its header with the source (the import system's own
    loader); otherwise a header that does not vouch for the source vouches for nothing, and
    the code is compared (Z24 01: a ``SourcelessFileLoader``, ``runpy.run_path`` of the pyc)."""
    try:
        with open(cached, "rb") as fh:
            data = fh.read()
        st = os.stat(source)
        cst = os.stat(cached)
    except OSError:
        return None
    header = bytecode.parse_header(data)
    if header is None:
        return None
    if header.hash_based:
        # The hash vouches for the source the pyc names, not for the code it holds (a pyc
        # compiled with another optimisation, or edited, under a source's hash): compared below
        try:
            with open(source, "rb") as fh:
                matches = importlib.util.source_hash(fh.read()) == header.source_hash
        except OSError:
            return None
        if not matches and checked:
            if header.checked and _checks_hashes():
                return None  # CPython checked it and compiled the source instead
            kind = "an unchecked pyc"
            if header.checked:
                kind = "a checked pyc CPython did not check"
            return f"loaded from {_prefixed(cached)}, {kind} not compiled from the current source"
        # not matching, and run by what checks nothing: its code is compared below
    elif not bytecode.matches_stat(header, st.st_mtime, st.st_size):
        if checked:
            return None  # CPython would have recompiled from the source
    # CPython would have loaded this bytecode. Is it the source's own?
    elif inside(os.path.realpath(cached), root) and generation_ns is not None:
        if cst.st_mtime_ns < generation_ns:
            return f"loaded from {os.path.relpath(cached, root)}, older than the generation"
    if transformed or bytecode.transformed(cached):
        return None  # an import hook compiled it (typeguard): its header vouches, as above
    try:
        with open(source, "rb") as fh:
            code = compile(fh.read(), source, "exec", dont_inherit=True)
        if marshal.loads(data[bytecode.HEADER_SIZE :]) != code:
            return (
                f"loaded from {_prefixed(cached)}, which was not compiled from the current source"
            )
    except (SyntaxError, ValueError, EOFError, TypeError):
        return f"loaded from {_prefixed(cached)}, which was not compiled from the current source"
    return None


def _prefixed(cached: str) -> str:
    """``cached``, and how to remove it when it lies under this process's bytecode prefix
    (``PYTHONPYCACHEPREFIX``): a scrub removes a prefix's bytecode only where its own
    environment names that prefix (a prefix given to the tests alone is not the hooks')."""
    prefix = sys.pycache_prefix
    if not prefix or not inside(os.path.abspath(cached), os.path.abspath(prefix)):
        return cached
    import shlex

    return (
        f"{cached} (under the bytecode prefix {prefix}, which `genstamp stamp` scrubs when it"
        f" is given: PYTHONPYCACHEPREFIX={shlex.quote(prefix)} genstamp stamp)"
    )
