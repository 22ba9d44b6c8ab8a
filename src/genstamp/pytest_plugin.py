"""The pytest plugin: binds the JUnit evidence to the generation and the tested tree.

Registered through the ``pytest11`` entry point as ``genstamp``; ``-p no:genstamp`` turns it off.
Outside a git work tree it does nothing. It never changes a test outcome or the exit status:
when the evidence cannot be bound it says so in one line.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import sys
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pytest

from genstamp import audit, config, evidence, generation
from genstamp.errors import GenstampError
from genstamp.identity import tree_identity
from genstamp.repo import Checkout, head_id, open_checkout

_KEY = "genstamp"
_PYCACHE_ENV = "PYTHONPYCACHEPREFIX"
_KEEP_CACHES = 4


def _is_worker(cfg: pytest.Config) -> bool:
    return hasattr(cfg, "workerinput")


class Session:
    """What one pytest process learns during the run; registered as a plugin object."""

    def __init__(self, checkout: Checkout, cfg: pytest.Config) -> None:
        self.checkout = checkout
        self.config = cfg
        self.problem: str | None = None  # why the evidence will be unbound, if it will
        self.gen: generation.Generation | None = None
        self.tree_start: str | None = None
        self.settings = config.Config()
        self.collected = 0
        self.deselected = 0
        self.collect_errors = 0
        self.executed: set[str] = set()
        self.worker_outputs: list[dict[str, Any]] = []
        self.cache_dir: str | None = None
        self._saved_env: tuple[str | None, str | None] | None = None
        self.evidence_path: Path | None = None

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
        if _is_worker(self.config):
            return
        try:
            self.tree_start = tree_identity(self.checkout)
        except GenstampError as exc:
            self.problem = str(exc)
            return
        self._redirect_bytecode(self.tree_start)

    def _redirect_bytecode(self, tree: str) -> None:
        """Keep bytecode in a cache keyed by the tested tree, so a stale ``__pycache__`` in the
        work tree is never read (CPython trusts a pyc whose source keeps its mtime and size)."""
        if sys.pycache_prefix is not None or os.environ.get(_PYCACHE_ENV):
            return  # the user chose a prefix; the audit checks what came from it
        caches = self.checkout.state / "pycache"
        self.cache_dir = str(caches / tree)
        self._saved_env = (os.environ.get(_PYCACHE_ENV), sys.pycache_prefix)
        os.environ[_PYCACHE_ENV] = self.cache_dir  # xdist workers inherit it
        sys.pycache_prefix = self.cache_dir
        with contextlib.suppress(OSError):
            old = sorted(caches.iterdir(), key=lambda p: p.stat().st_mtime, reverse=True)
            for stale in old[_KEEP_CACHES:]:
                if stale.name != tree:
                    shutil.rmtree(stale, ignore_errors=True)

    def restore(self) -> None:
        if self._saved_env is None:
            return
        env, prefix = self._saved_env
        if env is None:
            os.environ.pop(_PYCACHE_ENV, None)
        else:
            os.environ[_PYCACHE_ENV] = env
        sys.pycache_prefix = prefix
        self._saved_env = None

    # -- counting -----------------------------------------------------------------------------
    @pytest.hookimpl
    def pytest_deselected(self, items: list[pytest.Item]) -> None:
        self.deselected += len(items)

    @pytest.hookimpl
    def pytest_collectreport(self, report: pytest.CollectReport) -> None:
        if report.failed:
            self.collect_errors += 1

    @pytest.hookimpl
    def pytest_collection_finish(self, session: pytest.Session) -> None:
        self.collected = len(session.items)

    @pytest.hookimpl
    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if report.when == "setup":
            self.executed.add(report.nodeid)

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
            trusted_cache=self.cache_dir or _env_cache(self.checkout),
        )

    @pytest.hookimpl(trylast=True)
    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> None:
        if _is_worker(self.config):
            data = {
                "audit": self.audit().to_json(),
                "collected": self.collected,
                "deselected": self.deselected,
            }
            self.config.workeroutput[_KEY] = json.dumps(data)  # type: ignore[attr-defined]
            return
        try:
            self._bind(session, exitstatus)
        except GenstampError as exc:
            self._say(f"genstamp: evidence not written: {exc}")
        except OSError as exc:
            self._say(f"genstamp: evidence not written: {exc.strerror or exc}")

    def _bind(self, session: pytest.Session, exitstatus: int) -> None:
        path = self.evidence_path
        if path is None:
            raise GenstampError(self.problem or "no evidence path")
        xmlpath = getattr(self.config.option, "xmlpath", None)
        written = Path(xmlpath) if xmlpath else path
        if not written.is_file():
            raise GenstampError(f"pytest wrote no JUnit file at {written}")
        if self.tree_start is None:
            raise GenstampError(self.problem or "the tree at the start is unknown")
        try:
            tree_end = tree_identity(self.checkout)
        except GenstampError as exc:
            raise GenstampError(f"the tree at the end is unknown: {exc}") from exc
        merged = audit.merge(
            [self.audit()]
            + [audit.from_json(o["audit"]) for o in self.worker_outputs if "audit" in o]
        )
        reasons = self._partial_reasons(session, exitstatus)
        props = {
            evidence.P_RUNNER: "pytest",
            evidence.P_CHECKOUT: str(self.checkout.gitdir),
            evidence.P_GENERATION: self.gen.id if self.gen else evidence.NONE,
            evidence.P_TREE_START: self.tree_start,
            evidence.P_TREE_END: tree_end,
            evidence.P_HEAD: head_id(self.checkout.repo) or evidence.NONE,
            evidence.P_SELECTION: "partial" if reasons else "full",
            evidence.P_SELECTION_REASONS: "; ".join(reasons),
            evidence.P_AUDIT: merged.to_json(),
            evidence.P_CREATED: datetime.now(timezone.utc).isoformat(timespec="seconds"),
        }
        evidence.bind(written, props, self.gen.key if self.gen else "")
        evidence.copy_to(written, path)
        if self.problem:
            self._say(f"genstamp: evidence written but unbound: {self.problem}")

    def _partial_reasons(self, session: pytest.Session, exitstatus: int) -> list[str]:
        opt = self.config.option
        reasons = []
        if getattr(opt, "keyword", ""):
            reasons.append(f"-k {opt.keyword}")
        if getattr(opt, "markexpr", ""):
            reasons.append(f"-m {opt.markexpr}")
        if getattr(opt, "lf", False):
            reasons.append("--lf")
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
        reporter = self.config.pluginmanager.get_plugin("terminalreporter")
        if reporter is not None:
            reporter.write_line(line, yellow=True)
        else:
            print(line, file=sys.stderr)


def _env_cache(checkout: Checkout) -> str | None:
    """The tree-keyed cache an xdist worker inherited from its controller, if any."""
    env = os.environ.get(_PYCACHE_ENV, "")
    return env if env.startswith(str(checkout.state / "pycache") + os.sep) else None


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
    testpaths = cfg.getini("testpaths")
    configured = [(root / t).resolve() for t in testpaths] if testpaths else [root.resolve()]
    for want in configured:
        if not any(want == r or r in want.parents for r in run_roots):
            narrowed = ", ".join(str(r) for r in run_roots) or "nothing"
            reasons.append(f"ran {narrowed}, not all of {want}")
            break
    return reasons


# -- module-level hooks: find the checkout, then hand over to a Session ------------------------


@pytest.hookimpl(tryfirst=True)
def pytest_load_initial_conftests(early_config: pytest.Config) -> None:
    try:
        checkout = open_checkout(early_config.invocation_params.dir)
    except GenstampError:
        return  # not a git work tree: silent
    session = Session(checkout, early_config)
    session.start()
    early_config.pluginmanager.register(session, "genstamp-session")


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config: pytest.Config) -> None:
    session = config.pluginmanager.get_plugin("genstamp-session")
    if not isinstance(session, Session) or _is_worker(config):
        return
    try:
        repo = session.checkout.repo
        configured = session.settings.evidence
        ignored = False
        if configured is not None:
            with contextlib.suppress(ValueError):
                rel = configured.resolve().relative_to(session.checkout.workdir)
                ignored = repo.path_is_ignored(rel.as_posix())
        session.evidence_path = evidence.location(
            session.checkout.workdir, session.checkout.state, configured, ignored
        )
    except GenstampError as exc:
        session.problem = str(exc)
        return
    if not getattr(config.option, "xmlpath", None):
        session.evidence_path.parent.mkdir(parents=True, exist_ok=True)
        config.option.xmlpath = str(session.evidence_path)


@pytest.hookimpl
def pytest_unconfigure(config: pytest.Config) -> None:
    session = config.pluginmanager.get_plugin("genstamp-session")
    if isinstance(session, Session):
        session.restore()
