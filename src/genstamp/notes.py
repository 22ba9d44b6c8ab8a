"""Attestations in git itself: notes on the attested commit under ``refs/notes/genstamp``.

A note is a JSON Lines bundle, one DSSE envelope per line, sorted and unique, so that two
machines' notes on one commit merge by union: ``git notes merge -s cat_sort_uniq`` gives the
very note this module would write. ``publish`` adds locally, then fetches the remote's notes,
merges them with that strategy and pushes, again on a non-fast-forward (a concurrent publish).
"""

from __future__ import annotations

import contextlib
import random
import subprocess
import time
from collections.abc import Iterator, Sequence
from pathlib import Path

import pygit2

from genstamp.errors import GenstampError

REF = "refs/notes/genstamp"
INCOMING = "refs/notes/genstamp-incoming"  # the remote's notes, fetched to merge
ATTEMPTS = 5


def read(repo: pygit2.Repository, commit: str, notes_commit: str | None = None) -> str:
    """The note on ``commit`` in the notes commit ``notes_commit`` (default: ``REF``'s tip),
    "" when none. Reads the notes tree itself, fanned out or not, so that a pre-receive hook
    can read a notes commit no ref names yet."""
    if notes_commit is None:
        notes_commit = tip(repo)
        if notes_commit is None:
            return ""
    at_hand(repo, notes_commit)
    try:
        tree = repo[notes_commit].peel(pygit2.Tree)
    except (KeyError, ValueError, pygit2.GitError):
        return ""
    return _note_in(tree, commit)


def tip(repo: pygit2.Repository) -> str | None:
    """The notes commit ``REF`` names; None when there is none (as for git, a symbolic ref
    that leads nowhere is none). A ref naming no commit (a tree, a blob) is an error: git's
    own notes commands fail on it, so no note can be read or added until it is mended."""
    ref = repo.references.get(REF)
    if ref is None:
        return None
    try:
        target = ref.resolve().target
    except (KeyError, pygit2.GitError):
        return None  # (git: "ignoring dangling symref")
    found = repo.get(target)
    if found is not None and not isinstance(found, pygit2.Commit):
        kind = type(found).__name__.lower()
        raise GenstampError(
            f"{REF} names a {kind} ({str(target)[:12]}), not a notes commit",
            f"delete it (git update-ref -d {REF}) or fetch the notes again",
        )
    return str(target)


def _note_in(tree: pygit2.Tree, commit: str) -> str:
    """The note on ``commit`` in a notes tree, fanned out or not ("" when none)."""
    rest = commit
    while rest:
        entry = _entry(tree, rest)
        if isinstance(entry, pygit2.Blob):
            return _note_text(entry, commit)
        sub = _entry(tree, rest[:2])
        if not isinstance(sub, pygit2.Tree):
            return ""
        tree, rest = sub, rest[2:]
    return ""


def of_tree(
    repo: pygit2.Repository, commit: str, notes_commit: str | None = None
) -> list[tuple[str, str]]:
    """(annotated commit, note) for ``commit``'s note and for the note on every other commit
    of the same tree, ``commit``'s first: an attestation is of a tree, and a commit made of an
    attested tree (an empty commit on top, a merge whose tree is its branch's, a cherry-pick
    elsewhere) is what was tested. The statements still name the tree they judged. A note on
    a commit this repository does not hold (a shallow clone, a squash-merged branch deleted
    since, a commit attested and published but never pushed) counts when one of its
    statements names the tree: the gate then reads them as any other."""
    if notes_commit is None:
        notes_commit = tip(repo)
        if notes_commit is None:
            return []
    at_hand(repo, notes_commit)
    try:
        tree = repo[notes_commit].peel(pygit2.Tree)
        wanted = repo[commit].peel(pygit2.Commit).tree_id
    except (KeyError, ValueError, pygit2.GitError):
        return []
    own = _note_in(tree, commit)  # the objects at hand already (``at_hand`` above)
    out = [(commit, own)] if own else []
    for annotated, blob in _notes(tree, ""):
        if annotated == commit:
            continue
        try:
            other = repo.get(annotated)
        except (ValueError, pygit2.GitError):
            continue  # a name that is no object id here (pushed by anyone: a server reads it)
        if other is None:  # not at hand: its statements say which tree they judged
            same = _names_tree(
                _note_text(blob, annotated).encode("utf-8", "surrogateescape"), str(wanted)
            )
        else:
            same = isinstance(other, pygit2.Commit) and other.tree_id == wanted
        if same:
            out.append((annotated, _note_text(blob, annotated)))
    return out


