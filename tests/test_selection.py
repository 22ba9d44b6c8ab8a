"""Was the whole suite run? ``selection.reasons`` over facts alone, one row per rule.

The end-to-end stories (a real pytest run for each way of narrowing a run) are in
test_pytest_plugin.py; these rows pin the decision itself, including the rows that must stay
full.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from genstamp.selection import Facts, reasons

ROOT = Path("/project")
TESTS = ROOT / "tests"
# pytest was given paths (not its ``testpaths``): the suite is tests/
GIVEN = Facts(from_testpaths=False, configured=(TESTS,))


@pytest.mark.parametrize(
    ("facts", "expected"),
    [
        # full runs
        (Facts(), []),
        (Facts(executed=4, collected=4), []),
        (GIVEN._replace(run_roots=(TESTS,)), []),
        (GIVEN._replace(run_roots=(ROOT,)), []),  # the root holds the suite
        (Facts(from_testpaths=False, run_roots=(ROOT,), configured=(ROOT,)), []),
        (Facts(given=("--ignored", "x", "--ignoreglob=y")), []),  # not the options
        (Facts(given=("-v", "--ignore")), []),  # --ignore without a value names nothing
        (Facts(from_testpaths=True, node_ids=("t.py::a",)), []),  # testpaths: nothing narrowed
        # partial runs, one reason each
        (Facts(keyword="add"), ["-k add"]),
        (Facts(markexpr="not slow"), ["-m not slow"]),
        (Facts(last_failed=True), ["--lf"]),
        (Facts(stepwise=True), ["--sw"]),
        (Facts(collect_only=True), ["--collect-only"]),
        (Facts(given=("--ignore=tests/a.py",)), ["--ignore tests/a.py"]),
        (Facts(given=("--ignore", "tests/a.py")), ["--ignore tests/a.py"]),
        (Facts(given=("--ignore-glob", "*more*")), ["--ignore-glob *more*"]),
        (Facts(given=("--ignore-glob=*more*",)), ["--ignore-glob *more*"]),
        (GIVEN._replace(node_ids=("tests/t.py::a",)), ["node id tests/t.py::a"]),
        (
            GIVEN._replace(run_roots=(TESTS / "test_more.py",)),
            [f"ran {TESTS / 'test_more.py'}, not all of {TESTS}"],
        ),
        (GIVEN, [f"ran nothing, not all of {TESTS}"]),
        (
            GIVEN._replace(configured=(TESTS, ROOT / "docs"), run_roots=(TESTS,)),
            [f"ran {TESTS}, not all of {ROOT / 'docs'}"],
        ),
        (Facts(deselected=1), ["1 deselected"]),
        (Facts(collect_errors=2), ["2 collection errors"]),
        (Facts(interrupted=True), ["interrupted"]),
        (Facts(stopped="stopping after 1 failures"), ["stopped early (stopping after 1 failures)"]),
        (Facts(interrupted=True, stopped="x"), ["interrupted"]),  # interrupted says it
        (Facts(executed=1, collected=4), ["1 of 4 collected tests ran"]),
        # several reasons, in their order
        (
            GIVEN._replace(
                keyword="a",
                markexpr="b",
                last_failed=True,
                given=("--ignore", "x"),
                stepwise=True,
                collect_only=True,
                node_ids=("t.py::a", "t.py::b"),
                run_roots=(TESTS / "sub",),
                deselected=3,
                collect_errors=1,
                stopped="s",
                executed=0,
                collected=2,
            ),
            [
                "-k a",
                "-m b",
                "--lf",
                "--ignore x",
                "--sw",
                "--collect-only",
                "node id t.py::a",
                "node id t.py::b",
                f"ran {TESTS / 'sub'}, not all of {TESTS}",
                "3 deselected",
                "1 collection errors",
                "stopped early (s)",
                "0 of 2 collected tests ran",
            ],
        ),
        # node ids beside a path that covers the suite: only the node ids narrow it
        (
            GIVEN._replace(node_ids=("t.py::a",), run_roots=(TESTS,)),
            ["node id t.py::a"],
        ),
    ],
)
def test_reasons(facts: Facts, expected: list[str]) -> None:
    assert reasons(facts) == expected


def test_the_decision_does_no_io() -> None:
    """The rules import nothing that reads files or starts processes."""
    import ast

    import genstamp.selection

    tree = ast.parse(Path(genstamp.selection.__file__).read_text())
    imported = {
        alias.name
        for node in ast.walk(tree)
        if isinstance(node, ast.Import | ast.ImportFrom)
        for alias in node.names
    } | {node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)}
    assert imported <= {"__future__", "annotations", "pathlib", "Path", "typing", "NamedTuple"}
