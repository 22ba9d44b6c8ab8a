"""What genstamp prints: refusal lines bounded, colour only on a terminal (NO_COLOR and
--color respected), GitHub Actions annotations, pushed refs named by their names."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from conftest import RunGenstamp, commit_all, git

from genstamp import cli, hooks
from genstamp.rules import Failure


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_colour_on_a_terminal_only_and_no_color_respected() -> None:
    assert cli.use_color(Terminal(), "auto", {})
    assert not cli.use_color(io.StringIO(), "auto", {})
    assert not cli.use_color(Terminal(), "auto", {"NO_COLOR": "1"})
    assert cli.use_color(Terminal(), "auto", {"NO_COLOR": ""})  # set but empty: no-color.org
    assert cli.use_color(io.StringIO(), "always", {"NO_COLOR": "1"})
    assert not cli.use_color(Terminal(), "never", {})


def test_color_option_reaches_the_refusal_lines(repo: Path, genstamp: RunGenstamp) -> None:
    code, out, _ = genstamp("--color", "always", "-C", repo, "verify")
    assert code == 1
    assert out.startswith("\033[31mno-stamp\033[0m: ")
    code, out, _ = genstamp("--color", "never", "-C", repo, "verify")
    assert code == 1 and "\033[" not in out and out.startswith("no-stamp: ")
    code, out, _ = genstamp("-C", repo, "verify")  # auto, and captured output is no terminal
    assert "\033[" not in out


def test_a_long_refusal_line_is_bounded() -> None:
    failure = Failure("stale-bytecode", "x" * 3000)
    line = cli._refusal(failure, io.StringIO())
    assert len(line) < cli.LINE_LIMIT + 100
    assert line.startswith("stale-bytecode: xxx")
    assert "more characters: see `genstamp verify --json`" in line
    short = Failure("no-tests", "no test executed")
    assert cli._refusal(short, io.StringIO()) == short.line()


def test_github_annotations(repo: Path, genstamp: RunGenstamp) -> None:
    code, out, _ = genstamp("-C", repo, "verify", "--format", "github")
    assert code == 1
    line, *rest = out.splitlines()
    assert all(r.startswith("::error title=genstamp ") for r in rest)
    assert line.startswith("::error title=genstamp no-stamp::no-stamp: ")
    assert cli.github_annotation("error", "a:b,c", "50%\nnext") == (
        "::error title=a%3Ab%2Cc::50%25%0Anext"
    )


def test_github_notice_when_accepted(project: Path, genstamp: RunGenstamp) -> None:
    from conftest import run_pytest

    assert genstamp("-C", project, "stamp")[0] == 0
    assert run_pytest(project).returncode == 0
    code, out, _ = genstamp("-C", project, "verify", "--format", "github")
    assert code == 0
    assert out.startswith("::notice title=genstamp::evidence accepted: 2 passed")


def test_pushed_refs_are_named_by_their_names() -> None:
    assert hooks.ref_name("refs/heads/main", "refs/heads/release") == (
        "refs/heads/main:refs/heads/release"
    )
    assert hooks.ref_name("refs/heads/main", "refs/heads/main") == "refs/heads/main"
    env = {"PRE_COMMIT_LOCAL_BRANCH": "refs/heads/b2", "PRE_COMMIT_REMOTE_BRANCH": "refs/heads/b2"}
    assert hooks.pre_commit_label(env, "a" * 40) == f"refs/heads/b2 ({'a' * 12})"
    assert hooks.pre_commit_label({}, "a" * 40) == f"the pushed ref ({'a' * 12})"
    # a new branch's push: pre-commit hands the local branch itself, a name, not a commit
    # (it was cut to 12 characters as one: "refs/heads/b2 (refs/heads/b2)" became "(refs/heads/b)")
    assert hooks.pre_commit_label(env, "refs/heads/b2") == "refs/heads/b2"
    assert hooks.pre_commit_label({}, "refs/heads/topic") == "the pushed ref (refs/heads/topic)"


def test_pre_commit_pre_push_names_the_ref(
    project: Path, genstamp: RunGenstamp, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Under pre-commit the refused ref is named as git names it, not by a bare hash."""
    assert genstamp("-C", project, "stamp")[0] == 0
    (project / "src" / "calc" / "__init__.py").write_text("def add(a, b):\n    return 0\n")
    sha = commit_all(project, "untested")
    monkeypatch.setenv("PRE_COMMIT_TO_REF", sha)
    monkeypatch.setenv("PRE_COMMIT_LOCAL_BRANCH", "refs/heads/main")
    monkeypatch.setenv("PRE_COMMIT_REMOTE_BRANCH", "refs/heads/release")
    code, _out, err = genstamp("-C", project, "hook", "pre-push", "--pre-commit")
    assert code == 1
    assert "refs/heads/main:refs/heads/release" in err or "no-evidence" in err, err
    git(project, "status")
