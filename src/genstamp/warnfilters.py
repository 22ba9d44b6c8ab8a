"""Warnings filters as Python applies them: which warnings a list of filters makes errors.

A filter list is in precedence order (the first that matches a warning decides, as in
``warnings.filters``). Whether a run's filters make lenient a warning the suite's make an error
is asked of sample warnings: every category a filter names (and ``Warning``), each with a
message and a module that no filter names and those the filters name, at any line and at
those they name. Pure: no I/O, no pytest.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from genstamp.typedtuple import NamedTuple


class Filter(NamedTuple):
    """One filter, as ``warnings.filterwarnings`` takes it."""

    action: str
    message: str  # a regular expression matched at the start of the text, any case ("": any)
    category: type[Warning]
    module: str  # a regular expression matched at the start of the module's name ("": any)
    lineno: int  # 0: any line


class Sample(NamedTuple):
    """A warning the filters are asked about."""

    category: type[Warning]
    message: str
    module: str
    lineno: int


_NONE_NAMED = "\0genstamp: named by no filter"


def action(filters: Sequence[Filter], warning: Sample) -> str:
    """What ``filters`` do with ``warning``: the action of the first that matches it
    (``warnings.warn_explicit``'s rule), "default" when none does."""
    for f in filters:
        if (
            (not f.message or re.match(f.message, warning.message, re.IGNORECASE))
            and issubclass(warning.category, f.category)
            and (not f.module or re.match(f.module, warning.module))
            and (f.lineno == 0 or f.lineno == warning.lineno)
        ):
            return f.action
    return "default"


def samples(filters: Iterable[Filter]) -> list[Sample]:
    """The warnings that tell the filters apart: each category named, and ``Warning``; a
    message and a module no filter names, and those they name; any line, and those named."""
    given = list(filters)
    categories: dict[type[Warning], None] = dict.fromkeys([Warning, *(f.category for f in given)])
    messages = dict.fromkeys([_NONE_NAMED, *(t for f in given for t in _texts(f.message, True))])
    modules = dict.fromkeys([_NONE_NAMED, *(t for f in given for t in _texts(f.module, False))])
    lines = dict.fromkeys([0, *(f.lineno for f in given)])
    return [
        Sample(c, m, mod, n) for c in categories for m in messages for mod in modules for n in lines
    ]


def _texts(pattern: str, any_case: bool) -> list[str]:
    """Texts ``pattern`` matches, as far as its own spelling tells: itself, and itself with
    its escapes and its end anchor taken out (``re.escape``'s, pytest's ``-W`` module)."""
    if not pattern:
        return []
    flags = re.IGNORECASE if any_case else 0
    base = pattern.removesuffix(r"\Z")
    found = []
    for text in dict.fromkeys((pattern, base, re.sub(r"\\(.)", r"\1", base))):
        try:
            if re.match(pattern, text, flags):
                found.append(text)
        except re.error:
            return []
    return found


def lenient(suite: Sequence[Filter], run: Sequence[Filter]) -> list[Sample]:
    """The sample warnings ``suite``'s filters make errors and ``run``'s do not."""
    return [
        w
        for w in samples([*suite, *run])
        if action(suite, w) == "error" and action(run, w) != "error"
    ]
