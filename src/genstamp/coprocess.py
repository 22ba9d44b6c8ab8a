"""The pytest plugin's co-process: everything that needs libgit2, kept out of the test process.

Both sides of the protocol live here: ``CoProcess`` (in the test process) starts

    python -m genstamp.coprocess FOLDER

which runs ``main``. It prints one JSON line per answer on stdout: the checkout libgit2
discovers from FOLDER (``{"workdir", "gitdir"}``), then the tree at the start (``{"tree"}``).
For a large tree whose work tree it watches, ``{"early": true}`` comes first: the test process
need not wait for the tree, it writes a line ``begin`` and starts its tests, and the walk is
the tree at their start only if nothing that shapes the tree changed while it ran (else
``{"tree", "raced": "what changed"}``: which tree the tests began on is unknown). Then it
waits for a line ``end`` on stdin (with a tab and the path of the run's own report in the work
tree, when it writes one there) and prints the tree at the end, HEAD and whether the tree
moved since the start, that report left out of both (``{"tree", "head", "moved"}``). The
tree at the end is the one at the start when a watch on the work tree (``genstamp.watch``) saw
nothing that shapes it change, and a new walk otherwise. A line ``ignored``, a tab and a JSON
request ``{"paths": [...], "loaded": {path: [blob, ...]}}`` may follow: of the paths, it
prints those the tree leaves out because git ignores them (``{"ignored": [...]}``: neither in
the index nor in an environment's folder) and those in a gitlink no ``.gitmodules`` gives a URL
(``"unregistered": {path: gitlink}``); of the files loaded, those loaded with bytes the tree
does not hold (``"differ": [...]``); and ends. Any failure is an answer ``{"error": "..."}``
and ends it. End of input ends it too.
Importing pygit2 costs the test process tens of milliseconds (and two more full collections at
exit); here it runs beside pytest's own start-up and collection.
"""

from __future__ import annotations

import contextlib
import importlib.machinery
import json
import os
import signal
import sys
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from genstamp.errors import GenstampError
from genstamp.typedtuple import NamedTuple

if TYPE_CHECKING:  # the test process's side never imports pygit2
    import subprocess
    from collections.abc import Mapping

    import pygit2

    from genstamp.repo import Checkout

MODULE = "genstamp.coprocess"  # started by this name: python -m genstamp.coprocess FOLDER
BEGIN = "begin"  # the test process's word: its tests may run from now on
# The walk at the start of a tree of this many files or more lets the tests begin beside it.
EARLY_FILES = 1000
END = "end"  # the test process's request: the tree at the end, please
IGNORED = "ignored"  # then, optionally: which of these loaded paths does git ignore?

# The folder holding this very genstamp: the co-process must speak this protocol.
_HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# The import path a child of this interpreter has of its own (without the ``sys.path[0]`` of
# how it was started), as it was before pytest added any folder to it.
_OWN_PATH = tuple(os.path.abspath(p) for p in sys.path[1:])


def command(folder: Path) -> tuple[list[str], str, dict[str, str]]:
    """The co-process's command line, working folder and environment.

    ``-m`` with the folder holding this genstamp as the working folder puts that folder first
    on the child's path, so the child imports this genstamp. When the child finds this genstamp
    on its own path anyway (installed in site-packages, or editable through a ``.pth``),
    PYTHONSAFEPATH keeps it from also going first: site-packages must not come before the
    standard library."""
    env = dict(os.environ)
    env.pop("PYTHONSAFEPATH", None)
    env["GENSTAMP_RUN"] = ""  # genstamp's own process: a run's .pth hook leaves it alone
    if _finds_itself(_HERE, _OWN_PATH):
        env["PYTHONSAFEPATH"] = "1"
    return [sys.executable, "-m", MODULE, str(folder)], _HERE, env


def _finds_itself(here: str, path: tuple[str, ...]) -> bool:
    """Whether ``path`` leads to the genstamp package in ``here`` before any other."""
    if here not in path:
        return False
    spec = importlib.machinery.PathFinder.find_spec("genstamp", list(path))
    origin = spec.origin if spec is not None else None
    return origin is not None and os.path.dirname(os.path.dirname(origin)) == here


