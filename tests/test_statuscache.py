"""The kept answer of `genstamp status` (statuscache): given again only while everything status
read is as it was and the work tree is still the kept identity's; after any change it is either
not given or the very answer a whole status gives. Real git, real pytest, real Watchman; the
whole status (cli.main, which computes it and keeps it) is the oracle."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import commit_all, exclude, git, run_pytest, subprocess_env
from identity_modes import RACY_NS, require_watchman, settle, unwatch

from genstamp import cleanrecord, idcache, statuscache
from genstamp.cli import main as genstamp_main

SUITE = "def test_one():\n    assert True\n"


@pytest.fixture
def base(repo: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setattr(idcache, "_RACY_NS", RACY_NS)
    monkeypatch.setattr(statuscache, "RACY_NS", RACY_NS)
    (repo / ".gitignore").write_text("__pycache__/\n*.log\n")
    (repo / "pyproject.toml").write_text('[tool.pytest.ini_options]\ntestpaths = ["tests"]\n')
    (repo / "tests").mkdir()
    (repo / "tests" / "test_a.py").write_text(SUITE)
    (repo / "pkg.py").write_text("X = 1\n")
    commit_all(repo, "base")
    (repo / "untracked.txt").write_text("u\n")
    return repo


def whole(path: Path, capsys: pytest.CaptureFixture[str]) -> tuple[str, str]:
    """status computed whole (and kept), as text and as JSON."""
    out = []
    for args in ([], ["--json"]):
        capsys.readouterr()
        assert genstamp_main(["-C", str(path), "status", *args]) == 0
        out.append(capsys.readouterr().out)
    return out[0], out[1]


def kept(path: Path, capsys: pytest.CaptureFixture[str]) -> tuple[str | None, str | None]:
    """The kept answer, as text and as JSON (None where it is not given)."""
    out: list[str | None] = []
    for as_json in (False, True):
        capsys.readouterr()
        given = statuscache.answer(str(path), as_json)
        printed = capsys.readouterr().out
        assert given or not printed
        out.append(printed if given else None)
    return out[0], out[1]


def steady(path: Path, capsys: pytest.CaptureFixture[str]) -> tuple[str, str]:
    """Whole, then kept once the racy window has passed: the kept answer is given, and is the
    whole one."""
    settle()
    answer = whole(path, capsys)
    settle()
    answer = whole(path, capsys)  # inputs now older than the window: kept
    assert kept(path, capsys) == answer
    return answer


def _stamp(path: Path) -> None:
    assert genstamp_main(["-C", str(path), "stamp"]) == 0


def _clean_record(path: Path) -> None:
    tree = next(
        line.split()[1] for line in whole_text(path).splitlines() if line.startswith("tree ")
    )
    cleanrecord.write(
        path / ".git",
        cleanrecord.CleanRoom(
            tree, True, (), {}, {"tests": 1}, True, False, cleanrecord.now(), "0.1.0", "pip"
        ),
    )


def whole_text(path: Path) -> str:
    proc = subprocess.run(
        [sys.executable, "-m", "genstamp", "-C", str(path), "status"],
        capture_output=True,
        text=True,
        env=subprocess_env(),
    )
    return proc.stdout


def _global_excludes(path: Path) -> None:
    home = Path(os.environ["HOME"])
    excludes = path.parent / "excludes"
    excludes.write_text("untracked.txt\n")
    with open(home / ".gitconfig", "a") as fh:
        fh.write(f"[core]\n\texcludesFile = {excludes}\n")


CHANGES: dict[str, Callable[[Path], object]] = {
    "edit a tracked file": lambda p: (p / "pkg.py").write_text("X = 2\n"),
    "edit, same size": lambda p: (p / "pkg.py").write_text("X = 3\n"),
    "add an untracked file": lambda p: (p / "new.txt").write_text("n\n"),
    "remove a file": lambda p: (p / "new.txt").unlink(),
    "ignore a file in info/exclude": lambda p: exclude(p, "untracked.txt"),
    "commit": lambda p: commit_all(p, "next"),
    "switch to a new branch": lambda p: git(p, "checkout", "-q", "-b", "other"),
    "move the branch": lambda p: git(p, "update-ref", "refs/heads/other", "HEAD~1"),
    "pack the refs": lambda p: git(p, "pack-refs", "--all"),
    # a branch kept under its old name after a rename: HEAD -> alias -> other
    "name the branch through a symbolic ref": lambda p: (
        git(p, "symbolic-ref", "refs/heads/alias", "refs/heads/other"),
        git(p, "symbolic-ref", "HEAD", "refs/heads/alias"),
    ),
    "move the branch the alias names": lambda p: git(
        p,
        "update-ref",
        "refs/heads/other",
        git(p, "commit-tree", "HEAD^{tree}", "-p", "HEAD", "-m", "x"),
    ),
    "stamp": _stamp,
    "run the tests": lambda p: run_pytest(p, "-p", "no:cacheprovider"),
    "a clean-room record": _clean_record,
    "a global excludesFile": _global_excludes,
    "gc": lambda p: git(p, "gc", "-q", "--prune=now"),
    "stage a file": lambda p: ((p / "pkg.py").write_text("X = 4\n"), git(p, "add", "pkg.py")),
}


def test_after_any_change_the_kept_answer_is_the_whole_one_or_none(
    base: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Each change in turn, on one repository: the kept answer, asked first, is either not
    given or the whole status's; then the new answer is kept, and given while nothing moves."""
    before = steady(base, capsys)
    for name, change in CHANGES.items():
        settle()
        change(base)
        given = kept(base, capsys)
        now = whole(base, capsys)
        for shape, answer in zip(("text", "json"), given, strict=True):
            assert answer is None or answer == now[("text", "json").index(shape)], name
        if now != before:
            assert given == (None, None), f"{name}: a kept answer of before was given"
        before = steady(base, capsys)


