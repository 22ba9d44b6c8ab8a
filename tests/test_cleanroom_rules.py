"""The clean-room rules as table tests over facts, and the clean-room record's format."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from conftest import commit_all, committed
from test_rules import A1, B1, B2, COV_AB, COV_AB_LEFT, SUITE_AB, TESTED, facts, report

from genstamp import cleanrecord, cleanroom, cleanrun, envcache
from genstamp.config import Config
from genstamp.errors import GenstampError
from genstamp.rules import REMEDY, Target, decide

OTHER = "0743e2" + "0" * 34
GREEN_ALL = {A1: "passed", B1: "passed", B2: "passed"}


def room(tree: str = TESTED, **changes: Any) -> cleanrecord.CleanRoom:
    base = cleanrecord.CleanRoom(
        tree=tree,
        ok=True,
        failures=(),
        outcomes=GREEN_ALL,
        counts={"tests": 3, "passed": 3, "failed": 0, "errors": 0, "skipped": 0},
        complete=True,
        narrowed=False,
        when="2026-12-01T03:00:00Z",
        genstamp="0",
        install="uv: .[test]",
    )
    return base._replace(**changes)


def warm(**changes: Any) -> Any:
    """Fresh green warm evidence of the work tree that covered the suite (A1, B1, B2)."""
    return facts(report=report(coverage=COV_AB), suites=SUITE_AB, **changes)


REQUIRED = Config(require_clean_room=True)
ROWS: dict[str, tuple[Any, Config, list[str], str]] = {
    "control-no-record": (warm(), Config(), [], ""),
    "control-same-outcomes": (warm(clean_rooms={TESTED: room()}), Config(), [], ""),
    "control-required-and-passing": (warm(clean_rooms={TESTED: room()}), REQUIRED, [], ""),
    "diverged-import-error-in-clean-room": (
        warm(clean_rooms={TESTED: room(outcomes={A1: "passed"}, ok=False)}),
        Config(),
        ["clean-room-diverged"],
        f"{B1} (passed warm, not run clean), {B2} (passed warm, not run clean)",
    ),
    "diverged-failed-clean": (
        warm(clean_rooms={TESTED: room(outcomes={**GREEN_ALL, B2: "failed"})}),
        Config(),
        ["clean-room-diverged"],
        f"{B2} (passed warm, failed clean)",
    ),
    "diverged-skipped-clean": (
        warm(clean_rooms={TESTED: room(outcomes={**GREEN_ALL, A1: "skipped"})}),
        Config(),
        ["clean-room-diverged"],
        f"{A1} (passed warm, skipped clean)",
    ),
    "control-narrowed-clean-run-compares-what-ran": (
        warm(clean_rooms={TESTED: room(outcomes={A1: "passed"}, narrowed=True)}),
        Config(),
        [],
        "",
    ),
    "control-record-of-another-tree": (
        warm(clean_rooms={OTHER: room(OTHER, outcomes={A1: "failed"})}),
        Config(),
        [],
        "",
    ),
    "control-warm-did-not-run-it": (
        facts(
            report=report(coverage=COV_AB_LEFT),
            suites=SUITE_AB,
            clean_rooms={TESTED: room(outcomes={**GREEN_ALL, B2: "failed"})},
        ),
        Config(allow_partial=True),
        [],
        "",
    ),
    "diverged-unreadable-record": (
        warm(clean_room_problems=("x.json is genstamp-clean-room version 9",)),
        Config(),
        ["clean-room-diverged"],
        "cannot be compared: x.json is genstamp-clean-room version 9",
    ),
    "required-none": (
        warm(),
        REQUIRED,
        ["no-clean-room"],
        f"no clean-room evidence for tree {TESTED[:12]} (work tree)",
    ),
    "required-record-of-another-tree": (
        warm(clean_room_latest=OTHER, clean_rooms={OTHER: room(OTHER)}),
        REQUIRED,
        ["no-clean-room"],
        f"the latest clean run tested tree {OTHER[:12]}",
    ),
    "required-clean-run-failed": (
        warm(clean_rooms={TESTED: room(ok=False, failures=("tests-failed: 1 failed",))}),
        REQUIRED,
        ["no-clean-room"],
        "did not pass (2026-12-01T03:00:00Z): tests-failed: 1 failed",
    ),
    "required-clean-run-partial": (
        warm(clean_rooms={TESTED: room(complete=False)}),
        REQUIRED,
        ["no-clean-room"],
        "covered part of the suite",
    ),
    "required-unreadable": (
        warm(clean_room_problems=("x.json is not a genstamp clean-room record",)),
        REQUIRED,
        ["no-clean-room", "no-clean-room"],  # the problem, then the tree left without one
        "x.json is not a genstamp clean-room record",
    ),
    "required-each-rev": (
        warm(
            targets=(Target("main", TESTED), Target("v1", OTHER)),
            diffs={(TESTED, OTHER): ("a.py",)},
            clean_rooms={TESTED: room()},
        ),
        REQUIRED,
        ["tree-mismatch", "no-clean-room"],
        "",
    ),
    "diverged-and-required-both-said": (
        warm(clean_rooms={TESTED: room(outcomes={}, ok=False, failures=("tests-failed: x",))}),
        REQUIRED,
        ["clean-room-diverged", "no-clean-room"],
        "(passed warm, not run clean)",
    ),
}


@pytest.mark.parametrize("name", list(ROWS))
def test_clean_room_rules(name: str) -> None:
    given, settings, rules, says = ROWS[name]
    verdict = decide(given, settings)
    assert [f.rule for f in verdict.failures] == rules
    if says:
        assert says in verdict.failures[0].message
    for failure in verdict.failures:
        assert failure.line().endswith(REMEDY[failure.rule])
    if "skipped" in says:  # either side may lack a dependency (h188): the remedy says both
        assert "or the warm one does (a test skipped warm that ran clean" in REMEDY[rules[0]]


def test_required_names_the_rev_without_evidence() -> None:
    given = warm(
        targets=(Target("main", TESTED), Target("v1", OTHER)),
        diffs={(TESTED, OTHER): ("a.py",)},
        clean_rooms={TESTED: room()},
    )
    clean = [f for f in decide(given, REQUIRED).failures if f.rule == "no-clean-room"]
    assert [f.message for f in clean] == [f"no clean-room evidence for tree {OTHER[:12]} (v1)"]


def test_record_round_trip_and_versions(tmp_path: Path) -> None:
    record = room()
    path = cleanrecord.write(tmp_path, record)
    assert path == tmp_path / "genstamp" / "clean-room" / f"{TESTED}.json"
    assert cleanrecord.read(tmp_path, TESTED) == record
    assert cleanrecord.read(tmp_path, OTHER) is None
    assert cleanrecord.latest(tmp_path) == TESTED
    assert cleanrecord.passing(tmp_path, TESTED)
    data = json.loads(path.read_text())
    assert (data["format"], data["version"]) == ("genstamp-clean-room", 2)
    # a later version, or version 1, whose node ids hold the clean checkout's own folder where
    # version 2's hold `<checkout>` (read as this version's, a green run was refused for them)
    for version in (9, 1):
        path.write_text(json.dumps({**data, "version": version}))
        with pytest.raises(GenstampError) as caught:
            cleanrecord.read(tmp_path, TESTED)
        said = f"genstamp-clean-room version {version}; this genstamp reads version 2"
        assert said in caught.value.message
    assert not cleanrecord.passing(tmp_path, TESTED)
    path.write_text(json.dumps({**data, "tree": OTHER}))
    with pytest.raises(GenstampError, match="holds the record of tree"):
        cleanrecord.read(tmp_path, TESTED)


def test_record_from_the_clean_gate() -> None:
    verdict = {
        "ok": True,
        "failures": [],
        "tested_tree": OTHER,
        "tests": {"tests": 1, "passed": 1},
        "selection": {"complete": True},
    }
    record = cleanrecord.new(TESTED, verdict, {A1: "passed"}, narrowed=False, install="pip: .")
    assert not record.ok  # the clean checkout tested another tree than the one judged
    assert record.failures == (
        f"tree-mismatch: the clean checkout tested tree {OTHER}, not {TESTED}",
    )
    good = cleanrecord.new(OTHER, verdict, {A1: "passed"}, narrowed=False, install="pip: .")
    assert good.ok and good.complete and good.counts["passed"] == 1


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


@pytest.mark.parametrize("ci", ["", "true"])
def test_steps_on_a_terminal_and_in_ci(ci: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CI", ci) if ci else monkeypatch.delenv("CI", raising=False)
    stream = _Terminal()
    progress = cleanrun.printer(stream, quiet=False)
    progress("checkout", "start", 0.0)
    progress("checkout", "done", 0.25)
    progress("install", "start", 0.0)
    progress("install", "failed", 1.5)
    if ci:  # plain lines, one per finished step
        assert stream.getvalue() == (
            "genstamp: clean-run: checkout done in 0.25 s\n"
            "genstamp: clean-run: install failed in 1.50 s\n"
        )
    else:  # redrawn in place, with times
        assert stream.getvalue() == (
            "  checkout     …\r  checkout       0.25 s  done\n"
            "  install      …\r  install        1.50 s  FAILED\n"
        )
    quiet = _Terminal()
    cleanrun.printer(quiet, quiet=True)("run", "done", 1.0)
    assert quiet.getvalue() == ""


def test_piped_output_is_plain(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CI", raising=False)
    stream = io.StringIO()
    cleanrun.printer(stream, quiet=False)("run", "done", 2.0)
    assert stream.getvalue() == "genstamp: clean-run: run done in 2.00 s\n"


def test_install_arguments() -> None:
    assert cleanroom.project_args([".[test]"]) == [".[test]"]
    assert cleanroom.project_args(["-e", ".[test]", "-r", "req.txt"]) == ["-e", ".[test]"]
    assert cleanroom.project_args(["-r", "requirements.txt", "pkg==1"]) == []
    flags = envcache.index_flags(
        "global.extra-index-url='file:///a file:///b'\n:env:.find-links='/w'\n"
        "global.index-url='https://idx'\nglobal.cert='/c'\n"
    )
    assert flags == [
        "--index-url", "https://idx",
        "--extra-index-url", "file:///a",
        "--extra-index-url", "file:///b",
        "--find-links", "/w",
    ]  # fmt: skip


@pytest.mark.parametrize(
    "given", ["args", "attached", "requirements", "nested-requirements", "pip-variable", "uv"]
)
def test_the_environment_key_follows_what_a_find_links_folder_holds(
    tmp_path: Path, given: str
) -> None:
    """A wheel in a folder the install finds packages in (`--find-links vendor`), rebuilt under
    the same version: the cached environment kept the old one, and the clean run passed on it
    (h156 02). Its blob (committed) or its size and time (not) are an input; the folder's other
    files too. A requirements file's `-f` is taken from its own folder, as pip takes it, and
    uv's variable is split at commas."""
    uv = envcache.Installer("uv", "uv")
    repo = committed(
        tmp_path / "repo", {"pyproject.toml": '[project]\nname = "p"\nversion = "1"\n'}
    )
    vendor = repo / "vendor"
    vendor.mkdir()
    wheel = vendor / "mylib-1.0-py3-none-any.whl"
    wheel.write_bytes(b"VALUE = 1")
    args, environ = ["."], {}
    if given == "args":
        args = ["--find-links", "vendor", "."]
    elif given == "attached":
        args = ["-fvendor", "."]
    elif given == "requirements":
        (repo / "requirements.txt").write_text("--find-links vendor\nmylib\n")
    elif given == "nested-requirements":
        (repo / "requirements").mkdir()
        (repo / "requirements" / "ci.txt").write_text("-f ../vendor\nmylib\n")
        args = ["-r", "requirements/ci.txt", "."]
    elif given == "pip-variable":
        environ = {"PIP_FIND_LINKS": str(vendor)}
    else:
        environ = {"UV_FIND_LINKS": f"/nonexistent,{vendor}"}
    commit_all(repo, "the vendored wheel")
    first = envcache.key(repo, args, uv, environ)
    assert envcache.key(repo, args, uv, environ) == first
    wheel.write_bytes(b"VALUE = 2")  # rebuilt, the same size
    commit_all(repo, "rebuilt")
    second = envcache.key(repo, args, uv, environ)
    assert second != first
    (vendor / "other-1.0-py3-none-any.whl").write_bytes(b"")  # (not committed)
    assert envcache.key(repo, args, uv, environ) != second


