"""Every Python process the tests start is held to the run's standard, and its loads merged.

Real pytest runs whose tests start ``sys.executable``, a console script of the project and
``multiprocessing`` children; the loads of each child reach the evidence's audit.
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import commit_all, committed, git, init_repo, run_pytest, subprocess_env
from test_loads import CALC, audit_of, failures, project, scenario

from genstamp import audit, child, loads, restamp
from genstamp.repo import open_checkout

CHILD_ONLY = "WHO = 'child'\n"


def same_size_same_mtime(source: Path, new: str) -> None:
    st = source.stat()
    assert len(new) == len(source.read_text())
    source.write_text(new)
    os.utime(source, ns=(st.st_atime_ns, st.st_mtime_ns))


CLI_TEST = """
import subprocess, sys

def test_cli():
    out = subprocess.run([sys.executable, "-c", "import calc; print(calc.VALUE)"],
                         capture_output=True, text=True, check=True).stdout
    assert out.strip() == "2", out
"""


@pytest.mark.e2e
@pytest.mark.parametrize("stale", [True, False], ids=["stale-pycache", "control"])
def test_a_child_never_runs_stale_bytecode(tmp_path: Path, stale: bool) -> None:
    """An edit that kept size and mtime (``cp -p``, a cache restore): the child compiles the
    source instead of trusting the work tree's ``__pycache__``."""
    repo, _ = project(tmp_path, CLI_TEST)
    value_2_after_an_edit_that_kept_size_and_mtime(repo, stale)


def value_2_after_an_edit_that_kept_size_and_mtime(repo: Path, stale: bool) -> None:
    """VALUE = 2 in calc, with (``stale``) bytecode of VALUE = 1 beside it: the suite, whose
    child prints VALUE, passes only if the child ran the source, and the load is recorded."""
    source = repo / "src" / "calc" / "__init__.py"
    env = subprocess_env(bytecode=True, PYTHONPATH=str(repo / "src"))
    if stale:  # bytecode of VALUE = 1 beside the source
        subprocess.run([sys.executable, "-c", "import calc"], cwd=repo, env=env, check=True)
        assert list((source.parent / "__pycache__").glob("*.pyc"))
    same_size_same_mtime(source, CALC.replace("1", "2"))
    commit_all(repo, "value 2")
    restamp.begin(open_checkout(repo))
    proc = run_pytest(repo, env=env)
    assert proc.returncode == 0, proc.stdout + proc.stderr  # the child ran the source
    found = audit_of(repo)
    assert found.loaded["src/calc/__init__.py"] == (git(repo, "hash-object", str(source)),)
    assert found.flags == ()


# A conftest that runs pytest again in this process, with a variable set before the interpreter
# starts (python-libfaketime's `reexec_if_needed()`)
REEXEC_CONFTEST = """
import os, sys

def pytest_configure(config):
    if not os.environ.get("REEXECUTED"):
        with open(os.environ["PID_FILE"], "w") as fh:
            fh.write(str(os.getpid()))
        env = dict(os.environ, REEXECUTED="1")
        os.execve(sys.executable, [sys.executable, "-m", "pytest", *sys.argv[1:]], env)
"""


