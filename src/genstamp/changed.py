"""What a git command changed in the work tree, as a post-* hook can learn it cheaply.

git tells each hook something different, and pre-commit passes it on differently:

- post-checkout gets the old and new HEAD and a flag (1: a branch checkout, 0: a file
  checkout); pre-commit passes them as PRE_COMMIT_FROM_REF, PRE_COMMIT_TO_REF and
  PRE_COMMIT_CHECKOUT_TYPE. A branch checkout writes exactly the paths that differ between
  the two trees (git refuses one that would overwrite a local change it cannot carry).
- post-merge gets only a squash flag (PRE_COMMIT_IS_SQUASH_MERGE). The old head is ORIG_HEAD,
  taken only when HEAD's reflog says the last thing that moved HEAD was this merge, from
  ORIG_HEAD to where HEAD is: a stale ORIG_HEAD would name the wrong paths.
- post-rewrite gets ``amend`` or ``rebase`` (PRE_COMMIT_REWRITE_COMMAND) and old/new pairs on
  stdin, which pre-commit does not pass on; so the pairs are not used. An amend writes no
  file in the work tree. A rebase moves the work tree from ORIG_HEAD (checked against the
  branch's reflog) through every commit it makes to HEAD, and a ``rebase -x`` step may
  compile bytecode in between: the paths are those that differ between ORIG_HEAD and HEAD
  plus those any commit of HEAD not in ORIG_HEAD changed (a path the rebase changed and
  changed back is in one of those commits).

What cannot be learnt this way is ``unknown`` (with the reason), and the hook then does what
it did before issue 16: a full scrub and a full identity. That covers a file checkout (flag 0:
``git checkout -- paths`` writes paths the hook is not told, so no cheap list is sound), a
squash merge (HEAD does not move), the first checkout of a clone (no old HEAD), a reflog
that does not confirm ORIG_HEAD, and a change to a submodule's commit (its files are another
repository's).
"""

from __future__ import annotations

import os

from genstamp.errors import GenstampError
from genstamp.paths import gitfile_target
from genstamp.records import record

# This module runs in the hook's process, which must start fast (issue 16): no subprocess,
# pathlib or typing at run time (they import re, enum, threading...). Records are typed as
# NamedTuples for mypy and built by ``records.record`` at run time.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import NamedTuple

Z40 = "0" * 40
GITLINK = "160000"

if TYPE_CHECKING:

    class Operation(NamedTuple):
        trigger: str  # post-checkout, post-merge or post-rewrite
        pairs: tuple[tuple[str, str], ...]  # (old, new) commits whose trees' differences changed
        between: tuple[str, str] | None  # (old, new): also every commit of new not in old
        unknown: str  # why the changed paths cannot be known cheaply; "" when they can

    class Where(NamedTuple):
        workdir: str  # the work tree's top, symbolic links resolved
        gitdir: str  # this worktree's own git dir, absolute

    class Change(NamedTuple):
        paths: list[str]  # work-tree-relative, "/"-separated, sorted
        tree: str | None  # the tree of the commit git moved to, when a diff named it

else:
    Operation = record("Operation", "trigger pairs between unknown", module=__name__)
    Where = record("Where", "workdir gitdir", module=__name__)
    Change = record("Change", "paths tree", module=__name__)

# What can make git find another work tree or git dir than a ``.git`` in the folder it runs in.
_ELSEWHERE_ENV = ("GIT_DIR", "GIT_WORK_TREE", "GIT_COMMON_DIR")
_ELSEWHERE_CONFIG = (b"worktree", b"include")  # core.worktree, extensions.worktreeConfig, [include]


def locate(directory: str | os.PathLike[str] | None) -> Where:
    """The work tree and git dir git itself finds from ``directory`` (default: here).

    git runs a hook from the top of the work tree. There, in the common case (a ``.git``
    folder, or a ``.git`` file naming the git dir of a linked worktree or a separate git dir),
    they are read without starting git: every process a hook starts is on git's clock. Where
    anything could make git look elsewhere (GIT_DIR, GIT_WORK_TREE or GIT_COMMON_DIR set, a
    config that names a work tree or includes another file), or there is no ``.git`` here, git
    is asked (``git rev-parse``)."""
    top = os.path.realpath(os.getcwd() if directory is None else directory)
    gitdir = _plain_gitdir(top)
    if gitdir is not None:
        return Where(top, gitdir)
    out = git(directory, "rev-parse", "--show-toplevel", "--absolute-git-dir")
    found_top, found_gitdir = out.split("\n")[:2]
    return Where(found_top, found_gitdir)


