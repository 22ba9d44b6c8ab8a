"""The gate's rules as table tests over facts: no repository, no pytest run, no file.

Every rule has rows that fire it and control rows, one change away, that do not; each row names
the verdict's rules exactly, and a fragment the first failure's message must (and one it must
not) carry. test_facts.py proves the gathering of these facts, test_verify_e2e.py the whole path.
"""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any, NamedTuple

import pytest

from genstamp import __version__ as genstamp_version
from genstamp import audit, binding, coverage, suite
from genstamp.binding import Counts, Report
from genstamp.config import Config
from genstamp.generation import Generation
from genstamp.placed import IGNORED, INSTALLED, UNTRACKED
from genstamp.rules import (
    FLAG_LIMIT,
    LABEL_LIMIT,
    PATH_LIMIT,
    REMEDY,
    RULES,
    TABLE,
    TREE_LIMIT,
    WORK_TREE,
    Bytecode,
    Facts,
    Failure,
    Submodule,
    Target,
    Verdict,
    decide,
    printable,
)

KEY = "5e" * 32
NS = 1_700_000_000 * 10**9  # when the generation began
TESTED = "7e57ed" + "0" * 34  # the tree the tests ran on
OTHER = "0743e2" + "0" * 34  # another tree
GITDIR = "/work/repo/.git"
EVIDENCE = "/work/repo/.git/genstamp/evidence.xml"
STAMP = "/work/repo/.git/genstamp/generation.json"
CALC = "src/calc/__init__.py"
CHECKOUT_ID = "0123456789abcdef0123456789abcdef@64769:42"
BLOB = "b10b" + "0" * 36
GEN = Generation(
    id="9e4" + "0" * 29,
    tree=TESTED,
    head=None,
    created="2023-11-14T22:13:20+00:00",
    created_ns=NS,
    trigger="manual",
    scrub=None,
    key=KEY,
    writer="0",
)
GREEN = Counts(tests=2, passed=2)
AUDIT = audit.Audit(("calc",), {CALC: (BLOB,)}, ())
SUITE_AB = (suite.Suite("", suite.PytestConfig(""), ("tests/test_a.py", "tests/test_b.py"), ()),)
A1, B1, B2 = "tests/test_a.py::test_1", "tests/test_b.py::test_1", "tests/test_b.py::test_2"
COV_AB = coverage.new(
    ["tests/test_a.py", "tests/test_b.py"],
    [A1, B1, B2],
    {A1: "passed", B1: "passed", B2: "passed"},
    [],
).to_json()
COV_AB_LEFT = coverage.new(
    ["tests/test_a.py", "tests/test_b.py"], [A1, B1], {A1: "passed", B1: "passed"}, [B2]
).to_json()
COV_A = coverage.new(["tests/test_a.py"], [A1], {A1: "passed"}, []).to_json()
COV_B = coverage.new(["tests/test_b.py"], [B1, B2], {B1: "passed", B2: "passed"}, []).to_json()
COV_B_RED = coverage.new(["tests/test_b.py"], [B1, B2], {B1: "failed", B2: "passed"}, []).to_json()


def flag(kind: str, module: str = "calc") -> audit.Flag:
    return audit.Flag(kind, module, f"/elsewhere/{module}.py", "why")


def report(
    counts: Counts = GREEN, *, key: str = KEY, seal: str | None = None, **props: str | None
) -> Report:
    """A report as a run in GEN on TESTED writes it, sealed with ``key``; ``props`` replace
    properties by their name after ``genstamp.`` (dots as underscores; None removes one)."""
    properties = {
        binding.P_FORMAT: binding.FORMAT,
        binding.P_VERSION: "0",
        binding.P_OBSERVES: str(binding.OBSERVES),
        **binding.Binding(
            runner="pytest",
            checkout=GITDIR,
            generation=GEN.id,
            tree_start=TESTED,
            tree_end=TESTED,
            head=binding.NONE,
            selection="full",
            selection_reasons="",
            audit=AUDIT.to_json(),
            created=GEN.created,
        ).properties(),
    }
    for name, value in props.items():
        prop = binding.PREFIX + name.replace("_", ".")
        if value is None:
            properties.pop(prop, None)
        else:
            properties[prop] = value
    declared = Counts(counts.tests, 0, counts.failed, counts.errors, counts.skipped)
    result = Report(properties, counts, declared, "ca5e" * 16)
    properties[binding.P_SEAL] = binding.seal(key, properties, result) if seal is None else seal
    return result


def audited(*flags: audit.Flag) -> Report:
    """A report whose audit raised ``flags``."""
    return report(audit=audit.Audit(("calc",), {CALC: (BLOB,)}, flags).to_json())


def facts(**changes: Any) -> Facts:
    """Facts every rule accepts: fresh green evidence of the work tree; ``changes`` replace."""
    base = Facts(
        gitdir=GITDIR,
        stamp_path=STAMP,
        generation=GEN,
        stamp_problem="",
        evidence=EVIDENCE,
        report=report(),
        unreadable="",
        report_mtime_ns=NS + 1,
        targets=(Target("work tree", TESTED),),
        diffs={},
        tested_blobs={CALC: BLOB},
        bytecode=(),
    )
    return base._replace(**changes)


def part_b_partial(reasons: str) -> Facts:
    """A run that left tests/test_b.py::test_2 out, and a part that ran test_b.py, partial
    for ``reasons``."""
    part = report(coverage=COV_B, selection="partial", selection_reasons=reasons)
    return facts(report=report(coverage=COV_AB_LEFT), suites=SUITE_AB, others=(("b.xml", part),))


def mismatch(*paths: str, tree: str = OTHER, label: str = "work tree") -> dict[str, Any]:
    return {"targets": (Target(label, tree),), "diffs": {(TESTED, tree): paths}}


def lacking(*paths: str, label: str, **changes: Any) -> Facts:
    """Facts of a tree judged (``label``) that lacks ``paths``, which the tested tree holds."""
    return facts(
        **mismatch(*paths, label=label),
        only_in_first={(TESTED, OTHER): frozenset(paths)},
        **changes,
    )


