"""What changed in a work tree since a moment, asked of a file-system monitor (Watchman).

Asked as git's ``fsmonitor-watchman`` hook (protocol v2) asks: ``watch-project`` the work
tree, a ``clock`` taken before a walk, and later a ``query`` ``since`` that clock, which
Watchman answers after syncing with the file system (a cookie file), so every change made
before the query is in the answer. A fresh Watchman instance (a restart, a watch that was
dropped and made again, a clock it does not know) answers ``is_fresh_instance``: nothing can be
said then, and the caller walks the whole tree.

Turned on per repository with ``git config genstamp.monitor watchman``. Any error (no
``pywatchman``, no Watchman, a timeout, an answer of an unexpected shape) is ``None`` here: the
caller then walks the whole tree, never less. Git's own fsmonitor daemon is not asked: git
2.39 has none on Linux.
"""

from __future__ import annotations

import importlib
import os
from typing import Any

from genstamp.typedtuple import NamedTuple

CONFIG = "genstamp.monitor"  # git config key: "watchman" turns the monitor on
WATCHMAN = "watchman"
_TIMEOUT = 10.0  # seconds for one answer (Watchman's first crawl of a large tree included)


def debug(logger: str, message: str, *args: object) -> None:
    """A debug line on ``logger``; logging is imported only to write one (the pytest
    co-process imports this module, and pays for every import before its first answer)."""
    import logging

    logging.getLogger(logger).debug(message, *args)


class Clock(NamedTuple):
    root: str  # the folder Watchman watches (the work tree, or a folder above it)
    relative: str  # the work tree below that root ("" when it is the root)
    clock: str  # Watchman's clock, taken before the walk it stands for
    sock: str = ""  # Watchman's socket, kept: finding it runs the `watchman` command


def _client(sock: str = "") -> Any:
    """A client on Watchman's socket: ``$WATCHMAN_SOCK``, else ``sock``, else the one the
    ``watchman`` command names (which starts Watchman when it is not running)."""
    # Imported by name: an optional dependency (genstamp[watchman]), and untyped.
    pywatchman = importlib.import_module("pywatchman")
    path = os.environ.get("WATCHMAN_SOCK") or sock or None
    return pywatchman.client(timeout=_TIMEOUT, sockpath=path)


def _sock(client: Any) -> str:
    path = getattr(client, "sockpath", None)
    return str(getattr(path, "unix_domain", None) or "")


def clock(workdir: str, sock: str = "") -> Clock | None:
    """Watch ``workdir`` (as git's hook does) and take a clock now, on the socket ``sock``
    when it still answers; None on any error."""
    try:
        try:
            return _clock(_client(sock), workdir)
        except Exception:  # the kept socket may be gone (Watchman restarted elsewhere)
            if not sock:
                raise
            return _clock(_client(), workdir)
    except Exception as exc:  # a monitor can only make the walk shorter, never fail it
        debug(__name__, "genstamp: no clock from Watchman for %s: %s", workdir, exc)
        return None


# What Watchman leaves out of every answer by default (ignore_vcs): git's own folder, and those
# of other version-control systems, which hold no file of a git work tree.
_VCS = frozenset({".git", ".svn", ".hg"})


def _clock(client: Any, workdir: str) -> Clock:
    try:
        watch = client.query("watch-project", workdir)
        root = str(watch["watch"])
        relative = str(watch.get("relative_path") or "")
        # A watch whose configuration (.watchmanconfig) leaves folders out never names what
        # changes in them: its silence cannot stand for a walk.
        config = client.query("get-config", root).get("config") or {}
        left_out = [*(config.get("ignore_dirs") or ()), *(config.get("ignore_vcs") or ())]
        # ... nor one the machine's configuration of Watchman makes leave folders out of
        # every watch (`get-config` answers with the root's file alone)
        left_out += _left_out_everywhere()
        if set(left_out) - _VCS:
            raise ValueError(f"the watch of {root} leaves out {sorted(set(left_out) - _VCS)}")
        # ... and the version-control folders at its root (ignore_vcs), which lie in the work
        # tree where the watch is the work tree's: a Mercurial or Subversion folder there
        # (fixtures, a repository kept in two systems) changes unseen
        others = [] if relative else [v for v in _VCS - {".git"} if os.path.lexists(f"{root}/{v}")]
        if others:
            raise ValueError(f"the watch of {root} leaves out {sorted(others)}")
        now = client.query("clock", root, {"sync_timeout": int(_TIMEOUT * 1000)})
        return Clock(root, relative, str(now["clock"]), _sock(client))
    finally:
        client.close()


# Where Watchman reads its configuration of every watch (the server's WATCHMAN_CONFIG_FILE,
# else the file its build names: /etc/watchman.json, and its fallback)
_GLOBAL_CONFIGS = ("/etc/watchman.json", "/etc/watchman.json.default")


def _left_out_everywhere() -> list[str]:
    """The folders Watchman's global configuration leaves out of every watch (``ignore_dirs``,
    ``ignore_vcs``), from each file it may read (which one the server read is not known
    here: every one counts)."""
    import json

    out: list[str] = []
    for path in [os.environ.get("WATCHMAN_CONFIG_FILE", ""), *_GLOBAL_CONFIGS]:
        try:
            with open(path, encoding="utf-8") as fh:
                data = json.load(fh)
        except (OSError, ValueError):
            continue
        if isinstance(data, dict):
            for key in ("ignore_dirs", "ignore_vcs"):
                found = data.get(key)
                out += [str(f) for f in found] if isinstance(found, list) else []
    return out


def changed_since(since: Clock) -> list[str] | None:
    """The work-tree-relative paths Watchman saw change since ``since`` (files, links and
    folders; created, written, removed), or None when it cannot say (a fresh instance, an
    error): the caller must walk the whole tree then."""
    try:
        try:
            answer = _since(_client(since.sock), since)
        except Exception:  # the kept socket may be gone (Watchman restarted elsewhere)
            if not since.sock:
                raise
            answer = _since(_client(), since)
        if answer.get("is_fresh_instance", True):
            return None
        files = answer["files"]
        if not isinstance(files, list):
            return None
        return [os.fsdecode(name) if isinstance(name, bytes) else str(name) for name in files]
    except Exception as exc:  # a monitor can only make the walk shorter, never fail it
        debug(__name__, "genstamp: Watchman cannot say what changed since %s: %s", since.clock, exc)
        return None


def _since(client: Any, since: Clock) -> dict[str, Any]:
    try:
        query: dict[str, Any] = {
            "since": since.clock,
            "fields": ["name"],
            "empty_on_fresh_instance": True,
            "sync_timeout": int(_TIMEOUT * 1000),
        }
        if since.relative:
            query["relative_root"] = since.relative
        answer = client.query("query", since.root, query)
        return answer if isinstance(answer, dict) else {}
    finally:
        client.close()
