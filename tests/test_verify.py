"""`genstamp verify`: every rule triggered by a real scenario, and silent on fresh evidence.

Each scenario is a real pytest process (genstamp's plugin installed) in a temporary repository,
then a real change: an edit, a commit, a new stamp, a hand-edited evidence file.
"""

from __future__ import annotations

import json
import os
import py_compile
import re
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest
from conftest import (
    RunGenstamp,
    commit_all,
    git,
    git_tree,
    init_repo,
    run_genstamp,
    run_pytest,
    subprocess_env,
)

from genstamp.verify import PATH_LIMIT, RULES

STATE = Path(".git", "genstamp")


def stamp(genstamp: RunGenstamp, repo: Path) -> dict[str, Any]:
    code, out, err = genstamp("-C", repo, "stamp", "--json")
    assert code == 0, err
    return json.loads(out)["generation"]  # type: ignore[no-any-return]


def run_tests(repo: Path, *args: str, bytecode: bool = False) -> subprocess.CompletedProcess[str]:
    """A real pytest run in ``repo``; the plugin must have written its evidence."""
    proc = run_pytest(repo, *args, bytecode=bytecode)
    assert (repo / STATE / "evidence.xml").is_file(), proc.stdout + proc.stderr
    return proc


def verdict(genstamp: RunGenstamp, repo: Path, *args: str) -> tuple[int, dict[str, Any]]:
    code, out, err = genstamp("-C", repo, "verify", "--json", *args)
    data = json.loads(out)
    assert code == (0 if data["ok"] else 1), (code, out, err)
    return code, data


def rules(data: dict[str, Any]) -> list[str]:
    return [f["rule"] for f in data["failures"]]


def message(data: dict[str, Any], rule: str) -> str:
    found = [f["message"] for f in data["failures"] if f["rule"] == rule]
    assert found, f"{rule} not among {rules(data)}"
    return "\n".join(found)


@pytest.fixture
def fresh(project: Path, genstamp: RunGenstamp) -> Path:
    """The project, stamped, then tested green: the evidence every rule accepts."""
    stamp(genstamp, project)
    proc = run_tests(project)
    assert proc.returncode == 0, proc.stdout
    return project


# -- fresh evidence: silent ---------------------------------------------------------------------


def test_fresh_evidence_is_accepted(fresh: Path, genstamp: RunGenstamp) -> None:
    code, data = verdict(genstamp, fresh)
    assert code == 0
    assert data["ok"] is True
    assert data["failures"] == []
    assert data["tested_tree"] == git_tree(fresh)
    assert data["tests"]["passed"] == 2
    # the human form: nothing on stdout, one acceptance line on stderr
    code, out, err = genstamp("-C", fresh, "verify")
    assert (code, out) == (0, "")
    assert "evidence accepted: 2 passed" in err


def test_fresh_evidence_with_bytecode_writing_enabled_is_accepted(
    project: Path, genstamp: RunGenstamp
) -> None:
    """A run that may write .pyc leaves none in the tree (the plugin redirects it)."""
    stamp(genstamp, project)
    assert run_tests(project, bytecode=True).returncode == 0
    assert not [p for p in project.rglob("*.pyc") if ".git" not in p.parts]
    code, data = verdict(genstamp, project)
    assert code == 0, data


def test_rules_in_json_are_the_documented_ones(fresh: Path, genstamp: RunGenstamp) -> None:
    (fresh / "src" / "calc" / "__init__.py").write_text("def add(a, b):\n    return a - b\n")
    genstamp("-C", fresh, "stamp")
    code, data = verdict(genstamp, fresh)
    assert code == 1
    assert set(data) >= {"ok", "failures"}
    assert data["ok"] is False
    for failure in data["failures"]:
        assert isinstance(failure["rule"], str) and failure["rule"] in RULES
        assert isinstance(failure["message"], str) and failure["message"]
    assert rules(data) == ["stale-generation", "tree-mismatch"]


def test_human_output_is_one_line_per_failing_rule(fresh: Path, genstamp: RunGenstamp) -> None:
    (fresh / "new.txt").write_text("new\n")
    genstamp("-C", fresh, "stamp")
    code, out, _ = genstamp("-C", fresh, "verify")
    assert code == 1
    lines = out.splitlines()
    assert [line.split(":", 1)[0] for line in lines] == ["stale-generation", "tree-mismatch"]
    assert "new.txt" in lines[1]


