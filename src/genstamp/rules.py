"""The gate's rules: a pure function from the gathered facts to a verdict.

Nothing here reads a file or a repository (a test imports this module in a fresh interpreter and
checks): ``genstamp.facts`` gathers, ``decide`` judges, ``genstamp.verify`` does one then the other.
Every rule is a hard stop with a stable name, a remedy, and a check in ``TABLE``.
"""

from __future__ import annotations

import functools
import posixpath
import re

# hmac.compare_digest itself, from a built-in module (no checkout names its own hmac.py for it)
from _operator import _compare_digest as compare_digest
from collections.abc import Callable, Container, Iterable, Iterator, Mapping, Sequence
from pathlib import PurePosixPath
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, TypeVar

from genstamp import __version__, audit, binding, bytecode, coverage, selection, suite
from genstamp.binding import Counts, Report
from genstamp.paths import generated
from genstamp.paths import printable as printable  # where the callers find it
from genstamp.placed import AS_FILE, IGNORED, INSTALLED, LINKED
from genstamp.typedtuple import NamedTuple

if TYPE_CHECKING:
    from genstamp.cleanrecord import CleanRoom
    from genstamp.config import Config
    from genstamp.generation import Generation

PATH_LIMIT = 10  # differing paths named before giving a count
FLAG_LIMIT = 10
TREE_LIMIT = 3  # mismatching trees given a line (and a diff) each before one line for the rest
LABEL_LIMIT = 3  # labels (revs, refs) named per tree


WORK_TREE = "work tree"  # the label of the target that is the work tree as it is


class Target(NamedTuple):
    label: str  # "work tree", or the rev as given
    tree: str


class Bytecode(NamedTuple):
    """One bytecode file in the work tree."""

    path: str  # relative to the work tree, with "/"
    mtime_ns: int
    sourceless: bool  # a legacy .pyc outside __pycache__ with no .py beside it


_EMPTY: Mapping[Any, Any] = MappingProxyType({})


class Submodule(NamedTuple):
    """A submodule whose work tree holds changes its recorded commit does not."""

    path: str  # relative to the superproject's work tree
    changes: tuple[str, ...]  # paths inside it: modified, staged, or untracked and not ignored


class Facts(NamedTuple):
    """Everything the rules look at, gathered beforehand by ``genstamp.facts.gather``."""

    gitdir: str  # the checkout judged
    stamp_path: str
    generation: Generation | None  # the current stamp
    stamp_problem: str  # why the stamp could not be read ("" when read, or when absent)
    evidence: str  # the evidence file's path
    report: Report | None
    unreadable: str  # why the report could not be read ("" when read, or when absent)
    report_mtime_ns: int | None  # None when it could not be taken
    targets: tuple[Target, ...]
    # The paths that differ from one tree to another, keyed (old tree, new tree), for the pairs
    # the messages name; None when a tree is no longer in the object store.
    diffs: Mapping[tuple[str, str], tuple[str, ...] | None]
    # For the files the audit says the tests loaded: their blob ids in the tested tree (files
    # not in it, such as ignored ones, absent); None when the tested tree is not in the store.
    tested_blobs: Mapping[str, str] | None
    bytecode: tuple[Bytecode, ...]
    # For (loaded path, raw blob id) pairs whose raw blob is not the tested one: the blob
    # `git add` would store for those bytes at that path (autocrlf, eol, filters), or None when
    # that cannot be known (the file changed since): the raw blob is then what counts; None
    # too for the tree's own bytes where a checkout writes other code of them (`ident`).
    added: Mapping[tuple[str, str], str | None] = _EMPTY
    # For loaded or flagged paths the tested tree does not hold: INSTALLED, IGNORED, LINKED or
    # UNTRACKED; LINKED too for a file it holds as a symbolic link leading out of the work tree,
    # AS_FILE for one it holds as a link that the work tree holds as a plain file.
    placed: Mapping[str, str] = _EMPTY
    submodules: tuple[Submodule, ...] = ()  # the submodules with changes in their work trees
    # Loaded paths the tested tree holds only inside a gitlink no .gitmodules gives a URL:
    # path -> the gitlink's path (a clone cannot fetch that repository).
    unregistered: Mapping[str, str] = _EMPTY
    # The work tree's changes the index tells git not to look at (so the tree leaves them
    # out): path -> the `git update-index` option ("--skip-worktree", "--assume-unchanged").
    hidden: Mapping[str, str] = _EMPTY
    checkout_id: str = ""  # this checkout's id (genstamp.checkout_id.current), "" when none
    workdir: str = ""  # its work tree (absolute), "" when not known
    # Each tree the messages compare, seen without the run's own output file (the report it
    # was asked to write in the work tree); a tree absent here is seen as it is.
    views: Mapping[str, str] = _EMPTY
    # The suites of the tested tree (None: not listed, the tree is not in the object store).
    suites: tuple[suite.Suite, ...] | None = None
    # The other parts merged with this evidence: (their file, their report).
    others: tuple[tuple[str, Report], ...] = ()
    primary: bool = True  # False for a merged part's own facts: coverage is judged once
    # `genstamp clean-run`'s records for the trees judged and tested (tree -> record), why a
    # record could not be read, and the tree the newest record is of ("" when none).
    clean_rooms: Mapping[str, CleanRoom] = _EMPTY
    clean_room_problems: tuple[str, ...] = ()
    clean_room_latest: str = ""
    # pytest configuration files of the work tree's suites that cannot be read as pytest
    # reads them (asked when there is no evidence: pytest stops on them too)
    config_problems: tuple[str, ...] = ()
    # For the pairs of ``diffs``: the paths the first tree holds and the second does not.
    only_in_first: Mapping[tuple[str, str], frozenset[str]] = _EMPTY
    # Of the paths of ``diffs``, the ones git tracks (the index holds them): a commit older
    # than the tested one; the rest, in the work tree, untracked files
    tracked: frozenset[str] = frozenset()
    # Of the untracked ones, those the tested tree holds too (a file written again since)
    untracked_rewritten: frozenset[str] = frozenset()
    # Of the untracked ones, those the tested tree holds and the work tree no longer has (a
    # file removed since the run: `git rm`, a rebase that dropped it, a reset)
    gone: frozenset[str] = frozenset()
    # The suites' test files a sparse checkout leaves out of the work tree
    sparse_out: frozenset[str] = frozenset()
    # The output files (reports) the parts merged with this evidence wrote in the work tree
    part_outputs: frozenset[str] = frozenset()


class Failure(NamedTuple):
    rule: str
    message: str  # one line, its lists bounded (the first few, then a count)
    items: tuple[str, ...] = ()  # every item a bounded list in the message stands for

    @property
    def remedy(self) -> str:
        return REMEDY[self.rule]

    def line(self) -> str:
        return f"{self.rule}: {self.message} — {self.remedy}"


class Verdict(NamedTuple):
    failures: tuple[Failure, ...]
    evidence: str
    generation: str | None
    tested_tree: str | None
    targets: tuple[Target, ...]
    counts: Counts | None
    merge: coverage.Merge | None = None  # the parts judged together, when coverage was recorded
    partial: tuple[str, ...] = ()  # what was left out, when allow-partial let it pass
    reasons: str = ""  # the run's own reasons (genstamp.selection.reasons)
    nothing_to_test: tuple[str, ...] = ()  # trees judged that hold no project and no tests
    # trees accepted on a run of an ended generation or of another worktree (``facts.vouching``)
    vouched: tuple[str, ...] = ()
    # those runs' own verdicts, what they ran (``genstamp attest`` states it); not in --json
    vouching: tuple[Verdict, ...] = ()
    # the trees judged on evidence now (not on a remembered or vouched verdict); not in --json
    judged: tuple[str, ...] = ()

    @property
    def ok(self) -> bool:
        return not self.failures

    def selection(self) -> dict[str, Any]:
        """The selection judged: complete or not, what was left out, the suites and the parts."""
        merge = self.merge
        return {
            "complete": merge.complete if merge is not None else not self.partial,
            "accepted_partial": bool(self.partial) and self.ok,
            "left_out": list(self.partial or (merge.left_out() if merge is not None else [])),
            "reasons": self.reasons,
            "suites": [
                {
                    "root": s.label,
                    "config": s.config.source or None,
                    "files": len(s.files),
                    "digest": s.digest,
                    "markexpr": s.config.markexpr,
                    "problems": list(s.problems),
                }
                for s in (merge.suites if merge is not None else ())
            ],
        }

    def to_json(self) -> dict[str, Any]:
        return (
            {
                "ok": self.ok,
                "failures": [
                    {"rule": f.rule, "message": f.message, "remedy": f.remedy}
                    | ({"items": list(f.items)} if f.items else {})
                    for f in self.failures
                ],
                "evidence": self.evidence,
                "generation": self.generation,
                "tested_tree": self.tested_tree,
                "targets": [{"label": t.label, "tree": t.tree} for t in self.targets],
                "tests": self.counts._asdict() if self.counts else None,
                "selection": self.selection(),
                "parts": [
                    {
                        "evidence": p.label,
                        "files": len(p.coverage.files),
                        "ran": len(p.coverage.outcomes),
                        "left_out": len(p.coverage.unran),
                        "ran_digest": p.coverage.ran_digest,
                    }
                    for p in (self.merge.parts if self.merge is not None else ())
                ],
            }
            | ({"nothing_to_test": list(self.nothing_to_test)} if self.nothing_to_test else {})
            | ({"vouched": list(self.vouched)} if self.vouched else {})
        )


# -- what the checks share ----------------------------------------------------------------------

REQUIRED = (
    binding.P_GENERATION,
    binding.P_TREE_START,
    binding.P_TREE_END,
    binding.P_SELECTION,
    binding.P_SEAL,
)


def binding_problem(report: Report) -> str:
    """Why the report's properties do not bind it ("" when they do), without the path."""
    props = report.properties
    if not props:
        return "carries no genstamp binding (no genstamp.* properties)"
    fmt = props.get(binding.P_FORMAT)
    if fmt not in binding.READS:
        return (
            f"is evidence format {fmt!r} written by genstamp "
            f"{props.get(binding.P_VERSION, '?')}; this genstamp {__version__} reads formats "
            f"{' and '.join(binding.READS)} (use one genstamp version in pre-commit and the "
            "test env)"
        )
    missing = [name for name in REQUIRED if not props.get(name)]
    if missing:
        return f"lacks the properties {', '.join(missing)}"
    observes = props.get(binding.P_OBSERVES, "0")
    level = (
        int(observes) if observes.isascii() and observes.isdigit() and len(observes) < 10 else None
    )
    if level is None or level < binding.OBSERVES:
        return (
            f"was recorded by genstamp {props.get(binding.P_VERSION, '?')}, whose plugin "
            f"observes less than this genstamp {__version__} judges by (observation level "
            f"{observes[:20]!r}, this genstamp's {binding.OBSERVES}): what it did not look for, it "
            "recorded as not found (install this genstamp in the test environment too, the "
            "version pre-commit runs, then rerun the tests)"
        )
    return ""


