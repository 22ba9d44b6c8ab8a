#!/usr/bin/env python3
"""The branch switch of ``bench/run.py``'s figure ``branch-switch``, three ways interleaved in one
repository: genstamp's plain hooks running another genstamp's source (``--old-src``, "before"),
running this one ("after"), and no hooks ("none"). Wall and CPU time (all processes) per switch.

    python bench/hook_before_after.py --files 100000 --old-src /path/to/old/genstamp/src

A one-off comparison for issue 16, not a figure with a target: it reuses the figure's repository.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import run as bench  # the harness beside this file

from genstamp.gitenv import isolated_git


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    p.add_argument("--files", type=int, default=100000)
    p.add_argument("--old-src", type=Path, required=True, help="the other genstamp's src/")
    p.add_argument("--runs", type=int, default=10)
    args = p.parse_args()
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        with isolated_git(tmp / "home"):
            return measure(tmp, args.files, args.old_src, args.runs)


def measure(tmp: Path, files: int, old_src: Path, runs: int) -> int:
    repo = bench.switch_repo(tmp / "repo", files)
    env = {**os.environ, "PYTHONPYCACHEPREFIX": str(tmp / "pycache")}
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # an installed genstamp has its bytecode
    old = tmp / "genstamp-old"
    old.write_text(f'#!/bin/sh\nPYTHONPATH={old_src} exec "{sys.executable}" -m genstamp "$@"\n')
    old.chmod(0o755)
    new = tmp / "genstamp-new"
    new.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m genstamp "$@"\n')
    new.chmod(0o755)
    hooks = Path(__file__).resolve().parent.parent / "hooks"
    bench.git(repo.path, "config", "core.hooksPath", str(hooks))
    subprocess.run([str(new), "stamp"], cwd=repo.path, env=env, check=True, capture_output=True)
    tag = sys.implementation.cache_tag
    switch, back = ["git", "checkout", "-q", "other"], ["git", "-c", "core.hooksPath=/dev/null"]
    back += ["checkout", "-q", "main"]
    sides = [("after", switch, new), ("none", back, None), ("before", switch, old)]
    sides.append(("none", back, None))
    times: dict[str, list[tuple[float, float]]] = {"before": [], "after": [], "none": []}
    for i in range(runs + 2):
        for name, argv, genstamp in sides:
            for folder in repo.folders[1 : bench.SWITCH_CHANGED + 1]:  # a test run's bytecode
                cache = repo.path / folder / "__pycache__"
                cache.mkdir(exist_ok=True)
                (cache / f"m1.{tag}.pyc").write_bytes(b"bytecode")
            side_env = {**env, "GENSTAMP": str(genstamp)} if genstamp else env
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            wall = bench.timed(lambda a=argv, e=side_env: bench.command(a, repo.path, e)())
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
            if i >= 2:  # warm-up
                times[name].append((wall, cpu))
    load = " ".join(Path("/proc/loadavg").read_text().split()[:3])
    for name, pairs in times.items():
        wall = statistics.median(w for w, _ in pairs) * 1000
        cpu = statistics.median(c for _, c in pairs) * 1000
        print(f"{files} files {name:<6}: wall {wall:7.1f} ms, CPU {cpu:7.1f} ms, load {load}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
