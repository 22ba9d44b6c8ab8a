"""`genstamp clean-run` end to end: a real project, real git worktrees, real virtual
environments (uv, and venv + pip once), real pytest runs in the clean checkout, and the gate.

Environments are expensive: one is built per session (under a lock shared by the xdist
workers) and copied into each test repository's env cache, where its key finds it."""

from __future__ import annotations

import hashlib
import io
import json
import os
import pwd
import re
import shutil
import signal
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from conftest import (
    _locked,
    _session_dir,
    commit_all,
    genstamp_here,
    git,
    init_repo,
    run_genstamp,
    run_pytest,
    run_python,
    subprocess_env,
)

import genstamp as genstamp_package
from genstamp import build, cleanroom, envcache
from genstamp.repo import open_checkout

pytestmark = pytest.mark.e2e

PYPROJECT = """\
[build-system]
requires = ["setuptools>=61"]
build-backend = "setuptools.build_meta"

[project]
name = "calc"
version = "0"

[project.optional-dependencies]
test = ["pytest"]

[tool.setuptools.packages.find]
where = ["src"]

[tool.pytest.ini_options]
testpaths = ["tests"]
"""
TESTS = (
    "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n\n\n"
    "def test_zero():\n    assert add(0, 0) == 0\n"
)
GITIGNORE = "__pycache__/\n*.py[co]\n*.egg-info/\nbuild/\n"
ENVS = Path("genstamp") / "clean-room" / "envs"


def write_project(root: Path, pyproject: str = PYPROJECT) -> Path:
    init_repo(root)
    (root / "src" / "calc").mkdir(parents=True)
    (root / "src" / "calc" / "__init__.py").write_text("from calc.ops import add\n")
    (root / "src" / "calc" / "ops.py").write_text("def add(a, b):\n    return a + b\n")
    (root / "tests").mkdir()
    (root / "tests" / "test_calc.py").write_text(TESTS)
    (root / "pyproject.toml").write_text(pyproject)
    (root / ".gitignore").write_text(GITIGNORE)
    commit_all(root, "calc")
    return root


def env_for_tests() -> dict[str, str]:
    """The isolated environment, with the machine's own pip configuration (the local index):
    HOME is a throwaway one here."""
    env = subprocess_env()
    user = Path(pwd.getpwuid(os.getuid()).pw_dir) / ".config" / "pip" / "pip.conf"
    if user.is_file() and "PIP_CONFIG_FILE" not in env:
        env["PIP_CONFIG_FILE"] = str(user)
    return env


