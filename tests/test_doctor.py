"""`genstamp doctor`: each broken set-up it names is found, and each has a control."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import RunGenstamp, git

from genstamp import install


def checks(genstamp: RunGenstamp, repo: Path, *args: str) -> tuple[int, dict[str, dict[str, str]]]:
    code, out, _err = genstamp("-C", repo, "doctor", "--json", *args)
    data = json.loads(out)
    assert data["ok"] is (code == 0)
    return code, {c["name"]: c for c in data["checks"]}


@pytest.fixture
def installed(project: Path, genstamp: RunGenstamp) -> Path:
    assert genstamp("-C", project, "install", "--plain")[0] == 0
    return project


def test_a_fresh_repository_fails_and_names_the_fix(project: Path, genstamp: RunGenstamp) -> None:
    code, found = checks(genstamp, project)
    assert code == 1
    for name in ("hooks", "pre-push", "generation"):
        assert found[name]["status"] == "fail", found[name]
        assert "genstamp install" in found[name]["remedy"]
    code, out, _ = genstamp("-C", project, "doctor")
    assert code == 1
    assert "fail: pre-push: no genstamp pre-push" in out
    assert all(line.split(":")[0] in ("ok", "warn", "fail") for line in out.splitlines())


@pytest.mark.parametrize("pre_commit", ["on PATH", "nowhere"])
def test_after_install_everything_is_ok(
    installed: Path, genstamp: RunGenstamp, monkeypatch: pytest.MonkeyPatch, pre_commit: str
) -> None:
    """genstamp's own hooks run no pre-commit (they name its marker, to tell a .legacy)."""
    if pre_commit == "nowhere":
        monkeypatch.setenv("PATH", "/usr/bin:/bin")
    code, found = checks(genstamp, installed, "--python", sys.executable)
    assert code == 0
    for name in ("hooks", "pre-push", "plugin", "version", "generation", "configuration"):
        assert found[name]["status"] == "ok", found[name]
    assert found["start"]["status"] == "ok", found["start"]


def test_a_run_that_raced_its_tree_is_a_warning(installed: Path, genstamp: RunGenstamp) -> None:
    """The plugin left await-start (a run's tests changed the work tree as they began): the
    warning names the file to remove."""
    marker = installed / ".git" / "genstamp" / "await-start"
    marker.write_text("a note\n")
    code, found = checks(genstamp, installed, "--python", sys.executable)
    assert code == 0
    assert found["start"]["status"] == "warn"
    assert str(marker) in found["start"]["remedy"]


def test_a_missing_restamp_hook_fails(installed: Path, genstamp: RunGenstamp) -> None:
    (installed / ".git" / "hooks" / "post-merge").unlink()
    _code, found = checks(genstamp, installed)
    assert found["hooks"]["status"] == "fail"
    assert "post-merge" in found["hooks"]["what"]


@pytest.mark.parametrize("hook", ["pre-push", "post-checkout"])
def test_a_hook_git_will_not_run_fails_and_names_chmod(
    installed: Path, genstamp: RunGenstamp, hook: str
) -> None:
    """git skips a hook that is not executable: the push, or the new generation, never comes."""
    path = installed / ".git" / "hooks" / hook
    path.chmod(0o644)
    code, found = checks(genstamp, installed)
    check = found["pre-push" if hook == "pre-push" else "hooks"]
    assert code == 1 and check["status"] == "fail", check
    assert "not executable" in check["what"] and check["remedy"] == f"chmod +x {path}"
    path.chmod(0o755)
    assert checks(genstamp, installed)[1][check["name"]]["status"] == "ok"


