"""The gate: every rule is a hard stop with a stable name."""

from __future__ import annotations

import hmac
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, NamedTuple

import pygit2

from genstamp import __version__, audit, config, evidence, generation
from genstamp.errors import GenstampError
from genstamp.identity import scan
from genstamp.repo import Checkout

RULES = (
    "no-stamp",
    "no-evidence",
    "unbound-evidence",
    "stale-generation",
    "tree-mismatch",
    "tree-moved",
    "stale-bytecode",
    "foreign-origin",
    "tests-failed",
    "no-tests",
    "partial-run",
)
PATH_LIMIT = 10  # differing paths named before giving a count
FLAG_LIMIT = 10
TREE_LIMIT = 3  # mismatching trees given a line (and a diff) each before one line for the rest
LABEL_LIMIT = 3  # labels (revs, refs) named per tree

_REMEDY = {
    "no-stamp": "run `genstamp stamp` (it scrubs bytecode), then rerun the tests",
    "no-evidence": "run the full test suite with genstamp installed (pytest), or `genstamp run`",
    "unbound-evidence": "rerun the tests with genstamp installed; do not edit the JUnit file",
    "stale-generation": "rerun the tests in this checkout's current generation",
    "tree-mismatch": "rerun the tests on exactly the tree you are judging (commit, then test)",
    "tree-moved": "keep the tree still while tests run (a test wrote into it?), then rerun",
    "stale-bytecode": "run `genstamp stamp` to scrub bytecode, then rerun the tests",
    "foreign-origin": "install this checkout (pip install -e .) or fix sys.path, then rerun",
    "tests-failed": "fix the failing tests, then rerun",
    "no-tests": "run the suite so that tests execute",
    "partial-run": "rerun the whole suite (no -k, -m, node ids, --lf, -x), "
    "or set allow-partial in [tool.genstamp]",
}


def remedy_for(rule: str) -> str:
    return _REMEDY[rule]


class Failure(NamedTuple):
    rule: str
    message: str

    @property
    def remedy(self) -> str:
        return _REMEDY[self.rule]

    def line(self) -> str:
        return f"{self.rule}: {self.message} — {self.remedy}"


class Target(NamedTuple):
    label: str  # "work tree", or the rev as given
    tree: str


