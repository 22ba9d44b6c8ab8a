#!/usr/bin/env python3
"""genstamp's benchmark: every speed figure of the project, side by side with a tool users trust.

    python bench/run.py [--files N ...] [--quick] [--json] [--pairs K] [--pre-commit]

Builds synthetic git repositories (small files in nested folders, committed, then a few modified
and untracked files), warms both sides, then times pairs A/B in alternation (A B A B ...) and
prints, per figure, the median of A, the median of B and the median of the per-pair ratio A/B,
with the target where the project sets one. Needs only what ``pip install .[test]`` installs,
plus git and find. Nothing here is a test: no duration is asserted anywhere.
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import json
import math
import os
import platform
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from importlib import metadata
from pathlib import Path
from typing import Any, NamedTuple

import pygit2

from genstamp import __version__ as genstamp_version
from genstamp.gitenv import isolated_git
from genstamp.identity import tree_identity
from genstamp.repo import open_checkout
from genstamp.scrub import scrub
from genstamp.verify import verify

ROOT = Path(__file__).resolve().parent.parent
FILES_PER_DIR = 20  # small files per leaf folder
PYC_PER_CACHE = 3  # bytecode files in each __pycache__ the scrub figure plants
TESTS_PER_FILE = 50
GITIGNORE = "__pycache__/\n*.py[co]\n"
PYPROJECT = '[tool.pytest.ini_options]\ntestpaths = ["tests"]\n'
GIT_STATUS = ("git", "status", "--porcelain", "--untracked-files=all")
FIND_RM = ("find", ".", "-name", "__pycache__", "-prune", "-exec", "rm", "-rf", "{}", "+")
FIGURES = (
    "identity-vs-pygit2",
    "identity-vs-git",
    "status-process-vs-git",
    "status-watchman-vs-git",
    "status-after-change",
    "scrub-vs-find",
    "verify-vs-pygit2",
    "verify-process-vs-git",
    "pytest-plugin",
    "pytest-subprocesses",
    "child-start",
    "post-checkout-pre-commit",
    "branch-switch",
    "post-checkout-growth",
    "identity-clean-filter",
    "verify-attestations",
    "clean-room",
    "growth",
)
MAIN = set(FIGURES[:8])  # the figures measured on the largest repository
# 1% of the synthetic paths (the m7.py of every leaf under p0/) go through a clean filter.
FILTERED = "p0/**/m7.py"


class BenchError(Exception):
    """A step of the harness failed (not a missed target)."""


def log(message: str) -> None:
    print(f"[bench {time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


# -- running things --------------------------------------------------------------------------


def run(
    cmd: Sequence[str | os.PathLike[str]],
    cwd: Path | None = None,
    env: dict[str, str] | None = None,
    input: bytes | None = None,
    ok: Sequence[int] = (0,),
) -> subprocess.CompletedProcess[bytes]:
    proc = subprocess.run(
        [os.fspath(c) for c in cmd], cwd=cwd, env=env, input=input, capture_output=True
    )
    if proc.returncode not in ok:
        raise BenchError(
            f"`{shlex.join(os.fspath(c) for c in cmd)}` in {cwd} exited {proc.returncode}:\n"
            + proc.stderr.decode(errors="replace")[-3000:]
            + proc.stdout.decode(errors="replace")[-2000:]
        )
    return proc


def git(cwd: Path, *args: str, input: bytes | None = None) -> str:
    return run(("git", *args), cwd=cwd, input=input).stdout.decode().strip()


def command(
    cmd: Sequence[str | os.PathLike[str]],
    cwd: Path,
    env: dict[str, str] | None = None,
    ok: Sequence[int] = (0,),
) -> Callable[[], None]:
    """A timed side that is a whole process; its output is discarded, its exit code checked."""
    argv = [os.fspath(c) for c in cmd]

    def side() -> None:
        proc = subprocess.run(
            argv, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
        )
        if proc.returncode not in ok:
            raise BenchError(
                f"`{shlex.join(argv)}` exited {proc.returncode}: "
                + proc.stderr.decode(errors="replace")[-2000:]
            )

    return side


def genstamp_cmd() -> list[str]:
    """The console script next to this interpreter, as a user would run it."""
    script = Path(sys.executable).with_name("genstamp")
    return [str(script)] if script.exists() else [sys.executable, "-m", "genstamp"]


# -- the machine -----------------------------------------------------------------------------


def _read(path: Path) -> str:
    try:
        return path.read_text().strip()
    except OSError:
        return ""


def disk_kind(path: Path) -> str:
    """The block device holding ``path``: name, kind and rotational flag, and the file system."""
    fs = ""
    with contextlib.suppress(OSError, BenchError, IndexError):
        line = run(("df", "-PT", str(path))).stdout.decode().splitlines()[1].split()
        fs = f"{line[0]} ({line[1]}, mounted on {line[-1]})"
    st = os.stat(path)
    dev = Path(f"/sys/dev/block/{os.major(st.st_dev)}:{os.minor(st.st_dev)}")
    if not dev.exists():
        return fs or "unknown"
    real = dev.resolve()
    if (real / "partition").exists():
        real = real.parent
    name = real.name
    rotational = _read(real / "queue" / "rotational")
    model = _read(real / "device" / "model")
    if name.startswith("vd"):
        kind = "virtio virtual disk"
    elif name.startswith("nvme"):
        kind = "NVMe SSD"
    elif name.startswith(("zram", "ram", "loop")):
        kind = "RAM/loop device"
    else:
        kind = "SSD" if rotational == "0" else "rotational disk"
    extra = f", model {model}" if model else ""
    return f"{fs}; block device {name}: {kind}, rotational={rotational or '?'}{extra}"


def machine(workdir: Path) -> dict[str, Any]:
    cpu = ""
    for line in _read(Path("/proc/cpuinfo")).splitlines():
        if line.startswith("model name"):
            cpu = line.split(":", 1)[1].strip()
            break
    mem = ""
    for line in _read(Path("/proc/meminfo")).splitlines():
        if line.startswith("MemTotal"):
            mem = f"{int(line.split()[1]) / (1 << 20):.1f} GiB"
    try:
        usable = len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not Linux
        usable = os.cpu_count() or 0

    def version(dist: str) -> str:
        try:
            return metadata.version(dist)
        except metadata.PackageNotFoundError:
            return "not installed"

    return {
        "cores": os.cpu_count(),
        "cores_usable": usable,
        "cpu": cpu or platform.processor() or "unknown",
        "memory": mem or "unknown",
        "os": platform.platform(),
        "python": f"{platform.python_implementation()} {platform.python_version()}",
        "git": git(ROOT if ROOT.exists() else Path.cwd(), "--version").removeprefix("git version "),
        "pygit2": version("pygit2"),
        "libgit2": pygit2.LIBGIT2_VERSION,
        "genstamp": genstamp_version,
        "pytest": version("pytest"),
        "pre-commit": version("pre-commit"),
        "disk": disk_kind(workdir),
        "workdir": str(workdir),
        "load_start": _load(),
    }


def _load() -> str:
    """The 1/5/15-minute load averages: other work on the machine skews every figure."""
    try:
        return " ".join(f"{x:.2f}" for x in os.getloadavg())
    except OSError:  # pragma: no cover
        return "unknown"


# -- an isolated git environment -------------------------------------------------------------


@dataclass
class Env:
    tmp: Path
    base: dict[str, str]  # for every process the harness starts
    network: dict[str, str]  # for pre-commit's one-time hook install (the user's pip config)

    def with_bytecode(self) -> dict[str, str]:
        env = dict(self.base)
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        return env


@contextlib.contextmanager
def isolate(tmp: Path) -> Iterator[Env]:
    """No global or system git config (libgit2's too), a fixed identity, no inherited GIT_* or
    PYTEST_* variables: both sides of every figure see git's defaults."""
    user = dict(os.environ)
    with isolated_git(tmp / "home"):
        for name in [n for n in os.environ if n.startswith("PYTEST_")]:
            del os.environ[name]
        os.environ.pop("PYTHONPYCACHEPREFIX", None)
        os.environ["PRE_COMMIT_HOME"] = str(tmp / "pre-commit-home")
        base = dict(os.environ)
        # the real HOME: pip's own configuration applies
        network = {**base, "HOME": user["HOME"]}
        network.pop("XDG_CONFIG_HOME", None)
        if "XDG_CONFIG_HOME" in user:
            network["XDG_CONFIG_HOME"] = user["XDG_CONFIG_HOME"]
        yield Env(tmp, base, network)


# -- synthetic repositories ------------------------------------------------------------------


@dataclass
class Repo:
    path: Path
    files: int  # committed synthetic files
    folders: list[str]  # work-tree-relative folders holding .py files (one __pycache__ each)


def _layout(n: int) -> tuple[list[tuple[str, bytes]], list[str]]:
    """``n`` small files, FILES_PER_DIR per leaf folder, leaves nested by the digits of their
    number (p1/p0/p3/...), so 100,000 files make 5,000 leaves under 5,556 folders."""
    leaves = max(1, math.ceil(n / FILES_PER_DIR))
    width = len(str(leaves - 1))
    files = []
    folders = []
    for leaf in range(leaves):
        folder = "/".join("p" + c for c in str(leaf).zfill(width))
        folders.append(folder)
        for k in range(min(FILES_PER_DIR, n - leaf * FILES_PER_DIR)):
            i = leaf * FILES_PER_DIR + k
            files.append((f"{folder}/m{k}.py", f"# bench file {i}\nVALUE = {i}\n".encode()))
    return files, folders


def _tests(count: int) -> list[tuple[str, bytes]]:
    out = []
    for start in range(0, count, TESTS_PER_FILE):
        body = "".join(
            f"def test_{i}():\n    assert {i} + 1 == {i + 1}\n\n\n"
            for i in range(start, min(count, start + TESTS_PER_FILE))
        )
        out.append((f"tests/test_t{start // TESTS_PER_FILE:03d}.py", body.encode()))
    return out


def build_repo(
    path: Path,
    n: int,
    *,
    tests: int = 3,
    dirty: bool = True,
    extra: dict[str, str] | None = None,
) -> Repo:
    """Commit ``n`` small files with git fast-import, check them out, then (``dirty``) modify a
    few and add a few untracked ones. The index is written after a pause so that no entry is
    racily clean: both sides then see a warm, settled index."""
    t0 = time.perf_counter()
    path.mkdir(parents=True)
    git(path, "init", "-q", "-b", "main")
    files, folders = _layout(n)
    files += _tests(tests)
    files += [(".gitignore", GITIGNORE.encode()), ("pyproject.toml", PYPROJECT.encode())]
    files += [(name, text.encode()) for name, text in (extra or {}).items()]
    if tests:
        folders.append("tests")
    chunks = []
    for mark, (_, content) in enumerate(files, 1):
        chunks.append(b"blob\nmark :%d\ndata %d\n%s\n" % (mark, len(content), content))
    message = f"{n} synthetic files".encode()
    chunks.append(
        b"commit refs/heads/main\n"
        b"author Bench <bench@example.invalid> 1767225600 +0000\n"
        b"committer Bench <bench@example.invalid> 1767225600 +0000\n"
        b"data %d\n%s\n" % (len(message), message)
    )
    chunks.extend(
        b"M 100644 :%d %s\n" % (mark, name.encode()) for mark, (name, _) in enumerate(files, 1)
    )
    chunks.append(b"\n")
    git(path, "fast-import", "--quiet", input=b"".join(chunks))
    git(path, "reset", "-q", "--hard")
    if dirty:
        step = max(1, len(folders) // 5)
        for j, folder in enumerate(folders[: step * 5 : step]):
            with open(path / folder / "m0.py", "a") as fh:  # modified (size changes)
                fh.write(f"VALUE_{j} = 'modified'\n")
            (path / folder / f"untracked{j}.py").write_text(f"NEW = {j}\n")
        (path / "newpkg" / "sub").mkdir(parents=True)
        (path / "newpkg" / "sub" / "fresh.py").write_text("FRESH = 1\n")
        folders.append("newpkg/sub")
    time.sleep(1.05)  # git and libgit2 compare mtimes with the index's own, in whole seconds
    git(path, "update-index", "-q", "--refresh", "--force-write-index")
    log(
        f"built {path.name}: {n} files in {len(folders)} folders ({time.perf_counter() - t0:.1f} s)"
    )
    return Repo(path, n, folders)


def git_oracle_tree(path: Path, env: Env) -> str:
    """git's own answer (`git add -A && git write-tree` on a scratch copy of the index)."""
    gitdir = Path(git(path, "rev-parse", "--absolute-git-dir"))
    scratch = env.tmp / f"oracle-index-{path.name}"
    shutil.copyfile(gitdir / "index", scratch)
    e = {**env.base, "GIT_INDEX_FILE": str(scratch)}
    run(("git", "add", "-A"), cwd=path, env=e)
    tree = run(("git", "write-tree"), cwd=path, env=e).stdout.decode().strip()
    scratch.unlink()
    return tree


def link_copy(src: Path, dest: Path) -> None:
    """A copy of a tree whose files are hard links (only folders are new): cheap and identical."""
    if shutil.which("cp") and sys.platform.startswith("linux"):
        run(("cp", "-al", str(src), str(dest)))
    else:  # pragma: no cover - not GNU cp
        shutil.copytree(src, dest, symlinks=True, copy_function=os.link)


def plant_pycache(root: Path, folders: Sequence[str], template: Path | None) -> int:
    """One __pycache__ with PYC_PER_CACHE bytecode files in each folder; returns the folders.

    With a ``template`` the files are hard links to it: creating tens of thousands of inodes
    per pair is slow on a busy VM, and unlinking a link is cheaper than freeing a file for both
    sides alike, which leaves the walk a larger share of the time (a conservative ratio)."""
    payload = b"\x00" * 192
    tag = sys.implementation.cache_tag
    for folder in folders:
        cache = root / folder / "__pycache__"
        cache.mkdir(exist_ok=True)
        for k in range(PYC_PER_CACHE):
            pyc = cache / f"m{k}.{tag}.pyc"
            if template is not None:
                with contextlib.suppress(FileExistsError):
                    os.link(template, pyc)
            else:
                pyc.write_bytes(payload)
    return len(folders)


# -- timing ----------------------------------------------------------------------------------


@dataclass
class Figure:
    key: str
    title: str
    a: str
    b: str
    files: int
    target: float | None = None
    a_times: list[float] = field(default_factory=list)
    b_times: list[float] = field(default_factory=list)
    note: str = ""
    skipped: str | None = None

    @property
    def pairs(self) -> int:
        return len(self.a_times)

    @property
    def median_a(self) -> float:
        return statistics.median(self.a_times)

    @property
    def median_b(self) -> float:
        return statistics.median(self.b_times)

    @property
    def ratio(self) -> float:
        return statistics.median(a / b for a, b in zip(self.a_times, self.b_times, strict=True))

    @property
    def met(self) -> bool | None:
        if self.target is None or self.skipped:
            return None
        return self.ratio <= self.target

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "key": self.key,
            "title": self.title,
            "a": self.a,
            "b": self.b,
            "files": self.files,
            "target": self.target,
            "note": self.note,
            "skipped": self.skipped,
        }
        if self.skipped:
            data.update(pairs=0, median_a_s=None, median_b_s=None, ratio=None, met=None)
        else:
            data.update(
                pairs=self.pairs,
                median_a_s=self.median_a,
                median_b_s=self.median_b,
                ratio=self.ratio,
                met=self.met,
                a_s=self.a_times,
                b_s=self.b_times,
            )
        return data


@dataclass
class Plan:
    min_pairs: int
    max_pairs: int
    budget: float  # seconds of timed work per figure, before min/max apply
    warmup: int


def timed(side: Callable[[], object]) -> float:
    gc.collect()
    start = time.perf_counter()
    side()
    return time.perf_counter() - start


def measure(
    fig: Figure,
    side_a: Callable[[], object],
    side_b: Callable[[], object],
    plan: Plan,
    *,
    prepare: Callable[[], object] | None = None,
    budget: float | None = None,
    settle: float = 0.0,
) -> Figure:
    """Warm both sides, then time pairs A B A B ...; ``prepare`` runs (untimed) before each.
    ``settle``: seconds to wait after the warm-up, then A once more (untimed)."""
    log(f"{fig.key}: warming up")
    spent = 0.0
    for _ in range(plan.warmup):
        start = time.perf_counter()
        if prepare:
            prepare()
        side_a()
        side_b()
        spent = time.perf_counter() - start
    if settle:
        time.sleep(settle)
        side_a()
    per_pair = max(spent, 1e-3)
    pairs = int((budget if budget is not None else plan.budget) / per_pair)
    pairs = max(plan.min_pairs, min(plan.max_pairs, pairs))
    log(f"{fig.key}: {pairs} pairs (about {per_pair * pairs:.0f} s)")
    for _ in range(pairs):
        if prepare:
            prepare()
        fig.a_times.append(timed(side_a))
        fig.b_times.append(timed(side_b))
    log(
        f"{fig.key}: A {fig.median_a * 1000:.1f} ms, B {fig.median_b * 1000:.1f} ms, "
        f"A/B {fig.ratio:.2f}"
    )
    return fig


# -- the figures -----------------------------------------------------------------------------


def pygit2_status(path: Path) -> Callable[[], object]:
    return lambda: pygit2.Repository(str(path)).status(untracked_files="all")


def identity_of(path: Path) -> Callable[[], object]:
    return lambda: tree_identity(open_checkout(path))


def fig_identity_pygit2(repo: Repo, plan: Plan) -> Figure:
    fig = Figure(
        "identity-vs-pygit2",
        "tree identity vs pygit2 status, in-process",
        "genstamp.identity.tree_identity(open_checkout(path))",
        'pygit2.Repository(path).status(untracked_files="all")',
        repo.files,
        target=1.2,
    )
    return measure(fig, identity_of(repo.path), pygit2_status(repo.path), plan)


def fig_identity_filter(path: Path, n: int, plan: Plan) -> Figure:
    """The identity where 1% of the paths have a clean filter driver (an external command, as
    nbstripout and git-lfs install) and every one of them is modified: git itself makes those
    blobs (one `git hash-object` for all of them)."""
    repo = build_repo(path, n, extra={".gitattributes": f"{FILTERED} filter=bench\n"})
    git(repo.path, "config", "filter.bench.clean", "cat")
    filtered = [p for p in repo.path.glob(FILTERED) if p.is_file()]
    for source in filtered:
        with open(source, "a") as fh:
            fh.write("FILTERED = True\n")
    fig = Figure(
        "identity-clean-filter",
        f"tree identity with {len(filtered)} modified paths through a clean filter vs pygit2 "
        "status, in-process",
        "genstamp.identity.tree_identity(open_checkout(path))",
        'pygit2.Repository(path).status(untracked_files="all")',
        n,
    )
    return measure(fig, identity_of(repo.path), pygit2_status(repo.path), plan)


def fig_identity_git(repo: Repo, plan: Plan, env: Env) -> Figure:
    fig = Figure(
        "identity-vs-git",
        "tree identity (in-process) vs git status (process)",
        "genstamp.identity.tree_identity(open_checkout(path))",
        " ".join(GIT_STATUS),
        repo.files,
    )
    return measure(fig, identity_of(repo.path), command(GIT_STATUS, repo.path, env.base), plan)


INSTALLED = (
    "genstamp's modules run from bytecode, as a pip-installed genstamp does (kept in the "
    "harness's folder: PYTHONPYCACHEPREFIX)"
)


def installed_env(env: Env) -> dict[str, str]:
    """A genstamp process as a user's install runs it: pip compiles the modules' bytecode at
    install time, and this checkout's tests run with PYTHONDONTWRITEBYTECODE=1. The bytecode
    is written (by the warm-up run) under the harness's folder, never in the source tree."""
    e = env.with_bytecode()
    e["PYTHONPYCACHEPREFIX"] = str(env.tmp / "pycache")
    return e


# status keeps its answer only when what it read is older than idcache's racy window (2 s):
# the warm-up waits it out, so that the timed runs are repeated runs of an unchanged tree.
SETTLE_S = 2.5
KEPT = (
    "the warm-up waits out the 2 s racy window: each timed status gives the last answer "
    "again (statuscache), confirmed by"
)


def fig_status_process(repo: Repo, plan: Plan, env: Env) -> Figure:
    cmd = [*genstamp_cmd(), "status"]
    fig = Figure(
        "status-process-vs-git",
        "whole process: genstamp status vs git status",
        shlex.join(["genstamp", "status"]),
        " ".join(GIT_STATUS),
        repo.files,
        target=1.5,
        note=f"{INSTALLED}; no monitor; {KEPT} `git status` (started first), which walks the "
        "tree and finds what the kept identity's walk found",
    )
    return measure(
        fig,
        command(cmd, repo.path, installed_env(env)),
        command(GIT_STATUS, repo.path, env.base),
        plan,
        settle=SETTLE_S,
    )


def fig_status_changed(repo: Repo, plan: Plan, env: Env) -> Figure:
    """genstamp status computed whole: a tracked file is edited before each pair."""
    target = min((repo.path / repo.folders[0]).glob("*.py"))
    original = target.read_bytes()
    flip = [0]

    def edit() -> None:
        flip[0] ^= 1
        target.write_bytes(original + b"# edited\n" * flip[0])

    fig = Figure(
        "status-after-change",
        "whole process after an edit: genstamp status vs git status",
        shlex.join(["genstamp", "status"]),
        " ".join(GIT_STATUS),
        repo.files,
        note=f"{INSTALLED}; no monitor; a tracked file is edited (untimed) before each pair: "
        "status is computed whole (git's list, the tree made from the index and it, the "
        "answer kept)",
    )
    try:
        return measure(
            fig,
            command([*genstamp_cmd(), "status"], repo.path, installed_env(env)),
            command(GIT_STATUS, repo.path, env.base),
            plan,
            prepare=edit,
        )
    finally:
        target.write_bytes(original)


def fsmonitor_hook() -> Path | None:
    """git's own Watchman hook (``fsmonitor-watchman.sample``, protocol v2) from git's
    templates, or None."""
    exec_path = Path(
        subprocess.run(["git", "--exec-path"], capture_output=True, text=True).stdout.strip()
    )
    for base in (exec_path.parent.parent, Path("/usr"), Path("/usr/local")):
        hook = base / "share" / "git-core" / "templates" / "hooks" / "fsmonitor-watchman.sample"
        if hook.is_file():
            return hook
    return None


def fig_status_watchman(repo: Repo, plan: Plan, env: Env) -> Figure:
    """genstamp status with its monitor on vs git status with core.fsmonitor on, both asking
    the same Watchman."""
    sample = fsmonitor_hook()
    hook = env.tmp / "fsmonitor-watchman"
    git_cmd = ("git", "-c", f"core.fsmonitor={hook}", *GIT_STATUS[1:])
    fig = Figure(
        "status-watchman-vs-git",
        "whole process, both with Watchman: genstamp status vs git status with core.fsmonitor",
        "genstamp status  (git config genstamp.monitor watchman)",
        " ".join(git_cmd).replace(str(hook), "HOOK"),
        repo.files,
        target=1.0,
        note=f"{INSTALLED}; {KEPT} Watchman; HOOK: git's fsmonitor-watchman.sample (protocol v2)",
    )
    try:
        import pywatchman  # noqa: F401
    except ImportError:
        fig.skipped = "pywatchman is not installed (pip install genstamp[watchman])"
        return fig
    if shutil.which("watchman") is None or sample is None:
        fig.skipped = "Watchman (Debian's watchman) or git's fsmonitor-watchman hook is missing"
        return fig
    shutil.copyfile(sample, hook)
    hook.chmod(0o755)
    git(repo.path, "config", "genstamp.monitor", "watchman")
    try:
        return measure(
            fig,
            command([*genstamp_cmd(), "status"], repo.path, installed_env(env)),
            command(git_cmd, repo.path, env.base),
            plan,
            settle=SETTLE_S,
        )
    finally:
        git(repo.path, "config", "--unset", "genstamp.monitor")
        subprocess.run(["watchman", "watch-del", str(repo.path)], capture_output=True)


def fig_scrub(repo: Repo, plan: Plan, env: Env, real_files: bool) -> Figure:
    copy_a = env.tmp / "scrub-a"
    copy_b = env.tmp / "scrub-b"
    link_copy(repo.path, copy_a)
    link_copy(repo.path, copy_b)
    caches = len(repo.folders)
    template = None if real_files else env.tmp / "template.pyc"
    if template is not None:
        template.write_bytes(b"\x00" * 192)
    kind = "files" if real_files else "hard links to one 192-byte file"
    fig = Figure(
        "scrub-vs-find",
        "scrub vs find -exec rm -rf, on identical copies",
        "genstamp.scrub.scrub(copy_a)",
        " ".join(FIND_RM) + "  (in copy_b)",
        repo.files,
        target=1.5,
        note=f"{caches} __pycache__ folders of {PYC_PER_CACHE} .pyc each ({kind}), planted in "
        "both copies before every pair (untimed)",
    )

    def prepare() -> None:
        plant_pycache(copy_a, repo.folders, template)
        plant_pycache(copy_b, repo.folders, template)

    def side_a() -> None:
        result = scrub(copy_a)
        if result.folders != caches or result.errors:
            raise BenchError(f"scrub removed {result.folders} of {caches} folders: {result}")

    find_b = command(FIND_RM, copy_b, env.base)

    def side_b() -> None:
        find_b()

    measure(
        fig, side_a, side_b, Plan(plan.min_pairs, plan.max_pairs, plan.budget, 1), prepare=prepare
    )
    prepare()
    side_b()
    if any(copy_b.rglob("__pycache__")):
        raise BenchError("find left __pycache__ folders behind")
    shutil.rmtree(copy_a)
    shutil.rmtree(copy_b)
    return fig


def fresh_evidence(repo: Repo, env: Env) -> str:
    """Stamp, then run the repository's tiny suite with the plugin: fresh, bound evidence."""
    run([*genstamp_cmd(), "stamp"], cwd=repo.path, env=env.base)
    run([sys.executable, "-m", "pytest", "-q"], cwd=repo.path, env=env.base)
    verdict = verify(open_checkout(repo.path))
    if verdict.ok:
        return "verdict: accepted (fresh evidence from a stamped, passing run)"
    return "verdict: REFUSED: " + "; ".join(f.line() for f in verdict.failures)


def fig_verify(repo: Repo, plan: Plan, note: str) -> Figure:
    fig = Figure(
        "verify-vs-pygit2",
        "verify vs pygit2 status, in-process",
        "genstamp.verify.verify(open_checkout(path))",
        'pygit2.Repository(path).status(untracked_files="all")',
        repo.files,
        target=1.4,
        note=note,
    )
    path = repo.path
    return measure(fig, lambda: verify(open_checkout(path)), pygit2_status(path), plan)


def fig_verify_process(repo: Repo, plan: Plan, env: Env, note: str) -> Figure:
    fig = Figure(
        "verify-process-vs-git",
        "whole process: genstamp verify vs git status",
        "genstamp verify",
        " ".join(GIT_STATUS),
        repo.files,
        note=f"{note}; {INSTALLED}",
    )
    side_a = command([*genstamp_cmd(), "verify"], repo.path, installed_env(env), ok=(0, 1))
    return measure(fig, side_a, command(GIT_STATUS, repo.path, env.base), plan)


def fig_pytest(repo: Repo, tests: int, plan: Plan, env: Env) -> Figure:
    run([*genstamp_cmd(), "stamp"], cwd=repo.path, env=env.base)
    fig = Figure(
        "pytest-plugin",
        f"{tests}-test trivial suite: pytest with the plugin vs -p no:genstamp",
        "pytest -q",
        "pytest -q -p no:genstamp",
        repo.files,
        target=1.10,
        note="whole pytest processes, bytecode writing on (the user default), both warm",
    )
    return with_and_without_plugin(fig, repo.path, plan, env)


def with_and_without_plugin(fig: Figure, path: Path, plan: Plan, env: Env) -> Figure:
    """Whole pytest processes in ``path``, the plugin on (A) and off (B), bytecode writing on."""
    e = env.with_bytecode()
    pytest = [sys.executable, "-m", "pytest", "-q"]
    return measure(
        fig,
        command(pytest, path, e),
        command([*pytest, "-p", "no:genstamp"], path, e),
        plan,
        budget=plan.budget * 2,
    )


def fig_clean_room(
    path: Path, n: int, tests: int, plan: Plan, env: Env, asked: bool, installer: str
) -> Figure:
    """The whole `genstamp clean-run` (checkout, cached environment, install, run, the clean
    gate) against the same suite run warm (pytest with the plugin). The target is on the
    difference: what the clean room adds beyond the tests themselves."""
    fig = Figure(
        "clean-room",
        f"{tests}-test suite: `genstamp clean-run` with a warm environment cache vs pytest warm",
        f"genstamp clean-run --installer {installer}  (the environment cached in the git dir)",
        "pytest -q  (the plugin on, in the warm checkout)",
        n,
    )
    if not asked:
        fig.skipped = "not asked for (--quick; pass --only clean-room)"
        return fig
    repo = build_repo(path, n, tests=tests)
    e = env.network  # the user's pip configuration: the package index, for the cold run
    clean = [*genstamp_cmd(), "clean-run", "--installer", installer]
    envs = repo.path / ".git" / "genstamp" / "clean-room" / "envs"
    cold = []
    for _ in range(2):  # the cold cache: a new environment (uv's own cache stays warm)
        shutil.rmtree(envs, ignore_errors=True)
        cold.append(timed(command(clean, repo.path, e)))
    run([*genstamp_cmd(), "stamp"], cwd=repo.path, env=e)
    measure(fig, command(clean, repo.path, e), command(PYTEST, repo.path, e), plan)
    extra = statistics.median(a - b for a, b in zip(fig.a_times, fig.b_times, strict=True))
    verdict = "met" if extra <= CLEAN_ROOM_TARGET else "MISSED"
    fig.note = (
        f"overhead (median of A-B per pair) {extra:.2f} s, target <= {CLEAN_ROOM_TARGET:.0f} s: "
        f"{verdict}; cold environment cache: {statistics.median(cold):.2f} s "
        f"({', '.join(f'{c:.2f}' for c in cold)})"
    )
    return fig


CLEAN_ROOM_TARGET = 2.0  # seconds the clean room may add to the tests themselves
PYTEST = (sys.executable, "-m", "pytest", "-q")


CHILDREN = 20
CHILDREN_TEST = f"""\
import os, subprocess, sys

def test_children():
    env = dict(os.environ, PYTHONPATH="src")
    for _ in range({CHILDREN}):
        subprocess.run([sys.executable, "-c", "import calc"], env=env, check=True)
"""


def fig_subprocesses(path: Path, plan: Plan, env: Env) -> Figure:
    """A test that starts Python processes importing a small package of the checkout: each is
    followed (the start-up hook, the loader, the load log) with the plugin on."""
    path.mkdir()
    (path / "src" / "calc").mkdir(parents=True)
    (path / "src" / "calc" / "__init__.py").write_text("def add(a, b):\n    return a + b\n")
    (path / "tests").mkdir()
    (path / "tests" / "test_children.py").write_text(CHILDREN_TEST)
    (path / "pyproject.toml").write_text(PYPROJECT)
    (path / ".gitignore").write_text(GITIGNORE)
    git(path, "init", "-q", "-b", "main")
    git(path, "add", "-A")
    git(path, "-c", "user.name=Bench", "-c", "user.email=b@example.invalid", "commit", "-qm", "c")
    run([*genstamp_cmd(), "stamp"], cwd=path, env=env.base)
    fig = Figure(
        "pytest-subprocesses",
        f"a test starting {CHILDREN} Python subprocesses: with the plugin vs -p no:genstamp",
        "pytest -q",
        "pytest -q -p no:genstamp",
        1,
        target=1.15,
        note="each child runs `python -c 'import calc'`; bytecode writing on, both warm",
    )
    return with_and_without_plugin(fig, path, plan, env)


def fig_verify_attestations(repo: Repo, tests: int, plan: Plan, env: Env) -> Figure:
    """Judging a commit from its attestation (no walk of the work tree: the statement, the
    suite listed from the tree) against judging the local evidence of the same run."""
    from genstamp.attest import verify_attestations

    run([*genstamp_cmd(), "stamp"], cwd=repo.path, env=env.base)
    run([sys.executable, "-m", "pytest", "-q"], cwd=repo.path, env=env.base)
    statement = repo.path.parent / "attestation.json"
    run([*genstamp_cmd(), "attest", "-o", str(statement)], cwd=repo.path, env=env.base)
    fig = Figure(
        "verify-attestations",
        f"verify from the attestation of a {tests}-test suite vs verify of local evidence",
        "verify_attestations(checkout, ['HEAD'], files=[attestation.json])",
        "genstamp.verify.verify(open_checkout(path))",
        repo.files,
        target=1.0,
        note="in-process, unsigned (a signature adds an ssh-keygen process per envelope)",
    )
    path = repo.path

    def side_a() -> None:
        verdict, _ = verify_attestations(open_checkout(path), ["HEAD"], files=[statement])
        if not verdict.ok:
            raise BenchError("the attestation was refused: " + verdict.failures[0].line())

    def side_b() -> None:
        if not verify(open_checkout(path)).ok:
            raise BenchError("the local evidence was refused")

    return measure(fig, side_a, side_b, plan)


def fig_child_start(path: Path, plan: Plan, env: Env) -> Figure:
    """What one followed Python process pays: a run is open (its ``.pth`` in site-packages),
    and the same child starts with ``GENSTAMP_RUN`` set (followed) and without it."""
    from genstamp import child, loads, roots

    path.mkdir()
    (path / "src" / "calc").mkdir(parents=True)
    (path / "src" / "calc" / "__init__.py").write_text("def add(a, b):\n    return a + b\n")
    workdir = str(path)
    recording = child.open_run(workdir, roots.find(path), str(env.tmp / "child-cache"), None)
    try:
        if recording.hook is None or recording.hook.pth is None:
            raise BenchError("the run's .pth could not be written")
        base = env.with_bytecode()
        # the package under src/; an inherited PYTHONPATH stays behind it (to time another
        # genstamp: PYTHONPATH=/other/src python bench/run.py --only child-start)
        where = os.pathsep.join(p for p in ("src", base.get("PYTHONPATH")) if p)
        followed = {**base, "PYTHONPATH": where}
        followed[loads.RUN_ENV] = recording.run.folder
        # set but empty: not followed (absent, a descendant of this process would be)
        plain = {**followed, loads.RUN_ENV: ""}
        argv = [sys.executable, "-c", "import calc"]
        fig = Figure(
            "child-start",
            "one Python process a test starts, followed (GENSTAMP_RUN set) vs not",
            f"python -c 'import calc'  ({loads.RUN_ENV} set: genstamp's start-up hook)",
            f"python -c 'import calc'  ({loads.RUN_ENV} empty: not followed)",
            1,
            note="the run's .pth is in site-packages for both; bytecode writing on, both warm",
        )
        return measure(fig, command(argv, path, followed), command(argv, path, plain), plan)
    finally:
        child.close_run(recording)


def snapshot_project(dest: Path) -> str:
    """This checkout as it is on disk (uncommitted edits included) committed into a new repo:
    the `repo:` pre-commit clones. Returns the commit id for `rev:`."""
    dest.mkdir()
    try:
        listed = run(
            ("git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"), cwd=ROOT
        ).stdout.decode()
        names = [n for n in listed.split("\0") if n]
    except BenchError:
        names = [
            str(p.relative_to(ROOT))
            for p in ROOT.rglob("*")
            if p.is_file() and not {".git", "__pycache__", ".venv", "build"} & set(p.parts)
        ]
    for name in names:
        src = ROOT / name
        if src.is_file() and "__pycache__" not in name:
            (dest / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest / name)
    git(dest, "init", "-q", "-b", "main")
    git(dest, "add", "-A")
    git(dest, "commit", "-q", "-m", "genstamp snapshot for the benchmark")
    return git(dest, "rev-parse", "HEAD")


def hook_repo(path: Path, n: int, config: str) -> Repo:
    repo = build_repo(path, n, dirty=False, extra={".pre-commit-config.yaml": config})
    git(path, "checkout", "-q", "-b", "other")
    for folder in repo.folders[1:6]:
        with open(path / folder / "m1.py", "a") as fh:
            fh.write("CHANGED_ON_OTHER = True\n")
    (path / repo.folders[0] / "only_on_other.py").write_text("OTHER = 1\n")
    git(path, "add", "-A")
    git(path, "commit", "-q", "-m", "other")
    git(path, "checkout", "-q", "main")
    return repo


def fig_pre_commit(n: int, plan: Plan, env: Env, asked: bool) -> Figure:
    fig = Figure(
        "post-checkout-pre-commit",
        "git checkout with genstamp-scrub (post-checkout, via pre-commit) vs a no-op hook",
        "git checkout BRANCH  (hook: genstamp-scrub from a snapshot of this checkout)",
        "git checkout BRANCH  (hook: repo: local, language: system, entry: true)",
        n,
        note="each checkout switches between two branches that differ in 6 files",
    )
    if not asked:
        fig.skipped = "not asked for (--quick; pass --pre-commit)"
        return fig
    rev = snapshot_project(env.tmp / "genstamp-snapshot")
    real = (
        "repos:\n"
        f"- repo: {env.tmp / 'genstamp-snapshot'}\n"
        f"  rev: {rev}\n"
        "  hooks:\n"
        "  - id: genstamp-scrub\n"
    )
    noop = (
        "repos:\n"
        "- repo: local\n"
        "  hooks:\n"
        "  - id: noop\n"
        "    name: no-op\n"
        "    entry: 'true'\n"
        "    language: system\n"
        "    stages: [post-checkout]\n"
        "    always_run: true\n"
        "    pass_filenames: false\n"
    )
    pre_commit = [sys.executable, "-m", "pre_commit"]
    repo_a = hook_repo(env.tmp / "hook-genstamp", n, real)
    repo_b = hook_repo(env.tmp / "hook-noop", n, noop)
    for repo in (repo_a, repo_b):
        run([*pre_commit, "install", "-t", "post-checkout"], cwd=repo.path, env=env.base)
    log("pre-commit: building the genstamp hook environment (needs the package index)")
    t0 = time.perf_counter()
    try:
        run([*pre_commit, "install-hooks"], cwd=repo_a.path, env=env.network)
        run([*pre_commit, "install-hooks"], cwd=repo_b.path, env=env.network)
    except BenchError as exc:
        fig.skipped = "pre-commit could not build the hook environment (no package index?)"
        log(f"{fig.skipped}: {exc}")
        return fig
    log(f"pre-commit: hook environments ready ({time.perf_counter() - t0:.0f} s)")

    def toggler(path: Path) -> Callable[[], None]:
        branches = ["other", "main"]
        state = {"i": 0}

        def side() -> None:
            branch = branches[state["i"] % 2]
            state["i"] += 1
            command(("git", "checkout", "-q", branch), path, env.base)()

        return side

    side_a = toggler(repo_a.path)
    side_b = toggler(repo_b.path)
    side_a()
    stamp = repo_a.path / ".git" / "genstamp" / "generation.json"
    try:
        trigger = json.loads(stamp.read_text())["trigger"]
    except (OSError, ValueError, KeyError) as exc:
        raise BenchError(f"the post-checkout hook did not stamp ({exc})") from exc
    if trigger != "post-checkout":
        raise BenchError(f"the post-checkout hook stamped with trigger {trigger!r}")
    side_b()
    return measure(fig, side_a, side_b, plan)


SWITCH_CHANGED = 10  # files that differ between the two branches of the branch-switch figure


def switch_repo(path: Path, n: int) -> Repo:
    """``n`` files on main; ``other`` changes one file in each of SWITCH_CHANGED folders."""
    repo = build_repo(path, n, tests=0, dirty=False)
    git(path, "checkout", "-q", "-b", "other")
    for folder in repo.folders[1 : SWITCH_CHANGED + 1]:
        with open(path / folder / "m1.py", "a") as fh:
            fh.write("CHANGED_ON_OTHER = True\n")
    git(path, "commit", "-q", "-am", "other")
    git(path, "checkout", "-q", "main")
    return repo


class Switch(NamedTuple):
    """A branch-switch figure, and the post-checkout hook of its repository run alone (its
    ``prepare`` plants the bytecode the hook removes)."""

    figure: Figure
    hook: Callable[[], None] | None
    prepare: Callable[[], None] | None


def fig_branch_switch(n: int, plan: Plan, env: Env, largest: bool) -> Switch:
    """Issue 16: a post-checkout costs what the checkout changed, not the size of the tree.
    The target (issue 16: 100,000 files) is on the largest repository; the others show how
    the same switch costs at other sizes."""
    fig = Figure(
        "branch-switch",
        f"git checkout of a branch {SWITCH_CHANGED} files apart: genstamp's plain hooks vs none",
        "git checkout other  (core.hooksPath: genstamp's hooks/; bytecode of each changed file)",
        "git -c core.hooksPath=/dev/null checkout main",
        n,
        target=1.25 if largest else None,
        note="one repository, A switches main->other, B other->main; no reader settles the "
        "hooks' claims in between (as when a user switches back and forth)",
    )
    repo = switch_repo(env.tmp / f"switch-{n}", n)
    # An installed genstamp has its bytecode (pip compiles it): the hook process gets a cache of
    # its own, written during the warm-up, whatever PYTHONDONTWRITEBYTECODE the harness inherited.
    bytecode = {**env.with_bytecode(), "PYTHONPYCACHEPREFIX": str(env.tmp / "switch-pycache")}
    hooked = {**bytecode, "GENSTAMP": genstamp_cmd()[0]} if len(genstamp_cmd()) == 1 else None
    if hooked is None:
        fig.skipped = "no genstamp console script next to this interpreter"
        return Switch(fig, None, None)
    git(repo.path, "config", "core.hooksPath", str(ROOT / "hooks"))
    run([*genstamp_cmd(), "stamp"], cwd=repo.path, env=env.base)
    tag = sys.implementation.cache_tag

    changed = repo.folders[1 : SWITCH_CHANGED + 1]  # fewer in a --quick repository

    def plant() -> None:  # the bytecode a test run left for the files the switch rewrites
        for folder in changed:
            cache = repo.path / folder / "__pycache__"
            cache.mkdir(exist_ok=True)
            (cache / f"m1.{tag}.pyc").write_bytes(b"bytecode")

    side_a = command(("git", "checkout", "-q", "other"), repo.path, hooked)
    side_b = command(("git", "-c", "core.hooksPath=/dev/null", "checkout", "-q", "main"), repo.path)
    plant()
    side_a()
    stamp = json.loads((repo.path / ".git" / "genstamp" / "generation.json").read_text())
    pending = stamp.get("pending") or {}
    if pending.get("next", {}).get("scrub", {}).get("paths") != len(changed):
        raise BenchError(f"the post-checkout hook did not take the light path: {pending}")
    side_b()
    measure(fig, side_a, side_b, plan, prepare=plant)
    # The hook as git runs it after `git checkout other` (from the top of the work tree, the
    # old and new HEAD and the branch flag), in the repository left on main.
    old, new = git(repo.path, "rev-parse", "main"), git(repo.path, "rev-parse", "other")
    hook = command((ROOT / "hooks" / "post-checkout", old, new, "1"), repo.path, hooked)
    return Switch(fig, hook, plant)


def fig_hook_growth(switches: Sequence[Switch], plan: Plan) -> Figure:
    """Issue 16: the hook's own cost does not grow with the size of the tree. The same hook
    process, run alone (no checkout around it), in the largest and the smallest repository of
    the branch-switch figures."""
    ready = [s for s in switches if s.hook is not None and s.prepare is not None]
    big = max(ready, key=lambda s: s.figure.files) if ready else None
    small = min(ready, key=lambda s: s.figure.files) if ready else None
    files = big.figure.files if big else 0
    fig = Figure(
        "post-checkout-growth",
        "the post-checkout hook alone: largest vs smallest repository of the branch switch",
        f"hooks/post-checkout MAIN OTHER 1  ({files} files)",
        f"hooks/post-checkout MAIN OTHER 1  ({small.figure.files if small else 0} files)",
        files,
        target=1.10,
        note=f"what git runs after the switch, {SWITCH_CHANGED} files changed, their bytecode "
        "planted before each pair; a ratio near 1 is a cost that does not grow with the tree",
    )
    if big is None or small is None or big is small:
        fig.skipped = "needs two sizes of the branch-switch figure (--switch-files N M)"
        return fig
    assert big.hook and small.hook and big.prepare and small.prepare
    plant_big, plant_small = big.prepare, small.prepare

    def plant() -> None:
        plant_big()
        plant_small()

    return measure(fig, big.hook, small.hook, plan, prepare=plant)


@dataclass
class Growth:
    points: list[tuple[int, float, float]]  # files, identity median, pygit2 status median
    slope: float  # seconds per file, identity
    intercept: float
    slope_status: float

    def to_json(self) -> dict[str, Any]:
        return {
            "points": [
                {"files": n, "identity_s": a, "pygit2_status_s": b} for n, a, b in self.points
            ],
            "identity_per_1000_files_s": self.slope * 1000,
            "identity_intercept_s": self.intercept,
            "pygit2_status_per_1000_files_s": self.slope_status * 1000,
        }


def fit(xs: Sequence[float], ys: Sequence[float]) -> tuple[float, float]:
    """Least squares y = a + b x; with one point, through the origin."""
    if len(xs) == 1:
        return ys[0] / xs[0], 0.0
    mx, my = statistics.fmean(xs), statistics.fmean(ys)
    sxx = sum((x - mx) ** 2 for x in xs)
    slope = sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True)) / sxx
    return slope, my - slope * mx


