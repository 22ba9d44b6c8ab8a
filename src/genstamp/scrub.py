"""Scrub: remove the bytecode under a work tree that Python could import instead of its source.

Removes ``__pycache__`` folders (their bytecode files, then the folder once empty), legacy
``*.pyc``/``*.pyo`` files anywhere, and folders left empty by that removal (CPython would
import a leftover folder as a namespace package). Never follows symlinks, never enters ``.git``,
leaves Python environments (a folder holding ``pyvenv.cfg``, a conda environment, an
installation: ``paths.environment``) alone unless asked, and deletes nothing that is not
bytecode.
"""

from __future__ import annotations

import os
import stat
import sys

from genstamp.bytecode import PYCACHE, SUFFIXES, holds_bytecode, is_bytecode_file
from genstamp.paths import environment

# The post-* hooks scrub in a process that must start fast (issue 16): no typing at run time
# (it imports re); the records are typed as NamedTuples for mypy, built by namedtuple.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Container, Iterable
    from typing import NamedTuple

    class ScrubError(NamedTuple):
        path: str
        reason: str

    class _Result(NamedTuple):
        folders: int
        files: int
        bytes: int
        removed: tuple[str, ...]  # absolute paths, folders with a trailing "/"
        errors: tuple[ScrubError, ...]
        dry_run: bool

else:
    from collections import namedtuple

    ScrubError = namedtuple("ScrubError", "path reason")
    _Result = namedtuple("ScrubResult", "folders files bytes removed errors dry_run")


class ScrubResult(_Result):
    __slots__ = ()

    @property
    def clean(self) -> bool:
        return not self.errors

    def summary(self) -> dict[str, object]:
        return {
            "folders": self.folders,
            "files": self.files,
            "bytes": self.bytes,
            "errors": [{"path": e.path, "reason": e.reason} for e in self.errors],
            "dry_run": self.dry_run,
        }


class _Tally:
    def __init__(
        self,
        dry_run: bool,
        top: str,
        tracked: Container[str],
        nested: Callable[[str], Container[str] | None] | None,
    ) -> None:
        self.dry_run = dry_run
        # the innermost repository a path belongs to: (its work tree, the paths it tracks)
        self.owners: list[tuple[str, Container[str]]] = [(top, tracked)]
        self.nested = nested
        self.folders = 0
        self.files = 0
        self.bytes = 0
        self.removed: list[str] = []
        self.errors: list[ScrubError] = []

    def unlink(self, path: str, entry: os.DirEntry[str]) -> bool:
        top, tracked = self.owners[-1]
        if tracked and _relative(path, top) in tracked:
            return False  # committed on purpose (a test fixture, say): git's to manage, not ours
        try:
            size = entry.stat(follow_symlinks=False).st_size
        except FileNotFoundError:
            return True
        except OSError as exc:
            self.errors.append(ScrubError(path, exc.strerror or str(exc)))
            return False
        done = self._remove(os.unlink, path, path)
        if done:
            self.files += 1
            self.bytes += size
        return done is not False

    def rmdir(self, path: str) -> bool:
        done = self._remove(os.rmdir, path, path + "/")
        if done:
            self.folders += 1
        return done is not False

    def _remove(self, remove: Callable[[str], None], path: str, shown: str) -> bool | None:
        """``remove(path)`` unless a dry run: True when removed (listed as ``shown``), None
        when it was gone already, False when it cannot be (the error kept)."""
        try:
            if not self.dry_run:
                remove(path)
        except FileNotFoundError:
            return None
        except OSError as exc:
            self.errors.append(ScrubError(path, exc.strerror or str(exc)))
            return False
        self.removed.append(shown)
        return True


def _relative(path: str, top: str) -> str:
    """``path`` relative to ``top`` (a folder above it), ``/``-separated: git's form."""
    if path.startswith(top) and path[len(top) : len(top) + 1] == os.sep:
        path = path[len(top) + 1 :]
    else:
        path = os.path.relpath(path, top)
    return path.replace(os.sep, "/") if os.sep != "/" else path


