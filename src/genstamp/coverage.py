"""What one run covered, and whether several runs (parts) together cover the suite.

Pure: the plugin builds a ``Coverage`` from what it observed (the test files collected, the
tests that should have run and each test's outcome) and seals it into the evidence as the
``genstamp.coverage`` property; the gate reads it back and ``merge`` decides over the parts and
the suites alone. Node ids are written relative to the repository root (not to the run's
rootdir), so that runs started from different folders speak of the same tests.
"""

from __future__ import annotations

import base64
import json
import zlib
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING

from genstamp import binding, versioned
from genstamp.typedtuple import NamedTuple

if TYPE_CHECKING:  # the plugin imports this module; the suite is the gate's to list
    from genstamp import suite

# 2: lists separated by NUL (a file name may hold a newline; no path holds NUL), written only
# when a name holds a newline: a genstamp that reads format 1 reads every other record
VERSION = 2
READS = (1, 2)
SEPARATOR = {1: "\n", 2: "\0"}
SHOWN = 5

# A test's outcome, as the plugin records it (the worst of its phases).
OUTCOMES = ("passed", "failed", "error", "skipped", "xfailed", "xpassed")
FAILING = frozenset({"failed", "error"})


class Coverage(NamedTuple):
    files: tuple[str, ...]  # test files the run collected completely, tree paths, sorted
    selected: int  # tests the run was to run: collected, less what the configuration deselects
    selected_digest: str
    outcomes: Mapping[str, str]  # node id -> outcome, for every test that ran
    unran: tuple[str, ...]  # tests collected that did not run (deselected by the run, stopped)
    errors: tuple[str, ...] = ()  # collectors that failed (tree ids: a file, a folder, a class)
    # Folders whose collection was skipped whole (a conftest.py that skips, or imports what is
    # not installed): their files ran, skipped, as those of a module skipped whole do.
    skipped: tuple[str, ...] = ()
    # The run's conftests' lists as they held them when the run ended (``KIND\tFOLDER\tENTRY``:
    # ``defines`` a name, ``path`` a tree path, ``glob`` a tree-path pattern; FOLDER, the
    # conftest's): where a conftest may ignore a file (``suite.Suite.maybe``), whether it did.
    ignored: tuple[str, ...] = ()
    # The files of the tree its collection offered a conftest's own collector
    # (``pytest_collect_file``), tree paths: what it reached of ``suite.Suite.offered``.
    offered: tuple[str, ...] = ()

    @property
    def ran_digest(self) -> str:
        return binding.digest(sorted(self.outcomes))

    @property
    def part_key(self) -> str:
        """The name of its part: the same tests run again replace it; a run whose collection
        failed somewhere, that skipped a folder whole, or that collected a file none of whose
        tests ran (a module skipped whole, one whose tests the configuration deselects, one
        with none), is a part of its own: a later run of the same tests that did not look
        there does not replace it (see ``supersedes``)."""
        # (not beside a failed collection: such a part is red, and stays until ``supersedes``)
        quiet = [] if self.errors else self._quiet()
        if self.skipped:  # folders skipped whole ran no test: they name the part too
            names = [*sorted(self.outcomes), "", *self.errors, "", *self.skipped]
            suffix = "-e" if self.errors else "-s"
        elif self.errors:
            names, suffix = [*sorted(self.outcomes), "", *self.errors], "-e"
        elif quiet:
            names, suffix = sorted(self.outcomes), "-f"
        else:
            return self.ran_digest[:16]
        if quiet:
            names += ["\0quiet", *quiet]
        return binding.digest(names)[:16] + suffix

    def _quiet(self) -> list[str]:
        """The files it collected whole that ran no test."""
        ran = {n.partition("::")[0] for n in self.outcomes}
        return [f for f in self.files if f not in ran]

    def supersedes(self, earlier: Coverage) -> bool:
        """This later run stands for ``earlier``, a run whose collection failed: it ran every
        test that one ran (and some) with the same outcome, and collected cleanly each
        collector that failed there. A run that executed nothing (``--collect-only``) stands
        for nothing; one where a test's outcome differs leaves both, which disagree."""
        return (
            bool(earlier.errors)
            and bool(self.outcomes)
            and all(self.outcomes.get(n) == o for n, o in earlier.outcomes.items())
            and all(self._collected(e) for e in earlier.errors)
        )

    def _collected(self, collector: str) -> bool:
        if collector in self.errors:
            return False
        path = collector.partition("::")[0]
        return any(f == path or f.startswith(f"{path}/") or not path for f in self.files)

    def to_json(self) -> str:
        version = VERSION if any("\n" in n for n in (*self.outcomes, *self.unran)) else 1
        sep = SEPARATOR[version]
        lines = sep.join(f"{o}\t{n}" for n, o in sorted(self.outcomes.items()))
        return json.dumps(
            {
                "version": version,
                "files": list(self.files),
                "files_digest": binding.digest(self.files),
                "selected": self.selected,
                "selected_digest": self.selected_digest,
                "ran": len(self.outcomes),
                "ran_digest": self.ran_digest,
                "outcomes": _pack(lines),
                "unran": _pack(sep.join(self.unran)),
                # only where collection failed: other records stay as they were written
                **({"errors": list(self.errors)} if self.errors else {}),
                **({"skipped": list(self.skipped)} if self.skipped else {}),
                **({"ignored": list(self.ignored)} if self.ignored else {}),
                # (a genstamp that reads none keeps the suite it lists: without these files)
                **({"offered": _pack("\0".join(self.offered))} if self.offered else {}),
            },
            sort_keys=True,
            separators=(",", ":"),
        )


