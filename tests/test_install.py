"""`genstamp install`: one command sets a repository up, with and without pre-commit, keeps
and runs the user's hooks, changes nothing the second time, and `--uninstall` restores every
byte; after it every pushed ref is judged (real git, real pre-commit, a bare remote on disk)."""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from conftest import (
    commit_all,
    git,
    init_repo,
    ok,
    refused,
    run_genstamp,
    run_git,
    run_pytest,
    run_python,
    snapshot_url,
)

from genstamp import hooktext, install
from genstamp.errors import GenstampError

USER_HOOK = '#!/bin/sh\necho "user {name} $*" >> "{log}"\n'


def hooks_state(repo: Path) -> dict[str, tuple[bytes, int]]:
    hooks = repo / ".git" / "hooks"
    if not hooks.is_dir():
        return {}
    return {
        p.name: (p.read_bytes(), stat.S_IMODE(p.lstat().st_mode))
        for p in sorted(hooks.iterdir())
        if not p.name.endswith(".sample")
    }


def add_user_hook(repo: Path, name: str, log: Path) -> None:
    path = repo / ".git" / "hooks" / name
    path.parent.mkdir(exist_ok=True)
    path.write_text(USER_HOOK.format(name=name, log=log))
    path.chmod(0o755)


def with_remote(repo: Path, tmp_path: Path) -> Path:
    remote = tmp_path / "remote.git"
    git(tmp_path, "init", "-q", "--bare", str(remote))
    git(repo, "remote", "add", "origin", str(remote))
    return remote


def broken_branch(repo: Path, name: str) -> str:
    """A branch one commit past HEAD with calc broken, made without checking it out (the work
    tree and its generation stay as they are)."""
    env = dict(os.environ, GIT_INDEX_FILE=str(repo / ".git" / "scratch-index"))

    def plumb(*args: str, stdin: str | None = None) -> str:
        return git(repo, *args, input=stdin, env=env).strip()

    blob = plumb("hash-object", "-w", "--stdin", stdin="def add(a, b):\n    return a - b\n")
    plumb("read-tree", "HEAD")
    plumb("update-index", "--cacheinfo", f"100644,{blob},src/calc/__init__.py")
    tree = plumb("write-tree")
    commit = plumb("commit-tree", tree, "-p", "HEAD", "-m", "broken")
    git(repo, "branch", name, commit)
    return commit


def story_tested(repo: Path, tmp_path: Path) -> None:
    """HEAD~1 is the original calc; HEAD changes it and is tested green in this generation;
    b1 points at HEAD, b2 past it (untested)."""
    (repo / "src" / "calc" / "__init__.py").write_text("def add(a, b):\n    return b + a\n")
    commit_all(repo, "commute")
    proc = run_pytest(repo)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    git(repo, "branch", "b1")
    broken_branch(repo, "b2")


def judged_pushes(repo: Path) -> None:
    """Every pushed ref judged: two branches (the second untested), a tag the remote already
    has the commit of, a tested `main:release`."""
    out = refused(run_git(repo, "push", "origin", "b1", "b2"))
    assert "refs/heads/b2" in out, out
    assert "push refused" in out, out
    ok(run_git(repo, "push", "origin", "b1"))  # control: the tested branch alone
    ok(run_git(repo, "push", "origin", "main"))
    git(repo, "tag", "v0", "HEAD~1")  # the remote has HEAD~1 already; nobody tested it
    out = refused(run_git(repo, "push", "origin", "v0"))
    assert "refs/tags/v0" in out, out
    ok(run_git(repo, "push", "origin", "main:release"))
    assert git(repo, "ls-remote", "origin", "release")


def test_plain_install_keeps_the_users_hook_is_idempotent_and_uninstalls(
    project: Path, tmp_path: Path
) -> None:
    log = tmp_path / "user.log"
    add_user_hook(project, "post-checkout", log)
    add_user_hook(project, "pre-push", log)
    shared = tmp_path / "shared-pre-push"  # one hook kept for several repositories
    os.link(project / ".git" / "hooks" / "pre-push", shared)
    before = hooks_state(project)
    out = ok(run_genstamp(project, "install"))
    assert "installed as plain git hooks" in out and "generation" in out, out
    hooks = project / ".git" / "hooks"
    for name in install.PLAIN_HOOKS:
        assert hooktext.is_genstamp_hook(hooks / name), name
    assert (hooks / "post-checkout.genstamp-chained").read_bytes() == before["post-checkout"][0]
    installed = hooks_state(project)

    again = ok(run_genstamp(project, "install"))
    assert "nothing changed" in again, again
    assert hooks_state(project) == installed

    ok(run_git(project, "checkout", "-q", "-b", "side"))
    assert "user post-checkout" in log.read_text()  # the user's hook still runs
    ok(run_git(project, "checkout", "-q", "main"))

    with_remote(project, tmp_path)
    story_tested(project, tmp_path)
    judged_pushes(project)
    assert "user pre-push origin" in log.read_text()  # chained, with git's arguments

    out = ok(run_genstamp(project, "install", "--uninstall"))
    assert "restored" in out
    assert hooks_state(project) == before
    assert not (project / ".git" / "genstamp" / "install.json").exists()
    assert os.path.samefile(shared, project / ".git" / "hooks" / "pre-push")  # the same file


@pytest.mark.parametrize("moved", [False, True], ids=["in-place", "moved-too"])
def test_uninstall_after_core_hookspath_changed_puts_the_hooks_back_where_they_were(
    project: Path, tmp_path: Path, moved: bool
) -> None:
    """Plain hooks installed in .git/hooks (the user's pre-push kept aside), then the team
    sets core.hooksPath (husky's `.husky/_`): uninstall took that for a move of the
    repository, looked for every file in the new folder, restored nothing and dropped its
    record; the user's hook stayed aside and genstamp's stayed live for when the setting
    goes. It restores .git/hooks as they were."""
    log = tmp_path / "user.log"
    add_user_hook(project, "pre-push", log)
    before = hooks_state(project)
    ok(run_genstamp(project, "install"))
    if moved:  # the repository moved (`mv`) as well: its .git/hooks with it
        project = Path(shutil.move(project, tmp_path / "moved"))
    (project / ".husky" / "_").mkdir(parents=True)
    git(project, "config", "core.hooksPath", ".husky/_")
    out = ok(run_genstamp(project, "install", "--uninstall"))
    assert "restored" in out and ".husky" not in out, out
    git(project, "config", "--unset", "core.hooksPath")
    assert hooks_state(project) == before
    assert not (project / ".git" / "genstamp" / "install.json").exists()


@pytest.mark.parametrize("when", ["before", "after", "unlinked"])
@pytest.mark.parametrize("cut", [1, 2, 3, 4])  # each of the user's four hooks put back
def test_an_uninstall_cut_short_is_finished_by_the_next(
    project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cut: int, when: str
) -> None:
    """Ctrl-C in the middle of `genstamp install --uninstall` (as the ``cut``-th file is put
    back), then the command again, as one does: every hook of the user's as it was, none of
    genstamp's or set aside left, and no note asking the user to edit a hook by hand (the
    rerun took the hooks the first one had put back for hooks the user edited, and left
    the user's post-merge aside). ``unlinked``: as an older genstamp's uninstall, which
    removed a hook before writing it back, left it."""
    from genstamp.repo import open_checkout

    log = tmp_path / "user.log"
    for name in install.PLAIN_HOOKS:
        add_user_hook(project, name, log)
    before = hooks_state(project)
    ok(run_genstamp(project, "install", "--plain"))
    real, calls = install.restore, [0]

    def interrupted(path: Path, entry: install.Entry, aside: Path | None = None) -> None:
        calls[0] += 1
        if calls[0] == cut and when != "after":
            if when == "unlinked" and (path.is_symlink() or path.exists()):
                path.unlink()
            raise KeyboardInterrupt  # the user's Ctrl-C, as this file is put back
        real(path, entry, aside)
        if calls[0] == cut:
            raise KeyboardInterrupt

    monkeypatch.setattr(install, "restore", interrupted)
    with pytest.raises(KeyboardInterrupt):
        install.uninstall(open_checkout(project))
    monkeypatch.setattr(install, "restore", real)
    out = ok(run_genstamp(project, "install", "--uninstall"))
    assert "yourself" not in out and "changed since" not in out, out
    assert hooks_state(project) == before


def test_install_begins_a_generation_in_a_worktree_made_before_it(
    project: Path, tmp_path: Path
) -> None:
    """The hooks serve every worktree, so a worktree made before the install gets its own
    generation from it: a branch tested there is accepted when pushed from the main one."""
    feature = tmp_path / "feature"
    git(project, "worktree", "add", "-q", "-b", "feature", str(feature))
    out = ok(run_genstamp(project, "install"))
    assert f"begun in the worktree {feature}" in out, out
    (feature / "src" / "calc" / "__init__.py").write_text("def add(a, b):\n    return b + a\n")
    commit_all(feature, "commute")
    proc = run_pytest(feature)
    assert proc.returncode == 0 and "will refuse" not in proc.stdout, proc.stdout
    with_remote(project, tmp_path)
    ok(run_git(project, "push", "origin", "feature"))
    again = ok(run_genstamp(project, "install"))
    assert "begun in the worktree" not in again, again  # kept, as this worktree's is


def test_plain_install_without_any_hook_and_uninstall_leaves_none(project: Path) -> None:
    before = hooks_state(project)
    ok(run_genstamp(project, "install", "--plain"))
    assert set(hooks_state(project)) == set(before) | set(install.PLAIN_HOOKS)
    ok(run_genstamp(project, "install", "--uninstall"))
    assert hooks_state(project) == before
    out = ok(run_genstamp(project, "install", "--uninstall"))
    assert "nothing to undo" in out


