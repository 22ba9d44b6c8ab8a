"""`genstamp demo` replays the incident end to end, and says every line whole."""

from __future__ import annotations

import subprocess
import sys

import pytest
from conftest import subprocess_env

pytestmark = pytest.mark.e2e


def test_the_demo_replays_the_incident_and_cuts_no_line() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "genstamp", "demo"],
        capture_output=True,
        text=True,
        env=subprocess_env(),
        timeout=300,
    )
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out
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
