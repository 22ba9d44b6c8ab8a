"""The record of failed trees (``genstamp.refuted``): one writer at a time."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

import pytest
from conftest import init_repo

from genstamp import refuted

A, B = "a" * 40, "b" * 40


def test_two_failing_runs_at_once_both_stay_recorded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two worktrees' runs fail at once: the second reads the record while the first is still
    writing it. Neither failure may be lost (the last writer must not win)."""
    gitdir = init_repo(tmp_path / "repo") / ".git"
    write = refuted.write_atomic
    writing = threading.Event()

    def slow_first(path: Path, data: bytes, **kwargs: Any) -> None:
        if threading.current_thread().name == "first":
            writing.set()
            time.sleep(0.5)  # a slow disk: the other run reads meanwhile
        write(path, data, **kwargs)

    monkeypatch.setattr(refuted, "write_atomic", slow_first)
    first = threading.Thread(target=refuted.record, args=(gitdir, A), name="first")
    first.start()
    assert writing.wait(10)
    refuted.record(gitdir, B)
    first.join()
    assert set(refuted.trees(gitdir)) == {A, B}


def test_a_record_that_cannot_be_written_says_so_and_what_to_mend(tmp_path: Path) -> None:
    """The failure cannot be recorded: the line says so and names the file to mend."""
    gitdir = init_repo(tmp_path / "repo") / ".git"
    refuted.path_of(gitdir).with_name(refuted.FILE + ".lock").mkdir(parents=True)
    said = refuted.record_failure(gitdir, A)
    assert said is not None and said.startswith(f"this run failed on tree {A[:12]}")
    assert f"make {refuted.path_of(gitdir)} writable" in said
    assert refuted.trees(gitdir) == {}
