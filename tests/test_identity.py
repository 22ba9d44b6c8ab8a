"""Tree identity: genstamp's libgit2 answer must equal git's own (`git add -A && git write-tree`
on a scratch index), and computing it must leave the index, the work tree and the refs alone."""

from __future__ import annotations

import hashlib
import os
import posixpath
import shutil
import stat
import tempfile
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import (
    commit_all,
    exclude,
    git,
    git_tree,
    init_repo,
    replay,
    repository_property,
    same_as_git,
)
from hypothesis import given
from hypothesis import strategies as st
from identity_modes import identity_mode, kept_as_the_test_runs  # noqa: F401 - autouse

from genstamp import identity
from genstamp.identity import scan, split_plan, tree_identity
from genstamp.repo import open_checkout


def ours(path: Path) -> str:
    """The identity from one walk, checked against the same walk split in parts and against
    the identity from the record kept in the git dir (with the monitor in the watchman mode)."""
    checkout = open_checkout(path)
    whole = tree_identity(checkout)
    split = scan(checkout, jobs=3, split_above=0).tree
    assert split == whole, f"split walk {split} != one walk {whole}"
    for kept in kept_as_the_test_runs(path):
        assert kept.tree == whole, f"identity known by {kept.how} {kept.tree} != walk {whole}"
    return whole


def head_tree(path: Path) -> str:
    return git(path, "rev-parse", "HEAD^{tree}")


def assert_same(path: Path) -> str:
    """genstamp's identity equals git's; returns it. git is asked first: its answer leaves the
    work tree and the index as they are, and the racy window the kept walks wait out (from
    the last write) passes while it works."""
    theirs = git_tree(path)
    return same_as_git(path, ours(path), theirs)


@pytest.fixture
def base(repo: Path) -> Path:
    """A committed repository with a few files and folders."""
    (repo / "a.txt").write_text("alpha\n")
    (repo / "pkg" / "sub").mkdir(parents=True)
    (repo / "pkg" / "__init__.py").write_text("")
    (repo / "pkg" / "mod.py").write_text("X = 1\n")
    (repo / "pkg" / "sub" / "deep.txt").write_text("deep\n")
    (repo / "run.sh").write_text("#!/bin/sh\necho hi\n")
    (repo / "run.sh").chmod(0o755)
    commit_all(repo, "base")
    return repo


# --- one case per kind of change ------------------------------------------------------------


def test_clean_tree_is_head_tree(base: Path) -> None:
    assert assert_same(base) == head_tree(base)


def test_modified_file(base: Path) -> None:
    (base / "pkg" / "mod.py").write_text("X = 2\n")
    assert assert_same(base) != head_tree(base)


def test_modified_same_size_same_second(base: Path) -> None:
    """Same size, mtime forced back to the committed one: only the content tells them apart."""
    target = base / "pkg" / "mod.py"
    st_before = target.stat()
    target.write_text("X = 3\n")
    os.utime(target, ns=(st_before.st_atime_ns, st_before.st_mtime_ns))
    assert assert_same(base) != head_tree(base)


def test_staged_then_modified_again(base: Path) -> None:
    target = base / "pkg" / "mod.py"
    target.write_text("X = 2\n")
    git(base, "add", "pkg/mod.py")
    staged = git(base, "write-tree")
    target.write_text("X = 3\n")  # the same `git status` line as before: M
    tree = assert_same(base)
    assert tree != staged
    assert tree != head_tree(base)


def test_staged_then_reverted_in_work_tree(base: Path) -> None:
    target = base / "pkg" / "mod.py"
    target.write_text("X = 2\n")
    git(base, "add", "pkg/mod.py")
    target.write_text("X = 1\n")
    assert assert_same(base) == head_tree(base)


def test_deleted_file(base: Path) -> None:
    (base / "pkg" / "sub" / "deep.txt").unlink()
    assert assert_same(base) != head_tree(base)


def test_deleted_folder_and_staged_deletion(base: Path) -> None:
    shutil.rmtree(base / "pkg" / "sub")
    git(base, "rm", "-q", "--cached", "a.txt")  # staged deletion, file still on disk
    assert assert_same(base) != head_tree(base)


def test_git_rm_keeps_it_gone(base: Path) -> None:
    git(base, "rm", "-q", "a.txt")
    assert not (base / "a.txt").exists()
    assert assert_same(base) != head_tree(base)


def test_renamed_with_git_mv(base: Path) -> None:
    git(base, "mv", "pkg/mod.py", "pkg/renamed.py")
    assert assert_same(base) != head_tree(base)


def test_renamed_with_plain_mv(base: Path) -> None:
    (base / "pkg" / "mod.py").rename(base / "pkg" / "sub" / "moved.py")
    (base / "pkg" / "sub").rename(base / "other")
    assert assert_same(base) != head_tree(base)


