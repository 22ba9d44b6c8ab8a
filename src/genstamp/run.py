"""``genstamp run``: bind the JUnit file of a runner other than pytest."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import xml.etree.ElementTree as ET
from collections.abc import Sequence
from pathlib import Path

from genstamp import binding, checkout_id, config, evidence, generation, parts, refuted
from genstamp.errors import GenstampError
from genstamp.facts import without
from genstamp.identity import tree_identity
from genstamp.paths import printable
from genstamp.repo import Checkout, head_id

JUNIT_ENV = "GENSTAMP_JUNIT"
PYTEST_UNSEEN = (
    "pytest ran without genstamp's plugin, so its selection is unseen; let the plugin load "
    "(install genstamp in the environment pytest runs in: a tox or nox env's deps; drop "
    "-p no:genstamp; with PYTEST_DISABLE_PLUGIN_AUTOLOAD set, add -p genstamp.pytest_plugin)"
)


def run(
    checkout: Checkout, command: Sequence[str], junit: Path | None, cwd: str | None = None
) -> int:
    """Run ``command`` in ``cwd`` (default: here) and bind the JUnit file it wrote. Returns the
    command's exit status."""
    if not command:
        raise GenstampError("no command to run", "genstamp run [--junit PATH] -- COMMAND ...")
    settings = config.load(checkout.workdir)
    default = evidence.location(checkout, settings.evidence)
    here = Path(cwd) if cwd is not None else Path.cwd()
    path = (here / junit).resolve() if junit is not None else default.resolve()
    problem = ""
    try:
        gen = generation.current(checkout)
    except GenstampError as exc:
        gen, problem = None, exc.message
    start = tree_identity(checkout)
    _own_copy(path)
    stale_before = path.stat().st_mtime_ns if path.exists() else None
    env = dict(os.environ, **{JUNIT_ENV: str(path)})
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        status = subprocess.call(list(command), env=env, cwd=cwd)
        if status < 0:  # killed by a signal: its status as a shell gives it (SIGKILL: 137)
            status = 128 - status
    except OSError as exc:
        raise GenstampError(
            f"cannot run {command[0]}: {exc.strerror or exc}",
            "name a program on PATH, or the path to one, after `--`",
        ) from exc
    end = tree_identity(checkout)
    if not path.is_file() or (stale_before is not None and path.stat().st_mtime_ns == stale_before):
        raise GenstampError(
            f"the command wrote no JUnit file at {path} (exit status {status})",
            f"make the runner write JUnit XML to ${JUNIT_ENV} or pass --junit",
            code=status or 2,
        )
    if _bound_by_pytest(path):
        # The plugin bound this run itself: its selection, audit and counts are the truth, and
        # a wrapper must never turn a partial run into a complete one.
        if path != default.resolve():
            evidence.copy_to(path, default)
        print(
            f"genstamp: {path} is already bound by genstamp's pytest plugin; kept", file=sys.stderr
        )
        if status != 0:  # the command failed after pytest (a coverage step of tox's, a hang)
            _failed(checkout, path, start, end)
        return status
    try:
        counts = evidence.read_report(path).counts
    except GenstampError as exc:
        raise _unbindable(exc, status) from exc
    failed = status != 0 or counts.failed > 0 or counts.errors > 0
    session_failed = ""
    if status != 0 and not (counts.failed or counts.errors):
        # as pytest's own session failing though no test did (a coverage threshold, a crash
        # of the runner after its test cases were written)
        session_failed = f"the command exits with status {status} though no test case failed"
    unseen = ["genstamp run cannot see the runner's selection"]
    if _pytest_without_the_plugin(path):
        # pytest's own JUnit: pytest ran, and genstamp's plugin did not (-p no:genstamp,
        # PYTEST_DISABLE_PLUGIN_AUTOLOAD): what it selected and loaded is unseen, so the run is
        # partial; taken as the suite, a `pytest tests/test_a.py` would pass as the whole.
        unseen = [PYTEST_UNSEEN]
        print(f"genstamp: {PYTEST_UNSEEN}: the gate refuses it as partial-run", file=sys.stderr)
    bound = binding.new(
        runner="run: " + printable(" ".join(command))[:200],
        checkout=str(checkout.gitdir),
        generation=gen.id if gen else None,
        tree_start=start,
        tree_end=end,
        head=head_id(checkout.repo),
        # genstamp cannot see another runner's selection; the command is taken as the suite.
        partial=unseen,
        selection_checked=unseen[0] == PYTEST_UNSEEN,
        audit="unavailable",
        checkout_id=checkout_id.current(checkout.gitdir, create=True),
        output=_inside(path, checkout.workdir),
        session_failed=session_failed,
    )
    try:
        evidence.bind(path, bound.properties(), gen.key if gen else "")
    except GenstampError as exc:
        raise _unbindable(exc, status) from exc
    evidence.copy_to(path, default)
    if gen is not None:
        # a part of its generation, as the plugin's runs are: once a checkout ends the
        # generation, the run still speaks for the tree it tested (a branch tested, left,
        # pushed); it merges with no other part (its selection is unseen)
        named = "\0".join(command).encode("utf-8", "surrogateescape")  # (bytes the OS gave)
        digest = hashlib.sha256(named).hexdigest()[:12]
        parts.keep(
            checkout.state,
            gen.id,
            end,
            f"{RUN_PART}{digest}",
            default,
            also=[old["id"] for old in gen.retired],
        )
    if failed:
        _failed(checkout, path, start, end)
    if problem:
        print(f"genstamp: evidence written but unbound: {problem}", file=sys.stderr)
    return status


