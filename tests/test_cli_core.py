"""`genstamp stamp|scrub|status`: output, JSON and exit codes, in-process and as a process."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import RunGenstamp, commit_all, git, git_tree, init_repo, subprocess_env

HEX32 = re.compile(r"[0-9a-f]{32}")


def warm(project: Path) -> list[Path]:
    """Leave the bytecode a warm checkout has (ignored by the project's .gitignore)."""
    caches = [project / "src" / "calc" / "__pycache__", project / "tests" / "__pycache__"]
    for cache in caches:
        cache.mkdir()
        (cache / "x.cpython-311.pyc").write_bytes(b"12345678")
    (project / "src" / "stray.pyc").write_bytes(b"1234")
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