def test_the_environment_key_follows_dependency_inputs(tmp_path: Path) -> None:
    uv = envcache.Installer("uv", "uv")
    (tmp_path / "pyproject.toml").write_text(
        '[project]\nname = "p"\nversion = "1"\ndependencies = ["a"]\n'
    )
    first = envcache.key(tmp_path, ["."], uv, {})
    (tmp_path / "pyproject.toml").write_text(
        '[project]\nname = "p"\nversion = "2"\ndependencies = ["a"]\n'
    )
    assert envcache.key(tmp_path, ["."], uv, {}) == first  # the version is not an input
    assert envcache.key(tmp_path, ["."], uv, {"PIP_INDEX_URL": "x"}) != first
    assert envcache.key(tmp_path, ["."], uv, {"PIP_DEFAULT_TIMEOUT": "9"}) == first
    # what else an installer resolves by: another environment (the cached one was reused)
    for resolving in ("UV_RESOLUTION", "UV_PRERELEASE", "UV_EXCLUDE_NEWER", "PIP_PRE"):
        assert envcache.key(tmp_path, ["."], uv, {resolving: "x"}) != first, resolving
    for fetching in ("UV_CACHE_DIR", "UV_HTTP_TIMEOUT", "PIP_CERT", "PIP_PROGRESS_BAR"):
        assert envcache.key(tmp_path, ["."], uv, {fetching: "x"}) == first, fetching
    assert envcache.key(tmp_path, [".[test]"], uv, {}) != first
    assert envcache.key(tmp_path, ["."], envcache.Installer("pip", None), {}) != first
    (tmp_path / "requirements-dev.txt").write_text("b\n")
    second = envcache.key(tmp_path, ["."], uv, {})
    assert second != first
    (tmp_path / "pyproject.toml").write_text(
        '[project]\nname = "p"\nversion = "2"\ndependencies = ["a", "c"]\n'
    )
    assert envcache.key(tmp_path, ["."], uv, {}) != second


