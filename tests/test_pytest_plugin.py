"""The pytest plugin, proven by real pytest processes in real temporary repositories.

Each scenario runs pytest (this interpreter, genstamp's plugin installed through its ``pytest11``
entry point) in a repository built for it, reads the evidence back as the gate does, and asks the
gate (``genstamp.verify``) which rule fires. Git itself is the oracle for trees and blob ids.
"""

from __future__ import annotations

import ast
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import (
    commit_all,
    git,
    git_tree,
    init_repo,
    run_genstamp,
    run_pytest,
    run_python,
    skip_if_writable,
    subprocess_env,
)

import genstamp
from genstamp import audit, evidence, generation, restamp
from genstamp.repo import open_checkout
from genstamp.verify import verify

pytestmark = pytest.mark.e2e

CALC = "def add(a, b):\n    return a + b\n"
EXTRA = "X = 1\n"  # imported only inside a test body, never at collection
TEST_CALC = """\
import os

from calc import add


def test_add():
    assert add(2, 3) == 5


def test_extra():
    import calc.extra

    assert calc.extra.X == 1


def test_flaky():
    assert not os.environ.get("CALC_FAIL"), "told to fail"
"""
TEST_MORE = "from calc import add\n\n\ndef test_more():\n    assert add(1, 1) == 2\n"
PYPROJECT = '[tool.pytest.ini_options]\ntestpaths = ["tests"]\npythonpath = ["src"]\n'
# Says, in each pytest process, whether pygit2 was imported (when asked to, through the
# environment): the co-process opens the repository, never the test process.
RECORDER = """\
import os
import sys

import pytest


@pytest.hookimpl(trylast=True)
def pytest_unconfigure(config):
    record = os.environ.get("GENSTAMP_TEST_RECORD")
    if record:
        role = getattr(config, "workerinput", {}).get("workerid", "controller")
        with open(record, "a") as fh:
            fh.write(f"{role} {'pygit2' in sys.modules}\\n")
"""


def build(path: Path, *, pyproject_extra: str = "", stamp: bool = True) -> Path:
    """A committed project: a package under src/, two test files, bytecode ignored."""
    init_repo(path)
    (path / "src" / "calc").mkdir(parents=True)
    (path / "src" / "calc" / "__init__.py").write_text(CALC)
    (path / "src" / "calc" / "extra.py").write_text(EXTRA)
    (path / "tests").mkdir()
    (path / "tests" / "test_calc.py").write_text(TEST_CALC)
    (path / "tests" / "test_more.py").write_text(TEST_MORE)
    (path / "tests" / "conftest.py").write_text(RECORDER)
    (path / "pyproject.toml").write_text(PYPROJECT + pyproject_extra)
    (path / ".gitignore").write_text("__pycache__/\n*.py[co]\n")
    commit_all(path, "calc")
    if stamp:
        restamp.begin(open_checkout(path))
    return path


@pytest.fixture(scope="module")
def shared(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One stamped project for the scenarios that leave its tree as it is (each run replaces
    the evidence; tests in one process run one after another)."""
    return build(tmp_path_factory.mktemp("shared") / "repo")


@pytest.fixture
def fresh(tmp_path: Path) -> Path:
    """A stamped project of its own, for scenarios that change the repository."""
    return build(tmp_path / "repo")


@pytest.fixture(scope="module")
def plain_failing(shared: Path) -> subprocess.CompletedProcess[str]:
    """The project's failing run without the plugin: what a run with it must match (the
    genstamp settings some scenarios add are nothing to pytest without the plugin)."""
    return run_pytest(shared, "-p", "no:genstamp", env=fail_env())


def evidence_path(repo: Path) -> Path:
    return evidence.default_path(open_checkout(repo).state)


def report_of(repo: Path) -> evidence.Report:
    return evidence.read_report(evidence_path(repo))


def audit_of(report: evidence.Report) -> audit.Audit:
    return audit.from_json(report.properties[evidence.P_AUDIT])


def rules(repo: Path, **kwargs: object) -> list[str]:
    return [f.rule for f in verify(open_checkout(repo), **kwargs).failures]  # type: ignore[arg-type]


def genstamp_lines(proc: subprocess.CompletedProcess[str]) -> list[str]:
    return [
        line.strip()
        for line in (proc.stdout + proc.stderr).splitlines()
        if line.strip().startswith("genstamp:")
    ]


def no_traceback(proc: subprocess.CompletedProcess[str]) -> None:
    both = proc.stdout + proc.stderr
    assert "Traceback (most recent call last)" not in both, both
    assert "src/genstamp/" not in both, both
    assert "INTERNALERROR" not in both, both


def summary(proc: subprocess.CompletedProcess[str]) -> str:
    """pytest's last line without its timing: "1 failed, 3 passed"."""
    return proc.stdout.strip().splitlines()[-1].split(" in ")[0]


def fail_env() -> dict[str, str]:
    return subprocess_env(CALC_FAIL="1")


# -- a clean run: every property, an empty audit, the gate accepts -------------------------------


@pytest.mark.parametrize(
    ("extra", "env"),
    [
        ([], {}),
        (["-n", "2"], {}),
        # Started from inside an xdist worker (as a plugin's own tests may): the co-process
        # starts at pytest_configure instead of when the plugin is registered.
        ([], {"PYTEST_XDIST_WORKER": "gw0"}),
    ],
    ids=["serial", "xdist", "inside-a-worker"],
)
def test_clean_run_is_bound_and_accepted(
    shared: Path, tmp_path: Path, extra: list[str], env: dict[str, str]
) -> None:
    """Every property, an empty audit, the gate accepts; and libgit2 stays out of the test
    processes (controller and workers): the co-process opens the repository."""
    (evidence_path(shared)).unlink(missing_ok=True)
    record = tmp_path / "record.txt"
    proc = run_pytest(shared, *extra, env=subprocess_env(GENSTAMP_TEST_RECORD=str(record), **env))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert genstamp_lines(proc) == []
    # the plugin says at test time what the gate will say (issue 17): accepted
    tree = report_of(shared).properties[evidence.P_TREE_END]
    assert f"genstamp gate: bound to tree {tree[:12]}" in proc.stdout, proc.stdout
    assert "will refuse" not in proc.stdout
    no_traceback(proc)
    roles = ["controller"] + (["gw0", "gw1"] if extra else [])
    assert sorted(record.read_text().splitlines()) == sorted(f"{role} False" for role in roles)

    report = report_of(shared)
    props = report.properties
    gen = generation.current(open_checkout(shared))
    assert gen is not None
    assert props[evidence.P_GENERATION] == gen.id
    tree = git_tree(shared)
    assert props[evidence.P_TREE_START] == tree
    assert props[evidence.P_TREE_END] == tree
    assert props[evidence.P_HEAD] == git(shared, "rev-parse", "HEAD")
    assert props[evidence.P_VERSION] == genstamp.__version__
    assert props[evidence.P_RUNNER] == "pytest"
    assert props[evidence.P_SELECTION] == "full"
    assert props[evidence.P_SELECTION_REASONS] == ""
    assert props[evidence.P_SEAL]
    assert report.counts == evidence.Counts(tests=4, passed=4)

    loaded = audit_of(report)
    assert loaded.flags == ()
    assert loaded.packages == ("calc",)
    # calc.extra is imported only inside a test body: under xdist only a worker saw it.
    for rel in ("src/calc/__init__.py", "src/calc/extra.py", "tests/test_calc.py"):
        assert rel in loaded.loaded, sorted(loaded.loaded)
    for rel, blobs in loaded.loaded.items():
        assert blobs == (git(shared, "hash-object", rel),), rel

    # properties written once, in one <properties> block
    raw = evidence_path(shared).read_text()
    assert raw.count('name="genstamp.generation"') == 1
    assert raw.count('name="genstamp.audit"') == 1
    assert rules(shared) == []


