"""The gate's facts: everything ``genstamp.rules.decide`` looks at, gathered in one place.

Here are the stamp, the report, the trees, the revs and the bytecode on disk; the rules read
none of them themselves, so that they can be tested over records in milliseconds.
"""

from __future__ import annotations

import contextlib
import io
import os
import posixpath
import re
import subprocess
import zipfile
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path

import pygit2
from pygit2.enums import FileMode

from genstamp import (
    audit,
    binding,
    checkout_id,
    cleanrecord,
    config,
    coverage,
    evidence,
    generation,
    parts,
    submodules,
    suite,
)
from genstamp.bytecode import PYCACHE, holds_bytecode, is_bytecode_file
from genstamp.errors import GenstampError
from genstamp.identity import (
    ALONE,
    SHARED,
    added_blobs,
    clone_conversions,
    hidden_changes,
    private_attribute,
    scan,
    sparse_left_out,
)
from genstamp.paths import inside
from genstamp.placed import installed, placement
from genstamp.repo import Checkout
from genstamp.rules import (
    WORK_TREE,
    Bytecode,
    Facts,
    Submodule,
    Target,
    binding_problem,
    diff_pairs,
    merged,
    output_path,
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
    return with_report(workspace(checkout, revs, labels), checkout, evidence_path, suites)


def workspace(
    checkout: Checkout, revs: Sequence[str] = (), labels: Mapping[str, str] | None = None
) -> Facts:
    """The facts of the checkout itself, the same whatever evidence is judged: the targets,
    the stamp, the bytecode on disk, the submodules (one walk of the work tree)."""
    targets = tuple(rev_tree(checkout, r, (labels or {}).get(r)) for r in revs)
    # One walk of the work tree: its identity (when it is the target) and where bytecode lives.
    # The tree from the record kept in the git dir when it still holds (idcache).
    # A hook's claim on the stamp is settled by the work tree's identity: this same walk.
    try:
        stored = generation.stored(checkout)
    except GenstampError:
        stored = None  # said below, by current()
    claimed = stored is not None and stored.pending is not None
    walk = scan(checkout, want_tree=claimed or not targets, want_bytecode=True, cache=True)
    if not targets:
        assert walk.tree is not None
        targets = (Target(WORK_TREE, walk.tree),)

    gen: generation.Generation | None = None
    stamp_problem = ""
    try:
        gen = generation.current(checkout, walk.tree)
    except GenstampError as exc:
        stamp_problem = exc.message

    venvs: dict[str, bool] = {}
    return Facts(
        gitdir=str(checkout.gitdir),
        workdir=str(checkout.workdir),
        stamp_path=str(generation.stamp_path(checkout)),
        generation=gen,
        stamp_problem=stamp_problem,
        evidence="",
        report=None,
        unreadable="",
        report_mtime_ns=None,
        targets=targets,
        diffs={},
        tested_blobs=None,
        bytecode=bytecode_listing(
            checkout.workdir,
            [rel for rel in walk.bytecode if not installed(checkout.workdir, rel, venvs)],
        ),
        submodules=dirty_submodules(checkout),
        checkout_id=checkout_id.current(checkout.gitdir),
    )


def with_report(
    base: Facts, checkout: Checkout, evidence_path: Path, suites: Sequence[str] = ()
) -> Facts:
    """``base`` (the checkout's facts) with those of the evidence at ``evidence_path``."""
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
    targets = base.targets
    diffs: dict[tuple[str, str], tuple[str, ...] | None] = {}
    only_in_a: dict[tuple[str, str], frozenset[str]] = {}
    tracked: frozenset[str] = frozenset()
    rewritten: frozenset[str] = frozenset()
    gone: frozenset[str] = frozenset()
    blobs: dict[str, str] | None = None
    added: dict[tuple[str, str], str | None] = {}
    placed: dict[str, str] = {}
    unregistered: dict[str, str] = {}
    views: dict[str, str] = {}
    venvs: dict[str, bool] = {}
    suites_found: tuple[suite.Suite, ...] | None = None
    sparse_out: set[str] = set()
    # A report that does not bind is judged on that alone: its trees are not looked at.
    if report is not None and not binding_problem(report):
        props = report.properties
        known = binding.options_of(props)
        # the suite folders the tested tree itself declares, not a local edit's (one hidden
        # by --skip-worktree, which the tree leaves out, narrows nothing)
        held = committed_settings(checkout, props[binding.P_TREE_END])
        if held is not None:
            suites = held.suites
        suites_found = tree_suites(repo, props[binding.P_TREE_END], suites, known)
        # test files a sparse checkout leaves out: no run here collects them
        sparse_out = sparse_left_out(repo, (f for s in suites_found or () for f in s.files))
        loaded, _ = read_audit(props)
        output = output_path(props)
        # unless the tests loaded it as code, or read it (a tracked sample report they parse,
        # overwritten by the run's --junitxml: what they read is not what a commit carries)
        left_out = []
        if output and (loaded is None or output not in {*loaded.loaded, *loaded.read}):
            left_out.append(output)
        trees = {props[binding.P_TREE_START], props[binding.P_TREE_END]}
        left_out += run_hooks(repo, trees, {t.tree for t in targets})
        if left_out:
            views = without(repo, trees | {t.tree for t in targets}, *left_out)
        for a, b in diff_pairs(report, targets, views):
            diffs[(a, b)], only_in_a[(a, b)] = tree_diff(repo, a, b)
        if any(diffs.values()):  # which of them git tracks (a judged commit is older; the
            # work tree's untracked files a plugin wrote after the run)
            index = _index_on_disk(repo)
            named = {p.rpartition(" -> ")[2] for paths in diffs.values() for p in paths or ()}
            tracked = frozenset(p for p in named if p in index)
            # ... and which untracked ones the tested tree holds as well (rewritten since)
            tested_id = props[binding.P_TREE_END]
            in_tested = frozenset(p for p in named - tracked if _holds(repo, tested_id, p))
            # (one the work tree no longer has was removed since, not written again)
            gone = frozenset(p for p in in_tested if not os.path.lexists(checkout.workdir / p))
            rewritten = in_tested - gone
        if loaded is not None:
            wanted = {
                rel: loads
                for rel, loads in loaded.loaded.items()
                if not installed(checkout.workdir, rel, venvs)
            }
            # the folders of namespace packages too, and those the tests used: a tree's (or a
            # submodule's) id where the tree holds one
            asked = {**dict.fromkeys([*loaded.namespaces, *loaded.folders], ()), **wanted}
            blobs = loaded_blobs(checkout, props[binding.P_TREE_END], asked, unregistered)
            if blobs is not None:
                added = converted(
                    checkout, props[binding.P_TREE_END], blobs, wanted, loaded.converted
                )
                flagged = [f.path for f in loaded.flags if not os.path.isabs(f.path)]
                paths = [*loaded.loaded, *flagged, *loaded.namespaces, *loaded.folders]
                placed = placement(checkout, paths, blobs, venvs)
                placed.update(links_out(checkout, props[binding.P_TREE_END], wanted))

    hidden: dict[str, str] = {}
    if report is not None and not binding_problem(report):
        # the changes hidden from git in the files the tests loaded or read; in every file
        # when the audit cannot say (none, or more files read than it lists)
        audited, _ = read_audit(report.properties)
        used = None if audited is None else {*audited.loaded, *audited.read}
        if used is not None:
            # the suite's own settings and conftests too: one deleted under
            # --assume-unchanged is never loaded, and its checks vanish unseen
            used.update(suite.settings_files(suites_found or ()))
        searched = () if audited is None else audit.searched(audited)
        settings = suite.settings_files(suites_found or ())
        configs = [s.config.source for s in suites_found or ()]
        needed = (
            set()
            if audited is None
            else suite.run_reads(configs, settings.__contains__, audited.loaded)
        )
        hidden = hidden_changes(
            checkout, None if used is None or "*" in used else used, searched, needed
        )
    tested = report.properties.get(binding.P_TREE_END) if report is not None else None
    rooms, problems, latest = clean_rooms(checkout, [*(t.tree for t in targets), tested or ""])
    return base._replace(
        clean_rooms=rooms,
        clean_room_problems=problems,
        clean_room_latest=latest,
        config_problems=() if report is not None else unreadable_configs(checkout, suites),
        evidence=str(evidence_path),
        report=report,
        unreadable=unreadable,
        report_mtime_ns=mtime,
        diffs=diffs,
        only_in_first=only_in_a,
        tracked=tracked,
        untracked_rewritten=rewritten,
        gone=gone,
        tested_blobs=blobs,
        added=added,
        placed=placed,
        unregistered=unregistered,
        hidden=hidden,
        views=views,
        suites=suites_found,
        sparse_out=frozenset(sparse_out),
    )


def unreadable_configs(checkout: Checkout, suites: Sequence[str]) -> tuple[str, ...]:
    """Why the pytest configuration of each of the work tree's ``suites`` (its top: none
    declared) cannot be read as pytest reads it, if it cannot."""
    workdir = checkout.workdir

    def read(rel: str) -> bytes | None:
        try:
            return (workdir / rel).read_bytes()
        except OSError:
            return None

    found = (suite.read_config(read, root.strip("/")) for root in (suites or [""]))
    return tuple(problem for config in found for problem in config.problems)


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
    base = workspace(checkout, revs, labels)  # one walk, however many parts
    first = with_report(base, checkout, paths[0], suites)
    others = list(paths[1:])
    report = first.report
    if kept and report is not None and not binding_problem(report) and first.generation:
        # The newest run tested another tree (an experiment since undone): the newest part of
        # this generation that tested the judged tree speaks for it.
        newer = _newest_part_of(checkout, first, report)
        if newer is not None:
            first = with_report(base, checkout, newer, suites)
            report = first.report
    if kept and report is not None and not binding_problem(report) and first.generation:
        merge = merged(first)
        if merge is not None and not merge.complete:
            others = _kept_parts(checkout, first.generation.id, report)
    return _with_others(base, checkout, first, others, suites)


def vouching(
    checkout: Checkout,
    base: Facts,
    target: Target,
    suites: Sequence[str] = (),
    *,
    current: bool = True,
) -> Iterator[tuple[int, list[Facts]]]:
    """The facts for judging ``target`` (a commit) as the gate would have at the end of each
    generation that tested its tree, newest first: with ``current`` the current one (another
    worktree's, or this checkout's for a tree its newest run did not test), then those a hook
    ended (``Generation.retired``). Each is the newest part of that generation that tested the
    target's tree, with the parts of that tree it merges with, and when that run was (ns): as
    old as its oldest part, and no later than its newest part says it bound. ``base`` is the
    checkout's facts; its work tree's bytecode is not looked at (it is another tree's: the
    audit says what the run loaded)."""
    gen = base.generation
    if gen is None:
        return
    ended = [generation.as_retired(entry) for entry in reversed(gen.retired)]
    # each ended generation ended as the one after it began (a hook's claim made then), where
    # git changed files as it did (not a `git checkout -b` beside the work tree's own edits)
    chain = [gen, *ended]
    ends = {
        g.id: _iso_ns(str(entry.get("ended") or after.created))
        for g, after, entry in zip(ended, chain, reversed(gen.retired), strict=False)
        if entry.get("changed", True) is not False
    }
    for then_gen in chain if current else ended:
        path = _newest_part(checkout, then_gen.id, target.tree)
        if path is None:
            continue
        try:
            when = path.stat().st_mtime_ns
        except OSError:
            continue
        end = ends.get(then_gen.id)
        if end is not None and end < when:
            # its newest part was written after a checkout, merge or rewrite ended it: the
            # tests ran on while git changed the work tree (a branch switched to and back)
            continue
        then = base._replace(generation=then_gen, targets=(target,), bytecode=())
        first = with_report(then, checkout, path, suites)
        report = first.report
        created = _created_ns(report.properties) if report is not None else None
        if created is not None:  # no later than the run says it bound (sealed, to the second):
            when = min(when, created + 10**9 - 1)  # a file's time is a hint (`touch`)
        others: list[Path] = []
        if report is not None and not binding_problem(report):
            merge = merged(first)
            if merge is not None and not merge.complete:
                others = _kept_parts(checkout, then_gen.id, report)
        # the run is as old as its oldest part: a failure of the tree after that part and
        # before a newer one is the newer word on what the older one ran
        for other in others:
            with contextlib.suppress(OSError):
                when = min(when, other.stat().st_mtime_ns)
        yield when, _with_others(then, checkout, first, others, suites)


def _with_others(
    base: Facts, checkout: Checkout, first: Facts, others: Sequence[Path], suites: Sequence[str]
) -> list[Facts]:
    """``first`` carrying the ``others`` parts, then each other part's own facts; each knows
    the output files the parts wrote in the work tree (``part_outputs``: reports of other
    names beside its own hold its trees apart from the judged one, which a message names)."""
    out = []
    carried: list[tuple[str, binding.Report]] = []
    for path in others:
        # Each part's loads, output file and trees are its own; the checkout is the same.
        facts = with_report(base, checkout, path, suites)._replace(primary=False)
        if facts.report is not None:
            carried.append((str(path), facts.report))
        out.append(facts)
    reports = [f.report for f in [first, *out] if f.report is not None] if others else []
    written = frozenset(o for o in (output_path(r.properties) for r in reports) if o)
    return [
        first._replace(others=tuple(carried), part_outputs=written),
        *(f._replace(part_outputs=written) for f in out),
    ]


def clean_rooms(
    checkout: Checkout, trees: Iterable[str]
) -> tuple[dict[str, cleanrecord.CleanRoom], tuple[str, ...], str]:
    """The clean-room records of ``trees``, why any could not be read, and the tree of the
    newest record ("" when there is none)."""
    found: dict[str, cleanrecord.CleanRoom] = {}
    problems: list[str] = []
    for tree in dict.fromkeys(t for t in trees if t):
        try:
            record = cleanrecord.read(checkout.gitdir, tree)
        except GenstampError as exc:
            problems.append(exc.message)
            continue
        if record is not None:
            found[tree] = record
    return found, tuple(problems), cleanrecord.latest(checkout.gitdir)


def converted(
    checkout: Checkout,
    tested: str,
    blobs: Mapping[str, str],
    loaded: Mapping[str, Sequence[str]],
    known: Mapping[str, Mapping[str, str]] | None = None,
) -> dict[tuple[str, str], str | None]:
    """For each loaded (path, raw blob) that is not the tested blob: the blob ``git add``
    would store for those bytes at that path, or None when that cannot be known. Asked only
    for the files that differ raw, so a checkout without conversion pays nothing.

    A file changed since the run cannot be converted (its bytes are gone); then the bytes
    loaded count as tested when they are exactly what checking out the tested blob writes
    (git's smudge side: what a clean clone of the tested tree runs; git-lfs's). A conversion
    of this clone alone (``identity.clone_conversions``: a filter driver configured in its own
    config and named only by ``.git/info/attributes``, or a ``working-tree-encoding`` set
    there) is in no fresh clone, which checks the blob out as it is: what it stores proves
    nothing (a ``sed`` that hides an edit), and the bytes loaded count as tested when they are
    the blob's, or, for a Python source, still in the file and of the same syntax tree as the
    blob (the driver dropped a local note). A driver the project names but this clone's own
    config alone defines (``git lfs install --local``; D25 04: a ``sed`` that drops a line of
    code) is judged alike, by what a checkout writes through it: its smudge side must give the
    loaded bytes back (git-lfs does), or, for a Python source, their syntax tree; and so is
    one the user's global config defines (every clone here checks out through it, its smudge
    side too: a clean side that drops a line stores what no clone runs).

    ``known``: what the run's end found (path -> {raw blob: blob}, ``Audit.converted``), while
    the bytes were still in the file: where it gives the tested blob, that is the answer."""
    out: dict[tuple[str, str], str | None] = {}
    differ = []
    for rel, loads in loaded.items():
        if rel not in blobs:
            continue
        for raw in loads:
            if raw == blobs[rel]:
                continue
            if known is not None and known.get(rel, {}).get(raw) == blobs[rel]:
                out[(rel, raw)] = blobs[rel]
            elif raw in _text_of(checkout, blobs[rel]):
                out[(rel, raw)] = blobs[rel]  # the tested file's text, read as text
            else:
                differ.append((rel, raw))
    # paths a conversion converts: no fresh clone has it (ALONE), only one set up as this one
    # was (LOCAL), every clone here (SHARED): what it stores proves nothing, what a checkout
    # writes may
    mine: dict[str, str] = {}
    while differ:
        # One raw blob per path in each call: a path loaded twice is asked twice.
        batch: dict[str, str] = {}
        rest = []
        for rel, raw in differ:
            if rel in batch:
                rest.append((rel, raw))
            else:
                batch[rel] = raw
        for (owner, prefix), part in _by_repository(checkout, batch).items():
            found = added_blobs(owner, {rel[len(prefix) :]: raw for rel, raw in part.items()})
            for rel, how in clone_conversions(owner, found).items():
                if how == SHARED and (prefix or not rel.endswith(_PY)):
                    continue  # (asked of the project's own Python sources: code, and few)
                if how:
                    found[rel] = None
                    mine[prefix + rel] = how
            out.update(((prefix + rel, batch[prefix + rel]), blob) for rel, blob in found.items())
        differ = rest
    unknown = [key for key, blob in out.items() if blob is None]
    if unknown:
        written = checkout_forms(checkout, tested, sorted({rel for rel, _ in unknown}))
        for rel in [rel for rel, how in mine.items() if how == ALONE and rel in written]:
            blob = checkout.repo.get(blobs[rel])  # a fresh clone has no such driver
            written[rel] = blob.data if isinstance(blob, pygit2.Blob) else b""
        for rel, raw in unknown:
            form = written.get(rel)
            if form is None:
                continue
            if str(pygit2.hash(form)) == raw or (
                rel in mine and rel.endswith(_PY) and _same_code(checkout, rel, raw, form)
            ):
                out[(rel, raw)] = blobs[rel]
    # what the tests loaded as the tree's, where a checkout writes other code of it
    tested_as = [
        (rel, raw)
        for rel, loads in loaded.items()
        if rel in blobs and rel.endswith(_PY)
        for raw in loads
        if raw == blobs[rel] or out.get((rel, raw)) == blobs[rel]
    ]
    expanded = _expanded(checkout, tested, blobs, sorted({rel for rel, _ in tested_as}))
    # (the bytes a checkout writes, as a clean clone loads them, are the tested blob's)
    out.update(
        ((rel, raw), None) for rel, raw in tested_as if rel in expanded and raw != expanded[rel]
    )
    return out


def _text_of(checkout: Checkout, blob: str) -> frozenset[str]:
    """The blob ids of the text of the tested ``blob`` (code: a Python source, a script
    without the suffix) as code compiled from it may have it: read in text mode (universal
    newlines: a CRLF file as LF), or decoded as the import system decodes it (its coding
    declaration, a byte-order mark dropped), as ``exec(compile(open(path).read(), path,
    "exec"))`` compiles it."""
    from genstamp.audit import as_text

    found = checkout.repo.get(blob)
    return as_text(found.data) if isinstance(found, pygit2.Blob) else frozenset()


def _expanded(
    checkout: Checkout, tested: str, blobs: Mapping[str, str], paths: Sequence[str]
) -> dict[str, str]:
    """Of the Python sources ``paths``, which the tests loaded as the tree's, those a checkout
    writes as other code, each with the blob id of what it writes: ``ident`` (``$Id$`` stays as
    committed in the work tree, a clone gets ``$Id: <blob> $``), where the project's
    attributes or the user's ask every clone for it (not ``.git/info/attributes`` alone). A
    ``$Id$`` in a comment or docstring changes no code. Asked of git only for blobs that hold
    ``$Id``."""
    repo = checkout.repo
    marked = {}
    for rel in paths:
        blob = repo.get(blobs[rel])
        if not isinstance(blob, pygit2.Blob) or b"$Id" not in blob.data:
            continue
        if repo.get_attr(os.fsencode(rel), "ident") is True and not private_attribute(
            repo, rel, "ident"
        ):
            marked[rel] = blob.data
    if not marked:
        return {}
    forms = checkout_forms(checkout, tested, sorted(marked))
    return {
        rel: str(pygit2.hash(form))
        for rel, form in forms.items()
        if not _same_code_of(marked[rel], form)
    }


def _same_code_of(a: bytes, b: bytes, *, docstrings: bool = False) -> bool:
    """Whether two Python sources parse to the same syntax tree (docstrings aside, unless
    ``docstrings``)."""
    import ast

    def code(data: bytes) -> str:
        tree = ast.parse(data)
        for node in () if docstrings else ast.walk(tree):
            body = getattr(node, "body", None)
            if (
                isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
                and isinstance(body, list)
                and body
                and isinstance(body[0], ast.Expr)
                and isinstance(body[0].value, ast.Constant)
                and isinstance(body[0].value.value, str)
            ):
                body[0] = ast.Pass()
        return ast.dump(tree)

    try:
        return a == b or code(a) == code(b)
    except (SyntaxError, ValueError, RecursionError):
        return False


_PY = (".py", ".pyw")


def _same_code(checkout: Checkout, rel: str, raw: str, form: bytes) -> bool:
    """Whether the Python source ``rel``, which still holds the loaded bytes ``raw``, parses to
    the same syntax tree as ``form`` (what a fresh clone checks out): the conversion dropped
    comments or spacing (a local note, a formatter's), not code."""
    try:
        with open(checkout.workdir / rel, "rb") as fh:
            data = fh.read()
    except OSError:
        return False
    return str(pygit2.hash(data)) == raw and _same_code_of(data, form, docstrings=True)


def checkout_forms(checkout: Checkout, tree: str, paths: Sequence[str]) -> dict[str, bytes]:
    """For each of ``paths`` in ``tree``: the bytes a checkout writes for it
    (``git cat-file --filters``: eol, ident and smudge filters as git applies them, as a
    clone's checkout does: git-lfs's smudge not skipped); paths git cannot give, or whose
    filters take longer than ``FORMS_TIMEOUT``, are left out (unknown). One git process per
    path (its batch mode gives the size of the blob, not of what the filters write): asked
    only for the few files that need it."""
    skipped = ("GIT_DIR", "GIT_WORK_TREE", "GIT_LFS_SKIP_SMUDGE")
    env = {k: v for k, v in os.environ.items() if k not in skipped}
    repo = checkout.repo
    out: dict[str, bytes] = {}
    for path in paths:
        try:
            blob = str(repo.revparse_single(f"{tree}:{path}").id)
            proc = subprocess.run(
                [
                    *("git", f"--git-dir={repo.path}", f"--work-tree={checkout.workdir}"),
                    *("cat-file", "--filters", f"--path={path}", blob),
                ],
                capture_output=True,
                cwd=checkout.workdir,
                env=env,
                timeout=FORMS_TIMEOUT,
            )
        except (KeyError, ValueError, pygit2.GitError, OSError, subprocess.TimeoutExpired):
            continue
        if proc.returncode == 0:
            out[path] = proc.stdout
    return out


FORMS_TIMEOUT = 60  # seconds a checkout's filters may take for one file


def _by_repository(
    checkout: Checkout, paths: Mapping[str, str]
) -> dict[tuple[Checkout, str], dict[str, str]]:
    """``paths`` split by the repository whose work tree holds them: a path inside a
    submodule's work tree is converted by the submodule's own attributes and filters."""
    subs = {sub: submodules.open_nested(checkout, sub) for sub in submodules.paths(checkout)}
    out: dict[tuple[Checkout, str], dict[str, str]] = {}
    for rel, raw in paths.items():
        owner, prefix = checkout, ""
        for sub, nested in subs.items():
            if nested is not None and rel.startswith(sub + "/"):
                owner, prefix = nested, sub + "/"
                break
        out.setdefault((owner, prefix), {})[rel] = raw
    return out


def dirty_submodules(checkout: Checkout) -> tuple[Submodule, ...]:
    """``submodules.dirty`` as the rules' records."""
    return tuple(Submodule(path, changes) for path, changes in submodules.dirty(checkout))


def without(repo: pygit2.Repository, trees: Iterable[str], *paths: str) -> dict[str, str]:
    """Each of ``trees`` with the files ``paths`` left out (as git would write it: a folder
    left empty goes too); trees not in the object store are left out."""
    out = {}
    for tree in trees:
        found = _tree(repo, tree)
        if found is not None:
            oid = found.id
            for path in paths:
                now = repo.get(oid)
                if isinstance(now, pygit2.Tree):
                    oid = _without(repo, now, path.split("/"))
            out[tree] = str(oid)
    return out


HOOK_TREES = 3  # the trees compared that ``run_hooks`` looks for hooks against


def run_hooks(repo: pygit2.Repository, tested: Iterable[str], others: Iterable[str]) -> list[str]:
    """The start-up hooks of genstamp's runs (``child``'s ``.pth``, there while a run lasts)
    that a tested tree holds and a tree it is compared with does not: written into the
    site-packages of a Python environment the work tree holds and git does not ignore, they
    are the run's own, as its report is."""
    from genstamp.child import PTH_PREFIXES

    tested = list(dict.fromkeys(tested))
    # a hook is in the tested tree only: a few of the trees compared show it (a push of
    # thousands of refs compares thousands)
    compared = [b for b in dict.fromkeys(others) if b not in tested][:HOOK_TREES]
    found: set[str] = set()
    for a in tested:
        for b in compared:
            for path in differing_paths(repo, a, b) or ():
                folder, _, name = path.rpartition("/")
                if name.startswith(PTH_PREFIXES) and name.endswith(".pth"):
                    if folder.endswith(("/site-packages", "/dist-packages")):
                        if _holds(repo, a, path) and not _holds(repo, b, path):
                            found.add(path)
    return sorted(found)


def _holds(repo: pygit2.Repository, tree_id: str, path: str) -> bool:
    tree = _tree(repo, tree_id)
    try:
        return tree is not None and isinstance(tree[path], pygit2.Blob)
    except (KeyError, TypeError, ValueError):
        return False


def _without(repo: pygit2.Repository, tree: pygit2.Tree, parts: Sequence[str]) -> pygit2.Oid:
    name = parts[0]
    if name not in tree:
        return tree.id
    entry = tree[name]
    builder = repo.TreeBuilder(tree)
    if len(parts) == 1:
        if entry.filemode not in (FileMode.BLOB, FileMode.BLOB_EXECUTABLE, FileMode.LINK):
            return tree.id  # a folder or a submodule: not a report the run wrote
        builder.remove(name)
    else:
        if not isinstance(entry, pygit2.Tree):
            return tree.id
        inner = _without(repo, entry, parts[1:])
        if inner == entry.id:
            return tree.id
        inner_tree = repo.get(inner)
        if isinstance(inner_tree, pygit2.Tree) and len(inner_tree) == 0:
            builder.remove(name)
        else:
            builder.insert(name, inner, FileMode.TREE)
    return builder.write()


def _newest_part_of(checkout: Checkout, first: Facts, report: binding.Report) -> Path | None:
    """The newest part the plugin kept for the current generation that tested the one tree
    judged, when the evidence ``report`` tested another; None when it tested that tree (as the
    gate compares trees: without the run's own output file) or no part did."""
    trees = {t.tree for t in first.targets}
    tested = report.properties.get(binding.P_TREE_END, "")
    if len(trees) != 1 or first.generation is None:
        return None
    (tree,) = trees
    views = first.views
    if tested == tree or views.get(tested, tested) == views.get(tree, tree):
        return None
    return _newest_part(checkout, first.generation.id, tree)


def _newest_part(checkout: Checkout, gen: str, tree: str) -> Path | None:
    """The newest part kept for the generation ``gen`` that tested ``tree``, if any."""
    found: list[tuple[int, Path]] = []
    for path in parts.listing(checkout.state, gen):
        try:
            rep = evidence.read_report(path)
            when = path.stat().st_mtime_ns
        except (GenstampError, OSError):
            continue
        p = rep.properties
        if not binding_problem(rep) and p.get(binding.P_GENERATION) == gen:
            if same_tested(checkout, p.get(binding.P_TREE_END, ""), tree, p):
                found.append((when, path))
    return max(found)[1] if found else None


def _iso_ns(text: str) -> int | None:
    """An instant written as ``generation`` writes it (UTC, ISO 8601), in ns; None when it is
    none."""
    from datetime import datetime, timezone

    try:
        moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except (ValueError, TypeError, AttributeError):
        return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=timezone.utc)
    delta = moment - datetime(1970, 1, 1, tzinfo=timezone.utc)
    return (delta.days * 86_400 + delta.seconds) * 10**9 + delta.microseconds * 1000


