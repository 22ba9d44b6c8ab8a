"""The tree identity: the id of the tree ``git add -A && git write-tree`` would write.

Computed with libgit2 on an in-memory copy of the index: one index-to-workdir diff (the same
walk ``git status`` makes), then only the changed files are read. Their blobs and the tree
objects are written to the object database, as ``git add -A && git write-tree`` would (libgit2
refuses to write a tree naming an object it does not have, and a gate can later name the paths
that differ). The index file, the work tree and the refs are left as they were.

The same walk also reports where bytecode lives, so a gate needs one walk of the tree, not two.
"""

from __future__ import annotations

import contextlib
import os
import stat
import weakref
from typing import NamedTuple

import pygit2
from pygit2.enums import DeltaStatus, DiffOption, FileMode

from genstamp.errors import GenstampError
from genstamp.repo import Checkout

BYTECODE_SUFFIXES = (".pyc", ".pyo")
PYCACHE = "__pycache__"

# Repositories whose shared in-memory index a scan has changed: reloaded before the next scan
# (one index parse per scan, instead of a reload before and another after).
_CHANGED: weakref.WeakSet[pygit2.Repository] = weakref.WeakSet()

_FLAGS = (
    DiffOption.INCLUDE_UNTRACKED
    | DiffOption.RECURSE_UNTRACKED_DIRS
    | DiffOption.INCLUDE_TYPECHANGE
    | DiffOption.SKIP_BINARY_CHECK
)


class _Trust(NamedTuple):
    filemode: bool  # core.filemode: the executable bit on disk means something
    symlinks: bool  # core.symlinks: links are checked out as links


class _Unreadable:
    """A tracked path that lstat fails on for a reason other than its absence."""


_UNREADABLE = _Unreadable()


class Scan(NamedTuple):
    tree: str | None  # hex tree id; None when not asked for
    bytecode: tuple[str, ...]  # work-tree-relative paths of __pycache__ folders and *.pyc files


def is_bytecode_path(path: str) -> bool:
    name = path.rstrip("/").rsplit("/", 1)[-1]
    return name == PYCACHE or name.endswith(BYTECODE_SUFFIXES) or f"/{PYCACHE}/" in f"/{path}"


def tree_identity(checkout: Checkout) -> str:
    tree = scan(checkout).tree
    assert tree is not None
    return tree


def scan(checkout: Checkout, *, want_tree: bool = True, want_bytecode: bool = False) -> Scan:
    repo = checkout.repo
    workdir = str(checkout.workdir)
    try:
        index = repo.index
        # Start from what is on disk: reload when a scan changed this index in memory (or when
        # the file changed); a freshly opened repository has just read it.
        index.read(force=repo in _CHANGED)
        _CHANGED.add(repo)
        flags = _FLAGS | DiffOption.INCLUDE_IGNORED if want_bytecode else _FLAGS
        diff = index.diff_to_workdir(flags=flags)
        bytecode: list[str] = []
        conflicts = index.conflicts
        trust = _Trust(_config_bool(repo, "core.filemode"), _config_bool(repo, "core.symlinks"))
        parents: dict[str, bool] = {}
        removals: list[str] = []
        additions: dict[str, pygit2.IndexEntry] = {}
        unreadable: list[str] = []
        for delta in diff.deltas:
            status = delta.status
            path = delta.new_file.path if status != DeltaStatus.DELETED else delta.old_file.path
            if status == DeltaStatus.IGNORED:
                if is_bytecode_path(path):
                    bytecode.append(path.rstrip("/"))
                continue
            if status == DeltaStatus.DELETED and _skip_worktree(index, path):
                continue  # outside a sparse checkout's cone: git keeps the indexed entry
            if want_bytecode and status == DeltaStatus.UNTRACKED and is_bytecode_path(path):
                bytecode.append(path)
            if not want_tree:
                continue
            # Where the disk cannot be trusted git keeps the index's mode (stage 0, else 2, 1, 3).
            kept = None if all(trust) else _indexed_mode(index, path.rstrip("/"))
            if conflicts is not None and status == DeltaStatus.CONFLICTED:
                with contextlib.suppress(KeyError):
                    del conflicts[path]
            entry = _workdir_entry(repo, workdir, path, trust, kept, parents)
            if entry is _UNREADABLE:
                unreadable.append(path)
            elif isinstance(entry, pygit2.IndexEntry):
                additions[path.rstrip("/")] = entry
            elif status != DeltaStatus.UNTRACKED:
                removals.append(path)
        if want_tree:
            # git reports a tracked path it cannot lstat (a link loop above it, no permission)
            # and leaves its entry alone, unless something added replaces a folder above it.
            removals += [p for p in unreadable if any(d in additions for d in _leading(p))]
            # Removals first: libgit2 does not always drop `d/f` when `d` is added over it.
            for path in removals:
                if path in index:
                    index.remove(path)
            for entry in additions.values():
                index.add(entry)
        tree = str(index.write_tree()) if want_tree else None
    except (pygit2.GitError, OSError) as exc:
        raise GenstampError(
            f"libgit2 could not read the work tree of {workdir}: {exc}",
            "check that `git status` and `git add -A` work here",
        ) from exc
    return Scan(tree, tuple(bytecode))