def _pack(text: str) -> str:
    """zlib and base64: node ids repeat their paths, so 10,000 tests take tens of KiB."""
    return base64.b64encode(zlib.compress(text.encode("utf-8", "surrogateescape"), 6)).decode()


def _unpack(text: str, sep: str) -> list[str]:
    """Raises ValueError on anything ``_pack`` did not make (a field edited by hand)."""
    try:
        raw = zlib.decompress(base64.b64decode(text.encode("ascii"), validate=True))
    except zlib.error as exc:
        raise ValueError(f"not a packed list: {exc}") from exc
    decoded = raw.decode("utf-8", "surrogateescape")
    return decoded.split(sep) if decoded else []


def from_json(text: str) -> Coverage:
    """Raises ValueError (or KeyError, TypeError) on anything but this version's record."""
    data = json.loads(text)
    if not isinstance(data, dict):
        raise ValueError("not an object")
    version = data.get("version")
    if not isinstance(version, int) or not versioned.matches(version, *READS):
        raise ValueError(f"coverage format {version!r}")
    sep = SEPARATOR[version]
    outcomes: dict[str, str] = {}
    for line in _unpack(data["outcomes"], sep):
        outcome, _, nodeid = line.partition("\t")
        if outcome not in OUTCOMES:
            raise ValueError(f"unknown outcome {outcome!r}")
        outcomes[nodeid] = outcome
    files = tuple(str(f) for f in data["files"])
    cov = Coverage(
        files,
        int(data["selected"]),
        str(data["selected_digest"]),
        outcomes,
        tuple(_unpack(data["unran"], sep)),
        tuple(str(e) for e in data.get("errors", ())),
        tuple(str(f) for f in data.get("skipped", ())),
        tuple(str(f) for f in data.get("ignored", ())),
        tuple(_unpack(data["offered"], "\0")) if "offered" in data else (),
    )
    if binding.digest(files) != data["files_digest"] or cov.ran_digest != data["ran_digest"]:
        raise ValueError("its digests do not match its lists")
    return cov


