"""Following a run into the Python processes its tests start: both sides of the protocol.

The parent (the pytest plugin) writes a ``.pth`` file into the running interpreter's
site-packages, named for the run, and sets ``GENSTAMP_RUN`` to the run's folder. Every Python
process started with that interpreter reads the ``.pth`` at start-up. Its one line calls
``loads.follow`` (the child's side, kept in that light module: it runs in every such process at
start-up), which starts recording when the variable names runs: the process then imports the
checkout through the same loader (never a stale ``__pycache__``) and appends its loads to the
run's log (``loads``). A process started without the variable (a test gave its child an
environment of its own) is adopted (``loads.adopt``): followed all the same when it descends
from the process that opened the run.
The variable set but empty opts a process out (genstamp's own co-process). The parent removes
the ``.pth`` when the run ends; a leftover of a killed run is inert (its process is gone, or
its pid is another process's now) and the next run removes it. coverage's own ``.pth``
(``COVERAGE_PROCESS_START``) is left alone.
"""

from __future__ import annotations

import ast
import atexit
import contextlib
import os
import sys
from pathlib import Path
from types import ModuleType

from genstamp import loads
from genstamp.typedtuple import NamedTuple

# site reads a folder's .pth files in the order of their names, and one may import code (a
# project that `calc_early.pth` imports, as coverage's `a1_coverage.pth` starts coverage):
# the run's own sorts before any usual name ('!' comes before digits, letters, '_' and '-'),
# so that the process is followed before such code loads.
PTH_PREFIX = "!genstamp-run-"
# the name an earlier genstamp gave it: another environment's genstamp may still write it
PTH_PREFIXES = (PTH_PREFIX, "genstamp-run-")
RUN_FOLDER_PREFIX = "genstamp-run-"  # a run's folder (the load log), in the temporary folder


def pth_line(owner: int, started: str, folder: str) -> str:
    """The ``.pth`` line of the run in ``folder`` opened by process ``owner`` (which started at
    ``started``: ``loads.started``). It never raises (site would print the error in every
    process of the interpreter: a leftover of a run whose genstamp is gone, or another
    version's), imports nothing in a process that is not followed (one started without the
    variable that does not descend from ``owner``, where ``/proc`` tells it; any, when the
    run's folder is gone), compiles nothing more than itself in a process started with the
    variable empty, and
    is ASCII only (site reads it in the locale's encoding). What a followed process does is
    ``loads.follow``'s: the line only imports it, with the folder this genstamp lies in at
    the end of the path for the import alone (the process's path may not reach genstamp yet:
    a ``.pth`` that site reads after this one names it, as an editable install's does, or only
    the parent's ``PYTHONPATH`` did; a genstamp earlier on the path comes first, and a regular
    package comes before a namespace one, such as a leftover ``genstamp/__pycache__`` of an
    uninstalled genstamp makes: one search, where a first attempt without the folder cost a
    followed child a search of its whole path), and when that fails, or finds a genstamp
    without it, says so in the run's folder (``STRANGERS``): the run cannot vouch for what
    such a process loaded."""
    run_file = os.path.join(folder, loads.RUN_FILE)
    home = os.path.dirname(os.path.abspath(loads.__file__))
    top = os.path.dirname(home)  # where this genstamp is imported from
    strangers = os.path.join(folder, STRANGERS)
    # compiled in every followed process at start-up: kept short (its size is its cost)
    code = (
        "try:\n"
        " w = x = None\n"
        " try:\n"
        f"  a = {top!a} not in sys.path\n"
        f"  if a: sys.path.append({top!a})\n"
        "  try:\n"
        "   import genstamp.loads as m\n"
        "  finally:\n"
        f"   if a: sys.path.remove({top!a})\n"
        "  w = os.path.dirname(m.__file__)\n"
        # another copy of genstamp found first: noted here, whatever that copy's follow does
        f"  if w != {home!a} and not os.path.samefile(w, {home!a}): x = w\n"
        f"  m.follow({owner}, {started!a}, {folder!a}, {home!a})\n"
        " except Exception as e:\n"
        "  x = w or '!' + repr(e)\n"
        # noted by a process the run follows: one started with the variable naming the run, or
        # one without it that the look at /proc found descending from the run's process (d)
        f" if x and (r and {folder!a} in r.split(os.pathsep) or r is None and d):\n"
        f"  with open({strangers!a}, 'a') as h:\n"
        "   h.write('%d %a\\n' % (os.getpid(), x))\n"
        "except Exception:\n"
        " pass\n"
    )
    # Started without the variable: a process of the run only if it descends from ``owner``
    # (``loads.adopt`` decides, by its start time too). This cheap look at /proc first spares
    # every other process of the interpreter (another terminal's, an editor's) the import
    # while a run is open; where /proc cannot tell, the import decides.
    adopt = (
        "d = 1\n"
        "try:\n"
        " p = os.getppid()\n"
        " for _ in range(64):\n"
        f"  if p == {owner} or p <= 1: break\n"
        "  with open('/proc/%d/stat' % p, 'rb') as h:\n"
        "   p = int(h.read().rpartition(b')')[2].split()[1])\n"
        f" d = p == {owner}\n"
        "except Exception:\n"
        " pass\n"
    )
    # site reads a virtual environment's site-packages twice (``site.venv``, then
    # ``site.main``), and runs each line both times: the second finds the run followed
    # already (``loads.follow`` notes its folder first) and compiles nothing more
    return (
        "import os, sys; r = os.environ.get('GENSTAMP_RUN');"
        f" {folder!a} not in getattr(sys.modules.get('genstamp.loads'), 'OWNERS', ())"
        f" and (r or r is None and os.path.isfile({run_file!a}) and not exec({adopt!a}) and d)"
        f" and exec({code!a})\n"
    )


