"""``genstamp doctor``: check the whole set-up, one finding per check, each naming its fix.

The facts are gathered from the repository (its hooks folder, ``.pre-commit-config.yaml``, the
stamp, ``[tool.genstamp]``) and from the test environment's own interpreter, in a process of
its own: the environment the user's tests run in is not necessarily this one."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

from genstamp import config, generation, hooktext, install
from genstamp.errors import GenstampError
from genstamp.repo import Checkout
from genstamp.typedtuple import NamedTuple

RESTAMP_HOOKS = ("post-checkout", "post-merge", "post-rewrite")
INSTALL = "run `genstamp install`"


class Check(NamedTuple):
    name: str  # stable: hooks, pre-push, plugin, version, generation, environment,
    # configuration, start, index
    status: str  # "ok" | "warn" | "fail"
    what: str
    remedy: str = ""

    def line(self) -> str:
        tail = f" — {self.remedy}" if self.remedy and self.status != "ok" else ""
        return f"{self.status}: {self.name}: {self.what}{tail}"


def passed(checks: list[Check]) -> bool:
    return all(c.status != "fail" for c in checks)


def run(checkout: Checkout, python: str | None = None) -> list[Check]:
    where = install.layout(checkout)
    interpreter = Path(python) if python else default_python(checkout.workdir)
    hooks_version = _hooks_version(where.hooks_dir)
    pre_commit = _pre_commit_versions(checkout.workdir)
    return [
        check_hooks(where),
        check_pre_push(where),
        *check_plugin(interpreter, hooks_version, checkout.workdir, pre_commit),
        check_generation(checkout),
        check_environment(checkout.workdir, interpreter),
        check_configuration(checkout.workdir),
        check_start(checkout),
        check_index(checkout),
    ]


def default_python(workdir: Path) -> Path:
    venv = workdir / ".venv" / "bin" / "python"
    return venv if venv.exists() else Path(sys.executable)


def _uses_pre_commit_scrub(workdir: Path) -> bool:
    path = workdir / install.CONFIG
    if not path.exists():
        return False
    try:
        _types, ids = install.config_facts(path.read_text(encoding="utf-8"))
    except (GenstampError, OSError, UnicodeDecodeError):
        return False
    return "genstamp-scrub" in ids


def _not_runnable(*paths: Path) -> Check | None:
    """A failed check naming the hooks git will not run: it skips one that is not executable
    (saying so only in a hint), and pre-commit its legacy hook the same way."""
    idle = [str(p) for p in paths if p.exists() and not os.access(p, os.X_OK)]
    if not idle:
        return None
    return Check(
        "hooks",
        "fail",
        f"{', '.join(idle)} {'is' if len(idle) == 1 else 'are'} not executable: git does not "
        "run it, and the push or checkout goes unjudged",
        f"chmod +x {' '.join(idle)}",
    )


def check_hooks(where: install.Layout) -> Check:
    through_pre_commit = _uses_pre_commit_scrub(where.workdir)
    missing = []
    for hook in RESTAMP_HOOKS:
        path = where.hooks_dir / hook
        if hooktext.calls_genstamp(path, hook):
            continue
        if through_pre_commit and install.is_pre_commit_hook(path):
            continue
        missing.append(hook)
    idle = _not_runnable(*(where.hooks_dir / hook for hook in RESTAMP_HOOKS))
    if idle is not None and not missing:
        return idle
    gone = [h for h in RESTAMP_HOOKS if _pre_commit_gone(where.hooks_dir / h)]
    if gone and not missing:
        return Check(
            "hooks",
            "fail",
            f"{', '.join(gone)} {'runs' if len(gone) == 1 else 'run'} pre-commit, which is no "
            "longer installed where the hook looks for it: it fails git's command and begins "
            "no generation",
            "`pip install pre-commit`, then `pre-commit install` (or `genstamp install --plain`)",
        )
    if missing and all(install.is_pre_commit_hook(where.hooks_dir / h) for h in missing):
        return Check(
            "hooks",
            "fail",
            f"{', '.join(missing)} {'runs' if len(missing) == 1 else 'run'} pre-commit, but "
            "this checkout's .pre-commit-config.yaml has no genstamp-scrub hook (a branch from "
            "before genstamp was added to it): a checkout here begins no generation",
            "`genstamp stamp` after checking out such a branch, or add genstamp's hooks to its "
            ".pre-commit-config.yaml (or `genstamp install --plain`)",
        )
    if missing:
        return Check(
            "hooks",
            "fail",
            f"{', '.join(missing)} not installed in {where.hooks_dir}: no new generation "
            "after git changes the tree",
            INSTALL,
        )
    how = "through pre-commit" if through_pre_commit else "genstamp's own"
    shown = f"{', '.join(RESTAMP_HOOKS)} installed ({how})"
    if any(install.is_pre_commit_hook(where.hooks_dir / h) for h in RESTAMP_HOOKS):
        cleaning = install.clean_filters(where.workdir)
        if cleaning:
            return Check(
                "hooks",
                "warn",
                f"{shown}, and a clean filter is configured ({cleaning[0]}): pre-commit sets "
                "unstaged changes aside as it runs them and puts back what the filter cleaned, "
                "losing what it strips from an unstaged file (nbstripout's outputs)",
                "`genstamp install --plain` (its hooks set nothing aside)",
            )
    return Check("hooks", "ok", shown)


_INSTALL_PYTHON = re.compile(r"^INSTALL_PYTHON=(.*)$", re.M)


def _pre_commit_gone(hook: Path) -> bool:
    """Whether ``hook`` is pre-commit's and can run no pre-commit: neither the interpreter it
    was installed with (``INSTALL_PYTHON``) nor a ``pre-commit`` on PATH (its fallback)."""
    if hooktext.is_genstamp_hook(hook) or not install.is_pre_commit_hook(hook):
        return False  # (genstamp's own names pre-commit's marker: it tells a .legacy apart)
    try:
        text = hook.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return False
    found = _INSTALL_PYTHON.search(text)
    python = found.group(1).strip().strip("'\"") if found else ""
    if python and os.access(python, os.X_OK):
        return False
    return shutil.which("pre-commit") is None


def check_pre_push(where: install.Layout) -> Check:
    path = where.hooks_dir / "pre-push"
    legacy = where.hooks_dir / "pre-push.legacy"
    if hooktext.calls_genstamp(path, "pre-push"):
        if (idle := _not_runnable(path)) is not None:
            return idle._replace(name="pre-push")
        if hooktext.status_ignored(path, "pre-push"):
            said, _, remedy = hooktext.STATUS_IGNORED.format(path).partition(": end")
            return Check("pre-push", "warn", said, "end" + remedy)
        if (taken := hooktext.stdin_taken(path, "pre-push")) is not None:
            said = hooktext.STDIN_TAKEN.format(path, taken)
            return Check("pre-push", "warn", said, hooktext.STDIN_REMEDY)
        if (left := hooktext.stdin_left_none(path, "pre-push")) is not None:
            said = hooktext.STDIN_LEFT_NONE.format(path, left)
            return Check("pre-push", "warn", said, hooktext.STDIN_REMEDY)
        whose = "genstamp's" if hooktext.is_genstamp_hook(path) else "runs genstamp's"
        return Check("pre-push", "ok", f"{path} {whose}: it judges every pushed ref")
    if install.is_pre_commit_hook(path):
        if hooktext.is_genstamp_hook(legacy):
            if (idle := _not_runnable(path, legacy)) is not None:
                return idle._replace(name="pre-push")
            return Check(
                "pre-push",
                "ok",
                f"pre-commit's pre-push runs genstamp's ({legacy.name}): it judges every ref",
            )
        config = where.workdir / install.CONFIG
        text = config.read_text(encoding="utf-8") if config.exists() else ""
        if "genstamp-verify" in text:
            return Check(
                "pre-push",
                "warn",
                "pre-commit's genstamp-verify judges only the first pushed ref (not tags, not "
                "refs the remote has, not the other refs of a push)",
                INSTALL + " (genstamp's pre-push judges every ref)",
            )
    return Check("pre-push", "fail", f"no genstamp pre-push in {where.hooks_dir}", INSTALL)


_COMMAND = re.compile(r"^genstamp=\$\{GENSTAMP:-(.*)\}$", re.M)


# The hooks genstamp writes, the pre-push first: the one it chains behind pre-commit's
# (``.legacy``), or a post-* hook where the pre-push is a committed one (husky's) that calls it.
_OWN_HOOKS = ("pre-push", "pre-push.legacy", "post-checkout", "post-merge", "post-rewrite")


def _hooks_version(hooks_dir: Path) -> str | None:
    """The version of the genstamp the hooks genstamp installed run, or None."""
    for name in _OWN_HOOKS:
        try:
            text = (hooks_dir / name).read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        match = _COMMAND.search(text)
        if match and hooktext.MARKER in text:
            break
    else:
        return None
    command = match.group(1).strip("'")
    try:
        proc = subprocess.run(
            [command, "--version"],
            capture_output=True,
            text=True,
            errors="surrogateescape",
            timeout=60,
            check=False,
        )
    except OSError:
        return "missing: " + command
    said = proc.stdout.strip()
    if proc.returncode != 0 or not said:
        return None
    # "genstamp 0.2.0 (build 0123456789ab)"; a genstamp of before builds were named says
    # "genstamp 0.2.0"
    return said.split(" ", 1)[1] if said.startswith("genstamp ") else said.split()[-1]


# A genstamp as doctor names it: "0.2.0", or "0.2.0 (build 0123456789ab)" where the build is
# known (builds between releases share a version and differ in their formats and rules).
_LABEL = re.compile(r"(\S+)(?: \(build ([0-9a-f]+)\))?")
# (build.digest: the builds of 0.2.0 before --version named one have it too)
_BUILD_PROBE = (
    "from genstamp import __version__ as v, build; print(f'{v} (build {build.digest()[:12]})')"
)


def _same(one: str, other: str) -> bool:
    """Whether two genstamps named as ``_LABEL`` are one: the same version, and the same build
    where both builds are known."""
    a, b = _LABEL.fullmatch(one), _LABEL.fullmatch(other)
    if a is None or b is None:
        return one == other
    return a[1] == b[1] and (not (a[2] and b[2]) or a[2] == b[2])


def _builds(one: str, other: str) -> str:
    """What two genstamps of one version and two builds may differ in ("" for two versions)."""
    a, b = _LABEL.fullmatch(one), _LABEL.fullmatch(other)
    if a is None or b is None or a[1] != b[1]:
        return ""
    return " (one version, two builds: their formats and what they observe may differ)"


def _label_in(python: Path, version: str, cwd: Path | None = None) -> str:
    """``version`` with the build of the genstamp ``python`` imports, where it names one."""
    proc = _probe(python, "-c", _BUILD_PROBE, cwd=cwd) if python.exists() else None
    said = proc.stdout.strip() if proc is not None and proc.returncode == 0 else ""
    found = _LABEL.fullmatch(said)
    return said if found is not None and found[1] == version and found[2] else version


def _pre_commit_versions(workdir: Path) -> list[tuple[str, str]]:
    """(the repository and its rev, the version) of the genstamp that pre-commit's hooks run
    for each hook repository of the config whose hooks are genstamp's, as pre-commit built
    its environment (its store: ``PRE_COMMIT_HOME``, else ``~/.cache/pre-commit``); none
    where it built none yet."""
    import sqlite3

    try:
        text = (workdir / install.CONFIG).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return []
    wanted = [
        (repo, rev)
        for repo, rev, ids in install.config_repos(text)
        if repo not in ("local", "meta") and any(i.startswith("genstamp-") for i in ids)
    ]
    if not wanted:
        return []
    home = os.environ.get("PRE_COMMIT_HOME") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "pre-commit"
    )
    found = []
    uri = Path(home, "db.db").absolute().as_uri() + "?mode=ro"  # read only: never made here
    try:
        db = sqlite3.connect(uri, uri=True, timeout=5)  # sqlite3's default, as pre-commit waits
        try:
            for repo, rev in wanted:
                # (with additional_dependencies, pre-commit keys it `repo:dep,dep`)
                pattern = "".join("\\" + c if c in "\\%_" else c for c in repo) + ":%"
                row = db.execute(
                    "SELECT path FROM repos WHERE (repo = ? OR repo LIKE ? ESCAPE '\\')"
                    " AND ref = ?",
                    (repo, pattern, rev),
                ).fetchone()
                version = _installed_version(Path(row[0])) if row and row[0] else None
                if version is not None:
                    found.append((f"{repo} at {rev}", version))
        finally:
            db.close()
    except sqlite3.Error:
        return found
    return found


def _installed_version(repo_dir: Path) -> str | None:
    """The version of genstamp installed in pre-commit's environment in ``repo_dir``."""
    for info in sorted(repo_dir.glob("py_env-*/lib/python*/site-packages/genstamp-*.dist-info")):
        version = info.name[len("genstamp-") : -len(".dist-info")]
        return _label_in(info.parents[3] / "bin" / "python", version)
    return None


