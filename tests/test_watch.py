"""The folder watch that spares the co-process a second walk: it may say "unchanged" only when
git's own answer (`git add -A && git write-tree`) is still the one from before the watch."""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from conftest import commit_all, exclude, git, git_tree, init_repo

from genstamp.repo import open_checkout
from genstamp.watch import Unavailable, Watch

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="inotify: Linux")


@pytest.fixture
def base(repo: Path) -> Path:
    (repo / ".gitignore").write_text("*.log\nbuild/\n")
    (repo / "pkg" / "sub").mkdir(parents=True)
    (repo / "pkg" / "mod.py").write_text("X = 1\n")
    (repo / "pkg" / "sub" / "deep.txt").write_text("deep\n")
    (repo / "build").mkdir()
    (repo / "build" / "kept.txt").write_text("tracked, though ignored\n")
    git(repo, "add", "-f", "build/kept.txt")
    (repo / "build" / "junk").mkdir()
    commit_all(repo, "base")
    return repo


@pytest.fixture
def watching(base: Path) -> Iterator[Callable[[], bool]]:
    """Starts a watch on ``base``; the fixture's value tells whether it still says unchanged,
    and checks that such an answer is git's (the tree from before is the tree now)."""
    before = git_tree(base)
    watch = Watch(open_checkout(base))

    def unchanged() -> bool:
        answer = watch.unchanged()
        if answer:
            assert git_tree(base) == before, "the watch said unchanged, git disagrees"
        return answer

    try:
        yield unchanged
    finally:
        watch.close()


def test_nothing_done_is_unchanged(watching: Callable[[], bool], base: Path) -> None:
    (base / "pkg" / "mod.py").read_text()  # reading is not changing
    assert watching()


@pytest.mark.parametrize(
    "change",
    [
        pytest.param(lambda r: (r / "pkg" / "mod.py").write_text("X = 2\n"), id="modify"),
        pytest.param(lambda r: (r / "pkg" / "sub" / "deep.txt").unlink(), id="delete"),
        pytest.param(lambda r: (r / "pkg" / "new.py").write_text(""), id="untracked-file"),
        pytest.param(
            lambda r: ((r / "fresh").mkdir(), (r / "fresh" / "f").write_text("f")),
            id="untracked-folder",
        ),
        pytest.param(lambda r: (r / "pkg" / "mod.py").chmod(0o755), id="chmod"),
        pytest.param(
            lambda r: (r / "pkg" / "mod.py").rename(r / "pkg" / "sub" / "mod.py"), id="rename"
        ),
        pytest.param(lambda r: shutil.rmtree(r / "pkg" / "sub"), id="delete-folder"),
        pytest.param(lambda r: (r / ".gitignore").write_text("*.log\n"), id="gitignore"),
        pytest.param(
            lambda r: (r / "build" / "kept.txt").write_text("changed\n"), id="tracked-ignored"
        ),
        pytest.param(
            lambda r: git(r, "rm", "-q", "--cached", "build/kept.txt"), id="index-untracks"
        ),
        pytest.param(lambda r: git(r, "config", "core.filemode", "false"), id="config"),
        pytest.param(
            lambda r: exclude(r, "pkg/"),
            id="info-exclude",
        ),
        pytest.param(lambda r: (r / "pkg" / "link").symlink_to("mod.py"), id="symlink"),
    ],
)
def test_a_change_that_counts_is_seen(
    watching: Callable[[], bool], base: Path, change: Callable[[Path], object]
) -> None:
    change(base)
    assert not watching()


@pytest.mark.parametrize(
    "change",
    [
        pytest.param(lambda r: (r / "out.log").write_text("x"), id="ignored-file"),
        pytest.param(lambda r: (r / "build" / "junk" / "a.o").write_text("x"), id="ignored-folder"),
        pytest.param(lambda r: (r / "build" / "b.o").write_text("x"), id="ignored-beside-tracked"),
    ],
)
def test_an_ignored_change_is_not_counted(
    watching: Callable[[], bool], base: Path, change: Callable[[Path], object]
) -> None:
    change(base)
    assert watching()


def test_a_new_empty_folder_counts(watching: Callable[[], bool], base: Path) -> None:
    """Not in a tree while empty, but the watch cannot know it stays so: the walk decides."""
    (base / "pkg" / "empty").mkdir()
    assert not watching()


def test_the_folder_of_a_new_untracked_folder_is_watched_from_the_start(base: Path) -> None:
    """A folder created after the watch began is an event of its parent, whatever it holds
    later."""
    watch = Watch(open_checkout(base))
    try:
        (base / "later").mkdir()
        (base / "later" / "x.py").write_text("")
        assert not watch.unchanged()
    finally:
        watch.close()


