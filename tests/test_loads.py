"""Loads recorded when they happen: what the code under test does to ``sys.modules``,
``sys.path`` or its own files cannot hide a load from the audit.

Each scenario is a real pytest process in a real repository, with a second clone standing for
"the other checkout"; each has a control in which the cause is removed and nothing is flagged.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from conftest import (
    commit_all,
    committed,
    git,
    init_repo,
    installed_plugin,
    run_pytest,
    subprocess_env,
    write_files,
)

from genstamp import audit, evidence, loads, restamp
from genstamp.repo import open_checkout
from genstamp.verify import verify

CALC = "VALUE = 1\n\n\ndef add(a, b):\n    return a + b\n"
OTHER = "VALUE = 2\n\n\ndef add(a, b):\n    return b + a\n"


def audit_of(repo: Path) -> audit.Audit:
    report = evidence.read_report(evidence.default_path(open_checkout(repo).state))
    return audit.from_json(report.properties[evidence.P_AUDIT])


def failures(repo: Path) -> dict[str, str]:
    return {f.rule: f.message for f in verify(open_checkout(repo)).failures}


def foreign_unless(repo: Path, accepted: bool) -> str:
    """The gate's verdict on the run: nothing refused when ``accepted``, else foreign-origin
    alone; its message."""
    found = failures(repo)
    if accepted:
        assert found == {}, found
        return ""
    assert list(found) == ["foreign-origin"], found
    return found["foreign-origin"]


def project(base: Path, tests: str, files: dict[str, str] | None = None) -> tuple[Path, Path]:
    """A src-layout project and a clone of it (the other checkout) whose calc differs."""
    repo = init_repo(base / "work")
    for rel, text in {
        "src/calc/__init__.py": CALC,
        "tests/test_it.py": tests,
        "pyproject.toml": '[tool.pytest.ini_options]\ntestpaths = ["tests"]\n',
        ".gitignore": "__pycache__/\n*.py[co]\n",
        **(files or {}),
    }.items():
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        (repo / rel).write_text(text)
    commit_all(repo, "project")
    other = base / "other"
    git(base, "clone", "-q", str(repo), str(other))
    for rel in files or {}:
        if rel.startswith("src/"):
            (other / rel).write_text((other / rel).read_text() + "# the other clone's\n")
    (other / "src" / "calc" / "__init__.py").write_text(OTHER)
    restamp.begin(open_checkout(repo))
    return repo, other


def exported(repo: Path, into: Path) -> Path:
    """HEAD of ``repo`` as `git archive` exports it, unpacked in ``into``: a copy of the
    project that is no git work tree (an unpacked sdist is alike)."""
    into.mkdir()
    archive = subprocess.run(["git", "archive", "HEAD"], cwd=repo, capture_output=True, check=True)
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive.stdout, check=True)
    return into


def run(repo: Path, *args: str, **env: str) -> str:
    """A green pytest run: its output."""
    proc = run_pytest(repo, *args, env=subprocess_env(**env))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc.stdout


def scenario(repo: Path, test: str, *args: str, **env: str) -> audit.Audit:
    """Commit ``test`` as the suite, stamp, run pytest green: the audit of the evidence."""
    return scenario_told(repo, test, *args, **env)[0]


def scenario_told(repo: Path, test: str, *args: str, **env: str) -> tuple[audit.Audit, str]:
    """``scenario``, with what the run told (its output)."""
    (repo / "tests" / "test_it.py").write_text(test)
    commit_all(repo, "test")
    restamp.begin(open_checkout(repo))
    out = run(repo, *args, **env)
    return audit_of(repo), out


# -- code loaded before the run began recording ----------------------------------------------------

IN_ONE_INTERPRETER = """\
import subprocess, sys, pytest
first = {first!r}
if first == "import":
    import calc  # a notebook's cell, before the tests
elif first == "run":
    assert pytest.main(["-q", "-p", "no:cacheprovider"]) == 0
if {edit!r}:
    with open("src/calc/__init__.py", "w") as fh:  # saved, and committed
        fh.write({text!r})
subprocess.run(["git", "commit", "-qam", "edit", "--allow-empty"], check=True)
sys.exit(pytest.main(["-q", "-p", "no:cacheprovider"]))
"""


@pytest.mark.e2e
@pytest.mark.parametrize("first", ["import", "run"])
@pytest.mark.parametrize("edit", [True, False], ids=["edited", "unchanged"])
def test_code_loaded_before_the_run_from_a_file_changed_since_is_refused(
    tmp_path: Path, first: str, edit: bool
) -> None:
    """pytest.main() in an interpreter that imported the package earlier (a notebook, a REPL,
    a second pytest.main()): the tests use the module in memory, whatever the file holds now.
    Its file changed after the process started: what ran is unknown, and the gate refuses;
    in the control the file is not touched (unchanged since the process started, it holds
    what any load of it read) and the run is accepted."""
    repo, _ = project(tmp_path, "import calc\n\n\ndef test_value():\n    assert calc.VALUE == 1\n")
    restamp.begin(open_checkout(repo))
    text = CALC.replace("VALUE = 1", "VALUE = 2")
    script = IN_ONE_INTERPRETER.format(first=first, edit=edit, text=text)
    env = subprocess_env(PYTHONPATH=str(repo / "src"))
    proc = subprocess.run(
        [sys.executable, "-c", script], cwd=repo, env=env, capture_output=True, text=True
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr  # the old code passed
    found = failures(repo)
    if not edit:
        assert found == {}, found
        return
    assert list(found) == ["foreign-origin"], found
    assert (
        "calc from <code loaded before the run from src/calc/__init__.py>"
        in found["foreign-origin"]
    ), found
    fresh = run_pytest(repo, env=subprocess_env(PYTHONPATH=str(repo / "src")))
    assert fresh.returncode == 1  # a new process runs the file as it is: the edit fails


# -- sys.modules restored after each test ---------------------------------------------------------

RESTORING = """
import importlib, sys
import pytest

@pytest.fixture(autouse=True)
def isolated_modules():
    before = dict(sys.modules)
    path = list(sys.path)
    yield
    sys.modules.clear()
    sys.modules.update(before)
    sys.path[:] = path

def test_other_calc():
    sys.path.insert(0, {where!r})
    sys.modules.pop("calc", None)
    import calc
    assert calc.add(2, 3) == 5
