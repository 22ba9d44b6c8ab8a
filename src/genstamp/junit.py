"""The evidence JUnit written from pytest's reports, without pytest's junitxml plugin.

When the user asked for no ``--junitxml`` the plugin records what it needs from the reports it
sees anyway (on the controller these include every xdist worker's) and writes one document, bound
and sealed, in one go: no second pass that parses, rewrites and re-reads pytest's file.

The document follows pytest's junitxml conventions (family xunit2): ``<testsuites>`` holding one
``<testsuite name tests failures errors skipped time timestamp hostname>`` whose first child is the
genstamp ``<properties>``, then one ``<testcase classname name time>`` per test, with a
``<failure message>`` (the call failed), ``<error message>`` (setup or teardown failed, or a
collection error) or ``<skipped type message>`` child. Characters XML 1.0 forbids are shown as
``#xNN`` (as pytest does), long texts are cut.
"""

from __future__ import annotations

import functools
import hashlib
import platform
import re
import time
from collections.abc import Sequence
from datetime import datetime, timezone
from typing import Any

from genstamp import binding, evidence
from genstamp.evidence import xml_text

MESSAGE_BUDGET = 500  # characters of a message attribute
TEXT_BUDGET = 32_000  # characters of an element's text (a traceback): its head and its tail
_HEAD = 4_000


def shorten(message: str, budget: int = MESSAGE_BUDGET) -> str:
    """Whole lines while they fit in ``budget``, a first line longer than that cut."""
    if len(message) <= budget:
        return message
    lines = message.splitlines() or [""]
    kept: list[str] = []
    size = 0
    for line in lines:
        if kept and size + len(line) + 1 > budget:
            break
        kept.append(line)
        size += len(line) + 1
    short = "\n".join(kept)
    if len(short) > budget:
        short = short[:budget] + "..."
    return f"{short}\n[cut; see the element text]"


def clip(text: str, budget: int = TEXT_BUDGET) -> str:
    """The head and the tail of a long text (a traceback ends with what matters most)."""
    if len(text) <= budget:
        return text
    tail = budget - _HEAD
    return (
        f"{text[:_HEAD]}\n[... {len(text) - budget} characters cut by genstamp ...]\n{text[-tail:]}"
    )


_PY = re.compile(r"\.py$")


@functools.lru_cache(maxsize=4096)
def _classname(path: str, prefix: str | None) -> str:
    """The classname for the part of a node id before its test name (many tests share it)."""
    names = path.split("::")
    names[0] = _PY.sub("", names[0].replace("/", "."))
    if prefix:
        names.insert(0, prefix)
    return xml_text(".".join(names))


def mangle(nodeid: str, prefix: str | None = None) -> tuple[str, str]:
    """(classname, name) as pytest's junitxml derives them from a node id:
    ``tests/test_x.py::TestA::test_b[1]`` -> ``("tests.test_x.TestA", "test_b[1]")``."""
    path, bracket, params = nodeid.partition("[")
    head, sep, name = path.rpartition("::")
    if sep:
        return _classname(head, prefix), xml_text(name + bracket + params)
    # No test name (a module that failed to collect): its path is the name.
    name = _PY.sub("", path.replace("/", ".")) + bracket + params
    return xml_text(prefix or ""), xml_text(name)


_Child = tuple[str, dict[str, str], str | None]


class _Case:
    """One testcase. A passing test's has no children and no properties: both stay the shared
    empty tuple, so a suite of thousands adds one object per test for every garbage
    collection to walk, not three."""

    __slots__ = ("call_failed", "children", "duration", "nodeid", "properties", "ran")

    def __init__(self, nodeid: str) -> None:
        self.nodeid = nodeid
        self.duration = 0.0
        self.children: list[_Child] | tuple[_Child, ...] = ()
        self.properties: list[tuple[str, str]] | tuple[tuple[str, str], ...] = ()
        self.ran = False  # a call report, or a failure or skip of any phase
        self.call_failed = False

    def add(self, tag: str, text: str | None = None, **attrs: str) -> None:
        self.ran = True
        self.children = [*self.children, (tag, attrs, text)]

    def outcome(self) -> str:
        """As ``evidence.read_report`` recounts it: the worst child."""
        outcome = "passed"
        for tag, _, _ in self.children:
            outcome = binding.worse(outcome, tag)
        return outcome