def _probe(
    python: Path, *args: str, cwd: Path | None = None
) -> subprocess.CompletedProcess[str] | None:
    try:
        return subprocess.run(
            [str(python), *args],
            capture_output=True,
            text=True,
            errors="surrogateescape",
            timeout=120,
            check=False,
            cwd=cwd,
        )
    except OSError:
        return None


def check_plugin(
    python: Path,
    hooks_version: str | None,
    workdir: Path,
    pre_commit: Sequence[tuple[str, str]] = (),
) -> list[Check]:
    # in the work tree, as the tests run: its configuration's addopts count (-p no:genstamp)
    proc = _probe(python, "-m", "pytest", "-VV", cwd=workdir)
    if proc is None:
        return [Check("plugin", "fail", f"{python} cannot be run", "name it with --python")]
    if proc.returncode != 0:
        there = _probe(python, "-c", "import pytest", cwd=workdir)
        if there is None or there.returncode != 0:
            return [
                Check(
                    "plugin",
                    "fail",
                    f"pytest does not run in {python}",
                    f"`{python} -m pip install pytest genstamp`",
                )
            ]
        # installed, and stopped by this work tree (its configuration, a plugin it needs):
        # what pytest said, not an install
        said = [ln.strip() for ln in (proc.stderr + proc.stdout).splitlines() if ln.strip()]
        told = [ln for ln in said if "error" in ln.lower() and "usage:" not in ln]
        first = (told or said or [""])[0]
        why = f": {first}" if first else f" (exit {proc.returncode})"
        return [
            Check(
                "plugin",
                "fail",
                f"pytest stops in this work tree{why}",
                f"fix what pytest says (`{python} -m pytest -VV` here shows it)",
            )
        ]
    listing = proc.stdout + proc.stderr
    found = re.search(r"\bgenstamp-(\S+)\s+at\s", listing)
    if found is None:
        there = _probe(python, "-c", "import genstamp.pytest_plugin", cwd=workdir)
        remedy = (
            "let pytest load it: drop `-p no:genstamp` (the configuration's addopts, "
            "PYTEST_ADDOPTS), or with PYTEST_DISABLE_PLUGIN_AUTOLOAD set add "
            "`-p genstamp.pytest_plugin`"
            if there is not None and there.returncode == 0
            else f"install genstamp there, as it is installed here (`{python} -m pip install "
            "git+URL@REV` or `pip install /path/to/genstamp`)"
        )
        return [
            Check(
                "plugin",
                "fail",
                f"genstamp's pytest plugin is not registered in {python}: tests write no evidence",
                remedy,
            )
        ]
    plugin_version = _label_in(python, found.group(1), cwd=workdir)
    checks = [Check("plugin", "ok", f"genstamp {plugin_version}'s plugin is active in {python}")]
    skewed = [(where, v) for where, v in pre_commit if not _same(v, plugin_version)]
    if skewed:
        where, version = skewed[0]
        checks.append(
            Check(
                "version",
                "warn",
                f"pre-commit's hooks run genstamp {version} ({where}), the tests genstamp "
                f"{plugin_version}{_builds(version, plugin_version)}: a stamp one of them "
                "cannot read it leaves as it is",
                "pin the genstamp the tests install as the `rev:` in "
                f"{install.CONFIG}, then `pre-commit install-hooks`",
            )
        )
    elif hooks_version is None and pre_commit:
        both = f"pre-commit's hooks and the tests run genstamp {plugin_version}"
        checks.append(Check("version", "ok", both))
    elif hooks_version is None:
        checks.append(
            Check(
                "version",
                "warn",
                "the hooks' genstamp version is unknown (no hook genstamp wrote runs it here)",
                "compare `genstamp --version` where the hooks run it with the tests' genstamp",
            )
        )
    elif hooks_version.startswith("missing: "):
        checks.append(
            Check(
                "version",
                "fail",
                f"the pre-push runs {hooks_version[9:]}, which does not exist",
                INSTALL + " again",
            )
        )
    elif not _same(hooks_version, plugin_version):
        checks.append(
            Check(
                "version",
                "warn",
                f"the hooks run genstamp {hooks_version}, the tests genstamp {plugin_version}"
                + _builds(hooks_version, plugin_version),
                "install the same genstamp in both, then " + INSTALL,
            )
        )
    else:
        checks.append(Check("version", "ok", f"hooks and tests run genstamp {plugin_version}"))
    return checks


