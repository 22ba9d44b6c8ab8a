"""Edges a final review found outside the gate's rules: a damaged index, an unchecked hash-based
pyc, a submodule's bytecode. (The review's gate edges are rows now: a copied checkout in
test_no_false_accept.py, an audit of another format and a non-ASCII seal in test_rules.py, a
stamp with a bad key in test_facts.py.)"""

from __future__ import annotations

import py_compile
from pathlib import Path

import pytest
from conftest import (
    RunGenstamp,
    commit_all,
    git,
    init_repo,
    run_genstamp,
)

from genstamp import audit


@pytest.mark.parametrize(
    "command",
    [["stamp"], ["scrub"], ["check-bytecode"], ["hook", "post-checkout", "a", "b", "1"]],
    ids=["stamp", "scrub", "check-bytecode", "post-checkout"],
)
def test_a_damaged_index_is_one_line(project: Path, command: list[str]) -> None:
    index = project / ".git" / "index"
    index.write_bytes(b"DIRC" + b"\xff" * 64)
    proc = run_genstamp(project, *command)
    assert "Traceback" not in proc.stderr
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("genstamp: "), proc.stderr
    if command[0] == "hook":  # a post-* hook never fails git's command: a warning, exit 0
        assert proc.returncode == 0 and lines[0].startswith("genstamp: warning: "), proc.stderr
    else:
        assert proc.returncode == 2, proc.stderr


def test_check_bytecode_outside_a_repository(tmp_path: Path) -> None:
    """With no files named it checks every file of the index: outside a repository there is
    none, and it says so as every command does (it passed, exit 0, with bytecode beside it).
    Files named (as pre-commit passes them) need no repository; a path is quoted in the
    remedy as a shell takes it."""
    pyc = tmp_path / "my dir" / "__pycache__" / "a.cpython-311.pyc"
    pyc.parent.mkdir(parents=True)
    pyc.write_bytes(b"bytecode")
    proc = run_genstamp(tmp_path, "check-bytecode")
    assert proc.returncode == 2 and proc.stdout == "", proc.stdout + proc.stderr
    assert (
        proc.stderr.startswith("genstamp: not inside a git work tree")
        and proc.stderr.count("\n") == 1
    ), proc.stderr
    proc = run_genstamp(tmp_path, "check-bytecode", "my dir/__pycache__/a.cpython-311.pyc")
    assert proc.returncode == 1, proc.stderr
    assert "`git rm --cached -- 'my dir/__pycache__/a.cpython-311.pyc'`" in proc.stdout
    assert "is Python bytecode in git" in proc.stdout
    # a file of another kind there is no bytecode: said as what it is (it was called one)
    proc = run_genstamp(tmp_path, "check-bytecode", "data/__pycache__/notes.txt")
    assert proc.returncode == 1, proc.stderr
    assert "notes.txt is in git inside a __pycache__ folder" in proc.stdout, proc.stdout


def hashed_pyc(tmp_path: Path, mode: py_compile.PycInvalidationMode) -> tuple[Path, Path, Path]:
    """A module's source ``X = 1`` and its hash-based pyc: the work tree, source and pyc."""
    root = tmp_path / "root"
    (root / "pkg").mkdir(parents=True)
    source = root / "pkg" / "mod.py"
    source.write_text("X = 1\n")
    cached = tmp_path / "mod.pyc"
    py_compile.compile(str(source), cfile=str(cached), invalidation_mode=mode)
    return root, source, cached


def test_an_unchecked_hash_pyc_of_other_source_is_flagged(tmp_path: Path) -> None:
    """CPython runs an unchecked hash-based pyc without looking at the source."""
    root, source, cached = hashed_pyc(tmp_path, py_compile.PycInvalidationMode.UNCHECKED_HASH)
    assert audit._stale_cache(str(source), str(cached), str(root), None) is None
    source.write_text("X = 2\n")
    assert "unchecked" in str(audit._stale_cache(str(source), str(cached), str(root), None))
    # a checked one CPython validates itself: it would have recompiled
    py_compile.compile(
        str(source),
        cfile=str(cached),
        invalidation_mode=py_compile.PycInvalidationMode.CHECKED_HASH,
    )
    source.write_text("X = 3\n")
    assert audit._stale_cache(str(source), str(cached), str(root), None) is None


def test_a_checked_hash_pyc_is_not_checked_under_never(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``python --check-hash-based-pycs never``: CPython runs a checked pyc unchecked too."""
    import _imp

    root, source, cached = hashed_pyc(tmp_path, py_compile.PycInvalidationMode.CHECKED_HASH)
    monkeypatch.setattr(_imp, "check_hash_based_pycs", "never")
    assert audit._stale_cache(str(source), str(cached), str(root), None) is None
    source.write_text("X = 2\n")
    assert "did not check" in str(audit._stale_cache(str(source), str(cached), str(root), None))


def test_scrub_keeps_bytecode_a_submodule_tracks(
    project: Path, genstamp: RunGenstamp, tmp_path: Path
) -> None:
    lib = init_repo(tmp_path / "lib")
    (lib / "fixture.pyc").write_bytes(b"the submodule's committed fixture")
    (lib / "mod.py").write_text("")
    commit_all(lib, "lib")
    git(project, "-c", "protocol.file.allow=always", "submodule", "add", "-q", str(lib), "lib")
    commit_all(project, "submodule")
    (project / "lib" / "stray.pyc").write_bytes(b"\0\0\r\nuntracked")
    for command in (["scrub"], ["stamp"]):
        code, _, err = genstamp("-C", project, *command)
        assert code == 0, err
        assert (project / "lib" / "fixture.pyc").read_bytes().startswith(b"the submodule")
        assert not (project / "lib" / "stray.pyc").exists()
    assert git(project / "lib", "status", "--porcelain") == ""
