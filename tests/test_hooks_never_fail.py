"""Real git through genstamp's plain hooks: a generation is kept when a checkout, amend or
rebase leaves content as it was, begun when content changed; and no post-* hook ever makes
git's command fail."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from conftest import commit_all, git, run_pytest, write_calc

from genstamp import generation
from genstamp.repo import open_checkout

pytestmark = pytest.mark.e2e

HOOKS = Path(__file__).resolve().parent.parent / "hooks"


def stamp(work: Path) -> dict[str, Any]:
    """The generation as the gate sees it: a hook leaves a claim, the first reader settles it."""
    generation.current(open_checkout(work))
    return json.loads((work / ".git" / "genstamp" / "generation.json").read_text())  # type: ignore[no-any-return]


def run_git(work: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["git", *args], cwd=work, capture_output=True, text=True)


@pytest.fixture
def work(repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    wrapper = tmp_path / "genstamp"
    wrapper.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m genstamp "$@"\n')
    wrapper.chmod(0o755)
    monkeypatch.setenv("GENSTAMP", str(wrapper))
    (repo / "a.py").write_text("A = 1\n")
    (repo / "b.py").write_text("B = 1\n")
    commit_all(repo, "base")
    git(repo, "config", "core.hooksPath", str(HOOKS))
    assert subprocess.run([str(wrapper), "stamp"], cwd=repo, capture_output=True).returncode == 0
    return repo


def test_branch_creation_keeps_and_a_content_checkout_begins(work: Path) -> None:
    before = stamp(work)["id"]
    proc = run_git(work, "checkout", "-q", "-b", "feature")
    assert proc.returncode == 0 and "kept" in proc.stderr, proc.stderr
    after = stamp(work)
    assert after["id"] == before and after["version"] == 3
    assert after["history"][-1]["action"] == "kept"
    (work / "a.py").write_text("A = 2\n")
    commit_all(work, "change")  # no hook runs on commit: the generation is of main's content
    git(work, "checkout", "-q", "main")
    assert stamp(work)["id"] == before  # back to the very content it began on
    git(work, "checkout", "-q", "feature")
    assert stamp(work)["id"] != before
    assert stamp(work)["history"][-1]["why"] == "the work tree changed"


@pytest.mark.parametrize(
    "after",
    [("checkout", "-q", "-b", "feature"), ("commit", "-q", "--amend", "-m", "reworded")],
    ids=["branch", "amend"],
)
def test_tested_then_committed_keeps_the_evidence_through(
    work: Path, after: tuple[str, ...]
) -> None:
    """The everyday flow: edit, test (green), commit, then a command that changes no content.
    The generation began before the edit; what is kept is the evidence of the tested tree."""
    write_calc(work)
    commit_all(work, "calc")
    assert subprocess.run([sys.executable, "-m", "genstamp", "stamp"], cwd=work).returncode == 0
    (work / "src" / "calc" / "__init__.py").write_text("def add(a, b):\n    return b + a\n")
    tested = run_pytest(work)
    assert tested.returncode == 0, tested.stdout + tested.stderr
    commit_all(work, "commute")  # no hook: HEAD's tree is now the tested tree
    before = stamp(work)["id"]
    proc = run_git(work, *after)
    assert proc.returncode == 0, proc.stderr
    assert stamp(work)["id"] == before
    assert stamp(work)["history"][-1]["why"] == "the work tree is as it was tested"
    verify = subprocess.run(
        [sys.executable, "-m", "genstamp", "verify", "--rev", "HEAD"],
        cwd=work,
        capture_output=True,
        text=True,
    )
    assert verify.returncode == 0, verify.stdout + verify.stderr
    # control: content changed since the run (and since the stamp): the same command begins
    # a new generation
    (work / "b.py").write_text("B = 'edited'\n")
    git(work, "checkout", "-q", "-b", "other")
    assert stamp(work)["id"] != before


def test_message_only_amend_keeps_and_a_content_amend_begins(work: Path) -> None:
    before = stamp(work)["id"]
    assert run_git(work, "commit", "-q", "--amend", "-m", "reworded").returncode == 0
    assert stamp(work)["id"] == before
    (work / "b.py").write_text("B = 2\n")
    git(work, "add", "b.py")
    assert run_git(work, "commit", "-q", "--amend", "-m", "with content").returncode == 0
    assert stamp(work)["id"] != before


def test_unchanged_file_checkout_keeps_and_a_restoring_one_begins(work: Path) -> None:
    before = stamp(work)["id"]
    assert run_git(work, "checkout", "--", "a.py").returncode == 0
    assert stamp(work)["id"] == before
    # Edited after the stamp, a new generation begins when that edit is seen by a hook;
    # restoring the file brings the work tree back to the generation's tree: kept.
    (work / "a.py").write_text("A = 3\n")
    assert run_git(work, "checkout", "--", "a.py").returncode == 0
    assert stamp(work)["id"] == before
    (work / "b.py").write_text("B = 3\n")  # an edit the checkout leaves: content changed
    assert run_git(work, "checkout", "--", "a.py").returncode == 0
    assert stamp(work)["id"] != before


def test_noop_rebase_keeps(work: Path) -> None:
    before = stamp(work)["id"]
    proc = run_git(work, "rebase", "--force-rebase", "HEAD~0")
    assert proc.returncode == 0, proc.stderr
    assert stamp(work)["id"] == before


def test_status_shows_the_last_hook(work: Path) -> None:
    run_git(work, "checkout", "-q", "-b", "feature")
    out = subprocess.run(
        [sys.executable, "-m", "genstamp", "status"], cwd=work, capture_output=True, text=True
    ).stdout
    assert "last hook   post-checkout kept:" in out


def test_a_damaged_index_never_fails_the_checkout(
    work: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """git checks out, then something damages the index before genstamp's hook reads it."""
    damaging = tmp_path / "damaging-genstamp"
    damaging.write_text(
        "#!/bin/sh\n"
        'printf "DIRC garbage" > "$(git rev-parse --git-dir)/index"\n'
        f'exec "{sys.executable}" -m genstamp "$@"\n'
    )
    damaging.chmod(0o755)
    (work / "a.py").write_text("A = 2\n")
    commit_all(work, "a2")
    git(work, "branch", "two")
    git(work, "reset", "-q", "--hard", "HEAD~1")
    cache = work / "__pycache__"
    cache.mkdir()
    (cache / "a.cpython-311.pyc").write_bytes(b"bytecode of a.py")
    monkeypatch.setenv("GENSTAMP", str(damaging))
    # a.py changed and has bytecode: the hook asks HEAD's tree (never the index: issue 16)
    # whether git tracks that bytecode, removes it, and leaves its claim; the damage is met by
    # the next reader, in one line
    proc = run_git(work, "checkout", "-q", "two")
    assert proc.returncode == 0, proc.stderr
    lines = [line for line in proc.stderr.splitlines() if line.startswith("genstamp:")]
    assert len(lines) == 1 and "Traceback" not in proc.stderr, proc.stderr
    assert lines[0].startswith("genstamp: new generation ") and "1 files" in lines[0], lines
    assert not cache.exists()
    status = subprocess.run(
        [sys.executable, "-m", "genstamp", "status"], cwd=work, capture_output=True, text=True
    )
    assert status.returncode != 0 and "Traceback" not in status.stderr
    assert len(status.stderr.strip().splitlines()) == 1 and "(hint: " in status.stderr
    # a branch creation needs nothing from the index: no warning, and the damage is met by
    # the next reader, which settles the hook's claim, in one line
    (work / ".git" / "index").unlink()
    git(work, "reset", "-q", "--hard")
    proc = run_git(work, "checkout", "-q", "-b", "feature")  # damages the index again
    assert proc.returncode == 0 and "warning" not in proc.stderr, proc.stderr
    status = subprocess.run(
        [sys.executable, "-m", "genstamp", "status"], cwd=work, capture_output=True, text=True
    )
    assert status.returncode != 0 and "Traceback" not in status.stderr
    lines = status.stderr.strip().splitlines()
    assert len(lines) == 1 and "(hint: " in lines[0], status.stderr


