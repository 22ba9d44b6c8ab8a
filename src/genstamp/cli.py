"""The ``genstamp`` command. Only ``main`` turns errors into exit codes."""

from __future__ import annotations

import argparse
import json
import os
import shlex
import sys
import textwrap
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn, TextIO

import pygit2

from genstamp import config, generation, hooks
from genstamp.atomic import write_atomic
from genstamp.bytecode import (
    PYCACHE,
    SUFFIXES,
    holds_bytecode,
    is_bytecode_file,
    is_bytecode_path,
)
from genstamp.errors import EXIT_OK, EXIT_REFUSED, EXIT_USAGE, GenstampError, cannot_write
from genstamp.repo import STATE_DIR, Checkout, head_id, nested_index, open_checkout

# A subcommand's modules are imported by the subcommand: each process pays only its own.
if TYPE_CHECKING:
    from genstamp.rules import Failure, Verdict
    from genstamp.scrub import ScrubResult


def printable(path: str) -> str:
    from genstamp.rules import printable

    return printable(path)


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


# -- printing: bounded lines, colour on a terminal, GitHub annotations --------------------------

LINE_LIMIT = 600  # characters of one printed refusal; `--json` has the whole message
RED, GREEN, YELLOW = "31", "32", "33"
_COLOR = {"mode": "auto"}  # set once by main from --color


def use_color(
    stream: TextIO, mode: str | None = None, env: Mapping[str, str] | None = None
) -> bool:
    """Colour on a terminal only; NO_COLOR (any value) turns it off unless --color always."""
    mode = mode or _COLOR["mode"]
    if mode != "auto":
        return mode == "always"
    env = os.environ if env is None else env
    isatty = getattr(stream, "isatty", None)
    return not env.get("NO_COLOR") and bool(isatty and isatty())


def _paint(text: str, code: str, stream: TextIO) -> str:
    return f"\033[{code}m{text}\033[0m" if use_color(stream) else text


def _bounded(line: str, limit: int = LINE_LIMIT) -> str:
    """One refusal line cut to ``limit`` characters, saying how much was left out."""
    if len(line) <= limit:
        return line
    return f"{line[:limit]}… ({len(line) - limit} more characters: see `genstamp verify --json`)"


def _refusal(failure: Failure, stream: TextIO) -> str:
    line = _bounded(failure.line())
    return _paint(failure.rule, RED, stream) + line[len(failure.rule) :]


def github_annotation(level: str, title: str, message: str) -> str:
    """A GitHub Actions workflow command (``::error title=…::…``), escaped as the runner
    expects: ``%``, CR and LF everywhere, and ``:`` and ``,`` in a property."""

    def data(text: str) -> str:
        return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")

    prop = data(title).replace(":", "%3A").replace(",", "%2C")
    return f"::{level} title={prop}::{data(message)}"


def _print_json(data: object) -> None:
    print(json.dumps(data, indent=2, sort_keys=True))


def _scrub_errors(result: ScrubResult) -> None:
    for err in result.errors:
        print(f"genstamp: cannot remove {printable(err.path)}: {err.reason}", file=sys.stderr)