def _created_ns(props: Mapping[str, str]) -> int | None:
    """When the run bound its evidence, as it recorded it (``genstamp.created``, sealed with
    the rest; to the second), in ns; None when it does not say."""
    from datetime import datetime

    try:
        return int(datetime.fromisoformat(props.get(binding.P_CREATED, "")).timestamp()) * 10**9
    except (ValueError, TypeError, OverflowError):
        return None


def same_tested(checkout: Checkout, tested: str, tree: str, props: Mapping[str, str]) -> bool:
    """Whether a part that tested ``tested`` tested ``tree``, as the gate compares them: the
    part's own output file in the work tree (its ``--junitxml``, rewritten by every later
    run) left out of both."""
    if tested == tree:
        return True
    output = output_path(props)
    if not tested or not output:
        return False
    views = without(checkout.repo, (tested, tree), output)
    return tested in views and views.get(tested) == views.get(tree)


def _same_trees_tested(checkout: Checkout, a: Mapping[str, str], b: Mapping[str, str]) -> bool:
    """Whether two runs (their properties) tested the same tree, as the gate compares trees:
    each run's own output file in the work tree (its ``--junitxml``, which every run of a
    split rewrites, or writes beside the other's) left out of both."""
    tree_a, tree_b = a.get(binding.P_TREE_END, ""), b.get(binding.P_TREE_END, "")
    if tree_a == tree_b:
        return True
    outputs = sorted({o for o in (output_path(a), output_path(b)) if o})
    if not tree_a or not tree_b or not outputs:
        return False
    views = without(checkout.repo, (tree_a, tree_b), *outputs)
    return tree_a in views and views.get(tree_a) == views.get(tree_b)