def read_audit(props: Mapping[str, str]) -> tuple[audit.Audit | None, str]:
    """The loaded-code audit, or None when the runner had none; and why it cannot be read."""
    return _read_audit(props.get(binding.P_AUDIT, ""))


@functools.lru_cache(maxsize=2)  # several rules read one audit, which can be large
def _read_audit(text: str) -> tuple[audit.Audit | None, str]:
    return _read_record(text, audit.from_json, "audit", audit.AUDIT_VERSION)


def read_coverage(props: Mapping[str, str]) -> tuple[coverage.Coverage | None, str]:
    """What the run covered, or None when the runner could not say; and why it cannot be read."""
    return _read_coverage(props.get(binding.P_COVERAGE, binding.UNAVAILABLE))


@functools.lru_cache(maxsize=8)  # the merge reads every part's, more than once
def _read_coverage(text: str) -> tuple[coverage.Coverage | None, str]:
    versions = " or ".join(str(v) for v in coverage.READS)
    return _read_record(text, coverage.from_json, "coverage", versions)


def read_unseen(props: Mapping[str, str]) -> tuple[binding.Unseen | None, str]:
    """What the run found that no tree holds, None when its evidence does not say (none, or an
    older genstamp's); and why it cannot be read."""
    return _read_record(
        props.get(binding.P_UNSEEN, binding.UNAVAILABLE),
        binding.unseen_from_json,
        "unseen",
        binding.UNSEEN_VERSION,
    )


_R = TypeVar("_R")


def _read_record(
    text: str, parse: Callable[[str], _R], name: str, version: object
) -> tuple[_R | None, str]:
    """A JSON property, None when the runner had none (``unavailable``), and why it cannot be
    read."""
    if text == binding.UNAVAILABLE:
        return None, ""
    try:
        return parse(text), ""
    # A hand-edited or newer record must not crash the gate, nor be skipped in silence: wrong
    # shapes, integers over Python's digit limit, arrays nested past the stack, other versions.
    except (ValueError, KeyError, TypeError, AttributeError, RecursionError) as exc:
        return None, (
            f"its genstamp.{name} cannot be read ({str(exc)[:100]}); this genstamp "
            f"{__version__} reads {name} format {version}"
        )


def merged(facts: Facts) -> coverage.Merge | None:
    """This evidence and the parts merged with it, judged against the tested tree's suites;
    None when there is nothing to merge over (no coverage recorded, no suite listed)."""
    bound = _bound(facts)
    if bound is None or facts.suites is None:
        return None
    own, _ = read_coverage(bound.props)
    if own is None:
        return None
    parts = [coverage.Part(facts.evidence, _credited(bound.props, own))]
    for path, report in facts.others:
        if binding_problem(report):
            continue
        cov, _ = read_coverage(report.properties)
        if cov is not None:
            parts.append(coverage.Part(path, _credited(report.properties, cov)))
    return coverage.merge(parts, facts.suites)


def _credited(props: Mapping[str, str], cov: coverage.Coverage) -> coverage.Coverage:
    """``cov`` as the merge may count it: a run whose own options changed the suite (a
    warning the configuration makes an error let through) ran its tests as no run of the suite
    runs them, and stands for none of them, whichever genstamp wrote its record."""
    said = props.get(binding.P_SELECTION_REASONS, "").removeprefix("not checked: ")
    if not cov.outcomes or not any(r.startswith(binding.OPTIONS_REASON) for r in said.split("; ")):
        return cov
    return cov._replace(outcomes={}, unran=tuple(sorted({*cov.unran, *cov.outcomes})))


def mismatching(
    tested: str, targets: Sequence[Target], views: Mapping[str, str] = _EMPTY
) -> list[tuple[str, list[str]]]:
    """The trees among ``targets`` that are not ``tested`` (each seen as ``views`` shows it),
    each with its labels, in order."""
    trees: dict[str, list[str]] = {}
    for target in targets:
        if views.get(target.tree, target.tree) != views.get(tested, tested):
            trees.setdefault(target.tree, []).append(target.label)
    return list(trees.items())


def diff_pairs(
    report: Report, targets: Sequence[Target], views: Mapping[str, str] = _EMPTY
) -> list[tuple[str, str]]:
    """The (old, new) tree pairs whose differing paths the messages name, as ``views`` shows
    them: a few mismatching targets (a push of thousands of refs gets a few diffs) and the
    tree's start and end."""
    props = report.properties
    tested = props[binding.P_TREE_END]
    seen = views.get(tested, tested)
    pairs = [
        (seen, views.get(tree, tree))
        for tree, _ in mismatching(tested, targets, views)[:TREE_LIMIT]
    ]
    start = str(props.get(binding.P_TREE_START))
    if views.get(start, start) != seen:
        pairs.append((views.get(start, start), seen))
    return pairs


# What a run's report in the work tree never is, whatever --junitxml named: code, or what pytest
# or a build reads as configuration (such a path is compared as any other, never left out)
_NOT_REPORTS: tuple[str, ...] = (".py", ".pyi", ".pyc", ".pyo", ".pyw", ".pth", ".so", ".pyd")
_NOT_REPORTS += (".zip", ".egg", ".whl", ".toml", ".cfg", ".ini")


def output_path(props: Mapping[str, str]) -> str:
    """The report the run wrote inside the work tree ("" when none): the run's output, left
    out of the trees compared unless the tests loaded it as code; never a path of code or of
    a configuration (`--junitxml=pkg/__init__.py`), which is compared as any other."""
    output = props.get(binding.P_OUTPUT, "")
    if not output or output.startswith("/") or ".." in output.split("/"):
        return ""
    return "" if output.endswith(_NOT_REPORTS) else output


class _Bound(NamedTuple):
    """A report whose binding holds: what most checks start from."""

    props: Mapping[str, str]
    tested: str
    report: Report


def _bound(facts: Facts) -> _Bound | None:
    report = facts.report
    if report is None or binding_problem(report):
        return None
    props = report.properties
    return _Bound(props, props[binding.P_TREE_END], report)


def _same_checkout(facts: Facts, props: Mapping[str, str]) -> bool:
    """Whether this checkout ran the tests: its id and git dir (device, inode) when the
    evidence records them (a move keeps both, a copy only the id), else the git dir's path."""
    recorded = props.get(binding.P_CHECKOUT_ID)
    if recorded:
        return compare_digest(recorded, facts.checkout_id)
    return props.get(binding.P_CHECKOUT) == facts.gitdir


def _same_generation(facts: Facts, bound: _Bound) -> bool:
    gen = facts.generation
    return (
        gen is not None
        and bound.props.get(binding.P_GENERATION, binding.NONE) == gen.id
        and _same_checkout(facts, bound.props)
    )


def fresh_tree(facts: Facts) -> str | None:
    """The tree (as the views show it) that evidence of the current generation, run in this
    checkout, tested; None when there is no such evidence. Its verdict on that tree is newer
    than any remembered one."""
    bound = _bound(facts)
    if bound is None or not _same_generation(facts, bound):
        return None
    return _view(facts, bound.tested)


def _view(facts: Facts, tree: str) -> str:
    return facts.views.get(tree, tree)


def _used(facts: Facts) -> set[str]:
    """The files of the work tree the tests loaded or read, as the evidence's audit says."""
    bound = facts.report.properties if facts.report is not None else {}
    audited = read_audit(bound)[0]
    return {*audited.loaded, *audited.read} if audited is not None else set()


def _differing_paths(
    facts: Facts, a: str, b: str, *, judged: bool = False, during: bool = False
) -> str:
    """The paths tree ``a`` and tree ``b`` differ in; ``judged``: ``a`` is the tested tree and
    ``b`` a commit's tree judged (not the work tree's, where such paths were removed since);
    ``during``: ``a`` and ``b`` are the trees at the run's start and end."""
    pair = (_view(facts, a), _view(facts, b))
    paths = facts.diffs[pair]
    if paths is None:
        return "the tested tree is no longer in the object store, so the paths cannot be named"
    if not paths:
        return "no paths differ"
    said = "differs in " + limit(paths, PATH_LIMIT)
    if all(bytecode.is_bytecode_path(p.rpartition(" -> ")[2]) for p in paths):
        # git neither tracks nor ignores them: `git add -A`, and the tree, take them in
        said += " (only bytecode, which git does not ignore here: add __pycache__/ and *.py[co]"
        said += " to .gitignore)"
    elif (
        not judged
        and not during
        and set(paths) <= facts.untracked_rewritten
        and not set(paths) & _used(facts)
    ):
        # files git does not track, which the tested tree held too and the tests did not use,
        # changed since the run: a report written after the tests ended (pytest-cov's
        # coverage.xml, `coverage run`'s .coverage), which every rerun writes anew
        said += (
            " (only files git does not track, written since the run: a report a plugin or"
            " `coverage run` writes after the tests end: have git ignore them (.gitignore),"
            " then rerun)"
        )
    elif not during and set(paths) <= facts.part_outputs:
        # parts of a split, each writing a report of its own name beside the others'
        said += (
            " (only the reports the parts of the run wrote into the work tree, each part's"
            " trees holding the others' as they were then: give every part the same --junitxml"
            " name, or write the reports to a folder git ignores or outside the work tree,"
            " then rerun the parts)"
        )
    elif not during and set(paths) <= facts.gone:
        said += (
            " (only files the tested tree held that are gone since the run: removed, or dropped"
            " by a rebase or a reset: rerun the tests on the tree as it is)"
        )
    elif judged and set(paths) <= facts.only_in_first.get(pair, frozenset()):
        if set(paths) <= facts.tracked:  # committed later, or staged: a newer commit's
            return said + (
                " (files git tracks, which this commit does not hold yet: the tests ran on a"
                " later commit's tree, or with them staged: judge the commit tested, or check"
                " this one out and rerun)"
            )
        used = _used(facts)
        if used & set(paths):  # a clean clone of the commit lacks what the tests used
            return said + (
                f" (files the tests used, which the commit does not hold:"
                f" {limit(sorted(used & set(paths)), PATH_LIMIT)}: commit them, then rerun; or,"
                " where you dropped them (a rebase, a reset), rerun the tests on this commit)"
            )
        # untracked files beside the commit (an editor's swap file, a worktree kept inside):
        # rerunning with them there tests the same tree again
        said += (
            " (only files the tested tree holds and this one does not, such as untracked files"
            " the run had beside the commit, an editor's swap file or a worktree kept inside "
            "the work tree: commit them, or remove them or have git ignore them (.gitignore, "
            ".git/info/exclude), then rerun)"
        )
    return said


