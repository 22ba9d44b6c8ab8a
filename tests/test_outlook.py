"""What the plugin tells at test time: a table of runs, each with the lines it must print."""

from __future__ import annotations

import pytest

from genstamp import audit, outlook

TREE = "ab" * 20
OTHER = "cd" * 20
GEN = "12" * 16
CLEAN = outlook.Run(GEN, TREE, TREE, (), (), False)


def flag(kind: str, path: str = "src/calc/__init__.py") -> audit.Flag:
    return audit.Flag(kind, "calc", path, "detail")


ROWS = {
    "clean": (CLEAN, [f"bound to tree {TREE[:12]}, generation {GEN[:12]}"]),
    "no-generation": (CLEAN._replace(generation=None), ["will refuse: no-stamp: no generation"]),
    # a stamp that cannot be read: what is wrong with it, and stamp's remedy (install's does
    # nothing to a damaged stamp)
    "unreadable-stamp": (
        CLEAN._replace(generation=None, stamp_problem="the generation stamp S is empty"),
        ["will refuse: no-stamp: the generation stamp S is empty — run `genstamp stamp`"],
    ),
    "failed": (CLEAN._replace(failed=True), ["will refuse: tests-failed"]),
    # the stamp removed while the tests ran (a test deleted .git/genstamp): it said "accepts"
    "stamp-gone": (CLEAN._replace(stamp_end=None), ["will refuse: no-stamp: the generation"]),
    "generation-begun": (
        CLEAN._replace(stamp_end="9f" * 16),
        [f"will refuse: stale-generation: generation {'9f' * 6} began while the tests ran"],
    ),
    "moved": (CLEAN._replace(tree_end=OTHER), ["will refuse: tree-moved"]),
    "partial": (CLEAN._replace(reasons=("-k add",)), ["will refuse: partial-run, unless"]),
    "no-tests": (CLEAN._replace(executed=0), ["will refuse: no-tests, unless"]),
    "tests-ran": (CLEAN._replace(executed=3), [f"bound to tree {TREE[:12]}"]),
    # a collection error: no test ran, the error is what the gate counts (as JUnit does)
    "collection-error": (
        CLEAN._replace(executed=0, failed=True, reasons=("1 error",)),
        ["will refuse: tests-failed", "will refuse: partial-run, unless"],
    ),
    "foreign": (
        CLEAN._replace(flags=(flag(audit.FOREIGN, "/elsewhere/calc/__init__.py"),)),
        ["will refuse: foreign-origin: calc (/elsewhere/calc/__init__.py)"],
    ),
    "stale": (CLEAN._replace(flags=(flag(audit.STALE),)), ["will refuse: stale-bytecode"]),
    "sourceless": (
        CLEAN._replace(flags=(flag(audit.SOURCELESS),)),
        ["will refuse: stale-bytecode"],
    ),
    "stale-extension": (
        CLEAN._replace(flags=(flag(audit.STALE_EXT, "src/calc/_x.so"),)),
        ["will refuse: stale-extension"],
    ),
    "ignored-code": (
        CLEAN._replace(ignored=("lib/calc/__init__.py",)),
        ["will refuse: ignored-code: lib/calc/__init__.py"],
    ),
    "unregistered-submodule": (
        CLEAN._replace(unregistered=(("vendor/lib/a.py", "vendor"), ("vendor/lib/b.py", "vendor"))),
        [
            "will refuse: unregistered-submodule: vendor/lib/a.py, vendor/lib/b.py (in vendor, "
            "which .gitmodules gives no URL: a clean clone cannot fetch it)"
        ],
    ),
    "loaded-not-tested": (
        CLEAN._replace(differ=("src/calc/__init__.py",)),
        [
            "will refuse: loaded-not-tested: src/calc/__init__.py (the tests loaded bytes the "
            "tested tree does not hold: a file changed and changed back while they ran, an "
            "edit git does not see (`--skip-worktree`, a filter's clean side), or code "
            "compiled under its name from other text)"
        ],
    ),
    "hidden-change": (
        CLEAN._replace(hidden=(("data.txt", "--assume-unchanged"),)),
        ["will refuse: hidden-change: data.txt (--assume-unchanged) (the tests used a change"],
    ),
    "dirty-submodule": (
        CLEAN._replace(dirty=("vendor", "vendor/nested")),
        ["will refuse: dirty-submodule: vendor, vendor/nested (changes the commit recorded"],
    ),
    # an installed package's bytecode is the installer's business, as the gate judges it
    "control-installed-bytecode": (
        CLEAN._replace(flags=(flag(audit.STALE, ".venv/lib/site-packages/x/__init__.py"),)),
        [f"bound to tree {TREE[:12]}"],
    ),
    # the checkout's own extension, installed by `pip install .`: the gate judges it
    "installed-from-the-checkout-stale": (
        CLEAN._replace(
            flags=(flag(audit.STALE_EXT, "/venv/lib/python3/site-packages/calc/_x.so"),)
        ),
        ["will refuse: stale-extension"],
    ),
    "two-reasons": (
        CLEAN._replace(generation=None, failed=True),
        ["will refuse: no-stamp", "will refuse: tests-failed"],
    ),
}


@pytest.mark.parametrize("name", list(ROWS))
def test_outlook(name: str) -> None:
    run, expected = ROWS[name]
    got = outlook.lines(run)
    assert len(got) == len(expected), got
    for line, part in zip(got, expected, strict=True):
        assert line.startswith(outlook.PREFIX) and part in line, (line, part)
        assert len(line) <= outlook.WIDTH


def test_a_long_list_is_bounded() -> None:
    many = tuple(flag(audit.FOREIGN, f"/elsewhere/m{i}.py") for i in range(500))
    (line,) = outlook.lines(CLEAN._replace(flags=many))
    assert "and 497 more" in line and len(line) <= outlook.WIDTH
