"""The last ``genstamp status``, kept in the git dir with the stamp of everything it read, and
given again while every stamp holds and the work tree is still the tree it named.

``status`` reads the kept identity, the index, HEAD and its ref, the config files and the
exclude and attribute files that shape the tree, genstamp's stamp, the evidence parts of the
generation, the clean-room records and pyproject.toml. Its answer is kept (``keep``) with the
``lstat`` of each of these files (and of the folders whose listing it read), the environment
variables git reads, and genstamp's version. The next ``status`` (``answer``) gives the kept
answer again, without importing pygit2 or the rest of genstamp, when:

- every stamp and variable is the same, and none of them was written within ``RACY_NS`` of
  the status that kept the answer (a write in the same clock tick would leave a stamp alone);
- the work tree is still the kept identity's, confirmed as ``identity.scan`` confirms it: git's
  list of differing paths is the kept record's, each path with the same ``lstat`` (the index
  unchanged while git looked), or, with the monitor on, Watchman saw nothing change since the
  record's clock.

Anything else (no answer kept, a config file with an include, a linked worktree, GIT_DIR set, a
stamp that moved, git or Watchman saying otherwise) is no answer: ``status`` is computed whole,
as without one, and its answer kept for the next time. The answer is a cache: a file of another
format or version is remade, never an error.
"""

from __future__ import annotations

import contextlib
import json
import os
import stat
import sys
import time
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from genstamp import __version__, gitwalk, idcache, versioned
from genstamp.atomic import read_kept
from genstamp.errors import GenstampError
from genstamp.repo import Place, find_place

if TYPE_CHECKING:
    from genstamp.repo import Checkout

FORMAT = "genstamp-status"
VERSION = 1
NAME = "status.json"
START_NAME = "start-tree.json"  # the tree at the start of the last run (``keep_start``)
RACY_NS = idcache._RACY_NS  # a file written this recently cannot vouch for its content
# Files of the git dir that shape the tree (the config files are listed apart).
_TREE_FILES = (
    "index",
    "config",
    "config.worktree",
    "info/exclude",
    "info/attributes",
    "info/sparse-checkout",
)
# The others status reads (HEAD's ref is added: it is named in HEAD).
_GITDIR_FILES = (
    "HEAD",
    "packed-refs",
    "shallow",
    "objects/info/alternates",
    "objects/pack",
)
_INCLUDE = b"include"  # [include] and [includeIf]: config read from files not listed here

Stamp = list[int] | None  # mode, inode, size, mtime, ctime (ns); None: no such file


def _stamp(path: str) -> Stamp:
    """The ``lstat`` of ``path``, and of what it leads to when it is a symbolic link (a config
    file of a dotfiles folder linked into place: an edit there leaves the link alone)."""
    try:
        st = os.lstat(path)
    except (FileNotFoundError, NotADirectoryError):
        return None
    if _loose_object(path):
        # Its name is its content: only whether it is there counts. Writing the same object
        # again (every walk writes its tree) touches its times, which says nothing.
        return [st.st_mode, 0, st.st_size, 0, 0]
    out = [st.st_mode, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns]
    if stat.S_ISLNK(st.st_mode):
        try:
            target = os.stat(path)
            out += [target.st_mode, target.st_ino, target.st_size, target.st_mtime_ns]
            out.append(target.st_ctime_ns)
        except OSError:
            out.append(-1)
    return out


def _loose_object(path: str) -> bool:
    """Whether ``path`` names a loose object of a git dir (``objects/ab/cdef…``)."""
    folder, name = os.path.split(path)
    objects, fan = os.path.split(folder)
    return (
        os.path.basename(objects) == "objects"
        and len(fan) == 2
        and len(name) in (38, 62)
        and all(c in _HEX for c in fan + name)
    )


_HEX = frozenset("0123456789abcdef")


def _env(environ: Mapping[str, str]) -> dict[str, str]:
    """The variables that change what git and libgit2 read."""
    return {
        k: v
        for k, v in environ.items()
        if k.startswith("GIT_") or k in ("HOME", "XDG_CONFIG_HOME", "WATCHMAN_SOCK")
    }


