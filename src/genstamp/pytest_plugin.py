"""The pytest plugin: binds the JUnit evidence to the generation and the tested tree.

Registered through the ``pytest11`` entry point as ``genstamp``; ``-p no:genstamp`` turns it off.
Outside a git work tree it does nothing. It never changes a test outcome or the exit status:
when the evidence cannot be bound it says so in one line.

The hooks here gather; the other modules do the work: ``loader`` guards the checkout's imports,
``trees`` (with ``coprocess``) takes the trees, ``overrides`` reads what the run's options change
in the suite, ``selection`` decides whether the run was partial, ``audit`` says which code ran,
and ``junit``/``evidence`` write the bound report.
"""

from __future__ import annotations

import atexit
import contextlib
import errno
import functools
import importlib.machinery
import json
import os
import posixpath
import re
import sys
import tempfile
import time
import warnings
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any

import pytest


class _OwnModules:
    """A finder for genstamp's own modules, ahead of pytest's assertion rewriting: pytest marks
    every module of a plugin's distribution for rewriting, and its loader reads a cached module
    with ``marshal.load`` on a file, object by object (measured: 12 ms of the plugin's import;
    the import took 26.9 ms through it, 19.9 ms without). genstamp's asserts are not tests.
    It finds what the interpreter's path finder finds (the path hooks included: the import
    guard, when the checkout under test is genstamp's)."""

    @staticmethod
    def find_spec(name: str, path: Sequence[str] | None = None, target: object = None) -> Any:
        if path is None or not name.startswith("genstamp."):
            return None
        return importlib.machinery.PathFinder.find_spec(name, path)


def _leave() -> None:
    """At the process's exit (after ``sys.excepthook`` has seen an exception that ends it, if
    one does): let go of what ``sys`` holds of this module. An object ``sys`` holds to its
    end keeps this module's globals alive, and through them nearly every module of the process,
    which finalisation then wipes one at a time (measured on a 1,000-test suite: 423 modules
    wiped against 55 without the plugin; the finalisation's median, 94.5 ms, fell to 75.0)."""
    sys.meta_path[:] = [f for f in sys.meta_path if not isinstance(f, _OwnModules)]
    if _EXCEPTHOOK:
        hook, previous = _EXCEPTHOOK.pop()
        if sys.excepthook is hook:
            sys.excepthook = previous
    _WATCHED.clear()


if not any(isinstance(f, _OwnModules) for f in sys.meta_path):
    sys.meta_path.insert(0, _OwnModules())
    atexit.register(_leave)

from genstamp.coprocess import Asked, CoProcess, Misplaced  # noqa: E402 - after the finder
from genstamp.errors import GenstampError  # noqa: E402
from genstamp.repo import Checkout, Place, find_place, open_checkout  # noqa: E402
from genstamp.typedtuple import NamedTuple  # noqa: E402


def _in_worker() -> bool:
    """An xdist worker (before its configuration says so): it takes no tree."""
    return bool(os.environ.get("PYTEST_XDIST_WORKER"))


def _start_early() -> tuple[Path, CoProcess] | None:
    """The co-process for the folder pytest runs in, started as pytest imports this module:
    its interpreter, pygit2's import and the walk at the start then run beside the rest of
    this module's imports and all of pytest's start-up, not after them. Not in an xdist worker
    (``PYTEST_XDIST_WORKER``; it takes no tree), under git's environment (the repository is
    opened in-process then) or outside a work tree."""
    if _in_worker() or os.environ.get("GIT_DIR") or os.environ.get("GIT_WORK_TREE"):
        return None
    where = Path.cwd()
    try:
        if find_place(where) is None:
            return None
        coprocess = CoProcess(where)
    except (GenstampError, OSError):
        return None  # the session tries again, and says why it could not
    atexit.register(coprocess.close, abandon=True)  # unless a session claims it
    return where, coprocess


# One per import of this module; the first pytest configuration in this process claims it.
_PRESTARTED: list[tuple[Path, CoProcess]] = [s for s in (_start_early(),) if s is not None]

from genstamp import (  # noqa: E402 - after the co-process has started
    child,
    config,
    evidence,
    generation,
    junit,
    loader,
    loads,
    madefolders,
    overrides,
    roots,
)
from genstamp.paths import inside, installed  # noqa: E402
from genstamp.trees import FromCoProcess, InProcess, Trees  # noqa: E402

if TYPE_CHECKING:
    from collections.abc import Callable, Generator, Iterable, Mapping, Sequence

    from genstamp import audit, coverage, refuted, selection
    from genstamp.audit import Audit
    from genstamp.suite import PytestConfig


def _import_the_end() -> None:
    """Import what binding the evidence needs only at the end (``_bind``): called when the
    tests would wait for the tree at the start anyway."""
    from genstamp import atomic, audit, binding, checkout_id, coverage, outlook, parts, selection

    del atomic, audit, binding, checkout_id, coverage, outlook, parts, selection


_KEY = "genstamp"  # in an xdist worker's ``workeroutput``
_SESSION_PLUGIN = "genstamp-session"
_TALLY_PLUGIN = "genstamp-tally"
_FEED_PLUGIN = "genstamp-recorder"
_EARLY_PLUGIN = "genstamp-early"


# Files of the work tree listed at most to find one the run's named paths left out of the suite
UNCOLLECTED_LIMIT = 20_000
# The run's own options that may leave files of the suite uncollected (``-o python_files``,
# ``--ignore``, ``-p no:doctest``, another configuration or rootdir), by their beginnings
NARROWING: tuple[str, ...] = ("--ignore", "-o", "--override-ini", "-p", "-c", "--rootdir")
NARROWING += ("--confcutdir", "--noconftest", "--pyargs", "--config-file", "--inifile")


def _uncollected(cfg: pytest.Config, tally: Tally) -> list[str]:
    """The test files of the suite, as the work tree holds them, that a run naming its own
    paths (``pytest tests/test_a.py``, or run from a folder below the suite's) did not
    collect: the forecast says such a run is partial (the gate lists the suite from the tree,
    by the same ``suite.collect``). A folder the run skipped whole (its ``conftest.py`` skips)
    covers its files, as for the gate. Empty when the run collected by the configuration,
    named every file its suite's folders hold, or those folders hold more than
    ``UNCOLLECTED_LIMIT`` files."""
    sources = pytest.Config.ArgsSource
    named = cfg.args_source == sources.ARGS
    # the invocation folder (pytest 7.4 spells its member INCOVATION_DIR): neither args given
    # nor the configuration's testpaths. Without a configuration file pytest makes the folder
    # it runs in the rootdir: below the work tree's top, that is below the suite's folder too.
    here = cfg.invocation_params.dir
    below = cfg.args_source not in (sources.ARGS, sources.TESTPATHS) and (
        here != cfg.rootpath or (tally.workdir is not None and here != tally.workdir)
    )
    narrowing = any(w.startswith(NARROWING) for w in overrides.run_words(cfg))
    collected = tally.all_files()
    if not (named or below or narrowing) or tally.workdir is None or not collected:
        return []
    from genstamp import suite

    workdir = tally.workdir
    skipped = tally.skipped_folders
    missing: list[str] = []
    for root in sorted({tally.suite_folder(f) for f in collected}):
        config = tally.config_at(root)
        starts = [suite.join(root, s) for s in config.starts()]
        globbed = suite.glob_bases(starts)
        if not starts or globbed:
            starts = [root]  # ``suite.collect`` globs testpaths as pytest does, from the listing
        listing = _listing_on_disk(workdir, root, starts, config.norecursedirs, globbed)
        if listing is None:
            return []
        found = suite.collect(listing, tally._read, root, tally.known)
        ignored = tally.all_ignored()  # (a file a conftest may ignore, which it did here)
        excused = {
            f
            for f, start in found.maybe
            if suite.observed_ignored(f, start, ignored, found.conftests)
        }
        # (collected, or offered to a conftest's own collector)
        reached = collected | tally._with_workers(tally.offered, "offered")
        listed = (*found.files, *suite.unreached(found, reached, ignored))
        missing += [
            f
            for f in suite.directed(listed, ignored, root)
            if f not in collected
            and f not in excused
            and not any(s == "." or f.startswith(s + "/") for s in skipped)
        ]
    return missing


def _listing_on_disk(
    workdir: Path,
    root: str,
    starts: Sequence[str],
    norecurse: Sequence[str],
    unpruned: Sequence[str] = (),
) -> list[str] | None:
    """The files below ``starts`` (work-tree paths) that pytest would enter, those below
    ``unpruned`` (where testpaths' globs are matched: ``suite.glob_bases``), and the
    ``conftest.py`` files between ``root`` and each start, sorted; None past the limit."""
    from genstamp import suite

    out: set[str] = set()
    for start in [*starts, *unpruned]:
        # below a glob's base, what a ``*`` can match: no hidden folder (``.venv``, ``.tox``)
        pruned = suite.any_of(
            [".*", "__pycache__"] if start in unpruned else [*norecurse, "__pycache__", ".git"]
        )
        folder = start
        while folder and folder != root and folder.strip("/."):  # (never past the top)
            folder = posixpath.dirname(folder)
            if (workdir / folder / "conftest.py").is_file():
                out.add(suite.join(folder, "conftest.py"))
        top = workdir / start if start else workdir
        if top.is_file():
            out.add(start)
            continue
        for here, dirs, files in os.walk(top):
            rel = Path(here).relative_to(workdir).as_posix()
            lead = "" if rel == "." else f"{rel}/"
            dirs[:] = [d for d in dirs if not pruned(d)]
            # what pytest collects: a file, or a link to one (not a link to nothing)
            out.update(lead + n for n in files if os.path.isfile(os.path.join(here, n)))
            if len(out) > UNCOLLECTED_LIMIT:
                return None
    return sorted(out)


class Start(NamedTuple):
    """What the plugin knows once it has found the checkout."""

    checkout: Place | Checkout  # a Checkout (a repository handle) under git's environment only
    settings: config.Config
    gen: generation.Generation | None
    problem: str | None  # why the evidence will be unbound, if it will
    guard: loader.Guard | None
    recording: child.Recording | None = None  # the load log of this run's processes
    # The stamp as a hook left it, with a claim this session settles once the tree at the start
    # is known (``settle``); ``gen`` is None until then.
    claimed: generation.Generation | None = None
    stamp_problem: str | None = None  # why the stamp could not be read, if it could not
    config_problem: str | None = None  # why [tool.genstamp] could not be read, if it could not
    stamp_unread: str | None = None  # the stamp is of a format this genstamp does not read


def begin(place: Place | Checkout, pythonpath: Sequence[Path] = ()) -> Start:
    """Read the settings and the stamp, and guard the checkout's imports; what goes wrong is
    the problem the evidence will carry, never a traceback. ``pythonpath``: the folders pytest
    puts on the import path (its ``pythonpath`` setting), where the checkout's code lives."""
    settings = config.Config()
    gen: generation.Generation | None = None
    problem: str | None = None
    guard: loader.Guard | None = None
    recording: child.Recording | None = None
    claimed: generation.Generation | None = None
    stamp_problem: str | None = None
    config_problem: str | None = None
    stamp_unread: str | None = None
    try:
        try:
            settings = config.load(place.workdir)
        except GenstampError as exc:
            problem = config_problem = str(exc)
        try:
            stored = generation.stored(place)
            if stored is not None and stored.pending is not None and not _in_worker():
                claimed = stored  # settled with the co-process's walk, not one of its own
            else:
                gen = generation.current(place)
        except GenstampError as exc:
            problem, stamp_problem = str(exc), exc.message
            if isinstance(exc, generation.OtherFormat):  # another build's: said by the gate
                stamp_unread = exc.message
        guard = loader.guard(place.workdir, place.state)
        workdir = place.workdir
        found = (
            roots.bases(workdir, settings.packages, pythonpath)
            if settings.packages is not None
            else roots.find(workdir, pythonpath)
        )
        found.update(roots.installed_only(workdir, found))
        recording = child.open_run(
            str(workdir),
            found,
            guard.cache_dir if guard is not None else None,
            stamped.created_ns if (stamped := gen or claimed) else None,
        )
        loads.read_before(_coverage_settings_read())
    except Exception as exc:  # never a traceback from the plugin
        problem = f"{type(exc).__name__}: {exc}"
    return Start(
        place,
        settings,
        gen,
        problem,
        guard,
        recording,
        claimed,
        stamp_problem,
        config_problem,
        stamp_unread,
    )


def _coverage_settings_read() -> list[str]:
    """The configuration files coverage read before the recording began (pytest-cov starts it
    in an early hook of its own; ``coverage run`` before pytest): the run's settings, its
    ``fail_under`` among them, came from them."""
    module = sys.modules.get("coverage")
    current = getattr(getattr(module, "Coverage", None), "current", None)
    if not callable(current):
        return []
    try:
        cov = current()
    except Exception:  # another coverage than the one known: nothing to say
        return []
    files = getattr(getattr(cov, "config", None), "config_files_read", None)
    return [f for f in files or [] if isinstance(f, str)]


def _stamp_end(start: Start) -> str | None:
    """The stamp as the run ends (``outlook.Run.stamp_end``): "" when it is the generation the
    evidence is bound to (or none was), None when it is gone or unreadable, else the id of
    the generation begun since."""
    if start.gen is None:
        return ""
    try:
        now = generation.stored(start.checkout)
    except GenstampError:
        return None
    if now is None:
        return None
    if now.id != start.gen.id:
        ended = now.retired[-1] if now.retired else {}
        if ended.get("id") == start.gen.id and ended.get("changed") is False:
            return ""  # ended as git changed no file: the run stands for its tree
        return now.id
    # a hook's claim made while the tests ran (the run settled the one before it), that
    # begins the next generation whatever the work tree holds (a switch away and back)
    claim = now.pending
    if claim is not None and not claim.get("may_keep", True):
        return str(claim.get("next", {}).get("id", "")) or ""
    return ""


