"""`genstamp hook`: git's pre-push protocol, pre-commit's environment, and the restamping hooks."""

from __future__ import annotations

import io
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from conftest import RunGenstamp, commit_all, git, run_genstamp, run_pytest, subprocess_env

from genstamp import verified
from genstamp.errors import EXIT_REFUSED, GenstampError
from genstamp.generation import current
from genstamp.hooks import SKIP_ENV, Z40, PushedRef, holds_notes, parse_pre_push
from genstamp.repo import open_checkout

STAMP = Path(".git", "genstamp", "generation.json")
PRE_COMMIT_VARS = (
    "PRE_COMMIT_FROM_REF",
    "PRE_COMMIT_TO_REF",
    "PRE_COMMIT_LOCAL_BRANCH",
    "PRE_COMMIT_REMOTE_BRANCH",
    "PRE_COMMIT_REMOTE_NAME",
    "PRE_COMMIT_REMOTE_URL",
    "PRE_COMMIT_CHECKOUT_TYPE",
    "PRE_COMMIT_IS_SQUASH_MERGE",
    "PRE_COMMIT_REWRITE_COMMAND",
    SKIP_ENV,
)


@pytest.fixture(autouse=True)
def no_pre_commit_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in PRE_COMMIT_VARS:
        monkeypatch.delenv(name, raising=False)


def generation(repo: Path) -> dict[str, Any]:
    """The generation as the gate sees it: a hook leaves a claim, the first reader settles it."""
    current(open_checkout(repo))
    return json.loads((repo / STAMP).read_text())  # type: ignore[no-any-return]


@pytest.fixture
def tested(project: Path, genstamp: RunGenstamp) -> Path:
    """HEAD~1 is the original project; HEAD changes calc and is stamped and tested green.
    Branch ``old`` points at HEAD~1 (not the tested tree)."""
    (project / "src" / "calc" / "__init__.py").write_text("def add(a, b):\n    return b + a\n")
    commit_all(project, "commute")
    git(project, "branch", "old", "HEAD~1")
    assert genstamp("-C", project, "stamp")[0] == 0
    proc = run_pytest(project)
    assert proc.returncode == 0, proc.stdout
    assert genstamp("-C", project, "verify")[0] == 0
    return project


def forget_verdicts(repo: Path) -> None:
    """The fixture's verify accepted HEAD's tree, which a push of HEAD is then accepted on
    (genstamp.verified), and its run is kept as a part of HEAD's tree (genstamp.parts);
    both forgotten, the push is judged on the newest evidence alone."""
    verified.path_of(repo / ".git").unlink()
    shutil.rmtree(repo / ".git" / "genstamp" / "parts")


def push_line(repo: Path, local_ref: str, remote_ref: str | None = None) -> str:
    sha = git(repo, "rev-parse", local_ref)
    return f"{local_ref} {sha} {remote_ref or local_ref} {Z40}\n"


def pre_push(
    genstamp: RunGenstamp, monkeypatch: pytest.MonkeyPatch, repo: Path, stdin: str
) -> tuple[int, str, str]:
    monkeypatch.setattr(sys, "stdin", io.StringIO(stdin))
    return genstamp("-C", repo, "hook", "pre-push", "origin", "/remote.git")


def refused(genstamp: RunGenstamp, monkeypatch: pytest.MonkeyPatch, repo: Path, stdin: str) -> str:
    """The pre-push hook's refusal (exit 1) of ``stdin``: what it printed on stderr."""
    code, _, err = pre_push(genstamp, monkeypatch, repo, stdin)
    assert code == 1, err
    return err


def green_uncommitted_edit(repo: Path) -> None:
    """An uncommitted edit, tested green: the evidence is the work tree's, not the commit's."""
    forget_verdicts(repo)
    (repo / "src" / "calc" / "__init__.py").write_text("def add(a, b):\n    return a + b + 0\n")
    assert run_pytest(repo).returncode == 0


# -- parse_pre_push ---------------------------------------------------------------------------

A = "a" * 40
B = "b" * 40


