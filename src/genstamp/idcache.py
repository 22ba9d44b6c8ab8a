"""The last tree identity of a checkout, kept in its git dir, and when it still holds.

A walk of the work tree answers which paths differ from the index; the tree is then made from
the index and those paths, which costs as much again on a large tree (libgit2 writes every
tree object). The record kept here says: with these settings (the index file, the settings
that shape conversion and ignoring: ``watch.settings``) and these differing paths, each as
``lstat`` found it before its bytes were read, the tree was this. A later walk that finds the
same settings and the same differing paths, each with the same ``lstat``, has found the same
tree: every other path is as the index holds it, and the index is the one that was.

With a monitor (``monitor``), the record also holds a clock taken before its walk. When the
monitor says nothing under the work tree changed since then and the settings are the same, the
tree (and the bytecode the walk found) is the record's, without a walk; when it names a few
paths, only those are walked, and the kept tree is rewritten at them (``identity``).

Kept only where it is sure. A differing path that is a folder (a nested repository: its HEAD
moves with no change to the folder) or goes through git's own conversion (an external filter
driver) keeps no differing paths at all. A differing path written less than ``_RACY_NS`` before
it was looked at marks the record ``racy``: a second write in the same timestamp tick would not
change its ``lstat``, so only the monitor (which sees every write) may vouch for it. The
monitor's answer is not taken in a checkout with ``.gitmodules`` or a gitlink (a submodule's
HEAD can live outside the work tree), nor from a watch whose configuration leaves folders out.
A record of another format or version, or one that cannot be read, is no record: the walk is
made whole, as without one.
"""

from __future__ import annotations

import json
import os
import stat
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from genstamp.atomic import read_kept
from genstamp.errors import GenstampError
from genstamp.monitor import Clock, debug
from genstamp.repo import Checkout, Place
from genstamp.typedtuple import NamedTuple
from genstamp.versioned import parse

FORMAT = "genstamp-identity-cache"
VERSION = 1
NAME = "identity-cache.json"
_RACY_NS = 2_000_000_000  # coarser file-system clocks (FAT: 2 s) tick slower than this
_SYSTEM_ATTRIBUTES = "/etc/gitattributes"  # libgit2 reads it too

Stat = tuple[int, int, int, int, int]  # mode, inode, size, mtime, ctime (ns)
Dirty = tuple[tuple[str, int, Stat | None], ...]  # path, delta status, lstat or None if gone


class Record(NamedTuple):
    tree: str
    bytecode: tuple[str, ...] | None  # what the walk found; None when it did not look
    settings: str  # the settings' key (``settings_key``)
    dirty: Dirty | None  # the differing paths; None when they cannot stand for the walk
    racy: bool  # a differing path was written too recently for its lstat to vouch for it
    clock: Clock | None  # the monitor's clock, taken before the walk
    monitor_ok: bool  # the monitor's answer may stand for a walk here


def path(checkout: Checkout | Place) -> Path:
    return checkout.state / NAME


def settings_key(checkout: Checkout) -> str:
    """The index file's stamp and the settings that shape the tree, as one string; "" (which
    no record's key may match) when the index was written too recently for its stamp to
    vouch for it."""
    from genstamp.gitwalk import file_stamp
    from genstamp.watch import settings

    now = settings(checkout)
    if now.index_file is not None and now.index_file[3] > time.time_ns() - _RACY_NS:
        return ""
    return json.dumps([now, file_stamp(_SYSTEM_ATTRIBUTES)], separators=(",", ":"))


