"""Gathering the gate's facts from real repositories, stamps and files (no pytest run: the
evidence is bound by hand, as a run binds it). test_rules.py judges facts; this proves them."""

from __future__ import annotations

import json
import os
import py_compile
import shutil
from pathlib import Path
from typing import Any

import pygit2
import pytest
from conftest import commit_all, git, git_tree, init_repo

from genstamp import audit, binding, build, checkout_id, evidence, generation, restamp, verified
from genstamp.config import Config
from genstamp.errors import GenstampError
from genstamp.facts import gather
from genstamp.identity import tree_identity
from genstamp.placed import IGNORED, INSTALLED, UNTRACKED
from genstamp.repo import open_checkout
from genstamp.rules import Bytecode, Facts, Target, decide

CALC = "src/calc/__init__.py"
JUNIT = '<testsuite name="t" tests="1"><testcase classname="t" name="a" /></testsuite>\n'


def bind(repo: Path, path: Path | None = None, **changes: str) -> Path:
    """Evidence of a green run on the work tree as it is now, in the current generation,
    bound as the plugin binds it (``changes`` replace fields of the binding)."""
    checkout = open_checkout(repo)
    gen = generation.current(checkout)
    assert gen is not None
    tree = tree_identity(checkout)
    loaded = {CALC: (git(repo, "hash-object", CALC),)} if (repo / CALC).exists() else {}
    record = binding.new(
        runner="pytest",
        checkout=str(checkout.gitdir),
        generation=gen.id,
        tree_start=tree,
        tree_end=tree,
        head=None,
        partial=[],
        audit=audit.Audit(("calc",), loaded, ()).to_json(),
    )._replace(**changes)
    path = path or evidence.location(checkout, None)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(JUNIT)
    evidence.bind(path, record.properties(), gen.key)
    return path


@pytest.fixture
def stamped(project: Path) -> Path:
    restamp.begin(open_checkout(project))
    return project


@pytest.fixture
def bound(stamped: Path) -> Path:
    bind(stamped)
    return stamped


def facts_of(repo: Path, junit: Path | None = None, revs: tuple[str, ...] = ()) -> Facts:
    checkout = open_checkout(repo)
    return gather(checkout, junit or evidence.location(checkout, None), revs)


def test_fresh_evidence_gathers_to_facts_every_rule_accepts(bound: Path) -> None:
    facts = facts_of(bound)
    checkout = open_checkout(bound)
    path = evidence.location(checkout, None)
    assert facts.gitdir == str(checkout.gitdir)
    assert facts.generation == generation.current(checkout)
    assert (facts.stamp_problem, facts.unreadable) == ("", "")
    assert facts.evidence == str(path)
    assert facts.report == evidence.read_report(path)
    assert facts.report_mtime_ns == path.stat().st_mtime_ns
    assert facts.targets == (Target("work tree", git_tree(bound)),)
    assert facts.diffs == {}  # nothing to name
    assert facts.tested_blobs == {CALC: git(bound, "hash-object", CALC)}
    assert facts.bytecode == ()
    assert decide(facts, Config()).ok


def test_no_stamp_and_no_evidence(project: Path) -> None:
    facts = facts_of(project)
    assert (facts.generation, facts.stamp_problem) == (None, "")
    assert facts.stamp_path == str(project / ".git" / "genstamp" / "generation.json")
    assert (facts.report, facts.unreadable, facts.report_mtime_ns) == (None, "", None)


