"""The pytest plugin: binds the JUnit evidence to the generation and the tested tree.

Registered through the ``pytest11`` entry point as ``genstamp``; ``-p no:genstamp`` turns it off.
Outside a git work tree it does nothing. It never changes a test outcome or the exit status:
when the evidence cannot be bound it says so in one line.
"""

from __future__ import annotations

import atexit
import contextlib
import errno
import importlib.machinery
import importlib.util
import json
import marshal
import os
import shutil
import subprocess
import sys
import tempfile
import threading
from collections.abc import Callable, Iterable, Mapping
from datetime import datetime, timezone
from importlib.machinery import ModuleSpec
from pathlib import Path
from types import CodeType, ModuleType
from typing import IO, Any, ClassVar

import pytest

import genstamp
from genstamp import audit, config, evidence, generation, junit
from genstamp.atomic import write_atomic
from genstamp.errors import GenstampError
from genstamp.repo import Checkout, Place, find_place, open_checkout

_KEY = "genstamp"
_PYCACHE_ENV = "PYTHONPYCACHEPREFIX"
_CACHE = "pycache"  # in the state folder: bytecode of the checkout's modules
_CHECKED_HASH = (0b11).to_bytes(4, "little")  # PEP 552: hash-based, always checked


def _is_worker(cfg: pytest.Config) -> bool:
    return hasattr(cfg, "workerinput")


_HELPER_MAIN = (
    "import sys; here = sys.argv[1]; sys.path[:1] = [] if here in sys.path[1:] else [here]; "
    "from genstamp._session import main; sys.exit(main(sys.argv[2:]))"
)


class _Helper:
    """The co-process (``genstamp._session``) that opens the repository with libgit2 and takes
    both trees, so that the test process never imports pygit2. Its answers are read when they
    are needed; each is a dict, ``{"error": ...}`` when it could not give one."""

    def __init__(self, folder: Path) -> None:
        # This very genstamp (its protocol), found where the plugin's came from; that folder
        # goes first on sys.path only when it is not there already (site-packages, say, must
        # not come before the standard library).
        here = os.path.dirname(os.path.dirname(os.path.abspath(genstamp.__file__)))
        self.proc: subprocess.Popen[str] | None = subprocess.Popen(
            [sys.executable, "-c", _HELPER_MAIN, here, str(folder)],
            cwd=here,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
            encoding="utf-8",
            errors="surrogateescape",
        )

    def read(self) -> dict[str, Any]:
        proc = self.proc
        if proc is None or proc.stdout is None:
            return {"error": "genstamp's co-process is gone"}
        line = proc.stdout.readline()
        try:
            data = json.loads(line)
        except ValueError:
            data = None
        if not isinstance(data, dict):
            code = proc.poll()
            return {"error": f"genstamp's co-process gave no answer (exit status {code})"}
        return data

    def send(self, line: str) -> None:
        stdin: IO[str] | None = self.proc.stdin if self.proc is not None else None
        if stdin is not None:
            with contextlib.suppress(OSError, ValueError):
                stdin.write(line + "\n")
                stdin.flush()

    def close(self, *, abandon: bool = False) -> None:
        """End the co-process: it ends itself at the end of its input, unless ``abandon``
        (nobody needs its answers: it is stopped at once, even in the middle of a walk)."""
        proc, self.proc = self.proc, None
        if proc is None:
            return
        for stream in (proc.stdin, proc.stdout):
            if stream is not None:
                with contextlib.suppress(OSError, ValueError):
                    stream.close()
        if abandon:
            proc.kill()
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


