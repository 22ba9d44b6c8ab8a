"""The attestation rules as a table over facts (pure, milliseconds): each rule fires on its
row, and a control row of complete, passing, signed parts is accepted."""

from __future__ import annotations

from pathlib import Path
from typing import NamedTuple

import pytest

from genstamp import coverage, suite
from genstamp.config import Config
from genstamp.rules import (
    ATTESTATION_RULES,
    FLAG_LIMIT,
    REMEDY,
    AttestationFacts,
    Attested,
    Target,
    decide_attestations,
    missing_parts,
)

TREE, OTHER = "a" * 40, "b" * 40
SUITE = (suite.Suite("", suite.PytestConfig(""), ("tests/test_a.py", "tests/test_b.py"), ()),)
A = {"tests/test_a.py::t": "passed"}
B = {"tests/test_b.py::t": "passed"}


def part(label: str, outcomes: dict[str, str], index: int, **kw: object) -> Attested:
    files = sorted({n.split("::")[0] for n in outcomes})
    unran = [n for n in {**A, **B} if n not in outcomes]
    cov = coverage.new(files, [*outcomes, *unran], outcomes, unran)
    fields: dict[str, object] = {
        "tree": TREE,
        "commit": "c" * 40,
        "result": "PASSED",
        "coverage": cov,
        "part": (index, 2),
        "signed": True,
        "signer": "ci@example",
        "digest": "d" * 64,
    }
    fields.update(kw)
    return Attested(label, **fields)  # type: ignore[arg-type]


GOOD = (part("p1", A, 1), part("p2", B, 2))
SIGNED = Config(attestation_signers=Path("allowed_signers"))


class Row(NamedTuple):
    attested: tuple[Attested, ...]
    rules: list[str]
    says: str = ""
    settings: Config = SIGNED
    summary: str | None = None


ROWS = {
    "control-two-parts": Row(GOOD, []),
    "control-unsigned-not-required": Row(
        tuple(a._replace(signed=False, signer="") for a in GOOD), [], settings=Config()
    ),
    "none": Row((), ["no-attestation"], "no attestation of HEAD"),
    "unreadable": Row((Attested("x", problem="not JSON"), *GOOD), ["attestation-unreadable"]),
    "unsigned": Row(
        (GOOD[0]._replace(signed=False, signer=""), GOOD[1]), ["attestation-unsigned"], "p1"
    ),
    "bad-signature": Row(
        (GOOD[0]._replace(signer="", bad_signature="signed by a key that is not in x"), GOOD[1]),
        ["attestation-signature"],
        "not in x",
    ),
    "tampered": Row(
        (GOOD[0]._replace(tampered="its evidence digest …"), GOOD[1]), ["attestation-tampered"]
    ),
    "other-tree": Row(
        tuple(a._replace(tree=OTHER) for a in GOOD), ["attestation-other-tree"], "bbbbbbbbbbbb"
    ),
    "failed": Row(
        (
            part("p1", {"tests/test_a.py::t": "failed"}, 1, result="FAILED", failed=("t",)),
            GOOD[1],
        ),
        ["attestation-failed"],
        "result FAILED",
    ),
    "partial": Row(GOOD[:1], ["attestation-partial"], "missing part 2/2"),
    "partial-allowed": Row(GOOD[:1], [], settings=SIGNED._replace(allow_partial=True)),
    "disagree": Row(
        (*GOOD, part("p3", {"tests/test_a.py::t": "failed"}, 1)),
        ["attestation-parts-disagree"],
        "tests/test_a.py::t passed in p1 (part 1/2), failed in p3 (part 1/2)",
    ),
    # a skip in one part and a pass in another: each green (a skip decided at run time)
    "control-skipped-and-passed-agree": Row(
        (part("p0", {"tests/test_a.py::t": "skipped"}, 1), *GOOD), []
    ),
    "clean-room-required": Row(
        GOOD,
        ["attestation-no-clean-room"],
        "carries a passing clean-room run (theirs: none)",
        settings=SIGNED._replace(require_clean_room=True),
    ),
    "clean-room-failed": Row(
        tuple(a._replace(clean_room="failed") for a in GOOD),
        ["attestation-no-clean-room"],
        "(theirs: failed)",
        settings=SIGNED._replace(require_clean_room=True),
    ),
    "control-clean-room": Row(
        (GOOD[0]._replace(clean_room="passed"), GOOD[1]),
        [],
        settings=SIGNED._replace(require_clean_room=True),
    ),
    "summary-forged": Row(
        GOOD, ["summary-unverified"], "says 3 passed", summary=f"{'d' * 64}: 3 passed"
    ),
    "control-summary": Row(GOOD, [], summary=f"{'d' * 64}: 2 passed, 2 tests, 2 parts"),
    "summary-scaled-count": Row(  # V24 01: a number with a suffix read as a word's
        GOOD, ["summary-unverified"], "says 3k, 2K+", summary=f"{'d' * 64}: 3k tests, 2K+ passed"
    ),
    "summary-scaled-count-spaced": Row(  # Y24 06
        GOOD, ["summary-unverified"], "says 2 k, 10³", summary=f"{'d' * 64}: 2 k passed, 10³ tests"
    ),
    "summary-other-numerals": Row(  # a count a reader sees that no check of digits reads
        GOOD,
        ["summary-unverified"],
        "says \u2464, \u2075, \u2164",
        summary=f"{'d' * 64}: 2 passed, \u2464 failed, \u2075 errors, \u2164 skipped",
    ),
    "control-summary-ideographs": Row(GOOD, [], summary=f"{'d' * 64}: 2 passed \u4e94\u6708"),
    "control-summary-digits-in-words": Row(
        GOOD, [], summary=f"{'d' * 64}: 2 passed (sha256, utf8, x86_64, py3)"
    ),
}


