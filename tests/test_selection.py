"""The suite from the tree, what a run covered, and the merge of parts, over data alone.

``selection.reasons`` (did every collected test run), ``suite.collect`` (which files the tree's
own configuration would collect), ``selection.configured_out`` (pytest's own expression
language over a test's markers) and ``coverage.merge`` (parts together): one row per rule,
with the rows that must stay full. The end-to-end stories are in test_suite_e2e.py.
"""

from __future__ import annotations

import ast
import base64
import json
from collections.abc import Mapping, Sequence
from pathlib import Path

import pytest
from _pytest.mark import MarkMatcher

from genstamp import binding, coverage, suite
from genstamp.selection import Facts, configured_out, reasons


@pytest.mark.parametrize(
    ("facts", "expected"),
    [
        (Facts(), []),
        (Facts(executed=4, collected=4), []),
        (Facts(node_ids=("t.py::a",)), ["node id t.py::a"]),
        (Facts(deselected=("a", "b", "c", "d")), ["4 deselected (a, b, c and 1 more)"]),
        (Facts(collect_errors=2), ["2 collection errors"]),
        (Facts(collect_errors=1), ["1 collection error"]),
        (Facts(partly=("a.py",)), ["1 file collected in part (a.py)"]),
        (Facts(interrupted=True), ["interrupted"]),
        (Facts(stopped="stopping after 1 failures"), ["stopped early (stopping after 1 failures)"]),
        (Facts(interrupted=True, stopped="x"), ["interrupted"]),
        (Facts(executed=1, collected=4), ["1 of 4 collected tests ran"]),
        (
            Facts(overrides=("-p no:unittest", "-W ignore::UserWarning")),
            ["the run's own options change the suite: -p no:unittest, -W ignore::UserWarning"],
        ),
    ],
)
def test_reasons(facts: Facts, expected: list[str]) -> None:
    assert reasons(facts) == expected


def tree(files: Mapping[str, str | bytes]) -> tuple[list[str], suite.Reader]:
    def read(path: str) -> bytes | None:
        text = files.get(path)
        return text.encode() if isinstance(text, str) else text

    return sorted(files), read


T = "def test_x():\n    pass\n"
DOCS = {
    "tests/test_usage.txt": ">>> 1\n1\n",
    "tests/guide.rst": ">>> 1\n1\n",
    "tests/data.txt": "",
    "tests/conftest.py": "",
    "src/pkg/__main__.py": "",
    "setup.py": "import os\n",  # no setuptools: pytest imports it as any module
    "venvx/lib/mod.py": "",
}
BASE = {
    "tests/test_a.py": T,
    "tests/sub/b_test.py": T,
    "tests/helper.py": "",
    "src/pkg/test_in_src.py": T,
    "build/test_built.py": T,
    ".hidden/test_h.py": T,
    "venvx/pyvenv.cfg": "",
    "venvx/test_v.py": T,
}

IN_SRC_AND_A = ["src/pkg/test_in_src.py", "tests/test_a.py"]


