"""Workspace generations: where the stamp lives, what it holds, how it is written and read."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
from conftest import (
    RunGenstamp,
    commit_all,
    git,
    git_tree,
    run_genstamp,
    run_pytest,
    subprocess_env,
)
from hypothesis import given, settings
from hypothesis import strategies as st

from genstamp import __version__ as genstamp_version
from genstamp import generation, jsontext, restamp
from genstamp.errors import GenstampError
from genstamp.repo import STATE_DIR, open_checkout

HEX32 = re.compile(r"[0-9a-f]{32}")


def stamp_file(path: Path) -> Path:
    return Path(git(path, "rev-parse", "--absolute-git-dir")) / "genstamp" / "generation.json"


def porcelain(path: Path) -> str:
    return git(path, "status", "--porcelain", "--ignored", "--untracked-files=all")


# --- where it lives ------------------------------------------------------------------------


def test_stamp_lives_in_the_git_dir_and_leaves_status_clean(project: Path) -> None:
    assert porcelain(project) == ""
    gen, _ = restamp.begin(open_checkout(project))
    assert stamp_file(project).is_file()
    assert stamp_file(project).parent.parent == (project / ".git").resolve()
    assert porcelain(project) == ""
    assert [p.name for p in stamp_file(project).parent.iterdir()] == ["generation.json"]
    on_disk = json.loads(stamp_file(project).read_text())
    assert on_disk["id"] == gen.id


def test_linked_worktree_has_its_own_stamp(project: Path, tmp_path: Path) -> None:
    wt = tmp_path / "wt"
    git(project, "worktree", "add", "-q", "-b", "side", str(wt))
    (wt / "extra.txt").write_text("only here\n")
    commit_all(wt, "side work")
    gen, _ = restamp.begin(open_checkout(wt), trigger="post-checkout")
    own = stamp_file(wt)
    assert own.parent.parent == (project / ".git" / "worktrees" / "wt").resolve()
    assert own.is_file()
    assert not (project / ".git" / "genstamp").exists()  # the main worktree has none
    assert porcelain(wt) == ""
    assert generation.current(open_checkout(project)) is None
    current = generation.current(open_checkout(wt))
    assert current is not None and current.id == gen.id
    assert gen.tree == git_tree(wt) != git_tree(project)
    # stamping the main worktree leaves the linked one's stamp alone
    main_gen, _ = restamp.begin(open_checkout(project))
    assert generation.current(open_checkout(wt)) == current
    assert main_gen.id != gen.id


def test_separate_git_dir(tmp_path: Path) -> None:
    work, store = tmp_path / "work", tmp_path / "store.git"
    git(
        tmp_path,
        "-c",
        "init.defaultBranch=main",
        "init",
        "-q",
        f"--separate-git-dir={store}",
        "work",
    )
    (work / "f.txt").write_text("f\n")
    commit_all(work, "f")
    restamp.begin(open_checkout(work))
    assert (store / "genstamp" / "generation.json").is_file()
    assert (work / ".git").is_file()
    assert porcelain(work) == ""


# --- what it holds -------------------------------------------------------------------------


def test_fields(project: Path) -> None:
    (project / "src" / "calc" / "__init__.py").write_text("def add(a, b):\n    return b + a\n")
    (project / "new_module.py").write_text("")
    before = datetime.now(timezone.utc).replace(microsecond=0)
    gen, result = restamp.begin(open_checkout(project), trigger="ci")
    after = datetime.now(timezone.utc)

    data = json.loads(stamp_file(project).read_text())
    # nothing of format 4 in it (a claim's or a retired entry's word on changed files): 3, which
    # every reader knows
    assert data["format"] == generation.FORMAT and data["version"] == 3
    assert HEX32.fullmatch(data["id"])
    assert data["tree"] == git_tree(project) == gen.tree
    assert data["tree"] != git(project, "rev-parse", "HEAD^{tree}")  # the dirty tree, not HEAD's
    assert data["head"] == git(project, "rev-parse", "HEAD")
    assert data["trigger"] == "ci"
    created = datetime.fromisoformat(data["created"].replace("Z", "+00:00"))
    assert data["created"].endswith("Z") and created.tzinfo is not None
    assert before <= created <= after
    assert result is not None and data["scrub"] == result.summary()
    assert re.fullmatch(r"[0-9a-f]{64}", data["key"])
    assert generation.current(open_checkout(project)) == gen


def test_head_is_null_while_unborn(repo: Path) -> None:
    (repo / "f.txt").write_text("f\n")
    gen, _ = restamp.begin(open_checkout(repo), do_scrub=False)
    data = json.loads(stamp_file(repo).read_text())
    assert data["head"] is None and gen.head is None
    assert data["tree"] == git_tree(repo)
    assert data["scrub"] is None


def test_each_stamp_is_a_new_generation(project: Path) -> None:
    checkout = open_checkout(project)
    ids = {restamp.begin(checkout, do_scrub=False)[0].id for _ in range(5)}
    assert len(ids) == 5


def test_stamp_scrubs_before_taking_the_tree(repo: Path) -> None:
    """Untracked, unignored bytecode would otherwise be part of the stamped tree."""
    (repo / "m.py").write_text("")
    (repo / "__pycache__").mkdir()
    (repo / "__pycache__" / "m.cpython-311.pyc").write_bytes(b"x")
    with_bytecode = git_tree(repo)
    gen, result = restamp.begin(open_checkout(repo))
    assert result is not None and result.files == 1
    assert gen.tree == git_tree(repo) != with_bytecode


def test_unknown_trigger(project: Path) -> None:
    with pytest.raises(GenstampError, match="unknown trigger 'cron'"):
        restamp.begin(open_checkout(project), trigger="cron")
    assert not stamp_file(project).exists()


# --- atomic writes -------------------------------------------------------------------------


def _spawn(cwd: Path, *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, *args],
        cwd=cwd,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=subprocess_env(),
    )


def test_two_racing_stamps_leave_one_whole_stamp(project: Path) -> None:
    """Both scrub the same warm tree and write the same stamp at once."""
    for n in range(30):
        cache = project / "src" / f"gone{n}" / "__pycache__"
        cache.mkdir(parents=True)
        for m in range(5):
            (cache / f"m{m}.cpython-311.pyc").write_bytes(b"x" * 100)
    procs = [_spawn(project, "-m", "genstamp", "stamp", "--json") for _ in range(2)]
    ids = []
    for proc in procs:
        out, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err
        ids.append(json.loads(out)["generation"]["id"])
    assert len(set(ids)) == 2
    assert sorted(project.joinpath("src").iterdir()) == [project / "src" / "calc"]
    current = generation.current(open_checkout(project))
    assert current is not None and current.id in ids
    assert current.tree == git_tree(project)
    assert [p.name for p in stamp_file(project).parent.iterdir()] == ["generation.json"]


def test_readers_never_see_a_torn_stamp(project: Path) -> None:
    checkout = open_checkout(project)
    restamp.begin(checkout, do_scrub=False)
    loop = (
        "from genstamp.cli import main\n"
        "for _ in range(25):\n"
        "    assert main(['stamp', '--no-scrub']) == 0\n"
    )
    writers = [_spawn(project, "-c", loop) for _ in range(2)]
    reads = 0
    seen: set[str] = set()
    path = generation.stamp_path(checkout)
    while True:
        running = any(w.poll() is None for w in writers)
        gen = generation.parse(path.read_bytes(), path)  # raises on a torn file
        seen.add(gen.id)
        reads += 1
        if not running:
            break
    for w in writers:
        _, err = w.communicate(timeout=120)
        assert w.returncode == 0, err
    assert reads >= 1 and seen
    assert [p.name for p in path.parent.iterdir()] == ["generation.json"]


# --- corrupt stamps ------------------------------------------------------------------------


def _valid(project: Path) -> dict[str, object]:
    restamp.begin(open_checkout(project), do_scrub=False)
    data: dict[str, object] = json.loads(stamp_file(project).read_text())
    return data


def _corrupt(kind: str, good: dict[str, object]) -> bytes:
    text = json.dumps(good, indent=2)
    if kind == "empty":
        return b""
    if kind == "blank":
        return b"  \n"
    if kind == "truncated":
        return text[: len(text) // 2].encode()
    if kind == "binary":
        return b"\x00\xff\xfe garbage"
    if kind == "not-an-object":
        return b"[1, 2, 3]\n"
    if kind == "other-format":
        return json.dumps({**good, "format": "something-else"}).encode()
    if kind == "missing-tree":
        return json.dumps({k: v for k, v in good.items() if k != "tree"}).encode()
    if kind == "tree-not-a-string":
        return json.dumps({**good, "tree": 12345}).encode()
    if kind == "short-tree":
        return json.dumps({**good, "tree": str(good["tree"])[:12]}).encode()
    if kind == "short-head":
        return json.dumps({**good, "head": "HEAD"}).encode()
    if kind == "signed-id":
        return json.dumps({**good, "id": "-" + str(good["id"])[1:]}).encode()
    if kind == "retired-not-a-list":
        return json.dumps({**good, "retired": {"id": good["id"]}}).encode()
    if kind == "retired-without-key":
        entry = {k: good[k] for k in ("id", "tree", "created", "created_ns", "trigger")}
        return json.dumps({**good, "retired": [entry]}).encode()
    if kind in ("retired-null-key", "retired-number-id"):
        entry = {k: good[k] for k in ("id", "tree", "created", "created_ns", "trigger", "key")}
        entry.update({"key": None} if kind == "retired-null-key" else {"id": 12345})
        return json.dumps({**good, "retired": [entry]}).encode()
    if kind == "claim-null-key":
        nxt = {k: good[k] for k in ("id", "created", "created_ns", "trigger", "head", "scrub")}
        claim = {"next": {**nxt, "key": None}, "may_keep": True, "notes": []}
        return json.dumps({**good, "pending": claim}).encode()
    if kind == "future-version":
        return json.dumps({**good, "version": generation.VERSION + 1, "writer": "9.0"}).encode()
    raise AssertionError(kind)


KINDS = [
    "empty",
    "blank",
    "truncated",
    "binary",
    "not-an-object",
    "other-format",
    "missing-tree",
    "tree-not-a-string",
    "short-tree",
    "short-head",
    "signed-id",
    "retired-not-a-list",
    "retired-without-key",
    "retired-null-key",
    "retired-number-id",
    "claim-null-key",
    "future-version",
]


@pytest.mark.parametrize("kind", KINDS)
def test_corrupt_stamp_is_reported(project: Path, genstamp: RunGenstamp, kind: str) -> None:
    path = stamp_file(project)
    path.write_bytes(_corrupt(kind, _valid(project)))

    with pytest.raises(GenstampError) as info:
        generation.current(open_checkout(project))
    message = str(info.value)
    assert str(path) in message
    assert "genstamp stamp" in info.value.remedy

    for args in (("status",), ("status", "--json")):
        code, out, err = genstamp("-C", project, *args)
        assert code == 2
        assert out == ""
        lines = err.splitlines()
        assert len(lines) == 1 and lines[0].startswith("genstamp: "), err
        assert str(path) in lines[0] and "genstamp stamp" in lines[0]
        assert "Traceback" not in err

    # the remedy works
    code, _, err = genstamp("-C", project, "stamp", "--no-scrub")
    assert code == 0, err
    assert genstamp("-C", project, "status")[0] == 0


def test_a_hook_ends_a_generation_into_the_next_ones_retired_list(project: Path) -> None:
    """What a hook's new generation carries (the ended ones, newest last, at most RETIRED),
    what `genstamp stamp` does not, and a stamp written before the field (read as none)."""
    checkout = open_checkout(project)
    first = restamp.begin(checkout, do_scrub=False).generation
    assert first.retired == ()
    gen = first
    for n in range(generation.RETIRED + 2):
        (project / "n.txt").write_text(str(n))  # the work tree changes: the claim begins anew
        # (the hook after the change, which its change time says came before it)
        claim = generation.claimed(gen, trigger="post-checkout", changed=True, head=None,
                                   scrub=None, now_ns=time.time_ns())  # fmt: skip
        generation.write(checkout, claim)
        gen = restamp.settle(checkout) or first
        assert gen.retired[-1]["id"] != gen.id
    ended = [e["id"] for e in gen.retired]
    assert len(ended) == generation.RETIRED and first.id not in ended
    assert generation.as_retired(gen.retired[-1]).key == gen.retired[-1]["key"]
    assert generation.read(checkout)[0] == gen  # written and read back whole
    assert restamp.begin(checkout, do_scrub=False).generation.retired == ()
    raw = json.loads(stamp_file(project).read_text())
    del raw["retired"]  # a genstamp before the field
    stamp_file(project).write_text(json.dumps(raw))
    assert generation.stored(checkout).retired == ()  # type: ignore[union-attr]


def test_future_version_names_both_versions(project: Path) -> None:
    path = stamp_file(project)
    path.write_bytes(_corrupt("future-version", _valid(project)))
    with pytest.raises(GenstampError, match=rf"version {generation.VERSION + 1}\b.*9\.0"):
        generation.current(open_checkout(project))


@pytest.mark.parametrize("version", [True, 3.0, "3"], ids=["true", "float", "string"])
def test_a_version_of_another_type_is_refused(project: Path, version: object) -> None:
    """To Python, JSON's ``true`` equals 1 and ``3.0`` equals 3; neither is a version genstamp
    writes (B26 02: ``true`` was read as version 1, and the gate accepted)."""
    stamp_file(project).write_text(json.dumps({**_valid(project), "version": version}))
    with pytest.raises(GenstampError, match=rf"format version {re.escape(repr(version))},"):
        generation.current(open_checkout(project))


def test_the_stamp_names_the_genstamp_that_wrote_it_last(project: Path) -> None:
    """A stamp begun by another genstamp and kept or claimed by this one's hook is written in
    this one's format: it names this one (J21 07: a line refusing it said "format version 3,
    written by genstamp 0.1.0", which never wrote version 3)."""
    assert run_genstamp(project, "stamp").returncode == 0
    path = stamp_file(project)
    gen = generation.stored(open_checkout(project))
    assert gen is not None
    generation.write_at(path, gen._replace(writer="0.1.0"))
    assert json.loads(path.read_text())["writer"] == genstamp_version
    assert generation.stored(open_checkout(project)) == gen


