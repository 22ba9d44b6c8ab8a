"""The loaded-code audit: every flag raised by a real scenario, and the pieces it is made of.

The scenarios are the incident's own: an editable install of another checkout, a stale copy in
site-packages, a sourceless ``.pyc``, and bytecode CPython cannot tell from its source (same size,
same mtime, different content). Each is a real pytest process in a real repository; the evidence
is read back as the gate reads it, and the gate says which rule fires.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import importlib.util
import os
import py_compile
import shutil
import site
import subprocess
import sys
import sysconfig
import time
from pathlib import Path
from types import ModuleType

import pytest
from conftest import commit_all, committed, git, init_repo, run_pytest, subprocess_env

from genstamp import audit, evidence, loader, restamp
from genstamp.repo import open_checkout
from genstamp.verify import verify

V1 = "VERSION = 1\n\n\ndef add(a, b):\n    return a + b\n"
V2 = "VERSION = 2\n\n\ndef add(a, b):\n    return b + a\n"
TEST_ADD = "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n"
GITIGNORE = "__pycache__/\n*.py[co]\n"


# -- helpers -----------------------------------------------------------------------------------


def report_of(repo: Path) -> evidence.Report:
    return evidence.read_report(evidence.default_path(open_checkout(repo).state))


def audit_of(repo: Path) -> audit.Audit:
    return audit.from_json(report_of(repo).properties[evidence.P_AUDIT])


def failures(repo: Path) -> dict[str, str]:
    return {f.rule: f.message for f in verify(open_checkout(repo)).failures}


def stamp(repo: Path) -> None:
    restamp.begin(open_checkout(repo))


def pyc_beside(source: Path) -> Path:
    """Where CPython keeps the bytecode of ``source`` without a pycache prefix (this process
    has one: the plugin running this suite set it)."""
    return source.parent / "__pycache__" / f"{source.stem}.{sys.implementation.cache_tag}.pyc"


def make_venv(path: Path) -> tuple[Path, Path]:
    """A real virtual environment whose interpreter still finds pytest and genstamp: a ``.pth``
    adds this interpreter's site-packages (``--system-site-packages`` alone would reach the base
    interpreter's, not this environment's). Returns (python, its site-packages)."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(path)], check=True)
    python = path / "bin" / "python"
    site_dir = Path(
        subprocess.run(
            [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
            check=True,
            capture_output=True,
            text=True,
        ).stdout.strip()
    )
    paths = sysconfig.get_paths()
    candidates = [paths["purelib"], paths["platlib"], *site.getsitepackages()]
    if site.ENABLE_USER_SITE:
        candidates.append(site.getusersitepackages())
    outer = [d for d in dict.fromkeys(candidates) if d in sys.path and os.path.isdir(d)]
    assert outer, "this interpreter's site-packages are not on its path"
    lines = "".join(f"import site; site.addsitedir({d!r})\n" for d in outer)
    (site_dir / "zz_outer_env.pth").write_text(lines)
    return python, site_dir


def run_in(python: Path, cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(python), "-m", "pytest", "-q", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        env=subprocess_env(),
        timeout=300,
    )


# -- another checkout, or an old install, on the import path: foreign-origin ---------------------


@pytest.fixture(scope="module")
def two_checkouts(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """This checkout at v2 (no ``pythonpath``: the package comes from the environment, as with an
    installed project) and a clone of it at the previous commit, v1."""
    base = tmp_path_factory.mktemp("checkouts")
    repo = init_repo(base / "work")
    (repo / "src" / "calc").mkdir(parents=True)
    (repo / "src" / "calc" / "__init__.py").write_text(V1)
    (repo / "tests").mkdir()
    (repo / "tests" / "test_add.py").write_text(TEST_ADD)
    (repo / "pyproject.toml").write_text('[tool.pytest.ini_options]\ntestpaths = ["tests"]\n')
    (repo / ".gitignore").write_text(GITIGNORE)
    commit_all(repo, "v1")
    (repo / "src" / "calc" / "__init__.py").write_text(V2)
    commit_all(repo, "v2")
    other = base / "other"
    git(base, "clone", "-q", str(repo), str(other))
    git(other, "checkout", "-q", "HEAD~1")
    assert (other / "src" / "calc" / "__init__.py").read_text() == V1
    return repo, other


@pytest.mark.e2e
@pytest.mark.parametrize("how", ["editable-other-checkout", "stale-site-packages-copy"])
def test_foreign_origin(two_checkouts: tuple[Path, Path], tmp_path: Path, how: str) -> None:
    repo, other = two_checkouts
    stamp(repo)
    python, site_dir = make_venv(tmp_path / "venv")
    if how == "editable-other-checkout":
        # what `pip install -e` of a src-layout project leaves behind
        (site_dir / "__editable__.calc-0.1.pth").write_text(f"{other / 'src'}\n")
        expected = other / "src" / "calc" / "__init__.py"
    else:
        shutil.copytree(other / "src" / "calc", site_dir / "calc")
        expected = site_dir / "calc" / "__init__.py"
    proc = run_in(python, repo)
    # the incident: green, on code this checkout does not hold
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "genstamp:" not in proc.stdout + proc.stderr

    found = audit_of(repo)
    foreign = [f for f in found.flags if f.kind == audit.FOREIGN]
    assert [(f.module, f.path) for f in foreign] == [("calc", os.path.realpath(expected))]
    assert "src/calc/__init__.py" not in found.loaded  # the checkout's own file never ran
    assert found.loaded["tests/test_add.py"] == (git(repo, "hash-object", "tests/test_add.py"),)

    got = failures(repo)
    assert list(got) == ["foreign-origin"]
    assert str(os.path.realpath(expected)) in got["foreign-origin"]


def assert_runs_as_own(python: Path, repo: Path) -> None:
    """The tests pass in ``python``'s environment, and the code that ran is bound as this
    checkout's own: no flag, its blob id recorded, nothing refused."""
    proc = run_in(python, repo)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    found = audit_of(repo)
    assert found.flags == ()
    assert found.loaded["src/calc/__init__.py"] == (
        git(repo, "hash-object", "src/calc/__init__.py"),
    )
    assert failures(repo) == {}


@pytest.mark.e2e
def test_own_install_is_not_foreign(two_checkouts: tuple[Path, Path], tmp_path: Path) -> None:
    """The contrast: this checkout installed editable is its own code, blob ids and all."""
    repo, _ = two_checkouts
    stamp(repo)
    python, site_dir = make_venv(tmp_path / "venv")
    (site_dir / "__editable__.calc-0.1.pth").write_text(f"{repo / 'src'}\n")
    assert_runs_as_own(python, repo)


@pytest.mark.e2e
def test_identical_installed_copy_is_not_foreign(
    two_checkouts: tuple[Path, Path], tmp_path: Path
) -> None:
    """`pip install .` (not -e) of this very tree: the code that ran is the checkout's, byte for
    byte, so it is bound by blob id instead of flagged; a copy that differs stays foreign."""
    repo, _ = two_checkouts
    stamp(repo)
    python, site_dir = make_venv(tmp_path / "venv")
    shutil.copytree(repo / "src" / "calc", site_dir / "calc")
    assert_runs_as_own(python, repo)
    # one byte different: foreign again
    (site_dir / "calc" / "__init__.py").write_text(V2 + "\n")
    run_in(python, repo)
    assert [f.kind for f in audit_of(repo).flags] == [audit.FOREIGN]


# a module whose docstring is a doctest, collected from the tree (--doctest-modules) where the
# tests import the installed copy first: importlib mode hands the tree's file that module
DOCTESTED = 'def add(a, b):\n    """\n    >>> add(1, 2)\n    3\n    """\n    return a + b\n'


@pytest.mark.e2e
@pytest.mark.parametrize("installed", ["this", "stale", "another"])
def test_a_file_collected_with_its_installed_copys_module_is_judged_by_the_copy(
    tmp_path: Path, installed: str
) -> None:
    """`pip install .` (not -e, as tox does) and ``--doctest-modules --import-mode=importlib``:
    the tests import calc from site-packages first, and pytest hands the doctests of
    src/calc/__init__.py that module. It was taken for another test file's module (not
    collected: refused partial-run). An installed copy of the file is judged as such: this
    tree's, accepted; a stale one, foreign-origin. Another file of the name installed (a
    dependency's stray package, whose doctests ran in its place: h194) is another file's
    module: its own never ran."""
    repo = init_repo(tmp_path / "work")
    (repo / "src" / "calc").mkdir(parents=True)
    (repo / "src" / "calc" / "__init__.py").write_text(DOCTESTED)
    (repo / "tests").mkdir()
    (repo / "tests" / "test_add.py").write_text(TEST_ADD)
    (repo / "pyproject.toml").write_text(
        '[tool.pytest.ini_options]\ntestpaths = ["tests", "src"]\n'
        'addopts = "--doctest-modules --import-mode=importlib"\n'
    )
    (repo / ".gitignore").write_text(GITIGNORE)
    commit_all(repo, "calc")
    stamp(repo)
    python, site_dir = make_venv(tmp_path / "venv")
    shutil.copytree(repo / "src" / "calc", site_dir / "calc")  # `pip install .`
    if installed == "stale":
        (site_dir / "calc" / "__init__.py").write_text(DOCTESTED + "# last week's\n")
    elif installed == "another":
        (site_dir / "calc" / "__init__.py").write_text(
            DOCTESTED.replace("3\n", "3\n    >>> 1\n    1\n")
        )
    proc = run_in(python, repo)
    assert proc.returncode == 0 and "2 passed" in proc.stdout, proc.stdout + proc.stderr
    found = failures(repo)
    if installed == "this":
        assert found == {}, found
    else:
        assert "foreign-origin" in found, found
    if installed == "another":
        assert "src/calc/__init__.py" in found["partial-run"], found


# a package that reads a data file as it is imported, and a module it falls back from
DATA_INIT = """\
import json, os
try:
    from calc._cfg import FACTOR
except ImportError:
    FACTOR = None
_DATA = os.path.join(os.path.dirname(__file__), "data.json")
if FACTOR is None:
    FACTOR = json.load(open(_DATA))["factor"] if os.path.exists(_DATA) else 3


def add(a, b):
    return (a + b) * FACTOR
"""
TEST_FACTOR_1 = "import calc\n\n\ndef test_add():\n    assert calc.add(2, 2) == 4\n"


@pytest.mark.e2e
@pytest.mark.parametrize(
    ("change", "early", "said"),
    [
        ("data-differs", True, "its calc/data.json is not the tested tree's src/calc/data.json"),
        ("data-dropped", True, "holds calc/data.json, which the tested tree dropped"),
        ("data-dropped", False, "holds calc/data.json, which the tested tree dropped"),
        ("module-added", True, "lacks calc/_cfg.py, which the tested tree has"),
        ("module-added", False, "lacks calc/_cfg.py, which the tested tree has"),
        # added after the install and never imported by name (found by listing the package,
        # pkgutil.iter_modules; a data file read where it may be missing): no import failed
        ("module-listed", False, "lacks calc/_triple.py, which the tested tree has"),
        ("data-added", False, "lacks calc/limits.json, which the tested tree has"),
        ("data-added", True, "lacks calc/limits.json, which the tested tree has"),
        ("none", True, ""),
        ("none", False, ""),
        # a module the tree held when the copy was built that the build left out (hatch's
        # `exclude`): no older install for it
        ("excluded", True, ""),
        ("excluded", False, ""),
        # the commit that added it amended (or rebased) since the install: its author's time
        # stays, its own moves
        ("excluded-amended", False, ""),
        # the commit that added it amended after the install: the tree held it then
        ("excluded-amended-since", False, ""),
        # added by a colleague's commit written before the install, fetched and merged since
        # (a fast-forward, or a merge commit): it came into this checkout after the install
        ("module-merged-ff", False, "lacks calc/_cfg.py, which the tested tree has"),
        ("module-merged", False, "lacks calc/_cfg.py, which the tested tree has"),
        # installed in the second HEAD moved to a commit without it (`git switch old && pip
        # install .`): the commit HEAD named just before held it, the one installed did not
        ("module-switched-in-its-second", False, "lacks calc/_cfg.py, which the tested tree"),
        # a folder of data (a subpackage) the tree added after the install: lacked whole
        ("folder-added", False, "lacks calc/overrides/site.json, which the tested tree has"),
        # a file no version of the tree held, in a copy installed from another clone (its
        # modules byte for byte the tree's); the control: one installed from here (a build's)
        ("data-extra-from-another", False, "holds calc/extra.json, which the tested tree does"),
        ("data-extra-from-here", False, ""),
        # from a wheel built elsewhere, or a folder that does not hold it: a file a build made
        ("data-extra-built-elsewhere", False, ""),
        ("namespaced-data-differs", True, "its acme/calc/data.json is not the tested tree's"),
        # an asset a build writes, which git ignores in the work tree: no file of the tree
        ("ignored-asset", True, ""),
    ],
)
def test_an_installed_copy_is_judged_whole_where_it_stands_for_the_tree(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, change: str, early: bool, said: str
) -> None:
    """`pip install .` of last week's tree, whose modules are byte for byte the tree's: its data
    file differs, or the tree deleted it, or the tree added a module the package falls back
    from. Read or imported as a `pytest11` plugin of the package imports it, before any
    recording began, or read as the tree no longer holds it: the tests ran last week's
    package, green, and were accepted (a clean clone fails). Control: an install of this
    very tree, imported early or in the tests."""
    repo = init_repo(tmp_path / "work")
    name = "acme.calc" if change.startswith("namespaced") else "calc"
    package = repo / "src" / name.replace(".", "/")
    package.mkdir(parents=True)
    (package / "__init__.py").write_text(DATA_INIT.replace("calc._cfg", f"{name}._cfg"))
    (package / "data.json").write_text('{"factor": 1}\n')
    (package / "plug.py").write_text(f"import {name}  # the package's pytest plugin\n")
    if change.startswith("excluded"):
        (package / "_devtools.py").write_text("DEBUG = True\n")
    (repo / "tests").mkdir()
    test = TEST_FACTOR_1.replace("import calc\n", f"import {name} as calc\n")
    (repo / "tests" / "test_add.py").write_text(test)
    (repo / "pyproject.toml").write_text('[tool.pytest.ini_options]\ntestpaths = ["tests"]\n')
    (repo / ".gitignore").write_text(GITIGNORE)
    with monkeypatch.context() as dated:  # v1 two weeks ago
        when = f"@{int(time.time()) - 14 * 86400} +0000"
        dated.setenv("GIT_AUTHOR_DATE", when)
        if change == "excluded-amended":  # amended now: its author's time alone is old
            when = f"@{int(time.time())} +0000"
        dated.setenv("GIT_COMMITTER_DATE", when)
        commit_all(repo, "v1")
    python, site_dir = make_venv(tmp_path / "venv")
    installed = site_dir / name.replace(".", "/")
    shutil.copytree(package, installed)  # `pip install .` of v1, last week
    if change.startswith("excluded"):
        (installed / "_devtools.py").unlink()  # the build's `exclude`
    if change == "ignored-asset":  # built again here since the install, for the wheel there
        (repo / ".gitignore").write_text(GITIGNORE + "src/calc/built.css\n")
        (package / "built.css").write_text("a { color: red }\n")
        (installed / "built.css").write_text("a { color: blue }\n")
    week_ago = time.time() - 7 * 86400
    for path in installed.rglob("*"):
        os.utime(path, (week_ago, week_ago))
    info = site_dir / "calc-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: calc\nVersion: 0.1\n")
    if early:
        (info / "entry_points.txt").write_text(f"[pytest11]\ncalc = {name}.plug\n")
    if change.startswith("data-extra"):
        (installed / "extra.json").write_text('{"factor": 3}\n')
        source = repo if change == "data-extra-from-here" else tmp_path / "other"
        if change == "data-extra-from-another":  # another clone, whose tree holds the file
            (source / "src" / "calc").mkdir(parents=True)
            shutil.copy(installed / "extra.json", source / "src" / "calc" / "extra.json")
        (info / "direct_url.json").write_text(f'{{"url": "{source.as_uri()}", "dir_info": {{}}}}')
        files = sorted(p for p in installed.rglob("*") if p.is_file())
        (info / "RECORD").write_text("".join(f"{p.relative_to(site_dir)},,\n" for p in files))
    if change.endswith("data-differs"):
        (package / "data.json").write_text('{"factor": 2}\n')
    elif change == "data-dropped":
        (package / "data.json").unlink()
    elif change == "module-added":
        (package / "_cfg.py").write_text("FACTOR = 2\n")
    elif change == "module-switched-in-its-second":
        (package / "_cfg.py").write_text("FACTOR = 2\n")
        with monkeypatch.context() as dated:  # committed the day before the install
            when = f"@{int(week_ago) - 86400} +0000"
            dated.setenv("GIT_AUTHOR_DATE", when)
            dated.setenv("GIT_COMMITTER_DATE", when)
            commit_all(repo, "cfg")
        with monkeypatch.context() as dated:  # the older commit checked out to install it
            dated.setenv("GIT_COMMITTER_DATE", f"@{int(week_ago)} +0000")
            git(repo, "checkout", "-q", "HEAD~1")
    elif change.startswith("module-merged"):  # written in another clone two weeks ago
        other = tmp_path / "colleague"
        git(tmp_path, "clone", "-q", str(repo), str(other))
        (other / "src" / "calc" / "_cfg.py").write_text("FACTOR = 2\n")
        with monkeypatch.context() as dated:
            when = f"@{int(time.time()) - 14 * 86400} +0000"
            dated.setenv("GIT_AUTHOR_DATE", when)
            dated.setenv("GIT_COMMITTER_DATE", when)
            commit_all(other, "cfg")
        git(repo, "fetch", "-q", str(other), "HEAD:side")
    elif change == "module-listed":
        (package / "_triple.py").write_text("def add(a, b):\n    return 3 * (a + b)\n")
    elif change == "data-added":
        (package / "limits.json").write_text('{"most": 10}\n')
    elif change == "folder-added":
        (package / "overrides").mkdir()
        (package / "overrides" / "site.json").write_text('{"factor": 5}\n')
    with monkeypatch.context() as dated:  # v2 now, after the install
        when = f"@{int(time.time())} +0000"
        dated.setenv("GIT_AUTHOR_DATE", when)
        dated.setenv("GIT_COMMITTER_DATE", when)
        if change == "module-switched-in-its-second":
            git(repo, "checkout", "-q", "main")
        elif change == "module-merged-ff":
            git(repo, "merge", "-q", "--ff-only", "side")
        elif change == "module-merged":
            git(repo, "merge", "-q", "--no-ff", "-m", "merge side", "side")
        elif change == "excluded-amended-since":
            git(repo, "commit", "-q", "--amend", "-m", "v1, amended")
        else:
            commit_all(repo, "v2")
    stamp(repo)
    proc = run_in(python, repo)
    assert proc.returncode == 0, proc.stdout + proc.stderr  # the installed package's factor
    got = failures(repo)
    if not said:
        assert got == {}, got
        return
    assert list(got) == ["foreign-origin"] and said in got["foreign-origin"], got


CLI_V1 = 'def main():\n    print("old")\n\n\nif __name__ == "__main__":\n    main()\n'
CLI_V2 = CLI_V1.replace("old", "new")
RUN_CLI = """
import io, os, runpy, subprocess, sys
from contextlib import redirect_stdout

import calc


def test_cli():
    how = {how!r}
    if how == "python -m":
        out = subprocess.run([sys.executable, "-m", "calc.cli"], capture_output=True,
                             text=True, check=True).stdout
    else:
        buf = io.StringIO()
        with redirect_stdout(buf):
            if how == "run_module":
                runpy.run_module("calc.cli", run_name="__main__")
            else:
                runpy.run_path(os.path.join(os.path.dirname(calc.__file__), "cli.py"),
                               run_name="__main__")
        out = buf.getvalue()
    assert out.strip() == "old"
"""


@pytest.mark.e2e
@pytest.mark.parametrize("how", ["python -m", "run_module", "run_path"])
@pytest.mark.parametrize("copy", ["stale", "identical"])
def test_a_module_runpy_runs_from_an_installed_copy(tmp_path: Path, how: str, copy: str) -> None:
    """`python -m calc.cli` in a child, `runpy.run_module` or `runpy.run_path` in the tests:
    runpy executes the module as ``__main__``, out of any ``exec_module``; an installed copy of
    an older release is foreign all the same, and one identical to the tree is the checkout's."""
    repo = init_repo(tmp_path / "work")
    (repo / "src" / "calc").mkdir(parents=True)
    (repo / "src" / "calc" / "__init__.py").write_text(V1)
    (repo / "src" / "calc" / "cli.py").write_text(CLI_V1)
    (repo / "tests").mkdir()
    (repo / "tests" / "test_cli.py").write_text(RUN_CLI.format(how=how))
    (repo / "pyproject.toml").write_text('[tool.pytest.ini_options]\ntestpaths = ["tests"]\n')
    (repo / ".gitignore").write_text(GITIGNORE)
    commit_all(repo, "v1")
    python, site_dir = make_venv(tmp_path / "venv")
    shutil.copytree(repo / "src" / "calc", site_dir / "calc")  # `pip install .` of v1
    if copy == "stale":
        (repo / "src" / "calc" / "cli.py").write_text(CLI_V2)
        commit_all(repo, "v2: the CLI says new")
    stamp(repo)
    proc = run_in(python, repo)
    assert proc.returncode == 0, proc.stdout + proc.stderr  # the installed CLI ran
    got = failures(repo)
    if copy == "identical":
        assert got == {}
        assert audit_of(repo).loaded["src/calc/cli.py"] == (
            git(repo, "hash-object", "src/calc/cli.py"),
        )
        return
    assert list(got) == ["foreign-origin"]
    assert os.path.realpath(site_dir / "calc" / "cli.py") in got["foreign-origin"]


@pytest.mark.e2e
def test_identical_copy_in_another_clone_is_foreign(
    two_checkouts: tuple[Path, Path], tmp_path: Path
) -> None:
    """A clone of this very commit holds the same source byte for byte, but it is not installed
    code: its data files and neighbours are that clone's, so the load stays foreign (only an
    installer's copy may stand for the checkout's file)."""
    repo, _ = two_checkouts
    stamp(repo)
    same = tmp_path / "same"
    git(tmp_path, "clone", "-q", str(repo), str(same))
    python, site_dir = make_venv(tmp_path / "venv")
    (site_dir / "__editable__.calc-0.1.pth").write_text(f"{same / 'src'}\n")
    assert run_in(python, repo).returncode == 0
    loaded = os.path.realpath(same / "src" / "calc" / "__init__.py")
    assert [(f.kind, f.path) for f in audit_of(repo).flags] == [(audit.FOREIGN, loaded)]
    assert "foreign-origin" in failures(repo)


@pytest.mark.e2e
@pytest.mark.parametrize("layout", ["monorepo-library", "project-in-a-subfolder"])
@pytest.mark.parametrize("install", ["identical", "stale", "a-release-from-an-index"])
def test_an_install_of_a_project_below_the_top(tmp_path: Path, layout: str, install: str) -> None:
    """A project whose metadata is not at the top (a monorepo's `libs/common`, a repository's
    `python/`) provides import roots too: its stale `pip install ./lib` (not editable) that
    the tests load is refused; the same copy byte for byte is the checkout's own; a release of
    it installed from an index (no PEP 610 record naming a folder) is a dependency, as a clean
    clone has it."""
    from test_loads import pip_install

    repo = init_repo(tmp_path / "repo")
    lib = "libs/common" if layout == "monorepo-library" else "python"
    project = {
        f"{lib}/pyproject.toml": '[project]\nname = "gs-common"\nversion = "0.1"\n',
        f"{lib}/gscommon/__init__.py": "def rate():\n    return 11\n",
        "tests/test_rate.py": "from gscommon import rate\n\n\ndef test_rate():\n    rate()\n",
        "pyproject.toml": '[tool.pytest.ini_options]\ntestpaths = ["tests"]\n',
        ".gitignore": "build/\n*.egg-info/\n",
    }
    for rel, text in project.items():
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        (repo / rel).write_text(text)
    commit_all(repo, "a project below the top")
    site = tmp_path / "site-packages"
    pip_install(repo / lib, site)  # `pip install ./lib`
    if install != "identical":
        (repo / lib / "gscommon" / "__init__.py").write_text("def rate():\n    return 10\n")
        commit_all(repo, "a new rate")
    if install == "a-release-from-an-index":
        (direct_url,) = site.glob("*.dist-info/direct_url.json")
        direct_url.unlink()
    stamp(repo)
    proc = run_pytest(repo, env=subprocess_env(PYTHONPATH=str(site)))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    said = failures(repo)
    if install == "stale":
        assert list(said) == ["foreign-origin"] and "gscommon" in said["foreign-origin"], said
    else:
        assert said == {}, said


SETUPTOOLS = '[build-system]\nrequires = ["setuptools"]\nbuild-backend = "setuptools.build_meta"\n'
# each layout: its files, the projects `pip install` is given, and the file a stale install
# leaves behind an edit of
INSTALLED_LAYOUTS = {
    # two projects below the top, each a portion of one namespace package
    "namespace-portions": (
        {
            "libs/a/pyproject.toml": SETUPTOOLS + '[project]\nname = "ns-a"\nversion = "1"\n',
            "libs/a/src/ns/a/__init__.py": "A = 1\n",
            "libs/b/pyproject.toml": SETUPTOOLS + '[project]\nname = "ns-b"\nversion = "1"\n',
            "libs/b/src/ns/b/__init__.py": "B = 1\n",
            "tests/test_ns.py": "from ns.a import A\nfrom ns.b import B\n\n\ndef test_ns():\n"
            "    assert A + B\n",
        },
        ["libs/a", "libs/b"],
        "libs/a/src/ns/a/__init__.py",
    ),
    # a package mapped to a folder of another name that holds no __init__.py
    "mapped-without-init": (
        {
            "pyproject.toml": SETUPTOOLS + '[project]\nname = "pkg"\nversion = "1"\n'
            '[tool.setuptools]\npackages = ["pkg"]\npackage-dir = {pkg = "lib/pkgsrc"}\n',
            "lib/pkgsrc/mod.py": "V = 1\n",
            "tests/test_pkg.py": "from pkg.mod import V\n\n\ndef test_pkg():\n    assert V\n",
        },
        ["."],
        "lib/pkgsrc/mod.py",
    ),
    # a portion of a namespace package mapped to a folder (no folder is named as the
    # namespace), beside a dependency's portion of it installed from elsewhere
    "mapped-namespace-portion": (
        {
            "pyproject.toml": SETUPTOOLS + '[project]\nname = "ns-a"\nversion = "1"\n'
            '[tool.setuptools]\npackages = ["ns.a"]\npackage-dir = {"ns.a" = "lib/a"}\n',
            "lib/a/__init__.py": "A = 1\n",
            "tests/test_ns.py": "from ns.a import A\nfrom ns.b import B\n\n\ndef test_ns():\n"
            "    assert A + B\n",
        },
        [".", "DEPENDENCY"],
        "lib/a/__init__.py",
    ),
    # a subpackage mapped to a folder of its own
    "subpackage-mapped": (
        {
            "pyproject.toml": SETUPTOOLS + '[project]\nname = "calc"\nversion = "1"\n'
            '[tool.setuptools]\npackages = ["calc", "calc.plugins"]\n'
            'package-dir = {calc = "src/calc", "calc.plugins" = "plugins"}\n',
            "src/calc/__init__.py": "",
            "plugins/__init__.py": "",
            "plugins/common.py": "V = 1\n",
            "tests/test_plugins.py": "from calc.plugins.common import V\n\n\n"
            "def test_plugins():\n    assert V\n",
        },
        ["."],
        "plugins/common.py",
    ),
}


@pytest.mark.e2e
@pytest.mark.parametrize("layout", sorted(INSTALLED_LAYOUTS))
@pytest.mark.parametrize("install", ["identical", "stale"])
def test_an_installed_copy_is_found_where_its_project_maps_it(
    tmp_path: Path, layout: str, install: str
) -> None:
    """`pip install .` (not editable) of a project whose files the build takes from folders of
    other names, or of projects below the top that share a namespace package: each installed
    file is compared with the tree's file it was built from, found through the project the
    installer recorded (PEP 610) and its metadata. A byte-identical copy was refused as
    foreign; a stale one is refused as before."""
    files, projects, edited = INSTALLED_LAYOUTS[layout]
    repo = init_repo(tmp_path / "repo")
    files = {**files, ".gitignore": "build/\n*.egg-info/\n__pycache__/\n"}
    for rel, text in files.items():
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        (repo / rel).write_text(text)
    commit_all(repo, layout)
    site = tmp_path / "site-packages"
    # one `pip install ./libs/a ./libs/b` (a second --target install would skip ns/)
    pip = [sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--no-build-isolation"]
    dependency = committed(  # another project's portion of the namespace
        tmp_path / "dep",
        {
            "pyproject.toml": SETUPTOOLS + '[project]\nname = "ns-b"\nversion = "1"\n',
            "src/ns/b/__init__.py": "B = 1\n",
        },
    )
    where = [str(dependency if p == "DEPENDENCY" else repo / p) for p in projects]
    done = subprocess.run(
        [*pip, "--no-index", "--target", str(site), *where],
        capture_output=True,
        text=True,
        env=subprocess_env(),
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    if install == "stale":
        (repo / edited).write_text((repo / edited).read_text() + "W = 2\n")
        commit_all(repo, "an edit the install does not have")
    stamp(repo)
    proc = run_pytest(repo, env=subprocess_env(PYTHONPATH=str(site)))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    said = failures(repo)
    if install == "stale":
        assert list(said) == ["foreign-origin"], said
    else:
        assert said == {}, said


VERSIONINGIT = '[tool.versioningit.onbuild]\nsource-file = "src/calc/__init__.py"\n'
# poetry-dynamic-versioning's substitution, of the package below src/
DYNAMIC = (
    "[tool.poetry-dynamic-versioning]\nenable = true\n"
    '[[tool.poetry-dynamic-versioning.substitution.folders]]\npath = "src"\n'
)


@pytest.mark.e2e
@pytest.mark.parametrize(
    ("onbuild", "rest_changed", "accepted"),
    [
        (VERSIONINGIT, False, True),  # the version line the build rewrote, the rest the tree's
        (VERSIONINGIT, True, False),  # ... and more than it: a stale install
        (DYNAMIC, False, True),
        (DYNAMIC, True, False),
        (DYNAMIC.replace("true", "false"), False, False),  # not enabled: it rewrites nothing
        ("", False, False),  # no build of the project rewrites it: not the tree's
    ],
)
def test_an_installed_copy_whose_version_line_the_build_rewrote(
    tmp_path: Path, onbuild: str, rest_changed: bool, accepted: bool
) -> None:
    """versioningit's `onbuild` step (and poetry-dynamic-versioning's substitution) writes the
    version into `__version__ = ...` of the copy it installs (tox, nox, `pip install .`): a
    complete green run of the committed tree was refused as foreign-origin. The rest of the
    file is still compared."""
    files = {
        "pyproject.toml": SETUPTOOLS
        + '[project]\nname = "calc"\nversion = "0.1"\n'
        + '[tool.setuptools.packages.find]\nwhere = ["src"]\n'
        + onbuild,
        "src/calc/__init__.py": '__version__ = "0.0.0"\n\n\ndef add(a, b):\n    return a + b\n',
        "tests/test_calc.py": "from calc import add\n\n\ndef test_add():\n    assert add(1, 2)\n",
        ".gitignore": "build/\n*.egg-info/\n__pycache__/\n",
    }
    repo = committed(tmp_path / "repo", files, "calc")
    site = tmp_path / "site-packages"
    from test_loads import pip_install

    pip_install(repo, site)
    copy = site / "calc" / "__init__.py"
    text = copy.read_text().replace('"0.0.0"', '"0.1"')  # what the onbuild step writes
    copy.write_text(text.replace("a + b", "b + a") if rest_changed else text)
    stamp(repo)
    proc = run_pytest(repo, env=subprocess_env(PYTHONPATH=str(site)))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    said = failures(repo)
    assert (said == {}) is accepted, said
    if not accepted:
        assert list(said) == ["foreign-origin"], said


# -- bytecode ------------------------------------------------------------------------------------


def bytecode_project(path: Path, test_body: str, *, pythonpath: bool = True) -> Path:
    repo = init_repo(path)
    (repo / "src" / "calc").mkdir(parents=True)
    (repo / "src" / "calc" / "__init__.py").write_text("")
    (repo / "src" / "calc" / "mod.py").write_text("def value():\n    return 1\n")
    (repo / "tests").mkdir()
    (repo / "tests" / "test_mod.py").write_text(test_body)
    ini = '[tool.pytest.ini_options]\ntestpaths = ["tests"]\n'
    if pythonpath:
        ini += 'pythonpath = ["src"]\n'
    (repo / "pyproject.toml").write_text(ini)
    (repo / ".gitignore").write_text(GITIGNORE)
    commit_all(repo, "calc")
    stamp(repo)
    return repo


# A loader that compiles the checkout's code its own way and caches it under an optimization
# tag of its own, as typeguard's and beartype's do (``opt-typeguard461``, ``opt-beartype…``).
INSTRUMENTING_LOADER = """
import ast
import importlib._bootstrap_external as external
import sys
from importlib.machinery import SOURCE_SUFFIXES, FileFinder, PathFinder, SourceFileLoader
from unittest.mock import patch

_plain_cache = external.cache_from_source


class Loader(SourceFileLoader):
    def source_to_code(self, data, path="<string>"):
        tree = ast.parse(data)
        tree.body.append(ast.parse("INSTRUMENTED = True").body[0])
        return compile(tree, path, "exec", dont_inherit=True)

    def exec_module(self, module):
        with patch.object(external, "cache_from_source",
                          lambda p, d=None: _plain_cache(p, d, optimization="hook7")):
            super().exec_module(module)
"""

# typeguard's: a meta path finder that hands the checkout's modules to that loader
INSTRUMENTING_CONFTEST = (
    INSTRUMENTING_LOADER
    + """

class Finder:
    @classmethod
    def find_spec(cls, name, path=None, target=None):
        if name.partition(".")[0] != "calc":
            return None
        spec = PathFinder.find_spec(name, path, target)
        if spec is not None and isinstance(spec.loader, SourceFileLoader):
            spec.loader = Loader(spec.loader.name, spec.loader.path)
        return spec


sys.meta_path.insert(0, Finder)
"""
)

# beartype.claw's `beartype_this_package()`, in the package's __init__: a path hook put just
# before the standard file finder's
CLAW_INIT = (
    INSTRUMENTING_LOADER
    + """

names = [getattr(h, "__name__", "") for h in sys.path_hooks]
at = len(names) - 1 - names[::-1].index("path_hook_for_FileFinder")
sys.path_hooks.insert(at, FileFinder.path_hook((Loader, SOURCE_SUFFIXES)))
sys.path_importer_cache.clear()
"""
)


@pytest.mark.e2e
@pytest.mark.parametrize(
    ("where", "text"),
    [("tests/conftest.py", INSTRUMENTING_CONFTEST), ("src/calc/__init__.py", CLAW_INIT)],
    ids=["meta-path-finder", "path-hook"],
)
def test_an_import_hook_that_instruments_the_checkouts_code(
    tmp_path: Path, where: str, text: str
) -> None:
    """typeguard (a meta path finder) and beartype.claw (a path hook put before the standard
    one) load the checkout's modules through a loader of their own and cache its compile as
    ``__pycache__/mod.cpython-311.opt-typeguard461.pyc``. genstamp's own path hook came first
    and hid beartype's (its runtime checks were silently off under the plugin), and the
    second run, which loads that bytecode, was refused as stale-bytecode (it is not what
    ``compile`` makes of the source). The hook applies, its loads are recorded with the blob
    that ran, its bytecode is judged by its header; one older than the generation is stale."""
    repo = bytecode_project(
        tmp_path / "p",
        "import calc.mod\n\n\ndef test_v():\n    assert calc.mod.INSTRUMENTED\n",
    )
    (repo / where).write_text(text)
    commit_all(repo, "an instrumenting import hook")
    stamp(repo)
    for _ in range(2):
        proc = run_pytest(repo, bytecode=True)
        assert proc.returncode == 0, proc.stdout + proc.stderr
        assert failures(repo) == {}
    blob = git(repo, "hash-object", "src/calc/mod.py")
    assert audit_of(repo).loaded["src/calc/mod.py"] == (blob,)
    # the hook's bytecode, and none of CPython's own: the guard loaded the rest
    cached = sorted(p.name for p in (repo / "src" / "calc" / "__pycache__").iterdir())
    assert "mod.cpython-311.opt-hook7.pyc" in cached
    assert all(".opt-hook7." in name for name in cached), cached
    restamp.begin(open_checkout(repo), do_scrub=False)  # the bytecode predates it
    assert run_pytest(repo, bytecode=True).returncode == 0
    assert "stale-bytecode" in failures(repo)


def same_size_same_mtime(source: Path, new: str) -> None:
    """Replace ``source`` with ``new`` (same length), then put its mtime back to the nanosecond:
    CPython's default pyc check (mtime in whole seconds, and size) cannot see the change."""
    st = source.stat()
    old = source.read_text()
    assert len(new.encode()) == len(old.encode()) and new != old
    source.write_text(new)
    os.utime(source, ns=(st.st_atime_ns, st.st_mtime_ns))
    after = source.stat()
    assert (after.st_size, after.st_mtime_ns) == (st.st_size, st.st_mtime_ns)


@pytest.mark.e2e
@pytest.mark.parametrize("named", [None, "/build/calc/legacy.py"])
def test_sourceless_pyc(tmp_path: Path, named: str | None) -> None:
    """Also when its code names a file compiled elsewhere (a vendor's build machine): it ran
    from the .pyc, which is where it is judged."""
    repo = bytecode_project(
        tmp_path / "repo",
        "from calc import legacy\n\n\ndef test_legacy():\n    assert legacy.OLD == 'still here'\n",
    )
    # A module deleted from git long ago; its legacy-location .pyc (no source beside it) stayed.
    source = repo / "src" / "calc" / "legacy.py"
    source.write_text("OLD = 'still here'\n")
    pyc = source.with_suffix(".pyc")
    py_compile.compile(str(source), cfile=str(pyc), dfile=named, doraise=True)
    source.unlink()
    assert git(repo, "status", "--porcelain") == ""  # ignored: git cannot see it

    proc = run_pytest(repo)
    assert proc.returncode == 0, proc.stdout + proc.stderr  # it ran, from bytecode alone
    found = audit_of(repo)
    assert [(f.kind, f.module, f.path) for f in found.flags] == [
        (audit.SOURCELESS, "calc.legacy", "src/calc/legacy.pyc")
    ]
    got = failures(repo)
    assert list(got) == ["stale-bytecode"]
    assert "calc.legacy" in got["stale-bytecode"]


def genstamp_pyc(repo: Path, rel: str) -> Path:
    """Where the plugin keeps the bytecode of the checkout's source ``rel``."""
    source = Path(rel)
    name = f"{source.stem}.{sys.implementation.cache_tag}.pyc"
    return open_checkout(repo).state / "pycache" / loader.COMPILED / source.parent / name


@pytest.fixture(scope="module")
def warmed(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """mod.py (v1: returns 1) was compiled by earlier runs, into its __pycache__ (pytest without
    genstamp) and into genstamp's own cache (pytest with it); then it was edited to return 2
    keeping its size and mtime. Warmed once; returns the project and a copy of its bytecode
    caches as they are now (``warm_stale_pyc`` puts them back for each test)."""
    base = tmp_path_factory.mktemp("warmed")
    test = "from calc.mod import value\n\n\ndef test_value():\n    assert value() == 2\n"
    repo = bytecode_project(base / "repo", test)
    source = repo / "src" / "calc" / "mod.py"
    for args in (["-p", "no:genstamp"], []):
        warm = run_pytest(repo, *args, bytecode=True)
        assert warm.returncode == 1  # v1 returns 1
    assert pyc_beside(source).is_file()
    assert genstamp_pyc(repo, "src/calc/mod.py").is_file()
    same_size_same_mtime(source, "def value():\n    return 2\n")
    saved = base / "saved"
    for cache in _caches(repo):
        shutil.copytree(cache, saved / cache.relative_to(repo))
    return repo, saved


def _caches(repo: Path) -> list[Path]:
    """The bytecode folders a run may write: genstamp's cache and every __pycache__."""
    state = open_checkout(repo).state / "pycache"
    beside = [p for p in repo.rglob("__pycache__") if ".git" not in p.relative_to(repo).parts]
    return [state, *beside] if state.is_dir() else beside


@pytest.fixture
def warm_stale_pyc(warmed: tuple[Path, Path]) -> Path:
    """The warmed project, its bytecode caches as they were once warmed (a test's run adds the
    edited source's bytecode to genstamp's cache)."""
    repo, saved = warmed
    for cache in _caches(repo):
        shutil.rmtree(cache)
    shutil.copytree(saved, repo, dirs_exist_ok=True)
    evidence.default_path(open_checkout(repo).state).unlink(missing_ok=True)
    return repo


@pytest.mark.e2e
def test_same_size_same_mtime_pyc_runs_old_code_without_genstamp(warm_stale_pyc: Path) -> None:
    """The scenario is real: without the plugin, CPython runs the stale bytecode."""
    proc = run_pytest(warm_stale_pyc, "-p", "no:genstamp")
    assert proc.returncode == 1
    assert "assert 1 == 2" in proc.stdout


@pytest.mark.e2e
@pytest.mark.parametrize("extra", [[], ["-n", "2"]], ids=["serial", "xdist"])
def test_same_size_same_mtime_pyc_current_source_runs(
    warm_stale_pyc: Path, extra: list[str]
) -> None:
    """With the plugin the checkout's bytecode is read only from genstamp's cache, and only when
    it records the hash of the source as it is now: the edit runs, although both caches hold
    bytecode of v1 that CPython's own check would accept."""
    repo = warm_stale_pyc
    source = repo / "src" / "calc" / "mod.py"
    stale = pyc_beside(source).read_bytes()
    proc = run_pytest(repo, *extra, bytecode=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr  # value() == 2: the current source
    assert pyc_beside(source).read_bytes() == stale  # the work tree's bytecode was not used
    kept = genstamp_pyc(repo, "src/calc/mod.py").read_bytes()
    assert kept[4:8] == (0b11).to_bytes(4, "little")  # PEP 552 checked-hash pyc
    assert kept[8:16] == importlib.util.source_hash(source.read_bytes())  # of v2
    props = report_of(repo).properties
    tree = props[evidence.P_TREE_END]

    # The tested tree holds the edited source, and that is the source the audit says ran.
    # (Not git_tree(): its scratch index copy has a new mtime, which turns off git's racy-entry
    # check, so git itself may not see a same-second, same-size, same-mtime edit.)
    current = git(repo, "hash-object", "src/calc/mod.py")
    assert git(repo, "rev-parse", f"{tree}:src/calc/mod.py") == current
    assert git(repo, "rev-parse", "HEAD:src/calc/mod.py") != current
    found = audit_of(repo)
    assert found.flags == ()
    assert found.loaded["src/calc/mod.py"] == (current,)
    assert failures(repo) == {}


@pytest.mark.e2e
def test_run_with_bytecode_leaves_none_in_the_tree(tmp_path: Path) -> None:
    """Bytecode of the checkout's modules and pytest's rewritten test modules go to genstamp's
    cache in the git dir, the rewritten ones in a folder named by their source's hash; a test
    module edited with the same size and mtime runs as edited."""
    repo = bytecode_project(
        tmp_path / "repo", "from calc.mod import value\n\n\ndef test_value():\n    assert 1 == 1\n"
    )
    proc = run_pytest(repo, bytecode=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert [p for p in repo.rglob("*.pyc") if ".git" not in p.parts] == []
    assert genstamp_pyc(repo, "src/calc/mod.py").is_file()
    test = repo / "tests" / "test_mod.py"
    digest = importlib.util.source_hash(test.read_bytes()).hex()
    rewritten = open_checkout(repo).state / "pycache" / loader.REWRITTEN / "tests" / "test_mod.py"
    assert [p.name for p in rewritten.iterdir()] == [digest]

    same_size_same_mtime(test, test.read_text().replace("1 == 1", "1 == 2"))
    proc = run_pytest(repo, bytecode=True)
    assert proc.returncode == 1 and "assert 1 == 2" in proc.stdout  # the edited test ran
    digest = importlib.util.source_hash(test.read_bytes()).hex()
    assert [p.name for p in rewritten.iterdir()] == [digest]  # the earlier version's is gone
    assert [p for p in repo.rglob("*.pyc") if ".git" not in p.parts] == []


WARNS_AT_COMPILE = 'import re\n\nDIGITS = re.compile("\\d+")\n'


@pytest.mark.e2e
@pytest.mark.parametrize("where", ["module", "test-module"])
@pytest.mark.parametrize("warns", [True, False], ids=["invalid-escape", "control"])
def test_kept_bytecode_never_hides_a_compile_warning(
    tmp_path: Path, where: str, warns: bool
) -> None:
    """A source whose compilation warns (an invalid escape sequence) is compiled at every run,
    never read from genstamp's cache: once the project makes warnings errors, the warm run
    errors as a clean clone's does, though an earlier run compiled the same bytes quietly."""
    body = WARNS_AT_COMPILE if warns else WARNS_AT_COMPILE.replace("\\d", "[0-9]")
    test = "from calc.mod import value\n\n\ndef test_value():\n    assert value() == 1\n"
    repo = bytecode_project(tmp_path / "repo", test if where == "module" else body + test)
    if where == "module":
        (repo / "src" / "calc" / "mod.py").write_text(body + "\n\ndef value():\n    return 1\n")
        commit_all(repo, "a pattern")
    proc = run_pytest(repo, bytecode=True)  # compiles it, warnings ignored
    assert proc.returncode == 0, proc.stdout + proc.stderr
    with (repo / "pyproject.toml").open("a") as fh:
        fh.write('filterwarnings = ["error"]\n')
    commit_all(repo, "warnings are errors")
    stamp(repo)
    proc = run_pytest(repo, bytecode=True)
    if warns:
        assert proc.returncode != 0 and "invalid escape sequence" in proc.stdout, proc.stdout
        assert "tests-failed" in failures(repo)
    else:
        assert proc.returncode == 0, proc.stdout + proc.stderr
        assert failures(repo) == {}
    kept = (
        genstamp_pyc(repo, "src/calc/mod.py")
        if where == "module"
        else open_checkout(repo).state / "pycache" / loader.REWRITTEN / "tests" / "test_mod.py"
    )
    assert kept.exists() is not warns  # a quiet source's bytecode is kept


@pytest.mark.e2e
@pytest.mark.parametrize("how", ["user-pycache-prefix", "imported-before-the-plugin"])
def test_same_size_same_mtime_pyc_old_code_is_flagged(tmp_path: Path, how: str) -> None:
    """Where genstamp cannot redirect (the user chose a pycache prefix; a plugin of the checkout
    imported the module before genstamp started), the old code runs green — and the evidence
    says the bytecode was not its source's."""
    body = (
        "from calc.mod import value\n\n\n"
        "def test_value():\n    print('VALUE', value())\n    assert value() > 0\n"
    )
    repo = bytecode_project(tmp_path / "repo", body, pythonpath=how != "imported-before-the-plugin")
    source = repo / "src" / "calc" / "mod.py"
    args = ["-s"]
    if how == "user-pycache-prefix":
        prefix = tmp_path / "pycache-prefix"
        env = subprocess_env(bytecode=True, PYTHONPYCACHEPREFIX=str(prefix))
    else:
        # the checkout is installed (its src/ on the path) and one of its modules is a plugin
        (repo / "src" / "calc" / "plug.py").write_text("from calc import mod  # noqa: F401\n")
        commit_all(repo, "plugin")
        stamp(repo)
        env = subprocess_env(bytecode=True, PYTHONPATH=str(repo / "src"))
        args += ["-p", "calc.plug"]
    warm = run_pytest(repo, "-p", "no:genstamp", *args, env=env)
    assert "VALUE 1" in warm.stdout, warm.stdout + warm.stderr
    same_size_same_mtime(source, "def value():\n    return 3\n")

    proc = run_pytest(repo, *args, env=env)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "VALUE 1" in proc.stdout  # the old code ran, green
    found = audit_of(repo)
    stale = [f for f in found.flags if f.kind == audit.STALE]
    assert [(f.module, f.path) for f in stale] == [("calc.mod", "src/calc/mod.py")]
    assert "not compiled from the current source" in stale[0].detail
    # a prefix the hooks' scrub does not know of (given to the tests alone): named, with how
    # `genstamp stamp` scrubs it
    if how == "user-pycache-prefix":
        assert f"PYTHONPYCACHEPREFIX={prefix} genstamp stamp" in stale[0].detail, stale[0].detail
    else:
        assert "PYTHONPYCACHEPREFIX" not in stale[0].detail, stale[0].detail
    got = failures(repo)
    # a plugin of the checkout given for the run only (-p) is not the suite's run either
    also = ["partial-run"] if how == "imported-before-the-plugin" else []
    assert sorted(got) == sorted(["stale-bytecode", *also])
    assert "calc.mod" in got["stale-bytecode"]


# -- the pieces, in-process, on real files and real module objects --------------------------------


def load(name: str, path: Path, modules: dict[str, ModuleType]) -> ModuleType:
    """Import ``path`` as ``name`` into ``modules`` (not sys.modules) with the loader CPython
    would pick for it."""
    loader: importlib.abc.Loader
    if path.suffix == ".pyc":
        loader = importlib.machinery.SourcelessFileLoader(name, str(path))
    else:
        loader = importlib.machinery.SourceFileLoader(name, str(path))
    spec = importlib.util.spec_from_file_location(name, path, loader=loader)
    assert spec is not None
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    modules[name] = module
    return module


def test_checkout_packages(tmp_path: Path) -> None:
    for rel in ("pkg/__init__.py", "src/pkg2/__init__.py", "src/pkg2/sub.py", "not-a-name/x.py"):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text("")
    for rel in ("mod.py", "setup.py", "conftest.py", "noxfile.py", "src/single.py", ".hid.py"):
        (tmp_path / rel).write_text("")
    (tmp_path / "nsdir").mkdir()  # no __init__.py: not claimed
    (tmp_path / "link").symlink_to(tmp_path / "pkg")  # links are not followed
    assert audit.checkout_packages(tmp_path) == ("mod", "pkg", "pkg2", "single")


@pytest.mark.parametrize(
    "data",
    [b"", b"A = 1\n", b"crlf\r\nline\r\n", b"\x00\xff\xfe binary", "é ü\n".encode(), b"x" * 70000],
    ids=["empty", "text", "crlf", "binary", "utf8", "large"],
)
def test_blob_id_is_gits(tmp_path: Path, data: bytes) -> None:
    """The audit's blob ids are computed in pure Python; git's are the oracle (no filters:
    the bytes as they are)."""
    import pygit2

    path = tmp_path / "file.bin"
    path.write_bytes(data)
    theirs = subprocess.run(
        ["git", "hash-object", "--no-filters", str(path)], capture_output=True, text=True
    ).stdout.strip()
    assert audit.blob_id(str(path)) == theirs == str(pygit2.hashfile(str(path)))


def test_audit_modules_on_real_modules(tmp_path: Path) -> None:
    root = init_repo(tmp_path / "repo")
    (root / "calc").mkdir()
    (root / "calc" / "__init__.py").write_text("A = 1\n")
    (root / "helper.py").write_text("B = 2\n")
    (root / "calc" / "old.py").write_text("C = 3\n")
    py_compile.compile(str(root / "calc" / "old.py"), cfile=str(root / "calc" / "old.pyc"))
    (root / "calc" / "old.py").unlink()
    elsewhere = tmp_path / "elsewhere"
    (elsewhere / "calc").mkdir(parents=True)
    (elsewhere / "calc" / "far.py").write_text("D = 4\n")
    (elsewhere / "unrelated.py").write_text("E = 5\n")

    modules: dict[str, ModuleType] = {}
    load("calc", root / "calc" / "__init__.py", modules)
    load("helper", root / "helper.py", modules)  # not a listed package, but inside the root
    load("calc.old", root / "calc" / "old.pyc", modules)
    load("calc.far", elsewhere / "calc" / "far.py", modules)
    load("unrelated", elsewhere / "unrelated.py", modules)  # neither: ignored
    modules["sys"] = sys  # built-in: no file

    got = audit.audit_modules(root, ["calc"], None, modules=modules)
    assert got.packages == ("calc",)
    assert got.loaded == {
        "calc/__init__.py": (git(root, "hash-object", "calc/__init__.py"),),
        "helper.py": (git(root, "hash-object", "helper.py"),),
    }
    assert {(f.kind, f.module) for f in got.flags} == {
        (audit.SOURCELESS, "calc.old"),
        (audit.FOREIGN, "calc.far"),
    }
    foreign = next(f for f in got.flags if f.kind == audit.FOREIGN)
    assert foreign.path == os.path.realpath(elsewhere / "calc" / "far.py")
    # with the package unlisted, the far module is nobody's business
    assert audit.audit_modules(root, [], None, modules=modules).flags == (
        next(f for f in got.flags if f.kind == audit.SOURCELESS),
    )


def test_pyc_older_than_the_generation_is_stale(tmp_path: Path) -> None:
    """Bytecode in the work tree that CPython would use, written before the generation began."""
    root = init_repo(tmp_path / "repo")
    source = root / "mod.py"
    source.write_text("X = 1\n")
    cached = pyc_beside(source)
    py_compile.compile(str(source), cfile=str(cached), doraise=True)
    modules: dict[str, ModuleType] = {}
    module = load("mod", source, modules)
    assert module.__spec__ is not None
    module.__spec__.cached = str(cached)
    after = cached.stat().st_mtime_ns + 1
    got = audit.audit_modules(root, ["mod"], after, modules=modules)
    assert [(f.kind, f.module) for f in got.flags] == [(audit.STALE, "mod")]
    assert "older than the generation" in got.flags[0].detail
    # the same bytecode, written after the generation began and compiled from this source: fine
    before = cached.stat().st_mtime_ns - 1
    assert audit.audit_modules(root, ["mod"], before, modules=modules).flags == ()
    # ...unless a trusted cache holds it: then it is not looked at
    trusted = audit.audit_modules(root, ["mod"], after, modules=modules, trusted_cache=str(root))
    assert trusted.flags == ()


def test_merge_and_json_round_trip() -> None:
    flag = audit.Flag(audit.FOREIGN, "calc", "/elsewhere/calc/__init__.py", "outside")
    a = audit.Audit(("calc",), {"src/calc/__init__.py": ("1" * 40,)}, (flag,))
    b = audit.Audit(
        ("calc", "extra"),
        {"src/calc/extra.py": ("2" * 40,), "src/calc/__init__.py": ("1" * 40, "3" * 40)},
        (flag,),
    )
    merged = audit.merge([a, b])
    assert merged.packages == ("calc", "extra")
    # every distinct content a path was loaded with, once each, in the order first seen
    assert merged.loaded == {
        "src/calc/__init__.py": ("1" * 40, "3" * 40),
        "src/calc/extra.py": ("2" * 40,),
    }
    assert merged.flags == (flag,)  # one flag, however many processes saw it
    assert audit.from_json(merged.to_json()) == merged
    with pytest.raises(ValueError, match="audit format"):
        audit.from_json('{"version": 99, "packages": [], "loaded": {}, "flags": []}')
    with pytest.raises(ValueError, match="audit format 1"):  # genstamp 0.1.0's, one blob a path
        audit.from_json('{"version": 1, "packages": [], "loaded": {}, "flags": []}')


def test_configured_packages_are_audited(tmp_path: Path) -> None:
    """[tool.genstamp] packages names what the checkout holds when it cannot be found (here a
    ``lib/`` layout): a foreign copy of it is then flagged."""
    repo = init_repo(tmp_path / "repo")
    (repo / "lib" / "calc").mkdir(parents=True)
    (repo / "lib" / "calc" / "__init__.py").write_text(V2)
    (repo / "tests").mkdir()
    (repo / "tests" / "test_add.py").write_text(TEST_ADD)
    (repo / ".gitignore").write_text(GITIGNORE)
    other = tmp_path / "installed"
    (other / "calc").mkdir(parents=True)
    (other / "calc" / "__init__.py").write_text(V1)
    env = subprocess_env(PYTHONPATH=str(other))
    results = {}
    for packages in ("", '\n[tool.genstamp]\npackages = ["calc"]\n'):
        (repo / "pyproject.toml").write_text(
            '[tool.pytest.ini_options]\ntestpaths = ["tests"]\n' + packages
        )
        commit_all(repo, "config")
        stamp(repo)
        proc = run_pytest(repo, env=env)
        assert proc.returncode == 0, proc.stdout + proc.stderr
        results[bool(packages)] = audit_of(repo)
    # found from the tree: ``lib`` itself (a folder of Python files), not the calc inside it
    assert results[False].packages == ("lib",) and results[False].flags == ()
    assert results[True].packages == ("calc",)
    assert [(f.kind, f.module) for f in results[True].flags] == [(audit.FOREIGN, "calc")]


@pytest.mark.parametrize("declared", [True, False])
def test_an_installed_copy_of_a_file_the_build_writes_is_the_builds(
    tmp_path: Path, declared: bool
) -> None:
    """versioneer's build rewrites ``_version.py`` in the installed package (tox's install, a
    clean room's): that copy differs from the tree's by the build's own doing. A version file
    the build writes (versioneer's, by its configuration) is not foreign-origin; the control,
    any other file, is (a module generated from data and declared ``generated`` included: a
    stale install of it ran stale code)."""
    from genstamp import loads

    root = tmp_path / "repo"
    (root / "src" / "calc").mkdir(parents=True)
    (root / "src" / "calc" / "_version.py").write_text("def get_versions():\n    return {}\n")
    site_copy = tmp_path / "venv" / "lib" / "python3.11" / "site-packages" / "calc"
    site_copy.mkdir(parents=True)
    copy = site_copy / "_version.py"
    copy.write_text('version_json = \'{"version": "1.0"}\'\n')
    load = loads.Load(str(copy), loads.blob_of(copy.read_bytes()), "calc._version", loads.SOURCE)
    globs = ["src/calc/_version.py"] if declared else []
    judged = audit.judge([load], root, {"calc": str(root / "src")}, None, (), None, globs)
    assert [f.kind for f in judged.flags] == ([] if declared else [audit.FOREIGN])


@pytest.mark.parametrize("made", ["before-the-run", "linked-during-the-run", "env-made-by-the-run"])
def test_an_installed_copy_is_the_runs_own_only_in_an_environment_the_run_made(
    tmp_path: Path, made: str
) -> None:
    """A stale installed copy of the checkout's module is foreign-origin, also when its inode
    gains a hard link during the run (an installer's cache links it elsewhere: its ctime moves).
    The control: a virtual environment the run itself made (as tox does), holding a copy the
    tests installed, is theirs."""
    import time

    from genstamp import loads

    root = tmp_path / "repo"
    (root / "src" / "calc").mkdir(parents=True)
    (root / "src" / "calc" / "__init__.py").write_text("def add(a, b):\n    return a + b\n")

    def environment() -> Path:
        venv = tmp_path / "venv"
        (venv / "lib" / "python3.11" / "site-packages" / "calc").mkdir(parents=True)
        (venv / "pyvenv.cfg").write_text("home = /usr/bin\n")
        copy = venv / "lib" / "python3.11" / "site-packages" / "calc" / "__init__.py"
        copy.write_text("def add(a, b):\n    return a - b\n")
        return copy

    copy = environment() if made != "env-made-by-the-run" else None
    time.sleep(0.05)  # past the file system's clock tick
    marker = tmp_path / "began"
    marker.write_text("")
    began_ns = marker.stat().st_ctime_ns
    time.sleep(0.05)
    if copy is None:
        copy = environment()
    elif made == "linked-during-the-run":
        os.link(copy, tmp_path / "cache-link.py")
        assert copy.stat().st_ctime_ns >= began_ns
    load = loads.Load(str(copy), loads.blob_of(copy.read_bytes()), "calc", loads.SOURCE)
    judged = audit.judge([load], root, {"calc": str(root / "src")}, None, (), began_ns)
    kinds = [f.kind for f in judged.flags]
    assert kinds == ([] if made == "env-made-by-the-run" else [audit.FOREIGN]), judged.flags


def built_and_edited(
    tmp_path: Path, stem: str, name: str, others: dict[str, str]
) -> tuple[Path, Path, Path]:
    """A repository whose extension ``pkg/STEM`` was built before its source ``pkg/NAME`` was
    last edited (every file of ``others`` older than the build): it, the build, the source."""
    repo = init_repo(tmp_path / "repo")
    (repo / "pkg").mkdir()
    built = repo / "pkg" / f"{stem}{sysconfig.get_config_var('EXT_SUFFIX')}"
    built.write_bytes(b"\x7fELF")
    source = repo / "pkg" / name
    source.write_text("/* a source */\n")
    for rel, text in others.items():
        (repo / rel).write_text(text)
    commit_all(repo, "sources")
    st = built.stat()
    os.utime(source, ns=(st.st_atime_ns, st.st_mtime_ns + 10**9))
    for rel in others:
        os.utime(repo / rel, ns=(st.st_atime_ns, st.st_mtime_ns - 10**9))
    return repo, built, source


@pytest.mark.parametrize("name", ["fast.C", "fast.CPP", "fast.c++", "fast.cp", "fast.cxx"])
def test_a_cpp_source_of_any_spelling_is_a_native_source(tmp_path: Path, name: str) -> None:
    """gcc and setuptools take `.C`, `.CPP`, `.c++` and `.cp` for C++: an edit of one after
    the build makes the extension stale, beside it or anywhere in the tree."""
    repo, built, source = built_and_edited(tmp_path, "fast", name, {"notes.md": "not a source\n"})
    natives = audit.native_sources(repo)
    assert natives == [str(source)]
    st = built.stat()
    assert audit.newer_sources(str(built), st.st_mtime_ns, []) == [str(source)]


@pytest.mark.parametrize("name", ["fast.i", "fast.m", "fast.mm", "fast.S", "fast.s", "fast.asm"])
@pytest.mark.parametrize("named", [True, False])
def test_a_source_of_another_kind_is_native_where_a_build_file_names_it(
    tmp_path: Path, name: str, named: bool
) -> None:
    """SWIG's `.i` (`Extension("_fast", ["pkg/fast.i"])`), Objective-C and assembly build
    extensions too: one a build file names is a native source, and an edit of it after the
    build makes the extension stale (an edited SWIG interface, its generated wrapper ignored,
    was accepted). One no build file names (a MATLAB `.m`, a data file named `.s`) is none:
    its edit refuses no extension."""
    listed = f"'pkg/{name}'" if named else "'pkg/other.c'"
    others = {
        "pkg/other.c": "int g(void) { return 1; }\n",
        "setup.py": f"setup(ext_modules=[Extension('pkg._fast', [{listed}])])\n",
    }
    repo, built, source = built_and_edited(tmp_path, "_fast", name, others)
    st = built.stat()
    natives = audit.native_sources(repo)
    assert (str(source) in natives) is named, natives
    assert (audit.newer_sources(str(built), st.st_mtime_ns, natives) == [str(source)]) is named


@pytest.mark.parametrize(
    ("name", "others", "counted"),
    [
        ("ops.inc", {"pkg/fast.c": '#include "ops.inc"\n'}, True),
        ("ops.inc", {"pkg/fast.c": '#  include "pkg/ops.inc"\n'}, True),
        ("ops.inc", {"pkg/fast.cpp": "#include <ops.inc>\n"}, True),  # through -Ipkg
        ("table.def", {"pkg/fast.pyx": "include 'table.def'\n"}, True),  # Cython's
        ("ops.inc", {"pkg/fast.c": "int f(void);\n", "README.md": '#include "ops.inc"\n'}, False),
        (
            "more.inc",
            {"pkg/fast.c": '#include "ops.inc"\n', "pkg/ops.inc": '#include "more.inc"\n'},
            True,
        ),
        ("defs.inc", {"pkg/_fast.pyx.in": 'include "defs.inc"\n'}, True),  # a template's
        ("consts.inc", {"pkg/fast.f90": "      INCLUDE 'consts.inc'\n"}, True),  # Fortran's
        ("typemaps.inc", {"pkg/fast.c": '%include "typemaps.inc"\n'}, True),
        ("format", {"pkg/fast.cpp": "#include <format>\n"}, False),  # the standard library's
        ("_fast.pyx.in", {}, True),  # Tempita's template of a Cython source
        ("loops.c.src", {}, True),  # numpy's
        ("config.h.in", {}, True),
        ("MANIFEST.in", {}, False),
    ],
)
def test_what_a_native_source_includes_and_its_templates_are_native_sources(
    tmp_path: Path, name: str, others: dict[str, str], counted: bool
) -> None:
    """A file a native source includes is a source of the build whatever it is named (an
    edited `ops.inc` left the old build accepted: only headers' suffixes counted), and so is
    a template a build makes a source from. One that no native source includes (named in a
    README) is none, nor a template of no source (`MANIFEST.in`), nor a file named as a header
    of C++'s standard library (`debian/source/format`). Read so under `color.ui=always`."""
    repo, built, source = built_and_edited(tmp_path, "_fast", name, others)
    git(repo, "config", "color.ui", "always")
    natives = audit.native_sources(repo)
    assert (str(source) in natives) is counted, natives
    st = built.stat()
    assert (audit.newer_sources(str(built), st.st_mtime_ns, natives) == [str(source)]) is counted


@pytest.mark.parametrize("committed", [False, True])
def test_a_copy_of_a_build_is_as_old_as_the_build_unless_the_tree_holds_it(
    tmp_path: Path, committed: bool
) -> None:
    """An extension the run copied into the tree is as old as the build in the work tree that
    holds its bytes (an ignored `build/lib/`), not as new as the copy; a prebuilt binary the
    tree holds (committed) is what every clone's run copies: the copy's own time then."""
    repo = init_repo(tmp_path / "repo")
    name = f"_fast{sysconfig.get_config_var('EXT_SUFFIX')}"
    (repo / ".gitignore").write_text("build/\npkg/*.so\n")
    original = repo / ("prebuilt" if committed else "build/lib") / name
    original.parent.mkdir(parents=True)
    original.write_bytes(b"\x7fELF a build")
    commit_all(repo, "a prebuilt binary" if committed else "its ignored build")
    os.utime(original, ns=(10**18, 10**18))
    (repo / "pkg").mkdir()
    copy = Path(shutil.copy(original, repo / "pkg" / name))
    own = copy.stat().st_mtime_ns
    assert own != 10**18
    assert audit._built_at(str(copy), own, str(repo)) == (own if committed else 10**18)


@pytest.mark.parametrize(
    ("files", "named"),
    [
        ({"src/ext.cpp": "PYBIND11_MODULE(_core, m) {}\n"}, True),  # pybind11's macro
        ({"src/lib.rs": "#[pymodule]\nfn _core(m: &Bound<PyModule>) {}\n"}, True),  # pyo3
        ({"src/impl.c": "PyMODINIT_FUNC PyInit__core(void) { return 0; }\n"}, True),
        ({"CMakeLists.txt": "nanobind_add_module(_core src/x.cpp)\n"}, True),
        ({"pyproject.toml": '[tool.maturin]\nmodule-name = "pkg._core"\n'}, True),
        ({"build.py": 'M = "pkg._core"\nffi.set_source(M, "int f(void);")\n'}, True),
        ({"src/other.c": "int _core_helper(void) { return 0; }\n"}, False),
        ({"src/other.c": "/* speeds up the core */\n", "setup.py": "setup()\n"}, False),
    ],
)
def test_what_can_build_an_extension_module_is_read_from_the_tree(
    tmp_path: Path, files: dict[str, str], named: bool
) -> None:
    """An in-place extension module counts as built from the tree when anything there names
    it: a build file, a native source defining it under any binding's spelling, a cffi script."""
    repo = init_repo(tmp_path / "repo")
    for rel, text in files.items():
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        (repo / rel).write_text(text)
    commit_all(repo, "sources")
    natives = audit.native_sources(repo)
    assert audit._named(str(repo), "_core", natives) is named


@pytest.mark.parametrize("optimize", [0, 2])
@pytest.mark.parametrize(
    "mode",
    [py_compile.PycInvalidationMode.CHECKED_HASH, py_compile.PycInvalidationMode.UNCHECKED_HASH],
)
def test_a_hash_based_pyc_vouches_for_its_source_not_its_code(
    tmp_path: Path, optimize: int, mode: py_compile.PycInvalidationMode
) -> None:
    """A hash-based pyc (PEP 552) whose hash is the current source's but whose code is not
    what the source compiles to (compiled with asserts stripped, under the plain name) ran
    other code than the source's; the control, compiled as CPython compiles it, is the
    source's own."""
    source = tmp_path / "mod.py"
    source.write_text("def check(x):\n    assert x > 0\n    return x\n")
    cached = Path(importlib.util.cache_from_source(str(source)))
    py_compile.compile(
        str(source), cfile=str(cached), optimize=optimize, invalidation_mode=mode, doraise=True
    )
    why = audit._stale_cache(str(source), str(cached), str(tmp_path), None)
    if optimize:
        assert why is not None and "not compiled from the current source" in why, why
    else:
        assert why is None, why


def test_the_counterpart_of_a_subpackage_the_work_tree_maps(tmp_path: Path) -> None:
    """`package-dir = {"nsx.mine" = "lib/mine"}`: an installed `nsx/mine/__init__.py` (of any
    distribution: a release under the project's former name) is compared with the tree's
    `lib/mine/__init__.py`. Found only for a copy installed from this tree, a stale one of
    another distribution was taken for a dependency's portion of the namespace."""
    root = tmp_path / "p"
    (root / "lib" / "mine").mkdir(parents=True)
    (root / "lib" / "mine" / "__init__.py").write_text("X = 1\n")
    (root / "pyproject.toml").write_text(
        '[project]\nname = "nsx-mine"\nversion = "1"\n'
        '[tool.setuptools]\npackage-dir = {"nsx.mine" = "lib/mine"}\n'
    )
    installed = tmp_path / "env" / "site-packages" / "nsx" / "mine" / "__init__.py"
    installed.parent.mkdir(parents=True)
    installed.write_text("X = 2\n")
    found = audit.counterpart("nsx.mine", str(installed), root, [str(root)])
    assert found == "lib/mine/__init__.py"
    assert audit.counterpart("nsx.other", str(installed.parent / "other.py"), root) is None