@pytest.mark.parametrize("name", list(ROWS))
def test_attestation_rule_table(name: str) -> None:
    row = ROWS[name]
    facts = AttestationFacts(
        (Target("HEAD", TREE),), row.attested, {TREE: SUITE}, "files", "", row.summary
    )
    verdict = decide_attestations(facts, row.settings)
    assert list(dict.fromkeys(f.rule for f in verdict.failures)) == row.rules, verdict.failures
    if row.rules:
        assert row.says in verdict.failures[0].message, verdict.failures[0].message
        assert verdict.failures[0].line().endswith(REMEDY[row.rules[0]])
    elif name == "partial-allowed":
        assert verdict.partial and "tests/test_b.py" in verdict.partial[0]
    else:
        assert verdict.counts is not None and verdict.counts.passed == 2


def test_every_attestation_rule_has_a_row() -> None:
    fired = {rule for row in ROWS.values() for rule in row.rules}
    assert fired == set(ATTESTATION_RULES)


def test_missing_parts_are_named_from_the_declared_split() -> None:
    assert missing_parts(GOOD[:1]) == ["part 2/2"]
    assert missing_parts(GOOD) == []
    assert missing_parts([Attested("x")]) == []


@pytest.mark.parametrize(
    ("summary", "refused"),
    [
        (f"{'d' * 64} {'e' * 64}: 2 passed, 2 tests, 2 parts", False),
        (f"{'d' * 64} {'e' * 64}: 999 passed", True),
        (f"{'d' * 64} {'e' * 64}: 2 passed, 7 failed", True),
        (f"{'d' * 64} {'e' * 64}: 2 passed, also commit deadbeef12345", True),
        (f"{'d' * 64}: 2 passed, 2 tests, 2 parts", True),  # HEAD's run never quoted (V24 15)
        (f"{'e' * 64}: 2 passed, 2 tests, 2 parts", True),
    ],
)
def test_a_summary_of_two_commits_is_checked_against_each(summary: str, refused: bool) -> None:
    """Judged with two revs, every count a summary gives must be one of a commit's, and every
    object id it names attested."""
    other = tuple(a._replace(tree=OTHER, commit="f" * 40, digest="e" * 64) for a in GOOD)
    facts = AttestationFacts(
        (Target("HEAD~1", TREE), Target("HEAD", OTHER)),
        (*GOOD, *other),
        {TREE: SUITE, OTHER: SUITE},
        "files",
        "",
        summary,
    )
    verdict = decide_attestations(facts, SIGNED)
    rules = [f.rule for f in verdict.failures]
    assert rules == (["summary-unverified"] if refused else []), verdict.failures


