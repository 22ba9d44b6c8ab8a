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
    madefolders.keep(gitdir, madefolders.Made({}), [str(out), str(full)], [])
    kept = madefolders.made(gitdir)
    assert kept == ({str(out): loads.folder_stamp(os.stat(out))}, None)  # full holds a file
    madefolders.keep(gitdir, kept, [], [])
    assert madefolders.made(gitdir) == kept  # untouched: still the runs'
    (out / "f").write_text("x")  # changed by hand since
    (out / "f").unlink()
    madefolders.keep(gitdir, kept, [], [])
    assert madefolders.made(gitdir) == ({}, None)


def test_a_torn_file_adds_nothing_and_is_written_anew(tmp_path: Path) -> None:
    gitdir, out = tmp_path / ".git", tmp_path / "out"
    (gitdir / "genstamp").mkdir(parents=True)
    out.mkdir()
    path = gitdir / "genstamp" / madefolders.FILE
    for torn in ('{"version": 1, "folders": {', "[1]", '{"version": 1, "folders": [1]}'):
        path.write_text(torn)
        assert madefolders.made(gitdir) == ({}, None)
    madefolders.keep(gitdir, madefolders.made(gitdir), [str(out)], [])
    assert set(madefolders.made(gitdir).folders) == {str(out)}


def test_another_versions_file_adds_nothing_says_which_and_is_left_as_it_is(
    tmp_path: Path,
) -> None:
    gitdir, out = tmp_path / ".git", tmp_path / "out"
    (gitdir / "genstamp").mkdir(parents=True)
    out.mkdir()
    path = gitdir / "genstamp" / madefolders.FILE
    other = json.dumps({"format": "genstamp-folders", "version": 2, "folders": {}})
    path.write_text(other)
    before = madefolders.made(gitdir)
    assert before.folders == {}
    assert before.problem is not None
    assert "genstamp-folders version 2; this genstamp reads genstamp-folders version 1" in (
        before.problem
    )
    madefolders.keep(gitdir, before, [str(out)], [])
    assert path.read_text() == other  # the other genstamp's
    # genstamp 0.2.0's version 1 named no format: read as this version
    path.write_text(json.dumps({"version": 1, "folders": {str(out): "1:2"}}))
    assert madefolders.made(gitdir) == ({str(out): "1:2"}, None)
