"""`genstamp stamp|scrub|status`: output, JSON and exit codes, in-process and as a process; and
hostile input (names that are not UTF-8 or hold newlines, 5,000 pushed refs, a 200 MB JUnit
file) through the commands."""

from __future__ import annotations

import errno
import json
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from conftest import (
    RunGenstamp,
    commit_all,
    git,
    git_tree,
    init_repo,
    run_pytest,
    run_python,
    subprocess_env,
    write_calc,
)

from genstamp import cli as genstamp_cli
from genstamp import errors
from genstamp.identity import tree_identity
from genstamp.repo import open_checkout
from genstamp.verify import TREE_LIMIT

HEX32 = re.compile(r"[0-9a-f]{32}")


def warm(project: Path) -> list[Path]:
    """Leave the bytecode a warm checkout has (ignored by the project's .gitignore)."""
    caches = [project / "src" / "calc" / "__pycache__", project / "tests" / "__pycache__"]
    for cache in caches:
        cache.mkdir()
        (cache / "x.cpython-311.pyc").write_bytes(b"12345678")
    (project / "src" / "stray.pyc").write_bytes(b"\0\0\r\n")  # legacy bytecode: a magic number
    return caches


def cli(cwd: Path, *args: str, module: bool = True) -> subprocess.CompletedProcess[str]:
    """A real genstamp process: ``python -m genstamp`` or the installed console script."""
    if module:
        argv = [sys.executable, "-m", "genstamp", *args]
    else:
        script = Path(sys.executable).parent / "genstamp"
        if not script.exists():
            pytest.skip(f"no console script beside {sys.executable}")
        argv = [str(script), *args]
    return subprocess.run(
        argv, cwd=cwd, capture_output=True, text=True, env=subprocess_env(), timeout=120
    )


# --- stamp ---------------------------------------------------------------------------------


def test_stamp_scrubs_and_stamps(project: Path, genstamp: RunGenstamp) -> None:
    caches = warm(project)
    code, out, err = genstamp("-C", project, "stamp")
    assert code == 0, err
    match = re.fullmatch(
        r"generation ([0-9a-f]{32}) begun: tree ([0-9a-f]{12}); "
        r"removed 2 folders, 3 files, 20 B of bytecode\n",
        out,
    )
    assert match, out
    assert git_tree(project).startswith(match.group(2))
    assert not any(c.exists() for c in caches) and not (project / "src" / "stray.pyc").exists()
    code, out, _ = genstamp("-C", project, "status", "--json")
    assert json.loads(out)["generation"]["id"] == match.group(1)


def test_stamp_no_scrub_trigger_json(project: Path, genstamp: RunGenstamp) -> None:
    caches = warm(project)
    code, out, err = genstamp(
        "-C", project, "stamp", "--no-scrub", "--trigger", "post-merge", "--json"
    )
    assert code == 0, err
    data = json.loads(out)
    assert data["clean"] is True
    gen = data["generation"]
    assert gen["trigger"] == "post-merge"
    assert gen["scrub"] is None
    assert HEX32.fullmatch(gen["id"])
    assert gen["tree"] == git_tree(project)
    assert gen["head"] == git(project, "rev-parse", "HEAD")
    assert "key" not in gen  # the evidence seal's secret stays in the git dir
    assert all(c.is_dir() for c in caches)


def test_stamp_json_with_scrub(project: Path, genstamp: RunGenstamp) -> None:
    warm(project)
    code, out, _ = genstamp("-C", project, "stamp", "--json")
    assert code == 0
    scrubbed = json.loads(out)["generation"]["scrub"]
    assert (scrubbed["folders"], scrubbed["files"], scrubbed["bytes"]) == (2, 3, 20)
    assert scrubbed["errors"] == [] and scrubbed["dry_run"] is False


@pytest.mark.parametrize("trigger", ["manual", "post-checkout", "post-merge", "post-rewrite", "ci"])
def test_every_trigger_is_recorded(project: Path, genstamp: RunGenstamp, trigger: str) -> None:
    code, out, _ = genstamp("-C", project, "stamp", "--no-scrub", "--json", "--trigger", trigger)
    assert code == 0 and json.loads(out)["generation"]["trigger"] == trigger


