"""The tree identity: the id of the tree ``git add -A && git write-tree`` would write.

Computed with libgit2 on an in-memory copy of the index: one index-to-workdir diff (the same
walk ``git status`` makes), then only the changed files are read. Their blobs and the tree
objects are written to the object database, as ``git add -A && git write-tree`` would (libgit2
refuses to write a tree naming an object it does not have, and a gate can later name the paths
that differ). The index file, the work tree and the refs are left as they were.

Conversion is git's: libgit2 applies ``core.autocrlf``, ``core.eol``, ``core.safecrlf`` and the
``text``/``eol`` attributes as ``git add`` does (the git-oracle tests prove it). What libgit2 does
not do as git does is left to git itself: paths whose ``filter`` names a configured driver (it
does not run external clean or process filters), paths with ``ident`` or
``working-tree-encoding``, and paths where the "safer autocrlf" rule reads the index blob
differently. Their blobs come from one ``git add`` per walk into a scratch copy of the index
(``git add`` is the oracle itself, index included), so a walk without such paths costs what it
did. Where libgit2 would make another tree altogether (``_git_decides``: config it does not
read, ``core.ignorecase``, a line-end conversion by content, a negative attributes pattern;
``_walk_parts_from_git``: an ignored symbolic link, a folder whose ``.git`` is no repository),
git makes the whole tree: ``git add -A && git write-tree`` on a scratch copy of the index.

The same walk also reports where bytecode lives, so a gate needs one walk of the tree, not two.

``genstamp status`` has git walk instead (``gitwalk``: ``git status``, on all cores): the
paths it lists differing from the index take the place of libgit2's deltas.

With ``jobs`` > 1 the walk of a large work tree is split into parts walked at once (libgit2
walks without holding the GIL): each part is a list of literal paths (a folder stands for what
is under it) and together they name every entry of the work tree's top folders and of the index.
"""

from __future__ import annotations

import contextlib
import os
import re
import stat
import threading
import weakref
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from pathlib import Path

import pygit2
from pygit2.enums import ConfigLevel, DeltaStatus, DiffOption, FileMode

from genstamp import gitwalk, idcache, monitor
from genstamp.bytecode import is_bytecode_path
from genstamp.errors import GenstampError, unreadable_index
from genstamp.gitwalk import file_stamp as file_stamp  # where it was, for its callers
from genstamp.monitor import Clock
from genstamp.repo import Checkout, common_gitdir, path_is_ignored
from genstamp.typedtuple import NamedTuple

# Repositories whose shared in-memory index a scan has changed: reloaded before the next scan
# (one index parse per scan, instead of a reload before and another after).
_CHANGED: weakref.WeakSet[pygit2.Repository] = weakref.WeakSet()
# For each part of a split walk but the first, a handle of its own on the repository and an
# in-memory copy of its index (libgit2 objects are for one thread at a time); the index is
# read again only when the file changes.
_SPARES: weakref.WeakKeyDictionary[
    pygit2.Repository, list[tuple[pygit2.Repository, pygit2.Index]]
] = weakref.WeakKeyDictionary()

# Whether a scan with the kept record (``status``) has ``git status`` list the differing paths
# (``gitwalk``: git stats on all cores) in place of libgit2's walk. Only for the tree: git's
# list leaves out the ignored bytecode a gate looks for.
GIT_STATUS = True
SPLIT_ABOVE = 4000  # index entries: below this one walk costs less than starting threads
_MAX_NAMES = 512  # literal paths in all parts: above this a folder is not split further

_FLAGS = (
    DiffOption.INCLUDE_UNTRACKED
    | DiffOption.RECURSE_UNTRACKED_DIRS
    | DiffOption.INCLUDE_TYPECHANGE
    | DiffOption.SKIP_BINARY_CHECK
)


class _Trust(NamedTuple):
    filemode: bool  # core.filemode: the executable bit on disk means something
    symlinks: bool  # core.symlinks: links are checked out as links


class _Conversion(NamedTuple):
    """What decides, per path, whether git itself must make the blob."""

    drivers: frozenset[str]  # filter drivers git would run (or refuse to run: required)
    # A .gitattributes differs between the work tree and the index. git then reads only the
    # work tree's; libgit2 reads both, and the index's rules leak through: git makes every blob.
    all_by_git: bool = False
    # core.autocrlf is true or input: a path without a `text` attribute is converted as
    # `text=auto` is (and git's "safer autocrlf" check applies to it).
    auto_default: bool = False


# Attributes whose clean side libgit2 does not apply as git does: `ident` collapses only the
# first of several `$Id: …$`, and `working-tree-encoding` is not applied at all.
_GIT_ONLY_ATTRS = ("ident", "working-tree-encoding")


def _conversion(repo: pygit2.Repository, changed: Iterable[tuple[str, int]]) -> _Conversion:
    """The filter drivers configured for ``repo``: ``filter.<driver>.clean``, ``.process`` or
    ``.required`` (git refuses ``git add`` through a required driver it cannot run); and
    whether a .gitattributes is among the ``changed`` paths (path, delta status) of an
    index-to-workdir walk."""
    drivers = set()
    for entry in repo.config:
        name = entry.name
        if name.startswith("filter."):
            driver, _, key = name[len("filter.") :].rpartition(".")
            if driver and key in ("clean", "process", "required"):
                drivers.add(driver)
    changed = list(changed)
    attributes = any(
        status in (DeltaStatus.MODIFIED, DeltaStatus.TYPECHANGE)
        and ("/" + path).endswith("/.gitattributes")
        for path, status in changed
    )
    # a .gitattributes that is a symbolic link: git (2.32 and later) does not follow it, and
    # applies none of its rules; libgit2 does
    workdir = repo.workdir or ""
    linked = [".gitattributes", *(p for p, _ in changed if ("/" + p).endswith("/.gitattributes"))]
    attributes = attributes or any(os.path.islink(os.path.join(workdir, p)) for p in linked)
    autocrlf = repo.config.get_multivar("core.autocrlf")
    values = [str(v).lower() for v in autocrlf]
    auto_default = bool(values) and values[-1] in ("true", "input", "yes", "on", "1")
    return _Conversion(frozenset(drivers), attributes, auto_default)


ALONE = "alone"  # a conversion no fresh clone makes: it checks the blob out as it is
LOCAL = "local"  # one the project names, by a driver this clone's own config alone defines
SHARED = "shared"  # one the project names, by a driver the user's (or the system's) config holds


def clone_conversions(checkout: Checkout, paths: Iterable[str]) -> dict[str, str]:
    """Those of ``paths`` (relative to the work tree) that a filter driver configured for the
    repository converts (``filter=NAME`` with ``filter.NAME.clean``, ``.process`` or
    ``.required`` set), or a ``working-tree-encoding`` re-encodes, each with how far that
    conversion is this clone's own: ``ALONE`` when named by no .gitattributes git tracks (only
    by ``.git/info/attributes``) and, for a driver, configured in this clone's own config file
    only (a fresh clone checks such a path's blob out as it is); ``LOCAL`` when the project's
    .gitattributes names a driver this clone's config alone defines (``git lfs install
    --local``: a fresh clone converts only once it is set up so); ``SHARED`` when the
    project names a driver every clone here has (the user's global config): what the tests
    loaded is what a clone runs only when checking the stored blob out through that driver
    gives it back (its smudge side: a clean side alone that drops a line of code stores
    another file than a clone checks out). A driver that only ``.git/info/attributes`` names
    is ``ALONE`` wherever it is configured: no fresh clone is asked to use it; one the user's
    attributes file names is every clone's here, as the driver is."""
    repo = checkout.repo
    drivers = _conversion(repo, ()).drivers
    shared = set()
    for entry in repo.config if drivers else ():
        driver, _, key = entry.name[len("filter.") :].rpartition(".")
        if entry.name.startswith("filter.") and key in ("clean", "smudge", "process"):
            if entry.level not in (ConfigLevel.LOCAL, ConfigLevel.WORKTREE):
                shared.add(driver)
    out = {}
    for p in paths:
        raw = os.fsencode(p)
        name = repo.get_attr(raw, "filter")
        if isinstance(name, str) and name in drivers:
            private = private_attribute(repo, p, f"filter={name}")
            out[p] = ALONE if private else SHARED if name in shared else LOCAL
        encoding = repo.get_attr(raw, "working-tree-encoding")
        if isinstance(encoding, str) and not _declared(repo, p, "working-tree-encoding="):
            out[p] = ALONE
    return out


def private_attribute(repo: pygit2.Repository, path: str, attribute: str) -> bool:
    """Whether ``attribute`` (``filter=lfs``, ``ident``) applies to ``path`` by this clone's
    ``.git/info/attributes`` alone: no tracked .gitattributes sets it, and a fresh clone
    (which the user's attributes file, ``core.attributesFile``, would ask) is not asked."""
    return not _declared(repo, path, attribute) and _named_privately(repo, attribute)


def _named_privately(repo: pygit2.Repository, attribute: str) -> bool:
    """Whether this clone's ``.git/info/attributes`` sets ``attribute`` (any pattern): named
    there and in no tracked .gitattributes, it is this clone's alone (the user's attributes
    file, ``core.attributesFile``, names it for every clone of this machine)."""
    try:
        text = Path(repo.path, "info", "attributes").read_bytes()
    except OSError:
        return False
    wanted = attribute.encode()
    return any(wanted in line.split()[1:] for line in text.splitlines())