def _note_text(blob: pygit2.Blob, commit: str) -> str:
    """A note's text; one a partial clone left out, which git could not fetch (``at_hand``),
    is said, naming it."""
    try:
        return blob.data.decode("utf-8", "surrogateescape")
    except KeyError:  # (pygit2's NotFoundError: not in the object store)
        raise GenstampError(
            f"the note on {commit[:12]} in {REF} is not in this partial clone, and git cannot "
            "fetch it",
            "fetch it (`git fetch` from the remote the clone was made from), then run again",
        ) from None


def at_hand(repo: pygit2.Repository, oid: str, *, blobs: bool = True) -> None:
    """In a partial clone (``git clone --filter=blob:none``, ``tree:0``), have git fetch what
    it left out of the object ``oid`` (a commit, a tree) and of its tree: libgit2 reads what is
    at hand and fetches nothing, so a note would read as none (Y24 04), and a judged commit's
    tree as not in the object store. ``blobs`` False: its trees alone (a blob is fetched when
    it is read, ``facts.blob_bytes``). Elsewhere, nothing to do."""
    if not any(e.name.endswith(".promisor") and e.value == "true" for e in repo.config):
        return
    # (rev-list cannot begin at an object that is not at hand)
    if oid not in repo and fetch(repo, [oid]) is None:
        return
    only = () if blobs else ("--filter=blob:none",)
    for _ in range(4):  # a tree fetched shows what lies below it (a fanned-out notes tree)
        listed = _git(
            Path(repo.path), "rev-list", "--objects", "--no-walk", "--missing=print", *only, oid
        )
        missing = [ln[1:].split()[0] for ln in listed.stdout.splitlines() if ln.startswith("?")]
        if listed.returncode != 0 or not missing or fetch(repo, missing) is None:
            return  # (a fetch that failed would fail again: asked once)


FETCH_SECONDS = 120  # a remote that takes the connection and never answers: the gate goes on
_UNANSWERED: set[str] = set()  # the git dirs whose remote did not answer in time: not asked again


