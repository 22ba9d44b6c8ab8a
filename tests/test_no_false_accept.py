"""No false accept: every way evidence can lie about what was tested, built for real (real
repositories, real pytest runs with genstamp's plugin, real git), each refused by its rule.

One table: a row builds the lie, names the rule that must refuse it and a fragment the message
must carry. Two control rows (the evidence as produced, and a plain copy of the checkout) must be
accepted, so a refusal below is the lie's doing and not the harness's. test_verify.py proves each
rule once; this table is the catalogue of lies, several rules' worth each.
"""

from __future__ import annotations

import json
import os
import shutil
import time
import xml.etree.ElementTree as ET
from collections.abc import Callable
from pathlib import Path
from typing import Any, NamedTuple

import pytest
from conftest import RunGenstamp, commit_all, git, git_tree, init_repo, run_pytest

from genstamp import evidence, generation, restamp
from genstamp.repo import open_checkout

STATE = Path(".git", "genstamp")
CALC = Path("src", "calc", "__init__.py")
TEST = Path("tests", "test_calc.py")


def build_project(root: Path, *, red: bool = False) -> Path:
    """A small project, committed, stamped and tested (green, or with one failing test)."""
    repo = init_repo(root)
    write_files(repo, red=red)
    commit_all(repo, "calc")
    stamp(repo)
    proc = run_pytest(repo)
    assert proc.returncode == (1 if red else 0), proc.stdout + proc.stderr
    assert evidence_of(repo).is_file()
    return repo


def write_files(repo: Path, *, red: bool = False) -> None:
    (repo / "src" / "calc").mkdir(parents=True)
    (repo / CALC).write_text("def add(a, b):\n    return a + b\n")
    (repo / "tests").mkdir()
    (repo / TEST).write_text(
        "from calc import add\n\n\ndef test_add():\n"
        f"    assert add(2, 3) == {6 if red else 5}\n\n\n"
        "def test_zero():\n    assert add(0, 0) == 0\n"
    )
    (repo / "pyproject.toml").write_text(
        '[tool.pytest.ini_options]\ntestpaths = ["tests"]\npythonpath = ["src"]\n'
    )
    (repo / ".gitignore").write_text("__pycache__/\n*.py[co]\n")


def stamp(repo: Path) -> str:
    gen, _ = restamp.begin(open_checkout(repo))
    return gen.id


def evidence_of(repo: Path) -> Path:
    return repo / STATE / "evidence.xml"


def copy_checkout(src: Path, dest: Path) -> Path:
    """`cp -a` of a whole checkout: work tree, git dir, stamp and evidence."""
    shutil.copytree(src, dest, symlinks=True)
    return dest


def own_copy(src: Path, dest: Path) -> Path:
    """A copy of a checkout whose evidence is its own, as if its tests had run there (the
    evidence re-bound to the copy's git dir, sealed with its stamp's key): a scratch baseline for
    the rows that lie in other ways."""
    repo = copy_checkout(src, dest)
    path = evidence_of(repo)
    checkout = open_checkout(repo)
    gen = generation.current(checkout)
    assert gen is not None
    props = dict(evidence.read_report(path).properties)
    props.pop(evidence.P_SEAL)
    props[evidence.P_CHECKOUT] = str(checkout.gitdir)
    evidence.bind(path, props, gen.key)
    return repo


def edit_xml(path: Path, edit: Callable[[ET.Element], None]) -> None:
    tree = ET.parse(path)
    edit(tree.getroot())
    tree.write(path, encoding="utf-8", xml_declaration=True)


def set_property(root: ET.Element, name: str, value: str) -> None:
    for prop in root.iter("property"):
        if prop.get("name") == name:
            prop.set("value", value)
            return
    raise AssertionError(f"no property {name}")


def suite(root: ET.Element) -> ET.Element:
    return root if root.tag == "testsuite" else root.findall("testsuite")[0]


class Baselines(NamedTuple):
    green: Path  # stamped, tested green
    red: Path  # stamped, tested with one failure


@pytest.fixture(scope="module")
def baselines(tmp_path_factory: pytest.TempPathFactory) -> Baselines:
    base = tmp_path_factory.mktemp("baselines")
    return Baselines(build_project(base / "green"), build_project(base / "red", red=True))


class Lie(NamedTuple):
    repo: Path  # the checkout to judge
    junit: Path | None = None  # --junit, when the lie is a file elsewhere


Build = Callable[[Baselines, Path], Lie]


# -- the lies ------------------------------------------------------------------------------------


def as_produced(b: Baselines, tmp: Path) -> Lie:
    return Lie(b.green)


