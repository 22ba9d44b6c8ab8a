"""The co-process: both sides of its protocol, a real child on a real repository.

The child is started by module name (``python -m genstamp.coprocess FOLDER``) and must import
the genstamp the plugin came from without putting site-packages (or an editable project's
source folder) before the standard library: proven in real virtual environments, with genstamp
installed as a copy in site-packages and as an editable install.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import commit_all, git, git_tree, init_repo, subprocess_env
from test_audit import make_venv

import genstamp
from genstamp import coprocess, evidence
from genstamp.coprocess import Asked, CoProcess
from genstamp.repo import open_checkout

HERE = str(Path(genstamp.__file__).resolve().parent.parent)  # the folder holding genstamp


@pytest.fixture(scope="module")
def committed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    repo = init_repo(tmp_path_factory.mktemp("coprocess") / "repo")
    (repo / "sub").mkdir()
    (repo / "sub" / "a.txt").write_text("a\n")
    commit_all(repo, "a")
    return repo


def test_command_is_the_module_by_name() -> None:
    argv, cwd, env = coprocess.command(Path("/some/where"))
    assert argv == [sys.executable, "-m", "genstamp.coprocess", "/some/where"]
    assert os.path.realpath(cwd) == HERE
    # This suite runs genstamp from its source folder, on the path through an editable
    # install's .pth: the child finds it there, after the standard library.
    assert env.get("PYTHONSAFEPATH") == "1"


def test_finds_itself(tmp_path: Path) -> None:
    """Safe path only when the child's own path leads to this genstamp before any other."""
    mine, other = tmp_path / "mine", tmp_path / "other"
    for folder in (mine, other):
        (folder / "genstamp").mkdir(parents=True)
        (folder / "genstamp" / "__init__.py").write_text("")
    empty = str(tmp_path / "empty")
    assert coprocess._finds_itself(str(mine), (empty, str(mine)))
    assert not coprocess._finds_itself(str(mine), (empty,))  # -m must put it first
    assert not coprocess._finds_itself(str(mine), (str(other), str(mine)))  # another first


def test_protocol_with_a_real_child(committed: Path) -> None:
    """Checkout, tree at the start, then on ``end`` the tree at the end and HEAD: git's own."""
    child = CoProcess(committed / "sub")
    try:
        assert child.read() == {
            "workdir": str(open_checkout(committed).workdir),
            "gitdir": str(open_checkout(committed).gitdir),
        }
        # a small tree: never "early", however long its walk (its tree may be the one kept
        # at the start of an earlier child's run: ``test_a_small_trees_start_is_kept``)
        answer = child.read()
        assert answer["tree"] == git_tree(committed)
        assert set(answer) <= {"tree", "kept"}
        child.ask_end()
        head = git(committed, "rev-parse", "HEAD")
        assert child.tree_end() == (git_tree(committed), head, False)
    finally:
        child.close()
    assert child.read() == {"error": "genstamp's co-process is gone"}


def start_answer(repo: Path) -> dict[str, object]:
    """A co-process's answer for the tree at the start, then a run's end (the tree at the end
    must be git's too)."""
    child = CoProcess(repo)
    try:
        assert "workdir" in child.read()
        answer = child.read()
        child.ask_end()
        assert child.tree_end().tree == git_tree(repo)
        return answer
    finally:
        child.close()