@pytest.mark.parametrize(
    ("room", "said"),
    [
        (None, ""),
        ({"ok": True, "complete": True, "narrowed": False}, "passed"),
        ({"ok": True, "complete": True}, "passed"),  # written before `narrowed` was kept
        ({"ok": False, "complete": True, "narrowed": False}, "failed"),
        ({"ok": True, "complete": False, "narrowed": False}, "incomplete"),
        # given pytest arguments (`clean-run -- -x -q`), complete as its own gate judged it:
        # passing, as the local gate's no-clean-room takes the same record
        ({"ok": True, "complete": True, "narrowed": True}, "passed"),
        ({"ok": True, "complete": False, "narrowed": True}, "incomplete"),
    ],
)
def test_an_attestation_says_what_its_clean_room_run_said(room: object, said: str) -> None:
    """The clean-room record a statement carries (signed with it) is read back as the gate
    judges it: only a passing clean run that its own gate judged complete."""
    import json

    from genstamp import statement

    facts = statement.Facts(
        TREE, "c" * 40, coverage.new(["tests/test_a.py"], list(A), A, []), "g", None, (), {},
        "warm", "0", clean_room=room,  # type: ignore[arg-type]
    )  # fmt: skip
    payload = json.dumps(statement.build(facts)).encode()
    assert statement.read(payload, "x").clean_room == said


XFAIL = {**A, "tests/test_b.py::t": "xfailed"}
WHOLE = part("whole", XFAIL, 1, part=None, digest="e" * 64)
WHOLE_XPASS = part("whole-xpass", {**A, "tests/test_b.py::t": "xpassed"}, 1, part=None,
                   digest="f" * 64)  # fmt: skip
WHOLE_FAILED = part("whole-failed", {**A, "tests/test_b.py::t": "failed"}, 1, part=None,
                    digest="9" * 64, result="FAILED", failed=("tests/test_b.py::t",))  # fmt: skip
FAILED_DISAGREE = ["attestation-failed", "attestation-parts-disagree"]
FAILED_PARTIAL = ["attestation-failed", "attestation-partial"]
THIRDS = tuple(
    part(f"t{i}", {**A, **B} if i == 1 else {}, i)._replace(part=(i, 3)) for i in (1, 2, 3)
)
_FAILED_THIRD = THIRDS[0]._replace(result="FAILED", failed=("x",))


@pytest.mark.parametrize(
    ("attested", "from_files", "from_notes"),
    [
        # an unsigned line published by mistake beside the signed ones
        ((*GOOD, GOOD[0]._replace(signed=False, signer="")), ["attestation-unsigned"], []),
        ((*GOOD, Attested("note:3", problem="not JSON")), ["attestation-unreadable"], []),
        # a rerun split three ways after one split two ways that never finished
        ((GOOD[0], *THIRDS), ["attestation-partial"], []),
        # nothing trusted: refused whatever the source
        (
            tuple(a._replace(signed=False, signer="") for a in GOOD),
            ["attestation-unsigned"],
            ["attestation-unsigned"],
        ),
        ((GOOD[0], THIRDS[0]), ["attestation-partial"], ["attestation-partial"]),
        # a whole unsplit rerun after a split that never finished (Q01)
        ((WHOLE, GOOD[0]), ["attestation-partial"], []),
        # a line git copied from the amended commit's note (notes.rewriteRef, Q02)
        ((*GOOD, GOOD[0]._replace(tree=OTHER)), ["attestation-other-tree"], []),
        # two whole runs of one commit: a non-strict xfail xfailed in one, xpassed in the other
        # (each a green outcome: no disagreement)
        ((WHOLE, WHOLE_XPASS), [], []),
        # ... but a trusted word that a test failed is never set aside
        ((WHOLE, WHOLE_FAILED), FAILED_DISAGREE, FAILED_DISAGREE),
        ((*GOOD, WHOLE_FAILED), FAILED_DISAGREE, FAILED_DISAGREE),
        ((WHOLE, _FAILED_THIRD), FAILED_PARTIAL, FAILED_PARTIAL),
        # a split whose parts give one test an xfail and a pass, both green, beside a whole run
        ((WHOLE, GOOD[0], part("p2", {"tests/test_a.py::t": "xfailed", **B}, 2)), [], []),
        # nothing complete: all the trusted parts are judged together
        ((GOOD[0], THIRDS[1]), ["attestation-partial"], ["attestation-partial"]),
    ],
)
def test_notes_that_only_grow_are_judged_by_what_can_speak_for_the_tree(
    attested: tuple[Attested, ...], from_files: list[str], from_notes: list[str]
) -> None:
    """Attestations given as files are judged all together; those of git notes, which only
    grow, by the trusted ones and one complete run among them: a stray line, an abandoned
    split, a copied line of the amended commit or a second whole run must not refuse the
    commit for good; a trusted failure, or parts of one run that disagree, still do."""
    for grown, expected in ((False, from_files), (True, from_notes)):
        facts = AttestationFacts(
            (Target("HEAD", TREE),), attested, {TREE: SUITE}, "notes", "", None, grown
        )
        verdict = decide_attestations(facts, SIGNED)
        assert list(dict.fromkeys(f.rule for f in verdict.failures)) == expected, grown