def test_untracked_files_in_new_nested_folders(base: Path) -> None:
    (base / "new" / "deeper" / "deepest").mkdir(parents=True)
    (base / "new" / "deeper" / "deepest" / "leaf.txt").write_text("leaf\n")
    (base / "new" / "top.txt").write_text("top\n")
    (base / "pkg" / "sub" / "more").mkdir()
    (base / "pkg" / "sub" / "more" / "x.py").write_text("")
    assert assert_same(base) != head_tree(base)


def test_nested_gitignore(base: Path) -> None:
    (base / "pkg" / ".gitignore").write_text("*.log\nbuild/\n!keep.log\n")
    commit_all(base, "ignore rules")
    (base / "pkg" / "debug.log").write_text("noise\n")
    (base / "pkg" / "sub" / "deeper.log").write_text("noise\n")
    (base / "pkg" / "build" / "lib").mkdir(parents=True)
    (base / "pkg" / "build" / "lib" / "out.txt").write_text("out\n")
    (base / "top.log").write_text("not ignored at the top\n")
    (base / "pkg" / "keep.log").write_text("negated: kept\n")
    tree = assert_same(base)
    assert tree != head_tree(base)
    (base / "top.log").unlink()
    (base / "pkg" / "keep.log").unlink()
    assert assert_same(base) == head_tree(base)


def test_info_exclude(base: Path) -> None:
    exclude(base, "secret*", "/local/")
    (base / "secret.txt").write_text("s\n")
    (base / "pkg" / "secret.py").write_text("s\n")
    (base / "local").mkdir()
    (base / "local" / "f").write_text("f\n")
    assert assert_same(base) == head_tree(base)


def test_core_excludes_file(base: Path, tmp_path: Path) -> None:
    excludes = tmp_path / "global-ignore"
    excludes.write_text("*.tmp\n.idea/\n")
    git(base, "config", "core.excludesFile", str(excludes))
    (base / "scratch.tmp").write_text("t\n")
    (base / ".idea").mkdir()
    (base / ".idea" / "ws.xml").write_text("<x/>\n")
    (base / "pkg" / "sub" / "also.tmp").write_text("t\n")
    assert assert_same(base) == head_tree(base)
    (base / "visible.txt").write_text("v\n")
    assert assert_same(base) != head_tree(base)


@pytest.mark.parametrize(
    ("parent", "child", "folder"),
    [
        ("lib/", "!lib/", "lib"),  # GitHub's Python template ignores lib/; a package has one
        ("c/", "!c", "c"),
        ("pkg/**/c/", "!c", "c"),
        ("pkg/b/", "!b/", "b"),
    ],
)
def test_a_negation_below_re_includes_a_folder_a_parent_ignores(
    base: Path, parent: str, child: str, folder: str
) -> None:
    """A ``.gitignore`` deeper down takes precedence for its folder: git adds an untracked
    file there; libgit2 alone leaves it out (its status lists nothing)."""
    (base / ".gitignore").write_text(parent + "\n")
    (base / "pkg" / ".gitignore").write_text(child + "\n")
    commit_all(base, "ignore rules")
    (base / "pkg" / folder).mkdir()
    (base / "pkg" / folder / "new.py").write_text("Y = 1\n")
    assert assert_same(base) != head_tree(base)


@pytest.mark.parametrize("where", [".gitignore", "pkg/.gitignore"])
def test_a_gitignore_that_is_a_symbolic_link_is_not_followed(base: Path, where: str) -> None:
    """git (2.32 and later) does not follow a ``.gitignore`` that is a symbolic link, so the
    files its target names are untracked, not ignored, and ``git add -A`` takes them; libgit2
    follows the link, and git's own list decides."""
    (base / "ignore-rules.txt").write_text("data.json\n")
    os.symlink(os.path.relpath(base / "ignore-rules.txt", (base / where).parent), base / where)
    commit_all(base, "ignore rules through a link")
    (base / "pkg" / "data.json").write_text("{}\n")
    assert assert_same(base) != head_tree(base)


@pytest.mark.parametrize("rule", ["link", "negation", "ignored-negation"])
@pytest.mark.parametrize("where", ["conf/.gitignore", "pkg/.gitignore"])
def test_an_untracked_gitignore_whose_rules_libgit2_reads_otherwise(
    base: Path, where: str, rule: str
) -> None:
    """An untracked ``.gitignore`` (a new folder with a shared ignore file linked in, or one
    holding a negation), as the tracked ones are: git does not follow the link, and the files
    its target names are added; a negation re-includes what a parent's rule ignores. libgit2
    alone left them out: a green run of one tree, a push of another."""
    (base / "conf").mkdir(exist_ok=True)
    (base / "shared.gitignore").write_text("*.cfg\n")
    commit_all(base, "a shared ignore file")
    if rule == "link":
        os.symlink(os.path.relpath(base / "shared.gitignore", (base / where).parent), base / where)
    else:  # (the rule file itself ignored too: a negation git reads all the same)
        hidden = f"{where}\n" if rule == "ignored-negation" else ""
        (base / ".gitignore").write_text(f"*.cfg\n{hidden}")
        commit_all(base, "no configuration files")
        (base / where).write_text("!local.cfg\n")
    (base / where).parent.joinpath("local.cfg").write_text("x = 1\n")
    assert assert_same(base) != head_tree(base)


