"""The benchmark harness must keep running: one ``--quick --json`` run, every figure present.

No duration is asserted: only that each figure was measured and came out as positive numbers.
"""

from __future__ import annotations

import importlib.util
import json
import math
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from conftest import subprocess_env
from identity_modes import watchman_ready

ROOT = Path(__file__).resolve().parent.parent
HARNESS = ROOT / "bench" / "run.py"
# Every figure the harness declares (``--only`` takes the same names) is measured, but the
# pre-commit and clean-room ones (left out by --quick) and growth (not a figure of its own).
SPEC = importlib.util.spec_from_file_location("bench_run", HARNESS)
assert SPEC is not None and SPEC.loader is not None
BENCH = importlib.util.module_from_spec(SPEC)
sys.modules[SPEC.name] = BENCH  # its dataclasses look their module up there
SPEC.loader.exec_module(BENCH)
MEASURED = set(BENCH.FIGURES) - {"post-checkout-pre-commit", "clean-room", "growth"}
# The smallest run that still measures every figure: one timed pair each (the time is process
# start-up, which repository size barely changes), two repository sizes for the growth figure.
QUICK = ("--quick", "--pairs", "1", "--files", "20", "40", "--suite-files", "20", "--tests", "5")
TARGETS = {
    "identity-vs-pygit2": 1.2,
    "status-process-vs-git": 1.5,
    "status-watchman-vs-git": 1.0,
    "scrub-vs-find": 1.5,
    "verify-vs-pygit2": 1.4,
    "pytest-plugin": 1.10,
    "pytest-subprocesses": 1.15,
    "verify-attestations": 1.0,
    "branch-switch": 1.25,
    "post-checkout-growth": 1.10,
}


def positive(value: Any) -> bool:
    return isinstance(value, (int, float)) and math.isfinite(value) and value > 0


@pytest.mark.e2e
def test_quick_run_measures_every_figure(tmp_path: Path) -> None:
    """One run of the harness (a single test, so that xdist cannot start it twice)."""
    quick = run_quick(tmp_path / "bench")
    check_figures(quick)
    check_growth_and_machine(quick)
    check_verify_judged_fresh_evidence(quick)


def run_quick(workdir: Path) -> dict[str, Any]:
    workdir.mkdir()
    proc = subprocess.run(
        [sys.executable, str(HARNESS), *QUICK, "--json", "--workdir", str(workdir)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env=subprocess_env(),
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr[-4000:]
    data: dict[str, Any] = json.loads(proc.stdout)
    assert not list(workdir.iterdir()), "the harness left its repositories behind"
    return data


def check_figures(quick: dict[str, Any]) -> None:
    figures = {f["key"]: f for f in quick["figures"]}
    assert set(figures) == {*MEASURED, "post-checkout-pre-commit", "clean-room"}
    for key in MEASURED:
        fig = figures[key]
        if key == "status-watchman-vs-git" and not watchman_ready() and not os.environ.get("CI"):
            assert fig["skipped"], key  # says why: Watchman is not installed here
            continue
        assert fig["skipped"] is None, key
        assert fig["pairs"] == 1, key
        assert len(fig["a_s"]) == len(fig["b_s"]) == fig["pairs"], key
        assert all(positive(t) for t in fig["a_s"] + fig["b_s"]), key
        for name in ("median_a_s", "median_b_s", "ratio"):
            assert positive(fig[name]), (key, name)
        assert fig["target"] == TARGETS.get(key), key
        assert fig["met"] is (None if key not in TARGETS else fig["ratio"] <= fig["target"])
    # The branch switch's target is on its largest repository (figures keeps the last of a key).
    switches = [f for f in quick["figures"] if f["key"] == "branch-switch"]
    assert [f["files"] for f in switches] == sorted(f["files"] for f in switches)
    assert len(switches) == 2 and switches[0]["target"] is None
    assert figures["post-checkout-growth"]["files"] == switches[-1]["files"]
    # --quick leaves the pre-commit figure out unless asked, and says so.
    assert figures["post-checkout-pre-commit"]["skipped"]
    assert figures["post-checkout-pre-commit"]["median_a_s"] is None
    # and the clean-room figure (it builds a virtual environment)
    assert figures["clean-room"]["skipped"]


def check_growth_and_machine(quick: dict[str, Any]) -> None:
    growth = quick["growth"]
    assert len(growth["points"]) >= 2
    sizes = [p["files"] for p in growth["points"]]
    assert sizes == sorted(sizes) and len(set(sizes)) == len(sizes)
    for point in growth["points"]:
        assert positive(point["identity_s"]) and positive(point["pygit2_status_s"])
    assert isinstance(growth["identity_per_1000_files_s"], float)
    machine = quick["machine"]
    for key in ("cores", "python", "git", "pygit2", "libgit2", "disk"):
        assert machine[key], key
    assert quick["quick"] is True
    assert "--quick" in quick["command"]


def check_verify_judged_fresh_evidence(quick: dict[str, Any]) -> None:
    """The verify figures time a real accepted verdict, not a fast refusal."""
    figures = {f["key"]: f for f in quick["figures"]}
    assert figures["verify-vs-pygit2"]["note"].startswith("verdict: accepted")
    assert "equals" in figures["identity-vs-pygit2"]["note"]


def test_phases_marks_each_phase_both_ways(repo: Path) -> None:
    """bench/phases.py keeps running: one run each way of a one-test suite, every mark printed
    with a time on both sides."""
    (repo / "tests").mkdir()
    (repo / "tests" / "test_one.py").write_text("def test_one():\n    assert True\n")
    (repo / "pyproject.toml").write_text('[tool.pytest.ini_options]\ntestpaths = ["tests"]\n')
    proc = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "phases.py"), str(repo), "--runs", "1"],
        capture_output=True,
        text=True,
        env=subprocess_env(),
        check=True,
    )
    rows = {
        line[:34].strip(): line[34:].split()
        for line in proc.stdout.splitlines()[1:]
        if line and not line.startswith("1 runs")
    }
    for mark in ("configure (first)", "first test setup", "sessionfinish (last)", "process end"):
        plugin, without, _added = rows[mark]
        assert float(plugin) > 0 and float(without) > 0, proc.stdout
