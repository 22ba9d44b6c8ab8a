"""Evidence that travels (issue 15): attest → verify from the file in a fresh clone.

One shared world per session (built once across xdist workers): an origin, three clones
standing for three CI machines, each with its own generation and SSH key, each running one
pytest-split group and attesting it as a part; the first also runs the whole suite and attests
that. Every refusal has an accepted control beside it; keys are throwaway, made by the real
ssh-keygen; git, pytest and ssh-keygen are real.
"""

from __future__ import annotations

import base64
import json
import subprocess
import sys
from pathlib import Path
from typing import Any, NamedTuple

import pytest
from conftest import (
    RunGenstamp,
    _locked,
    _session_dir,
    commit_all,
    git,
    init_repo,
    run_genstamp,
    run_pytest,
    subprocess_env,
)

from genstamp import binding, dsse, signing, statement

pytestmark = pytest.mark.e2e

SUITE = {
    f"tests/test_{i}.py": f"def test_x{i}():\n    pass\n\n\ndef test_y{i}():\n    pass\n"
    for i in range(6)
}
TESTS = 12
PYPROJECT = (
    '[tool.pytest.ini_options]\ntestpaths = ["tests"]\n\n'
    '[tool.genstamp]\nattestation-signers = "allowed_signers"\n'
)


class World(NamedTuple):
    root: Path
    origin: Path  # a bare repository: the shared remote
    clones: tuple[Path, ...]  # the three machines
    keys: Path  # ci1, ci2, ci3 (allowed) and rogue (not), ed25519, no passphrase
    parts: tuple[Path, ...]  # part-1.json … part-3.json, each signed by its machine's key
    full: Path  # the whole suite in one run, signed by ci1
    unsigned: Path  # the same, unsigned
    commit: str


def ok(proc: subprocess.CompletedProcess[str]) -> str:
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc.stdout


def keygen(keys: Path, name: str) -> str:
    subprocess.run(
        ["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", name, "-f", str(keys / name)],
        check=True,
    )
    return (keys / f"{name}.pub").read_text().split(" ", 2)[1]


def machine(clone: Path, key: Path) -> None:
    git(clone, "config", "gpg.format", "ssh")
    git(clone, "config", "user.signingkey", str(key))
    ok(run_genstamp(clone, "stamp"))


def build(root: Path) -> World:
    keys = root / "keys"
    keys.mkdir(parents=True)
    allowed = ""
    for name in ("ci1", "ci2", "ci3", "rogue"):
        blob = keygen(keys, name)
        if name != "rogue":
            allowed += f'{name}@example namespaces="genstamp" ssh-ed25519 {blob}\n'
    seed = init_repo(root / "seed")
    for rel, text in SUITE.items():
        (seed / rel).parent.mkdir(parents=True, exist_ok=True)
        (seed / rel).write_text(text)
    (seed / "pyproject.toml").write_text(PYPROJECT)
    (seed / "allowed_signers").write_text(allowed)
    (seed / ".gitignore").write_text("__pycache__/\n")
    commit = commit_all(seed, "a suite of 12 tests")
    origin = root / "origin.git"
    git(root, "clone", "-q", "--bare", str(seed), str(origin))
    clones, parts = [], []
    for i in (1, 2, 3):
        clone = root / f"ci{i}"
        git(root, "clone", "-q", str(origin), str(clone))
        machine(clone, keys / f"ci{i}")
        proc = run_pytest(clone, "-p", "no:cacheprovider", "--splits", "3", "--group", str(i))
        ok(proc)
        part = root / f"part-{i}.json"
        ok(run_genstamp(clone, "attest", "--part", f"{i}/3", "--sign", "-o", str(part)))
        clones.append(clone)
        parts.append(part)
    ok(run_pytest(clones[0], "-p", "no:cacheprovider"))
    ok(run_genstamp(clones[0], "attest", "--sign", "-o", str(root / "full.json")))
    ok(run_genstamp(clones[0], "attest", "-o", str(root / "unsigned.json")))
    return World(
        root,
        origin,
        tuple(clones),
        keys,
        tuple(parts),
        root / "full.json",
        root / "unsigned.json",
        commit,
    )


def shared_world(tmp_path_factory: pytest.TempPathFactory) -> World:
    """The world, built once per session, whichever xdist worker asks first."""
    shared = _session_dir(tmp_path_factory) / "attest-world"
    with _locked(_session_dir(tmp_path_factory) / "attest-world.lock"):
        done = shared / "commit"
        if not done.is_file():
            made = build(shared)
            done.write_text(made.commit)
    return World(
        shared,
        shared / "origin.git",
        tuple(shared / f"ci{i}" for i in (1, 2, 3)),
        shared / "keys",
        tuple(shared / f"part-{i}.json" for i in (1, 2, 3)),
        shared / "full.json",
        shared / "unsigned.json",
        done.read_text(),
    )


@pytest.fixture(scope="session")
def world(tmp_path_factory: pytest.TempPathFactory) -> World:
    return shared_world(tmp_path_factory)


def fresh_clone(world: World, where: Path) -> Path:
    """A machine that ran nothing: a clone of the origin, no generation, no evidence."""
    git(where.parent, "clone", "-q", str(world.origin), str(where))
    return where


@pytest.fixture
def judge(world: World, tmp_path: Path) -> Path:
    return fresh_clone(world, tmp_path / "judge")


def verdict(
    genstamp: RunGenstamp, clone: Path, *args: str | Path, rev: str = "HEAD"
) -> tuple[int, dict[str, Any]]:
    code, out, err = genstamp("-C", clone, "verify", "--json", "--rev", rev, *args)
    assert code in (0, 1), err
    return code, json.loads(out)


def rules(data: dict[str, Any]) -> list[str]:
    return [f["rule"] for f in data["failures"]]


def message(data: dict[str, Any], rule: str) -> str:
    return "\n".join(f["message"] for f in data["failures"] if f["rule"] == rule)


def envelope(path: Path) -> dict[str, Any]:
    return json.loads(path.read_text())  # type: ignore[no-any-return]


def payload(path: Path) -> dict[str, Any]:
    return json.loads(base64.b64decode(envelope(path)["payload"]))  # type: ignore[no-any-return]


def rewrite(path: Path, out: Path, change: Any, *, keep_signatures: bool = True) -> Path:
    """The envelope at ``path`` with ``change(statement)`` applied to its payload."""
    env = envelope(path)
    body = payload(path)
    change(body)
    env["payload"] = base64.b64encode(statement.canonical(body)).decode()
    if not keep_signatures:
        env["signatures"] = []
    out.write_text(json.dumps(env))
    return out


# -- the shapes: in-toto Statement v1, test-result v0.1, DSSE -----------------------------------