def test_install_doctor_and_uninstall_in_a_folder_whose_name_is_no_utf_8(tmp_path: Path) -> None:
    """A repository at `caf\\xe9` (Latin-1), where git works: git prints the path as the OS
    gave it; install read it as UTF-8 and died with a traceback, leaving no pre-push."""
    repo = init_repo(tmp_path / os.fsdecode(b"caf\xe9"))
    (repo / "a.txt").write_text("a\n")
    commit_all(repo, "one")

    def genstamp_bytes(*args: str) -> subprocess.CompletedProcess[bytes]:
        return run_python(repo, "-m", "genstamp", *args, text=False)  # the path, as bytes

    done = genstamp_bytes("install", "--plain")
    assert done.returncode == 0, done.stderr
    assert (repo / ".git" / "hooks" / "pre-push").is_file()
    doctor = genstamp_bytes("doctor")
    assert b"Traceback" not in doctor.stderr, doctor.stderr
    done = genstamp_bytes("install", "--uninstall")
    assert done.returncode == 0, done.stderr
    assert not (repo / ".git" / "hooks" / "pre-push").exists()


def test_a_missing_genstamp_never_fails_a_checkout_but_refuses_a_push(
    project: Path, tmp_path: Path
) -> None:
    ok(run_genstamp(project, "install"))
    env = {**os.environ, "GENSTAMP": str(tmp_path / "no-such-genstamp"), "PATH": "/usr/bin:/bin"}
    import subprocess

    checkout = subprocess.run(
        ["git", "checkout", "-q", "-b", "x"], cwd=project, env=env, capture_output=True, text=True
    )
    assert checkout.returncode == 0, checkout.stderr
    assert "warning" in checkout.stderr
    with_remote(project, tmp_path)
    push = subprocess.run(
        ["git", "push", "origin", "x"], cwd=project, env=env, capture_output=True, text=True
    )
    assert push.returncode != 0
    # the genstamp the hook was told to run, not the PATH fallback it also tried (probe F19)
    assert f"'{tmp_path / 'no-such-genstamp'}' is not installed" in push.stderr, push.stderr
    assert "set GENSTAMP to its path" in push.stderr


def test_hooks_record_the_genstamp_that_installed_them(project: Path) -> None:
    ok(run_genstamp(project, "install"))
    text = (project / ".git" / "hooks" / "pre-push").read_text()
    command = install.genstamp_command()
    assert command is not None and f"genstamp=${{GENSTAMP:-{command}}}" in text


def test_core_hooks_path_is_honoured_and_said(project: Path, tmp_path: Path) -> None:
    shared = tmp_path / "shared-hooks"
    shared.mkdir()
    git(project, "config", "core.hooksPath", str(shared))
    out = ok(run_genstamp(project, "install"))
    assert "core.hooksPath is set" in out
    assert hooktext.is_genstamp_hook(shared / "pre-push")
    out = refused(run_genstamp(project, "install", "--pre-commit"))
    assert "core.hooksPath" in out


@pytest.mark.parametrize("scope", ["global", "command"])
def test_a_shared_core_hooks_path_is_refused_with_its_fix(
    project: Path, tmp_path: Path, scope: str
) -> None:
    """A hooks folder the user's global config (or the command) names serves every repository:
    genstamp's pre-push there would refuse the pushes of repositories it was never installed
    in. The install refuses and changes nothing; the repository's own folder then works."""
    from conftest import subprocess_env

    shared = tmp_path / "shared-hooks"
    shared.mkdir()
    config = tmp_path / "gitconfig"
    env = subprocess_env()
    if scope == "global":
        config.write_text(f"[core]\n\thooksPath = {shared}\n")
        env["GIT_CONFIG_GLOBAL"] = str(config)
    else:
        env.update(GIT_CONFIG_COUNT="1", GIT_CONFIG_KEY_0="core.hooksPath")
        env["GIT_CONFIG_VALUE_0"] = str(shared)
    before = hooks_state(project)
    out = refused(run_genstamp(project, "install", env=env))
    said = "your global git config" if scope == "global" else "git's command line or its GIT_"
    assert f"core.hooksPath is set in {said}" in out and str(shared) in out, out
    assert "git config --local core.hooksPath" in out and "Traceback" not in out, out
    assert list(shared.iterdir()) == [] and hooks_state(project) == before
    if scope == "command":
        return  # it outranks any config file: the repository's own folder needs it unset
    git(project, "config", "--local", "core.hooksPath", ".git/hooks")  # the remedy
    ok(run_genstamp(project, "install", env=env))
    assert hooktext.is_genstamp_hook(project / ".git" / "hooks" / "pre-push")
    assert list(shared.iterdir()) == []


def test_a_hooks_folder_in_the_work_tree_keeps_genstamps_hooks_out_of_every_tree(
    project: Path, tmp_path: Path
) -> None:
    """core.hooksPath = .githooks, committed with the team's own hook: genstamp's hooks go
    there, listed in .git/info/exclude (not in .gitignore: nothing to commit), so a green run
    is the tree pushed; a user's untracked hook there is chained and listed too; uninstall puts
    everything back."""
    hooks = project / ".githooks"
    hooks.mkdir()
    (hooks / "pre-commit").write_text("#!/bin/sh\nexit 0\n")
    commit_all(project, "the team's hooks")
    (hooks / "post-merge").write_text("#!/bin/sh\nexit 0\n")  # a user's own, untracked
    exclude = project / ".git" / "info" / "exclude"
    before = exclude.read_bytes() if exclude.exists() else None
    git(project, "config", "core.hooksPath", ".githooks")
    with_remote(project, tmp_path)
    out = ok(run_genstamp(project, "install"))
    assert "info/exclude" in out
    assert hooktext.is_genstamp_hook(hooks / "pre-push")
    assert (hooks / "post-merge.genstamp-chained").is_file()
    assert git(project, "status", "--porcelain", "--untracked-files=all") == ""
    assert run_pytest(project).returncode == 0
    assert run_git(project, "push", "-q", "origin", "main").returncode == 0
    ok(run_genstamp(project, "install"))  # again: nothing listed twice
    listed = exclude.read_text().splitlines()
    assert len(listed) == len(set(listed)) and "/.githooks/pre-push" in listed
    ok(run_genstamp(project, "install", "--uninstall"))
    assert (exclude.read_bytes() if exclude.exists() else None) == before
    assert sorted(p.name for p in hooks.iterdir()) == ["post-merge", "pre-commit"]


def test_a_relative_hooks_folder_gets_genstamps_hooks_in_every_worktree(
    project: Path, tmp_path: Path
) -> None:
    """git resolves a relative core.hooksPath at the top of the worktree a hook runs in: a
    linked worktree runs its own .githooks (the commit's copy). Installed into the main one's
    alone, a push of an untested, failing commit from the linked worktree was never judged.
    Each worktree on disk gets the hooks; a tested push from the linked one goes through; and
    uninstall takes them out of both."""
    hooks = project / ".githooks"
    hooks.mkdir()
    (hooks / "pre-commit").write_text("#!/bin/sh\nexit 0\n")
    commit_all(project, "the team's hooks")
    git(project, "config", "core.hooksPath", ".githooks")
    linked = tmp_path / "linked"
    git(project, "worktree", "add", "-q", str(linked), "-b", "feature")
    with_remote(project, tmp_path)
    out = ok(run_genstamp(project, "install"))
    assert f"the linked worktree {linked} has them" in out and "is relative" in out, out
    assert hooktext.is_genstamp_hook(linked / ".githooks" / "pre-push")
    assert git(linked, "status", "--porcelain", "--untracked-files=all") == ""
    (linked / "tests" / "test_broken.py").write_text("def test_broken():\n    assert False\n")
    commit_all(linked, "untested and broken")
    out = refused(run_git(linked, "push", "origin", "feature"))
    assert "push refused" in out, out
    (linked / "tests" / "test_broken.py").write_text("def test_fixed():\n    assert True\n")
    commit_all(linked, "fixed")
    assert run_pytest(linked).returncode == 0
    assert run_git(linked, "push", "-q", "origin", "feature").returncode == 0
    ok(run_genstamp(project, "install", "--uninstall"))
    for folder in (hooks, linked / ".githooks"):
        assert sorted(p.name for p in folder.iterdir()) == ["pre-commit"], folder


@pytest.mark.parametrize("hooks_path", [".githooks", "outside"])
def test_uninstall_after_core_hookspath_was_unset_finds_the_hooks_it_wrote(
    project: Path, tmp_path: Path, hooks_path: str
) -> None:
    """Installed into a relative core.hooksPath (each worktree's own copy: a linked one's
    too) or an absolute one outside the repository, then core.hooksPath unset (as installing
    through pre-commit asks): uninstall refused for good, taking the folders its own install
    recorded for another repository's. They are this repository's: every hook goes."""
    linked = tmp_path / "linked"
    git(project, "worktree", "add", "-q", str(linked), "-b", "feature")
    folder = tmp_path / "hooks" if hooks_path == "outside" else project / hooks_path
    folder.mkdir()
    git(project, "config", "core.hooksPath", str(folder) if hooks_path == "outside" else hooks_path)
    ok(run_genstamp(project, "install"))
    written = [folder] + ([linked / hooks_path] if hooks_path != "outside" else [])
    assert all(hooktext.is_genstamp_hook(f / "pre-push") for f in written)
    git(project, "config", "--unset-all", "core.hooksPath")
    ok(run_genstamp(project, "install", "--uninstall"))
    for f in written:
        assert not any(f.iterdir()), sorted(f.iterdir())


