"""Where the pytest plugin's cost falls: a pytest run's phases, with the plugin and without.

    python bench/phases.py PROJECT [--runs N]

Runs ``python -m pytest -q`` in PROJECT (a folder holding a pytest suite: one that
``python bench/run.py --only pytest-plugin pytest-subprocesses --keep --workdir W`` kept, say)
N times with genstamp's plugin and N times with ``-p no:genstamp``, interleaved, bytecode
writing on. A small plugin of its own (written to a temporary folder, loaded with ``-p``) notes
the time at the first and the last implementation of each of pytest's session hooks and at the
first test's setup; the process's end is the time the harness sees it exit. It prints the
median of each mark, in ms from the process's start, both ways, and the difference. A mark's
difference less the one before it is what the plugin adds in that phase.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

HOOKS = (
    ("configure", "config"),
    ("sessionstart", "session"),
    ("collection", "session"),
    ("runtestloop", "session"),
    ("sessionfinish", "session"),
    ("terminal_summary", "terminalreporter"),
    ("unconfigure", "config"),
)

PLUGIN_HEAD = """\
import os, time
import pytest

_OUT = os.environ["GENSTAMP_PHASES_OUT"]


def _mark(name):
    with open(_OUT, "a") as fh:
        fh.write(f"{name} {time.time()}\\n")


_seen = []


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item):
    if not _seen:
        _seen.append(True)
        _mark("first test setup")
"""

PLUGIN_HOOK = """

@pytest.hookimpl({which}=True, specname="pytest_{hook}")
def pytest_phases_{hook}_{which}({arg}):
    _mark("{hook} ({label})")
"""


def plugin_source() -> str:
    parts = [PLUGIN_HEAD]
    for hook, arg in HOOKS:
        for which, label in (("tryfirst", "first"), ("trylast", "last")):
            parts.append(PLUGIN_HOOK.format(which=which, hook=hook, arg=arg, label=label))
    return "".join(parts)


def one_run(project: Path, env: dict[str, str], out: Path, plugin_on: bool) -> dict[str, float]:
    """The marks of one pytest process, in ms from its start (the harness's clock)."""
    out.write_text("")
    argv = [sys.executable, "-m", "pytest", "-q", "-p", "genstamp_phases"]
    if not plugin_on:
        argv += ["-p", "no:genstamp"]
    started = time.time()
    subprocess.run(argv, cwd=project, env=env, stdout=subprocess.DEVNULL, check=False)
    ended = time.time()
    marks = {}
    for line in out.read_text().splitlines():
        name, _, when = line.rpartition(" ")
        marks.setdefault(name, (float(when) - started) * 1000)
    marks["process end"] = (ended - started) * 1000
    return marks


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    p.add_argument("project", type=Path, help="a folder holding a pytest suite")
    p.add_argument("--runs", type=int, default=15, help="runs each way, interleaved (15)")
    args = p.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / "genstamp_phases.py").write_text(plugin_source())
        env = dict(os.environ)
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        env["PYTHONPATH"] = os.pathsep.join(p for p in (tmp, env.get("PYTHONPATH")) if p)
        out = Path(tmp) / "marks.txt"
        env["GENSTAMP_PHASES_OUT"] = str(out)
        on: list[dict[str, float]] = []
        off: list[dict[str, float]] = []
        for _ in range(args.runs):
            on.append(one_run(args.project, env, out, True))
            off.append(one_run(args.project, env, out, False))
    names = sorted(on[0], key=lambda n: statistics.median(r[n] for r in on))
    print(f"{'mark (ms from the start)':34s} {'plugin':>9s} {'without':>9s} {'added':>8s}")
    for name in names:
        a = statistics.median(r[name] for r in on)
        b = statistics.median(r[name] for r in off if name in r) if name in off[0] else 0.0
        print(f"{name:34s} {a:9.1f} {b:9.1f} {a - b:+8.1f}")
    try:
        load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    except OSError:
        load = "unknown"
    print(f"\n{args.runs} runs each way, interleaved; load average {load}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
