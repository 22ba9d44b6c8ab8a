"""The gate's facts: everything ``genstamp.rules.decide`` looks at, gathered in one place.

Here are the stamp, the report, the trees, the revs and the bytecode on disk; the rules read
none of them themselves, so that they can be tested over records in milliseconds.
"""

from __future__ import annotations

import glob
import os
import posixpath
from collections.abc import Mapping, Sequence
from pathlib import Path

import pygit2

from genstamp import binding, coverage, evidence, generation, parts, suite
from genstamp.bytecode import PYCACHE
from genstamp.errors import GenstampError
from genstamp.identity import scan
from genstamp.repo import Checkout
from genstamp.rules import (
    Bytecode,
    Facts,
    Target,
    binding_problem,
    diff_pairs,
    merged,
    read_audit,
    read_coverage,
)


def gather(
    checkout: Checkout,
    evidence_path: Path,
    revs: Sequence[str] = (),
    labels: Mapping[str, str] | None = None,
    *,
    suites: Sequence[str] = (),
) -> Facts:
    """The facts for judging the evidence at ``evidence_path`` against the work tree, or
    against each of ``revs`` (shown as ``labels[rev]`` when given)."""
    targets = tuple(rev_tree(checkout, r, (labels or {}).get(r)) for r in revs)
    # One walk of the work tree: its identity (when it is the target) and where bytecode lives.
    walk = scan(checkout, want_tree=not targets, want_bytecode=True)
    if not targets:
        assert walk.tree is not None
        targets = (Target("work tree", walk.tree),)

    gen: generation.Generation | None = None
    stamp_problem = ""
    try:
        gen = generation.current(checkout)
    except GenstampError as exc:
        stamp_problem = exc.message

    report, unreadable, mtime, diffs, blobs = _report_facts(checkout, evidence_path, targets)
    suites_found: tuple[suite.Suite, ...] | None = None
    if report is not None and not binding_problem(report):
        suites_found = tree_suites(checkout.repo, report.properties[binding.P_TREE_END], suites)

    return Facts(
        gitdir=str(checkout.gitdir),
        stamp_path=str(generation.stamp_path(checkout)),
        generation=gen,
        stamp_problem=stamp_problem,
        evidence=str(evidence_path),
        report=report,
        unreadable=unreadable,
        report_mtime_ns=mtime,
        targets=targets,
        diffs=diffs,
        tested_blobs=blobs,
        bytecode=bytecode_listing(checkout.workdir, walk.bytecode),
        suites=suites_found,
    )


def _report_facts(
    checkout: Checkout, evidence_path: Path, targets: Sequence[Target]
) -> tuple[
    binding.Report | None,
    str,
    int | None,
    dict[tuple[str, str], tuple[str, ...] | None],
    dict[str, str] | None,
]:
    """One evidence file: its report, why it cannot be read, its mtime, and the paths and
    blobs its messages name."""
    report: binding.Report | None = None
    unreadable = ""
    mtime: int | None = None
    try:
        report = evidence.read_report(evidence_path)
        mtime = evidence_path.stat().st_mtime_ns
    except FileNotFoundError:
        pass  # no evidence: a rule of its own
    except GenstampError as exc:
        unreadable = exc.message
    except OSError:
        pass  # only the mtime is missing: it is a hint in a message, never a reason

    repo = checkout.repo
    diffs: dict[tuple[str, str], tuple[str, ...] | None] = {}
    blobs: dict[str, str] | None = None
    # A report that does not bind is judged on that alone: its trees are not looked at.
    if report is not None and not binding_problem(report):
        for a, b in diff_pairs(report, targets):
            diffs[(a, b)] = differing_paths(repo, a, b)
        loaded, _ = read_audit(report.properties)
        if loaded is not None:
            blobs = loaded_blobs(repo, report.properties[binding.P_TREE_END], loaded.loaded)
    return report, unreadable, mtime, diffs, blobs