def test_unknown_trigger_is_a_usage_error(project: Path, genstamp: RunGenstamp) -> None:
    code, out, err = genstamp("-C", project, "stamp", "--trigger", "nightly")
    assert code == 2
    assert out == ""
    assert "nightly" in err and "post-checkout" in err  # names the bad value and the choices
    assert "Traceback" not in err
    assert not (project / ".git" / "genstamp").exists()


# --- scrub ---------------------------------------------------------------------------------


def test_scrub_dry_run_lists_and_keeps(project: Path, genstamp: RunGenstamp) -> None:
    caches = warm(project)
    code, out, err = genstamp("-C", project, "scrub", "--dry-run")
    assert code == 0
    listed = set(out.splitlines())
    assert {f"{c}/" for c in caches} <= listed
    assert str(project / "src" / "stray.pyc") in listed
    assert len(listed) == 5  # 2 folders + 3 files
    assert "would remove 2 folders, 3 files, 20 B of bytecode" in err
    assert all(c.is_dir() for c in caches)


def test_scrub_json(project: Path, genstamp: RunGenstamp) -> None:
    caches = warm(project)
    code, out, _ = genstamp("-C", project, "scrub", "--dry-run", "--json")
    assert code == 0
    dry = json.loads(out)
    assert dry["dry_run"] is True and (dry["folders"], dry["files"], dry["bytes"]) == (2, 3, 20)
    assert all(c.is_dir() for c in caches)
    code, out, _ = genstamp("-C", project, "scrub", "--json")
    assert code == 0
    done = json.loads(out)
    assert done["dry_run"] is False and done["errors"] == []
    assert sorted(done["removed"]) == sorted(dry["removed"])
    assert not any(c.exists() for c in caches)
    assert git(project, "status", "--porcelain", "--ignored") == ""
    code, out, _ = genstamp("-C", project, "scrub", "--json")
    assert (json.loads(out)["folders"], json.loads(out)["files"]) == (0, 0)


def test_scrub_from_a_subfolder_scrubs_the_whole_work_tree(
    project: Path, genstamp: RunGenstamp
) -> None:
    caches = warm(project)
    code, out, _ = genstamp("-C", project / "tests", "scrub")
    assert code == 0 and out.startswith("removed 2 folders, 3 files")
    assert not any(c.exists() for c in caches)


# --- status --------------------------------------------------------------------------------


def test_status_json_before_and_after_stamp(project: Path, genstamp: RunGenstamp) -> None:
    code, out, _ = genstamp("-C", project, "status", "--json")
    assert code == 0
    data = json.loads(out)
    assert data["tree"] == git_tree(project)
    assert data["head"] == git(project, "rev-parse", "HEAD")
    assert data["generation"] is None

    genstamp("-C", project, "stamp", "--trigger", "ci")
    data = json.loads(genstamp("-C", project, "status", "--json")[1])
    gen = data["generation"]
    assert {"id", "tree", "head", "created", "trigger"} <= set(gen)
    assert "key" not in gen
    assert HEX32.fullmatch(gen["id"])
    assert gen["tree"] == data["tree"] == git_tree(project)
    assert gen["head"] == data["head"]
    assert gen["trigger"] == "ci"
    assert data["tree_matches_generation"] is True

    (project / "src" / "calc" / "__init__.py").write_text("def add(a, b):\n    return a - b\n")
    data = json.loads(genstamp("-C", project, "status", "--json")[1])
    assert data["tree"] == git_tree(project) != gen["tree"]
    assert data["generation"]["id"] == gen["id"]
    assert data["tree_matches_generation"] is False


def test_status_text(project: Path, genstamp: RunGenstamp) -> None:
    code, out, _ = genstamp("-C", project, "status")
    assert code == 0
    assert f"tree        {git_tree(project)}" in out
    assert "generation  none" in out
    genstamp("-C", project, "stamp")
    code, out, _ = genstamp("-C", project, "status")
    assert code == 0 and "the tree is as stamped" in out
    (project / "untracked.txt").write_text("u\n")
    assert "the tree changed since" in genstamp("-C", project, "status")[1]


