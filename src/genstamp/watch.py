"""Whether anything that shapes the tree identity changed since a moment, without a new walk.

The pytest co-process takes the tree at the start, waits for the tests, and must take it again
at the end. On Linux it first watches (inotify) every folder of the work tree that the walk can
enter, and notes the index and the settings that shape the tree (the configuration, the ignore
and attribute files outside the work tree); then it takes the tree at the start. At the end,
when no event names a path that counts (one that is tracked, or not ignored, or an ignore or
attribute file), and the index and those settings are as they were, the tree at the end is the
tree at the start. Anything else (an event that counts, a lost event, no inotify, a filesystem
where others' writes make no event, core.ignorecase, a nested repository whose HEAD can move
unseen, a folder that could not be watched, too many folders) means the tree is walked again:
the answer is then exactly the walk's.

What a folder watch cannot see: a file changed through a hard link in a folder that is not
watched, or through a memory map opened before the watch. The files the tests used that
have another link are compared with the tree at the end (``coprocess.through_links``); a
change through a memory map shows at the gate only where it walks the work tree (README:
Limitations).
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import os
import re
import struct
import sys

import pygit2

from genstamp.identity import IndexView, file_stamp
from genstamp.paths import config_path
from genstamp.repo import Checkout, common_gitdir, path_is_ignored
from genstamp.typedtuple import NamedTuple

IN_MODIFY = 0x2
IN_ATTRIB = 0x4
IN_CLOSE_WRITE = 0x8
IN_MOVED_FROM = 0x40
IN_MOVED_TO = 0x80
IN_CREATE = 0x100
IN_DELETE = 0x200
IN_DELETE_SELF = 0x400
IN_MOVE_SELF = 0x800
IN_UNMOUNT = 0x2000
IN_Q_OVERFLOW = 0x4000
IN_IGNORED = 0x8000
IN_ONLYDIR = 0x1000000
IN_DONT_FOLLOW = 0x2000000
IN_NONBLOCK = os.O_NONBLOCK
IN_CLOEXEC = getattr(os, "O_CLOEXEC", 0o2000000)

_MASK = (
    IN_MODIFY
    | IN_ATTRIB
    | IN_CLOSE_WRITE
    | IN_MOVED_FROM
    | IN_MOVED_TO
    | IN_CREATE
    | IN_DELETE
    | IN_DELETE_SELF
    | IN_MOVE_SELF
    | IN_ONLYDIR
    | IN_DONT_FOLLOW
)
_LOST = IN_Q_OVERFLOW | IN_UNMOUNT | IN_IGNORED | IN_DELETE_SELF | IN_MOVE_SELF
_EVENT = struct.Struct("iIII")  # struct inotify_event: wd, mask, cookie, len; then the name
_MAX_FOLDERS = 100_000  # more folders than this: walking again is cheaper than watching
_LIMIT_FILE = "/proc/sys/fs/inotify/max_user_watches"

# Settings whose change changes the tree without touching the work tree.
_CONFIG_PREFIXES = ("core.", "filter.")
# Files whose change changes what else counts: an event on one counts even when it is ignored.
_RULES = (b".gitignore", b".gitattributes")
# Filesystems on which the kernel itself makes every change, so inotify sees them all. Not so
# network and host-shared ones (nfs, cifs, 9p, virtiofs, fuse: the WSL and Docker Desktop
# mounts), where another machine's or the host's writes make no event.
_LOCAL_FILESYSTEMS = frozenset(
    {
        "ext2",
        "ext3",
        "ext4",
        "xfs",
        "btrfs",
        "tmpfs",
        "ramfs",
        "f2fs",
        "zfs",
        "overlay",
        "bcachefs",
        "jfs",
        "reiserfs",
        "nilfs2",
    }
)
_MOUNTINFO = "/proc/self/mountinfo"


class Settings(NamedTuple):
    index_file: tuple[int, int, int, int] | None  # inode, size, mtime, ctime
    config: tuple[tuple[str, str], ...]  # core.* and filter.* as libgit2 reads them now
    files: tuple[tuple[str, tuple[int, int, int, int] | None], ...]  # ignore/attribute files


class Unavailable(Exception):
    """The work tree cannot be watched here: the tree is walked again at the end."""


def settings(checkout: Checkout) -> Settings:
    """The index and the settings, as a fresh handle on the repository reads them."""
    gitdir = str(checkout.gitdir)
    fresh = pygit2.Repository(gitdir, flags=pygit2.enums.RepositoryOpenFlag.NO_SEARCH)
    config = tuple(
        sorted(
            (entry.name, str(entry.value))
            for entry in fresh.config
            if entry.name.startswith(_CONFIG_PREFIXES)
        )
    )
    common = str(common_gitdir(checkout.gitdir))
    xdg = os.environ.get("XDG_CONFIG_HOME") or os.path.expanduser("~/.config")
    named = dict(config)
    top = str(checkout.workdir)
    paths = [
        os.path.join(common, "info", "exclude"),
        os.path.join(common, "info", "attributes"),
        config_path(named.get("core.excludesfile", os.path.join(xdg, "git", "ignore")), top),
        config_path(named.get("core.attributesfile", os.path.join(xdg, "git", "attributes")), top),
        # the top's rule files, which git may ignore (a local .gitattributes listed in
        # info/exclude): then no walk names their edit, which changes how others convert
        os.path.join(top, ".gitattributes"),
        os.path.join(top, ".gitignore"),
    ]
    return Settings(
        file_stamp(os.path.join(gitdir, "index")),
        config,
        tuple((path, file_stamp(path)) for path in paths),
    )


class Watch:
    """Folder watches on one work tree (holds an inotify descriptor: ``close`` it)."""

    def __init__(self, checkout: Checkout) -> None:
        """Watch every folder the walk can enter, and note the settings; raises Unavailable."""
        if not sys.platform.startswith("linux"):
            raise Unavailable("no inotify on this system")
        libc = ctypes.CDLL(None, use_errno=True)  # the C library Python itself runs on
        self._add = libc.inotify_add_watch
        self._add.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_uint32]
        self._add.restype = ctypes.c_int
        fd = libc.inotify_init1(IN_NONBLOCK | IN_CLOEXEC)
        if fd < 0:
            raise Unavailable(f"inotify_init1: {os.strerror(ctypes.get_errno())}")
        self.fd: int | None = fd
        # What changed first, once ``unchanged`` saw it ("": nothing yet); False stays False.
        self.changed = ""
        self.checkout = checkout
        self.folders: dict[int, bytes] = {}
        try:
            _check_filesystems(str(checkout.workdir))
            with contextlib.suppress(KeyError, pygit2.GitError):
                if checkout.repo.config.get_bool("core.ignorecase"):
                    raise Unavailable("core.ignorecase: the index is not in byte order")
            # The stamp first, then the index (read again if the file changed since): an index
            # written in between is a changed stamp at the end, never an unseen one.
            self.settings = settings(checkout)
            self._index = checkout.repo.index
            self._index.read(force=False)
            self._view = IndexView(self._index)
            self._watch_tree(os.fsencode(checkout.workdir))
        except BaseException:
            self.close()
            raise

    def _watch_tree(self, top: bytes) -> None:
        # Watches count against a limit per user, shared with editors, file watchers and
        # other test runs: take at most an eighth of it, and leave the rest to them.
        self._most = _MAX_FOLDERS
        try:
            with open(_LIMIT_FILE, encoding="ascii") as fh:
                self._most = min(self._most, int(fh.read()) // 8)
        except (OSError, ValueError):
            pass
        repo = self.checkout.repo
        pending = [b""]
        while pending:
            rel = pending.pop()
            full = os.path.join(top, rel) if rel else top
            # The watch comes before the listing: whatever is added after it is an event.
            wd = self._add(self.fd, full, _MASK)
            if wd < 0:
                code = ctypes.get_errno()
                if code == errno.ENOSPC:
                    raise Unavailable("the inotify watch limit is reached")
                raise Unavailable(f"cannot watch {os.fsdecode(full)}: {os.strerror(code)}")
            self.folders[wd] = rel
            if len(self.folders) > self._most:
                raise Unavailable(f"more than {self._most} folders to watch")
            try:
                entries = list(os.scandir(full))
            except OSError as exc:
                raise Unavailable(f"cannot list {os.fsdecode(full)}: {exc.strerror}") from exc
            for entry in entries:
                name = entry.name
                if name == b".git":
                    if rel:  # a nested repository or a submodule: its HEAD moves unseen
                        raise Unavailable(f"{os.fsdecode(rel)} holds a repository")
                    continue
                try:
                    is_dir = entry.is_dir(follow_symlinks=False)
                except OSError:
                    is_dir = False
                if not is_dir:
                    continue
                child = rel + b"/" + name if rel else name
                if _ignored(repo, child) and not self._view.weight(child):
                    continue  # nothing under it can enter the tree
                pending.append(child)

    def unchanged(self) -> bool:
        """True when nothing that shapes the tree changed since the watch began: no event
        names a path that counts, none was lost, and the settings are as they were. Asked
        again, it says so for the whole time since the watch began (once False, always)."""
        if not self.changed:
            self.changed = self._change()
        return not self.changed

    def _change(self) -> str:
        """What changed first ("" when nothing did): a path of the work tree, or why the
        watch cannot tell."""
        if self.fd is None:
            return "the watch is closed"
        repo = self.checkout.repo
        while True:
            try:
                data = os.read(self.fd, 65536)
            except BlockingIOError:
                break
            except OSError as exc:
                return f"the watch failed: {exc.strerror}"
            offset = 0
            while offset < len(data):
                wd, mask, _cookie, size = _EVENT.unpack_from(data, offset)
                offset += _EVENT.size
                name = data[offset : offset + size].rstrip(b"\0")
                offset += size
                if mask & _LOST or wd not in self.folders:
                    return "events were lost"
                rel = self.folders[wd]
                if not rel and name == b".git":
                    continue
                path = rel + b"/" + name if rel else name
                if name in _RULES or self._view.weight(path) or not _ignored(repo, path):
                    # an ignore or attribute file counts even if ignored
                    return os.fsdecode(path)
        try:
            same = settings(self.checkout) == self.settings
        except (pygit2.GitError, OSError):
            same = False
        return "" if same else "the index or git's settings"

    def close(self) -> None:
        fd, self.fd = self.fd, None
        if fd is not None:
            os.close(fd)


def _check_filesystems(workdir: str) -> None:
    """Raise Unavailable unless the work tree and every mount inside it are local filesystems
    (as /proc/self/mountinfo names them)."""
    try:
        with open(_MOUNTINFO, encoding="utf-8", errors="surrogateescape") as fh:
            lines = fh.read().splitlines()
    except OSError as exc:
        raise Unavailable(f"cannot read {_MOUNTINFO}: {exc.strerror}") from exc
    here = os.path.realpath(workdir)
    best = ("", "")
    inside = []
    for line in lines:
        fields, sep, rest = line.partition(" - ")
        parts = fields.split(" ")
        if not sep or len(parts) < 5 or not rest:
            continue
        point = _unescape(parts[4])
        kind = rest.split(" ", 1)[0]
        if here == point or here.startswith(point.rstrip("/") + "/"):
            if len(point) >= len(best[0]):
                best = (point, kind)
        elif point.startswith(here.rstrip("/") + "/"):
            inside.append((point, kind))
    for point, kind in [best, *inside]:
        if kind not in _LOCAL_FILESYSTEMS:
            raise Unavailable(f"{point or here} is on a {kind or 'unknown'} filesystem")


def _unescape(field: str) -> str:
    """mountinfo writes a space, tab, newline and backslash in a path as an octal escape."""
    return re.sub(r"\\([0-7]{3})", lambda m: chr(int(m.group(1), 8)), field)


def _ignored(repo: pygit2.Repository, path: bytes) -> bool:
    try:
        return path_is_ignored(repo, os.fsdecode(path))
    except (pygit2.GitError, ValueError):
        return False
