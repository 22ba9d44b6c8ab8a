"""`genstamp verify` end to end: real git, real pytest, real files. These stories prove the
gathering (genstamp.facts) and the output; the rules themselves are table tests over facts
(test_rules.py), the lies evidence can tell a table of their own (test_no_false_accept.py).

One story per kind of fact the gate gathers: the stamp, the evidence, the trees, the audit, the
bytecode, the counts and the selection, and a fresh green run that is accepted.
"""

from __future__ import annotations

import json
import os
import py_compile
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from conftest import RunGenstamp, commit_all, git, run_genstamp, run_pytest, subprocess_env
from test_facts import bind

from genstamp import restamp
from genstamp.repo import open_checkout

STATE = Path(".git", "genstamp")
CALC = Path("src", "calc", "__init__.py")


def stamp(genstamp: RunGenstamp, repo: Path) -> dict[str, Any]:
    code, out, err = genstamp("-C", repo, "stamp", "--json")
    assert code == 0, err
    return json.loads(out)["generation"]  # type: ignore[no-any-return]


def run_tests(repo: Path, *args: str, **kwargs: Any) -> subprocess.CompletedProcess[str]:
    """A real pytest run in ``repo``; the plugin must have written its evidence."""
    proc = run_pytest(repo, *args, **kwargs)
    assert (repo / STATE / "evidence.xml").is_file(), proc.stdout + proc.stderr
    return proc


def new_test_run(
    genstamp: RunGenstamp, repo: Path, name: str, text: str
) -> subprocess.CompletedProcess[str]:
    """tests/NAME holding ``text``, committed, in a new generation, run through real pytest."""
    (repo / "tests" / name).write_text(text)
    commit_all(repo, f"add tests/{name}")
    stamp(genstamp, repo)
    return run_tests(repo)


def verdict(genstamp: RunGenstamp, repo: Path, *args: str) -> tuple[int, dict[str, Any]]:
    code, out, err = genstamp("-C", repo, "verify", "--json", *args)
    data = json.loads(out)
    assert code == (0 if data["ok"] else 1), (code, out, err)
    return code, data


def rules(data: dict[str, Any]) -> list[str]:
    return [f["rule"] for f in data["failures"]]


def message(data: dict[str, Any], rule: str) -> str:
    found = [f["message"] for f in data["failures"] if f["rule"] == rule]
    assert found, f"{rule} not among {rules(data)}"
    return "\n".join(found)