def test_a_small_trees_start_is_kept(tmp_path: Path) -> None:
    """The tree at the start of a run is kept in the git dir, its inputs stamped before the
    walk; the next co-process says it before importing pygit2 while git's list of differing
    paths and every input confirm it, run after run. A change of the work tree (one that keeps
    size and mtime too), of the index or of the config is walked again. Each answer is git's
    tree."""
    repo = init_repo(tmp_path / "repo")
    (repo / ".git" / "genstamp").mkdir()  # a repository genstamp keeps state in
    (repo / "a.txt").write_text("a\n")
    (repo / "new.txt").write_text("untracked, not ignored\n")
    commit_all(repo, "a")
    written = time.monotonic()
    (repo / "new.txt").write_text("untracked, not ignored\n")
    assert start_answer(repo) == {"tree": git_tree(repo)}  # walked: too new to be kept
    within = time.monotonic() - written < 1.9  # (on a slow machine the window may be past)
    time.sleep(2.1)  # what was written within the racy window cannot vouch for itself
    answer = start_answer(repo)
    assert answer == {"tree": git_tree(repo)} or (not within and answer.get("kept")), answer
    assert (repo / ".git" / "genstamp" / "start-tree.json").is_file()
    assert start_answer(repo) == {"tree": git_tree(repo), "kept": True}
    # that run walked at its end, writing the tree's object again (libgit2 touches a loose
    # object it would write, as git does): its name is its content, the start still holds
    assert start_answer(repo) == {"tree": git_tree(repo), "kept": True}
    # an edit that keeps size and mtime: its ctime moved, git lists it
    path = repo / "a.txt"
    before = path.stat()
    path.write_text("b\n")
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert start_answer(repo) == {"tree": git_tree(repo)}
    path.write_text("a\n")
    time.sleep(2.1)
    assert start_answer(repo) == {"tree": git_tree(repo)}  # kept again
    assert start_answer(repo) == {"tree": git_tree(repo), "kept": True}
    # the settings that shape the tree: the config (a clean filter, autocrlf) and the index
    git(repo, "config", "core.autocrlf", "true")
    assert start_answer(repo) == {"tree": git_tree(repo)}
    git(repo, "add", "new.txt")
    assert start_answer(repo) == {"tree": git_tree(repo)}


def test_a_repository_genstamp_keeps_nothing_in_is_left_as_it_was(tmp_path: Path) -> None:
    """pytest started in a repository that holds the project it tests (`~`, a repository of
    dotfiles) starts its co-process there before it knows which checkout it tests: that
    repository's git dir gets no folder of genstamp's, run after run. The control: one that
    has it keeps the start."""
    repo = init_repo(tmp_path / "repo")
    (repo / "a.txt").write_text("a\n")
    commit_all(repo, "a")
    time.sleep(2.1)  # past the racy window: the start would be kept
    for _ in range(2):
        assert start_answer(repo) == {"tree": git_tree(repo)}
    assert not (repo / ".git" / "genstamp").exists()
    (repo / ".git" / "genstamp").mkdir()
    start_answer(repo)
    assert start_answer(repo) == {"tree": git_tree(repo), "kept": True}


@pytest.mark.parametrize(("written", "moved"), [(["out.xml"], False), (["out.xml", "x"], True)])
def test_the_runs_own_report_does_not_move_the_tree(
    committed: Path, written: list[str], moved: bool
) -> None:
    """The report named with ``end`` is left out of both trees when the child says whether the
    tree moved: only the report written there is no move (the gate's ``without``)."""
    child = CoProcess(committed)
    try:
        child.read()
        start = child.read()["tree"]
        for name in written:
            (committed / name).write_text("written during the run\n")
        child.ask_end("out.xml")
        end = child.tree_end()
        assert end.tree != start and end.tree == git_tree(committed)
        assert end.moved is moved
    finally:
        child.close()


def test_which_loaded_files_git_ignores(tmp_path: Path) -> None:
    """After the tree at the end: of the paths asked, those the tree leaves out because git
    ignores them; not a tracked file an ignore rule matches, not an environment's file, not an
    untracked file the tree holds. Then the child ends."""
    repo = init_repo(tmp_path / "repo")
    (repo / ".gitignore").write_text("lib/\n.venv/\nforced.py\n")
    (repo / "forced.py").write_text("x = 1\n")
    git(repo, "add", "-f", "forced.py")
    commit_all(repo, "tracked though ignored")
    for rel in ("lib/helper.py", ".venv/lib/x.py", "new.py"):
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        (repo / rel).write_text("y = 2\n")
    (repo / ".venv" / "pyvenv.cfg").write_text("home = /usr/bin\n")
    child = CoProcess(repo)
    try:
        assert "workdir" in child.read() and "tree" in child.read()
        child.ask_end()
        child.tree_end()
        asked = ["forced.py", "lib/helper.py", ".venv/lib/x.py", "new.py", "lib/gone.py"]
        child.ask_misplaced(Asked(asked))
        assert child.misplaced_answer() == (["lib/gone.py", "lib/helper.py"], {}, (), {}, {}, {})
        assert child.proc is not None and child.proc.wait(timeout=30) == 0
    finally:
        child.close()


