"""The evidence JUnit the plugin writes itself when the user asked for no --junitxml.

pytest's own junitxml is the oracle: the same suite run with ``--junitxml`` (which the plugin then
binds as it is) must give the same testcases, outcomes and counts as the file genstamp wrote from
the reports. Every file is read back the way the gate reads it (``evidence.read_report``) and its
seal checked with the generation's key.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from conftest import commit_all, init_repo, run_pytest

from genstamp import evidence, generation, junit, restamp
from genstamp.repo import open_checkout
from genstamp.verify import verify

pytestmark = pytest.mark.e2e

SUITE = """\
import pytest


@pytest.fixture
def broken_setup():
    raise RuntimeError("setup went wrong")


@pytest.fixture
def broken_teardown():
    yield
    raise RuntimeError("teardown went wrong")


def test_pass(record_property):
    record_property("odd", "a\\x01b <&> \\"q\\"")


def test_fail():
    assert 1 == 2, "message with \\x07 bell, \\x1b escape and <xml> & \\"quotes\\"\\nsecond line"


def test_long_failure():
    raise ValueError("x" * 100_000)


def test_skip():
    pytest.skip("not \\x0c today")


@pytest.mark.xfail(reason="known bug")
def test_xfail():
    assert False


@pytest.mark.xfail(strict=True, reason="strict")
def test_xpass_strict():
    pass


@pytest.mark.xfail(reason="lenient")
def test_xpass():
    pass


def test_setup_error(broken_setup):
    pass


def test_teardown_error(broken_teardown):
    pass


def test_fail_and_teardown_error(broken_teardown):
    assert False


@pytest.mark.parametrize("value", ["plain", "a::b", "with space", "tab\\there", "é", "[x]"])
def test_param(value):
    pass


class TestGroup:
    def test_method(self):
        pass

    @pytest.mark.parametrize("n", [1, 2])
    def test_param_method(self, n):
        assert n == 1
