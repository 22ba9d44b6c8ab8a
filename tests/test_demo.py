"""`genstamp demo` replays the incident end to end, and says every line whole."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import ok, subprocess_env

pytestmark = pytest.mark.e2e


def demo(env: dict[str, str]) -> str:
    """``genstamp demo``'s output, which must exit 0."""
    argv = [sys.executable, "-m", "genstamp", "demo"]
    return ok(subprocess.run(argv, capture_output=True, text=True, env=env, timeout=300))


def test_the_demo_replays_the_incident_and_cuts_no_line() -> None:
    out = demo(subprocess_env())
    assert out.rstrip().endswith(
        "stale evidence refused, fresh evidence accepted, and a warm green the clean room "
        "could not repeat refused."
    ), out
    # the ending: warm green, clean red, the gate refusing with the divergence rule
    assert "FAILED in a clean checkout" in out and "clean-room-diverged: tree" in out, out
    for step in ("1. ", "2. ", "3. ", "4. ", "5. ", "6. "):
        assert f"\n{step}" in out, step
    # the gate's refusal of the warm log is told whole (it was once cut mid-word)
    assert "unbound-evidence:" in out and "do not edit the JUnit file" in out
    assert not [line for line in out.splitlines() if line.rstrip().endswith("...")], out


def test_without_a_package_index_the_demo_does_not_claim_its_ending(tmp_path: Path) -> None:
    """The clean room installs pytest and genstamp from the package index; with none, step 6
    says the clean room could not be built and the last line does not claim its refusal."""
    empty = tmp_path / "no-wheels"
    empty.mkdir()
    env = subprocess_env()
    for key in [k for k in env if k.startswith(("PIP_", "UV_"))]:
        del env[key]
    env.update(
        PIP_NO_INDEX="1",
        PIP_FIND_LINKS=str(empty),
        UV_NO_INDEX="1",
        UV_FIND_LINKS=str(empty),
        PIP_CONFIG_FILE=os.devnull,
    )
    out = demo(env)
    assert "the clean room could not be built here: genstamp: clean-run: the environment" in out
    assert "package index" in out, out
    assert "could not repeat refused" not in out, out
    assert out.rstrip().endswith("the clean-room ending could not run here (see step 6)."), out
