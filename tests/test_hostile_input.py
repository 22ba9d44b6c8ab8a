"""Hostile input: file names that are not UTF-8 or hold newlines, a push of 5,000 refs, and a
200 MB JUnit file, each answered in bounded memory with clear output and no traceback.

test_evidence.py covers XML bombs, entities, binary garbage and the reader's memory on 200 MB;
test_verify.py one Latin-1 file name in a tree-mismatch line. Here the same inputs go end to end
through the commands (scrub, stamp, verify, check-bytecode, a real `git push`).
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from conftest import commit_all, git, git_tree, init_repo, run_pytest, subprocess_env, write_calc

from genstamp.identity import tree_identity
from genstamp.repo import open_checkout
from genstamp.verify import TREE_LIMIT

LATIN1 = os.fsdecode(b"caf\xe9")  # a name that is not UTF-8 (surrogate-escaped by os)
STRICT = {"PYTHONIOENCODING": "utf-8:strict"}  # a UTF-8 terminal that refuses surrogates


def genstamp(
    cwd: Path, *args: str, stdin: bytes | None = None, **env: str
) -> subprocess.CompletedProcess[bytes]:
    """The real command, bytes in and out (the output may hold escaped non-UTF-8 names)."""
    return subprocess.run(
        [sys.executable, "-m", "genstamp", *args],
        cwd=cwd,
        input=stdin,
        capture_output=True,
        env=subprocess_env(**env),
        timeout=300,  # a guard against a hang, not a timing assertion
    )


def clean(proc: subprocess.CompletedProcess[bytes]) -> tuple[str, str]:
    """stdout and stderr, which must be valid UTF-8 and carry no traceback."""
    out, err = proc.stdout.decode("utf-8"), proc.stderr.decode("utf-8")
    assert "Traceback" not in out + err, out + err
    return out, err


def make_project(root: Path) -> Path:
    return write_calc(init_repo(root), gitignore="__pycache__/\n")


def stamp_and_test(repo: Path) -> None:
    proc = genstamp(repo, "stamp")
    assert proc.returncode == 0, proc.stderr
    tested = run_pytest(repo)
    assert tested.returncode == 0, tested.stdout + tested.stderr


# -- names that are not UTF-8 ---------------------------------------------------------------------


@pytest.fixture
def latin1(tmp_path: Path) -> Path:
    """A project with a tracked Latin-1 folder and file, stamped and tested green."""
    repo = make_project(tmp_path / "repo")
    (repo / LATIN1).mkdir()
    (repo / LATIN1 / f"{LATIN1}.txt").write_text("tracked\n")
    (repo / "data").mkdir()
    (repo / "data" / f"{LATIN1}.csv").write_text("a,b\n")
    commit_all(repo, "non-UTF-8 names")
    assert (
        LATIN1.encode("utf-8", "surrogateescape")
        in subprocess.run(
            ["git", "ls-files", "-z"], cwd=repo, capture_output=True, check=True
        ).stdout
    )  # git tracks the bytes as they are
    stamp_and_test(repo)
    return repo


def test_non_utf8_names_identity_equals_git(latin1: Path) -> None:
    (latin1 / LATIN1 / f"{LATIN1}.txt").write_text("changed\n")  # modified
    (latin1 / LATIN1 / f"new-{LATIN1}").write_text("untracked\n")  # added
    (latin1 / "data" / f"{LATIN1}.csv").unlink()  # deleted
    os.symlink(f"{LATIN1}/{LATIN1}.txt", latin1 / f"link-{LATIN1}")  # a link to such a name
    assert tree_identity(open_checkout(latin1)) == git_tree(latin1)


def test_non_utf8_names_are_accepted_then_named_when_they_change(latin1: Path) -> None:
    """The plugin and the gate agree on the tree with such names in it; a change to one is
    named escaped, on one line, whatever stdout's encoding."""
    out, err = clean(genstamp(latin1, "verify", **STRICT))
    assert out == "" and "evidence accepted" in err
    (latin1 / LATIN1 / f"{LATIN1}.txt").write_text("changed after the run\n")
    proc = genstamp(latin1, "verify", **STRICT)
    out, _ = clean(proc)
    assert proc.returncode == 1
    assert out.splitlines() == [out.rstrip("\n")]
    assert out.startswith("tree-mismatch: ") and "caf\\xe9/caf\\xe9.txt" in out


