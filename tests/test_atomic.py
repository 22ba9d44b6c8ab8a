"""Atomic state under faults: a stamp or evidence write killed or failing at any point leaves the
old whole file or the new whole file; racing restamps end with one valid generation; a damaged
stamp is `no-stamp` with its reason, never a traceback.

test_generation.py already proves that readers never see a torn stamp while two writers loop and
that two `genstamp stamp` processes race cleanly; here the writer itself dies (SIGKILL at a
chosen step, and at random moments) or fails (an OSError, a KeyboardInterrupt) mid-write.
"""

from __future__ import annotations

import errno
import json
import os
import random
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from conftest import (
    RunGenstamp,
    commit_all,
    genstamp_here,
    git,
    git_tree,
    init_repo,
    run_genstamp,
    run_pytest,
    subprocess_env,
    write_calc,
)

from genstamp import atomic, evidence, generation, restamp
from genstamp.errors import GenstampError
from genstamp.repo import open_checkout

KEY = "cd" * 32
STATE = Path(".git", "genstamp")


def make_project(root: Path) -> Path:
    repo = write_calc(init_repo(root))
    commit_all(repo, "calc")
    return repo


def junit_file(path: Path, cases: int = 50, output: int = 0) -> Path:
    """A JUnit file with ``cases`` testcases and ``output`` bytes of captured output (a bigger
    file keeps a write in flight longer, so a random kill lands inside it more often)."""
    body = "".join(f'<testcase classname="t.m" name="test_{i}"/>' for i in range(cases))
    loud = f'<testcase classname="t.m" name="loud"><system-out>{"x" * output}</system-out>'
    path.write_text(
        f'<?xml version="1.0"?>\n<testsuite name="s" tests="{cases + 1}">{body}{loud}'
        "</testcase></testsuite>\n"
    )
    return path


def temp_files(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.endswith(".tmp"))


def assert_whole_evidence(path: Path) -> dict[str, str]:
    """The file reads, carries one binding, and that binding's seal matches its content."""
    report = evidence.read_report(path)
    props = report.properties
    assert props.get(evidence.P_SEAL) == evidence.seal(KEY, props, report)
    assert report.counts.tests == 51
    return props


# -- SIGKILL at each step of a write --------------------------------------------------------

CHILD = textwrap.dedent(
    """
    import os, signal, sys
    from pathlib import Path
    from genstamp import evidence, generation, restamp
    from genstamp.repo import open_checkout

    what, point, repo, junit = sys.argv[1:5]
    real_fdopen, real_replace, real_fsync = os.fdopen, os.replace, os.fsync

    def die(*_args, **_kwargs):
        os.kill(os.getpid(), signal.SIGKILL)

    class HalfWriter:
        def __init__(self, fh):
            self.fh = fh
        def __enter__(self):
            return self
        def __exit__(self, *exc):
            return self.fh.__exit__(*exc)
        def fileno(self):
            return self.fh.fileno()
        def write(self, data):
            self.fh.write(data[: len(data) // 2])
            self.fh.flush()
            die()
        def flush(self):
            self.fh.flush()

    if point == "before-write":
        os.fdopen = die
    elif point == "half-written":
        os.fdopen = lambda fd, mode: HalfWriter(real_fdopen(fd, mode))
    elif point == "before-rename":
        os.fsync = lambda fd: (real_fsync(fd), die())
    elif point == "after-rename":
        os.replace = lambda a, b: (real_replace(a, b), die())
    checkout = open_checkout(repo)
    if what == "stamp":
        restamp.begin(checkout, do_scrub=False)
    else:
        evidence.bind(Path(junit), {evidence.P_GENERATION: "e" * 32}, KEY)
    sys.exit(3)  # never reached: every point kills the process
    """
).replace("KEY", repr(KEY))


@pytest.fixture
def stamped(tmp_path: Path) -> Path:
    repo = make_project(tmp_path / "repo")
    restamp.begin(open_checkout(repo), do_scrub=False)
    return repo