@pytest.mark.e2e
def test_a_pytest_that_re_executes_itself_binds_its_evidence(tmp_path: Path) -> None:
    """The process that opened the run replaced its program (same pid, same environment):
    the new pytest took itself for one a test of the run had started, and bound nothing
    (`no-evidence`: install genstamp). It is the run now, and the first image's run is gone
    with its start-up file."""
    repo, _ = project(tmp_path, CLI_TEST.replace("2", "1"), {"tests/conftest.py": REEXEC_CONFTEST})
    pid_file = tmp_path / "pid"
    proc = run_pytest(
        repo, env=subprocess_env(PYTHONPATH=str(repo / "src"), PID_FILE=str(pid_file))
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert failures(repo) == {}
    pid = pid_file.read_text()  # the process's, before and after it replaced its program
    assert not list(Path(child.site_packages()).glob(f"*genstamp-run-{pid}-*.pth"))


# A CLI test that runs the project's compiled script (`python -m compileall -b` beside it)
PYC_MAIN_TEST = """
import subprocess, sys

def test_cli():
    out = subprocess.run([sys.executable, "src/calc/cli.pyc"],
                         capture_output=True, text=True, check=True).stdout
    assert out.strip() == "2", out
"""


PIPED_SCRIPT_TEST = """
import subprocess, sys

def test_piped():
    done = subprocess.run([sys.executable, "/dev/stdin"], input=b"print(2)", capture_output=True)
    assert done.stdout.strip() == b"2", done
"""


@pytest.mark.e2e
def test_a_child_whose_script_is_a_pipe_reads_all_of_it(tmp_path: Path) -> None:
    """`python /dev/stdin`: the recorder looked at the script before CPython read it (a
    compiled one runs with no exec event), and emptied the pipe: the child ran nothing."""
    repo, _ = project(tmp_path, PIPED_SCRIPT_TEST)
    proc = run_pytest(repo)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert failures(repo) == {}


@pytest.mark.e2e
@pytest.mark.parametrize("stale", [True, False], ids=["stale-pyc", "control"])
def test_a_child_that_runs_a_compiled_script_runs_that_bytecode(
    tmp_path: Path, stale: bool
) -> None:
    """`python app.pyc`: CPython reads a compiled main script's code itself (no ``exec``
    event), so a child running one compiled before the script was edited ran code of no tree
    and was accepted. Judged now as the bytecode it is (stale here: the script says 1, its
    compiled form 2, the test passes only on the bytecode). Control: the test runs the source."""
    test = PYC_MAIN_TEST if stale else PYC_MAIN_TEST.replace("cli.pyc", "cli.py")
    repo, _ = project(tmp_path, test, {"src/calc/cli.py": "print(2)\n"})
    (repo / ".gitignore").write_text((repo / ".gitignore").read_text() + "*.pyc\n")
    env = subprocess_env(bytecode=True)
    if stale:
        (repo / "src" / "calc" / "cli.py").write_text("print(1)\n")
    commit_all(repo, "the script")
    restamp.begin(open_checkout(repo))
    if stale:  # bytecode of the script before its edit, compiled in this generation
        script = repo / "src" / "calc" / "cli.py"
        script.write_text("print(2)\n")
        compiled = [sys.executable, "-m", "compileall", "-q", "-b", str(script)]
        subprocess.run(compiled, cwd=repo, check=True)
        script.write_text("print(1)\n")
    proc = run_pytest(repo, env=env)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    said = failures(repo)
    if stale:
        assert "src/calc/cli.pyc" in said.get("stale-bytecode", ""), said
    else:
        assert said == {}, said


# The same CLI test, its child given an environment of its own (no GENSTAMP_RUN), directly or
# through a shell.
OWN_ENV_TEST = """
import os, subprocess, sys

def test_cli():
    env = {{"PATH": os.environ["PATH"], "PYTHONPATH": {where!r}}}
    argv = [sys.executable, "-c", "import calc; print(calc.VALUE)"]
    if {shell!r}:
        argv = ["sh", "-c", " ".join(repr(a) for a in argv)]
    out = subprocess.run(argv, env=env, capture_output=True, text=True, check=True).stdout
    assert out.strip() == "2", out
"""


@pytest.mark.e2e
@pytest.mark.parametrize("shell", [False, True], ids=["child", "through-a-shell"])
@pytest.mark.parametrize("stale", [True, False], ids=["stale-pycache", "control"])
def test_a_child_with_an_environment_of_its_own_is_followed(
    tmp_path: Path, stale: bool, shell: bool
) -> None:
    """A test that gives its child a fresh environment (no GENSTAMP_RUN): the child is the
    test process's descendant, and is held to the same standard."""
    repo, _ = project(tmp_path, "")
    (repo / "tests" / "test_it.py").write_text(
        OWN_ENV_TEST.format(where=str(repo / "src"), shell=shell)
    )
    value_2_after_an_edit_that_kept_size_and_mtime(repo, stale)


MP_TEST = """
import multiprocessing, sys

def work(where):
    sys.path.insert(0, where)
    import calc.child_only
    return calc.child_only.WHO

def test_mp():
    ctx = multiprocessing.get_context({method!r})
    with ctx.Pool(1) as pool:
        assert pool.apply(work, ({where!r},)) == "child"
"""


@pytest.mark.e2e
@pytest.mark.parametrize("method", ["spawn", "forkserver", "fork"])
@pytest.mark.parametrize("foreign", [True, False], ids=["other-clone", "control"])
def test_multiprocessing_children_are_recorded(tmp_path: Path, method: str, foreign: bool) -> None:
    repo, other = project(tmp_path, "", {"src/calc/child_only.py": CHILD_ONLY})
    where = str((other if foreign else repo) / "src")
    (repo / "tests" / "__init__.py").write_text("")
    found = scenario(repo, MP_TEST.format(method=method, where=where))
    modules = [f.module for f in found.flags if f.kind == audit.FOREIGN]
    if foreign:
        assert "calc.child_only" in modules  # only the child imported it
        assert "foreign-origin" in failures(repo)
    else:
        assert modules == []
        assert found.loaded["src/calc/child_only.py"] == (loads.blob_of(CHILD_ONLY.encode()),)


CLOSES_ITS_DESCRIPTORS = '''
import subprocess, sys

CHILD = """
import os, sys
sys.path.insert(0, {own!r})
import calc
os.closerange(3, 4096)  # a daemon's start: every descriptor it inherited or opened, closed
mine = open({out!r}, "w")  # the number genstamp's log had
del sys.modules["calc"]
sys.path.insert(0, {where!r})
import calc.child_only
mine.write("mine")
mine.close()
print(open({out!r}).read())
"""


def test_daemon():
    out = subprocess.run([sys.executable, "-c", CHILD], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "mine", out
'''


@pytest.mark.e2e
@pytest.mark.parametrize("foreign", [True, False], ids=["other-clone", "control"])
def test_a_child_that_closes_its_descriptors_is_still_recorded(
    tmp_path: Path, foreign: bool
) -> None:
    """A child closes every descriptor after its first load of the checkout and opens a file
    of its own, which gets the number the run's log had: its later loads went into the
    user's file (the child's output changed, a clean run failed), or were lost (another
    clone's code accepted; probe C19). The log is opened again, and the file is the user's."""
    child_only_judged(
        tmp_path,
        foreign,
        lambda repo, where: CLOSES_ITS_DESCRIPTORS.format(
            own=str(repo / "src"), out=str(tmp_path / "out.txt"), where=where
        ),
    )


def child_only_judged(tmp_path: Path, foreign: bool, test: Callable[[Path, str], str]) -> None:
    """Run ``test(repo, where)``, a child importing calc.child_only from ``where`` (the other
    clone's src, or the checkout's): foreign-origin names it, or the checkout's file loaded."""
    repo, other = project(tmp_path, "", {"src/calc/child_only.py": CHILD_ONLY})
    found = scenario(repo, test(repo, str((other if foreign else repo) / "src")))
    modules = [f.module for f in found.flags if f.kind == audit.FOREIGN]
    if foreign:
        assert "calc.child_only" in modules, found
    else:
        assert modules == [] and "src/calc/child_only.py" in found.loaded, found


UNDER_A_LIMIT = """
import os, resource, subprocess, sys


def limit():  # the CLI's handling of a file-size limit, as a test of it sets one
    resource.setrlimit(resource.RLIMIT_FSIZE, (0, 0))


def test_limited():
    run = [sys.executable, "-c", "import calc.child_only, calc; print(calc.VALUE)"]
    env = dict(os.environ, PYTHONPATH={where!r})  # (the run's variable: this run's alone)
    out = subprocess.run(run, capture_output=True, text=True, preexec_fn=limit, env=env)
    assert out.stdout.strip() in ("1", "2"), out
"""


@pytest.mark.e2e
@pytest.mark.parametrize("foreign", [True, False], ids=["other-clone", "control"])
def test_a_child_whose_log_writes_fail_is_still_recorded(tmp_path: Path, foreign: bool) -> None:
    """A test runs a child under a limit on the size of the files it writes: no line reached
    the run's log, and another clone's code it ran was accepted, with an empty audit (h210).
    A line the log cannot take is kept as the target of a symbolic link beside it, which no
    such limit stops."""
    child_only_judged(tmp_path, foreign, lambda _, where: UNDER_A_LIMIT.format(where=where))


def test_lines_set_aside_are_read_back_and_a_process_that_lost_them_is_said(
    tmp_path: Path,
) -> None:
    """``_set_aside`` keeps a line as a link's target, read back after the logs (and not again
    once read: ``log_sizes``); where even that fails, the process is said to be lost."""
    line = "\t".join(loads.Load("/w/src/calc/__init__.py", "ab", "calc", loads.SOURCE, "")) + "\n"
    loads._set_aside(str(tmp_path), 41, line.encode())
    read = loads.read_logs(str(tmp_path))
    assert read == [loads.Load("/w/src/calc/__init__.py", "ab", "calc", loads.SOURCE, "")]
    assert loads.read_logs(str(tmp_path), loads.log_sizes(str(tmp_path))) == []
    assert loads.lost(str(tmp_path)) == []
    loads._set_aside(str(tmp_path / "gone"), 42, line.encode())  # no folder for a link either
    assert loads.lost(str(tmp_path / "gone")) == []
    (tmp_path / "gone").mkdir()
    loads._set_aside(str(tmp_path / "gone"), 43, ("x" * 5000).encode())  # too long for a link
    assert loads.lost(str(tmp_path / "gone")) == ["43"]


def test_a_line_the_log_took_short_is_blanked_and_read_whole_from_its_link(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A limit on the file's size that falls inside a line: the log takes part of it, which
    ``read_logs`` blanks out (its whole line read from the link), so that the next process's
    line appended after it reads whole (h213). A process that runs another program keeps its
    pid: the names of its links go on past those its earlier image took."""
    first, second = (
        loads.Load(f"/w/src/calc/{m}.py", "ab", f"calc.{m}", loads.SOURCE, "") for m in "xy"
    )
    lines = [("\t".join(load) + "\n").encode() for load in (first, second)]
    log = tmp_path / loads.LOG_FILE
    log.write_bytes(lines[0][:17])  # a child's line, cut by its limit
    with open(log, "ab") as fh:
        fh.write(lines[1])  # another process's, appended after the cut
    cut = f"{log.stat().st_ino} 0 17".encode()
    monkeypatch.setattr(loads, "_ASIDE", [0])  # as a program begins
    (tmp_path / "7.1.aside").symlink_to("taken by the process's earlier image")
    loads._set_aside(str(tmp_path), 7, lines[0], cut)
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "7.1.aside", "7.2.aside", "7.3.cut", loads.LOG_FILE
    ]  # fmt: skip
    assert loads.read_logs(str(tmp_path))[0] == second
    assert first in loads.read_logs(str(tmp_path))


LOST_ITS_LOADS = """
import os


def test_lost():  # as a child's _set_aside leaves it where no link could be made either
    os.mkdir(os.path.join(os.environ["GENSTAMP_RUN"], "4242.lost"))
"""


@pytest.mark.e2e
def test_a_process_whose_loads_are_lost_refuses_the_run(tmp_path: Path) -> None:
    repo, _ = project(tmp_path, "")
    found = scenario(repo, LOST_ITS_LOADS)
    assert [(f.kind, f.path) for f in found.flags] == [(audit.FOREIGN, "<process 4242>")], found
    assert "could record no load" in failures(repo)["foreign-origin"], failures(repo)


AT_FINALISATION = r'''
import subprocess, sys

CHILD = """
class Last:
    def __del__(self, path={path!r}, open=open, compile=compile, exec=exec, print=print):
        space = {{"__name__": "calc"}}
        exec(compile(open(path).read(), path, "exec"), space)
        print(space["VALUE"], flush=True)


last = Last()
"""


def test_last():
    out = subprocess.run([sys.executable, "-c", CHILD], capture_output=True, text=True, check=True)
    assert out.stdout.strip() in ("1", "2"), out
'''


@pytest.mark.e2e
@pytest.mark.parametrize("foreign", [True, False], ids=["other-clone", "control"])
def test_code_a_child_runs_as_it_ends_is_recorded(tmp_path: Path, foreign: bool) -> None:
    """A child runs a module's code in a ``__del__`` at the interpreter's finalisation (no
    import system left): the recording imported what it compares with there, failed, and
    dropped the load (C25 04: the other clone's code accepted). It needs no import."""
    repo, other = project(tmp_path, "")
    path = str((other if foreign else repo) / "src" / "calc" / "__init__.py")
    found = scenario(repo, AT_FINALISATION.format(path=path))
    flagged = [(f.kind, f.module) for f in found.flags]
    if foreign:  # named by its path in the other clone: no module runs it by name
        assert [kind for kind, module in flagged if module.endswith("calc")] == [audit.FOREIGN]
    else:
        assert flagged == [] and "src/calc/__init__.py" in found.loaded, found


def test_the_future_flags_are_those_of_this_interpreter() -> None:
    """``loads`` holds the compiler flags of every ``__future__`` feature as a constant (it
    cannot import ``__future__`` in a process that is ending)."""
    import __future__

    flags = 0
    for name in __future__.all_feature_names:
        flags |= getattr(__future__, name).compiler_flag
    assert flags == loads._FUTURES


AS_ANOTHER_USER = """
import subprocess, sys


def test_as_nobody():
    code = "import sys; sys.path.insert(0, {where!r}); import calc.child_only as c; print(c.WHO)"
    argv = [*{drop!r}, sys.executable, "-c", code]
    out = subprocess.run(argv, capture_output=True, text=True, check=True).stdout
    assert out.strip() == "child", out
"""
DROP = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]  # nobody


@pytest.mark.e2e
@pytest.mark.skipif(os.geteuid() != 0, reason="only root starts processes of another user")
@pytest.mark.parametrize("foreign", [True, False], ids=["other-clone", "control"])
def test_a_child_running_as_another_user_is_followed(foreign: bool) -> None:
    """A run of root whose test drops a child to another user (``setpriv``, as a CI job runs
    its service as an app user): the child could not read the run's folder, went unobserved,
    and another clone's code it imported was accepted (probe C19)."""
    if subprocess.run([*DROP, sys.executable, "-c", "import genstamp"], check=False).returncode:
        pytest.skip("nobody cannot run this interpreter (its environment is root's alone)")
    base = Path(tempfile.mkdtemp(prefix="genstamp-users-"))  # pytest's own folder is root's
    try:
        base.chmod(0o755)
        repo, other = project(base, "", {"src/calc/child_only.py": CHILD_ONLY})
        where = str((other if foreign else repo) / "src")
        found = scenario(repo, AS_ANOTHER_USER.format(where=where, drop=DROP))
        modules = [f.module for f in found.flags if f.kind == audit.FOREIGN]
        if foreign:
            assert "calc.child_only" in modules, found
        else:
            assert modules == [] and "src/calc/child_only.py" in found.loaded, found
    finally:
        shutil.rmtree(base)


SCRIPT_TEST = """
import subprocess

def test_script():
    out = subprocess.run([{script!r}], capture_output=True, text=True, check=True).stdout
    assert out.strip() in ("1", "2")
"""


@pytest.mark.e2e
@pytest.mark.parametrize("foreign", [True, False], ids=["other-clone", "control"])
def test_a_console_script_is_followed(tmp_path: Path, foreign: bool) -> None:
    """What pip writes for ``[project.scripts]``: this interpreter, then the entry point."""
    repo, other = project(tmp_path, "", {"src/calc/cli.py": "def main():\n    print(1)\n"})
    where = (other if foreign else repo) / "src"
    script = tmp_path / "bin" / "calc-cli"
    script.parent.mkdir()
    script.write_text(
        f"#!{sys.executable}\nimport sys\nsys.path.insert(0, {str(where)!r})\n"
        "from calc.cli import main\nsys.exit(main())\n"
    )
    script.chmod(0o755)
    found = scenario(repo, SCRIPT_TEST.format(script=str(script)))
    modules = [f.module for f in found.flags if f.kind == audit.FOREIGN]
    if foreign:
        assert "calc.cli" in modules
    else:
        assert modules == [] and "src/calc/cli.py" in found.loaded


def a_run_folder(tmp_path: Path) -> Path:
    folder = tmp_path / "run"
    folder.mkdir()
    run = loads.Run(str(folder), str(tmp_path), {}, None, None)
    (folder / loads.RUN_FILE).write_text(loads.run_text(run))
    return folder


ADOPTED = "from genstamp import loads; loads.adopt({owner}, {started!r}, {folder!r}); " + (
    "print(len(loads.active()))"
)


@pytest.mark.parametrize("shell", [False, True], ids=["child", "grandchild"])
def test_only_a_descendant_of_the_runs_very_process_is_adopted(tmp_path: Path, shell: bool) -> None:
    """The run's process is its pid and its start time: a later process that took the pid of a
    killed run's (whose ``.pth`` and folder stayed behind) adopts nobody."""
    folder = a_run_folder(tmp_path)
    me = os.getpid()

    def adopted(started: str) -> str:
        code = ADOPTED.format(owner=me, started=started, folder=str(folder))
        argv = [sys.executable, "-c", code]
        if shell:
            argv = ["sh", "-c", " ".join(repr(a) for a in argv)]
        proc = subprocess.run(argv, env=subprocess_env(), capture_output=True, text=True)
        assert proc.returncode == 0 and not proc.stderr, proc.stderr
        return proc.stdout.strip()

    assert loads.started(me)  # Linux: /proc tells it
    assert adopted(loads.started(me)) == "1"
    assert adopted(str(int(loads.started(me)) + 1)) == "0"  # the same pid, another process


@pytest.mark.parametrize("variable", [None, "", "set"])
def test_the_pth_line_never_breaks_a_process(tmp_path: Path, variable: str | None) -> None:
    """A leftover line of a run whose genstamp is gone (or is another version) prints nothing
    and raises nothing, in a process started with the variable or without it."""
    from genstamp import child

    folder = a_run_folder(tmp_path)
    line = child.pth_line(os.getpid(), loads.started(os.getpid()), str(folder))
    assert line.isascii() and line.startswith("import ") and line.count("\n") == 1
    env = {"PATH": os.environ["PATH"]}
    if variable is not None:
        env["GENSTAMP_RUN"] = str(folder) if variable == "set" else ""
    # -S -I: no site-packages, no PYTHONPATH, so no genstamp to import; exec as site.addpackage
    argv = [sys.executable, "-S", "-I", "-c", f"exec({line.strip()!r}); print('ran')"]
    proc = subprocess.run(argv, env=env, capture_output=True, text=True)
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, "ran\n", "")


PTH_COMPILES = """\
import sys
compiled = []
sys.addaudithook(lambda event, args: compiled.append(1) if event == "compile" else None)
exec({line!r})
print(len(compiled))
"""


@pytest.mark.parametrize(("variable", "compiles"), [("", 1), ("set", 2)])
def test_the_pth_line_compiles_its_work_only_for_a_followed_process(
    tmp_path: Path, variable: str, compiles: int
) -> None:
    """Every process of the interpreter reads the line while a run is open: one that opts out
    (the variable empty, as genstamp's own co-process) compiles the line and nothing more; a
    followed one compiles the line's work too (and pays for it: its size is its cost)."""
    from genstamp import child

    folder = a_run_folder(tmp_path)
    line = child.pth_line(os.getpid(), loads.started(os.getpid()), str(folder)).strip()
    env = {"PATH": os.environ["PATH"], "GENSTAMP_RUN": str(folder) if variable else ""}
    code = PTH_COMPILES.format(line=line)
    proc = subprocess.run(
        [sys.executable, "-S", "-I", "-c", code], env=env, capture_output=True, text=True
    )
    assert (proc.returncode, proc.stderr) == (0, ""), proc.stderr
    assert proc.stdout.split() == [str(compiles)]


PTH_TWICE = """\
import sys
compiled = []
sys.addaudithook(lambda event, args: compiled.append(1) if event == "compile" else None)
for _ in range({times}):
    exec({line!r})
m = sys.modules.get("genstamp.loads")
print(len(compiled), len(m.active()) if m else "-")
"""


def test_the_pth_line_read_twice_follows_once(tmp_path: Path) -> None:
    """site reads a virtual environment's site-packages twice (``site.venv``, then
    ``site.main``) and runs every line of its ``.pth`` files both times: a followed process
    compiles the line again, and nothing more (its work was done)."""
    from genstamp import child

    folder = a_run_folder(tmp_path)
    line = child.pth_line(os.getpid(), loads.started(os.getpid()), str(folder)).strip()
    env = {"PATH": os.environ["PATH"], "GENSTAMP_RUN": str(folder)}
    counts = []
    for times in (1, 2):
        code = PTH_TWICE.format(line=line, times=times)
        proc = subprocess.run(
            [sys.executable, "-S", "-I", "-c", code], env=env, capture_output=True, text=True
        )
        assert (proc.returncode, proc.stderr) == (0, ""), proc.stderr
        compiled, active = proc.stdout.split()
        assert active == "1"  # followed, once
        counts.append(int(compiled))
    assert counts[1] == counts[0] + 1  # the line itself, read again


PTH_ADOPTS = """\
import sys
imported = []
sys.addaudithook(lambda event, args: imported.append(args[0]) if event == "import" else None)
exec({line!r})
m = sys.modules.get("genstamp.loads")
print("genstamp" in imported, len(m.active()) if m else "-")
"""


@pytest.mark.parametrize("owner", ["the-parent", "no-ancestor"])
def test_a_process_without_the_variable_imports_genstamp_only_when_the_run_is_its_ancestors(
    tmp_path: Path, owner: str
) -> None:
    """While a run is open, every process of the interpreter reads its line: one started
    without the variable is followed when it descends from the run's process (a test gave
    its child an environment of its own); any other (another terminal's, an editor's) is
    told apart by a look at /proc and imports nothing."""
    folder = a_run_folder(tmp_path)
    stranger = subprocess.Popen(["sleep", "60"])  # alive, and no ancestor of the child
    try:
        pid = os.getpid() if owner == "the-parent" else stranger.pid
        line = child.pth_line(pid, loads.started(pid), str(folder)).strip()
        env = {"PATH": os.environ["PATH"]}  # no GENSTAMP_RUN
        code = PTH_ADOPTS.format(line=line)
        proc = subprocess.run(
            [sys.executable, "-S", "-I", "-c", code], env=env, capture_output=True, text=True
        )
    finally:
        stranger.kill()
        stranger.wait()
    assert (proc.returncode, proc.stderr) == (0, ""), proc.stderr
    expected = ["True", "1"] if owner == "the-parent" else ["False", "-"]
    assert proc.stdout.split() == expected


PTH_SEARCHES = """\
import sys
searched = []
sys.addaudithook(lambda event, args: searched.append(args[0]) if event == "import" else None)
exec({line!r})
print(searched.count("genstamp"), "genstamp.loads" in sys.modules)
"""


def test_the_pth_line_finds_genstamp_in_one_search(tmp_path: Path) -> None:
    """A followed process whose path does not reach genstamp yet when site reads the line (an
    editable install's own ``.pth`` comes later): the line imports genstamp from where it lies
    in one search of the path, not a first one that fails and a second."""
    from genstamp import child

    folder = a_run_folder(tmp_path)
    line = child.pth_line(os.getpid(), loads.started(os.getpid()), str(folder)).strip()
    env = {"PATH": os.environ["PATH"], "GENSTAMP_RUN": str(folder)}
    code = PTH_SEARCHES.format(line=line)
    proc = subprocess.run(
        [sys.executable, "-S", "-I", "-c", code], env=env, capture_output=True, text=True
    )
    assert (proc.returncode, proc.stderr) == (0, ""), proc.stderr
    assert proc.stdout.split() == ["1", "True"]


def test_an_unwritable_site_packages_is_noted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Children cannot be followed: the run records why, and leaves nothing behind."""
    from genstamp import child

    blocked = tmp_path / "not-a-folder"
    blocked.write_text("")
    monkeypatch.setattr(child, "site_packages", lambda: str(blocked))
    before = os.environ.get(loads.RUN_ENV)
    recording = child.open_run(str(tmp_path), {}, None, None)
    try:
        assert recording.hook is not None and recording.hook.pth is None
        assert "cannot write" in (recording.hook.problem or "")
        assert loads.active(recording.run.folder)
    finally:
        child.close_run(recording)
    assert not loads.active(recording.run.folder)
    assert not Path(recording.run.folder).exists()
    assert os.environ.get(loads.RUN_ENV) == before


# What a followed process pays at start-up: it imports genstamp's light modules and nothing
# heavier (typing, collections, importlib.util, contextlib, even __future__ and the error
# type cost every child a share of its start-up).
CHILD_MODULES = {
    "_sha1",
    "genstamp",
    "genstamp.bytecode",
    "genstamp.loader",
    "genstamp.loads",
    "genstamp.paths",
    "genstamp.realos",
    "genstamp.records",
}
SHOW_MODULES = "import calc, sys; print(' '.join(sorted(sys.modules)))"


def test_a_followed_child_imports_only_the_light_modules(tmp_path: Path) -> None:
    repo, _ = project(tmp_path, "")
    folder = tmp_path / "run"
    folder.mkdir()
    run = loads.Run(str(folder), str(repo), {"calc": str(repo / "src")}, str(tmp_path / "c"), None)
    (folder / loads.RUN_FILE).write_text(loads.run_text(run))
    env = subprocess_env(PYTHONPATH=str(repo / "src"))  # GENSTAMP_RUN empty: not followed

    def modules(code: str, **extra: str) -> set[str]:
        argv = [sys.executable, "-c", code]
        proc = subprocess.run(argv, cwd=repo, env={**env, **extra}, capture_output=True)
        assert proc.returncode == 0, proc.stderr
        return set(proc.stdout.decode().split())

    plain = modules(SHOW_MODULES)
    followed = modules(
        f"from genstamp import loads; loads.start(); {SHOW_MODULES}", GENSTAMP_RUN=str(folder)
    )
    assert {"genstamp.loads", "genstamp.loader"} <= followed
    assert followed - plain <= CHILD_MODULES, followed - plain - CHILD_MODULES
    assert [load.module for load in loads.read_logs(str(folder))] == ["calc"]  # it did record


def test_a_followed_process_whose_folder_was_removed_imports_as_python_does(
    tmp_path: Path,
) -> None:
    """A process the tests start (``python -c``: "" on its path) whose current folder was
    removed while it was in it (a tool working in a temporary folder): the path finder passes
    over its relative entries, and so does genstamp, which raised FileNotFoundError at its next
    import of a module not loaded yet. It still records what it loads."""
    repo, _ = project(tmp_path, "")
    cache = str(tmp_path / "cache")  # the loader's: a path hook for the checkout's folders
    recording = child.open_run(str(repo), {"calc": str(repo / "src")}, cache, None, follow=False)
    folder = recording.run.folder
    try:
        env = subprocess_env(GENSTAMP_RUN=folder)
        code = (
            f"import os, sys, tempfile; sys.path.insert(0, {str(repo / 'src')!r})\n"
            "from genstamp import loads; loads.start()\n"
            "d = tempfile.mkdtemp(); os.chdir(d); os.rmdir(d)\n"
            "import calc, json; print(json.dumps(calc.add(1, 2)))\n"
            "sys.path.insert(0, 'vendor')  # relative: it finds nothing\n"
            "try:\n    import not_here\nexcept ImportError:\n    print('not found')\n"
        )
        proc = subprocess.run(
            [sys.executable, "-c", code], cwd=repo, env=env, capture_output=True, text=True
        )
        assert (proc.returncode, proc.stdout, proc.stderr) == (0, "3\nnot found\n", "")
        calc = str(repo / "src" / "calc" / "__init__.py")
        assert [load.via for load in loads.read_logs(folder) if load.path == calc] == [loads.SOURCE]
    finally:
        child.close_run(recording)


def test_the_processes_of_a_run_append_to_its_one_log(tmp_path: Path) -> None:
    """Processes writing at once append whole lines to the log the run made; none makes a log
    of its own (creating a file costs each process far more than opening one)."""
    repo, _ = project(tmp_path, "")
    recording = child.open_run(str(repo), {"calc": str(repo / "src")}, None, None, follow=False)
    folder = recording.run.folder
    try:
        env = subprocess_env(PYTHONPATH=str(repo / "src"), GENSTAMP_RUN=folder)
        code = "from genstamp import loads; loads.start(); import calc"
        argv = [sys.executable, "-c", code]
        procs = [subprocess.Popen(argv, cwd=repo, env=env) for _ in range(8)]
        assert [p.wait() for p in procs] == [0] * 8
        assert sorted(os.listdir(folder)) == [loads.LOG_FILE, loads.RUN_FILE]
        calc = str(repo / "src" / "calc" / "__init__.py")
        found = [load for load in loads.read_logs(folder) if load.path == calc]
        assert [load.via for load in found] == [loads.SOURCE] * 8
    finally:
        child.close_run(recording)


# -- extension modules built in place -----------------------------------------------------------

SPEED_C = """
#include <Python.h>
static struct PyModuleDef def = {PyModuleDef_HEAD_INIT, "_speed", NULL, -1, NULL};
PyMODINIT_FUNC PyInit__speed(void) { return PyModule_Create(&def); }
"""


def edited_after(built: Path, source: Path, text: str) -> None:
    """``source`` edited to ``text`` a second after ``built`` was built, and committed (not
    rebuilt)."""
    st = built.stat()
    source.write_text(text)
    os.utime(source, ns=(st.st_atime_ns, st.st_mtime_ns + 10**9))
    commit_all(source.parent, "edited, not rebuilt")


def build_extension(folder: Path, into: Path | None = None) -> Path:
    """``folder/_speed.c`` built into ``_speed`` in ``into`` (default: beside it)."""
    import shutil
    import sysconfig

    compiler = shutil.which("gcc") or shutil.which("cc")
    if compiler is None:
        pytest.skip("no C compiler")
    target = (into or folder) / f"_speed{sysconfig.get_config_var('EXT_SUFFIX')}"
    include = sysconfig.get_paths()["include"]
    subprocess.run(
        [compiler, "-shared", "-fPIC", f"-I{include}", str(folder / "_speed.c"), "-o", str(target)],
        check=True,
    )
    return target


@pytest.mark.e2e
@pytest.mark.parametrize("built_in", ["another-clone", "this-checkout"])
def test_a_top_level_extension_built_in_another_clone_is_foreign(
    tmp_path: Path, built_in: str
) -> None:
    """``Extension("_speed", ["_speed.c"])`` in setup.py, built in place: the built file is in
    no tree, so the name is read from the metadata. Another clone's build on the path (a
    PYTHONPATH left from working there) ran in place of this checkout's: foreign-origin. The
    control builds it in this checkout."""
    setup = (
        "from setuptools import setup, Extension\n"
        'setup(ext_modules=[Extension("_speed", ["_speed.c"])])\n'
    )
    files = {"_speed.c": SPEED_C, "setup.py": setup, ".gitignore": "__pycache__/\n*.so\n"}
    test = "import _speed\n\n\ndef test_speed():\n    assert _speed\n"
    repo, other = project(tmp_path, test, files)
    where = other if built_in == "another-clone" else repo
    build_extension(where)
    found = scenario(repo, test, PYTHONPATH=str(where))
    foreign = [f for f in found.flags if f.kind == audit.FOREIGN]
    if built_in == "this-checkout":
        assert foreign == [] and failures(repo) == {}, found.flags
        return
    assert [f.module for f in foreign] == ["_speed"], found.flags
    assert list(failures(repo)) == ["foreign-origin"]


@pytest.mark.e2e
@pytest.mark.parametrize(
    "case",
    [
        "source-newer",
        "source-elsewhere-newer",
        "include-file-newer",
        "built-before-generation",
        "sources-deleted",
        "its-source-deleted",
        "module-beside-newer",
        "rewritten-as-it-was",
        "rewritten-otherwise",
        "control",
    ],
)
def test_stale_extension(tmp_path: Path, case: str) -> None:
    """Stale means not built from the sources now in the tree, wherever the build reads them
    from (built from none the tree still holds; older than the module of its name that it
    hides, which a clean clone runs); an extension built before the generation from unchanged
    sources is current."""
    repo, _ = project(
        tmp_path,
        "import calc._speed\n\n\ndef test_speed():\n    assert calc._speed\n",
        {
            "src/calc/_speed.c": SPEED_C,
            "csrc/speed.h": "#define SPEED 1\n",
            "csrc/speed.inl": "/* C++ inline definitions a build includes */\n",
            ".gitignore": "__pycache__/\n*.so\n",
        },
    )
    folder = repo / "src" / "calc"
    if case == "built-before-generation":
        built = build_extension(folder)
        restamp.begin(open_checkout(repo))
    else:
        restamp.begin(open_checkout(repo))
        built = build_extension(folder)
    edited = {
        "source-newer": folder / "_speed.c",
        "source-elsewhere-newer": repo / "csrc/speed.h",
        "include-file-newer": repo / "csrc/speed.inl",
    }
    if case in edited:
        st = built.stat()
        source = edited[case]
        source.write_text(source.read_text() + "/* edited */\n")
        os.utime(source, ns=(st.st_atime_ns, st.st_mtime_ns + 10**9))
        commit_all(repo, "edited a native source")
        restamp.begin(open_checkout(repo))
        os.utime(built, ns=(st.st_atime_ns, st.st_mtime_ns))  # built before both
    if case == "sources-deleted":  # the commit drops the extension; its build stays behind
        for native in ("src/calc/_speed.c", "csrc/speed.h", "csrc/speed.inl"):
            (repo / native).unlink()
        edited[case] = folder / "_speed.c"
    if case == "its-source-deleted":  # the same, while other native sources stay
        (folder / "_speed.c").unlink()
    if case == "module-beside-newer":  # the commit ports it to Python; the build hides it
        st = built.stat()
        edited[case] = folder / "_speed.py"
        edited[case].write_text("PORTED = True\n")
        os.utime(edited[case], ns=(st.st_atime_ns, st.st_mtime_ns + 10**9))
    if case in ("sources-deleted", "its-source-deleted", "module-beside-newer"):
        commit_all(repo, case)
        restamp.begin(open_checkout(repo))
    if case.startswith("rewritten"):  # a run, then git writes the source again (a switch
        # to another branch and back, a stash and its pop): the same bytes, or others
        env = subprocess_env(PYTHONPATH=str(repo / "src"))
        assert run_pytest(repo, env=env).returncode == 0
        assert [f for f in audit_of(repo).flags if f.kind == audit.STALE_EXT] == []
        source = edited[case] = folder / "_speed.c"
        if case == "rewritten-otherwise":
            source.write_text(source.read_text() + "/* another build */\n")
        st = built.stat()
        os.utime(source, ns=(st.st_atime_ns, st.st_mtime_ns + 10**9))
        if case == "rewritten-otherwise":
            commit_all(repo, case)
            restamp.begin(open_checkout(repo))
    proc = run_pytest(repo, env=subprocess_env(PYTHONPATH=str(repo / "src")))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    flags = [f for f in audit_of(repo).flags if f.kind == audit.STALE_EXT]
    if case in ("control", "built-before-generation", "rewritten-as-it-was"):
        assert flags == []
        return
    assert [f.module for f in flags] == ["calc._speed"]
    if case in ("sources-deleted", "its-source-deleted"):
        assert "built from no source the tree holds" in flags[0].detail
        return
    # no build file at the top (pyproject.toml holds pytest's settings only): no command
    assert built.name in flags[0].detail and "rebuild it (with the build that made it" in (
        flags[0].detail
    )
    assert edited[case].relative_to(repo).as_posix() in flags[0].detail


@pytest.mark.e2e
def test_a_stale_extension_the_tests_copy_is_named_with_its_own_remedy(tmp_path: Path) -> None:
    """A test copies the checkout's in-place extension, built before its source's last edit,
    into a folder of its own and imports it there: stale, and the remedy is to rebuild the
    checkout's extension (it named pyximport's build folder, which had nothing to do with it)."""
    test = (
        "import glob, importlib.util, shutil\n\n\ndef test_copy(tmp_path):\n"
        "    built = glob.glob('src/calc/_speed*.so')[0]\n"
        "    copy = shutil.copy(built, tmp_path / built.rpartition('/')[2])\n"
        "    spec = importlib.util.spec_from_file_location('calc._speed', copy)\n"
        "    module = importlib.util.module_from_spec(spec)\n"
        "    spec.loader.exec_module(module)\n"
    )
    repo, _ = project(
        tmp_path, test, {"src/calc/_speed.c": SPEED_C, ".gitignore": "__pycache__/\n*.so\n"}
    )
    folder = repo / "src" / "calc"
    built = build_extension(folder)
    st = built.stat()
    source = folder / "_speed.c"
    source.write_text(source.read_text() + "/* edited */\n")
    os.utime(source, ns=(st.st_atime_ns, st.st_mtime_ns + 10**9))
    commit_all(repo, "edited a native source")
    restamp.begin(open_checkout(repo))
    proc = run_pytest(repo)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    flags = [f for f in audit_of(repo).flags if f.kind == audit.STALE_EXT]
    assert [f.module for f in flags] == ["calc._speed"], flags
    assert "src/calc/_speed.c" in flags[0].detail, flags
    assert audit.MADE_REBUILD in flags[0].detail and ".pyxbld" not in flags[0].detail, flags


@pytest.mark.e2e
@pytest.mark.parametrize("stale", [True, False])
def test_a_build_the_tests_copy_into_the_package_is_as_old_as_its_build(
    tmp_path: Path, stale: bool
) -> None:
    """A conftest puts the extension in place from `setup.py build`'s output (`build/lib/`,
    ignored): the copy's own time is the copy's, its build is as old as the one in `build/`.
    Built before its source's last edit, it is stale (it was accepted: the copy's new time
    was taken for its build's, where the run put it in the work tree). The control: a build
    of the current source, copied the same way, is current."""
    conftest = (
        "import glob, shutil\n\n"
        "shutil.copy(glob.glob('build/lib/calc/_speed*.so')[0], 'src/calc/')\n"
    )
    test = "def test_speed():\n    import calc._speed\n"
    files = {
        "src/calc/_speed.c": SPEED_C,
        ".gitignore": "__pycache__/\n*.so\nbuild/\n",
        "tests/conftest.py": conftest,
    }
    repo, _ = project(tmp_path, test, files)
    folder = repo / "src" / "calc"
    (repo / "build" / "lib" / "calc").mkdir(parents=True)
    built = build_extension(folder, into=repo / "build" / "lib" / "calc")
    st = built.stat()
    source = folder / "_speed.c"
    source.write_text(source.read_text() + "/* edited */\n")
    # both in the past: the copy the run makes is newer than either
    times = (st.st_mtime_ns - 2 * 10**9, st.st_mtime_ns - 10**9)
    built_ns, source_ns = times if stale else times[::-1]
    os.utime(built, ns=(st.st_atime_ns, built_ns))
    os.utime(source, ns=(st.st_atime_ns, source_ns))
    commit_all(repo, "edited a native source")
    restamp.begin(open_checkout(repo))
    proc = run_pytest(repo, env=subprocess_env(PYTHONPATH=str(repo / "src")))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    flags = [f for f in audit_of(repo).flags if f.kind == audit.STALE_EXT]
    assert [f.module for f in flags] == (["calc._speed"] if stale else []), flags
    if stale:
        assert "src/calc/_speed.c" in flags[0].detail, flags


@pytest.mark.e2e
@pytest.mark.parametrize("how", ["sys-path", "spec-from-file-location"])
def test_an_extension_of_no_import_root_loaded_from_the_work_tree(tmp_path: Path, how: str) -> None:
    """An extension module that is none of the checkout's import roots, built out of place
    into an ignored folder of the work tree and imported from there (a folder a conftest puts
    on ``sys.path``, or ``spec_from_file_location``): its load is recorded as any extension's
    of the checkout, so one older than its source is stale."""
    load = {
        "sys-path": "sys.path.insert(0, str(where))\n    import _speed\n",
        "spec-from-file-location": (
            "import importlib.util\n"
            "    path = next(where.glob('_speed*.so'))\n"
            "    spec = importlib.util.spec_from_file_location('_speed', path)\n"
            "    spec.loader.exec_module(importlib.util.module_from_spec(spec))\n"
        ),
    }[how]
    repo, _ = project(
        tmp_path,
        "import pathlib, sys\n\n\ndef test_speed():\n"
        "    where = pathlib.Path(__file__).parent.parent / 'build' / 'lib'\n"
        f"    {load}",
        {"csrc/_speed.c": SPEED_C, ".gitignore": "__pycache__/\nbuild/\n"},
    )
    (repo / "build" / "lib").mkdir(parents=True)
    built = build_extension(repo / "csrc", into=repo / "build" / "lib")
    edited_after(built, repo / "csrc" / "_speed.c", SPEED_C + "/* edited */\n")
    restamp.begin(open_checkout(repo))
    proc = run_pytest(repo, env=subprocess_env(PYTHONPATH=str(repo / "src")))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    flags = [f for f in audit_of(repo).flags if f.kind == audit.STALE_EXT]
    assert [(f.module, f.path) for f in flags] == [("_speed", f"build/lib/{built.name}")]
    assert "csrc/_speed.c" in flags[0].detail


@pytest.mark.parametrize(
    ("name", "beside", "module", "stale"),
    [
        ("_speed.cpython-311-x86_64-linux-gnu.so", None, True, True),  # from nothing here
        ("34ce6af773ebf06f554f__mypyc.cpython-311-x86_64-linux-gnu.so", None, True, False),
        ("a.cpython-311-x86_64-linux-gnu.so", "a.py", True, True),  # mypyc's, older than a.py
        ("libanswer.so", "libanswer.py", False, False),  # a ctypes library hides no module
    ],
)
def test_an_ignored_build_the_tree_holds_no_source_for(
    tmp_path: Path, name: str, beside: str | None, module: bool, stale: bool
) -> None:
    """A git-ignored extension built from no source the tree holds is stale (a clean clone
    has no such module), but for mypyc's shared helper library, built from the tree's own
    modules; one older than the module of its name beside it (which it hides) is stale, a
    library ``ctypes`` loads hides none."""
    files = {".gitignore": "*.so\n", "pkg/__init__.py": ""}
    if not module:  # the library's own source, older: only what lies beside it can count
        files["pkg/answer.c"] = LIB_C
    repo = committed(tmp_path / "repo", files)
    built = repo / "pkg" / name
    built.write_bytes(b"\x7fELF")
    if beside is not None:
        (repo / "pkg" / beside).write_text("X = 1\n")
        st = built.stat()
        os.utime(repo / "pkg" / beside, ns=(st.st_atime_ns, st.st_mtime_ns + 10**9))
        commit_all(repo, "the module beside it")
    natives = [] if module else [str(repo / "pkg" / "answer.c")]
    why = audit.stale_extension(
        str(built), built.stat().st_mtime_ns, natives, str(repo), "make", module=module
    )
    assert (why is not None) == stale, why


@pytest.mark.parametrize("named_by", ["Makefile", "loader", None])
def test_a_library_built_from_no_listed_source_is_the_builds_where_a_build_file_names_it(
    tmp_path: Path, named_by: str | None
) -> None:
    """A git-ignored library ``ctypes`` loads, where the tree holds no native source at all
    (the committed Makefile builds it from a vendored tarball): the Makefile names it, a
    clean clone's ``make`` builds it, and it was refused all the same. Controls: no build
    file names it, or only the module that loads it (``ctypes.CDLL("libfast.so")``), and it
    is built from nothing the tree holds."""
    files = {".gitignore": "*.so\n", "vendor/fast.tar.gz": "(an archive)\n"}
    makefile = named_by == "Makefile"
    if makefile:
        files["Makefile"] = "libfast.so: vendor/fast.tar.gz\n\ttar xzf $< && cc -shared -o $@\n"
    if named_by == "loader":
        files["pkg/fast.py"] = "import ctypes\n\nLIB = ctypes.CDLL('libfast.so')\n"
    repo = committed(tmp_path / "repo", files)
    built = repo / "libfast.so"
    built.write_bytes(b"\x7fELF")
    later = time.time_ns() + 10**9  # built after every file of the tree
    os.utime(built, ns=(later, later))
    why = audit.stale_extension(str(built), later, [], str(repo), "make", module=False)
    assert (why is None) == makefile, why


SO = ".cpython-311-x86_64-linux-gnu.so"


@pytest.mark.parametrize(
    ("beside", "files", "stale"),
    [
        # a module beside it: its source only where the project compiles Python modules
        (True, {}, True),
        (
            True,
            {
                "setup.py": "from mypyc.build import mypycify\n"
                "setup(ext_modules=mypycify(['pkg/a.py']))\n"
            },
            False,
        ),
        (
            True,
            {"pyproject.toml": '[build-system]\nrequires = ["hatchling", "hatch-mypyc"]\n'},
            False,
        ),
        (True, {"setup.py": "from Cython.Build import cythonize\n"}, False),
        (
            True,
            {"pyproject.toml": "# pkg.a was compiled with mypyc once\n[project]\nname = 'p'\n"},
            True,
        ),
        (
            True,
            {
                "pyproject.toml": "[project]\nname = 'p'\n"
                "description = 'no longer built with mypyc'\n"
            },
            True,
        ),
        # none beside it: a build file must name it in what the build reads
        (False, {"pyproject.toml": "[project]\nname = 'p'\ndescription = 'a, dropped'\n"}, True),
        (False, {"pyproject.toml": "# 0.2: the extension pkg.a was dropped\n"}, True),
        (False, {"setup.py": "setup()  # pkg.a was dropped\n"}, True),
        (False, {"CMakeLists.txt": "# add_library(a MODULE a.c)\n"}, True),
        (False, {"setup.py": "setup(ext_modules=[Extension('pkg.a', ['csrc/a.c'])])\n"}, False),
        (False, {"pyproject.toml": '[[tool.setuptools.ext-modules]]\nname = "pkg.a"\n'}, False),
        (False, {"meson.build": "py.extension_module('a', 'a.c')\n"}, False),
    ],
)
def test_what_builds_an_ignored_extension_is_read_as_the_build_reads_it(
    tmp_path: Path, beside: bool, files: dict[str, str], stale: bool
) -> None:
    """A git-ignored extension module newer than everything in the tree is the tree's build
    only where the tree can build it: a module of its name beside it counts as its source only
    in a project that compiles Python modules (mypyc, Cython), and a build file names it only
    outside its comments and its descriptive text (a changelog line in ``description``)."""
    tree = {".gitignore": "*.so\n", "pkg/__init__.py": "", **files}
    if beside:
        tree["pkg/a.py"] = "X = 1\n"
    repo = committed(tmp_path / "repo", tree)
    built = repo / "pkg" / f"a{SO}"
    built.write_bytes(b"\x7fELF")
    later = time.time_ns() + 10**9  # built after every file of the tree
    os.utime(built, ns=(later, later))
    why = audit.stale_extension(str(built), later, [], str(repo), "make")
    assert (why is not None) == stale, why


CFFI_BUILD = """from cffi import FFI

