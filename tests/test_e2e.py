"""End to end through real git hooks, installed two ways: genstamp's plain hooks (hooks/ via
core.hooksPath, GENSTAMP naming a wrapper around this interpreter), and real pre-commit (a
project whose .pre-commit-config.yaml points at a snapshot of this checkout, real
`pre-commit install`). Real git checkout/merge/commit/push to a bare repository on disk; the
project's tests run with this interpreter (genstamp's plugin). The shared story runs through
both installs; what only one install has stays a single test."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import (
    Project,
    commit_all,
    git,
    init_repo,
    ok,
    refused,
    run_git,
    run_pytest,
    snapshot_url,
)

from genstamp.generation import current
from genstamp.repo import open_checkout

pytestmark = pytest.mark.e2e

HOOK_TYPES = "[pre-commit, post-checkout, post-merge, post-rewrite, pre-push]"
CALC = Path("src", "calc", "__init__.py")
PLAIN = "plain-hooks"
PRE_COMMIT = "pre-commit"


def generation(work: Path) -> dict[str, Any]:
    """The generation as the gate sees it: a hook leaves a claim, the first reader settles it."""
    current(open_checkout(work))
    gitdir = Path(git(work, "rev-parse", "--absolute-git-dir"))
    return json.loads((gitdir / "genstamp" / "generation.json").read_text())  # type: ignore[no-any-return]


def green(work: Path, *args: str) -> None:
    proc = run_pytest(work, *args)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def remote_has(remote: Path, ref: str) -> str | None:
    out = git(remote, "rev-parse", "--verify", "-q", ref, check=False)
    return out or None


def pre_commit(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run(
        [sys.executable, "-m", "pre_commit", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc


def config_text(snapshot: Path, rev: str) -> str:
    return (
        f"default_install_hook_types: {HOOK_TYPES}\n"
        "repos:\n"
        f"  - repo: {snapshot_url(snapshot)}\n"
        f"    rev: {rev}\n"
        "    hooks:\n"
        "      - id: genstamp-scrub\n"
        "      - id: genstamp-verify\n"
        "      - id: genstamp-bytecode\n"
    )


@pytest.fixture(autouse=True)
def shared_pre_commit_home(pre_commit_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PRE_COMMIT_HOME", str(pre_commit_home))


@pytest.fixture(scope="module")
def hook_repo(
    genstamp_snapshot: Path, pre_commit_home: Path, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[Path, str]]:
    """The snapshot and its HEAD; pre-commit's hook env for it is built here, once."""
    rev = git(genstamp_snapshot, "rev-parse", "HEAD")
    warm = tmp_path_factory.mktemp("warm")
    init_repo(warm)
    (warm / ".pre-commit-config.yaml").write_text(config_text(genstamp_snapshot, rev))
    commit_all(warm, "config")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("PRE_COMMIT_HOME", str(pre_commit_home))
        pre_commit(warm, "install-hooks")
        yield genstamp_snapshot, rev


def pushed_feature(p: Project) -> None:
    """A branch ``feature`` tested green and pushed."""
    ok(p.git("checkout", "-b", "feature"))
    green(p.root)
    ok(p.git("push", "-u", "origin", "feature"))


def pushed_then_committed_and_tested(p: Project) -> str:
    """main pushed, then a commit on it tested green (not pushed): the generation's id."""
    green(p.root)
    ok(p.git("push", "-u", "origin", "main"))
    p.edit(CALC, "def add(a, b):\n    return b + a\n")
    ok(p.git("commit", "-qam", "commute"))
    green(p.root)
    return str(generation(p.root)["id"])


def with_remote(project: Path, tmp_path: Path) -> Project:
    remote = tmp_path / "remote.git"
    git(tmp_path, "init", "-q", "--bare", str(remote))
    git(project, "remote", "add", "origin", str(remote))
    return Project(project, remote)