def _stamps(paths: Iterable[str]) -> list[list[Any]]:
    return [[path, _stamp(path)] for path in paths]


def _head_refs(gitdir: str) -> list[str] | None:
    """The ref files HEAD leads through ([] for a detached HEAD): the branch it names and,
    where that is a symbolic ref itself (``refs/heads/master`` kept naming ``refs/heads/main``
    after a rename), the ref that one names, and so on; None when it cannot be said."""
    out: list[str] = []
    where = os.path.join(gitdir, "HEAD")
    for _ in range(5):  # git follows as many
        try:
            with open(where, "rb") as fh:
                text = fh.read()
        except OSError:
            return out if out else None  # a branch in packed-refs (kept there: no link)
        if not text.startswith(b"ref: "):
            return out
        name = os.fsdecode(text[5:].strip())
        if not name.startswith("refs/") or ".." in name.split("/"):
            return None
        where = os.path.join(gitdir, name)
        out.append(where)
    return None


def _listed(folder: str) -> list[str]:
    """``folder`` and everything under it (files and folders), or ``[folder]`` if it is none."""
    out = [folder]
    for top, dirs, files in os.walk(folder):
        dirs.sort()
        out += [os.path.join(top, name) for name in sorted(dirs + files)]
    return out


def _records(folder: str) -> list[str]:
    """``folder`` and the clean-room records in it (not its cached environments and logs:
    thousands of files status never reads)."""
    try:
        names = sorted(n for n in os.listdir(folder) if n.endswith(".json"))
    except OSError:
        names = []
    return [folder, *(os.path.join(folder, n) for n in names)]


def config_files(checkout: Checkout) -> tuple[list[str], list[str]]:
    """The config files git and libgit2 may read for ``checkout`` (libgit2's search paths,
    the files GIT_CONFIG_GLOBAL and GIT_CONFIG_SYSTEM name, the repository's own), and the
    other files that shape its tree (attributes and ignore files)."""
    import pygit2
    from pygit2.enums import ConfigLevel

    from genstamp.watch import settings

    search = pygit2.settings.search_path
    config: list[str] = []
    other = [name for name, _ in settings(checkout).files]
    other.append(idcache._SYSTEM_ATTRIBUTES)
    levels = (ConfigLevel.SYSTEM, ConfigLevel.XDG, ConfigLevel.GLOBAL)
    for level, names in zip(levels, gitwalk._LEVEL_FILES, strict=True):
        for folder in (search[level] or "").split(os.pathsep):
            for name in names if folder else ():
                kind = config if name in ("gitconfig", "config", ".gitconfig") else other
                kind.append(os.path.join(folder, name))
    config += [os.environ[v] for v in ("GIT_CONFIG_GLOBAL", "GIT_CONFIG_SYSTEM") if v in os.environ]
    config += [str(checkout.gitdir / "config"), str(checkout.gitdir / "config.worktree")]
    return config, other


class Inputs:
    """The files a ``status`` of ``checkout`` reads, stamped before it reads them; with
    ``tree_only``, only those that shape its tree (the tree at the start of a run)."""

    def __init__(
        self, checkout: Checkout, files: tuple[list[str], list[str]], tree_only: bool = False
    ) -> None:
        self.start_ns = time.time_ns()
        gitdir = str(checkout.gitdir)
        self.ok = not os.path.exists(os.path.join(gitdir, "commondir"))
        paths = [os.path.join(gitdir, name) for name in _TREE_FILES]
        last = idcache.load(checkout)
        if last is not None:  # the kept tree's object, while it is loose
            paths.append(os.path.join(gitdir, "objects", last.tree[:2], last.tree[2:]))
        if not tree_only:
            from genstamp import cleanrecord, generation, parts

            paths += [os.path.join(gitdir, name) for name in _GITDIR_FILES]
            refs = _head_refs(gitdir)
            self.ok = self.ok and refs is not None
            paths += refs or []
            paths += [  # (not the state folder's own stamp: keeping an answer writes there)
                str(idcache.path(checkout)),
                str(generation.stamp_path(checkout)),
                *_listed(str(checkout.state / parts.FOLDER)),
                *_records(str(cleanrecord.folder(checkout.gitdir))),
                str(checkout.workdir / "pyproject.toml"),
            ]
        config, other = files
        for name in config:
            paths.append(name)
            try:
                with open(name, "rb") as fh:
                    self.ok = self.ok and _INCLUDE not in fh.read().lower()
            except OSError:
                pass
        paths += other
        self.paths = list(dict.fromkeys(paths))
        self.env = _env(os.environ)
        self.stamps = _stamps(self.paths)

    def holding(self) -> bool:
        """Whether no input changed since they were stamped, none was written within
        ``RACY_NS`` before, and the environment is the same."""
        if not self.ok or _env(os.environ) != self.env or _stamps(self.paths) != self.stamps:
            return False
        edge = self.start_ns - RACY_NS
        # (a link's stamp holds its target's after its own: mode, inode, size, mtime, ctime)
        return all(s is None or all(t < edge for t in (*s[3:5], *s[8:10])) for _, s in self.stamps)