def scrub(
    root: str | os.PathLike[str],
    *,
    dry_run: bool = False,
    venvs: bool = False,
    tracked: Container[str] = (),
    nested: Callable[[str], Container[str] | None] | None = None,
) -> ScrubResult:
    """Remove bytecode under ``root``; errors are collected, never raised. Paths in ``tracked``
    (work-tree-relative, ``/``-separated: git's index) are kept. ``nested(folder)`` gives what
    a nested repository (a submodule) tracks, or None when that cannot be read: then scrub
    leaves that repository alone."""
    top = os.fspath(root)
    tally = _Tally(dry_run, top, tracked, nested)
    _scrub_dir(top, tally, venvs, is_root=True)
    _scrub_prefix(top, tally, venvs)
    return ScrubResult(
        tally.folders, tally.files, tally.bytes, tuple(tally.removed), tuple(tally.errors), dry_run
    )


def _scrub_prefix(top: str, tally: _Tally, venvs: bool) -> None:
    """The bytecode CPython keeps for the work tree under this process's pycache prefix
    (``PYTHONPYCACHEPREFIX``, ``-X pycache_prefix``): ``<prefix>/<a folder's absolute
    path>/<name>.<tag>.pyc``, which runs as one in ``__pycache__`` would. Every bytecode file
    of the work tree's folders there goes (of its environments too when ``venvs``), and the
    folders that leaves empty; nothing else."""
    prefix = sys.pycache_prefix
    if not prefix:
        return
    absolute = os.path.abspath(top)
    for base in dict.fromkeys((absolute, os.path.realpath(top))):
        mirror = os.path.join(os.path.abspath(prefix), base.lstrip(os.sep))
        if os.path.islink(mirror) or not os.path.isdir(mirror):
            continue
        for here, _dirs, files in os.walk(mirror, topdown=False):
            rel = os.path.relpath(here, mirror)
            if not venvs and rel != "." and in_venv(base, os.path.join(base, rel)):
                continue
            try:
                with os.scandir(here) as it:
                    entries = {e.name: e for e in it}
            except OSError as exc:
                tally.errors.append(ScrubError(here, exc.strerror or str(exc)))
                continue
            for name in files:
                entry = entries.get(name)
                if entry is not None and is_bytecode_file(name) and not entry.is_symlink():
                    tally.unlink(os.path.join(here, name), entry)
            if not tally.dry_run and not os.listdir(here):
                tally.rmdir(here)


def _listdir(path: str, tally: _Tally) -> list[os.DirEntry[str]] | None:
    try:
        with os.scandir(path) as it:
            return list(it)
    except FileNotFoundError:
        return None
    except OSError as exc:
        tally.errors.append(ScrubError(path, exc.strerror or str(exc)))
        return None


def _scrub_dir(path: str, tally: _Tally, venvs: bool, *, is_root: bool = False) -> bool:
    """Scrub one folder; True when it ended empty *because of* what scrub removed."""
    # Iterative over the folder's children, recursive over depth: trees are shallow in practice,
    # and a pathological depth is reported as an error rather than crashing.
    entries = _listdir(path, tally)
    if entries is None:
        return False
    if not is_root:
        names = [e.name for e in entries]
        if not venvs and _environment(path, names):
            return False
        if ".git" in names:
            # A nested repository: what it tracks is its own index's to say.
            inner = tally.nested(path) if tally.nested is not None else ()
            if inner is None:
                return False
            tally.owners.append((path, inner))
            try:
                return _scrub_entries(path, entries, tally, venvs, is_root=False)
            finally:
                tally.owners.pop()
    return _scrub_entries(path, entries, tally, venvs, is_root=is_root)


def _scrub_entries(
    path: str, entries: list[os.DirEntry[str]], tally: _Tally, venvs: bool, *, is_root: bool
) -> bool:
    left = total = len(entries)
    for entry in _worth_a_look(entries):
        try:
            is_dir = entry.is_dir(follow_symlinks=False)  # False for a link to a folder
        except OSError:
            continue
        name = entry.name
        if is_dir:
            if name == ".git":
                continue
            if name == PYCACHE:
                emptied = _scrub_pycache(entry.path, tally)
            else:
                try:
                    emptied = _scrub_dir(entry.path, tally, venvs)
                except RecursionError:
                    tally.errors.append(ScrubError(entry.path, "folder tree too deep"))
                    emptied = False
            if emptied:
                left -= 1
        elif name == PYCACHE:
            # A link named __pycache__ is unlinked; what it points to is not ours.
            try:
                is_link = entry.is_symlink()
            except OSError:
                continue
            if is_link and tally.unlink(entry.path, entry):
                left -= 1
        # Outside __pycache__ only what Python imports: "x.pyc.1" there is someone's file, and
        # so is an "x.pyc" that holds no bytecode (a data file of that name).
        elif name.endswith(SUFFIXES) and (kind := _file_kind(entry)) is not None:
            if kind == _GONE or _legacy_removed(entry, tally):
                left -= 1
    if is_root or left > 0 or left == total:
        return False
    return tally.rmdir(path)