def test_the_statement_has_the_specifications_fields(world: World) -> None:
    env = envelope(world.full)
    assert set(env) == {"payload", "payloadType", "signatures"}
    assert env["payloadType"] == "application/vnd.in-toto+json"
    (sig,) = env["signatures"]
    assert set(sig) == {"keyid", "sig"}
    listed = subprocess.run(
        ["ssh-keygen", "-l", "-f", str(world.keys / "ci1.pub")], capture_output=True, text=True
    )
    assert sig["keyid"] == listed.stdout.split()[1]  # the signing key's fingerprint
    assert base64.b64decode(sig["sig"]).startswith(b"-----BEGIN SSH SIGNATURE-----")
    body = payload(world.full)
    assert set(body) == {"_type", "subject", "predicateType", "predicate"}
    assert body["_type"] == "https://in-toto.io/Statement/v1"
    assert body["predicateType"] == "https://in-toto.io/attestation/test-result/v0.1"
    # every subject has a digest; the sha256 one first (SHA-2-only verifiers), git ids apart
    subjects = body["subject"]
    assert all(isinstance(s["digest"], dict) and s["digest"] for s in subjects)
    assert list(subjects[0]["digest"]) == ["sha256"]
    assert [list(s["digest"]) for s in subjects[1:]] == [["gitTree"], ["gitCommit"]]
    tree = git(world.clones[0], "rev-parse", "HEAD^{tree}")
    assert subjects[1]["digest"]["gitTree"] == tree
    assert subjects[2]["digest"]["gitCommit"] == world.commit
    pred = body["predicate"]
    assert pred["result"] in ("PASSED", "WARNED", "FAILED") and pred["result"] == "PASSED"
    assert isinstance(pred["configuration"], list) and pred["configuration"]
    for descriptor in pred["configuration"]:  # ResourceDescriptor: uri, digest or content
        assert {"uri", "digest", "content"} & set(descriptor)
    for key in ("passedTests", "warnedTests", "failedTests"):
        assert all(isinstance(name, str) for name in pred[key])
    assert len(pred["passedTests"]) == TESTS and pred["failedTests"] == []
    ext = pred["genstamp"]  # the documented extension field, versioned
    assert ext["version"] == statement.EXTENSION_VERSION
    assert {"tree", "commit", "generation", "part", "suites", "coverage", "audit"} <= set(ext)
    assert ext["workspace"] == "warm" and ext["part"] is None
    assert ext["cleanRoom"] is None  # no clean-room run of this tree was kept in that clone
    assert statement.shape_problems(body) == []
    assert subjects[0]["digest"]["sha256"] == statement.evidence_digest(pred)


def test_a_kept_clean_room_run_of_the_tree_travels_in_the_statement(repo: Path) -> None:
    from genstamp import attest, cleanrecord
    from genstamp.repo import open_checkout

    checkout = open_checkout(repo)
    tree = "ab" * 20
    assert attest._clean_room(checkout, tree) is None
    verdict = {"tested_tree": tree, "tests": {"tests": 2, "passed": 2}}
    record = cleanrecord.new(
        tree, verdict, {"t.py::a": "passed", "t.py::b": "passed"}, narrowed=False, install="pip"
    )
    cleanrecord.write(checkout.gitdir, record)
    kept = attest._clean_room(checkout, tree)
    assert kept == {
        "ok": True,
        "complete": False,
        "narrowed": False,
        "counts": {"tests": 2, "passed": 2, "failed": 0, "errors": 0, "skipped": 0},
        "when": record.when,
        "install": "pip",
    }
    assert attest._clean_room(checkout, "cd" * 20) is None  # another tree's run says nothing


def test_a_folder_a_conftest_skips_whole_travels_as_skipped(
    repo: Path, tmp_path: Path, genstamp: RunGenstamp
) -> None:
    """``tests/opt/conftest.py`` skips its folder (``pytest.importorskip`` of what is not
    installed): its files ran, skipped, and the local gate accepts the run. The attestation
    says so too (its coverage's ``skipped``), so the attested run is whole where it is judged,
    not missing ``tests/opt/test_opt.py``."""
    (repo / "tests" / "opt").mkdir(parents=True)
    (repo / "tests" / "test_a.py").write_text("def test_a():\n    pass\n")
    (repo / "tests" / "opt" / "conftest.py").write_text(
        "import pytest\n\npytest.importorskip('genstamp_no_such_module')\n"
    )
    (repo / "tests" / "opt" / "test_opt.py").write_text("def test_opt():\n    pass\n")
    (repo / "pyproject.toml").write_text('[tool.pytest.ini_options]\ntestpaths = ["tests"]\n')
    (repo / ".gitignore").write_text("__pycache__/\n")
    commit_all(repo, "a folder skipped whole")
    ok(run_genstamp(repo, "stamp"))
    ok(run_pytest(repo, "-p", "no:cacheprovider"))
    assert genstamp("-C", repo, "verify")[0] == 0
    made = tmp_path / "a.json"
    ok(run_genstamp(repo, "attest", "-o", str(made)))
    assert payload(made)["predicate"]["genstamp"]["coverage"]["skipped"] == ["tests/opt"]
    code, data = verdict(genstamp, repo, "--attestation", made)
    assert (code, rules(data)) == (0, []), data


def test_each_judged_tree_is_held_to_its_own_suites_however_many_are_judged(
    repo: Path, tmp_path: Path, genstamp: RunGenstamp
) -> None:
    """Two commits of a monorepo that declares no suites, each attested on a run of svc_a
    alone (``--part 1/1``); the work tree's uncommitted ``suites = ["svc_a"]`` narrows neither
    tree's suite, judged alone or with the other: svc_b's failing test never ran."""
    (repo / ".gitignore").write_text("__pycache__/\n*.pyc\n")
    for svc in ("svc_a", "svc_b"):
        (repo / svc / "tests").mkdir(parents=True)
    (repo / "svc_a" / "tests" / "test_a.py").write_text("def test_a():\n    pass\n")
    (repo / "svc_b" / "tests" / "test_b.py").write_text("def test_b():\n    assert False\n")
    (repo / "pyproject.toml").write_text("[tool.pytest.ini_options]\n")
    commit_all(repo, "A")
    ok(run_genstamp(repo, "stamp"))
    made = []
    for i in (1, 2):
        if i == 2:
            with (repo / "svc_a" / "tests" / "test_a.py").open("a") as fh:
                fh.write("\n\ndef test_a2():\n    pass\n")
            commit_all(repo, "B")
        run_pytest(repo, "-p", "no:cacheprovider", "svc_a")
        made.append(tmp_path / f"{i}.json")
        ok(run_genstamp(repo, "attest", "--part", "1/1", "-o", str(made[-1])))
    with (repo / "pyproject.toml").open("a") as fh:
        fh.write('[tool.genstamp]\nsuites = ["svc_a"]\n')
    for revs, files in ((["HEAD"], made[1:]), (["HEAD~1", "HEAD"], made)):
        args = [a for rev in revs for a in ("--rev", rev)]
        code, out, _ = genstamp("-C", repo, "verify", "--json", "--attestation", *files, *args)
        data = json.loads(out)
        assert code == 1 and set(rules(data)) == {"attestation-partial"}, data
        assert "svc_b/tests/test_b.py" in message(data, "attestation-partial"), data


def test_pae_is_the_dsse_test_vector() -> None:
    assert (
        dsse.pae("http://example.com/HelloWorld", b"hello world")
        == b"DSSEv1 29 http://example.com/HelloWorld 11 hello world"
    )


def test_an_envelope_in_url_safe_base64_reads_the_same(world: World) -> None:
    env = envelope(world.unsigned)
    raw = base64.b64decode(env["payload"])
    env["payload"] = base64.urlsafe_b64encode(raw).decode().rstrip("=")
    assert dsse.from_json(json.dumps(env)).payload == raw