class Verdict(NamedTuple):
    failures: tuple[Failure, ...]
    evidence: str
    generation: str | None
    tested_tree: str | None
    targets: tuple[Target, ...]
    counts: evidence.Counts | None

    @property
    def ok(self) -> bool:
        return not self.failures

    def to_json(self) -> dict[str, Any]:
        return {
            "ok": self.ok,
            "failures": [
                {"rule": f.rule, "message": f.message, "remedy": f.remedy} for f in self.failures
            ],
            "evidence": self.evidence,
            "generation": self.generation,
            "tested_tree": self.tested_tree,
            "targets": [{"label": t.label, "tree": t.tree} for t in self.targets],
            "tests": self.counts._asdict() if self.counts else None,
        }


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
    failures: list[Failure] = []

    def fail(rule: str, message: str) -> None:
        failures.append(Failure(rule, printable(message)))

    targets = tuple(rev_tree(checkout, r, (labels or {}).get(r)) for r in revs)
    # One walk of the work tree: its identity (when it is the target) and where bytecode lives.
    walk = scan(checkout, want_tree=not targets, want_bytecode=True)
    if not targets:
        assert walk.tree is not None
        targets = (Target("work tree", walk.tree),)

    gen: generation.Generation | None = None
    try:
        gen = generation.current(checkout)
        if gen is None:
            fail("no-stamp", f"no generation stamp at {generation.stamp_path(checkout)}")
    except GenstampError as exc:
        fail("no-stamp", exc.message)

    path = evidence.location(checkout, settings.evidence) if junit is None else junit

    def done(tested: str | None, counts: evidence.Counts | None) -> Verdict:
        ordered = sorted(failures, key=lambda f: RULES.index(f.rule))
        return Verdict(tuple(ordered), str(path), gen.id if gen else None, tested, targets, counts)

    try:
        report = evidence.read_report(path)
    except FileNotFoundError:
        fail("no-evidence", f"no JUnit file at {path}")
        return done(None, None)
    except GenstampError as exc:
        fail("unbound-evidence", exc.message)
        return done(None, None)

    props = report.properties
    tested = props.get(evidence.P_TREE_END)
    _check_binding(fail, props, path)
    if any(f.rule == "unbound-evidence" for f in failures):
        return done(None, report.counts)
    assert tested is not None

    # Generation: the primary binding. The file's mtime is only a hint (clocks move backwards).
    if gen is not None:
        ev_gen = props.get(evidence.P_GENERATION, evidence.NONE)
        if ev_gen != gen.id:
            where = props.get(evidence.P_CHECKOUT, "")
            origin = "" if where == str(checkout.gitdir) else f", in another checkout ({where})"
            hint = ""
            try:
                if path.stat().st_mtime_ns < gen.created_ns:
                    hint = "; the file also predates the stamp"
            except OSError:
                pass
            fail(
                "stale-generation",
                f"the evidence is from generation {ev_gen[:12]}{origin}, the current one is "
                f"{gen.id[:12]} (begun {gen.created} by {gen.trigger}){hint}",
            )
        elif props.get(evidence.P_CHECKOUT) != str(checkout.gitdir):
            # The same generation id elsewhere: a copied (cp -r) checkout carries its stamp and
            # evidence along, but not the environment the tests ran in.
            fail(
                "stale-generation",
                f"the evidence was recorded in another checkout "
                f"({props.get(evidence.P_CHECKOUT)}), not {checkout.gitdir}",
            )
        elif not hmac.compare_digest(
            evidence.seal(gen.key, props, report).encode(),
            props.get(evidence.P_SEAL, "").encode("utf-8", "surrogateescape"),
        ):
            fail(
                "unbound-evidence",
                f"{path} was changed after the run: its seal does not match its contents",
            )

    repo = checkout.repo
    for message in _mismatches(repo, tested, targets):
        fail("tree-mismatch", message)
    start = props.get(evidence.P_TREE_START)
    if start != tested:
        fail(
            "tree-moved",
            f"the tree changed while the tests ran ({str(start)[:12]} -> {tested[:12]}): "
            f"{_differing_paths(repo, str(start), tested)}",
        )

    loaded_audit, unreadable = _audit(props)
    if unreadable:
        fail("unbound-evidence", f"{path}: {unreadable}")
    bytecode = _stale_bytecode(checkout, walk.bytecode, gen)
    if loaded_audit is not None:
        bytecode += [
            f"{f.module} ({f.path}: {f.detail})"
            for f in loaded_audit.flags
            if f.kind in (audit.STALE, audit.SOURCELESS)
        ]
        moved = _loaded_not_tested(repo, tested, loaded_audit)
        if moved:
            fail("tree-moved", f"code loaded by the tests differs from the tested tree: {moved}")
    if bytecode:
        fail("stale-bytecode", _limit(bytecode, FLAG_LIMIT))
    if loaded_audit is not None:
        foreign = [
            f"{f.module} from {f.path}" for f in loaded_audit.flags if f.kind == audit.FOREIGN
        ]
        if foreign:
            fail("foreign-origin", _limit(foreign, FLAG_LIMIT))

    counts = report.counts
    if counts.failed or counts.errors:
        fail("tests-failed", f"{counts.failed} failed, {counts.errors} errors in {counts.tests}")
    if counts.passed + counts.failed + counts.errors == 0:
        fail("no-tests", f"no test executed ({counts.skipped} skipped)")
    if props.get(evidence.P_SELECTION) != "full" and not settings.allow_partial:
        reasons = props.get(evidence.P_SELECTION_REASONS) or "not recorded"
        fail("partial-run", f"the run covered part of the suite: {reasons}")

    return done(tested, counts)


def _check_binding(fail: Any, props: dict[str, str], path: Path) -> None:
    if not props:
        fail("unbound-evidence", f"{path} carries no genstamp binding (no genstamp.* properties)")
        return
    fmt = props.get(evidence.P_FORMAT)
    if fmt != evidence.FORMAT:
        fail(
            "unbound-evidence",
            f"{path} is evidence format {fmt!r} written by genstamp "
            f"{props.get(evidence.P_VERSION, '?')}; this genstamp {__version__} reads format "
            f"{evidence.FORMAT} (use one genstamp version in pre-commit and the test env)",
        )
        return
    missing = [
        name
        for name in (evidence.P_GENERATION, evidence.P_TREE_START, evidence.P_TREE_END,
                     evidence.P_SELECTION, evidence.P_SEAL)
        if not props.get(name)
    ]  # fmt: skip
    if missing:
        fail("unbound-evidence", f"{path} lacks the properties {', '.join(missing)}")


