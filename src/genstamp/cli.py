"""The ``genstamp`` command. Only ``main`` turns errors into exit codes."""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import NoReturn

import pygit2

from genstamp import __version__, config, generation, hooks
from genstamp.errors import EXIT_OK, EXIT_REFUSED, EXIT_USAGE, GenstampError
from genstamp.identity import is_bytecode_path, tree_identity
from genstamp.repo import Checkout, head_id, nested_index, open_checkout
from genstamp.scrub import ScrubResult, scrub
from genstamp.verify import printable


def _human(n: int) -> str:
    size = float(n)
    for unit in ("B", "KiB", "MiB"):
        if size < 1024:
            return f"{size:.0f} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    return f"{size:.1f} GiB"


def _scrub_line(result: ScrubResult) -> str:
    verb = "would remove" if result.dry_run else "removed"
    line = (
        f"{verb} {result.folders} folders, {result.files} files, {_human(result.bytes)} of bytecode"
    )
    if result.errors:
        line += f"; {len(result.errors)} could not be removed"
    return line


def _print_json(data: object) -> None:
    print(json.dumps(data, indent=2, sort_keys=True))


def _scrub_errors(result: ScrubResult) -> None:
    for err in result.errors:
        print(f"genstamp: cannot remove {printable(err.path)}: {err.reason}", file=sys.stderr)


def cmd_stamp(args: argparse.Namespace, checkout: Checkout) -> int:
    settings = config.load(checkout.workdir)
    gen, result = generation.begin(
        checkout,
        trigger=args.trigger,
        do_scrub=not args.no_scrub,
        venvs=args.scrub_venvs or settings.scrub_venvs,
    )
    if args.json:
        _print_json({"generation": gen.public(), "clean": result is None or result.clean})
    else:
        scrubbed = _scrub_line(result) if result is not None else "not scrubbed (--no-scrub)"
        print(f"generation {gen.id} begun: tree {gen.tree[:12]}; {scrubbed}")
    if result is not None and result.errors:
        _scrub_errors(result)
        print(
            "genstamp: the generation is not clean: bytecode was left behind "
            "(hint: fix the permissions and run `genstamp stamp` again)",
            file=sys.stderr,
        )
        return EXIT_REFUSED
    return EXIT_OK


def cmd_scrub(args: argparse.Namespace, checkout: Checkout) -> int:
    settings = config.load(checkout.workdir)
    result = scrub(
        checkout.workdir,
        dry_run=args.dry_run,
        venvs=args.venvs or settings.scrub_venvs,
        tracked=checkout.repo.index,
        nested=nested_index,
    )
    if args.json:
        _print_json({**result.summary(), "removed": list(result.removed)})
    else:
        if args.dry_run:
            for path in result.removed:
                print(printable(path))
        print(_scrub_line(result), file=sys.stderr if args.dry_run else sys.stdout)
    _scrub_errors(result)
    return EXIT_REFUSED if result.errors else EXIT_OK


def cmd_status(args: argparse.Namespace, checkout: Checkout) -> int:
    tree = tree_identity(checkout)
    head = head_id(checkout.repo)
    gen = generation.current(checkout)
    if args.json:
        _print_json(
            {
                "tree": tree,
                "head": head,
                "workdir": str(checkout.workdir),
                "generation": gen.public() if gen else None,
                "tree_matches_generation": gen is not None and gen.tree == tree,
            }
        )
        return EXIT_OK
    print(f"tree        {tree}")
    print(f"head        {head or 'none (unborn)'}")
    if gen is None:
        print("generation  none (run `genstamp stamp`)")
    else:
        same = "the tree is as stamped" if gen.tree == tree else "the tree changed since"
        print(f"generation  {gen.id} ({gen.trigger}, {gen.created}; {same})")
    return EXIT_OK


def cmd_verify(args: argparse.Namespace, checkout: Checkout) -> int:
    from genstamp.verify import verify

    verdict = verify(checkout, junit=args.junit, revs=args.rev or ())
    if args.json:
        _print_json(verdict.to_json())
    else:
        for failure in verdict.failures:
            print(failure.line())
        if verdict.ok and verdict.counts is not None:
            c = verdict.counts
            print(
                f"genstamp: evidence accepted: {c.passed} passed, {c.skipped} skipped, "
                f"tree {str(verdict.tested_tree)[:12]}, generation {str(verdict.generation)[:12]}",
                file=sys.stderr,
            )
    return EXIT_OK if verdict.ok else EXIT_REFUSED


def cmd_run(args: argparse.Namespace, checkout: Checkout) -> int:
    from genstamp.run import run

    command = list(args.command)
    if command and command[0] == "--":
        command = command[1:]
    return run(checkout, command, args.junit, cwd=args.directory)


def _read_stdin() -> str:
    """git's stdin as text. Ref names are bytes to git: bytes that are not UTF-8 are kept
    (surrogateescape) rather than failing in a strict locale."""
    buffer = getattr(sys.stdin, "buffer", None)
    if buffer is None:  # a text stream without bytes underneath (tests, embedding)
        return sys.stdin.read()
    data: bytes = buffer.read()
    return data.decode("utf-8", "surrogateescape")