def test_a_relative_hooks_path_a_linked_worktree_cannot_resolve_is_said(
    project: Path, tmp_path: Path
) -> None:
    """`core.hooksPath = .git/hooks` (a common way to undo husky): git resolves it at the top of
    each worktree, and in a linked one, whose .git is a file, it names no folder: git runs no
    hook there, and a push of an untested, failing commit went through while install said
    nothing. install says so, naming the worktree and the remedy; install and doctor there say
    why they cannot, not "check that git status works". Control: the remedy (an absolute
    path) puts the linked worktree's pushes under the gate."""
    linked = tmp_path / "linked"
    git(project, "worktree", "add", "-q", str(linked), "-b", "feature")
    git(project, "config", "core.hooksPath", ".git/hooks")
    with_remote(project, tmp_path)
    out = ok(run_genstamp(project, "install"))
    said = f"core.hooksPath (.git/hooks) names no folder in the worktree {linked}: git runs no"
    assert said in out and "--git-common-dir)/hooks" in out, out
    for command in (("doctor",), ("install",)):
        proc = run_genstamp(linked, *command)
        assert proc.returncode == 2 and proc.stderr.count("\n") == 1, proc.stderr
        assert "names no folder in this worktree" in proc.stderr, proc.stderr
    common = git(project, "rev-parse", "--path-format=absolute", "--git-common-dir")
    git(project, "config", "core.hooksPath", f"{common}/hooks")
    ok(run_genstamp(project, "install"))
    (linked / "tests" / "test_broken.py").write_text("def test_broken():\n    assert False\n")
    commit_all(linked, "untested and broken")
    assert "push refused" in refused(run_git(linked, "push", "origin", "feature"))


def test_a_checkout_of_a_commit_without_the_teams_pre_push_says_so(
    project: Path, tmp_path: Path
) -> None:
    """`core.hooksPath = .githooks`, the team's pre-push committed (it runs genstamp's): a
    branch made before that commit has no pre-push, so git runs none there and a push of an
    untested, failing commit went through unjudged while the checkout said nothing.
    genstamp's post-checkout says so; `genstamp install` there writes genstamp's own, and the
    push is judged. Control: a switch between commits that both hold it says nothing."""
    git(project, "branch", "hotfix")
    hooks = project / ".githooks"
    hooks.mkdir()
    call = f'"{sys.executable}" -m genstamp hook pre-push "$@" || exit $?'
    (hooks / "pre-push").write_text(f"#!/bin/sh\n{call}\n")
    (hooks / "pre-push").chmod(0o755)
    commit_all(project, "the team's pre-push")
    git(project, "branch", "later")
    git(project, "config", "core.hooksPath", ".githooks")
    with_remote(project, tmp_path)
    ok(run_genstamp(project, "install"))
    said = ".githooks/pre-push, the hooks folder being a folder of the work tree, is not in"
    switched = run_git(project, "checkout", "-q", "later")
    assert switched.returncode == 0 and said not in switched.stderr, switched.stderr
    switched = run_git(project, "checkout", "-q", "hotfix")
    assert switched.returncode == 0 and said in switched.stderr, switched.stderr
    assert "`genstamp install`" in switched.stderr
    ok(run_genstamp(project, "install"))
    (project / "tests" / "test_broken.py").write_text("def test_broken():\n    assert False\n")
    commit_all(project, "untested and broken")
    assert "push refused" in refused(run_git(project, "push", "origin", "hotfix"))


def test_a_checkout_that_writes_a_pre_push_over_genstamps_says_so(project: Path) -> None:
    """`.git/hooks` a link to the work tree's `.githooks` (no core.hooksPath): genstamp's
    pre-push there is ignored, and git writes a commit's own over it (a teammate's lint hook,
    which does not call genstamp): no hook judges a push from there, and the checkout said
    nothing. genstamp's post-checkout says so, and how that hook should run genstamp's."""
    hooks = project / ".githooks"
    hooks.mkdir()
    git(project, "checkout", "-q", "-b", "lint")
    (hooks / "pre-push").write_text("#!/bin/sh\necho lint\n")
    (hooks / "pre-push").chmod(0o755)
    commit_all(project, "a lint pre-push")
    git(project, "checkout", "-q", "main")
    shutil.rmtree(project / ".git" / "hooks", ignore_errors=True)
    (project / ".git" / "hooks").symlink_to(Path("..", ".githooks"))
    ok(run_genstamp(project, "install"))
    assert hooktext.is_genstamp_hook(hooks / "pre-push")
    switched = run_git(project, "checkout", "-q", "lint")
    assert switched.returncode == 0, switched.stderr
    said = ".githooks/pre-push, the hooks folder being a folder of the work tree, is not in"
    assert said in switched.stderr and 'genstamp hook pre-push "$@"' in switched.stderr
    assert (hooks / "pre-push").read_text() == "#!/bin/sh\necho lint\n"


def test_a_committed_hook_genstamp_needs_is_not_moved_aside(project: Path) -> None:
    hooks = project / ".husky"
    hooks.mkdir()
    (hooks / "post-checkout").write_text("#!/bin/sh\nexit 0\n")
    commit_all(project, "husky")
    git(project, "config", "core.hooksPath", ".husky")
    out = refused(run_genstamp(project, "install"))
    assert ".husky/post-checkout is committed" in out and 'genstamp hook post-checkout "$@"' in out
    assert sorted(p.name for p in hooks.iterdir()) == ["post-checkout"]
    assert git(project, "status", "--porcelain", "--untracked-files=all") == ""


@pytest.mark.parametrize("hook", ["post-checkout", "pre-push"])
def test_a_committed_hook_that_runs_genstamps_is_kept_and_the_rest_installed(
    project: Path, tmp_path: Path, hook: str
) -> None:
    """The remedy install names, followed: the committed hook calls `genstamp hook NAME "$@"`.
    install then keeps it as it is (not moved aside, not rewritten), installs the other hooks,
    and doctor counts it; its call runs genstamp's hook. uninstall leaves it."""
    hooks = project / ".husky"
    hooks.mkdir()
    committed = hooks / hook
    call = f'"{sys.executable}" -m genstamp hook {hook} "$@" || exit 1'
    committed.write_text(f"#!/bin/sh\necho team >> /dev/null\n{call}\n")
    committed.chmod(0o755)
    commit_all(project, "husky calls genstamp")
    text = committed.read_bytes()
    git(project, "config", "core.hooksPath", ".husky")
    with_remote(project, tmp_path)
    out = ok(run_genstamp(project, "install"))
    assert f"{hooks / hook} is committed and runs genstamp's hook" in out, out
    assert committed.read_bytes() == text
    assert not (hooks / (hook + install.CHAINED)).exists()
    others = sorted(set(install.PLAIN_HOOKS) - {hook})
    assert all(hooktext.is_genstamp_hook(hooks / other) for other in others)
    assert git(project, "status", "--porcelain", "--untracked-files=all") == ""
    doctor = run_genstamp(project, "doctor")
    assert "ok: pre-push" in doctor.stdout and "ok: hooks" in doctor.stdout, doctor.stdout
    ok(run_genstamp(project, "install"))  # again: the same
    assert committed.read_bytes() == text
    # the committed hook's call is genstamp's hook: an untested commit is refused
    assert run_pytest(project).returncode == 0
    assert run_git(project, "push", "-q", "origin", "main").returncode == 0
    (project / "late.txt").write_text("untested\n")
    commit_all(project, "untested")
    assert run_git(project, "push", "-q", "origin", "main").returncode != 0
    ok(run_genstamp(project, "install", "--uninstall"))
    assert sorted(p.name for p in hooks.iterdir()) == [hook]
    assert committed.read_bytes() == text


def commit_pre_push(project: Path, folder: str, body: str) -> Path:
    """A `#!/bin/sh` pre-push of ``body`` (its ``{call}``: genstamp's call) committed in
    ``folder``, which ``core.hooksPath`` names."""
    committed = project / folder / "pre-push"
    committed.parent.mkdir()
    call = f'"{sys.executable}" -m genstamp hook pre-push "$@"'
    committed.write_text("#!/bin/sh\n" + body.format(call=call))
    committed.chmod(0o755)
    commit_all(project, "the team's pre-push")
    git(project, "config", "core.hooksPath", folder)
    return committed


@pytest.mark.parametrize(
    ("body", "used"),
    [
        ("{call}\necho done\n", False),  # sh goes on: the hook exits 0, the push goes
        ("{call} || exit $?\necho done\n", True),
        ("set -e\n{call}\necho done\n", True),
        ("echo team\n{call}\n", True),  # the last command: its status is the hook's
        ("if ! {call}; then exit 1; fi\necho done\n", True),
        ('. "$(dirname -- "$0")/_/husky.sh"\n{call}\necho done\n', True),
        ('{call}\nstatus=$?\n[ "$status" -eq 0 ] || exit "$status"\necho done\n', True),
        ("{call} || {{ echo refused; }}\necho done\n", False),  # a block that does not exit
        ("{call} || ( echo refused; exit 1 )\necho done\n", False),  # a subshell's exit
        ('{call}\necho "status $?"\necho done\n', False),  # its status read, not used
    ],
)
def test_a_committed_pre_push_that_goes_on_past_genstamps_refusal_is_named(
    project: Path, tmp_path: Path, body: str, used: bool
) -> None:
    """A committed pre-push that calls genstamp's hook as its first line in a plain
    `#!/bin/sh` script and goes on: the refused push went through, and install and doctor
    both took the hook for genstamp's. Install says to end the line with `|| exit $?`, and
    doctor warns (read from the hook's text: a warning, not a refusal); hooks whose status
    the call decides are kept without a word (husky's v8 script runs the hook `sh -e`)."""
    commit_pre_push(project, ".husky", body)
    with_remote(project, tmp_path)
    out = ok(run_genstamp(project, "install"))
    doctor = run_genstamp(project, "doctor").stdout
    if used:
        assert "go on when genstamp refuses" not in out, out
        assert "ok: pre-push" in doctor, doctor
        return
    assert "seems to go on when genstamp refuses" in out and "|| exit $?" in out, out
    assert "warn: pre-push" in doctor and "|| exit $?" in doctor, doctor


