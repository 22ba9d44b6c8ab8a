"""Evidence that travels: ``genstamp attest`` turns an accepted verdict into a signed in-toto
statement, and ``verify --attestation``/``--from-notes`` judge a commit from statements alone.

Gathering lives here (files, signatures, the suite listed from the tree); the decision is
``rules.decide_attestations``, pure, with the same merge of parts as local evidence.
"""

from __future__ import annotations

import json
import os
import posixpath
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pygit2

from genstamp import __version__, config, coverage, dsse, evidence, signing, statement
from genstamp.errors import GenstampError
from genstamp.facts import rev_tree, testable, tree_suites
from genstamp.repo import Checkout
from genstamp.rules import (
    AttestationFacts,
    Attested,
    Target,
    Verdict,
    decide_attestations,
    read_audit,
    settled,
)
from genstamp.typedtuple import NamedTuple

WORKSPACE = "warm"  # a reused checkout; a clean-room run would say "clean-room"
MAX_BYTES = 64 * 1024 * 1024  # an attestation file larger than this is refused unread
MOST_SIGNATURES = 16  # distinct signatures of one envelope genstamp checks
MOST_CHECKS = 256  # distinct signatures checked in one judgment (each an ssh-keygen)


class Made(NamedTuple):
    """What ``attest`` produced: the envelope (None when the gate refused) and the verdict."""

    envelope: dsse.Envelope | None
    verdict: Verdict
    statement: dict[str, Any] | None


def parse_part(text: str) -> tuple[int, int]:
    """``I/N`` (pytest-split's ``--group I --splits N``), 1 <= I <= N."""
    index, _, count = text.partition("/")
    try:
        part = (int(index), int(count))
    except ValueError:
        part = (0, 0)
    if not 1 <= part[0] <= part[1] or part[1] > statement.MOST_PARTS:
        raise GenstampError(
            f"--part {text!r} is not I/N (N at most {statement.MOST_PARTS})",
            "give the group and the splits: 2/3",
        )
    return part


def commit_of(repo: pygit2.Repository, rev: str) -> str:
    try:
        return str(repo.revparse_single(rev).peel(pygit2.Commit).id)
    except (KeyError, ValueError, pygit2.GitError, pygit2.InvalidSpecError):
        raise GenstampError(f"{rev!r} does not name a commit", "pass a commit to --rev") from None


def attest(
    checkout: Checkout,
    rev: str = "HEAD",
    *,
    part: tuple[int, int] | None = None,
    sign: bool = False,
    url: str = "",
) -> Made:
    """Judge ``rev`` as ``genstamp verify --rev`` does; when accepted (a declared part may
    leave out what the other parts run), the statement of it in a DSSE envelope."""
    from genstamp.verify import verify

    commit = commit_of(checkout.repo, rev)
    target = rev_tree(checkout, commit, rev)
    if not testable(checkout.repo, target.tree):
        raise GenstampError(
            f"tree {target.tree[:12]} holds no Python project and no tests: nothing to attest",
            "push it as it is: the pre-receive hook and verify --from-notes ask no attestation "
            "of such a tree",
        )
    # judged on a run of its tree, not on a remembered verdict: the statement says what ran
    verdict = verify(checkout, revs=[commit], labels={commit: rev}, runs=True)
    waived = {"partial-run"} if part else set()
    if any(f.rule not in waived for f in verdict.failures):
        if verify(checkout, revs=[commit], labels={commit: rev}).ok:
            # accepted before, on a run no longer kept; the newest run does not stand
            raise _unrecorded(target.tree, verdict.failures[0].line())
        return Made(None, verdict, None)
    # a branch tested, then left: the run of the ended generation that vouches for its tree
    judged = verdict
    if verdict.merge is None and len(verdict.vouching) == 1:
        judged = verdict.vouching[0]
    merge = judged.merge
    if merge is None or judged.counts is None:
        raise _unrecorded(target.tree)
    outcomes = merge.outcomes()
    files = sorted({f for p in merge.parts for f in p.coverage.files})
    ran = coverage.new(
        files,
        sorted({*outcomes, *merge.unran}),
        outcomes,
        merge.unran,
        errors=[e for p in merge.parts for e in p.coverage.errors],
        # folders a conftest skipped whole: their files ran, skipped (not "not collected")
        skipped=[f for p in merge.parts for f in p.coverage.skipped],
        ignored=[e for p in merge.parts for e in p.coverage.ignored],
    )
    facts = statement.Facts(
        tree=target.tree,
        commit=commit,
        coverage=ran,
        generation=judged.generation or "",
        part=part,
        suites=tuple(
            {"root": s.label, "files": len(s.files), "digest": s.digest} for s in merge.suites
        ),
        audit=_audit_summary(Path(judged.evidence)),
        workspace=WORKSPACE,
        genstamp=__version__,
        configuration=_configuration(checkout.repo, target.tree, merge),
        url=url or _ci_url(os.environ),
        clean_room=_clean_room(checkout, target.tree),
    )
    made = statement.build(facts)
    payload = statement.canonical(made)
    signatures: tuple[dsse.Signature, ...] = ()
    if sign:
        key = signing.signing_key(checkout.workdir)
        signed = signing.sign(dsse.pae(dsse.PAYLOAD_TYPE, payload), key)
        signatures = (dsse.Signature(signed.fingerprint, signed.signature),)
    return Made(dsse.Envelope(dsse.PAYLOAD_TYPE, payload, signatures), verdict, made)