"""

PYPROJECT = '[tool.pytest.ini_options]\ntestpaths = ["tests"]\n'


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = init_repo(tmp_path_factory.mktemp("junit") / "repo")
    (path / "tests" / "sub").mkdir(parents=True)
    (path / "tests" / "sub" / "test_odd.py").write_text(SUITE)
    (path / "tests" / "test_plain.py").write_text("def test_one():\n    pass\n")
    (path / "pyproject.toml").write_text(PYPROJECT)
    (path / ".gitignore").write_text("__pycache__/\n*.py[co]\n")
    commit_all(path, "suite")
    restamp.begin(open_checkout(path))
    return path


RANK = ("passed", "skipped", "failed", "error")
CHILD = {"skipped": "skipped", "failure": "failed", "error": "error"}


def cases(path: Path) -> list[tuple[str, str, str]]:
    """(classname, name, outcome) of every testcase, outcome as the gate counts it."""
    found = []
    for case in ET.parse(path).getroot().iter("testcase"):
        outcome = "passed"
        for child in case:
            tag = CHILD.get(child.tag)
            if tag and RANK.index(tag) > RANK.index(outcome):
                outcome = tag
        found.append((case.get("classname", ""), case.get("name", ""), outcome))
    return found


def summary(stdout: str) -> str:
    return re.sub(r", \d+ warnings?", "", stdout.splitlines()[-1].split(" in ")[0])


def sealed(path: Path, key: str) -> evidence.Report:
    report = evidence.read_report(path)
    assert report.properties[evidence.P_SEAL] == evidence.seal(key, report.properties, report)
    return report


@pytest.mark.parametrize("extra", [[], ["-n", "2"]], ids=["serial", "xdist"])
def test_written_evidence_matches_pytests_junitxml(
    project: Path, tmp_path: Path, extra: list[str]
) -> None:
    checkout = open_checkout(project)
    gen = generation.current(checkout)
    assert gen is not None
    ours_path = evidence.default_path(checkout.state)

    ours_run = run_pytest(project, *extra)
    assert ours_run.returncode == 1, ours_run.stdout + ours_run.stderr
    assert "Traceback" not in ours_run.stderr
    ours_bytes = ours_path.read_bytes()

    mine = tmp_path / "pytest-junit.xml"
    theirs_run = run_pytest(project, *extra, f"--junitxml={mine}")
    assert theirs_run.returncode == 1
    # both runs report the same to the user (junitxml warns that record_property is not xunit2)
    assert summary(ours_run.stdout) == summary(theirs_run.stdout)
    ours_path.write_bytes(ours_bytes)

    ours = sealed(ours_path, gen.key)
    theirs = sealed(mine, gen.key)
    assert ours.counts == theirs.counts
    assert ours.declared == theirs.declared
    assert ours.counts == evidence.Counts(
        tests=21, passed=11, failed=5, errors=3, skipped=2, xfailed=1
    )
    if not extra:  # one process: the same order, so the same digest
        assert ours.cases_digest == theirs.cases_digest
    assert sorted(cases(ours_path)) == sorted(cases(mine))
    assert ours.properties[evidence.P_TREE_START] == theirs.properties[evidence.P_TREE_START]

    # the gate reads the file genstamp wrote, seal and all: only the failures are held against it
    assert [f.rule for f in verify(checkout).failures] == ["tests-failed"]


def test_written_evidence_content(project: Path) -> None:
    checkout = open_checkout(project)
    proc = run_pytest(project)
    assert proc.returncode == 1
    path = evidence.default_path(checkout.state)
    raw = path.read_bytes()
    root = ET.fromstring(raw)  # well-formed XML 1.0, whatever the messages held
    assert root.tag == "testsuites"
    (suite,) = root.findall("testsuite")
    assert suite[0].tag == "properties"  # the binding first
    assert suite.get("name") == "pytest" and suite.get("hostname") and suite.get("timestamp")
    by_name = {(c.get("classname"), c.get("name")): c for c in suite.iter("testcase")}

    fail = by_name[("tests.sub.test_odd", "test_fail")]
    (failure,) = fail.findall("failure")
    message = failure.get("message", "")
    assert "#x07 bell" in message and "#x1B escape" in message
    assert '<xml> & "quotes"' in message and "\n" in message
    assert "assert 1 == 2" in (failure.text or "")

    long = by_name[("tests.sub.test_odd", "test_long_failure")].find("failure")
    assert long is not None and len(long.text or "") <= junit.TEXT_BUDGET + 200
    assert "characters cut by genstamp" in (long.text or "")
    assert len(long.get("message", "")) <= junit.MESSAGE_BUDGET + 100

    skip = by_name[("tests.sub.test_odd", "test_skip")].find("skipped")
    assert skip is not None and skip.get("type") == "pytest.skip"
    assert skip.get("message") == "not #x0C today"
    xfail = by_name[("tests.sub.test_odd", "test_xfail")].find("skipped")
    assert xfail is not None and xfail.get("type") == "pytest.xfail"
    assert xfail.get("message") == "known bug"
    strict = by_name[("tests.sub.test_odd", "test_xpass_strict")].find("failure")
    assert strict is not None and "XPASS(strict)" in strict.get("message", "")
    assert list(by_name[("tests.sub.test_odd", "test_xpass")]) == []

    setup = by_name[("tests.sub.test_odd", "test_setup_error")].find("error")
    assert setup is not None
    assert setup.get("message", "").startswith('failed on setup with "RuntimeError: setup')
    teardown = by_name[("tests.sub.test_odd", "test_teardown_error")].findall("error")
    assert [e.get("message", "")[:21] for e in teardown] == ["failed on teardown wi"]
    # a failed call and a failed teardown: two testcases, as pytest's junitxml writes them
    both = [c for c in suite.iter("testcase") if c.get("name") == "test_fail_and_teardown_error"]
    assert [child.tag for c in both for child in c] == ["failure", "error"]

    passed = by_name[("tests.sub.test_odd", "test_pass")]
    (prop,) = passed.iter("property")
    assert prop.get("name") == "odd" and prop.get("value") == 'a#x01b <&> "q"'

    names = {name for (classname, name) in by_name if classname == "tests.sub.test_odd"}
    for wanted in ("test_param[plain]", "test_param[a::b]", "test_param[with space]"):
        assert wanted in names
    assert ("tests.sub.test_odd.TestGroup", "test_param_method[2]") in by_name
    assert ("tests.test_plain", "test_one") in by_name
    assert int(suite.get("tests", "0")) == len(list(suite.iter("testcase")))


def test_document_seals_what_the_gate_reads(tmp_path: Path) -> None:
    """Odd node ids and property values (characters XML 1.0 forbids, lone surrogates, quotes,
    line breaks) are written so that the gate reads back exactly what was sealed."""
    recorder = junit.Recorder(suite_name="odd\x00suite", prefix="pre")
    odd = [
        "tests/test_a.py::test_x[\x00\x1f]",
        "tests/test_a.py::TestK::test_y[\r\n\t]",
        "tests/test_b.py::test_z[\"'<&>]",
        "tests/test_b.py::test_s[\udcff\ufffe]",
        "tests/dir.py/test_c.py::test_w",
    ]
    for nodeid, outcome in zip(
        odd, ["passed", "failed", "skipped", "passed", "passed"], strict=True
    ):
        for when in ("setup", "call", "teardown"):
            phase_outcome = outcome if when == "call" else "passed"
            longrepr: object = None
            if phase_outcome == "failed":
                longrepr = "boom \x00 \ud800"
            elif phase_outcome == "skipped":
                longrepr = ("tests/test_b.py", 3, "Skipped: why \x02")
            recorder.test_report(
                pytest.TestReport(nodeid, (nodeid, 0, nodeid), {}, phase_outcome, longrepr, when)
            )
    key = "ab" * 32
    props = {
        evidence.P_CHECKOUT: "/odd\x01path/\"<'&>\n/.git",
        evidence.P_SELECTION_REASONS: "-k \x1b[31mred\r\n",
        "genstamp.other": "\udc80",
    }
    path = tmp_path / "evidence.xml"
    path.write_bytes(recorder.document(props, key))
    report = sealed(path, key)
    assert report.counts == evidence.Counts(tests=5, passed=3, failed=1, skipped=1)
    assert report.properties[evidence.P_CHECKOUT] == "/odd#x01path/\"<'&>\n/.git"
    assert report.properties[evidence.P_SELECTION_REASONS] == "-k #x1B[31mred\r\n"
    assert [(classname, name) for classname, name, _ in cases(path)] == [
        ("pre.tests.test_a", "test_x[#x00#x1F]"),
        ("pre.tests.test_a.TestK", "test_y[\r\n\t]"),
        ("pre.tests.test_b", "test_z[\"'<&>]"),
        ("pre.tests.test_b", "test_s[#xDCFF#xFFFE]"),
        ("pre.tests.dir.py.test_c", "test_w"),
    ]
    # a changed outcome no longer matches the seal
    tampered = (
        path.read_bytes()
        .replace(b"<failure", b"<skipped", 1)
        .replace(b"</failure>", b"</skipped>", 1)
    )
    path.write_bytes(tampered)
    report = evidence.read_report(path)
    assert report.properties[evidence.P_SEAL] != evidence.seal(key, report.properties, report)


def test_setup_only_is_no_test(tmp_path: Path) -> None:
    """Set up and torn down but never called: nothing was tested."""
    recorder = junit.Recorder()
    for when in ("setup", "teardown"):
        recorder.test_report(
            pytest.TestReport("t.py::test_a", ("t.py", 0, "test_a"), {}, "passed", None, when)
        )
    path = tmp_path / "evidence.xml"
    path.write_bytes(recorder.document({}, ""))
    assert sealed(path, "").counts == evidence.Counts()