def test_users_junitxml_carries_the_binding_too(shared: Path, tmp_path: Path) -> None:
    evidence_path(shared).unlink(missing_ok=True)
    mine = tmp_path / "reports" / "junit.xml"
    proc = run_pytest(shared, f"--junitxml={mine}")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert genstamp_lines(proc) == []

    theirs = evidence.read_report(mine)
    default = report_of(shared)
    assert theirs.properties[evidence.P_GENERATION] != evidence.NONE
    assert theirs.properties[evidence.P_TREE_END] == git_tree(shared)
    assert theirs.properties == default.properties
    assert evidence_path(shared).read_bytes() == mine.read_bytes()
    assert rules(shared) == []
    assert rules(shared, junit=mine) == []


def test_users_relative_junitxml(shared: Path) -> None:
    """A relative --junitxml is the file pytest wrote, relative to where it started (here a
    subfolder; the file lands outside the work tree)."""
    rel = Path("..", "..", "relative-junit.xml")
    proc = run_pytest(shared / "tests", f"--junitxml={rel}")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert genstamp_lines(proc) == []
    written = (shared / "tests" / rel).resolve()
    assert written == shared.parent / "relative-junit.xml"
    props = evidence.read_report(written).properties
    assert props == report_of(shared).properties
    assert props[evidence.P_SELECTION] == "full"  # started in the configured test path
    assert rules(shared) == []


def test_no_stamp_still_writes_evidence(tmp_path: Path) -> None:
    repo = build(tmp_path / "repo", stamp=False)
    proc = run_pytest(repo)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    no_traceback(proc)
    props = report_of(repo).properties
    assert props[evidence.P_GENERATION] == evidence.NONE
    assert props[evidence.P_TREE_END] == git_tree(repo)
    assert rules(repo) == ["no-stamp"]


# -- selection: a partial run says why, and the gate refuses it unless allowed --------------------


@pytest.mark.parametrize(
    ("args", "env", "reasons", "expected"),
    [
        # Options that narrow the run share one run (each rule alone is a row of
        # test_selection.py); these rows prove what the plugin observes in a real pytest: the
        # gate's message names what was left out (issue 12: not the arguments).
        (
            [
                *("-k", "add", "-m", "not slow"),
                *("--ignore=tests/test_more.py", "--ignore-glob", "*more*"),
            ],
            None,
            ["tests/test_more.py of the suite not collected", "collected tests did not run"],
            ["partial-run"],
        ),
        (["tests/test_calc.py::test_add"], None, ["tests/test_calc.py"], None),
        (
            ["tests/test_calc.py", "--deselect", "tests/test_calc.py::test_add"],
            None,
            ["tests/test_more.py", "tests/test_calc.py::test_add"],
            None,
        ),
        (["-x"], "fail", ["collected tests did not run"], ["tests-failed", "partial-run"]),
        (["--maxfail=1"], "fail", ["collected tests did not run"], ["tests-failed", "partial-run"]),
        (
            ["-n", "2", "--deselect", "tests/test_more.py::test_more"],
            None,
            ["1 collected tests did not run: tests/test_more.py::test_more"],
            None,
        ),
    ],
    ids=["k-m-ignore-ignore-glob", "node-id", "narrow-path-deselect", "x", "maxfail", "xdist"],
)
def test_partial_run_is_recorded_and_refused(
    shared: Path, args: list[str], env: str | None, reasons: list[str], expected: list[str] | None
) -> None:
    proc = run_pytest(shared, *args, env=fail_env() if env else None)
    assert proc.returncode == (1 if env else 0), proc.stdout + proc.stderr
    no_traceback(proc)
    props = report_of(shared).properties
    assert props[evidence.P_SELECTION] == "partial"
    # judged alone: the shared project's other runs are parts of the same generation
    alone = evidence_path(shared)
    message = verify(open_checkout(shared), junit=alone).failures[-1].message
    assert rules(shared, junit=alone) == (expected or ["partial-run"])
    for reason in reasons:
        assert reason in message
    # ...and the plugin said so at test time
    assert "genstamp gate: will refuse: partial-run" in proc.stdout, proc.stdout
    assert "genstamp gate: bound to tree" not in proc.stdout


@pytest.mark.parametrize(
    ("args", "where", "partial"),
    [
        (["tests/test_calc.py"], "", True),
        (["-o", "python_files=test_calc.py"], "", True),
        (["--ignore", "tests/test_more.py"], "", True),
        (["test_calc.py"], "tests", True),  # run from a folder below the rootdir
        (["tests"], "", False),  # the suite's own folder: the whole suite
        (["tests/test_more.py", "tests/test_calc.py"], "", False),  # every file named
        ([], "tests", False),  # a folder that is the whole suite
    ],
    ids=["a-file", "python-files", "ignore", "from-tests", "the-folder", "every-file", "in-it"],
)
def test_a_run_of_its_own_paths_is_told_partial_where_it_leaves_files_out(
    shared: Path, args: list[str], where: str, partial: bool
) -> None:
    """A run that names its own paths (or options that narrow collection) and leaves a file of
    the suite uncollected: the forecast says partial-run, as the gate then does (judged
    alone). Naming paths that hold the whole suite is told accepted."""
    proc = run_pytest(shared / where if where else shared, *args)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    alone = evidence_path(shared)
    assert rules(shared, junit=alone) == (["partial-run"] if partial else [])
    if partial:
        told = "genstamp gate: will refuse: partial-run, unless other parts of this generation"
        assert told in proc.stdout and "of the suite not collected" in proc.stdout, proc.stdout
        assert "the run chose what to collect (its paths, the folder" in proc.stdout
    else:
        assert "genstamp gate: bound to tree" in proc.stdout, proc.stdout