def _plain_gitdir(top: str) -> str | None:
    """The git dir of the work tree whose top is ``top``, when nothing can move it; else None."""
    if any(os.environ.get(name) for name in _ELSEWHERE_ENV):
        return None
    dotgit = os.path.join(top, ".git")
    if os.path.isdir(dotgit):
        gitdir = dotgit
    else:
        try:
            with open(dotgit, "rb") as fh:
                named = gitfile_target(fh.read(65536))
        except OSError:
            return None
        if named is None:
            return None
        gitdir = os.path.realpath(os.path.join(top, os.fsdecode(named)))
    try:
        with open(os.path.join(_common(gitdir), "config"), "rb") as fh:
            config = fh.read().lower()
    except OSError:
        return None
    if any(word in config for word in _ELSEWHERE_CONFIG):
        return None
    if not os.path.isfile(os.path.join(gitdir, "HEAD")):
        return None  # not a git dir git would take
    return gitdir


def without_index(gitdir: str) -> dict[str, str]:
    """This process's environment with git's index named where there is none. ``git
    diff-tree``, ``log`` and ``ls-tree`` read the whole index when they start (8 MB, 10 ms and
    more at 100,000 files: a cost that grows with the tree) though what they print of commits
    and trees never depends on it; without one they start in the same time at any size. The
    path lies in genstamp's folder of the git dir, where nothing is ever written by that name."""
    return {**os.environ, "GIT_INDEX_FILE": os.path.join(gitdir, "genstamp", "no-index")}


def tracked(
    workdir: str | os.PathLike[str], files: list[str], gitdir: str | None = None
) -> set[str]:
    """Which of ``files`` (absolute) HEAD's tree holds, as work-tree-relative ``/`` paths.

    HEAD's tree, not the index: ``git ls-tree`` reads only the trees along those paths, where
    ``git ls-files`` would read the whole index (megabytes at 100,000 files, on every hook).
    Right after a checkout, merge or rebase the index holds HEAD's tree but for what was staged
    before and carried along: bytecode staged and never committed is not protected here."""
    rel = [os.path.relpath(f, workdir).replace(os.sep, "/") for f in files]
    env = None if gitdir is None else without_index(gitdir)
    out = git(
        workdir, "--literal-pathspecs", "ls-tree", "-z", "--name-only", "HEAD", "--", *rel, env=env
    )
    return set(out.split("\0")) - {""}


def git(
    directory: str | os.PathLike[str] | None,
    *args: str,
    stdin: str = "",
    env: dict[str, str] | None = None,
) -> str:
    """git's standard output (``git -C directory ARGS``, given ``stdin``, in ``env``, default
    this process's); GenstampError when git fails."""
    where = () if directory is None else ("-C", os.fspath(directory))
    code, out, err = run(["git", *where, *args], stdin.encode() if stdin else None, env)
    if code:
        last = err.decode("utf-8", "replace").strip().splitlines()[-1:] or ["?"]
        raise GenstampError(
            f"git {args[0]} failed: {last}",
            "check that `git status` works, then run `genstamp stamp`",
        )
    return out.decode("utf-8", "surrogateescape")


def git_output(
    root: str | os.PathLike[str], *args: str, stdin: bytes | None = None
) -> bytes | None:
    """git's output in ``root`` (read only; the variables that would point it at another
    repository, index or config left out, as ``gitwalk`` leaves them); None when it fails."""
    from genstamp.gitwalk import _env

    try:
        code, out, _ = run(["git", "-C", os.fspath(root), *args], stdin, _env(os.environ))
    except OSError:
        return None
    return out if code == 0 else None