def settle(start: Start, tree: str | None) -> Start:
    """``start`` with the hook's claim settled by ``tree``, the work tree's identity the
    co-process took at the start (None: by a walk of its own); the run's processes judge
    bytecode by the settled generation from now on."""
    try:
        gen = generation.current(start.checkout, tree)
    except GenstampError as exc:
        return start._replace(claimed=None, problem=str(exc))
    except Exception as exc:  # never a traceback from the plugin
        return start._replace(claimed=None, problem=f"{type(exc).__name__}: {exc}")
    rec = start.recording
    if rec is not None and gen is not None:
        rec = child.retime(rec, gen.created_ns)
    return start._replace(gen=gen, claimed=None, recording=rec)


class Destination(NamedTuple):
    """Where the evidence goes, and who writes the JUnit file."""

    path: Path | None  # the file the gate reads; None when it cannot be written
    written: Path | None = None  # the user's --junitxml, which pytest writes (absolute)
    feed: Feed | None = None  # genstamp writes the JUnit itself (no --junitxml)
    problem: str | None = None  # why ``path`` is None


# a part of a path that normalising would change: an empty name, `.` or `..` (and, to keep it
# simple, any name that begins with a dot)
_UNPLAIN = re.compile(re.escape(os.sep) + "[" + re.escape(os.sep) + ".]")


def _installed_copy(module: object, origin: str, path: str) -> bool:
    """Whether the module's file ``origin`` is a copy of the test file ``path``: both where
    the module's dotted name puts its file (``pkg/tests/test_a.py`` of ``pkg.tests.test_a``),
    holding the same bytes (not another file of that name: a stray ``tests`` package a
    dependency installed, a second tree file of the name)."""
    name = getattr(module, "__name__", None)
    if not isinstance(name, str) or not name:
        return False
    rest = name.replace(".", os.sep)
    ends = (f"{os.sep}{rest}.py", f"{os.sep}{rest}{os.sep}__init__.py")
    if not (origin.endswith(ends) and path.endswith(ends)):
        return False
    try:
        return Path(origin).read_bytes() == Path(path).read_bytes()
    except OSError:
        return False


_COLLECTS = "pytest_collect_file"  # ``suite.COLLECTS`` (the suite is the gate's to list)
# a folder's collector (pytest 8; pytest 7 has none of its own: ``_directed``)
_DIRECTORY: Any = getattr(pytest, "Directory", ())
_IGNORES = "pytest_ignore_collect"  # ``suite.IGNORES``


