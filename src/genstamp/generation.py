"""The workspace generation: a stamp kept in the worktree's git dir, never in the work tree.

The stamp alone: made (``new``), written (``write``) and read (``current``). Beginning one in a
workspace (scrub, tree identity, write) is ``genstamp.restamp``."""

from __future__ import annotations

import json
import os
import secrets
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, NamedTuple

from genstamp import __version__
from genstamp.atomic import write_atomic
from genstamp.errors import GenstampError
from genstamp.repo import Checkout, Place

FILENAME = "generation.json"
FORMAT = "genstamp-generation"
VERSION = 2  # 2 adds the history; a version 1 stamp is read as one without history
READS = (1, 2)
HISTORY = 20  # entries kept: what the last hooks did, newest last
TRIGGERS = ("manual", "post-checkout", "post-merge", "post-rewrite", "ci")


class Generation(NamedTuple):
    id: str  # 128 random bits, hex
    tree: str
    head: str | None
    created: str  # UTC, ISO 8601
    created_ns: int  # the same instant, nanoseconds since the epoch (for bytecode ages)
    trigger: str
    scrub: dict[str, Any] | None
    key: str  # per-generation secret that seals evidence against hand edits
    writer: str  # genstamp version that wrote it
    # What each recent hook (or stamp) did: {"at", "trigger", "action": "kept"|"began", "why"}
    history: tuple[dict[str, str], ...] = ()

    def public(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "tree": self.tree,
            "head": self.head,
            "created": self.created,
            "trigger": self.trigger,
            "scrub": self.scrub,
            "genstamp": self.writer,
        }


def stamp_path(checkout: Checkout | Place) -> Path:
    return checkout.state / FILENAME


def check_trigger(trigger: str) -> None:
    if trigger not in TRIGGERS:
        raise GenstampError(f"unknown trigger {trigger!r}", f"use one of: {', '.join(TRIGGERS)}")


def new(
    checkout: Checkout | Place,
    *,
    tree: str,
    head: str | None,
    trigger: str = "manual",
    scrub: dict[str, Any] | None = None,
    history: tuple[dict[str, str], ...] = (),
    why: str = "asked for",
) -> Generation:
    """A new generation of ``tree`` (not yet written), dated by the git dir's file clock."""
    check_trigger(trigger)
    try:
        now_ns = _now_ns(checkout.state)
    except OSError as exc:
        raise GenstampError(
            f"cannot write in {checkout.state}: {exc.strerror or exc}",
            "check the permissions of the git dir",
        ) from exc
    return Generation(
        id=secrets.token_hex(16),
        tree=tree,
        head=head,
        created=_iso(now_ns),
        created_ns=now_ns,
        trigger=trigger,
        scrub=scrub,
        key=secrets.token_hex(32),
        writer=__version__,
        history=noted(history, now_ns, trigger, "began", why),
    )


def noted(
    history: tuple[dict[str, str], ...], ns: int, trigger: str, action: str, why: str
) -> tuple[dict[str, str], ...]:
    """``history`` with one more entry, the oldest dropped past HISTORY entries."""
    entry = {"at": _iso(ns), "trigger": trigger, "action": action, "why": why}
    return (*history, entry)[-HISTORY:]


def kept(checkout: Checkout | Place, gen: Generation, trigger: str, why: str) -> Generation:
    """``gen`` with a history entry saying that ``trigger`` kept it, written."""
    check_trigger(trigger)
    same = gen._replace(history=noted(gen.history, time.time_ns(), trigger, "kept", why))
    write(checkout, same)
    return same


def write(checkout: Checkout | Place, gen: Generation) -> None:
    """Make ``gen`` the current generation (atomically: a reader sees the old stamp or this)."""
    payload = {"format": FORMAT, "version": VERSION, **gen._asdict()}
    payload["history"] = list(gen.history)
    data = (json.dumps(payload, indent=2, sort_keys=True) + "\n").encode()
    try:
        write_atomic(stamp_path(checkout), data)
    except OSError as exc:
        raise GenstampError(
            f"cannot write {stamp_path(checkout)}: {exc.strerror or exc}",
            "check the permissions of the git dir",
        ) from exc