# -- the checks, one per rule: each yields its messages in the order they are reported ----------


class Listed(NamedTuple):
    """A finding whose message names the first few of ``items``; ``--json`` carries them all."""

    message: str
    items: tuple[str, ...]


def listed(prefix: str, items: Sequence[str], most: int) -> Listed:
    return Listed(prefix + limit(items, most), tuple(items))


Check = Callable[["Facts", "Config"], Iterator["str | Listed"]]


def _no_stamp(facts: Facts, settings: Config) -> Iterator[str]:
    if facts.stamp_problem:
        yield facts.stamp_problem
    elif facts.generation is None:
        yield f"no generation stamp at {facts.stamp_path}"


def _no_evidence(facts: Facts, settings: Config) -> Iterator[str]:
    if facts.report is None and not facts.unreadable:
        note = "; ".join(facts.config_problems)
        stops = f" (and pytest stops before any test: {note} — fix it first)" if note else ""
        yield f"no JUnit file at {facts.evidence}{stops}"


def _unbound_evidence(facts: Facts, settings: Config) -> Iterator[str]:
    if facts.report is None:
        if facts.unreadable:
            yield facts.unreadable
        return
    problem = binding_problem(facts.report)
    if problem:
        yield f"{facts.evidence} {problem}"
        return
    bound = _bound(facts)
    assert bound is not None
    gen = facts.generation
    if (
        gen is not None
        and _same_generation(facts, bound)
        and not compare_digest(
            binding.seal(gen.key, dict(bound.props), bound.report).encode(),
            bound.props.get(binding.P_SEAL, "").encode("utf-8", "surrogateescape"),
        )
    ):
        yield f"{facts.evidence} was changed after the run: its seal does not match its contents"
    _, unreadable = read_audit(bound.props)
    if unreadable:
        yield f"{facts.evidence}: {unreadable}"
    _, unreadable = read_coverage(bound.props)
    if unreadable:
        yield f"{facts.evidence}: {unreadable}"
    _, unreadable = read_unseen(bound.props)
    if unreadable:
        yield f"{facts.evidence}: {unreadable}"


# Why one folder's evidence names another checkout id than its git dir holds now
CHECKOUT_ID_ANEW = (
    "its genstamp/checkout-id was removed or made anew since, or this folder was copied or "
    "moved in over another"
)


def _stale_generation(facts: Facts, settings: Config) -> Iterator[str]:
    # The generation is the primary binding. The file's mtime is only a hint (clocks move back).
    bound, gen = _bound(facts), facts.generation
    if bound is None or gen is None:
        return
    ev_gen = bound.props.get(binding.P_GENERATION, binding.NONE)
    where = bound.props.get(binding.P_CHECKOUT)
    same = _same_checkout(facts, bound.props)
    here = where == facts.gitdir  # this folder, under another checkout id: removed, or a copy's
    anew = f"this folder under another checkout id ({CHECKOUT_ID_ANEW})"
    if ev_gen != gen.id:
        elsewhere = f"another checkout ({where or ''})"
        origin = "" if same else f", in {anew if here else elsewhere}"
        mtime = facts.report_mtime_ns
        hint = (
            "; the JUnit file was written before the current generation began"
            if mtime is not None and mtime < gen.created_ns
            else ""
        )
        wrote = bound.props.get(binding.P_VERSION, "")
        unread = bound.props.get(binding.P_STAMP_UNREAD, "")
        if ev_gen == binding.NONE and unread:
            # the test environment's genstamp is another build, of another stamp format
            hint += (
                f"; the tests' genstamp read no generation: {unread[:300]} (rerunning them "
                "with it changes nothing: use one genstamp in pre-commit and the test env)"
            )
        elif ev_gen == binding.NONE and wrote and wrote != gen.writer:
            # the test environment's genstamp found no stamp it reads: rerunning changes nothing
            hint += (
                f"; the tests ran with genstamp {wrote}, the stamp was written by genstamp "
                f"{gen.writer or '?'} (use one genstamp version in pre-commit and the test env)"
            )
        yield (
            f"the evidence is from generation {ev_gen[:12]}{origin}, the current one is "
            f"{gen.id[:12]} (begun {gen.created} by {gen.trigger}){hint}"
        )
    elif not same:
        # The same generation id elsewhere: a copied (cp -r) checkout carries its stamp and
        # evidence along, but not the environment the tests ran in.
        if here:
            yield f"the evidence was recorded in {anew}"
        else:
            yield f"the evidence was recorded in another checkout ({where}), not {facts.gitdir}"


def _tree_mismatch(facts: Facts, settings: Config) -> Iterator[str]:
    """One message per tree that is not the tested one, naming its targets; a push of thousands
    of refs gets a few lines (and a few diffs), then one line counting the rest."""
    bound = _bound(facts)
    if bound is None:
        return
    tested = bound.tested
    trees = mismatching(tested, facts.targets, facts.views)
    for tree, labels in trees[:TREE_LIMIT]:
        verb = "is" if len(labels) == 1 else "are"
        yield (
            f"the tests ran on tree {tested[:12]}, {limit(labels, LABEL_LIMIT)} {verb} tree "
            f"{tree[:12]}: {_differing_paths(facts, tested, tree, judged=WORK_TREE not in labels)}"
        )
    rest = [labels for _, labels in trees[TREE_LIMIT:]]
    if rest:
        count = sum(len(labels) for labels in rest)
        yield (
            f"and {count} more on {len(rest)} other {'tree' if len(rest) == 1 else 'trees'}, "
            f"none of them tree {tested[:12]}: "
            f"{limit([labels[0] for labels in rest], LABEL_LIMIT)}"
        )


def _tree_moved(facts: Facts, settings: Config) -> Iterator[str]:
    bound = _bound(facts)
    if bound is None:
        return
    tested = bound.tested
    start = str(bound.props.get(binding.P_TREE_START))
    if _view(facts, start) != _view(facts, tested):
        said = _differing_paths(facts, start, tested, during=True)
        pair = (_view(facts, start), _view(facts, tested))
        named = {p.rpartition(" -> ")[2] for p in facts.diffs[pair] or ()}
        rewritten = sorted(named & facts.tracked)
        if rewritten:  # (ignoring a tracked file changes nothing: git tracks it still)
            said += (
                f" (files git tracks changed while the tests ran: {limit(rewritten, PATH_LIMIT)}:"
                " an edit made meanwhile, then rerun once it is done; or a file the run"
                " rewrote, a snapshot or regression file an update option wrote: commit what"
                " it wrote, or run without that option)"
            )
        output = output_path(bound.props)
        if output and output in (facts.diffs[(_view(facts, start), _view(facts, tested))] or ()):
            # left in the trees compared because the tests read it (or loaded it)
            said += (
                f" ({output} is the run's own --junitxml, which the tests read before pytest"
                " overwrote it: write the report outside the tree, or at an ignored path)"
            )
        yield f"the tree changed while the tests ran ({start[:12]} -> {tested[:12]}): {said}"


def _loaded_not_tested(facts: Facts, settings: Config) -> Iterator[str | Listed]:
    """Code the tests loaded that is not the tested tree's: a blob that differs from the
    tree's for its path once git's conversion is applied (a CRLF checkout, a clean filter),
    or a file the tree does not hold that is neither ignored nor installed."""
    bound = _bound(facts)
    loaded = read_audit(bound.props)[0] if bound is not None else None
    programs = [f.path for f in loaded.flags if f.kind == audit.MODE] if loaded else []
    if programs:
        yield listed(
            "files the tests ran as programs are executable here but not in the tested tree "
            "(core.fileMode=false: git does not see the bit, and a clean clone cannot run "
            "them; `git update-index --chmod=+x` each, commit, rerun): ",
            programs,
            PATH_LIMIT,
        )
    blobs = facts.tested_blobs
    if loaded is None or blobs is None:
        return
    differ: list[str] = []
    absent: list[str] = []
    linked: list[str] = []
    as_files: list[str] = []
    for rel, loads in loaded.loaded.items():
        if facts.placed.get(rel) == LINKED and rel not in loaded.made:
            linked.append(rel)  # (the tree may hold the link itself: a file that leads out)
        elif facts.placed.get(rel) == AS_FILE and rel not in loaded.made:
            as_files.append(rel)
        elif rel in blobs:
            if any(not _tested_blob(facts, rel, raw, blobs[rel]) for raw in loads):
                differ.append(rel)
        elif facts.placed.get(rel) not in (INSTALLED, IGNORED) and rel not in loaded.made:
            absent.append(rel)  # ignored files are ignored-code's; unknown is not tested
    if differ:
        yield listed("code loaded by the tests differs from the tested tree: ", differ, PATH_LIMIT)
    if absent:
        yield listed("code loaded by the tests is not in the tested tree: ", absent, PATH_LIMIT)
    if linked:
        yield listed(
            "code loaded by the tests lies where a symbolic link of the tested tree leads, out "
            "of the work tree (a clean clone has the link, not the files; commit them instead): ",
            linked,
            PATH_LIMIT,
        )
    if as_files:
        yield listed(
            "code loaded by the tests is a plain file where the tested tree holds a symbolic "
            "link (under core.symlinks=false git checks a link out as a file holding its "
            "target, and a commit of that file keeps the link: a clean clone has the link; "
            "`git rm --cached` it and add the file): ",
            as_files,
            PATH_LIMIT,
        )
    folders = _unheld(facts, loaded.namespaces, blobs)  # an ignored one is ignored-code's
    if folders:
        yield listed(
            "the tests imported namespace packages from folders the tested tree does not hold "
            "(a clean clone has none; one that holds only bytecode, left by a package removed "
            "where no hook scrubbed it, `genstamp stamp` removes): ",
            folders,
            PATH_LIMIT,
        )