def test_once_changed_always_changed(base: Path) -> None:
    """Asked as the walk at the start ends and again at the end: a change the first answer
    saw is still there for the second (its events were read by the first)."""
    watch = Watch(open_checkout(base))
    try:
        assert watch.unchanged()
        (base / "later.py").write_text("")
        (base / "pkg" / "other.py").write_text("")
        assert not watch.unchanged()
        assert not watch.unchanged()
        assert watch.changed == "later.py"  # what changed first
    finally:
        watch.close()


def test_a_nested_repository_cannot_be_watched(base: Path) -> None:
    nested = base / "vendor" / "lib"
    nested.mkdir(parents=True)
    git(nested, "-c", "init.defaultBranch=main", "init", "-q")
    with pytest.raises(Unavailable, match="holds a repository"):
        Watch(open_checkout(base))


def test_a_closed_watch_says_changed(base: Path) -> None:
    watch = Watch(open_checkout(base))
    watch.close()
    assert not watch.unchanged()


def test_a_folder_that_cannot_be_listed_means_no_watch(base: Path) -> None:
    if os.geteuid() == 0:
        pytest.skip("root lists any folder")
    locked = base / "locked"
    locked.mkdir()
    (locked / "f").write_text("x")
    locked.chmod(0)
    try:
        with pytest.raises(Unavailable):
            Watch(open_checkout(base))
    finally:
        locked.chmod(0o755)


def test_at_most_an_eighth_of_the_users_watches(
    base: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Editors, file watchers and other runs share the per-user limit: a tree needing more than
    an eighth of it is not watched (the tree is walked again instead)."""
    from genstamp import watch

    limit = tmp_path / "max_user_watches"
    limit.write_text("24\n")  # an eighth: 3 folders; base has the top, pkg, pkg/sub, build
    monkeypatch.setattr(watch, "_LIMIT_FILE", str(limit))
    with pytest.raises(Unavailable, match="more than 3 folders"):
        Watch(open_checkout(base))
    limit.write_text("32\n")
    Watch(open_checkout(base)).close()


def test_core_ignorecase_is_not_watched(base: Path) -> None:
    """The index is then sorted without regard to case: lookups in it would miss entries."""
    git(base, "config", "core.ignorecase", "true")
    with pytest.raises(Unavailable, match="ignorecase"):
        Watch(open_checkout(base))


def test_an_ignored_ignore_file_still_counts(base: Path) -> None:
    """A .gitignore that ignores itself can, changed, let ignored files into the tree."""
    (base / ".gitignore").write_text(".gitignore\n*.log\nbuild/\n")
    git(base, "rm", "-q", "--cached", ".gitignore")
    commit_all(base, "a local ignore file")
    (base / "out.log").write_text("ignored until the rule goes\n")
    watch = Watch(open_checkout(base))
    try:
        (base / ".gitignore").write_text(".gitignore\nbuild/\n")
        assert not watch.unchanged()
    finally:
        watch.close()


MOUNTS = """\
27 1 254:0 / / rw,relatime - ext4 /dev/vda rw
40 27 0:50 / {point} rw,relatime - {kind} server:/export rw
"""


@pytest.mark.parametrize(
    ("point", "kind", "watched"),
    [
        ("{tree}", "ext4", True),
        ("{tree}", "nfs4", False),  # another machine's writes make no event here
        ("{tree}/pkg", "fuse.sshfs", False),  # a mount inside the tree counts too
        ("{tree}/pkg", "tmpfs", True),
        ("{tree}/a mount", "cifs", False),  # mountinfo writes the space as \\040
        ("/elsewhere", "9p", True),  # not the tree's
        ("{parent}", "virtiofs", False),  # the tree is on it
    ],
)
def test_only_local_filesystems_are_watched(
    base: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    point: str,
    kind: str,
    watched: bool,
) -> None:
    from genstamp import watch

    tree = os.path.realpath(base)
    mounted = point.format(tree=tree, parent=os.path.dirname(tree)).replace(" ", "\\040")
    info = tmp_path / "mountinfo"
    info.write_text(MOUNTS.format(point=mounted, kind=kind))
    monkeypatch.setattr(watch, "_MOUNTINFO", str(info))
    if watched:
        Watch(open_checkout(base)).close()
    else:
        with pytest.raises(Unavailable, match=f"on a {kind} filesystem"):
            Watch(open_checkout(base))


def test_a_mount_point_with_a_space_is_read_back(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from genstamp import watch

    tree = init_repo(tmp_path / "with space")
    commit_all(tree, "empty")
    escaped = os.path.realpath(tree).replace(" ", "\\040")
    info = tmp_path / "mountinfo"
    info.write_text(MOUNTS.format(point=escaped, kind="nfs"))
    monkeypatch.setattr(watch, "_MOUNTINFO", str(info))
    with pytest.raises(Unavailable, match="with space is on a nfs filesystem"):
        Watch(open_checkout(tree))
