"""The isolated git environment: git run in it reads none of the user's config, starts on
``main`` with a fixed identity and no signing, and the in-process form undoes itself."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pygit2
import pytest

from genstamp import gitenv


def test_git_in_the_environment_sees_none_of_the_users_setup(tmp_path: Path) -> None:
    user_home = tmp_path / "user"
    user_home.mkdir()
    (user_home / ".gitconfig").write_text("[init]\n\tdefaultBranch = trunk\n[user]\n\tname = U\n")
    outside = {
        "HOME": str(user_home),
        "PATH": os.environ["PATH"],
        "GIT_DIR": str(tmp_path / "elsewhere.git"),
        "GIT_INDEX_FILE": str(tmp_path / "index"),
        "PRE_COMMIT_FROM_REF": "x",
        "_PRE_COMMIT_SKIP_POST_CHECKOUT": "1",
    }
    env = gitenv.isolated_env(tmp_path / "home", outside)
    assert not {"GIT_DIR", "GIT_INDEX_FILE", "PRE_COMMIT_FROM_REF"} & set(env)
    assert "_PRE_COMMIT_SKIP_POST_CHECKOUT" not in env
    assert env["HOME"] == str(tmp_path / "home") and env["PATH"] == os.environ["PATH"]

    def git(*args: str) -> str:
        proc = subprocess.run(
            ["git", *args], cwd=tmp_path, env=env, capture_output=True, text=True, check=True
        )
        return proc.stdout.strip()

    git("init", "-q", "repo")
    assert git("-C", "repo", "symbolic-ref", "HEAD") == "refs/heads/main"
    assert git("config", "--get", "commit.gpgsign") == "false"
    assert git("config", "--get", "tag.gpgsign") == "false"
    assert "user.name" not in git("config", "--list")
    assert not list((tmp_path / "repo" / ".git" / "hooks").glob("*"))  # no template copied
    assert git("var", "GIT_AUTHOR_IDENT").startswith("Test Author <author@example.invalid> ")


def test_the_in_process_form_is_undone(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GIT_DIR", str(tmp_path / "elsewhere.git"))
    before_env = dict(os.environ)
    level = pygit2.enums.ConfigLevel.GLOBAL
    before_path = pygit2.settings.search_path[level]
    with gitenv.isolated_git(tmp_path / "home") as env:
        assert dict(os.environ) == env
        assert "GIT_DIR" not in os.environ
        assert pygit2.settings.search_path[level] == str(tmp_path / "home")
    assert dict(os.environ) == before_env
    assert pygit2.settings.search_path[level] == before_path