class Misplaced(NamedTuple):
    """Loaded files a clean clone will not have, and changes git does not see."""

    ignored: list[str]  # git ignores them
    unregistered: dict[str, str]  # path -> the gitlink it lies in, which has no URL
    differ: tuple[str, ...] = ()  # loaded as the tree does not hold them
    # of the files the tests used, those changed while the index tells git not to look at
    # them: path -> the option (``--assume-unchanged``, ``--skip-worktree``)
    hidden: dict[str, str] = {}  # noqa: RUF012 - never mutated
    # submodules whose work tree holds changes their recorded commit does not: path -> them
    dirty: dict[str, list[str]] = {}  # noqa: RUF012 - never mutated
    # loaded bytes that git's conversion makes the tree's blob: path -> {raw blob: blob}
    converted: dict[str, dict[str, str]] = {}  # noqa: RUF012 - never mutated


def unseen(
    checkout: Checkout,
    used: list[str] | None,
    searched: list[str],
    roots: Sequence[str] = (),
    loaded: Iterable[str] = (),
) -> tuple[dict[str, str], dict[str, list[str]]]:
    """What the tree leaves out and the gate refuses (``hidden-change``, ``dirty-submodule``):
    the hidden changes among the files ``used`` (of every file: None) and the modules of the
    folders the imports ``searched`` (and the configuration of the suites the run's files are
    in, their folders ``roots``, and the conftests a sparse checkout left out for the files
    ``loaded``), and each submodule with changes its recorded commit does not hold."""
    from genstamp import submodules  # not the gate's facts: their import costs tens of ms
    from genstamp.identity import hidden_changes

    found = submodules.dirty(checkout) if submodules.may_have(checkout) else []
    dirty = {path: list(changes) for path, changes in found}
    loaded = list(loaded)
    needed = set().union(*(_run_reads(checkout, root, loaded) for root in roots))
    return hidden_changes(checkout, used, searched, needed), dirty


def _run_reads(checkout: Checkout, root: str, loaded: Iterable[str]) -> set[str]:
    """The configuration of the suite in the folder ``root`` and the conftests a run reads for
    the files ``loaded``, as the index holds them (``suite.run_reads``)."""
    import pygit2

    from genstamp import suite

    repo = checkout.repo
    index = repo.index

    def read(path: str) -> bytes | None:
        try:
            blob = repo.get(index[path].id)
        except (KeyError, ValueError, pygit2.GitError):
            return None
        return blob.data if isinstance(blob, pygit2.Blob) else None

    config = suite.read_config(read, root)
    return suite.run_reads([config.source], index.__contains__, loaded)


class Asked(NamedTuple):
    """What a run asks of the tree at its end (``CoProcess.ask_misplaced``)."""

    paths: list[str]  # relative to the work tree
    loaded: Mapping[str, Sequence[str]] | None = None  # path -> blob ids loaded
    used: list[str] | None = None  # the files the run used (every file: None)
    searched: list[str] | None = None  # the folders the imports searched
    roots: Sequence[str] = ()  # the suites' folders (or the run's own)


class End(NamedTuple):
    """The co-process's answer at the end of a run."""

    tree: str
    head: str | None
    moved: bool  # the tree changed since the start, beyond the run's own report


def moved_beyond(repo: pygit2.Repository, start: str, end: str, output: str) -> bool:
    """Whether the trees ``start`` and ``end`` differ in more than the file ``output`` (the
    run's own report in the work tree, which the gate leaves out of both: ``facts.without``)."""
    if start == end or not output:
        return start != end
    from genstamp.facts import without

    views = without(repo, (start, end), output)
    return views.get(start, start) != views.get(end, end)