LATE_FAILURES = {
    "terminal-summary": "def pytest_terminal_summary(terminalreporter):\n    raise {error}\n",
    "trylast-sessionfinish": (
        "import pytest\n\n\n@pytest.hookimpl(trylast=True)\n"
        "def pytest_sessionfinish(session, exitstatus):\n    raise {error}\n"
    ),
    "unconfigure": "def pytest_unconfigure(config):\n    raise {error}\n",
    "pytest-exit": (
        "import pytest\n\n\ndef pytest_terminal_summary(terminalreporter):\n"
        "    pytest.exit('leaks found', returncode=3)\n"
    ),
}


@pytest.mark.parametrize("late", [*LATE_FAILURES, "control"])
def test_a_session_that_fails_after_its_evidence_is_bound_is_refused(
    fresh: Path, late: str
) -> None:
    """Every test passed, then a hook of the project's conftest that runs after genstamp has
    bound the evidence fails the session (a leak check in the terminal summary, a trylast
    session finish, an unconfigure, pytest.exit with a status): pytest exits non-zero, as a
    clean clone's run does, and the gate refuses the tree. The control: a hook that only
    reports."""
    error = 'RuntimeError("leak check failed")'
    hook = LATE_FAILURES.get(late, "def pytest_terminal_summary(terminalreporter):\n    pass\n")
    (fresh / "conftest.py").write_text(hook.format(error=error))
    proc = run_pytest(fresh)
    if late == "control":
        assert proc.returncode == 0, proc.stdout + proc.stderr
        assert rules(fresh) == []
        return
    assert proc.returncode != 0, proc.stdout + proc.stderr
    assert "genstamp: pytest failed after the evidence was bound" in proc.stderr, proc.stderr
    assert rules(fresh) == ["tests-failed"]


def test_pytest_main_called_while_the_caller_handles_an_exception_is_no_late_failure(
    fresh: Path,
) -> None:
    """A script runs pytest.main() inside an except clause: the exception it handles is its
    own, not a failure of the session (the evidence stays accepted)."""
    script = (
        "import sys\nimport pytest\n\ntry:\n    raise ValueError('the caller handles this')\n"
        "except ValueError:\n    sys.exit(pytest.main(['-q']))\n"
    )
    proc = run_python(fresh, "-c", script, env=subprocess_env())
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "pytest failed after the evidence was bound" not in proc.stderr, proc.stderr
    assert rules(fresh) == []


def test_the_plugin_keeps_no_module_alive_past_the_process_exit(fresh: Path) -> None:
    """What ``sys`` holds of the plugin to the very end (its finder of genstamp's modules, its
    excepthook) would keep its globals, and through them nearly every module, alive past
    finalisation's first collection: each is then wiped one at a time, tens of ms at the end of
    every pytest. With the plugin, about as many modules are wiped as without it."""

    def wiped(*args: str) -> list[str]:
        proc = run_python(fresh, "-v", "-m", "pytest", "-q", *args, env=subprocess_env())
        assert proc.returncode == 0, proc.stdout + proc.stderr[-2000:]
        return [ln for ln in proc.stderr.splitlines() if ln.startswith("# cleanup[3] wiping")]

    mine, theirs = wiped(), wiped("-p", "no:genstamp")
    assert theirs, "python -v says which modules finalisation wipes"
    assert len(mine) <= len(theirs) + 5, sorted(set(mine) - set(theirs))
    assert rules(fresh) == []


SHADOWS = ("shlex", "hmac", "tomllib", "fcntl")
FLAT_TEST = """\
import os

import calc


def test_add():
    assert calc.add(1, 2) == (4 if os.environ.get("CALC_FAIL") else 3)


def test_mine():
    import {name}

    assert {name}.MINE
"""


@pytest.mark.parametrize("shadowed", [True, False], ids=["stdlib-names", "control"])
def test_modules_of_the_checkout_named_like_the_standard_librarys(
    tmp_path: Path, shadowed: bool
) -> None:
    """A project's own shlex.py, hmac.py, tomllib.py and fcntl.py at its top, first on the
    import path under ``python -m pytest`` (a configuration that pytest itself can read
    then: no pyproject.toml, no list settings it splits with shlex): genstamp uses the
    standard library's, binds the evidence and records a failing run; the tests import the
    project's own."""
    repo = init_repo(tmp_path / "flat")
    names = SHADOWS if shadowed else tuple(f"my{n}" for n in SHADOWS)
    for name in names:
        (repo / f"{name}.py").write_text("MINE = True\n")
    (repo / "calc.py").write_text(CALC)
    (repo / "tests").mkdir()
    (repo / "tests" / "test_calc.py").write_text(FLAT_TEST.format(name=names[0]))
    (repo / "pytest.ini").write_text("[pytest]\n")
    (repo / ".gitignore").write_text("__pycache__/\n")
    commit_all(repo, "flat")
    restamp.begin(open_checkout(repo))
    env = {k: v for k, v in subprocess_env().items() if k != "PYTEST_ADDOPTS"}
    proc = run_pytest(repo, "-p", "no:hypothesispytest", env=env)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "genstamp: evidence not written" not in proc.stdout + proc.stderr
    assert "genstamp gate: bound to tree" in proc.stdout, proc.stdout
    assert rules(repo) == []
    failing = {**env, "CALC_FAIL": "1"}
    assert run_pytest(repo, "-p", "no:hypothesispytest", env=failing).returncode == 1
    assert rules(repo) == ["tests-failed"]


@pytest.mark.parametrize("how", ["every test skips", "no test at all"])
def test_a_run_that_executes_no_test_is_told_the_gate_refuses_it(fresh: Path, how: str) -> None:
    """pytest ends green (every test skipped) or with nothing collected: the gate refuses
    `no-tests`, and the plugin says so at test time rather than that the gate accepts."""
    if how == "every test skips":
        (fresh / "tests" / "conftest.py").write_text(
            "import pytest\n\n\ndef pytest_runtest_setup(item):\n    pytest.skip('not here')\n"
        )
    else:
        for test in (fresh / "tests").glob("test_*.py"):
            test.write_text("")
    proc = run_pytest(fresh)
    assert proc.returncode == (0 if how == "every test skips" else 5), proc.stdout
    assert rules(fresh) == ["no-tests"]
    assert "genstamp gate: will refuse: no-tests" in proc.stdout, proc.stdout
    assert "genstamp gate: bound to tree" not in proc.stdout


def test_full_paths_are_not_partial(shared: Path) -> None:
    """Naming the configured test path (or the root) is the whole suite."""
    for args in (["tests"], ["."]):
        proc = run_pytest(shared, *args)
        assert proc.returncode == 0, proc.stdout
        assert report_of(shared).properties[evidence.P_SELECTION] == "full", args
        assert rules(shared) == []