def test_the_environment_key_follows_the_installers_configuration(tmp_path: Path) -> None:
    """An edit to a constraint file the environment or pip's configuration names, or to that
    configuration, decides what an install resolves: another environment, its name unchanged."""
    uv = envcache.Installer("uv", "uv")
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "p"\nversion = "1"\n')
    home = tmp_path / "home"
    (home / ".config" / "pip").mkdir(parents=True)
    pins = tmp_path / "pins.txt"
    pins.write_text("six==1.16.0\n")
    environ = {"HOME": str(home), "XDG_CONFIG_DIRS": str(tmp_path / "none")}
    for variable in ("PIP_CONSTRAINT", "UV_CONSTRAINT", "UV_OVERRIDE"):
        pins.write_text("six==1.16.0\n")
        first = envcache.key(tmp_path, ["."], uv, {**environ, variable: str(pins)})
        pins.write_text("six==1.17.0\n")
        assert envcache.key(tmp_path, ["."], uv, {**environ, variable: str(pins)}) != first
    # pip's own configuration, and the constraint file it names
    plain = envcache.key(tmp_path, ["."], uv, environ)
    conf = home / ".config" / "pip" / "pip.conf"
    conf.write_text(f"[global]\nconstraint = {pins}\n")
    named = envcache.key(tmp_path, ["."], uv, environ)
    assert named != plain
    pins.write_text("six==1.16.0\n")
    assert envcache.key(tmp_path, ["."], uv, environ) != named
    again = envcache.key(tmp_path, ["."], uv, environ)
    assert envcache.key(tmp_path, ["."], uv, environ) == again  # nothing else moves it


