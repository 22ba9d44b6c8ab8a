"""The gate: gather the facts (``genstamp.facts``), then decide (``genstamp.rules``); trees it
accepted are remembered (``genstamp.verified``) and accepted again without evidence."""

from __future__ import annotations

import contextlib
from collections.abc import Mapping, Sequence
from pathlib import Path

from genstamp import config, evidence, verified
from genstamp.errors import GenstampError
from genstamp.facts import gather, rev_tree
from genstamp.repo import Checkout
from genstamp.rules import (
    FLAG_LIMIT,
    LABEL_LIMIT,
    PATH_LIMIT,
    RULES,
    TREE_LIMIT,
    Failure,
    Target,
    Verdict,
    decide,
    fresh_tree,
    printable,
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


def verify(
    checkout: Checkout,
    *,
    junit: Path | None = None,
    revs: Sequence[str] = (),
    labels: Mapping[str, str] | None = None,
    settings: config.Config | None = None,
) -> Verdict:
    """Judge the evidence against the work tree, or against each of ``revs`` (commits, shown
    as ``labels[rev]`` when given: the refs a push names). A commit whose tree the gate accepted
    before in this checkout is accepted again (unless evidence of this generation tested that
    tree since); every tree it accepts now is remembered."""
    if settings is None:
        settings = config.load(checkout.workdir)
    path = evidence.location(checkout, settings.evidence) if junit is None else junit
    facts = gather(checkout, path, revs, labels)
    # Commits (a push, --rev) may be vouched for by an earlier verdict on their tree; the work
    # tree is judged by the evidence of now, so its bytecode and stamp are checked as they are.
    remembered = verified.trees(checkout.gitdir) if revs else {}
    # Evidence of this generation on a target's very tree is the newest verdict on it: a run
    # that fails now is not outvoted by an older acceptance.
    fresh = fresh_tree(facts)
    pending = tuple(
        t
        for t in facts.targets
        if t.tree not in remembered or facts.views.get(t.tree, t.tree) == fresh
    )
    if not pending:
        gen = facts.generation
        return Verdict((), facts.evidence, gen.id if gen else None, None, facts.targets, None)
    verdict = decide(facts._replace(targets=pending), settings)._replace(targets=facts.targets)
    if verdict.ok:
        # The verdict stands whether or not it can be kept (a read-only git dir, a store of
        # another genstamp version): a later push of this tree then needs fresh evidence.
        with contextlib.suppress(GenstampError):
            verified.remember(checkout.gitdir, [t.tree for t in pending])
    return verdict