class Session:
    """What one pytest process learns during the run; registered as a plugin object.

    On the normal path the checkout is found in pure Python (``find_place``), and a co-process
    confirms it with libgit2 and takes the trees (``_Helper``). With ``GIT_DIR`` or
    ``GIT_WORK_TREE`` set, the repository is opened here instead (``repo`` is that handle)."""

    def __init__(self, place: Place | Checkout, cfg: pytest.Config) -> None:
        self.checkout = place
        self.repo: Checkout | None = place if isinstance(place, Checkout) else None
        self.helper: _Helper | None = None
        self.inert = False  # libgit2 found no checkout here: the plugin does nothing
        self.config = cfg
        self.problem: str | None = None  # why the evidence will be unbound, if it will
        self.gen: generation.Generation | None = None
        self.tree_start: str | None = None
        self.tree_problem: str | None = None  # why the tree at the start is unknown
        self.side: Checkout | None = None  # a second handle on the repository, for a thread
        self._start_thread: threading.Thread | None = None
        self.recorder: junit.Recorder | None = None  # writes the evidence when pytest does not
        self.deferred: list[tuple[Callable[[Any], None], Any]] = []  # for the recorder, in order
        self.settings = config.Config()
        self.collected = 0
        self.deselected = 0
        self.collect_errors = 0
        self.executed: set[str] = set()
        self.worker_outputs: list[dict[str, Any]] = []
        self.cache_dir: str | None = None
        self._hook: Callable[[str], Any] | None = None
        self._unroute: Callable[[], None] | None = None
        self.evidence_path: Path | None = None
        self.written: Path | None = None  # the JUnit file pytest writes (absolute)
        self.pending: list[str] = []  # lines for the user, shown once

    # -- start ------------------------------------------------------------------------------
    def start(self) -> None:
        try:
            self.settings = config.load(self.checkout.workdir)
        except GenstampError as exc:
            self.problem = str(exc)
        try:
            self.gen = generation.current(self.checkout)
        except GenstampError as exc:
            self.problem = str(exc)
        self._redirect_bytecode()

    def note_tree_start(self) -> None:
        """Start taking the tree at the start, in the controller only (an xdist worker is not
        known as one before ``pytest_configure``, and needs no tree). The co-process, started
        when pytest registered the plugin (or now), does it while pytest starts up and
        collects; ``await_tree_start`` waits for it before the first test runs.
        In-process, a thread does it (libgit2 walks the tree without the GIL), on a repository
        handle of its own."""
        if self.repo is None:
            try:
                where = self.config.invocation_params.dir
                early = _find_early(self.config.pluginmanager)
                self.helper = (early and early.claim(where)) or _Helper(where)
            except OSError as exc:
                self.tree_problem = f"cannot start genstamp's co-process: {_os_reason(exc)}"
            return
        self._start_thread = threading.Thread(
            target=self._take_tree_start, name="genstamp-tree-start", daemon=True
        )
        self._start_thread.start()

    def _take_tree_start(self) -> None:
        from genstamp.identity import tree_identity

        try:
            assert self.repo is not None
            side = open_checkout(self.config.invocation_params.dir)
            if side.gitdir != self.repo.gitdir or side.workdir != self.repo.workdir:
                return  # not the same checkout after all: taken in the main thread instead
            self.side = side
            self.tree_start = tree_identity(side)
        except GenstampError as exc:
            self.tree_problem = str(exc)
        except Exception as exc:  # reported when the evidence is bound, never a traceback
            self.tree_problem = f"{type(exc).__name__}: {exc}"

    def await_tree_start(self) -> None:
        helper = self.helper
        if helper is not None and self.tree_start is None and self.tree_problem is None:
            self._confirm(helper.read())
            if self.tree_problem is None:
                answer = helper.read()
                if "error" in answer or not isinstance(answer.get("tree"), str):
                    self.tree_problem = str(answer.get("error", "no tree at the start"))
                else:
                    self.tree_start = answer["tree"]
        thread, self._start_thread = self._start_thread, None
        if thread is None:
            return
        thread.join()
        if self.side is None and self.tree_problem is None and self.repo is not None:
            from genstamp.identity import tree_identity

            try:
                self.tree_start = tree_identity(self.repo)
            except GenstampError as exc:
                self.tree_problem = str(exc)

    def _confirm(self, answer: dict[str, Any]) -> None:
        """The checkout libgit2 opened must be the one found in pure Python, or nothing the
        co-process says may speak for this run."""
        if "error" in answer:
            # libgit2 finds no usable checkout here: as when the plugin opened it itself, it
            # stays silent (nothing here is a checkout it may write evidence for).
            self.inert = True
            self.tree_problem = str(answer["error"])
            return
        found = (str(answer.get("workdir")), str(answer.get("gitdir")))
        if found != (str(self.checkout.workdir), str(self.checkout.gitdir)):
            self.tree_problem = (
                f"libgit2 opens the checkout {found[0]} (git dir {found[1]}), not "
                f"{self.checkout.workdir} (git dir {self.checkout.gitdir}) found from "
                f"{self.config.invocation_params.dir}"
            )

    def _tree_end(self) -> tuple[str, str | None]:
        """The tree at the end and HEAD, from the co-process (asked before the audit)."""
        assert self.helper is not None
        answer = self.helper.read()
        tree = answer.get("tree")
        if "error" in answer or not isinstance(tree, str):
            raise GenstampError(
                f"the tree at the end is unknown: {answer.get('error', 'no answer')}"
            )
        head = answer.get("head")
        return tree, head if isinstance(head, str) else None

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtestloop(self, session: pytest.Session) -> None:
        """No test has run yet: the tree at the start must be known by now."""
        self.await_tree_start()

    def _redirect_bytecode(self) -> None:
        """Import the checkout's modules through a loader that never reads the ``__pycache__``
        beside a source (CPython trusts a pyc whose source kept its mtime and size): only
        bytecode in genstamp's cache that records the hash of the source as it is now. Every
        other module (the standard library, site-packages) keeps its own bytecode."""
        if sys.pycache_prefix is not None or os.environ.get(_PYCACHE_ENV):
            return  # the user chose a prefix; the audit checks what came from it
        self.cache_dir = str(self.checkout.state / _CACHE)
        self._hook = _install_loader(
            str(self.checkout.workdir), os.path.join(self.cache_dir, "compiled")
        )
        self._unroute = _route_rewrite_cache(str(self.checkout.workdir), self.cache_dir)

    def restore(self) -> None:
        self.await_tree_start()
        if self.helper is not None:
            self.helper.close()
            self.helper = None
        if self._hook is not None:
            _uninstall_loader(self._hook, str(self.checkout.workdir))
            self._hook = None
        if self._unroute is not None:
            self._unroute()
            self._unroute = None

    # -- counting -----------------------------------------------------------------------------
    @pytest.hookimpl
    def pytest_deselected(self, items: list[pytest.Item]) -> None:
        self.deselected += len(items)

    @pytest.hookimpl
    def pytest_collectreport(self, report: pytest.CollectReport) -> None:
        if report.failed:
            self.collect_errors += 1
        if self.recorder is not None:
            self.deferred.append((self.recorder.collect_report, report))

    @pytest.hookimpl
    def pytest_collection_finish(self, session: pytest.Session) -> None:
        self.collected = len(session.items)

    @pytest.hookimpl
    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if report.when == "setup":
            self.executed.add(report.nodeid)
        if self.recorder is not None:
            # Recorded at the end, while the co-process walks the tree: off the tests' path.
            self.deferred.append((self.recorder.test_report, report))

    @pytest.hookimpl
    def pytest_sessionstart(self, session: pytest.Session) -> None:
        if self.recorder is not None:
            self.recorder.session_start()

    @pytest.hookimpl
    def pytest_internalerror(self, excrepr: Any, excinfo: Any) -> None:
        if self.recorder is not None:
            self.deferred.append((self.recorder.internal_error, str(excrepr)))

    @pytest.hookimpl(optionalhook=True)
    def pytest_testnodedown(self, node: Any, error: Any) -> None:
        output = getattr(node, "workeroutput", {}).get(_KEY)
        if isinstance(output, str):
            with contextlib.suppress(ValueError):
                self.worker_outputs.append(json.loads(output))

    # -- finish -------------------------------------------------------------------------------
    def audit(self) -> audit.Audit:
        packages = self.settings.packages
        if packages is None:
            packages = audit.checkout_packages(self.checkout.workdir)
        return audit.audit_modules(
            self.checkout.workdir,
            packages,
            self.gen.created_ns if self.gen else None,
            modules=_auditable(sys.modules, str(self.checkout.workdir), packages),
            trusted_cache=self.cache_dir,
        )

    @pytest.hookimpl(trylast=True)
    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> None:
        if _is_worker(self.config):
            data: dict[str, Any] = {"collected": self.collected, "deselected": self.deselected}
            try:
                data["audit"] = self.audit().to_json()
            except Exception as exc:  # never fail a worker because of genstamp
                data["error"] = f"the audit failed in a worker: {type(exc).__name__}: {exc}"
            self.config.workeroutput[_KEY] = json.dumps(data)  # type: ignore[attr-defined]
            return
        self.await_tree_start()
        if self.inert:
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
        self._forget_earlier()
        self._say(f"genstamp: evidence not written: {reason}")

    def _forget_earlier(self) -> None:
        """An earlier run's evidence at the default location must not speak for this run (unless
        it is the user's own --junitxml, which pytest overwrote)."""
        path = self.evidence_path
        if path is not None and self.written != path:
            with contextlib.suppress(OSError):
                path.unlink(missing_ok=True)

    def _bind(self, session: pytest.Session, exitstatus: int) -> None:
        path = self.evidence_path
        if path is None:
            raise GenstampError(self.problem or "no evidence path")
        written = self.written
        if written is not None and not written.is_file():
            raise GenstampError(f"pytest wrote no JUnit file at {written}")
        self.await_tree_start()
        if self.tree_start is None:
            raise GenstampError(
                self.tree_problem or self.problem or "the tree at the start is unknown"
            )
        # The tree at the end is taken by the co-process, or in-process by a thread (libgit2
        # walks without the GIL), while this one audits; nothing here touches the repository
        # handle it uses until it is done.
        end: _Task | None = None
        if self.helper is not None:
            self.helper.send("end")
        else:
            from genstamp.identity import tree_identity

            assert self.repo is not None
            end = _Task(tree_identity, self.side or self.repo)
            end.start()
        merged: audit.Audit | None = None
        reasons: list[str] = []
        failure: Exception | None = None
        try:
            merged = audit.merge(
                [self.audit()]
                + [audit.from_json(o["audit"]) for o in self.worker_outputs if "audit" in o]
            )
            reasons = self._partial_reasons(session, exitstatus)
            if self.recorder is not None and written is None:
                for record, item in self.deferred:
                    record(item)
                self.deferred.clear()
                self.recorder.render()
        except Exception as exc:  # raised below, once the thread is done
            failure = exc
        if end is None:
            tree_end, head = self._tree_end()
        else:
            from genstamp.repo import head_id

            end.join()
            if end.error is not None:
                if isinstance(end.error, GenstampError):
                    raise GenstampError(
                        f"the tree at the end is unknown: {end.error}"
                    ) from end.error
                raise end.error
            assert end.result is not None and self.repo is not None
            tree_end, head = end.result, head_id(self.repo.repo)
        worker_errors = [str(o["error"]) for o in self.worker_outputs if "error" in o]
        if worker_errors:
            raise GenstampError(worker_errors[0])
        if failure is not None:
            raise failure
        assert merged is not None
        props = {
            evidence.P_RUNNER: "pytest",
            evidence.P_CHECKOUT: str(self.checkout.gitdir),
            evidence.P_GENERATION: self.gen.id if self.gen else evidence.NONE,
            evidence.P_TREE_START: self.tree_start,
            evidence.P_TREE_END: tree_end,
            evidence.P_HEAD: head or evidence.NONE,
            evidence.P_SELECTION: "partial" if reasons else "full",
            evidence.P_SELECTION_REASONS: "; ".join(reasons),
            evidence.P_AUDIT: merged.to_json(),
            evidence.P_CREATED: datetime.now(timezone.utc).isoformat(timespec="seconds"),
        }
        key = self.gen.key if self.gen else ""
        if written is None:
            assert self.recorder is not None
            write_atomic(path, self.recorder.document(props, key))
        else:
            evidence.bind(written, props, key)
            try:
                evidence.copy_to(written, path)
            except OSError as exc:
                raise GenstampError(
                    f"{written} is bound, but the copy the gate reads could not be written: "
                    f"{_os_reason(exc)}"
                ) from exc
        if self.problem:
            state = "written but unbound" if self.gen is None else "written"
            self._say(f"genstamp: evidence {state}: {self.problem}")

    def _partial_reasons(self, session: pytest.Session, exitstatus: int) -> list[str]:
        opt = self.config.option
        reasons = []
        if getattr(opt, "keyword", ""):
            reasons.append(f"-k {opt.keyword}")
        if getattr(opt, "markexpr", ""):
            reasons.append(f"-m {opt.markexpr}")
        if getattr(opt, "lf", False):
            reasons.append("--lf")
        reasons.extend(_ignored_on_the_command_line(self.config))
        if getattr(opt, "stepwise", False) or getattr(opt, "stepwise_skip", False):
            reasons.append("--sw")
        if getattr(opt, "collectonly", False):
            reasons.append("--collect-only")
        reasons.extend(_narrowed_args(self.config))
        deselected = max([self.deselected, *(o.get("deselected", 0) for o in self.worker_outputs)])
        if deselected:
            reasons.append(f"{deselected} deselected")
        if self.collect_errors:
            reasons.append(f"{self.collect_errors} collection errors")
        if exitstatus == pytest.ExitCode.INTERRUPTED:
            reasons.append("interrupted")
        elif session.shouldstop or session.shouldfail:
            reasons.append(f"stopped early ({session.shouldstop or session.shouldfail})")
        collected = max([self.collected, *(o.get("collected", 0) for o in self.worker_outputs)])
        if len(self.executed) < collected:
            reasons.append(f"{len(self.executed)} of {collected} collected tests ran")
        return reasons

    def _say(self, line: str) -> None:
        """Tell the user in the terminal summary (or on stderr at the end, without one)."""
        self.pending.append(line)

    @pytest.hookimpl
    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        for line in self.pending:
            terminalreporter.write_line(line, yellow=True)
        self.pending.clear()

    def flush(self) -> None:
        for line in self.pending:
            print(line, file=sys.stderr)
        self.pending.clear()


