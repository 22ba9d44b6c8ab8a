"""`git status` as the walk that confirms a kept identity (gitwalk): taken only when git lists
the paths the kept record's walk found, each with the same lstat, and the index file did not
change while git looked; any other answer (a submodule, a nested repository, an intent-to-add
entry, another checkout, a failing git) walks whole. git's `add -A && write-tree` is the oracle
throughout; real git, real repositories."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pygit2
import pytest
from conftest import RunGenstamp, commit_all, git, git_tree, init_repo, subprocess_env
from identity_modes import RACY_NS, settle

from genstamp import gitwalk, idcache, identity
from genstamp.identity import Scan, scan
from genstamp.repo import open_checkout


@pytest.fixture
def base(repo: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A committed repository with a modified, an untracked and a deleted file."""
    monkeypatch.setattr(idcache, "_RACY_NS", RACY_NS)
    (repo / ".gitignore").write_text("*.log\n")
    (repo / "pkg").mkdir()
    (repo / "pkg" / "mod.py").write_text("X = 1\n")
    (repo / "top.txt").write_text("top\n")
    (repo / "gone.txt").write_text("gone\n")
    commit_all(repo, "base")
    (repo / "pkg" / "mod.py").write_text("X = 2\n")
    (repo / "new.py").write_text("N = 1\n")
    (repo / "gone.txt").unlink()
    (repo / "debug.log").write_text("ignored\n")
    return repo


class WalkSpy:
    """Counts libgit2's index-to-work-tree walks (the real ones run)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.walks = 0
        real = identity._diff_paths

        def counted(*args: Any) -> list[pygit2.DiffDelta]:
            self.walks += 1
            return real(*args)

        monkeypatch.setattr(identity, "_diff_paths", counted)


def known(path: Path) -> Scan:
    settle()
    result = scan(open_checkout(path), cache=True)
    assert result.tree == git_tree(path), f"known by {result.how}"
    return result


def test_git_status_walks_and_confirms_the_kept_tree_without_libgit2(
    base: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    spy = WalkSpy(monkeypatch)
    assert known(base).how == "walk"  # the tree made from git's list
    assert known(base).how == "kept"  # git's list confirms the record
    (base / "pkg" / "mod.py").write_text("X = 4\n")
    assert known(base).how == "walk"
    assert spy.walks == 0  # git walked, libgit2 never did


def test_a_path_git_cannot_look_at_is_walked_by_libgit2(
    base: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A link loop over a tracked folder: git says so on stderr and lists the link alone, where
    libgit2's walk names the tracked files under it too (the tree then differs)."""
    (base / "pkg" / "mod.py").unlink()
    (base / "pkg").rmdir()
    (base / "pkg").symlink_to("pkg")
    checkout = open_checkout(base)
    assert gitwalk.differing(gitwalk.start(str(checkout.workdir), str(checkout.gitdir))) is None
    spy = WalkSpy(monkeypatch)
    assert known(base).how == "walk"
    assert spy.walks == 1


