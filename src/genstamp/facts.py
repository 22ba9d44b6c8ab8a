"""The gate's facts: everything ``genstamp.rules.decide`` looks at, gathered in one place.

Here are the stamp, the report, the trees, the revs and the bytecode on disk; the rules read
none of them themselves, so that they can be tested over records in milliseconds.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path

import pygit2

from genstamp import binding, evidence, generation
from genstamp.bytecode import PYCACHE
from genstamp.errors import GenstampError
from genstamp.identity import scan
from genstamp.repo import Checkout
from genstamp.rules import Bytecode, Facts, Target, binding_problem, diff_pairs, read_audit


def gather(
    checkout: Checkout,
    evidence_path: Path,
    revs: Sequence[str] = (),
    labels: Mapping[str, str] | None = None,
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
    )


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