def path(place: Place | Checkout, name: str = NAME) -> str:
    return os.path.join(place.state, name)


def keep(
    checkout: Checkout, inputs: Inputs, tree: str, route: str, text: str, json_text: str
) -> None:
    """Keep this status's answer (``text`` and ``json_text``, as printed) for the next one,
    when its inputs held throughout and ``tree`` is the kept identity's, confirmable by
    ``route`` ("git": git's list; "monitor": Watchman). A failure to write costs time only."""
    _keep(checkout, inputs, tree, route, {"text": text, "json": json_text}, NAME)


def keep_start(checkout: Checkout, inputs: Inputs, tree: str) -> None:
    """Keep ``tree``, the tree at the start of a run (``inputs``: ``tree_only``), for the next
    run's co-process (``start_tree``), on the same terms as a status's answer, where git's
    list can confirm it (not where git reads other settings than libgit2)."""
    from genstamp.identity import status_route

    if status_route(checkout) != "git":
        _drop(checkout, START_NAME)
        return
    _keep(checkout, inputs, tree, "git", {}, START_NAME)


def _keep(
    checkout: Checkout,
    inputs: Inputs,
    tree: str,
    route: str,
    answer: dict[str, str],
    name: str,
) -> None:
    from genstamp.atomic import write_atomic

    last = idcache.load(checkout)
    if (
        last is None
        or last.tree != tree
        or (route == "git" and last.racy)  # the monitor vouches for a racy record
        or last.dirty is None
        or not last.settings
        or last.settings != idcache.settings_key(checkout)
        or (route == "monitor" and (last.clock is None or not last.monitor_ok))
        or not inputs.holding()
    ):
        _drop(checkout, name)
        return
    data = {
        "format": FORMAT,
        "version": VERSION,
        "genstamp": __version__,
        "workdir": str(checkout.workdir),
        "gitdir": str(checkout.gitdir),
        "tree": tree,
        "route": route,
        "env": inputs.env,
        "stamps": inputs.stamps,
        **answer,
    }
    try:
        write_atomic(path(checkout, name), json.dumps(data).encode(), sync=False)
    except OSError:
        _drop(checkout, name)


def forget(checkout: Checkout) -> None:
    """No answer kept any longer, the kept identity's record with them: the next status, run
    and gate compute the tree whole (``genstamp stamp`` after an edit no kept answer sees: an
    ignored ``.gitattributes`` deeper in the tree)."""
    for name in (NAME, START_NAME):
        _drop(checkout, name)
    with contextlib.suppress(OSError):
        os.unlink(idcache.path(checkout))


def _drop(checkout: Checkout, name: str = NAME) -> None:
    with contextlib.suppress(OSError):
        os.unlink(path(checkout, name))


def _load(place: Place, name: str = NAME) -> dict[str, Any] | None:
    try:
        data = json.loads(read_kept(path(place, name)))
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict):
        return None
    same = (data.get("format"), data.get("genstamp")) == (FORMAT, __version__)
    same = same and versioned.matches(data.get("version"), VERSION)
    where = (data.get("workdir"), data.get("gitdir")) == (str(place.workdir), str(place.gitdir))
    return data if same and where else None