STRANGERS = loads.STRANGERS  # in a run's folder: the processes that found another genstamp


def strangers(folder: str) -> list[str]:
    """What the run's processes that found another genstamp first (``pth_line``) leave
    unobserved, one note each (at most a few, then how many more)."""
    try:
        with open(os.path.join(folder, STRANGERS), encoding="ascii", errors="replace") as fh:
            lines = fh.read().splitlines()
    except OSError:
        return []
    home = os.path.dirname(os.path.abspath(loads.__file__))
    notes = []
    for line in dict.fromkeys(lines):  # (the line's note, and an older copy's follow's)
        pid, _, found = line.partition(" ")
        try:
            where = ast.literal_eval(found)
        except (ValueError, SyntaxError):
            continue
        if not isinstance(where, str):
            continue
        failed = where.startswith("!")  # the import's error, not where it found genstamp
        found = f"failed: {where[1:]}" if failed else f"imported genstamp from {where}"
        notes.append(
            f"a process the tests started (pid {pid}) was not followed by this run's genstamp"
            f" ({home}): its import {found}; what it loaded may be missing from the audit"
            " (put this genstamp first on its import path)"
        )
    if len(notes) > 3:
        notes[3:] = [f"and {len(notes) - 3} more such processes"]
    return notes


class Hook(NamedTuple):
    """The start-up hook a run installed: its ``.pth`` (None when it could not be written, and
    ``problem`` says why)."""

    pth: Path | None
    problem: str | None


def install(run_folder: str) -> Hook:
    """Write this run's ``.pth`` into site-packages, removing the leftovers of dead runs."""
    site = site_packages()
    if not site:
        return Hook(None, "this interpreter has no site-packages")
    remove_leftovers(Path(site))
    pid = os.getpid()
    started = loads.started(pid)
    name = f"{PTH_PREFIX}{pid}-{started or 0}-{os.path.basename(run_folder)}.pth"
    path = Path(site, name)
    try:
        path.write_text(pth_line(pid, started, run_folder), encoding="utf-8")
    except OSError as exc:
        return Hook(None, f"cannot write {path}: {exc.strerror or exc}")
    return Hook(path, None)


