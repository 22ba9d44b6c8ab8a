"""``genstamp summary``: markdown for ``$GITHUB_STEP_SUMMARY`` or a pull-request comment that
states only what the gate verified from the attestations, and quotes their evidence digests
(so ``genstamp verify --summary`` can check it against them: rule ``summary-unverified``)."""

from __future__ import annotations

from collections.abc import Sequence

from genstamp.rules import Attested, Verdict, summary_figures

VERSION = 1


def render(verdict: Verdict, attested: Sequence[Attested]) -> str:
    """The summary of an accepted verdict on one commit."""
    merge = verdict.merge
    target = verdict.targets[0]
    lines = [
        "## genstamp: verified",
        "",
        f"- `{target.label}`: tree `{target.tree}`",
    ]
    if merge is not None:
        f = summary_figures(merge)
        counts = f"{f['passed']} passed, {f['failed']} failed, {f['skipped']} skipped"
        if f["xfailed"] or f["xpassed"]:
            counts += f", {f['xfailed']} xfailed, {f['xpassed']} xpassed"
        whole = (
            "the whole suite"
            if merge.complete and not verdict.partial
            else ("part of the suite (accepted as partial: allow-partial)")
        )
        tests, parts = _counted(f["test"], "test"), _counted(f["part"], "part")
        lines.append(f"- {tests}: {counts}; {whole}, {parts}")
    lines += ["- attestations (sha256 of the evidence):"]
    lines += [f"  - `{a.digest}` commit `{a.commit}`" for a in attested]
    lines += ["", f"<!-- genstamp-summary version {VERSION} -->", ""]
    return "\n".join(lines)


def _counted(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"