@pytest.fixture
def plain(
    project: Path,
    genstamp_snapshot: Path,
    wrapper: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> Project:
    """conftest's project with core.hooksPath at the snapshot's hooks/ and a bare remote."""
    monkeypatch.setenv("GENSTAMP", str(wrapper))
    git(project, "config", "core.hooksPath", str(genstamp_snapshot / "hooks"))
    p = with_remote(project, tmp_path)
    stamp = subprocess.run([str(wrapper), "stamp"], cwd=project, capture_output=True, text=True)
    assert stamp.returncode == 0, stamp.stderr
    return p


@pytest.fixture
def with_pre_commit(project: Path, hook_repo: tuple[Path, str], tmp_path: Path) -> Project:
    """conftest's project, with pre-commit installed for the five hook types and a bare remote."""
    snapshot, rev = hook_repo
    (project / ".pre-commit-config.yaml").write_text(config_text(snapshot, rev))
    commit_all(project, "pre-commit config")
    out = pre_commit(project, "install").stdout
    for hook in ("pre-commit", "post-checkout", "post-merge", "post-rewrite", "pre-push"):
        assert f".git/hooks/{hook}" in out
    p = with_remote(project, tmp_path)
    # what a user does once after installing the hooks
    stamp = subprocess.run(
        [sys.executable, "-m", "genstamp", "stamp"], cwd=project, capture_output=True, text=True
    )
    assert stamp.returncode == 0, stamp.stderr
    return p


@pytest.fixture(params=[PLAIN, PRE_COMMIT])
def install(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def installed(install: str, request: pytest.FixtureRequest) -> Project:
    """The project with genstamp's hooks installed one way or the other."""
    fixture = "plain" if install == PLAIN else "with_pre_commit"
    return request.getfixturevalue(fixture)  # type: ignore[no-any-return]


# -- the shared story, through both installs ---------------------------------------------------


def test_checkout_restamps_and_a_green_push_is_accepted(installed: Project, install: str) -> None:
    p = installed
    initial = generation(p.root)
    assert initial["trigger"] == "manual"
    out = ok(p.git("checkout", "-b", "feature"))
    first = generation(p.root)
    # No content changes: the generation is kept, and the history says which hook kept it.
    assert first["id"] == initial["id"]
    assert first["history"][-1]["trigger"] == "post-checkout"
    if install == PLAIN:  # pre-commit shows a hook's output only when the hook fails
        genstamp_lines = [line for line in out.splitlines() if line.startswith("genstamp:")]
        assert len(genstamp_lines) == 1 and first["id"][:12] in genstamp_lines[0]
    ok(p.git("checkout", "main"))
    second = generation(p.root)
    assert second["id"] == first["id"]
    assert second["history"][-1]["action"] == "kept"
    ok(p.git("checkout", "feature"))

    # A brand-new branch whose history holds the root commit: pre-commit sets no
    # PRE_COMMIT_TO_REF, only PRE_COMMIT_LOCAL_BRANCH.
    green(p.root)
    ok(p.git("push", "-u", "origin", "feature"))
    assert remote_has(p.remote, "refs/heads/feature") == p.rev("HEAD")

    # An update of a branch the remote has: PRE_COMMIT_FROM_REF / PRE_COMMIT_TO_REF.
    p.edit(CALC, "def add(a, b):\n    return b + a\n")
    ok(p.git("commit", "-qam", "commute"))
    green(p.root)
    ok(p.git("push"))
    assert remote_has(p.remote, "refs/heads/feature") == p.rev("HEAD")


def test_commit_without_rerunning_the_tests_is_refused(installed: Project) -> None:
    p = installed
    pushed_feature(p)
    pushed = p.rev("HEAD")

    p.edit(CALC, "def add(a, b):\n    return a + b + 0\n")
    ok(p.git("commit", "-qam", "edit without testing"))
    out = refused(p.git("push"))
    assert "tree-mismatch" in out
    assert "src/calc/__init__.py" in out
    assert "push refused" in out
    assert remote_has(p.remote, "refs/heads/feature") == pushed

    green(p.root)  # the remedy
    ok(p.git("push"))
    assert remote_has(p.remote, "refs/heads/feature") == p.rev("HEAD")


def test_failing_and_partial_runs_are_refused(installed: Project) -> None:
    p = installed
    test = Path("tests", "test_calc.py")
    original = (p.root / test).read_text()
    p.edit(test, original.replace("== 5", "== 6"))
    ok(p.git("commit", "-qam", "a failing test"))
    assert run_pytest(p.root).returncode == 1
    out = refused(p.git("push", "-u", "origin", "main"))
    assert "tests-failed" in out
    assert remote_has(p.remote, "refs/heads/main") is None

    p.edit(test, original)
    ok(p.git("commit", "-qam", "fixed"))
    green(p.root, "-k", "add")
    out = refused(p.git("push", "-u", "origin", "main"))
    assert "partial-run" in out
    assert "tests/test_calc.py::test_other" in out  # what was left out, named
    assert remote_has(p.remote, "refs/heads/main") is None

    green(p.root)
    ok(p.git("push", "-u", "origin", "main"))
    assert remote_has(p.remote, "refs/heads/main") == p.rev("HEAD")


def test_deleting_a_remote_branch_passes(installed: Project) -> None:
    p = installed
    pushed_feature(p)
    # the evidence goes stale: a new generation, and a red tree
    p.edit(CALC, "def add(a, b):\n    return a - b\n")
    ok(p.git("checkout", "main"))
    assert run_pytest(p.root).returncode == 1
    ok(p.git("push", "origin", "--delete", "feature"))
    assert remote_has(p.remote, "refs/heads/feature") is None


def test_pushing_notes_is_not_judged(installed: Project) -> None:
    """Notes (review notes, genstamp's own attestations) are about commits, not code to test:
    pushed while the work tree is red and untested, they go; the untested commit does not."""
    p = installed
    green(p.root)
    ok(p.git("push", "-u", "origin", "main"))
    ok(p.git("notes", "add", "-m", "Reviewed-by: someone", "HEAD"))
    p.edit(CALC, "def add(a, b):\n    return a - b\n")
    ok(p.git("commit", "-qam", "red, untested"))
    ok(p.git("push", "origin", "refs/notes/commits"))
    assert remote_has(p.remote, "refs/notes/commits") == p.rev("refs/notes/commits")
    refused(p.git("push", "origin", "main"))
    # where a push goes decides: the untested commit sent from a local notes ref to a branch
    ok(p.git("update-ref", "refs/notes/smuggled", "HEAD"))
    refused(p.git("push", "origin", "refs/notes/smuggled:refs/heads/main"))
    assert remote_has(p.remote, "refs/heads/main") != p.rev("HEAD")
    # and what a commit holds decides: code sent to a notes ref is judged as a branch is
    refused(p.git("push", "origin", "HEAD:refs/notes/smuggled"))
    assert remote_has(p.remote, "refs/notes/smuggled") is None


def test_merge_restamps(installed: Project) -> None:
    p = installed
    ok(p.git("checkout", "-b", "feature"))
    p.edit(CALC, "def add(a, b):\n    return b + a\n")
    ok(p.git("commit", "-qam", "commute"))
    ok(p.git("checkout", "main"))
    p.edit("extra.txt", "main moves on\n")
    ok(p.git("add", "extra.txt"))
    ok(p.git("commit", "-qm", "extra"))
    green(p.root)
    before = generation(p.root)["id"]
    ok(p.git("merge", "--no-edit", "feature"))
    after = generation(p.root)
    assert after["id"] != before
    assert after["trigger"] == "post-merge"
    assert after["head"] == p.rev("HEAD")
    # the merged tree was not tested: refused until it is
    refused(p.git("push", "-u", "origin", "main"))
    green(p.root)
    ok(p.git("push", "-u", "origin", "main"))


# -- plain hooks only ----------------------------------------------------------------------


def test_pre_push_judges_every_pushed_ref(plain: Project) -> None:
    """Two branches in one push, one of them untested: refused, and neither is pushed."""
    p = plain
    ok(p.git("branch", "untested"))
    ok(p.git("checkout", "-b", "tested"))
    p.edit(CALC, "def add(a, b):\n    return b + a\n")
    ok(p.git("commit", "-qam", "commute"))
    green(p.root)
    out = refused(p.git("push", "origin", "tested", "untested"))
    assert "tree-mismatch" in out and "src/calc/__init__.py" in out
    assert "a pytest without its plugin writes no evidence" in out  # rerun where it is
    assert p.rev("untested")[:12] in out
    assert remote_has(p.remote, "refs/heads/tested") is None
    assert remote_has(p.remote, "refs/heads/untested") is None
    ok(p.git("push", "origin", "tested"))


def test_annotated_tag_push_is_judged_by_its_commit(plain: Project) -> None:
    p = plain
    ok(p.git("tag", "-a", "v0", "-m", "before testing"))
    p.edit(CALC, "def add(a, b):\n    return b + a\n")
    ok(p.git("commit", "-qam", "commute"))
    ok(p.git("tag", "-a", "v1", "-m", "tested"))
    green(p.root)
    ok(p.git("push", "origin", "v1"))
    assert remote_has(p.remote, "refs/tags/v1") == p.rev("v1")
    out = refused(p.git("push", "origin", "v0"))
    assert "src/calc/__init__.py" in out


def test_the_users_own_hooks_still_run(plain: Project) -> None:
    p = plain
    own = p.root / ".git" / "hooks"
    own.mkdir(exist_ok=True)
    marker = p.root.parent / "own-hooks.log"
    for name in ("post-checkout", "post-merge", "pre-push"):
        hook = own / name
        hook.write_text(f'#!/bin/sh\necho "{name} $*" >> "{marker}"\ncat >/dev/null\nexit 0\n')
        hook.chmod(0o755)
    before = generation(p.root)["id"]
    ok(p.git("checkout", "-b", "feature"))
    assert generation(p.root)["id"] == before  # no content changed: kept (issue 13)
    green(p.root)
    ok(p.git("push", "-u", "origin", "feature"))
    log = marker.read_text().splitlines()
    assert log[0].startswith("post-checkout ")
    assert log[1] == f"pre-push origin {p.remote}"

    # the user's pre-push can still refuse a push genstamp accepts
    (own / "pre-push").write_text("#!/bin/sh\necho 'own hook says no' >&2\nexit 1\n")
    p.edit("extra.txt", "x\n")
    ok(p.git("add", "extra.txt"))
    ok(p.git("commit", "-qm", "extra"))
    green(p.root)
    out = refused(p.git("push"))
    assert "own hook says no" in out


def test_genstamp_missing_refuses_the_push_but_not_a_checkout(
    plain: Project, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    p = plain
    monkeypatch.setenv("GENSTAMP", str(tmp_path / "no-such-genstamp"))
    out = ok(p.git("checkout", "-b", "feature"))
    assert "no-such-genstamp" in out
    green(p.root)
    out = refused(p.git("push", "-u", "origin", "feature"))
    assert "no-such-genstamp" in out
    assert remote_has(p.remote, "refs/heads/feature") is None


@pytest.mark.parametrize("between", ["its-own-report", "a-quick-look-undone"])
def test_a_checkout_that_changes_nothing_keeps_a_split_runs_parts(
    plain: Project, between: str
) -> None:
    """A split run's first part, `git checkout -b feature` (no file changes), the second part:
    the parts merge and the push is accepted. The tree the checkout found is one a part of the
    generation tested, as the gate compares trees: the part's own `--junitxml` in the work
    tree (not ignored) left out, and where a quick look at an edit ran a test since, undone
    before the checkout, the part kept for that tree (neither is the generation's own tree:
    a commit came after the stamp)."""
    p = plain
    p.edit(Path("tests", "test_more.py"), "def test_more():\n    assert True\n")
    ok(p.git("add", "-A"))
    ok(p.git("commit", "-qm", "a second test file"))
    report = ("--junitxml=report.xml",) if between == "its-own-report" else ()
    green(p.root, "tests/test_calc.py", *report)
    if between == "a-quick-look-undone":
        kept = (p.root / CALC).read_text()
        p.edit(CALC, kept + "DEBUG = True\n")
        green(p.root, "tests/test_calc.py")
        p.edit(CALC, kept)
    first = generation(p.root)["id"]
    ok(p.git("checkout", "-q", "-b", "feature"))
    assert generation(p.root)["id"] == first, generation(p.root)["history"][-1]
    green(p.root, "tests/test_more.py", *report)
    ok(p.git("push", "-q", "-u", "origin", "feature"))


def test_linked_worktree(plain: Project, tmp_path: Path) -> None:
    p = plain
    wt = tmp_path / "wt"
    main_gen = generation(p.root)["id"]
    ok(p.git("worktree", "add", "-b", "side", str(wt)))
    side = generation(wt)
    assert side["trigger"] == "post-checkout"
    assert generation(p.root)["id"] == main_gen  # each worktree has its own generation
    assert Path(git(wt, "rev-parse", "--absolute-git-dir")).parent.name == "worktrees"

    (wt / CALC).write_text("def add(a, b):\n    return b + a\n")
    ok(run_git(wt, "commit", "-qam", "commute in the worktree"))
    green(wt)
    ok(run_git(wt, "push", "-u", "origin", "side"))
    assert remote_has(p.remote, "refs/heads/side") == git(wt, "rev-parse", "HEAD")

    (wt / CALC).write_text("def add(a, b):\n    return a + b + 0\n")
    ok(run_git(wt, "commit", "-qam", "untested"))
    out = refused(run_git(wt, "push"))
    assert "src/calc/__init__.py" in out


# -- pre-commit only ------------------------------------------------------------------------


def test_unstaged_changes_during_push_do_not_restamp(with_pre_commit: Project) -> None:
    """pre-commit stashes unstaged changes around a pre-push hook by checking files out; that
    checkout must not begin a new generation (the pushed commit is what was tested)."""
    p = with_pre_commit
    before = pushed_then_committed_and_tested(p)
    p.edit("README.txt", "untracked\n")
    p.edit(Path("tests", "test_calc.py"), "# an unstaged edit, not pushed\n")
    ok(p.git("push"))
    assert generation(p.root)["id"] == before
    assert (p.root / "tests" / "test_calc.py").read_text() == "# an unstaged edit, not pushed\n"


def test_doctor_reads_the_genstamp_pre_commits_hooks_run(with_pre_commit: Project) -> None:
    """doctor finds the environment pre-commit built for the config's rev in its store, and
    the genstamp installed there: the tests' own (this snapshot), so ok, naming pre-commit's
    hooks (it warned that the hooks' version was unknown)."""
    proc = subprocess.run(
        [sys.executable, "-m", "genstamp", "doctor", "--json", "--python", sys.executable],
        cwd=with_pre_commit.root,
        capture_output=True,
        text=True,
    )
    found = {c["name"]: c for c in json.loads(proc.stdout)["checks"]}
    assert found["version"]["status"] == "ok", found["version"]
    assert "pre-commit's hooks" in found["version"]["what"], found["version"]


def test_doctor_warns_of_a_clean_filter_under_pre_commits_hooks(with_pre_commit: Project) -> None:
    """pre-commit's set-aside of unstaged changes at checkout puts back what a clean filter
    cleaned (h199): with one configured, doctor's hooks check warns and names --plain."""
    doctor = [sys.executable, "-m", "genstamp", "doctor", "--json", "--python", sys.executable]
    root = with_pre_commit.root

    def hooks() -> dict[str, str]:
        proc = subprocess.run(doctor, cwd=root, capture_output=True, text=True)
        found: dict[str, str] = {c["name"]: c for c in json.loads(proc.stdout)["checks"]}["hooks"]
        return found

    assert hooks()["status"] == "ok"
    ok(with_pre_commit.git("config", "filter.strip.clean", "cat"))
    assert hooks()["status"] == "ok"  # configured, used by no attributes file here
    info = root / ".git" / "info"
    info.mkdir(exist_ok=True)
    (info / "attributes").write_text("*.ipynb filter=strip\n")
    found = hooks()
    assert found["status"] == "warn" and "filter.strip.clean" in found["what"], found
    assert "genstamp install --plain" in found["remedy"], found


def test_rebase_restamps(with_pre_commit: Project) -> None:
    p = with_pre_commit
    ok(p.git("checkout", "-b", "feature"))
    p.edit(CALC, "def add(a, b):\n    return b + a\n")
    ok(p.git("commit", "-qam", "commute"))
    green(p.root)
    before = generation(p.root)["id"]
    ok(p.git("commit", "--amend", "-qm", "commute, reworded"))
    after = generation(p.root)
    assert after["id"] == before  # a message-only rewrite changes no content: kept
    assert after["history"][-1]["trigger"] == "post-rewrite"
    assert after["history"][-1]["action"] == "kept"
    p.edit(CALC, "def add(a, b):\n    return a + b  # commuted back\n")
    ok(p.git("commit", "--amend", "-qam", "commute, and a content change"))
    after = generation(p.root)
    assert after["id"] != before
    assert after["trigger"] == "post-rewrite"


def test_staged_bytecode_is_refused_at_commit(with_pre_commit: Project) -> None:
    p = with_pre_commit
    pyc = p.root / "src" / "calc" / "__pycache__" / "__init__.cpython-311.pyc"
    pyc.parent.mkdir()
    pyc.write_bytes(b"bytecode")
    ok(p.git("add", "-f", str(pyc)))
    out = refused(p.git("commit", "-qm", "oops"))
    assert "src/calc/__pycache__/__init__.cpython-311.pyc" in out
    ok(p.git("rm", "-q", "--cached", str(pyc)))
    ok(p.git("commit", "-qm", "nothing to see", "--allow-empty"))


def test_pre_commit_with_the_plain_pre_push(
    with_pre_commit: Project,
    hook_repo: tuple[Path, str],
    wrapper: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The README's "have both": pre-commit for the other stages, genstamp's plain pre-push
    (symlinked into .git/hooks) so that every pushed ref is judged."""
    p = with_pre_commit
    snapshot, _ = hook_repo
    monkeypatch.setenv("GENSTAMP", str(wrapper))
    hooks = p.root / ".git" / "hooks"
    (hooks / "pre-push").unlink()
    (hooks / "genstamp-hook").symlink_to(snapshot / "hooks" / "genstamp-hook")
    (hooks / "pre-push").symlink_to(snapshot / "hooks" / "pre-push")

    before = generation(p.root)["id"]
    ok(p.git("branch", "untested"))
    ok(p.git("checkout", "-b", "tested"))  # pre-commit's post-checkout
    assert generation(p.root)["id"] == before  # no content changed: kept (issue 13)
    p.edit(CALC, "def add(a, b):\n    return b + a\n")
    ok(p.git("commit", "-qam", "commute"))
    green(p.root)
    out = refused(p.git("push", "origin", "tested", "untested"))
    assert "src/calc/__init__.py" in out
    assert "refs/heads" not in git(p.remote, "for-each-ref")
    ok(p.git("push", "origin", "tested"))
    assert git(p.remote, "rev-parse", "refs/heads/tested") == p.rev("HEAD")


def test_pre_commits_own_stash_checkout_does_not_restamp_through_plain_hooks(
    with_pre_commit: Project,
    hook_repo: tuple[Path, str],
    wrapper: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Plain hooks (core.hooksPath) chained to pre-commit's (.git/hooks): pre-commit stashes
    unstaged changes around its pre-push by checking files out, which fires the plain
    post-checkout with _PRE_COMMIT_SKIP_POST_CHECKOUT set. genstamp must honour it: a restamp
    there would make the evidence stale in the middle of the push."""
    p = with_pre_commit
    snapshot, _ = hook_repo
    monkeypatch.setenv("GENSTAMP", str(wrapper))
    git(p.root, "config", "core.hooksPath", str(snapshot / "hooks"))
    before = pushed_then_committed_and_tested(p)
    p.edit(Path("tests", "test_calc.py"), "# an unstaged edit, not pushed\n")
    out = ok(p.git("push"))
    assert "genstamp verify the pushed tree" in out  # pre-commit's hook ran too
    assert generation(p.root)["id"] == before
    assert (p.root / "tests" / "test_calc.py").read_text() == "# an unstaged edit, not pushed\n"
    assert git(p.remote, "rev-parse", "refs/heads/main") == p.rev("HEAD")