@pytest.mark.parametrize(
    ("extra", "expected"),
    [
        (
            {},
            ["src/pkg/test_in_src.py", "tests/sub/b_test.py", "tests/test_a.py"],
        ),
        (
            {"pytest.ini": "[pytest]\ntestpaths = tests\n"},
            ["tests/sub/b_test.py", "tests/test_a.py"],
        ),
        ({"pytest.ini": ""}, ["src/pkg/test_in_src.py", "tests/sub/b_test.py", "tests/test_a.py"]),
        (
            {"pyproject.toml": '[tool.pytest.ini_options]\ntestpaths = ["tests"]\n'},
            ["tests/sub/b_test.py", "tests/test_a.py"],
        ),
        ({"pyproject.toml": '[tool.pytest]\ntestpaths = ["src"]\n'}, ["src/pkg/test_in_src.py"]),
        ({"tox.ini": "[pytest]\ntestpaths = src\n"}, ["src/pkg/test_in_src.py"]),
        (  # iniconfig has no [DEFAULT] that every section inherits (configparser has)
            {"tox.ini": "[DEFAULT]\ntestpaths = src\n\n[pytest]\nminversion = 7\n"},
            ["src/pkg/test_in_src.py", "tests/sub/b_test.py", "tests/test_a.py"],
        ),
        (  # a value continues past a blank line, and a comment line, as iniconfig reads it
            {"setup.cfg": "[tool:pytest]\ntestpaths =\n\n# unit\n  tests/sub\n"},
            ["tests/sub/b_test.py"],
        ),
        (
            {"tox.ini": "[tox]\n", "setup.cfg": "[tool:pytest]\ntestpaths = src\n"},
            ["src/pkg/test_in_src.py"],
        ),
        (
            {"pytest.ini": "[pytest]\ntestpaths = tests\npython_files = test_*.py\n"},
            ["tests/test_a.py"],
        ),
        # saved with a byte order mark: pytest reads past it, and so its settings apply
        ({"pytest.ini": "\ufeff[pytest]\ntestpaths = src\n"}, ["src/pkg/test_in_src.py"]),
        ({"setup.cfg": "\ufeff[tool:pytest]\ntestpaths = src\n"}, ["src/pkg/test_in_src.py"]),
        # pytest's keys keep their case: `TestPaths` is no setting of pytest's
        (
            {"pytest.ini": "[pytest]\nTestPaths = tests\n"},
            ["src/pkg/test_in_src.py", "tests/sub/b_test.py", "tests/test_a.py"],
        ),
        # a value-taking option of addopts: its value names no test path
        (
            {"pytest.ini": "[pytest]\naddopts = --log-disable tests\n"},
            ["src/pkg/test_in_src.py", "tests/sub/b_test.py", "tests/test_a.py"],
        ),
        # an ignore glob that names a folder prunes it, as pytest asks of every folder
        ({"pytest.ini": "[pytest]\naddopts = --ignore-glob=*/sub\n"}, IN_SRC_AND_A),
        ({"pytest.ini": "[pytest]\naddopts = --ignore-glob=tests/s*\n"}, IN_SRC_AND_A),
        ({"tests/conftest.py": 'collect_ignore_glob = ["su?"]\n'}, IN_SRC_AND_A),
        ({"conftest.py": 'collect_ignore_glob = ["tests/sub"]\n'}, IN_SRC_AND_A),
        # a file glob still needs the file: the folder's name alone is not it
        (
            {"pytest.ini": "[pytest]\naddopts = --ignore-glob=*/sub/*.txt\n"},
            ["src/pkg/test_in_src.py", "tests/sub/b_test.py", "tests/test_a.py"],
        ),
        (
            {"pytest.ini": "[pytest]\nnorecursedirs = sub src\n"},  # replaces the defaults
            [".hidden/test_h.py", "build/test_built.py", "tests/test_a.py"],
        ),
        (
            {"pytest.ini": "[pytest]\ntestpaths = tests\naddopts = --ignore=tests/sub -q\n"},
            ["tests/test_a.py"],
        ),
        (
            {"pytest.ini": "[pytest]\ntestpaths = tests\naddopts = --ignore-glob=*/b_*\n"},
            ["tests/test_a.py"],
        ),
        (
            {"tests/conftest.py": 'collect_ignore = ["sub"]\ncollect_ignore_glob = ["test_a*"]\n'},
            ["src/pkg/test_in_src.py"],
        ),
        (
            {"conftest.py": 'collect_ignore = ["src"]\ncollect_ignore.append("tests/sub")\n'},
            ["tests/test_a.py"],
        ),
        (  # computed: the files stay in the suite
            {"conftest.py": "import sys\ncollect_ignore = [p for p in sys.path]\n"},
            ["src/pkg/test_in_src.py", "tests/sub/b_test.py", "tests/test_a.py"],
        ),
        (  # both unpacked from literals at once
            {"conftest.py": 'collect_ignore, collect_ignore_glob = ["tests/sub"], ["src/*"]\n'},
            ["tests/test_a.py"],
        ),
        (  # imported: as computed (the files stay, and it is said)
            {"conftest.py": "from ignores import collect_ignore\n"},
            ["src/pkg/test_in_src.py", "tests/sub/b_test.py", "tests/test_a.py"],
        ),
        ({"pytest.ini": "[pytest]\ntestpaths = tests/test_a.py\n"}, ["tests/test_a.py"]),
        ({"pytest.ini": "[pytest]\ntestpaths = t*s\n"}, ["tests/sub/b_test.py", "tests/test_a.py"]),
        # pytest 9's own TOML files come first, and count even without their table
        (
            {"pytest.toml": '[pytest]\ntestpaths = ["src"]\n', "pytest.ini": "[pytest]\n"},
            ["src/pkg/test_in_src.py"],
        ),
        ({".pytest.toml": '[pytest]\npython_files = ["*_test.py"]\n'}, ["tests/sub/b_test.py"]),
        (
            {"pytest.toml": "", "tox.ini": "[pytest]\ntestpaths = src\n"},
            ["src/pkg/test_in_src.py", "tests/sub/b_test.py", "tests/test_a.py"],
        ),
        # paths in addopts are what pytest collects; testpaths then go unused
        (
            {"pytest.ini": "[pytest]\ntestpaths = src\naddopts = -q tests/sub -p xdist\n"},
            ["tests/sub/b_test.py"],
        ),
        (
            {"pytest.ini": "[pytest]\naddopts = --cov src -n 2 tests/test_a.py::test_x\n"},
            ["tests/test_a.py"],
        ),
        (  # a word that names nothing in the tree is some option's value, not a path
            {"pytest.ini": "[pytest]\ntestpaths = tests\naddopts = --myplugin-out report\n"},
            ["tests/sub/b_test.py", "tests/test_a.py"],
        ),
        # norecursedirs with a "/" matches the folder's path, as pytest's fnmatch_ex
        (
            {"pytest.ini": "[pytest]\nnorecursedirs = tests/sub\n"},
            [
                ".hidden/test_h.py",
                "build/test_built.py",
                "src/pkg/test_in_src.py",
                "tests/test_a.py",
            ],
        ),
        # testpaths are globbed recursively: ** spans folders, never hidden ones
        ({"pytest.ini": "[pytest]\ntestpaths = src/**/test_*.py\n"}, ["src/pkg/test_in_src.py"]),
        (
            {"pytest.ini": "[pytest]\ntestpaths = **/sub\n", ".x/sub/test_y.py": T},
            ["tests/sub/b_test.py"],
        ),
        (  # under --pyargs testpaths are module names, in the folder or its src/
            {"pytest.ini": "[pytest]\naddopts = --pyargs\ntestpaths = pkg tests.sub\n"},
            ["src/pkg/test_in_src.py", "tests/sub/b_test.py"],
        ),
        (  # an @FILE within an @FILE, read in turn (argparse)
            {
                "pytest.ini": "[pytest]\naddopts = @args.txt\n",
                "args.txt": "@more.txt\n",
                "more.txt": "--ignore=tests/sub\n",
            },
            ["src/pkg/test_in_src.py", "tests/test_a.py"],
        ),
        (  # an @FILE of addopts: its arguments, one a line (pytest 8.2 reads them)
            {
                "pytest.ini": "[pytest]\naddopts = -q @args.txt\n",
                "args.txt": "--ignore=tests/sub\n",
            },
            ["src/pkg/test_in_src.py", "tests/test_a.py"],
        ),
        (  # ... or a folder the project maps its packages from (package-dir "" = "lib")
            {
                "pytest.ini": "[pytest]\naddopts = --pyargs\ntestpaths = mylib\n",
                "lib/mylib/tests/test_m.py": T,
            },
            ["lib/mylib/tests/test_m.py"],
        ),
        (  # a name no folder of the tree holds: a package installed from elsewhere (or an
            # error of the run): pytest searches no folder of the tree, nor does the suite
            {"pytest.ini": "[pytest]\naddopts = --pyargs\ntestpaths = elsewhere\n"},
            [],
        ),
        (  # a folder named so holding no Python file is no package (docs/mylib)
            {
                "pytest.ini": "[pytest]\naddopts = --pyargs\ntestpaths = mylib\n",
                "docs/mylib/index.rst": "mylib\n",
                "src/python/mylib/test_m.py": T,
            },
            ["src/python/mylib/test_m.py"],
        ),
        # pytest's doctest plugin: test*.txt files by default, other globs when configured,
        # none without the plugin; every module with --doctest-modules (not __main__.py, nor
        # a setuptools setup.py)
        (
            {"pytest.ini": "[pytest]\ntestpaths = tests\n", **DOCS},
            ["tests/sub/b_test.py", "tests/test_a.py", "tests/test_usage.txt"],
        ),
        (
            {"pytest.ini": "[pytest]\ntestpaths = tests\naddopts = --doctest-glob=*.rst\n", **DOCS},
            ["tests/guide.rst", "tests/sub/b_test.py", "tests/test_a.py"],
        ),
        (
            {"pytest.ini": "[pytest]\ntestpaths = tests\naddopts = -p no:doctest\n", **DOCS},
            ["tests/sub/b_test.py", "tests/test_a.py"],
        ),
        # ... and plugins that take its place: xdoctest's --xdoctest unregisters it (and
        # collects every module's doctests); pytest-doctestplus, on, collects the globs given
        # and *.rst for --doctest-rst (or its doctest_rst setting), no default; off, its
        # --doctest-rst changes nothing (as `--co` shows them, h195, h196)
        (  # (every module: xdoctest collects their doctests, h196)
            {"pytest.ini": "[pytest]\ntestpaths = tests\naddopts = --xdoctest\n", **DOCS},
            ["tests/conftest.py", "tests/helper.py", "tests/sub/b_test.py", "tests/test_a.py"],
        ),
        (  # its primary spelling, and its own globs of text files (h197)
            {
                "pytest.ini": "[pytest]\ntestpaths = tests\n"
                "addopts = --xdoctest-modules --xdoctest-glob=*.rst\n",
                **DOCS,
            },
            [
                "tests/conftest.py",
                "tests/guide.rst",
                "tests/helper.py",
                "tests/sub/b_test.py",
                "tests/test_a.py",
            ],
        ),
        (  # doctestplus's setting with --doctest-modules: off, pytest's plugin collects (h197)
            {
                "pytest.ini": "[pytest]\ntestpaths = tests\ndoctest_plus = enabled\n"
                "addopts = --doctest-modules --doctest-rst\n",
                **DOCS,
            },
            [
                "tests/conftest.py",
                "tests/helper.py",
                "tests/sub/b_test.py",
                "tests/test_a.py",
                "tests/test_usage.txt",
            ],
        ),
        (
            {"pytest.ini": "[pytest]\ntestpaths = tests\naddopts = --doctest-plus\n", **DOCS},
            ["tests/sub/b_test.py", "tests/test_a.py"],
        ),
        (
            {
                "pytest.ini": "[pytest]\ntestpaths = tests\n"
                "addopts = --doctest-plus --doctest-rst\n",
                **DOCS,
            },
            ["tests/guide.rst", "tests/sub/b_test.py", "tests/test_a.py"],
        ),
        (
            {
                "pytest.ini": "[pytest]\ntestpaths = tests\ndoctest_plus = enabled\n"
                "doctest_rst = true\n",
                **DOCS,
            },
            ["tests/guide.rst", "tests/sub/b_test.py", "tests/test_a.py"],
        ),
        (
            {
                "pytest.ini": "[pytest]\ntestpaths = tests\n"
                "addopts = --doctest-plus --doctest-rst --doctest-glob=test*.txt\n",
                **DOCS,
            },
            ["tests/guide.rst", "tests/sub/b_test.py", "tests/test_a.py", "tests/test_usage.txt"],
        ),
        (
            {"pytest.ini": "[pytest]\ntestpaths = tests\naddopts = --doctest-rst\n", **DOCS},
            ["tests/sub/b_test.py", "tests/test_a.py", "tests/test_usage.txt"],
        ),
        # a text file testpaths names (or globs) is collected when a doctest glob takes it
        (
            {
                "pytest.ini": "[pytest]\ntestpaths = tests README.md docs/*.md\n"
                "addopts = --doctest-glob=*.md\n",
                "README.md": ">>> 1\n1\n",
                "docs/guide.md": ">>> 1\n1\n",
            },
            ["README.md", "docs/guide.md", "tests/sub/b_test.py", "tests/test_a.py"],
        ),
        (  # and not without one
            {
                "pytest.ini": "[pytest]\ntestpaths = tests README.md\n",
                "README.md": ">>> 1\n1\n",
            },
            ["tests/sub/b_test.py", "tests/test_a.py"],
        ),
        (
            {
                "pytest.ini": "[pytest]\naddopts = --doctest-modules\nnorecursedirs = build .*\n",
                **DOCS,
            },
            [
                "setup.py",
                "src/pkg/test_in_src.py",
                "tests/conftest.py",
                "tests/helper.py",
                "tests/sub/b_test.py",
                "tests/test_a.py",
                "tests/test_usage.txt",
            ],
        ),
    ],
)
def test_the_suite_is_what_the_trees_configuration_collects(
    extra: dict[str, str], expected: list[str]
) -> None:
    listing, read = tree({**BASE, **extra})
    assert list(suite.collect(listing, read).files) == expected