class Row(NamedTuple):
    facts: Facts
    rules: list[str]  # the verdict's rules, exactly (empty: accepted)
    says: str = ""  # a fragment of the first failure's message
    not_says: str | None = None  # a fragment it must not carry
    settings: Config = Config()


ROWS: dict[str, Row] = {
    "control-fresh": Row(facts(), []),
    # no-stamp
    "no-stamp-absent": Row(facts(generation=None), ["no-stamp"], f"no generation stamp at {STAMP}"),
    "no-stamp-unreadable": Row(
        facts(generation=None, stamp_problem=f"{STAMP} is not a generation stamp"),
        ["no-stamp"],
        "is not a generation stamp",
        "no generation stamp at",
    ),
    # no-evidence
    "no-evidence": Row(facts(report=None), ["no-evidence"], f"no JUnit file at {EVIDENCE}", "\\x"),
    "no-evidence-and-no-stamp": Row(
        facts(report=None, generation=None), ["no-stamp", "no-evidence"], "no generation stamp"
    ),
    # unbound-evidence
    "unbound-unreadable": Row(
        facts(report=None, unreadable=f"{EVIDENCE} is not well-formed XML (x)"),
        ["unbound-evidence"],
        "not well-formed",
    ),
    "unbound-no-binding": Row(
        facts(report=Report({}, GREEN, GREEN, "")),
        ["unbound-evidence"],
        f"{EVIDENCE} carries no genstamp binding (no genstamp.* properties)",
    ),
    "unbound-other-format": Row(
        facts(report=report(format="1", version="9.9")),
        ["unbound-evidence"],
        "is evidence format '1' written by genstamp 9.9; this genstamp",
    ),
    # a recorder that did not look for what this gate judges by recorded it as not found
    "unbound-a-recorder-that-names-no-observation-level": Row(
        facts(report=report(observes=None, version="0.2.0")),
        ["unbound-evidence"],
        "was recorded by genstamp 0.2.0, whose plugin observes less than this genstamp "
        f"{genstamp_version} judges by (observation level '0', this genstamp's {binding.OBSERVES})",
    ),
    "unbound-a-recorder-that-observes-less": Row(
        facts(report=report(observes=str(binding.OBSERVES - 1))),
        ["unbound-evidence"],
        f"(observation level '{binding.OBSERVES - 1}'",
    ),
    "unbound-an-observation-level-that-is-no-number": Row(
        facts(report=report(observes="1.5")), ["unbound-evidence"], "(observation level '1.5'"
    ),
    "unbound-an-observation-level-of-many-digits": Row(
        facts(report=report(observes="9" * 5000)), ["unbound-evidence"], "observes less"
    ),
    "control-a-recorder-that-observes-more": Row(
        facts(report=report(observes=str(binding.OBSERVES + 1))), []
    ),
    # format 3: a session that failed though no test did (a reader of 2 would accept it)
    "tests-failed-the-session-in-format-3": Row(
        facts(report=report(format="3", session_failed="--cov-fail-under")),
        ["tests-failed"],
        "the session failed: --cov-fail-under",
    ),
    "unbound-lacking-properties": Row(
        facts(report=report(tree_end=None, selection="")),
        ["unbound-evidence"],
        "lacks the properties genstamp.tree.end, genstamp.selection",
    ),
    "unbound-and-red-says-only-unbound": Row(
        facts(report=report(Counts(1, 0, 1), tree_end=None)), ["unbound-evidence"], "lacks"
    ),
    "unbound-seal-of-another-key": Row(
        facts(report=report(key="00" * 32)),
        ["unbound-evidence"],
        f"{EVIDENCE} was changed after the run: its seal does not match its contents",
    ),
    "unbound-seal-not-ascii": Row(
        facts(report=report(seal="é" + "0" * 63)), ["unbound-evidence"], "seal does not match"
    ),
    "unbound-seal-not-utf8": Row(
        facts(report=report(seal="\udce9" + "0" * 63)), ["unbound-evidence"], "seal"
    ),
    "control-seal-unchecked-without-a-stamp": Row(
        facts(generation=None, report=report(key="00" * 32)), ["no-stamp"], "no generation"
    ),
    "unbound-audit-of-another-format": Row(
        facts(report=report(audit=AUDIT.to_json().replace('"version":3', '"version":99'))),
        ["unbound-evidence"],
        f"{EVIDENCE}: its genstamp.audit cannot be read (audit format 99); this genstamp",
    ),
    "unbound-audit-not-json": Row(
        facts(report=report(audit="[[[")),
        ["unbound-evidence"],
        f"reads audit format {audit.AUDIT_VERSION}",
    ),
    "control-audit-unavailable": Row(facts(report=report(audit="unavailable")), []),
    # a newer writer's record of what no tree holds is refused, never read as none (B26 04)
    "unbound-unseen-of-another-format": Row(
        facts(report=report(unseen='{"dirty": {}, "hidden": {"a.py": "x"}, "version": 99}')),
        ["unbound-evidence"],
        f"{EVIDENCE}: its genstamp.unseen cannot be read (unseen format 99); this genstamp "
        f"{genstamp_version} reads unseen format {binding.UNSEEN_VERSION}",
    ),
    "unbound-unseen-version-true": Row(
        facts(report=report(unseen='{"dirty": {}, "hidden": {}, "version": true}')),
        ["unbound-evidence"],
        "its genstamp.unseen cannot be read (unseen format True)",
    ),
    "unbound-unseen-damaged": Row(
        facts(report=report(unseen='{"dirty": [], "hidden": {}, "version": 1}')),
        ["unbound-evidence"],
        "its genstamp.unseen cannot be read (its hidden and dirty are not objects)",
    ),
    "control-unseen-readable-and-empty": Row(
        facts(report=report(unseen='{"dirty": {}, "hidden": {}, "version": 1}')), []
    ),
    # stale-generation
    "stale-earlier-generation": Row(
        facts(report=report(generation="e4" * 16)),
        ["stale-generation"],
        f"the evidence is from generation {'e4' * 6}, the current one is {GEN.id[:12]} "
        f"(begun {GEN.created} by manual)",
        "another checkout",
    ),
    "stale-earlier-generation-predating-the-stamp": Row(
        facts(report=report(generation="e4" * 16), report_mtime_ns=NS - 1),
        ["stale-generation"],
        "; the JUnit file was written before the current generation began",
    ),
    "stale-earlier-generation-freshly-touched": Row(
        facts(report=report(generation="e4" * 16), report_mtime_ns=NS + 3600 * 10**9),
        ["stale-generation"],
        "the current one is",
        "predates",  # the binding refused it, not the file's age
    ),
    "stale-earlier-generation-no-mtime": Row(
        facts(report=report(generation="e4" * 16), report_mtime_ns=None),
        ["stale-generation"],
        "the current one is",
        "predates",
    ),
    "stale-no-generation-recorded": Row(
        facts(report=report(generation=binding.NONE)),
        ["stale-generation"],
        "the evidence is from generation none,",
        "the tests ran with genstamp",
    ),
    # the test environment's genstamp read no stamp (one of a later format): rerunning there
    # changes nothing, and the refusal names both versions
    "stale-no-generation-from-another-genstamp": Row(
        facts(report=report(generation=binding.NONE, version="0.0.9")),
        ["stale-generation"],
        "; the tests ran with genstamp 0.0.9, the stamp was written by genstamp 0 (use one",
    ),
    # the same version string, another build of another stamp format (builds between releases
    # share one): the run says why it read no generation, and the refusal shows it
    "stale-no-generation-read-by-another-build": Row(
        facts(
            report=report(
                generation=binding.NONE,
                generation_unread=(
                    "the generation stamp /g is format version 9, written by genstamp 0; "
                    "this genstamp 0 reads version 4"
                ),
            )
        ),
        ["stale-generation"],
        "; the tests' genstamp read no generation: the generation stamp /g is format version 9, "
        "written by genstamp 0; this genstamp 0 reads version 4 (rerunning them with it changes "
        "nothing",
        "the tests ran with genstamp",
    ),
    "stale-from-another-checkout": Row(
        facts(report=report(generation="e4" * 16, checkout="/other/.git")),
        ["stale-generation"],
        ", in another checkout (/other/.git), the current one is",
    ),
    # a report restored from another checkout (a CI cache): judged by itself alone, not by
    # this checkout's tree, which its run never took
    "stale-from-another-checkout-no-tree-compared": Row(
        facts(report=report(generation="e4" * 16, checkout="/other/.git"), **mismatch(CALC)),
        ["stale-generation"],
        ", in another checkout (/other/.git), the current one is",
    ),
    "stale-same-generation-copied-checkout": Row(
        facts(gitdir="/copy/.git"),
        ["stale-generation"],
        f"the evidence was recorded in another checkout ({GITDIR}), not /copy/.git",
    ),
    "control-moved-checkout-keeps-its-id-and-git-dir": Row(
        # mv repo repo2: the git dir's path changed, its id and device:inode did not
        facts(
            gitdir="/moved/.git", checkout_id=CHECKOUT_ID, report=report(checkout_id=CHECKOUT_ID)
        ),
        [],
    ),
    "stale-same-generation-copied-checkout-with-an-id": Row(
        # cp -r: the id came along, the git dir is another inode
        facts(
            gitdir="/copy/.git",
            checkout_id=CHECKOUT_ID.replace(":42", ":43"),
            report=report(checkout_id=CHECKOUT_ID),
        ),
        ["stale-generation"],
        f"the evidence was recorded in another checkout ({GITDIR}), not /copy/.git",
    ),
    "stale-same-generation-id-recorded-none-here": Row(
        # this folder's git dir, its checkout-id removed since: not "another checkout" of the
        # same path named twice (J21 13)
        facts(report=report(checkout_id=CHECKOUT_ID)),
        ["stale-generation"],
        "recorded in this folder under another checkout id (its genstamp/checkout-id was removed",
        "another checkout (",
    ),
    "stale-other-generation-id-recorded-none-here": Row(
        facts(report=report(generation="e4" * 16, checkout_id=CHECKOUT_ID)),
        ["stale-generation"],
        ", in this folder under another checkout id (",
        "another checkout (",
    ),
    "stale-other-generation-moved-checkout-is-not-another": Row(
        facts(
            gitdir="/moved/.git",
            checkout_id=CHECKOUT_ID,
            report=report(generation="e4" * 16, checkout_id=CHECKOUT_ID),
        ),
        ["stale-generation"],
        "the current one is",
        "another checkout",
    ),
    "stale-same-generation-no-checkout-recorded": Row(
        facts(report=report(checkout=None)),
        ["stale-generation"],
        "recorded in another checkout (None)",
    ),
    # tree-mismatch
    "tree-mismatch-edit": Row(
        facts(**mismatch(CALC)),
        ["tree-mismatch"],
        f"the tests ran on tree {TESTED[:12]}, work tree is tree {OTHER[:12]}: differs in {CALC}",
        not_says="only files git does not track",
    ),
    "tree-mismatch-rename": Row(
        facts(**mismatch("a.py -> b.py")), ["tree-mismatch"], "differs in a.py -> b.py"
    ),
    "tree-mismatch-only-bytecode": Row(
        facts(**mismatch("pkg/__pycache__/m.cpython-311.pyc", "old.pyc")),
        ["tree-mismatch"],
        "(only bytecode, which git does not ignore here: add __pycache__/ and *.py[co]",
    ),
    "tree-mismatch-bytecode-and-a-source": Row(
        facts(**mismatch("pkg/__pycache__/m.cpython-311.pyc", CALC)),
        ["tree-mismatch"],
        f"differs in pkg/__pycache__/m.cpython-311.pyc, {CALC}",
        not_says="only bytecode",
    ),
    "tree-mismatch-only-files-beside-the-commit": Row(
        lacking(".wt/feature", "src/calc/.__init__.py.swp", label="refs/heads/main"),
        ["tree-mismatch"],
        "(only files the tested tree holds and this one does not, such as untracked files the "
        "run had beside the commit",
    ),
    # B25 11b: a commit older than the tested one (``git push origin HEAD~1:main``)
    "tree-mismatch-files-committed-later": Row(
        lacking(
            "pkg/y.py",
            label="HEAD~1:refs/heads/main",
            tracked=frozenset({"pkg/y.py"}),
            tested_blobs={CALC: BLOB, "pkg/y.py": BLOB},
            report=report(
                audit=audit.Audit(("calc", "pkg"), {"pkg/y.py": (BLOB,)}, ()).to_json()
            ),  # the tests loaded it, and it is committed already: not "commit them"
        ),
        ["tree-mismatch"],
        "(files git tracks, which this commit does not hold yet: the tests ran on a later"
        " commit's tree, or with them staged: judge the commit tested, or check this one out",
        not_says="commit them",
    ),
    # C25 06: ignoring a file the tests read leaves a commit whose clean clone fails
    "tree-mismatch-files-the-tests-read": Row(
        lacking(
            "src/calc/table.json",
            label="HEAD:refs/heads/main",
            report=report(
                audit=audit.Audit(
                    ("calc",), {CALC: (BLOB,)}, (), read=("src/calc/table.json",)
                ).to_json()
            ),
        ),
        ["tree-mismatch"],
        "(files the tests used, which the commit does not hold: src/calc/table.json: commit"
        " them, then rerun; or, where you dropped them (a rebase, a reset), rerun the tests on"
        " this commit)",
        not_says="ignore",
    ),
    "tree-mismatch-untracked-files-written-since": Row(
        facts(**mismatch("coverage.xml", label=WORK_TREE), untracked_rewritten={"coverage.xml"}),
        ["tree-mismatch"],
        "differs in coverage.xml (only files git does not track, written since the run: a report"
        " a plugin or `coverage run` writes after the tests end: have git ignore them",
    ),
    # a new file of the user's since the run (the tested tree does not hold it): no report
    "tree-mismatch-an-untracked-file-added-since": Row(
        facts(**mismatch("newmod.py", label=WORK_TREE)),
        ["tree-mismatch"],
        "differs in newmod.py",
        not_says="only files git does not track",
    ),
    "tree-mismatch-files-gone-from-the-work-tree-since": Row(
        lacking(".wt/feature", label=WORK_TREE),
        ["tree-mismatch"],
        "differs in .wt/feature",
        not_says="only files",
    ),
    # a module the tests did not load, removed since the run (`git rm`, a rebase that dropped
    # its commit): no report to ignore, no file to commit or remove
    "tree-mismatch-files-removed-since": Row(
        facts(**mismatch("pkg/h.py", label=WORK_TREE), gone={"pkg/h.py"}),
        ["tree-mismatch"],
        "differs in pkg/h.py (only files the tested tree held that are gone since the run:"
        " removed, or dropped by a rebase or a reset: rerun the tests on the tree as it is)",
        not_says="ignore",
    ),
    "tree-mismatch-files-removed-since-judged": Row(
        lacking("pkg/h.py", label="HEAD:refs/heads/main", gone=frozenset({"pkg/h.py"})),
        ["tree-mismatch"],
        "differs in pkg/h.py (only files the tested tree held that are gone since the run",
        not_says="commit them",
    ),
    "tree-mismatch-files-beside-the-commit-and-an-edit": Row(
        facts(
            **mismatch(".wt/feature", CALC, label="refs/heads/main"),
            only_in_first={(TESTED, OTHER): frozenset({".wt/feature"})},
        ),
        ["tree-mismatch"],
        f"differs in .wt/feature, {CALC}",
        not_says="only files",
    ),
    "tree-mismatch-no-paths": Row(
        facts(**mismatch()), ["tree-mismatch"], f"tree {OTHER[:12]}: no paths differ"
    ),
    "tree-mismatch-tree-gone": Row(
        facts(targets=(Target("HEAD", OTHER),), diffs={(TESTED, OTHER): None}),
        ["tree-mismatch"],
        "HEAD is tree 0743e2000000: the tested tree is no longer in the object store",
    ),
    "tree-mismatch-many-paths": Row(
        facts(**mismatch(*(f"added_{i:02d}.txt" for i in range(PATH_LIMIT + 3)))),
        ["tree-mismatch"],
        f"added_{PATH_LIMIT - 1:02d}.txt and 3 more",
        f"added_{PATH_LIMIT:02d}.txt",
    ),
    "control-rev-of-the-tested-tree": Row(facts(targets=(Target("HEAD", TESTED),)), []),
    "tree-mismatch-one-rev-of-two": Row(
        facts(
            targets=(Target("HEAD", TESTED), Target("HEAD~1", OTHER)),
            diffs={(TESTED, OTHER): (CALC,)},
        ),
        ["tree-mismatch"],
        f"HEAD~1 is tree {OTHER[:12]}: differs in {CALC}",
        "HEAD,",
    ),
    # ignored files never reach the facts: the work tree's identity leaves them out
    "tree-mismatch-control-ignored": Row(facts(targets=(Target("work tree", TESTED),)), []),
    # tree-moved
    "tree-moved-during-the-run": Row(
        facts(report=report(tree_start=OTHER), diffs={(OTHER, TESTED): ("output.txt",)}),
        ["tree-moved"],
        f"the tree changed while the tests ran ({OTHER[:12]} -> {TESTED[:12]}): "
        "differs in output.txt",
    ),
    "tree-moved-control-only-the-output-file-changed": Row(
        # the run's own report, rewritten at the end: both trees seen without it are one
        facts(report=report(tree_start=OTHER), views={OTHER: TESTED}),
        [],
    ),
    "tree-moved-output-and-another-file-changed": Row(
        facts(
            report=report(tree_start=OTHER),
            views={OTHER: "5" * 40, TESTED: "6" * 40},
            diffs={("5" * 40, "6" * 40): ("src/calc/__init__.py",)},
        ),
        ["tree-moved"],
        "differs in src/calc/__init__.py",
    ),
    # loaded-not-tested
    "loaded-not-tested-code-differs": Row(
        facts(tested_blobs={CALC: "f0" * 20}),
        ["loaded-not-tested"],
        f"code loaded by the tests differs from the tested tree: {CALC}",
    ),
    "loaded-not-tested-differs-after-git-conversion": Row(
        facts(tested_blobs={CALC: "f0" * 20}, added={(CALC, BLOB): "c0" * 20}),
        ["loaded-not-tested"],
        CALC,
    ),
    "control-loaded-blob-is-the-tested-one-after-git-conversion": Row(
        # a CRLF checkout (core.autocrlf) or a clean filter: git add stores the tested blob
        facts(tested_blobs={CALC: "f0" * 20}, added={(CALC, BLOB): "f0" * 20}),
        [],
    ),
    "loaded-not-tested-conversion-unknown-compares-raw": Row(
        facts(tested_blobs={CALC: "f0" * 20}, added={(CALC, BLOB): None}),
        ["loaded-not-tested"],
        CALC,
    ),
    "loaded-not-tested-one-of-two-loads-differs": Row(
        facts(
            report=report(audit=audit.Audit(("calc",), {CALC: (BLOB, "f0" * 20)}, ()).to_json()),
            tested_blobs={CALC: "f0" * 20},
        ),
        ["loaded-not-tested"],
        CALC,
    ),
    "loaded-not-tested-file-not-in-the-tree": Row(
        facts(tested_blobs={}, placed={CALC: UNTRACKED}),
        ["loaded-not-tested"],
        f"code loaded by the tests is not in the tested tree: {CALC}",
    ),
    "loaded-not-tested-file-placed-nowhere-is-not-accepted": Row(
        facts(tested_blobs={}), ["loaded-not-tested"], CALC
    ),
    "control-loaded-file-installed": Row(facts(tested_blobs={}, placed={CALC: INSTALLED}), []),
    "control-tested-tree-not-in-the-store": Row(facts(tested_blobs=None), []),
    "control-no-audit-no-loaded-check": Row(
        facts(report=report(audit="unavailable"), tested_blobs={CALC: "f0" * 20}), []
    ),
    # ignored-code
    "ignored-code-loaded-from-an-ignored-file": Row(
        facts(tested_blobs={}, placed={CALC: IGNORED}),
        ["ignored-code"],
        f"the tests loaded code from git-ignored files, which a clean clone does not have: {CALC}",
    ),
    "control-ignored-code-declared-generated": Row(
        facts(tested_blobs={}, placed={CALC: IGNORED}),
        [],
        settings=Config(generated=("src/*/__init__.py",)),
    ),
    "ignored-code-a-glob-that-does-not-match": Row(
        facts(tested_blobs={}, placed={CALC: IGNORED}),
        ["ignored-code"],
        CALC,
        settings=Config(generated=("src/*.py", "build/**/*.py")),
    ),
    "control-ignored-code-declared-with-double-star": Row(
        facts(tested_blobs={}, placed={CALC: IGNORED}),
        [],
        settings=Config(generated=("**/__init__.py",)),
    ),
    # dirty-submodule
    "dirty-submodule-modified-inside": Row(
        facts(submodules=(Submodule("vendor/lib", ("vendor/lib/lib.py",)),)),
        ["dirty-submodule"],
        "submodule vendor/lib has changes its recorded commit does not hold: vendor/lib/lib.py",
    ),
    "dirty-submodule-without-evidence-too": Row(
        facts(report=None, submodules=(Submodule("vendor/lib", ("vendor/lib/new.py",)),)),
        ["no-evidence", "dirty-submodule"],
        "no JUnit file",
    ),
    # hidden-change
    "hidden-change-a-file-the-tests-loaded-or-read": Row(
        facts(
            report=report(
                audit=audit.Audit(("calc",), {CALC: (BLOB,)}, (), read=("data.txt",)).to_json()
            ),
            hidden={"data.txt": "--assume-unchanged", CALC: "--skip-worktree"},
        ),
        ["hidden-change"],
        "files the tests loaded or read hold changes the tree leaves out, as the run found them"
        " or as the work tree holds them now (the index tells git not to look at them, or,"
        " written through another link during the run, the run's watch of the work tree did not"
        " see them; a clean clone has the committed files): "
        f"data.txt (--assume-unchanged), {CALC} (--skip-worktree)",
    ),
    "control-hidden-change-in-a-file-the-tests-never-opened": Row(
        facts(hidden={".vscode/settings.json": "--skip-worktree"}), []
    ),
    "hidden-change-when-too-many-files-were-read-to-list": Row(
        facts(
            report=report(audit=audit.Audit(("calc",), {}, (), read=("*",)).to_json()),
            hidden={".vscode/settings.json": "--skip-worktree"},
        ),
        ["hidden-change"],
        ".vscode/settings.json (--skip-worktree)",
    ),
    "hidden-change-without-evidence-too": Row(
        facts(report=None, hidden={"pyproject.toml": "--assume-unchanged"}),
        ["no-evidence", "hidden-change"],
        "no JUnit file",
    ),
    # empty-folder
    "empty-folder-the-tests-wrote-into-or-listed": Row(
        facts(
            report=report(
                audit=audit.Audit(("calc",), {CALC: (BLOB,)}, (), folders=("out", "p/a")).to_json()
            ),
            placed={"out": UNTRACKED, "p/a": UNTRACKED},
        ),
        ["empty-folder"],
        "the tests used folders that held no file (wrote into them, made a folder in them, or "
        "listed them), which git does not keep (a clean clone has none): out, p/a",
    ),
    "control-empty-folder-git-ignores": Row(
        facts(
            report=report(
                audit=audit.Audit(("calc",), {CALC: (BLOB,)}, (), folders=("build",)).to_json()
            ),
            placed={"build": IGNORED},
        ),
        [],
    ),
    # unregistered-submodule
    "unregistered-submodule-loaded-through-a-gitlink-without-url": Row(
        facts(unregistered={CALC: "src", "src/calc/b.py": "src"}),
        ["unregistered-submodule"],
        "the tests loaded code from src, a repository the tested tree records without a URL "
        "in .gitmodules, or with update = none there (a clean clone does not fetch it): "
        f"{CALC}, src/calc/b.py",
    ),
    "unregistered-submodule-one-line-per-repository": Row(
        facts(unregistered={"a/m.py": "a", "b/n.py": "b"}),
        ["unregistered-submodule", "unregistered-submodule"],
        "from a, a repository",
        not_says="b/n.py",
    ),
    # stale-extension
    "stale-extension-older-than-its-source": Row(
        facts(
            report=audited(
                audit.Flag(
                    audit.STALE_EXT,
                    "calc._speed",
                    "src/calc/_speed.so",
                    "older than src/calc/_speed.c: python setup.py build_ext --inplace",
                )
            )
        ),
        ["stale-extension"],
        "calc._speed (src/calc/_speed.so: older than src/calc/_speed.c: python setup.py",
    ),
    "control-stale-extension-installed": Row(
        facts(
            report=audited(audit.Flag(audit.STALE_EXT, "np", ".venv/lib/np/_x.so", "old")),
            placed={".venv/lib/np/_x.so": INSTALLED},
        ),
        [],
    ),
    "control-stale-bytecode-flag-of-an-installed-package": Row(
        # an in-project .venv's bytecode predates the generation: the installer's business
        facts(
            report=audited(audit.Flag(audit.STALE, "_distutils_hack", ".venv/lib/d.py", "old")),
            placed={".venv/lib/d.py": INSTALLED},
        ),
        [],
    ),
    # stale-bytecode
    "stale-bytecode-older-than-the-generation": Row(
        facts(bytecode=(Bytecode("src/calc/__pycache__/x.pyc", NS - 1, False),)),
        ["stale-bytecode"],
        "src/calc/__pycache__/x.pyc is older than the generation",
    ),
    "control-bytecode-newer-than-the-generation": Row(
        facts(bytecode=(Bytecode("src/calc/__pycache__/x.pyc", NS, False),)), []
    ),
    "stale-bytecode-sourceless": Row(
        facts(bytecode=(Bytecode("src/calc/legacy.pyc", NS + 1, True),)),
        ["stale-bytecode"],
        "src/calc/legacy.pyc is sourceless bytecode (no legacy.py)",
    ),
    "stale-bytecode-sourceless-without-a-stamp": Row(
        facts(generation=None, bytecode=(Bytecode("old.pyc", 0, True),)),
        ["no-stamp", "stale-bytecode"],
        "no generation stamp",
    ),
    "control-no-age-without-a-stamp": Row(
        facts(generation=None, bytecode=(Bytecode("old.pyc", 0, False),)), ["no-stamp"], "no gen"
    ),
    **{
        f"stale-bytecode-loaded{kind}": Row(
            facts(report=audited(flag(how))), ["stale-bytecode"], "calc (/elsewhere/calc.py: why)"
        )
        for kind, how in (("", audit.STALE), ("-sourceless", audit.SOURCELESS))
    },
    "stale-bytecode-on-disk-then-loaded": Row(
        facts(
            bytecode=(Bytecode("src/calc/legacy.pyc", NS + 1, True),),
            report=audited(flag(audit.SOURCELESS)),
        ),
        ["stale-bytecode"],
        "src/calc/legacy.pyc is sourceless bytecode (no legacy.py), calc (/elsewhere/",
    ),
    "stale-bytecode-many": Row(
        facts(bytecode=tuple(Bytecode(f"m{i:02d}.pyc", 0, True) for i in range(FLAG_LIMIT + 2))),
        ["stale-bytecode"],
        f"(no m{FLAG_LIMIT - 1:02d}.py) and 2 more",
        f"m{FLAG_LIMIT:02d}",
    ),
    # foreign-origin
    "foreign-origin": Row(
        facts(report=audited(flag(audit.FOREIGN))),
        ["foreign-origin"],
        "calc from /elsewhere/calc.py",
    ),
    "foreign-origin-one-file-named-once": Row(  # flagged in two processes, for two reasons
        facts(
            report=audited(flag(audit.FOREIGN), flag(audit.FOREIGN)._replace(detail="in a child"))
        ),
        ["foreign-origin"],
        "calc from /elsewhere/calc.py",
        ", calc",
    ),
    "foreign-origin-code-never-seen-says-how": Row(  # Z24 05: the remedy alone misled
        facts(
            report=audited(
                audit.Flag(audit.FOREIGN, "calc", "<code never seen to run from c.py>", "why")
            )
        ),
        ["foreign-origin"],
        "calc from <code never seen to run from c.py>: why",
    ),
    "control-foreign-flag-is-not-stale-bytecode": Row(
        facts(report=audited(flag(audit.FOREIGN))),
        ["foreign-origin"],
        "calc",
        "why",
    ),
    # tests-failed
    "tests-failed": Row(
        facts(report=report(Counts(2, 1, 1))), ["tests-failed"], "1 failed, 0 errors in 2"
    ),
    "tests-failed-on-an-error": Row(
        facts(report=report(Counts(2, 1, 0, 1))), ["tests-failed"], "0 failed, 1 errors in 2"
    ),
    "control-some-skipped": Row(facts(report=report(Counts(2, 1, 0, 0, 1))), []),
    # no-tests
    "no-tests-all-skipped": Row(
        facts(report=report(Counts(2, 0, 0, 0, 2))),
        ["no-tests"],
        "no test executed (2 skipped)",
    ),
    "no-tests-none-collected": Row(
        facts(report=report(Counts())), ["no-tests"], "no test executed (0 skipped)"
    ),
    "control-one-error-is-a-test": Row(facts(report=report(Counts(1, 0, 0, 1))), ["tests-failed"]),
    # partial-run
    "partial-run": Row(
        facts(report=report(selection="partial", selection_reasons="-k add; 1 deselected")),
        ["partial-run"],
        "the run covered part of the suite: -k add; 1 deselected",
    ),
    "partial-run-reasons-not-recorded": Row(
        facts(report=report(selection="partial", selection_reasons="")),
        ["partial-run"],
        "the run covered part of the suite: not recorded",
    ),
    "partial-run-stopped-early": Row(
        facts(report=report(Counts(1, 0, 1), selection="partial", selection_reasons="-x")),
        ["tests-failed", "partial-run"],
        "1 failed",
    ),
    "control-partial-run-allowed": Row(
        facts(report=report(selection="partial", selection_reasons="-k add")),
        [],
        settings=Config(allow_partial=True),
    ),
    "stale-generation-and-tree-mismatch": Row(
        facts(report=report(generation="e4" * 16), **mismatch("new.txt")),
        ["stale-generation", "tree-mismatch"],
        "the current one is",
    ),
    # many at once, reported in the order of RULES
    "several-in-rule-order": Row(
        facts(
            report=report(Counts(1, 0, 1), selection="partial", tree_start=OTHER),
            diffs={(OTHER, TESTED): ("x",), (TESTED, OTHER): ("x",)},
            targets=(Target("work tree", OTHER),),
            bytecode=(Bytecode("a.pyc", 0, True),),
        ),
        ["tree-mismatch", "tree-moved", "stale-bytecode", "tests-failed", "partial-run"],
        "the tests ran on tree",
    ),
    # the suite from the tested tree, and the parts merged over it (issue 12)
    "control-coverage-complete": Row(facts(report=report(coverage=COV_AB), suites=SUITE_AB), []),
    "control-configuration-deselects-nothing-left-out": Row(
        facts(report=report(coverage=COV_AB), suites=SUITE_AB), []
    ),
    "partial-a-file-not-collected": Row(
        facts(report=report(coverage=COV_A), suites=SUITE_AB),
        ["partial-run"],
        "the run covered part of the suite: 1 file: tests/test_b.py of the suite not collected",
    ),
    "partial-tests-collected-not-run": Row(
        facts(report=report(coverage=COV_AB_LEFT), suites=SUITE_AB),
        ["partial-run"],
        "1 collected tests did not run: tests/test_b.py::test_2",
    ),
    "control-two-parts-cover-the-suite": Row(
        facts(
            report=report(coverage=COV_A),
            suites=SUITE_AB,
            others=(("b.xml", report(coverage=COV_B)),),
        ),
        [],
    ),
    "control-a-part-runs-what-another-left-out": Row(
        facts(
            report=report(coverage=COV_AB_LEFT),
            suites=SUITE_AB,
            others=(("b.xml", report(coverage=COV_B)),),
        ),
        [],
    ),
    # a part whose own options changed the suite (an older plugin still credited its tests)
    "partial-a-lenient-part-fills-in-nothing": Row(
        part_b_partial(binding.OPTIONS_REASON + ": -W ignore::UserWarning"),
        ["partial-run"],
        "1 collected tests did not run: tests/test_b.py::test_2",
    ),
    "control-a-part-with-other-reasons-fills-in": Row(part_b_partial("node ids given"), []),
    "parts-disagree-on-a-test": Row(
        facts(
            report=report(coverage=COV_AB),
            suites=SUITE_AB,
            others=(("b.xml", report(coverage=COV_B_RED)),),
        ),
        ["parts-disagree"],
        "tests/test_b.py::test_1 passed in " + EVIDENCE + ", failed in b.xml",
    ),
    "control-allow-partial-accepts-and-says-so": Row(
        facts(report=report(coverage=COV_A), suites=SUITE_AB),
        [],
        settings=Config(allow_partial=True),
    ),
    "partial-names-what-the-suite-could-not-read": Row(
        facts(
            report=report(coverage=COV_A),
            suites=(SUITE_AB[0]._replace(problems=("conftest.py computes collect_ignore",)),),
        ),
        ["partial-run"],
        "tests/test_b.py of the suite not collected (note: conftest.py computes collect_ignore)",
    ),
    "partial-suite-unlisted": Row(
        facts(report=report(coverage=COV_AB), suites=None),
        ["partial-run"],
        "the suite cannot be listed",
    ),
    "unbound-coverage-of-another-format": Row(
        facts(report=report(coverage=COV_AB.replace('"version":1', '"version":9'))),
        ["unbound-evidence"],
        "its genstamp.coverage cannot be read (coverage format 9)",
    ),
    # clean-room-diverged, no-clean-room (test_cleanroom_rules.py has the rest of their rows)
    "clean-room-diverged": Row(
        facts(clean_room_problems=("x.json is not a genstamp clean-room record",)),
        ["clean-room-diverged"],
        "the clean-room evidence cannot be compared",
    ),
    "no-clean-room": Row(
        facts(),
        ["no-clean-room"],
        f"no clean-room evidence for tree {TESTED[:12]}",
        settings=Config(require_clean_room=True),
    ),
}