class _Task(threading.Thread):
    """Runs ``fn(arg)`` in a thread; its result or its exception is kept for the caller."""

    def __init__(self, fn: Callable[[Checkout], str], arg: Checkout) -> None:
        super().__init__(name="genstamp-tree-end", daemon=True)
        self._fn = fn
        self._arg = arg
        self.result: str | None = None
        self.error: Exception | None = None

    def run(self) -> None:
        try:
            self.result = self._fn(self._arg)
        except Exception as exc:
            self.error = exc


class _RealPaths:
    """``os.path.realpath`` for many files in few folders: each folder resolved once, from its
    parent's resolved path and one ``lstat`` (folders share most of their leading parts)."""

    def __init__(self) -> None:
        self._folders: dict[str, str] = {}

    def __call__(self, path: str) -> str:
        if ".." in path.split(os.sep):
            return os.path.realpath(path)  # ".." applies after a link is followed
        head, tail = os.path.split(os.path.abspath(path))
        if not tail:
            return head  # the root
        full = os.path.join(self._folder(head), tail)
        return os.path.realpath(full) if os.path.islink(full) else full

    def _folder(self, folder: str) -> str:
        known = self._folders.get(folder)
        if known is None:
            head, tail = os.path.split(folder)
            if not tail:
                known = os.path.realpath(folder)
            else:
                full = os.path.join(self._folder(head), tail)
                known = os.path.realpath(full) if os.path.islink(full) else full
            self._folders[folder] = known
        return known