def test_tracked_file_that_matches_an_ignore_rule(base: Path) -> None:
    (base / ".gitignore").write_text("a.txt\n")
    (base / "a.txt").write_text("changed but ignored: still tracked\n")
    assert assert_same(base) != head_tree(base)


def test_executable_bit_set_and_cleared(base: Path) -> None:
    (base / "pkg" / "mod.py").chmod(0o755)
    (base / "run.sh").chmod(0o644)
    assert assert_same(base) != head_tree(base)
    (base / "pkg" / "mod.py").chmod(0o644)
    (base / "run.sh").chmod(0o755)
    assert assert_same(base) == head_tree(base)


def test_executable_bit_on_new_file(base: Path) -> None:
    (base / "tool").write_text("#!/bin/sh\n")
    (base / "tool").chmod(0o700)
    assert assert_same(base) != head_tree(base)


def test_core_filemode_false(base: Path) -> None:
    """With core.filemode=false git keeps the mode the index has, whatever the disk says."""
    git(base, "config", "core.filemode", "false")
    (base / "run.sh").chmod(0o644)  # tracked as 755: stays 755
    (base / "pkg" / "mod.py").chmod(0o755)  # tracked as 644: stays 644
    assert assert_same(base) == head_tree(base)
    (base / "run.sh").write_text("#!/bin/sh\necho changed\n")  # modified content, still 755
    (base / "pkg" / "mod.py").write_text("X = 5\n")
    (base / "new.sh").write_text("#!/bin/sh\n")
    (base / "new.sh").chmod(0o755)  # a new file is 644 when the bit is not trusted
    tree = assert_same(base)
    assert tree != head_tree(base)


def test_core_symlinks_false(base: Path) -> None:
    """Where links are not trusted git keeps a tracked link a link, whatever the disk holds."""
    (base / "link").symlink_to("a.txt")
    commit_all(base, "link")
    git(base, "config", "core.symlinks", "false")
    (base / "link").unlink()
    (base / "link").write_text("a.txt")  # how git checks a link out without symlinks
    assert assert_same(base) == head_tree(base)
    (base / "link").write_text("run.sh")  # retargeted
    assert assert_same(base) != head_tree(base)


def test_symlinks(base: Path) -> None:
    (base / "to-file").symlink_to("a.txt")
    (base / "to-dir").symlink_to("pkg")
    (base / "dangling").symlink_to("does/not/exist")
    (base / "pkg" / "up").symlink_to("../run.sh")
    assert assert_same(base) != head_tree(base)
    commit_all(base, "links")
    # retarget, and replace a link by a file and a file by a link
    (base / "to-file").unlink()
    (base / "to-file").symlink_to("run.sh")
    (base / "dangling").unlink()
    (base / "dangling").write_text("now a file\n")
    (base / "a.txt").unlink()
    (base / "a.txt").symlink_to("pkg/mod.py")
    assert assert_same(base) != head_tree(base)


def test_symlink_to_folder_replacing_folder(base: Path) -> None:
    shutil.rmtree(base / "pkg" / "sub")
    (base / "pkg" / "sub").symlink_to("..")
    assert assert_same(base) != head_tree(base)


@pytest.mark.parametrize("rule", ["out/", "out/\nbuild\n"])
def test_a_link_a_folder_only_pattern_names_is_not_ignored(base: Path, rule: str) -> None:
    """git matches a folder-only pattern (``out/``) against folders, not a symbolic link to
    one (a ``.venv`` or ``build`` kept elsewhere): ``git add -A`` adds the link; libgit2
    ignores it."""
    (base / "real").mkdir()
    (base / "real" / "f.txt").write_text("f\n")
    (base / "out").symlink_to("real")
    (base / ".gitignore").write_text(rule)
    tree = assert_same(base)
    assert git(base, "ls-tree", "--name-only", tree, "out") == "out"


@pytest.mark.parametrize("dotgit", ["stale-gitfile", "empty-folder"])
def test_a_folder_whose_git_is_no_repository_is_a_folder(base: Path, dotgit: str) -> None:
    """A copied submodule's ``.git`` file naming a git dir that is gone, or an empty ``.git``
    folder: git takes the folder for a plain one and adds its files; libgit2 for a
    repository."""
    vendored = base / "vendor" / "lib"
    vendored.mkdir(parents=True)
    (vendored / "mod.py").write_text("x = 1\n")
    if dotgit == "stale-gitfile":
        (vendored / ".git").write_text("gitdir: ../../.git/modules/lib\n")
    else:
        (vendored / ".git").mkdir()
    tree = assert_same(base)
    assert git(base, "ls-tree", "-r", "--name-only", tree, "vendor") == "vendor/lib/mod.py"


