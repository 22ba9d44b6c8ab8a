"""`genstamp summary` states only what the gate verified; `verify --summary` refuses a summary
that quotes what the attestations do not say."""

from __future__ import annotations

import html
import re
from pathlib import Path

import pytest
from conftest import RunGenstamp, git
from test_attest import World, rules, shared_world, verdict

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="session")
def world(tmp_path_factory: pytest.TempPathFactory) -> World:
    return shared_world(tmp_path_factory)


@pytest.fixture
def judge(world: World, tmp_path: Path) -> Path:
    where = tmp_path / "judge"
    git(tmp_path, "clone", "-q", str(world.origin), str(where))
    return where


def parts(world: World) -> list[str]:
    return [a for p in world.parts for a in ("--attestation", str(p))]


def summarize(genstamp: RunGenstamp, judge: Path, world: World, tmp_path: Path) -> Path:
    code, out, err = genstamp("-C", judge, "summary", "--rev", "HEAD", *parts(world))
    assert code == 0, out + err
    path = tmp_path / "summary.md"
    path.write_text(out)
    return path


def test_the_summary_states_what_was_verified_and_quotes_the_digests(
    world: World, judge: Path, genstamp: RunGenstamp, tmp_path: Path
) -> None:
    text = summarize(genstamp, judge, world, tmp_path).read_text()
    assert "12 tests: 12 passed, 0 failed, 0 skipped; the whole suite, 3 parts" in text
    from test_attest import payload

    for part in world.parts:
        assert payload(part)["subject"][0]["digest"]["sha256"] in text
    code, data = verdict(genstamp, judge, *parts(world), "--summary", tmp_path / "summary.md")
    assert code == 0, data


def test_one_part_is_said_so_and_verified(
    world: World, judge: Path, genstamp: RunGenstamp, tmp_path: Path
) -> None:
    code, out, err = genstamp("-C", judge, "summary", "--attestation", str(world.full))
    assert code == 0, out + err
    assert "; the whole suite, 1 part\n" in out, out
    (tmp_path / "summary.md").write_text(out)
    args = ("--attestation", str(world.full), "--summary", str(tmp_path / "summary.md"))
    code, data = verdict(genstamp, judge, *args)
    assert code == 0, data


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("12 passed", "13 passed"),
        ("0 failed", "1 failed"),
        ("3 parts", "4 parts"),
        ("12 tests", "120 tests"),
        # markdown's emphasis or code marks between a count and its word hide nothing
        ("12 passed", "**13** passed"),
        ("0 failed", "`1` failed"),
        ("12 tests", "_120_ tests"),
        # characters that show nothing between its digits hide nothing either: a reader sees
        # the number they make (a zero-width space, a word joiner, a soft hyphen)
        ("0 failed", "1\u200b0 failed"),
        ("12 passed", "1\u20603 passed"),
        ("0 failed", "1\u00ad0 failed"),
        ("12 passed", "\uff11\uff13 passed"),  # fullwidth digits
        # digits in groups of three are one number, not two (`1` and `012`, the count)
        ("12 passed", "1,012 passed"),
        ("12 tests", "12\u202f012 tests"),
        ("12 passed", "1 012 passed"),
        # character references show as their characters (`&#x31;&#x33;&nbsp;passed`: 13 passed)
        ("12 passed", "&#x31;&#x33;&nbsp;passed"),
        ("12 tests", "&#49;3 tests"),
    ],
)
def test_a_forged_figure_is_refused(
    old: str, new: str, world: World, judge: Path, genstamp: RunGenstamp, tmp_path: Path
) -> None:
    path = summarize(genstamp, judge, world, tmp_path)
    path.write_text(path.read_text().replace(old, new, 1))
    code, data = verdict(genstamp, judge, *parts(world), "--summary", path)
    assert code == 1 and rules(data) == ["summary-unverified"], data
    shown = html.unescape(new).translate(str.maketrans("", "", "*`_\u200b\u2060\u00ad"))
    shown = re.sub(r"(?<=\d)[,\u202f ](?=\d{3}\b)", "", shown.replace("\uff11\uff13", "13"))
    assert shown.split()[0] in data["failures"][0]["message"], data


