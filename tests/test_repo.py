"""Odd repositories: each works (the tree identity equals git's, stamps land in the right git
dir, the gate accepts a fresh run and refuses a stale one), or fails with exit 2 and one precise
`genstamp:` line naming the limitation.

test_verify.py covers a shallow clone's --rev boundary and a plain linked worktree;
test_e2e.py an absolute core.hooksPath. Here: history the clone lacks (shallow,
partial), files the checkout lacks on purpose (sparse), worktrees moved behind git's back, hooks
reached through a relative core.hooksPath or a submodule, the environment git gives hooks, and
SHA-256 object ids.
"""

from __future__ import annotations

import contextlib
import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pygit2
import pytest
from conftest import commit_all, git, git_tree, init_repo, run_genstamp, run_pytest, subprocess_env

from genstamp.generation import current
from genstamp.identity import hidden_changes, tree_identity
from genstamp.repo import find_place, open_checkout

CALC = Path("src", "calc", "__init__.py")
GIT_FEATURE_SHA256 = 1 << 11  # libgit2's git_feature_t; pygit2.enums.Feature lacks it


def genstamp(
    cwd: Path, *args: str, stdin: str | None = None, **env: str
) -> subprocess.CompletedProcess[str]:
    proc = run_genstamp(cwd, *args, stdin=stdin, env=subprocess_env(**env))
    assert "Traceback" not in proc.stdout + proc.stderr, proc.stderr
    return proc


def one_error_line(proc: subprocess.CompletedProcess[str]) -> str:
    """The contract for a limitation: exit 2, nothing on stdout, one `genstamp:` line; a
    post-* hook says it as a warning and exits 0 (it never fails git's command)."""
    hook = proc.args[3:4] == ["hook"] and proc.args[4] != "pre-push"
    assert proc.returncode == (0 if hook else 2), proc.stdout + proc.stderr
    assert not hook or proc.stderr.startswith("genstamp: warning: ")
    assert proc.stdout == ""
    lines = proc.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("genstamp: "), proc.stderr
    return lines[0]


def gitdir_of(work: Path) -> Path:
    return Path(git(work, "rev-parse", "--absolute-git-dir"))


def stamp_of(work: Path) -> dict[str, Any]:
    """The generation as the gate sees it: a hook leaves a claim, the first reader settles it."""
    current(open_checkout(work))
    data: dict[str, Any] = json.loads(
        (gitdir_of(work) / "genstamp" / "generation.json").read_text()
    )
    return data


def stamp_and_test(work: Path) -> None:
    proc = genstamp(work, "stamp")
    assert proc.returncode == 0, proc.stderr
    tested = run_pytest(work)
    assert tested.returncode == 0, tested.stdout + tested.stderr


def accepted(work: Path, *args: str) -> None:
    proc = genstamp(work, "verify", *args)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def refused(work: Path, *args: str) -> str:
    proc = genstamp(work, "verify", *args)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    return proc.stdout


def with_history(project: Path) -> Path:
    """conftest's project with a second commit (an older blob of calc the clones may lack)."""
    (project / CALC).write_text("def add(a, b):\n    return b + a\n")
    commit_all(project, "commute")
    return project


# -- history the clone does not have --------------------------------------------------------------


def test_shallow_clone_identity_and_a_commit_past_the_boundary(
    project: Path, tmp_path: Path
) -> None:
    source = with_history(project)
    shallow = tmp_path / "shallow"
    git(tmp_path, "clone", "-q", "--depth", "1", source.as_uri(), str(shallow))
    assert git(shallow, "rev-parse", "--is-shallow-repository") == "true"
    stamp_and_test(shallow)
    accepted(shallow)
    (shallow / CALC).write_text("def add(a, b):\n    return a + b + 0\n")
    (shallow / "new.txt").write_text("untracked\n")
    assert tree_identity(open_checkout(shallow)) == git_tree(shallow)
    # a commit on top of the boundary, pushed untested: refused by its tree
    commit_all(shallow, "untested")
    sha = git(shallow, "rev-parse", "HEAD")
    proc = genstamp(
        shallow,
        "hook",
        "pre-push",
        "origin",
        source.as_uri(),
        stdin=f"refs/heads/main {sha} refs/heads/main {'0' * 40}\n",
    )
    assert proc.returncode == 1
    assert "tree-mismatch" in proc.stderr and CALC.as_posix() in proc.stderr