def _unheld(facts: Facts, rels: Iterable[str], held: Container[str]) -> list[str]:
    """Of ``rels``, those not ``held`` and in no place an environment installed or git
    ignores (those are other rules')."""
    return [r for r in rels if r not in held and facts.placed.get(r) not in (INSTALLED, IGNORED)]


def _empty_folder(facts: Facts, settings: Config) -> Iterator[str | Listed]:
    bound = _bound(facts)
    loaded = read_audit(bound.props)[0] if bound is not None else None
    if loaded is None or facts.tested_blobs is None:
        return
    # a submodule not checked out: an empty folder in every clone
    empty = _unheld(facts, loaded.folders, facts.tested_blobs)
    if empty:
        yield listed(
            "the tests used folders that held no file (wrote into them, made a folder in them, "
            "or listed them), which git does not keep (a clean clone has none): ",
            empty,
            PATH_LIMIT,
        )


def _tested_blob(facts: Facts, rel: str, raw: str, tested: str) -> bool:
    """Whether the bytes loaded (raw blob id ``raw``) are what the tree holds, as ``git add``
    would store them at ``rel``; where that cannot be known the raw blob must match. The tree's
    own bytes are not, where a checkout writes other code of them (``facts.added`` says None:
    an ``ident`` a clone expands)."""
    if raw == tested and (rel, raw) in facts.added:
        return facts.added[(rel, raw)] == tested
    return raw == tested or facts.added.get((rel, raw)) == tested


def _ignored_code(facts: Facts, settings: Config) -> Iterator[str | Listed]:
    bound = _bound(facts)
    loaded = read_audit(bound.props)[0] if bound is not None else None
    if loaded is None or facts.tested_blobs is None:
        return
    found = [
        rel
        for rel in loaded.loaded
        if rel not in facts.tested_blobs
        and facts.placed.get(rel) == IGNORED
        and not generated(rel, settings.generated)
        and rel not in loaded.made  # code the run made (generated, a pytester project)
    ]
    found += [  # a namespace package's git-ignored folder, named when none of its code is
        rel
        for rel in loaded.namespaces
        if rel not in facts.tested_blobs
        and facts.placed.get(rel) == IGNORED
        and not generated(rel, settings.generated)
        and rel not in loaded.made
        and not any(f.startswith(rel + "/") for f in found)
        and not _in_a_link_tree(rel)
    ]
    if found:
        yield listed(
            "the tests loaded code from git-ignored files, which a clean clone does not have: ",
            found,
            PATH_LIMIT,
        )


def _in_a_link_tree(rel: str) -> bool:
    """Whether ``rel`` lies in the link tree of setuptools' strict editable install
    (``build/__editable__.<name>-<version>-<tag>/``): its folders are real, its files links
    into the work tree (loaded as the tree's files; one it lacks is ``foreign-origin``'s)."""
    return any(part.startswith("__editable__.") for part in rel.split("/")[:-1] or [rel])


def _unseen(facts: Facts) -> binding.Unseen | None:
    """What the run found that no tree holds (``binding.P_UNSEEN``), None when its evidence
    does not say (none, or an older genstamp's)."""
    bound = _bound(facts)
    return read_unseen(bound.props)[0] if bound is not None else None


def _now_too(facts: Facts, recorded: binding.Unseen | None) -> bool:
    """Whether the work tree as it is now counts: where the evidence does not say what the run
    found, or where the work tree itself is judged (a commit is judged by what it holds: a
    change made after the run is in no commit pushed)."""
    return recorded is None or any(t.label == WORK_TREE for t in facts.targets)


def _dirty_submodule(facts: Facts, settings: Config) -> Iterator[str | Listed]:
    """The submodules whose work tree held changes when the tests ran (as the run found them),
    and those that hold changes now where that counts (``_now_too``)."""
    recorded = _unseen(facts)
    now = facts.submodules if _now_too(facts, recorded) else ()
    for path, changes in sorted((recorded.dirty if recorded else {}).items()):
        if not any(sub.path == path for sub in now):
            yield listed(
                f"submodule {path} held changes its recorded commit does not hold when the "
                "tests ran: ",
                changes,
                PATH_LIMIT,
            )
    for sub in now:
        yield listed(
            f"submodule {sub.path} has changes its recorded commit does not hold: ",
            sub.changes,
            PATH_LIMIT,
        )


def _hidden_change(facts: Facts, settings: Config) -> Iterator[str | Listed]:
    """The hidden changes the tests loaded or read (all of them, when the audit cannot say:
    no audit, or more files read than it lists): as the run found them, and as the work tree
    holds them now where that counts (``_now_too``)."""
    bound = _bound(facts)
    loaded = read_audit(bound.props)[0] if bound is not None else None
    recorded = _unseen(facts)
    hidden = dict(facts.hidden) if _now_too(facts, recorded) else {}
    hidden.update(recorded.hidden if recorded is not None else {})
    if loaded is not None and "*" not in loaded.read:
        used = set(loaded.loaded) | set(loaded.read) | suite.settings_files(facts.suites or ())
        used |= {s.config.source for s in facts.suites or () if s.config.source}  # (above one)
        # and the modules of the folders the imports searched: one deleted was found absent
        searched = set(audit.searched(loaded))
        used.update(
            rel
            for rel in hidden
            if posixpath.dirname(rel) in searched and rel.endswith(audit.MODULE_SUFFIXES)
        )
        hidden = {rel: option for rel, option in hidden.items() if rel in used}
    if hidden:
        found = [f"{rel} ({option})" for rel, option in sorted(hidden.items())]
        yield listed(
            "files the tests loaded or read hold changes the tree leaves out, as the run "
            "found them or as the work tree holds them now (the index tells git not to look "
            "at them, or, written through another link during the run, the run's watch of "
            "the work tree did not see them; a clean clone has the committed files): ",
            found,
            PATH_LIMIT,
        )


def _unregistered_submodule(facts: Facts, settings: Config) -> Iterator[str | Listed]:
    by_link: dict[str, list[str]] = {}
    for rel, link in sorted(facts.unregistered.items()):
        by_link.setdefault(link, []).append(rel)
    for link, loaded in by_link.items():
        yield listed(
            f"the tests loaded code from {link}, a repository the tested tree records without "
            "a URL in .gitmodules, or with update = none there (a clean clone does not fetch "
            "it): ",
            loaded,
            PATH_LIMIT,
        )


def _stale_bytecode(facts: Facts, settings: Config) -> Iterator[str | Listed]:
    """Bytecode in the work tree older than the generation, sourceless legacy .pyc files, and
    stale or sourceless bytecode the audit saw the tests load."""
    bound = _bound(facts)
    if bound is None:
        return
    found = work_tree_bytecode(facts)
    found += _flagged(facts, bound, (audit.STALE, audit.SOURCELESS))
    if found:
        yield listed("", found, FLAG_LIMIT)


def work_tree_bytecode(facts: Facts) -> list[str]:
    """The bytecode files in the work tree that no run of the current generation vouches for:
    sourceless legacy ``.pyc`` files, and bytecode older than the generation."""
    gen = facts.generation
    found: list[str] = []
    for pyc in facts.bytecode:
        if pyc.sourceless:
            source = PurePosixPath(pyc.path).with_suffix(".py").name
            found.append(f"{pyc.path} is sourceless bytecode (no {source})")
        elif gen is not None and pyc.mtime_ns < gen.created_ns:
            found.append(f"{pyc.path} is older than the generation")
    return found


def _flagged(facts: Facts, bound: _Bound, kinds: Sequence[str]) -> list[str]:
    """The audit's flags of ``kinds``, as ``module (path: detail)``; an installed package's
    bytecode or extension is the installer's business, not the checkout's."""
    loaded, _ = read_audit(bound.props)
    if loaded is None:
        return []
    return [
        f"{f.module} ({f.path}: {f.detail})"
        for f in loaded.flags
        if f.kind in kinds and facts.placed.get(f.path) != INSTALLED
    ]


def _stale_extension(facts: Facts, settings: Config) -> Iterator[str | Listed]:
    bound = _bound(facts)
    if bound is not None:
        found = _flagged(facts, bound, (audit.STALE_EXT,))
        if found:
            yield listed("", found, FLAG_LIMIT)


def _foreign_origin(facts: Facts, settings: Config) -> Iterator[str | Listed]:
    bound = _bound(facts)
    loaded = read_audit(bound.props)[0] if bound is not None else None
    if loaded is not None:
        # one line per module and file, though several processes flagged it (T24 06)
        # a module whose file never ran (its code came from elsewhere) says how (Z24 05)
        foreign = list(
            dict.fromkeys(
                f"{f.module} from {f.path}"
                + (f": {f.detail}" if f.path.startswith("<") or _says_how(f.detail) else "")
                for f in loaded.flags
                if f.kind == audit.FOREIGN
            )
        )
        if foreign:
            yield listed("", foreign, FLAG_LIMIT)


def _says_how(detail: str) -> bool:
    """A flag's detail that the line shows: what ran, where the file alone does not say it."""
    return detail.startswith(audit.SAYS_HOW)


def _tests_failed(facts: Facts, settings: Config) -> Iterator[str]:
    bound = _bound(facts)
    if bound is not None:
        counts = bound.report.counts
        if counts.failed or counts.errors:
            yield f"{counts.failed} failed, {counts.errors} errors in {counts.tests}"
        elif bound.props.get(binding.P_SESSION_FAILED):
            yield f"the session failed: {bound.props[binding.P_SESSION_FAILED]}"
    merge = merged(facts) if facts.primary and bound is not None else None
    for found in merge.suites if merge is not None else ():
        for expr in selection.unreadable(found.config.markexpr, found.config.keyword):
            where = found.config.source or "its configuration"
            yield (
                f"{where} gives {expr}, which pytest cannot read: a plain pytest of the tree "
                "stops with a usage error before any test, as a clean clone's does (a run "
                "that gives its own expression passes over it): fix the expression"
            )


def _no_tests(facts: Facts, settings: Config) -> Iterator[str]:
    """No test executed, in this evidence and the parts merged with it: a part that ran none
    (``--collect-only``, a ``-k`` that matches nothing) adds nothing to the parts that did, and
    the primary evidence judges the parts together."""
    bound = _bound(facts)
    if bound is None or not facts.primary:
        return
    counts = bound.report.counts
    merge = merged(facts)
    if merge is not None and len(merge.parts) > 1:
        counts = merged_counts(merge)
    if counts.passed + counts.failed + counts.errors == 0:
        yield f"no test executed ({counts.skipped} skipped)"