def test_tracked_folder_replaced_by_symlink(base: Path) -> None:
    """git never looks through a link in the leading path, even when the file is there."""
    (base / "pkg" / "sub").rename(base / "elsewhere")
    (base / "elsewhere" / "deep.txt").write_text("seen through the link\n")
    (base / "pkg" / "sub").symlink_to("../elsewhere")
    assert (base / "pkg" / "sub" / "deep.txt").is_file()
    assert assert_same(base) != head_tree(base)


def test_tracked_folder_replaced_by_symlink_loop(base: Path) -> None:
    shutil.rmtree(base / "pkg")
    (base / "pkg").symlink_to("pkg")
    assert assert_same(base) != head_tree(base)


def test_ignored_symlink_loop_over_tracked_folder(base: Path) -> None:
    """git cannot lstat `pkg/mod.py` (ELOOP): it reports it and keeps the index entries."""
    shutil.rmtree(base / "pkg")
    (base / "pkg").symlink_to("pkg")
    (base / ".gitignore").write_text("/pkg\n")
    tree = assert_same(base)
    assert git(base, "ls-tree", "-r", "--name-only", tree, "pkg") != ""
    (base / ".gitignore").unlink()  # now `git add -A` adds the link, which replaces the folder
    tree = assert_same(base)
    assert git(base, "ls-tree", tree, "pkg").split()[0] == "120000"


def test_empty_folders_do_not_count(base: Path) -> None:
    (base / "empty").mkdir()
    (base / "pkg" / "sub" / "also-empty" / "nested-empty").mkdir(parents=True)
    assert assert_same(base) == head_tree(base)


def test_names_with_spaces_unicode_and_newline(base: Path) -> None:
    (base / "with space").mkdir()
    (base / "with space" / "a file.txt").write_text("s\n")
    (base / "ünïcödé-ファイル.txt").write_text("u\n")
    (base / "line\nbreak.txt").write_text("n\n")
    (base / 'quote"and\\back\ttab').write_text("q\n")
    tree = assert_same(base)
    assert tree != head_tree(base)
    commit_all(base, "odd names")
    (base / "line\nbreak.txt").write_text("changed\n")
    (base / "ünïcödé-ファイル.txt").unlink()
    assert assert_same(base) != head_tree(base)


def test_unborn_head_empty(repo: Path) -> None:
    assert not (repo / ".git" / "index").exists()
    assert assert_same(repo) == git(repo, "hash-object", "-t", "tree", "/dev/null")


def test_unborn_head_with_files(repo: Path) -> None:
    (repo / "f.txt").write_text("f\n")
    (repo / "d").mkdir()
    (repo / "d" / "g.txt").write_text("g\n")
    first = assert_same(repo)
    git(repo, "add", "f.txt")  # an index now exists, HEAD still unborn
    assert assert_same(repo) == first
    (repo / "f.txt").write_text("changed after staging\n")
    assert assert_same(repo) != first


def test_detached_head(base: Path) -> None:
    first = git(base, "rev-parse", "HEAD")
    (base / "a.txt").write_text("second\n")
    commit_all(base, "second")
    git(base, "checkout", "-q", "--detach", first)
    assert git(base, "symbolic-ref", "-q", "HEAD", check=False) == ""
    assert assert_same(base) == head_tree(base)
    (base / "pkg" / "mod.py").write_text("detached edit\n")
    assert assert_same(base) != head_tree(base)


def test_linked_worktree(base: Path, tmp_path: Path) -> None:
    wt = tmp_path / "linked wt"
    git(base, "worktree", "add", "-q", "-b", "side", str(wt))
    checkout = open_checkout(wt)
    assert checkout.workdir == wt.resolve()
    assert checkout.gitdir != (base / ".git").resolve()
    assert assert_same(wt) == head_tree(wt)
    (wt / "a.txt").write_text("only in the linked worktree\n")
    (wt / "new.txt").write_text("new\n")
    in_wt = assert_same(wt)
    assert in_wt != head_tree(wt)
    # the main worktree is untouched by what happens in the linked one, and vice versa
    assert assert_same(base) == head_tree(base)
    (base / "pkg" / "mod.py").write_text("main edit\n")
    assert assert_same(wt) == in_wt


def test_subdirectory_of_the_work_tree(base: Path) -> None:
    (base / "a.txt").write_text("changed\n")
    assert ours(base / "pkg" / "sub") == git_tree(base)


def _make_submodule_source(tmp_path: Path) -> tuple[Path, str, str]:
    src = init_repo(tmp_path / "sub-src")
    (src / "lib.txt").write_text("v1\n")
    first = commit_all(src, "v1")
    (src / "lib.txt").write_text("v2\n")
    second = commit_all(src, "v2")
    return src, first, second