# -- attest, then verify elsewhere ---------------------------------------------------------------


def test_attest_then_verify_from_the_file_in_a_fresh_clone(
    world: World, judge: Path, genstamp: RunGenstamp
) -> None:
    code, data = verdict(genstamp, judge, "--attestation", world.full)
    assert code == 0, data
    assert data["tests"]["passed"] == TESTS
    assert data["selection"]["complete"] is True
    assert not (judge / ".git" / "genstamp" / "evidence.xml").exists()  # no local run
    (said,) = data["attestations"]
    assert said["digest"] == payload(world.full)["subject"][0]["digest"]["sha256"]
    assert said["signer"] == "ci1@example" and said["commit"] == world.commit


def test_attest_refuses_what_the_gate_refuses(world: World, tmp_path: Path) -> None:
    clone = fresh_clone(world, tmp_path / "c")
    ok(run_genstamp(clone, "stamp"))
    ok(run_pytest(clone, "-p", "no:cacheprovider", "--splits", "3", "--group", "1"))
    proc = run_genstamp(clone, "attest", "-o", str(tmp_path / "a.json"))
    assert proc.returncode == 1 and "partial-run" in proc.stdout, proc.stdout + proc.stderr
    assert not (tmp_path / "a.json").exists()
    bad = run_genstamp(clone, "attest", "--part", "4/3")
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1, bad.stderr


def test_attest_names_why_the_newest_run_of_a_tree_verified_earlier_does_not_stand(
    world: World, tmp_path: Path
) -> None:
    """The tree was verified (a complete run), a new generation began, and one part of the
    suite ran again: `verify --rev` accepts on the remembered verdict, and `attest`, which
    needs a run that records what ran, said only that no evidence records it, though the
    user had just run the tests (h211). It names the newest run's refusal."""
    clone = fresh_clone(world, tmp_path / "c")
    ok(run_genstamp(clone, "stamp"))
    ok(run_pytest(clone, "-p", "no:cacheprovider"))
    ok(run_genstamp(clone, "verify", "--rev", "HEAD"))
    ok(run_genstamp(clone, "stamp"))
    ok(run_pytest(clone, "-p", "no:cacheprovider", "--splits", "3", "--group", "1"))
    ok(run_genstamp(clone, "verify", "--rev", "HEAD"))
    proc = run_genstamp(clone, "attest", "-o", str(tmp_path / "a.json"))
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "its newest run does not stand (partial-run:" in proc.stderr, proc.stderr
    assert not (tmp_path / "a.json").exists()


def test_unsigned_is_accepted_only_where_signing_is_not_required(
    world: World, judge: Path, genstamp: RunGenstamp
) -> None:
    code, data = verdict(genstamp, judge, "--attestation", world.unsigned)
    assert code == 1 and rules(data) == ["attestation-unsigned"], data
    (judge / "pyproject.toml").write_text(PYPROJECT.split("[tool.genstamp]")[0])
    code, data = verdict(genstamp, judge, "--attestation", world.unsigned)
    assert code == 0, data


def test_a_signature_by_a_key_not_in_allowed_signers_is_refused(
    world: World, judge: Path, genstamp: RunGenstamp, tmp_path: Path
) -> None:
    env = envelope(world.unsigned)
    body = base64.b64decode(env["payload"])
    sig = signing.sign(dsse.pae(env["payloadType"], body), str(world.keys / "rogue")).signature
    env["signatures"] = [{"keyid": "", "sig": base64.b64encode(sig).decode()}]
    rogue = tmp_path / "rogue.json"
    rogue.write_text(json.dumps(env))
    code, data = verdict(genstamp, judge, "--attestation", rogue)
    assert code == 1 and rules(data) == ["attestation-signature"], data
    assert "not in" in message(data, "attestation-signature")
    # the control: the same payload signed by an allowed key
    good = signing.sign(dsse.pae(env["payloadType"], body), str(world.keys / "ci2")).signature
    env["signatures"] = [{"keyid": "", "sig": base64.b64encode(good).decode()}]
    rogue.write_text(json.dumps(env))
    assert verdict(genstamp, judge, "--attestation", rogue)[0] == 0


def test_signers_from_a_revision_are_its_own_not_the_judged_checkouts(
    world: World, judge: Path, genstamp: RunGenstamp, tmp_path: Path
) -> None:
    """``--signers-from REV``: the allowed signers file as REV holds it decides (the branch a
    change merges into), whatever the checked-out change's own file says: a change cannot
    add its author's key. Without it, the checkout's file decides, as before."""
    judged = git(judge, "rev-parse", "HEAD")
    by_rogue = _signed_by(world, "rogue", tmp_path / "by-rogue.json")
    by_ci2 = _signed_by(world, "ci2", tmp_path / "by-ci2.json")
    # another revision whose file lists the rogue key and not ci2
    git(judge, "checkout", "-q", "-b", "other")
    _allowed(world, judge / "allowed_signers", rogue="genstamp")
    commit_all(judge, "another allowed signers file")
    git(judge, "checkout", "-q", judged)
    code, data = verdict(genstamp, judge, "--attestation", by_rogue)
    assert code == 1 and rules(data) == ["attestation-signature"], data  # the checkout's file
    args = ("--signers-from", "other")
    assert verdict(genstamp, judge, "--attestation", by_rogue, *args)[0] == 0
    code, data = verdict(genstamp, judge, "--attestation", by_ci2, *args)
    assert code == 1 and rules(data) == ["attestation-signature"], data
    said = data["failures"][0]["message"]  # the file as the revision holds it (Y24 09)
    assert "not in other:allowed_signers" in said and "genstamp-signers-of" not in said, said
    assert verdict(genstamp, judge, "--attestation", by_ci2)[0] == 0
    # a revision that declares no allowed signers file: one line, the usage error's code
    (judge / "pyproject.toml").write_text(PYPROJECT.split("[tool.genstamp]")[0])
    commit_all(judge, "no signers")
    code, _out, err = genstamp(
        "-C", judge, "verify", "--attestation", by_ci2, "--signers-from", "HEAD"
    )
    assert code == 2 and "HEAD declares no attestation-signers" in err and "Traceback" not in err
    # a base branch not fetched: the remedy names the option that gave it (V24 18)
    code, _out, err = genstamp(
        "-C", judge, "verify", "--attestation", by_ci2, "--signers-from", "origin/base"
    )
    assert code == 2 and err.count("\n") == 1, err
    assert "to --signers-from" in err and "git fetch origin" in err and "--rev" not in err, err


