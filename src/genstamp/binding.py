"""The binding: the ``genstamp.*`` properties, the counts and the seal, as pure data.

Pure on purpose: the writers (``junit.Recorder``, ``evidence.bind``) and the reader
(``evidence.read_report``, the gate's rules) share one outcome table and one digest, and the
rules import this module without importing anything that touches a disk or a repository.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime, timezone
from typing import Any

from genstamp import versioned
from genstamp.typedtuple import NamedTuple

PREFIX = "genstamp."
FORMAT = "2"  # 2: genstamp.coverage; xfailed/xpassed counted apart
# 3: format 2 with genstamp.session.failed, which a reader of 2 would pass over (it would accept
# a session that failed). Written only for such a run, so that every other stays readable there.
FORMAT_SESSION = "3"
# 4: format 3 with genstamp.unseen recording changes git does not see that the run found (a
# reader of 3 would judge them on the work tree as it is then, where they may be gone). Written
# only for such a run (a run that found none records it in format 2 or 3).
FORMAT_UNSEEN = "4"
READS = (FORMAT, FORMAT_SESSION, FORMAT_UNSEEN)
# What the run's recorder observes, as a level: a gate judges evidence only from a recorder
# that observes at least what the gate judges by, since a recorder that did not look for a
# thing records it as it records a thing not found. Raised when the recorder learns to observe
# what a gate would otherwise read as absent. 0: evidence that names no level (the builds of
# 0.2.0 before it was recorded, which did not observe, among others, the data files an
# installed copy of the checkout holds, or which tests pytest-dependency skipped unseen).
OBSERVES = 1
NONE = "none"
UNAVAILABLE = "unavailable"

# Property names, documented in the README.
P_FORMAT = "genstamp.format"
P_VERSION = "genstamp.version"
P_OBSERVES = "genstamp.observes"  # the recorder's ``OBSERVES``
P_RUNNER = "genstamp.runner"
P_CHECKOUT = "genstamp.checkout"
P_GENERATION = "genstamp.generation"
# Why the run's genstamp read no generation from the stamp there (another build's format): only
# then. The gate says it where the evidence's generation is none: rerunning changes nothing.
P_STAMP_UNREAD = "genstamp.generation.unread"
P_TREE_START = "genstamp.tree.start"
P_TREE_END = "genstamp.tree.end"
P_HEAD = "genstamp.head"
P_SELECTION = "genstamp.selection"
P_SELECTION_REASONS = "genstamp.selection.reasons"
P_AUDIT = "genstamp.audit"
P_COVERAGE = "genstamp.coverage"
P_CREATED = "genstamp.created"
P_SEAL = "genstamp.seal"
P_CHECKOUT_ID = "genstamp.checkout.id"  # <id in the git dir>@<device>:<inode of the git dir>
P_OUTPUT = "genstamp.output"  # the --junitxml file inside the work tree: output, not tested
# Why the session failed though no test did (pytest exited 1: --cov-fail-under, a conftest's
# check at the session's end); only when it did.
P_SESSION_FAILED = "genstamp.session.failed"
# The options of the configuration's addopts that genstamp's own tables do not know (a
# conftest's, a plugin's), each with how the run's pytest takes it ("value", "optional": a
# value unless the next word is an option, "flag"), as a JSON object; only when there are
# such options (the gate then reads the addopts as the run did).
P_OPTIONS = "genstamp.addopts.options"
# What the run found that no tree holds, as the tests left it (``hidden-change``,
# ``dirty-submodule``): JSON ``{"version": 1, "hidden": {path: option}, "dirty": {submodule:
# [paths]}}``; absent when the run could not tell (the gate then looks at the work tree).
P_UNSEEN = "genstamp.unseen"
UNSEEN_VERSION = 1

# How a genstamp.selection.reasons entry for the run's own options begins (the gate names them)
OPTIONS_REASON = "the run's own options change the suite"
# a reason of P_SELECTION_REASONS: tests a plugin skipped without running their bodies
UNSEEN_REASON = "skipped by pytest-dependency"

# A testcase's outcome is its worst child element; a testcase without one passed.
OUTCOME_RANK = {"passed": 0, "skipped": 1, "failed": 2, "error": 3}
CHILD_OUTCOME = {"skipped": "skipped", "failure": "failed", "error": "error"}


def worse(outcome: str, child: str) -> str:
    """The outcome of a testcase that had ``outcome`` and now shows a ``child`` element."""
    found = CHILD_OUTCOME.get(child)
    return found if found and OUTCOME_RANK[found] > OUTCOME_RANK[outcome] else outcome


class Counts(NamedTuple):
    tests: int = 0
    passed: int = 0
    failed: int = 0
    errors: int = 0
    skipped: int = 0  # every <skipped>, xfail included (as pytest's junitxml writes it)
    xfailed: int = 0  # of the skipped: <skipped type="pytest.xfail">
    xpassed: int = 0  # of the skipped: a strict xfail that passed


class Report(NamedTuple):
    properties: dict[str, str]  # the genstamp.* properties
    counts: Counts  # recounted from the testcases, not taken from attributes
    declared: Counts  # what the testsuite attributes claim
    cases_digest: str  # sha256 over (classname, name, outcome) of every testcase, in order


def digest(lines: Iterable[str]) -> str:
    """sha256 over the lines, each ended by a newline: the one digest of a list of names (a
    suite's files, a run's node ids) that writers and readers share."""
    h = hashlib.sha256()
    for line in lines:
        h.update(line.encode("utf-8", "surrogateescape") + b"\n")
    return h.hexdigest()


def case_line(classname: str, name: str, outcome: str) -> bytes:
    """What one testcase adds to ``Report.cases_digest``."""
    return f"{classname}\0{name}\0{outcome}\n".encode()


def seal(key: str, properties: dict[str, str], report: Report) -> str:
    """HMAC over the binding and the testcases, keyed by the generation's secret."""
    body = json.dumps(
        {
            "properties": {k: v for k, v in sorted(properties.items()) if k != P_SEAL},
            "cases": report.cases_digest,
            "declared": list(report.declared),
        },
        sort_keys=True,
    )
    from genstamp import stdlib  # the standard library's hmac, not a checkout's hmac.py

    hmac = stdlib.module("hmac")
    mac = hmac.new(bytes.fromhex(key) if key else b"", body.encode(), hashlib.sha256)
    digest: str = mac.hexdigest()
    return digest