def _kept_parts(checkout: Checkout, gen: str, first: binding.Report) -> list[Path]:
    """The current generation's kept parts that tested the same tree as ``first`` (a part of
    an earlier tree is history, not a part of this run), ``first`` itself left out."""
    props = first.properties
    out = []
    covered: list[coverage.Part] = []
    for path in parts.listing(checkout.state, gen):
        try:
            rep = evidence.read_report(path)
        except (GenstampError, OSError):
            continue
        p = rep.properties
        if (
            not binding_problem(rep)
            and p.get(binding.P_GENERATION) == gen
            and _same_trees_tested(checkout, p, props)
            and p.get(binding.P_SEAL) != props.get(binding.P_SEAL)
            and p.get(binding.P_RUNNER) == props.get(binding.P_RUNNER) == "pytest"
        ):  # (`genstamp run` keeps its runs as parts too: they merge with none)
            out.append(path)
            cov = read_coverage(p)[0]
            if cov is not None:
                covered.append(coverage.Part(str(path), cov, _session_failed(p)))
    newest = read_coverage(props)[0]  # ``first`` is the newest run
    if newest is not None:
        covered.append(coverage.Part("", newest, _session_failed(props)))
    gone = coverage.superseded(covered)
    return [path for path in out if str(path) not in gone]