def test_non_utf8_names_scrub_and_check_bytecode(latin1: Path) -> None:
    cache = latin1 / LATIN1 / "__pycache__"
    cache.mkdir()
    (cache / f"{LATIN1}.cpython-311.pyc").write_bytes(b"bytecode")
    (latin1 / LATIN1 / f"{LATIN1}.pyc").write_bytes(b"legacy bytecode")
    (latin1 / LATIN1 / f"{LATIN1}.pyc.txt").write_text("data\n")

    proc = genstamp(latin1, "scrub", "--dry-run", **STRICT)
    out, err = clean(proc)
    assert proc.returncode == 0
    assert sorted(out.splitlines()) == sorted(
        f"{latin1}/caf\\xe9/{rel}"
        for rel in ("__pycache__/", "__pycache__/caf\\xe9.cpython-311.pyc", "caf\\xe9.pyc")
    )
    assert "would remove 1 folders, 2 files" in err

    proc = genstamp(latin1, "stamp", **STRICT)
    clean(proc)
    assert proc.returncode == 0
    assert not cache.exists() and not (latin1 / LATIN1 / f"{LATIN1}.pyc").exists()
    assert (latin1 / LATIN1 / f"{LATIN1}.pyc.txt").read_text() == "data\n"

    # bytecode that is tracked, under such a name: named, escaped
    (latin1 / LATIN1 / f"{LATIN1}.pyc").write_bytes(b"tracked bytecode")
    git(latin1, "add", "-f", f"{LATIN1}/{LATIN1}.pyc")
    proc = genstamp(latin1, "check-bytecode", **STRICT)
    out, _ = clean(proc)
    assert proc.returncode == 1
    assert out.startswith("genstamp-bytecode: caf\\xe9/caf\\xe9.pyc is Python bytecode in git")


# -- names that hold newlines ---------------------------------------------------------------------

EVIL = "notes\ntree-mismatch: none — evidence accepted"  # a name that tries to forge a line


def test_a_newline_in_a_name_cannot_split_or_forge_a_line(tmp_path: Path) -> None:
    repo = make_project(tmp_path / "repo")
    commit_all(repo, "calc")
    stamp_and_test(repo)
    (repo / EVIL).write_text("x\n")
    (repo / "sub\ndir").mkdir()
    (repo / "sub\ndir" / "f.txt").write_text("y\n")
    assert tree_identity(open_checkout(repo)) == git_tree(repo)

    proc = genstamp(repo, "verify")
    out, _ = clean(proc)
    assert proc.returncode == 1
    lines = out.splitlines()
    assert len(lines) == 1 and lines[0].startswith("tree-mismatch: ")
    assert "notes\\ntree-mismatch: none" in lines[0] and "sub\\ndir/f.txt" in lines[0]

    (repo / "sub\ndir" / "__pycache__").mkdir()
    (repo / "sub\ndir" / "__pycache__" / "m.cpython-311.pyc").write_bytes(b"x")
    (repo / "legacy\n.pyc").write_bytes(b"x")
    proc = genstamp(repo, "scrub", "--dry-run")
    out, _ = clean(proc)
    assert sorted(out.splitlines()) == sorted(
        [
            f"{repo}/legacy\\n.pyc",
            f"{repo}/sub\\ndir/__pycache__/",
            f"{repo}/sub\\ndir/__pycache__/m.cpython-311.pyc",
        ]
    )
    proc = genstamp(repo, "scrub")
    clean(proc)
    assert proc.returncode == 0 and (repo / EVIL).is_file()
    assert not (repo / "legacy\n.pyc").exists()


# -- a push of 5,000 refs -----------------------------------------------------------------------

REFS = 5000


