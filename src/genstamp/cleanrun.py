"""The ``genstamp clean-run`` command's options and output: steps with times on a terminal,
plain lines in CI and when piped, JSON with ``--json``. The work is ``genstamp.cleanroom``'s."""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import TYPE_CHECKING, TextIO

from genstamp import cleanrecord
from genstamp.errors import EXIT_OK, EXIT_REFUSED, GenstampError

if TYPE_CHECKING:
    from genstamp.cleanroom import CleanRun, Progress
    from genstamp.repo import Checkout

# The clean room itself (``cleanroom``: the rules, the evidence reader, the environment cache)
# is imported by the command that runs it: registering the options and `genstamp status`'s
# line need none of it.


def register(p: argparse.ArgumentParser, json_help: str) -> None:
    p.add_argument("--rev", metavar="REV", help="test this commit's tree (default: the work tree)")
    p.add_argument(
        "--keep", action="store_true", help="keep the clean checkout (its path is printed)"
    )
    p.add_argument(
        "--installer",
        choices=("auto", "uv", "pip"),
        default="auto",
        help="make the environment with uv (genstamp[clean]) or venv and pip (auto: uv when "
        "installed)",
    )
    p.add_argument("--json", action="store_true", help=json_help)
    p.add_argument("pytest_args", nargs=argparse.REMAINDER, help="-- PYTEST ARGS")


def live(stream: TextIO) -> bool:
    """Steps redrawn in place on a terminal; plain lines in CI (``CI`` set) and when piped."""
    isatty = getattr(stream, "isatty", None)
    return bool(isatty and isatty()) and not os.environ.get("CI")


def printer(stream: TextIO, *, quiet: bool) -> Progress:
    """The steps as they go: redrawn in place with their times on a terminal, one plain line
    each in CI or when piped, nothing with ``--json`` (stdout is the JSON)."""
    from genstamp.cleanroom import STEPS

    width = max(map(len, STEPS))
    redraw = live(stream)

    def progress(step: str, event: str, seconds: float) -> None:
        if quiet:
            return
        if redraw:
            if event == "start":
                stream.write(f"  {step:<{width}}  …")
            else:
                mark = "done" if event == "done" else "FAILED"
                stream.write(f"\r  {step:<{width}}  {seconds:6.2f} s  {mark}\n")
        elif event != "start":
            verb = "done" if event == "done" else "failed"
            stream.write(f"genstamp: clean-run: {step} {verb} in {seconds:.2f} s\n")
        stream.flush()

    return progress


def command(args: argparse.Namespace, checkout: Checkout) -> int:
    pytest_args = list(args.pytest_args)
    if pytest_args and pytest_args[0] == "--":
        pytest_args = pytest_args[1:]
    from genstamp.cleanroom import clean_run

    if args.rev is not None:  # one line, before any step: a rev that names no commit
        from genstamp.facts import rev_tree

        rev_tree(checkout, args.rev)
    progress = printer(sys.stderr, quiet=args.json)
    result = clean_run(
        checkout,
        rev=args.rev,
        pytest_args=pytest_args,
        keep=args.keep,
        installer=args.installer,
        progress=progress,
    )
    if args.json:
        print(json.dumps(to_json(result), indent=2, sort_keys=True))
    else:
        _print(result)
    return EXIT_OK if result.record.ok else EXIT_REFUSED


def to_json(result: CleanRun) -> dict[str, object]:
    return {
        "record": result.record.to_json(),
        "record_path": str(result.record_path),
        "steps": [s._asdict() for s in result.steps],
        "installer": result.installer,
        "env_reused": result.env_reused,
        "kept": str(result.kept) if result.kept else None,
    }


def _print(result: CleanRun) -> None:
    from genstamp.rules import printable

    record = result.record
    c = record.counts
    env = "reused" if result.env_reused else "new"
    total = sum(s.seconds for s in result.steps)
    summary = (
        f"{c.get('passed', 0)} passed, {c.get('failed', 0)} failed, {c.get('errors', 0)} "
        f"errors, {c.get('skipped', 0)} skipped"
    )
    if record.ok:
        print(
            f"clean-run: tree {record.tree[:12]} passed in a clean checkout ({summary}; "
            f"{result.installer}, environment {env}; {total:.1f} s)"
        )
    else:
        red = c.get("failed", 0) or c.get("errors", 0)
        how = "FAILED in a clean checkout" if red else "was refused by the clean checkout's gate"
        print(f"clean-run: tree {record.tree[:12]} {how} ({summary})")
        for failure in record.failures:
            print(f"  {printable(failure)[:600]}")
        run_log = next((s.log for s in result.steps if s.name == "run"), "")
        print(f"  the clean run's output: {run_log}")
    if result.kept is not None:
        print(f"clean checkout kept at {result.kept}")


def status_record(checkout: Checkout, tree: str) -> dict[str, object] | None:
    """``genstamp status``'s clean-room evidence for ``tree``: the record (without the
    outcomes), or None; a record that cannot be read is shown as its problem."""
    try:
        record = cleanrecord.read(checkout.gitdir, tree)
    except GenstampError as exc:
        return {"problem": exc.message}
    if record is None:
        return None
    data = record.to_json()
    data.pop("outcomes")
    return data


def status_line(data: dict[str, object] | None) -> str:
    if data is None:
        return "none for this tree (run `genstamp clean-run`)"
    if "problem" in data:
        return f"unreadable: {data['problem']}"
    verdict = "passed" if data["ok"] and data["complete"] else "FAILED"
    counts = data["counts"]
    assert isinstance(counts, dict)
    return (
        f"{verdict} {data['when']}: {counts.get('passed', 0)} passed, "
        f"{counts.get('failed', 0)} failed, {counts.get('errors', 0)} errors ({data['install']})"
    )