def _session_failed(props: Mapping[str, str]) -> bool:
    return bool(props.get(binding.P_SESSION_FAILED))


# What makes a tree a Python project's, or pytest's to run: its metadata, a configuration
# pytest reads, a conftest. A gitlink may hold any of them.
PROJECT_NAMES = frozenset(
    {
        "pyproject.toml",
        "setup.py",
        "setup.cfg",
        "pytest.ini",
        ".pytest.ini",
        "pytest.toml",
        ".pytest.toml",
        "tox.ini",
        "conftest.py",
    }
)


_SOURCES = (".py", ".pyi", ".pyw", ".pyx", ".pxd", ".ipynb")
_SITE = frozenset({"index.html", ".nojekyll"})  # at the top of a published site


def testable(repo: pygit2.Repository, tree_id: str) -> bool:
    """Whether the tree may hold anything for the tests to judge. Nothing when it holds no
    Python project's metadata, no configuration pytest reads, no conftest, no submodule and
    no test file pytest's defaults collect (``test_*.py``, ``*_test.py``), and is either a
    published site (``index.html`` or ``.nojekyll`` at its top: the Python files and doctest
    pages it ships, sphinx-gallery's downloads, Sphinx's ``_sources/testing.rst.txt``, are
    its content) or holds no Python source and no doctest file (``test*.txt``) at all. True
    when the tree cannot be read."""
    try:
        top = repo.get(tree_id)
    except (ValueError, pygit2.GitError):
        return True
    if not isinstance(top, pygit2.Tree):
        return True
    site = any(entry.name in _SITE for entry in top)
    sources = False
    folders = [top]
    while folders:
        folder = folders.pop()
        for entry in folder:
            name = entry.name or ""
            if entry.filemode == FileMode.COMMIT or name in PROJECT_NAMES:
                return True
            if entry.filemode == FileMode.TREE:
                sub = repo.get(entry.id)
                if isinstance(sub, pygit2.Tree):
                    folders.append(sub)
            elif name.endswith(".py") and (name.startswith("test_") or name.endswith("_test.py")):
                return True
            elif name.endswith(_SOURCES) or (name.startswith("test") and name.endswith(".txt")):
                sources = True
    return sources and not site