def test_submodule(base: Path, tmp_path: Path) -> None:
    src, first, second = _make_submodule_source(tmp_path)
    git(base, "-c", "protocol.file.allow=always", "submodule", "add", "-q", str(src), "vendor/lib")
    # staged but not committed
    assert assert_same(base) != head_tree(base)
    commit_all(base, "add submodule")
    assert assert_same(base) == head_tree(base)
    assert git(base, "ls-tree", "HEAD", "vendor/lib").split()[2] == second

    # move the submodule's HEAD without staging it in the superproject
    git(base / "vendor" / "lib", "checkout", "-q", first)
    moved = assert_same(base)
    assert moved != head_tree(base)

    # a dirty submodule work tree does not change the gitlink
    (base / "vendor" / "lib" / "lib.txt").write_text("dirty\n")
    (base / "vendor" / "lib" / "untracked.txt").write_text("u\n")
    assert assert_same(base) == moved

    # back at the recorded commit
    git(base / "vendor" / "lib", "checkout", "-q", "-f", second)
    assert assert_same(base) == head_tree(base)


@pytest.mark.parametrize("where", [".gitmodules", "config"])
def test_a_submodule_set_to_ignore_all_still_counts_its_commit(
    base: Path, tmp_path: Path, where: str
) -> None:
    """``submodule.<name>.ignore = all`` hides a moved submodule from `git status` and `git add`;
    its checked-out commit is what the tests run, so the identity records it all the same."""
    src, first, second = _make_submodule_source(tmp_path)
    git(base, "-c", "protocol.file.allow=always", "submodule", "add", "-q", str(src), "lib")
    file = ["--file", ".gitmodules"] if where == ".gitmodules" else []
    git(base, "config", *file, "submodule.lib.ignore", "all")
    commit_all(base, "add submodule, ignored")
    assert assert_same(base) == head_tree(base)
    git(base / "lib", "checkout", "-q", first)
    assert git(base, "status", "--porcelain") == ""  # git hides it
    moved = assert_same(base)
    assert git(base, "ls-tree", moved, "lib").split()[2] == first
    git(base / "lib", "checkout", "-q", second)
    assert assert_same(base) == head_tree(base)


def test_submodule_removed_from_disk(base: Path, tmp_path: Path) -> None:
    src, _, _ = _make_submodule_source(tmp_path)
    git(base, "-c", "protocol.file.allow=always", "submodule", "add", "-q", str(src), "lib")
    commit_all(base, "add submodule")
    shutil.rmtree(base / "lib")
    assert assert_same(base) != head_tree(base)


def test_submodule_not_checked_out(base: Path, tmp_path: Path) -> None:
    """An uninitialised submodule (an empty folder, as a clone leaves it) keeps its gitlink."""
    src, _, _ = _make_submodule_source(tmp_path)
    git(base, "-c", "protocol.file.allow=always", "submodule", "add", "-q", str(src), "lib")
    commit_all(base, "add submodule")
    git(base, "submodule", "deinit", "-q", "-f", "lib")
    assert (base / "lib").is_dir() and not any((base / "lib").iterdir())
    assert assert_same(base) == head_tree(base)


def test_untracked_nested_repository(base: Path) -> None:
    nested = init_repo(base / "nested")
    (nested / "n.txt").write_text("n\n")
    commit_all(nested, "nested")
    (nested / "dirty.txt").write_text("dirty\n")
    tree = assert_same(base)
    assert tree != head_tree(base)
    assert git(base, "ls-tree", tree, "nested").split()[:3] == [
        "160000",
        "commit",
        git(nested, "rev-parse", "HEAD"),
    ]


def test_a_tracked_nested_repository_without_gitmodules(base: Path) -> None:
    """A repository added with plain `git add` (a gitlink, no ``.gitmodules``): a commit inside
    it moves its gitlink, though only its own git dir changed on disk."""
    nested = init_repo(base / "nested")
    (nested / "n.txt").write_text("n\n")
    commit_all(nested, "nested")
    commit_all(base, "add nested")
    assert not (base / ".gitmodules").exists()
    assert assert_same(base) == head_tree(base)
    (nested / "n.txt").write_text("n2\n")
    assert assert_same(base) == head_tree(base)  # its work tree is not its commit
    moved = commit_all(nested, "n2")
    tree = assert_same(base)
    assert git(base, "ls-tree", tree, "nested").split()[2] == moved