def new(
    files: Iterable[str],
    selected: Sequence[str],
    outcomes: Mapping[str, str],
    unran: Iterable[str],
    errors: Iterable[str] = (),
    skipped: Iterable[str] = (),
    ignored: Iterable[str] = (),
    offered: Iterable[str] = (),
) -> Coverage:
    return Coverage(
        tuple(sorted(set(files))),
        len(selected),
        binding.digest(sorted(selected)),
        dict(outcomes),
        tuple(sorted(set(unran))),
        tuple(sorted(set(errors))),
        tuple(sorted(set(skipped))),
        tuple(sorted(set(ignored))),
        tuple(sorted(set(offered))),
    )


class Part(NamedTuple):
    label: str  # the evidence file
    coverage: Coverage
    # its session failed though no test did (``genstamp.session.failed``): a check of the
    # whole session's (an unused snapshot's, --cov-fail-under's) that no later run of its
    # tests, each in a part, makes again
    failed: bool = False


def superseded(parts: Sequence[Part]) -> set[str]:
    """The labels of ``parts`` (oldest first) that a later part stands for, or that later
    parts together ran again: every test it ran, and every file it collected (the whole
    suite run, then each of its files again after a failure between: the newer runs are the
    word on each test, and the older one adds nothing to the merge but its age). A part
    whose session failed stays: running its tests again says nothing of its session."""
    out = set()
    for n, p in enumerate(parts):
        later = parts[n + 1 :]
        if any(other.coverage.supersedes(p.coverage) for other in later):
            out.add(p.label)
            continue
        mine = p.coverage
        if mine.errors or mine.skipped or not mine.outcomes or p.failed:
            continue  # what it alone saw: a failed collector, a folder skipped whole, a
            # session that failed
        ran = {name for other in later for name in other.coverage.outcomes}
        files = {f for other in later for f in other.coverage.files}
        if ran.issuperset(mine.outcomes) and files.issuperset(mine.files):
            out.add(p.label)
    return out


class Merge(NamedTuple):
    """The verdict over the parts together."""

    parts: tuple[Part, ...]
    suites: tuple[suite.Suite, ...]
    missing: tuple[str, ...]  # suite files no part collected
    unran: tuple[str, ...]  # tests a part left out that no part ran
    conflicts: tuple[str, ...]  # tests that failed in a part, not in another (``FAILING``)
    # test files of one module name (``Suite.clashes``) that parts collected apart: no one run
    # imports them together, as a run of the whole suite must
    apart: tuple[str, ...] = ()

    @property
    def complete(self) -> bool:
        return not self.missing and not self.unran

    def counts(self) -> dict[str, int]:
        out = dict.fromkeys(OUTCOMES, 0)
        for outcome in self.outcomes().values():
            out[outcome] += 1
        return out

    def outcomes(self) -> dict[str, str]:
        merged: dict[str, str] = {}
        for part in self.parts:
            merged.update(part.coverage.outcomes)
        return merged

    def left_out(self) -> list[str]:
        """What was left out, one phrase each ("" when nothing)."""
        from genstamp.suite import describe_missing

        out = []
        # a file some of whose tests a part collected (named ``file::test``, chosen by --lf or
        # a plugin) was collected in part, not left out
        touched = {
            n.partition("::")[0]
            for p in self.parts
            for n in (*p.coverage.outcomes, *p.coverage.unran)
        }
        whole = [f for f in self.missing if f not in touched]
        partly = [f for f in self.missing if f in touched]
        if whole:
            out.append(f"{describe_missing(whole)} of the suite not collected")
            offered = {f for s in self.suites for f in (*s.offered, *dict(s.offered_if))}
            if any(f in offered for f in whole):
                out.append(
                    "a conftest collects files of its own there (pytest_collect_file), which a"
                    " run offers it only where it collects their folder: run the suite whole, as"
                    " `pytest` with no paths does"
                )
            maybe = {f for s in self.suites for f, _ in s.maybe}
            if any(f in maybe for f in whole):
                out.append(
                    "a conftest ignores some of them under a condition, which no part showed"
                    " held (no part loaded that conftest, or it did not ignore them there):"
                    " run the suite whole, as `pytest` with no paths does"
                )
        if partly:
            out.append(
                f"{describe_missing(partly)} of the suite collected in part (tests that no "
                "part collected did not run)"
            )
        if self.unran:
            shown = ", ".join(self.unran[:SHOWN])
            more = len(self.unran) - SHOWN
            out.append(
                f"{len(self.unran)} collected tests did not run: {shown}"
                + (f" and {more} more" if more > 0 else "")
            )
        return out