def _declared(repo: pygit2.Repository, path: str, attribute: str) -> bool:
    """Whether a .gitattributes git tracks in a folder above ``path`` sets ``attribute``
    (``filter=lfs``; a prefix ending in ``=``, any value): the project asks every clone for it,
    where ``.git/info/attributes`` asks this clone alone."""
    folders = path.split("/")[:-1]
    wanted = attribute.encode()
    for depth in range(len(folders) + 1):
        rel = "/".join([*folders[:depth], ".gitattributes"])
        try:
            blob = repo[repo.index[rel].id]
        except (KeyError, ValueError):
            continue
        if isinstance(blob, pygit2.Blob):
            for line in blob.data.splitlines():
                for word in line.split()[1:]:
                    if word == wanted or (wanted.endswith(b"=") and word.startswith(wanted)):
                        return True
    return False


def _by_git(repo: pygit2.Repository, path: str, conversion: _Conversion) -> bool:
    """Whether git, not libgit2, must make the blob of ``path`` (the checkin attributes: the
    work tree's .gitattributes first, as ``git add`` reads them)."""
    if conversion.all_by_git:
        return True
    raw = os.fsencode(path)  # a name that is not UTF-8 survives as bytes (stubs say str)
    if conversion.drivers:
        driver = repo.get_attr(raw, "filter")
        if isinstance(driver, str) and driver in conversion.drivers:
            return True
    if any(repo.get_attr(raw, name) not in (None, False) for name in _GIT_ONLY_ATTRS):
        return True
    return _safer_autocrlf_differs(repo, path, raw, conversion)


def _safer_autocrlf_differs(
    repo: pygit2.Repository, path: str, raw: bytes, conversion: _Conversion
) -> bool:
    """Whether git's and libgit2's "safer autocrlf" rule disagree on ``path``. Under
    `text=auto` (or core.autocrlf without a `text` attribute) neither normalizes a file whose
    index blob already holds CRLFs, but libgit2 looks for any CR in the blob, git for a CRLF in
    a blob it takes as text (convert.c's ``has_crlf_in_index``): a blob with a lone CR (which
    git takes as binary) is kept by libgit2 and normalized by git. git itself then makes the
    blob (``git_blobs``).
    """
    text = repo.get_attr(raw, "text")
    if not (text == "auto" or (text is None and conversion.auto_default)):
        return False
    try:
        entry = repo.index[path]
    except (KeyError, ValueError):
        return False  # not in the index: no blob to consult, both convert alike
    blob = repo.get(entry.id)
    if not isinstance(blob, pygit2.Blob) or b"\r" not in blob.data:
        return False  # no CR: both convert
    return _git_binary(blob.data)  # a text blob with a CR has a CRLF: both keep it


# convert.c's gather_stats: bytes below 32 that count as printable (BS, HT, ESC, FF), and the
# line ends, which are counted apart
_PRINTABLE_LOW = b"\b\t\x1b\x0c"
_NON_PRINTABLE = bytes(c for c in (*range(32), 127) if bytes([c]) not in _PRINTABLE_LOW + b"\r\n")


def _git_binary(data: bytes) -> bool:
    """convert.c's ``convert_is_binary`` over ``gather_stats``: a lone CR or a NUL, or more
    than one non-printable byte in 128 printable ones (a trailing ^Z, DOS's EOF, not counted)."""
    crlf = data.count(b"\r\n")
    if data.count(b"\r") > crlf or b"\0" in data:
        return True
    line_ends = data.count(b"\r") + data.count(b"\n")
    nonprintable = len(data) - len(data.translate(None, _NON_PRINTABLE))
    printable = len(data) - line_ends - nonprintable
    if data.endswith(b"\x1a"):
        nonprintable -= 1  # and not printable either
    return (printable >> 7) < nonprintable


@contextlib.contextmanager
def _scratch_index(
    repo: pygit2.Repository, workdir: str, *, keep_mtime: bool = False, config: Sequence[str] = ()
) -> Iterator[tuple[str, list[str]]]:
    """A scratch copy of the index (removed after) and the git command line that works on it
    with no side effect in the git dir (no shared index, no fsmonitor token written)."""
    import shutil  # here: the pytest co-process imports this module, and rarely needs these
    import tempfile

    with tempfile.TemporaryDirectory(prefix="genstamp-index-") as scratch:
        index = os.path.join(scratch, "index")
        copy = shutil.copy2 if keep_mtime else shutil.copyfile
        with contextlib.suppress(FileNotFoundError):  # an unborn branch may have none yet
            copy(os.path.join(repo.path, "index"), index)
        args = ["git", f"--git-dir={repo.path}", f"--work-tree={workdir}"]
        args += ["-c", "core.splitIndex=false", "-c", "core.fsmonitor=false", *config]
        yield index, args


def git_blobs(repo: pygit2.Repository, paths: Sequence[str]) -> list[str]:
    """The blobs ``git add`` makes of the work-tree files ``paths`` — ``git add`` itself, into
    a scratch copy of the index, so that all of git's conversion applies as it would: clean and
    process filters run as git runs them, and the "safer autocrlf" rule, which asks the index
    (``git hash-object`` reads no index and would normalize a file whose indexed blob keeps
    its CRLFs). The blobs are written to the object database. A path git refuses (a required
    filter that fails or is missing, core.safecrlf) is one GenstampError naming it."""
    if not paths:
        return []
    workdir = repo.workdir
    env = {k: v for k, v in os.environ.items() if k not in ("GIT_DIR", "GIT_WORK_TREE")}
    env["GIT_LITERAL_PATHSPECS"] = "1"
    import subprocess

    # with the index's mtime: an entry as new as the index (a file changed in the second of
    # the last commit) is read again, as `git add` on the index itself reads it; a copy dated
    # now would take it for clean and keep the old blob
    with _scratch_index(repo, workdir, keep_mtime=True) as (index, args):
        env["GIT_INDEX_FILE"] = index
        args += ["add", "-f", "--pathspec-from-file=-", "--pathspec-file-nul", "--"]
        feed = b"".join(os.fsencode(p) + b"\0" for p in paths)
        try:
            proc = subprocess.run(args, input=feed, capture_output=True, cwd=workdir, env=env)
        except OSError as exc:
            raise GenstampError(
                f"cannot run git to apply the conversion of {paths[0]}: {exc.strerror or exc}",
                "install git, or put it on PATH: genstamp runs it for paths with filter drivers",
            ) from exc
        if proc.returncode != 0:
            raise _refused(repo, paths, proc.stderr)
        added = pygit2.Index(index)
        try:
            return [str(added[p].id) for p in paths]
        except KeyError as exc:  # git added less than it was given, and said nothing
            raise _refused(repo, [str(exc.args[0])], proc.stderr) from None


def _refused(repo: pygit2.Repository, paths: Sequence[str], stderr: bytes) -> GenstampError:
    """git add refused one of ``paths``: the error names the path git's message names (one it
    quotes, such as a nested repository with no commit, ``'scratch/'``), else the first of
    ``paths`` the message holds."""
    text = stderr.decode("utf-8", "replace")
    workdir = repo.workdir or ""
    quoted = [q for q in _QUOTED.findall(text) if os.path.lexists(os.path.join(workdir, q))]
    failed = next((p for p in paths if p in quoted), None)
    # a filter's failure names the file unquoted ("fatal: a.txt: clean filter …"), where a
    # warning before it may quote another ("in the working copy of 'b.cfg', LF will be …")
    errors = [line for line in text.splitlines() if line.startswith(("error: ", "fatal: "))]
    named = next((p for p in paths if any(f": {p}: " in line for line in errors)), None)
    failed = failed or named or next(iter(quoted), None)
    failed = failed or next((p for p in paths if p in text), paths[0])
    why = (text.strip().splitlines() or ["no reason given"])[-1]
    if _UNBORN in text:  # git init inside the work tree, nothing committed there
        return GenstampError(
            f"git add refuses {failed}: a git repository in the work tree with no commit",
            f"commit in {failed}, remove it, or ignore it (.gitignore): git cannot add it",
        )
    driver = repo.get_attr(os.fsencode(failed.rstrip("/")), "filter")
    return GenstampError(
        f"git add would refuse {failed}"
        + (f" (filter driver {driver!r})" if isinstance(driver, str) else "")
        + f": {why}",
        "fix the file, its attributes or its filter driver (git config filter.<driver>.clean"
        " / .process), then check that `git add` works",
    )


# git's messages quote the path they refuse: "error: 'sub/' does not have a commit checked
# out", "error: unable to index file 'sub/'" (a filter's failure quotes its command, which is
# no path of the work tree, and names the file unquoted: "fatal: a.txt: clean filter ...")
_QUOTED = re.compile(r"^(?:error|fatal): [^'\n]*'([^'\n]+)'", re.MULTILINE)
_UNBORN = "does not have a commit checked out"


def added_blobs(checkout: Checkout, loaded: Mapping[str, str]) -> dict[str, str | None]:
    """For each work-tree-relative path and the blob id of the raw bytes a process loaded
    from it: the blob ``git add`` would store for those bytes at that path (git's conversion
    and filters applied), or None when the file's raw bytes no longer hash to that id (it
    changed, or is gone). Read from the current file, so the raw bytes are checked before and
    after the conversion: a file that changes meanwhile is None too."""
    repo = checkout.repo
    workdir = str(checkout.workdir)
    index = repo.index
    index.read(force=False)
    conversion = _conversion(repo, _pairs(index.diff_to_workdir().deltas))
    if loaded and _git_decides(repo, workdir):  # the tree is git's: so is every blob of it
        conversion = conversion._replace(all_by_git=True)
    out: dict[str, str | None] = {}
    by_git: list[str] = []

    def raw_blob(path: str) -> str | None:
        try:
            with open(os.path.join(workdir, path), "rb") as fh:
                return str(pygit2.hash(fh.read()))
        except OSError:
            return None

    for path, raw in loaded.items():
        if raw_blob(path) != raw:
            out[path] = None
        elif _by_git(repo, path, conversion):
            by_git.append(path)
        else:
            full = os.fsencode(os.path.join(workdir, path))
            try:
                out[path] = str(repo.hashfile(full, as_path=os.fsencode(path)))  # type: ignore[arg-type]
            except (pygit2.GitError, OSError):
                out[path] = None
    out.update(zip(by_git, git_blobs(repo, by_git), strict=True))
    for path, raw in loaded.items():
        if out[path] is not None and raw_blob(path) != raw:
            out[path] = None
    return out