def current(checkout: Checkout | Place) -> Generation | None:
    """The current generation, None when there is none; a damaged stamp is an error."""
    path = stamp_path(checkout)
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise GenstampError(
            f"cannot read the generation stamp {path}: {exc.strerror or exc}",
            "fix its permissions, or run `genstamp stamp` to begin a new generation",
        ) from exc
    return parse(raw, path)


def parse(raw: bytes, path: Path) -> Generation:
    remedy = "run `genstamp stamp` to begin a new generation"
    try:
        data = json.loads(raw.decode("utf-8"))
    # ValueError: JSONDecodeError, and an integer over Python's digit limit; RecursionError:
    # arrays nested deeper than the interpreter's stack.
    except (ValueError, RecursionError):
        what = "empty" if not raw.strip() else "not valid JSON (truncated or damaged)"
        raise GenstampError(f"the generation stamp {path} is {what}", remedy) from None
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise GenstampError(f"{path} is not a genstamp generation stamp", remedy)
    version = data.get("version")
    if version not in READS:
        raise GenstampError(
            f"the generation stamp {path} is format version {version!r}, written by genstamp "
            f"{data.get('writer', '?')}; this genstamp {__version__} reads version {VERSION}",
            "use the same genstamp version in pre-commit and in the test environment, "
            "or run `genstamp stamp` with this one",
        )
    fields = Generation._fields
    types: dict[str, tuple[type, ...]] = {
        "id": (str,), "tree": (str,), "head": (str, type(None)), "created": (str,),
        "created_ns": (int,), "trigger": (str,), "scrub": (dict, type(None)), "key": (str,),
        "writer": (str,), "history": (list,),
    }  # fmt: skip
    if version == 1:
        data["history"] = []  # version 1 kept no history
    bad = [f for f in fields if not isinstance(data.get(f, ...), types[f])]
    if bad:
        raise GenstampError(
            f"the generation stamp {path} has missing or wrong fields: {', '.join(bad)}", remedy
        )
    head = data["head"]
    if (
        not _is_hex(data["id"], 32)
        or not _is_hex(data["tree"], 40, 64)
        or (head is not None and not _is_hex(head, 40, 64))
        or not _is_hex(data["key"], 64)
    ):
        raise GenstampError(
            f"the generation stamp {path} has a malformed id, tree, head or key", remedy
        )
    history = data["history"]
    if not all(
        isinstance(e, dict) and all(isinstance(v, str) for v in e.values()) for e in history
    ):
        raise GenstampError(f"the generation stamp {path} has a malformed history", remedy)
    return Generation(**{**{f: data[f] for f in fields}, "history": tuple(history)})


def _is_hex(text: str, *lengths: int) -> bool:
    """Lowercase hex of one of ``lengths`` (``int(text, 16)`` would take "-1f", " 1f", "1_f")."""
    return len(text) in lengths and not text.strip("0123456789abcdef")


def _now_ns(folder: Path) -> int:
    """Now, by the clock that dates files: the kernel's coarse file clock can lag
    ``time.time_ns()`` by a few milliseconds, and bytecode written just after the stamp must
    not look older than it."""
    folder.mkdir(parents=True, exist_ok=True)
    wall = time.time_ns()
    fd, probe = tempfile.mkstemp(prefix=".clock.", dir=folder)
    try:
        return min(wall, os.fstat(fd).st_mtime_ns)
    finally:
        os.close(fd)
        os.unlink(probe)


def _iso(ns: int) -> str:
    dt = datetime.fromtimestamp(ns / 1e9, tz=timezone.utc)
    return dt.isoformat(timespec="microseconds").replace("+00:00", "Z")