@pytest.mark.parametrize(
    ("name", "text", "bad"),
    [
        ("pytest.ini", "[pytest\ntestpaths = tests\n", True),
        ("pytest.ini", "[pytest]\n[pytest]\n", True),
        ("pytest.ini", "; caf\xe9\n[pytest]\n", True),
        ("pytest.ini", "[pytest]\ntestpaths = tests\n", False),  # read as pytest reads it
    ],
    ids=["no-bracket", "twice", "latin-1", "control"],
)
def test_status_names_a_pytest_configuration_pytest_cannot_read(
    project: Path, genstamp: RunGenstamp, name: str, text: str, bad: bool
) -> None:
    """pytest stops on the file (a usage error, a decode error): status says which and why,
    and so does verify's refusal for want of evidence."""
    (project / name).write_bytes(text.encode("latin-1"))
    code, out, _ = genstamp("-C", project, "status")
    assert code == 0
    told = [line.strip() for line in out.splitlines() if "cannot be read" in line]
    data = json.loads(genstamp("-C", project, "status", "--json")[1])
    problems = [p for s in data["selection"]["suites"] for p in s["problems"]]
    genstamp("-C", project, "stamp")
    code, out, err = genstamp("-C", project, "verify")  # no evidence: pytest could not run
    assert code == 1 and "no-evidence" in out + err
    stops = f"pytest stops before any test: {name} cannot be read ("
    if not bad:
        assert told == [] and problems == [], out
        assert stops not in out + err
        return
    assert stops in out + err, out + err
    assert told and told[0].startswith(f"{name} cannot be read ("), out
    assert told[0].endswith("— fix it: pytest stops on it"), out
    assert problems and problems[0].startswith(f"{name} cannot be read ("), data


def test_status_tells_a_computed_collect_ignore_as_genstamp_s_note(
    project: Path, genstamp: RunGenstamp
) -> None:
    """A conftest's computed ``collect_ignore`` is genstamp's limit, not pytest's: pytest runs
    on (A25 06: status said "pytest stops on it"); the note says how to write it instead."""
    (project / "tests" / "conftest.py").write_text(
        "import os\n\ncollect_ignore = [os.path.join('sub', 'test_old.py')]\n"
    )
    code, out, _ = genstamp("-C", project, "status")
    assert code == 0
    (told,) = [line.strip() for line in out.splitlines() if "computes collect_ignore" in line]
    assert "write it so" in told and "pytest stops" not in told, out


def test_status_unborn_repository(repo: Path, genstamp: RunGenstamp) -> None:
    (repo / "f.txt").write_text("f\n")
    code, out, err = genstamp("-C", repo, "status", "--json")
    assert code == 0, err
    data = json.loads(out)
    assert data["head"] is None and data["tree"] == git_tree(repo)
    assert genstamp("-C", repo, "stamp")[0] == 0
    gen = json.loads(genstamp("-C", repo, "status", "--json")[1])["generation"]
    assert gen["head"] is None and gen["tree"] == git_tree(repo)