COLLECTS = "def pytest_collect_file(parent, file_path):\n    return None\n"
OFFERED = ["tests/conftest.py", "tests/helper.py", "tests/spec/a.yaml"]


@pytest.mark.parametrize(
    ("extra", "expected", "conditional"),
    [
        ({}, [], []),  # no conftest of its own collector: nothing more than the suite's files
        (  # every file below its folder the walk reaches, the suite's own aside
            {"tests/conftest.py": COLLECTS, "tests/spec/a.yaml": "", "tests/pkg/__init__.py": ""},
            OFFERED,
            [],
        ),
        (  # defined under a condition (an optional import): offered where a run had it
            {
                "tests/conftest.py": "try:\n    from yamlspec import pytest_collect_file\n"
                "except ImportError:\n    pass\n",
                "tests/spec/a.yaml": "",
            },
            [],
            [(f, "tests") for f in OFFERED],
        ),
        (  # what the configuration or a conftest's list ignores, or a folder pruned, is none
            {
                "pytest.ini": "[pytest]\naddopts = --ignore=tests/old\n",
                "tests/conftest.py": COLLECTS + "collect_ignore = ['spec/skip.yaml']\n",
                "tests/spec/a.yaml": "",
                "tests/spec/skip.yaml": "",
                "tests/old/b.yaml": "",
                "tests/node_modules/c.yaml": "",
                "tests/sub/conftest.py": "",
            },
            [*OFFERED, "tests/sub/conftest.py"],
            [],
        ),
        (  # nor what a computed list may ignore (h202)
            {
                "tests/conftest.py": COLLECTS + "collect_ignore = [compute('fixtures')]\n",
                "tests/spec/a.yaml": "",
            },
            [],
            [],
        ),
        (  # a conftest that ignores what it chooses: asked for, unless a run saw it ignore it
            {
                "tests/conftest.py": COLLECTS,
                "tests/spec/conftest.py": "def pytest_ignore_collect(collection_path):\n"
                "    return None\n",
                "tests/spec/a.yaml": "",
            },
            [*OFFERED, "tests/spec/conftest.py"],
            [],
        ),
        ({"tests/conftest.py": "def collect_file():\n    pass\n"}, [], []),  # another name
    ],
)
def test_the_files_a_conftests_own_collector_is_offered(
    extra: dict[str, str], expected: list[str], conditional: list[tuple[str, str]]
) -> None:
    listing, read = tree({**BASE, **extra})
    found = suite.collect(listing, read)
    assert (list(found.offered), list(found.offered_if)) == (expected, sorted(conditional))
    # offered where a run had the collector, and not below what its own hook ignored
    reached = {"tests/helper.py"}
    records = ["collects\ttests\t", "hook\ttests\ttests/spec"]
    assert suite.unreached(found, reached, records) == [
        f for f in [*expected, *dict(conditional)] if f not in reached and "/spec/" not in f
    ]


