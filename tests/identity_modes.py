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

import pytest
from conftest import git

from genstamp import idcache, identity
from genstamp.identity import Scan, scan
from genstamp.repo import open_checkout

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


def settle() -> None:
    """Wait out the racy window: what was written before is now old enough to vouch."""
    time.sleep(RACY_NS / 1e9 * 1.5)


def kept_walks(path: Path, monitor: bool) -> list[Scan]:
    """Two identities from the kept record (with the monitor on or off), after the racy window:
    the first may walk and keep, the second may use what the first kept."""
    configured = git(path, "config", "--get", "genstamp.monitor", check=False)
    wanted = "watchman" if monitor else ""
    if configured != wanted:
        if monitor:
            git(path, "config", "genstamp.monitor", "watchman")
        else:
            git(path, "config", "--unset", "genstamp.monitor", check=False)
    settle()
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