# -- no-stamp -----------------------------------------------------------------------------------


def test_no_stamp_when_never_stamped(project: Path, genstamp: RunGenstamp) -> None:
    assert run_tests(project).returncode == 0
    code, data = verdict(genstamp, project)
    assert code == 1
    assert "no-stamp" in rules(data)
    assert "generation.json" in message(data, "no-stamp")


@pytest.mark.parametrize("damage", ["truncated", "empty", "not a stamp"])
def test_no_stamp_when_the_stamp_is_corrupt(
    fresh: Path, genstamp: RunGenstamp, damage: str
) -> None:
    path = fresh / STATE / "generation.json"
    raw = path.read_bytes()
    path.write_bytes(
        {"truncated": raw[: len(raw) // 2], "empty": b"", "not a stamp": b'{"a": 1}'}[damage]
    )
    code, data = verdict(genstamp, fresh)
    assert code == 1
    assert rules(data)[0] == "no-stamp"
    assert str(path) in message(data, "no-stamp")


# -- no-evidence ----------------------------------------------------------------------------------


def test_no_evidence_before_any_run(project: Path, genstamp: RunGenstamp) -> None:
    stamp(genstamp, project)
    code, data = verdict(genstamp, project)
    assert (code, rules(data)) == (1, ["no-evidence"])
    assert "evidence.xml" in message(data, "no-evidence")


def test_no_evidence_at_a_given_path(fresh: Path, genstamp: RunGenstamp, tmp_path: Path) -> None:
    code, data = verdict(genstamp, fresh, "--junit", str(tmp_path / "absent.xml"))
    assert (code, rules(data)) == (1, ["no-evidence"])


# -- unbound-evidence -----------------------------------------------------------------------------


def test_unbound_evidence_from_a_run_without_genstamp(
    project: Path, genstamp: RunGenstamp, tmp_path: Path
) -> None:
    stamp(genstamp, project)
    junit = tmp_path / "plain.xml"
    proc = run_pytest(project, "-p", "no:genstamp", f"--junitxml={junit}")
    assert proc.returncode == 0 and junit.is_file()
    code, data = verdict(genstamp, project, "--junit", str(junit))
    assert (code, rules(data)) == (1, ["unbound-evidence"])
    assert "no genstamp binding" in message(data, "unbound-evidence")
    # the same run with genstamp, written to the same path, is bound and accepted
    assert run_pytest(project, f"--junitxml={junit}").returncode == 0
    assert verdict(genstamp, project, "--junit", str(junit))[0] == 0


def _edit_evidence(path: Path, edit: Any) -> None:
    tree = ET.parse(path)
    edit(tree.getroot())
    tree.write(path, encoding="utf-8", xml_declaration=True)


def _suite(root: ET.Element) -> ET.Element:
    return root if root.tag == "testsuite" else root.findall("testsuite")[0]


def _set_property(root: ET.Element, name: str, value: str) -> None:
    for prop in root.iter("property"):
        if prop.get("name") == name:
            prop.set("value", value)
            return
    raise AssertionError(f"no property {name}")


@pytest.fixture
def failing(project: Path, genstamp: RunGenstamp) -> Path:
    """The project with one failing test, stamped and tested: evidence of a red run."""
    test = project / "tests" / "test_calc.py"
    test.write_text(test.read_text().replace("== 5", "== 6"))
    commit_all(project, "break a test")
    stamp(genstamp, project)
    assert run_tests(project).returncode == 1
    return project


def test_evidence_rewritten_without_changes_is_still_accepted(
    fresh: Path, genstamp: RunGenstamp
) -> None:
    """The control for the hand edits below: re-serialising alone is not an edit."""
    _edit_evidence(fresh / STATE / "evidence.xml", lambda root: None)
    assert verdict(genstamp, fresh)[0] == 0


def test_hand_edited_property_is_refused(project: Path, genstamp: RunGenstamp) -> None:
    stamp(genstamp, project)
    assert run_tests(project, "-k", "add").returncode == 0
    assert rules(verdict(genstamp, project)[1]) == ["partial-run"]
    path = project / STATE / "evidence.xml"
    _edit_evidence(path, lambda root: _set_property(root, "genstamp.selection", "full"))
    code, data = verdict(genstamp, project)
    assert code == 1
    assert "unbound-evidence" in rules(data)
    assert "seal" in message(data, "unbound-evidence")


def test_zeroed_failure_count_is_refused(failing: Path, genstamp: RunGenstamp) -> None:
    assert rules(verdict(genstamp, failing)[1]) == ["tests-failed"]

    def whitewash(root: ET.Element) -> None:
        _suite(root).set("failures", "0")
        for case in root.iter("testcase"):
            for child in list(case):
                if child.tag == "failure":
                    case.remove(child)

    _edit_evidence(failing / STATE / "evidence.xml", whitewash)
    code, data = verdict(genstamp, failing)
    assert code == 1
    assert "unbound-evidence" in rules(data)


def test_zeroed_failure_attribute_alone_is_refused(failing: Path, genstamp: RunGenstamp) -> None:
    _edit_evidence(failing / STATE / "evidence.xml", lambda r: _suite(r).set("failures", "0"))
    code, data = verdict(genstamp, failing)
    assert code == 1
    assert "unbound-evidence" in rules(data)


def test_removed_testcase_is_refused(failing: Path, genstamp: RunGenstamp) -> None:
    def drop_failure(root: ET.Element) -> None:
        suite = _suite(root)
        for case in list(suite.iter("testcase")):
            if case.find("failure") is not None:
                suite.remove(case)
        suite.set("failures", "0")
        suite.set("tests", str(int(suite.get("tests", "0")) - 1))

    _edit_evidence(failing / STATE / "evidence.xml", drop_failure)
    code, data = verdict(genstamp, failing)
    assert code == 1
    assert "unbound-evidence" in rules(data)
    assert "tests-failed" not in rules(data)  # the recount found no failure: only the seal did


# -- hostile and broken JUnit files: unbound-evidence, no entity expanded, no traceback ---------


@pytest.fixture(scope="module")
def stamped_once(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A stamped, green-tested project shared by the tests that only read it."""
    repo = init_repo(tmp_path_factory.mktemp("shared") / "repo")
    (repo / "tests").mkdir()
    (repo / "tests" / "test_one.py").write_text("def test_one():\n    assert 1 + 1 == 2\n")
    commit_all(repo, "one test")
    subprocess.run(
        [sys.executable, "-m", "genstamp", "stamp"], cwd=repo, check=True, capture_output=True
    )
    assert run_pytest(repo).returncode == 0
    assert (repo / STATE / "evidence.xml").is_file()
    return repo


LAUGHS = (
    '<?xml version="1.0"?>\n<!DOCTYPE lolz [\n <!ENTITY lol "lol">\n'
    + "".join(
        f' <!ENTITY lol{i} "{("&lol" + (str(i - 1) if i > 1 else "") + ";") * 10}">\n'
        for i in range(1, 10)
    )
    + ']>\n<testsuite name="x" tests="1"><properties>'
    '<property name="genstamp.generation" value="&lol9;"/></properties>'
    '<testcase classname="a" name="b"/></testsuite>\n'
)


def _external(target: str) -> str:
    return (
        f'<?xml version="1.0"?>\n<!DOCTYPE testsuite [<!ENTITY xxe SYSTEM "{target}">]>\n'
        '<testsuite name="x" tests="1"><properties>'
        '<property name="genstamp.generation" value="&xxe;"/></properties>'
        '<testcase classname="a" name="&xxe;"/></testsuite>\n'
    )


def _cli_verify(repo: Path, junit: Path) -> subprocess.CompletedProcess[str]:
    return run_genstamp(repo, "verify", "--junit", str(junit))


@pytest.mark.parametrize(
    "kind",
    [
        "empty",
        "truncated",
        "not-xml",
        "not-junit",
        "entity-bomb",
        "external-entity-passwd",
        "external-entity-marker",
        "enormous",
    ],
)
def test_hostile_or_broken_junit_is_unbound(stamped_once: Path, tmp_path: Path, kind: str) -> None:
    fresh = stamped_once
    good = (fresh / STATE / "evidence.xml").read_text()
    marker = tmp_path / "secret.txt"
    marker.write_text("GENSTAMP-SECRET-MARKER\n")
    junit = tmp_path / "junit.xml"
    if kind == "enormous":
        with junit.open("wb") as fh:  # sparse: the size says enormous, the disk stays empty
            fh.truncate(513 * 1024 * 1024)
    else:
        junit.write_text(
            {
                "empty": "",
                "truncated": good[: len(good) // 2],
                "not-xml": "this is not xml\n",
                "not-junit": '<?xml version="1.0"?>\n<html><body/></html>\n',
                "entity-bomb": LAUGHS,
                "external-entity-passwd": _external("file:///etc/passwd"),
                "external-entity-marker": _external(marker.as_uri()),
            }[kind]
        )
    proc = _cli_verify(fresh, junit)
    output = proc.stdout + proc.stderr
    assert proc.returncode == 1, output
    assert proc.stdout.startswith("unbound-evidence: "), output
    assert len(proc.stdout.splitlines()) == 1, output
    assert "Traceback" not in output
    assert "lollol" not in output
    assert "root:" not in output
    assert "GENSTAMP-SECRET-MARKER" not in output


# -- stale-generation -------------------------------------------------------------------------


def test_stale_generation_after_a_new_stamp(fresh: Path, genstamp: RunGenstamp) -> None:
    before = json.loads((fresh / STATE / "generation.json").read_text())["id"]
    after = stamp(genstamp, fresh)["id"]
    assert after != before
    code, data = verdict(genstamp, fresh)
    assert (code, rules(data)) == (1, ["stale-generation"])
    text = message(data, "stale-generation")
    assert before[:12] in text and after[:12] in text
    # rerunning in the new generation clears it
    assert run_tests(fresh).returncode == 0
    assert verdict(genstamp, fresh)[0] == 0


def test_stale_generation_for_evidence_from_another_checkout(
    fresh: Path, genstamp: RunGenstamp, tmp_path: Path
) -> None:
    other = tmp_path / "other"
    git(tmp_path, "clone", "-q", str(fresh), str(other))
    stamp(genstamp, other)
    code, data = verdict(genstamp, other, "--junit", str(fresh / STATE / "evidence.xml"))
    assert code == 1
    assert rules(data) == ["stale-generation"]
    assert "another checkout" in message(data, "stale-generation")


# -- tree-mismatch ----------------------------------------------------------------------------


def test_tree_mismatch_names_the_edited_file(fresh: Path, genstamp: RunGenstamp) -> None:
    (fresh / "src" / "calc" / "__init__.py").write_text("def add(a, b):\n    return a - b\n")
    code, data = verdict(genstamp, fresh)
    assert (code, rules(data)) == (1, ["tree-mismatch"])
    text = message(data, "tree-mismatch")
    assert "src/calc/__init__.py" in text
    assert git_tree(fresh)[:12] in text


def test_tree_mismatch_names_a_limited_number_of_paths_then_a_count(
    fresh: Path, genstamp: RunGenstamp
) -> None:
    extra = 3
    for i in range(PATH_LIMIT + extra):
        (fresh / f"added_{i:02d}.txt").write_text(f"{i}\n")
    code, data = verdict(genstamp, fresh)
    assert (code, rules(data)) == (1, ["tree-mismatch"])
    text = message(data, "tree-mismatch")
    assert len(re.findall(r"added_\d\d\.txt", text)) == PATH_LIMIT
    assert f"and {extra} more" in text


def test_tree_mismatch_for_a_deleted_untracked_file(project: Path, genstamp: RunGenstamp) -> None:
    (project / "notes.txt").write_text("untracked, but part of the tree\n")
    stamp(genstamp, project)
    assert run_tests(project).returncode == 0
    (project / "notes.txt").unlink()
    code, data = verdict(genstamp, project)
    assert (code, rules(data)) == (1, ["tree-mismatch"])
    assert "notes.txt" in message(data, "tree-mismatch")


def test_ignored_files_do_not_move_the_tree(fresh: Path, genstamp: RunGenstamp) -> None:
    (fresh / ".gitignore").write_text((fresh / ".gitignore").read_text() + "*.log\n")
    commit_all(fresh, "ignore logs")
    stamp(genstamp, fresh)
    assert run_tests(fresh).returncode == 0
    (fresh / "run.log").write_text("noise\n")
    assert verdict(genstamp, fresh)[0] == 0


# -- --rev ----------------------------------------------------------------------------------------


@pytest.fixture
def two_commits(project: Path, genstamp: RunGenstamp) -> Path:
    """HEAD~1 is the original project; HEAD changes calc, and HEAD is what was tested."""
    (project / "src" / "calc" / "__init__.py").write_text("def add(a, b):\n    return b + a\n")
    commit_all(project, "commute")
    stamp(genstamp, project)
    assert run_tests(project).returncode == 0
    return project


def test_rev_judges_the_commit_tree(two_commits: Path, genstamp: RunGenstamp) -> None:
    assert verdict(genstamp, two_commits, "--rev", "HEAD")[0] == 0
    assert verdict(genstamp, two_commits, "--rev", "main")[0] == 0
    code, data = verdict(genstamp, two_commits, "--rev", "HEAD~1")
    assert (code, rules(data)) == (1, ["tree-mismatch"])
    text = message(data, "tree-mismatch")
    assert "HEAD~1" in text and "src/calc/__init__.py" in text
    assert git(two_commits, "rev-parse", "HEAD~1^{tree}")[:12] in text
    assert [t["tree"] for t in data["targets"]] == [git(two_commits, "rev-parse", "HEAD~1^{tree}")]


def test_rev_judges_every_rev_given(two_commits: Path, genstamp: RunGenstamp) -> None:
    code, data = verdict(genstamp, two_commits, "--rev", "HEAD", "--rev", "HEAD~1")
    assert (code, rules(data)) == (1, ["tree-mismatch"])
    assert "HEAD~1" in message(data, "tree-mismatch")
    assert len(data["targets"]) == 2


def test_rev_ignores_the_work_tree(two_commits: Path, genstamp: RunGenstamp) -> None:
    """Uncommitted edits do not matter to --rev: the commit is what gets pushed."""
    (two_commits / "scratch.txt").write_text("not committed\n")
    assert verdict(genstamp, two_commits, "--rev", "HEAD")[0] == 0
    assert verdict(genstamp, two_commits)[0] == 1


def test_rev_refuses_a_commit_that_lacks_tested_uncommitted_changes(
    project: Path, genstamp: RunGenstamp
) -> None:
    (project / "src" / "calc" / "__init__.py").write_text("def add(a, b):\n    return b + a\n")
    stamp(genstamp, project)
    assert run_tests(project).returncode == 0
    assert verdict(genstamp, project)[0] == 0
    code, data = verdict(genstamp, project, "--rev", "HEAD")
    assert code == 1
    assert "src/calc/__init__.py" in message(data, "tree-mismatch")


def test_rev_peels_an_annotated_tag(two_commits: Path, genstamp: RunGenstamp) -> None:
    git(two_commits, "tag", "-a", "v1", "-m", "release", "HEAD")
    git(two_commits, "tag", "-a", "v0", "-m", "older", "HEAD~1")
    assert git(two_commits, "cat-file", "-t", "v1") == "tag"
    assert verdict(genstamp, two_commits, "--rev", "v1")[0] == 0
    code, data = verdict(genstamp, two_commits, "--rev", "v0")
    assert (code, rules(data)) == (1, ["tree-mismatch"])


def test_rev_that_names_nothing_is_a_usage_error(fresh: Path, genstamp: RunGenstamp) -> None:
    code, out, err = genstamp("-C", fresh, "verify", "--rev", "no-such-branch")
    assert code == 2
    assert out == ""
    assert err.startswith("genstamp: ") and "no-such-branch" in err
    assert len(err.splitlines()) == 1


# -- tree-moved -------------------------------------------------------------------------------


def test_tree_moved_when_a_test_writes_into_the_tree(project: Path, genstamp: RunGenstamp) -> None:
    (project / "tests" / "test_writer.py").write_text(
        "from pathlib import Path\n\n\ndef test_writes():\n"
        "    (Path(__file__).parents[1] / 'output.txt').write_text('made by a test')\n"
    )
    commit_all(project, "a test that writes into the tree")
    stamp(genstamp, project)
    assert run_tests(project).returncode == 0
    code, data = verdict(genstamp, project)
    assert (code, rules(data)) == (1, ["tree-moved"])
    assert "output.txt" in message(data, "tree-moved")


# -- stale-bytecode ---------------------------------------------------------------------------


def _compile(source: Path, cfile: Path) -> None:
    cfile.parent.mkdir(parents=True, exist_ok=True)
    py_compile.compile(str(source), cfile=str(cfile), doraise=True)


def test_stale_bytecode_older_than_the_generation(fresh: Path, genstamp: RunGenstamp) -> None:
    gen = json.loads((fresh / STATE / "generation.json").read_text())
    source = fresh / "src" / "calc" / "__init__.py"
    pyc = fresh / "src" / "calc" / "__pycache__" / "__init__.cpython-311.pyc"
    _compile(source, pyc)
    assert verdict(genstamp, fresh)[0] == 0  # new bytecode, written after the stamp
    old = (gen["created_ns"] - 3600 * 10**9) / 1e9
    os.utime(pyc, (old, old))
    code, data = verdict(genstamp, fresh)
    assert (code, rules(data)) == (1, ["stale-bytecode"])
    assert "src/calc/__pycache__/__init__.cpython-311.pyc" in message(data, "stale-bytecode")
    # the remedy works: stamp scrubs it, a fresh run is accepted
    stamp(genstamp, fresh)
    assert not pyc.exists()
    assert run_tests(fresh).returncode == 0
    assert verdict(genstamp, fresh)[0] == 0


def test_stale_bytecode_sourceless_legacy_pyc(project: Path, genstamp: RunGenstamp) -> None:
    """A legacy .pyc beside the package, with no source, that the tests import."""
    legacy = project / "src" / "calc" / "legacy.py"
    legacy.write_text("VALUE = 'from bytecode'\n")
    _compile(legacy, legacy.with_suffix(".pyc"))
    legacy.unlink()
    (project / "tests" / "test_legacy.py").write_text(
        "from calc import legacy\n\n\ndef test_legacy():\n"
        "    assert legacy.VALUE == 'from bytecode'\n"
    )
    commit_all(project, "a test of the legacy module")
    assert git(project, "ls-files", "src/calc") == "src/calc/__init__.py"  # *.pyc is ignored
    genstamp("-C", project, "stamp", "--no-scrub")
    assert run_tests(project).returncode == 0  # plain pytest: green
    code, data = verdict(genstamp, project)
    assert (code, rules(data)) == (1, ["stale-bytecode"])
    text = message(data, "stale-bytecode")
    assert "src/calc/legacy.pyc is sourceless" in text
    assert "calc.legacy" in text  # the audit saw the tests load it


def test_stale_bytecode_the_tests_loaded_from_a_users_pycache_prefix(
    project: Path, genstamp: RunGenstamp, tmp_path: Path
) -> None:
    """The incident: bytecode of an earlier source with the same size and mtime, which CPython
    trusts and plain pytest runs green. With the user's own PYTHONPYCACHEPREFIX the plugin does
    not redirect bytecode; the audit must see what was loaded."""
    prefix = tmp_path / "pycache-prefix"
    source = project / "src" / "calc" / "__init__.py"
    env = subprocess_env(bytecode=True, PYTHONPYCACHEPREFIX=str(prefix))
    subprocess.run(
        [sys.executable, "-c", f"import py_compile; py_compile.compile({str(source)!r})"],
        env=env,
        check=True,
    )
    assert list(prefix.rglob("__init__*.pyc"))
    before = source.stat()
    source.write_text(source.read_text().replace("a + b", "a - b"))  # same size
    os.utime(source, ns=(before.st_atime_ns, before.st_mtime_ns))
    commit_all(project, "the patch")
    stamp(genstamp, project)
    proc = run_pytest(project, env=env)
    assert proc.returncode == 0, proc.stdout  # green, on the old bytecode
    code, data = verdict(genstamp, project)
    assert (code, rules(data)) == (1, ["stale-bytecode"])
    assert "calc" in message(data, "stale-bytecode")
    # without the stale cache the patch's own code runs, and fails
    assert run_pytest(project).returncode == 1


# -- foreign-origin -----------------------------------------------------------------------------


def test_foreign_origin_when_the_package_comes_from_elsewhere(
    project: Path, genstamp: RunGenstamp, tmp_path: Path
) -> None:
    """The checkout's package resolved to another copy (an install of an older checkout)."""
    (project / "pyproject.toml").write_text('[tool.pytest.ini_options]\ntestpaths = ["tests"]\n')
    commit_all(project, "no pythonpath")
    elsewhere = tmp_path / "site" / "calc"
    elsewhere.mkdir(parents=True)
    # an older version of the package: it still passes, but it is not this checkout's code
    (elsewhere / "__init__.py").write_text("def add(a, b):\n    return b + a\n")
    stamp(genstamp, project)
    proc = run_pytest(project, env=subprocess_env(PYTHONPATH=str(elsewhere.parent)))
    assert proc.returncode == 0, proc.stdout
    code, data = verdict(genstamp, project)
    assert (code, rules(data)) == (1, ["foreign-origin"])
    text = message(data, "foreign-origin")
    assert "calc" in text and str(elsewhere) in text
    # loading the checkout's own copy is accepted
    proc = run_pytest(project, env=subprocess_env(PYTHONPATH=str(project / "src")))
    assert proc.returncode == 0, proc.stdout
    assert verdict(genstamp, project)[0] == 0


# -- tests-failed ---------------------------------------------------------------------------


def test_tests_failed(failing: Path, genstamp: RunGenstamp) -> None:
    code, data = verdict(genstamp, failing)
    assert (code, rules(data)) == (1, ["tests-failed"])
    assert "1 failed" in message(data, "tests-failed")
    assert data["tests"]["failed"] == 1


def test_tests_failed_on_an_error(project: Path, genstamp: RunGenstamp) -> None:
    (project / "tests" / "test_error.py").write_text(
        "import pytest\n\n\n@pytest.fixture\ndef broken():\n    raise RuntimeError('setup')\n\n\n"
        "def test_uses_broken(broken):\n    pass\n"
    )
    stamp(genstamp, project)
    assert run_tests(project).returncode == 1
    code, data = verdict(genstamp, project)
    assert (code, rules(data)) == (1, ["tests-failed"])
    assert "1 errors" in message(data, "tests-failed")


# -- no-tests -------------------------------------------------------------------------------


def test_no_tests_when_all_are_skipped(project: Path, genstamp: RunGenstamp) -> None:
    test = project / "tests" / "test_calc.py"
    test.write_text("import pytest\n\npytestmark = pytest.mark.skip('later')\n" + test.read_text())
    stamp(genstamp, project)
    assert run_tests(project).returncode == 0  # pytest calls an all-skipped run a success
    code, data = verdict(genstamp, project)
    assert (code, rules(data)) == (1, ["no-tests"])
    assert "2 skipped" in message(data, "no-tests")


def test_no_tests_when_none_are_collected(project: Path, genstamp: RunGenstamp) -> None:
    (project / "tests" / "test_calc.py").write_text("# nothing here yet\n")
    stamp(genstamp, project)
    assert run_tests(project).returncode == 5
    code, data = verdict(genstamp, project)
    assert code == 1
    assert "no-tests" in rules(data)


def test_some_skipped_is_not_no_tests(project: Path, genstamp: RunGenstamp) -> None:
    test = project / "tests" / "test_calc.py"
    test.write_text(
        "import pytest\n"
        + test.read_text().replace("def test_other", "@pytest.mark.skip\ndef test_other")
    )
    stamp(genstamp, project)
    assert run_tests(project).returncode == 0
    assert verdict(genstamp, project)[0] == 0


# -- partial-run ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "reason"),
    [
        (("-k", "add"), "-k add"),
        (("tests/test_calc.py::test_add",), "node id"),
        (("-m", "slow"), "-m slow"),
    ],
)
def test_partial_run(
    project: Path, genstamp: RunGenstamp, args: tuple[str, ...], reason: str
) -> None:
    stamp(genstamp, project)
    proc = run_tests(project, *args)
    assert proc.returncode in (0, 5), proc.stdout
    code, data = verdict(genstamp, project)
    assert code == 1
    assert "partial-run" in rules(data)
    assert reason in message(data, "partial-run")


def test_partial_run_stopped_early(project: Path, genstamp: RunGenstamp) -> None:
    test = project / "tests" / "test_calc.py"
    test.write_text(test.read_text().replace("== 5", "== 6"))
    stamp(genstamp, project)
    assert run_tests(project, "-x").returncode == 1
    data = verdict(genstamp, project)[1]
    assert rules(data) == ["tests-failed", "partial-run"]


def test_partial_run_allowed_by_configuration(project: Path, genstamp: RunGenstamp) -> None:
    pyproject = project / "pyproject.toml"
    pyproject.write_text(pyproject.read_text() + "\n[tool.genstamp]\nallow-partial = true\n")
    stamp(genstamp, project)
    assert run_tests(project, "-k", "add").returncode == 0
    assert verdict(genstamp, project)[0] == 0


def test_full_run_after_a_partial_one_is_accepted(project: Path, genstamp: RunGenstamp) -> None:
    stamp(genstamp, project)
    assert run_tests(project, "-k", "add").returncode == 0
    assert verdict(genstamp, project)[0] == 1
    assert run_tests(project).returncode == 0
    assert verdict(genstamp, project)[0] == 0


# -- repositories of every shape ----------------------------------------------------------------


def test_linked_worktree(fresh: Path, genstamp: RunGenstamp, tmp_path: Path) -> None:
    wt = tmp_path / "wt"
    git(fresh, "worktree", "add", "-q", "-b", "side", str(wt))
    stamp(genstamp, wt)
    assert run_tests_in(wt).returncode == 0
    assert verdict(genstamp, wt)[0] == 0
    # each worktree has its own generation: the main one's evidence is still fresh
    assert verdict(genstamp, fresh)[0] == 0


def run_tests_in(wt: Path) -> subprocess.CompletedProcess[str]:
    gitdir = Path(git(wt, "rev-parse", "--absolute-git-dir"))
    proc = run_pytest(wt)
    assert (gitdir / "genstamp" / "evidence.xml").is_file(), proc.stdout + proc.stderr
    return proc


def test_detached_head(fresh: Path, genstamp: RunGenstamp) -> None:
    git(fresh, "checkout", "-q", "--detach")
    assert verdict(genstamp, fresh, "--rev", "HEAD")[0] == 0


def test_repository_without_commits(repo: Path, genstamp: RunGenstamp) -> None:
    (repo / "tests").mkdir()
    (repo / "tests" / "test_one.py").write_text("def test_one():\n    pass\n")
    stamp(genstamp, repo)
    assert run_pytest(repo).returncode == 0
    assert verdict(genstamp, repo)[0] == 0
    code, _, err = genstamp("-C", repo, "verify", "--rev", "HEAD")
    assert code == 2 and err.startswith("genstamp: ") and "HEAD" in err


def test_a_file_name_that_is_not_utf8_is_named_without_a_traceback(fresh: Path) -> None:
    """A strict UTF-8 stdout (PYTHONIOENCODING, or a UTF-8 locale) and a Latin-1 file name."""
    (fresh / os.fsdecode(b"caf\xe9.txt")).write_text("x\n")
    proc = run_genstamp(fresh, "verify", env=subprocess_env(PYTHONIOENCODING="utf-8:strict"))
    assert proc.returncode == 1, proc.stderr
    assert "Traceback" not in proc.stderr
    assert proc.stdout.startswith("tree-mismatch: ")
    assert "caf\\xe9.txt" in proc.stdout


def test_shallow_clone(fresh: Path, genstamp: RunGenstamp, tmp_path: Path) -> None:
    (fresh / "src" / "calc" / "__init__.py").write_text("def add(a, b):\n    return b + a\n")
    commit_all(fresh, "second")
    shallow = tmp_path / "shallow"
    git(tmp_path, "clone", "-q", "--depth", "1", fresh.as_uri(), str(shallow))
    assert git(shallow, "rev-parse", "--is-shallow-repository") == "true"
    stamp(genstamp, shallow)
    assert run_pytest(shallow).returncode == 0
    assert verdict(genstamp, shallow, "--rev", "HEAD")[0] == 0
    code, out, err = genstamp("-C", shallow, "verify", "--rev", "HEAD~1")
    assert (code, out) == (2, "")
    assert err.startswith("genstamp: ") and "shallow clone" in err