def gather_parts(
    checkout: Checkout,
    paths: Sequence[Path],
    revs: Sequence[str] = (),
    labels: Mapping[str, str] | None = None,
    *,
    suites: Sequence[str] = (),
    kept: bool = False,
) -> list[Facts]:
    """The facts for judging several evidence files as parts of one run: the first file's
    facts (which carry the others, for the merge), then each other file's own (judged by every
    rule but the merge). With ``kept``, when the first does not cover the suite alone, the
    parts the plugin kept for the current generation that tested the same tree join it."""
    first = gather(checkout, paths[0], revs, labels, suites=suites)
    others = list(paths[1:])
    report = first.report
    if kept and report is not None and not binding_problem(report) and first.generation:
        merge = merged(first)
        if merge is not None and not merge.complete:
            others = _kept_parts(checkout, first.generation.id, report)
    out = []
    carried: list[tuple[str, binding.Report]] = []
    for path in others:
        rep, unreadable, mtime, diffs, blobs = _report_facts(checkout, path, first.targets)
        if rep is not None:
            carried.append((str(path), rep))
        out.append(
            first._replace(
                evidence=str(path),
                report=rep,
                unreadable=unreadable,
                report_mtime_ns=mtime,
                diffs=diffs,
                tested_blobs=blobs,
                primary=False,
            )
        )
    return [first._replace(others=tuple(carried)), *out]


def _kept_parts(checkout: Checkout, gen: str, first: binding.Report) -> list[Path]:
    """The current generation's kept parts that tested the same tree as ``first`` (a part of
    an earlier tree is history, not a part of this run), ``first`` itself left out."""
    props = first.properties
    out = []
    for path in parts.listing(checkout.state, gen):
        try:
            rep = evidence.read_report(path)
        except (GenstampError, OSError):
            continue
        p = rep.properties
        if (
            not binding_problem(rep)
            and p.get(binding.P_GENERATION) == gen
            and p.get(binding.P_TREE_END) == props[binding.P_TREE_END]
            and p.get(binding.P_SEAL) != props.get(binding.P_SEAL)
        ):
            out.append(path)
    return out


def rev_tree(checkout: Checkout, rev: str, label: str | None = None) -> Target:
    """The tree of the commit ``rev`` names (tags peeled to their commit)."""
    try:
        obj = checkout.repo.revparse_single(rev)
        commit = obj.peel(pygit2.Commit)
    except (KeyError, ValueError, pygit2.GitError, pygit2.InvalidSpecError) as exc:
        if checkout.repo.is_shallow:
            raise GenstampError(
                f"{rev!r} does not name a commit here: this is a shallow clone, "
                "whose history stops at its shallow boundary",
                "judge a commit the clone has, or deepen it (git fetch --unshallow)",
            ) from None
        raise GenstampError(
            f"{rev!r} does not name a commit in this repository ({exc})",
            "pass a branch, tag or commit id to --rev",
        ) from None
    return Target(label or rev, str(commit.tree_id))


def bytecode_listing(root: Path, found: Sequence[str]) -> tuple[Bytecode, ...]:
    """The bytecode files the walk found (folders __pycache__ opened), with their ages."""
    out: list[Bytecode] = []
    for rel in found:
        full = root / rel
        if full.name == PYCACHE:
            try:
                with os.scandir(full) as it:
                    entries = [(e.name, e.stat(follow_symlinks=False).st_mtime_ns) for e in it]
            except OSError:
                continue
            out.extend(Bytecode(f"{rel}/{name}", mtime, False) for name, mtime in entries)
        else:
            try:
                mtime = full.lstat().st_mtime_ns
            except OSError:
                continue
            sourceless = PYCACHE not in full.parts and not full.with_suffix(".py").exists()
            out.append(Bytecode(rel, mtime, sourceless))
    return tuple(out)


def loaded_blobs(
    repo: pygit2.Repository, tested: str, loaded: Mapping[str, object]
) -> dict[str, str] | None:
    """The ids the files ``loaded`` names have in the tree ``tested`` (files not in it left
    out); None when that tree is not in the object store."""
    tree = _tree(repo, tested)
    if tree is None:
        return None
    blobs = {}
    for rel in loaded:
        try:
            blobs[rel] = str(tree[rel].id)
        except KeyError:
            continue  # an ignored file: not part of any tree
    return blobs


def differing_paths(repo: pygit2.Repository, a: str, b: str) -> tuple[str, ...] | None:
    """The paths that differ from tree ``a`` to tree ``b`` (renames as ``old -> new``); None
    when either is not in the object store."""
    ta, tb = _tree(repo, a), _tree(repo, b)
    if ta is None or tb is None:
        return None
    paths = []
    for delta in ta.diff_to_tree(tb).deltas:
        old, new = delta.old_file.path, delta.new_file.path
        paths.append(old if old == new else f"{old} -> {new}")
    return tuple(paths)