ffibuilder = FFI()
ffibuilder.cdef("int scale(int);")
ffibuilder.set_source("_foo", "int scale(int x) { return x * FACTOR; }")

if __name__ == "__main__":
    ffibuilder.compile(verbose=False)
"""


def cffi_project(
    tmp_path: Path,
    tests: dict[str, str],
    case: str,
    other_c: bool = False,
    script: str = CFFI_BUILD,
) -> Path:
    """A project whose cffi build script ``build_foo.py`` builds the git-ignored extension
    ``_foo``, built; ``case`` "edited": the script's C code changed and committed since, not
    rebuilt. ``tests``: the test files."""
    import shutil

    if shutil.which("gcc") is None and shutil.which("cc") is None:
        pytest.skip("no C compiler")
    files = {
        "build_foo.py": script.replace("FACTOR", "2"),
        **tests,
        "pyproject.toml": '[tool.pytest.ini_options]\ntestpaths = ["tests"]\npythonpath = ["."]\n',
        ".gitignore": "__pycache__/\n_foo.*\n",
    }
    if other_c:
        files["csrc/util.c"] = "int unrelated(void) { return 0; }\n"
    repo = committed(tmp_path / "repo", files)
    build = subprocess.run(
        [sys.executable, "build_foo.py"], cwd=repo, capture_output=True, text=True, timeout=300
    )
    assert build.returncode == 0, build.stderr
    if case == "edited":  # the C code changes in the script; nobody rebuilds
        (repo / "build_foo.py").write_text(script.replace("FACTOR", "3"))
        # built a minute ago from the files then written, the script edited a second later: a
        # copy made now is newer than all of them
        built_ns = time.time_ns() - 60 * 10**9
        for file in repo.rglob("*"):
            if file.is_file() and ".git" not in file.relative_to(repo).parts:
                at = built_ns if file.name.startswith("_foo.") else built_ns - 10**9
                os.utime(file, ns=(at, at))
        os.utime(repo / "build_foo.py", ns=(built_ns + 10**9, built_ns + 10**9))
        commit_all(repo, "scale by 3")
    return repo


@pytest.mark.e2e
@pytest.mark.parametrize(
    ("case", "other_c"),
    [("fresh", False), ("fresh", True), ("edited", False), ("edited", True)],
    ids=["fresh", "fresh-beside-other-c", "edited", "edited-beside-other-c"],
)
def test_a_cffi_extension_is_built_from_its_python_build_script(
    tmp_path: Path, case: str, other_c: bool
) -> None:
    """cffi's API mode keeps the C code in a Python build script (`set_source("_foo", "<C>")`)
    and the C file and the module it builds are git-ignored. A fresh build was refused as
    "built from no source the tree holds"; with another C file in the tree, the module was
    compared with that one only, and a changed script without a rebuild was accepted (the old
    module ran). The script is the module's source."""
    tests = {
        "tests/test_scale.py": "from _foo import lib\n\n\ndef test_scale():\n"
        "    assert lib.scale(2) in (4, 6)\n"
    }
    repo = cffi_project(tmp_path, tests, case, other_c)
    restamp.begin(open_checkout(repo))
    assert run_pytest(repo).returncode == 0
    said = failures(repo)
    if case == "fresh":
        assert said == {}, said
    else:
        assert list(said) == ["stale-extension"] and "build_foo.py" in said["stale-extension"]


