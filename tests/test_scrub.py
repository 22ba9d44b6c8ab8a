"""Scrub: all bytecode Python could import goes, nothing else does, no link is followed."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import RunGenstamp, commit_all, git, run_pytest, subprocess_env, undeletable

from genstamp.scrub import scrub


def python(cwd: Path, code: str) -> subprocess.CompletedProcess[str]:
    """A real CPython in ``cwd`` that may write bytecode."""
    return subprocess.run(
        [sys.executable, "-c", code],
        cwd=cwd,
        capture_output=True,
        text=True,
        env=subprocess_env(bytecode=True),
        timeout=60,
    )


def compile_real(cwd: Path, *modules: str) -> list[Path]:
    """Import ``modules`` in a real CPython so it writes their __pycache__; the .pyc files."""
    proc = python(cwd, "; ".join(f"import {m}" for m in modules))
    assert proc.returncode == 0, proc.stderr
    pycs = sorted(cwd.rglob("*.pyc"))
    assert pycs, "CPython wrote no bytecode: is PYTHONDONTWRITEBYTECODE still set?"
    return pycs


def files_under(root: Path) -> set[str]:
    out = set()
    for base, dirs, names in os.walk(root):
        for name in [*dirs, *names]:
            out.add(os.path.relpath(os.path.join(base, name), root))
    return out


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    root = tmp_path / "tree"
    root.mkdir()
    return root


def test_removes_real_cpython_pycache(tree: Path) -> None:
    (tree / "pkg" / "sub").mkdir(parents=True)
    (tree / "pkg" / "__init__.py").write_text("")
    (tree / "pkg" / "sub" / "__init__.py").write_text("")
    (tree / "pkg" / "sub" / "mod.py").write_text("X = 1\n")
    (tree / "top.py").write_text("Y = 2\n")
    pycs = compile_real(tree, "pkg.sub.mod", "top")
    total = sum(p.stat().st_size for p in pycs)
    caches = {p.parent for p in pycs}
    assert len(caches) == 3

    result = scrub(tree)

    assert result.clean
    assert result.files == len(pycs)
    assert result.folders == len(caches)
    assert result.bytes == total
    assert not list(tree.rglob("__pycache__"))
    assert files_under(tree) == {
        "pkg",
        "pkg/__init__.py",
        "pkg/sub",
        "pkg/sub/__init__.py",
        "pkg/sub/mod.py",
        "top.py",
    }
    assert sorted(result.removed) == sorted([str(p) for p in pycs] + [f"{c}/" for c in caches])
    # idempotent
    again = scrub(tree)
    assert (again.folders, again.files, again.bytes) == (0, 0, 0)


def test_removes_pytest_assertion_rewrite_cache(tree: Path) -> None:
    (tree / "tests").mkdir()
    (tree / "tests" / "test_one.py").write_text("def test_one():\n    assert 1 + 1 == 2\n")
    # the genstamp plugin would send this bytecode elsewhere: run pytest as a warm checkout did
    proc = run_pytest(tree, "-p", "no:genstamp", "-p", "no:cacheprovider", bytecode=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    rewritten = list((tree / "tests" / "__pycache__").glob("*-pytest-*.pyc"))
    assert rewritten, list(tree.rglob("*"))

    result = scrub(tree)

    assert result.clean and result.files >= 1 and result.folders == 1
    assert not (tree / "tests" / "__pycache__").exists()
    assert (tree / "tests" / "test_one.py").exists()


def test_removes_legacy_pyc_and_pyo_that_python_would_import(tree: Path) -> None:
    (tree / "legacy.py").write_text("VALUE = 'from legacy bytecode'\n")
    proc = python(tree, "import py_compile; py_compile.compile('legacy.py', cfile='legacy.pyc')")
    assert proc.returncode == 0, proc.stderr
    (tree / "legacy.py").unlink()
    (tree / "old.pyo").write_bytes(b"\x00" * 7)
    before = python(tree, "import legacy; print(legacy.VALUE)")
    assert before.returncode == 0 and "from legacy bytecode" in before.stdout, before.stderr
    size = (tree / "legacy.pyc").stat().st_size

    result = scrub(tree)

    assert result.files == 2 and result.folders == 0 and result.bytes == size + 7
    assert files_under(tree) == set()
    after = python(tree, "import legacy")
    assert after.returncode != 0 and "ModuleNotFoundError" in after.stderr


def test_folder_left_empty_is_removed_namespace_leftover(tree: Path) -> None:
    """A package deleted by git leaves its ignored __pycache__; the folder then imports as a
    namespace package in the warm checkout only."""
    (tree / "oldpkg").mkdir()
    (tree / "oldpkg" / "__init__.py").write_text("")
    (tree / "oldpkg" / "inner").mkdir()
    (tree / "oldpkg" / "inner" / "__init__.py").write_text("")
    (tree / "oldpkg" / "inner" / "mod.py").write_text("")
    compile_real(tree, "oldpkg.inner.mod")
    for source in tree.rglob("*.py"):
        source.unlink()  # what `git checkout` of a branch without the package does
    probe = "import oldpkg, oldpkg.inner; print(oldpkg.__path__)"
    before = python(tree, probe)
    assert before.returncode == 0, before.stderr  # a namespace package made of leftovers

    result = scrub(tree)

    assert result.clean
    assert files_under(tree) == set()
    assert result.folders == 4  # oldpkg/__pycache__, oldpkg/inner/__pycache__, inner, oldpkg
    assert str(tree / "oldpkg") + "/" in result.removed
    after = python(tree, probe)
    assert after.returncode != 0 and "ModuleNotFoundError" in after.stderr


def test_folders_that_were_empty_or_hold_other_files_stay(tree: Path) -> None:
    (tree / "was-empty").mkdir()
    (tree / "pkg" / "__pycache__").mkdir(parents=True)
    (tree / "pkg" / "__pycache__" / "m.cpython-311.pyc").write_bytes(b"x")
    (tree / "pkg" / "data.json").write_text("{}")
    (tree / "only-cache" / "__pycache__").mkdir(parents=True)
    (tree / "only-cache" / "__pycache__" / "m.cpython-311.pyc").write_bytes(b"x")
    (tree / "only-cache" / "empty-sibling").mkdir()

    result = scrub(tree)

    assert result.clean and result.files == 2 and result.folders == 2
    assert files_under(tree) == {
        "was-empty",
        "pkg",
        "pkg/data.json",
        "only-cache",
        "only-cache/empty-sibling",
    }


def test_pycache_symlink_is_unlinked_target_intact(tree: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside-cache"
    outside.mkdir()
    (outside / "keep.cpython-311.pyc").write_bytes(b"not ours")
    (tree / "pkg").mkdir()
    (tree / "pkg" / "mod.py").write_text("")
    (tree / "pkg" / "__pycache__").symlink_to(outside)
    (tree / "dangling.pyc").symlink_to(tmp_path / "nowhere.pyc")

    result = scrub(tree)

    assert result.clean
    assert not os.path.lexists(tree / "pkg" / "__pycache__")
    assert not os.path.lexists(tree / "dangling.pyc")
    assert (outside / "keep.cpython-311.pyc").read_bytes() == b"not ours"
    assert result.files == 2 and result.folders == 0
    assert (tree / "pkg" / "mod.py").exists()


def test_symlinked_folder_is_not_entered(tree: Path, tmp_path: Path) -> None:
    outside = tmp_path / "elsewhere"
    (outside / "pkg" / "__pycache__").mkdir(parents=True)
    (outside / "pkg" / "__pycache__" / "m.cpython-311.pyc").write_bytes(b"x")
    (outside / "legacy.pyc").write_bytes(b"x")
    (tree / "link").symlink_to(outside)
    (tree / "loop").symlink_to(".")

    result = scrub(tree)

    assert result.clean and (result.files, result.folders) == (0, 0)
    assert (outside / "pkg" / "__pycache__" / "m.cpython-311.pyc").exists()
    assert (outside / "legacy.pyc").exists()
    assert (tree / "link").is_symlink() and (tree / "loop").is_symlink()


def test_never_enters_git(tree: Path) -> None:
    (tree / ".git" / "hooks" / "__pycache__").mkdir(parents=True)
    (tree / ".git" / "hooks" / "__pycache__" / "h.cpython-311.pyc").write_bytes(b"x")
    (tree / ".git" / "stray.pyc").write_bytes(b"x")
    (tree / "sub" / ".git").mkdir(parents=True)  # a nested repository's git dir too
    (tree / "sub" / ".git" / "x.pyc").write_bytes(b"x")
    (tree / "sub" / "__pycache__").mkdir()
    (tree / "sub" / "__pycache__" / "m.cpython-311.pyc").write_bytes(b"x")

    result = scrub(tree)

    assert result.clean and (result.files, result.folders) == (1, 1)
    assert (tree / ".git" / "hooks" / "__pycache__" / "h.cpython-311.pyc").exists()
    assert (tree / ".git" / "stray.pyc").exists()
    assert (tree / "sub" / ".git" / "x.pyc").exists()
    assert not (tree / "sub" / "__pycache__").exists()


def test_deletes_nothing_that_is_not_bytecode(tree: Path) -> None:
    (tree / "notes.pyc.txt").write_text("data named like bytecode\n")
    (tree / "pyc").write_text("no suffix\n")
    (tree / "archive.pyc.d").mkdir()  # a folder, not a file
    (tree / "archive.pyc.d" / "x").write_text("x")
    (tree / "folder.pyc").mkdir()  # a folder named like bytecode is not bytecode
    (tree / "folder.pyc" / "data").write_text("d")
    (tree / "pkg" / "__pycache__").mkdir(parents=True)
    (tree / "pkg" / "__pycache__" / "m.cpython-311.pyc").write_bytes(b"12345")
    (tree / "pkg" / "__pycache__" / "README").write_text("someone's notes\n")
    (tree / "pkg" / "__pycache__" / "m.cpython-311.pyc.txt").write_text("not bytecode\n")
    keep = files_under(tree) - {"pkg/__pycache__/m.cpython-311.pyc"}

    result = scrub(tree)

    assert result.clean
    assert files_under(tree) == keep
    assert (result.files, result.folders, result.bytes) == (1, 0, 5)


def test_interrupted_cpython_temp_file_in_pycache_is_bytecode(tree: Path) -> None:
    # importlib writes "<name>.pyc.<id>" and renames it; a killed process leaves it behind
    (tree / "__pycache__").mkdir()
    (tree / "__pycache__" / "m.cpython-311.pyc.140234567").write_bytes(b"x")
    result = scrub(tree)
    assert result.clean and (result.files, result.folders) == (1, 1)
    assert files_under(tree) == set()


def test_venv_is_left_alone_unless_asked(tree: Path) -> None:
    venv = tree / ".venv"
    site = venv / "lib" / "python3.11" / "site-packages" / "dep"
    (site / "__pycache__").mkdir(parents=True)
    (site / "__pycache__" / "d.cpython-311.pyc").write_bytes(b"x")
    (site / "__init__.py").write_text("")
    (venv / "pyvenv.cfg").write_text("home = /usr/bin\n")
    (tree / "app" / "__pycache__").mkdir(parents=True)
    (tree / "app" / "__pycache__" / "a.cpython-311.pyc").write_bytes(b"x")
    (tree / "app" / "a.py").write_text("")

    result = scrub(tree)
    assert result.clean and (result.files, result.folders) == (1, 1)
    assert (site / "__pycache__" / "d.cpython-311.pyc").exists()

    result = scrub(tree, venvs=True)
    assert result.clean and (result.files, result.folders) == (1, 1)
    assert not (site / "__pycache__").exists()
    assert (venv / "pyvenv.cfg").exists() and (site / "__init__.py").exists()


def _warm_tree(tree: Path) -> None:
    (tree / "a" / "b").mkdir(parents=True)
    (tree / "a" / "b" / "m.py").write_text("")
    (tree / "a" / "b" / "__pycache__").mkdir()
    (tree / "a" / "b" / "__pycache__" / "m.cpython-311.pyc").write_bytes(b"1234")
    (tree / "gone" / "__pycache__").mkdir(parents=True)
    (tree / "gone" / "__pycache__" / "g.cpython-311.pyc").write_bytes(b"12")
    (tree / "x.pyc").write_bytes(b"123")


def test_dry_run_lists_without_deleting(tree: Path) -> None:
    _warm_tree(tree)
    before = files_under(tree)

    dry = scrub(tree, dry_run=True)

    assert files_under(tree) == before
    assert dry.dry_run and dry.clean
    assert (dry.folders, dry.files, dry.bytes) == (3, 3, 9)
    real = scrub(tree)
    assert not real.dry_run
    assert (real.folders, real.files, real.bytes) == (dry.folders, dry.files, dry.bytes)
    assert sorted(real.removed) == sorted(dry.removed)
    assert files_under(tree) == {"a", "a/b", "a/b/m.py"}


def test_undeletable_folder_is_reported(tree: Path, genstamp: RunGenstamp) -> None:
    init_git = tree  # scrub through the CLI needs a work tree
    git(init_git, "-c", "init.defaultBranch=main", "init", "-q")
    (tree / "locked" / "__pycache__").mkdir(parents=True)
    pyc = tree / "locked" / "__pycache__" / "m.cpython-311.pyc"
    pyc.write_bytes(b"x")
    (tree / "free" / "__pycache__").mkdir(parents=True)
    (tree / "free" / "__pycache__" / "f.cpython-311.pyc").write_bytes(b"x")
    (tree / "free" / "f.py").write_text("")
    with undeletable(tree / "locked" / "__pycache__"):
        result = scrub(tree)
        assert not result.clean
        assert [e.path for e in result.errors] == [str(pyc)]
        assert pyc.exists()
        assert not (tree / "free" / "__pycache__").exists()  # the rest was still scrubbed
        assert (result.files, result.folders) == (1, 1)

        code, out, err = genstamp("-C", tree, "scrub")
        assert code == 1
        assert f"genstamp: cannot remove {pyc}" in err
        assert "Traceback" not in err

        code, out, err = genstamp("-C", tree, "stamp")  # stamped, but refused as not clean
        assert code == 1
        assert out.startswith("generation ") and "1 could not be removed" in out
        assert f"genstamp: cannot remove {pyc}" in err
        assert "not clean" in err and "Traceback" not in err
    assert pyc.exists()


def test_scrub_in_a_real_checkout_keeps_git_status(project: Path) -> None:
    """In a committed project whose .gitignore covers bytecode, scrub changes nothing git sees."""
    compile_real(project / "src", "calc")
    assert (project / "src" / "calc" / "__pycache__").is_dir()
    commit_all(project, "no-op")  # bytecode is ignored: nothing to commit
    status = git(project, "status", "--porcelain", "--ignored")
    assert "__pycache__" in status
    result = scrub(project)
    assert result.clean and result.folders == 1
    assert git(project, "status", "--porcelain", "--ignored") == ""


def test_bytecode_git_tracks_is_kept(project: Path, genstamp: RunGenstamp) -> None:
    """A .pyc committed on purpose (a test fixture) is git's, not scrub's; its untracked
    neighbour is removed."""
    fixtures = project / "tests" / "fixtures"
    fixtures.mkdir()
    (fixtures / "legacy.pyc").write_bytes(b"committed bytecode fixture")
    (fixtures / "__pycache__").mkdir()
    (fixtures / "__pycache__" / "kept.cpython-311.pyc").write_bytes(b"also committed")
    git(project, "add", "-f", "tests/fixtures")
    commit_all(project, "fixtures")
    (fixtures / "stray.pyc").write_bytes(b"left behind")
    for command in (["scrub"], ["stamp"]):
        code, _, err = genstamp("-C", project, *command)
        assert code == 0, err
        assert (fixtures / "legacy.pyc").read_bytes() == b"committed bytecode fixture"
        assert (fixtures / "__pycache__" / "kept.cpython-311.pyc").exists()
        assert not (fixtures / "stray.pyc").exists()
        assert git(project, "status", "--porcelain") == ""
