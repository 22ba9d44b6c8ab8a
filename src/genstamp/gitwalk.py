"""The paths of a work tree that differ from its index, as ``git status`` finds them.

git stats the tracked files on all cores (``core.preloadIndex``) where libgit2's walk takes
one, and its process needs neither pygit2 nor an index read in ours. What it reports is what
``git add -A`` would change: a kept identity (``idcache``) whose differing paths are the ones
git reports now, each with the same ``lstat``, is the tree ``git add -A && git write-tree``
would write now (the index being the one the record names); otherwise ``identity`` makes the
tree from the index and these paths, as it would from libgit2's deltas.

The walk is started as a process (``start``) and read later (``differing``), so that the
caller does other work meanwhile. The pure-Python ``repo.find_place`` guess may start it
before pygit2 is imported; it is then used only for the checkout it was started for, and only
when the index file did not change while git ran.

Any answer that is not the plain case (a submodule, a rename, an intent-to-add entry, an
untracked folder, a line of an unknown shape, anything on git's stderr, git failing) is
``None``: the caller walks the tree itself then, never less.
"""

from __future__ import annotations

import atexit
import os
from collections.abc import Mapping
from typing import TYPE_CHECKING

from genstamp.typedtuple import NamedTuple

if TYPE_CHECKING:  # imported where a walk starts: the pytest co-process imports this module
    import subprocess

# libgit2's delta statuses (pygit2.enums.DeltaStatus), which the kept record holds: the same
# path differing the same way is the same entry whichever walk found it.
DELETED = 2
MODIFIED = 3
IGNORED = 6
UNTRACKED = 7
TYPECHANGE = 8
CONFLICTED = 10
_WORKTREE = {"M": MODIFIED, "D": DELETED, "T": TYPECHANGE}

# Variables that make git read another repository, index or config than libgit2 reads (git
# sets GIT_CONFIG_PARAMETERS for `git -c … push`'s hooks; libgit2 ignores it). Which config
# files git reads (GIT_CONFIG_GLOBAL, GIT_CONFIG_NOSYSTEM …) stays the user's; where that makes
# git read other files than libgit2, git's list is not used (``reads_other_config``).
_NOT_PASSED = (
    "GIT_DIR",
    "GIT_WORK_TREE",
    "GIT_INDEX_FILE",
    "GIT_COMMON_DIR",
    "GIT_NAMESPACE",
    "GIT_OBJECT_DIRECTORY",
    "GIT_ALTERNATE_OBJECT_DIRECTORIES",
    "GIT_CONFIG_PARAMETERS",
    "GIT_CONFIG_COUNT",
    "GIT_OPTIONAL_LOCKS",
)


class Walk(NamedTuple):
    workdir: str
    gitdir: str
    index_stamp: tuple[int, int, int, int] | None  # the index file's stamp when git was started
    proc: subprocess.Popen[bytes] | None  # None: git could not be started


_STARTED: list[Walk] = []  # at most one walk started ahead of its caller


