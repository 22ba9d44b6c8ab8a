"""Finding the repository, its work tree and genstamp's state folder inside the git dir."""

from __future__ import annotations

import os
import re
from collections.abc import Container, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from genstamp.errors import GenstampError
from genstamp.paths import gitfile_target
from genstamp.typedtuple import NamedTuple

if TYPE_CHECKING:  # pygit2 is imported where it is used: the pytest plugin runs without it
    import pygit2

STATE_DIR = "genstamp"


def path_is_ignored(repo: pygit2.Repository, rel: str) -> bool:
    """Whether git's ignore rules match ``rel`` (a path of the work tree), as libgit2's
    ``path_is_ignored`` says (the index not asked); for a path that is no UTF-8 (a name read
    with surrogateescape), which pygit2 cannot pass to libgit2, as ``git check-ignore`` says."""
    try:
        return bool(repo.path_is_ignored(rel))
    except UnicodeEncodeError:
        import subprocess

        moved = ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE")
        env = {k: v for k, v in os.environ.items() if k not in moved}
        args: list[str | bytes] = ["git", "check-ignore", "-q", "--no-index", "--"]
        args.append(os.fsencode(rel))
        try:
            proc = subprocess.run(args, cwd=repo.workdir, env=env, capture_output=True)
        except OSError:
            return False
        return proc.returncode == 0


class Checkout(NamedTuple):
    repo: pygit2.Repository
    workdir: Path  # the work tree root, resolved
    gitdir: Path  # this worktree's own git dir (.git, or .git/worktrees/NAME)

    @property
    def place(self) -> Place:
        return Place(self.workdir, self.gitdir)

    @property
    def state(self) -> Path:
        return self.place.state

    @property
    def common_state(self) -> Path:
        return self.place.common_state


class Place(NamedTuple):
    """Where a checkout is, without a repository handle: what the pytest plugin works with."""

    workdir: Path  # the work tree root, resolved
    gitdir: Path  # this worktree's own git dir, resolved

    @property
    def state(self) -> Path:
        return self.gitdir / STATE_DIR

    @property
    def common_state(self) -> Path:
        """genstamp's folder in the repository's common git dir: shared by its worktrees."""
        return common_gitdir(self.gitdir) / STATE_DIR


def common_gitdir(gitdir: Path) -> Path:
    """The common git dir of a worktree's own git dir (itself, but for a linked worktree)."""
    try:
        text = (gitdir / "commondir").read_text(encoding="utf-8").strip()
    except (OSError, UnicodeError):
        return gitdir
    return Path(os.path.realpath(gitdir / text))


def find_place(start: str | os.PathLike[str]) -> Place | None:
    """The checkout around ``start`` as git's own discovery would find it in the common case,
    in pure Python: the nearest folder holding ``.git`` (a folder, or a file naming the git
    dir). None outside any. It is a guess: whoever uses it must confirm it against
    ``open_checkout`` (``core.worktree``, ``GIT_DIR`` and the like are not looked at)."""
    top = _dotgit_top(os.fspath(start))
    if top is None:
        return None
    dotgit = top / ".git"
    if dotgit.is_dir():
        return Place(top, dotgit.resolve())
    try:
        named = gitfile_target(dotgit.read_bytes())
    except OSError:
        return None
    return None if named is None else Place(top, (top / os.fsdecode(named)).resolve())


# (the search paths last set by follow_git_environment, the ones they replaced)
_FOLLOWED: list[tuple[str, str, str]] = []


def follow_git_environment() -> None:
    """Have libgit2 read the config and attribute files git reads here: libgit2 ignores
    GIT_CONFIG_NOSYSTEM, GIT_CONFIG_GLOBAL and their kin, so its search paths are set to the
    folders that hold what git reads, where folders can say it (``gitwalk.git_search_paths``).
    Follows the environment each time (paths this set are taken back first)."""
    import pygit2
    from pygit2.enums import ConfigLevel

    from genstamp import gitwalk

    levels = (ConfigLevel.SYSTEM, ConfigLevel.XDG, ConfigLevel.GLOBAL)
    search = pygit2.settings.search_path
    now = (search[levels[0]] or "", search[levels[1]] or "", search[levels[2]] or "")
    base = _FOLLOWED[1] if _FOLLOWED and _FOLLOWED[0] == now else now
    want = gitwalk.git_search_paths(os.environ, *base)
    for level, before, after in zip(levels, now, want, strict=True):
        if after != before:
            search[level] = after
    _FOLLOWED[:] = [want, base]


