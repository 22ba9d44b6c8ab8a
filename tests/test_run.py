"""``genstamp run [--junit PATH] -- COMMAND``: another runner's JUnit file, bound to the generation.

Every scenario runs the real ``genstamp`` command (``python -m genstamp``) in a real repository,
which runs a real test command: pytest with genstamp's plugin off, or a unittest script that
writes its own JUnit XML to ``$GENSTAMP_JUNIT``.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import (
    commit_all,
    git,
    git_tree,
    init_repo,
    run_genstamp,
    run_pytest,
    subprocess_env,
)

from genstamp import evidence, generation, parts, restamp
from genstamp.repo import open_checkout
from genstamp.run import JUNIT_ENV, PYTEST_UNSEEN
from genstamp.verify import verify

pytestmark = pytest.mark.e2e

UNITTEST_RUNNER = '''\
"""Run the unittest suite and write JUnit XML to argv[1], else to $GENSTAMP_JUNIT."""
import os
import shutil
import sys
import unittest
from xml.etree import ElementTree as ET

sys.path.insert(0, "src")


class Result(unittest.TextTestResult):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.cases = []

    def addSuccess(self, test):
        super().addSuccess(test)
        self.cases.append((test, None))

    def addFailure(self, test, err):
        super().addFailure(test, err)
        self.cases.append((test, "failure"))

    def addError(self, test, err):
        super().addError(test, err)
        self.cases.append((test, "error"))


result = unittest.TextTestRunner(resultclass=Result).run(
    unittest.defaultTestLoader.discover("tests", pattern="unit_*.py")
)
suite = ET.Element(
    "testsuite",
    name="unittest",
    tests=str(len(result.cases)),
    failures=str(len(result.failures)),
    errors=str(len(result.errors)),
    skipped="0",
)
for test, kind in result.cases:
    name = test._testMethodName
    case = ET.SubElement(suite, "testcase", classname=type(test).__name__, name=name)
    if kind:
        ET.SubElement(case, kind, message="not ok")
target = sys.argv[1] if len(sys.argv) > 1 else os.environ["GENSTAMP_JUNIT"]
ET.ElementTree(suite).write(target, encoding="utf-8", xml_declaration=True)
sys.exit(0 if result.wasSuccessful() else 1)
'''

UNIT_CALC = """\
import os
import shutil
import unittest

from calc import add


class CalcTest(unittest.TestCase):
    def test_add(self):
        self.assertEqual(add(2, 3), 5)

    def test_flaky(self):
        self.assertFalse(os.environ.get("CALC_FAIL"), "told to fail")
"""

TEST_CALC = """\
import os
import shutil

from calc import add


def test_add():
    assert add(2, 3) == 5


def test_flaky():
    assert not os.environ.get("CALC_FAIL"), "told to fail"
"""


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A stamped project with a pytest suite and a unittest suite (each scenario binds a JUnit
    file; none changes the tree)."""
    return calc_project(tmp_path_factory.mktemp("run") / "repo")


def calc_project(where: Path) -> Path:
    path = init_repo(where)
    (path / "src" / "calc").mkdir(parents=True)
    (path / "src" / "calc" / "__init__.py").write_text("def add(a, b):\n    return a + b\n")
    (path / "tests").mkdir()
    (path / "tests" / "test_calc.py").write_text(TEST_CALC)
    (path / "tests" / "unit_calc.py").write_text(UNIT_CALC)
    (path / "run_unittests.py").write_text(UNITTEST_RUNNER)
    (path / "pyproject.toml").write_text(
        '[tool.pytest.ini_options]\ntestpaths = ["tests"]\npythonpath = ["src"]\n'
    )
    (path / ".gitignore").write_text("__pycache__/\n*.py[co]\n/reports/\n")
    commit_all(path, "calc")
    restamp.begin(open_checkout(path))
    return path