class _Unreadable:
    """A tracked path that lstat fails on for a reason other than its absence."""


_UNREADABLE = _Unreadable()
_BY_GIT = pygit2.Oid(hex="0" * 40)  # a blob git itself makes after the walk


class Scan(NamedTuple):
    tree: str | None  # hex tree id; None when not asked for
    bytecode: tuple[str, ...]  # work-tree-relative paths of __pycache__ folders and *.pyc files
    # How the tree was known: "walk" (made from the walk), "kept" (the walk, libgit2's or
    # git's, found what the kept record's did), "monitor" (nothing changed since the kept
    # walk), "since" (only the paths the monitor named were walked).
    how: str = "walk"


def tree_identity(checkout: Checkout, jobs: int = 1, *, cache: bool = False) -> str:
    tree = scan(checkout, jobs=jobs, cache=cache).tree
    assert tree is not None
    return tree


def scan(
    checkout: Checkout,
    *,
    want_tree: bool = True,
    want_bytecode: bool = False,
    jobs: int = 1,
    split_above: int = SPLIT_ABOVE,
    cache: bool = False,
) -> Scan:
    """One walk of the work tree; in up to ``jobs`` threads when the index has more than
    ``split_above`` entries. With ``cache`` the tree comes from the record kept in the git dir
    when it still holds (``idcache``), and the monitor is asked first when it is on."""
    repo = checkout.repo
    workdir = str(checkout.workdir)
    asked: list[bool] = []

    def negations() -> bool:  # asked of git once, and only when a route needs it
        if not asked:
            asked.append(_negations(repo, workdir))
        return asked[0]

    def gits_own(why: str) -> Scan:
        """git's own tree, and the walk's bytecode when asked for."""
        made = _tree_by_git(repo, workdir, why)
        bytecode: tuple[str, ...] = ()
        if want_bytecode:
            bytecode = scan(
                checkout, want_tree=False, want_bytecode=True, jobs=jobs, split_above=split_above
            ).bytecode
        return Scan(made, bytecode, "git")

    if want_tree:
        why = _git_decides(repo, workdir)
        if why:
            return gits_own(why)
    try:
        last: idcache.Record | None = None
        clock: Clock | None = None
        key = ""
        if cache and want_tree:
            last = idcache.load(checkout)
            key = idcache.settings_key(checkout)  # before the index is read
            if _config_str(repo, monitor.CONFIG) == monitor.WATCHMAN and not negations():
                if _usable(repo, last, key, want_bytecode):
                    assert last is not None
                    known = _since(checkout, last, None, want_bytecode)
                    if known is not None:
                        gitwalk.cancel()  # a walk started ahead is not needed
                        return known
                sock = last.clock.sock if last is not None and last.clock is not None else ""
                clock = monitor.clock(workdir, sock)  # before the walk: later changes show
                if clock is not None and _usable(repo, last, key, want_bytecode):
                    assert last is not None
                    known = _since(checkout, last, clock, want_bytecode)
                    if known is not None:
                        gitwalk.cancel()
                        return known
        walk: gitwalk.Walk | None = None
        found: list[tuple[str, int]] | None = None  # git's walk: the paths differing, and how
        if GIT_STATUS and cache and want_tree and not want_bytecode and not _ignorecase(repo):
            walk = gitwalk.take(str(checkout.workdir), str(checkout.gitdir))
            found = gitwalk.differing(walk)
            if found is not None and _git_reads_other_config():
                found = None  # git's list would rest on other settings: libgit2 walks
            if found is not None and _reusable(repo, last, key):
                assert last is not None
                if _git_agrees(workdir, found, last):
                    if clock is not None:  # taken before git's walk: kept for the next time
                        idcache.store(checkout, last._replace(clock=clock), last)
                    return Scan(last.tree, (), "kept")
        gitwalk.cancel()  # a walk started ahead that is not used: no core for it
        index = repo.index
        index_path = os.path.join(repo.path, "index")
        before = file_stamp(index_path)
        # Start from what is on disk: reload when a scan changed this index in memory (or when
        # the file changed); a freshly opened repository has just read it.
        index.read(force=repo in _CHANGED)
        _CHANGED.add(repo)
        changes: list[tuple[str, int]] | None = None
        if found is not None and walk is not None and before is not None:
            if before == walk.index_stamp == file_stamp(index_path):
                changes = found  # what differs from this very index: git saw it throughout
        if changes is None:
            flags = _FLAGS | DiffOption.INCLUDE_IGNORED  # (bytecode, and links: below)
            deltas: Sequence[pygit2.DiffDelta] | None = None
            if jobs > 1 and len(index) > split_above and before is not None:
                deltas = _split_walk(repo, index, index_path, before, flags, jobs)
            if deltas is None:
                deltas = _diff_paths(repo, index, (), flags)
            changes = _pairs(deltas)
            if want_tree and (negations() or _new_rules_part(workdir, changes)):
                changes = _untracked_as_git(repo, workdir, changes)
        why = _walk_parts_from_git(workdir, changes, index) if want_tree else ""
        if why:
            return gits_own(why)
        found_bytecode: list[str] = []
        conflicts = index.conflicts
        trust = _Trust(_config_bool(repo, "core.filemode"), _config_bool(repo, "core.symlinks"))
        parents: dict[str, bool] = {}
        conversion = _conversion(repo, changes) if want_tree else None
        dirty: idcache.Dirty | None = None
        racy = False
        reused: str | None = None
        if cache and want_tree:
            assert conversion is not None
            dirty, racy = idcache.dirty_key(
                workdir, _differing(changes), lambda p: _by_git(repo, p, conversion)
            )
            if (
                last is not None
                and key
                and not last.racy
                and dirty is not None
                and (last.settings, last.dirty) == (key, dirty)
                and _has_tree(repo, last.tree)
            ):
                reused = last.tree
            want_tree = reused is None
        by_git: list[str] = []  # paths whose blob git itself makes, after the walk
        removals: list[str] = []
        additions: dict[str, pygit2.IndexEntry] = {}
        unreadable: list[str] = []
        for path, status in changes:
            if status == DeltaStatus.IGNORED:
                if want_bytecode and is_bytecode_path(path):
                    found_bytecode.append(path.rstrip("/"))
                continue
            if status == DeltaStatus.DELETED and _skip_worktree(index, path):
                continue  # outside a sparse checkout's cone: git keeps the indexed entry
            if want_bytecode and status == DeltaStatus.UNTRACKED and is_bytecode_path(path):
                found_bytecode.append(path)
            if not want_tree:
                continue
            # Where the disk cannot be trusted git keeps the index's mode (stage 0, else 2, 1, 3).
            kept = None if all(trust) else _indexed_mode(index, path.rstrip("/"))
            if conflicts is not None and status == DeltaStatus.CONFLICTED:
                with contextlib.suppress(KeyError):
                    del conflicts[path]
            entry = _workdir_entry(repo, workdir, path, trust, kept, parents, conversion)
            if entry is _UNREADABLE:
                unreadable.append(path)
            elif isinstance(entry, pygit2.IndexEntry):
                additions[path.rstrip("/")] = entry
                if entry.id == _BY_GIT:
                    by_git.append(path)
            elif status != DeltaStatus.UNTRACKED:
                removals.append(path)
        if want_tree:
            # git reports a tracked path it cannot lstat (a link loop above it, no permission)
            # and leaves its entry alone, unless something added replaces a folder above it.
            removals += [p for p in unreadable if any(d in additions for d in _leading(p))]
            # Removals first: libgit2 does not always drop `d/f` when `d` is added over it.
            for path in removals:
                if path in index:
                    index.remove(path)
            for path, blob in zip(by_git, git_blobs(repo, by_git), strict=True):
                additions[path] = pygit2.IndexEntry(
                    path, pygit2.Oid(hex=blob), additions[path].mode
                )
            for entry in additions.values():
                index.add(entry)
        tree = str(index.write_tree()) if want_tree else reused
    except (pygit2.GitError, OSError) as exc:
        raise GenstampError(
            f"libgit2 could not read the work tree of {workdir}: {exc}",
            unreadable_index(exc) or "check that `git status` and `git add -A` work here",
        ) from exc
    if cache and tree is not None:
        record = idcache.Record(
            tree,
            tuple(found_bytecode) if want_bytecode else None,
            key,
            dirty,
            racy,
            clock,
            monitor_ok=dirty is not None
            and not os.path.lexists(os.path.join(workdir, ".gitmodules"))
            and not _gitlinks(repo),
        )
        idcache.store(checkout, record, last)
    return Scan(tree, tuple(found_bytecode), "walk" if reused is None else "kept")


# Words of an attributes line that ask for a line-end conversion whose outcome depends on the
# content (``text=auto``, ``eol``, the legacy ``crlf``): git's test for binary content
# (convert.c's ``gather_stats``) is not libgit2's (a vertical tab is text to libgit2).
_AUTO_WORDS = (b"text=auto", b"eol=", b"crlf")