def check_generation(checkout: Checkout) -> Check:
    try:
        gen = generation.current(checkout)
    except GenstampError as exc:
        return Check("generation", "fail", exc.message, "run `genstamp stamp`")
    if gen is None:
        return Check("generation", "fail", "no generation: evidence would be refused", INSTALL)
    return Check("generation", "ok", f"generation {gen.id[:12]} ({gen.trigger})")


def check_environment(workdir: Path, python: Path) -> Check:
    prefix = _probe(python, "-c", "import sys; print(sys.prefix)")
    said = prefix.stdout.strip() if prefix and prefix.returncode == 0 else ""
    # (an absolute folder, or nothing known: a program that printed nothing is no Python)
    where = Path(said) if os.path.isabs(said) else None
    held = _in_project(workdir, where) if where is not None else None
    if held is None:
        return Check(
            "environment",
            "warn",
            f"the test environment ({where or python}) is outside the project: an editable "
            "install in it may point at another checkout",
            "`python -m venv .venv` in the project and install there (the audit flags foreign "
            "code)",
        )
    stray = _not_ignored(workdir, held)
    if stray:
        shown = ", ".join(stray[:3]) + (f" and {len(stray) - 3} more" if len(stray) > 3 else "")
        rel = held.relative_to(workdir.resolve()).as_posix()
        if held.is_symlink():  # (`.venv/` matches no link; a file written through it, nothing)
            remedy = f"list `/{rel}` in .gitignore (a link: `{rel}/` does not match it)"
        elif rel == ".":  # `python -m venv .`: its own folders, not the project's files
            remedy = "list its folders (`/bin/`, `/lib/`, `/include/`, `/pyvenv.cfg`) in .gitignore"
        else:
            remedy = (
                f"ignore it whole: `echo '*' > {held / '.gitignore'}` (as Python 3.13's venv "
                f"writes), or list `/{rel}/` in .gitignore"
            )
        return Check(
            "environment",
            "fail",
            f"the test environment ({held}) is in the project and git does not ignore all of "
            f"it ({shown}): every tree the tests run on holds it, and none that is pushed",
            remedy,
        )
    return Check("environment", "ok", f"the test environment is in the project ({where})")