@pytest.mark.parametrize("link", [False, True])
def test_signers_from_a_revision_a_partial_clone_left_out_are_fetched(
    world: World, judge: Path, genstamp: RunGenstamp, tmp_path: Path, link: bool
) -> None:
    """``--signers-from REV`` in a partial clone (``--filter=blob:none``, CI's checkout of the
    change) where REV's allowed signers file (or a link on the way to it) is a blob the clone
    left out: libgit2 read only what is at hand, and the gate stopped with the blob's id for
    a message. It is fetched as git fetches it; a remote out of reach is said."""
    judged = git(judge, "rev-parse", "HEAD")
    by_rogue = _signed_by(world, "rogue", tmp_path / "by-rogue.json")
    git(judge, "checkout", "-q", "-b", "other")
    _allowed(world, judge / "allowed_signers", rogue="genstamp")
    if link:
        (judge / "keys").mkdir()
        (judge / "allowed_signers").rename(judge / "keys" / "signers")
        (judge / "allowed_signers").symlink_to("keys/signers")
    commit_all(judge, "another allowed signers file")
    git(judge, "checkout", "-q", judged)
    git(judge, "config", "uploadpack.allowFilter", "true")
    partial = tmp_path / "partial"
    git(tmp_path, "clone", "-q", "--filter=blob:none", judge.as_uri(), str(partial))
    left_out = git(partial, "rev-parse", "origin/other:allowed_signers")
    assert left_out in git(partial, "rev-list", "--objects", "--missing=print", "--all")
    args = ("--attestation", by_rogue, "--signers-from", "origin/other")
    url = git(partial, "remote", "get-url", "origin")
    git(partial, "remote", "set-url", "origin", (tmp_path / "gone").as_uri())
    code, _out, err = genstamp("-C", partial, "verify", "--rev", judged, *args)
    assert code == 2 and err.count("\n") == 1, err
    assert "is not in this partial clone, and git cannot fetch it" in err, err
    git(partial, "remote", "set-url", "origin", url)
    code, data = verdict(genstamp, partial, *args, rev=judged)
    assert code == 0, data


def _signed_by(world: World, key: str, out: Path) -> Path:
    """The whole-suite statement, signed by ``key`` alone."""
    env = envelope(world.unsigned)
    body = base64.b64decode(env["payload"])
    sig = signing.sign(dsse.pae(env["payloadType"], body), str(world.keys / key)).signature
    env["signatures"] = [{"keyid": "", "sig": base64.b64encode(sig).decode()}]
    out.write_text(json.dumps(env))
    return out


def _allowed(world: World, path: Path, **namespaces: str) -> Path:
    """An allowed signers file: each key name with the namespaces it may sign for."""
    lines = []
    for name, spaces in namespaces.items():
        blob = (world.keys / f"{name}.pub").read_text().split(" ", 2)[1]
        lines.append(f'{name}@example namespaces="{spaces}" ssh-ed25519 {blob}\n')
    path.write_text("".join(lines))
    return path


def test_without_project_signers_git_s_allowed_signers_file_is_checked(
    world: World, judge: Path, genstamp: RunGenstamp, tmp_path: Path
) -> None:
    """No `attestation-signers`: signatures are checked against git's own
    gpg.ssh.allowedSignersFile when it is set, and unsigned statements are accepted."""
    (judge / "pyproject.toml").write_text(PYPROJECT.split("[tool.genstamp]")[0])
    by_ci1 = _signed_by(world, "ci1", tmp_path / "by-ci1.json")
    allowed = "gpg.ssh.allowedSignersFile"
    git(judge, "config", allowed, str(_allowed(world, tmp_path / "a", ci2="genstamp")))
    code, data = verdict(genstamp, judge, "--attestation", by_ci1)
    assert code == 1 and rules(data) == ["attestation-signature"], data
    assert verdict(genstamp, judge, "--attestation", world.unsigned)[0] == 0
    # the control: git's file lists ci1
    git(judge, "config", allowed, str(_allowed(world, tmp_path / "b", ci1="genstamp")))
    code, data = verdict(genstamp, judge, "--attestation", by_ci1)
    assert code == 0, data
    assert [a["signer"] for a in data["attestations"]] == ["ci1@example"], data


def test_git_s_relative_paths_are_read_from_the_top_of_the_work_tree(
    world: World, judge: Path, tmp_path: Path
) -> None:
    """A relative gpg.ssh.allowedSignersFile is read as git reads it, from the top of the work
    tree, wherever genstamp starts (a subfolder, `-C` from above): it was read from the
    folder genstamp was started in, and the same attestation was accepted at the top only."""
    (judge / "pyproject.toml").write_text(PYPROJECT.split("[tool.genstamp]")[0])
    by_ci1 = _signed_by(world, "ci1", tmp_path / "by-ci1.json")
    (judge / "keys").mkdir()
    _allowed(world, judge / "keys" / "allowed", ci1="genstamp")
    git(judge, "config", "gpg.ssh.allowedSignersFile", "keys/allowed")
    for cwd, args in [(judge / "tests", ()), (judge.parent, ("-C", judge.name))]:
        proc = run_genstamp(cwd, *args, "verify", "--json", "--attestation", str(by_ci1))
        assert proc.returncode == 0, proc.stdout + proc.stderr
        said = json.loads(proc.stdout)["attestations"]
        assert [a["signer"] for a in said] == ["ci1@example"], said


def test_a_signers_file_the_revision_holds_as_a_link_is_followed(
    world: World, judge: Path, genstamp: RunGenstamp, tmp_path: Path
) -> None:
    """`--signers-from REV` where REV holds the allowed signers file as a symbolic link to a
    file of the tree: the link's target was copied as the file (every signature refused);
    it is followed within the tree, as a checkout reads it. A link out of the tree is an
    error of its own."""
    by_ci1 = _signed_by(world, "ci1", tmp_path / "by-ci1.json")
    judged = git(judge, "rev-parse", "HEAD")
    (judge / "keys").mkdir()
    _allowed(world, judge / "keys" / "signers", ci1="genstamp")
    (judge / "allowed_signers").unlink()
    (judge / "allowed_signers").symlink_to("keys/signers")
    commit_all(judge, "the signers kept in keys/")
    args = ("--attestation", by_ci1, "--signers-from", "HEAD")
    code, data = verdict(genstamp, judge, *args, rev=judged)
    assert code == 0, data
    # a linked folder on the way: `attestation-signers = "trust/signers"`, trust -> keys
    (judge / "trust").symlink_to("keys")
    pyproject = (judge / "pyproject.toml").read_text()
    (judge / "pyproject.toml").write_text(pyproject.replace('"allowed_signers"', '"trust/signers"'))
    commit_all(judge, "the signers named through a linked folder")
    code, data = verdict(genstamp, judge, *args, rev=judged)
    assert code == 0, data
    (judge / "pyproject.toml").write_text(pyproject)
    (judge / "allowed_signers").unlink()
    (judge / "allowed_signers").symlink_to("../outside")
    commit_all(judge, "a link out of the tree")
    code, _out, err = genstamp(
        "-C", judge, "verify", "--attestation", by_ci1, "--signers-from", "HEAD"
    )
    assert code == 2 and "a symbolic link to ../outside, outside the repository" in err, err


def test_a_key_git_s_revocation_file_revokes_is_refused(
    world: World, judge: Path, genstamp: RunGenstamp, tmp_path: Path
) -> None:
    """git's gpg.ssh.revocationFile (a KRL, or public keys) revokes a key that the allowed
    signers file still lists, as `git verify-commit` holds it: the attestation it signed was
    accepted. Refused, saying so; a file that revokes another key changes nothing; one that
    is missing refuses, as ssh-keygen and git do."""
    by_ci1 = _signed_by(world, "ci1", tmp_path / "by-ci1.json")
    revoked = tmp_path / "revoked"
    git(judge, "config", "gpg.ssh.revocationFile", str(revoked))
    revoked.write_text((world.keys / "ci1.pub").read_text())
    code, data = verdict(genstamp, judge, "--attestation", by_ci1)
    assert code == 1 and rules(data) == ["attestation-signature"], data
    assert f"with a key that {revoked} revokes" in message(data, "attestation-signature"), data
    revoked.write_text((world.keys / "ci2.pub").read_text())
    code, data = verdict(genstamp, judge, "--attestation", by_ci1)
    assert code == 0, data
    revoked.unlink()
    code, data = verdict(genstamp, judge, "--attestation", by_ci1)
    assert code == 1 and "does not exist" in message(data, "attestation-signature"), data