def _auditable(
    modules: Mapping[str, ModuleType | None], workdir: str, packages: Iterable[str]
) -> dict[str, ModuleType]:
    """The modules ``audit.audit_modules`` has something to say about: those of the audited
    packages, and those loaded from inside the work tree. Every other module it passes over
    after resolving its path; resolving hundreds of paths one folder at a time costs more."""
    wanted = set(packages)
    real = _RealPaths()
    kept = {}
    for name, module in list(modules.items()):
        if module is None:
            continue
        if name.partition(".")[0] in wanted:
            kept[name] = module
            continue
        spec = getattr(module, "__spec__", None)
        origin = getattr(spec, "origin", None) or getattr(module, "__file__", None)
        if isinstance(origin, str) and origin not in ("built-in", "frozen"):
            if audit.inside(real(origin), workdir):
                kept[name] = module
    return kept


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


# -- the checkout's modules: compiled from the source, or from bytecode that hashes to it -------


class _CheckoutLoader(importlib.machinery.SourceFileLoader):
    """Loads a module of the checkout. Bytecode is read only from ``cache_root`` and only when
    it is a checked-hash pyc (PEP 552) of the source as it is now; otherwise the source is
    compiled, and the bytecode kept there for the next run."""

    workdir: ClassVar[str] = ""
    cache_root: ClassVar[str] = ""

    def create_module(self, spec: ModuleSpec) -> ModuleType | None:
        if spec.origin:
            spec.cached = self.cache_path(spec.origin)  # what the audit sees as its bytecode
        return None

    @classmethod
    def cache_path(cls, source: str) -> str | None:
        tag = sys.implementation.cache_tag
        real = os.path.realpath(source)
        if tag is None or not audit.inside(real, cls.workdir):
            return None
        folder = os.path.relpath(os.path.dirname(real), cls.workdir)
        opt = f".opt-{sys.flags.optimize}" if sys.flags.optimize else ""
        stem = os.path.splitext(os.path.basename(real))[0]
        return os.path.normpath(os.path.join(cls.cache_root, folder, f"{stem}.{tag}{opt}.pyc"))

    def get_code(self, fullname: str) -> CodeType:
        source_path = self.get_filename(fullname)
        source = self.get_data(source_path)
        digest = importlib.util.source_hash(source)
        cached = self.cache_path(source_path)
        header = importlib.util.MAGIC_NUMBER + _CHECKED_HASH + digest
        if cached is not None:
            with contextlib.suppress(OSError, EOFError, ValueError, TypeError):
                with open(cached, "rb") as fh:
                    data = fh.read()
                if data[:16] == header:
                    code = marshal.loads(data[16:])
                    if isinstance(code, CodeType) and code.co_filename == source_path:
                        return code
        code = self.source_to_code(source, source_path)
        if cached is not None and not sys.dont_write_bytecode:
            _write_pyc(cached, header + marshal.dumps(code))
        return code


