"""JUnit evidence bound to a generation: the ``genstamp.*`` properties, read and written.

Reading streams the file through expat with every DTD refused, so an entity bomb or an external
entity is rejected before anything is expanded and memory stays bounded whatever the file's size.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import xml.etree.ElementTree as ET
from collections.abc import Mapping
from pathlib import Path
from xml.parsers import expat

from genstamp import __version__
from genstamp.atomic import write_atomic
from genstamp.binding import (  # re-exported: the plugin, run and the tests name them here
    FORMAT,
    FORMAT_SESSION,
    FORMAT_UNSEEN,
    NONE,
    OBSERVES,
    P_AUDIT,
    P_CHECKOUT,
    P_CHECKOUT_ID,
    P_COVERAGE,
    P_CREATED,
    P_FORMAT,
    P_GENERATION,
    P_HEAD,
    P_OBSERVES,
    P_OUTPUT,
    P_RUNNER,
    P_SEAL,
    P_SELECTION,
    P_SELECTION_REASONS,
    P_SESSION_FAILED,
    P_TREE_END,
    P_TREE_START,
    P_VERSION,
    PREFIX,
    Counts,
    Report,
    case_line,
    seal,
    unseen_of,
    worse,
)
from genstamp.errors import GenstampError
from genstamp.repo import Checkout, Place, open_checkout, path_is_ignored

__all__ = [
    "FORMAT",
    "NONE",
    "OBSERVES",
    "PREFIX",
    "P_AUDIT",
    "P_CHECKOUT",
    "P_CHECKOUT_ID",
    "P_COVERAGE",
    "P_CREATED",
    "P_FORMAT",
    "P_GENERATION",
    "P_HEAD",
    "P_OBSERVES",
    "P_OUTPUT",
    "P_RUNNER",
    "P_SEAL",
    "P_SELECTION",
    "P_SELECTION_REASONS",
    "P_TREE_END",
    "P_TREE_START",
    "P_VERSION",
    "Counts",
    "EvidenceError",
    "Report",
    "bind",
    "binding",
    "case_line",
    "copy_to",
    "default_path",
    "location",
    "read_report",
    "seal",
    "xml_text",
]

MAX_BYTES = 512 * 1024 * 1024  # a JUnit file larger than this is not read
_CHUNK = 1 << 20


class EvidenceError(GenstampError):
    """The file cannot serve as evidence (unreadable, malformed, hostile)."""


def read_report(path: Path) -> Report:
    try:
        size = path.stat().st_size
    except FileNotFoundError:
        raise
    except OSError as exc:
        raise EvidenceError(f"cannot read {path}: {exc.strerror or exc}") from exc
    if size > MAX_BYTES:
        raise EvidenceError(
            f"{path} is {size // (1 << 20)} MiB, over genstamp's limit of "
            f"{MAX_BYTES // (1 << 20)} MiB for a JUnit file"
        )
    if size == 0:
        raise EvidenceError(f"{path} is empty")
    reader = _Reader()
    try:
        with path.open("rb") as fh:
            while chunk := fh.read(_CHUNK):
                reader.parser.Parse(chunk, False)
            reader.parser.Parse(b"", True)
    except OSError as exc:
        raise EvidenceError(f"cannot read {path}: {exc.strerror or exc}") from exc
    except expat.ExpatError as exc:
        raise EvidenceError(f"{path} is not well-formed XML ({exc})") from None
    except _Refused as exc:
        raise EvidenceError(f"{path} {exc}") from None
    if not reader.suites:
        raise EvidenceError(f"{path} holds no <testsuite>: not a JUnit XML file")
    return Report(
        reader.properties,
        Counts(*reader.counts),
        Counts(*reader.declared),
        reader.digest.hexdigest(),
    )


class _Refused(Exception):
    pass


class _Reader:
    def __init__(self) -> None:
        p = expat.ParserCreate()
        p.StartDoctypeDeclHandler = self._doctype
        p.EntityDeclHandler = self._entity
        p.ExternalEntityRefHandler = self._external
        p.StartElementHandler = self._start
        p.EndElementHandler = self._end
        p.SetParamEntityParsing(expat.XML_PARAM_ENTITY_PARSING_NEVER)
        self.parser = p
        self.suites = 0
        self.depth_case = -1
        self.depth = 0
        self.case: list[str] | None = None
        self.in_props = False
        self.properties: dict[str, str] = {}
        self.counts = [0, 0, 0, 0, 0, 0, 0]  # tests passed failed errors skipped xfailed xpassed
        self.xfail = ""  # the case's xfail kind: "xfailed", "xpassed" or ""
        self.declared = [0, 0, 0, 0, 0]
        self.digest = hashlib.sha256()

    def _doctype(self, *_: object) -> None:
        raise _Refused("declares a DTD; JUnit needs none and genstamp expands no entities")

    def _entity(self, *_: object) -> None:
        raise _Refused("declares an XML entity; genstamp expands none")

    def _external(self, *_: object) -> int:
        raise _Refused("refers to an external entity; genstamp loads none")

    def _start(self, name: str, attrs: dict[str, str]) -> None:
        self.depth += 1
        if name == "testsuite":
            self.suites += 1
            for i, key in ((0, "tests"), (2, "failures"), (3, "errors"), (4, "skipped")):
                self.declared[i] += _int(attrs.get(key))
        elif name == "properties":
            self.in_props = self.case is None
        elif name == "property" and self.in_props:
            key = attrs.get("name", "")
            if key.startswith(PREFIX):
                if key in self.properties:
                    raise _Refused(f"carries the property {key} twice")
                self.properties[key] = attrs.get("value", "")
        elif name == "testcase":
            self.case = [attrs.get("classname", ""), attrs.get("name", ""), "passed"]
            self.depth_case = self.depth
            self.xfail = ""
        elif self.case is not None and self.depth == self.depth_case + 1:
            self.case[2] = worse(self.case[2], name)
            if name == "skipped":
                self.xfail = _xfail_kind(attrs) or self.xfail

    def _end(self, name: str) -> None:
        self.depth -= 1
        if name == "properties":
            self.in_props = False
        elif name == "testcase" and self.case is not None:
            classname, case_name, outcome = self.case
            self.digest.update(case_line(classname, case_name, outcome))
            self.counts[0] += 1
            index = {"passed": 1, "failed": 2, "error": 3, "skipped": 4}[outcome]
            self.counts[index] += 1
            if outcome == "skipped" and self.xfail:
                self.counts[5 if self.xfail == "xfailed" else 6] += 1
            self.case = None


def _xfail_kind(attrs: dict[str, str]) -> str:
    """pytest's junitxml writes an xfail as ``<skipped type="pytest.xfail">`` and a strict xfail
    that passed as ``<skipped message="xfail-marked test passes unexpectedly">``."""
    if attrs.get("type") == "pytest.xfail":
        return "xfailed"
    if attrs.get("message", "").startswith("xfail-marked test passes unexpectedly"):
        return "xpassed"
    return ""


def _int(text: str | None) -> int:
    try:
        return int(text or 0)
    except ValueError:
        return 0


# not XML 1.0; compiled where a text may hold one (its compile takes ~0.6 ms of each process)
_ILLEGAL = "[\x00-\x08\x0b\x0c\x0e-\x1f\x7f\ud800-\udfff\ufffe\uffff]"


def _visual(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"#x{code:02X}" if code <= 0xFF else f"#x{code:04X}"


def xml_text(value: object) -> str:
    """``value`` as text XML 1.0 can carry: forbidden characters shown as ``#xNN``."""
    text = str(value)
    if text.isascii() and text.isprintable():  # the usual name: nothing to show otherwise
        return text
    return re.sub(_ILLEGAL, _visual, text)


