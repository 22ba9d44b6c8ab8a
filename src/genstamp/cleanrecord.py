"""Clean-room evidence: what ``genstamp clean-run`` found for one tree, kept in the git dir.

One versioned JSON file per tree (``genstamp/clean-room/<tree>.json``): the tree, whether the
clean checkout's own gate accepted its run, the rules it refused with, each test's outcome, the
counts, whether the run covered the suite, when, and the genstamp that wrote it. The gate reads
it back (``genstamp.facts``) to compare it with the warm evidence for the same tree.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from genstamp import __version__, versioned
from genstamp.atomic import read_kept, write_atomic
from genstamp.errors import GenstampError
from genstamp.repo import STATE_DIR
from genstamp.typedtuple import NamedTuple

FOLDER = "clean-room"
FORMAT = "genstamp-clean-room"
# 2: a node id naming the clean checkout's folder holds ``CHECKOUT`` for it (1: the folder)
VERSION = 2
OWN_RULES = ("clean-room-diverged", "no-clean-room")
KEEP = 50  # records kept; the oldest are removed first


# What a node id that names the clean checkout's own folder holds for it in the record (a test
# parametrized by the absolute paths of its data files): the warm checkout's is another
CHECKOUT = "<checkout>"


def spellings(folder: str) -> list[str]:
    """How a node id may spell the path ``folder``: as it is, and as pytest writes a
    parametrized test's id (non-ASCII escaped: ``r\\xe9``)."""
    escaped = folder.encode("unicode_escape", "backslashreplace").decode("ascii")
    return list(dict.fromkeys([folder, escaped]))


class CleanRoom(NamedTuple):
    tree: str  # the tree judged (hex)
    ok: bool  # the clean checkout's gate accepted its run
    failures: tuple[str, ...]  # the clean gate's refusals, `rule: message` each
    outcomes: Mapping[str, str]  # node id -> outcome, as the clean run's coverage recorded
    counts: Mapping[str, int]  # tests, passed, failed, errors, skipped (the clean verify's)
    complete: bool  # the clean run covered the whole suite
    narrowed: bool  # pytest arguments were given: tests it did not run are not compared
    when: str  # UTC, ISO 8601
    genstamp: str  # the version that wrote it
    install: str  # how the environment was made: "uv" or "pip", and the install arguments

    def to_json(self) -> dict[str, Any]:
        return {
            "format": FORMAT,
            "version": VERSION,
            **self._asdict(),
            "failures": list(self.failures),
            "outcomes": dict(sorted(self.outcomes.items())),
            "counts": dict(self.counts),
        }


def now() -> str:
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def folder(gitdir: Path) -> Path:
    return gitdir / STATE_DIR / FOLDER


def path_of(gitdir: Path, tree: str) -> Path:
    return folder(gitdir) / f"{tree}.json"


def write(gitdir: Path, record: CleanRoom) -> Path:
    path = path_of(gitdir, record.tree)
    try:
        write_atomic(path, json.dumps(record.to_json(), sort_keys=True).encode())
    except OSError as exc:
        raise GenstampError(f"cannot write {path}: {exc.strerror or exc}") from exc
    _prune(folder(gitdir))
    return path


def _prune(where: Path) -> None:
    """Keep the ``KEEP`` newest records (a record is small; a long-lived checkout has many)."""
    records = sorted(where.glob("*.json"), key=lambda p: p.stat().st_mtime_ns, reverse=True)
    for old in records[KEEP:]:
        old.unlink(missing_ok=True)


def read(gitdir: Path, tree: str) -> CleanRoom | None:
    """The clean-room record for ``tree``, None when there is none; an error naming both
    versions for a record of another format version."""
    path = path_of(gitdir, tree)
    try:
        raw = read_kept(path)
    except (FileNotFoundError, NotADirectoryError):
        return None
    except OSError as exc:
        raise GenstampError(f"cannot read {path}: {exc.strerror or exc}") from exc
    remedy = f"run `genstamp clean-run` again (or delete {path})"
    data = versioned.parse(raw, path, FORMAT, VERSION, "clean-room record", remedy)
    try:
        record = CleanRoom(
            tree=str(data["tree"]),
            ok=bool(data["ok"]),
            failures=tuple(str(f) for f in data["failures"]),
            outcomes={str(k): str(v) for k, v in dict(data["outcomes"]).items()},
            counts={str(k): int(v) for k, v in dict(data["counts"]).items()},
            complete=bool(data["complete"]),
            narrowed=bool(data["narrowed"]),
            when=str(data["when"]),
            genstamp=str(data["genstamp"]),
            install=str(data["install"]),
        )
    except (KeyError, TypeError, ValueError) as exc:
        raise GenstampError(f"{path} is a malformed clean-room record ({exc})", remedy) from None
    if record.tree != tree:
        raise GenstampError(f"{path} holds the record of tree {record.tree}", remedy)
    return record


def new(
    tree: str,
    verdict: Mapping[str, Any],
    outcomes: Mapping[str, str],
    *,
    narrowed: bool,
    install: str,
    installed: str | None = None,
) -> CleanRoom:
    """The record of a clean run from the clean checkout's ``verify --json`` output and the
    outcomes its evidence recorded. ``installed``: the tree the clean checkout holds once the
    install step wrote its by-products into it (setuptools' ``build/`` and ``*.egg-info``, in a
    project that does not ignore them), which is the judged tree as a clean clone's run sees it."""
    # The clean checkout is the clean room: its gate's own clean-room rules (a project that sets
    # require-clean-room) say nothing about it.
    failures = tuple(
        f"{f['rule']}: {f['message']}"
        for f in verdict.get("failures", [])
        if f["rule"] not in OWN_RULES
    )
    tested = verdict.get("tested_tree")
    if tested is not None and tested not in (tree, installed):
        failures += (f"tree-mismatch: the clean checkout tested tree {tested}, not {tree}",)
    tests = verdict.get("tests") or {}
    counts = {k: int(tests.get(k, 0)) for k in ("tests", "passed", "failed", "errors", "skipped")}
    return CleanRoom(
        tree=tree,
        ok=not failures and verdict.get("tested_tree") is not None,
        failures=failures,
        outcomes=dict(outcomes),
        counts=counts,
        complete=bool((verdict.get("selection") or {}).get("complete")),
        narrowed=narrowed,
        when=now(),
        genstamp=__version__,
        install=install,
    )


def latest(gitdir: Path) -> str:
    """The tree of the newest record ("" when there is none)."""
    try:
        records = list(folder(gitdir).glob("*.json"))
        newest = max(records, key=lambda p: p.stat().st_mtime_ns, default=None)
    except OSError:
        return ""
    return newest.stem if newest is not None else ""


def passing(gitdir: Path, tree: str) -> bool:
    """Whether passing, complete clean-room evidence for ``tree`` is kept here."""
    try:
        record = read(gitdir, tree)
    except GenstampError:
        return False
    return record is not None and record.ok and record.complete