def rev_tree(
    checkout: Checkout, rev: str, label: str | None = None, *, option: str = "--rev"
) -> Target:
    """The tree of the commit ``rev`` names (tags peeled to their commit); ``option``: the
    command-line option that gave it, which the remedy names."""
    remedy = f"pass a branch, tag or commit id to {option}"
    if option != "--rev":  # a base branch named for what it holds, often not fetched yet
        remedy += " (a remote's branch fetched first: git fetch origin BRANCH)"
    obj = None
    try:
        try:
            obj = checkout.repo.revparse_single(rev)
        except UnicodeEncodeError:  # a ref's name git keeps as bytes no UTF-8 (as the OS gave it)
            obj = checkout.repo.revparse_single(os.fsencode(rev))  # type: ignore[arg-type]
        commit = obj.peel(pygit2.Commit)
    except (KeyError, ValueError, pygit2.GitError, pygit2.InvalidSpecError) as exc:
        if obj is not None:  # a blob or a tree (`HEAD:pyproject.toml`, `HEAD^{tree}`)
            kind: str = obj.type_str
            if isinstance(obj, pygit2.Tag):  # (of a tag of one, what the tag points at)
                with contextlib.suppress(KeyError, ValueError, pygit2.GitError):
                    kind = f"tag of a {checkout.repo[obj.target].type_str}"
            raise GenstampError(f"{rev!r} names a {kind}, not a commit", remedy) from None
        if checkout.repo.is_shallow:
            raise GenstampError(
                f"{rev!r} does not name a commit here: this is a shallow clone, "
                "whose history stops at its shallow boundary",
                "judge a commit the clone has, or deepen it (git fetch --unshallow)",
            ) from None
        # (a KeyError's text is the rev itself)
        why = "" if isinstance(exc, KeyError) else f" ({exc})"
        raise GenstampError(
            f"{rev!r} does not name a commit in this repository{why}",
            remedy,
        ) from None
    return Target(label or rev, str(commit.tree_id))


def bytecode_listing(root: Path, found: Sequence[str]) -> tuple[Bytecode, ...]:
    """The bytecode files the walk found (folders __pycache__ opened), with their ages: only
    bytecode (what scrub removes), not another tool's cache kept there (numba's .nbi/.nbc)."""
    out: list[Bytecode] = []
    for rel in found:
        full = root / rel
        if full.name == PYCACHE:
            try:
                with os.scandir(full) as it:
                    entries = [(e.name, e.stat(follow_symlinks=False).st_mtime_ns) for e in it]
            except OSError:
                continue
            out.extend(
                Bytecode(f"{rel}/{name}", mtime, False)
                for name, mtime in entries
                if is_bytecode_file(name)
            )
        else:
            if not holds_bytecode(str(full)):
                continue  # a data file named like bytecode: scrub keeps it, nothing imports it
            try:
                mtime = full.lstat().st_mtime_ns
            except OSError:
                continue
            # legacy bytecode a plain import runs with no source (``mod.pyc``): not a cache's
            # file outside ``__pycache__`` (``mod.cpython-311.pyc``, under the mirror of the
            # tree that PYTHONPYCACHEPREFIX makes in it), whose name no import gives
            sourceless = (
                PYCACHE not in full.parts
                and full.name.partition(".")[0] == full.stem
                and not full.with_suffix(".py").exists()
            )
            out.append(Bytecode(rel, mtime, sourceless))
    return tuple(out)


def links_out(checkout: Checkout, tested: str, paths: Iterable[str]) -> dict[str, str]:
    """Those of ``paths`` the tree ``tested`` holds as a symbolic link that leads out of the
    work tree (a clean clone has the link, not the file it reaches): ``LINKED``; or that the
    work tree holds as a plain file (a clean clone has the link): ``AS_FILE``."""
    from genstamp.placed import AS_FILE, LINKED, file_for_link

    tree = _tree(checkout.repo, tested)
    if tree is None:
        return {}
    top = os.path.realpath(checkout.workdir)
    out: dict[str, str] = {}
    for rel in paths:
        try:
            link = tree[rel].filemode == pygit2.enums.FileMode.LINK
        except (KeyError, ValueError):
            continue
        if not link:
            continue
        if file_for_link(checkout.workdir, rel):
            out[rel] = AS_FILE
        elif not inside(os.path.realpath(checkout.workdir / rel), top):
            out[rel] = LINKED
    return out


def loaded_blobs(
    checkout: Checkout,
    tested: str,
    loaded: Mapping[str, object],
    unregistered: dict[str, str] | None = None,
) -> dict[str, str] | None:
    """The ids the files ``loaded`` names have in the tree ``tested`` (files not in it left
    out), a file inside a submodule read from the commit the tree records for it; None when
    that tree is not in the object store. ``unregistered`` receives, for each file found only
    through a gitlink that no ``.gitmodules`` gives a URL (a clone cannot fetch it), the
    gitlink's path."""
    tree = _tree(checkout.repo, tested)
    if tree is None:
        return None
    blobs = {}
    opened: _Opened = {}
    archives: dict[str, zipfile.ZipFile | None] = {}
    for rel in loaded:
        try:
            entry = tree[rel]
            if entry.filemode == FileMode.LINK:  # its target's (one a clone can have)
                raise KeyError(rel)
            blobs[rel] = str(entry.id)
        except KeyError:  # inside a submodule (at any depth), at the commit each records
            links: list[str] = []
            found = _lookup(checkout.repo, tree, rel, opened, links)
            if found is not None:
                blobs[rel] = str(found[0].id)
                if links and unregistered is not None:
                    unregistered[rel] = links[0]
            else:
                member = _archive_member(checkout.repo, tree, rel, opened, archives)
                if member is not None:
                    blobs[rel] = member
    return blobs


