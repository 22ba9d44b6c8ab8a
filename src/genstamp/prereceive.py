"""A server-side gate: git's pre-receive refuses an update of a protected ref unless the
pushed commit's tree has a valid attestation, read from ``refs/notes/genstamp`` as this very
push leaves it (the notes pushed with it sit in git's quarantine, readable by the hook).

Configured in the server repository's git config: ``genstamp.protect`` (repeatable, fnmatch
patterns of ref names; default ``refs/heads/main``) and ``genstamp.attestationSigners`` (an
allowed signers file: signatures required and checked against it).
"""

from __future__ import annotations

import fnmatch
import os
import subprocess
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

import pygit2

from genstamp import config, notes
from genstamp.attest import gather
from genstamp.errors import EXIT_REFUSED, GenstampError
from genstamp.facts import testable
from genstamp.hooks import Z40, stdin_lines
from genstamp.repo import follow_git_environment
from genstamp.rules import Failure, Target, decide_attestations
from genstamp.typedtuple import NamedTuple

DEFAULT_PROTECTED = ("refs/heads/main",)


class Update(NamedTuple):
    old: str
    new: str
    ref: str


def parse(stdin: str) -> list[Update]:
    """git's pre-receive stdin: ``<old> SP <new> SP <ref> LF`` per updated ref."""
    shape = "`<old> <new> <ref>`"
    split = lambda line: line.split(" ", 2)  # noqa: E731 - a ref name may hold spaces
    return [Update(*parts) for parts in stdin_lines(stdin, "pre-receive", shape, split, (0, 1))]


def protected(ref: str, patterns: Sequence[str]) -> bool:
    """Whether ``ref`` matches a pattern as a full ref name, or as git spells a short one
    (``main``, ``heads/main``, ``v*``: ``refs/heads/main``, ``refs/tags/v1``), which a host's
    branch protection takes: a short pattern never leaves a ref open unsaid (G26 07)."""
    return any(fnmatch.fnmatchcase(ref, f) for p in patterns for f in _spellings(p))


def _spellings(pattern: str) -> tuple[str, ...]:
    """The full names a ref pattern stands for, in git's order of a short name's meanings."""
    if pattern.startswith("refs/"):
        return (pattern,)
    return (f"refs/{pattern}", f"refs/tags/{pattern}", f"refs/heads/{pattern}")


def _config_all(gitdir: Path, name: str) -> list[str]:
    proc = subprocess.run(
        ["git", "config", "--get-all", name],
        cwd=gitdir,
        capture_output=True,
        text=True,
        check=False,
    )
    return proc.stdout.split("\n")[:-1] if proc.returncode == 0 else []


def _tree_roots(repo: pygit2.Repository, tree: pygit2.Tree) -> tuple[str, ...]:
    """The pushed tree's own ``[tool.genstamp] suites`` (its test layout, not its policy)."""
    if "pyproject.toml" not in tree:
        return ()
    blob = tree["pyproject.toml"]
    if not isinstance(blob, pygit2.Blob):
        return ()
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover
        import tomli as tomllib  # type: ignore[import-not-found,unused-ignore]
    try:
        section = tomllib.loads(blob.data.decode()).get("tool", {}).get("genstamp", {})
        return config.parse({"suites": section.get("suites", [])}, Path(), Path()).suites
    except (
        UnicodeDecodeError,
        tomllib.TOMLDecodeError,
        RecursionError,
        AttributeError,
        GenstampError,
    ):
        return ()


def _updated(repo: pygit2.Repository, ref: str) -> list[str]:
    """The refs a push to ``ref`` updates: ``ref``, and where it is a symbolic ref the refs it
    leads to (receive-pack moves the target: a ``master`` kept as an alias of ``main`` moves
    ``main``)."""
    names = [ref]
    for _ in range(10):  # git follows at most a few levels too
        try:
            found = repo.references.get(names[-1])
        except (ValueError, pygit2.GitError):
            break
        if found is None or found.type != pygit2.enums.ReferenceType.SYMBOLIC:
            break
        target = found.target
        if not isinstance(target, str) or target in names:
            break
        names.append(target)
    return names


# The remedies that differ on the server, where the policy is the server's own: a pushed tree's
# settings (its allow-partial) count for nothing there.
SERVER_REMEDY = {
    "attestation-partial": "attest the missing parts (each part's job runs `genstamp attest"
    " --part I/N`) and pass every part: the server takes no allow-partial from a pushed tree",
}


def line(failure: Failure) -> str:
    """``failure`` as the server says it: its rule, what, and the remedy that works there."""
    return f"{failure.rule}: {failure.message} — {SERVER_REMEDY.get(failure.rule, failure.remedy)}"


def judge(
    repo: pygit2.Repository, updates: Sequence[Update], gitdir: Path
) -> list[tuple[str, Failure]]:
    """The refusals of ``updates`` (ref, failure); none when every protected ref is attested."""
    patterns = _config_all(gitdir, "genstamp.protect") or list(DEFAULT_PROTECTED)
    signers = _config_all(gitdir, "genstamp.attestationSigners")
    allowed = (gitdir / os.path.expanduser(signers[-1])) if signers else None
    settings = config.Config(attestation_signers=allowed)
    revocations = _config_all(gitdir, "gpg.ssh.revocationFile")  # (as git's own checks take it)
    revoked = (gitdir / os.path.expanduser(revocations[-1])) if revocations else None
    notes_tip = next((u.new for u in updates if u.ref == notes.REF), None)
    if notes_tip == Z40:
        notes_tip = ""  # the push deletes the notes: nothing attests anything
    out: list[tuple[str, Failure]] = []
    for update in updates:
        if update.new == Z40 or update.ref.startswith("refs/notes/"):
            continue  # a notes ref holds attestations, not code (refs/* protects no note)
        if not any(protected(name, patterns) for name in _updated(repo, update.ref)):
            continue
        try:
            commit = repo[update.new].peel(pygit2.Commit)
        except (KeyError, ValueError, pygit2.GitError):
            raise GenstampError(
                f"{update.ref} would point at {update.new[:12]}, which is not a commit",
                "push a commit to a protected ref",
                code=EXIT_REFUSED,
            ) from None
        target = Target(update.ref, str(commit.tree_id))
        if not testable(repo, target.tree):
            continue  # no Python project and no tests (gh-pages): nothing to attest
        noted = notes.of_tree(repo, str(commit.id), notes_tip) if notes_tip != "" else []
        sources = [(f"the note on {annotated[:12]}", text) for annotated, text in noted]
        facts = gather(
            repo,
            [target],
            sources,
            settings,
            source=f"{notes.REF} as pushed",
            allowed=allowed,
            roots={target.tree: _tree_roots(repo, commit.tree)},
            grown=True,
            revoked=revoked,
        )
        out += [(update.ref, f) for f in decide_attestations(facts, settings).failures]
    return out


def run(stdin: str, environ: Mapping[str, str]) -> list[tuple[str, Failure]]:
    """The hook: the refusals of the push git describes on ``stdin``."""
    gitdir = Path(environ.get("GIT_DIR", ".")).resolve()
    follow_git_environment()
    repo = pygit2.Repository(str(gitdir))
    # The pushed objects are in the quarantine until every hook accepts: read them there.
    for name in ("GIT_QUARANTINE_PATH", "GIT_OBJECT_DIRECTORY"):
        folder = environ.get(name)
        if folder and Path(folder).is_dir():
            repo.odb.add_disk_alternate(str(Path(folder).resolve()))
    return judge(repo, parse(stdin), gitdir)
