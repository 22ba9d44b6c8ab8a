"""The post-checkout, post-merge and post-rewrite hooks as a light process (issue 16).

A hook costs what git changed, not the size of the tree: where the repository is (read from
the ``.git`` in the folder git runs the hook in, or ``git rev-parse`` when anything could move
it; ``changed.locate``), one ``git diff-tree`` (what git wrote; ``changed``), a look into the
``__pycache__`` folders of those paths, the removal of the bytecode that can belong to them
(``git ls-tree`` for those that git might track), and the stamp written with a claim the next
reader settles (``generation``). No walk, and no pygit2: this module and what it imports load
in a few milliseconds (no re, json, pathlib, typing, subprocess or tempfile).

Why scrubbing only those paths is sound: CPython takes a timestamp pyc as current when the
source's mtime (seconds) and size match the header. A source git did not write keeps its
mtime, so its bytecode is still the bytecode of its content. A source git rewrote gets a new
mtime, which CPython's own check catches, except when git wrote it within the same second
as the content the pyc was compiled from, with the same size: that pyc is the one to remove,
and it belongs to a path git wrote, which the diff names. When the paths git wrote cannot
be known (``changed.Operation.unknown``), or there is no readable stamp, the hook does what
it did before: a full scrub and a full identity (``genstamp.cli``'s hook, ``restamp``).

One case the diff cannot see: ``git checkout -f <branch>`` (or ``--discard-changes``)
overwrites local edits of files that are the same on both branches, and git passes the same
arguments as for a plain checkout. A pyc compiled from such an edit is caught by CPython's
check unless the edit and the checkout fall in the same second with the same size; the
gate's audit still flags stale bytecode a run loads. ``genstamp stamp`` scrubs fully.
"""

from __future__ import annotations

import os
import sys

from genstamp import changed, generation, hooks, scrub
from genstamp.errors import EXIT_OK, GenstampError

# What this module and those it imports load is the hook's start-up, paid on every checkout:
# no pathlib, typing, subprocess, json or tempfile (re, enum, threading... come with them).
# A test holds the list (tests/test_restamp_incremental.py).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

NAMES = (*hooks.RESTAMP_HOOKS, "restamp")


def main(
    directory: str | os.PathLike[str] | None,
    name: str,
    git_args: Sequence[str],
    env: Mapping[str, str],
) -> int:
    """One restamping hook; never fails git's command (exit 0, a warning line at worst)."""
    try:
        try:
            trigger = hooks.restamp_trigger(name, env)
            if trigger is None:
                return EXIT_OK
            line = _restamp(directory, name, trigger, tuple(git_args), env)
        except Exception:  # never a traceback in git's output: the full hook meets the same
            line = None  # trouble (or none) and says what it is, in one line
        if line is None:
            return _full(directory, name, git_args)
    except KeyboardInterrupt:  # Ctrl-C during git's command: one line, not a traceback
        line = (
            f"genstamp: {name} interrupted: the bytecode of what git changed may remain and "
            "the generation is as it was — run `genstamp stamp`"
        )
    print(line, file=sys.stderr)
    return EXIT_OK