@pytest.mark.parametrize(
    "started_in",
    ["a-plain-folder", "another-repository", "a-repository-holding-it", "a-repository-inside-it"],
)
def test_a_run_started_outside_the_work_tree_binds_the_checkout_it_collects(
    fresh: Path, tmp_path: Path, started_in: str
) -> None:
    """`cd ~ && pytest ~/proj/tests` tests proj: its evidence is proj's. Found from the folder
    pytest started in, it was bound nowhere (no-evidence, and the remedy, followed, refused
    again) or, started in another repository, bound into that one; so too where that one
    holds proj (`~` a repository of dotfiles) or proj holds it (a nested repository, a
    submodule: libgit2 opened the one pytest started in, and no evidence was written). The
    control: one file of the suite run from there is a part of it, no more."""
    elsewhere = tmp_path / "elsewhere"
    if started_in == "another-repository":
        init_repo(elsewhere)
    elif started_in == "a-repository-holding-it":
        elsewhere = init_repo(tmp_path)  # fresh is tmp_path/repo: a repository inside it
    elif started_in == "a-repository-inside-it":
        elsewhere = init_repo(fresh / "vendor" / "lib")
        (fresh / ".git" / "info").mkdir(exist_ok=True)
        (fresh / ".git" / "info" / "exclude").write_text("vendor/\n")
    else:
        elsewhere.mkdir()
    proc = run_python(elsewhere, "-m", "pytest", "-q", str(fresh / "tests"))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert report_of(fresh).properties[evidence.P_SELECTION] == "full"
    assert rules(fresh) == []
    assert not (elsewhere / ".git" / "genstamp").exists()
    restamp.begin(open_checkout(fresh))
    proc = run_python(elsewhere, "-m", "pytest", "-q", str(fresh / "tests" / "test_calc.py"))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert rules(fresh) == ["partial-run"]
    assert not (elsewhere / ".git" / "genstamp").exists()


@pytest.mark.parametrize("workers", [(), ("-n", "2")])
def test_last_failed_is_partial(fresh: Path, workers: tuple[str, ...]) -> None:
    """Also under xdist, where each worker's --lf leaves the files out."""
    first = run_pytest(fresh, env=fail_env())
    assert first.returncode == 1
    proc = run_pytest(fresh, "--lf", *workers)
    assert proc.returncode == 0, proc.stdout
    report = report_of(fresh)
    assert report.counts.tests == 1  # only the one that failed ran
    assert report.properties[evidence.P_SELECTION] == "partial"
    assert "2 files collected in part" in report.properties[evidence.P_SELECTION_REASONS]
    assert rules(fresh, junit=evidence_path(fresh)) == ["partial-run"]
    # merged with the red run it followed (same generation, same tree): the test that failed
    # there and passed here is a disagreement, and the rest is still covered
    assert rules(fresh) == ["tests-failed", "parts-disagree"]


def test_collection_error_is_partial(fresh: Path) -> None:
    (fresh / "tests" / "test_broken.py").write_text("import no_such_module_anywhere\n")
    commit_all(fresh, "broken")
    restamp.begin(open_checkout(fresh))
    proc = run_pytest(fresh)
    assert proc.returncode == run_pytest(fresh, "-p", "no:genstamp").returncode == 2
    no_traceback(proc)
    props = report_of(fresh).properties
    assert props[evidence.P_SELECTION] == "partial"
    assert "1 collection error" in props[evidence.P_SELECTION_REASONS]
    assert rules(fresh) == ["tests-failed", "partial-run"]


def test_allow_partial_makes_partial_run_count(tmp_path: Path) -> None:
    repo = build(tmp_path / "repo", pyproject_extra="\n[tool.genstamp]\nallow-partial = true\n")
    proc = run_pytest(repo, "-k", "add")
    assert proc.returncode == 0, proc.stdout
    props = report_of(repo).properties
    assert props[evidence.P_SELECTION] == "partial"  # still recorded as it was
    assert "deselected (tests/test_calc.py::test_extra" in props[evidence.P_SELECTION_REASONS]
    assert rules(repo) == []


# -- the tree moved under the tests ----------------------------------------------------------------


def _commit_a_test(fresh: Path, name: str, body: str) -> str:
    """Adds ``tests/NAME`` and commits it, begins a generation; git's tree before the run."""
    (fresh / "tests" / name).write_text("from pathlib import Path\n\n\n" + body)
    commit_all(fresh, f"add {name}")
    restamp.begin(open_checkout(fresh))
    return git_tree(fresh)


def test_test_writing_into_the_tree_moves_it(fresh: Path) -> None:
    before = _commit_a_test(
        fresh,
        "test_writer.py",
        "def test_writes():\n"
        "    Path(__file__).with_name('output.txt').write_text('made by a test')\n",
    )
    proc = run_pytest(fresh)
    assert proc.returncode == 0, proc.stdout
    props = report_of(fresh).properties
    assert props[evidence.P_TREE_START] == before
    assert props[evidence.P_TREE_END] == git_tree(fresh) != before
    verdict = verify(open_checkout(fresh))
    assert [f.rule for f in verdict.failures] == ["tree-moved"]
    assert "tests/output.txt" in verdict.failures[0].message


def test_test_writing_only_ignored_files_leaves_the_tree(fresh: Path) -> None:
    """Ignored output (here bytecode and a log) is not in the tree: the watch in the co-process
    counts no event, and the tree at the end is git's, the one at the start."""
    (fresh / ".gitignore").write_text("__pycache__/\n*.py[co]\n*.log\n")
    before = _commit_a_test(
        fresh,
        "test_logger.py",
        "def test_logs():\n"
        "    Path(__file__).with_name('run.log').write_text('made by a test')\n"
        "    (Path(__file__).parent / '__pycache__').mkdir(exist_ok=True)\n",
    )
    proc = run_pytest(fresh)
    assert proc.returncode == 0, proc.stdout
    assert (fresh / "tests" / "run.log").exists()
    props = report_of(fresh).properties
    assert props[evidence.P_TREE_START] == props[evidence.P_TREE_END] == before == git_tree(fresh)
    assert rules(fresh) == []


# -- a hook's claim, settled by the session ------------------------------------------------------

# Loaded with -p: any walk of the work tree the test process makes to settle a claim fails it.
NO_OWN_WALK = """\
import genstamp.restamp


def _walk(*args, **kwargs):
    raise AssertionError("the test process walked the work tree to settle the claim")


genstamp.restamp.tree_identity = _walk
"""