@pytest.mark.parametrize(
    ("files", "args", "edited"),
    [
        # dependencies setuptools reads from a file its dynamic table names
        (
            {
                "pyproject.toml": '[project]\nname = "p"\nversion = "1"\n'
                'dynamic = ["dependencies"]\n[tool.setuptools.dynamic]\n'
                'dependencies = {file = ["deps.in"]}\n',
                "deps.in": "six\n",
            },
            ["."],
            "deps.in",
        ),
        # a requirements file's own -r, followed from the one the arguments name
        (
            {"requirements.txt": "-r deps/base.txt\n", "deps/base.txt": "six\n"},
            ["-r", "requirements.txt"],
            "deps/base.txt",
        ),
        (
            {"reqs/all.txt": "-c pins.txt\n", "reqs/pins.txt": "six==1\n"},
            ["-rreqs/all.txt"],
            "reqs/pins.txt",
        ),
    ],
)
def test_the_environment_key_follows_every_file_that_names_dependencies(
    tmp_path: Path, files: dict[str, str], args: list[str], edited: str
) -> None:
    uv = envcache.Installer("uv", "uv")
    for rel, text in files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    first = envcache.key(tmp_path, args, uv, {})
    (tmp_path / edited).write_text("")
    assert envcache.key(tmp_path, args, uv, {}) != first


