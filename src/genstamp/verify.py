"""The gate: gather the facts (``genstamp.facts``), then decide (``genstamp.rules``)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from genstamp import config, evidence
from genstamp.facts import gather_parts, rev_tree
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
    junit: Path | Sequence[Path] | None = None,
    revs: Sequence[str] = (),
    labels: Mapping[str, str] | None = None,
    settings: config.Config | None = None,
) -> Verdict:
    """Judge the evidence against the work tree, or against each of ``revs`` (commits, shown
    as ``labels[rev]`` when given: the refs a push names)."""
    if settings is None:
        settings = config.load(checkout.workdir)
    if junit is None:
        paths = [evidence.location(checkout, settings.evidence)]
    else:
        paths = [junit] if isinstance(junit, Path) else list(junit)
    judged = gather_parts(checkout, paths, revs, labels, suites=settings.suites, kept=junit is None)
    verdicts = [decide(facts, settings) for facts in judged]
    return combine(verdicts)


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