# `verify --json` as genstamp printed it before the gate was split into gathering and deciding
# (computed from that code; issue 12 added "selection" and "parts", the xfailed/xpassed counts,
# and the partial-run message naming what was left out; issue 17 the "items" a bounded list
# stands for), with the generation id and the evidence path as placeholders.
PINNED = (
    "{\n"
    '  "evidence": "EVIDENCE",\n'
    '  "failures": [\n'
    "    {\n"
    '      "message": "the tests ran on tree debaa3ff383c, work tree is tree ab33'
    '8ff5f184: differs in src/calc/__init__.py",\n'
    '      "remedy": "rerun the tests on exactly the tree you are judging (commit'
    ", then test) where genstamp is installed: a pytest without its plugin writes no evidence,"
    ' and this refusal stays",\n'
    '      "rule": "tree-mismatch"\n'
    "    },\n"
    "    {\n"
    '      "items": [\n'
    '        "src/legacy.pyc is sourceless bytecode (no legacy.py)"\n'
    "      ],\n"
    '      "message": "src/legacy.pyc is sourceless bytecode (no legacy.py)",\n'
    '      "remedy": "run `genstamp stamp` to scrub bytecode (and clear a cache of code a '
    'loader keeps itself), then rerun the tests",\n'
    '      "rule": "stale-bytecode"\n'
    "    },\n"
    "    {\n"
    '      "message": "1 failed, 0 errors in 1",\n'
    '      "remedy": "fix the failing tests, then rerun",\n'
    '      "rule": "tests-failed"\n'
    "    },\n"
    "    {\n"
    '      "message": "the run covered part of the suite: 1 collected tests did n'
    'ot run: tests/test_calc.py::test_other",\n'
    '      "remedy": "run what was left out (each run is a part; parts of one gen'
    'eration and tree merge), or set allow-partial in [tool.genstamp]",\n'
    '      "rule": "partial-run"\n'
    "    }\n"
    "  ],\n"
    '  "generation": "GEN",\n'
    '  "ok": false,\n'
    '  "parts": [\n'
    "    {\n"
    '      "evidence": "EVIDENCE",\n'
    '      "files": 1,\n'
    '      "left_out": 1,\n'
    '      "ran": 1,\n'
    '      "ran_digest": "288f952bc99de1f0d2805c09db895abf01c9b85a4c0805158eb539a'
    '1f04e6fd9"\n'
    "    }\n"
    "  ],\n"
    '  "selection": {\n'
    '    "accepted_partial": false,\n'
    '    "complete": false,\n'
    '    "left_out": [\n'
    '      "1 collected tests did not run: tests/test_calc.py::test_other"\n'
    "    ],\n"
    '    "reasons": "1 deselected (tests/test_calc.py::test_other)",\n'
    '    "suites": [\n'
    "      {\n"
    '        "config": "pyproject.toml",\n'
    '        "digest": "f46408db1ea850d1f6070207ec4861363706df0d05866e312763065ee'
    'e8cbe0a",\n'
    '        "files": 1,\n'
    '        "markexpr": "",\n'
    '        "problems": [],\n'
    '        "root": "."\n'
    "      }\n"
    "    ]\n"
    "  },\n"
    '  "targets": [\n'
    "    {\n"
    '      "label": "work tree",\n'
    '      "tree": "ab338ff5f184a3e2465e125b8644cc3578d84101"\n'
    "    }\n"
    "  ],\n"
    '  "tested_tree": "debaa3ff383c608846738026a0788df0485258ef",\n'
    '  "tests": {\n'
    '    "errors": 0,\n'
    '    "failed": 1,\n'
    '    "passed": 0,\n'
    '    "skipped": 0,\n'
    '    "tests": 1,\n'
    '    "xfailed": 0,\n'
    '    "xpassed": 0\n'
    "  }\n"
    "}\n"
)


def test_verify_json_is_byte_identical_to_the_pinned_output(
    project: Path, genstamp: RunGenstamp
) -> None:
    """A red, partial run on a tree since edited, by a sourceless .pyc: four rules at once."""
    test = project / "tests" / "test_calc.py"
    test.write_text(test.read_text().replace("== 5", "== 6"))
    code, out, err = genstamp("-C", project, "stamp", "--json")
    assert code == 0, err
    gen = json.loads(out)["generation"]["id"]
    proc = run_pytest(project, "-k", "add")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    (project / "src" / "calc" / "__init__.py").write_text("def add(a, b):\n    return b + a\n")
    (project / "src" / "legacy.pyc").write_bytes(
        b"\0\0\r\n" + b"\0" * 12
    )  # bytecode: a magic number
    code, out, _ = genstamp("-C", project, "verify", "--json")
    assert code == 1
    evidence = str(project / STATE / "evidence.xml")
    text = out.replace(gen, "GEN").replace(json.dumps(evidence)[1:-1], "EVIDENCE")
    assert text == PINNED, text
    # counts and selection, gathered from the run: and the human form, one line per rule
    code, out, _ = genstamp("-C", project, "verify")
    assert code == 1
    assert [line.split(":", 1)[0] for line in out.splitlines()] == [
        "tree-mismatch",
        "stale-bytecode",
        "tests-failed",
        "partial-run",
    ]
    assert "src/calc/__init__.py" in out.splitlines()[0]


# -- accepted ------------------------------------------------------------------------------------


