"""Issue 12 end to end: the suite is defined by the tree, and partial runs merge.

Real git repositories and real pytest runs in subprocesses; ``stamp`` and ``verify`` are
genstamp's main called in this process (the verdict is the subject here, and the command's
process has tests of its own), ``status`` and the human form of ``verify`` the real command.
Every refusal has an accepted control beside it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import (
    commit_all,
    genstamp_here,
    git,
    init_repo,
    installed_plugin,
    run_genstamp,
    run_pytest,
    run_python,
    subprocess_env,
)

from genstamp import evidence, overrides
from genstamp.repo import open_checkout

pytestmark = pytest.mark.e2e

PASS = "def test_{n}():\n    pass\n"


def cases(*names: str, fail: str = "") -> str:
    out = ""
    for n in names:
        body = "    assert False\n" if n == fail else "    pass\n"
        out += f"def test_{n}():\n{body}\n"
    return out


def make(root: Path, files: dict[str, str]) -> Path:
    init_repo(root)
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    commit_all(root)
    stamp(root)
    return root


def stamp(root: Path) -> None:
    code, _, err = genstamp_here("-C", root, "stamp")
    assert code == 0, err


def verify(root: Path, *args: str) -> tuple[int, dict[str, object], str]:
    code, out, err = genstamp_here("-C", root, "verify", "--json", *args)
    assert code in (0, 1), err
    return code, json.loads(out), err


def rules(data: dict[str, object]) -> dict[str, str]:
    return {f["rule"]: f["message"] for f in data["failures"]}  # type: ignore[attr-defined,index]


def pytest_in(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return run_pytest(cwd, "-p", "no:cacheprovider", *args)


SIMPLE = {
    "tests/test_a.py": cases("a1", "a2"),
    "tests/test_b.py": cases("b1"),
    "tests/deep/test_c.py": cases("c1"),
}


CLASSED = (
    "class TestC:\n    def test_x(self):\n        pass\n\n    def test_y(self):\n        pass\n"
)


@pytest.mark.parametrize(
    ("shards", "whole"),
    [
        ((["tests/test_a.py::test_a1"], ["tests/test_a.py::test_a2", "tests/test_b.py"]), True),
        # a class: its other tests, and a class the node ids did not enter
        (
            (
                ["tests/test_k.py::TestC::test_x", "tests/test_a.py", "tests/test_b.py"],
                ["tests/test_k.py::TestC::test_y", "tests/test_k.py::TestD"],
            ),
            True,
        ),
        # parametrized: each id a node id
        (
            (
                ["tests/test_p.py::test_p[1]", "tests/test_a.py", "tests/test_b.py"],
                ["tests/test_p.py::test_p[2]"],
            ),
            True,
        ),
        # controls: a test no shard named did not run
        ((["tests/test_a.py::test_a1"], ["tests/test_b.py"]), False),
        ((["tests/test_k.py::TestC::test_x"], ["tests/test_k.py::TestD"]), False),
        ((["tests/test_p.py::test_p[1]", "tests/test_a.py", "tests/test_b.py"],), False),
    ],
    ids=["functions", "classes", "parametrized", "a-test-left", "a-method-left", "a-case-left"],
)
def test_a_suite_split_into_parts_by_node_ids_merges_into_the_whole(
    tmp_path: Path, shards: tuple[list[str], ...], whole: bool
) -> None:
    """Parts of the suite named by node ids, as CI sharders that split by test name give them
    (`file::test_1` in one, `file::test_2` in another): every test ran green, and the gate
    refused partial-run (a node id's file counted as collected in part in each). A file whose
    tests are all known counts as collected, the tests the node ids leave out as not run (as
    a -k leaves them out): the parts merge. A test no part ran still leaves them partial."""
    files = {
        "tests/test_a.py": cases("a1", "a2"),
        "tests/test_b.py": cases("b1"),
        "tests/test_k.py": CLASSED + "\n\n" + CLASSED.replace("TestC", "TestD"),
        "tests/test_p.py": (
            "import pytest\n\n\n@pytest.mark.parametrize('n', [1, 2])\ndef test_p(n):\n    pass\n"
        ),
    }
    if "test_p" not in shards[0][0]:
        files.pop("tests/test_p.py")
    if "test_k" not in shards[0][0]:
        files.pop("tests/test_k.py")
    root = make(tmp_path / "p", files)
    for shard in shards:
        proc = pytest_in(root, *shard)
        assert proc.returncode in (0, 4, 5), proc.stdout  # (a node id of no test: 4)
    code, data, _ = verify(root)
    if whole:
        assert code == 0, data
    else:
        assert code == 1 and list(rules(data)) == ["partial-run"], data


def test_an_absolute_testpath_names_no_folder_of_the_tree(tmp_path: Path) -> None:
    """`testpaths = tests /srv/app/tests` (a container's path): pytest collects tests/ and
    nothing where the absolute path is not. The gate's walk up from each start to the suite's
    folder never ended for it (dirname of "/" is "/"): verify spun for ever. Accepted; and a
    run of part of tests/ is still partial."""
    files = {**SIMPLE, "pytest.ini": "[pytest]\ntestpaths = tests /srv/genstamp-absent/tests\n"}
    root = make(tmp_path / "p", files)
    assert pytest_in(root).returncode == 0
    argv = [sys.executable, "-m", "genstamp", "-C", str(root), "verify"]
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    stamp(root)
    assert pytest_in(root, "tests/test_a.py").returncode == 0
    assert "partial-run" in rules(verify(root)[1])


def test_the_suite_named_through_a_link_to_the_checkout(tmp_path: Path) -> None:
    """The checkout reached through a linked folder (a projects folder on another disk, /tmp on
    macOS) and the tests named by absolute path through it (``"$PWD/tests"``, as IDE runners
    do): the files are the suite's own, so the whole suite is complete and half of it is not."""
    root = make(tmp_path / "real" / "p", SIMPLE)
    (tmp_path / "linked").symlink_to(tmp_path / "real")
    through = tmp_path / "linked" / "p"
    assert pytest_in(root, str(through / "tests")).returncode == 0
    assert verify(root)[0] == 0
    stamp(root)
    assert pytest_in(root, str(through / "tests" / "test_a.py")).returncode == 0
    code, data, _ = verify(root)
    assert code == 1
    assert "2 files: tests/deep/test_c.py, tests/test_b.py" in rules(data)["partial-run"]


def test_pytest_tests_without_testpaths_is_full(tmp_path: Path) -> None:
    root = make(tmp_path / "p", SIMPLE)
    assert pytest_in(root, "tests/").returncode == 0
    code, data, _ = verify(root)
    assert code == 0, data
    assert data["selection"]["complete"] is True  # type: ignore[index]
    assert data["selection"]["suites"][0]["files"] == 3  # type: ignore[index]


def test_running_from_a_subfolder_is_full(tmp_path: Path) -> None:
    root = make(tmp_path / "p", SIMPLE)
    assert pytest_in(root / "tests").returncode == 0
    assert verify(root)[0] == 0


def test_a_node_id_beside_a_folder_holding_its_file_is_the_whole_file(tmp_path: Path) -> None:
    """``pytest tests/test_a.py::test_a1 tests`` (a test named, then the suite, as IDEs and
    rerun scripts write it): pytest runs every test of ``test_a.py``, so the run is whole; a
    node id whose file no other argument holds still narrows it."""
    root = make(tmp_path / "p", SIMPLE)
    assert pytest_in(root, "tests/test_a.py::test_a1", "tests").returncode == 0
    code, data, _ = verify(root)
    assert code == 0, data
    stamp(root)
    named = ("tests/test_a.py::test_a1", "tests/deep", "tests/test_b.py")
    assert pytest_in(root, *named).returncode == 0
    code, data, _ = verify(root)
    assert code == 1
    assert "tests/test_a.py" in rules(data)["partial-run"], data


def test_a_folder_argument_that_leaves_files_out_is_partial_naming_them(tmp_path: Path) -> None:
    root = make(tmp_path / "p", SIMPLE)
    assert pytest_in(root, "tests/deep").returncode == 0
    code, data, _ = verify(root)
    assert code == 1
    message = rules(data)["partial-run"]
    assert "2 files: tests/test_a.py, tests/test_b.py" in message


QUICK = """\
def pytest_addoption(parser):
    parser.addoption("--quick", action="store_true")

def pytest_collection_modifyitems(config, items):
    if config.getoption("--quick"):
        items[:] = [i for i in items if i.name != "test_b1"]
"""

# the same, by an outer wrapper (registered after genstamp's) and when collection ends
QUICK_WRAPPER = """\
import pytest

def pytest_addoption(parser):
    parser.addoption("--quick", action="store_true")

@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_collection_modifyitems(config, items):
    if config.getoption("--quick"):
        items[:] = [i for i in items if i.name != "test_b1"]
    return (yield)
"""
QUICK_FINISH = """\
def pytest_addoption(parser):
    parser.addoption("--quick", action="store_true")

def pytest_collection_finish(session):
    if session.config.getoption("--quick"):
        session.items[:] = [i for i in session.items if i.name != "test_b1"]
"""


@pytest.mark.parametrize(
    ("extra", "args"),
    [
        ({}, ("-o", "testpaths=tests/test_a.py")),
        ({"narrower.ini": "[pytest]\ntestpaths = tests/test_a.py\n"}, ("-c", "narrower.ini")),
        (
            {"narrower.ini": "[pytest]\ntestpaths = tests/test_a.py\n"},
            ("-c", "narrower.ini", "--rootdir=."),
        ),
        ({}, ("--ignore", "tests/test_b.py")),
        ({}, ("--deselect", "tests/test_b.py::test_b1")),
        ({}, ("-k", "not b1")),
        # (a node id naming a file's only test names all of it: test_b.py holds two here)
        (
            {"tests/test_b.py": cases("b1", "b2")},
            ("tests/test_b.py::test_b1", "tests/test_a.py", "tests/deep"),
        ),
        ({"tests/sub/conftest.py": ""}, ("--confcutdir", "tests", "tests/test_a.py")),
        ({"conftest.py": QUICK}, ("--quick",)),  # items dropped, never reported deselected
        ({"conftest.py": QUICK_WRAPPER}, ("--quick",)),
        ({"conftest.py": QUICK_FINISH}, ("--quick",)),
    ],
)
def test_each_narrowing_is_partial_and_names_what_was_left_out(
    tmp_path: Path, extra: dict[str, str], args: tuple[str, ...]
) -> None:
    files = {"pytest.ini": "[pytest]\ntestpaths = tests\n", **SIMPLE, **extra}
    root = make(tmp_path / "p", files)
    proc = pytest_in(root, *args)
    assert proc.returncode == 0, proc.stdout
    partial_then_plain_accepted(root, "test_b")


def partial_then_plain_accepted(root: Path, left_out: str) -> None:
    """The run just made is refused partial-run, naming ``left_out``; the control: the plain
    run in a new generation is accepted."""
    code, data, _ = verify(root)
    assert code == 1, data
    assert left_out in rules(data)["partial-run"]
    stamp(root)
    assert pytest_in(root).returncode == 0
    assert verify(root)[0] == 0


SHARDED = """\
def pytest_addoption(parser):
    parser.addoption("--shard", type=int)

def pytest_collection_modifyitems(config, items):
    shard = config.getoption("--shard")
    if shard is not None:  # pytest-shard's, pytest-test-groups' way: never reported deselected
        items[:] = items[shard::2]
"""


@pytest.mark.parametrize("shards", [(0, 1), (0,), (0, 0)], ids=["both", "one", "one-twice"])
def test_shards_that_drop_items_without_deselecting_them_merge_into_the_suite(
    tmp_path: Path, shards: tuple[int, ...]
) -> None:
    """A sharder that takes items out of the collection (``items[:] = items[shard::2]``, as
    pytest-shard and pytest-test-groups do) without reporting them deselected: each shard's
    tests left out are unrun, not their files collected in part, so that the shards merge
    into the whole suite (refused partial-run forever, every shard green: h204). One shard
    alone, or run twice, is partial."""
    files = {"pytest.ini": "[pytest]\ntestpaths = tests\n", "conftest.py": SHARDED, **SIMPLE}
    files["tests/test_b.py"] = cases("b1", "b2", "b3")
    root = make(tmp_path / "p", files)
    for shard in shards:
        assert pytest_in(root, "--shard", str(shard)).returncode == 0
    code, data, _ = verify(root)
    if shards == (0, 1):
        assert code == 0, data
        return
    assert code == 1, data
    assert "test_b" in rules(data)["partial-run"]


SERIAL_LATER = """\
import os

def pytest_collection_modifyitems(config, items):
    # the serial tests left for a second pass, under xdist or where an environment says so
    if hasattr(config, "workerinput") or os.environ.get("QUICK"):
        drop = [i for i in items if i.name.endswith("2")]
        config.hook.pytest_deselected(items=drop)
        items[:] = [i for i in items if i not in drop]
"""


@pytest.mark.parametrize("how", [("-n", "2"), ("QUICK",)], ids=["xdist", "environment"])
def test_what_a_conftest_deselects_is_partial(tmp_path: Path, how: tuple[str, ...]) -> None:
    """A conftest that reports tests deselected under a condition of the run (xdist's workers,
    an environment variable): partial, whatever it depends on (h205: taking such a
    deselection for the suite's default let the failing serial test go unrun). The plain
    run, which deselects nothing, is accepted."""
    files = {"pytest.ini": "[pytest]\ntestpaths = tests\n", "conftest.py": SERIAL_LATER}
    files.update({**SIMPLE, "tests/test_b.py": cases("b1", "b2")})
    root = make(tmp_path / "p", files)
    args, env = (how, {}) if how[0] == "-n" else ((), {"QUICK": "1"})
    proc = run_pytest(root, "-p", "no:cacheprovider", *args, env=subprocess_env(**env))
    assert proc.returncode == 0, proc.stdout
    partial_then_plain_accepted(root, "test_b2")


YAML_COLLECTOR = """\
import pytest


def pytest_collect_file(parent, file_path):
    if file_path.suffix == ".yaml" and file_path.name.startswith("test"):
        return SpecFile.from_parent(parent, path=file_path)


class SpecFile(pytest.File):
    def collect(self):
        for line in self.path.read_text().splitlines():
            name, _, value = line.partition(":")
            yield SpecItem.from_parent(self, name=name.strip(), value=value.strip())


class SpecItem(pytest.Item):
    def __init__(self, *, value, **kwargs):
        super().__init__(**kwargs)
        self.value = value

    def runtest(self):
        assert self.value == "ok"
"""
# a conftest that makes its own files Python modules of the suite (`check_*.py`)
MODULE_COLLECTOR = """\
import pytest


def pytest_collect_file(parent, file_path):
    if file_path.suffix == ".py" and file_path.name.startswith("check_"):
        return pytest.Module.from_parent(parent, path=file_path)
"""


@pytest.mark.parametrize(
    ("collector", "bad", "args"),
    [
        (
            YAML_COLLECTOR,
            ("tests/spec/test_bad.yaml", "one: ok\ntwo: broken\n"),
            ("tests/test_a.py",),
        ),
        (
            YAML_COLLECTOR,
            ("tests/spec/test_bad.yaml", "one: ok\ntwo: broken\n"),
            ("--ignore=tests/spec",),
        ),
        (
            YAML_COLLECTOR,
            ("tests/spec/test_bad.yaml", "one: ok\ntwo: broken\n"),
            ("tests/spec/test_good.yaml", "tests/test_a.py"),
        ),
        (MODULE_COLLECTOR, ("tests/spec/check_bad.py", cases("x", fail="x")), ("tests/test_a.py",)),
    ],
)
def test_a_run_that_leaves_out_files_a_conftest_collects_itself_is_partial(
    tmp_path: Path, collector: str, bad: tuple[str, str], args: tuple[str, ...]
) -> None:
    """A conftest's own collector (``pytest_collect_file``, pytest's YAML example) makes tests
    of files no ``python_files`` names: which, only a run that offers it each file knows. A
    run of some paths, or with an ``--ignore`` of its own, that left a failing spec out is
    partial; the whole suite's run fails on it, and passes once it is mended, in parts too."""
    root = make(
        tmp_path / "p",
        {
            "pytest.ini": "[pytest]\ntestpaths = tests\n",
            "tests/conftest.py": collector,
            "tests/test_a.py": cases("a1"),
            "tests/spec/test_good.yaml": "one: ok\n",
            "tests/spec/check_good.py": cases("g"),
            "tests/spec/data.txt": "read by nobody\n",
            bad[0]: bad[1],
        },
    )
    assert pytest_in(root).returncode == 1  # the whole suite fails on the bad file
    stamp(root)
    assert pytest_in(root, *args).returncode == 0, args
    code, data, _ = verify(root)
    assert code == 1, data
    message = rules(data)["partial-run"]
    assert "tests/spec" in message and "pytest_collect_file" in message, message
    # the control: mended, the whole suite's run is accepted, and so is one in two parts
    mended_and_accepted(root, bad[0], "one: ok\n" if bad[0].endswith(".yaml") else cases("x"))
    assert pytest_in(root, "-n", "2").returncode == 0
    assert verify(root)[0] == 0
    stamp(root)
    assert pytest_in(root, "tests/spec").returncode == 0
    assert pytest_in(root, "--ignore=tests/spec").returncode == 0
    code, data, _ = verify(root)
    assert code == 0, data


def mended_and_accepted(root: Path, rel: str, text: str) -> None:
    """``rel`` mended to ``text`` and committed: the whole suite's run is accepted, and the
    plugin says so as it ends; a new generation begins for the runs that follow."""
    (root / rel).write_text(text)
    commit_all(root)
    stamp(root)
    proc = pytest_in(root)
    assert proc.returncode == 0 and "will refuse" not in proc.stdout, proc.stdout  # as verify
    code, data, _ = verify(root)
    assert code == 0, data
    stamp(root)


MANIFEST_COLLECTOR = """\
import json

import pytest


class ManifestDirectory(pytest.Directory):
    def collect(self):
        listed = json.loads((self.path / "manifest.json").read_text(encoding="utf-8"))
        for name in listed["files"]:
            if HOW == "module":
                yield pytest.Module.from_parent(self, path=self.path / name)
            else:  # as pytest's docs do: each file offered to the file collectors
                yield from self.ihook.pytest_collect_file(file_path=self.path / name, parent=self)


@pytest.hookimpl
def pytest_collect_directory(path, parent):
    if path.joinpath("manifest.json").is_file():
        return ManifestDirectory.from_parent(parent=parent, path=path)
    return None
"""


@pytest.mark.parametrize("how", ["module", "offered"])
def test_the_files_a_folders_own_collector_yields_are_the_suite_there(
    tmp_path: Path, how: str
) -> None:
    """A conftest collects a folder its own way (``pytest_collect_directory``: the files a
    manifest lists, pytest's docs' example). The suite there is what it yields, which only a
    run knows: a file it lists that no ``python_files`` names was left out of the suite (a run
    of one file was accepted while the whole suite fails on that file), and one it does not
    list was asked for, forever (h212). Mended, the whole run is accepted, in parts too."""
    root = make(
        tmp_path / "p",
        {
            "conftest.py": MANIFEST_COLLECTOR.replace("HOW", repr(how)),
            "tests/manifest.json": '{"files": ["test_first.py", "checks_suite.py"]}',
            "tests/test_first.py": cases("a1"),
            "tests/checks_suite.py": cases("c1", fail="c1"),
            "tests/test_unlisted.py": cases("u1", fail="u1"),  # retired: in no manifest
            "other/test_o.py": cases("o1"),
        },
    )
    if how == "offered":  # (offered as pytest offers files: a name python_files takes)
        (root / "tests" / "checks_suite.py").rename(root / "tests" / "test_checks.py")
        (root / "tests" / "manifest.json").write_text(
            '{"files": ["test_first.py", "test_checks.py"]}'
        )
        commit_all(root)
    assert pytest_in(root).returncode == 1  # the listed check fails
    stamp(root)
    assert pytest_in(root, "tests/test_first.py", "other").returncode == 0
    code, data, _ = verify(root)
    assert code == 1 and "partial-run" in rules(data), data
    checks = "tests/checks_suite.py" if how == "module" else "tests/test_checks.py"
    assert checks in rules(data)["partial-run"], data
    # mended: the whole run, and one in parts, accepted (the unlisted file is no test)
    mended_and_accepted(root, checks, cases("c1"))
    assert pytest_in(root, "tests").returncode == 0
    assert pytest_in(root, "other", "-n", "2").returncode == 0
    code, data, _ = verify(root)
    assert code == 0, data


def test_a_collector_a_conftest_defines_under_a_condition_counts_where_the_run_had_it(
    tmp_path: Path,
) -> None:
    """A conftest that defines its collector only where an optional dependency imports (here
    an environment variable): a run without it, complete, is accepted (h202: refused, its
    files asked to be offered to a collector the run never had); a run with it that leaves
    its files out is partial."""
    conditional = "import os\n\nif os.environ.get('SPECS'):\n" + "".join(
        f"    {line}\n" if line else "\n" for line in YAML_COLLECTOR.splitlines()
    )
    root = make(
        tmp_path / "p",
        {
            "pytest.ini": "[pytest]\ntestpaths = tests\n",
            "tests/conftest.py": conditional,
            "tests/test_a.py": cases("a1"),
            "tests/spec/test_bad.yaml": "two: broken\n",
        },
    )
    assert pytest_in(root).returncode == 0  # no collector: the spec is a data file
    assert verify(root)[0] == 0
    stamp(root)
    env = {**subprocess_env(), "SPECS": "1"}
    assert run_pytest(root, "-p", "no:cacheprovider", env=env).returncode == 1
    stamp(root)
    assert run_pytest(root, "-p", "no:cacheprovider", "tests/test_a.py", env=env).returncode == 0
    code, data, _ = verify(root)
    assert code == 1 and "tests/spec/test_bad.yaml" in rules(data)["partial-run"], data


IGNORES_LEGACY = """\
def pytest_ignore_collect(collection_path, config):
    if collection_path.name == "legacy":
        return True
"""
IGNORES_NOTHING = "def pytest_ignore_collect(collection_path, config):\n    return None\n"


@pytest.mark.parametrize(
    ("hook", "args", "left_out"),
    [
        (IGNORES_LEGACY, (), ""),  # the conftest's own choice: pytest never collects it
        (IGNORES_LEGACY, ("-n", "2"), ""),
        (IGNORES_LEGACY, ("--ignore=tests/other",), "tests/other/test_o.py"),
        (IGNORES_NOTHING, ("--ignore=tests/legacy",), "tests/legacy/test_l.py"),
        (IGNORES_NOTHING, ("tests/test_a.py", "tests/other"), "tests/legacy/test_l.py"),
        # another plugin's ignore (pytest-testmon's, which narrows) is not the conftest's (h202)
        (IGNORES_NOTHING, ("-p", "narrowing"), "tests/other/test_o.py"),
    ],
)
def test_what_a_conftests_pytest_ignore_collect_ignores_is_no_file_of_the_suite(
    tmp_path: Path, hook: str, args: tuple[str, ...], left_out: str
) -> None:
    """A conftest's ``pytest_ignore_collect`` ignores what it chooses (a folder of old tests):
    the whole suite's run, which never collects it, is whole, where every run was refused as
    partial; what the run's own options leave out, pytest's rules and not the hook, is not."""
    root = make(
        tmp_path / "p",
        {
            "pytest.ini": "[pytest]\ntestpaths = tests\n",
            "tests/conftest.py": hook,
            "tests/test_a.py": cases("a1"),
            "tests/other/test_o.py": cases("o1"),
            "tests/legacy/test_l.py": cases("l1"),
            "narrowing.py": "def pytest_ignore_collect(collection_path):\n"
            "    return collection_path.name == 'other' or None\n",
        },
    )
    assert pytest_in(root, *args).returncode == 0
    code, data, _ = verify(root)
    if not left_out:
        assert code == 0, data
        return
    assert code == 1, data
    assert left_out in rules(data)["partial-run"]


def test_a_marker_the_configuration_deselects_is_full_and_m_empty_runs_more(
    tmp_path: Path,
) -> None:
    ini = '[pytest]\naddopts = -m "not slow"\nmarkers = slow\n'
    slow = "import pytest\n\n@pytest.mark.slow\ndef test_slow():\n    assert SLOW_OK\n"
    root = make(tmp_path / "p", {"pytest.ini": ini, **SIMPLE, "tests/test_s.py": slow})
    (root / "tests" / "test_s.py").write_text(slow.replace("SLOW_OK", "True"))
    commit_all(root)
    stamp(root)
    assert pytest_in(root).returncode == 0
    code, data, _ = verify(root)
    assert code == 0, data
    # -m "" on top runs more than the suite: still full, and its failures count
    (root / "tests" / "test_s.py").write_text(slow.replace("SLOW_OK", "False"))
    commit_all(root)
    stamp(root)
    assert pytest_in(root, "-m", "").returncode == 1
    code, data, _ = verify(root)
    assert code == 1
    assert set(rules(data)) == {"tests-failed"}
    # and another -m given for the run narrows: partial
    stamp(root)
    pytest_in(root, "-m", "not slow and not other")
    code, data, _ = verify(root)
    assert code == 0  # nothing carries "other": the same tests ran
    stamp(root)
    pytest_in(root, "-m", "slow")
    assert "partial-run" in rules(verify(root)[1])


@pytest.mark.parametrize(
    "config",
    [
        "pytest.ini:[pytest]\naddopts = tests/test_a.py tests/deep\n",
        "pytest.ini:[pytest]\naddopts = --deselect tests/test_b.py::test_b1 -q\n",
        'pytest.toml:[pytest]\ntestpaths = ["tests/deep", "tests/test_b.py"]\n',
        "pytest.ini:[pytest]\nnorecursedirs = tests/deep\n",
    ],
    ids=["paths-in-addopts", "deselect-in-addopts", "pytest-toml", "norecursedirs-path"],
)
def test_what_the_configuration_leaves_out_is_not_the_suites(tmp_path: Path, config: str) -> None:
    """The configuration narrows the collection itself (paths or --deselect in its addopts,
    pytest 9's pytest.toml, a norecursedirs path): a plain green run is the whole suite. A run
    narrowed further (-k) is partial; a run with the configured file set aside is partial too."""
    name, _, text = config.partition(":")
    root = make(tmp_path / "p", {**SIMPLE, name: text})
    assert pytest_in(root).returncode == 0
    code, data, _ = verify(root)
    assert code == 0, data
    stamp(root)
    assert pytest_in(root, "-k", "not a2 and not c1").returncode == 0
    assert "partial-run" in rules(verify(root)[1])
    stamp(root)
    assert (
        pytest_in(root, "-c", "/dev/null", "--rootdir", str(root), "tests/test_a.py").returncode
        == 0
    )
    assert "partial-run" in rules(verify(root)[1])


@pytest.mark.parametrize(
    ("configured", "given"),
    [("./tests/test_b.py::test_b1", "tests/test_b.py::test_b1"), ("tests/deep/", "tests/deeper")],
)
def test_a_configured_deselect_is_the_node_id_prefix_pytest_takes(
    tmp_path: Path, configured: str, given: str
) -> None:
    """pytest compares --deselect with node ids as written: `./tests/…` deselects nothing, and
    `tests/deep/` not `tests/deeper/`'s tests, so those stay in the suite, and a run that
    deselects them itself is partial."""
    ini = f"[pytest]\naddopts = --deselect {configured}\n"
    files = {**SIMPLE, "tests/deeper/test_d.py": cases("d1"), "pytest.ini": ini}
    root = make(tmp_path / "p", files)
    assert pytest_in(root).returncode == 0
    assert verify(root)[0] == 0
    stamp(root)
    assert pytest_in(root, "--deselect", given).returncode == 0
    assert "partial-run" in rules(verify(root)[1])


UNITTEST = """import unittest


class TestOld(unittest.TestCase):
    def test_old(self):
        pass
"""
EXPECTS_THE_ERROR = """import warnings

import pytest


def test_warns():
    with pytest.raises(DeprecationWarning):
        warnings.warn("old", DeprecationWarning)
"""


@pytest.mark.parametrize(
    ("args", "env", "partial"),
    [
        (("-p", "no:unittest"), "", True),  # the TestCase test is not collected
        # no test function is: the files yield doctests alone (a DoctestModule each)
        (("-p", "no:python", "--doctest-modules"), "", True),
        (("-o", "python_functions=check_*"), "", True),  # test_* functions are not
        (("-qo", "python_functions=check_*"), "", True),  # short flags bundled, as argparse takes
        (("-vqW", "ignore::DeprecationWarning"), "", True),
        (("-o=python_functions=check_*",), "", True),  # argparse's own split of -o=K=V
        (("-W=ignore::DeprecationWarning",), "", True),
        (("-c=lenient.ini",), "", True),
        (("-qx",), "", False),  # bundled flags that change nothing
        ((), "-o python_classes=Nothing", True),  # PYTEST_ADDOPTS: the run's own too
        (("-o", "python_functions=test"), "", False),  # pytest's default, as configured
        (("-o", "python_classes=Test"), "", False),  # likewise
        (("-W", "ignore::DeprecationWarning"), "", True),  # the configured error made lenient
        (("-p", "no:warnings"), "", True),
        (("-o", "filterwarnings=default"), "", True),
        (("-W", "error::UserWarning"), "", False),  # stricter: the suite as configured, and more
        (("-W", "ignore::UserWarning"), "", False),  # no warning the configuration makes an error
        (("-W", "ignore::pytest.PytestDeprecationWarning"), "", True),  # a DeprecationWarning
        (("-W", "ignore::DeprecationWarning:elsewhere"), "", True),  # lenient in that module
        (("-o", "filterwarnings=error:no such text:DeprecationWarning"), "", True),  # narrowed
        (("-o", "filterwarnings=error::DeprecationWarning\nignore:old"), "", True),  # undone
        (("-p", "no:cacheprovider", "-o", "console_output_style=classic"), "", False),
        (("-c", "lenient.ini"), "", True),  # a tracked configuration, not the suite's
        (("-c", "pytest.ini"), "", False),  # the suite's own, named
        (("-o", "xfail_strict=false"), "", True),  # what the configuration sets, overridden
        (("-o", "addopts="), "", True),
        (("-o", "log_cli=true"), "", False),  # configured too, but it only shows more
        (("-o", "xfail_strict=true"), "", False),  # the configured value itself
        (("-o", "filterwarnings=error::DeprecationWarning"), "", False),  # as configured
        (("--runxfail",), "", True),  # a strict xfail that passes would pass
        (("-o", "strict_xfail=false"), "", True),  # the configured xfail_strict, by its name
        (("-o", "usefixtures=tmp_path"), "", True),  # a setting the configuration leaves alone
        (("-o", "pythonpath=src"), "", True),
        (("-o", "collect_imported_tests=false"), "", True),
        (("-o", "collect_imported_tests=true"), "", False),  # pytest's default, as configured
        (("--import-mode=importlib",), "", True),
        (("--import-mode", "prepend"), "", False),  # pytest's default
        (("-p", "plug"), "", True),  # a plugin of the checkout the configuration does not load
        (("-p", "pytester"), "", True),  # one of pytest's own no run of the suite loads
        (("-p", "doctest"), "", False),  # loaded anyway
        (("-p", "xdist"), "", False),  # an installed plugin: the environment's
        (("-o", "strict_markers=false"), "", False),  # unset, pytest 9 takes `strict`'s false
        (("-p", "no:threadexception"), "", False),  # its warning is no error here
        (("--log-level=DEBUG",), "", True),  # what caplog records
        (("-o", "log_cli_level=DEBUG"), "", True),
        (("@args.txt",), "", True),  # pytest reads the run's arguments from the file
        (("--doctest-ignore-import-errors",), "", True),  # an import error becomes a skip
        (("--assert", "plain"), "", True),  # a failing assert's message is another
        (("-p", "no:assertion"), "", True),  # the same, by turning its plugin off
        ((), "-p no:assertion", False),  # read after pytest installed its rewriting: no effect
        (("--log-disable=calc",), "", True),  # that logger's records: caplog sees none
        (("--log-format=%(message)s",), "", True),  # what caplog.text holds
        (("-p", "no:skipping"), "", True),
        (("--noconftest",), "", True),  # the project's conftest.py files never load
        (("--confcutdir", "tests"), "", True),  # nor the one above tests/
        (("-c", "OUTSIDE/empty.ini"), "", True),  # no settings, the rootdir outside the tree
        (("-c", "/dev/null", "--rootdir", "OUTSIDE"), "", True),
        (("--rootdir", "OUTSIDE", "-W", "ignore::DeprecationWarning"), "", True),
        (("--rootdir", "OUTSIDE"), "", False),  # the suite's configuration all the same
    ],
)
def test_options_that_change_what_the_files_yield_or_how_warnings_count(
    tmp_path: Path, args: tuple[str, ...], env: str, partial: bool
) -> None:
    """Options given for the run that make tests vanish from the files it collects, or turn a
    warning the configuration makes an error into a pass: the run is not the suite's (here the
    warning test then fails too). The configuration's own choices are the suite's."""
    ini = (
        "[pytest]\naddopts = -ra\nxfail_strict = true\nlog_cli = false\n"
        "filterwarnings =\n    error::DeprecationWarning\n"
    )
    root = make(
        tmp_path / "p",
        {
            **SIMPLE,
            "conftest.py": "",
            "tests/conftest.py": "",
            "pytest.ini": ini,
            "lenient.ini": "[pytest]\npython_functions = check_*\n",
            "plug.py": "",
            "args.txt": "-W\nignore::DeprecationWarning\n",
            "tests/test_old.py": UNITTEST,
            "tests/test_w.py": EXPECTS_THE_ERROR,
            "tests/doc.py": '"""\n>>> 1 + 1\n2\n"""\n',  # a doctest: a run of it alone passes
        },
    )
    outside = tmp_path / "outside"  # a folder out of the work tree: pytest's rootdir there
    outside.mkdir()
    (outside / "empty.ini").write_text("")
    args = tuple(a.replace("OUTSIDE", str(outside)) for a in args)
    proc = run_pytest(root, "-p", "no:cacheprovider", *args, env=subprocess_env(PYTEST_ADDOPTS=env))
    code, data, _ = verify(root)
    if partial:  # foretold at the end of the run, with why; the gate says why too
        assert code == 1 and "partial-run" in rules(data), (data, proc.stdout)
        assert "the run's own options change the suite" in proc.stdout, proc.stdout
        said = rules(data)["partial-run"]
        # the reason first: the tests ran, under options that make them count as none (M22:
        # "476 collected tests did not run" came first, of a run where all 476 ran)
        assert said.startswith("the run covered part of the suite (the run's own options"), said
        assert "count as none of the suite's): " in said, said
    else:
        assert proc.returncode == 0, proc.stdout
        assert code == 0, data


@pytest.mark.parametrize(
    ("files", "configured", "partial"),
    [
        ("test_a.py", False, True),
        ("test_a.py", True, True),  # the configuration's --doctest-modules: the same
        ("test_*.py", False, False),  # no file taken otherwise
        ("test_*.py check_*.py", True, False),
    ],
)
def test_python_files_given_for_a_run_that_collects_every_module_for_its_doctests(
    tmp_path: Path, files: str, configured: bool, partial: bool
) -> None:
    """With ``--doctest-modules`` (given for the run, or the suite's own) every module is
    collected, for its doctests: narrowed by ``-o python_files``, a test file yields its
    doctests alone, its tests none, and was taken for collected (its tests never ran).
    Patterns that take no file otherwise than the suite's (pytest's default here) change
    nothing."""
    ini = "[pytest]\naddopts = --doctest-modules\n" if configured else "[pytest]\n"
    root = make(tmp_path / "p", {**SIMPLE, "pytest.ini": ini})
    given = () if configured else ("--doctest-modules",)
    proc = run_pytest(root, "-p", "no:cacheprovider", "-o", f"python_files={files}", *given)
    assert proc.returncode == 0, proc.stdout
    code, data, _ = verify(root)
    if partial:
        assert code == 1 and "partial-run" in rules(data), data
        assert f"-o python_files={files}" in rules(data)["partial-run"], data
    else:
        assert code == 0, data


LIMIT_PLUGIN = """\
def pytest_addoption(parser):
    parser.addoption("--limit", help="overrides the limit setting")
    parser.addini("limit", "seconds a test may take", default="")
    parser.addoption("--lenient", dest="lenient_mode", action="store_true")
    parser.addini("lenient_mode", "count a failure as a pass", type="bool", default=False)
    parser.addini("env_lines", "variables the tests run with", type="linelist", default=[])
    parser.addini("sync_dirs", "folders to copy to a remote", type="paths", default=[])


def pytest_configure(config):
    config.limit = config.getoption("limit") or config.getini("limit")
"""


FAST_PLUGIN = """\
import pytest


def pytest_collection_modifyitems(items):
    for item in items:
        if "slow" in item.name:
            item.add_marker(pytest.mark.skip(reason="fast"))
"""
RUNNER = """\
import sys

import pytest

sys.path.insert(0, "tests")
from helpers.fast import pytest_collection_modifyitems


class Fast:
    pytest_collection_modifyitems = staticmethod(pytest_collection_modifyitems)


sys.exit(pytest.main(["-p", "no:cacheprovider", *sys.argv[1:]], plugins=[{plugin}]))
"""


@pytest.mark.parametrize(
    "how",
    ["-p", "main-by-name", "main-an-object", "control", "no-the-suite-loads", "no-nothing-loads"],
)
def test_a_plugin_of_the_checkout_is_found_where_the_run_imports_it(
    tmp_path: Path, how: str
) -> None:
    """A plugin of the checkout the suite does not load, in `tests/helpers/` on pytest's
    `pythonpath` (`-p helpers.fast`), or given to `pytest.main(plugins=[...])` by a runner
    script (by name, or an object it defines): it skips tests a run of the suite runs. It was
    taken for an installed plugin (only the top and `src/` were looked at), or not seen at
    all. `-p no:helpers.fast` turns off a plugin the suite's addopts load; of one nothing
    loads, it changes nothing (accepted, as the plain run is)."""
    addopts = "addopts = -p helpers.fast\n" if how == "no-the-suite-loads" else ""
    root = make(
        tmp_path / "p",
        {
            "pytest.ini": "[pytest]\npythonpath = tests\n" + addopts,
            "tests/helpers/__init__.py": "",
            "tests/helpers/fast.py": FAST_PLUGIN,
            "tests/test_a.py": cases("ok", "slow"),
            "runtests.py": RUNNER.format(
                plugin='"helpers.fast"' if how == "main-by-name" else "Fast()"
            ),
        },
    )
    if how.startswith("main"):
        proc = run_python(root, "runtests.py", env=subprocess_env())
    else:
        given = {"-p": ("-p", "helpers.fast"), "control": ()}.get(how, ("-p", "no:helpers.fast"))
        proc = pytest_in(root, *given)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    code, data, _ = verify(root)
    if how in ("control", "no-nothing-loads"):
        assert code == 0, data
    else:
        assert code == 1 and "partial-run" in rules(data), data


@pytest.mark.parametrize(
    ("addopts", "args", "env", "partial"),
    [
        ("", (), {}, False),  # the control: the plugin reads the configured limit
        ("", ("--limit", "0"), {}, True),  # the plugin's own flag for the configured setting
        ("", ("--limit=0",), {}, True),
        ("", ("-q", "--limit", "1"), {}, False),  # the configured value itself
        ("", ("--limit", "1.0"), {}, False),  # ... however the number is written
        ("", ("--lenient",), {}, True),  # a flag that stores a setting's value
        ("", ("-p", "no:limitplug"), {}, True),  # the plugin off: its setting unread
        ("", ("-p", "genstamp.pytest_plugin"), {"PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}, True),
        ("", ("-p", "no:cacheprovider"), {}, False),  # a plugin none of whose settings is set
        ("", (), {"PYTEST_LIMIT": "0"}, True),  # the setting's variable (PYTEST_TIMEOUT's kind)
        ("", (), {"PYTEST_LIMIT": "1"}, False),
        ("--limit 5", ("--limit", "5"), {}, False),  # what the suite's addopts give
        ("--limit 5", ("--limit", "1"), {}, True),  # ... which win over its setting
    ],
)
def test_a_plugins_flag_or_its_absence_overrides_the_setting_the_configuration_sets(
    tmp_path: Path, addopts: str, args: tuple[str, ...], env: dict[str, str], partial: bool
) -> None:
    """An installed plugin's own option for its setting (pytest-timeout's ``--timeout 0``
    against ``timeout = 1``), or the plugin not loaded (``-p no:timeout``, plugin autoload
    off), runs the suite under another setting than its configuration's (P02)."""
    site = installed_plugin(tmp_path / "site", "limitplug", LIMIT_PLUGIN)
    ini = f"[pytest]\naddopts = {addopts}\nlimit = 1\n"
    root = make(tmp_path / "p", {"pytest.ini": ini, "tests/test_a.py": PASS.format(n="a")})
    run_env = subprocess_env(PYTHONPATH=str(site), **env)
    proc = run_pytest(root, "-p", "no:cacheprovider", *args, env=run_env)
    assert proc.returncode == 0, proc.stdout
    code, data, _ = verify(root)
    if partial:
        assert code == 1 and "partial-run" in rules(data), (data, proc.stdout)
        assert "(the run's own options change the suite: " in rules(data)["partial-run"]
    else:
        assert code == 0, data


@pytest.mark.parametrize(
    ("setting", "partial"),
    [
        ("env_lines =\n    MODE=strict", True),  # lines that decide what the tests see
        ("sync_dirs = src", False),  # a list of folders: nothing a test's outcome hangs on
    ],
)
def test_a_list_setting_of_a_plugin_not_loaded_is_unread_unless_it_names_folders(
    tmp_path: Path, setting: str, partial: bool
) -> None:
    """pytest-env's ``env`` is a ``linelist``: ``-p no:env`` runs the tests without the
    variables the suite sets (a test that fails under them passes). A setting that lists
    folders (xdist's ``rsyncdirs``) decides no outcome."""
    site = installed_plugin(tmp_path / "site", "limitplug", LIMIT_PLUGIN)
    root = make(
        tmp_path / "p",
        {"pytest.ini": f"[pytest]\n{setting}\n", "tests/test_a.py": PASS.format(n="a")},
    )
    proc = run_pytest(
        root,
        "-p",
        "no:cacheprovider",
        "-p",
        "no:limitplug",
        env=subprocess_env(PYTHONPATH=str(site)),
    )
    assert proc.returncode == 0, proc.stdout
    code, data, _ = verify(root)
    if partial:
        assert code == 1 and "-p no:limitplug: its setting env_lines" in rules(data)["partial-run"]
    else:
        assert code == 0, data


@pytest.mark.parametrize(
    ("addopts", "args", "partial"),
    [
        ("-o xfail_strict=true", ("-o", "xfail_strict=false"), True),
        ("--override-ini=xfail_strict=true", ("-o", "strict_xfail=false"), True),
        ("--strict", ("-o", "strict_xfail=false"), True),
        ("--strict", ("-o", "strict=false"), True),
        ("-o xfail_strict=true", (), False),  # the controls: the configuration's own choice
        ("--strict", (), False),
        ("-W error::DeprecationWarning", ("-W", "ignore::DeprecationWarning"), True),
        ("-W error::DeprecationWarning", ("-p", "no:warnings"), True),
        ("-Werror::DeprecationWarning", ("-W", "ignore::UserWarning"), False),
        ("-W error::DeprecationWarning", (), False),
    ],
)
def test_a_run_that_undoes_what_the_configurations_addopts_set_is_partial(
    tmp_path: Path, addopts: str, args: tuple[str, ...], partial: bool
) -> None:
    """What ``addopts`` set (``-o``, ``--strict``, ``-W``) is the suite's, as an ini key is:
    a run that undoes it turns a strict xfail's pass, or a warning made an error, into a pass."""
    files = {
        "pytest.ini": f"[pytest]\naddopts = {addopts}\n",
        "tests/test_a.py": PASS.format(n="a"),
    }
    if "-W" in addopts:
        files["tests/test_w.py"] = EXPECTS_THE_ERROR
    root = make(tmp_path / "p", files)
    proc = run_pytest(root, "-p", "no:cacheprovider", *args)
    code, data, _ = verify(root)
    if partial:
        assert code == 1 and "partial-run" in rules(data), (data, proc.stdout)
        assert "(the run's own options change the suite: " in rules(data)["partial-run"]
    else:
        assert proc.returncode == 0, proc.stdout
        assert code == 0, data


WARNS = "import warnings\n\n\ndef test_w():\n    warnings.warn('old', DeprecationWarning)\n"


def judged_after_a_green_run(root: Path, *args: str) -> tuple[int, dict[str, object]]:
    """pytest run green in ``root`` with ``args``, then the gate's code and JSON verdict."""
    proc = run_pytest(root, "-p", "no:cacheprovider", *args)
    assert proc.returncode == 0, proc.stdout
    code, data, _ = verify(root)
    return code, data


@pytest.mark.parametrize(
    ("args", "partial"),
    [(("-W", "ignore::DeprecationWarning"), False), (("-W", "ignore::UserWarning"), True)],
)
def test_a_filter_the_configuration_already_applies_changes_nothing(
    tmp_path: Path, args: tuple[str, ...], partial: bool
) -> None:
    """Every warning an error but DeprecationWarning: a run that ignores DeprecationWarning
    too leaves every error of the suite's filters one (Python applies the filters in order,
    the last first); a run that ignores UserWarning does not."""
    files = {
        "pytest.ini": "[pytest]\nfilterwarnings =\n    error\n    ignore::DeprecationWarning\n",
        "tests/test_a.py": PASS.format(n="a"),
        "tests/test_w.py": WARNS,
    }
    code, data = judged_after_a_green_run(make(tmp_path / "p", files), *args)
    if partial:
        assert code == 1 and "partial-run" in rules(data), data
    else:
        assert code == 0, data


@pytest.mark.parametrize(
    ("where", "args"),
    [("marker", ("-p", "no:warnings")), ("conftest", ("-W", "ignore::DeprecationWarning"))],
)
def test_a_warning_made_an_error_outside_the_configuration_file(
    tmp_path: Path, where: str, args: tuple[str, ...]
) -> None:
    """A test's own ``filterwarnings`` marker, or a conftest adding to the configuration's
    filters, makes the warning an error: an option that makes it lenient passes the test that
    fails in a clean clone's plain run."""
    files = dict(SIMPLE)
    if where == "marker":
        files["tests/test_w.py"] = "import pytest\n" + WARNS.replace(
            "def test_w", "@pytest.mark.filterwarnings('error')\ndef test_w"
        )
    else:
        files["tests/test_w.py"] = WARNS
        files["conftest.py"] = (
            "def pytest_configure(config):\n"
            "    config.addinivalue_line('filterwarnings', 'error::DeprecationWarning')\n"
        )
    root = make(tmp_path / "p", files)
    proc = pytest_in(root, *args)
    assert proc.returncode == 0, proc.stdout
    code, data, _ = verify(root)
    assert code == 1 and "partial-run" in rules(data), data
    assert pytest_in(root).returncode == 1  # the plain run: the warning is an error


@pytest.mark.parametrize(
    "case", ["python-O", "a-nested-configuration", "a-subfolder-made-the-rootdir", "no-plugin"]
)
def test_a_run_that_leaves_the_projects_own_checks_out_is_not_the_suites(
    tmp_path: Path, case: str
) -> None:
    """Every test ran, but not as the suite runs them: asserts stripped (``python -O``), the
    settings of another configuration file (``tests/pytest.ini`` found first from
    ``tests``), the root ``conftest.py`` not loaded (no configuration: pytest roots a run
    from ``tests/`` there), or a plugin of the checkout blocked. The plain run is the
    control."""
    files = {
        **SIMPLE,
        "conftest.py": 'pytest_plugins = ["guard"]\n',
        "guard.py": "",
    }
    if case == "python-O":
        files["pytest.ini"] = "[pytest]\n"
    if case == "a-nested-configuration":
        files["pytest.ini"] = "[pytest]\nfilterwarnings = error\n"
        files["tests/pytest.ini"] = "[pytest]\n"
    root = make(tmp_path / "p", files)
    env = subprocess_env(PYTHONOPTIMIZE="1" if case == "python-O" else "")
    where, args = root, ("-p", "no:cacheprovider")
    if case == "a-nested-configuration":
        args += ("tests",)
    elif case == "a-subfolder-made-the-rootdir":
        where = root / "tests"
    elif case == "no-plugin":
        args += ("-p", "no:guard")
    proc = run_pytest(where, *args, env=env)
    assert proc.returncode == 0, proc.stdout
    code, data, _ = verify(root)
    assert code == 1 and "partial-run" in rules(data), data
    assert "the run's own options change the suite" in proc.stdout, proc.stdout
    assert pytest_in(root).returncode == 0
    code, data, _ = verify(root)
    assert code == 0, data


SESSION_STATUS = {
    "fails": 1,
    "internal-error": 3,
    "its-own-status": 7,
    "usage-error": 4,  # set once tests ran: the session's failure, as any other status
    "usage-error-at-collection": 4,  # a conftest's check of what was collected raised
    "exits": 2,
    "passes": 0,
}
# the suite's own pytest.exit with no status, as the last test's session teardown ends: 2, as
# for a Ctrl-C, which is the user's
EXITS = """\
import pytest


@pytest.fixture(scope="session", autouse=True)
def leak_check():
    yield
    pytest.exit("resources leaked")
"""


@pytest.mark.parametrize("check", list(SESSION_STATUS))
def test_a_session_that_fails_though_no_test_did(tmp_path: Path, check: str) -> None:
    """A conftest's check at the session's end (as ``--cov-fail-under`` does) makes pytest
    exit non-zero with every test passed (1, as pytest-cov does; an internal error's 3; a
    status of the check's own): the clean clone's pytest fails too, so the gate refuses."""
    status = SESSION_STATUS[check]
    conftest = (
        "import pytest\n\n\ndef pytest_sessionfinish(session):\n"
        f"    if {status}:\n        session.exitstatus = {status}\n"
    )
    if check == "exits":
        conftest = EXITS
    elif check == "usage-error-at-collection":  # (before pytest counts what it collected)
        conftest = (
            "import pytest\n\n\ndef pytest_collection_modifyitems(items):\n"
            "    raise pytest.UsageError(f'{len(items)} tests: duplicate names')\n"
        )
    root = make(tmp_path / "p", {**SIMPLE, "conftest.py": conftest})
    proc = pytest_in(root)
    code, data, _ = verify(root)
    report = evidence.read_report(evidence.default_path(open_checkout(root).state))
    if status:
        assert proc.returncode == status
        assert code == 1 and "the session failed" in rules(data)["tests-failed"], data
        assert "tests-failed" in proc.stdout
        # a format a genstamp that passes over genstamp.session.failed refuses to read
        assert report.properties[evidence.P_FORMAT] == evidence.FORMAT_SESSION
    else:
        assert proc.returncode == 0, proc.stdout
        assert code == 0, data
        assert report.properties[evidence.P_FORMAT] == evidence.FORMAT


@pytest.mark.parametrize(
    "mistyped",
    [
        ("test/",),
        ("tests/test_a.py::test_a3",),
        ("-k", "a1 and"),
        ("-m", "slow or"),
        ("-k", "a1(x=1)"),  # parameters: refused as pytest matches the names
        ("-m", "slwo", "--strict-markers"),  # a marker strict_markers does not know
    ],
)
def test_a_command_line_pytest_cannot_follow_fails_nothing_of_the_tree(
    tmp_path: Path, mistyped: tuple[str, ...]
) -> None:
    """A mistyped path or node id ends pytest with a usage error, 4, before it collects
    anything (a `-k` or `-m` expression it cannot read, as it deselects): it was bound as a
    session that failed, and the tree its complete green run had passed was refused until the
    whole suite ran again, the message blaming a check at the session's end (h212, h215). It
    is a part of no tests: the complete run stands, and so do parts that run after it. On a
    tree with no other run, no test ran."""
    root = make(tmp_path / "p", SIMPLE)
    assert pytest_in(root, *mistyped).returncode == pytest.ExitCode.USAGE_ERROR
    code, data, _ = verify(root)
    assert code == 1 and "tests-failed" not in rules(data) and "no-tests" in rules(data), data
    assert pytest_in(root).returncode == 0
    assert pytest_in(root, *mistyped).returncode == pytest.ExitCode.USAGE_ERROR
    code, data, _ = verify(root)
    assert code == 0, data
    stamp(root)  # the typo first, then the suite in two parts
    assert pytest_in(root, *mistyped).returncode == pytest.ExitCode.USAGE_ERROR
    assert pytest_in(root, "tests/test_a.py").returncode == 0
    assert pytest_in(root, "tests/test_b.py", "tests/deep").returncode == 0
    code, data, _ = verify(root)
    assert code == 0, data


@pytest.mark.parametrize("addopts", ['-m "slow or"', '-k "a1 and"', '-m "not slow"'])
def test_a_configuration_whose_expression_pytest_cannot_read_fails_every_plain_run(
    tmp_path: Path, addopts: str
) -> None:
    """The tree's addopts give a `-m` (or `-k`) expression pytest cannot read: every plain
    pytest of the tree stops with a usage error, a clean clone's CI too; a run that gives its
    own (`-m ""`) passed and was accepted as the whole suite (h216). Refused: the tree's
    configuration fails. Control: an expression pytest reads, whose run is accepted."""
    config = f"[pytest]\naddopts = {addopts}\nmarkers =\n    slow: slow\n"
    root = make(tmp_path / "p", {**SIMPLE, "pytest.ini": config})
    readable = addopts == '-m "not slow"'
    assert pytest_in(root).returncode == (0 if readable else pytest.ExitCode.USAGE_ERROR)
    option = addopts[:2]
    assert pytest_in(root, option, "" if option == "-m" else "a or b or c").returncode == 0
    code, data, _ = verify(root)
    if readable:
        assert code == 0, data
    else:
        assert code == 1 and "which pytest cannot read" in rules(data)["tests-failed"], data


@pytest.mark.parametrize(
    ("args", "accepted"),
    [((), True), (("--deselect", "tests/test_b.py::test_b1"), False), (("-k", "a1"), False)],
    ids=["the-configured-tests", "deselecting-more", "k-narrowing-more"],
)
@pytest.mark.parametrize("spelled", ["paths", "pyargs"])
def test_node_ids_the_configuration_names_are_its_suite(
    tmp_path: Path, args: tuple[str, ...], accepted: bool, spelled: str
) -> None:
    """`addopts = tests/test_a.py::test_a1 tests/test_b.py`: the configuration runs one test
    of test_a.py (a2 is kept out, and fails), and a plain pytest runs exactly that, as a
    clean clone does. It was refused as test_a.py collected in part, and running what was
    "left out" fails. A run that narrows the configured tests further is partial. Under
    `--pyargs` the configuration names them as modules."""
    addopts = "tests/test_a.py::test_a1 tests/test_b.py"
    if spelled == "pyargs":
        addopts = "--pyargs tests.test_a::test_a1 tests.test_b"
    files = {
        "pytest.ini": f"[pytest]\naddopts = {addopts}\n",
        "tests/__init__.py": "",
        "tests/test_a.py": cases("a1", "a2", fail="a2"),
        "tests/test_b.py": cases("b1"),
    }
    root = make(tmp_path / "p", files)
    assert pytest_in(root, *args).returncode == 0
    code, data, _ = verify(root)
    if accepted:
        assert code == 0, data
    else:
        assert code == 1 and "partial-run" in rules(data), data


@pytest.mark.parametrize(
    ("layout", "accepted"),
    [
        ("same-basename", False),
        ("packages-named-alike", False),
        ("packages-named-alike-other-modules", False),
        ("importlib", True),
        ("packages-named-apart", True),
        # pytest names no package by a folder whose name is no Python name: test_svc_a, ...
        ("packages-named-no-python-name", True),
    ],
)
def test_test_files_of_one_module_name_run_apart_are_no_whole_run(
    tmp_path: Path, layout: str, accepted: bool
) -> None:
    """`svc_a/tests/test_x.py` and `svc_b/tests/test_x.py` in folders that are no packages:
    a plain pytest of the whole suite fails to collect the second ("import file mismatch"),
    as a clean clone's does; each folder run alone passes, and the parts were accepted
    together. Packages both named `tests` clash alike. Control: importlib's import mode,
    under which a whole run collects both."""
    ini = '[tool.pytest.ini_options]\ntestpaths = ["svc_a/tests", "svc_b/tests"]\n'
    if "no-python-name" in layout:
        ini = ini.replace("/tests", "/int-tests")
    if layout == "importlib":
        ini += 'addopts = "--import-mode=importlib"\n'
    files = {"pyproject.toml": ini}
    for svc in ("svc_a", "svc_b"):
        module = f"test_{svc}" if "other-modules" in layout else "test_x"
        folder = "int-tests" if "no-python-name" in layout else "tests"
        if "no-python-name" in layout:
            module = f"test_{svc}"
        files[f"{svc}/{folder}/{module}.py"] = cases(svc)
        if layout.startswith("packages"):
            files[f"{svc}/{folder}/__init__.py"] = ""
        if layout == "packages-named-apart":  # svc_a.tests, svc_b.tests
            files[f"{svc}/__init__.py"] = ""
    root = make(tmp_path / "p", files)
    assert (pytest_in(root).returncode == 0) is accepted  # the whole suite, as a clone runs it
    for svc in ("svc_a", "svc_b"):
        assert pytest_in(root, svc).returncode == 0
    code, data, _ = verify(root)
    if accepted:
        assert code == 0, data
    else:
        said = rules(data)["parts-disagree"]
        assert code == 1 and "svc_a/tests/test_" in said and "svc_b/tests/test_" in said, data
        name = "tests" if layout.startswith("packages") else "test_x"
        assert f"(each under the name {name})" in said, said


@pytest.mark.parametrize("how", ["importlib", "ignore-import-mismatch"])
def test_a_test_file_collected_with_another_files_module_is_not_collected(
    tmp_path: Path, how: str
) -> None:
    """Two test files of one module name, `tests.test_x` (packages both named `tests`, under
    `--import-mode=importlib`; or folders that are no packages, `PY_IGNORE_IMPORTMISMATCH=1`
    with the prepend mode): pytest hands the second file the module it imported for the first.
    The run passes, svc_a's tests running twice under both files' node ids; svc_b's own test,
    which fails, never ran. Its file was no file the run collected: the gate refuses, and the
    run says why. A run of svc_b alone imports its own module: it fails, and once fixed its
    part completes the suite where a whole run imports both files (importlib's mode: their
    modules are one, but each ran); without the variable, a whole run fails to collect them,
    as a clean clone's does: parts-disagree."""
    ini = '[tool.pytest.ini_options]\ntestpaths = ["svc_a", "svc_b"]\n'
    files = {"svc_a/tests/test_x.py": cases("a"), "svc_b/tests/test_x.py": cases("b", fail="b")}
    env = None
    if how == "importlib":
        ini += 'addopts = "--import-mode=importlib"\n'
        files.update({"svc_a/tests/__init__.py": "", "svc_b/tests/__init__.py": ""})
    else:
        env = {**subprocess_env(), "PY_IGNORE_IMPORTMISMATCH": "1"}
    root = make(tmp_path / "p", {"pyproject.toml": ini, **files})
    whole = run_pytest(root, "-p", "no:cacheprovider", "-rA", env=env)
    assert whole.returncode == 0 and "PASSED svc_b/tests/test_x.py::test_a" in whole.stdout
    said = "svc_b/tests/test_x.py collected with the module of svc_a/tests/test_x.py"
    assert said in whole.stdout, whole.stdout
    code, data, _ = verify(root)
    assert code == 1 and "svc_b/tests/test_x.py" in rules(data)["partial-run"], data
    assert run_pytest(root, "-p", "no:cacheprovider", "svc_b", env=env).returncode == 1
    (root / "svc_b" / "tests" / "test_x.py").write_text(cases("b"))
    commit_all(root, "svc_b fixed")
    stamp(root)
    assert run_pytest(root, "-p", "no:cacheprovider", env=env).returncode == 0
    assert verify(root)[0] == 1  # the whole run still never ran svc_b's own test
    assert run_pytest(root, "-p", "no:cacheprovider", "svc_b", env=env).returncode == 0
    code, data, _ = verify(root)
    if how == "importlib":
        assert code == 0, data
    else:
        assert code == 1 and list(rules(data)) == ["parts-disagree"], data


# a collector of a Cython source's doctests, as pytest-cython's: a Module of the .pyx file whose
# module is the extension built from it (here a module of its name beside it)
PYX_DOCTESTS = """\
import doctest
import importlib

import pytest


class PyxModule(pytest.Module):
    def _getobj(self):
        return importlib.import_module(self.path.stem)

    def collect(self):
        for test in doctest.DocTestFinder().find(self.obj):
            if test.examples:
                yield pytest.Function.from_parent(self, name=test.name, callobj=_run(test))


def _run(test):
    def run():
        runner = doctest.DocTestRunner()
        runner.run(test)
        assert not runner.failures

    return run


def pytest_collect_file(file_path, parent):
    if file_path.suffix == ".pyx":
        return PyxModule.from_parent(parent, path=file_path)
"""
ONE = 'def one():\n    """\n    >>> one()\n    1\n    """\n    return 1\n'


def test_a_cython_sources_doctests_collected_from_its_extension_are_its_own(
    tmp_path: Path,
) -> None:
    """pytest-cython collects a .pyx's doctests through a Module of the .pyx whose module is
    the extension built from it: the run said it would refuse, the .pyx taken for a test file
    collected with another file's module (its doctests ran, and verify accepted)."""
    files = {
        "pytest.ini": "[pytest]\n",
        "conftest.py": PYX_DOCTESTS,
        "fast.pyx": ONE,
        "fast.py": ONE,
        "tests/test_a.py": cases("a1"),
    }
    root = make(tmp_path / "p", files)
    proc = pytest_in(root, "-rA")
    assert proc.returncode == 0 and "PASSED fast.pyx::fast.one" in proc.stdout, proc.stdout
    assert "collected with the module of" not in proc.stdout, proc.stdout
    assert "will refuse" not in proc.stdout, proc.stdout
    code, data, _ = verify(root)
    assert code == 0, data


# a check of the whole session, as syrupy's of snapshots no collected test uses: it fails a
# run that collected every test file, never one that collected a part of them
WHOLE_SESSION_CHECK = """\
def pytest_sessionfinish(session):
    ran = {item.path.name for item in session.items}
    if {"test_a.py", "test_b.py", "test_c.py"} <= ran:
        session.exitstatus = 1
"""


def test_a_whole_run_whose_session_failed_stays_when_its_files_run_again_in_parts(
    tmp_path: Path,
) -> None:
    """The whole suite, every test passed and the session failed (an unused snapshot); then
    each file again, each run green: the parts ran every test again, but no part checked the
    whole session, and a clean clone's pytest fails as the whole run did. Control: with no
    such check, the parts stand for the whole run."""
    for check in (True, False):
        files = {**SIMPLE, "conftest.py": WHOLE_SESSION_CHECK if check else ""}
        root = make(tmp_path / f"p-{check}", files)
        assert pytest_in(root).returncode == (1 if check else 0)
        for part in ("tests/test_a.py", "tests/test_b.py", "tests/deep/test_c.py"):
            assert pytest_in(root, part).returncode == 0
        code, data, _ = verify(root)
        if check:
            assert code == 1 and "the session failed" in rules(data)["tests-failed"], data
        else:
            assert code == 0, data


@pytest.mark.parametrize("quiet", ["skipped-whole", "all-deselected", "empty"])
def test_a_run_of_the_same_tests_that_collects_fewer_files_keeps_the_whole_runs_part(
    tmp_path: Path, quiet: str
) -> None:
    """The whole suite, green, holds a file that yields no test that runs (a module skipped
    whole where an optional dependency is missing, one whose tests the configuration's `-m`
    leaves out, one with no test yet); then the two files that do hold tests, again: the
    same tests ran, but not the same files were collected. The second run is a part of its
    own: it left the whole run's part standing, which covers the suite. Control: that run
    alone, in a new generation, covers part of it."""
    ini = '[tool.pytest.ini_options]\ntestpaths = ["tests"]\n'
    quiet_file = {
        "skipped-whole": "import pytest\n\npytest.importorskip('genstamp_no_such_module')\n"
        + cases("np"),
        "all-deselected": "import pytest\n\n\n@pytest.mark.slow\ndef test_perf():\n    pass\n",
        "empty": "",
    }[quiet]
    if quiet == "all-deselected":
        ini += 'addopts = "-m \'not slow\'"\nmarkers = ["slow"]\n'
    files = {**SIMPLE, "pyproject.toml": ini, "tests/test_quiet.py": quiet_file}
    root = make(tmp_path / "p", files)
    named = ("tests/test_a.py", "tests/test_b.py", "tests/deep")
    assert pytest_in(root).returncode == 0
    assert pytest_in(root, *named).returncode == 0
    code, data, _ = verify(root)
    assert code == 0, data
    stamp(root)
    assert pytest_in(root, *named).returncode == 0
    code, data, _ = verify(root)
    assert code == 1 and "tests/test_quiet.py" in rules(data)["partial-run"], data


@pytest.mark.parametrize(
    "case",
    [
        "marker-and-W",
        "tests-keep-the-configuration",
        "configured-confcutdir",
        "confcutdir-beside",
        "pyargs",
    ],
)
def test_runs_as_the_project_runs_them_are_the_suites(tmp_path: Path, case: str) -> None:
    """Controls of the run options above: a ``-W`` cannot weaken a test's own marker (pytest
    applies markers last); a suite whose folder has no configuration file takes the one its
    tests keep; the configuration's own ``--confcutdir`` is the suite's (it cuts the
    conftests above its folder, not those beside it: ``other/conftest.py`` loads, the top's
    does not, for ``other/``'s tests too); ``--pyargs`` names a package in a ``pythonpath``
    folder, and the suite is that package's tests alone."""
    files = dict(SIMPLE)
    args: tuple[str, ...] = ()
    if case == "marker-and-W":
        files["tests/test_w.py"] = (
            "import pytest, warnings\n\n\n@pytest.mark.filterwarnings('error')\n"
            "def test_w():\n    with pytest.raises(DeprecationWarning):\n"
            "        warnings.warn('old', DeprecationWarning)\n"
        )
        args = ("-W", "ignore::DeprecationWarning")
    elif case == "tests-keep-the-configuration":
        files["pyproject.toml"] = '[project]\nname = "p"\nversion = "0"\n'
        files["tests/pytest.ini"] = "[pytest]\nxfail_strict = true\n"
        args = ("tests",)
    elif case in ("configured-confcutdir", "confcutdir-beside"):
        files["conftest.py"] = "raise RuntimeError('kept out by the configuration')\n"
        files["pytest.ini"] = "[pytest]\naddopts = --confcutdir=tests\n"
        if case == "confcutdir-beside":
            files["other/test_o.py"] = cases("o1")
            files["other/test_broken.py"] = cases("x1", fail="x1")
            files["other/conftest.py"] = 'collect_ignore = ["test_broken.py"]\n'
    else:
        files = {
            "pytest.ini": "[pytest]\naddopts = --pyargs\ntestpaths = pkg.tests\npythonpath = lib\n",
            "lib/pkg/__init__.py": "",
            "lib/pkg/tests/__init__.py": "",
            "lib/pkg/tests/test_p.py": cases("p1"),
            "tools/test_tool.py": cases("t1", fail="t1"),
        }
    root = make(tmp_path / "p", files)
    proc = pytest_in(root, *args)
    assert proc.returncode == 0, proc.stdout
    code, data, _ = verify(root)
    assert code == 0, data


def assert_partial(root: Path, said: str, partial: bool) -> None:
    """verify's verdict on ``root``: refused as a partial run whose line says ``said``, or
    (not ``partial``) accepted."""
    code, data, _ = verify(root)
    if partial:
        assert code == 1 and said in rules(data)["partial-run"], data
    else:
        assert code == 0, data


ADDOPTS_OPTIONS = (
    "def pytest_addoption(parser):\n"
    "    parser.addoption('--golden-dir', default='')\n"
    "    parser.addoption('--slow-mode', action='store_true')\n"
    "    parser.addoption('--trace-dir', nargs='?', const='traces')\n"
)


@pytest.mark.parametrize(
    ("addopts", "part", "partial"),
    [
        # a conftest's option that takes a value: the value is no path to collect
        ("--golden-dir tests/golden", "tests/test_a.py", True),
        ("--golden-dir tests/golden", "", False),
        # a conftest's flag: the word after it is the path pytest collects
        ("--slow-mode tests/deep", "tests/deep/test_c.py", False),
        # (a node id in that folder is its whole file: the folder collects it; -k narrows)
        ("--slow-mode tests/deep", "-kc1", True),
        # short flags bundled as argparse takes them
        ('-qm "not slow"', "", False),
        ('-qm "not slow"', "tests/test_b.py", True),
        # an optional value (pytest-cov's `--cov`): not when an option follows
        ("--trace-dir --ignore tests/deep", "", False),
        ("--trace-dir --ignore tests/deep", "tests/test_b.py", True),
        # a value, then the path the run collects in place of the configuration's testpaths
        ("--golden-dir 1 tests/deep\ntestpaths = tests", "", False),
    ],
    ids=[
        "value-part",
        "value-whole",
        "flag-path",
        "flag-path-part",
        "bundle",
        "bundle-part",
        "optional-whole",
        "optional-part",
        "value-path",
    ],
)
def test_options_in_addopts_are_read_as_the_runs_pytest_reads_them(
    tmp_path: Path, addopts: str, part: str, partial: bool
) -> None:
    """The words of the configuration's addopts after an option only a conftest or a plugin
    knows are read as the run's pytest read them (it knows whether the option takes a value):
    a value taken for a path emptied the suite, and any part of it was accepted as whole. The
    run's own forecast reads them so too (it said a complete run would be refused)."""
    files = {
        **SIMPLE,
        "tests/golden/expected.txt": "42\n",
        "tests/test_slow.py": "import pytest\n\n\n@pytest.mark.slow\ndef test_s():\n    pass\n",
        "tests/deep/test_d.py": cases("d1"),
        "conftest.py": ADDOPTS_OPTIONS,
        "pytest.ini": f"[pytest]\naddopts = {addopts}\nmarkers = slow\n",
    }
    root = make(tmp_path / "p", files)
    proc = pytest_in(root, *([part] if part else []))
    assert proc.returncode == 0
    code, data, _ = verify(root)
    assert code == (1 if partial else 0), data
    assert ("partial-run" in rules(data)) == partial
    assert ("will refuse: partial-run" in proc.stdout) == partial, proc.stdout


def test_with_no_run_to_say_a_word_after_an_unknown_option_is_read_both_ways(
    tmp_path: Path,
) -> None:
    """`genstamp status` (and an attestation's gate) know no run's options: the word after a
    conftest's option is a path or that option's value, and the suite is what either reading
    collects. Read as a path alone it made the suite empty (`--golden-dir tests/golden`)."""
    root = make(
        tmp_path / "p",
        {
            **SIMPLE,
            "tests/golden/expected.txt": "42\n",
            "conftest.py": ADDOPTS_OPTIONS,
            "pytest.ini": "[pytest]\naddopts = --golden-dir tests/golden\n",
        },
    )
    proc = run_genstamp(root, "status", "--json")
    assert proc.returncode == 0, proc.stderr
    (found,) = json.loads(proc.stdout)["selection"]["suites"]
    assert found["files"] == len(SIMPLE)


@pytest.mark.parametrize(
    ("cwd", "args", "accepted"),
    [("", ("tests",), True), ("tests", (), True), ("", (), False)],
    ids=["pytest-tests", "cd-tests", "from-the-top"],
)
def test_a_configuration_only_the_tests_folder_keeps_is_the_projects(
    tmp_path: Path, cwd: str, args: tuple[str, ...], accepted: bool
) -> None:
    """No configuration at the top; tests/pytest.ini is the project's (its python_files and
    filterwarnings define and judge the suite). A run that reads it is the suite's (pytest
    then loads no conftest above tests/, and none is required); a plain `pytest` from the top
    reads none, misses its check_*.py files and its warning errors."""
    files = {
        "conftest.py": "COLLECTED_FROM_THE_TOP = True\n",
        "tests/test_a.py": cases("a1"),
        "tests/check_x.py": cases("x1"),
        "tests/pytest.ini": (
            "[pytest]\npython_files = check_*.py test_*.py\nfilterwarnings = error\n"
        ),
    }
    root = make(tmp_path / "p", files)
    assert pytest_in(root / cwd, *args).returncode == 0
    code, data, _ = verify(root)
    assert code == (0 if accepted else 1), data
    if not accepted:
        said = rules(data)["partial-run"]
        assert "tests/check_x.py" in said and "not tests/pytest.ini" in said, said


@pytest.mark.parametrize("addopts", ['-m "not slow"', "--deselect test_a.py::test_slow"])
@pytest.mark.parametrize(("cwd", "args"), [("", ("tests",)), ("tests", ())], ids=["arg", "cd"])
def test_the_deselection_of_a_configuration_only_the_tests_folder_keeps_is_the_suites(
    tmp_path: Path, addopts: str, cwd: str, args: tuple[str, ...]
) -> None:
    """tests/pytest.ini is the project's configuration (none at the top), and its own addopts
    deselect a test: that is the suite, as a top-level configuration's are (the deselected
    test was read against the top, which has none, and refused as left out). The control: the
    same deselection given on the command line leaves a test of the suite out. A test file
    git ignores elsewhere (a scratch folder) is no test of the suite."""
    files = {
        ".gitignore": "__pycache__/\nscratch/\n",
        "scratch/test_try.py": cases("try"),
        "tests/test_a.py": cases("a1") + "@pytest.mark.slow\n" + cases("slow"),
        "tests/pytest.ini": f"[pytest]\nmarkers = slow\naddopts = {addopts}\n",
    }
    files["tests/test_a.py"] = "import pytest\n\n\n" + files["tests/test_a.py"]
    root = make(tmp_path / "p", files)
    assert pytest_in(root / cwd, *args).returncode == 0
    code, data, _ = verify(root)
    assert code == 0, data
    stamp(root)  # a new generation: the whole run above no longer stands
    assert pytest_in(root / cwd, *args, "-o", "addopts=", "-k", "not slow").returncode == 0
    code, data, _ = verify(root)
    assert code == 1 and "partial-run" in rules(data), data


def test_the_tests_folders_own_deselection_under_gits_relative_environment(tmp_path: Path) -> None:
    """`cd tests && GIT_DIR=../.git GIT_WORK_TREE=.. pytest`: the folder the suite keeps its
    configuration in is read by a git started in the work tree, with git's environment as the
    process was given it (relative to tests/: the listing failed, and the deselection of
    tests/pytest.ini was refused as partial)."""
    files = {
        "tests/test_a.py": "import pytest\n\n\n@pytest.mark.slow\n" + cases("slow") + cases("a1"),
        "tests/pytest.ini": '[pytest]\nmarkers = slow\naddopts = -m "not slow"\n',
    }
    root = make(tmp_path / "p", files)
    env = subprocess_env(GIT_DIR="../.git", GIT_WORK_TREE="..")
    proc = run_pytest(root / "tests", "-p", "no:cacheprovider", env=env)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    code, data, _ = verify(root)
    assert (code, rules(data)) == (0, {}), data


def test_a_deselection_the_tests_folder_makes_is_not_the_suites_when_tests_lie_elsewhere(
    tmp_path: Path,
) -> None:
    """tests/pytest.ini deselects a test, and a test file lies at the top too: the suite is the
    top's (pytest's defaults, no deselection). `pytest tests` then `pytest test_top.py` left a
    test of it out, and the two parts were accepted: the deselection was read as the suite's
    from the files that one run collected, not from the tree's suite, as the gate reads it."""
    files = {
        "test_top.py": cases("top"),
        "tests/test_a.py": "import pytest\n\n\n"
        + cases("a1")
        + "@pytest.mark.slow\n"
        + cases("slow"),
        "tests/pytest.ini": '[pytest]\nmarkers = slow\naddopts = -m "not slow"\n',
    }
    root = make(tmp_path / "p", files)
    assert pytest_in(root, "tests").returncode == 0
    assert pytest_in(root, "test_top.py").returncode == 0
    code, data, _ = verify(root)
    assert code == 1 and "tests/test_a.py::test_slow" in rules(data)["partial-run"], data


@pytest.mark.parametrize(
    ("cwd", "accepted"), [("tests", True), ("tests/unit", False)], ids=["cd-tests", "cd-unit"]
)
def test_a_folders_configuration_is_the_projects_when_the_defaults_collect_nothing(
    tmp_path: Path, cwd: str, accepted: bool
) -> None:
    """No configuration at the top, and pytest's defaults collect no file of the tree: the
    tests are named as tests/pytest.ini's python_files says. Its folder holds the suite. The
    suite read from the top was empty, so a run of tests/unit alone was accepted (probe B18)."""
    files = {
        "tests/pytest.ini": "[pytest]\npython_files = t_*.py\n",
        "tests/t_a.py": cases("a1"),
        "tests/unit/t_u.py": cases("u1"),
    }
    root = make(tmp_path / "p", files)
    assert pytest_in(root / cwd).returncode == 0
    code, data, _ = verify(root)
    assert code == (0 if accepted else 1), data
    if not accepted:
        assert "tests/t_a.py" in rules(data)["partial-run"], data


FORECASTS = {
    # testpaths globbed as pytest globs them: a run of one of the folders leaves the other out
    "testpaths-glob": (
        {
            "pytest.ini": "[pytest]\ntestpaths = tests/*_suite\n",
            "tests/unit_suite/test_u.py": cases("u1"),
            "tests/int_suite/test_i.py": cases("i1"),
        },
        "",
        ("tests/unit_suite",),
        "tests/int_suite/test_i.py",
    ),
    # a glob's match is where pytest starts: a folder named like one of its norecursedirs
    # (`build`) that the glob spans is collected, and so is one a conftest ignores
    "testpaths-glob-spans-build": (
        {
            "pytest.ini": "[pytest]\ntestpaths = components/*/tests\n",
            "components/api/tests/test_api.py": cases("a1"),
            "components/build/tests/test_b.py": cases("b1"),
        },
        "",
        ("components/api/tests",),
        "components/build/tests/test_b.py",
    ),
    "testpaths-glob-ignored-by-a-conftest": (
        {
            "pytest.ini": "[pytest]\ntestpaths = tests/*/\n",
            "tests/conftest.py": 'collect_ignore = ["legacy"]\n',
            "tests/unit/test_u.py": cases("u1"),
            "tests/legacy/test_l.py": cases("l1"),
        },
        "",
        ("tests/unit",),
        "tests/legacy/test_l.py",
    ),
    # a conftest and a package's __init__.py that `tests/*` names hold no tests: a run of the
    # folder covers the suite, from the top and from inside it
    "testpaths-glob-names-a-conftest": (
        {
            "pytest.ini": "[pytest]\ntestpaths = tests/*\n",
            "tests/__init__.py": "",
            "tests/conftest.py": "import pytest\n\n\n@pytest.fixture\ndef one():\n    return 1\n",
            "tests/unit/test_u.py": cases("u1"),
            "tests/integration/test_i.py": cases("i1"),
        },
        "",
        ("tests",),
        None,
    ),
    "testpaths-glob-of-folders": (
        {
            "pytest.ini": "[pytest]\ntestpaths = tests/*/\n",
            "tests/conftest.py": "",
            "tests/unit/test_u.py": cases("u1"),
        },
        "",
        (),
        None,
    ),
    # a folder its conftest skips whole ran, skipped, as the gate counts it
    "skipped-folder": (
        {
            "tests/test_a.py": cases("a1"),
            "tests/optional/conftest.py": (
                "import pytest\n\npytest.importorskip('genstamp_no_such_module')\n"
            ),
            "tests/optional/test_o.py": cases("o1"),
        },
        "",
        ("tests",),
        None,
    ),
    # no configuration file: pytest makes the folder it runs in the rootdir
    "no-configuration-from-a-subfolder": (
        {"tests/test_a.py": cases("a1"), "tests/sub/test_s.py": cases("s1")},
        "tests/sub",
        (),
        "tests/test_a.py",
    ),
    # the project accepts a partial run: the forecast says so, as the gate does
    "allow-partial": (
        {
            "pyproject.toml": "[tool.genstamp]\nallow-partial = true\n",
            "tests/test_a.py": cases("a1", "a2"),
        },
        "",
        ("-k", "a1"),
        None,
    ),
}


@pytest.mark.parametrize("case", sorted(FORECASTS))
def test_the_forecast_says_what_the_gate_then_says(tmp_path: Path, case: str) -> None:
    """The plugin's line at the end of a run agrees with `genstamp verify` of its evidence: it
    lists the suite as the gate does (testpaths globbed, a folder skipped whole counted, a run
    below the top of a project without configuration) and reads `allow-partial` (probe B18)."""
    files, cwd, args, left_out = FORECASTS[case]
    root = make(tmp_path / "p", files)
    proc = pytest_in(root / cwd, *args)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    code, data, _ = verify(root)
    told = [line for line in proc.stdout.splitlines() if line.startswith("genstamp gate:")]
    if left_out is None:
        assert code == 0, data
        assert len(told) == 1 and "`genstamp verify` accepts it" in told[0], proc.stdout
    else:
        assert left_out in rules(data)["partial-run"], data
        assert len(told) == 1 and "will refuse: partial-run" in told[0], proc.stdout
        assert f"1 file of the suite not collected ({left_out})" in told[0], told
    assert ("PARTIAL run (allow-partial)" in proc.stdout) == (case == "allow-partial")


INNER_PYTEST = """\
import os, subprocess, sys


def test_the_sample_project_fails_as_it_should():
    folder = os.path.join(os.path.dirname(__file__), "fixtures", "proj")
    done = subprocess.run([sys.executable, *{argv}], cwd=folder)
    assert done.returncode == 1
"""


@pytest.mark.parametrize("how", ["one-run", "two-parts", "xdist", "xdist-pytest-main"])
def test_a_pytest_a_test_starts_in_the_tree_is_no_part(tmp_path: Path, how: str) -> None:
    """A test runs pytest on a sample project the tree keeps (a CLI's or a plugin's test
    suite does), whose test fails on purpose: that pytest is followed as the test's child,
    and is no run of the suite. It bound a part of its own to the checkout's generation, and
    two parts that cover the suite were refused for a failure no test of the suite had."""
    files = {
        "pytest.ini": "[pytest]\nnorecursedirs = fixtures\n",
        # a CLI that calls pytest.main() (its program is not pytest) or pytest itself
        "tests/test_meta.py": INNER_PYTEST.format(
            argv=["-c", "import pytest, sys; sys.exit(pytest.main(['-q']))"]
            if how == "xdist-pytest-main"
            else ["-m", "pytest", "-q"]
        ),
        "tests/test_a.py": cases("a1"),
        "tests/fixtures/proj/pytest.ini": "[pytest]\n",
        "tests/fixtures/proj/test_fail.py": cases("f1", fail="f1"),
    }
    root = make(tmp_path / "p", files)
    # (under xdist the test's pytest inherits its worker's variables, and is no worker)
    ways: dict[str, list[tuple[str, ...]]] = {
        "one-run": [()],
        "two-parts": [("-k", "a1"), ("-k", "not a1")],
        "xdist": [("-n", "2")],
        "xdist-pytest-main": [("-n", "2", "-k", "meta"), ("-k", "not meta")],
    }
    runs = ways[how]
    for args in runs:  # (the test's own pytest inherits the run's variable)
        proc = run_pytest(root, "-p", "no:cacheprovider", *args)
        assert proc.returncode == 0, proc.stdout + proc.stderr
    code, data, _ = verify(root)
    assert (code, rules(data)) == (0, {}), data
    parts = list((root / ".git" / "genstamp" / "parts").rglob("*.xml"))
    assert len(parts) == len(runs), parts


NESTED_EXPECTS = """\
import os, subprocess, sys


def test_the_sample_project():
    folder = os.path.join(os.path.dirname(__file__), "fixtures", "proj")
    argv = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"]
    done = subprocess.run(argv, cwd=folder)
    assert done.returncode == int(os.environ["EXPECTED"])
"""


def test_a_pytest_a_test_starts_in_the_tree_runs_its_tests_as_they_are(tmp_path: Path) -> None:
    """A test runs pytest on a sample project the tree keeps: that pytest's assertion-rewritten
    test modules come from the run's own cache (bytecode pytest checks by mtime and size alone,
    before 9.2, ran an edit of the sample's test that kept both: it passed, as it no longer
    does), and none is written beside them."""
    files = {
        "pytest.ini": "[pytest]\nnorecursedirs = fixtures\n",
        "tests/test_meta.py": NESTED_EXPECTS,
        "tests/fixtures/proj/pytest.ini": "[pytest]\n",
        "tests/fixtures/proj/test_s.py": "def test_s():\n    assert 1 + 1 == 2\n",
    }
    root = make(tmp_path / "p", files)
    sample = root / "tests" / "fixtures" / "proj" / "test_s.py"
    proc = run_pytest(root, "-p", "no:cacheprovider", env=subprocess_env(True, EXPECTED="0"))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert not list(sample.parent.glob("__pycache__/*")), list(sample.parent.rglob("*"))
    st = sample.stat()
    sample.write_text(sample.read_text().replace("2\n", "3\n"))  # the same size
    os.utime(sample, ns=(st.st_atime_ns, st.st_mtime_ns))  # and time
    proc = run_pytest(root, "-p", "no:cacheprovider", env=subprocess_env(True, EXPECTED="1"))
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_parts_that_each_write_a_report_into_the_work_tree_merge(tmp_path: Path) -> None:
    """A split run whose parts each write their --junitxml into the work tree (not ignored), as
    CI jobs do (`--junitxml=junit.xml` in each): each part's tree holds its own report, which
    the gate leaves out of the trees it compares;
    the parts were never merged (partial-run, naming a file the other part ran). The control:
    one part alone leaves the other's file out."""
    root = make(
        tmp_path / "p", {"tests/a/test_a.py": cases("a1"), "tests/b/test_b.py": cases("b1")}
    )
    assert pytest_in(root, "tests/a", "--junitxml=junit.xml").returncode == 0
    code, data, _ = verify(root)
    assert code == 1 and "tests/b/test_b.py" in rules(data)["partial-run"], data
    assert pytest_in(root, "tests/b", "--junitxml=junit.xml").returncode == 0
    code, data, _ = verify(root)
    assert (code, rules(data)) == (0, {}), data


def test_parts_that_each_write_a_report_of_its_own_name_are_told_how_to_merge(
    tmp_path: Path,
) -> None:
    """pytest-split's pattern, a report per group (`--junitxml=junit-1.xml`, `junit-2.xml`),
    written into the work tree, not ignored: each part's trees hold the others' reports as
    they were then, and never the tree judged. Refused (leaving other parts' reports out of
    a part's trees would hide a file the tests read that another part's report was written
    over), and the remedy said to rerun, which changes nothing: it names the reports and how
    to write them so that the parts merge. The control: the same name for every part."""
    root = make(
        tmp_path / "p", {"tests/a/test_a.py": cases("a1"), "tests/b/test_b.py": cases("b1")}
    )
    assert pytest_in(root, "tests/a", "--junitxml=junit-1.xml").returncode == 0
    assert pytest_in(root, "tests/b", "--junitxml=junit-2.xml").returncode == 0
    for rev in ((), ("--rev", "HEAD")):
        code, data, _ = verify(root, *rev)
        said = rules(data)["tree-mismatch"]
        assert code == 1 and "only the reports the parts of the run wrote" in said, data
        assert "give every part the same --junitxml name" in said, said
    for name in ("junit-1.xml", "junit-2.xml"):
        (root / name).unlink()
    stamp(root)
    assert pytest_in(root, "tests/a", "--junitxml=junit.xml").returncode == 0
    assert pytest_in(root, "tests/b", "--junitxml=junit.xml").returncode == 0
    for rev in ((), ("--rev", "HEAD")):
        code, data, _ = verify(root, *rev)
        assert (code, rules(data)) == (0, {}), data


def test_a_report_written_over_a_path_of_code_hides_no_change_of_it(tmp_path: Path) -> None:
    """A part whose --junitxml names a path of code (`pkg/__init__.py` of a namespace package):
    a report's path is left out of the trees compared, and the commit that then broke that
    module was accepted, the other part's tree compared without it too. Code (and a
    configuration) is compared whatever a run wrote over it."""
    root = make(
        tmp_path / "p",
        {"tests/test_a.py": cases("a1"), "tests/test_b.py": cases("b1"), "pkg/m.py": "X = 1\n"},
    )
    assert pytest_in(root, "tests/test_a.py", "--junitxml=junit-1.xml").returncode == 0
    assert pytest_in(root, "tests/test_b.py", "--junitxml=pkg/__init__.py").returncode == 0
    (root / "pkg" / "__init__.py").write_text("raise RuntimeError('broken')\n")
    commit_all(root, "pkg broken")
    code, data, _ = verify(root, "--rev", "HEAD")
    assert code == 1 and "pkg/__init__.py" in rules(data)["tree-mismatch"], data


def test_a_monorepo_with_two_suites_needs_both(tmp_path: Path) -> None:
    files = {
        "pyproject.toml": '[tool.genstamp]\nsuites = ["svc_a", "svc_b"]\n',
        "svc_a/pytest.ini": "[pytest]\ntestpaths = tests\n",
        "svc_a/tests/test_a.py": cases("a"),
        "svc_b/pytest.ini": "[pytest]\ntestpaths = tests\n",
        "svc_b/tests/test_b.py": cases("b"),
    }
    root = make(tmp_path / "p", files)
    assert pytest_in(root / "svc_a").returncode == 0
    code, data, _ = verify(root)
    assert code == 1
    assert "svc_b/tests/test_b.py" in rules(data)["partial-run"]
    status = run_genstamp(root, "status")
    assert "svc_b/tests/test_b.py" in status.stdout
    assert pytest_in(root / "svc_b").returncode == 0
    code, data, _ = verify(root)
    assert code == 0, data
    assert len(data["parts"]) == 2  # type: ignore[arg-type]
    status = json.loads(run_genstamp(root, "status", "--json").stdout)
    assert status["selection"]["complete"] is True
    # one run of both from the top takes neither suite's configuration: not theirs
    stamp(root)
    assert pytest_in(root, "svc_a", "svc_b").returncode == 0
    reason = rules(verify(root)[1])["partial-run"]
    assert "not svc_a/pytest.ini" in reason and "not svc_b/pytest.ini" in reason, reason
    # nor does one run of both under one suite's configuration (`-c svc_a/pytest.ini`): svc_b's
    # tests ran under another configuration than their own (a warning svc_b makes an error)
    stamp(root)
    assert pytest_in(root, "-c", "svc_a/pytest.ini", "svc_a", "svc_b").returncode == 0
    reason = rules(verify(root)[1])["partial-run"]
    assert "-c svc_a/pytest.ini" in reason, reason
    stamp(root)  # control: svc_a's own configuration, named, for svc_a alone
    assert pytest_in(root, "-c", "svc_a/pytest.ini", "svc_a").returncode == 0
    assert pytest_in(root / "svc_b").returncode == 0
    code, data, _ = verify(root)
    assert code == 0, data


@pytest.mark.parametrize("top", ["files", "marker"])
def test_suites_without_a_configuration_of_their_own_take_the_one_above(
    tmp_path: Path, top: str
) -> None:
    """`cd svc_a && pytest` finds the top's pytest.ini, as pytest looks for one in the folders
    above: its python_files, or its addopts' -m, are the suites' too (read with pytest's
    defaults, svc_a's check_*.py were no tests, and a run of svc_b alone was accepted; or a
    slow test the top's -m deselects was one that did not run). Its testpaths are the top's
    folder's, not theirs."""
    ini = {
        "files": "[pytest]\npython_files = check_*.py\ntestpaths = nowhere\n",
        "marker": '[pytest]\naddopts = -m "not slow"\nmarkers =\n    slow: slow\n',
    }[top]
    slow = "import pytest\n\n\n@pytest.mark.slow\ndef test_slow():\n    pass\n"
    name = "check" if top == "files" else "test"
    files = {
        "pyproject.toml": '[tool.genstamp]\nsuites = ["svc_a", "svc_b"]\n',
        "pytest.ini": ini,
        f"svc_a/tests/{name}_a.py": cases("a"),
        f"svc_a/tests/{name}_slow.py": slow,
        f"svc_b/tests/{name}_b.py": cases("b"),
    }
    root = make(tmp_path / "p", files)
    assert pytest_in(root / "svc_b").returncode == 0
    said = rules(verify(root)[1])["partial-run"]
    assert f"svc_a/tests/{name}_a.py" in said, said
    assert pytest_in(root / "svc_a").returncode == 0
    code, data, _ = verify(root)
    assert code == 0, data


def test_a_declared_suite_that_names_a_file_is_never_covered(tmp_path: Path) -> None:
    """`suites = ["svc_a", "svc_b/pytest.ini"]` (the configuration file written where its folder
    was meant): a suite of no test file, covered by any run, and svc_b's failing test never
    ran. The gate says the list names no folder, as for a path the tree does not hold."""
    files = {
        "pyproject.toml": '[tool.genstamp]\nsuites = ["svc_a", "svc_b/pytest.ini"]\n',
        "svc_a/pytest.ini": "[pytest]\n",
        "svc_a/tests/test_a.py": cases("a"),
        "svc_b/pytest.ini": "[pytest]\n",
        "svc_b/tests/test_b.py": cases("b", fail="b"),
    }
    root = make(tmp_path / "p", files)
    assert pytest_in(root / "svc_a").returncode == 0
    code, data, _ = verify(root)
    said = rules(data)["partial-run"]
    assert code == 1 and "suites names svc_b/pytest.ini, which is no folder" in said, data


def test_a_declared_suite_the_tree_holds_no_folder_for_is_never_covered(tmp_path: Path) -> None:
    """`git mv svc_b svc_beta`, the suites list left as it was: svc_b was an empty suite and
    svc_beta's tests in none, so a run of svc_a alone was the whole suite. The gate says the
    list names no folder; with the list mended, the runs of both are accepted."""
    files = {
        "pyproject.toml": '[tool.genstamp]\nsuites = ["svc_a", "svc_b"]\n',
        "svc_a/pytest.ini": "[pytest]\n",
        "svc_a/tests/test_a.py": cases("a"),
        "svc_b/pytest.ini": "[pytest]\n",
        "svc_b/tests/test_b.py": cases("b"),
    }
    root = make(tmp_path / "p", files)
    git(root, "mv", "svc_b", "svc_beta")
    commit_all(root, "svc_b is svc_beta")
    stamp(root)
    assert pytest_in(root / "svc_a").returncode == 0
    said = rules(verify(root)[1])["partial-run"]
    assert "suites names svc_b, which is no folder of the tree" in said, said
    # status counts no test file for it (it counted the folder it stands for)
    status = json.loads(genstamp_here("-C", root, "status", "--json")[1])
    by_root = {s["root"]: s["files"] for s in status["selection"]["suites"]}
    assert by_root["svc_b"] == 0, status
    (root / "pyproject.toml").write_text('[tool.genstamp]\nsuites = ["svc_a", "svc_beta"]\n')
    commit_all(root, "the list mended")
    stamp(root)
    for folder in ("svc_a", "svc_beta"):
        assert pytest_in(root / folder).returncode == 0
    code, data, _ = verify(root)
    assert code == 0, data


@pytest.mark.parametrize("own", [False, True], ids=["the-tops", "its-own"])
def test_a_suite_without_a_configuration_loads_the_conftests_above_it(
    tmp_path: Path, own: bool
) -> None:
    """`cd svc_b && pytest` with no configuration file there: pytest takes the top's
    pyproject.toml (8.1 and later: one without a pytest table too) for its rootdir, so the
    conftests from the top down load, and the top's `collect_ignore` leaves svc_b's legacy
    file out. Read from svc_b down only, the legacy file was in the suite, and every full run
    was refused. Control: with a configuration of its own, pytest loads none above it (and
    collects the legacy file, which passes here)."""
    legacy = cases("legacy") if own else cases("legacy", fail="legacy")
    files = {
        "pyproject.toml": '[tool.genstamp]\nsuites = ["svc_a", "svc_b"]\n',
        "conftest.py": 'collect_ignore = ["svc_b/tests/test_legacy.py"]\n',
        "svc_a/pytest.ini": "[pytest]\n",
        "svc_a/tests/test_a.py": cases("a"),
        "svc_b/tests/test_b.py": cases("b"),
        "svc_b/tests/test_legacy.py": legacy,
    }
    if own:
        files["svc_b/pytest.ini"] = "[pytest]\n"
    root = make(tmp_path / "p", files)
    for suite_folder in ("svc_a", "svc_b"):  # (the legacy test fails where pytest runs it)
        proc = pytest_in(root / suite_folder)
        assert proc.returncode == 0, proc.stdout
    code, data, _ = verify(root)
    assert code == 0, data


def test_a_subprojects_own_ini_without_suites_is_partial(tmp_path: Path) -> None:
    files = {
        "svc_a/pytest.ini": "[pytest]\n",
        "svc_a/tests/test_a.py": cases("a"),
        "svc_b/tests/test_b.py": cases("b"),
    }
    root = make(tmp_path / "p", files)
    assert pytest_in(root / "svc_a").returncode == 0
    assert "svc_b/tests/test_b.py" in rules(verify(root)[1])["partial-run"]


def test_pytest_split_groups_merge(tmp_path: Path) -> None:
    files = {f"tests/test_{i}.py": cases(f"x{i}", f"y{i}") for i in range(6)}
    root = make(tmp_path / "p", files)
    for group in ("1", "2"):
        assert pytest_in(root, "--splits", "3", "--group", group).returncode == 0
        code, data, _ = verify(root)
        assert code == 1
        assert "partial-run" in rules(data)
    assert pytest_in(root, "--splits", "3", "--group", "3").returncode == 0
    code, data, _ = verify(root)
    assert code == 0, data
    assert len(data["parts"]) == 3  # type: ignore[arg-type]
    assert data["tests"]["passed"] == 12  # type: ignore[index]
    # the same three, given as files
    parts = [p["evidence"] for p in data["parts"]]  # type: ignore[attr-defined,union-attr]
    args = [a for p in parts[1:] for a in ("--junit", p)]
    code, data, _ = verify(root, *args)
    assert code == 1  # two of three
    code, data, _ = verify(root, "--junit", parts[0], *args)
    assert code == 0, data


def test_two_parts_that_disagree_are_refused_naming_the_test(tmp_path: Path) -> None:
    flaky = (
        "import os\n\ndef test_flaky():\n    assert not os.environ.get('FLAKY')\n\n"
        "def test_other():\n    pass\n"
    )
    root = make(tmp_path / "p", {"tests/test_f.py": flaky, "tests/test_g.py": cases("g")})
    assert pytest_in(root, "tests/test_f.py").returncode == 0
    env_fail = subprocess_env(FLAKY="1")
    proc = run_pytest(root, "-p", "no:cacheprovider", "-k", "flaky or g", env=env_fail)
    assert proc.returncode == 1
    code, data, _ = verify(root)
    assert code == 1
    message = rules(data)["parts-disagree"]
    assert "tests/test_f.py::test_flaky" in message
    assert "passed in" in message and "failed in" in message
    assert "test_other" not in message
    # rerunning the one test adds a part: the disagreeing ones stay (as the remedy says)
    assert pytest_in(root, "tests/test_f.py::test_flaky").returncode == 0
    assert "parts-disagree" in rules(verify(root)[1])
    # the remedy: a new generation and the suite again
    stamp(root)
    assert pytest_in(root).returncode == 0
    assert verify(root)[0] == 0


@pytest.mark.parametrize("decided", ["xfail", "skip"])
def test_parts_whose_outcomes_differ_only_in_green_ones_agree(tmp_path: Path, decided: str) -> None:
    """A non-strict xfail that xfailed in the whole run and xpassed in a rerun of its file, or a
    test that a condition at run time skipped in one and let pass in the other: each outcome is
    green, which a run of the whole suite may give; the parts agree and cover the suite.
    Control: the same test failing in the rerun disagrees."""
    test = {
        "xfail": "@pytest.mark.xfail(strict=False)\ndef test_x():\n    assert os.getenv('UP')\n",
        "skip": "def test_x():\n    if not os.environ.get('UP'):\n        pytest.skip('down')\n",
    }[decided]
    files = {
        "tests/test_x.py": "import os\n\nimport pytest\n\n\n" + test,
        "tests/test_y.py": cases("y"),
    }
    root = make(tmp_path / "p", files)
    assert pytest_in(root).returncode == 0
    up = subprocess_env(UP="1")
    assert run_pytest(root, "-p", "no:cacheprovider", "tests/test_x.py", env=up).returncode == 0
    code, data, _ = verify(root)
    assert code == 0, data
    # control: a failure in a rerun of the file is a flaky test
    (root / "tests" / "test_x.py").write_text(
        files["tests/test_x.py"] + "\n\ndef test_z():\n    assert not os.environ.get('UP')\n"
    )
    commit_all(root)
    assert pytest_in(root).returncode == 0
    assert run_pytest(root, "-p", "no:cacheprovider", "tests/test_x.py", env=up).returncode == 1
    assert "parts-disagree" in rules(verify(root)[1])


WARNS = "import warnings\n\n\ndef test_warns():\n    warnings.warn('old', DeprecationWarning)\n"


@pytest.mark.parametrize(
    "lenient",
    [("-W", "ignore::DeprecationWarning"), ("-p", "no:warnings"), ("--noconftest",)],
    ids=["W-ignore", "no-warnings", "noconftest"],
)
@pytest.mark.parametrize("first", ["lenient", "selection"])
def test_a_part_run_under_its_own_options_counts_no_test_as_run(
    tmp_path: Path, lenient: tuple[str, ...], first: str
) -> None:
    """A run whose own options change what its tests mean (a warning the configuration makes
    an error let through, the project's conftest left out) is refused alone; merged with a
    run that left those tests out, its tests do not stand for runs of the suite's: the parts
    stay partial, in either order. The control: the same tests run as configured fail."""
    guard = (
        "import pytest\n\n\n@pytest.fixture(autouse=True)\ndef guard(request):\n"
        "    yield\n    assert 'warns' not in request.node.name\n"
    )
    files = {
        "tests/test_a.py": cases("a1"),
        "tests/test_w.py": WARNS,
        "pytest.ini": "[pytest]\nfilterwarnings =\n    error::DeprecationWarning\n",
    }
    if lenient == ("--noconftest",):
        files["tests/test_w.py"] = cases("warns")
        files["tests/conftest.py"] = guard
    root = make(tmp_path / "p", files)
    runs = [(*lenient, "tests/test_w.py"), ("-k", "not warns")]
    for args in runs if first == "lenient" else runs[::-1]:
        assert pytest_in(root, *args).returncode == 0
    code, data, _ = verify(root)
    assert code == 1 and list(rules(data)) == ["partial-run"], data
    assert "tests/test_w.py::test_warns" in rules(data)["partial-run"]
    assert pytest_in(root, "tests/test_w.py").returncode == 1  # as configured: it fails


@pytest.mark.parametrize("xdist", [(), ("-n", "2")], ids=["serial", "xdist"])
@pytest.mark.parametrize("rootdir", ["..", "../sibling"], ids=["above", "beside"])
def test_parts_run_with_the_rootdir_outside_the_tree_merge(
    tmp_path: Path, rootdir: str, xdist: tuple[str, ...]
) -> None:
    """pytest's rootdir above or beside the work tree gives node ids of another shape
    (``p/tests/test_a.py::test_a1``): the evidence names each test by its tree path all the
    same, so two parts that together run the suite merge into a complete run."""
    root = make(tmp_path / "p", SIMPLE)
    (tmp_path / "sibling").mkdir()
    assert pytest_in(root, *xdist, "--rootdir", rootdir, "-k", "a1 or b1").returncode == 0
    assert pytest_in(root, "-k", "not (a1 or b1)").returncode == 0
    code, data, _ = verify(root)
    assert code == 0, data


def test_xdist_inside_a_part(tmp_path: Path) -> None:
    files = {f"tests/test_{i}.py": cases(f"x{i}") for i in range(4)}
    files["tests/more/test_m.py"] = cases("m")
    root = make(tmp_path / "p", files)
    assert (
        pytest_in(root, "-n", "2", "tests", "--deselect", "tests/test_0.py::test_x0").returncode
        == 0
    )
    code, data, _ = verify(root)
    assert code == 1
    assert "tests/test_0.py::test_x0" in rules(data)["partial-run"]
    assert pytest_in(root, "-n", "2", "tests/test_0.py").returncode == 0
    code, data, _ = verify(root)
    assert code == 0, data


@pytest.mark.parametrize("xdist", [(), ("-n", "2")], ids=["serial", "xdist"])
def test_a_folder_its_conftest_skips_whole_ran_skipped(
    tmp_path: Path, xdist: tuple[str, ...]
) -> None:
    """`pytest.importorskip` of an optional dependency in a folder's conftest.py skips the
    folder's files as a module-level skip skips one: the run is complete. A control: the same
    folder left out by `--ignore` is not."""
    files = {**SIMPLE, "tests/optional/test_frame.py": cases("frame", "frame2")}
    files["tests/optional/conftest.py"] = (
        "import pytest\n\npytest.importorskip('a_dependency_not_installed')\n"
    )
    files["tests/optional/deeper/test_more.py"] = cases("more")
    root = make(tmp_path / "p", files)
    assert pytest_in(root, *xdist).returncode == 0
    code, data, _ = verify(root)
    assert (code, rules(data)) == (0, {}), data
    # a later run of the same tests, the folder left out: the whole run is a part of its own
    # (it ran the same tests, but looked there), which still covers the folder
    assert pytest_in(root, *xdist, "--ignore", "tests/optional").returncode == 0
    code, data, _ = verify(root)
    assert (code, rules(data)) == (0, {}), data
    stamp(root)  # a new generation: no part of the whole run to merge with
    assert pytest_in(root, *xdist, "--ignore", "tests/optional").returncode == 0
    code, data, _ = verify(root)
    assert code == 1 and "tests/optional/test_frame.py" in rules(data)["partial-run"], data


@pytest.mark.parametrize(
    "args",
    [("--collect-only",), ("--fixtures",), ("--setup-plan",), ("-k", "nothing_matches_this")],
)
def test_a_run_that_executes_nothing_adds_nothing_to_a_green_one(
    tmp_path: Path, args: tuple[str, ...]
) -> None:
    """Looking at the suite (collecting it, listing fixtures, a ``-k`` that matches nothing)
    after a complete green run in the same generation leaves that run's verdict standing;
    alone, it is refused (the control)."""
    root = make(tmp_path / "p", SIMPLE)
    pytest_in(root, *args)
    code, data, _ = verify(root)
    assert code == 1 and "no-tests" in rules(data), data
    assert pytest_in(root).returncode == 0
    pytest_in(root, *args)
    code, data, _ = verify(root)
    assert code == 0, data
    assert data["tests"]["passed"] == 4  # type: ignore[index]


BREAKS = "import os\n\nif os.environ.get('BREAK'):\n    raise ImportError('broken')\n\n\n"


@pytest.mark.parametrize(
    ("failing", "later"),
    [
        # the run stops at the collection error: it ran nothing
        ((), ("--collect-only",)),
        ((), ("tests/test_a.py",)),
        # it goes on past it: it ran the same tests as the later one
        (("--continue-on-collection-errors",), ("tests/test_a.py", "tests/deep")),
        (("--continue-on-collection-errors", "-n", "2"), ("tests/test_a.py", "tests/deep")),
    ],
)
def test_a_collection_error_stands_until_a_run_collects_that_file_again(
    tmp_path: Path, failing: tuple[str, ...], later: tuple[str, ...]
) -> None:
    """A run in which a test file failed to be collected is red, and a later run that ran the
    same tests without looking at that file (or executed nothing) does not take its place: the
    earlier complete green run does not come back. A later run that collects the file again
    and runs the tests does (the control)."""
    files = dict(SIMPLE, **{"tests/test_b.py": BREAKS + cases("b1")})
    root = make(tmp_path / "p", files)
    assert pytest_in(root).returncode == 0
    assert verify(root)[0] == 0
    proc = run_pytest(root, "-p", "no:cacheprovider", *failing, env=subprocess_env(BREAK="1"))
    assert proc.returncode in (1, 2), proc.stdout
    assert "tests-failed" in rules(verify(root)[1])
    pytest_in(root, *later)
    code, data, _ = verify(root)
    assert code == 1 and "tests-failed" in rules(data), data
    # the control: the file collected again, with the tests the failed run ran
    assert pytest_in(root, "tests/test_b.py", "tests/test_a.py", "tests/deep").returncode == 0
    code, data, _ = verify(root)
    assert code == 0, data


@pytest.mark.parametrize("flag", ["--setup-only", "--setup-plan"])
def test_tests_set_up_and_never_called_did_not_run(tmp_path: Path, flag: str) -> None:
    """``--setup-only`` sets every test up and calls none: merged with a part that ran one
    file, the others are still left out; the run that calls them completes the suite."""
    root = make(tmp_path / "p", SIMPLE)
    assert pytest_in(root, "tests/test_a.py").returncode == 0
    pytest_in(root, flag)
    code, data, _ = verify(root)
    assert code == 1, data
    assert "tests/test_b.py::test_b1" in rules(data)["partial-run"]
    assert "no-tests" not in rules(data)
    assert pytest_in(root, "tests/test_b.py", "tests/deep").returncode == 0
    assert verify(root)[0] == 0


@pytest.mark.parametrize("declared", [True, False], ids=["a-declared-suite", "not-declared"])
def test_a_declared_suite_that_is_a_submodule_runs_from_its_folder(
    tmp_path: Path, declared: bool
) -> None:
    """`suites = ["svc_a", "ext"]`, ext a submodule with its own pytest.ini, each suite run
    from its folder (`cd ext && pytest`): the run found the submodule's own repository,
    said no-stamp there, and wrote its evidence into the submodule's git dir, so the
    checkout's gate never saw it. It is a part of the checkout's suite. Control: a
    submodule the checkout does not declare a suite is its own repository's run, no part."""
    allow = ("-c", "protocol.file.allow=always")
    sub = init_repo(tmp_path / "subsrc")
    (sub / "pytest.ini").write_text("[pytest]\ntestpaths = tests\n")
    (sub / "tests").mkdir()
    (sub / "tests" / "test_sub.py").write_text(cases("s1"))
    commit_all(sub)
    suites = '["svc_a", "ext"]' if declared else '["svc_a"]'
    root = make(
        tmp_path / "p",
        {
            "pyproject.toml": f"[tool.genstamp]\nsuites = {suites}\n",
            "svc_a/pytest.ini": "[pytest]\ntestpaths = tests\n",
            "svc_a/tests/test_ok.py": cases("a1"),
        },
    )
    git(root, *allow, "submodule", "add", "-q", str(sub), "ext")
    commit_all(root)
    stamp(root)
    assert pytest_in(root / "svc_a").returncode == 0
    assert pytest_in(root / "ext").returncode == 0
    code, data, _ = verify(root)
    assert code == 0, data  # (not declared: svc_a is the whole suite)
    assert data["selection"]["suites"][-1]["files"] == 1  # type: ignore[index]
    merged = len(data["parts"])  # type: ignore[arg-type]
    assert merged == (2 if declared else 1), data


def test_test_files_of_a_submodule_are_in_the_suite(tmp_path: Path) -> None:
    """pytest collects a checked-out submodule like any folder (a nested one too): its test
    files are in the suite, at the commit the tree records, and a run of ``tests/`` alone
    leaves them out."""
    allow = ("-c", "protocol.file.allow=always")
    inner = init_repo(tmp_path / "innersrc")
    (inner / "test_inner.py").write_text(cases("i1"))
    commit_all(inner)
    lib = init_repo(tmp_path / "libsrc")
    (lib / "tests").mkdir()
    (lib / "tests" / "test_lib.py").write_text(cases("l1"))
    (lib / "tests" / "helper.py").write_text("")
    git(lib, *allow, "submodule", "add", "-q", str(inner), "inner")
    commit_all(lib)
    root = init_repo(tmp_path / "p")
    (root / "tests").mkdir()
    (root / "tests" / "test_a.py").write_text(cases("a1"))
    git(root, *allow, "submodule", "add", "-q", str(lib), "lib")
    git(root, *allow, "submodule", "update", "-q", "--init", "--recursive")
    commit_all(root)
    stamp(root)
    assert pytest_in(root, "tests").returncode == 0
    code, data, _ = verify(root)
    assert code == 1
    assert "2 files: lib/inner/test_inner.py, lib/tests/test_lib.py" in rules(data)["partial-run"]
    # the submodule taken away after the run: its files are still the tree's suite
    git(root, "submodule", "deinit", "-q", "-f", "lib")
    code, data, _ = verify(root)
    assert code == 1
    assert "2 files: lib/inner/test_inner.py, lib/tests/test_lib.py" in rules(data)["partial-run"]
    git(root, *allow, "submodule", "update", "-q", "--init", "--recursive")
    assert pytest_in(root).returncode == 0
    code, data, _ = verify(root)
    assert code == 0, data
    assert data["selection"]["suites"][0]["files"] == 3  # type: ignore[index]
    # the submodule's folder named first: the run is still this checkout's (it was bound to
    # the submodule's repository, and this one had no evidence)
    stamp(root)
    assert pytest_in(root, "lib", "tests").returncode == 0
    code, data, _ = verify(root)
    assert code == 0, data
    # the suite's own testpaths leave the submodule out
    (root / "pytest.ini").write_text("[pytest]\ntestpaths = tests\n")
    commit_all(root)
    stamp(root)
    assert pytest_in(root, "tests").returncode == 0
    code, data, _ = verify(root)
    assert code == 0, data


@pytest.mark.parametrize(
    ("ini", "folder", "part"),
    [
        # pytest warns that testpaths found nothing, and searches the folder instead
        ("[pytest]\ntestpaths = test\n", "tests", "tests/test_a.py"),
        # under --pyargs testpaths are module names
        ("[pytest]\naddopts = --pyargs\ntestpaths = pkg.tests\n", "pkg/tests", "pkg.tests.test_a"),
        # and so are the words of addopts (the run's own arguments are added to them)
        (
            "[pytest]\naddopts = --pyargs pkg.tests\n",
            "pkg/tests",
            "--ignore=pkg/tests/test_b.py",
        ),
        (  # a package the import finds in a pythonpath folder
            "[pytest]\naddopts = --pyargs pkg.tests\npythonpath = lib\n",
            "lib/pkg/tests",
            "--ignore=lib/pkg/tests/test_b.py",
        ),
    ],
    ids=["testpaths-naming-nothing", "pyargs", "pyargs-in-addopts", "pyargs-in-addopts-lib"],
)
def test_testpaths_pytest_resolves_other_than_as_folders(
    tmp_path: Path, ini: str, folder: str, part: str
) -> None:
    files = {
        "pytest.ini": ini,
        f"{folder.removesuffix('/tests')}/__init__.py": "",
        f"{folder}/__init__.py": "",
        f"{folder}/test_a.py": cases("a1"),
        f"{folder}/test_b.py": cases("b1"),
    }
    root = make(tmp_path / "p", files)
    assert pytest_in(root, part).returncode == 0
    code, data, _ = verify(root)
    assert code == 1
    assert f"1 file: {folder}/test_b.py" in rules(data)["partial-run"]
    assert pytest_in(root).returncode == 0
    code, data, _ = verify(root)
    assert code == 0, data
    assert data["selection"]["suites"][0]["files"] == 2  # type: ignore[index]


def test_doctest_files_the_configuration_collects_are_in_the_suite(tmp_path: Path) -> None:
    """pytest's doctest plugin collects ``test*.txt`` by default, and every module with the
    configuration's ``--doctest-modules``: a run that leaves them out is partial."""
    doc = '"""\n>>> double(2)\n4\n"""\n\ndef double(x):\n    return 2 * x\n'
    root = make(
        tmp_path / "p",
        {
            "pytest.ini": "[pytest]\naddopts = --doctest-modules\n",
            "tests/test_a.py": cases("a1"),
            "tests/test_usage.txt": ">>> 1 + 1\n2\n",
            "src/calc.py": doc,
        },
    )
    assert pytest_in(root, "tests/test_a.py").returncode == 0
    code, data, _ = verify(root)
    assert code == 1
    assert "2 files: src/calc.py, tests/test_usage.txt" in rules(data)["partial-run"]
    assert pytest_in(root).returncode == 0
    code, data, _ = verify(root)
    assert code == 0, data
    assert data["selection"]["suites"][0]["files"] == 3  # type: ignore[index]


@pytest.mark.parametrize("how", ["ignored", "tracked", "linked"])
def test_a_doctest_text_file_is_code_the_tests_ran(tmp_path: Path, how: str) -> None:
    """A doctest text file pytest collects runs its examples: a git-ignored one (a local
    scratch file a clean clone lacks, whose examples may patch the package) is ignored-code;
    one the tree holds is the suite's, and accepted (through a tracked link too)."""
    ignored = how == "ignored"
    files = {"tests/test_a.py": cases("a1"), "tests/test_local.txt": ">>> 1 + 1\n2\n"}
    if ignored:
        files[".gitignore"] = "__pycache__/\ntests/test_local.txt\n"
    if how == "linked":
        files = {"tests/test_a.py": cases("a1"), "guide.txt": ">>> 1 + 1\n2\n"}
        (tmp_path / "p" / "tests").mkdir(parents=True)
        (tmp_path / "p" / "tests" / "test_local.txt").symlink_to("../guide.txt")
    root = make(tmp_path / "p", files)
    assert pytest_in(root).returncode == 0
    code, data, _ = verify(root)
    if ignored:
        assert (code, list(rules(data))) == (1, ["ignored-code"]), data
        assert "tests/test_local.txt" in rules(data)["ignored-code"]
    else:
        assert code == 0, data


def test_a_folder_reached_through_a_tracked_link_is_in_the_suite(tmp_path: Path) -> None:
    """pytest enters a folder through a symbolic link the tree holds (``testpaths`` naming
    the link, or a link inside a test folder) and names its tests by the link's path: those
    files are the suite's; a link out of the tree adds nothing."""
    root = make(
        tmp_path / "p",
        {
            "pytest.ini": "[pytest]\ntestpaths = tests\n",
            "qa/test_q.py": cases("q1"),
            "qa/more/test_m.py": cases("m1"),
            "shared/test_s.py": cases("s1"),
            "other/test_o.py": cases("o1"),
        },
    )
    (root / "tests").symlink_to("qa")
    (root / "qa" / "shared").symlink_to("../shared")
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "data.txt").write_text("")
    (root / "qa" / "away").symlink_to(tmp_path / "outside")
    (root / "qa" / "test_link.py").symlink_to("../other/test_o.py")
    commit_all(root)
    stamp(root)
    assert pytest_in(root, "tests/test_q.py").returncode == 0
    code, data, _ = verify(root)
    assert code == 1
    message = rules(data)["partial-run"]
    assert "3 files: tests/more/test_m.py, tests/shared/test_s.py, tests/test_link.py" in message
    run = pytest_in(root)
    assert run.returncode == 0, run.stdout
    code, data, _ = verify(root)
    assert code == 0, data
    assert data["selection"]["suites"][0]["files"] == 4  # type: ignore[index]


@pytest.mark.parametrize("dangling", [True, False], ids=["dangling", "control"])
def test_a_link_named_like_a_test_file_that_leads_to_no_file_is_no_file_of_the_suite(
    tmp_path: Path, dangling: bool
) -> None:
    """pytest collects a link as what it leads to (``DirEntry.is_file()``): links named like
    test files that lead to nothing (in the tree, or out of it) are not in the suite (A25 14: a
    complete green run was refused as partial-run, and so was every push). The control: the
    link in the tree leads to a test file, which is the suite's."""
    root = make(tmp_path / "p", {"pytest.ini": "[pytest]\ntestpaths = tests\n", **SIMPLE})
    if not dangling:
        (root / "tests" / "near.py").write_text(cases("n1"))
    (root / "tests" / "test_near.py").symlink_to("near.py")
    (root / "tests" / "test_far.py").symlink_to(tmp_path / "away" / "test_far.py")
    commit_all(root)
    stamp(root)
    run = pytest_in(root, "tests")  # a run naming its paths: the forecast lists the suite too
    assert run.returncode == 0, run.stdout
    assert "not collected" not in run.stdout, run.stdout
    code, data, _ = verify(root)
    assert code == 0, data
    files = data["selection"]["suites"][0]["files"]  # type: ignore[index]
    assert files == (3 if dangling else 4), data


@pytest.mark.parametrize("late", [True, False], ids=["first-part-refuted", "control"])
def test_a_part_refuted_at_its_end_is_not_made_good_by_the_parts_after_it(
    tmp_path: Path, late: bool
) -> None:
    """The first part's terminal summary fails after its evidence is bound green: its tree is
    recorded as failed. A second part, run after that, completed the suite, and the merge was
    taken as newer than the failure (E25 24: accepted, and pushed). The oldest part counts.
    The control: the first part ends well, and the two parts merge."""
    summary = "import os\n\ndef pytest_terminal_summary(terminalreporter):\n"
    summary += "    if os.environ.get('LATE'):\n        raise RuntimeError('late')\n"
    root = make(tmp_path / "p", {**SIMPLE, "conftest.py": summary})
    stamp(root)
    env = subprocess_env(LATE="1" if late else "")
    first = run_pytest(root, "-p", "no:cacheprovider", "tests/test_a.py", env=env)
    assert (first.returncode != 0) is late, first.stdout + first.stderr
    assert pytest_in(root, "tests/test_b.py", "tests/deep").returncode == 0
    code, data, _ = verify(root)
    if late:
        assert (code, list(rules(data))) == (1, ["tests-failed"]), data
    else:
        assert code == 0, data


def test_parts_written_in_place_by_junitxml_at_the_evidence_path_merge(tmp_path: Path) -> None:
    """pytest's ``--junitxml`` naming the configured evidence path writes that file in place
    on every run: each run's kept part must keep its own bytes."""
    files = {"pyproject.toml": '[tool.genstamp]\nevidence = "junit.xml"\n', **SIMPLE}
    files[".gitignore"] = "junit.xml\n"
    root = make(tmp_path / "p", files)
    for part in ("tests/test_a.py", "tests/test_b.py"):
        assert pytest_in(root, part, "--junitxml=junit.xml").returncode == 0
    code, data, _ = verify(root)
    assert code == 1 and "tests/deep/test_c.py" in rules(data)["partial-run"], data
    assert "tests/test_a.py" not in rules(data)["partial-run"]
    assert pytest_in(root, "tests/deep", "--junitxml=junit.xml").returncode == 0
    code, data, _ = verify(root)
    assert code == 0, data
    assert len(data["parts"]) == 3  # type: ignore[arg-type]


def test_allow_partial_says_so(tmp_path: Path) -> None:
    files = {"pyproject.toml": "[tool.genstamp]\nallow-partial = true\n", **SIMPLE}
    root = make(tmp_path / "p", files)
    assert pytest_in(root, "tests/deep").returncode == 0
    proc = run_genstamp(root, "verify")
    assert proc.returncode == 0
    assert "PARTIAL" in proc.stderr and "tests/test_a.py, tests/test_b.py" in proc.stderr
    _, data, _ = verify(root)
    assert data["selection"]["accepted_partial"] is True  # type: ignore[index]
    assert data["selection"]["left_out"]  # type: ignore[index]


def test_allow_partial_counts_only_where_the_judged_tree_holds_it(tmp_path: Path) -> None:
    """The gate's settings are the judged tree's: an ``allow-partial`` in a pyproject.toml
    the commit does not hold (untracked, ignored through info/exclude) allows nothing for that
    commit; each commit of a push is judged by its own file."""
    root = make(tmp_path / "p", {"setup.cfg": "[metadata]\nname = p\n", **SIMPLE})
    assert pytest_in(root).returncode == 0
    assert verify(root, "--rev", "HEAD")[0] == 0  # remembered
    (root / "pyproject.toml").write_text("[tool.genstamp]\nallow-partial = true\n")
    (root / ".git" / "info").mkdir(exist_ok=True)
    (root / ".git" / "info" / "exclude").write_text("pyproject.toml\n")
    (root / "tests" / "test_a.py").write_text(cases("a1", "a2", "a3"))
    commit_all(root, "a third test")
    stamp(root)
    assert pytest_in(root, "tests/deep").returncode == 0
    code, data, _ = verify(root, "--rev", "HEAD")
    assert code == 1 and "partial-run" in rules(data), data
    (root / ".git" / "info" / "exclude").write_text("")
    commit_all(root, "allow partial runs")
    stamp(root)
    assert pytest_in(root, "tests/deep").returncode == 0
    assert verify(root, "--rev", "HEAD")[0] == 0
    assert verify(root, "--rev", "HEAD~2", "--rev", "HEAD")[0] == 0


@pytest.mark.parametrize("hidden", [True, False], ids=["skip-worktree", "committed"])
def test_the_suite_folders_are_the_tested_trees_own(tmp_path: Path, hidden: bool) -> None:
    """``[tool.genstamp] suites`` narrows what must run only where the tested tree declares
    it: a local edit hidden by ``--skip-worktree`` (the tree keeps the committed file) leaves
    the whole repository the suite. Control: the same declaration committed."""
    files = {
        "pyproject.toml": "[project]\nname = 'p'\nversion = '0'\n",
        "svc_a/tests/test_a.py": cases("a1"),
        "svc_b/tests/test_b.py": cases("b1"),
    }
    root = make(tmp_path / "p", files)
    narrowed = files["pyproject.toml"] + '[tool.genstamp]\nsuites = ["svc_a"]\n'
    if hidden:
        git(root, "update-index", "--skip-worktree", "pyproject.toml")
        (root / "pyproject.toml").write_text(narrowed)
        assert git(root, "status", "--porcelain") == ""
    else:
        (root / "pyproject.toml").write_text(narrowed)
        commit_all(root, "one suite")
        stamp(root)
    assert pytest_in(root, "svc_a").returncode == 0
    code, data, _ = verify(root, "--rev", "HEAD")
    if hidden:
        assert code == 1 and "svc_b/tests/test_b.py" in rules(data)["partial-run"], data
    else:
        assert code == 0, data


@pytest.mark.parametrize(
    ("first", "report"), [("green", ()), ("red", ()), ("green", ("--junitxml=report.xml",))]
)
def test_a_run_of_an_edit_since_undone_does_not_hide_the_trees_own(
    tmp_path: Path, first: str, report: tuple[str, ...]
) -> None:
    """A complete run of the tree, then one test file run on an edit that is undone by hand
    (the same generation, the same tree again): the kept run of this very tree speaks for it,
    as it was, green or red; also when each run wrote its report into the work tree (the
    later run's report is not the one the kept run tested: the gate leaves it out of both)."""
    files = {**SIMPLE, "tests/test_b.py": cases("b1", fail="b1" if first == "red" else "")}
    root = make(tmp_path / "p", files)
    pytest_in(root, *report)
    test_a = root / "tests" / "test_a.py"
    test_a.write_text(cases("a1", "a2", "a3"))
    assert pytest_in(root, *report, "tests/test_a.py").returncode == 0
    git(root, "checkout", "-q", "--", "tests/test_a.py")
    code, data, _ = verify(root, "--rev", "HEAD")
    if first == "green":
        assert code == 0, data
    else:
        assert code == 1 and list(rules(data)) == ["tests-failed"], data


@pytest.mark.parametrize("where", ["tests", "tests/unit"])
@pytest.mark.parametrize("flag", ["--assume-unchanged", "--skip-worktree", "none"])
def test_a_conftest_deleted_where_git_does_not_look(tmp_path: Path, flag: str, where: str) -> None:
    """The project's conftest.py deleted while the index tells git not to look at it: git
    sees no change and no test loads it, but its checks never ran. Refused, and so is the
    commit (``--rev``, a push: judged as the run found the hidden changes), also where the
    tests run lie in a folder below it (the run recorded no conftest of a folder it loaded
    no module from, and the commit was accepted). Control: the same flag on a conftest left
    in place."""
    check = "import pytest\n\n\n@pytest.fixture(autouse=True)\ndef guard():\n    yield\n"
    files = {f"{where}/{name}": text for name, text in {"test_a.py": cases("a")}.items()}
    root = make(tmp_path / "p", {**files, "tests/conftest.py": check})
    if flag != "none":
        git(root, "update-index", flag, "tests/conftest.py")
        (root / "tests" / "conftest.py").unlink()
    else:
        git(root, "update-index", "--assume-unchanged", "tests/conftest.py")
    assert pytest_in(root).returncode == 0
    for rev in ((), ("--rev", "HEAD")):
        code, data, _ = verify(root, *rev)
        if flag != "none":
            assert code == 1 and "tests/conftest.py" in rules(data)["hidden-change"], data
        else:
            assert code == 0, data


@pytest.mark.parametrize("left_out", ["pyproject.toml", "tests/conftest.py", "docs"])
def test_what_a_sparse_checkout_leaves_out_of_a_run_of_the_suite(
    tmp_path: Path, left_out: str
) -> None:
    """A sparse checkout (``git sparse-checkout set --no-cone``) that leaves out the suite's
    configuration (its filters make a warning an error) or a conftest of the tested folder:
    pytest runs without it and passes; a clean clone fails. It was accepted, the file being no
    change where the checkout is sparse. Refused as a hidden change, the commit too. Control:
    a folder no run reads left out (docs)."""
    files = {
        "pyproject.toml": '[tool.pytest.ini_options]\nfilterwarnings = ["error"]\n',
        "tests/conftest.py": "import pytest\n\n\n@pytest.fixture(autouse=True)\ndef g():\n"
        "    yield\n",
        "tests/test_w.py": "import warnings\n\n\ndef test_w():\n"
        "    warnings.warn('old', DeprecationWarning)\n",
        "docs/index.md": "# docs\n",
    }
    if left_out != "pyproject.toml":  # a run with the configuration fails on the warning
        files["tests/test_w.py"] = "def test_w():\n    pass\n"
    root = make(tmp_path / "p", files)
    git(root, "sparse-checkout", "set", "--no-cone", "/*", f"!/{left_out}")
    assert not (root / left_out).exists()
    assert pytest_in(root).returncode == 0
    for rev in ((), ("--rev", "HEAD")):
        code, data, _ = verify(root, *rev)
        if left_out == "docs":
            assert code == 0, data
        else:
            assert code == 1 and f"{left_out} (--skip-worktree)" in rules(data)["hidden-change"]


def test_a_test_file_a_sparse_checkout_leaves_out_is_named_with_its_remedy(
    tmp_path: Path,
) -> None:
    """A sparse checkout that leaves out a test file of the suite: partial, as documented; the
    remedy said "run what was left out", which pytest cannot (the file is not there). It names
    the sparse checkout and how to bring the file back."""
    root = make(tmp_path / "p", SIMPLE)
    git(root, "sparse-checkout", "set", "--no-cone", "/*", "!/tests/test_b.py")
    assert not (root / "tests" / "test_b.py").exists()
    assert pytest_in(root).returncode == 0
    code, data, _ = verify(root)
    said = rules(data)["partial-run"]
    assert code == 1 and "tests/test_b.py outside the sparse checkout" in said, data
    assert "git sparse-checkout add" in said, said
    git(root, "sparse-checkout", "disable")  # the control: the file back, a run of all of it
    stamp(root)
    assert pytest_in(root).returncode == 0
    code, data, _ = verify(root)
    assert code == 0, data


@pytest.mark.parametrize("config", ["pytest.ini", "svc_a/pytest.ini"])
def test_a_declared_suites_configuration_a_sparse_checkout_leaves_out(
    tmp_path: Path, config: str
) -> None:
    """A declared suite (``svc_a``) whose pytest configuration (its own, or the nearest above
    it) a sparse checkout leaves out: the run in its folder went without its filters. The gate
    kept only the configuration files of the suite's own folder (one above it was dropped),
    and the run's forecast asked only its rootdir's (its own was not asked): both refuse, as a
    hidden change."""
    files = {
        "pyproject.toml": '[tool.genstamp]\nsuites = ["svc_a"]\n',
        config: "[pytest]\nfilterwarnings =\n    error\n",
        "svc_a/tests/test_w.py": "import warnings\n\n\ndef test_w():\n"
        "    warnings.warn('old', DeprecationWarning)\n",
    }
    root = make(tmp_path / "p", files)
    git(root, "sparse-checkout", "set", "--no-cone", "/*", f"!/{config}")
    proc = pytest_in(root / "svc_a")
    assert proc.returncode == 0, proc.stdout
    assert f"will refuse: hidden-change: {config} (--skip-worktree)" in proc.stdout, proc.stdout
    code, data, _ = verify(root)
    assert code == 1 and f"{config} (--skip-worktree)" in rules(data)["hidden-change"], data


def test_a_tracked_file_the_run_rewrites_is_named_with_its_remedy(tmp_path: Path) -> None:
    """A run that rewrites a committed snapshot (syrupy's --snapshot-update, pytest-regressions'
    --force-regen) moves the tree: refused, as before, but the advice was to put the file in
    .gitignore, which changes nothing for a tracked file (and untracking snapshots makes their
    tests check nothing). It names the tracked files and says to commit what was written."""
    update = (
        "from pathlib import Path\n\n\ndef test_snapshot():\n"
        "    Path(__file__).with_name('snap.ambr').write_text('updated\\n')\n"
    )
    root = make(tmp_path / "p", {"tests/snap.ambr": "old\n", "tests/test_s.py": update})
    assert pytest_in(root).returncode == 0
    code, data, _ = verify(root)
    said = rules(data)["tree-moved"]
    assert code == 1 and "files git tracks changed while the tests ran: tests/snap.ambr" in said
    assert "a file the run rewrote" in said, said
    assert "commit what it wrote" in said, said


def test_a_report_written_after_the_tests_end_is_named_with_its_remedy(tmp_path: Path) -> None:
    """A report a plugin writes after the tree at the end is taken (pytest-cov's coverage.xml,
    in pytest_terminal_summary), untracked and not ignored: the work tree is another tree each
    run, and the remedy said "rerun", which writes it anew. It says to have git ignore it (the
    untracked file was taken for a tracked one: the index the gate asked held what the walk of
    the work tree had added to it)."""
    writes = (
        "import time\n\n\ndef pytest_terminal_summary(terminalreporter):\n"
        "    open('coverage.xml', 'w').write(str(time.time_ns()))\n"
    )
    root = make(tmp_path / "p", {**SIMPLE, "tests/conftest.py": writes})
    for n in range(3):  # (the first run's tree does not hold it: a file made since, as any)
        assert pytest_in(root).returncode == 0
        code, data, _ = verify(root)
        said = rules(data)["tree-mismatch"]
        assert code == 1 and said.endswith("differs in coverage.xml") is (n == 0), said
        if n:
            assert "differs in coverage.xml (only files git does not track" in said
            assert "have git ignore them (.gitignore)" in said, said


def test_a_file_removed_since_the_run_is_named_as_removed(tmp_path: Path) -> None:
    """A module the tests did not load, removed since the run (`git rm`, a rebase that dropped
    its commit): refused, and named as removed, not as a report written since (to be ignored)
    or a file beside the commit (to be committed or removed), in the work tree and in the
    commit judged."""
    root = make(tmp_path / "p", {**SIMPLE, "pkg/h.py": "X = 1\n"})
    assert pytest_in(root).returncode == 0
    git(root, "rm", "-q", "pkg/h.py")
    git(root, "commit", "-qm", "h gone")
    for args in [(), ("--rev", "HEAD")]:
        code, data, _ = verify(root, *args)
        said = rules(data)["tree-mismatch"]
        assert code == 1 and "differs in pkg/h.py (only files the tested tree held that" in said
        assert "gone since the run" in said and "ignore" not in said, said


def test_xdists_own_collection_failure_is_answered_by_a_clean_collection(tmp_path: Path) -> None:
    """xdist's workers collect different tests (ids made per worker): xdist reports it as a
    collector `gw1` that failed, a name no later run collects, so that red part stayed in
    every merge of the tree: a green part after a complete run was refused. A run that
    collects cleanly answers it, as it answers a folder's failure."""
    per_worker = (
        "import os\n\nimport pytest\n\n\n"
        "@pytest.mark.parametrize('w', [os.environ.get('PYTEST_XDIST_WORKER', 'main')])\n"
        "def test_w(w):\n    pass\n"
    )
    root = make(tmp_path / "p", {**SIMPLE, "tests/test_w.py": per_worker})
    proc = pytest_in(root, "-n", "2")
    assert proc.returncode != 0 and "Different tests were collected" in proc.stdout
    assert pytest_in(root).returncode == 0  # the whole suite, green
    assert pytest_in(root, "tests/test_a.py").returncode == 0  # a green part after it
    code, data, _ = verify(root)
    assert code == 0, data


def test_subprojects_run_each_in_its_folder_are_no_run_of_an_undeclared_suite(
    tmp_path: Path,
) -> None:
    """A monorepo that declares no suites, its top holding no pytest configuration and each
    subproject its own (a `pythonpath` a plain `pytest` at the top does not have): each run
    in its folder took its settings for the suite's, as for the one project kept in a
    subfolder, and the two parts were accepted; a clean `pytest` at the top fails. Refused,
    the forecast too, saying so."""
    project = '[tool.pytest.ini_options]\npythonpath = ["."]\n'
    files = {
        f"svc_{n}/{rel}": text
        for n in ("a", "b")
        for rel, text in {
            "pyproject.toml": project,
            f"pkg{n}/__init__.py": "X = 1\n",
            f"tests/test_{n}.py": f"from pkg{n} import X\n\n\ndef test_{n}():\n    assert X\n",
        }.items()
    }
    root = make(tmp_path / "p", files)
    for n in ("a", "b"):
        proc = pytest_in(root / f"svc_{n}")
        assert proc.returncode == 0, proc.stdout
        assert f"the configuration svc_{n}/pyproject.toml, not pytest's defaults" in proc.stdout
    code, data, _ = verify(root)
    assert code == 1 and "not pytest's defaults" in rules(data)["partial-run"], data


def test_one_project_in_a_subfolder_beside_an_ignored_scratch_configuration(
    tmp_path: Path,
) -> None:
    """The one project kept in a subfolder (its own configuration, none at the top), run in
    its folder, beside a scratch folder git ignores that holds a pytest.ini: that folder is no
    subproject of the tree (the run was refused as a monorepo's subproject's)."""
    files = {
        ".gitignore": "scratch/\n",
        "sub/pyproject.toml": '[tool.pytest.ini_options]\ntestpaths = ["tests"]\n',
        "sub/tests/test_s.py": PASS.format(n="s"),
    }
    root = make(tmp_path / "p", files)
    (root / "scratch").mkdir()
    (root / "scratch" / "pytest.ini").write_text("[pytest]\n")
    proc = pytest_in(root / "sub")
    assert proc.returncode == 0 and "will refuse" not in proc.stdout, proc.stdout
    code, data, _ = verify(root)
    assert code == 0, data


def test_collect_ignore_in_a_conftest_is_out_of_the_suite(tmp_path: Path) -> None:
    files = {
        **SIMPLE,
        "conftest.py": 'collect_ignore = ["tests/deep"]\n',
    }
    root = make(tmp_path / "p", files)
    assert pytest_in(root).returncode == 0
    code, data, _ = verify(root)
    assert code == 0, data
    assert data["selection"]["suites"][0]["files"] == 2  # type: ignore[index]


# a conftest that ignores under a condition: CONDITION true or false here, as the run finds it
CONDITIONAL = {
    "true": "import sys\n\nif sys.version_info > (3,):\n    collect_ignore.append('test_c.py')\n",
    "false": "import sys\n\nif sys.version_info < (3,):\n    collect_ignore.append('test_c.py')\n",
    "missing module": "try:\n    import genstamp_no_such\nexcept ImportError:\n"
    "    collect_ignore.append('test_c.py')\n",
    "module there": "try:\n    import json\nexcept ImportError:\n"
    "    collect_ignore.append('test_c.py')\n",
    "glob": "import sys\n\nif sys.version_info > (3,):\n    collect_ignore_glob = ['test_?.py']\n",
    # a try's or a with's body may stop at an import that fails
    "try, missing": "try:\n    import genstamp_no_such\n    collect_ignore.append('test_c.py')\n"
    "except ImportError:\n    pass\n",
    "try, there": "try:\n    import json\n    collect_ignore.append('test_c.py')\n"
    "except ImportError:\n    pass\n",
    "with": "import contextlib\n\nwith contextlib.suppress(ImportError):\n"
    "    import genstamp_no_such\n    collect_ignore.append('test_c.py')\n",
}


@pytest.mark.parametrize("xdist", [False, True])
@pytest.mark.parametrize("condition", list(CONDITIONAL))
def test_a_conftest_that_ignores_under_a_condition(
    tmp_path: Path, condition: str, xdist: bool
) -> None:
    """A conftest that ignores a file under a condition (`if sys.version_info < (3, 8):`, an
    optional dependency's `except ImportError:`) was read as if the condition held: a run
    leaving the file out was complete where the condition did not hold, and a clean clone
    failed in it. The file is in the suite; where the run's conftest did ignore it (the
    condition held there, as observed in each process that loaded it: xdist's workers load
    `tests/deep/conftest.py`), the run was right to leave it out, as pytest's own skips are."""
    held = condition in ("true", "missing module", "glob", "try, there")
    text = "collect_ignore = []\n" + CONDITIONAL[condition]
    root = make(tmp_path / "p", {**SIMPLE, "tests/deep/conftest.py": text})
    args = ("-n", "2") if xdist else ()
    proc = pytest_in(root, *args)
    assert proc.returncode == 0 and ("3 passed" if held else "4 passed") in proc.stdout
    code, data, _ = verify(root)
    assert code == 0, data
    # a run that leaves the file out itself: partial (where the condition held too, the run
    # that named other files never loaded the conftest that would tell)
    stamp(root)
    assert pytest_in(root, "tests/test_a.py", "tests/test_b.py", *args).returncode == 0
    code, data, _ = verify(root)
    said = rules(data)["partial-run"]
    assert code == 1 and "tests/deep/test_c.py" in said and "under a condition" in said, data


@pytest.mark.parametrize(
    ("files", "plain", "named", "left"),
    [
        # a folder ignored under a condition that holds, its own conftest never loaded
        (
            {
                "conftest.py": "collect_ignore = []\ntry:\n    import genstamp_no_such\n"
                "except ImportError:\n    collect_ignore.append('tests/deep')\n",
                "tests/deep/conftest.py": "X = 1\n",
            },
            "3 passed",
            (),
            "",
        ),
        # pytest starts in a testpaths folder that a conftest above ignores: not ignored
        (
            {
                "pytest.ini": "[pytest]\ntestpaths = tests/deep tests/other\n",
                "tests/conftest.py": "collect_ignore = ['other']\n",
                "tests/other/conftest.py": "collect_ignore = []\ntry:\n    import json\n"
                "except ImportError:\n    collect_ignore.append('test_db.py')\n",
                "tests/other/test_api.py": PASS.format(n="api"),
                "tests/other/test_db.py": PASS.format(n="db"),
            },
            "3 passed",
            ("tests/deep", "tests/other/test_api.py"),
            "tests/other/test_db.py",
        ),
        # a relative path object ignores nothing (pytest takes it as it is, unjoined)
        (
            {
                "tests/deep/conftest.py": "import sys\nfrom pathlib import Path\n\n"
                "collect_ignore = []\nif sys.platform == 'genstamp':\n"
                "    collect_ignore.append('test_c.py')\n"
                "collect_ignore.append(Path('test_c.py'))\n",
                "tests/deep/test_d.py": PASS.format(n="d"),
            },
            "5 passed",
            ("tests/test_a.py", "tests/test_b.py", "tests/deep/test_d.py"),
            "tests/deep/test_c.py",
        ),
    ],
)
def test_what_a_run_observed_its_conftests_ignore_is_what_pytest_ignored(
    tmp_path: Path, files: dict[str, str], plain: str, named: tuple[str, ...], left: str
) -> None:
    """The run's observation of its conftests' lists is read as pytest reads them: it enters
    folders from where it starts (testpaths), asking the conftests above whether to ignore
    each, and loads a folder's conftest only once it entered it (a folder ignored, its
    conftest never loads); a path object is taken as it is, a relative one ignoring nothing.
    A plain run is accepted; a run naming other files leaves a collected file out."""
    root = make(tmp_path / "p", {**SIMPLE, **files})
    proc = pytest_in(root)
    assert proc.returncode == 0 and plain in proc.stdout, proc.stdout
    code, data, _ = verify(root)
    assert code == 0, data
    if named:
        stamp(root)
        assert pytest_in(root, *named).returncode == 0
        code, data, _ = verify(root)
        assert code == 1 and left in rules(data)["partial-run"], data


LEGACY = {"tests/test_legacy.py": PASS.format(n="legacy")}


@pytest.mark.parametrize(
    ("files", "left"),
    [
        # the nearest conftest that sets the name decides, not one above it that adds
        (
            {
                "tests/conftest.py": "import sys\n\ncollect_ignore = []\n"
                "if sys.platform != 'genstamp':\n    collect_ignore.append('integ/test_w.py')\n",
                "tests/integ/conftest.py": "collect_ignore = ['test_gen.py']\n",
                "tests/integ/test_w.py": PASS.format(n="w"),
            },
            "tests/integ/test_w.py",
        ),
        # a nearer conftest that sets the name under a condition may hide a farther one's list
        (
            {
                **LEGACY,
                "conftest.py": "collect_ignore = ['tests/test_legacy.py']\n",
                "tests/conftest.py": "import sys\n\nif sys.version_info >= (3,):\n"
                "    collect_ignore = []\nelse:\n    collect_ignore = ['test_legacy.py']\n",
            },
            "tests/test_legacy.py",
        ),
        # a removal under a condition that holds
        (
            {
                **LEGACY,
                "tests/conftest.py": "import sys\n\ncollect_ignore = ['test_legacy.py']\n"
                "if sys.version_info >= (3,):\n    collect_ignore.remove('test_legacy.py')\n",
            },
            "tests/test_legacy.py",
        ),
    ],
)
def test_a_conftest_that_may_ignore_is_judged_as_pytest_takes_it(
    tmp_path: Path, files: dict[str, str], left: str
) -> None:
    """A file pytest collects where conftests change their lists under conditions: the
    nearest conftest that sets the name decides (one above that adds the file under a
    condition that holds does not), a nearer one's assignment under a condition may hide a
    farther one's list, a removal under a condition may take the file back. A plain run
    collects it and is accepted; a run naming the other files is partial (they were taken as
    ignored)."""
    root = make(tmp_path / "p", {**SIMPLE, **files})
    proc = pytest_in(root)
    assert proc.returncode == 0 and "5 passed" in proc.stdout, proc.stdout
    code, data, _ = verify(root)
    assert code == 0, data
    stamp(root)
    named = ("tests/test_a.py", "tests/test_b.py", "tests/deep/test_c.py")
    assert pytest_in(root, *named).returncode == 0
    code, data, _ = verify(root)
    assert code == 1 and left in rules(data)["partial-run"], data


@pytest.mark.parametrize(
    "conftests",
    [
        # an opt-in under a condition that does not hold: the file stays ignored
        {
            "tests/conftest.py": "import os\n\ncollect_ignore = ['deep']\n"
            "if os.environ.get('GENSTAMP_NO_SUCH'):\n    collect_ignore.remove('deep')\n"
        },
        # a nearer conftest that sets the name under a condition that does not hold hides
        # nothing of a farther one's
        {
            "conftest.py": "collect_ignore = ['tests/deep']\n",
            "tests/conftest.py": "import sys\n\nif sys.version_info < (3,):\n"
            "    collect_ignore = []\n",
        },
    ],
)
def test_a_condition_that_does_not_hold_changes_no_ignore(
    tmp_path: Path, conftests: dict[str, str]
) -> None:
    """`collect_ignore.remove(...)` under an opt-in that the run does not give, and a nearer
    conftest that would set the name under a condition that does not hold: the ignores stay
    as the unconditional statements leave them, and a plain run is complete (refused as
    partial before: the removal was read as done)."""
    root = make(tmp_path / "p", {**SIMPLE, **conftests})
    proc = pytest_in(root)
    assert proc.returncode == 0 and "3 passed" in proc.stdout, proc.stdout
    code, data, _ = verify(root)
    assert code == 0, data


@pytest.mark.parametrize(
    "statement",
    [
        "collect_ignore[:] = []\n",
        "def _drop(name):\n    collect_ignore.remove(name)\n\n\n_drop('deep')\n",
        "ignored = collect_ignore\nignored.clear()\n",
        "collect_ignore.pop()\n",
        "print(collect_ignore)\n",
        "import sys\n\n\ndef pytest_configure(config):\n"
        "    sys.modules[__name__].collect_ignore = []\n",
        'globals()["collect_ignore"] = []\n',
    ],
    ids=["slice", "function", "alias", "pop", "read", "attribute", "globals"],
)
def test_a_statement_no_form_reads_leaves_the_ignore_to_what_the_run_observed(
    tmp_path: Path, statement: str
) -> None:
    """`collect_ignore = ["deep", "docs"]` and a statement after it that the reading of the
    conftest does not follow (a slice assignment, a function that changes the list, an alias,
    a pop of an unnamed entry, a mere read): the entries may be gone or there. A narrowed run
    (`pytest tests/test_a.py tests/test_b.py`, which loads that conftest) was accepted where
    the statement took `deep` back out, though a plain `pytest` then collects and fails it;
    and a plain green run was refused where a pop left `deep` ignored (h176). The run's own
    observation of the conftest's list decides: a plain run is complete, and a narrowed one
    covers the suite only where the conftest, as observed, still ignores `deep`."""
    text = 'collect_ignore = ["deep", "docs"]\n' + statement
    root = make(tmp_path / "p", {**SIMPLE, "tests/conftest.py": text})
    still = statement.startswith(("collect_ignore.pop", "print"))
    proc = pytest_in(root)
    assert proc.returncode == 0, proc.stdout
    assert ("3 passed" if still else "4 passed") in proc.stdout, proc.stdout
    code, data, _ = verify(root)
    assert code == 0, data
    stamp(root)
    assert pytest_in(root, "tests/test_a.py", "tests/test_b.py").returncode == 0
    code, data, _ = verify(root)
    if still:
        assert code == 0, data
    else:
        assert code == 1 and "tests/deep/test_c.py" in rules(data)["partial-run"], data


ORACLE_TREE = {
    "tests/test_a.py": PASS.format(n="a"),
    "tests/other/test_o.py": PASS.format(n="o"),
    "tests/check_c.py": PASS.format(n="c"),
    "tests/build/test_b.py": PASS.format(n="b"),
    "qa/test_q.py": PASS.format(n="q"),
    "pkg/__init__.py": "",
    "pkg/m.py": 'def f():\n    """\n    >>> 1\n    1\n    """\n',
}
IGNORED_OTHER = 'collect_ignore = ["tests/other"]\n'
# the files pytest makes a collector of (those that yield no test too)
ORACLE_PLUGIN = """\
import os, pytest

def pytest_collectstart(collector):
    if isinstance(collector, pytest.File):
        print("FILE", os.path.relpath(collector.path, collector.config.rootpath))
"""


@pytest.mark.e2e
@pytest.mark.parametrize(
    "files",
    [
        # options of addopts that pytest applies: each changes what it collects
        {"pytest.ini": "[pytest]\naddopts = --collect-in-virtualenv\n", "tests/env/pyvenv.cfg": ""},
        {"pytest.ini": "[pytest]\naddopts = --noconftest\n", "conftest.py": IGNORED_OTHER},
        {"pytest.ini": "[pytest]\naddopts = --confcutdir=tests\n", "conftest.py": IGNORED_OTHER},
        # only the conftests above it are cut: one beside it loads
        {
            "pytest.ini": "[pytest]\naddopts = --confcutdir=tests/build\n",
            "tests/other/conftest.py": 'collect_ignore = ["test_o.py"]\n',
        },
        {
            "pytest.ini": "[pytest]\naddopts = --confcutdir=tests/build\n",
            "tests/conftest.py": 'collect_ignore = ["other"]\n',
        },
        # a folder above the top: every conftest of the tree loads
        {"pytest.ini": "[pytest]\naddopts = --confcutdir=..\n", "conftest.py": IGNORED_OTHER},
        {"pytest.ini": "[pytest]\naddopts = --confcutdir=/\n", "conftest.py": IGNORED_OTHER},
        {"pytest.ini": "[pytest]\naddopts = -o 'python_files=test_*.py check_*.py'\n"},
        {"pytest.ini": "[pytest]\ntestpaths = tests\naddopts = -o 'testpaths=tests qa'\n"},
        {"pytest.ini": "[pytest]\ntestpaths = tests\naddopts = --override-ini=testpaths=qa\n"},
        {"pytest.ini": "[pytest]\naddopts = --override-ini norecursedirs=.git\n"},
        {"pytest.ini": "[pytest]\naddopts = --doctest-modules -p no:doctest\n"},
        {"pytest.ini": "[pytest]\naddopts = --doctest-modules\n"},
        # environments pytest does not enter: a virtual one, and a conda one
        {"tests/env/pyvenv.cfg": ""},
        {"tests/cenv/conda-meta/history": "", "tests/cenv/test_c.py": PASS.format(n="c")},
        # an empty [tool.pytest] table is no configuration: the next file is
        {
            "pyproject.toml": "[tool.pytest]\n",
            "setup.cfg": "[tool:pytest]\npython_files = test_*.py check_*.py\n",
        },
        # a path pattern matches the file's absolute path, as "*/pattern" (Django's guides'
        # `*/tests/test_*.py` takes the top-level tests/ too: h204)
        {"pytest.ini": "[pytest]\npython_files = */tests/test_*.py\n"},
        # (not `*/*/test_*.py`: its `*` takes any folder of tmp_path named test_… too)
        {"pytest.ini": "[pytest]\npython_files = */*/check_*.py test_*.py\n"},
        {"pytest.ini": "[pytest]\naddopts = --doctest-glob=*/*.rst\n", "README.rst": ">>> 1\n1\n"},
        {"pytest.ini": "[pytest]\nnorecursedirs = */other\n"},
        # an absolute one, not made */…: the whole path (h205)
        {"pytest.ini": "[pytest]\nnorecursedirs = /tests/other\n"},
        {"pytest.ini": "[pytest]\npython_files = /*/tests/check_*.py test_*.py\n"},
        # collect_ignore as the conftest's module leaves it
        {"conftest.py": IGNORED_OTHER},
        {"conftest.py": IGNORED_OTHER + 'collect_ignore.remove("tests/other")\n'},
        {"conftest.py": IGNORED_OTHER + "collect_ignore = []\n"},
        {"conftest.py": IGNORED_OTHER + "del collect_ignore[:]\n"},
        # statements no form above reads, which take the entry back out (h176)
        {"conftest.py": IGNORED_OTHER + "collect_ignore[:] = []\n"},
        {"conftest.py": IGNORED_OTHER + "collect_ignore[0] = 'nothing'\n"},
        {"conftest.py": IGNORED_OTHER + "collect_ignore *= 0\n"},
        {"conftest.py": IGNORED_OTHER + "(collect_ignore := [])\n"},
        {"conftest.py": IGNORED_OTHER + "ignored = collect_ignore\nignored.clear()\n"},
        {
            "conftest.py": IGNORED_OTHER
            + "def _drop(name):\n    collect_ignore.remove(name)\n\n\n_drop('tests/other')\n"
        },
        # (under a condition: test_a_conftest_that_ignores_under_a_condition)
        {"conftest.py": "def pytest_configure(config):\n    " + IGNORED_OTHER},
        # the nearest conftest that sets the name rules: pytest's _rget_with_confmod
        {"conftest.py": IGNORED_OTHER, "tests/conftest.py": "collect_ignore = []\n"},
        {"conftest.py": IGNORED_OTHER, "tests/conftest.py": "collect_ignore_glob = []\n"},
        {"conftest.py": IGNORED_OTHER, "tests/build/conftest.py": "collect_ignore = []\n"},
        {
            "conftest.py": 'collect_ignore_glob = ["*/test_o.py", "*/test_a.py"]\n',
            "tests/other/conftest.py": 'collect_ignore_glob = ["nothing"]\n',
        },
        {"tests/conftest.py": 'collect_ignore = ["other"]\n', "tests/other/conftest.py": "x = 1\n"},
        {
            "tests/conftest.py": 'collect_ignore = ["other"]\n',
            "tests/other/conftest.py": "collect_ignore = []\n",  # not asked of its own folder
        },
        {"conftest.py": "class Settings:\n    " + IGNORED_OTHER},
        # a string, where a list is meant: pytest takes each character for a name
        {"conftest.py": 'collect_ignore = "tests/other"\n'},
        {"conftest.py": 'collect_ignore = []\ncollect_ignore += "tests/other"\n'},
        {"conftest.py": 'collect_ignore = []\ncollect_ignore.extend("tests/other")\n'},
        {"tests/other/conftest.py": 'collect_ignore_glob = "*x"\n'},
        # testpaths: where pytest starts, as it globs them; what it is told to ignore and its
        # norecursedirs apply below a start, never to it (`tests/build`, `tests/other`)
        {"pytest.ini": "[pytest]\ntestpaths = tests/*/\n"},
        {"pytest.ini": "[pytest]\ntestpaths = tests/*\n", "tests/conftest.py": PASS.format(n="t")},
        {"pytest.ini": "[pytest]\ntestpaths = tests/build qa\n"},
        {"pytest.ini": "[pytest]\ntestpaths = */b*\n"},
        {
            "pytest.ini": "[pytest]\ntestpaths = tests/*/\n",
            "tests/conftest.py": 'collect_ignore = ["other"]\n',
        },
        {"pytest.ini": "[pytest]\ntestpaths = tests/other\naddopts = --ignore=tests/other\n"},
        # a path given inside a folder also given is walked as part of it, pruned as it prunes
        {"pytest.ini": "[pytest]\ntestpaths = tests/**\n"},
        {"pytest.ini": "[pytest]\ntestpaths = tests tests/build\n"},
        {"pytest.ini": "[pytest]\ntestpaths = tests tests/check_c.py tests/build/test_b.py\n"},
    ],
    ids=lambda files: " ".join(f"{k}:{v!r}"[:60] for k, v in files.items()),
)
def test_the_suite_is_what_pytest_collects(tmp_path: Path, files: dict[str, str]) -> None:
    """The suite read from the tree is the set of files pytest itself collects there (pytest
    the oracle, as git is for the tree): options in addopts, environments, collect_ignore."""
    from genstamp import suite

    tree = {**ORACLE_TREE, **files}
    if "tests/env/pyvenv.cfg" in tree:
        tree["tests/env/test_v.py"] = PASS.format(n="v")
    repo = tmp_path / "repo"
    for rel, text in tree.items():
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        (repo / rel).write_text(text)
    (tmp_path / "oracle").mkdir()
    (tmp_path / "oracle" / "collected_files.py").write_text(ORACLE_PLUGIN)
    oracle = ("-p", "no:genstamp", "-p", "collected_files")
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", *oracle],
        cwd=repo,
        capture_output=True,
        text=True,
        env=subprocess_env(PYTHONPATH=str(tmp_path / "oracle")),
    )
    assert done.returncode == 0, done.stdout + done.stderr
    collected = {line[len("FILE ") :] for line in done.stdout.splitlines() if line[:5] == "FILE "}
    assert collected, done.stdout

    def read(rel: str) -> bytes | None:
        text = tree.get(rel)
        return None if text is None else text.encode()

    assert set(suite.collect(sorted(tree), read).files) == collected


@pytest.mark.parametrize(
    ("configured", "env", "args", "partial"),
    [
        ("", "", ("--reruns", "2"), True),
        ("", "", ("--reruns=1",), True),
        ("", "", ("--reruns", "0"), False),  # no retry at all
        ("", "", ("--reruns", "0", "--reruns", "2"), True),  # argparse takes the last
        ("", "--reruns 2", ("--reruns", "0"), False),  # the command line's, after PYTEST_ADDOPTS
        ("", "--reruns 0", ("--reruns", "2"), True),
        ("", "", ("-o", "reruns=2"), True),  # its setting
        ("", "", ("--force-reruns", "1"), True),  # over each test's marker
        ("addopts = --reruns 2", "", ("--reruns", "2"), False),  # the suite's own
        ("addopts = --reruns 2", "", ("--reruns", "1"), False),  # fewer retries
        ("addopts = --reruns 2", "", ("--reruns", "3"), True),
        ("reruns = 2", "", ("--reruns", "2"), False),
        ("reruns = 2", "", ("-o", "reruns=1"), False),
        ("reruns = 2", "", ("-o", "reruns=5"), True),
        ("addopts = -o reruns=2", "", ("-o", "reruns=2"), False),  # the addopts' own setting
        ("addopts = -o reruns=2", "", ("-o", "reruns=3"), True),
        # a test's `flaky(reruns=N)` plus the configured reruns, where the default takes N
        ("reruns = 1", "", ("--reruns-mode=append",), True),
        ("reruns = 1", "", ("--reruns-mode", "strict"), False),
        ("addopts = --reruns-mode=append", "", ("--reruns-mode=append",), False),
        # the lists of failures to rerun, replaced: one the suite does not rerun is
        ("only_rerun = ConnectionError", "", ("--only-rerun", "AssertionError"), True),
        (
            "only_rerun =\n    Connection refused\n    OSError",
            "",
            ("--only-rerun", "OSError"),
            False,
        ),
        ("", "", ("--only-rerun", "AssertionError"), False),  # fewer than every failure
        ("rerun_except = AssertionError", "", ("--rerun-except", "ZeroDivisionError"), True),
        ("rerun_except = AssertionError", "", ("--rerun-except=AssertionError",), False),
    ],
)
def test_a_run_that_retries_failing_tests_is_not_the_suites(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    configured: str,
    env: str,
    args: tuple[str, ...],
    partial: bool,
) -> None:
    """pytest-rerunfailures' ``--reruns`` (or its ``reruns`` setting, or ``--force-reruns``)
    given for the run turns a failing test into a pass that a clean run of the suite does not
    give; the options are read as pytest reads them (the last given counts; ``PYTEST_ADDOPTS``
    before the command line). Here a conftest declares them, as the installed plugin does."""
    conftest = (
        "def pytest_addoption(parser):\n"
        "    parser.addoption('--reruns', type=int)\n"
        "    parser.addoption('--force-reruns', type=int)\n"
        "    parser.addoption('--reruns-mode', default='strict')\n"
        "    parser.addoption('--only-rerun', action='append')\n"
        "    parser.addoption('--rerun-except', action='append')\n"
        "    parser.addini('reruns', 'retries', type='string')\n"
        "    parser.addini('only_rerun', 'rerun these', type='linelist')\n"
        "    parser.addini('rerun_except', 'rerun no such', type='linelist')\n"
    )
    files = {
        "pytest.ini": f"[pytest]\n{configured}\n",
        "conftest.py": conftest,
        "tests/test_a.py": PASS.format(n="a"),
    }
    monkeypatch.setenv("PYTEST_ADDOPTS", env)
    code, data = judged_after_a_green_run(make(tmp_path / "p", files), *args)
    if partial:
        assert code == 1 and "partial-run" in rules(data), data
        assert args[0].partition("=")[0] in rules(data)["partial-run"]
    else:
        assert code == 0, data


@pytest.mark.parametrize(
    ("args", "partial"),
    [
        (("--only-rerun", "AssertionError: transient"), False),  # the suite's own, again
        (("--only-rerun", "AssertionError:"), True),  # (its first word: another pattern)
    ],
)
def test_a_toml_addopts_item_with_a_space_is_one_argument(
    tmp_path: Path, args: tuple[str, ...], partial: bool
) -> None:
    """`addopts = ["--only-rerun", "AssertionError: transient"]` in pyproject.toml: pytest
    takes each item whole; the suite's addopts were split at the space, so the run giving
    the pattern again was refused, and one giving `AssertionError:` accepted."""
    conftest = (
        "def pytest_addoption(parser):\n"
        "    parser.addoption('--reruns', type=int)\n"
        "    parser.addoption('--only-rerun', action='append')\n"
    )
    files = {
        "pyproject.toml": '[tool.pytest.ini_options]\nreruns = "1"\n'
        'addopts = ["--only-rerun", "AssertionError: transient"]\n',
        "conftest.py": conftest + "    parser.addini('reruns', 'retries', type='string')\n",
        "tests/test_a.py": PASS.format(n="a"),
    }
    code, data = judged_after_a_green_run(make(tmp_path / "p", files), *args)
    if partial:
        assert code == 1 and "--only-rerun AssertionError:" in rules(data)["partial-run"], data
    else:
        assert code == 0, data


GUARDING_PLUGIN = """\
import pytest


def pytest_configure(config):
    config.addinivalue_line(
        "markers",
        "guard(limit): fail a test whose result exceeds the limit",
    )


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call(item):
    yield
    mark = item.get_closest_marker("guard")
    if mark is not None and mark.args[0] < 10:
        pytest.fail("over the guard's limit")
"""


@pytest.mark.parametrize("through", ["literal", "variable"])
@pytest.mark.parametrize("case", ["marked", "module", "unmarked", "addopts", "registered"])
def test_an_installed_plugin_turned_off_whose_marker_the_tests_use(
    tmp_path: Path, case: str, through: str
) -> None:
    """`-p no:NAME` of an installed plugin the suite uses through the markers it registers
    (pytest-timeout's `@pytest.mark.timeout(1)`, with no setting of its own; pytest-order
    registers its marker through a variable): the marker decides nothing, and a test the
    plugin fails passes. It was accepted: only the plugin's settings, collectors and warnings
    counted. Controls: tests that use none of its markers; the suite's own addopts turning the
    plugin off; a marker of that name the suite's configuration registers itself."""
    text = GUARDING_PLUGIN
    if through == "variable":
        text = text.replace('    config.addinivalue_line(\n        "markers",\n', "    line = (\n")
        text = text.replace(
            'limit",\n    )', 'limit"\n    )\n    config.addinivalue_line("markers", line)'
        )
    site = installed_plugin(tmp_path / "site", "guarding", text)
    mark = "" if case in ("unmarked", "module") else "@pytest.mark.guard(5)\n"
    head = "pytestmark = pytest.mark.guard(5)\n" if case == "module" else ""  # the module's
    ini = {"addopts": "addopts = -p no:guarding\n", "registered": "markers =\n    guard: ours\n"}
    files = {
        "pytest.ini": "[pytest]\n" + ini.get(case, ""),
        "tests/test_g.py": f"import pytest\n{head}\n\n{mark}def test_g():\n    pass\n",
    }
    root = make(tmp_path / "p", files)
    env = subprocess_env(PYTHONPATH=str(site))
    proc = run_pytest(root, "-p", "no:cacheprovider", "-p", "no:guarding", env=env)
    assert proc.returncode == 0, proc.stdout
    code, data, _ = verify(root)
    if case in ("marked", "module"):
        said = rules(data)["partial-run"]
        assert code == 1 and "-p no:guarding (the tests' marker guard)" in said, data
    else:
        assert code == 0, data


# the guard's limit, read from its own table of the project's pyproject.toml, as pytest-env
# reads [tool.pytest_env]
READS_ITS_TABLE = """

def limit(config):
    import tomllib

    path = config.rootpath / "pyproject.toml"
    data = tomllib.loads(path.read_text()) if path.exists() else {}
    return data.get("tool", {}).get("guarding", {}).get("limit")
"""


@pytest.mark.parametrize("uses", ["marker", "table", "library-table", "neither"])
@pytest.mark.parametrize("how", ["-p no", "variable", "flag", "loaded-by-hand"])
def test_an_installed_plugin_a_run_does_not_load_whose_marker_or_own_table_the_suite_uses(
    tmp_path: Path, how: str, uses: str
) -> None:
    """A run with plugin autoloading off (``PYTEST_DISABLE_PLUGIN_AUTOLOAD``,
    ``--disable-plugin-autoload``; genstamp loaded by ``-p`` as its message says) leaves out
    the installed plugins a run of the suite loads: the tests' markers of one decided nothing
    (pytest-timeout's ``timeout``), and the settings the project gives one in a table of its
    own went unread (pytest-env's ``[tool.pytest_env]``), also under ``-p no:NAME``. Both were
    accepted (only ini settings and ``-p no:``'s markers counted). Controls: the plugin loaded
    by hand (``-p guarding``) with autoloading off; a suite that uses neither; a table named
    like the plugin that its module does not read (logfire's ``[tool.logfire]``, the library's
    own settings, read whether its plugin loads or not: h194)."""
    text = GUARDING_PLUGIN + (READS_ITS_TABLE if uses == "table" else "")
    site = installed_plugin(tmp_path / "site", "guarding", text)
    mark = "@pytest.mark.guard(50)\n" if uses == "marker" else ""
    table = "[tool.guarding]\nlimit = 5\n" if uses.endswith("table") else ""
    files = {
        "pyproject.toml": f"[tool.pytest.ini_options]\n{table}",
        "tests/test_g.py": f"import pytest\n\n\n{mark}def test_g():\n    pass\n",
    }
    root = make(tmp_path / "p", files)
    env = subprocess_env(PYTHONPATH=str(site))
    args = ["-p", "no:cacheprovider"]
    if how == "-p no":
        args += ["-p", "no:guarding"]
    elif how == "flag":
        args += ["--disable-plugin-autoload", "-p", "genstamp.pytest_plugin"]
    else:
        env["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"
        args += ["-p", "genstamp.pytest_plugin"]
        args += ["-p", "guarding"] if how == "loaded-by-hand" else []
    proc = run_pytest(root, *args, env=env)
    assert proc.returncode == 0, proc.stdout
    code, data, _ = verify(root)
    if uses in ("neither", "library-table") or how == "loaded-by-hand":
        assert code == 0, data
        return
    said = rules(data)["partial-run"]
    why = {
        "marker": "the tests' marker guard",
        "table": "its settings [tool.guarding] unread",
    }[uses]
    if how == "-p no":
        assert code == 1 and f"-p no:guarding ({why})" in said, data
    else:
        cause = "--disable-plugin-autoload" if how == "flag" else "PYTEST_DISABLE_PLUGIN_AUTOLOAD"
        assert code == 1 and f"{cause} (the plugin guarding not loaded, {why})" in said, data


# pytest-cov's and pytest-benchmark's options as they work: the session fails under the
# threshold (coverage's own fail_under where --cov-fail-under is not given); --benchmark-only
# skips every test that is no benchmark, --benchmark-skip every benchmark
MEASURING_PLUGIN = """\
import pytest


def pytest_addoption(parser):
    parser.addoption("--cov", action="append", nargs="?", const=True, default=[], dest="cov_source")
    parser.addoption("--cov-reset", action="store_const", const=[], dest="cov_source")
    parser.addoption("--cov-append", action="store_true")
    parser.addoption("--no-cov", action="store_true")
    parser.addoption("--cov-fail-under", type=float, default=None)
    parser.addoption("--cov-config", default=".coveragerc")
    parser.addoption("--cov-branch", action="store_true", default=None)
    parser.addoption("--cov-precision", type=int, default=None)
    parser.addoption("--benchmark-only", action="store_true")
    parser.addoption("--benchmark-skip", action="store_true")
    parser.addoption("--hypothesis-profile", default=None)
    parser.addoption("--nomigrations", "--no-migrations", action="store_true")
    parser.addoption("--snapshot-warn-unused", action="store_true")
    parser.addoption("--snapshot-disable-unused", action="store_true")
    parser.addoption("--ds", default=None)  # pytest-django's, over its ini key
    parser.addini("DJANGO_SETTINGS_MODULE", "the settings module")
    parser.addini("env", "pytest-env's variables", type="linelist")
    parser.addoption("--envfile", default=None)
    parser.addoption("--snapshot-ignore-file-extensions", default="")


def pytest_runtest_setup(item):
    bench = "bench" in item.name
    if item.config.getoption("benchmark_only") and not bench:
        pytest.skip("not a benchmark (--benchmark-only)")
    if item.config.getoption("benchmark_skip") and bench:
        pytest.skip("a benchmark (--benchmark-skip)")


def pytest_sessionfinish(session):
    config = session.config
    if not config.getoption("cov_source") or config.getoption("no_cov"):
        return
    import os, re
    rc = config.getoption("cov_config")
    if rc == ".coveragerc":
        rc = os.environ.get("COVERAGE_RCFILE", rc)
    path = config.rootpath / rc
    text = path.read_text() if path.exists() else ""
    under = config.getoption("cov_fail_under")
    if under is None:
        found = re.search(r"fail_under = (\\d+)", text)
        under = float(found.group(1)) if found else 0
    # the code is 49.6% covered; its uncovered half omitted, 100%; the tests measured too, 95%;
    # its branches too, 95%
    covered = 100 if "omit" in text else 95 if "tests" in config.getoption("cov_source") else 49.6
    branch = config.getoption("cov_branch") or re.search(r"branch = (1|true)", text)
    covered = 95 if branch and covered < 95 else covered
    precision = config.getoption("cov_precision")
    if precision is None:
        found = re.search(r"precision = (\\d+)", text)
        precision = int(found.group(1)) if found else 0
    if under > round(covered, precision):
        session.exitstatus = 1
"""


TOML_ENV = '[tool.pytest_env]\nDJANGO_SETTINGS_MODULE = {value = "proj.settings"}\n'


@pytest.mark.parametrize(
    ("addopts", "coveragerc", "args", "partial"),
    [
        ("--cov=pkg --cov-fail-under=90", "", ("--no-cov",), True),
        ("--cov=pkg --cov-fail-under=90", "", ("--cov-fail-under=0",), True),
        ("--cov=pkg", "[report]\nfail_under = 90\n", ("--no-cov",), True),
        ("--cov=pkg", "[report]\nfail_under = 90\n", ("--cov-fail-under", "10"), True),
        ("--cov=pkg --cov-fail-under=40", "", ("--cov-fail-under=45",), False),  # stricter
        ("--cov=pkg --cov-fail-under=40", "", ("--no-cov",), True),  # met, but not checked
        ("--cov=pkg", "", ("--no-cov",), False),  # no threshold: measured, nothing decided
        ("--cov=pkg", "[report]\nfail_under = 90\n", ("--cov-reset",), True),
        ("--cov=pkg", "", ("--cov-append",), False),  # no threshold
        ("--cov=pkg", "[report]\nfail_under = 90\n", ("--cov-config=lax.rc",), True),
        ("--cov=pkg", "[report]\nfail_under = 90\n", ("ENV", "COVERAGE_RCFILE=lax.rc"), True),
        ("--cov=pkg", "[report]\nfail_under = 40\n", ("--cov-config=strict.rc",), False),
        # what the total is taken over: another file that omits the uncovered code, or the
        # tests measured too
        ("--cov=pkg", "[report]\nfail_under = 90\n", ("--cov-config=omitting.rc",), True),
        ("--cov=pkg", "[report]\nfail_under = 90\n", ("ENV", "COVERAGE_RCFILE=omitting.rc"), True),
        ("--cov=pkg --cov-fail-under=90", "", ("--cov-config=omitting.rc",), True),
        ("--cov=pkg", "[report]\nfail_under = 90\n", ("--cov=tests",), True),
        ("--cov=pkg --cov-fail-under=40", "", ("--cov=pkg",), False),  # the suite's own
        ("--cov --cov-fail-under=90", "", ("--cov=tests",), False),  # it measures all
        ("--cov=pkg --cov-fail-under=40", "", ("--cov={root}/pkg",), False),  # spelled so
        # coverage takes --cov-config=.coveragerc for none given: COVERAGE_RCFILE is read
        (
            "--cov=pkg --cov-config=.coveragerc",
            "[report]\nfail_under = 90\n",
            ("ENV", "COVERAGE_RCFILE=lax.rc"),
            True,
        ),
        ("--cov=pkg", "[other]\nfail_under = 90\n", ("--no-cov",), False),  # not [report]
        # branches measured too: another total; the suite's own measure is the suite's
        ("--cov=pkg --cov-fail-under=90", "", ("--cov-branch",), True),
        ("--cov=pkg", "[report]\nfail_under = 90\n", ("--cov-branch",), True),
        ("--cov=pkg --cov-branch --cov-fail-under=40", "", ("--cov-branch",), False),
        (
            "--cov=pkg",
            "[run]\nbranch = true\n[report]\nfail_under = 40\n",
            ("--cov-branch",),
            False,
        ),
        # the total rounded to fewer digits (49.6 to 50) before it is compared
        ("--cov=pkg --cov-fail-under=50 --cov-precision=1", "", ("--cov-precision=0",), True),
        ("--cov=pkg", "[report]\nfail_under = 50\nprecision = 1\n", ("--cov-precision", "0"), True),
        ("--cov=pkg --cov-fail-under=45 --cov-precision=1", "", ("--cov-precision=2",), False),
        ("--cov=pkg --cov-fail-under=40", "", ("--cov-precision=0",), False),  # coverage's own
        # the threshold's own digits are kept whatever the precision (coverage's rounding)
        (
            "--cov=pkg --cov-fail-under=45.55 --cov-precision=1",
            "",
            ("--cov-precision=0",),
            False,
        ),
        # the settings a run of the suite takes, given its own way: pytest-django's --ds in the
        # addopts, or pytest-env's `env`; pytest-env's --envfile for its configured files
        ("--ds=proj.settings", "", ("--ds=proj.other",), True),
        ("--ds=proj.settings", "", ("--ds=proj.settings",), False),
        ("\nenv =\n    D:DJANGO_SETTINGS_MODULE=proj.settings", "", ("--ds=proj.other",), True),
        ("\nenv =\n    DJANGO_SETTINGS_MODULE=proj.settings", "", ("--ds=proj.settings",), False),
        ("", "", ("--envfile=lax.env",), True),
        ("", TOML_ENV, ("--ds=proj.other",), True),
        ("", TOML_ENV, ("--ds=proj.settings",), False),
        ("", "", ("--benchmark-only",), True),
        ("", "", ("--benchmark-skip",), True),
        ("--benchmark-skip", "", ("--benchmark-skip",), False),  # the suite's own
        # what a test checks weakened: fewer examples, a database from the models, unused
        # snapshots only a warning
        ("", "", ("--hypothesis-profile", "quick"), True),
        # (a conftest may load another: the profile a run of the suite takes is not known)
        ("", "", ("--hypothesis-profile=default",), True),
        ("--hypothesis-profile=ci", "", ("--hypothesis-profile=ci",), False),
        ("", "", ("--nomigrations",), True),
        ("", "", ("--no-migrations",), True),
        ("", "", ("--snapshot-warn-unused",), True),
        ("", "", ("--snapshot-disable-unused",), True),
        ("", "", ("--snapshot-ignore-file-extensions=ambr",), True),
        ("", "", ("--snapshot-ignore-file-extensions", "ambr"), True),
        ("--snapshot-disable-unused", "", ("--snapshot-disable-unused",), False),
    ],
)
def test_a_run_that_turns_off_the_suites_coverage_check_or_skips_its_tests_is_not_the_suites(
    tmp_path: Path, addopts: str, coveragerc: str, args: tuple[str, ...], partial: bool
) -> None:
    """pytest-cov's ``--no-cov`` or a lower ``--cov-fail-under`` given for the run, where the
    suite's coverage fails the session under a threshold (a clean run exits 1), and
    pytest-benchmark's ``--benchmark-only``/``--benchmark-skip``, whose skips count as run,
    and options that weaken what a test checks (hypothesis' ``--hypothesis-profile``,
    pytest-django's ``--nomigrations``, syrupy's ``--snapshot-warn-unused``,
    ``--snapshot-disable-unused``, ``--snapshot-ignore-file-extensions``): the run is not
    the suite's. A stricter threshold, or the suite's own option, is."""
    site = installed_plugin(tmp_path / "site", "measuring", MEASURING_PLUGIN)
    files = {
        "pytest.ini": f"[pytest]\naddopts = {addopts}\n",
        "tests/test_a.py": cases("a1", "bench_a2"),
    }
    files["omitting.rc"] = "[run]\nomit = pkg/slow.py\n[report]\nfail_under = 90\n"
    files["pkg/__init__.py"] = ""
    if coveragerc.startswith("[tool.pytest_env]"):
        files["pyproject.toml"] = coveragerc  # pytest-env's own table (pytest.ini is read)
    elif coveragerc:
        files[".coveragerc"] = coveragerc
        files["lax.rc"] = "[report]\nfail_under = 10\n"
        files["strict.rc"] = "[report]\nfail_under = 45\n"
    root = make(tmp_path / "p", files)
    variables = dict([args[1].split("=", 1)]) if args[0] == "ENV" else {}
    env = subprocess_env(PYTHONPATH=str(site), **variables)
    given = () if variables else tuple(a.format(root=root) for a in args)
    proc = run_pytest(root, "-p", "no:cacheprovider", *given, env=env)
    assert proc.returncode == 0, proc.stdout
    assert_partial(root, (args[1] if variables else args[0]).partition("=")[0], partial)


DEPENDENT = """\
import pytest


@pytest.mark.dependency()
def test_first():
    {first}


@pytest.mark.dependency(depends=["test_first"])
def test_second():
    pass


def test_other():
    pass
"""


# the dependency by a name of its own, and a test of the same name in another module
NAMED = ('@pytest.mark.dependency(name="db")', 'depends=["db"]')
OTHER_MODULE = "import pytest\n\n\n@pytest.mark.skip('elsewhere')\ndef test_first():\n    pass\n"


@pytest.mark.parametrize(
    ("first", "args", "partial"),
    [
        ("pass", (), False),
        ("pass", ("-n", "2"), True),  # test_first ran in the other worker: unseen here
        ("pytest.skip('no network')", (), False),  # skipped, and so is what depends on it
        ("pytest.skip('no network')", ("-n", "2"), False),  # (the skip itself counts as run)
        ("pytest.skip('no network')", ("NAMED",), False),  # its own name, `name="db"`
        ("pass", ("NAMED", "-n", "2"), True),
        ("pass", ("OTHER", "-n", "2"), True),  # another module's test_first was skipped
    ],
)
def test_a_skip_pytest_dependency_made_where_it_did_not_see_the_dependency_is_no_run(
    tmp_path: Path, first: str, args: tuple[str, ...], partial: bool
) -> None:
    """pytest-dependency skips a test whose dependency's result it has not seen in its process:
    under xdist (the dependency ran in another worker), a shuffled order or pytest-repeat's
    renamed tests, a failing test's body never ran and the skip was counted as run. A skip
    where the dependency was skipped (or failed) is the plugin's verdict, as in order."""
    test = DEPENDENT.format(first=first)
    files = {"tests/test_dep.py": test}
    if "NAMED" in args:
        files["tests/test_dep.py"] = test.replace("@pytest.mark.dependency()", NAMED[0]).replace(
            'depends=["test_first"]', NAMED[1]
        )
    if "OTHER" in args:
        files["tests/test_a_other.py"] = OTHER_MODULE
    root = make(tmp_path / "p", files)
    given = [a for a in args if a not in ("NAMED", "OTHER")]
    proc = run_pytest(root, "-p", "no:cacheprovider", *given)
    assert proc.returncode == 0, proc.stdout
    code, data, _ = verify(root)
    if partial:
        said = rules(data)["partial-run"]
        assert code == 1 and "skipped by pytest-dependency" in said, data
        assert "tests/test_dep.py::test_second" in said, said
    else:
        assert code == 0, data


HYPOTHESIS_CONFTEST = """\
import os

from hypothesis import settings

# each from hypothesis' default, whatever it loaded itself (under CI=true its own "ci")
BASE = settings.get_profile("default")
settings.register_profile("ci", BASE, max_examples=1000)
settings.register_profile("quick", BASE, max_examples=5)
settings.register_profile("dev", BASE, max_examples=10)
settings.register_profile("thorough", BASE, max_examples=500)
if not os.environ.get("AT_CONFIGURE"):
    settings.load_profile(os.environ.get("LOADED", "default"))


def pytest_configure(config):
    if os.environ.get("AT_CONFIGURE"):  # where a conftest may load the suite's profile too
        settings.load_profile(os.environ.get("LOADED", "default"))
"""
HYPOTHESIS_TEST = """\
from hypothesis import given, strategies as st


@given(st.integers(), st.integers())
def test_commutes(a, b):
    assert a + b == b + a
"""


@pytest.mark.parametrize(
    ("loaded", "chosen", "partial"),
    [
        ("default", "ci", False),  # hypothesis' documented CI profile: more examples
        ("default", "quick", True),
        ("dev", "default", False),  # the conftest's dev profile is laxer than the default
        ("thorough", "default", True),
        ("thorough AT_CONFIGURE", "ci", False),
        ("thorough AT_CONFIGURE", "default", True),
    ],
)
def test_a_hypothesis_profile_of_the_run_counts_only_where_it_checks_less(
    tmp_path: Path, loaded: str, chosen: str, partial: bool
) -> None:
    """``--hypothesis-profile=ci`` with more examples than a run of the suite takes (what
    hypothesis documents for CI) was refused as partial, as any profile of the run's was; a
    profile that checks less than the one the suite's conftest loads still is (real
    hypothesis, its profiles compared as the conftests registered them)."""
    root = make(
        tmp_path / "p",
        {"tests/conftest.py": HYPOTHESIS_CONFTEST, "tests/test_h.py": HYPOTHESIS_TEST},
    )
    profile, _, when = loaded.partition(" ")
    env = subprocess_env(LOADED=profile, PYTEST_ADDOPTS="", AT_CONFIGURE="1" if when else "")
    proc = run_pytest(root, "-p", "no:cacheprovider", f"--hypothesis-profile={chosen}", env=env)
    assert proc.returncode == 0, proc.stdout
    assert_partial(root, "--hypothesis-profile", partial)


@pytest.mark.parametrize("keeps_digits", [True, False])
def test_a_lower_cov_precision_counts_as_the_installed_coverage_rounds(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, keeps_digits: bool
) -> None:
    """coverage 7.7 on rounds the total to at least the threshold's own digits (45.55: two),
    whatever the precision; an older coverage rounds to the precision alone, where 45.5
    rounded to 46 passes a threshold of 45.55 that the suite's precision of 2 fails."""
    import coverage.results

    if not keeps_digits:
        monkeypatch.delattr(coverage.results, "_fail_under_precision", raising=False)
    else:
        assert hasattr(coverage.results, "_fail_under_precision"), "coverage >= 7.7 expected"
    suite = ["--cov=pkg", "--cov-fail-under=45.55", "--cov-precision=2"]
    found = overrides._coverage_lowered(["--cov-precision=0"], suite, tmp_path)
    assert ("--cov-precision=0" in found) is not keeps_digits, found


RUN_DATA = {".coveragerc": "[run]\ndata_file = run/data\n"}


@pytest.mark.parametrize(
    ("left", "variables", "config", "partial"),
    [
        ("", {}, {}, False),  # nothing to count but this run's own: a fresh run
        (".coverage", {}, {}, True),
        (".coverage.host.123.XyZ", {}, {}, True),  # a part coverage combines
        ("cov/data", {"COVERAGE_FILE": "cov/data"}, {}, True),
        ("cov/data.host.1.a", {"COVERAGE_FILE": "cov/data"}, {}, True),
        (".coverage", {"COVERAGE_FILE": "cov/data"}, {}, False),  # not the file coverage reads
        ("run/data", {}, RUN_DATA, True),  # where the configuration's [run] data_file puts it
        ("notes.coverage", {}, {}, False),
        # coverage's variables in its settings, and its own TOML file
        (
            "env/data",
            {"COVDIR": "env"},
            {".coveragerc": "[run]\ndata_file = ${COVDIR}/data\n"},
            True,
        ),
        ("toml/data", {}, {".coveragerc.toml": '[run]\ndata_file = "toml/data"\n'}, True),
        # started in tests/: coverage reads no configuration there, and its data is there
        ("tests/.coverage", {}, {**RUN_DATA, "CWD": "tests"}, True),
        ("run/data", {}, {**RUN_DATA, "CWD": "tests"}, False),
    ],
)
def test_cov_append_counts_only_where_an_earlier_run_left_coverage_data(
    tmp_path: Path, left: str, variables: dict[str, str], config: dict[str, str], partial: bool
) -> None:
    """``--cov-append`` counts the coverage data an earlier run left with this run's, where
    the suite's coverage has a threshold: where coverage's data file (``COVERAGE_FILE``, the
    ``data_file`` of the configuration file coverage reads in the folder pytest starts in,
    its variables put in; ``.coverage``) or a part of it was there as the run began, the run
    is not the suite's; where none was, it is a fresh run like any other."""
    site = installed_plugin(tmp_path / "site", "measuring", MEASURING_PLUGIN)
    files = {
        "pytest.ini": "[pytest]\naddopts = --cov=pkg --cov-fail-under=40\n",
        ".gitignore": ".coverage*\ncov/\nrun/\nenv/\ntoml/\nnotes.coverage\n",
        "tests/test_a.py": cases("a1", "a2"),
        **{k: v for k, v in config.items() if k != "CWD"},
    }
    root = make(tmp_path / "p", files)
    if left:
        (root / left).parent.mkdir(exist_ok=True)
        (root / left).write_bytes(b"SQLite format 3\x00")
    env = subprocess_env(PYTHONPATH=str(site), **variables)
    proc = run_pytest(
        root / config.get("CWD", ""), "-p", "no:cacheprovider", "--cov-append", env=env
    )
    assert proc.returncode == 0, proc.stdout
    assert_partial(root, "--cov-append", partial)


def test_coverage_settings_are_read_as_coverage_reads_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Where coverage is not importable, its settings are read from its files as it reads
    them: its own TOML file after `.coveragerc`, its variables put in."""
    from genstamp.overrides import _coverage_setting

    monkeypatch.setenv("COVDIR", "out")
    (tmp_path / "setup.cfg").write_text("[coverage:run]\ndata_file = ${COVDIR}/d.$$\n")
    assert _coverage_setting(tmp_path, None, "run", "data_file") == "out/d.$"
    (tmp_path / ".coveragerc.toml").write_text('[run]\ndata_file = "${NONE-x}/t"\n')
    assert _coverage_setting(tmp_path, None, "run", "data_file") == "x/t"
    (tmp_path / ".coveragerc").write_text("[run]\ndata_file = $COVDIR/rc\n")
    assert _coverage_setting(tmp_path, None, "run", "data_file") == "out/rc"
    assert _coverage_setting(tmp_path, "missing.rc", "run", "data_file") is None


PROJECT_CHECK = """\
import pytest

@pytest.hookimpl(tryfirst=True)
def pytest_runtest_call(item):
    if item.name == "test_checked":
        assert False, "the project's own check"
"""


@pytest.mark.parametrize(
    ("dist", "module", "where", "partial"),
    [
        ("proj", "proj.plugin", "src/proj/plugin.py", True),  # the project's own, editable
        ("helpers", "checks", "tools/checks.py", True),  # another name, a file of the tree
        ("proj", "projplug", "site", True),  # the project's own, installed as a copy
        ("extra", "extraplug", "site", False),  # an installed plugin: the environment's
        # one whose value names no module (pytest cannot load it: -p no: is how it runs)
        ("extra", "extra-plug-main", "", False),
    ],
)
def test_blocking_the_projects_own_entry_point_plugin_is_not_the_suite(
    tmp_path: Path, dist: str, module: str, where: str, partial: bool
) -> None:
    """``-p no:NAME`` of a ``pytest11`` entry point whose module is a file of the work tree, or
    of this project's own distribution, leaves the project's own checks out: the run is not
    the suite's (its test here passes only so). One of another distribution is the
    environment's (pytest-randomly's ``-p no:randomly``)."""
    files = {
        "pyproject.toml": '[project]\nname = "proj"\nversion = "0"\n[tool.pytest.ini_options]\n',
        "src/proj/__init__.py": "",
        "tests/test_a.py": cases("a1") + cases("checked"),
    }
    if where not in ("site", ""):
        files[where] = PROJECT_CHECK
    root = make(tmp_path / "p", files)
    site = tmp_path / "site"
    meta = site / f"{dist}-1.0.dist-info"
    meta.mkdir(parents=True)
    (meta / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: 1.0\n")
    (meta / "entry_points.txt").write_text(f"[pytest11]\nownchecks = {module}\n")
    if where == "site":
        (site / f"{module}.py").write_text(PROJECT_CHECK)
    path = [str(site), str(root / "src"), str(root / "tools")]
    env = subprocess_env(PYTHONPATH=":".join(path))
    if where:  # the project's own check loaded, as every run of the suite loads it: it fails
        assert "1 failed" in run_pytest(root, "-p", "no:cacheprovider", env=env).stdout
        stamp(root)  # a new generation: that run is no part of the next
    proc = run_pytest(root, "-p", "no:cacheprovider", "-p", "no:ownchecks", env=env)
    assert proc.returncode == 0, proc.stdout
    assert_partial(root, "-p no:ownchecks", partial)


# -- node ids that name every test of their files (H26 21) ----------------------------------------

IDS_SUITE = {
    "pyproject.toml": "[tool.pytest.ini_options]\n",
    "tests/test_one.py": "def test_add():\n    assert 1 + 1 == 2\n",
    "tests/test_two.py": (
        "import pytest\n\n\ndef test_mul():\n    assert 2 * 3 == 6\n\n\n"
        "@pytest.mark.parametrize('n', [0, 1])\ndef test_zero(n):\n    assert n * 0 == 0\n\n\n"
        "class TestInner:\n    def test_in(self):\n        assert True\n"
    ),
}
EVERY_ID = [
    "tests/test_one.py::test_add",
    "tests/test_two.py::test_mul",
    "tests/test_two.py::test_zero[0]",
    "tests/test_two.py::test_zero[1]",
    "tests/test_two.py::TestInner::test_in",
]


@pytest.mark.parametrize(
    ("ids", "whole"),
    [
        (EVERY_ID, True),
        ([*EVERY_ID[:4], "tests/test_two.py::TestInner"], True),
        (EVERY_ID[:-1], False),  # a class left out: its tests are not known to have run
        (EVERY_ID[:2] + EVERY_ID[3:], False),  # a parameter left out
        # --pyargs: module names, as pytest resolves them by the import path
        (["--pyargs", "tests.test_one", "tests.test_two::test_mul"], False),
        (["--pyargs", "tests.test_one", "tests.test_two"], True),
        (["--pyargs", *(i.replace(".py", "").replace("tests/", "tests.") for i in EVERY_ID)], True),
    ],
    ids=[
        "every-test",
        "a-class-whole",
        "control-a-class-left-out",
        "control-a-parameter-left",
        "control-pyargs-a-test-named",
        "pyargs-modules",
        "pyargs-every-test",
    ],
)
def test_node_ids_naming_every_test_of_their_files_are_the_whole_files(
    tmp_path: Path, ids: list[str], whole: bool
) -> None:
    """An IDE's "run all" names each test by its node id: every test of the suite ran, and a
    complete green run was refused as partial-run (H26 21). The run's own collection of each
    file (and of each class in it) says whether the ids name all it yields; one left out
    (a class, a parameter) leaves the file collected in part."""
    root = make(tmp_path / "repo", IDS_SUITE)
    proc = pytest_in(root, *ids)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    code, data, _ = verify(root)
    if whole:
        assert code == 0, rules(data)
    else:
        assert set(rules(data)) == {"partial-run"}, rules(data)
        assert "tests/test_two.py" in rules(data)["partial-run"]


@pytest.mark.parametrize(
    ("helper", "whole"),
    [
        ("class TestHelper:\n    __test__ = False\n\n    def test_no(self):\n        pass\n", True),
        (
            "class TestTool:\n    def __init__(self):\n        pass\n\n"
            "    def test_no(self):\n        pass\n",
            True,
        ),
        ("class TestLater:\n    pass\n", True),
        ("class TestMore:\n    def test_more(self):\n        pass\n", False),  # one left out
        # where warnings are errors, the class's "cannot collect" warning fails its file's
        # collection in a run of the whole file: not known to yield none
        ("class TestTool:\n    def __init__(self):\n        pass\n", False),
        ("class TestOuter:\n    class TestInner:\n        pass\n", True),  # nested, empty
        # its collection skips (`pytest.skip` in a conftest's pytest_generate_tests): a report
        # in a run of the file, here unknown: no traceback, the file in part
        ("class TestDB:\n    def test_q(self, db):\n        pass\n", False),
    ],
    ids=[
        "not-a-test",
        "with-init",
        "empty",
        "control-a-class-with-a-test",
        "with-init-where-warnings-are-errors",
        "nested-empty",
        "collection-skips",
    ],
)
def test_node_ids_naming_every_test_beside_a_class_that_yields_none(
    tmp_path: Path, helper: str, whole: bool
) -> None:
    """A file's test functions all named by node id, beside a ``Test*`` class that yields no
    test (``__test__ = False``, an ``__init__``, empty): the class is collected at the end, as
    a run of the whole file collects it, and the file is whole. A class with a test is not."""
    files = {**IDS_SUITE, "tests/test_one.py": IDS_SUITE["tests/test_one.py"] + "\n\n" + helper}
    if "__init__" in helper and not whole:
        files["pyproject.toml"] = '[tool.pytest.ini_options]\nfilterwarnings = ["error"]\n'
    if "TestDB" in helper:
        files["tests/conftest.py"] = (
            "import pytest\n\n\ndef pytest_generate_tests(metafunc):\n"
            "    if 'db' in metafunc.fixturenames:\n        pytest.skip('no database here')\n"
        )
    root = make(tmp_path / "repo", files)
    proc = pytest_in(root, "tests/test_one.py::test_add", "tests/test_two.py")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "PytestCollectionWarning" not in proc.stdout, proc.stdout
    code, data, _ = verify(root)
    if whole:
        assert code == 0, rules(data)
    else:
        assert set(rules(data)) == {"partial-run"}, rules(data)


def test_node_ids_of_a_file_may_name_a_test_the_configuration_deselects(tmp_path: Path) -> None:
    """An IDE's "run all" names every test of the file, one the suite's own `addopts = -m "not
    slow"` deselects too: the run is what a plain `pytest` runs, and is whole."""
    files = {
        "pyproject.toml": (
            '[tool.pytest.ini_options]\naddopts = \'-m "not slow"\'\nmarkers = ["slow"]\n'
        ),
        "tests/test_a.py": (
            "import pytest\n\n\ndef test_1():\n    pass\n\n\n"
            "@pytest.mark.slow\ndef test_slow():\n    pass\n"
        ),
    }
    root = make(tmp_path / "repo", files)
    proc = pytest_in(root, "tests/test_a.py::test_1", "tests/test_a.py::test_slow")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    code, data, _ = verify(root)
    assert code == 0, rules(data)
    assert pytest_in(root, "tests/test_a.py::test_1").returncode == 0  # the control: part
    assert set(rules(verify(root)[1])) == {"partial-run"}


def test_pyargs_of_a_namespace_package_resolve_as_pytest_resolves_them(tmp_path: Path) -> None:
    """With `consider_namespace_packages`, `--pyargs tests` is the first portion of `tests`
    on the import path (`src/tests`, by `pythonpath`): `tests.test_a::test_1` beside it still
    narrows `tests/test_a.py`, whose failing test did not run."""
    files = {
        "pyproject.toml": (
            '[tool.pytest.ini_options]\npythonpath = ["src"]\nconsider_namespace_packages = true\n'
        ),
        "tests/test_a.py": "def test_1():\n    pass\n\n\ndef test_2():\n    assert 0\n",
        "src/tests/test_s.py": "def test_s():\n    pass\n",
    }
    root = make(tmp_path / "repo", files)
    proc = pytest_in(root, "--pyargs", "tests", "tests.test_a::test_1")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    code, data, _ = verify(root)
    assert code == 1 and "partial-run" in rules(data), rules(data)