class Tally:
    """What the run collected and what ran, from pytest's hooks and reports (and from the xdist
    workers' outputs). Node ids are kept as pytest gives them (relative to the run's rootdir);
    ``tree_id`` makes them relative to the repository root for the evidence."""

    def __init__(self, workdir: Path | None = None, suites: tuple[str, ...] = ()) -> None:
        self.workdir = workdir
        self.suites = suites
        # the work tree's name and a separator, when it is absolute and normal (``tree_path``)
        top = os.fspath(workdir) if workdir is not None else ""
        self._top = top + os.sep if top and os.path.normpath(os.path.abspath(top)) == top else "\0"
        self.prefix = ""  # the run's rootdir, relative to the work tree ("" at the root)
        self.selected: set[str] = set()  # collected, once deselection was done
        self.deselected = 0
        self.unexplained: set[str] = set()  # deselected, not by the configuration (tree ids)
        self.collect_errors = 0
        self.collect_failed: set[str] = set()  # the collectors that failed (tree ids)
        # called at a test that fails or errors, until it says it is done (``refute_now``)
        self.on_failure: Callable[[], bool] | None = None
        self.skipped_folders: set[str] = set()  # folders skipped whole (tree paths)
        self.ignored: set[str] = set()  # what the run's conftests ignore (``observe_ignores``)
        # the files offered to a conftest's own collector (tree paths), and the folders of the
        # conftests that have one (``pytest_collect_file``)
        self.offered: set[str] = set()
        self._collecting: list[str] = []
        self.executed: set[str] = set()
        self.outcomes: dict[str, str] = {}
        self.files: set[str] = set()  # test files collected (tree paths)
        # test files pytest collected with another file's module (tree path -> that file)
        self.borrowed: dict[str, str] = {}
        self.workers: list[dict[str, Any]] = []
        self._configs: dict[str, PytestConfig] = {}
        # a file's node id -> (the items its collector yielded, its tree path)
        self._raw: dict[str, tuple[int, str]] = {}
        # a file's or class's node id -> what its collector yielded (node id, whether an item);
        # a file's real path -> its node id: the whole of a file that node ids named (H26 21)
        self._yielded: dict[str, list[tuple[str, bool]]] = {}
        self._file_ids: dict[str, str] = {}
        # a class's node id -> its collector, where node ids named tests of its file
        self._classes: dict[str, pytest.Class] = {}
        self._configured: set[str] = set()  # node ids the suite's configuration deselects
        self._named_ids = False  # the run's arguments name tests by node id (kept only then)
        self.partly: set[str] = set()  # files some of whose items a plugin dropped
        self._reported: set[str] = set()  # node ids reported deselected
        self._items: dict[str, Path] = {}  # node id -> file, of every item collected
        self.texts: dict[str, str] = {}  # collected text files (doctests) -> their blob
        self.marked_errors: set[str] = set()  # categories a filterwarnings marker makes errors
        self.marks: set[str] = set()  # the names of the collected tests' markers
        self._other_projects_of: dict[str, bool] = {}  # (``_others``)
        self._kept: list[str] = []  # (``_kept_by_tests``)
        # the node id of each file and folder collected -> its tree path: what a node id names
        # whatever the rootdir (one outside the work tree gives ids `../repo/tests/...`)
        self._paths: dict[str, str] = {}
        self._root: Path | None = None  # pytest's rootdir, where it lies outside the work tree
        # how this run's pytest takes the options in the addopts that the suite's tables do not
        # know (``overrides.options_in_addopts``), as the gate reads the suite with them
        self.known: dict[str, str] | None = None
        self.dependency_skips: dict[str, str] = {}  # node id -> the test pytest-dependency named
        # pytest-dependency's `name=` of a test, in its scope's terms (`file::name`) -> node id
        self.dependency_names: dict[str, str] = {}
        # hypothesis' settings as the conftests left them, before its plugin loads the profile
        # the run chose (``--hypothesis-profile``): those a run of the suite takes
        self.hypothesis_settings: object | None = None  # (``pytest_configure``)

    @pytest.hookimpl
    def pytest_configure(self, config: pytest.Config) -> None:
        """Registered after the plugins pytest loads as it reads its arguments and before the
        initial conftests, this runs after the conftests' own ``pytest_configure`` (which may
        load the suite's hypothesis profile) and before hypothesis' (which loads the one the
        run chose): hypothesis' settings are then those a run of the suite takes."""
        self._named_ids = any("::" in str(arg) for arg in config.args)
        hypothesis = sys.modules.get("hypothesis")
        if hypothesis is not None:
            with contextlib.suppress(Exception):  # another hypothesis: not known
                self.hypothesis_settings = hypothesis.settings()
        taken = overrides.options_in_addopts(config)
        if taken:
            from genstamp import binding

            self.known = binding.options_of({binding.P_OPTIONS: taken})
            self._configs.clear()  # (any read before: read again with them)
        if self.workdir is not None:
            rel = self.tree_path(Path(os.path.realpath(config.rootpath)))  # through a link too
            if rel is None:  # a rootdir above the work tree
                rel = os.path.relpath(config.rootpath, self.workdir).replace(os.sep, "/")
                self._root = config.rootpath
            self.prefix = "" if rel == "." else rel

    def tree_id(self, nodeid: str) -> str:
        path, sep, rest = nodeid.partition("::")
        known = self._paths.get(path)
        if known is not None:
            return known + sep + rest
        if not self.prefix:
            return nodeid
        if self._root is not None:  # not collected here (an xdist worker's): from the rootdir
            found = self.tree_path(self._root / path)
            if found is not None:
                return found + sep + rest
        return posixpath.normpath(f"{self.prefix}/{path}") + sep + rest

    def tree_path(self, path: Path) -> str | None:
        if self.workdir is None:
            return None
        name, top = os.fspath(path), self._top
        rest = name[len(top) - 1 :]  # from the separator on
        if name.startswith(top) and not rest.endswith(os.sep) and not _UNPLAIN.search(rest):
            return rest[1:].replace(os.sep, "/")  # what relpath gives, without its normalising
        rel = os.path.relpath(path, self.workdir).replace(os.sep, "/")
        if rel == ".." or rel.startswith("../"):
            # reached through a link to the checkout (`$PWD/tests` where $PWD is the logical
            # path): its folder resolved, the file itself kept (a tracked link stays itself)
            real = os.path.join(os.path.realpath(os.path.dirname(path)), os.path.basename(path))
            rel = os.path.relpath(real, self.workdir).replace(os.sep, "/")
        return None if rel == ".." or rel.startswith("../") else rel

    @pytest.hookimpl
    def pytest_collectstart(self, collector: pytest.Collector) -> None:
        if self._root is not None and "::" not in collector.nodeid:
            where = self.tree_path(collector.path)
            if where is not None and collector.nodeid:
                self._paths[collector.nodeid] = where
        if isinstance(collector, pytest.File):
            rel = self.tree_path(collector.path)
            if rel is not None:
                self.files.add(rel)
                if not rel.endswith(".py"):  # a doctest text file: code
                    real = self.tree_path(Path(os.path.realpath(collector.path)))
                    if real is not None:  # (a link: the file it leads to)
                        with contextlib.suppress(OSError):
                            self.texts[real] = loads.blob_of(collector.path.read_bytes())

    @pytest.hookimpl
    def pytest_plugin_registered(self, plugin: object, manager: pytest.PytestPluginManager) -> None:
        """A conftest that collects files of its own (``_COLLECTS``): the files of its folder
        are offered to it as the run collects them (``pytest_collect_file``), and the run says
        it had one (``collects``: one defined under a condition may have none). One that
        ignores what it chooses (``_IGNORES``): what its own hook ignores is recorded
        (``hook``), never what another plugin's does (pytest-testmon's, which narrows)."""
        found = self._conftest_at(plugin)
        if found is None:
            return
        folder, home = found
        if callable(getattr(plugin, _COLLECTS, None)):
            self._collecting.append(folder + os.sep)
            self.ignored.add(f"collects\t{home}\t")
        caller = getattr(manager.hook, _IGNORES, None)
        for impl in caller.get_hookimpls() if caller is not None else ():
            if impl.plugin is plugin:
                impl.function = self._observed(impl.function, list(impl.argnames), home)

    def _observed(self, hook: Callable[..., Any], names: list[str], home: str) -> Any:
        """The conftest's ``pytest_ignore_collect``, as pluggy calls it (its arguments in the
        order of ``names``), telling each path it ignores."""
        at = next((names.index(n) for n in ("collection_path", "path", "fspath") if n in names), -1)

        def observed(*args: Any) -> Any:
            result = hook(*args)
            if result and at >= 0:
                rel = self.tree_path(Path(os.fspath(args[at])))
                if rel is not None:
                    self.ignored.add(f"hook\t{home}\t{rel}")
            return result

        return observed

    @pytest.hookimpl(wrapper=True)
    def pytest_collect_file(self, file_path: Path) -> Any:
        """Each file pytest's walk offers the collectors and none takes, below a conftest that
        collects files of its own: what of ``suite.Suite.offered`` the run reached (a run of
        some paths, or with an ``--ignore`` of its own, reaches part of it). A file a collector
        takes counts where the run collects it (pytest 8 offers each file of a folder that
        holds one it was given, and collects the one given alone)."""
        found = yield
        if self._collecting and not found:
            name = os.fspath(file_path)
            if any(name.startswith(folder) for folder in self._collecting):
                rel = self.tree_path(file_path)
                if rel is not None:
                    self.offered.add(rel)
        return found

    @pytest.hookimpl(wrapper=True, trylast=True)
    def pytest_make_collect_report(self, collector: pytest.Collector) -> Any:
        """What a file's collector really yielded, before any plugin's wrapper (``--lf``'s)
        drops items from it without deselecting them."""
        report = yield
        if isinstance(collector, pytest.Module) and report.result is not None:
            self._borrowed(collector)
        if isinstance(collector, _DIRECTORY) and report.result is not None:
            self._directed(collector, report.result)
        if isinstance(collector, pytest.File) and report.result is not None:
            rel = self.tree_path(collector.path)
            if rel is not None:
                self._raw[collector.nodeid] = (len(report.result), rel)
            if self._named_ids:
                self._file_ids[os.path.realpath(collector.path)] = collector.nodeid
        if (
            self._named_ids
            and report.result is not None
            and isinstance(collector, (pytest.File, pytest.Class))
        ):
            self._yielded.setdefault(collector.nodeid, []).extend(
                (child.nodeid, isinstance(child, pytest.Item)) for child in report.result
            )
            self._classes.update(
                (child.nodeid, child) for child in report.result if isinstance(child, pytest.Class)
            )
        return report

    def _directed(self, collector: Any, children: Sequence[Any]) -> None:
        """A folder collected by a collector of its own (a conftest's
        ``pytest_collect_directory``, as pytest's docs collect the files a manifest lists):
        what it yielded is the suite there (``suite.directed``): its files (``yields``), and the
        folders it handed on (``within``). pytest's own (``Dir``, ``Package``) say nothing."""
        if type(collector) in (getattr(pytest, "Dir", None), pytest.Package):
            return
        folder = self.tree_path(collector.path)
        if folder is None:
            return
        folder = "" if folder == "." else folder
        self.ignored.add(f"directory\t{folder}\t")
        for node in children:
            kind = "yields" if isinstance(node, pytest.File) else "within"
            if isinstance(node, (pytest.File, _DIRECTORY)):
                rel = self.tree_path(node.path)
                if rel is not None:
                    self.ignored.add(f"{kind}\t{folder}\t{rel}")

    def _borrowed(self, collector: pytest.Module) -> None:
        """A test file pytest collected with a module it had loaded from another file: two
        test files of one module name (`--import-mode=importlib` hands the second the first
        one's module from ``sys.modules``; ``PY_IGNORE_IMPORTMISMATCH`` lets the prepend mode
        do so). The tests run are the other file's, under this one's node ids: this file's own
        never ran, and it is no file the run collected."""
        module = getattr(collector, "_obj", None)  # (what its collection imported: none here)
        origin = getattr(module, "__file__", None)
        if not isinstance(origin, str) or collector.path.suffix != ".py":
            return  # (a .pyx's doctests run from the extension built of it: pytest-cython's)
        origin = origin[:-1] if origin.endswith(".pyc") else origin
        if origin == str(collector.path) or os.path.realpath(origin) == os.path.realpath(
            collector.path
        ):
            return  # (the same path as written: most modules, with no path resolved)
        if installed(origin) and _installed_copy(module, origin, str(collector.path)):
            return  # this file, installed (`pip install .`): the audit judges the copy
        rel = self.tree_path(collector.path)
        if rel is not None:
            self.files.discard(rel)
            self.borrowed[rel] = self.tree_path(Path(origin)) or origin

    def whole(self, file: str) -> bool:
        """Whether every test the file at ``file`` (a real path) yields was collected for the
        run (node ids that name each of them narrow nothing): known only where this process
        collected the file and every class in it (not an xdist controller's)."""
        items = self.yielded(file) or []
        # (a test the suite's own configuration deselects is none of the suite's)
        return bool(items) and all(n in self.selected or n in self._configured for n in items)

    def yielded(self, file: str) -> list[str] | None:
        """The node ids of every test the file at ``file`` (a real path) yields, as a run of
        the whole file collects them; None where that is not known (``whole``)."""
        top = self._file_ids.get(file)
        if top is None:
            return None
        pending: list[str] = [top]
        items: list[str] = []
        while pending:
            children = self._yielded_by(pending.pop())
            if children is None:
                return None  # a class the node ids did not enter: its tests are unknown
            for nodeid, item in children:
                (items if item else pending).append(nodeid)
        return items

    def _yielded_by(self, nodeid: str) -> list[tuple[str, bool]] | None:
        """What the collector of ``nodeid`` yielded: a class the node ids did not enter is
        collected now, as a run of its whole file collects it (``__test__ = False``, a helper
        class with an ``__init__``, an empty one: it yields none), under the run's warning
        filters (a warning they make an error fails that collection: unknown), its other
        warnings unsaid."""
        children = self._yielded.get(nodeid)
        node = self._classes.get(nodeid)
        if children is not None or node is None:
            return children
        from _pytest.config import apply_warning_filters
        from _pytest.outcomes import OutcomeException

        cfg = node.config
        try:
            with warnings.catch_warnings(record=True):
                warnings.simplefilter("always")
                given = getattr(cfg.known_args_namespace, "pythonwarnings", None) or []
                apply_warning_filters(cfg.getini("filterwarnings"), given)
                found = list(node.collect())
        except (Exception, OutcomeException):  # unknown, as before: the file counts in part
            return None  # (a `pytest.skip` or `fail` in its collection: a report there)
        self._classes.update((c.nodeid, c) for c in found if isinstance(c, pytest.Class))
        children = self._yielded[nodeid] = [(c.nodeid, isinstance(c, pytest.Item)) for c in found]
        return children

    def _dropped(self, report: pytest.CollectReport) -> None:
        raw = self._raw.pop(report.nodeid, None)
        if raw is not None and report.result is not None and len(report.result) < raw[0]:
            self.partly.add(raw[1])

    @pytest.hookimpl
    def pytest_deselected(self, items: list[pytest.Item]) -> None:
        self.deselected += len(items)
        for item in items:
            self._reported.add(item.nodeid)
            if self._configured_out(item):
                self._configured.add(item.nodeid)
            else:
                self.unexplained.add(self.tree_id(item.nodeid))

    @pytest.hookimpl
    def pytest_itemcollected(self, item: pytest.Item) -> None:
        self._items[item.nodeid] = item.path
        mark = item.get_closest_marker("dependency")
        name = mark.kwargs.get("name") if mark is not None else None
        if mark is not None and isinstance(name, str):  # pytest-dependency's, in its scope
            scope = mark.kwargs.get("scope", "module")
            owner = {
                "module": item.nodeid.partition("::")[0] + "::",
                "class": item.nodeid.rpartition("::")[0] + "::",
            }.get(scope, "")  # (session, package: the name alone)
            self.dependency_names[owner + name] = item.nodeid

    def _taken_out(self, final: list[pytest.Item]) -> None:
        """Items a conftest or plugin took out of the collection without reporting them
        deselected (``items[:] = …`` in any hook, ``session.items`` trimmed when collection
        ends; pytest-shard's and pytest-test-groups' parts): not run, as a deselection
        nothing explains leaves them, which another part of the suite may run."""
        kept = {item.nodeid for item in final}
        for nodeid, path in self._items.items():
            if nodeid not in kept and nodeid not in self._reported:
                if self.tree_path(path) is not None:
                    self.unexplained.add(self.tree_id(nodeid))
        self._items.clear()

    def _configured_out(self, item: pytest.Item) -> bool:
        """Whether the tree's own configuration (of the suite holding the test) deselects it."""
        rel = self.tree_path(item.path) or ""
        root = self.suite_root(rel)
        if not root and not self.suites and not self.config_at(root).source:
            kept = self._kept_by_tests()  # the gate's reading of the tree: not the run's files
            if kept and rel.startswith(kept + "/"):
                root = kept
        cfg = self.config_at(root)
        if cfg.deselect:  # --deselect in its addopts: node id prefixes, as pytest takes them
            tree_id = self.tree_id(item.nodeid)
            for prefix in cfg.deselect:
                path = prefix.partition("::")[0]
                bare = path.rstrip("/")
                if bare.startswith("/") or posixpath.normpath(bare) != bare:
                    continue  # pytest compares node ids as written: `./tests/…` matches none
                # as written, a plain prefix of the node id (`legacy/` is not `legacy_api/`'s)
                if tree_id.startswith(f"{root}/{prefix}" if root else prefix):
                    return True
        if not cfg.markexpr and not cfg.keyword:
            return False
        from _pytest.mark import KeywordMatcher, MarkMatcher

        from genstamp import selection

        from_markers = getattr(MarkMatcher, "from_markers", None)
        markers = (
            from_markers(item.iter_markers()) if from_markers else MarkMatcher.from_item(item)  # type: ignore[attr-defined]
        )
        return selection.configured_out(
            cfg.markexpr, cfg.keyword, markers, KeywordMatcher.from_item(item)
        )

    def config_at(self, root: str) -> PytestConfig:
        """The tree's pytest configuration of the suite in ``root`` (read once, when needed)."""
        cfg = self._configs.get(root)
        if cfg is None:
            from genstamp.suite import read_config

            cfg = self._configs[root] = read_config(self._read, root, self.known)
        return cfg

    def _read(self, rel: str) -> bytes | None:
        assert self.workdir is not None
        try:
            return (self.workdir / rel).read_bytes()
        except OSError:
            return None

    @pytest.hookimpl
    def pytest_collectreport(self, report: pytest.CollectReport) -> None:
        if report.failed:
            self.collect_errors += 1
            failed = self.tree_id(report.nodeid)
            path = failed.partition("::")[0]
            if path and self.workdir is not None and not os.path.lexists(self.workdir / path):
                # no collector of the tree (xdist's "Different tests were collected between
                # gw0 and gw1", reported as `gw1`): the run's own, which a later run that
                # collects cleanly answers, as it does a folder's
                failed = ""
            self.collect_failed.add(failed)
        elif report.skipped and "::" not in report.nodeid and self.workdir is not None:
            # a folder skipped whole (its conftest.py skips, or imports what is not
            # installed: pytest.importorskip): as a module skipped whole, its files ran
            # (xdist sends a worker's skipped collection to the controller)
            folder = self.tree_id(report.nodeid)
            if (self.workdir / folder).is_dir():
                self.skipped_folders.add(posixpath.normpath(folder))
        self._dropped(report)

    def skipped_by_lf(self, cfg: pytest.Config) -> set[str]:
        """The files ``--lf`` did not collect (it reports them collected, and empty)."""
        lf = cfg.pluginmanager.get_plugin("lfplugin")
        if not getattr(lf, "_skipped_files", 0):
            return set()
        failed = {self.tree_path(Path(p)) for p in getattr(lf, "_last_failed_paths", ())}
        return {f for f in self.files if f not in failed}

    @pytest.hookimpl(trylast=True)
    def pytest_collection_finish(self, session: pytest.Session) -> None:
        self._taken_out(session.items)
        self.selected.update(item.nodeid for item in session.items)
        # the markers every test's ``iter_markers`` gives: each node's own, up its chain; the
        # nodes the tests share (a module's, a class's) read once
        seen: set[int] = set()
        for item in session.items:
            node: pytest.Item | pytest.Collector | None = item
            while node is not None and id(node) not in seen:
                seen.add(id(node))
                self.marks.update(m.name for m in node.own_markers)
                node = node.parent
        if not overrides.warnings_off(session.config):
            return  # nothing but -p no:warnings makes a marker's error lenient
        from genstamp.suite import is_error, warning_category

        for item in session.items:  # the warnings a test's own marker makes errors
            for mark in item.iter_markers("filterwarnings"):
                for spec in mark.args:
                    if isinstance(spec, str) and is_error(spec):
                        self.marked_errors.add(warning_category(spec))

    @pytest.hookimpl(optionalhook=True)
    def pytest_xdist_node_collection_finished(self, node: Any, ids: list[str]) -> None:
        self.selected.update(ids)

    @pytest.hookimpl
    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        nodeid = report.nodeid
        if report.passed and not hasattr(report, "wasxfail"):  # most reports: kept short
            if report.when == "setup":
                self.executed.add(nodeid)
            elif report.when == "call":
                self.outcomes.setdefault(nodeid, "passed")
            return
        if report.when == "setup":
            self.executed.add(nodeid)
        outcome = _outcome(report)
        if _RANK[outcome] >= _RANK[self.outcomes.get(nodeid, "passed")]:
            self.outcomes[nodeid] = outcome
        if outcome in ("failed", "error") and self.on_failure is not None and self.on_failure():
            self.on_failure = None  # (told once it is done)
        if outcome == "skipped" and (depends := _dependency_skip(report)) is not None:
            self.dependency_skips[nodeid] = depends

    def unseen_dependencies(self) -> set[str]:
        """The tests pytest-dependency skipped though no test of the run they depend on failed
        or was skipped: its result was not seen where they ran (another xdist worker, a later
        place in a shuffled order, a name pytest-repeat changed), and their bodies never ran."""
        names = dict(self.dependency_names)
        for worker in self.workers:
            given = worker.get("dependency_names")
            names.update(given if isinstance(given, dict) else {})
        unseen = set()
        for node, depends in self.dependency_skips.items():
            owners = [node.partition("::")[0], node.rpartition("::")[0]]  # its module, class
            found = [
                names[k] for k in (*(f"{o}::{depends}" for o in owners), depends) if k in names
            ]
            # a test of that name in its module (or class), as pytest-dependency names them,
            # else a node id (session scope)
            found += [
                n
                for n in self.outcomes
                if n == depends or any(n == f"{o}::{depends}" for o in owners)
            ]
            if not any(self.outcomes.get(n) not in (None, "passed", "xpassed") for n in found):
                unseen.add(node)
        return unseen

    @pytest.hookimpl(optionalhook=True)
    def pytest_testnodedown(self, node: Any, error: Any) -> None:
        output = getattr(node, "workeroutput", {}).get(_KEY)
        if isinstance(output, str):
            with contextlib.suppress(ValueError):
                data = json.loads(output)
                self.workers.append(data)
                paths = data.get("paths") if isinstance(data, dict) else None
                if isinstance(paths, dict):  # what the worker's node ids name in the tree
                    self._paths.update(
                        (k, v)
                        for k, v in paths.items()
                        if isinstance(k, str) and isinstance(v, str)
                    )

    def worker_output(self) -> dict[str, Any]:
        return {
            "deselected": self.deselected,
            "unexplained": sorted(self.unexplained),
            "files": sorted(self.files),
            "partly": sorted(self.partly),
            "marked_errors": sorted(self.marked_errors),
            "marks": sorted(self.marks),
            "paths": self._paths,
            "ignored": sorted(self.ignored),
            "offered": sorted(self.offered),
            "dependency_names": self.dependency_names,
            "borrowed": self.borrowed,
        }

    def _conftest_at(self, plugin: object) -> tuple[str, str] | None:
        """(its folder, that folder's tree path: "" at the top) of a conftest of the work tree
        that pytest loaded as ``plugin``; None for any other plugin."""
        where = getattr(plugin, "__file__", None) if isinstance(plugin, ModuleType) else None
        if not isinstance(where, str) or os.path.basename(where) != "conftest.py":
            return None
        folder = os.path.dirname(os.path.abspath(where))
        home = self.tree_path(Path(folder))
        if home is None:
            return None
        return folder, "" if home == "." else home

    def observe_ignores(self, cfg: pytest.Config) -> None:
        """The lists of the conftests this process loaded as the run ends (``defines``, and
        ``collect_ignore``'s ``path`` and ``collect_ignore_glob``'s ``glob`` entries as tree
        paths, each with its conftest's folder: ``coverage.Coverage.ignored``): where a conftest
        may ignore a file, whether it did in this run."""
        for plugin in cfg.pluginmanager.get_plugins():
            found = self._conftest_at(plugin)
            if found is None:
                continue
            folder, home = found
            self.ignored.add(f"loaded\t{home}\t")
            for name, kind in (("collect_ignore", "path"), ("collect_ignore_glob", "glob")):
                values = getattr(plugin, name, None)
                if values is None:
                    continue
                self.ignored.add(f"defines\t{home}\t{name}")  # (an empty list hides too)
                for value in values if isinstance(values, (list, tuple)) else ():
                    # as pytest takes them (``_getconftest_pathlist``): a string from the
                    # conftest's folder, made absolute; a path as it is, which matches only
                    # where it is absolute and plain
                    if isinstance(value, str):
                        joined = os.path.normpath(os.path.join(folder, value))
                    elif isinstance(value, os.PathLike):
                        joined = os.fspath(value)
                        if not isinstance(joined, str) or not os.path.isabs(joined):
                            continue
                        if os.path.normpath(joined) != joined:
                            continue
                    else:
                        continue
                    rel = self.tree_path(Path(joined))
                    if rel is not None and rel != ".":
                        self.ignored.add(f"{kind}\t{home}\t{rel}")

    def _with_workers(self, own: set[str], key: str) -> set[str]:
        """``own`` with the list each xdist worker's output holds under ``key``."""
        return own.union(*(o.get(key, ()) for o in self.workers))

    def all_ignored(self) -> set[str]:
        return self._with_workers(self.ignored, "ignored")

    def all_files(self) -> set[str]:
        return self._with_workers(self.files, "files")

    def all_borrowed(self) -> dict[str, str]:
        out = dict(self.borrowed)
        for worker in self.workers:
            given = worker.get("borrowed")
            out.update(given if isinstance(given, dict) else {})
        return out

    def all_unexplained(self) -> tuple[str, ...]:
        return tuple(sorted(self._with_workers(self.unexplained, "unexplained")))

    def passing(self) -> bool:
        """Whether no test that ran failed or errored, and no collector failed."""
        bad = ("failed", "error")
        return not self.collect_errors and not any(o in bad for o in self.outcomes.values())

    def all_partly(self) -> set[str]:
        return self._with_workers(self.partly, "partly")

    def all_marks(self) -> set[str]:
        """The names of the markers of the tests collected, by this process and its workers."""
        return self._with_workers(self.marks, "marks")

    def all_marked_errors(self) -> set[str]:
        """The warning categories the collected tests' own markers make errors."""
        return self._with_workers(self.marked_errors, "marked_errors")

    def suite_root(self, rel: str) -> str:
        """The folder of the suite holding the tree path ``rel`` ("": the repository's)."""
        return max(
            (r for r in self.suites if rel == r or rel.startswith(r + "/")), key=len, default=""
        )

    def configured_node(self, arg: str, real: str) -> bool:
        """Whether the ``::`` argument ``arg`` (naming a test in the file at ``real``) is one
        that the configuration of the suite holding that file gives in its addopts (pytest
        puts them before the run's own; a module name under ``--pyargs``): the suite's own
        choice of tests, no narrowing."""
        rel = self.tree_path(Path(real))
        if rel is None:
            return False
        root = self.suite_folder(rel)
        from genstamp.suite import join

        given = arg.partition("::")[2]
        cfg = self.config_at(root)
        return any(
            rest == given and any(join(root, p) == rel for p in cfg.named([path]))
            for path, _, rest in (w.partition("::") for w in cfg.paths)
        )

    def suite_folder(self, rel: str) -> str:
        """The folder of the suite holding the tree path ``rel`` and of its configuration:
        where the repository's top has none, the folder whose configuration the collected test
        files keep (``suite.kept_by_tests``)."""
        root = self.suite_root(rel)
        if root or self.suites or self.config_at(root).source:
            return root
        files = self.all_files()
        tops = {f.partition("/")[0] for f in files}
        if len(tops) == 1 and all("/" in f for f in files):
            top = tops.pop()
            if self.config_at(top).source and not self._others(top):
                return top
        return root

    def _kept_by_tests(self) -> str:
        """The folder whose configuration the tree's suite keeps where the top has none
        (``suite.kept_by_tests`` of the suite at the top, over the files git lists of the work
        tree, tracked or not ignored, as the gate reads the tree: every test file of the
        project in that folder), read once; "" when none, or git cannot list them."""
        if not self._kept:
            import subprocess

            from genstamp import suite

            kept = ""
            listed = ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"]
            # git's environment as this process was given it (relative to the folder pytest
            # started in), for a git started in the work tree
            env = dict(os.environ)
            for name in ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE"):
                if env.get(name):
                    env[name] = os.path.abspath(env[name])
            try:
                out = subprocess.run(
                    listed, cwd=self.workdir, env=env, capture_output=True, check=True
                )
            except (OSError, subprocess.CalledProcessError):
                out = None
            if self.workdir is not None and out is not None:
                listing = sorted(set(os.fsdecode(out.stdout).split("\0")) - {""})
                found = suite.collect(listing, self._read, "", self.known)
                kept = suite.kept_by_tests(found, self._read, listing)
            self._kept.append(kept)
        return self._kept[0]

    def _others(self, top: str) -> bool:
        """``_other_projects`` of ``top``, asked once a run."""
        if top not in self._other_projects_of:
            self._other_projects_of[top] = self._other_projects(top)
        return self._other_projects_of[top]

    def _other_projects(self, top: str) -> bool:
        """Whether a folder at the work tree's top other than ``top`` holds a pytest
        configuration of its own: a monorepo's subprojects, not the one project kept in a
        subfolder (its files alone are no run of the suite, which is the top's)."""
        if self.workdir is None:
            return False
        found = []
        with contextlib.suppress(OSError):
            for entry in os.scandir(self.workdir):
                name = entry.name
                if name != top and name[0] != "." and entry.is_dir(follow_symlinks=False):
                    source = self.config_at(name).source
                    found += [source] if source else []
        if not found:
            return False
        # of the tree: a file git tracks (not a scratch folder git ignores, nor one not added)
        import subprocess

        with contextlib.suppress(OSError):
            listed = subprocess.run(
                ["git", "ls-files", "-z", "--", *found],
                cwd=self.workdir,
                capture_output=True,
            ).stdout
            return bool(listed.strip(b"\0"))
        return False

    def suite_config(self, rel: str) -> PytestConfig:
        """The configuration of the suite holding the tree path ``rel`` (``suite_folder``)."""
        return self.config_at(self.suite_folder(rel))

    def unloaded_conftests(self, loaded: Iterable[str]) -> list[str]:
        """The work tree's ``conftest.py`` files that a run from the suite's folder loads for
        the files this run collected (each in the file's folder or above it, up to the
        suite's), and that no process of this run loaded: ``--noconftest``, ``--confcutdir``
        below them, a run from a subfolder that pytest made the rootdir."""
        if self.workdir is None:
            return []
        from genstamp.suite import confcut, conftest_loads

        have = {self.tree_path(Path(p)) for p in loaded}
        have.update(*(o.get("conftests", ()) for o in self.workers))
        there: dict[str, bool] = {}
        missing: set[str] = set()
        for path in self.all_files():
            top = self.suite_folder(path)
            settings = self.config_at(top)
            if settings.noconftest:
                continue  # the suite's own addopts keep every conftest out
            # nor those above its --confcutdir's folder (one beside it loads)
            cut = confcut(top, settings.confcutdir)
            folder = posixpath.dirname(path)
            while True:
                conftest = f"{folder}/conftest.py" if folder else "conftest.py"
                if conftest not in there:
                    there[conftest] = (self.workdir / conftest).is_file()
                if there[conftest] and conftest not in have and conftest_loads(folder, cut):
                    missing.add(conftest)
                if folder == top or not folder:
                    break
                folder = posixpath.dirname(folder)
        return sorted(missing)

    def ran(self) -> set[str]:
        """The tests that ran: an outcome after their setup began. One set up and never called
        (``--setup-only``, ``--setup-plan``) did not run, nor one whose dependency's result
        pytest-dependency did not see (``unseen_dependencies``)."""
        unseen = self.unseen_dependencies() if self.dependency_skips else set()
        return {n for n in self.outcomes if n in self.executed and n not in unseen}

    def coverage(
        self, node_args: list[Path], partly: set[str], *, credited: bool = True
    ) -> coverage.Coverage:
        """What the run covered: a file named with a ``::`` argument (``node_args``: their
        files' real paths), or one a plugin
        dropped items from, was collected in part. Not ``credited`` (the run's own options
        changed what its tests mean: a warning the configuration makes an error let through),
        its tests ran as no run of the suite runs them: none counts as run when parts merge."""
        from genstamp import coverage

        # A file narrowed by node ids whose tests are all known was collected whole, its
        # tests the node ids leave out not run, as a -k leaves them: parts of the suite split
        # by node ids (``file::test_1``, ``file::test_2 other``) then merge into the whole.
        left: list[str] = []
        for arg in node_args:
            items = self.yielded(str(arg))
            if items is None:
                partly = partly | {self.tree_path(arg) or ""}
                continue
            left += [n for n in items if n not in self.selected and n not in self._configured]
        done = self.ran() if credited else set()
        ran = {self.tree_id(n): self.outcomes[n] for n in done}
        unran = [self.tree_id(n) for n in (*self.selected, *left) if n not in done]
        return coverage.new(
            self.all_files() - partly,
            [self.tree_id(n) for n in self.selected],
            ran,
            [*self.all_unexplained(), *unran],
            self.collect_failed,
            self.skipped_folders,
            self.all_ignored(),
            self._with_workers(self.offered, "offered"),
        )