def test_the_files_a_folders_own_collector_yields_replace_what_pytests_would_find() -> None:
    """``suite.directed``: below a folder a collector of its own took, the files it yielded
    and those below the folders it handed on; a collector inside one handed on decides there."""
    files = ["a/test_x.py", "t/test_1.py", "t/test_2.py", "t/sub/test_3.py", "t/deep/test_4.py"]
    records = [
        "directory\tt\t",
        "yields\tt\tt/test_1.py",
        "yields\tt\tt/checks.py",
        "within\tt\tt/sub",
        "within\tt\tt/deep",
        "directory\tt/deep\t",  # (yields nothing)
        "collects\tt\t",  # (another kind: none of this)
    ]
    assert sorted(suite.directed(files, records)) == [
        "a/test_x.py",
        "t/checks.py",
        "t/sub/test_3.py",
        "t/test_1.py",
    ]
    assert suite.directed(files, records, "a") == files  # a suite with none of them
    assert suite.directed(files, ["hook\tt\tt/test_2.py"]) == files


def test_a_computed_collect_ignore_is_named() -> None:
    listing, read = tree({**BASE, "conftest.py": "collect_ignore = compute()\n"})
    found = suite.collect(listing, read)
    assert found.problems == (
        "conftest.py computes collect_ignore: its files are taken as in the suite (genstamp"
        " reads collect_ignore as a list of literal strings: write it so, or ignore those"
        " files with --ignore in the configuration's addopts)",
    )


def test_a_declared_suite_uses_its_own_configuration() -> None:
    files = {
        "svc_a/pytest.ini": "[pytest]\ntestpaths = tests\n",
        "svc_a/tests/test_a.py": T,
        "svc_a/scripts/test_not.py": T,
        "svc_b/tests/test_b.py": T,
        "pytest.ini": "[pytest]\ntestpaths = nowhere\n",
    }
    listing, read = tree(files)
    a, b = suite.collect_all(listing, read, ["svc_a", "svc_b/"])
    assert a.files == ("svc_a/tests/test_a.py",) and a.config.source == "svc_a/pytest.ini"
    # svc_b has none: pytest run there finds the top's, whose testpaths are its folder's
    assert b.files == ("svc_b/tests/test_b.py",) and b.config.source == "pytest.ini"
    assert b.config.testpaths == ()


