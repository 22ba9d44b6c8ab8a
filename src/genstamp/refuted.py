"""The trees a run failed on, in the whole repository: the newest failing run of a tree refutes
every acceptance of it that an earlier run made (a remembered verdict, the run of an ended
generation, another worktree's), whichever worktree ran it and whatever became of it since (a
worktree removed, a stamp begun, its part pruned).

Kept in the common git dir (``genstamp/refuted.json``: the trees and when, nanoseconds since
the epoch, the most recent ``LIMIT``), written atomically by the plugin when a run fails; read
by the gate for the commits a push names. A copy of the repository inherits it: a refutation
only makes the gate stricter.

A run that dies before its session ends (killed by a CI's timeout, crashed, ended by
``os._exit``) records nothing as it ends: each run says it is going on, in a file of
``genstamp/running/``, locked while it goes on and removed as it ends (``begin``, ``end``); one
no process holds is a run of its tree that did not finish, as much the newest word on it as a
failure (``unfinished``).
"""

from __future__ import annotations

import contextlib
import json
import os
import time
from collections.abc import Iterator
from pathlib import Path

from genstamp import versioned
from genstamp.atomic import write_atomic
from genstamp.errors import GenstampError
from genstamp.repo import STATE_DIR, common_gitdir
from genstamp.typedtuple import NamedTuple

FILE = "refuted.json"
RUNNING = "running"  # the folder of the runs going on (``begin``)
RUNNING_FORMAT = "genstamp-running"
FORMAT = "genstamp-refuted"
VERSION = 1
LIMIT = 500  # trees kept; the oldest refutations are dropped first


def path_of(gitdir: Path) -> Path:
    return common_gitdir(gitdir) / STATE_DIR / FILE


def trees(gitdir: Path) -> dict[str, int]:
    """Each tree a run failed on -> when the newest such run ended (ns); {} when none."""
    path = path_of(gitdir)
    remedy = f"delete {path} (earlier failures are then forgotten)"
    data = versioned.read(path, FORMAT, VERSION, "record of failed trees", remedy)
    if data is None:
        return {}
    return versioned.tree_times(data, path, remedy)


def record(gitdir: Path, tree: str, *, now_ns: int | None = None) -> None:
    """``tree`` failed now (the most recent). The record is read, changed and written by one
    process at a time (the worktrees of a repository run their tests at once: a failure
    written between another's read and write would be lost)."""
    path = path_of(gitdir)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with _locked(path):
            kept = trees(gitdir)
            kept.pop(tree, None)
            kept[tree] = time.time_ns() if now_ns is None else now_ns
            entries = list(kept.items())
            dropped: dict[str, int | None] = dict(entries[:-LIMIT])
            held = [[t, when] for t, when in entries[-LIMIT:]]
            data = {"format": FORMAT, "version": VERSION, "trees": held}
            if dropped:
                # a pass older than a failure kept no longer must not stand again
                from genstamp import verified

                verified.forget_older(gitdir, dropped)
            write_atomic(path, json.dumps(data, separators=(",", ":")).encode())
    except OSError as exc:
        raise GenstampError(f"cannot write {path}: {exc.strerror or exc}") from exc


LOCK_WAIT = 30.0  # seconds a writer waits for another before it gives up


@contextlib.contextmanager
def _locked(path: Path) -> Iterator[None]:
    """Held by one process at a time: an exclusive ``flock`` on ``<path>.lock``."""
    from genstamp import stdlib

    fcntl = stdlib.module("fcntl")  # not a checkout's fcntl.py

    with open(path.with_name(path.name + ".lock"), "ab") as fh:
        deadline = time.monotonic() + LOCK_WAIT
        while True:
            try:
                fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() > deadline:
                    raise GenstampError(
                        f"another process has held {fh.name} for {LOCK_WAIT:.0f} s",
                        "end the genstamp process that holds it, then rerun",
                    ) from None
                time.sleep(0.01)
        yield  # closing the file releases the lock