def _git_decides(repo: pygit2.Repository, workdir: str) -> str:
    """Why git itself must make this work tree's tree (``git add -A`` into a scratch index),
    where libgit2 would make another: "" when libgit2's walk makes git's. Where git reads
    config libgit2 does not (the file GIT_CONFIG_GLOBAL or GIT_CONFIG_SYSTEM names, an
    ``includeIf "hasconfig:…"`` section), matches names without regard to case
    (``core.ignorecase``), converts line ends by what a file holds (``core.autocrlf``,
    ``text=auto``, ``eol``), or ignores an attributes line libgit2 applies (a negative
    pattern, ``!*.md text``)."""
    if _git_reads_other_config():
        return "git reads config files libgit2 does not (GIT_CONFIG_GLOBAL, GIT_CONFIG_SYSTEM)"
    if any(e.name.lower().startswith("includeif.hasconfig:") for e in repo.config):
        return 'an includeIf "hasconfig:…" section, which libgit2 does not apply'
    if _ignorecase(repo):
        return "core.ignorecase"
    values = [str(v).lower() for v in repo.config.get_multivar("core.autocrlf")]
    if values and values[-1] in ("true", "input", "yes", "on", "1"):
        return "core.autocrlf"
    for name in _attribute_files(repo, workdir):
        why = _parting_rules(name)
        if why:
            return why
    return ""


def _parting_rules(name: str) -> str:
    """Why the attributes file ``name`` has git and libgit2 convert apart: a negative
    pattern (git ignores the line), a quoted one (``"notes v2.txt" -text``: git unquotes it,
    C-style, libgit2 matches the quotes), one holding a backslash (libgit2 unescapes it, git
    applies it to nothing), or a line-end conversion by content; "" if none."""
    try:
        with open(name, "rb") as fh:
            lines = fh.read().splitlines()
    except OSError:
        return ""
    for line in lines:
        words = line.split()
        if words and words[0].startswith(b"!"):
            return f"a negative pattern in {name}, which git ignores"
        if line.lstrip().startswith(b'"'):
            return f"a quoted pattern in {name}, which libgit2 does not unquote"
        if words and b"\\" in words[0]:  # (`my\ notes.txt text`: git applies it to nothing)
            return f"a backslash in a pattern of {name}, which git and libgit2 read apart"
        if any(w in word for word in words[1:] for w in _AUTO_WORDS):
            return f"a line-end conversion by content in {name}"
    return ""


def _rule_sources(repo: pygit2.Repository, workdir: str, info: str, key: str) -> list[str]:
    """The rule files git reads beside the work tree's own: ``info/<info>`` (a worktree's is
    shared) and the file config ``key`` names, or its XDG default (``exclude``: ``ignore``)."""
    files = [str(common_gitdir(Path(repo.path)) / "info" / info)]
    named = _config_str(repo, key)
    if named:
        from genstamp.paths import config_path

        files.append(config_path(named, workdir))
    else:
        home = os.environ.get("XDG_CONFIG_HOME") or os.path.expanduser("~/.config")
        files.append(os.path.join(home, "git", "ignore" if info == "exclude" else info))
    return files


def _walk_parts_from_git(
    workdir: str, changes: Iterable[tuple[str, int]], index: pygit2.Index | None = None
) -> str:
    """Why libgit2's walk (``changes``) is not what ``git add -A`` adds: an ignored entry that
    is a symbolic link (a folder-only pattern, ``out/``, matches no link in git, which adds
    it), an untracked folder libgit2 took for a repository whose ``.git`` is none (a stale
    gitfile of a copied submodule, an empty ``.git`` folder: git adds its files), an
    untracked ``.gitattributes`` below the top whose rules part them (``_parting_rules``), or
    a ``.gitattributes`` deleted and not yet staged (libgit2 still applies the index's copy;
    ``git add -A`` stages the deletion first, and converts by none of its rules; one a sparse
    checkout leaves out is the index's for git too)."""
    for path, status in changes:
        full = os.path.join(workdir, path.rstrip("/"))
        if status == DeltaStatus.DELETED and ("/" + path).endswith("/.gitattributes"):
            if index is None or not _skip_worktree(index, path):
                return f"{path} is deleted, not yet staged: git converts by none of its rules"
        if status == DeltaStatus.UNTRACKED and path.endswith("/.gitattributes"):
            why = _parting_rules(full)
            if why:
                return why
        if status == DeltaStatus.IGNORED and not path.endswith("/") and os.path.islink(full):
            return f"{path} is a symbolic link that git does not ignore as libgit2 does"
        if status == DeltaStatus.UNTRACKED and path.endswith("/"):
            dotgit = os.path.join(full, ".git")
            if os.path.lexists(dotgit) and not _a_repository(full):
                return f"{path} holds a .git that is no repository"
    return ""


def _a_repository(folder: str) -> bool:
    from pygit2.enums import RepositoryOpenFlag

    try:
        pygit2.Repository(folder, RepositoryOpenFlag.NO_SEARCH)
    except (pygit2.GitError, OSError, KeyError, ValueError):
        return False
    return True


def _attribute_files(repo: pygit2.Repository, workdir: str) -> list[str]:
    """The attributes files git reads for this work tree: the ``.gitattributes`` files the
    index holds and the top one (tracked or not yet), ``info/attributes`` and
    ``core.attributesFile`` (or the XDG default)."""
    files = _rule_sources(repo, workdir, "attributes", "core.attributesFile")
    top = os.path.join(workdir, ".gitattributes")  # the top one, tracked or not yet
    # (index v4 keeps of each name what the entry before does not share: `.editorconfig`
    # before `.gitattributes` leaves `gitattributes`, `.git-blame-ignore-revs` `attributes`)
    tracked = _tracked_rule_files(repo, workdir)[1] if _index_names(repo, b"attributes") else []
    return [*files, *tracked, *([top] if top not in tracked else [])]


def _index_names(repo: pygit2.Repository, name: bytes) -> bool:
    """Whether the index file may hold an entry whose name ends in ``name``: its bytes hold
    the name and its NUL (each entry's path ends so, and so does the part of it index v4
    stores); a split index's shared part is not looked into (True)."""
    try:
        with open(os.path.join(repo.path, "index"), "rb") as fh:
            data = fh.read()
    except OSError:
        return False
    with contextlib.suppress(OSError):
        if any(n.startswith("sharedindex.") for n in os.listdir(repo.path)):
            return True
    return name + b"\0" in data


_RULE_GLOBS = (":(glob)**/.gitignore", ":(glob)**/.gitattributes")
# (work tree, index stamp) -> the tracked .gitignore and .gitattributes files, as git lists them
_TRACKED_RULES: dict[tuple[str, object], tuple[list[str], list[str]]] = {}


def _tracked_rule_files(repo: pygit2.Repository, workdir: str) -> tuple[list[str], list[str]]:
    """The ``.gitignore`` and the ``.gitattributes`` files the index holds (full paths), from
    one ``git ls-files``, asked again only when the index file changes."""
    import subprocess

    key = (workdir, file_stamp(os.path.join(repo.path, "index")))
    known = _TRACKED_RULES.get(key)
    if known is not None:
        return known
    try:
        listed = subprocess.run(
            ["git", "ls-files", "-z", "--cached", "--", *_RULE_GLOBS],
            cwd=workdir,
            env=gitwalk._env(os.environ),
            capture_output=True,
            check=True,
        ).stdout
    except (OSError, subprocess.CalledProcessError):
        listed = b""
    paths = [os.path.join(workdir, os.fsdecode(p)) for p in listed.split(b"\0") if p]
    found = (
        [p for p in paths if p.endswith(".gitignore")],
        [p for p in paths if p.endswith(".gitattributes")],
    )
    if key[1] is not None:
        _TRACKED_RULES.clear()
        _TRACKED_RULES[key] = found
    return found


def _tree_by_git(repo: pygit2.Repository, workdir: str, why: str) -> str:
    """The tree ``git add -A && git write-tree`` writes, from a scratch copy of the index
    (the index file, the work tree and the refs are left as they are). A submodule's
    ``ignore = all`` is set aside: the commit checked out is what the tests ran."""
    import subprocess

    env = gitwalk._env(os.environ)
    env.pop("GIT_OPTIONAL_LOCKS", None)
    overrides = []
    for entry in repo.config:
        if entry.name.startswith("submodule.") and entry.name.endswith(".ignore"):
            overrides += ["-c", f"{entry.name}=none"]
    modules = os.path.join(workdir, ".gitmodules")
    if os.path.isfile(modules):
        with contextlib.suppress(OSError, ValueError, pygit2.GitError):
            for entry in pygit2.Config(modules):
                if entry.name.startswith("submodule.") and entry.name.endswith(".ignore"):
                    overrides += ["-c", f"{entry.name}=none"]
    # with the index's mtime: git's racy-entry check (an entry as new as the index is read
    # again) is then the one `git add -A` makes on the index itself
    with _scratch_index(repo, workdir, keep_mtime=True, config=overrides) as (index, base):
        env["GIT_INDEX_FILE"] = index
        try:
            added = subprocess.run([*base, "add", "-A"], cwd=workdir, env=env, capture_output=True)
            written = subprocess.run(
                [*base, "write-tree"], cwd=workdir, env=env, capture_output=True
            )
        except OSError as exc:
            raise GenstampError(
                f"cannot run git to take the tree of {workdir} ({why}): {exc.strerror or exc}",
                "install git, or put it on PATH",
            ) from exc
    if added.returncode != 0:  # named as the walk's own refusal names it: the path git names
        index = repo.index
        index.read(force=False)
        changed = [path for path, _ in _differing(_pairs(_diff_paths(repo, index, (), _FLAGS)))]
        raise _refused(repo, changed or ["."], added.stderr)
    if written.returncode != 0:
        said = written.stderr.decode("utf-8", "replace").strip().splitlines()
        raise GenstampError(
            f"git write-tree fails in {workdir}: {said[-1] if said else 'no reason given'}",
            "check that `git add -A && git write-tree` works here",
        )
    return written.stdout.decode().strip()