def test_pre_commits_own_pre_push_is_a_warning(project: Path, genstamp: RunGenstamp) -> None:
    (project / ".pre-commit-config.yaml").write_text(
        "default_install_hook_types: [pre-push]\nrepos:\n- repo: local\n  hooks:\n"
        "  - {id: genstamp-verify, name: v, entry: genstamp hook pre-push --pre-commit,"
        " language: system, stages: [pre-push]}\n"
    )
    proc = subprocess.run(
        [sys.executable, "-m", "pre_commit", "install", "-t", "pre-push"],
        cwd=project,
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stderr
    _code, found = checks(genstamp, project)
    assert found["pre-push"]["status"] == "warn"
    assert "only the first pushed ref" in found["pre-push"]["what"]


def restamp_hooks_through_pre_commit(project: Path) -> None:
    """genstamp's restamping hook in the project's .pre-commit-config.yaml, and pre-commit's
    post-checkout, post-merge and post-rewrite hooks installed."""
    (project / ".pre-commit-config.yaml").write_text(
        "repos:\n- repo: local\n  hooks:\n"
        "  - {id: genstamp-scrub, name: s, entry: genstamp hook restamp, language: system,"
        " stages: [post-checkout, post-merge, post-rewrite], always_run: true}\n"
    )
    hooks = ("-t", "post-checkout", "-t", "post-merge", "-t", "post-rewrite")
    proc = subprocess.run(
        [sys.executable, "-m", "pre_commit", "install", *hooks],
        cwd=project,
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stderr


def test_pre_commits_hooks_that_can_run_no_pre_commit_fail(
    project: Path, genstamp: RunGenstamp, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Installed through pre-commit, then the environment that held pre-commit went away:
    its hook scripts find neither their interpreter nor a pre-commit on PATH, fail git's
    checkout and begin no generation; doctor called them installed."""
    restamp_hooks_through_pre_commit(project)
    assert checks(genstamp, project)[1]["hooks"]["status"] == "ok"
    for name in ("post-checkout", "post-merge", "post-rewrite"):
        path = project / ".git" / "hooks" / name
        text = path.read_text()
        path.write_text(re.sub(r"(?m)^INSTALL_PYTHON=.*$", "INSTALL_PYTHON=/gone/python3", text))
    assert checks(genstamp, project)[1]["hooks"]["status"] == "ok"  # pre-commit on PATH
    monkeypatch.setenv("PATH", "/usr/bin:/bin")
    found = checks(genstamp, project)[1]["hooks"]
    assert found["status"] == "fail", found
    assert "no longer installed" in found["what"] and "pip install pre-commit" in found["remedy"]


def test_the_plugin_is_asked_for_in_the_work_tree(installed: Path, genstamp: RunGenstamp) -> None:
    """`genstamp -C DIR doctor` asked pytest in the folder it was started in: a project whose
    configuration turns the plugin off (`-p no:genstamp`) was reported active. Asked in the
    work tree, it fails, and says how to let it load (it is installed)."""
    (installed / "pytest.ini").write_text("[pytest]\naddopts = -p no:genstamp\n")
    _code, found = checks(genstamp, installed, "--python", sys.executable)
    assert found["plugin"]["status"] == "fail", found["plugin"]
    assert "drop `-p no:genstamp`" in found["plugin"]["remedy"], found["plugin"]


def test_pytest_stopped_by_the_work_tree_is_said_as_pytest_says_it(
    installed: Path, genstamp: RunGenstamp
) -> None:
    """pytest and the plugin installed, and pytest stopping on the project's addopts (an
    option of a plugin not installed here): doctor said pytest does not run and to install
    pytest and genstamp again. It quotes pytest's error now."""
    (installed / "pytest.ini").write_text("[pytest]\naddopts = --cov=pkg\n")
    _code, found = checks(genstamp, installed, "--python", sys.executable)
    plugin = found["plugin"]
    assert plugin["status"] == "fail", plugin
    assert "unrecognized arguments: --cov=pkg" in plugin["what"], plugin
    assert "pip install" not in plugin["remedy"], plugin


def test_the_version_is_read_from_any_hook_genstamp_wrote(
    installed: Path, genstamp: RunGenstamp
) -> None:
    """A pre-push that is not genstamp's file (husky's committed hook calling `genstamp hook
    pre-push`, pre-commit's own before genstamp's .legacy): the version is read from the hooks
    genstamp did write; where none is, the warning no longer sends the user to an install that
    changes nothing (probe F19)."""
    hooks = installed / ".git" / "hooks"
    (hooks / "pre-push").write_text('#!/bin/sh\nexec genstamp hook pre-push "$@"\n')
    _code, found = checks(genstamp, installed, "--python", sys.executable)
    assert found["version"]["status"] == "ok", found["version"]
    for name in ("post-checkout", "post-merge", "post-rewrite"):
        (hooks / name).unlink()
    _code, found = checks(genstamp, installed, "--python", sys.executable)
    assert found["version"]["status"] == "warn", found["version"]
    assert "genstamp install" not in found["version"]["remedy"], found["version"]


def pre_commit_store(home: Path, version: str, repo: Path, key: str = "") -> Path:
    """pre-commit's store in ``home`` as pre-commit keeps it (its repos table; ``key``: the
    `:deps` of additional_dependencies) with an environment of genstamp ``version`` built for
    ``repo``'s config (https://x/genstamp at v1): that environment's folder."""
    import sqlite3

    env = home / "repoabc" / "py_env-python3"
    (env / "lib" / "python3.11" / "site-packages" / f"genstamp-{version}.dist-info").mkdir(
        parents=True
    )
    db = sqlite3.connect(home / "db.db")
    db.execute("CREATE TABLE repos (repo TEXT, ref TEXT, path TEXT, PRIMARY KEY (repo, ref))")
    row = ("https://x/genstamp" + key, "v1", str(env.parent))
    db.execute("INSERT INTO repos VALUES (?, ?, ?)", row)
    db.commit()
    db.close()
    (repo / ".pre-commit-config.yaml").write_text(
        "repos:\n- repo: https://x/genstamp\n  rev: v1\n  hooks:\n  - id: genstamp-scrub\n"
    )
    return env


@pytest.mark.parametrize("key", ["", ":pyyaml"])  # additional_dependencies: `repo:deps`
@pytest.mark.parametrize("pinned", ["0.0.1", None])
def test_the_genstamp_pre_commits_hooks_run_is_compared_with_the_tests(
    installed: Path,
    genstamp: RunGenstamp,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    pinned: str | None,
    key: str,
) -> None:
    """pre-commit's hooks run the genstamp its environment for the config's `rev:` holds, which
    may be another than the tests' (the test environment upgraded, the pin left behind): said
    as a warning naming both (it said the versions matched, from genstamp's own pre-push).
    Read from pre-commit's store as pre-commit keeps it (its repos table, the environment's
    installed distribution). The control: the same version is ok."""
    from genstamp import __version__

    pre_commit_store(tmp_path / "pre-commit-home", pinned or __version__, installed, key)
    monkeypatch.setenv("PRE_COMMIT_HOME", str(tmp_path / "pre-commit-home"))
    _code, found = checks(genstamp, installed, "--python", sys.executable)
    if pinned:
        assert found["version"]["status"] == "warn", found["version"]
        assert pinned in found["version"]["what"] and __version__ in found["version"]["what"]
        assert "rev:" in found["version"]["remedy"], found["version"]
    else:
        assert found["version"]["status"] == "ok", found["version"]


def test_pre_commits_hooks_on_a_branch_whose_config_has_no_genstamp_say_so(
    project: Path, genstamp: RunGenstamp
) -> None:
    """Installed through pre-commit, then a checkout of a branch from before genstamp was added
    to its .pre-commit-config.yaml (a release branch, in a linked worktree): the hooks are
    pre-commit's and run, but none of genstamp's; doctor said they were not installed."""
    restamp_hooks_through_pre_commit(project)
    assert checks(genstamp, project)[1]["hooks"]["status"] == "ok"
    (project / ".pre-commit-config.yaml").write_text("repos: []\n")  # the older branch's
    found = checks(genstamp, project)[1]["hooks"]
    assert found["status"] == "fail", found
    assert "has no genstamp-scrub hook" in found["what"], found
    assert "not installed" not in found["what"] and "genstamp stamp" in found["remedy"], found


@pytest.mark.parametrize("repos", ["5", "true", "[5]", "[{hooks: 3}]"])
def test_a_config_of_no_repositories_is_read_as_none(
    installed: Path, genstamp: RunGenstamp, repos: str
) -> None:
    """A .pre-commit-config.yaml whose repos is no list of repositories: doctor says what it
    finds, no traceback (reading pre-commit's versions raised on `repos: 5`)."""
    (installed / ".pre-commit-config.yaml").write_text(f"repos: {repos}\n")
    _code, found = checks(genstamp, installed, "--python", sys.executable)
    assert "version" in found, found


def test_a_test_environment_without_pytest_fails(
    installed: Path, genstamp: RunGenstamp, tmp_path: Path
) -> None:
    subprocess.run(
        [sys.executable, "-m", "venv", "--without-pip", str(tmp_path / "bare")], check=True
    )
    python = tmp_path / "bare" / "bin" / "python"
    code, found = checks(genstamp, installed, "--python", str(python))
    assert code == 1
    assert found["plugin"]["status"] == "fail"
    assert "pytest does not run" in found["plugin"]["what"]
    _code, found = checks(genstamp, installed, "--python", str(tmp_path / "nothing"))
    assert found["plugin"]["status"] == "fail"


def test_hooks_running_a_genstamp_that_is_gone_fail(installed: Path, genstamp: RunGenstamp) -> None:
    push = installed / ".git" / "hooks" / "pre-push"
    command = install.genstamp_command()
    assert command is not None
    push.write_text(push.read_text().replace(command, "/gone/bin/genstamp"))
    _code, found = checks(genstamp, installed, "--python", sys.executable)
    assert found["version"]["status"] == "fail"
    assert "/gone/bin/genstamp" in found["version"]["what"]


def test_a_corrupt_stamp_fails(installed: Path, genstamp: RunGenstamp) -> None:
    (installed / ".git" / "genstamp" / "generation.json").write_text("{")
    _code, found = checks(genstamp, installed)
    assert found["generation"]["status"] == "fail"


def test_an_in_project_environment_is_found(
    installed: Path, genstamp: RunGenstamp, monkeypatch: pytest.MonkeyPatch
) -> None:
    _code, found = checks(genstamp, installed, "--python", sys.executable)
    assert found["environment"]["status"] == "warn"  # this suite's venv is outside the project
    venv = installed / ".venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    (venv / ".gitignore").unlink(missing_ok=True)  # (Python 3.13's venv writes one)
    # the default: the in-project .venv's python; one git does not ignore is in every tree
    # the tests run on, and none that is pushed: every green run is refused tree-mismatch
    _code, found = checks(genstamp, installed)
    assert found["environment"]["status"] == "fail", found["environment"]
    assert "git does not ignore all of it (.venv/" in found["environment"]["what"]
    # ignored but for a folder (GitHub's VirtualEnv.gitignore lines: share/ is none of them)
    (venv / "share" / "man").mkdir(parents=True)
    (venv / "share" / "man" / "tool.1").write_text("man\n")
    (venv / ".gitignore").write_text("[Bb]in\n[Ll]ib\n[Ll]ib64\n[Ii]nclude\npyvenv.cfg\n")
    _code, found = checks(genstamp, installed)
    assert found["environment"]["status"] == "fail", found["environment"]
    assert ".venv/share/man/tool.1" in found["environment"]["what"], found["environment"]
    (venv / ".gitignore").write_text("*\n")
    _code, found = checks(genstamp, installed)
    assert found["environment"]["status"] == "ok", found["environment"]
    # a link in the project to an environment kept elsewhere: `.venv/` matches no link
    elsewhere = installed.parent / "envs" / "p"
    elsewhere.parent.mkdir()
    venv.rename(elsewhere)
    venv.symlink_to(elsewhere)
    (installed / ".gitignore").write_text((installed / ".gitignore").read_text() + ".venv/\n")
    _code, found = checks(genstamp, installed)
    assert found["environment"]["status"] == "fail", found["environment"]
    assert "(.venv)" in found["environment"]["what"], found["environment"]
    assert "list `/.venv` in .gitignore (a link" in found["environment"]["remedy"]
    (installed / ".gitignore").write_text((installed / ".gitignore").read_text() + ".venv\n")
    _code, found = checks(genstamp, installed)
    assert found["environment"]["status"] == "ok", found["environment"]
    # `python -m venv .`: its own folders are judged, not the project's new files
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(installed)], check=True)
    (installed / "tests" / "test_new.py").write_text("def test_new():\n    pass\n")
    top = installed / "bin" / "python"
    _code, found = checks(genstamp, installed, "--python", str(top))
    assert found["environment"]["status"] == "fail", found["environment"]
    assert "test_new.py" not in found["environment"]["what"], found["environment"]
    assert "`/bin/`" in found["environment"]["remedy"], found["environment"]
    ignored = "/bin/\n/lib/\n/lib64\n/include/\n/pyvenv.cfg\n"
    (installed / ".gitignore").write_text((installed / ".gitignore").read_text() + ignored)
    _code, found = checks(genstamp, installed, "--python", str(top))
    assert found["environment"]["status"] == "ok", found["environment"]
    # a program that prints nothing is no environment in the project (an empty answer was
    # taken for the current folder)
    monkeypatch.chdir(installed)
    _code, found = checks(genstamp, installed, "--python", "/bin/true")
    assert found["environment"]["status"] == "warn", found["environment"]