def test_a_cffi_extension_named_through_a_variable_is_built_from_its_script(
    tmp_path: Path,
) -> None:
    """`set_source(MODULE, …)`, the module's name in a variable: a fresh build is the
    script's, not one built from no source the tree holds."""
    tests = {
        "tests/test_scale.py": "from _foo import lib\n\n\ndef test_scale():\n"
        "    assert lib.scale(2) == 4\n"
    }
    build = CFFI_BUILD.replace('set_source("_foo"', "set_source(MODULE").replace(
        "ffibuilder = FFI()", 'MODULE = "_foo"\nffibuilder = FFI()'
    )
    repo = cffi_project(tmp_path, tests, "fresh", script=build)
    restamp.begin(open_checkout(repo))
    assert run_pytest(repo).returncode == 0
    assert failures(repo) == {}


LIB_C = "int answer(void) { return 42; }\n"


def library_project(
    tmp_path: Path, check: str, gitignore: str, given: str = "str(lib)"
) -> tuple[Path, Path, Path, str]:
    """A project whose test loads ``native/libanswer.so`` by path with ``ctypes`` and checks
    its answer (``check``), the library built from ``native/answer.c``: the repository, the
    source, the library and the compiler. ``given``: the path as the test gives it to ctypes
    (``lib`` is a ``pathlib.Path``)."""
    import shutil

    compiler = shutil.which("gcc") or shutil.which("cc")
    if compiler is None:
        pytest.skip("no C compiler")
    repo, _ = project(
        tmp_path,
        "import ctypes, os, pathlib\n\n\ndef test_answer():\n"
        "    lib = pathlib.Path(__file__).parent.parent / 'native' / 'libanswer.so'\n"
        f"    assert ctypes.CDLL({given}).answer() {check}\n",
        {"native/answer.c": LIB_C, ".gitignore": gitignore},
    )
    source, built = repo / "native" / "answer.c", repo / "native" / "libanswer.so"
    subprocess.run([compiler, "-shared", "-fPIC", str(source), "-o", str(built)], check=True)
    return repo, source, built, compiler