def _unrecorded(tree: str, newest: str = "") -> GenstampError:
    """No run of ``tree`` that the gate accepts records what ran; ``newest``: why its newest
    run does not stand, where it was accepted earlier on a run no longer kept."""
    if newest:
        return GenstampError(
            f"tree {tree[:12]} was accepted earlier, on a run no longer kept, and its newest run"
            f" does not stand ({newest})",
            "run the whole suite again with pytest and genstamp, then attest",
        )
    return GenstampError(
        f"no evidence of tree {tree[:12]} records what ran (it was accepted earlier, "
        "or by a runner without coverage)",
        "rerun the tests with pytest and genstamp, then attest",
    )


def _audit_summary(path: Path) -> dict[str, Any]:
    """What the loaded-code audit found, in counts: the gate judged it before attesting."""
    try:
        loaded, _ = read_audit(evidence.read_report(path).properties)
    except GenstampError:
        loaded = None
    if loaded is None:
        return {"recorded": False}
    kinds: dict[str, int] = {}
    for flag in loaded.flags:
        kinds[flag.kind] = kinds.get(flag.kind, 0) + 1
    return {
        "recorded": True,
        "packages": list(loaded.packages),
        "files": len(loaded.loaded),
        "flags": kinds,
        "notes": list(loaded.notes),
    }


def _configuration(
    repo: pygit2.Repository, tree_id: str, merge: coverage.Merge
) -> tuple[dict[str, Any], ...]:
    """ResourceDescriptors: genstamp itself, and each suite's pytest configuration file by
    its blob in the tested tree."""
    out: list[dict[str, Any]] = [{"name": "genstamp", "uri": f"pkg:pypi/genstamp@{__version__}"}]
    tree = repo[tree_id]
    for s in merge.suites:
        source = s.config.source
        if not source:
            continue
        try:
            blob = tree[source]  # type: ignore[index]
        except (KeyError, TypeError):
            continue
        out.append({"name": source, "digest": {"gitBlob": str(blob.id)}})
    return tuple(out)


def _ci_url(environ: Mapping[str, str]) -> str:
    """The CI run's address when GitHub Actions ran it."""
    server, repo, run = (
        environ.get(k, "") for k in ("GITHUB_SERVER_URL", "GITHUB_REPOSITORY", "GITHUB_RUN_ID")
    )
    return f"{server}/{repo}/actions/runs/{run}" if server and repo and run else ""


# -- reading and judging ------------------------------------------------------------------------


