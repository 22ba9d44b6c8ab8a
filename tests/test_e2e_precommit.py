"""End to end through real pre-commit: a project whose .pre-commit-config.yaml points at a
snapshot of this checkout, real `pre-commit install`, real git checkout/merge/commit/push to a
bare repository on disk. The project's tests run with this interpreter (genstamp's plugin)."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import Project, commit_all, git, init_repo, ok, refused, run_pytest

pytestmark = pytest.mark.e2e

HOOK_TYPES = "[pre-commit, post-checkout, post-merge, post-rewrite, pre-push]"
STAMP = Path(".git", "genstamp", "generation.json")
CALC = Path("src", "calc", "__init__.py")


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


def generation(repo: Path) -> dict[str, Any]:
    return json.loads((repo / STAMP).read_text())  # type: ignore[no-any-return]


def green(project: Path, *args: str) -> None:
    proc = run_pytest(project, *args)
    assert proc.returncode == 0, proc.stdout + proc.stderr


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


def config_text(snapshot: Path, rev: str) -> str:
    return (
        f"default_install_hook_types: {HOOK_TYPES}\n"
        "repos:\n"
        f"  - repo: {snapshot}\n"
        f"    rev: {rev}\n"
        "    hooks:\n"
        "      - id: genstamp-scrub\n"
        "      - id: genstamp-verify\n"
        "      - id: genstamp-bytecode\n"
    )


@pytest.fixture
def project(project: Path, hook_repo: tuple[Path, str], tmp_path: Path) -> Project:
    """conftest's project, with pre-commit installed for the five hook types and a bare remote."""
    snapshot, rev = hook_repo
    (project / ".pre-commit-config.yaml").write_text(config_text(snapshot, rev))
    commit_all(project, "pre-commit config")
    out = pre_commit(project, "install").stdout
    for hook in ("pre-commit", "post-checkout", "post-merge", "post-rewrite", "pre-push"):
        assert f".git/hooks/{hook}" in out
    remote = tmp_path / "remote.git"
    git(tmp_path, "init", "-q", "--bare", str(remote))
    git(project, "remote", "add", "origin", str(remote))
    # what a user does once after installing the hooks
    stamp = subprocess.run(
        [sys.executable, "-m", "genstamp", "stamp"], cwd=project, capture_output=True, text=True
    )
    assert stamp.returncode == 0, stamp.stderr
    return Project(project, remote)


def test_checkout_restamps_and_a_green_push_is_accepted(project: Project) -> None:
    p = project
    initial = generation(p.root)
    assert initial["trigger"] == "manual"
    ok(p.git("checkout", "-b", "feature"))
    first = generation(p.root)
    # No content changes: the generation is kept, and the history says which hook kept it.
    assert first["id"] == initial["id"]
    assert first["history"][-1]["trigger"] == "post-checkout"
    ok(p.git("checkout", "main"))
    second = generation(p.root)
    assert second["id"] == first["id"]
    assert second["history"][-1]["action"] == "kept"
    ok(p.git("checkout", "feature"))

    # A brand-new branch whose history holds the root commit: pre-commit sets no
    # PRE_COMMIT_TO_REF, only PRE_COMMIT_LOCAL_BRANCH.
    green(p.root)
    ok(p.git("push", "-u", "origin", "feature"))
    assert git(p.remote, "rev-parse", "refs/heads/feature") == p.rev("HEAD")

    # An update of a branch the remote has: PRE_COMMIT_FROM_REF / PRE_COMMIT_TO_REF.
    p.edit(CALC, "def add(a, b):\n    return b + a\n")
    ok(p.git("commit", "-qam", "commute"))
    green(p.root)
    ok(p.git("push"))
    assert git(p.remote, "rev-parse", "refs/heads/feature") == p.rev("HEAD")


def test_commit_without_rerunning_the_tests_is_refused(project: Project) -> None:
    p = project
    ok(p.git("checkout", "-b", "feature"))
    green(p.root)
    ok(p.git("push", "-u", "origin", "feature"))
    pushed = p.rev("HEAD")

    p.edit(CALC, "def add(a, b):\n    return a + b + 0\n")
    ok(p.git("commit", "-qam", "edit without testing"))
    out = refused(p.git("push"))
    assert "tree-mismatch" in out
    assert "src/calc/__init__.py" in out
    assert git(p.remote, "rev-parse", "refs/heads/feature") == pushed

    green(p.root)  # the remedy
    ok(p.git("push"))
    assert git(p.remote, "rev-parse", "refs/heads/feature") == p.rev("HEAD")


def test_failing_and_partial_runs_are_refused(project: Project) -> None:
    p = project
    test = Path("tests", "test_calc.py")
    original = (p.root / test).read_text()
    p.edit(test, original.replace("== 5", "== 6"))
    ok(p.git("commit", "-qam", "a failing test"))
    assert run_pytest(p.root).returncode == 1
    out = refused(p.git("push", "-u", "origin", "main"))
    assert "tests-failed" in out
    assert "refs/heads/main" not in git(p.remote, "for-each-ref")

    p.edit(test, original)
    ok(p.git("commit", "-qam", "fixed"))
    green(p.root, "-k", "add")
    out = refused(p.git("push", "-u", "origin", "main"))
    assert "partial-run" in out
    assert "-k add" in out
    assert "refs/heads/main" not in git(p.remote, "for-each-ref")

    green(p.root)
    ok(p.git("push", "-u", "origin", "main"))


