"""Shared fixtures: real git repositories in tmp_path, isolated from the developer's machine."""

from __future__ import annotations

import contextlib
import io
import os
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pygit2
import pytest

from genstamp import gitenv
from genstamp.cli import main as genstamp_main

IDENTITY = gitenv.IDENTITY


@pytest.fixture(scope="session", autouse=True)
def isolated_git(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """No global or system git config, no templates, a throwaway HOME, a fixed identity."""
    home = tmp_path_factory.mktemp("home")
    with gitenv.isolated_git(home):
        os.environ["PRE_COMMIT_HOME"] = str(tmp_path_factory.getbasetemp() / "pre-commit-cache")
        # The genstamp plugin running this very suite points bytecode at its own cache;
        # processes the tests start must not inherit that.
        os.environ.pop("PYTHONPYCACHEPREFIX", None)
        yield home


@pytest.fixture(scope="session", autouse=True)
def compiled_genstamp(request: pytest.FixtureRequest) -> None:
    """Bytecode of the genstamp under test, written once, when it is this checkout's source.

    The hundreds of processes the tests start (pytest with genstamp's plugin and co-process,
    ``python -m genstamp``) import genstamp from ``src/``; with PYTHONDONTWRITEBYTECODE=1 (this
    machine and CI) each of them would compile its 23,000 lines again. Compiled here from the
    source as it is now (``force``: each session's bytecode is newer than the generation the
    run is bound to, so genstamp's own gate never sees it older than the stamp), in the
    ``__pycache__`` git ignores; Python reads it only while its header matches the source.
    """
    import compileall

    import genstamp as under_test

    package = Path(under_test.__file__).resolve().parent
    if package.is_relative_to(request.config.rootpath.resolve()):
        compileall.compile_dir(package, force=True, quiet=2)


def git(
    cwd: Path,
    *args: str,
    check: bool = True,
    input: str | None = None,
    env: dict[str, str] | None = None,
) -> str:
    """Run real git (in ``env``, else this process's environment); its output, stripped of the
    final newline."""
    proc = subprocess.run(
        ["git", "-c", "commit.gpgsign=false", "-c", "tag.gpgsign=false", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        input=input,
        env=env,
    )
    if check and proc.returncode != 0:
        raise AssertionError(f"git {' '.join(args)} failed ({proc.returncode}):\n{proc.stderr}")
    return proc.stdout.rstrip("\n")


def init_repo(path: Path) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    git(path, "-c", "init.defaultBranch=main", "init", "-q")
    # what `git config commit.gpgsign false` writes in a new repository, without its process
    config = path / ".git" / "config"
    if "[commit]" not in config.read_text():
        with open(config, "a") as out:
            out.write("[commit]\n\tgpgsign = false\n")
    else:  # an existing repository initialised again: git's own edit of its section
        git(path, "config", "commit.gpgsign", "false")
    return path


def committed(path: Path, files: dict[str, str], message: str = "files") -> Path:
    """A new repository at ``path`` whose first commit holds ``files`` (path -> text)."""
    init_repo(path)
    for rel, text in files.items():
        (path / rel).parent.mkdir(parents=True, exist_ok=True)
        (path / rel).write_text(text)
    commit_all(path, message)
    return path


def commit_all(path: Path, message: str = "commit") -> str:
    git(path, "add", "-A")
    git(path, "commit", "-q", "--allow-empty", "-m", message)
    try:  # `git rev-parse HEAD`, without its process
        return str(pygit2.Repository(str(path)).head.target)
    except pygit2.GitError:  # a repository libgit2 cannot open (sha256 objects): git's answer
        return git(path, "rev-parse", "HEAD")


def exclude(path: Path, *patterns: str) -> None:
    """``patterns`` as the repository's own ignore rules (``info/exclude`` in its git dir: a
    submodule's lives in the superproject's)."""
    info = Path(git(path, "rev-parse", "--absolute-git-dir")) / "info"
    info.mkdir(exist_ok=True)
    (info / "exclude").write_text("".join(f"{p}\n" for p in patterns))


def git_tree(path: Path) -> str:
    """git's own answer: `git add -A && git write-tree` on a scratch copy of the index."""
    gitdir = Path(git(path, "rev-parse", "--absolute-git-dir"))
    real = gitdir / "index"
    scratch = gitdir / "oracle-index"
    if real.exists():
        shutil.copy2(real, scratch)  # keep the mtime: git's racy-entry check depends on it
    elif scratch.exists():
        scratch.unlink()
    env = dict(os.environ, GIT_INDEX_FILE=str(scratch))
    # Where `submodule.<name>.ignore = all` hides a submodule's moved HEAD from `git add`,
    # genstamp records the commit checked out all the same (it is what the tests ran): git
    # is asked with the setting off.
    pattern = r"^submodule\..*\.ignore$"
    # (`git config --file .gitmodules` of a file that is not there lists nothing: not asked)
    modules = [["--file", ".gitmodules"]] if (path / ".gitmodules").exists() else []
    ignores = [
        line.split()[0]
        for where in [*modules, []]
        for line in git(path, "config", *where, "--get-regexp", pattern, check=False).splitlines()
    ]
    overrides = [arg for name in ignores for arg in ("-c", f"{name}=none")]
    subprocess.run(
        ["git", *overrides, "add", "-A"], cwd=path, env=env, check=True, capture_output=True
    )
    out = subprocess.run(
        ["git", "write-tree"], cwd=path, env=env, check=True, capture_output=True, text=True
    )
    scratch.unlink()
    return out.stdout.strip()


def same_as_git(path: Path, mine: str, theirs: str | None = None) -> str:
    """``mine`` (genstamp's identity of ``path``) must be git's own (``theirs``, when asked
    before: ``git_tree`` of the same tree); returns it."""
    if theirs is None:
        theirs = git_tree(path)
    if mine != theirs:
        detail = git(path, "diff-tree", "-r", "--raw", theirs, mine, check=False)
        raise AssertionError(f"genstamp {mine} != git {theirs}; git->genstamp:\n{detail}")
    return mine


def repository_property(examples: int, **more: Any) -> Callable[[Callable[..., None]], Any]:
    """hypothesis settings for a property test over real repositories: ``examples`` examples,
    no deadline (git is slow beside hypothesis's budget), a fixture kept across examples."""
    from hypothesis import HealthCheck, settings

    return settings(
        max_examples=examples,
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
        **more,
    )


def replay(
    root: Path, ops: list[Any], apply: Callable[[Path, Any], None], check: Callable[[Path], str]
) -> None:
    """Apply ``ops`` one by one, checking ``root`` after each (the property tests' loop)."""
    for step, op in enumerate(ops):
        apply(root, op)
        try:
            check(root)
        except AssertionError as exc:
            raise AssertionError(f"after step {step} {op} of {ops}: {exc}") from None


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """An empty repository (unborn HEAD) whose work tree is the returned path."""
    return init_repo(tmp_path / "repo")


def skip_if_writable(folder: Path, why: str) -> None:
    """Skip the test when a file can still be created in ``folder`` (root, say)."""
    probe = folder / ".probe"
    try:
        probe.write_text("x")
    except OSError:
        return
    probe.unlink()
    pytest.skip(f"{folder} is still writable: {why}")


@contextlib.contextmanager
def undeletable(folder: Path) -> Iterator[None]:
    """Entries of ``folder`` cannot be removed: chmod for a normal user; for root, whom
    permissions do not stop, the immutable attribute. Skips when neither works here."""
    if os.geteuid() == 0:
        chattr = shutil.which("chattr")
        if chattr is None:
            pytest.skip("running as root without chattr: cannot make a folder undeletable")
        made = subprocess.run([chattr, "+i", str(folder)], capture_output=True, text=True)
        if made.returncode != 0:
            pytest.skip(f"running as root and chattr +i fails here: {made.stderr.strip()}")

        def undo() -> None:
            subprocess.run([chattr, "-i", str(folder)], check=True)
    else:
        folder.chmod(0o555)

        def undo() -> None:
            folder.chmod(0o755)

    try:
        skip_if_writable(folder, "permissions are not enforced here")
        yield
    finally:
        undo()


CALC_TEST = "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n"


def write_files(root: Path, files: dict[str, str]) -> Path:
    """Each of ``files`` (work-tree-relative path: text) written below ``root``."""
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return root


def write_calc(
    repo: Path, *, tests: str = CALC_TEST, gitignore: str = "__pycache__/\n*.py[co]\n"
) -> Path:
    """A small Python project in ``repo`` (not committed): the package calc under src/ and
    ``tests`` as tests/test_calc.py."""
    (repo / "src" / "calc").mkdir(parents=True)
    (repo / "src" / "calc" / "__init__.py").write_text("def add(a, b):\n    return a + b\n")
    (repo / "tests").mkdir()
    (repo / "tests" / "test_calc.py").write_text(tests)
    (repo / "pyproject.toml").write_text(
        '[tool.pytest.ini_options]\ntestpaths = ["tests"]\npythonpath = ["src"]\n'
    )
    (repo / ".gitignore").write_text(gitignore)
    return repo


@pytest.fixture
def project(repo: Path) -> Path:
    """A small committed Python project: a package under src/ and two tests for it."""
    write_calc(repo, tests=CALC_TEST + "\n\ndef test_other():\n    assert add(0, 0) == 0\n")
    commit_all(repo, "calc")
    return repo


RunGenstamp = Callable[..., "tuple[int, str, str]"]


@pytest.fixture
def genstamp(capsys: pytest.CaptureFixture[str]) -> RunGenstamp:
    """Call genstamp's main in-process: (exit code, stdout, stderr)."""

    def run(*args: str | os.PathLike[str]) -> tuple[int, str, str]:
        capsys.readouterr()
        code = genstamp_main([os.fspath(a) for a in args])
        out, err = capsys.readouterr()
        return code, out, err

    return run


def genstamp_here(*args: str | os.PathLike[str]) -> tuple[int, str, str]:
    """genstamp's main called in this process, for a test that is about a verdict rather than
    the command's process (exit code, stdout, stderr); pass ``-C DIR`` for the folder."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = genstamp_main([os.fspath(a) for a in args])
    return code, out.getvalue(), err.getvalue()


def installed_plugin(site: Path, name: str, text: str) -> Path:
    """A pytest plugin module ``name`` holding ``text``, installed in the folder ``site`` with
    its distribution's metadata and entry point (``pytest11``): a real installed plugin once
    ``site`` is on ``PYTHONPATH``. Returns ``site``."""
    meta = site / f"{name}-1.0.dist-info"
    meta.mkdir(parents=True)
    (site / f"{name}.py").write_text(text)
    (meta / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n")
    (meta / "entry_points.txt").write_text(f"[pytest11]\n{name} = {name}\n")
    return site


def subprocess_env(bytecode: bool = False, **extra: str) -> dict[str, str]:
    """The environment for a process a test starts. ``bytecode=True`` lets it write .pyc files
    (this machine and CI export PYTHONDONTWRITEBYTECODE=1)."""
    env = dict(os.environ)
    env.pop("PYTHONPYCACHEPREFIX", None)
    for name in [n for n in env if n.startswith("PYTEST_XDIST_")]:
        del env[name]  # a pytest it starts is its own run, not a worker of this one
    # nor a child this run follows: the genstamp these tests start is the one under test (set
    # empty: absent, a process descending from the run's would be followed all the same)
    env["GENSTAMP_RUN"] = ""
    # A pytest a test starts runs a small project that uses no hypothesis; hypothesis's plugin
    # (installed for this suite's own property tests) would import all of hypothesis in every
    # one of them: about 0.3 s of CPU of a 0.8 s run. Set, not appended: the options of the
    # run of this suite are not the options of the run a test starts.
    env["PYTEST_ADDOPTS"] = "-p no:hypothesispytest"
    if bytecode:
        env.pop("PYTHONDONTWRITEBYTECODE", None)
    env.update(extra)
    return env


def run_python(
    cwd: Path,
    *args: str,
    stdin: str | bytes | None = None,
    env: dict[str, str] | None = None,
    text: bool = True,
) -> subprocess.CompletedProcess[Any]:
    """This interpreter (genstamp, pytest and pre-commit installed) in a process of its own,
    in the environment a test's process gets unless ``env`` is given; bytes in and out with
    ``text=False``."""
    return subprocess.run(
        [sys.executable, *args],
        cwd=cwd,
        input=stdin,
        capture_output=True,
        text=text,
        env=env if env is not None else subprocess_env(),
        timeout=300,  # a guard against a hang, not a timing assertion
    )


def run_genstamp(
    cwd: Path, *args: str, stdin: str | None = None, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """The real ``genstamp`` command in a process of its own (``python -m genstamp``)."""
    return run_python(cwd, "-m", "genstamp", *args, stdin=stdin, env=env)


def run_pytest(
    cwd: Path, *args: str, bytecode: bool = False, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """A real pytest process in ``cwd``, with this interpreter (genstamp's plugin installed)."""
    return run_python(
        cwd, "-m", "pytest", "-q", *args, env=env if env is not None else subprocess_env(bytecode)
    )


# -- end-to-end hook tests: this checkout as a hook repository (added for issue 4) --------------

SNAPSHOT_PATHS = ("src", "pyproject.toml", "README.md", ".pre-commit-hooks.yaml", "hooks")


def _session_dir(factory: pytest.TempPathFactory) -> Path:
    """A folder shared by every xdist worker of this test session (the session's own without
    xdist)."""
    base = factory.getbasetemp()
    return base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base


def _cache_dir(factory: pytest.TempPathFactory) -> Path:
    """A folder kept across sessions, next to pytest's numbered temporary folders
    (pytest-of-USER/pytest-N); the session's own when --basetemp names another place: a folder
    the user chose is not ours to fill."""
    session = _session_dir(factory)
    if not (session.name.startswith("pytest-") and session.parent.name.startswith("pytest-of-")):
        return session
    cache = session.parent / "genstamp-e2e-cache"
    cache.mkdir(mode=0o700, exist_ok=True)
    return cache


@contextlib.contextmanager
def _locked(path: Path) -> Iterator[None]:
    """One holder at a time, across xdist workers and concurrent sessions."""
    import fcntl

    with open(path, "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield


@pytest.fixture(scope="session")
def pre_commit_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One PRE_COMMIT_HOME kept across sessions, so pre-commit builds its hook env for a
    snapshot once (pre-commit locks the store itself; a changed snapshot is a new commit,
    which pre-commit builds anew)."""
    return _cache_dir(tmp_path_factory) / "pre-commit-home"


@pytest.fixture(scope="session")
def genstamp_snapshot(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """This checkout's current source (src/, pyproject.toml, README.md, .pre-commit-hooks.yaml,
    hooks/, working changes included) committed to a git repository of its own: a hook
    repository for pre-commit, and hooks/ for core.hooksPath. Built once per session; kept
    under its commit id, which the fixed identity and dates make a digest of the content, so
    pre-commit sees the same repository and rev again while the source is unchanged."""
    shared = _session_dir(tmp_path_factory)
    cache = _cache_dir(tmp_path_factory)
    done = shared / "genstamp-snapshot.done"
    with _locked(shared / "genstamp-snapshot.lock"):
        if done.exists():
            return Path(done.read_text())
        staging = shared / "genstamp-snapshot"
        shutil.rmtree(staging, ignore_errors=True)
        source = Path(__file__).resolve().parents[1]
        init_repo(staging)
        skip = shutil.ignore_patterns("*.egg-info", "__pycache__", "*.py[co]")
        for name in SNAPSHOT_PATHS:
            src = source / name
            if src.is_dir():
                shutil.copytree(src, staging / name, ignore=skip)
            elif src.is_file():
                shutil.copy2(src, staging / name)
        commit = commit_all(staging, "genstamp snapshot")
        snapshot = cache / f"snapshot-{commit}"
        with _locked(cache / "snapshot.lock"):
            if snapshot.exists():
                shutil.rmtree(staging)
            else:
                staging.rename(snapshot)
        done.write_text(str(snapshot))
    return snapshot


def snapshot_url(snapshot: Path) -> str:
    """The snapshot as every end-to-end test names it to pre-commit: the ``file://`` URL pip
    records for ``pip install git+file://…`` (which README's steps run and ``genstamp install``
    then pins). pre-commit keys its store by that string: one name, one hook environment
    built per snapshot for the whole session, not one per spelling of the same repository."""
    return f"file://{snapshot}"


@pytest.fixture(scope="session")
def wrapper(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An executable ``genstamp`` that runs this interpreter's genstamp, whatever PATH holds
    (for GENSTAMP, which genstamp's plain hooks call)."""
    path = tmp_path_factory.mktemp("bin") / "genstamp"
    path.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m genstamp "$@"\n')
    path.chmod(0o755)
    return path


def run_git(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """Real git whose hooks fire; the caller judges the exit status and the output."""
    return subprocess.run(
        ["git", "-c", "commit.gpgsign=false", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=300,
    )


def ok(proc: subprocess.CompletedProcess[str]) -> str:
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out
    return out


def refused(proc: subprocess.CompletedProcess[str]) -> str:
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0, out
    return out


class Project:
    """A work tree with a remote, for the end-to-end stories through real hooks."""

    def __init__(self, root: Path, remote: Path) -> None:
        self.root = root
        self.remote = remote

    def git(self, *args: str) -> subprocess.CompletedProcess[str]:
        return run_git(self.root, *args)

    def rev(self, rev: str) -> str:
        return git(self.root, "rev-parse", rev)

    def edit(self, rel: Path | str, text: str) -> None:
        (self.root / rel).write_text(text)