class CoProcess:
    """The test process's side: starts the co-process; its answers are read when they are
    needed, each a dict, ``{"error": ...}`` when it could not give one."""

    def __init__(self, folder: Path) -> None:
        import subprocess  # here: the co-process's side never needs it

        argv, cwd, env = command(folder)
        self.proc: subprocess.Popen[str] | None = subprocess.Popen(
            argv,
            cwd=cwd,
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
            encoding="utf-8",
            errors="surrogateescape",
        )

    def read(self) -> dict[str, Any]:
        proc = self.proc
        if proc is None or proc.stdout is None:
            return {"error": "genstamp's co-process is gone"}
        line = proc.stdout.readline()
        try:
            data = json.loads(line)
        except ValueError:
            data = None
        if not isinstance(data, dict):
            code = proc.poll()
            return {"error": f"genstamp's co-process gave no answer (exit status {code})"}
        return data

    def answered(self) -> bool:
        """Whether an answer is there to read (False: reading would wait, or cannot tell)."""
        proc = self.proc
        if proc is None or proc.stdout is None:
            return True
        import select

        try:
            return bool(select.select([proc.stdout], [], [], 0)[0])
        except (OSError, ValueError):
            return False

    def begin(self) -> bool:
        """Say that the tests begin now (the co-process watches the work tree); False when it
        could not be said (the co-process is gone)."""
        stdin: IO[str] | None = self.proc.stdin if self.proc is not None else None
        if stdin is None:
            return False
        try:
            stdin.write(BEGIN + "\n")
            stdin.flush()
        except (OSError, ValueError):
            return False
        return True

    def ask_end(self, output: str = "") -> None:
        """Ask for the tree at the end (read it with ``tree_end``); ``output``: the run's own
        report, relative to the work tree, left out when judging whether the tree moved."""
        stdin: IO[str] | None = self.proc.stdin if self.proc is not None else None
        if stdin is not None:
            with contextlib.suppress(OSError, ValueError):
                stdin.write(f"{END}\t{output}\n" if output else END + "\n")
                stdin.flush()

    def tree_end(self) -> End:
        """The tree at the end, HEAD, and whether the tree moved."""
        answer = self.read()
        tree = answer.get("tree")
        if "error" in answer or not isinstance(tree, str):
            raise GenstampError(
                f"the tree at the end is unknown: {answer.get('error', 'no answer')}"
            )
        head = answer.get("head")
        return End(tree, head if isinstance(head, str) else None, answer.get("moved") is True)

    def ask_misplaced(self, asked: Asked) -> None:
        """Ask which of the paths (relative to the work tree) git ignores, leaving them out of
        the tree, which lie in a repository a clone cannot fetch, which of the files loaded
        were loaded as the tree does not hold them, which of the files used and modules of the
        folders the imports searched (and the files a run of the suites in the roots reads:
        ``unseen``) hold changes hidden from git, and which submodules hold changes (read it
        with ``misplaced_answer``, after ``tree_end``; the co-process ends once it has
        answered). Asked once the tree at the end is asked for (``ask_end``), before or after
        that is read: the co-process answers in order."""
        stdin: IO[str] | None = self.proc.stdin if self.proc is not None else None
        if stdin is None:
            raise GenstampError("genstamp's co-process is gone")
        try:
            question = {
                "paths": asked.paths,
                "loaded": {k: list(v) for k, v in (asked.loaded or {}).items()},
                "used": asked.used,
                "searched": asked.searched or [],
                "roots": list(asked.roots),
            }
            stdin.write(f"{IGNORED}\t{json.dumps(question)}\n")
            stdin.flush()
        except (OSError, ValueError) as exc:
            raise GenstampError(f"genstamp's co-process is gone: {exc}") from exc

    def misplaced_answer(self) -> Misplaced:
        """The answer to ``ask_misplaced`` (after ``tree_end``)."""
        answer = self.read()
        found = answer.get("ignored")
        links = answer.get("unregistered", {})
        differ = answer.get("differ", [])
        hidden = answer.get("hidden", {})
        dirty = answer.get("dirty", {})
        forms = answer.get("converted", {})
        if (
            "error" in answer
            or not isinstance(found, list)
            or not isinstance(links, dict)
            or not isinstance(differ, list)
            or not isinstance(hidden, dict)
            or not isinstance(dirty, dict)
            or not isinstance(forms, dict)
        ):
            raise GenstampError(
                f"which loaded files git ignores is unknown: {answer.get('error', 'no answer')}"
            )
        return Misplaced(
            [str(p) for p in found],
            {str(p): str(g) for p, g in links.items()},
            tuple(str(p) for p in differ),
            {str(p): str(o) for p, o in hidden.items()},
            {str(p): [str(c) for c in changes] for p, changes in dirty.items()},
            {str(p): {str(r): str(b) for r, b in f.items()} for p, f in forms.items()},
        )

    def close(self, *, abandon: bool = False) -> None:
        """End the co-process: it ends itself at the end of its input, unless ``abandon``
        (nobody needs its answers: it is stopped at once, even in the middle of a walk)."""
        proc, self.proc = self.proc, None
        if proc is None:
            return
        for stream in (proc.stdin, proc.stdout):
            if stream is not None:
                with contextlib.suppress(OSError, ValueError):
                    stream.close()
        if abandon:
            proc.kill()
        import subprocess

        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


# -- the co-process's side ----------------------------------------------------------------------


def _say(data: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(data) + "\n")
    sys.stdout.flush()


def _error(exc: Exception) -> dict[str, Any]:
    if isinstance(exc, GenstampError):
        return {"error": str(exc)}
    from genstamp.errors import unreadable_index

    remedy = unreadable_index(exc)
    return {"error": f"{type(exc).__name__}: {exc}" + (f" — {remedy}" if remedy else "")}