class Recorder:
    """Collects the reports of one run; ``document`` writes them out, bound."""

    def __init__(self, suite_name: str = "pytest", prefix: str | None = None) -> None:
        self.suite_name = suite_name
        self.prefix = prefix
        self.started = time.time()
        self._clock = time.perf_counter()
        self.cases: list[_Case] = []
        self._open: dict[tuple[str, object], _Case] = {}
        self._rendered: tuple[str, binding.Counts, binding.Counts, str] | None = None

    def session_start(self) -> None:
        self.started = time.time()
        self._clock = time.perf_counter()

    def _case(self, key: tuple[str, object]) -> _Case:
        case = self._open.get(key)
        if case is None:
            case = self._open[key] = _Case(key[0])
            self.cases.append(case)
        return case

    def test_report(self, report: Any) -> None:
        """One setup, call or teardown report (``pytest_runtest_logreport``)."""
        when = report.when
        key = (report.nodeid, getattr(report, "node", None))  # the xdist worker, if any
        if report.outcome == "passed" and when != "teardown":  # most reports: kept short
            case = self._open.get(key) or self._case(key)
            case.duration += getattr(report, "duration", 0.0) or 0.0
            if when == "call":
                case.ran = True
            return
        if report.failed and when == "teardown":
            earlier = self._open.get(key)
            if earlier is not None and earlier.call_failed:
                del self._open[key]  # junitxml: a failed call and a failed teardown are two cases
        case = self._case(key)
        case.duration += getattr(report, "duration", 0.0) or 0.0
        if report.passed:
            if when == "call":
                case.ran = True
        elif report.failed:
            if when == "call":
                case.call_failed = True
                if hasattr(report, "wasxfail"):
                    case.add("skipped", message="xfail-marked test passes unexpectedly")
                else:
                    message = _crash(report)
                    case.add("failure", _long(report), message=xml_text(shorten(message)))
            else:
                phase = "teardown" if when == "teardown" else "setup"
                message = f'failed on {phase} with "{_crash(report)}"'
                case.add("error", _long(report), message=xml_text(shorten(message)))
        elif report.skipped:
            if hasattr(report, "wasxfail"):
                reason = str(report.wasxfail).removeprefix("reason: ")
                case.add("skipped", type="pytest.xfail", message=xml_text(shorten(reason)))
            else:
                longrepr = report.longrepr
                if isinstance(longrepr, tuple) and len(longrepr) == 3:
                    filename, lineno, reason = longrepr
                    reason = str(reason).removeprefix("Skipped: ")
                    details = f"{filename}:{lineno}: {reason}"
                else:
                    reason = details = str(longrepr)
                case.add(
                    "skipped",
                    xml_text(clip(details)),
                    type="pytest.skip",
                    message=xml_text(shorten(reason)),
                )
        if when == "teardown":
            given = getattr(report, "user_properties", ()) or ()
            case.properties = [(xml_text(name), xml_text(value)) for name, value in given] or ()
            self._open.pop(key, None)

    def collect_report(self, report: Any) -> None:
        """A collector's report (``pytest_collectreport``): failed or skipped ones are cases."""
        if report.passed:
            return
        case = _Case(report.nodeid)
        self.cases.append(case)
        if report.failed:
            case.add("error", _long(report), message="collection failure")
        else:
            case.add("skipped", _long(report), message="collection skipped")

    def internal_error(self, text: str) -> None:
        case = _Case("")
        self.cases.append(case)
        case.add("error", xml_text(clip(text)), message="internal error")

    def render(self) -> None:
        """Write out the testcases (done once; ``document`` adds the suite around them)."""
        if self._rendered is not None:
            return
        digest = hashlib.sha256()
        counts = {"passed": 0, "failed": 0, "error": 0, "skipped": 0}
        parts: list[str] = []
        for case in self.cases:
            if not case.ran:
                continue  # set up and torn down, never called (--setup-only): not a test
            if case.nodeid:
                classname, name = mangle(case.nodeid, self.prefix)
            else:
                classname, name = "pytest", "internal"
            outcome = case.outcome()
            counts[outcome] += 1
            digest.update(binding.case_line(classname, name, outcome))
            head = (
                f'<testcase classname="{_attr(classname)}" name="{_attr(name)}" '
                f'time="{case.duration:.3f}"'
            )
            if not case.properties and not case.children:
                parts.append(head + " />")
                continue
            parts.append(head + ">")
            if case.properties:
                parts.append(_properties(case.properties))
            for tag, attrs, text in case.children:
                attributes = "".join(f' {k}="{_attr(v)}"' for k, v in attrs.items())
                if text is None:
                    parts.append(f"<{tag}{attributes} />")
                else:
                    parts.append(f"<{tag}{attributes}>{text.translate(_TEXT)}</{tag}>")
            parts.append("</testcase>")
        tests = sum(counts.values())
        declared = binding.Counts(tests, 0, counts["failed"], counts["error"], counts["skipped"])
        recount = binding.Counts(
            tests, counts["passed"], counts["failed"], counts["error"], counts["skipped"]
        )
        self._rendered = ("".join(parts), declared, recount, digest.hexdigest())

    def document(self, properties: dict[str, str], key: str) -> bytes:
        """The whole JUnit document, its genstamp ``properties`` sealed with ``key`` exactly as
        ``evidence.bind`` seals a file (the seal covers what ``evidence.read_report`` reads)."""
        self.render()
        assert self._rendered is not None
        cases, declared, recount, digest = self._rendered
        clean = {xml_text(k): xml_text(v) for k, v in properties.items()}
        bound = evidence.binding(clean, key, binding.Report(clean, recount, declared, digest))
        stamp = datetime.fromtimestamp(self.started, timezone.utc).astimezone().isoformat()
        suite = (
            f'<testsuite name="{_attr(xml_text(self.suite_name))}" errors="{declared.errors}" '
            f'failures="{declared.failed}" skipped="{declared.skipped}" tests="{declared.tests}" '
            f'time="{time.perf_counter() - self._clock:.3f}" timestamp="{stamp}" '
            f'hostname="{_attr(xml_text(platform.node()))}">'
        )
        text = (
            '<?xml version="1.0" encoding="utf-8"?>\n<testsuites name="pytest tests">'
            f"{suite}{_properties(list(bound.items()))}{cases}</testsuite></testsuites>\n"
        )
        return text.encode("utf-8")


_ATTR = str.maketrans(
    {
        "&": "&amp;",
        "<": "&lt;",
        ">": "&gt;",
        '"': "&quot;",
        "\n": "&#10;",
        "\r": "&#13;",
        "\t": "&#9;",
    }
)
_TEXT = str.maketrans({"&": "&amp;", "<": "&lt;", ">": "&gt;", "\r": "&#13;"})


def _attr(text: str) -> str:
    """An attribute value (of XML-legal characters) between double quotes, read back as is."""
    return text.translate(_ATTR)


def _properties(items: Sequence[tuple[str, str]]) -> str:
    props = "".join(f'<property name="{_attr(k)}" value="{_attr(v)}" />' for k, v in items)
    return f"<properties>{props}</properties>"


def _crash(report: Any) -> str:
    crash = getattr(report.longrepr, "reprcrash", None)
    message = getattr(crash, "message", None)
    return str(message) if message is not None else str(report.longrepr)


def _long(report: Any) -> str:
    return xml_text(clip(str(report.longrepr)))