def test_what_git_ignores_is_asked_before_the_tree_at_the_end_is_read(tmp_path: Path) -> None:
    """The plugin asks which loaded files git ignores as soon as its audit is done, before it
    reads the tree at the end: the child answers both, in order, the same as asked one after
    the other."""
    repo = init_repo(tmp_path / "repo")
    (repo / ".gitignore").write_text("lib/\n")
    commit_all(repo, "ignore lib")
    (repo / "lib").mkdir()
    (repo / "lib" / "helper.py").write_text("y = 2\n")
    child = CoProcess(repo)
    try:
        assert "workdir" in child.read() and "tree" in child.read()
        child.ask_end()
        child.ask_misplaced(Asked(["lib/helper.py", "new.py"]))
        assert len(child.tree_end().tree) == 40
        assert child.misplaced_answer() == (["lib/helper.py"], {}, (), {}, {}, {})
        assert child.proc is not None and child.proc.wait(timeout=30) == 0
    finally:
        child.close()


def test_outside_a_repository_the_child_says_why(tmp_path: Path) -> None:
    child = CoProcess(tmp_path)
    try:
        answer = child.read()
        assert set(answer) == {"error"} and answer["error"]
        assert "error" in child.read()  # and it has ended: no more answers
    finally:
        child.close()


def test_usage(tmp_path: Path) -> None:
    argv, cwd, env = coprocess.command(tmp_path)
    proc = subprocess.run(argv[:-1], cwd=cwd, env=env, capture_output=True, text=True)
    assert proc.returncode == 2
    assert json.loads(proc.stdout) == {"error": "usage: python -m genstamp.coprocess FOLDER"}


# -- installed genstamp: a copy in site-packages, or an editable install ----------------------

RECORD = """
import os as _os, sys as _sys

if _os.environ.get("GENSTAMP_TEST_RECORD"):
    with open(_os.environ["GENSTAMP_TEST_RECORD"], "a") as _fh:
        _fh.write(f"{_sys.argv[0] == '-m'} {__file__}\\n")
"""
SHADOW = 'raise ImportError("a module beside genstamp shadowed the standard library")\n'


def install(how: str, site_dir: Path, tmp_path: Path) -> Path:
    """This genstamp installed ``how`` for the venv whose site-packages is ``site_dir``: a
    copy whose ``__init__`` records who imports it, found through its own metadata (pytest
    loads it through its pytest11 entry point). Beside it a ``json.py`` that would shadow the
    standard library's: the co-process imports json. Returns the installed package."""
    where = site_dir if how == "site-packages" else tmp_path / "editable-src"
    package = where / "genstamp"
    shutil.copytree(
        Path(genstamp.__file__).parent, package, ignore=shutil.ignore_patterns("__pycache__")
    )
    init = package / "__init__.py"
    init.write_text(init.read_text() + RECORD)
    (where / "json.py").write_text(SHADOW)
    meta = site_dir / f"genstamp-{genstamp.__version__}.dist-info"
    meta.mkdir()
    (meta / "METADATA").write_text(
        f"Metadata-Version: 2.1\nName: genstamp\nVersion: {genstamp.__version__}\n"
    )
    (meta / "entry_points.txt").write_text("[pytest11]\ngenstamp = genstamp.pytest_plugin\n")
    if how == "editable":  # what pip install -e leaves behind
        (site_dir / f"__editable__.genstamp-{genstamp.__version__}.pth").write_text(f"{where}\n")
    return package


