"""Scrub: all bytecode Python could import goes, nothing else does, no link is followed."""

from __future__ import annotations

import contextlib
import hashlib
import importlib.util
import io
import json
import os
import shutil
import stat
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pygit2
import pytest
from conftest import (
    RunGenstamp,
    commit_all,
    git,
    repository_property,
    run_genstamp,
    run_pytest,
    subprocess_env,
    undeletable,
)
from hypothesis import given
from hypothesis import strategies as st

from genstamp.cli import main as genstamp_main
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


@pytest.mark.parametrize("venvs", [False, True])
def test_the_work_trees_bytecode_under_a_pycache_prefix_goes_too(
    tree: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, venvs: bool
) -> None:
    """With a pycache prefix (``PYTHONPYCACHEPREFIX``), CPython keeps a module's bytecode at
    ``<prefix>/<its folder's absolute path>/``, where a stale one runs as one in
    ``__pycache__`` would: the scrub removes the work tree's bytecode there (of an environment
    in it only when asked), and nothing else, of the work tree or of other folders."""
    prefix = tmp_path / "prefix"
    (tree / "pkg").mkdir()
    (tree / "pkg" / "__init__.py").write_text("")
    (tree / "pkg" / "mod.py").write_text("X = 1\n")
    (tree / "env" / "lib").mkdir(parents=True)
    (tree / "env" / "pyvenv.cfg").write_text("home = /usr\n")
    (tree / "env" / "lib" / "dep.py").write_text("D = 1\n")
    env = subprocess_env(bytecode=True, PYTHONPYCACHEPREFIX=str(prefix))
    code = "import sys; sys.path.insert(0, 'env/lib'); import pkg.mod, dep"
    proc = subprocess.run([sys.executable, "-c", code], cwd=tree, env=env, capture_output=True)
    assert proc.returncode == 0, proc.stderr
    mirror = prefix / str(tree.resolve()).lstrip("/")
    written = sorted(mirror.rglob("*.pyc"))
    assert {p.parent.name for p in written} == {"pkg", "lib"}, written
    assert not list(tree.rglob("*.pyc"))  # none in the work tree itself
    other = prefix / "elsewhere" / f"m.{sys.implementation.cache_tag}.pyc"
    other.parent.mkdir(parents=True)
    other.write_bytes(written[0].read_bytes())  # another folder's: not the work tree's
    notes = mirror / "pkg" / "notes.txt"
    notes.write_text("not bytecode\n")
    monkeypatch.setattr(sys, "pycache_prefix", str(prefix))
    result = scrub(tree, venvs=venvs)
    tag = sys.implementation.cache_tag
    assert result.clean and not (mirror / "pkg" / f"mod.{tag}.pyc").exists()
    assert notes.exists() and other.exists()
    assert (mirror / "env" / "lib").exists() != venvs
    assert {p.name for p in mirror.rglob("*.pyc")} == (set() if venvs else {f"dep.{tag}.pyc"})


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
    (tree / "old.pyo").write_bytes(MAGIC + b"\x00" * 3)
    (tree / "data.pyc").write_text("a data file named like bytecode: someone's\n")
    before = python(tree, "import legacy; print(legacy.VALUE)")
    assert before.returncode == 0 and "from legacy bytecode" in before.stdout, before.stderr
    size = (tree / "legacy.pyc").stat().st_size

    result = scrub(tree)

    assert result.files == 2 and result.folders == 0 and result.bytes == size + 7
    assert files_under(tree) == {"data.pyc"}
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