def test_unreadable_stamp_is_reported(project: Path, genstamp: RunGenstamp) -> None:
    path = stamp_file(project)
    path.parent.mkdir(parents=True)
    path.mkdir()  # something that cannot be read as a file, whoever we run as
    code, out, err = genstamp("-C", project, "status")
    assert code == 2 and out == ""
    assert err.startswith(f"genstamp: cannot read the generation stamp {path}")
    assert len(err.splitlines()) == 1


def test_corrupt_stamp_in_a_real_process_has_no_traceback(project: Path) -> None:
    path = stamp_file(project)
    path.parent.mkdir(parents=True)
    path.write_text('{"format": "genstamp-generation", "version": 1, "id": ')
    proc = run_genstamp(project, "status")
    assert proc.returncode == 2
    assert proc.stdout == ""
    assert proc.stderr.count("\n") == 1 and proc.stderr.startswith("genstamp: ")
    assert str(path) in proc.stderr and "Traceback" not in proc.stderr


@pytest.mark.parametrize("name", ["generation.json", "checkout-id", "verified.json"])
@pytest.mark.parametrize("what", ["fifo", "device"])
def test_a_kept_file_that_is_no_file_is_one_line_and_no_wait(
    project: Path, name: str, what: str
) -> None:
    """A FIFO, or a link to a device, in place of a file genstamp keeps in the git dir: reading
    it waited forever (a FIFO: `status`, `verify`, the pytest plugin, git's hooks all hung) or
    without end (`/dev/zero`). Now one line naming the file, no traceback; the hooks warn and
    never fail git's command. Control: with the file as it was, the run is accepted."""
    assert run_genstamp(project, "install", "--plain").returncode == 0
    assert run_pytest(project).returncode == 0
    assert run_genstamp(project, "verify", "--rev", "HEAD").returncode == 0
    path = stamp_file(project).with_name(name)
    path.unlink()
    if what == "fifo":
        os.mkfifo(path)
    else:
        path.symlink_to("/dev/zero")
    # the verdict store is read for a commit (``--rev``), the others for the work tree too
    proc = run_genstamp(project, "verify", *(["--rev", "HEAD"] if "verified" in name else []))
    told = proc.stdout + proc.stderr
    assert proc.returncode in (1, 2) and "Traceback" not in told, told
    assert f"{path}: not a regular file" in told, told
    # git's post-checkout hook and a pytest run read it too: neither may wait on it
    checkout = ["git", "checkout", "-q", "-b", "other"]
    env = subprocess_env()
    proc = subprocess.run(
        checkout, cwd=project, capture_output=True, text=True, env=env, timeout=120
    )
    assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc.stderr
    assert "Traceback" not in run_pytest(project).stdout