def _mismatches(repo: pygit2.Repository, tested: str, targets: Sequence[Target]) -> list[str]:
    """One message per tree that is not the tested one, naming its targets; a push of thousands
    of refs gets a few lines (and a few diffs), then one line counting the rest."""
    trees: dict[str, list[str]] = {}
    for target in targets:
        if target.tree != tested:
            trees.setdefault(target.tree, []).append(target.label)
    messages = []
    for tree, labels in list(trees.items())[:TREE_LIMIT]:
        verb = "is" if len(labels) == 1 else "are"
        messages.append(
            f"the tests ran on tree {tested[:12]}, {_limit(labels, LABEL_LIMIT)} {verb} tree "
            f"{tree[:12]}: {_differing_paths(repo, tested, tree)}"
        )
    rest = list(trees.values())[TREE_LIMIT:]
    if rest:
        count = sum(len(labels) for labels in rest)
        messages.append(
            f"and {count} more on {len(rest)} other {'tree' if len(rest) == 1 else 'trees'}, "
            f"none of them tree {tested[:12]}: "
            f"{_limit([labels[0] for labels in rest], LABEL_LIMIT)}"
        )
    return messages


def _audit(props: dict[str, str]) -> tuple[audit.Audit | None, str]:
    """The loaded-code audit, or None when the runner had none; and why it cannot be read."""
    text = props.get(evidence.P_AUDIT, "")
    if text == "unavailable":
        return None, ""
    try:
        return audit.from_json(text), ""
    # A hand-edited or newer audit must not crash the gate, nor be skipped in silence: wrong
    # shapes, integers over Python's digit limit, arrays nested past the stack, other versions.
    except (ValueError, KeyError, TypeError, AttributeError, RecursionError) as exc:
        return None, (
            f"its genstamp.audit cannot be read ({str(exc)[:100]}); this genstamp "
            f"{__version__} reads audit format {audit.AUDIT_VERSION}"
        )


def _stale_bytecode(
    checkout: Checkout, found: Sequence[str], gen: generation.Generation | None
) -> list[str]:
    """Bytecode in the work tree older than the generation, and sourceless legacy .pyc files."""
    out: list[str] = []
    root = checkout.workdir
    for rel in found:
        full = root / rel
        if full.name == "__pycache__":
            try:
                with os.scandir(full) as it:
                    entries = [(e.name, e.stat(follow_symlinks=False).st_mtime_ns) for e in it]
            except OSError:
                continue
            for name, mtime in entries:
                if gen is not None and mtime < gen.created_ns:
                    out.append(f"{rel}/{name} is older than the generation")
        else:
            try:
                mtime = full.lstat().st_mtime_ns
            except OSError:
                continue
            if "__pycache__" not in full.parts and not full.with_suffix(".py").exists():
                out.append(f"{rel} is sourceless bytecode (no {full.with_suffix('.py').name})")
            elif gen is not None and mtime < gen.created_ns:
                out.append(f"{rel} is older than the generation")
    return out


def _loaded_not_tested(repo: pygit2.Repository, tested: str, loaded: audit.Audit) -> str:
    tree = _tree(repo, tested)
    if tree is None:
        return ""
    differ = []
    for rel, blob in loaded.loaded.items():
        try:
            entry = tree[rel]
        except KeyError:
            continue  # an ignored file: not part of any tree
        if str(entry.id) != blob:
            differ.append(rel)
    return _limit(differ, PATH_LIMIT) if differ else ""


def _tree(repo: pygit2.Repository, tree_id: str) -> pygit2.Tree | None:
    try:
        obj = repo.get(tree_id)
    except (ValueError, pygit2.GitError):
        return None
    return obj if isinstance(obj, pygit2.Tree) else None


def _differing_paths(repo: pygit2.Repository, a: str, b: str) -> str:
    ta, tb = _tree(repo, a), _tree(repo, b)
    if ta is None or tb is None:
        return "the tested tree is no longer in the object store, so the paths cannot be named"
    diff = ta.diff_to_tree(tb)
    paths = []
    for delta in diff.deltas:
        old, new = delta.old_file.path, delta.new_file.path
        paths.append(old if old == new else f"{old} -> {new}")
    return "differs in " + _limit(paths, PATH_LIMIT) if paths else "no paths differ"


def printable(text: str) -> str:
    """Text any output can carry on one line: bytes of a file or ref name that are not UTF-8
    (which pygit2 and os hand over surrogate-escaped) become ``\\xNN`` instead of failing a
    print, and control characters (a newline in a file name) become escapes, so that a name
    cannot split one line of output into two."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        text = text.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
    if any(c < " " or c == "\x7f" for c in text):
        text = "".join(repr(c)[1:-1] if c < " " or c == "\x7f" else c for c in text)
    return text


def _limit(items: Sequence[str], limit: int) -> str:
    shown = ", ".join(items[:limit])
    more = len(items) - limit
    return f"{shown} and {more} more" if more > 0 else shown
