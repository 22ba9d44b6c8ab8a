"""The parts kept for the current generation: every bound run's evidence, in the git dir.

``<git dir>/genstamp/parts/<generation id>/<tested tree>.<digest of the tests it ran>.xml``:
running the same selection again on the same tree replaces its part; a run of another tree
keeps its own (``git stash``, a test of HEAD, ``git stash pop``: the part of the stashed work
stands for it again). The parts of the newest ``TREES`` trees are kept. A generation's folder
is pruned when a run of another writes its first part, unless that generation is one the
stamp still names (``Generation.retired``: a branch tested, then left by a checkout).
"""

from __future__ import annotations

import contextlib
import os
import shutil
from collections.abc import Collection
from pathlib import Path

from genstamp.atomic import write_atomic

FOLDER = "parts"
TREES = 16  # trees whose parts a generation keeps, the newest


def folder(state: Path, generation: str) -> Path:
    return state / FOLDER / generation


def keep(
    state: Path,
    generation: str,
    tree: str,
    name: str,
    source: Path,
    *,
    link: bool = True,
    also: Collection[str] = (),
) -> Path:
    """Keep the evidence at ``source`` as the part of the tests ``name`` stands for, run on
    ``tree`` (atomically), and prune the folders of generations other than this one and
    ``also``. A hard link where it can (``link``) when the evidence is replaced, never
    rewritten in place: the part keeps this run's bytes without writing them twice. A file
    the next run writes in place (pytest's own ``--junitxml`` at the evidence path) is
    copied. (A failing run refutes older runs of its tree elsewhere: ``genstamp.refuted``.)"""
    here = folder(state, generation)
    root = here.parent
    if root.is_dir():
        for other in root.iterdir():
            if other.name != generation and other.name not in also and other.is_dir():
                shutil.rmtree(other, ignore_errors=True)
    path = here / f"{tree[:16]}.{name}.xml"
    try:
        return _link_or_copy(here, path, source, link)
    finally:
        _prune_trees(here)


def _link_or_copy(here: Path, path: Path, source: Path, link: bool) -> Path:
    here.mkdir(parents=True, exist_ok=True)
    if link:
        tmp = here / f".{path.stem}.{os.getpid()}.tmp"
        try:
            with contextlib.suppress(FileNotFoundError):
                tmp.unlink()
            os.link(source, tmp)
            os.replace(tmp, path)
            return path
        except OSError:  # no hard links here: a copy
            with contextlib.suppress(OSError):
                tmp.unlink()
    write_atomic(path, source.read_bytes())
    return path


def _prune_trees(here: Path) -> None:
    """Only the parts of the ``TREES`` trees run most recently stay (those of an older
    genstamp, named without their tree, count as one)."""
    newest: dict[str, int] = {}
    found: list[tuple[str, Path]] = []
    with contextlib.suppress(OSError):
        for p in here.iterdir():
            if p.suffix == ".xml":
                tree = p.name.partition(".")[0] if p.name.count(".") >= 2 else ""
                found.append((tree, p))
                with contextlib.suppress(OSError):
                    newest[tree] = max(newest.get(tree, 0), p.stat().st_mtime_ns)
    if len(newest) <= TREES:
        return
    stale = set(sorted(newest, key=newest.__getitem__)[:-TREES])
    for tree, p in found:
        if tree in stale:
            with contextlib.suppress(OSError):
                p.unlink()


def listing(state: Path, generation: str | None) -> list[Path]:
    """The current generation's parts, oldest first."""
    if not generation:
        return []
    with contextlib.suppress(OSError):
        found = [p for p in folder(state, generation).iterdir() if p.suffix == ".xml"]
        return sorted(found, key=lambda p: (p.stat().st_mtime_ns, p.name))
    return []
