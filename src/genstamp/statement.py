"""The in-toto Statement genstamp attests with, and the facts it carries (pure).

A Statement v1 (``https://in-toto.io/Statement/v1``) with the test-result predicate
(``https://in-toto.io/attestation/test-result/v0.1``). Its subjects, sha256 first (mainstream
verifiers accept only SHA-2 subjects, and some refuse a subject mixing a git digest with one):

1. ``genstamp-evidence``: the sha256 of the canonical evidence, which is the canonical JSON of
   the predicate (sorted keys, no whitespace), so every field of the predicate is bound;
2. ``tree``: ``{"gitTree": …}``, the tested tree (what the gate matches);
3. ``commit``: ``{"gitCommit": …}``, the commit attested (for people; a commit of the same tree
   is judged the same).

genstamp's own facts travel in the predicate's extension field ``genstamp`` (the attestation
framework's parsing rules let a producer add extension fields to any object; consumers ignore
fields they do not know). It is versioned (``EXTENSION_VERSION``); a reader refuses another
version naming both.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

from genstamp import __version__, binding, coverage, versioned
from genstamp.rules import Attested
from genstamp.typedtuple import NamedTuple

STATEMENT_TYPE = "https://in-toto.io/Statement/v1"
PREDICATE_TYPE = "https://in-toto.io/attestation/test-result/v0.1"
EXTENSION = "genstamp"
EXTENSION_VERSION = 1
MOST_PARTS = 1000  # the parts a suite may be split in (pytest-split's --splits)
EVIDENCE_SUBJECT = "genstamp-evidence"
RESULTS = ("PASSED", "WARNED", "FAILED")
# How a test's outcome (genstamp.coverage) is told in the predicate's three lists.
PASSED_OUTCOMES = ("passed",)
FAILED_OUTCOMES = ("failed", "error")
WARNED_OUTCOMES = ("skipped", "xfailed", "xpassed")
_HEX = frozenset("0123456789abcdef")


class StatementError(ValueError):
    """Not a statement this genstamp reads (the message says why)."""


class Facts(NamedTuple):
    """What genstamp attests of one verified run (or part of one)."""

    tree: str
    commit: str
    coverage: coverage.Coverage
    generation: str
    part: tuple[int, int] | None  # (index, count), 1-based: pytest-split's --group/--splits
    suites: tuple[Mapping[str, Any], ...]  # {root, files, digest}
    audit: Mapping[str, Any]  # {packages, files, flags, notes}
    workspace: str  # "warm" (a reused checkout) or "clean-room"
    genstamp: str  # the version that attested
    configuration: tuple[Mapping[str, Any], ...] = ()  # ResourceDescriptors
    url: str = ""
    # the clean-room run of the same tree kept in the checkout (`genstamp clean-run`), if any:
    # {ok, complete, narrowed, counts, when, install}
    clean_room: Mapping[str, Any] | None = None


def canonical(obj: object) -> bytes:
    """JSON with sorted keys and no whitespace: one byte string per value, so digests hold."""
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


def evidence_digest(predicate: Mapping[str, Any]) -> str:
    return hashlib.sha256(canonical(predicate)).hexdigest()


def lists(outcomes: Mapping[str, str]) -> tuple[list[str], list[str], list[str]]:
    """(passed, warned, failed) test names, sorted."""

    def some(kinds: Sequence[str]) -> list[str]:
        return sorted(n for n, o in outcomes.items() if o in kinds)

    return some(PASSED_OUTCOMES), some(WARNED_OUTCOMES), some(FAILED_OUTCOMES)


def result_of(outcomes: Mapping[str, str]) -> str:
    _, warned, failed = lists(outcomes)
    return "FAILED" if failed else "WARNED" if warned else "PASSED"


def build(facts: Facts) -> dict[str, Any]:
    passed, warned, failed = lists(facts.coverage.outcomes)
    predicate: dict[str, Any] = {
        "result": result_of(facts.coverage.outcomes),
        "configuration": [dict(c) for c in facts.configuration],
        "passedTests": passed,
        "warnedTests": warned,
        "failedTests": failed,
        EXTENSION: {
            "version": EXTENSION_VERSION,
            "tree": facts.tree,
            "commit": facts.commit,
            "generation": facts.generation,
            "part": ({"index": facts.part[0], "count": facts.part[1]} if facts.part else None),
            "suites": [dict(s) for s in facts.suites],
            "coverage": json.loads(facts.coverage.to_json()),
            "audit": dict(facts.audit),
            "workspace": facts.workspace,
            "cleanRoom": dict(facts.clean_room) if facts.clean_room is not None else None,
            "genstamp": facts.genstamp,
            # what the recorder of the evidence judged observed: a gate attests only evidence
            # of its own observation level or above
            "observes": binding.OBSERVES,
        },
    }
    if facts.url:
        predicate["url"] = facts.url
    return {
        "_type": STATEMENT_TYPE,
        "subject": [
            {"name": EVIDENCE_SUBJECT, "digest": {"sha256": evidence_digest(predicate)}},
            {"name": "tree", "digest": {"gitTree": facts.tree}},
            {"name": "commit", "digest": {"gitCommit": facts.commit}},
        ],
        "predicateType": PREDICATE_TYPE,
        "predicate": predicate,
    }


# -- reading -----------------------------------------------------------------------------------


def shape_problems(statement: object) -> list[str]:
    """Where ``statement`` breaks the Statement v1 and test-result v0.1 field definitions."""
    if not isinstance(statement, dict):
        return ["the statement is not a JSON object"]
    out = []
    if statement.get("_type") != STATEMENT_TYPE:
        out.append(f"_type is {statement.get('_type')!r}, not {STATEMENT_TYPE}")
    subjects = statement.get("subject")
    if not isinstance(subjects, list) or not subjects:
        out.append("subject must be a non-empty list")
    else:
        for i, subject in enumerate(subjects):
            digest = subject.get("digest") if isinstance(subject, dict) else None
            if not isinstance(digest, dict) or not digest:
                out.append(f"subject[{i}] has no digest")
            elif not all(isinstance(v, str) and v and set(v) <= _HEX for v in digest.values()):
                out.append(f"subject[{i}]'s digest values must be lowercase hex")
    if statement.get("predicateType") != PREDICATE_TYPE:
        out.append(f"predicateType is {statement.get('predicateType')!r}, not {PREDICATE_TYPE}")
    predicate = statement.get("predicate")
    if not isinstance(predicate, dict):
        return [*out, "predicate must be an object"]
    if predicate.get("result") not in RESULTS:
        out.append(f"predicate.result is {predicate.get('result')!r}, not one of {RESULTS}")
    config = predicate.get("configuration")
    if not isinstance(config, list) or not all(
        isinstance(c, dict) and any(k in c for k in ("uri", "digest", "content")) for c in config
    ):
        out.append("predicate.configuration must be a list of ResourceDescriptors")
    if "url" in predicate and not isinstance(predicate["url"], str):
        out.append("predicate.url must be a string")
    for key in ("passedTests", "warnedTests", "failedTests"):
        value = predicate.get(key, [])
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            out.append(f"predicate.{key} must be a list of strings")
    return out


def read(payload: bytes, label: str) -> Attested:
    """The attested facts of a Statement's bytes, for the gate. Raises StatementError when it
    is not a statement genstamp reads; a statement whose fields contradict each other or its
    evidence digest is returned with ``tampered`` saying where."""
    try:
        statement = json.loads(payload)
    except (UnicodeDecodeError, ValueError, RecursionError):
        raise StatementError("its payload is not JSON") from None
    problems = shape_problems(statement)
    if problems:
        raise StatementError("; ".join(problems[:3]))
    predicate = statement["predicate"]
    ext = predicate.get(EXTENSION)
    if not isinstance(ext, dict):
        raise StatementError(f"it carries no predicate.{EXTENSION} (not written by genstamp)")
    if not versioned.matches(ext.get("version"), EXTENSION_VERSION):
        raise StatementError(
            f"its predicate.{EXTENSION} is version {ext.get('version')!r}; this genstamp reads "
            f"version {EXTENSION_VERSION}"
        )
    observes = ext.get("observes", 0)
    if not isinstance(observes, int) or isinstance(observes, bool) or observes < binding.OBSERVES:
        raise StatementError(
            f"it was made by genstamp {str(ext.get('genstamp', '?'))[:40]} of a run whose "
            f"recorder observes less than this genstamp {__version__} judges by (observation "
            f"level {str(observes)[:20]!r}, this genstamp's {binding.OBSERVES}): rerun the "
            "tests with this genstamp and attest again"
        )
    try:
        cov = coverage.from_json(json.dumps(ext["coverage"]))
        tree, commit = str(ext["tree"]), str(ext["commit"])
        for what, oid in (("tree", tree), ("commit", commit)):
            if not _OBJECT_ID.fullmatch(oid):  # (a git command may be given it: never an option)
                raise ValueError(f"its {what} {oid[:80]!r} is no git object id")
        part = ext.get("part")
        where = (int(part["index"]), int(part["count"])) if part else None
        if where is not None and not 1 <= where[0] <= where[1]:
            raise ValueError(f"part {where[0]}/{where[1]} is not I/N")
        if where is not None and where[1] > MOST_PARTS:
            raise ValueError(f"part {where[0]}/{where[1]}: a suite in more than {MOST_PARTS} parts")
    except (ValueError, KeyError, TypeError, AttributeError, RecursionError, OverflowError) as exc:
        raise StatementError(f"its predicate.{EXTENSION} cannot be read ({exc})") from None
    return Attested(
        label,
        tampered=_tampered(statement, predicate, tree, commit, cov),
        tree=tree,
        commit=commit,
        result=str(predicate["result"]),
        failed=tuple(predicate.get("failedTests", [])),
        coverage=cov,
        part=where,
        generation=str(ext.get("generation", "")),
        digest=evidence_digest(predicate),
        clean_room=_clean_room_said(ext.get("cleanRoom")),
    )


_OBJECT_ID = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")  # SHA-1's, SHA-256's


def _clean_room_said(room: object) -> str:
    """What an attestation's ``cleanRoom`` record says: "passed" (passing, and complete as the
    clean checkout's own gate judged it: pytest arguments given that left tests out or made the
    run lenient are what made it incomplete, as ``cleanrecord.passing`` takes it locally),
    "failed", "incomplete", or "" when it carries none."""
    if not isinstance(room, dict):
        return ""
    if room.get("ok") is not True:
        return "failed"
    return "passed" if room.get("complete") is True else "incomplete"


def _tampered(
    statement: Mapping[str, Any],
    predicate: Mapping[str, Any],
    tree: str,
    commit: str,
    cov: coverage.Coverage,
) -> str:
    """Where the statement contradicts itself ("" when it does not): its evidence digest, its
    git subjects, its result and lists against the outcomes it records."""
    digests: dict[str, set[str]] = {}
    for subject in statement["subject"]:
        for algorithm, value in subject["digest"].items():
            digests.setdefault(algorithm, set()).add(value)
    if digests.get("sha256") != {evidence_digest(predicate)}:
        return "its evidence digest (the sha256 subject) is not the digest of its predicate"
    if digests.get("gitTree") != {tree} or digests.get("gitCommit", {commit}) != {commit}:
        return "its gitTree/gitCommit subjects are not the tree and commit it records"
    passed, warned, failed = lists(cov.outcomes)
    said = [predicate.get(k, []) for k in ("passedTests", "warnedTests", "failedTests")]
    if said != [passed, warned, failed]:
        return "its passedTests/warnedTests/failedTests are not the outcomes it records"
    if predicate["result"] != result_of(cov.outcomes):
        return f"its result {predicate['result']} is not what its outcomes say"
    return ""