@pytest.mark.parametrize("name", list(ROWS))
def test_rule_table(name: str) -> None:
    row = ROWS[name]
    verdict = decide(row.facts, row.settings)
    assert [f.rule for f in verdict.failures] == row.rules, verdict.failures
    assert verdict.ok is not row.rules
    if row.rules:
        first = verdict.failures[0].message
        assert row.says in first, first
        if row.not_says is not None:
            assert row.not_says not in first, first


def test_every_rule_has_a_row_that_fires_it_and_a_control_row() -> None:
    fired = {rule for row in ROWS.values() for rule in row.rules}
    assert fired == set(RULES)
    assert any(name.startswith("control-") for name in ROWS)


def test_the_table_is_the_documented_rules_in_order() -> None:
    assert RULES == (
        "no-stamp",
        "no-evidence",
        "unbound-evidence",
        "stale-generation",
        "tree-mismatch",
        "tree-moved",
        "loaded-not-tested",
        "ignored-code",
        "dirty-submodule",
        "hidden-change",
        "empty-folder",
        "unregistered-submodule",
        "stale-bytecode",
        "stale-extension",
        "foreign-origin",
        "tests-failed",
        "no-tests",
        "partial-run",
        "parts-disagree",
        "clean-room-diverged",
        "no-clean-room",
    )
    assert [rule.remedy for rule in TABLE] == [REMEDY[name] for name in RULES]
    assert all(REMEDY.values())