@pytest.mark.e2e
@pytest.mark.parametrize("given", ["str(lib)", "lib", "os.fsencode(lib)"])
@pytest.mark.parametrize("case", ["source-newer", "control"])
def test_stale_library_loaded_by_ctypes(tmp_path: Path, case: str, given: str) -> None:
    """A shared library of the checkout that ``ctypes`` loads by path is native code the tests
    ran, as an extension module is: built before its source changed, it is stale, whether its
    path is given as text, a path object or bytes (ctypes passes each on as it came)."""
    repo, source, built, _ = library_project(tmp_path, "== 42", "__pycache__/\n*.so\n", given)
    restamp.begin(open_checkout(repo))
    if case == "source-newer":
        edited_after(built, source, LIB_C.replace("42", "41"))
        restamp.begin(open_checkout(repo))
    proc = run_pytest(repo, env=subprocess_env(PYTHONPATH=str(repo / "src")))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    flags = [f for f in audit_of(repo).flags if f.kind == audit.STALE_EXT]
    if case == "control":
        assert flags == []
        return
    assert [f.path for f in flags] == ["native/libanswer.so"]
    assert "native/answer.c" in flags[0].detail


@pytest.mark.e2e
@pytest.mark.parametrize(
    "case", ["unnamed", "linked", "made-by-make", "made-by-cmake", "made-by-a-script"]
)
def test_an_ignored_library_the_tree_holds_nothing_to_build_from(tmp_path: Path, case: str) -> None:
    """A git-ignored library ctypes loads, built from a source the tree does not hold (a
    vendor's build), is refused though the tree holds other native sources; reached through
    a link in the work tree to a build elsewhere, it is judged where the work tree holds it.
    The controls: a build file of the tree that names it (make's, CMake's) builds it."""
    compiler = shutil.which("gcc") or shutil.which("cc")
    if compiler is None:
        pytest.skip("no C compiler")
    files = {
        ".gitignore": "__pycache__/\n*.so\nlibs/\n",
        "native/helper.c": "int helper(void) { return 1; }\n",
    }
    if case == "made-by-make":
        files["native/magic.c"] = LIB_C
        files["Makefile"] = "libs/libmagic.so: native/magic.c\n\tcc -shared -o $@ $<\n"
    if case == "made-by-cmake":
        files["native/vendored.c"] = LIB_C
        files["CMakeLists.txt"] = "add_library(magic SHARED native/vendored.c)\n"
    if case == "made-by-a-script":
        files["native/vendored.c"] = LIB_C
        files["tools/build_native.py"] = "OUT = 'libs/libmagic.so'  # from native/vendored.c\n"
    repo, _ = project(
        tmp_path,
        "import ctypes, pathlib\n\n\ndef test_answer():\n"
        "    lib = pathlib.Path(__file__).parent.parent / 'libs' / 'libmagic.so'\n"
        "    assert ctypes.CDLL(str(lib)).answer() == 42\n",
        files,
    )
    elsewhere = tmp_path / "vendor"
    elsewhere.mkdir()
    (elsewhere / "m.c").write_text(LIB_C)
    built = elsewhere / "libmagic.so"
    subprocess.run([compiler, "-shared", "-fPIC", str(elsewhere / "m.c"), "-o", str(built)])
    (repo / "libs").mkdir()
    if case == "linked":
        (repo / "libs" / "libmagic.so").symlink_to(built)
    else:
        shutil.copy2(built, repo / "libs" / "libmagic.so")
    restamp.begin(open_checkout(repo))
    proc = run_pytest(repo, env=subprocess_env(PYTHONPATH=str(repo / "src")))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    said = failures(repo)
    if case.startswith("made-by"):
        assert said == {}, said
        return
    assert list(said) == ["stale-extension"], said
    assert "libmagic.so is built from no source the tree holds" in said["stale-extension"]