def test_parse_pre_push_good_lines() -> None:
    refs = parse_pre_push(
        f"refs/heads/main {A} refs/heads/main {B}\nrefs/tags/v1 {B} refs/tags/v1 {Z40}\n"
    )
    assert refs == [
        PushedRef("refs/heads/main", A, "refs/heads/main", B),
        PushedRef("refs/tags/v1", B, "refs/tags/v1", Z40),
    ]
    assert not any(r.is_delete for r in refs)


def test_parse_pre_push_sha256_and_blank_lines() -> None:
    sha = "c" * 64
    refs = parse_pre_push(f"\nrefs/heads/x {sha} refs/heads/x {'0' * 64}\n\n")
    assert refs == [PushedRef("refs/heads/x", sha, "refs/heads/x", "0" * 64)]


def test_parse_pre_push_deletion() -> None:
    (ref,) = parse_pre_push(f"(delete) {Z40} refs/heads/gone {A}\n")
    assert ref.is_delete
    assert ref.remote_ref == "refs/heads/gone"


def test_parse_pre_push_empty() -> None:
    assert parse_pre_push("") == []


@pytest.mark.parametrize(
    "line",
    [
        "garbage",
        f"refs/heads/main {A} refs/heads/main",
        f"refs/heads/main {A[:39]} refs/heads/main {B}",
        f"refs/heads/main {A.upper()} refs/heads/main {B}",
        f"refs/heads/main {A} refs/heads/main {B} extra",
    ],
)
def test_parse_pre_push_malformed(line: str) -> None:
    with pytest.raises(GenstampError) as info:
        parse_pre_push(f"refs/heads/ok {A} refs/heads/ok {B}\n{line}\n")
    assert info.value.code == EXIT_REFUSED
    assert "line 2 does not parse" in info.value.message


def test_malformed_stdin_refuses_the_push_with_a_clear_line(tested: Path) -> None:
    proc = run_genstamp(
        tested, "hook", "pre-push", "origin", "/remote.git", stdin="this is not what git sends\n"
    )
    assert proc.returncode == 1
    assert proc.stdout == ""
    lines = proc.stderr.splitlines()
    assert len(lines) == 1
    assert lines[0].startswith("genstamp: pre-push line 1 does not parse: ")
    assert "this is not what git sends" in lines[0]
    assert "Traceback" not in proc.stderr


def hook_process(repo: Path, stdin: bytes, **env: str) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, "-m", "genstamp", "hook", "pre-push", "origin", "/remote.git"],
        cwd=repo,
        input=stdin,
        capture_output=True,
        env=subprocess_env(**env),
        timeout=60,
    )


@pytest.mark.parametrize("name", [b"caf\xe9", "line\u2028sep\u0085".encode()])
def test_ref_names_git_allows_are_parsed(tested: Path, name: bytes) -> None:
    """git ref names are bytes: not UTF-8 (Latin-1), or UTF-8 holding characters that
    str.splitlines would break a line at. A strict UTF-8 stdin must not turn them into a
    traceback."""
    for target, expected in (("main", 0), ("old", 1)):
        ref = b"refs/heads/" + name
        subprocess.run([b"git", b"branch", b"-f", name, target.encode()], cwd=tested, check=True)
        sha = git(tested, "rev-parse", target).encode()
        proc = hook_process(
            tested,
            b"%s %s %s %s\n" % (ref, sha, ref, Z40.encode()),
            PYTHONIOENCODING="utf-8:strict",
        )
        assert b"Traceback" not in proc.stderr
        assert proc.returncode == expected, proc.stderr
        if expected:  # the refusal's line names the ref (escaped): the last line does not
            assert proc.stderr.splitlines()[-1] == b"genstamp: push refused", proc.stderr


# -- plain pre-push: every ref judged by its commit's tree -------------------------------------


def test_pre_push_accepts_the_tested_branch(
    tested: Path, genstamp: RunGenstamp, monkeypatch: pytest.MonkeyPatch
) -> None:
    code, out, err = pre_push(genstamp, monkeypatch, tested, push_line(tested, "refs/heads/main"))
    assert code == 0, err
    assert out == ""


def test_pre_push_refuses_an_untested_branch_naming_paths(
    tested: Path, genstamp: RunGenstamp, monkeypatch: pytest.MonkeyPatch
) -> None:
    err = refused(genstamp, monkeypatch, tested, push_line(tested, "refs/heads/old"))
    assert "genstamp: tree-mismatch: " in err
    assert "src/calc/__init__.py" in err
    assert err.rstrip().endswith("genstamp: push refused")