def test_the_verdict_carries_what_was_judged() -> None:
    verdict = decide(facts(), Config())
    assert verdict == Verdict((), EVIDENCE, GEN.id, TESTED, (Target("work tree", TESTED),), GREEN)
    unbound = decide(facts(report=report(tree_end=None)), Config())
    assert (unbound.tested_tree, unbound.counts) == (None, GREEN)  # counts, though unbound
    missing = decide(facts(report=None, generation=None), Config())
    assert (missing.generation, missing.tested_tree, missing.counts) == (None, None, None)
    assert missing.to_json()["tests"] is None


def test_a_push_of_many_refs_gets_a_few_lines() -> None:
    trees = [f"{i:02d}" + "e" * 38 for i in range(TREE_LIMIT + 2)]
    targets = tuple(Target(f"refs/heads/b{i}-{j}", t) for i, t in enumerate(trees) for j in (0, 1))
    diffs = {(TESTED, t): (CALC,) for t in trees[:TREE_LIMIT]}
    verdict = decide(facts(targets=targets, diffs=diffs), Config())
    lines = [f.message for f in verdict.failures]
    assert [f.rule for f in verdict.failures] == ["tree-mismatch"] * (TREE_LIMIT + 1)
    assert lines[0] == (
        f"the tests ran on tree {TESTED[:12]}, refs/heads/b0-0, refs/heads/b0-1 are tree "
        f"{trees[0][:12]}: differs in {CALC}"
    )
    assert lines[-1] == (
        f"and 4 more on 2 other trees, none of them tree {TESTED[:12]}: "
        f"refs/heads/b{TREE_LIMIT}-0, refs/heads/b{TREE_LIMIT + 1}-0"
    )
    many = tuple(Target(f"r{i}", OTHER) for i in range(LABEL_LIMIT + 2))
    one = decide(facts(targets=many, diffs={(TESTED, OTHER): ()}), Config())
    assert f"r{LABEL_LIMIT - 1} and 2 more are tree" in one.failures[0].message