@pytest.mark.parametrize(
    ("damage", "says"),
    [
        (lambda raw: raw[: len(raw) // 2], "generation.json"),
        (lambda raw: b"", "generation.json"),
        (lambda raw: b'{"a": 1}', "generation.json"),
        (lambda raw: raw.replace(b'"key": "', b'"key": "zz'), "key"),
        (lambda raw: raw.replace(b'"key": "', b'"key": "", "x": "'), "key"),
    ],
    ids=["truncated", "empty", "not-a-stamp", "key-not-hex", "key-empty"],
)
def test_a_damaged_stamp_is_a_problem_not_a_traceback(bound: Path, damage, says: str) -> None:  # type: ignore[no-untyped-def]
    path = bound / ".git" / "genstamp" / "generation.json"
    path.write_bytes(damage(path.read_bytes()))
    facts = facts_of(bound)
    assert facts.generation is None
    assert says in facts.stamp_problem
    assert decide(facts, Config()).failures[0].rule == "no-stamp"


def test_an_unreadable_report_is_why(stamped: Path, tmp_path: Path) -> None:
    junit = tmp_path / "junit.xml"
    junit.write_text("this is not xml\n")
    facts = facts_of(stamped, junit)
    assert facts.report is None
    assert facts.unreadable.startswith(f"{junit} is not well-formed XML")


def test_an_edit_after_the_run_is_a_diff_against_the_work_tree(bound: Path) -> None:
    tested = git_tree(bound)
    (bound / CALC).write_text("def add(a, b):\n    return a - b\n")
    (bound / "new.txt").write_text("new\n")
    facts = facts_of(bound)
    assert facts.targets == (Target("work tree", git_tree(bound)),)
    assert facts.diffs == {(tested, git_tree(bound)): ("new.txt", CALC)}


def test_a_deleted_untracked_file_is_a_diff_and_an_ignored_one_is_not(stamped: Path) -> None:
    (stamped / "notes.txt").write_text("untracked, but part of the tree\n")
    bind(stamped)
    (stamped / "notes.txt").unlink()
    (stamped / "noise.pyc").write_bytes(b"")  # ignored (*.py[co]): no tree holds it
    facts = facts_of(stamped)
    assert list(facts.diffs.values()) == [("notes.txt",)]


def test_the_tree_at_start_and_end_are_diffed(bound: Path) -> None:
    start = git_tree(bound)
    (bound / "output.txt").write_text("made by a test\n")
    end = git_tree(bound)
    bind(bound, tree_start=start)
    facts = facts_of(bound)
    assert facts.diffs == {(start, end): ("output.txt",)}


def test_a_tree_not_in_the_store_has_no_paths_nor_blobs(bound: Path) -> None:
    gone = "0" * 40
    bind(bound, tree_start=gone, tree_end=gone)
    facts = facts_of(bound)
    assert facts.diffs == {(gone, git_tree(bound)): None}
    assert facts.tested_blobs is None


def test_unbound_evidence_is_not_looked_into(bound: Path) -> None:
    (bound / "new.txt").write_text("new\n")
    path = bind(bound, tree_end="")  # lacks a property: judged on that alone
    facts = facts_of(bound, path)
    assert facts.report is not None
    assert (facts.diffs, facts.tested_blobs) == ({}, None)


def test_blobs_of_loaded_files_in_the_tested_tree(bound: Path) -> None:
    tested = git_tree(bound)
    (bound / CALC).write_text("def add(a, b):\n    return b + a\n")
    commit_all(bound, "later")
    facts = facts_of(bound)
    assert facts.report is not None
    # the blob of the tested tree, not of the work tree now
    assert facts.tested_blobs == {CALC: git(bound, "rev-parse", f"{tested}:{CALC}")}


def test_revs_are_targets_peeled_to_their_trees(bound: Path) -> None:
    first = git_tree(bound)
    (bound / CALC).write_text("def add(a, b):\n    return b + a\n")
    commit_all(bound, "commute")
    git(bound, "tag", "-a", "v0", "-m", "older", "HEAD~1")
    assert git(bound, "cat-file", "-t", "v0") == "tag"
    facts = facts_of(bound, revs=("HEAD", "v0"))
    second = git(bound, "rev-parse", "HEAD^{tree}")
    assert facts.targets == (Target("HEAD", second), Target("v0", first))
    assert facts.diffs == {(first, second): (CALC,)}
    labelled = gather(
        open_checkout(bound),
        evidence.location(open_checkout(bound), None),
        ["HEAD"],
        {"HEAD": "refs/heads/main"},
    )
    assert labelled.targets == (Target("refs/heads/main", second),)
    git(bound, "checkout", "-q", "--detach")
    assert facts_of(bound, revs=("HEAD",)).targets == (Target("HEAD", second),)


def test_a_rev_that_names_nothing_is_an_error(bound: Path) -> None:
    with pytest.raises(GenstampError, match="'no-such-branch' does not name a commit") as info:
        facts_of(bound, revs=("no-such-branch",))
    assert "--rev" in info.value.remedy
    assert info.value.message.count("no-such-branch") == 1  # not libgit2's text again


@pytest.mark.parametrize(
    ("rev", "kind"),
    [
        ("HEAD:pyproject.toml", "blob"),
        ("HEAD^{tree}", "tree"),
        ("blobtag", "tag of a blob"),  # an annotated tag: what it points at ("a tag" before)
        ("treetag", "tag of a tree"),
    ],
)
def test_a_rev_that_names_no_commit_says_what_it_names(bound: Path, rev: str, kind: str) -> None:
    git(bound, "tag", "-a", "-m", "a key", "blobtag", "HEAD:pyproject.toml")
    git(bound, "tag", "-a", "-m", "a tree", "treetag", "HEAD^{tree}")
    with pytest.raises(GenstampError) as info:
        facts_of(bound, revs=(rev,))
    assert info.value.message == f"{rev!r} names a {kind}, not a commit"


def test_a_rev_beyond_a_shallow_clone_says_so(bound: Path, tmp_path: Path) -> None:
    (bound / CALC).write_text("def add(a, b):\n    return b + a\n")
    commit_all(bound, "second")
    shallow = tmp_path / "shallow"
    git(tmp_path, "clone", "-q", "--depth", "1", bound.as_uri(), str(shallow))
    restamp.begin(open_checkout(shallow))
    bind(shallow)
    assert decide(facts_of(shallow, revs=("HEAD",)), Config()).ok
    with pytest.raises(GenstampError, match="shallow clone") as info:
        facts_of(shallow, revs=("HEAD~1",))
    assert "--unshallow" in info.value.remedy


def _compile(source: Path, cfile: Path) -> None:
    cfile.parent.mkdir(parents=True, exist_ok=True)
    py_compile.compile(str(source), cfile=str(cfile), doraise=True)


def test_bytecode_in_the_tree_with_its_age_and_source(bound: Path) -> None:
    calc = bound / "src" / "calc"
    cached = calc / "__pycache__" / "__init__.cpython-311.pyc"
    _compile(calc / "__init__.py", cached)
    os.utime(cached, ns=(1, 12345))
    legacy = calc / "legacy.py"
    legacy.write_text("VALUE = 1\n")
    _compile(legacy, calc / "legacy.pyc")
    legacy.unlink()
    _compile(calc / "__init__.py", calc / "__init__.pyc")  # legacy, with its source beside it
    found = sorted(facts_of(bound).bytecode)
    assert found == [
        Bytecode("src/calc/__init__.pyc", (calc / "__init__.pyc").lstat().st_mtime_ns, False),
        Bytecode("src/calc/__pycache__/__init__.cpython-311.pyc", 12345, False),
        Bytecode("src/calc/legacy.pyc", (calc / "legacy.pyc").lstat().st_mtime_ns, True),
    ]


def test_a_linked_worktree_is_its_own_checkout(bound: Path, tmp_path: Path) -> None:
    wt = tmp_path / "wt"
    git(bound, "worktree", "add", "-q", "-b", "side", str(wt))
    restamp.begin(open_checkout(wt))
    bind(wt)
    facts = facts_of(wt)
    assert facts.gitdir == git(wt, "rev-parse", "--absolute-git-dir") != str(bound / ".git")
    assert decide(facts, Config()).ok
    assert decide(facts_of(bound), Config()).ok  # the main worktree's evidence is still fresh


# -- installed code, ignored code, the run's own report (issues 11 and 13) ------------------------


def test_bytecode_of_environments_is_the_installers(stamped: Path) -> None:
    """A virtual environment (a folder holding pyvenv.cfg) or a site-packages in the tree:
    its bytecode is never the checkout's stale bytecode; the checkout's own still is."""
    venv = stamped / "env"
    (venv / "lib" / "pkg" / "__pycache__").mkdir(parents=True)
    (venv / "pyvenv.cfg").write_text("home = /usr/bin\n")
    (venv / "lib" / "pkg" / "__pycache__" / "m.cpython-311.pyc").write_bytes(b"x")
    site = stamped / "vendor" / "site-packages" / "dep" / "__pycache__"
    site.mkdir(parents=True)
    (site / "d.cpython-311.pyc").write_bytes(b"x")
    own = stamped / "src" / "calc" / "__pycache__"
    own.mkdir()
    (own / "__init__.cpython-311.pyc").write_bytes(b"x")
    bind(stamped)
    paths = [b.path for b in facts_of(stamped).bytecode]
    assert paths == ["src/calc/__pycache__/__init__.cpython-311.pyc"]


def test_loaded_files_the_tree_lacks_are_placed(stamped: Path) -> None:
    (stamped / ".gitignore").write_text("__pycache__/\n*.py[co]\nlib/\n")
    commit_all(stamped, "ignore lib")
    (stamped / "lib").mkdir()
    (stamped / "lib" / "helper.py").write_text("X = 1\n")
    (stamped / ".venv" / "lib").mkdir(parents=True)
    (stamped / ".venv" / "pyvenv.cfg").write_text("home = /usr/bin\n")
    (stamped / ".venv" / "lib" / "site.py").write_text("Y = 1\n")
    (stamped / ".gitignore").write_text("__pycache__/\n*.py[co]\nlib/\n.venv/\n")
    commit_all(stamped, "ignore .venv")
    restamp.begin(open_checkout(stamped))
    loaded = {
        CALC: (git(stamped, "hash-object", CALC),),
        "lib/helper.py": ("1" * 40,),
        ".venv/lib/site.py": ("2" * 40,),
        "src/calc/late.py": ("3" * 40,),
    }
    bind(stamped, audit=audit.Audit(("calc",), loaded, ()).to_json())
    (stamped / "src" / "calc" / "late.py").write_text("Z = 1\n")  # after the run: not tested
    facts = facts_of(stamped)
    assert facts.tested_blobs == {CALC: loaded[CALC][0]}  # installed files are not looked up
    assert facts.placed == {
        "lib/helper.py": IGNORED,
        ".venv/lib/site.py": INSTALLED,
        "src/calc/late.py": UNTRACKED,
    }
    verdict = decide(facts, Config())
    assert [f.rule for f in verdict.failures] == [
        "tree-mismatch",
        "loaded-not-tested",
        "ignored-code",
    ]
    assert decide(facts, Config(generated=("lib/*.py",))).failures[-1].rule == "loaded-not-tested"


def test_a_loaded_blob_is_converted_as_git_add_would(stamped: Path) -> None:
    """core.autocrlf: the bytes loaded (CRLF) are stored as the tested blob (LF)."""
    git(stamped, "config", "core.autocrlf", "true")
    (stamped / CALC).write_bytes(b"def add(a, b):\r\n    return a + b\r\n")
    restamp.begin(open_checkout(stamped))
    raw = git(stamped, "hash-object", "--no-filters", CALC)
    bind(stamped, audit=audit.Audit(("calc",), {CALC: (raw,)}, ()).to_json())
    facts = facts_of(stamped)
    tested = git(stamped, "rev-parse", f"HEAD:{CALC}")
    assert facts.tested_blobs == {CALC: tested} and raw != tested
    assert facts.added == {(CALC, raw): tested}
    assert decide(facts, Config()).ok


def test_the_runs_report_is_left_out_of_the_trees_compared(stamped: Path) -> None:
    (stamped / "report.xml").write_text("<testsuites/>\n")
    commit_all(stamped, "a report committed by accident")
    bind(stamped, output="report.xml")
    facts = facts_of(stamped)
    tree = git(stamped, "rev-parse", "HEAD^{tree}")
    git(stamped, "rm", "-q", "--cached", "report.xml")
    assert facts.views[tree] == git(stamped, "write-tree")
    assert decide(facts, Config()).ok


def test_the_checkout_id_survives_a_move_and_not_a_copy(stamped: Path, tmp_path: Path) -> None:
    first = checkout_id.current(stamped / ".git", create=True)
    assert checkout_id.current(stamped / ".git") == first  # kept, not made again
    moved = tmp_path / "moved"
    os.rename(stamped, moved)
    assert checkout_id.current(moved / ".git") == first
    copy = tmp_path / "copy"
    shutil.copytree(moved, copy, symlinks=True)
    again = checkout_id.current(copy / ".git")
    assert again != first and again.split("@")[0] == first.split("@")[0]


@pytest.mark.parametrize(
    ("module", "read"),
    [(checkout_id, checkout_id.current), (verified, verified.trees)],
    ids=["checkout-id", "verdict-store"],
)
def test_a_file_of_another_version_names_both(stamped: Path, module: Any, read: Any) -> None:
    path = module.path_of(stamped / ".git")
    path.parent.mkdir(exist_ok=True)
    path.write_text(json.dumps({"format": module.FORMAT, "version": 9}))
    with pytest.raises(GenstampError, match=f"{module.FORMAT} version 9; this genstamp reads"):
        read(stamped / ".git")


def test_verdicts_are_kept_bounded_oldest_first(stamped: Path) -> None:
    gitdir = stamped / ".git"
    assert verified.trees(gitdir) == {}
    trees = [f"{n:040x}" for n in range(verified.LIMIT + 5)]
    for n, tree in enumerate(trees):
        verified.remember(gitdir, [tree], now=n)
    kept = verified.trees(gitdir)
    assert list(kept) == trees[5:] and kept[trees[-1]] == len(trees) - 1
    verified.remember(gitdir, [trees[5]], now=999)  # accepted again: the most recent
    assert list(verified.trees(gitdir))[-1] == trees[5]


@pytest.mark.parametrize(
    "writer", ["version-1", "another-genstamp", "another-build", "this-genstamp"]
)
def test_only_this_genstamps_verdicts_are_taken(stamped: Path, writer: str) -> None:
    """A verdict names the genstamp whose gate judged: one of another genstamp (pre-commit's
    hook environment at another rev, whose rules may accept what these refuse), of another
    build of the same version (a commit between releases: it was taken), or of a store that
    named none (version 1), is forgotten and the tree judged again."""
    gitdir = stamped / ".git"
    tree = "ab" * 20
    verified.remember(gitdir, [tree], now=1)
    data = json.loads(verified.path_of(gitdir).read_text())
    if writer == "version-1":
        data["version"] = 1
        del data["genstamp"]
    elif writer == "another-genstamp":
        data["genstamp"] = "0.0.1"
    elif writer == "another-build":
        assert data["build"] == build.digest()
        data["build"] = "0" * 64
    verified.path_of(gitdir).write_text(json.dumps(data))
    assert verified.trees(gitdir) == ({tree: 1} if writer == "this-genstamp" else {})


def test_a_gitmodules_section_is_read_as_git_reads_it(tmp_path: Path) -> None:
    """git's section names are case-insensitive and its values may be quoted, escaped and
    followed by a comment: `[Submodule "v"]` with a quoted url names a URL."""
    from genstamp.facts import _submodule_name, _submodule_url

    repo = init_repo(tmp_path / "repo")
    (repo / ".gitmodules").write_text(
        '[Submodule "v"]\n\tpath = "v"\n\turl = "../v.git" ; a comment\n'
        '[submodule "w"]\n\tpath = w\n'
    )
    commit_all(repo, "modules")
    tree = open_checkout(repo).repo.revparse_single("HEAD").peel(pygit2.Tree)
    assert _submodule_name(tree, "v") == "v" and _submodule_url(tree, "v")
    assert _submodule_name(tree, "w") == "w" and not _submodule_url(tree, "w")  # no url
    assert _submodule_name(tree, "x") is None and not _submodule_url(tree, "x")


def test_the_runs_own_hook_is_left_out_only_where_the_tested_tree_alone_holds_it(
    tmp_path: Path,
) -> None:
    """A genstamp-run-*.pth in a site-packages folder that the tested tree holds and a judged
    tree does not is the run's (R01); one the judged tree holds too, or one elsewhere, is not."""
    from genstamp.facts import run_hooks

    repo = init_repo(tmp_path / "repo")
    site = "env/lib/python3.11/site-packages"
    hook = f"{site}/genstamp-run-1-2-genstamp-run-x.pth"

    def tree(files: dict[str, str]) -> str:
        for rel in [p for p in (repo / "env").rglob("*") if p.is_file()] + [repo / "a.pth"]:
            rel.unlink(missing_ok=True)
        for rel, text in files.items():
            (repo / rel).parent.mkdir(parents=True, exist_ok=True)
            (repo / rel).write_text(text)
        git(repo, "add", "-A")
        return git(repo, "write-tree").strip()

    plain = tree({f"{site}/x.py": "X = 1\n"})
    tested = tree({f"{site}/x.py": "X = 1\n", hook: "import os\n"})
    other_hook = tree({f"{site}/x.py": "X = 1\n", hook: "import sys\n"})
    elsewhere = tree({f"{site}/x.py": "X = 1\n", "a.pth": "", "genstamp-run-1.pth": "\n"})
    checkout = open_checkout(repo)
    assert run_hooks(checkout.repo, [tested], [plain]) == [hook]
    assert run_hooks(checkout.repo, [tested], [tested]) == []
    assert run_hooks(checkout.repo, [tested], [other_hook]) == []  # the judged tree holds one
    assert run_hooks(checkout.repo, [elsewhere], [plain]) == []  # not in a site-packages