@pytest.mark.parametrize("what", ["stamp", "evidence"])
@pytest.mark.parametrize("point", ["before-write", "half-written", "before-rename", "after-rename"])
def test_a_write_killed_at_any_step_leaves_the_old_or_the_new_whole_file(
    stamped: Path, tmp_path: Path, what: str, point: str
) -> None:
    checkout = open_checkout(stamped)
    junit = junit_file(tmp_path / "junit.xml")
    evidence.bind(junit, {evidence.P_GENERATION: "d" * 32}, KEY)
    target = generation.stamp_path(checkout) if what == "stamp" else junit
    old = target.read_bytes()

    proc = subprocess.run(
        [sys.executable, "-c", CHILD, what, point, str(stamped), str(junit)],
        capture_output=True,
        text=True,
        env=subprocess_env(),
        timeout=60,
    )
    assert proc.returncode == -signal.SIGKILL, proc.stderr

    new = target.read_bytes()
    if point == "after-rename":
        assert new != old  # the new whole file
    else:
        assert new == old  # the old whole file, byte for byte
    gen = generation.current(checkout)  # parses: never a torn stamp
    assert gen is not None
    props = assert_whole_evidence(junit)
    expected = "e" * 32 if (what, point) == ("evidence", "after-rename") else "d" * 32
    assert props[evidence.P_GENERATION] == expected
    # What a killed writer leaves is a temp file beside the target (never the target itself);
    # the stamp's lives in the git dir, so the work tree and its identity are untouched.
    leftovers = temp_files(target.parent)
    if point == "after-rename":
        assert leftovers == []
    else:
        assert len(leftovers) == 1 and leftovers[0].startswith(f".{target.name}.")
    assert git(stamped, "status", "--porcelain") == ""
    assert gen.tree == git_tree(stamped)


# -- SIGKILL at random moments of a writer that never stops -----------------------------------

LOOP = textwrap.dedent(
    """
    import sys
    from pathlib import Path
    from genstamp import evidence, generation, restamp
    from genstamp.repo import open_checkout

    checkout = open_checkout(sys.argv[1])
    junit = Path(sys.argv[2])
    n = 0
    while True:
        gen, _ = restamp.begin(checkout, do_scrub=False)
        evidence.bind(junit, {evidence.P_GENERATION: gen.id, "genstamp.round": str(n)}, KEY)
        n += 1
        if n == 1:
            print("looping", flush=True)
    """
).replace("KEY", repr(KEY))


