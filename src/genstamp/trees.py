"""The trees a pytest run is bound to: the one at the start and the one at the end (and HEAD).

On the normal path the checkout is found in pure Python and the co-process (``coprocess``)
confirms it with libgit2 and takes both trees (``FromCoProcess``), so that the test process never
imports pygit2. With ``GIT_DIR`` or ``GIT_WORK_TREE`` set the repository is opened in-process, and
threads take the trees (``InProcess``; libgit2 walks a tree without the GIL). Either way the tree
at the start is taken while pytest starts up and collects (and, where the co-process watches
the work tree, while the first tests run: ``begin_tests``), and the one at the end while the
plugin audits.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from genstamp.coprocess import Asked, CoProcess, End, Misplaced, moved_beyond
from genstamp.errors import GenstampError
from genstamp.repo import Checkout, Place, open_checkout

RACED = (
    "the work tree changed as the tests began ({}), while genstamp took the tree at their "
    "start: which tree they ran on is unknown (run them again: from now on genstamp takes that "
    "tree before the tests begin in this repository)"
)
# In the common git dir's genstamp folder: a run raced; later runs await the tree at the start.
WAIT_FILE = "await-start"


class FromCoProcess:
    """Both trees from the co-process; ``inert`` when libgit2 finds no checkout there."""

    def __init__(self, place: Place, where: Path, coprocess: CoProcess | None, problem: str = ""):
        self.place = place
        self.where = where  # where pytest was started: what the co-process opened
        self.coprocess = coprocess
        self.start: str | None = None
        self.problem: str | None = problem or None  # why the tree at the start is unknown
        self.inert = False  # libgit2 found no checkout here: the plugin does nothing
        self.early = False  # the co-process lets the tests begin while it walks
        self._read = 0  # its answers read: 1 the checkout, 2 "early" or the tree, 3 the tree
        self._begun = False

    def begin_tests(self) -> None:
        """No test has run yet. When the co-process says the tree is large (and it watches
        the work tree), they may run while it still takes the tree at the start: it then
        tells whether anything changed while it walked (the tree is unknown then, and said).
        Otherwise the tree is awaited here."""
        if (self.place.common_state / WAIT_FILE).exists():
            self.await_start()  # this suite writes into the work tree as it begins
            return
        self._read_to(2)
        if self.early and not self._begun and self.start is None and self.problem is None:
            assert self.coprocess is not None
            self._begun = self.coprocess.begin()
            if self._begun:
                return
        self.await_start()

    def await_start(self) -> None:
        self._read_to(3)

    def start_pending(self) -> bool:
        """Whether awaiting the tree at the start would wait now (a guess: True when the
        co-process has not answered yet)."""
        if self.start is not None or self.problem is not None or self.coprocess is None:
            return False
        return not self.coprocess.answered()

    def _read_to(self, count: int) -> None:
        coprocess = self.coprocess
        while (
            coprocess is not None
            and self._read < count
            and self.start is None
            and self.problem is None
        ):
            answer = coprocess.read()
            self._read += 1
            if self._read == 1:
                self._confirm(answer)
            elif "error" in answer:
                self.problem = str(answer["error"])
            elif self._read == 2 and answer.get("early") is True:
                self.early = True
            elif isinstance(answer.get("raced"), str):
                self.problem = RACED.format(answer["raced"])
                _remember_the_race(self.place)
            elif isinstance(answer.get("tree"), str):
                self.start = answer["tree"]
            else:
                self.problem = "no tree at the start"
            if self._read == 2 and not self.early:
                self._read = 3  # that was the tree

    def _confirm(self, answer: dict[str, Any]) -> None:
        """The checkout libgit2 opened must be the one found in pure Python, or nothing the
        co-process says may speak for this run."""
        if "error" in answer:
            # libgit2 finds no usable checkout here: as when the plugin opened it itself, it
            # stays silent (nothing here is a checkout it may write evidence for).
            self.inert = True
            self.problem = str(answer["error"])
            return
        found = (str(answer.get("workdir")), str(answer.get("gitdir")))
        if found != (str(self.place.workdir), str(self.place.gitdir)):
            self.problem = (
                f"libgit2 opens the checkout {found[0]} (git dir {found[1]}), not "
                f"{self.place.workdir} (git dir {self.place.gitdir}) found from {self.where}"
            )

    def begin_end(self, output: str = "") -> None:
        """Begin taking the tree at the end; ``output``: the run's own report in the work tree
        (relative to it), which does not move the tree."""
        assert self.coprocess is not None
        self.coprocess.ask_end(output)

    def end(self) -> End:
        """The tree at the end, HEAD, and whether the tree moved (``begin_end`` first)."""
        assert self.coprocess is not None
        return self.coprocess.tree_end()

    def ask_misplaced(self, asked: Asked) -> None:
        """Ask which of the paths git ignores, leaving them out of the tree, which lie in a
        repository a clone cannot fetch, which of the files loaded were loaded as the tree
        does not hold them, the changes hidden from git in the files used and in the modules
        of the folders the imports searched (and the files a run of the suites in the roots
        reads: ``coprocess.unseen``), and the submodules with changes (after ``begin_end``;
        read the answer with ``misplaced`` after ``end``). The co-process answers it as soon
        as it has said the tree at the end, while this process gathers the rest of what it
        binds."""
        assert self.coprocess is not None
        self.coprocess.ask_misplaced(asked)

    def misplaced(self) -> Misplaced:
        """The answer to ``ask_misplaced`` (after ``end``)."""
        assert self.coprocess is not None
        return self.coprocess.misplaced_answer()

    def close(self) -> None:
        self.await_start()
        if self.coprocess is not None:
            self.coprocess.close()
            self.coprocess = None


def _remember_the_race(place: Place) -> None:
    """Later runs in this repository (any of its worktrees, ``clean-run``'s among them) await
    the tree at the start before their tests begin."""
    with contextlib.suppress(OSError):
        place.common_state.mkdir(parents=True, exist_ok=True)
        (place.common_state / WAIT_FILE).write_text(
            "genstamp: the tests of a run changed the work tree while the tree at their start "
            "was taken; runs in this repository take it before their tests begin "
            "(remove this file to let the tests begin as the tree is taken)\n",
            encoding="utf-8",
        )


class InProcess:
    """Both trees taken here, each by a thread on a repository handle of its own (when it opens
    the same checkout; else the tree at the start is taken on ``repo`` when awaited)."""

    def __init__(self, repo: Checkout, where: Path) -> None:
        self.repo = repo
        self.where = where
        self.start: str | None = None
        self.problem: str | None = None
        self.inert = False
        self.side: Checkout | None = None  # a second handle on the repository, for a thread
        self._thread: threading.Thread | None = threading.Thread(
            target=self._take_start, name="genstamp-tree-start", daemon=True
        )
        self._thread.start()
        self._end: _Task | None = None
        self._output = ""
        self._tree_end: str | None = None
        self._asked: Asked | None = None  # what ``ask_misplaced`` asked

    def _take_start(self) -> None:
        from genstamp.identity import tree_identity

        try:
            side = open_checkout(self.where, environment=True)
            if side.gitdir != self.repo.gitdir or side.workdir != self.repo.workdir:
                return  # not the same checkout after all: taken in the main thread instead
            self.side = side
            self.start = tree_identity(side)
        except GenstampError as exc:
            self.problem = str(exc)
        except Exception as exc:  # reported when the evidence is bound, never a traceback
            self.problem = f"{type(exc).__name__}: {exc}"

    def await_start(self) -> None:
        thread, self._thread = self._thread, None
        if thread is None:
            return
        thread.join()
        if self.side is None and self.problem is None:
            from genstamp.identity import tree_identity

            try:
                self.start = tree_identity(self.repo)
            except GenstampError as exc:
                self.problem = str(exc)

    def begin_end(self, output: str = "") -> None:
        from genstamp.identity import tree_identity

        self._output = output
        self._end = _Task(tree_identity, self.side or self.repo)
        self._end.start()

    def end(self) -> End:
        """The tree at the end, HEAD, and whether the tree moved (``begin_end`` first)."""
        from genstamp.repo import head_id

        assert self._end is not None
        task, self._end = self._end, None
        task.join()
        if task.error is not None:
            if isinstance(task.error, GenstampError):
                raise GenstampError(f"the tree at the end is unknown: {task.error}") from task.error
            raise task.error
        assert task.result is not None and self.start is not None
        moved = moved_beyond(self.repo.repo, self.start, task.result, self._output)
        self._tree_end = task.result
        return End(task.result, head_id(self.repo.repo), moved)

    def ask_misplaced(self, asked: Asked) -> None:
        """As ``FromCoProcess.ask_misplaced``: kept for ``misplaced``, which answers here."""
        self._asked = asked

    def misplaced(self) -> Misplaced:
        """As ``FromCoProcess.misplaced``, here (after ``end``)."""
        from genstamp import placed
        from genstamp.coprocess import differing, unregistered, unseen

        assert self._asked is not None
        paths, loaded, used, searched, roots = self._asked
        searched = searched or []
        checkout = self.side or self.repo
        tree = self._tree_end
        assert tree is not None
        hidden, dirty = unseen(checkout, used, searched, roots, loaded or ())
        forms: dict[str, dict[str, str]] = {}
        asked = {k: list(v) for k, v in (loaded or {}).items()}
        return Misplaced(
            placed.ignored(checkout, paths),
            unregistered(checkout, tree, paths),
            tuple(differing(checkout, tree, asked, None, forms)),
            hidden,
            dirty,
            forms,
        )

    def begin_tests(self) -> None:
        self.await_start()

    def start_pending(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def close(self) -> None:
        self.await_start()


class _Task(threading.Thread):
    """Runs ``fn(arg)`` in a thread; its result or its exception is kept for the caller."""

    def __init__(self, fn: Callable[[Checkout], str], arg: Checkout) -> None:
        super().__init__(name="genstamp-tree-end", daemon=True)
        self._fn = fn
        self._arg = arg
        self.result: str | None = None
        self.error: Exception | None = None

    def run(self) -> None:
        try:
            self.result = self._fn(self._arg)
        except Exception as exc:
            self.error = exc


Trees = FromCoProcess | InProcess