def _conflicted(base: Path) -> None:
    """Leave `base` mid-merge with content, modify/delete and add/add conflicts."""
    git(base, "checkout", "-q", "-b", "theirs")
    (base / "a.txt").write_text("theirs\n")
    (base / "pkg" / "mod.py").unlink()
    (base / "both.txt").write_text("theirs\n")
    commit_all(base, "theirs")
    git(base, "checkout", "-q", "main")
    (base / "a.txt").write_text("ours\n")
    (base / "pkg" / "mod.py").write_text("X = 'ours'\n")
    (base / "both.txt").write_text("ours\n")
    commit_all(base, "ours")
    out = git(base, "merge", "-q", "theirs", check=False)
    assert "CONFLICT" in out, out
    assert git(base, "ls-files", "-u"), "expected conflict entries in the index"


def test_merge_conflict(base: Path) -> None:
    _conflicted(base)
    assert assert_same(base) != head_tree(base)


def test_merge_conflict_resolved_by_deleting(base: Path) -> None:
    _conflicted(base)
    (base / "pkg" / "mod.py").unlink()  # modify/delete conflict, resolved as delete on disk
    (base / "both.txt").unlink()  # add/add conflict, file gone
    assert assert_same(base) != head_tree(base)


def test_intent_to_add(base: Path) -> None:
    (base / "later.txt").write_text("content\n")
    (base / "empty-later.txt").write_text("")
    git(base, "add", "-N", "later.txt", "empty-later.txt")
    assert assert_same(base) != head_tree(base)
    (base / "later.txt").unlink()
    (base / "empty-later.txt").unlink()
    assert assert_same(base) == head_tree(base)


def test_file_replaced_by_folder_and_back(base: Path) -> None:
    (base / "a.txt").unlink()
    (base / "a.txt").mkdir()
    (base / "a.txt" / "inner").write_text("i\n")
    assert assert_same(base) != head_tree(base)
    shutil.rmtree(base / "pkg" / "sub")
    (base / "pkg" / "sub").write_text("a file where a folder was\n")
    assert assert_same(base) != head_tree(base)


def test_tracked_folder_replaced_by_a_file(base: Path) -> None:
    shutil.rmtree(base / "pkg")
    (base / "pkg").write_text("")
    assert assert_same(base) != head_tree(base)
    (base / "a.txt").unlink()  # libgit2's file/folder collision handling depends on position
    assert assert_same(base) != head_tree(base)
    (base / "pkg").unlink()
    (base / "pkg").symlink_to("run.sh")
    assert assert_same(base) != head_tree(base)


def test_gitattributes_text_conversion(base: Path) -> None:
    (base / ".gitattributes").write_text("*.txt text eol=lf\n")
    (base / "crlf.txt").write_bytes(b"one\r\ntwo\r\n")
    assert assert_same(base) != head_tree(base)


# --- a walk split in parts -------------------------------------------------------------------


def test_split_walk_names_what_only_the_index_or_only_the_disk_has(base: Path) -> None:
    """The parts of a split walk cover tracked folders deleted from disk (at the top, and
    inside a folder the split opens) and untracked ones, and the split walk's identity is
    git's."""
    for folder in ["big", "big/sub", "gone"]:
        (base / folder).mkdir()
        for n in range(6):
            (base / folder / f"f{n}.txt").write_text(f"{n}\n")
    commit_all(base, "big")
    shutil.rmtree(base / "gone")  # on the index only
    shutil.rmtree(base / "big" / "sub")  # on the index only, inside the folder split up
    (base / "big" / "f0.txt").write_text("changed\n")
    (base / "fresh" / "inner").mkdir(parents=True)  # on disk only
    (base / "fresh" / "inner" / "new.txt").write_text("new\n")
    plan = split_plan(open_checkout(base), 2)
    assert plan is not None and len(plan) == 2
    named = [name for part in plan for name in part]
    assert len(named) == len(set(named))  # no path walked twice
    assert "big" not in named  # opened up: its entries are named one by one
    for path in ["gone/f1.txt", "big/sub/f1.txt", "fresh/inner/new.txt", "big/f0.txt", "a.txt"]:
        assert any(path == n or path.startswith(n + "/") for n in named), (path, named)
    assert scan(open_checkout(base), jobs=2, split_above=0).tree == git_tree(base)


def test_split_walk_is_not_split_when_small_or_asked_once(base: Path) -> None:
    assert split_plan(open_checkout(base), 1) is None
    (base / "only").write_text("x\n")
    git(base, "config", "core.ignorecase", "true")
    assert split_plan(open_checkout(base), 2) is None  # a case-folded index order: one walk


# --- computing the identity changes nothing ----------------------------------------------------


