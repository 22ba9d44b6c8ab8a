"""The workspace generation: a stamp kept in the worktree's git dir, never in the work tree.

The stamp alone: made (``new``), written (``write``) and read (``current``). Beginning one in a
workspace (scrub, tree identity, write) is ``genstamp.restamp``.

A post-* hook does not walk the work tree (issue 16): it records a *claim* (``pending``) that
the next reader settles. The claim says "this generation continues if the work tree, as the
hook left it, is the content it began with or the content its evidence tested; otherwise
generation ``next`` begins, of that work tree" (the reader measures it: files it finds
changed after the hook are taken as the hook left them, ``restamp.settle``). The first reader
after the hook (verify, status, the pre-push hook, the plugin at session start) settles it
with one walk and writes the decision back: ``current`` returns only settled generations, so
no consumer ever sees a claim, and a user who switches branches five times before testing
pays one walk, not five.

Two hooks without a reader between them compose: one that changed no file in the work tree
leaves the claim's outcome as it was (the work tree the reader measures is the one the first
hook would have measured); one that changed files after another hook's unsettled claim makes
the outcome "begin" whatever the reader measures (the work tree the first hook would have
compared is gone, so keeping cannot be proven: begin is the stricter answer)."""

from __future__ import annotations

import os
import time

from genstamp import __version__, jsontext, versioned
from genstamp.atomic import new_file, read_kept, write_atomic
from genstamp.errors import GenstampError, cannot_write

# The post-* hooks read and write the stamp in a process that must start fast (issue 16): no
# json, pathlib, tempfile, datetime or typing here (they import re, enum, random...); the
# records are typed as NamedTuples for mypy and built by collections.namedtuple at run time.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from pathlib import Path
    from typing import Any, NamedTuple

    from genstamp.repo import Checkout, Place

FILENAME = "generation.json"
STATE_DIR = "genstamp"  # ``repo.STATE_DIR``: genstamp's folder in the git dir
FORMAT = "genstamp-generation"
# 2 adds the history (a version 1 stamp is read as one without); 3 adds the claim a hook leaves
# for the next reader to settle (``pending``; a version 2 stamp is read as one without); 4 says
# whether each command a claim notes changed files, and how and when each retired generation
# ended (``changed``, ``ended``): a genstamp that reads 3 would settle such a claim, or keep
# such an entry, without them, so a stamp that holds them is written as 4 (``_version_of``),
# one that does not as 3, which every reader knows.
VERSION = 4
READS = (1, 2, 3, 4)
HISTORY = 20  # entries kept: what the last hooks did, newest last
RETIRED = 8  # generations ended by hooks whose evidence is kept (``Generation.retired``)
TRIGGERS = ("manual", "post-checkout", "post-merge", "post-rewrite", "ci")


if TYPE_CHECKING:

    class _Fields(NamedTuple):
        id: str  # 128 random bits, hex
        tree: str
        head: str | None
        created: str  # UTC, ISO 8601
        # For bytecode ages: bytecode written before this instant is not vouched for. The
        # instant of ``created`` when the generation began with a full scrub; a generation a
        # hook began after scrubbing only what git changed carries the previous one's
        # (bytecode of unchanged sources written since then is still the bytecode of the
        # content in the work tree).
        created_ns: int
        trigger: str
        scrub: dict[str, Any] | None
        key: str  # per-generation secret that seals evidence against hand edits
        writer: str  # genstamp version that wrote it last
        # What each recent hook (or stamp) did: {"at", "trigger", "action": "kept"|"began",
        # "why"}
        history: tuple[dict[str, str], ...] = ()
        # A hook's claim, until a reader settles it: {"next": {id, key, created, created_ns,
        # trigger, head, scrub}, "may_keep": bool, "notes": [{"at", "trigger"}, ...]}
        pending: dict[str, Any] | None = None
        # The generations a hook's checkout, merge or rewrite ended, newest last (RETIRED):
        # {"id", "key", "tree", "created", "created_ns", "trigger"}. Their kept parts still
        # vouch for the trees they tested when a commit of one is pushed (``facts.retired``).
        retired: tuple[dict[str, Any], ...] = ()

else:
    from collections import namedtuple

    _Fields = namedtuple(
        "Generation",
        "id tree head created created_ns trigger scrub key writer history pending retired",
        defaults=((), None, ()),
    )


class Generation(_Fields):
    __slots__ = ()

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