class Checks:
    """The signature checks of one judgment (each an ``ssh-keygen``): the same signature of
    the same statement is checked once, and no more than ``MOST_CHECKS`` in all, as the lines
    of a note anyone can push are many (Y24 10: 200 lines of 16 signatures, 26 s)."""

    def __init__(self, revoked: Path | None = None) -> None:
        self.done: dict[tuple[bytes, bytes, Path], signing.Checked] = {}
        self.revoked = revoked  # git's gpg.ssh.revocationFile

    def verify(self, message: bytes, sig: bytes, allowed: Path) -> signing.Checked:
        key = (message, sig, allowed)
        if key not in self.done:
            if len(self.done) >= MOST_CHECKS:
                return signing.Checked(
                    "", f"not checked: genstamp checks at most {MOST_CHECKS} signatures at once"
                )
            self.done[key] = signing.verify(message, sig, allowed, self.revoked)
        return self.done[key]


def read_envelope(
    label: str, line: str, allowed: Path | None, checks: Checks | None = None
) -> Attested:
    """One envelope (a line of a JSON Lines bundle) as the gate sees it."""
    try:
        envelope = dsse.from_json(line)
    except ValueError as exc:
        return Attested(label, problem=f"not a DSSE envelope ({exc})")
    if envelope.payload_type != dsse.PAYLOAD_TYPE:
        return Attested(
            label, problem=f"payloadType {envelope.payload_type!r}, not {dsse.PAYLOAD_TYPE}"
        )
    try:
        attested = statement.read(envelope.payload, label)
    except statement.StatementError as exc:
        return Attested(label, problem=f"not a genstamp statement: {exc}")
    attested = attested._replace(signed=bool(envelope.signatures))
    if not envelope.signatures or allowed is None:
        return attested
    message = dsse.pae(envelope.payload_type, envelope.payload)
    problem = ""
    # one ssh-keygen each: the same signature twice is checked once, and no more than a few
    # (an envelope anyone can push holds 150,000 in 64 MiB: V24 24, minutes of checking)
    signatures = list(dict.fromkeys(envelope.signatures))
    if len(signatures) > MOST_SIGNATURES:
        return attested._replace(
            bad_signature=f"it holds {len(signatures)} signatures; genstamp checks at most "
            f"{MOST_SIGNATURES} (DSSE envelopes of one signer, or a few, hold one each)"
        )
    checks = checks if checks is not None else Checks()
    for sig in signatures:
        checked = checks.verify(message, sig.sig, allowed)
        if checked.signer and sig.keyid and sig.keyid != checked.fingerprint:
            # keyid is a hint, never trusted: but one naming another key is an edit
            problem = f"its keyid {sig.keyid} is not the key that signed ({checked.fingerprint})"
        elif checked.signer:
            return attested._replace(signer=checked.signer)
        else:
            problem = checked.problem
    return attested._replace(bad_signature=problem)


def bundle_lines(label: str, text: str) -> list[tuple[str, str]]:
    """(label, envelope line) for each envelope of a file or note: one JSON object, or JSON
    Lines (an in-toto bundle) of several."""
    stripped = text.strip()
    if not stripped:
        return []
    if "\n" not in stripped:
        return [(label, stripped)]
    lines = [ln for ln in stripped.split("\n") if ln.strip()]
    if len(lines) == 1:
        return [(label, lines[0])]
    if lines[0].strip() == "{":  # one pretty-printed envelope
        return [(label, stripped)]
    return [(f"{label}:{n}", ln) for n, ln in enumerate(lines, 1)]


def read_file(path: Path) -> str:
    """The text of an attestation (or a summary), read to at most ``MAX_BYTES``: a size the
    file system gives (a device, ``/dev/zero``, or a pipe, ``<(cat a.json)``, says 0) does not
    bound the read."""
    over = GenstampError(f"{path} is over {MAX_BYTES >> 20} MiB", "pass an attestation")
    try:
        if path.stat().st_size > MAX_BYTES:
            raise over
        with path.open("rb") as fh:
            data = fh.read(MAX_BYTES + 1)
        if len(data) > MAX_BYTES:
            raise over
        return _decoded(data)
    except OSError as exc:
        raise GenstampError(
            f"cannot read the attestation {path}: {exc.strerror or exc}", "pass a file that exists"
        ) from None