def _partial_run(facts: Facts, settings: Config) -> Iterator[str]:
    if settings.allow_partial:
        return
    yield from left_out(facts)


def left_out(facts: Facts) -> Iterator[str]:
    """What the evidence (with its merged parts) left out of the suite: suite files no part
    collected, tests a part collected and no part ran. Evidence that records no coverage
    (``genstamp run``) says itself whether it was partial."""
    bound = _bound(facts)
    if bound is None or not facts.primary:
        return
    if read_coverage(bound.props)[0] is None:
        if bound.props.get(binding.P_SELECTION) != "full":
            reasons = bound.props.get(binding.P_SELECTION_REASONS) or "not recorded"
            yield f"the run covered part of the suite: {reasons}"
        return
    merge = merged(facts)
    if merge is None:
        yield "the suite cannot be listed: the tested tree is not in the object store"
        return
    if not merge.complete:
        parts = f" ({len(merge.parts)} parts merged)" if len(merge.parts) > 1 else ""
        # what genstamp could not read statically, since it may be why files look left out
        notes = [p for s in merge.suites for p in s.problems]
        note = f" (note: {'; '.join(notes)})" if notes else ""
        # why, as the run saw it, where what was left out does not show it: an option of the
        # run counts every file it collected as collected in part
        said = bound.props.get(binding.P_SELECTION_REASONS, "").split("; ")
        options = [r for r in said if r.startswith(binding.OPTIONS_REASON)]
        why = ""
        if options and len(merge.parts) == 1:  # the reason first: its tests count as none
            why = f" ({options[0]}: the tests it ran under them count as none of the suite's)"
        left = "; ".join(merge.left_out() + [r for r in said if binding.UNSEEN_REASON in r])
        outside = [f for f in merge.missing if f in facts.sparse_out]
        if outside:  # (no run here can collect them)
            many = f"{len(outside)} of them" if len(outside) > 1 else outside[0]
            left += (
                f"; {many} outside the sparse checkout: `git sparse-checkout add` their folders"
                " (or `git sparse-checkout disable`), then run them"
            )
        yield f"the run covered part of the suite{parts}{why}: {left}{note}"


def _parts_disagree(facts: Facts, settings: Config) -> Iterator[str]:
    yield from _disagreeing(merged(facts) if facts.primary else None, "parts")


def _disagreeing(merge: coverage.Merge | None, parts: str) -> Iterator[str]:
    """What the merge of ``parts`` (the word for them) finds they disagree on."""
    if merge is not None and merge.conflicts:
        yield (
            f"tests ran in two {parts} with different outcomes: "
            f"{limit(list(merge.conflicts), PATH_LIMIT)}"
        )
    if merge is not None and merge.apart:
        yield APART + limit(list(merge.apart), PATH_LIMIT)


# the test files of one module name that parts ran apart (``coverage.Merge.apart``)
APART = (
    "test files of one module name ran in separate parts, which no run of the whole suite "
    "imports together (pytest's import file mismatch: __init__.py files, or "
    "--import-mode=importlib, tell them apart): "
)


def warm_outcomes(facts: Facts) -> Mapping[str, str] | None:
    """Each test's outcome in the warm evidence, its parts merged; None when not recorded."""
    bound = _bound(facts)
    if bound is None:
        return None
    merge = merged(facts)
    if merge is not None:
        return merge.outcomes()
    own, _ = read_coverage(bound.props)
    return own.outcomes if own is not None else None


def diverging(warm: Mapping[str, str], clean: CleanRoom, workdir: str = "") -> list[str]:
    """The tests whose outcome differs between the warm run and the clean room, each with both
    outcomes. A test the warm run did not run makes no claim to compare; one the clean room
    did not run (not collected: an import error there) is `not run` unless the clean run was
    narrowed by pytest arguments. A node id that names its checkout's folder (a test
    parametrized by the absolute paths of its data files) is compared with the clean room's
    as the clean record writes it, that folder named ``CHECKOUT``."""
    out = []
    for nodeid in sorted(warm):
        seen = clean.outcomes.get(nodeid)
        if seen is None and workdir:
            from genstamp.cleanrecord import CHECKOUT, spellings

            for spelled in spellings(workdir):  # (pytest escapes a parameter id's non-ASCII)
                if spelled in nodeid:
                    seen = clean.outcomes.get(nodeid.replace(spelled, CHECKOUT))
                    break
        if seen is None:
            if clean.narrowed:
                continue
            seen = "not run"
        if seen != warm[nodeid]:
            out.append(f"{nodeid} ({warm[nodeid]} warm, {seen} clean)")
    return out


_RED = frozenset({"failed", "error"})


def _clean_room_diverged(facts: Facts, settings: Config) -> Iterator[str | Listed]:
    bound = _bound(facts)
    if bound is None or not facts.primary:
        return
    if not settings.require_clean_room:  # unreadable records are no-clean-room's otherwise
        for problem in facts.clean_room_problems:
            yield f"the clean-room evidence cannot be compared: {problem}"
    seen = _view(facts, bound.tested)
    trees = [bound.tested, *(t.tree for t in facts.targets if _view(facts, t.tree) == seen)]
    record = next((facts.clean_rooms[t] for t in trees if t in facts.clean_rooms), None)
    if record is None:
        return
    warm = warm_outcomes(facts)
    if warm is None:
        # no outcome of each test to compare (`genstamp run`'s evidence): a clean room whose
        # tests failed is a divergence from a warm run that passed, whichever tests they were
        red = [n for n, outcome in sorted(record.outcomes.items()) if outcome in _RED]
        failing = record.counts.get("failed", 0) + record.counts.get("errors", 0)
        if (red or failing) and bound.report.counts.failed + bound.report.counts.errors == 0:
            yield listed(
                f"tree {record.tree[:12]} failed in the clean room ({record.when}), and this "
                "checkout's evidence records no outcome of each test to compare (a `genstamp "
                "run`): ",
                red or [f"{failing} failed or errored"],
                PATH_LIMIT,
            )
        return
    found = diverging(warm, record, facts.workdir)
    if found:
        yield listed(
            f"tree {record.tree[:12]} gave other outcomes in the clean room ({record.when}) "
            "than in this checkout: ",
            found,
            PATH_LIMIT,
        )


def _no_clean_room(facts: Facts, settings: Config) -> Iterator[str]:
    if not settings.require_clean_room or not facts.primary:
        return
    yield from facts.clean_room_problems
    for tree, labels in _trees_of(facts.targets).items():
        record = facts.clean_rooms.get(tree)
        what = f"tree {tree[:12]} ({limit(labels, LABEL_LIMIT)})"
        if record is None:
            latest = facts.clean_room_latest
            other = f"; the latest clean run tested tree {latest[:12]}" if latest else ""
            yield f"no clean-room evidence for {what}{other}"
        elif not record.ok:
            first = record.failures[0] if record.failures else "refused"
            yield f"the clean run of {what} did not pass ({record.when}): {first}"
        elif not record.complete:
            yield f"the clean run of {what} covered part of the suite ({record.when})"


def _trees_of(targets: Sequence[Target]) -> dict[str, list[str]]:
    trees: dict[str, list[str]] = {}
    for target in targets:
        trees.setdefault(target.tree, []).append(target.label)
    return trees


class Rule(NamedTuple):
    name: str
    remedy: str
    check: Check


TABLE = (
    Rule(
        "no-stamp",
        "run `genstamp stamp` (it scrubs bytecode), then rerun the tests",
        _no_stamp,
    ),
    Rule(
        "no-evidence",
        "run the full test suite with genstamp installed in the environment pytest runs in (a "
        "tox or nox env: add genstamp to its deps), or `genstamp run`",
        _no_evidence,
    ),
    Rule(
        "unbound-evidence",
        "rerun the tests with genstamp installed; do not edit the JUnit file",
        _unbound_evidence,
    ),
    Rule(
        "stale-generation",
        "rerun the tests in this checkout's current generation, on the commit judged (check it "
        "out first when it is not the one checked out)",
        _stale_generation,
    ),
    Rule(
        "tree-mismatch",
        "rerun the tests on exactly the tree you are judging (commit, then test) where "
        "genstamp is installed: a pytest without its plugin writes no evidence, and this "
        "refusal stays",
        _tree_mismatch,
    ),
    Rule(
        "tree-moved",
        "keep the tree still while tests run: a file the tests or a plugin write there "
        "(coverage's .coverage, a report) belongs in .gitignore, a tracked one they rewrite "
        "in a commit; then rerun",
        _tree_moved,
    ),
    Rule(
        "loaded-not-tested",
        "the tests ran code the tested tree does not hold (a file changed or was added during "
        "the run? a test's exec(compile(text, path)) of changed text: compile it under a name "
        "that is no file, such as '<path>'; a template engine's code from a template named "
        "*.py: give the template another suffix, such as model.py.j2; an edit git does not "
        "see, its size and mtime kept under core.checkStat=minimal or core.trustctime=false: "
        "touch the file; a filter driver whose clean side changes code, which a clone checks "
        "out as stored: commit the code itself; a package folder left holding only bytecode "
        "by a git command that runs no hook, `git reset --hard`: `genstamp stamp` removes "
        "it): keep the tree still, then rerun",
        _loaded_not_tested,
    ),
    Rule(
        "ignored-code",
        "stop ignoring the file and commit it, or declare it in [tool.genstamp] generated "
        "when the build makes it, or a tool the tests run writes it (a parser's tables, a "
        "template engine's module cache in the tree), then rerun",
        _ignored_code,
    ),
    Rule(
        "dirty-submodule",
        "commit inside the submodule and `git add` it here (or stash its changes), then rerun",
        _dirty_submodule,
    ),
    Rule(
        "hidden-change",
        "lift the flag (`git update-index --no-skip-worktree PATH`, or `--no-assume-unchanged`,"
        " one at a time: given both, git lifts --assume-unchanged alone), commit or revert the"
        " change (one written through another link: break the link, `cp f f.new && mv f.new"
        " f`), then rerun",
        _hidden_change,
    ),
    Rule(
        "empty-folder",
        "remove a folder left behind (`rm -r`: it holds no file), commit a file in one the "
        "project needs (a .gitkeep), or have the tests make it (os.makedirs(path, "
        "exist_ok=True)); then rerun",
        _empty_folder,
    ),
    Rule(
        "unregistered-submodule",
        "register it with its URL (`git submodule add URL PATH`, or an entry in .gitmodules; "
        "no update = none there) or commit its files in this repository, then rerun",
        _unregistered_submodule,
    ),
    Rule(
        "stale-bytecode",
        "run `genstamp stamp` to scrub bytecode (and clear a cache of code a loader keeps itself), "
        "then rerun the tests",
        _stale_bytecode,
    ),
    Rule(
        "stale-extension",
        "rebuild (or delete) what each line names, as it says, then rerun the tests",
        _stale_extension,
    ),
    Rule(
        "foreign-origin",
        "install this checkout in the environment the tests ran in (pip install -e ., uv "
        "sync; a tox or nox env: let it install the package again, no --skip-pkg-install, "
        "and recreate it, tox -r, where its deps name a folder of the checkout; a module the "
        "tree dropped that setuptools' build/ folder still holds goes into every wheel built "
        "here: remove build/) or fix sys.path (and keep pytest's configuration and "
        "conftest.py files in the work tree), then rerun",
        _foreign_origin,
    ),
    Rule("tests-failed", "fix the failing tests, then rerun", _tests_failed),
    Rule("no-tests", "run the suite so that tests execute", _no_tests),
    Rule(
        "partial-run",
        "run what was left out (each run is a part; parts of one generation and tree merge), "
        "or set allow-partial in [tool.genstamp]",
        _partial_run,
    ),
    Rule(
        "parts-disagree",
        "a flaky test? make it pass every time (test files that one run cannot import "
        "together: make their module names differ), then `genstamp stamp` and run the suite "
        "again (a part is replaced only by a run of the same selection)",
        _parts_disagree,
    ),
    Rule(
        "clean-room-diverged",
        "the warm checkout ran something a clean one does not (stale bytecode, an editable "
        "install of another checkout, an uncommitted or ignored file?), or the clean one lacks "
        "a test dependency (its log names it: add it to `clean-install`), or the warm one does "
        "(a test skipped warm that ran clean: `pytest.importorskip`; install it where the "
        "tests run): fix it, then "
        "`genstamp stamp`, rerun the tests and `genstamp clean-run`",
        _clean_room_diverged,
    ),
    Rule(
        "no-clean-room",
        "run `genstamp clean-run` (or `genstamp clean-run --rev REV`) on the tree judged, "
        "and make it pass",
        _no_clean_room,
    ),
)
RULES = tuple(rule.name for rule in TABLE)
REMEDY = {rule.name: rule.remedy for rule in TABLE}