def test_a_bad_configuration_fails(installed: Path, genstamp: RunGenstamp) -> None:
    pyproject = installed / "pyproject.toml"
    pyproject.write_text(pyproject.read_text() + "\n[tool.genstamp]\nno-such-key = 1\n")
    code, found = checks(genstamp, installed)
    assert code == 1
    assert found["configuration"]["status"] == "fail"
    assert "no-such-key" in found["configuration"]["what"]


@pytest.mark.parametrize(
    ("setting", "extension", "fix"),
    [
        ("core.splitIndex", "link", "`git config core.splitIndex false`, then `git status`"),
        ("index.sparse", "sdir", "`git sparse-checkout init --no-sparse-index`"),
    ],
)
def test_an_index_libgit2_cannot_read_fails_and_names_the_setting(
    installed: Path, genstamp: RunGenstamp, setting: str, extension: str, fix: str
) -> None:
    """A split index (or a sparse one) is an extension git reads and libgit2 does not: doctor
    fails naming the setting to turn off, and so does verify (exit 2, one line). Control: the
    setting off and `git status` once, the index is plain again."""
    if setting == "index.sparse":
        git(installed, "sparse-checkout", "init", "--cone", "--sparse-index")
    else:
        git(installed, "config", setting, "true")
        git(installed, "update-index", "--split-index")
    code, found = checks(genstamp, installed, "--python", sys.executable)
    assert code == 1 and found["index"]["status"] == "fail", found["index"]
    assert f"'{extension}'" in found["index"]["what"]
    assert fix in found["index"]["remedy"]
    code, _out, err = genstamp("-C", installed, "verify")
    assert code == 2 and fix in err, err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err
    if setting == "index.sparse":
        git(installed, "sparse-checkout", "init", "--no-sparse-index")
    else:
        git(installed, "config", setting, "false")
        git(installed, "status", "--porcelain")
    code, found = checks(genstamp, installed, "--python", sys.executable)
    assert found["index"]["status"] == "ok", found["index"]