def _decoded(data: bytes) -> str:
    """A JSON file's text: UTF-8, as genstamp writes it; JSON's other encodings, UTF-16 and
    UTF-32, as Windows tools rewrite it (PowerShell's ``genstamp attest > a.json``), and any
    byte order mark such a tool puts first, are read as ``json.loads`` reads them. The
    envelope's signatures cover its payload, not the file's encoding."""
    encoding = json.detect_encoding(data)
    if encoding.startswith("utf-8"):  # (utf-8-sig: after a byte order mark)
        return data.decode(encoding, errors="surrogateescape")
    return data.decode(encoding, errors="replace")


def signers_file(settings: config.Config, cwd: Path | None) -> Path | None:
    """The allowed signers: the project's ``attestation-signers``, else git's own
    ``gpg.ssh.allowedSignersFile`` (checked when present, required only by the former)."""
    if settings.attestation_signers is not None:
        return settings.attestation_signers
    if cwd is None:
        return None
    return signing.config_path(cwd, "gpg.ssh.allowedSignersFile")


def gather(
    repo: pygit2.Repository,
    targets: Sequence[Target],
    sources: Sequence[tuple[str, str]],
    settings: config.Config,
    *,
    source: str,
    allowed: Path | None,
    roots: Mapping[str, Sequence[str]] | None = None,
    summary: str | None = None,
    grown: bool = False,
    revoked: Path | None = None,
) -> AttestationFacts:
    """The facts of ``sources`` ((label, text) of each file or note) about ``targets``;
    ``roots``: each target tree's declared suite folders; ``grown``: all of them read from
    git notes; ``revoked``: git's revocation file (``signing.revocation_file``)."""
    checks = Checks(revoked)
    attested = tuple(
        read_envelope(label, line, allowed, checks)
        for name, text in sources
        for label, line in bundle_lines(name, text)
    )
    suites = {t.tree: tree_suites(repo, t.tree, (roots or {}).get(t.tree, ())) for t in targets}
    return AttestationFacts(
        tuple(targets), attested, suites, source, str(allowed or ""), summary, grown
    )


_GIT_S = Path("(git's gpg.ssh.revocationFile)")  # ``verify_attestations``' default


