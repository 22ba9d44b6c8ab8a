"""Warnings filters as Python applies them (``genstamp.warnfilters``): the oracle is the
``warnings`` module itself, with the filters pytest makes of the same lines."""

from __future__ import annotations

import warnings

import pytest
from _pytest.config import parse_warning_filter

from genstamp import warnfilters
from genstamp.warnfilters import Filter, Sample


def made(config: list[str], cmdline: list[str] = ()) -> list[Filter]:  # type: ignore[assignment]
    """The filters pytest applies for ``config`` lines and ``-W`` options, first first."""
    out = [Filter(*parse_warning_filter(c, escape=False)) for c in config]
    out += [Filter(*parse_warning_filter(c, escape=True)) for c in cmdline]
    return out[::-1]


def raised(config: list[str], cmdline: list[str], warning: Sample) -> bool:
    """Whether Python raises ``warning`` under the filters pytest applies for these lines."""
    with warnings.catch_warnings():
        warnings.resetwarnings()
        warnings.simplefilter("ignore")  # what no filter matches: no error (and not shown)
        for c in config:
            warnings.filterwarnings(*parse_warning_filter(c, escape=False))
        for c in cmdline:
            warnings.filterwarnings(*parse_warning_filter(c, escape=True))
        try:
            warnings.warn_explicit(
                warning.message, warning.category, "f.py", warning.lineno, module=warning.module
            )
        except Warning:
            return True
        return False


CASES = [
    (["error"], []),
    (["error", "ignore::DeprecationWarning"], ["ignore::DeprecationWarning"]),
    (["error::UserWarning"], ["ignore:boom"]),
    (["error:boom:UserWarning"], ["ignore::UserWarning:pkg.mod"]),
    (["error::DeprecationWarning:pkg.*"], ["default::DeprecationWarning:pkg.mod"]),
    (["error::pytest.PytestCollectionWarning", "ignore:quiet"], ["error::UserWarning:x:7"]),
]


@pytest.mark.parametrize(("config", "cmdline"), CASES)
def test_the_action_is_pythons(config: list[str], cmdline: list[str]) -> None:
    filters = made(config, cmdline)
    for w in warnfilters.samples(filters):
        if w.lineno == 0:
            w = w._replace(lineno=1)  # a warning is raised at some line
        assert (warnfilters.action(filters, w) == "error") == raised(config, cmdline, w), w


@pytest.mark.parametrize(
    ("suite", "run", "lenient"),
    [
        (
            (["error", "ignore::DeprecationWarning"], []),
            (["error", "ignore::DeprecationWarning"], ["ignore::DeprecationWarning"]),
            False,
        ),
        ((["error"], []), (["error", "ignore::UserWarning"], []), True),
        ((["error::UserWarning"], []), (["error:nothing matches:UserWarning"], []), True),
        (
            (["error::UserWarning"], []),
            (["error::UserWarning"], ["ignore::UserWarning:elsewhere"]),
            True,
        ),  # lenient in one module, which may be the one that warns
        (
            (["error::UserWarning"], []),
            (["error::UserWarning"], ["ignore::DeprecationWarning"]),
            False,
        ),
        ((["error::UserWarning"], []), (["error"], []), False),  # stricter
        (
            (["error::DeprecationWarning"], []),
            (["error::DeprecationWarning"], ["ignore::PendingDeprecationWarning"]),
            False,
        ),
        (
            (["error::Warning"], []),
            (["error::Warning"], ["ignore::pytest.PytestCollectionWarning"]),
            True,
        ),
        (([], ["error::UserWarning"]), ([], []), True),  # addopts' -W, dropped
    ],
)
def test_lenient_is_what_python_would_let_pass(
    suite: tuple[list[str], list[str]], run: tuple[list[str], list[str]], lenient: bool
) -> None:
    """Whether some warning the suite's filters make an error is none under the run's."""
    resolved = [*suite, *run]
    found = warnfilters.lenient(made(*resolved[:2]), made(*resolved[2:]))
    assert bool(found) == lenient, found
    for (
        w
    ) in found:  # each is a warning Python raises under the suite's and lets pass under the run's
        w = w._replace(lineno=w.lineno or 1)
        assert raised(*resolved[:2], w) and not raised(*resolved[2:], w), w