@pytest.mark.parametrize(
    ("addopts", "markexpr", "keyword"),
    [
        ('-m "not slow"', "not slow", ""),
        ("-m slow -m 'not db'", "not db", ""),
        ("-mslow -k 'add or sub'", "slow", "add or sub"),
        ("-q --strict-markers", "", ""),
        ("-p no:randomly -k slow --deselect tests/test_a.py::test_x", "", "slow"),
    ],
)
def test_the_configurations_own_selection(addopts: str, markexpr: str, keyword: str) -> None:
    _, read = tree({"pytest.ini": f"[pytest]\naddopts = {addopts}\n"})
    cfg = suite.read_config(read)
    assert (cfg.markexpr, cfg.keyword) == (markexpr, keyword)
    assert cfg.deselect == (("tests/test_a.py::test_x",) if "--deselect" in addopts else ())
    assert cfg.paths == ()


@pytest.mark.parametrize(
    ("name", "text"),
    [
        ("pyproject.toml", "[tool.pytest.ini_options\n"),
        ("pytest.ini", "[pytest]\naddopts = -q\n[pytest]\n"),  # a section twice
        ("tox.ini", "addopts = -q\n[pytest]\n"),  # an option before any section
        ("pytest.ini", b"[pytest]\naddopts = \xff\n"),  # not UTF-8
    ],
)
def test_an_unreadable_configuration_is_named(name: str, text: str | bytes) -> None:
    _, read = tree({name: text})
    cfg = suite.read_config(read)
    assert cfg.problems and f"{name} cannot be read" in cfg.problems[0]


def marks(*names: str) -> MarkMatcher:
    return MarkMatcher.from_markers([pytest.Mark(n, (), {}) for n in names])


@pytest.mark.parametrize(
    ("markexpr", "names", "out"),
    [
        ("not slow", ("slow",), True),
        ("not slow", ("db",), False),
        ("not (slow or db)", ("db",), True),
        ("", ("slow",), False),
        ("not slow and", ("slow",), False),  # pytest refuses it: deselects nothing here
    ],
)
def test_configured_out_uses_pytests_expressions(
    markexpr: str, names: tuple[str, ...], out: bool
) -> None:
    assert configured_out(markexpr, "", marks(*names), lambda name: False) is out


A1, B1, B2 = "tests/a.py::t1", "tests/b.py::t1", "tests/b.py::t2"
SUITE = (suite.Suite("", suite.PytestConfig(""), ("tests/a.py", "tests/b.py"), ()),)


def test_coverage_round_trips_and_refuses_other_versions() -> None:
    cov = coverage.new(["tests/b.py", "tests/a.py"], [A1, B1], {A1: "passed", B1: "xfailed"}, [B2])
    assert coverage.from_json(cov.to_json()) == cov
    with pytest.raises(ValueError, match="coverage format 3"):
        coverage.from_json(cov.to_json().replace('"version":1', '"version":3'))
    with pytest.raises(ValueError, match="digests"):
        coverage.from_json(
            cov.to_json()
            .replace('"ran":2', '"ran":2,"x":0')
            .replace('tests/b.py"', 'tests/c.py"', 1)
        )
    # a file name may hold a newline (no path holds NUL)
    odd = "tests/test_a\nb.py::test_x"
    cov = coverage.new(["tests/test_a\nb.py"], [odd], {odd: "passed"}, [odd + "2"])
    assert '"version":2' in cov.to_json()  # only then: an earlier genstamp reads the rest
    assert coverage.from_json(cov.to_json()) == cov


@pytest.mark.parametrize("field", ["outcomes", "unran"])
def test_a_packed_field_edited_by_hand_is_a_value_error(field: str) -> None:
    """Base64 of what is no zlib data (a field edited by hand): ValueError, which the gate
    turns into one line, never zlib's own error and a traceback."""
    cov = coverage.new(["tests/a.py"], [A1], {A1: "passed"}, [B2])
    data = json.loads(cov.to_json())
    data[field] = base64.b64encode(b"notzlib").decode()
    with pytest.raises(ValueError, match="not a packed list"):
        coverage.from_json(json.dumps(data))


def test_coverage_of_the_format_before_reads() -> None:
    """Format 1 separated its lists by newlines: a record an earlier genstamp wrote reads."""
    import base64
    import json
    import zlib

    def pack(lines: list[str]) -> str:
        return base64.b64encode(zlib.compress("\n".join(lines).encode())).decode()

    outcomes = {A1: "passed", B1: "failed"}
    record = {
        "version": 1,
        "files": ["tests/a.py"],
        "files_digest": binding.digest(["tests/a.py"]),
        "selected": 2,
        "selected_digest": binding.digest(sorted([A1, B1])),
        "ran": 2,
        "ran_digest": coverage.new([], [], outcomes, []).ran_digest,
        "outcomes": pack([f"{o}\t{n}" for n, o in sorted(outcomes.items())]),
        "unran": pack([B2]),
    }
    cov = coverage.from_json(json.dumps(record))
    assert cov.outcomes == outcomes and cov.unran == (B2,)


def test_collection_errors_round_trip_and_a_record_without_them_reads_as_none() -> None:
    cov = coverage.new(["tests/a.py"], [A1], {A1: "passed"}, [], ["tests/b.py"])
    assert coverage.from_json(cov.to_json()).errors == ("tests/b.py",)
    clean = coverage.new(["tests/a.py"], [A1], {A1: "passed"}, [])
    assert '"errors"' not in clean.to_json()  # written as before where collection held
    assert coverage.from_json(clean.to_json()).errors == ()