def _negations(repo: pygit2.Repository, workdir: str) -> bool:
    """Whether an ignore rule of this repository is a negation (``!lib/``), or a tracked
    ``.gitignore`` is a symbolic link (git 2.32 and later do not follow it; libgit2 does):
    there libgit2's ignore rules can part from git's (a deeper ``.gitignore`` re-including a
    folder a parent's rule ignores), and git's own list of untracked files decides. The rule
    files: the tracked ``.gitignore`` files (git lists them from the index), ``info/exclude``
    and ``core.excludesFile``."""
    files = _rule_sources(repo, workdir, "exclude", "core.excludesFile")
    tracked = _tracked_rule_files(repo, workdir)[0]
    if any(os.path.islink(name) for name in tracked):
        return True
    files += tracked
    return any(_negates(name) for name in files)


def _negates(name: str) -> bool:
    """Whether the ignore file ``name`` holds a negation (``!lib/``)."""
    try:
        with open(name, "rb") as fh:
            return any(line.lstrip().startswith(b"!") for line in fh)
    except OSError:
        return False


def _new_rules_part(workdir: str, changes: Iterable[tuple[str, int]]) -> bool:
    """Whether an untracked (or ignored) ``.gitignore`` the walk found is one where libgit2's
    ignore rules part from git's, as ``_negations`` asks of the tracked ones: a symbolic link
    (git 2.32 and later do not follow it: the files it names are added), or one holding a
    negation (git reads an ignored one's rules all the same)."""
    for path, status in changes:
        untracked = status in (DeltaStatus.UNTRACKED, DeltaStatus.IGNORED)
        if not untracked or path.rpartition("/")[2] != ".gitignore":
            continue
        full = os.path.join(workdir, path)
        if os.path.islink(full) or _negates(full):
            return True
    return False


def _untracked_as_git(
    repo: pygit2.Repository, workdir: str, changes: list[tuple[str, int]]
) -> list[tuple[str, int]]:
    """``changes`` with its untracked files as git lists them (``git ls-files --others
    --exclude-standard``): the ones libgit2 took for ignored added, any it listed that git
    ignores dropped."""
    import subprocess

    try:
        out = subprocess.run(
            ["git", "ls-files", "-z", "--others", "--exclude-standard"],
            cwd=workdir,
            env=gitwalk._env(os.environ),
            capture_output=True,
            check=True,
        ).stdout
    except (OSError, subprocess.CalledProcessError) as exc:
        raise GenstampError(
            f"cannot ask git which files of {workdir} it ignores: {exc}",
            "check that `git status` works here",
        ) from exc
    theirs = {os.fsdecode(p) for p in out.split(b"\0") if p and not p.endswith(b"/")}
    ours = {p for p, st in changes if st == DeltaStatus.UNTRACKED and not p.endswith("/")}
    kept = [c for c in changes if c[1] != DeltaStatus.UNTRACKED or c[0] not in ours - theirs]
    kept += [(p, DeltaStatus.UNTRACKED) for p in sorted(theirs - ours)]
    return sorted(kept)


def _pairs(deltas: Iterable[pygit2.DiffDelta]) -> list[tuple[str, int]]:
    """Each delta of an index-to-work-tree walk as its path and how it differs (libgit2's
    delta status): what git's walk (``gitwalk``) lists too."""
    return [(_delta_path(d), int(d.status)) for d in deltas]


def _differing(changes: Iterable[tuple[str, int]]) -> list[tuple[str, int]]:
    """The paths the walk found differing from the index, and how: ignored ones aside, but
    for rule files (an ignored `.gitattributes` still applies to the files beside it: one
    added, edited or removed since changes the tree)."""
    return [
        (path, status)
        for path, status in changes
        if status != DeltaStatus.IGNORED or path.rpartition("/")[2] in _RULE_FILES
    ]


_GITLINK_MODE = FileMode.COMMIT.to_bytes(4, "big")  # an index entry's mode, as stored


def _gitlinks(repo: pygit2.Repository) -> bool:
    """Whether the index holds a gitlink (a submodule, with a ``.gitmodules`` or not): its
    HEAD can move where a monitor does not look (a git dir outside the work tree). The index
    file is searched for the mode's bytes first; only where they occur are entries read."""
    try:
        with open(os.path.join(repo.path, "index"), "rb") as fh:
            if _GITLINK_MODE not in fh.read():
                return False
    except OSError:
        return True
    return any(entry.mode == FileMode.COMMIT for entry in repo.index)


def _has_tree(repo: pygit2.Repository, tree: str) -> bool:
    """Whether the object database still has ``tree`` (a gate may name paths inside it)."""
    try:
        return pygit2.Oid(hex=tree) in repo.odb
    except ValueError:
        return False


def status_route(checkout: Checkout) -> str | None:
    """How a later ``status`` can confirm that the work tree is still the kept identity's
    without libgit2 (``statuscache``), as ``scan`` would: "monitor" (Watchman says nothing
    changed), "git" (git's list is the kept record's), or None (only a walk can say)."""
    repo = checkout.repo
    if _config_str(repo, monitor.CONFIG) == monitor.WATCHMAN:
        return "monitor"
    if GIT_STATUS and not _ignorecase(repo) and not _git_reads_other_config():
        return "git"
    return None


def _git_reads_other_config() -> bool:
    paths = pygit2.settings.search_path
    return gitwalk.reads_other_config(
        os.environ,
        paths[ConfigLevel.SYSTEM] or "",
        paths[ConfigLevel.XDG] or "",
        paths[ConfigLevel.GLOBAL] or "",
    )


def _ignorecase(repo: pygit2.Repository) -> bool:
    """core.ignorecase: git then matches names without regard to case, where the walk this
    identity is proven on (libgit2's) does not look for it."""
    try:
        return bool(repo.config.get_bool("core.ignorecase"))
    except (KeyError, pygit2.GitError):
        return False


def _reusable(repo: pygit2.Repository, last: idcache.Record | None, key: str) -> bool:
    """Whether ``last`` may stand for a walk that finds what its walk found."""
    return (
        last is not None
        and bool(key)
        and not last.racy
        and last.dirty is not None
        and last.settings == key
        and _has_tree(repo, last.tree)
    )


def _git_agrees(workdir: str, found: list[tuple[str, int]], last: idcache.Record) -> bool:
    """Whether ``git status`` found (``found``) the paths ``last``'s walk found differing,
    each with the ``lstat`` it had then (the index file unchanged while git looked): the tree
    is then ``last``'s, with no walk and no index read here."""
    # No path of the record goes through git's own conversion (it would keep none), and one
    # that does now is not the record's path with the record's lstat.
    dirty, _ = idcache.dirty_key(workdir, found, lambda _path: False)
    return dirty is not None and dirty == last.dirty


def _usable(
    repo: pygit2.Repository, last: idcache.Record | None, key: str, want_bytecode: bool
) -> bool:
    """Whether the monitor's answer since ``last``'s clock can make this walk's answer."""
    return (
        last is not None
        and bool(key)
        and last.clock is not None
        and last.monitor_ok
        and last.settings == key
        and (last.bytecode is not None or not want_bytecode)
        and _has_tree(repo, last.tree)
    )


_SINCE_MOST = 1000  # changed paths: above this, one whole walk costs less than walking each
# Names whose change changes what other paths mean (ignoring, conversion, submodules).
_RULE_FILES = gitwalk.RULE_FILES


class _Unsure(Exception):
    """The kept tree cannot be rewritten at the changed paths: the tree is walked whole."""


def _since(
    checkout: Checkout, last: idcache.Record, clock: Clock | None, want_bytecode: bool
) -> Scan | None:
    """The kept walk's answer, brought up to date by walking only the paths the monitor says
    changed since its clock; None when it cannot be (the tree is then walked whole). Without
    ``clock``, only when nothing changed; with it, ``clock`` (taken before the monitor was
    asked) is kept for the next time."""
    assert last.clock is not None and last.dirty is not None
    changed = monitor.changed_since(last.clock)
    if changed is not None:
        changed = idcache.counted(checkout, changed)
    if changed is None:
        return None
    if not changed:
        if clock is not None:
            idcache.store(checkout, last._replace(clock=clock), last)
        return Scan(last.tree, last.bytecode or (), "monitor")
    if clock is None or len(changed) > _SINCE_MOST:
        return None
    try:
        return _walk_since(checkout, last, sorted(set(changed)), clock, want_bytecode)
    except _Unsure:
        return None