"""


@pytest.mark.e2e
@pytest.mark.parametrize("foreign", [True, False], ids=["other-clone", "control"])
def test_restored_sys_modules_cannot_hide_a_foreign_load(tmp_path: Path, foreign: bool) -> None:
    base = tmp_path
    repo, other = project(base, "")
    where = str(other / "src") if foreign else str(repo / "src")
    found = scenario(repo, RESTORING.format(where=where))
    flagged = [(f.kind, f.module) for f in found.flags]
    if foreign:
        assert flagged == [(audit.FOREIGN, "calc")]
        assert "foreign-origin" in failures(repo)
    else:
        assert flagged == []
        blob = git(repo, "hash-object", "src/calc/__init__.py")
        assert found.loaded["src/calc/__init__.py"] == (blob,)
        assert failures(repo) == {}


def judged_as_a_clean_clone_fares(
    repo: Path, found: audit.Audit, told: str, *, accepted: bool
) -> bool:
    """Accepted with nothing flagged, or refused by ``calc_util`` alone as the run foretold;
    then the oracle: a clean clone of the tested tree (``src`` on the path, as a fresh
    install) fails at import. Returns ``accepted``."""
    flagged = [(f.kind, f.module) for f in found.flags]
    if accepted:
        assert flagged == [], found
        assert failures(repo) == {}
        return True
    assert flagged == [(audit.FOREIGN, "calc_util")], found
    assert list(failures(repo)) == ["foreign-origin"]
    assert "calc_util" in failures(repo)["foreign-origin"]
    assert "will refuse: foreign-origin: calc_util" in told, told
    clone = repo.parent / "clean"
    git(repo.parent, "clone", "-q", str(repo), str(clone))
    proc = run_pytest(clone, "-p", "no:genstamp", env=subprocess_env(PYTHONPATH="src"))
    assert proc.returncode != 0 and "calc_util" in proc.stdout, proc.stdout
    return False


# -- a module the tested tree no longer holds, from another clone --------------------------------

USES_UTIL = "from calc_util import plus\n\n\ndef add(a, b):\n    return plus(a, b)\n"
UTIL = "def plus(a, b):\n    return a + b\n"


NAMED = (
    '[project]\nname = "calc"\nversion = "0"\n[tool.pytest.ini_options]\ntestpaths = ["tests"]\n'
)


@pytest.mark.e2e
@pytest.mark.parametrize(
    "source",
    [
        "other-clone",
        "diverged-clone",
        "renamed-project",
        "plugin-of-another-clone",
        "unrelated",
        "merged-library",
        "shallow-clone",
        "shallow-clone-gone-apart",
        "checked-out-during-the-run",
    ],
)
def test_a_module_the_tree_dropped_loaded_from_another_clone(tmp_path: Path, source: str) -> None:
    """The tested tree deleted ``src/calc_util.py`` and left its import behind; another clone
    still provides it on the path: a clean clone fails at import, and code of another clone
    ran. ``calc_util`` is none of the tree's import roots: the recorder takes code of any
    other git work tree, and the end asks whether that work tree is a checkout of this
    project: the same project name, or (unnamed) shared commits. So is another clone whose
    history went on apart (neither HEAD in the other's store), and a module of another clone
    that pytest imported as a plugin (``-p``) before any recording began. The same module from
    an unrelated repository, or from a library whose history was merged into this one but
    which names another project, is the environment's (a dependency developed beside it)."""
    named = source in ("diverged-clone", "merged-library", "renamed-project")
    files = {"src/calc_util.py": UTIL, **({"pyproject.toml": NAMED} if named else {})}
    repo, other = project(base := tmp_path, "", files)
    if source.startswith("shallow-clone"):  # unnamed: no root commit of its own to compare
        (repo / "README").write_text("history beyond the root commit\n")
        commit_all(repo, "a second commit: the shallow clone's boundary")
        shutil.rmtree(other)
        git(base, "clone", "-q", "--depth", "1", f"file://{repo}", str(other))
        assert git(other, "rev-parse", "--is-shallow-repository") == "true"
    (repo / "src" / "calc" / "__init__.py").write_text(USES_UTIL)
    (other / "src" / "calc" / "__init__.py").write_text(USES_UTIL)
    (repo / "src" / "calc_util.py").unlink()
    commit_all(repo, "drop calc_util (its import left behind)")
    where = other / "src"
    args: tuple[str, ...] = ()
    if source in ("diverged-clone", "shallow-clone-gone-apart"):
        commit_all(other, "the other clone's own commit")
    elif source == "renamed-project":  # one history, and this clone renamed the project
        (repo / "pyproject.toml").write_text(NAMED.replace('"calc"', '"calc2"'))
        commit_all(repo, "rename the project")
    elif source == "plugin-of-another-clone":
        args = ("-p", "calc_util")
    elif source == "unrelated":
        where = init_repo(base / "lib")
        (where / "calc_util.py").write_text(UTIL)
        commit_all(where, "an unrelated library")
    elif source == "merged-library":
        lib = init_repo(base / "lib")
        (lib / "src").mkdir()
        (lib / "src" / "calc_util.py").write_text(UTIL)
        (lib / "pyproject.toml").write_text(NAMED.replace('"calc"', '"calc-util"'))
        commit_all(lib, "a library of its own")
        git(repo, "fetch", "-q", str(lib), "HEAD")
        git(
            repo,
            "merge",
            "-q",
            "--allow-unrelated-histories",
            "-s",
            "ours",
            "-m",
            "m",
            "FETCH_HEAD",
        )
        where = lib / "src"
    test = "import calc\n\n\ndef test_add():\n    assert calc.add(2, 3) == 5\n"
    if source == "checked-out-during-the-run":  # its HEAD is new; the clone is not
        test = (
            "import subprocess\n\n\ndef test_add():\n"
            f"    git = ['git', '-C', {str(other)!r}]\n"
            "    subprocess.run([*git, 'checkout', '-q', '-B', 'x'], check=True)\n"
            "    import calc\n    assert calc.add(2, 3) == 5\n"
        )
    path = f"{repo / 'src'}{os.pathsep}{where}"
    found, told = scenario_told(repo, test, *args, PYTHONPATH=path)
    if judged_as_a_clean_clone_fares(
        repo, found, told, accepted=source in ("unrelated", "merged-library")
    ):
        return


def pip_install(repo: Path, site: Path) -> None:
    """`pip install .` of ``repo`` (not editable, offline) into the folder ``site``."""
    pip = [sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--no-build-isolation"]
    installed = subprocess.run(
        [*pip, "--no-index", "--target", str(site), str(repo)],
        capture_output=True,
        text=True,
        env=subprocess_env(),
        timeout=300,
    )
    assert installed.returncode == 0, installed.stderr


BUILT = "__pycache__/\n*.py[co]\nbuild/\n*.egg-info/\n"  # what pip's build leaves


def installed_project(tmp_path: Path, files: dict[str, str], message: str) -> tuple[Path, Path]:
    """A project committed with ``files`` and `pip install .`-ed into a folder: both."""
    repo = committed(tmp_path / "work", {**files, ".gitignore": BUILT}, message)
    site = tmp_path / "env" / "site-packages"
    pip_install(repo, site)
    return repo, site


MAPPED = """[project]
name = "pkgx"
version = "0"
[tool.setuptools]
package-dir = {"pkgx" = "source"}
packages = ["pkgx"]
[tool.pytest.ini_options]
testpaths = ["tests"]
"""


NS_DEPENDENCY = """[project]
name = "nsb"
version = "1"
[tool.setuptools.packages.find]
include = ["ns.*"]
namespaces = true
"""


# a namespace package as zope.*, the older way: every portion holds this same __init__.py
PKGUTIL_NS = '__path__ = __import__("pkgutil").extend_path(__path__, __name__)\n'


@pytest.mark.e2e
@pytest.mark.parametrize("style", ["pep420", "pkgutil"])
@pytest.mark.parametrize("case", ["a-dependencys-portion", "this-projects-dropped-portion"])
def test_a_namespace_package_shared_with_installed_code(
    tmp_path: Path, case: str, style: str
) -> None:
    """``ns`` is a namespace package: the tree holds ``ns/a``; an installed dependency adds
    ``ns/b`` (as google.*, azure.* do; zope.* with an ``__init__.py`` that ``pkgutil`` or
    ``pkg_resources`` extends). Its portion is the dependency's, not code of another checkout.
    A portion this project's own stale install still provides (``ns/c``, dropped from the tree
    since) is refused."""
    site = tmp_path / "env" / "site-packages"
    init = {"ns/__init__.py": PKGUTIL_NS} if style == "pkgutil" else {}
    dependency = committed(
        tmp_path / "nsb",
        {"ns/b/__init__.py": "B = 1\n", "pyproject.toml": NS_DEPENDENCY, **init},
    )
    pip_install(dependency, site)
    own = (
        '[project]\nname = "nsa"\nversion = "0"\n[tool.setuptools.packages.find]\n'
        'where = ["src"]\ninclude = ["ns.*"]\nnamespaces = true\n'
        '[tool.pytest.ini_options]\ntestpaths = ["tests"]\n'
    )
    files = {
        "src/ns/a/__init__.py": "A = 1\n",
        "src/ns/c/__init__.py": "C = 1\n",
        "tests/test_it.py": "",
        "pyproject.toml": own,
        ".gitignore": BUILT,
        **{f"src/{rel}": text for rel, text in init.items()},
    }
    repo = committed(tmp_path / "work", files, "ns.a and ns.c")
    mine = tmp_path / "env2" / "site-packages"  # pip --target does not merge into a folder
    pip_install(repo, mine)  # this project's own install, ns/c included
    assert (mine / "ns" / "c" / "__init__.py").is_file()
    git(repo, "rm", "-q", "-r", "src/ns/c")
    commit_all(repo, "drop ns.c")
    uses = "ns.b" if case == "a-dependencys-portion" else "ns.c"
    test = f"import ns.a\nimport {uses}\n\n\ndef test_ns():\n    assert ns.a.A == 1\n"
    path = os.pathsep.join(str(p) for p in (repo / "src", site, mine))
    found = scenario(repo, test, PYTHONPATH=path)
    flagged = [(f.kind, f.module) for f in found.flags]
    if case == "a-dependencys-portion":
        assert flagged == [], found
        assert failures(repo) == {}
        return
    assert flagged == [(audit.FOREIGN, "ns.c")], found
    assert list(failures(repo)) == ["foreign-origin"]


@pytest.mark.e2e
@pytest.mark.parametrize("case", ["fresh-install", "edited-since"])
def test_a_package_the_project_maps_to_a_folder_of_another_name(tmp_path: Path, case: str) -> None:
    """``package-dir = {"pkgx" = "source"}``: the tree holds ``pkgx`` in ``source/``, so the
    tests import it from an install. A fresh `pip install .` is the tree's code; one made
    before an edit of ``source/`` is not, and is refused naming the module."""
    files = {
        "source/__init__.py": "from pkgx.calc import add\n",
        "source/calc.py": "def add(a, b):\n    return a + b\n",
        "tests/test_it.py": "import pkgx\n\n\ndef test_add():\n    assert pkgx.add(2, 3) == 5\n",
        "pyproject.toml": MAPPED,
    }
    repo, site = installed_project(tmp_path, files, "pkgx")
    if case == "edited-since":
        (repo / "source" / "calc.py").write_text("def add(a, b):\n    return b + a\n")
        commit_all(repo, "edit after the install")
    restamp.begin(open_checkout(repo))
    run(repo, PYTHONPATH=str(site))
    if case == "fresh-install":
        found = audit_of(repo)
        assert found.flags == (), found
        assert found.loaded["source/calc.py"] == (git(repo, "hash-object", "source/calc.py"),)
        assert failures(repo) == {}
    else:
        assert list(failures(repo)) == ["foreign-origin"]
        assert "pkgx.calc" in failures(repo)["foreign-origin"]


FAST = """[project]
name = "fastpkg"
version = "0"
[tool.setuptools]
packages = ["fastpkg"]
package-dir = {"" = "lib"}
[tool.pytest.ini_options]
testpaths = ["tests"]
"""
WITH_FALLBACK = """try:
    from fastpkg._fast import double
except ImportError:
    from fastpkg._slow import double
try:
    from fastpkg import _accel  # optional: the tree holds none
except ImportError:
    _accel = None
"""


@pytest.mark.e2e
@pytest.mark.parametrize("case", ["stale-install", "fresh-install"])
def test_an_install_older_than_a_module_the_tree_added(tmp_path: Path, case: str) -> None:
    """`pip install .` made before the tree added ``lib/fastpkg/_fast.py``: the package imports it
    with a fallback, the installed copy has none, so the fallback ran and the test passed
    where the tree's code (a clean install) fails. Every file that loaded is byte for byte
    the tree's; what is refused is the module the install lacks. A fresh install holds it; an
    optional module the tree has no file for (``_accel``) is no one's."""
    files = {
        "lib/fastpkg/__init__.py": WITH_FALLBACK,
        "lib/fastpkg/_slow.py": "def double(x):\n    return 2 * x\n",
        "tests/test_it.py": "from fastpkg import double\n\n\ndef test_double():\n"
        "    assert double(21) == 42\n",
        "pyproject.toml": FAST,
    }
    if case == "fresh-install":
        files["lib/fastpkg/_fast.py"] = "def double(x):\n    return x + x\n"
    repo, site = installed_project(tmp_path, files, "fastpkg")
    if case == "stale-install":
        (repo / "lib" / "fastpkg" / "_fast.py").write_text("def double(x):\n    return x * x\n")
        commit_all(repo, "a fast path, added after the install")
    restamp.begin(open_checkout(repo))
    run(repo, PYTHONPATH=str(site))
    said = foreign_unless(repo, case == "fresh-install")
    if case == "stale-install":
        assert "fastpkg._fast from " in said, said
        assert "the tested tree has it (lib/fastpkg/_fast.py)" in said and "_accel" not in said


DATA_PROJECT = """[project]
name = "limits"
version = "0"
[tool.setuptools.package-data]
limits = ["*.json"]
[tool.pytest.ini_options]
testpaths = ["tests"]
"""
READS_DATA = """import json, pathlib

LIMIT = json.loads((pathlib.Path(__file__).parent / "cfg.json").read_text())["limit"]
EXTRA = pathlib.Path(__file__).with_name("built.txt")
EXTRA = EXTRA.read_text() if EXTRA.exists() else ""
"""


@pytest.mark.e2e
@pytest.mark.parametrize("case", ["fresh-install", "data-edited-since", "made-by-the-build"])
def test_a_data_file_of_an_install_of_this_project(tmp_path: Path, case: str) -> None:
    """`pip install .` (not editable), then the package's data file changes in the tree: its
    modules are byte for byte the tree's, but what they read beside them is the install's.
    Warm green, a clean install fails. Controls: a fresh install, and a data file the build
    made that the tree does not hold (nothing to compare it with)."""
    files = {
        "src/limits/__init__.py": READS_DATA,
        "src/limits/cfg.json": '{"limit": 10}\n',
        "pyproject.toml": DATA_PROJECT,
    }
    repo, site = installed_project(tmp_path, files, "limits")
    if case == "data-edited-since":
        (repo / "src" / "limits" / "cfg.json").write_text('{"limit": 5}\n')
        commit_all(repo, "a lower limit")
    if case == "made-by-the-build":
        (site / "limits" / "built.txt").write_text("made by the build\n")
    test = "import limits\n\n\ndef test_limit():\n    assert limits.LIMIT == 10\n"
    (repo / "tests").mkdir()
    (repo / "tests" / "test_it.py").write_text(test)
    commit_all(repo, "the test")
    restamp.begin(open_checkout(repo))
    run(repo, PYTHONPATH=str(site))
    if case == "data-edited-since":
        assert list(failures(repo)) == ["foreign-origin"]
        (flag,) = audit_of(repo).flags
        assert flag.path == str(site / "limits" / "cfg.json")
        assert "src/limits/cfg.json" in flag.detail
    else:
        assert audit_of(repo).flags == ()
        assert failures(repo) == {}


# pytest, with the standard library's folder taken to be the one holding ``site-packages``,
# as in an installation that is no virtual environment (conda, pyenv's global Python, the
# `python` Docker image: `/usr/local/lib/python3.11/site-packages`)
IN_THE_STDLIB_FOLDER = (
    "import sys, genstamp.loads as loads; loads._SYSTEM = sys.argv.pop(1); "
    "import pytest; sys.exit(pytest.main())"
)


@pytest.mark.e2e
def test_a_data_file_of_an_install_inside_the_standard_librarys_folder(tmp_path: Path) -> None:
    """Outside a virtual environment, site-packages lies inside the standard library's folder,
    whose files the recorder passes over: the data file a stale `pip install .` copy reads was
    not compared with the tree's, and the run was accepted (it is refused in a venv)."""
    files = {
        "src/limits/__init__.py": READS_DATA,
        "src/limits/cfg.json": '{"limit": 10}\n',
        "pyproject.toml": DATA_PROJECT,
    }
    repo, site = installed_project(tmp_path, files, "limits")
    (repo / "src" / "limits" / "cfg.json").write_text('{"limit": 5}\n')
    (repo / "tests").mkdir()
    (repo / "tests" / "test_it.py").write_text(
        "import limits\n\n\ndef test_limit():\n    assert limits.LIMIT == 10\n"
    )
    commit_all(repo, "a lower limit, and the test")
    restamp.begin(open_checkout(repo))
    stdlib = str(site.parent) + os.sep
    proc = subprocess.run(
        [sys.executable, "-c", IN_THE_STDLIB_FOLDER, stdlib, "-q", "-p", "no:cacheprovider"],
        cwd=repo,
        env=subprocess_env(PYTHONPATH=str(site)),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert list(failures(repo)) == ["foreign-origin"]
    (flag,) = audit_of(repo).flags
    assert flag.path == str(site / "limits" / "cfg.json")


@pytest.mark.e2e
@pytest.mark.parametrize(
    "case",
    [
        "stale-install",
        "in-a-child",
        "renamed-project",
        "renamed-from-its-wheel",
        "not-imported",
        "other-project",
    ],
)
def test_a_package_the_tree_dropped_from_an_install_of_this_project(
    tmp_path: Path, case: str
) -> None:
    """`pip install .` (not editable) of the project while it still had ``calc_util``; then the
    tree renamed it away and left an import behind. The installed copy still provides it: warm
    green, a clean install fails at import. ``calc_util`` is none of the tree's import roots,
    but the installed distribution of this very project (by its name) provides it: its loads
    are recorded, in the tests' process and in a child, and refused; so is an install the
    installer recorded as made from this folder under the project's old name (renamed since).
    Controls: the stale install present but never imported, and the same module installed by
    another project (a dependency, from a folder of its own)."""
    files = {"src/calc_util.py": UTIL, "pyproject.toml": NAMED, ".gitignore": BUILT}
    repo, _ = project(tmp_path, "", files)
    (repo / "src" / "calc" / "__init__.py").write_text(USES_UTIL)
    commit_all(repo, "calc uses calc_util")
    site = tmp_path / "env" / "site-packages"
    if case == "other-project":
        dependency = tmp_path / "calc-tools"
        shutil.copytree(repo, dependency, ignore=shutil.ignore_patterns(".git"))
        (dependency / "pyproject.toml").write_text(NAMED.replace('"calc"', '"calc-tools"'))
        pip_install(dependency, site)
    elif case == "renamed-from-its-wheel":  # `pip wheel . -w dist`, then that wheel installed
        with open(repo / ".gitignore", "a") as fh:
            fh.write("dist/\n")
        commit_all(repo, "dist/ ignored")
        pip = [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation"]
        built = subprocess.run([*pip, "-w", str(repo / "dist"), str(repo)], capture_output=True)
        assert built.returncode == 0, built.stderr
        pip_install(next((repo / "dist").glob("*.whl")), site)
    else:
        pip_install(repo, site)
    assert (site / "calc_util.py").is_file()
    if case in ("renamed-project", "renamed-from-its-wheel"):
        (repo / "pyproject.toml").write_text(NAMED.replace('"calc"', '"calc-renamed"'))
    (repo / "src" / "calc_util.py").unlink()
    if case == "not-imported":
        (repo / "src" / "calc" / "__init__.py").write_text(CALC)
    commit_all(repo, "drop calc_util")
    test = "import calc\n\n\ndef test_add():\n    assert calc.add(2, 3) == 5\n"
    if case == "in-a-child":
        test = (
            "import subprocess, sys\n\n\ndef test_add():\n"
            "    subprocess.run([sys.executable, '-c', 'import calc'], check=True)\n"
        )
    path = f"{repo / 'src'}{os.pathsep}{site}"
    found, told = scenario_told(repo, test, PYTHONPATH=path)
    if judged_as_a_clean_clone_fares(
        repo, found, told, accepted=case in ("not-imported", "other-project")
    ):
        return
    assert "no such module" in found.flags[0].detail


@pytest.mark.e2e
@pytest.mark.parametrize("link", ["ignored", "untracked", "committed", "committed-file", "control"])
def test_a_package_reached_through_a_link_in_the_work_tree(tmp_path: Path, link: str) -> None:
    """``src/helper`` is a symbolic link to a folder outside the repository: the tests import
    ``helper`` through it, a clean clone has no such link (ignored), or the link and nothing
    where it leads (untracked, committed). The code is judged where it lies in the work tree:
    refused, and the run's own forecast says so. A module that is itself a committed link out
    of the tree (``src/helper.py``) was refused as code that differs from the tree's, with
    words for a file changed during the run (P23 10): it is named as a link too. Control: the
    same package as a folder of the tree."""
    repo, _ = project(tmp_path, "")
    outside = tmp_path / "ext" / "helper"
    outside.mkdir(parents=True)
    (outside / "__init__.py").write_text("X = 1\n")
    if link == "control":
        (repo / "src" / "helper").mkdir()
        (repo / "src" / "helper" / "__init__.py").write_text("X = 1\n")
    elif link == "committed":
        (repo / "src" / "helper").symlink_to(outside, target_is_directory=True)
    elif link == "committed-file":
        (repo / "src" / "helper.py").symlink_to(outside / "__init__.py")
    test = "import helper\n\n\ndef test_helper():\n    assert helper.X == 1\n"
    (repo / "tests" / "test_it.py").write_text(test)
    commit_all(repo, "the test, and the package (or the link) when it is the tree's")
    if link in ("ignored", "untracked"):  # made after the commit: never in it
        (repo / "src" / "helper").symlink_to(outside, target_is_directory=True)
        if link == "ignored":
            (repo / ".git" / "info").mkdir(exist_ok=True)
            (repo / ".git" / "info" / "exclude").write_text("src/helper\n")
    restamp.begin(open_checkout(repo))
    out = run(repo, PYTHONPATH=str(repo / "src"))
    found = failures(repo)
    if link == "ignored":
        assert list(found) == ["ignored-code"] and "src/helper/__init__.py" in found["ignored-code"]
    elif link == "control":
        assert found == {}
    else:
        assert list(found) == ["loaded-not-tested"], found
        assert "where a symbolic link of the tested tree leads" in found["loaded-not-tested"]
        module = "src/helper.py" if link == "committed-file" else "src/helper/__init__.py"
        assert module in found["loaded-not-tested"]
        assert "differs from the tested tree" not in found["loaded-not-tested"]
        assert "will refuse: loaded-not-tested" in out, out


@pytest.mark.e2e
@pytest.mark.parametrize("case", ["file-for-link", "link"])
def test_a_plain_file_where_the_tree_holds_a_link(tmp_path: Path, case: str) -> None:
    """Under ``core.symlinks=false`` git checks the committed link ``src/alias.py -> core.py``
    out as a plain file holding ``core.py``; code written into it and committed stays a link
    in the tree, its target that code: a clean clone has a dangling link and fails. The loaded
    bytes were the link's blob, and it was accepted. Refused, named as a plain file for a
    link, and the run's forecast says so. Control: the link itself, followed to its module."""
    repo, _ = project(tmp_path, "")
    (repo / "src" / "core.py").write_text("def f():\n    return 2\n")
    (repo / "src" / "alias.py").symlink_to("core.py")
    test = "from alias import f\n\n\ndef test_alias():\n    assert f() == 2\n"
    (repo / "tests" / "test_it.py").write_text(test)
    commit_all(repo, "a module and a link to it")
    if case == "file-for-link":
        git(repo, "config", "core.symlinks", "false")  # as a clone where links are files
        (repo / "src" / "alias.py").unlink()
        git(repo, "checkout", "--", "src/alias.py")
        assert (repo / "src" / "alias.py").read_text() == "core.py"  # git's plain file
        (repo / "src" / "alias.py").write_text("from core import f\n")
        git(repo, "commit", "-qam", "the alias made code")
        assert git(repo, "ls-tree", "HEAD", "src/alias.py").startswith("120000")
    restamp.begin(open_checkout(repo))
    out = run(repo, PYTHONPATH=str(repo / "src"))
    found = failures(repo)
    if case == "link":
        assert found == {}, found
        assert "will refuse" not in out, out
        return
    assert list(found) == ["loaded-not-tested"], found
    said = found["loaded-not-tested"]
    assert "a plain file where the tested tree holds a symbolic link" in said, said
    assert "src/alias.py" in said, said
    assert "will refuse: loaded-not-tested" in out, out


@pytest.mark.e2e
def test_ignored_code_whose_path_is_no_utf8(tmp_path: Path) -> None:
    """The tests load a module from a git-ignored folder named in Latin-1 (``lib/caf\\xe9``):
    libgit2's binding takes no such path, and the gate and the pre-push hook ended in a
    traceback. Refused as ignored code, the run's forecast too, the name's byte shown as
    ``\\xe9``."""
    repo, _ = project(tmp_path, "")
    (repo / ".gitignore").write_text("__pycache__/\nlib/\n")
    test = (
        "import os, sys\n\n\ndef test_x():\n"
        "    sys.path.insert(0, os.fsdecode(os.path.join(b'lib', os.listdir(b'lib')[0])))\n"
        "    import helper\n\n    assert helper.f() == 3\n"
    )
    helper = "def f():\n    return 3\n"
    for rel, text in {b"lib/caf\xe9/helper.py": helper, b"tests/test_it.py": test}.items():
        (repo / os.fsdecode(rel)).parent.mkdir(parents=True, exist_ok=True)
        (repo / os.fsdecode(rel)).write_text(text)
    commit_all(repo, "a test of ignored code")
    restamp.begin(open_checkout(repo))
    out = run(repo)
    found = failures(repo)
    assert list(found) == ["ignored-code"], found
    assert "lib/caf\\xe9/helper.py" in found["ignored-code"], found
    assert "will refuse: ignored-code: lib/caf\\xe9/helper.py" in out, out


LINKS_WHAT_IT_MAKES = """
import os, pathlib, sys


def test_made_through_a_link(tmp_path):
    made = tmp_path / "made"
    made.mkdir()
    (made / "myplug.py").write_text("X = 1\\n")
    link = pathlib.Path(__file__).resolve().parent.parent / "plugins"
    os.symlink(made, link)
    sys.path.insert(0, str(link))
    try:
        import myplug
        assert myplug.X == 1
    finally:
        sys.path.remove(str(link))  # the link stays, git-ignored, as the session ends
"""


@pytest.mark.e2e
def test_code_the_tests_make_and_reach_through_a_link_they_make_is_theirs(tmp_path: Path) -> None:
    """A test makes a module outside the tree and links an ignored folder of the tree to it:
    code the run made, accepted, and the run's own forecast says so (the link's loads are not
    taken for the tree's own files)."""
    repo, _ = project(tmp_path, "")
    with (repo / ".gitignore").open("a") as fh:
        fh.write("plugins\n")
    found, out = scenario_told(repo, LINKS_WHAT_IT_MAKES)
    assert failures(repo) == {}, found
    assert "will refuse" not in out, out


CLONES_ITSELF = """
import subprocess, sys

def test_release_check(tmp_path):
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", {repo!r}, str(clone)], check=True)
    subprocess.run([sys.executable, "tools/check.py"], cwd=clone, check=True)
"""


@pytest.mark.e2e
def test_code_of_a_clone_the_tests_make_is_theirs(tmp_path: Path) -> None:
    """A release check: the test clones the project itself and runs a script of that clone
    that imports the clone's package (in a followed child). The clone is made during the run:
    the tests' own, not another clone whose code stands in for the checkout's."""
    check = "import sys\nsys.path.insert(0, 'src')\nimport calc\nassert calc.add(2, 3) == 5\n"
    repo, _ = project(tmp_path, "", {"tools/check.py": check})
    found = scenario(repo, CLONES_ITSELF.format(repo=str(repo)))
    assert found.flags == (), found
    assert failures(repo) == {}


CLONES_AT = """
import subprocess, sys

def test_release_check(tmp_path):
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", {repo!r}, str(clone)], check=True)
    if {rev!r}:
        subprocess.run(["git", "checkout", "-q", {rev!r}], cwd=clone, check=True)
    subprocess.run([sys.executable, "tools/check.py"], cwd=clone, check=True)
"""


@pytest.mark.e2e
@pytest.mark.parametrize("case", ["edited", "older-commit"])
def test_a_clone_of_head_the_tests_make_is_not_the_tree_they_test(
    tmp_path: Path, case: str
) -> None:
    """The test clones the repository, which checks out HEAD: with calc edited and not yet
    committed, the check ran the last commit's calc, not the tested tree's, and passed (once
    committed, the clean clone's check runs the edit). Refused, saying so. A test that checks
    out another commit in its clone (an upgrade test running the last release) runs that
    commit on purpose: its own."""
    check = "import sys\nsys.path.insert(0, 'src')\nimport calc\nassert calc.add(2, 3) == 5\n"
    repo, _ = project(tmp_path, "", {"tools/check.py": check})
    first = git(repo, "rev-parse", "HEAD")
    calc = repo / "src" / "calc" / "__init__.py"
    calc.write_text(calc.read_text() + "# the release's\n")
    rev = first if case == "older-commit" else ""
    (repo / "tests" / "test_it.py").write_text(CLONES_AT.format(repo=str(repo), rev=rev))
    commit_all(repo, "release")
    if case == "edited":
        calc.write_text(calc.read_text() + "# not committed yet\n")
    restamp.begin(open_checkout(repo))
    run(repo)
    found = failures(repo)
    if case == "edited":
        assert list(found) == ["foreign-origin"], found
        assert audit.CLONE_OF_HEAD in found["foreign-origin"], found
        assert "the last commit's src/calc/__init__.py" in found["foreign-origin"], found
    else:
        assert found == {}, found


READS = """
import os
from pathlib import Path

def test_reads():
    here = Path(__file__).parent
    with open(os.fsencode(str(here / "data.bin")), "rb") as fh:  # a bytes path
        assert fh.read() == b"ok\\n"
    assert "X = 1" in (here / "fixture.txt").read_text()
    made = here / "made"
    made.mkdir(exist_ok=True)
    for n in range(2500):  # files the test makes and reads back: not the checkout's
        (made / f"{n}.txt").write_text("x")
        assert (made / f"{n}.txt").read_text() == "x"
"""


@pytest.mark.e2e
def test_the_files_the_tests_read_are_recorded(tmp_path: Path) -> None:
    """The work tree's files the tests open to read are in the audit, however named (a bytes
    path too); files the run itself made are not (nor do 2,500 of them make
    the list give up). So a change hidden from git in a file the tests read is refused, and
    one in a file no test opened (an editor's settings) is not."""
    files = {
        "tests/data.bin": "ok\n",
        "tests/fixture.txt": "X = 1\n",
        ".vscode/settings.json": "{}\n",
        ".gitignore": "__pycache__/\n*.py[co]\ntests/made/\n",
    }
    repo, _ = project(tmp_path, "", files)
    for rel in ("tests/data.bin", ".vscode/settings.json"):
        git(repo, "update-index", "--skip-worktree", rel)
    (repo / ".vscode" / "settings.json").write_text('{"editor.fontSize": 15}\n')
    found = scenario(repo, READS)
    assert "tests/data.bin" in found.read and "tests/fixture.txt" in found.read, found.read
    assert "*" not in found.read and not any(r.startswith("tests/made/") for r in found.read)
    assert failures(repo) == {}  # the editor's settings: no test opened them
    (repo / "tests" / "data.bin").write_text("ok\n")  # the same bytes: no change
    assert failures(repo) == {}
    (repo / "tests" / "data.bin").write_text("ok\r\n")  # what git does not see
    found_now = failures(repo)
    assert list(found_now) == ["hidden-change"], found_now
    assert "tests/data.bin (--skip-worktree)" in found_now["hidden-change"]
    assert ".vscode" not in found_now["hidden-change"]


READS_THROUGH_A_LINK = """
from pathlib import Path

def test_reads():
    assert Path("data/x.json").read_text() == '{"v": 2}\\n'
"""


@pytest.mark.e2e
@pytest.mark.parametrize("case", ["re-pointed", "as-committed"])
def test_a_folder_link_the_tests_read_through_is_read(tmp_path: Path, case: str) -> None:
    """``data`` is a committed link to ``v1/``; here it leads to ``v2/`` and the change is
    hidden from git. The tests read ``data/x.json``: the file at the path has no index entry
    and where it leads is committed as it is, so only the link holds the change, and it is
    read too (hidden-change; a clone reads v1's). Committed so, accepted."""
    files = {"v1/x.json": '{"v": 1}\n', "v2/x.json": '{"v": 2}\n'}
    repo, _ = project(tmp_path, "", files)
    target = "v2" if case == "as-committed" else "v1"
    (repo / "data").symlink_to(target, target_is_directory=True)
    commit_all(repo, "the data link")
    if case == "re-pointed":
        git(repo, "update-index", "--skip-worktree", "data")
        (repo / "data").unlink()
        (repo / "data").symlink_to("v2", target_is_directory=True)
    scenario(repo, READS_THROUGH_A_LINK)
    found = failures(repo)
    if case == "re-pointed":
        assert list(found) == ["hidden-change"], found
        assert "data (--skip-worktree)" in found["hidden-change"], found
    else:
        assert found == {}, found


@pytest.mark.e2e
@pytest.mark.parametrize("case", ["hidden-edit", "as-committed"])
def test_coverages_settings_read_before_the_recording_are_read(tmp_path: Path, case: str) -> None:
    """`coverage run -m pytest` (and pytest-cov, in an early hook of its own) reads
    .coveragerc before genstamp's recording begins: a local edit of it hidden from git
    (`fail_under = 0` over the committed 100) went unseen. Coverage's own list of the files it
    read counts as read."""
    rc = "[run]\nbranch = true\n[report]\nfail_under = 100\n"
    repo, _ = project(tmp_path, "", {".coveragerc": rc, ".gitignore": "__pycache__/\n.coverage\n"})
    if case == "hidden-edit":
        git(repo, "update-index", "--skip-worktree", ".coveragerc")
        (repo / ".coveragerc").write_text(rc.replace("100", "0"))
    (repo / "tests" / "test_it.py").write_text("def test_it():\n    assert True\n")
    commit_all(repo, "test")
    restamp.begin(open_checkout(repo))
    proc = subprocess.run(
        [sys.executable, "-m", "coverage", "run", "-m", "pytest", "-q", "-p", "no:cacheprovider"],
        cwd=repo,
        capture_output=True,
        text=True,
        env=subprocess_env(),
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert ".coveragerc" in audit_of(repo).read
    found = failures(repo)
    if case == "hidden-edit":
        assert list(found) == ["hidden-change"], found
        assert ".coveragerc (--skip-worktree)" in found["hidden-change"]
    else:
        assert found == {}, found


READ_AFTER = """
import os
import subprocess
import sys
from pathlib import Path

def test_reads():
    data = Path(__file__).parent / "data.txt"
    {before}
    assert data.read_text() == {expected!r}
"""


CHILD = "import os; p = 'tests/data.txt'; {act}"  # run where pytest runs: the top
WRITES = "open(p, 'w').write('edited\\n')"


@pytest.mark.e2e
@pytest.mark.parametrize(
    ("before", "recorded"),
    [
        ("os.chmod(data, 0o644)", True),  # a mode set moves the change time alone
        ("data.touch()", True),  # a new time, the old bytes
        ("os.utime(data, None)", True),
        ("data.write_text('edited\\n')", False),  # bytes the run itself wrote
        ("data.write_text('edited\\n'); os.chmod(data, 0o644)", False),
        # another process of the run: one that touched it (M07), a shell's touch (M209); what
        # another process writes counts too (this one cannot tell a write from a touch there)
        (f"subprocess.run([sys.executable, '-c', {CHILD.format(act='os.utime(p)')!r}])", True),
        ("subprocess.run(['touch', str(data)], check=True)", True),
        (f"subprocess.run([sys.executable, '-c', {CHILD.format(act=WRITES)!r}])", True),
    ],
)
def test_a_file_whose_mode_or_times_the_tests_set_before_reading_it_is_read(
    tmp_path: Path, before: str, recorded: bool
) -> None:
    """A chmod or a touch of a data file is no write: what the test then reads is the work
    tree's bytes, and a change git does not see in them is refused (P05); bytes the run
    wrote are its own."""
    repo, _ = project(tmp_path, "", {"tests/data.txt": "committed\n"})
    git(repo, "update-index", "--skip-worktree", "tests/data.txt")
    (repo / "tests" / "data.txt").write_text("edited\n")  # what git does not see
    found = scenario(repo, READ_AFTER.format(before=before, expected="edited\n"))
    assert ("tests/data.txt" in found.read) is recorded, found.read
    found_now = failures(repo)
    assert list(found_now) == (["hidden-change"] if recorded else []), found_now


EARLY_PLUGIN = """
from pathlib import Path

SETTINGS = {read}
"""


@pytest.mark.e2e
@pytest.mark.parametrize("reads", [True, False])
def test_what_a_plugin_of_the_checkout_read_before_the_recording_began_counts(
    tmp_path: Path, reads: bool
) -> None:
    """``-p localplug`` of the checkout is imported as pytest reads its arguments, before
    any hook of genstamp's runs: what it read then is unseen, so every change hidden from
    git counts as read (P08). A hidden change stays the user's own where no code of the work
    tree ran before the recording."""
    read = "(Path(__file__).parent / 'tests' / 'data.txt').read_text()" if reads else "None"
    files = {
        "tests/data.txt": "committed\n",
        "localplug.py": EARLY_PLUGIN.format(read=read),
        "pyproject.toml": '[tool.pytest.ini_options]\ntestpaths = ["tests"]\n'
        + ('addopts = "-p localplug"\n' if reads else ""),
    }
    repo, _ = project(tmp_path, "", files)
    git(repo, "update-index", "--skip-worktree", "tests/data.txt")
    (repo / "tests" / "data.txt").write_text("edited\n")  # what git does not see
    scenario(repo, "def test_nothing_read():\n    pass\n", PYTHONPATH=str(repo))
    found = failures(repo)
    assert list(found) == (["hidden-change"] if reads else []), found


USES_FOLDERS = """
import os
from pathlib import Path

import pytest

HERE = Path(__file__).parent.parent


@pytest.mark.parametrize("name", sorted(os.listdir(HERE / "plugins")))
def test_plugin(name):
    pass


def test_out():
    {write}
"""


UNLINK = "(HERE / 'out' / 'r').unlink()"
OUT = f"(HERE / 'out' / 'r').write_text('x'); {UNLINK}"


@pytest.mark.e2e
@pytest.mark.parametrize(
    ("empty", "write", "recorded", "refused"),
    [
        # an empty folder written into (and left empty), one listed, and what it showed
        (("out", "plugins/alpha"), OUT, ["out", "plugins/alpha"], True),
        (("plugins/alpha", "plugins/beta"), "pass", ["plugins/alpha", "plugins/beta"], True),
        # as the tests found it: a file the run leaves there (git-ignored) does not fill it
        (("out",), "(HERE / 'out' / 'r.log').write_text('x')", ["out"], True),
        (("out",), "os.mkdir(HERE / 'out' / 'run1')", ["out"], True),  # a plain mkdir needs it
        (("out",), "list(os.fwalk(HERE / 'out'))", ["out"], True),  # listed through its fd
        (
            ("out",),
            "import _pytest._py.path as p; p.LocalPath(HERE / 'out').listdir()",
            ["out"],
            True,
        ),  # through a library the test calls
        (("out",), "(HERE / 'out' / 'run1').mkdir(parents=True)", [], False),  # makes its parents
        (
            ("out",),
            f"(HERE / 't').write_text('x'); os.rename(HERE / 't', HERE / 'out' / 'r'); {UNLINK}",
            ["out"],
            True,
        ),  # a file put there by name (M202)
        (("out",), f"os.symlink('../pyproject.toml', HERE / 'out' / 'r'); {UNLINK}", ["out"], True),
        (("out",), f"os.chmod(HERE / 'out', 0o755); {OUT}", ["out"], True),  # no write (M205)
        (("plugins/alpha/__pycache__",), "pass", [], False),  # bytecode alone: shown, not empty
        # the controls: a folder the test makes (even one that is there), one git ignores,
        # one only pytest's collection listed (tests/empty), a listing of files only
        (("out", "tests/empty"), f"os.makedirs(HERE / 'out', exist_ok=True); {OUT}", [], False),
        (("build",), OUT.replace("out", "build"), ["build"], False),
        ((), "pass", [], False),
    ],
)
def test_a_folder_that_holds_no_file_is_in_no_clean_clone(
    tmp_path: Path, empty: tuple[str, ...], write: str, recorded: list[str], refused: bool
) -> None:
    """git keeps no empty folder: a test that writes into ``out/`` or parametrizes over the
    folders of ``plugins/`` runs otherwise in a clean clone, which has none (P07)."""
    ignore = "__pycache__/\n*.py[co]\nbuild/\n*.log\n"
    repo, _ = project(tmp_path, "", {"plugins/one/plugin.txt": "1\n", ".gitignore": ignore})
    for rel in empty:
        (repo / rel).mkdir(parents=True)
    found, told = scenario_told(repo, USES_FOLDERS.format(write=write))
    assert list(found.folders) == recorded, found.folders
    assert ("will refuse: empty-folder" in told) is refused, told  # learnt at test time
    found_now = failures(repo)
    assert list(found_now) == (["empty-folder"] if refused else []), found_now
    for rel in recorded if refused else ():
        assert rel in found_now["empty-folder"], found_now


LISTS_THE_TOP = """
import os
from pathlib import Path

def test_top():
    assert "vendor" in os.listdir(Path(__file__).parent.parent)
"""


MAKES_IT_WHERE_MISSING = """
import os
import subprocess
from pathlib import Path

HERE = Path(__file__).parent.parent


def test_out():
    out = HERE / "out"
    if not out.exists():
        out.mkdir()
    (out / "r").write_text("x")
    (out / "r").unlink()


def test_tool():
    subprocess.run(["mkdir", "-p", str(HERE / "work" / "cache")], check=True)
    assert os.listdir(HERE / "work") == ["cache"]
"""


@pytest.mark.e2e
@pytest.mark.parametrize("args", [(), ("-n", "2")])
def test_a_folder_an_earlier_run_made_is_the_runs(tmp_path: Path, args: tuple[str, ...]) -> None:
    """A test that makes a folder only where it is missing, and a tool that makes one in a
    shell: later runs find them there, empty, as a run left them (after a branch switch too).
    A clean clone's run makes them too: no ``empty-folder`` (K01, K03). One made again by
    hand is no run's."""
    repo, _ = project(tmp_path, "")
    scenario(repo, MAKES_IT_WHERE_MISSING, *args)
    assert failures(repo) == {}
    assert not any((repo / "out").iterdir())
    run(repo, *args)  # the same generation, the folders there (xdist's workers judge too: K201)
    assert audit_of(repo).folders == ()
    assert failures(repo) == {}
    restamp.begin(open_checkout(repo))  # a new generation (a branch switch): still the runs'
    run(repo, *args)
    assert audit_of(repo).folders == ()
    assert failures(repo) == {}
    (repo / "out").rmdir()  # made again by hand: no run's
    (repo / "out").mkdir()
    run(repo, *args)
    assert audit_of(repo).folders == ("out",), audit_of(repo).folders
    assert list(failures(repo)) == ["empty-folder"]


ASKS_FOR_IT = "import os\n\ndef test_makes():\n    os.makedirs('out', exist_ok=True)\n"


@pytest.mark.e2e
def test_a_run_that_asks_for_a_folder_there_already_made_none(tmp_path: Path) -> None:
    """``makedirs(exist_ok=True)`` of a stray empty folder makes nothing: a later run that
    relies on the folder without making it is refused (M207)."""
    repo, _ = project(tmp_path, "")
    (repo / "out").mkdir()
    scenario(repo, ASKS_FOR_IT)
    assert failures(repo) == {}  # this run made it where it is missing
    scenario(repo, USES_FOLDERS.format(write=OUT).replace("plugins", "out"))
    assert list(failures(repo)) == ["empty-folder"]


TWO_WRITE = """
from pathlib import Path

import pytest

OUT = Path(__file__).parent.parent / "out"


@pytest.mark.parametrize("n", range(4))
def test_out(n):
    (OUT / f"r{n}").write_text("x")
    (OUT / f"r{n}").unlink()
"""


@pytest.mark.e2e
def test_a_folder_one_process_found_empty_stays_found_by_the_others(tmp_path: Path) -> None:
    """Two xdist workers write into an empty ``out/`` that was there before the run: the one
    that comes second finds it changed since the run began, which the first worker's writes
    did; the folder is not the run's for that."""
    repo, _ = project(tmp_path, "")
    (repo / "out").mkdir()
    found = scenario(repo, TWO_WRITE, "-n", "2")
    assert found.folders == ("out",), found.folders
    assert list(failures(repo)) == ["empty-folder"]


LISTING_PLUGIN = """
import os


def pytest_collection_finish(session):
    session.config.listed = os.listdir(session.config.rootpath / "plugins")
"""


@pytest.mark.e2e
def test_a_listing_by_installed_code_on_its_own_is_not_the_tests(tmp_path: Path) -> None:
    """Installed code that lists folders on its own (pytest's collection, coverage's search for
    files it did not run, a plugin's hook) is the environment's: a listing shows the tests an
    empty folder only where code of the work tree asked for it."""
    site = installed_plugin(tmp_path / "site", "listplug", LISTING_PLUGIN)
    repo, _ = project(tmp_path, "", {"plugins/one/plugin.txt": "1\n"})
    (repo / "plugins" / "alpha").mkdir()
    found = scenario(repo, "def test_nothing():\n    pass\n", PYTHONPATH=str(site))
    assert found.folders == (), found.folders
    assert failures(repo) == {}


@pytest.mark.e2e
def test_the_folder_of_a_submodule_not_checked_out_is_the_trees(tmp_path: Path) -> None:
    """A submodule that is not checked out is an empty folder here and in every clone (the
    tree holds it, as a gitlink): a listing that shows it is no ``empty-folder``."""
    lib = init_repo(tmp_path / "lib")
    (lib / "lib.py").write_text("X = 1\n")
    commit_all(lib)
    repo, _ = project(tmp_path, "")
    git(repo, "-c", "protocol.file.allow=always", "submodule", "add", "-q", str(lib), "vendor")
    commit_all(repo, "vendor")
    git(repo, "submodule", "deinit", "-q", "-f", "vendor")
    assert not any((repo / "vendor").iterdir())
    found, told = scenario_told(repo, LISTS_THE_TOP)
    assert "vendor" in found.folders, found.folders
    assert failures(repo) == {}
    assert "will refuse" not in told, told


def test_the_work_tree_holding_a_file(tmp_path: Path) -> None:
    """The nearest folder with a ``.git`` (a folder, or a worktree's file); never for the
    interpreter's own files, installed code or genstamp's own source."""
    repo = init_repo(tmp_path / "repo")
    (repo / "a" / "b").mkdir(parents=True)
    assert loads.work_tree_of(str(repo / "a" / "b" / "m.py")) == str(repo)
    assert loads.work_tree_of(str(repo / "m.py")) == str(repo)
    linked = tmp_path / "linked"
    linked.mkdir()
    (linked / ".git").write_text("gitdir: elsewhere\n")
    assert loads.work_tree_of(str(linked / "m.py")) == str(linked)
    assert loads.work_tree_of(str(tmp_path / "loose" / "m.py")) == ""  # no .git above /tmp
    assert loads.work_tree_of(os.path.realpath(os.__file__)) == ""
    assert loads.work_tree_of(str(repo / ".venv" / "lib" / "site-packages" / "m.py")) == ""
    assert loads.work_tree_of(os.path.realpath(loads.__file__)) == ""


# -- code a conftest's session finish runs, after the tests ---------------------------------------

LATE_CONFTEST = """
import sys
import pytest

@pytest.hookimpl({how})
def pytest_sessionfinish(session, exitstatus):
    {after}sys.path.insert(0, {where!r})
    for name in [m for m in sys.modules if m == "calc" or m.startswith("calc.")]:
        del sys.modules[name]
    import calc
    if calc.VALUE != 1:
        session.exitstatus = 1
"""
LATE_HOOKS = {
    "trylast": ("trylast=True", ""),
    "wrapper": ("wrapper=True", "result = yield\n    "),
    "hookwrapper": ("hookwrapper=True, tryfirst=True", "yield\n    "),
}


@pytest.mark.e2e
@pytest.mark.parametrize("case", ["other-clone", "tree-fails", "tree-passes"])
@pytest.mark.parametrize("how", list(LATE_HOOKS))
def test_code_a_conftest_s_session_finish_runs_after_the_tests_is_judged(
    tmp_path: Path, how: str, case: str
) -> None:
    """A conftest's session finish runs after every test, and may import code and decide the
    session's status: here the other clone's calc makes it pass where the tree's fails it. A
    ``trylast`` one runs before genstamp binds (C25 02: it bound before, and accepted), and
    its loads are audited; a wrapper's code after ``yield`` runs after the binding (D25 01:
    accepted), and refutes the run. The controls: the tree's calc fails the session, or
    passes it, and nothing is flagged."""
    repo, other = project(tmp_path, "def test_nothing():\n    pass\n")
    if case != "tree-passes":
        (repo / "src" / "calc" / "__init__.py").write_text(OTHER.replace("VALUE = 2", "VALUE = 3"))
    where = str(other / "src") if case == "other-clone" else str(repo / "src")
    (other / "src" / "calc" / "__init__.py").write_text(CALC)  # the other clone: VALUE = 1
    decorator, after = LATE_HOOKS[how]
    conftest = LATE_CONFTEST.format(how=decorator, after=after, where=where)
    (repo / "conftest.py").write_text(conftest)
    commit_all(repo, "late check")
    restamp.begin(open_checkout(repo))
    proc = run_pytest(repo, env=subprocess_env())
    if case == "tree-passes":
        assert proc.returncode == 0, proc.stdout + proc.stderr
        assert failures(repo) == {}
    elif case == "tree-fails":  # the tree's calc fails the session: so does the evidence
        assert proc.returncode == 1, proc.stdout + proc.stderr
        assert "tests-failed" in failures(repo)
    elif how == "trylast":  # before the binding: the audit names it
        assert proc.returncode == 0, proc.stdout + proc.stderr  # the other clone's calc passes
        flagged = [(f.kind, f.module) for f in audit_of(repo).flags]
        assert flagged == [(audit.FOREIGN, "calc")]
        assert list(failures(repo)) == ["foreign-origin"]
    else:  # after the binding: the run is refuted
        assert proc.returncode == 0, proc.stdout + proc.stderr
        told = "genstamp: code the gate refuses ran after the evidence was bound (foreign-origin"
        assert told in proc.stderr, proc.stderr
        assert list(failures(repo)) == ["tests-failed"]


LATE_SUMMARY = """
import sys

def pytest_terminal_summary(terminalreporter):
    sys.path.insert(0, {site!r})
    for name in [m for m in sys.modules if m == "calc" or m.startswith("calc.")]:
        del sys.modules[name]
    import calc.{module}
"""


@pytest.mark.e2e
@pytest.mark.parametrize("module", ["_version", "other"])
def test_code_loaded_after_the_binding_is_judged_as_the_binding_judges(
    tmp_path: Path, module: str
) -> None:
    """A terminal summary imports the checkout's package from an installed copy: its
    ``_version.py``, which versioneer's build rewrote there, is the build's, as it is when a
    test loads it (E25 25: after the binding it was foreign-origin, and the run refuted). The
    control: another module of that copy, which differs from the tree's, refutes the run."""
    versioneer = {"setup.cfg": "[versioneer]\nversionfile_source = src/calc/_version.py\n"}
    files = {"src/calc/_version.py": "VERSION = '0+unknown'\n", "src/calc/other.py": "X = 1\n"}
    repo, _ = project(tmp_path, "def test_nothing():\n    pass\n", {**files, **versioneer})
    site = tmp_path / "venv" / "lib" / "python3.11" / "site-packages"
    shutil.copytree(repo / "src" / "calc", site / "calc")
    (site / "calc" / f"{module}.py").write_text("VERSION = '1.0'\nX = 2\n")  # the build's
    (repo / "conftest.py").write_text(LATE_SUMMARY.format(site=str(site), module=module))
    commit_all(repo, "a late summary")
    restamp.begin(open_checkout(repo))
    proc = run_pytest(repo, env=subprocess_env())
    assert proc.returncode == 0, proc.stdout + proc.stderr
    if module == "_version":
        assert "after the evidence was bound" not in proc.stderr, proc.stderr
        assert failures(repo) == {}
    else:
        assert "(foreign-origin: calc.other)" in proc.stderr, proc.stderr
        assert list(failures(repo)) == ["tests-failed"]


# -- a forked child that exits normally ----------------------------------------------------------

FORKING = """
import atexit, os, sys

def test_fork():
    sys.path.insert(0, {where!r})
    import calc
    pid = os.fork()
    if pid == 0:  # ends as a process that returns from its code does: its exit handlers run
        atexit._run_exitfuncs()
        os._exit(0)
    _, status = os.waitpid(pid, 0)
    assert status == 0 and calc.add(2, 3) == 5
"""


@pytest.mark.e2e
@pytest.mark.parametrize("foreign", [True, False], ids=["other-clone", "control"])
def test_a_forked_child_that_exits_leaves_the_runs_record_alone(
    tmp_path: Path, foreign: bool
) -> None:
    """The run's exit handler is the process's that opened it: in a forked child of the test
    process it must not close the run (its record of the loads so far would go with it)."""
    repo, other = project(tmp_path, "")
    where = str(other / "src") if foreign else str(repo / "src")
    found = scenario(repo, FORKING.format(where=where))
    if foreign:
        assert [(f.kind, f.module) for f in found.flags] == [(audit.FOREIGN, "calc")]
        assert "foreign-origin" in failures(repo)
    else:
        assert found.flags == ()
        assert failures(repo) == {}


# -- a namespace package of the checkout, loaded from the other clone ---------------------------

FROM_THE_PATH = """
import sys

def test_it():
    sys.path.insert(0, {where!r})
    {load}
    assert {value} in (1, 2)
"""


@pytest.mark.e2e
@pytest.mark.parametrize("foreign", [True, False], ids=["other-clone", "control"])
def test_namespace_package_from_another_clone(tmp_path: Path, foreign: bool) -> None:
    repo, other = project(tmp_path, "", {"src/nsp/mod.py": "VALUE = 1\n"})
    load = ("from nsp import mod", "mod.VALUE")
    from_other_clone(repo, other, foreign, load, "src/nsp/mod.py", "nsp.mod")


LEFT_BEHIND = """
import importlib

def test_plugins():
    assert importlib.import_module({module!r}).__name__ == {module!r}
"""


@pytest.mark.e2e
@pytest.mark.parametrize("tracked", [False, True], ids=["left-behind", "control"])
@pytest.mark.parametrize(
    ("folder", "module", "path"),
    [
        ("src/calc/plugins", "calc.plugins", "src"),  # below an import root of the tree
        ("extras_ns", "extras_ns", "."),  # at the top: no root of the tree names it (P09)
        ("src/extras_ns", "extras_ns", "src"),
        ("extras/sub", "extras.sub", "."),  # in a folder of the tree that is no root (M09)
    ],
)
def test_a_namespace_package_from_a_folder_the_tree_does_not_hold(
    tmp_path: Path, tracked: bool, folder: str, module: str, path: str
) -> None:
    """``src/calc/plugins/`` holds only an ignored log (left behind by a branch switch): it
    imports as a namespace package here, and a clean clone has no such folder. Holding a
    tracked file, the same folder is the tree's. A top-level one too, which no import root
    of the tree names."""
    files = {f"{folder}/data.txt": "tracked\n"} if tracked else {}
    files["extras/README.txt"] = "no Python here\n"
    repo, _ = project(tmp_path, "", {".gitignore": "__pycache__/\n*.log\n", **files})
    (repo / folder).mkdir(exist_ok=True)
    (repo / folder / "run.log").write_text("debug\n")
    found = scenario(repo, LEFT_BEHIND.format(module=module), PYTHONPATH=str(repo / path))
    assert folder in found.namespaces, found.namespaces
    if tracked:
        assert failures(repo) == {}
    else:
        assert folder in failures(repo).get("loaded-not-tested", "")


@pytest.mark.e2e
@pytest.mark.parametrize("left", ["bytecode", "an ignored log", "a data file", "a tracked link"])
def test_a_package_removed_where_no_hook_scrubbed_it_is_foretold(tmp_path: Path, left: str) -> None:
    """A package removed (`git rm` and a commit, `git reset --hard`: no hook fires) leaves
    its `__pycache__`; a test's import of it succeeds as a namespace package. The gate refuses
    it, but the plugin's own line as the run ended said it would accept (h214); it says why,
    and how to mend it; so for a folder that holds an ignored log besides (h215). Control: a
    data file left there too, which the tree holds (forecast and gate accept)."""
    files = {".gitignore": "__pycache__/\n*.py[co]\n*.log\n"}
    if left == "a data file":
        files["src/calc/gone/data.txt"] = "tracked\n"
    elif left == "a tracked link":  # to a folder (h216: no file below it)
        files["data/x.txt"] = "tracked\n"
    repo, _ = project(tmp_path, LEFT_BEHIND.format(module="calc.gone"), files)
    if left == "a tracked link":
        (repo / "src" / "calc" / "gone").mkdir()
        (repo / "src" / "calc" / "gone" / "data").symlink_to("../../../data")
        commit_all(repo, "a link")
        restamp.begin(open_checkout(repo))
    cache = repo / "src" / "calc" / "gone" / "__pycache__"
    cache.mkdir(parents=True)  # (after the generation began: its stamp scrubs)
    (cache / "mod.cpython-311.pyc").write_bytes(b"")
    if left == "an ignored log":
        (cache.parent / "run.log").write_text("debug\n")
    told = run(repo, PYTHONPATH=str(repo / "src"))
    found = audit_of(repo)
    assert "src/calc/gone" in found.namespaces, found.namespaces
    if left in ("bytecode", "an ignored log"):
        assert "loaded-not-tested" in failures(repo), failures(repo)
        assert "will refuse: loaded-not-tested: src/calc/gone" in told, told
        assert "`genstamp stamp` removes" in failures(repo)["loaded-not-tested"]
    else:
        assert failures(repo) == {} and "will refuse" not in told, told


@pytest.mark.e2e
def test_a_namespace_package_from_an_ignored_folder_is_ignored_code(tmp_path: Path) -> None:
    """``vendor/`` is git-ignored, and ``vendor/ns/`` holds data alone: it imports as a
    namespace package here, and a clean clone has no such folder. Refused as ignored code (to
    stop ignoring it, or declare it generated), not as a folder the tree lost."""
    repo, _ = project(tmp_path, "", {".gitignore": "__pycache__/\nvendor/\n"})
    (repo / "vendor" / "ns").mkdir(parents=True)
    (repo / "vendor" / "ns" / "data.txt").write_text("data\n")
    test = LEFT_BEHIND.format(module="ns")
    found, told = scenario_told(repo, test, PYTHONPATH=str(repo / "vendor"))
    assert "vendor/ns" in found.namespaces, found.namespaces
    failed = failures(repo)
    assert list(failed) == ["ignored-code"], failed
    assert "vendor/ns" in failed["ignored-code"], failed
    # foretold so, and only so: its files are not code the tests loaded (h215)
    assert "will refuse: ignored-code: vendor/ns (" in told and "data.txt" not in told, told
    assert "loaded-not-tested" not in told, told


def from_other_clone(
    repo: Path, other: Path, foreign: bool, load: tuple[str, str], rel: str, module: str
) -> None:
    """A test that puts the folder of ``rel``'s import root in the other clone (``foreign``)
    or in this one first on the path, then runs ``load`` (a statement, a value it checks):
    ``module`` is flagged foreign-origin and refused, or loaded from the work tree and
    accepted."""
    top = module.partition(".")[0]
    base = rel[: rel.index(f"/{top}/")] if f"/{top}/" in rel else rel.rpartition("/")[0]
    where = str((other if foreign else repo) / base)
    found = scenario(repo, FROM_THE_PATH.format(where=where, load=load[0], value=load[1]))
    assert top in found.packages
    foreign_flags = [f.module for f in found.flags if f.kind == audit.FOREIGN]
    if foreign:
        assert module in foreign_flags
        assert "foreign-origin" in failures(repo)
    else:
        assert foreign_flags == []
        assert rel in found.loaded
        assert failures(repo) == {}


# -- a package in a folder only setup.py or pytest's pythonpath names --------------------------

SETUP = "import setuptools\n\nsetuptools.setup(\n    name='mylib',\n    {},\n)\n"


@pytest.mark.e2e
@pytest.mark.parametrize("foreign", [True, False], ids=["other-clone", "control"])
@pytest.mark.parametrize(
    "declared",
    [
        {"setup.py": SETUP.format('package_dir={"": "python"}')},
        {"setup.py": SETUP.format('packages=setuptools.find_packages("python")')},
        {"setup.py": SETUP.format('packages=setuptools.find_namespace_packages(where="python")')},
        {
            "pyproject.toml": '[tool.pytest.ini_options]\ntestpaths = ["tests"]\n'
            'pythonpath = ["python"]\n'
        },
    ],
    ids=["package_dir", "find_packages", "find_namespace_packages", "pytest-pythonpath"],
)
def test_a_package_in_a_folder_its_metadata_names_from_another_clone(
    tmp_path: Path, foreign: bool, declared: dict[str, str]
) -> None:
    """``python/mylib``: neither the root nor ``src/``, named only by ``setup.py`` (read, not
    run) or by pytest's ``pythonpath``; loaded from the other clone, it is foreign."""
    rel = "python/mylib/__init__.py"
    repo, other = project(tmp_path, "", {rel: "VALUE = 1\n", **declared})
    from_other_clone(repo, other, foreign, ("import mylib", "mylib.VALUE"), rel, "mylib")


# -- a module the tests import from a zip archive of the tree ------------------------------------

ZIP_TEST = """
import os, sys, zipfile

ZIP = os.path.join(os.path.dirname(__file__), "..", "deps.zip")

def test_zip():
    if {swap}:  # the archive briefly holds other code, then its own bytes again
        saved = open(ZIP, "rb").read()
        with zipfile.ZipFile(ZIP, "w") as z:
            z.writestr("zmod.py", "VALUE = 2\\n")
    sys.path.insert(0, ZIP)
    try:
        import zmod
    finally:
        if {swap}:
            open(ZIP, "wb").write(saved)
    assert zmod.VALUE in (1, 2)
"""


@pytest.mark.e2e
@pytest.mark.parametrize("swap", [False, True], ids=["as-committed", "swapped-during-the-run"])
def test_a_module_from_a_zip_archive_of_the_tree(tmp_path: Path, swap: bool) -> None:
    """zipimport from an archive the tree holds: the member's bytes are judged against the
    archive in the tested tree (accepted as committed; code it held only during the run is
    refused, and the run says so as it ends)."""
    repo, _ = project(tmp_path, "")
    with zipfile.ZipFile(repo / "deps.zip", "w") as z:
        z.writestr("zmod.py", "VALUE = 1\n")
    found, out = scenario_told(repo, ZIP_TEST.format(swap=swap))
    assert "deps.zip/zmod.py" in found.loaded
    if swap:
        assert "deps.zip/zmod.py" in failures(repo)["loaded-not-tested"]
        assert "will refuse: loaded-not-tested: deps.zip/zmod.py" in out, out
    else:
        assert failures(repo) == {}
        assert "will refuse" not in out, out


@pytest.mark.e2e
@pytest.mark.parametrize("declared", [True, False], ids=["generated", "control"])
def test_a_module_from_an_ignored_archive_the_build_makes(tmp_path: Path, declared: bool) -> None:
    """An archive the build makes (git-ignored): what the tests load from it is ignored code,
    unless ``generated`` names the archive."""
    generated = '\n[tool.genstamp]\ngenerated = ["deps.zip"]\n' if declared else ""
    pyproject = '[tool.pytest.ini_options]\ntestpaths = ["tests"]\n' + generated
    ignore = "__pycache__/\n*.py[co]\ndeps.zip\n"
    repo, _ = project(tmp_path, "", {"pyproject.toml": pyproject, ".gitignore": ignore})
    with zipfile.ZipFile(repo / "deps.zip", "w") as z:
        z.writestr("zmod.py", "VALUE = 1\n")
    scenario(repo, ZIP_TEST.format(swap=False))
    found = failures(repo)
    if declared:
        assert found == {}
    else:
        assert list(found) == ["ignored-code"]
        assert "deps.zip/zmod.py" in found["ignored-code"]


# -- a module imported while its file briefly held other content --------------------------------

BRIEF_EDIT = """
import importlib, pathlib, sys

def test_brief_edit():
    path = pathlib.Path({path!r})
    old = path.read_text()
    path.write_text({new!r})
    try:
        sys.modules.pop("calc", None)
        import calc
        importlib.reload(calc)
    finally:
        path.write_text(old)
    assert calc.add(2, 3) == 5
"""


@pytest.mark.e2e
@pytest.mark.parametrize("edited", [True, False], ids=["other-content", "control"])
def test_brief_edit_records_the_bytes_that_ran(tmp_path: Path, edited: bool) -> None:
    repo, _ = project(tmp_path, "")
    path = repo / "src" / "calc" / "__init__.py"
    new = OTHER if edited else CALC
    test = BRIEF_EDIT.format(path=str(path), new=new)
    found, told = scenario_told(repo, test, PYTHONPATH=str(repo / "src"))
    ran = found.loaded["src/calc/__init__.py"]
    assert loads.blob_of(new.encode()) in ran
    assert path.read_text() == CALC  # restored: hashing the file now would see nothing
    if edited:
        assert list(failures(repo)) == ["loaded-not-tested"]  # code that is in no tree ran
        # the run's own forecast says so too, rather than that the gate will accept
        assert "will refuse: loaded-not-tested: src/calc/__init__.py" in told, told
    else:
        assert ran == (loads.blob_of(CALC.encode()),)
        assert failures(repo) == {}
        assert "will refuse" not in told and "genstamp gate: bound to tree" in told, told


# -- a loader the audit does not know: spec_from_file_location ----------------------------------

CUSTOM = """
import importlib.util

def test_custom_loader():
    spec = importlib.util.spec_from_file_location("calc", {path!r})
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert module.add(2, 3) == 5
"""


@pytest.mark.e2e
@pytest.mark.parametrize("foreign", [True, False], ids=["other-clone", "control"])
def test_a_custom_loader_cannot_hide_a_load(tmp_path: Path, foreign: bool) -> None:
    repo, other = project(tmp_path, "")
    source = (other if foreign else repo) / "src" / "calc" / "__init__.py"
    flagged = [(f.kind, f.module) for f in scenario(repo, CUSTOM.format(path=str(source))).flags]
    assert flagged == ([(audit.FOREIGN, "calc")] if foreign else [])


# -- the start-up hook: written for the run, gone after it --------------------------------------


PTH_TEST = """
import os, pathlib, sysconfig

def test_hook_present():
    site = pathlib.Path(sysconfig.get_path("purelib"))
    pathlib.Path({record!r}).write_text(str(os.getpid()))
    assert list(site.glob(f"{prefix}{{os.getpid()}}-*.pth")), "the run's hook is in place"
    assert os.environ["GENSTAMP_RUN"]
"""


@pytest.mark.e2e
def test_no_pth_is_left_behind(tmp_path: Path) -> None:
    import sysconfig

    from genstamp import child

    site = Path(sysconfig.get_path("purelib"))
    leftover = site / f"{child.PTH_PREFIX}999999999-dead.pth"  # a killed run's
    leftover.write_text(child.pth_line(999999, "", "/nowhere"))
    repo, _ = project(tmp_path, "")
    record = tmp_path / "pid.txt"
    scenario(repo, PTH_TEST.format(record=str(record), prefix=child.PTH_PREFIX))
    pid = record.read_text()
    assert not leftover.exists()
    assert not list(site.glob(f"{child.PTH_PREFIX}{pid}-*.pth"))  # its own, removed


# -- xdist workers record into their controller's run -------------------------------------------


@pytest.mark.e2e
@pytest.mark.parametrize("foreign", [True, False], ids=["other-clone", "control"])
def test_xdist_workers_loads_are_merged(tmp_path: Path, foreign: bool) -> None:
    repo, other = project(tmp_path, "")
    where = str(other / "src") if foreign else str(repo / "src")
    (repo / "tests" / "test_more.py").write_text("def test_more():\n    pass\n")
    found = scenario(repo, RESTORING.format(where=where), "-n", "2", "-p", "xdist")
    flagged = [(f.kind, f.module) for f in found.flags]
    assert flagged == ([(audit.FOREIGN, "calc")] if foreign else [])


# -- the audit events the recorder pairs, as this CPython emits them ------------------------------

EVENTS_PROBE = """
import sys
seen = []
def hook(event, args):
    if event == "compile" and isinstance(args[0], bytes) and "probe_mod" in str(args[1]):
        seen.append("compile")
    elif event == "open" and str(args[0]).endswith(".pyc") and "probe_mod" in str(args[0]):
        seen.append("open-pyc")
    elif event == "marshal.loads" and seen and seen[-1] == "open-pyc":
        seen.append("marshal.loads")
    elif event == "exec" and getattr(args[0], "co_filename", "").endswith("probe_mod.py"):
        seen.append("exec")
sys.addaudithook(hook)
import probe_mod
print(" ".join(seen))
"""


@pytest.mark.parametrize("cached", [False, True], ids=["source", "bytecode"])
def test_the_event_order_the_recorder_relies_on(tmp_path: Path, cached: bool) -> None:
    """compile (the source bytes) then exec; or open of the pyc, marshal.loads, then exec."""
    import subprocess
    import sys

    (tmp_path / "probe_mod.py").write_text("X = 1\n")
    env = subprocess_env(bytecode=True)
    if cached:
        subprocess.run([sys.executable, "-c", "import probe_mod"], cwd=tmp_path, env=env)
    out = subprocess.run(
        [sys.executable, "-c", EVENTS_PROBE], cwd=tmp_path, env=env, capture_output=True, text=True
    ).stdout.split()
    if cached:
        assert out == ["open-pyc", "marshal.loads", "exec"]
    else:  # CPython tries the pyc first: a compile that follows is what ran
        assert out[-2:] == ["compile", "exec"] and "marshal.loads" not in out


NAMESAKE = """
import sys

def test_namesake():
    sys.path.insert(0, {where!r})
    import thirdparty.calc
    assert thirdparty.calc.VALUE == 3
"""


@pytest.mark.e2e
def test_a_namesake_inside_another_package_is_not_foreign(tmp_path: Path) -> None:
    """``thirdparty/calc.py`` is ``thirdparty.calc``, not the checkout's ``calc``."""
    repo, _ = project(tmp_path, "")
    elsewhere = tmp_path / "elsewhere"
    (elsewhere / "thirdparty").mkdir(parents=True)
    (elsewhere / "thirdparty" / "__init__.py").write_text("")
    (elsewhere / "thirdparty" / "calc.py").write_text("VALUE = 3\n")
    found = scenario(repo, NAMESAKE.format(where=str(elsewhere)))
    assert found.flags == ()


# -- the light records a child process builds its loads with ------------------------------------


def test_a_light_record_is_what_namedtuple_makes() -> None:
    """``records.record`` stands in for ``namedtuple`` in the modules a child imports: the
    same fields, defaults, equality, repr and pickling, and the same refusal of a wrong
    number of fields."""
    import collections
    import pickle

    from genstamp.records import record

    light = record("Load", "path blob module via detail", ("",), loads.__name__)
    heavy = collections.namedtuple("Load", "path blob module via detail", defaults=("",))
    for values in [("/p", "b", "m", "source"), ("/p", "b", "m", "bytecode", "why")]:
        mine, theirs = light(*values), heavy(*values)
        assert mine == theirs and tuple(mine) == tuple(theirs)
        assert repr(mine) == repr(theirs)
        assert mine._fields == theirs._fields
        assert (mine.path, mine.detail) == (theirs.path, theirs.detail)
    load = loads.Load("/p", "b", "m", "source")
    assert pickle.loads(pickle.dumps(load)) == load
    assert type(pickle.loads(pickle.dumps(load))) is loads.Load
    for wrong in [("/p",), ("/p", "b", "m", "source", "", "extra")]:
        with pytest.raises(TypeError):
            light(*wrong)
        with pytest.raises(TypeError):
            heavy(*wrong)


# -- what the audit hook holds ------------------------------------------------------------------

HELD = """
import builtins, gc, sys, types
from genstamp import loads

def modules_held():
    stop = {id(builtins.__dict__), id(sys.modules)}
    seen, todo, found = set(), [loads._AUDIT], set()
    while todo:
        obj = todo.pop()
        for ref in gc.get_referents(obj):
            if id(ref) not in seen and id(ref) not in stop:
                seen.add(id(ref))
                todo.append(ref)
                if isinstance(ref, types.ModuleType):
                    found.add(ref.__name__)
    return sorted(found)

run = loads.Run(FOLDER, WORKDIR, {}, None, None)
loads.activate(run)
print("active", " ".join(modules_held()))
loads.deactivate(run.folder)
print("ended", " ".join(modules_held()))
"""


def test_the_audit_hook_holds_no_module_once_no_run_is_active(tmp_path: Path) -> None:
    """The interpreter keeps an audit hook to its very end: one that held genstamp's globals
    would keep every module alive through finalisation (slow to tear down at exit)."""
    (tmp_path / "run").mkdir()
    code = HELD.replace("FOLDER", repr(str(tmp_path / "run"))).replace(
        "WORKDIR", repr(str(tmp_path))
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], env=subprocess_env(), capture_output=True, text=True
    )
    assert proc.returncode == 0, proc.stderr
    active, ended = (line.split()[1:] for line in proc.stdout.splitlines())
    assert "os" in active  # while a run is active it reaches loads' globals, os among them
    assert ended == []


# -- copies of the project kept inside the work tree by an installer --------------------------

USES_CALC = "import calc\n\n\ndef test_value():\n    assert calc.VALUE in (1, 2)\n"


@pytest.mark.e2e
@pytest.mark.parametrize("copy", ["stale", "identical"])
def test_a_copy_of_the_project_in_pep_582_packages(tmp_path: Path, copy: str) -> None:
    """PEP 582's ``__pypackages__/X.Y/lib`` (pdm's) is a site-packages: a copy of the project
    installed there is judged as one in site-packages is, byte for byte the tree's or
    foreign. The control: the copy ``pip install .`` leaves, the tree's own bytes."""
    repo, _ = project(tmp_path, "", {".gitignore": "__pycache__/\n__pypackages__/\n"})
    lib = repo / "__pypackages__" / "3.11" / "lib"
    (lib / "calc").mkdir(parents=True)
    (lib / "calc" / "__init__.py").write_text(OTHER if copy == "stale" else CALC)
    scenario(repo, USES_CALC, PYTHONPATH=str(lib))
    said = failures(repo)
    if copy == "identical":
        assert said == {}, said
        return
    assert list(said) == ["foreign-origin"], said
    assert "__pypackages__/3.11/lib/calc/__init__.py" in said["foreign-origin"]


@pytest.mark.e2e
@pytest.mark.parametrize("kept", ["clone-of-this", "another-project", "no-environment"])
def test_a_clone_kept_in_an_environment_of_the_work_tree(tmp_path: Path, kept: str) -> None:
    """pip keeps an editable install from a repository in ``<venv>/src/NAME``: a clone of this
    repository there is another clone, as outside the work tree, though the environment is
    the installer's. The controls: a clone of another project there is a dependency, and a
    nested work tree outside any environment is the tree's own business (a submodule's)."""
    repo, _ = project(tmp_path, "", {".gitignore": "__pycache__/\n.venv/\n"})
    env = repo / ".venv"
    env.mkdir()
    if kept != "no-environment":
        (env / "pyvenv.cfg").write_text("home = /usr/bin\n")
    nested = env / "src" / "calc"
    if kept == "another-project":
        init_repo(nested)
        (nested / "src" / "calc").mkdir(parents=True)
        (nested / "src" / "calc" / "__init__.py").write_text(CALC)
        commit_all(nested, "another project's calc")
    else:
        git(tmp_path, "clone", "-q", str(repo), str(nested))
    scenario(repo, USES_CALC, PYTHONPATH=str(nested / "src"))
    said = failures(repo)
    if kept == "clone-of-this":
        assert list(said) == ["foreign-origin"], said
        assert ".venv/src/calc/src/calc/__init__.py" in said["foreign-origin"]
    elif kept == "another-project":
        assert said == {}, said
    else:  # git-ignored code of the work tree, as before
        assert list(said) == ["ignored-code"], said


# -- code that ran under a file's name, compiled from no bytes the file holds --------------------

RUNS_CODE_OF = """
import ast, marshal, os, types
from pathlib import Path

PATH = str(Path(__file__).parent.parent / "src" / "calc" / "__init__.py")


def load(code):
    module = types.ModuleType("calc")
    module.__file__ = PATH
    exec(code, module.__dict__)
    return module


def test_value():
    {body}
    assert load(code).VALUE == {value}
"""
# ``TEXT``: the text the code is made of; in between, another module's code runs (a loader
# compiles a batch, then executes each)
COMPILED_EARLIER = 'code = compile(TEXT, PATH, "exec"); exec(compile("", "<batch>", "exec"), {})'
# code compiled under no file's name, then named after the file (as a cache keeps it)
KEPT = 'code = compile(TEXT, "<kept>", "exec").replace(co_filename=PATH)'


@pytest.mark.e2e
@pytest.mark.parametrize(
    ("body", "text", "refused"),
    [
        (COMPILED_EARLIER, OTHER, False),  # S06: the text the recorder saw compiled
        # code kept under no compile of this name, the file read just before (no syntax
        # tree compiled after it): not an import hook's (U04)
        (KEPT + "; open(PATH).read()", OTHER, True),
        # the file's own bytes compiled just before: not what runs (U09)
        (COMPILED_EARLIER + "; compile(open(PATH, 'rb').read(), PATH, 'exec')", OTHER, True),
        ("code = marshal.loads(marshal.dumps(compile(TEXT, PATH, 'exec')))", OTHER, False),
        ("code = compile(ast.parse(TEXT), PATH, 'exec')", OTHER, True),  # S04
        # the controls: the file's own text, however it was compiled and kept
        (COMPILED_EARLIER, CALC, False),
        ("code = compile(ast.parse(TEXT), PATH, 'exec')", CALC, False),
        # an import hook that reads the file and compiles its AST, changed (typeguard's)
        (
            "tree = ast.parse(open(PATH).read()); "
            "tree.body.append(ast.parse('VALUE = 2').body[0]); "
            "code = compile(tree, PATH, 'exec')",
            CALC,
            False,
        ),
        # the same hook, running other code between its parse and its compile (V01: it
        # imports its transformer on first use)
        (
            "tree = ast.parse(open(PATH, 'rb').read(), PATH); "
            "exec(compile('', '<transformer>', 'exec'), {}); "
            "tree.body.append(ast.parse('VALUE = 2').body[0]); "
            "code = compile(tree, PATH, 'exec')",
            CALC,
            False,
        ),
    ],
    ids=[
        *("earlier", "read", "own-compiled", "marshal", "ast", "earlier-own", "ast-own"),
        *("hook", "hook-importing"),
    ],
)
def test_code_not_compiled_from_its_file_is_not_its_file(
    tmp_path: Path, body: str, text: str, refused: bool
) -> None:
    """Module code that runs under a source's name is that file's only when it was compiled
    from the file's bytes (as the recorder saw them compiled, or as compiling the file gives):
    code compiled from other text earlier (S06: that text ran), or from the AST of other text
    (S04), or kept from elsewhere, is not."""
    repo, _ = project(tmp_path, "")
    value = 2 if text == OTHER or "VALUE = 2" in body else 1
    test = RUNS_CODE_OF.format(body=body, value=value).replace("TEXT", repr(text))
    found = scenario(repo, test)
    flagged = [(f.kind, f.path, f.detail) for f in found.flags]
    found_now = failures(repo)
    if refused:
        assert flagged == [(audit.STALE, "src/calc/__init__.py", loads.NOT_COMPILED)], flagged
        assert list(found_now) == ["stale-bytecode"], found_now
    elif text == OTHER:  # compiled from bytes the recorder saw: their blob, not the tree's
        assert flagged == [], flagged
        assert list(found_now) == ["loaded-not-tested"], found_now
    else:
        assert flagged == [] and found_now == {}, (flagged, found_now)


CACHING_LOADER = """
import importlib.abc, importlib.util, marshal, os, sys

ROOT = os.path.dirname(os.path.abspath(__file__))
CACHE = os.path.join(ROOT, ".codecache")


class Loader(importlib.abc.Loader):
    def __init__(self, path):
        self.path = path

    def create_module(self, spec):
        return None

    def exec_module(self, module):
        kept = os.path.join(CACHE, module.__name__)
        if os.path.exists(kept):
            with open(kept, "rb") as fh:
                code = marshal.loads(fh.read())
        else:
            with open(self.path, "rb") as fh:
                code = compile(fh.read(), self.path, "exec")
            os.makedirs(CACHE, exist_ok=True)
            with open(kept, "wb") as fh:
                fh.write(marshal.dumps(code))
        exec(code, module.__dict__)


class Finder(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name != "calc":
            return None
        where = os.path.join(ROOT, "src", "calc", "__init__.py")
        return importlib.util.spec_from_file_location(name, where, loader=Loader(where))


sys.meta_path.insert(0, Finder())
"""


COMPILES_FIRST = """
import importlib.machinery
from pathlib import Path


def test_compiles():  # the checkout's loader compiles calc, and nothing runs it
    src = str(Path(__file__).parent.parent / "src")
    assert importlib.machinery.PathFinder.find_spec("calc", [src]).loader.get_code("calc")


def test_value():
    import calc

    assert calc.VALUE == 1
"""
VALUE_IS_1 = "import calc\n\n\ndef test_value():\n    assert calc.VALUE == 1\n"


@pytest.mark.e2e
@pytest.mark.parametrize(("edited", "first"), [(True, False), (True, True), (False, False)])
def test_a_loaders_own_code_cache_of_an_earlier_version(
    tmp_path: Path, edited: bool, first: bool
) -> None:
    """A conftest's loader keeps the code it compiled in a git-ignored cache of its own and
    never checks it against the source (S01): after an edit, the warm run executes the old
    code and passes, where a clean clone compiles the edit and fails. A test that has the
    checkout's loader compile calc first, and never runs that code, changes nothing (U07)."""
    files = {"conftest.py": CACHING_LOADER, ".gitignore": "__pycache__/\n.codecache/\n"}
    repo, _ = project(tmp_path, COMPILES_FIRST if first else VALUE_IS_1, files)
    run(repo)  # fills the cache
    if edited:
        (repo / "src" / "calc" / "__init__.py").write_text(OTHER)
        commit_all(repo, "a regression")
    restamp.begin(open_checkout(repo))
    told = run(repo)
    found_now = failures(repo)
    if not edited:
        assert found_now == {}, found_now
        return
    assert "will refuse: stale-bytecode: calc" in told, told
    assert list(found_now) == ["stale-bytecode"], found_now
    assert loads.NOT_COMPILED in found_now["stale-bytecode"]
    clone = repo.parent / "clean"
    git(repo.parent, "clone", "-q", str(repo), str(clone))
    proc = run_pytest(clone, "-p", "no:genstamp", env=subprocess_env())
    assert proc.returncode == 1, proc.stdout


EVALS_ITS_OWN_AST = """
import ast


def test_evaluates_pieces_of_its_own_file():  # as executing's tests/utils.py does
    node = ast.parse("1 + 2", mode="eval").body
    for _ in range(300):
        assert eval(compile(ast.Expression(node), __file__, "eval")) == 3
    assert eval(compile("VALUE + 1", __file__, "eval"), {"VALUE": 1}) == 2
"""
# a module's body compiled under the test file's name from other text: still judged as one
# (made here: the file holds no string of that text, see the next test)
EXECS_OTHER_TEXT = EVALS_ITS_OWN_AST + '    exec(compile("VALUE" + " = 2", __file__, "exec"), {})\n'


@pytest.mark.e2e
@pytest.mark.parametrize("other_text", [False, True], ids=["expressions", "a-body"])
def test_an_expression_compiled_under_the_tests_own_name_is_no_module(
    tmp_path: Path, other_text: bool
) -> None:
    """A test evaluating expressions compiled from its own file's syntax tree under that
    file's name (executing's suite, probe A18) ran no module body: it was judged as module
    code kept from an earlier version (stale-bytecode), and each evaluation recompiled the
    whole file. A module body compiled from other text under the name is judged as before:
    the file running bytes the tree does not hold."""
    repo, _ = project(tmp_path, EXECS_OTHER_TEXT if other_text else EVALS_ITS_OWN_AST)
    restamp.begin(open_checkout(repo))
    told = run(repo)
    found = failures(repo)
    if other_text:  # text of no file compiled under a source's name (README: Limitations)
        assert list(found) == ["loaded-not-tested"], found
        assert "tests/test_it.py" in found["loaded-not-tested"], found
    else:
        assert found == {}, found
        assert "genstamp gate: bound to tree" in told, told


# a module whose docstring holds an example, as Sybil's PythonCodeBlockParser finds it
DOCUMENTED = '''"""Values.

.. code-block:: python

    from calc.doc import VALUE
    assert VALUE == 1, "\\\\n"
"""
VALUE = 1
CHECKED = True
'''
# a test that compiles text under that module's name and runs it, as Sybil and
# pytest-markdown-docs run the examples of a module's docstrings (padded to their lines)
RUNS_AN_EXAMPLE = """
import pathlib
import sys

DOC = pathlib.Path(__file__).parents[1] / "src" / "calc" / "doc.py"


def test_runs_it():
    sys.path.insert(0, str(DOC.parents[1]))
    lines = DOC.read_text().splitlines()
    import calc.doc

    value = calc.doc.__doc__.splitlines()
    text = {
        "example": "\\n" * 4 + "\\n".join(line[4:] for line in lines[4:6]) + "\\n",
        "a-line-below": "\\n" * 5 + "\\n".join(line[4:] for line in lines[4:6]) + "\\n",
        # Sybil's, after an escape in the prose above the example (h197)
        "a-line-above": "\\n" * 3 + "\\n".join(line[4:] for line in lines[4:6]) + "\\n",
        # the docstring's value, as Sybil reads it: an escape read (h196)
        "as-its-value": "\\n" * 4 + "\\n".join(line[4:] for line in value[4:6]) + "\\n",
        "edited": "from calc.doc import VALUE\\nassert VALUE == 1 or True\\n",
        "stale": "\\n".join(lines[:8]) + "\\n",  # the module's code without its last line
        # lines the module holds in its docstring, as a copy of its older code kept there
        # for reference, where a loader's stale copy of the module's text stands: its top
        "held-elsewhere": "\\n".join(line[4:] for line in lines[4:6]) + "\\n",
        "two-lines-below": "\\n" * 6 + "\\n".join(line[4:] for line in lines[4:6]) + "\\n",
    }[WHICH]
    exec(compile(text, str(DOC), "exec"), {"__name__": "calc.doc"})
"""


@pytest.mark.e2e
@pytest.mark.parametrize(
    "which",
    [
        "example",
        "a-line-below",
        "a-line-above",
        "as-its-value",
        "edited",
        "stale",
        "held-elsewhere",
        "two-lines-below",
    ],
)
def test_an_example_of_a_modules_docstring_run_under_its_name_is_the_modules_text(
    tmp_path: Path, which: str
) -> None:
    """A tool that runs the examples of a module's docstrings compiles each under the
    module's file name (Sybil's ``PythonCodeBlockParser``, pytest-markdown-docs): the text is
    lines the file holds, in a string, padded to where they stand (Sybil there,
    pytest-markdown-docs a line below). Every green run was refused loaded-not-tested, in a
    clean clone too. Other text under the name is judged as before: an edited example, a
    stale copy of the module's own code (lines it holds as code, one left out), and lines it
    holds in a string that do not stand where they run (a copy of its older code kept in its
    docstring, run as a loader runs a stale copy of its text, from the top: h194)."""
    test = RUNS_AN_EXAMPLE.replace("WHICH", repr(which))
    repo, _ = project(tmp_path, test, {"src/calc/doc.py": DOCUMENTED})
    run(repo)
    found = failures(repo)
    if which in ("example", "a-line-below", "a-line-above", "as-its-value"):
        assert found == {}, found
    else:
        assert list(found) == ["loaded-not-tested"], found
        assert "src/calc/doc.py" in found["loaded-not-tested"], found


# A module first imported while the test has replaced the OS functions the recorder asks of
# files and writes its log with: mock.patch of os.write or os.fstat (a full disk simulated), or
# every loaded module's `os` swapped for a fake over a file system in memory, as pyfakefs's
# `fs` fixture does (the import system still reads the real files).
UNDER_PATCHED_OS = """
import errno
import os
import sys
from unittest import mock

import calc


class Fake:
    def __init__(self, real, lies):
        self._real, self._lies = real, lies

    def __getattr__(self, name):
        found = getattr(self._real, name)
        if name == "path":
            return Fake(found, {"isfile", "isdir", "exists", "lexists"})
        if name in self._lies:
            return lambda *a, **k: False  # nothing of the real files is there
        if name in {"stat", "lstat", "fstat", "open", "write", "read", "scandir", "listdir"}:
            def fails(*a, **k):
                raise OSError(errno.ENOENT, "not in the fake file system")
            return fails
        return found


def swapped():
    # in every module but the standard library's and pytest's, as pyfakefs skips its own
    real, fake, kept = os, Fake(os, set()), []
    skip = {*sys.stdlib_module_names, "_pytest", "pytest", "pluggy", "py", "xdist", "execnet"}
    for module in list(sys.modules.values()):
        if str(getattr(module, "__name__", "")).partition(".")[0] in skip:
            continue
        for name, value in list(getattr(module, "__dict__", {}).items()):
            if value is os:
                kept.append((module, name))
                setattr(module, name, fake)
    return real, kept  # (this module's os is swapped too)


def test_imports_under_it():
    calc.__path__.append(OTHER)  # a leftover entry naming another clone's package
    if HOW == "fake-os":
        real, kept = swapped()
        try:
            from calc import MODULE
        finally:
            for module, name in kept:
                setattr(module, name, real)
    else:
        with mock.patch(f"os.{HOW}", side_effect=OSError(errno.ENOSPC, "disk full")):
            from calc import MODULE
    assert MODULE.X == 1
"""


@pytest.mark.e2e
@pytest.mark.parametrize("module", ["own", "other"])
@pytest.mark.parametrize("how", ["write", "fstat", "fake-os"])
def test_a_module_imported_while_a_test_replaces_os_functions_is_recorded(
    tmp_path: Path, how: str, module: str
) -> None:
    """The recorder asked of files and wrote its log through the ``os`` functions the test
    had replaced: the load was lost. Another clone's module imported meanwhile was accepted,
    and the tree's own one was refused (code never seen to run). It uses the functions as
    they were when it started (``realos``)."""
    name = "errors" if module == "own" else "extra"
    test = UNDER_PATCHED_OS.replace("HOW", repr(how)).replace("MODULE", name)
    repo, other = project(
        tmp_path, test.replace("OTHER", repr(str(tmp_path / "other" / "src" / "calc")))
    )
    (repo / "src" / "calc" / "errors.py").write_text("X = 1\n")
    commit_all(repo, "errors")
    (other / "src" / "calc" / "extra.py").write_text("X = 1\n")
    restamp.begin(open_checkout(repo))
    run(repo, PYTHONPATH=str(repo / "src"))
    said = foreign_unless(repo, module == "own")
    assert module == "own" or "calc.extra" in said, said


# -- a module of the work tree's name, from a plain folder elsewhere -----------------------------

USES_HELPER = "from helpers import expected\n\n\ndef test_expected():\n    assert expected() == 1\n"
APPENDED = '[tool.pytest.ini_options]\ntestpaths = ["tests"]\naddopts = "--import-mode=append"\n'
MAKES_ITS_HELPER = """
import sys


def test_expected(tmp_path, monkeypatch):
    (tmp_path / "helpers.py").write_text("def expected():\\n    return 1\\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    sys.modules.pop("helpers", None)
    from helpers import expected

    assert expected() == 1
"""


@pytest.mark.e2e
@pytest.mark.parametrize(
    "old",
    [
        "stale",
        "stale-in-a-work-tree",
        "stale-sourceless",
        "stale-compiled-here",
        "identical",
        "made-by-the-test",
    ],
)
def test_a_test_helper_of_the_tree_loaded_from_a_plain_folder(tmp_path: Path, old: str) -> None:
    """``tests/helpers.py`` is on the import path through ``tests/`` (pytest puts it there),
    and an old copy in a folder on ``PYTHONPATH`` (no git work tree) comes first: the warm
    run tests the copy, a clean clone the tree's helper (S03)."""
    tree_helper = "def expected():\n    return 2\n"
    files = {"tests/helpers.py": tree_helper, "pyproject.toml": APPENDED}
    repo, _ = project(tmp_path, USES_HELPER, files)
    folder = tmp_path / "old"
    if old == "stale-in-a-work-tree":  # an unrelated repository's (dotfiles in $HOME)
        init_repo(tmp_path / "dotfiles")
        folder = tmp_path / "dotfiles" / "old"
    folder.mkdir()
    stale = old.startswith("stale")
    copy = "def expected():\n    return 1\n" if stale else tree_helper
    (folder / "helpers.py").write_text(copy)
    if old == "stale-sourceless":  # `compileall -b`, the source removed
        import py_compile

        py_compile.compile(str(folder / "helpers.py"), str(folder / "helpers.pyc"), doraise=True)
        (folder / "helpers.py").unlink()
    elif old == "stale-compiled-here":  # compiled in the tree once, under a relative name
        (folder / "helpers.py").unlink()
        (repo / "tests" / "helpers.py").write_text(copy)
        target = str(folder / "helpers.pyc")
        code = f"import py_compile; py_compile.compile('tests/helpers.py', {target!r})"
        subprocess.run([sys.executable, "-c", code], cwd=repo, check=True)
        (repo / "tests" / "helpers.py").write_text(tree_helper)
    if not stale:  # the tree's own bytes (or the test's own module): the tree's test
        (repo / "tests" / "test_it.py").write_text(
            MAKES_ITS_HELPER if old == "made-by-the-test" else USES_HELPER.replace("1", "2")
        )
        commit_all(repo, "test")
    restamp.begin(open_checkout(repo))
    told = run(repo, PYTHONPATH=str(folder))
    found = audit_of(repo)
    found_now = failures(repo)
    if not stale:
        assert found.flags == () and found_now == {}, (found.flags, found_now)
        return
    assert [(f.kind, f.module) for f in found.flags] == [(audit.FOREIGN, "helpers")], found
    assert "tests/helpers.py" in found.flags[0].detail
    assert "will refuse: foreign-origin: helpers" in told, told
    assert list(found_now) == ["foreign-origin"], found_now
    clone = repo.parent / "clean"
    git(repo.parent, "clone", "-q", str(repo), str(clone))
    assert run_pytest(clone, "-p", "no:genstamp", env=subprocess_env()).returncode == 1


NAMED_APPENDED = '[project]\nname = "calc"\nversion = "0"\n' + APPENDED


@pytest.mark.e2e
@pytest.mark.parametrize("on_path", ["an-export", "the-checkout"])
def test_a_package_scikit_build_declares_loaded_from_an_export_is_foreign(
    tmp_path: Path, on_path: str
) -> None:
    """A package in ``python/calc`` that scikit-build-core's ``wheel.packages`` declares (not
    pytest's ``pythonpath``), and an export of an earlier commit (``git archive``: no git work
    tree) on ``PYTHONPATH``: its ``calc`` ran, the warm run passes, a clean clone fails. The
    control: the checkout's own ``python/`` there."""
    files = {
        "python/calc/__init__.py": CALC,
        "tests/test_it.py": "import calc\n\n\ndef test_value():\n    assert calc.VALUE == 1\n",
        "pyproject.toml": '[tool.scikit-build]\nwheel.packages = ["python/calc"]\n',
        ".gitignore": "__pycache__/\n*.py[co]\n",
    }
    repo = committed(tmp_path / "work", files, "project")
    export = exported(repo, tmp_path / "export")
    (repo / "python" / "calc" / "__init__.py").write_text(CALC.replace("VALUE = 1", "VALUE = 0"))
    commit_all(repo, "the regression")
    restamp.begin(open_checkout(repo))
    where = export if on_path == "an-export" else repo
    proc = run_pytest(repo, env=subprocess_env(PYTHONPATH=str(where / "python")))
    if on_path == "the-checkout":
        assert proc.returncode == 1  # the regression ran, and the evidence says so
        assert list(failures(repo)) == ["tests-failed"]
        return
    assert proc.returncode == 0, proc.stdout + proc.stderr
    found = failures(repo)
    assert list(found) == ["foreign-origin"], found
    assert f"calc from {export / 'python' / 'calc'}" in found["foreign-origin"], found


@pytest.mark.e2e
@pytest.mark.parametrize(
    "old", ["export", "deeper-export", "plain-copy", "another-project", "never-held", "held-still"]
)
def test_a_module_the_tree_dropped_loaded_from_an_export_of_the_project(
    tmp_path: Path, old: str
) -> None:
    """``tests/helpers.py`` removed with its import left behind, and an export of an earlier
    commit (``git archive``: no git work tree, its ``pyproject.toml`` names this project) on
    ``PYTHONPATH``: the warm run passes, a clean clone fails at import (Y7 01). Controls: the
    same bytes in a folder of no project, or of another project (a shared ``helpers.py``, a
    library's), are the environment's: nothing tells them from a module the environment gives
    under a name the project once used (A8); and while the tree holds the helper, the export's
    byte-identical copy stands for it. A name the tree never held, from the export of this
    project (another branch's module, which a clean clone lacks as well), is foreign too."""
    helper = "def expected():\n    return 1\n"
    files = {"tests/helpers.py": helper, "pyproject.toml": NAMED_APPENDED}
    repo, _ = project(tmp_path, USES_HELPER, files)
    export = exported(repo, tmp_path / "export")
    folder = export / "tests"
    (folder / "test_it.py").unlink()  # the export's tests are not the run's
    if old == "deeper-export":  # the project's metadata two folders above the helper's
        (export / "lib").mkdir()
        shutil.move(str(export / "tests"), str(export / "lib" / "tests"))
        folder = export / "lib" / "tests"
    elif old == "plain-copy":
        (export / "pyproject.toml").unlink()
    elif old == "another-project":
        (export / "pyproject.toml").write_text(NAMED_APPENDED.replace('"calc"', '"tools"'))
    name = "support" if old == "never-held" else "helpers"
    if name != "helpers":
        (folder / "helpers.py").rename(folder / f"{name}.py")
    if old != "held-still":
        git(repo, "rm", "-q", "tests/helpers.py")
    (repo / "tests" / "test_it.py").write_text(USES_HELPER.replace("helpers", name))
    commit_all(repo, "the helper dropped, its import left behind")
    restamp.begin(open_checkout(repo))
    told = run(repo, PYTHONPATH=str(folder))
    found_now = failures(repo)
    if old not in ("export", "deeper-export", "never-held"):
        assert found_now == {}, found_now
        return
    assert list(found_now) == ["foreign-origin"], found_now
    assert f"{name} from {folder}" in found_now["foreign-origin"], found_now
    assert [f.detail for f in audit_of(repo).flags] == [
        "loaded from outside the checkout in place of tests/helpers.py, which the tested tree"
        " dropped"
        if old != "never-held"
        else "loaded from a copy of this project outside the checkout that is no git work tree"
        " (an export, an unpacked sdist: another version's code); the tested tree has no such"
        " module"
    ]
    assert f"will refuse: foreign-origin: {name}" in told, told
    clone = repo.parent / "clean"
    git(repo.parent, "clone", "-q", str(repo), str(clone))
    proc = run_pytest(clone, "-p", "no:genstamp", env=subprocess_env())
    assert proc.returncode != 0 and name in proc.stdout, proc.stdout


RUNS_THE_TOOL = """
import os, pathlib, runpy, subprocess, sys

ROOT = pathlib.Path(__file__).resolve().parent.parent


def test_the_tool_runs(tmp_path):
    tool = os.environ.get("TOOL")
    if os.environ.get("EXPORT"):  # a release check: the tests export a commit and run its tool
        archive = subprocess.run(
            ["git", "archive", os.environ["EXPORT"]], cwd=ROOT, capture_output=True, check=True
        )
        subprocess.run(["tar", "-x", "-C", str(tmp_path)], input=archive.stdout, check=True)
        tool = str(tmp_path / "tools" / "report.py")
    elif os.environ.get("WRITE"):  # a test's own script, bytes and all
        tool = str(tmp_path / "report.py")
        pathlib.Path(tool).write_text(os.environ["WRITE"])
    if os.environ.get("IN_PROCESS"):
        sys.path.insert(0, os.path.dirname(tool))  # as `python tool.py` puts its folder first
        assert runpy.run_path(tool, run_name="__main__")["VERSION"]
    else:
        out = subprocess.run([sys.executable, tool], capture_output=True, text=True, check=True)
        assert out.stdout.startswith("tool")
"""
TOOL_V1 = 'from helper import VERSION\nprint("tool", VERSION)\n'
HELPER_V1 = "VERSION = 1\n"


@pytest.mark.e2e
@pytest.mark.parametrize(
    "case",
    [
        "past-version",
        "past-version-run-path",
        "past-helper-from-its-bytecode",
        "current",
        "never-committed",
    ],
)
def test_a_file_of_an_export_run_by_its_path(tmp_path: Path, case: str) -> None:
    """An export of an earlier commit (``git archive``, an unpacked sdist: no git work tree)
    whose ``tools/report.py`` a test runs by its path, in a child (``python .../report.py``)
    or in its own process (``runpy.run_path``): no module name maps it to the tree, so its
    bytes are asked of git. A commit held them, the tree's file differs: the warm run tested
    the old tool (h175); so with the module beside it, ``helper``, once its bytecode is in the
    export's ``__pycache__`` (h179). Controls: an export of the tree as it is, and a script
    whose bytes no commit held (a tool's own), are not judged."""
    files = {"tools/report.py": TOOL_V1, "tools/helper.py": HELPER_V1}
    repo, _ = project(tmp_path, RUNS_THE_TOOL, files)
    export = exported(repo, tmp_path / "export")
    tool = export / "tools" / "report.py"
    changed = "helper.py" if "helper" in case else "report.py"
    if case != "current":
        text = (repo / "tools" / changed).read_text()
        (repo / "tools" / changed).write_text(text + "# v2\n")
        commit_all(repo, f"{changed} v2")
    if case == "never-committed":
        tool.write_text(TOOL_V1 + "# v3\n")
    if "bytecode" in case:
        compiled = subprocess.run([sys.executable, "-m", "compileall", "-q", str(tool.parent)])
        assert compiled.returncode == 0
    restamp.begin(open_checkout(repo))
    told = run(repo, TOOL=str(tool), IN_PROCESS="1" if case.endswith("run-path") else "")
    said = foreign_unless(repo, case in ("current", "never-committed"))
    if case.startswith("past-"):
        ran = tool.parent / changed
        assert f"from {ran}: its bytes are a past version of tools/{changed}" in said, said
        assert "will refuse: foreign-origin" in told, told


@pytest.mark.e2e
@pytest.mark.parametrize(
    "case", ["head-while-edited", "an-older-release", "an-older-release-named", "own-script"]
)
def test_a_copy_the_run_makes_and_runs_by_its_path(tmp_path: Path, case: str) -> None:
    """The tests themselves make the copy they run: an export of HEAD while the work tree's
    tool holds an edit not committed (they ran the last commit, not the tree tested: refused,
    as a clone of HEAD is); an export of an older commit of this project (its pyproject.toml
    names it, as an sdist from dist/ that a test unpacks does: a clean clone has none of it,
    h182), refused; of a project that names itself nowhere, and a script of the tests' own
    whose bytes a past commit held by chance (h179), accepted."""
    old = 'VERSION = 0\nprint("tool", VERSION)\n'
    files = {"tools/report.py": TOOL_V1, "tools/helper.py": HELPER_V1, "tools/old.py": old}
    if case.endswith("named"):
        files["pyproject.toml"] = '[project]\nname = "calc"\nversion = "0"\n\n' + (
            '[tool.pytest.ini_options]\ntestpaths = ["tests"]\n'
        )
    repo, _ = project(tmp_path, RUNS_THE_TOOL, files)
    first = git(repo, "rev-parse", "HEAD")
    (repo / "tools" / "report.py").write_text(TOOL_V1 + "# v2\n")
    (repo / "tools" / "old.py").unlink()
    commit_all(repo, "report v2, old.py gone")
    if case == "head-while-edited":
        (repo / "tools" / "report.py").write_text(TOOL_V1 + "# v3, not committed\n")
    restamp.begin(open_checkout(repo))
    env = {"WRITE": old} if case == "own-script" else {}
    if case != "own-script":
        env = {"EXPORT": "HEAD" if case == "head-while-edited" else first}
    told = run(repo, **env)
    said = foreign_unless(repo, case in ("an-older-release", "own-script"))
    if case.endswith("named"):
        assert "its bytes are a past version of tools/report.py, run from a copy" in said, said
    if case == "head-while-edited":
        assert "its bytes are a past version of tools/report.py" in said, said
        assert "an export of HEAD the tests made" in said, said
        assert "will refuse: foreign-origin" in told, told


@pytest.mark.e2e
@pytest.mark.parametrize("case", ["stale", "dropped", "rebuilt", "undeclared", "not-ignored"])
def test_a_build_copy_in_the_work_tree_stands_for_the_modules_own_file(
    tmp_path: Path, case: str
) -> None:
    """A build's copy of the package in the work tree (`build/lib/calc`, git-ignored, declared
    `generated = ["build/**"]`) on the import path, made before a commit changed
    `src/calc/__init__.py` or dropped `src/calc/extra.py` (its import left behind): the stale
    copy ran, the warm run passed, and `generated` let it through (h181). A copy that is the
    tree's file byte for byte (rebuilt) is accepted; one not declared `generated` stays
    `ignored-code`'s too. One git does not ignore is the tree's own, as `git add -A` takes it
    (a package moved into a project of its own, not yet added: h182)."""
    settings = "" if case == "undeclared" else '\n[tool.genstamp]\ngenerated = ["build/**"]\n'
    files = {
        "pyproject.toml": '[tool.pytest.ini_options]\ntestpaths = ["tests"]\n' + settings,
        ".gitignore": "__pycache__/\n*.py[co]\nbuild/\n",
        "src/calc/extra.py": "EXTRA = 1\n",
    }
    tests = "import calc\nfrom calc import extra\n\n\ndef test_it():\n    assert calc.VALUE\n"
    repo, _ = project(tmp_path, tests, files)
    lib = repo / ("vendor" if case == "not-ignored" else "build/lib")
    build = lib / "calc"
    shutil.copytree(repo / "src" / "calc", build)
    if case == "dropped":
        git(repo, "rm", "-q", "src/calc/extra.py")
    else:
        (repo / "src" / "calc" / "__init__.py").write_text(CALC.replace("a + b", "a - b"))
    commit_all(repo, "a change the build copy does not have")
    if case == "rebuilt":
        shutil.rmtree(build)
        shutil.copytree(repo / "src" / "calc", build)
    restamp.begin(open_checkout(repo))
    # (not-ignored: untracked, and in the tested tree all the same, as `git add -A` takes it)
    proc = run_pytest(repo, env=subprocess_env(PYTHONPATH=str(lib)))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    found = failures(repo)
    if case in ("rebuilt", "not-ignored"):
        assert found == {}, found
        return
    said = found.get("foreign-origin", "")
    if case == "dropped":
        assert f"calc.extra from {build / 'extra.py'}: loaded from a copy" in said, found
        assert "src/calc/extra.py, which the tested tree dropped" in said, found
    else:
        assert "src/calc/__init__.py that differs from it (a stale build output)" in said, found
    assert ("ignored-code" in found) == (case == "undeclared"), found


@pytest.mark.e2e
def test_a_subpackage_moved_into_a_project_of_its_own_before_it_is_added(tmp_path: Path) -> None:
    """`acme.utils` (of a namespace package `acme`) moved with `mv` from `src/acme/utils` into
    a new project `libs/acme-utils/src/acme/utils`, the tests run before `git add`: the files
    are the tree's own (`git add -A` takes them), not a stale copy of a module the tree
    dropped (h182)."""
    repo = init_repo(tmp_path / "app")
    files = {
        "pyproject.toml": '[project]\nname = "acme-app"\nversion = "1"\n\n'
        '[tool.pytest.ini_options]\npythonpath = ["src", "libs/acme-utils/src"]\n'
        'testpaths = ["tests"]\n',
        "src/acme/app/__init__.py": "from acme.utils.ops import add\n",
        "src/acme/utils/__init__.py": "",
        "src/acme/utils/ops.py": "def add(a, b):\n    return a + b\n",
        "tests/test_app.py": "from acme.app import add\n\n\ndef test_add():\n"
        "    assert add(2, 3) == 5\n",
        ".gitignore": "__pycache__/\n",
    }
    write_files(repo, files)
    commit_all(repo, "app")
    moved = repo / "libs" / "acme-utils"
    (moved / "src" / "acme").mkdir(parents=True)
    shutil.move(str(repo / "src" / "acme" / "utils"), str(moved / "src" / "acme" / "utils"))
    (moved / "pyproject.toml").write_text('[project]\nname = "acme-utils"\nversion = "1"\n')
    restamp.begin(open_checkout(repo))
    run(repo)
    commit_all(repo, "acme.utils in a project of its own")
    assert failures(repo) == {}


RUNS_THE_SCRIPT = """
import pathlib, subprocess

ROOT = pathlib.Path(__file__).resolve().parent.parent


def test_the_script_runs():
    out = subprocess.run([str(ROOT / "scripts" / "tool.py")], capture_output=True, text=True)
    assert out.stdout == "hello\\n", out.stderr
"""


@pytest.mark.e2e
@pytest.mark.parametrize(
    "case", ["committed-plain", "new-file", "recorded-executable", "file-mode-counts"]
)
def test_a_script_run_as_a_program_whose_executable_bit_git_does_not_see(
    tmp_path: Path, case: str
) -> None:
    """Under `core.fileMode=false` (a shared, WSL or VM-mounted checkout) a script committed
    as 100644 and made executable here (`git status` shows nothing), or added so, runs as a
    program in the tests; a clone of the commit cannot run it and fails. Controls: the index
    records it executable (`git update-index --chmod=+x`), or git sees the bit (the default:
    the tested tree records 100755 as the file has it) (h177)."""
    script = f"#!{sys.executable}\nprint('hello')\n"
    files = {} if case == "new-file" else {"scripts/tool.py": script}
    repo, _ = project(tmp_path, RUNS_THE_SCRIPT, files)
    tool = repo / "scripts" / "tool.py"
    if case != "file-mode-counts":
        git(repo, "config", "core.fileMode", "false")
    if case == "new-file":
        tool.parent.mkdir()
        tool.write_text(script)
    tool.chmod(0o755)
    if case == "recorded-executable":
        git(repo, "update-index", "--chmod=+x", "scripts/tool.py")
    commit_all(repo, "the script executable")
    assert git(repo, "ls-files", "-s", "scripts/tool.py").startswith(
        "100755" if case in ("recorded-executable", "file-mode-counts") else "100644"
    )
    restamp.begin(open_checkout(repo))
    told = run(repo)
    found = failures(repo)
    if case in ("recorded-executable", "file-mode-counts"):
        assert found == {}, found
        return
    assert list(found) == ["loaded-not-tested"], found
    assert "ran as programs are executable here" in found["loaded-not-tested"], found
    assert "scripts/tool.py" in found["loaded-not-tested"], found
    assert f"will refuse: loaded-not-tested: scripts/tool.py ({audit.NOT_EXECUTABLE})" in told


LOADS_CALC_FROM = """
import importlib.util, os, sys

spec = importlib.util.spec_from_file_location("calc", os.environ["CALC_FROM"])
calc = importlib.util.module_from_spec(spec)
sys.modules["calc"] = calc
spec.loader.exec_module(calc)
"""


@pytest.mark.e2e
@pytest.mark.parametrize("where", ["outside", "the-tree"])
def test_a_root_loaded_by_path_from_a_file_named_like_no_root(tmp_path: Path, where: str) -> None:
    """A conftest loads the import root ``calc`` from a file outside the checkout whose path
    names no root (``legacy/impl.py``): the module is the checkout's, its code another's (S07)."""
    files = {"conftest.py": LOADS_CALC_FROM}
    repo, _ = project(
        tmp_path, "import calc\n\n\ndef test_value():\n    assert calc.VALUE\n", files
    )
    legacy = tmp_path / "legacy" / "impl.py"
    legacy.parent.mkdir()
    legacy.write_text(OTHER)
    source = legacy if where == "outside" else repo / "src" / "calc" / "__init__.py"
    run(repo, CALC_FROM=str(source))
    said = foreign_unless(repo, where == "the-tree")
    if where != "the-tree":
        assert "calc from " + str(legacy) in said, said


RUNS_A_TOOL = """
import os, subprocess, sys


def test_tool():
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
    out = subprocess.run([sys.executable, os.environ["TOOL"]], env=env, capture_output=True)
    assert out.stdout == b"report\\n", out
"""


@pytest.mark.e2e
def test_a_scripts_own_module_beside_it_is_the_scripts(tmp_path: Path) -> None:
    """A test runs the user's tool (``~/bin/report.py``) handing it the run's import path;
    the tool imports ``helpers`` from its own folder, first on its path, while the tree's
    ``tests/helpers.py`` is on it too: the script's own module, not a copy of the tree's
    (T22)."""
    files = {"tests/helpers.py": "def banner():\n    return 'tree'\n", "pyproject.toml": APPENDED}
    repo, _ = project(tmp_path, RUNS_A_TOOL, files)
    tool = tmp_path / "bin"
    tool.mkdir()
    (tool / "helpers.py").write_text("def banner():\n    return 'report'\n")
    (tool / "report.py").write_text("import helpers\nprint(helpers.banner())\n")
    run(repo, TOOL=str(tool / "report.py"))
    found = audit_of(repo)
    assert found.flags == () and failures(repo) == {}, (found.flags, failures(repo))


AST_HOOK = """
import ast, importlib.machinery, sys


class Loader(importlib.machinery.SourceFileLoader):
    def source_to_code(self, data, path, *, _optimize=-1):
        tree = ast.parse(data, path)
        tree.body.append(ast.parse("HOOKED = True").body[0])
        return compile(ast.fix_missing_locations(tree), path, "exec", dont_inherit=True)


class Finder:
    def find_spec(self, name, path=None, target=None):
        if name != "calc":
            return None
        spec = importlib.machinery.PathFinder.find_spec(name, path)
        spec.loader = Loader(name, spec.origin)
        return spec


sys.meta_path.insert(0, Finder())
"""


@pytest.mark.e2e
def test_an_ast_hooks_compile_cpython_caches_under_the_standard_name(tmp_path: Path) -> None:
    """An import hook that overrides only ``source_to_code`` (a ``SourceFileLoader`` subclass)
    gets its compile cached by CPython in ``__pycache__`` under the standard name: the next
    run of the same generation reads it through the hook, and it is the hook's, judged by its
    header, as typeguard's own tag is (V02)."""
    tests = "import calc\n\n\ndef test_hooked():\n    assert calc.HOOKED and calc.VALUE == 1\n"
    repo, _ = project(tmp_path, tests, {"conftest.py": AST_HOOK})
    for _ in range(2):
        proc = run_pytest(repo, env=subprocess_env(bytecode=True, PYTHONPATH="src"))
        assert proc.returncode == 0, proc.stdout + proc.stderr
        assert failures(repo) == {}, failures(repo)
    assert list((repo / "src" / "calc" / "__pycache__").glob("__init__.cpython-*.pyc"))


# -- what an editable install of a namespace project puts in its __path__ (Z17) -----------------

EDITABLE_NAMESPACE_CONFTEST = """
import importlib.machinery, os, sys

# as setuptools' editable finder of a namespace package: a key on sys.path for its path hook,
# whose finder gives the namespace's folders and the key itself (so __path__ is never empty)
KEY = "__editable__.acme_calc-1.finder.__path_hook__"
HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "acme")


class NamespaceFinder:
    @classmethod
    def find_spec(cls, fullname, target=None):
        if fullname != "acme":
            return None
        spec = importlib.machinery.ModuleSpec(fullname, None, is_package=True)
        spec.submodule_search_locations = [HERE, KEY]
        return spec


def hook(entry):
    if entry != KEY:
        raise ImportError(entry)
    return NamespaceFinder


sys.path_hooks.append(hook)
sys.path.append(KEY)
"""
EDITABLE_NAMESPACE_TEST = """
def test_it():
    from acme import calc
    assert calc.VALUE == 1
"""


@pytest.mark.e2e
def test_an_editable_namespace_finders_key_in_path_is_no_folder(tmp_path: Path) -> None:
    """setuptools' editable install of a flat namespace project (``acme/calc.py``, no
    ``acme/__init__.py``) puts its path hook's key in the namespace's ``__path__``: no folder,
    nothing imported from it, not a folder the tested tree lacks (refused before)."""
    repo, _ = project(
        tmp_path,
        "",
        {"acme/calc.py": "VALUE = 1\n", "conftest.py": EDITABLE_NAMESPACE_CONFTEST},
    )
    found = scenario(repo, EDITABLE_NAMESPACE_TEST)
    assert "acme/calc.py" in found.loaded, found
    assert failures(repo) == {}


# -- text compiled under a relative name that names no file (Z17: setuptools-scm's tests) -------

RELATIVE_NAME_TEST = """
import os

def test_exec():
    path = os.path.join(os.path.dirname(__file__), "..", "src", "calc", "__init__.py")
    ns = {}
    exec(compile(open(path).read(), "__init__.py", "exec"), ns)
    assert ns["VALUE"] == 1
"""


@pytest.mark.e2e
def test_text_compiled_under_a_relative_name_of_no_file_is_no_file(tmp_path: Path) -> None:
    """A test execs a module's text compiled under ``"__init__.py"``, which names no file from
    the run's folder: code of a name of no file, as ``<string>``, not a file the tested tree
    lacks (refused ``loaded-not-tested`` before)."""
    repo, _ = project(tmp_path, "")
    scenario(repo, RELATIVE_NAME_TEST)
    assert failures(repo) == {}


# -- bytecode run by what does not check it against its source ---------------------------------

UNCHECKED_TEST = """
import importlib.machinery, importlib.util, marshal, os, runpy, types

SRC = os.path.abspath("src/calc/__init__.py")
PYC = importlib.util.cache_from_source(SRC)


def load(how):
    if how == "sourceless-loader":
        loader = importlib.machinery.SourcelessFileLoader("calc", PYC)
        spec = importlib.util.spec_from_loader("calc", loader, origin=SRC)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module.add
    if how == "runpy":
        return runpy.run_path(PYC)["add"]
    module = types.ModuleType("calc")
    module.__file__ = SRC
    with open(PYC, "rb") as fh:
        exec(marshal.loads(fh.read()[16:]), module.__dict__)
    return module.add


def test_add():
    assert load({how!r})(2, 3) == 5
"""


@pytest.mark.e2e
@pytest.mark.parametrize("how", ["sourceless-loader", "runpy", "marshal"])
@pytest.mark.parametrize("case", ["stale", "control"])
def test_bytecode_no_loader_checked_is_judged_by_its_code(
    tmp_path: Path, how: str, case: str
) -> None:
    """A pyc in the source's own `__pycache__`, run by what never compares its header with the
    source (a `SourcelessFileLoader` given the source as origin, `runpy.run_path`, `marshal`):
    compiled from an older text, it is stale though CPython's own import would have recompiled
    it (Z24 01: accepted); compiled from the current one, it is the tree's."""
    import importlib.util
    import py_compile
    import shutil

    repo, _ = project(tmp_path, "")
    source = repo / "src" / "calc" / "__init__.py"
    old = tmp_path / "old.pyc"
    py_compile.compile(str(source), cfile=str(old), doraise=True)  # of the committed text
    if case == "stale":  # the same size, a later second: CPython's import would recompile
        source.write_text(CALC.replace("a + b", "a - b"))
        later = source.stat().st_mtime + 10
        os.utime(source, (later, later))
    (repo / "tests" / "test_it.py").write_text(UNCHECKED_TEST.format(how=how))
    commit_all(repo, "the test")
    restamp.begin(open_checkout(repo))  # (which scrubs bytecode: put in place after it)
    cached = Path(importlib.util.cache_from_source(str(source)))
    cached.parent.mkdir(exist_ok=True)
    shutil.copy(old, cached)
    run(repo)
    flagged = [(f.kind, f.module) for f in audit_of(repo).flags]
    if case == "control":
        assert flagged == [] and failures(repo) == {}, (flagged, failures(repo))
        return
    assert [kind for kind, _ in flagged] == [audit.STALE], flagged
    assert "stale-bytecode" in failures(repo)


# -- bytecode alone, compiled from another clone's file, under a name of no import root (D26) -----

FOREIGN_PYC_TEST = """
import importlib.machinery, importlib.util, py_compile


def test_copy(tmp_path):
    pyc = tmp_path / "copy.pyc"
    py_compile.compile({source!r}, cfile=str(pyc), doraise=True)
    loader = importlib.machinery.SourcelessFileLoader("calc_copy", str(pyc))
    module = importlib.util.module_from_spec(importlib.util.spec_from_loader("calc_copy", loader))
    loader.exec_module(module)
    assert module.add(2, 3) == 5
"""


@pytest.mark.e2e
@pytest.mark.parametrize("foreign", [True, False], ids=["other-clone", "control"])
def test_bytecode_alone_of_another_clones_file_is_that_clones(
    tmp_path: Path, foreign: bool
) -> None:
    """A .pyc compiled (in the test's tmp_path) from the other clone's file and run under a name
    that is no import root of the checkout (D26 13: accepted, nothing recorded): its code is
    that clone's. Compiled from the tree's own file, it is the tree's."""
    repo, other = project(tmp_path, "")
    source = (other if foreign else repo) / "src" / "calc" / "__init__.py"
    found = scenario(repo, FOREIGN_PYC_TEST.format(source=str(source)))
    elsewhere = [f.module for f in found.flags if f.kind == audit.FOREIGN]
    if foreign:
        assert elsewhere == ["calc_copy"], found.flags
        assert "foreign-origin" in failures(repo)
    else:
        assert elsewhere == [] and failures(repo) == {}, (found.flags, failures(repo))


# -- a .pth file of the work tree that site reads (D26) -------------------------------------------

SITE_DIR_TEST = """
import os, site, sys

sys.path.insert(0, os.path.abspath("src"))
import calc


def test_site():
    {read}site.addsitedir(os.path.abspath("tools/site"))
    assert calc.VALUE == 3
"""
PATH_FILE_CODE = "import calc; calc.VALUE = 3\n"


@pytest.mark.e2e
@pytest.mark.parametrize("case", ["hidden", "ignored", "ignored-read-first", "control"])
def test_a_path_file_of_the_work_tree_is_code_the_tests_ran(tmp_path: Path, case: str) -> None:
    """``site.addsitedir`` of a folder of the work tree runs the ``import`` lines of its .pth
    files: one whose edit the index hides (``--skip-worktree``), or one git ignores, made the
    run pass where a clean clone fails (D26 07, 06: accepted); committed, it is the tree's.
    Read as data first, it is still code once site runs it (a path read once was all)."""
    files = {"tools/site/zz.pth": PATH_FILE_CODE if case == "control" else "import sys\n"}
    if case.startswith("ignored"):
        files = {".gitignore": "__pycache__/\n*.py[co]\nzz.pth\n", "tools/site/README": ""}
    repo, _ = project(tmp_path, "", files)
    if case == "hidden":
        git(repo, "update-index", "--skip-worktree", "tools/site/zz.pth")
    (repo / "tools" / "site" / "zz.pth").write_text(PATH_FILE_CODE)
    read = 'open("tools/site/zz.pth").read()\n    ' if case == "ignored-read-first" else ""
    found = scenario(repo, SITE_DIR_TEST.replace("{read}", read))
    blob = loads.blob_of(PATH_FILE_CODE.encode())
    assert found.loaded["tools/site/zz.pth"] == (blob,)
    expected = {
        "hidden": {"hidden-change", "loaded-not-tested"},
        "ignored": {"ignored-code"},
        "ignored-read-first": {"ignored-code"},
        "control": set(),
    }
    assert set(failures(repo)) == expected[case], failures(repo)


PTH_DATA_TEST = """
from pathlib import Path


def test_weights():
    assert len(Path("data/model.pth").read_bytes()) == 300
"""


@pytest.mark.e2e
def test_a_path_file_read_as_data_is_data(tmp_path: Path) -> None:
    """`.pth` is also PyTorch's suffix for weights: an ignored one a test reads (no `site` runs
    its lines) is data the tests read, not code (F26 01: refused ignored-code)."""
    repo, _ = project(tmp_path, "", {".gitignore": "__pycache__/\n*.py[co]\ndata/\n"})
    (repo / "data").mkdir()
    (repo / "data" / "model.pth").write_bytes(bytes(range(256)) + bytes(44))
    found = scenario(repo, PTH_DATA_TEST)
    assert "data/model.pth" not in found.loaded
    assert failures(repo) == {}
