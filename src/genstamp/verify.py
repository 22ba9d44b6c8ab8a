"""The gate: gather the facts (``genstamp.facts``), then decide (``genstamp.rules``); trees it
accepted are remembered (``genstamp.verified``) and accepted again without evidence."""

from __future__ import annotations

import contextlib
import itertools
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

import pygit2

from genstamp import cleanrecord, config, evidence, refuted, verified
from genstamp.errors import GenstampError
from genstamp.facts import (
    committed_settings,
    gather_parts,
    rev_tree,
    testable,
    vouching,
    workspace,
)
from genstamp.repo import Checkout, other_worktrees
from genstamp.rules import (
    FLAG_LIMIT,
    LABEL_LIMIT,
    PATH_LIMIT,
    RULES,
    TREE_LIMIT,
    Facts,
    Failure,
    Target,
    Verdict,
    decide,
    fresh_tree,
    printable,
    work_tree_bytecode,
)

__all__ = [
    "FLAG_LIMIT",
    "LABEL_LIMIT",
    "PATH_LIMIT",
    "RULES",
    "TREE_LIMIT",
    "Failure",
    "Target",
    "Verdict",
    "printable",
    "rev_tree",
    "verify",
]


def _failed_clean(tree: str, gitdirs: Iterable[Path]) -> bool:
    """Whether a clean room of one of ``gitdirs`` refused its run of ``tree``."""
    for gitdir in gitdirs:
        try:
            record = cleanrecord.read(gitdir, tree)
        except GenstampError:
            continue  # unreadable: the clean-room rules say so where it is judged
        if record is not None and not record.ok:
            return True
    return False