def _walk_since(
    checkout: Checkout,
    last: idcache.Record,
    names: list[str],
    clock: Clock,
    want_bytecode: bool,
) -> Scan:
    """Walk ``names`` only, and rewrite the kept tree at them; _Unsure when that cannot stand
    for a whole walk."""
    repo = checkout.repo
    workdir = str(checkout.workdir)
    assert last.dirty is not None
    for name in [*names, *(p for p, _, _ in last.dirty)]:
        if name.rpartition("/")[2] in _RULE_FILES or is_bytecode_path(name):
            raise _Unsure(name)  # it changes what other paths mean, or the bytecode found
        if not name.isascii():
            try:
                name.encode("utf-8")
            except UnicodeEncodeError:  # a name of no UTF-8 (``caf\xe9``): a tree names bytes
                raise _Unsure(name) from None
    base = repo[pygit2.Oid(hex=last.tree)]
    assert isinstance(base, pygit2.Tree)
    names = _files_named(workdir, base, names)
    if _ignorecase(repo):
        raise _Unsure("core.ignorecase")
    index = repo.index
    index.read(force=repo in _CHANGED)
    _CHANGED.discard(repo)  # read only: nothing here changes the index in memory
    if index.conflicts is not None:
        raise _Unsure("conflicts")
    deltas = _diff_paths(repo, index, [os.fsencode(n) for n in names], _FLAGS)
    found = {_delta_path(d): d for d in deltas}
    if not found.keys() <= set(names):
        raise _Unsure("the walk found more than the monitor named")
    conversion = _conversion(repo, _pairs(deltas))
    trust = _Trust(_config_bool(repo, "core.filemode"), _config_bool(repo, "core.symlinks"))
    parents: dict[str, bool] = {}
    updates: dict[str, pygit2.IndexEntry | None] = {}
    by_git: list[str] = []
    for name in names:
        delta = found.get(name)
        entry: pygit2.IndexEntry | _Unreadable | None
        if delta is None or (delta.status == DeltaStatus.DELETED and _skip_worktree(index, name)):
            if _extended_flags(index, name) & _INTENT_TO_ADD:
                raise _Unsure(name)  # `git add -N`: the index holds no blob of it
            entry = _indexed(index, name)  # as the index holds it
            if (
                entry is None
                and delta is None
                and os.path.lexists(os.path.join(workdir, name))
                and not path_is_ignored(repo, name)
            ):
                # on disk, not ignored, in no index, and the walk saw nothing: a folder git
                # enters and libgit2 does not (its `.git` is no repository)
                raise _Unsure(name)
        else:
            kept = None if all(trust) else _indexed_mode(index, name)
            entry = _workdir_entry(repo, workdir, name, trust, kept, parents, conversion)
        if isinstance(entry, _Unreadable):
            raise _Unsure(name)
        if entry is not None and entry.id == _BY_GIT:
            by_git.append(name)
        updates[name] = entry
    for name, blob in zip(by_git, git_blobs(repo, by_git), strict=True):
        old = updates[name]
        assert old is not None
        updates[name] = pygit2.IndexEntry(name, pygit2.Oid(hex=blob), old.mode)
    top = _rewrite(repo, base, {n: (e.id, e.mode) if e else None for n, e in updates.items()})
    tree = str(top if top is not None else repo.TreeBuilder().write())
    dirty, racy = idcache.dirty_key(
        workdir, _differing(_pairs(deltas)), lambda p: _by_git(repo, p, conversion)
    )
    if dirty is None:
        raise _Unsure("a differing path cannot stand for the walk")
    merged = {p: (p, s, t) for p, s, t in last.dirty if p not in updates}
    merged.update((p, (p, s, t)) for p, s, t in dirty)
    record = last._replace(
        tree=tree,
        dirty=tuple(sorted(merged.values())),
        racy=last.racy or racy,
        clock=clock,
    )
    idcache.store(checkout, record, last)
    return Scan(tree, last.bytecode or (), "since")


def _files_named(workdir: str, base: pygit2.Tree, names: list[str]) -> list[str]:
    """The ``names`` the monitor gave that are not folders, now or in the kept tree ``base``.
    A folder is named when what it holds changes, and that is named too; a folder that is
    gone must have all it held named. _Unsure for anything else (a nested repository, a folder
    that became a file or the other way round)."""
    named = set(names)
    files = []
    for name in names:
        if ".git" in name.split("/"):
            raise _Unsure(name)  # a nested repository: its HEAD shapes the tree
        try:
            is_dir = stat.S_ISDIR(os.lstat(os.path.join(workdir, name)).st_mode)
        except (FileNotFoundError, NotADirectoryError):
            is_dir = False
        try:
            was = base[name]
        except KeyError:
            was = None
        if was is not None and was.filemode == FileMode.COMMIT:
            raise _Unsure(name)  # a gitlink: its repository's HEAD, not the folder, counts
        if was is not None and was.filemode == FileMode.TREE:
            if is_dir:
                continue  # a folder still: what changed in it is named apart
            held = _paths_under(was, name)
            if len(held) > _SINCE_MOST or not named.issuperset(held):
                raise _Unsure(name)  # a folder gone, and not all it held named
            if os.path.lexists(os.path.join(workdir, name)):
                raise _Unsure(name)  # a folder that became a file or a link
            continue
        if is_dir:
            if was is not None:
                raise _Unsure(name)  # a file that became a folder
            continue  # a new folder: what it holds is named apart
        files.append(name)
    return files


def _paths_under(tree: pygit2.Object, prefix: str) -> list[str]:
    """The paths of every entry (but folders) under ``tree``, at ``prefix``."""
    assert isinstance(tree, pygit2.Tree)
    out: list[str] = []
    for entry in tree:
        path = f"{prefix}/{entry.name}"
        if entry.filemode == FileMode.TREE:
            out += _paths_under(entry, path)
            if len(out) > _SINCE_MOST:
                break
        else:
            out.append(path)
    return out


def _rewrite(
    repo: pygit2.Repository,
    tree: pygit2.Tree | None,
    updates: Mapping[str, tuple[pygit2.Oid, int] | None],
) -> pygit2.Oid | None:
    """``tree`` with each path of ``updates`` (relative to it) set to a blob or a link (id,
    mode) or removed (None); None when nothing is left (git writes no empty tree)."""
    builder = repo.TreeBuilder(tree) if tree is not None else repo.TreeBuilder()
    below: dict[str, dict[str, tuple[pygit2.Oid, int] | None]] = {}
    for path, entry in updates.items():
        head, slash, rest = path.partition("/")
        if slash:
            below.setdefault(head, {})[rest] = entry
            continue
        there = builder.get(head)
        if there is not None and there.filemode == FileMode.TREE:
            raise _Unsure(path)  # a folder that became a file: walked whole
        if entry is None:
            if there is not None:
                builder.remove(head)
        else:
            builder.insert(head, entry[0], entry[1])
    for name, inside in below.items():
        if name in updates:
            raise _Unsure(name)  # a file and a folder at once
        there = builder.get(name)
        if there is not None and there.filemode != FileMode.TREE:
            raise _Unsure(name)  # a file that became a folder: walked whole
        child = repo[there.id] if there is not None else None
        assert child is None or isinstance(child, pygit2.Tree)
        written = _rewrite(repo, child, inside)
        if written is None:
            if there is not None:
                builder.remove(name)
        else:
            builder.insert(name, written, FileMode.TREE)
    return builder.write() if len(builder) else None


def _indexed(index: pygit2.Index, path: str) -> pygit2.IndexEntry | None:
    try:
        return index[path]
    except KeyError:
        return None


def _delta_path(delta: pygit2.DiffDelta) -> str:
    gone = delta.status == DeltaStatus.DELETED
    return (delta.old_file if gone else delta.new_file).path


# -- a split walk ---------------------------------------------------------------------------


def prepare(checkout: Checkout, jobs: int) -> None:
    """Read the index, and open what a walk split in ``jobs`` parts uses, ahead of the walk."""
    repo = checkout.repo
    repo.index  # noqa: B018 - read now, and again only if the file changes
    spares = _SPARES.setdefault(repo, [])
    path = os.path.join(repo.path, "index")
    if os.path.exists(path):
        spares += [_spare(repo, path) for _ in range(jobs - 1 - len(spares))]


def _spare(repo: pygit2.Repository, index_path: str) -> tuple[pygit2.Repository, pygit2.Index]:
    """Another handle on ``repo`` (the same git dir and work tree), and a copy of its index."""
    other = pygit2.Repository(repo.path, flags=pygit2.enums.RepositoryOpenFlag.NO_SEARCH)
    if other.workdir != repo.workdir:
        other.workdir = repo.workdir
    return other, pygit2.Index(index_path)


def cpu_jobs() -> int:
    """Threads a split walk may use: the CPUs this process may run on, at most 4."""
    try:
        cpus = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # not on Linux
        cpus = os.cpu_count() or 1
    return max(1, min(4, cpus))


def _split_walk(
    repo: pygit2.Repository,
    index: pygit2.Index,
    index_path: str,
    before: tuple[int, int, int, int],
    flags: DiffOption,
    jobs: int,
) -> list[pygit2.DiffDelta] | None:
    """The deltas of the whole walk (``_diff_paths`` of every path), walked in parts at once;
    None when the walk is better not split (or cannot be here)."""
    parts = _plan(repo, index, jobs)
    if parts is None:
        return None
    spares = _SPARES.setdefault(repo, [])
    handles: list[tuple[pygit2.Repository, pygit2.Index] | None] = [
        (repo, index),
        *spares[: len(parts) - 1],
    ]
    handles += [None] * (len(parts) - len(handles))
    results: list[list[pygit2.DiffDelta] | None] = [None] * len(parts)
    errors: list[Exception] = []

    def walk(n: int) -> None:
        try:
            handle = handles[n]
            if handle is None:
                handle = handles[n] = _spare(repo, index_path)
            elif n:
                handle[1].read(force=False)
            own, copy = handle
            results[n] = _diff_paths(own, copy, parts[n], flags)
        except Exception as exc:  # the walk is then made whole, which says what is wrong
            errors.append(exc)

    threads = [threading.Thread(target=walk, args=(n,)) for n in range(1, len(parts))]
    for thread in threads:
        thread.start()
    walk(0)
    for thread in threads:
        thread.join()
    spares[:] = [h for h in handles[1:] if h is not None]
    if errors or file_stamp(index_path) != before:
        return None  # or the index file changed meanwhile: the copies may differ
    return [delta for part in results for delta in part or ()]


