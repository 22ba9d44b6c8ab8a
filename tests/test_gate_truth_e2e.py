"""The gate's verdict on what ran, end to end (issues 11 and 13): real git, real pytest.

Each story builds an ordinary set-up that the gate once judged wrongly, and a control one change
away: a CRLF clone and a clean filter (git's conversion), code in an ignored folder, an in-project
virtual environment, a submodule, a JUnit report inside the work tree, a moved and a copied
checkout, and a push of a commit whose tree was verified earlier.
"""

from __future__ import annotations

import json
import os
import py_compile
import shutil
import signal
import subprocess
import sys
import zipfile
from pathlib import Path
from typing import Any

import pytest
from conftest import (
    RunGenstamp,
    commit_all,
    exclude,
    git,
    init_repo,
    run_genstamp,
    run_pytest,
    subprocess_env,
    write_calc,
)
from test_coprocess import bulk
from test_verify_e2e import STATE, message, rules, run_tests, stamp, verdict

import genstamp as genstamp_package
from genstamp import binding, generation

CALC = Path("src", "calc", "__init__.py")
Z40 = "0" * 40


def green(genstamp: RunGenstamp, repo: Path, *args: str) -> str:
    """Stamp, then a full green pytest run; its output."""
    stamp(genstamp, repo)
    proc = run_tests(repo, *args)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc.stdout


def judged(genstamp: RunGenstamp, repo: Path) -> tuple[list[str], dict[str, Any]]:
    """A full green run (``green``), then the gate's verdict: the rules it refused by (none
    when it accepts) and its JSON."""
    green(genstamp, repo)
    data = verdict(genstamp, repo)[1]  # its exit status is checked there
    return rules(data), data


def judged_as(genstamp: RunGenstamp, repo: Path, rule: str | None, naming: str = "") -> None:
    """``judged``: accepted when ``rule`` is None, else refused by that rule alone, its message
    naming ``naming``."""
    found, data = judged(genstamp, repo)
    assert found == ([] if rule is None else [rule]), data
    if rule is not None:
        assert naming in message(data, rule), data


def push(repo: Path, local: str, remote_ref: str) -> subprocess.CompletedProcess[str]:
    """The pre-push hook as git runs it: ``git push origin LOCAL:REMOTE_REF``."""
    sha = git(repo, "rev-parse", local)
    line = f"refs/heads/{local} {sha} refs/heads/{remote_ref} {Z40}\n"
    return run_genstamp(repo, "hook", "pre-push", "origin", "file:///nowhere", stdin=line)


def pushed_then_an_untested_edit_refused(repo: Path, text: str) -> None:
    """``git push`` of main is accepted; then CALC holding ``text``, committed untested, is
    refused as not the tested tree (the control)."""
    proc = push(repo, "main", "main")
    assert proc.returncode == 0, proc.stderr
    (repo / CALC).write_text(text)
    commit_all(repo, "untested")
    proc = push(repo, "main", "main")
    assert proc.returncode == 1 and "tree-mismatch" in proc.stderr, proc.stderr


def can_fail(project: Path) -> None:
    """Commit a conftest that fails every test when BREAK_IT is set (the same tree can then
    pass and fail: a dependency upgraded, say)."""
    (project / "tests" / "conftest.py").write_text(
        "import os\n\n\ndef pytest_runtest_setup(item):\n"
        "    assert not os.environ.get('BREAK_IT')\n"
    )
    commit_all(project, "a conftest that can fail")


def feature_tested_then_left(project: Path) -> None:
    """``can_fail``, the plain hooks installed, a branch ``feature`` committed and tested green,
    then left for main (its generation ends)."""
    can_fail(project)
    assert run_genstamp(project, "install", "--plain").returncode == 0
    git(project, "switch", "-q", "-c", "feature")
    (project / "src" / "calc" / "more.py").write_text("MORE = 1\n")
    commit_all(project, "feature")
    assert run_pytest(project).returncode == 0
    git(project, "switch", "-q", "main")


# -- git's conversion: the loaded bytes are judged as `git add` would store them ------------------


def test_a_crlf_clone_is_accepted_after_a_green_run_and_refused_after_an_edit(
    project: Path, genstamp: RunGenstamp, tmp_path: Path
) -> None:
    clone = tmp_path / "crlf"
    git(tmp_path, "clone", "-q", "-c", "core.autocrlf=true", str(project), str(clone))
    assert b"\r\n" in (clone / CALC).read_bytes()  # what the tests load is not the blob
    found, data = judged(genstamp, clone)
    assert found == [], data
    (clone / CALC).write_bytes(b"def add(a, b):\r\n    return a - b\r\n")
    code, data = verdict(genstamp, clone)
    assert (code, rules(data)) == (1, ["tree-mismatch"])
    assert CALC.as_posix() in message(data, "tree-mismatch")
    # the tested commit is still what the tests ran, though its file has changed since (the
    # loaded bytes are what checking out the tested blob writes)
    code, data = verdict(genstamp, clone, "--rev", "HEAD")
    assert (code, rules(data)) == (0, []), data


def test_a_clean_filter_repository_edit_test_commit_push_is_accepted(
    repo: Path, genstamp: RunGenstamp
) -> None:
    write_calc(repo)
    (repo / ".gitattributes").write_text("*.py filter=notes\n")
    # nbstripout's shape: the work tree holds lines the repository never stores
    git(repo, "config", "filter.notes.clean", "sed -e '/# local note/d'")
    git(repo, "config", "filter.notes.smudge", "cat")
    commit_all(repo, "calc")
    (repo / CALC).write_text("def add(a, b):  \n    # local note\n    return a + b\n")
    green(genstamp, repo)
    assert verdict(genstamp, repo)[0] == 0
    commit_all(repo, "edit")
    assert "# local note" not in git(repo, "show", f"HEAD:{CALC.as_posix()}")
    # control: an edit the filter does not remove is not what was tested
    pushed_then_an_untested_edit_refused(
        repo, "def add(a, b):\n    # local note\n    return b + a\n"
    )


CONVERTED = {
    # core.autocrlf=input: the file saved with CRLF is stored with LF; checking the blob out
    # writes LF (no bytes of the work tree's shape), so the gate cannot find them again
    "autocrlf-input": (
        b"def add(a, b):\r\n    return a + b\r\n",
        b"def add(a, b):\n    return a + b\n",  # saved again with LF: the same tree
    ),
    # a clean filter that drops a local line: checking out writes the blob without it
    "clean-filter": (
        b"def add(a, b):\n    # local note\n    return a + b\n",
        b"def add(a, b):\n    # local note\n    # local note\n    return a + b\n",
    ),
}


@pytest.mark.parametrize("edit", ["same-tree", "control"])
@pytest.mark.parametrize("conversion", list(CONVERTED))
def test_loaded_bytes_git_converts_to_the_tested_blob_stay_tested_after_an_edit(
    repo: Path, genstamp: RunGenstamp, conversion: str, edit: str
) -> None:
    """The tests load a file whose bytes git converts to the tested blob (CRLF under
    autocrlf=input, a line a clean filter drops); then the file is edited once the run is
    over (B25 02/04: saved again, the next edit begun). Those bytes are gone from the file,
    and checking out the blob never writes them: the run's end found what ``git add`` stores
    for them, and the evidence keeps it, so the tested commit (and, for the same tree, the
    work tree) stays accepted and can be pushed. The control: an edit of the code after the
    run is refused in the work tree, while the tested commit stays accepted."""
    write_calc(repo)
    if conversion == "autocrlf-input":
        git(repo, "config", "core.autocrlf", "input")
    else:
        (repo / ".gitattributes").write_text("*.py filter=notes\n")
        git(repo, "config", "filter.notes.clean", "sed -e '/# local note/d'")
        git(repo, "config", "filter.notes.smudge", "cat")
    loaded, after = CONVERTED[conversion]
    (repo / CALC).write_bytes(loaded)
    commit_all(repo, "calc")
    assert git(repo, "status", "--porcelain") == ""
    green(genstamp, repo)
    if edit == "control":
        after = b"def add(a, b):\n    return b + a\n"
    (repo / CALC).write_bytes(after)
    code, data = verdict(genstamp, repo)
    if edit == "control":
        assert (code, rules(data)) == (1, ["tree-mismatch"]), data
    else:
        assert (code, rules(data)) == (0, []), data
    code, data = verdict(genstamp, repo, "--rev", "HEAD")
    assert (code, rules(data)) == (0, []), data
    proc = push(repo, "main", "main")
    assert proc.returncode == 0, proc.stderr


@pytest.mark.parametrize(
    "where",
    [
        "this-clone-alone",
        "round-trip-of-this-clone",
        "round-trip-global-of-this-clone",
        "round-trip",
        "project-declared",
    ],
)
def test_a_clean_filter_that_hides_an_edit_is_refused(
    repo: Path, genstamp: RunGenstamp, where: str
) -> None:
    """A clean driver of this clone alone (``.git/info/attributes``, ``.git/config``) stores
    ``a + b`` of a work tree holding ``a - b``: git sees no change, the tests run the edit, a
    clean clone checks out ``a + b`` (S02); a smudge side in this clone's config alone gives
    the edit back here and nowhere else (U01). The controls: a driver every clone on this
    machine has (the user's global config, as `git lfs install` writes it), or one the
    project's own .gitattributes names (`git lfs install --local`, T14), whose smudge side
    gives the work tree's bytes back runs what a checkout writes. A global driver that only
    `.git/info/attributes` names is this clone's alone: no fresh clone is asked to use it."""
    tests = "from calc import add\n\n\ndef test_add():\n    assert add(3, 1) == 2\n"
    write_calc(repo, tests=tests)
    (repo / CALC).write_text("def add(a, b):\n    return a - b\n")
    scope = "--global" if where in ("round-trip", "round-trip-global-of-this-clone") else "--local"
    if where == "this-clone-alone":
        (repo / ".git" / "info").mkdir(exist_ok=True)
        (repo / ".git" / "info" / "attributes").write_text("*.py filter=hide\n")
        git(repo, "config", "filter.hide.clean", "sed -e 's/a - b/a + b/'")
        git(repo, "config", "filter.hide.smudge", "cat")
    else:
        if where.endswith("of-this-clone"):
            (repo / ".git" / "info").mkdir(exist_ok=True)
            (repo / ".git" / "info" / "attributes").write_text("*.py filter=swap9\n")
        else:
            (repo / ".gitattributes").write_text("*.py filter=swap9\n")
        git(repo, "config", scope, "filter.swap9.clean", "sed -e 's/a - b/a + b  # swapped/'")
        git(repo, "config", scope, "filter.swap9.smudge", "sed -e 's/a + b  # swapped/a - b/'")
    try:
        commit_all(repo, "calc")
        assert "return a - b" not in git(repo, "show", f"HEAD:{CALC.as_posix()}")
        assert git(repo, "status", "--porcelain") == ""
        green(genstamp, repo)
        code, data = verdict(genstamp, repo, "--rev", "HEAD")
    finally:
        if scope == "--global":
            git(repo, "config", "--global", "--remove-section", "filter.swap9")
    if where in ("round-trip", "project-declared"):
        assert (code, rules(data)) == (0, []), data
    else:
        assert (code, rules(data)) == (1, ["loaded-not-tested"]), data
        assert CALC.as_posix() in message(data, "loaded-not-tested")


@pytest.mark.parametrize("scope", ["--local", "--global"])
@pytest.mark.parametrize("dropped", ["code", "a-comment"])
def test_a_project_s_filter_this_clone_alone_defines_may_drop_no_code(
    repo: Path, genstamp: RunGenstamp, dropped: str, scope: str
) -> None:
    """The project's .gitattributes names a clean filter whose driver this clone's config
    alone defines (its smudge side a plain ``cat``), and it drops a line the tests need: git
    stores the blob without it, a fresh clone checks that out and fails (D25 04: accepted, as
    the clean side gave the tested blob). What a checkout writes through the driver must give
    the loaded bytes back, or their syntax tree. So too for a driver the user's global config
    defines (every clone here has it, its smudge side too: it was trusted on its clean side
    alone). The control: the line dropped is a comment."""
    expected = 2 if dropped == "code" else 4  # a - b only with the dropped line
    tests = f"from calc import add\n\n\ndef test_add():\n    assert add(3, 1) == {expected}\n"
    write_calc(repo, tests=tests)
    (repo / ".gitattributes").write_text("*.py filter=notes\n")
    git(repo, "config", scope, "filter.notes.clean", "sed -e '/# local note/d'")
    git(repo, "config", scope, "filter.notes.smudge", "cat")
    try:
        commit_all(repo, "calc")
        line = "    b = -b  # local note\n" if dropped == "code" else "    # local note\n"
        (repo / CALC).write_text("def add(a, b):\n" + line + "    return a + b\n")
        assert git(repo, "diff") == ""  # git stores the same blob
        green(genstamp, repo)
        code, data = verdict(genstamp, repo, "--rev", "HEAD")
    finally:
        if scope == "--global":
            git(repo, "config", "--global", "--remove-section", "filter.notes")
    if dropped == "code":
        assert (code, rules(data)) == (1, ["loaded-not-tested"]), data
        assert CALC.as_posix() in message(data, "loaded-not-tested")
    else:
        assert (code, rules(data)) == (0, []), data


def test_a_configuration_a_global_driver_the_users_attributes_name_converts_is_the_trees(
    repo: Path, genstamp: RunGenstamp, tmp_path: Path
) -> None:
    """A driver of the user's global config that the user's attributes file names
    (core.attributesFile) converts for every clone on this machine: pyproject.toml loaded with
    the trailing spaces it trims is the tree's (review of 64f7e2a: refused as this clone's
    alone, as a driver only .git/info/attributes names is)."""
    write_calc(repo)
    attributes = tmp_path / "attributes"
    attributes.write_text("*.toml filter=trim\n")
    git(repo, "config", "--global", "core.attributesFile", str(attributes))
    git(repo, "config", "--global", "filter.trim.clean", "sed -e 's/ *$//'")
    git(repo, "config", "--global", "filter.trim.smudge", "cat")
    pyproject = repo / "pyproject.toml"
    try:
        commit_all(repo, "calc")
        pyproject.write_text(pyproject.read_text().replace("\n", "   \n", 1))
        assert git(repo, "diff") == "", "the trailing spaces are the filter's"
        green(genstamp, repo)
        code, data = verdict(genstamp, repo, "--rev", "HEAD")
    finally:
        git(repo, "config", "--global", "--unset", "core.attributesFile")
        git(repo, "config", "--global", "--remove-section", "filter.trim")
    assert (code, rules(data)) == (0, []), data


@pytest.mark.parametrize(
    "marked",
    [
        "in-code",
        "in-code-crlf",
        "in-a-comment",
        "in-a-docstring",
        "this-clone-alone",
        "expanded-as-a-clone",
    ],
)
def test_code_git_expands_on_checkout_is_not_what_the_tests_ran(
    repo: Path, genstamp: RunGenstamp, marked: str
) -> None:
    """`ident` on a module: after a commit the work tree still holds `$Id$` as committed, the
    tests run that, and a clone checks out `$Id: <blob> $`, whose code is another (the test
    fails there; it was accepted: the loaded bytes were the tree's blob), with CRLF line
    endings git stores as LF too. The controls: the `$Id$` in a comment or a docstring,
    which changes no code, `ident` that only `.git/info/attributes` names (a fresh clone
    expands nothing), and a work tree that holds what a checkout writes (`$Id: <blob> $`, as
    every clean clone runs it: it was refused)."""
    code = 'REV = "$Id$"\nKNOWN = REV != "$" + "Id$"\n'
    if marked == "in-a-comment":
        code = "# $Id$\nKNOWN = False\n"
    elif marked == "in-a-docstring":
        code = '"""The revision module, $Id$."""\n\nKNOWN = False\n'
    tests = "from calc.rev import KNOWN\n\n\ndef test_rev():\n    assert not KNOWN\n"
    if marked == "expanded-as-a-clone":
        tests = tests.replace("not KNOWN", "KNOWN")
    write_calc(repo, tests=tests)
    rev = repo / "src" / "calc" / "rev.py"
    rev.write_text(code)
    if marked == "in-code-crlf":  # written with CRLF, stored with LF
        git(repo, "config", "core.autocrlf", "true")
        rev.write_bytes(code.replace("\n", "\r\n").encode())
    if marked == "this-clone-alone":
        (repo / ".git" / "info").mkdir(exist_ok=True)
        (repo / ".git" / "info" / "attributes").write_text("*.py ident\n")
    else:
        (repo / ".gitattributes").write_text("*.py ident\n")
    commit_all(repo, "calc, its revision")
    if marked == "expanded-as-a-clone":  # checked out again: what a clone writes
        rev.unlink()
        git(repo, "checkout", "--", "src/calc/rev.py")
        assert "$Id: " in rev.read_text()
    green(genstamp, repo)
    code_, data = verdict(genstamp, repo, "--rev", "HEAD")
    if marked.startswith("in-code"):
        assert (code_, rules(data)) == (1, ["loaded-not-tested"]), data
        assert "src/calc/rev.py" in message(data, "loaded-not-tested")
    else:
        assert (code_, rules(data)) == (0, []), data


@pytest.mark.parametrize("where", ["this-clone-alone", "project-declared"])
def test_a_working_tree_encoding_of_this_clone_alone_is_not_a_clones(
    repo: Path, genstamp: RunGenstamp, where: str
) -> None:
    """``working-tree-encoding`` set in ``.git/info/attributes`` re-encodes a latin-1 module
    here; git stores UTF-8, and a fresh clone checks those bytes out under the module's
    latin-1 coding line, so its string is another (U02). The control: the project's own
    .gitattributes asks every clone for the encoding."""
    tests = "from calc.sign import SIGN\n\n\ndef test_sign():\n    assert SIGN == '\\xa7'\n"
    write_calc(repo, tests=tests)
    line = "src/calc/sign.py working-tree-encoding=ISO-8859-1\n"
    if where == "this-clone-alone":
        (repo / ".git" / "info").mkdir(exist_ok=True)
        (repo / ".git" / "info" / "attributes").write_text(line)
    else:
        (repo / ".gitattributes").write_text(line)
    (repo / "src" / "calc" / "sign.py").write_bytes(b"# -*- coding: latin-1 -*-\nSIGN = '\xa7'\n")
    commit_all(repo, "calc")
    assert b"\xc2\xa7" in git_bytes(repo, "show", "HEAD:src/calc/sign.py")
    green(genstamp, repo)
    code, data = verdict(genstamp, repo, "--rev", "HEAD")
    if where == "project-declared":
        assert (code, rules(data)) == (0, []), data
    else:
        assert (code, rules(data)) == (1, ["loaded-not-tested"]), data
        assert "src/calc/sign.py" in message(data, "loaded-not-tested")


def git_bytes(repo: Path, *args: str) -> bytes:
    return subprocess.run(["git", *args], cwd=repo, capture_output=True, check=True).stdout


# -- code the clean clone will not have -----------------------------------------------------------


def _ignored_lib(repo: Path, *, generated: bool) -> None:
    write_calc(
        repo,
        tests="from helper import twice\n\n\ndef test_twice():\n    assert twice(2) == 4\n",
        gitignore="__pycache__/\n*.py[co]\nlib/\n",  # as the stock Python .gitignore does
    )
    (repo / "lib" / "helper").mkdir(parents=True)
    (repo / "lib" / "helper" / "__init__.py").write_text("def twice(x):\n    return 2 * x\n")
    declared = '\n[tool.genstamp]\ngenerated = ["lib/**/*.py"]\n' if generated else ""
    (repo / "pyproject.toml").write_text(
        '[tool.pytest.ini_options]\ntestpaths = ["tests"]\npythonpath = ["src", "lib"]\n' + declared
    )
    commit_all(repo, "tests that import an ignored package")


def test_code_loaded_from_an_ignored_folder_is_refused_naming_the_file(
    repo: Path, genstamp: RunGenstamp, tmp_path: Path
) -> None:
    _ignored_lib(repo, generated=False)
    out = green(genstamp, repo)
    # the plugin's forecast at test time is the gate's verdict
    assert "will refuse: ignored-code: lib/helper/__init__.py" in out, out
    code, data = verdict(genstamp, repo)
    assert (code, rules(data)) == (1, ["ignored-code"])
    assert "lib/helper/__init__.py" in message(data, "ignored-code")
    # what the gate foresees: the clean clone cannot import it
    clone = tmp_path / "clean"
    git(tmp_path, "clone", "-q", str(repo), str(clone))
    assert run_pytest(clone, "-p", "no:genstamp").returncode != 0


GENERATES = """\
import importlib, pathlib, sys

ROOT = pathlib.Path(__file__).resolve().parent.parent


def test_generated_code(tmp_path):
    where = ROOT / WHERE
    where.mkdir(parents=True, exist_ok=True)
    if MAKE:
        (where / "gen_mod.py").write_text("VALUE = 7\\n")
    sys.path.insert(0, str(where))
    try:
        assert importlib.import_module("gen_mod").VALUE == 7
    finally:
        sys.path.remove(str(where))
        if REMOVE:
            (where / "gen_mod.py").unlink()
"""


@pytest.mark.parametrize(
    ("where", "remove"), [("build/gen", False), ("src/calc", True), ("build/gen", "before")]
)
def test_code_the_tests_make_is_theirs(
    repo: Path, genstamp: RunGenstamp, where: str, remove: bool | str
) -> None:
    """A test that writes a module and imports it (code generation, a pytester project in a
    basetemp inside the work tree) loads code the tree does not hold, which a clean clone's
    run makes too: no ignored-code, no loaded-not-tested. The control: the same module
    written before the run began (ignored, stale) is refused."""
    test = GENERATES.replace("WHERE", repr(where)).replace("REMOVE", str(remove is True))
    test = test.replace("MAKE", str(remove != "before"))
    write_calc(repo, tests=test, gitignore="__pycache__/\n*.py[co]\nbuild/\n")
    commit_all(repo, "a test that generates code")
    if remove == "before":  # left there by an earlier session, git-ignored
        (repo / where).mkdir(parents=True)
        (repo / where / "gen_mod.py").write_text("VALUE = 7\n")
    out = green(genstamp, repo)
    code, data = verdict(genstamp, repo)
    if remove == "before":
        assert (code, rules(data)) == (1, ["ignored-code"]), data
        assert "will refuse: ignored-code" in out, out
    else:
        assert code == 0, data
        assert "will refuse" not in out, out