def clean_run(root: Path, *args: str, tmp: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = env_for_tests()
    if tmp is not None:
        tmp.mkdir(exist_ok=True)
        env["TMPDIR"] = str(tmp)
    return run_genstamp(root, "clean-run", *args, env=env)


def genstamp(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """stamp, status or verify, in this process: the clean run above is the real command."""
    code, out, err = genstamp_here("-C", root, *args)
    return subprocess.CompletedProcess(["genstamp", *args], code, out, err)


@pytest.fixture(scope="session")
def cached_envs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The env cache of one clean run of the template project (uv), made once per session."""
    shared = _session_dir(tmp_path_factory) / "clean-room-template"
    with _locked(_session_dir(tmp_path_factory) / "clean-room-template.lock"):
        envs = shared / ".git" / ENVS
        if not envs.is_dir():
            shutil.rmtree(shared, ignore_errors=True)
            write_project(shared)
            proc = clean_run(shared, "--installer", "uv")
            assert proc.returncode == 0, proc.stdout + proc.stderr
    return envs


@pytest.fixture
def calc(tmp_path: Path, cached_envs: Path) -> Path:
    root = write_project(tmp_path / "calc")
    shutil.copytree(cached_envs, root / ".git" / ENVS, symlinks=True)
    return root


def state(root: Path) -> dict[str, str]:
    """What the user owns and a clean run must leave as it was."""
    gitdir = root / ".git"
    logs = sorted(p for p in (gitdir / "logs").rglob("*") if p.is_file())
    return {
        "status": git(root, "status", "--porcelain", "--untracked-files=all"),
        "index": hashlib.sha256((gitdir / "index").read_bytes()).hexdigest(),
        "stash": git(root, "stash", "list"),
        "refs": git(root, "for-each-ref"),
        "head": git(root, "rev-parse", "HEAD"),
        "reflogs": "".join(f"{p}:{p.read_text()}" for p in logs),
        "worktrees": git(root, "worktree", "list", "--porcelain"),
    }


def leftovers(tmp: Path) -> list[str]:
    """genstamp's temporary folders left in ``tmp`` (uv keeps a lock file of its own there)."""
    return sorted(p.name for p in tmp.glob("genstamp-clean-*"))


def warm_run(root: Path, **env: str) -> subprocess.CompletedProcess[str]:
    assert genstamp(root, "stamp").returncode == 0
    return run_pytest(root, env={**subprocess_env(), **env})


def test_fresh_change_green_in_both_and_accepted_with_require_clean_room(
    calc: Path, tmp_path: Path
) -> None:
    # a stash entry of the user's, which must stay as it is
    (calc / "tests" / "test_calc.py").write_text(TESTS + "\n# stashed\n")
    git(calc, "stash", "-q")
    # a fresh correct change, uncommitted: the clean checkout must hold it
    (calc / "src" / "calc" / "ops.py").write_text("def add(a, b):\n    return b + a\n")
    (calc / "tests" / "test_more.py").write_text(
        "from calc import add\n\n\ndef test_more():\n    assert add(1, 1) == 2\n"
    )
    before = state(calc)
    assert before["stash"]
    proc = clean_run(calc, "--json", tmp=tmp_path / "tmp")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    out = json.loads(proc.stdout)
    record = out["record"]
    assert record["ok"] and record["complete"]
    assert out["env_reused"] is True  # the session's environment, found by its key
    assert record["outcomes"] == {
        "tests/test_calc.py::test_add": "passed",
        "tests/test_calc.py::test_zero": "passed",
        "tests/test_more.py::test_more": "passed",  # untracked: in the clean checkout
    }
    assert [s["name"] for s in out["steps"]] == ["checkout", "environment", "install", "run"]
    assert state(calc) == before  # work tree, index, stash, refs, reflogs, worktrees
    assert leftovers(tmp_path / "tmp") == []  # the temporary folder is gone
    status = json.loads(genstamp(calc, "status", "--json").stdout)
    assert status["clean_room"]["tree"] == status["tree"] and status["clean_room"]["ok"]

    # the warm run agrees: accepted with the clean room required
    assert warm_run(calc, PYTHONPATH=str(calc / "src")).returncode == 0
    verdict = genstamp(calc, "verify", "--clean-room")
    assert verdict.returncode == 0, verdict.stdout + verdict.stderr
    with (calc / "pyproject.toml").open("a") as fh:
        fh.write("\n[tool.genstamp]\nrequire-clean-room = true\n")
    # another tree now: the clean-room evidence of the old one does not count
    assert warm_run(calc, PYTHONPATH=str(calc / "src")).returncode == 0
    refused = genstamp(calc, "verify", "--json")
    assert refused.returncode == 1
    assert [f["rule"] for f in json.loads(refused.stdout)["failures"]] == ["no-clean-room"]
    assert clean_run(calc).returncode == 0
    accepted = genstamp(calc, "verify")
    assert accepted.returncode == 0, accepted.stdout + accepted.stderr


def clean_run_json(root: Path) -> dict[str, Any]:
    """`genstamp clean-run --installer uv --json` of ``root``: what it says."""
    proc = clean_run(root, "--installer", "uv", "--json")
    assert proc.returncode in (0, 1), proc.stdout + proc.stderr
    out: dict[str, Any] = json.loads(proc.stdout)
    return out


def first_clean_run(root: Path, message: str) -> None:
    """Commit what ``root`` holds (``message``) and run it in a clean room for the first time:
    green, in an environment made for it."""
    commit_all(root, message)
    first = clean_run_json(root)
    assert first["record"]["ok"] and first["env_reused"] is False, first["record"]


HELPER_PYPROJECT = (  # the template's build system
    PYPROJECT.partition("[project]")[0]
    + '[project]\nname = "helper"\nversion = "0"\ndependencies = DEPENDENCIES\n'
)


def test_what_is_installed_from_the_checkout_is_the_trees_in_a_reused_environment(
    tmp_path: Path,
) -> None:
    """P23 14 and 04: an in-repo dependency (`./libs/helper`) was installed only as the cached
    environment was made: changed since, the reused environment held the old copy (refused,
    foreign-origin, where a fresh clone passes); and the requirements it states, from a file
    the environment's key does not cover, dropped `six` that the code still imports: the
    reused environment still had it (passed, where a fresh clone fails)."""
    root = write_project(
        tmp_path / "calc",
        PYPROJECT + '\n[tool.genstamp]\nclean-install = ["./libs/helper", ".[test]"]\n',
    )
    helper = root / "libs" / "helper"
    (helper / "helper").mkdir(parents=True)
    (helper / "helper" / "__init__.py").write_text("import six\n\n\ndef f():\n    return 1\n")
    (helper / "pyproject.toml").write_text(HELPER_PYPROJECT.replace("DEPENDENCIES", '["six"]'))
    (root / "tests" / "test_helper.py").write_text(
        "import helper\n\n\ndef test_f():\n    assert helper.f() == 1\n"
    )
    first_clean_run(root, "helper")
    (helper / "helper" / "__init__.py").write_text(
        "import six\n\n\ndef f():\n    return 1\n\n\ndef g():\n    return 2\n"
    )
    commit_all(root, "helper: g")
    second = clean_run_json(root)  # the same environment, the helper installed again from this tree
    assert second["env_reused"] is True
    assert second["record"]["ok"], second["record"]
    (helper / "pyproject.toml").write_text(HELPER_PYPROJECT.replace("DEPENDENCIES", "[]"))
    commit_all(root, "helper: six dropped, still imported")
    third = clean_run_json(root)  # a fresh clone's install has no six: neither has the clean room
    assert third["env_reused"] is False
    assert not third["record"]["ok"]


VERSIONED = PYPROJECT.replace('version = "0"', 'dynamic = ["version"]\ndependencies = ["six"]') + (
    '\n[tool.setuptools.dynamic]\nversion = {attr = "calc.__version__"}\n'
)


@pytest.mark.parametrize("installer", ["uv", "pip"])
def test_a_reused_environment_builds_the_project_as_an_isolated_build_does(
    tmp_path: Path, installer: str
) -> None:
    """setuptools reads a version that is no literal (`attr:`) by importing the package: the
    import writes bytecode into the clean checkout before its generation begins (scrubbed, as
    a checkout's hook scrubs: refused as stale-bytecode before), and once the package imports
    a dependency (`six`), a fresh clone's isolated build fails, where the reused environment's
    build saw the environment's `six` (passed)."""
    root = write_project(tmp_path / "calc", VERSIONED)
    init = root / "src" / "calc" / "__init__.py"
    init.write_text('from calc.ops import add\n\n__version__ = ".".join(["1", "0"])\n')
    commit_all(root, "a computed version")
    env = env_for_tests()
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    args = ("clean-run", "--installer", installer, "--json")
    first = run_genstamp(root, *args, env=env)
    assert first.returncode == 0, first.stdout + first.stderr
    assert json.loads(first.stdout)["env_reused"] is False
    init.write_text("import six\n\n" + init.read_text())
    commit_all(root, "the package imports six")
    second = run_genstamp(root, *args, env=env)
    assert second.returncode == 2, second.stdout + second.stderr
    assert "the install step failed" in second.stderr.splitlines()[-1], second.stderr
    log = Path(second.stderr.split("its log: ")[1].split(" (hint")[0]).read_text()
    assert "--no-build-isolation" in log and "No module named 'six'" in log, log


def test_a_folder_outside_the_checkout_is_installed_as_it_is_now_in_a_reused_environment(
    tmp_path: Path,
) -> None:
    """A dependency on a folder beside the checkout (`helper @ file:///…/helper`) was installed
    only as the cached environment was made: changed since, the reused environment ran the
    old copy (passed, where a fresh clone's install takes the folder as it is and fails); and
    gone, a fresh install fails, as a fresh clone's."""
    helper = tmp_path / "helper"
    (helper / "helper").mkdir(parents=True)
    (helper / "helper" / "__init__.py").write_text("def one():\n    return 1\n")
    (helper / "pyproject.toml").write_text(HELPER_PYPROJECT.replace("DEPENDENCIES", "[]"))
    url = helper.as_uri()
    root = write_project(
        tmp_path / "calc",
        PYPROJECT.replace('version = "0"', f'version = "0"\ndependencies = ["helper @ {url}"]'),
    )
    (root / "tests" / "test_helper.py").write_text(
        "import helper\n\n\ndef test_one():\n    assert helper.one() == 1\n"
    )
    first_clean_run(root, "helper")
    (helper / "helper" / "__init__.py").write_text("def one():\n    return 2\n")
    second = clean_run_json(root)
    assert second["env_reused"] is True
    assert not second["record"]["ok"], second["record"]
    assert second["record"]["outcomes"]["tests/test_helper.py::test_one"] == "failed"
    shutil.rmtree(helper)
    proc = clean_run(root, "--installer", "uv", "--json")
    assert proc.returncode == 2 and "the install step failed" in proc.stderr, proc.stderr


@pytest.mark.parametrize("installer", ["uv", "pip"])
def test_an_editable_install_s_import_hook_is_not_in_a_reused_environment_s_build(
    tmp_path: Path, installer: str
) -> None:
    """`clean-install = ["-e", "/…/helper", ".[test]"]`, the project's `attr:` version then
    importing helper: a fresh clone's build runs before helper is installed, and fails; the
    reused environment's build ran the import hook helper's editable install left there
    (setuptools' finder, installed by a .pth file), and passed."""
    helper = tmp_path / "helper"
    (helper / "helper").mkdir(parents=True)
    (helper / "helper" / "__init__.py").write_text("VERSION = '1.0'\n")
    (helper / "pyproject.toml").write_text(HELPER_PYPROJECT.replace("DEPENDENCIES", "[]"))
    install = f'\n[tool.genstamp]\nclean-install = ["-e", "{helper}", ".[test]"]\n'
    root = write_project(tmp_path / "calc", VERSIONED.replace('["six"]', "[]") + install)
    init = root / "src" / "calc" / "__init__.py"
    init.write_text('from calc.ops import add\n\n__version__ = "1.0"\n')
    commit_all(root, "a literal version")
    args = ("clean-run", "--installer", installer, "--json")
    first = run_genstamp(root, *args, env=env_for_tests())
    assert first.returncode == 0, first.stdout + first.stderr
    init.write_text("from helper import VERSION as __version__\nfrom calc.ops import add\n")
    commit_all(root, "the version from helper")
    second = run_genstamp(root, *args, env=env_for_tests())
    assert second.returncode == 2, second.stdout + second.stderr
    assert "the install step failed" in second.stderr.splitlines()[-1], second.stderr
    log = Path(second.stderr.split("its log: ")[1].split(" (hint")[0]).read_text()
    assert "No module named 'helper'" in log, log


def test_a_dependency_pinned_to_a_revision_of_a_local_repository_stays_at_it(
    tmp_path: Path,
) -> None:
    """`helper @ git+file:///…/helper@v1`: the revision is the key's text. A reused environment
    installed helper again from the repository's work tree (a later commit there), where a
    fresh clone's install takes v1."""
    helper = init_repo(tmp_path / "helper")
    (helper / "helper").mkdir()
    (helper / "helper" / "__init__.py").write_text("VALUE = 1\n")
    (helper / "pyproject.toml").write_text(HELPER_PYPROJECT.replace("DEPENDENCIES", "[]"))
    commit_all(helper, "v1")
    git(helper, "tag", "v1")
    pin = f'dependencies = ["helper @ git+{helper.as_uri()}@v1"]'
    root = write_project(
        tmp_path / "calc", PYPROJECT.replace('version = "0"', f'version = "0"\n{pin}')
    )
    (root / "tests" / "test_helper.py").write_text(
        "import helper\n\n\ndef test_v1():\n    assert helper.VALUE == 1\n"
    )
    first_clean_run(root, "helper at v1")
    (helper / "helper" / "__init__.py").write_text("VALUE = 2\n")
    commit_all(helper, "v2")
    (root / "README").write_text("a change of the project's own\n")
    commit_all(root, "readme")
    second = clean_run_json(root)
    assert second["env_reused"] is True
    assert second["record"]["ok"], second["record"]


def test_the_project_a_requirements_file_names_is_installed_again_in_a_reused_environment(
    tmp_path: Path,
) -> None:
    """`clean-install = ["-r", "requirements-dev.txt"]`, the file naming `.`: the reused
    environment kept the first tree's install of the project (a module the tree added since
    was foreign-origin, where a fresh clone passes; an entry point renamed since still
    answered, where it fails). It is installed again from each tree, as a fresh clone's is."""
    root = write_project(
        tmp_path / "calc",
        PYPROJECT + '\n[tool.genstamp]\nclean-install = ["-r", "requirements-dev.txt"]\n',
    )
    (root / "requirements-dev.txt").write_text(".[test]\n")
    first_clean_run(root, "requirements")
    (root / "src" / "calc" / "more.py").write_text("def sub(a, b):\n    return a - b\n")
    (root / "tests" / "test_more.py").write_text(
        "from calc.more import sub\n\n\ndef test_sub():\n    assert sub(3, 2) == 1\n"
    )
    commit_all(root, "calc.more")
    second = clean_run_json(
        root
    )  # the same environment, the project installed again from this tree
    assert second["env_reused"] is True
    assert second["record"]["ok"], second["record"]


@pytest.mark.parametrize(
    ("module", "declared", "installer", "passes"),
    [
        ("wheel", False, "uv", False),
        ("wheel", True, "uv", True),
        ("wheel", True, "pip", True),
        ("setuptools", False, "uv", True),
    ],
    ids=["undeclared", "declared", "declared-pip", "what-venv-holds"],
)
def test_what_the_build_needs_is_not_the_tests(
    tmp_path: Path, module: str, declared: bool, installer: str, passes: bool
) -> None:
    """P23 01: the build requirements were installed into the tests' environment (so that
    the project builds there without an index), and a module the code imports without
    declaring it, which only the build backend brings, passed the clean room where a fresh
    `pip install .` fails. Declared, it is there, with pip too (S23 27: pip counted it
    installed beside the environment and left it out). What `python -m venv` puts in every
    environment (setuptools, before Python 3.12) is there with uv too (S23 21)."""
    pyproject = PYPROJECT.replace(
        'requires = ["setuptools>=61"]', 'requires = ["setuptools>=61", "wheel"]'
    )
    if declared:
        pyproject = pyproject.replace(
            'version = "0"\n', f'version = "0"\ndependencies = ["{module}"]\n'
        )
    root = write_project(tmp_path / "calc", pyproject)
    ops = root / "src" / "calc" / "ops.py"
    ops.write_text(f"import {module}  # the build's\n\n\n" + ops.read_text())
    commit_all(root, f"calc imports {module}")
    proc = clean_run(root, "--installer", installer, "--json")
    assert proc.returncode in (0, 1), proc.stdout + proc.stderr
    record = json.loads(proc.stdout)["record"]
    assert record["ok"] is passes, record


def test_the_incident_green_warm_red_clean_refused_by_the_divergence_rule(
    calc: Path, tmp_path: Path
) -> None:
    # an editable install of another checkout: the previous commit's code on sys.path
    other = tmp_path / "other"
    git(calc, "worktree", "add", "--detach", "--quiet", str(other), "HEAD")
    # the patch: the package now imports a module nobody added
    (calc / "src" / "calc" / "__init__.py").write_text("from calc.arith import add\n")
    commit_all(calc, "the patch")
    warm = warm_run(calc, PYTHONPATH=str(other / "src"))
    assert warm.returncode == 0, warm.stdout  # green warm: it ran the other checkout's code
    proc = clean_run(calc, "--json")
    assert proc.returncode == 1, proc.stdout + proc.stderr  # red in the clean room
    record = json.loads(proc.stdout)["record"]
    assert not record["ok"] and record["outcomes"] == {}
    assert any(f.startswith("tests-failed") for f in record["failures"])
    verdict = genstamp(calc, "verify", "--json")
    assert verdict.returncode == 1
    failures = {f["rule"]: f for f in json.loads(verdict.stdout)["failures"]}
    assert "clean-room-diverged" in failures
    assert failures["clean-room-diverged"]["items"] == [
        "tests/test_calc.py::test_add (passed warm, not run clean)",
        "tests/test_calc.py::test_zero (passed warm, not run clean)",
    ]
    text = genstamp(calc, "verify").stdout
    assert "clean-room-diverged: tree " in text


LATE_CHECK = """
import pathlib


def pytest_unconfigure(config):
    if not (pathlib.Path(__file__).parent / "settings.local").is_file():
        raise RuntimeError("settings.local missing")
"""


@pytest.mark.parametrize("present_in_clone", [False, True])
def test_a_clean_run_pytest_fails_after_its_evidence_is_bound_fails(
    calc: Path, present_in_clone: bool
) -> None:
    """A committed conftest fails pytest after the tests, at its unconfigure, when a
    git-ignored file is missing: green warm (the file is there), red in a clean checkout. The
    clean run exits 1 and its record says it failed, though its evidence was bound green; the
    control commits the file, and the clean run passes."""
    (calc / "conftest.py").write_text(LATE_CHECK)
    (calc / "settings.local").write_text("x = 1\n")
    if not present_in_clone:
        (calc / ".gitignore").write_text(GITIGNORE + "settings.local\n")
    commit_all(calc, "a late check")
    assert warm_run(calc, PYTHONPATH=str(calc / "src")).returncode == 0
    proc = clean_run(calc, "--json")
    record = json.loads(proc.stdout)["record"]
    if present_in_clone:
        assert (proc.returncode, record["ok"]) == (0, True), proc.stdout + proc.stderr
        return
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert not record["ok"] and any("pytest exited with 1" in f for f in record["failures"])
    assert genstamp(calc, "verify", "--clean-room").returncode == 1


RUNNER = """
import sys
from calc import add
passed = add(2, 3) == 5
with open(sys.argv[1], "w") as fh:
    fh.write('<testsuite name="runner" tests="1" failures="%d">' % (not passed))
    fh.write('<testcase classname="runner" name="test_add">')
    fh.write("" if passed else '<failure message="add"/>')
    fh.write("</testcase></testsuite>")
"""


def test_a_red_clean_room_refuses_a_warm_run_with_no_outcome_of_each_test(
    calc: Path, tmp_path: Path
) -> None:
    """The incident again, the warm evidence from another runner (`genstamp run`): it records
    no outcome of each test to compare with the clean room's, and the clean room's failure of
    the tree still stands against its pass."""
    other = tmp_path / "other"
    git(calc, "worktree", "add", "--detach", "--quiet", str(other), "HEAD")
    (calc / "src" / "calc" / "__init__.py").write_text("from calc.arith import add\n")
    commit_all(calc, "the patch")
    assert clean_run(calc).returncode == 1  # red in the clean room
    runner = tmp_path / "runner.py"
    runner.write_text(RUNNER)
    report = tmp_path / "runner.xml"
    assert genstamp(calc, "stamp").returncode == 0
    env = {**subprocess_env(), "PYTHONPATH": str(other / "src")}
    warm = run_genstamp(
        calc,
        "run",
        "--junit",
        str(report),
        "--",
        sys.executable,
        str(runner),
        str(report),
        env=env,
    )
    assert warm.returncode == 0, warm.stdout + warm.stderr  # green since: the other checkout's
    verdict = json.loads(genstamp(calc, "verify", "--json").stdout)
    assert [f["rule"] for f in verdict["failures"]] == ["clean-room-diverged"], verdict
    assert "records no outcome of each test" in verdict["failures"][0]["message"]


def test_a_remembered_verdict_does_not_outlive_a_clean_room_failure_of_its_tree(
    calc: Path,
) -> None:
    """A tree the gate accepted (and remembers), then refused by the clean room (a test reads
    an ignored file the warm checkout has): once the generation has ended, a push of that
    tree is judged again, and the clean room's evidence refuses it. The project does not
    ignore what its install writes (``build/``, ``*.egg-info``): the clean checkout's run
    then tested another tree id, and refuted nothing the gate remembers."""
    (calc / ".gitignore").write_text("__pycache__/\n*.py[co]\nlocal.json\n")
    (calc / "tests" / "test_local.py").write_text(
        "from pathlib import Path\n\n\ndef test_local():\n"
        "    assert Path(__file__).parent.parent.joinpath('local.json').exists()\n"
    )
    (calc / "local.json").write_text("{}\n")
    commit_all(calc, "a test that reads an ignored file")
    git(calc, "branch", "feature")
    assert warm_run(calc, PYTHONPATH=str(calc / "src")).returncode == 0
    accepted = genstamp(calc, "verify", "--rev", "feature")
    assert accepted.returncode == 0, accepted.stdout + accepted.stderr  # and remembered
    assert clean_run(calc).returncode == 1  # red clean: the clone has no local.json
    git(calc, "checkout", "-q", "-b", "elsewhere")
    (calc / "README").write_text("another tree\n")
    commit_all(calc, "elsewhere")
    assert genstamp(calc, "stamp").returncode == 0  # a new generation (as the hooks begin)
    verdict = genstamp(calc, "verify", "--rev", "feature", "--json")
    assert verdict.returncode == 1, verdict.stdout
    rules = [f["rule"] for f in json.loads(verdict.stdout)["failures"]]
    assert "clean-room-diverged" in rules, rules


def test_a_clean_rooms_pass_is_no_verdict_that_outlives_a_warm_failure_of_its_tree(
    calc: Path,
) -> None:
    """The warm run of a tree fails (the test depends on the developer's environment), the
    clean room passes it. The clean room's gate judges its own run alone, and its pass is the
    clean room's record, not a verdict the repository remembers: once the warm generation has
    ended, a push of that tree is judged on the warm run, which failed, and the clean room's
    outcomes differ from it."""
    (calc / "tests" / "test_env.py").write_text(
        "import os\n\n\ndef test_env():\n    assert os.environ.get('WARM_BREAK') != '1'\n"
    )
    commit_all(calc, "a test that fails in one environment")
    assert warm_run(calc, PYTHONPATH=str(calc / "src"), WARM_BREAK="1").returncode == 1
    assert genstamp(calc, "verify").returncode == 1
    assert clean_run(calc).returncode == 0  # green clean: no WARM_BREAK there
    tested = git(calc, "rev-parse", "HEAD").strip()
    git(calc, "checkout", "-q", "-b", "elsewhere")
    (calc / "README").write_text("another tree\n")
    commit_all(calc, "elsewhere")
    assert genstamp(calc, "stamp").returncode == 0  # a new generation (as the hooks begin)
    verdict = genstamp(calc, "verify", "--rev", tested, "--json")
    assert verdict.returncode == 1, verdict.stdout + verdict.stderr
    # the control: a warm run of the tree that passes, then the same clean room and the same
    # new generation: accepted
    git(calc, "checkout", "-q", tested)
    assert warm_run(calc, PYTHONPATH=str(calc / "src")).returncode == 0
    assert genstamp(calc, "verify").returncode == 0  # and remembered
    assert clean_run(calc).returncode == 0
    git(calc, "checkout", "-q", "elsewhere")
    assert genstamp(calc, "stamp").returncode == 0
    accepted = genstamp(calc, "verify", "--rev", tested)
    assert accepted.returncode == 0, accepted.stdout + accepted.stderr


def test_a_clean_room_of_the_checkout_that_judges_weighs_on_another_worktrees_run(
    calc: Path, tmp_path: Path
) -> None:
    """A branch tested green in a linked worktree, its clean run made in the main worktree:
    red clean, the gate there refuses the other worktree's run (clean-room-diverged) as it
    would its own."""
    (calc / ".gitignore").write_text("__pycache__/\n*.py[co]\nlocal.json\n")
    (calc / "tests" / "test_local.py").write_text(
        "from pathlib import Path\n\n\ndef test_local():\n"
        "    assert Path(__file__).parent.parent.joinpath('local.json').exists()\n"
    )
    commit_all(calc, "a test that reads an ignored file")
    git(calc, "branch", "feature")
    other = tmp_path / "other"
    git(calc, "worktree", "add", "-q", str(other), "feature")
    (other / "local.json").write_text("{}\n")
    assert genstamp(other, "stamp").returncode == 0
    assert warm_run(other, PYTHONPATH=str(other / "src")).returncode == 0
    accepted = genstamp(calc, "verify", "--rev", "feature")
    assert accepted.returncode == 0, accepted.stdout + accepted.stderr  # vouched by the other
    assert clean_run(calc, "--rev", "feature").returncode == 1  # red clean: no local.json
    verdict = genstamp(calc, "verify", "--rev", "feature", "--json")
    assert verdict.returncode == 1, verdict.stdout
    rules = [f["rule"] for f in json.loads(verdict.stdout)["failures"]]
    assert rules == ["clean-room-diverged"], rules


@pytest.mark.parametrize("removed_by_git", [True, False])
def test_the_clean_checkout_goes_and_no_other_worktree_with_it(
    calc: Path, tmp_path: Path, removed_by_git: bool
) -> None:
    """The clean checkout's own worktree entry goes, whether `git worktree remove` took it or
    its folder went first; another worktree whose folder is away for a moment (moved, on a
    drive not mounted) keeps its entry: its HEAD, its index, its staged work."""
    other = tmp_path / "other"
    git(calc, "worktree", "add", "-q", "-b", "feature", str(other))
    (other / "staged.txt").write_text("staged\n")
    git(other, "add", "staged.txt")
    away = tmp_path / "away"
    other.rename(away)
    checkout = open_checkout(calc)
    admin = Path(git(calc, "rev-parse", "--path-format=absolute", "--git-common-dir")) / "worktrees"
    before = {p.name for p in admin.iterdir()}
    with cleanroom.linked_checkout(checkout, "HEAD", io.StringIO(), keep=False) as work:
        assert (work / ".git").is_file() and len(list(admin.iterdir())) == len(before) + 1
        if not removed_by_git:  # gone before git could remove it: its entry alone is left
            shutil.rmtree(work)
    assert {p.name for p in admin.iterdir()} == before
    away.rename(other)
    assert git(other, "diff", "--cached", "--name-only") == "staged.txt"


def test_the_clean_checkout_is_whole_in_a_sparse_checkout(calc: Path) -> None:
    """git gives a new worktree the sparse-checkout settings of the one it is added from: the
    clean checkout holds the whole tree all the same, so a test that skips where a file is
    left out (green warm) fails clean, as on a fresh clone; the user's checkout stays sparse."""
    (calc / "data").mkdir()
    (calc / "data" / "blob.txt").write_text("old\n")
    (calc / "tests" / "test_data.py").write_text(
        "import os, pytest\n\nP = os.path.join(os.path.dirname(__file__), '..', 'data', "
        "'blob.txt')\n\n\ndef test_data():\n    if not os.path.exists(P):\n"
        "        pytest.skip('data not checked out')\n    assert open(P).read() == 'new\\n'\n"
    )
    commit_all(calc, "a test of a data file")
    git(calc, "sparse-checkout", "set", "src", "tests")
    assert not (calc / "data").exists()
    assert warm_run(calc, PYTHONPATH=str(calc / "src")).returncode == 0  # skipped warm
    proc = clean_run(calc, "--json")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    outcomes = json.loads(proc.stdout)["record"]["outcomes"]
    assert outcomes["tests/test_data.py::test_data"] == "failed", outcomes
    assert not (calc / "data").exists()  # still sparse here
    assert git(calc, "sparse-checkout", "list") == "src\ntests"


def test_a_git_lfs_repository_gets_its_clean_checkout(calc: Path) -> None:
    """git-lfs's filter writes its hooks into the hooks folder git is told of while the clean
    checkout is made: the checkout goes on, with the large files in it."""
    if shutil.which("git-lfs") is None:
        pytest.fail("git-lfs is missing: .ci/run installs it (apt-get install git-lfs)")
    git(calc, "lfs", "install", "--local")
    git(calc, "lfs", "track", "*.bin")
    (calc / "tests" / "blob.bin").write_bytes(b"\x00large\n")
    (calc / "tests" / "test_blob.py").write_text(
        "from pathlib import Path\n\n\ndef test_blob():\n"
        "    assert Path(__file__).with_name('blob.bin').read_bytes() == b'\\x00large\\n'\n"
    )
    commit_all(calc, "a large file")
    proc = clean_run(calc, "--json")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert (
        json.loads(proc.stdout)["record"]["outcomes"]["tests/test_blob.py::test_blob"] == "passed"
    )


def test_a_submodule_is_checked_out_in_the_clean_checkout(calc: Path, tmp_path: Path) -> None:
    """A committed submodule the tests import (a vendored library): the clean checkout holds
    it at the commit the tree records, as `git clone --recurse-submodules` does, from this
    checkout's own clone of it; it was an empty folder, and a green suite failed clean. Its
    checkout made no change here."""
    lib = init_repo(tmp_path / "lib")
    (lib / "helper.py").write_text("V = 3\n")
    commit_all(lib, "v3")
    git(calc, "-c", "protocol.file.allow=always", "submodule", "add", "-q", str(lib), "vendor/lib")
    (calc / "tests" / "test_sub.py").write_text(
        "import pathlib, sys\n\nsys.path.insert(0, str(pathlib.Path(__file__).parents[1] / "
        "'vendor' / 'lib'))\nimport helper\n\n\ndef test_sub():\n    assert helper.V == 3\n"
    )
    commit_all(calc, "a vendored library")
    (lib / "helper.py").write_text("V = 4\n")  # the library moves on: the tree records v3
    commit_all(lib, "v4")
    before = state(calc)
    proc = clean_run(calc, "--json")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    outcomes = json.loads(proc.stdout)["record"]["outcomes"]
    assert outcomes["tests/test_sub.py::test_sub"] == "passed", outcomes
    assert state(calc) == before
    # a commit made in the submodule here and never pushed: a fresh recursive clone cannot
    # fetch it, and neither does the clean checkout, where the test fails
    sub = calc / "vendor" / "lib"
    (sub / "helper.py").write_text("V = 5\n")
    commit_all(sub, "v5, never pushed")
    test = calc / "tests" / "test_sub.py"
    test.write_text(test.read_text().replace("== 3", "== 5"))
    commit_all(calc, "the library's unpushed commit")
    proc = clean_run(calc, "--json")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    outcomes = json.loads(proc.stdout)["record"]["outcomes"]
    assert outcomes.get("tests/test_sub.py::test_sub") != "passed", outcomes  # (or not collected)
    # pushed to a fork alone: a recursive clone fetches from the URL .gitmodules gives (it
    # passed: any remote of the submodule's clone counted); pushed there, it passes
    fork = tmp_path / "fork.git"
    git(tmp_path, "clone", "-q", "--bare", str(lib), str(fork))
    git(sub, "remote", "add", "fork", str(fork))
    git(sub, "push", "-q", "fork", "HEAD:refs/heads/v5")
    git(sub, "fetch", "-q", "fork")
    proc = clean_run(calc, "--json")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    git(sub, "push", "-q", "origin", "HEAD:refs/heads/v5")
    git(sub, "fetch", "-q", "origin")
    proc = clean_run(calc, "--json")
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_a_submodule_a_recursive_clone_skips_stays_empty(calc: Path, tmp_path: Path) -> None:
    """`.gitmodules` sets `update = none` for the vendored library: `git clone
    --recurse-submodules` leaves its folder empty, and so does the clean checkout, where a
    test that needs it fails (it passed: the library was cloned all the same). A file whose
    name is no UTF-8 beside it is checked out as git has it (a traceback before)."""
    lib = init_repo(tmp_path / "lib")
    (lib / "helper.py").write_text("V = 3\n")
    commit_all(lib, "v3")
    git(calc, "-c", "protocol.file.allow=always", "submodule", "add", "-q", str(lib), "vendor/lib")
    git(calc, "config", "-f", ".gitmodules", "submodule.vendor/lib.update", "none")
    (calc / os.fsdecode(b"caf\xe9.txt")).write_text("data\n")
    (calc / "tests" / "test_sub.py").write_text(
        "import pathlib\n\n\ndef test_sub():\n"
        "    assert (pathlib.Path(__file__).parents[1] / 'vendor' / 'lib' / 'helper.py').exists()\n"
    )
    commit_all(calc, "a library a recursive clone skips")
    proc = clean_run(calc, "--json")
    assert proc.returncode == 1 and "Traceback" not in proc.stderr, proc.stdout + proc.stderr
    outcomes = json.loads(proc.stdout)["record"]["outcomes"]
    assert outcomes["tests/test_sub.py::test_sub"] == "failed", outcomes


def test_a_project_in_a_subfolder_runs_from_that_folder(tmp_path: Path) -> None:
    """The only project is `sub/` (its own pyproject.toml, `cd sub && pip install . &&
    pytest`), the top has no configuration: the gate takes sub/'s configuration for the
    suite's, and the clean room installs the project from there and runs pytest there as well
    (it installed nothing and ran at the top, where `calc` imports from nowhere)."""
    repo = init_repo(tmp_path / "repo")
    (repo / "sub" / "src" / "calc").mkdir(parents=True)
    (repo / "sub" / "tests").mkdir()
    (repo / "sub" / "pyproject.toml").write_text(  # built by hatchling, which the top lacks
        PYPROJECT.replace('requires = ["setuptools>=61"]', 'requires = ["hatchling"]')
        .replace("setuptools.build_meta", "hatchling.build")
        .replace('[tool.setuptools.packages.find]\nwhere = ["src"]\n', "")
        + '\n[tool.hatch.build.targets.wheel]\npackages = ["src/calc"]\n'
    )
    (repo / "sub" / "src" / "calc" / "__init__.py").write_text("X = 1\n")
    (repo / "sub" / "tests" / "test_x.py").write_text(
        "from calc import X\n\n\ndef test_x():\n    assert X == 1\n"
    )
    (repo / ".gitignore").write_text("__pycache__/\n")
    commit_all(repo, "a project in sub/")
    for _ in range(2):  # its environment made, then reused (built without isolation)
        proc = clean_run(repo, "--json")
        assert proc.returncode == 0, proc.stdout + proc.stderr
        outcomes = json.loads(proc.stdout)["record"]["outcomes"]
        assert outcomes == {"sub/tests/test_x.py::test_x": "passed"}, outcomes
    # a module of sub/ the wheel leaves out: pytest runs as the installed `pytest` command,
    # which puts no checkout folder first on the import path, and the test fails clean
    (repo / "sub" / "helper.py").write_text("Y = 2\n")
    (repo / "sub" / "tests" / "test_y.py").write_text(
        "from helper import Y\n\n\ndef test_y():\n    assert Y == 2\n"
    )
    commit_all(repo, "a module the wheel leaves out")
    proc = clean_run(repo, "--json")
    assert proc.returncode == 1, proc.stdout + proc.stderr


def test_stale_bytecode_green_warm_red_clean(calc: Path) -> None:
    # the previous commit's bytecode left in the warm checkout (ignored by *.py[co])
    ops = calc / "src" / "calc" / "ops.py"
    subprocess.run(
        [
            sys.executable,
            "-c",
            f"import py_compile; py_compile.compile({str(ops)!r}, "
            f"cfile={str(ops.with_suffix('.pyc'))!r})",
        ],
        check=True,
    )
    ops.unlink()
    commit_all(calc, "ops.py removed: its bytecode stays")
    warm = run_pytest(calc, env={**subprocess_env(), "PYTHONPATH": str(calc / "src")})
    assert warm.returncode == 0, warm.stdout
    assert clean_run(calc).returncode == 1
    verdict = genstamp(calc, "verify", "--json")
    rules = [f["rule"] for f in json.loads(verdict.stdout)["failures"]]
    assert "clean-room-diverged" in rules and "stale-bytecode" in rules


def test_what_the_install_writes_into_the_clean_checkout_is_the_installs(calc: Path) -> None:
    """A setuptools project that does not ignore `build/` and `*.egg-info/`: the install step
    writes them into the clean checkout, as it does in a clean clone. The clean run tested the
    judged tree (and those), not another one."""
    (calc / ".gitignore").write_text("__pycache__/\n*.py[co]\n")
    commit_all(calc, "build products not ignored")
    proc = clean_run(calc)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "passed in a clean checkout" in proc.stderr + proc.stdout


def test_what_the_install_rewrites_in_the_clean_checkout_is_the_installs(calc: Path) -> None:
    """A stale `*.egg-info` the tree holds (committed once, never ignored): the install writes
    its `SOURCES.txt` again in the clean checkout, as in a clean clone. The clean run tested
    the judged tree with what the install wrote (it was refused as another tree)."""
    (calc / ".gitignore").write_text("__pycache__/\n*.py[co]\nbuild/\n")
    info = calc / "src" / "calc.egg-info"
    info.mkdir()
    (info / "SOURCES.txt").write_text("src/calc/__init__.py\n")  # ops.py added since
    commit_all(calc, "a stale egg-info")
    proc = clean_run(calc)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "passed in a clean checkout" in proc.stderr + proc.stdout


def test_keep_and_rev(calc: Path, tmp_path: Path) -> None:
    (calc / "README").write_text("uncommitted\n")
    proc = clean_run(calc, "--keep", "--rev", "HEAD", "--json", tmp=tmp_path / "tmp")
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    kept = Path(out["kept"])
    assert (kept / "pyproject.toml").is_file() and not (kept / "README").exists()  # --rev
    assert out["record"]["tree"] == git(calc, "rev-parse", "HEAD^{tree}")
    assert str(kept) in git(calc, "worktree", "list")
    git(calc, "worktree", "remove", "--force", str(kept))


@pytest.mark.parametrize("edited", [False, True], ids=["committed", "uncommitted-edit"])
def test_the_clean_checkout_has_the_history_of_a_commit_of_the_tree(
    calc: Path, tmp_path: Path, edited: bool
) -> None:
    """setuptools-scm and hatch-vcs take the version from the last tag (`git describe`): the
    clean checkout of a parentless commit made a tagged project's version 0.1.dev1 and failed
    its version test (A26 12). The work tree as HEAD holds it is checked out as HEAD; with an
    edit, as a commit of it on top of HEAD."""
    git(calc, "tag", "v1.2.0")
    if edited:
        (calc / "README").write_text("uncommitted\n")
    proc = clean_run(calc, "--keep", "--json", tmp=tmp_path / "tmp")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    kept = Path(json.loads(proc.stdout)["kept"])
    head = git(calc, "rev-parse", "HEAD")
    if edited:
        assert git(kept, "rev-parse", "HEAD^") == head
        assert git(kept, "describe", "--tags").startswith("v1.2.0-1-g")
    else:
        assert git(kept, "rev-parse", "HEAD") == head
        assert git(kept, "describe", "--tags") == "v1.2.0"
    git(calc, "worktree", "remove", "--force", str(kept))


def test_a_failing_install_names_the_step(calc: Path, tmp_path: Path) -> None:
    with (calc / "pyproject.toml").open("a") as fh:
        fh.write('\n[tool.genstamp]\nclean-install = ["./no-such-folder"]\n')
    before = state(calc)
    proc = clean_run(calc, tmp=tmp_path / "tmp")
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    # not a terminal: one plain line per step, then the one line naming the failed step
    assert lines[0].startswith("genstamp: clean-run: checkout done in ")
    assert lines[-2].startswith("genstamp: clean-run: install failed in ")
    line = lines[-1]
    assert line.startswith("genstamp: clean-run: the install step failed: ")
    assert "hint: fix the project's install" in line
    log = Path(line.split("its log: ")[1].split(" (hint")[0])
    assert log.parent.parent == calc / ".git" / "genstamp" / "clean-room" / "logs"
    assert log.name == "install.log"
    assert "no-such-folder" in log.read_text()
    assert leftovers(tmp_path / "tmp") == []  # removed on failure too
    assert state(calc) == before


def test_pytests_usage_error_is_a_step_that_failed(calc: Path, tmp_path: Path) -> None:
    """pytest refusing its arguments ran nothing to judge: the run step failed (exit 2, naming
    pytest's exit), not a gate refusing a run with no evidence (A26 04)."""
    proc = clean_run(calc, "--", "--no-such-option", tmp=tmp_path / "tmp")
    assert proc.returncode == 2, proc.stdout + proc.stderr
    line = proc.stderr.strip().splitlines()[-1]
    assert line.startswith("genstamp: clean-run: the run step failed: `python -m pytest ")
    assert "--no-such-option` exited with 4 (a usage error); its log: " in line
    log = Path(line.split("its log: ")[1].split(" (hint")[0])
    assert "unrecognized arguments: --no-such-option" in log.read_text()
    assert "no-evidence" not in proc.stdout + proc.stderr
    assert leftovers(tmp_path / "tmp") == []


def test_a_broken_configuration_is_named_as_the_judged_trees(calc: Path, tmp_path: Path) -> None:
    """Not as the temporary clean checkout's file, gone once the line is read (A26 04)."""
    with (calc / "pyproject.toml").open("a") as fh:
        fh.write("\nthis is = = not toml\n")
    proc = clean_run(calc, tmp=tmp_path / "tmp")
    assert proc.returncode == 2, proc.stdout + proc.stderr
    line = proc.stderr.strip().splitlines()[-1]
    assert line.startswith("genstamp: the judged tree's pyproject.toml is not valid TOML"), line
    assert "genstamp-clean-" not in line and str(tmp_path / "tmp") not in line
    assert leftovers(tmp_path / "tmp") == []


def test_paths_into_the_warm_checkout_name_the_clean_one(tmp_path: Path) -> None:
    warm, clean = tmp_path / "warm", tmp_path / "clean"
    warm.mkdir()
    (tmp_path / "link").symlink_to(warm)
    environ = {
        "DATA_DIR": f"{warm}/data",
        "ROOT": str(warm),
        "LINKED": f"{tmp_path / 'link'}/x",
        "SEARCH": os.pathsep.join(["/usr/share", f"{warm}/lib", "rel/x"]),
        "NEAR": f"{warm}2/data",  # another folder whose name begins alike
        "TEXT": "hello",
    }
    assert cleanroom.moved_in(environ, tmp_path / "link", clean) == {
        **environ,
        "DATA_DIR": f"{clean}/data",
        "ROOT": str(clean),
        "LINKED": f"{clean}/x",
        "SEARCH": os.pathsep.join(["/usr/share", f"{clean}/lib", "rel/x"]),
    }
    # the work tree named as it is, a variable through the link (`cd` through it, then
    # `$PWD/data`); the clean room's environment in the warm git dir stays where it is
    envs = f"{warm}/.git/genstamp/clean-room/envs/k"
    environ = {"VIA_LINK": f"{tmp_path / 'link'}/y", "PATH": f"{envs}/bin:/usr/bin", "ENV": envs}
    assert cleanroom.moved_in(environ, warm, clean) == {**environ, "VIA_LINK": f"{clean}/y"}


def test_a_path_into_the_warm_checkout_anywhere_in_a_value_names_the_clean_one(
    tmp_path: Path,
) -> None:
    """A path into the warm work tree wherever it stands in a variable's value: a list split
    at commas, an option's value, a ``file://`` or ``sqlite:////`` URL, JSON; the rest of the
    value kept as it was, the slashes of a URL too (h178). Not a path that only begins alike
    (``warm2``, ``warm 2``: a copy's folder beside it), one whose folders merely end in the
    same names, one that leads out again (``$PWD/../shared``), nor one in the git dir (h179)."""
    warm, clean = tmp_path / "warm", tmp_path / "clean"
    warm.mkdir()
    (tmp_path / "warm 2").mkdir()
    environ = {
        "DATA_DIRS": f"{warm}/committed,{warm}/local",
        "EXTRA": f"--data-dir={warm}/local --verbose",
        "FIXTURE_URL": f"file://{warm}/tests/answer.json",
        "DB": f"sqlite:///{warm}/db.sqlite",
        "JSON": f'{{"data": "{warm}/data", "n": 1}}',
        "DOTTED": f"{warm}/.github/x,{warm}/.gitignore",
        "NEAR": f"{warm}2/data,/x{warm}/y",
        "SIBLING": f"{warm} 2/data",
        "UP": f"{warm}/../shared,{warm}/data/../../shared",
        "SPACED": f"{warm} {warm}/my data",
        "GITDIR": f"--cache={warm}/.git/genstamp/x",
    }
    assert cleanroom.moved_in(environ, warm, clean) == {
        **environ,
        "DATA_DIRS": f"{clean}/committed,{clean}/local",
        "EXTRA": f"--data-dir={clean}/local --verbose",
        "FIXTURE_URL": f"file://{clean}/tests/answer.json",
        "DB": f"sqlite:///{clean}/db.sqlite",
        "JSON": f'{{"data": "{clean}/data", "n": 1}}',
        "DOTTED": f"{clean}/.github/x,{clean}/.gitignore",
        "SPACED": f"{clean} {clean}/my data",
    }


def test_the_shells_spellings_of_the_warm_checkout_name_the_clean_one(tmp_path: Path) -> None:
    """`cd` through a folder that is a link (`~/code -> /data/code`), then a URL or a list
    holding `$PWD/...`: the shell's spelling of the work tree, which neither it nor its real
    path begins, is the shell's ``PWD`` (in a subfolder too); and `~/proj/...`, which a test
    expands itself (h188). Not a folder beside it named alike, nor a path that only holds
    the home folder's name."""
    real, clean = tmp_path / "data" / "proj", tmp_path / "clean"
    (real / "tests").mkdir(parents=True)
    home = tmp_path / "home"
    home.mkdir()
    (home / "code").symlink_to(real.parent)
    shown = home / "code" / "proj"
    environ = {
        "HOME": str(home),
        "PWD": f"{shown}/tests",
        "URL": f"file://{shown}/tests/data,x",
        "TILDE": "~/code/proj/tests/data",
        "NEAR": f"~/code/proj2/x,file://{shown}2/y",
        "OTHER": f"{home}/elsewhere",
    }
    assert cleanroom.moved_in(environ, real, clean) == {
        **environ,
        "PWD": f"{clean}/tests",
        "URL": f"file://{clean}/tests/data,x",
        "TILDE": f"{clean}/tests/data",
    }


@pytest.mark.parametrize("committed", [False, True], ids=["ignored-data", "control"])
def test_a_variable_naming_the_warm_checkout_names_the_clean_one(
    calc: Path, committed: bool
) -> None:
    """A test that reads the folder a variable of your shell names (`DATA_DIR=$PWD/data`):
    the clean run read the warm checkout's git-ignored data there and passed, though a fresh
    clone fails (A26 07). It reads the clean checkout's folder, as a fresh clone's run does."""
    (calc / "data").mkdir()
    (calc / "data" / "answer.txt").write_text("42\n")
    if not committed:
        (calc / ".gitignore").write_text(GITIGNORE + "data/\n")
    (calc / "tests" / "test_data.py").write_text(
        "import os\n\n\ndef test_answer():\n"
        "    with open(os.path.join(os.environ['DATA_DIR'], 'answer.txt')) as fh:\n"
        "        assert fh.read() == '42\\n'\n"
    )
    commit_all(calc, "data")
    env = env_for_tests()
    env["DATA_DIR"] = str(calc / "data")
    proc = run_genstamp(calc, "clean-run", "--json", env=env)
    assert proc.returncode == (0 if committed else 1), proc.stdout + proc.stderr
    outcomes = json.loads(proc.stdout)["record"]["outcomes"]
    assert outcomes["tests/test_data.py::test_answer"] == ("passed" if committed else "failed")


@pytest.mark.parametrize("committed", [False, True], ids=["ignored-build-input", "control"])
def test_a_variable_naming_the_warm_checkout_names_the_clean_one_for_the_build(
    calc: Path, committed: bool
) -> None:
    """The build reads a file a variable of your shell names (`CFLAGS=-I$PWD/gen`; here the
    version `setup.py` reads): the clean room's install read the warm checkout's git-ignored
    file and passed, though a fresh clone's build fails (h188). It reads the clean
    checkout's, as a fresh clone's build does."""
    (calc / "gen").mkdir()
    (calc / "gen" / "version.txt").write_text("1.0\n")
    if not committed:
        (calc / ".gitignore").write_text(GITIGNORE + "gen/\n")
    pyproject = (calc / "pyproject.toml").read_text()
    (calc / "pyproject.toml").write_text(
        pyproject.replace('version = "0"', 'dynamic = ["version"]')
    )
    (calc / "setup.py").write_text(
        "import os\nfrom setuptools import setup\n\n"
        "setup(version=open(os.environ['CALC_VERSION_FILE']).read().strip())\n"
    )
    commit_all(calc, "the version a build reads")
    env = env_for_tests()
    env["CALC_VERSION_FILE"] = str(calc / "gen" / "version.txt")
    proc = run_genstamp(calc, "clean-run", env=env)
    assert proc.returncode == (0 if committed else 2), proc.stdout + proc.stderr
    if not committed:
        assert "the install step failed" in proc.stderr, proc.stderr


@pytest.mark.parametrize("link", ["into-the-warm-checkout", "to-the-root", "inside-the-tree"])
def test_a_link_of_the_tree_into_the_warm_checkout_is_no_clean_room(calc: Path, link: str) -> None:
    """A committed absolute link naming the warm checkout's path (`tests/data.json ->
    /home/me/proj/private/data.json`, git-ignored there): the clean run read the warm
    checkout's file through it and passed, though a clone elsewhere fails. Controls: a
    relative link to a committed file, and a fixture's link to `/`."""
    (calc / "tests" / "data").mkdir()
    (calc / "tests" / "data" / "answer.json").write_text("42\n")
    if link == "into-the-warm-checkout":
        (calc / ".gitignore").write_text(GITIGNORE + "tests/data/\n")
        (calc / "tests" / "answer.json").symlink_to(calc / "tests" / "data" / "answer.json")
    else:  # (`to-the-root`: a fixture's link to `/`, which holds every checkout: every
        # clone has it, and it is no way into the warm one the tests take)
        if link == "to-the-root":  # (out of testpaths: pytest would walk it)
            (calc / "rootfs").symlink_to("/")
        (calc / "tests" / "answer.json").symlink_to(Path("data") / "answer.json")
    (calc / "tests" / "test_data.py").write_text(
        "import pathlib\n\n\ndef test_answer():\n"
        "    assert (pathlib.Path(__file__).parent / 'answer.json').read_text() == '42\\n'\n"
    )
    commit_all(calc, "data through a link")
    proc = clean_run(calc, "--json")
    record = json.loads(proc.stdout)["record"]
    assert record["outcomes"]["tests/test_data.py::test_answer"] == "passed"  # read, warm's
    if link != "into-the-warm-checkout":
        assert proc.returncode == 0 and record["ok"], proc.stdout + proc.stderr
        return
    assert proc.returncode == 1 and not record["ok"], proc.stdout + proc.stderr
    (said,) = record["failures"]
    assert said.startswith("tree-mismatch: ") and "tests/answer.json -> " in said, said


def test_without_uv_the_same_verdict(calc: Path) -> None:
    proc = clean_run(calc, "--installer", "pip", "--json")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    out = json.loads(proc.stdout)
    assert out["installer"] == "pip" and out["env_reused"] is False
    assert out["record"]["install"] == "pip: .[test]"
    assert out["record"]["outcomes"] == {
        "tests/test_calc.py::test_add": "passed",
        "tests/test_calc.py::test_zero": "passed",
    }


def test_the_clean_environment_runs_the_genstamp_that_runs_here(calc: Path, tmp_path: Path) -> None:
    """The clean run's plugin is the code this genstamp runs (here a copy on PYTHONPATH, another
    build of the same version), not a build of the folder its distribution was installed
    from: that folder may hold other code, and building it writes there."""
    copy = tmp_path / "another" / "genstamp"
    shutil.copytree(
        Path(genstamp_package.__file__).parent, copy, ignore=shutil.ignore_patterns("__pycache__")
    )
    with (copy / "summary.py").open("a") as fh:
        fh.write("# another build of the same version\n")
    env = env_for_tests()
    env["PYTHONPATH"] = str(copy.parent)
    probe = "from genstamp import build; print(build.digest())"
    ours = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, env=env, check=True
    ).stdout.strip()
    assert ours != build.digest()  # the copy is another build
    before = set((calc / ".git" / ENVS).glob("*/bin/python"))
    proc = run_genstamp(calc, "clean-run", "--json", env=env)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert json.loads(proc.stdout)["env_reused"] is False  # an environment of that build
    (python,) = set((calc / ".git" / ENVS).glob("*/bin/python")) - before
    theirs = subprocess.run(
        [python, "-c", probe], capture_output=True, text=True, env=subprocess_env(), check=True
    ).stdout.strip()
    assert theirs == ours


def test_the_environment_is_clean(calc: Path, tmp_path: Path) -> None:
    """Nothing of the user's environment reaches the clean run: PYTHONPATH, user site."""
    (calc / "tests" / "test_env.py").write_text(
        "import os, site, sys\n\n\ndef test_env():\n"
        "    assert 'PYTHONPATH' not in os.environ\n"
        "    assert os.environ['PYTHONNOUSERSITE'] == '1' and not site.ENABLE_USER_SITE\n"
        "    assert sys.prefix != sys.base_prefix and '.git' in sys.prefix\n"
    )
    env = env_for_tests()
    env["PYTHONPATH"] = str(tmp_path)
    proc = run_genstamp(calc, "clean-run", env=env)
    assert proc.returncode == 0, proc.stdout + proc.stderr


@pytest.mark.parametrize("sent", [signal.SIGINT, signal.SIGTERM], ids=["ctrl-c", "sigterm"])
def test_ctrl_c_removes_the_clean_checkout(calc: Path, tmp_path: Path, sent: int) -> None:
    """Ctrl-C, or a SIGTERM (a CI job cancelled): the run's step ends and the clean checkout
    goes with its worktree entry (a SIGTERM left both)."""
    (calc / "tests" / "test_slow.py").write_text(
        "import time\n\n\ndef test_slow():\n    time.sleep(120)\n"
    )
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    env = {**env_for_tests(), "TMPDIR": str(tmp)}
    proc = subprocess.Popen(
        [sys.executable, "-m", "genstamp", "clean-run"],
        cwd=calc,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        # as from a terminal: a suite started in the background by a shell ignores SIGINT,
        # and a child inherits that (Python then sets no handler of its own)
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    logs = calc / ".git" / "genstamp" / "clean-room" / "logs"
    try:
        # wait (bounded by the test's own guard, not timed) until pytest runs in the checkout
        for _ in range(1200):
            ran = (log.read_text(errors="replace") for log in logs.glob("*/run.log"))
            if any(re.search(r"^\$ .*pytest", text, re.M) for text in ran):
                break  # (as the pytest command, or python -m pytest)
            try:
                proc.wait(timeout=0.1)
                break
            except subprocess.TimeoutExpired:
                continue
        assert proc.poll() is None, proc.communicate()
        assert leftovers(tmp)  # the clean checkout is there while it runs
        proc.send_signal(sent)
        _, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130, err
    assert "genstamp: interrupted" in err
    assert leftovers(tmp) == []
    assert git(calc, "worktree", "list", "--porcelain").count("worktree ") == 1


def test_ctrl_c_while_a_step_starts_ends_that_step(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Ctrl-C while a step's process is being started (between the line the log shows and the
    moment the child is held): the child is ended with the run, not left running."""
    started: list[subprocess.Popen[bytes]] = []
    real = subprocess.Popen

    def interrupted_while_starting(*args: object, **kwargs: object) -> subprocess.Popen[bytes]:
        proc = real(*args, **kwargs)  # type: ignore[call-overload]
        started.append(proc)
        os.kill(os.getpid(), signal.SIGINT)  # arrives before Popen has returned
        return proc  # type: ignore[no-any-return]

    monkeypatch.setattr(subprocess, "Popen", interrupted_while_starting)
    # Ctrl-C as from a terminal (a suite started in the background ignores SIGINT)
    before = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        with (tmp_path / "log").open("w") as log, pytest.raises(KeyboardInterrupt):
            envcache.call(["sleep", "60"], dict(os.environ), log, tmp_path)
    finally:
        signal.signal(signal.SIGINT, before)
    assert len(started) == 1
    assert started[0].wait(timeout=10) == -signal.SIGKILL  # ended, not left asleep


def test_an_ignored_sigint_stays_ignored_in_a_steps_process(tmp_path: Path) -> None:
    """A clean-run started where SIGINT is ignored (in the background, under nohup) passes
    that on to the processes of its steps, as any command does."""
    before = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        with (tmp_path / "log").open("w") as log:
            code = envcache.call(["grep", "SigIgn", "/proc/self/status"], {}, log, tmp_path)
    finally:
        signal.signal(signal.SIGINT, before)
    assert code == 0
    ignored = int((tmp_path / "log").read_text().split()[-1], 16)
    assert ignored & (1 << (signal.SIGINT - 1))


def test_pytest_arguments_narrow_the_clean_run(calc: Path) -> None:
    proc = clean_run(calc, "--json", "--", "-k", "test_add")
    assert proc.returncode == 1, proc.stdout + proc.stderr  # its own gate: partial-run
    record = json.loads(proc.stdout)["record"]
    assert record["narrowed"] and not record["complete"]
    assert record["outcomes"] == {"tests/test_calc.py::test_add": "passed"}
    assert any(f.startswith("partial-run: ") for f in record["failures"])
    # the warm run agrees on what both ran: no divergence, only the missing clean room
    assert warm_run(calc, PYTHONPATH=str(calc / "src")).returncode == 0
    verdict = json.loads(genstamp(calc, "verify", "--clean-room", "--json").stdout)
    assert [f["rule"] for f in verdict["failures"]] == ["no-clean-room"]
    message = verdict["failures"][0]["message"]
    assert "did not pass" in message and "partial-run: " in message


def test_a_pytest_argument_naming_the_warm_checkout_names_the_clean_one(calc: Path) -> None:
    """A test file's absolute path, copied from a traceback: the clean run collects the clean
    checkout's file there, and its plugin binds the clean checkout's evidence, never the warm
    checkout's (which it overwrote, then said the clean run bound none). An output the clean
    checkout holds nothing at (a JUnit report) is written where it was named (h202)."""
    assert warm_run(calc, PYTHONPATH=str(calc / "src")).returncode == 0
    warm_evidence = calc / ".git" / "genstamp" / "evidence.xml"
    before = warm_evidence.read_bytes()
    proc = clean_run(calc, "--json", "--", str(calc / "tests" / "test_calc.py"))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    record = json.loads(proc.stdout)["record"]
    assert record["outcomes"] == {
        "tests/test_calc.py::test_add": "passed",
        "tests/test_calc.py::test_zero": "passed",
    }
    assert warm_evidence.read_bytes() == before
    assert genstamp(calc, "verify", "--clean-room").returncode == 0
    # an output the run writes into the warm checkout stays there (the clean one goes)
    report = calc / "reports" / "junit.xml"
    proc = clean_run(calc, "--", f"--junitxml={report}", str(calc / "tests"))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "tests/test_calc.py" in report.read_text() or "test_calc" in report.read_text()


def test_the_clean_checkout_is_judged_on_its_own_run_alone(calc: Path) -> None:
    """The clean checkout is a worktree of the same repository: the warm worktree's green run
    of the tree must not vouch for it. A clean run without the plugin binds no evidence, and
    its gate says why (a rule, not an empty list)."""
    assert warm_run(calc, PYTHONPATH=str(calc / "src")).returncode == 0
    assert genstamp(calc, "verify").returncode == 0
    proc = clean_run(calc, "--json", "--", "-p", "no:genstamp")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    record = json.loads(proc.stdout)["record"]
    assert record["failures"] and not record.get("ok"), record
    verdict = json.loads(genstamp(calc, "verify", "--clean-room", "--json").stdout)
    assert [f["rule"] for f in verdict["failures"]] == ["no-clean-room"], verdict


def test_a_rev_that_names_no_commit(calc: Path) -> None:
    proc = clean_run(calc, "--rev", "no-such-branch")
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines() == [  # one line, before any step
        "genstamp: 'no-such-branch' does not name a commit in this repository "
        "(hint: pass a branch, tag or commit id to --rev)"
    ]
    assert git(calc, "worktree", "list", "--porcelain").count("worktree ") == 1


def test_status_and_the_parser_load_no_clean_room(project: Path) -> None:
    """`genstamp status` shows the clean-room record, and every command registers `clean-run`'s
    options; neither loads the clean room itself (its rules, evidence reader and environment
    cache), which only `clean-run` runs."""
    probe = (
        "import sys, io, contextlib\n"
        "from genstamp.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()) as out:\n"
        "    code = main(['status'])\n"
        "print(code, 'clean room' in out.getvalue(), 'genstamp.cleanroom' in sys.modules)\n"
    )
    proc = run_python(project, "-c", probe)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["0", "True", "False"]


FLAT = PYPROJECT.replace(
    '[tool.setuptools.packages.find]\nwhere = ["src"]\n', '[tool.setuptools]\npackages = ["calc"]\n'
)


@pytest.mark.parametrize("left_out", [True, False], ids=["left-out", "listed"])
def test_a_subpackage_the_wheel_leaves_out_fails_in_a_flat_layout(
    tmp_path: Path, cached_envs: Path, left_out: bool
) -> None:
    """`packages = ["calc"]` leaves calc/sub out of the wheel: a clean runner's `pip install .`
    then `pytest` fails on it. The clean room ran `python -m pytest`, which put the checkout's
    folder first on the import path, so calc came from the checkout and the run passed. Listed
    (`calc`, `calc.sub`), it passes."""
    root = init_repo(tmp_path / "flat")
    (root / "calc" / "sub").mkdir(parents=True)
    (root / "calc" / "__init__.py").write_text("def add(a, b):\n    return a + b\n")
    (root / "calc" / "sub" / "__init__.py").write_text("def mul(a, b):\n    return a * b\n")
    (root / "tests").mkdir()
    (root / "tests" / "test_calc.py").write_text(
        "from calc import add\nfrom calc.sub import mul\n\n\ndef test_ops():\n"
        "    assert add(2, 3) == 5 and mul(2, 3) == 6\n"
    )
    listed = FLAT if left_out else FLAT.replace('["calc"]', '["calc", "calc.sub"]')
    (root / "pyproject.toml").write_text(listed)
    (root / ".gitignore").write_text(GITIGNORE)
    commit_all(root, "a flat layout")
    shutil.copytree(cached_envs, root / ".git" / ENVS, symlinks=True)
    assert warm_run(root).returncode == 0
    proc = clean_run(root)
    assert proc.returncode == (1 if left_out else 0), proc.stdout + proc.stderr
    said = genstamp(root, "verify", "--clean-room")
    assert said.returncode == (1 if left_out else 0), said.stdout + said.stderr


def two_services(root: Path, top: str, configuration: Callable[[str], tuple[str, str]]) -> Path:
    """A committed monorepo at ``root``: ``top`` as its pyproject.toml, and services ``svc_a``
    and ``svc_b``, each a package ``lib_<name>`` under its src/, a test that imports it, and
    the configuration file ``configuration(name)`` gives (its name, its text)."""
    init_repo(root)
    (root / "pyproject.toml").write_text(top)
    for name in ("a", "b"):
        svc = root / f"svc_{name}"
        (svc / "src" / f"lib_{name}").mkdir(parents=True)
        (svc / "src" / f"lib_{name}" / "__init__.py").write_text("VALUE = 1\n")
        (svc / "tests").mkdir()
        (svc / "tests" / f"test_{name}.py").write_text(
            f"from lib_{name} import VALUE\n\n\ndef test_{name}():\n    assert VALUE == 1\n"
        )
        file, text = configuration(name)
        (svc / file).write_text(text)
    (root / ".gitignore").write_text(GITIGNORE)
    commit_all(root, "two services")
    return root


def test_each_declared_suite_runs_from_its_folder_in_the_clean_room(
    tmp_path: Path, cached_envs: Path
) -> None:
    """`suites = ["svc_a", "svc_b"]`, each with its own pytest.ini: the clean room ran one
    pytest at the top, which read neither, failed, and refused a tree that passes as its
    suites run (each from its folder). It runs each from its folder: parts of one run."""
    root = two_services(
        tmp_path / "mono",
        '[tool.genstamp]\nsuites = ["svc_a", "svc_b"]\n',
        lambda name: ("pytest.ini", "[pytest]\npythonpath = src\ntestpaths = tests\n"),
    )
    shutil.copytree(cached_envs, root / ".git" / ENVS, symlinks=True)
    assert genstamp(root, "stamp").returncode == 0
    for name in ("a", "b"):
        assert run_pytest(root / f"svc_{name}").returncode == 0
    proc = clean_run(root)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    said = genstamp(root, "verify", "--clean-room")
    assert said.returncode == 0, said.stdout + said.stderr


@pytest.mark.parametrize("suites", [["svc_a", "svc_b"], ["svc_a/tests", "svc_b/tests"]])
def test_each_declared_suites_project_is_installed_in_the_clean_room(
    tmp_path: Path, suites: list[str]
) -> None:
    """`suites = ["svc_a", "svc_b"]` below a top that is no project, each suite a project of
    its own whose tests import its installed package: the clean room installed nothing (the
    one-folder rule alone installed a project below the top), and both suites failed at import
    though a clone that installs them passes (h178). Each suite's project is installed, with
    its test extra: the nearest project at or above the suite's folder (a suite declared as
    its tests' folder, `svc_a/tests`: h179)."""
    listed = ", ".join(f'"{s}"' for s in suites)
    root = two_services(
        tmp_path / "mono",
        f"[tool.genstamp]\nsuites = [{listed}]\n",
        lambda name: ("pyproject.toml", PYPROJECT.replace('"calc"', f'"lib-{name}"')),
    )
    proc = clean_run(root, "--installer", "uv")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "2 passed" in proc.stdout, proc.stdout
    logs = sorted((root / ".git" / "genstamp" / "clean-room" / "logs").iterdir())
    said = (logs[-1] / "install.log").read_text()
    assert "./svc_a[test] ./svc_b[test]" in said, said


def test_a_checkout_reached_through_git_dir(calc: Path, tmp_path: Path) -> None:
    """The repository is a git dir apart from its work tree, reached through GIT_DIR and
    GIT_WORK_TREE (as genstamp follows them everywhere): the clean room's git commands on it
    dropped both, found no repository, and failed naming `git worktree add`, or said that
    `--rev HEAD` names no commit."""
    gitdir = tmp_path / "apart.git"
    (calc / ".git").rename(gitdir)
    env = {**env_for_tests(), "GIT_DIR": str(gitdir), "GIT_WORK_TREE": str(calc)}
    for args in ((), ("--rev", "HEAD")):
        proc = run_genstamp(calc, "clean-run", *args, env=env)
        assert proc.returncode == 0, proc.stdout + proc.stderr
        assert "passed in a clean checkout" in proc.stdout, proc.stdout


def test_a_reused_environment_rebuilds_a_local_project_of_another_backend(tmp_path: Path) -> None:
    """The clean install names a local project of another build backend (a hatchling library
    in `libs/`, through a requirements file): the environment's second run rebuilt it without
    isolation, with only the top project's build requirements at hand, and failed (exit 2)
    until the cache was deleted. It is built with its own, as a fresh clone's install does."""
    pyproject = PYPROJECT.replace(
        "[tool.pytest.ini_options]",
        '[tool.genstamp]\nclean-install = ["-r", "requirements-dev.txt", "."]\n\n'
        "[tool.pytest.ini_options]",
    )
    root = write_project(tmp_path / "calc", pyproject)
    (root / "libs" / "helper" / "helper").mkdir(parents=True)
    (root / "libs" / "helper" / "helper" / "__init__.py").write_text("X = 1\n")
    (root / "libs" / "helper" / "pyproject.toml").write_text(
        '[build-system]\nrequires = ["hatchling"]\nbuild-backend = "hatchling.build"\n\n'
        '[project]\nname = "helper"\nversion = "0"\n'
    )
    (root / "requirements-dev.txt").write_text("pytest\n./libs/helper\n")
    (root / "tests" / "test_helper.py").write_text(
        "from helper import X\n\n\ndef test_helper():\n    assert X == 1\n"
    )
    commit_all(root, "a library of another backend")
    for _ in range(2):  # the environment made, then reused
        proc = clean_run(root, "--json")
        assert proc.returncode == 0, proc.stdout + proc.stderr
        outcomes = json.loads(proc.stdout)["record"]["outcomes"]
        assert outcomes["tests/test_helper.py::test_helper"] == "passed", outcomes
