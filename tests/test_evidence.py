"""The JUnit reader and binder: counts, the seal, and hostile files."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from genstamp import evidence
from genstamp.evidence import EvidenceError

KEY = "ab" * 32

JUNIT = """<?xml version="1.0" encoding="utf-8"?>
<testsuites name="pytest tests"><testsuite name="pytest" errors="1" failures="1" skipped="1"
tests="4"><testcase classname="t.m" name="test_ok"/><testcase classname="t.m" name="test_fail">
<failure message="boom">trace</failure></testcase><testcase classname="t.m" name="test_err">
<error message="setup">trace</error></testcase><testcase classname="t.m" name="test_skip">
<skipped message="no"/></testcase></testsuite></testsuites>
"""


@pytest.fixture
def junit(tmp_path: Path) -> Path:
    path = tmp_path / "junit.xml"
    path.write_text(JUNIT)
    return path


def bound(path: Path) -> dict[str, str]:
    evidence.bind(path, {evidence.P_GENERATION: "g" * 32, evidence.P_TREE_END: "t"}, KEY)
    return evidence.read_report(path).properties


def sealed(path: Path) -> bool:
    report = evidence.read_report(path)
    expected = evidence.seal(KEY, report.properties, report)
    return expected == report.properties.get(evidence.P_SEAL)


def test_counts_are_recounted_from_the_testcases(junit: Path) -> None:
    report = evidence.read_report(junit)
    assert report.counts == evidence.Counts(tests=4, passed=1, failed=1, errors=1, skipped=1)
    assert report.declared.failed == 1
    assert report.properties == {}


def test_bind_round_trips_and_seals(junit: Path) -> None:
    props = bound(junit)
    assert props[evidence.P_FORMAT] == evidence.FORMAT
    assert props[evidence.P_GENERATION] == "g" * 32
    assert sealed(junit)
    # Binding again replaces the old binding rather than adding a second one.
    bound(junit)
    assert junit.read_text().count(evidence.P_SEAL) == 1
    assert sealed(junit)


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ('value="gggggggggggggggggggggggggggggggg"', 'value="hhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhh"'),
        ('failures="1"', 'failures="0"'),
        ('<testcase classname="t.m" name="test_ok" />', ""),
        ('<failure message="boom">trace</failure>', ""),
    ],
    ids=["property-changed", "failure-count-zeroed", "testcase-removed", "failure-removed"],
)
def test_a_hand_edit_breaks_the_seal(junit: Path, old: str, new: str) -> None:
    bound(junit)
    text = junit.read_text()
    assert old in text
    junit.write_text(text.replace(old, new, 1))
    assert not sealed(junit)


BOMB = """<?xml version="1.0"?>
<!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">
<!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;">
<!ENTITY lol4 "&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;">]>
<testsuite><testcase classname="a" name="&lol4;"/></testsuite>
"""
QUADRATIC = (
    '<?xml version="1.0"?><!DOCTYPE t [<!ENTITY a "' + "x" * 50_000 + '">]>'
    "<testsuite><testcase name='" + "&a;" * 50_000 + "'/></testsuite>"
)
EXTERNAL = """<?xml version="1.0"?>
<!DOCTYPE t [<!ENTITY xxe SYSTEM "file:///etc/passwd">]>
<testsuite><testcase classname="a" name="&xxe;"/></testsuite>
"""
PARAMETER = """<?xml version="1.0"?>
<!DOCTYPE t [<!ENTITY % p SYSTEM "file:///etc/passwd"> %p;]>
<testsuite/>
"""


@pytest.mark.parametrize(
    ("content", "says"),
    [
        (BOMB.encode(), "DTD"),
        (QUADRATIC.encode(), "DTD"),
        (EXTERNAL.encode(), "DTD"),
        (PARAMETER.encode(), "DTD"),
        (b"", "empty"),
        (JUNIT.encode()[:200], "not well-formed"),
        (bytes(range(256)) * 64, "not well-formed"),
        (b"<html><body>not junit</body></html>", "no <testsuite>"),
        (
            b'<testsuite><properties><property name="genstamp.format" value="1"/>'
            b'<property name="genstamp.format" value="1"/></properties></testsuite>',
            "twice",
        ),
    ],
    ids=[
        "billion-laughs",
        "quadratic-blowup",
        "external-entity",
        "parameter-entity",
        "empty",
        "truncated",
        "binary-garbage",
        "not-junit",
        "duplicate-property",
    ],
)
def test_hostile_or_malformed_files_are_refused(tmp_path: Path, content: bytes, says: str) -> None:
    path = tmp_path / "junit.xml"
    path.write_bytes(content)
    with pytest.raises(EvidenceError) as info:
        evidence.read_report(path)
    assert says in str(info.value)
    assert "passwd" not in str(info.value) and "root:" not in str(info.value)


def test_bind_refuses_a_hostile_file_before_parsing_it(tmp_path: Path) -> None:
    path = tmp_path / "junit.xml"
    path.write_text(EXTERNAL)
    with pytest.raises(EvidenceError):
        evidence.bind(path, {}, KEY)
    assert path.read_text() == EXTERNAL  # untouched


def test_a_file_over_the_limit_is_refused_unread(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "junit.xml"
    path.write_text(JUNIT)
    monkeypatch.setattr(evidence, "MAX_BYTES", 100)
    with pytest.raises(EvidenceError, match="over genstamp's limit"):
        evidence.read_report(path)


@pytest.mark.e2e
def test_a_200_mb_file_is_read_in_bounded_memory(tmp_path: Path) -> None:
    """Streaming: the reader's peak memory does not grow with the file."""
    path = tmp_path / "big.xml"
    with path.open("wb") as fh:
        fh.write(b'<testsuite tests="1"><testcase classname="a" name="b"><system-out>')
        block = b"x" * (1 << 20)
        for _ in range(200):
            fh.write(block)
        fh.write(b"</system-out></testcase></testsuite>")
    script = textwrap.dedent(
        f"""
        import resource, sys
        from pathlib import Path
        from genstamp import evidence
        before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        report = evidence.read_report(Path({str(path)!r}))
        after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        print(report.counts.tests, (after - before) // 1024)
        """
    )
    out = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True, timeout=120
    ).stdout.split()
    assert out[0] == "1"
    assert int(out[1]) < 64, f"reading a 200 MB file grew the process by {out[1]} MiB"


def test_bind_carries_values_xml_cannot_hold(junit: Path) -> None:
    """A -k expression or a path with a control character: shown as #xNN, still sealed."""
    evidence.bind(junit, {evidence.P_SELECTION_REASONS: "-k a\x01b\tc\nd"}, KEY)
    props = evidence.read_report(junit).properties
    assert props[evidence.P_SELECTION_REASONS] == "-k a#x01b\tc\nd"
    assert sealed(junit)