def verify(
    checkout: Checkout,
    *,
    junit: Path | Sequence[Path] | None = None,
    revs: Sequence[str] = (),
    labels: Mapping[str, str] | None = None,
    settings: config.Config | None = None,
    others: bool = True,
    runs: bool = False,
) -> Verdict:
    """Judge the evidence against the work tree, or against each of ``revs`` (commits, shown
    as ``labels[rev]`` when given: the refs a push names). A commit whose tree the gate accepted
    before in this checkout is accepted again (unless evidence of this generation tested that
    tree since); every tree it accepts now is remembered. Without ``others`` the work tree is
    judged on this checkout's evidence alone: no other run vouches for it, no other refutes it,
    and what it accepts is not remembered (a clean room's own gate). ``runs``: a commit is
    judged on a run of its tree, never on a remembered verdict alone (``attest`` states what
    the run ran)."""
    if settings is None:
        settings = settings_for(checkout, revs)
    settings = config.with_projects_below(settings, checkout.workdir)
    if junit is None:
        paths = [evidence.location(checkout, settings.evidence)]
    else:
        paths = [junit] if isinstance(junit, Path) else list(junit)
    judged = gather_parts(checkout, paths, revs, labels, suites=settings.suites, kept=junit is None)
    facts = judged[0]
    # Commits (a push, --rev) may be vouched for by an earlier verdict on their tree. So may
    # the work tree when no run of this generation tested it (a branch left and come back to,
    # a fast-forward onto the tested commit): by a run of an ended generation on that very
    # tree, its bytecode checked as it is now (``work_tree_bytecode``).
    fresh = fresh_tree(facts)
    earlier = bool(revs) or (
        others
        and junit is None
        and not work_tree_bytecode(facts)
        and any(facts.views.get(t.tree, t.tree) != fresh for t in facts.targets)
    )
    # the newest failing run of each tree anywhere in the repository: a later one than the
    # evidence is the newer word on the tree, the work tree's too (``_refuted``)
    failed = refuted.newest(checkout.gitdir) if revs or others else refuted.Newest()
    remembered = verified.everywhere(checkout.gitdir, failed) if revs and not runs else {}
    if settings.require_clean_room:  # an earlier verdict stands only with a clean room's
        remembered = {t: g for t, g in remembered.items() if cleanrecord.passing(g, t)}
    # nor against a clean room's failure of that very tree (whenever the run was): the tree
    # is judged again, where the clean room's evidence is weighed
    target_trees = {t.tree for t in facts.targets}
    remembered = {
        t: g
        for t, g in remembered.items()
        if t not in target_trees or not _failed_clean(t, dict.fromkeys([checkout.gitdir, g]))
    }
    # Evidence of this generation on a target's very tree is the newest verdict on it: a run
    # that fails now is not outvoted by an older acceptance.
    pending = tuple(
        t
        for t in facts.targets
        if t.tree not in remembered or facts.views.get(t.tree, t.tree) == fresh
    )
    # A commit of no Python project and no tests (a published site: gh-pages) holds nothing
    # for the tests to judge.
    nothing_to_test = tuple(
        t.tree
        for t in pending
        if revs and facts.views.get(t.tree, t.tree) != fresh and not testable(checkout.repo, t.tree)
    )
    pending = tuple(t for t in pending if t.tree not in nothing_to_test)
    # A commit the newest evidence did not test may have been tested in a generation a
    # checkout, merge or rewrite ended since (a branch tested, then left): that run's verdict,
    # as the gate would have given it then, stands for it.
    vouched_trees: tuple[str, ...] = ()
    vouching: dict[Target, Verdict] = {}  # the run that tested the tree then, accepted
    refused: dict[Target, Verdict] = {}  # the run that tested the tree then, refused
    if earlier:
        then = [t for t in pending if facts.views.get(t.tree, t.tree) != fresh]
        vouching, refused = _vouched(
            checkout, facts._replace(others=(), primary=True), then, settings, failed
        )
        vouched = list(vouching)
        vouched_trees = tuple(t.tree for t in vouched)
        pending = tuple(t for t in pending if t not in vouched and t not in refused)
        if vouched:
            with contextlib.suppress(GenstampError):
                verified.remember(checkout.gitdir, [t.tree for t in vouched])
    if not pending and not refused:
        _adopt(checkout, facts.targets, remembered)
        return _without_a_run(facts, nothing_to_test, vouching)
    # each tree judged by its own settings, as strict as the work tree's (one group, mostly)
    groups: dict[config.Config, list[Target]] = {}
    for target in pending:
        groups.setdefault(as_committed(checkout, settings, target.tree), []).append(target)
    verdict = combine(
        [
            *(
                decide(part._replace(targets=tuple(group)), held)
                for held, group in groups.items()
                for part in judged
            ),
            *refused.values(),  # its own reasons, not those of the newest evidence
        ]
    )._replace(
        targets=facts.targets,
        nothing_to_test=nothing_to_test,
        vouched=vouched_trees,
        vouching=tuple(vouching.values()),
        judged=tuple(dict.fromkeys(t.tree for t in (*pending, *refused))),
    )
    if (
        revs
        and not refused
        and {f.rule for f in verdict.failures} == {"no-tests"}
        and not any(testable(checkout.repo, t.tree) for t in pending)
    ):
        # a run that found no test in a tree that holds none (pytest run on gh-pages): there
        # is nothing for the tests to judge, run or not
        empty = tuple(dict.fromkeys(t.tree for t in pending))
        return _without_a_run(facts, (*nothing_to_test, *empty), vouching)
    parts = [t for t in (_mtime(Path(f)) for f, _ in facts.others) if t is not None]
    ran_at = min([facts.report_mtime_ns or 0, *parts])
    said = {f.rule for f in verdict.failures}
    # the evidence failed, and its failure is recorded: a run of the tree that passed since
    # (in another worktree) is the newer word, as a failure since would be
    failed_before = (
        "tests-failed" in said
        and said <= {"tests-failed", "partial-run"}
        and all(failed.get(t.tree, -1) >= ran_at for t in pending)
    )
    if (
        not refused
        and (said == {"partial-run"} or failed_before)
        and (bool(revs) or (others and junit is None and not work_tree_bytecode(facts)))
    ):
        # A newer run of part of the suite gives way to an older whole one of the same tree
        # (of an ended generation, another worktree's, a verdict remembered): a branch
        # tested, left, come back to and one file run again is still the branch tested. Any
        # run that stands for it here passed after the newest failure of the tree.
        base = facts._replace(others=(), primary=True)
        whole, _ = _vouched(checkout, base, pending, settings, failed)
        if all(t in whole or t.tree in remembered for t in pending):
            with contextlib.suppress(GenstampError):
                verified.remember(checkout.gitdir, [t.tree for t in whole])
            _adopt(checkout, [t for t in facts.targets if t not in whole], remembered)
            return _without_a_run(facts, nothing_to_test, {**vouching, **whole})
    # a run of the same tree that failed after the evidence did (in another worktree, or a
    # part refuted at its end: its acceptance is refuted, however many parts come after it;
    # E25 24) is the newer word on it
    later = [t for t in pending if failed.get(t.tree, -1) > ran_at]
    if verdict.ok and later:
        verdict = _refuted(verdict, later[0], failed, parts=bool(facts.others))
    elif {f.rule for f in verdict.failures} == {"no-evidence"}:
        # no evidence to judge, where a run of the tree failed (its own evidence unwritten: a
        # full disk): that failure is the word on the tree, and what to say (evidence that is
        # there and unbound, edited by hand, is refused as such)
        gone = [t for t in pending if t.tree in failed]
        if gone and verdict.failures:
            verdict = _refuted(verdict, gone[0], failed)
    if verdict.ok and others:
        # The verdict stands whether or not it can be kept (a read-only git dir, a store of
        # another genstamp version): a later push of this tree then needs fresh evidence. A
        # clean room's own gate (no ``others``) keeps none: its pass is the clean room's
        # record, weighed against the warm runs of the tree, never a verdict that outlives
        # their failure.
        with contextlib.suppress(GenstampError):
            verified.remember(checkout.gitdir, [t.tree for t in pending])
        _adopt(checkout, [t for t in facts.targets if t not in pending], remembered)
    return verdict