def _begun() -> bool:
    """Whether the test process has written ``begin`` (or closed our input): nothing has been
    read from it yet, so the descriptor says it."""
    import select

    try:
        return bool(select.select([sys.stdin.fileno()], [], [], 0)[0])
    except (OSError, ValueError):
        return True  # cannot tell: as if begun


def main(argv: list[str]) -> int:
    # Ctrl-C reaches the whole process group: the plugin still asks for the tree at the end
    # (an interrupted run is evidence of a partial run), then closes our input.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if len(argv) != 1:
        _say({"error": f"usage: python -m {MODULE} FOLDER"})
        return 2
    # The tree kept at the start of the last run, while it holds (git's list confirms it):
    # said before pygit2's import, which would make the tests wait for it.
    from genstamp.statuscache import start_tree

    kept = start_tree(argv[0])
    if kept is not None:
        _say({"workdir": str(kept[0].workdir), "gitdir": str(kept[0].gitdir)})
        _say({"tree": kept[1], "kept": True})
    try:
        from genstamp import placed
        from genstamp.identity import cpu_jobs, prepare, tree_identity
        from genstamp.repo import STATE_DIR, head_id, open_checkout
        from genstamp.statuscache import Inputs, config_files, keep_start
        from genstamp.watch import Watch

        checkout = open_checkout(argv[0])
    except Exception as exc:
        _say(_error(exc))
        return 1
    if kept is None:
        _say({"workdir": str(checkout.workdir), "gitdir": str(checkout.gitdir)})
    watch: Watch | None = None
    try:
        if kept is not None:
            place, start = kept
            if (checkout.workdir, checkout.gitdir) != (place.workdir, place.gitdir):
                raise GenstampError(
                    f"libgit2 opens the checkout {checkout.workdir} (git dir "
                    f"{checkout.gitdir}), not {place.workdir} (git dir {place.gitdir})"
                )
            # No watch: it would begin after the tree was said. The end is walked.
            end = checkout
            early = False
        else:
            # A second handle, for the watch and the tree at the end: its index is read now
            # and again only if the file changes (the first one's will hold the start's
            # additions); it must be the same checkout.
            end = open_checkout(argv[0])
            if (end.workdir, end.gitdir) != (checkout.workdir, checkout.gitdir):
                end = checkout
            end.repo.index  # noqa: B018 - read now, for the watch
            # The watch begins before the walk at the start, so that any change the walk
            # could miss is an event.
            if end is not checkout:
                try:
                    watch = Watch(end)
                except Exception:  # no watch (Unavailable, or anything else): walk at the end
                    watch = None
            # The walk of a large, watched work tree: the tests need not wait for it (that of
            # a small one they wait for, as before: there is little to gain, and a test that
            # writes into the tree is then told as a move of the tree).
            early = watch is not None and len(end.repo.index) >= EARLY_FILES
            if early:
                _say({"early": True})
            # A small tree's is kept for the next run (its inputs stamped before the walk), in a
            # repository genstamp keeps its state in already: one pytest merely started in (a
            # repository holding the project it tests, a folder of dotfiles) stays as it was.
            keeps = not early and (checkout.gitdir / STATE_DIR).is_dir()
            inputs = Inputs(checkout, config_files(checkout), tree_only=True) if keeps else None
            start = tree_identity(checkout, cache=inputs is not None)
            # The test process may have begun its tests during the walk (``begin`` on our
            # input, written before it ran any): the walk is the tree they began on only if
            # nothing that shapes the tree changed since the watch began. Not yet begun, they
            # begin on this tree, and what changes from now on is the end's to see.
            if early and watch is not None and _begun() and not watch.unchanged():
                _say({"tree": start, "raced": watch.changed})
            else:
                _say({"tree": start})
            if inputs is not None:
                keep_start(checkout, inputs, start)
        # If the tree must be walked again at the end, the test process waits for it: the walk
        # may then use every CPU, with index copies read ahead.
        jobs = cpu_jobs()
        prepare(end, jobs)
        # what the answer to ``ignored`` imports, imported while the tests run (where the end
        # is asked first, it waits that long, and the answer it then asks for as much less)
        from genstamp import audit, submodules, suite  # noqa: F401
    except Exception as exc:
        _say(_error(exc))
        return 1
    answered = False
    for line in sys.stdin:
        word, _, rest = line.rstrip("\n").partition("\t")
        try:
            if word == BEGIN:
                continue
            if word == END and not answered:
                # Nothing that shapes the tree changed since the watch began: no second walk.
                unchanged = watch is not None and watch.unchanged()
                tree = start if unchanged else tree_identity(end, jobs)
                moved = moved_beyond(end.repo, start, tree, rest)
                _say({"tree": tree, "head": head_id(end.repo), "moved": moved})
                answered = True
            elif word == IGNORED and answered:
                asked = json.loads(rest)
                paths = [p for p in asked.get("paths", ()) if isinstance(p, str)]
                loaded = asked.get("loaded", {})
                used = asked.get("used")
                searched = [p for p in asked.get("searched", ()) if isinstance(p, str)]
                ignored = placed.ignored(end, paths)
                roots = [r for r in asked.get("roots", ()) if isinstance(r, str)]
                hidden, dirty = unseen(
                    end,
                    used if isinstance(used, list) else None,
                    searched,
                    roots,
                    loaded if isinstance(loaded, dict) else (),
                )
                if unchanged:  # the tree at the end is the watch's
                    listed = used if isinstance(used, list) else None
                    hidden.update(through_links(end, tree, listed))
                forms: dict[str, dict[str, str]] = {}
                differ = differing(end, tree, loaded, set(paths) - set(ignored), forms)
                _say(
                    {
                        "ignored": ignored,
                        "unregistered": unregistered(end, tree, paths),
                        "differ": differ,
                        "hidden": hidden,
                        "dirty": dirty,
                        "converted": forms,
                    }
                )
                break
        except Exception as exc:
            _say(_error(exc))
            return 1
    # Answered and flushed (or the test process is gone); nothing is left to clean up.
    # Skipping the interpreter's shutdown (with pygit2 loaded, two full garbage collections)
    # ends this process at once, and the plugin waits for that.
    sys.stdout.flush()
    os._exit(0)