def test_a_part_with_collection_errors_has_a_name_of_its_own() -> None:
    clean = coverage.new(["tests/a.py"], [A1], {A1: "passed"}, [])
    assert clean.part_key == clean.ran_digest[:16]
    broken = clean._replace(errors=("tests/b.py",))
    other = clean._replace(errors=("tests/c.py",))
    assert len({clean.part_key, broken.part_key, other.part_key}) == 3
    assert broken.part_key == coverage.new(["x"], [A1], {A1: "failed"}, [], ["tests/b.py"]).part_key


def _cov(files: list[str], ran: list[str], errors: Sequence[str] = ()) -> coverage.Coverage:
    return coverage.new(files, ran, dict.fromkeys(ran, "passed"), [], errors)


@pytest.mark.parametrize(
    ("later", "stands_for_it", "ran_again"),
    [
        (_cov(["tests/a.py", "tests/b.py"], [A1, B1]), True, False),  # collected b and ran a
        (_cov(["tests/a.py", "tests/b.py"], [B1])._replace(outcomes={A1: "failed"}), False, False),
        (_cov(["tests/b.py"], [B1]), False, False),  # did not run a again
        # did not look at b; run before the broken one, it is a run of a that one ran again
        (_cov(["tests/a.py"], [A1]), False, True),
        (_cov(["tests/a.py", "tests/b.py"], []), False, False),  # executed nothing
        (_cov(["tests/a.py"], [A1], ["tests/b.py"]), False, False),  # b failed again
    ],
)
def test_a_later_run_stands_for_a_failed_collection_when_it_collects_that_file(
    later: coverage.Coverage, stands_for_it: bool, ran_again: bool
) -> None:
    earlier = _cov(["tests/a.py"], [A1], ["tests/b.py"])
    assert later.supersedes(earlier) is stands_for_it
    parts = [coverage.Part("old", earlier), coverage.Part("new", later)]
    assert coverage.superseded(parts) == ({"old"} if stands_for_it else set())
    # only a later run stands for an earlier one whose collection failed; a clean earlier one
    # the later ran again (each test, each file) adds nothing to the merge
    assert coverage.superseded(parts[::-1]) == ({"new"} if ran_again else set())
    assert not later._replace(errors=()).supersedes(earlier._replace(errors=()))


@pytest.mark.parametrize(
    ("newer", "gone"),
    [
        ([_cov(["tests/a.py"], [A1]), _cov(["tests/b.py"], [B1])], True),  # each file again
        ([_cov(["tests/a.py", "tests/b.py"], [A1, B1])], True),
        ([_cov(["tests/b.py"], [B1])], False),  # a's pass is the whole run's alone
        ([_cov(["tests/a.py"], [A1, B1])], False),  # b's file not collected again
        ([_cov(["tests/a.py"], [A1]), _cov(["tests/b.py"], [B1], ["tests/c.py"])], True),
    ],
)
def test_an_older_part_whose_tests_newer_parts_all_ran_again_adds_nothing(
    newer: list[coverage.Coverage], gone: bool
) -> None:
    """The whole suite, then each of its files run again (after a failure between): the
    newer parts are the word on every test the whole run ran, and it is left out of the merge
    (which would otherwise be as old as it, older than the failure)."""
    whole = _cov(["tests/a.py", "tests/b.py"], [A1, B1])
    parts = [
        coverage.Part("whole", whole),
        *(coverage.Part(f"p{n}", c) for n, c in enumerate(newer)),
    ]
    assert ("whole" in coverage.superseded(parts)) is gone
    # a whole run whose session failed, every test passed (an unused snapshot, a coverage
    # threshold): the files run again, each in a part, never check the whole session
    parts[0] = parts[0]._replace(failed=True)
    assert "whole" not in coverage.superseded(parts)


@pytest.mark.parametrize(
    ("collector", "files", "covered"),
    [
        ("tests", ["tests/a.py"], True),  # a folder (its conftest failed): a file under it
        ("tests/b.py::TestX", ["tests/b.py"], True),  # a class: its file
        ("tests/b", ["tests/b.py"], False),  # not a folder of it
        ("", ["tests/a.py"], True),  # the run's root
    ],
)
def test_which_collector_a_file_collects(collector: str, files: list[str], covered: bool) -> None:
    earlier = _cov([], [], [collector])
    assert _cov(files, [A1]).supersedes(earlier) is covered


def test_ten_thousand_tests_stay_small() -> None:
    ids = [f"tests/test_mod{i // 50:03d}.py::test_case_{i}" for i in range(10_000)]
    text = coverage.new([], ids, dict.fromkeys(ids, "passed"), []).to_json()
    assert len(text) < 100_000


@pytest.mark.parametrize(
    ("parts", "missing", "unran", "conflicts"),
    [
        ([(["tests/a.py", "tests/b.py"], {A1: "passed", B1: "passed"}, [])], [], [], 0),
        ([(["tests/a.py"], {A1: "passed"}, [])], ["tests/b.py"], [], 0),
        ([(["tests/a.py", "tests/b.py"], {A1: "passed"}, [B1])], [], [B1], 0),
        (
            [
                (["tests/a.py", "tests/b.py"], {A1: "passed"}, [B1]),
                (["tests/a.py", "tests/b.py"], {B1: "passed"}, [A1]),
            ],
            [],
            [],
            0,
        ),
        (
            [
                (["tests/a.py"], {A1: "passed"}, []),
                (["tests/a.py", "tests/b.py"], {A1: "failed", B1: "passed"}, []),
            ],
            [],
            [],
            1,
        ),
    ],
)
def test_merge(
    parts: list[tuple[list[str], dict[str, str], list[str]]],
    missing: list[str],
    unran: list[str],
    conflicts: int,
) -> None:
    merged = coverage.merge(
        [
            coverage.Part(f"p{i}", coverage.new(files, list(out), out, left))
            for i, (files, out, left) in enumerate(parts)
        ],
        SUITE,
    )
    assert list(merged.missing) == missing
    assert list(merged.unran) == unran
    assert len(merged.conflicts) == conflicts