def open_checkout(
    start: str | os.PathLike[str] | None = None, *, environment: bool = False
) -> Checkout:
    """Open the work tree containing ``start`` (default: the current directory).

    Without ``start`` (or with ``environment``), honours ``GIT_DIR`` / ``GIT_WORK_TREE`` as
    git does inside hooks: both relative to the folder (the current one, or ``start``: where
    the process that reads them began), which is the top of the work tree when ``GIT_DIR``
    comes alone.
    """
    import pygit2

    follow_git_environment()
    path = os.fspath(start) if start is not None else os.getcwd()
    if not os.path.isdir(path):
        raise GenstampError(f"{path} is not a folder", "run genstamp inside a git work tree")
    from_env = start is None or environment
    git_dir = os.environ.get("GIT_DIR") if from_env else None
    work_tree = os.environ.get("GIT_WORK_TREE") if from_env else None
    for attempt in (1, 2):
        try:
            repo, top = _open(path, git_dir, work_tree)
            break
        except pygit2.GitError as exc:
            if attempt == 1 and _owned_as_git_allows(path, str(exc)):
                continue  # libgit2's owner check turned off: git itself opens it (below)
            raise _open_error(path, exc) from exc
    if repo.is_bare or repo.workdir is None:
        raise GenstampError(
            f"{repo.path} is a bare repository: there is no work tree to stamp",
            "run genstamp in a checkout (git clone, or git worktree add)",
        )
    workdir = Path(repo.workdir).resolve()
    if top is not None and workdir != top and _is_linked_worktree(repo):
        raise GenstampError(
            f"the linked worktree at {top} is recorded at {workdir} by its git dir "
            f"{repo.path.rstrip('/')}: it was moved without `git worktree move`",
            f"run `git worktree repair` in {top}",
        )
    return Checkout(repo, workdir, Path(repo.path).resolve())


def _dotgit_top(path: str) -> Path | None:
    """The folder git takes as the top of the work tree: the nearest one holding ``.git``.
    A ``.git`` file that names a git dir which does not exist is an error git names too."""
    here = Path(path).resolve()
    for folder in (here, *here.parents):
        dotgit = folder / ".git"
        if dotgit.is_dir():
            return folder
        if not dotgit.is_file():
            continue
        try:
            named = gitfile_target(dotgit.read_bytes())
        except OSError:
            return folder  # unreadable: libgit2 says what is wrong with it
        if named is None:
            return folder
        target = folder / os.fsdecode(named)
        if not target.is_dir():
            if target.parent.name == "worktrees":
                remedy = (
                    f"its main worktree was moved: run `git worktree repair {folder}` in the "
                    "main worktree (or remove this folder if the main worktree is gone)"
                )
            else:
                remedy = "the repository it belonged to was moved: fix the gitdir: line"
            raise GenstampError(
                f"{dotgit} points to the git dir {target}, which does not exist", remedy
            )
        return folder
    return None


def _separate(repo: pygit2.Repository, top: Path) -> bool:
    """Whether ``repo`` is the git dir of ``top`` kept apart (``git init --separate-git-dir``):
    no ``core.worktree``, not a linked worktree's, its own work tree ``top``; libgit2, opening
    the git dir, takes the folder above it."""
    return (
        not repo.is_bare
        and "core.worktree" not in repo.config
        and not _is_linked_worktree(repo)
        and Path(repo.workdir or "").resolve() != top
        and (
            (top / ".git").is_symlink()  # a link to the git dir: libgit2 takes the link's target
            or (top / ".git").read_text(encoding="utf-8", errors="replace").startswith("gitdir: ")
        )
    )


def _is_linked_worktree(repo: pygit2.Repository) -> bool:
    gitdir = Path(repo.path)
    return gitdir.parent.name == "worktrees" and (gitdir / "commondir").is_file()


def _config_true(repo: pygit2.Repository, name: str) -> bool:
    import pygit2

    try:
        return bool(repo.config.get_bool(name))
    except (KeyError, pygit2.GitError):
        return False