def test_signers_from_a_revision_take_its_revocation_file_too(
    world: World, judge: Path, genstamp: RunGenstamp, tmp_path: Path
) -> None:
    """A relative gpg.ssh.revocationFile the repository tracks: with `--signers-from REV`, the
    file as REV holds it decides, as the allowed signers do; the change judged took its
    signer's key out of its own copy, and was accepted."""
    by_ci1 = _signed_by(world, "ci1", tmp_path / "by-ci1.json")
    judged = git(judge, "rev-parse", "HEAD")
    git(judge, "checkout", "-q", "-b", "base")
    (judge / "revoked_keys").write_text((world.keys / "ci1.pub").read_text())
    commit_all(judge, "ci1 revoked")
    git(judge, "checkout", "-q", judged)
    (judge / "revoked_keys").write_text("")  # the change's own copy: nothing revoked
    git(judge, "config", "gpg.ssh.revocationFile", "revoked_keys")
    assert verdict(genstamp, judge, "--attestation", by_ci1)[0] == 0  # its own file
    code, data = verdict(genstamp, judge, "--attestation", by_ci1, "--signers-from", "base")
    assert code == 1 and rules(data) == ["attestation-signature"], data
    said = message(data, "attestation-signature")
    assert "with a key that base:revoked_keys revokes" in said, said
    git(judge, "config", "gpg.ssh.revocationFile", "sub/../revoked_keys")  # the same file
    code, data = verdict(genstamp, judge, "--attestation", by_ci1, "--signers-from", "base")
    said = message(data, "attestation-signature")
    assert code == 1 and "with a key that base:revoked_keys revokes" in said, data
    git(judge, "config", "gpg.ssh.revocationFile", "revoked_keys")
    # a revision that holds it as a link out of the repository: an error, never the change's
    (judge / "revoked_keys").unlink()
    git(judge, "checkout", "-q", "base")
    (judge / "revoked_keys").unlink()
    (judge / "revoked_keys").symlink_to("../shared-revoked")
    commit_all(judge, "revoked keys kept beside the repository")
    git(judge, "checkout", "-q", judged)
    (judge / "revoked_keys").write_text("")
    code, _out, err = genstamp(
        "-C", judge, "verify", "--attestation", by_ci1, "--signers-from", "base"
    )
    assert code == 2 and "base holds the revocation file revoked_keys through a symbolic" in err


def test_a_signature_nothing_here_can_check_is_not_called_unsigned(
    world: World, judge: Path, genstamp: RunGenstamp, tmp_path: Path
) -> None:
    """No allowed signers file at all (no `attestation-signers`, no git one): a signed
    attestation is accepted, as an unsigned one is, and its line said "unsigned"."""
    (judge / "pyproject.toml").write_text(PYPROJECT.split("[tool.genstamp]")[0])
    by_ci1 = _signed_by(world, "ci1", tmp_path / "by-ci1.json")
    code, out, err = genstamp("-C", judge, "verify", "--attestation", by_ci1)
    assert code == 0 and "signed, the signatures not checked" in out + err, out + err
    code, out, err = genstamp("-C", judge, "verify", "--attestation", world.unsigned)
    assert code == 0 and (out + err).rstrip().endswith(", unsigned"), out + err


def test_a_signer_allowed_only_for_git_s_namespace_is_refused(
    world: World, judge: Path, genstamp: RunGenstamp, tmp_path: Path
) -> None:
    """A key allowed to sign commits (namespaces="git") is not allowed to sign attestations."""
    by_ci1 = _signed_by(world, "ci1", tmp_path / "by-ci1.json")
    _allowed(world, judge / "allowed_signers", ci1="git", ci2="genstamp")
    code, data = verdict(genstamp, judge, "--attestation", by_ci1)
    assert code == 1 and rules(data) == ["attestation-signature"], data
    assert "allows only for other namespaces" in data["failures"][0]["message"], data
    _allowed(world, judge / "allowed_signers", ci1="git,genstamp", ci2="genstamp")
    assert verdict(genstamp, judge, "--attestation", by_ci1)[0] == 0


def test_a_signer_whose_dates_have_passed_is_told_so(
    world: World, judge: Path, genstamp: RunGenstamp, tmp_path: Path
) -> None:
    """A key the allowed signers file lists with a `valid-before` date that has passed: refused,
    and the message does not say the key is missing from the file (V24 03)."""
    by_ci1 = _signed_by(world, "ci1", tmp_path / "by-ci1.json")
    signers = _allowed(world, judge / "allowed_signers", ci1="genstamp")
    signers.write_text(
        signers.read_text().replace('"genstamp"', '"genstamp",valid-before="20200101"')
    )
    code, data = verdict(genstamp, judge, "--attestation", by_ci1)
    assert code == 1 and rules(data) == ["attestation-signature"], data
    assert "valid-after/valid-before" in data["failures"][0]["message"], data
    _allowed(world, judge / "allowed_signers", ci1="genstamp")  # the control: no dates
    assert verdict(genstamp, judge, "--attestation", by_ci1)[0] == 0


@pytest.mark.parametrize("prefix", ["key::", ""], ids=["key-prefix", "bare-key"])
def test_a_key_held_by_an_ssh_agent_signs(
    world: World, judge: Path, genstamp: RunGenstamp, tmp_path: Path, prefix: str
) -> None:
    """user.signingkey as a literal `key::ssh-ed25519 …` whose private half only an ssh-agent
    holds (git's own convention): attest --sign signs through the agent. So it does for the
    bare `ssh-ed25519 …`, which git still takes for a literal key (h178: read as a path)."""
    sock = tmp_path / "agent.sock"
    agent = subprocess.Popen(
        ["ssh-agent", "-D", "-a", str(sock)], stdout=subprocess.PIPE, text=True
    )
    try:
        assert agent.stdout is not None
        # `SSH_AUTH_SOCK=…; export SSH_AUTH_SOCK;`, printed once the socket listens
        assert "SSH_AUTH_SOCK" in agent.stdout.readline()
        env = subprocess_env(SSH_AUTH_SOCK=str(sock))
        subprocess.run(
            ["ssh-add", "-q", str(world.keys / "ci3")], env=env, check=True, capture_output=True
        )
        clone = fresh_clone(world, tmp_path / "agent-machine")
        git(clone, "config", "gpg.format", "ssh")
        public = (world.keys / "ci3.pub").read_text().strip()
        git(clone, "config", "user.signingkey", f"{prefix}{public}")
        ok(run_genstamp(clone, "stamp", env=env))
        ok(run_pytest(clone, "-p", "no:cacheprovider", env=env))
        out = tmp_path / "agent.json"
        ok(run_genstamp(clone, "attest", "--sign", "-o", str(out), env=env))
    finally:
        agent.terminate()
        agent.wait()
    code, data = verdict(genstamp, judge, "--attestation", out)
    assert code == 0, data
    assert [a["signer"] for a in data["attestations"]] == ["ci3@example"], data