def calc_from_another_clone(repo: Path, other: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``other``, a clone of ``repo`` at its commit, named to the tests by ``CALC_FROM``; then
    calc moves on in ``repo`` (committed): the clone holds a past version of it."""
    subprocess.run(["git", "clone", "-q", str(repo), str(other)], check=True)
    monkeypatch.setenv("CALC_FROM", str(other))
    (repo / "src" / "calc" / "__init__.py").write_text("VALUE = 3\n")
    commit_all(repo, "calc moves on")


def calc_judged(
    genstamp: RunGenstamp,
    repo: Path,
    case: str,
    other: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> str | None:
    """A green run of ``repo``'s tests, which take calc from the tree itself (``case`` "the
    tree": accepted, None) or from another clone holding its past version (refused
    foreign-origin alone: that rule's message)."""
    if case == "another clone":
        calc_from_another_clone(repo, other, monkeypatch)
    out = green(genstamp, repo)
    code, data = verdict(genstamp, repo)
    if case.startswith("the tree"):
        assert code == 0, data
        assert "will refuse" not in out, out
        return None
    assert (code, rules(data)) == (1, ["foreign-origin"]), data
    return message(data, "foreign-origin")


ZIPPED = """\
import importlib, os, pathlib, sys, zipfile

ROOT = pathlib.Path(__file__).resolve().parent.parent
ZIP = ROOT / "build" / "gen.zip"
FROM = pathlib.Path(os.environ.get("CALC_FROM", ROOT))  # the package the test zips


def test_zipped_code():
    if MAKE:
        ZIP.parent.mkdir(parents=True, exist_ok=True)
        with zipfile.ZipFile(ZIP, "w") as archive:
            archive.writestr("gen_pkg/__init__.py", "VALUE = 7\\n")
            archive.write(FROM / "src" / "calc" / "__init__.py", "calc/__init__.py")
    saved = {k: sys.modules.pop(k) for k in list(sys.modules) if k.split(".")[0] == "calc"}
    sys.path.insert(0, str(ZIP))
    try:
        assert importlib.import_module("gen_pkg").VALUE == 7
        assert importlib.import_module("calc").__file__.startswith(str(ZIP))
        assert importlib.import_module("calc").VALUE == 2
    finally:
        sys.path.remove(str(ZIP))
        sys.modules.update(saved)
"""


@pytest.mark.parametrize("case", ["made", "before", "another clone"])
def test_code_the_tests_zip_is_theirs(
    repo: Path, genstamp: RunGenstamp, case: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Modules imported from a zip the run itself wrote into a git-ignored folder (a zipapp or
    an egg a test builds) are the run's own, as the same modules written as plain files are:
    their paths (``build/gen.zip/calc/__init__.py``) name no file, and the archive's times
    tell when it was made. Its copy of an import root's module is judged by its bytes: the
    tree's are accepted, a past version's (zipped from another clone, which still has it) are
    a stale artifact's, refused. The control: the zip left there before the run is refused."""
    write_calc(
        repo,
        tests=ZIPPED.replace("MAKE", str(case != "before")),
        gitignore="__pycache__/\n*.py[co]\nbuild/\n",
    )
    (repo / "src" / "calc" / "__init__.py").write_text("VALUE = 2\n")
    commit_all(repo, "a test that imports from a zip")
    if case == "another clone":
        calc_from_another_clone(repo, tmp_path / "other", monkeypatch)
    if case == "before":  # left there by an earlier session, git-ignored
        (repo / "build").mkdir()
        with zipfile.ZipFile(repo / "build" / "gen.zip", "w") as archive:
            archive.writestr("gen_pkg/__init__.py", "VALUE = 7\n")
            archive.writestr("calc/__init__.py", "VALUE = 2\n")
    out = green(genstamp, repo)
    code, data = verdict(genstamp, repo)
    if case == "made":
        assert code == 0, data
        assert "will refuse" not in out, out
    elif case == "before":
        assert (code, rules(data)) == (1, ["ignored-code"]), data
        assert "build/gen.zip/gen_pkg/__init__.py" in message(data, "ignored-code")
    else:
        assert (code, rules(data)) == (1, ["foreign-origin"]), data
        assert "build/gen.zip/calc/__init__.py" in message(data, "foreign-origin")


TRACKED_WHERE_A_PATTERN_MATCHES = """\
import pathlib, sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "FOLDER"))
import vlib


def test_vendored():
    assert vlib.X == 5
"""


@pytest.mark.parametrize("holder", ["archive", "submodule", "clone"])
def test_code_git_tracks_where_a_top_pattern_matches_is_not_ignored(
    repo: Path, genstamp: RunGenstamp, holder: str, tmp_path: Path
) -> None:
    """A vendored archive committed although `*.zip` is ignored (`git add -f deps.zip`), and a
    submodule's file a top pattern matches (`*_pb2.py`: git's rules of the top do not reach
    into a submodule): tracked, a clean clone has them. The run's forecast said "will refuse:
    ignored-code" of their modules, where the gate accepted. The control: a clone kept in
    the work tree that the top does not track is no submodule; the top's rules decide."""
    if holder == "archive":
        write_calc(repo, tests=TRACKED_WHERE_A_PATTERN_MATCHES.replace("FOLDER", "deps.zip"))
        (repo / ".gitignore").write_text("__pycache__/\n*.zip\n")
        with zipfile.ZipFile(repo / "deps.zip", "w") as archive:
            archive.writestr("vlib/__init__.py", "X = 5\n")
        git(repo, "add", "-f", "deps.zip")
    else:
        lib = tmp_path / "lib"
        init_repo(lib)
        (lib / "vlib").mkdir()
        (lib / "vlib" / "__init__.py").write_text("from vlib.api_pb2 import X\n")
        (lib / "vlib" / "api_pb2.py").write_text("X = 5\n")
        commit_all(lib, "lib")
        write_calc(repo, tests=TRACKED_WHERE_A_PATTERN_MATCHES.replace("FOLDER", "sub"))
        (repo / ".gitignore").write_text("__pycache__/\nvlib/\n*_pb2.py\n")
        if holder == "submodule":
            git(repo, "-c", "protocol.file.allow=always", "submodule", "add", "-q", str(lib), "sub")
    commit_all(repo, "vendored")
    if holder == "clone":  # (after the commit: the top tracks nothing of it)
        git(repo, "clone", "-q", str(lib), "sub")
    out = green(genstamp, repo)
    code, data = verdict(genstamp, repo)
    if holder == "clone":
        assert "will refuse: ignored-code: sub/vlib/__init__.py, sub/vlib/api_pb2.py" in out, out
        assert code == 1 and "ignored-code" in rules(data), data
        return
    assert "will refuse" not in out, out
    assert code == 0, data


SOURCELESS = """\
import importlib.machinery, importlib.util, os, pathlib, py_compile

ROOT = pathlib.Path(__file__).resolve().parent.parent
FROM = pathlib.Path(os.environ.get("CALC_FROM", ROOT))  # the package the test compiles


def test_sourceless(tmp_path):
    where = WHERE
    where.mkdir(exist_ok=True)
    pyc = str(where / "calc.pyc")
    source = str(FROM / "src" / "calc" / "__init__.py")
    py_compile.compile(source, cfile=pyc, doraise=True, optimize=OPTIMIZE)
    loader = importlib.machinery.SourcelessFileLoader("calc", pyc)
    module = importlib.util.module_from_spec(importlib.util.spec_from_loader("calc", loader))
    loader.exec_module(module)
    assert module.VALUE == 2
"""


@pytest.mark.parametrize(
    ("case", "optimize", "where"),
    [
        ("the tree", -1, "tmp_path"),
        ("the tree", 2, "tmp_path"),
        ("the tree", -1, "ROOT / 'build'"),
        ("another clone", -1, "tmp_path"),
    ],
)
def test_bytecode_the_tests_compile_is_judged_by_its_code(
    repo: Path,
    genstamp: RunGenstamp,
    case: str,
    optimize: int,
    where: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A test that compiles an import root's module into bytecode outside the tree and runs
    it with no source beside it (a sourceless distribution's check): the code the tree's file
    compiles to is the run's own; another clone's older file compiled so is not, though the
    run made the ``.pyc`` (it carries no source to compare, its code does). Compiled at any
    optimisation level (``compileall -o 2``), outside the tree or in its git-ignored build/."""
    tests = SOURCELESS.replace("OPTIMIZE", str(optimize)).replace("WHERE", where)
    write_calc(repo, tests=tests, gitignore="__pycache__/\n*.py[co]\nbuild/\n")
    (repo / "src" / "calc" / "__init__.py").write_text('"""calc."""\nVALUE = 2\n')
    commit_all(repo, "a test that compiles calc")
    foreign = calc_judged(genstamp, repo, case, tmp_path / "other", monkeypatch)
    assert foreign is None or "calc.pyc" in foreign


PSEUDO = """\
import importlib, importlib.abc, importlib.util, os, pathlib, sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
FROM = pathlib.Path(os.environ.get("CALC_FROM", ROOT))  # the package the loader reads


class Finder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    codes = {}  # compiled once, run again by importlib.reload

    def find_spec(self, name, path=None, target=None):
        if name in ("calc", "calc.made"):
            return importlib.util.spec_from_loader(name, self, is_package=name == "calc")

    def create_module(self, spec):
        return None

    def exec_module(self, module):
        exec(compile("scratch = True\\n", "<string>", "exec"), {})  # the loader's own
        name = module.__name__
        if name not in self.codes:
            if name == "calc":
                text = READ(FROM / "src" / "calc" / "__init__.py")
            else:  # a module the tree has no file for: the loader's own making
                text = "MADE = True\\n"
            self.codes[name] = compile(text, f"<gen {name}>", "exec")
        exec(self.codes[name], module.__dict__)


def test_loaded_by_a_finder():
    saved = {k: sys.modules.pop(k) for k in list(sys.modules) if k.split(".")[0] == "calc"}
    sys.meta_path.insert(0, Finder())
    try:
        import calc.made

        assert calc.VALUE == 2 and calc.made.MADE
        assert importlib.reload(calc).VALUE == 2
    finally:
        sys.meta_path[:] = [f for f in sys.meta_path if not isinstance(f, Finder)]
        for k in [k for k in sys.modules if k.split(".")[0] == "calc"]:
            del sys.modules[k]
        sys.modules.update(saved)
"""


@pytest.mark.parametrize(
    "case", ["the tree", "the tree, CRLF", "the tree, latin-1", "another clone"]
)
def test_a_module_compiled_under_a_name_of_no_file_is_judged_by_its_text(
    repo: Path, genstamp: RunGenstamp, case: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A finder first on ``sys.meta_path`` (ahead of genstamp's) whose loader compiles a
    module's text under a name of no file (``<gen calc>``): the module is recorded by its
    text. The tree's text is the tree's module; another clone's older text is foreign,
    though no file names it. A module the tree has no file for (``calc.made``) is the
    loader's own. A file with CRLF line ends that the loader reads in text mode (universal
    newlines) is the tree's text too."""
    latin = case.endswith("latin-1")  # decoded as the import system decodes a source
    read = (
        "(lambda p: importlib.util.decode_source(p.read_bytes()))"
        if latin
        else "pathlib.Path.read_text"
    )
    write_calc(repo, tests=PSEUDO.replace("READ", read))
    newline = "\r\n" if case.endswith("CRLF") else "\n"
    text = f"# -*- coding: latin-1 -*-\nNAME = 'caf\xe9'{newline}" if latin else ""
    (repo / "src" / "calc" / "__init__.py").write_bytes(
        text.encode("latin-1") + f"VALUE = 2{newline}".encode()
    )
    commit_all(repo, "a test with its own finder")
    foreign = calc_judged(genstamp, repo, case, tmp_path / "other", monkeypatch)
    assert foreign is None or ("<gen calc>" in foreign and "calc.made" not in foreign)


@pytest.mark.parametrize("name", ["<string>", "/nowhere/cached.py", "/nowhere/calc/__init__.py"])
@pytest.mark.parametrize("case", ["the tree", "another clone"])
def test_a_module_run_from_text_under_another_name_is_judged_by_its_text(
    repo: Path,
    genstamp: RunGenstamp,
    case: str,
    name: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The finder's loader compiles the module's text under a name that is not the module's
    (``<string>``, as a cache of its text run again) or under a path where no file is: the
    module's body all the same, judged by its text. The tree's text is the tree's module;
    another clone's older text is foreign (it was accepted: no load of calc was recorded).
    The loader's own scratch code under ``<string>`` is not taken for the module's."""
    tests = PSEUDO.replace("READ", "pathlib.Path.read_text")
    tests = tests.replace('f"<gen {name}>"', repr(name))
    write_calc(repo, tests=tests)
    (repo / "src" / "calc" / "__init__.py").write_text("VALUE = 2\n")
    commit_all(repo, "a test with its own finder")
    foreign = calc_judged(genstamp, repo, case, tmp_path / "other", monkeypatch)
    assert foreign is None or (f"calc from <{name}>" in foreign or f"calc from {name}" in foreign)


LOADER_MODES = """\
import importlib.abc, importlib.machinery, os, pathlib, runpy, sys, tempfile, types

ROOT = pathlib.Path(__file__).resolve().parent.parent
REAL = ROOT / "src" / "calc" / "__init__.py"
TEXT = REAL.read_text() if os.environ.get("CALC_TEXT") == "tree" else "VALUE = 2\\n"


class Loader(importlib.abc.Loader):
    def create_module(self, spec):
        return None

    def _run(self, module):  # a method of the loader's own, called by exec_module
        exec(compile(TEXT, "<string>", "exec"), module.__dict__)

    def exec_module(self, module):
        if MODE == "helper":
            self._run(module)
        elif MODE == "relative":
            exec(compile(TEXT, "__init__.py", "exec"), module.__dict__)
        elif MODE == "function":
            types.FunctionType(compile(TEXT, "<string>", "exec"), module.__dict__)()
        else:  # runpy
            path = pathlib.Path(tempfile.mkdtemp(), "calc.py")
            path.write_text(TEXT)
            ran = runpy.run_path(str(path))
            module.__dict__.update({k: v for k, v in ran.items() if not k.startswith("__")})


class Finder(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name == "calc":
            return importlib.machinery.ModuleSpec(name, Loader(), origin=str(REAL))


def test_loaded_by_a_finder():
    sys.modules.pop("calc", None)
    sys.meta_path.insert(0, Finder())
    try:
        import calc  # kept imported, as a conftest's loader keeps what it loads

        assert calc.VALUE == 2
    finally:
        sys.meta_path[:] = [f for f in sys.meta_path if not isinstance(f, Finder)]
"""


@pytest.mark.parametrize("mode", ["helper", "relative", "function", "runpy"])
@pytest.mark.parametrize("text", ["tree", "older"])
def test_a_module_a_loader_runs_out_of_sight_is_never_accepted_for_its_file(
    repo: Path, genstamp: RunGenstamp, mode: str, text: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A loader that runs a module of the checkout from text of its own, by an exec in a
    method of its own (``self._run``), under a relative name of no file, as a function made of
    the code object, or through runpy's ``run_path`` of a copy: another version's text was
    accepted (no load of calc was recorded). Older text is refused now. The tree's text run
    by an exec is accepted; run as a function or by ``run_path`` no audit event shows what
    ran, and the module's file never ran: refused (what ran is unknown)."""
    tests = LOADER_MODES.replace("MODE ==", f"{mode!r} ==")
    write_calc(repo, tests=tests)
    (repo / "src" / "calc" / "__init__.py").write_text("VALUE = 2\n")
    if text == "older":  # the loader's text is VALUE = 2, the tree's an edit the test never ran
        (repo / "src" / "calc" / "__init__.py").write_text("VALUE = 3\n")
    monkeypatch.setenv("CALC_TEXT", "tree" if text == "tree" else "")
    commit_all(repo, "a test whose finder runs calc its own way")
    green(genstamp, repo)
    code, data = verdict(genstamp, repo)
    if text == "tree" and mode in ("helper", "relative"):
        assert (code, rules(data)) == (0, []), data
    else:
        assert (code, rules(data)) == (1, ["foreign-origin"]), data
        assert "calc from <" in message(data, "foreign-origin"), data


TOUCHES = """\
import importlib, os, pathlib, shutil, subprocess, sys

MOD = pathlib.Path(__file__).resolve().parent.parent / "build" / "gen" / "gen_mod.py"


def test_generated_code(tmp_path):
    HOW
    sys.path.insert(0, str(MOD.parent))
    try:
        assert importlib.import_module("gen_mod").VALUE == 7
    finally:
        sys.path.remove(str(MOD.parent))
"""
IN_A_CHILD = "subprocess.run([sys.executable, '-c', f'import os; os.utime({str(MOD)!r})'])"
# a generator's atomic write (a temporary file in the folder, renamed over the module), then
# the mode mkstemp leaves (0600) made readable
ATOMIC = (
    "import tempfile\n    fd, tmp = tempfile.mkstemp(dir=MOD.parent, suffix='.tmp')\n"
    "    os.write(fd, b'VALUE = 7\\n'); os.close(fd)\n    os.replace(tmp, MOD)\n"
    "    os.chmod(MOD, 0o644)"
)
# a package the tests make, its `__init__.py` by a touch: left by an earlier run, a touch only
# sets its time, and its bytes (none) are what a clean clone's run makes
EMPTY_INIT = (
    "(MOD.parent / '__init__.py').touch()\n    MOD.write_text('VALUE = 7')\n"
    "    sys.path.insert(0, str(MOD.parent.parent))\n"
    "    importlib.import_module('gen')  # its empty __init__.py runs\n"
    "    sys.path.remove(str(MOD.parent.parent))"
)
# a copy that keeps the source's old time (its bytes are the run's all the same)
COPY2 = (
    "old = tmp_path / 'old.py'\n    old.write_text('VALUE = 7\\n')\n"
    "    os.utime(old, (0, 0))\n    shutil.copy2(old, MOD)"
)


@pytest.mark.parametrize(
    ("how", "made"),
    [
        ("MOD.touch(exist_ok=True)", False),
        ("os.chmod(MOD, 0o644)", False),
        (IN_A_CHILD, False),
        (
            "(tmp_path / 'm.py').write_text('VALUE = 7')\n    shutil.copy(tmp_path / 'm.py', MOD)",
            True,
        ),
        ("MOD.write_text('VALUE = 7')\n    os.chmod(MOD, 0o644)", True),
        (ATOMIC, True),
        (COPY2, True),
        ("MOD.write_text('')\n    MOD.touch()\n    MOD.write_text('VALUE = 7')", True),
        (EMPTY_INIT, True),
    ],
    ids=[
        "touched",
        "chmod",
        "touched-in-a-child",
        "copied-over",
        "written-then-chmod",
        "replaced-atomically-then-chmod",
        "copy2-of-an-old-file",
        "touched-then-written",
        "an-empty-init-a-touch-makes",
    ],
)
def test_code_the_tests_only_touch_is_not_theirs(
    repo: Path, genstamp: RunGenstamp, how: str, made: bool
) -> None:
    """A git-ignored module left by an earlier session, whose time or mode the tests set
    (``Path.touch``, ``os.chmod``) before they import it: the bytes that ran were not the run's
    (a clean clone's touch makes an empty file), so it is ignored code; written over by the
    tests (a copy, a write), it is theirs, and so is an empty file a touch leaves as it was (a
    package's ``__init__.py``: a clean clone's touch makes the same)."""
    write_calc(
        repo, tests=TOUCHES.replace("HOW", how), gitignore="__pycache__/\n*.py[co]\nbuild/\n"
    )
    commit_all(repo, "a test that touches an ignored module")
    (repo / "build" / "gen").mkdir(parents=True)
    (repo / "build" / "gen" / "gen_mod.py").write_text("VALUE = 7\n")
    (repo / "build" / "gen" / "__init__.py").write_text("")  # an earlier run's touch made it
    out = green(genstamp, repo)
    code, data = verdict(genstamp, repo)
    if made:
        assert (code, rules(data)) == (0, []), data
        assert "will refuse" not in out, out
    else:
        assert (code, rules(data)) == (1, ["ignored-code"]), data
        assert "build/gen/gen_mod.py" in message(data, "ignored-code")
        assert "will refuse: ignored-code" in out, out


def test_code_the_project_declares_generated_is_accepted(repo: Path, genstamp: RunGenstamp) -> None:
    _ignored_lib(repo, generated=True)
    out = green(genstamp, repo)
    assert "will refuse" not in out and "genstamp gate: bound to tree" in out, out
    code, data = verdict(genstamp, repo)
    assert (code, rules(data)) == (0, []), data


def test_a_generated_glob_the_judged_commit_does_not_declare_excuses_nothing(
    repo: Path, genstamp: RunGenstamp
) -> None:
    """The run loaded ignored code and the push was refused; the user declares it generated
    in the work tree's pyproject.toml but commits nothing: the commit (``--rev``, a push) was
    accepted, judged with the work tree's glob, though no clone of it has the file. Refused;
    committed (and tested again), the glob counts."""
    _ignored_lib(repo, generated=False)
    green(genstamp, repo)
    pyproject = repo / "pyproject.toml"
    pyproject.write_text(pyproject.read_text() + '\n[tool.genstamp]\ngenerated = ["lib/**/*.py"]\n')
    code, data = verdict(genstamp, repo, "--rev", "HEAD")
    assert (code, rules(data)) == (1, ["ignored-code"]), data
    commit_all(repo, "the generated code declared")
    green(genstamp, repo)
    code, data = verdict(genstamp, repo, "--rev", "HEAD")
    assert (code, rules(data)) == (0, []), data


@pytest.mark.parametrize(
    ("declared", "accepted"),
    [
        ('[tool.setuptools_scm]\nversion_file = "src/calc/_version.py"\n', True),
        ('[tool.setuptools_scm]\nwrite_to = "src/calc/_version.py"\n', True),
        ('[tool.hatch.build.hooks.vcs]\nversion-file = "src/calc/_version.py"\n', True),
        (
            '[tool.hatch.build.targets.wheel.hooks.vcs]\nversion-file = "src/calc/_version.py"\n',
            True,
        ),
        ('[tool.vcs-versioning]\nversion_file = "src/calc/_version.py"\n', True),
        # below pdm-backend's package folder: src/, where there is one
        ('[tool.pdm.version]\nsource = "scm"\nwrite_to = "calc/_version.py"\n', True),
        ('[tool.setuptools_scm]\nversion_file = "src/calc/_other.py"\n', False),
        ("", False),
        ('setup.py:setup(use_scm_version={"write_to": "src/calc/_version.py"})\n', True),
        ("setup.py:setup(use_scm_version=True)\n", False),
    ],
    ids=[
        "setuptools-scm",
        "setuptools-scm-write-to",
        "hatch-vcs",
        "hatch-vcs-of-a-target",
        "vcs-versioning",
        "pdm-backend",
        "another-file",
        "undeclared",
        "setup-py",
        "setup-py-no-file",
    ],
)
def test_a_version_file_the_build_writes_is_generated(
    repo: Path, genstamp: RunGenstamp, declared: str, accepted: bool
) -> None:
    """The version module setuptools-scm or hatch-vcs writes from git, ignored by git: the
    project declares it in its build settings (pyproject.toml, or setup.py's literal
    ``use_scm_version``), which genstamp reads; one it does not declare is ignored code."""
    write_calc(
        repo,
        tests="from calc import __version__\n\n\ndef test_version():\n    assert __version__\n",
        gitignore="__pycache__/\n*.py[co]\nsrc/calc/_version.py\n",
    )
    (repo / "src" / "calc" / "__init__.py").write_text("from calc._version import __version__\n")
    (repo / "src" / "calc" / "_version.py").write_text("__version__ = '1.0.dev3+g1234567'\n")
    if declared.startswith("setup.py:"):
        setup = "from setuptools import setup\n\n" + declared.removeprefix("setup.py:")
        (repo / "setup.py").write_text(setup)
    else:
        with (repo / "pyproject.toml").open("a") as fh:
            fh.write(declared)
    commit_all(repo, "a version file the build writes")
    judged_as(genstamp, repo, None if accepted else "ignored-code", "src/calc/_version.py")


# -- installed code is the installer's -------------------------------------------------------------


@pytest.fixture(scope="module")
def venv_project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A project whose test environment is a `python -m venv .venv` inside it, with genstamp
    (this source) and pytest installed by pip: its bytecode predates every generation."""
    repo = init_repo(tmp_path_factory.mktemp("venv") / "repo")
    write_calc(
        repo,
        tests="from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n",
        gitignore="__pycache__/\n*.py[co]\n.venv/\n",
    )
    commit_all(repo, "calc")
    env = subprocess_env(bytecode=True)
    # no pip of its own (ensurepip alone takes seconds): this pip installs into it
    venv = [sys.executable, "-m", "venv", "--without-pip", ".venv"]
    subprocess.run(venv, cwd=repo, check=True, env=env)
    source = Path(genstamp_package.__file__).resolve().parents[2]
    into = ["--python", str(repo / ".venv/bin/python"), "install", "-q"]
    pip = subprocess.run(
        [sys.executable, "-m", "pip", *into, "pytest", str(source)],
        cwd=repo,
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
    )
    if pip.returncode != 0:
        pytest.skip(f"cannot install into a virtual environment here: {pip.stderr[-300:]}")
    return repo


def green_in_venv(where: Path, command: list[str]) -> None:
    """A green pytest run in ``where`` through an environment's ``command``, bytecode on."""
    env = subprocess_env(bytecode=True)
    proc = subprocess.run(command, cwd=where, capture_output=True, text=True, env=env, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_an_in_project_venv_is_accepted_after_a_green_run_and_refused_after_an_edit(
    venv_project: Path, genstamp: RunGenstamp
) -> None:
    repo = venv_project
    stamp(genstamp, repo)
    green_in_venv(repo, [str(repo / ".venv/bin/python"), "-m", "pytest", "-q"])
    code, data = verdict(genstamp, repo)
    assert (code, rules(data)) == (0, []), data
    (repo / CALC).write_text("def add(a, b):\n    return a - b\n")
    code, data = verdict(genstamp, repo)
    assert (code, rules(data)) == (1, ["tree-mismatch"])
    (repo / CALC).write_text("def add(a, b):\n    return a + b\n")


def test_an_in_project_venv_git_does_not_ignore_is_accepted_after_a_green_run(
    venv_project: Path, genstamp: RunGenstamp
) -> None:
    """``python -m venv .venv`` of Python 3.11 writes no .gitignore into it: a project that
    ignores only bytecode holds the environment in its tree. The run's own start-up hook
    (``genstamp-run-….pth`` in its site-packages, there while the run lasts) is the run's, as
    its report is: rerunning could never bring it back (R01). The control: a file the run did
    not write there is the tree's."""
    repo = venv_project
    ignore = repo / ".gitignore"
    before = ignore.read_text()
    stray = next((repo / ".venv" / "lib").glob("python3*/site-packages")) / "stray.pth"
    ignore.write_text("__pycache__/\n*.py[co]\n")
    try:
        stamp(genstamp, repo)
        green_in_venv(repo, [str(repo / ".venv/bin/python"), "-m", "pytest", "-q"])
        code, data = verdict(genstamp, repo)
        assert (code, rules(data)) == (0, []), data
        stray.write_text("\n")
        code, data = verdict(genstamp, repo)
        assert (code, rules(data)) == (1, ["tree-mismatch"]), data
        assert "stray.pth" in message(data, "tree-mismatch")
    finally:
        ignore.write_text(before)
        stray.unlink(missing_ok=True)


@pytest.mark.parametrize("stale", [False, True])
def test_an_installed_copy_in_an_in_project_venv_keeps_its_installers_bytecode(
    repo: Path, genstamp: RunGenstamp, stale: bool
) -> None:
    """`pip install .` (not editable) into the project's own `.venv`, then a generation: the
    copy's bytecode is the installer's, written before the generation, and is not stale for
    that (an installed package's never is). The control: bytecode of other code kept under the
    copy's name (its source's size and time restored) is."""
    write_calc(repo, gitignore="__pycache__/\n*.py[co]\n.venv/\n")
    (repo / "pyproject.toml").write_text('[tool.pytest.ini_options]\ntestpaths = ["tests"]\n')
    commit_all(repo, "calc")
    site = repo / ".venv" / "lib" / "python3" / "site-packages"
    (site / "calc").mkdir(parents=True)
    (repo / ".venv" / "pyvenv.cfg").write_text("home = /usr/bin\n")
    copy = site / "calc" / "__init__.py"
    shutil.copy2(repo / "src" / "calc" / "__init__.py", copy)
    import importlib.util
    import py_compile

    pyc = importlib.util.cache_from_source(str(copy))
    if stale:  # other code's bytecode, named as the copy's, its size and time kept
        at = (copy.stat().st_mtime_ns // 10**9) * 10**9  # a whole second, as a pyc keeps it
        copy.write_text("def add(a, b):\n    return a * b\n")
        os.utime(copy, ns=(at, at))
        py_compile.compile(str(copy), cfile=pyc)
        copy.write_text("def add(a, b):\n    return a + b\n")
        os.utime(copy, ns=(at, at))
        (repo / "tests" / "test_calc.py").write_text(
            "from calc import add\n\n\ndef test_add():\n    assert add(2, 2) == 4\n"
        )
        commit_all(repo, "a test the stale code passes too")
    else:
        py_compile.compile(str(copy), cfile=pyc)
    stamp(genstamp, repo)
    env = subprocess_env(bytecode=True, PYTHONPATH=str(site))
    proc = run_tests(repo, env=env)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    code, data = verdict(genstamp, repo)
    assert (code, rules(data)) == ((1, ["stale-bytecode"]) if stale else (0, [])), data


def test_a_worktree_tested_with_the_main_checkouts_venv_and_its_console_script(
    venv_project: Path, tmp_path: Path, genstamp: RunGenstamp
) -> None:
    """A linked worktree whose tests run with the main checkout's in-project `.venv`, through
    its `pytest` console script: that script lies in another checkout's folder, but in a
    virtual environment, which is the installer's: accepted. (The worktree's code, imported
    from the worktree's own src, is what ran.)"""
    worktree = tmp_path / "feature"
    git(venv_project, "worktree", "add", "-q", "-b", "feature", str(worktree))
    stamp(genstamp, worktree)
    green_in_venv(worktree, [str(venv_project / ".venv/bin/pytest"), "-q"])
    code, data = verdict(genstamp, worktree)
    assert (code, rules(data)) == (0, []), data


def _installation_in(folder: Path) -> Path:
    """A Python installation at ``folder`` (a prefix of its own, as `conda create -p` or a
    standalone build makes one): this interpreter's binary and standard library, hard-linked
    where the file system allows; pytest and genstamp come from this environment by a path
    file. Its interpreter."""
    base = Path(sys.base_exec_prefix)
    real = Path(os.path.realpath(sys.executable))
    stdlib = Path(sys._stdlib_dir)  # type: ignore[attr-defined]
    target = folder / "lib" / stdlib.name
    skip = shutil.ignore_patterns("test", "site-packages", "__pycache__", "idlelib", "tkinter")

    def link(src: str, dst: str) -> None:
        try:
            os.link(src, dst)
        except OSError:
            shutil.copy2(src, dst)

    shutil.copytree(stdlib, target, ignore=skip, copy_function=link)
    (folder / "bin").mkdir(parents=True)
    python = folder / "bin" / real.name
    link(str(real), str(python))
    for lib in (base / "lib").glob("libpython*"):
        link(str(lib), str(folder / "lib" / lib.name))
    site = target / "site-packages"
    site.mkdir()
    source = Path(genstamp_package.__file__).resolve().parents[1]
    here = [p for p in sys.path if p.endswith("site-packages")]
    (site / "outer.pth").write_text("".join(f"{p}\n" for p in [str(source), *here]))
    return python


@pytest.mark.parametrize("mark", ["conda", "prefix"])
def test_a_python_installation_inside_the_project_is_the_installers(
    project: Path, genstamp: RunGenstamp, mark: str
) -> None:
    """The tests run by a Python installed inside the work tree (`conda create -p ./env`, a
    standalone build) load its standard library from git-ignored files there: installed
    code, not the checkout's. Code of the project in another ignored folder is still refused
    (the control)."""
    (project / ".gitignore").write_text("__pycache__/\n*.py[co]\nenv/\nlib/\n")
    commit_all(project, "ignore the environment")
    python = _installation_in(project / "env")
    if mark == "conda":
        (project / "env" / "conda-meta").mkdir()
        (project / "env" / "conda-meta" / "history").write_text("")
    (project / "tests" / "test_more.py").write_text(
        "import decimal, fractions, json, sqlite3\n\n\ndef test_more():\n"
        "    half = str(fractions.Fraction(decimal.Decimal('0.5')))\n"
        "    assert json.loads(json.dumps([half])) == ['1/2']\n"
    )
    commit_all(project, "a test that loads the standard library")
    stamp(genstamp, project)
    argv = [str(python), "-m", "pytest", "-q", "-p", "no:cacheprovider"]
    proc = subprocess.run(argv, cwd=project, capture_output=True, text=True, env=subprocess_env())
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "will refuse" not in proc.stdout, proc.stdout
    code, data = verdict(genstamp, project)
    assert (code, rules(data)) == (0, []), data
    # the control: the project's own code from an ignored folder
    (project / "lib" / "helper").mkdir(parents=True)
    (project / "lib" / "helper" / "__init__.py").write_text("X = 1\n")
    (project / "tests" / "test_more.py").write_text(
        "import sys\n\nsys.path.insert(0, 'lib')\nimport helper\n\n\ndef test_more():\n"
        "    assert helper.X == 1\n"
    )
    commit_all(project, "a test of an ignored helper")
    stamp(genstamp, project)
    proc = subprocess.run(argv, cwd=project, capture_output=True, text=True, env=subprocess_env())
    assert "will refuse: ignored-code" in proc.stdout, proc.stdout
    code, data = verdict(genstamp, project)
    assert rules(data) == ["ignored-code"], data
    assert "lib/helper/__init__.py" in message(data, "ignored-code")
    assert "env/" not in message(data, "ignored-code")


# -- submodules ------------------------------------------------------------------------------------


def vendor_project(repo: Path, lib: Path, check: str) -> None:
    """``lib`` a repository of ``vendorlib`` (VALUE = 1); ``repo`` a project whose test imports
    it from ``vendor`` and asserts ``VALUE {check}``."""
    (lib / "vendorlib").mkdir()
    (lib / "vendorlib" / "__init__.py").write_text("VALUE = 1\n")
    commit_all(lib, "lib")
    write_calc(
        repo,
        tests=f"from vendorlib import VALUE\n\n\ndef test_value():\n    assert VALUE {check}\n",
    )
    (repo / "pyproject.toml").write_text(
        '[tool.pytest.ini_options]\ntestpaths = ["tests"]\npythonpath = ["src", "vendor"]\n'
    )


@pytest.fixture
def with_submodule(repo: Path, tmp_path: Path) -> Path:
    """A project whose tests import ``vendorlib`` from a submodule at ``vendor``."""
    lib = init_repo(tmp_path / "libsrc")
    vendor_project(repo, lib, "> 0")
    git(repo, "-c", "protocol.file.allow=always", "submodule", "add", "-q", str(lib), "vendor")
    commit_all(repo, "calc with a submodule")
    return repo


def test_a_clean_submodule_is_accepted(with_submodule: Path, genstamp: RunGenstamp) -> None:
    found, data = judged(genstamp, with_submodule)
    assert found == [], data


FIXED_ADD = "def add(a, b):\n    return a + b\n"


@pytest.mark.parametrize("where", ["another-clone", "submodule"])
def test_a_submodules_project_is_the_checkouts_wherever_it_loads_from(
    repo: Path, tmp_path: Path, genstamp: RunGenstamp, where: str
) -> None:
    """The app records the library depx as the submodule libs/dep, at a commit whose add is
    wrong; the developer's own clone of the library holds the fix, uncommitted, and the tests
    import that clone's depx (as an editable install of it would): no tree holds what ran, and
    a recursive clone fails. depx is an import root of the checkout (the submodule's project,
    as any project's below the top), so its code from elsewhere is foreign-origin. The
    control: the fix committed in the library and the submodule, imported from it."""
    lib = init_repo(tmp_path / "depsrc")
    (lib / "pyproject.toml").write_text('[project]\nname = "depx"\nversion = "1"\n')
    (lib / "depx").mkdir()
    (lib / "depx" / "__init__.py").write_text("def add(a, b):\n    return a - b\n")
    commit_all(lib, "lib")
    dev = tmp_path / "dep-dev"
    git(tmp_path, "clone", "-q", str(lib), str(dev))
    (dev / "depx" / "__init__.py").write_text(FIXED_ADD)  # the fix, committed nowhere
    if where == "submodule":
        (lib / "depx" / "__init__.py").write_text(FIXED_ADD)
        commit_all(lib, "the fix")
    entry = str(dev) if where == "another-clone" else "libs/dep"
    test = f"import sys\n\nsys.path.insert(0, {entry!r})\nfrom depx import add\n\n\n"
    write_calc(repo, tests=test + "def test_add():\n    assert add(1, 2) == 3\n")
    git(repo, "-c", "protocol.file.allow=always", "submodule", "add", "-q", str(lib), "libs/dep")
    commit_all(repo, "app with the library as a submodule")
    found, data = judged(genstamp, repo)
    if where == "submodule":
        assert found == [], data
    else:
        assert found == ["foreign-origin"], data
        assert f"depx from {dev / 'depx' / '__init__.py'}" in message(data, "foreign-origin")


def test_an_edit_inside_a_submodule_the_tests_import_is_refused(
    with_submodule: Path, genstamp: RunGenstamp
) -> None:
    edit_vendor_then_commit(with_submodule, genstamp, "VALUE = 2\n")


def edit_vendor_then_commit(repo: Path, genstamp: RunGenstamp, text: str) -> None:
    """An edit of the vendored module the tests import is refused; once committed inside the
    submodule and recorded here, accepted."""
    (repo / "vendor" / "vendorlib" / "__init__.py").write_text(text)
    out, data = told_and_judged(genstamp, repo)
    found = rules(data)
    # the tree records the submodule's commit, which does not hold what the tests loaded
    assert found == ["loaded-not-tested", "dirty-submodule"], data
    assert "vendor/vendorlib/__init__.py" in message(data, "loaded-not-tested")
    assert "submodule vendor has changes" in message(data, "dirty-submodule")
    assert "will refuse: dirty-submodule: vendor (" in out, out  # told at test time
    assert "will refuse: loaded-not-tested: vendor/vendorlib/__init__.py" in out, out
    # the remedy: commit inside it, add it here, test again
    git(repo / "vendor", "commit", "-qam", "edit")
    commit_all(repo, "bump vendor")
    out, data = told_and_judged(genstamp, repo)
    assert rules(data) == [], data
    assert "will refuse" not in out, out


def test_an_untracked_file_in_a_submodule_is_refused_though_not_imported(
    with_submodule: Path, genstamp: RunGenstamp
) -> None:
    repo = with_submodule
    (repo / "vendor" / "data.txt").write_text("not in the submodule's commit\n")
    out, data = told_and_judged(genstamp, repo)
    assert rules(data) == ["dirty-submodule"], data
    assert "vendor/data.txt" in message(data, "dirty-submodule")
    assert "will refuse: dirty-submodule: vendor (" in out, out  # told at test time
    # control: an ignored file inside it is not a change
    (repo / "vendor" / "data.txt").unlink()
    exclude(repo / "vendor", "*.log")
    (repo / "vendor" / "run.log").write_text("ignored\n")
    out, data = told_and_judged(genstamp, repo)
    assert rules(data) == [], data
    assert "will refuse" not in out, out


READS_THE_LIMIT = """\
import os, pathlib


def test_limit():
    if os.environ.get("LINK"):  # the fix, written through a link from outside the work tree
        pathlib.Path(os.environ["LINK"]).write_text("42\\n")
    limit = pathlib.Path(__file__).parent.parent / "src" / "calc" / "limit.txt"
    assert limit.read_text() == os.environ.get("WANT", "10") + "\\n"
"""


@pytest.mark.parametrize("through", ["the-link", "nothing", "nothing-skip-worktree"])
def test_a_file_written_through_a_hard_link_during_the_run(
    repo: Path, tmp_path: Path, genstamp: RunGenstamp, through: str
) -> None:
    """A tracked data file with a hard link outside the work tree (a backup, `cp -al`), written
    through that link while the tests run: no watch of the work tree's folders sees it, so the
    tree at the end was taken for the one at the start, and the commit (whose tests fail) was
    judged tested and green. The run's used files with another link are compared with the
    tree: refused. Controls: the link there, nothing written through it: accepted; so too
    where the file is `--skip-worktree` (which git will not add: judged as a hidden change)."""
    write_calc(repo, tests=READS_THE_LIMIT)
    (repo / "src" / "calc" / "limit.txt").write_text("10\n")
    commit_all(repo, "limit 10")
    link = tmp_path / "limit-backup.txt"
    os.link(repo / "src" / "calc" / "limit.txt", link)
    if through == "nothing-skip-worktree":
        git(repo, "update-index", "--skip-worktree", "src/calc/limit.txt")
    stamp(genstamp, repo)
    assert run_tests(repo).returncode == 0  # (a run before: its tree is kept for the next)
    extra = {"LINK": str(link), "WANT": "42"} if through == "the-link" else {}
    proc = run_tests(repo, env=subprocess_env(**extra))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    data = verdict(genstamp, repo, "--rev", "HEAD")[1]
    if through != "the-link":
        assert rules(data) == [], data
        assert "will refuse" not in proc.stdout, proc.stdout
        return
    assert rules(data) == ["hidden-change"], data
    assert "src/calc/limit.txt (written through another link" in message(data, "hidden-change")
    assert "will refuse: hidden-change: src/calc/limit.txt" in proc.stdout, proc.stdout


@pytest.mark.parametrize("written", ["by-python", "a-fixture-named-pyc"])
def test_bytecode_python_wrote_in_a_submodule_is_no_change(
    with_submodule: Path, genstamp: RunGenstamp, written: str
) -> None:
    """The submodule's project ignores no bytecode, and the app ran once outside the tests
    (`python -c 'import vendorlib'`, bytecode on): its ``__pycache__`` is untracked in the
    submodule, but no change of what it holds; a fresh green run is accepted. A data file of
    that suffix outside ``__pycache__`` (a fixture the tests read) is a change: refused."""
    repo = with_submodule
    stamp(genstamp, repo)  # (which scrubs the bytecode there is)
    if written == "by-python":
        env = subprocess_env(bytecode=True, PYTHONPATH=str(repo / "vendor"))
        subprocess.run([sys.executable, "-c", "import vendorlib"], cwd=repo, env=env, check=True)
        assert list((repo / "vendor" / "vendorlib" / "__pycache__").glob("*.pyc"))
    else:
        (repo / "vendor" / "fixtures").mkdir()
        (repo / "vendor" / "fixtures" / "sample.pyc").write_bytes(b"not bytecode\n")
    proc = run_tests(repo)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    data = verdict(genstamp, repo)[1]
    if written == "by-python":
        assert "will refuse" not in proc.stdout, proc.stdout
        assert rules(data) == [], data
        return
    assert rules(data) == ["dirty-submodule"], data
    assert "vendor/fixtures/sample.pyc" in message(data, "dirty-submodule")


@pytest.mark.parametrize("option", ["--skip-worktree", "--assume-unchanged"])
def test_an_edit_a_submodules_index_hides_is_refused(
    with_submodule: Path, genstamp: RunGenstamp, option: str
) -> None:
    """A tracked file of the submodule edited and hidden from git by its own index: its status
    does not show it, the tests ran it, a clone does not have it. Refused, naming the file and
    the flag; the control is the flag alone, on the file as committed."""
    repo = with_submodule
    git(repo / "vendor", "update-index", option, "vendorlib/__init__.py")
    found, data = judged(genstamp, repo)
    assert found == [], data
    (repo / "vendor" / "vendorlib" / "__init__.py").write_text("VALUE = 2\n")
    found, data = judged(genstamp, repo)
    assert "dirty-submodule" in found, data
    told = message(data, "dirty-submodule")
    assert f"vendor/vendorlib/__init__.py (hidden by {option})" in told, told


@pytest.mark.parametrize("sparse", [True, False], ids=["sparse-checkout", "deleted"])
def test_a_sparse_checkout_of_a_submodule_is_no_change(
    repo: Path, tmp_path: Path, genstamp: RunGenstamp, sparse: bool
) -> None:
    """``git sparse-checkout set`` inside a submodule leaves files out of its work tree (git
    writes the setting to the submodule's ``config.worktree``, which libgit2 does not read):
    accepted. The control: the same file deleted by hand is a change."""
    lib = init_repo(tmp_path / "libsrc")
    (lib / "docs").mkdir()
    (lib / "docs" / "big.txt").write_text("a large file the tests never need\n")
    vendor_project(repo, lib, "> 0")
    git(repo, "-c", "protocol.file.allow=always", "submodule", "add", "-q", str(lib), "vendor")
    commit_all(repo, "calc with a submodule")
    if sparse:
        git(repo / "vendor", "sparse-checkout", "set", "vendorlib")
        assert not (repo / "vendor" / "docs").exists()
    else:
        (repo / "vendor" / "docs" / "big.txt").unlink()
    judged_as(genstamp, repo, None if sparse else "dirty-submodule", "vendor/docs/big.txt")


def test_a_submodules_folder_filled_by_hand_is_refused(
    with_submodule: Path, genstamp: RunGenstamp, tmp_path: Path
) -> None:
    """The submodule's checkout removed (``git submodule deinit``) and its folder filled with
    files by hand: no clone has them as they are. Refused; the control is the submodule checked
    out again."""
    repo = with_submodule
    git(repo, "submodule", "deinit", "-q", "-f", "vendor")
    shutil.copytree(tmp_path / "libsrc" / "vendorlib", repo / "vendor" / "vendorlib")
    (repo / "vendor" / "vendorlib" / "__init__.py").write_text("VALUE = 2\n")
    found, data = judged(genstamp, repo)
    assert "dirty-submodule" in found, data
    assert "vendor/ holds files but no checkout of it" in message(data, "dirty-submodule")
    shutil.rmtree(repo / "vendor" / "vendorlib")
    git(repo, "-c", "protocol.file.allow=always", "submodule", "update", "-q", "--init")
    found, data = judged(genstamp, repo)
    assert found == [], data


def test_code_a_submodule_ignores_is_ignored_code(
    with_submodule: Path, genstamp: RunGenstamp
) -> None:
    """A module the submodule's own rules ignore (a build's output), imported by the tests: a
    clean clone will not have it, as for a file the project ignores."""
    repo = with_submodule
    exclude(repo / "vendor", "_built.py")
    (repo / "vendor" / "vendorlib" / "_built.py").write_text("BUILT = 1\n")
    (repo / "tests" / "test_built.py").write_text(
        "from vendorlib._built import BUILT\n\n\ndef test_built():\n    assert BUILT\n"
    )
    commit_all(repo, "a test of the built module")
    out = green(genstamp, repo)
    assert "will refuse: ignored-code" in out
    code, data = verdict(genstamp, repo)
    assert (code, rules(data)) == (1, ["ignored-code"]), data
    assert "vendor/vendorlib/_built.py" in message(data, "ignored-code")
    # control: the submodule commits it (force-added past its own rule); the project takes it
    git(repo / "vendor", "add", "-f", "vendorlib/_built.py")
    git(repo / "vendor", "commit", "-qm", "commit the built module")
    commit_all(repo, "bump vendor")
    out = green(genstamp, repo)
    assert "ignored-code" not in out
    code, data = verdict(genstamp, repo)
    assert (code, rules(data)) == (0, []), data


@pytest.mark.parametrize("where", [".gitmodules", "config"])
def test_a_submodule_set_to_ignore_all_is_judged_at_its_checked_out_commit(
    with_submodule: Path, genstamp: RunGenstamp, where: str
) -> None:
    """``submodule.vendor.ignore = all`` hides from git that the submodule is checked out at a
    commit the superproject does not record: the tests ran that commit, and a push of the
    recorded one (which a clean clone checks out) is refused."""
    repo = with_submodule
    file = ["--file", ".gitmodules"] if where == ".gitmodules" else []
    git(repo, "config", *file, "submodule.vendor.ignore", "all")
    commit_all(repo, "ignore the submodule")
    (repo / "vendor" / "vendorlib" / "__init__.py").write_text("VALUE = 2\n")
    git(repo / "vendor", "commit", "-qam", "value 2")
    (repo / "tests" / "test_calc.py").write_text(
        "from vendorlib import VALUE\n\n\ndef test_value():\n    assert VALUE == 2\n"
    )
    git(repo, "add", "tests")
    git(repo, "commit", "-qm", "expect 2")  # the submodule's commit is left as recorded
    assert git(repo, "status", "--porcelain") == ""  # and git says nothing of it
    green(genstamp, repo)
    code, data = verdict(genstamp, repo, "--rev", "HEAD")
    assert (code, rules(data)) == (1, ["tree-mismatch"]), data
    assert "vendor" in message(data, "tree-mismatch")
    assert push(repo, "main", "main").returncode == 1
    # control: the superproject records the commit the tests ran
    git(repo, "add", "vendor")
    commit_all(repo, "bump vendor")
    green(genstamp, repo)
    code, data = verdict(genstamp, repo, "--rev", "HEAD")
    assert (code, rules(data)) == (0, []), data
    assert push(repo, "main", "main").returncode == 0


def test_a_repository_added_inside_the_project_without_gitmodules(
    repo: Path, tmp_path: Path, genstamp: RunGenstamp
) -> None:
    """A repository added with plain `git add` (a gitlink with no ``.gitmodules`` URL): a clone
    cannot fetch it, so the code the tests load from it is refused, naming it, though the run
    was green here; a change in its work tree is a submodule's change all the same. Once
    registered with its URL (the control), accepted."""
    lib = init_repo(tmp_path / "libsrc")
    vendor_project(repo, lib, "== 1")
    git(repo, "clone", "-q", str(lib), "vendor")
    commit_all(repo, "calc with an embedded repository")
    assert git(repo, "ls-files", "-s", "vendor").startswith("160000 ")
    assert not (repo / ".gitmodules").exists()
    # the oracle: a clone, submodules and all, has an empty vendor/ (git: "No url found")
    allow = ("-c", "protocol.file.allow=always")
    clone = tmp_path / "clone"
    git(tmp_path, *allow, "clone", "-q", "--recurse-submodules", str(repo), str(clone))
    assert list((clone / "vendor").iterdir()) == []
    out = green(genstamp, repo)  # the run's forecast says it too
    assert "will refuse: unregistered-submodule: vendor/vendorlib/__init__.py (in vendor" in out
    found = rules(data := verdict(genstamp, repo)[1])
    assert found == ["unregistered-submodule"], data
    said = message(data, "unregistered-submodule")
    assert "from vendor, a repository" in said and "vendor/vendorlib/__init__.py" in said, said
    (repo / "vendor" / "data.txt").write_text("read by no test, in no commit\n")
    found, data = judged(genstamp, repo)
    assert found == ["dirty-submodule", "unregistered-submodule"], data
    assert "vendor/data.txt" in message(data, "dirty-submodule")
    (repo / "vendor" / "data.txt").unlink()
    # a .gitmodules section without a URL is no registration either
    (repo / ".gitmodules").write_text('[submodule "vendor"]\n\tpath = vendor\n')
    commit_all(repo, "name the embedded repository, without a URL")
    found, data = judged(genstamp, repo)
    assert found == ["unregistered-submodule"], data
    # nor one with its URL that a clone skips (`update = none`: git says "Skipping submodule")
    git(repo, "config", "-f", ".gitmodules", "submodule.vendor.url", str(lib))
    git(repo, "config", "-f", ".gitmodules", "submodule.vendor.update", "none")
    commit_all(repo, "register it, skipped by every clone")
    shutil.rmtree(clone)
    git(tmp_path, *allow, "clone", "-q", "--recurse-submodules", str(repo), str(clone))
    assert list((clone / "vendor").iterdir()) == []
    found, data = judged(genstamp, repo)
    assert found == ["unregistered-submodule"], data
    assert "update = none" in message(data, "unregistered-submodule"), data
    # control: registered with its URL, a clone fetches it and the gate accepts
    git(repo, "config", "-f", ".gitmodules", "--unset", "submodule.vendor.update")
    commit_all(repo, "register the embedded repository")
    shutil.rmtree(clone)
    git(tmp_path, *allow, "clone", "-q", "--recurse-submodules", str(repo), str(clone))
    assert (clone / "vendor" / "vendorlib" / "__init__.py").read_text() == "VALUE = 1\n"
    out = green(genstamp, repo)
    assert "will refuse" not in out and "genstamp gate: bound to tree" in out
    found = rules(data := verdict(genstamp, repo)[1])
    assert found == [], data
    edit_vendor_then_commit(repo, genstamp, "VALUE = 1  # edit\n")


def nested_submodules(repo: Path, tmp_path: Path, ignore: str | None = None) -> Path:
    """``repo`` a project whose tests import ``innerlib`` (INNER = 5) from ``outer/inner``, a
    submodule of the submodule ``outer``; ``ignore``: what outer's ``.gitmodules`` tells git
    status to ignore of inner. inner's repository has a later commit (INNER = 6) on main;
    the one recorded is the first. Returns inner's repository."""
    inner = init_repo(tmp_path / "innersrc")
    (inner / "innerlib").mkdir()
    (inner / "innerlib" / "__init__.py").write_text("INNER = 5\n")
    commit_all(inner, "inner")
    first = git(inner, "rev-parse", "HEAD").strip()
    (inner / "innerlib" / "__init__.py").write_text("INNER = 6\n")
    commit_all(inner, "inner, later")
    outer = init_repo(tmp_path / "outersrc")
    (outer / "README").write_text("outer\n")
    allow = ("-c", "protocol.file.allow=always")
    git(outer, *allow, "submodule", "add", "-q", str(inner), "inner")
    git(outer / "inner", "checkout", "-q", first)
    if ignore is not None:
        git(outer, "config", "-f", ".gitmodules", "submodule.inner.ignore", ignore)
    commit_all(outer, "outer with inner")
    write_calc(repo, tests="from innerlib import INNER\n\n\ndef test_inner():\n    assert INNER\n")
    (repo / "pyproject.toml").write_text(
        '[tool.pytest.ini_options]\ntestpaths = ["tests"]\npythonpath = ["src", "outer/inner"]\n'
    )
    git(repo, *allow, "submodule", "add", "-q", str(outer), "outer")
    git(repo, *allow, "submodule", "update", "-q", "--init", "--recursive")
    commit_all(repo, "calc with nested submodules")
    return inner


def test_a_submodule_of_a_submodule(repo: Path, tmp_path: Path, genstamp: RunGenstamp) -> None:
    """Code the tests import from a submodule of a submodule is the tree's at the commits both
    record: accepted when clean; an edit in the inner one is refused, naming the file."""
    nested_submodules(repo, tmp_path)
    found, data = judged(genstamp, repo)
    assert found == [], data
    (repo / "outer" / "inner" / "innerlib" / "__init__.py").write_text("INNER = 5  # edit\n")
    found, data = judged(genstamp, repo)
    assert found == ["loaded-not-tested", "dirty-submodule"], data
    assert "outer/inner/innerlib/__init__.py" in message(data, "loaded-not-tested")


def test_a_submodule_of_a_submodule_moved_and_staged_but_not_committed(
    repo: Path, tmp_path: Path, genstamp: RunGenstamp
) -> None:
    """Inside outer, inner moved to its later commit and `git add inner`, never committed: the
    superproject records outer's commit, which records inner's first; the tests ran the later
    one (a clone has the first). Its index said nothing had moved: accepted. Refused now,
    naming it; the commit in outer and its `git add` here (the control) are accepted."""
    nested_submodules(repo, tmp_path)
    git(repo / "outer" / "inner", "checkout", "-q", "main")
    git(repo / "outer", "add", "inner")
    found, data = judged(genstamp, repo)
    assert "dirty-submodule" in found, data
    assert "outer/inner (at another commit)" in message(data, "dirty-submodule"), data
    commit_all(repo / "outer", "inner, later")
    git(repo, "add", "outer")
    commit_all(repo, "outer, with inner later")
    found, data = judged(genstamp, repo)
    assert found == [], data


@pytest.mark.parametrize("ignore", ["dirty", "all"])
def test_a_submodule_of_a_submodule_its_gitmodules_tells_git_to_ignore(
    repo: Path, tmp_path: Path, genstamp: RunGenstamp, ignore: str
) -> None:
    """The outer submodule's ``.gitmodules`` sets ``ignore`` for the inner one: git status in
    it no longer shows the inner one's changes (``dirty``: an edit; ``all``: also another
    commit checked out). The tests ran them and a recursive clone has neither: refused."""
    nested_submodules(repo, tmp_path, ignore)
    found, data = judged(genstamp, repo)
    assert found == [], data
    if ignore == "dirty":
        (repo / "outer" / "inner" / "innerlib" / "__init__.py").write_text("INNER = 7\n")
        what = "outer/inner/innerlib/__init__.py"
    else:
        git(repo / "outer" / "inner", "checkout", "-q", "main")
        what = "outer/inner (at another commit)"
    found, data = judged(genstamp, repo)
    assert "dirty-submodule" in found, data
    assert what in message(data, "dirty-submodule"), data


# -- an edit git is told not to look at ----------------------------------------------------------


@pytest.mark.parametrize("option", ["--skip-worktree", "--assume-unchanged"])
@pytest.mark.parametrize("kind", ["code", "config", "data", "data-by-fileio", "unread"])
def test_an_edit_the_index_hides_from_git_is_refused_and_told(
    project: Path, tmp_path: Path, genstamp: RunGenstamp, option: str, kind: str
) -> None:
    """`git update-index --skip-worktree` (or ``--assume-unchanged``) and an edit: git's status,
    and so the tree, does not see it, yet the tests run with it. A clone has the committed
    files (here: it fails). Refused, naming the file and the option, whether the file is code
    the tests load, the configuration that lets them import it, or data a test reads (the
    run's forecast tells the first two). A hidden edit no test opens (an editor's settings)
    is the user's own. Control: the flag lifted, the edit is in the tree and accepted."""
    read = "Path(__file__).with_name('expected.txt').read_text() == 'ok\\n'"
    if kind == "data-by-fileio":  # the audit event carries the path object itself
        read = "io.FileIO(Path(__file__).with_name('expected.txt')).read() == b'ok\\n'"
        kind = "data"
    (project / "tests" / "test_flag.py").write_text(
        "import io\n\nimport calc\nfrom pathlib import Path\n\n\ndef test_flag():\n"
        f"    assert calc.BROKEN is False\n    assert {read}\n"
    )
    calc = project / "src" / "calc" / "__init__.py"
    config = project / "pyproject.toml"
    data = project / "tests" / "expected.txt"
    settings = project / ".vscode" / "settings.json"
    settings.parent.mkdir()
    settings.write_text("{}\n")
    data.write_text("ok\n")
    calc.write_text("def add(a, b):\n    return a + b\n\n\nBROKEN = False\n")
    edited = {"code": calc, "config": config, "data": data, "unread": settings}[kind]
    committed = {
        calc: "def add(a, b):\n    return a + b\n",
        config: '[tool.pytest.ini_options]\ntestpaths = ["tests"]\n',
        data: "stale\n",
        settings: "{}\n",
    }[edited]
    now = edited.read_text()
    edited.write_text(committed)
    commit_all(project, "the committed state")
    flagged = edited.relative_to(project).as_posix()
    git(project, "update-index", option, flagged)
    edited.write_text(now if kind != "unread" else '{"editor.fontSize": 15}\n')
    assert git(project, "status", "--porcelain") == ""  # git does not see the edit
    assert clean_clone_fails(project, tmp_path) is (kind != "unread")
    out, data_ = told_and_judged(genstamp, project)
    found = rules(data_)
    if kind == "unread":
        assert found == [], data_
        assert "will refuse" not in out, out
        return
    assert "hidden-change" in found, data_
    assert f"{flagged} ({option})" in message(data_, "hidden-change")
    assert f"will refuse: hidden-change: {flagged} ({option})" in out, out  # told at test time
    if kind == "data":
        assert found == ["hidden-change"], data_
    else:  # the module, or pytest's configuration file, counts as loaded
        assert found == ["loaded-not-tested", "hidden-change"], data_
        assert f"will refuse: loaded-not-tested: {flagged}" in out, out
    git(project, "update-index", f"--no-{option[2:]}", flagged)
    assert git(project, "status", "--porcelain") == f" M {flagged}"
    out, data_ = told_and_judged(genstamp, project)
    assert "will refuse" not in out, out
    assert rules(data_) == [], data_


@pytest.mark.parametrize("option", ["--skip-worktree", "--assume-unchanged"])
@pytest.mark.parametrize("kind", ["package-init", "fallback", "elsewhere", "top"])
def test_a_module_deleted_out_of_gits_sight_is_found_absent_by_the_import(
    project: Path, tmp_path: Path, genstamp: RunGenstamp, option: str, kind: str
) -> None:
    """A module flagged (`git update-index --skip-worktree`, or ``--assume-unchanged``) and
    deleted: git's status, and so the tree, does not see it, and no test loads it, yet the
    import found it absent: a package's ``__init__.py`` (the folder imported as a namespace
    package, its failing code never run) or a module a package falls back without. A clone has
    the committed files and fails: refused, naming the file and the option (accepted before:
    only the files the tests loaded or read were asked). A module deleted where no import
    looks (a folder of tools no test imports) is the user's own. Control: the flag lifted,
    the deletion is in the tree and accepted."""
    files = {
        "src/calc/broken/__init__.py": "raise RuntimeError('broken')\n",
        "src/calc/broken/core.py": "X = 1\n",
        "src/calc/__init__.py": "try:\n    from calc.fast import speed\nexcept ImportError:\n"
        "    def speed():\n        return 1\n\n\ndef add(a, b):\n    return a + b\n",
        "src/calc/fast.py": "def speed():\n    return 0\n",
        "tools/gen.py": "raise SystemExit('not a test')\n",
        "gen.py": "raise SystemExit('not a test')\n",
    }
    for rel, text in files.items():
        (project / rel).parent.mkdir(exist_ok=True)
        (project / rel).write_text(text)
    test = {  # what the committed code gives: the broken package raises, fast.speed is 0
        "package-init": "from calc.broken.core import X\n\n\ndef test_gone():\n    assert X\n",
        "fallback": "from calc import speed\n\n\ndef test_gone():\n    assert speed() == 1\n",
        "elsewhere": "from calc import speed\n\n\ndef test_gone():\n    assert speed() == 0\n",
        "top": "from calc import speed\n\n\ndef test_gone():\n    assert speed() == 0\n",
    }[kind]
    (project / "tests" / "test_gone.py").write_text(test)
    commit_all(project, "a package, a fallback, a tool")
    gone = {
        "package-init": "src/calc/broken/__init__.py",
        "fallback": "src/calc/fast.py",
        "elsewhere": "tools/gen.py",
        "top": "gen.py",  # (pytest's configuration is loaded from the top: no import)
    }[kind]
    git(project, "update-index", option, gone)
    (project / gone).unlink()
    assert git(project, "status", "--porcelain") == ""  # git does not see the deletion
    assert clean_clone_fails(project, tmp_path) is (kind not in ("elsewhere", "top"))
    out, data = told_and_judged(genstamp, project)
    if kind in ("elsewhere", "top"):
        assert rules(data) == [], data
        assert "will refuse" not in out, out
        return
    assert rules(data) == ["hidden-change"], data
    assert f"{gone} ({option})" in message(data, "hidden-change")
    assert f"will refuse: hidden-change: {gone} ({option})" in out, out  # told at test time
    git(project, "update-index", f"--no-{option[2:]}", gone)
    assert git(project, "status", "--porcelain") == f" D {gone}"
    out, data = told_and_judged(genstamp, project)
    assert "will refuse" not in out, out
    assert rules(data) == [], data


def test_the_hidden_change_remedy_followed_literally_lifts_the_flag(repo: Path) -> None:
    """The remedy named both options in one `git update-index`: git then lifts
    --assume-unchanged alone, the skip-worktree bit stays, and the same refusal came back.
    Its command, run as it is written, lifts the flag git sets."""
    import re

    from genstamp.rules import REMEDY

    command = re.findall(r"`(git update-index [^`]*)`", REMEDY["hidden-change"])[0]
    (repo / "f.txt").write_text("x\n")
    commit_all(repo, "a file")
    git(repo, "update-index", "--skip-worktree", "f.txt")
    assert git(repo, "ls-files", "-v", "f.txt") == "S f.txt"
    git(repo, *command.replace("PATH", "f.txt").split()[1:])
    assert git(repo, "ls-files", "-v", "f.txt") == "H f.txt"


BUNDLE_CONFTEST = """\
import os, sys

BUILT = os.path.join(os.path.dirname(__file__), "..", "dist", "{built}")
if os.path.exists(BUILT):  # smoke-test the deployable build when there is one
    sys.path.insert(0, os.path.abspath(BUILT))
"""


@pytest.mark.parametrize("built", ["app.zip", "lib", None])
def test_sourceless_bytecode_of_an_older_source_is_refused_naming_where_it_ran_from(
    repo: Path, genstamp: RunGenstamp, tmp_path: Path, built: str | None
) -> None:
    """The tests import the package from a git-ignored build of sourceless bytecode made before
    the source changed: a zip (zipimport) or a folder of legacy ``.pyc`` files with no source
    beside them, which the interpreter runs unchecked. The code objects name the tree's file,
    but what ran is the build's: refused, naming it; a clean clone (no build) fails. The
    control: no build made, the same tests are accepted."""
    write_calc(
        repo,
        tests="import calc\n\n\ndef test_add():\n    assert calc.add(2, 2) == 4\n",
        gitignore="__pycache__/\n*.py[co]\ndist/\n",
    )
    (repo / "tests" / "conftest.py").write_text(BUNDLE_CONFTEST.format(built=built or "-"))
    commit_all(repo, "calc")
    stamp(genstamp, repo)  # the build comes after: a scrub would remove a folder's bytecode
    if built is not None:
        import py_compile
        import zipfile

        pyc = tmp_path / "calc.pyc"
        py_compile.compile(str(repo / CALC), cfile=str(pyc), dfile=str(repo / CALC))
        (repo / "dist").mkdir()
        if built == "app.zip":
            with zipfile.ZipFile(repo / "dist" / built, "w") as bundle:
                bundle.write(pyc, "calc/__init__.pyc")
        else:
            (repo / "dist" / built / "calc").mkdir(parents=True)
            shutil.copy(pyc, repo / "dist" / built / "calc" / "__init__.pyc")
        (repo / CALC).write_text("def add(a, b):\n    return a - b\n")  # the tests now fail
        commit_all(repo, "subtract")
    assert run_tests(repo).returncode == 0
    data = verdict(genstamp, repo)[1]
    found = rules(data)
    if built is None:
        assert found == [], data
        return
    assert found == ["stale-bytecode"], data
    told = message(data, "stale-bytecode")
    assert f"dist/{built}/calc/__init__.pyc" in told, told
    assert ("archive dist/app.zip" in told) == (built == "app.zip"), told
    assert clean_clone_fails(repo, tmp_path)


VENDORED = {  # how the tests reach a vendored dependency kept in an archive in vendor/
    "wheel-relative": (
        "import sys\nsys.path.insert(0, 'vendor/dep-1.0-py3-none-any.whl')\n",
        "import dep\n\n\ndef test_dep():\n    assert dep.VALUE == 1\n",
    ),
    "zipapp-run-path": (
        "",
        "import runpy\n\n\ndef test_dep():\n"
        "    assert runpy.run_path('vendor/tool.pyz')['VALUE'] == 1\n",
    ),
    "bytecode-built-elsewhere": (
        "import os, sys\nsys.path.insert(0, os.path.abspath('vendor/dep.zip'))\n",
        "import dep\n\n\ndef test_dep():\n    assert dep.VALUE == 1\n",
    ),
}


@pytest.mark.parametrize("ignored", [True, False], ids=["ignored", "committed"])
@pytest.mark.parametrize("how", sorted(VENDORED))
def test_code_zipimported_from_an_archive_the_tree_does_not_hold_is_refused(
    repo: Path, genstamp: RunGenstamp, tmp_path: Path, how: str, ignored: bool
) -> None:
    """A vendored dependency in a git-ignored archive of the work tree, which a clean clone
    does not have: a wheel a relative entry of ``sys.path`` names (its code is named
    ``vendor/dep.whl/dep.py``, a path of no file), a zipapp run by ``runpy.run_path`` of a
    relative path, or an archive of bytecode alone compiled on another machine (its code names
    ``/build/dep.py``). Each ran, and is refused. The control: the archive committed (of
    source where the tree holds bytecode alone otherwise) is accepted."""
    import zipfile

    conftest, test = VENDORED[how]
    write_calc(
        repo, tests=test, gitignore="__pycache__/\n*.py[co]\n" + ("vendor/\n" if ignored else "")
    )
    (repo / "tests" / "conftest.py").write_text(conftest)
    (repo / "vendor").mkdir()
    source = "VALUE = 1\n"
    if how == "wheel-relative":
        with zipfile.ZipFile(repo / "vendor" / "dep-1.0-py3-none-any.whl", "w") as archive:
            archive.writestr("dep.py", source)
    elif how == "zipapp-run-path":
        with zipfile.ZipFile(repo / "vendor" / "tool.pyz", "w") as archive:
            archive.writestr("__main__.py", source)
    else:
        import importlib.util
        import marshal

        with zipfile.ZipFile(repo / "vendor" / "dep.zip", "w") as archive:
            if ignored:
                code = compile(source, "/build/dep.py", "exec")
                pyc = importlib.util.MAGIC_NUMBER + bytes(12) + marshal.dumps(code)
                archive.writestr("dep.pyc", pyc)
            else:
                archive.writestr("dep.py", source)
    commit_all(repo, "a vendored dependency")
    stamp(genstamp, repo)
    assert run_tests(repo).returncode == 0
    data = verdict(genstamp, repo)[1]
    if not ignored:
        assert rules(data) == [], data
        return
    rule = "stale-bytecode" if how == "bytecode-built-elsewhere" else "ignored-code"
    assert rules(data) == [rule], data
    assert "vendor/" in message(data, rule), data
    assert clean_clone_fails(repo, tmp_path)


ENGINE = """\
import pathlib

HERE = pathlib.Path(__file__).parent


def render(template, **context):
    \"\"\"A template engine as Jinja2 and Mako make one: the template is compiled into Python
    code, under a name that is not that code's file.\"\"\"
    path = HERE / "templates" / template
    text = path.read_text()
    code = "def render(**c):\\n    return " + repr(text) + ".format(**c)\\n"
    where = {"jinja2": str(path), "mako": template.replace(".", "_"), "python": __file__}[STYLE]
    namespace = {}
    exec(compile(code, where, "exec"), namespace)
    return namespace["render"](**context)
"""


@pytest.mark.parametrize("style", ["jinja2", "mako", "python"])
def test_code_a_template_engine_makes_of_a_template(
    repo: Path, genstamp: RunGenstamp, style: str
) -> None:
    """A template compiled into Python code under the template's own path (Jinja2) or under a
    name that is no file (Mako): what the tests used is the template, which the tree holds;
    accepted. The control: code compiled under the name of a Python source of the tree that
    does not hold it is refused, as a module that ran other bytes than its file's."""
    write_calc(
        repo,
        tests="from calc.engine import render\n\n\ndef test_render():\n"
        "    assert render('hello.txt', name='x') == 'Hello x!'\n",
    )
    (repo / "src" / "calc" / "engine.py").write_text(ENGINE.replace("STYLE", repr(style)))
    (repo / "src" / "calc" / "templates").mkdir()
    (repo / "src" / "calc" / "templates" / "hello.txt").write_text("Hello {name}!")
    commit_all(repo, "a template engine")
    found, data = judged(genstamp, repo)
    if style == "python":
        assert found == ["loaded-not-tested"], data
        assert "src/calc/engine.py" in message(data, "loaded-not-tested")
    else:
        assert found == [], data


MADE_BY_THE_TEST = """\
import os, pathlib, shutil, subprocess, sys, zipfile

ROOT = pathlib.Path(__file__).resolve().parent.parent
WHERE = pathlib.Path(os.environ["CALC_ELSEWHERE"])


def test_a_copy_of_calc(tmp_path):
    if HOW == "zipapp":  # the project packed as a zipapp and run, as a release check does
        target = tmp_path / "calc.pyz"
        with zipfile.ZipFile(target, "w") as z:
            z.write(ROOT / "src" / "calc" / "__init__.py", "calc/__init__.py")
            z.writestr("__main__.py", "import calc\\nprint(calc.add(2, 3))\\n")
        run = [sys.executable, str(target)]
    elif HOW == "fake":  # a stand-in package of the root's name, empty, as py.typed is
        (tmp_path / "calc").mkdir()
        (tmp_path / "calc" / "__init__.py").write_text("")
        target = tmp_path
        run = [sys.executable, "-c", "import calc; print(5)"]
    else:  # a copy in a folder: made now by the test, or made before the run ("earlier")
        target = WHERE if HOW == "earlier" else tmp_path
        if HOW.endswith("in build/"):  # the tree's ignored build/, the files' times kept
            target = ROOT / "build"
        if HOW.startswith("copy"):
            shutil.copytree(ROOT / "src" / "calc", target / "calc")
        elif HOW.startswith("stale"):  # unpacked now from an artifact built at an older commit
            shutil.copytree(ROOT / "dist" / "old" / "calc", target / "calc")
        elif HOW == "archived":  # an old release the tree keeps (a compatibility test's)
            zipfile.ZipFile(ROOT / "tests" / "data" / "old.zip").extractall(target)
        run = [sys.executable, "-c", "import calc; print(calc.add(2, 3))"]
    env = dict(os.environ, PYTHONPATH=str(target))
    out = subprocess.run(run, env=env, capture_output=True, text=True, check=True).stdout
    assert out == "5\\n"
"""


@pytest.mark.parametrize(
    "how",
    ["zipapp", "copy", "earlier", "stale", "archived", "fake", "copy in build/", "stale in build/"],
)
def test_the_checkouts_code_the_tests_copy_and_run_is_theirs(
    repo: Path, genstamp: RunGenstamp, tmp_path: Path, how: str
) -> None:
    """A test packs the project's code as a zipapp, or copies it into its temporary folder, and
    runs that in a child (a release smoke test): code the run made of the checkout's, which a
    clean clone's run makes too: accepted. The controls are foreign-origin: the same copy made
    before the run (left by an earlier one, another clone's), and a copy the test makes now of
    a stale artifact (a git-ignored build of an older commit: its bytes are a past version's).
    A stand-in package the test writes, whose bytes the history holds only at another path
    (an empty `__init__.py`, as `py.typed`), is no past version of the module: accepted; so is
    a past version unpacked from an archive the tree tracks (every clone unpacks the same).
    The same copies into the tree's ignored `build/`, their files' times kept (copytree, an
    archive unpacked): the stale one was accepted, its old times taken for an edit's."""
    write_calc(
        repo,
        tests=MADE_BY_THE_TEST.replace("HOW", repr(how)),
        gitignore="__pycache__/\n*.py[co]\ndist/\nbuild/\n",
    )
    (repo / "src" / "calc" / "py.typed").write_text("")  # the empty blob is in history
    commit_all(repo, "a test that runs a copy of calc")
    shutil.copytree(repo / "src" / "calc", repo / "dist" / "old" / "calc")
    (repo / "tests" / "data").mkdir()
    with zipfile.ZipFile(repo / "tests" / "data" / "old.zip", "w") as archive:
        archive.write(repo / CALC, "calc/__init__.py")
    (repo / CALC).write_text("def add(a, b):\n    return b + a\n")
    commit_all(repo, "calc, later; the old release kept in the tests' data")
    elsewhere = tmp_path / "earlier"
    shutil.copytree(repo / "src" / "calc", elsewhere / "calc")
    stamp(genstamp, repo)
    env = subprocess_env(CALC_ELSEWHERE=str(elsewhere))
    proc = run_tests(repo, env=env)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    found = rules(data := verdict(genstamp, repo)[1])
    assert found == (["foreign-origin"] if how.startswith(("earlier", "stale")) else []), data


COPIED_WITH_ITS_CACHE = """\
import pathlib, shutil, subprocess, sys

ROOT = pathlib.Path(__file__).resolve().parent.parent


def test_a_copy_of_calc(tmp_path):
    shutil.copytree(ROOT / "src" / "calc", tmp_path / "calc")  # times kept, __pycache__ too
    run = [sys.executable, "-c", "import calc; print(calc.add(2, 3))"]
    out = subprocess.run(run, cwd=tmp_path, capture_output=True, text=True, check=True).stdout
    assert out == "5\\n"
"""


@pytest.mark.parametrize("edit", ["size and mtime kept", "none"])
def test_a_stale_cache_the_tests_copy_along_with_the_package_is_stale(
    repo: Path, genstamp: RunGenstamp, edit: str
) -> None:
    """A test copies the package with `shutil.copytree` and runs the copy in a child. The copy
    takes the work tree's `__pycache__` along, times kept: after an edit that kept the source's
    size and mtime (a cache restore, `cp -p`), the copied header still vouches for the copied
    source, and the child runs the old code. The run is green; a clean clone (no cache) fails:
    stale-bytecode, though the copy is the run's own. Control: no edit, accepted."""
    write_calc(repo, tests=COPIED_WITH_ITS_CACHE)
    commit_all(repo, "a test that runs a copy of calc")
    stamp(genstamp, repo)
    calc = repo / CALC
    py_compile.compile(str(calc), doraise=True)  # the cache of the text that passes
    if edit != "none":
        kept = calc.stat()
        calc.write_text(calc.read_text().replace("a + b", "a - b"))
        os.utime(calc, ns=(kept.st_atime_ns, kept.st_mtime_ns))
        commit_all(repo, "add subtracts")
    proc = run_tests(repo)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    found = rules(data := verdict(genstamp, repo)[1])
    assert found == (["stale-bytecode"] if edit != "none" else []), data
    if edit != "none":
        assert "__pycache__" in message(data, "stale-bytecode")


PYXIMPORTED = """\
import os
import py_compile

import pyximport

pyximport.install(language_level=3, build_dir=os.environ.get("PYX_BUILD"))

from calc._fast import twice  # noqa: E402
"""


def pyximported(repo: Path, twice: str = "2 * x") -> None:
    write_calc(
        repo, tests="from calc import twice\n\n\ndef test_twice():\n    assert twice(2) == 4\n"
    )
    (repo / "src" / "calc" / "__init__.py").write_text(PYXIMPORTED)
    (repo / "src" / "calc" / "_fast.pyx").write_text(f"def twice(int x):\n    return {twice}\n")
    commit_all(repo, "a Cython module")


@pytest.mark.parametrize("build", [".pyxbld", ".cache/pyx"], ids=["default", "build-dir"])
def test_a_module_pyximport_builds_from_the_tree_is_the_checkouts(
    repo: Path, genstamp: RunGenstamp, tmp_path: Path, build: str
) -> None:
    """pyximport builds the tree's ``.pyx`` as the tests import it, into ``~/.pyxbld`` (or the
    ``build_dir`` it is given), outside the work tree, and the next run loads that build
    again: both runs are accepted (a clean clone builds the same; the build is judged by
    ``stale-extension`` against the tree's sources, as an install from the checkout is). The
    second run in a folder of another name was refused foreign-origin (h203)."""
    pyximported(repo)
    (tmp_path / "home").mkdir()
    folder = tmp_path / "home" / build
    env = subprocess_env(HOME=str(tmp_path / "home"), PYX_BUILD=str(folder))
    stamp(genstamp, repo)
    for _ in range(2):  # built, then the build reused
        proc = run_tests(repo, env=env)
        assert proc.returncode == 0, proc.stdout + proc.stderr
        data = verdict(genstamp, repo)[1]
        assert rules(data) == [], data
    assert list(folder.rglob("_fast*.so"))


@pytest.mark.parametrize("other", ["fixed", "same"])
def test_a_pyximport_build_another_clone_made_of_its_source_is_not_the_checkouts(
    repo: Path, genstamp: RunGenstamp, tmp_path: Path, other: str
) -> None:
    """pyximport keeps a build by the module's name alone, shared by every clone: a clone that
    fixed ``twice`` builds its own, and this checkout, whose source is older than that build,
    loads it without building: green, where a clean clone fails. Refused foreign-origin,
    naming the other clone's C file (h203). A clone of the same text builds the same code:
    accepted."""
    pyximported(repo, "x + x if x != 2 else 5")  # a bug the test finds
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", str(repo), str(clone)], check=True)
    (tmp_path / "home").mkdir()
    env = subprocess_env(HOME=str(tmp_path / "home"))
    stamp(genstamp, repo)
    assert run_tests(repo, env=env).returncode == 1  # this checkout's build, the bug
    if other == "fixed":
        (clone / "src" / "calc" / "_fast.pyx").write_text("def twice(int x):\n    return 2 * x\n")
        commit_all(clone, "fixed")
    else:
        (repo / "src" / "calc" / "_fast.pyx").write_text("def twice(int x):\n    return 2 * x\n")
        (clone / "src" / "calc" / "_fast.pyx").write_text("def twice(int x):\n    return 2 * x\n")
        commit_all(repo, "fixed here too")
        stamp(genstamp, repo)
        assert run_tests(repo, env=env).returncode == 0  # built here first
    proc = run_pytest(clone, "-p", "no:genstamp", env=env)  # the clone's build, of its source
    assert proc.returncode == 0, proc.stdout + proc.stderr
    proc = run_tests(repo, env=env)
    assert proc.returncode == 0, proc.stdout + proc.stderr  # the clone's build ran here
    data = verdict(genstamp, repo)[1]
    if other == "same":
        assert rules(data) == [], data
        return
    assert rules(data) == ["foreign-origin"], data
    assert "calc._fast from " in message(data, "foreign-origin")
    said = json.dumps(data)
    assert "built by pyximport from another checkout's" in said, said
    assert str(clone.resolve()) in said


@pytest.mark.parametrize("eol", ["\n", "\r\n"], ids=["lf", "crlf"])
def test_an_ignored_script_without_py_run_from_its_text_is_ignored_code(
    repo: Path, genstamp: RunGenstamp, eol: str
) -> None:
    """A git-ignored script with no ``.py`` suffix (``bin/tool``), run by a test from its text
    (``exec(compile(path.read_text(), path, "exec"))``): its code is the file's, whatever its
    line endings (text mode turns CRLF into LF): ignored-code. Not code made of a template."""
    write_calc(
        repo,
        tests="import pathlib\n\n\ndef test_tool():\n"
        "    path = pathlib.Path(__file__).resolve().parent.parent / 'bin' / 'tool'\n"
        "    space = {}\n"
        "    exec(compile(path.read_text(), str(path), 'exec'), space)\n"
        "    assert space['answer']() == 42\n",
        gitignore="__pycache__/\n*.py[co]\nbin/\n",
    )
    commit_all(repo, "a test that runs an ignored script")
    (repo / "bin").mkdir()
    (repo / "bin" / "tool").write_bytes(f"def answer():{eol}    return 42{eol}".encode())
    found, data = judged(genstamp, repo)
    assert found == ["ignored-code"], data
    assert "bin/tool" in message(data, "ignored-code")


TEXT_RUN_TEST = """\
import pathlib


def test_tool():
    path = pathlib.Path(__file__).resolve().parent.parent / "scripts" / {name!r}
    space = {{}}
    exec(compile({read}, str(path), "exec"), space)
    assert space["answer"]() == 42
"""


@pytest.mark.parametrize(
    ("data", "read", "rule"),
    [
        (b"def answer():\r\n    return 42\r\n", "path.read_text()", None),
        (b"def answer():\r\n    return 42\r\n", "path.read_text() ", None),  # (no .py)
        (b"\xef\xbb\xbfdef answer():\n    return 42\n", "path.read_text('utf-8-sig')", None),
        # text of its own compiled under the file's name: not the tree's code
        (
            b"def answer():\r\n    return 42\r\n",
            "path.read_text() + 'extra = 1\\n'",
            "loaded-not-tested",
        ),
    ],
    ids=["crlf-text-mode", "crlf-no-suffix", "bom-utf-8-sig", "other-text"],
)
def test_a_tracked_script_run_from_its_text_read_as_text_is_the_trees(
    repo: Path, genstamp: RunGenstamp, data: bytes, read: str, rule: str | None
) -> None:
    """A tracked script committed with CRLF line endings (or a byte-order mark) that a test
    runs as ``execfile`` did, ``exec(compile(path.read_text(), path, "exec"))``: the text
    compiled is the file's read in text mode (LF, no mark), which is the tree's code, as a
    clean clone runs it. It was refused as loaded-not-tested; other text under the file's
    name still is."""
    name = "tool" if read.endswith(" ") else "tool.py"  # a script without the suffix too
    write_calc(repo, tests=TEXT_RUN_TEST.format(read=read.strip(), name=name))
    (repo / "scripts").mkdir()
    (repo / "scripts" / name).write_bytes(data)
    commit_all(repo, "a script committed as it is")
    judged_as(genstamp, repo, rule, f"scripts/{name}")


RUNPY_TEST = """\
import pathlib, runpy

ROOT = pathlib.Path(__file__).resolve().parent.parent


def test_the_build():
    built = ROOT / "dist" / "calc.pyc"
    where = built if built.exists() else ROOT / "src" / "calc" / "__init__.py"
    assert runpy.run_path(str(where))["add"](2, 2) == 4
"""


@pytest.mark.parametrize("built", [True, False], ids=["build-pyc", "no-build"])
def test_a_builds_pyc_run_by_runpy_is_sourceless_bytecode(
    repo: Path, genstamp: RunGenstamp, tmp_path: Path, built: bool
) -> None:
    """``runpy.run_path`` of a git-ignored build's ``.pyc``, compiled before the source changed:
    named like bytecode of the tree's source but kept elsewhere than its cache, it was checked
    against nothing. Refused as stale-bytecode; the control (no build: the source itself run)
    is accepted."""
    write_calc(repo, tests=RUNPY_TEST, gitignore="__pycache__/\n*.py[co]\ndist/\n")
    commit_all(repo, "calc, and a test of its build")
    stamp(genstamp, repo)  # the build comes after: a scrub would remove it
    if built:
        import py_compile

        (repo / "dist").mkdir()
        py_compile.compile(str(repo / CALC), cfile=str(repo / "dist" / "calc.pyc"))
        (repo / CALC).write_text("def add(a, b):\n    return a - b\n")
        commit_all(repo, "subtract")
    assert run_tests(repo).returncode == 0
    data = verdict(genstamp, repo)[1]
    if not built:
        assert rules(data) == [], data
        return
    assert rules(data) == ["stale-bytecode"], data
    assert "dist/calc.pyc" in message(data, "stale-bytecode")
    assert clean_clone_fails(repo, tmp_path)


def unseen_project(repo: Path, tmp_path: Path, unseen: str, expected: str) -> Path:
    """A committed project whose test reads a file holding "1", and asserts it holds
    ``expected``: ``data.txt`` of the project (``unseen`` "hidden"), or ``val.txt`` of a
    submodule at ``sub`` ("submodule"). The file, to edit out of git's sight."""
    if unseen == "submodule":
        lib = init_repo(tmp_path / "libsrc")
        (lib / "val.txt").write_text("1\n")
        commit_all(lib, "lib")
        git(repo, "-c", "protocol.file.allow=always", "submodule", "add", "-q", str(lib), "sub")
        read = repo / "sub" / "val.txt"
    else:
        read = repo / "data.txt"
        read.write_text("1\n")
    write_calc(
        repo,
        tests="from pathlib import Path\n\n\ndef test_read():\n"
        f"    assert Path({str(read)!r}).read_text() == {expected + chr(10)!r}\n",
    )
    commit_all(repo, "a test that reads a file")
    return read


def hide(repo: Path, read: Path, text: str) -> None:
    """``read`` holding ``text``, out of git's sight: hidden by the index (``--skip-worktree``)
    or inside the submodule."""
    if read.parent.name != "sub":
        git(repo, "update-index", "--skip-worktree", read.name)
    read.write_text(text)
    assert git(repo, "status", "--porcelain", "--ignore-submodules=all") == ""


@pytest.mark.parametrize("unseen", ["hidden", "submodule"])
def test_a_change_git_does_not_see_is_judged_as_the_run_found_it(
    repo: Path, tmp_path: Path, genstamp: RunGenstamp, unseen: str
) -> None:
    """A change no tree holds (an edit the index hides, a change inside a submodule) is judged
    as the run found it, not as the work tree holds it when the gate runs. The tests ran
    green with it, then it was undone, no rerun: the commit is refused, judged as a commit
    (a push) or as the work tree (it was accepted: the work tree was clean by then). Control:
    a green run of the committed files, then such a change made: the commit the run tested is
    accepted (it was refused: no commit pushed holds the change), the work tree refused."""
    rule = {"hidden": "hidden-change", "submodule": "dirty-submodule"}[unseen]
    read = unseen_project(repo, tmp_path, unseen, expected="2")
    hide(repo, read, "2\n")
    stamp(genstamp, repo)
    assert "will refuse: " + rule in green(genstamp, repo)
    read.write_text("1\n")  # undone
    if unseen == "hidden":
        git(repo, "update-index", "--no-skip-worktree", read.name)
        assert clean_clone_fails(repo, tmp_path)
    for args in ((), ("--rev", "HEAD")):
        code, data = verdict(genstamp, repo, *args)
        assert (code, rules(data)) == (1, [rule]), data
        assert read.name in message(data, rule), data

    control = init_repo(tmp_path / "control")
    read = unseen_project(control, tmp_path / "c", unseen, expected="1")
    stamp(genstamp, control)
    assert "will refuse" not in green(genstamp, control)
    hide(control, read, "3\n")  # after the run
    code, data = verdict(genstamp, control, "--rev", "HEAD")
    assert (code, rules(data)) == (0, []), data
    code, data = verdict(genstamp, control)
    assert (code, rules(data)) == (1, [rule]), data


def clean_clone_fails(repo: Path, tmp_path: Path) -> bool:
    """The oracle: whether the tests fail in a fresh clone of ``repo`` (without genstamp)."""
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", str(repo), str(clone))
    return run_pytest(clone, "-p", "no:genstamp").returncode != 0


def told_and_judged(genstamp: RunGenstamp, repo: Path) -> tuple[str, dict[str, Any]]:
    """A full green run: what it told, then the gate's JSON verdict."""
    out = green(genstamp, repo)
    return out, verdict(genstamp, repo)[1]


# -- pytest's configuration ----------------------------------------------------------------------


@pytest.mark.parametrize("outside", [True, False], ids=["above-the-repository", "committed"])
def test_pytest_configuration_and_conftest_from_outside_the_work_tree(
    tmp_path: Path, genstamp: RunGenstamp, outside: bool
) -> None:
    """The repository holds no pytest configuration; a folder above it does, so pytest's
    rootdir is there and it loads that folder's conftest.py, which gives the tests a fixture.
    A clean clone has neither (the fixture is missing): refused, naming both. Control: the
    same configuration and conftest committed in the repository."""
    outer = tmp_path / "outer"
    repo = init_repo(outer / "repo")
    fixture = "import pytest\n\n\n@pytest.fixture\ndef offset():\n    return 0\n"
    write_calc(
        repo,
        tests="import calc\n\n\ndef test_add(offset):\n    assert calc.add(1, 2) + offset == 3\n",
    )
    if outside:
        (repo / "pyproject.toml").write_text('[project]\nname = "calc"\nversion = "0"\n')
        (outer / "pytest.ini").write_text("[pytest]\npythonpath = repo/src\n")
        (outer / "conftest.py").write_text(fixture)
    else:
        (repo / "tests" / "conftest.py").write_text(fixture)
    commit_all(repo, "calc")
    assert clean_clone_fails(repo, tmp_path) is outside
    out, data = told_and_judged(genstamp, repo)
    if outside:
        assert rules(data) == ["foreign-origin"], data
        said = message(data, "foreign-origin")
        assert f"pytest configuration from {(outer / 'pytest.ini').resolve()}" in said, said
        assert f"conftest from {(outer / 'conftest.py').resolve()}" in said, said
        # what to do, said where it happened: put the configuration in the repository
        assert "an empty pytest.ini at its top at least" in said, said
        assert "will refuse: foreign-origin: pytest configuration" in out, out
    else:
        assert rules(data) == [], data
        assert "will refuse" not in out, out


def test_pytest_settings_above_the_repository_as_dotted_keys(
    tmp_path: Path, genstamp: RunGenstamp
) -> None:
    """A pyproject.toml above the repository whose pytest settings are dotted keys (no
    ``[tool.pytest.ini_options]`` header) gives the tests their import path: refused, as a
    header would be. A clean clone fails."""
    outer = tmp_path / "outer"
    repo = init_repo(outer / "repo")
    write_calc(repo)
    (repo / "pyproject.toml").write_text('[project]\nname = "calc"\nversion = "0"\n')
    commit_all(repo, "calc, without pytest settings")
    (outer / "pyproject.toml").write_text('tool.pytest.ini_options.pythonpath = ["repo/src"]\n')
    assert clean_clone_fails(repo, tmp_path)
    out, data = told_and_judged(genstamp, repo)
    assert rules(data) == ["foreign-origin"], data
    assert "pytest configuration from" in message(data, "foreign-origin")
    assert "will refuse: foreign-origin: pytest configuration" in out, out


@pytest.mark.parametrize("ignored", [True, False], ids=["ignored", "committed"])
def test_a_pytest_ini_git_ignores_shapes_the_run(
    project: Path, tmp_path: Path, genstamp: RunGenstamp, ignored: bool
) -> None:
    """pytest prefers pytest.ini to pyproject.toml: a local, git-ignored one adds the import
    path the committed configuration lacks. A clean clone fails at import: refused as code
    loaded from an ignored file. Control: the same file committed."""
    (project / "pyproject.toml").write_text('[tool.pytest.ini_options]\ntestpaths = ["tests"]\n')
    commit_all(project, "the committed configuration cannot import calc")
    (project / "pytest.ini").write_text("[pytest]\ntestpaths = tests\npythonpath = src\n")
    if ignored:
        (project / ".git" / "info").mkdir(exist_ok=True)  # (an empty template dir)
        with (project / ".git" / "info" / "exclude").open("a") as fh:
            fh.write("pytest.ini\n")
    else:
        commit_all(project, "pytest.ini")
    assert clean_clone_fails(project, tmp_path) is ignored
    out, data = told_and_judged(genstamp, project)
    if ignored:
        assert rules(data) == ["ignored-code"], data
        assert "pytest.ini" in message(data, "ignored-code")
        assert "will refuse: ignored-code: pytest.ini" in out, out
    else:
        assert rules(data) == [], data


# -- the run's own report -------------------------------------------------------------------------


def test_a_junitxml_report_in_the_work_tree_is_output_not_tested(
    project: Path, genstamp: RunGenstamp
) -> None:
    out = green(genstamp, project, "--junitxml=report.xml")
    assert git(project, "status", "--porcelain") == "?? report.xml"  # not ignored
    assert "will refuse" not in out and "genstamp gate: bound to tree" in out  # as the gate
    code, data = verdict(genstamp, project)
    assert (code, rules(data)) == (0, []), data
    # a second run rewrites it while the tree is taken: still the run's output
    proc = run_tests(project, "--junitxml=report.xml")
    assert proc.returncode == 0
    assert verdict(genstamp, project)[0] == 0
    # a commit that adds exactly the report
    commit_all(project, "add the report")
    code, data = verdict(genstamp, project, "--rev", "HEAD")
    assert (code, rules(data)) == (0, []), data


@pytest.mark.parametrize("how", ["removed", "begun"])
def test_a_stamp_gone_or_begun_during_the_run_is_told(
    project: Path, genstamp: RunGenstamp, how: str
) -> None:
    """A test removes the git dir's genstamp folder (or begins a new generation): the forecast
    said the gate accepts, the gate refused. It now says what the gate says."""
    act = (
        "shutil.rmtree(Path(git_dir, 'genstamp'))"
        if how == "removed"
        else "subprocess.run([sys.executable, '-m', 'genstamp', 'stamp'], check=True)"
    )
    (project / "tests" / "test_stamp.py").write_text(
        "import shutil, subprocess, sys\nfrom pathlib import Path\n\n\ndef test_stamp():\n"
        "    git_dir = subprocess.check_output(['git', 'rev-parse', '--git-dir'], text=True)\n"
        f"    git_dir = git_dir.strip()\n    {act}\n"
    )
    commit_all(project, "a test that ends the generation")
    out = green(genstamp, project)
    rule = {"removed": "no-stamp", "begun": "stale-generation"}[how]
    assert f"will refuse: {rule}" in out, out
    code, data = verdict(genstamp, project)
    assert (code, rules(data)) == (1, [rule]), data


def test_a_run_that_writes_beside_its_report_moves_the_tree(
    project: Path, genstamp: RunGenstamp
) -> None:
    """The control of the report's case: another file the run writes into the work tree moves
    the tree, and the forecast says so as the gate does."""
    (project / "tests" / "test_writes.py").write_text(
        "from pathlib import Path\n\n\ndef test_writes():\n"
        "    Path(__file__).parent.parent.joinpath('made.txt').write_text('made')\n"
    )
    commit_all(project, "a test that writes into the work tree")
    out = green(genstamp, project, "--junitxml=report.xml")
    assert "will refuse: tree-moved" in out
    code, data = verdict(genstamp, project)
    assert (code, rules(data)) == (1, ["tree-moved"]), data
    assert "made.txt" in message(data, "tree-moved")
    assert "report.xml" not in message(data, "tree-moved")
    # the remedy names what such a file usually is, and where it belongs
    remedy = next(f["remedy"] for f in data["failures"] if f["rule"] == "tree-moved")
    assert ".gitignore" in remedy and ".coverage" in remedy
    assert "belongs in .gitignore" in out


def test_a_commit_adding_the_report_and_another_change_is_refused(
    project: Path, genstamp: RunGenstamp
) -> None:
    green(genstamp, project, "--junitxml=report.xml")
    (project / CALC).write_text("def add(a, b):\n    return a - b\n")
    commit_all(project, "the report and an untested edit")
    code, data = verdict(genstamp, project, "--rev", "HEAD")
    assert (code, rules(data)) == (1, ["tree-mismatch"])
    said = message(data, "tree-mismatch")
    assert CALC.as_posix() in said and "report.xml" not in said


def test_a_report_the_tests_load_as_code_is_not_left_out(
    project: Path, genstamp: RunGenstamp
) -> None:
    """--junitxml naming a module: the run overwrites code it loaded, which is not output."""
    extra = project / "src" / "calc" / "extra.py"
    extra.write_text("X = 1\n")
    (project / "tests" / "test_extra.py").write_text(
        "import calc.extra\n\n\ndef test_x():\n    assert calc.extra.X == 1\n"
    )
    commit_all(project, "extra")
    green(genstamp, project, "--junitxml=src/calc/extra.py")
    code, data = verdict(genstamp, project, "--rev", "HEAD")
    assert code == 1 and "tree-mismatch" in rules(data), data


@pytest.mark.parametrize("read", [True, False], ids=["read-by-the-tests", "not-read"])
def test_a_tracked_report_the_tests_read_is_not_left_out(
    project: Path, genstamp: RunGenstamp, read: bool
) -> None:
    """--junitxml naming a tracked data file the tests parse (a sample report): the tests read
    the committed bytes, pytest overwrites them at the end, and a commit of the overwritten
    file is not what was tested. A tracked report no test reads stays the run's output."""
    (project / "report.xml").write_text('<?xml version="1.0"?>\n<testsuites name="sample"/>\n')
    if read:
        (project / "tests" / "test_sample.py").write_text(
            "from pathlib import Path\n\n\ndef test_sample():\n"
            "    text = Path(__file__).parent.parent.joinpath('report.xml').read_text()\n"
            "    assert 'sample' in text\n"
        )
    commit_all(project, "a sample report")
    out = green(genstamp, project, "--junitxml=report.xml")
    commit_all(project, "git commit -a takes the overwritten report along")
    code, data = verdict(genstamp, project, "--rev", "HEAD")
    if not read:
        assert (code, rules(data)) == (0, []), data
        return
    assert code == 1 and "tree-moved" in rules(data), data
    said = message(data, "tree-moved")
    assert "report.xml is the run's own --junitxml, which the tests read" in said, said
    assert "will refuse: tree-moved" in out, out


# -- which checkout: moved, copied, linked ---------------------------------------------------------


def test_a_moved_checkout_keeps_its_evidence_and_a_copy_does_not(
    project: Path, genstamp: RunGenstamp, tmp_path: Path
) -> None:
    green(genstamp, project)
    assert verdict(genstamp, project)[0] == 0
    moved = tmp_path / "moved"
    os.rename(project, moved)  # mv repo repo2
    code, data = verdict(genstamp, moved)
    assert (code, rules(data)) == (0, []), data
    copy = tmp_path / "copy"
    subprocess.run(["cp", "-r", str(moved), str(copy)], check=True)
    code, data = verdict(genstamp, copy)
    assert (code, rules(data)) == (1, ["stale-generation"])
    # where the tests ran, and where the copy is
    said = message(data, "stale-generation")
    assert f"recorded in another checkout ({project / '.git'})" in said
    assert f"not {copy / '.git'}" in said
    # nor do the copy's pushes ride on the verdicts of the checkout it was copied from
    assert push(copy, "main", "release").returncode == 1
    assert push(moved, "main", "release").returncode == 0


def test_a_linked_worktree_is_accepted_and_moving_it_keeps_its_evidence(
    project: Path, genstamp: RunGenstamp, tmp_path: Path
) -> None:
    linked = tmp_path / "linked"
    git(project, "worktree", "add", "-q", str(linked), "-b", "side")
    stamp(genstamp, linked)
    assert run_pytest(linked).returncode == 0
    code, data = verdict(genstamp, linked)
    assert (code, rules(data)) == (0, []), data
    moved = tmp_path / "linked-moved"
    git(project, "worktree", "move", str(linked), str(moved))
    assert verdict(genstamp, moved)[0] == 0
    # its evidence, copied to the main worktree (same commit), does not vouch for that one:
    # the linked worktree's own run of the tree does, as it does for a push
    stamp(genstamp, project)
    state = Path(git(moved, "rev-parse", "--absolute-git-dir")) / "genstamp"
    shutil.copy(state / "evidence.xml", project / ".git" / "genstamp" / "evidence.xml")
    code, data = verdict(genstamp, project)
    assert (code, data["vouched"]) == (0, [data["targets"][0]["tree"]]), data
    git(project, "worktree", "remove", "--force", str(moved))  # the run gone, the copy stays
    code, data = verdict(genstamp, project)
    assert code == 1 and "stale-generation" in rules(data), data


# -- verdicts remembered per tree ------------------------------------------------------------------


def test_a_push_of_a_tree_verified_earlier_is_accepted_after_more_work(
    project: Path, genstamp: RunGenstamp
) -> None:
    green(genstamp, project)
    assert verdict(genstamp, project)[0] == 0  # main's tree, verified
    # more work: a new generation, an edit tested (but not yet committed)
    (project / "src" / "calc" / "more.py").write_text("MORE = 1\n")
    green(genstamp, project)
    proc = push(project, "main", "release")
    assert proc.returncode == 0, proc.stderr
    main_tree = git(project, "rev-parse", "main^{tree}")
    code, _, err = genstamp("-C", project, "verify", "--rev", "main")
    assert code == 0
    assert (
        f"accepted: tree {main_tree[:12]} was verified earlier in a worktree of this repository"
        in err
    )
    # control: a commit whose tree was never verified
    commit_all(project, "more")
    (project / CALC).write_text("def add(a, b):\n    return b + a\n")
    commit_all(project, "never tested")
    proc = push(project, "main", "release")
    assert proc.returncode == 1 and "tree-mismatch" in proc.stderr, proc.stderr


def branch_tested_in_a_worktree(
    project: Path, genstamp: RunGenstamp, where: Path, branch: str
) -> Path:
    """A linked worktree at ``where`` on a new ``branch`` that commits a change of its own, its
    suite run green in its own generation."""
    git(project, "worktree", "add", "-q", str(where), "-b", branch)
    (where / CALC).write_text("def add(a, b):\n    return b + a\n")
    commit_all(where, f"{branch}: its own change")
    stamp(genstamp, where)
    assert run_pytest(where).returncode == 0
    return where


def test_a_hotfix_verified_in_a_worktree_removed_since_is_pushed_from_the_main_one(
    project: Path, genstamp: RunGenstamp, tmp_path: Path
) -> None:
    """A hotfix worktree: tested, its push accepted there (its own verdict), then removed
    (`git worktree remove` deletes its store) and the hotfix merged fast-forward into main
    and pushed from the main worktree, which never judged it: the same tree was refused
    (tree-mismatch, commit then test). Its verdict is kept in the main worktree's store too.
    Control: a commit on it that no worktree tested is refused."""
    hotfix = branch_tested_in_a_worktree(project, genstamp, tmp_path / "hotfix", "hotfix")
    assert verdict(genstamp, hotfix, "--rev", "hotfix")[0] == 0  # its pre-push's verdict
    git(project, "worktree", "remove", "--force", str(hotfix))
    git(project, "merge", "-q", "--ff-only", "hotfix")
    code, data = verdict(genstamp, project, "--rev", "main")
    assert code == 0, data
    (project / "src" / "calc" / "more.py").write_text("MORE = 1\n")
    commit_all(project, "never tested")
    assert verdict(genstamp, project, "--rev", "main")[0] == 1


@pytest.mark.parametrize("verified", [True, False], ids=["verified", "pytest-alone"])
def test_a_branch_tested_in_a_linked_worktree_is_pushed_from_the_main_one(
    project: Path, genstamp: RunGenstamp, tmp_path: Path, verified: bool
) -> None:
    """The hooks are the repository's; so are the verdicts and the evidence: a branch tested
    in a linked worktree (and verified there, or not) is accepted when the main worktree
    pushes it, and a commit on it that no worktree tested is not."""
    linked = branch_tested_in_a_worktree(project, genstamp, tmp_path / "linked", "side")
    if verified:
        assert verdict(genstamp, linked, "--rev", "side")[0] == 0
    else:
        green(genstamp, project)  # the main worktree's own evidence tested another tree
    proc = push(project, "side", "side")
    assert proc.returncode == 0, proc.stderr
    (linked / "src" / "calc" / "more.py").write_text("MORE = 1\n")
    commit_all(linked, "side: never tested")
    proc = push(project, "side", "side")
    assert proc.returncode == 1 and "push refused" in proc.stderr, proc.stderr
    # the main worktree's verdict on the tested commit outlives the worktree that ran it
    git(project, "branch", "tested", "side~1")
    git(project, "worktree", "remove", "--force", str(linked))
    proc = push(project, "tested", "side")
    assert proc.returncode == 0, proc.stderr
    proc = push(project, "side", "side")
    assert proc.returncode == 1 and "push refused" in proc.stderr, proc.stderr


def test_a_push_of_two_refs_each_tested_in_this_generation_is_accepted(
    project: Path, genstamp: RunGenstamp
) -> None:
    """main tested, then `git switch -c feature` (no file changed: the generation goes on), a
    commit tested there: `git push origin main feature` judges each ref by its own tree's run
    of this generation, as a push of either alone does. A commit of the branch no run tested
    is refused, whatever ref comes with it."""
    green(genstamp, project)
    git(project, "switch", "-q", "-c", "feature")
    (project / "src" / "calc" / "more.py").write_text("MORE = 1\n")
    commit_all(project, "feature")
    assert run_pytest(project).returncode == 0

    def push_both() -> subprocess.CompletedProcess[str]:
        lines = "".join(
            f"refs/heads/{b} {git(project, 'rev-parse', b)} refs/heads/{b} {Z40}\n"
            for b in ("main", "feature")
        )
        return run_genstamp(project, "hook", "pre-push", "origin", "file:///nowhere", stdin=lines)

    proc = push_both()
    assert proc.returncode == 0, proc.stderr
    code, data = verdict(genstamp, project, "--rev", "main", "--rev", "feature")
    assert (code, rules(data)) == (0, []), data
    (project / "src" / "calc" / "more.py").write_text("MORE = 2\n")
    commit_all(project, "feature: never tested")
    proc = push_both()
    assert proc.returncode == 1 and "tree-mismatch" in proc.stderr, proc.stderr
    assert push(project, "main", "main").returncode == 0


@pytest.mark.parametrize("then", ["green-part", "failing-part", "no-whole-run"])
def test_a_newer_run_of_part_of_the_suite_gives_way_to_an_older_whole_one(
    project: Path, genstamp: RunGenstamp, then: str
) -> None:
    """feature tested whole, left for main, come back to, then one test file run again (green):
    the older whole run of that very tree stands, for `verify --rev`, a push and the work tree.
    A part that fails is the newer word on the tree; with no whole run before it, a part is
    a part."""
    (project / "tests" / "test_more.py").write_text("def test_more():\n    assert True\n")
    commit_all(project, "a second test file")
    feature_tested_then_left(project)
    if then == "no-whole-run":  # the branch's tree again, never tested whole
        git(project, "switch", "-q", "-c", "untested", "feature")
        (project / "src" / "calc" / "more.py").write_text("MORE = 2\n")
        commit_all(project, "untested")
        git(project, "switch", "-q", "feature")
        git(project, "switch", "-q", "untested")
    else:
        git(project, "switch", "-q", "feature")
    env = subprocess_env(BREAK_IT="1") if then == "failing-part" else None
    part = run_pytest(project, "tests/test_more.py", env=env)
    assert part.returncode == (1 if then == "failing-part" else 0), part.stdout
    for args in (("--rev", "HEAD"), ()):
        code, data = verdict(genstamp, project, *args)
        if then == "green-part":
            assert (code, rules(data)) == (0, []), data
        else:
            expected = "tests-failed" if then == "failing-part" else "partial-run"
            assert code == 1 and expected in rules(data), data
    proc = push(project, "untested" if then == "no-whole-run" else "feature", "feature")
    assert proc.returncode == (0 if then == "green-part" else 1), proc.stderr


def test_a_newer_failing_run_on_a_verified_tree_is_not_outvoted(
    project: Path, genstamp: RunGenstamp
) -> None:
    green(genstamp, project)
    assert verdict(genstamp, project, "--rev", "HEAD")[0] == 0
    can_fail(project)
    green(genstamp, project)
    assert verdict(genstamp, project, "--rev", "HEAD")[0] == 0
    proc = run_pytest(project, env=subprocess_env(BREAK_IT="1"))
    assert proc.returncode == 1
    code, data = verdict(genstamp, project, "--rev", "HEAD")
    assert (code, rules(data)) == (1, ["tests-failed"])


def test_a_branch_tested_then_left_is_pushed_from_main(
    project: Path, genstamp: RunGenstamp
) -> None:
    """Test a branch, switch back to main, push the branch: the checkout ended the generation
    the branch was tested in, and that generation's run stands for the branch's tree. Neither
    a commit no run tested, nor a run that failed, nor a run before `genstamp stamp` does."""
    assert run_genstamp(project, "install", "--plain").returncode == 0
    git(project, "switch", "-q", "-c", "feature")
    (project / "src" / "calc" / "more.py").write_text("MORE = 1\n")
    (project / "tests" / "test_more.py").write_text(
        "from calc.more import MORE\n\n\ndef test_more():\n    assert MORE == 1\n"
    )
    commit_all(project, "feature")
    # the branch's tree arrives by a checkout, in a generation of its own (made after
    # `switch -c`, which changed no file, the commit would be tested in main's generation)
    git(project, "switch", "-q", "main")
    git(project, "switch", "-q", "feature")
    assert run_pytest(project).returncode == 0
    git(project, "switch", "-q", "main")  # the post-checkout hook: a new generation
    code, _, err = genstamp("-C", project, "verify", "--rev", "feature")
    assert code == 0 and "tested in a generation since ended" in err, err
    proc = push(project, "feature", "feature")
    assert proc.returncode == 0, proc.stderr
    # a run on main since (its first part prunes the folders of other generations) changes
    # nothing; the verdict was remembered anyway: forgotten, the kept part still stands
    assert run_pytest(project).returncode == 0
    (project / ".git" / "genstamp" / "verified.json").unlink()
    proc = push(project, "feature", "feature")
    assert proc.returncode == 0, proc.stderr
    # control: a commit on the branch that no run tested
    git(project, "branch", "untested", "feature")
    git(project, "switch", "-q", "untested")
    (project / "src" / "calc" / "more.py").write_text("MORE = 2\n")
    commit_all(project, "untested")
    git(project, "switch", "-q", "main")
    proc = push(project, "untested", "untested")
    assert proc.returncode == 1 and "push refused" in proc.stderr, proc.stderr
    # control: tested, but failing (and the refusal says so, not that the evidence is stale)
    git(project, "switch", "-q", "untested")
    assert run_pytest(project).returncode == 1
    git(project, "switch", "-q", "main")
    proc = push(project, "untested", "untested")
    assert proc.returncode == 1 and "tests-failed" in proc.stderr, proc.stderr
    assert "stale-generation" not in proc.stderr, proc.stderr
    # control: `genstamp stamp` vouches for nothing before it
    git(project, "switch", "-q", "-c", "stamped", "feature")
    (project / "src" / "calc" / "more.py").write_text("MORE = 1  # stamped\n")
    commit_all(project, "stamped")
    assert run_pytest(project).returncode == 0
    git(project, "switch", "-q", "main")
    stamp(genstamp, project)
    proc = push(project, "stamped", "stamped")
    assert proc.returncode == 1 and "stale-generation" in proc.stderr, proc.stderr


def hooks_and_another_branch(project: Path) -> None:
    """The plain hooks installed, and a branch ``other`` one commit past main (main checked out)."""
    assert run_genstamp(project, "install", "--plain").returncode == 0
    git(project, "switch", "-q", "-c", "other")
    (project / "src" / "calc" / "other.py").write_text("OTHER = 1\n")
    commit_all(project, "other")
    git(project, "switch", "-q", "main")


def test_the_work_tree_come_back_to_is_judged_on_the_run_that_tested_it(
    project: Path, genstamp: RunGenstamp
) -> None:
    """Tested, then another branch looked at and left (`git switch other; git switch main`), or
    a tested branch merged fast-forward into main: the work tree holds a tested tree again, and
    the run of the generation the checkouts ended speaks for it, as it does for a push. Not
    for a tree no run tested, nor when that run failed, nor with bytecode older than the
    current generation in the work tree, nor once `genstamp stamp` began one."""
    can_fail(project)
    hooks_and_another_branch(project)
    assert run_pytest(project).returncode == 0
    git(project, "switch", "-q", "other")
    git(project, "switch", "-q", "main")
    code, data = verdict(genstamp, project)
    assert (code, data["vouched"]) == (0, [data["targets"][0]["tree"]]), data
    # a branch tested, then merged fast-forward into main
    git(project, "switch", "-q", "-c", "feature")
    (project / "src" / "calc" / "more.py").write_text("MORE = 1\n")
    commit_all(project, "feature")
    assert run_pytest(project).returncode == 0
    git(project, "switch", "-q", "main")
    git(project, "merge", "-q", "--ff-only", "feature")
    code, data = verdict(genstamp, project)
    assert (code, rules(data)) == (0, []), data
    # control: bytecode older than the current generation in the work tree
    cache = project / "src" / "calc" / "__pycache__"
    cache.mkdir(exist_ok=True)
    old = cache / f"old.{sys.implementation.cache_tag}.pyc"
    old.write_bytes(b"")
    (project / "src" / "calc" / "old.py").write_text("")
    os.utime(old, (1_000_000_000, 1_000_000_000))
    code, data = verdict(genstamp, project)
    assert code == 1 and "stale-bytecode" in rules(data), data
    old.unlink()
    (project / "src" / "calc" / "old.py").unlink()
    assert verdict(genstamp, project)[0] == 0
    # control: a tree no run tested
    git(project, "switch", "-q", "other")
    code, data = verdict(genstamp, project)
    assert code == 1 and "stale-generation" in rules(data), data
    # control: the run that tested the tree failed (its own reason is told)
    git(project, "switch", "-q", "main")
    assert run_pytest(project, env=subprocess_env(BREAK_IT="1")).returncode == 1
    git(project, "switch", "-q", "other")
    git(project, "switch", "-q", "main")
    code, data = verdict(genstamp, project)
    assert (code, rules(data)) == (1, ["tests-failed"]), data
    # control: `genstamp stamp` vouches for nothing before it
    assert run_pytest(project).returncode == 0
    assert verdict(genstamp, project)[0] == 0
    stamp(genstamp, project)
    code, data = verdict(genstamp, project)
    assert code == 1 and "stale-generation" in rules(data), data


def test_a_later_failing_run_in_another_worktree_refutes_the_work_tree_too(
    project: Path, genstamp: RunGenstamp, tmp_path: Path
) -> None:
    """The work tree tested green in its current generation, then the same tree fails in a
    linked worktree: the work tree is refused as its commit is, until it passes again."""
    can_fail(project)
    stamp(genstamp, project)
    assert run_pytest(project).returncode == 0
    assert verdict(genstamp, project)[0] == 0
    linked = tmp_path / "linked"
    git(project, "worktree", "add", "-q", "--detach", str(linked), "main")
    stamp(genstamp, linked)
    assert run_pytest(linked, env=subprocess_env(BREAK_IT="1")).returncode == 1
    for args in ((), ("--rev", "HEAD")):
        code, data = verdict(genstamp, project, *args)
        assert (code, rules(data)) == (1, ["tests-failed"]), data
    assert run_pytest(project).returncode == 0
    assert verdict(genstamp, project)[0] == 0


def test_a_failure_between_the_parts_of_an_ended_generations_run_refutes_it(
    project: Path, genstamp: RunGenstamp, tmp_path: Path
) -> None:
    """feature's suite run in two parts (test_calc.py, then test_more.py), and between them
    the same tree failing in a linked worktree: test_calc.py has not passed since it failed.
    Refused in the run's generation, and once a checkout ended it too (the run dated by its
    newest part, the older part escaped the failure)."""
    (project / "tests" / "test_more.py").write_text("def test_more():\n    assert True\n")
    commit_all(project, "a second test file")
    can_fail(project)
    assert run_genstamp(project, "install", "--plain").returncode == 0
    git(project, "switch", "-q", "-c", "feature")
    (project / "src" / "calc" / "more.py").write_text("MORE = 1\n")
    commit_all(project, "feature")
    git(project, "switch", "-q", "main")  # feature's tree arrives by a checkout: its own
    git(project, "switch", "-q", "feature")  # generation, which the switch to main ends
    assert run_pytest(project, "tests/test_calc.py").returncode == 0
    linked = tmp_path / "linked"
    git(project, "worktree", "add", "-q", "--detach", str(linked), "feature")
    assert run_pytest(linked, env=subprocess_env(BREAK_IT="1")).returncode == 1
    assert run_pytest(project, "tests/test_more.py").returncode == 0
    code, data = verdict(genstamp, project)
    assert (code, rules(data)) == (1, ["tests-failed"]), data
    assert "the parts run before it count for nothing" in message(data, "tests-failed"), data
    git(project, "switch", "-q", "main")
    proc = push(project, "feature", "feature")
    assert proc.returncode == 1 and "a later run of tree" in proc.stderr, proc.stderr


def test_each_file_run_again_after_a_failure_answers_it(
    project: Path, genstamp: RunGenstamp
) -> None:
    """The whole suite green, then one file failing (a flaky test), then each file of the
    suite run again green, one at a time, as the refusal asks: every test has passed since
    the failure. The whole run before it adds nothing the newer parts do not (they ran each
    of its tests again), and no longer dates the merge before the failure. Control: with one
    file run again alone, the other's pass is older than the failure: refused."""
    (project / "tests" / "test_more.py").write_text("def test_more():\n    assert True\n")
    commit_all(project, "a second test file")
    can_fail(project)
    stamp(genstamp, project)
    assert run_pytest(project).returncode == 0
    broken = subprocess_env(BREAK_IT="1")
    assert run_pytest(project, "tests/test_more.py", env=broken).returncode == 1
    assert run_pytest(project, "tests/test_more.py").returncode == 0
    code, data = verdict(genstamp, project)
    assert (code, rules(data)) == (1, ["tests-failed"]), data
    assert run_pytest(project, "tests/test_calc.py").returncode == 0
    code, data = verdict(genstamp, project)
    assert code == 0, data
    assert verdict(genstamp, project, "--rev", "HEAD")[0] == 0


def test_a_failing_runs_own_report_file_does_not_file_its_failure_under_another_tree(
    project: Path, genstamp: RunGenstamp, tmp_path: Path
) -> None:
    """A run that fails writing `--junitxml=report.xml` into the work tree (not ignored): the
    gate compares trees without a run's own report, and so is the failure recorded: it refutes
    main's earlier green run, in this worktree (`verify --junit` of it too) and for a push."""
    can_fail(project)
    stamp(genstamp, project)
    assert run_pytest(project, "--junitxml=green.xml").returncode == 0
    (project / "green.xml").rename(tmp_path / "green.xml")
    assert verdict(genstamp, project)[0] == 0
    linked = tmp_path / "linked"
    git(project, "worktree", "add", "-q", "--detach", str(linked), "main")
    stamp(genstamp, linked)
    failing = run_pytest(linked, "--junitxml=report.xml", env=subprocess_env(BREAK_IT="1"))
    assert failing.returncode == 1 and (linked / "report.xml").is_file()
    for args in ((), ("--rev", "HEAD"), ("--junit", str(tmp_path / "green.xml"))):
        code, data = verdict(genstamp, project, *args)
        assert (code, rules(data)) == (1, ["tests-failed"]), (args, data)
        assert "a later run of tree" in message(data, "tests-failed"), data
    proc = push(project, "main", "main")
    assert proc.returncode == 1 and "a later run of tree" in proc.stderr, proc.stderr


KILL_THE_COPROCESS = """\
import os, signal


def test_zz_fails_and_kills_genstamps_coprocess():
    if not os.environ.get("BREAK_IT"):
        return
    for pid in os.listdir("/proc"):
        try:
            with open(f"/proc/{pid}/stat") as fh:
                parent = int(fh.read().rsplit(")", 1)[1].split()[1])
            with open(f"/proc/{pid}/cmdline", "rb") as fh:
                command = fh.read()
        except (OSError, ValueError, IndexError):
            continue
        if parent == os.getpid() and b"genstamp.coprocess" in command:
            os.kill(int(pid), signal.SIGKILL)
    assert False, "fails where a clean clone runs it"
"""

DUMP_ON_FAILURE = """\
import os
import py_compile
import pathlib


def test_zz_fails_writing_a_dump():
    if os.environ.get("BREAK_IT"):
        pathlib.Path("failure-dump.txt").write_text("what failed\\n")
        assert False, "fails where a clean clone runs it"
"""


@pytest.mark.parametrize("how", ["writes-an-untracked-file", "evidence-not-written"])
def test_a_failing_run_refutes_the_tree_it_ran_whatever_it_leaves(
    project: Path, genstamp: RunGenstamp, how: str
) -> None:
    """A green run, verified (remembered); then the same commit fails, and either its failing
    test writes a file git does not ignore (the tree at the end is another), or its evidence
    cannot be written (genstamp's co-process dies). Either way the tree whose code ran failed
    last: the push is refused. Both left the remembered pass standing."""
    text = DUMP_ON_FAILURE if how == "writes-an-untracked-file" else KILL_THE_COPROCESS
    (project / "tests" / "test_zz.py").write_text(text)
    commit_all(project, "a test that fails where BREAK_IT is set")
    stamp(genstamp, project)
    assert run_pytest(project).returncode == 0
    assert verdict(genstamp, project, "--rev", "HEAD")[0] == 0  # remembered
    failing = run_pytest(project, env=subprocess_env(BREAK_IT="1"))
    assert failing.returncode == 1, failing.stdout
    if how == "evidence-not-written":
        assert "evidence not written" in failing.stdout + failing.stderr, failing.stdout
    proc = push(project, "main", "main")
    assert proc.returncode == 1 and "push refused" in proc.stderr, proc.stderr
    assert "a later run of tree" in proc.stderr, proc.stderr  # what refuses it, said


# a test that fails where BREAK_IT is set, and one after it that ends the process before the
# session does (a crash, a kill by the CI's timeout, pytest-timeout's os._exit)
FAILS_THEN_DIES = """\
import os
import py_compile
import signal


def test_a_fails():
    assert not os.environ.get("BREAK_IT")


def test_b_dies():
    how = os.environ.get("DIE")
    if how == "fork-exit":  # a child a test forks ends as Python ends, its exit handlers run
        child = os.fork()
        if child == 0:  # (as multiprocessing's child or a daemon's ends: no test of its own)
            import atexit

            atexit._run_exitfuncs()
            os._exit(0)
        os.waitpid(child, 0)
        how = "kill"
    if how == "fork":  # a server a test forks outlives it (it holds what pytest held)
        child = os.fork()
        if child == 0:  # (it lets go of the pipes the run's output goes to, as a daemon does)
            import time

            for fd in os.listdir("/proc/self/fd"):
                if os.readlink(f"/proc/self/fd/{fd}").startswith("pipe:"):
                    os.close(int(fd))
            time.sleep(120)
            os._exit(0)
        with open(os.environ["CHILD_PID"], "w") as fh:
            fh.write(str(child))
        how = "kill"
    if how == "kill":
        os.kill(os.getpid(), signal.SIGKILL)
    elif how == "exit":
        os._exit(1)
"""


@pytest.mark.parametrize("die", ["kill", "exit", "unreaped", "fork", "fork-exit", "none"])
@pytest.mark.parametrize("fails", [True, False])
def test_a_run_that_fails_a_test_and_dies_before_its_session_ends_refutes_its_tree(
    project: Path, genstamp: RunGenstamp, die: str, fails: bool
) -> None:
    """A green run of the tree, verified; then a run of the same tree fails a test and dies
    before pytest's session ends (SIGKILL, ``os._exit``): no session bound or recorded
    anything, and the earlier pass was accepted, a push too. The failure is recorded as it
    is seen; a run that dies with no test failed (a hang killed by a CI's timeout,
    pytest-timeout's thread method, a crash: h194) did not finish, and says so. Control: a
    run that ends as pytest ends, the same file alone, green, says nothing against it. A
    process killed and not yet reaped (a zombie: a CI driver that judges before it waits, a
    container whose first process reaps nothing) ended all the same (h196), and so did one
    whose forked child lives on (h197), or whose forked child ended first, running the exit
    handlers it inherited."""
    (project / "tests" / "test_zz.py").write_text(FAILS_THEN_DIES)
    commit_all(project, "a test that fails where BREAK_IT is set")
    stamp(genstamp, project)
    assert run_pytest(project).returncode == 0
    assert verdict(genstamp, project, "--rev", "HEAD")[0] == 0  # remembered
    env = subprocess_env(DIE=die, **({"BREAK_IT": "1"} if fails else {}))
    env["CHILD_PID"] = str(project.parent / "child.pid")
    args = ("tests/test_zz.py",) if die == "none" else ()
    if die == "unreaped":  # killed, and its status not collected while the gate judges
        env["DIE"] = "kill"
        argv = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"]
        zombie = subprocess.Popen(argv, cwd=project, env=env, stdout=subprocess.DEVNULL)
        os.waitid(os.P_PID, zombie.pid, os.WEXITED | os.WNOWAIT)  # dead, not reaped
        code, data = verdict(genstamp, project, "--rev", "HEAD")
        assert zombie.wait() == -9
        assert code == 1 and rules(data) == ["tests-failed"], data
        assert ("did not finish" in data["failures"][0]["message"]) == (not fails), data
        return
    try:
        dying = run_pytest(project, *args, env=env)
        code, data = verdict(genstamp, project, "--rev", "HEAD")
    finally:
        if die == "fork":
            os.kill(int((project.parent / "child.pid").read_text()), signal.SIGKILL)
    if die == "none":
        assert dying.returncode == (1 if fails else 0), dying.stdout + dying.stderr
    else:
        assert dying.returncode in (1, -9), dying.stdout + dying.stderr
        assert "passed" not in dying.stdout.splitlines()[-1:], dying.stdout  # no session end
    proc = push(project, "main", "main")
    if die == "none" and not fails:
        assert code == 0, data
        assert proc.returncode == 0, proc.stderr
        return
    if die == "none":  # (failed, then ended: the run itself is the newest evidence)
        assert code == 1 and "tests-failed" in rules(data), data
        assert proc.returncode == 1 and "tests-failed" in proc.stderr, proc.stderr
        return
    assert (code, rules(data)) == (1, ["tests-failed"]), data
    said = data["failures"][0]["message"]
    assert "a later run of tree" in said, data
    assert ("did not finish" in said) == (not fails), said
    assert proc.returncode == 1 and "a later run of tree" in proc.stderr, proc.stderr


def test_a_run_a_conftest_ends_in_its_unconfigure_has_finished(
    project: Path, genstamp: RunGenstamp
) -> None:
    """A conftest's ``pytest_unconfigure`` that ends the process (``os._exit``, against
    threads that would hang its exit) ran before genstamp's: each green part left its record
    of a run going on, unheld, and the next part refuted the one before (h197). A session
    that ended, its evidence bound, has finished."""
    (project / "conftest.py").write_text(
        "import os\n\n\ndef pytest_unconfigure(config):\n    os._exit(0)\n"
    )
    (project / "tests" / "test_more.py").write_text("def test_more():\n    pass\n")
    commit_all(project, "a conftest that ends the process as pytest unconfigures")
    stamp(genstamp, project)
    files = sorted(p.relative_to(project).as_posix() for p in project.glob("tests/test_*.py"))
    assert len(files) > 1
    for part in (files[:1], files[1:]):
        assert run_pytest(project, *part).returncode == 0
    assert not list((project / ".git" / "genstamp").glob("running/*"))
    code, data = verdict(genstamp, project, "--rev", "HEAD")
    assert code == 0, data


def test_a_run_that_dies_importing_a_conftest_is_the_newest_word_on_its_tree(
    project: Path, genstamp: RunGenstamp
) -> None:
    """A conftest of the tree that fails to import ends pytest (exit 4) before any test and
    before any session binds evidence: that run failed, and neither the run of the generation
    a checkout ended nor the verdict remembered from it answers for the tree any more. A usage
    error (an option pytest does not know) says nothing of the tree."""
    (project / "tests" / "conftest.py").write_text(
        "import os\n\nif os.environ.get('BREAK_IT'):\n    raise ImportError('broken here')\n"
    )
    commit_all(project, "a conftest that can fail to import")
    hooks_and_another_branch(project)
    assert run_pytest(project).returncode == 0
    assert verdict(genstamp, project, "--rev", "HEAD")[0] == 0  # remembered
    git(project, "switch", "-q", "other")
    git(project, "switch", "-q", "main")
    assert run_pytest(project, "--no-such-option").returncode == 4  # a usage error
    assert verdict(genstamp, project)[0] == 0
    proc = run_pytest(project, env=subprocess_env(BREAK_IT="1"))
    assert proc.returncode == 4 and "broken here" in proc.stdout + proc.stderr, proc.stderr
    for args in ((), ("--rev", "HEAD")):
        code, data = verdict(genstamp, project, *args)
        assert (code, rules(data)) == (1, ["tests-failed"]), data
        assert "a later run of tree" in data["failures"][0]["message"], data
    proc = push(project, "main", "main")
    assert proc.returncode == 1 and "tests-failed" in proc.stderr, proc.stderr
    assert run_pytest(project).returncode == 0  # green again: the newest word
    assert verdict(genstamp, project)[0] == 0


def test_a_newer_failing_run_of_a_tree_leaves_no_older_pass_to_answer_for_it(
    project: Path, genstamp: RunGenstamp
) -> None:
    """The branch passed in one generation, was accepted, then failed in a later one: that
    failing run is the newest word on its tree (``genstamp.refuted``), so once its own part is
    pruned (16 newer trees tested) neither the older pass nor the verdict remembered from it
    answers for the tree."""
    feature_tested_then_left(project)
    assert push(project, "feature", "feature").returncode == 0  # remembered
    git(project, "switch", "-q", "feature")
    assert run_pytest(project, env=subprocess_env(BREAK_IT="1")).returncode == 1
    gen = json.loads((project / ".git" / "genstamp" / "generation.json").read_text())["id"]
    shutil.rmtree(project / ".git" / "genstamp" / "parts" / gen)  # as 16 newer trees prune it
    git(project, "switch", "-q", "main")
    proc = push(project, "feature", "feature")
    assert proc.returncode == 1 and "push refused" in proc.stderr, proc.stderr


def test_a_failing_run_that_cannot_be_recorded_leaves_no_older_verdict_to_answer(
    project: Path, genstamp: RunGenstamp
) -> None:
    """A tree passed and was accepted (the verdict remembered), then failed in the same
    generation, and the record of failed trees cannot be written (a full disk, a file made
    immutable; here its lock is a folder). The run says so, and the remembered verdict is
    forgotten: after `genstamp stamp` the push is refused, not accepted on the older pass."""
    can_fail(project)
    assert run_genstamp(project, "install", "--plain").returncode == 0
    assert run_pytest(project).returncode == 0
    assert verdict(genstamp, project)[0] == 0  # remembered
    (project / ".git" / "genstamp" / "refuted.json.lock").mkdir(parents=True)
    proc = run_pytest(project, env=subprocess_env(BREAK_IT="1"))
    assert proc.returncode == 1
    assert "and the failure could not be recorded" in proc.stdout, proc.stdout
    stamp(genstamp, project)
    proc = push(project, "main", "main")
    assert proc.returncode == 1 and "push refused" in proc.stderr, proc.stderr


def test_the_newest_run_of_a_tree_anywhere_speaks_for_it(
    project: Path, genstamp: RunGenstamp, tmp_path: Path
) -> None:
    """A branch passes in the main worktree, in a generation a checkout then ends. A run of
    part of its suite that passes says nothing against that whole run: the push is accepted.
    Then the same tree fails in a linked worktree, which is removed: the failure still refutes
    the older pass (and the verdict remembered from it), and the push is refused."""
    feature_tested_then_left(project)
    git(project, "switch", "-q", "feature")  # a new generation, the same tree
    assert run_pytest(project, "-k", "test_other").returncode == 0  # part of the suite
    git(project, "switch", "-q", "main")
    proc = push(project, "feature", "feature")
    assert proc.returncode == 0, proc.stderr
    linked = tmp_path / "linked"
    git(project, "worktree", "add", "-q", "--detach", str(linked), "feature")
    stamp(genstamp, linked)
    assert run_pytest(linked, env=subprocess_env(BREAK_IT="1")).returncode == 1
    git(project, "worktree", "remove", "--force", str(linked))
    proc = push(project, "feature", "release")
    assert proc.returncode == 1 and "a later run of tree" in proc.stderr, proc.stderr


def test_a_newer_passing_run_in_another_worktree_answers_an_older_failure(
    project: Path, genstamp: RunGenstamp, tmp_path: Path
) -> None:
    """The main worktree's run of a commit fails (a flaky test), then a linked worktree of
    the same commit runs the suite green: the newest run of the tree speaks for it, here too
    (the main worktree's own failing evidence refused it). A failure after that green run is
    the newer word again."""
    can_fail(project)
    stamp(genstamp, project)
    assert run_pytest(project, env=subprocess_env(BREAK_IT="1")).returncode == 1
    linked = tmp_path / "linked"
    git(project, "worktree", "add", "-q", "--detach", str(linked), "main")
    stamp(genstamp, linked)
    assert run_pytest(linked).returncode == 0
    for args in (("--rev", "HEAD"), ()):
        code, data = verdict(genstamp, project, *args)
        assert (code, rules(data)) == (0, []), (args, data)
    assert push(project, "main", "main").returncode == 0
    assert run_pytest(project, env=subprocess_env(BREAK_IT="1")).returncode == 1
    code, data = verdict(genstamp, project, "--rev", "HEAD")
    assert code == 1 and "tests-failed" in rules(data), data


def test_an_older_pass_is_not_made_newer_by_the_time_of_its_files(
    project: Path, genstamp: RunGenstamp, tmp_path: Path
) -> None:
    """A linked worktree's green run, then this worktree's failing run of the same tree;
    then the green run's files are touched (a copy, a backup restored, a clock step): the run
    is as old as it says it bound (its sealed `genstamp.created`), and the failure stands."""
    import time

    can_fail(project)
    linked = tmp_path / "linked"
    git(project, "worktree", "add", "-q", "--detach", str(linked), "main")
    stamp(genstamp, linked)
    assert run_pytest(linked).returncode == 0
    time.sleep(1.1)  # the green run bound a second before (its time is kept to the second)
    stamp(genstamp, project)
    assert run_pytest(project, env=subprocess_env(BREAK_IT="1")).returncode == 1
    state = Path(git(linked, "rev-parse", "--absolute-git-dir")) / "genstamp"
    later = time.time() + 60
    for file in [state / "evidence.xml", *state.glob("parts/*/*.xml")]:
        os.utime(file, (later, later))
    code, data = verdict(genstamp, project, "--rev", "HEAD")
    assert code == 1 and "tests-failed" in rules(data), data


def test_a_failing_run_of_a_tree_is_not_outvoted_by_another_worktrees_passing_one(
    project: Path, genstamp: RunGenstamp, tmp_path: Path
) -> None:
    """The branch's tree failed in the main worktree (then left by a checkout) and passed in a
    linked one: a push of it is refused. Without the failing run it is accepted."""
    can_fail(project)
    assert run_genstamp(project, "install", "--plain").returncode == 0
    git(project, "branch", "side")
    linked = tmp_path / "linked"
    git(project, "worktree", "add", "-q", "--detach", str(linked), "side")
    stamp(genstamp, linked)
    assert run_pytest(linked).returncode == 0
    git(project, "switch", "-q", "-c", "other")
    (project / "src" / "calc" / "more.py").write_text("MORE = 1\n")
    commit_all(project, "other")
    proc = push(project, "side", "side")
    assert proc.returncode == 0, proc.stderr  # the linked worktree's run vouches
    git(project, "switch", "-q", "side")
    assert run_pytest(project, env=subprocess_env(BREAK_IT="1")).returncode == 1
    git(project, "switch", "-q", "other")  # that generation ends, its failing run kept
    (project / ".git" / "genstamp" / "verified.json").unlink()
    proc = push(project, "side", "side")
    assert proc.returncode == 1 and "push refused" in proc.stderr, proc.stderr


def test_a_tree_tested_before_a_stash_is_pushed_after_the_pop(
    project: Path, genstamp: RunGenstamp
) -> None:
    """Work in progress tested green, stashed, HEAD tested (is the failure mine?), popped,
    committed, pushed: the run of the same tests on HEAD did not replace the work's part."""
    green(genstamp, project)
    (project / CALC).write_text("def add(a, b):\n    return b + a\n")
    assert run_pytest(project).returncode == 0
    git(project, "stash", "-q")
    assert run_pytest(project).returncode == 0
    git(project, "stash", "pop", "-q")
    commit_all(project, "commute")
    # control: one more edit, committed untested
    pushed_then_an_untested_edit_refused(project, "def add(a, b):\n    return (b + a)\n")


SITE = {"index.html": "<h1>docs</h1>", "css/site.css": "h1 {}"}


@pytest.mark.parametrize(
    ("files", "code"),
    [
        (SITE, False),
        # sphinx-gallery's and nbsphinx's downloads: examples, no tests
        (
            {**SITE, "_downloads/plot_x.py": "x = 1\n", "_downloads/plot_x.ipynb": "{}"},
            False,
        ),
        ({**SITE, "_sources/testing.rst.txt": ">>> 1 + 1\n3\n"}, False),  # Sphinx's copy
        ({"README.md": "notes", "test_docs.txt": ">>> 1 + 1\n3\n"}, True),  # default doctests
        ({"calc.py": "X = 1\n", "tests.py": "def test_x():\n    assert False\n"}, True),
        ({**SITE, ".pytest.ini": "[pytest]\naddopts = --doctest-glob=*.md\n"}, True),
        ({**SITE, "pytest.toml": "[pytest]\n"}, True),
        ({**SITE, "pyproject.toml": "[project]\n"}, True),
        ({**SITE, "tests/test_x.py": "def test_x():\n    assert False\n"}, True),
    ],
    ids=[
        "site",
        "gallery",
        "sphinx-sources",
        "doctests",
        "code",
        "pytest-ini",
        "pytest-toml",
        "a-pyproject",
        "a-test",
    ],
)
def test_a_pushed_tree_with_no_project_and_no_tests_has_nothing_to_test(
    project: Path, genstamp: RunGenstamp, files: dict[str, str], code: bool
) -> None:
    """gh-pages (ghp-import, `mkdocs gh-deploy`): a branch of a built site (its examples and
    page sources included) holds nothing pytest could run; its push is accepted, saying so. A
    tree with a Python project's metadata, a configuration pytest reads, test files pytest
    collects, or Python code outside a site is judged."""
    green(genstamp, project)
    tree = git(project, "mktree", input=_nested(project, files))
    git(
        project,
        "update-ref",
        "refs/heads/gh-pages",
        git(project, "commit-tree", tree, "-m", "site"),
    )
    proc = push(project, "gh-pages", "gh-pages")
    assert proc.returncode == (1 if code else 0), proc.stderr
    assert ("holds no Python project and no tests" in proc.stderr) == (not code), proc.stderr
    code_, _, err = genstamp("-C", project, "verify", "--rev", "gh-pages")
    assert code_ == (1 if code else 0)
    assert ("holds no Python project and no tests" in err) == (not code), err


@pytest.mark.parametrize("files", [SITE, {**SITE, "test_site.py": "def test_x():\n    pass\n"}])
def test_a_site_pytest_ran_on_still_has_nothing_to_test(
    tmp_path: Path, genstamp: RunGenstamp, files: dict[str, str]
) -> None:
    """pytest run on a checked-out site (it finds no test) made the run the tree's newest
    evidence: `verify --rev` refused it `no-tests`, whose remedy no run can follow, and so did
    the pre-push (h211); `attest` could not tell why it wrote nothing. The site has nothing to
    test, run or not, and nothing to attest. Control: a test file in it, judged on its run."""
    site = init_repo(tmp_path / "site")
    for rel, text in files.items():
        (site / rel).parent.mkdir(parents=True, exist_ok=True)
        (site / rel).write_text(text)
    commit_all(site, "the site")
    stamp(genstamp, site)
    tested = "test_site.py" in files
    assert run_pytest(site, "-p", "no:cacheprovider").returncode == (0 if tested else 5)
    code, _, err = genstamp("-C", site, "verify", "--rev", "HEAD")
    assert code == 0, err
    assert ("holds no Python project and no tests" in err) != tested, err
    code, _, err = genstamp("-C", site, "verify", "--from-notes", "--rev", "HEAD")
    assert code == (1 if tested else 0), err
    assert ("nothing to attest" in err) != tested, err
    code, _, err = genstamp("-C", site, "attest", "-o", tmp_path / "a.json")
    assert code == (0 if tested else 2), err
    assert ("holds no Python project and no tests: nothing to attest" in err) != tested, err


def _nested(repo: Path, files: dict[str, str]) -> str:
    """`git mktree` input for ``files`` (one level of folders), the subtrees written."""
    top: dict[str, str] = {}
    folders: dict[str, str] = {}
    for rel, text in files.items():
        blob = git(repo, "hash-object", "-w", "--stdin", input=text)
        folder, _, name = rel.rpartition("/")
        if folder:
            folders[folder] = folders.get(folder, "") + f"100644 blob {blob}\t{name}\n"
        else:
            top[name] = f"100644 blob {blob}\t{name}\n"
    for folder, listing in folders.items():
        top[folder] = f"040000 tree {git(repo, 'mktree', input=listing)}\t{folder}\n"
    return "".join(top[name] for name in sorted(top))


# -- the tests begin while the co-process takes the tree at the start ---------------------------

WRITES_SLOW2 = """
from pathlib import Path


def test_writes_into_the_work_tree():
    Path("slow2.txt").write_text("written by a test\\n")
    Path(BEGAN).touch()  # (the filter may go on)
"""

SEES_THE_WALK = """
import os
import py_compile
import time


def test_runs_while_the_tree_is_taken():
    for _ in range(3000):  # (the armed filter holds until BEGAN exists)
        if os.path.exists(os.environ["FILTERING"]):
            break
        time.sleep(0.01)
    assert os.path.exists(os.environ["FILTERING"])
    open(BEGAN, "w").close()  # (the filter may go on)
"""


def slow_project(repo: Path, flag: Path, test: str) -> Path:
    """The calc project with ``test``, a thousand small files and two untracked files through
    a clean filter (``flag`` exists while it runs). Once ``arm``-ed, the filter holds until
    the test has begun (it creates the file ``BEGAN`` names) or twenty seconds passed: the
    walk at the start lasts until then, however long pytest takes to start."""
    began = flag.with_name("began")
    write_calc(repo, tests=test.replace("BEGAN", repr(str(began))))
    bulk(repo)  # a large tree: the tests may begin as it is walked
    (repo / ".gitattributes").write_text("slow*.txt filter=slow\n")
    commit_all(repo, "calc, slowly filtered")
    began.touch()
    holds = f"i=0; while [ ! -e '{began}' ] && [ $i -lt 400 ]; do sleep 0.05; i=$((i+1)); done"
    clean = f"touch '{flag}'; {holds}; touch '{began}'; cat; rm -f '{flag}'"
    git(repo, "config", "filter.slow.clean", clean)
    for name in ("slow1.txt", "slow2.txt"):
        (repo / name).write_text(f"{name}, before the run\n")
    return repo


def arm(flag: Path) -> None:
    """The next walk through the filter of ``slow_project`` holds until the test begins."""
    flag.with_name("began").unlink()


def test_a_test_writing_into_the_tree_as_the_tree_is_taken_leaves_no_evidence(
    repo: Path, genstamp: RunGenstamp, tmp_path: Path
) -> None:
    """The tests begin while the co-process still takes the tree at the start (it watches the
    work tree). A test writes a file the walk has not read yet: the walk reads the new bytes,
    so the trees at the start and at the end agree though the tests began on other bytes.
    No evidence is bound to that tree (the race is said), and the next run takes the tree
    before its tests begin: accepted, as the same file rewritten with the same bytes is."""
    flag = tmp_path / "filtering"
    slow_project(repo, flag, WRITES_SLOW2)
    stamp(genstamp, repo)
    arm(flag)
    proc = run_pytest(repo, "-p", "no:cacheprovider")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    said = "evidence not written: the work tree changed as the tests began (slow2.txt)"
    assert said in proc.stdout, proc.stdout
    assert not (repo / STATE / "evidence.xml").exists()
    assert verdict(genstamp, repo)[0] == 1
    assert (repo / STATE / "await-start").is_file()
    run_tests(repo, "-p", "no:cacheprovider")
    assert verdict(genstamp, repo)[0] == 0


WRITES_SLOW2_AND_MAY_FAIL = """
import os
import py_compile
from pathlib import Path


def test_writes_into_the_work_tree():
    Path("slow2.txt").write_text("written by a test\\n")
    Path(BEGAN).touch()  # (the filter may go on)
    assert not os.environ.get("BREAK")
"""


def test_a_failing_run_in_the_start_race_refutes_the_tree_all_the_same(
    repo: Path, genstamp: RunGenstamp, tmp_path: Path
) -> None:
    """A run whose tests began as the tree was taken binds no evidence; where it failed, its
    failure was recorded for the tree at the start, which it did not know: nothing was
    recorded, and an earlier pass of the same tree was accepted. The tree as it is now is
    recorded."""
    flag = tmp_path / "filtering"
    slow_project(repo, flag, WRITES_SLOW2_AND_MAY_FAIL)
    stamp(genstamp, repo)
    arm(flag)
    for _ in range(2):  # the race (no evidence), then the tree taken first: accepted
        proc = run_pytest(repo, "-p", "no:cacheprovider")
        assert proc.returncode == 0, proc.stdout + proc.stderr
    commit_all(repo, "the tested tree")  # (its files as they are: the same tree)
    assert verdict(genstamp, repo, "--rev", "HEAD")[0] == 0  # and remembered as verified
    (repo / STATE / "await-start").unlink(missing_ok=True)  # (the README's way back)
    arm(flag)
    proc = run_pytest(repo, "-p", "no:cacheprovider", env=subprocess_env(BREAK="1"))
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "evidence not written: the work tree changed as the tests began" in proc.stdout
    code, data = verdict(genstamp, repo, "--rev", "HEAD")
    assert code == 1 and rules(data) == ["tests-failed"], data


def test_tests_that_leave_the_tree_alone_begin_as_the_tree_is_taken(
    repo: Path, genstamp: RunGenstamp, tmp_path: Path
) -> None:
    """Control: the same slow walk, a test that sees it still running (its filter's flag)
    and writes nothing: accepted at once, and later runs keep beginning early."""
    flag = tmp_path / "filtering"
    slow_project(repo, flag, SEES_THE_WALK)
    stamp(genstamp, repo)
    env = subprocess_env(FILTERING=str(flag))
    arm(flag)
    proc = run_tests(repo, "-p", "no:cacheprovider", env=env)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert verdict(genstamp, repo)[0] == 0
    assert not (repo / STATE / "await-start").exists()


# -- the test environment's genstamp is another build -----------------------------------------


def another_build(folder: Path, module: str, old: str, new: str) -> Path:
    """A copy of this genstamp in ``folder`` (for PYTHONPATH) with ``old`` in ``module``
    replaced by ``new``: another build of the same version."""
    shutil.copytree(
        Path(genstamp_package.__file__).parent,
        folder / "genstamp",
        ignore=shutil.ignore_patterns("__pycache__"),
    )
    path = folder / "genstamp" / module
    text = path.read_text()
    assert text.count(old) == 1
    path.write_text(text.replace(old, new))
    return folder


def test_the_evidence_of_a_recorder_that_observes_less_is_refused_naming_both(
    repo: Path, genstamp: RunGenstamp, tmp_path: Path
) -> None:
    """The test environment imports a build of genstamp from before the observation level (its
    recorder writes no ``genstamp.observes``: what it did not look for, it recorded as not
    found): this gate refuses its green run, naming both; the same run recorded by this build
    is accepted."""
    older = another_build(
        tmp_path / "older", "evidence.py", "        P_OBSERVES: str(OBSERVES),\n", ""
    )
    write_calc(repo)
    commit_all(repo, "calc")
    stamp(genstamp, repo)
    proc = run_pytest(repo, "-p", "no:cacheprovider", env=subprocess_env(PYTHONPATH=str(older)))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert (repo / STATE / "evidence.xml").is_file(), proc.stdout + proc.stderr
    code, data = verdict(genstamp, repo)
    assert code == 1 and rules(data) == ["unbound-evidence"], data
    said = message(data, "unbound-evidence")
    assert f"observation level '0', this genstamp's {binding.OBSERVES}" in said
    assert f"recorded by genstamp {genstamp_package.__version__}" in said
    run_tests(repo, "-p", "no:cacheprovider")
    assert verdict(genstamp, repo)[0] == 0


def test_a_stamp_the_tests_genstamp_cannot_read_is_said_though_both_say_one_version(
    repo: Path, genstamp: RunGenstamp, tmp_path: Path
) -> None:
    """The hooks' build writes a stamp format the test environment's build (the same version
    string: builds between releases share it) does not read: the run records no generation,
    and the refusal says why, naming both formats, not "rerun the tests" alone (which would
    change nothing)."""
    write_calc(repo)
    commit_all(repo, "calc")
    stamp(genstamp, repo)
    stamped = repo / ".git" / "genstamp" / generation.FILENAME
    version = json.loads(stamped.read_text())["version"]  # the oldest that holds the stamp
    older = another_build(
        tmp_path / "older",
        "generation.py",
        f"\nVERSION = {generation.VERSION}\nREADS = {generation.READS}\n",
        f"\nVERSION = {version - 1}\nREADS = {tuple(range(1, version))}\n",
    )
    env = subprocess_env(PYTHONPATH=str(older))
    proc = run_pytest(repo, "-p", "no:cacheprovider", env=env)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    code, data = verdict(genstamp, repo)
    assert code == 1 and rules(data) == ["stale-generation"], data
    said = message(data, "stale-generation")
    assert "the evidence is from generation none" in said
    assert (
        f"; the tests' genstamp read no generation: the generation stamp "
        f"{stamped} is format version {version}, "
        f"written by genstamp {genstamp_package.__version__}; this genstamp "
        f"{genstamp_package.__version__} reads version {version - 1}"
    ) in said, said
    run_tests(repo, "-p", "no:cacheprovider")
    assert verdict(genstamp, repo)[0] == 0


def test_a_damaged_stamp_is_not_said_to_be_another_builds(
    repo: Path, genstamp: RunGenstamp
) -> None:
    """Control: a stamp the run could not read for another reason (damaged: no JSON) is no
    other build's format; once stamped anew, the refusal of that run's evidence says to rerun
    the tests, which is accepted."""
    write_calc(repo)
    commit_all(repo, "calc")
    stamp(genstamp, repo)
    (repo / ".git" / "genstamp" / generation.FILENAME).write_text("{")
    assert run_pytest(repo, "-p", "no:cacheprovider").returncode == 0
    stamp(genstamp, repo)
    code, data = verdict(genstamp, repo)
    assert code == 1 and rules(data) == ["stale-generation"], data
    assert "read no generation" not in message(data, "stale-generation"), data
    run_tests(repo, "-p", "no:cacheprovider")
    assert verdict(genstamp, repo)[0] == 0
