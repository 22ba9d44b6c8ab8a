"""An environment for git isolated from the machine it runs on: no global or system config, no
templates, no signing, a throwaway HOME, a fixed identity and ``main`` as the first branch.

The demo, the benchmark and the test suite start real git; what they show must not depend on
the user's ``~/.gitconfig`` (a default branch, a signing key, a template with hooks)."""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

import pygit2

IDENTITY = {
    "GIT_AUTHOR_NAME": "Test Author",
    "GIT_AUTHOR_EMAIL": "author@example.invalid",
    "GIT_COMMITTER_NAME": "Test Committer",
    "GIT_COMMITTER_EMAIL": "committer@example.invalid",
    "GIT_AUTHOR_DATE": "2026-01-01T00:00:00+00:00",
    "GIT_COMMITTER_DATE": "2026-01-01T00:00:00+00:00",
}

# The global config every isolated git reads: what a user's config may set that would change
# what the callers show (a branch named otherwise, a commit waiting for a passphrase).
GLOBAL_CONFIG = (
    "[init]\n\tdefaultBranch = main\n[commit]\n\tgpgsign = false\n[tag]\n\tgpgsign = false\n"
)

# Variables that point git at another repository, index or config, or that git and pre-commit
# set for the hooks they run: a caller started from a hook must not pass them on.
_INHERITED_PREFIXES = ("GIT_", "PRE_COMMIT_", "_PRE_COMMIT_")

_CONFIG_LEVELS = (
    pygit2.enums.ConfigLevel.GLOBAL,
    pygit2.enums.ConfigLevel.XDG,
    pygit2.enums.ConfigLevel.SYSTEM,
)


def isolated_env(home: Path, environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """``environ`` (default ``os.environ``) isolated for git, with ``home`` as HOME.

    Creates ``home`` with its global config and an empty template folder."""
    templates = home / "git-templates"
    templates.mkdir(parents=True, exist_ok=True)
    (home / ".gitconfig").write_text(GLOBAL_CONFIG)
    source = os.environ if environ is None else environ
    env = {k: v for k, v in source.items() if not k.startswith(_INHERITED_PREFIXES)}
    env.update(IDENTITY)
    env.update(
        HOME=str(home),
        XDG_CONFIG_HOME=str(home / ".config"),
        GIT_CONFIG_GLOBAL=str(home / ".gitconfig"),
        GIT_CONFIG_NOSYSTEM="1",
        GIT_TEMPLATE_DIR=str(templates),
    )
    return env


@contextmanager
def isolated_git(home: Path) -> Iterator[dict[str, str]]:
    """This process isolated for git (``os.environ`` and libgit2's config search paths) until
    the block ends; yields the environment."""
    saved_env = dict(os.environ)
    saved_paths = {level: pygit2.settings.search_path[level] for level in _CONFIG_LEVELS}
    env = isolated_env(home)
    try:
        os.environ.clear()
        os.environ.update(env)
        for level in _CONFIG_LEVELS:
            pygit2.settings.search_path[level] = str(home)
        yield env
    finally:
        for level, value in saved_paths.items():
            pygit2.settings.search_path[level] = value
        os.environ.clear()
        os.environ.update(saved_env)