def merge(parts: Sequence[Part], suites: Sequence[suite.Suite]) -> Merge:
    """Whether ``parts`` together cover ``suites``, and where they disagree."""
    files: set[str] = set()
    ran: dict[str, tuple[str, str]] = {}  # node id -> (outcome, part label)
    conflicts: list[str] = []
    skipped: set[str] = set()
    for part in parts:
        files.update(part.coverage.files)
        skipped.update(part.coverage.skipped)
        for nodeid, outcome in part.coverage.outcomes.items():
            seen = ran.get(nodeid)
            if seen is None:
                ran[nodeid] = (outcome, part.label)
            elif seen[0] != outcome and FAILING & {seen[0], outcome}:
                # (passed, skipped, xfailed and a non-strict xpass are each a green outcome,
                # which a run of the whole suite may give: a skip or an xfail decided at run
                # time; a failure in one part and not in another is a flaky test)
                conflicts.append(f"{nodeid} {seen[0]} in {seen[1]}, {outcome} in {part.label}")
    unran = sorted({n for p in parts for n in p.coverage.unran if n not in ran})
    # a file a conftest may ignore, which a part's conftests did: left out as pytest leaves it
    # out there (a skip of its own, as a folder a conftest skips whole)
    excused: set[str] = set()
    if any(s.maybe for s in suites):
        from genstamp.suite import observed_ignored

        excused = {
            f
            for s in suites
            for f, start in s.maybe
            if f not in files
            and any(observed_ignored(f, start, p.coverage.ignored, s.conftests) for p in parts)
        }
    # a file a conftest's own collector may make tests of: offered to it by a part, or
    # collected (the suite's files alike: one no part reached is left out)
    reached = files.union(*(p.coverage.offered for p in parts))
    observed = [r for p in parts for r in p.coverage.ignored]
    from genstamp.suite import directed, unreached

    return Merge(
        tuple(parts),
        tuple(suites),
        tuple(
            f
            for s in suites
            for f in directed((*s.files, *unreached(s, reached, observed)), observed, s.root)
            if f not in files
            and f not in excused
            and not any(f.startswith(f"{d}/") or d in ("", ".") for d in skipped)
        ),
        tuple(unran),
        tuple(conflicts),
        _apart(parts, suites),
    )


def _apart(parts: Sequence[Part], suites: Sequence[suite.Suite]) -> tuple[str, ...]:
    """Each group of a suite's clashing test files (``Suite.clashes``) that no one part
    collected together but parts did between them, named by a file of each place and the
    name: ``a and b (each under the name m)``."""
    out = []
    for found in suites:
        if found.config.values.get("consider_namespace_packages", "").lower() == "true":
            continue  # (pytest then names a module by its namespace packages too)
        for name, places in found.clashes:
            # the places each part collected files of (one that held two failed to collect)
            seen = [
                {n for n, fs in enumerate(places) if set(fs) & set(p.coverage.files)} for p in parts
            ]
            if any(len(s) > 1 for s in seen) or len(set().union(*seen)) < 2:
                continue
            collected = {f for p in parts for f in p.coverage.files}
            # a file of each place, as parts collected them
            firsts = [
                min(set(fs) & collected) for n, fs in enumerate(places) if set(fs) & collected
            ]
            out.append(f"{' and '.join(firsts)} (each under the name {name})")
    return tuple(out)