def test_messages_are_one_printable_line() -> None:
    name = "caf\udce9\nx.txt"  # a Latin-1 byte os hands over surrogate-escaped, and a newline
    verdict = decide(facts(**mismatch(name)), Config())
    message = verdict.failures[0].message
    assert message.endswith("differs in caf\\xe9\\nx.txt")
    message.encode("utf-8")  # strict: no surrogate left
    assert printable("plain") == "plain" and printable("a\x7fb\tc") == "a\\x7fb\\tc"


def test_failure_line_and_json() -> None:
    failure = Failure("no-tests", "no test executed (0 skipped)")
    assert failure.line() == (
        "no-tests: no test executed (0 skipped) — run the suite so that tests execute"
    )
    data = decide(facts(report=report(Counts())), Config()).to_json()
    assert list(data) == [
        "ok",
        "failures",
        "evidence",
        "generation",
        "tested_tree",
        "targets",
        "tests",
        "selection",
        "parts",
    ]
    assert data["failures"] == [
        {"rule": "no-tests", "message": "no test executed (0 skipped)", "remedy": failure.remedy}
    ]
    assert data["tests"] == Counts()._asdict()


# Modules the rules may load: the stdlib's, and genstamp's own that do no I/O.
PURE = {
    "genstamp",
    "genstamp.errors",
    "genstamp.paths",
    "genstamp.realos",  # copies of os and io's namespaces, taken as it is imported: no I/O
    "genstamp.placed",  # its names only: the rules never call its functions
    "genstamp.binding",
    "genstamp.audit",
    "genstamp.bytecode",
    "genstamp.records",  # namedtuple without typing: no I/O
    "genstamp.typedtuple",  # typing's NamedTuple at collections' cost: no I/O
    "genstamp.stdlib",  # the standard library's modules, found as the import system finds them
    "genstamp.rules",
    "genstamp.selection",  # handed data alone (test_selection: test_the_decisions_do_no_io)
    "genstamp.suite",
    "genstamp.coverage",
    "genstamp.versioned",  # which versions of genstamp's files are read (reading them: lazily)
}


