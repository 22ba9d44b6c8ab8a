"""The parts kept for the current generation: every bound run's evidence, in the git dir.

``<git dir>/genstamp/parts/<generation id>/<digest of the tests it ran>.xml``: running the same
selection again replaces its part; a part of another generation is pruned when a run of a new
one writes its first part (and never read: the gate reads the current generation's folder).
"""

from __future__ import annotations

import contextlib
import os
import shutil
from pathlib import Path

from genstamp.atomic import write_atomic

FOLDER = "parts"


def folder(state: Path, generation: str) -> Path:
    return state / FOLDER / generation


def keep(state: Path, generation: str, name: str, source: Path, *, link: bool = True) -> Path:
    """Keep the evidence at ``source`` as one part (atomically), and prune the folders of other
    generations. A hard link where it can (``link``) when the evidence is replaced, never
    rewritten in place: the part keeps this run's bytes without writing them twice. A file
    the next run writes in place (pytest's own ``--junitxml`` at the evidence path) is
    copied."""
    here = folder(state, generation)
    root = here.parent
    if root.is_dir():
        for other in root.iterdir():
            if other.name != generation and other.is_dir():
                shutil.rmtree(other, ignore_errors=True)
    path = here / f"{name}.xml"
    here.mkdir(parents=True, exist_ok=True)
    if link:
        tmp = here / f".{name}.{os.getpid()}.tmp"
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


def listing(state: Path, generation: str | None) -> list[Path]:
    """The current generation's parts, oldest first."""
    if not generation:
        return []
    with contextlib.suppress(OSError):
        found = [p for p in folder(state, generation).iterdir() if p.suffix == ".xml"]
        return sorted(found, key=lambda p: (p.stat().st_mtime_ns, p.name))
    return []
