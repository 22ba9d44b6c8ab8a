"""Attestations as git notes (refs/notes/genstamp): published from several clones at once,
none lost; judged from the notes in a fresh clone."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from conftest import RunGenstamp, git, subprocess_env
from test_attest import World, payload, rewrite, rules, shared_world, verdict

from genstamp import notes

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="session")
def world(tmp_path_factory: pytest.TempPathFactory) -> World:
    return shared_world(tmp_path_factory)


def remote_copy(world: World, tmp_path: Path) -> Path:
    """An origin of this test's own, holding the world's commit."""
    origin = tmp_path / "origin.git"
    git(tmp_path, "clone", "-q", "--bare", str(world.origin), str(origin))
    return origin


def clone(origin: Path, where: Path) -> Path:
    git(where.parent, "clone", "-q", str(origin), str(where))
    return where


def test_concurrent_publishes_from_three_clones_all_survive(
    world: World, tmp_path: Path, genstamp: RunGenstamp
) -> None:
    origin = remote_copy(world, tmp_path)
    machines = [clone(origin, tmp_path / f"m{i}") for i in (1, 2, 3)]
    procs = [
        subprocess.Popen(
            [sys.executable, "-m", "genstamp", "publish", str(part), "--remote", "origin"],
            cwd=m,
            env=subprocess_env(),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for m, part in zip(machines, world.parts, strict=True)
    ]
    for proc in procs:
        _out, err = proc.communicate(timeout=300)
        assert proc.returncode == 0, err
    judge = clone(origin, tmp_path / "judge")
    git(judge, "fetch", "-q", "origin", f"{notes.REF}:{notes.REF}")
    note = git(judge, "notes", f"--ref={notes.REF}", "show", world.commit)
    assert len(note.split("\n")) == 3  # one line per part, from three machines
    code, data = verdict(genstamp, judge, "--from-notes")
    assert code == 0, data
    assert len(data["parts"]) == 3


@pytest.mark.parametrize(
    "refspec", [f"{notes.REF}:{notes.REF}", "+refs/notes/*:refs/notes/*"], ids=["readme", "all"]
)
def test_publishing_under_a_fetch_refspec_of_the_notes_keeps_every_note(
    world: World, tmp_path: Path, refspec: str
) -> None:
    """Clones that fetch the notes always (the README's `remote.origin.fetch` line, or every
    notes ref, forced): publish's fetch applied that refspec too, so the remote's notes came
    over the ones just added, refused as no fast-forward (publish failed, saying nothing) or
    forced over them (the note was lost, and publish said it pushed)."""
    origin = remote_copy(world, tmp_path)
    machines = [clone(origin, tmp_path / f"m{i}") for i in (1, 2)]
    for m, part in zip(machines, world.parts, strict=False):
        git(m, "config", "--add", "remote.origin.fetch", refspec)
        proc = subprocess.run(
            [sys.executable, "-m", "genstamp", "publish", str(part), "--remote", "origin"],
            cwd=m,
            env=subprocess_env(),
            capture_output=True,
            text=True,
        )
        assert proc.returncode == 0, proc.stderr
    for where in (origin, machines[1]):  # the second machine's note, merged with the first's
        note = git(where, "notes", f"--ref={notes.REF}", "show", world.commit)
        assert len(note.split("\n")) == 2, note


@pytest.mark.parametrize("language", ["", "de"])
def test_a_first_publish_is_one_whatever_language_git_speaks(
    language: str, world: World, tmp_path: Path
) -> None:
    """The remote holds no notes yet: the first publish pushes them, whether git says so in
    English or German (``LANGUAGE=de``, this machine's git has its translation); a remote that
    cannot be read is still refused."""
    origin = remote_copy(world, tmp_path)
    m = clone(origin, tmp_path / "m")
    env = subprocess_env(LANGUAGE=language, LANG="C.UTF-8")
    publish = [sys.executable, "-m", "genstamp", "publish", str(world.parts[0])]
    proc = subprocess.run(
        [*publish, "--remote", "origin"], cwd=m, env=env, capture_output=True, text=True
    )
    assert proc.returncode == 0, proc.stderr
    assert git(origin, "notes", f"--ref={notes.REF}", "list", world.commit)
    git(m, "remote", "add", "gone", str(tmp_path / "gone.git"))
    proc = subprocess.run(
        [*publish, "--remote", "gone"], cwd=m, env=env, capture_output=True, text=True
    )
    assert proc.returncode == 2, proc.stderr
    last = proc.stderr.splitlines()[-1]
    assert last.startswith(f"genstamp: cannot fetch {notes.REF} from gone: "), proc.stderr
    assert "gone.git" in last, proc.stderr  # git's own line, naming what it could not read


def test_publishing_again_adds_nothing_and_two_parts_stay_partial(
    world: World, tmp_path: Path, genstamp: RunGenstamp
) -> None:
    origin = remote_copy(world, tmp_path)
    m = clone(origin, tmp_path / "m")
    for _ in range(2):
        code, _out, err = genstamp(
            "-C", m, "publish", *map(str, world.parts[:2]), "--remote", "origin"
        )
        assert code == 0, err
    note = git(m, "notes", f"--ref={notes.REF}", "show", world.commit)
    assert len(note.split("\n")) == 2
    code, data = verdict(genstamp, m, "--from-notes")
    assert code == 1 and rules(data) == ["attestation-partial"], data
    assert "missing part 3/3" in data["failures"][0]["message"]


def test_a_whole_rerun_stands_for_the_commit_over_a_split_that_never_finished(
    world: World, tmp_path: Path, genstamp: RunGenstamp
) -> None:
    """Part 1/3 published, the other jobs dead, then the whole suite attested and published:
    notes only grow, so the whole run stands for the commit, and the verdict, its line and
    the summary (which ``verify --summary`` checks) name only it (Q01)."""
    origin = remote_copy(world, tmp_path)
    m = clone(origin, tmp_path / "m")
    for published in (world.parts[0], world.full):
        code, _out, err = genstamp("-C", m, "publish", str(published), "--remote", "origin")
        assert code == 0, err
    code, data = verdict(genstamp, m, "--from-notes")
    assert code == 0, data
    assert [a["part"] for a in data["attestations"]] == [None], data
    code, out, err = genstamp("-C", m, "summary", "--from-notes", "--rev", "HEAD")
    assert code == 0, err
    digest = payload(world.full)["subject"][0]["digest"]["sha256"]
    assert digest in out, out
    (tmp_path / "s.md").write_text(out)
    code, data = verdict(genstamp, m, "--from-notes", "--summary", tmp_path / "s.md")
    assert code == 0, data


def test_a_note_fanned_out_is_read() -> None:
    import pygit2

    repo = pygit2.init_repository(str(Path(__import__("tempfile").mkdtemp()) / "r"), bare=True)
    blob = repo.create_blob(b"line\n")
    sha = "ab" * 20
    inner = repo.TreeBuilder()
    inner.insert(sha[2:], blob, pygit2.GIT_FILEMODE_BLOB)
    outer = repo.TreeBuilder()
    outer.insert(sha[:2], inner.write(), pygit2.GIT_FILEMODE_TREE)
    sig = pygit2.Signature("a", "a@example")
    tip = repo.create_commit(None, sig, sig, "notes", outer.write(), [])
    assert notes.read(repo, sha, str(tip)) == "line\n"
    assert notes.read(repo, "cd" * 20, str(tip)) == ""


def test_the_notes_of_a_tree_are_its_commits_notes_in_any_layout(tmp_path: Path) -> None:
    """``of_tree``: the note on the commit first, then the notes on other commits of its tree,
    fanned out or not; a note on a commit of another tree, on no commit, or under a name that
    is no object id (a notes commit anyone may push to a server) is passed over."""
    import pygit2

    repo = pygit2.init_repository(str(tmp_path / "r"), bare=True)
    sig = pygit2.Signature("a", "a@example")
    empty = repo.TreeBuilder().write()
    other = repo.TreeBuilder()
    other.insert("f", repo.create_blob(b"f\n"), pygit2.GIT_FILEMODE_BLOB)
    first = str(repo.create_commit(None, sig, sig, "first", empty, []))
    same = str(repo.create_commit(None, sig, sig, "same tree", empty, [pygit2.Oid(hex=first)]))
    elsewhere = str(repo.create_commit(None, sig, sig, "other", other.write(), []))
    outer = repo.TreeBuilder()
    fanned = repo.TreeBuilder()
    fanned.insert(same[2:], repo.create_blob(b"same\n"), pygit2.GIT_FILEMODE_BLOB)
    outer.insert(same[:2], fanned.write(), pygit2.GIT_FILEMODE_TREE)
    for name, text in (
        (first, b"first\n"),
        (elsewhere, b"elsewhere\n"),
        ("ef" * 20, b"no such object\n"),
        ("zz" * 20, b"no object id\n"),
        ("ab" * 32, b"too long here\n"),
    ):
        outer.insert(name, repo.create_blob(text), pygit2.GIT_FILEMODE_BLOB)
    tip = str(repo.create_commit(None, sig, sig, "notes", outer.write(), []))
    assert notes.of_tree(repo, same, tip) == [(same, "same\n"), (first, "first\n")]
    assert notes.of_tree(repo, first, tip) == [(first, "first\n"), (same, "same\n")]
    assert notes.of_tree(repo, elsewhere, tip) == [(elsewhere, "elsewhere\n")]


def test_publishing_what_is_not_an_attestation_is_one_line(
    world: World, tmp_path: Path, genstamp: RunGenstamp
) -> None:
    m = clone(remote_copy(world, tmp_path), tmp_path / "m")
    junk = tmp_path / "junk.json"
    junk.write_text('{"payload": "e30=", "payloadType": "text/plain"}\n')
    code, _out, err = genstamp("-C", m, "publish", junk)
    assert code == 2 and err.count("\n") == 1 and "payloadType" in err, err
    assert git(m, "notes", f"--ref={notes.REF}", "list", check=False) == ""


@pytest.mark.parametrize("field", ["commit", "tree"])
def test_an_attestation_whose_commit_is_no_object_id_is_noted_nowhere(
    world: World, tmp_path: Path, genstamp: RunGenstamp, field: str
) -> None:
    """An attestation whose recorded commit is ``-F/some/file``: given to ``git notes add``
    as it was, git took it for its option and noted that file's text on HEAD (and published
    it). No object id, no statement: one line, nothing written."""
    m = clone(remote_copy(world, tmp_path), tmp_path / "m")
    secret = tmp_path / "secret.txt"
    secret.write_text("SECRET-TOKEN\n")

    def change(body: dict[str, Any]) -> None:
        body["predicate"]["genstamp"][field] = f"-F{secret}"

    crafted = rewrite(world.unsigned, tmp_path / "crafted.json", change, keep_signatures=False)
    code, _out, err = genstamp("-C", m, "publish", crafted)
    assert code == 2 and err.count("\n") == 1 and "no git object id" in err, err
    assert git(m, "notes", f"--ref={notes.REF}", "list", check=False) == ""


@pytest.mark.parametrize("names", ["a-blob", "a-tree", "nothing"])
def test_a_notes_ref_that_names_no_notes_commit(
    world: World, tmp_path: Path, genstamp: RunGenstamp, names: str
) -> None:
    """``refs/notes/genstamp`` naming a blob or a tree (git's notes commands fail on it): one
    line saying so, not "no attestation, publish it", which cannot work then. A symbolic ref
    that leads nowhere is no notes, as for git."""
    m = clone(remote_copy(world, tmp_path), tmp_path / "m")
    if names == "nothing":
        git(m, "symbolic-ref", notes.REF, "refs/notes/none")
    else:
        blob = git(m, "hash-object", "-w", "--stdin", input="x\n")
        target = blob if names == "a-blob" else git(m, "mktree", input="")
        git(m, "update-ref", notes.REF, target)
    code, out, err = genstamp("-C", m, "verify", "--json", "--rev", "HEAD", "--from-notes")
    if names == "nothing":
        assert code == 1 and rules(json.loads(out)) == ["no-attestation"], (out, err)
    else:
        kind = names.removeprefix("a-")
        assert code == 2 and err.count("\n") == 1, err
        assert f"{notes.REF} names a {kind}" in err and "update-ref -d" in err, err


def test_a_pretty_printed_envelope_is_noted_on_one_line(
    world: World, tmp_path: Path, genstamp: RunGenstamp
) -> None:
    """An envelope laid out over many lines (``python -m json.tool``), which ``verify
    --attestation`` reads, is one line in the note: its signatures cover the payload, not the
    spacing, and the gate reads the note as ``verify --from-notes`` does."""
    import json

    m = clone(remote_copy(world, tmp_path), tmp_path / "m")
    pretty = tmp_path / "pretty.json"
    pretty.write_text(json.dumps(json.loads(Path(world.full).read_text()), indent=2) + "\n")
    code, _out, err = genstamp("-C", m, "publish", pretty)
    assert code == 0, err
    note = git(m, "notes", f"--ref={notes.REF}", "show", world.commit)
    assert len(note.split("\n")) == 1, note
    code, data = verdict(genstamp, m, "--from-notes")
    assert code == 0, data


def test_a_note_holding_bytes_that_are_no_utf_8_is_kept_as_it_was(
    world: World, tmp_path: Path, genstamp: RunGenstamp
) -> None:
    """A note fetched onto the commit that holds a Latin-1 byte (anyone may push notes): a
    publish of a genuine attestation beside it raised UnicodeEncodeError (a traceback, exit
    1). The note keeps its bytes, the attestation is added, and the gate reads it."""
    m = clone(remote_copy(world, tmp_path), tmp_path / "m")
    odd = tmp_path / "odd.txt"
    odd.write_bytes(b"caf\xe9 note\n")
    git(m, "notes", f"--ref={notes.REF}", "add", "-F", str(odd), world.commit)
    code, _out, err = genstamp("-C", m, "publish", world.full)
    assert code == 0 and "Traceback" not in err, err
    shown = subprocess.run(
        ["git", "notes", f"--ref={notes.REF}", "show", world.commit], cwd=m, capture_output=True
    ).stdout
    assert b"caf\xe9 note" in shown and len(shown.splitlines()) == 2, shown
    code, data = verdict(genstamp, m, "--from-notes")
    assert code == 0, data


def test_a_remote_that_refuses_the_notes_is_told_at_once(
    world: World, tmp_path: Path, genstamp: RunGenstamp
) -> None:
    """A remote whose pre-receive hook declines the push: no concurrent publish is to blame and
    pushing again fails again. One attempt, one line with the remote's reason; the note stays
    in the clone."""
    origin = remote_copy(world, tmp_path)
    tries = tmp_path / "tries"
    hook = origin / "hooks" / "pre-receive"
    hook.parent.mkdir(exist_ok=True)
    hook.write_text(f"#!/bin/sh\necho x >> '{tries}'\necho 'notes are not accepted here' >&2\n")
    hook.write_text(hook.read_text() + "exit 1\n")
    hook.chmod(0o755)
    m = clone(origin, tmp_path / "m")
    code, _out, err = genstamp("-C", m, "publish", world.parts[0], "--remote", "origin")
    noted, refused = err.strip().splitlines()  # the note written here, then why not there
    assert code == 2 and "noted on" in noted, err
    assert f"origin refused {notes.REF}" in refused, err
    assert "notes are not accepted here" in refused and "other jobs" not in refused, err
    assert tries.read_text().count("x") == 1
    assert git(m, "notes", f"--ref={notes.REF}", "show", world.commit)


@pytest.mark.parametrize(
    ("porcelain", "raced"),
    [
        ("!\trefs/notes/genstamp:refs/notes/genstamp\t[rejected] (fetch first)", True),
        ("!\trefs/notes/genstamp:refs/notes/genstamp\t[rejected] (non-fast-forward)", True),
        (
            "!\trefs/notes/genstamp:refs/notes/genstamp\t[remote rejected] "
            "(cannot lock ref 'refs/notes/genstamp': is at 1 but expected 2)",
            True,
        ),
        ("!\trefs/notes/genstamp:refs/notes/genstamp\t[remote rejected] (failed to lock)", True),
        (
            "!\trefs/notes/genstamp:refs/notes/genstamp\t[remote rejected] (failed to update ref)",
            True,
        ),
        (
            "!\trefs/notes/genstamp:refs/notes/genstamp\t[remote rejected] "
            "(pre-receive hook declined)",
            False,
        ),
        (
            "!\trefs/notes/genstamp:refs/notes/genstamp\t[remote rejected] "
            "(deny updating a hidden ref)",
            False,
        ),
        ("", False),  # no connection: git printed nothing for the ref
        ("!\trefs/heads/x:refs/heads/x\t[rejected] (fetch first)", False),
    ],
)
def test_only_a_lost_race_is_tried_again(porcelain: str, raced: bool) -> None:
    assert notes._raced(f"To origin\n{porcelain}\nDone\n") is raced


def test_from_notes_judges_a_commit_by_its_tree(
    world: World, tmp_path: Path, genstamp: RunGenstamp
) -> None:
    """An empty commit on top of the attested one has no note of its own, and the attested
    tree: the note on the tree's commit counts for it. The control: a commit of another tree
    has none."""
    m = clone(remote_copy(world, tmp_path), tmp_path / "m")
    git(m, "notes", f"--ref={notes.REF}", "add", "-F", str(world.full), world.commit)
    git(m, "commit", "-q", "--allow-empty", "-m", "release notes only")
    judged_by_its_tree(genstamp, m)


def test_a_note_on_a_commit_not_at_hand_counts_for_its_tree(
    world: World, tmp_path: Path, genstamp: RunGenstamp
) -> None:
    """The attested commit is gone from this clone (a shallow clone, a squash-merged branch
    deleted since, an amend of a commit published but never pushed: V24 02, 07, 25): its
    note's statement names the tree, and a commit of that tree is judged by it. The control:
    a commit of another tree is not."""
    m = clone(remote_copy(world, tmp_path), tmp_path / "m")
    git(m, "notes", f"--ref={notes.REF}", "add", "-F", str(world.full), world.commit)
    git(m, "commit", "-q", "--amend", "-m", "reworded: the same tree, another commit")
    n = tmp_path / "n"  # through the transport: only what main reaches, not the amended commit
    git(tmp_path, "clone", "-q", "--single-branch", (m / ".git").as_uri(), str(n))
    git(n, "fetch", "-q", "origin", f"{notes.REF}:{notes.REF}")
    missing = subprocess.run(["git", "cat-file", "-e", world.commit], cwd=n, check=False)
    assert missing.returncode != 0, "the attested commit is not in this clone"
    judged_by_its_tree(genstamp, n)


def judged_by_its_tree(genstamp: RunGenstamp, repo: Path) -> None:
    """HEAD, of the attested tree, is accepted from the notes; a commit of another tree on top
    (a test made red) is not."""
    code, data = verdict(genstamp, repo, "--from-notes")
    assert code == 0, data
    (repo / "tests" / "test_0.py").write_text("def test_x0():\n    assert False\n")
    git(repo, "commit", "-qam", "red")
    code, data = verdict(genstamp, repo, "--from-notes")
    assert code == 1 and rules(data) == ["no-attestation"], data


@pytest.mark.parametrize("spec", ["blob:none", "tree:0"])
def test_a_partial_clone_reads_the_notes_git_left_out(
    world: World, tmp_path: Path, genstamp: RunGenstamp, spec: str
) -> None:
    """`git clone --filter`: the notes' blobs (or trees) are fetched on demand by git, never by
    libgit2, so genstamp has git fetch them (Y24 04: a bare object id, exit 2, or a
    no-attestation with the notes fetched)."""
    origin = remote_copy(world, tmp_path)
    git(origin, "config", "uploadpack.allowFilter", "true")
    m = clone(origin, tmp_path / "m")
    git(m, "notes", f"--ref={notes.REF}", "add", "-F", str(world.full), world.commit)
    git(m, "push", "-q", "origin", notes.REF)
    n = tmp_path / "n"
    git(tmp_path, "clone", "-q", f"--filter={spec}", origin.as_uri(), str(n))
    git(n, "fetch", "-q", "origin", f"{notes.REF}:{notes.REF}")
    if spec == "blob:none":  # the remote out of reach: the note is said, not a bare object id
        git(n, "remote", "set-url", "origin", (tmp_path / "gone").as_uri())
        code, _out, err = genstamp("-C", n, "verify", "--from-notes")
        assert code == 2 and err.count("\n") == 1, err
        assert f"in {notes.REF} is not in this partial clone, and git cannot fetch it" in err
        git(n, "remote", "set-url", "origin", origin.as_uri())
    judged_by_its_tree(genstamp, n)
