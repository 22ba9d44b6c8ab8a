"""The gate: gather the facts (``genstamp.facts``), then decide (``genstamp.rules``)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from genstamp import config, evidence
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
    as ``labels[rev]`` when given: the refs a push names)."""
    if settings is None:
        settings = config.load(checkout.workdir)
    path = evidence.location(checkout, settings.evidence) if junit is None else junit
    return decide(gather(checkout, path, revs, labels), settings)