def plain_copy(b: Baselines, tmp: Path) -> Lie:
    return Lie(copy_checkout(b.green, tmp / "copy"))


def copied_from_another_checkout(b: Baselines, tmp: Path) -> Lie:
    """A second clone of the same repository, same commit, its own stamp; the first clone's
    green evidence copied into it."""
    other = tmp / "other"
    git(tmp, "clone", "-q", str(b.green), str(other))
    stamp(other)
    shutil.copy(evidence_of(b.green), evidence_of(other))
    return Lie(other)


def copied_from_a_linked_worktree(b: Baselines, tmp: Path) -> Lie:
    """Evidence of the main worktree copied into a linked worktree at the same commit."""
    main = own_copy(b.green, tmp / "main")
    wt = tmp / "wt"
    git(main, "worktree", "add", "-q", "--detach", str(wt))
    stamp(wt)
    wt_state = Path(git(wt, "rev-parse", "--absolute-git-dir")) / "genstamp"
    shutil.copy(evidence_of(main), wt_state / "evidence.xml")
    return Lie(wt)


def _earlier_generation(b: Baselines, tmp: Path, *, touch: bool) -> Lie:
    """Evidence of this very checkout, saved in one generation, restored after a new one
    began (and was tested green)."""
    repo = own_copy(b.green, tmp / "repo")
    assert run_pytest(repo).returncode == 0  # evidence of this checkout, not the original's
    shutil.copy(evidence_of(repo), tmp / "saved.xml")
    stamp(repo)
    assert run_pytest(repo).returncode == 0
    shutil.copy(tmp / "saved.xml", evidence_of(repo))
    if touch:  # a fresh mtime: the file's age is only a hint, never the binding
        later = time.time() + 3600
        os.utime(evidence_of(repo), (later, later))
    return Lie(repo)


def earlier_generation(b: Baselines, tmp: Path) -> Lie:
    return _earlier_generation(b, tmp, touch=False)


def earlier_generation_freshly_touched(b: Baselines, tmp: Path) -> Lie:
    return _earlier_generation(b, tmp, touch=True)


def produced_before_an_edit(b: Baselines, tmp: Path) -> Lie:
    repo = own_copy(b.green, tmp / "repo")
    (repo / CALC).write_text("def add(a, b):\n    return a - b\n")
    return Lie(repo)


def produced_before_a_new_file(b: Baselines, tmp: Path) -> Lie:
    repo = own_copy(b.green, tmp / "repo")
    (repo / "src" / "calc" / "extra.py").write_text("SURPRISE = True\n")
    return Lie(repo)


def produced_before_a_commit_and_amend(b: Baselines, tmp: Path) -> Lie:
    """Tested, then the commit amended with an untested change: the work tree is the amend."""
    repo = own_copy(b.green, tmp / "repo")
    (repo / TEST).write_text((repo / TEST).read_text() + "\n# amended\n")
    git(repo, "commit", "-q", "-a", "--amend", "--no-edit")
    return Lie(repo)


def tree_property_forged_to_the_edit(b: Baselines, tmp: Path) -> Lie:
    """Edited after the run, then the evidence's tree properties set to the edited tree (as
    git computes it): the tree now 'matches', the seal does not."""
    repo = own_copy(b.green, tmp / "repo")
    (repo / CALC).write_text("def add(a, b):\n    return a - b\n")
    tree = git_tree(repo)

    def forge(root: ET.Element) -> None:
        set_property(root, "genstamp.tree.start", tree)
        set_property(root, "genstamp.tree.end", tree)

    edit_xml(evidence_of(repo), forge)
    return Lie(repo)


def generation_property_forged_to_the_current(b: Baselines, tmp: Path) -> Lie:
    """Evidence of an earlier generation relabelled with the current generation's id."""
    repo = own_copy(b.green, tmp / "repo")
    current = stamp(repo)
    edit_xml(evidence_of(repo), lambda root: set_property(root, "genstamp.generation", current))
    return Lie(repo)


def selection_forged_to_full(b: Baselines, tmp: Path) -> Lie:
    repo = own_copy(b.green, tmp / "repo")
    assert run_pytest(repo, "-k", "zero").returncode == 0
    edit_xml(evidence_of(repo), lambda root: set_property(root, "genstamp.selection", "full"))
    return Lie(repo)


def failure_count_zeroed(b: Baselines, tmp: Path) -> Lie:
    junit = tmp / "junit.xml"
    shutil.copy(evidence_of(b.red), junit)

    def whitewash(root: ET.Element) -> None:
        suite(root).set("failures", "0")
        for case in root.iter("testcase"):
            for child in list(case):
                if child.tag == "failure":
                    case.remove(child)

    edit_xml(junit, whitewash)
    return Lie(b.red, junit)