def failure(rule: str, found: str | Listed) -> Failure:
    """A check's finding as a failure of ``rule``, printable on one line."""
    if isinstance(found, str):
        return Failure(rule, printable(found))
    return Failure(rule, printable(found.message), tuple(map(printable, found.items)))


# What evidence recorded in another checkout is judged by: itself. The rules that compare the
# run with this checkout (its tree then and now, its report's path there, its suite) would say
# what is not so of a run that was never this checkout's (a report restored from a CI cache).
_OF_THE_EVIDENCE = frozenset(
    {"no-stamp", "no-evidence", "unbound-evidence", "stale-generation", "tests-failed", "no-tests"}
)


def decide(facts: Facts, settings: Config) -> Verdict:
    """The verdict on ``facts``: every rule's failures, in the order of ``RULES``."""
    failures = tuple(
        failure(rule.name, found) for rule in TABLE for found in rule.check(facts, settings)
    )
    bound = _bound(facts)
    if bound is not None and not _same_checkout(facts, bound.props):
        if bound.props.get(binding.P_CHECKOUT) != facts.gitdir:  # (not this folder, anew)
            kept = tuple(f for f in failures if f.rule in _OF_THE_EVIDENCE)
            failures = kept if any(f.rule == "stale-generation" for f in kept) else failures
    report = facts.report
    merge = merged(facts) if facts.primary else None
    counts = report.counts if report is not None else None
    if merge is not None and len(merge.parts) > 1:
        counts = merged_counts(merge)
    partial = tuple(left_out(facts)) if settings.allow_partial else ()
    return Verdict(
        failures,
        facts.evidence,
        facts.generation.id if facts.generation else None,
        bound.tested if bound is not None else None,
        facts.targets,
        counts,
        merge,
        partial,
        bound.props.get(binding.P_SELECTION_REASONS, "") if bound is not None else "",
    )


def merged_counts(merge: coverage.Merge) -> Counts:
    """The counts of the parts together, each test once (as ``Counts`` counts a JUnit file:
    xfailed and xpassed are also skipped)."""
    c = merge.counts()
    skipped = c["skipped"] + c["xfailed"] + c["xpassed"]
    total = sum(c.values())
    return Counts(total, c["passed"], c["failed"], c["error"], skipped, c["xfailed"], c["xpassed"])


def limit(items: Sequence[str], most: int) -> str:
    shown = ", ".join(items[:most])
    more = len(items) - most
    return f"{shown} and {more} more" if more > 0 else shown


# -- attestations: evidence that travels (gathered by genstamp.attest) --------------------------


class Attested(NamedTuple):
    """One attestation (a DSSE envelope holding a genstamp statement), as the gate sees it."""

    label: str  # the file, or the note and line it came from
    problem: str = ""  # why it cannot be read ("" when read)
    tampered: str = ""  # where its fields contradict each other or its evidence digest
    tree: str = ""  # its gitTree subject
    commit: str = ""
    result: str = ""  # PASSED, WARNED or FAILED
    failed: tuple[str, ...] = ()
    coverage: coverage.Coverage | None = None
    part: tuple[int, int] | None = None  # (index, count) when it attests one part of a split
    generation: str = ""
    digest: str = ""  # its evidence digest (the sha256 subject)
    signed: bool = False  # it carries at least one signature
    signer: str = ""  # the allowed signer whose signature verified ("" when none did)
    bad_signature: str = ""  # why a signature was refused ("" when none was)
    # what the clean-room run of its tree said when it was attested: "passed", "failed",
    # "incomplete" ("" when it carries none)
    clean_room: str = ""


class AttestationFacts(NamedTuple):
    targets: tuple[Target, ...]  # the commits judged, each with its tree
    attested: tuple[Attested, ...]
    # The suites of each target tree (None: not listed, the tree is not in the object store).
    suites: Mapping[str, tuple[suite.Suite, ...] | None]
    source: str  # where the attestations were read: files, or the notes of a commit
    signers: str = ""  # the allowed signers file the signatures were checked against
    summary: str | None = None  # a summary to check against what the attestations say
    # read from git notes, which only grow (``settled``): a line that cannot be trusted, or a
    # split that a later complete one replaced, cannot be taken out of them
    grown: bool = False


AttestationCheck = Callable[[AttestationFacts, "Config"], Iterator["str | Listed"]]


def _readable(facts: AttestationFacts) -> list[Attested]:
    return [a for a in facts.attested if not a.problem]


def _for_tree(facts: AttestationFacts, tree: str) -> list[Attested]:
    return [a for a in _readable(facts) if a.tree == tree]


def attestation_merge(facts: AttestationFacts, tree: str) -> coverage.Merge | None:
    """The parts attested for ``tree`` merged as local parts merge (``coverage.merge``)."""
    # one attestation given twice (the same file named twice) is one part
    unique = {
        (a.digest, a.part, a.label) if a.digest else id(a): a
        for a in _for_tree(facts, tree)
        if a.coverage is not None
    }
    parts = [coverage.Part(_part_label(a), a.coverage) for a in unique.values() if a.coverage]
    listed_suites = facts.suites.get(tree)
    if not parts or listed_suites is None:
        return None
    return coverage.merge(parts, listed_suites)


def _part_label(a: Attested) -> str:
    return f"{a.label} (part {a.part[0]}/{a.part[1]})" if a.part else a.label


def _trees(facts: AttestationFacts) -> list[str]:
    return list(dict.fromkeys(t.tree for t in facts.targets))


def _no_attestation(facts: AttestationFacts, settings: Config) -> Iterator[str]:
    if not facts.attested:
        labels = [t.label for t in facts.targets]
        yield f"no attestation of {limit(labels, LABEL_LIMIT)} in {facts.source}"


def _at_most(lines: Iterable[str], what: str) -> Iterator[str]:
    """The first ``FLAG_LIMIT`` of ``lines``, then one line for the rest: notes only grow, and
    a pusher can fill one with thousands of lines (V24 04: 200,000 refusal lines)."""
    more = 0
    for n, line in enumerate(lines):
        if n < FLAG_LIMIT:
            yield line
        else:
            more += 1
    if more:
        yield f"and {more} more {what}"


def _attestation_unreadable(facts: AttestationFacts, settings: Config) -> Iterator[str]:
    found = (f"{a.label}: {a.problem}" for a in facts.attested if a.problem)
    yield from _at_most(found, "lines that are no attestation")


def _attestation_unsigned(facts: AttestationFacts, settings: Config) -> Iterator[str]:
    signers = settings.attestation_signers
    if signers is None:
        return
    unsigned = [a.label for a in _readable(facts) if not a.signed]
    if unsigned:
        yield (
            f"the project requires signed attestations (attestation-signers = {signers}); "
            f"unsigned: {limit(unsigned, LABEL_LIMIT)}"
        )


def _attestation_signature(facts: AttestationFacts, settings: Config) -> Iterator[str]:
    found = (f"{a.label}: {a.bad_signature}" for a in _readable(facts) if a.bad_signature)
    yield from _at_most(found, "attestations with such a signature")


def _attestation_tampered(facts: AttestationFacts, settings: Config) -> Iterator[str]:
    found = (f"{a.label}: {a.tampered}" for a in _readable(facts) if a.tampered)
    yield from _at_most(found, "attestations so altered")


def _attestation_other_tree(facts: AttestationFacts, settings: Config) -> Iterator[str]:
    trees = _trees(facts)
    readable = _readable(facts)
    judged = ", ".join(f"{t.label} is tree {t.tree[:12]}" for t in facts.targets[:3])
    others = (
        f"{a.label} attests tree {a.tree[:12]} (commit {a.commit[:12]}); {judged}"
        for a in readable
        if a.tree not in trees
    )
    yield from _at_most(others, "attestations of other trees")
    if not readable:
        return
    for target in facts.targets:
        if not _for_tree(facts, target.tree) and all(a.tree in trees for a in readable):
            yield f"no attestation is of {target.label} (tree {target.tree[:12]})"