def genstamp_run(
    cwd: Path, *args: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return run_genstamp(cwd, "run", *args, env=env)


def default_evidence(repo: Path) -> Path:
    return evidence.default_path(open_checkout(repo).state)


def rules(repo: Path, junit: Path | None = None) -> list[str]:
    return [f.rule for f in verify(open_checkout(repo), junit=junit).failures]


def genstamp_lines(proc: subprocess.CompletedProcess[str]) -> list[str]:
    return [line for line in proc.stderr.splitlines() if line.startswith("genstamp:")]


def assert_bound(repo: Path, path: Path, command_word: str) -> evidence.Report:
    report = evidence.read_report(path)
    props = report.properties
    gen = generation.current(open_checkout(repo))
    assert gen is not None
    assert props[evidence.P_GENERATION] == gen.id
    tree = git_tree(repo)
    assert props[evidence.P_TREE_START] == props[evidence.P_TREE_END] == tree
    assert props[evidence.P_HEAD] == git(repo, "rev-parse", "HEAD")
    assert props[evidence.P_AUDIT] == "unavailable"
    assert props[evidence.P_RUNNER].startswith("run: ") and command_word in props[evidence.P_RUNNER]
    assert props[evidence.P_SEAL]
    # the gate's own copy is the same file
    assert default_evidence(repo).read_bytes() == path.read_bytes()
    return report


@pytest.mark.parametrize("fail", [False, True], ids=["passing", "failing"])
def test_pytest_without_the_plugin(repo: Path, fail: bool) -> None:
    junit = repo / "reports" / "junit.xml"
    junit.unlink(missing_ok=True)
    command = [
        "--",
        sys.executable,
        "-m",
        "pytest",
        "-q",
        f"--junitxml={junit}",
        "-p",
        "no:genstamp",
    ]
    env = subprocess_env(CALC_FAIL="1") if fail else None
    proc = genstamp_run(repo, "--junit", str(junit), *command, env=env)
    assert proc.returncode == (1 if fail else 0), proc.stdout + proc.stderr  # pytest's status
    assert genstamp_lines(proc) == [
        f"genstamp: {PYTEST_UNSEEN}: the gate refuses it as partial-run"
    ]
    report = assert_bound(repo, junit, "pytest")
    expected_counts = evidence.Counts(tests=2, passed=1 if fail else 2, failed=1 if fail else 0)
    assert report.counts == expected_counts
    # pytest's own JUnit: what it selected is unseen, so `pytest tests/test_a.py` cannot pass
    # for the suite (another runner's command is taken as the suite: the unittest tests)
    expected = ["tests-failed", "partial-run"] if fail else ["partial-run"]
    assert rules(repo) == expected
    assert rules(repo, junit=junit) == expected
    assert PYTEST_UNSEEN in evidence.read_report(junit).properties[evidence.P_SELECTION_REASONS]


@pytest.mark.parametrize(
    ("root", "name", "partial"),
    [
        ('<testsuites name="pytest tests">', "pytest", True),  # pytest 8.4 and later
        ("<testsuites>", "pytest", True),  # earlier pytest
        ("<testsuites>", "unit", True),  # earlier pytest with its own junit_suite_name
        ('<testsuites name="nose2">', "pytest", False),  # another runner's: taken as the suite
    ],
)
def test_pytests_own_junit_of_any_version_is_partial(
    repo: Path, tmp_path: Path, root: str, name: str, partial: bool
) -> None:
    junit = tmp_path / "pytest.xml"
    attrs = 'errors="0" failures="0" skipped="0" tests="1" time="0.1" timestamp="t" hostname="h"'
    xml = (
        f'{root}<testsuite name="{name}" {attrs}>'
        '<testcase classname="tests.test_calc" name="test_add"/></testsuite></testsuites>'
    )
    script = f"import pathlib; pathlib.Path({str(junit)!r}).write_text({xml!r})"
    proc = genstamp_run(repo, "--junit", str(junit), "--", sys.executable, "-c", script)
    assert proc.returncode == 0, proc.stderr
    assert (PYTEST_UNSEEN in proc.stderr) == partial
    assert rules(repo, junit=junit) == (["partial-run"] if partial else [])


def test_the_kept_part_of_a_pytest_run_survives_a_command_that_writes_in_place(
    repo: Path, tmp_path: Path
) -> None:
    """The plugin's evidence is also its generation's kept part (a hard link): a command that
    truncates $GENSTAMP_JUNIT and writes it anew must not turn that part into its own file."""
    gen, _ = restamp.begin(open_checkout(repo))
    assert run_pytest(repo, "-p", "no:cacheprovider").returncode == 0
    kept = parts.listing(open_checkout(repo).state, gen.id)
    assert len(kept) == 1 and rules(repo) == []
    before = kept[0].read_bytes()
    proc = genstamp_run(repo, "--", sys.executable, "run_unittests.py")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert kept[0].read_bytes() == before
    assert_bound(repo, default_evidence(repo), "run_unittests.py")


@pytest.mark.parametrize("fail", [False, True], ids=["passing", "failing"])
def test_unittest_writing_its_own_junit(repo: Path, fail: bool) -> None:
    """No --junit: the command finds where to write in $GENSTAMP_JUNIT (the gate's location)."""
    default_evidence(repo).unlink(missing_ok=True)
    env = subprocess_env(CALC_FAIL="1") if fail else None
    proc = genstamp_run(repo, "--", sys.executable, "run_unittests.py", env=env)
    assert proc.returncode == (1 if fail else 0), proc.stdout + proc.stderr
    assert genstamp_lines(proc) == []
    report = assert_bound(repo, default_evidence(repo), "run_unittests.py")
    assert report.counts.tests == 2
    assert report.counts.failed == (1 if fail else 0)
    assert rules(repo) == (["tests-failed"] if fail else [])


def test_unittest_with_explicit_junit_path(repo: Path, tmp_path: Path) -> None:
    junit = tmp_path / "unit.xml"
    proc = genstamp_run(
        repo, "--junit", str(junit), "--", sys.executable, "run_unittests.py", str(junit)
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert_bound(repo, junit, "run_unittests.py")
    assert rules(repo, junit=junit) == []


def test_a_junit_file_in_the_work_tree_is_the_runs_output(repo: Path) -> None:
    """`--junit report.xml` in the work tree (not ignored): the run's own output, left out of
    the trees the gate compares as the plugin's --junitxml is, the work tree's included."""
    junit = repo / "report.xml"
    try:
        proc = genstamp_run(
            repo, "--junit", "report.xml", "--", sys.executable, "run_unittests.py", str(junit)
        )
        assert proc.returncode == 0, proc.stdout + proc.stderr
        report = evidence.read_report(junit)  # (bound after the tree at the end was taken)
        assert report.properties[evidence.P_OUTPUT] == "report.xml"
        assert rules(repo) == []
        assert rules(repo, junit=junit) == []
    finally:
        junit.unlink(missing_ok=True)


def test_command_sees_the_junit_path(repo: Path, tmp_path: Path) -> None:
    junit = tmp_path / "seen.xml"
    xml = '<testsuite tests="1"><testcase classname="c" name="n"/></testsuite>'
    script = f"import os, pathlib; pathlib.Path(os.environ[{JUNIT_ENV!r}]).write_text({xml!r})"
    proc = genstamp_run(repo, "--junit", str(junit), "--", sys.executable, "-c", script)
    assert proc.returncode == 0, proc.stderr
    assert evidence.read_report(junit).properties[evidence.P_AUDIT] == "unavailable"


# -- no JUnit, or JUnit that is not JUnit: a clear error, a non-zero exit --------------------------


@pytest.mark.parametrize(("status", "expected"), [(0, 2), (3, 3)], ids=["ok-cmd", "failed-cmd"])
def test_missing_junit(repo: Path, tmp_path: Path, status: int, expected: int) -> None:
    junit = tmp_path / "never.xml"
    proc = genstamp_run(
        repo, "--junit", str(junit), "--", sys.executable, "-c", f"raise SystemExit({status})"
    )
    assert proc.returncode == expected
    lines = genstamp_lines(proc)
    assert len(lines) == 1, proc.stderr
    assert "wrote no JUnit file" in lines[0] and str(junit) in lines[0]
    assert f"exit status {status}" in lines[0]
    assert "Traceback" not in proc.stderr


def test_a_command_killed_by_a_signal_exits_as_a_shell_says(repo: Path, tmp_path: Path) -> None:
    """A runner killed by a signal (the OOM killer's SIGKILL): genstamp exits 128 + N, the
    status a shell gives it, not a negative number the system truncates."""
    junit = tmp_path / "never.xml"
    kill = "import os, signal; os.kill(os.getpid(), signal.SIGKILL)"
    proc = genstamp_run(repo, "--junit", str(junit), "--", sys.executable, "-c", kill)
    assert proc.returncode == 137, proc.stderr
    assert "exit status 137" in genstamp_lines(proc)[0]


def test_junit_left_over_from_an_earlier_run_is_not_taken(repo: Path, tmp_path: Path) -> None:
    junit = tmp_path / "old.xml"
    junit.write_text('<testsuite tests="1"><testcase classname="c" name="old"/></testsuite>')
    before = junit.read_bytes()
    proc = genstamp_run(repo, "--junit", str(junit), "--", sys.executable, "-c", "pass")
    assert proc.returncode == 2
    assert "wrote no JUnit file" in proc.stderr
    assert junit.read_bytes() == before  # not bound


@pytest.mark.parametrize(
    ("content", "says"),
    [
        ("this is not xml", "not well-formed"),
        ("", "empty"),
        ("<report><case/></report>", "no <testsuite>"),
        ('<!DOCTYPE t [<!ENTITY a "b">]><testsuite tests="0"/>', "DTD"),
    ],
    ids=["garbage", "empty", "no-suite", "dtd"],
)
def test_malformed_junit(repo: Path, tmp_path: Path, content: str, says: str) -> None:
    junit = tmp_path / "bad.xml"
    script = f"import pathlib; pathlib.Path({str(junit)!r}).write_text({content!r})"
    proc = genstamp_run(repo, "--junit", str(junit), "--", sys.executable, "-c", script)
    assert proc.returncode == 2
    lines = genstamp_lines(proc)
    assert len(lines) == 1, proc.stderr
    assert "cannot be bound" in lines[0] and says in lines[0]
    assert "Traceback" not in proc.stderr


def test_malformed_junit_keeps_a_failing_status(repo: Path, tmp_path: Path) -> None:
    junit = tmp_path / "bad.xml"
    script = f"import pathlib; pathlib.Path({str(junit)!r}).write_text('<'); raise SystemExit(5)"
    proc = genstamp_run(repo, "--junit", str(junit), "--", sys.executable, "-c", script)
    assert proc.returncode == 5
    assert "cannot be bound" in proc.stderr


def test_nested_testsuite_is_bound(repo: Path, tmp_path: Path) -> None:
    """A testsuite below a wrapper element (some reporters nest them) is found, not a crash."""
    junit = tmp_path / "nested.xml"
    xml = '<report><suites><testsuite tests="1"><testcase classname="c" name="n"/></testsuite>'
    xml += "</suites></report>"
    script = f"import pathlib; pathlib.Path({str(junit)!r}).write_text({xml!r})"
    proc = genstamp_run(repo, "--junit", str(junit), "--", sys.executable, "-c", script)
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr
    report = evidence.read_report(junit)
    assert report.properties[evidence.P_GENERATION] != evidence.NONE
    assert rules(repo, junit=junit) == []


def test_command_that_cannot_start(repo: Path) -> None:
    proc = genstamp_run(repo, "--", "no-such-command-genstamp-test")
    assert proc.returncode == 2
    lines = genstamp_lines(proc)
    assert len(lines) == 1 and "cannot run no-such-command-genstamp-test" in lines[0]
    assert "(hint: name a program on PATH" in lines[0]


def test_a_state_file_that_is_no_file_names_what_to_remove(tmp_path: Path) -> None:
    """genstamp's own state damaged (a folder where its JUnit file goes, a file where its
    folder goes): one line, with the remedy, whichever command meets it."""
    repo = init_repo(tmp_path / "repo")
    (repo / "a.txt").write_text("a\n")
    commit_all(repo, "a")
    state = repo / ".git" / "genstamp"
    shutil.rmtree(state, ignore_errors=True)
    (state / "evidence.xml").mkdir(parents=True)
    proc = genstamp_run(repo, "--", sys.executable, "-c", "pass")
    lines = genstamp_lines(proc)
    assert proc.returncode == 2 and len(lines) == 1, proc.stderr
    assert f"(hint: remove {state / 'evidence.xml'}" in lines[0], lines
    shutil.rmtree(state)
    state.write_text("")  # a file where genstamp's folder goes
    for args in (["verify"], ["status"]):
        proc = run_genstamp(repo, *args)
        lines = genstamp_lines(proc)
        assert proc.returncode == 2 and len(lines) == 1, proc.stderr
        assert "(hint: " in lines[0] and "git status" not in lines[0], lines


def test_no_command(repo: Path) -> None:
    proc = genstamp_run(repo, "--")
    assert proc.returncode == 2
    assert "no command to run" in proc.stderr


def test_dash_c_runs_the_command_in_that_folder(repo: Path, tmp_path: Path) -> None:
    """`genstamp -C DIR run` runs the command in DIR, and a relative --junit is DIR's."""
    proc = run_genstamp(
        tmp_path,
        "-C",
        str(repo),
        "run",
        "--junit",
        "reports/c.xml",
        "--",
        sys.executable,
        "run_unittests.py",
        "reports/c.xml",
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert_bound(repo, repo / "reports" / "c.xml", "run_unittests.py")
    assert not (tmp_path / "reports").exists()


@pytest.mark.parametrize("args", [["-k", "add"], []], ids=["partial", "control"])
def test_a_pytest_binding_is_kept(repo: Path, tmp_path: Path, args: list[str]) -> None:
    """pytest with the plugin binds its own evidence: ``run`` never upgrades a partial run."""
    restamp.begin(open_checkout(repo))  # no part of another test's run to merge with
    junit = tmp_path / "junit.xml"
    command = ["--", sys.executable, "-m", "pytest", "-q", f"--junitxml={junit}", *args]
    proc = genstamp_run(repo, "--junit", str(junit), *command)
    assert proc.returncode == 0, proc.stdout + proc.stderr  # pytest's own status
    assert genstamp_lines(proc) == [
        f"genstamp: {junit} is already bound by genstamp's pytest plugin; kept"
    ]
    props = evidence.read_report(default_evidence(repo)).properties
    assert props[evidence.P_RUNNER] == "pytest"
    assert props[evidence.P_AUDIT] != "unavailable"
    assert default_evidence(repo).read_bytes() == junit.read_bytes()
    assert rules(repo) == (["partial-run"] if args else [])


def test_parts_are_kept_per_tree_for_the_newest_trees_and_the_named_generations(
    tmp_path: Path,
) -> None:
    """The same tests run on another tree keep a part of their own; run again on a tree, they
    replace its part; past ``parts.TREES`` trees the oldest go; a generation's folder survives
    a run of another only when named in ``also``."""
    state = tmp_path / "state"
    source = tmp_path / "evidence.xml"
    source.write_text("<testsuites/>")
    trees = [f"{n:02x}" * 20 for n in range(parts.TREES + 2)]
    for n, tree in enumerate(trees):
        path = parts.keep(state, "g1", tree, "k", source, link=False)
        os.utime(path, ns=(n * 10**9, n * 10**9))
    kept = parts.listing(state, "g1")
    assert [p.name.partition(".")[0] for p in kept] == [t[:16] for t in trees[2:]]
    again = parts.keep(state, "g1", trees[-1], "k", source, link=False)
    assert len(parts.listing(state, "g1")) == parts.TREES and again in kept
    parts.keep(state, "g2", trees[0], "k", source, link=False, also=["g1"])
    assert len(parts.listing(state, "g1")) == parts.TREES
    parts.keep(state, "g3", trees[0], "k", source, link=False)
    assert parts.listing(state, "g1") == parts.listing(state, "g2") == []


# -- a run's verdict among the others: its exit status, refuting, kept as a part ------------------

GREEN_CASES = '<testsuite tests="1"><testcase classname="c" name="n"/></testsuite>'


@pytest.mark.parametrize("status", [1, 0])
def test_a_command_failing_with_every_case_green_fails_its_run(tmp_path: Path, status: int) -> None:
    """The runner exits 1 though each test case it wrote passed (a browser that crashed after
    the cases were written, a coverage threshold): the run failed, as pytest's session failing
    though no test did is refused. Exit 0: accepted."""
    project = calc_project(tmp_path / "repo")
    junit = tmp_path / "green.xml"
    script = (
        f"import os, pathlib, sys; pathlib.Path(os.environ[{JUNIT_ENV!r}]).write_text("
        f"{GREEN_CASES!r}); sys.exit({status})"
    )
    proc = genstamp_run(project, "--junit", str(junit), "--", sys.executable, "-c", script)
    assert proc.returncode == status, proc.stderr
    assert rules(project, junit=junit) == (["tests-failed"] if status else [])
    if status:
        failures = verify(open_checkout(project), junit=junit).failures
        assert "the command exits with status 1 though no test case failed" in failures[0].message


def switched(project: Path, branch: str, *args: str) -> None:
    """``git checkout``, with genstamp's post-checkout as the plain hooks run it: the
    generation ends (the branch's tree differs)."""
    old = git(project, "rev-parse", "HEAD")
    git(project, "checkout", "-q", *args, branch)
    new = git(project, "rev-parse", "HEAD")
    proc = run_genstamp(project, "hook", "post-checkout", old, new, "1")
    assert proc.returncode == 0, proc.stderr


def push_judged(project: Path, branch: str) -> list[str]:
    """The rules the pre-push hook refuses a push of ``branch`` by (none: accepted)."""
    proc = run_genstamp(project, "verify", "--rev", branch, "--json")
    return [f["rule"] for f in json.loads(proc.stdout)["failures"]]


def test_a_branch_tested_with_genstamp_run_is_vouched_for_once_left(tmp_path: Path) -> None:
    """Test a branch with another runner, switch back, push the branch: the run was kept as a
    part of the generation the checkout ended, which vouches for the branch's tree as the
    plugin's runs do (it was refused as stale-generation)."""
    project = calc_project(tmp_path / "repo")
    switched(project, "feat", "-b")
    (project / "src" / "calc" / "extra.py").write_text("X = 1\n")
    commit_all(project, "feat")
    restamp.begin(open_checkout(project))
    proc = genstamp_run(project, "--", sys.executable, "run_unittests.py")
    assert proc.returncode == 0, proc.stderr
    switched(project, "main")
    assert push_judged(project, "feat") == []
    assert push_judged(project, "main") != []  # never tested in this generation's line


# a command that runs the rest of its arguments, then writes a file into the work tree (a
# snapshot tool's `*.received.txt` of a failing test) and exits as they did
LEAVES_A_FILE = (
    "import pathlib, subprocess, sys; status = subprocess.call(sys.argv[1:]); "
    "pathlib.Path('snap.received.txt').write_text('x'); sys.exit(status)"
)


@pytest.mark.parametrize("how", ["control", "writes-a-file", "report-in-the-tree"])
def test_a_failing_run_refutes_an_earlier_pass_of_its_tree(tmp_path: Path, how: str) -> None:
    """pytest passes on the tree, then another runner fails on it: once a checkout ends that
    generation, the older pass no longer speaks for the tree (the run's failure is recorded,
    as the plugin's are), also where the failing run wrote a file into the work tree, so that
    it ended on another tree than the one whose code ran (only that one was recorded), and
    where its JUnit file lies in the work tree, an earlier run's there at its start (the tree
    it began with was recorded with that file, not as the gate compares it)."""
    project = calc_project(tmp_path / "repo")
    junit: list[str] = []
    if how == "report-in-the-tree":
        junit = ["--junit", "report.xml"]
        proc = genstamp_run(project, *junit, "--", sys.executable, "run_unittests.py")
        assert proc.returncode == 0, proc.stderr
    else:
        assert run_pytest(project).returncode == 0
    env = subprocess_env(CALC_FAIL="1")
    command = [sys.executable, "run_unittests.py"]
    if how != "control":
        command = [sys.executable, "-c", LEAVES_A_FILE, *command]
    proc = genstamp_run(project, *junit, "--", *command, env=env)
    assert proc.returncode == 1, proc.stderr
    (project / "snap.received.txt").unlink(missing_ok=True)
    switched(project, "other", "-b")
    (project / "README").write_text("other\n")
    commit_all(project, "other")
    switched(project, "main")
    said = push_judged(project, "main")
    assert said == ["tests-failed"], said


@pytest.mark.parametrize("status", [0, 2])
def test_a_command_failing_after_pytest_bound_its_run_fails_it(tmp_path: Path, status: int) -> None:
    """`genstamp run -- tox`, whose pytest (with the plugin) passed and bound its evidence,
    then whose next step failed (a coverage threshold), or a pytest killed by `timeout`: the
    command failed, and the green evidence pytest bound was accepted. Refused, as a failing
    command is. Control: the command exits 0."""
    project = calc_project(tmp_path / "repo")
    script = (
        "import subprocess, sys; subprocess.run([sys.executable, '-m', 'pytest', '-q']); "
        f"sys.exit({status})"
    )
    proc = genstamp_run(project, "--", sys.executable, "-c", script)
    assert proc.returncode == status, proc.stderr
    assert "already bound by genstamp's pytest plugin" in proc.stderr
    assert rules(project) == (["tests-failed"] if status else [])


def test_a_command_argument_that_is_no_utf8(tmp_path: Path) -> None:
    """An argument of the command that is no UTF-8 (a Latin-1 file name): the run ended in a
    traceback after binding (exit 1, not the command's), its failure never recorded and its
    part never kept. The command's status, and its failure refutes the tree."""
    project = calc_project(tmp_path / "repo")
    assert run_pytest(project).returncode == 0
    script = "import subprocess, sys; sys.exit(3 if subprocess.call(sys.argv[2:]) else 0)"
    command = [sys.executable, "-c", script, os.fsdecode(b"r\xe9sultats")]
    env = subprocess_env(CALC_FAIL="1")
    proc = genstamp_run(project, "--", *command, sys.executable, "run_unittests.py", env=env)
    assert proc.returncode == 3 and "UnicodeEncodeError" not in proc.stderr, proc.stderr
    switched(project, "other", "-b")
    switched(project, "main")
    assert push_judged(project, "main") == ["tests-failed"]