def _set(path: list[Any], value: Any) -> Any:
    def change(body: dict[str, Any]) -> None:
        node: Any = body
        for key in path[:-1]:
            node = node[key]
        node[path[-1]] = value

    return change


TAMPER = {
    "result": _set(["predicate", "result"], "WARNED"),
    "passedTests": _set(["predicate", "passedTests"], ["tests/test_0.py::test_x0"]),
    "failedTests": _set(["predicate", "failedTests"], ["tests/test_0.py::test_x0"]),
    "warnedTests": _set(["predicate", "warnedTests"], ["tests/test_9.py::test_z"]),
    "configuration": _set(["predicate", "configuration"], [{"uri": "pkg:pypi/other"}]),
    "url": _set(["predicate", "url"], "https://example.invalid/run/1"),
    "generation": _set(["predicate", "genstamp", "generation"], "0" * 32),
    "part": _set(["predicate", "genstamp", "part"], {"index": 1, "count": 1}),
    "audit": _set(["predicate", "genstamp", "audit"], {"recorded": False}),
    "workspace": _set(["predicate", "genstamp", "workspace"], "clean-room"),
    "tree": _set(["predicate", "genstamp", "tree"], "0" * 40),
    "subject-tree": _set(["subject", 1, "digest", "gitTree"], "0" * 40),
    "subject-commit": _set(["subject", 2, "digest", "gitCommit"], "0" * 40),
    "subject-sha256": _set(["subject", 0, "digest", "sha256"], "0" * 64),
    "version": _set(["predicate", "genstamp", "version"], 2),
    "type": _set(["_type"], "https://in-toto.io/Statement/v0.1"),
}


def test_a_keyid_naming_another_key_is_refused(
    world: World, judge: Path, genstamp: RunGenstamp, tmp_path: Path
) -> None:
    env = envelope(world.full)
    env["signatures"][0]["keyid"] = "SHA256:" + "A" * 43
    edited = tmp_path / "keyid.json"
    edited.write_text(json.dumps(env))
    code, data = verdict(genstamp, judge, "--attestation", edited)
    assert code == 1 and rules(data) == ["attestation-signature"], data
    assert "keyid" in message(data, "attestation-signature")
    env["signatures"][0]["keyid"] = ""  # no hint at all: the signature alone decides
    edited.write_text(json.dumps(env))
    assert verdict(genstamp, judge, "--attestation", edited)[0] == 0


@pytest.mark.parametrize("field", list(TAMPER))
def test_tampering_with_any_field_is_refused(
    field: str, world: World, judge: Path, genstamp: RunGenstamp, tmp_path: Path
) -> None:
    # signed: the signature no longer verifies
    signed = rewrite(world.full, tmp_path / "signed.json", TAMPER[field])
    code, data = verdict(genstamp, judge, "--attestation", signed)
    assert code == 1, data
    assert set(rules(data)) & {"attestation-signature", "attestation-unreadable"}, data
    # unsigned, where signing is not required: the statement contradicts itself
    (judge / "pyproject.toml").write_text(PYPROJECT.split("[tool.genstamp]")[0])
    bare = rewrite(world.unsigned, tmp_path / "bare.json", TAMPER[field], keep_signatures=False)
    code, data = verdict(genstamp, judge, "--attestation", bare)
    assert code == 1, data
    assert set(rules(data)) & {
        "attestation-tampered",
        "attestation-unreadable",
        "attestation-other-tree",
    }, data


def test_a_statement_for_another_tree_is_refused(
    world: World, judge: Path, genstamp: RunGenstamp
) -> None:
    (judge / "tests" / "test_0.py").write_text("def test_x0():\n    assert False\n")
    commit_all(judge, "break a test")
    code, data = verdict(genstamp, judge, "--attestation", world.full)
    assert code == 1 and rules(data) == ["attestation-other-tree"], data
    assert world.commit[:12] in message(data, "attestation-other-tree")
    # the control: the attested commit itself
    code, data = verdict(genstamp, judge, "--attestation", world.full, rev="HEAD~1")
    assert code == 0, data


def test_a_failed_result_is_refused(world: World, tmp_path: Path, genstamp: RunGenstamp) -> None:
    clone = fresh_clone(world, tmp_path / "c")
    (clone / "tests" / "test_0.py").write_text("def test_x0():\n    assert False\n")
    commit_all(clone, "red")
    ok(run_genstamp(clone, "stamp"))
    run_pytest(clone, "-p", "no:cacheprovider")
    proc = run_genstamp(clone, "attest")
    assert proc.returncode == 1 and "tests-failed" in proc.stderr  # never attested
    assert proc.stdout == ""  # `genstamp attest > a.json`: the refusal is said, not written
    folder = tmp_path / "out"
    folder.mkdir()
    into = run_genstamp(clone, "attest", "-o", str(folder))
    assert into.returncode == 2 and into.stderr.count("\n") == 1, into.stderr
    assert f"{folder} is a folder" in into.stderr and ".tmp" not in into.stderr, into.stderr

    # a FAILED statement written by hand (consistent, digest and all) is refused on its result
    def fail(body: dict[str, Any]) -> None:
        pred = body["predicate"]
        cov = json.loads(
            statement.coverage.Coverage(
                *statement.coverage.from_json(json.dumps(pred["genstamp"]["coverage"]))[:3],
                {
                    **statement.coverage.from_json(
                        json.dumps(pred["genstamp"]["coverage"])
                    ).outcomes,
                    "tests/test_0.py::test_x0": "failed",
                },
                (),
            ).to_json()
        )
        pred["genstamp"]["coverage"] = cov
        pred["passedTests"].remove("tests/test_0.py::test_x0")
        pred["failedTests"] = ["tests/test_0.py::test_x0"]
        pred["result"] = "FAILED"
        body["subject"][0]["digest"]["sha256"] = statement.evidence_digest(pred)

    red = rewrite(world.unsigned, tmp_path / "red.json", fail, keep_signatures=False)
    judge = fresh_clone(world, tmp_path / "judge")
    (judge / "pyproject.toml").write_text(PYPROJECT.split("[tool.genstamp]")[0])
    code, data = verdict(genstamp, judge, "--attestation", red)
    assert code == 1 and rules(data) == ["attestation-failed"], data


# -- parts from three machines ------------------------------------------------------------------


def test_three_parts_from_three_clones_merge_into_one_verdict(
    world: World, judge: Path, genstamp: RunGenstamp
) -> None:
    generations = {payload(p)["predicate"]["genstamp"]["generation"] for p in world.parts}
    assert len(generations) == 3  # each machine its own generation
    args = [a for p in world.parts for a in ("--attestation", str(p))]
    code, data = verdict(genstamp, judge, *args)
    assert code == 0, data
    assert data["tests"]["passed"] == TESTS and len(data["parts"]) == 3
    code, out, err = genstamp("-C", judge, "verify", *args)
    assert code == 0 and out == "", out
    assert "3 parts merged, signed by ci1@example, ci2@example, ci3@example" in err, err