def test_an_environment_an_earlier_run_installed_into_is_not_reused(tmp_path: Path) -> None:
    """A test's `pip install` (or uninstall) in the clean environment makes it another one."""
    env = tmp_path / "env"
    site = env / "lib" / "python3.11" / "site-packages"
    site.mkdir(parents=True)
    (env / "bin").mkdir()
    (env / "bin" / "python").write_text("")
    (site / "pytest-9.0.dist-info").mkdir()
    (site / "calc-1.dist-info").mkdir()  # the project's own: reinstalled each run
    digest = "ab" * 32
    meta = {"format": envcache.FORMAT, "version": envcache.VERSION, "key": digest}
    (env / "genstamp-env.json").write_text(json.dumps(meta))
    assert not envcache._ready(env, digest, "calc")  # its contents were never kept
    envcache.remember_contents(env, "calc")
    assert envcache._ready(env, digest, "calc")
    (site / "calc-1.dist-info").rename(site / "calc-2.dist-info")
    assert envcache._ready(env, digest, "calc")  # the project's version moved: still it
    (site / "six-1.16.0.dist-info").mkdir()
    assert not envcache._ready(env, digest, "calc")


@pytest.mark.parametrize(
    "change",
    [
        "a loose module",
        "sourceless bytecode",
        "an installed file edited",
        "a package folder",
        "bytecode",
        "its own",
    ],
)
def test_an_environment_a_test_wrote_into_is_not_reused(tmp_path: Path, change: str) -> None:
    """What a test writes into the clean environment's site-packages (a module, an edit of an
    installed file) makes it another one; bytecode, and the project's own files (reinstalled
    on every run), do not."""
    env = tmp_path / "env"
    site = env / "lib" / "python3.11" / "site-packages"
    (site / "six-1.16.0.dist-info").mkdir(parents=True)
    (site / "six.py").write_text("X = 1\n")
    (site / "calc").mkdir()
    (site / "calc" / "__init__.py").write_text("def add(a, b):\n    return a + b\n")
    (site / "calc-1.dist-info").mkdir()
    (site / "calc-1.dist-info" / "RECORD").write_text("calc/__init__.py,sha256=x,40\n")
    (env / "bin").mkdir()
    (env / "bin" / "python").write_text("")
    digest = "ab" * 32
    meta = {"format": envcache.FORMAT, "version": envcache.VERSION, "key": digest}
    (env / "genstamp-env.json").write_text(json.dumps(meta))
    envcache.remember_contents(env, "calc")
    assert envcache._ready(env, digest, "calc")
    if change == "a loose module":
        (site / "poison.py").write_text("")
    elif change == "sourceless bytecode":  # `import poison` runs it (P23 11: it was not seen)
        (site / "poison.pyc").write_bytes(b"")
    elif change == "an installed file edited":
        (site / "six.py").write_text("X = 2\n")
    elif change == "a package folder":
        (site / "calc" / "extra").mkdir()
    elif change == "bytecode":
        (site / "__pycache__").mkdir()
        (site / "__pycache__" / "six.cpython-311.pyc").write_bytes(b"")
    else:
        (site / "calc" / "__init__.py").write_text("def add(a, b):\n    return b + a\n")
    assert envcache._ready(env, digest, "calc") == (change in ("bytecode", "its own"))


def test_the_clean_environment_drops_the_users() -> None:
    env = envcache.clean_environ(
        Path("/e"),
        {"PATH": "/usr/bin", "PYTHONPATH": "/x", "VIRTUAL_ENV": "/v", "PIP_INDEX_URL": "i",
         "GIT_DIR": "/g", "HOME": "/h", "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"},
    )  # fmt: skip
    assert env == {
        "PATH": f"/e/bin{os.pathsep}/usr/bin",
        "VIRTUAL_ENV": "/e",
        "PIP_INDEX_URL": "i",
        "HOME": "/h",
        "PYTHONNOUSERSITE": "1",
    }


def test_the_clean_environment_leaves_python_environments_off_the_path(tmp_path: Path) -> None:
    """A console script an earlier install left in a warm virtual environment (the active
    one, one beside a ``pyvenv.cfg``, genstamp's own) must not answer a command the clean
    environment lacks; other folders (git's, a tool's, a conda environment's, often where
    git comes from) stay, in their order."""
    warm, conda, tools = tmp_path / "warm", tmp_path / "conda", tmp_path / "tools"
    for folder in (warm / "bin", conda / "bin", conda / "conda-meta", tools / "bin"):
        folder.mkdir(parents=True)
    (warm / "pyvenv.cfg").write_text("home = /usr/bin\n")
    path = os.pathsep.join(
        ["/active/bin", str(warm / "bin"), str(tools / "bin"), str(conda / "bin"), "/usr/bin"]
    )
    env = envcache.clean_environ(Path("/e"), {"PATH": path, "VIRTUAL_ENV": "/active"})
    assert env["PATH"].split(os.pathsep) == [
        "/e/bin",
        str(tools / "bin"),
        str(conda / "bin"),
        "/usr/bin",
    ]
    if sys.prefix != sys.base_prefix:  # genstamp's own environment (these tests run in one)
        mine = os.path.join(sys.prefix, "bin")
        env = envcache.clean_environ(Path("/e"), {"PATH": os.pathsep.join([mine, "/usr/bin"])})
        assert env["PATH"].split(os.pathsep) == ["/e/bin", "/usr/bin"]


