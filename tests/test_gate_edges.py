"""Edges a final review found: each a way to a false accept, a traceback, or a lost file."""

from __future__ import annotations

import json
import py_compile
import shutil
from pathlib import Path
from typing import Any

import pytest
from conftest import (
    RunGenstamp,
    commit_all,
    git,
    init_repo,
    run_genstamp,
    run_pytest,
)

from genstamp import audit, evidence
from genstamp.repo import open_checkout


def stamp(genstamp: RunGenstamp, repo: Path) -> None:
    code, _, err = genstamp("-C", repo, "stamp")
    assert code == 0, err


def verdict(genstamp: RunGenstamp, repo: Path) -> tuple[int, dict[str, Any]]:
    code, out, _ = genstamp("-C", repo, "verify", "--json")
    return code, json.loads(out)


def rules(data: dict[str, Any]) -> list[str]:
    return [f["rule"] for f in data["failures"]]


@pytest.fixture
def fresh(project: Path, genstamp: RunGenstamp) -> Path:
    stamp(genstamp, project)
    proc = run_pytest(project)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert verdict(genstamp, project)[0] == 0
    return project


def test_a_copied_checkout_does_not_accept_the_originals_evidence(
    fresh: Path, genstamp: RunGenstamp, tmp_path: Path
) -> None:
    """`cp -r` carries the stamp and the evidence along, same generation id and all."""
    copy = tmp_path / "copy"
    shutil.copytree(fresh, copy, symlinks=True)
    code, data = verdict(genstamp, copy)
    assert code == 1 and rules(data) == ["stale-generation"]
    assert "another checkout" in data["failures"][0]["message"]


def test_an_audit_of_another_format_is_refused_not_skipped(
    fresh: Path, genstamp: RunGenstamp
) -> None:
    path = evidence.default_path(open_checkout(fresh).state)
    text = path.read_text()
    assert '"version":1' in text.replace("&quot;", '"')
    path.write_text(text.replace("&quot;version&quot;:1", "&quot;version&quot;:2"))
    code, data = verdict(genstamp, fresh)
    assert code == 1 and "unbound-evidence" in rules(data)
    assert any("audit format" in f["message"] for f in data["failures"])


@pytest.mark.parametrize(
    ("edit", "what"),
    [
        (lambda s: s.replace('"key": "', '"key": "zz'), "key"),
        (lambda s: s.replace('"key": "', '"key": "", "x": "'), "key"),
    ],
    ids=["key-not-hex", "key-empty"],
)
def test_a_stamp_with_a_bad_key_is_no_stamp_not_a_traceback(
    fresh: Path, genstamp: RunGenstamp, edit: Any, what: str
) -> None:
    stamp_file = open_checkout(fresh).state / "generation.json"
    stamp_file.write_text(edit(stamp_file.read_text()))
    code, data = verdict(genstamp, fresh)
    assert code == 1 and rules(data)[0] == "no-stamp"
    assert what in data["failures"][0]["message"]


def test_a_seal_with_non_ascii_text_is_refused_not_a_traceback(
    fresh: Path, genstamp: RunGenstamp
) -> None:
    path = evidence.default_path(open_checkout(fresh).state)
    seal = evidence.read_report(path).properties[evidence.P_SEAL]
    path.write_text(path.read_text().replace(seal, "é" + seal[1:]))
    code, data = verdict(genstamp, fresh)
    assert code == 1 and rules(data) == ["unbound-evidence"]


@pytest.mark.parametrize(
    "command",
    [["stamp"], ["scrub"], ["check-bytecode"], ["hook", "post-checkout", "a", "b", "1"]],
    ids=["stamp", "scrub", "check-bytecode", "post-checkout"],
)
def test_a_damaged_index_is_one_line(project: Path, command: list[str]) -> None:
    index = project / ".git" / "index"
    index.write_bytes(b"DIRC" + b"\xff" * 64)
    proc = run_genstamp(project, *command)
    assert "Traceback" not in proc.stderr
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    if command[0] == "hook":
        assert proc.returncode == 0 or lines[-1].startswith("genstamp: ")
    else:
        assert proc.returncode == 2, proc.stderr
        assert len(lines) == 1 and lines[0].startswith("genstamp: "), proc.stderr


def test_an_unchecked_hash_pyc_of_other_source_is_flagged(tmp_path: Path) -> None:
    """CPython runs an unchecked hash-based pyc without looking at the source."""
    root = tmp_path / "root"
    (root / "pkg").mkdir(parents=True)
    source = root / "pkg" / "mod.py"
    source.write_text("X = 1\n")
    cached = tmp_path / "mod.pyc"
    py_compile.compile(
        str(source),
        cfile=str(cached),
        invalidation_mode=py_compile.PycInvalidationMode.UNCHECKED_HASH,
    )
    assert audit._stale_cache(str(source), str(cached), str(root), None) is None
    source.write_text("X = 2\n")
    assert "unchecked" in str(audit._stale_cache(str(source), str(cached), str(root), None))
    # a checked one CPython validates itself: it would have recompiled
    py_compile.compile(
        str(source),
        cfile=str(cached),
        invalidation_mode=py_compile.PycInvalidationMode.CHECKED_HASH,
    )
    source.write_text("X = 3\n")
    assert audit._stale_cache(str(source), str(cached), str(root), None) is None


def test_scrub_keeps_bytecode_a_submodule_tracks(
    project: Path, genstamp: RunGenstamp, tmp_path: Path
) -> None:
    lib = init_repo(tmp_path / "lib")
    (lib / "fixture.pyc").write_bytes(b"the submodule's committed fixture")
    (lib / "mod.py").write_text("")
    commit_all(lib, "lib")
    git(project, "-c", "protocol.file.allow=always", "submodule", "add", "-q", str(lib), "lib")
    commit_all(project, "submodule")
    (project / "lib" / "stray.pyc").write_bytes(b"untracked")
    for command in (["scrub"], ["stamp"]):
        code, _, err = genstamp("-C", project, *command)
        assert code == 0, err
        assert (project / "lib" / "fixture.pyc").read_bytes().startswith(b"the submodule")
        assert not (project / "lib" / "stray.pyc").exists()
    assert git(project / "lib", "status", "--porcelain") == ""