def fetch(repo: pygit2.Repository, oids: Sequence[str]) -> bytes | None:
    """Have git fetch the objects ``oids`` of a partial clone from its promisor remote (git
    fetches an object it is asked for and lacks) and give their bytes (``cat-file --batch``'s
    output; None when git failed or took longer than ``FETCH_SECONDS``, and from then on in
    this process: the gate waits that long once). Never a prompt for a password: a remote
    that needs one the credential helpers lack fails, as it would in CI. Given up, git and
    what it started (its fetch, ssh) are ended, not left running."""
    import os
    import signal

    if repo.path in _UNANSWERED:
        return None
    env = {**os.environ, "GIT_TERMINAL_PROMPT": "0"}
    try:
        proc = subprocess.Popen(
            ["git", "--git-dir", repo.path, "cat-file", "--batch"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=env,
            start_new_session=True,  # its own process group, to end as one
        )
    except OSError:
        return None
    try:
        out, _ = proc.communicate("".join(f"{o}\n" for o in oids).encode(), FETCH_SECONDS)
    except BaseException as exc:  # the time is up, or the user's Ctrl-C
        with contextlib.suppress(OSError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        if not isinstance(exc, subprocess.TimeoutExpired):
            raise
        _UNANSWERED.add(repo.path)
        return None
    return out if proc.returncode == 0 else None


def _names_tree(note: bytes, tree: str) -> bool:
    """Whether a statement of ``note`` (DSSE envelopes, one a line) names ``tree`` at all: the
    notes of commits not at hand worth reading."""
    from genstamp import dsse

    for line in note.splitlines():
        try:
            if tree.encode("ascii") in dsse.from_json(line.decode("utf-8")).payload:
                return True
        except (ValueError, UnicodeDecodeError):
            continue  # not an envelope: the gate says so where it reads the note
    return False


def _notes(tree: pygit2.Tree, prefix: str) -> Iterator[tuple[str, pygit2.Blob]]:
    """Every note of a notes tree, fanned out (``ab/cdef…``) or not: (commit, blob)."""
    for entry in tree:
        name = prefix + (entry.name or "")
        obj = tree[entry.name or ""]
        if isinstance(obj, pygit2.Blob) and len(name) in (40, 64):
            yield name, obj
        elif isinstance(obj, pygit2.Tree) and len(name) < 64:
            yield from _notes(obj, name)


def _entry(tree: pygit2.Tree, name: str) -> pygit2.Object | None:
    try:
        return tree[name]
    except KeyError:
        return None


def union(*texts: str) -> str:
    """Lines of every text, sorted and unique: what ``cat_sort_uniq`` makes of them."""
    lines = {ln for text in texts for ln in text.split("\n") if ln.strip()}
    return "".join(f"{ln}\n" for ln in sorted(lines))


def _git(cwd: Path, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    # bytes as read (a note's or a file's non-UTF-8 bytes, kept as surrogates) written back as
    # they were; git's own output read the same way
    return subprocess.run(
        ["git", *args],
        cwd=cwd,
        input=stdin,
        capture_output=True,
        text=True,
        encoding="utf-8",
        errors="surrogateescape",
        check=False,
    )


def _fail(what: str, proc: subprocess.CompletedProcess[str], remedy: str) -> GenstampError:
    # git's first lines say what failed (its last are advice: `hint:`, "Please make sure you
    # have the correct access rights / and the repository exists.")
    said = [ln.strip() for ln in proc.stderr.splitlines() if ln.strip()]
    why = " ".join([ln for ln in said if not ln.startswith("hint:")][:2]) or "no reason given"
    return GenstampError(f"{what}: {why}", remedy)


def add(workdir: Path, repo: pygit2.Repository, commit: str, lines: Sequence[str]) -> str:
    """Add ``lines`` (envelopes) to the note on ``commit``, keeping what it held."""
    text = union(read(repo, commit), *lines)
    proc = _git(workdir, "notes", f"--ref={REF}", "add", "-f", "-F", "-", commit, stdin=text)
    if proc.returncode != 0:
        raise _fail(f"cannot write the note on {commit[:12]}", proc, "check `git notes` works")
    return text


def _raced(porcelain: str) -> bool:
    """Whether ``git push --porcelain`` leaves room for a lost race, so that fetching, merging
    and pushing again can succeed: the remote's ref moved since it was fetched (``[rejected]``),
    or the remote failed to update it (another push held its lock). Not when a hook of the
    remote declined it or the remote denies it, nor when git printed no status for the ref (no
    connection, no access): pushing again fails again. (The status words are git's own, never
    translated.)"""
    for line in porcelain.splitlines():
        flag, _, rest = line.partition("\t")
        ref, _, summary = rest.partition("\t")
        if flag != "!" or not ref.endswith(f":{REF}"):
            continue
        reason = summary.partition("(")[2].lower()
        return not (
            summary.startswith("[remote rejected]")
            and ("hook declined" in reason or reason.startswith("deny"))
        )
    return False


def publish(workdir: Path, remote: str) -> int:
    """Push ``REF`` to ``remote``, merging the remote's notes first (union), and again when a
    concurrent publish moved it; the number of attempts it took."""
    for attempt in range(1, ATTEMPTS + 1):
        # (the clone's own fetch refspecs not applied: the README's, or refs/notes/*, would
        # update REF itself from the remote, refused as no fast-forward, or forced over the
        # note just added)
        fetched = _git(workdir, "fetch", "-q", "--refmap=", remote, f"+{REF}:{INCOMING}")
        if fetched.returncode == 0:
            merged = _git(
                workdir, "notes", f"--ref={REF}", "merge", "-q", "-s", "cat_sort_uniq", INCOMING
            )
            if merged.returncode != 0:
                raise _fail("cannot merge the remote's notes", merged, "run `git notes merge`")
        else:
            # As ``git ls-remote --exit-code`` says it, not as git's message says it in the
            # user's language: 2, the remote holds no notes (a first publish); 0, a concurrent
            # publish made them since (fetch them again); else the remote failed.
            listed = _git(workdir, "ls-remote", "--exit-code", remote, REF).returncode
            if listed == 0 and attempt < ATTEMPTS:
                continue
            if listed != 2:
                raise _fail(f"cannot fetch {REF} from {remote}", fetched, "check the remote")
        pushed = _git(workdir, "push", "--porcelain", "-q", remote, f"{REF}:{REF}")
        if pushed.returncode == 0:
            return attempt
        if not _raced(pushed.stdout):
            raise _fail(
                f"{remote} refused {REF}",
                pushed,
                f"see the remote's reason; publish to a remote that accepts pushes of {REF}",
            )
        # A concurrent publish moved the ref (a non-fast-forward), or holds its lock on the
        # remote as we push: fetch, merge and push again, a little later each time.
        time.sleep(random.uniform(0, 0.2 * attempt))
    raise _fail(
        f"cannot push {REF} to {remote} in {ATTEMPTS} attempts",
        pushed,
        "publish again (other jobs may be publishing at the same time)",
    )