def test_where_the_clean_checkout_goes(tmp_path: Path) -> None:
    assert cleanroom.temp_base({"TMPDIR": "/chosen"}, tmp_path) is None  # the user's choice
    assert cleanroom.temp_base({}, tmp_path / "missing") is None
    free = os.statvfs(tmp_path)
    room = free.f_bavail * free.f_frsize >= cleanroom.RAM_FREE
    assert cleanroom.temp_base({}, tmp_path) == (str(tmp_path) if room else None)


@pytest.mark.skipif(os.geteuid() != 0, reason="mounts a tmpfs (CI runs as root)")
def test_a_ram_folder_mounted_noexec_is_not_where_the_clean_checkout_goes(tmp_path: Path) -> None:
    """/dev/shm mounted `noexec` (Docker's default, CIS-hardened hosts): a program of the
    checkout (a committed script a test runs) would fail to start there alone, and the clean
    run with it. A real tmpfs, in a mount namespace of its own: without `noexec`, it is the
    place; with it, not."""
    ram = tmp_path / "shm"
    ram.mkdir()
    ask = f"from genstamp import cleanroom; print(cleanroom.temp_base({{}}, {str(ram)!r}))"
    said = {}
    for flags in ("exec", "noexec"):
        mounted = f"mount -t tmpfs -o {flags},size=3g tmpfs {ram} && {sys.executable} -c {ask!r}"
        done = subprocess.run(
            ["unshare", "-m", "sh", "-c", mounted], capture_output=True, text=True, check=True
        )
        said[flags] = done.stdout.strip()
    assert said == {"exec": str(ram), "noexec": "None"}, said


def test_a_clean_run_started_beside_another_leaves_its_logs(tmp_path: Path) -> None:
    """Two clean runs of one repository at once (another terminal, another rev): the second's
    start neither removes nor overwrites the log the first's error line names; the newest
    runs' logs are kept, older ones and an earlier genstamp's loose logs are removed."""
    logs = tmp_path / "logs"
    logs.mkdir()
    (logs / "install.log").write_text("an earlier genstamp's\n")
    for n in range(cleanroom.KEPT_LOGS + 2):
        (logs / f"20260101T0000{n:02d}-1").mkdir()
    first = cleanroom._Steps(logs, lambda step, event, seconds: None)
    with first.step("install") as log:
        log.write("the first run's install\n")
    second = cleanroom._Steps(logs, lambda step, event, seconds: None)
    assert second.logs != first.logs
    with second.step("install") as log:
        log.write("the second run's install\n")
    assert (first.logs / "install.log").read_text() == "the first run's install\n"
    assert (second.logs / "install.log").read_text() == "the second run's install\n"
    kept = sorted(p.name for p in logs.iterdir())
    assert len(kept) == cleanroom.KEPT_LOGS
    assert first.logs.name in kept and second.logs.name in kept
    assert "install.log" not in kept


def test_the_readme_documents_the_clean_room() -> None:
    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text()
    for rule in ("clean-room-diverged", "no-clean-room"):
        assert f"\n| `{rule}` | " in readme, rule
    for key in ("clean-install", "require-clean-room"):
        assert f"\n| `{key}` | " in readme, key
    assert "| `genstamp clean-run [--rev REV]" in readme