def _write_pyc(path: str, data: bytes) -> None:
    """Atomically, or not at all (a cache: a failed write costs a compile next time)."""
    with contextlib.suppress(OSError):
        os.makedirs(os.path.dirname(path), exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=os.path.dirname(path), suffix=".tmp")
        try:
            with os.fdopen(fd, "wb") as fh:
                fh.write(data)
            os.replace(tmp, path)
        except OSError:
            os.unlink(tmp)
            raise


def _install_loader(workdir: str, cache_root: str) -> Callable[[str], Any]:
    """Put a path hook for folders inside ``workdir`` first, and forget the finders already
    made for them. Returns the hook (to uninstall it)."""
    loader = type(
        "CheckoutLoader", (_CheckoutLoader,), {"workdir": workdir, "cache_root": cache_root}
    )
    details: list[tuple[Any, list[str]]] = [
        (importlib.machinery.ExtensionFileLoader, importlib.machinery.EXTENSION_SUFFIXES),
        (loader, importlib.machinery.SOURCE_SUFFIXES),
        (importlib.machinery.SourcelessFileLoader, importlib.machinery.BYTECODE_SUFFIXES),
    ]

    def checkout_hook(path: str) -> importlib.machinery.FileFinder:
        real = os.path.realpath(path or os.getcwd())
        if not audit.inside(real, workdir) or not os.path.isdir(real):
            raise ImportError("not a folder of the checkout")
        return importlib.machinery.FileFinder(path, *details)

    sys.path_hooks.insert(0, checkout_hook)
    _forget_finders(workdir)
    return checkout_hook