def test_a_damaged_stamp_begins_a_new_generation_without_failing(work: Path) -> None:
    (work / ".git" / "genstamp" / "generation.json").write_text("{")
    proc = run_git(work, "checkout", "-q", "-b", "feature")
    assert proc.returncode == 0 and "new generation" in proc.stderr, proc.stderr
    assert "could not be read" in stamp(work)["history"][-1]["why"]


@pytest.mark.parametrize("command", [("checkout", "-q", "-b", "feature"), ("merge", "-q", "side")])
def test_a_later_genstamps_stamp_is_left_as_it_is(work: Path, command: tuple[str, ...]) -> None:
    """A stamp of a later format version (the test environment's newer genstamp beside
    pre-commit's older hooks): the hook cannot read it, so it does not end it. It scrubs the
    bytecode, leaves the stamp byte for byte, and says so in one line naming both versions."""
    git(work, "checkout", "-q", "-b", "side")
    (work / "b.py").write_text("B = 2\n")
    commit_all(work, "side")
    git(work, "checkout", "-q", "main")
    path = work / ".git" / "genstamp" / "generation.json"
    data = json.loads(path.read_text())
    data["version"] = 99
    path.write_text(json.dumps(data))
    before = path.read_bytes()
    cache = work / "__pycache__"
    cache.mkdir(exist_ok=True)
    (cache / "a.cpython-311.pyc").write_bytes(b"\xa7\r\r\n" + bytes(12))
    proc = run_git(work, *command)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("genstamp: warning: "), proc.stderr
    assert "format version 99" in lines[0] and "reads version 4" in lines[0], lines
    assert "left as it is" in lines[0] and "(hint: " in lines[0], lines
    assert path.read_bytes() == before
    assert not cache.exists()


def test_genstamp_missing_warns_and_never_fails_the_checkout(
    work: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GENSTAMP", "no-such-genstamp")
    proc = run_git(work, "checkout", "-q", "-b", "feature")
    assert proc.returncode == 0
    assert proc.stderr.startswith("genstamp: warning: 'no-such-genstamp' is not on PATH")


@pytest.mark.parametrize("where", ["_restamp", "_full"])
def test_ctrl_c_in_a_hook_is_one_line_and_never_fails_the_command(
    work: Path,
    where: str,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Ctrl-C while a post-checkout runs (a large switch's scrub): one line saying what to
    do, exit 0, the stamp as it was; it was a traceback in git's output."""
    from genstamp import posthook

    before = generation.current(open_checkout(work))

    def interrupted(*args: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(posthook, where, interrupted)
    if where == "_full":  # reached when the light path cannot say
        monkeypatch.setattr(posthook, "_restamp", lambda *args: None)
    head = git(work, "rev-parse", "HEAD")
    code = posthook.main(str(work), "post-checkout", [head, head, "1"], {})
    err = capsys.readouterr().err
    assert code == 0 and err.count("\n") == 1 and "interrupted" in err, err
    assert "Traceback" not in err and "genstamp stamp" in err
    assert generation.current(open_checkout(work)) == before