CALL = 'genstamp hook pre-push "$@"'
TOP = '"$(git rev-parse --show-toplevel)"'


@pytest.mark.parametrize(
    ("body", "ignored"),
    [
        # a pipeline's status is its last command's: tee's (unless pipefail)
        (f"{CALL} 2>&1 | tee -a push.log || exit $?\necho done\n", True),
        (f"set -o pipefail\n{CALL} 2>&1 | tee -a push.log || exit $?\necho done\n", False),
        (f"set -euo pipefail\n{CALL} | tee -a push.log\necho done\n", False),
        # the last line, but its status is echo's
        (f'echo team\n{CALL} || echo "refused: run the tests" >&2\n', True),
        (f"echo team\n{CALL} || false\n", False),  # false's status, a failure's
        (f"{CALL} || false\necho done\n", True),  # and sh goes on
        # an exit inside a subshell ends the subshell, whose status nothing reads
        (f"( cd {TOP} && {CALL} || exit 1 )\necho done\n", True),
        (f"( cd {TOP} && {CALL} || exit 1 ) || exit 1\necho done\n", False),
        (f"echo team\n( cd {TOP} && {CALL} )\n", False),  # the last command
        (f"( cd {TOP} && {CALL}; echo ran ) || exit 1\necho done\n", True),  # echo's status
        (f"cd {TOP} && {CALL} || exit $?\necho done\n", False),  # `$(...)`: no subshell
        # bash's PIPESTATUS read, then exited on
        (f'{CALL} 2>&1 | tee -a log\nexit "${{PIPESTATUS[0]}}"\n', False),
        (f'{CALL} | tee log\n[ "${{PIPESTATUS[0]}}" -eq 0 ] || exit 1\necho done\n', False),
        # an `if` whose else exits, on one line or several; one with no else goes on
        (f"if {CALL}; then :; else exit 1; fi\necho done\n", False),
        (f"if {CALL}; then\n  echo config ok\nelse\n  exit 1\nfi\necho done\n", False),
        (f"if {CALL}; then\n  echo ok\nfi\necho done\n", True),
        # an exit that succeeds, an inner if's else, an exit that does not use PIPESTATUS
        (f"if {CALL}; then :; else echo refused; exit 0; fi\necho done\n", True),
        (f"{CALL} || exit 0\necho done\n", True),
        (f'if {CALL}; then\n  if [ -n "$CI" ]; then echo ci; else exit 1; fi\nfi\necho x\n', True),
        (f'{CALL} | tee -a log\necho "${{PIPESTATUS[0]}}"\nexit 1\n', True),
    ],
)
def test_the_status_of_a_committed_pre_push_call_is_read_from_its_text(
    tmp_path: Path, body: str, ignored: bool
) -> None:
    """Shapes of a committed pre-push whose line reads as if it stopped on genstamp's refusal
    but whose status is another command's (a pipeline's last, an `||`'s, a subshell's that
    nothing reads): install and doctor certified them, and the refused push went through."""
    hook = tmp_path / "pre-push"
    hook.write_text("#!/bin/sh\n" + body)
    assert hooktext.status_ignored(hook, "pre-push") is ignored


@pytest.mark.parametrize(
    ("body", "taken"),
    [
        ('git lfs pre-push "$@"\n{call} || exit $?\n', 'git lfs pre-push "$@"'),
        (
            "while read local_ref local_oid remote_ref remote_oid; do :; done\n{call} || exit $?\n",
            "while read local_ref local_oid remote_ref remote_oid; do :; done",
        ),
        # the lines read once and given to both
        (
            'refs=$(cat)\nprintf "%s\\n" "$refs" | git lfs pre-push "$@"\n'
            'printf "%s\\n" "$refs" | {call} || exit $?\n',
            None,
        ),
        ('git lfs pre-push "$@" < /dev/null\n{call} || exit $?\n', None),
        # readers of their own input, or of a file, or none: the words in a message
        ('echo "pushing: read CONTRIBUTING.md first"\n{call} || exit $?\n', None),
        ("git log --oneline -3 | cat\ncat -n NOTES.txt\n{call} || exit $?\n", None),
        ("while read -r b; do\n  echo $b\ndone < .protected\n{call} || exit $?\n", None),
        # ... and readers of the ref lines: a program given no file, another tool's pre-push
        ("remotes=$(awk '{{print $3}}')\n{call} || exit $?\n", "remotes=$(awk '{print $3}')"),
        ("first=$(head -n1)\n{call} || exit $?\n", "first=$(head -n1)"),
        ('"$LFS" pre-push "$@"\n{call} || exit $?\n', '"$LFS" pre-push "$@"'),
        # an option's value is no file, nor is what a redirect names
        ("first=$(head -n 1)\n{call} || exit $?\n", "first=$(head -n 1)"),
        ('cat > "$tmp"\n{call} || exit $?\n', 'cat > "$tmp"'),
        ("head -n 1 NOTES.txt\n{call} || exit $?\n", None),
    ],
)
def test_a_committed_pre_push_that_reads_gits_ref_lines_before_genstamp_is_named(
    project: Path, tmp_path: Path, body: str, taken: str | None
) -> None:
    """A committed pre-push that runs `git lfs pre-push` (what `git lfs install` writes) or a
    `while read` loop before genstamp's call: they read git's ref lines, genstamp's call reads
    none and judges no ref, and a refused push went through (install and doctor said "ok").
    Install names the command and doctor warns, with the way to give the lines to both."""
    committed = commit_pre_push(project, ".githooks", body)
    assert hooktext.stdin_taken(committed, "pre-push") == taken
    out = ok(run_genstamp(project, "install"))
    doctor = run_genstamp(project, "doctor").stdout
    if taken is None:
        assert "reads git's ref lines" not in out, out
        assert "ok: pre-push" in doctor, doctor
        return
    assert f"reads git's ref lines before genstamp's call ({taken})" in out, out
    assert "warn: pre-push" in doctor and "refs=$(cat)" in doctor, doctor


def test_a_committed_pre_push_whose_later_command_gets_no_ref_lines_is_named(
    project: Path,
) -> None:
    """genstamp's call first, then `git lfs pre-push` (the line install asks for, put above
    git-lfs's): genstamp's call reads git's ref lines and git-lfs gets none, so it pushes no
    object of the files it tracks. Install and doctor name it, with the way to give both."""
    body = '{call} || exit $?\ngit lfs pre-push "$@"\n'
    committed = commit_pre_push(project, ".githooks", body)
    assert hooktext.stdin_left_none(committed, "pre-push") == 'git lfs pre-push "$@"'
    out = ok(run_genstamp(project, "install"))
    assert "reads git's ref lines after genstamp's call" in out, out
    doctor = run_genstamp(project, "doctor").stdout
    assert "warn: pre-push" in doctor and "refs=$(cat)" in doctor, doctor


# -- the config edit -----------------------------------------------------------------------------

USER_CONFIG = """\
# my project's hooks (a comment that must survive)
repos:
  - repo: local  # mine
    hooks:
      - id: mine
        name: mine
        entry: sh -c 'echo "mine pre-push" >> "$MINE_LOG"'
        language: system
        stages: [pre-push]
        always_run: true
        pass_filenames: false

default_install_hook_types: [pre-commit, pre-push]  # my types
"""


@pytest.mark.parametrize(
    ("text", "said"),
    [
        (USER_CONFIG, []),  # its hook names its stages
        (USER_CONFIG.replace("        stages: [pre-push]\n", ""), ["mine"]),
        (
            USER_CONFIG.replace("        stages: [pre-push]\n", "")
            + "default_stages: [pre-commit]\n",
            [],
        ),
        ("repos:\n- repo: x\n  rev: y\n  hooks:\n  - id: genstamp-scrub\n", []),  # genstamp's
        # another repository's hook may set its stages in its own manifest: not named
        ("repos:\n- repo: https://example.invalid/hooks\n  rev: y\n  hooks:\n  - id: lint\n", []),
    ],
)
def test_install_names_the_hooks_that_now_run_on_checkout(text: str, said: list[str]) -> None:
    """pre-commit runs a hook without `stages` (and no `default_stages`) at every stage it is
    installed for: once genstamp adds post-checkout, post-merge and post-rewrite, the user's
    lint runs on each checkout, and under fail_fast a failing one fails `git checkout`. The
    install says which hooks, and how to keep them where they were."""
    assert install._stageless(text) == said