def _diff_paths(
    repo: pygit2.Repository, index: pygit2.Index, names: Sequence[bytes], flags: DiffOption
) -> list[pygit2.DiffDelta]:
    """The deltas of the index-to-workdir diff of ``names`` only (literal work-tree paths, a
    folder standing for what is under it; none: the whole work tree): libgit2 enters no other
    folder. A submodule or nested repository whose checked-out commit is not the index's is
    reported whatever ``submodule.<name>.ignore`` says: that commit is what the tests ran
    (``ignore = all`` would hide it, and a push of the recorded commit would be accepted)."""
    from pygit2._pygit2 import Diff
    from pygit2.errors import check_error
    from pygit2.ffi import C, ffi

    owned = [ffi.new("char[]", name) for name in names]
    opts = ffi.new("git_diff_options *")
    check_error(C.git_diff_options_init(opts, 1))
    opts.flags = int(flags | DiffOption.DISABLE_PATHSPEC_MATCH)
    # Only the commit counts here; what a submodule's work tree holds beyond it is judged
    # apart (submodules.dirty), so its files are not walked.
    opts.ignore_submodules = C.GIT_SUBMODULE_IGNORE_DIRTY
    array = ffi.new("char *[]", owned)
    opts.pathspec.strings = array
    opts.pathspec.count = len(owned)
    out = ffi.new("git_diff **")
    check_error(C.git_diff_index_to_workdir(out, repo._repo, index._index, opts))
    return list(Diff.from_c(bytes(ffi.buffer(out)[:]), repo).deltas)


def tracked_index(checkout: Checkout) -> pygit2.Index:
    """The checkout's index as git holds it: an identity taken with this handle added the work
    tree's untracked paths to its copy in memory (scrub keeps what git tracks, and untracked
    bytecode in a project that does not ignore it is no such thing)."""
    repo = checkout.repo
    index: pygit2.Index = repo.index
    index.read(force=repo in _CHANGED)
    _CHANGED.discard(repo)
    return index


def split_plan(checkout: Checkout, jobs: int) -> list[list[str]] | None:
    """The parts a walk in ``jobs`` threads would walk (each a list of literal work-tree paths,
    a folder standing for what is under it), or None when it would not be split."""
    parts = _plan(checkout.repo, tracked_index(checkout), jobs)
    return None if parts is None else [[os.fsdecode(p) for p in part] for part in parts]


def _plan(repo: pygit2.Repository, index: pygit2.Index, jobs: int) -> list[list[bytes]] | None:
    if _ignorecase(repo):
        return None  # the index is then sorted without regard to case
    return _parts(IndexView(index), os.fsencode(repo.workdir), jobs)


class IndexView:
    """The sorted paths of an index in memory, by position, read through pygit2's cffi
    bindings (no IndexEntry objects made). The index must not change while it is in use."""

    def __init__(self, index: pygit2.Index) -> None:
        from pygit2.ffi import C, ffi

        raw = index._index
        self.count: int = C.git_index_entrycount(raw)
        get = C.git_index_get_byindex
        string = ffi.string
        self.path: Callable[[int], bytes] = lambda n: string(get(raw, n).path)

    def first(self, key: bytes) -> int:
        """The position of the first entry whose path is not less than ``key``."""
        lo, hi = 0, self.count
        while lo < hi:
            mid = (lo + hi) // 2
            if self.path(mid) < key:
                lo = mid + 1
            else:
                hi = mid
        return lo

    def weight(self, name: bytes) -> int:
        """Entries at ``name`` or under the folder ``name``."""
        under = self.first(name + b"0") - self.first(name + b"/")  # "0" follows "/"
        at = self.first(name)
        return under + (at < self.count and self.path(at) == name)

    def children(self, folder: bytes) -> set[bytes]:
        """The names right under ``folder`` (b"" for the top) that the index holds."""
        prefix = folder + b"/" if folder else b""
        n = self.first(prefix)
        end = self.first(folder + b"0") if folder else self.count
        names: set[bytes] = set()
        while n < end:
            rest = self.path(n)[len(prefix) :]
            name, slash, _ = rest.partition(b"/")
            names.add(name)
            # Past this file, or past all that is under this folder.
            n = self.first(prefix + name + (b"0" if slash else b"\0"))
        return names


def _parts(view: IndexView, workdir: bytes, jobs: int) -> list[list[bytes]] | None:
    """Literal paths for each part of the walk (at most ``jobs``), balanced by index entries,
    or None when they cannot be. Every name on disk or in the index under a folder that is
    split is named, so that the parts together cover the whole walk."""

    def listing(folder: bytes) -> set[bytes] | None:
        """What a folder holds on disk and in the index; None when it is not to be split."""
        full = os.path.join(workdir, folder) if folder else workdir
        try:
            if not stat.S_ISDIR(os.lstat(full).st_mode):
                return None
            disk = set(os.listdir(full))
        except OSError:
            return None
        if b".git" in disk and folder:
            return None  # a nested repository or a submodule: walked whole
        disk.discard(b".git")
        return disk | view.children(folder)

    top = listing(b"")
    if top is None:
        return None
    weights = {name: view.weight(name) for name in top}
    target = view.count / jobs
    for _ in range(64):
        name = max(weights, key=weights.__getitem__)
        if weights[name] <= target:
            break
        inside = None
        at = view.first(name)
        if not (at < view.count and view.path(at) == name):  # a folder in the index too
            inside = listing(name)
        if not inside or len(weights) + len(inside) > _MAX_NAMES:
            break
        del weights[name]
        for child in inside:
            weights[name + b"/" + child] = view.weight(name + b"/" + child)
    bins: list[list[bytes]] = [[] for _ in range(jobs)]
    loads = [0] * jobs
    for name in sorted(weights, key=lambda n: (-weights[n], n)):
        least = loads.index(min(loads))
        bins[least].append(name)
        loads[least] += weights[name] or 1
    parts = [sorted(b) for b in bins if b]
    return parts if len(parts) > 1 else None


def _workdir_entry(
    repo: pygit2.Repository,
    workdir: str,
    path: str,
    trust: _Trust,
    kept: int | None,
    parents: dict[str, bool],
    conversion: _Conversion | None = None,
) -> pygit2.IndexEntry | _Unreadable | None:
    """The index entry ``git add`` would make for ``path``, None when it is gone, or
    _UNREADABLE when git would leave the index entry as it is. A blob that git itself must
    make (``conversion``) is _BY_GIT, for the caller to ask git for."""
    full = os.path.join(workdir, path)
    try:
        st = os.lstat(full)
    except (FileNotFoundError, NotADirectoryError):
        return None
    except OSError:
        return _UNREADABLE
    if not _real_parents(workdir, path.rstrip("/"), parents):
        return None  # git never looks through a symlink (or a file) in the leading path
    if stat.S_ISLNK(st.st_mode):
        target = os.readlink(os.fsencode(full))
        return pygit2.IndexEntry(path, repo.create_blob(target), FileMode.LINK)
    if stat.S_ISDIR(st.st_mode):
        # A nested repository: git records its checked-out commit (a gitlink).
        head = _nested_head(full)
        return None if head is None else pygit2.IndexEntry(path.rstrip("/"), head, FileMode.COMMIT)
    if not stat.S_ISREG(st.st_mode):
        return None
    if conversion is not None and _by_git(repo, path, conversion):
        oid = _BY_GIT
    else:
        # libgit2's conversion, as `git add` does it. Bytes, so that a name that is not UTF-8
        # survives (pygit2 accepts them; its stubs say str).
        try:
            oid = repo.hashfile(os.fsencode(full), as_path=os.fsencode(path))  # type: ignore[arg-type]
        except pygit2.GitError as exc:  # core.safecrlf=true and a conversion it forbids
            raise GenstampError(
                f"git add would refuse {path}: {exc}",
                "fix the file's line endings or core.safecrlf, then check that `git add` works",
            ) from exc
        if oid not in repo.odb:  # write only what the object store lacks (no freshen per call)
            oid = repo.create_blob_fromworkdir(path)
    if not trust.symlinks and kept == FileMode.LINK:
        mode = FileMode.LINK  # a link checked out as a plain file
    elif trust.filemode:
        mode = FileMode.BLOB_EXECUTABLE if st.st_mode & stat.S_IXUSR else FileMode.BLOB
    elif kept in (FileMode.BLOB, FileMode.BLOB_EXECUTABLE):
        mode = FileMode(kept)
    else:
        mode = FileMode.BLOB
    return pygit2.IndexEntry(path, oid, mode)


def _leading(path: str) -> list[str]:
    """``a/b/c`` -> ``["a", "a/b"]``"""
    parts = path.split("/")[:-1]
    return ["/".join(parts[: n + 1]) for n in range(len(parts))]


def _real_parents(workdir: str, path: str, seen: dict[str, bool]) -> bool:
    """True when every leading folder of ``path`` is a real folder, not a link or a file."""
    parent = path.rpartition("/")[0]
    if not parent:
        return True
    known = seen.get(parent)
    if known is None:
        try:
            is_dir = stat.S_ISDIR(os.lstat(os.path.join(workdir, parent)).st_mode)
        except OSError:
            is_dir = False
        known = seen[parent] = is_dir and _real_parents(workdir, parent, seen)
    return known


def _indexed_mode(index: pygit2.Index, path: str) -> int | None:
    try:
        return int(index[path].mode)
    except KeyError:
        pass
    conflicts = index.conflicts
    if conflicts is None:
        return None
    try:
        ancestor, ours, theirs = conflicts[path]
    except KeyError:
        return None
    for entry in (ours, ancestor, theirs):
        if entry is not None:
            return int(entry.mode)
    return None


def _nested_head(path: str) -> pygit2.Oid | None:
    try:
        nested = pygit2.Repository(path, flags=pygit2.enums.RepositoryOpenFlag.NO_SEARCH)
        if nested.head_is_unborn:
            return None
        target = nested.head.target
    except (pygit2.GitError, KeyError):
        return None
    return target if isinstance(target, pygit2.Oid) else None