def site_packages() -> str:
    """The first folder whose ``.pth`` files this interpreter reads at start-up: ``site``'s own
    list (importing ``sysconfig`` to ask it costs each run about 1.5 ms), else sysconfig's
    ``purelib``; "" when there is none."""
    import site

    try:
        folders = site.getsitepackages()
    except AttributeError:  # an old virtualenv's own site module
        folders = []
    found = next((f for f in folders if os.path.isdir(f)), None)
    if found is not None:
        return found
    import sysconfig

    return sysconfig.get_path("purelib") or ""


def uninstall(hook: Hook) -> None:
    if hook.pth is not None:
        with contextlib.suppress(OSError):
            hook.pth.unlink()


def remove_leftovers(site: Path) -> None:
    """The ``.pth`` files of runs whose process is gone (its pid free, or another process's
    now: one that started at another time), and those runs' folders (a killed run's load
    log), where they are in the temporary folder this process has too."""
    import shutil
    import tempfile

    with contextlib.suppress(OSError):
        for pth in site.glob("*genstamp-run-*.pth"):
            prefix = next((p for p in PTH_PREFIXES if pth.name.startswith(p)), None)
            if prefix is None:
                continue
            pid, _, rest = pth.name[len(prefix) :].partition("-")
            started, _, folder = rest.partition("-")
            if not pid.isdigit():
                continue
            if started.isdigit():
                reused = started != "0" and loads.started(int(pid)) != started
            else:  # the first name had no start time: a process started since has its pid
                reused = _started_after(int(pid), pth)
                folder = rest
            if reused or not alive(int(pid)):
                with contextlib.suppress(OSError):
                    pth.unlink()
                name = folder.removesuffix(".pth")
                run = Path(tempfile.gettempdir(), name)
                if name.startswith(RUN_FOLDER_PREFIX) and (run / loads.RUN_FILE).is_file():
                    shutil.rmtree(run, ignore_errors=True)


def abandon(folder: str) -> None:
    """Forget the run in ``folder`` that this very process opened before it replaced its
    program (``os.execv`` of pytest by a conftest, as libfaketime's re-exec does: the pid and
    the environment stay, the run's owner does not): stop recording into it, and remove its
    ``.pth``, its name in ``GENSTAMP_RUN`` and its folder, which nothing else will."""
    import shutil

    loads.deactivate(folder)
    runs = os.environ.get(loads.RUN_ENV)
    if runs is not None:
        kept = [r for r in runs.split(os.pathsep) if r and r != folder]
        if kept:
            os.environ[loads.RUN_ENV] = os.pathsep.join(kept)
        else:
            os.environ.pop(loads.RUN_ENV, None)
    site = site_packages()
    if site:
        with contextlib.suppress(OSError):
            for pth in Path(site).glob(
                f"*genstamp-run-{os.getpid()}-*{os.path.basename(folder)}.pth"
            ):
                pth.unlink()
    if os.path.basename(folder).startswith(RUN_FOLDER_PREFIX):
        shutil.rmtree(folder, ignore_errors=True)


def _started_after(pid: int, path: Path) -> bool:
    """Whether process ``pid`` started after ``path`` was last written (its pid reused since
    a run of an early genstamp, whose ``.pth`` name says no start time, wrote it)."""
    ticks = loads.started(pid)
    try:
        with open("/proc/stat", encoding="ascii") as fh:
            boot = next(int(ln.split()[1]) for ln in fh if ln.startswith("btime "))
        return boot + int(ticks) / os.sysconf("SC_CLK_TCK") > path.stat().st_mtime + 1
    except (OSError, ValueError, StopIteration):
        return False