def test_a_file_collected_in_part_is_not_told_uncollected() -> None:
    """A file some of whose tests ran (``tests/b.py::t1`` named) was collected in part, and
    the gate says so; a file no part touched was not collected (probe B18: both were told
    "not collected")."""
    named = coverage.Part(
        "p", coverage.new(["tests/a.py"], [A1, B1], {A1: "passed", B1: "passed"}, [])
    )
    assert coverage.merge([named], SUITE).left_out() == [
        "1 file: tests/b.py of the suite collected in part (tests that no part collected did"
        " not run)"
    ]
    alone = coverage.Part("q", coverage.new(["tests/a.py"], [A1], {A1: "passed"}, []))
    assert coverage.merge([alone], SUITE).left_out() == [
        "1 file: tests/b.py of the suite not collected"
    ]


def test_missing_files_are_described_by_folder() -> None:
    files = [f"tests/integration/test_{i}.py" for i in range(41)] + ["tests/test_x.py"]
    assert suite.describe_missing(files) == (
        "42 files: tests/integration (41 files), tests/test_x.py"
    )


def test_the_decisions_do_no_io() -> None:
    """selection, suite, ini and coverage read no file and start no process: handed data."""
    import genstamp.coverage
    import genstamp.ini
    import genstamp.selection
    import genstamp.suite

    allowed = {
        "__future__", "annotations", "typing", "Any", "NamedTuple", "ast", "ini",
        "fnmatch", "hashlib", "posixpath", "shlex", "sys", "tomllib", "tomli", "collections.abc",
        "Callable", "Iterable", "Iterator", "Sequence", "Mapping", "base64", "json", "zlib",
        "genstamp", "suite", "_pytest.mark.expression", "Expression", "re", "binding",
        "TYPE_CHECKING", "genstamp.suite", "describe_missing", "observed_ignored", "unreached",
        "directed",
        "genstamp.typedtuple",
        "stdlib",  # the standard library's tomllib and shlex, found as the import system does
        "versioned",  # its version check (reading a file imports what reads it, in the call)
    }  # fmt: skip
    for module in (genstamp.selection, genstamp.suite, genstamp.coverage, genstamp.ini):
        tree_ = ast.parse(Path(str(module.__file__)).read_text())
        imported = {
            alias.name
            for node in ast.walk(tree_)
            if isinstance(node, ast.Import | ast.ImportFrom)
            for alias in node.names
        } | {node.module for node in ast.walk(tree_) if isinstance(node, ast.ImportFrom)}
        assert imported <= allowed, (module.__name__, imported - allowed)


def _pytest_options(kind: str) -> set[str]:
    """The names of pytest's own options of ``kind``: "value" (the next word is its value)
    or "flag" (it takes none)."""
    from _pytest.config import get_config

    parser = get_config(args=[])._parser
    flags = {"store_true", "store_false", "store_const", "count", "help", "version"}
    out: set[str] = set()
    for group in [*parser._groups, parser._anonymous]:
        for option in group.options:
            attrs = option.attrs()
            if attrs.get("action") in flags or attrs.get("nargs") == 0:
                found = "flag"
            elif attrs.get("nargs") != "?" and "Action" not in str(attrs.get("action")):
                found = "value"
            else:
                found = ""
            if found == kind:
                out.update(option.names())
    return out


def test_every_option_of_pytest_that_takes_a_value_is_known() -> None:
    """The configuration's ``addopts`` are split as pytest's own parser splits them: a value
    taken for a path would make the suite the files under it."""
    assert _pytest_options("value") - suite.VALUED == set()


def test_every_flag_of_pytest_is_known() -> None:
    """A word after one of pytest's own flags in ``addopts`` is a path: never read both ways."""
    assert {n for n in _pytest_options("flag") if n.startswith("--")} - suite.FLAGS == set()


@pytest.mark.parametrize(
    ("args", "known", "paths", "maybe"),
    [
        (["--golden-dir", "tests/golden"], None, [], ["tests/golden"]),
        (["--golden-dir", "tests/golden"], {"--golden-dir": "value"}, [], []),
        (["--golden-dir", "tests/golden"], {"--golden-dir": "flag"}, ["tests/golden"], []),
        (["--golden-dir", "tests/golden"], {"--other": "value"}, [], ["tests/golden"]),
        (["-G", "tests/golden"], None, [], ["tests/golden"]),
        (["-G", "tests/golden"], {"-G": "value"}, [], []),
        (["--cov", "-m", "not slow", "tests"], None, ["tests"], []),
        (["--cov", "src", "tests"], None, ["tests"], []),
        (["--golden", "--cov"], {"--golden": "optional"}, [], []),
        (["--golden", "x", "tests"], {"--golden": "optional"}, ["tests"], []),
        (["--strict-markers", "tests"], None, ["tests"], []),
        (["--golden-dir=x", "tests"], None, ["tests"], []),
        (["-qm", "not slow", "tests"], None, ["tests"], []),
        (["-vx", "tests"], None, ["tests"], []),
    ],
)
def test_addopts_words_after_an_option_no_table_knows_are_read_both_ways(
    args: list[str], known: dict[str, str] | None, paths: list[str], maybe: list[str]
) -> None:
    taken = suite._options(args, known)
    assert (taken.get("", []), taken.get("maybe", [])) == (paths, maybe)