def _uninstall_loader(hook: Callable[[str], Any], workdir: str) -> None:
    with contextlib.suppress(ValueError):
        sys.path_hooks.remove(hook)
    _forget_finders(workdir)


def _forget_finders(workdir: str) -> None:
    realpath = _RealPaths()
    for entry in list(sys.path_importer_cache):
        if audit.inside(realpath(entry or os.getcwd()), workdir):
            sys.path_importer_cache.pop(entry, None)


def _route_rewrite_cache(workdir: str, cache_root: str) -> Callable[[], None] | None:
    """pytest keeps the assertion-rewritten bytecode of test modules and conftests beside them,
    validated (before pytest 9.2) by mtime and size only. For the checkout's files, point it
    into genstamp's cache instead, in a folder named by the hash of the source: bytecode found
    there can only have been compiled from that very source, whatever pytest checks. Returns
    the undo, or None when this pytest has no such function to route."""
    try:
        from _pytest.assertion import rewrite
    except ImportError:
        return None
    original = getattr(rewrite, "get_cache_dir", None)
    if not callable(original):
        return None
    base = os.path.join(cache_root, "rewritten")
    realpath = _RealPaths()  # test modules are imported before any test runs

    def get_cache_dir(file_path: Path) -> Path:
        real = realpath(os.fspath(file_path))
        if audit.inside(real, workdir):
            try:
                digest = importlib.util.source_hash(Path(real).read_bytes()).hex()
            except OSError:
                pass
            else:
                folder = Path(base, os.path.relpath(real, workdir))
                with contextlib.suppress(OSError):
                    for older in folder.iterdir():  # bytecode of earlier versions of the file
                        if older.name != digest:
                            shutil.rmtree(older, ignore_errors=True)
                return folder / digest
        return Path(original(file_path))

    setattr(rewrite, "get_cache_dir", get_cache_dir)  # noqa: B010

    def undo() -> None:
        if getattr(rewrite, "get_cache_dir", None) is get_cache_dir:
            setattr(rewrite, "get_cache_dir", original)  # noqa: B010

    return undo