class Binding(NamedTuple):
    """What a run binds its evidence to: one record for the pytest plugin and `genstamp run`."""

    runner: str  # "pytest", or "run: COMMAND"
    checkout: str  # the git dir of the checkout tested
    generation: str  # the generation id, or NONE
    tree_start: str
    tree_end: str
    head: str  # the commit checked out, or NONE
    selection: str  # "full" or "partial"
    selection_reasons: str
    audit: str  # the loaded-code audit as JSON, or "unavailable"
    created: str  # UTC, ISO 8601
    checkout_id: str = ""  # "": not recorded (the git dir's path then names the checkout)
    output: str = ""  # work-tree-relative path of the report the run wrote, or ""
    coverage: str = UNAVAILABLE  # what the run covered (``genstamp.coverage``) as JSON
    session_failed: str = ""  # why the session failed though no test did ("": it did not)
    options: str = ""  # P_OPTIONS's JSON object, "" when not recorded
    unseen: str = ""  # P_UNSEEN's JSON object, "" when not recorded
    stamp_unread: str = ""  # P_STAMP_UNREAD, "" when the stamp was read or absent

    def properties(self) -> dict[str, str]:
        """The ``genstamp.*`` properties, in the order a bound file carries them."""
        return {
            P_RUNNER: self.runner,
            P_CHECKOUT: self.checkout,
            P_GENERATION: self.generation,
            **({P_STAMP_UNREAD: self.stamp_unread} if self.stamp_unread else {}),
            P_TREE_START: self.tree_start,
            P_TREE_END: self.tree_end,
            P_HEAD: self.head,
            P_SELECTION: self.selection,
            P_SELECTION_REASONS: self.selection_reasons,
            P_AUDIT: self.audit,
            P_CREATED: self.created,
            **({P_CHECKOUT_ID: self.checkout_id} if self.checkout_id else {}),
            **({P_OUTPUT: self.output} if self.output else {}),
            P_COVERAGE: self.coverage,
            **({P_SESSION_FAILED: self.session_failed} if self.session_failed else {}),
            **({P_OPTIONS: self.options} if self.options else {}),
            **({P_UNSEEN: self.unseen} if self.unseen else {}),
        }