# -- the stamp's text, written and read without json (issue 16: the hook's start-up) ----------

JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=20,
)


@settings(max_examples=300, deadline=None)
@given(value=JSON_VALUES)
def test_jsontext_writes_what_json_writes(value: object) -> None:
    """Byte for byte ``json.dumps(value, indent=2, sort_keys=True)``: the stamp's text is the
    same whoever writes it (a hook or `genstamp stamp`)."""
    text = jsontext.dumps(value)
    assert text == json.dumps(value, indent=2, sort_keys=True)
    assert json.dumps(jsontext.loads(text)) == json.dumps(json.loads(text))


@settings(max_examples=300, deadline=None)
@given(text=st.text(alphabet='{}[]",:0123456789.eE-+ \t\n\rtrufalsnNIiy\\x\u00e9', max_size=30))
def test_jsontext_reads_what_json_reads_and_refuses_what_it_refuses(text: str) -> None:
    try:
        expected: object = json.dumps(json.loads(text))
    except ValueError:
        expected = ValueError
    try:
        got: object = json.dumps(jsontext.loads(text))
    except ValueError:
        got = ValueError
    assert got == expected


def test_jsontext_refuses_what_is_not_one_value() -> None:
    for text in ["", " ", "{", "{} {}", "[1,]", "\ufeff{}", "nul", '"\x01"']:
        with pytest.raises(ValueError):
            jsontext.loads(text)
    with pytest.raises(TypeError):
        jsontext.dumps({1: "a key that is not a string"})
    with pytest.raises(TypeError):
        jsontext.dumps({"set": {1}})