# A test's outcome is the worst of its phases'.
_RANK = {"passed": 0, "skipped": 1, "xfailed": 1, "xpassed": 1, "failed": 2, "error": 3}


_NOT_EXECUTED = frozenset({"skipped", "xfailed"})  # as the JUnit file counts them: skipped


# the statuses a session that failed no test ends with and the tree did not fail: the user's
# Ctrl-C (a part of the suite ran: partial), and no test selected (the gate's no-tests)
_NOT_FAILED = (pytest.ExitCode.OK, pytest.ExitCode.INTERRUPTED, pytest.ExitCode.NO_TESTS_COLLECTED)


def _session_failed(session: pytest.Session, exitstatus: int, exited: bool = False) -> bool:
    """Whether the session failed: a test failed, or pytest exits with a status a clean
    clone's run fails on too (1 from a check at the session's end, as pytest-cov's
    ``--cov-fail-under``; an internal error's 3; a conftest's own, ``pytest.exit(...,
    returncode=N)`` or ``session.exitstatus = N``; and 2 where the suite's code called
    ``pytest.exit`` without a status, ``exited``, not the user's Ctrl-C). What a conftest's
    session finish sets since the hook was called counts."""
    status = getattr(session, "exitstatus", exitstatus)
    if exited and status == pytest.ExitCode.INTERRUPTED:
        return True
    if status == pytest.ExitCode.USAGE_ERROR and _the_command_lines(session):
        return session.testsfailed > 0  # it ran nothing, and failed nothing of the tree's
    return session.testsfailed > 0 or status not in _NOT_FAILED


def _the_command_lines(session: pytest.Session) -> bool:
    """Whether pytest's usage error is a command line's it could not follow: nothing was
    collected (a mistyped path or node id), or its ``-k`` or ``-m`` expression is one pytest's
    own deselection refuses (one it cannot read, a keyword called with parameters, a marker
    ``strict_markers`` does not know: raised as it deselects, once it collected, before it
    counts the items); not a conftest's check of what was collected (``UsageError`` in its
    ``collection_modifyitems``), which a clean clone's run fails on too."""
    if not (session.testscollected or session.items):
        return True
    if session.testscollected:
        return False  # raised once pytest counted what it collected
    try:
        from _pytest.mark import KeywordMatcher, deselect_by_keyword, deselect_by_mark
        from _pytest.mark.expression import Expression
    except ImportError:
        return False
    config = session.config
    try:
        deselect_by_keyword([], config)  # pytest's own reading of them, with no item to judge
        deselect_by_mark([], config)
        keyword = str(getattr(config.option, "keyword", "") or "").lstrip()
        if keyword:  # (each name of it is judged as it is matched: call parameters then)
            Expression.compile(keyword).evaluate(KeywordMatcher(frozenset()))
    except pytest.UsageError:
        return True
    except Exception:
        return False
    return False


def _dependency_skip(report: pytest.TestReport) -> str | None:
    """The name of the test a skip of pytest-dependency's says ``report``'s depends on
    ("test_b depends on test_a", raised in its module); None for any other skip."""
    longrepr = report.longrepr  # (a list where an xdist worker sent the report)
    if not isinstance(longrepr, (tuple, list)) or len(longrepr) != 3:
        return None
    path, _, message = longrepr
    if os.path.basename(str(path)) != "pytest_dependency.py":
        return None
    _, found, depends = str(message).partition(" depends on ")
    return depends.strip() if found else None


def _outcome(report: pytest.TestReport) -> str:
    xfail = hasattr(report, "wasxfail")
    if report.failed:
        if report.when != "call":
            return "error"
        return "xpassed" if xfail else "failed"
    if report.skipped:
        return "xfailed" if xfail else "skipped"
    return "xpassed" if xfail and report.when == "call" else "passed"