@pytest.mark.parametrize("missing", [1, 2, 3])
def test_two_of_three_parts_are_refused_naming_the_missing_one(
    missing: int, world: World, judge: Path, genstamp: RunGenstamp
) -> None:
    given = [p for i, p in enumerate(world.parts, 1) if i != missing]
    args = [a for p in given for a in ("--attestation", str(p))]
    code, data = verdict(genstamp, judge, *args)
    assert code == 1 and rules(data) == ["attestation-partial"], data
    said = message(data, "attestation-partial")
    assert f"missing part {missing}/3" in said, said
    assert "collected tests did not run" in said or "not collected" in said, said


def test_a_local_allow_partial_the_judged_tree_does_not_hold_allows_nothing(
    world: World, judge: Path, genstamp: RunGenstamp
) -> None:
    """The judging clone's pyproject.toml edited, not committed (a CI step, a hidden local
    edit): ``allow-partial`` there does not waive the missing parts of a tree whose own file
    does not allow them, as ``verify --rev`` holds each tree to its own file."""
    with (judge / "pyproject.toml").open("a") as fh:
        fh.write("allow-partial = true\n")
    args = ["--attestation", str(world.parts[0])]
    code, data = verdict(genstamp, judge, *args)
    assert code == 1 and rules(data) == ["attestation-partial"], data


def test_one_part_given_twice_is_still_partial(
    world: World, judge: Path, genstamp: RunGenstamp
) -> None:
    args = ["--attestation", str(world.parts[0])] * 2
    code, data = verdict(genstamp, judge, *args)
    assert code == 1 and "attestation-partial" in rules(data), data


def test_no_attestation_file_is_an_error_and_no_note_a_refusal(
    world: World, judge: Path, genstamp: RunGenstamp, tmp_path: Path
) -> None:
    code, _out, err = genstamp("-C", judge, "verify", "--attestation", tmp_path / "nope.json")
    assert code == 2 and err.count("\n") == 1 and err.startswith("genstamp: "), err
    code, data = verdict(genstamp, judge, "--from-notes")
    assert code == 1 and rules(data) == ["no-attestation"], data
    junk = tmp_path / "junk.json"
    junk.write_text("{not json")
    code, data = verdict(genstamp, judge, "--attestation", junk)
    assert code == 1 and rules(data) == ["attestation-unreadable"], data


def test_hostile_and_mistaken_input_is_one_line_never_a_traceback(
    world: World, judge: Path, genstamp: RunGenstamp, tmp_path: Path
) -> None:
    deep = tmp_path / "deep.json"
    deep.write_text("[" * 100_000)
    code, data = verdict(genstamp, judge, "--attestation", deep)
    assert code == 1 and rules(data) == ["attestation-unreadable"], data
    nested = rewrite(
        world.unsigned, tmp_path / "nested.json", _set(["predicate", "genstamp", "part"], {})
    )
    code, data = verdict(genstamp, judge, "--attestation", nested)
    assert code == 1, data
    code, _out, err = genstamp(
        "-C", judge, "verify", "--junit", "x.xml", "--attestation", world.full
    )
    assert code == 2 and err.count("\n") == 1 and "give one of them" in err, err


@pytest.mark.parametrize(
    ("part", "says"),
    [
        ({"index": 0, "count": 3}, "is not I/N"),
        ({"index": 4, "count": 3}, "is not I/N"),
        ({"index": 1, "count": 10**12}, "more than 1000 parts"),  # no list of 10**12 parts
        ({"index": 1, "count": float("inf")}, "infinity"),  # JSON's Infinity, as json reads it
    ],
)
def test_a_part_that_is_not_i_of_n_is_unreadable(
    part: dict[str, Any],
    says: str,
    world: World,
    judge: Path,
    genstamp: RunGenstamp,
    tmp_path: Path,
) -> None:
    def change(body: dict[str, Any]) -> None:
        body["predicate"]["genstamp"]["part"] = part
        body["subject"][0]["digest"]["sha256"] = statement.evidence_digest(body["predicate"])

    bad = rewrite(world.unsigned, tmp_path / "bad.json", change, keep_signatures=False)
    (judge / "pyproject.toml").write_text(PYPROJECT.split("[tool.genstamp]")[0])
    code, data = verdict(genstamp, judge, "--attestation", bad)
    assert code == 1 and rules(data) == ["attestation-unreadable"], data
    assert says in data["failures"][0]["message"]


@pytest.mark.parametrize("observes", [None, 0, "1", True])
def test_an_attestation_of_a_recorder_that_observes_less_is_unreadable(
    observes: object, world: World, judge: Path, genstamp: RunGenstamp, tmp_path: Path
) -> None:
    """An attestation made by a build of before the observation level (none in its predicate:
    the evidence it judged was recorded by a plugin that did not look for all this genstamp
    judges by) is refused as the evidence would be locally, naming both; the control, this
    build's own attestation, is accepted (the tests above)."""

    def change(body: dict[str, Any]) -> None:
        if observes is None:
            del body["predicate"]["genstamp"]["observes"]
        else:
            body["predicate"]["genstamp"]["observes"] = observes
        body["subject"][0]["digest"]["sha256"] = statement.evidence_digest(body["predicate"])

    older = rewrite(world.unsigned, tmp_path / "older.json", change, keep_signatures=False)
    (judge / "pyproject.toml").write_text(PYPROJECT.split("[tool.genstamp]")[0])
    assert verdict(genstamp, judge, "--attestation", world.unsigned)[0] == 0
    code, data = verdict(genstamp, judge, "--attestation", older)
    assert code == 1 and rules(data) == ["attestation-unreadable"], data
    said = data["failures"][0]["message"]
    assert "of a run whose recorder observes less than this genstamp" in said, said
    assert f"this genstamp's {binding.OBSERVES}): rerun the tests with this genstamp" in said


def test_a_partial_run_accepted_from_attestations_says_so(tmp_path: Path) -> None:
    """allow-partial committed, one of two test files run and attested: the gate accepts it
    from the attestation as it accepts the local evidence, saying PARTIAL, and the summary
    says "part of the suite"."""
    repo = init_repo(tmp_path / "p")
    (repo / "tests").mkdir()
    (repo / "tests" / "test_a.py").write_text("def test_a():\n    pass\n")
    (repo / "tests" / "test_b.py").write_text("def test_b():\n    assert False\n")
    (repo / "pyproject.toml").write_text(
        '[tool.pytest.ini_options]\ntestpaths = ["tests"]\n\n'
        "[tool.genstamp]\nallow-partial = true\n"
    )
    (repo / ".gitignore").write_text("__pycache__/\n")
    commit_all(repo, "two files, partial runs allowed")
    assert run_genstamp(repo, "stamp").returncode == 0
    assert run_pytest(repo, "tests/test_a.py").returncode == 0
    made = run_genstamp(repo, "attest", "-o", str(tmp_path / "a.json"))
    assert made.returncode == 0, made.stderr
    judged = run_genstamp(repo, "verify", "--attestation", str(tmp_path / "a.json"))
    assert judged.returncode == 0, judged.stdout + judged.stderr
    assert "accepted as a PARTIAL run (allow-partial): " in judged.stderr, judged.stderr
    assert "tests/test_b.py" in judged.stderr
    said = run_genstamp(repo, "summary", "--attestation", str(tmp_path / "a.json"))
    assert said.returncode == 0 and "part of the suite" in said.stdout, said.stdout
    # as GitHub annotations (the README's CI form): the same verdict, warning included
    for given, accepted in [
        (["--attestation", str(tmp_path / "a.json")], "attestations"),
        ([], "evidence"),
    ]:
        noted = run_genstamp(repo, "verify", *given, "--format", "github")
        assert noted.returncode == 0, noted.stdout + noted.stderr
        notice, warning = noted.stdout.splitlines()
        assert notice.startswith(f"::notice title=genstamp::{accepted} accepted: 1 passed"), notice
        assert warning.startswith("::warning title=genstamp::accepted as a PARTIAL run"), warning
        assert "tests/test_b.py" in warning