@pytest.mark.e2e
@pytest.mark.parametrize("flag", ["--assume-unchanged", "--skip-worktree", None])
def test_a_committed_library_rebuilt_and_hidden_from_git(tmp_path: Path, flag: str | None) -> None:
    """A shared library the tree holds, rebuilt here from an edit and hidden from git by the
    index: the tests ran bytes a clean clone does not have (hidden-change). The control: the
    library as committed, flagged the same, is accepted."""
    repo, source, built, compiler = library_project(tmp_path, "> 0", "__pycache__/\n")
    commit_all(repo, "the library, committed")
    git(repo, "update-index", flag or "--assume-unchanged", "native/libanswer.so")
    if flag is not None:  # rebuilt from an edit git is not told about
        source.write_text(LIB_C.replace("42", "41"))
        commit_all(repo, "edited its source")
        subprocess.run([compiler, "-shared", "-fPIC", str(source), "-o", str(built)], check=True)
    restamp.begin(open_checkout(repo))
    proc = run_pytest(repo, env=subprocess_env(PYTHONPATH=str(repo / "src")))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    if flag is None:
        assert failures(repo) == {}
        return
    assert list(failures(repo)) == ["hidden-change"]
    assert f"native/libanswer.so ({flag})" in failures(repo)["hidden-change"]


def ext_c(name: str, value: int) -> str:
    return (
        "#include <Python.h>\n"
        f'static struct PyModuleDef def = {{PyModuleDef_HEAD_INIT, "{name}", NULL, -1, NULL}};\n'
        f"PyMODINIT_FUNC PyInit_{name}(void) {{\n"
        "    PyObject *m = PyModule_Create(&def);\n"
        f'    if (m) PyModule_AddIntConstant(m, "VALUE", {value});\n'
        "    return m;\n}\n"
    )


SETUP_PY = """\
from setuptools import Extension, setup

setup(
    name="calc",
    package_dir={"": "src"},
    packages=["calc"],
    ext_modules=[
        Extension("calc._a", ["src/calc/a.c"]),
        Extension("calc._b", ["src/calc/b.c"]),
    ],
)
"""


@pytest.mark.e2e
def test_the_named_rebuild_clears_a_stale_extension(tmp_path: Path) -> None:
    """Two extensions, one source edited: every extension is judged against every native
    source, so the rebuild the refusal names must rebuild both (setuptools alone rebuilds only
    the one older than its own source), and after it the run is not refused."""
    import shlex
    import shutil

    if shutil.which("gcc") is None and shutil.which("cc") is None:
        pytest.skip("no C compiler")
    repo, _ = project(
        tmp_path,
        "from calc import _a, _b\n\n\ndef test_values():\n"
        "    assert (_a.VALUE, _b.VALUE) == (1, 2)\n",
        {
            "setup.py": SETUP_PY,
            "src/calc/a.c": ext_c("_a", 1),
            "src/calc/b.c": ext_c("_b", 1),
            ".gitignore": "__pycache__/\n*.so\nbuild/\n",
        },
    )
    env = subprocess_env(PYTHONPATH=str(repo / "src"))

    def build(*argv: str) -> None:
        proc = subprocess.run(argv, cwd=repo, env=env, capture_output=True, text=True)
        assert proc.returncode == 0, proc.stdout + proc.stderr

    build(sys.executable, "setup.py", "build_ext", "--inplace")
    built = [*(repo / "src" / "calc").iterdir(), *(repo / "build").rglob("*")]
    for path in built:  # the first build (and its build folder), ten seconds ago
        earlier = path.stat().st_mtime_ns - 10 * 10**9  # (distutils compares whole seconds)
        os.utime(path, ns=(earlier, earlier))
    (repo / "src" / "calc" / "b.c").write_text(ext_c("_b", 2))
    commit_all(repo, "b gives 2")
    build(sys.executable, "setup.py", "build_ext", "--inplace")  # rebuilds _b only
    restamp.begin(open_checkout(repo))
    proc = run_pytest(repo, env=env)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    flags = [f for f in audit_of(repo).flags if f.kind == audit.STALE_EXT]
    assert [f.module for f in flags] == ["calc._a"]
    named = flags[0].detail.rpartition("(")[2].rstrip(")")
    build(*shlex.split(named.replace("python", sys.executable, 1)))
    proc = run_pytest(repo, env=env)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert [f for f in audit_of(repo).flags if f.kind == audit.STALE_EXT] == []


@pytest.mark.e2e
@pytest.mark.parametrize("case", ["cffi-script", "makefile-library"])
def test_the_named_rebuild_is_one_the_project_holds(tmp_path: Path, case: str) -> None:
    """A stale extension of a project with no packaging file (a cffi build script, a library
    a Makefile builds for ctypes) was told to rebuild with `pip install -e .`, which fails
    there: the command named is the project's own, and running it clears the refusal."""
    import shlex

    if case == "cffi-script":
        tests = {
            "tests/test_scale.py": "from _foo import lib\n\n\ndef test_scale():\n"
            "    assert lib.scale(2) in (4, 6)\n"
        }
        repo = cffi_project(tmp_path, tests, "edited")
        (repo / "pyproject.toml").unlink()  # settings of tools only, or none: no project
        (repo / "pytest.ini").write_text("[pytest]\ntestpaths = tests\npythonpath = .\n")
        commit_all(repo, "pytest.ini")
        env, expected = subprocess_env(), "python build_foo.py"
    else:
        repo, source, built, _ = library_project(tmp_path, "> 0", "__pycache__/\n*.so\n")
        (repo / "Makefile").write_text(
            "native/libanswer.so: native/answer.c\n\tcc -shared -fPIC -o $@ $<\n"
        )
        commit_all(repo, "Makefile")
        edited_after(built, source, LIB_C.replace("42", "41"))
        past = time.time_ns() - 60 * 10**9  # built a minute ago, edited a second later
        os.utime(built, ns=(past, past))
        os.utime(source, ns=(past + 10**9, past + 10**9))
        env, expected = subprocess_env(PYTHONPATH=str(repo / "src")), "make"
    restamp.begin(open_checkout(repo))
    proc = run_pytest(repo, env=env)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    flags = [f for f in audit_of(repo).flags if f.kind == audit.STALE_EXT]
    assert len(flags) == 1, flags
    named = flags[0].detail.rpartition("(")[2].rstrip(")")
    assert named == expected, flags[0].detail
    argv = shlex.split(named)
    argv[0] = sys.executable if argv[0] == "python" else argv[0]
    rebuilt = subprocess.run(argv, cwd=repo, env=env, capture_output=True, text=True)
    assert rebuilt.returncode == 0, rebuilt.stdout + rebuilt.stderr
    proc = run_pytest(repo, env=env)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert [f for f in audit_of(repo).flags if f.kind == audit.STALE_EXT] == []


@pytest.mark.parametrize(
    ("files", "module", "expected"),
    [
        ({"setup.py": "", "Makefile": ""}, True, audit.SETUP_PY_REBUILD),
        ({"setup.py": "", "Makefile": ""}, False, "make"),
        ({"pyproject.toml": "[build-system]\nrequires = []\n"}, True, "pip install -e ."),
        ({"pyproject.toml": "[project]\nname = 'x'\n"}, False, "pip install -e ."),
        ({"pyproject.toml": "[tool.ruff]\n", "build_foo.py": ""}, True, "python build_foo.py"),
        ({"pyproject.toml": "[tool.ruff]\n", "GNUmakefile": ""}, True, "make"),
        ({"pyproject.toml": "[tool.ruff]\n"}, True, None),
        ({}, False, None),
    ],
    ids=[
        "setup.py",
        "library-beside-a-makefile",
        "build-system",
        "project",
        "cffi-script",
        "makefile",
        "tool-settings-only",
        "nothing",
    ],
)
def test_the_rebuild_named_is_chosen_from_what_the_project_holds(
    tmp_path: Path, files: dict[str, str], module: bool, expected: str | None
) -> None:
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    builders = {"_foo": [str(tmp_path / "build_foo.py")]} if "build_foo.py" in files else {}
    named = audit.rebuild_command(tmp_path, str(tmp_path / "_foo.so"), builders, module=module)
    if expected is None:  # words, not a command pip or make would fail to run
        assert named.startswith("with the build that made it"), named
    else:
        assert named == expected


@pytest.mark.e2e
@pytest.mark.parametrize(
    "case", ["from-this-checkout", "source-edited-since", "from-another-clone"]
)
def test_installed_extension(tmp_path: Path, case: str) -> None:
    """`pip install .` (not -e) builds the extension into site-packages: installed from this
    checkout (the installer's PEP 610 record says so) it is the checkout's own, current unless a
    native source changed since; installed from another clone it is foreign, however alike."""
    import shutil

    if shutil.which("gcc") is None and shutil.which("cc") is None:
        pytest.skip("no C compiler")
    repo, _ = project(
        tmp_path,
        "from calc import _a\n\n\ndef test_value():\n    assert _a.VALUE == 1\n",
        {
            "setup.py": SETUP_PY,
            "src/calc/a.c": ext_c("_a", 1),
            "src/calc/b.c": ext_c("_b", 1),
            ".gitignore": "__pycache__/\n*.so\nbuild/\n*.egg-info/\n",
        },
    )
    python = installed_from(repo, "", tmp_path, twin=case == "from-another-clone")
    if case == "source-edited-since":
        edited = repo / "src" / "calc" / "b.c"
        edited.write_text(ext_c("_b", 1) + "/* edited */\n")
        commit_all(repo, "edited after the install")
    restamp.begin(open_checkout(repo))
    succeeds([str(python), "-m", "pytest", "-q"], repo)
    kinds = [(f.kind, f.module) for f in audit_of(repo).flags]
    if case == "from-this-checkout":
        assert kinds == []
        assert failures(repo) == {}
    elif case == "source-edited-since":
        assert kinds == [(audit.STALE_EXT, "calc._a")]
        assert "older than src/calc/b.c" in audit_of(repo).flags[0].detail
        assert "pip install ." in audit_of(repo).flags[0].detail
    else:
        assert kinds == [(audit.FOREIGN, "calc._a")]


SUBPROJECT_SETUP_PY = """\
from setuptools import Extension, setup

setup(
    name="cx",
    package_dir={"": "src"},
    packages=["cx"],
    ext_modules=[Extension("cx._speed", ["src/cx/speed.c"])],
)
"""