def _archive_member(
    repo: pygit2.Repository,
    tree: pygit2.Tree,
    rel: str,
    opened: _Opened,
    archives: dict[str, zipfile.ZipFile | None],
) -> str | None:
    """The blob id of the bytes a zip archive of the tree holds at ``rel`` (``deps.zip/m.py``:
    a module ``zipimport`` loaded from an archive on ``sys.path``), None when no file of the
    tree leading ``rel`` is an archive holding it."""
    parts = rel.split("/")
    for n in range(1, len(parts)):
        archive = "/".join(parts[:n])
        if archive not in archives:
            found = _lookup(repo, tree, archive, opened)
            blob = found[0] if found is not None else None
            archives[archive] = None
            if isinstance(blob, pygit2.Blob):
                with contextlib.suppress(zipfile.BadZipFile, OSError, ValueError):
                    archives[archive] = zipfile.ZipFile(io.BytesIO(blob.data))
        held = archives[archive]
        if held is not None:
            try:
                return str(pygit2.hash(held.read("/".join(parts[n:]))))
            except (KeyError, zipfile.BadZipFile, OSError, ValueError, RuntimeError):
                return None
    return None


def differing_paths(repo: pygit2.Repository, a: str, b: str) -> tuple[str, ...] | None:
    """The paths that differ from tree ``a`` to tree ``b`` (renames as ``old -> new``); None
    when either is not in the object store."""
    return tree_diff(repo, a, b)[0]


def tree_diff(
    repo: pygit2.Repository, a: str, b: str
) -> tuple[tuple[str, ...] | None, frozenset[str]]:
    """``differing_paths``, and of them those tree ``a`` holds and tree ``b`` does not (none
    when either tree is not in the object store)."""
    from pygit2.enums import DeltaStatus

    ta, tb = _tree(repo, a), _tree(repo, b)
    if ta is None or tb is None:
        return None, frozenset()
    paths, gone = [], []
    for delta in ta.diff_to_tree(tb).deltas:
        old, new = delta.old_file.path, delta.new_file.path
        paths.append(old if old == new else f"{old} -> {new}")
        if delta.status == DeltaStatus.DELETED:
            gone.append(old)
    return tuple(paths), frozenset(gone)


def _tree(repo: pygit2.Repository, tree_id: str) -> pygit2.Tree | None:
    """The tree ``tree_id``; in a partial clone that left it out (``--filter=tree:0``, a
    commit fetched but not checked out), fetched as git fetches it."""
    try:
        obj = repo.get(tree_id)
        if obj is None:
            from genstamp import notes

            notes.at_hand(repo, tree_id, blobs=False)
            obj = repo.get(tree_id)
    except (ValueError, pygit2.GitError):
        return None
    return obj if isinstance(obj, pygit2.Tree) else None


def _index_on_disk(repo: pygit2.Repository) -> pygit2.Index:
    """The repository's index as git keeps it (the one ``repo.index`` gives may hold what the
    walk of the work tree's identity added to it, untracked files)."""
    try:
        index: pygit2.Index = pygit2.Index(os.path.join(repo.path, "index"))
    except (pygit2.GitError, OSError, ValueError):
        index = repo.index
    return index


def blob_bytes(repo: pygit2.Repository, blob: pygit2.Blob) -> bytes | None:
    """The bytes of ``blob``; in a partial clone (``git clone --filter=blob:none``) one not
    fetched yet is fetched as git fetches it (libgit2 reads what is at hand only): None when
    git cannot."""
    try:
        return bytes(blob.data)
    except KeyError:  # (pygit2's NotFoundError)
        from genstamp import notes

        fetched = notes.fetch(repo, [str(blob.id)])
        if fetched is None or not fetched.startswith(f"{blob.id} blob ".encode()):
            return None  # (`OID missing`: git could not fetch it)
        header, _, rest = fetched.partition(b"\n")
        size = int(header.rsplit(b" ", 1)[1])
        return rest[:size]


def committed_settings(checkout: Checkout, tree_id: str) -> config.Config | None:
    """The settings the tree ``tree_id`` holds in its own ``pyproject.toml`` (the defaults when
    it holds none, or one genstamp cannot read: the strictest); None when the tree is not in
    the object store."""
    tree = _tree(checkout.repo, tree_id)
    if tree is None:
        return None
    try:
        blob = tree["pyproject.toml"]
    except KeyError:
        blob = None
    data = blob_bytes(checkout.repo, blob) if isinstance(blob, pygit2.Blob) else b""
    if data is None:
        raise GenstampError(
            f"the pyproject.toml of tree {tree_id[:12]} is not in this partial clone, and git "
            "cannot fetch it",
            "fetch it (`git fetch` from the remote the clone was made from), then run again",
        )
    try:
        return config.from_bytes(data, checkout.workdir, checkout.workdir / "pyproject.toml")
    except GenstampError:
        return config.Config()


# -- the suite, listed from a tree in the object store ------------------------------------------


def tree_suites(
    repo: pygit2.Repository,
    tree_id: str,
    roots: Sequence[str],
    known: Mapping[str, str] | None = None,
) -> tuple[suite.Suite, ...] | None:
    """The suites of the tree ``tree_id`` (None when it is not in the object store). Only the
    folders a configuration's ``testpaths`` (and its ``addopts``) name are listed, and no
    folder pytest would not enter: a large tree with a small ``tests/`` costs little.
    ``known``: the options of a run's addopts, and how its pytest takes each
    (``binding.P_OPTIONS``)."""
    tree = _tree(repo, tree_id)
    if tree is None:
        return None
    opened: _Opened = {}

    def read(path: str) -> bytes | None:
        found = _lookup(repo, tree, path, opened)
        if found is None or not isinstance(found[0], pygit2.Blob):
            return None
        data = blob_bytes(found[1][0], found[0])  # (the repository holding it: a submodule's)
        if data is None:  # (read as absent, another configuration would define the suite)
            raise GenstampError(
                f"{path} of tree {tree_id[:12]} is not in this partial clone, and git cannot "
                "fetch it",
                "fetch it (`git fetch` from the remote the clone was made from), then run again",
            )
        return data

    out = []
    for root in roots or [""]:
        root = root.strip("/")
        held = _lookup(repo, tree, root, opened) if root else None
        if root and (held is None or not isinstance(held[0], pygit2.Tree)):
            # a declared suite the tree holds no folder for (renamed, `git mv`; a file named,
            # `svc_b/pytest.ini`): its tests are in no suite; it stands as a folder no run
            # collects, and says why
            said = (
                f"[tool.genstamp] suites names {root}, which is no folder of the tree "
                "(fix the list)",
            )
            out.append(suite.Suite(root, suite.PytestConfig(""), (root,), said))
            continue
        config = suite.read_config(read, root, known)
        listing: list[str] = []
        starts = [suite.join(root, t) for t in config.starts()]
        globbed = suite.glob_bases(starts)
        for base in globbed:
            _list(repo, tree, base, (), listing, opened)
        unfound: tuple[str, ...] = ()
        if config.pyargs:
            # a package the project maps from a folder of its own (setuptools' package-dir
            # `"" = "lib"`, installed editable): where the import finds it, one folder down,
            # for each name found nowhere else
            for name in (n for n in config.testpaths if "/" not in n and not n.startswith(".")):
                usual = [suite.join(root, t) for t in config._replace(testpaths=(name,)).starts()]
                if any(_lookup(repo, tree, u, opened) for u in usual):
                    continue
                mapped = suite.package_folders(read, root, name)
                below = [
                    m
                    for m in mapped
                    if _lookup(repo, tree, f"{m}/__init__.py", opened)
                    or _lookup(repo, tree, f"{m}.py", opened)
                ] or ([] if mapped else _pyargs_below(repo, tree, root, (name,), opened))
                starts += below
                if not below:  # a package installed from elsewhere, or an error of the run
                    unfound += (
                        f"--pyargs {name}: no package or module of the tree is named so (its "
                        "tests, if installed from elsewhere, are no test files of the tree)",
                    )
        if (
            not starts
            or globbed
            or not (config.pyargs or any(_lookup(repo, tree, s, opened) for s in starts))
        ):
            starts = [root]  # as pytest: testpaths naming nothing, and it searches the folder
        # and what the addopts name (a word that may be an option's value: both readings)
        words = (*config.paths, *config.maybe)
        named = [suite.join(root, p) for p in config.named(words)]
        for name in config.dotted(words):  # a package its build maps from a folder of its own
            if not any(
                _lookup(repo, tree, suite.join(root, p), opened) for p in config.named([name])
            ):
                mapped = suite.package_folders(read, root, name)
                named += mapped or _pyargs_below(repo, tree, root, (name,), opened)
        starts += [p for p in named if _lookup(repo, tree, p, opened) and p not in starts]
        for start in starts:
            _list(repo, tree, start, config.norecursedirs, listing, opened)
            # conftests between the suite's folder and the start may ignore files below
            folder = start
            while folder and folder != root and folder.strip("/."):  # (never past the top)
                folder = posixpath.dirname(folder)
                if read(suite.join(folder, "conftest.py")) is not None:
                    listing.append(suite.join(folder, "conftest.py"))
        found = suite.collect(sorted(set(listing)), read, root, known)
        kept = "" if roots else suite.kept_by_tests(found, read, listing)
        if kept:  # the configuration the tests keep is the project's
            found = suite.collect(sorted(set(listing)), read, kept, known)
        out.append(found._replace(problems=found.problems + unfound))
    return tuple(out)


