"""Where a file of the work tree that a tree does not hold lies: in an environment (the
installer's), git-ignored (a clean clone will not have it), or merely untracked.

Read by the gate's facts and by the plugin's co-process, so that what the plugin forecasts at
the end of a run is what ``genstamp verify`` finds. Importing it reads nothing: the gate's
rules take its names.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from genstamp.paths import environment

if TYPE_CHECKING:
    import pygit2

    from genstamp.repo import Checkout

# Where a loaded (or flagged) file that the tested tree does not hold lies in the work tree.
INSTALLED = "installed"  # in a Python environment or a site-packages: the installer's
IGNORED = "ignored"  # git-ignored: a clean clone will not have it
UNTRACKED = "untracked"  # neither (the tree holds every other file: it was not tested)
# Below a symbolic link of the work tree that leads out of it: the tree holds the link, and a
# clean clone has the link, not the files it leads to.
LINKED = "linked"
# A plain file where the tree holds a symbolic link (``core.symlinks=false`` checks a link
# out as a file holding its target; `git add` keeps the link, with the file's text for target).
AS_FILE = "file-for-link"

# Folders whose content an installer put there, wherever they are: never the checkout's code.
INSTALLER_FOLDERS = frozenset(("site-packages", "dist-packages", "__pypackages__"))


def file_for_link(root: Path, rel: str) -> bool:
    """Whether ``rel``, which the tree holds as a symbolic link, is a plain file of the work
    tree ``root`` (``AS_FILE``)."""
    path = root / rel
    return path.is_file() and not path.is_symlink()


def installed(root: Path, rel: str, venvs: dict[str, bool]) -> bool:
    """Whether the work-tree path ``rel`` is the installer's: inside a Python environment (a
    virtual or conda environment, an installation: ``paths.environment``) or a site-packages
    folder. ``venvs`` caches the answer per folder."""
    parts = rel.rstrip("/").split("/")
    if any(part in INSTALLER_FOLDERS for part in parts[:-1]):
        return True
    for n in range(1, len(parts)):
        folder = "/".join(parts[:n])
        found = venvs.get(folder)
        if found is None:
            found = venvs[folder] = environment(str(root / folder))
        if found:
            return True
    return False


def through_link(root: Path, rel: str) -> bool:
    """Whether the work-tree path ``rel`` lies below a symbolic link of the work tree that
    leads out of it (the loads of a file reached so keep the link's path)."""
    parts = rel.split("/")
    if not any((root / "/".join(parts[:n])).is_symlink() for n in range(1, len(parts))):
        return False
    real, top = os.path.realpath(root / rel), os.path.realpath(root)
    return not (real == top or real.startswith(top.rstrip(os.sep) + os.sep))


def placement(
    checkout: Checkout, paths: Iterable[str], blobs: Mapping[str, str], venvs: dict[str, bool]
) -> dict[str, str]:
    """Where each of ``paths`` that the tree (its blobs by path: ``blobs``) does not hold lies:
    INSTALLED, IGNORED, LINKED or UNTRACKED."""
    import pygit2  # the caller holds a repository: pygit2 is loaded already

    from genstamp.repo import path_is_ignored

    out: dict[str, str] = {}
    holders: dict[Path, pygit2.Repository | None] = {}
    index = checkout.repo.index
    for rel in paths:
        if rel in blobs or rel in out:
            continue
        if installed(checkout.workdir, rel, venvs):
            out[rel] = INSTALLED
        else:
            try:
                # inside a submodule the top tracks, its own rules decide (a top pattern,
                # `*_pb2.py`, does not reach into it), unless the top ignores its folder whole;
                # inside another repository kept in the work tree (a clone the top does not
                # track), the top's rules first, then its own
                found = _holder(checkout, rel, holders)
                folder = rel[: -len(found[1]) - 1] if found is not None else ""
                if found is not None and _gitlink(index, folder):
                    ignored = path_is_ignored(checkout.repo, folder + "/") or (
                        found[1] not in found[0].index  # tracked there: not ignored
                        and path_is_ignored(found[0], found[1])
                    )
                else:
                    ignored = path_is_ignored(checkout.repo, rel) or (
                        found is not None
                        and found[1] not in found[0].index
                        and path_is_ignored(found[0], found[1])
                    )
            except pygit2.GitError:
                ignored = False
            if ignored:
                out[rel] = IGNORED
            else:
                out[rel] = LINKED if through_link(checkout.workdir, rel) else UNTRACKED
    return out


def _holder(
    checkout: Checkout, rel: str, repos: dict[Path, pygit2.Repository | None]
) -> tuple[pygit2.Repository, str] | None:
    """The checked-out submodule (at any depth) whose work tree holds ``rel``, whose own ignore
    rules decide, and the path within it; None when no submodule does. ``repos`` keeps each
    folder's repository (or None) for the next path."""
    import pygit2

    parts = rel.split("/")
    for n in range(len(parts) - 1, 0, -1):
        folder = checkout.workdir.joinpath(*parts[:n])
        if folder not in repos:
            repo = None
            if (folder / ".git").exists():
                try:
                    repo = pygit2.Repository(
                        str(folder), flags=pygit2.enums.RepositoryOpenFlag.NO_SEARCH
                    )
                except pygit2.GitError:
                    repo = None
            repos[folder] = repo
        found = repos[folder]
        if found is not None:
            return found, "/".join(parts[n:])
    return None


def _in_tracked_file(rel: str, index: pygit2.Index) -> bool:
    """Whether a folder of ``rel`` is a file the index holds (an archive imported from; not a
    submodule's commit, whose files its own index tracks)."""
    cut = rel.rfind("/")
    while cut > 0:
        if rel[:cut] in index:
            return not _gitlink(index, rel[:cut])
        cut = rel.rfind("/", 0, cut)
    return False


def _gitlink(index: pygit2.Index, path: str) -> bool:
    """Whether the index holds ``path`` as a submodule's commit."""
    try:
        return path in index and index[path].mode == 0o160000
    except (KeyError, ValueError):
        return False


def ignored(checkout: Checkout, paths: Iterable[object]) -> list[str]:
    """Those of ``paths`` the work tree's identity leaves out because git ignores them: not in
    the index, not the installer's, and matched by an ignore rule (what ``genstamp verify``
    refuses as ``ignored-code``)."""
    rels = [p for p in paths if isinstance(p, str)]
    index = checkout.repo.index
    index.read(False)
    # (a member of an archive git tracks, `deps.zip/vlib/core.py`, is tracked with it)
    tracked = {p: "" for p in rels if p in index or _in_tracked_file(p, index)}
    where = placement(checkout, rels, tracked, {})
    return sorted(p for p, w in where.items() if w == IGNORED)