def _legacy_removed(entry: os.DirEntry[str], tally: _Tally) -> bool:
    """A legacy ``x.pyc``/``x.pyo`` (or a link to one) removed, or gone already (a racing
    scrub); one that holds no bytecode is someone's file of that name, and stays."""
    if holds_bytecode(entry.path):
        return tally.unlink(entry.path, entry)
    return not os.path.lexists(entry.path)


def _worth_a_look(entries: list[os.DirEntry[str]]) -> list[os.DirEntry[str]]:
    """The entries a folder's loop must look at: folders, and names that can be bytecode or a
    ``__pycache__``. Most entries are files that cannot be bytecode: a suffix test and the
    kind scandir read with the name (d_type: no stat) settle them here, in one pass."""
    try:
        return [e for e in entries if e.name.endswith(_NOTED) or e.is_dir(follow_symlinks=False)]
    except OSError:  # a kind only a stat could tell, and the stat failed: the loop says what
        return entries


def _scrub_pycache(path: str, tally: _Tally) -> bool:
    entries = _listdir(path, tally)
    if entries is None:
        # Gone: another scrub (a hook racing `genstamp stamp`) removed it after this one listed
        # its parent; it no longer keeps the parent from being empty.
        return not os.path.lexists(path)
    left = len(entries)
    for entry in entries:
        if is_bytecode_file(entry.name) and (kind := _file_kind(entry)) is not None:
            if kind == _GONE or tally.unlink(entry.path, entry):
                left -= 1
    if left:
        return False  # something that is not bytecode lives here: keep it, and the folder
    return tally.rmdir(path)


_FILE = "file"
_GONE = "gone"
_NOTED = (*SUFFIXES, PYCACHE)  # names a folder's loop looks at, whatever their kind


def _file_kind(entry: os.DirEntry[str]) -> str | None:
    """``_FILE`` for a file or link scrub may remove, ``_GONE`` for one that vanished after the
    folder was listed (a racing scrub removed it: it no longer keeps the folder from being
    empty), None for anything else. The kind scandir read (d_type) answers without a stat;
    only when it names neither (or the file system gives none) is the entry looked at."""
    try:
        if entry.is_file(follow_symlinks=False) or entry.is_symlink():
            return _FILE
    except OSError:
        pass
    try:
        mode = entry.stat(follow_symlinks=False).st_mode
    except FileNotFoundError:
        return _GONE
    except OSError:
        return None
    return _FILE if stat.S_ISREG(mode) or stat.S_ISLNK(mode) else None


def bytecode_of(root: str | os.PathLike[str], paths: Iterable[str]) -> list[str]:
    """The bytecode files under ``root`` that can belong to a source at one of ``paths``
    (work-tree-relative, ``/``-separated): for ``d/m.py``, the legacy ``d/m.pyc``/``d/m.pyo``
    and ``d/__pycache__/m.<tag>[.opt-N].pyc`` of every interpreter and optimization level.
    A path that is not a ``.py`` file still counts (a folder that became or stopped being a
    module, a file renamed from ``.py``): only its stem's bytecode is looked for. Lists one
    ``__pycache__`` per folder that has one; never follows symlinks."""
    top = os.fspath(root)
    stems: dict[str, set[str]] = {}
    for path in paths:
        folder, _, name = path.rpartition("/")
        stems.setdefault(folder, set()).add(name[:-3] if name.endswith(".py") else name)
    found = []
    # CPython's pycache prefix (PYTHONPYCACHEPREFIX): each folder's bytecode kept under it
    prefix = sys.pycache_prefix
    mirrors = (
        [os.path.join(os.path.abspath(prefix), b.lstrip(os.sep)) for b in _spellings(top)]
        if prefix
        else []
    )
    for folder, names in stems.items():
        base = os.path.join(top, *folder.split("/")) if folder else top
        left = _only_bytecode(base) if folder else None
        if left is not None:  # git removed every source the folder held
            found += left
            continue
        names = names | _linked_to(base, names)
        for stem in names:
            for suffix in SUFFIXES:
                legacy = os.path.join(base, stem + suffix)
                if holds_bytecode(legacy):  # a file, or a link to one, that is bytecode
                    found.append(legacy)
        caches = [os.path.join(base, PYCACHE)]
        caches += [os.path.join(m, *folder.split("/")) if folder else m for m in mirrors]
        for cache in caches:
            if os.path.islink(cache) or not os.path.isdir(cache):
                continue
            try:
                entries = os.listdir(cache)
            except OSError:
                continue
            found += [
                os.path.join(cache, entry)
                for entry in entries
                if is_bytecode_file(entry) and entry.split(".", 1)[0] in names
            ]
    return found