def test_a_word_read_both_ways_makes_the_suite_what_either_reading_collects() -> None:
    files = {
        "pytest.ini": b"[pytest]\naddopts = --golden-dir tests/golden\n",
        "tests/test_a.py": b"",
        "tests/golden/test_g.py": b"",
        "other/test_o.py": b"",
    }
    found = suite.collect(sorted(files), files.get)
    assert found.files == ("other/test_o.py", "tests/golden/test_g.py", "tests/test_a.py")
    told = suite.collect(sorted(files), files.get, known={"--golden-dir": "value"})
    assert told.files == found.files  # the value is no path: the folder is searched
    flag = suite.collect(sorted(files), files.get, known={"--golden-dir": "flag"})
    assert flag.files == ("tests/golden/test_g.py",)


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        ("tests/test_a.py", "tests/test_a.py"),
        ("tests//test_a.py", "tests/test_a.py"),
        ("./tests/test_a.py", "tests/test_a.py"),
        ("tests/../test_b.py", "test_b.py"),
        ("tests/.hidden/test_c.py", "tests/.hidden/test_c.py"),
        ("tests/", "tests"),
        ("", "."),
        ("../outside/test_d.py", None),
        ("a b/ü..py", "a b/ü..py"),
    ],
)
def test_a_collected_path_is_named_as_the_tree_names_it(
    tmp_path: Path, given: str, expected: str | None
) -> None:
    """The plugin names each collected file by its path in the tree: as `os.path.relpath`
    does, whatever `.`, `..` or doubled separators the path pytest gives holds."""
    from genstamp.pytest_plugin import Tally

    workdir = tmp_path / "repo"
    (workdir / "tests").mkdir(parents=True)
    tally = Tally(workdir)
    assert tally.tree_path(Path(f"{workdir}/{given}")) == expected


INI_TEXTS = [
    "[pytest]\naddopts = -q\n",
    "[DEFAULT]\naddopts = -x\n[pytest]\ntestpaths = a\n",
    "[pytest] # mine\naddopts = -q # kept, as pytest keeps it\n",
    "[pytest]\ntestpaths =\n    a\n\n    b\n# c\n  ; d\n    e\n",
    "[pytest]\nkey: value = x\nurl = http://x:1\nKey = Case\n",
    "\ufeff[pytest]\na=1\n",
    "[pytest]\n[unclosed\n",
    "[pytest]\na = 1\n[broken\n",
    "[pytest]\na = 1\na = 2\n",
    "[pytest]\n[pytest]\n",
    "a = 1\n[pytest]\n",
    "  continued\n[pytest]\n",
    "[pytest]\njust a line\n",
    "[]\n",
    "[pytest]\nempty =\n  then\n",
    "[tool:pytest]\n  \n\t\ntestpaths=x\n",
]


@pytest.mark.parametrize("text", INI_TEXTS)
def test_ini_files_read_as_iniconfig_reads_them(text: str, tmp_path: Path) -> None:
    """pytest's own parser is the oracle: the same sections and values, or an error for both."""
    import iniconfig

    from genstamp import ini

    path = tmp_path / "tox.ini"
    path.write_text(text, encoding="utf-8")
    try:
        parsed = iniconfig.IniConfig(str(path))  # as pytest calls it
    except iniconfig.ParseError:
        with pytest.raises(ValueError):
            ini.parse(text)
        return
    expected = {name: dict(parsed[name].items()) for name in parsed.sections}
    assert ini.parse(text) == expected


@pytest.mark.parametrize(
    "args",
    [
        ["-m", "not slow", "-k", "a or b"],
        ["-m=not slow", "-k=a"],
        ["-mnot slow", "-ka"],
        ["-qm", "not slow"],
        ["-qm=not slow"],  # argparse keeps the "=" of a bundled option's own value
        ["-o=python_files=check_*.py", "--override-ini=a=b", "-oc=d"],
        ["-W=error", "--pythonwarnings=ignore"],
        ["--deselect=tests/test_a.py::t", "--ignore=tests/x", "--ignore-glob=*_y.py"],
        ["tests", "--", "-m=not slow", "-k", "other"],  # after "--": paths
    ],
)
def test_addopts_values_are_read_as_pytest_s_own_parser_reads_them(args: list[str]) -> None:
    """The suite's ``addopts`` are read as pytest's argument parser reads them: the oracle is
    that parser, with pytest's options (``-p`` is the plugin manager's: its own test)."""
    from _pytest.config import get_config

    ns = get_config()._parser.parse_known_args(args)
    taken = suite._options(args)
    assert taken.get("-m", [""])[-1] == ns.markexpr
    assert taken.get("-k", [""])[-1] == ns.keyword
    assert taken.get("-o", []) == (ns.override_ini or [])
    assert taken.get("-W", []) == (ns.pythonwarnings or [])
    assert taken.get("--deselect", []) == (ns.deselect or [])
    assert taken.get("--ignore", []) == (ns.ignore or [])
    assert taken.get("--ignore-glob", []) == (ns.ignore_glob or [])
    assert taken.get("", []) == ns.file_or_dir


@pytest.mark.parametrize("args", [["-p", "no:x"], ["-pno:x"], ["-p=no:x"], ["-qp", "no:x"]])
def test_addopts_plugin_options_are_read_as_pytest_s_plugin_manager_reads_them(
    args: list[str],
) -> None:
    from _pytest.config import PytestPluginManager

    manager = PytestPluginManager()
    manager.consider_preparse(args, exclude_only=True)
    blocked = [v[3:] for v in suite._options(args).get("-p", []) if v.startswith("no:")]
    for name in ("x", "=no:x"):
        assert manager.is_blocked(name) == (name in blocked), name
