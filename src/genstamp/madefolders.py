"""The folders that runs made in the work tree, kept in the git dir.

A test that makes a folder only where it is missing (``if not out.exists(): out.mkdir()``, or
``mkdir -p`` in a shell) makes it in its first run; later runs find it there, empty, and write
into it as a clean clone's run would after making it. ``empty-folder`` must not refuse those
runs, so each run adds the folders its processes made to ``<git dir>/genstamp/folders.json``,
each as it left it (its inode and change time, ``loads.folder_stamp``). A later run's use of
the folder counts as a run's only while the folder is as a run left it: one removed and made
again, or changed by hand since, is no run's (and leaves the list)."""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Iterable
from pathlib import Path

from genstamp import versioned
from genstamp.atomic import read_kept, write_atomic
from genstamp.loads import folder_stamp, holds_no_file
from genstamp.typedtuple import NamedTuple

FORMAT = "genstamp-folders"  # genstamp 0.2.0 wrote version 1 without the name: read alike
VERSION = 1
FILE = "folders.json"


class Made(NamedTuple):
    """The folders (absolute paths) runs made, each with its ``loads.folder_stamp`` as a run
    left it, and why none are known when the file is another genstamp's."""

    folders: dict[str, str]
    problem: str | None = None


def made(gitdir: Path) -> Made:
    """What runs made; a torn file adds nothing (the folder is then judged as the run found
    it, and the file written anew), another version's adds nothing and says so."""
    path = gitdir / "genstamp" / FILE
    try:
        data = json.loads(read_kept(path).decode("utf-8"))
    except (OSError, ValueError):
        return Made({})
    if not isinstance(data, dict):
        return Made({})
    if data.get("format", FORMAT) != FORMAT or not versioned.matches(data.get("version"), VERSION):
        found = f"{data.get('format', FORMAT)} version {data.get('version')!r}"
        return Made(
            {},
            f"{path} is {found}; this genstamp reads {FORMAT} version {VERSION}: the folders "
            "earlier runs made are unknown to this run, and one a test makes only where it is "
            "missing is refused as empty-folder (use one genstamp version in pre-commit and "
            f"the test env, or delete {path})",
        )
    folders = data.get("folders")
    if not isinstance(folders, dict):
        return Made({})
    return Made({k: v for k, v in folders.items() if isinstance(k, str) and isinstance(v, str)})


def keep(gitdir: Path, before: Made, made_now: Iterable[str], found: Iterable[str]) -> None:
    """What runs made, after this one: ``before`` (as read when it began judging) less what
    this run ``found`` otherwise than a run left it, and the folders it made or found as a run
    left them (``made_now``), each as it leaves them and only while it holds no file (the only
    ones a later run can find empty). Another genstamp's file is left as it is. Never raises:
    the list only spares a later run a refusal."""
    if before.problem is not None:
        return
    kept = {}
    for folder, was in before.folders.items():
        try:
            if folder_stamp(os.stat(folder)) == was:  # untouched since a run left it
                kept[folder] = was
        except OSError:
            continue
    for folder in {*made_now, *found}:
        try:
            if holds_no_file(folder):
                kept[folder] = folder_stamp(os.stat(folder))
        except OSError:
            continue
    if kept == before.folders:
        return
    data = {"format": FORMAT, "version": VERSION, "folders": dict(sorted(kept.items()))}
    with contextlib.suppress(OSError):
        write_atomic(gitdir / "genstamp" / FILE, json.dumps(data).encode(), sync=False)