def _snapshot(path: Path) -> dict[str, object]:
    gitdir = Path(git(path, "rev-parse", "--absolute-git-dir"))
    common = Path(git(path, "rev-parse", "--path-format=absolute", "--git-common-dir"))
    index = gitdir / "index"
    files: dict[str, tuple[int, int, int, str]] = {}
    for root, dirs, names in os.walk(path):
        dirs[:] = [d for d in dirs if d != ".git"]
        for name in [*names, *dirs]:
            full = os.path.join(root, name)
            st_ = os.lstat(full)
            digest = ""
            if stat.S_ISREG(st_.st_mode):
                digest = hashlib.sha256(Path(full).read_bytes()).hexdigest()
            elif stat.S_ISLNK(st_.st_mode):
                digest = os.readlink(full)
            files[os.path.relpath(full, path)] = (st_.st_mode, st_.st_size, st_.st_mtime_ns, digest)
    return {
        "index": (index.read_bytes(), index.stat().st_mtime_ns) if index.exists() else None,
        "head": (gitdir / "HEAD").read_bytes(),
        "refs": git(path, "for-each-ref", "--format=%(refname) %(objectname) %(symref)"),
        "packed": (common / "packed-refs").read_bytes()
        if (common / "packed-refs").exists()
        else None,
        "git-files": sorted(
            p.name for p in gitdir.iterdir() if p.is_file() and p.name != "oracle-index"
        ),
        "work": files,
    }


def test_identity_changes_nothing(base: Path) -> None:
    (base / "pkg" / "mod.py").write_text("X = 2\n")
    git(base, "add", "pkg/mod.py")
    (base / "pkg" / "mod.py").write_text("X = 3\n")
    (base / "untracked" / "deep").mkdir(parents=True)
    (base / "untracked" / "deep" / "u.txt").write_text("u\n")
    (base / "a.txt").unlink()
    (base / "link").symlink_to("run.sh")
    (base / "run.sh").chmod(0o644)
    git(base, "status", "--porcelain")  # let git refresh the index first, as a user would
    before = _snapshot(base)
    for _ in range(2):
        tree = ours(base)
    assert _snapshot(base) == before
    assert tree == git_tree(base)
    assert tree != head_tree(base)


def test_identity_changes_nothing_unborn(repo: Path) -> None:
    (repo / "f.txt").write_text("f\n")
    before = _snapshot(repo)
    ours(repo)
    assert _snapshot(repo) == before
    assert not (repo / ".git" / "index").exists()


def test_identity_changes_nothing_in_conflict(base: Path) -> None:
    _conflicted(base)
    before = _snapshot(base)
    ours(base)
    assert _snapshot(base) == before
    assert git(base, "ls-files", "-u")  # still unresolved


# --- property: random mutation sequences ----------------------------------------------------

NAMES = ["a", "b.txt", "d/a", "d/e/f", "d/e/g h", "ñ/ü", "x/y/z.py", "d"]
CONTENTS = ["", "1", "2", "hello\n", "hellp\n", "#!/bin/sh\n"]
PATTERNS = ["*.txt", "e/", "a", "!a", "/d", "*.py", "z*"]

Op = tuple[str, int, int]


def _remove(p: Path) -> None:
    if p.is_symlink() or p.is_file():
        p.unlink()
    elif p.is_dir():
        shutil.rmtree(p)


def _clear_way(root: Path, rel: str) -> Path:
    """Make room for ``rel``: parents become folders, whatever stood there goes."""
    target = root / rel
    parent = root
    for part in Path(rel).parts[:-1]:
        parent = parent / part
        if parent.is_symlink() or parent.is_file():
            parent.unlink()
    target.parent.mkdir(parents=True, exist_ok=True)
    _remove(target)
    return target


def _apply(root: Path, op: Op) -> None:
    kind, i, j = op
    name = NAMES[i % len(NAMES)]
    target = root / name
    if kind == "write":
        _clear_way(root, name).write_text(CONTENTS[j % len(CONTENTS)])
    elif kind == "modify":
        if target.is_file() and not target.is_symlink():
            target.write_text(CONTENTS[j % len(CONTENTS)])
    elif kind == "delete":
        _remove(target)
    elif kind == "rename":
        dest = NAMES[j % len(NAMES)]
        if (
            (target.exists() or target.is_symlink())
            and dest != name
            and not dest.startswith(name + "/")
        ):
            moving = root / "moving"
            target.rename(moving)
            _clear_way(root, dest)
            moving.rename(root / dest)
    elif kind == "chmod":
        if target.is_file() and not target.is_symlink():
            target.chmod(0o755 if j % 2 else 0o644)
    elif kind == "symlink":
        link_to = [NAMES[j % len(NAMES)], "missing", "d", ".."][j % 4]
        _clear_way(root, name).symlink_to(link_to)
    elif kind == "mkdir":
        dest = _clear_way(root, name)
        dest.mkdir()
        if j % 2:
            (dest / "inner").write_text(CONTENTS[j % len(CONTENTS)])
    elif kind == "gitignore":
        folder = root / (["", "d", "d/e", "x"][j % 4])
        if folder.is_dir() and not folder.is_symlink():
            (folder / ".gitignore").write_text(PATTERNS[i % len(PATTERNS)] + "\n")
    elif kind == "stage":
        if j % 3 == 0:
            git(root, "add", "-A")
        elif j % 3 == 1:
            git(root, "add", "--", name, check=False)
        else:
            git(root, "add", "-N", "--", name, check=False)
    elif kind == "unstage":
        git(root, "rm", "-q", "-r", "--cached", "--", name, check=False)
    elif kind == "config":
        key = ["core.filemode", "core.symlinks"][i % 2]
        git(root, "config", key, "true" if j % 2 else "false")
    elif kind == "commit":
        git(root, "commit", "-q", "--allow-empty", "--no-verify", "-m", "step")
    else:  # pragma: no cover
        raise AssertionError(kind)