def test_a_fresh_green_run_is_accepted(project: Path, genstamp: RunGenstamp) -> None:
    """A run that may write .pyc leaves none in the tree (the plugin redirects it)."""
    stamp(genstamp, project)
    assert run_tests(project, bytecode=True).returncode == 0
    assert not [p for p in project.rglob("*.pyc") if ".git" not in p.parts]
    code, data = verdict(genstamp, project)
    assert (code, data["ok"], data["failures"]) == (0, True, [])
    assert data["tests"]["passed"] == 2
    # the human form: nothing on stdout, one acceptance line on stderr
    code, out, err = genstamp("-C", project, "verify")
    assert (code, out) == (0, "")
    assert "evidence accepted: 2 passed" in err


def test_commits_are_judged_whatever_the_work_trees_pyproject_holds_meanwhile(
    project: Path, genstamp: RunGenstamp
) -> None:
    """A tested commit, then an edit under way in ``pyproject.toml`` (a half-typed list, a
    merge stopped on a conflict in it): ``verify --rev`` and a push judge each commit by its
    own settings, so the unfinished edit settles nothing for them (it stopped every push with
    "not valid TOML", exit 2: h206). The work tree itself cannot be judged then: said so."""
    stamp(genstamp, project)
    assert run_tests(project).returncode == 0
    pyproject = project / "pyproject.toml"
    pyproject.write_text(pyproject.read_text() + '\n[project]\ndependencies = ["requests",\n')
    code, data = verdict(genstamp, project, "--rev", "HEAD")
    assert (code, data["failures"]) == (0, []), data
    code, out, err = genstamp("-C", project, "verify", "--rev", "HEAD", "--attestation", "none")
    assert "not valid TOML" not in err, err
    code, out, err = genstamp("-C", project, "verify")
    assert code == 2 and "pyproject.toml is not valid TOML" in err, (code, out, err)


def test_the_accept_line_counts_as_pytest_counts(project: Path, genstamp: RunGenstamp) -> None:
    """pytest says "1 skipped, 1 xfailed"; the JUnit file holds both as <skipped>."""
    proc = new_test_run(
        genstamp,
        project,
        "test_more.py",
        "import pytest\n\n\n@pytest.mark.skip(reason='not here')\ndef test_skip():\n    pass\n"
        "\n\n@pytest.mark.xfail(reason='known')\ndef test_known():\n    assert False\n",
    )
    assert proc.returncode == 0 and "1 skipped, 1 xfailed" in proc.stdout, proc.stdout
    code, _, err = genstamp("-C", project, "verify")
    assert code == 0
    assert "evidence accepted: 2 passed, 1 skipped, 1 xfailed, 0 xpassed" in err, err


# -- one refusal per kind of gathered fact -------------------------------------------------------


def test_stamp_a_run_never_stamped(project: Path, genstamp: RunGenstamp) -> None:
    assert run_tests(project).returncode == 0
    code, data = verdict(genstamp, project)
    assert (code, rules(data)) == (1, ["no-stamp"])
    assert str(project / STATE / "generation.json") in message(data, "no-stamp")


def test_evidence_before_any_run(project: Path, genstamp: RunGenstamp) -> None:
    stamp(genstamp, project)
    code, data = verdict(genstamp, project)
    assert (code, rules(data)) == (1, ["no-evidence"])
    assert str(project / STATE / "evidence.xml") in message(data, "no-evidence")


def test_evidence_of_a_run_without_genstamp(
    project: Path, genstamp: RunGenstamp, tmp_path: Path
) -> None:
    stamp(genstamp, project)
    junit = tmp_path / "plain.xml"
    proc = run_pytest(project, "-p", "no:genstamp", f"--junitxml={junit}")
    assert proc.returncode == 0 and junit.is_file()
    code, data = verdict(genstamp, project, "--junit", str(junit))
    assert (code, rules(data)) == (1, ["unbound-evidence"])
    assert "no genstamp binding" in message(data, "unbound-evidence")
    # the same run with genstamp, written to the same path, is bound and accepted
    assert run_pytest(project, f"--junitxml={junit}").returncode == 0
    assert verdict(genstamp, project, "--junit", str(junit))[0] == 0