def _ignored_on_the_command_line(cfg: pytest.Config) -> list[str]:
    """``--ignore``/``--ignore-glob`` given for this run (on the command line or in
    PYTEST_ADDOPTS) leave files uncollected, so nothing else counts them; the same options in
    the project's configuration define the suite and do not narrow it."""
    given = [*cfg.invocation_params.args, *os.environ.get("PYTEST_ADDOPTS", "").split()]
    out = []
    for i, arg in enumerate(given):
        for flag in ("--ignore", "--ignore-glob"):
            if arg == flag and i + 1 < len(given):
                out.append(f"{flag} {given[i + 1]}")
            elif arg.startswith(flag + "="):
                out.append(arg.replace("=", " ", 1))
    return out


def _narrowed_args(cfg: pytest.Config) -> list[str]:
    """Reasons why the paths pytest was given cover less than the configured suite."""
    source = cfg.args_source
    if source == pytest.Config.ArgsSource.TESTPATHS:
        return []
    here = cfg.invocation_params.dir
    root = cfg.rootpath
    reasons = []
    run_roots: list[Path] = []
    for arg in cfg.args:
        path_part, sep, _ = arg.partition("::")
        if sep:
            reasons.append(f"node id {arg}")
            continue
        run_roots.append((here / path_part).resolve())
    if reasons and not run_roots:
        return reasons  # node ids only: narrowed already said
    testpaths = cfg.getini("testpaths")
    configured = [(root / t).resolve() for t in testpaths] if testpaths else [root.resolve()]
    for want in configured:
        if not any(want == r or r in want.parents for r in run_roots):
            narrowed = ", ".join(str(r) for r in run_roots) or "nothing"
            reasons.append(f"ran {narrowed}, not all of {want}")
            break
    return reasons


# -- module-level hooks: find the checkout, then hand over to a Session ------------------------

_EARLY_PLUGIN = "genstamp-early"