def record_failure(gitdir: Path, tree: str, *also: str) -> str | None:
    """``record`` of ``tree`` (and of the trees ``also``: the same run's tree as the gate
    compares it, without its own report file, and the tree it began with); where that cannot
    be, no remembered verdict of the repository's worktrees accepts them any longer, and the
    line returned says so (None: recorded)."""
    try:
        for each in dict.fromkeys((tree, *also)):
            record(gitdir, each)
        return None
    except GenstampError as exc:
        problem = exc
    from genstamp import verified

    forgotten = all([verified.forget_everywhere(gitdir, t) for t in dict.fromkeys((tree, *also))])
    kept = "" if forgotten else "; an earlier pass of that tree may still be taken for it"
    return (
        f"this run failed on tree {tree[:12]}, and the failure could not be recorded "
        f"({problem}){kept} — make {path_of(gitdir)} writable, then rerun the tests"
    )


class Newest(dict[str, int]):
    """Each tree whose newest run anywhere in the repository failed or did not finish -> when
    (``newest``); ``unfinished``: those whose newest word is a run that did not finish."""

    unfinished: frozenset[str] = frozenset()


def newest(gitdir: Path) -> Newest:
    """``trees`` and ``unfinished`` together, the newer of the two for each tree."""
    out = Newest(trees(gitdir))
    dead = {t: when for t, when in unfinished(gitdir).items() if when > out.get(t, -1)}
    out.update(dead)
    out.unfinished = frozenset(dead)
    return out


class Running(NamedTuple):
    """A run going on (``begin``): its file, and the descriptor this process holds a lock of
    it through (a POSIX record lock: a child it forks holds none), as long as it runs (its
    end, its death, let it go)."""

    path: Path
    fd: int
    pid: int  # the process it goes on in (a child it forks, ending, ends nothing)


def begin(gitdir: Path, tree: str) -> Running | None:
    """A run of ``tree`` is going on in this process: the file that says so, locked as long
    as the process holds it (None where it cannot be written: nothing is known of the run
    then, as before). Locked before it is in place: never seen there unheld while the run
    goes on."""
    from genstamp import stdlib

    fcntl = stdlib.module("fcntl")  # not a checkout's fcntl.py
    now = time.time_ns()
    path = common_gitdir(gitdir) / STATE_DIR / RUNNING / f"{os.getpid()}-{now}.json"
    data = {"format": RUNNING_FORMAT, "version": 1, "tree": tree, "pid": os.getpid()}
    data["began_ns"] = now
    tmp = path.with_name(f".{path.name}.tmp")
    fd = -1
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(tmp, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o644)
        os.write(fd, json.dumps(data, separators=(",", ":")).encode())
        fcntl.lockf(fd, fcntl.LOCK_EX)
        os.replace(tmp, path)
    except OSError:
        if fd >= 0:
            os.close(fd)
        with contextlib.suppress(OSError):
            tmp.unlink()
        return None
    return Running(path, fd, os.getpid())


def end(running: Running | None) -> None:
    """The run ``begin`` said is going on has ended (what it found is recorded otherwise)."""
    if running is not None and running.pid == os.getpid():
        with contextlib.suppress(OSError):
            running.path.unlink()
        with contextlib.suppress(OSError):
            os.close(running.fd)


def unfinished(gitdir: Path) -> dict[str, int]:
    """Each tree a run began on whose process ended without saying the run ended (no
    process holds its file's lock: killed, crashed, ``os._exit``; a process's end releases
    it whether or not it is reaped, in whatever pid namespace it ran) -> when the newest such
    run began. A file another version wrote, or one that cannot be read, says nothing (it
    only ever makes the gate stricter)."""
    from genstamp import stdlib

    fcntl = stdlib.module("fcntl")
    try:
        entries = list(os.scandir(common_gitdir(gitdir) / STATE_DIR / RUNNING))
    except OSError:
        return {}
    out: dict[str, int] = {}
    for entry in entries:
        if not entry.name.endswith(".json") or entry.name.startswith("."):
            continue
        try:
            with open(entry.path, "r+b") as fh:
                data = json.loads(fh.read())
                fcntl.lockf(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)  # (released as it is closed)
        except (BlockingIOError, PermissionError):
            continue  # going on still (or not to be known here: a git dir read only)
        except (OSError, ValueError):
            continue
        if not isinstance(data, dict) or data.get("format") != RUNNING_FORMAT:
            continue
        tree, began = data.get("tree"), data.get("began_ns")
        if data.get("version") != 1 or not (isinstance(tree, str) and isinstance(began, int)):
            continue
        out[tree] = max(out.get(tree, began), began)
    return out
