"""Did every test the run collected run? The facts of one pytest run, and the reasons it did not.

Arguments do not decide: what was collected and what ran does. Which test files the suite holds
is judged by the gate against the tested tree (``genstamp.suite``); here the plugin says, for the
files it collected, whether every test in them ran: a test deselected by the project's own
configuration (its ``addopts`` ``-m``/``-k``) is not part of the suite, any other deselection
(``-k``, ``-m`` given for the run, ``--lf``, ``--sw``, ``--deselect``, a plugin such as
pytest-split) is, as are stops, interruptions, collection errors, and options given for the
run that change which tests a file yields or turn a configured warning error lenient.
``reasons`` decides over ``Facts`` alone, so every rule is a row in a table test.
"""

from __future__ import annotations

from typing import Any

from genstamp import binding
from genstamp.typedtuple import NamedTuple

SHOWN = 3  # node ids named in a reason before a count


class Facts(NamedTuple):
    """What a run collected and what happened to it."""

    node_ids: tuple[str, ...] = ()  # arguments naming tests inside a file (``::``)
    deselected: tuple[str, ...] = ()  # deselected tests the configuration would have run
    collect_errors: int = 0
    interrupted: bool = False
    stopped: str = ""  # why the session stopped early (-x, --maxfail), if it did
    executed: int = 0  # tests whose setup ran
    collected: int = 0  # tests selected to run, once deselection was done
    partly: tuple[str, ...] = ()  # files collected in part (a plugin dropped items: --lf)
    # options of the run that change which tests the collected files yield (-o python_functions,
    # -p no:unittest) or make lenient a warning the configuration makes an error (-W ignore::…)
    overrides: tuple[str, ...] = ()
    # tests pytest-dependency skipped where no test they depend on failed or was skipped: the
    # result it looked for was not seen where they ran (``Tally.unseen_dependencies``)
    unseen: tuple[str, ...] = ()


def reasons(facts: Facts) -> list[str]:
    """Why the run left out tests it collected; empty when every one of them ran."""
    out = [f"node id {arg}" for arg in facts.node_ids]
    if facts.deselected:
        out.append(f"{len(facts.deselected)} deselected ({_some(facts.deselected)})")
    if facts.partly:
        files = "files" if len(facts.partly) > 1 else "file"
        out.append(f"{len(facts.partly)} {files} collected in part ({_some(facts.partly)})")
    if facts.overrides:
        out.append(f"{binding.OPTIONS_REASON}: {', '.join(facts.overrides)}")
    if facts.collect_errors:
        errors = "errors" if facts.collect_errors > 1 else "error"
        out.append(f"{facts.collect_errors} collection {errors}")
    if facts.interrupted:
        out.append("interrupted")
    elif facts.stopped:
        out.append(f"stopped early ({facts.stopped})")
    if facts.unseen:
        out.append(
            f"{len(facts.unseen)} {binding.UNSEEN_REASON} though no test they depend on failed "
            f"or was skipped here ({_some(facts.unseen)}): its result was not seen where they "
            "ran (another xdist worker, a shuffled order, pytest-repeat's names), and their "
            "bodies never ran: run them in one process, in the suite's order"
        )
    if facts.executed < facts.collected:
        out.append(f"{facts.executed} of {facts.collected} collected tests ran")
    return out


def _some(items: tuple[str, ...]) -> str:
    more = len(items) - SHOWN
    return ", ".join(items[:SHOWN]) + (f" and {more} more" if more > 0 else "")


def unreadable(markexpr: str, keyword: str) -> list[str]:
    """The configuration's own ``-m``/``-k`` (its addopts') that pytest cannot read: a plain
    ``pytest`` of the tree stops with a usage error before any test, as a clean clone's does,
    however a run that gives its own expression passes. None said where pytest is not
    installed (the gate's own environment need not hold it)."""
    try:
        from _pytest.mark.expression import Expression
    except ImportError:
        return []
    out = []
    for option, expr in (("-m", markexpr), ("-k", keyword)):
        if expr.strip():
            try:
                Expression.compile(expr.lstrip())
            except Exception:  # SyntaxError in pytest 9, ParseError before
                out.append(f"{option} {expr!r}")
    return out


def configured_out(markexpr: str, keyword: str, markers: Any, keywords: Any) -> bool:
    """Whether the configuration's own ``-m``/``-k`` deselect a test, evaluated with pytest's
    own expression language over the test's ``markers`` and ``keywords`` (pytest's
    ``MarkMatcher``/``KeywordMatcher``), so that leaving it out narrows nothing. An expression
    pytest cannot parse deselects nothing."""
    from _pytest.mark.expression import Expression

    for expr, matcher in ((markexpr, markers), (keyword, keywords)):
        if not expr:
            continue
        try:
            if not Expression.compile(expr).evaluate(matcher):
                return True
        except Exception:  # SyntaxError in pytest 9, ParseError before: pytest refused it too
            continue
    return False