def test_the_rules_import_nothing_that_does_io() -> None:
    code = (
        "import json, sys; before = set(sys.modules); import genstamp.rules; "
        "print(json.dumps(sorted(set(sys.modules) - before)))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    loaded = set(json.loads(out))
    assert "pygit2" not in loaded and not any(m.startswith("pygit2.") for m in loaded)
    ours = {m for m in loaded if m == "genstamp" or m.startswith("genstamp.")}
    assert ours <= PURE, ours - PURE
    assert "genstamp.rules" in ours  # the probe did import it


def test_a_long_list_is_bounded_in_the_line_and_whole_in_json() -> None:
    many = tuple(Bytecode(f"src/calc/m{i:02d}.pyc", NS + 1, True) for i in range(25))
    verdict = decide(facts(bytecode=many), Config())
    (failure,) = verdict.failures
    assert failure.rule == "stale-bytecode"
    assert failure.message.endswith("and 15 more")
    assert "m09.pyc" in failure.message and "m10.pyc" not in failure.message
    (entry,) = verdict.to_json()["failures"]
    assert len(entry["items"]) == 25 and entry["items"][24].startswith("src/calc/m24.pyc")
    # a finding that names no list carries no items
    assert "items" not in decide(facts(generation=None), Config()).to_json()["failures"][0]
