"""Finding the repository, its work tree and genstamp's state folder inside the git dir."""

from __future__ import annotations

import os
from pathlib import Path
from typing import NamedTuple

import pygit2
from pygit2.enums import RepositoryOpenFlag

from genstamp.errors import GenstampError

STATE_DIR = "genstamp"


class Checkout(NamedTuple):
    repo: pygit2.Repository
    workdir: Path  # the work tree root, resolved
    gitdir: Path  # this worktree's own git dir (.git, or .git/worktrees/NAME)

    @property
    def state(self) -> Path:
        return self.gitdir / STATE_DIR


def open_checkout(start: str | os.PathLike[str] | None = None) -> Checkout:
    """Open the work tree containing ``start`` (default: the current directory).

    Honours ``GIT_DIR`` / ``GIT_WORK_TREE`` as git does inside hooks.
    """
    path = os.fspath(start) if start is not None else os.getcwd()
    if not os.path.isdir(path):
        raise GenstampError(f"{path} is not a folder", "run genstamp inside a git work tree")
    use_env = start is None and "GIT_DIR" in os.environ
    try:
        if use_env:
            repo = pygit2.Repository(path, flags=RepositoryOpenFlag.FROM_ENV)
        else:
            found = pygit2.discover_repository(path)
            if found is None:
                raise GenstampError(
                    f"not inside a git work tree: {path}", "cd into a git checkout, or run git init"
                )
            repo = pygit2.Repository(found)
    except pygit2.GitError as exc:
        raise GenstampError(
            f"cannot open the git repository at {path}: {exc}",
            "check that this is a git checkout that git itself can read",
        ) from exc
    if repo.is_bare or repo.workdir is None:
        raise GenstampError(
            f"{repo.path} is a bare repository: there is no work tree to stamp",
            "run genstamp in a checkout (git clone, or git worktree add)",
        )
    return Checkout(repo, Path(repo.workdir).resolve(), Path(repo.path).resolve())


def head_id(repo: pygit2.Repository) -> str | None:
    """HEAD's commit id, or None while HEAD is unborn."""
    if repo.head_is_unborn:
        return None
    try:
        return str(repo.head.target)
    except pygit2.GitError:
        return None
