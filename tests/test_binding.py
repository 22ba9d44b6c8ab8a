"""The binding record, the outcome table and the seal: one of each, for writer and reader."""

from __future__ import annotations

import hashlib
from datetime import datetime
from pathlib import Path

import pytest

from genstamp import binding, evidence, junit
from genstamp.binding import Binding, Counts, Report

FIELDS = dict(
    runner="pytest",
    checkout="/repo/.git",
    generation="9e4" * 4,
    tree_start="a" * 40,
    tree_end="b" * 40,
    head="c" * 40,
    selection="full",
    selection_reasons="",
    audit="unavailable",
    created="2026-01-01T00:00:00+00:00",
)


def test_the_properties_in_the_order_a_bound_file_carries_them() -> None:
    props = Binding(**FIELDS).properties()
    assert list(props) == [
        "genstamp.runner",
        "genstamp.checkout",
        "genstamp.generation",
        "genstamp.tree.start",
        "genstamp.tree.end",
        "genstamp.head",
        "genstamp.selection",
        "genstamp.selection.reasons",
        "genstamp.audit",
        "genstamp.created",
        "genstamp.coverage",
    ]
    assert list(props.values()) == [*FIELDS.values(), binding.UNAVAILABLE]


@pytest.mark.parametrize(
    ("partial", "checked", "selection", "reasons"),
    [
        ([], True, "full", ""),
        (["-k add", "1 deselected"], True, "partial", "-k add; 1 deselected"),
        (["genstamp run cannot see it"], False, "full", "not checked: genstamp run cannot see it"),
    ],
)
def test_a_new_binding(partial: list[str], checked: bool, selection: str, reasons: str) -> None:
    made = binding.new(
        runner="pytest",
        checkout="/repo/.git",
        generation=None,
        tree_start="a" * 40,
        tree_end="a" * 40,
        head=None,
        partial=partial,
        audit="unavailable",
        selection_checked=checked,
    )
    assert (made.selection, made.selection_reasons) == (selection, reasons)
    assert (made.generation, made.head) == (binding.NONE, binding.NONE)
    assert datetime.fromisoformat(made.created).utcoffset() is not None


@pytest.mark.parametrize(
    ("children", "outcome"),
    [
        ([], "passed"),
        (["skipped"], "skipped"),
        (["failure"], "failed"),
        (["error"], "error"),
        (["failure", "skipped"], "failed"),
        (["skipped", "error", "failure"], "error"),
        (["system-out"], "passed"),
    ],
)
def test_writer_and_reader_agree_on_a_testcase_outcome(
    tmp_path: Path, children: list[str], outcome: str
) -> None:
    case = junit._Case("tests/test_x.py::test_a")
    for tag in children:
        case.add(tag, message="m")
    assert case.outcome() == outcome
    inner = "".join(f'<{tag} message="m" />' for tag in children)
    text = f'<testsuite><testcase classname="c" name="n">{inner}</testcase></testsuite>'
    path = tmp_path / "junit.xml"
    path.write_text(text)
    report = evidence.read_report(path)
    index = {"passed": 1, "failed": 2, "error": 3, "skipped": 4}[outcome]
    assert report.counts[index] == 1
    assert report.cases_digest == hashlib.sha256(binding.case_line("c", "n", outcome)).hexdigest()


def test_the_seal_covers_every_property_but_itself_and_the_testcases() -> None:
    props = {**Binding(**FIELDS).properties(), binding.P_SEAL: "x"}
    report = Report(props, Counts(1, 1), Counts(1), "d" * 64)
    key = "5e" * 32
    sealed = binding.seal(key, props, report)
    assert binding.seal(key, {**props, binding.P_SEAL: "y"}, report) == sealed
    assert binding.seal(key, {**props, binding.P_SELECTION: "partial"}, report) != sealed
    assert binding.seal(key, props, report._replace(cases_digest="e" * 64)) != sealed
    assert binding.seal(key, props, report._replace(declared=Counts(2))) != sealed
    assert binding.seal("00" * 32, props, report) != sealed
    # the names the plugin and the tests use are the same objects through evidence
    assert evidence.seal is binding.seal and evidence.P_SEAL == binding.P_SEAL


@pytest.mark.parametrize(
    ("unseen", "session_failed", "fmt"),
    [
        (None, "", "2"),
        (binding.Unseen({}, {}), "", "2"),  # recorded, nothing found: any reader judges it
        (binding.Unseen({}, {}), "exit 1", "3"),
        (binding.Unseen({"data.txt": "--skip-worktree"}, {}), "", "4"),
        (binding.Unseen({}, {"sub": ["sub/val.txt"]}), "exit 1", "4"),
    ],
)
def test_what_the_run_found_unseen_is_a_format_older_readers_refuse(
    unseen: binding.Unseen | None, session_failed: str, fmt: str
) -> None:
    """``genstamp.unseen`` records what the run found that no tree holds. A reader of format 3
    would pass it over and judge the work tree as it is when the gate runs, where the change
    may be gone: evidence that records such a change is format 4; one that records none stays
    readable by the older readers (they judge the work tree, as they did)."""
    fields = dict(FIELDS, unseen=unseen.to_json() if unseen else "")
    if session_failed:
        fields["session_failed"] = session_failed
    props = Binding(**fields).properties()
    bound = evidence.binding(props, "", Report(props, Counts(), Counts(), "d" * 64))
    assert bound[binding.P_FORMAT] == fmt
    assert fmt in binding.READS
    assert binding.unseen_of(bound) == unseen


@pytest.mark.parametrize(
    ("audit", "fmt"),
    [
        ('{"version":3,"packages":[],"loaded":{},"flags":[],"notes":[]}', "2"),
        ('{"version":3,"packages":[],"loaded":{},"flags":[],"notes":[],"read":["a"]}', "2"),
        ('{"version":3,"packages":[],"loaded":{},"flags":[],"notes":[],"namespaces":["ns"]}', "3"),
        (
            '{"version":3,"packages":[],"loaded":{},"flags":[],"notes":[],"folders":["plugins"]}',
            "4",
        ),
        ("unavailable", "2"),
    ],
)
def test_audit_findings_an_older_reader_passes_over_are_a_format_it_refuses(
    audit: str, fmt: str
) -> None:
    """An audit that records a folder the tests used empty (known to every reader of format
    4, not to every reader of 3) or a namespace package's folder (every reader of 3) is
    written in that format: an older genstamp in the other environment refuses the file,
    naming both versions, rather than pass over the finding and accept."""
    props = Binding(**dict(FIELDS, audit=audit)).properties()
    bound = evidence.binding(props, "", Report(props, Counts(), Counts(), "d" * 64))
    assert bound[binding.P_FORMAT] == fmt


@pytest.mark.parametrize(
    "raw",
    [
        "",
        "[]",
        "{",
        '{"version": 2, "hidden": {}, "dirty": {}}',
        '{"version": true, "hidden": {}, "dirty": {}}',
        '{"version": 1, "hidden": []}',
    ],
)
def test_an_unreadable_record_of_the_unseen_is_none(raw: str) -> None:
    """Not readably recorded: none to the writer choosing its format, an error to the gate
    (which refuses it as unbound-evidence: test_rules)."""
    assert binding.unseen_of({binding.P_UNSEEN: raw}) is None
    with pytest.raises((ValueError, TypeError)):
        binding.unseen_from_json(raw)