@pytest.mark.parametrize("spelled", ["&#60;", "&#x3C;", "&lt;"])
def test_a_reference_to_a_bracket_is_no_tag(
    spelled: str, world: World, judge: Path, genstamp: RunGenstamp, tmp_path: Path
) -> None:
    """`&#60;span 13 tests&#62;` shows as the text `<span 13 tests>`: decoded before the tags
    were taken out, it was taken out as one, and the forged count with it."""
    path = summarize(genstamp, judge, world, tmp_path)
    close = {"&#60;": "&#62;", "&#x3C;": "&#x3E;", "&lt;": "&gt;"}[spelled]
    path.write_text(path.read_text() + f"\n{spelled}span 13 tests{close}\n")
    code, data = verdict(genstamp, judge, *parts(world), "--summary", path)
    assert code == 1 and set(rules(data)) == {"summary-unverified"}, data


TABLE = "| tests | passed | failed |\n| ---: | ---: | ---: |\n| {} | {} | 0 |\n"


@pytest.mark.parametrize(
    ("line", "forged"),
    [
        # a count however it is written: the word first, another form of the word, HTML
        # markup between, a table's column, no word at all
        ("- Passed: {}", True),
        ("- 0 failures, {} passes", True),
        ("- <b>{}</b> passed", True),
        (TABLE.format(12, "{}"), True),
        ("All {} green.", True),
        # the attestations' own numbers under each other's words
        ("| passed | failed |\n| --- | --- |\n| 0 | 12 |\n", True),
        # the same lines with the attestations' own figure
        ("- Passed: {}", False),
        ("- 0 failures, {} passes", False),
        ("- <b>{}</b> passed", False),
        (TABLE.format(12, "{}"), False),
    ],
)
def test_a_count_in_any_form_is_the_attestations_or_refused(
    line: str,
    forged: bool,
    world: World,
    judge: Path,
    genstamp: RunGenstamp,
    tmp_path: Path,
) -> None:
    """Every number a summary states is one of the gate's figures, and a count its own figure
    (12 tests, 12 passed, 0 failed, 3 parts): the forged 13 is refused however it is written,
    and so are true figures under each other's words; the true 12 is accepted in the same
    forms."""
    path = summarize(genstamp, judge, world, tmp_path)
    path.write_text(path.read_text() + "\n" + line.format(13 if forged else 12) + "\n")
    code, data = verdict(genstamp, judge, *parts(world), "--summary", path)
    if forged:
        assert code == 1 and set(rules(data)) == {"summary-unverified"}, data
        said = "13" if "{}" in line else "0 passed"
        assert said in data["failures"][0]["message"], data
    else:
        assert code == 0, data


@pytest.mark.parametrize(
    ("line", "said"),
    [
        # counts spelled out, forged: refused, the figure told in digits
        ("Thirteen tests passed.", "13 passed"),
        ("- Passed: thirteen", "13"),
        ("- Failures: two", "2"),
        ("One test failed.", "1 failed"),
        ("- twenty-one passed", "21 passed"),
        # the attestations' own figures, spelled out; a stray `one` in prose is no figure
        ("Twelve tests passed, none failed, in three parts.", None),
        ("- Failures: none", None),
        ("- twelve passed, zero failed", None),
        ("One more step to the release.", None),
        # what the tests did, before their count: the count of that outcome
        ("Failed 12 tests.", "12 Failed"),
        ("Passing 12 tests, in 3 parts.", None),
        # ... of that count, not the next clause's
        ("No test failed (12 tests).", None),
        ("Nothing failed; 12 tests, 12 passed.", None),
    ],
)
def test_a_count_spelled_out_is_the_attestations_or_refused(
    line: str, said: str | None, world: World, judge: Path, genstamp: RunGenstamp, tmp_path: Path
) -> None:
    """A count in words is a count (12 tests, 12 passed, 0 failed, 3 parts): `3 tests passed`
    counts passes, not tests."""
    path = summarize(genstamp, judge, world, tmp_path)
    path.write_text(path.read_text() + "\n" + line + "\n")
    code, data = verdict(genstamp, judge, *parts(world), "--summary", path)
    if said is not None:
        assert code == 1 and set(rules(data)) == {"summary-unverified"}, data
        assert f"the summary says {said}" in data["failures"][0]["message"], data
    else:
        assert code == 0, data