_VENV_PARTS = ("bin", "Scripts", "lib", "lib64", "include", "Include", "Lib", "share", "pyvenv.cfg")


def _in_project(workdir: Path, where: Path) -> Path | None:
    """The environment's folder as the work tree holds it: the folder itself, or a link in
    the work tree to one kept elsewhere (`.venv -> ~/envs/x`); None when it is outside."""
    top = workdir.resolve()
    for form in (Path(os.path.abspath(where)), where.resolve()):
        if form.is_relative_to(top):
            return top / form.relative_to(top)
    return None


def _not_ignored(workdir: Path, held: Path) -> list[str]:
    """The files of the environment at ``held`` that git would add to the tree (untracked,
    not ignored), asked of the repository that holds it (a
    submodule's, for one in a submodule); none when git cannot say."""
    rel = held.relative_to(workdir.resolve()).as_posix()
    specs = [rel]
    if rel == ".":  # `python -m venv .`: its own files, not every file of the project
        specs = [n for n in _VENV_PARTS if os.path.lexists(held / n)]
        if not specs:
            return []
    for cwd, spec in ((workdir, specs), (held, ["."] if rel != "." else specs)):
        listed = subprocess.run(
            ["git", "ls-files", "-z", "--others", "--exclude-standard", "--", *spec],
            cwd=cwd,
            capture_output=True,
            check=False,
        )
        if listed.returncode == 0:
            return [os.fsdecode(n) for n in listed.stdout.split(b"\0") if n]
    return []