def _adopt(checkout: Checkout, targets: Iterable[Target], remembered: Mapping[str, Path]) -> None:
    """Every tree accepted is remembered in this checkout: one another worktree remembers too
    (its verdict stands here when that worktree is removed)."""
    with contextlib.suppress(GenstampError):
        verified.adopt(
            checkout.gitdir, {t.tree: remembered[t.tree] for t in targets if t.tree in remembered}
        )


def _without_a_run(
    facts: Facts, nothing_to_test: tuple[str, ...], vouching: Mapping[Target, Verdict]
) -> Verdict:
    """Acceptance of ``facts``' targets with no run of now to count: each has nothing to
    test, was accepted before, or a run of ``vouching`` (target -> its verdict) stands for it."""
    gen = facts.generation
    return Verdict(
        (),
        facts.evidence,
        gen.id if gen else None,
        None,
        facts.targets,
        None,
        nothing_to_test=nothing_to_test,
        vouched=tuple(t.tree for t in vouching),
        vouching=tuple(vouching.values()),
    )


def _mtime(path: Path) -> int | None:
    try:
        return path.stat().st_mtime_ns
    except OSError:
        return None


def _vouched(
    checkout: Checkout,
    base: Facts,
    targets: Sequence[Target],
    settings: config.Config,
    failed: Mapping[str, int],
) -> tuple[dict[Target, Verdict], dict[Target, Verdict]]:
    """The ``targets`` whose tree a run of a generation of this checkout (an earlier part of
    the current one, or one a hook ended), or of another worktree of the repository, vouches
    for, with that run's verdict: a run the gate accepts, run after the newest run of that
    tree that failed anywhere
    (``failed``, ``genstamp.refuted``). A newer run of part of the suite says nothing against
    an older whole one. For the targets none vouches for, the newest refused judgment (its
    reasons are the ones to tell)."""
    accepted: dict[Target, Verdict] = {}
    refused: dict[Target, Verdict] = {}
    if not targets:
        return accepted, refused
    for where in itertools.chain([checkout], other_worktrees(checkout)):
        mine = where is checkout
        try:
            facts = base if mine else workspace(where)
            for target in targets:
                if target in accepted:
                    continue
                # this checkout's current generation too, when its newest run is bound (a
                # push of several refs, one of them tested before the newest run tested
                # another: main, then feature); not when a run since could not be
                found = vouching(
                    where,
                    facts,
                    target,
                    settings.suites,
                    current=not mine or facts.report is not None,
                )
                if not mine:  # the clean rooms of the checkout that judges weigh too
                    found = ((when, [_with_rooms(p, base) for p in runs]) for when, runs in found)
                verdict = _newest_word(checkout, settings, target, found, failed)
                if verdict is not None and verdict.ok:
                    accepted[target] = verdict
                elif verdict is not None:
                    refused.setdefault(target, verdict)
        except GenstampError:
            continue  # another worktree's trouble is its own to say
        if len(accepted) == len(targets):
            break
    return accepted, {t: v for t, v in refused.items() if t not in accepted}


def _with_rooms(judged: Facts, here: Facts) -> Facts:
    """``judged`` (a run of another worktree) with the clean-room records of the checkout that
    judges it: a clean run of the tree there, failed or passed, is weighed as that worktree's
    own would be (the judging checkout's record of a tree first)."""
    if not here.clean_rooms and not here.clean_room_problems:
        return judged
    return judged._replace(
        clean_rooms={**judged.clean_rooms, **here.clean_rooms},
        clean_room_problems=tuple(
            dict.fromkeys([*here.clean_room_problems, *judged.clean_room_problems])
        ),
        clean_room_latest=here.clean_room_latest or judged.clean_room_latest,
    )