def verify_attestations(
    checkout: Checkout,
    revs: Sequence[str],
    *,
    files: Sequence[Path] = (),
    from_notes: bool = False,
    summary: Path | None = None,
    settings: config.Config | None = None,
    signers_from: str | None = None,
    revoked: Path | None = _GIT_S,
) -> tuple[Verdict, AttestationFacts]:
    """Judge each of ``revs`` from attestations alone: files given, or the notes on them.
    ``signers_from``: a revision (the branch a change would merge into) whose own allowed
    signers file decides whose signatures count, so that the change judged cannot add a key
    (nor take one out of a revocation file it holds: ``_revocation_at``); ``revoked``: the
    revocation file (git's ``gpg.ssh.revocationFile`` by default)."""
    from genstamp import notes

    if settings is None:
        settings = config.load(checkout.workdir)
    targets = [rev_tree(checkout, rev) for rev in revs or ["HEAD"]]
    settings = _as_judged(checkout, settings, [t.tree for t in targets])
    if signers_from is not None:
        named = "".join(c if c.isalnum() or c in "._~^-" else "_" for c in signers_from)[:40]
        with tempfile.TemporaryDirectory(prefix=f"genstamp-signers-of-{named}-") as tmp:
            trusted, rel = _signers_at(checkout, signers_from, Path(tmp))
            revocation = _revocation_at(checkout, signers_from, Path(tmp))
            verdict, facts = verify_attestations(
                checkout,
                revs,
                files=files,
                from_notes=from_notes,
                summary=summary,
                settings=settings._replace(attestation_signers=trusted),
                revoked=revocation[0] if revocation is not None else None,
            )
        # named as the revision holds it, not as the copy ssh-keygen read (gone now; Y24 09)
        verdict = _named(verdict, str(trusted), f"{signers_from}:{rel}")
        if revocation is not None:
            verdict = _named(verdict, str(revocation[0]), revocation[1])
        return verdict, facts
    sources = [(str(p), read_file(p)) for p in files]
    where = ", ".join(str(p) for p in files)
    if from_notes:
        for rev in revs or ["HEAD"]:
            commit = commit_of(checkout.repo, rev)
            for annotated, note in notes.of_tree(checkout.repo, commit):
                sources.append((f"{notes.REF} on {annotated[:12]}", note))
        where = f"{where + ' and ' if where else ''}{notes.REF}"
    if not where:  # nothing named: neither a file nor the notes (which only --from-notes reads)
        where = f"(no source given: --attestation FILE, or --from-notes for {notes.REF})"
    text = read_file(summary) if summary is not None else None
    # A commit of no Python project and no tests has nothing to attest, as ``verify --rev``
    # accepts it (a published site: gh-pages); the attestations judge the others.
    untestable = tuple(
        dict.fromkeys(t.tree for t in targets if not testable(checkout.repo, t.tree))
    )
    judged = [t for t in targets if t.tree not in untestable]
    facts = gather(
        checkout.repo,
        judged,
        sources,
        settings,
        source=where,
        allowed=signers_file(settings, checkout.workdir),
        roots={t.tree: _suites_of(checkout, settings, t.tree) for t in judged},
        summary=text,
        grown=from_notes and not files,
        revoked=signing.revocation_file(checkout.workdir) if revoked is _GIT_S else revoked,
    )
    if not judged:
        return Verdict((), "", None, None, tuple(targets), None, nothing_to_test=untestable), facts
    # what stands for each tree (``settled``) is what the verdict, its line and --json speak of
    verdict = decide_attestations(facts, settings)
    return verdict._replace(nothing_to_test=untestable), settled(facts, settings)


def _named(verdict: Verdict, path: str, name: str) -> Verdict:
    """``verdict`` with ``path`` called ``name`` in what its failures say."""
    return verdict._replace(
        failures=tuple(
            f._replace(
                message=f.message.replace(path, name),
                items=tuple(i.replace(path, name) for i in f.items),
            )
            for f in verdict.failures
        )
    )


def _signers_at(checkout: Checkout, rev: str, folder: Path) -> tuple[Path, str]:
    """The allowed signers file that ``rev`` declares (its pyproject's ``attestation-signers``)
    as ``rev`` holds it, copied into ``folder`` for ssh-keygen to read, and its path in
    ``rev``."""
    from genstamp.facts import committed_settings

    tree = rev_tree(checkout, rev, option="--signers-from").tree
    held = committed_settings(checkout, tree)
    declared = held.attestation_signers if held is not None else None
    remedy = (
        "give --signers-from a revision whose [tool.genstamp] attestation-signers names the"
        " allowed signers file it holds (the branch the change would merge into)"
    )
    if declared is None:
        raise GenstampError(f"{rev} declares no attestation-signers", remedy)
    try:
        rel = posixpath.normpath(declared.relative_to(checkout.workdir).as_posix())
    except ValueError:  # an absolute path: no revision holds it
        raise GenstampError(f"{rev} names {declared}, outside the repository", remedy) from None
    found = checkout.repo.get(tree)
    held_at = _held(checkout.repo, found, rel, rev) if isinstance(found, pygit2.Tree) else None
    if held_at is None:
        raise GenstampError(f"{rev} holds no allowed signers file at {rel}", remedy)
    if isinstance(held_at, str):
        raise GenstampError(f"{rev} holds {rel} {held_at}", remedy)
    blob, rel = held_at
    path = folder / posixpath.basename(rel)
    path.write_bytes(_bytes_of(checkout.repo, blob, rev, rel))
    return path, rel