def start_tree(directory: str) -> tuple[Place, str] | None:
    """The checkout around ``directory`` and the tree its work tree holds, from the tree kept
    at the start of the last run (``keep_start``) when it still holds, confirmed as a status's
    answer is (git's list of differing paths, each with the same ``lstat``): without
    importing pygit2. None when it cannot be said (the caller walks the tree)."""
    if os.environ.get("GIT_DIR") or os.environ.get("GIT_WORK_TREE"):
        return None
    try:
        place = find_place(directory)
    except (GenstampError, OSError, ValueError):
        return None
    if place is None:
        return None
    try:
        kept = _load(place, START_NAME)
        if kept is None or kept.get("env") != _env(os.environ) or kept.get("route") != "git":
            return None
        stamps = kept.get("stamps")
        tree = kept.get("tree")
        if not isinstance(stamps, list) or not isinstance(tree, str) or not _holds(stamps):
            return None
        walk = gitwalk.start(str(place.workdir), str(place.gitdir))
        try:
            confirmed = _confirmed(place, tree, "git", walk)
        finally:
            gitwalk.discard(walk)
        if not confirmed or not _holds(stamps):  # nothing changed while git looked
            return None
    except (OSError, ValueError, TypeError, KeyError):
        return None
    return place, tree


def answer(directory: str | None, as_json: bool) -> bool:
    """Print the kept answer of ``genstamp status`` (``--json``: as JSON) for the checkout
    around ``directory`` (default: here) when it still holds; False (nothing printed) when it
    cannot be given: the caller computes the status whole. A walk of git's started here is
    left for the caller (``gitwalk.take``)."""
    if os.environ.get("GIT_DIR") or os.environ.get("GIT_WORK_TREE"):
        return False
    try:
        place = find_place(directory if directory is not None else os.getcwd())
    except (GenstampError, OSError, ValueError):
        return False  # the command opens the checkout itself, and says what is wrong
    if place is None:
        return False
    workdir, gitdir = str(place.workdir), str(place.gitdir)
    walk: gitwalk.Walk | None = None
    if not gitwalk._monitored(gitdir):  # git walks while the rest is read
        walk = gitwalk.start(workdir, gitdir)
        gitwalk.hand_over(walk)
    try:
        kept = _load(place)
        if kept is None or kept.get("env") != _env(os.environ):
            return False
        stamps = kept.get("stamps")
        if not isinstance(stamps, list) or not _holds(stamps):
            return False
        if not _confirmed(place, str(kept.get("tree")), kept.get("route"), walk):
            return False
        if not _holds(stamps):  # nothing changed while git or Watchman looked
            return False
        out = kept.get("json" if as_json else "text")
        if not isinstance(out, str):
            return False
    except (OSError, ValueError, TypeError, KeyError):
        return False
    sys.stdout.write(out)
    sys.stdout.flush()
    gitwalk.cancel()
    return True


def _holds(stamps: list[Any]) -> bool:
    return all(isinstance(p, str) and _stamp(p) == s for p, s in stamps)


def _confirmed(place: Place, tree: str, route: object, walk: gitwalk.Walk | None) -> bool:
    """Whether the work tree is still ``tree``, the kept identity's, as ``identity.scan``
    would confirm it (see the module's doc)."""
    last = idcache.load(place)
    if last is None or last.tree != tree or last.dirty is None:
        return False
    if route == "monitor":
        from genstamp import monitor

        if last.clock is None or not last.monitor_ok:
            return False
        changed = monitor.changed_since(last.clock)
        if changed is None:
            return False
        return idcache.counted(place, changed) == []
    if route != "git" or walk is None or last.racy:
        return False
    found = gitwalk.differing(walk)  # None too when the index changed while git looked
    if found is None:
        return False
    dirty, _ = idcache.dirty_key(str(place.workdir), found, lambda _path: False)
    return dirty is not None and dirty == last.dirty