def growth(figures: Sequence[Figure]) -> Growth:
    points = sorted((f.files, f.median_a, f.median_b) for f in figures)
    slope, intercept = fit([p[0] for p in points], [p[1] for p in points])
    slope_b, _ = fit([p[0] for p in points], [p[2] for p in points])
    return Growth(points, slope, intercept, slope_b)


# -- output ----------------------------------------------------------------------------------


def ms(seconds: float) -> str:
    return f"{seconds * 1000:.1f} ms" if seconds < 10 else f"{seconds:.2f} s"


def render(result: dict[str, Any], figures: Sequence[Figure], grow: Growth | None) -> str:
    m = result["machine"]
    lines = [
        f"genstamp benchmark ({result['finished']}, {result['wall_s']:.0f} s)",
        f"command: {result['command']}",
        f"machine: {m['cores']} cores ({m['cores_usable']} usable), {m['cpu']}, "
        f"{m['memory']} RAM, {m['os']}",
        f"versions: python {m['python']}, git {m['git']}, pygit2 {m['pygit2']}, "
        f"libgit2 {m['libgit2']}, genstamp {m['genstamp']}, pytest {m['pytest']}, "
        f"pre-commit {m['pre-commit']}",
        f"disk: {m['disk']}",
        f"load average (1/5/15 min): {m['load_start']} at the start, {m['load_end']} at the end",
        "method: synthetic repos (small files, 20 per leaf folder, 5 modified + 6 untracked), "
        "git config isolated (git's defaults), both sides warmed, pairs timed A B A B ...; "
        "ratio = median of the per-pair ratios A/B",
        "",
    ]
    header = (
        f"{'#':>2}  {'figure':<26} {'files':>7} {'pairs':>5} {'median A':>11} {'median B':>11}"
        f" {'A/B':>6}  {'target':<8} result"
    )
    lines += [header, "-" * len(header)]
    for i, f in enumerate(figures, 1):
        if f.skipped:
            lines.append(f"{i:>2}  {f.key:<26} {f.files:>7} {'-':>5}  skipped: {f.skipped}")
            continue
        target = f"<= {f.target:.2f}" if f.target is not None else "-"
        verdict = "reported" if f.met is None else ("met" if f.met else "MISSED")
        lines.append(
            f"{i:>2}  {f.key:<26} {f.files:>7} {f.pairs:>5} {ms(f.median_a):>11} "
            f"{ms(f.median_b):>11} {f.ratio:>6.2f}  {target:<8} {verdict}"
        )
    if grow is not None:
        lines += ["", "growth: tree identity (in-process) and pygit2 status by repository size"]
        lines.append(f"  {'files':>7} {'identity':>11} {'pygit2 status':>14} {'A/B':>6}")
        for n, a, b in grow.points:
            lines.append(f"  {n:>7} {ms(a):>11} {ms(b):>14} {a / b:>6.2f}")
        lines.append(
            f"  least-squares fit: identity {grow.slope * 1000 * 1000:.2f} ms per 1,000 files "
            f"(intercept {grow.intercept * 1000:+.1f} ms); pygit2 status "
            f"{grow.slope_status * 1000 * 1000:.2f} ms per 1,000 files"
        )
    lines += ["", "what A and B are:"]
    for i, f in enumerate(figures, 1):
        lines.append(f"{i:>2}. {f.title}")
        lines.append(f"    A: {f.a}")
        lines.append(f"    B: {f.b}")
        if f.note:
            lines.append(f"    note: {f.note}")
    return "\n".join(lines)