def missing_objects(work: Path) -> set[str]:
    out = git(work, "rev-list", "--objects", "--all", "--missing=print")
    return {line[1:] for line in out.splitlines() if line.startswith("?")}


def test_partial_clone_without_blobs(project: Path, tmp_path: Path) -> None:
    """--filter=blob:none: the old blob of calc is not here. genstamp needs trees, and blobs of
    files that changed on disk, never a blob it would have to fetch."""
    source = with_history(project)
    git(source, "config", "uploadpack.allowFilter", "true")
    partial = tmp_path / "partial"
    git(tmp_path, "clone", "-q", "--filter=blob:none", source.as_uri(), str(partial))
    assert git(partial, "config", "remote.origin.promisor") == "true"
    missing = missing_objects(partial)
    old_calc = git(source, "rev-parse", f"HEAD~1:{CALC.as_posix()}")
    assert old_calc in missing  # really partial

    stamp_and_test(partial)
    accepted(partial)
    accepted(partial, "--rev", "HEAD")
    text = refused(partial, "--rev", "HEAD~1")  # its tree is here, its blobs are not
    assert text.startswith("tree-mismatch: ") and CALC.as_posix() in text
    (partial / CALC).write_text("def add(a, b):\n    return a + b + 0\n")
    (partial / "tests" / "new_data.txt").write_text("x\n")
    assert tree_identity(open_checkout(partial)) == git_tree(partial)
    text = refused(partial)
    assert CALC.as_posix() in text and "tests/new_data.txt" in text
    assert missing_objects(partial) >= {old_calc}  # nothing was fetched for genstamp


@pytest.mark.parametrize("spec", ["blob:none", "tree:0"])
def test_a_partial_clone_judges_a_tree_whose_settings_it_has_not_fetched(
    project: Path, tmp_path: Path, spec: str
) -> None:
    """A partial clone judges a branch it has not checked out (a merge gate's PR head): the
    branch's pyproject.toml, whose settings hold the tree to them, is a blob the clone left
    out (``tree:0``: the branch's tree too). libgit2 reads what is at hand only: the gate ended
    with the blob's id for a message, or took the defaults for the settings (a tree not at
    hand: as none). It reads them as git does, fetching them."""
    (project / "pyproject.toml").write_text(
        (project / "pyproject.toml").read_text() + "\n[tool.genstamp]\nallow-partial = true\n"
    )
    git(project, "checkout", "-q", "-b", "feature")
    commit_all(project, "partial runs allowed on the branch")
    git(project, "checkout", "-q", "main")
    git(project, "config", "uploadpack.allowFilter", "true")
    partial = tmp_path / "partial"
    git(tmp_path, "clone", "-q", f"--filter={spec}", project.as_uri(), str(partial))
    tree = git(partial, "log", "-1", "--format=%T", "origin/feature")  # (^{tree} fetches it)
    left_out = (
        tree if spec == "tree:0" else git(partial, "rev-parse", "origin/feature:pyproject.toml")
    )
    assert left_out in missing_objects(partial)  # really partial
    from genstamp.facts import committed_settings

    held = committed_settings(open_checkout(partial), tree)
    assert held is not None and held.allow_partial
    text = refused(partial, "--rev", "origin/feature")  # never tested here: judged, no error
    assert "no-evidence: " in text, text


def partial_clone_of_a_branch(
    project: Path, tmp_path: Path, spec: str, files: dict[str, str]
) -> Path:
    """A clone ``--filter=SPEC`` of ``project``, whose branch `feature` (one commit past main,
    adding ``files``) it has not checked out."""
    git(project, "checkout", "-q", "-b", "feature")
    for name, text in files.items():
        (project / name).write_text(text)
    commit_all(project, "a branch")
    git(project, "checkout", "-q", "main")
    git(project, "config", "uploadpack.allowFilter", "true")
    partial = tmp_path / "partial"
    git(tmp_path, "clone", "-q", f"--filter={spec}", project.as_uri(), str(partial))
    return partial