class Feed:
    """pytest's reports for the recorder, recorded as they come: a report is not kept (a
    suite's thousands would stay alive to the end, for every garbage collection to walk). A
    report that cannot be recorded never fails the tests: it is raised when the evidence is
    bound (``render``), where it leaves the evidence unwritten and says why."""

    def __init__(self, recorder: junit.Recorder) -> None:
        self.recorder = recorder
        self.failure: Exception | None = None

    def _record(self, record: Callable[[Any], None], item: Any) -> None:
        if self.failure is None:
            try:
                record(item)
            except Exception as exc:
                self.failure = exc

    @pytest.hookimpl
    def pytest_sessionstart(self, session: pytest.Session) -> None:
        self.recorder.session_start()

    @pytest.hookimpl
    def pytest_collectreport(self, report: pytest.CollectReport) -> None:
        self._record(self.recorder.collect_report, report)

    @pytest.hookimpl
    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        self._record(self.recorder.test_report, report)

    @pytest.hookimpl
    def pytest_internalerror(self, excrepr: Any, excinfo: Any) -> None:
        self._record(self.recorder.internal_error, str(excrepr))

    def render(self) -> None:
        if self.failure is not None:
            raise self.failure
        self.recorder.render()


# what a run records that is no code (``Session.late_loads``)
_NOT_CODE = frozenset({loads.READ, loads.WROTE, loads.TOUCHED, loads.FOLDER, loads.MKDIR})
_WATCHED: list[Session] = []  # the sessions whose green evidence a later failure refutes
# genstamp's sys.excepthook and the one it wraps, until the process's exit (``_leave``)
_EXCEPTHOOK: list[tuple[Any, Any]] = []


def _watch_the_end(session: Session) -> None:
    """pytest can still fail once the evidence is bound: a hook of a conftest or a plugin that
    runs later (a terminal summary's, a trylast session finish's, an unconfigure's) raises,
    and the exception ends pytest with status 1; or it calls ``pytest.exit`` with a status. A
    clean clone's run fails so too. Either way the run failed on its tree: ``late_failure``
    records it (an exception that ends the process, through ``sys.excepthook``, installed once
    per process; the others, when pytest unconfigures: ``check_the_end``)."""
    if not _WATCHED:
        previous = sys.excepthook

        def hook(kind: type[BaseException], value: BaseException, tb: Any) -> None:
            if not issubclass(kind, KeyboardInterrupt):  # the user's, not a failure
                for watched in _WATCHED:
                    watched.late_failure(f"{kind.__name__}: {value}")
            previous(kind, value, tb)

        sys.excepthook = hook
        _EXCEPTHOOK.append((hook, previous))
    _WATCHED.append(session)


