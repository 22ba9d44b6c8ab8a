"""Scripts and data files an install copied out of the tree (``installedfiles``): real virtual
environments, real ``pip install`` (editable and not), real pytest runs and the real gate."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from conftest import commit_all, git, init_repo, subprocess_env, write_files
from test_audit import SETUPTOOLS, failures, make_venv, stamp

SCRIPT = (
    "#!python\nimport sys\nfrom calc import add\nprint(add(int(sys.argv[1]), int(sys.argv[2])))\n"
)
PYPROJECT = (
    SETUPTOOLS
    + '[project]\nname = "calc"\nversion = "0.1"\n'
    + '[tool.setuptools]\nscript-files = ["scripts/calc-add"]\n'
    + 'data-files = {"share/calc" = ["data/limit.txt"]}\n'
)
TESTS = """\
import os, subprocess, sys


def test_script():
    exe = os.path.join(os.path.dirname(sys.executable), "calc-add")
    out = subprocess.run([exe, "2", "3"], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "5"


def test_share():
    if not os.path.exists(os.path.join(sys.prefix, "share", "calc")):
        return  # an editable install of setuptools puts no data files
    with open(os.path.join(sys.prefix, "share", "calc", "limit.txt")) as f:
        assert int(f.read()) > 0
"""


def calc_project(root: Path, script: str = SCRIPT) -> Path:
    repo = init_repo(root)
    files = {
        "pyproject.toml": PYPROJECT,
        "src/calc/__init__.py": "def add(a, b):\n    return a + b\n",
        "scripts/calc-add": script,
        "data/limit.txt": "5\n",
        "tests/test_calc.py": TESTS,
        ".gitignore": "__pycache__/\nbuild/\n*.egg-info/\n",
    }
    for rel, text in files.items():
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        (repo / rel).write_bytes(text.encode())  # as given: CRLF stays CRLF
    (repo / "scripts" / "calc-add").chmod(0o755)
    commit_all(repo, "calc")
    return repo


def succeeds(python: Path, repo: Path, *args: str) -> None:
    """``python *args`` in ``repo`` (an install, a test run), which must succeed."""
    done = subprocess.run(
        [str(python), *args],
        cwd=repo,
        capture_output=True,
        text=True,
        env=subprocess_env(),
        timeout=300,
    )
    assert done.returncode == 0, done.stdout + done.stderr


def pip_install(python: Path, repo: Path, *args: str) -> None:
    succeeds(python, repo, "-m", "pip", "install", "-q", "--no-deps", "--no-build-isolation", *args)


def green(python: Path, repo: Path) -> None:
    stamp(repo)
    succeeds(python, repo, "-m", "pytest", "-q", "-p", "no:cacheprovider")


@pytest.mark.parametrize(
    ("install", "edited", "shown"),
    [
        (["-e", "."], "scripts/calc-add", "bin/calc-add"),
        (["."], "data/limit.txt", "share/calc/limit.txt"),
    ],
    ids=["editable-script", "data-file"],
)
def test_a_copy_an_install_made_of_a_file_the_tree_changed_since_is_refused(
    tmp_path: Path, install: list[str], edited: str, shown: str
) -> None:
    """An install copies the project's scripts (``script-files``; an editable install too) and
    data files (``data-files``) into the environment. A commit then changes the tree's file:
    the tests still run or read the old copy, green, where a clean clone's install holds the
    new one. Refused, naming both files; after a reinstall, the same run is accepted."""
    repo = calc_project(tmp_path / "calc")
    python, _ = make_venv(tmp_path / "venv")
    pip_install(python, repo, *install)
    green(python, repo)
    assert failures(repo) == {}  # the fresh install, and the tree it was made from
    path = repo / edited
    if edited.endswith("calc-add"):
        path.write_text(SCRIPT.replace("sys.argv[2])))", "sys.argv[2])), flush=True)"))
    else:
        path.write_text("7\n")
    commit_all(repo, "a change the install does not have")
    green(python, repo)
    said = failures(repo)
    assert list(said) == ["foreign-origin"], said
    assert f"its {shown} is a past version of the tested tree's {edited}" in said["foreign-origin"]
    pip_install(python, repo, *install)
    green(python, repo)
    assert failures(repo) == {}


def test_a_console_script_and_a_file_the_tree_never_held_are_no_copies(tmp_path: Path) -> None:
    """What an install writes from no file of the tree (an entry point's console script) and a
    data file whose name a tracked file has, but whose bytes no commit held there, are not
    judged as past versions: accepted."""
    repo = calc_project(tmp_path / "calc")
    text = (repo / "pyproject.toml").read_text()
    (repo / "pyproject.toml").write_text(text + '[project.scripts]\ncalc = "calc:main"\n')
    init = repo / "src" / "calc" / "__init__.py"
    init.write_text(init.read_text() + "\n\ndef main():\n    print(add(1, 1))\n")
    (repo / "tests" / "test_main.py").write_text(
        "import os, subprocess, sys\n\n\ndef test_main():\n"
        "    exe = os.path.join(os.path.dirname(sys.executable), 'calc')\n"
        "    assert subprocess.run([exe], capture_output=True, text=True).stdout == '2\\n'\n"
    )
    commit_all(repo, "a console script")
    python, _ = make_venv(tmp_path / "venv")
    pip_install(python, repo, ".")
    # the installed data file holds bytes the tree's never held (written by hand since)
    (tmp_path / "venv" / "share" / "calc" / "limit.txt").write_text("11\n")
    green(python, repo)
    assert failures(repo) == {}


FALLBACK = (
    "def add(a, b):\n    return a + b\n\n\n"
    'try:\n    from calc._fast import SPEED\nexcept ImportError:\n    SPEED = "slow"\n'
)


@pytest.mark.parametrize("reinstalled", [False, True], ids=["stale", "reinstalled"])
def test_a_strict_editable_install_lacking_a_module_the_tree_added_is_refused(
    tmp_path: Path, reinstalled: bool
) -> None:
    """setuptools' strict editable install puts a link to each file of the package in a link
    tree (``build/__editable__.calc-0.1-py3-none-any/calc``), and none to a file added after.
    A commit adds ``_fast.py``, which the package imports with a fallback: the fallback ran,
    green, where a clean install runs (and fails on) the new module. Every module that ran
    is the tree's file (through a link); what is refused is the module the link tree lacks.
    After a reinstall the link is there: accepted (and the broken module fails the run)."""
    repo = calc_project(tmp_path / "calc")
    (repo / "src" / "calc" / "__init__.py").write_text(FALLBACK)
    (repo / "tests" / "test_fast.py").write_text(
        "import calc\n\n\ndef test_speed():\n    assert calc.SPEED in ('slow', 'fast')\n"
    )
    commit_all(repo, "a fallback")
    python, _ = make_venv(tmp_path / "venv")
    strict = ("-e", ".", "--config-settings", "editable_mode=strict")
    pip_install(python, repo, *strict)
    assert (repo / "build").is_dir()
    (repo / "src" / "calc" / "_fast.py").write_text('SPEED = "fast"\n')
    commit_all(repo, "a fast path, added after the install")
    if reinstalled:
        pip_install(python, repo, *strict)
    green(python, repo)
    said = failures(repo)
    if reinstalled:
        assert said == {}
        return
    assert list(said) == ["foreign-origin"], said
    assert "calc._fast from " in said["foreign-origin"]
    assert "the tested tree has it (src/calc/_fast.py)" in said["foreign-origin"]


def test_a_strict_editable_install_of_a_namespace_package_is_the_trees(tmp_path: Path) -> None:
    """setuptools' strict editable install of `acme.calc`, `acme` a namespace package (no
    `__init__.py`): its link tree's `acme` folder is a real folder under the ignored `build/`,
    its files links into the work tree. A green run was refused `ignored-code` on that folder,
    though a clean clone that installs the project passes (h181)."""
    repo = init_repo(tmp_path / "calc")
    files = {
        "pyproject.toml": SETUPTOOLS
        + '[project]\nname = "acme-calc"\nversion = "0.1"\n'
        + '[tool.setuptools.packages.find]\nwhere = ["src"]\nnamespaces = true\n',
        "src/acme/calc/__init__.py": "def add(a, b):\n    return a + b\n",
        "tests/test_add.py": "from acme.calc import add\n\n\ndef test_add():\n"
        "    assert add(2, 3) == 5\n",
        ".gitignore": "__pycache__/\nbuild/\n*.egg-info/\n",
    }
    write_files(repo, files)
    commit_all(repo, "a namespace package")
    python, _ = make_venv(tmp_path / "venv")
    pip_install(python, repo, "-e", ".", "--config-settings", "editable_mode=strict")
    assert any((repo / "build").glob("__editable__.*/acme"))
    green(python, repo)
    assert failures(repo) == {}


@pytest.mark.parametrize(
    "sibling", ["acme-c", "acme-a", "past"], ids=["sibling-project", "own-clone", "own-past"]
)
def test_a_portion_of_the_namespace_a_sibling_project_installed_editable_provides(
    tmp_path: Path, sibling: str
) -> None:
    """The tree holds `acme/a` of the namespace package `acme`; `acme.c` comes from a sibling
    project, developed beside it and installed editable (`pip install -e ../c`): that
    project's code, as its release installed from an index is. A green run was refused
    foreign-origin (h203). A project of this one's own name there (another clone of it, with
    a module the tree does not hold), or one holding bytes this repository once held at
    that module (an old copy of it under another name, h205), is refused all the same."""
    other = init_repo(tmp_path / "c")
    name = "acme-c" if sibling == "past" else sibling
    meta = f'[project]\nname = "{name}"\nversion = "0"\n'
    write_files(
        other,
        {
            "pyproject.toml": SETUPTOOLS + meta,
            "src/acme/c/__init__.py": "def w():\n    return 5\n",
            "src/acme/c/empty.py": "",  # (an empty module: every repository held its bytes)
            ".gitignore": "__pycache__/\nbuild/\n*.egg-info/\n",
        },
    )
    commit_all(other, "acme.c")
    repo = init_repo(tmp_path / "a")
    files = {
        "pyproject.toml": SETUPTOOLS
        + '[project]\nname = "acme-a"\nversion = "0"\n'
        + '[tool.pytest.ini_options]\npythonpath = ["src"]\ntestpaths = ["tests"]\n',
        "src/acme/a/__init__.py": "from acme.c import w\n\n\ndef v():\n    return w() + 1\n",
        "src/acme/a/empty.py": "",
        "tests/test_v.py": "import acme.c.empty\nfrom acme.a import v\n\n\n"
        "def test_v():\n    assert v() == 6\n",
        ".gitignore": "__pycache__/\nbuild/\n*.egg-info/\n",
    }
    write_files(repo, files)
    if sibling == "past":  # the module the sibling holds, dropped from this tree since
        write_files(repo, {"src/acme/c/__init__.py": "def w():\n    return 5\n"})
        commit_all(repo, "acme.c here too")
        git(repo, "rm", "-q", "-r", "src/acme/c")
    commit_all(repo, "acme.a")
    python, _ = make_venv(tmp_path / "venv")
    pip_install(python, other, "-e", ".")
    green(python, repo)
    said = failures(repo)
    if sibling == "acme-c":
        assert said == {}
        return
    assert list(said) == ["foreign-origin"], said
    assert "acme.c from " in said["foreign-origin"]


CRLF = SCRIPT.replace("\n", "\r\n")


@pytest.mark.parametrize("case", ["crlf-since", "eol-attribute", "stale-crlf"])
def test_a_crlf_script_setuptools_installs_in_lf(
    tmp_path: Path, case: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """setuptools' ``build_scripts`` writes a script in text mode: a CRLF script is installed
    LF. A fresh install of a script committed LF then again CRLF (the same text), or kept LF
    in git and CRLF in the checkout (``eol=crlf``), is the tree's: accepted. A stale copy of a
    script that is CRLF in every commit is a past version: refused."""
    repo = calc_project(tmp_path / "calc", CRLF if case == "stale-crlf" else SCRIPT)
    script = repo / "scripts" / "calc-add"
    if case == "crlf-since":
        script.write_bytes(CRLF.encode())
        commit_all(repo, "the same script, CRLF")
    elif case == "eol-attribute":
        (repo / ".gitattributes").write_text("scripts/* text eol=crlf\n")
        commit_all(repo, "checked out CRLF")
        script.unlink()
        subprocess.run(["git", "checkout", "--", "scripts/calc-add"], cwd=repo, check=True)
        assert script.read_bytes() == CRLF.encode()
    python, _ = make_venv(tmp_path / "venv")
    pip_install(python, repo, "-e", ".")
    assert b"\r" not in (tmp_path / "venv" / "bin" / "calc-add").read_bytes()
    if case == "stale-crlf":
        script.write_bytes(CRLF.replace("sys.argv[2])))", "sys.argv[2])), flush=True)").encode())
        commit_all(repo, "a change the install does not have")
    green(python, repo)
    said = failures(repo)
    if case == "stale-crlf":
        assert "its bin/calc-add is a past version" in said.get("foreign-origin", ""), said
    else:
        assert said == {}


SHELL = '#!/bin/sh\nfalse\necho "$(( $1 + $2 ))"\n'
STARTS = {  # how a test starts the environment's script `exe` with 2 and 3, its output in `out`
    "argv": "out = subprocess.run([exe, '2', '3'], capture_output=True, text=True).stdout",
    "shell": "out = subprocess.run(f'{exe} 2 3', shell=True, capture_output=True,"
    " text=True).stdout",
    "shell-assignment": "out = subprocess.run(f'X=1 {exe} 2 3', shell=True, capture_output=True,"
    " text=True).stdout",
    "os-system": "os.system(f'{exe} 2 3 > {tmp}/o'); out = open(f'{tmp}/o').read()",
    "relative-in-cwd": "out = subprocess.run(['./calc-add', '2', '3'], cwd=os.path.dirname(exe),"
    " capture_output=True, text=True).stdout",
}


@pytest.mark.parametrize(
    ("start", "edit"),
    [(s, "body") for s in STARTS] + [("argv", "shebang")],
)
def test_a_shell_script_the_tests_start_is_judged_as_a_python_one(
    tmp_path: Path, start: str, edit: str
) -> None:
    """A shell script of ``script-files``, started by the tests however they start it (no
    Python process runs it, to record itself): the process that starts it records it, a
    shell's command line by its first word. Stale: refused, also where only its ``#!`` line
    changed (``#!/bin/sh -e``: no installer writes that line)."""
    repo = calc_project(tmp_path / "calc")
    (repo / "scripts" / "calc-add").write_text(SHELL)
    (repo / "tests" / "test_calc.py").write_text(
        "import os, subprocess, sys\n\n\ndef test_script(tmp_path):\n"
        "    exe, tmp = os.path.join(os.path.dirname(sys.executable), 'calc-add'), tmp_path\n"
        f"    {STARTS[start]}\n    assert out.strip() == '5'\n"
    )
    commit_all(repo, "a shell script")
    python, _ = make_venv(tmp_path / "venv")
    pip_install(python, repo, "-e", ".")
    if edit == "shebang":
        changed = SHELL.replace("#!/bin/sh", "#!/bin/sh -e")  # its `false` ends it
    else:
        changed = SHELL.replace("+ $2", "+ $2 + 1")
    (repo / "scripts" / "calc-add").write_text(changed)
    commit_all(repo, "a change the install does not have")
    green(python, repo)
    said = failures(repo)
    assert "its bin/calc-add is a past version" in said.get("foreign-origin", ""), said


@pytest.mark.parametrize("how", ["uv-preamble", "uv-symlink"])
def test_what_uv_writes_is_judged_too(tmp_path: Path, how: str) -> None:
    """uv installs a script for an interpreter whose path has a space with a three-line
    ``/bin/sh`` preamble, not a ``#!`` line; with ``--link-mode=symlink`` a data file is a
    link into uv's cache, which the tests read through. Both stale copies are refused."""
    repo = calc_project(tmp_path / "calc")
    python, _ = make_venv(tmp_path / ("v env" if how == "uv-preamble" else "venv"))
    uv = Path(sys.executable).parent / "uv"
    args = [str(uv), "pip", "install", "-q", "--python", str(python), "--no-deps"]
    args += ["--no-build-isolation", "--no-index"]
    if how == "uv-symlink":
        args += ["--link-mode", "symlink", "--cache-dir", str(tmp_path / "uv-cache"), "."]
    else:
        args += ["-e", "."]
    done = subprocess.run(args, cwd=repo, capture_output=True, text=True, env=subprocess_env())
    assert done.returncode == 0, done.stderr
    if how == "uv-preamble":
        assert (python.parent / "calc-add").read_bytes().startswith(b"#!/bin/sh\n'''exec'")
        (repo / "scripts" / "calc-add").write_text(SCRIPT.replace("print(", "print(0 + "))
        shown = "bin/calc-add"
    else:
        assert (python.parent.parent / "share" / "calc" / "limit.txt").is_symlink()
        (repo / "data" / "limit.txt").write_text("7\n")
        shown = "share/calc/limit.txt"
    commit_all(repo, "a change the install does not have")
    green(python, repo)
    said = failures(repo)
    assert f"its {shown} is a past version" in said.get("foreign-origin", ""), said


def test_the_users_base_is_an_environment_of_copies(tmp_path: Path) -> None:
    """``pip install --user`` puts scripts in ``$PYTHONUSERBASE/bin``: that folder's files are
    judged against the user base's site-packages, as a virtual environment's are."""
    base = tmp_path / "userbase"
    (base / "bin").mkdir(parents=True)
    probe = (
        "import sys; from genstamp import installedfiles as f; "
        "print(f._prefix(sys.argv[1]), f._prefix(sys.argv[2]))"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe, str(base / "bin" / "calc-add"), str(tmp_path / "x" / "y")],
        capture_output=True,
        text=True,
        env=subprocess_env(PYTHONUSERBASE=str(base)),
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == [str(base.resolve()), "None"]


HATCH = """\
[build-system]
requires = ["hatchling"]
build-backend = "hatchling.build"
[project]
name = "calc"
version = "0.1"
[tool.hatch.build.targets.wheel]
packages = ["src/calc"]
[tool.hatch.build.targets.wheel.shared-scripts]
"scripts/run.py" = "calc-add"
[tool.hatch.build.targets.wheel.shared-data]
"data" = "share/calc"
"""


@pytest.mark.parametrize("edited", ["scripts/run.py", "data/limit.txt", None])
def test_a_file_hatchling_installs_under_another_name(tmp_path: Path, edited: str | None) -> None:
    """hatchling's ``shared-scripts`` installs ``scripts/run.py`` as ``bin/calc-add`` (no
    tracked file has that name) and ``shared-data`` the folder ``data`` as ``share/calc``:
    each copy is compared with the file its mapping names. A commit changing either after
    an editable install (built isolated, hatchling from the index) is refused; unchanged,
    accepted."""
    repo = calc_project(tmp_path / "calc")
    subprocess.run(["git", "mv", "scripts/calc-add", "scripts/run.py"], cwd=repo, check=True)
    (repo / "pyproject.toml").write_text(HATCH)
    commit_all(repo, "built by hatchling")
    python, _ = make_venv(tmp_path / "venv")
    succeeds(python, repo, "-m", "pip", "install", "-q", "--no-deps", "-e", ".")
    assert (tmp_path / "venv" / "share" / "calc" / "limit.txt").is_file()
    if edited == "scripts/run.py":
        (repo / edited).write_text(SCRIPT.replace("print(", "print(0 + "))
    elif edited is not None:
        (repo / edited).write_text("7\n")
    if edited is not None:
        commit_all(repo, "a change the install does not have")
    green(python, repo)
    said = failures(repo)
    if edited is None:
        assert said == {}
        return
    shown = "bin/calc-add" if edited.startswith("scripts") else "share/calc/limit.txt"
    assert f"its {shown} is a past version of the tested tree's {edited}" in said.get(
        "foreign-origin", ""
    ), said


def test_a_project_below_the_top_maps_from_its_own_folder(tmp_path: Path) -> None:
    """``pip install -e ./libs/calc``: hatchling's mapping is that project's, its paths from
    its folder, and written as hatchling normalises them (``./scripts/run.py``). A commit
    changing the script after the install is refused."""
    top = init_repo(tmp_path / "mono")
    lib = top / "libs" / "calc"
    files = {
        "pyproject.toml": HATCH.replace('"scripts/run.py"', '"./scripts/run.py"'),
        "src/calc/__init__.py": "def add(a, b):\n    return a + b\n",
        "scripts/run.py": SCRIPT,
        "data/limit.txt": "5\n",
    }
    for rel, text in files.items():
        (lib / rel).parent.mkdir(parents=True, exist_ok=True)
        (lib / rel).write_text(text)
    (lib / "scripts" / "run.py").chmod(0o755)
    (top / "tests").mkdir()
    (top / "tests" / "test_calc.py").write_text(TESTS)
    (top / ".gitignore").write_text("__pycache__/\n")
    commit_all(top, "a library below the top")
    python, _ = make_venv(tmp_path / "venv")
    succeeds(python, top, "-m", "pip", "install", "-q", "--no-deps", "-e", "./libs/calc")
    (lib / "scripts" / "run.py").write_text(SCRIPT.replace("print(", "print(0 + "))
    commit_all(top, "a change the install does not have")
    green(python, top)
    said = failures(top)
    assert "its bin/calc-add is a past version of the tested tree's libs/calc/scripts/run.py" in (
        said.get("foreign-origin", "")
    ), said