OPS = st.tuples(
    st.sampled_from(
        [
            "write",
            "modify",
            "delete",
            "rename",
            "chmod",
            "symlink",
            "mkdir",
            "gitignore",
            "stage",
            "unstage",
            "config",
            "commit",
        ]
    ),
    st.integers(0, 15),
    st.integers(0, 15),
)


@repository_property(25)
@given(ops=st.lists(OPS, min_size=1, max_size=14))
def test_random_mutations_match_git(ops: list[Op]) -> None:
    with tempfile.TemporaryDirectory(prefix="genstamp-prop-") as tmp:
        root = init_repo(Path(tmp) / "repo")
        (root / "d" / "e").mkdir(parents=True)
        (root / "d" / "e" / "f").write_text("seed\n")
        (root / "b.txt").write_text("seed\n")
        commit_all(root, "seed")
        assert_same(root)
        replay(root, ops, _apply, assert_same)


def test_property_helpers_really_mutate(tmp_path: Path) -> None:
    """The mutation vocabulary does change the tree (so the property test can fail)."""
    root = init_repo(tmp_path / "r")
    commit_all(root, "empty")
    seen = {assert_same(root)}
    ops: list[Callable[[], None]] = [
        lambda: _apply(root, ("write", 0, 3)),
        lambda: _apply(root, ("chmod", 0, 1)),
        lambda: _apply(root, ("symlink", 2, 1)),
        lambda: _apply(root, ("rename", 0, 6)),
        lambda: _apply(root, ("mkdir", 3, 1)),
    ]
    for op in ops:
        op()
        seen.add(assert_same(root))
    assert len(seen) == len(ops) + 1


def test_a_name_of_no_utf8_changed_since_the_kept_answer(base: Path) -> None:
    """A file named in no UTF-8 (`caf\\xe9`), changed after the identity was kept: with the
    monitor naming it, the rewrite of the kept tree raised UnicodeEncodeError (a traceback
    from `genstamp status`, probe G20); the tree is walked whole instead."""
    name = os.fsdecode(b"caf\xe9")
    (base / name).write_text("one\n")
    assert_same(base)
    (base / name).write_text("two, longer\n")
    (base / "a.txt").write_text("alpha, edited\n")
    assert_same(base)


def test_a_folder_whose_git_is_no_repository_after_the_kept_answer(base: Path) -> None:
    """`d1/.git` an empty folder: git enters d1 and adds d1/f, libgit2 takes d1 for a nested
    repository. With the monitor naming d1/f after a change, the rewrite of the kept tree
    dropped it (a tree without a file the tests could load, probe G20)."""
    (base / "d1" / ".git").mkdir(parents=True)
    (base / "d1" / "f").write_text("f\n")
    assert_same(base)
    (base / "d1" / "f").write_text("f, edited\n")
    assert_same(base)


@pytest.mark.parametrize("ignorecase", [False, True])
def test_the_modules_of_a_folder_are_found_in_the_index_as_git_lists_them(
    tmp_path: Path, ignorecase: bool
) -> None:
    """The modules directly in a folder, found by a binary search of libgit2's index: as `git
    ls-files` lists them (the oracle), also under ``core.ignorecase``, where libgit2 sorts the
    index without regard to case (an upper-case name sorts after ``pkg/`` then, before it as
    bytes: none of the folder's modules was found)."""
    repo = init_repo(tmp_path / "repo")
    files = ["ZA.txt", "Zb.py", "pkg-x.py", "pkg.py", "pkg/__init__.py", "pkg/Mod.py"]
    files += ["pkg/sub/deep.py", "pkg/z.txt", "pkg/~late.py", "top.py", "Pkg2/x.py"]
    for rel in files:
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        (repo / rel).write_text("")
    git(repo, "config", "core.ignorecase", str(ignorecase).lower())
    commit_all(repo, "files")
    listed = git(repo, "ls-files").splitlines()
    checkout = open_checkout(repo)
    raw = checkout.repo.index._index
    for folder in ("", "pkg", "pkg/sub", "Pkg2", "none"):
        found = sorted(identity._modules_in(raw, [folder], ignorecase))
        expected = sorted(p for p in listed if posixpath.dirname(p) == folder and p.endswith(".py"))
        assert found == expected, folder