def cmd_hook(args: argparse.Namespace, checkout: Checkout) -> int:
    from genstamp.verify import verify

    name = args.hook
    if name == "pre-push":
        labels: dict[str, str] = {}
        if args.pre_commit:
            revs = [hooks.pre_commit_rev(os.environ)]
        else:
            if len(args.git_args) not in hooks.ARG_COUNTS["pre-push"]:
                raise GenstampError(
                    "pre-push takes git's <remote> <url>", "install hooks/pre-push as it is"
                )
            refs = hooks.parse_pre_push(_read_stdin())
            labels = hooks.commits_to_judge(checkout.repo, refs)
            revs = list(labels)
            if not revs:
                return EXIT_OK  # only deletions: nothing to judge
        verdict = verify(checkout, revs=revs, labels=labels)
        for failure in verdict.failures:
            print(f"genstamp: {failure.line()}", file=sys.stderr)
        if not verdict.ok:
            print("genstamp: push refused", file=sys.stderr)
        return EXIT_OK if verdict.ok else EXIT_REFUSED
    trigger = hooks.restamp_trigger(name, os.environ)
    if trigger is None:
        return EXIT_OK
    settings = config.load(checkout.workdir)
    gen, result = generation.begin(checkout, trigger=trigger, venvs=settings.scrub_venvs)
    assert result is not None
    print(
        f"genstamp: new generation {gen.id[:12]} (tree {gen.tree[:12]}); {_scrub_line(result)}",
        file=sys.stderr,
    )
    _scrub_errors(result)
    # A post-* hook cannot undo what git did: report, but never fail the checkout.
    return EXIT_OK


def cmd_check_bytecode(args: argparse.Namespace, checkout: Checkout | None) -> int:
    files: list[str] = list(args.files)
    if not files and checkout is not None:
        files = [entry.path for entry in checkout.repo.index]
    found = [f for f in files if is_bytecode_path(f.replace(os.sep, "/"))]
    for path in found:
        print(
            f"genstamp-bytecode: {printable(path)} is Python bytecode in git — "
            f"`git rm --cached {printable(path)}` and ignore __pycache__/ and *.py[co]"
        )
    return EXIT_REFUSED if found else EXIT_OK


def cmd_demo(args: argparse.Namespace, checkout: Checkout | None) -> int:
    from genstamp.demo import demo

    return demo(keep=args.keep)


class _Parser(argparse.ArgumentParser):
    """argparse, with its errors as one ``genstamp:`` line and exit code 2."""

    def error(self, message: str) -> NoReturn:
        command = self.prog.removeprefix("genstamp").strip()
        where = f" {command}" if command else ""
        self.exit(
            EXIT_USAGE,
            f"genstamp: {message} (hint: see `genstamp{where} --help`)\n",
        )


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="genstamp",
        description="Bind test evidence to a workspace generation and the tree it tested.",
    )
    parser.add_argument("--version", action="version", version=f"genstamp {__version__}")
    parser.add_argument("-C", dest="directory", help="run as if started in this folder")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    p = sub.add_parser("stamp", help="scrub bytecode and begin a new generation")
    p.add_argument("--no-scrub", action="store_true", help="do not scrub bytecode first")
    p.add_argument("--trigger", default="manual", choices=generation.TRIGGERS)
    p.add_argument("--scrub-venvs", action="store_true", help="scrub virtual envs in the tree too")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_stamp)

    p = sub.add_parser("scrub", help="remove bytecode from the work tree")
    p.add_argument("--dry-run", action="store_true", help="list what would be removed")
    p.add_argument("--venvs", action="store_true", help="enter virtual environments too")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_scrub)

    p = sub.add_parser("status", help="show the tree identity and the current generation")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_status)

    p = sub.add_parser("verify", help="the gate: accept only fresh, passing, complete evidence")
    p.add_argument("--junit", type=Path, help="evidence file (default: where the plugin wrote)")
    p.add_argument("--rev", action="append", help="judge this commit's tree (repeatable)")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_verify)

    p = sub.add_parser("run", help="run another test runner and bind its JUnit file")
    p.add_argument("--junit", type=Path, help="the JUnit file the command writes")
    p.add_argument("command", nargs=argparse.REMAINDER, help="-- COMMAND ...")
    p.set_defaults(func=cmd_run)

    p = sub.add_parser("hook", help="git hook entry points")
    p.add_argument("hook", choices=(*hooks.RESTAMP_HOOKS, "pre-push", "restamp"))
    p.add_argument("--pre-commit", action="store_true", help="read refs from pre-commit's env")
    p.add_argument("git_args", nargs="*", help="git's own hook arguments")
    p.set_defaults(func=cmd_hook)

    p = sub.add_parser("check-bytecode", help="fail when bytecode is tracked or staged")
    p.add_argument("files", nargs="*")
    p.set_defaults(func=cmd_check_bytecode, no_checkout_ok=True)

    p = sub.add_parser("demo", help="replay the warm-workspace incident in a temporary folder")
    p.add_argument("--keep", action="store_true", help="keep the temporary folder")
    p.set_defaults(func=cmd_demo, no_checkout_ok=True)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # argparse has printed its usage line
        return EXIT_USAGE if exc.code else EXIT_OK
    try:
        checkout: Checkout | None
        if getattr(args, "no_checkout_ok", False):
            try:
                checkout = open_checkout(args.directory)
            except GenstampError:
                checkout = None
        else:
            checkout = open_checkout(args.directory)
        return int(args.func(args, checkout))
    except GenstampError as exc:
        print(f"genstamp: {exc}", file=sys.stderr)
        return exc.code
    except BrokenPipeError:
        return EXIT_USAGE
    except (pygit2.GitError, OSError) as exc:
        # libgit2 or the file system failed where genstamp expected it to work (a damaged
        # index, a vanished folder): one line, never a traceback.
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        where = f" ({exc.filename})" if isinstance(exc, OSError) and exc.filename else ""
        print(
            f"genstamp: {reason}{where} (hint: check that `git status` works here)",
            file=sys.stderr,
        )
        return EXIT_USAGE
    except KeyboardInterrupt:
        print("genstamp: interrupted", file=sys.stderr)
        return 130
