"""Was the whole suite run? The facts of one pytest run, and the reasons it covered less.

The plugin gathers the facts (``Facts``) from pytest's configuration and session; ``reasons``
decides over them alone, so every rule is a row in a table test. A run is ``partial`` exactly
when ``reasons`` says why.
"""

from __future__ import annotations

from pathlib import Path
from typing import NamedTuple


class Facts(NamedTuple):
    """What a run selected and what happened to the selection."""

    keyword: str = ""  # -k
    markexpr: str = ""  # -m
    last_failed: bool = False  # --lf
    stepwise: bool = False  # --sw or --sw-skip
    collect_only: bool = False
    given: tuple[str, ...] = ()  # the command line, then PYTEST_ADDOPTS split on blanks
    from_testpaths: bool = True  # pytest took its paths from the ``testpaths`` setting
    node_ids: tuple[str, ...] = ()  # paths given with ``::``
    run_roots: tuple[Path, ...] = ()  # the other paths given, resolved
    configured: tuple[Path, ...] = ()  # the suite: ``testpaths`` (or the root dir), resolved
    deselected: int = 0  # the most any one process deselected
    collect_errors: int = 0
    interrupted: bool = False
    stopped: str = ""  # why the session stopped early (-x, --maxfail), if it did
    executed: int = 0  # tests whose setup ran
    collected: int = 0  # the most any one process collected


def reasons(facts: Facts) -> list[str]:
    """Why the run covered less than the configured suite; empty for a full run."""
    out = []
    if facts.keyword:
        out.append(f"-k {facts.keyword}")
    if facts.markexpr:
        out.append(f"-m {facts.markexpr}")
    if facts.last_failed:
        out.append("--lf")
    out.extend(ignored(facts.given))
    if facts.stepwise:
        out.append("--sw")
    if facts.collect_only:
        out.append("--collect-only")
    out.extend(narrowed(facts))
    if facts.deselected:
        out.append(f"{facts.deselected} deselected")
    if facts.collect_errors:
        out.append(f"{facts.collect_errors} collection errors")
    if facts.interrupted:
        out.append("interrupted")
    elif facts.stopped:
        out.append(f"stopped early ({facts.stopped})")
    if facts.executed < facts.collected:
        out.append(f"{facts.executed} of {facts.collected} collected tests ran")
    return out


def ignored(given: tuple[str, ...]) -> list[str]:
    """``--ignore``/``--ignore-glob`` given for this run (on the command line or in
    PYTEST_ADDOPTS) leave files uncollected, so nothing else counts them; the same options in
    the project's configuration define the suite and do not narrow it."""
    out = []
    for i, arg in enumerate(given):
        for flag in ("--ignore", "--ignore-glob"):
            if arg == flag and i + 1 < len(given):
                out.append(f"{flag} {given[i + 1]}")
            elif arg.startswith(flag + "="):
                out.append(arg.replace("=", " ", 1))
    return out


def narrowed(facts: Facts) -> list[str]:
    """Reasons why the paths pytest was given cover less than the configured suite."""
    if facts.from_testpaths:
        return []
    out = [f"node id {arg}" for arg in facts.node_ids]
    if out and not facts.run_roots:
        return out  # node ids only: narrowed already said
    runs = facts.run_roots
    for want in facts.configured:
        if not any(want == r or r in want.parents for r in runs):
            out.append(f"ran {', '.join(str(r) for r in runs) or 'nothing'}, not all of {want}")
            break
    return out