def test_counts_of_a_run_that_collects_nothing(project: Path, genstamp: RunGenstamp) -> None:
    (project / "tests" / "test_calc.py").write_text("# nothing here yet\n")
    stamp(genstamp, project)
    assert run_tests(project).returncode == 5
    code, data = verdict(genstamp, project)
    assert (code, rules(data)) == (1, ["no-tests"])
    assert data["tests"] == {
        "tests": 0,
        "passed": 0,
        "failed": 0,
        "errors": 0,
        "skipped": 0,
        "xfailed": 0,
        "xpassed": 0,
    }


def test_tree_a_test_that_writes_into_the_tree(project: Path, genstamp: RunGenstamp) -> None:
    writer = (
        "from pathlib import Path\n\n\ndef test_writes():\n"
        "    (Path(__file__).parents[1] / 'output.txt').write_text('made by a test')\n"
    )
    assert new_test_run(genstamp, project, "test_writer.py", writer).returncode == 0
    code, data = verdict(genstamp, project)
    assert (code, rules(data)) == (1, ["tree-moved"])
    assert "output.txt" in message(data, "tree-moved")


@pytest.mark.parametrize("edited", [False, True], ids=["swap-file-alone", "and-an-edit"])
def test_tree_files_the_run_had_beside_the_commit_are_named_so(
    project: Path, genstamp: RunGenstamp, edited: bool
) -> None:
    """N23 15b: an editor's swap file beside the tested commit: HEAD is refused, and the
    message says what the remedy "commit, then test" cannot mend (a rerun with the file there
    tests the same tree again): they are files the commit does not hold, to commit, remove or
    ignore. The control: with a tracked file edited too, no such words."""
    (project / "src" / "calc" / ".__init__.py.swp").write_bytes(b"b0VIM 8.2")
    if edited:
        (project / CALC).write_text((project / CALC).read_text() + "\n# edited\n")
    stamp(genstamp, project)
    assert run_tests(project).returncode == 0
    code, data = verdict(genstamp, project, "--rev", "HEAD")
    assert (code, rules(data)) == (1, ["tree-mismatch"])
    said = message(data, "tree-mismatch")
    assert "src/calc/.__init__.py.swp" in said
    words = "(only files the tested tree holds and this one does not"
    assert (words in said) is not edited, said


def test_audit_the_package_loaded_from_elsewhere(
    project: Path, genstamp: RunGenstamp, tmp_path: Path
) -> None:
    """The checkout's package resolved to another copy (an install of an older checkout)."""
    (project / "pyproject.toml").write_text('[tool.pytest.ini_options]\ntestpaths = ["tests"]\n')
    commit_all(project, "no pythonpath")
    elsewhere = tmp_path / "site" / "calc"
    elsewhere.mkdir(parents=True)
    # an older version of the package: it still passes, but it is not this checkout's code
    (elsewhere / "__init__.py").write_text("def add(a, b):\n    return b + a\n")
    stamp(genstamp, project)
    proc = run_tests(project, env=subprocess_env(PYTHONPATH=str(elsewhere.parent)))
    assert proc.returncode == 0, proc.stdout
    code, data = verdict(genstamp, project)
    assert (code, rules(data)) == (1, ["foreign-origin"])
    text = message(data, "foreign-origin")
    assert "calc" in text and str(elsewhere) in text
    # loading the checkout's own copy is accepted
    proc = run_tests(project, env=subprocess_env(PYTHONPATH=str(project / "src")))
    assert proc.returncode == 0, proc.stdout
    assert verdict(genstamp, project)[0] == 0