def _attestation_failed(facts: AttestationFacts, settings: Config) -> Iterator[str]:
    for tree in _trees(facts):
        for a in _for_tree(facts, tree):
            if a.result == "FAILED" or a.failed:
                yield (
                    f"{a.label}: result {a.result}, {len(a.failed)} failed: "
                    f"{limit(list(a.failed), PATH_LIMIT)}"
                )


def _attestation_partial(facts: AttestationFacts, settings: Config) -> Iterator[str]:
    if settings.allow_partial:
        return
    for tree in _trees(facts):
        attested = [a for a in _for_tree(facts, tree) if a.coverage is not None]
        if not attested:
            continue
        merge = attestation_merge(facts, tree)
        if merge is None:
            yield f"the suite of tree {tree[:12]} cannot be listed: it is not in the object store"
            continue
        missing = missing_parts(attested)
        if merge.complete and not missing:
            continue
        named = f"; missing {', '.join(missing)}" if missing else ""
        left = "; ".join(merge.left_out()) or "every test of the suite ran"
        yield (
            f"the attestations of tree {tree[:12]} cover part of the suite "
            f"({len(merge.parts)} merged{named}): {left}"
        )


def missing_parts(attested: Sequence[Attested]) -> list[str]:
    """The parts of a declared split (``--part I/N``) that no attestation is of."""
    counts = {a.part[1] for a in attested if a.part}
    have = {a.part for a in attested if a.part}
    return [f"part {i}/{n}" for n in sorted(counts) for i in range(1, n + 1) if (i, n) not in have]


def _attestation_parts_disagree(facts: AttestationFacts, settings: Config) -> Iterator[str]:
    for tree in _trees(facts):
        yield from _disagreeing(attestation_merge(facts, tree), "attested parts")


# A count as people write it: a number and the word it counts, either way round, with
# punctuation or markup between (`12 passed`, `Passed: 12`, `**12** tests`, `0 failures`); a
# number with a word after it is that word's (`12 tests: 12 passed, 0 failed`)
_WORDS = (
    r"(?:pass(?:ed|es|ing)?|fail(?:ed|s|ures?|ing)?|errors?|skipped|skips?|xfailed|xpassed"
    r"|tests?|parts?)"
)
# a number standing as one (not a part of a word: `sha256`, `py311`)
_NUMBER = re.compile(r"(?<![^\W_])\d+(?![^\W_])")
# a number written in groups of three digits (`1,002`, `1 002`, `1\u202f002`): one number, not
# two (`1` and `002`, the second read as the count)
_GROUPED = re.compile(r"(?<![^\W_])\d{1,3}(?:[,\u00a0\u2009\u202f ]\d{3})+(?![^\W_]|[.,]\d)")
# a count with a magnitude suffix (`3k tests`, `2K+ passed`, `1.5M`): never one of the gate's
# exact figures, where a number inside a word (`sha256`) is the word's (V24 01)
_SCALED = re.compile(
    r"(?<![^\W_])\d+(?:[.,]\d+)?(?: ?[kKmMbB]\+?|[\u00b2\u00b3\u00b9\u2070-\u2079]+)(?![^\W_])"
)
# a claim that the whole suite ran, in the words a summary would use (Y24 06)
_WHOLE = re.compile(
    r"\b(?:whole|full|entire|complete)\s+(?:test\s+)?suite\b|\b(?:all|every)\s+(?:the\s+)?"
    r"tests?\s+ran\b",
    re.I,
)
# a count spelled out (`Three tests passed`, `Failures: none`, `twenty-one passed`): read
# only beside its word, where it counts (a stray `one` in prose is no figure)
_UNITS = {
    **{
        word: n
        for n, word in enumerate(
            [
                *("zero", "one", "two", "three", "four", "five", "six", "seven", "eight"),
                *("nine", "ten", "eleven", "twelve", "thirteen", "fourteen", "fifteen"),
                *("sixteen", "seventeen", "eighteen", "nineteen"),
            ]
        )
    },
    "none": 0,
}
_TENS = {
    word: 20 + 10 * n
    for n, word in enumerate(
        ["twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety"]
    )
}
_SCALES = {"hundred": 100, "thousand": 1000, "million": 1000000}
_SPELLED_WORD = "|".join([*_UNITS, *_TENS, *_SCALES])
_SPELLED = rf"\b(?:{_SPELLED_WORD})(?:[\s-]+(?:and[\s-]+)?(?:{_SPELLED_WORD}))*\b"
# what tests did, after the count of them (`3 tests passed`, `5 tests, all passed`: a count of
# passes) or before it (`Passed 3 tests`, `passing 5 tests`)
_OUTCOME = r"(?:pass(?:ed|es|ing)?|fail(?:ed|s|ing)?|errored|skipped|xfailed|xpassed)"
_FIGURE = re.compile(
    rf"(?:\b({_OUTCOME})[^\S\n]*:?[^\S\n]*)?(\d+|{_SPELLED})[^\w\n]*({_WORDS})\b"
    rf"(?:[^\w\n]*(?:(?:all|each|every)\b[^\w\n]*)?({_OUTCOME})\b)?",
    re.I,
)
_FIGURE_AFTER = re.compile(rf"\b({_WORDS})[^\w\n]*(\d+|{_SPELLED})\b(?![^\w\n]*{_WORDS}\b)", re.I)
_KEYS = {"pass": "passed", "fail": "failed", "erro": "error", "skip": "skipped", "test": "test"}
# An object id as people quote it: 7 to 64 hex digits, at least one a digit (not a word), in
# either case, with no letter or digit either side (markdown's `_id_` is an id)
_HEXES = re.compile(r"(?<![0-9a-z])(?=[0-9a-f]*[0-9])[0-9a-f]{7,64}(?![0-9a-z])", re.I)
# markup that may stand between a count and its word: markdown's emphasis and code marks,
# HTML tags (`<b>12</b> passed`)
_MARKUP = re.compile(r"<[^<>\n]*>|[*_`~]")
# what genstamp's own summary says of its format (not a figure)
_VERSION_MARK = re.compile(r"<!-- genstamp-summary version \d+ -->")


def _as_seen(text: str) -> str:
    """``text`` as a reader sees it: the characters that show nothing (a zero-width space, a
    word joiner, a soft hyphen: Unicode's format characters) left out, so 1, U+200B, 0 is the
    10 it shows. (Other digits than ASCII's, fullwidth ones, are digits to the checks as they
    are; a superscript stays one, an exponent the checks name as it is written.)"""
    import html
    import unicodedata  # only for a summary judged

    # a character reference shows as its character (`&#x31;&#x30;` is 10, `&nbsp;` a space);
    # one of `<` or `>` (`&lt;`, `&#60;`) shows as that, never as part of a tag
    shown = _REFERENCE.sub(
        lambda m: m.group() if html.unescape(m.group()) in "<>" else html.unescape(m.group()),
        text,
    )
    return "".join(c for c in shown if unicodedata.category(c) != "Cf")


_REFERENCE = re.compile(r"&(#[0-9]+|#[xX][0-9a-fA-F]+|[A-Za-z][A-Za-z0-9]*);")


def _numerals(text: str) -> list[str]:
    """The numbers ``text`` writes in numerals other than digits (circled ⑤, superscript ⁵,
    Roman numeral five U+2164, fractions: Unicode's letter-like and other numbers), each run
    once: a reader sees a count the checks of digits do not read, so none may stand in a
    summary. (An ideograph that is also a numeral, 五, is a word of its script.)"""
    import unicodedata

    found: dict[str, None] = {}
    run = ""
    for c in f"{text} ":
        if unicodedata.category(c) in ("Nl", "No"):
            run += c
        elif run:
            found[run], run = None, ""
    return list(found)


def spelled_number(text: str) -> int:
    """The value of a count in digits or spelled out in English words (``twenty-one``, ``one
    hundred and five``, ``none``)."""
    if text.isdigit():
        return int(text)
    total = current = 0
    for word in re.split(r"[\s-]+", text.lower()):
        if word in _SCALES:
            current = max(current, 1) * _SCALES[word]
            if _SCALES[word] >= 1000:
                total, current = total + current, 0
        elif word in _TENS:
            current += _TENS[word]
        elif word in _UNITS:
            current += _UNITS[word]
    return total + current


def summary_figures(merge: coverage.Merge) -> dict[str, int]:
    """The figures a summary may quote, as the attestations say them."""
    c = merged_counts(merge)
    return {
        "passed": c.passed,
        "failed": c.failed,
        "error": c.errors,
        "skipped": c.skipped - c.xfailed - c.xpassed,
        "xfailed": c.xfailed,
        "xpassed": c.xpassed,
        "test": c.tests,
        "part": len(merge.parts),
    }


def _figure_key(word: str) -> str:
    w = word.lower()
    return w if w in ("xfailed", "xpassed") else _KEYS.get(w[:4], "part")


def _table_counts(text: str) -> list[tuple[str, str]]:
    """(number, word) of markdown tables: a row's numbers under its header's words."""
    out: list[tuple[str, str]] = []
    header: list[str] = []
    for line in text.splitlines():
        if not line.lstrip().startswith("|"):
            header = []
            continue
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if all(re.fullmatch(r":?-+:?", c) for c in cells if c):
            continue  # the separator row
        if not any(re.search(r"\d", c) for c in cells):
            header = cells
            continue
        for word, cell in zip(header, cells, strict=False):
            number = re.fullmatch(r"\D*?(\d+)\D*", cell)
            named = re.search(rf"\b{_WORDS}\b", word, re.I)
            if number and named:
                out.append((number.group(1), named.group(0)))
    return out