def test_the_kept_answer_imports_no_pygit2(base: Path, capsys: pytest.CaptureFixture[str]) -> None:
    text, _ = steady(base, capsys)
    probe = (
        "import sys\nfrom genstamp.posthook import launch\n"
        f"code = launch(['-C', {str(base)!r}, 'status'])\n"
        "sys.stderr.write(repr(('pygit2' in sys.modules, 'genstamp.cli' in sys.modules)))\n"
        "raise SystemExit(code)\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, env=subprocess_env()
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == text
    assert proc.stderr == repr((False, False))


def test_what_the_answer_cannot_vouch_for_is_not_kept(
    base: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A config include (files not stamped) keeps nothing; a kept file of another version, or
    one that is not JSON, is remade, never an error; an answer for another work tree is not
    given here."""
    envs = base / ".git" / "genstamp" / "clean-room" / "envs" / "abc" / "bin"
    envs.mkdir(parents=True)
    (envs / "python").write_text("")  # a cached clean-room environment: status never reads it
    steady(base, capsys)
    kept_file = base / ".git" / "genstamp" / statuscache.NAME
    assert kept_file.is_file()
    stamped = [path for path, _ in json.loads(kept_file.read_text())["stamps"]]
    assert any(p.endswith("clean-room") for p in stamped)
    assert not [p for p in stamped if "/envs" in p], stamped
    git(base, "config", "include.path", str(base.parent / "more.gitconfig"))
    settle()
    whole(base, capsys)
    settle()
    whole(base, capsys)
    assert not kept_file.exists()
    git(base, "config", "--unset", "include.path")
    for damaged in ("{not json", '{"format": "genstamp-status", "version": 99}'):
        steady(base, capsys)
        kept_file.write_text(damaged)
        assert kept(base, capsys) == (None, None)
        steady(base, capsys)


def test_another_environment_is_not_given_the_kept_answer(
    base: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    steady(base, capsys)
    other = base.parent / "other.gitconfig"
    other.write_text(f"[core]\n\texcludesFile = {base.parent / 'x'}\n")
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(other))
    assert kept(base, capsys) == (None, None)


def test_with_watchman_the_kept_answer_needs_no_git(
    base: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """With the monitor on, Watchman saying nothing changed confirms the tree: no git walk.
    After an edit, Watchman names it and the kept answer is not given."""
    require_watchman()
    git(base, "config", "genstamp.monitor", "watchman")
    try:
        answer = steady(base, capsys)

        def no_git(*args: object, **kw: object) -> None:
            raise AssertionError("git was started")

        with monkeypatch.context() as m:
            m.setattr(statuscache.gitwalk, "start", no_git)
            assert kept(base, capsys) == answer
            (base / "pkg.py").write_text("X = 9\n")
            assert kept(base, capsys) == (None, None)
        assert whole(base, capsys) != answer
        steady(base, capsys)
    finally:
        unwatch(base)


def test_a_linked_files_stamp_follows_its_target(tmp_path: Path) -> None:
    """A config file linked into place (a dotfiles folder): an edit of its target leaves the
    link's own lstat as it was, and must change the stamp all the same."""
    from genstamp.statuscache import _stamp

    target = tmp_path / "dotfiles" / "gitconfig"
    target.parent.mkdir()
    target.write_text("[core]\n")
    link = tmp_path / ".gitconfig"
    link.symlink_to(target)
    before = _stamp(str(link))
    target.write_text("[core]\n\tautocrlf = input\n")
    assert _stamp(str(link)) != before
    assert _stamp(str(target)) is not None and len(_stamp(str(target)) or []) == 5