def test_without_uv_auto_falls_back_to_pip(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(envcache, "_uv", lambda: None)  # as on a machine without uv
    assert envcache.find_installer("auto") == envcache.Installer("pip", None)
    assert envcache.find_installer("pip") == envcache.Installer("pip", None)
    with pytest.raises(GenstampError, match="uv is not installed"):
        envcache.find_installer("uv")


@pytest.mark.parametrize(
    ("files", "expected"),
    [
        ({"pyproject.toml": '[project]\nname = "calc"\n'}, ["."]),
        (
            {
                "pyproject.toml": '[project]\nname = "calc"\n'
                "[project.optional-dependencies]\ntest = []\n"
            },
            [".[test]"],
        ),
        ({"setup.py": ""}, ["."]),
        (
            {
                "pyproject.toml": '[build-system]\nrequires = ["setuptools"]\n',
                "setup.cfg": "[metadata]\nname = calc\n",
            },
            ["."],
        ),
        (
            {
                "pyproject.toml": '[build-system]\nrequires = ["poetry-core"]\n'
                'build-backend = "poetry.core.masonry.api"\n[tool.poetry]\nname = "calc"\n'
            },
            ["."],
        ),
        ({"setup.cfg": "[options]\npackages = find:\n"}, []),
        (
            {
                "setup.cfg": "[metadata]\nname = calc\n",
                "pyproject.toml": "[tool.black]\n",
            },
            ["."],
        ),
        ({"setup.cfg": "[tool:pytest]\ntestpaths = tests\n"}, []),
        ({"pyproject.toml": "[tool.pytest.ini_options]\n"}, []),
        ({}, []),
        # a test extra wherever the build reads extras from (P26 03: a plain `.` was installed,
        # the test dependencies missing, and the clean run failed)
        (
            {
                "setup.cfg": "[metadata]\nname = calc\n[options.extras_require]\ntest = pytest\n",
                "pyproject.toml": '[build-system]\nrequires = ["setuptools"]\n',
            },
            [".[test]"],
        ),
        (
            {
                "setup.py": "from setuptools import setup\n"
                "EXTRAS = {'test': ['pytest'], 'docs': []}\nsetup(extras_require=EXTRAS)\n"
            },
            [".[test]"],
        ),
        ({"setup.py": "setup(extras_require={'test': ['pytest']})\n"}, [".[test]"]),
        ({"setup.py": "setup(extras_require=dict(test=['six']))\n"}, [".[test]"]),  # h188
        (
            {"setup.py": "EXTRAS = dict(docs=[], test=['six'])\nsetup(extras_require=EXTRAS)\n"},
            [".[test]"],
        ),
        ({"setup.py": "setup(extras_require=dict(docs=['x']))\n"}, ["."]),
        ({"setup.py": "setup(extras_require={'docs': ['x']}, test={'test': 1})\n"}, ["."]),
        (
            {
                "pyproject.toml": '[project]\nname = "c"\nversion = "0"\n'
                'dynamic = ["optional-dependencies"]\n'
                "[tool.setuptools.dynamic.optional-dependencies]\n"
                'test = {file = ["test-requirements.txt"]}\n'
            },
            [".[test]"],
        ),
        (
            {
                "pyproject.toml": '[build-system]\nrequires = ["poetry-core"]\n'
                '[tool.poetry]\nname = "calc"\n[tool.poetry.extras]\ntest = ["pytest"]\n'
            },
            [".[test]"],
        ),
        # the extra named as the project names it (h156 04: `tests`, and the clean run failed)
        (
            {
                "pyproject.toml": '[project]\nname = "c"\nversion = "0"\n'
                '[project.optional-dependencies]\ntests = ["pytest"]\ndocs = ["x"]\n'
            },
            [".[tests]"],
        ),
        ({"setup.py": "setup(extras_require={'testing': ['pytest']})\n"}, [".[testing]"]),
        (
            {
                "pyproject.toml": '[project]\nname = "c"\nversion = "0"\n'
                '[project.optional-dependencies]\ntesting = ["x"]\ntest = ["pytest"]\n'
            },
            [".[test]"],
        ),
    ],
    ids=[
        "project",
        "project-with-a-test-extra",
        "setup.py",
        "setup.cfg-metadata-and-a-build-system",
        "poetry",
        "setup.cfg-alone-pip-cannot",
        "setup.cfg-beside-a-pyproject-of-tools",
        "setup.cfg-of-pytest-alone",
        "pyproject-of-tools-alone",
        "nothing",
        "setup.cfg-extras",
        "setup.py-extras-by-name",
        "setup.py-extras-in-the-call",
        "setup.py-extras-a-dict-call",
        "setup.py-extras-a-dict-call-by-name",
        "setup.py-extras-a-dict-call-no-test-extra",
        "setup.py-no-test-extra",
        "dynamic-extras",
        "poetry-extras",
        "a-tests-extra",
        "a-testing-extra-of-setup.py",
        "test-before-testing",
    ],
)
def test_what_the_clean_room_installs_unless_told(
    tmp_path: Path, files: dict[str, str], expected: list[str]
) -> None:
    """P23 02/16: a project whose metadata is setup.cfg's or poetry's (no `[project]` table, no
    setup.py) was not installed, and its clean run failed where `pip install .` passes."""
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    assert cleanroom.default_install(tmp_path) == expected


@pytest.mark.parametrize("venv_works", [True, False], ids=["python-m-venv", "no-venv-module"])
def test_a_new_environment_is_what_venv_makes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, venv_works: bool
) -> None:
    """Made by `python -m venv` whichever installer fills it (S23 21: uv's own held no
    setuptools, and uv and pip disagreed on tests importing it undeclared); an interpreter
    without its `venv` package (a system Python) gets uv's own, seeded as venv seeds one."""
    import shutil
    import stat
    import sys

    uv = shutil.which("uv")
    if uv is None:
        pytest.skip("uv is not installed")
    real = str(getattr(sys, "_base_executable", sys.executable))
    python = tmp_path / "python3"
    refuse = "" if venv_works else '[ "$1 $2" = "-m venv" ] && exit 1\n'
    python.write_text(f'#!/bin/sh\n{refuse}exec "{real}" "$@"\n')
    python.chmod(python.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setattr(envcache, "_base_python", lambda: str(python))
    env = tmp_path / "env"
    with (tmp_path / "log").open("w+") as log:  # (the commands write into it: a real file)
        envcache.create(env, envcache.Installer("uv", uv), dict(os.environ), log)
    said = (tmp_path / "log").read_text()
    site = next(env.glob("lib/python*/site-packages"))
    assert (site / "pip").is_dir() and (site / "setuptools").is_dir(), sorted(site.iterdir())
    assert ("`python -m venv` failed here" in said) is not venv_works, said


def test_the_submodules_a_recursive_clone_checks_out_are_gits(tmp_path: Path) -> None:
    """The submodules the clean checkout fills are those `git clone --recurse-submodules`
    checks out, git the oracle: not one `.gitmodules` sets `update = none` for; one it sets
    `active = false` for is (`active` is a setting of the repository's own config that
    `.gitmodules` does not give, and the clean room left that one empty)."""
    from conftest import commit_all, git, init_repo

    lib = init_repo(tmp_path / "lib")
    (lib / "helper.py").write_text("V = 3\n")
    commit_all(lib, "v3")
    top = init_repo(tmp_path / "top")
    settings = {"plain": "", "skipped": "update=none", "inactive": "active=false"}
    settings |= {"merged": "update=merge", "off": "active=no"}
    for name, setting in settings.items():
        add = ["-c", "protocol.file.allow=always", "submodule", "add", "-q", str(lib), name]
        git(top, *add)
        if setting:
            key, _, value = setting.partition("=")
            git(top, "config", "-f", ".gitmodules", f"submodule.{name}.{key}", value)
    commit_all(top, "submodules")
    clone = tmp_path / "clone"
    git(
        tmp_path,
        "-c",
        "protocol.file.allow=always",
        "clone",
        "-q",
        "--recurse-submodules",
        str(top),
        str(clone),
    )
    filled = {name for name in settings if any((clone / name).iterdir())}
    assert filled == {"plain", "inactive", "merged", "off"}  # what git did
    assert cleanroom._cloned_recursively(top) == filled


def test_a_node_id_naming_its_checkouts_folder_is_compared_as_the_clean_record_writes_it() -> None:
    """A test parametrized by the absolute paths of its data files names its checkout's folder
    in its id: the clean checkout lies elsewhere, so every such test was "not run clean" and
    the tree refused as diverged. The clean record writes that folder as CHECKOUT, and the warm
    id is compared so."""
    from genstamp.rules import diverging

    warm = {"tests/test_x.py::test_case[/w/repo/cases/a.txt]": "passed"}
    clean = room(
        outcomes={f"tests/test_x.py::test_case[{cleanrecord.CHECKOUT}/cases/a.txt]": "passed"}
    )
    assert diverging(warm, clean, "/w/repo") == []
    assert diverging(
        {"tests/test_x.py::test_case[/w/repo/cases/a.txt]": "failed"}, clean, "/w/repo"
    )
    assert diverging(warm, clean) != []  # (the folder not known: not compared so)
    # a folder named beyond ASCII: pytest escapes it in a parameter's id
    escaped = {"tests/test_x.py::test_case[/w/r\\xe9/cases/a.txt]": "passed"}
    assert diverging(escaped, clean, "/w/ré") == []