def _summary_unverified(facts: AttestationFacts, settings: Config) -> Iterator[str]:
    """A summary must quote a verified attestation of the commit (its digest) and nothing it
    does not say: every object id it names is checked, every count (a number and the word it
    counts, either way round, or under its word in a table) must be the attestations', and no
    other number may stand in it but one of their figures."""
    if facts.summary is None:
        return
    trees = _trees(facts)
    attested = [a for t in trees for a in _for_tree(facts, t)]
    text = _as_seen(facts.summary)
    # each tree judged must be quoted: one quoted does not vouch for another (V24 15)
    unquoted = [
        t for t in trees if not any(a.digest in text for a in _for_tree(facts, t) if a.digest)
    ]
    if len(unquoted) == len(trees) == 1:
        yield "the summary quotes no attestation of the commit judged (no evidence digest of it)"
    elif unquoted:
        names = ", ".join(dict.fromkeys(t.label for t in facts.targets if t.tree in unquoted))
        yield f"the summary quotes no attestation of {names} (no evidence digest of it)"
    known = [t.tree for t in facts.targets] + [x for a in attested for x in (a.commit, a.digest)]
    # what the gate judged, as it was named (a commit of the attested tree, a rev's name that
    # holds digits: `release-20240115`)
    known += [h.lower() for t in facts.targets for h in _HEXES.findall(t.label)]
    for hexes in _HEXES.findall(text):
        if not any(k.startswith(hexes.lower()) for k in known if k):
            yield f"the summary names {hexes}, which is no commit, tree or digest attested"
    # each tree judged has its own figures: a count must be one of them
    merges = [attestation_merge(facts, t) for t in trees]
    # "the whole suite" is the gate's word on a complete merge (``genstamp summary``), never
    # of a part accepted under allow-partial (V24 21)
    if _WHOLE.search(_MARKUP.sub("", text)) and any(
        m is not None and not m.complete for m in merges
    ):
        yield "the summary says the whole suite ran; the attestations cover part of it"
    said = [summary_figures(m) for m in merges if m is not None]
    if not said:
        return
    rest = _VERSION_MARK.sub("", _HEXES.sub("", text))
    for label in sorted({t.label for t in facts.targets}, key=len, reverse=True):
        rest = rest.replace(label, "")
    plain = _GROUPED.sub(lambda m: re.sub(r"\D", "", m.group()), _MARKUP.sub("", rest))
    counts = [
        (str(spelled_number(n)), (after or before or w) if _figure_key(w) == "test" else w)
        for before, n, w, after in _FIGURE.findall(plain)
    ]
    counts += [(str(spelled_number(n)), w) for w, n in _FIGURE_AFTER.findall(plain)]
    seen: set[tuple[str, str]] = set()
    for number, word in counts + _table_counts(rest):
        key = _figure_key(word)
        if (number, key) in seen:
            continue
        seen.add((number, key))
        if not any(figures.get(key) == int(number) for figures in said):
            found = " or ".join(str(figures.get(key)) for figures in said)
            yield f"the summary says {number} {word}; the attestations say {found}"
    values = {v for figures in said for v in figures.values()} | {int(n) for n, _ in seen}
    stray = sorted({n for n in _NUMBER.findall(plain) if int(n) not in values}, key=int)
    stray += list(dict.fromkeys(_SCALED.findall(plain)))
    stray += _numerals(_SCALED.sub("", plain))
    if stray:
        figures = ", ".join(f"{v} {k}" for k, v in said[0].items())
        yield (
            f"the summary says {', '.join(stray)}, which no attestation says "
            f"(a summary states only the gate's figures: {figures})"
        )


def _attested_without_clean_room(facts: AttestationFacts, settings: Config) -> Iterator[str]:
    """With a clean room required (``--clean-room``, ``require-clean-room``): an attestation
    of each tree judged must carry its passing, complete clean-room run."""
    if not settings.require_clean_room:
        return
    for tree in _trees(facts):
        said = [a.clean_room for a in _for_tree(facts, tree)]
        if said and "passed" not in said:
            what = ", ".join(sorted({s or "none" for s in said}))
            yield f"no attestation of {tree[:12]} carries a passing clean-room run (theirs: {what})"


class AttestationRule(NamedTuple):
    name: str
    remedy: str
    check: AttestationCheck


ATTESTATION_TABLE = (
    AttestationRule(
        "no-attestation",
        "attest the verified commit (`genstamp attest`), publish it (`genstamp publish`) and "
        "fetch refs/notes/genstamp, or pass the files with --attestation",
        _no_attestation,
    ),
    AttestationRule(
        "attestation-unreadable",
        "attest again with this genstamp (`genstamp attest`), or judge with the version that "
        "wrote it",
        _attestation_unreadable,
    ),
    AttestationRule(
        "attestation-unsigned",
        "sign it: `genstamp attest --sign` with git's SSH signing key (gpg.format=ssh, "
        "user.signingkey)",
        _attestation_unsigned,
    ),
    AttestationRule(
        "attestation-signature",
        "sign with a key listed in the allowed signers file (namespace genstamp) that no "
        "revocation file revokes, or add the signer's key there",
        _attestation_signature,
    ),
    AttestationRule(
        "attestation-tampered",
        "never edit an attestation: attest again from a verified run",
        _attestation_tampered,
    ),
    AttestationRule(
        "attestation-other-tree",
        "attest the commit being judged: test, verify and attest exactly its tree",
        _attestation_other_tree,
    ),
    AttestationRule(
        "attestation-failed",
        "fix the failing tests, rerun, verify and attest again",
        _attestation_failed,
    ),
    AttestationRule(
        "attestation-partial",
        "attest the missing parts (each part's job runs `genstamp attest --part I/N`) and pass "
        "every part, or set allow-partial in [tool.genstamp]",
        _attestation_partial,
    ),
    AttestationRule(
        "attestation-parts-disagree",
        "rerun those tests (a flaky test?) and attest again, so that one outcome stands",
        _attestation_parts_disagree,
    ),
    AttestationRule(
        "attestation-no-clean-room",
        "run `genstamp clean-run` for the commit before `genstamp attest`, then attest and "
        "publish again",
        _attested_without_clean_room,
    ),
    AttestationRule(
        "summary-unverified",
        "write the summary with `genstamp summary` from the verified attestations, and quote "
        "nothing else as a figure",
        _summary_unverified,
    ),
)
ATTESTATION_RULES = tuple(rule.name for rule in ATTESTATION_TABLE)
REMEDY.update({rule.name: rule.remedy for rule in ATTESTATION_TABLE})


def _trusted(a: Attested, settings: Config) -> bool:
    """Whether ``a`` can speak for its tree: readable, whole, and signed by an allowed signer
    where the project requires signatures."""
    if a.problem or a.tampered or a.bad_signature:
        return False
    return settings.attestation_signers is None or bool(a.signer)


def settled(facts: AttestationFacts, settings: Config) -> AttestationFacts:
    """What notes say of each tree once what cannot speak for it is set aside: notes only
    grow, so an untrusted line (unsigned, tampered, unreadable), a line of another tree (a note
    git copied on amend or rebase, ``notes.rewriteRef``), the parts of a split that never
    finished, or a second whole run of the same tree would otherwise refuse the commit for
    good. Of a tree that has a trusted attestation, only trusted ones count; where trusted
    runs of it are complete (an unsplit one whose coverage is the whole suite, or a split
    count N with all its parts), one complete run stands for the tree, unless one's parts
    disagree: then all the complete runs are judged together. A trusted attestation that a
    test failed is never set aside. A tree with none trusted keeps them all: the rules then
    say why each cannot speak."""
    if not facts.grown:
        return facts
    kept: list[Attested] = []
    spoken = True  # every tree judged has a trusted attestation
    for tree in dict.fromkeys(t.tree for t in facts.targets):
        mine = [a for a in facts.attested if a.tree == tree]
        trusted = [a for a in mine if _trusted(a, settings)]
        if not trusted:
            kept += mine
            spoken = False
            continue
        kept += _standing(trusted, facts.suites.get(tree))
    if not spoken:  # lines of no tree judged (another commit's, or unreadable) say why
        judged = {t.tree for t in facts.targets}
        kept += [a for a in facts.attested if a.tree not in judged]
    return facts._replace(attested=tuple(kept))


def _standing(trusted: list[Attested], suites: Sequence[suite.Suite] | None) -> list[Attested]:
    """The trusted attestations of one tree that stand for it (``settled``)."""
    if any(a.result == "FAILED" or a.failed for a in trusted):
        return trusted  # a trusted word that a test of the tree failed is never set aside
    runs = [[a] for a in trusted if a.part is None]
    runs += [[a for a in trusted if a.part and a.part[1] == n] for n in _counts(trusted)]
    complete = [run for run in runs if _complete(run, suites)]
    if not complete:
        return trusted
    if len(complete) > 1 and any(_disagrees(run, suites) for run in complete):
        return [a for run in complete for a in run]
    # one of several complete passing runs: one that its clean room passed, then the most parts
    return max(
        complete,
        key=lambda run: (
            any(a.clean_room == "passed" for a in run),
            len(run),
            sorted((a.digest, a.label) for a in run),
        ),
    )


def _counts(attested: Sequence[Attested]) -> list[int]:
    return sorted({a.part[1] for a in attested if a.part})


def _run_merge(run: Sequence[Attested], suites: Sequence[suite.Suite]) -> coverage.Merge:
    return coverage.merge(
        [coverage.Part(_part_label(a), a.coverage) for a in run if a.coverage], suites
    )


def _complete(run: Sequence[Attested], suites: Sequence[suite.Suite] | None) -> bool:
    """Whether ``run`` covers the whole suite: every part of its split, and every test file
    and test (an attestation that records no coverage cannot say otherwise)."""
    if missing_parts(run) or suites is None:
        return False
    return not any(a.coverage for a in run) or _run_merge(run, suites).complete


def _disagrees(run: Sequence[Attested], suites: Sequence[suite.Suite] | None) -> bool:
    """Whether the parts of ``run`` disagree on a test's outcome (a flaky test)."""
    return suites is not None and bool(_run_merge(run, suites).conflicts)


def decide_attestations(facts: AttestationFacts, settings: Config) -> Verdict:
    """The verdict on a commit from attestations alone, without a local run."""
    facts = settled(facts, settings)
    failures = tuple(
        failure(rule.name, found)
        for rule in ATTESTATION_TABLE
        for found in rule.check(facts, settings)
    )
    trees = _trees(facts)
    merge = attestation_merge(facts, trees[0]) if len(trees) == 1 else None
    attested = _for_tree(facts, trees[0]) if len(trees) == 1 else []
    generations = sorted({a.generation for a in attested if a.generation})
    return Verdict(
        failures,
        ", ".join(a.label for a in facts.attested) or facts.source,
        ", ".join(generations) or None,
        trees[0] if len(trees) == 1 and attested else None,
        facts.targets,
        merged_counts(merge) if merge is not None else None,
        merge,
        tuple(merge.left_out()) if settings.allow_partial and merge is not None else (),
    )