def test_audit_bytecode_the_tests_loaded_from_a_users_pycache_prefix(
    project: Path, genstamp: RunGenstamp, tmp_path: Path
) -> None:
    """The incident: bytecode of an earlier source with the same size and mtime, which CPython
    trusts and plain pytest runs green. With the user's own PYTHONPYCACHEPREFIX the plugin does
    not redirect bytecode; the audit must see what was loaded."""
    prefix = tmp_path / "pycache-prefix"
    source = project / CALC
    subprocess.run(
        [sys.executable, "-c", f"import py_compile; py_compile.compile({str(source)!r})"],
        env=subprocess_env(bytecode=True, PYTHONPYCACHEPREFIX=str(prefix)),
        check=True,
    )
    # The run reads the prefix (it writes nothing: compiling all of pytest there is slow).
    env = subprocess_env(PYTHONPYCACHEPREFIX=str(prefix))
    assert list(prefix.rglob("__init__*.pyc"))
    before = source.stat()
    source.write_text(source.read_text().replace("a + b", "a - b"))  # same size
    os.utime(source, ns=(before.st_atime_ns, before.st_mtime_ns))
    commit_all(project, "the patch")
    stamp(genstamp, project)
    proc = run_tests(project, env=env)
    assert proc.returncode == 0, proc.stdout  # green, on the old bytecode
    code, data = verdict(genstamp, project)
    assert (code, rules(data)) == (1, ["stale-bytecode"])
    assert "calc (" in message(data, "stale-bytecode")
    # without the stale cache the patch's own code runs, and fails
    assert run_pytest(project).returncode == 1


def test_bytecode_a_sourceless_legacy_pyc_the_tests_load(
    project: Path, genstamp: RunGenstamp
) -> None:
    """A legacy .pyc beside the package, with no source: found on disk, and seen loaded."""
    legacy = project / "src" / "calc" / "legacy.py"
    legacy.write_text("VALUE = 'from bytecode'\n")
    py_compile.compile(str(legacy), cfile=str(legacy.with_suffix(".pyc")), doraise=True)
    legacy.unlink()
    (project / "tests" / "test_legacy.py").write_text(
        "from calc import legacy\n\n\ndef test_legacy():\n"
        "    assert legacy.VALUE == 'from bytecode'\n"
    )
    commit_all(project, "a test of the legacy module")
    genstamp("-C", project, "stamp", "--no-scrub")
    assert run_tests(project).returncode == 0  # plain pytest: green
    code, data = verdict(genstamp, project)
    assert (code, rules(data)) == (1, ["stale-bytecode"])
    text = message(data, "stale-bytecode")
    assert "src/calc/legacy.pyc is sourceless" in text
    assert "calc.legacy" in text  # the audit saw the tests load it


def test_a_rev_given_twice_is_judged_and_named_once(project: Path, genstamp: RunGenstamp) -> None:
    genstamp("-C", project, "stamp")
    (project / "src" / "calc" / "__init__.py").write_text("def add(a, b):\n    return b + a\n")
    commit_all(project, "untested")
    code, data = verdict(genstamp, project, "--rev", "HEAD", "--rev", "HEAD")
    assert code == 1 and [t["label"] for t in data["targets"]] == ["HEAD"], data
    assert "HEAD, HEAD" not in json.dumps(data), data


def test_a_branch_whose_name_is_no_utf_8_is_judged(project: Path, genstamp: RunGenstamp) -> None:
    """git keeps a ref's name as the bytes it was given (``br\\xff``, which Python reads as
    ``br\\udcff``): it names the commit all the same."""
    name = os.fsdecode(b"br\xff")
    git(project, "branch", name)
    genstamp("-C", project, "stamp")
    assert run_tests(project).returncode == 0
    code, data = verdict(genstamp, project, "--rev", name)
    assert (code, rules(data)) == (0, []), data


def test_a_pycache_prefix_inside_the_tree_is_a_cache_not_sourceless_bytecode(
    project: Path, genstamp: RunGenstamp
) -> None:
    """``PYTHONPYCACHEPREFIX=<top>/.pycache`` with ``*.py[co]`` ignored (not the folder):
    CPython mirrors every source it compiles there, the standard library's too, as
    ``mod.cpython-311.pyc``, a name no import runs as a module of its own. A complete green
    run is accepted; the control, a legacy ``mod.pyc`` with no source there, is refused."""
    prefix = project / ".pycache"
    env = subprocess_env(bytecode=True, PYTHONPYCACHEPREFIX=str(prefix))
    genstamp("-C", project, "stamp")
    assert run_pytest(project, env=env).returncode == 0
    assert list(prefix.rglob("*.cpython-*.pyc")), "CPython wrote no cache under the prefix"
    code, data = verdict(genstamp, project)
    assert (code, rules(data)) == (0, []), data
    legacy = prefix / "legacy.pyc"
    legacy.write_bytes(next(prefix.rglob("*.cpython-*.pyc")).read_bytes())
    code, data = verdict(genstamp, project)
    assert (code, rules(data)) == (1, ["stale-bytecode"]), data
    assert ".pycache/legacy.pyc is sourceless" in message(data, "stale-bytecode")


