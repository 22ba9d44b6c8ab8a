"""What the gate will say of a run's evidence, told at the end of the run (pytest's terminal
summary), so that the user learns it at test time rather than at push time.

Pure: a forecast from what the plugin knows when it binds the evidence. The gate itself
(``genstamp verify``) still decides, on the tree as it is then: this says what it will find
in the evidence, not what the work tree may do later.
"""

from __future__ import annotations

import os
from collections.abc import Sequence

from genstamp import audit, paths
from genstamp.typedtuple import NamedTuple

PREFIX = "genstamp gate:"
MOST = 3  # items named in one line before a count
WIDTH = 300  # characters of one line at most


class Run(NamedTuple):
    generation: str | None  # the generation id the evidence carries, None when there was none
    tree_start: str
    tree_end: str
    reasons: tuple[str, ...]  # why the run covered part of what it collected
    flags: tuple[audit.Flag, ...]  # the audit's flags
    failed: bool  # a test failed or errored
    ignored: tuple[str, ...] = ()  # loaded files of the work tree git ignores (not generated)
    # Whether the tree changed while the tests ran, as the gate judges it (the run's own report
    # in the work tree left out of both trees); None: whether the two trees differ.
    moved: bool | None = None
    # Loaded files in a repository the tree records without a .gitmodules URL: (path, gitlink).
    unregistered: tuple[tuple[str, str], ...] = ()
    differ: tuple[str, ...] = ()  # files the tests loaded as the tree at the end does not hold
    # folders the tests imported namespace packages from that hold no file git does not ignore
    namespaces: tuple[str, ...] = ()
    empty: tuple[str, ...] = ()  # folders the tests used that held no file (not ignored)
    executed: int | None = None  # tests that ran (passed, failed or errored); None: unknown
    # files the tests used whose change the index hides from git: (path, option)
    hidden: tuple[tuple[str, str], ...] = ()
    dirty: tuple[str, ...] = ()  # submodules whose work tree holds changes
    allow_partial: bool = False  # the project's ``allow-partial``: a partial run is accepted
    # the stamp at the end: "" as at the start, None when there is none (or it is unreadable),
    # else the id of the generation begun while the tests ran
    stamp_end: str | None = ""
    stamp_problem: str = ""  # why the stamp could not be read at the start ("": it could)
    config_problem: str = ""  # why the project's [tool.genstamp] could not be read ("": it could)


# The audit's flag kinds, as the rule that refuses them.
_RULE = {
    audit.FOREIGN: "foreign-origin",
    audit.STALE: "stale-bytecode",
    audit.SOURCELESS: "stale-bytecode",
    audit.STALE_EXT: "stale-extension",
    audit.MODE: "loaded-not-tested",
}


