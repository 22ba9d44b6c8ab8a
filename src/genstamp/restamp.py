"""Beginning a new generation in a workspace: scrub bytecode, take the tree identity, write
the stamp. What ``genstamp stamp`` does, and what the post-checkout, post-merge and
post-rewrite hooks do when content can have changed (``after_hook``)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pygit2

from genstamp import config, evidence, generation, statuscache
from genstamp.errors import GenstampError
from genstamp.identity import tracked_index, tree_identity
from genstamp.repo import Checkout, Place, head_id, nested_index, open_checkout
from genstamp.scrub import ScrubResult, scrub
from genstamp.typedtuple import NamedTuple


class Begun(NamedTuple):
    generation: generation.Generation
    scrub: ScrubResult | None  # None when not scrubbed


class AfterHook(NamedTuple):
    generation: generation.Generation
    scrub: ScrubResult
    kept: bool
    why: str


def begin(
    checkout: Checkout,
    *,
    trigger: str = "manual",
    do_scrub: bool = True,
    venvs: bool = False,
    why: str = "asked for",
    history: tuple[dict[str, str], ...] | None = None,
    retired: tuple[dict[str, Any], ...] = (),
) -> Begun:
    """Scrub (unless told not to), then write a new generation of the tree as it is then
    (carrying the ``retired`` generations whose evidence still vouches for its trees)."""
    generation.check_trigger(trigger)  # before anything is deleted
    statuscache.forget(checkout)  # a new generation's tree is computed whole, and kept anew
    if history is None:
        history = _history(checkout)
    # Before the identity is computed: the index still holds only what git tracks.
    result = (
        scrub(checkout.workdir, venvs=venvs, tracked=tracked_index(checkout), nested=nested_index)
        if do_scrub
        else None
    )
    gen = generation.new(
        checkout,
        tree=tree_identity(checkout),
        head=head_id(checkout.repo),
        trigger=trigger,
        scrub=result.summary() if result is not None else None,
        history=history,
        why=why,
        retired=retired,
    )
    generation.write(checkout, gen)
    return Begun(gen, result)


def after_hook(checkout: Checkout, trigger: str, *, venvs: bool = False) -> AfterHook:
    """After a checkout, merge or rewrite: keep the current generation when the work tree holds
    the content the generation began with, or the content its evidence tested; else begin a new
    one (scrubbed).

    Sound because a generation vouches for content only: the evidence names the tree it tested
    and the gate compares trees, never commits. A command that moved HEAD (``checkout -b``, a
    message-only ``commit --amend``, ``checkout -- <unchanged file>``, a no-op rebase) but left
    exactly that content in the work tree changed nothing the evidence speaks of, and bytecode
    written during the generation came from that same content, except where git rewrote a
    file: so the bytecode is scrubbed in full whether the generation is kept or not. This is
    the hook when the paths git wrote are not known (``genstamp.changed``): ``checkout --
    <file>`` restoring an edit whose bytecode was compiled in the same second, at the same
    size, would otherwise leave bytecode CPython takes for the restored source's. The rule reads
    what was recorded, not git's hook arguments, so it is the same under pre-commit (whose
    environment may lack them) and for every hook."""
    try:
        waiting = generation.stored(checkout)
        claim = waiting.pending if waiting is not None else None
        if waiting is not None and claim is not None and generation.changed_files(claim):
            # another command changed files and no reader settled its claim; this one may
            # have changed files too (which, git does not say): keeping cannot be proven
            # (`git switch --detach HEAD~1`, then `git checkout main -- data.txt`)
            return _began(
                checkout,
                trigger,
                venvs,
                "git changed files after another command's claim",
                waiting.history,
                generation.retiring(waiting, ended=generation.claim_ended(claim)),
            )
        gen = generation.current(checkout)
    except generation.NewerStamp:
        raise  # a later genstamp's: not this one's to end (``scrub_all``)
    except GenstampError as exc:
        gen, damaged = None, exc.message
    else:
        damaged = ""
    if gen is None:
        why = f"the stamp could not be read ({damaged})" if damaged else "there was none"
        return _began(checkout, trigger, venvs, why, (), ())
    tree = tree_identity(checkout)
    if tree == gen.tree:
        why = "the work tree is as the generation began"
    elif tree == _tested_tree(checkout, gen, tree):
        why = "the work tree is as it was tested"
    else:
        why = "the work tree changed"
        return _began(checkout, trigger, venvs, why, gen.history, generation.retiring(gen))
    result = scrub(
        checkout.workdir, venvs=venvs, tracked=tracked_index(checkout), nested=nested_index
    )
    return AfterHook(generation.kept(checkout, gen, trigger, why), result, True, why)


def scrub_all(checkout: Checkout, *, venvs: bool = False) -> ScrubResult:
    """The full scrub a hook does when it keeps or begins a generation, alone: what a hook does
    when the stamp is a later genstamp's, which it leaves as it is (the bytecode of what git
    changed is gone all the same)."""
    return scrub(
        checkout.workdir, venvs=venvs, tracked=tracked_index(checkout), nested=nested_index
    )


def _began(
    checkout: Checkout,
    trigger: str,
    venvs: bool,
    why: str,
    history: tuple[dict[str, str], ...],
    retired: tuple[dict[str, Any], ...],
) -> AfterHook:
    gen, result = begin(
        checkout, trigger=trigger, venvs=venvs, why=why, history=history, retired=retired
    )
    assert result is not None  # begun with a scrub
    return AfterHook(gen, result, False, why)


def settle(where: Checkout | Place, measured: str | None = None) -> generation.Generation | None:
    """The current generation with a hook's claim settled (``generation.settled``) by one walk
    of the work tree (``measured``: the identity the caller has just taken, so no second
    walk), and written back unless another writer changed the stamp meanwhile (then that stamp
    is settled instead, by a walk of its own)."""
    checkout = where if isinstance(where, Checkout) else open_checkout(where.workdir)
    while True:
        gen, raw = generation.read(checkout)
        if gen is None or gen.pending is None:
            return gen
        tree = measured if measured is not None else tree_identity(checkout)
        measured = None  # good for the stamp it was taken against only
        tested = _tested_tree(checkout, gen, tree)
        tree = _as_at_the_hook(checkout, gen, tree, tested)
        done = generation.settled(gen, tree, tested, head_id(checkout.repo))
        if generation.read(checkout)[1] == raw:
            generation.write(checkout, done)
            return done


def _as_at_the_hook(
    checkout: Checkout, gen: generation.Generation, tree: str, tested: str | None
) -> str:
    """The work tree as the claim's hook left it, as far as the reader can tell: ``tree``,
    or the tree the claim keeps on (the generation's, or the one its evidence tested) when
    every path where ``tree`` differs from it is a file changed after the hook (an edit made
    before the first reader, after a `git checkout -b` that changed nothing: the hook's own
    full rule, on the work tree it found, kept the generation). Such a file's change time is
    past the hook's; git's own writes precede it."""
    claim = gen.pending
    if claim is None or not claim["may_keep"] or tree in (gen.tree, tested):
        return tree
    if claim.get("changed"):
        return tree  # git's command wrote files too: a path it wrote and an edit rewrote since
        # (`git am` after a branch switch) would pass for one the edit alone changed
    since = claim["next"]["created_ns"]
    for kept in dict.fromkeys(t for t in (gen.tree, tested) if t):
        try:
            paths = _differing(checkout.repo, kept, tree)
        except (KeyError, ValueError, pygit2.GitError):
            continue
        if paths and all(_changed_after(checkout.workdir / p, since) for p in paths):
            return kept
    return tree


def _differing(repo: pygit2.Repository, old: str, new: str) -> list[str]:
    """The paths where the trees ``old`` and ``new`` differ (both sides)."""
    diff = repo[old].peel(pygit2.Tree).diff_to_tree(repo[new].peel(pygit2.Tree))
    out: set[str] = set()
    for delta in diff.deltas:
        out.update(p for p in (delta.old_file.path, delta.new_file.path) if p)
    return sorted(out)


def _changed_after(path: Path, since_ns: int) -> bool:
    """Whether the file at ``path`` changed after ``since_ns`` (its change time is later); a
    file that is gone cannot tell when it went (its folder's time moves with any entry)."""
    try:
        return os.lstat(path).st_ctime_ns > since_ns
    except OSError:
        return False


def _history(checkout: Checkout) -> tuple[dict[str, str], ...]:
    """The history to carry into a new generation; none from a stamp that cannot be read."""
    try:
        gen = generation.stored(checkout)
    except GenstampError:
        return ()
    return gen.history if gen is not None else ()


def _tested_tree(checkout: Checkout, gen: generation.Generation, tree: str) -> str | None:
    """The tree the current generation's evidence tested: ``tree`` where a run of this
    generation tested it, as the gate compares trees (the newest run, its own ``--junitxml``
    in the work tree left out: every run rewrites it; or a part kept for that very tree: a
    split run's first part, then a quick look at an edit, undone), else the newest run's
    tree; None when there is no readable evidence of this generation."""
    try:
        path = evidence.location(checkout, config.load(checkout.workdir).evidence)
        props = evidence.read_report(path).properties
    except (GenstampError, OSError):
        props = {}
    newest = props.get(evidence.P_TREE_END) if props.get(evidence.P_GENERATION) == gen.id else None
    if newest == tree:
        return tree
    if newest is not None:
        from genstamp.facts import same_tested

        if same_tested(checkout, newest, tree, props):
            return tree
    if any(_a_part_of(part, gen.id, tree) for part in _parts_named(checkout, gen, tree)):
        return tree
    return newest


def _parts_named(checkout: Checkout, gen: generation.Generation, tree: str) -> list[Path]:
    """The generation's kept parts whose names say they tested ``tree``."""
    from genstamp import parts

    return [p for p in parts.listing(checkout.state, gen.id) if p.name.startswith(f"{tree[:16]}.")]


def _a_part_of(path: Path, generation_id: str, tree: str) -> bool:
    """Whether the kept part at ``path`` is bound evidence of this generation that tested
    ``tree``."""
    from genstamp.rules import binding_problem

    try:
        report = evidence.read_report(path)
    except (GenstampError, OSError):
        return False
    props = report.properties
    return (
        props.get(evidence.P_GENERATION) == generation_id
        and props.get(evidence.P_TREE_END) == tree
        and not binding_problem(report)
    )