def _workdir_entry(
    repo: pygit2.Repository,
    workdir: str,
    path: str,
    trust: _Trust,
    kept: int | None,
    parents: dict[str, bool],
) -> pygit2.IndexEntry | _Unreadable | None:
    """The index entry ``git add`` would make for ``path``, None when it is gone, or
    _UNREADABLE when git would leave the index entry as it is."""
    full = os.path.join(workdir, path)
    try:
        st = os.lstat(full)
    except (FileNotFoundError, NotADirectoryError):
        return None
    except OSError:
        return _UNREADABLE
    if not _real_parents(workdir, path.rstrip("/"), parents):
        return None  # git never looks through a symlink (or a file) in the leading path
    if stat.S_ISLNK(st.st_mode):
        target = os.readlink(os.fsencode(full))
        return pygit2.IndexEntry(path, repo.create_blob(target), FileMode.LINK)
    if stat.S_ISDIR(st.st_mode):
        # A nested repository: git records its checked-out commit (a gitlink).
        head = _nested_head(full)
        return None if head is None else pygit2.IndexEntry(path.rstrip("/"), head, FileMode.COMMIT)
    if not stat.S_ISREG(st.st_mode):
        return None
    # Clean filters applied, as `git add` does. Bytes, so that a name that is not UTF-8 survives
    # (pygit2 accepts them; its stubs say str).
    oid = repo.hashfile(os.fsencode(full), as_path=os.fsencode(path))  # type: ignore[arg-type]
    if oid not in repo.odb:  # write only what the object store lacks (no freshen per call)
        oid = repo.create_blob_fromworkdir(path)
    if not trust.symlinks and kept == FileMode.LINK:
        mode = FileMode.LINK  # a link checked out as a plain file
    elif trust.filemode:
        mode = FileMode.BLOB_EXECUTABLE if st.st_mode & stat.S_IXUSR else FileMode.BLOB
    elif kept in (FileMode.BLOB, FileMode.BLOB_EXECUTABLE):
        mode = FileMode(kept)
    else:
        mode = FileMode.BLOB
    return pygit2.IndexEntry(path, oid, mode)


def _leading(path: str) -> list[str]:
    """``a/b/c`` -> ``["a", "a/b"]``"""
    parts = path.split("/")[:-1]
    return ["/".join(parts[: n + 1]) for n in range(len(parts))]


def _real_parents(workdir: str, path: str, seen: dict[str, bool]) -> bool:
    """True when every leading folder of ``path`` is a real folder, not a link or a file."""
    parent = path.rpartition("/")[0]
    if not parent:
        return True
    known = seen.get(parent)
    if known is None:
        try:
            is_dir = stat.S_ISDIR(os.lstat(os.path.join(workdir, parent)).st_mode)
        except OSError:
            is_dir = False
        known = seen[parent] = is_dir and _real_parents(workdir, parent, seen)
    return known


def _indexed_mode(index: pygit2.Index, path: str) -> int | None:
    try:
        return int(index[path].mode)
    except KeyError:
        pass
    conflicts = index.conflicts
    if conflicts is None:
        return None
    try:
        ancestor, ours, theirs = conflicts[path]
    except KeyError:
        return None
    for entry in (ours, ancestor, theirs):
        if entry is not None:
            return int(entry.mode)
    return None


def _nested_head(path: str) -> pygit2.Oid | None:
    try:
        nested = pygit2.Repository(path, flags=pygit2.enums.RepositoryOpenFlag.NO_SEARCH)
        if nested.head_is_unborn:
            return None
        target = nested.head.target
    except (pygit2.GitError, KeyError):
        return None
    return target if isinstance(target, pygit2.Oid) else None


def _config_bool(repo: pygit2.Repository, name: str) -> bool:
    try:
        return bool(repo.config.get_bool(name))
    except (KeyError, pygit2.GitError):
        return True


_SKIP_WORKTREE = 1 << 14  # GIT_INDEX_ENTRY_SKIP_WORKTREE, in an entry's extended flags


def _skip_worktree(index: pygit2.Index, path: str) -> bool:
    """Whether the index entry for ``path`` is skip-worktree (sparse checkout). pygit2's
    IndexEntry does not carry the flag, so this reads libgit2's entry through pygit2's cffi
    bindings; without them, the entry counts as deleted (the identity then differs from git's
    in a sparse checkout only, and the gate refuses rather than accepts)."""
    try:
        from pygit2.ffi import C, ffi
    except ImportError:  # pragma: no cover - a pygit2 without its cffi module
        return False
    raw = C.git_index_get_bypath(index._index, os.fsencode(path), 0)
    return raw != ffi.NULL and bool(raw.flags_extended & _SKIP_WORKTREE)