class Session:
    """One pytest process's plugin object (``genstamp-session``): it binds the evidence when
    the session ends, and tells the user why when it cannot."""

    def __init__(self, cfg: pytest.Config, start: Start) -> None:
        self.config = cfg
        self.start = start
        self.tally = Tally(start.checkout.workdir, start.settings.suites)
        self.tally.on_failure = self.refute_now
        self.trees: Trees | None = None  # in the controller, from pytest_configure on
        self.destination: Destination | None = None
        self.pending: list[str] = []  # lines for the user, shown once
        self._earlier: dict[str, Any] | None = None  # see ``earlier``
        self.began_ns = time.time_ns()  # a work tree made after this is the tests' own
        self.coverage_left = True  # coverage data of an earlier run there as the run began
        # the session the process was started for (``_started_as_pytest``, its first): what
        # loaded before the recording began loaded as it started up
        self.own_process = False
        # Evidence bound green, until the process ends: (git dir, tree, the session, its exit
        # status then, the exception being handled then, if any: a caller's). pytest may still
        # fail after it is bound (``_watch_the_end``).
        self.green: (
            tuple[Path, tuple[str, ...], pytest.Session, int, BaseException | None] | None
        ) = None
        # how much the run's logs held when it was bound green: what they hold beyond ran
        # later (a session finish's wrapper, a terminal summary, an unconfigure)
        self.bound_logs: dict[str, int] | None = None
        # the files below each namespace package's folder, asked whether git ignores them
        self.namespace_files: dict[str, list[str] | None] = {}
        self.exited = False  # the session ended by the suite's pytest.exit, not a Ctrl-C
        self.running: refuted.Running | None = None  # the run goes on, said (``refuted``)

    def end_running(self) -> None:
        """The run has ended: its record of going on goes (what it found is recorded
        otherwise)."""
        running, self.running = self.running, None
        if running is not None:
            atexit.unregister(self.end_running)
            from genstamp import refuted

            refuted.end(running)

    def refute_now(self) -> bool:
        """A test failed: the tree the run began with is recorded as failed now, not only as
        the session ends (``refuted``). A run that dies before then (killed by a timeout, a
        crash, ``os._exit`` in a plugin's timeout or a conftest's session finish) left an
        earlier pass of the tree standing. Whether that is done: not while the tree at the
        start is still being taken (the tests began as it was: awaited here, a write of the
        tests' since would be taken for a change as they began), nor in an xdist worker (its
        controller hears of the failure too). A recording the end cannot make is said then."""
        trees = self.trees
        if trees is None:
            return True
        if trees.start is None:
            return trees.problem is not None  # (unknown for good: the end records the tree)
        with contextlib.suppress(Exception):  # never a traceback from the plugin
            from genstamp import refuted

            refuted.record(self.start.checkout.gitdir, trees.start)
        return True

    @pytest.hookimpl
    def pytest_keyboard_interrupt(self, excinfo: pytest.ExceptionInfo[BaseException]) -> None:
        """pytest reports a ``pytest.exit`` here as it reports a Ctrl-C: both end with status
        2 where the exit gives none; the suite's own exit failed the session."""
        self.exited = not isinstance(excinfo.value, KeyboardInterrupt)

    @pytest.hookimpl(tryfirst=True)
    def pytest_sessionstart(self, session: pytest.Session) -> None:
        """A hook's claim is settled before anything else reads the stamp (xdist's workers
        start after this)."""
        if self.start.claimed is not None and self.trees is not None:
            self.trees.await_start()
            self.start = settle(self.start, self.trees.start)

    @pytest.hookimpl(wrapper=True, trylast=True)
    def pytest_runtestloop(self, session: pytest.Session) -> Generator[None, object, object]:
        """No test has run yet: the tree at the start must be known by now, or the work tree
        watched while the co-process takes it (``begin_tests``). Before that, the modules
        loaded before the recording began are sorted out for the audit. Once the tests are
        done, and before any plugin writes what it writes at the end (pytest's cache, a
        coverage file), the tree at the start is awaited: a write after the tests is the
        tree at the end's to see, never taken for one during them (the innermost wrapper
        resumes first)."""
        self.earlier()
        if self.trees is not None and self.trees.start_pending():
            _import_the_end()  # time spent waiting anyway (else: while the end is taken)
        if self.trees is not None:
            self.trees.begin_tests()
            if self.trees.start:  # (a run that dies from here on did not finish: ``refuted``)
                from genstamp import refuted

                self.running = refuted.begin(self.start.checkout.gitdir, self.trees.start)
                if self.running is not None:  # (else nothing to end, nothing held to exit)
                    atexit.register(self.end_running)
        try:
            return (yield)
        finally:
            if self.trees is not None:
                self.trees.await_start()

    def earlier(self) -> dict[str, Any]:
        """The modules loaded before the recording began (no hook saw them load) that the audit
        has something to say about; every later load was recorded as it happened."""
        if self._earlier is None:
            rec = self.start.recording
            self._earlier = (
                {}
                if rec is None
                else loader.auditable(
                    rec.earlier, str(self.start.checkout.workdir), tuple(rec.run.roots)
                )
            )
        return self._earlier

    def audit(self) -> audit.Audit:
        """The loads every process of the run recorded as they happened, and the modules
        loaded before the recording began."""
        from genstamp import audit

        start = self.start
        workdir = start.checkout.workdir
        gen_ns = start.gen.created_ns if start.gen else None
        rec = start.recording
        shaped = audit.configuration(*overrides.configuration(self.config), workdir)
        # the doctest text files collected: code no module holds, loaded as the tests ran it
        texts = audit.Audit((), {rel: (blob,) for rel, blob in self.tally.texts.items()}, ())
        shaped = audit.merge([shaped, texts])
        if rec is None:
            packages = start.settings.packages
            if packages is None:
                packages = audit.checkout_packages(workdir)
            swept = audit.audit_modules(
                workdir,
                packages,
                gen_ns,
                modules=loader.auditable(sys.modules, str(workdir), packages),
                trusted_cache=start.guard.cache_dir if start.guard else None,
            )
            return audit.merge([swept, shaped])
        recorded = loads.read_logs(rec.run.folder)
        # what came from another git work tree before the recording began (a -p plugin)
        seen_paths = {ld.path for ld in recorded}
        recorded += [
            ld
            for ld in loader.from_elsewhere(rec.earlier, str(workdir))
            if ld.path not in seen_paths
        ]
        notes = []
        if rec.hook is not None and rec.hook.problem:
            notes.append(f"child processes were not followed: {rec.hook.problem}")
        notes += child.strangers(rec.run.folder)
        lost = [
            audit.Flag(audit.FOREIGN, "code", f"<process {pid}>", LOST)
            for pid in loads.lost(rec.run.folder)
        ]
        # the folders earlier runs made, found as a run left them: a test that makes one only
        # where it is missing writes into it on its next run
        before = madefolders.made(start.checkout.gitdir)
        if before.problem:
            notes.append(before.problem)
        found = {
            ld.path
            for ld in recorded
            if ld.via == loads.FOLDER and before.folders.get(ld.path) == ld.detail
        }
        if not _is_worker(self.config):  # the controller, once the workers have judged
            made_now = audit.made_folders(recorded, asked=False)
            madefolders.keep(start.checkout.gitdir, before, made_now, found)
        judged = audit.judge(
            recorded,
            workdir,
            rec.run.roots,
            gen_ns,
            notes,
            self.began_ns,
            start.settings.built,
            found,
            start.settings.version_lines,
        )
        seen = {ld.path for ld in recorded if ld.via not in (loads.WROTE, loads.TOUCHED)}
        unseen = {name: m for name, m in self.earlier().items() if overrides.origin(m) not in seen}
        swept = audit.audit_modules(
            workdir,
            tuple(rec.run.roots),
            gen_ns,
            modules=unseen,
            trusted_cache=start.guard.cache_dir if start.guard else None,
            bases=rec.run.roots,
            made_by_the_build=start.settings.built,
            version_lines=start.settings.version_lines,
        )
        # code of the work tree that ran before the recording began (a `-p` plugin of the
        # checkout, imported as pytest reads its arguments): what it read is unseen, so every
        # change hidden from git counts as read
        ran_early = any(
            inside(origin, str(workdir)) and not installed(origin)
            for origin in map(overrides.origin, self.earlier().values())
        )
        unseen_reads = audit.Audit((), {}, (), read=("*",) if ran_early else ())
        # a loader's text counts, as the audit judged it; a module run from text under a name
        # of no file is judged by that text already
        ran = seen | {str(workdir / rel) for rel in judged.loaded}
        ran |= {ld.module for ld in recorded if ld.path.startswith("<")}
        bodies = _unobserved(sys.modules, rec.earlier, rec.run.roots, str(workdir), ran)
        if not self.own_process:
            bodies += _changed_since_loaded(unseen, str(workdir))
        unseen_bodies = audit.Audit((), {}, tuple(bodies + lost))
        return audit.merge([judged, swept, shaped, unseen_reads, unseen_bodies])

    @pytest.hookimpl(wrapper=True, trylast=True)
    def pytest_sessionfinish(
        self, session: pytest.Session, exitstatus: int
    ) -> Generator[None, object, object]:
        """Binds once every session finish but the wrappers' has run: a conftest's ``trylast``
        one too, which may import code and set the session's status (what it loads is audited,
        the status it sets is bound)."""
        try:
            return (yield)
        finally:
            try:
                self._finish(session, exitstatus)
            finally:  # the session ended, what it found recorded: a conftest's os._exit in
                self.end_running()  # its unconfigure (threads that hang the exit) is later

    def _finish(self, session: pytest.Session, exitstatus: int) -> None:
        self.tally.observe_ignores(self.config)
        if _is_worker(self.config):
            tally = self.tally
            data: dict[str, Any] = tally.worker_output()
            # the files this worker's --lf left out (each worker collects for itself)
            data["partly"] = sorted({*data["partly"], *tally.skipped_by_lf(self.config)})
            conftests = (tally.tree_path(Path(p)) for p in overrides.conftest_paths(self.config))
            data["conftests"] = sorted(c for c in conftests if c is not None)
            try:
                data["audit"] = self.audit().to_json()
            except Exception as exc:  # never fail a worker because of genstamp
                data["error"] = f"the audit failed in a worker: {type(exc).__name__}: {exc}"
            self.config.workeroutput[_KEY] = json.dumps(data)  # type: ignore[attr-defined]
            return
        if self.trees is not None:
            self.trees.await_start()
            if self.trees.inert:
                return
        try:
            self._bind(session, exitstatus)
            return
        except GenstampError as exc:
            reason = str(exc)
        except OSError as exc:
            reason = _os_reason(exc)
        except Exception as exc:  # never a traceback, never a changed outcome
            reason = f"{type(exc).__name__}: {exc}"
        finally:
            # The evidence holds what was recorded until now. Bound green, the recording goes
            # on to pytest's unconfigure: code that runs later (a wrapper of the session
            # finish, a terminal summary) and that the gate refuses refutes the run there
            # (``check_the_end``); otherwise nothing later is recorded, at no cost.
            rec = self.start.recording
            if rec is not None and self.green is not None and rec.owned:
                self.bound_logs = loads.log_sizes(rec.run.folder)
            elif rec is not None:
                child.close_run(rec)
        self._forget_earlier()
        self._say(f"genstamp: evidence not written: {reason}")
        self._failed_unbound(session, exitstatus)

    def _failed_unbound(self, session: pytest.Session, exitstatus: int) -> None:
        """A run that failed, its evidence not written (a full disk, a co-process gone): its
        tree at the start, where known, is recorded as failed all the same, so no earlier
        pass of it answers for it (where that cannot be written, the verdicts are forgotten);
        where the start is unknown (the work tree changed as the tests began), its tree now.
        """
        failed = _session_failed(session, exitstatus, self.exited)
        if not (failed or not self.tally.passing()):
            return
        tree = self.trees.start if self.trees is not None else None
        if not tree:
            with contextlib.suppress(Exception):  # never a traceback from the plugin
                from genstamp.identity import tree_identity
                from genstamp.repo import open_checkout

                tree = tree_identity(open_checkout(self.start.checkout.workdir))
        if not tree:
            return
        from genstamp import refuted

        unrecorded = refuted.record_failure(self.start.checkout.gitdir, tree)
        if unrecorded:
            self._say(f"genstamp: {unrecorded}")

    def _forget_earlier(self) -> None:
        """An earlier run's evidence at the default location must not speak for this run (unless
        it is the user's own --junitxml, which pytest overwrote)."""
        dest = self.destination
        if dest is not None and dest.path is not None and dest.written != dest.path:
            with contextlib.suppress(OSError):
                dest.path.unlink(missing_ok=True)

    def _bind(self, session: pytest.Session, exitstatus: int) -> None:
        start, dest, trees = self.start, self.destination, self.trees
        if dest is None or dest.path is None or trees is None:
            problem = dest.problem if dest is not None else None
            raise GenstampError(problem or start.problem or "no evidence path")
        written = dest.written
        if written is not None and not written.is_file():
            raise GenstampError(f"pytest wrote no JUnit file at {written}")
        trees.await_start()
        if trees.start is None:
            raise GenstampError(
                trees.problem or start.problem or "the tree at the start is unknown"
            )
        # The tree at the end is taken (by the co-process, or by a thread) while this one
        # imports what binding needs and audits; nothing here touches the repository handle
        # it uses until it is done.
        trees.begin_end(_output(start, written))
        from genstamp import audit, outlook, parts, selection
        from genstamp.atomic import write_atomic

        merged: audit.Audit | None = None
        covered: coverage.Coverage | None = None
        asked = False
        reasons: list[str] = []
        failure: Exception | None = None
        try:
            workers = self.tally.workers
            merged = audit.merge(
                [self.audit()] + [audit.from_json(o["audit"]) for o in workers if "audit" in o]
            )
            asked = self._ask_misplaced(trees, merged)  # answered while the rest is gathered
            lf_skipped = self.tally.skipped_by_lf(self.config)
            facts = _facts(self.config, session, exitstatus, self.tally, self.coverage_left)
            facts = facts._replace(partly=tuple(sorted(self.tally.all_partly() | lf_skipped)))
            reasons = selection.reasons(facts) + [
                f"{rel} collected with the module of {other}, imported first under the same "
                "name: its own tests never ran (give the two distinct module names)"
                for rel, other in sorted(self.tally.all_borrowed().items())
            ]
            partly = self.tally.all_partly() | lf_skipped
            if facts.overrides:  # each file may have yielded fewer tests than the suite's
                partly |= self.tally.all_files()
            covered = self.tally.coverage(
                [Path(_arg_path(self.config, a)) for a in facts.node_ids],
                partly,
                credited=not facts.overrides,
            )
            if dest.feed is not None:
                dest.feed.render()
        except Exception as exc:  # raised below, once the tree at the end is taken
            failure = exc
        tree_end, head, moved = trees.end()
        worker_errors = [str(o["error"]) for o in self.tally.workers if "error" in o]
        if worker_errors:
            raise GenstampError(worker_errors[0])
        if failure is not None:
            raise failure
        assert merged is not None and covered is not None
        output = _output(start, written)
        if output and output in {*merged.loaded, *merged.read}:
            moved = trees.start != tree_end  # the gate leaves out no report the tests used
        found = self._misplaced(trees) if asked else None
        misplaced = found if found is not None else Misplaced([], {})
        if misplaced.converted:  # bytes the gate may no longer find in the file (B25 04)
            merged = merged._replace(converted=misplaced.converted)
        # what pytest exits with: a conftest's session check may have set it since the hook
        # was called, as pytest-cov's --cov-fail-under counts a failure of its own
        status = getattr(session, "exitstatus", exitstatus)
        failed = _session_failed(session, exitstatus, self.exited)
        session_failed = ""
        if failed and self.tally.passing():
            session_failed = (
                f"pytest exits with status {int(status)} though every test that ran passed "
                "(a plugin or a conftest failed the session: --cov-fail-under, a check at "
                "the session's end)"
            )
        props = _properties(
            start,
            trees.start,
            tree_end,
            head,
            reasons,
            merged,
            covered,
            written,
            session_failed,
            overrides.options_in_addopts(self.config),
            found,
        )
        key = start.gen.key if start.gen else ""
        if written is None:
            assert dest.feed is not None
            write_atomic(dest.path, dest.feed.recorder.document(props, key))
        else:
            evidence.bind(written, props, key)
            try:
                evidence.copy_to(written, dest.path)
            except OSError as exc:
                raise GenstampError(
                    f"{written} is bound, but the copy the gate reads could not be written: "
                    f"{_os_reason(exc)}"
                ) from exc
        if start.gen is not None:
            # Every bound run is a part of this generation: parts that together cover the
            # suite make one complete verdict (running one selection again on the same tree
            # replaces its part).
            in_place = written is not None and written == dest.path  # pytest writes it anew
            parts.keep(
                start.checkout.state,
                start.gen.id,
                tree_end,
                covered.part_key,
                dest.path,
                link=not in_place,
                also=[old["id"] for old in start.gen.retired],
            )
        # the tree as the gate compares it too: without the run's own report in the work tree
        # (a failure filed under the tree with report.xml refutes none the gate judges)
        judged = _without_output(start.checkout, tree_end, output, merged)
        if trees.start and trees.start != tree_end:  # the tree whose code ran: a failing test
            judged.append(trees.start)  # that writes a file changed the tree at the end
        if failed or not self.tally.passing():
            from genstamp import refuted  # the newest word on this tree, in every worktree

            unrecorded = refuted.record_failure(start.checkout.gitdir, tree_end, *judged)
            if unrecorded:
                self._say(f"genstamp: {unrecorded}")
        else:
            self.green = (
                start.checkout.gitdir,
                (tree_end, *judged),
                session,
                int(status),
                sys.exc_info()[1],
            )
            _watch_the_end(self)
        if start.problem:
            state = "written but unbound" if start.gen is None else "written"
            self._say(f"genstamp: evidence {state}: {start.problem}")
        for note in merged.notes:
            self._say(f"genstamp: {note}")
        forecast = list(reasons)
        if not forecast:  # a run that named paths: whether they hold the whole suite
            left = _uncollected(self.config, self.tally)
            if left:
                files = f"{len(left)} files" if len(left) > 1 else "1 file"
                forecast.append(
                    f"{files} of the suite not collected ({outlook.named(left)}): the run"
                    " chose what to collect (its paths, the folder it ran in, or an option"
                    " such as -p, --ignore, -o)"
                )
        # what namespace packages' folders hold, asked of git only to judge the folders (a
        # module the tests loaded is judged as any other); a folder that holds a file git does
        # not ignore (one tracked inside an ignored folder, `git add -f`) is the tree's
        below = {f for fs in self.namespace_files.values() for f in fs or ()} - set(merged.loaded)
        unheld, held = _namespace_folders(self.namespace_files, misplaced.ignored)
        run = outlook.Run(
            generation=start.gen.id if start.gen else None,
            tree_start=trees.start,
            tree_end=tree_end,
            reasons=tuple(forecast),
            flags=merged.flags,
            failed=failed,
            ignored=tuple(
                f
                for f in misplaced.ignored
                if f not in merged.folders and f not in below and f not in held
            ),
            empty=_empty_folders(merged.folders, misplaced.ignored, start.checkout.workdir),
            unregistered=tuple(sorted(misplaced.unregistered.items())),
            differ=misplaced.differ,
            namespaces=unheld,
            hidden=tuple(sorted(misplaced.hidden.items())),
            dirty=tuple(sorted(misplaced.dirty)),
            moved=moved,
            executed=sum(o not in _NOT_EXECUTED for o in self.tally.outcomes.values()),
            allow_partial=start.settings.allow_partial,
            stamp_end=_stamp_end(start),
            stamp_problem=start.stamp_problem or "",
            config_problem=start.config_problem or "",
        )
        for line in outlook.lines(run):
            self._say(line)

    def _ask_misplaced(self, trees: Trees, merged: Audit) -> bool:
        """Ask ``trees`` which loaded files of the work tree git ignores (and the project does
        not declare generated), which lie in a repository a clone cannot fetch, the changes
        hidden from git in the files the tests used, and the submodules with changes: the gate
        refuses them, so the forecast must say so (``_misplaced`` reads the answer). False when
        it could not be asked."""
        from genstamp import audit, suite
        from genstamp.paths import generated

        globs = self.start.settings.generated
        made = set(merged.made)  # the run's own code: a clean clone's run makes it too
        candidates = [rel for rel in merged.loaded if not generated(rel, globs) and rel not in made]
        candidates += merged.folders  # an ignored one is no empty folder the gate refuses
        # a namespace package's folder, and what it holds: one whose files git all ignores (a
        # removed package's bytecode, a log) no tree holds, and the gate refuses it. One the
        # tests loaded modules from (a namespace root) is judged by those, asked anyway: its
        # files are not walked
        workdir = self.start.checkout.workdir
        self.namespace_files = _files_below(workdir, merged.namespaces, list(merged.loaded))
        candidates += merged.namespaces
        candidates += [f for fs in self.namespace_files.values() for f in fs or ()]
        candidates = list(dict.fromkeys(candidates))  # (a loaded module of such a folder: once)
        used: list[str] | None = None  # what the gate asks of hidden changes (every file: None)
        if "*" not in merged.read:
            # as the gate: the files loaded or read, and pytest's configuration files
            settings = {posixpath.join(self.tally.prefix, name) for name in suite.CONFIG_NAMES}
            ini = getattr(self.config, "inipath", None)
            rel_ini = self.tally.tree_path(Path(ini)) if ini else None
            settings.update([rel_ini] if rel_ini else [])
            used = sorted(
                {*merged.loaded, *merged.read, *(posixpath.normpath(s) for s in settings)}
            )
        try:
            searched = audit.searched(merged)
            # the suites the collected files are in (declared), else the run's own folder's
            tally = self.tally
            roots = {tally.suite_root(f) for f in tally.all_files()} if tally.suites else set()
            roots = roots or {tally.prefix}
            trees.ask_misplaced(Asked(candidates, merged.loaded, used, searched, sorted(roots)))
        except GenstampError:
            return False
        return True

    def _misplaced(self, trees: Trees) -> Misplaced | None:
        """The answer to ``_ask_misplaced``. Unknown is none: the forecast never unbinds the
        evidence."""
        from genstamp import config
        from genstamp.paths import generated

        try:
            found = trees.misplaced()
        except GenstampError:
            return None  # unknown: none for the forecast, and not recorded as none
        if found.ignored:  # a version file a project below the top declares is the build's
            below = config.with_projects_below(self.start.settings, self.start.checkout.workdir)
            ignored = [rel for rel in found.ignored if not generated(rel, below.generated)]
            found = found._replace(ignored=ignored)
        return found

    def _say(self, line: str) -> None:
        """Tell the user in the terminal summary (or on stderr at the end, without one)."""
        self.pending.append(line)

    @pytest.hookimpl
    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        for line in self.pending:
            terminalreporter.write_line(line, yellow=True)
        self.pending.clear()

    def late_failure(self, why: str, what: str = "pytest failed") -> None:
        """The session failed after its evidence was bound green (``why``): its tree is
        recorded as failed (``refuted``), so no pass of it, this one's included, answers for
        it. Once."""
        if self.green is None:
            return
        gitdir, (tree, *judged), _, _, _ = self.green
        self.green = None
        from genstamp import refuted

        unrecorded = refuted.record_failure(gitdir, tree, *judged)
        told = unrecorded or (
            f"{what} after the evidence was bound ({why}): tree {tree[:12]} is "
            "recorded as failed, and the gate refuses it — fix what failed, then rerun"
        )
        print(f"genstamp: {told}", file=sys.stderr)

    def check_the_end(self) -> None:
        """At pytest's unconfigure: whether the session failed since its evidence was bound
        (an exception on its way out of pytest, or another exit status), or ran code the
        gate refuses (``late_loads``)."""
        if self.green is None:
            return
        late = self.late_loads()
        if late:
            self.late_failure(late, "code the gate refuses ran")
            return
        in_flight = sys.exc_info()[1]
        _, _, session, bound, handled = self.green
        status = int(getattr(session, "exitstatus", bound))
        quiet = (KeyboardInterrupt, pytest.exit.Exception)  # the user's; a status of its own
        if in_flight is handled or (
            isinstance(in_flight, SystemExit) and in_flight.code in (None, 0)
        ):
            in_flight = None  # the caller's (pytest.main in an except clause), or no failure
        if in_flight is not None and not isinstance(in_flight, quiet):
            self.late_failure(f"{type(in_flight).__name__}: {in_flight}")
        elif status != bound and status != pytest.ExitCode.OK:
            self.late_failure(f"pytest exits with status {status}")

    def late_loads(self) -> str:
        """What the processes of the run loaded once it was bound green that the gate refuses
        (another clone's code, stale bytecode): a wrapper of the session finish runs after the
        binding, and its code can decide the session's status (D25 01). "" when nothing."""
        rec, since = self.start.recording, self.bound_logs
        if rec is None or since is None:
            return ""
        late = [ld for ld in loads.read_logs(rec.run.folder, since) if ld.via not in _NOT_CODE]
        if not late:
            return ""
        from genstamp import audit

        # judged as the binding judged: with what the whole run read, wrote and made, and the
        # version files the build writes (E25 25: an installed _version.py), naming the late
        # code alone
        start = self.start
        context = [ld for ld in loads.read_logs(rec.run.folder) if ld.via in _NOT_CODE]
        gen_ns = start.gen.created_ns if start.gen else None
        workdir = start.checkout.workdir
        found = audit.judge(
            [*context, *late],
            workdir,
            rec.run.roots,
            gen_ns,
            (),
            self.began_ns,
            start.settings.built,
            version_lines=start.settings.version_lines,
        ).flags
        paths = {ld.path for ld in late}
        modules = {ld.module for ld in late if ld.module}
        late_flags = {
            f"{f.kind}: {f.module or f.path}"
            for f in found
            if f.module in modules or f.path in paths or str(workdir / f.path) in paths
        }
        return ", ".join(sorted(late_flags))

    def restore(self) -> None:
        if self.trees is not None:
            self.trees.close()
        if self.start.recording is not None:
            child.close_run(self.start.recording)
        if self.start.guard is not None:
            self.start.guard.undo()

    def flush(self) -> None:
        for line in self.pending:
            print(line, file=sys.stderr)
        self.pending.clear()


