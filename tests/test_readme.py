"""README's "Using it", run as a new user follows it: every shell block runs, in order, in a
fresh repository and a fresh virtual environment, with a local snapshot of this repository
standing for the published one; every pre-commit config block passes `pre-commit
validate-config`; the CI block uses this repository's action."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from conftest import commit_all, git, init_repo, ok, snapshot_url, subprocess_env, write_calc

ROOT = Path(__file__).resolve().parents[1]
PLACEHOLDER = "https://example.invalid/genstamp.git"
FENCE = re.compile(r"^```(\w*)\n(.*?)^```", re.S | re.M)


def using_it() -> dict[str, list[tuple[str, str]]]:
    """The fenced blocks (language, text) of each `###` part of "Using it"."""
    text = (ROOT / "README.md").read_text()
    section = text.split("\n## Using it\n", 1)[1].split("\n## ", 1)[0]
    parts = {}
    for part in section.split("\n### ")[1:]:
        title, body = part.split("\n", 1)
        parts[title.strip()] = [(m.group(1), m.group(2)) for m in FENCE.finditer(body)]
    return parts


def shell_parts() -> list[str]:
    return [title for title, blocks in using_it().items() if any(b[0] == "console" for b in blocks)]


def test_using_it_has_blocks_and_only_known_languages() -> None:
    parts = using_it()
    assert len(shell_parts()) >= 2
    for blocks in parts.values():
        assert all(lang in ("console", "yaml") for lang, _ in blocks), blocks
    quick = (ROOT / "README.md").read_text().split("\n## Quick start\n", 1)[1].split("\n## ")[0]
    ci = (ROOT / ".ci" / "run").read_text()
    for _lang, block in FENCE.findall(quick):
        assert block.strip() in ci.replace(" -q", ""), block  # CI runs the quick start


def test_yaml_blocks_are_valid(genstamp_snapshot: Path, tmp_path: Path) -> None:
    commit = git(genstamp_snapshot, "rev-parse", "HEAD")
    checked = 0
    for blocks in using_it().values():
        for lang, text in blocks:
            if lang != "yaml":
                continue
            text = text.replace(PLACEHOLDER, snapshot_url(genstamp_snapshot)).replace(
                "COMMIT", commit
            )
            data = yaml.safe_load(text)
            if "repos" in data:
                path = tmp_path / f"config{checked}.yaml"
                path.write_text(text)
                proc = subprocess.run(
                    [sys.executable, "-m", "pre_commit", "validate-config", str(path)],
                    capture_output=True,
                    text=True,
                    env=subprocess_env(),
                )
                assert proc.returncode == 0, proc.stdout + proc.stderr
            else:
                steps = [s for job in data["jobs"].values() for s in job["steps"]]
                assert any(s.get("uses", "").startswith("genstamp/genstamp@") for s in steps)
            checked += 1
    assert checked >= 2


@pytest.fixture(scope="module")
def user_venv(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh virtual environment holding what a user's test environment already has: pytest."""
    venv = tmp_path_factory.mktemp("user") / "venv"
    # virtualenv (pre-commit's own dependency) seeds pip from its cached wheels: the same kind
    # of environment as `python -m venv` makes, without ensurepip's several seconds.
    subprocess.run([sys.executable, "-m", "virtualenv", "-q", str(venv)], check=True)
    subprocess.run(
        # no bytecode compiled at install (pygments alone is hundreds of modules): Python
        # compiles what it imports when it imports it
        [str(venv / "bin" / "pip"), "install", "-q", "--no-compile", "pytest"],
        check=True,
        env=subprocess_env(PIP_DISABLE_PIP_VERSION_CHECK="1"),
    )
    return venv


@pytest.mark.e2e
@pytest.mark.parametrize("part", shell_parts())
def test_shell_blocks_run_as_written(
    part: str,
    tmp_path: Path,
    genstamp_snapshot: Path,
    pre_commit_home: Path,
    user_venv: Path,
) -> None:
    """Each part's blocks, in order, in a fresh repository with a remote: every command exits
    0, and the push at the end is judged (the hook ran and accepted it)."""
    remote = tmp_path / "remote.git"
    git(tmp_path, "init", "-q", "--bare", str(remote))
    repo = init_repo(tmp_path / "project")
    write_calc(repo)
    commit_all(repo, "calc")
    git(repo, "remote", "add", "origin", str(remote))
    script = "\n".join(text for lang, text in using_it()[part] if lang == "console")
    first = shell_parts()[0]
    if part != first:
        # a reader of a later part has installed genstamp as the first part says (the parts
        # may run on different xdist workers, each with its own environment)
        blocks = [text for lang, text in using_it()[first] if lang == "console"]
        installs = [line for b in blocks for line in b.splitlines() if line.startswith("pip ")]
        script = "\n".join([*installs, script])
    script = script.replace(PLACEHOLDER, snapshot_url(genstamp_snapshot))
    env = subprocess_env(
        PATH=f"{user_venv / 'bin'}:/usr/local/bin:/usr/bin:/bin",
        VIRTUAL_ENV=str(user_venv),
        PRE_COMMIT_HOME=str(pre_commit_home),
        PIP_DISABLE_PIP_VERSION_CHECK="1",
    )
    out = ok(
        subprocess.run(
            ["bash", "-euxo", "pipefail", "-c", script],
            cwd=repo,
            capture_output=True,
            text=True,
            env=env,
            timeout=900,
        )
    )
    if "git push" in script:
        assert git(remote, "rev-parse", "main") == git(repo, "rev-parse", "main"), out
        hooks = repo / ".git" / "hooks"
        assert "genstamp-hook" in (hooks / "pre-push").read_text()