THROUGH_A_LINK = "written through another link during the run"


def through_links(checkout: Checkout, tree: str, used: list[str] | None) -> dict[str, str]:
    """Of the files ``used`` (every tracked file: None) that ``tree`` holds, those with another
    link (a hard link from a folder no watch sees: ``genstamp.watch``) whose bytes, as ``git
    add`` would store them, are not ``tree``'s blob: changed during the run where the watch,
    which gave ``tree`` as the tree at the end, could not see it. A file git will not add
    (``--skip-worktree``: ``hidden_changes`` judges it) is left out."""
    import stat

    import pygit2

    top = checkout.repo.get(tree)
    if not isinstance(top, pygit2.Tree):
        return {}
    if used is None:
        used = [entry.path for entry in checkout.repo.index]
    linked: list[tuple[str, str]] = []
    for rel in used:
        try:
            st = os.lstat(checkout.workdir / rel)
            blob = str(top[rel].id)
        except (OSError, KeyError, TypeError, ValueError):
            continue
        if stat.S_ISREG(st.st_mode) and st.st_nlink > 1:
            linked.append((rel, blob))
    now = _added_blobs(checkout, [rel for rel, _ in linked])
    return {
        rel: THROUGH_A_LINK
        for (rel, blob), got in zip(linked, now, strict=True)
        if got is not None and got != blob
    }


def _added_blobs(checkout: Checkout, paths: list[str]) -> list[str | None]:
    """The blobs ``git add`` makes of the files ``paths`` (one git for all of them), None for
    each that git will not add (asked one at a time once git refuses one)."""
    from genstamp.identity import git_blobs

    if not paths:
        return []
    try:
        return list(git_blobs(checkout.repo, paths))
    except GenstampError:
        if len(paths) == 1:
            return [None]
    return [found for path in paths for found in _added_blobs(checkout, [path])]


def unregistered(checkout: Checkout, tree: str, paths: list[str]) -> dict[str, str]:
    """Of ``paths``, those ``tree`` holds only inside a gitlink that no ``.gitmodules`` gives a
    URL, with that gitlink's path (what the gate refuses as ``unregistered-submodule``)."""
    index = checkout.repo.index
    inside = [p for p in paths if p not in index and _in_gitlink(index, p)]
    if not inside:
        return {}
    from genstamp.facts import loaded_blobs  # files of a submodule: rare, and a heavy import

    found: dict[str, str] = {}
    loaded_blobs(checkout, tree, dict.fromkeys(inside), found)
    return found