def _properties(
    start: Start,
    tree_start: str,
    tree_end: str,
    head: str | None,
    reasons: list[str],
    merged: audit.Audit,
    covered: coverage.Coverage,
    written: Path | None = None,
    session_failed: str = "",
    options: str = "",
    misplaced: Misplaced | None = None,
) -> dict[str, str]:
    """The ``genstamp.*`` properties that bind this run's evidence; ``written``: the user's
    --junitxml, recorded when inside the work tree (the gate leaves it out of the trees);
    ``session_failed``: why the session failed though no test did; ``options``:
    ``binding.P_OPTIONS``; ``misplaced``: what the run found that no tree holds
    (``binding.P_UNSEEN``, when it could tell)."""
    from genstamp import binding, checkout_id

    unseen = ""
    if misplaced is not None:
        unseen = binding.Unseen(dict(misplaced.hidden), dict(misplaced.dirty)).to_json()

    return binding.new(
        runner="pytest",
        checkout=str(start.checkout.gitdir),
        generation=start.gen.id if start.gen else None,
        tree_start=tree_start,
        tree_end=tree_end,
        head=head,
        partial=reasons,
        audit=merged.to_json(),
        checkout_id=checkout_id.current(start.checkout.gitdir, create=True),
        output=_output(start, written),
        coverage=covered.to_json(),
        session_failed=session_failed,
        options=options,
        unseen=unseen,
        stamp_unread=start.stamp_unread or "",
    ).properties()


def _without_output(where: Place | Checkout, tree: str, output: str, audited: Audit) -> list[str]:
    """``tree`` without the run's own report file ``output``, as the gate compares trees (not
    where the tests loaded or read it), when that is another tree; else none."""
    if not output or output in {*audited.loaded, *audited.read}:
        return []
    from genstamp.facts import without

    try:
        checkout = where if isinstance(where, Checkout) else open_checkout(where.workdir)
        bare = without(checkout.repo, [tree], output).get(tree)
    except (GenstampError, OSError):
        return []  # the tree as the run found it is recorded all the same
    return [bare] if bare and bare != tree else []


def _output(start: Start, written: Path | None) -> str:
    """``written`` (the user's --junitxml) relative to the work tree, "" when outside it."""
    if written is None:
        return ""
    output = os.path.relpath(os.path.realpath(written), start.checkout.workdir)
    return "" if output.split(os.sep)[0] == ".." else output.replace(os.sep, "/")


def _narrowing(args: list[str], where: Callable[[str], str]) -> list[str]:
    """The arguments naming tests inside a file (``::``) whose file no other argument collects
    whole: ``pytest tests/a/test_a.py::test_a1 tests`` runs every test of ``test_a.py``,
    as ``tests`` names the folder holding it. ``where``: the real path an argument names."""
    whole = [where(a) for a in args if "::" not in a]
    out = []
    for arg in args:
        if "::" in arg:
            file = where(arg)
            if not any(file == w or file.startswith(w.rstrip(os.sep) + os.sep) for w in whole):
                out.append(arg)
    return out


def _arg_path(cfg: pytest.Config, arg: str) -> str:
    """The real path of the file or folder a command-line argument names, as pytest resolves
    it: under ``--pyargs``, a module's name (``tests.test_a::test_1``) by the import path."""
    name = arg.partition("::")[0]
    if cfg.getoption("pyargs", False):
        try:
            from _pytest.main import search_pypath
        except ImportError:  # (a pytest without it: the name as a path, as before)
            return os.path.realpath(os.path.join(cfg.invocation_params.dir, name))
        try:
            spaces = bool(cfg.getini("consider_namespace_packages"))
        except ValueError:  # pytest before 8.1 has no such setting
            spaces = False
        with contextlib.suppress(Exception):  # pytest keeps a name it cannot find as a path
            try:  # a namespace package's first portion, where pytest considers them
                name = search_pypath(name, consider_namespace_packages=spaces) or name
            except TypeError:  # pytest before 8.1
                name = search_pypath(name) or name
    return os.path.realpath(os.path.join(cfg.invocation_params.dir, name))


def _facts(
    cfg: pytest.Config,
    session: pytest.Session,
    exitstatus: int,
    tally: Tally,
    coverage_left: bool = True,
) -> selection.Facts:
    """What ``selection.reasons`` decides over, from pytest's configuration and session."""
    from genstamp import selection

    node_ids: list[str] = []
    if cfg.args_source == pytest.Config.ArgsSource.ARGS:
        where = functools.partial(_arg_path, cfg)
        node_ids = [
            arg
            for arg in _narrowing(cfg.args, where)
            if not tally.whole(where(arg)) and not tally.configured_node(arg, where(arg))
        ]
    return selection.Facts(
        overrides=overrides.overrides(cfg, tally, coverage_left),
        node_ids=tuple(node_ids),
        deselected=tally.all_unexplained(),
        collect_errors=tally.collect_errors,
        interrupted=exitstatus == pytest.ExitCode.INTERRUPTED,
        stopped=str(session.shouldstop or session.shouldfail or ""),
        executed=len(tally.ran()),
        collected=len(tally.selected),
        unseen=tuple(sorted(tally.tree_id(n) for n in tally.unseen_dependencies())),
    )


def _destination(cfg: pytest.Config, start: Start) -> Destination:
    """Where the evidence goes: a copy of the user's --junitxml, or genstamp's own recording
    (then pytest's junitxml stays off)."""
    try:
        path = evidence.location(start.checkout, start.settings.evidence)
    except GenstampError as exc:
        return Destination(None, problem=str(exc))
    xmlpath = getattr(cfg.option, "xmlpath", None)
    if xmlpath:
        return Destination(path, written=Path(os.path.abspath(xmlpath)))
    try:
        _probe_writable(path)
    except OSError as exc:
        return Destination(None, problem=f"cannot write the evidence: {_os_reason(exc)}")
    try:
        suite_name = str(cfg.getini("junit_suite_name") or "pytest")
    except ValueError:  # junitxml disabled (-p no:junitxml): its ini names are unknown
        suite_name = "pytest"
    recorder = junit.Recorder(suite_name, getattr(cfg.option, "junitprefix", None))
    return Destination(path, feed=Feed(recorder))


def _first_path_given(cfg: pytest.Config) -> Path | None:
    """The folder of the first path pytest was given to collect that exists (``pytest
    ~/proj/tests`` run from elsewhere), None when it was given none."""
    here = cfg.invocation_params.dir
    for arg in getattr(cfg.known_args_namespace, "file_or_dir", None) or ():
        path = here / str(arg).partition("::")[0]
        try:
            if path.is_dir():
                return path
            if path.exists():
                return path.parent
        except (OSError, ValueError):  # (a NUL byte in it: pytest says what is wrong)
            continue
    return None


def _submodule_of(inner: Place | Checkout, outer: Place | Checkout) -> bool:
    """Whether ``inner``'s work tree is (in) a submodule the ``.gitmodules`` of ``outer``'s
    work tree names: part of the checkout, at the commit it records."""
    rel = os.path.relpath(os.path.realpath(inner.workdir), os.path.realpath(outer.workdir))
    if rel == os.curdir or rel.startswith(os.pardir):
        return False
    rel = rel.replace(os.sep, "/")
    paths = [p.strip('"').strip("/") for p in roots.submodule_paths(Path(outer.workdir))]
    return any(rel == p or rel.startswith(p + "/") for p in paths if p)


def _declaring_superproject(place: Place, where: Path) -> Place | None:
    """The checkout whose submodule ``place`` is, where its ``[tool.genstamp] suites`` declare
    the folder pytest started in (or one above it) a suite: `cd ext && pytest` in a declared
    suite that is a submodule runs a part of that checkout's suite, not the submodule's own."""
    try:
        outer = find_place(Path(place.workdir).parent)
        if outer is None or not _submodule_of(place, outer):
            return None
        suites = config.load(Path(outer.workdir)).suites
    except GenstampError:
        return None
    rel = os.path.relpath(os.path.realpath(where), os.path.realpath(outer.workdir))
    rel = rel.replace(os.sep, "/")
    return outer if any(rel == s or rel.startswith(s + "/") for s in suites if s) else None


def _same_top(one: Place | Checkout, other: Place | Checkout) -> bool:
    return os.path.realpath(one.workdir) == os.path.realpath(other.workdir)


def _start_folder(folder: Path, place: Place | Checkout) -> Path:
    """``folder`` when ``place``'s work tree is the one that holds it (not one nested in it,
    nor one it is nested in), else the top of that work tree: the paths pytest collects name
    the checkout a run tests (``cd ~ && pytest ~/proj/tests`` tests ``proj``, not whatever
    holds the folder it started in)."""
    try:
        holder = find_place(folder)
    except GenstampError:
        holder = None
    return folder if holder is not None and _same_top(holder, place) else Path(place.workdir)


def _trees(cfg: pytest.Config, place: Place | Checkout) -> Trees:
    """Start taking the tree at the start: in-process under git's environment, else by the
    co-process started when pytest registered the plugin (or now)."""
    where = cfg.invocation_params.dir
    if isinstance(place, Checkout):  # git's environment decides, wherever pytest started
        return InProcess(place, where)
    where = _start_folder(where, place)
    try:
        early = _find_early(cfg.pluginmanager)
        coprocess = (early and early.claim(where)) or CoProcess(where)
    except OSError as exc:
        problem = f"cannot start genstamp's co-process: {_os_reason(exc)}"
        return FromCoProcess(place, where, None, problem)
    return FromCoProcess(place, where, coprocess)


# The flag's detail for a module of the checkout whose file no process was seen to run
UNOBSERVED = (
    "imported, but its file was never seen to run: a loader ran other code in its place (a "
    "function made of a code object, runpy's run_path, an exec outside its exec_module)"
)
LOST = (
    "a process of the run could record no load (neither into the run's log nor as a link beside "
    "it: a limit set on its files, a full disk), so what it ran is unknown: lift the limit for "
    "the Python processes the tests start, or free space"
)
_OWN_FOLDER = os.path.dirname(os.path.realpath(__file__))  # the recorder's own modules
# The flag's detail for a module of the work tree loaded before the run began recording whose
# file changed after this process started
LOADED_BEFORE = (
    "imported before the run began recording (an earlier pytest.main() in this process, a"
    " notebook's or a REPL's import), and its file changed after this process started: the code"
    " that ran may be older than the file (run pytest in a new process)"
)
# The process's start is known to a clock tick (10 ms), rounded down, and a file's change time
# may lag the clock by one tick of the kernel's coarse file clock (1-10 ms). A module loaded
# after the start was loaded after the interpreter started up (10 ms at the very least), so a
# change after that load is dated past the start plus this margin; a file changed within the
# margin before the start (a few milliseconds) is taken as changed since.
_START_MARGIN_NS = 5_000_000


_SESSIONS = [0]  # the sessions of genstamp's this process has begun


def _inside_a_run_of(place: Place | Checkout) -> loads.Run | None:
    """The run of ``place``'s own work tree that follows this process (a test of it started
    this pytest): evidence it bound would be a part of that checkout's generation. Not an
    xdist worker of that run: a child of the process that opened it (a process a test starts
    inherits its worker's variables, and is that worker's child)."""
    workdir = os.path.realpath(place.workdir)
    for run in loads.active():
        if os.path.realpath(run.workdir) != workdir:
            continue
        owner = loads.OWNERS.get(run.folder)
        if owner == os.getpid():
            # opened by this very process before it replaced its program (a conftest that
            # re-executes pytest): no run started this one; that run is gone with its image
            child.abandon(run.folder)
            continue
        worker = owner == os.getppid() if owner is not None else not _started_as_pytest()
        if not (_in_worker() and worker):
            return run
    return None