class _Early:
    """The co-process started when pytest registered the plugin, until the Session claims it;
    registered as the plugin ``genstamp-early``. Stopped if nobody does."""

    def __init__(self, where: Path, helper: _Helper) -> None:
        self.where = where
        self.helper: _Helper | None = helper
        atexit.register(self.close)  # pytest may end before a session (--version, a usage error)

    def claim(self, where: Path) -> _Helper | None:
        """The co-process, if it was started for ``where``."""
        helper, self.helper = self.helper, None
        atexit.unregister(self.close)
        if helper is not None and where != self.where:
            helper.close(abandon=True)
            return None
        return helper

    def close(self) -> None:
        helper, self.helper = self.helper, None
        atexit.unregister(self.close)
        if helper is not None:
            helper.close(abandon=True)

    @pytest.hookimpl
    def pytest_unconfigure(self, config: pytest.Config) -> None:
        self.close()


def _find_early(pluginmanager: pytest.PytestPluginManager) -> _Early | None:
    early = pluginmanager.get_plugin(_EARLY_PLUGIN)
    return early if isinstance(early, _Early) else None


@pytest.hookimpl
def pytest_addoption(parser: pytest.Parser, pluginmanager: pytest.PytestPluginManager) -> None:
    """pytest calls this as it registers the plugin, long before a session starts: the
    co-process starts here, so that it opens the repository and takes the tree at the start
    while pytest is still starting up and collecting, rather than after. Nothing starts in an
    xdist worker (``PYTEST_XDIST_WORKER``; it takes no tree), under git's environment (the
    repository is opened in-process then) or outside a work tree."""
    if any(os.environ.get(v) for v in ("PYTEST_XDIST_WORKER", "GIT_DIR", "GIT_WORK_TREE")):
        return
    where = Path.cwd()
    try:
        if find_place(where) is None or _find_early(pluginmanager) is not None:
            return
        helper = _Helper(where)
    except (GenstampError, OSError):
        return  # the Session tries again, and says why it could not
    pluginmanager.register(_Early(where, helper), _EARLY_PLUGIN)


@pytest.hookimpl(tryfirst=True)
def pytest_load_initial_conftests(early_config: pytest.Config) -> None:
    where = early_config.invocation_params.dir
    place: Place | Checkout | None
    try:
        if os.environ.get("GIT_DIR") or os.environ.get("GIT_WORK_TREE"):
            place = open_checkout(where)  # git's environment: libgit2 decides, in-process
        else:
            place = find_place(where)  # confirmed by the co-process (libgit2) before any test
    except GenstampError:
        place = None  # not a git work tree: silent
    if place is None:
        if (early := _find_early(early_config.pluginmanager)) is not None:
            early.close()
        return
    session = Session(place, early_config)
    try:
        session.start()
    except Exception as exc:  # never a traceback from the plugin
        session.problem = f"{type(exc).__name__}: {exc}"
    early_config.pluginmanager.register(session, "genstamp-session")


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config: pytest.Config) -> None:
    session = config.pluginmanager.get_plugin("genstamp-session")
    if not isinstance(session, Session) or _is_worker(config):
        if (early := _find_early(config.pluginmanager)) is not None:
            early.close()
        return
    session.note_tree_start()
    try:
        session.evidence_path = evidence.location(session.checkout, session.settings.evidence)
    except GenstampError as exc:
        session.problem = str(exc)
        return
    xmlpath = getattr(config.option, "xmlpath", None)
    if xmlpath:
        session.written = Path(os.path.abspath(xmlpath))  # where pytest's junitxml writes
        return
    try:
        _probe_writable(session.evidence_path)
    except OSError as exc:
        session.problem = f"cannot write the evidence: {_os_reason(exc)}"
        session.evidence_path = None
        return
    # The evidence is written from the reports the plugin sees; pytest's junitxml stays off.
    try:
        suite_name = str(config.getini("junit_suite_name") or "pytest")
    except ValueError:  # junitxml disabled (-p no:junitxml): its ini names are unknown
        suite_name = "pytest"
    session.recorder = junit.Recorder(suite_name, getattr(config.option, "junitprefix", None))


@pytest.hookimpl
def pytest_unconfigure(config: pytest.Config) -> None:
    session = config.pluginmanager.get_plugin("genstamp-session")
    if isinstance(session, Session):
        session.restore()
        session.flush()
