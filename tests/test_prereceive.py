"""The server-side gate end to end: a real bare repository as the server, genstamp's
hooks/pre-receive installed in it, real `git push`es with the notes in the same push."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest
from conftest import commit_all, git, run_git, subprocess_env
from test_attest import World, shared_world

from genstamp import prereceive

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="session")
def world(tmp_path_factory: pytest.TempPathFactory) -> World:
    return shared_world(tmp_path_factory)


ROOT = Path(__file__).resolve().parents[1]
NOTES = "refs/notes/genstamp"


@pytest.fixture
def server(tmp_path: Path, world: World) -> Path:
    bare = tmp_path / "server.git"
    git(tmp_path, "-c", "init.defaultBranch=main", "init", "-q", "--bare", str(bare))
    (bare / "hooks").mkdir(exist_ok=True)
    shutil.copy(ROOT / "hooks" / "pre-receive", bare / "hooks" / "pre-receive")
    git(bare, "config", "genstamp.attestationSigners", str(world.clones[0] / "allowed_signers"))
    return bare


def push(clone: Path, *refs: str) -> tuple[int, str]:
    import subprocess

    env = subprocess_env(GENSTAMP=str(Path(sys.executable).parent / "genstamp"))
    proc = subprocess.run(
        ["git", "push", "server", *refs], cwd=clone, env=env, capture_output=True, text=True
    )
    return proc.returncode, proc.stdout + proc.stderr


def developer(world: World, server: Path, tmp_path: Path) -> Path:
    """A clone of the world's origin with the server as its remote ``server``."""
    dev = tmp_path / "dev"
    git(tmp_path, "clone", "-q", str(world.origin), str(dev))
    git(dev, "remote", "add", "server", str(server))
    return dev


def test_attested_push_accepted_unattested_and_other_tree_refused(
    world: World, server: Path, tmp_path: Path
) -> None:
    dev = developer(world, server, tmp_path)
    # unattested: refused, and nothing moved on the server
    code, out = push(dev, "main")
    assert code != 0 and "no-attestation" in out, out
    assert run_git(server, "rev-parse", "--verify", "-q", "main").returncode != 0
    # attested: the note travels in the same push, read from git's quarantine
    git(dev, "notes", f"--ref={NOTES}", "add", "-F", str(world.full), world.commit)
    code, out = push(dev, "main", NOTES)
    assert code == 0, out
    assert git(server, "rev-parse", "main") == world.commit
    # another tree, its note quoting the old attestation: refused
    (dev / "tests" / "test_0.py").write_text("def test_x0():\n    assert False\n")
    later = commit_all(dev, "red")
    git(dev, "notes", f"--ref={NOTES}", "add", "-F", str(world.full), later)
    code, out = push(dev, "main", NOTES)
    assert code != 0 and "attestation-other-tree" in out, out
    assert git(server, "rev-parse", "main") == world.commit
    # an unprotected ref is not judged (the control)
    code, out = push(dev, "main:refs/heads/feature")
    assert code == 0, out


def test_a_push_through_an_alias_of_a_protected_ref_is_judged(
    world: World, server: Path, tmp_path: Path
) -> None:
    """The server keeps ``master`` as a symbolic ref to ``main`` (an alias kept after renaming
    the default branch): a push to ``master`` moves ``main``, and is judged as a push to it."""
    dev = developer(world, server, tmp_path)
    git(dev, "notes", f"--ref={NOTES}", "add", "-F", str(world.full), world.commit)
    code, out = push(dev, "main", NOTES)
    assert code == 0, out
    git(server, "symbolic-ref", "refs/heads/master", "refs/heads/main")
    (dev / "tests" / "test_0.py").write_text("def test_x0():\n    assert False\n")
    later = commit_all(dev, "red, never attested")
    code, out = push(dev, "HEAD:master")
    assert code != 0 and "no-attestation" in out, out
    assert git(server, "rev-parse", "main") == world.commit
    # the control: an alias of an unprotected ref is not judged
    git(server, "update-ref", "refs/heads/feature", world.commit)
    git(server, "symbolic-ref", "refs/heads/topic", "refs/heads/feature")
    code, out = push(dev, "HEAD:topic")
    assert code == 0, out
    assert git(server, "rev-parse", "feature") == later