@pytest.mark.parametrize(
    ("edited", "extra"),
    [(False, []), (True, []), (True, ["-n", "2"])],
    ids=["same-tree", "tree-changed", "tree-changed-xdist"],
)
def test_a_hooks_claim_is_settled_with_the_co_process_walk(
    fresh: Path, tmp_path: Path, edited: bool, extra: list[str]
) -> None:
    """A hook (a branch switch, say) left a claim: the session settles it with the tree the
    co-process took at the start, never with a walk of its own, and binds the evidence to the
    generation the claim decides (the same one, or the claim's next when the tree changed).
    xdist's workers start once it is settled: they walk nothing either."""
    checkout = open_checkout(fresh)
    before = generation.current(checkout)
    assert before is not None
    head = git(fresh, "rev-parse", "HEAD")
    if edited:  # by the hook's command, before the hook
        (fresh / "notes.txt").write_text("not committed, not ignored\n")
    claim = generation.claimed(
        before, trigger="post-checkout", changed=True, head=head, scrub=None, now_ns=time.time_ns()
    )
    generation.write(checkout, claim)
    assert claim.pending is not None
    (tmp_path / "spy").mkdir()
    (tmp_path / "spy" / "no_own_walk.py").write_text(NO_OWN_WALK)
    env = subprocess_env(PYTHONPATH=str(tmp_path / "spy"))
    proc = run_pytest(fresh, "-p", "no_own_walk", *extra, env=env)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert genstamp_lines(proc) == [], proc.stdout
    no_traceback(proc)
    settled = generation.stored(checkout)
    assert settled is not None and settled.pending is None
    expected = claim.pending["next"]["id"] if edited else before.id
    assert settled.id == expected
    props = report_of(fresh).properties
    assert props[evidence.P_GENERATION] == settled.id
    assert props[evidence.P_TREE_START] == git_tree(fresh)
    assert rules(fresh) == []


# -- off, and silent outside a repository ---------------------------------------------------------


def test_disabled_plugin_writes_nothing(fresh: Path, tmp_path: Path) -> None:
    mine = tmp_path / "mine.xml"
    proc = run_pytest(fresh, "-p", "no:genstamp", f"--junitxml={mine}")
    assert proc.returncode == 0, proc.stdout
    assert not evidence_path(fresh).exists()
    assert not (open_checkout(fresh).state / "pycache").exists()
    assert evidence.read_report(mine).properties == {}
    assert genstamp_lines(proc) == []
    assert rules(fresh) == ["no-evidence"]


def test_silent_outside_a_git_work_tree(pytester: pytest.Pytester) -> None:
    assert (
        subprocess.run(
            ["git", "rev-parse", "--git-dir"], cwd=pytester.path, capture_output=True
        ).returncode
        != 0
    ), "the pytester folder must not be inside a git work tree"
    pytester.makepyfile(
        test_inside="""
        import os, sys

        def test_plugin_is_loaded_but_idle(request):
            manager = request.config.pluginmanager
            assert manager.has_plugin("genstamp")
            assert not manager.has_plugin("genstamp-session")
            assert sys.pycache_prefix is None
            assert "PYTHONPYCACHEPREFIX" not in os.environ
            assert not request.config.option.xmlpath
        """
    )
    result = pytester.runpytest_subprocess()
    result.assert_outcomes(passed=1)
    assert "genstamp:" not in result.stdout.str() + result.stderr.str()
    assert sorted(p.name for p in pytester.path.rglob("*.xml")) == []


# -- bad input: the run keeps its result; one line says why the evidence is missing --------------


def test_unwritable_evidence_location(
    tmp_path: Path, plain_failing: subprocess.CompletedProcess[str]
) -> None:
    blocker = tmp_path / "blocker"
    blocker.write_text("a file where a folder should be\n")
    target = blocker / "evidence.xml"
    repo = build(
        tmp_path / "repo", pyproject_extra=f'\n[tool.genstamp]\nevidence = "{target.as_posix()}"\n'
    )
    plain = plain_failing
    proc = run_pytest(repo, env=fail_env())
    assert plain.returncode == proc.returncode == 1
    assert summary(proc) == summary(plain) == "1 failed, 3 passed"
    no_traceback(proc)
    lines = genstamp_lines(proc)
    assert len(lines) == 1, proc.stdout + proc.stderr
    assert "evidence not written" in lines[0]
    assert str(blocker) in lines[0]
    assert not evidence_path(repo).exists()


def test_users_junitxml_with_unwritable_evidence_location(tmp_path: Path) -> None:
    blocker = tmp_path / "blocker"
    blocker.write_text("not a folder\n")
    target = blocker / "evidence.xml"
    repo = build(
        tmp_path / "repo", pyproject_extra=f'\n[tool.genstamp]\nevidence = "{target.as_posix()}"\n'
    )
    mine = tmp_path / "mine.xml"
    proc = run_pytest(repo, f"--junitxml={mine}")
    assert proc.returncode == 0
    no_traceback(proc)
    lines = genstamp_lines(proc)
    assert len(lines) == 1, proc.stdout + proc.stderr
    assert str(mine) in lines[0] and str(blocker) in lines[0]
    # the user's own file is still the run's JUnit, bound
    assert evidence.read_report(mine).properties[evidence.P_TREE_END] == git_tree(repo)


def test_read_only_state_folder(fresh: Path) -> None:
    state = open_checkout(fresh).state
    state.chmod(0o500)
    try:
        skip_if_writable(state, "this user (root) writes into a read-only folder")
        plain = run_pytest(fresh, "-p", "no:genstamp")
        proc = run_pytest(fresh)
        assert proc.returncode == plain.returncode == 0
        no_traceback(proc)
        lines = genstamp_lines(proc)
        assert len(lines) == 1
        assert "evidence not written" in lines[0]
        assert str(state) in lines[0]
    finally:
        state.chmod(0o700)


def test_corrupt_stamp(fresh: Path, plain_failing: subprocess.CompletedProcess[str]) -> None:
    stamp = generation.stamp_path(open_checkout(fresh))
    stamp.write_text('{"format": "genstamp-generation", "vers')
    proc = run_pytest(fresh, env=fail_env())
    assert proc.returncode == plain_failing.returncode == 1
    no_traceback(proc)
    lines = genstamp_lines(proc)
    assert len(lines) == 1, proc.stdout + proc.stderr
    assert "unbound" in lines[0] and str(stamp) in lines[0]
    told = f"genstamp gate: will refuse: no-stamp: the generation stamp {stamp} is not valid"
    assert told in proc.stdout, proc.stdout  # what is wrong with it, not "no generation"
    assert "genstamp gate: will refuse: tests-failed" in proc.stdout, proc.stdout
    props = report_of(fresh).properties
    assert props[evidence.P_GENERATION] == evidence.NONE
    assert rules(fresh)[0] == "no-stamp"