def _restamp(
    directory: str | os.PathLike[str] | None,
    name: str,
    trigger: str,
    args: tuple[str, ...],
    env: Mapping[str, str],
) -> str | None:
    """Scrub what git changed and leave the claim; None when only the full hook can say."""
    where = changed.locate(directory)
    stamp = generation.stamp_in(where.gitdir)
    try:
        gen = generation.read_at(stamp)[0]
    except GenstampError:
        return None  # the full hook says what is wrong with it and begins anew
    if gen is None:
        return None
    op = changed.operation(trigger, () if name == "restamp" else args, env, where.gitdir)
    found = None if op.unknown else changed.change(where.workdir, op, where.gitdir)
    if found is None:
        return None
    paths = found.paths
    files = scrub.bytecode_of(where.workdir, paths)
    kept = changed.tracked(where.workdir, files, where.gitdir) if files else set()
    venvs = False
    if any(scrub.in_venv(where.workdir, os.path.dirname(f)) for f in files):
        from pathlib import Path  # and tomllib: only when a virtual environment is in the way

        from genstamp import config

        venvs = config.load(Path(where.workdir)).scrub_venvs
    result = scrub.scrub_files(where.workdir, files, venvs=venvs, tracked=kept)
    head = op.pairs[-1][1] if op.pairs else None
    head = head if head and len(head) in (40, 64) else None
    claim = generation.claimed(
        gen,
        trigger=trigger,
        changed=bool(paths),
        head=head,
        scrub={**result.summary(), "paths": len(paths)},
        now_ns=generation.now_ns(os.path.dirname(stamp)),
        rebase=changed.rebase_part(trigger, op, where.gitdir),
    )
    # Not synced to disk (an fsync is most of the hook's own time on a busy disk): git did not
    # sync the files it has just written either (core.fsync leaves the work tree and the index
    # out), and a crash that loses this write leaves the old stamp, whose tree is no longer the
    # work tree's (its evidence is refused, as after any change), or, without the file system's
    # rename ordering, an empty one, which every reader refuses with `genstamp stamp` as the
    # remedy. Neither is read as a decision this hook did not take.
    generation.write_at(stamp, claim, sync=False)
    line = _line(gen, claim, found.tree, len(paths), result)
    if any(p.rpartition("/")[2] == "pre-push" for p in paths):  # (rare: then hooktext, re)
        from genstamp import hooktext

        gone = hooktext.pre_push_gone(where.workdir, paths)
        if gone:
            line += f"\ngenstamp: warning: {gone}"
    return line


def _line(
    gen: generation.Generation,
    claim: generation.Generation,
    tree: str | None,
    paths: int,
    result: scrub.ScrubResult,
) -> str:
    pending = claim.pending or {}
    if not paths and pending.get("may_keep"):
        kept = f"genstamp: generation {gen.id[:12]} kept if the work tree is as it was"
        return f"{kept}; git changed no file"
    removed = f"removed {result.folders} folders, {result.files} files of bytecode"
    if result.errors:
        removed += f"; {len(result.errors)} could not be removed"
    of = f" (tree {tree[:12]})" if tree else ""
    new = f"genstamp: new generation {pending['next']['id'][:12]}{of}"
    unless = f" unless the work tree is still {gen.id[:12]}'s" if pending.get("may_keep") else ""
    changed = f"{paths} path changed" if paths == 1 else f"{paths} paths changed"
    return f"{new}{unless}; {changed}; {removed}"


def _full(directory: str | os.PathLike[str] | None, name: str, git_args: Sequence[str]) -> int:
    """The hook as before issue 16: a full scrub and a full identity."""
    from pathlib import Path

    from genstamp.cli import full_restamp_hook

    return full_restamp_hook(name, None if directory is None else Path(directory), None)


def launch(argv: Sequence[str] | None = None) -> int:
    """The ``genstamp`` command: a restamping hook here, without importing the rest of
    genstamp; anything else in ``genstamp.cli``. Ctrl-C before a command's own handler is in
    place (while genstamp, pygit2 or the parser load) is one line too."""
    args = list(sys.argv[1:] if argv is None else argv)
    try:
        return _launch(args)
    except KeyboardInterrupt:
        print("genstamp: interrupted", file=sys.stderr)
        return 130


def _launch(args: list[str]) -> int:
    directory, rest = (args[1], args[2:]) if args[:1] == ["-C"] and len(args) > 1 else (None, args)
    if (
        len(rest) >= 2
        and rest[0] == "hook"
        and rest[1] in NAMES
        and not any(a.startswith("-") for a in rest[2:])
    ):
        return main(directory, rest[1], rest[2:], os.environ)
    if rest[:1] == ["status"] and rest[1:] in ([], ["--json"]):
        from genstamp.statuscache import answer

        # The last status's answer while it holds, else git walks the tree (started there)
        # while the rest of genstamp is imported.
        if answer(directory, rest[1:] == ["--json"]):
            return 0
    elif rest[:1] == ["status"]:
        from genstamp.gitwalk import start_ahead

        start_ahead(directory)
    from genstamp.cli import main as cli_main

    return cli_main(args)