def test_an_attestation_a_windows_tool_rewrote_is_read_as_json_is(
    world: World, tmp_path: Path
) -> None:
    """The same envelope saved with a byte order mark (Notepad's "UTF-8 with BOM") or as
    UTF-16 (PowerShell 5.1's ``genstamp attest > a.json``) is judged and published as the
    file genstamp wrote; an empty file is no attestation."""
    clone = fresh_clone(world, tmp_path / "c")
    text = world.full.read_text(encoding="utf-8")
    (tmp_path / "bom.json").write_bytes(b"\xef\xbb\xbf" + text.encode())
    (tmp_path / "utf16.json").write_text(text.replace("\n", "\r\n"), encoding="utf-16")
    for name in ("bom.json", "utf16.json"):
        judged = run_genstamp(clone, "verify", "--attestation", str(tmp_path / name))
        assert judged.returncode == 0, judged.stdout + judged.stderr
        ok(run_genstamp(clone, "publish", str(tmp_path / name)))
    ok(run_genstamp(clone, "verify", "--from-notes"))
    (tmp_path / "empty.json").write_bytes(b"")
    empty = run_genstamp(clone, "publish", str(tmp_path / "empty.json"))
    assert empty.returncode == 2 and empty.stderr.count("\n") == 1, empty.stderr
    assert "empty.json is empty" in empty.stderr, empty.stderr


@pytest.mark.parametrize("option", ["--attestation", "--summary"])
def test_a_device_that_never_ends_is_read_to_the_limit_and_refused(
    world: World, judge: Path, genstamp: RunGenstamp, option: str
) -> None:
    """`/dev/zero` says size 0: the read stops past the limit, one line, never a traceback
    (V24 06: read whole, it was a MemoryError). A pipe, which says 0 too, is still read."""
    given = ["--attestation", str(world.full)] if option == "--summary" else []
    code, _out, err = genstamp("-C", judge, "verify", *given, option, "/dev/zero")
    assert code == 2 and err.count("\n") == 1, err
    assert err.startswith("genstamp: /dev/zero is over 64 MiB"), err
    piped = subprocess.run(
        f"{sys.executable} -m genstamp -C {judge} verify --attestation <(cat {world.full})",
        shell=True,
        executable="/bin/bash",
        capture_output=True,
        text=True,
        env=subprocess_env(),
        check=False,
    )
    assert piped.returncode == 0, piped.stdout + piped.stderr


@pytest.mark.parametrize("parts", [1, 2])
def test_a_branch_tested_then_left_is_attested_from_its_kept_run(
    world: World, judge: Path, tmp_path: Path, genstamp: RunGenstamp, parts: int
) -> None:
    """Tested (whole, or in two parts), verified, then another branch checked out: the gate
    accepts the tested commit on its remembered verdict or on the run of the generation that
    checkout ended, and attest states that run (V24 11, Y24 08: it refused, finding no run of
    the tree in the new generation's evidence)."""
    clone = fresh_clone(world, tmp_path / "c")
    machine(clone, world.keys / "ci1")
    for group in range(1, parts + 1):
        split = ["--splits", str(parts), "--group", str(group)] if parts > 1 else []
        ok(run_pytest(clone, "-p", "no:cacheprovider", *split))
    ok(run_genstamp(clone, "verify"))  # the tree's verdict, remembered
    git(clone, "switch", "-q", "-c", "other")
    (clone / "notes.txt").write_text("another tree\n")
    git(clone, "add", "notes.txt")
    git(clone, "commit", "-qm", "another tree")
    new = git(clone, "rev-parse", "HEAD")
    ok(run_genstamp(clone, "hook", "post-checkout", world.commit, new, "1"))
    made = tmp_path / "a.json"
    ok(run_genstamp(clone, "attest", "--rev", world.commit, "--sign", "-o", str(made)))
    assert payload(made)["predicate"]["genstamp"]["commit"] == world.commit
    code, data = verdict(genstamp, judge, "--attestation", made)
    assert code == 0 and data["tests"]["passed"] == TESTS, data


def test_an_envelope_of_thousands_of_signatures_is_checked_in_bounded_time(
    world: World, judge: Path, genstamp: RunGenstamp, tmp_path: Path
) -> None:
    """Each signature costs an ssh-keygen: the genuine one given 3,000 times is checked once
    and accepted; more distinct signatures than genstamp checks are refused unchecked (V24 24:
    3,000 took 20 s, and 64 MiB holds 150,000)."""
    env = envelope(world.full)
    genuine = env["signatures"][0]
    env["signatures"] = [genuine] * 3000
    repeated = tmp_path / "repeated.json"
    repeated.write_text(json.dumps(env))
    code, data = verdict(genstamp, judge, "--attestation", repeated)
    assert code == 0, data
    junk = [{"keyid": "", "sig": base64.b64encode(bytes([n]) * 64).decode()} for n in range(16)]
    env["signatures"] = [*junk, genuine]
    many = tmp_path / "many.json"
    many.write_text(json.dumps(env))
    code, data = verdict(genstamp, judge, "--attestation", many)
    assert code == 1 and rules(data) == ["attestation-signature"], data
    assert "holds 17 signatures" in data["failures"][0]["message"], data


def test_a_note_of_many_lines_checks_each_signature_once(
    world: World, judge: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Lines of a note that repeat signatures (200 lines, the same 16 junk ones) cost one
    ssh-keygen each signature, not each line; the genuine line beside them still speaks
    (Y24 10: 26 s)."""
    from genstamp import attest
    from genstamp.config import Config
    from genstamp.repo import open_checkout

    env = envelope(world.full)
    genuine = json.dumps(env)
    junk = [{"keyid": "", "sig": base64.b64encode(bytes([n]) * 64).decode()} for n in range(16)]
    lines = [json.dumps({**env, "signatures": junk, "pad": n}) for n in range(200)]
    allowed = _allowed(world, tmp_path / "allowed", ci1="genstamp")
    calls: list[bytes] = []
    real = signing.verify

    def counted(
        data: bytes, signature: bytes, path: Path, revoked: Path | None = None
    ) -> signing.Checked:
        calls.append(signature)
        return real(data, signature, path, revoked)

    monkeypatch.setattr(signing, "verify", counted)
    checkout = open_checkout(judge)
    targets = [attest.rev_tree(checkout, "HEAD")]
    facts = attest.gather(
        checkout.repo,
        targets,
        [("note", "\n".join([*lines, genuine]))],
        Config(attestation_signers=allowed),
        source="notes",
        allowed=allowed,
        grown=True,
    )
    assert len(calls) == 17, len(calls)  # the 16 junk signatures, then the genuine one
    assert [a.signer for a in facts.attested][-1] == "ci1@example"