def lines(run: Run) -> list[str]:
    """One line when the gate will accept, else one line per reason it will refuse."""
    refusals: list[str] = []
    if run.config_problem:  # the gate stops on it before any rule (`genstamp verify` exits 2)
        refusals.append(f"the configuration cannot be read: {run.config_problem} — fix it")
    if run.generation is None and run.stamp_problem:
        refusals.append(
            f"no-stamp: {run.stamp_problem} — run `genstamp stamp` (it scrubs bytecode), "
            "then rerun the tests"
        )
    elif run.generation is None:
        refusals.append(
            "no-stamp: no generation was begun in this checkout — run `genstamp install` "
            "(or `genstamp stamp`), then rerun the tests"
        )
    elif run.stamp_end is None:
        refusals.append(
            "no-stamp: the generation stamp is gone (or unreadable) since the tests began — "
            "run `genstamp stamp` (it scrubs bytecode), then rerun the tests"
        )
    elif run.stamp_end:
        refusals.append(
            f"stale-generation: generation {run.stamp_end[:12]} began while the tests ran "
            f"(the evidence is bound to {run.generation[:12]}) — rerun the tests"
        )
    if run.failed:
        refusals.append("tests-failed: fix the failing tests, then rerun")
    if run.tree_start != run.tree_end if run.moved is None else run.moved:
        refusals.append(
            "tree-moved: the tree changed while the tests ran — keep it still (a file the run "
            "writes there, such as coverage's .coverage, belongs in .gitignore; a tracked file "
            "it rewrites, a snapshot updated, in a commit), then rerun"
        )
    if run.differ:
        refusals.append(
            f"loaded-not-tested: {named(list(run.differ))} (the tests loaded bytes the tested "
            "tree does not hold: a file changed and changed back while they ran, an edit git "
            "does not see (`--skip-worktree`, a filter's clean side), or code compiled under "
            "its name from other text)"
        )
    if run.namespaces:
        refusals.append(
            f"loaded-not-tested: {named(list(run.namespaces))} (the tests imported namespace "
            "packages from folders that hold no file but what git ignores, which no tree "
            "holds: the bytecode of a package removed where no hook scrubbed it, which "
            "`genstamp stamp` removes, or a log)"
        )
    by_rule: dict[str, list[str]] = {}
    for flag in run.flags:
        rule = _RULE.get(flag.kind)
        # As the gate: a file of an environment inside the work tree is the installer's; a
        # flag on a file outside it (an installed copy of the checkout's own code) is not.
        in_env = not os.path.isabs(flag.path) and paths.installed(flag.path)
        if rule is not None and not (rule != "foreign-origin" and in_env):
            shown = f"{flag.path} ({flag.detail})" if flag.kind == audit.MODE else None
            by_rule.setdefault(rule, []).append(shown or f"{flag.module} ({flag.path})")
    for rule, found in by_rule.items():
        refusals.append(f"{rule}: {named(found)}")
    if run.ignored:
        refusals.append(
            f"ignored-code: {named(list(run.ignored))} (git ignores them: a clean clone does "
            "not have them)"
        )
    if run.empty:
        refusals.append(
            f"empty-folder: {named(list(run.empty))} (they held no file when the tests used "
            "them: git keeps no empty folder, so a clean clone has none)"
        )
    if run.dirty:
        refusals.append(
            f"dirty-submodule: {named(list(run.dirty))} (changes the commit recorded for it "
            "does not hold: commit inside it and `git add` it here, or stash them)"
        )
    if run.hidden:
        refusals.append(
            f"hidden-change: {named([f'{path} ({option})' for path, option in run.hidden])} "
            "(the tests used a change the tree leaves out: one the index tells git not to look "
            "at, lift the flag with `git update-index --no-skip-worktree PATH`, or "
            "`--no-assume-unchanged`, one at a time: given both, git lifts --assume-unchanged "
            "alone; one written through another link, break the link, then rerun)"
        )
    if run.unregistered:
        links = sorted({link for _, link in run.unregistered})
        refusals.append(
            f"unregistered-submodule: {named([path for path, _ in run.unregistered])} (in "
            f"{named(links)}, which .gitmodules gives no URL: a clean clone cannot fetch it)"
        )
    # (a collection error counts as run, as the gate counts it)
    if run.executed == 0 and not run.failed:
        refusals.append(
            "no-tests, unless other parts of this generation ran tests: no test executed (none "
            "collected, or every one skipped) — run the suite so that tests execute"
        )
    if run.reasons and not run.allow_partial:
        refusals.append(
            f"partial-run, unless other parts of this generation cover the suite: "
            f"{named(list(run.reasons))}"
        )
    if not refusals:
        bound = f"{PREFIX} bound to tree {run.tree_end[:12]}, generation {str(run.generation)[:12]}"
        if run.reasons:  # allow-partial: accepted as what it is
            return [
                _bounded(
                    f"{bound}: every collected test ran and passed; `genstamp verify` accepts "
                    f"it as a PARTIAL run (allow-partial) while the tree stays as tested: "
                    f"{named(list(run.reasons))}"
                )
            ]
        return [
            f"{bound}: every collected test ran and passed; `genstamp verify` accepts it while "
            "the tree stays as tested and the run covers the suite"
        ]
    return [_bounded(f"{PREFIX} will refuse: {paths.printable(refusal)}") for refusal in refusals]


def named(items: Sequence[str]) -> str:
    shown = ", ".join(items[:MOST])
    more = len(items) - MOST
    return f"{shown} and {more} more" if more > 0 else shown


def _bounded(line: str) -> str:
    return line if len(line) <= WIDTH else line[: WIDTH - 3] + "..."