def test_bytecode_older_than_the_generation_and_its_remedy(
    project: Path, genstamp: RunGenstamp
) -> None:
    stamp(genstamp, project)
    gen = json.loads((project / STATE / "generation.json").read_text())
    assert run_tests(project).returncode == 0
    pyc = project / "src" / "calc" / "__pycache__" / "__init__.cpython-311.pyc"
    pyc.parent.mkdir()
    py_compile.compile(str(project / CALC), cfile=str(pyc), doraise=True)
    assert verdict(genstamp, project)[0] == 0  # new bytecode, written after the stamp
    old = (gen["created_ns"] - 3600 * 10**9) / 1e9
    os.utime(pyc, (old, old))
    code, data = verdict(genstamp, project)
    assert (code, rules(data)) == (1, ["stale-bytecode"])
    assert "src/calc/__pycache__/__init__.cpython-311.pyc" in message(data, "stale-bytecode")
    # the remedy works: stamp scrubs it (a fresh run is then accepted, as in the story above)
    stamp(genstamp, project)
    assert not pyc.exists()
    assert rules(verdict(genstamp, project)[1]) == ["stale-generation"]
    # another tool's cache kept in __pycache__ (numba's) is not bytecode: scrub leaves it, and
    # so does the gate (it was refused after every stamp, the remedy unable to help)
    pyc.parent.mkdir()
    for name in ("__init__.add-3.py311.nbi", "__init__.add-3.py311.1.nbc"):
        (pyc.parent / name).write_bytes(b"numba")
        os.utime(pyc.parent / name, (old, old))
    stamp(genstamp, project)
    assert sorted(p.name for p in pyc.parent.iterdir()) == sorted(
        ["__init__.add-3.py311.nbi", "__init__.add-3.py311.1.nbc"]
    )
    assert run_tests(project).returncode == 0
    assert verdict(genstamp, project)[0] == 0


# -- the command: paths, settings, revs, output (evidence bound by hand, no pytest run) ----------


@pytest.fixture
def bound(project: Path) -> Path:
    restamp.begin(open_checkout(project))
    bind(project)
    return project


def test_evidence_at_a_given_path(bound: Path, genstamp: RunGenstamp, tmp_path: Path) -> None:
    code, data = verdict(genstamp, bound, "--junit", str(tmp_path / "absent.xml"))
    assert (code, rules(data)) == (1, ["no-evidence"])
    assert str(tmp_path / "absent.xml") in message(data, "no-evidence")
    assert verdict(genstamp, bound, "--junit", str(bind(bound, tmp_path / "given.xml")))[0] == 0


def test_a_partial_run_allowed_by_configuration(project: Path, genstamp: RunGenstamp) -> None:
    restamp.begin(open_checkout(project))
    bind(project, selection="partial", selection_reasons="-k add")
    assert rules(verdict(genstamp, project)[1]) == ["partial-run"]
    pyproject = project / "pyproject.toml"
    pyproject.write_text(pyproject.read_text() + "\n[tool.genstamp]\nallow-partial = true\n")
    bind(project, selection="partial", selection_reasons="-k add")  # the tree as it is now
    assert verdict(genstamp, project)[0] == 0


