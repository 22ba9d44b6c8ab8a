"""Trees the gate accepted in this checkout, remembered so that a later push of any commit
with one of them is accepted whatever generation is current (from any worktree of the
repository: a branch tested in a linked worktree is pushed from the main one).

What is kept is a verdict, made by the gate after the run with the run's audit already checked,
on exactly that tree: never evidence older than the tree it vouches for. Kept in the git dir
(``genstamp/verified.json``), the most recent ``LIMIT`` trees, written atomically, and bound to
the checkout (``genstamp.checkout_id``): a ``cp -r`` copy does not inherit its verdicts.
"""

from __future__ import annotations

import contextlib
import json
import time
from collections.abc import Iterable, Mapping
from pathlib import Path

from genstamp import __version__, build, checkout_id, versioned
from genstamp.atomic import read_kept, write_atomic
from genstamp.errors import GenstampError
from genstamp.repo import STATE_DIR, common_gitdir

FILE = "verified.json"
FORMAT = "genstamp-verified"
# 2 names the genstamp whose gate judged (``genstamp``): only this genstamp's own verdicts are
# taken, for another's rules may have accepted what these refuse. Version 1's are forgotten.
VERSION = 2
LIMIT = 200  # trees kept; the oldest verdicts are dropped first


def path_of(gitdir: Path) -> Path:
    return gitdir / STATE_DIR / FILE


def trees(gitdir: Path) -> dict[str, int]:
    """Each tree remembered in this checkout (hex) and when it was accepted (seconds since the
    epoch), oldest first; empty when nothing is remembered here."""
    path = path_of(gitdir)
    remedy = f"delete {path} (only earlier verdicts are forgotten)"
    try:
        raw = read_kept(path)
    except FileNotFoundError:
        return {}
    except OSError as exc:
        raise GenstampError(f"cannot read {path}: {exc.strerror or exc}", remedy) from exc
    with contextlib.suppress(ValueError):
        earlier = json.loads(raw)
        if (
            isinstance(earlier, dict)
            and earlier.get("format") == FORMAT
            and versioned.matches(earlier.get("version"), 1)
        ):
            return {}  # verdicts of a genstamp that did not say which it was: judged again
    data = versioned.parse(raw, path, FORMAT, VERSION, "verdict store", remedy)
    if data.get("checkout") != checkout_id.current(gitdir):
        return {}  # verdicts of the checkout this one was copied from
    if data.get("genstamp") != __version__ or data.get("build") != build.digest():
        # another genstamp's verdicts (pre-commit's at another rev, or another build of this
        # version, between releases): judged again
        return {}
    return versioned.tree_times(data, path, remedy)


def remember(gitdir: Path, accepted: Iterable[str], *, now: int | None = None) -> None:
    """Add the ``accepted`` trees (as the most recent), keep the last ``LIMIT``. A linked
    worktree's verdicts are kept in the main worktree's store too: `git worktree remove`
    deletes its own (a hotfix tested and pushed there, then merged and pushed from main)."""
    accepted = list(accepted)
    stamp = int(time.time()) if now is None else now
    for where in dict.fromkeys([gitdir, common_gitdir(gitdir)]):
        if where != gitdir and not accepted:
            continue
        try:
            kept = trees(where)
            for tree in accepted:
                kept.pop(tree, None)
                kept[tree] = stamp
            _write(where, kept)
        except GenstampError:
            if where == gitdir:
                raise  # the main worktree's store is its own to mend


def adopt(gitdir: Path, found: Mapping[str, Path]) -> None:
    """Remember here, each at the time it was accepted, the trees of ``found`` (``everywhere``)
    that another worktree remembers: a verdict this checkout gave on them stays when that
    worktree is removed (``git worktree remove`` deletes its store)."""
    kept = trees(gitdir)
    added = False
    for tree, where in found.items():
        if tree in kept or where == gitdir:
            continue
        with contextlib.suppress(GenstampError):
            when = trees(where).get(tree)
            if when is not None:
                kept[tree] = when
                added = True
    if added:
        _write(gitdir, dict(sorted(kept.items(), key=lambda item: item[1])))


def forget_everywhere(gitdir: Path, tree: str) -> bool:
    """No worktree of the repository remembers ``tree`` as accepted any longer (a failing run
    of it that could not be recorded must not be overruled by an older pass); False when a
    store that holds it could not be rewritten."""
    return forget_older(gitdir, {tree: None})


def forget_older(gitdir: Path, failed: Mapping[str, int | None]) -> bool:
    """No worktree of the repository remembers a tree of ``failed`` as accepted before it
    failed (tree -> when, ns; None: whenever); False when a store that holds one could not be
    rewritten."""
    done = True
    for where in _worktrees(gitdir):
        try:
            kept = trees(where)
            gone = [
                t
                for t, when in kept.items()
                if t in failed and (failed[t] is None or when * 10**9 <= (failed[t] or 0))
            ]
            if gone:
                for t in gone:
                    del kept[t]
                _write(where, kept)
        except GenstampError:
            done = False
    return done


def _worktrees(gitdir: Path) -> list[Path]:
    """The git dirs of the repository's worktrees: the main one's, then the linked ones'."""
    common = common_gitdir(gitdir)
    found = [common]
    with contextlib.suppress(OSError):
        found += sorted(p for p in (common / "worktrees").iterdir() if p.is_dir())
    return found


def _write(gitdir: Path, kept: dict[str, int]) -> None:
    entries = [[tree, when] for tree, when in kept.items()][-LIMIT:]
    here = checkout_id.current(gitdir, create=True)
    data = {
        "format": FORMAT,
        "version": VERSION,
        "genstamp": __version__,
        "build": build.digest(),
        "checkout": here,
        "trees": entries,
    }
    path = path_of(gitdir)
    try:
        write_atomic(path, json.dumps(data, separators=(",", ":")).encode())
    except OSError as exc:
        raise GenstampError(f"cannot write {path}: {exc.strerror or exc}") from exc


def everywhere(gitdir: Path, refuted: Mapping[str, int] | None = None) -> dict[str, Path]:
    """Each tree remembered by a worktree of this repository -> the git dir of the worktree
    that remembers it: this one's first, then the main worktree's and the linked ones'. A
    store of another worktree that cannot be read is passed over (it is that worktree's to
    mend); each is bound to its own worktree, so a copy's verdicts still do not count. A
    verdict older than a failing run of its tree (``refuted``: tree -> ns) no longer stands."""
    others = _worktrees(gitdir)
    failed = refuted or {}
    found: dict[str, Path] = {}
    for where in [gitdir, *others]:
        if where is not gitdir and where.resolve() == gitdir.resolve():
            continue
        try:
            kept = trees(where)
        except GenstampError:
            if where is gitdir:
                raise
            continue
        for tree, when in kept.items():
            if when * 10**9 > failed.get(tree, -1):
                found.setdefault(tree, where)
    return found