def check_start(checkout: Checkout) -> Check:
    """Whether the tests of a large tree may begin while the plugin takes the tree at the
    start, or wait for it since a run's tests changed the work tree as they began."""
    from genstamp.trees import WAIT_FILE

    marker = checkout.common_state / WAIT_FILE
    if marker.exists():
        return Check(
            "start",
            "warn",
            "a run's tests changed the work tree as they began: every run takes the tree at "
            "the start before its first test",
            f"remove {marker} once the suite no longer writes into the work tree",
        )
    return Check("start", "ok", "the tests of a large tree begin as the tree is taken")


def check_index(checkout: Checkout) -> Check:
    """Whether libgit2 reads the index (not a split or sparse index git alone can read)."""
    import pygit2

    from genstamp.errors import unreadable_index

    try:
        checkout.repo.index.read(force=True)
    except pygit2.GitError as exc:
        remedy = unreadable_index(exc) or "check that `git status` works here"
        return Check("index", "fail", f"libgit2 cannot read the index: {exc}", remedy)
    return Check("index", "ok", "libgit2 reads the index")


def check_configuration(workdir: Path) -> Check:
    try:
        config.load(workdir)
    except GenstampError as exc:
        return Check("configuration", "fail", exc.message, exc.remedy or "fix [tool.genstamp]")
    return Check("configuration", "ok", "[tool.genstamp] parses (or is absent)")