@settings(max_examples=300, deadline=None)
@given(ns=st.integers(min_value=0, max_value=4_102_444_800 * 10**9))
def test_timestamps_are_written_as_datetime_writes_them(ns: int) -> None:
    at = datetime(1970, 1, 1, tzinfo=timezone.utc) + timedelta(microseconds=(ns + 500) // 1000)
    expected = at.isoformat(timespec="microseconds").replace("+00:00", "Z")
    assert generation._iso(ns) == expected


def test_a_hook_finds_the_stamp_where_every_reader_does(project: Path) -> None:
    checkout = open_checkout(project)
    assert generation.STATE_DIR == STATE_DIR
    assert generation.stamp_in(str(checkout.gitdir)) == str(generation.stamp_path(checkout))


def test_the_stamp_a_hook_writes_unsynced_is_the_same_stamp(project: Path) -> None:
    gen, _ = restamp.begin(open_checkout(project))
    path = stamp_file(project)
    synced = path.read_bytes()
    generation.write_at(path, gen, sync=False)
    assert path.read_bytes() == synced
    assert generation.read_at(path) == (gen, synced)
    assert not [p for p in path.parent.iterdir() if p.name.endswith(".tmp")]


# -- a generation that a checkout ends while its tests run -------------------------------------

GOLDEN_TEST = """\
import json, os, pathlib, subprocess, sys

ROOT = pathlib.Path(__file__).parent.parent


def run(*commands):
    # the developer's commands, in another terminal: not processes of this run
    env = {k: v for k, v in os.environ.items() if not k.startswith("GENSTAMP")}
    for argv in commands:
        argv = [sys.executable, "-m", *argv] if argv[0] == "genstamp" else ["git", *argv]
        subprocess.run(argv, cwd=ROOT, check=True, env=env, capture_output=True)


def test_golden():
    run(*AWAY)
    value = json.loads((ROOT / "tests" / "golden.json").read_text())["v"]
    run(*BACK)
    assert value == 2
"""
SWITCH_AWAY = [("switch", "-q", "other")]
SWITCH_BACK = [("switch", "-q", "main")]


# a file checkout after the run, before any reader (a full hook: it begins the next generation
# on the claims the switches left, which ended the run's while it ran)
AFTER = ("checkout", "-q", "HEAD", "--", ".gitignore")


@pytest.mark.parametrize(
    ("away", "back", "ended"),
    [
        (SWITCH_AWAY, SWITCH_BACK, True),
        (SWITCH_AWAY, [*SWITCH_BACK, AFTER], True),
        (
            [("checkout", "-q", "other", "--", "tests")],
            [("checkout", "-q", "main", "--", "tests")],
            True,
        ),
        # a full hook (a file checkout) after a claim that changed files, no reader between
        (
            [("switch", "-q", "--detach", "other")],
            [("checkout", "-q", "main", "--", "tests/golden.json"), ("switch", "-q", "main")],
            True,
        ),
        # a branch made and left: no file changed, the generation goes on
        ([("switch", "-q", "-c", "side")], SWITCH_BACK, False),
        # ... and so with a reader between (the tree is the edited one, tested now)
        ([("switch", "-q", "-c", "side"), ("genstamp", "status")], [], False),
        ([("commit", "-q", "--amend", "-m", "reworded"), ("genstamp", "status")], [], False),
    ],
)
def test_a_run_its_generation_ended_in_the_middle_of_vouches_for_nothing(
    repo: Path, away: list[tuple[str, ...]], back: list[tuple[str, ...]], ended: bool
) -> None:
    """A branch switched to and back while the tests ran (two post-checkout claims, no reader
    between them: the next generation begins whatever the work tree then holds): a test read
    the other branch's data and passed, where a clean clone of main fails it. Its evidence
    was accepted as "tested in a generation since ended", and the plugin said nothing. The
    plugin now says the generation ended while the tests ran, and no gate takes that run for
    the tree. Controls: a branch made, a commit reworded (git changed no file), with a reader
    between (`genstamp status` settles the claim while the run tests an uncommitted edit):
    the generation goes on, and the run is accepted."""
    during = [argv for argv in back if argv != AFTER]
    text = GOLDEN_TEST.replace("AWAY", repr(away)).replace("BACK", repr(during))
    (repo / "tests").mkdir()
    (repo / "tests" / "test_golden.py").write_text(text)
    (repo / "tests" / "golden.json").write_text('{"v": 2}\n' if not ended else '{"v": 1}\n')
    (repo / ".gitignore").write_text("__pycache__/\n.pytest_cache/\n")
    commit_all(repo, "main")
    git(repo, "switch", "-q", "-c", "other")
    (repo / "tests" / "golden.json").write_text('{"v": 2}\n')
    commit_all(repo, "other")
    git(repo, "switch", "-q", "main")
    assert run_genstamp(repo, "install", "--plain").returncode == 0
    if any("status" in argv for argv in away):  # the run tests an edit git never saw
        (repo / "notes.txt").write_text("an edit made before the run, not committed\n")
    proc = run_pytest(repo, "-p", "no:cacheprovider")
    assert proc.returncode == 0, proc.stdout
    if AFTER in back:
        git(repo, *AFTER)
    verdict = run_genstamp(repo, "verify")
    commit_all(repo, "the edit, as tested")
    pushed = run_genstamp(repo, "verify", "--rev", "HEAD")
    if ended:
        assert "began while the tests ran" in proc.stdout, proc.stdout
        assert verdict.returncode == 1 and "stale-generation" in verdict.stdout, verdict.stdout
        assert pushed.returncode == 1, pushed.stdout
    else:
        assert "will refuse" not in proc.stdout, proc.stdout
        assert verdict.returncode == 0, verdict.stdout + verdict.stderr
        assert pushed.returncode == 0, pushed.stdout + pushed.stderr