def test_without_git_status_libgit2_walks_and_finds_the_same(
    base: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(identity, "GIT_STATUS", False)
    spy = WalkSpy(monkeypatch)
    assert [known(base).how for _ in range(2)] == ["walk", "kept"]
    assert spy.walks == 2


def test_a_tracked_file_touched_but_unchanged_is_still_the_kept_tree(base: Path) -> None:
    known(base)
    os.utime(base / "top.txt")  # stat-dirty, same bytes: git hashes it and finds it unchanged
    assert known(base).how == "kept"


def test_an_index_written_while_git_looked_is_no_answer(base: Path) -> None:
    checkout = open_checkout(base)
    walk = gitwalk.start(str(checkout.workdir), str(checkout.gitdir))
    git(base, "add", "new.py")
    assert gitwalk.differing(walk) is None


def test_git_lists_what_libgit2_lists(base: Path) -> None:
    checkout = open_checkout(base)
    found = gitwalk.differing(gitwalk.start(str(checkout.workdir), str(checkout.gitdir)))
    assert found is not None
    assert sorted(found) == [
        ("gone.txt", gitwalk.DELETED),
        ("new.py", gitwalk.UNTRACKED),
        ("pkg/mod.py", gitwalk.MODIFIED),
    ]
    deltas = checkout.repo.index.diff_to_workdir(
        flags=pygit2.enums.DiffOption.INCLUDE_UNTRACKED
        | pygit2.enums.DiffOption.RECURSE_UNTRACKED_DIRS
        | pygit2.enums.DiffOption.INCLUDE_TYPECHANGE
    )
    assert sorted(found) == sorted((d.new_file.path, int(d.status)) for d in deltas.deltas)


@pytest.mark.parametrize(
    "out",
    [
        pytest.param(b"? nested/\0", id="untracked-folder"),
        pytest.param(
            b"1 .M SC.. 160000 160000 160000 " + b"a" * 40 + b" " + b"a" * 40 + b" sub\0",
            id="submodule",
        ),
        pytest.param(
            b"1 .A N... 000000 000000 100644 " + b"0" * 40 + b" " + b"0" * 40 + b" ita\0",
            id="intent-to-add",
        ),
        pytest.param(
            b"2 R. N... 100644 100644 100644 " + b"a" * 40 + b" " + b"a" * 40 + b" R100 b\0a\0",
            id="rename",
        ),
        pytest.param(b"# branch.oid x\0", id="header"),
        pytest.param(b"1 .M N...\0", id="short"),
    ],
)
def test_answers_that_cannot_stand_for_a_walk_are_none(out: bytes) -> None:
    assert gitwalk.parse(out) is None


def test_of_the_ignored_paths_the_rule_files_alone_are_named() -> None:
    """`--ignored=matching`: an ignored `.gitattributes` still applies to the files beside it
    (one added or edited changes the tree); other ignored paths are no difference."""
    out = b"! debug.log\0! build/\0! pkg/.gitattributes\0! .gitignore\0? new\0"
    assert gitwalk.parse(out) == [
        ("pkg/.gitattributes", gitwalk.IGNORED),
        (".gitignore", gitwalk.IGNORED),
        ("new", gitwalk.UNTRACKED),
    ]


def test_staged_only_changes_are_not_differences_from_the_index() -> None:
    line = b"1 M. N... 100644 100644 100644 " + b"a" * 40 + b" " + b"b" * 40 + b" name with space\0"
    assert gitwalk.parse(line + b"? new\0") == [("new", gitwalk.UNTRACKED)]
    typechange = line.replace(b"1 M.", b"1 .T")
    assert gitwalk.parse(typechange) == [("name with space", gitwalk.TYPECHANGE)]


def test_a_walk_started_ahead_serves_only_its_own_checkout(
    base: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    other = init_repo(tmp_path / "other")
    monkeypatch.delenv("GIT_DIR", raising=False)
    monkeypatch.delenv("GIT_WORK_TREE", raising=False)
    gitwalk.start_ahead(str(other))
    [ahead] = gitwalk._STARTED
    checkout = open_checkout(base)
    walk = gitwalk.take(str(checkout.workdir), str(checkout.gitdir))
    assert walk is not ahead and ahead.proc is not None and ahead.proc.returncode is not None
    assert walk.workdir == str(checkout.workdir)
    assert gitwalk.differing(walk) is not None and not gitwalk._STARTED
    gitwalk.start_ahead(str(base / "pkg"))
    [ahead] = gitwalk._STARTED
    assert gitwalk.take(str(checkout.workdir), str(checkout.gitdir)) is ahead
    gitwalk.discard(ahead)


def test_no_walk_ahead_where_git_is_pointed_elsewhere_or_the_monitor_is_on(
    base: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GIT_DIR", str(base / ".git"))
    gitwalk.start_ahead(str(base))
    assert not gitwalk._STARTED
    monkeypatch.delenv("GIT_DIR")
    git(base, "config", "genstamp.monitor", "watchman")
    gitwalk.start_ahead(str(base))
    assert not gitwalk._STARTED


def test_status_as_a_process_takes_the_kept_tree_from_git_walked_ahead(
    base: Path, tmp_path: Path, genstamp: RunGenstamp, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The `genstamp` command starts `git status` before it imports the rest; with a kept
    record that git confirms, `status --json` is what it is with libgit2's walk, from the top
    of the work tree, a subfolder and `-C`."""
    monkeypatch.setattr(identity, "GIT_STATUS", False)
    assert known(base).how == "walk"
    assert known(base).how == "kept"  # libgit2's walk confirms the record
    code, walked, _ = genstamp("-C", base, "status", "--json")
    assert code == 0
    time.sleep(2.1)  # the command's racy window is the real one (2 s): an older index
    command = [sys.executable, "-m", "genstamp"]
    for n, (cwd, args) in enumerate(
        (
            (base, ["status", "--json"]),
            (base / "pkg", ["status", "--json"]),
            (tmp_path, ["-C", str(base), "status", "--json"]),
        )
    ):
        trace = tmp_path / f"trace-{n}"
        env = subprocess_env(PYTHONPATH=os.pathsep.join(sys.path), GIT_TRACE=str(trace))
        proc = subprocess.run([*command, *args], cwd=cwd, env=env, capture_output=True, text=True)
        assert proc.returncode == 0, proc.stderr
        assert json.loads(proc.stdout) == json.loads(walked)
        # one git status: the one started ahead, taken by the checkout genstamp opened
        assert trace.read_text().count("built-in: git status --porcelain=v2") == 1
    assert json.loads(walked)["tree"] == git_tree(base)


def test_the_command_starts_the_walk_ahead_and_status_takes_it(
    base: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from genstamp import posthook

    ahead: list[gitwalk.Walk] = []  # the walks started before genstamp's imports
    real = gitwalk.hand_over

    def spy(walk: gitwalk.Walk) -> None:
        ahead.append(walk)
        real(walk)

    monkeypatch.setattr(gitwalk, "hand_over", spy)
    monkeypatch.delenv("GIT_DIR", raising=False)
    monkeypatch.delenv("GIT_WORK_TREE", raising=False)
    taken: list[gitwalk.Walk] = []
    real_take = gitwalk.take
    monkeypatch.setattr(gitwalk, "take", lambda *a: taken.append(real_take(*a)) or taken[-1])
    settle()  # the files written before are old enough for the record to vouch for them
    assert posthook.launch(["-C", str(base), "status"]) == 0  # no record yet: git's list
    assert len(ahead) == 1 and ahead[0].workdir == str(base) and not gitwalk._STARTED
    assert len(taken) == 1 and taken[0] is ahead[0]  # the walk started ahead, not another
    assert known(base).how == "kept"  # a record (confirmed by git, started here)
    settle()
    assert posthook.launch(["-C", str(base), "status"]) == 0  # git confirms the record
    assert len(ahead) == 2 and not gitwalk._STARTED
    assert len(taken) == 3 and taken[2] is ahead[1]
    assert capsys.readouterr().out.count(f"tree        {git_tree(base)}\n") == 2
    assert posthook.launch(["-C", str(base), "scrub", "--dry-run"]) == 0
    assert len(ahead) == 2  # only status walks ahead


def test_a_walk_started_ahead_and_not_needed_is_stopped(
    base: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("GIT_DIR", raising=False)
    monkeypatch.delenv("GIT_WORK_TREE", raising=False)
    monkeypatch.setattr(identity, "GIT_STATUS", False)
    gitwalk.start_ahead(str(base))
    [ahead] = gitwalk._STARTED
    assert known(base).how == "walk"  # libgit2's
    assert not gitwalk._STARTED
    assert ahead.proc is not None and ahead.proc.returncode is not None


def test_no_walk_ahead_where_the_checkout_cannot_be_found(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A broken `.git` file, a folder that is gone: nothing started, and nothing raised (the
    command itself then says what is wrong, as one line)."""
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / ".git").write_text(f"gitdir: {tmp_path / 'nowhere'}\n")
    monkeypatch.delenv("GIT_DIR", raising=False)
    monkeypatch.delenv("GIT_WORK_TREE", raising=False)
    gitwalk.start_ahead(str(broken))
    gitwalk.start_ahead(str(tmp_path / "gone"))
    assert not gitwalk._STARTED


def test_core_ignorecase_is_gits_own_tree(base: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """git matches names without regard to case; libgit2's walk does not: git makes the tree
    (a file renamed in case alone leaves neither name behind in libgit2's)."""
    git(base, "config", "core.ignorecase", "true")
    spy = WalkSpy(monkeypatch)
    seen = known(base)
    assert seen.how == "git" and seen.tree == git_tree(base)
    assert spy.walks == 0


def test_a_global_config_only_git_reads_is_gits_own_tree(
    base: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """GIT_CONFIG_GLOBAL names a config whose excludesFile hides an untracked file: git reads
    it, libgit2 ignores the variable. status and verify give git's tree, kept record or not:
    git makes it."""
    assert known(base).how == "walk"
    assert known(base).how == "kept"
    (base / "secret.txt").write_text("s\n")
    excludes = tmp_path / "excludes"
    excludes.write_text("secret.txt\n")
    other = tmp_path / "other-gitconfig"
    other.write_text(f"[core]\n\texcludesFile = {excludes}\n")
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(other))
    spy = WalkSpy(monkeypatch)
    settle()
    cached = scan(open_checkout(base), cache=True)
    walked = scan(open_checkout(base), cache=False)
    assert cached.tree == walked.tree == git_tree(base)
    assert (cached.how, walked.how) == ("git", "git")
    assert spy.walks == 0  # neither git's list nor libgit2's walk, resting on other config


@pytest.mark.parametrize("variable", ["GIT_CONFIG_NOSYSTEM", "GIT_CONFIG_GLOBAL"])
def test_libgit2_reads_the_config_git_reads(
    base: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, variable: str
) -> None:
    """libgit2 ignores GIT_CONFIG_NOSYSTEM and GIT_CONFIG_GLOBAL: it would read a system
    config whose excludesFile hides a file git shows (or not read the global one git reads
    instead that hides it). genstamp points libgit2 at the files git reads: the tree is git's
    (the oracle, in the same environment) and git's list is taken, libgit2 never walking."""
    (base / "secret.txt").write_text("s\n")
    excludes = tmp_path / "excludes"
    excludes.write_text("secret.txt\n")
    hiding = f"[core]\n\texcludesFile = {excludes}\n"
    system = tmp_path / "system"
    system.mkdir()
    level = pygit2.enums.ConfigLevel.SYSTEM
    saved = pygit2.settings.search_path[level]
    try:
        if variable == "GIT_CONFIG_NOSYSTEM":
            (system / "gitconfig").write_text(hiding)
            pygit2.settings.search_path[level] = str(system)
            monkeypatch.setenv(variable, "1")
        else:
            (tmp_path / "global").mkdir()
            (tmp_path / "global" / ".gitconfig").write_text(hiding)
            monkeypatch.setenv(variable, str(tmp_path / "global" / ".gitconfig"))
        spy = WalkSpy(monkeypatch)
        assert known(base).how == "walk"  # the tree made from git's list (known: git's tree)
        assert known(base).how == "kept"
        walked = scan(open_checkout(base), cache=False).tree
        hidden = "secret.txt" not in git(base, "ls-tree", "-r", "--name-only", walked)
        assert hidden is (variable == "GIT_CONFIG_GLOBAL")
        assert spy.walks == 1  # the cache=False walk alone
    finally:
        pygit2.settings.search_path[level] = saved


def _paths(tmp_path: Path) -> tuple[str, str, str]:
    return (str(tmp_path / "system"), str(tmp_path / "xdg"), str(tmp_path / "home"))


# files below tmp_path, the environment, whether git reads other files than libgit2 with its
# default search paths, and whether it still does once they follow git's variables
# (``gitwalk.git_search_paths``: only a file whose name is not libgit2's cannot be followed)
@pytest.mark.parametrize(
    ("files", "env", "differs", "after"),
    [
        ((), {}, False, False),
        (("home/.gitconfig",), {"GIT_CONFIG_GLOBAL": "@home/.gitconfig"}, False, False),
        (("home/.gitconfig", "other"), {"GIT_CONFIG_GLOBAL": "@other"}, True, True),
        (("home/.gitconfig", "o/.gitconfig"), {"GIT_CONFIG_GLOBAL": "@o/.gitconfig"}, True, False),
        (("home/.gitconfig", "xdg/config"), {"GIT_CONFIG_GLOBAL": "@home/.gitconfig"}, True, False),
        (
            ("home/.gitconfig", "xdg/config", "xdg/ignore"),
            {"GIT_CONFIG_GLOBAL": "@home/.gitconfig"},
            True,
            True,
        ),
        ((), {"GIT_CONFIG_GLOBAL": "/dev/null"}, False, False),
        (("home/.gitconfig",), {"GIT_CONFIG_GLOBAL": "/dev/null"}, True, False),
        ((), {"GIT_CONFIG_GLOBAL": "@missing"}, False, False),
        (("system/gitconfig",), {"GIT_CONFIG_NOSYSTEM": "1"}, True, False),
        (("system/gitconfig", "system/gitattributes"), {"GIT_CONFIG_NOSYSTEM": "1"}, True, True),
        ((), {"GIT_CONFIG_NOSYSTEM": "1"}, False, False),
        (("system/gitconfig",), {"GIT_CONFIG_NOSYSTEM": "0"}, False, False),
        (("system/gitconfig",), {"GIT_CONFIG_NOSYSTEM": "2"}, True, False),
        (("system/gitconfig", "other"), {"GIT_CONFIG_SYSTEM": "@other"}, True, True),
        (("system/gitconfig", "s/gitconfig"), {"GIT_CONFIG_SYSTEM": "@s/gitconfig"}, True, False),
        (("system/gitconfig",), {"GIT_CONFIG_SYSTEM": "@system/gitconfig"}, False, False),
        (("system/gitattributes",), {"GIT_ATTR_NOSYSTEM": "true"}, True, False),
        ((), {"GIT_ATTR_NOSYSTEM": "true"}, False, False),
        ((), {"GIT_ATTR_SOURCE": "HEAD"}, True, True),
    ],
)
def test_which_environments_make_git_read_other_config_than_libgit2(
    tmp_path: Path, files: tuple[str, ...], env: dict[str, str], differs: bool, after: bool
) -> None:
    for name in ("system", "xdg", "home", "o", "s"):
        (tmp_path / name).mkdir()
    for name in files:
        (tmp_path / name).write_text("[core]\n")
    # "@name" is a file below tmp_path; any other value is given as it is
    environ = {k: str(tmp_path / v[1:]) if v.startswith("@") else v for k, v in env.items()}
    assert gitwalk.reads_other_config(environ, *_paths(tmp_path)) is differs
    aligned = gitwalk.git_search_paths(environ, *_paths(tmp_path))
    assert gitwalk.reads_other_config(environ, *aligned) is after
    assert (aligned == _paths(tmp_path)) is (not differs or after)