def test_pre_push_judges_every_ref(
    tested: Path, genstamp: RunGenstamp, monkeypatch: pytest.MonkeyPatch
) -> None:
    stdin = push_line(tested, "refs/heads/main") + push_line(tested, "refs/heads/old")
    err = refused(genstamp, monkeypatch, tested, stdin)
    assert git(tested, "rev-parse", "old")[:12] in err  # the untested one, by its commit


def test_a_refusal_that_names_no_ref_is_followed_by_the_refs_pushed(
    project: Path, genstamp: RunGenstamp, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No evidence refuses every ref alike and its line names none: the last line says what
    the push held (probe F19); a refusal that names its ref keeps the line as it was."""
    assert genstamp("-C", project, "stamp")[0] == 0
    git(project, "tag", "v1")
    stdin = push_line(project, "refs/heads/main") + push_line(project, "refs/tags/v1")
    err = refused(genstamp, monkeypatch, project, stdin)
    last = err.rstrip().splitlines()[-1]
    assert "no-evidence" in err and last.startswith("genstamp: push refused: "), err
    assert "refs/heads/main (" in last, last  # one commit, two refs: named once
    assert "and 1 more ref" in last, last


def test_a_refusal_that_names_no_ref_names_only_the_refs_it_refuses(
    tested: Path, genstamp: RunGenstamp, monkeypatch: pytest.MonkeyPatch
) -> None:
    """main's tree was accepted (remembered), then its evidence went: a push of main and
    of an untested branch refuses the branch alone, and the last line names it alone, not
    main too (h206: every pushed ref was named, the accepted ones as well)."""
    git(tested, "switch", "-q", "-c", "new")
    (tested / "src" / "calc" / "__init__.py").write_text("def add(a, b):\n    return a + b\n")
    commit_all(tested, "untested")
    git(tested, "switch", "-q", "main")
    (tested / ".git" / "genstamp" / "evidence.xml").unlink()  # no-evidence: names no ref
    stdin = push_line(tested, "refs/heads/main") + push_line(tested, "refs/heads/new")
    err = refused(genstamp, monkeypatch, tested, stdin)
    last = err.rstrip().splitlines()[-1]
    assert last.startswith("genstamp: push refused: refs/heads/new ("), err
    assert "refs/heads/main" not in last, err


def test_pre_push_judges_the_commit_not_the_work_tree(
    tested: Path, genstamp: RunGenstamp, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Uncommitted edits were tested; the pushed commit does not carry them."""
    green_uncommitted_edit(tested)
    assert genstamp("-C", tested, "verify")[0] == 0
    err = refused(genstamp, monkeypatch, tested, push_line(tested, "refs/heads/main"))
    assert "src/calc/__init__.py" in err


def test_pre_push_annotated_tag_is_judged_by_its_commit(
    tested: Path, genstamp: RunGenstamp, monkeypatch: pytest.MonkeyPatch
) -> None:
    git(tested, "tag", "-a", "v2", "-m", "tested release", "main")
    git(tested, "tag", "-a", "v1", "-m", "untested release", "old")
    assert git(tested, "cat-file", "-t", "v2") == "tag"
    line = push_line(tested, "refs/tags/v2")
    assert line.split()[1] == git(tested, "rev-parse", "v2")  # the tag object, as git sends it
    assert line.split()[1] != git(tested, "rev-parse", "v2^{commit}")
    code, _, err = pre_push(genstamp, monkeypatch, tested, line)
    assert code == 0, err
    err = refused(genstamp, monkeypatch, tested, push_line(tested, "refs/tags/v1"))
    assert "src/calc/__init__.py" in err


def test_pre_push_ref_to_a_tree_is_refused_and_to_a_file_passes(
    tested: Path, genstamp: RunGenstamp, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A tag of a tree is code no commit holds; a tag of a blob (git.git keeps its signing key
    so) holds no code: with the tested branch, the push passes."""
    tree = git(tested, "rev-parse", "old^{tree}")
    err = refused(genstamp, monkeypatch, tested, f"refs/tags/tree {tree} refs/tags/tree {Z40}\n")
    assert "does not point at a commit" in err
    blob = git(tested, "hash-object", "-w", "pyproject.toml")
    git(tested, "tag", "-a", "key", "-m", "a signing key", blob)
    stdin = push_line(tested, "refs/tags/key") + push_line(tested, "refs/heads/main")
    code, _, err = pre_push(genstamp, monkeypatch, tested, stdin)
    assert code == 0, err
    lightweight = f"refs/tags/blob {blob} refs/tags/blob {Z40}\n"
    code, _, err = pre_push(genstamp, monkeypatch, tested, lightweight)
    assert code == 0, err


def notes_commit(repo: Path, entries: dict[str, bytes]) -> str:
    """A commit (on no ref) whose tree holds ``entries`` (paths -> contents), as git notes
    keeps notes: made with git's own plumbing in a scratch index."""
    env = {**os.environ, "GIT_INDEX_FILE": str(repo / ".git" / "scratch-index")}
    for path, data in entries.items():
        blob = (
            subprocess.run(
                ["git", "hash-object", "-w", "--stdin"],
                cwd=repo,
                input=data,
                capture_output=True,
                check=True,
            )
            .stdout.decode()
            .strip()
        )
        subprocess.run(
            ["git", "update-index", "--add", "--cacheinfo", f"100644,{blob},{path}"],
            cwd=repo,
            env=env,
            check=True,
        )
    tree = (
        subprocess.run(["git", "write-tree"], cwd=repo, env=env, capture_output=True, check=True)
        .stdout.decode()
        .strip()
    )
    (repo / ".git" / "scratch-index").unlink(missing_ok=True)
    return git(repo, "commit-tree", tree, "-m", "notes")


@pytest.mark.parametrize("via", ["plain", "pre-commit"])
def test_a_push_to_a_notes_ref_passes_only_with_notes_in_it(
    tested: Path, genstamp: RunGenstamp, monkeypatch: pytest.MonkeyPatch, via: str
) -> None:
    """Notes are about commits, not code to test: a commit of notes (files named by object
    ids, flat or in git's fan-out folders) goes to refs/notes/* untested; a commit of code sent
    there is judged as a branch is (`git push origin old:refs/notes/x`)."""
    head = git(tested, "rev-parse", "HEAD")
    git(tested, "notes", "add", "-m", "Reviewed-by: someone", "HEAD")
    notes = git(tested, "rev-parse", "refs/notes/commits")
    fanned = notes_commit(tested, {f"{head[:2]}/{head[2:4]}/{head[4:]}": b"a note\n"})
    smuggled = {head: b"n\n", "tests/test_x.py": b"def test_x():\n    assert False\n"}
    not_notes = [git(tested, "rev-parse", "old"), notes_commit(tested, smuggled)]

    def push(sha: str) -> int:
        if via == "plain":
            return pre_push(genstamp, monkeypatch, tested, f"x {sha} refs/notes/x {Z40}\n")[0]
        monkeypatch.setenv("PRE_COMMIT_TO_REF", sha)
        monkeypatch.setenv("PRE_COMMIT_LOCAL_BRANCH", "refs/notes/x")
        monkeypatch.setenv("PRE_COMMIT_REMOTE_BRANCH", "refs/notes/x")
        return pre_commit_push(genstamp, tested)[0]

    assert [push(notes), push(fanned)] == [0, 0]
    assert [push(sha) for sha in not_notes] == [1, 1]


def test_what_holds_notes_is_a_tree_of_object_ids(project: Path) -> None:
    head = git(project, "rev-parse", "HEAD")
    repo = open_checkout(project).repo
    shapes = {
        "flat": ({head: b"n\n"}, True),
        "fanned out": ({f"{head[:2]}/{head[2:]}": b"n\n"}, True),
        "fanned out twice": ({f"{head[:2]}/{head[2:4]}/{head[4:]}": b"n\n"}, True),
        "a file of another name": ({head: b"n\n", "README": b"r\n"}, False),
        "a folder git does not fan out": ({f"{head[:3]}/{head[3:]}": b"n\n"}, False),
        "a name short of an id": ({head[:-1]: b"n\n"}, False),
        "an id in capitals": ({head.upper(): b"n\n"}, False),
    }
    got = {name: holds_notes(repo, notes_commit(project, e)) for name, (e, _) in shapes.items()}
    assert got == {name: want for name, (_, want) in shapes.items()}
    assert not holds_notes(repo, git(project, "rev-parse", "HEAD^{tree}"))  # not a commit


def test_pre_push_deleting_a_remote_ref_passes(
    project: Path, genstamp: RunGenstamp, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Nothing was stamped or tested here: a deletion is judged by nothing."""
    sha = git(project, "rev-parse", "HEAD")
    code, out, err = pre_push(
        genstamp, monkeypatch, project, f"(delete) {Z40} refs/heads/gone {sha}\n"
    )
    assert (code, out, err) == (0, "", "")


def test_pre_push_deletion_beside_an_untested_push_is_refused(
    tested: Path, genstamp: RunGenstamp, monkeypatch: pytest.MonkeyPatch
) -> None:
    sha = git(tested, "rev-parse", "HEAD")
    stdin = f"(delete) {Z40} refs/heads/gone {sha}\n" + push_line(tested, "refs/heads/old")
    assert pre_push(genstamp, monkeypatch, tested, stdin)[0] == 1


def test_pre_push_without_git_arguments_is_a_usage_error(
    tested: Path, genstamp: RunGenstamp, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sys, "stdin", io.StringIO(push_line(tested, "refs/heads/main")))
    code, _, err = genstamp("-C", tested, "hook", "pre-push")
    assert code == 2
    assert err.startswith("genstamp: ")


# -- pre-commit's pre-push environment -----------------------------------------------------------


def pre_commit_push(genstamp: RunGenstamp, repo: Path) -> tuple[int, str, str]:
    return genstamp("-C", repo, "hook", "pre-push", "--pre-commit")


def test_pre_commit_to_ref(
    tested: Path, genstamp: RunGenstamp, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PRE_COMMIT_FROM_REF", git(tested, "rev-parse", "HEAD~1"))
    monkeypatch.setenv("PRE_COMMIT_TO_REF", git(tested, "rev-parse", "HEAD"))
    monkeypatch.setenv("PRE_COMMIT_LOCAL_BRANCH", "refs/heads/main")
    assert pre_commit_push(genstamp, tested)[0] == 0
    monkeypatch.setenv("PRE_COMMIT_TO_REF", git(tested, "rev-parse", "old"))
    code, _, err = pre_commit_push(genstamp, tested)
    assert code == 1
    assert "src/calc/__init__.py" in err


def test_pre_commit_local_branch_only(
    tested: Path, genstamp: RunGenstamp, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A new branch whose history includes the root commit: pre-commit sets no refs."""
    monkeypatch.setenv("PRE_COMMIT_LOCAL_BRANCH", "refs/heads/main")
    monkeypatch.setenv("PRE_COMMIT_REMOTE_BRANCH", "refs/heads/main")
    assert pre_commit_push(genstamp, tested)[0] == 0
    monkeypatch.setenv("PRE_COMMIT_LOCAL_BRANCH", "refs/heads/old")
    code, _, err = pre_commit_push(genstamp, tested)
    assert code == 1
    assert "src/calc/__init__.py" in err


def test_pre_commit_without_refs_fails_closed(tested: Path, genstamp: RunGenstamp) -> None:
    code, out, err = pre_commit_push(genstamp, tested)
    assert code == 1
    assert out == ""
    lines = err.splitlines()
    assert len(lines) == 1
    assert lines[0].startswith("genstamp: pre-commit gave this pre-push hook no ref to judge")


def test_pre_commit_to_ref_judges_the_commit_not_the_work_tree(
    tested: Path, genstamp: RunGenstamp, monkeypatch: pytest.MonkeyPatch
) -> None:
    green_uncommitted_edit(tested)
    monkeypatch.setenv("PRE_COMMIT_TO_REF", git(tested, "rev-parse", "HEAD"))
    code, _, err = pre_commit_push(genstamp, tested)
    assert code == 1
    assert "src/calc/__init__.py" in err


# -- the restamping hooks -------------------------------------------------------------------


def test_post_checkout_restamps_and_prints_one_short_line(
    tested: Path, genstamp: RunGenstamp
) -> None:
    before = generation(tested)
    pycache = tested / "src" / "calc" / "__pycache__"
    pycache.mkdir()
    (pycache / "__init__.cpython-311.pyc").write_bytes(b"stale")
    # A checkout that changes content (one that does not keeps the generation: issue 13).
    prev, new = git(tested, "rev-parse", "HEAD"), git(tested, "rev-parse", "HEAD~1")
    git(tested, "checkout", "-q", new)
    code, out, err = genstamp("-C", tested, "hook", "post-checkout", prev, new, "1")
    assert code == 0
    after = generation(tested)
    assert after["id"] != before["id"]
    assert after["trigger"] == "post-checkout"
    assert after["tree"] == git(tested, "rev-parse", "HEAD^{tree}")
    assert not pycache.exists()
    lines = (out + err).splitlines()
    assert len(lines) == 1, out + err
    assert len(lines[0]) <= 160
    assert after["id"][:12] in lines[0] and after["tree"][:12] in lines[0]
    assert "1 folders, 1 files" in lines[0]
    # the old evidence now belongs to an earlier generation
    code, out, _ = genstamp("-C", tested, "verify")
    assert code == 1 and out.startswith("stale-generation")


@pytest.mark.parametrize(
    ("hook", "args", "trigger"),
    [("post-merge", ("0",), "post-merge"), ("post-rewrite", ("rebase",), "post-rewrite")],
)
def test_other_restamping_hooks(
    project: Path, genstamp: RunGenstamp, hook: str, args: tuple[str, ...], trigger: str
) -> None:
    code, _, _ = genstamp("-C", project, "hook", hook, *args)
    assert code == 0
    assert generation(project)["trigger"] == trigger


def test_skip_post_checkout_is_honoured(
    tested: Path, genstamp: RunGenstamp, monkeypatch: pytest.MonkeyPatch
) -> None:
    before = (tested / STAMP).read_bytes()
    monkeypatch.setenv(SKIP_ENV, "1")
    prev = new = git(tested, "rev-parse", "HEAD")
    assert genstamp("-C", tested, "hook", "post-checkout", prev, new, "0") == (0, "", "")
    monkeypatch.setenv("PRE_COMMIT_CHECKOUT_TYPE", "0")
    assert genstamp("-C", tested, "hook", "restamp") == (0, "", "")
    assert (tested / STAMP).read_bytes() == before
    assert genstamp("-C", tested, "verify")[0] == 0


@pytest.mark.parametrize(
    ("variable", "value", "trigger"),
    [
        ("PRE_COMMIT_CHECKOUT_TYPE", "1", "post-checkout"),
        ("PRE_COMMIT_IS_SQUASH_MERGE", "0", "post-merge"),
        ("PRE_COMMIT_REWRITE_COMMAND", "amend", "post-rewrite"),
    ],
)
def test_pre_commit_restamp_tells_the_stage_from_the_environment(
    project: Path,
    genstamp: RunGenstamp,
    monkeypatch: pytest.MonkeyPatch,
    variable: str,
    value: str,
    trigger: str,
) -> None:
    monkeypatch.setenv(variable, value)
    code, _, err = genstamp("-C", project, "hook", "restamp")
    assert code == 0
    assert len(err.splitlines()) == 1
    assert generation(project)["trigger"] == trigger


def test_post_checkout_through_real_git(project: Path, tmp_path: Path) -> None:
    """git itself runs the hook (hooks dir with a wrapper around this interpreter)."""
    hooks = tmp_path / "hooks"
    hooks.mkdir()
    hook = hooks / "post-checkout"
    hook.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m genstamp hook post-checkout "$@"\n')
    hook.chmod(0o755)
    git(project, "config", "core.hooksPath", str(hooks))
    proc = subprocess.run(
        ["git", "checkout", "-b", "feature"],
        cwd=project,
        capture_output=True,
        text=True,
        env=subprocess_env(),
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    assert "genstamp: new generation" in proc.stderr
    assert generation(project)["trigger"] == "post-checkout"
    assert os.path.isfile(project / STAMP)
