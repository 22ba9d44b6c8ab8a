"""End to end through genstamp's plain git hooks (hooks/ via core.hooksPath), without pre-commit:
real git checkout/merge/commit/push to a bare repository on disk, a linked worktree, and the
user's own hooks still running. GENSTAMP names a wrapper around this interpreter."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from conftest import Project, git, ok, refused, run_git, run_pytest

pytestmark = pytest.mark.e2e

CALC = Path("src", "calc", "__init__.py")
Z40 = "0" * 40


def generation(work: Path) -> dict[str, Any]:
    gitdir = Path(git(work, "rev-parse", "--absolute-git-dir"))
    return json.loads((gitdir / "genstamp" / "generation.json").read_text())  # type: ignore[no-any-return]


def green(work: Path, *args: str) -> None:
    proc = run_pytest(work, *args)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def remote_has(remote: Path, ref: str) -> str | None:
    out = git(remote, "rev-parse", "--verify", "-q", ref, check=False)
    return out or None


@pytest.fixture(scope="module")
def wrapper(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """GENSTAMP: this interpreter's genstamp, whatever PATH holds."""
    path = tmp_path_factory.mktemp("bin") / "genstamp"
    path.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m genstamp "$@"\n')
    path.chmod(0o755)
    return path


@pytest.fixture
def project(
    project: Path,
    genstamp_snapshot: Path,
    wrapper: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> Project:
    """conftest's project with core.hooksPath at the snapshot's hooks/ and a bare remote."""
    monkeypatch.setenv("GENSTAMP", str(wrapper))
    git(project, "config", "core.hooksPath", str(genstamp_snapshot / "hooks"))
    remote = tmp_path / "remote.git"
    git(tmp_path, "init", "-q", "--bare", str(remote))
    git(project, "remote", "add", "origin", str(remote))
    stamp = subprocess.run([str(wrapper), "stamp"], cwd=project, capture_output=True, text=True)
    assert stamp.returncode == 0, stamp.stderr
    return Project(project, remote)


def test_checkout_restamps_and_a_green_push_is_accepted(project: Project) -> None:
    p = project
    initial = generation(p.root)
    out = ok(p.git("checkout", "-b", "feature"))
    first = generation(p.root)
    # Branch creation changes no content: the generation is kept (issue 13), and says so.
    assert first["id"] == initial["id"]
    assert first["history"][-1]["trigger"] == "post-checkout"
    assert first["history"][-1]["action"] == "kept"
    genstamp_lines = [line for line in out.splitlines() if line.startswith("genstamp:")]
    assert len(genstamp_lines) == 1 and first["id"][:12] in genstamp_lines[0]

    green(p.root)
    ok(p.git("push", "-u", "origin", "feature"))
    assert remote_has(p.remote, "refs/heads/feature") == p.rev("HEAD")

    p.edit(CALC, "def add(a, b):\n    return b + a\n")
    ok(p.git("commit", "-qam", "commute"))
    green(p.root)
    ok(p.git("push"))
    assert remote_has(p.remote, "refs/heads/feature") == p.rev("HEAD")


def test_commit_without_rerunning_the_tests_is_refused(project: Project) -> None:
    p = project
    green(p.root)
    ok(p.git("push", "-u", "origin", "main"))
    pushed = p.rev("HEAD")
    p.edit(CALC, "def add(a, b):\n    return a + b + 0\n")
    ok(p.git("commit", "-qam", "edit without testing"))
    out = refused(p.git("push"))
    assert "tree-mismatch" in out
    assert "src/calc/__init__.py" in out
    assert "push refused" in out
    assert remote_has(p.remote, "refs/heads/main") == pushed
    green(p.root)
    ok(p.git("push"))
    assert remote_has(p.remote, "refs/heads/main") == p.rev("HEAD")


def test_failing_and_partial_runs_are_refused(project: Project) -> None:
    p = project
    test = Path("tests", "test_calc.py")
    original = (p.root / test).read_text()
    p.edit(test, original.replace("== 5", "== 6"))
    ok(p.git("commit", "-qam", "a failing test"))
    assert run_pytest(p.root).returncode == 1
    assert "tests-failed" in refused(p.git("push", "-u", "origin", "main"))

    p.edit(test, original)
    ok(p.git("commit", "-qam", "fixed"))
    green(p.root, "-k", "add")
    out = refused(p.git("push", "-u", "origin", "main"))
    assert "partial-run" in out and "-k add" in out
    assert remote_has(p.remote, "refs/heads/main") is None

    green(p.root)
    ok(p.git("push", "-u", "origin", "main"))


def test_deleting_a_remote_branch_passes(project: Project) -> None:
    p = project
    ok(p.git("checkout", "-b", "feature"))
    green(p.root)
    ok(p.git("push", "-u", "origin", "feature"))
    p.edit(CALC, "def add(a, b):\n    return a - b\n")
    ok(p.git("checkout", "main"))
    assert run_pytest(p.root).returncode == 1
    ok(p.git("push", "origin", "--delete", "feature"))
    assert remote_has(p.remote, "refs/heads/feature") is None


def test_merge_restamps(project: Project) -> None:
    p = project
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
    refused(p.git("push", "-u", "origin", "main"))
    green(p.root)
    ok(p.git("push", "-u", "origin", "main"))


def test_pre_push_judges_every_pushed_ref(project: Project) -> None:
    """Two branches in one push, one of them untested: refused, and neither is pushed."""
    p = project
    ok(p.git("branch", "untested"))
    ok(p.git("checkout", "-b", "tested"))
    p.edit(CALC, "def add(a, b):\n    return b + a\n")
    ok(p.git("commit", "-qam", "commute"))
    green(p.root)
    out = refused(p.git("push", "origin", "tested", "untested"))
    assert "tree-mismatch" in out and "src/calc/__init__.py" in out
    assert p.rev("untested")[:12] in out
    assert remote_has(p.remote, "refs/heads/tested") is None
    assert remote_has(p.remote, "refs/heads/untested") is None
    ok(p.git("push", "origin", "tested"))


def test_annotated_tag_push_is_judged_by_its_commit(project: Project) -> None:
    p = project
    ok(p.git("tag", "-a", "v0", "-m", "before testing"))
    p.edit(CALC, "def add(a, b):\n    return b + a\n")
    ok(p.git("commit", "-qam", "commute"))
    ok(p.git("tag", "-a", "v1", "-m", "tested"))
    green(p.root)
    ok(p.git("push", "origin", "v1"))
    assert remote_has(p.remote, "refs/tags/v1") == p.rev("v1")
    out = refused(p.git("push", "origin", "v0"))
    assert "src/calc/__init__.py" in out


def test_the_users_own_hooks_still_run(project: Project) -> None:
    p = project
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
    project: Project, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    p = project
    monkeypatch.setenv("GENSTAMP", str(tmp_path / "no-such-genstamp"))
    out = ok(p.git("checkout", "-b", "feature"))
    assert "no-such-genstamp" in out
    green(p.root)
    out = refused(p.git("push", "-u", "origin", "feature"))
    assert "no-such-genstamp" in out
    assert remote_has(p.remote, "refs/heads/feature") is None


def test_linked_worktree(project: Project, tmp_path: Path) -> None:
    p = project
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