def _format(properties: Mapping[str, str]) -> str:
    """The oldest format that carries ``properties`` whole (older readers refuse it): its
    audit's findings too, where a reader of an older format may be a genstamp that passes over
    them and accepts (the folders a run used empty came after format 3, a namespace package's
    folder after format 2; every reader of the next format knows them)."""
    unseen = unseen_of(properties)
    found = _audit_keys(properties.get(P_AUDIT, ""))
    if (unseen is not None and unseen.found()) or "folders" in found:
        return FORMAT_UNSEEN
    if properties.get(P_SESSION_FAILED) or "namespaces" in found:
        return FORMAT_SESSION
    return FORMAT


def _audit_keys(text: str) -> frozenset[str]:
    """The keys of the audit recorded as ``text`` (JSON), none where it is none."""
    if not text.startswith("{"):
        return frozenset()
    try:
        data = json.loads(text)
    except ValueError:
        return frozenset()
    return frozenset(data) if isinstance(data, dict) else frozenset()


def binding(properties: dict[str, str], key: str, report: Report) -> dict[str, str]:
    """The properties a bound file carries, in order: format, version, ``properties``, and
    the seal over them and ``report`` (the testcases and declared counts as read back)."""
    properties = {
        P_FORMAT: _format(properties),
        P_VERSION: __version__,
        P_OBSERVES: str(OBSERVES),
        **{xml_text(k): xml_text(v) for k, v in properties.items()},
    }
    properties[P_SEAL] = seal(key, properties, report)
    return properties