def file_stamp(path: str) -> tuple[int, int, int, int] | None:
    """A file's inode, size, mtime and ctime (what changes when it is written), or None."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


def _env(environ: Mapping[str, str]) -> dict[str, str]:
    env = {
        k: v
        for k, v in environ.items()
        if k not in _NOT_PASSED and not k.startswith(("GIT_CONFIG_KEY_", "GIT_CONFIG_VALUE_"))
    }
    env["GIT_OPTIONAL_LOCKS"] = "0"  # git status would write a refreshed index otherwise
    return env


def _truthy(value: str | None) -> bool:
    """As git reads a boolean variable, leaning to true: git takes any non-zero number as
    true and stops on a word it does not know, so only a plain false is false here."""
    return value is not None and value.strip().lower() not in ("", "0", "false", "no", "off")


# The files libgit2 looks for in the folders of each of its search paths
# (``pygit2.settings.search_path``), in the order system, XDG, global.
_LEVEL_FILES = (("gitconfig", "gitattributes"), ("config", "attributes", "ignore"), (".gitconfig",))


def _found(paths: str, name: str) -> frozenset[str]:
    """The files called ``name`` that libgit2 reads in the folders ``paths``."""
    found = (os.path.join(d, name) for d in paths.split(os.pathsep) if d)
    return frozenset(os.path.realpath(f) for f in found if os.path.exists(f))


def _file(path: str) -> frozenset[str]:
    """The file git reads when a variable names ``path`` (/dev/null: none)."""
    if not os.path.exists(path) or os.path.realpath(path) == os.path.realpath(os.devnull):
        return frozenset()
    return frozenset({os.path.realpath(path)})


def _git_reads(
    environ: Mapping[str, str], level: int, name: str, libgit2: frozenset[str]
) -> frozenset[str]:
    """The file(s) git reads in ``environ`` where libgit2 reads ``libgit2`` (the files called
    ``name`` at ``level``): git's default folders are libgit2's."""
    if (level, name) == (0, "gitconfig"):
        if _truthy(environ.get("GIT_CONFIG_NOSYSTEM")):
            return frozenset()
        system = environ.get("GIT_CONFIG_SYSTEM")
        return libgit2 if system is None else _file(system)
    if (level, name) == (0, "gitattributes") and _truthy(environ.get("GIT_ATTR_NOSYSTEM")):
        return frozenset()
    glob = environ.get("GIT_CONFIG_GLOBAL")
    if glob is not None and (level, name) in ((1, "config"), (2, ".gitconfig")):
        # git then reads that file alone where libgit2 reads ~/.gitconfig and the XDG file
        return _file(glob) if level == 2 else frozenset()
    return libgit2


def reads_other_config(environ: Mapping[str, str], system: str, xdg: str, global_: str) -> bool:
    """Whether git, in ``environ``, reads other config or attribute files than libgit2 does
    with these search paths (``pygit2.settings.search_path``: each a ``os.pathsep`` list of
    folders). libgit2 ignores GIT_CONFIG_GLOBAL, GIT_CONFIG_SYSTEM, GIT_CONFIG_NOSYSTEM,
    GIT_ATTR_NOSYSTEM and GIT_ATTR_SOURCE (``repo.follow_git_environment`` sets its search
    paths to match where folders can); git's list of differing paths would then rest on
    another ``core.excludesFile``, ``core.autocrlf`` or attributes than the tree libgit2 makes,
    so the caller walks with libgit2 (never a different tree, only a slower one)."""
    if environ.get("GIT_ATTR_SOURCE"):
        return True
    for level, paths in enumerate((system, xdg, global_)):
        for name in _LEVEL_FILES[level]:
            found = _found(paths, name)
            if found != _git_reads(environ, level, name, found):
                return True
    return False


def git_search_paths(
    environ: Mapping[str, str], system: str, xdg: str, global_: str
) -> tuple[str, str, str]:
    """libgit2's search paths (system, XDG, global) under which it reads the config and
    attribute files git reads in ``environ`` (GIT_CONFIG_NOSYSTEM: no system folder; a
    GIT_CONFIG_GLOBAL named ``.gitconfig``: its folder, and no XDG folder where that holds no
    attributes or ignore file). A level no folder list can make agree is left as given."""
    named = {0: environ.get("GIT_CONFIG_SYSTEM"), 2: environ.get("GIT_CONFIG_GLOBAL")}
    aligned = []
    for level, paths in enumerate((system, xdg, global_)):
        names = _LEVEL_FILES[level]
        want = [_git_reads(environ, level, n, _found(paths, n)) for n in names]
        candidates = [paths, ""]
        if named.get(level):
            candidates.append(os.path.dirname(os.path.abspath(named[level] or "")))
        for folders in candidates:
            if [_found(folders, n) for n in names] == want:
                aligned.append(folders)
                break
        else:
            aligned.append(paths)
    return aligned[0], aligned[1], aligned[2]


def start(workdir: str, gitdir: str) -> Walk:
    """Start ``git status`` on the work tree ``workdir`` of the git dir ``gitdir``. The index
    file's stamp is taken first: a later index is a changed stamp at the end."""
    index = file_stamp(os.path.join(gitdir, "index"))
    args = ["git", f"--git-dir={gitdir}", f"--work-tree={workdir}"]
    # No fsmonitor, no untracked cache: git looks at the files, as libgit2's walk does, and
    # its answer rests on no hook's or cache's (genstamp asks its own monitor itself).
    args += ["-c", "core.fsmonitor=false", "-c", "core.untrackedCache=false"]
    args += ["status", "--porcelain=v2", "-z"]
    args += ["--untracked-files=all", "--ignore-submodules=none", "--no-renames"]
    # ignored files (not those of an ignored folder, named once): an ignored .gitattributes
    # still applies to the files beside it, and one added or edited changes the tree
    args += ["--ignored=matching"]
    import subprocess

    try:
        proc: subprocess.Popen[bytes] | None = subprocess.Popen(
            args,
            cwd=workdir,
            env=_env(os.environ),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
    except OSError:
        proc = None
    return Walk(workdir, gitdir, index, proc)


def start_ahead(directory: str | None) -> None:
    """Start the walk for the checkout around ``directory`` (default: here) before the
    caller opens it; ``take`` hands it over when it is that checkout."""
    if os.environ.get("GIT_DIR") or os.environ.get("GIT_WORK_TREE"):
        return  # the checkout is not the one around the folder
    from genstamp.errors import GenstampError
    from genstamp.repo import find_place

    try:
        place = find_place(directory if directory is not None else os.getcwd())
    except (GenstampError, OSError):
        return  # the command opens the checkout itself, and says what is wrong with it
    if place is None or _monitored(str(place.gitdir)):
        return
    hand_over(start(str(place.workdir), str(place.gitdir)))


def hand_over(walk: Walk) -> None:
    """Leave ``walk`` for whoever takes the walk of its checkout (``take``)."""
    if not _STARTED:
        atexit.register(cancel)  # a walk nobody took does not outlive the process
    _STARTED.append(walk)


def _monitored(gitdir: str) -> bool:
    """A guess (no config parser is loaded yet): whether the repository's own config names
    genstamp's monitor, whose answer makes the walk needless when nothing changed. A wrong
    guess costs time only: the walk is then started when it is needed, or not used."""
    try:
        with open(os.path.join(gitdir, "config"), "rb") as fh:
            text = fh.read().lower()
    except OSError:
        return False
    return b"[genstamp]" in text and b"monitor" in text


def cancel() -> None:
    """Stop every walk started ahead and not taken."""
    while _STARTED:
        discard(_STARTED.pop())


def take(workdir: str, gitdir: str) -> Walk:
    """The walk started ahead for this checkout, else one started now. A walk started ahead
    for another checkout is stopped."""
    while _STARTED:
        walk = _STARTED.pop()
        if (walk.workdir, walk.gitdir) == (workdir, gitdir):
            return walk
        discard(walk)
    return start(workdir, gitdir)


def discard(walk: Walk) -> None:
    if walk.proc is not None:
        walk.proc.kill()
        walk.proc.communicate()


def differing(walk: Walk) -> list[tuple[str, int]] | None:
    """The paths git found differing from the index and how (libgit2's delta statuses), or
    None when they cannot stand for a walk (see the module's doc), or the index file changed
    while git ran."""
    if walk.proc is None:
        return None
    out, err = walk.proc.communicate()  # a second reader gets the same output
    if walk.proc.returncode != 0 or err or walk.index_stamp is None:
        return None  # or git said something: a path it could not look at (a link loop above
        # a tracked file, say), which its list leaves out where libgit2's walk names it
    if file_stamp(os.path.join(walk.gitdir, "index")) != walk.index_stamp:
        return None
    return parse(out)


# Files whose change changes what other paths mean: ignored ones among them are named too.
RULE_FILES = frozenset((".gitignore", ".gitattributes", ".gitmodules"))


def parse(out: bytes) -> list[tuple[str, int]] | None:
    """``git status --porcelain=v2 -z --no-renames --ignored=matching`` as (path, delta
    status), or None; of the ignored paths, the rule files (``RULE_FILES``) alone."""
    found: list[tuple[str, int]] = []
    for record in out.split(b"\0"):
        if not record:
            continue
        kind = record[:2]
        if kind == b"? ":
            path = os.fsdecode(record[2:])
            if path.endswith("/"):
                return None  # a folder: a nested repository
            found.append((path, UNTRACKED))
            continue
        if kind == b"1 ":
            fields = record.split(b" ", 8)
            if len(fields) != 9 or not fields[2].startswith(b"N"):
                return None  # a submodule: its HEAD and content are not a file's
            worktree = chr(fields[1][1])
            if worktree == ".":
                continue  # staged only: the work tree is as the index holds it
            status = _WORKTREE.get(worktree)
            if status is None:
                return None  # an intent-to-add entry, or what this reader does not know
            found.append((os.fsdecode(fields[8]), status))
            continue
        if kind == b"! ":
            path = os.fsdecode(record[2:])
            if path.rpartition("/")[2] in RULE_FILES:
                found.append((path, IGNORED))
            continue
        if kind == b"u ":
            fields = record.split(b" ", 10)
            if len(fields) != 11 or not fields[2].startswith(b"N"):
                return None
            found.append((os.fsdecode(fields[10]), CONFLICTED))
            continue
        return None  # a rename, an ignored path, a header: not asked for
    return found
