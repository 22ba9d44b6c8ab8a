"""Issue 16: the post-* hooks cost what git changed. What git tells each hook (``changed``),
the bytecode that can belong to a changed path (``scrub.bytecode_of``/``scrub_files``), the
claim a hook leaves and the reader settles (``generation.claimed``/``settled``, stamp v3),
and the light hook process, through real git."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from importlib.util import MAGIC_NUMBER as MAGIC
from pathlib import Path
from typing import Any

import pytest
from conftest import commit_all, git, git_tree, subprocess_env

from genstamp import changed, generation, restamp, scrub
from genstamp.errors import GenstampError
from genstamp.repo import open_checkout

HOOKS = Path(__file__).resolve().parent.parent / "hooks"
TAG = sys.implementation.cache_tag
A, B = "a" * 40, "b" * 40


# -- what git tells each hook -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("trigger", "args", "env", "pairs", "unknown"),
    [
        ("post-checkout", (A, B, "1"), {}, ((A, B),), ""),
        ("post-checkout", (A, A, "1"), {}, ((A, A),), ""),  # checkout -b: nothing written
        ("post-checkout", (A, A, "0"), {}, (), "a file checkout"),
        ("post-checkout", ("0" * 40, B, "1"), {}, (), "no previous HEAD"),
        ("post-checkout", (A, "0" * 40, "1"), {}, (), "no new HEAD"),  # switch --orphan
        (
            "post-checkout",
            (),
            {"PRE_COMMIT_FROM_REF": A, "PRE_COMMIT_TO_REF": B, "PRE_COMMIT_CHECKOUT_TYPE": "1"},
            ((A, B),),
            "",
        ),
        ("post-checkout", (), {"PRE_COMMIT_CHECKOUT_TYPE": "1"}, (), "no previous HEAD"),
        ("post-merge", ("1",), {}, (), "squash"),
        ("post-merge", (), {"PRE_COMMIT_IS_SQUASH_MERGE": "1"}, (), "squash"),
        ("post-merge", ("0",), {}, (), "reflog"),  # no reflog in this git dir
        ("post-rewrite", ("amend",), {}, (), ""),  # an amend writes no file
        ("post-rewrite", (), {"PRE_COMMIT_REWRITE_COMMAND": "amend"}, (), ""),
        ("post-rewrite", ("rebase",), {}, (), "reflog"),
        ("post-rewrite", ("other",), {}, (), "rewrote by"),
    ],
)
def test_what_each_hook_is_told(
    tmp_path: Path,
    trigger: str,
    args: tuple[str, ...],
    env: dict[str, str],
    pairs: tuple[tuple[str, str], ...],
    unknown: str,
) -> None:
    op = changed.operation(trigger, args, env, tmp_path)
    assert op.pairs == pairs
    assert unknown in op.unknown and bool(op.unknown) == bool(unknown)


def test_a_merge_is_read_from_the_reflog_and_a_stale_orig_head_is_not_trusted(
    repo: Path,
) -> None:
    (repo / "a.py").write_text("A = 1\n")
    base = commit_all(repo, "base")
    git(repo, "checkout", "-q", "-b", "topic")
    (repo / "a.py").write_text("A = 2\n")
    topic = commit_all(repo, "topic")
    git(repo, "checkout", "-q", "main")
    git(repo, "merge", "-q", "topic")
    gitdir = repo / ".git"
    op = changed.operation("post-merge", ("0",), {}, gitdir)
    assert op.pairs == ((base, topic),) and not op.unknown
    assert changed.changed_paths(repo, op) == ["a.py"]
    (gitdir / "ORIG_HEAD").write_text(topic + "\n")  # not where the merge began
    assert "ORIG_HEAD" in changed.operation("post-merge", ("0",), {}, gitdir).unknown


def test_a_rebase_names_every_path_its_commits_wrote(repo: Path) -> None:
    (repo / "a.py").write_text("A = 1\n")
    (repo / "b.py").write_text("B = 1\n")
    commit_all(repo, "base")
    git(repo, "checkout", "-q", "-b", "topic")
    (repo / "b.py").write_text("B = 2\n")
    commit_all(repo, "b changed")
    (repo / "b.py").write_text("B = 1\n")
    commit_all(repo, "b changed back")  # the rebase writes b.py twice, ending as it began
    git(repo, "checkout", "-q", "main")
    (repo / "a.py").write_text("A = 2\n")
    commit_all(repo, "main moves")
    git(repo, "checkout", "-q", "topic")
    git(repo, "rebase", "-q", "main")
    op = changed.operation("post-rewrite", ("rebase",), {}, repo / ".git")
    assert not op.unknown
    assert changed.changed_paths(repo, op) == ["a.py", "b.py"]


def test_a_submodule_commit_change_is_not_known(repo: Path, tmp_path: Path) -> None:
    inner = tmp_path / "inner"
    git(tmp_path, "-c", "init.defaultBranch=main", "init", "-q", str(inner))
    first = commit_all(inner, "one")
    second = commit_all(inner, "two")
    (repo / "a.py").write_text("A = 1\n")
    git(repo, "add", "a.py")
    git(repo, "update-index", "--add", "--cacheinfo", f"160000,{first},sub")
    git(repo, "commit", "-qm", "one")
    old = git(repo, "rev-parse", "HEAD")
    git(repo, "update-index", "--cacheinfo", f"160000,{second},sub")
    git(repo, "commit", "-qm", "two")
    op = changed.Operation("post-checkout", ((old, git(repo, "rev-parse", "HEAD")),), None, "")
    assert changed.changed_paths(repo, op) is None


# -- the bytecode of a changed path ----------------------------------------------------------


def touch(path: Path, data: bytes = b"bytecode") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return path


def test_bytecode_of_a_path_is_every_kind_and_nothing_else(tmp_path: Path) -> None:
    cache = tmp_path / "pkg" / "__pycache__"
    mine = [
        touch(cache / f"m.{TAG}.pyc"),
        touch(cache / f"m.{TAG}.opt-1.pyc"),
        touch(cache / f"m.{TAG}.opt-2.pyc"),
        touch(cache / "m.cpython-39.pyc"),  # another interpreter's
        touch(cache / f"m.{TAG}.pyc.4711"),  # a killed compile's temporary
        touch(tmp_path / "pkg" / "m.pyc", MAGIC),  # legacy, beside the source
        touch(tmp_path / "pkg" / "m.pyo", MAGIC),
    ]
    others = [
        touch(cache / f"mx.{TAG}.pyc"),  # another module
        touch(cache / "m.notes.txt"),  # not bytecode
        touch(tmp_path / "pkg" / "mx.pyc", MAGIC),
        touch(tmp_path / "data" / "m.pyc", b"a data file named like bytecode\n"),
        touch(tmp_path / "other" / "__pycache__" / f"m.{TAG}.pyc"),  # another folder
    ]
    found = scrub.bytecode_of(tmp_path, ["pkg/m.py", "data/m.py"])
    assert sorted(found) == sorted(map(str, mine))
    result = scrub.scrub_files(tmp_path, found)
    assert result.files == len(mine) and result.clean
    assert all(p.exists() for p in others) and not any(p.exists() for p in mine)
    assert cache.is_dir()  # not empty: kept


def test_a_folder_left_with_only_bytecode_goes_with_it(tmp_path: Path) -> None:
    """git deleted pkg/sub/__init__.py and pkg/sub/n.py: CPython would import what is left of
    pkg/sub as a namespace package."""
    touch(tmp_path / "pkg" / "sub" / "__pycache__" / f"__init__.{TAG}.pyc")
    touch(tmp_path / "pkg" / "sub" / "__pycache__" / f"n.{TAG}.pyc")
    touch(tmp_path / "pkg" / "keep.py", b"K = 1\n")
    found = scrub.bytecode_of(tmp_path, ["pkg/sub/__init__.py", "pkg/sub/n.py"])
    result = scrub.scrub_files(tmp_path, found)
    assert not (tmp_path / "pkg" / "sub").exists()
    assert (tmp_path / "pkg" / "keep.py").is_file()  # pkg holds a source: kept
    assert result.folders == 2 and result.files == 2


@pytest.mark.parametrize("other", [None, "notes.txt", "data.pyc"])
def test_a_folder_git_emptied_loses_the_bytecode_of_modules_deleted_before(
    tmp_path: Path, other: str | None
) -> None:
    """git deleted pkg/sub/__init__.py: the bytecode of modules an earlier commit deleted (a
    commit runs no hook) is left there too, below it and beside (legacy), and would keep
    pkg/sub importable as a namespace package. A folder that holds anything but bytecode (a
    file of the user's, one named like bytecode that is none) keeps all but the changed
    path's bytecode."""
    sub = tmp_path / "pkg" / "sub"
    changed = touch(sub / "__pycache__" / f"__init__.{TAG}.pyc")
    orphans = [
        touch(sub / "__pycache__" / f"old.{TAG}.pyc"),
        touch(sub / "deeper" / "__pycache__" / f"x.{TAG}.pyc"),
        touch(sub / "legacy.pyc", MAGIC),
    ]
    touch(tmp_path / "pkg" / "keep.py", b"K = 1\n")
    if other is not None:
        touch(sub / other, b"the user's\n")
    found = scrub.bytecode_of(tmp_path, ["pkg/sub/__init__.py"])
    scrub.scrub_files(tmp_path, found)
    assert not changed.exists()
    if other is None:
        assert not sub.exists()
    else:
        assert all(p.exists() for p in orphans) and (sub / other).exists()
    assert (tmp_path / "pkg" / "keep.py").is_file()


def test_a_link_to_a_changed_module_loses_its_bytecode_too(tmp_path: Path) -> None:
    """``pkg/alias.py -> impl.py``: CPython dates alias's bytecode by impl.py, so git changing
    impl.py makes it stale as well (the full scrub takes it; the hook's must)."""
    pkg = tmp_path / "pkg"
    touch(pkg / "impl.py", b"V = 1\n")
    (pkg / "alias.py").symlink_to("impl.py")
    (pkg / "elsewhere.py").symlink_to("../lib/impl.py")  # another folder's: not this one
    mine = [
        touch(pkg / "__pycache__" / f"impl.{TAG}.pyc"),
        touch(pkg / "__pycache__" / f"alias.{TAG}.pyc"),
    ]
    other = touch(pkg / "__pycache__" / f"elsewhere.{TAG}.pyc")
    found = scrub.bytecode_of(tmp_path, ["pkg/impl.py"])
    assert sorted(found) == sorted(map(str, mine))
    scrub.scrub_files(tmp_path, found)
    assert other.exists() and not any(p.exists() for p in mine)


def test_bytecode_under_the_pycache_prefix_goes_too(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With PYTHONPYCACHEPREFIX, CPython keeps pkg/m.py's bytecode at
    ``<prefix>/<the folder's absolute path>/m.<tag>.pyc``: the hook's scrub looks there as the
    full scrub does."""
    work, prefix = tmp_path / "work", tmp_path / "prefix"
    touch(work / "pkg" / "m.py", b"V = 1\n")
    mirror = prefix / str(work.resolve()).lstrip("/") / "pkg"
    mine = touch(mirror / f"m.{TAG}.pyc")
    other = touch(mirror / f"n.{TAG}.pyc")
    monkeypatch.setattr(sys, "pycache_prefix", str(prefix))
    found = scrub.bytecode_of(work, ["pkg/m.py"])
    assert found == [str(mine)]
    scrub.scrub_files(work, found)
    assert not mine.exists() and other.exists()


def test_tracked_bytecode_and_virtual_environments_are_kept(tmp_path: Path) -> None:
    tracked = touch(tmp_path / "fixtures" / "m.pyc", MAGIC)
    venv = tmp_path / "venv"
    touch(venv / "pyvenv.cfg", b"home = /usr\n")
    in_venv = touch(venv / "lib" / "__pycache__" / f"m.{TAG}.pyc")
    found = scrub.bytecode_of(tmp_path, ["fixtures/m.py", "venv/lib/m.py"])
    assert sorted(found) == sorted([str(tracked), str(in_venv)])
    scrub.scrub_files(tmp_path, found, tracked={"fixtures/m.pyc"})
    assert tracked.exists() and in_venv.exists()
    scrub.scrub_files(tmp_path, found, venvs=True, tracked={"fixtures/m.pyc"})
    assert tracked.exists() and not in_venv.exists()


# -- the claim (stamp version 3) ---------------------------------------------------------------


def a_generation(tree: str = "1" * 40) -> generation.Generation:
    return generation.Generation(
        id="0" * 32,
        tree=tree,
        head=None,
        created="2026-01-01T00:00:00.000000Z",
        created_ns=1,
        trigger="manual",
        scrub=None,
        key="0" * 64,
        writer="0",
    )


def claim(gen: generation.Generation, changed_: bool, rebase: str = "") -> generation.Generation:
    return generation.claimed(
        gen,
        trigger="post-checkout",
        changed=changed_,
        head=None,
        scrub=None,
        now_ns=2_000_000_000,
        rebase=rebase,
    )


T, U, V = "1" * 40, "2" * 40, "3" * 40


@pytest.mark.parametrize("changed_", [None, True])
def test_one_claim_keeps_on_the_generations_tree_or_the_tested_one(changed_: bool | None) -> None:
    """A command that changed files (or one an older genstamp's hook claimed, whose claim does
    not say): kept where the work tree is the generation's or the tested one."""
    gen = claim(a_generation(T), True)
    if changed_ is None:
        assert gen.pending is not None
        gen = gen._replace(pending={k: v for k, v in gen.pending.items() if k != "changed"})
    assert generation.settled(gen, T, None, None).id == gen.id
    assert generation.settled(gen, U, U, None).id == gen.id
    began = generation.settled(gen, U, V, A)
    assert began.id != gen.id and began.tree == U and began.head == A
    assert began.created_ns == gen.created_ns  # bytecode since the last full scrub stays vouched
    assert began.pending is None and began.history[-1]["action"] == "began"


@pytest.mark.parametrize("changed_", [False, True])
def test_how_a_generation_ended_is_kept_with_it(changed_: bool) -> None:
    """A claim of a command that changed no file (`git checkout -b`) settled on a work tree the
    generation did not begin with (edits made before it): the next generation begins, and the
    one it ends is recorded as ended with no change by git (a run then in progress tested
    what the work tree held all along: ``facts.vouching``)."""
    gen = claim(a_generation(T), changed_)
    began = generation.settled(gen, U, None, None)
    assert began.id != gen.id and began.retired[-1]["id"] == gen.id
    assert began.retired[-1]["changed"] is changed_


@pytest.mark.parametrize("paths", [0, 3, None])
def test_a_claim_of_an_earlier_genstamp_says_what_changed_by_its_paths(paths: int | None) -> None:
    """A format 3 claim (pre-commit's older hooks beside this genstamp) has no ``changed``: the
    paths its hook counted say it (none: git changed no file; not counted: it did). Read as
    changed, a `git checkout -b` beside a run of an edit ended the run's generation."""
    gen = claim(a_generation(T), True)
    assert gen.pending is not None
    old = {k: v for k, v in gen.pending.items() if k != "changed"}
    old["notes"] = [{k: v for k, v in n.items() if k != "changed"} for n in old["notes"]]
    old["next"] = {**old["next"], "scrub": None if paths is None else {"paths": paths}}
    assert generation.changed_files(old) is (paths != 0)
    began = generation.settled(gen._replace(pending=old), U, None, None)
    assert began.retired[-1]["changed"] is (paths != 0)


def test_a_stamp_is_written_in_the_first_format_its_readers_know(tmp_path: Path) -> None:
    """A claim's or a retired entry's word on changed files is format 4: a reader of 3 would
    settle the claim, or keep the entry, without it (and so vouch for a run it should not). A
    stamp without them stays 3."""
    path = tmp_path / "generation.json"
    gen = a_generation(T)
    generation.write_at(path, gen)
    assert json.loads(path.read_text())["version"] == 3
    claimed = claim(gen, False)
    generation.write_at(path, claimed)
    assert json.loads(path.read_text())["version"] == 4
    read = generation.read_at(path)[0]
    assert read is not None and read.pending == claimed.pending  # read back whole
    began = generation.settled(claim(gen, True), U, None, None)
    generation.write_at(path, began)
    assert json.loads(path.read_text())["version"] == 4


def test_claims_compose() -> None:
    gen = a_generation(T)
    unchanged = claim(claim(gen, False), False)  # checkout -b twice: the work tree is the same
    assert generation.settled(unchanged, T, None, None).id == gen.id
    assert len(generation.settled(unchanged, T, None, None).history) == 2
    both = claim(claim(gen, True), True)  # the work tree the first would have measured is gone
    assert generation.settled(both, T, T, None).id != gen.id
    after = claim(claim(gen, True), False)  # a change, then nothing: the change's outcome
    assert generation.settled(after, T, None, None).id == gen.id


def test_a_rebase_is_decided_on_its_result() -> None:
    gen = a_generation(T)
    step = claim(gen, True, rebase="step")
    end = claim(step, True, rebase="end")
    assert end.pending is not None and end.pending["may_keep"]
    assert generation.settled(end, T, None, None).id == gen.id
    # a rebase that never ends leaves its checkout's claim standing
    assert generation.settled(step, U, None, None).id != gen.id


def stamp_file(path: Path) -> Path:
    return path / ".git" / "genstamp" / "generation.json"


def test_a_version_2_stamp_is_read_as_one_without_a_claim(project: Path) -> None:
    gen, _ = restamp.begin(open_checkout(project))
    data = json.loads(stamp_file(project).read_text())
    assert data["version"] == 3 and data["pending"] is None
    del data["pending"]
    data["version"] = 2
    stamp_file(project).write_text(json.dumps(data))
    assert generation.current(open_checkout(project)) == gen


def test_a_malformed_claim_is_refused(project: Path) -> None:
    restamp.begin(open_checkout(project))
    data = json.loads(stamp_file(project).read_text())
    data["pending"] = {"next": {"id": "x"}, "may_keep": True, "notes": []}
    stamp_file(project).write_text(json.dumps(data))
    with pytest.raises(GenstampError, match="malformed claim"):
        generation.current(open_checkout(project))


# -- the hook, through real git ---------------------------------------------------------------


def stamp(work: Path) -> dict[str, Any]:
    return json.loads(stamp_file(work).read_text())  # type: ignore[no-any-return]


@pytest.fixture
def branches(repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """main and ``other``, which renames, edits, deletes a package and adds one; bytecode for
    everything on main; genstamp's plain hooks; a stamp."""
    wrapper = tmp_path / "genstamp"
    wrapper.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m genstamp "$@"\n')
    wrapper.chmod(0o755)
    monkeypatch.setenv("GENSTAMP", str(wrapper))
    files = {
        "same.py": "S = 1\n",
        "edit.py": "E = 1\n",
        "old.py": "O = 1\n",
        "gone/__init__.py": "",
    }
    for rel, text in files.items():
        touch(repo / rel, text.encode())
    (repo / ".gitignore").write_text("__pycache__/\n")
    commit_all(repo, "main")
    git(repo, "checkout", "-q", "-b", "other")
    git(repo, "mv", "old.py", "new.py")
    git(repo, "rm", "-q", "-r", "gone")
    (repo / "edit.py").write_text("E = 2\n")
    touch(repo / "added" / "__init__.py", b"")
    commit_all(repo, "other")
    git(repo, "checkout", "-q", "main")
    git(repo, "config", "core.hooksPath", str(HOOKS))
    assert subprocess.run([str(wrapper), "stamp"], cwd=repo, capture_output=True).returncode == 0
    for rel in ("same.py", "edit.py", "old.py", "gone/__init__.py"):
        stem = Path(rel)
        touch(repo / stem.parent / "__pycache__" / f"{stem.stem}.{TAG}.pyc")
    touch(repo / "added" / "__pycache__" / f"__init__.{TAG}.pyc")  # from before: no source yet
    return repo


def test_a_branch_switch_scrubs_what_git_wrote_and_nothing_else(branches: Path) -> None:
    kept = branches / "__pycache__" / f"same.{TAG}.pyc"
    before = kept.stat().st_mtime_ns
    proc = subprocess.run(
        ["git", "checkout", "-q", "other"], cwd=branches, capture_output=True, text=True
    )
    assert proc.returncode == 0, proc.stderr
    lines = [line for line in proc.stderr.splitlines() if line.startswith("genstamp:")]
    assert len(lines) == 1 and "5 paths changed" in lines[0], proc.stderr
    assert kept.stat().st_mtime_ns == before  # same.py was not written: its bytecode stays
    left = sorted(p.name for p in (branches / "__pycache__").iterdir())
    assert left == [f"same.{TAG}.pyc"]  # edit.py's and old.py's (renamed away) are gone
    assert not (branches / "gone").exists()  # its bytecode only: gone with it
    assert not (branches / "added" / "__pycache__").exists()
    raw = stamp(branches)
    # a claim that says whether its command changed files: format 4 (a reader of 3 would
    # settle it without that)
    assert raw["version"] == 4 and raw["pending"]["may_keep"] is True
    assert raw["pending"]["next"]["scrub"]["paths"] == 5
    gen = generation.current(open_checkout(branches))
    assert gen is not None and gen.id == raw["pending"]["next"]["id"]
    assert gen.tree == git_tree(branches) and stamp(branches)["pending"] is None


def test_a_switch_to_an_orphan_branch_scrubs_the_whole_tree(branches: Path) -> None:
    """`git switch --orphan` removes every tracked file, and git names no new HEAD: the hook
    scrubs as after an unknown change, and no folder is left holding only bytecode."""
    proc = subprocess.run(
        ["git", "switch", "-q", "--orphan", "fresh"], cwd=branches, capture_output=True, text=True
    )
    assert proc.returncode == 0, proc.stderr
    assert "git changed no file" not in proc.stderr, proc.stderr
    assert not (branches / "gone").exists(), proc.stderr
    assert not list(branches.rglob("*.pyc")), proc.stderr


def test_the_full_hook_scrubs_bytecode_the_project_does_not_ignore(repo: Path) -> None:
    """No ``__pycache__/`` in any ignore file: the bytecode is untracked, and the identity the
    hook takes first counts it in the work tree's tree; git does not track it, so the scrub
    that follows removes it."""
    touch(repo / "pkg" / "mod.py", b"X = 1\n")
    commit_all(repo, "pkg")
    restamp.begin(open_checkout(repo))
    touch(repo / "pkg" / "__pycache__" / f"mod.{TAG}.pyc")
    after = restamp.after_hook(open_checkout(repo), "post-checkout")
    assert not (repo / "pkg" / "__pycache__").exists()
    assert after.scrub.files == 1


@pytest.mark.parametrize("reader", ["verify", "status"])
def test_the_reader_settles_a_claim_with_its_own_walk(
    branches: Path, reader: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """verify and status walk the work tree anyway: that walk settles the hook's claim, with
    no second walk for the stamp."""
    from genstamp import cli, restamp

    git(branches, "checkout", "-q", "other")
    assert stamp(branches)["pending"] is not None

    def second_walk(*args: object, **kwargs: object) -> str:
        raise AssertionError("the claim was settled by a walk of its own")

    monkeypatch.setattr(restamp, "tree_identity", second_walk)
    monkeypatch.chdir(branches)
    cli.main([reader, "--json"])
    settled = stamp(branches)
    assert settled["pending"] is None and settled["tree"] == git_tree(branches)
    assert json.loads(capsys.readouterr().out)  # the reader said what it found


@pytest.mark.parametrize("when", ["after", "before"])
def test_an_edit_after_a_checkout_that_changed_nothing_keeps_the_generation(
    branches: Path, when: str
) -> None:
    """`git checkout -b fix` changes no file: the full rule, on the work tree the hook found,
    keeps the generation. An edit made after the hook, before the first reader, is no part of
    what the hook found (the file's change time is past the hook's): kept, as the full rule
    keeps. The same edit made before the checkout is part of it: the full rule begins anew."""
    gen = generation.current(open_checkout(branches))
    assert gen is not None
    if when == "before":
        (branches / "edit.py").write_text("E = 9\n")
    git(branches, "checkout", "-q", "-b", "fix")
    assert stamp(branches)["pending"]["may_keep"] is True
    if when == "after":
        time.sleep(0.05)  # past the file clock's tick of the hook
        (branches / "edit.py").write_text("E = 9\n")
    after = generation.current(open_checkout(branches))
    assert after is not None and stamp(branches)["pending"] is None
    assert (after.id == gen.id) == (when == "after"), after.history[-1]
    if when == "before":
        assert after.tree == git_tree(branches)


def test_a_file_a_checkout_wrote_and_an_edit_rewrote_since_begins_anew(branches: Path) -> None:
    """A branch switch writes edit.py; an edit (`git am` of a patch) rewrites it before the
    first reader. Its change time is past the hook's, but git wrote it too: the work tree the
    hook found was not the generation's, and a new generation begins (h214: kept, "the work
    tree is as the generation began", on a tree the generation never held)."""
    git(branches, "checkout", "-q", "-b", "tweak")
    (branches / "edit.py").write_text("E = 5\n")
    commit_all(branches, "tweak")
    git(branches, "checkout", "-q", "main")
    gen = generation.current(open_checkout(branches))
    assert gen is not None
    git(branches, "checkout", "-q", "tweak")
    assert stamp(branches)["pending"]["may_keep"] is True
    time.sleep(0.05)  # past the file clock's tick of the hook
    (branches / "edit.py").write_text("E = 7\n")
    after = generation.current(open_checkout(branches))
    assert after is not None and after.id != gen.id, after.history[-1]
    assert after.tree == git_tree(branches)


def test_merges_and_rebases_take_the_light_path(branches: Path) -> None:
    """No full walk: the stamp records the claim with the number of paths git wrote."""
    git(branches, "merge", "-q", "other")  # fast-forward
    assert stamp(branches)["pending"]["next"]["scrub"]["paths"] == 5
    generation.current(open_checkout(branches))
    git(branches, "checkout", "-q", "-b", "side", "HEAD~1")
    (branches / "side.py").write_text("X = 1\n")
    commit_all(branches, "side")
    generation.current(open_checkout(branches))
    git(branches, "merge", "-q", "--no-edit", "other")  # a real merge
    assert stamp(branches)["pending"]["next"]["trigger"] == "post-merge"
    generation.current(open_checkout(branches))
    git(branches, "checkout", "-q", "-b", "re", "side")
    git(branches, "rebase", "-q", "main")
    pending = stamp(branches)["pending"]
    assert pending["next"]["trigger"] == "post-rewrite" and "before_rebase" not in pending


def test_the_hook_process_imports_no_pygit2(branches: Path) -> None:
    old, new = git(branches, "rev-parse", "main"), git(branches, "rev-parse", "other")
    git(branches, "-c", "core.hooksPath=/dev/null", "checkout", "-q", "other")
    env = subprocess_env(PYTHONPROFILEIMPORTTIME="1")
    for argv, extra in [
        (["hook", "post-checkout", old, new, "1"], {}),
        (
            ["hook", "restamp"],
            {"PRE_COMMIT_FROM_REF": new, "PRE_COMMIT_TO_REF": new, "PRE_COMMIT_CHECKOUT_TYPE": "1"},
        ),
    ]:
        proc = subprocess.run(
            [sys.executable, "-m", "genstamp", *argv],
            cwd=branches,
            capture_output=True,
            text=True,
            env={**env, **extra},
        )
        assert proc.returncode == 0
        imported = [
            line.rsplit("|", 1)[-1].strip() for line in proc.stderr.splitlines() if "|" in line
        ]
        assert "genstamp.posthook" in imported
        assert not [
            m for m in imported if m.startswith(("pygit2", "genstamp.cli", "genstamp.identity"))
        ]
        assert "Traceback" not in proc.stderr


def test_a_hook_without_a_readable_stamp_does_the_full_work(branches: Path) -> None:
    stamp_file(branches).write_text("{")
    proc = subprocess.run(
        ["git", "checkout", "-q", "other"], cwd=branches, capture_output=True, text=True
    )
    assert proc.returncode == 0 and "new generation" in proc.stderr, proc.stderr
    assert stamp(branches)["pending"] is None and stamp(branches)["tree"] == git_tree(branches)
    assert not any(branches.rglob("*.pyc"))  # the full scrub


def test_bytecode_git_tracks_stays_through_a_switch(repo: Path, tmp_path: Path) -> None:
    """A committed fixture ``m.pyc`` beside a ``m.py`` git rewrote is git's, not the scrub's."""
    touch(repo / "fixtures" / "m.py", b"M = 1\n")
    touch(repo / "fixtures" / "m.pyc", b"a committed fixture")
    commit_all(repo, "main")
    git(repo, "checkout", "-q", "-b", "other")
    (repo / "fixtures" / "m.py").write_text("M = 2\n")
    commit_all(repo, "other")
    git(repo, "checkout", "-q", "main")
    restamp.begin(open_checkout(repo))
    stray = touch(repo / "fixtures" / "__pycache__" / f"m.{TAG}.pyc")
    old, new = git(repo, "rev-parse", "main"), git(repo, "rev-parse", "other")
    git(repo, "-c", "core.hooksPath=/dev/null", "checkout", "-q", "other")
    proc = subprocess.run(
        [sys.executable, "-m", "genstamp", "hook", "post-checkout", old, new, "1"],
        cwd=repo,
        capture_output=True,
        text=True,
        env=subprocess_env(),
    )
    assert proc.returncode == 0 and "removed 1 folders, 1 files" in proc.stderr, proc.stderr
    assert (repo / "fixtures" / "m.pyc").is_file() and not stray.exists()


def test_a_rebase_that_ends_where_it_began_keeps(branches: Path) -> None:
    """``rebase --force-rebase HEAD~1`` checks out HEAD~1 (a content change, with its own
    post-checkout), then replays the last commit: the tree ends as it began, so the generation
    is kept, as the full rule keeps it; the checkout in between is decided with the result."""
    git(branches, "checkout", "-q", "other")
    gen = generation.current(open_checkout(branches))
    assert gen is not None
    proc = subprocess.run(  # another committer date: the replayed commit is a new one
        ["git", "rebase", "-q", "--force-rebase", "HEAD~1"],
        cwd=branches,
        capture_output=True,
        text=True,
        env={**os.environ, "GIT_COMMITTER_DATE": "2030-01-01T00:00:00+00:00"},
    )
    assert proc.returncode == 0, proc.stderr
    assert len([line for line in proc.stderr.splitlines() if line.startswith("genstamp:")]) == 2
    after = generation.current(open_checkout(branches))
    assert after is not None and after.id == gen.id
    assert [h["trigger"] for h in after.history[-2:]] == ["post-checkout", "post-rewrite"]
    assert after.history[-1]["action"] == "kept"
    assert proc.stderr.count(" changed; ") == 2  # both hooks took the light path


def test_a_rebase_with_exec_that_ends_where_it_began_scrubs_what_its_commits_wrote(
    branches: Path,
) -> None:
    """``rebase -i --exec CMD main`` of a branch already on main keeps every commit: the
    branch ends where it began. Its sequencer checked out main all the same and came back
    through the branch's commits, and the exec ran at each: bytecode it wrote of a commit on
    the way (``edit.py`` at ``step``) is not the branch's code, and is removed; the generation
    is kept (the tree is as it was)."""
    git(branches, "checkout", "-q", "-b", "steps", "main")
    (branches / "edit.py").write_text("E = 3\n")
    commit_all(branches, "step")
    (branches / "edit.py").write_text("E = 4\n")
    commit_all(branches, "last")
    gen = restamp.begin(open_checkout(branches), do_scrub=False).generation  # of last's tree
    exec_import = f"{sys.executable} -c 'import edit'"
    env = {**os.environ, "GIT_SEQUENCE_EDITOR": "true", "PYTHONPATH": str(branches)}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    proc = subprocess.run(
        ["git", "rebase", "-q", "-i", "--exec", exec_import, "main"],
        cwd=branches,
        capture_output=True,
        text=True,
        env=env,
    )
    assert proc.returncode == 0, proc.stderr
    assert git(branches, "rev-parse", "HEAD") == git(branches, "rev-parse", "ORIG_HEAD")
    op = changed.operation("post-rewrite", ("rebase",), {}, branches / ".git")
    assert not op.unknown and changed.changed_paths(branches, op) == ["edit.py"]
    assert not list((branches / "__pycache__").glob("edit.*.pyc")), proc.stderr
    after = generation.current(open_checkout(branches))
    assert after is not None and after.id == gen.id and after.history[-1]["action"] == "kept"


@pytest.mark.parametrize("how", ["pull-rebase", "rebase-kept-every-commit"])
def test_a_rebase_by_another_action_or_leaving_the_branch_takes_the_light_path(
    branches: Path, how: str
) -> None:
    """``git pull --rebase`` names its rebase ``pull --rebase …`` in the reflogs, and a
    ``rebase -i`` that keeps every commit as it was leaves the branch where it was (its last
    move is older): both are rebases git says all of, and take the light path, not a full
    scrub and walk."""
    git(branches, "checkout", "-q", "-b", "feat", "main")
    (branches / "feat.py").write_text("F = 1\n")
    commit_all(branches, "feat")
    # a generation of feat's tree (the checkout's claim kept main's: feat.py came after it)
    gen = restamp.begin(open_checkout(branches), do_scrub=False).generation
    if how == "pull-rebase":
        proc = subprocess.run(
            ["git", "pull", "-q", "--rebase", ".", "other"],
            cwd=branches,
            capture_output=True,
            text=True,
        )
    else:
        # reword, the message kept: git makes no new commit, and the branch does not move
        env = {**os.environ, "GIT_SEQUENCE_EDITOR": "sed -i 1s/^pick/reword/", "GIT_EDITOR": "true"}
        proc = subprocess.run(
            ["git", "rebase", "-i", "HEAD~1"], cwd=branches, capture_output=True, text=True, env=env
        )
        assert git(branches, "rev-parse", "HEAD") == git(branches, "rev-parse", "ORIG_HEAD")
    assert proc.returncode == 0, proc.stderr
    pending = stamp(branches)["pending"]
    assert pending is not None and pending["next"]["trigger"] == "post-rewrite", proc.stderr
    after = generation.current(open_checkout(branches))
    assert after is not None and stamp(branches)["tree"] == git_tree(branches)
    if how == "pull-rebase":
        assert after.id != gen.id  # other's changes arrived
    else:
        assert after.id == gen.id and after.history[-1]["action"] == "kept"


def test_a_squashing_rebase_is_decided_on_its_result(branches: Path) -> None:
    """``rebase -i`` squashing two commits amends one as it goes, and git runs post-rewrite
    ``amend`` for it: a step of the rebase, not a claim of its own. Tests of the last commit
    stay fresh when the squash ends on the tree they tested; a squash that ends elsewhere
    begins a new generation."""
    for text in ("E = 3\n", "E = 4\n"):
        (branches / "edit.py").write_text(text)
        commit_all(branches, "edit")
    tested = git_tree(branches)
    gen = generation.current(open_checkout(branches))
    assert gen is not None
    env = {**os.environ, "GIT_SEQUENCE_EDITOR": "sed -i 2s/^pick/squash/", "GIT_EDITOR": "true"}
    proc = subprocess.run(
        ["git", "rebase", "-q", "-i", "HEAD~2"], cwd=branches, capture_output=True, env=env
    )
    assert proc.returncode == 0, proc.stderr
    assert git(branches, "rev-list", "--count", "HEAD") == "2" and git_tree(branches) == tested
    claimed = generation.read_at(generation.stamp_in(str(branches / ".git")))[0]
    assert claimed is not None and claimed.pending is not None
    assert [n["trigger"] for n in claimed.pending["notes"]][-2:] == ["post-rewrite"] * 2
    assert generation.settled(claimed, tested, tested, None).id == gen.id
    assert generation.settled(claimed, tested, None, None).id != gen.id  # not as it began


# -- the hook process's start-up (issue 16, item 2) -----------------------------------------

# What the light path must not load: each costs milliseconds on every checkout (re and enum
# come with json, pathlib and typing; threading and signal with subprocess).
HEAVY = ("re", "enum", "json", "pathlib", "typing", "subprocess", "tempfile", "datetime")
HEAVY += ("threading", "random", "pygit2", "genstamp.cli", "genstamp.identity", "genstamp.repo")


def imported(stderr: str) -> set[str]:
    """The modules ``-X importtime`` reported."""
    return {line.rsplit("|", 1)[-1].strip() for line in stderr.splitlines() if "|" in line}


def console_script(path: Path, marker: Path) -> Path:
    """A console script as pip writes it for ``genstamp.posthook:launch``; running it (rather
    than its entry point) leaves ``marker``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        f"#!{sys.executable}\n# -*- coding: utf-8 -*-\nimport re\nimport sys\n"
        "from genstamp.posthook import launch\nif __name__ == '__main__':\n"
        f"    open({str(marker)!r}, 'w').close()\n"
        "    sys.argv[0] = re.sub(r'(-script\\.pyw|\\.exe)?$', '', sys.argv[0])\n"
        "    sys.exit(launch())\n"
    )
    path.chmod(0o755)
    return path


def test_the_hook_starts_the_entry_point_without_the_console_scripts_imports(
    branches: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The hook script runs the console script's interpreter on ``genstamp.posthook`` itself
    (not the script, whose ``import re`` is a third of the start-up), and that process loads
    none of HEAVY beyond what the interpreter loads for ``pass``."""
    marker = tmp_path / "the script itself ran"
    monkeypatch.setenv("GENSTAMP", str(console_script(tmp_path / "bin" / "genstamp", marker)))
    env = subprocess_env(PYTHONPROFILEIMPORTTIME="1")
    base = subprocess.run([sys.executable, "-c", "pass"], capture_output=True, text=True, env=env)
    proc = subprocess.run(
        ["git", "checkout", "-q", "other"], cwd=branches, capture_output=True, text=True, env=env
    )
    assert proc.returncode == 0 and "genstamp: new generation" in proc.stderr, proc.stderr
    assert not marker.exists()
    assert stamp(branches)["pending"]["next"]["trigger"] == "post-checkout"
    loaded = imported(proc.stderr) - imported(base.stderr)
    assert "genstamp.posthook" in loaded
    assert sorted(loaded & set(HEAVY)) == []


def test_the_hook_runs_no_module_of_the_work_tree_it_runs_in(
    branches: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """git runs a hook from the top of the work tree, and `python -c` puts that folder first
    on sys.path: a checked-out `select.py` (the hook imports select) or `genstamp.py` must not
    run, as it would not under the console script (whose sys.path[0] is its own folder)."""
    ran = tmp_path / "ran"
    monkeypatch.setenv("GENSTAMP", str(console_script(tmp_path / "bin" / "genstamp", ran)))
    for name in ("select", "genstamp", "collections"):
        (branches / f"{name}.py").write_text(
            f"open({str(tmp_path / f'ran-{name}')!r}, 'w').close()\nraise SystemExit(7)\n"
        )
    for target in ("other", "main"):
        proc = subprocess.run(
            ["git", "checkout", "-q", target], cwd=branches, capture_output=True, text=True
        )
        assert proc.returncode == 0 and "genstamp: new generation" in proc.stderr, proc.stderr
    assert sorted(p.name for p in tmp_path.glob("ran-*")) == []
    assert not ran.exists()  # the entry point was started directly, not the script
    assert stamp(branches)["pending"]["next"]["trigger"] == "post-checkout"


def test_a_genstamp_that_is_not_such_a_console_script_is_run_as_it_is(
    branches: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    marker = tmp_path / "the wrapper ran"
    wrapper = tmp_path / "bin" / "genstamp"
    wrapper.parent.mkdir()
    for first in ("#!/bin/sh", f"#!/usr/bin/env {sys.executable}"):
        marker.unlink(missing_ok=True)
        wrapper.write_text(f': > "{marker}"\nexec "{sys.executable}" -m genstamp "$@"\n')
        if first != "#!/bin/sh":  # a python shebang with an argument: not started directly
            console_script(wrapper, marker)
            wrapper.write_text(wrapper.read_text().replace(f"#!{sys.executable}", first, 1))
        else:
            wrapper.write_text(f"{first}\n{wrapper.read_text()}")
        wrapper.chmod(0o755)
        monkeypatch.setenv("GENSTAMP", str(wrapper))
        target = "other" if git(branches, "branch", "--show-current") == "main" else "main"
        proc = subprocess.run(["git", "checkout", "-q", target], cwd=branches, capture_output=True)
        assert proc.returncode == 0 and b"genstamp: new generation" in proc.stderr, proc.stderr
        assert marker.exists(), first


def test_a_child_filling_both_pipes_is_read_to_the_end() -> None:
    """``changed.run`` reads stdout and stderr together: a child that fills one pipe while the
    other is being read would otherwise wait for ever."""
    big = 1 << 20
    code, out, err = changed.run(
        ["sh", "-c", f"head -c {big} /dev/zero >&2; head -c {big} /dev/zero; exit 3"]
    )
    assert (code, len(out), len(err)) == (3, big, big)
    with pytest.raises(GenstampError, match="git frobnicate failed"):
        changed.git(None, "frobnicate")


# -- where the repository is, without git where nothing can move it --------------------------


def git_says(folder: Path) -> changed.Where:
    top, gitdir = git(folder, "rev-parse", "--show-toplevel", "--absolute-git-dir").split("\n")
    return changed.Where(top, gitdir)


def test_the_repository_is_found_as_git_finds_it(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A plain repository, a linked worktree, a separate git dir and a path through a symbolic
    link are read without git, and read as git reads them."""
    touch(repo / "a.py", b"A = 1\n")
    commit_all(repo, "a")
    worktree = tmp_path / "wt"
    git(repo, "worktree", "add", "-q", str(worktree))
    separate = tmp_path / "separate"
    git(tmp_path, "init", "-q", f"--separate-git-dir={tmp_path / 'separate.git'}", str(separate))
    link = tmp_path / "link"
    link.symlink_to(repo)
    for folder in (repo, worktree, separate, link):
        assert changed._plain_gitdir(os.path.realpath(folder)) is not None, folder
        assert changed.locate(folder) == git_says(folder), folder
        monkeypatch.chdir(folder)
        assert changed.locate(None) == git_says(folder), folder
        monkeypatch.undo()


def test_anything_that_could_move_the_repository_is_asked_of_git(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    touch(repo / "a.py", b"A = 1\n")
    commit_all(repo, "a")
    top = os.path.realpath(repo)
    for name in ("GIT_DIR", "GIT_WORK_TREE", "GIT_COMMON_DIR"):
        with monkeypatch.context() as env:
            env.setenv(name, str(repo / ".git"))
            assert changed._plain_gitdir(top) is None, name
    assert changed._plain_gitdir(str(tmp_path)) is None  # no .git here
    git(repo, "config", "include.path", str(tmp_path / "more.gitconfig"))
    assert changed._plain_gitdir(top) is None
    git(repo, "config", "--unset", "include.path")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    git(repo, "config", "core.worktree", str(elsewhere))
    assert changed._plain_gitdir(top) is None
    assert changed.locate(repo) == changed.Where(str(elsewhere.resolve()), str(repo / ".git"))
    git(repo, "config", "--unset", "core.worktree")
    sub = tmp_path / "sub"
    git(tmp_path, "init", "-q", str(sub))
    touch(sub / "s.py", b"S = 1\n")
    commit_all(sub, "s")
    git(repo, "-c", "protocol.file.allow=always", "submodule", "add", "-q", str(sub), "sub")
    inner = repo / "sub"  # its .git names .git/modules/sub, whose config names the work tree
    assert changed._plain_gitdir(os.path.realpath(inner)) is None
    assert changed.locate(inner) == git_says(inner)


def test_the_hooks_git_calls_do_not_read_the_index(repo: Path) -> None:
    """git diff-tree, log and ls-tree read the whole index as they start (a cost that grows
    with the tree); the hook's calls name none, and print the same: shown here with an index
    git cannot read, which fails the same calls made with it."""
    touch(repo / "a.py", b"A = 1\n")
    touch(repo / "__pycache__" / f"a.{TAG}.pyc")
    git(repo, "add", "-f", ".")
    git(repo, "commit", "-q", "-m", "a")
    old = git(repo, "rev-parse", "HEAD")
    touch(repo / "a.py", b"A = 2\n")
    commit_all(repo, "a2")
    new = git(repo, "rev-parse", "HEAD")
    op = changed.Operation("post-rewrite", ((old, new),), (old, new), "")
    pyc = str(repo / "__pycache__" / f"a.{TAG}.pyc")
    expected = changed.change(repo, op)
    assert expected == changed.Change(["a.py"], git(repo, "rev-parse", "HEAD^{tree}"))
    assert changed.tracked(repo, [pyc]) == {f"__pycache__/a.{TAG}.pyc"}
    (repo / ".git" / "index").write_bytes(b"not an index")
    gitdir = str(repo / ".git")
    assert changed.change(repo, op, gitdir) == expected
    assert changed.tracked(repo, [pyc], gitdir) == {f"__pycache__/a.{TAG}.pyc"}
    with pytest.raises(GenstampError):
        changed.change(repo, op)
