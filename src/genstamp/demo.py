"""``genstamp demo``: replay the warm-workspace incident in a temporary folder, offline."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import textwrap
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from genstamp.errors import EXIT_OK, EXIT_REFUSED, GenstampError
from genstamp.gitenv import isolated_env

OPS_A = "def add(a, b):\n    return a + b\n"
OPS_BROKEN = "def add(a, b):\n    return a + c\n"  # same size as OPS_A: the bytecode still fits
OPS_FIXED = "def add(a, b):\n    return b + a\n"
TEST = "from calc.ops import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n"
TEST_ZERO = "from calc.ops import add\n\n\ndef test_zero():\n    assert add(0, 0) == 0\n"


class _Step:
    def __init__(self) -> None:
        self.ok = True

    def say(self, text: str) -> None:
        print(text, flush=True)

    def expect(self, what: str, good: bool) -> None:
        if not good:
            self.ok = False
            print(f"   !! unexpected: {what}", flush=True)


@contextmanager
def _workspace(keep: bool) -> Iterator[Path]:
    top = Path(tempfile.mkdtemp(prefix="genstamp-demo-"))
    try:
        yield top
    finally:
        if keep:
            print(f"(kept {top})")
        else:
            shutil.rmtree(top, ignore_errors=True)


def _env(top: Path, *, bytecode: bool) -> dict[str, str]:
    env = isolated_env(top / "home")
    for var in ("PYTHONPYCACHEPREFIX", "PYTEST_ADDOPTS"):
        env.pop(var, None)
    if bytecode:
        env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def _run(cmd: Sequence[str], cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    try:
        return subprocess.run(
            list(cmd), cwd=cwd, env=env, capture_output=True, text=True, timeout=120
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise GenstampError(f"demo: cannot run {cmd[0]}: {exc}", "is git installed?") from exc


def _git(repo: Path, env: dict[str, str], *args: str) -> str:
    proc = _run(["git", "-c", "commit.gpgsign=false", *args], repo, env)
    if proc.returncode != 0:
        raise GenstampError(f"demo: git {' '.join(args)} failed: {proc.stderr.strip()}")
    return proc.stdout.strip()


def _pytest(repo: Path, env: dict[str, str], *args: str) -> tuple[int, str]:
    proc = _run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *args], repo, env)
    lines = [ln for ln in proc.stdout.splitlines() if ln.strip()]
    summary = lines[-1] if lines else proc.stderr.strip().splitlines()[-1:]
    return proc.returncode, str(summary)


def _genstamp(repo: Path, env: dict[str, str], *args: str) -> tuple[int, str]:
    proc = _run([sys.executable, "-m", "genstamp", *args], repo, env)
    return proc.returncode, (proc.stdout + proc.stderr).strip()


def _push(repo: Path, env: dict[str, str]) -> tuple[bool, str]:
    proc = _run(["git", "push", "-q", "origin", "main"], repo, env)
    refused = [ln for ln in proc.stderr.splitlines() if ln.startswith("genstamp: ")]
    return proc.returncode == 0, "\n".join(f"     {ln}" for ln in refused)


def demo(keep: bool = False) -> int:
    import importlib.util

    # pytest is no dependency of genstamp (the hooks never run it); the demo does.
    if importlib.util.find_spec("pytest") is None:
        raise GenstampError(
            "the demo runs pytest, which is not installed here", "pip install pytest"
        )
    step = _Step()
    with _workspace(keep) as top:
        (top / "no-templates").mkdir()
        env = _env(top, bytecode=False)
        warm_env = _env(top, bytecode=True)
        repo = top / "checkout"
        remote = top / "remote.git"
        _git(top, env, "-c", "init.defaultBranch=main", "init", "-q", "--bare", str(remote))
        _git(top, env, "-c", "init.defaultBranch=main", "init", "-q", str(repo))
        _git(repo, env, "remote", "add", "origin", str(remote))
        hook = repo / ".git" / "hooks" / "pre-push"
        hook.parent.mkdir(parents=True, exist_ok=True)
        hook.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m genstamp hook pre-push "$@"\n')
        hook.chmod(0o755)
        (repo / "calc").mkdir()
        (repo / "calc" / "__init__.py").write_text("")
        ops = repo / "calc" / "ops.py"
        ops.write_text(OPS_A)
        (repo / "tests").mkdir()
        (repo / "tests" / "test_ops.py").write_text(TEST)
        (repo / "tests" / "test_zero.py").write_text(TEST_ZERO)
        (repo / ".gitignore").write_text("__pycache__/\n")
        (repo / "pyproject.toml").write_text(
            '[tool.pytest.ini_options]\ntestpaths = ["tests"]\npythonpath = ["."]\n'
        )
        _git(repo, env, "add", "-A")
        _git(repo, env, "commit", "-q", "-m", "calc: add")

        step.say(
            f'genstamp demo: replaying "a warm workspace certified the previous commit" in {top}'
        )
        step.say("1. commit A: calc.ops.add works; the clone's post-checkout hook stamps it.")
        step.say("   The warm job runs plain pytest, and its bytecode stays behind.")
        _genstamp(repo, env, "stamp", "--trigger", "post-checkout")
        code, summary = _pytest(repo, warm_env, "-p", "no:genstamp")
        step.say(f"   pytest: {summary}")
        step.expect("the first warm run should pass", code == 0)

        step.say(
            "2. a patch breaks add() (`a + c`), same size; the job restores mtimes from its cache."
        )
        st = ops.stat()
        ops.write_text(OPS_BROKEN)
        os.utime(ops, ns=(st.st_atime_ns, st.st_mtime_ns))
        _git(repo, env, "commit", "-q", "-am", "calc: refactor add")
        warm_log = top / "warm-junit.xml"
        code, summary = _pytest(repo, warm_env, "-p", "no:genstamp", f"--junitxml={warm_log}")
        step.say(f"   plain pytest in the warm checkout: {summary}")
        step.say("   ^ green, yet calc/ops.py raises NameError: CPython ran commit A's bytecode.")
        step.expect("the warm run should be green (stale bytecode)", code == 0)

        step.say("3. the merge gate is handed that green log:")
        code, out = _genstamp(repo, env, "verify", "--junit", str(warm_log), "--rev", "HEAD")
        for line in out.splitlines()[:3]:
            for part in textwrap.wrap(line, 96, break_on_hyphens=False):  # whole, never cut
                step.say(f"   {part}")
        step.expect("the gate should refuse the warm log", code == 1 and "unbound-evidence" in out)
        pushed, why = _push(repo, env)
        step.say(f"   git push: {'accepted' if pushed else 'refused'}")
        if why:
            step.say(why)
        step.expect("the push should be refused", not pushed)

        step.say(
            "4. genstamp stamp scrubs the bytecode and begins a new generation; pytest reruns."
        )
        code, out = _genstamp(repo, env, "stamp")
        step.say(f"   {out.splitlines()[0] if out else ''}")
        code, summary = _pytest(repo, warm_env)
        step.say(f"   pytest with genstamp: {summary}   <- the patched code really ran")
        step.expect("the honest run should fail", code == 1)
        pushed, why = _push(repo, env)
        step.say(f"   git push: {'accepted' if pushed else 'refused'}")
        if why:
            step.say(why)
        step.expect(
            "the push should be refused (tests-failed)", not pushed and "tests-failed" in why
        )

        step.say("5. the patch is fixed (`b + a`) and committed; a fresh run in this generation.")
        ops.write_text(OPS_FIXED)
        _git(repo, env, "commit", "-q", "-am", "calc: fix add")
        code, summary = _pytest(repo, warm_env)
        step.say(f"   pytest with genstamp: {summary}")
        pushed, why = _push(repo, env)
        step.say(f"   git push: {'accepted' if pushed else 'refused'}")
        if why:
            step.say(why)
        step.expect("the push should be accepted", code == 0 and pushed)

        cleaned = _clean_room(step, repo, env, warm_env)

        if step.ok:
            step.say(
                "The gate behaved as designed: stale evidence refused, fresh evidence accepted, "
                "and a warm green the clean room could not repeat refused."
                if cleaned
                else "The gate behaved as designed: stale evidence refused and fresh evidence "
                "accepted; the clean-room ending could not run here (see step 6)."
            )
            return EXIT_OK
        step.say("genstamp demo: the gate did not behave as designed (see above)")
        return EXIT_REFUSED


def _clean_room(step: _Step, repo: Path, env: dict[str, str], warm_env: dict[str, str]) -> bool:
    """The ending: a change green in the warm checkout and red in a clean one, and the gate
    refusing it. The clean room installs pytest and genstamp from your package index (once:
    the environment is cached in the git dir). False when the clean room could not be built
    here (no package index): the demo then does not claim its ending."""
    step.say("6. a change imports calc/local.py, a file the warm job made and git ignores.")
    (repo / ".gitignore").write_text("__pycache__/\nlocal.py\n")
    (repo / "calc" / "local.py").write_text("SCALE = 1\n")
    (repo / "calc" / "ops.py").write_text("from calc.local import SCALE\n\n\n" + OPS_FIXED)
    _git(repo, env, "commit", "-q", "-am", "calc: scale")
    _genstamp(repo, env, "stamp")
    code, summary = _pytest(repo, warm_env)
    step.say(f"   pytest with genstamp in the warm checkout: {summary}")
    step.expect("the warm run should be green", code == 0)
    code, out = _genstamp(repo, env, "clean-run")
    last = out.splitlines()[-1] if out else ""
    step.say(f"   genstamp clean-run (a fresh checkout and environment): exit {code}")
    for line in out.splitlines():
        if line.startswith("clean-run:"):
            step.say(f"   {line}")
    if code == 2:
        step.say(f"   the clean room could not be built here: {last}")
        return False
    step.expect("the clean run should be red", code == 1)
    code, out = _genstamp(repo, env, "verify")
    for line in out.splitlines():
        if line.startswith("clean-room-diverged"):
            for part in textwrap.wrap(line, 96, break_on_hyphens=False):
                step.say(f"   {part}")
    step.expect("the gate should refuse (clean-room-diverged)", "clean-room-diverged" in out)
    return True