def cmd_stamp(args: argparse.Namespace, checkout: Checkout) -> int:
    from genstamp import restamp

    settings = config.load(checkout.workdir)
    gen, result = restamp.begin(
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
    from genstamp.identity import tracked_index
    from genstamp.scrub import scrub

    settings = config.load(checkout.workdir)
    result = scrub(
        checkout.workdir,
        dry_run=args.dry_run,
        venvs=args.venvs or settings.scrub_venvs,
        tracked=tracked_index(checkout),
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
    from genstamp import statuscache
    from genstamp.identity import status_route, tree_identity

    inputs = statuscache.Inputs(checkout, statuscache.config_files(checkout))
    tree = tree_identity(checkout, cache=True)
    head = head_id(checkout.repo)
    gen = generation.current(checkout, tree)  # a hook's claim settled by this walk
    from genstamp.facts import parts_status

    status = parts_status(checkout, tree, gen, config.load(checkout.workdir).suites)
    from genstamp.cleanrun import status_line, status_record

    clean = status_record(checkout, tree)
    data = {
        "tree": tree,
        "head": head,
        "workdir": str(checkout.workdir),
        "generation": gen.public() if gen else None,
        "tree_matches_generation": gen is not None and gen.tree == tree,
        "selection": status,
        "clean_room": clean,
    }
    lines = [f"tree        {tree}", f"head        {head or 'none (unborn)'}"]
    if gen is None:
        lines.append("generation  none (run `genstamp stamp`)")
    else:
        same = "the tree is as stamped" if gen.tree == tree else "the tree changed since"
        lines.append(f"generation  {gen.id} ({gen.trigger}, {gen.created}; {same})")
        if gen.history:
            last = gen.history[-1]
            lines.append(
                f"last hook   {last.get('trigger')} {last.get('action')}: {last.get('why')}"
            )
    lines += _selection_lines(status)
    lines.append(f"clean room  {status_line(clean)}")
    text = "".join(f"{line}\n" for line in lines)
    json_text = json.dumps(data, indent=2, sort_keys=True) + "\n"
    sys.stdout.write(json_text if args.json else text)
    sys.stdout.flush()
    route = status_route(checkout)
    if route is not None:  # the next status gives this answer again while it holds
        statuscache.keep(checkout, inputs, tree, route, text, json_text)
    return EXIT_OK


def _selection_lines(status: dict[str, Any]) -> list[str]:
    out = []
    for s in status["suites"]:
        config_file = s["config"] or "pytest's defaults"
        out.append(f"suite       {s['root']}: {s['files']} test files ({config_file})")
        # a configuration file pytest cannot read either: it stops there, and says why (the
        # others are genstamp's notes, each with its remedy: a conftest's computed list)
        for problem in s["problems"]:
            stops = bool(s["config"]) and problem.startswith(s["config"])
            out.append(
                f"            {problem}" + (" — fix it: pytest stops on it" if stops else "")
            )
    current = [p for p in status["parts"] if p["current_tree"]]
    earlier = len(status["parts"]) - len(current)
    for p in current:
        out.append(f"part        {p['evidence']}: {p['files']} files, {p['ran']} tests ran")
    if earlier:
        out.append(
            f"            and {earlier} parts of an earlier tree in this generation (not merged)"
        )
    suites = status["suites"]
    if status["complete"]:
        out.append(f"coverage    complete: {len(current)} parts cover the suite")
    elif len(suites) > 1:
        done = sum(1 for s in suites if not s["missing"])
        out.append(
            f"coverage    {done} of {len(suites)} suites, {len(current)} parts: "
            f"missing {status['missing']['summary']}"
        )
    else:
        out.append(f"coverage    {len(current)} parts: missing {status['missing']['summary']}")
    if status["conflicts"]:
        out.append(f"conflicts   {', '.join(status['conflicts'][:5])}")
    return out


def cmd_verify(args: argparse.Namespace, checkout: Checkout) -> int:
    from genstamp.verify import settings_for, verify

    if args.rev:  # a rev given twice is judged once (and named once)
        args.rev = list(dict.fromkeys(args.rev))
    if args.attestation or args.from_notes or args.summary:
        from genstamp.attest import accepted_line, attestations_json, verify_attestations

        if args.junit:
            raise GenstampError(
                "--junit judges local evidence, --attestation/--from-notes attestations",
                "give one of them",
            )
        settings = settings_for(checkout, args.rev or ())
        if args.clean_room:
            settings = settings._replace(require_clean_room=True)
        verdict, facts = verify_attestations(
            checkout,
            args.rev or (),
            files=args.attestation or (),
            from_notes=args.from_notes,
            summary=args.summary,
            settings=settings,
            signers_from=args.signers_from,
        )
        if args.json:
            _print_json(verdict.to_json() | {"attestations": attestations_json(facts)})
            return EXIT_OK if verdict.ok else EXIT_REFUSED
        _say_verdict(verdict, accepted_line(verdict, facts) if verdict.ok else "", args.format)
        return EXIT_OK if verdict.ok else EXIT_REFUSED
    settings = settings_for(checkout, args.rev or ())
    if args.clean_room:
        settings = settings._replace(require_clean_room=True)
    verdict = verify(checkout, junit=args.junit, revs=args.rev or (), settings=settings)
    if args.json:
        _print_json(verdict.to_json())
    else:
        _say_verdict(verdict, _accepted(verdict) if verdict.ok else "", args.format)
    return EXIT_OK if verdict.ok else EXIT_REFUSED


def _say_verdict(verdict: Verdict, accepted: str, form: str) -> None:
    """The verdict as ``--format`` asks: its refusals, else what was accepted (``accepted``)
    and, for a partial run the project allows, the warning that it is one."""
    if form == "github":
        for failure in verdict.failures:
            print(github_annotation("error", f"genstamp {failure.rule}", _bounded(failure.line())))
        if verdict.ok:
            print(github_annotation("notice", "genstamp", accepted))
            if verdict.partial:
                print(github_annotation("warning", "genstamp", _partial(verdict)))
        return
    for failure in verdict.failures:
        print(_refusal(failure, sys.stdout))
    if verdict.ok:
        print(f"genstamp: {_paint(accepted, GREEN, sys.stderr)}", file=sys.stderr)
        if verdict.partial:
            print(f"genstamp: {_partial(verdict)}", file=sys.stderr)


def _nothing_to_test(verdict: Verdict) -> str:
    trees = ", ".join(sorted({t[:12] for t in verdict.nothing_to_test}))
    return f"tree {trees} holds no Python project and no tests: nothing for the tests to judge"


def _partial(verdict: Verdict) -> str:
    return "accepted as a PARTIAL run (allow-partial): " + "; ".join(verdict.partial)


def _accepted(verdict: Verdict) -> str:
    c = verdict.counts
    if c is None:  # every target's tree was accepted before, or holds no code to test
        said = []
        told = {*verdict.nothing_to_test, *verdict.vouched}
        earlier = sorted({t.tree[:12] for t in verdict.targets if t.tree not in told})
        if earlier:
            trees = ", ".join(earlier)
            said.append(f"tree {trees} was verified earlier in a worktree of this repository")
        if verdict.vouched:
            trees = ", ".join(sorted({t[:12] for t in verdict.vouched}))
            said.append(
                f"tree {trees} was tested in a generation since ended or in another worktree "
                "of this repository, and its run is judged as it was then"
            )
        if verdict.nothing_to_test:
            said.append(_nothing_to_test(verdict))
        return "accepted: " + "; ".join(said)
    # As pytest counts them: JUnit writes xfailed and xpassed tests as <skipped> too.
    counts = f"{c.passed} passed, {c.skipped - c.xfailed - c.xpassed} skipped, "
    if c.xfailed or c.xpassed:
        counts += f"{c.xfailed} xfailed, {c.xpassed} xpassed, "
    merge = verdict.merge
    parts = f", {len(merge.parts)} parts merged" if merge and len(merge.parts) > 1 else ""
    return (
        f"evidence accepted: {counts}tree {str(verdict.tested_tree)[:12]}, "
        f"generation {str(verdict.generation)[:12]}{parts}"
    )


def cmd_attest(args: argparse.Namespace, checkout: Checkout) -> int:
    from genstamp import attest, dsse

    part = attest.parse_part(args.part) if args.part else None
    if args.output is not None and args.output.is_dir():
        raise GenstampError(
            f"{args.output} is a folder", f"name the file to write: -o {args.output}/FILE.json"
        )
    made = attest.attest(checkout, args.rev, part=part, sign=args.sign, url=args.url or "")
    if made.envelope is None:
        # stdout is the attestation's, when no -o is given: a refusal there would stand in the
        # file `genstamp attest > a.json` makes, unseen
        out = sys.stdout if args.output else sys.stderr
        for failure in made.verdict.failures:
            print(_refusal(failure, out), file=out)
        print("genstamp: not attested: the gate refused", file=sys.stderr)
        return EXIT_REFUSED
    line = dsse.to_json(made.envelope) + "\n"
    if args.output:
        write_atomic(args.output, line.encode())
    else:
        sys.stdout.write(line)
    signed = "signed" if made.envelope.signatures else "unsigned"
    where = f" to {args.output}" if args.output else ""
    print(f"genstamp: attested {args.rev} ({signed}){where}", file=sys.stderr)
    return EXIT_OK


def cmd_publish(args: argparse.Namespace, checkout: Checkout) -> int:
    from genstamp import attest, notes

    for path, commit in attest.note_files(checkout, args.files):
        print(f"genstamp: {path} noted on {commit[:12]} in {notes.REF}", file=sys.stderr)
    if args.remote:
        tries = notes.publish(checkout.workdir, args.remote)
        attempts = "1 attempt" if tries == 1 else f"{tries} attempts"
        print(f"genstamp: {notes.REF} pushed to {args.remote} ({attempts})", file=sys.stderr)
    return EXIT_OK


def cmd_summary(args: argparse.Namespace, checkout: Checkout) -> int:
    from genstamp import attest, summary

    verdict, facts = attest.verify_attestations(
        checkout,
        [args.rev],
        files=args.attestation or (),
        from_notes=args.from_notes,
        signers_from=args.signers_from,
    )
    if not verdict.ok:
        for failure in verdict.failures:
            print(_refusal(failure, sys.stdout))
        print("genstamp: no summary: the gate refused", file=sys.stderr)
        return EXIT_REFUSED
    tree = verdict.targets[0].tree
    sys.stdout.write(summary.render(verdict, [a for a in facts.attested if a.tree == tree]))
    return EXIT_OK


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


def cmd_hook(args: argparse.Namespace, checkout: Checkout | None) -> int:
    if args.hook == "pre-receive":  # on the server: a bare repository, no checkout
        from genstamp import prereceive

        refused = prereceive.run(_read_stdin(), os.environ)
        for ref, failure in refused:
            print(f"genstamp: {ref}: {prereceive.line(failure)}", file=sys.stderr)
        if refused:
            print("genstamp: push refused: a protected ref needs an attested tree", file=sys.stderr)
        return EXIT_REFUSED if refused else EXIT_OK
    if args.hook != "pre-push":  # issue 16: the light hook, which falls back to full_restamp_hook
        from genstamp import posthook

        return posthook.main(args.directory, args.hook, args.git_args, os.environ)
    if checkout is None:
        checkout = open_checkout(args.directory)  # a push is judged or refused, never waved on
    return _pre_push_hook(args, checkout)


def full_restamp_hook(name: str, directory: Path | None, checkout: Checkout | None) -> int:
    """A post-* hook (or pre-commit's restamp entry): git's command has happened and cannot be
    undone, so no error here may fail it. Any error is one warning line and exit 0; the next
    verify then says what is wrong (the stamp is missing, damaged or of another tree)."""
    try:
        if checkout is None:
            checkout = open_checkout(directory)
        trigger = hooks.restamp_trigger(name, os.environ)
        if trigger is None:
            return EXIT_OK
        from genstamp import restamp

        settings = config.load(checkout.workdir)
        try:
            gen, result, kept, why = restamp.after_hook(
                checkout, trigger, venvs=settings.scrub_venvs
            )
        except generation.NewerStamp as exc:
            result = restamp.scrub_all(checkout, venvs=settings.scrub_venvs)
            _hook_warning(f"{exc.message}: left as it is; {_scrub_line(result)}", exc.remedy)
            _scrub_errors(result)
            return EXIT_OK
    except GenstampError as exc:
        _hook_warning(exc.message, exc.remedy or "run `genstamp stamp` once the cause is fixed")
        return EXIT_OK
    except (pygit2.GitError, OSError, ValueError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        _hook_warning(reason, "check that `git status` works, then run `genstamp stamp`")
        return EXIT_OK
    if kept:
        said = f"generation {gen.id[:12]} kept: {why}"
    else:
        said = f"new generation {gen.id[:12]} (tree {gen.tree[:12]})"
    print(f"genstamp: {said}; {_scrub_line(result)}", file=sys.stderr)
    _scrub_errors(result)
    from genstamp import hooktext

    gone = hooktext.pre_push_gone(str(checkout.workdir))
    if gone:
        print(f"genstamp: warning: {gone}", file=sys.stderr)
    return EXIT_OK


def _os_hint(exc: Exception) -> str:
    """The remedy for a failure of the file system or libgit2 that genstamp did not expect."""
    name = exc.filename if isinstance(exc, OSError) and exc.filename else None
    if isinstance(exc, OSError):  # a full disk, a read-only one, permissions: whatever the file
        folder = os.path.dirname(os.fsdecode(name)) if name is not None else "the git dir"
        said = cannot_write(exc, folder or ".")
        if said:
            return said
    if name is None:
        return "check that `git status` works here"
    parts = Path(os.fsdecode(name)).parts
    if STATE_DIR in parts and any(p == ".git" or p.endswith(".git") for p in parts):
        if os.path.lexists(name):  # (a file being made is no file to remove)
            return (
                f"remove {os.fsdecode(name)}: genstamp's own state, made anew (then rerun the "
                "tests)"
            )
    return f"check that {os.fsdecode(name)} can be read and written, and its folder too"


def _hook_warning(message: str, remedy: str) -> None:
    print(f"genstamp: warning: {message} (hint: {remedy})", file=sys.stderr)


def _pre_push_hook(args: argparse.Namespace, checkout: Checkout) -> int:
    from genstamp.verify import verify

    labels: dict[str, str] = {}
    if args.pre_commit:
        local, remote = (os.environ.get(n, "") for n in hooks.PRE_COMMIT_REFS)
        revs = [hooks.pre_commit_rev(os.environ)]
        if hooks.pushed_to_notes(local, remote) and hooks.holds_notes(checkout.repo, revs[0]):
            return EXIT_OK  # notes: nothing to judge (``hooks.is_notes``)
        labels = {revs[0]: hooks.pre_commit_label(os.environ, revs[0])}
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
        print(f"genstamp: {_refusal(failure, sys.stderr)}", file=sys.stderr)
    if not verdict.ok:
        refused = _paint("push refused", RED, sys.stderr)
        print(f"genstamp: {refused}{_refs_unnamed(verdict, labels)}", file=sys.stderr)
    elif verdict.nothing_to_test:  # accepted without a run: said, as `verify --rev` says it
        print(f"genstamp: accepted: {_nothing_to_test(verdict)}", file=sys.stderr)
    return EXIT_OK if verdict.ok else EXIT_REFUSED


def _refs_unnamed(verdict: Verdict, labels: Mapping[str, str]) -> str:
    """The pushed refs the refusal is about (judged on the evidence now: not one an earlier
    verdict on its tree accepted), when no refusal line names one (``no-evidence``,
    ``no-stamp``: the work tree's state refuses every such ref alike), so that the user sees
    which refs need a run."""
    said = "\n".join(f"{f.message} {f.remedy}" for f in verdict.failures)
    judged = {t.label for t in verdict.targets if t.tree in verdict.judged}
    # (a target is named by its label where the push gave one, else by its rev)
    refs = [label for rev, label in labels.items() if judged & {rev, label}] or [*labels.values()]
    # a name as the lines print it: a ref name that is no UTF-8 escaped (``printable``)
    shown = [printable(label) for label in refs]
    if any(label.partition(" ")[0] in said for label in shown) or not labels:
        return ""
    more = len(shown) - 3
    shown = shown[:3]
    return ": " + ", ".join(shown) + (f" and {more} more" if more > 0 else "")


def cmd_install(args: argparse.Namespace, checkout: Checkout) -> int:
    from genstamp import install, restamp

    if args.uninstall:
        report = install.uninstall(checkout)
    else:
        report = install.install(
            checkout,
            pre_commit=args.pre_commit,
            plain=args.plain,
            repo=args.repo,
            rev=args.rev,
            command=install.genstamp_command(),
        )
    how = "with pre-commit" if report.mode == "pre-commit" else "as plain git hooks"
    if report.mode == "uninstall":
        done = "restored" if report.changed else "nothing to restore"
        print(
            f"genstamp uninstalled: {done}{': ' if report.changed else ''}"
            f"{', '.join(report.changed)}"
        )
    elif report.changed:
        print(f"genstamp installed {how}: changed {', '.join(report.changed)}")
    else:
        print(f"genstamp is installed {how} already: nothing changed")
    for note in report.notes:
        print(f"note: {note}")
    if report.mode != "uninstall":
        gen = generation.current(checkout)
        if gen is None:
            settings = config.load(checkout.workdir)
            gen, result = restamp.begin(
                checkout, venvs=settings.scrub_venvs, why="genstamp install"
            )
            scrubbed = _scrub_line(result) if result is not None else ""
            print(f"generation {gen.id[:12]} begun: tree {gen.tree[:12]}; {scrubbed}")
        else:
            print(f"generation {gen.id[:12]} kept (tree {gen.tree[:12]})")
        _begin_other_worktrees(checkout)
    return EXIT_OK


def _begin_other_worktrees(checkout: Checkout) -> None:
    """The hooks serve every worktree of the repository: one made before the install has no
    generation yet (a later ``git worktree add`` begins one through post-checkout), so its
    runs would bind to nothing. Each such worktree gets its own, as this one did."""
    from genstamp import restamp
    from genstamp.repo import other_worktrees

    for other in other_worktrees(checkout):
        try:
            if generation.current(other) is not None:
                continue
            settings = config.load(other.workdir)
            gen, result = restamp.begin(other, venvs=settings.scrub_venvs, why="genstamp install")
        except (GenstampError, OSError) as exc:
            print(f"note: no generation begun in the worktree {other.workdir}: {exc}")
            continue
        scrubbed = _scrub_line(result) if result is not None else ""
        print(
            f"generation {gen.id[:12]} begun in the worktree {other.workdir}: "
            f"tree {gen.tree[:12]}; {scrubbed}"
        )


def cmd_doctor(args: argparse.Namespace, checkout: Checkout) -> int:
    from genstamp import doctor

    checks = doctor.run(checkout, python=args.python)
    if args.json:
        _print_json({"ok": doctor.passed(checks), "checks": [c._asdict() for c in checks]})
    else:
        colours = {"ok": GREEN, "warn": YELLOW, "fail": RED}
        for check in checks:
            line = check.line()
            print(
                _paint(check.status, colours[check.status], sys.stdout) + line[len(check.status) :]
            )
    return EXIT_OK if doctor.passed(checks) else EXIT_REFUSED


def cmd_check_bytecode(args: argparse.Namespace, checkout: Checkout | None) -> int:
    files: list[str] = list(args.files)
    base = Path.cwd()
    if not files:
        # every file of the index: the files pre-commit names need no repository, this does
        checkout = checkout if checkout is not None else open_checkout(args.directory)
        files = [entry.path for entry in checkout.repo.index]
        base = checkout.workdir
    found = [
        f
        for f in files
        if is_bytecode_path(f.replace(os.sep, "/")) and not _data_named_like_bytecode(base / f)
    ]
    for path in found:
        name = path.replace(os.sep, "/").rsplit("/", 1)[-1]
        what = (
            "is Python bytecode in git"
            if name.endswith(SUFFIXES) or is_bytecode_file(name)
            else f"is in git inside a {PYCACHE} folder, where only Python's bytecode belongs"
        )
        print(
            f"genstamp-bytecode: {printable(path)} {what} — "
            f"`git rm --cached -- {shlex.quote(printable(path))}` and ignore __pycache__/ and "
            "*.py[co]"
        )
    return EXIT_REFUSED if found else EXIT_OK


def _data_named_like_bytecode(path: Path) -> bool:
    """A file named like legacy bytecode (``x.pyc``, outside ``__pycache__``) that holds none: a
    data file of that name, which scrub keeps and the gate does not judge."""
    name = path.name
    return (
        PYCACHE not in path.parts
        and name.endswith(SUFFIXES)
        and path.is_file()
        and not holds_bytecode(str(path))
    )


def cmd_clean_run(args: argparse.Namespace, checkout: Checkout) -> int:
    from genstamp.cleanrun import command

    return command(args, checkout)


def cmd_demo(args: argparse.Namespace, checkout: Checkout | None) -> int:
    from genstamp.demo import demo

    return demo(keep=args.keep)


class _Parser(argparse.ArgumentParser):
    """argparse, with its errors as one ``genstamp:`` line and exit code 2, pointing at the
    help of the command that was being parsed. An epilog that costs an import to write
    (``lazy_epilog``) is written only when the help is."""

    def __init__(self, *args: Any, lazy_epilog: Callable[[], str] | None = None, **kw: Any):
        super().__init__(*args, **kw)
        self._lazy_epilog = lazy_epilog

    def format_help(self) -> str:
        if self._lazy_epilog is not None:
            self.epilog, self._lazy_epilog = self._lazy_epilog(), None
        return super().format_help()

    def error(self, message: str) -> NoReturn:
        self.exit(EXIT_USAGE, f"genstamp: {message} (hint: see `{self.prog} --help`)\n")


_EXIT_CODES = """\
exit codes:
  0  success (the gate accepted, the command did its work)
  1  a check refused (verify, the pre-push hook, check-bytecode; stamp or scrub that left
     bytecode behind)
  2  usage or environment error: bad arguments, not inside a git work tree, a bare
     repository, a damaged index, a corrupt stamp or configuration
  130  interrupted
Errors are one line on stderr (`genstamp: ... (hint: the remedy)`); findings one line each
on stdout."""

_CLEAN_RUN = (
    "test the judged tree again in a clean checkout and a clean environment",
    "Test the tree being judged (the work tree as it is, uncommitted changes included, or "
    "--rev's commit) in a new checkout outside the work tree and a new virtual environment "
    "(uv when installed, else venv and pip; dependencies cached in the git dir), and keep the "
    "verdict as clean-room evidence for that tree. Exit 0 when the clean run passed, 1 when "
    "it failed or its gate refused, 2 when a step could not be done.",
)
_HOOK_NAMES = (*hooks.RESTAMP_HOOKS, "restamp", "pre-push", "pre-receive")
_WIDTH = 88


def _fill(text: str) -> str:
    return textwrap.fill(text, _WIDTH, break_on_hyphens=False)


def _rules_epilog() -> str:
    from genstamp.rules import ATTESTATION_TABLE, TABLE

    rows = [(r.name, r.remedy) for r in TABLE] + [(r.name, r.remedy) for r in ATTESTATION_TABLE]
    width = max(len(name) for name, _ in rows)
    lines = ["rules (each a hard stop; a refusal prints `rule: what was found — remedy`):"]
    for name, remedy in rows:
        lines += textwrap.wrap(
            remedy,
            _WIDTH,
            initial_indent=f"  {name:<{width}}  ",
            subsequent_indent=" " * (width + 4),
            break_on_hyphens=False,
        )
    return "\n".join(lines)


class _Version(argparse.Action):
    """``--version``: the version and the build (its digest is read only when asked)."""

    def __init__(self, option_strings: Sequence[str], dest: str, **kwargs: Any) -> None:
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS, **kwargs)

    def __call__(self, parser: argparse.ArgumentParser, *_args: object, **_kw: object) -> None:
        from genstamp import build

        print(f"genstamp {build.label()}")
        parser.exit()


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="genstamp",
        description=_fill(
            "Bind test evidence to a workspace generation and the tree it tested; refuse "
            "pushes and merges that stale, failing or partial evidence would certify."
        ),
        epilog=_EXIT_CODES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action=_Version, help="show the version and build, and exit")
    parser.add_argument("-C", dest="directory", metavar="DIR", help="run as if started in DIR")
    parser.add_argument(
        "--color",
        choices=("auto", "always", "never"),
        default="auto",
        help="colour the output: auto (on a terminal, unless NO_COLOR is set), always, never",
    )
    sub = parser.add_subparsers(dest="subcommand", metavar="COMMAND", required=True)

    json_help = "print the result as JSON on stdout (fields: see README)"
    with_json: list[argparse.ArgumentParser] = []  # --json comes last in their help

    def command(
        name: str,
        summary: str,
        description: str,
        func: Callable[[argparse.Namespace, Any], int],
        *,
        json: bool = False,
        no_checkout_ok: bool = False,
        lazy_epilog: Callable[[], str] | None = None,
    ) -> argparse.ArgumentParser:
        one = sub.add_parser(
            name,
            help=summary,
            description=_fill(description),
            formatter_class=argparse.RawDescriptionHelpFormatter,
            lazy_epilog=lazy_epilog,
        )
        one.set_defaults(func=func, no_checkout_ok=no_checkout_ok)
        if json:
            with_json.append(one)
        return one

    p = command(
        "stamp",
        "scrub bytecode and begin a new generation",
        "Scrub bytecode from the work tree, then begin a new workspace generation: a stamp in "
        "the git dir that later evidence must carry. Exit 1 when bytecode could not be removed.",
        cmd_stamp,
        json=True,
    )
    p.add_argument("--no-scrub", action="store_true", help="do not scrub bytecode first")
    p.add_argument(
        "--trigger",
        default="manual",
        choices=generation.TRIGGERS,
        help="what began the generation, recorded in the stamp (default: manual)",
    )
    p.add_argument(
        "--scrub-venvs",
        action="store_true",
        help="scrub virtual environments inside the tree too (folders holding pyvenv.cfg)",
    )

    p = command(
        "scrub",
        "remove bytecode from the work tree",
        "Remove __pycache__ folders, legacy *.pyc/*.pyo files and folders left empty by that. "
        "Deletes bytecode and nothing else; never a file git tracks; never follows a symlink.",
        cmd_scrub,
        json=True,
    )
    p.add_argument("--dry-run", action="store_true", help="list what would be removed")
    p.add_argument(
        "--venvs", action="store_true", help="enter virtual environments inside the tree too"
    )

    p = command(
        "status",
        "show the tree identity and the current generation",
        "Show the current tree identity (the tree `git add -A && git write-tree` would write), "
        "HEAD, and the current generation.",
        cmd_status,
        json=True,
    )

    p = command(
        "verify",
        "the gate: accept only fresh, passing, complete evidence",
        "Judge the evidence against the work tree, or against each --rev commit's tree. "
        "Exit 0 when accepted, 1 when a rule refuses.",
        cmd_verify,
        lazy_epilog=_rules_epilog,
    )
    p.add_argument(
        "--junit",
        type=Path,
        action="append",
        metavar="PATH",
        help="an evidence file; repeat it to merge parts of one run (default: where the "
        "plugin wrote it, in the git dir, merged with the parts it kept for this generation)",
    )
    p.add_argument(
        "--rev",
        action="append",
        metavar="REV",
        help="judge this commit's tree instead of the work tree (repeatable)",
    )
    p.add_argument(
        "--clean-room",
        action="store_true",
        help="also require passing clean-room evidence (`genstamp clean-run`) for each tree "
        "judged, as require-clean-room in [tool.genstamp] does",
    )
    p.add_argument("--json", action="store_true", help=json_help)
    p.add_argument(
        "--format",
        choices=("text", "github"),
        default="text",
        help="github: one GitHub Actions annotation per refusal (::error title=genstamp RULE::…), "
        "else a ::notice (and a ::warning for an allowed partial run)",
    )
    _attestation_sources(p)
    p.add_argument(
        "--summary",
        type=Path,
        metavar="FILE",
        help="check that this summary quotes a verified attestation of --rev and nothing else",
    )

    p = command(
        "attest",
        "write an in-toto attestation of a verified commit",
        "Judge REV as `verify --rev` does and, when accepted, write an in-toto Statement "
        "(test-result predicate, genstamp's facts) in a DSSE envelope, signed with git's SSH "
        "signing key with --sign. With --part I/N the run may be one part of a split suite.",
        cmd_attest,
    )
    p.add_argument("--rev", default="HEAD", help="the commit to attest (default: HEAD)")
    p.add_argument("--part", metavar="I/N", help="this run is group I of N (pytest-split)")
    p.add_argument("--sign", action="store_true", help="sign with user.signingkey (ssh)")
    p.add_argument("--url", help="the CI run's address (default: GitHub Actions' run)")
    p.add_argument("-o", "--output", type=Path, metavar="FILE", help="default: stdout")

    p = command(
        "publish",
        "store attestations as git notes (refs/notes/genstamp), and push them",
        "Add each attestation to the note on the commit it attests under refs/notes/genstamp "
        "(a union: nothing already there is lost); with --remote, fetch the remote's notes, "
        "merge them (cat_sort_uniq) and push, again when a concurrent publish moved them.",
        cmd_publish,
    )
    p.add_argument("files", nargs="+", type=Path, metavar="FILE", help="attestations")
    p.add_argument("--remote", help="push refs/notes/genstamp to this remote")

    p = command(
        "summary",
        "markdown of what the gate verified from attestations",
        "Judge REV from attestations and, when accepted, print a markdown summary that states "
        "only what was verified and carries the attestations' digests; exit 1 when refused.",
        cmd_summary,
    )
    p.add_argument("--rev", default="HEAD", help="the commit (default: HEAD)")
    _attestation_sources(p)

    p = command(
        "run",
        "run another test runner and bind its JUnit file",
        "For runners other than pytest: record the generation and the tree, run COMMAND "
        "($GENSTAMP_JUNIT names where it should write JUnit XML), and bind the file it wrote. "
        "The exit status is the command's.",
        cmd_run,
    )
    p.add_argument(
        "--junit",
        type=Path,
        metavar="PATH",
        help="the JUnit file the command writes (default: $GENSTAMP_JUNIT, in the git dir)",
    )
    p.add_argument("command", nargs=argparse.REMAINDER, help="-- COMMAND [ARG ...]")

    p = command(
        "hook",
        "git hook entry points",
        "The entry points git's hooks (or pre-commit) call. post-checkout, post-merge, "
        "post-rewrite and restamp scrub the bytecode of what git changed and keep the "
        "generation when the work tree holds the content it began with (or tested), else "
        "begin a new one, and never fail git's command; pre-push judges the pushed commits' "
        "trees.",
        cmd_hook,
        no_checkout_ok=True,  # a post-* hook warns, never fails
    )
    p.add_argument(
        "hook", choices=_HOOK_NAMES, metavar="HOOK", help="one of: " + ", ".join(_HOOK_NAMES)
    )
    p.add_argument(
        "--pre-commit",
        action="store_true",
        help="pre-push under pre-commit: read the ref from its environment, not git's stdin",
    )
    p.add_argument("git_args", nargs="*", help="git's own hook arguments")

    p = command(
        "install",
        "set this repository up: hooks, hook types, the first generation",
        "Set this repository up in one command. With pre-commit (a .pre-commit-config.yaml, or "
        "--pre-commit): add genstamp's hooks and the hook types they need to the config, run "
        "`pre-commit install`, and install genstamp's own pre-push, which judges every pushed "
        "ref. Without: install genstamp's post-checkout, post-merge, post-rewrite and pre-push "
        "hooks. A hook already there is kept and run after genstamp's. Begins the first "
        "generation. Running it again changes nothing; --uninstall restores what was there.",
        cmd_install,
    )
    way = p.add_mutually_exclusive_group()
    way.add_argument("--pre-commit", action="store_true", help="set up through pre-commit")
    way.add_argument("--plain", action="store_true", help="plain git hooks, even with pre-commit")
    p.add_argument("--uninstall", action="store_true", help="restore what was there before")
    p.add_argument(
        "--repo",
        metavar="URL",
        help="the genstamp repository the pre-commit config pins (default: where this "
        "genstamp was installed from)",
    )
    p.add_argument("--rev", metavar="REV", help="the tag or commit to pin (with --repo)")

    p = command(
        "doctor",
        "check the whole set-up and name each fix",
        "Check the hooks, the pre-push, the plugin in the test environment, the generation, "
        "the environment, the configuration and whether tests may begin as the tree at the "
        "start is taken: one line per check, `ok|warn|fail: what — remedy`. Exit 1 when a "
        "check fails.",
        cmd_doctor,
        json=True,
    )
    p.add_argument(
        "--python",
        metavar="PATH",
        help="the test environment's interpreter (default: the in-project .venv's, else this one)",
    )

    p = command(
        "check-bytecode",
        "fail when bytecode is tracked or staged",
        "Fail (exit 1) when any named file, or without names any file in the index, is Python "
        "bytecode (*.pyc, *.pyo, or inside __pycache__/).",
        cmd_check_bytecode,
        no_checkout_ok=True,
    )
    p.add_argument("files", nargs="*", metavar="FILE", help="files to check (default: the index)")

    from genstamp.cleanrun import register

    p = command("clean-run", *_CLEAN_RUN, func=cmd_clean_run)
    register(p, json_help)

    p = command(
        "demo",
        "replay the warm-workspace incident in a temporary folder",
        "Replay the incident genstamp exists for, in a temporary folder, offline: a green warm "
        "run on stale bytecode, then genstamp refusing it.",
        cmd_demo,
        no_checkout_ok=True,
    )
    p.add_argument("--keep", action="store_true", help="keep the temporary folder")

    for one in with_json:
        one.add_argument("--json", action="store_true", help=json_help)
    return parser


def _attestation_sources(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--attestation",
        type=Path,
        action="extend",
        nargs="+",
        metavar="FILE",
        help="judge from these attestations (parts merge), not local evidence",
    )
    p.add_argument(
        "--from-notes",
        action="store_true",
        help="judge from the notes in refs/notes/genstamp on each --rev or a commit of its tree",
    )
    p.add_argument(
        "--signers-from",
        metavar="REV",
        help="the allowed signers file as REV holds it (the branch a change merges into), not "
        "the judged checkout's: a change under review cannot add its own key",
    )


def _parse(parser: argparse.ArgumentParser, argv: Sequence[str] | None) -> argparse.Namespace:
    """Parse ``argv``; arguments left over are an error of the command they were given to,
    so that the hint names that command's help."""
    args, extra = parser.parse_known_args(argv)
    if extra:
        subs = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction)).choices
        owner = subs.get(getattr(args, "subcommand", None) or "", parser)
        owner.error(f"unrecognized arguments: {' '.join(extra)}")
    return args


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    try:
        args = _parse(parser, argv)
    except SystemExit as exc:  # argparse has printed its usage line
        return EXIT_USAGE if exc.code else EXIT_OK
    _COLOR["mode"] = args.color
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
        from genstamp.errors import unreadable_index

        hint = unreadable_index(exc) or _os_hint(exc)
        print(f"genstamp: {reason}{where} (hint: {hint})", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        print("genstamp: interrupted", file=sys.stderr)
        return 130