def run(
    argv: list[str], stdin: bytes | None = None, env: dict[str, str] | None = None
) -> tuple[int, bytes, bytes]:
    """Run ``argv`` (found on PATH) to its end: its exit code, stdout and stderr. What
    ``subprocess.run(argv, input=stdin, capture_output=True)`` does, by ``posix_spawn`` and
    pipes, stdout and stderr read together (a child filling one pipe while the other is read
    would wait for ever), without importing ``subprocess`` and its ``signal``, ``threading``,
    ``selectors``... ``stdin`` is written whole before anything is read: a line or two, less
    than a pipe holds."""
    if not hasattr(os, "posix_spawnp"):  # pragma: no cover - Windows
        import subprocess

        proc = subprocess.run(argv, input=stdin, capture_output=True, check=False, env=env)
        return proc.returncode, proc.stdout, proc.stderr
    import _signal  # type: ignore[import-not-found]  # signal imports enum
    import select

    # Python ignores SIGPIPE and SIGXFSZ; a child gets them back as subprocess gives them back.
    default = tuple(getattr(_signal, n) for n in ("SIGPIPE", "SIGXFSZ") if hasattr(_signal, n))
    out_r, out_w = os.pipe()
    err_r, err_w = os.pipe()
    in_r, in_w = os.pipe() if stdin is not None else (-1, -1)
    actions = [(os.POSIX_SPAWN_DUP2, out_w, 1), (os.POSIX_SPAWN_DUP2, err_w, 2)]
    if stdin is not None:
        actions.append((os.POSIX_SPAWN_DUP2, in_r, 0))
    try:
        environ = os.environ if env is None else env
        pid = os.posix_spawnp(argv[0], argv, environ, file_actions=actions, setsigdef=default)
    except BaseException:
        for fd in (out_r, err_r, in_w):
            if fd >= 0:
                os.close(fd)
        raise
    finally:
        for fd in (out_w, err_w, in_r):
            if fd >= 0:
                os.close(fd)
    chunks: dict[int, list[bytes]] = {out_r: [], err_r: []}
    try:
        if stdin is not None:
            try:
                os.write(in_w, stdin)
            except BrokenPipeError:
                pass  # the child ended without reading it: its exit code says how
            finally:
                os.close(in_w)
        poller = select.poll()
        for fd in chunks:
            poller.register(fd, select.POLLIN)
        left = len(chunks)
        while left:
            for fd, _ in poller.poll():
                data = os.read(fd, 1 << 16)
                if data:
                    chunks[fd].append(data)
                else:  # the end of that stream
                    poller.unregister(fd)
                    left -= 1
    finally:
        for fd in chunks:
            os.close(fd)
        _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status), b"".join(chunks[out_r]), b"".join(chunks[err_r])


def operation(
    trigger: str, args: tuple[str, ...], env: Mapping[str, str], gitdir: str | os.PathLike[str]
) -> Operation:
    """What the hook ``trigger`` (given git's ``args``, or pre-commit's ``env`` when ``args``
    is empty) can say about what changed."""
    if trigger == "post-checkout":
        old, new, flag = args if len(args) == 3 else (
            env.get("PRE_COMMIT_FROM_REF", ""),
            env.get("PRE_COMMIT_TO_REF", ""),
            env.get("PRE_COMMIT_CHECKOUT_TYPE", ""),
        )  # fmt: skip
        if flag != "1":
            return _unknown(trigger, "a file checkout writes paths the hook is not told")
        if not old or set(old) == {"0"} or not new:
            return _unknown(trigger, "there is no previous HEAD")
        if set(new) == {"0"}:  # `git switch --orphan`: every tracked file removed
            return _unknown(trigger, "there is no new HEAD")
        return Operation(trigger, ((old, new),), None, "")
    if trigger == "post-merge":
        squash = args[0] if args else env.get("PRE_COMMIT_IS_SQUASH_MERGE", "")
        if squash != "0":
            return _unknown(trigger, "a squash merge does not move HEAD")
        moved = _last_move(os.path.join(gitdir, "logs", "HEAD"))
        if moved is None or not moved[2].startswith(("merge ", "pull")):
            return _unknown(trigger, "HEAD's reflog does not show the merge")
        if _read_ref(os.path.join(gitdir, "ORIG_HEAD")) != moved[0]:
            return _unknown(trigger, "ORIG_HEAD is not where the merge began")
        return Operation(trigger, ((moved[0], moved[1]),), None, "")
    command = args[0] if args else env.get("PRE_COMMIT_REWRITE_COMMAND", "")
    if command == "amend":
        return Operation(trigger, (), None, "")  # an amend writes no file in the work tree
    if command != "rebase":
        return _unknown(trigger, f"git rewrote by {command!r}")
    last = _last_move(os.path.join(gitdir, "logs", "HEAD"))
    # "<action> (finish): returning to <branch>": the action is GIT_REFLOG_ACTION's, "rebase"
    # or "rebase -i", "pull --rebase origin main" (git pull --rebase), a tool's own
    _, finished, ref = last[2].rpartition(" (finish): returning to ") if last else ("", "", "")
    if last is None or not finished:
        return _unknown(trigger, "HEAD's reflog does not show the rebase")
    branch = _last_move(os.path.join(_common(gitdir), "logs", ref))
    orig = _read_ref(os.path.join(gitdir, "ORIG_HEAD"))
    if branch is not None and orig is not None and branch[1] == orig == last[1]:
        # the rebase left the branch where it began (every commit kept as it was): its last
        # move is older than the rebase, and the work tree is the branch's as before. It
        # checked out the commit it began from all the same, and came back through its
        # commits (an `--exec` between them may have written their bytecode): their paths
        start = _rebase_start(os.path.join(gitdir, "logs", "HEAD"))
        if start is None:
            return _unknown(trigger, "HEAD's reflog does not show where the rebase began")
        return Operation(trigger, ((orig, orig),), (start, orig), "")
    if branch is None or branch[0] != orig or branch[1] != last[1]:
        return _unknown(trigger, "ORIG_HEAD is not where the rebase began")
    return Operation(trigger, ((branch[0], branch[1]),), (branch[0], branch[1]), "")