def _revocation_at(checkout: Checkout, rev: str, folder: Path) -> tuple[Path, str] | None:
    """git's ``gpg.ssh.revocationFile`` for a judgment whose signers ``rev`` decides, and how
    to name it: a path of the repository as ``rev`` holds it (the change judged may have
    dropped its key from the file), copied into ``folder``; else as git reads it."""
    path = signing.revocation_file(checkout.workdir)
    if path is None:
        return None
    try:
        rel = posixpath.normpath(path.relative_to(checkout.workdir).as_posix())
    except ValueError:
        rel = ".."
    if rel == ".." or rel.startswith("../"):
        return path, str(path)  # (outside the repository: no revision holds it)
    tree = checkout.repo.get(rev_tree(checkout, rev, option="--signers-from").tree)
    found = _held(checkout.repo, tree, rel, rev) if isinstance(tree, pygit2.Tree) else None
    if isinstance(found, str):  # (the work tree's copy is the change's: never read instead)
        raise GenstampError(
            f"{rev} holds the revocation file {rel} {found}",
            "keep gpg.ssh.revocationFile in the repository, or name a file outside it by its"
            " absolute path",
        )
    if found is None:
        return path, str(path)
    copy = folder / ("revoked-" + posixpath.basename(found[1]))
    copy.write_bytes(_bytes_of(checkout.repo, found[0], rev, found[1]))
    return copy, f"{rev}:{found[1]}"


def _bytes_of(repo: pygit2.Repository, blob: pygit2.Blob, rev: str, rel: str) -> bytes:
    """The bytes of the file ``rel`` that ``rev`` holds (``blob``), fetched as git fetches
    them where a partial clone left them out."""
    from genstamp.facts import blob_bytes

    data = blob_bytes(repo, blob)
    if data is None:
        raise GenstampError(
            f"{rev}'s {rel} is not in this partial clone, and git cannot fetch it",
            "let git reach the clone's remote (git fetch), or judge in a full clone",
        )
    return data


def _held(
    repo: pygit2.Repository, tree: pygit2.Tree, rel: str, rev: str
) -> tuple[pygit2.Blob, str] | str | None:
    """The file ``tree`` holds at ``rel`` and its path, the symbolic links the tree holds on
    the way followed within it, as a checkout reads them; None where it holds none there, or
    why not (a link out of the tree, a loop)."""
    parts = [p for p in rel.split("/") if p]
    done: list[str] = []
    hops = 0
    while parts:
        name = parts.pop(0)
        path = "/".join([*done, name])
        try:
            entry = tree[path]
        except (KeyError, ValueError, pygit2.GitError):
            return None
        if isinstance(entry, pygit2.Blob) and entry.filemode == pygit2.enums.FileMode.LINK:
            hops += 1
            target = _bytes_of(repo, entry, rev, path).decode("utf-8", "surrogateescape")
            joined = posixpath.normpath(posixpath.join("/".join(done), target))
            if target.startswith("/") or joined == ".." or joined.startswith("../"):
                return f"through a symbolic link to {target}, outside the repository"
            if hops > 16:
                return "through a loop of symbolic links"
            parts = [p for p in joined.split("/") if p not in ("", ".")] + parts
            done = []
            continue
        if not parts:
            return (entry, path) if isinstance(entry, pygit2.Blob) else None
        if not isinstance(entry, pygit2.Tree):
            return None
        done.append(name)
    return None


def _as_judged(checkout: Checkout, settings: config.Config, trees: Sequence[str]) -> config.Config:
    """``settings`` held to what the judged trees hold themselves, as ``verify`` holds each
    tree: no more lenient than any of them (``allow-partial``, ``require-clean-room``); each
    tree's suites are its own (``_suites_of``)."""
    from genstamp.verify import as_committed

    for tree in trees:
        settings = as_committed(checkout, settings, tree)
    return settings