def differing(
    checkout: Checkout,
    tree: str,
    loaded: dict[str, list[str]],
    linkable: set[str] | None = None,
    forms: dict[str, dict[str, str]] | None = None,
) -> list[str]:
    """Of the files ``loaded`` (path -> the blob ids of the bytes the tests loaded) that
    ``tree`` holds, those loaded with bytes that are not its blob, as ``git add`` would store
    them (what the gate refuses as ``loaded-not-tested``: a file changed and changed back
    while the tests ran, an edit ``--skip-worktree`` hides from git), and those of
    ``linkable`` (the loaded files the gate would not accept otherwise: not made by the run,
    not declared generated, not ignored) that the tree holds only as a symbolic link above
    them, which leads out of the work tree, and those the tree holds as a link that the work
    tree holds as a plain file (``core.symlinks=false``). ``forms`` receives the loaded bytes
    that git's conversion makes the tree's blob (path -> {raw blob: blob}): the evidence keeps
    them, for the file may change once the run is over."""
    import pygit2

    top = checkout.repo.get(tree)
    if not isinstance(top, pygit2.Tree):
        return []
    from genstamp import placed
    from genstamp.paths import inside

    blobs: dict[str, str] = {}
    odd: dict[str, list[str]] = {}
    linked: list[str] = []
    in_submodules: dict[str, list[str]] = {}
    index: pygit2.Index | None = None  # read when a loaded file is not in the tree's folders
    for rel, raws in loaded.items():
        try:
            entry = top[rel]
            blob = str(entry.id)
        except (KeyError, TypeError, ValueError):
            if (linkable is None or rel in linkable) and placed.through_link(checkout.workdir, rel):
                linked.append(rel)  # the tree holds a link above it: loaded-not-tested
                continue
            index = index if index is not None else checkout.repo.index
            if rel not in index and _in_gitlink(index, rel):
                in_submodules[rel] = raws  # judged on the commit the tree records for it
            elif _in_archive(top, rel):
                in_submodules[rel] = raws  # a member of a zip of the tree (deps.zip/m.py)
            continue  # not in the tree's own folders: the gate places it
        if entry.filemode == pygit2.enums.FileMode.LINK:
            # a plain file where the tree holds a link, or a link out of the work tree; one
            # into it leads to a file of the tree, which the gate judges
            full, top_dir = checkout.workdir / rel, os.path.realpath(checkout.workdir)
            if (linkable is None or rel in linkable) and (
                placed.file_for_link(checkout.workdir, rel)
                or not inside(os.path.realpath(full), top_dir)
            ):
                linked.append(rel)
            continue
        if any(raw != blob for raw in raws):
            blobs[rel], odd[rel] = blob, [str(raw) for raw in raws]
    if in_submodules:
        from genstamp.facts import loaded_blobs  # files of a submodule: rare, and a heavy import

        held = loaded_blobs(checkout, tree, dict.fromkeys(in_submodules)) or {}
        for rel, raws in in_submodules.items():
            recorded = held.get(rel)
            if recorded is not None and any(raw != recorded for raw in raws):
                blobs[rel], odd[rel] = recorded, [str(raw) for raw in raws]
    if not odd:
        return sorted(linked)
    from genstamp.facts import converted  # a file loaded as no tree has it: rare, and heavy

    added = converted(checkout, tree, blobs, odd)
    if forms is not None:
        for (rel, raw), made in added.items():
            if made is not None and made == blobs[rel]:
                forms.setdefault(rel, {})[raw] = made
    return sorted(
        [
            *linked,
            *(
                rel
                for rel, raws in odd.items()
                if any(raw != blobs[rel] and added.get((rel, raw)) != blobs[rel] for raw in raws)
            ),
        ]
    )


def _in_archive(top: pygit2.Tree, rel: str) -> bool:
    """Whether a file of the tree leading ``rel`` may be an archive holding it (``deps.zip``
    of ``deps.zip/m.py``): a blob, where the tree has no folder."""
    import pygit2

    parts = rel.split("/")
    for n in range(1, len(parts)):
        try:
            obj = top["/".join(parts[:n])]
        except (KeyError, TypeError, ValueError):
            return False
        if obj.type == pygit2.enums.ObjectType.BLOB:
            return True
    return False


def _in_gitlink(index: pygit2.Index, path: str) -> bool:
    parts = path.split("/")
    for n in range(1, len(parts)):
        try:
            entry = index["/".join(parts[:n])]
        except KeyError:
            continue
        from pygit2.enums import FileMode

        return bool(entry.mode == FileMode.COMMIT)
    return False


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