@pytest.mark.e2e
@pytest.mark.parametrize("case", ["from-this-checkout", "from-another-clone"])
def test_an_installed_extension_of_a_project_below_the_top(tmp_path: Path, case: str) -> None:
    """`pip install ./libs/cx` builds the project's extension into site-packages: installed
    from a folder of this checkout (the PEP 610 record names it) it is the checkout's own, as
    `pip install .` of the top project is; from another clone it is foreign."""
    import shutil

    if shutil.which("gcc") is None and shutil.which("cc") is None:
        pytest.skip("no C compiler")
    repo = committed(
        tmp_path / "repo",
        {
            "libs/cx/setup.py": SUBPROJECT_SETUP_PY,
            "libs/cx/src/cx/__init__.py": "",
            "libs/cx/src/cx/speed.c": ext_c("_speed", 1),
            "tests/test_cx.py": "from cx import _speed\n\n\ndef test_value():\n"
            "    assert _speed.VALUE == 1\n",
            "pyproject.toml": '[tool.pytest.ini_options]\ntestpaths = ["tests"]\n',
            ".gitignore": "__pycache__/\n*.so\nbuild/\n*.egg-info/\n",
        },
    )
    python = installed_from(repo, "libs/cx", tmp_path, twin=case == "from-another-clone")
    restamp.begin(open_checkout(repo))
    succeeds([str(python), "-m", "pytest", "-q"], repo)
    said = failures(repo)
    if case == "from-this-checkout":
        assert said == {}, said
    else:
        assert list(said) == ["foreign-origin"], said


def installed_from(repo: Path, folder: str, tmp_path: Path, *, twin: bool) -> Path:
    """`pip install ./FOLDER` (not -e) of ``repo``, or of a clone of it (``twin``), into a new
    virtual environment: its python."""
    from test_audit import make_venv

    source = repo
    if twin:
        source = tmp_path / "twin"
        git(tmp_path, "clone", "-q", str(repo), str(source))
    python, _ = make_venv(tmp_path / "venv")
    pip = [sys.executable, "-m", "pip", "--python", str(python), "install", "-q", "--no-deps"]
    target = source / folder if folder else source
    succeeds([*pip, "--no-build-isolation", "--no-index", str(target)], tmp_path)
    return python