def rebase_part(trigger: str, op: Operation, gitdir: str | os.PathLike[str]) -> str:
    """``"end"`` for a rebase's post-rewrite, ``"step"`` for a hook git runs while a rebase is
    under way (its state folder present): the checkout it makes as it starts, and the
    post-rewrite of each commit it amends as it squashes or fixes up; else ``""``."""
    if op.between is not None:
        return "end"
    busy = any(os.path.isdir(os.path.join(gitdir, d)) for d in ("rebase-merge", "rebase-apply"))
    return "step" if busy else ""


def _unknown(trigger: str, why: str) -> Operation:
    return Operation(trigger, (), None, why)


def _common(gitdir: str | os.PathLike[str]) -> str:
    """The common git dir (where branch reflogs live) of a worktree's git dir."""
    try:
        with open(os.path.join(gitdir, "commondir"), encoding="utf-8") as fh:
            text = fh.read().strip()
    except OSError:
        return os.fspath(gitdir)
    return os.path.realpath(os.path.join(gitdir, text))


def _read_ref(path: str) -> str | None:
    try:
        with open(path, encoding="ascii") as fh:
            return fh.read().strip() or None
    except (OSError, UnicodeDecodeError):
        return None


def _last_move(log: str) -> tuple[str, str, str] | None:
    """The last entry of a reflog: (old, new, message)."""
    entries = _reflog_tail(log, 8192)
    return entries[-1] if entries and entries[-1][2] else None


def _rebase_start(log: str) -> str | None:
    """The commit the last rebase in HEAD's reflog checked out as it began (its ``<action>
    (start): checkout <onto>`` entry), when the reflog's tail shows it."""
    for _, new, message in reversed(_reflog_tail(log, 65536)):
        if " (start): " in message:
            return new
    return None


def _reflog_tail(log: str, size: int) -> list[tuple[str, str, str]]:
    """The entries of the last ``size`` bytes of a reflog, oldest first: (old, new, message)
    (a line cut at the start is no entry)."""
    try:
        with open(log, "rb") as f:
            f.seek(0, os.SEEK_END)
            f.seek(max(0, f.tell() - size))
            tail = f.read().decode("utf-8", "surrogateescape")
    except OSError:
        return []
    entries = []
    for line in tail.rstrip("\n").split("\n"):
        head, _, message = line.partition("\t")
        parts = head.split(" ", 2)
        if len(parts) == 3:
            entries.append((parts[0], parts[1], message))
    return entries


def changed_paths(workdir: str | os.PathLike[str], op: Operation) -> list[str] | None:
    """The work-tree paths ``op`` changed (``/``-separated, relative), both sides of a rename,
    every file of an added or deleted folder; None when a submodule's commit changed (its files
    are not listed by the superproject's diff)."""
    found = change(workdir, op)
    return None if found is None else found.paths


def change(
    workdir: str | os.PathLike[str], op: Operation, gitdir: str | None = None
) -> Change | None:
    """``changed_paths`` and the tree of the commit git moved to (the last pair's new one).
    One ``git diff-tree`` per pair, which names that commit's tree too (one process fewer
    than asking ``git rev-parse``), one ``git log`` for a rebase's commits; given the git dir,
    without the index (``without_index``)."""
    env = None if gitdir is None else without_index(gitdir)
    paths: set[str] = set()
    tree = None
    for old, new in op.pairs:
        if old == new:
            continue
        # On stdin, "NEW OLD" is NEW compared with OLD as its parent: the same paths as
        # `diff-tree OLD NEW`, after a header that --format makes NEW's tree.
        flags = ("--stdin", "--always", "--format=%T", "-r", "-z", "--raw", "--no-renames")
        raw = git(workdir, "diff-tree", *flags, stdin=f"{new} {old}\n", env=env)
        head, _, raw = raw.partition("\0")
        tree = head.strip() or None
        if not _collect(raw, paths):
            return None
    if op.between is not None:
        old, new = op.between
        log = ("log", "-z", "-m", "--raw", "--no-renames", "--format=", new, "--not", old)
        raw = git(workdir, *log, env=env)
        if not _collect(raw, paths):
            return None
    return Change(sorted(paths), tree)


def _collect(raw: str, into: set[str]) -> bool:
    """Add the paths of ``--raw -z`` output; False when a gitlink (submodule) changed."""
    fields = raw.split("\0")
    i = 0
    while i + 1 < len(fields):
        meta, path = fields[i].lstrip("\n"), fields[i + 1]
        i += 2
        if not meta.startswith(":"):
            continue
        modes = meta[1:].split(" ", 2)
        if GITLINK in modes[:2]:
            return False
        into.add(path)
    return True