def test_a_remote_that_never_answers_holds_the_gate_for_a_bounded_time(
    project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A treeless clone judging a branch it has not checked out, whose remote takes the
    connection and never answers: git's fetch of the tree would wait for ever, and the gate
    with it. It waits ``FETCH_SECONDS``, then the tree is not at hand, as when git fails; and
    it asks once: each object it went on to ask for waited as long again (h193: 4 times)."""
    import socket
    import threading
    import time

    from genstamp import facts, notes

    partial = partial_clone_of_a_branch(project, tmp_path, "tree:0", {"extra.txt": "x\n"})
    tree = git(partial, "log", "-1", "--format=%T", "origin/feature")
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen()
    held: list[socket.socket] = []

    def serve() -> None:
        with contextlib.suppress(OSError):  # (closed at the end)
            while True:
                held.append(server.accept()[0])  # and never a word

    threading.Thread(target=serve, daemon=True).start()
    git(partial, "remote", "set-url", "origin", f"http://127.0.0.1:{server.getsockname()[1]}/r")
    monkeypatch.setattr(notes, "FETCH_SECONDS", 2, raising=False)
    began = time.monotonic()
    assert facts.committed_settings(open_checkout(partial), tree) is None
    assert time.monotonic() - began < 60  # (for ever before)
    time.sleep(0.5)
    assert len(held) == 1  # git did ask, once
    assert facts.committed_settings(open_checkout(partial), tree) is None
    assert len(held) == 1  # and not again
    server.close()


def test_a_suite_file_a_partial_clone_cannot_fetch_is_said_not_taken_as_absent(
    project: Path, tmp_path: Path
) -> None:
    """A branch's `pytest.ini` (its testpaths) that a partial clone left out and cannot fetch
    (the remote out of reach): read as absent, the branch's `pyproject.toml` defined another
    suite, and the gate judged against it (h189). It says the file cannot be fetched.
    Control: with the remote at hand, the suite is the `pytest.ini`'s."""
    from genstamp import facts
    from genstamp.errors import GenstampError

    ini = {"pytest.ini": "[pytest]\ntestpaths = src\n"}
    partial = partial_clone_of_a_branch(project, tmp_path, "blob:none", ini)
    tree = git(partial, "rev-parse", "origin/feature^{tree}")
    url = git(partial, "remote", "get-url", "origin")
    git(partial, "remote", "set-url", "origin", (tmp_path / "gone").as_uri())
    with pytest.raises(GenstampError, match=r"pytest\.ini of tree .* cannot fetch it"):
        facts.tree_suites(open_checkout(partial).repo, tree, ())
    git(partial, "remote", "set-url", "origin", url)
    suites = facts.tree_suites(open_checkout(partial).repo, tree, ())
    assert suites is not None and [s.config.testpaths for s in suites] == [("src",)]


# -- files the checkout lacks on purpose --------------------------------------------------------


@pytest.fixture
def sparse(tmp_path: Path) -> Path:
    source = init_repo(tmp_path / "source")
    for folder in ("app", "docs", "tools"):
        (source / folder).mkdir()
        (source / folder / "README").write_text(f"{folder}\n")
        (source / folder / "a.py").write_text("X = 1\n")
    (source / "top.txt").write_text("top\n")
    commit_all(source, "three folders")
    clone = tmp_path / "sparse"
    git(tmp_path, "clone", "-q", source.as_uri(), str(clone))
    git(clone, "sparse-checkout", "set", "app")
    assert not (clone / "docs").exists()
    assert "S docs/README" in git(clone, "ls-files", "-t").splitlines()
    return clone


def test_sparse_checkout_identity_equals_git(sparse: Path) -> None:
    assert tree_identity(open_checkout(sparse)) == git(sparse, "rev-parse", "HEAD^{tree}")
    (sparse / "app" / "a.py").write_text("X = 2\n")
    assert tree_identity(open_checkout(sparse)) == git_tree(sparse)


def test_a_sparse_checkouts_absent_files_are_no_hidden_change(sparse: Path) -> None:
    """Outside the cone the index's entries are skip-worktree and their files absent: no
    change. A file written there with other content is one git does not see."""
    assert hidden_changes(open_checkout(sparse)) == {}
    (sparse / "docs").mkdir()
    (sparse / "docs" / "README").write_text("docs\n")  # as committed
    assert hidden_changes(open_checkout(sparse)) == {}
    (sparse / "docs" / "a.py").write_text("X = 3\n")
    # (before any git command: git 2.37+ clears the flag of a present file as it reads the
    # index, where libgit2's walk, and so the tree, honours it)
    assert hidden_changes(open_checkout(sparse)) == {"docs/a.py": "--skip-worktree"}


@pytest.mark.parametrize("filemode", ["true", "false"])
@pytest.mark.parametrize("option", ["--skip-worktree", "--assume-unchanged"])
def test_a_hidden_change_of_the_executable_bit(tmp_path: Path, option: str, filemode: str) -> None:
    """A committed 100644 script made executable here, the change hidden from git: a clone
    cannot run it, as the tests here did. With core.fileMode false, git counts no bit."""
    repo = init_repo(tmp_path / "repo")
    tool = repo / "bin" / "tool.sh"
    tool.parent.mkdir()
    tool.write_text("#!/bin/sh\necho ok\n")
    (repo / "bin" / "run.sh").write_text("#!/bin/sh\n")
    (repo / "bin" / "run.sh").chmod(0o755)
    commit_all(repo, "scripts")
    git(repo, "config", "core.fileMode", filemode)
    for rel in ("bin/tool.sh", "bin/run.sh"):
        git(repo, "update-index", option, rel)
    assert hidden_changes(open_checkout(repo)) == {}
    tool.chmod(0o755)
    (repo / "bin" / "run.sh").chmod(0o644)
    expected = {"bin/tool.sh": option, "bin/run.sh": option} if filemode == "true" else {}
    assert hidden_changes(open_checkout(repo)) == expected


def test_sparse_checkout_git_oracle_keeps_the_files_outside_the_cone(sparse: Path) -> None:
    """What the xfail above is measured against: git's own `add -A && write-tree` keeps the
    skip-worktree files, so a clean sparse checkout's identity is HEAD's tree."""
    assert git_tree(sparse) == git(sparse, "rev-parse", "HEAD^{tree}")


# -- worktrees moved behind git's back ------------------------------------------------------------


@pytest.fixture
def linked(project: Path, tmp_path: Path) -> tuple[Path, Path]:
    """The project (main worktree, moved into its own folder) and a linked worktree of it,
    stamped and tested green."""
    main = tmp_path / "place" / "main"
    main.parent.mkdir()
    shutil.move(project, main)
    wt = tmp_path / "wt"
    git(main, "worktree", "add", "-q", "-b", "side", str(wt))
    stamp_and_test(wt)
    accepted(wt)
    return main, wt


def test_main_worktree_moved_then_repaired(linked: tuple[Path, Path], tmp_path: Path) -> None:
    main, wt = linked
    moved = tmp_path / "moved-main"
    shutil.move(main, moved)
    for command in (("status",), ("stamp",), ("verify",), ("hook", "post-merge", "0")):
        line = one_error_line(genstamp(wt, *command))
        assert f"{wt}/.git points to the git dir {main}/.git/worktrees/wt" in line, line
        assert "does not exist" in line and f"git worktree repair {wt}" in line
    # git itself is stuck the same way, and its repair is the remedy named
    assert subprocess.run(["git", "status"], cwd=wt, capture_output=True).returncode != 0
    git(moved, "worktree", "repair", str(wt))
    # the stamp and the evidence moved with the git dir, which keeps its checkout id and its
    # inode: a moved checkout is the same checkout (a copy would not be: test_gate_truth_e2e)
    proc = genstamp(wt, "verify")
    assert proc.returncode == 0, proc.stdout
    assert stamp_of(wt)["tree"] == git_tree(wt)
    assert run_pytest(wt).returncode == 0
    accepted(wt)


def test_linked_worktree_moved_then_repaired(linked: tuple[Path, Path], tmp_path: Path) -> None:
    """libgit2 takes a linked worktree's location from the git dir's record, not from where
    the .git file is: a moved worktree would be judged by the folder it left."""
    _, wt = linked
    moved = tmp_path / "moved-wt"
    shutil.move(wt, moved)
    wt.mkdir()  # something else now lives where the worktree was
    (wt / "other.txt").write_text("not the worktree\n")
    line = one_error_line(genstamp(moved, "status"))
    assert f"the linked worktree at {moved} is recorded at {wt}" in line
    assert f"run `git worktree repair` in {moved}" in line
    assert (wt / "other.txt").read_text() == "not the worktree\n"
    git(moved, "worktree", "repair")
    accepted(moved)
    assert tree_identity(open_checkout(moved)) == git_tree(moved)


# -- hooks reached in other ways -------------------------------------------------------------------


def real_git(cwd: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["git", "-c", "commit.gpgsign=false", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        env=subprocess_env(**env),
        timeout=300,
    )


def test_relative_core_hooks_path_in_main_and_linked_worktree(
    project: Path, genstamp_snapshot: Path, wrapper: Path, tmp_path: Path
) -> None:
    """Hooks committed in the repository (core.hooksPath = .githooks, relative: git resolves
    it in each worktree's own root)."""
    shutil.copytree(genstamp_snapshot / "hooks", project / ".githooks")
    commit_all(project, "hooks in the repository")
    git(project, "config", "core.hooksPath", ".githooks")
    remote = tmp_path / "remote.git"
    git(tmp_path, "init", "-q", "--bare", str(remote))
    env = {"GENSTAMP": str(wrapper)}

    proc = real_git(project, "checkout", "-q", "-b", "feature", **env)
    assert proc.returncode == 0, proc.stderr
    assert stamp_of(project)["trigger"] == "post-checkout"
    wt = tmp_path / "wt"
    proc = real_git(project, "worktree", "add", "-q", "-b", "side", str(wt), **env)
    assert proc.returncode == 0, proc.stderr
    assert stamp_of(wt)["trigger"] == "post-checkout"
    assert stamp_of(wt)["id"] != stamp_of(project)["id"]
    assert stamp_of(wt)["tree"] == git_tree(wt)

    assert run_pytest(wt).returncode == 0
    proc = real_git(wt, "push", "-q", str(remote), "side", **env)
    assert proc.returncode == 0, proc.stderr
    (wt / CALC).write_text("def add(a, b):\n    return a + b + 0\n")
    assert real_git(wt, "commit", "-qam", "untested").returncode == 0
    proc = real_git(wt, "push", "-q", str(remote), "side", **env)
    assert proc.returncode != 0 and CALC.as_posix() in proc.stderr


def test_git_dir_and_work_tree_given_by_the_caller(
    project: Path, genstamp_snapshot: Path, wrapper: Path, tmp_path: Path
) -> None:
    """`git --git-dir=... --work-tree=... checkout` from elsewhere: git hands its hooks
    GIT_DIR (absolute) and GIT_WORK_TREE=. (relative to the work tree's root)."""
    git(project, "config", "core.hooksPath", str(genstamp_snapshot / "hooks"))
    (project / "src" / "calc" / "__pycache__").mkdir()
    (project / "src" / "calc" / "__pycache__" / "old.cpython-311.pyc").write_bytes(b"x")
    inside_git = project / ".git" / "hooks" / "__pycache__" / "h.cpython-311.pyc"
    inside_git.parent.mkdir(parents=True)
    inside_git.write_bytes(b"not the work tree's")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    proc = real_git(
        elsewhere,
        f"--git-dir={project / '.git'}",
        f"--work-tree={project}",
        "checkout",
        "-q",
        "-b",
        "feature",
        GENSTAMP=str(wrapper),
    )
    assert proc.returncode == 0, proc.stderr
    assert "genstamp: new generation" in proc.stderr, proc.stderr
    gen = stamp_of(project)
    assert gen["trigger"] == "post-checkout"
    assert gen["tree"] == git_tree(project)  # the work tree's identity, not the git dir's
    assert not (project / "src" / "calc" / "__pycache__").exists()  # scrubbed the work tree
    assert inside_git.read_bytes() == b"not the work tree's"  # and nothing in the git dir


def test_separate_git_dir_through_the_environment(tmp_path: Path) -> None:
    """A bare git dir with its work tree elsewhere (the dotfiles layout): every command
    honours GIT_DIR and GIT_WORK_TREE, relative to the current folder as git takes them."""
    store = tmp_path / "store.git"
    git(tmp_path, "init", "-q", "--bare", str(store))
    home = tmp_path / "home"
    home.mkdir()
    (home / "rc.txt").write_text("settings\n")
    env = {"GIT_DIR": "../store.git", "GIT_WORK_TREE": "."}
    assert real_git(home, "add", "rc.txt", **env).returncode == 0
    assert real_git(home, "commit", "-qm", "dotfiles", **env).returncode == 0
    (home / "new.txt").write_text("x\n")

    status = genstamp(home, "status", "--json", **env)
    assert status.returncode == 0, status.stderr
    data = json.loads(status.stdout)
    assert data["workdir"] == str(home)
    oracle = tmp_path / "oracle-index"
    shutil.copy(store / "index", oracle)
    assert real_git(home, "add", "-A", **env, GIT_INDEX_FILE=str(oracle)).returncode == 0
    tree = real_git(home, "write-tree", **env, GIT_INDEX_FILE=str(oracle)).stdout.strip()
    assert data["tree"] == tree
    assert genstamp(home, "stamp", **env).returncode == 0
    assert json.loads((store / "genstamp" / "generation.json").read_text())["tree"] == tree
    # GIT_DIR alone, on a bare git dir: git says there is no work tree, so does genstamp
    line = one_error_line(genstamp(home, "status", GIT_DIR="../store.git"))
    assert "bare repository" in line


@pytest.mark.parametrize("how", ["file", "file-newline", "link"])
def test_a_git_dir_kept_apart_by_init(tmp_path: Path, how: str) -> None:
    """`git init --separate-git-dir`: the work tree holds a `.git` file naming the git dir,
    which has no core.worktree; the work tree is the folder of that file (libgit2, opening the
    git dir, takes the folder above it). A fresh green run is accepted. So where the git dir's
    path holds a newline (git reads the whole file: genstamp read its first line, and took the
    git dir for gone), and where `.git` is a symbolic link to the git dir (genstamp took
    libgit2's folder, the one above, for the work tree: its stamp scrubbed the bytecode of a
    project beside the repository)."""
    store = tmp_path / ("st\nore" if how == "file-newline" else "store")
    store.mkdir()
    repo = tmp_path / "repo"
    if how == "link":
        git(tmp_path, "init", "-q", str(repo))
        (repo / ".git").rename(store / "gd")
        (repo / ".git").symlink_to(store / "gd", target_is_directory=True)
    else:
        git(tmp_path, "init", "-q", f"--separate-git-dir={store / 'gd'}", str(repo))
    beside = tmp_path / "other" / "__pycache__" / "m.cpython-311.pyc"
    beside.parent.mkdir(parents=True)
    beside.write_bytes(b"another project's")
    (repo / "test_a.py").write_text("def test_a():\n    pass\n")
    commit_all(repo, "a")
    (repo / "new.txt").write_text("x\n")
    assert open_checkout(repo).workdir == repo.resolve()
    assert open_checkout(repo / ".").gitdir == (store / "gd").resolve()
    data = json.loads(genstamp(repo, "status", "--json").stdout)
    assert (data["workdir"], data["tree"]) == (str(repo.resolve()), git_tree(repo))
    assert genstamp(repo, "stamp").returncode == 0
    assert beside.read_bytes() == b"another project's"
    assert run_pytest(repo).returncode == 0
    assert genstamp(repo, "verify").returncode == 0


def test_submodule_with_its_own_hooks(
    project: Path, genstamp_snapshot: Path, wrapper: Path, tmp_path: Path
) -> None:
    lib = init_repo(tmp_path / "lib")
    (lib / "lib.py").write_text("V = 1\n")
    first = commit_all(lib, "v1")
    (lib / "lib.py").write_text("V = 2\n")
    commit_all(lib, "v2")
    git(project, "-c", "protocol.file.allow=always", "submodule", "add", "-q", str(lib), "vendor")
    commit_all(project, "vendor lib")
    sub = project / "vendor"
    git(sub, "config", "core.hooksPath", str(genstamp_snapshot / "hooks"))  # the submodule's own
    assert gitdir_of(sub) == project / ".git" / "modules" / "vendor"

    stamp_and_test(project)
    accepted(project)
    super_stamp = stamp_of(project)
    # the superproject moves its submodule: the submodule's own post-checkout restamps it,
    # in its own git dir, with the environment git gives submodule hooks (GIT_DIR set)
    env = {"GENSTAMP": str(wrapper)}
    assert real_git(sub, "checkout", "-q", first, **env).returncode == 0
    commit_all(project, "pin v1")
    assert real_git(sub, "checkout", "-q", "main", **env).returncode == 0
    assert stamp_of(sub)["head"] != first
    proc = real_git(project, "submodule", "update", **env)
    assert proc.returncode == 0, proc.stderr
    assert git(sub, "rev-parse", "HEAD") == first
    sub_stamp = stamp_of(sub)
    assert sub_stamp["trigger"] == "post-checkout" and sub_stamp["head"] == first
    assert sub_stamp["tree"] == git_tree(sub)
    assert stamp_of(project) == super_stamp  # the superproject's generation is its own
    # the superproject's tree holds the submodule's commit: the move is named
    assert tree_identity(open_checkout(project)) == git_tree(project)
    text = refused(project)
    assert text.startswith("tree-mismatch: ") and "vendor" in text


# -- object ids that are not SHA-1 ----------------------------------------------------------------


def test_sha256_repository(tmp_path: Path) -> None:
    repo = tmp_path / "sha256"
    git(tmp_path, "init", "-q", "--object-format=sha256", str(repo))
    (repo / "a.txt").write_text("a\n")
    commit_all(repo, "sha256")
    assert len(git(repo, "rev-parse", "HEAD")) == 64
    # libgit2's build decides which answer is right, not whether opening happens to fail.
    if pygit2.features & GIT_FEATURE_SHA256:  # a libgit2 built with SHA-256: it must simply work
        proc = genstamp(repo, "stamp")
        assert proc.returncode == 0, proc.stderr
        assert stamp_of(repo)["tree"] == git_tree(repo)
        return
    for command in ("status", "stamp", "verify", "scrub"):
        line = one_error_line(genstamp(repo, command))
        assert "sha256 object ids" in line
        assert f"libgit2 {pygit2.LIBGIT2_VERSION}" in line
        assert "opens only sha1 repositories" in line


def test_the_common_state_is_shared_by_the_worktrees(repo: Path, tmp_path: Path) -> None:
    """A linked worktree's state is its own; its common state is the main git dir's."""
    (repo / "a.txt").write_text("a\n")
    commit_all(repo, "a")
    wt = tmp_path / "wt"
    git(repo, "worktree", "add", "-q", "-b", "side", str(wt))
    main, linked = find_place(repo), find_place(wt)
    assert main is not None and linked is not None
    common = (repo / ".git" / "genstamp").resolve()
    assert main.state == main.common_state == common
    assert linked.state != common and linked.common_state == common
    assert open_checkout(wt).common_state == common


def test_a_repository_of_another_user_that_git_trusts_through_its_global_file(
    project: Path, tmp_path: Path
) -> None:
    """The checkout belongs to another user, and the `safe.directory` that lets git work in it
    is in a global config file not named `.gitconfig` (`GIT_CONFIG_GLOBAL`, as CI sets it),
    which libgit2 cannot be pointed at: git works, and genstamp opens the repository as git
    does (it refused it as "not owned by current user"). Without the exception git refuses,
    and so does genstamp."""
    import os

    if os.geteuid() != 0:
        pytest.fail("this test changes a folder's owner: run the suite as root, as CI does")
    assert run_genstamp(project, "stamp").returncode == 0
    assert run_pytest(project).returncode == 0
    shutil.chown(project, user=65534)
    for top, dirs, files in os.walk(project):
        for name in dirs + files:
            os.lchown(os.path.join(top, name), 65534, -1)
    trusted = tmp_path / "ci-gitconfig"
    trusted.write_text(f"[safe]\n\tdirectory = {project}\n")
    env = subprocess_env(GIT_CONFIG_GLOBAL=str(trusted))
    assert subprocess.run(["git", "status"], cwd=project, env=env).returncode == 0
    proc = run_genstamp(project, "verify", env=env)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    proc = run_genstamp(project, "verify", env=subprocess_env(GIT_CONFIG_GLOBAL=os.devnull))
    assert proc.returncode == 2 and "not owned" in proc.stderr, proc.stderr