def test_unstaged_changes_during_push_do_not_restamp(project: Project) -> None:
    """pre-commit stashes unstaged changes around a pre-push hook by checking files out; that
    checkout must not begin a new generation (the pushed commit is what was tested)."""
    p = project
    green(p.root)
    ok(p.git("push", "-u", "origin", "main"))
    p.edit(CALC, "def add(a, b):\n    return b + a\n")
    ok(p.git("commit", "-qam", "commute"))
    green(p.root)
    before = generation(p.root)["id"]
    p.edit("README.txt", "untracked\n")
    p.edit(Path("tests", "test_calc.py"), "# an unstaged edit, not pushed\n")
    ok(p.git("push"))
    assert generation(p.root)["id"] == before
    assert (p.root / "tests" / "test_calc.py").read_text() == "# an unstaged edit, not pushed\n"


def test_deleting_a_remote_branch_passes(project: Project) -> None:
    p = project
    ok(p.git("checkout", "-b", "feature"))
    green(p.root)
    ok(p.git("push", "-u", "origin", "feature"))
    # the evidence goes stale: a new generation, and a red tree
    p.edit(CALC, "def add(a, b):\n    return a - b\n")
    ok(p.git("checkout", "main"))
    assert run_pytest(p.root).returncode == 1
    ok(p.git("push", "origin", "--delete", "feature"))
    assert "refs/heads/feature" not in git(p.remote, "for-each-ref")


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
    assert after["head"] == p.rev("HEAD")
    # the merged tree was not tested: refused until it is
    refused(p.git("push", "-u", "origin", "main"))
    green(p.root)
    ok(p.git("push", "-u", "origin", "main"))


def test_rebase_restamps(project: Project) -> None:
    p = project
    ok(p.git("checkout", "-b", "feature"))
    p.edit(CALC, "def add(a, b):\n    return b + a\n")
    ok(p.git("commit", "-qam", "commute"))
    green(p.root)
    before = generation(p.root)["id"]
    ok(p.git("commit", "--amend", "-qm", "commute, reworded"))
    after = generation(p.root)
    assert after["id"] != before
    assert after["trigger"] == "post-rewrite"


def test_staged_bytecode_is_refused_at_commit(project: Project) -> None:
    p = project
    pyc = p.root / "src" / "calc" / "__pycache__" / "__init__.cpython-311.pyc"
    pyc.parent.mkdir()
    pyc.write_bytes(b"bytecode")
    ok(p.git("add", "-f", str(pyc)))
    out = refused(p.git("commit", "-qm", "oops"))
    assert "src/calc/__pycache__/__init__.cpython-311.pyc" in out
    ok(p.git("rm", "-q", "--cached", str(pyc)))
    ok(p.git("commit", "-qm", "nothing to see", "--allow-empty"))


def test_pre_commit_with_the_plain_pre_push(
    project: Project, hook_repo: tuple[Path, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The README's "have both": pre-commit for the other stages, genstamp's plain pre-push
    (symlinked into .git/hooks) so that every pushed ref is judged."""
    p = project
    snapshot, _ = hook_repo
    wrapper = tmp_path / "genstamp"
    wrapper.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m genstamp "$@"\n')
    wrapper.chmod(0o755)
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
    project: Project, hook_repo: tuple[Path, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Plain hooks (core.hooksPath) chained to pre-commit's (.git/hooks): pre-commit stashes
    unstaged changes around its pre-push by checking files out, which fires the plain
    post-checkout with _PRE_COMMIT_SKIP_POST_CHECKOUT set. genstamp must honour it: a restamp
    there would make the evidence stale in the middle of the push."""
    p = project
    snapshot, _ = hook_repo
    wrapper = tmp_path / "genstamp"
    wrapper.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m genstamp "$@"\n')
    wrapper.chmod(0o755)
    monkeypatch.setenv("GENSTAMP", str(wrapper))
    git(p.root, "config", "core.hooksPath", str(snapshot / "hooks"))
    green(p.root)
    ok(p.git("push", "-u", "origin", "main"))
    p.edit(CALC, "def add(a, b):\n    return b + a\n")
    ok(p.git("commit", "-qam", "commute"))
    green(p.root)
    before = generation(p.root)["id"]
    p.edit(Path("tests", "test_calc.py"), "# an unstaged edit, not pushed\n")
    out = ok(p.git("push"))
    assert "genstamp verify the pushed tree" in out  # pre-commit's hook ran too
    assert generation(p.root)["id"] == before
    assert (p.root / "tests" / "test_calc.py").read_text() == "# an unstaged edit, not pushed\n"
    assert git(p.remote, "rev-parse", "refs/heads/main") == p.rev("HEAD")