def bind(path: Path, properties: dict[str, str], key: str) -> None:
    """Write ``properties`` (and their seal) into the first testsuite of the JUnit file at
    ``path``, replacing any earlier genstamp binding. Atomic: the old file or the new one."""
    # Refuses hostile or malformed files before ElementTree sees them; the seal covers its
    # testcases and declared counts, which rewriting the properties leaves as they are.
    report = read_report(path)
    try:
        tree = ET.parse(path)
    except (OSError, ET.ParseError) as exc:
        raise EvidenceError(f"cannot read the JUnit file {path}: {exc}") from exc
    root = tree.getroot()
    suites = list(root.iter("testsuite"))  # at any depth, as read_report counts them
    if not suites:
        raise EvidenceError(f"{path} holds no <testsuite>: not a JUnit XML file")
    for suite in suites:
        for props in suite.findall("properties"):
            for prop in list(props):
                if prop.get("name", "").startswith(PREFIX):
                    props.remove(prop)
            if len(props) == 0:
                suite.remove(props)
    found = suites[0].find("properties")
    props = found if found is not None else ET.Element("properties")
    if found is None:
        suites[0].insert(0, props)
    for name, value in binding(properties, key, report).items():
        ET.SubElement(props, "property", name=name, value=value)
    write_atomic(path, ET.tostring(root, encoding="utf-8", xml_declaration=True))


def default_path(state_dir: Path) -> Path:
    return state_dir / "evidence.xml"


def copy_to(src: Path, dest: Path) -> None:
    if os.path.abspath(src) != os.path.abspath(dest):
        write_atomic(dest, src.read_bytes())


def _replaceable(path: Path) -> bool:
    """Whether evidence may be written at ``path``: nothing is there, or a JUnit report (the
    evidence of an earlier run, a report pytest wrote), never any other file (a configured
    path is the repository's to choose, and may name anything on this machine)."""
    try:
        with open(path, "rb") as fh:
            head = fh.read(4096)
    except FileNotFoundError:
        return True
    except OSError:
        return True  # a folder, or unreadable: writing it fails, and says why
    text = head.lstrip(b"\xef\xbb\xbf \t\r\n")
    return text.startswith((b"<?xml", b"<testsuite")) and b"<testsuite" in head


def location(checkout: Checkout | Place, configured: Path | None) -> Path:
    """Where evidence goes: the configured path, else inside the git dir.

    A configured path inside the work tree must be ignored by git, or writing it would change
    the very tree the evidence describes."""
    if configured is None:
        return default_path(checkout.state)
    workdir = checkout.workdir
    path = configured.resolve() if configured.is_absolute() else (workdir / configured).resolve()
    if not _replaceable(path):
        raise GenstampError(
            f"the evidence path {path} holds a file that is no JUnit report: genstamp "
            "replaces no other file",
            "name another path in tool.genstamp.evidence, or remove that file",
        )
    if path == workdir or workdir in path.parents:
        rel = path.relative_to(workdir).as_posix()
        # The pytest plugin knows only the place; asking git opens the repository (rare).
        repo = checkout.repo if isinstance(checkout, Checkout) else open_checkout(workdir).repo
        if not path_is_ignored(repo, rel):
            raise GenstampError(
                f"the evidence path {rel} is inside the work tree and not ignored by git",
                f"add {rel} to .gitignore, or leave tool.genstamp.evidence unset",
            )
    return path