@pytest.mark.parametrize("given", ["both-parts", "one-part-allowed", "one-file-twice"])
def test_the_summary_states_the_suite_and_parts_as_verified(given: str) -> None:
    """The summary says "the whole suite" only of a complete merge; a partial run accepted
    under ``allow-partial`` is "part of the suite"; one attestation named twice is one part."""
    from genstamp import summary

    attested = {
        "both-parts": GOOD,
        "one-part-allowed": GOOD[:1],
        "one-file-twice": (GOOD[0], GOOD[0], GOOD[1]),
    }[given]
    facts = AttestationFacts((Target("HEAD", TREE),), attested, {TREE: SUITE}, "files", "")
    settings = SIGNED._replace(allow_partial=given == "one-part-allowed")
    verdict = decide_attestations(facts, settings)
    assert verdict.ok, verdict.failures
    text = summary.render(verdict, attested)
    if given == "one-part-allowed":
        assert "part of the suite (accepted as partial: allow-partial), 1 part\n" in text, text
    else:
        assert "the whole suite, 2 parts" in text, text
    # what the summary says is checked against what was verified, the words on the suite too
    told = decide_attestations(facts._replace(summary=text), settings)
    assert told.ok, told.failures
    for whole in WHOLE_SUITE:
        claimed = text.replace("part of the suite", whole)
        told = decide_attestations(facts._replace(summary=claimed), settings)
        assert [f.rule for f in told.failures] == (
            ["summary-unverified"] if given == "one-part-allowed" else []
        ), (whole, told.failures)


# what a summary edited to claim the whole suite says (Y24 06: only the first was refused)
WHOLE_SUITE = (
    "the whole suite",
    "the whole test suite",
    "the full suite",
    "the **entire** suite",
    "all tests ran",
    "the complete suite",
)


@pytest.mark.parametrize(
    ("bad", "rule", "rest"),
    [
        ({"problem": "not JSON"}, "attestation-unreadable", "lines that are no attestation"),
        (
            {"tampered": "its digest is not its evidence's"},
            "attestation-tampered",
            "attestations so altered",
        ),
        ({"tree": "f" * 40}, "attestation-other-tree", "attestations of other trees"),
    ],
)
def test_a_note_of_thousands_of_bad_lines_says_the_first_few(
    bad: dict[str, str], rule: str, rest: str
) -> None:
    """Notes only grow, and anyone who can push fills one: 5,000 bad lines beside a genuine
    run give the first ten and one line for the rest (V24 04: one refusal line each)."""
    junk = tuple(part(f"note:{n}", A, 1)._replace(**bad) for n in range(5000))  # type: ignore[arg-type]
    facts = AttestationFacts((Target("HEAD", TREE),), (*junk, *GOOD), {TREE: SUITE}, "notes", "")
    said = [f.message for f in decide_attestations(facts, SIGNED).failures if f.rule == rule]
    assert len(said) == FLAG_LIMIT + 1, len(said)
    assert said[-1] == f"and {5000 - FLAG_LIMIT} more {rest}", said[-1]