def stamp_in(gitdir: str) -> str:
    """``stamp_path`` of the checkout whose (own) git dir is ``gitdir``, without a ``Place``
    (``repo`` imports pathlib and re, which a hook process does without)."""
    return os.path.join(gitdir, STATE_DIR, FILENAME)


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
    retired: tuple[dict[str, Any], ...] = (),
) -> Generation:
    """A new generation of ``tree`` (not yet written), dated by the git dir's file clock."""
    check_trigger(trigger)
    try:
        ns = now_ns(checkout.state)
    except OSError as exc:
        raise GenstampError(
            f"cannot write in {checkout.state}: {exc.strerror or exc}",
            cannot_write(exc, os.fspath(checkout.state)) or "check the permissions of the git dir",
        ) from exc
    return Generation(
        id=_token(16),
        tree=tree,
        head=head,
        created=_iso(ns),
        created_ns=ns,
        trigger=trigger,
        scrub=scrub,
        key=_token(32),
        writer=__version__,
        history=noted(history, ns, trigger, "began", why),
        retired=retired,
    )


def retiring(
    gen: Generation, *, changed: bool = True, ended: str | None = None
) -> tuple[dict[str, Any], ...]:
    """``gen.retired`` with ``gen`` itself added: what a generation a hook begins after ``gen``
    carries (``genstamp stamp`` carries none: it vouches for nothing done before it).
    ``changed``: whether git changed files as it ended (not so when only the work tree's own
    edits, made before a `git checkout -b`, made it end: a run then in progress tested what
    the work tree held all along); ``ended``: when (ISO 8601), where a hook's claim says it
    began to end before the generation after it began (``claim_ended``)."""
    mine = {
        "id": gen.id,
        "key": gen.key,
        "tree": gen.tree,
        "created": gen.created,
        "created_ns": gen.created_ns,
        "trigger": gen.trigger,
        "changed": changed,
    }
    if ended is not None:
        mine["ended"] = ended
    return (*gen.retired, mine)[-RETIRED:]