# -- main ------------------------------------------------------------------------------------


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    p.add_argument(
        "--files",
        type=int,
        nargs="+",
        metavar="N",
        help="repository sizes; the largest carries the main figures, all of them "
        "the growth figure (default 1000 10000 100000; --quick: 100 200)",
    )
    p.add_argument("--suite-files", type=int, help="files in the pytest-suite repo (10000)")
    p.add_argument("--tests", type=int, help="tests in the trivial suite (1000)")
    p.add_argument("--hook-files", type=int, help="files in the pre-commit hook repos (10000)")
    p.add_argument(
        "--switch-files",
        type=int,
        nargs="+",
        metavar="N",
        help="repository sizes of the branch-switch figure (10000 100000; --quick: 100 200)",
    )
    p.add_argument("--pairs", type=int, help="at least this many pairs per figure (5; quick 3)")
    p.add_argument(
        "--budget",
        type=float,
        default=10.0,
        help="seconds of timed work per figure: fast figures get more pairs (10)",
    )
    p.add_argument("--quick", action="store_true", help="tiny repos, 3 pairs: a smoke run")
    p.add_argument("--json", action="store_true", help="print the figures as JSON")
    p.add_argument(
        "--only",
        nargs="+",
        choices=FIGURES,
        metavar="FIGURE",
        help=f"only these figures ({', '.join(FIGURES)})",
    )
    p.add_argument(
        "--pre-commit",
        dest="pre_commit",
        action="store_true",
        default=None,
        help="include the pre-commit figure (default: on, off with --quick)",
    )
    p.add_argument("--no-pre-commit", dest="pre_commit", action="store_false")
    p.add_argument(
        "--real-pyc",
        action="store_true",
        help="scrub figure: plant real .pyc files, not hard links (slow to prepare)",
    )
    p.add_argument(
        "--installer",
        choices=("auto", "uv", "pip"),
        default="auto",
        help="clean-room figure: how `genstamp clean-run` makes its environment (auto)",
    )
    p.add_argument("--workdir", type=Path, help="where to build the repositories (a temp dir)")
    p.add_argument("--keep", action="store_true", help="keep the built repositories")
    args = p.parse_args(argv)
    quick = args.quick
    args.files = sorted(set(args.files or ([100, 200] if quick else [1000, 10000, 100000])))
    args.suite_files = args.suite_files or (200 if quick else 10000)
    args.tests = args.tests or (50 if quick else 1000)
    args.hook_files = args.hook_files or (200 if quick else 10000)
    args.switch_files = sorted(set(args.switch_files or ([100, 200] if quick else [10000, 100000])))
    args.pairs = args.pairs or (3 if quick else 5)
    if args.pre_commit is None:
        args.pre_commit = not quick
    if min(args.files) < 1 or args.pairs < 1:
        p.error("--files and --pairs must be positive")
    return args