def another_build(folder: Path, python: Path) -> Path:
    """``python``: an interpreter that imports a copy of this genstamp (another build of the
    same version: one module differs by a comment, and it has no ``build.label``, as the
    builds before it) ahead of the installed one."""
    import shutil

    import genstamp

    copy = folder / "genstamp"
    shutil.copytree(
        Path(genstamp.__file__).parent, copy, ignore=shutil.ignore_patterns("__pycache__")
    )
    with (copy / "rules.py").open("a") as module:
        module.write("# another build\n")
    # of before `--version` named the build (build.label came then; build.digest before)
    text = (copy / "build.py").read_text()
    start, end = text.index("def label("), text.index("@functools.cache")
    (copy / "build.py").write_text(text[:start] + text[end:])
    python.parent.mkdir(parents=True, exist_ok=True)
    python.write_text(f'#!/bin/sh\nPYTHONPATH={folder} exec {sys.executable} "$@"\n')
    python.chmod(0o755)
    return python


def test_hooks_and_tests_of_one_version_and_two_builds_are_a_warning(
    installed: Path, genstamp: RunGenstamp, tmp_path: Path
) -> None:
    """Builds between releases share a version string and differ in their formats and what
    they observe: the hooks' genstamp and the tests' of one version but two builds were said
    to match. Each is named by its build now (the control, one build on both sides, is the
    test above)."""
    from genstamp import __version__, build

    python = another_build(tmp_path / "other", tmp_path / "bin" / "python")
    _code, found = checks(genstamp, installed, "--python", str(python))
    version = found["version"]
    assert version["status"] == "warn", version
    assert (
        f"the hooks run genstamp {build.label()}, the tests genstamp {__version__} (build "
        in (version["what"])
    ), version
    assert "(one version, two builds: their formats" in version["what"], version
    hooks, tests = re.findall(r"\(build ([0-9a-f]{12})\)", version["what"])
    assert hooks != tests, version
    assert found["plugin"]["status"] == "ok", found["plugin"]
    assert genstamp("--version")[1] == f"genstamp {build.label()}\n"


@pytest.mark.parametrize("same", [True, False])
def test_pre_commits_genstamp_of_the_tests_version_is_compared_by_its_build(
    installed: Path,
    genstamp: RunGenstamp,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    same: bool,
) -> None:
    """pre-commit's environment holds the tests' version of genstamp, of another build (a
    `rev:` left behind between releases): a warning naming both builds; of the same build
    (its interpreter imports this genstamp): ok."""
    from genstamp import __version__

    env = pre_commit_store(tmp_path / "pre-commit-home", __version__, installed)
    if same:
        (env / "bin").mkdir()
        (env / "bin" / "python").symlink_to(sys.executable)
    else:
        another_build(tmp_path / "other", env / "bin" / "python")
    monkeypatch.setenv("PRE_COMMIT_HOME", str(tmp_path / "pre-commit-home"))
    _code, found = checks(genstamp, installed, "--python", sys.executable)
    version = found["version"]
    if same:
        assert version["status"] == "ok", version
    else:
        assert version["status"] == "warn", version
        assert version["what"].count(f"genstamp {__version__} (build ") == 2, version
        assert "one version, two builds" in version["what"], version
        assert "rev:" in version["remedy"], version