def alive(pid: int) -> bool:
    """Whether the process ``pid`` is there (another user's too)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True  # another user's process
    return True


class Recording(NamedTuple):
    """A run this process records into; ``owned`` when this process started it (and ends it)."""

    run: loads.Run
    hook: Hook | None
    owned: bool
    env_before: str | None
    # The modules this process already held when it began recording: no hook saw them load.
    earlier: dict[str, ModuleType]
    pid: int = -1  # the process that owns it: a forked child inherits the exit handler too


def open_run(
    workdir: str,
    roots: dict[str, str],
    cache_root: str | None,
    generation_ns: int | None,
    follow: bool = True,
) -> Recording:
    """Start recording a run of the checkout at ``workdir``: in this process, and (``follow``)
    in every Python process started from it. An xdist worker records into its controller's."""
    earlier = dict(sys.modules)
    if os.environ.get("PYTEST_XDIST_WORKER"):
        for run in loads.active():
            if run.workdir == workdir:
                return Recording(run, None, False, None, earlier)
    import tempfile

    folder = tempfile.mkdtemp(prefix=RUN_FOLDER_PREFIX)
    run = loads.Run(folder, workdir, roots, cache_root, generation_ns)
    text = loads.run_text(run)  # (a folder whose path is no UTF-8, as the OS gave it)
    Path(folder, loads.RUN_FILE).write_text(text, encoding="utf-8", errors="surrogateescape")
    Path(folder, loads.LOG_FILE).touch(0o600)
    if os.geteuid() == 0:
        _open_to_other_users(folder)
    loads.activate(run)
    before = os.environ.get(loads.RUN_ENV)
    hook = None
    if follow:
        os.environ[loads.RUN_ENV] = os.pathsep.join(p for p in (folder, before) if p)
        hook = install(folder)
    recording = Recording(run, hook, True, before, earlier, os.getpid())
    # pytest can end before a session (--version, a usage error): nothing may stay behind
    atexit.register(close_run, recording)
    return recording


def _open_to_other_users(folder: str) -> None:
    """A run of root may start processes that drop to another user (``setpriv``, ``runuser``,
    a CI job running its service as an app user): they must read the run's file and append
    to its log, or they go unobserved, and another clone's code they import is accepted. The
    folder lets them pass (not list it), the run's file is readable, and the log takes their
    lines without letting them read it. A run of any other user starts no process of another
    (no interpreter is set-uid): its folder stays its own."""
    os.chmod(folder, 0o711)
    os.chmod(os.path.join(folder, loads.RUN_FILE), 0o644)
    os.chmod(os.path.join(folder, loads.LOG_FILE), 0o622)


def retime(recording: Recording, generation_ns: int) -> Recording:
    """``recording`` judging bytecode by the generation begun at ``generation_ns`` from now on,
    in this process and in every process started from now on."""
    if not recording.owned or recording.run.generation_ns == generation_ns:
        return recording
    old = recording.run
    run = loads.Run(old.folder, old.workdir, old.roots, old.cache_root, generation_ns)
    from genstamp.atomic import write_atomic  # a child may be reading it

    write_atomic(Path(run.folder, loads.RUN_FILE), loads.run_text(run).encode("utf-8"))
    loads.replace(run)
    return recording._replace(run=run)


def close_run(recording: Recording) -> None:
    """Stop recording; remove what the run put in site-packages and the environment."""
    if not recording.owned or recording.pid != os.getpid():
        return  # not ours: another's, or this is a forked child of the process that owns it
    if not os.path.isdir(recording.run.folder):
        return  # closed already (atexit calls it again)
    loads.deactivate(recording.run.folder)
    if recording.hook is not None:
        uninstall(recording.hook)
        if recording.env_before is None:
            os.environ.pop(loads.RUN_ENV, None)
        else:
            os.environ[loads.RUN_ENV] = recording.env_before
    import shutil

    shutil.rmtree(recording.run.folder, ignore_errors=True)
