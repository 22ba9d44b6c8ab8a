"""The identity kept in the git dir (idcache) and the monitor (Watchman): each is used only
where it equals a whole walk, and every doubt (a changed index, setting, rule file, a file
rewritten in place, a racy write, an unknown record, a lost or reset monitor) walks whole.
git's own `add -A && write-tree` is the oracle throughout."""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import RunGenstamp, commit_all, exclude, git, git_tree, init_repo
from identity_modes import RACY_NS, require_watchman, settle, unwatch

from genstamp import idcache
from genstamp.identity import Scan, scan
from genstamp.repo import open_checkout


@pytest.fixture
def racy_window(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(idcache, "_RACY_NS", RACY_NS)


@pytest.fixture
def base(repo: Path, racy_window: None) -> Path:
    """A committed repository with a modified and an untracked file (a kept record then
    holds differing paths)."""
    (repo / ".gitignore").write_text("*.log\n__pycache__/\n")
    (repo / "pkg" / "sub").mkdir(parents=True)
    (repo / "pkg" / "mod.py").write_text("X = 1\n")
    (repo / "pkg" / "sub" / "deep.py").write_text("D = 1\n")
    (repo / "top.txt").write_text("top\n")
    commit_all(repo, "base")
    (repo / "pkg" / "mod.py").write_text("X = 2\n")
    (repo / "new.py").write_text("N = 1\n")
    return repo


@pytest.fixture
def watched(base: Path) -> Iterator[Path]:
    require_watchman()
    git(base, "config", "genstamp.monitor", "watchman")
    try:
        yield base
    finally:
        unwatch(base)


def nested_repo(path: Path) -> None:
    """A nested repository with a commit (git add -A refuses one without)."""
    init_repo(path)
    (path / "f.txt").write_text("f\n")
    commit_all(path, "nested")


def known(path: Path, *, bytecode: bool = False) -> Scan:
    """The identity with the record (and the monitor when configured), after the racy window;
    checked against git's own."""
    settle()
    result = scan(open_checkout(path), cache=True, want_bytecode=bytecode)
    assert result.tree == git_tree(path), f"known by {result.how}"
    return result


# --- without a monitor ------------------------------------------------------------------------


def test_a_walk_that_finds_what_the_kept_one_found_reuses_its_tree(base: Path) -> None:
    assert known(base).how == "walk"
    assert known(base).how == "kept"
    assert json.loads(idcache.path(open_checkout(base)).read_bytes())["version"] == idcache.VERSION


def test_a_file_rewritten_in_place_with_its_size_and_mtime_is_walked(base: Path) -> None:
    before = known(base).tree
    known(base)
    target = base / "pkg" / "mod.py"
    st = target.stat()
    target.write_text("X = 3\n")  # same size
    os.utime(target, ns=(st.st_atime_ns, st.st_mtime_ns))  # and the mtime put back
    after = known(base)
    assert after.how == "walk" and after.tree != before


def test_a_racy_differing_path_is_not_vouched_for_by_its_lstat(
    base: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(idcache, "_RACY_NS", 3600 * 10**9)  # every write is recent
    assert [known(base).how for _ in range(2)] == ["walk", "walk"]


@pytest.mark.parametrize(
    "change",
    [
        pytest.param(lambda r: git(r, "add", "new.py"), id="index"),
        pytest.param(lambda r: git(r, "config", "core.autocrlf", "true"), id="autocrlf"),
        pytest.param(lambda r: git(r, "config", "core.filemode", "false"), id="filemode"),
        pytest.param(
            lambda r: exclude(r, "new.py"),
            id="info-exclude",
        ),
        pytest.param(lambda r: (r / ".gitignore").write_text("new.py\n"), id="gitignore"),
        pytest.param(
            lambda r: (r / ".gitattributes").write_text("*.py text eol=crlf\n"), id="attributes"
        ),
        pytest.param(lambda r: (r / "top.txt").unlink(), id="deleted"),
        pytest.param(lambda r: (r / "pkg" / "mod.py").chmod(0o755), id="chmod"),
        # what `git status` (gitwalk) lists differently from the record
        pytest.param(lambda r: (r / "pkg" / "mod.py").write_text("X = 3\n"), id="rewritten"),
        pytest.param(lambda r: (r / "top.txt").write_text("changed\n"), id="clean-file-edited"),
        pytest.param(lambda r: (r / "new.py").unlink(), id="untracked-removed"),
        pytest.param(lambda r: (r / "more.txt").write_text("more\n"), id="untracked-added"),
        pytest.param(lambda r: (r / "x.log").rename(r / "x.txt"), id="unignored"),
        pytest.param(lambda r: nested_repo(r / "nested"), id="nested-repo"),
    ],
)
def test_every_change_that_shapes_the_tree_is_walked(base: Path, change) -> None:  # type: ignore[no-untyped-def]
    (base / "crlf.py").write_bytes(b"a\r\nb\r\n")
    (base / "x.log").write_text("log\n")  # ignored
    known(base)
    assert known(base).how == "kept"
    change(base)
    # made again: by libgit2's walk, or by git itself where its conversion by content decides
    assert known(base).how in ("walk", "git")


@pytest.mark.parametrize("name", [".gitattributes", ".gitignore"])
def test_an_edit_of_an_ignored_rule_file_at_the_top_is_walked(base: Path, name: str) -> None:
    """A local ``.gitattributes`` (or ``.gitignore``) that git ignores (listed in
    info/exclude): no walk names its edit, which changes how other files convert (or which
    are ignored); the kept tree is not given, and the walk is git's tree."""
    (base / "crlf.txt").write_bytes(b"a\r\nb\r\n")  # untracked: converted as the rules say
    exclude(base, name)
    (base / name).write_text("# nothing yet\n")
    known(base)
    assert known(base).how == "kept"
    rule = "*.txt text eol=lf\n" if name == ".gitattributes" else "new.py\n"
    (base / name).write_text(rule)
    assert known(base).how == ("git" if name == ".gitattributes" else "walk")


@pytest.mark.parametrize("layout", ["ignored-file", "in-an-ignored-folder"])
def test_an_ignored_rule_file_deeper_in_the_tree_is_seen(base: Path, layout: str) -> None:
    """A git-ignored ``.gitattributes`` below the top, added, edited or removed, changes how a
    file below it converts (an untracked one; a tracked one edited, force-added in a folder
    git ignores, where no walk names the ignored file): the kept record holds the attributes
    files above each differing path, so the kept tree is not given where one changed, and
    the identity is git's tree each time (it was the kept tree: a false accept)."""
    if layout == "ignored-file":
        (base / "pkg" / ".gitignore").write_text(".gitattributes\n")
        (base / "pkg" / "crlf.py").write_bytes(b"A = 1\r\n")
        folder = base / "pkg"
    else:
        folder = base / "vendored"
        (folder / "deep").mkdir(parents=True)
        (base / ".gitignore").write_text((base / ".gitignore").read_text() + "vendored/\n")
        (folder / "deep" / "a.py").write_bytes(b"A = 1\n")
        git(base, "add", "-f", "vendored/deep/a.py")
        commit_all(base, "a tracked file in an ignored folder")
        (folder / "deep" / "a.py").write_bytes(b"A = 2\r\n")
    for bytecode in (False, True):  # git's walk; libgit2's (verify's, which looks for bytecode)
        known(base, bytecode=bytecode)
        assert known(base, bytecode=bytecode).how == "kept"
        for text in ("*.py text eol=lf\n", "# nothing\n", None, "*.py text eol=lf\n"):
            if text is None:
                (folder / ".gitattributes").unlink()
            else:
                (folder / ".gitattributes").write_text(text)
            assert known(base, bytecode=bytecode).how != "kept"
            assert known(base, bytecode=bytecode).how == "kept"


def test_a_record_of_another_version_or_not_json_is_no_record(base: Path) -> None:
    checkout = open_checkout(base)
    known(base)
    where = idcache.path(checkout)
    data = json.loads(where.read_bytes())
    where.write_text(json.dumps({**data, "version": 99}))
    assert known(base).how == "walk"
    assert json.loads(where.read_bytes())["version"] == idcache.VERSION
    where.write_bytes(b"\0garbage")
    assert known(base).how == "walk"
    assert known(base).how == "kept"


def test_a_kept_tree_gone_from_the_object_database_is_walked_and_written_again(
    base: Path,
) -> None:
    tree = known(base).tree
    assert tree is not None
    loose = base / ".git" / "objects" / tree[:2] / tree[2:]
    loose.unlink()
    again = known(base)
    assert again.how == "walk" and loose.exists()


def test_a_forged_record_for_another_tree_is_not_taken_when_the_walk_differs(
    base: Path,
) -> None:
    """The record stands for the walk only where the walk finds what it found: a record
    naming HEAD's tree for this dirty work tree is never the answer once anything moves."""
    checkout = open_checkout(base)
    known(base)
    where = idcache.path(checkout)
    data = json.loads(where.read_bytes())
    data["tree"] = git(base, "rev-parse", "HEAD^{tree}")
    where.write_text(json.dumps(data))
    (base / "new.py").write_text("N = 2\n")
    assert known(base).how == "walk"


# --- with Watchman --------------------------------------------------------------------------


def test_monitor_nothing_changed_is_no_walk(watched: Path) -> None:
    assert known(watched).how == "walk"
    assert known(watched).how == "monitor"
    assert known(watched).how == "monitor"


def _edits(root: Path) -> list[tuple[str, object]]:
    return [
        ("modify", lambda: (root / "pkg" / "sub" / "deep.py").write_text("D = 2\n")),
        ("untracked in a new folder", lambda: _new_folder(root)),
        ("delete", lambda: (root / "top.txt").unlink()),
        ("restore", lambda: (root / "top.txt").write_text("top\n")),
        ("chmod", lambda: (root / "pkg" / "mod.py").chmod(0o755)),
        ("symlink", lambda: (root / "link").symlink_to("pkg/mod.py")),
        ("ignored file", lambda: (root / "debug.log").write_text("x\n")),
        ("remove a folder", lambda: shutil.rmtree(root / "pkg" / "sub")),
        ("move a folder", lambda: (root / "fresh").rename(root / "moved")),
        ("revert", lambda: (root / "pkg" / "mod.py").write_text("X = 1\n")),
    ]


def _new_folder(root: Path) -> None:
    (root / "fresh" / "inner").mkdir(parents=True)
    (root / "fresh" / "inner" / "f.py").write_text("F = 1\n")


def test_monitor_walks_only_what_changed(watched: Path) -> None:
    known(watched)
    seen = []
    for what, edit in _edits(watched):
        edit()  # type: ignore[operator]
        result = known(watched)
        seen.append((what, result.how))
    assert all(how == "since" for _, how in seen), seen


def test_monitor_reset_walks_whole(watched: Path) -> None:
    known(watched)
    assert known(watched).how == "monitor"
    unwatch(watched)  # the watch is made anew: the kept clock means nothing to it
    (watched / "new.py").write_text("N = 3\n")
    assert known(watched).how == "walk"
    assert known(watched).how == "monitor"


def test_monitor_out_of_reach_walks_whole_silently(
    watched: Path, monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]
) -> None:
    known(watched)
    monkeypatch.setenv("WATCHMAN_SOCK", str(watched / "no-such-socket"))
    (watched / "new.py").write_text("N = 4\n")
    assert known(watched).how == "walk"
    assert known(watched).how == "kept"  # the record still serves a walk
    out, err = capfd.readouterr()
    assert (out, err) == ("", "")


def test_monitor_sees_new_bytecode_for_the_gate(watched: Path) -> None:
    assert known(watched, bytecode=True).bytecode == ()
    assert known(watched, bytecode=True).how == "monitor"
    (watched / "pkg" / "__pycache__").mkdir()
    (watched / "pkg" / "__pycache__" / "mod.cpython-311.pyc").write_bytes(b"\0" * 16)
    found = known(watched, bytecode=True)
    assert found.how in ("walk", "kept")  # walked: the kept tree may still be the answer
    assert found.bytecode == ("pkg/__pycache__",)


def test_monitor_not_trusted_with_submodules(watched: Path) -> None:
    (watched / ".gitmodules").write_text("")
    known(watched)
    assert known(watched).how == "kept"  # never "monitor": a submodule's HEAD moves unseen


def test_monitor_not_trusted_with_a_gitlink(watched: Path) -> None:
    """A repository added with plain ``git add`` (no ``.gitmodules``) is a gitlink all the
    same: its HEAD can move where Watchman does not look (a git dir kept elsewhere)."""
    lib, elsewhere = watched / "lib", watched.parent / "lib.git"
    lib.mkdir()
    git(lib, "-c", "init.defaultBranch=main", "init", "-q", "--separate-git-dir", str(elsewhere))
    (lib / "f.txt").write_text("f\n")
    commit_all(lib, "one")
    git(lib, "commit", "-q", "--allow-empty", "-m", "two: the same files")
    git(watched, "add", "lib")
    commit_all(watched, "a gitlink")
    known(watched)
    known(watched)
    git(lib, "checkout", "-q", "HEAD~1")  # writes no file of the work tree
    assert known(watched).how != "monitor"  # and the tree is git's (known checks it)


def test_monitor_not_trusted_where_its_watch_leaves_folders_out(watched: Path) -> None:
    """A ``.watchmanconfig`` whose ``ignore_dirs`` names a folder of the work tree: Watchman
    never names what changes there, so its silence stands for no walk."""
    (watched / ".watchmanconfig").write_text('{"ignore_dirs": ["pkg"]}\n')
    known(watched)
    assert known(watched).how == "kept"
    (watched / "pkg" / "mod.py").write_text("X = 9\n")
    assert known(watched).how == "walk"  # the edit is seen (and the tree is git's)


def test_monitor_not_trusted_where_watchmans_own_configuration_leaves_folders_out(
    watched: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Watchman's configuration of every watch (``/etc/watchman.json``, or the file
    ``WATCHMAN_CONFIG_FILE`` names) with ``ignore_dirs``: `get-config` answers with the root's
    ``.watchmanconfig`` alone, so the watch was trusted, and an edit in a folder it leaves out
    went unseen (the kept tree bound to a run of another). Its silence stands for no walk."""
    config = tmp_path / "watchman.json"
    config.write_text('{"ignore_dirs": ["pkg"]}\n')
    monkeypatch.setenv("WATCHMAN_CONFIG_FILE", str(config))
    known(watched)
    assert known(watched).how == "kept"
    monkeypatch.setenv("WATCHMAN_CONFIG_FILE", str(tmp_path / "none.json"))  # control
    known(watched)
    assert known(watched).how == "monitor"


@pytest.mark.parametrize("vcs", [".hg", ".svn"])
def test_monitor_not_trusted_with_another_vcs_folder_at_the_top(watched: Path, vcs: str) -> None:
    """Watchman leaves the version-control folders at the root of its watch out (ignore_vcs):
    a Mercurial or Subversion folder git tracks at the top of the work tree (fixtures, a
    repository kept in both systems) changes unseen, so its silence stands for no walk."""
    (watched / vcs / "store").mkdir(parents=True)
    (watched / vcs / "store" / "data.i").write_text("revision 1\n")
    commit_all(watched, f"a {vcs} fixture")
    known(watched)
    assert known(watched).how == "kept"
    (watched / vcs / "store" / "data.i").write_text("revision 2\n")
    assert known(watched).how == "walk"  # the edit is seen (and the tree is git's)


def test_status_with_the_monitor_is_git_tree(watched: Path, genstamp: RunGenstamp) -> None:
    for _ in range(3):
        settle()
        code, out, _err = genstamp("-C", str(watched), "status", "--json")
        assert code == 0
        assert json.loads(out)["tree"] == git_tree(watched)
    (watched / "pkg" / "mod.py").write_text("X = 5\n")
    settle()
    code, out, _err = genstamp("-C", str(watched), "status", "--json")
    assert json.loads(out)["tree"] == git_tree(watched)


def test_monitor_intent_to_add_edits_match_git(watched: Path) -> None:
    git(watched, "add", "-N", "new.py")
    known(watched)
    assert known(watched).how == "monitor"
    (watched / "new.py").write_text("N = 6\n")
    known(watched)
    os.utime(watched / "new.py")  # a touch alone: the index still holds no blob of it
    known(watched)


def test_monitor_kept_socket_gone_asks_watchman_where_it_is(watched: Path) -> None:
    known(watched)
    where = idcache.path(open_checkout(watched))
    data = json.loads(where.read_bytes())
    assert data["clock"][3], "the socket is kept with the clock"
    data["clock"][3] = str(watched / "gone.sock")
    where.write_text(json.dumps(data))
    assert known(watched).how == "monitor"


def test_monitor_sees_an_edit_of_a_relative_excludes_file_from_a_subfolder(
    watched: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``core.excludesFile`` relative names a file at the top of the work tree (git runs
    there): asked from a subfolder, its edit still changes the settings, and the tree is
    walked again, as git's oracle says it changed."""
    git(watched, "config", "core.excludesFile", ".myignore")
    (watched / ".myignore").write_text(".myignore\n")
    monkeypatch.chdir(watched / "pkg")
    known(watched)
    assert known(watched).how == "monitor"
    with open(watched / ".myignore", "a") as fh:
        fh.write("new.py\n")  # an untracked file of the tree is now ignored: another tree
    assert known(watched).how == "walk"