def test_a_partial_push_is_told_the_remedy_that_works_on_the_server(
    world: World, server: Path, tmp_path: Path
) -> None:
    """One part of three attested: refused as partial; the remedy named the pushed tree's
    allow-partial, which the server does not take (its policy is its own)."""
    dev = developer(world, server, tmp_path)
    git(dev, "notes", f"--ref={NOTES}", "add", "-F", str(world.parts[0]), world.commit)
    code, out = push(dev, "main", NOTES)
    assert code != 0 and "attestation-partial" in out, out
    assert "the server takes no allow-partial from a pushed tree" in out, out
    assert "or set allow-partial" not in out, out


def test_unsigned_where_the_server_requires_signatures(
    world: World, server: Path, tmp_path: Path
) -> None:
    dev = developer(world, server, tmp_path)
    git(dev, "notes", f"--ref={NOTES}", "add", "-F", str(world.unsigned), world.commit)
    code, out = push(dev, "main", NOTES)
    assert code != 0 and "attestation-unsigned" in out, out
    git(server, "config", "--unset", "genstamp.attestationSigners")
    code, out = push(dev, "main", NOTES)
    assert code == 0, out


@pytest.mark.parametrize("tested", [False, True], ids=["site", "a-test"])
def test_a_tree_with_nothing_to_test_needs_no_attestation(
    world: World, server: Path, tmp_path: Path, tested: bool
) -> None:
    """A published site (gh-pages) holds no Python project and no tests: `verify --rev`
    accepts it, saying so, but the server refused it `no-attestation` on every ref of
    `refs/*`, and `genstamp attest` could write none (h211). Control: a test file in it."""
    dev = developer(world, server, tmp_path)
    git(server, "config", "genstamp.protect", "refs/*")
    git(dev, "checkout", "-q", "--orphan", "gh-pages")
    git(dev, "rm", "-rq", "--cached", ".")
    for path in list(dev.iterdir()):
        if path.name != ".git":
            shutil.rmtree(path) if path.is_dir() else path.unlink()
    (dev / "index.html").write_text("<h1>docs</h1>\n")
    if tested:
        (dev / "test_site.py").write_text("def test_x():\n    assert True\n")
    commit_all(dev, "the site")
    code, out = push(dev, "gh-pages")
    assert (code == 0) != tested, out
    assert ("no-attestation" in out) == tested, out


def test_protected_refs_are_patterns() -> None:
    assert prereceive.protected("refs/heads/main", ["refs/heads/main"])
    assert prereceive.protected("refs/heads/release/1", ["refs/heads/release/*"])
    assert not prereceive.protected("refs/heads/feature", ["refs/heads/main"])
    ups = prereceive.parse("0" * 40 + " " + "a" * 40 + " refs/heads/main\n")
    assert ups == [prereceive.Update("0" * 40, "a" * 40, "refs/heads/main")]


@pytest.mark.parametrize(
    ("ref", "pattern", "expected"),
    [
        ("refs/heads/main", "main", True),  # G26 07: protected nothing
        ("refs/heads/main", "heads/main", True),
        ("refs/tags/v1.0", "v*", True),
        ("refs/heads/release/2", "release/*", True),
        ("refs/heads/feature", "main", False),
        ("refs/heads/mainline", "main", False),
        ("refs/notes/main", "main", False),
        ("refs/heads/main", "refs/main", False),
    ],
)
def test_a_short_pattern_stands_for_the_refs_git_takes_it_for(
    ref: str, pattern: str, expected: bool
) -> None:
    assert prereceive.protected(ref, [pattern]) is expected


def test_a_commit_of_an_attested_tree_passes_and_no_notes_ref_is_judged(
    world: World, server: Path, tmp_path: Path
) -> None:
    """The server protects every ref (``refs/*``): the notes pushed with a branch are
    attestations, not a commit to attest. A commit made of the attested tree (an empty commit
    on top, as a merge of a branch rebased on the target makes its branch's tree) is what was
    tested: its own commit has no note, the tree's commit has. The control: a commit of another
    tree is refused."""
    git(server, "config", "genstamp.protect", "refs/*")
    dev = developer(world, server, tmp_path)
    git(dev, "notes", f"--ref={NOTES}", "add", "-F", str(world.full), world.commit)
    code, out = push(dev, "--atomic", "main", NOTES)
    assert code == 0, out
    code, out = push(dev, NOTES)  # the notes alone
    assert code == 0, out
    git(dev, "commit", "-q", "--allow-empty", "-m", "release notes only")
    code, out = push(dev, "main")
    assert code == 0, out
    assert git(server, "rev-parse", "main") == git(dev, "rev-parse", "HEAD")
    (dev / "tests" / "test_0.py").write_text("def test_x0():\n    assert False\n")
    commit_all(dev, "red")
    code, out = push(dev, "main")
    assert code != 0 and "no-attestation" in out, out