def dirty_key(
    workdir: str, paths: Iterable[tuple[str, int]], by_git: Callable[[str], bool]
) -> tuple[Dirty | None, bool]:
    """The ``lstat`` of each differing path (``paths``: path and delta status), taken before
    the walk reads their bytes (None when they cannot stand for the walk), and whether one was
    written too recently for its ``lstat`` to vouch for its bytes."""
    now = time.time_ns()
    racy = False
    out: list[tuple[str, int, Stat | None]] = []
    for rel, status in paths:
        try:
            st = os.lstat(os.path.join(workdir, rel))
        except (FileNotFoundError, NotADirectoryError):
            out.append((rel, status, None))
            continue
        except OSError:
            return None, racy
        if not (stat.S_ISREG(st.st_mode) or stat.S_ISLNK(st.st_mode)):
            return None, racy  # a folder: a nested repository, whose HEAD moves unseen
        if stat.S_ISREG(st.st_mode) and by_git(rel):
            return None, racy  # an external filter's output is not a function of the lstat
        # Every write sets the ctime (even one that puts the mtime back).
        racy = racy or st.st_ctime_ns > now - _RACY_NS
        sig: Stat = (st.st_mode, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)
        out.append((rel, status, sig))
    # the attributes files of the folders that hold them (ignored ones too: git applies them,
    # and no walk need name them): one added, edited or removed there changes how they convert
    folders = {rel.rstrip("/").rpartition("/")[0] for rel, _, _ in out}
    for folder in sorted({f for top in folders for f in _and_above(top)}):
        rel = f"{folder}/.gitattributes" if folder else ".gitattributes"
        try:
            st = os.lstat(os.path.join(workdir, rel))
        except OSError:
            continue
        racy = racy or st.st_ctime_ns > now - _RACY_NS
        out.append(
            (rel, ATTRIBUTES, (st.st_mode, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns))
        )
    return tuple(sorted(out)), racy


ATTRIBUTES = -1  # a dirty key's entry for an attributes file above a differing path


def _and_above(folder: str) -> list[str]:
    """``folder`` (a work-tree path, "" the top) and each folder above it."""
    out = [folder]
    while folder:
        folder = folder.rpartition("/")[0]
        out.append(folder)
    return out


def load(checkout: Checkout | Place) -> Record | None:
    """The record kept for ``checkout``, or None (none, unreadable, another version)."""
    where = path(checkout)
    try:
        raw = read_kept(where)
    except OSError:
        return None
    try:
        data = parse(raw, where, FORMAT, VERSION, "identity cache", "it is remade on its own")
        clock = data["clock"]
        return Record(
            tree=str(data["tree"]),
            bytecode=None if data["bytecode"] is None else tuple(data["bytecode"]),
            settings=str(data["settings"]),
            dirty=None
            if data["dirty"] is None
            else tuple(
                (str(p), int(s), None if t is None else _stat(t)) for p, s, t in data["dirty"]
            ),
            racy=bool(data["racy"]),
            clock=None if clock is None else Clock(*(str(c) for c in clock)),
            monitor_ok=bool(data["monitor_ok"]),
        )
    except (GenstampError, KeyError, TypeError, ValueError) as exc:
        debug(__name__, "genstamp: identity cache ignored: %s", exc)
        return None


def _stat(raw: Any) -> Stat:
    mode, ino, size, mtime, ctime = (int(v) for v in raw)
    return (mode, ino, size, mtime, ctime)


def store(checkout: Checkout, record: Record, old: Record | None) -> None:
    """Keep ``record`` (unless it is ``old``); a failure to write only costs the next walk."""
    if record == old:
        return
    data = {"format": FORMAT, "version": VERSION, **record._asdict()}
    where = path(checkout)
    try:
        where.parent.mkdir(parents=True, exist_ok=True)
        # Replaced whole (no fsync: a record lost in a crash is only a longer walk).
        import tempfile  # here: the pytest co-process imports this module

        fd, tmp = tempfile.mkstemp(prefix=f".{NAME}.", suffix=".tmp", dir=where.parent)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                json.dump(data, fh, separators=(",", ":"))
            os.replace(tmp, where)
        except BaseException:
            os.unlink(tmp)
            raise
    except OSError as exc:
        debug(__name__, "genstamp: identity cache not written: %s", exc)


def counted(checkout: Checkout | Place, changed: Iterable[str]) -> list[str] | None:
    """The ``changed`` work-tree paths (the monitor's answer) that count: all but those in the
    checkout's own git dir, where it is inside the work tree (the index and the settings are
    compared apart); None when a submodule's git dir (``modules/``) changed there."""
    own = os.path.relpath(checkout.gitdir, checkout.workdir).replace(os.sep, "/")
    inside = not own.startswith("../") and own != ".."
    out = []
    for name in changed:
        if inside and (name == own or name.startswith(own + "/")):
            if name.startswith(own + "/modules/"):
                return None
            continue
        out.append(name)
    return out