def test_repository_disappearing_mid_run(fresh: Path) -> None:
    """A test deletes the repository (.git) under the run: the tree at the end is unknown."""
    (fresh / "tests" / "test_zap.py").write_text(
        "import pathlib, shutil\n\n\ndef test_zap():\n"
        "    shutil.rmtree(pathlib.Path(__file__).parents[1] / '.git')\n"
    )
    proc = run_pytest(fresh)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert summary(proc) == "5 passed"
    no_traceback(proc)
    lines = genstamp_lines(proc)
    assert len(lines) == 1, proc.stdout + proc.stderr
    assert "evidence not written" in lines[0] and "tree at the end is unknown" in lines[0]
    # what pytest wrote where the repository was is no evidence
    left = fresh / ".git" / "genstamp" / "evidence.xml"
    assert not left.exists() or evidence.read_report(left).properties == {}


def test_unreadable_index_leaves_no_earlier_evidence_behind(fresh: Path, tmp_path: Path) -> None:
    """The tree cannot be read (a damaged index): the run keeps its result, one line says why,
    and the evidence of an earlier run at the gate's location does not speak for this one."""
    assert run_pytest(fresh).returncode == 0
    assert rules(fresh) == []  # an earlier, good run
    index = fresh / ".git" / "index"
    good = index.read_bytes()
    index.write_bytes(b"not an index\n")
    try:
        mine = tmp_path / "mine.xml"
        proc = run_pytest(fresh, f"--junitxml={mine}")
        assert proc.returncode == 0
        assert summary(proc) == "4 passed"
        no_traceback(proc)
        lines = genstamp_lines(proc)
        assert len(lines) == 1, proc.stdout + proc.stderr
        assert "evidence not written" in lines[0]
        assert evidence.read_report(mine).properties == {}  # pytest's own file, unbound
        assert not evidence_path(fresh).exists()
    finally:
        index.write_bytes(good)
    assert rules(fresh) == ["no-evidence"]


def test_bad_config_is_one_line(fresh: Path) -> None:
    pyproject = fresh / "pyproject.toml"
    pyproject.write_text(pyproject.read_text() + "\n[tool.genstamp]\nallow-partail = true\n")
    commit_all(fresh, "typo")
    proc = run_pytest(fresh)
    assert proc.returncode == 0
    no_traceback(proc)
    lines = genstamp_lines(proc)
    assert len(lines) == 1, proc.stdout + proc.stderr
    assert "tool.genstamp.allow-partail" in lines[0]
    # the gate stops on it (verify exits 2): the forecast says so, not that verify accepts
    assert "genstamp gate: will refuse: the configuration cannot be read: " in proc.stdout
    assert "accepts it" not in proc.stdout, proc.stdout


def test_failing_run_keeps_its_outcome(
    shared: Path, plain_failing: subprocess.CompletedProcess[str]
) -> None:
    """With and without the plugin: the same exit status and the same summary line."""
    plain = plain_failing
    proc = run_pytest(shared, env=fail_env())
    assert proc.returncode == plain.returncode == 1
    assert summary(proc) == summary(plain) == "1 failed, 3 passed"
    assert rules(shared) == ["tests-failed"]


# -- libgit2 stays out of the test process: a co-process opens the repository ---------------------


def test_checkout_libgit2_opens_elsewhere_is_never_evidence(fresh: Path, tmp_path: Path) -> None:
    """The plugin finds the work tree in pure Python (the nearest .git); libgit2, in the
    co-process, is the authority. When they disagree (core.worktree names another folder), no
    evidence is written, and an earlier run's is removed."""
    assert run_pytest(fresh).returncode == 0
    assert evidence_path(fresh).is_file()
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    git(fresh, "config", "core.worktree", str(elsewhere))
    proc = run_pytest(fresh)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert summary(proc) == "4 passed"
    no_traceback(proc)
    lines = genstamp_lines(proc)
    assert len(lines) == 1 and "evidence not written" in lines[0], proc.stdout + proc.stderr
    assert str(elsewhere) in lines[0]
    assert not evidence_path(fresh).exists()


def test_git_dir_in_the_environment_opens_the_repository_in_process(fresh: Path) -> None:
    """With GIT_DIR set (as git sets it for hooks) the plugin opens the repository itself."""
    env = subprocess_env(GIT_DIR=str(fresh / ".git"))
    proc = run_pytest(fresh, env=env)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert genstamp_lines(proc) == []
    props = report_of(fresh).properties
    assert props[evidence.P_TREE_START] == props[evidence.P_TREE_END] == git_tree(fresh)
    assert props[evidence.P_HEAD] == git(fresh, "rev-parse", "HEAD")
    assert rules(fresh) == []


@pytest.mark.parametrize("how", ["core.worktree", "GIT_WORK_TREE"])
def test_a_git_dir_kept_apart_from_its_work_tree_in_the_environment(
    fresh: Path, tmp_path: Path, how: str
) -> None:
    """The git dir kept apart, named by GIT_DIR, the work tree by ``core.worktree`` or
    GIT_WORK_TREE (a dotfiles set-up): no ``.git`` in the work tree, and pytest run there
    binds its evidence as git reads that environment, which the gate accepts."""
    store = tmp_path / "store.git"
    (fresh / ".git").rename(store)
    env = {"GIT_DIR": str(store)}
    if how == "core.worktree":
        git(store, "config", "core.worktree", str(fresh))  # in the git dir itself
    else:
        env["GIT_WORK_TREE"] = "."
    proc = run_pytest(fresh, env=subprocess_env(**env))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert genstamp_lines(proc) == [], proc.stdout
    assert (store / "genstamp" / "evidence.xml").is_file()
    verdict = run_genstamp(fresh, "verify", env=subprocess_env(**env))
    assert verdict.returncode == 0, verdict.stdout + verdict.stderr


def test_index_changed_by_a_test_is_read_for_the_tree_at_the_end(fresh: Path) -> None:
    """A test that only changes the index (``git add -f`` of an ignored file) moves the tree
    ``git add -A`` would write: the co-process reads the index again for the tree at the end."""
    (fresh / ".gitignore").write_text("__pycache__/\n*.py[co]\nlocal.txt\n")
    (fresh / "tests" / "test_indexer.py").write_text(
        "import subprocess\nfrom pathlib import Path\n\n\ndef test_adds():\n"
        "    root = Path(__file__).parent.parent\n"
        "    subprocess.run(['git', 'add', '-f', 'local.txt'], cwd=root, check=True)\n"
    )
    commit_all(fresh, "a test that changes the index")
    (fresh / "local.txt").write_text("ignored, untracked\n")
    restamp.begin(open_checkout(fresh))
    before = git_tree(fresh)
    proc = run_pytest(fresh)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    props = report_of(fresh).properties
    assert props[evidence.P_TREE_START] == before
    assert props[evidence.P_TREE_END] == git_tree(fresh) != before