def succeeds(argv: list[str], cwd: Path, *, bytecode: bool = False) -> None:
    env = subprocess_env(bytecode=bytecode)
    proc = subprocess.run(argv, cwd=cwd, capture_output=True, text=True, env=env, timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr


EDITABLE_PYPROJECT = """\
[project]
name = "flat"
version = "0"

[build-system]
requires = ["setuptools>=70.1"]
build-backend = "setuptools.build_meta"

[tool.setuptools]
packages = ["flat"]
"""
FLAT_TEST = """\
import subprocess, sys


def test_here():
    import flat
    assert flat.VALUE == "bbbb"


def test_child():
    out = subprocess.run(
        [sys.executable, "-c", "import flat; print(flat.VALUE)"],
        capture_output=True, text=True, cwd="/", check=True,
    ).stdout
    assert out.strip() == "bbbb"
"""


@pytest.mark.e2e
@pytest.mark.parametrize("case", ["stale-pycache", "control"])
def test_an_editable_finder_never_runs_stale_bytecode(tmp_path: Path, case: str) -> None:
    """A flat-layout project installed with `pip install -e .` is imported through setuptools'
    editable finder, not a path entry: its modules still load through the import guard, in the
    test process and in a child, so a pycache of an edit that kept size and mtime never runs."""
    from test_audit import make_venv, same_size_same_mtime

    files = {
        "flat/__init__.py": 'VALUE = "aaaa"\n',
        "tests/test_flat.py": FLAT_TEST,
        "pyproject.toml": EDITABLE_PYPROJECT,
        ".gitignore": "__pycache__/\n*.egg-info/\nbuild/\n",
    }
    repo = committed(tmp_path / "work", files, "flat")
    python, _ = make_venv(tmp_path / "venv")
    pip = [sys.executable, "-m", "pip", "--python", str(python), "install", "-q", "--no-deps"]
    succeeds([*pip, "--no-build-isolation", "--no-index", "-e", str(repo)], tmp_path)
    restamp.begin(open_checkout(repo))
    source = repo / "flat" / "__init__.py"
    if case == "stale-pycache":  # CPython's own pyc of the old content, trusted by mtime and size
        env = subprocess_env(bytecode=True)
        subprocess.run([str(python), "-c", "import flat"], cwd="/", env=env, check=True)
        assert list((repo / "flat" / "__pycache__").glob("__init__.*.pyc"))
        same_size_same_mtime(source, 'VALUE = "bbbb"\n')
    else:
        source.write_text('VALUE = "bbbb"\n')
    commit_all(repo, "bbbb")
    succeeds([str(python), "-m", "pytest", "-q"], repo, bytecode=True)
    assert failures(repo) == {}


@pytest.mark.e2e
@pytest.mark.parametrize("case", ["fresh-clone", "header-edited-here"])
def test_a_committed_extension_is_the_trees_own(tmp_path: Path, case: str) -> None:
    """A prebuilt extension committed with its sources: a fresh clone writes files in path
    order, so a header may be newer than the binary built from it; all of them as HEAD holds
    them, the binary is the tree's own. A header edited here after the checkout is not."""
    repo, _ = project(
        tmp_path,
        "import calc._speed\n\n\ndef test_speed():\n    assert calc._speed\n",
        {"src/calc/_speed.c": SPEED_C, "zsrc/speed.h": "#define SPEED 1\n"},
    )
    built = build_extension(repo / "src" / "calc")
    commit_all(repo, "the prebuilt extension")
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", str(repo), str(clone))
    header = clone / "zsrc" / "speed.h"
    if case == "header-edited-here":
        header.write_text("#define SPEED 2\n")
    st = (clone / "src" / "calc" / built.name).stat()
    os.utime(header, ns=(st.st_atime_ns, st.st_mtime_ns + 10**8))  # written after the binary
    restamp.begin(open_checkout(clone))
    proc = run_pytest(clone, env=subprocess_env(PYTHONPATH=str(clone / "src")))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    flags = [f for f in audit_of(clone).flags if f.kind == audit.STALE_EXT]
    if case == "fresh-clone":
        assert flags == []
        return
    assert [f.module for f in flags] == ["calc._speed"]
    assert "zsrc/speed.h" in flags[0].detail


@pytest.mark.e2e
def test_a_header_of_a_submodule_is_a_native_source(tmp_path: Path) -> None:
    """A header a submodule provides, changed after the extension was built: stale."""
    lib = init_repo(tmp_path / "lib")
    (lib / "speed.h").write_text("#define SPEED 1\n")
    commit_all(lib, "header")
    repo, _ = project(
        tmp_path,
        "import calc._speed\n\n\ndef test_speed():\n    assert calc._speed\n",
        {"src/calc/_speed.c": SPEED_C, ".gitignore": "__pycache__/\n*.so\n"},
    )
    git(repo, "-c", "protocol.file.allow=always", "submodule", "add", "-q", str(lib), "vendor")
    commit_all(repo, "the vendored header")
    built = build_extension(repo / "src" / "calc")
    restamp.begin(open_checkout(repo))
    header = repo / "vendor" / "speed.h"
    header.write_text("#define SPEED 2\n")
    st = built.stat()
    os.utime(header, ns=(st.st_atime_ns, st.st_mtime_ns + 10**9))
    for folder, message in ((repo / "vendor", "header 2"), (repo, "the submodule moves")):
        commit_all(folder, message)
    restamp.begin(open_checkout(repo))
    proc = run_pytest(repo, env=subprocess_env(PYTHONPATH=str(repo / "src")))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    flags = [f for f in audit_of(repo).flags if f.kind == audit.STALE_EXT]
    assert [f.module for f in flags] == ["calc._speed"]
    assert "vendor/speed.h" in flags[0].detail


def test_a_killed_runs_pth_and_folder_are_removed_by_the_next(tmp_path: Path) -> None:
    """A run killed before its end (a CI timeout) leaves its ``.pth`` and its folder in the
    temporary folder: the next run removes both; a live run's stay."""
    import tempfile

    site = tmp_path / "site-packages"
    site.mkdir()
    made = []
    for pid in (2**22 + 12345, os.getpid()):  # a pid no process has; this very process
        folder = Path(tempfile.mkdtemp(prefix=child.RUN_FOLDER_PREFIX))
        (folder / loads.RUN_FILE).write_text("")
        pth = site / f"{child.PTH_PREFIX}{pid}-{loads.started(pid) or 0}-{folder.name}.pth"
        pth.write_text("")
        made.append((folder, pth))
    try:
        child.remove_leftovers(site)
        (dead_folder, dead_pth), (live_folder, live_pth) = made
        assert not dead_pth.exists() and not dead_folder.exists()
        assert live_pth.exists() and live_folder.exists()
    finally:
        for folder, _ in made:
            shutil.rmtree(folder, ignore_errors=True)


def test_the_hook_goes_where_site_reads_pth_files() -> None:
    """The folder the start-up hook is written to is one whose ``.pth`` files this interpreter
    reads (``site``'s list), and the one sysconfig names for installs."""
    import site
    import sysconfig

    from genstamp import child

    folder = child.site_packages()
    assert folder in site.getsitepackages()
    assert os.path.samefile(folder, sysconfig.get_path("purelib"))


COPIED_EXTENSION_TEST = """\
import os, shutil, sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_a_copy(tmp_path):
    for built in ROOT.glob("_foo.*.so"):
        shutil.copy(built, tmp_path / built.name)  # a new file: its time is now
    sys.path.insert(0, str(tmp_path))
    try:
        from _foo import lib
        assert lib.scale(2) in (4, 6)
    finally:
        sys.path.remove(str(tmp_path))
"""


@pytest.mark.e2e
@pytest.mark.parametrize("case", ["fresh", "edited"])
def test_an_extension_the_tests_copy_is_judged_by_its_sources(tmp_path: Path, case: str) -> None:
    """A test copies the checkout's built extension into its temporary folder and imports it
    there: made during the run, it is judged by the age of its sources, as it would be in
    the tree (a copy's time is new; its build is not). The control: a fresh build, accepted."""
    repo = cffi_project(tmp_path, {"tests/test_copy.py": COPIED_EXTENSION_TEST}, case)
    restamp.begin(open_checkout(repo))
    proc = run_pytest(repo)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    said = failures(repo)
    if case == "fresh":
        assert said == {}, said
    else:
        assert list(said) == ["stale-extension"] and "build_foo.py" in said["stale-extension"]


STRANGER_TEST = """
import os, subprocess, sys

def test_cli():
    # this run's genstamp on the path too, after the one found first
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([{first!r}, {top!r}, "src"]))
    code = "import calc, sys; print(calc.VALUE); print(sys.path)"
    out = subprocess.run([sys.executable, "-c", code],
                         env=env, capture_output=True, text=True, check=True).stdout
    assert out.splitlines()[0] == "1", out
    # the run's start-up line leaves the child's import path as it was
    alone = subprocess.run([sys.executable, "-c", code], env=dict(env, GENSTAMP_RUN=""),
                           capture_output=True, text=True, check=True).stdout
    assert out == alone, (out, alone)
"""


@pytest.mark.e2e
@pytest.mark.parametrize("first", ["another-genstamp", "no-recorder", "this-genstamp"])
def test_a_child_that_finds_another_genstamp_first_is_noted(tmp_path: Path, first: str) -> None:
    """A child given an import path with another genstamp first (an old copy, a vendored one
    without the recorder) runs unobserved by this run: the audit says so, and names the process,
    where before it passed in silence. The same genstamp reached by another path says nothing."""
    here = Path(loads.__file__).parent
    if first == "this-genstamp":
        where = tmp_path / "link"
        where.symlink_to(here.parent)  # this run's own genstamp, under another name
    else:
        where = tmp_path / first
        (where / "genstamp").mkdir(parents=True)
        (where / "genstamp" / "__init__.py").write_text("")
        if first == "another-genstamp":
            (where / "genstamp" / "loads.py").write_text("def start(folders=None):\n    pass\n")
    repo, _ = project(tmp_path, STRANGER_TEST.format(first=str(where), top=str(here.parent)))
    proc = run_pytest(repo, "-p", "no:cacheprovider", env=subprocess_env())
    assert proc.returncode == 0, proc.stdout + proc.stderr
    notes = [n for n in audit_of(repo).notes if "was not followed" in n]
    if first == "this-genstamp":
        assert notes == [], notes
        return
    assert len(notes) == 1, notes
    assert str(here) in notes[0]
    detail = (
        f"imported genstamp from {where / 'genstamp'}"
        if first == "another-genstamp"
        else ("failed: ModuleNotFoundError")
    )
    assert detail in notes[0], notes[0]
    assert f"genstamp: {notes[0]}" in proc.stdout


LATER_PTH_TEST = """
import os, subprocess, sys

def test_cli():
    env = dict(os.environ, PYTHONPATH={where!r})
    out = subprocess.run([sys.executable, "-c", "import calc; print(calc.VALUE)"],
                         env=env, capture_output=True, text=True, check=True).stdout
    assert out.strip() in ("1", "2"), out
"""


@pytest.mark.e2e
@pytest.mark.parametrize("foreign", [True, False], ids=["other-clone", "control"])
def test_a_child_that_reaches_genstamp_only_through_a_later_pth_is_followed(
    tmp_path: Path, foreign: bool
) -> None:
    """An environment that reaches genstamp (and pytest) only through a ``.pth`` that site
    reads after the run's own (``tools.pth`` naming their folders): a child does not find
    genstamp when the run's line runs, and was left unobserved (a note), so a module of
    another clone it imported went unseen. It imports the run's genstamp from where it lies
    and is followed as any child is."""
    repo, other = project(tmp_path, "")
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    site = next((venv / "lib").glob("python3*/site-packages"))
    reach = [str(Path(loads.__file__).parents[1])]
    reach += [p for p in sys.path if p.endswith("-packages")]  # pytest, pygit2
    (site / "tools.pth").write_text("\n".join(reach) + "\n")
    where = (other if foreign else repo) / "src"
    (repo / "tests" / "test_it.py").write_text(LATER_PTH_TEST.format(where=str(where)))
    commit_all(repo, "test")
    restamp.begin(open_checkout(repo))
    proc = subprocess.run(
        [str(venv / "bin" / "python"), "-m", "pytest", "-q", "-p", "no:cacheprovider"],
        cwd=repo,
        env=subprocess_env(),
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    found = audit_of(repo)
    assert [n for n in found.notes if "was not followed" in n] == [], found.notes
    modules = [f.module for f in found.flags if f.kind == audit.FOREIGN]
    if foreign:
        assert "calc" in modules, found
    else:
        assert modules == [] and "src/calc/__init__.py" in found.loaded, found


# EDITABLE_PYPROJECT's project, named proj, whose package is ``old``
OLD_PYPROJECT = (
    EDITABLE_PYPROJECT.replace('"flat"', '"proj"', 1).replace('["flat"]', '["old"]')
    + '\n[tool.pytest.ini_options]\ntestpaths = ["tests"]\n'
)


@pytest.mark.e2e
@pytest.mark.parametrize("case", ["an-export-of-it", "this-tree"])
def test_an_editable_install_of_another_copy_serves_no_module_the_tree_dropped(
    tmp_path: Path, case: str
) -> None:
    """`pip install -e` of a copy of the project without .git (`git archive`, a CI cache),
    then the package renamed in the tree with one import of the old name left behind: the
    copy still provides it, warm green, and a clean clone fails at import. Its code is the
    copy's, judged as a module the tree dropped. Control: the editable install of this tree."""
    from test_audit import make_venv

    files = {
        "old/__init__.py": "def f():\n    return 1\n",
        "tests/test_f.py": "from old import f\n\n\ndef test_f():\n    assert f() == 1\n",
        "pyproject.toml": OLD_PYPROJECT,
        ".gitignore": "__pycache__/\n*.egg-info/\nbuild/\n",
    }
    repo = committed(tmp_path / "work", files, "v1")
    python, _ = make_venv(tmp_path / "venv")
    pip = [sys.executable, "-m", "pip", "--python", str(python), "install", "-q", "--no-deps"]
    if case == "an-export-of-it":
        export = tmp_path / "export"
        export.mkdir()
        archive = subprocess.run(["git", "archive", "HEAD"], cwd=repo, capture_output=True)
        subprocess.run(["tar", "-x", "-C", str(export)], input=archive.stdout, check=True)
        succeeds([*pip, "--no-build-isolation", "--no-index", "-e", str(export)], tmp_path)
        git(repo, "mv", "old", "new")
        (repo / "pyproject.toml").write_text(OLD_PYPROJECT.replace('["old"]', '["new"]'))
        (repo / "new" / "compat.py").write_text("from old import f as g  # left behind\n")
        (repo / "tests" / "test_f.py").write_text(
            "from new import f\nfrom new.compat import g\n\n\ndef test_f():\n"
            "    assert f() == g() == 1\n"
        )
        commit_all(repo, "old is new now")
    else:
        succeeds([*pip, "--no-build-isolation", "--no-index", "-e", str(repo)], tmp_path)
    restamp.begin(open_checkout(repo))
    succeeds([str(python), "-m", "pytest", "-q"], repo)  # green warm, either way
    found = failures(repo)
    if case == "this-tree":
        assert found == {}, found
        return
    assert "foreign-origin" in found and "old" in found["foreign-origin"], found


EARLY_PTH_TEST = """\
import os, subprocess, sys


def test_child():
    env = dict(os.environ, PYTHONPATH={where!r}, CALC_EARLY="1")
    subprocess.run([sys.executable, "-c", "pass"], env=env, check=True)
"""


@pytest.mark.e2e
@pytest.mark.parametrize("foreign", [True, False], ids=["other-clone", "control"])
def test_a_pth_read_before_the_runs_own_loads_nothing_unseen(tmp_path: Path, foreign: bool) -> None:
    """site reads a folder's ``.pth`` files in the order of their names: one named to come
    early (``calc_early.pth``, as coverage's ``a1_coverage.pth``) that imports the project in
    a child, here from another clone, runs after the run's own hook, which follows the
    process first, so the load is judged (T24 01)."""
    from test_audit import make_venv

    repo, other = project(tmp_path, "")
    python, site_dir = make_venv(tmp_path / "venv")
    early = "import os; os.environ.get('CALC_EARLY') and __import__('calc')\n"
    (site_dir / "calc_early.pth").write_text(early)
    where = str(other / "src") if foreign else str(repo / "src")
    (repo / "tests" / "test_it.py").write_text(EARLY_PTH_TEST.format(where=where))
    commit_all(repo, "test")
    restamp.begin(open_checkout(repo))
    succeeds([str(python), "-m", "pytest", "-q"], repo)
    flagged = [(f.kind, f.module) for f in audit_of(repo).flags]
    assert flagged == ([(audit.FOREIGN, "calc")] if foreign else [])
    assert ("foreign-origin" in failures(repo)) is foreign


@pytest.mark.e2e
def test_a_leftover_genstamp_folder_does_not_keep_a_child_unfollowed(tmp_path: Path) -> None:
    """An uninstalled genstamp can leave `site-packages/genstamp/__pycache__` behind: read
    before the folder that holds this genstamp is on the path, the run's `.pth` imports that
    folder as a namespace package first. It still imports this genstamp, so a child is
    followed (here it loads another clone's calc, which the run flags) and an xdist worker,
    which imports the plugin through that package, starts (the CI run of 1e69647 crashed
    them all)."""
    from test_audit import make_venv

    repo, other = project(tmp_path, "")
    python, site_dir = make_venv(tmp_path / "venv")
    (site_dir / "genstamp" / "__pycache__").mkdir(parents=True)
    (repo / "tests" / "test_it.py").write_text(EARLY_PTH_TEST.format(where=str(other / "src")))
    (site_dir / "calc_early.pth").write_text(
        "import os; os.environ.get('CALC_EARLY') and __import__('calc')\n"
    )
    commit_all(repo, "test")
    restamp.begin(open_checkout(repo))
    succeeds([str(python), "-m", "pytest", "-q", "-p", "xdist", "-n", "2"], repo)
    flagged = [(f.kind, f.module) for f in audit_of(repo).flags]
    assert flagged == [(audit.FOREIGN, "calc")]


@pytest.mark.parametrize("written", ["before-the-process", "after-the-process"])
def test_a_leftover_of_the_first_name_is_removed_once_its_pid_is_anothers(
    tmp_path: Path, written: str
) -> None:
    """The first `.pth` name held no start time (`genstamp-run-<pid>-<folder>.pth`): when its pid
    is a process that started after the file was written, the run is gone and its line would
    raise in every followed child (X24 13); written after that process started, it stands."""
    site = tmp_path / "site"
    site.mkdir()
    other = subprocess.Popen(["sleep", "30"])
    try:
        leftover = site / f"genstamp-run-{other.pid}-genstamp-run-old.pth"
        leftover.write_text("import os\n")
        now = time.time()
        when = now - 3600 if written == "before-the-process" else now + 3600
        os.utime(leftover, (when, when))
        child.remove_leftovers(site)
        assert leftover.exists() is (written == "after-the-process")
    finally:
        other.kill()
        other.wait()


@pytest.mark.parametrize(
    ("parent", "variable", "older_loads"),
    [
        ("the-test-process", False, ""),  # no follow
        ("another", False, ""),
        ("a-grandchild", False, ""),  # through a shell: it descends from the test process
        # started with the variable, a copy whose follow records and notes nothing
        ("the-test-process", True, "def follow(*args):\n    pass\n"),
    ],
)
def test_a_child_that_finds_another_genstamp_is_noted(
    tmp_path: Path, parent: str, variable: bool, older_loads: str
) -> None:
    """A child (given an environment of its own, or started with the variable) imports, at
    the run's line, a genstamp without the recorder (an older copy installed in the
    environment): the run cannot vouch for what it loaded, and says so when the child is a
    process of the run (the test process's own, X24 15; or its descendant through a shell),
    whatever that copy does."""
    folder = tmp_path / "run"
    folder.mkdir()
    (folder / loads.RUN_FILE).write_text("")
    older = tmp_path / "older" / "genstamp"
    older.mkdir(parents=True)
    (older / "__init__.py").write_text("")
    (older / "loads.py").write_text(older_loads)
    stranger = subprocess.Popen(["sleep", "60"])  # alive, and no ancestor of the child
    try:
        owner = stranger.pid if parent == "another" else os.getpid()
        line = child.pth_line(owner, "", str(folder))
        env = {"PATH": os.environ["PATH"], "PYTHONPATH": str(older.parent)}
        if variable:
            env["GENSTAMP_RUN"] = str(folder)
        argv = [sys.executable, "-S", "-c", f"import sys\n{line}"]
        if parent == "a-grandchild":
            argv = ["sh", "-c", shlex.join(argv)]
        subprocess.run(argv, env=env, check=True)
    finally:
        stranger.kill()
        stranger.wait()
    noted = folder / child.STRANGERS
    if parent == "another":
        assert not noted.exists()
        return
    assert str(older) in noted.read_text(), noted.read_text()


TOOL_TEST = """
import subprocess, sys

def test_tool():
    out = subprocess.run(
        [sys.executable, "scripts/tool.py", "2", "3"], capture_output=True, text=True
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "= 5"
"""


@pytest.mark.e2e
def test_a_child_whose_script_folder_names_a_standard_module(tmp_path: Path) -> None:
    """`python scripts/tool.py`, where scripts/ holds operator.py: sys.path[0] is scripts/.
    The first run (no bytecode cached) compiled fmt.py and imported tempfile to write its
    cache, which went through the child's sys.path: collections took the project's
    operator.py, and the child died where it runs without genstamp."""
    repo, _ = project(
        tmp_path,
        "",
        {
            "scripts/operator.py": 'SYMBOLS = {"+": "add"}\n',
            "scripts/fmt.py": 'def show(n):\n    return f"= {n}"\n',
            "scripts/tool.py": "import sys\nimport fmt\n\n"
            "print(fmt.show(int(sys.argv[1]) + int(sys.argv[2])))\n",
        },
    )
    scenario(repo, TOOL_TEST, PYTHONDONTWRITEBYTECODE="")
    assert failures(repo) == {}
