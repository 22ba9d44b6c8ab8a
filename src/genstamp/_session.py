"""The pytest plugin's co-process: everything that needs libgit2, kept out of the test process.

    python -m genstamp._session FOLDER   (the plugin runs ``main`` through ``python -c``)

Prints one JSON line per answer on stdout: the checkout libgit2 discovers from FOLDER
(``{"workdir", "gitdir"}``), then the tree at the start (``{"tree"}``); then waits for a line
``end`` on stdin and prints the tree at the end and HEAD (``{"tree", "head"}``). The tree at
the end is the one at the start when a watch on the work tree (``genstamp.watch``) saw nothing
that shapes it change, and a new walk otherwise. Any failure is
an answer ``{"error": "..."}`` and ends it. End of input ends it too. Importing pygit2 costs
the test process tens of milliseconds (and two more full collections at exit); here it runs
beside pytest's own start-up and collection.
"""

from __future__ import annotations

import json
import os
import signal
import sys
from typing import Any


def _say(data: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(data) + "\n")
    sys.stdout.flush()


def _error(exc: Exception) -> dict[str, Any]:
    from genstamp.errors import GenstampError

    if isinstance(exc, GenstampError):
        return {"error": str(exc)}
    return {"error": f"{type(exc).__name__}: {exc}"}


def main(argv: list[str]) -> int:
    # Ctrl-C reaches the whole process group: the plugin still asks for the tree at the end
    # (an interrupted run is evidence of a partial run), then closes our input.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if len(argv) != 1:
        _say({"error": "usage: python -m genstamp._session FOLDER"})
        return 2
    try:
        from genstamp.identity import cpu_jobs, prepare, tree_identity
        from genstamp.repo import head_id, open_checkout
        from genstamp.watch import Watch

        checkout = open_checkout(argv[0])
    except Exception as exc:
        _say(_error(exc))
        return 1
    _say({"workdir": str(checkout.workdir), "gitdir": str(checkout.gitdir)})
    try:
        # A second handle, for the watch and the tree at the end: its index is read now and
        # again only if the file changes (the first one's will hold the start's additions);
        # it must be the same checkout.
        end = open_checkout(argv[0])
        if (end.workdir, end.gitdir) != (checkout.workdir, checkout.gitdir):
            end = checkout
        end.repo.index  # noqa: B018 - read now, for the watch
        # The watch begins before the walk at the start, so that any change the walk could
        # miss is an event.
        watch: Watch | None = None
        if end is not checkout:
            try:
                watch = Watch(end)
            except Exception:  # no watch (Unavailable, or anything else): walk at the end
                watch = None
        start = tree_identity(checkout)
        _say({"tree": start})
        # If the tree must be walked again at the end, the test process waits for it: the walk
        # may then use every CPU, with index copies read ahead.
        jobs = cpu_jobs()
        prepare(end, jobs)
    except Exception as exc:
        _say(_error(exc))
        return 1
    for line in sys.stdin:
        if line.strip() != "end":
            continue
        try:
            # Nothing that shapes the tree changed since the watch began: no second walk.
            unchanged = watch is not None and watch.unchanged()
            tree = start if unchanged else tree_identity(end, jobs)
            _say({"tree": tree, "head": head_id(end.repo)})
        except Exception as exc:
            _say(_error(exc))
            return 1
        # Answered and flushed; nothing is left to clean up. Skipping the interpreter's
        # shutdown (with pygit2 loaded, two full garbage collections) ends this process at
        # once, and the plugin waits for that.
        os._exit(0)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