def _suites_of(checkout: Checkout, settings: config.Config, tree: str) -> tuple[str, ...]:
    """The suite folders ``tree`` declares in its own ``pyproject.toml`` (whichever other
    trees are judged with it); the work tree's settings' for a tree not in the object store."""
    from genstamp.facts import committed_settings

    held = committed_settings(checkout, tree)
    return tuple(held.suites if held is not None else settings.suites)


def attestations_json(facts: AttestationFacts) -> list[dict[str, Any]]:
    """What ``verify --json`` says of each attestation it judged: where it came from, what it
    attests, its evidence digest (the sha256 subject) and who signed it."""
    return [
        {
            "source": a.label,
            "readable": not a.problem,
            "tree": a.tree or None,
            "commit": a.commit or None,
            "digest": a.digest or None,
            "part": f"{a.part[0]}/{a.part[1]}" if a.part else None,
            "result": a.result or None,
            "signer": a.signer or None,
        }
        for a in facts.attested
    ]


def note_files(checkout: Checkout, paths: Sequence[Path]) -> list[tuple[Path, str]]:
    """Add the envelopes of each file to the note on the commit each attests (refusing a file
    that holds anything else); (file, commit) for each note written."""
    from genstamp import notes

    done = []
    for path in paths:
        by_commit: dict[str, list[str]] = {}
        envelopes = bundle_lines(str(path), read_file(path))
        if not envelopes:  # (an attestation the gate refused never was written: `attest > a`)
            raise GenstampError(f"{path} is empty", "publish what `genstamp attest` wrote")
        for label, line in envelopes:
            found = read_envelope(label, line, None)
            if found.problem:
                raise GenstampError(f"{label}: {found.problem}", "publish genstamp attestations")
            # one line in the note, however the file lays it out (a pretty-printed envelope:
            # the signatures cover its payload, not its spacing)
            compact = json.dumps(json.loads(line), separators=(",", ":"), ensure_ascii=False)
            by_commit.setdefault(found.commit, []).append(compact)
        for commit, lines in by_commit.items():
            notes.add(checkout.workdir, checkout.repo, commit, lines)
            done.append((path, commit))
    return done


def accepted_line(verdict: Verdict, facts: AttestationFacts) -> str:
    """What an accepted verdict from attestations says, in one line."""
    c = verdict.counts
    counts = f"{c.passed} passed, {c.skipped - c.xfailed - c.xpassed} skipped, " if c else ""
    merge = verdict.merge
    parts = f", {len(merge.parts)} parts merged" if merge and len(merge.parts) > 1 else ""
    signers = sorted({a.signer for a in facts.attested if a.signer})
    signed = f", signed by {', '.join(signers)}" if signers else ", unsigned"
    if not signers and any(a.signed for a in facts.attested):
        # (no allowed signers file here: attestation-signers, gpg.ssh.allowedSignersFile)
        signed = ", signed, the signatures not checked (no allowed signers file)"
    nothing = ""
    if verdict.nothing_to_test:
        held = ", ".join(sorted({t[:12] for t in verdict.nothing_to_test}))
        nothing = f"tree {held} holds no Python project and no tests: nothing to attest"
        if not facts.targets:
            return f"accepted: {nothing}"
        nothing = f"; {nothing}"
    trees = ", ".join(sorted({t.tree[:12] for t in facts.targets}))
    return f"attestations accepted: {counts}tree {trees}{parts}{signed}{nothing}"


def _clean_room(checkout: Checkout, tree: str) -> dict[str, Any] | None:
    """What the clean-room run of ``tree`` kept here says (None: none, or none readable): the
    attestation of a warm run carries whether a clean checkout agreed."""
    from genstamp import cleanrecord

    try:
        record = cleanrecord.read(checkout.gitdir, tree)
    except GenstampError:
        return None
    if record is None:
        return None
    return {
        "ok": record.ok,
        "complete": record.complete,
        "narrowed": record.narrowed,
        "counts": dict(record.counts),
        "when": record.when,
        "install": record.install,
    }
