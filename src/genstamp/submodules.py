"""The submodules of a checkout and the changes their work trees hold that the commits the
superproject records for them do not (what ``dirty-submodule`` refuses). Apart from the
gate's facts: the plugin's co-process asks it at the end of every run, and must not pay for
importing the rules."""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

import pygit2
from pygit2.enums import FileStatus

from genstamp.identity import hidden_changes, sparse_leaves
from genstamp.repo import Checkout

_GITLINK_MODE = b"\x00\x00\xe0\x00"  # an index entry's mode field for a gitlink (160000)


def may_have(checkout: Checkout) -> bool:
    """Whether the checkout may have a submodule: a ``.gitmodules`` file, or an index that
    holds a gitlink entry's mode (a byte search: a false alarm costs only the full look,
    libgit2's first ``listall_submodules`` of a large tree ~10 ms)."""
    if os.environ.get("GIT_INDEX_FILE") or (checkout.workdir / ".gitmodules").exists():
        return True
    try:
        return _GITLINK_MODE in (checkout.gitdir / "index").read_bytes()
    except FileNotFoundError:
        return False  # no index: no entry
    except OSError:
        return True


def paths(checkout: Checkout) -> list[str]:
    """The submodules: those ``.gitmodules`` names and every gitlink of the index or HEAD (a
    repository added inside another without ``git submodule add`` has no ``.gitmodules``
    entry, and its work tree is tested all the same)."""
    try:
        return sorted(checkout.repo.listall_submodules(), key=len, reverse=True)
    except pygit2.GitError:
        return []


def open_nested(checkout: Checkout, sub: str) -> Checkout | None:
    folder = checkout.workdir / sub
    try:
        nested = pygit2.Repository(str(folder), flags=pygit2.enums.RepositoryOpenFlag.NO_SEARCH)
    except pygit2.GitError:
        return None  # not checked out (git submodule update not run)
    return Checkout(nested, folder.resolve(), Path(nested.path).resolve())


def dirty(checkout: Checkout, prefix: str = "") -> list[tuple[str, tuple[str, ...]]]:
    """The submodules whose work tree holds a change (modified, staged, or untracked and not
    ignored) that the commit the superproject records for them does not, at any depth: an
    edit git is told not to look at (``--skip-worktree``, ``--assume-unchanged``), a submodule
    of theirs at another commit than they record, or with changes of its own (whatever their
    ``.gitmodules`` tells git status to ignore), and a submodule's folder that holds files but
    no checkout of it (filled by hand: no clone has that content); not untracked bytecode
    (``_bytecode``). ``prefix``: where ``checkout`` lies in the superproject."""
    out: list[tuple[str, tuple[str, ...]]] = []
    for sub in sorted(paths(checkout)):
        name = f"{prefix}{sub}"
        nested = open_nested(checkout, sub)
        if nested is None:
            if _holds_files(checkout.workdir / sub):
                told = (
                    f"{name}/ holds files but no checkout of it (move them away, then "
                    f"`git submodule update --init {name}`)"
                )
                out.append((name, (told,)))
            continue
        inner = paths(nested)  # told below, each as precisely as its own
        try:
            status = nested.repo.status(untracked_files="all")
            hidden = hidden_changes(nested)
            moved = _moved_gitlinks(nested, inner)
        except pygit2.GitError as exc:
            out.append((name, (f"its status cannot be read ({exc})",)))
            continue
        changes = {
            f"{name}/{path}"
            for path, flags in status.items()
            if flags not in (FileStatus.CURRENT, FileStatus.IGNORED)
            and path not in inner
            and not (flags == FileStatus.WT_DELETED and sparse_leaves(nested.repo, path))
            and not (flags == FileStatus.WT_NEW and _bytecode(path))
        }
        changes.update(f"{name}/{path} (hidden by {option})" for path, option in hidden.items())
        changes.update(f"{name}/{path} (at another commit)" for path in moved)
        if changes:
            out.append((name, tuple(sorted(changes))))
        out.extend(dirty(nested, f"{name}/"))
    return out


def _bytecode(path: str) -> bool:
    """Whether ``path`` is bytecode Python wrote in a submodule whose project ignores none
    (running the code once, as any import with bytecode on does: ``__pycache__/m.*.pyc``): no
    change of its source. What runs of it is judged as it loads (``stale-bytecode``), and a
    scrub removes it. A ``.pyc`` elsewhere may be data (a test's fixture) or code that runs
    sourceless: a change."""
    folder, _, name = path.rpartition("/")
    return folder.rpartition("/")[2] == "__pycache__" and name.endswith((".pyc", ".pyo"))


def _holds_files(folder: Path) -> bool:
    try:
        with os.scandir(folder) as it:
            return any(True for _ in it)
    except OSError:
        return False


def _moved_gitlinks(checkout: Checkout, subs: Iterable[str]) -> list[str]:
    """Of ``checkout``'s submodules ``subs``, those checked out at another commit than its
    index records (what its status leaves out where its ``.gitmodules`` says ``ignore =
    all``), or than its HEAD commit records (one staged with `git add sub` and not committed:
    the superproject records that commit of ``checkout``, and a clone has the older one)."""
    moved = []
    index = checkout.repo.index
    try:
        recorded: pygit2.Tree | None = checkout.repo.head.peel(pygit2.Tree)
    except pygit2.GitError:
        recorded = None
    for sub in subs:
        inner = open_nested(checkout, sub)
        if inner is None or sub not in index:
            continue
        try:
            head = str(inner.repo.head.target)
        except pygit2.GitError:
            continue  # no commit checked out: its files, if any, are the status's
        try:
            committed = str(recorded[sub].id) if recorded is not None else head
        except KeyError:
            committed = head  # added since, not committed: the status says so
        if head != str(index[sub].id) or head != committed:
            moved.append(sub)
    return moved
