"""The ways the tree identity can be known, for the oracle tests to run each of them: a whole
walk, the record kept in the git dir (``idcache``) confirmed by `git status` or by libgit2's
walk, and the record with a monitor (Watchman)."""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pygit2
import pytest
from conftest import git

from genstamp import idcache, identity
from genstamp.identity import Scan, scan
from genstamp.repo import common_gitdir, open_checkout
from genstamp.watch import settings

# The racy window the tests run with: above the kernel's timestamp tick (a jiffy, at most
# 10 ms), far below the real one, so that a test need not wait seconds for a record to vouch.
RACY_NS = 30_000_000
MODES = ("plain", "libgit2-walk", "watchman")


def watchman_ready() -> bool:
    return bool(shutil.which("watchman")) and importlib.util.find_spec("pywatchman") is not None


def require_watchman() -> None:
    """Skip without Watchman here; in CI (which installs it) fail instead."""
    if not watchman_ready():
        if os.environ.get("CI"):
            pytest.fail("watchman and pywatchman are missing: .ci/run installs them")
        pytest.skip("watchman or pywatchman is not installed")


SETTLE_NS = RACY_NS * 3 // 2


def settle(path: Path | None = None) -> None:
    """Wait out the racy window: what was written before is now old enough to vouch. Given a
    checkout's ``path``, only until its newest write is that old: the last change (ctime) of
    anything in its work tree and its git dirs (objects aside) and of the ignore and attribute
    files genstamp reads, which are all the stamps the record's racy checks look at (a write
    sets the ctime, even one that puts the mtime back). Without ``path``, the whole window."""
    if path is None:
        time.sleep(SETTLE_NS / 1e9)
        return
    checkout = open_checkout(path)
    stamps = settings(checkout)
    try:
        newest = max(
            _newest_change(checkout.workdir),
            _newest_change(checkout.gitdir),
            _newest_change(common_gitdir(checkout.gitdir)),
            *(stamp[3] for stamp in (stamps.index_file, *(s for _, s in stamps.files)) if stamp),
        )
    except OSError:  # something could not be looked at: the whole window
        newest = time.time_ns()
    wait = newest + SETTLE_NS - time.time_ns()
    if wait > 0:
        time.sleep(wait / 1e9)


def _newest_change(folder: Path) -> int:
    """The latest ctime of ``folder`` and of everything under it (symbolic links not followed;
    a git dir's object store left out: nothing in it is a stamp the record looks at)."""
    newest = os.lstat(folder).st_ctime_ns
    stack = [os.fspath(folder)]
    while stack:
        top = stack.pop()
        in_git_dir = os.path.exists(os.path.join(top, "HEAD"))
        with os.scandir(top) as entries:
            for entry in entries:
                newest = max(newest, entry.stat(follow_symlinks=False).st_ctime_ns)
                if entry.is_dir(follow_symlinks=False) and not (
                    in_git_dir and entry.name == "objects"
                ):
                    stack.append(entry.path)
    return newest


def kept_walks(path: Path, monitor: bool) -> list[Scan]:
    """Two identities from the kept record (with the monitor on or off), after the racy window:
    the first may walk and keep, the second may use what the first kept."""
    config = pygit2.Repository(str(path)).config  # `git config --get`, without its process
    configured = str(config["genstamp.monitor"]) if "genstamp.monitor" in config else ""
    wanted = "watchman" if monitor else ""
    if configured != wanted:
        if monitor:
            git(path, "config", "genstamp.monitor", "watchman")
        else:
            git(path, "config", "--unset", "genstamp.monitor", check=False)
    settle(path)
    return [scan(open_checkout(path), cache=True) for _ in range(2)]


def unwatch(path: Path) -> None:
    """Drop Watchman's watch of ``path`` (a test's repository), if it has one."""
    subprocess.run(
        ["watchman", "watch-del", str(path)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        check=False,
    )


class Modes:
    """The mode a test runs in, and the repositories it had watched."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.watched: set[Path] = set()

    def kept(self, path: Path) -> list[Scan]:
        monitor = self.name == "watchman"
        if monitor:
            self.watched.add(open_checkout(path).workdir)
        return kept_walks(path, monitor)


_CURRENT: list[Modes] = []


@pytest.fixture(autouse=True, params=MODES)
def identity_mode(
    request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch
) -> Iterator[Modes]:
    """Imported by a test module: each of its tests runs without a monitor and with Watchman."""
    name = str(request.param)
    if name == "watchman":
        require_watchman()
    monkeypatch.setattr(idcache, "_RACY_NS", RACY_NS)
    if name == "libgit2-walk":  # the kept record confirmed by libgit2's walk, not git's
        monkeypatch.setattr(identity, "GIT_STATUS", False)
    state = Modes(name)
    _CURRENT[:] = [state]
    try:
        yield state
    finally:
        _CURRENT.clear()
        for root in state.watched:
            unwatch(root)


def kept_as_the_test_runs(path: Path) -> list[Scan]:
    """``kept_walks`` with the monitor on or off as the running test's ``identity_mode`` says."""
    return _CURRENT[0].kept(path)