def _pyargs_below(
    repo: pygit2.Repository,
    tree: pygit2.Tree,
    root: str,
    names: Sequence[str],
    opened: _Opened,
) -> list[str]:
    """The paths below ``root`` (up to three folders down) of the folders and modules the
    dotted names ``--pyargs`` gives name, where no build setting says where they lie: a folder
    the project keeps its packages in (``lib/pkg``, ``src/python/pkg``) that the import path is
    given (``suite.collect`` takes the nearest package of them)."""
    top = _lookup(repo, tree, root, opened) if root else (tree, None)
    folder = top[0] if top is not None else None
    if not isinstance(folder, pygit2.Tree):
        return []
    out: list[str] = []
    for name in (n for n in names if "/" not in n and not n.startswith(".")):
        below = name.replace(".", "/")
        level: list[str] = [""]
        for _depth in range(3):
            level = [
                f"{b}/{e.name}".lstrip("/")
                for b in level
                for e in _folders(repo, tree, root, b, opened)
            ]
            # every folder or module so named: which is a package the suite says (its nearest
            # holding Python files), from what this lists
            out += [
                suite.join(root, path)
                for base in level
                for path in (f"{base}/{below}", f"{base}/{below}.py")
                if _lookup(repo, tree, suite.join(root, path), opened) is not None
            ]
    return out


def _folders(
    repo: pygit2.Repository, tree: pygit2.Tree, root: str, rel: str, opened: _Opened
) -> list[pygit2.Object]:
    """The folders of the tree's folder ``rel`` below ``root`` that an import path may name:
    not hidden ones, nor those pytest never enters (an environment, ``__pycache__``)."""
    found = _lookup(repo, tree, suite.join(root, rel), opened) if (root or rel) else (tree, None)
    held = found[0] if found is not None else None
    if not isinstance(held, pygit2.Tree):
        return []
    return [
        e
        for e in held
        if e.filemode == FileMode.TREE
        and (e.name or ".")[0] != "."
        and e.name not in ("__pycache__", "node_modules", "venv", "site-packages")
    ]


# A repository, where its work tree is as a path of the top tree ("" for the top one), and the
# tree of the commit looked in (whose .gitmodules names its submodules).
_Place = tuple[pygit2.Repository, str, pygit2.Tree]
# The submodule trees looked up so far: (path in the top tree, commit) -> tree and place.
_Opened = dict[tuple[str, str], "tuple[pygit2.Tree, _Place] | None"]


def _list(
    repo: pygit2.Repository,
    tree: pygit2.Tree,
    start: str,
    norecurse: Sequence[str],
    out: list[str],
    opened: _Opened,
) -> None:
    """The files below ``start`` that pytest would enter, submodules' files included (pytest
    collects a checked-out submodule like any folder; each at the commit the tree records)."""
    found = _lookup(repo, tree, start, opened)
    if found is None:
        return
    top, place = found
    if isinstance(top, pygit2.Blob):
        out.append(start)
        return
    if not isinstance(top, pygit2.Tree):
        return
    pruned = suite.any_of([*norecurse, "__pycache__"])
    stack: list[tuple[str, pygit2.Tree, _Place]] = [(start, top, place)]
    while stack:
        prefix, current, where = stack.pop()
        lead = f"{prefix}/" if prefix else ""
        for entry in current:
            name = entry.name or ""
            if entry.filemode == FileMode.LINK:
                if not pruned(name):
                    linked = _linked_folder(repo, tree, where, entry, lead + name, opened)
                    if linked is not None:
                        stack.append((lead + name, *linked))
                        continue
                # pytest collects a link as what it leads to (``DirEntry.is_file()``): one to
                # nothing, or to a folder it does not enter, is no file of the suite
                target = _link_target(where[0], entry, lead + name)
                if target is None:
                    if not _file_out_of_tree(repo, where[0], entry, lead + name):
                        continue
                else:
                    led = _lookup(repo, tree, target, opened)
                    if led is None or not isinstance(led[0], pygit2.Blob):
                        continue
            if entry.type == pygit2.enums.ObjectType.BLOB:
                out.append(lead + name)
            elif pruned(name):
                continue
            elif entry.type == pygit2.enums.ObjectType.TREE:
                stack.append((lead + name, entry, where))  # type: ignore[arg-type]
            elif entry.filemode == FileMode.COMMIT:
                inner = _submodule_tree(where, lead + name, str(entry.id), opened)
                if inner is not None:
                    stack.append((lead + name, *inner))


def _linked_folder(
    repo: pygit2.Repository,
    tree: pygit2.Tree,
    where: _Place,
    entry: pygit2.Object,
    path: str,
    opened: _Opened,
) -> tuple[pygit2.Tree, _Place] | None:
    """The folder of the tree that the symbolic link ``entry`` at ``path`` leads to, which
    pytest enters as a folder of its own; None for a link to a file, out of the tree, or to a
    folder above it (a loop pytest would never leave)."""
    target = _link_target(where[0], entry, path)
    if target is None or path.count("/") >= _MAX_DEPTH:
        return None
    if target == "" or path.startswith(target + "/"):
        return None
    found = _lookup(repo, tree, target, opened)
    if found is None or not isinstance(found[0], pygit2.Tree):
        return None
    return found[0], found[1]


_MAX_DEPTH = 64  # folders deep a listing goes through links (two links leading to each other)


def _file_out_of_tree(
    repo: pygit2.Repository, holder: pygit2.Repository, entry: pygit2.Object, path: str
) -> bool:
    """Whether the symbolic link ``entry`` (of ``holder``) at ``path``, which leads out of the
    tree, leads to a file: on this machine, where the run took it."""
    try:
        text = os.fsdecode(holder[entry.id].data)  # type: ignore[attr-defined]
    except (KeyError, ValueError, AttributeError):
        return False
    top = repo.workdir or ""
    return bool(top) and os.path.isfile(os.path.join(top, posixpath.dirname(path), text))