def _open(
    path: str, git_dir: str | None, work_tree: str | None
) -> tuple[pygit2.Repository, Path | None]:
    """The repository ``path`` is in, and the folder whose ``.git`` names it (see
    ``open_checkout``)."""
    import pygit2
    from pygit2.enums import RepositoryOpenFlag

    top = None
    if git_dir:
        # libgit2's FROM_ENV reads GIT_DIR only without a start path, and takes a relative
        # GIT_WORK_TREE from the git dir, not from the current folder as git does.
        repo = pygit2.Repository(
            os.path.abspath(os.path.join(path, git_dir)), flags=RepositoryOpenFlag.NO_SEARCH
        )
    else:
        top = _dotgit_top(path)
        found = pygit2.discover_repository(path)
        if found is None:
            raise GenstampError(
                f"not inside a git work tree: {path}", "cd into a git checkout, or run git init"
            )
        repo = pygit2.Repository(found)
        dotgit = top / ".git" if top is not None else None
        named = dotgit is not None and (dotgit.is_file() or dotgit.is_symlink())
        if top is not None and named and _separate(repo, top):
            # as git: the folder whose .git file (or link) names the git dir
            _set_workdir(repo, str(top))
    if work_tree:
        _set_workdir(repo, os.path.abspath(os.path.join(path, work_tree)))
    elif git_dir and "core.worktree" not in repo.config and not _config_true(repo, "core.bare"):
        _set_workdir(repo, os.path.abspath(path))
    return repo, top


def _set_workdir(repo: pygit2.Repository, folder: str) -> None:
    """``folder`` as the work tree of ``repo``, where libgit2 took another (a path that is no
    UTF-8, which pygit2 cannot hand libgit2, is left as libgit2 has it where that is it)."""
    if repo.workdir and Path(repo.workdir).resolve() == Path(folder).resolve():
        return
    try:
        repo.workdir = folder
    except UnicodeEncodeError:
        raise GenstampError(
            f"libgit2 cannot be given the work tree {folder!r}: its path is no UTF-8",
            "work in a folder whose path is UTF-8",
        ) from None


def _owned_as_git_allows(path: str, message: str) -> bool:
    """Whether libgit2 refused the repository at ``path`` as owned by another user where git
    itself opens it (a ``safe.directory`` in a ``GIT_CONFIG_GLOBAL`` file libgit2 cannot be
    pointed at): libgit2's own check is then turned off for this process, git's stands."""
    import subprocess

    import pygit2
    from pygit2.enums import Option

    if "not owned by current user" not in message:
        return False
    try:
        git = subprocess.run(
            ["git", "rev-parse", "--git-dir"], cwd=path, capture_output=True, check=False
        )
    except OSError:
        return False
    if git.returncode != 0:
        return False
    pygit2.option(Option.SET_OWNER_VALIDATION, 0)
    return True


def _open_error(path: str, exc: pygit2.GitError) -> GenstampError:
    import pygit2

    message = str(exc)
    if "object format" in message:
        found = re.search(r"object format '([^']*)'", message)
        fmt = found.group(1) if found else "other than sha1"
        version = getattr(pygit2, "__version__", "?")
        return GenstampError(
            f"the repository at {path} uses {fmt} object ids (extensions.objectFormat); "
            f"the libgit2 {pygit2.LIBGIT2_VERSION} in pygit2 {version} that genstamp uses "
            "opens only sha1 repositories",
            "use genstamp in a sha1 repository: sha256 needs a libgit2 built with its "
            "experimental sha256 support",
        )
    return GenstampError(
        f"cannot open the git repository at {path}: {message}",
        "check that this is a git checkout that git itself can read",
    )


def head_id(repo: pygit2.Repository) -> str | None:
    """HEAD's commit id, or None while HEAD is unborn."""
    import pygit2

    if repo.head_is_unborn:
        return None
    try:
        return str(repo.head.target)
    except pygit2.GitError:
        return None


def nested_index(folder: str) -> Container[str] | None:
    """The paths a repository nested in the work tree (a submodule) tracks, or None when its
    index cannot be read."""
    import pygit2

    try:
        index: pygit2.Index = pygit2.Repository(
            folder, flags=pygit2.enums.RepositoryOpenFlag.NO_SEARCH
        ).index
    except (pygit2.GitError, OSError, ValueError):
        return None
    return index


def other_worktrees(checkout: Checkout) -> Iterator[Checkout]:
    """The repository's other worktrees: the main one, then the linked ones."""
    import contextlib

    import pygit2

    common = common_gitdir(checkout.gitdir)
    paths: list[str] = []
    with contextlib.suppress(pygit2.GitError, OSError):
        repo = pygit2.Repository(str(common))
        if not repo.is_bare and repo.workdir:
            paths.append(repo.workdir)
        paths += [repo.lookup_worktree(name).path for name in repo.list_worktrees()]
    here = checkout.workdir.resolve()
    for path in paths:
        try:
            if Path(path).resolve() != here and Path(path).is_dir():
                yield open_checkout(path)
        except (GenstampError, OSError):
            continue
