"""The folders runs made, kept in the git dir: what a later run finds as a run left it."""

from __future__ import annotations

import json
import os
from pathlib import Path

from genstamp import loads, madefolders


def test_a_folder_stays_the_runs_only_as_a_run_left_it(tmp_path: Path) -> None:
    gitdir, out, full = tmp_path / ".git", tmp_path / "out", tmp_path / "full"
    (gitdir / "genstamp").mkdir(parents=True)
    out.mkdir()
    full.mkdir()
    (full / "f").write_text("x")
    madefolders.keep(gitdir, {}, [str(out), str(full)], [])
    kept = madefolders.made(gitdir)
    assert kept == {str(out): loads.folder_stamp(os.stat(out))}  # full holds a file
    madefolders.keep(gitdir, kept, [], [])
    assert madefolders.made(gitdir) == kept  # untouched: still the runs'
    (out / "f").write_text("x")  # changed by hand since
    (out / "f").unlink()
    madefolders.keep(gitdir, kept, [], [])
    assert madefolders.made(gitdir) == {}


def test_another_version_or_a_torn_file_adds_nothing(tmp_path: Path) -> None:
    gitdir = tmp_path / ".git"
    (gitdir / "genstamp").mkdir(parents=True)
    path = gitdir / "genstamp" / madefolders.FILE
    path.write_text(json.dumps({"version": 99, "folders": {str(tmp_path): "1:2"}}))
    assert madefolders.made(gitdir) == {}
    path.write_text('{"version": 1, "folders": {')
    assert madefolders.made(gitdir) == {}
    path.write_text("[1]")
    assert madefolders.made(gitdir) == {}