def _lookup(
    repo: pygit2.Repository,
    tree: pygit2.Tree,
    path: str,
    opened: _Opened,
    unregistered: list[str] | None = None,
    hops: int = 0,
) -> tuple[pygit2.Object, _Place] | None:
    """The object at ``path`` of ``tree`` (``""``: the tree), looked up through submodules at
    the commits the trees record and through symbolic links to paths of the tree, with the
    repository that holds it; None when absent (a link out of the tree among them).
    ``unregistered`` receives the path of each gitlink passed through that the ``.gitmodules``
    of the tree holding it gives no URL (``git add`` of a repository: a clone cannot fetch it,
    ``git submodule update`` says "No url found")."""
    obj: pygit2.Object = tree
    place: _Place = (repo, "", tree)
    done: list[str] = []
    names = path.split("/") if path else []
    for n, name in enumerate(names):
        if not isinstance(obj, pygit2.Tree):
            return None
        try:
            entry = obj[name]
        except (KeyError, ValueError):
            return None
        done.append(name)
        if entry.filemode == FileMode.LINK:
            # as the file system follows it (pytest collects a linked folder's files)
            target = _link_target(place[0], entry, "/".join(done))
            if target is None or hops >= _MAX_HOPS:
                return None
            rest = "/".join([target, *names[n + 1 :]]).strip("/")
            return _lookup(repo, tree, rest, opened, unregistered, hops + 1)
        if entry.filemode == FileMode.COMMIT:
            if unregistered is not None:
                base, within = place[1], "/".join(done)
                rel = within[len(base) + 1 :] if base else within
                if not _submodule_url(place[2], rel):
                    unregistered.append(within)
            inner = _submodule_tree(place, "/".join(done), str(entry.id), opened)
            if inner is None:
                return None
            obj, place = inner
        else:
            obj = entry
    return obj, place


_MAX_HOPS = 40  # links followed in one lookup, as Linux's ELOOP


def _link_target(repo: pygit2.Repository, entry: pygit2.Object, path: str) -> str | None:
    """The path of the tree the symbolic link ``entry`` at ``path`` leads to ("": the top),
    None when it leads out of the tree (an absolute target, or above the top)."""
    try:
        blob = repo[entry.id]
    except (KeyError, ValueError):
        return None
    data = blob_bytes(repo, blob) if isinstance(blob, pygit2.Blob) else None
    if data is None:
        return None
    target = data.decode("utf-8", "surrogateescape")
    if not target or target.startswith("/"):
        return None
    joined = posixpath.normpath(posixpath.join(posixpath.dirname(path), target))
    if joined == ".":
        return ""
    if joined == ".." or joined.startswith("../"):
        return None
    return joined


def _submodule_tree(
    where: _Place, path: str, commit_id: str, opened: _Opened
) -> tuple[pygit2.Tree, _Place] | None:
    """The tree of commit ``commit_id`` in the submodule checked out at ``path`` (of the top
    tree) inside the repository ``where``, and the submodule's place; None when it is not
    checked out or lacks the commit (pytest finds no files there either). ``opened`` keeps
    the answer for the next path through it."""
    key = (path, commit_id)
    if key not in opened:
        opened[key] = _open_submodule_tree(where, path, commit_id)
    return opened[key]


def _open_submodule_tree(
    where: _Place, path: str, commit_id: str
) -> tuple[pygit2.Tree, _Place] | None:
    repo, base, tree = where
    rel = path[len(base) + 1 :] if base else path
    # Checked out, or not (`git submodule deinit` keeps its git dir in the superproject's):
    # either way the tree it records has the files pytest collects there when it is.
    flags = pygit2.enums.RepositoryOpenFlag
    folders = [(os.path.join(repo.workdir, rel), flags.NO_SEARCH)] if repo.workdir else []
    name = _submodule_name(tree, rel)
    if name is not None:  # its objects only: the work tree it names may be gone
        folders.append((os.path.join(repo.path, "modules", name), flags.NO_SEARCH | flags.BARE))
    for folder, how in folders:
        if not os.path.isdir(folder):
            continue
        try:
            sub = pygit2.Repository(folder, flags=how)
            commit = sub.get(commit_id)
        except (pygit2.GitError, ValueError, KeyError):
            continue
        if isinstance(commit, pygit2.Commit):
            return commit.tree, (sub, path, commit.tree)
    return None


_SECTION = re.compile(r'^\s*\[\s*submodule\s+"((?:[^"\\]|\\.)*)"\s*\]', re.M | re.I)
_PATH = re.compile(r"^\s*path\s*=\s*(.*?)\s*$", re.M | re.I)
_URL = re.compile(r"^\s*url\s*=\s*(.*?)\s*$", re.M | re.I)
_UPDATE = re.compile(r"^\s*update\s*=\s*(.*?)\s*$", re.M | re.I)


def _submodule_name(tree: pygit2.Tree, rel: str) -> str | None:
    """The name that the ``.gitmodules`` of ``tree`` gives the submodule at ``rel`` (its git
    dir is ``modules/<name>`` of the repository's own); None when it names none."""
    found = _submodule_entry(tree, rel)
    if found is None:
        return None
    name = found[0]
    return name if name and ".." not in name.split("/") else None


def _submodule_url(tree: pygit2.Tree, rel: str) -> bool:
    """Whether the ``.gitmodules`` of ``tree`` gives the submodule at ``rel`` a URL that a
    clone fetches it from: not one it skips (``update = none``: `git submodule update` and
    `clone --recurse-submodules` say "Skipping submodule")."""
    found = _submodule_entry(tree, rel)
    return found is not None and bool(found[1]) and found[2] != "none"


def _submodule_entry(tree: pygit2.Tree, rel: str) -> tuple[str, str, str] | None:
    """The name, URL and ``update`` (``""`` when none) of the section of the ``.gitmodules`` of
    ``tree`` whose path is ``rel``; None when none is."""
    try:
        blob = tree[".gitmodules"]
    except KeyError:
        return None
    if not isinstance(blob, pygit2.Blob):
        return None
    text = blob.data.decode("utf-8", "replace")
    sections = list(_SECTION.finditer(text))
    for n, section in enumerate(sections):
        end = sections[n + 1].start() if n + 1 < len(sections) else len(text)
        for found in _PATH.finditer(text, section.end(), end):
            if _value(found.group(1)) == rel:
                urls = [_value(u.group(1)) for u in _URL.finditer(text, section.end(), end)]
                how = [_value(u.group(1)) for u in _UPDATE.finditer(text, section.end(), end)]
                name = section.group(1).replace('\\"', '"').replace("\\\\", "\\")
                return name, urls[-1] if urls else "", how[-1].lower() if how else ""
    return None


def _value(raw: str) -> str:
    """A value of a git config line as git reads it: quotes taken off, escapes applied, an
    unquoted ``#`` or ``;`` beginning a comment."""
    out: list[str] = []
    quoted = False
    n = 0
    while n < len(raw):
        c = raw[n]
        if c == "\\" and n + 1 < len(raw):
            out.append(_ESCAPES.get(raw[n + 1], raw[n + 1]))
            n += 2
            continue
        if c == '"':
            quoted = not quoted
        elif c in "#;" and not quoted:
            break
        else:
            out.append(c)
        n += 1
    return "".join(out).strip()


_ESCAPES = {"n": "\n", "t": "\t", "b": "\b"}


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
            current.append(coverage.Part(str(path), cov, _session_failed(rep.properties)))
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
    gone = coverage.superseded(current)
    listed = [p for p in listed if p["evidence"] not in gone]
    merge = coverage.merge([p for p in current if p.label not in gone], suites)
    by_suite = [
        {
            "root": s.label,
            "config": s.config.source or None,
            # (a declared suite the tree holds no folder for stands as that folder: no file)
            "files": len([f for f in s.files if f != s.root]),
            "digest": s.digest,
            "missing": len([f for f in s.files if f in set(merge.missing)]),
            "problems": list(s.problems),  # what genstamp (and pytest) could not read
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