def test_writers_killed_at_random_moments_leave_whole_files(stamped: Path, tmp_path: Path) -> None:
    checkout = open_checkout(stamped)
    junit = junit_file(tmp_path / "junit.xml", output=2 << 20)  # a 2 MB file: a long write
    evidence.bind(junit, {evidence.P_GENERATION: "d" * 32}, KEY)
    rng = random.Random(6)
    seen: set[str] = set()
    for _ in range(8):
        child = subprocess.Popen(
            [sys.executable, "-c", LOOP, str(stamped), str(junit)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=subprocess_env(),
        )
        assert child.stdout is not None
        assert child.stdout.readline() == "looping\n", child.communicate()[1]
        time.sleep(rng.uniform(0, 0.08))  # a random moment, not a timing assertion
        child.send_signal(signal.SIGKILL)
        child.communicate(timeout=60)
        assert child.returncode == -signal.SIGKILL

        gen = generation.current(checkout)
        assert gen is not None and gen.tree == git_tree(stamped)
        props = assert_whole_evidence(junit)
        seen.add(props[evidence.P_GENERATION])
        # the gate reads both without an exception, whatever pair the kill left (main in this
        # process: anything but a verdict would raise here)
        code, out, err = genstamp_here("-C", stamped, "verify", "--junit", junit)
        assert code == 1, err
        # the loop binds no tree: unbound, and never no-stamp (the stamp is always whole)
        assert out.startswith("unbound-evidence: "), out
        assert "no-stamp" not in out
    assert len(seen) == 8  # every round's writer finished a write before it was killed


# -- a write that fails in-process: the old file stays, no temp file is left --------------------


class _Os(ModuleType):
    """``os`` for genstamp.atomic only, with some functions replaced."""

    def __init__(self, **replaced: Callable[..., Any]) -> None:
        super().__init__("os")
        self.__dict__.update(replaced)

    def __getattr__(self, name: str) -> Any:
        return getattr(os, name)


def _half_then(exc: BaseException) -> Callable[..., Any]:
    """fdopen whose file writes half of what it is given, then raises ``exc``."""

    def fdopen(fd: int, mode: str) -> Any:
        fh = os.fdopen(fd, mode)
        real_write = fh.write

        def write(data: bytes) -> int:
            real_write(data[: len(data) // 2])
            fh.flush()
            raise exc

        fh.write = write  # type: ignore[method-assign]
        return fh

    return fdopen


def _raise(exc: BaseException) -> Callable[..., Any]:
    def fail(*_args: object) -> None:
        raise exc

    return fail


FAULTS: dict[str, Callable[[], _Os]] = {
    "disk-full-mid-write": lambda: _Os(fdopen=_half_then(OSError(errno.ENOSPC, "No space left"))),
    "fsync-fails": lambda: _Os(fsync=_raise(OSError(errno.EIO, "Input/output error"))),
    "rename-fails": lambda: _Os(replace=_raise(OSError(errno.EACCES, "Permission denied"))),
}


@pytest.mark.parametrize("fault", sorted(FAULTS))
def test_a_failed_stamp_write_keeps_the_old_stamp(
    stamped: Path, genstamp: RunGenstamp, monkeypatch: pytest.MonkeyPatch, fault: str
) -> None:
    checkout = open_checkout(stamped)
    path = generation.stamp_path(checkout)
    old = path.read_bytes()
    monkeypatch.setattr(atomic, "os", FAULTS[fault]())

    with pytest.raises(GenstampError, match=f"cannot write {path}"):
        restamp.begin(checkout, do_scrub=False)
    code, out, err = genstamp("-C", stamped, "stamp")
    assert (code, out) == (2, "")
    assert err.startswith(f"genstamp: cannot write {path}: ") and err.count("\n") == 1

    assert path.read_bytes() == old
    assert temp_files(path.parent) == []
    monkeypatch.undo()
    assert genstamp("-C", stamped, "stamp")[0] == 0  # and the next write works
    assert path.read_bytes() != old


@pytest.mark.parametrize("fault", sorted(FAULTS))
def test_a_failed_evidence_write_keeps_the_old_evidence(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fault: str
) -> None:
    junit = junit_file(tmp_path / "junit.xml")
    evidence.bind(junit, {evidence.P_GENERATION: "d" * 32}, KEY)
    old = junit.read_bytes()
    monkeypatch.setattr(atomic, "os", FAULTS[fault]())
    with pytest.raises(OSError):
        evidence.bind(junit, {evidence.P_GENERATION: "e" * 32}, KEY)
    assert junit.read_bytes() == old
    assert temp_files(tmp_path) == []
    assert assert_whole_evidence(junit)[evidence.P_GENERATION] == "d" * 32


def test_a_write_that_cannot_replace_its_file_names_that_file(tmp_path: Path) -> None:
    """A folder where the file should be: the error names the folder given, not the temporary
    file it was written to first (which is gone)."""
    folder = tmp_path / "out"
    folder.mkdir()
    with pytest.raises(IsADirectoryError) as raised:
        atomic.write_atomic(folder, b"data")
    assert raised.value.filename == str(folder)
    assert sorted(tmp_path.iterdir()) == [folder] and not any(folder.iterdir())


def test_an_interrupt_mid_write_keeps_the_old_stamp(
    stamped: Path, genstamp: RunGenstamp, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = generation.stamp_path(open_checkout(stamped))
    old = path.read_bytes()
    monkeypatch.setattr(atomic, "os", _Os(fdopen=_half_then(KeyboardInterrupt())))
    code, out, err = genstamp("-C", stamped, "stamp")
    assert (code, out, err) == (130, "", "genstamp: interrupted\n")
    assert path.read_bytes() == old
    assert temp_files(path.parent) == []


# -- restamps racing: one valid generation ------------------------------------------------------


def test_racing_restamps_from_every_entry_point_end_with_one_valid_generation(
    tmp_path: Path,
) -> None:
    """post-checkout and post-merge firing together (`git pull` in two terminals, an IDE and
    a shell) and a manual stamp, all scrubbing the same warm tree at once."""
    repo = make_project(tmp_path / "repo")
    head = git(repo, "rev-parse", "HEAD")
    for n in range(40):
        cache = repo / "src" / f"gone{n}" / "__pycache__"
        cache.mkdir(parents=True)
        for m in range(5):
            (cache / f"m{m}.cpython-311.pyc").write_bytes(b"x" * 64)
    commands = [
        ["hook", "post-checkout", head, head, "1"],
        ["hook", "post-merge", "0"],
        ["hook", "post-checkout", head, head, "1"],
        ["hook", "post-merge", "0"],
        ["stamp", "--json"],
    ]
    procs = [
        subprocess.Popen(
            [sys.executable, "-m", "genstamp", *args],
            cwd=repo,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=subprocess_env(),
        )
        for args in commands
    ]
    announced, kept = [], []
    for proc in procs:
        out, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err
        assert "Traceback" not in err and "cannot remove" not in err, err
        if out:
            announced.append(json.loads(out)["generation"]["id"][:12])
        elif "new generation " in err:
            announced.append(err.split("new generation ", 1)[1][:12])
        else:  # the content is what a racer's generation began with: kept, not begun again
            # "generation ID kept: why" (stamp) or "generation ID kept if ..." (a hook)
            kept.append(err.split("genstamp: generation ", 1)[1][:12])
    assert len(set(announced)) == len(announced) >= 1  # each that began, began its own
    assert set(kept) <= set(announced)  # what was kept, another racer began

    checkout = open_checkout(repo)
    gen = generation.current(checkout)
    assert gen is not None and gen.id[:12] in announced
    assert gen.trigger in ("post-checkout", "post-merge", "manual")
    assert gen.tree == git_tree(repo)
    assert sorted(p.name for p in (repo / "src").iterdir()) == ["calc"]  # all scrubbed
    assert [p.name for p in checkout.state.iterdir()] == ["generation.json"]
    # the surviving generation is one the gate works with
    assert run_pytest(repo).returncode == 0
    proc = run_genstamp(repo, "verify")
    assert proc.returncode == 0, proc.stdout + proc.stderr


# -- a damaged stamp: no-stamp with the reason, through the real command ------------------------


@pytest.fixture(scope="module")
def tested(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A stamped project tested green: evidence the gate accepts while the stamp is whole."""
    repo = make_project(tmp_path_factory.mktemp("tested") / "repo")
    restamp.begin(open_checkout(repo), do_scrub=False)
    assert run_pytest(repo).returncode == 0
    return repo


def _damage(kind: str, good: dict[str, Any], path: Path) -> None:
    text = json.dumps(good, indent=2)
    if kind == "directory":
        path.mkdir()
        return
    if kind == "binary":
        path.write_bytes(b"\xff\xfe\x00\x01 not utf-8")
        return
    data = {
        "empty": "",
        "truncated": text[: len(text) // 3],
        "not-json": "generation: yes\n",
        "null": "null",
        "missing-key": json.dumps({k: v for k, v in good.items() if k != "key"}),
        "tree-not-a-string": json.dumps({**good, "tree": 1}),
        "nested-too-deep": "[" * 200_000,
        "integer-too-long": text.replace(f'"created_ns": {good["created_ns"]}', '"created_ns": '
                                         + "9" * 10_000),
    }[kind]  # fmt: skip
    path.write_text(data, encoding="utf-8")


DAMAGE = {
    "empty": "is empty",
    "truncated": "not valid JSON",
    "not-json": "not valid JSON",
    "binary": "not valid JSON",
    "null": "is not a genstamp generation stamp",
    "missing-key": "missing or wrong fields: key",
    "tree-not-a-string": "missing or wrong fields: tree",
    "nested-too-deep": "not valid JSON",
    "integer-too-long": "not valid JSON",
    "directory": "cannot read the generation stamp",
}


@pytest.mark.parametrize("kind", sorted(DAMAGE))
def test_a_damaged_stamp_is_no_stamp_with_its_reason(tested: Path, kind: str) -> None:
    path = tested / STATE / "generation.json"
    good_bytes = path.read_bytes()
    good = json.loads(good_bytes)
    try:
        path.unlink()
        _damage(kind, good, path)
        proc = run_genstamp(tested, "verify")
    finally:
        if path.is_dir():
            path.rmdir()
        path.write_bytes(good_bytes)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stdout + proc.stderr
    first = proc.stdout.splitlines()[0]
    assert first.startswith("no-stamp: ") and str(path) in first and DAMAGE[kind] in first, first
    assert "genstamp stamp" in first  # the remedy


def test_the_whole_stamp_is_accepted(tested: Path) -> None:
    """The control for the damage above: the same checkout and evidence, stamp intact."""
    proc = run_genstamp(tested, "verify")
    assert proc.returncode == 0, proc.stdout + proc.stderr
