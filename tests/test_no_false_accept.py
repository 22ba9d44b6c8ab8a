"""No false accept: every way evidence can lie about what was tested, built for real (real
repositories, real pytest runs with genstamp's plugin, real git), each refused by its rule.

One table: a row builds the lie, names the rule that must refuse it and a fragment the message
must carry. Control rows (the evidence as produced, and re-serialised) must be accepted, so a
refusal below is the lie's doing and not the harness's. Every pytest run happens once per module,
in the baselines; the rows copy and edit. test_rules.py proves each rule over facts, and holds the
lies that need no files: evidence of an earlier generation restored, freshly touched or not.
"""

from __future__ import annotations

import json
import shutil
import xml.etree.ElementTree as ET
from collections.abc import Callable
from pathlib import Path
from typing import Any, NamedTuple

import pytest
from conftest import RunGenstamp, commit_all, git, git_tree, init_repo, run_pytest

from genstamp import checkout_id, evidence, generation, restamp
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


def own_copy(src: Path, dest: Path, *, selection: str = "", reasons: str = "") -> Path:
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
    props[evidence.P_CHECKOUT_ID] = checkout_id.current(checkout.gitdir, create=True)
    if selection:
        props[evidence.P_SELECTION] = selection
        props[evidence.P_SELECTION_REASONS] = reasons
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
    # --junitxml with genstamp (bound, green), then a later run without genstamp that failed,
    # into the same file: the checkout (as tested), the bound bytes and the later bytes
    overwritten: Path
    bound: bytes
    plain: bytes


@pytest.fixture(scope="module")
def baselines(tmp_path_factory: pytest.TempPathFactory) -> Baselines:
    base = tmp_path_factory.mktemp("baselines")
    green = build_project(base / "green")
    repo = own_copy(green, base / "overwritten")
    junit = base / "out.xml"
    assert run_pytest(repo, f"--junitxml={junit}").returncode == 0
    bound = junit.read_bytes()
    assert b"genstamp.seal" in bound
    (repo / TEST).write_text((repo / TEST).read_text().replace("== 5", "== 6"))
    later = run_pytest(repo, "-p", "no:genstamp", f"--junitxml={junit}")
    assert later.returncode == 1 and b"genstamp." not in junit.read_bytes()
    (repo / TEST).write_text((repo / TEST).read_text().replace("== 6", "== 5"))  # tree as tested
    return Baselines(green, build_project(base / "red", red=True), repo, bound, junit.read_bytes())


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
    """Evidence of a partial run (as ``-k zero`` binds it) relabelled a full one."""
    repo = own_copy(b.green, tmp / "repo", selection="partial", reasons="-k zero; 1 deselected")
    edit_xml(evidence_of(repo), lambda root: set_property(root, "genstamp.selection", "full"))
    return Lie(repo)


def re_serialised(b: Baselines, tmp: Path) -> Lie:
    """The control for the hand edits: re-serialising alone is not an edit."""
    repo = own_copy(b.green, tmp / "repo")
    edit_xml(evidence_of(repo), lambda root: None)
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


def failure_attribute_zeroed(b: Baselines, tmp: Path) -> Lie:
    junit = tmp / "junit.xml"
    shutil.copy(evidence_of(b.red), junit)
    edit_xml(junit, lambda root: suite(root).set("failures", "0"))
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


def _overwritten(b: Baselines, tmp: Path, content: bytes) -> Lie:
    junit = tmp / "out.xml"
    junit.write_bytes(content)
    return Lie(b.overwritten, junit)


def junitxml_overwritten_by_a_plain_run(b: Baselines, tmp: Path) -> Lie:
    return _overwritten(b, tmp, b.plain)


def junitxml_partly_overwritten(b: Baselines, tmp: Path) -> Lie:
    """The later run's bytes written over the start of the bound file, without truncating it:
    the bound file's tail (its genstamp properties and seal, if they sit there) survives."""
    assert len(b.plain) < len(b.bound)
    return _overwritten(b, tmp, b.plain + b.bound[len(b.plain) :])


def junitxml_truncated(b: Baselines, tmp: Path) -> Lie:
    """A later run killed while it rewrote the file: the bound file cut short."""
    return _overwritten(b, tmp, b.bound[: len(b.bound) * 2 // 3])


def junitxml_testcases_spliced(b: Baselines, tmp: Path) -> Lie:
    """A report tool merged the later (failing, unbound) run's testcases into the bound file,
    keeping its genstamp properties: the binding's seal covers the testcases."""
    later_cases = list(suite(ET.fromstring(b.plain)).iter("testcase"))
    lie = _overwritten(b, tmp, b.bound)

    def splice(root: ET.Element) -> None:
        s = suite(root)
        for case in list(s.iter("testcase")):
            s.remove(case)
        s.extend(later_cases)

    assert lie.junit is not None
    edit_xml(lie.junit, splice)
    return lie


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
    not_says: str | None = None  # a fragment it must not carry


def _rows() -> dict[str, Row]:
    calc = CALC.as_posix()
    return {
        "control-as-produced": Row(as_produced, [], ""),
        "control-re-serialised": Row(re_serialised, [], ""),
        "plain-copy-of-the-checkout": Row(
            # the same generation id: refused for the checkout, not the generation
            plain_copy,
            ["stale-generation"],
            "recorded in another checkout",
            "from generation",
        ),
        "copied-from-another-checkout": Row(
            copied_from_another_checkout,
            ["stale-generation"],
            "in another checkout",
            "recorded in another checkout",  # its own generation: the id differs first
        ),
        "copied-from-a-linked-worktree": Row(
            copied_from_a_linked_worktree, ["stale-generation"], "in another checkout"
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
            ["unbound-evidence", "loaded-not-tested"],
            "seal does not match",
        ),
        "hand-edited-generation-property": Row(
            generation_property_forged_to_the_current, ["unbound-evidence"], "seal"
        ),
        "hand-edited-selection-property": Row(
            selection_forged_to_full, ["unbound-evidence"], "seal"
        ),
        "hand-edited-failure-count-zeroed": Row(failure_count_zeroed, ["unbound-evidence"], "seal"),
        "hand-edited-failure-attribute-zeroed": Row(
            # the failure is recounted from its testcase, whatever the attribute says
            failure_attribute_zeroed,
            ["unbound-evidence", "tests-failed"],
            "seal",
        ),
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
    assert row.says in first, first
    if row.not_says is not None:
        assert row.not_says not in first, first
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