def test_bytecode_a_racing_scrub_removed_after_the_listing_still_empties_the_folder(
    tree: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two scrubs at once (a hook and `genstamp stamp`): the other removes files this one has
    listed but not yet looked at. Those files no longer keep their folders from being empty."""
    cache = tree / "gone" / "__pycache__"
    cache.mkdir(parents=True)
    for name in ("a.cpython-311.pyc", "b.cpython-311.pyc"):
        (cache / name).write_bytes(b"x")
    (tree / "gone" / "old.pyc").write_bytes(b"x")
    real_scandir = os.scandir

    class RacedListing:
        """The listing as it was; the files it names are gone by the time they are looked at."""

        def __init__(self, path: str) -> None:
            self.entries = list(real_scandir(path))
            for entry in self.entries:
                if entry.name.endswith(".pyc"):
                    os.unlink(entry.path)

        def __enter__(self) -> Iterator[os.DirEntry[str]]:
            return iter(self.entries)

        def __exit__(self, *exc: object) -> None:
            return None

    monkeypatch.setattr(os, "scandir", RacedListing)
    result = scrub(tree)
    monkeypatch.undo()

    assert result.clean
    assert files_under(tree) == set()
    assert result.files == 0  # the other scrub removed them, not this one


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
    (tree / "dangling.pyc").symlink_to(tmp_path / "nowhere.pyc")  # no bytecode: kept
    (outside / "legacy.pyc").write_bytes(MAGIC + b"bytecode elsewhere")
    (tree / "linked.pyc").symlink_to(outside / "legacy.pyc")  # bytecode: the link goes

    result = scrub(tree)

    assert result.clean
    assert not os.path.lexists(tree / "pkg" / "__pycache__")
    assert os.path.islink(tree / "dangling.pyc")
    assert not os.path.lexists(tree / "linked.pyc")
    assert (outside / "keep.cpython-311.pyc").read_bytes() == b"not ours"
    assert (outside / "legacy.pyc").read_bytes() == MAGIC + b"bytecode elsewhere"
    assert result.files == 2 and result.folders == 0
    assert (tree / "pkg" / "mod.py").exists()


def test_what_is_neither_a_file_nor_a_link_is_left_and_so_is_its_folder(tree: Path) -> None:
    """A FIFO named like bytecode, in a __pycache__ and beside a source: the kind scandir reads
    (d_type) is neither a file nor a link, so scrub looks closer and leaves it, and the
    folder with it (issue 16 settles most entries without a stat; this one takes the stat)."""
    cache = tree / "pkg" / "__pycache__"
    cache.mkdir(parents=True)
    (cache / "gone.cpython-311.pyc").write_bytes(b"bytecode")
    os.mkfifo(cache / "m.cpython-311.pyc")
    os.mkfifo(tree / "pkg" / "x.pyc")

    result = scrub(tree)

    assert result.clean and (result.files, result.folders) == (1, 0)
    assert stat.S_ISFIFO(os.lstat(cache / "m.cpython-311.pyc").st_mode)
    assert stat.S_ISFIFO(os.lstat(tree / "pkg" / "x.pyc").st_mode)
    assert not (cache / "gone.cpython-311.pyc").exists()


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


@pytest.mark.parametrize(
    "mark",
    [
        "pyvenv.cfg",  # python -m venv, virtualenv, uv
        "conda-meta/history",  # conda create -p ./env (as pytest tells one)
        "lib/python3.11/os.py",  # an installation's prefix: CPython's own landmark
    ],
)
def test_venv_is_left_alone_unless_asked(tree: Path, mark: str) -> None:
    venv = tree / ".venv"
    site = venv / "lib" / "python3.11" / "site-packages" / "dep"
    (site / "__pycache__").mkdir(parents=True)
    (site / "__pycache__" / "d.cpython-311.pyc").write_bytes(b"x")
    (site / "__init__.py").write_text("")
    (venv / mark).parent.mkdir(parents=True, exist_ok=True)
    (venv / mark).write_text("")
    (tree / "app" / "__pycache__").mkdir(parents=True)
    (tree / "app" / "__pycache__" / "a.cpython-311.pyc").write_bytes(b"x")
    (tree / "app" / "a.py").write_text("")

    result = scrub(tree)
    assert result.clean and (result.files, result.folders) == (1, 1)
    assert (site / "__pycache__" / "d.cpython-311.pyc").exists()

    result = scrub(tree, venvs=True)
    assert result.clean and (result.files, result.folders) == (1, 1)
    assert not (site / "__pycache__").exists()
    assert (venv / mark).exists() and (site / "__init__.py").exists()


def test_a_folder_named_lib_is_not_an_environment(tree: Path) -> None:
    """The control: a ``lib/pythonX`` folder without ``os.py`` is the project's, scrubbed."""
    pkg = tree / "vendor" / "lib" / "python3.11" / "dep"
    (pkg / "__pycache__").mkdir(parents=True)
    (pkg / "__pycache__" / "d.cpython-311.pyc").write_bytes(b"x")
    (pkg / "__init__.py").write_text("")
    result = scrub(tree)
    assert result.clean and not (pkg / "__pycache__").exists()


def _warm_tree(tree: Path) -> None:
    (tree / "a" / "b").mkdir(parents=True)
    (tree / "a" / "b" / "m.py").write_text("")
    (tree / "a" / "b" / "__pycache__").mkdir()
    (tree / "a" / "b" / "__pycache__" / "m.cpython-311.pyc").write_bytes(b"1234")
    (tree / "gone" / "__pycache__").mkdir(parents=True)
    (tree / "gone" / "__pycache__" / "g.cpython-311.pyc").write_bytes(b"12")
    (tree / "x.pyc").write_bytes(b"\x00\x00\r\n123")


def test_dry_run_lists_without_deleting(tree: Path) -> None:
    _warm_tree(tree)
    before = files_under(tree)

    dry = scrub(tree, dry_run=True)

    assert files_under(tree) == before
    assert dry.dry_run and dry.clean
    assert (dry.folders, dry.files, dry.bytes) == (3, 3, 13)
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


def test_a_data_file_named_like_bytecode_is_kept_and_not_judged(project: Path) -> None:
    """An ignored data file ``table.pyc`` (no magic number) older than the generation: scrub
    and a checkout's hook keep it, and the gate takes it for no bytecode (nothing imports it),
    where real legacy bytecode of that age is refused."""
    data = project / "data"
    data.mkdir()
    (project / ".gitignore").write_text("__pycache__/\n*.py[co]\n")
    commit_all(project, "ignore bytecode")
    table = data / "table.pyc"
    table.write_text("a table some tool writes, named like bytecode\n")
    assert run_genstamp(project, "stamp").returncode == 0
    assert table.exists()
    os.utime(table, (1_000_000_000, 1_000_000_000))  # older than the generation
    assert run_pytest(project).returncode == 0
    verdict = run_genstamp(project, "verify")
    assert verdict.returncode == 0, verdict.stdout + verdict.stderr
    # the control: bytecode of that age is refused
    table.write_bytes(MAGIC + b"\x00" * 12)
    os.utime(table, (1_000_000_000, 1_000_000_000))
    verdict = run_genstamp(project, "verify")
    assert verdict.returncode == 1 and "stale-bytecode" in verdict.stdout, verdict.stdout


@pytest.mark.parametrize("named", [False, True], ids=["index", "named"])
def test_check_bytecode_passes_a_tracked_data_file_named_like_bytecode(
    project: Path, named: bool
) -> None:
    """A tracked ``data/table.pyc`` that holds no bytecode (no magic number): check-bytecode
    called it "Python bytecode in git" (J21 08), though scrub keeps it and the gate does not
    judge it. Control: the same name holding bytecode fails, and so does a ``__pycache__``
    file whatever it holds."""
    table = project / "data" / "table.pyc"
    table.parent.mkdir()
    table.write_text("a table some tool writes, named like bytecode\n")
    git(project, "add", "-f", "data/table.pyc")
    args = ["check-bytecode", "data/table.pyc"] if named else ["check-bytecode"]
    proc = run_genstamp(project, *args)
    assert (proc.returncode, proc.stdout) == (0, ""), proc.stdout + proc.stderr
    table.write_bytes(MAGIC + b"\x00" * 12)
    proc = run_genstamp(project, *args)
    assert proc.returncode == 1 and "data/table.pyc is Python bytecode" in proc.stdout
    table.write_text("no bytecode\n")
    cached = project / "src" / "__pycache__" / "x.cpython-311.pyc"
    cached.parent.mkdir()
    cached.write_text("no bytecode either\n")
    git(project, "add", "-f", "src/__pycache__/x.cpython-311.pyc")
    proc = run_genstamp(
        project, "check-bytecode", *(["src/__pycache__/x.cpython-311.pyc"] if named else [])
    )
    assert proc.returncode == 1 and "x.cpython-311.pyc is Python bytecode" in proc.stdout


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
    (fixtures / "stray.pyc").write_bytes(MAGIC + b"left behind")
    for command in (["scrub"], ["stamp"]):
        code, _, err = genstamp("-C", project, *command)
        assert code == 0, err
        assert (fixtures / "legacy.pyc").read_bytes() == b"committed bytecode fixture"
        assert (fixtures / "__pycache__" / "kept.cpython-311.pyc").exists()
        assert not (fixtures / "stray.pyc").exists()
        assert git(project, "status", "--porcelain") == ""


# -- randomised trees, undeletable folders, nested checkouts ---------------------------------------
# Scrub deletes only bytecode: a randomised tree of look-alike names, links out of the tree,
# read-only folders, virtual environments and nested repositories, run through `genstamp scrub`;
# every byte that is not bytecode, inside the tree or outside it, is unchanged afterwards.
#
# The tests above prove each rule on a hand-built tree (one link, one venv, one nested .git, one
# undeletable file); here hypothesis mixes them, and an undeletable *folder* is followed through
# the stamp's record and the gate.


PYC = "m{}.cpython-311.pyc"
MAGIC = importlib.util.MAGIC_NUMBER

# Names that merely contain "pyc" or "__pycache__": data, never bytecode.
DATA_NAMES = [
    "pyc.txt",
    "x.pyc.bak",
    "backup.pyc.1",
    "__pycache__.md",
    "notes.pyc~",
    "pyc",
    "data.pyc.json",
    "m.cpython-311.pyc.txt",
    "__pycache__",  # a plain file with the folder's name
    "README",
]
FOLDER_NAMES = ["pkg", "my__pycache__", "pycache", "a.pyc", "lib.pyo.d", "sub"]
KINDS = [
    "source",
    "data",
    "pycache",
    "pycache-with-notes",
    "legacy-pyc",
    "legacy-pyo",
    "link-to-outside-folder",
    "link-to-outside-file",
    "pycache-link",
    "venv",
    "nested-repo",
    "gitlink-file",
    "read-only-folder",
    "read-only-file",
]

Snapshot = dict[str, tuple[object, ...]]


def snapshot(root: Path, *, times: bool = False) -> Snapshot:
    """Every entry under ``root`` by relative path, links never followed: folders with their
    mode, files with their mode and a hash of their bytes, links with their target."""
    out: Snapshot = {}

    def walk(folder: Path) -> None:
        with os.scandir(folder) as it:
            entries = sorted(it, key=lambda e: e.name)
        for entry in entries:
            full = Path(entry.path)
            rel = full.relative_to(root).as_posix()
            st_ = entry.stat(follow_symlinks=False)
            when = (st_.st_mtime_ns,) if times else ()
            if stat.S_ISLNK(st_.st_mode):
                out[rel] = ("link", os.readlink(full), head(full), *when)
            elif stat.S_ISDIR(st_.st_mode):
                out[rel] = ("dir", stat.S_IMODE(st_.st_mode), *when)
                walk(full)
            else:
                digest = hashlib.sha256(full.read_bytes()).hexdigest()
                out[rel] = ("file", stat.S_IMODE(st_.st_mode), digest, head(full), *when)

    walk(root)
    return out


def head(path: Path) -> bytes:
    """The first four bytes of the file at ``path`` (through a link), b"" when unreadable."""
    try:
        with open(path, "rb") as fh:
            return fh.read(4)
    except OSError:
        return b""


def is_bytecode(rel: str, before: Snapshot) -> bool:
    """The specification, independent of scrub's code: what scrub may delete."""
    parts = rel.split("/")
    if ".git" in parts:
        return False
    for n in range(1, len(parts)):  # inside a virtual environment (below the root)
        if "/".join([*parts[:n], "pyvenv.cfg"]) in before:
            return False
    kind = before[rel][0]
    name = parts[-1]
    if kind == "link" and name == "__pycache__":
        return True
    if kind not in ("file", "link"):
        return False
    if not name.endswith((".pyc", ".pyo")):
        return False
    if len(parts) > 1 and parts[-2] == "__pycache__":
        return True  # Python's own folder: what is named as bytecode there is bytecode
    # elsewhere only a file that begins as bytecode does (a magic number ending in \r\n): a
    # data file named like bytecode is someone's
    found = before[rel][3 if kind == "file" else 2]
    return isinstance(found, bytes) and len(found) == 4 and found[2:] == b"\r\n"


def expected_after(before: Snapshot) -> Snapshot:
    """What a clean scrub leaves: everything but bytecode, and the folders that still hold
    something (a folder emptied by the scrub goes; one that was empty stays)."""
    keep = {rel for rel, entry in before.items() if entry[0] != "dir"}
    keep -= {rel for rel in keep if is_bytecode(rel, before)}
    folders = {rel for rel, entry in before.items() if entry[0] == "dir"}
    empty = {f for f in folders if not any(r.startswith(f + "/") for r in before)}
    held = set()
    for rel in keep | empty:
        parts = rel.split("/")
        held.update("/".join(parts[:n]) for n in range(1, len(parts)))
    return {rel: before[rel] for rel in keep | empty | held}


def build_outside(base: Path) -> Path:
    """Bytecode and data outside the work tree that links from inside point at."""
    out = base / "outside"
    (out / "pkg" / "__pycache__").mkdir(parents=True)
    (out / "pkg" / "__pycache__" / PYC.format("o")).write_bytes(b"outside bytecode")
    (out / "pkg" / "mod.py").write_text("X = 1\n")
    (out / "cache").mkdir()
    (out / "cache" / PYC.format("c")).write_bytes(b"a cache someone links to")
    (out / "legacy.pyc").write_bytes(MAGIC + b"outside legacy bytecode")
    (out / "data.pyc").write_bytes(b"outside data named like bytecode")
    (out / "data.txt").write_text("outside data\n")
    return out


def place(root: Path, outside: Path, folder: str, kind: str, n: int, name: str) -> None:
    """Make one element of the tree; an element that collides with an earlier one is skipped."""
    where = root / folder if folder else root
    try:
        where.mkdir(parents=True, exist_ok=True)
    except (FileExistsError, NotADirectoryError):
        return  # a file already has this folder's name
    if not where.is_dir() or where.is_symlink():
        return

    def fresh(rel: str) -> Path | None:
        path = where / rel
        return None if os.path.lexists(path) else path

    if kind == "source" and (p := fresh(f"mod{n}.py")):
        p.write_text(f"VALUE = {n}\n")
    elif kind == "data" and (p := fresh(name)):
        p.write_bytes(f"data {name} {n}\n".encode())
    elif kind in ("pycache", "pycache-with-notes"):
        cache = where / "__pycache__"
        if os.path.lexists(cache) and (cache.is_symlink() or not cache.is_dir()):
            return
        cache.mkdir(exist_ok=True)
        for i in range(n % 3 + 1):
            (cache / PYC.format(f"{n}_{i}")).write_bytes(bytes([n % 256]) * (i + 1))
        if kind == "pycache-with-notes":
            (cache / "notes.txt").write_text("someone's notes in a cache folder\n")
    elif kind in ("legacy-pyc", "legacy-pyo") and (p := fresh(f"legacy{n}.{kind[-3:]}")):
        # bytecode (a magic number), or a data file named like it: kept
        p.write_bytes((MAGIC if n % 2 == 0 else b"") + b"legacy bytecode")
    elif kind == "link-to-outside-folder":
        for i, target in enumerate((outside / "pkg", outside / "cache")):
            if p := fresh(f"linked{n}_{i}"):
                p.symlink_to(target, target_is_directory=True)
    elif kind == "link-to-outside-file":
        links = ((f"linked{n}.pyc", "legacy.pyc"), (f"data{n}.pyc", "data.pyc"), (name, "data.txt"))
        for link, target in links:
            if p := fresh(link):
                p.symlink_to(outside / target)
    elif kind == "pycache-link" and (p := fresh("__pycache__")):
        p.symlink_to(outside / "cache", target_is_directory=True)
    elif kind == "venv" and (p := fresh(f"venv{n}")):
        site = p / "lib" / "python3.11" / "site-packages" / "dep"
        (site / "__pycache__").mkdir(parents=True)
        (site / "__pycache__" / PYC.format("d")).write_bytes(b"venv bytecode")
        (site / "__init__.py").write_text("")
        (p / "legacy.pyc").write_bytes(b"venv legacy")
        (p / "pyvenv.cfg").write_text("home = /usr/bin\n")
    elif kind == "nested-repo" and (p := fresh(f"nested{n}")):
        pygit2.init_repository(str(p))  # real libgit2: a real .git folder
        (p / ".git" / "objects" / "stray.pyc").write_bytes(b"a file git keeps")
        (p / ".git" / "hooks" / "__pycache__").mkdir(parents=True)
        (p / ".git" / "hooks" / "__pycache__" / PYC.format("h")).write_bytes(b"hook bytecode")
        (p / "__pycache__").mkdir()
        (p / "__pycache__" / PYC.format("n")).write_bytes(b"the nested work tree's bytecode")
        (p / "n.py").write_text("")
    elif kind == "gitlink-file" and (p := fresh(f"submodule{n}")):
        p.mkdir()
        (p / ".git").write_text("gitdir: ../.git/modules/x\n")
        (p / "s.py").write_text("")
    elif kind == "read-only-file":
        for child in where.iterdir():
            if child.is_file() and not child.is_symlink():
                child.chmod(0o444)


def make_read_only(root: Path, folder: str) -> None:
    """Last, so that nothing is placed in a folder after it became read-only."""
    where = root / folder
    if folder and where.is_dir() and not where.is_symlink():
        where.chmod(0o555)


@contextlib.contextmanager
def scratch(base: Path) -> Iterator[Path]:
    folder = Path(tempfile.mkdtemp(dir=base))
    try:
        yield folder
    finally:
        for dirpath, dirnames, _ in os.walk(folder):
            for d in dirnames:
                full = os.path.join(dirpath, d)
                if not os.path.islink(full):
                    os.chmod(full, 0o755)
        shutil.rmtree(folder)


def cli_scrub(root: Path) -> tuple[int, dict[str, object]]:
    """`genstamp -C root scrub --json`, in-process."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        code = genstamp_main(["-C", str(root), "scrub", "--json"])
    return code, json.loads(out.getvalue())


folders_strategy = st.lists(
    st.lists(st.sampled_from(FOLDER_NAMES), min_size=0, max_size=3).map("/".join),
    min_size=1,
    max_size=5,
)
elements_strategy = st.lists(
    st.tuples(
        st.integers(0, 10),  # which folder
        st.sampled_from(KINDS),
        st.integers(0, 99),
        st.sampled_from(DATA_NAMES),
    ),
    min_size=1,
    max_size=18,
)


@repository_property(30)
@given(folders=folders_strategy, elements=elements_strategy)
def test_scrub_deletes_only_bytecode(
    tmp_path: Path, folders: list[str], elements: list[tuple[int, str, int, str]]
) -> None:
    with scratch(tmp_path) as base:
        outside = build_outside(base)
        root = base / "work"
        pygit2.init_repository(str(root))
        (root / ".git" / "stray.pyc").write_bytes(b"in the git dir: never scrubbed")
        for which, kind, n, name in elements:
            place(root, outside, folders[which % len(folders)], kind, n, name)
        for which, kind, _, _ in elements:
            if kind == "read-only-folder":
                make_read_only(root, folders[which % len(folders)])
        before = snapshot(root)
        outside_before = snapshot(outside, times=True)
        base_before = sorted(os.listdir(base))

        code, result = cli_scrub(root)

        after = snapshot(root)
        assert snapshot(outside, times=True) == outside_before  # nothing outside touched
        assert sorted(os.listdir(base)) == base_before
        errors = result["errors"]
        assert isinstance(errors, list)
        assert code == (1 if errors else 0)
        # Every entry that is not bytecode is there, byte for byte, with its mode.
        for rel, entry in before.items():
            if entry[0] != "dir" and not is_bytecode(rel, before):
                assert after.get(rel) == entry, rel
        removed = result["removed"]
        assert isinstance(removed, list)
        for path in removed:
            rel = Path(str(path).rstrip("/")).relative_to(root).as_posix()
            assert before[rel][0] == "dir" or is_bytecode(rel, before), rel
        # Who runs decides, not what came out: a refusal must not pass for a root run.
        if os.geteuid() == 0:  # permissions stop root nothing: all bytecode went
            assert errors == []
            assert after == expected_after(before)
        else:  # a normal user: what could not go sits in a read-only folder
            for error in errors:
                assert isinstance(error, dict)
                folder = Path(str(error["path"]))
                assert any(not os.access(p, os.W_OK) for p in (folder, folder.parent))


def test_the_specification_sees_what_the_property_relies_on(tmp_path: Path) -> None:
    """The property test's model classifies the look-alikes as data and the real thing as
    bytecode, so a scrub that deleted a look-alike would fail it."""
    with scratch(tmp_path) as base:
        outside = build_outside(base)
        root = base / "work"
        root.mkdir()
        for n, kind in enumerate(KINDS):
            for name in DATA_NAMES:
                place(root, outside, f"f{n}", kind, n, name)
        before = snapshot(root)
        bytecode = {rel for rel in before if is_bytecode(rel, before)}
        names = {rel.rsplit("/", 1)[-1] for rel in bytecode}
        assert not names & (set(DATA_NAMES) - {"__pycache__"})
        assert all(before[r][0] == "link" for r in bytecode if r.endswith("/__pycache__"))
        assert "f2/__pycache__/m2_0.cpython-311.pyc" in bytecode
        assert "f8/__pycache__" in bytecode  # the link, not what it points to
        assert "f4/legacy4.pyc" in bytecode  # a magic number
        assert "f5/legacy5.pyo" not in bytecode  # a data file named like bytecode
        assert "f7/linked7.pyc" in bytecode and "f7/data7.pyc" not in bytecode
        assert not any(".git/" in rel or "venv" in rel for rel in bytecode)
        expected = expected_after(before)
        assert "f2" not in expected  # emptied by the scrub: goes
        assert "f3/__pycache__/notes.txt" in expected and "f3/__pycache__" in expected


# -- a folder scrub cannot delete ---------------------------------------------------------------


def test_a_folder_scrub_cannot_delete_is_reported_and_the_generation_is_not_clean(
    project: Path, genstamp: RunGenstamp
) -> None:
    """The parent of a __pycache__ is undeletable-into: the cache is emptied but stays."""
    locked = project / "src" / "calc"
    cache = locked / "__pycache__"
    cache.mkdir()
    (cache / "__init__.cpython-311.pyc").write_bytes(b"bytecode")
    free = project / "src" / "other" / "__pycache__"
    free.mkdir(parents=True)
    (free / PYC.format("f")).write_bytes(b"bytecode")
    with undeletable(locked):
        proc = run_genstamp(project, "scrub")
        assert proc.returncode == 1
        assert f"genstamp: cannot remove {cache}: " in proc.stderr
        assert "Traceback" not in proc.stderr

        proc = run_genstamp(project, "stamp", "--json")
        assert proc.returncode == 1
        data = json.loads(proc.stdout)
        assert data["clean"] is False
        assert [e["path"] for e in data["generation"]["scrub"]["errors"]] == [str(cache)]
        assert f"genstamp: cannot remove {cache}: " in proc.stderr
        assert "not clean" in proc.stderr

        # the record the gate reads carries the error too
        stamp = json.loads((project / ".git" / "genstamp" / "generation.json").read_text())
        assert stamp["id"] == data["generation"]["id"]
        assert [e["path"] for e in stamp["scrub"]["errors"]] == [str(cache)]
        assert stamp["scrub"]["errors"][0]["reason"]

        # a post-checkout hook that begins a generation (content changed) with a full scrub
        # (a file checkout: flag 0) reports it but never fails the checkout
        (project / "changed.py").write_text("X = 1\n")
        head = git(project, "rev-parse", "HEAD")
        proc = run_genstamp(project, "hook", "post-checkout", head, head, "0")
        assert proc.returncode == 0
        assert f"genstamp: cannot remove {cache}: " in proc.stderr
    assert cache.is_dir() and not any(cache.iterdir())  # emptied, kept
    assert not free.exists() and (locked / "__init__.py").is_file()


def test_bytecode_scrub_could_not_delete_is_refused_by_the_gate(project: Path) -> None:
    """A pyc in an undeletable cache survives the stamp; a green run later, the gate names it."""
    cache = project / "src" / "calc" / "__pycache__"
    cache.mkdir()
    pyc = cache / "__init__.cpython-311.pyc"
    pyc.write_bytes(b"stale bytecode from before the generation")
    with undeletable(cache):
        proc = run_genstamp(project, "stamp")
        assert proc.returncode == 1 and str(pyc) in proc.stderr
        tested = run_pytest(project)
        assert tested.returncode == 0, tested.stdout
        proc = run_genstamp(project, "verify")
        assert proc.returncode == 1, proc.stdout + proc.stderr
        assert proc.stdout.startswith("stale-bytecode: ")
        assert "src/calc/__pycache__/__init__.cpython-311.pyc" in proc.stdout
    assert pyc.exists()


def test_a_real_nested_checkout_keeps_its_git_dir_and_status(project: Path, tmp_path: Path) -> None:
    """A real clone inside the work tree, with bytecode both in its work tree and in its .git:
    scrub empties the former, leaves the latter, and the clone's git status is unchanged."""
    nested = project / "vendor" / "lib"
    git(tmp_path, "clone", "-q", str(project), str(nested))
    (nested / "src" / "calc" / "__pycache__").mkdir()
    (nested / "src" / "calc" / "__pycache__" / "__init__.cpython-311.pyc").write_bytes(b"x")
    (nested / ".git" / "hooks" / "__pycache__").mkdir(parents=True)
    (nested / ".git" / "hooks" / "__pycache__" / PYC.format("h")).write_bytes(b"x")
    (nested / "notes.pyc.txt").write_text("keep\n")
    status = git(nested, "status", "--porcelain")
    inner = snapshot(nested / ".git")
    proc = run_genstamp(project, "scrub")
    assert proc.returncode == 0, proc.stderr
    assert not (nested / "src" / "calc" / "__pycache__").exists()
    assert snapshot(nested / ".git") == inner
    assert (nested / "notes.pyc.txt").read_text() == "keep\n"
    assert git(nested, "status", "--porcelain") == status