def failing_testcase_removed(b: Baselines, tmp: Path) -> Lie:
    junit = tmp / "junit.xml"
    shutil.copy(evidence_of(b.red), junit)

    def drop(root: ET.Element) -> None:
        s = suite(root)
        for case in list(s.iter("testcase")):
            if case.find("failure") is not None:
                s.remove(case)
        s.set("failures", "0")
        s.set("tests", str(int(s.get("tests", "0")) - 1))

    edit_xml(junit, drop)
    return Lie(b.red, junit)


def _bound_then_plain_run(b: Baselines, tmp: Path) -> tuple[Path, Path, bytes]:
    """--junitxml out.xml with genstamp (bound, green), then a later run without genstamp
    that fails, into the same file. Returns the repo, the file and the bound bytes."""
    repo = own_copy(b.green, tmp / "repo")
    junit = tmp / "out.xml"
    assert run_pytest(repo, f"--junitxml={junit}").returncode == 0
    bound = junit.read_bytes()
    assert b"genstamp.seal" in bound
    (repo / TEST).write_text((repo / TEST).read_text().replace("== 5", "== 6"))
    later = run_pytest(repo, "-p", "no:genstamp", f"--junitxml={junit}")
    assert later.returncode == 1 and b"genstamp." not in junit.read_bytes()
    (repo / TEST).write_text((repo / TEST).read_text().replace("== 6", "== 5"))  # tree as tested
    return repo, junit, bound


def junitxml_overwritten_by_a_plain_run(b: Baselines, tmp: Path) -> Lie:
    repo, junit, _ = _bound_then_plain_run(b, tmp)
    return Lie(repo, junit)


def junitxml_partly_overwritten(b: Baselines, tmp: Path) -> Lie:
    """The later run's bytes written over the start of the bound file, without truncating it:
    the bound file's tail (its genstamp properties and seal, if they sit there) survives."""
    repo, junit, bound = _bound_then_plain_run(b, tmp)
    plain = junit.read_bytes()
    assert len(plain) < len(bound)
    junit.write_bytes(plain + bound[len(plain) :])
    return Lie(repo, junit)