def _newest_word(
    checkout: Checkout,
    settings: config.Config,
    target: Target,
    found: Iterable[tuple[int, list[Facts]]],
    failed: Mapping[str, int],
) -> Verdict | None:
    """Of a worktree's runs of ``target``'s tree (newest first), the verdict that speaks for
    it: the first accepted, unless a run of that tree failed since; the first refused for any
    reason but covering part of the suite; None when no run of it is kept there."""
    held = as_committed(checkout, settings, target.tree)
    refusal: Verdict | None = None
    for when, judged in found:
        verdict = combine([decide(part, held) for part in judged])._replace(targets=(target,))
        if when <= failed.get(target.tree, -1):
            return _refuted(verdict, target, failed)
        if verdict.ok or {f.rule for f in verdict.failures} != {"partial-run"}:
            return verdict
        refusal = refusal or verdict  # part of the suite: an older whole run may stand
    return refusal


def _refuted(
    verdict: Verdict, target: Target, failed: Mapping[str, int], *, parts: bool = False
) -> Verdict:
    from genstamp.generation import _iso

    when = _iso(failed[target.tree])
    why = f"a later run of tree {target.tree[:12]} ({target.label}) failed, at {when}"
    if target.tree in getattr(failed, "unfinished", ()):  # (``refuted.unfinished``)
        why = (
            f"a later run of tree {target.tree[:12]} ({target.label}), begun at {when}, did "
            "not finish: its process ended before pytest's session did (killed by a timeout,"
            " crashed, or ended by os._exit in a test, a plugin or a conftest's session finish)"
        )
    if parts:  # a part run since the failure stands for its own tests only
        why += ": the parts run before it count for nothing (rerun them, or the whole suite)"
    return verdict._replace(failures=(Failure("tests-failed", why),))  # the word that counts


def settings_for(checkout: Checkout, revs: Sequence[str]) -> config.Config:
    """The work tree's settings; where commits alone are judged (a push, ``--rev``) and its
    ``pyproject.toml`` cannot be read (an edit under way, a merge stopped on a conflict in
    it), HEAD's as committed (each commit is judged as strictly as it holds them itself,
    ``as_committed``): an unfinished edit settles nothing for them."""
    try:
        return config.load(checkout.workdir)
    except GenstampError:
        if not revs:
            raise
        try:
            head = str(checkout.repo.head.peel(pygit2.Tree).id)
        except (pygit2.GitError, KeyError, ValueError):
            return config.Config()
        return committed_settings(checkout, head) or config.Config()


def as_committed(checkout: Checkout, settings: config.Config, tree_id: str) -> config.Config:
    """``settings`` (the work tree's) no more lenient than what the judged tree holds in its
    own ``pyproject.toml``: a local ``allow-partial`` the tree does not hold (uncommitted and
    pushed, hidden by ``--skip-worktree``, an untracked file) allows nothing for it, nor does
    a ``generated`` glob it does not declare (the ignored code it excuses is in no clone of
    that tree). A tree not in the object store keeps the work tree's."""
    held = committed_settings(checkout, tree_id)
    if held is None:
        return settings
    local = set(settings.declared) - set(held.declared)
    return settings._replace(
        allow_partial=settings.allow_partial and held.allow_partial,
        require_clean_room=settings.require_clean_room or held.require_clean_room,
        generated=tuple(g for g in settings.generated if g not in local),
        declared=tuple(g for g in settings.declared if g not in local),
    )


def combine(verdicts: Sequence[Verdict]) -> Verdict:
    """One verdict over the parts: the first's, with every part's failures (each part's own
    named by its file), each failure once."""
    first = verdicts[0]
    failures = list(first.failures)
    for verdict in verdicts[1:]:
        for failure in verdict.failures:
            if failure in first.failures:
                continue  # the same for every part (the stamp, say): said once
            message = failure.message
            if verdict.evidence not in message:
                message = f"in {verdict.evidence}: {message}"
            failures.append(Failure(failure.rule, message))
    order = {rule: i for i, rule in enumerate(RULES)}
    unique = sorted(dict.fromkeys(failures), key=lambda f: order[f.rule])
    return first._replace(failures=tuple(unique))