@contextlib.contextmanager
def workspace(args: argparse.Namespace) -> Iterator[Path]:
    base = args.workdir
    if base is not None:
        base.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix="genstamp-bench-", dir=base)).resolve()
    try:
        yield tmp
    finally:
        if args.keep:
            log(f"kept {tmp}")
        else:
            shutil.rmtree(tmp, ignore_errors=True)


def main_figures(
    repo: Repo,
    wanted: set[str],
    by_size: Sequence[Figure],
    plan: Plan,
    env: Env,
    args: argparse.Namespace,
) -> list[Figure]:
    """The figures measured on the largest repository."""
    figures = []
    oracle = git_oracle_tree(repo.path, env)
    mine = tree_identity(open_checkout(repo.path))
    agree = "equals" if mine == oracle else f"DIFFERS FROM git's {oracle} (a bug):"
    check = f"identity {mine[:12]} {agree} `git add -A && git write-tree`"
    if mine != oracle:
        log(check)
    if "identity-vs-pygit2" in wanted:
        fig = next(f for f in by_size if f.files == repo.files)
        fig.note = check
        figures.append(fig)
    if "identity-vs-git" in wanted:
        figures.append(fig_identity_git(repo, plan, env))
    if "status-process-vs-git" in wanted:
        figures.append(fig_status_process(repo, plan, env))
    if "status-watchman-vs-git" in wanted:
        figures.append(fig_status_watchman(repo, plan, env))
    if "status-after-change" in wanted:
        figures.append(fig_status_changed(repo, plan, env))
    if {"verify-vs-pygit2", "verify-process-vs-git"} & wanted:
        note = fresh_evidence(repo, env)
        log(note)
        if "verify-vs-pygit2" in wanted:
            figures.append(fig_verify(repo, plan, note))
        if "verify-process-vs-git" in wanted:
            figures.append(fig_verify_process(repo, plan, env, note))
    if "scrub-vs-find" in wanted:
        # Last: its hard-linked copies change the ctime of every file in the repository, so
        # git and libgit2 would re-read every file until the index is refreshed.
        figures.append(fig_scrub(repo, plan, env, args.real_pyc))
    return sorted(figures, key=lambda f: FIGURES.index(f.key))


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    started = time.perf_counter()
    cmdline = shlex.join(sys.orig_argv) if argv is None else shlex.join(["bench/run.py", *argv])
    wanted = set(args.only or FIGURES)
    plan = (
        Plan(min_pairs=args.pairs, max_pairs=args.pairs, budget=0.0, warmup=1)
        if args.quick
        else Plan(min_pairs=args.pairs, max_pairs=40, budget=args.budget, warmup=2)
    )
    with workspace(args) as tmp, isolate(tmp) as env:
        info = machine(tmp)
        figures: list[Figure] = []
        by_size: list[Figure] = []
        largest = max(args.files)
        sizes = args.files if "growth" in wanted else [largest] if MAIN & wanted else []
        built: dict[int, Repo] = {}
        for n in sizes:
            built[n] = build_repo(tmp / f"repo-{n}", n)
            if "growth" in wanted or "identity-vs-pygit2" in wanted:
                by_size.append(fig_identity_pygit2(built[n], plan))
        if MAIN & wanted:
            figures += main_figures(built[largest], wanted, by_size, plan, env, args)
        if "pytest-plugin" in wanted:
            suite = build_repo(tmp / "suite", args.suite_files, tests=args.tests)
            figures.append(fig_pytest(suite, args.tests, plan, env))
        if "pytest-subprocesses" in wanted:
            figures.append(fig_subprocesses(tmp / "children", plan, env))
        if "post-checkout-pre-commit" in wanted:
            figures.append(fig_pre_commit(args.hook_files, plan, env, args.pre_commit))
        if {"branch-switch", "post-checkout-growth"} & wanted:
            top = max(args.switch_files)
            switches = [fig_branch_switch(n, plan, env, n == top) for n in args.switch_files]
            if "branch-switch" in wanted:
                figures += [s.figure for s in switches]
            if "post-checkout-growth" in wanted:
                figures.append(fig_hook_growth(switches, plan))
        if "identity-clean-filter" in wanted:
            figures.append(fig_identity_filter(tmp / "repo-filter", args.suite_files, plan))
        if "verify-attestations" in wanted:
            attested = build_repo(tmp / "attested", args.suite_files, tests=args.tests, dirty=False)
            figures.append(fig_verify_attestations(attested, args.tests, plan, env))
        if "clean-room" in wanted:
            asked = not args.quick or args.only is not None
            figures.append(
                fig_clean_room(
                    tmp / "clean", args.suite_files, args.tests, plan, env, asked, args.installer
                )
            )
        if "child-start" in wanted:
            # Last: the run it opens leaves this process's audit hook installed (inert once
            # the run is closed, but a call per event), which no in-process figure should pay.
            figures.append(fig_child_start(tmp / "child-start", plan, env))
        grow = growth(by_size) if "growth" in wanted and by_size else None
        info["load_end"] = _load()
        result: dict[str, Any] = {
            "command": cmdline,
            "finished": datetime.now(timezone.utc).isoformat(timespec="seconds"),
            "wall_s": time.perf_counter() - started,
            "quick": args.quick,
            "machine": info,
            "figures": [f.to_json() for f in figures],
            "growth": grow.to_json() if grow else None,
        }
        if args.json:
            print(json.dumps(result, indent=2))
        else:
            print(render(result, figures, grow))
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except BenchError as exc:
        print(f"bench: {exc}", file=sys.stderr)
        sys.exit(2)
    except KeyboardInterrupt:
        sys.exit(130)