def fast_import(repo: Path, base: str, refs: int) -> None:
    """``refs`` branches b0..bN, each a commit on ``base`` with a tree of its own."""
    lines = []
    for i in range(refs):
        lines.append(
            f"commit refs/heads/b{i}\ncommitter C <c@example.invalid> 1767225600 +0000\n"
            f"data 8\nuntested\nfrom {base}\nM 644 inline data/f{i % 97}.txt\n"
            f"data {len(str(i)) + 1}\n{i}\n\n"
        )
    subprocess.run(
        ["git", "fast-import", "--quiet"],
        cwd=repo,
        input="".join(lines).encode(),
        check=True,
        capture_output=True,
    )


@pytest.fixture(scope="module")
def many_refs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A project tested green at main, with 5,000 untested branches (5,000 distinct trees),
    and 5,000 tags on the tested commit."""
    repo = make_project(tmp_path_factory.mktemp("many") / "repo")
    head = commit_all(repo, "calc")
    stamp_and_test(repo)
    fast_import(repo, head, REFS)
    refs = "".join(f"create refs/tags/t{i} {head}\n" for i in range(REFS))
    subprocess.run(["git", "update-ref", "--stdin"], cwd=repo, input=refs.encode(), check=True)
    return repo


def push_stdin(repo: Path, pattern: str) -> bytes:
    return subprocess.run(
        [
            "git",
            "for-each-ref",
            "--format=%(refname) %(objectname) %(refname) " + "0" * 40,
            pattern,
        ],
        cwd=repo,
        capture_output=True,
        check=True,
    ).stdout


def test_a_push_of_5000_untested_refs_is_refused_in_a_few_lines(many_refs: Path) -> None:
    stdin = push_stdin(many_refs, "refs/heads/b*")
    assert stdin.count(b"\n") == REFS
    proc = genstamp(many_refs, "hook", "pre-push", "origin", "/remote.git", stdin=stdin, **STRICT)
    out, err = clean(proc)
    assert proc.returncode == 1 and out == ""
    lines = err.splitlines()
    assert len(lines) == TREE_LIMIT + 2, err  # a line per tree shown, one for the rest, refused
    assert all(line.startswith("genstamp: tree-mismatch: ") for line in lines[:-1])
    assert f"and {REFS - TREE_LIMIT} more on {REFS - TREE_LIMIT} other trees" in lines[-2]
    assert lines[-1] == "genstamp: push refused"
    assert "refs/heads/b" in lines[0] and "data/f" in lines[0]  # the ref, and the path


def test_a_push_of_5000_refs_at_the_tested_commit_is_accepted(many_refs: Path) -> None:
    stdin = push_stdin(many_refs, "refs/tags/t*")
    assert stdin.count(b"\n") == REFS
    proc = genstamp(many_refs, "hook", "pre-push", "origin", "/remote.git", stdin=stdin)
    out, err = clean(proc)
    assert proc.returncode == 0, err
    assert out == "" and err == ""


def test_one_untested_ref_among_5000_tested_ones_is_named(many_refs: Path) -> None:
    stdin = push_stdin(many_refs, "refs/tags/t*") + push_stdin(many_refs, "refs/heads/b4242")
    proc = genstamp(many_refs, "hook", "pre-push", "origin", "/remote.git", stdin=stdin)
    _, err = clean(proc)
    assert proc.returncode == 1
    lines = err.splitlines()
    assert len(lines) == 2 and "refs/heads/b4242 (" in lines[0], err


@pytest.mark.e2e
def test_a_real_git_push_of_5000_refs(
    many_refs: Path, genstamp_snapshot: Path, tmp_path: Path
) -> None:
    """Through git itself and genstamp's plain hooks: refused, nothing reaches the remote;
    then the tested refs alone are pushed."""
    remote = tmp_path / "remote.git"
    git(tmp_path, "init", "-q", "--bare", str(remote))
    wrapper = tmp_path / "genstamp"
    wrapper.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m genstamp "$@"\n')
    wrapper.chmod(0o755)
    env = subprocess_env(GENSTAMP=str(wrapper))
    hooks = f"core.hooksPath={genstamp_snapshot / 'hooks'}"  # for these pushes only

    def push(*refspecs: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            ["git", "-c", hooks, "push", "-q", str(remote), *refspecs],
            cwd=many_refs,
            capture_output=True,
            text=True,
            env=env,
            timeout=600,
        )

    proc = push("refs/heads/*:refs/heads/*")
    assert proc.returncode != 0
    assert "Traceback" not in proc.stderr
    ours = [line for line in proc.stderr.splitlines() if line.startswith("genstamp: ")]
    assert len(ours) == TREE_LIMIT + 2, proc.stderr
    assert git(remote, "for-each-ref") == ""

    proc = push("refs/tags/*:refs/tags/*")
    assert proc.returncode == 0, proc.stderr
    assert len(git(remote, "for-each-ref", "refs/tags").splitlines()) == REFS


# -- a 200 MB JUnit file, end to end --------------------------------------------------------------

MIB = 1 << 20
MEASURED = textwrap.dedent(
    """
    import resource, sys
    from genstamp.cli import main
    code = main(sys.argv[1:])
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024
    print(f"peak-mib {peak}", file=sys.stderr)
    sys.exit(code)
    """
)


def verify_measured(repo: Path, junit: Path) -> subprocess.CompletedProcess[str]:
    """``genstamp verify --junit JUNIT`` run through MEASURED (its peak memory on stderr)."""
    return subprocess.run(
        [sys.executable, "-c", MEASURED, "verify", "--junit", str(junit)],
        cwd=repo,
        capture_output=True,
        text=True,
        env=subprocess_env(),
        timeout=300,  # a guard against a hang, not a timing assertion
    )


def inflate(src: Path, dest: Path, size: int, *, extra_case: bool = False) -> None:
    """``src`` with ``size`` bytes of captured output streamed into its first testcase (the
    seal covers the testcases' names and outcomes, not their output), or into a testcase of
    its own (which the seal does cover)."""
    data = src.read_bytes()
    at = data.index(b"<testcase ")
    end = data.index(b">", at)
    self_closing = data[end - 1 : end] == b"/"
    head = data[: end - 1] if self_closing else data[:end]
    block = b"x" * MIB
    with dest.open("wb") as fh:
        if extra_case:
            fh.write(data[:at] + b'<testcase classname="forged" name="big"><system-out>')
        else:
            fh.write(head + b"><system-out>")
        for _ in range(size // MIB):
            fh.write(block)
        if extra_case:
            fh.write(b"</system-out></testcase>" + data[at:])
        else:
            fh.write(b"</system-out>" + (b"</testcase>" if self_closing else b"") + data[end + 1 :])


@pytest.mark.e2e
def test_a_200_mb_junit_file_through_genstamp_verify(tmp_path: Path) -> None:
    repo = make_project(tmp_path / "repo")
    commit_all(repo, "calc")
    stamp_and_test(repo)
    evidence = Path(git(repo, "rev-parse", "--absolute-git-dir"), "genstamp", "evidence.xml")
    big = tmp_path / "big.xml"

    inflate(evidence, big, 200 * MIB)
    assert big.stat().st_size > 200 * MIB
    proc = verify_measured(repo, big)
    assert proc.returncode == 0, proc.stdout + proc.stderr  # the seal still holds: accepted
    assert "evidence accepted: 1 passed" in proc.stderr
    peak = int(proc.stderr.split("peak-mib ")[1].split()[0])
    assert peak < 128, f"verify of a 200 MB file peaked at {peak} MiB"

    big.unlink()
    inflate(evidence, big, 200 * MIB, extra_case=True)
    proc = verify_measured(repo, big)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stderr
    assert proc.stdout.startswith("unbound-evidence: ") and "seal" in proc.stdout
    peak = int(proc.stderr.split("peak-mib ")[1].split()[0])
    assert peak < 128, f"verify of a 200 MB file peaked at {peak} MiB"