def _tree(repo: pygit2.Repository, tree_id: str) -> pygit2.Tree | None:
    try:
        obj = repo.get(tree_id)
    except (ValueError, pygit2.GitError):
        return None
    return obj if isinstance(obj, pygit2.Tree) else None


# -- the suite, listed from a tree in the object store ------------------------------------------


def tree_suites(
    repo: pygit2.Repository, tree_id: str, roots: Sequence[str]
) -> tuple[suite.Suite, ...] | None:
    """The suites of the tree ``tree_id`` (None when it is not in the object store). Only the
    folders a configuration's ``testpaths`` name are listed, and no folder pytest would not
    enter: a large tree with a small ``tests/`` costs little."""
    tree = _tree(repo, tree_id)
    if tree is None:
        return None

    def read(path: str) -> bytes | None:
        try:
            obj = tree[path]
        except (KeyError, ValueError):
            return None
        return obj.data if isinstance(obj, pygit2.Blob) else None

    out = []
    for root in roots or [""]:
        root = root.strip("/")
        config = suite.read_config(read, root)
        listing: list[str] = []
        starts = [suite.join(root, t) for t in config.testpaths]
        if not starts or any(glob.has_magic(s) for s in starts):
            starts = [root]
        for start in starts:
            _list(tree, start, config.norecursedirs, listing)
            # conftests between the suite's folder and the start may ignore files below
            folder = start
            while folder and folder != root:
                folder = posixpath.dirname(folder)
                if read(suite.join(folder, "conftest.py")) is not None:
                    listing.append(suite.join(folder, "conftest.py"))
        out.append(suite.collect(sorted(set(listing)), read, root))
    return tuple(out)


def _list(tree: pygit2.Tree, start: str, norecurse: Sequence[str], out: list[str]) -> None:
    try:
        top = tree[start] if start else tree
    except (KeyError, ValueError):
        return
    if isinstance(top, pygit2.Blob):
        out.append(start)
        return
    if not isinstance(top, pygit2.Tree):
        return
    pruned = suite.any_of([*norecurse, "__pycache__"])
    stack: list[tuple[str, pygit2.Tree]] = [(start, top)]
    while stack:
        prefix, current = stack.pop()
        lead = f"{prefix}/" if prefix else ""
        for entry in current:
            name = entry.name or ""
            if entry.type == pygit2.enums.ObjectType.TREE:
                if not pruned(name):
                    stack.append((lead + name, entry))  # type: ignore[arg-type]
            elif entry.type == pygit2.enums.ObjectType.BLOB:
                out.append(lead + name)


def parts_status(
    checkout: Checkout, tree: str, gen: generation.Generation | None, roots: Sequence[str]
) -> dict[str, object]:
    """For ``genstamp status``: the suites of ``tree``, the parts kept for ``gen`` and what the
    parts that tested ``tree`` still leave out."""
    suites = tree_suites(checkout.repo, tree, roots) or ()
    listed = []
    current: list[coverage.Part] = []
    for path in parts.listing(checkout.state, gen.id if gen else None):
        try:
            rep = evidence.read_report(path)
        except (GenstampError, OSError):
            continue
        cov, _ = read_coverage(rep.properties)
        same = rep.properties.get(binding.P_TREE_END) == tree and not binding_problem(rep)
        if cov is not None and same:
            current.append(coverage.Part(str(path), cov))
        listed.append(
            {
                "evidence": str(path),
                "tree": rep.properties.get(binding.P_TREE_END),
                "current_tree": same,
                "files": len(cov.files) if cov else None,
                "ran": len(cov.outcomes) if cov else None,
                "left_out": len(cov.unran) if cov else None,
            }
        )
    merge = coverage.merge(current, suites)
    by_suite = [
        {
            "root": s.label,
            "config": s.config.source or None,
            "files": len(s.files),
            "digest": s.digest,
            "missing": len([f for f in s.files if f in set(merge.missing)]),
        }
        for s in suites
    ]
    return {
        "suites": by_suite,
        "parts": listed,
        "complete": bool(current) and merge.complete,
        "conflicts": list(merge.conflicts),
        "missing": {
            "files": list(merge.missing),
            "tests": list(merge.unran),
            "summary": "; ".join(merge.left_out()) if current else "no part tested this tree",
        },
    }