def _spellings(top: str) -> list[str]:
    """The work tree's folder as a process may have spelled it: absolute, and real."""
    return list(dict.fromkeys((os.path.abspath(top), os.path.realpath(top))))


def _linked_to(base: str, stems: set[str]) -> set[str]:
    """The stems of the modules in ``base`` that are symbolic links to one of ``stems``'
    sources there (``alias.py -> impl.py``): CPython dates their bytecode by the file the link
    leads to, so a change of that file makes theirs stale too."""
    try:
        with os.scandir(base) as it:
            links = [e for e in it if e.name.endswith(".py") and e.is_symlink()]
    except OSError:
        return set()
    out = set()
    for link in links:
        try:
            target = os.readlink(link.path)
        except OSError:
            continue
        target = os.path.normpath(target)
        if os.sep not in target and target.endswith(".py") and target[:-3] in stems:
            out.add(link.name[:-3])
    return out


def _only_bytecode(folder: str) -> list[str] | None:
    """Every file below ``folder`` when each is bytecode (in a ``__pycache__``, or a legacy
    ``.pyc``/``.pyo`` holding bytecode): what git left of a folder whose sources it removed,
    the bytecode of modules an earlier commit deleted too (a commit runs no hook), which
    would keep the folder importable as a namespace package. None when the folder holds
    anything else (a source, a data file, a link), or is no folder."""
    if os.path.islink(folder) or not os.path.isdir(folder):
        return None
    out: list[str] = []
    for here, dirs, files in os.walk(folder):
        cache = os.path.basename(here) == PYCACHE
        if any(os.path.islink(os.path.join(here, d)) for d in dirs):
            return None
        for name in files:
            path = os.path.join(here, name)
            if os.path.islink(path):
                return None
            bytecode = is_bytecode_file(name) if cache else name.endswith(SUFFIXES)
            if not (bytecode and (cache or holds_bytecode(path))):
                return None
            out.append(path)
    return out


def scrub_files(
    root: str | os.PathLike[str],
    files: Iterable[str],
    *,
    venvs: bool = False,
    tracked: Container[str] = (),
) -> ScrubResult:
    """Remove ``files`` (absolute, from ``bytecode_of``) and then the folders their removal
    left empty, upwards (CPython would import a leftover folder as a namespace package).
    Kept: paths in ``tracked``, and files inside a virtual environment unless ``venvs``."""
    top = os.fspath(root)
    tally = _Tally(False, top, tracked, None)
    by_folder: dict[str, set[str]] = {}
    for path in files:
        by_folder.setdefault(os.path.dirname(path), set()).add(os.path.basename(path))
    touched: set[str] = set()
    for folder, names in by_folder.items():
        if not venvs and in_venv(top, folder):
            continue
        for entry in _listdir(folder, tally) or ():
            if entry.name in names and tally.unlink(os.path.join(folder, entry.name), entry):
                touched.add(folder)
    for folder in sorted(touched, key=len, reverse=True):
        while folder != top and folder.startswith(top + os.sep):
            try:
                if os.listdir(folder) or not tally.rmdir(folder):
                    break
            except OSError:
                break
            folder = os.path.dirname(folder)
    return ScrubResult(
        tally.folders, tally.files, tally.bytes, tuple(tally.removed), tuple(tally.errors), False
    )


def in_venv(top: str, folder: str) -> bool:
    """Whether ``folder`` lies in a Python environment (``paths.environment``: a virtual or
    conda environment, an installation) below ``top``."""
    while folder != top and folder.startswith(top + os.sep):
        if environment(folder):
            return True
        folder = os.path.dirname(folder)
    return False


def _environment(folder: str, names: list[str]) -> bool:
    """``paths.environment``, asked only of a folder whose listing holds one of its marks."""
    return ("pyvenv.cfg" in names or "conda-meta" in names or "lib" in names) and environment(
        folder
    )