def _started_as_pytest() -> bool:
    """Whether this process's program is pytest (its console script, ``python -m pytest``):
    what it loaded before the recording began, it loaded as it started up, after the process
    started. Not so for ``pytest.main()`` called by a script, a REPL or a notebook."""
    main = sys.modules.get("__main__")
    spec = getattr(main, "__spec__", None)
    if getattr(spec, "name", None) in ("pytest", "pytest.__main__"):
        return True
    file = getattr(main, "__file__", None)
    return isinstance(file, str) and os.path.basename(file) in ("pytest", "py.test")


def _changed_since_loaded(modules: Mapping[str, Any], workdir: str) -> list[audit.Flag]:
    """The modules of the work tree loaded before the recording began (``modules``: none of
    them seen to load) whose file changed since this process started: judging them by their
    file as it is now would vouch for code nobody knows ran (a second ``pytest.main()`` in one
    interpreter, a notebook that imported the package before an edit). A file unchanged since
    the process started holds what any load of it read. Where ``/proc`` does not tell the
    process's start, nothing is said."""
    from genstamp import audit

    started = _process_start_ns()
    if started is None:
        return []
    found = []
    for name, module in list(modules.items()):
        origin = overrides.origin(module)
        if not origin or not inside(origin, workdir) or installed(origin):
            continue
        if audit.in_environment(origin, workdir):  # an environment's: the installer's code
            continue
        try:
            changed = os.stat(origin).st_ctime_ns >= started + _START_MARGIN_NS
        except OSError:
            continue
        if changed:
            rel = os.path.relpath(origin, workdir).replace(os.sep, "/")
            where = f"<code loaded before the run from {rel}>"
            found.append(audit.Flag(audit.FOREIGN, name, where, LOADED_BEFORE))
    return found


def _process_start_ns() -> int | None:
    """When this process started, by the wall clock (from ``/proc``: clock ticks since boot);
    None where that cannot be told."""
    ticks = loads.started(os.getpid())
    try:
        since_boot = time.clock_gettime_ns(time.CLOCK_BOOTTIME)
        hz = os.sysconf("SC_CLK_TCK")
        return time.time_ns() - since_boot + int(ticks) * 1_000_000_000 // hz
    except (AttributeError, OSError, ValueError):
        return None


def _unobserved(
    modules: Mapping[str, Any],
    earlier: Mapping[str, Any],
    roots: Iterable[str],
    workdir: str,
    seen: set[str],
) -> list[audit.Flag]:
    """The modules of the checkout's import roots imported since the recording began whose
    Python source in the work tree no process was seen to run (``seen``: the paths the
    recorder saw, and the names of modules it saw run from text under a name of no file):
    their code ran some way no audit event shows, so what ran is unknown. Only plain modules,
    read without running any of their code: not a lazy module or an alias not yet loaded (its
    body has not run), nor genstamp's own (the recorder's imports are not recorded)."""
    from genstamp import audit

    tops = set(roots)
    found = []
    for name, module in list(modules.items()):
        if module is None or name in earlier or name in seen or name.partition(".")[0] not in tops:
            continue
        # Only a plain module, read from its own dict: reading a proxy (LazyLoader's module
        # not yet loaded, apipkg's alias) imports what it stands for, and a module's
        # ``__getattr__`` may too; whatever a test put in sys.modules may raise.
        if type(module) is not ModuleType:
            continue
        try:
            held = object.__getattribute__(module, "__dict__")
            spec = held.get("__spec__")
            origin = getattr(spec, "origin", None) or held.get("__file__")
        except Exception:
            continue
        if not isinstance(origin, str) or not origin.endswith(".py"):
            continue
        real = os.path.realpath(origin)
        if real in seen or os.path.abspath(origin) in seen or inside(real, _OWN_FOLDER):
            continue
        if inside(real, workdir) and not installed(real) and os.path.isfile(real):
            rel = os.path.relpath(real, workdir).replace(os.sep, "/")
            where = f"<code never seen to run from {rel}>"
            found.append(audit.Flag(audit.FOREIGN, name, where, UNOBSERVED))
    return found


def _is_worker(cfg: pytest.Config) -> bool:
    return hasattr(cfg, "workerinput")


def _os_reason(exc: OSError) -> str:
    reason = exc.strerror or str(exc)
    return f"{exc.filename}: {reason}" if exc.filename else reason


def _probe_writable(path: Path) -> None:
    """Raise OSError unless a file can be created at ``path`` (checked before pytest is told to
    write its JUnit there: a failed write would end the run with an internal error)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.is_dir():
        raise IsADirectoryError(errno.EISDIR, "is a folder", str(path))
    fd, probe = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".probe", dir=path.parent)
    os.close(fd)
    os.unlink(probe)


# -- the co-process started early, until the session claims it -------------------------------


class _Early:
    """The co-process started when pytest registered the plugin, until the session claims it;
    registered as the plugin ``genstamp-early``. Stopped if nobody does."""

    def __init__(self, where: Path, coprocess: CoProcess) -> None:
        self.where = where
        self.coprocess: CoProcess | None = coprocess
        atexit.register(self.close)  # pytest may end before a session (--version, a usage error)

    def claim(self, where: Path) -> CoProcess | None:
        """The co-process, if it was started for ``where``."""
        coprocess, self.coprocess = self.coprocess, None
        atexit.unregister(self.close)
        if coprocess is not None and where != self.where:
            coprocess.close(abandon=True)
            return None
        return coprocess

    def close(self) -> None:
        coprocess, self.coprocess = self.coprocess, None
        atexit.unregister(self.close)
        if coprocess is not None:
            coprocess.close(abandon=True)

    @pytest.hookimpl
    def pytest_unconfigure(self, config: pytest.Config) -> None:
        self.close()

    @pytest.hookimpl(wrapper=True)
    def pytest_load_initial_conftests(self) -> Generator[None, object, object]:
        """A conftest of the work tree that fails to import ends the run before any test (pytest
        exits 4, and no session ends to bind evidence): the newest run of the tree failed, as a
        run whose tests fail does (``genstamp.refuted``), so no earlier pass answers for it."""
        try:
            return (yield)
        except Exception as exc:
            if type(exc).__name__ == "ConftestImportFailure":
                self.refute(str(getattr(exc, "path", "")))
            raise

    def refute(self, conftest: str) -> None:
        """Record the tree at the start as failed, when ``conftest`` lies in its work tree."""
        coprocess, self.coprocess = self.coprocess, None
        atexit.unregister(self.close)
        if coprocess is None:
            return
        try:
            place = find_place(self.where)
            if place is not None and inside(os.path.realpath(conftest), str(place.workdir)):
                trees = FromCoProcess(place, self.where, coprocess)
                trees.await_start()
                if trees.start is not None:
                    from genstamp import refuted

                    unrecorded = refuted.record_failure(place.gitdir, trees.start)
                    if unrecorded:
                        sys.stderr.write(f"genstamp: {unrecorded}\n")
        except Exception:  # never a traceback from the plugin (pytest says what failed)
            pass
        finally:
            coprocess.close(abandon=True)


def _find_early(pluginmanager: pytest.PytestPluginManager) -> _Early | None:
    early = pluginmanager.get_plugin(_EARLY_PLUGIN)
    return early if isinstance(early, _Early) else None


# -- module-level hooks: find the checkout, then hand over to a Session -------------------------


@pytest.hookimpl
def pytest_addoption(parser: pytest.Parser, pluginmanager: pytest.PytestPluginManager) -> None:
    """pytest calls this as it registers the plugin, long before a session starts: the
    co-process started as this module was imported (or, for a later configuration in the same
    process, one started now) is held until the session claims it, so that it opens the
    repository and takes the tree at the start while pytest is still starting up and
    collecting, rather than after."""
    if _find_early(pluginmanager) is not None:
        return
    prestarted = _PRESTARTED.pop() if _PRESTARTED else None
    if prestarted is not None:
        atexit.unregister(prestarted[1].close)
        if prestarted[0] != Path.cwd():
            prestarted[1].close(abandon=True)
            prestarted = None
    started = prestarted or _start_early()
    if started is not None:
        atexit.unregister(started[1].close)  # the early plugin stops it if nobody claims it
        pluginmanager.register(_Early(*started), _EARLY_PLUGIN)


@pytest.hookimpl(tryfirst=True)
def pytest_load_initial_conftests(early_config: pytest.Config) -> None:
    where = early_config.invocation_params.dir
    place: Place | Checkout | None
    try:
        if os.environ.get("GIT_DIR") or os.environ.get("GIT_WORK_TREE"):
            # git's environment, read as git reads it in the folder pytest started in:
            # libgit2 decides, in-process
            place = open_checkout(where, environment=True)
        else:
            place = find_place(where)  # confirmed by the co-process (libgit2) before any test
            if place is not None:
                place = _declaring_superproject(place, where) or place
            given = _first_path_given(early_config)
            other = find_place(given) if given is not None else None
            if other is not None and (place is None or not _same_top(other, place)):
                # (a repository nested in the other either way), but not a submodule of the
                # checkout pytest started in, whose run it is (`pytest lib tests`)
                if place is None or not _submodule_of(other, place):
                    place = other
    except GenstampError:
        place = None  # not a git work tree: silent
    # xdist's --looponfail: this process runs no session; each session runs in a process it
    # starts, which is the run (not a pytest a test of this one started)
    looping = bool(getattr(early_config.known_args_namespace, "looponfail", False))
    run = _inside_a_run_of(place) if place is not None and not looping else None
    if place is None or looping or run is not None:
        # not a git work tree (silent), or a pytest that a test of this checkout's own run
        # started (a test of a CLI, a fixture project in the tree): its tests are no part of
        # the suite, and what it loads is that run's, which follows it; its assertion-rewritten
        # test modules come from that run's cache too (pytest's own is checked by mtime and
        # size alone before 9.2: an edit that keeps both ran the old test)
        if run is not None and run.cache_root is not None:
            unroute = loader.route_rewrite_cache(run.workdir, run.cache_root)
            if unroute is not None:
                early_config.add_cleanup(unroute)
        if (early := _find_early(early_config.pluginmanager)) is not None:
            early.close()
        return
    session = Session(early_config, begin(place, _pythonpath(early_config)))
    session.own_process = _SESSIONS[0] == 0 and _started_as_pytest()
    _SESSIONS[0] += 1
    early_config.pluginmanager.register(session, _SESSION_PLUGIN)
    early_config.pluginmanager.register(session.tally, _TALLY_PLUGIN)


def _empty_folders(
    folders: Sequence[str], ignored: Sequence[str], workdir: Path
) -> tuple[str, ...]:
    """The folders the audit found empty that the gate refuses: not ignored, nor at or above
    a submodule's path (``.gitmodules``: one not checked out is empty in every clone)."""
    if not folders:
        return ()
    links = roots.submodule_paths(workdir)
    return tuple(
        f
        for f in folders
        if f not in ignored and not any(link == f or link.startswith(f"{f}/") for link in links)
    )


def _files_below(
    workdir: Path, folders: Sequence[str], loaded: Sequence[str] = ()
) -> dict[str, list[str] | None]:
    """The files below each of ``folders`` (work-tree paths), as work-tree paths: those of
    ``loaded`` there where there are some (not walked), else every file; None for a folder
    that holds more than ``_FILES_BELOW`` (it is taken to hold a file of the tree)."""
    out: dict[str, list[str] | None] = {}
    for folder in folders:
        mine = [f for f in loaded if f.startswith(f"{folder}/")]
        if mine:
            out[folder] = mine
            continue
        found: list[str] = []
        for here, dirs, files in os.walk(workdir / folder):
            rel = Path(here).relative_to(workdir).as_posix()
            links = [d for d in dirs if os.path.islink(os.path.join(here, d))]  # (not entered)
            found += [f"{rel}/{name}" for name in [*files, *links]]
            if len(found) > _FILES_BELOW:
                break
        out[folder] = found if len(found) <= _FILES_BELOW else None
    return out


_FILES_BELOW = 2000


def _namespace_folders(
    below: Mapping[str, list[str] | None], ignored: Sequence[str]
) -> tuple[tuple[str, ...], set[str]]:
    """Of the namespace packages' folders (with the files ``below`` each), those no tree holds
    (every file in them is one git ignores: a removed package's bytecode, a log; or there is
    none; an ignored folder is ``ignored-code``'s), and those it holds (a file git does not
    ignore is in them)."""
    skip = set(ignored)
    unheld = tuple(
        folder
        for folder, files in below.items()
        if folder not in skip and files is not None and all(f in skip for f in files)
    )
    held = {folder for folder, files in below.items() if any(f not in skip for f in files or ())}
    return unheld, held


def _pythonpath(cfg: pytest.Config) -> list[Path]:
    """pytest's ``pythonpath`` setting (absolute folders), [] where pytest has none."""
    try:
        return [Path(p) for p in cfg.getini("pythonpath")]
    except (ValueError, TypeError):
        return []


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config: pytest.Config) -> None:
    session = config.pluginmanager.get_plugin(_SESSION_PLUGIN)
    if not isinstance(session, Session) or _is_worker(config):
        if (early := _find_early(config.pluginmanager)) is not None:
            early.close()
        return
    # An xdist worker is not known as one before pytest_configure, and needs no tree.
    session.trees = _trees(config, session.start.checkout)
    session.destination = dest = _destination(config, session.start)
    if getattr(config.option, "cov_append", False):  # (before the run writes its own data)
        session.coverage_left = overrides.earlier_coverage(config)
    if dest.feed is not None:
        config.pluginmanager.register(dest.feed, _FEED_PLUGIN)


@pytest.hookimpl
def pytest_unconfigure(config: pytest.Config) -> None:
    session = config.pluginmanager.get_plugin(_SESSION_PLUGIN)
    if isinstance(session, Session):
        session.end_running()
        session.check_the_end()
        session.restore()
        session.flush()