def test_linked_worktree_run_from_a_subfolder(fresh: Path, tmp_path: Path) -> None:
    """A linked worktree has a ``.git`` file naming its git dir: found in pure Python from a
    subfolder, confirmed by libgit2, and its evidence bound to that worktree's own git dir."""
    linked = tmp_path / "linked"
    git(fresh, "worktree", "add", "-q", str(linked))
    checkout = open_checkout(linked)
    assert checkout.gitdir != open_checkout(fresh).gitdir
    restamp.begin(checkout)
    proc = run_pytest(linked / "tests")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert genstamp_lines(proc) == []
    props = report_of(linked).properties
    assert props[evidence.P_CHECKOUT] == str(checkout.gitdir)
    assert props[evidence.P_TREE_END] == git_tree(linked)
    assert rules(linked) == []


@pytest.mark.parametrize("args", [["--no-such-option"], ["--version"], ["--help"]])
def test_runs_that_end_before_a_session_leave_nothing_behind(fresh: Path, args: list[str]) -> None:
    """The co-process started when the plugin was registered is stopped when pytest ends
    before a session claims it: no evidence, no traceback, no co-process left running."""
    evidence_path(fresh).unlink(missing_ok=True)
    proc = subprocess.Popen(
        [sys.executable, "-m", "pytest", *args],
        cwd=fresh,
        env=subprocess_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == (4 if args[0].startswith("--no") else 0), out + err
    assert "Traceback (most recent call last)" not in out + err
    assert not evidence_path(fresh).exists()
    for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            words = cmdline.read_bytes().split(b"\0")
        except OSError:
            continue
        helper = any(b"genstamp.coprocess" in w for w in words)
        assert not (helper and os.fsencode(os.path.realpath(fresh)) in words), cmdline.parent


def test_real_paths_resolve_as_realpath_does(tmp_path: Path) -> None:
    """The audit's cached resolver (each folder resolved once, from its parent) gives what
    os.path.realpath gives: through folder links, file links, relative links and ``..``."""
    from genstamp.loader import RealPaths

    (tmp_path / "real" / "sub").mkdir(parents=True)
    (tmp_path / "real" / "sub" / "f.py").write_text("")
    (tmp_path / "link").symlink_to(tmp_path / "real")
    (tmp_path / "real" / "flink.py").symlink_to(tmp_path / "real" / "sub" / "f.py")
    (tmp_path / "real" / "rel").symlink_to("sub")
    (tmp_path / "loop").symlink_to("loop")
    paths = [
        f"{tmp_path}/link/sub/f.py",
        f"{tmp_path}/real/flink.py",
        f"{tmp_path}/link/rel/f.py",
        f"{tmp_path}/link/../real/sub/f.py",
        f"{tmp_path}/loop/x.py",
        f"{tmp_path}/link/sub/",
        "relative/x.py",
        "/",
        *[
            f
            for m in list(sys.modules.values())
            if isinstance(f := getattr(m, "__file__", None), str)
        ][:200],
    ]
    resolve = RealPaths()
    for path in paths * 2:  # the second time from the cache
        assert resolve(path) == os.path.realpath(path), path


LOADERS_TEST = """
import sys


def test_loaders():
    kinds = {{
        name: type(module.__loader__).__name__
        for name, module in sys.modules.items()
        if name.startswith("genstamp.") and name != "genstamp.pytest_plugin"
    }}
    with open({out!r}, "w") as fh:
        fh.write(repr(sorted(kinds.items())))
"""


def test_genstamps_own_modules_load_without_assertion_rewriting(
    shared: Path, tmp_path: Path
) -> None:
    """pytest marks every module of a plugin's distribution for assertion rewriting; its loader
    reads each cached module object by object. The plugin loads genstamp's own modules as the
    interpreter does (they assert nothing a test would)."""
    out = tmp_path / "loaders.txt"
    test = shared / "tests" / "test_loaders.py"
    test.write_text(LOADERS_TEST.format(out=str(out)))
    try:
        proc = run_pytest(shared, "tests/test_loaders.py")
    finally:
        test.unlink()
    assert proc.returncode == 0, proc.stdout + proc.stderr
    kinds = dict(ast.literal_eval(out.read_text()))
    assert {"genstamp.loads", "genstamp.evidence", "genstamp.roots"} <= set(kinds)
    assert set(kinds.values()) == {"SourceFileLoader"}, kinds


ARGUMENT_FORMS = [
    ["-o", "a=b"],
    ["-oa=b"],
    ["-o=a=b"],
    ["--override-ini=a=b"],
    ["--override-ini", "a=b", "-o=c=d"],
    ["-qo", "a=b"],
    ["-qoa=b"],
    ["-qo=a=b"],  # argparse keeps the "=" of a bundled option's own value
    ["-vvo=a=b"],
    ["-ra", "-o=a=b"],
    ["-W=error", "-Wignore::UserWarning", "--pythonwarnings=default"],
    ["-qW=error"],
    ["-c=x.ini"],
    ["-cx.ini"],
    ["--config-file=x.ini"],
    ["--import-mode=importlib"],
    ["--import-mode", "append"],
    ["--log-level=DEBUG", "--log-cli-level", "INFO"],
    ["--log-disable=a", "--log-disable", "b.c"],
    ["--", "-o=a=b", "-W=error"],  # after "--": files, not options
    ["tests", "-o=a=b", "tests/test_x.py::test_y"],
]


@pytest.mark.parametrize("words", ARGUMENT_FORMS)
def test_the_run_s_options_read_as_pytest_s_own_parser_reads_them(words: list[str]) -> None:
    """However an option is written, the plugin reads the value pytest's argument parser
    (argparse) takes from it: the oracle is pytest's own parser, with its options."""
    from _pytest.config import get_config

    from genstamp import overrides

    parser = get_config()._parser
    ns = parser.parse_known_args(words)
    found: dict[str, list[str]] = {}
    for flag, value in overrides.valued(words):
        found.setdefault(flag, []).append(value)
    assert found.get("-o", []) == (ns.override_ini or [])
    assert found.get("-W", []) == (ns.pythonwarnings or [])
    assert found.get("-c", [None])[-1] == ns.inifilename
    assert found.get("--import-mode", ["prepend"])[-1] == ns.importmode
    assert found.get("--log-disable", []) == (ns.logger_disable or [])
    for flag, dest in (("--log-level", "log_level"), ("--log-cli-level", "log_cli_level")):
        assert found.get(flag, [None])[-1] == getattr(ns, dest)


@pytest.mark.parametrize(
    "words",
    [["-p", "no:x"], ["-pno:x"], ["-p=no:x"], ["-qp", "no:x"], ["--", "-p", "no:x"], ["-p", "y"]],
)
def test_a_plugin_option_read_as_pytest_s_plugin_manager_reads_it(words: list[str]) -> None:
    """``-p`` is read by pytest's plugin manager before any parsing (``consider_preparse``):
    the oracle is that reading, as what it blocks."""
    from _pytest.config import PytestPluginManager

    from genstamp import overrides

    manager = PytestPluginManager()
    manager.consider_preparse(words, exclude_only=True)
    read = [v for flag, v in overrides.valued(words) if flag == "-p"]
    blocked = [v[3:] for v in read if v.startswith("no:")]
    for name in ("x", "=no:x", "y"):
        assert manager.is_blocked(name) == (name in blocked), (name, read)


@pytest.mark.parametrize("there", ["notes", "junit", "nothing"])
def test_a_configured_evidence_path_never_replaces_another_file(tmp_path: Path, there: str) -> None:
    """The configured path is the repository's to choose and may name any file of this
    machine: evidence replaces a JUnit report there (an earlier run's), never another file."""
    target = tmp_path / "outside" / "notes.txt"
    target.parent.mkdir()
    if there == "notes":
        target.write_text("my notes, no test report\n")
    elif there == "junit":
        target.write_text('<?xml version="1.0"?>\n<testsuites><testsuite name="p"/></testsuites>\n')
    repo = build(
        tmp_path / "repo", pyproject_extra=f'\n[tool.genstamp]\nevidence = "{target.as_posix()}"\n'
    )
    proc = run_pytest(repo)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    no_traceback(proc)
    if there == "notes":
        assert target.read_text() == "my notes, no test report\n"
        lines = genstamp_lines(proc)
        assert len(lines) == 1 and "holds a file that is no JUnit report" in lines[0], lines
    else:
        assert evidence.read_report(target).properties[evidence.P_TREE_END] == git_tree(repo)


@pytest.mark.e2e
def test_the_oldest_pytest_the_extra_allows_binds_evidence(fresh: Path, tmp_path: Path) -> None:
    """genstamp's ``pytest`` extra allows pytest 7.4: under 7.4.4 (installed beside this
    environment's with ``pip install --target``, first on the path) a run from the top and one
    from a folder below bind evidence the gate accepts (7.4 names the invocation folder's
    source ``INCOVATION_DIR``: no evidence at all was written). The control: a partial run
    under 7.4.4 is refused."""
    target = tmp_path / "pytest-7.4"
    pip = [sys.executable, "-m", "pip", "install", "-q", "--target", str(target)]
    installed = subprocess.run([*pip, "pytest==7.4.4"], capture_output=True, text=True)
    assert installed.returncode == 0, installed.stdout + installed.stderr
    env = subprocess_env(PYTHONPATH=str(target))
    for where in (fresh, fresh / "tests"):
        proc = run_pytest(where, "-p", "no:cacheprovider", env=env)
        assert proc.returncode == 0, proc.stdout + proc.stderr
        version = run_python(where, "-m", "pytest", "--version", env=env)
        assert "7.4.4" in version.stdout + version.stderr
        assert "evidence not written" not in proc.stdout + proc.stderr, proc.stdout
        assert rules(fresh) == [], proc.stdout
    restamp.begin(open_checkout(fresh))  # a generation of its own: no earlier part covers
    proc = run_pytest(fresh / "tests", "test_calc.py", "-p", "no:cacheprovider", env=env)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert rules(fresh) == ["partial-run"]


def test_the_modules_never_seen_to_run_are_those_of_the_tree_and_readable(tmp_path: Path) -> None:
    """The end-of-process check (``_unobserved``): a module of an import root whose source in
    the work tree no process was seen to run is named; not one seen, one imported before the
    recording began, a lazy module or an alias not yet loaded, a module of no root, one
    outside the work tree, nor whatever a test put in sys.modules whose attributes raise (it
    broke the audit); and reading them runs none of their code (a module's __getattr__)."""
    import importlib.util
    import types

    from genstamp.pytest_plugin import _unobserved

    def module(name: str, path: Path) -> types.ModuleType:
        path.write_text("")
        made = types.ModuleType(name)
        made.__file__ = str(path)
        return made

    class Raises:
        def __getattr__(self, name: str) -> object:
            raise RuntimeError(name)

    lazy = module("calc.lazy", tmp_path / "lazy.py")
    lazy.__class__ = importlib.util._LazyModule  # type: ignore[attr-defined]
    touched: list[str] = []  # what reading the modules ran of their code (none may run)

    class Alias(types.ModuleType):  # apipkg's alias imports its target as it is read
        def __getattribute__(self, name: str) -> object:
            touched.append(name)
            raise AttributeError(name)

    alias = Alias("calc.alias")
    (tmp_path / "alias.py").write_text("")
    getter = types.ModuleType("calc.getter")  # a module's own __getattr__ (PEP 562)
    getter.__getattr__ = touched.append  # type: ignore[method-assign]
    outside = tmp_path.parent / f"{tmp_path.name}-outside.py"
    modules = {
        "calc": module("calc", tmp_path / "calc.py"),
        "calc.seen": module("calc.seen", tmp_path / "seen.py"),
        "calc.early": module("calc.early", tmp_path / "early.py"),
        "calc.lazy": lazy,
        "calc.alias": alias,
        "calc.getter": getter,
        "calc.proxy": Raises(),
        "calc.outside": module("calc.outside", outside),
        "other": module("other", tmp_path / "other.py"),
    }
    found = _unobserved(
        modules, {"calc.early": None}, ["calc"], str(tmp_path), {str(tmp_path / "seen.py")}
    )
    assert [(f.kind, f.module, f.path) for f in found] == [
        (audit.FOREIGN, "calc", "<code never seen to run from calc.py>")
    ]
    assert touched == []  # M22 33: apipkg's alias imported its target, then was refused


@pytest.mark.parametrize(
    ("modules", "markers"),
    [
        (['config.addinivalue_line("markers", "timeout(t): fail slow tests")'], {"timeout"}),
        (
            [
                'line = ("order: run in an order " + "of yours")\n'
                'c.addinivalue_line("markers", line)'
            ],
            {"order"},
        ),
        (
            # a list another module of the package holds, looped over
            [
                "from .m import MARKERS\nfor line in MARKERS:\n"
                '    c.addinivalue_line("markers", line)',
                'MARKERS = ["budget(n): fail beyond n", "slowish: a slow test"]',
            ],
            {"budget", "slowish"},
        ),
        # help text that reads as a marker but is registered as none (xdist's --dist help)
        (['parser.addoption("--dist", help="load: load balance by sending tests")'], set()),
    ],
)
def test_the_markers_a_plugin_registers_are_read_from_its_syntax_tree(
    modules: list[str], markers: set[str]
) -> None:
    """The markers `-p no:NAME` leaves deciding nothing: those the plugin's package gives
    ``config.addinivalue_line("markers", …)``, however it names the line."""
    from genstamp.overrides import _registered_markers

    assert _registered_markers([ast.parse(m) for m in modules]) == markers