def _object(props: Mapping[str, str], name: str) -> dict[str, Any] | None:
    """The JSON object the property ``name`` holds; None when absent or not one."""
    raw = props.get(name)
    if raw is None:
        return None
    try:
        found = json.loads(raw)
    except ValueError:
        return None
    return found if isinstance(found, dict) else None


def options_of(props: Mapping[str, str]) -> dict[str, str] | None:
    """The options P_OPTIONS records (name -> "value", "optional" or "flag"), None when the
    run recorded none (or not readably)."""
    found = _object(props, P_OPTIONS)
    if found is None or not all(
        isinstance(k, str) and v in ("value", "optional", "flag") for k, v in found.items()
    ):
        return None
    return found


class Unseen(NamedTuple):
    """``P_UNSEEN``: the changes hidden from git in files the tests used (path -> the index's
    option) and the submodules whose work tree held changes (path -> those paths)."""

    hidden: dict[str, str]
    dirty: dict[str, list[str]]

    def to_json(self) -> str:
        return json.dumps(
            {"version": UNSEEN_VERSION, "hidden": self.hidden, "dirty": self.dirty},
            sort_keys=True,
        )

    def found(self) -> bool:
        return bool(self.hidden or self.dirty)


def unseen_of(props: Mapping[str, str]) -> Unseen | None:
    """What ``P_UNSEEN`` records; None when the run recorded nothing, or not readably (which
    the gate refuses: ``unseen_from_json``)."""
    try:
        return unseen_from_json(props[P_UNSEEN]) if P_UNSEEN in props else None
    except (ValueError, TypeError):
        return None


def unseen_from_json(text: str) -> Unseen:
    """``P_UNSEEN``'s record; ValueError on anything but this version's."""
    found = json.loads(text)
    if not isinstance(found, dict):
        raise ValueError("not an object")
    version = found.get("version")
    if not versioned.matches(version, UNSEEN_VERSION):
        raise ValueError(f"unseen format {version!r}")
    hidden, dirty = found.get("hidden"), found.get("dirty")
    if not isinstance(hidden, dict) or not isinstance(dirty, dict):
        raise ValueError("its hidden and dirty are not objects")
    return Unseen(
        {str(k): str(v) for k, v in hidden.items()},
        {str(k): [str(c) for c in v] for k, v in dirty.items() if isinstance(v, list)},
    )


def new(
    *,
    runner: str,
    checkout: str,
    generation: str | None,
    tree_start: str,
    tree_end: str,
    head: str | None,
    partial: Sequence[str],
    audit: str,
    selection_checked: bool = True,
    checkout_id: str = "",
    output: str = "",
    coverage: str = UNAVAILABLE,
    session_failed: str = "",
    options: str = "",
    unseen: str = "",
    stamp_unread: str = "",
) -> Binding:
    """The binding of a run that ended now. ``partial`` holds why the run covered part of the
    suite (nothing: all of it); a runner whose selection genstamp cannot see passes
    ``selection_checked=False`` and says why in ``partial``: the run is taken as the suite."""
    if selection_checked:
        selection, reasons = ("partial" if partial else "full"), "; ".join(partial)
    else:
        selection, reasons = "full", "not checked: " + "; ".join(partial)
    return Binding(
        runner=runner,
        checkout=checkout,
        generation=generation or NONE,
        tree_start=tree_start,
        tree_end=tree_end,
        head=head or NONE,
        selection=selection,
        selection_reasons=reasons,
        audit=audit,
        created=datetime.now(timezone.utc).isoformat(timespec="seconds"),
        checkout_id=checkout_id,
        output=output,
        coverage=coverage,
        session_failed=session_failed,
        options=options,
        unseen=unseen,
        stamp_unread="" if generation else stamp_unread,
    )