@pytest.mark.parametrize(
    "text",
    [
        USER_CONFIG,
        "repos:\n- repo: local\n  hooks: []\n",
        "repos: []\n",
        "",
        "default_install_hook_types:\n  - pre-push\nrepos:\n  - repo: local\n    hooks: []\n",
        "minimum_pre_commit_version: '3.2.0'\nrepos:\n    - repo: local\n      hooks: []\nci:\n"
        "    skip: []\n",
        "---\nrepos:\n- repo: local\n  hooks: []\n",  # the document's start (yamllint's rule)
        "# the team's hooks\n%YAML 1.2\n---\nrepos:\n- repo: local\n  hooks: []\n",
    ],
)
@pytest.mark.parametrize("pyyaml", [True, False], ids=["pyyaml", "no-pyyaml"])
def test_edit_config_keeps_every_line_and_adds_what_is_needed(
    text: str, pyyaml: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With PyYAML or without it (a genstamp whose environment has none reads the text)."""
    if not pyyaml:
        monkeypatch.setattr(install, "_yaml", lambda: None)
    new = install.edit_config(text, "https://example.invalid/genstamp", "abc123")
    data = yaml.safe_load(new)
    assert sum(line.startswith("default_install_hook_types:") for line in new.splitlines()) == 1
    kept = [line for line in text.splitlines() if "default_install_hook_types" not in line]
    for line in kept:
        if line.strip() != "repos: []":
            assert line in new.splitlines(), line
    assert set(install.PRE_COMMIT_TYPES) <= set(data["default_install_hook_types"])
    old = yaml.safe_load(text) or {}
    for t in old.get("default_install_hook_types", []):
        assert t in data["default_install_hook_types"]
    ours = [r for r in data["repos"] if r["repo"] == "https://example.invalid/genstamp"]
    assert ours and [h["id"] for h in ours[0]["hooks"]] == list(install.PRE_COMMIT_HOOK_IDS)
    assert ours[0]["rev"] == "abc123"
    assert install.edit_config(new, "https://example.invalid/genstamp", "abc123") == new


# -- with pre-commit -----------------------------------------------------------------------------


@pytest.fixture
def user_log(pre_commit_home: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """pre-commit's shared store, and the log USER_CONFIG's pre-push hook writes to."""
    monkeypatch.setenv("PRE_COMMIT_HOME", str(pre_commit_home))
    log = tmp_path / "user.log"
    monkeypatch.setenv("MINE_LOG", str(log))
    return log


@pytest.mark.e2e
def test_pre_commit_install_judges_every_ref_keeps_the_config_and_uninstalls(
    project: Path, tmp_path: Path, genstamp_snapshot: Path, user_log: Path
) -> None:
    log = user_log
    config = project / ".pre-commit-config.yaml"
    config.write_text(USER_CONFIG)
    commit_all(project, "pre-commit config")
    add_user_hook(project, "post-checkout", log)
    before_hooks, before_config = hooks_state(project), config.read_bytes()
    rev = git(genstamp_snapshot, "rev-parse", "HEAD")
    args = ("install", "--repo", snapshot_url(genstamp_snapshot), "--rev", rev)

    out = ok(run_genstamp(project, *args))
    assert "installed with pre-commit" in out, out
    text = config.read_text()
    assert "# my project's hooks" in text and "# mine" in text and "# my types" in text
    hooks = project / ".git" / "hooks"
    assert hooktext.is_genstamp_hook(hooks / "pre-push")
    assert install.is_pre_commit_hook(hooks / "pre-push.genstamp-chained")
    assert install.is_pre_commit_hook(hooks / "post-checkout")
    installed = hooks_state(project), config.read_bytes()
    again = ok(run_genstamp(project, *args))
    assert "nothing changed" in again, again
    assert (hooks_state(project), config.read_bytes()) == installed
    doctor = run_genstamp(project, "doctor")
    assert "ok: pre-push" in doctor.stdout and "ok: hooks" in doctor.stdout, doctor.stdout

    ok(run_git(project, "commit", "-qam", "genstamp install"))
    ok(run_git(project, "checkout", "-q", "-b", "side"))
    assert "user post-checkout" in log.read_text()  # pre-commit's .legacy, kept
    ok(run_git(project, "checkout", "-q", "main"))
    with_remote(project, tmp_path)
    story_tested(project, tmp_path)
    judged_pushes(project)
    assert "mine pre-push" in log.read_text()  # the user's pre-push hook, through pre-commit

    git(project, "reset", "-q", "--hard", "HEAD~2")  # back to the config as it was committed
    out = ok(run_genstamp(project, "install", "--uninstall"))
    assert hooks_state(project) == before_hooks
    assert config.read_bytes() == before_config


@pytest.mark.e2e
def test_a_config_with_crlf_line_ends_keeps_them(project: Path, genstamp_snapshot: Path) -> None:
    """A config saved on Windows (or checked out with autocrlf) ends each line with CRLF:
    install adds genstamp's lines with the same ends and every line of the user's stays byte
    for byte (read as text, the whole file came back with LF ends: every line a change)."""
    config = project / ".pre-commit-config.yaml"
    mine = USER_CONFIG.replace("\n", "\r\n").encode()
    config.write_bytes(mine)
    rev = git(genstamp_snapshot, "rev-parse", "HEAD")
    ok(run_genstamp(project, "install", "--repo", snapshot_url(genstamp_snapshot), "--rev", rev))
    new = config.read_bytes()
    assert new != mine and b"\n" not in new.replace(b"\r\n", b""), new
    kept = new.splitlines(keepends=True)
    theirs = [ln for ln in mine.splitlines(keepends=True) if not ln.startswith(b"default_install")]
    assert all(line in kept for line in theirs)  # the hook types' line gains genstamp's types
    data = yaml.safe_load(new.decode())
    assert set(install.PRE_COMMIT_TYPES) <= set(data["default_install_hook_types"])
    assert hooktext.is_genstamp_hook(project / ".git" / "hooks" / "pre-push")


@pytest.mark.e2e
@pytest.mark.parametrize(("configured", "filtered"), [(True, True), (True, False), (False, False)])
def test_install_says_a_clean_filter_loses_what_it_strips_through_pre_commit(
    project: Path, genstamp_snapshot: Path, configured: bool, filtered: bool
) -> None:
    """pre-commit sets unstaged changes aside at the post-* stages too and puts back what a
    clean filter cleaned: what nbstripout strips from an unstaged notebook is lost at every
    checkout (h199). The install says so, and what sets nothing aside; not for a filter no
    attributes file of the repository uses (git-lfs' global one after `git lfs install`)."""
    if configured:
        git(project, "config", "filter.strip.clean", "cat")
    if filtered:
        (project / "notebooks").mkdir()
        (project / "notebooks" / ".gitattributes").write_text("*.ipynb  filter=strip\n")
        commit_all(project, "notebooks stripped")
    rev = git(genstamp_snapshot, "rev-parse", "HEAD")
    out = ok(
        run_genstamp(
            project,
            "install",
            "--pre-commit",
            "--repo",
            snapshot_url(genstamp_snapshot),
            "--rev",
            rev,
        )
    )
    assert "installed with pre-commit" in out, out
    said = "a clean filter is configured (filter.strip.clean)" in out
    assert said == filtered, out
    assert ("genstamp install --plain" in out) == filtered, out


@pytest.mark.e2e
def test_re_running_pre_commit_install_keeps_every_ref_judged(
    project: Path, tmp_path: Path, genstamp_snapshot: Path, user_log: Path
) -> None:
    """pre-commit moves genstamp's pre-push to pre-push.legacy and runs it first: it still
    judges every ref, and does not run pre-commit's hooks a second time (which would loop)."""
    (project / ".pre-commit-config.yaml").write_text(USER_CONFIG)
    rev = git(genstamp_snapshot, "rev-parse", "HEAD")
    ok(run_genstamp(project, "install", "--repo", snapshot_url(genstamp_snapshot), "--rev", rev))
    import subprocess
    import sys

    proc = subprocess.run(
        [sys.executable, "-m", "pre_commit", "install"],
        cwd=project,
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    hooks = project / ".git" / "hooks"
    assert hooktext.is_genstamp_hook(hooks / "pre-push.legacy")
    commit_all(project, "config")
    with_remote(project, tmp_path)
    story_tested(project, tmp_path)
    out = refused(run_git(project, "push", "origin", "b1", "b2"))
    assert "refs/heads/b2" in out and "bug:" not in out, out
    ok(run_git(project, "push", "origin", "b1"))
    doctor = run_genstamp(project, "doctor")
    assert "ok: pre-push" in doctor.stdout, doctor.stdout

    # uninstalled: genstamp's hook leaves pre-commit's .legacy place (it judged every push on)
    out = ok(run_genstamp(project, "install", "--uninstall"))
    assert "changed since" not in out, out
    assert install.is_pre_commit_hook(hooks / "pre-push")
    assert not (hooks / "pre-push.legacy").exists()
    assert not (hooks / f"pre-push{install.CHAINED}").exists()
    commit_all(project, "genstamp uninstalled")  # the config as it was (pre-commit checks it)
    ok(run_git(project, "push", "origin", "b2"))  # genstamp judges no more; pre-commit's hooks run


@pytest.mark.e2e
def test_uninstall_after_pre_commit_install_ran_again_gives_the_users_hook_back(
    project: Path, tmp_path: Path, genstamp_snapshot: Path, user_log: Path
) -> None:
    """The user's own pre-push (no pre-commit hook for it), genstamp's install, then
    `pre-commit install --hook-type pre-push` (genstamp's hook becomes pre-push.legacy):
    uninstall puts the user's hook in that place, byte for byte, where pre-commit runs it."""
    (project / ".pre-commit-config.yaml").write_text("repos: []\n")
    add_user_hook(project, "pre-push", user_log)
    hooks = project / ".git" / "hooks"
    mine = hooks_state(project)["pre-push"]
    rev = git(genstamp_snapshot, "rev-parse", "HEAD")
    ok(run_genstamp(project, "install", "--repo", snapshot_url(genstamp_snapshot), "--rev", rev))
    import subprocess
    import sys

    argv = [sys.executable, "-m", "pre_commit", "install", "--hook-type", "pre-push"]
    proc = subprocess.run(argv, cwd=project, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert hooktext.is_genstamp_hook(hooks / "pre-push.legacy")
    # pre-commit's post-checkout, installed again by another pre-commit (pipx's interpreter)
    theirs = hooks / "post-checkout"
    lines = theirs.read_text().splitlines(keepends=True)
    at = next(i for i, line in enumerate(lines) if line.startswith("INSTALL_PYTHON="))
    lines[at] = "INSTALL_PYTHON=/opt/pipx/venvs/pre-commit/bin/python\n"
    theirs.write_text("".join(lines))
    commit_all(project, "config")
    with_remote(project, tmp_path)
    broken_branch(project, "b2")
    refused(run_git(project, "push", "origin", "b2"))  # genstamp's hook, run as the legacy

    out = ok(run_genstamp(project, "install", "--uninstall"))
    assert "changed since" not in out, out
    assert install.is_pre_commit_hook(hooks / "pre-push")
    assert hooks_state(project)["pre-push.legacy"] == mine
    assert ".git/hooks/post-checkout is pre-commit's (its install ran since)" in out, out
    assert install.is_pre_commit_hook(theirs)  # left as it is: not genstamp's to remove
    assert not (hooks / f"pre-push{install.CHAINED}").exists()
    ok(run_git(project, "push", "origin", "b2"))
    assert "user pre-push origin" in user_log.read_text()


@pytest.mark.e2e
def test_the_users_hook_pre_commit_kept_aside_survives_its_install_run_again(
    project: Path, tmp_path: Path, genstamp_snapshot: Path, user_log: Path
) -> None:
    """The user's own pre-push, which `pre-commit install` had kept as pre-push.legacy before
    genstamp's install; then `pre-commit install` again, which puts genstamp's hook in that
    place, over the user's: uninstall gave nothing back (the user's hook was lost, genstamp's
    stayed and judged every push on). genstamp's record keeps that hook; uninstall puts it
    back, byte for byte, where pre-commit runs it."""
    import subprocess
    import sys

    (project / ".pre-commit-config.yaml").write_text("repos: []\n")
    add_user_hook(project, "pre-push", user_log)
    mine = hooks_state(project)["pre-push"]
    hooks = project / ".git" / "hooks"
    argv = [sys.executable, "-m", "pre_commit", "install", "--hook-type", "pre-push"]
    for _ in range(2):  # before genstamp's install, and after it
        proc = subprocess.run(argv, cwd=project, capture_output=True, text=True)
        assert proc.returncode == 0, proc.stdout + proc.stderr
        if not hooktext.is_genstamp_hook(hooks / "pre-push.legacy"):
            assert hooks_state(project)["pre-push.legacy"] == mine
            rev = git(genstamp_snapshot, "rev-parse", "HEAD")
            url = snapshot_url(genstamp_snapshot)
            ok(run_genstamp(project, "install", "--repo", url, "--rev", rev))
    assert hooktext.is_genstamp_hook(hooks / "pre-push.legacy")  # the user's hook gone from it
    out = ok(run_genstamp(project, "install", "--uninstall"))
    assert install.is_pre_commit_hook(hooks / "pre-push")
    assert hooks_state(project)["pre-push.legacy"] == mine, out
    assert not (hooks / f"pre-push{install.CHAINED}").exists()
    commit_all(project, "config")
    with_remote(project, tmp_path)
    broken_branch(project, "b2")
    ok(run_git(project, "push", "origin", "b2"))  # genstamp judges no more
    assert "user pre-push origin" in user_log.read_text()


@pytest.mark.e2e
def test_a_leftover_legacy_hook_does_not_take_the_place_of_the_users_own(
    project: Path, tmp_path: Path, user_log: Path
) -> None:
    """The user's own pre-push, and a pre-push.legacy left over from an old pre-commit set-up;
    `genstamp install --plain`, then `pre-commit install -t pre-push` (genstamp's hook moves to
    .legacy): uninstall put the leftover back at .legacy, and the user's own hook, kept aside
    by genstamp, ran no more. The user's own hook goes where pre-commit runs it."""
    import subprocess
    import sys

    (project / ".pre-commit-config.yaml").write_text("repos: []\n")
    add_user_hook(project, "pre-push", user_log)
    hooks = project / ".git" / "hooks"
    mine = hooks_state(project)["pre-push"]
    (hooks / "pre-push.legacy").write_text("#!/bin/sh\necho leftover >&2\n")
    (hooks / "pre-push.legacy").chmod(0o755)
    ok(run_genstamp(project, "install", "--plain"))
    argv = [sys.executable, "-m", "pre_commit", "install", "--hook-type", "pre-push"]
    proc = subprocess.run(argv, cwd=project, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert hooktext.is_genstamp_hook(hooks / "pre-push.legacy")
    ok(run_genstamp(project, "install", "--uninstall"))
    assert install.is_pre_commit_hook(hooks / "pre-push")
    assert hooks_state(project)["pre-push.legacy"] == mine
    assert not (hooks / f"pre-push{install.CHAINED}").exists()
    commit_all(project, "config")
    with_remote(project, tmp_path)
    ok(run_git(project, "push", "origin", "main"))
    assert "user pre-push origin" in user_log.read_text()


@pytest.mark.e2e
@pytest.mark.parametrize("before", ["pre-commit's", "a .legacy alone"])
def test_genstamps_hook_at_pre_commits_legacy_place_goes_at_uninstall(
    project: Path, tmp_path: Path, before: str
) -> None:
    """genstamp's plain hooks installed over pre-commit's pre-push (or where only a user's
    pre-push.legacy lay, no pre-push), then `pre-commit install` again, which moves genstamp's
    hook to .legacy: uninstall left it there, judging every push on, where pre-commit's own
    hook was put back byte for byte; and deleted the user's .legacy in the other case. The
    .legacy place holds what it held before genstamp's install."""
    import subprocess
    import sys

    (project / ".pre-commit-config.yaml").write_text("repos: []\n")
    hooks = project / ".git" / "hooks"
    hooks.mkdir(exist_ok=True)
    argv = [sys.executable, "-m", "pre_commit", "install", "--hook-type", "pre-push"]
    if before == "pre-commit's":
        proc = subprocess.run(argv, cwd=project, capture_output=True, text=True)
        assert proc.returncode == 0, proc.stdout + proc.stderr
    else:
        (hooks / "pre-push.legacy").write_text("#!/bin/sh\necho mine >&2\n")
        (hooks / "pre-push.legacy").chmod(0o755)
    was = hooks_state(project)
    ok(run_genstamp(project, "install", "--plain"))
    proc = subprocess.run(argv, cwd=project, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert hooktext.is_genstamp_hook(hooks / "pre-push.legacy")
    ok(run_genstamp(project, "install", "--uninstall"))
    now = hooks_state(project)
    assert now.get("pre-push.legacy") == was.get("pre-push.legacy"), now
    assert install.is_pre_commit_hook(hooks / "pre-push")
    assert not (hooks / f"pre-push{install.CHAINED}").exists()
    commit_all(project, "config")
    with_remote(project, tmp_path)
    broken_branch(project, "b2")
    ok(run_git(project, "push", "origin", "b2"))  # genstamp judges no more


@pytest.mark.e2e
@pytest.mark.parametrize("how", ["edited", "made"])
def test_the_hook_kept_aside_as_the_user_left_it_goes_to_pre_commits_legacy_place(
    project: Path, how: str
) -> None:
    """The user edits their hook where genstamp keeps it (pre-push.genstamp-chained, as
    genstamp's note advises), or makes one there; then `pre-commit install` moves genstamp's
    hook to .legacy. Uninstall deleted the edited hook and put the old one at .legacy, or left
    the one made run by nothing. It goes to .legacy as the user left it."""
    import subprocess
    import sys

    (project / ".pre-commit-config.yaml").write_text("repos: []\n")
    hooks = project / ".git" / "hooks"
    hooks.mkdir(exist_ok=True)
    if how == "edited":
        (hooks / "pre-push").write_text("#!/bin/sh\necho v1 >&2\n")
        (hooks / "pre-push").chmod(0o755)
    ok(run_genstamp(project, "install", "--plain"))
    aside = hooks / f"pre-push{install.CHAINED}"
    aside.write_text("#!/bin/sh\necho v2, as the user left it >&2\n")
    aside.chmod(0o755)
    argv = [sys.executable, "-m", "pre_commit", "install", "--hook-type", "pre-push"]
    proc = subprocess.run(argv, cwd=project, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    ok(run_genstamp(project, "install", "--uninstall"))
    assert (
        hooks / "pre-push.legacy"
    ).read_text() == "#!/bin/sh\necho v2, as the user left it >&2\n"
    assert not aside.exists()
    assert install.is_pre_commit_hook(hooks / "pre-push")


def test_install_refuses_an_unknown_rev(project: Path, tmp_path: Path) -> None:
    (project / ".pre-commit-config.yaml").write_text("repos: []\n")
    out = refused(run_genstamp(project, "install", "--repo", str(project), "--rev", "v9.9.9"))
    assert "cannot fetch 'v9.9.9'" in out
    assert (project / ".pre-commit-config.yaml").read_text() == "repos: []\n"


def test_install_refuses_a_rev_the_config_does_not_pin(project: Path) -> None:
    """genstamp's hooks pinned already at one revision, and --rev another: refused, naming the
    revision, instead of a silent "nothing changed" that leaves two genstamps in use."""
    hooks = "".join(f"      - id: {h}\n" for h in install.PRE_COMMIT_HOOK_IDS)
    text = (
        f"repos:\n  - repo: https://example.invalid/genstamp\n    rev: v0.1.0\n    hooks:\n{hooks}"
    )
    config = project / ".pre-commit-config.yaml"
    config.write_text(text)
    out = refused(run_genstamp(project, "install", "--repo", str(project), "--rev", "v0.2.0"))
    assert "pinned at another revision than v0.2.0" in out, out
    assert config.read_text() == text


def test_the_old_core_hooks_path_set_up_is_refused_with_its_fix(
    project: Path, genstamp_snapshot: Path
) -> None:
    git(project, "config", "core.hooksPath", str(genstamp_snapshot / "hooks"))
    before = sorted(p.name for p in (genstamp_snapshot / "hooks").iterdir())
    out = refused(run_genstamp(project, "install"))
    assert "git config --unset core.hooksPath" in out
    assert sorted(p.name for p in (genstamp_snapshot / "hooks").iterdir()) == before


def test_uninstall_leaves_a_config_the_user_changed_since(project: Path) -> None:
    config = project / ".pre-commit-config.yaml"
    config.write_text("repos: []\n")
    record_dir = project / ".git" / "genstamp"
    # the pre-commit path's edit, done and recorded as install does it, without pre-commit
    from genstamp.repo import open_checkout

    where = install.layout(open_checkout(project))
    before = install.snapshot(config)
    config.write_text(install.edit_config("repos: []\n", "https://example.invalid/g", "abc"))
    install._write_record(
        where,
        install.Record(
            "pre-commit",
            {str(config): before},
            {str(config): install._digest(install.snapshot(config))},
        ),
    )
    config.write_text(config.read_text() + "# mine, added later\n")
    out = ok(run_genstamp(project, "install", "--uninstall"))
    assert "changed since `genstamp install`: left as it is" in out
    assert "# mine, added later" in config.read_text()
    assert not (record_dir / "install.json").exists()


def test_the_plain_hooks_start_genstamp_as_the_installed_hooks_do() -> None:
    """hooks/genstamp-hook carries install's ``run_hook`` word for word (issue 16: how a post-*
    hook starts genstamp's entry point without the console script's imports)."""
    plain = (Path(__file__).resolve().parent.parent / "hooks" / "genstamp-hook").read_text()
    assert install.RUN_HOOK in plain
    assert install.RUN_HOOK.rstrip("\n") in install.hook_script("post-checkout", "/bin/genstamp")


def test_a_hook_the_user_edited_since_install_is_never_lost(project: Path, tmp_path: Path) -> None:
    """A line the user added to one of genstamp's hooks: a second `genstamp install` refuses
    to overwrite it (one line, naming the file and where such lines go), and `--uninstall`
    leaves that hook, and the user's own hook it runs, as they are."""
    log = tmp_path / "user.log"
    add_user_hook(project, "post-merge", log)
    original = (project / ".git" / "hooks" / "post-merge").read_bytes()
    ok(run_genstamp(project, "install"))
    hooks = project / ".git" / "hooks"
    with (hooks / "post-merge").open("a") as fh:
        fh.write("echo my-lint-step\n")
    edited = (hooks / "post-merge").read_bytes()
    proc = run_genstamp(project, "install")
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert proc.stderr.count("\n") == 1 and "post-merge was changed since" in proc.stderr
    assert "post-merge.genstamp-chained" in proc.stderr
    assert (hooks / "post-merge").read_bytes() == edited
    out = ok(run_genstamp(project, "install", "--uninstall"))
    assert "post-merge changed since `genstamp install`: left as it is" in out, out
    assert (hooks / "post-merge").read_bytes() == edited
    assert (hooks / "post-merge.genstamp-chained").read_bytes() == original
    assert not hooktext.is_genstamp_hook(hooks / "post-checkout")  # the rest undone


@pytest.mark.parametrize("linked", [False, True])
def test_a_hook_removed_or_written_again_as_it_was_is_installed_again(
    project: Path, tmp_path: Path, linked: bool
) -> None:
    """A hook of genstamp's that is gone since (the user removed it, as an edited one's refusal
    says), or that a tool wrote again as it was before install (husky's dispatcher after
    `npm install`, the bytes genstamp keeps aside already; a setup script's `ln -sf` of the
    team's committed hook, a link to where the link aside leads: refused as an edit, h193):
    nothing to lose, so a second `genstamp install` writes genstamp's again, and `--uninstall`
    restores the user's (the committed script the link leads to untouched)."""
    log = tmp_path / "user.log"
    add_user_hook(project, "post-merge", log)
    hooks = project / ".git" / "hooks"
    if linked:
        (project / "team-hook").write_bytes((hooks / "post-merge").read_bytes())
        (hooks / "post-merge").unlink()
        (hooks / "post-merge").symlink_to("../../team-hook")
    before = hooks_state(project)
    original = (project / "team-hook" if linked else hooks / "post-merge").read_bytes()
    ok(run_genstamp(project, "install"))
    (hooks / "post-checkout").unlink()
    (hooks / "post-merge").unlink()
    if linked:  # the tool's own hook, as it was
        (hooks / "post-merge").symlink_to("../../team-hook")
    else:
        (hooks / "post-merge").write_bytes(original)
    ok(run_genstamp(project, "install"))
    for hook in ("post-checkout", "post-merge"):
        assert hooktext.is_genstamp_hook(hooks / hook), hook
    assert (hooks / "post-merge.genstamp-chained").read_bytes() == original
    assert "ok: hooks:" in run_genstamp(project, "doctor").stdout
    ok(run_genstamp(project, "install", "--uninstall"))
    assert hooks_state(project) == before
    assert (hooks / "post-merge").read_bytes() == original
    assert (hooks / "post-merge").is_symlink() == linked
    assert not (hooks / "post-merge.genstamp-chained").exists()
    assert not (hooks / "post-checkout").exists()


def test_a_record_removed_as_its_refusal_says_is_made_anew_from_the_hooks(
    project: Path, tmp_path: Path
) -> None:
    """The install record cut short (a full disk): genstamp says to remove it and reinstall.
    Done so, the reinstall found its hooks in place and wrote no record, and uninstall then
    said install had not run here, leaving genstamp's hooks and the user's own pre-push aside
    for good. The reinstall records them as the hooks show it: uninstall puts every hook back."""
    add_user_hook(project, "pre-push", tmp_path / "user.log")
    before = hooks_state(project)
    ok(run_genstamp(project, "install"))
    record = project / ".git" / "genstamp" / "install.json"
    record.write_bytes(b"")
    proc = run_genstamp(project, "install", "--uninstall")
    assert proc.returncode == 2 and "remove it and reinstall" in proc.stderr, proc.stderr
    record.unlink()
    ok(run_genstamp(project, "install"))
    ok(run_genstamp(project, "install", "--uninstall"))
    assert hooks_state(project) == before


def test_hooks_of_another_repository_in_a_shared_folder_are_not_made_its_own(
    project: Path, tmp_path: Path
) -> None:
    """Two repositories whose core.hooksPath is one folder outside both: genstamp installed
    in one; the other, with no record, took the hooks found there for its own lost install,
    and its uninstall took the first one's gate away. They stay the first one's."""
    shared = tmp_path / "hooks"
    shared.mkdir()
    other = init_repo(tmp_path / "other")
    (other / "f.txt").write_text("x\n")
    commit_all(other, "another repository")
    for repo in (project, other):
        git(repo, "config", "core.hooksPath", str(shared))
    ok(run_genstamp(project, "install"))
    run_genstamp(other, "install")
    out = ok(run_genstamp(other, "install", "--uninstall"))
    assert "has not run here" in out, out
    assert hooktext.is_genstamp_hook(shared / "pre-push")


def test_a_shared_hook_edited_while_installed_goes_back_as_the_same_file(
    project: Path, tmp_path: Path
) -> None:
    """The user's pre-push, a hard link to a hook several repositories share, edited (in
    place, for all of them) while genstamp is installed: uninstall gives it back as the user
    left it, and still the shared file (a copy no longer got the next edit)."""
    add_user_hook(project, "pre-push", tmp_path / "user.log")
    shared = tmp_path / "shared-pre-push"
    os.link(project / ".git" / "hooks" / "pre-push", shared)
    ok(run_genstamp(project, "install"))
    with shared.open("a") as fh:
        fh.write("echo edited for every repository\n")
    out = ok(run_genstamp(project, "install", "--uninstall"))
    assert "as you left it" in out, out
    hook = project / ".git" / "hooks" / "pre-push"
    assert os.path.samefile(shared, hook) and "edited for every" in hook.read_text()


def test_a_hooks_folder_linked_into_the_work_tree_is_named_as_it_is(project: Path) -> None:
    """No core.hooksPath, but `.git/hooks` a link to a committed folder of hooks: the refusal
    to move a committed hook aside names the folder, not a "core.hooksPath None"."""
    team = project / "tools" / "hooks"
    team.mkdir(parents=True)
    (team / "post-merge").write_text("#!/bin/sh\necho team post-merge\n")
    commit_all(project, "the team's hooks")
    hooks = project / ".git" / "hooks"
    shutil.rmtree(hooks, ignore_errors=True)  # (an empty template: none)
    hooks.symlink_to(Path("..", "tools", "hooks"))
    proc = run_genstamp(project, "install")
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1, proc.stderr
    assert f"the hooks folder {team} leads into the work tree (tools/hooks)" in proc.stderr
    assert "None" not in proc.stderr and "core.hooksPath" not in proc.stderr, proc.stderr


def test_a_clone_installed_from_is_pinned_at_the_commit_that_was_installed(tmp_path: Path) -> None:
    """pip records a clone's folder, not its commit: the pin is a commit whose package is the
    running genstamp's code, not wherever the clone's HEAD has moved since; code no commit
    holds is refused, never pinned at a commit of other code."""
    import shutil

    here = Path(install.__file__).parent
    clone = init_repo(tmp_path / "clone")
    package = clone / "src" / "genstamp"
    shutil.copytree(here, package, ignore=shutil.ignore_patterns("__pycache__"))
    installed = commit_all(clone, "the genstamp that runs here")
    (clone / "README.md").write_text("genstamp\n")
    docs = commit_all(clone, "docs only: the package is the same")
    assert install._built_from(clone) == docs  # HEAD's package is the running code

    (package / "rules.py").write_text((package / "rules.py").read_text() + "# moved on\n")
    commit_all(clone, "the clone moves on (a pull)")
    (clone / "CHANGES").write_text("later\n")
    commit_all(clone, "and on")
    assert install._built_from(clone) == installed

    other = init_repo(tmp_path / "other")  # a history of other code only
    (other / "src" / "genstamp").mkdir(parents=True)
    (other / "src" / "genstamp" / "__init__.py").write_text("# another genstamp\n")
    commit_all(other, "another")
    with pytest.raises(GenstampError) as raised:
        install._built_from(other)
    assert "not the code of any of the last" in str(raised.value)


def installed_over_a_user_hook(
    project: Path, tmp_path: Path
) -> tuple[dict[str, tuple[bytes, int]], Path]:
    """``genstamp install`` over a post-checkout of the user's: the hooks as they were, and the
    install record."""
    add_user_hook(project, "post-checkout", tmp_path / "user.log")
    before = hooks_state(project)
    ok(run_genstamp(project, "install"))
    return before, project / ".git" / "genstamp" / "install.json"


@pytest.mark.parametrize("recorded", ["where-it-was", "nothing"])
def test_uninstall_in_a_moved_repository_touches_no_other(
    project: Path, tmp_path: Path, recorded: str
) -> None:
    """A repository moved (``mv``) after ``genstamp install``: uninstalling there restores its
    own hooks, never the files at the old paths, where another repository now lives. A record
    that does not say where the repository was (an older genstamp's) is refused for any path
    outside this repository, and nothing is touched."""
    before, record = installed_over_a_user_hook(project, tmp_path)
    if recorded == "nothing":
        data = json.loads(record.read_text())
        del data["roots"]
        record.write_text(json.dumps(data))
    moved = tmp_path / "moved"
    project.rename(moved)
    other = init_repo(project)  # another repository at the old path, with hooks of its own
    add_user_hook(other, "pre-push", tmp_path / "user.log")
    others = hooks_state(other)
    proc = run_genstamp(moved, "install", "--uninstall")
    assert hooks_state(other) == others
    if recorded == "nothing":
        assert proc.returncode != 0 and "outside this repository" in proc.stderr, proc.stderr
        assert proc.stderr.count("\n") == 1 and "Traceback" not in proc.stderr
        assert (moved / ".git" / "genstamp" / "install.json").is_file()
        return
    ok(proc)
    assert hooks_state(moved) == before
    assert not (moved / ".git" / "genstamp" / "install.json").exists()


@pytest.mark.parametrize("version", [1, 2, 3])
def test_the_install_record_is_versioned_for_another_genstamp(
    project: Path, tmp_path: Path, version: int
) -> None:
    """The record's shape changed (its roots name the main worktree and the linked ones), so
    it is written as version 2: a genstamp that reads 1 alone refuses it, naming both,
    instead of taking its roots for a repository moved and putting files back in the wrong
    worktree. A version 1 record (an older genstamp's) is still read; a later one is refused
    in one line, and nothing is touched."""
    before, record = installed_over_a_user_hook(project, tmp_path)
    data = json.loads(record.read_text())
    assert data["version"] == install.STATE_VERSION == 2
    data["version"] = version
    record.write_text(json.dumps(data))
    installed = hooks_state(project)
    proc = run_genstamp(project, "install", "--uninstall")
    if version == 3:
        assert proc.returncode != 0 and proc.stderr.count("\n") == 1, proc.stderr
        assert "install record version 3" in proc.stderr and "reads versions 1 and 2" in proc.stderr
        assert hooks_state(project) == installed and record.is_file()
        return
    ok(proc)
    assert hooks_state(project) == before


def test_a_hook_chains_only_to_an_executable_file_and_names_no_placeholder_path() -> None:
    """A hook that is not to chain (pre-commit runs it as its ``.legacy``; the plain hooks
    installed into .git/hooks itself) must not point at a stand-in path: one such as
    ``/nonexistent`` (Debian's home of ``nobody``) may exist, and a folder there is "-x"."""
    plain = (Path(__file__).parent.parent / "hooks" / "genstamp-hook").read_text()
    for text in (install.HOOK_TEMPLATE, plain):
        assert "/nonexistent" not in text
        for tested in ("$chained", "$own"):
            checks = text.count(f'[ -x "{tested}" ]')
            assert text.count(f'[ -f "{tested}" ] && [ -x "{tested}" ]') == checks, tested


def test_a_config_with_a_byte_order_mark_keeps_it_first() -> None:
    """pre-commit reads a config that begins with a UTF-8 byte order mark: genstamp's lines
    go after it, never before (a mark inside YAML text is no mark)."""
    text = "\ufeff# the team's hooks\nrepos: []\n"
    new = install.edit_config(text, "https://example.invalid/genstamp", "abc123")
    assert new.startswith("\ufeff") and new.count("\ufeff") == 1
    data = yaml.safe_load(new[1:])
    assert set(install.PRE_COMMIT_TYPES) <= set(data["default_install_hook_types"])
    assert "# the team's hooks" in new.splitlines()
    assert install.edit_config(new, "https://example.invalid/genstamp", "abc123") == new


def test_an_install_record_of_another_shape_is_one_line(project: Path) -> None:
    ok(run_genstamp(project, "install", "--plain"))
    record = project / ".git" / "genstamp" / "install.json"
    data = json.loads(record.read_text())
    data["before"] = []
    record.write_text(json.dumps(data))
    proc = run_genstamp(project, "install", "--uninstall")
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.count("\n") == 1 and "is not a genstamp install record" in proc.stderr


def test_uninstall_gives_back_the_chained_hook_the_user_edited_or_made(
    project: Path, tmp_path: Path
) -> None:
    """After install, the user's hook runs as ``HOOK.genstamp-chained``, where install's own
    hint tells them to put their lines: edited there, or made there for a hook they had none
    of, it is theirs, and uninstall puts it in the hook's place, saying so."""
    log = tmp_path / "user.log"
    add_user_hook(project, "post-checkout", log)
    ok(run_genstamp(project, "install", "--plain"))
    hooks = project / ".git" / "hooks"
    edited = hooks / "post-checkout.genstamp-chained"
    edited.write_text(edited.read_text() + 'echo "a line added since" >> "$0.log"\n')
    made = hooks / "post-merge.genstamp-chained"
    made.write_text("#!/bin/sh\necho merged\n")
    made.chmod(0o755)
    mine = {p.name: p.read_bytes() for p in (edited, made)}
    out = ok(run_genstamp(project, "install", "--uninstall"))
    assert (hooks / "post-checkout").read_bytes() == mine[edited.name]
    assert (hooks / "post-merge").read_bytes() == mine[made.name]
    assert not edited.exists() and not made.exists()
    assert out.count("changed since `genstamp install`") == 2, out
    assert not hooktext.is_genstamp_hook(hooks / "pre-push")


@pytest.mark.parametrize("shebang", ["#!/usr/bin/env sh", "#!/bin/bash", "#!/usr/bin/env python3"])
def test_the_hook_that_was_here_runs_under_its_own_name(
    project: Path, tmp_path: Path, shebang: str
) -> None:
    """husky's hooks find the script to run by their own name (``basename "$0"``): kept as
    ``HOOK.genstamp-chained``, a shell script still runs as ``HOOK`` (its shell reads it under
    that name), and any other program runs as it is."""
    log = tmp_path / "names.log"
    hook = project / ".git" / "hooks" / "post-checkout"
    hook.parent.mkdir(exist_ok=True)
    if "python" in shebang:
        body = f"import os, sys\nopen({str(log)!r}, 'a').write(os.path.basename(sys.argv[0]))\n"
    else:
        body = f'printf %s "$(basename "$0")" >> "{log}"\n'
    hook.write_text(f"{shebang}\n{body}")
    hook.chmod(0o755)
    ok(run_genstamp(project, "install", "--plain"))
    ok(run_git(project, "checkout", "-q", "-b", "side"))
    ran = log.read_text()
    chained = "post-checkout.genstamp-chained"
    assert ran == (chained if "python" in shebang else "post-checkout"), ran


def test_a_push_with_nothing_to_push_hands_the_chained_hook_no_line(
    project: Path, tmp_path: Path
) -> None:
    """git gives pre-push no line when there is nothing to push (a push repeated): the hook
    genstamp chains to got one blank line, which pre-commit's own pre-push cannot read (a
    traceback, and the push failed). It gets git's lines as git gave them: none."""
    hook = project / ".git" / "hooks" / "pre-push"
    hook.parent.mkdir(exist_ok=True)
    hook.write_text(  # as strict as pre-commit's: every line holds four words
        "#!/bin/sh\nwhile read -r a b c d; do\n"
        '    [ -n "$d" ] || { echo "no line: $a" >&2; exit 3; }\ndone\n'
    )
    hook.chmod(0o755)
    ok(run_genstamp(project, "install", "--plain"))
    with_remote(project, tmp_path)
    proc = run_pytest(project)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    ok(run_git(project, "push", "origin", "main"))
    again = ok(run_git(project, "push", "origin", "main"))  # nothing to push
    assert "no line" not in again, again


CONFIGS = {
    "pre-commit's sample": """\
# See https://pre-commit.com for more information
repos:
-   repo: https://github.com/pre-commit/pre-commit-hooks
    rev: v3.2.0
    hooks:
    -   id: trailing-whitespace
    -   id: end-of-file-fixer
""",
    "quoted, commented, two repositories and a local one": """\
repos:
  - repo: "https://example.invalid/genstamp.git"  # ours
    rev: 'v0.2.0'  # pinned
    hooks:
      - id: "genstamp-scrub"
      - id: genstamp-bytecode
        additional_dependencies:
          - pyyaml
        args: [--id, x]
  - repo: local
    hooks:
      - id: pytest
        name: pytest
        entry: pytest
        language: system
""",
    "the hooks before the rev": """\
repos:
- repo: https://x/genstamp
  hooks:
  - id: genstamp-scrub
  rev: 0123456789abcdef0123456789abcdef01234567
""",
}


@pytest.mark.parametrize("name", CONFIGS)
def test_the_configs_repositories_read_without_pyyaml_as_pyyaml_reads_them(
    name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Where the genstamp doctor runs has no PyYAML (genstamp does not depend on it), the
    config's repositories were none: doctor compared no pre-commit environment with the
    tests' genstamp. Read line by line now, as PyYAML reads these block-style configs."""
    text = CONFIGS[name]
    by_yaml = install.config_repos(text)
    assert by_yaml, "PyYAML, the oracle, reads repositories here"
    monkeypatch.setattr(install, "_yaml", lambda: None)
    assert install.config_repos(text) == by_yaml