def as_retired(entry: dict[str, Any]) -> Generation:
    """A retired generation, to judge its evidence as it would have been judged then."""
    return Generation(
        id=entry["id"],
        tree=entry["tree"],
        head=None,
        created=entry["created"],
        created_ns=entry["created_ns"],
        trigger=entry["trigger"],
        scrub=None,
        key=entry["key"],
        writer="",
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
    write_at(stamp_path(checkout), gen)


def write_at(path: str | os.PathLike[str], gen: Generation, *, sync: bool = True) -> None:
    """``write``, given the stamp's path (a hook knows it without a ``Checkout``); ``sync``
    as ``atomic.write_atomic``'s."""
    # the genstamp writing this format names it (a stamp kept or claimed by another version's
    # hook is that version's file: a line refusing it names who wrote it)
    payload = {
        "format": FORMAT,
        "version": _version_of(gen),
        **gen._asdict(),
        "writer": __version__,
    }
    payload["history"] = list(gen.history)
    payload["retired"] = list(gen.retired)
    data = (jsontext.dumps(payload) + "\n").encode()
    try:
        write_atomic(path, data, sync=sync)
    except OSError as exc:
        raise GenstampError(
            f"cannot write {os.fspath(path)}: {exc.strerror or exc}",
            cannot_write(exc, os.path.dirname(os.fspath(path)))
            or "check the permissions of the git dir",
        ) from exc


def current(checkout: Checkout | Place, tree: str | None = None) -> Generation | None:
    """The current generation, None when there is none; a damaged stamp is an error. A hook's
    claim is settled first (a walk of the work tree, written back; ``tree``, the work tree's
    identity the caller has just taken, stands for the walk), so what is returned is always a
    decided generation."""
    gen = stored(checkout)
    if gen is None or gen.pending is None:
        return gen
    from genstamp import restamp  # the walk: pygit2 and the identity, never on a hook's path

    return restamp.settle(checkout, tree)


def _version_of(gen: Generation) -> int:
    """The first format version whose every reader knows what ``gen`` holds."""
    claim = gen.pending
    told = claim is not None and (
        "changed" in claim or any("changed" in n for n in claim.get("notes", ()))
    )
    told = told or any("changed" in r or "ended" in r for r in gen.retired)
    return VERSION if told else 3


def changed_files(claim: dict[str, Any]) -> bool:
    """Whether the commands a claim notes changed files: as it says, or, a claim of a genstamp
    before that (format 3), as the paths its hook counted say (``scrub``'s ``paths``; not
    known: they did)."""
    said = claim.get("changed")
    if isinstance(said, bool):
        return said
    scrub = claim["next"].get("scrub")
    paths = scrub.get("paths") if isinstance(scrub, dict) else None
    return not (isinstance(paths, int) and paths == 0)


def stored(checkout: Checkout | Place) -> Generation | None:
    """The stamp as written, a hook's claim unsettled; None when there is none."""
    return read(checkout)[0]


class OtherFormat(GenstampError):
    """A stamp of a format version this genstamp does not read: another genstamp's."""


class NewerStamp(OtherFormat):
    """A stamp of a later format version than this genstamp reads: another genstamp's (the
    test environment's newer one, beside pre-commit's older hooks), left as it is."""


def read(checkout: Checkout | Place) -> tuple[Generation | None, bytes]:
    """The stamp as written and its bytes (what a settler compares before it writes back)."""
    return read_at(stamp_path(checkout))


def read_at(path: str | os.PathLike[str]) -> tuple[Generation | None, bytes]:
    """``read``, given the stamp's path (a hook knows it without a ``Checkout``)."""
    try:
        raw = read_kept(path)
    except FileNotFoundError:
        return None, b""
    except OSError as exc:
        raise GenstampError(
            f"cannot read the generation stamp {os.fspath(path)}: {exc.strerror or exc}",
            "fix its permissions, or run `genstamp stamp` to begin a new generation",
        ) from exc
    return parse(raw, path), raw


def parse(raw: bytes, path: str | os.PathLike[str]) -> Generation:
    remedy = "run `genstamp stamp` to begin a new generation"
    path = os.fspath(path)
    try:
        data = jsontext.loads(raw.decode("utf-8"))
    # ValueError: JSONDecodeError, and an integer over Python's digit limit; RecursionError:
    # arrays nested deeper than the interpreter's stack.
    except (ValueError, RecursionError):
        what = "empty" if not raw.strip() else "not valid JSON (truncated or damaged)"
        raise GenstampError(f"the generation stamp {path} is {what}", remedy) from None
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise GenstampError(f"{path} is not a genstamp generation stamp", remedy)
    version = data.get("version")
    if not versioned.matches(version, *READS):
        newer = isinstance(version, int) and not isinstance(version, bool) and version > VERSION
        raise (NewerStamp if newer else OtherFormat)(
            f"the generation stamp {path} is format version {version!r}, written by genstamp "
            f"{data.get('writer', '?')}; this genstamp {__version__} reads version {VERSION}",
            "use the same genstamp version in pre-commit and in the test environment, "
            "or run `genstamp stamp` with this one",
        )
    fields = [f for f in Generation._fields if f != "retired"]  # optional: read below
    types: dict[str, tuple[type, ...]] = {
        "id": (str,), "tree": (str,), "head": (str, type(None)), "created": (str,),
        "created_ns": (int,), "trigger": (str,), "scrub": (dict, type(None)), "key": (str,),
        "writer": (str,), "history": (list,), "pending": (dict, type(None)),
    }  # fmt: skip
    if version == 1:
        data["history"] = []  # version 1 kept no history
    if version in (1, 2):
        data["pending"] = None  # nor a claim
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
    if data["pending"] is not None and not _is_claim(data["pending"]):
        raise GenstampError(f"the generation stamp {path} has a malformed claim", remedy)
    # A stamp of a genstamp before ``retired`` has none (the field is optional in version 3;
    # a genstamp that does not know it drops it when it writes, and vouches for less).
    retired = data.get("retired", [])
    if not isinstance(retired, list) or not all(_is_retired(r) for r in retired):
        raise GenstampError(
            f"the generation stamp {path} has a malformed list of ended generations", remedy
        )
    return Generation(
        **{**{f: data[f] for f in fields}, "history": tuple(history)},
        retired=tuple(retired),
    )


def _is_retired(entry: object) -> bool:
    return (
        isinstance(entry, dict)
        and _is_hex(entry.get("id", ""), 32)
        and _is_hex(entry.get("key", ""), 64)
        and _is_hex(entry.get("tree", ""), 40, 64)
        and isinstance(entry.get("created"), str)
        and isinstance(entry.get("created_ns"), int)
        and entry.get("trigger") in TRIGGERS
    )


def _is_claim(claim: dict[str, Any]) -> bool:
    nxt, notes = claim.get("next"), claim.get("notes")
    return (
        isinstance(nxt, dict)
        and _is_hex(nxt.get("id", ""), 32)
        and _is_hex(nxt.get("key", ""), 64)
        and isinstance(nxt.get("created"), str)
        and isinstance(nxt.get("created_ns"), int)
        and nxt.get("trigger") in TRIGGERS
        and (nxt.get("head") is None or _is_hex(nxt.get("head", ""), 40, 64))
        and isinstance(nxt.get("scrub"), (dict, type(None)))
        and isinstance(claim.get("may_keep"), bool)
        and isinstance(claim.get("changed", False), bool)  # a claim before it has none
        and isinstance(notes, list)
        and all(isinstance(n, dict) and all(isinstance(v, str) for v in n.values()) for n in notes)
        and (
            "before_rebase" not in claim
            or claim["before_rebase"] is None
            or (isinstance(claim["before_rebase"], dict) and _is_claim(claim["before_rebase"]))
        )
    )


def claimed(
    gen: Generation,
    *,
    trigger: str,
    changed: bool,
    head: str | None,
    scrub: dict[str, Any] | None,
    now_ns: int,
    rebase: str = "",
) -> Generation:
    """``gen`` with a hook's claim added (see the module's docstring): ``changed`` says whether
    git's command changed any file in the work tree. ``rebase`` is ``"step"`` for the checkout
    a rebase makes before it replays commits, ``"end"`` for the rebase's post-rewrite: the end
    decides on the rebase's result, as if its own checkout had left no claim (the paths that
    checkout wrote are among those the end names), while a rebase that never ends leaves the
    step's claim standing."""
    check_trigger(trigger)
    note = {"at": _iso(now_ns), "trigger": trigger, "changed": "1" if changed else "0"}
    old = gen.pending
    notes = ([*old["notes"], note] if old is not None else [note])[-HISTORY:]
    before = old.get("before_rebase") if old is not None and "before_rebase" in old else old
    if rebase == "end" and old is not None and "before_rebase" in old:
        old = before
    if old is not None and not changed:  # the work tree a reader measures is the same
        claim = {**old, "notes": notes}
    else:
        nxt = {
            "id": _token(16),
            "key": _token(32),
            "created": _iso(now_ns),
            "created_ns": now_ns,
            "trigger": trigger,
            "head": head,
            "scrub": scrub,
        }
        # ``changed``: whether this command changed files (a full hook after it, which cannot
        # tell whether its own did, begins the next generation: ``restamp.after_hook``)
        claim = {"next": nxt, "may_keep": old is None, "notes": notes, "changed": changed}
    claim.pop("before_rebase", None)
    if rebase == "step":
        claim["before_rebase"] = before
    return gen._replace(pending=claim)


def settled(gen: Generation, tree: str, tested: str | None, head: str | None) -> Generation:
    """The generation ``gen``'s claim decides once the work tree is measured as ``tree``:
    ``gen`` itself (kept) when the work tree holds the content it began with or the content
    its evidence tested (``tested``), else the claim's next generation, of ``tree`` (at the
    claim's HEAD, or ``head`` when the hook did not know it). Pure."""
    claim = gen.pending
    if claim is None:
        return gen
    if claim["may_keep"] and tree == gen.tree:
        action, why = "kept", "the work tree is as the generation began"
    elif claim["may_keep"] and tree == tested:
        action, why = "kept", "the work tree is as it was tested"
    else:
        action, why = "began", "the work tree changed"
    history = gen.history
    for note in claim["notes"]:
        entry = {"at": note["at"], "trigger": note["trigger"], "action": action, "why": why}
        history = (*history, entry)[-HISTORY:]
    if action == "kept":
        return gen._replace(history=history, pending=None)
    nxt = claim["next"]
    return Generation(
        id=nxt["id"],
        tree=tree,
        head=nxt["head"] or head,
        created=nxt["created"],
        created_ns=gen.created_ns,  # only what git changed was scrubbed: see the field
        trigger=nxt["trigger"],
        scrub=nxt["scrub"],
        key=nxt["key"],
        writer=__version__,
        history=history,
        retired=retiring(gen, changed=changed_files(claim), ended=claim_ended(claim)),
    )


def claim_ended(claim: dict[str, Any]) -> str:
    """When the generation a claim ends began to end: its first command that changed files
    (the claim's own time where its notes do not say, as an older genstamp's)."""
    first = (n["at"] for n in claim["notes"] if n.get("changed", "1") == "1" and "at" in n)
    return str(next(first, claim["next"]["created"]))


def _token(size: int) -> str:
    """``size`` random bytes from the OS, in hex (what ``secrets.token_hex`` does, without
    importing ``secrets`` and its ``hmac`` and ``hashlib`` into every hook process)."""
    return os.urandom(size).hex()


def _is_hex(text: object, *lengths: int) -> bool:
    """Lowercase hex of one of ``lengths`` (``int(text, 16)`` would take "-1f", " 1f", "1_f");
    a value that is no string (a damaged stamp's null or number) is none."""
    return isinstance(text, str) and len(text) in lengths and not text.strip("0123456789abcdef")


def now_ns(folder: str | os.PathLike[str]) -> int:
    """Now, by the clock that dates files: the kernel's coarse file clock can lag
    ``time.time_ns()`` by a few milliseconds, and bytecode written just after the stamp must
    not look older than it."""
    os.makedirs(folder, exist_ok=True)
    wall = time.time_ns()
    fd, probe = new_file(os.fspath(folder), ".clock.")
    try:
        return min(wall, os.fstat(fd).st_mtime_ns)
    finally:
        os.close(fd)
        os.unlink(probe)


def _iso(ns: int) -> str:
    """UTC, ISO 8601 to the microsecond, as ``datetime``'s ``isoformat`` writes it (without
    importing ``datetime``)."""
    seconds, micros = divmod((ns + 500) // 1000, 1_000_000)
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(seconds)) + f".{micros:06d}Z"