def _failed(checkout: Checkout, path: Path, start: str, end: str) -> None:
    """Record that the run failed on the trees it ran: the newest word on them, in every
    worktree, so that no earlier pass stands. The tree at the end (also as the gate compares
    it, without the run's JUnit file), and the one it began with, whose code ran (a failing
    test that writes a file into the work tree leaves the end another tree)."""
    output = _inside(path, checkout.workdir)
    # each also as the gate compares it: without the run's own report file (the one it wrote,
    # or the one an earlier run left at the start)
    bare = without(checkout.repo, [end, start], output) if output else {}
    trees = [end, start, *(bare.get(t) for t in (end, start))]
    unrecorded = refuted.record_failure(checkout.gitdir, *(t for t in trees if t))
    if unrecorded:
        print(f"genstamp: {unrecorded}", file=sys.stderr)


def _unbindable(exc: GenstampError, status: int) -> GenstampError:
    return GenstampError(
        f"the command's JUnit file cannot be bound: {exc.message}",
        "make the runner write JUnit XML",
        code=status or 2,
    )


RUN_PART = "run-"  # the name of a part `genstamp run` keeps: of the command it ran


def _inside(path: Path, workdir: Path) -> str:
    """``path`` (the JUnit file the command wrote) relative to the work tree, "" when outside
    it: the run's own output, which the gate leaves out of the trees it compares, as it does
    the plugin's ``--junitxml``."""
    output = os.path.relpath(os.path.realpath(path), os.path.realpath(workdir))
    return "" if output.split(os.sep)[0] == ".." else output.replace(os.sep, "/")


def _own_copy(path: Path) -> None:
    """Let go of ``path`` before a command writes it in place when it is also a kept part of
    its generation (a hard link): a runner's truncating write would turn that part into this
    run's file. The part keeps the bytes."""
    try:
        if path.stat().st_nlink > 1:
            path.unlink()
    except FileNotFoundError:
        pass
    except OSError as exc:
        raise GenstampError(
            f"cannot prepare {path}: {exc.strerror or exc}",
            f"remove {path}, or pass --junit with another path",
        ) from exc


# The attributes pytest's junitxml writes on its <testsuite> (pytest 5.1 and later).
_PYTEST_SUITE = frozenset(
    ("name", "errors", "failures", "skipped", "tests", "time", "timestamp", "hostname")
)


def _pytest_without_the_plugin(path: Path) -> bool:
    """True when pytest's junitxml wrote ``path`` and genstamp's plugin did not bind it: its
    ``<testsuites name="pytest tests">`` (pytest 8.4 and later), or an unnamed ``<testsuites>``
    around one ``<testsuite>`` with exactly the attributes pytest writes (earlier pytest,
    whatever its junit_suite_name)."""
    try:
        evidence.read_report(path)  # refuses what ElementTree must not see
        root = ET.parse(path).getroot()
    except (GenstampError, OSError, ET.ParseError):
        return False
    if root.tag != "testsuites":
        return False
    suites = root.findall("testsuite")
    if "name" in root.attrib:
        return root.get("name") == "pytest tests"
    return len(suites) == 1 and set(suites[0].attrib) == _PYTEST_SUITE


def _bound_by_pytest(path: Path) -> bool:
    try:
        report = evidence.read_report(path)
    except GenstampError:
        return False
    return report.properties.get(binding.P_RUNNER) == "pytest"
