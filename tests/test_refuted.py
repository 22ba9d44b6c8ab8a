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


def test_a_pass_older_than_a_failure_the_record_drops_does_not_stand_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The record keeps the newest ``LIMIT`` failures: a tree passed, then failed, and enough
    other trees failed since for its failure to be dropped. Its pass must not be taken for it
    again (h206: accepted once 500 other runs had failed). A pass newer than the dropped
    failure stands."""
    from genstamp import verified

    monkeypatch.setattr(refuted, "LIMIT", 3)
    gitdir = init_repo(tmp_path / "repo") / ".git"
    verified.remember(gitdir, [A], now=100)
    refuted.record(gitdir, A, now_ns=200 * 10**9)  # A failed after it passed
    verified.remember(gitdir, [B], now=300)
    refuted.record(gitdir, B, now_ns=250 * 10**9)  # B passed after it failed
    assert set(verified.everywhere(gitdir, refuted.trees(gitdir))) == {B}
    for n in range(3):  # three more failures: A's and B's are dropped
        refuted.record(gitdir, str(n) * 40, now_ns=(400 + n) * 10**9)
    assert A not in refuted.trees(gitdir) and B not in refuted.trees(gitdir)
    assert set(verified.everywhere(gitdir, refuted.trees(gitdir))) == {B}