def junitxml_truncated(b: Baselines, tmp: Path) -> Lie:
    """A later run killed while it rewrote the file: the bound file cut short."""
    repo, junit, bound = _bound_then_plain_run(b, tmp)
    junit.write_bytes(bound[: len(bound) * 2 // 3])
    return Lie(repo, junit)


def junitxml_testcases_spliced(b: Baselines, tmp: Path) -> Lie:
    """A report tool merged the later (failing, unbound) run's testcases into the bound file,
    keeping its genstamp properties: the binding's seal covers the testcases."""
    repo, junit, bound = _bound_then_plain_run(b, tmp)
    later_cases = list(suite(ET.parse(junit).getroot()).iter("testcase"))
    junit.write_bytes(bound)

    def splice(root: ET.Element) -> None:
        s = suite(root)
        for case in list(s.iter("testcase")):
            s.remove(case)
        s.extend(later_cases)

    edit_xml(junit, splice)
    return Lie(repo, junit)


def another_repository_with_the_same_tree(b: Baselines, tmp: Path) -> Lie:
    """An unrelated repository (its own git init) holding the very same files: git gives it the
    same tree id, but it has its own generation."""
    other = init_repo(tmp / "unrelated")
    write_files(other)
    commit_all(other, "same files, another history")
    assert git_tree(other) == git_tree(b.green)
    assert git(other, "rev-parse", "HEAD") != git(b.green, "rev-parse", "HEAD")
    stamp(other)
    (other / STATE).mkdir(exist_ok=True)
    shutil.copy(evidence_of(b.green), evidence_of(other))
    return Lie(other)


def stamp_removed(b: Baselines, tmp: Path) -> Lie:
    repo = own_copy(b.green, tmp / "repo")
    (repo / STATE / "generation.json").unlink()
    return Lie(repo)


# -- the table -----------------------------------------------------------------------------------


class Row(NamedTuple):
    build: Build
    rules: list[str]  # the verdict's rules, exactly (empty: accepted)
    says: str  # a fragment of the first rule's message
    not_says: str = "\0"  # a fragment it must not carry


def _rows() -> dict[str, Row]:
    calc = CALC.as_posix()
    return {
        "control-as-produced": Row(as_produced, [], ""),
        "plain-copy-of-the-checkout": Row(plain_copy, ["stale-generation"], "another checkout"),
        "copied-from-another-checkout": Row(
            copied_from_another_checkout, ["stale-generation"], "in another checkout"
        ),
        "copied-from-a-linked-worktree": Row(
            copied_from_a_linked_worktree, ["stale-generation"], "in another checkout"
        ),
        "from-an-earlier-generation": Row(
            earlier_generation, ["stale-generation"], "the current one is", "another checkout"
        ),
        "from-an-earlier-generation-freshly-touched": Row(
            earlier_generation_freshly_touched,
            ["stale-generation"],
            "the current one is",
            "predates",  # the binding refused it, not the file's age
        ),
        "produced-before-an-edit": Row(produced_before_an_edit, ["tree-mismatch"], calc),
        "produced-before-a-new-file": Row(
            produced_before_a_new_file, ["tree-mismatch"], "src/calc/extra.py"
        ),
        "produced-before-an-amend": Row(
            produced_before_a_commit_and_amend, ["tree-mismatch"], TEST.as_posix()
        ),
        "hand-edited-tree-property": Row(
            # and the audit saw the tests load calc's old blob, not the forged tree's
            tree_property_forged_to_the_edit,
            ["unbound-evidence", "tree-moved"],
            "seal does not match",
        ),
        "hand-edited-generation-property": Row(
            generation_property_forged_to_the_current, ["unbound-evidence"], "seal"
        ),
        "hand-edited-selection-property": Row(
            selection_forged_to_full, ["unbound-evidence"], "seal"
        ),
        "hand-edited-failure-count-zeroed": Row(failure_count_zeroed, ["unbound-evidence"], "seal"),
        "hand-edited-testcase-removed": Row(failing_testcase_removed, ["unbound-evidence"], "seal"),
        "junitxml-overwritten-by-a-plain-run": Row(
            junitxml_overwritten_by_a_plain_run, ["unbound-evidence"], "no genstamp binding"
        ),
        "junitxml-partly-overwritten": Row(
            junitxml_partly_overwritten, ["unbound-evidence"], "not well-formed"
        ),
        "junitxml-truncated": Row(junitxml_truncated, ["unbound-evidence"], "not well-formed"),
        "junitxml-testcases-spliced": Row(
            junitxml_testcases_spliced, ["unbound-evidence", "tests-failed"], "seal"
        ),
        "another-repository-with-the-same-tree": Row(
            another_repository_with_the_same_tree, ["stale-generation"], "in another checkout"
        ),
        "stamp-removed": Row(stamp_removed, ["no-stamp"], "generation.json"),
    }


ROWS = _rows()


def verdict(genstamp: RunGenstamp, lie: Lie) -> tuple[int, dict[str, Any]]:
    args = ["--junit", str(lie.junit)] if lie.junit else []
    code, out, err = genstamp("-C", lie.repo, "verify", "--json", *args)
    assert "Traceback" not in err
    return code, json.loads(out)


@pytest.mark.parametrize("name", list(ROWS))
def test_every_lie_is_refused_by_its_rule(
    baselines: Baselines, genstamp: RunGenstamp, tmp_path: Path, name: str
) -> None:
    row = ROWS[name]
    lie = row.build(baselines, tmp_path)
    code, data = verdict(genstamp, lie)
    rules = [f["rule"] for f in data["failures"]]
    assert rules == row.rules, data["failures"]
    if not row.rules:
        assert (code, data["ok"]) == (0, True)
        return
    assert (code, data["ok"]) == (1, False)
    first = data["failures"][0]["message"]
    assert row.says in first and row.not_says not in first, first
    # and the human form refuses with the same first rule, one line per rule
    code, out, _ = genstamp(
        "-C", lie.repo, "verify", *(["--junit", lie.junit] if lie.junit else [])
    )
    assert code == 1
    assert [line.split(":", 1)[0] for line in out.splitlines()] == row.rules


def test_a_lie_judged_at_push_time_is_refused_too(
    baselines: Baselines, genstamp: RunGenstamp, tmp_path: Path
) -> None:
    """The pre-push entry judges commits, not the work tree: a commit made after the run (the
    edit the evidence did not see) is refused by tree-mismatch naming the file."""
    lie = produced_before_an_edit(baselines, tmp_path)
    commit_all(lie.repo, "untested edit")
    code, out, _ = genstamp("-C", lie.repo, "verify", "--rev", "HEAD")
    assert code == 1
    assert out.startswith("tree-mismatch: ") and CALC.as_posix() in out
    # the tested commit itself is accepted
    code, _, _ = genstamp("-C", lie.repo, "verify", "--rev", "HEAD~1")
    assert code == 0