def test_revs_judge_commits_not_the_work_tree(bound: Path, genstamp: RunGenstamp) -> None:
    (bound / "scratch.txt").write_text("not committed\n")
    assert verdict(genstamp, bound, "--rev", "HEAD")[0] == 0
    assert verdict(genstamp, bound)[0] == 1
    code, out, err = genstamp("-C", bound, "verify", "--rev", "no-such-branch")
    assert (code, out) == (2, "")
    assert err.startswith("genstamp: ") and "no-such-branch" in err
    assert len(err.splitlines()) == 1


def test_a_repository_without_commits(repo: Path, genstamp: RunGenstamp) -> None:
    (repo / "tests").mkdir()
    (repo / "tests" / "test_one.py").write_text("def test_one():\n    pass\n")
    restamp.begin(open_checkout(repo))
    bind(repo)
    assert verdict(genstamp, repo)[0] == 0
    code, _, err = genstamp("-C", repo, "verify", "--rev", "HEAD")
    assert code == 2 and err.startswith("genstamp: ") and "HEAD" in err


def test_a_file_name_that_is_not_utf8_is_named_without_a_traceback(bound: Path) -> None:
    """A strict UTF-8 stdout (PYTHONIOENCODING, or a UTF-8 locale) and a Latin-1 file name."""
    (bound / os.fsdecode(b"caf\xe9.txt")).write_text("x\n")
    proc = run_genstamp(bound, "verify", env=subprocess_env(PYTHONIOENCODING="utf-8:strict"))
    assert proc.returncode == 1, proc.stderr
    assert "Traceback" not in proc.stderr
    assert proc.stdout.startswith("tree-mismatch: ")
    assert "caf\\xe9.txt" in proc.stdout


LAUGHS = (
    '<?xml version="1.0"?>\n<!DOCTYPE lolz [\n <!ENTITY lol "lol">\n'
    + "".join(
        f' <!ENTITY lol{i} "{("&lol" + (str(i - 1) if i > 1 else "") + ";") * 10}">\n'
        for i in range(1, 10)
    )
    + ']>\n<testsuite name="x" tests="1"><properties>'
    '<property name="genstamp.generation" value="&lol9;"/></properties>'
    '<testcase classname="a" name="b"/></testsuite>\n'
)


def _external(target: str) -> str:
    return (
        f'<?xml version="1.0"?>\n<!DOCTYPE testsuite [<!ENTITY xxe SYSTEM "{target}">]>\n'
        '<testsuite name="x" tests="1"><properties>'
        '<property name="genstamp.generation" value="&xxe;"/></properties>'
        '<testcase classname="a" name="&xxe;"/></testsuite>\n'
    )


@pytest.mark.parametrize(
    "kind",
    [
        "empty",
        "truncated",
        "not-xml",
        "not-junit",
        "entity-bomb",
        "external-entity-passwd",
        "external-entity-marker",
        "enormous",
    ],
)
def test_hostile_or_broken_junit_is_one_unbound_line(
    bound: Path, genstamp: RunGenstamp, tmp_path: Path, kind: str
) -> None:
    good = (bound / STATE / "evidence.xml").read_text()
    marker = tmp_path / "secret.txt"
    marker.write_text("GENSTAMP-SECRET-MARKER\n")
    junit = tmp_path / "junit.xml"
    if kind == "enormous":
        with junit.open("wb") as fh:  # sparse: the size says enormous, the disk stays empty
            fh.truncate(513 * 1024 * 1024)
    else:
        junit.write_text(
            {
                "empty": "",
                "truncated": good[: len(good) // 2],
                "not-xml": "this is not xml\n",
                "not-junit": '<?xml version="1.0"?>\n<html><body/></html>\n',
                "entity-bomb": LAUGHS,
                "external-entity-passwd": _external("file:///etc/passwd"),
                "external-entity-marker": _external(marker.as_uri()),
            }[kind]
        )
    code, out, err = genstamp("-C", bound, "verify", "--junit", str(junit))
    output = out + err
    assert code == 1, output
    assert out.startswith("unbound-evidence: "), output
    assert len(out.splitlines()) == 1, output
    assert "Traceback" not in output
    assert "lollol" not in output
    assert "root:" not in output
    assert "GENSTAMP-SECRET-MARKER" not in output