def test_status_uses_the_current_directory(
    project: Path, genstamp: RunGenstamp, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(project / "src" / "calc")
    code, out, _ = genstamp("status", "--json")
    assert code == 0 and json.loads(out)["tree"] == git_tree(project)


# --- environment errors --------------------------------------------------------------------


@pytest.mark.parametrize("command", ["stamp", "scrub", "status"])
def test_outside_a_work_tree(tmp_path: Path, genstamp: RunGenstamp, command: str) -> None:
    nowhere = tmp_path / "not-a-repo"
    nowhere.mkdir()
    proc = subprocess.run(["git", "rev-parse"], cwd=nowhere, capture_output=True)
    assert proc.returncode != 0, "premise: tmp_path must not be inside a git repository"
    code, out, err = genstamp("-C", nowhere, command)
    assert code == 2 and out == ""
    assert err.startswith("genstamp: not inside a git work tree")
    assert len(err.splitlines()) == 1


def test_missing_folder(tmp_path: Path, genstamp: RunGenstamp) -> None:
    code, _, err = genstamp("-C", tmp_path / "absent", "status")
    assert code == 2 and err.startswith("genstamp: ") and len(err.splitlines()) == 1


@pytest.mark.parametrize("command", ["stamp", "scrub", "status"])
def test_bare_repository(tmp_path: Path, genstamp: RunGenstamp, command: str) -> None:
    bare = tmp_path / "bare.git"
    git(tmp_path, "init", "-q", "--bare", str(bare))
    code, out, err = genstamp("-C", bare, command)
    assert code == 2 and out == ""
    assert err.startswith("genstamp: ") and "bare repository" in err
    assert len(err.splitlines()) == 1
    assert not (bare / "genstamp").exists()


def test_unknown_command_and_option(project: Path, genstamp: RunGenstamp) -> None:
    assert genstamp("-C", project, "stmp")[0] == 2
    assert genstamp("-C", project, "status", "--bogus")[0] == 2
    assert genstamp("--version")[0] == 0


def test_the_build_of_a_package_folder_holding_an_editors_lock_link(tmp_path: Path) -> None:
    """An editable genstamp whose folder holds Emacs' lock link for a module being edited
    (`.#rules.py`, a link to nowhere): `--version` names the build (it printed a traceback),
    the same build as without the link (no module Python imports)."""
    import shutil

    import genstamp

    copy = tmp_path / "genstamp"
    shutil.copytree(
        Path(genstamp.__file__).parent, copy, ignore=shutil.ignore_patterns("__pycache__")
    )
    env = {**os.environ, "PYTHONPATH": str(tmp_path)}

    def version() -> subprocess.CompletedProcess[str]:
        probe = [sys.executable, "-m", "genstamp", "--version"]
        return subprocess.run(probe, env=env, capture_output=True, text=True, check=False)

    before = version()
    assert before.returncode == 0 and re.fullmatch(
        r"genstamp \S+ \(build [0-9a-f]{12}\)\n", before.stdout
    )
    (copy / ".#rules.py").symlink_to("root@host.1234:1700000000")
    after = version()
    assert (after.returncode, after.stdout, after.stderr) == (0, before.stdout, ""), after


# --- real processes ------------------------------------------------------------------------


def test_real_process_stamp_then_status(project: Path) -> None:
    warm(project)
    stamped = cli(project, "stamp", "--json")
    assert stamped.returncode == 0, stamped.stderr
    gen = json.loads(stamped.stdout)["generation"]
    status = cli(project / "src", "status", "--json")
    assert status.returncode == 0, status.stderr
    data = json.loads(status.stdout)
    assert data["tree"] == git_tree(project) == gen["tree"]
    assert data["generation"]["id"] == gen["id"]
    assert git(project, "status", "--porcelain", "--ignored") == ""


def test_real_console_script(project: Path, tmp_path: Path) -> None:
    proc = cli(project, "status", "--json", module=False)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["tree"] == git_tree(project)
    outside = tmp_path / "outside"
    outside.mkdir()
    proc = cli(outside, "status", module=False)
    assert proc.returncode == 2
    assert proc.stderr.startswith("genstamp: not inside a git work tree")
    assert "Traceback" not in proc.stderr


def test_real_process_exit_codes(tmp_path: Path) -> None:
    bare = tmp_path / "bare.git"
    git(tmp_path, "init", "-q", "--bare", str(bare))
    proc = cli(bare, "status")
    assert proc.returncode == 2 and "bare repository" in proc.stderr
    assert "Traceback" not in proc.stderr
    work = init_repo(tmp_path / "work")
    commit_all(work, "empty")
    proc = cli(work, "stamp", "--trigger", "bogus")
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    proc = cli(work, "scrub", "--dry-run")
    assert proc.returncode == 0 and proc.stdout == ""


# -- hostile input through the commands ------------------------------------------------------------
# Hostile input: file names that are not UTF-8 or hold newlines, a push of 5,000 refs, and a
# 200 MB JUnit file, each answered in bounded memory with clear output and no traceback.
#
# test_evidence.py covers XML bombs, entities, binary garbage and the reader's memory on 200 MB;
# test_verify.py one Latin-1 file name in a tree-mismatch line. Here the same inputs go end to end
# through the commands (scrub, stamp, verify, check-bytecode, a real `git push`).


LATIN1 = os.fsdecode(b"caf\xe9")  # a name that is not UTF-8 (surrogate-escaped by os)
STRICT = {"PYTHONIOENCODING": "utf-8:strict"}  # a UTF-8 terminal that refuses surrogates


def genstamp(
    cwd: Path, *args: str, stdin: bytes | None = None, **env: str
) -> subprocess.CompletedProcess[bytes]:
    """The real command, bytes in and out (the output may hold escaped non-UTF-8 names)."""
    return run_python(
        cwd, "-m", "genstamp", *args, stdin=stdin, env=subprocess_env(**env), text=False
    )


def clean(proc: subprocess.CompletedProcess[bytes]) -> tuple[str, str]:
    """stdout and stderr, which must be valid UTF-8 and carry no traceback."""
    out, err = proc.stdout.decode("utf-8"), proc.stderr.decode("utf-8")
    assert "Traceback" not in out + err, out + err
    return out, err


def make_project(root: Path) -> Path:
    return write_calc(init_repo(root), gitignore="__pycache__/\n")


def stamp_and_test(repo: Path) -> None:
    proc = genstamp(repo, "stamp")
    assert proc.returncode == 0, proc.stderr
    tested = run_pytest(repo)
    assert tested.returncode == 0, tested.stdout + tested.stderr


# -- names that are not UTF-8 ---------------------------------------------------------------------


@pytest.fixture
def latin1(tmp_path: Path) -> Path:
    """A project with a tracked Latin-1 folder and file, stamped and tested green."""
    repo = make_project(tmp_path / "repo")
    (repo / LATIN1).mkdir()
    (repo / LATIN1 / f"{LATIN1}.txt").write_text("tracked\n")
    (repo / "data").mkdir()
    (repo / "data" / f"{LATIN1}.csv").write_text("a,b\n")
    commit_all(repo, "non-UTF-8 names")
    assert (
        LATIN1.encode("utf-8", "surrogateescape")
        in subprocess.run(
            ["git", "ls-files", "-z"], cwd=repo, capture_output=True, check=True
        ).stdout
    )  # git tracks the bytes as they are
    stamp_and_test(repo)
    return repo


def test_non_utf8_names_identity_equals_git(latin1: Path) -> None:
    (latin1 / LATIN1 / f"{LATIN1}.txt").write_text("changed\n")  # modified
    (latin1 / LATIN1 / f"new-{LATIN1}").write_text("untracked\n")  # added
    (latin1 / "data" / f"{LATIN1}.csv").unlink()  # deleted
    os.symlink(f"{LATIN1}/{LATIN1}.txt", latin1 / f"link-{LATIN1}")  # a link to such a name
    assert tree_identity(open_checkout(latin1)) == git_tree(latin1)


def test_non_utf8_names_are_accepted_then_named_when_they_change(latin1: Path) -> None:
    """The plugin and the gate agree on the tree with such names in it; a change to one is
    named escaped, on one line, whatever stdout's encoding."""
    out, err = clean(genstamp(latin1, "verify", **STRICT))
    assert out == "" and "evidence accepted" in err
    (latin1 / LATIN1 / f"{LATIN1}.txt").write_text("changed after the run\n")
    proc = genstamp(latin1, "verify", **STRICT)
    out, _ = clean(proc)
    assert proc.returncode == 1
    assert out.splitlines() == [out.rstrip("\n")]
    assert out.startswith("tree-mismatch: ") and "caf\\xe9/caf\\xe9.txt" in out


def test_non_utf8_names_scrub_and_check_bytecode(latin1: Path) -> None:
    cache = latin1 / LATIN1 / "__pycache__"
    cache.mkdir()
    (cache / f"{LATIN1}.cpython-311.pyc").write_bytes(b"bytecode")
    (latin1 / LATIN1 / f"{LATIN1}.pyc").write_bytes(b"\0\0\r\n legacy bytecode")
    (latin1 / LATIN1 / f"{LATIN1}.pyc.txt").write_text("data\n")

    proc = genstamp(latin1, "scrub", "--dry-run", **STRICT)
    out, err = clean(proc)
    assert proc.returncode == 0
    assert sorted(out.splitlines()) == sorted(
        f"{latin1}/caf\\xe9/{rel}"
        for rel in ("__pycache__/", "__pycache__/caf\\xe9.cpython-311.pyc", "caf\\xe9.pyc")
    )
    assert "would remove 1 folders, 2 files" in err

    proc = genstamp(latin1, "stamp", **STRICT)
    clean(proc)
    assert proc.returncode == 0
    assert not cache.exists() and not (latin1 / LATIN1 / f"{LATIN1}.pyc").exists()
    assert (latin1 / LATIN1 / f"{LATIN1}.pyc.txt").read_text() == "data\n"

    # bytecode that is tracked, under such a name: named, escaped
    (latin1 / LATIN1 / f"{LATIN1}.pyc").write_bytes(b"\0\0\r\n tracked bytecode")
    git(latin1, "add", "-f", f"{LATIN1}/{LATIN1}.pyc")
    proc = genstamp(latin1, "check-bytecode", **STRICT)
    out, _ = clean(proc)
    assert proc.returncode == 1
    assert out.startswith("genstamp-bytecode: caf\\xe9/caf\\xe9.pyc is Python bytecode in git")


# -- names that hold newlines ---------------------------------------------------------------------

EVIL = "notes\ntree-mismatch: none — evidence accepted"  # a name that tries to forge a line


def test_a_newline_in_a_name_cannot_split_or_forge_a_line(tmp_path: Path) -> None:
    repo = make_project(tmp_path / "repo")
    commit_all(repo, "calc")
    stamp_and_test(repo)
    (repo / EVIL).write_text("x\n")
    (repo / "sub\ndir").mkdir()
    (repo / "sub\ndir" / "f.txt").write_text("y\n")
    assert tree_identity(open_checkout(repo)) == git_tree(repo)

    proc = genstamp(repo, "verify")
    out, _ = clean(proc)
    assert proc.returncode == 1
    lines = out.splitlines()
    assert len(lines) == 1 and lines[0].startswith("tree-mismatch: ")
    assert "notes\\ntree-mismatch: none" in lines[0] and "sub\\ndir/f.txt" in lines[0]

    (repo / "sub\ndir" / "__pycache__").mkdir()
    (repo / "sub\ndir" / "__pycache__" / "m.cpython-311.pyc").write_bytes(b"x")
    (repo / "legacy\n.pyc").write_bytes(b"\0\0\r\n")
    proc = genstamp(repo, "scrub", "--dry-run")
    out, _ = clean(proc)
    assert sorted(out.splitlines()) == sorted(
        [
            f"{repo}/legacy\\n.pyc",
            f"{repo}/sub\\ndir/__pycache__/",
            f"{repo}/sub\\ndir/__pycache__/m.cpython-311.pyc",
        ]
    )
    proc = genstamp(repo, "scrub")
    clean(proc)
    assert proc.returncode == 0 and (repo / EVIL).is_file()
    assert not (repo / "legacy\n.pyc").exists()


# -- a push of 5,000 refs -----------------------------------------------------------------------

REFS = 5000


def fast_import(repo: Path, base: str, refs: int) -> None:
    """``refs`` branches b0..bN, each a commit on ``base`` with a tree of its own."""
    lines = []
    for i in range(refs):
        lines.append(
            f"commit refs/heads/b{i}\ncommitter C <c@example.invalid> 1767225600 +0000\n"
            f"data 8\nuntested\nfrom {base}\nM 644 inline data/f{i % 97}.txt\n"
            f"data {len(str(i)) + 1}\n{i}\n\n"
        )
    subprocess.run(
        ["git", "fast-import", "--quiet"],
        cwd=repo,
        input="".join(lines).encode(),
        check=True,
        capture_output=True,
    )


@pytest.fixture(scope="module")
def many_refs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A project tested green at main, with 5,000 untested branches (5,000 distinct trees),
    and 5,000 tags on the tested commit."""
    repo = make_project(tmp_path_factory.mktemp("many") / "repo")
    head = commit_all(repo, "calc")
    stamp_and_test(repo)
    fast_import(repo, head, REFS)
    refs = "".join(f"create refs/tags/t{i} {head}\n" for i in range(REFS))
    subprocess.run(["git", "update-ref", "--stdin"], cwd=repo, input=refs.encode(), check=True)
    return repo


def push_stdin(repo: Path, pattern: str) -> bytes:
    return subprocess.run(
        [
            "git",
            "for-each-ref",
            "--format=%(refname) %(objectname) %(refname) " + "0" * 40,
            pattern,
        ],
        cwd=repo,
        capture_output=True,
        check=True,
    ).stdout


def test_a_push_of_5000_untested_refs_is_refused_in_a_few_lines(many_refs: Path) -> None:
    stdin = push_stdin(many_refs, "refs/heads/b*")
    assert stdin.count(b"\n") == REFS
    proc = genstamp(many_refs, "hook", "pre-push", "origin", "/remote.git", stdin=stdin, **STRICT)
    out, err = clean(proc)
    assert proc.returncode == 1 and out == ""
    lines = err.splitlines()
    assert len(lines) == TREE_LIMIT + 2, err  # a line per tree shown, one for the rest, refused
    assert all(line.startswith("genstamp: tree-mismatch: ") for line in lines[:-1])
    assert f"and {REFS - TREE_LIMIT} more on {REFS - TREE_LIMIT} other trees" in lines[-2]
    assert lines[-1] == "genstamp: push refused"
    assert "refs/heads/b" in lines[0] and "data/f" in lines[0]  # the ref, and the path


def test_a_push_of_5000_refs_at_the_tested_commit_is_accepted(many_refs: Path) -> None:
    stdin = push_stdin(many_refs, "refs/tags/t*")
    assert stdin.count(b"\n") == REFS
    proc = genstamp(many_refs, "hook", "pre-push", "origin", "/remote.git", stdin=stdin)
    out, err = clean(proc)
    assert proc.returncode == 0, err
    assert out == "" and err == ""


def test_one_untested_ref_among_5000_tested_ones_is_named(many_refs: Path) -> None:
    stdin = push_stdin(many_refs, "refs/tags/t*") + push_stdin(many_refs, "refs/heads/b4242")
    proc = genstamp(many_refs, "hook", "pre-push", "origin", "/remote.git", stdin=stdin)
    _, err = clean(proc)
    assert proc.returncode == 1
    lines = err.splitlines()
    assert len(lines) == 2 and "refs/heads/b4242 (" in lines[0], err


@pytest.mark.e2e
def test_a_real_git_push_of_5000_refs(
    many_refs: Path, genstamp_snapshot: Path, tmp_path: Path
) -> None:
    """Through git itself and genstamp's plain hooks: refused, nothing reaches the remote;
    then the tested refs alone are pushed."""
    remote = tmp_path / "remote.git"
    git(tmp_path, "init", "-q", "--bare", str(remote))
    wrapper = tmp_path / "genstamp"
    wrapper.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m genstamp "$@"\n')
    wrapper.chmod(0o755)
    env = subprocess_env(GENSTAMP=str(wrapper))
    hooks = f"core.hooksPath={genstamp_snapshot / 'hooks'}"  # for these pushes only

    def push(*refspecs: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            ["git", "-c", hooks, "push", "-q", str(remote), *refspecs],
            cwd=many_refs,
            capture_output=True,
            text=True,
            env=env,
            timeout=600,
        )

    proc = push("refs/heads/*:refs/heads/*")
    assert proc.returncode != 0
    assert "Traceback" not in proc.stderr
    ours = [line for line in proc.stderr.splitlines() if line.startswith("genstamp: ")]
    assert len(ours) == TREE_LIMIT + 2, proc.stderr
    assert git(remote, "for-each-ref") == ""

    proc = push("refs/tags/*:refs/tags/*")
    assert proc.returncode == 0, proc.stderr
    assert len(git(remote, "for-each-ref", "refs/tags").splitlines()) == REFS


# -- a 200 MB JUnit file, end to end --------------------------------------------------------------

MIB = 1 << 20
# The peak of this process's own memory: VmHWM, of its address space since it was exec'd.
# (getrusage's ru_maxrss also keeps the peak of the address space forked from the parent
# before the exec: a pytest worker grown to 130 MiB by the middle of the suite.)
MEASURED = textwrap.dedent(
    """
    import sys
    from genstamp.cli import main
    code = main(sys.argv[1:])
    with open("/proc/self/status") as fh:
        kib = next(int(line.split()[1]) for line in fh if line.startswith("VmHWM:"))
    print(f"peak-mib {kib // 1024}", file=sys.stderr)
    sys.exit(code)
    """
)


def verify_measured(repo: Path, junit: Path) -> subprocess.CompletedProcess[str]:
    """``genstamp verify --junit JUNIT`` run through MEASURED (its peak memory on stderr)."""
    return run_python(repo, "-c", MEASURED, "verify", "--junit", str(junit))


def inflate(src: Path, dest: Path, size: int, *, extra_case: bool = False) -> None:
    """``src`` with ``size`` bytes of captured output streamed into its first testcase (the
    seal covers the testcases' names and outcomes, not their output), or into a testcase of
    its own (which the seal does cover)."""
    data = src.read_bytes()
    at = data.index(b"<testcase ")
    end = data.index(b">", at)
    self_closing = data[end - 1 : end] == b"/"
    head = data[: end - 1] if self_closing else data[:end]
    block = b"x" * MIB
    with dest.open("wb") as fh:
        if extra_case:
            fh.write(data[:at] + b'<testcase classname="forged" name="big"><system-out>')
        else:
            fh.write(head + b"><system-out>")
        for _ in range(size // MIB):
            fh.write(block)
        if extra_case:
            fh.write(b"</system-out></testcase>" + data[at:])
        else:
            fh.write(b"</system-out>" + (b"</testcase>" if self_closing else b"") + data[end + 1 :])


@pytest.mark.e2e
def test_a_200_mb_junit_file_through_genstamp_verify(tmp_path: Path) -> None:
    repo = make_project(tmp_path / "repo")
    commit_all(repo, "calc")
    stamp_and_test(repo)
    evidence = Path(git(repo, "rev-parse", "--absolute-git-dir"), "genstamp", "evidence.xml")
    big = tmp_path / "big.xml"

    inflate(evidence, big, 200 * MIB)
    assert big.stat().st_size > 200 * MIB
    proc = verify_measured(repo, big)
    assert proc.returncode == 0, proc.stdout + proc.stderr  # the seal still holds: accepted
    assert "evidence accepted: 1 passed" in proc.stderr
    peak = int(proc.stderr.split("peak-mib ")[1].split()[0])
    assert peak < 128, f"verify of a 200 MB file peaked at {peak} MiB"

    big.unlink()
    inflate(evidence, big, 200 * MIB, extra_case=True)
    proc = verify_measured(repo, big)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stderr
    assert proc.stdout.startswith("unbound-evidence: ") and "seal" in proc.stdout
    peak = int(proc.stderr.split("peak-mib ")[1].split()[0])
    assert peak < 128, f"verify of a 200 MB file peaked at {peak} MiB"


@pytest.mark.parametrize(
    ("code", "says"),
    [
        (errno.ENOSPC, "free space on the disk that holds"),
        (errno.EROFS, "is on a read-only file system"),
        (errno.EACCES, "writable for this user"),
        (errno.EIO, "can be read and written"),
    ],
)
def test_a_state_file_that_cannot_be_written_names_why(
    tmp_path: Path, code: int, says: str
) -> None:
    """The remedy follows what the system said, not the path alone: a full disk asked to check
    permissions, and a temporary file never made was to be removed."""
    state = tmp_path / ".git" / "genstamp"
    making = state / ".install.json.x1y2.tmp"  # never made: nothing to remove
    hint = genstamp_cli._os_hint(OSError(code, os.strerror(code), str(making)))
    assert says in hint and "remove" not in hint, hint
    if code == errno.EIO:
        state.mkdir(parents=True)
        making.write_text("{")  # there, and damaged: genstamp's own, made anew
        assert genstamp_cli._os_hint(OSError(code, "x", str(making))).startswith(f"remove {making}")
    said = errors.cannot_write(OSError(code, "x"), "/g")
    assert said == "" if code == errno.EIO else says in said and "/g" in said, said


# Ctrl-C while genstamp itself loads: a finder that raises it as genstamp.cli is imported, as
# SIGINT does when it lands there (before any command's own handler is in place)
INTERRUPTED_IMPORT = """
import sys

class Interrupting:
    def find_spec(self, name, path=None, target=None):
        if name == "genstamp.cli":
            raise KeyboardInterrupt
        return None

sys.meta_path.insert(0, Interrupting())
from genstamp.posthook import launch
sys.exit(launch(["verify"]))
"""


def test_ctrl_c_while_genstamp_loads_is_one_line(project: Path) -> None:
    """A Ctrl-C of a push early in its pre-push hook (genstamp, pygit2 and the parser loading)
    printed a traceback: `genstamp: interrupted`, exit 130, as later in a command."""
    proc = subprocess.run(
        [sys.executable, "-c", INTERRUPTED_IMPORT],
        cwd=project,
        capture_output=True,
        text=True,
        env=subprocess_env(),
    )
    assert (proc.returncode, proc.stderr) == (130, "genstamp: interrupted\n"), proc.stderr