@pytest.mark.e2e
@pytest.mark.parametrize("how", ["site-packages", "editable"])
def test_the_child_imports_this_genstamp_after_the_stdlib(tmp_path: Path, how: str) -> None:
    python, site_dir = make_venv(tmp_path / "venv")
    package = install(how, site_dir, tmp_path)
    repo = init_repo(tmp_path / "repo")
    (repo / "test_one.py").write_text("def test_one():\n    pass\n")
    (repo / ".gitignore").write_text("__pycache__/\n")
    commit_all(repo, "one")
    record = tmp_path / "record.txt"
    proc = subprocess.run(
        [str(python), "-m", "pytest", "-q"],
        cwd=repo,
        capture_output=True,
        text=True,
        env=subprocess_env(GENSTAMP_TEST_RECORD=str(record)),
        timeout=300,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "genstamp:" not in proc.stdout + proc.stderr  # the co-process answered
    init = str(package / "__init__.py")
    # pytest (the plugin) and the co-process (started with -m) both imported the copy
    assert sorted(record.read_text().splitlines()) == [f"False {init}", f"True {init}"]
    props = evidence.read_report(evidence.default_path(open_checkout(repo).state)).properties
    assert props[evidence.P_TREE_END] == git_tree(repo)
    # The control: started by module name from that folder, as Python would put it (first),
    # the shadow is imported instead of the standard library's json.
    env = subprocess_env()
    env.pop("PYTHONSAFEPATH", None)
    bare = subprocess.run(
        [str(python), "-m", "genstamp.coprocess", str(repo)],
        cwd=package.parent,
        env=env,
        input="",
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert bare.returncode != 0 and "shadowed the standard library" in bare.stderr, bare.stderr


def test_a_genstamp_on_no_path_of_its_own(committed: Path, tmp_path: Path) -> None:
    """A genstamp the child would not find by itself (put on the path by the parent alone):
    ``-m`` from its folder puts it first, even when the user set PYTHONSAFEPATH, and not the
    genstamp this suite's interpreter finds later on its own path."""
    plain = tmp_path / "plain"
    package = plain / "genstamp"
    shutil.copytree(
        Path(genstamp.__file__).parent, package, ignore=shutil.ignore_patterns("__pycache__")
    )
    (package / "__init__.py").write_text((package / "__init__.py").read_text() + RECORD)
    record = tmp_path / "record.txt"
    script = (
        f"import sys; sys.path.insert(0, {str(plain)!r})\n"
        "from genstamp.coprocess import CoProcess\n"
        f"child = CoProcess({str(committed)!r})\n"
        "print(child.read()); print(child.read()); child.close()\n"
    )
    env = subprocess_env(GENSTAMP_TEST_RECORD=str(record), PYTHONSAFEPATH="1")
    proc = subprocess.run(
        [sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 0, proc.stderr
    assert f"{{'tree': '{git_tree(committed)}'}}" in proc.stdout, proc.stdout
    init = str(package / "__init__.py")
    assert sorted(record.read_text().splitlines()) == [f"False {init}", f"True {init}"]


# -- the tests may begin while the co-process takes the tree at the start ----------------------


def bulk(repo: Path, files: int = coprocess.EARLY_FILES) -> None:
    """``files`` small files under bulk/ (committed with the next commit): a large tree."""
    (repo / "bulk").mkdir()
    for i in range(files):
        (repo / "bulk" / f"f{i}.txt").write_text(f"{i}\n")


def slow_walk(repo: Path, flag: Path, files: int = coprocess.EARLY_FILES) -> Path:
    """``repo`` with ``files`` small files, a committed data.txt and an untracked file that
    goes through a clean filter taking a second: the walk at the start lasts that long, and
    ``flag`` exists while the filter runs. With the file ``began`` beside ``flag`` removed,
    the filter then holds until it exists again (or twenty seconds passed)."""
    bulk(repo, files)
    (repo / "data.txt").write_text("before\n")
    (repo / ".gitattributes").write_text("slow.txt filter=slow\n")
    commit_all(repo, "data")
    began = flag.with_name("began")
    began.touch()
    holds = f"i=0; while [ ! -e '{began}' ] && [ $i -lt 400 ]; do sleep 0.05; i=$((i+1)); done"
    clean = f"touch '{flag}'; sleep 1; {holds}; touch '{began}'; cat; rm -f '{flag}'"
    git(repo, "config", "filter.slow.clean", clean)
    (repo / "slow.txt").write_text("through a slow clean filter\n")
    return repo


@pytest.mark.parametrize("write", [True, False])
def test_a_change_while_the_begun_tests_wait_for_the_walk_is_a_race(
    tmp_path: Path, write: bool
) -> None:
    """Told that the tests began, the child answers that the tree at their start is unknown
    when something that shapes the tree changed while it walked (the walk may have read the
    new bytes); with nothing changed, the walk is the tree they began on."""
    flag = tmp_path / "filtering"
    repo = slow_walk(init_repo(tmp_path / "repo"), flag)
    before = git_tree(repo)
    flag.with_name("began").unlink()  # the walk lasts until the test has begun and written
    child = CoProcess(repo)
    try:
        assert "workdir" in child.read()
        assert child.read() == {"early": True}  # a large, watched tree: tests may begin
        assert child.begin()
        if write:
            (repo / "data.txt").write_text("written by a test\n")
        flag.with_name("began").touch()
        answer = child.read()
        assert not flag.exists()
        if write:
            assert answer == {"tree": answer.get("tree"), "raced": "data.txt"}
        else:
            assert answer == {"tree": before}
    finally:
        child.close()


def test_a_change_before_the_tests_begin_is_the_ends_to_see(tmp_path: Path) -> None:
    """Not told that the tests began, the child takes no change during its walk for a race:
    the tests begin after it, and the tree at the end is walked anew (the watch saw the
    change)."""
    flag = tmp_path / "filtering"
    repo = slow_walk(init_repo(tmp_path / "repo"), flag)
    child = CoProcess(repo)
    try:
        child.read()
        assert child.read() == {"early": True}
        (repo / "data.txt").write_text("written before the tests\n")
        answer = child.read()
        assert set(answer) == {"tree"}
        child.ask_end()
        assert child.tree_end().tree == git_tree(repo)
    finally:
        child.close()


def test_the_slow_walk_of_a_small_tree_is_awaited(tmp_path: Path) -> None:
    """Fewer files than ``EARLY_FILES``: the tests wait for the tree, however long the walk
    (a test that writes into a small tree is then told as a move of the tree)."""
    repo = slow_walk(init_repo(tmp_path / "repo"), tmp_path / "filtering", files=10)
    child = CoProcess(repo)
    try:
        child.read()
        assert child.read() == {"tree": git_tree(repo)}
    finally:
        child.close()


# What the co-process imports before its first answer the test process may wait for: pygit2
# and genstamp's own modules, not the standard library's heavier modules that only a rare path
# (a clean filter's git, a debug line, a temporary file, the test process's side) uses.
SPARED = ("subprocess", "tempfile", "logging", "random")


def test_the_co_process_imports_nothing_it_rarely_needs() -> None:
    probe = (
        "import sys, genstamp.coprocess, genstamp.identity, genstamp.watch, genstamp.placed; "
        "print(' '.join(sorted(sys.modules)))"
    )
    proc = subprocess.run([sys.executable, "-c", probe], env=subprocess_env(), capture_output=True)
    assert proc.returncode == 0, proc.stderr
    loaded = set(proc.stdout.decode().split())
    assert "pygit2" in loaded and "genstamp.watch" in loaded
    assert not loaded & set(SPARED), sorted(loaded & set(SPARED))


def test_a_checkout_that_may_have_submodules_is_told_by_its_index(tmp_path: Path) -> None:
    """The co-process asks libgit2 about submodules (its first look at a large tree costs
    ~10 ms) only where the checkout may have one: a .gitmodules, or a gitlink in the index
    (one added without .gitmodules too)."""
    from genstamp import submodules
    from genstamp.repo import open_checkout

    repo = init_repo(tmp_path / "repo")
    assert not submodules.may_have(open_checkout(repo))
    inner = init_repo(tmp_path / "inner")
    commit_all(inner, "inner")
    head = git(inner, "rev-parse", "HEAD")
    git(repo, "update-index", "--add", "--cacheinfo", f"160000,{head},vendor")
    assert submodules.may_have(open_checkout(repo))  # a gitlink, no .gitmodules
    git(repo, "rm", "-q", "--cached", "vendor")
    assert not submodules.may_have(open_checkout(repo))
    (repo / ".gitmodules").write_text('[submodule "x"]\n\tpath = x\n\turl = ../x\n')
    assert submodules.may_have(open_checkout(repo))