def _config_str(repo: pygit2.Repository, name: str) -> str | None:
    try:
        return str(repo.config[name])
    except (KeyError, pygit2.GitError):
        return None


def _sparse(repo: pygit2.Repository) -> bool:
    """Whether the checkout is sparse (``core.sparseCheckout``): a skip-worktree file that is
    not there was left out of it, not deleted. ``git sparse-checkout`` writes the setting to
    the work tree's own ``config.worktree`` (``extensions.worktreeConfig``), which libgit2
    does not read."""
    try:
        if repo.config.get_bool("core.sparseCheckout"):
            return True
    except (KeyError, pygit2.GitError):
        pass
    own = os.path.join(repo.path, "config.worktree")
    if not os.path.isfile(own):
        return False
    try:
        return bool(pygit2.Config(own).get_bool("core.sparseCheckout"))
    except (KeyError, pygit2.GitError, OSError):
        return False


def sparse_left_out(repo: pygit2.Repository, paths: Iterable[str]) -> set[str]:
    """Those of ``paths`` a sparse checkout of ``repo`` leaves out (skip-worktree entries of
    the index); none where the checkout is not sparse."""
    if not _sparse(repo):
        return set()
    index = repo.index
    return {p for p in paths if _extended_flags(index, p) & _SKIP_WORKTREE}


def sparse_leaves(repo: pygit2.Repository, path: str) -> bool:
    """Whether ``path`` is left out of a sparse checkout of ``repo`` (a skip-worktree entry of
    a sparse checkout): its file's absence is no change."""
    return bool(_extended_flags(repo.index, path) & _SKIP_WORKTREE) and _sparse(repo)


def _config_bool(repo: pygit2.Repository, name: str) -> bool:
    try:
        return bool(repo.config.get_bool(name))
    except (KeyError, pygit2.GitError):
        return True


_INTENT_TO_ADD = 1 << 13  # GIT_INDEX_ENTRY_INTENT_TO_ADD, in an entry's extended flags
_SKIP_WORKTREE = 1 << 14  # GIT_INDEX_ENTRY_SKIP_WORKTREE


def _skip_worktree(index: pygit2.Index, path: str) -> bool:
    """Whether the index entry for ``path`` is skip-worktree (sparse checkout). Without
    pygit2's cffi bindings, the entry counts as deleted (the identity then differs from git's
    in a sparse checkout only, and the gate refuses rather than accepts)."""
    return bool(_extended_flags(index, path) & _SKIP_WORKTREE)


_ASSUME_VALID = 0x8000  # GIT_INDEX_ENTRY_VALID (`git update-index --assume-unchanged`)


def hidden_changes(
    checkout: Checkout,
    paths: Iterable[str] | None = None,
    searched: Iterable[str] = (),
    needed: Collection[str] = (),
) -> dict[str, str]:
    """The work tree's changes that the index tells git not to look at: each path (of
    ``paths``, or of the whole index) whose index entry is ``--assume-unchanged`` or
    ``--skip-worktree`` and whose file is there with other content than the entry's blob
    (git's conversion applied), with the option. git's status, ``git add -A`` and so the
    tree identity leave such a change out, though the tests see it. A flagged file that is not
    there was deleted unseen, unless the checkout is sparse and the flag is skip-worktree (it
    was left out of the checkout). So was a module (a file Python imports: ``__init__.py``)
    of a folder the tests' imports ``searched`` (a package's, a namespace package's): an
    import found it absent (a package's ``__init__.py``: its folder a namespace package).
    A file of ``needed`` (the suite's configuration, the conftests of the tested folders) is
    asked too, and one left out of a sparse checkout is a change: the run went without it."""
    try:
        from pygit2.ffi import C, ffi
    except ImportError:  # pragma: no cover - a pygit2 without its cffi module
        return {}
    repo = checkout.repo
    index = repo.index
    index.read(force=False)
    raw = index._index
    absent_only: set[str] = set()  # the modules of the searched folders: judged when gone
    if paths is None:
        entries = (C.git_index_get_byindex(raw, n) for n in range(C.git_index_entrycount(raw)))
    else:
        paths = list(dict.fromkeys([*paths, *needed]))
        folded = _ignorecase(repo)  # (libgit2 then sorts the index without regard to case)
        absent_only = set(_modules_in(raw, searched, folded)) - set(paths)
        wanted = [*paths, *sorted(absent_only)]
        entries = (C.git_index_get_bypath(raw, os.fsencode(p), 0) for p in wanted)
    flagged: list[tuple[str, str, str]] = []
    executable: set[str] = set()  # of the flagged entries, those of mode 100755
    for entry in entries:
        if entry == ffi.NULL:
            continue
        flags, extended = entry.flags, entry.flags_extended
        if not (flags & _ASSUME_VALID or extended & _SKIP_WORKTREE) or flags & _STAGE_MASK:
            continue
        option = "--skip-worktree" if extended & _SKIP_WORKTREE else "--assume-unchanged"
        path = os.fsdecode(ffi.string(entry.path))
        flagged.append((path, option, bytes(ffi.buffer(entry.id.id, 20)).hex()))
        if entry.mode == FileMode.BLOB_EXECUTABLE:
            executable.add(path)
    if absent_only:  # a module of a searched folder that is there: loaded (judged), or not
        flagged = [f for f in flagged if f[0] not in absent_only or not _exists(checkout, f[0])]
    out: dict[str, str] = {}
    conversion = _conversion(repo, ()) if flagged else None
    sparse = bool(flagged) and _sparse(repo)
    # the executable bit counts where git's does (core.fileMode, true unless set false)
    modes = bool(flagged) and _config_bool(repo, "core.filemode")
    by_git: list[tuple[str, str, str]] = []
    for path, option, blob in flagged:
        full = os.path.join(checkout.workdir, path)
        try:
            st = os.lstat(full)
            if (
                modes
                and stat.S_ISREG(st.st_mode)
                and bool(st.st_mode & 0o111) != (path in executable)
            ):
                out[path] = option  # made executable, or no longer: a clone has the entry's
                continue
            if stat.S_ISLNK(st.st_mode):
                now = str(pygit2.hash(os.fsencode(os.readlink(full))))
            elif not stat.S_ISREG(st.st_mode):
                now = ""  # a folder where the index has a file
            elif conversion is not None and _by_git(repo, path, conversion):
                by_git.append((path, option, blob))  # a filter driver: git's own conversion
                continue
            else:
                now = str(repo.hashfile(os.fsencode(full), as_path=os.fsencode(path)))  # type: ignore[arg-type]
        except FileNotFoundError:
            if option == "--skip-worktree" and sparse and path not in needed:
                continue  # left out of a sparse checkout: no change
            now = ""  # deleted, and the index told git not to look
        except (OSError, pygit2.GitError):
            now = ""
        if now != blob:
            out[path] = option
    if by_git:
        try:
            made = git_blobs(repo, [path for path, _, _ in by_git])
        except GenstampError:
            made = [""] * len(by_git)
        out.update((p, o) for (p, o, b), now in zip(by_git, made, strict=True) if now != b)
    return out


_STAGE_MASK = 0x3000  # an entry's merge stage, in its flags


def _exists(checkout: Checkout, path: str) -> bool:
    return os.path.lexists(os.path.join(checkout.workdir, path))


def _modules_in(raw: object, folders: Iterable[str], folded: bool = False) -> Iterator[str]:
    """The paths of the index ``raw`` (libgit2's, through pygit2's cffi bindings) of the files
    directly in ``folders`` that Python imports as modules (``importlib.machinery``'s
    suffixes). The index is sorted by path, as bytes (``folded``: as bytes with ASCII letters
    lower-cased, as libgit2 sorts it under ``core.ignorecase``): each folder's files, and past
    each of its subfolders, are found by a binary search, not a walk of the whole index."""
    import bisect

    from pygit2.ffi import C, ffi

    from genstamp.audit import MODULE_SUFFIXES

    count = C.git_index_entrycount(raw)

    class Paths(Sequence[bytes]):
        def __len__(self) -> int:
            return int(count)

        def __getitem__(self, n: int) -> bytes:  # type: ignore[override]
            path = bytes(ffi.string(C.git_index_get_byindex(raw, n).path))
            return path.lower() if folded else path

    listed = Paths()
    for folder in sorted(set(folders)):
        exact = os.fsencode(folder + "/") if folder else b""
        prefix = exact.lower() if folded else exact
        n = bisect.bisect_left(listed, prefix)
        while n < count:
            path = listed[n]
            if not path.startswith(prefix):
                break
            name, slash, _ = path[len(prefix) :].partition(b"/")
            if slash:  # a subfolder's files: past them ("0" follows "/")
                n = bisect.bisect_left(listed, prefix + name + b"0", n)
                continue
            found = bytes(ffi.string(C.git_index_get_byindex(raw, n).path))
            n += 1
            if found.startswith(exact) and os.fsdecode(found).endswith(MODULE_SUFFIXES):
                yield os.fsdecode(found)


def _extended_flags(index: pygit2.Index, path: str) -> int:
    """The extended flags of the stage-0 index entry for ``path`` (0 when there is none).
    pygit2's IndexEntry does not carry them: libgit2's entry is read through pygit2's cffi
    bindings (0 without them)."""
    try:
        from pygit2.ffi import C, ffi
    except ImportError:  # pragma: no cover - a pygit2 without its cffi module
        return 0
    raw = C.git_index_get_bypath(index._index, os.fsencode(path), 0)
    return 0 if raw == ffi.NULL else int(raw.flags_extended)
