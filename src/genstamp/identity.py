"""The tree identity: the id of the tree ``git add -A && git write-tree`` would write.

Computed with libgit2 on an in-memory copy of the index: one index-to-workdir diff (the same
walk ``git status`` makes), then only the changed files are hashed. Blobs are never written;
tree objects are (as ``git write-tree`` would), so a gate can later name the paths that differ.
The index file, the work tree and the refs are left as they were.

The same walk also reports where bytecode lives, so a gate needs one walk of the tree, not two.
"""

from __future__ import annotations

import contextlib
import os
import stat
from typing import NamedTuple

import pygit2
from pygit2.enums import DeltaStatus, DiffOption, FileMode

from genstamp.errors import GenstampError
from genstamp.repo import Checkout

BYTECODE_SUFFIXES = (".pyc", ".pyo")
PYCACHE = "__pycache__"

_FLAGS = (
    DiffOption.INCLUDE_UNTRACKED
    | DiffOption.RECURSE_UNTRACKED_DIRS
    | DiffOption.INCLUDE_TYPECHANGE
    | DiffOption.SKIP_BINARY_CHECK
)


class Scan(NamedTuple):
    tree: str | None  # hex tree id; None when not asked for
    bytecode: tuple[str, ...]  # work-tree-relative paths of __pycache__ folders and *.pyc files
    changed: int  # paths that differ from the index


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
        index.read(force=True)  # this object may be shared; start from what is on disk
        flags = _FLAGS | DiffOption.INCLUDE_IGNORED if want_bytecode else _FLAGS
        diff = index.diff_to_workdir(flags=flags)
        bytecode: list[str] = []
        changed = 0
        conflicts = index.conflicts
        for delta in diff.deltas:
            status = delta.status
            path = delta.new_file.path if status != DeltaStatus.DELETED else delta.old_file.path
            if status == DeltaStatus.IGNORED:
                if is_bytecode_path(path):
                    bytecode.append(path.rstrip("/"))
                continue
            changed += 1
            if want_bytecode and status == DeltaStatus.UNTRACKED and is_bytecode_path(path):
                bytecode.append(path)
            if not want_tree:
                continue
            if conflicts is not None and status == DeltaStatus.CONFLICTED:
                with contextlib.suppress(KeyError):
                    del conflicts[path]
            entry = _workdir_entry(repo, workdir, path)
            if entry is None:
                if status != DeltaStatus.UNTRACKED:
                    index.remove(path)
            else:
                index.add(entry)
        tree = str(index.write_tree()) if want_tree else None
    except pygit2.GitError as exc:
        raise GenstampError(
            f"libgit2 could not read the work tree of {workdir}: {exc}",
            "check that `git status` works here",
        ) from exc
    finally:
        # Drop our in-memory changes so nothing else in this process can write them.
        with contextlib.suppress(pygit2.GitError):
            repo.index.read(force=True)
    return Scan(tree, tuple(bytecode), changed)


def _workdir_entry(repo: pygit2.Repository, workdir: str, path: str) -> pygit2.IndexEntry | None:
    """The index entry ``git add`` would make for ``path``, or None when it is gone."""
    full = os.path.join(workdir, path)
    try:
        st = os.lstat(full)
    except (FileNotFoundError, NotADirectoryError):
        return None
    if stat.S_ISLNK(st.st_mode):
        target = os.readlink(os.fsencode(full))
        return pygit2.IndexEntry(path, pygit2.hash(target), FileMode.LINK)
    if stat.S_ISDIR(st.st_mode):
        # A nested repository: git records its checked-out commit (a gitlink).
        head = _nested_head(full)
        return None if head is None else pygit2.IndexEntry(path.rstrip("/"), head, FileMode.COMMIT)
    if not stat.S_ISREG(st.st_mode):
        return None
    oid = repo.hashfile(full, as_path=path)
    executable = st.st_mode & stat.S_IXUSR and _filemode(repo)
    return pygit2.IndexEntry(path, oid, FileMode.BLOB_EXECUTABLE if executable else FileMode.BLOB)


def _nested_head(path: str) -> pygit2.Oid | None:
    try:
        nested = pygit2.Repository(path, flags=pygit2.enums.RepositoryOpenFlag.NO_SEARCH)
        if nested.head_is_unborn:
            return None
        target = nested.head.target
    except (pygit2.GitError, KeyError):
        return None
    return target if isinstance(target, pygit2.Oid) else None


def _filemode(repo: pygit2.Repository) -> bool:
    try:
        return bool(repo.config.get_bool("core.filemode"))
    except (KeyError, pygit2.GitError):
        return True