@pytest.mark.parametrize("mark", ["_", "__", "*", "**"])
def test_an_object_id_in_emphasis_is_an_object_id(
    mark: str, world: World, judge: Path, genstamp: RunGenstamp, tmp_path: Path
) -> None:
    other = "5ffcc79b8373a2f9a5355cbecce869faecfeb292"
    path = summarize(genstamp, judge, world, tmp_path)
    path.write_text(path.read_text() + f"\nmerged as {mark}{other}{mark}\n")
    code, data = verdict(genstamp, judge, *parts(world), "--summary", path)
    assert code == 1 and other in data["failures"][0]["message"], data


def test_a_summary_without_the_attestation_or_naming_other_objects_is_refused(
    world: World, judge: Path, genstamp: RunGenstamp, tmp_path: Path
) -> None:
    forged = tmp_path / "forged.md"
    forged.write_text("## genstamp: verified\n\n- 12 tests: 12 passed\n")
    code, data = verdict(genstamp, judge, *parts(world), "--summary", forged)
    assert code == 1 and rules(data) == ["summary-unverified"], data
    path = summarize(genstamp, judge, world, tmp_path)
    text = path.read_text()
    for other in ("1234567abcdef", "DEADBEEF00"):  # either case
        path.write_text(text + f"\nmerged as {other}\n")
        code, data = verdict(genstamp, judge, *parts(world), "--summary", path)
        assert code == 1 and other in data["failures"][0]["message"], data


def test_no_summary_of_what_the_gate_refuses(
    world: World, judge: Path, genstamp: RunGenstamp
) -> None:
    code, out, _err = genstamp("-C", judge, "summary", "--attestation", world.parts[0])
    assert code == 1 and out.startswith("attestation-partial: "), out
    assert "## genstamp" not in out


def test_a_summary_of_no_source_says_where_to_look(judge: Path, genstamp: RunGenstamp) -> None:
    """Neither ``--attestation`` nor ``--from-notes``: the refusal names both."""
    code, out, _err = genstamp("-C", judge, "summary")
    assert code == 1 and out.startswith("no-attestation: "), out
    assert "--attestation FILE" in out and "--from-notes" in out, out


@pytest.mark.parametrize("rev", ["release-20240115", "commit-id"])
def test_a_summary_of_a_rev_named_by_hex_digits_is_its_own(
    world: World, judge: Path, genstamp: RunGenstamp, tmp_path: Path, rev: str
) -> None:
    """genstamp's own summary of the commit it judged passes its own check, whatever names
    that commit: a branch whose name holds digits (a date), or the commit's id."""
    if rev == "commit-id":
        rev = git(judge, "rev-parse", "HEAD")
    else:
        git(judge, "branch", rev)
    code, out, err = genstamp("-C", judge, "summary", "--rev", rev, *parts(world))
    assert code == 0, out + err
    summary = tmp_path / "summary.md"
    summary.write_text(out)
    code, data = verdict(genstamp, judge, *parts(world), "--summary", summary, rev=rev)
    assert code == 0, data
    forged = tmp_path / "forged.md"
    forged.write_text(out + "\nAlso verified: deadbeefcafe1234\n")
    code, data = verdict(genstamp, judge, *parts(world), "--summary", forged, rev=rev)
    assert code == 1 and "summary-unverified" in rules(data), data
