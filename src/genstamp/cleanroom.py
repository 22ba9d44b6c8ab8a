"""``genstamp clean-run``: the tree being judged, tested again in a second, clean directory.

The postmortem's clean runner, on this machine: a new checkout of exactly the judged tree
(a detached linked worktree of a commit made for it: no object is copied, git's smudge
conversion applies, no ref, index or reflog of the user's changes), a new virtual environment
with nothing of the user's (``genstamp.envcache``), the project installed as it says, and the
suite run with the plugin in that checkout's own generation. The clean checkout's gate judges
that run; its verdict and every test's outcome come back as clean-room evidence for the tree
(``genstamp.cleanrecord``), which the user's gate compares with the warm evidence.

Steps, in order: checkout, environment, install, run. A failing step raises ``GenstampError``
naming the step, with its log kept in the git dir.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any

from genstamp import cleanrecord, config, envcache, evidence, roots, rules, selfwheel
from genstamp.errors import EXIT_USAGE, GenstampError
from genstamp.identity import tree_identity
from genstamp.paths import inside
from genstamp.repo import Checkout, common_gitdir, open_checkout
from genstamp.typedtuple import NamedTuple

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib  # type: ignore[import-not-found,unused-ignore]

STEPS = ("checkout", "environment", "install", "run")
# The identity of the commit made for the judged tree: it is never on a branch or in a reflog.
COMMITTER = {
    "GIT_AUTHOR_NAME": "genstamp clean-run",
    "GIT_AUTHOR_EMAIL": "genstamp@localhost",
    "GIT_COMMITTER_NAME": "genstamp clean-run",
    "GIT_COMMITTER_EMAIL": "genstamp@localhost",
}
REMEDY = {
    "checkout": "check that `git worktree add` works in this repository and that the "
    "temporary folder is writable and has room (set TMPDIR to choose it)",
    "environment": "check that the package index (pip.conf, PIP_*/UV_*) holds the test "
    "dependencies and that the interpreter can make a virtual environment (python -m venv; "
    "uv venv with genstamp[clean])",
    "install": "fix the project's install (`clean-install` in [tool.genstamp]) or the package "
    "index settings (pip.conf, PIP_*/UV_*)",
    "run": "run `genstamp stamp` and pytest in a fresh clone by hand to see what fails (pytest's "
    "own words are at the end of the log)",
}

USAGE_ERROR = 4  # pytest.ExitCode.USAGE_ERROR (pytest is not imported here)

Progress = Callable[[str, str, float], None]  # (step, "start" | "done" | "failed", seconds)


class StepTime(NamedTuple):
    name: str
    seconds: float
    log: str


class CleanRun(NamedTuple):
    record: cleanrecord.CleanRoom
    record_path: Path
    steps: tuple[StepTime, ...]
    installer: str
    env_reused: bool
    kept: Path | None  # the clean checkout, when --keep


def logs_folder(checkout: Checkout) -> Path:
    return cleanrecord.folder(checkout.gitdir) / "logs"


def env_cache(checkout: Checkout) -> Path:
    return cleanrecord.folder(checkout.gitdir) / "envs"


def default_install(root: Path) -> list[str]:
    """What ``clean-install`` means unset: the project with its test extra when it has one
    (``test``, else ``tests``, else ``testing``; non-editable, as a clean runner's ``pip
    install``: a module left out of the wheel fails there too), the project alone otherwise,
    nothing when it is not an installable project."""
    try:
        data = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError, RecursionError):
        data = {}
    project = data.get("project")
    if not isinstance(project, dict) and not _installable(root, data):
        return []
    extra = _test_extra(root, data)
    return [f".[{extra}]"] if extra else ["."]


TEST_EXTRAS = ("test", "tests", "testing")  # the extras a project's tests need, by its naming


def _test_extra(root: Path, pyproject: dict[str, Any]) -> str | None:
    """The test extra (``TEST_EXTRAS``, the first) the project declares, wherever its build
    reads extras from: ``[project.optional-dependencies]``, setuptools' ``dynamic`` table,
    ``setup.cfg``'s ``[options.extras_require]``, a dict of ``setup.py`` given as
    ``extras_require``, poetry's ``[tool.poetry.extras]``; None where it declares none."""
    found: list[object] = []
    project = pyproject.get("project")
    if isinstance(project, dict):
        found.append(project.get("optional-dependencies"))
    tool = pyproject.get("tool")
    tool = tool if isinstance(tool, dict) else {}
    setuptools = tool.get("setuptools")
    dynamic = setuptools.get("dynamic") if isinstance(setuptools, dict) else None
    found.append(dynamic.get("optional-dependencies") if isinstance(dynamic, dict) else None)
    poetry = tool.get("poetry")
    found.append(poetry.get("extras") if isinstance(poetry, dict) else None)
    from genstamp import ini

    with contextlib.suppress(OSError, UnicodeDecodeError, ValueError):
        sections = ini.parse((root / "setup.cfg").read_text(encoding="utf-8"))
        found.append(sections.get("options.extras_require", {}))
    found.append(dict.fromkeys(_setup_py_extras(root / "setup.py")))
    names = {name for extras in found if isinstance(extras, dict) for name in extras}
    return next((name for name in TEST_EXTRAS if name in names), None)


def _setup_py_extras(path: Path) -> set[str]:
    """The extras ``setup.py`` gives ``extras_require`` as a dict: written in the call, as a
    ``dict(test=[...])`` call, or a name assigned either."""
    import ast

    try:
        tree = ast.parse(path.read_bytes())
    except (OSError, SyntaxError, ValueError, RecursionError):
        return set()

    def keys(node: ast.AST | None) -> set[str]:
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            if node.func.id == "dict":  # dict(test=[...], docs=[...])
                return {k.arg for k in node.keywords if k.arg is not None}
        if not isinstance(node, ast.Dict):
            return set()
        return {
            k.value for k in node.keys if isinstance(k, ast.Constant) and isinstance(k.value, str)
        }

    named = {
        target.id: keys(node.value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Assign) and isinstance(node.value, (ast.Dict, ast.Call))
        for target in node.targets
        if isinstance(target, ast.Name)
    }
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.keyword) and node.arg == "extras_require":
            value = node.value
            found |= keys(value) or (
                named.get(value.id, set()) if isinstance(value, ast.Name) else set()
            )
    return found


def _installable(root: Path, pyproject: dict[str, object]) -> bool:
    """Whether pip installs the folder ``root`` as a project though its ``pyproject.toml``
    has no ``[project]`` table: a ``[build-system]`` table (poetry-core's ``[tool.poetry]``,
    setuptools' metadata in ``setup.cfg``), a ``setup.py``, or, beside a ``pyproject.toml``
    (pip installs no folder that has neither file), a ``setup.cfg`` that gives setuptools a
    project (``[metadata]``, ``[options]``)."""
    if isinstance(pyproject.get("build-system"), dict) or (root / "setup.py").is_file():
        return True
    if not (root / "pyproject.toml").is_file():
        return False
    from genstamp import ini

    try:
        sections = ini.parse((root / "setup.cfg").read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError):
        return False
    return "metadata" in sections or "options" in sections


def project_args(args: Sequence[str]) -> list[str]:
    """The entries of the install arguments that install the checkout itself (``.``,
    ``.[test]``, ``-e .``): what is installed again on every run."""
    out: list[str] = []
    items = list(args)
    for i, arg in enumerate(items):
        target = arg.split("[", 1)[0]
        if target in (".", "./"):
            if i and items[i - 1] in ("-e", "--editable"):
                out.append(items[i - 1])
            out.append(arg)
        elif arg.startswith("--editable=.") or (arg.startswith("-e.") and len(arg) > 2):
            out.append(arg)
    return out


def build_requirements(root: Path) -> list[str]:
    """What building the project needs (installed once, beside the environment, so that the
    project's own install on each run needs no index: ``--no-build-isolation``)."""
    try:
        data = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError, RecursionError):
        data = {}
    system = data.get("build-system")
    if isinstance(system, dict) and isinstance(system.get("requires"), list):
        return [str(r) for r in system["requires"]]
    return ["setuptools>=40.8.0", "wheel"]  # pip's own default for a project without one


# -- the checkout -------------------------------------------------------------------------------


def _git(
    cwd: Path, *args: str, env: Mapping[str, str] | None = None, log: IO[str] | None = None
) -> str:
    environ = envcache.clean_environ(None) if env is None else dict(env)
    proc = subprocess.run(
        ["git", *args],
        cwd=cwd,
        env=environ,
        capture_output=True,
        text=True,
        errors="surrogateescape",  # paths as the OS gave them (no UTF-8: `caf\xe9`)
        stdin=subprocess.DEVNULL,
    )
    if log is not None:
        log.write(f"$ git {' '.join(args)}\n{proc.stdout}{proc.stderr}")
    if proc.returncode != 0:
        raise envcache.StepFailed(["git", *args], proc.returncode)
    return proc.stdout.strip()


def _its(checkout: Checkout) -> list[str]:
    """git's options that name the checkout's repository itself: the processes the clean room
    starts drop GIT_DIR and GIT_WORK_TREE (the clean checkout is no such repository), which a
    checkout reached through them needs."""
    return ["--git-dir", str(checkout.gitdir), "--work-tree", str(checkout.workdir)]


def judged_commit(checkout: Checkout, rev: str | None, log: IO[str]) -> tuple[str, str]:
    """(commit, tree) to check out: ``rev``'s commit; HEAD when the work tree's identity is its
    tree; or a commit made for that identity (uncommitted and untracked files included) on top
    of HEAD: a dangling object, on no branch and in no reflog, that ``git gc`` prunes when the
    run is over. Either way the clean checkout has the history a commit of the tree has (``git
    describe``, setuptools-scm's version from the last tag: A26 12)."""
    if rev is not None:
        try:
            commit = _git(
                checkout.workdir,
                *_its(checkout),
                "rev-parse",
                "--verify",
                "--quiet",
                f"{rev}^{{commit}}",
            )
        except envcache.StepFailed:
            raise GenstampError(
                f"--rev {rev} names no commit here", "name a branch, a tag or a commit id"
            ) from None
        return commit, _git(checkout.workdir, *_its(checkout), "rev-parse", f"{commit}^{{tree}}")
    tree = tree_identity(checkout)  # writes the tree object to the store
    try:
        head = _git(
            checkout.workdir, *_its(checkout), "rev-parse", "--verify", "--quiet", "HEAD^{commit}"
        )
    except envcache.StepFailed:
        head = ""  # no commit yet
    if head and _git(checkout.workdir, *_its(checkout), "rev-parse", f"{head}^{{tree}}") == tree:
        return head, tree
    env = {**envcache.clean_environ(None), **COMMITTER}
    parent = ["-p", head] if head else []
    commit = _git(
        checkout.workdir,
        *_its(checkout),
        "commit-tree",
        tree,
        *parent,
        "-m",
        "genstamp clean-run",
        env=env,
        log=log,
    )
    return commit, tree


RAM_FOLDER = Path("/dev/shm")
RAM_FREE = 2 << 30  # bytes a RAM-backed folder must have free to hold a clean checkout


def temp_base(environ: Mapping[str, str] | None = None, ram: Path = RAM_FOLDER) -> str | None:
    """Where the clean checkout goes: ``TMPDIR`` when it is set (the user chose); else a
    RAM-backed folder (``/dev/shm``, a tmpfs) that is writable, has 2 GiB free and lets
    programs run (not mounted ``noexec``), since
    writing a tree of small files to a busy disk costs seconds where memory costs tenths;
    else the system's temporary folder (None: ``tempfile``'s choice)."""
    environ = os.environ if environ is None else environ
    if environ.get("TMPDIR"):
        return None
    try:
        free = os.statvfs(ram)
    except OSError:
        return None
    if free.f_bavail * free.f_frsize < RAM_FREE or not os.access(ram, os.W_OK | os.X_OK):
        return None
    if free.f_flag & os.ST_NOEXEC:  # (Docker's default: no program of the checkout would run)
        return None
    return str(ram)


@contextmanager
def linked_checkout(checkout: Checkout, commit: str, log: IO[str], keep: bool) -> Iterator[Path]:
    """A detached linked worktree of ``commit`` in a new temporary folder outside the work
    tree: the checkout, in a folder of its own. git's hooks do not run for it (``core.hooksPath``
    is pointed at an empty folder for this one command). Removed with its admin entry at the
    end, on failure and on Ctrl-C too, unless ``keep``."""
    tmp = Path(tempfile.mkdtemp(prefix="genstamp-clean-", dir=temp_base())).resolve()
    if tmp == checkout.workdir or checkout.workdir in tmp.parents:
        os.rmdir(tmp)
        raise GenstampError(
            f"the temporary folder {tmp} is inside the work tree",
            "set TMPDIR to a folder outside the repository",
        )
    work = tmp / (checkout.workdir.name or "checkout")
    no_hooks = tmp / ".no-hooks"
    no_hooks.mkdir()
    added = False
    try:
        # no files yet: git (2.36 and later) gives a new worktree the sparse-checkout settings
        # of the one it is added from, and a clean checkout holds the whole tree
        hooks = ("-c", f"core.hooksPath={no_hooks}")
        add = ("worktree", "add", "--detach", "--quiet", "--no-checkout", str(work), commit)
        _git(checkout.workdir, *_its(checkout), *hooks, *add, log=log)
        added = True
        _not_sparse(work, log)
        _git(work, *hooks, "-c", "core.sparseCheckout=false", "reset", "-q", "--hard", commit,
             log=log)  # fmt: skip
        _submodules(checkout.workdir, work, no_hooks, log)
        # git-lfs's filter writes its hooks into the hooks folder git names: none of them count
        shutil.rmtree(no_hooks, ignore_errors=True)
        yield work
    finally:
        if not keep:
            remove_checkout(checkout, tmp, work if added else None)


def _submodules(source: Path, work: Path, no_hooks: Path, log: IO[str]) -> None:
    """Each submodule the clean checkout's tree records, checked out at its recorded commit
    from ``source``'s own clone of it (its objects shared, nothing fetched), and theirs in
    turn: as ``git clone --recurse-submodules`` of this repository has them. One ``source``
    has not cloned, or whose commit no remote of its clone has (made here, never pushed: a
    fresh clone cannot fetch it), stays an empty folder (the run's log says so)."""
    listed = _git(work, "ls-files", "--stage", "-z")
    gitlinks = {}
    for entry in listed.split("\0"):
        meta, _, rel = entry.partition("\t")
        fields = meta.split()
        if len(fields) == 3 and fields[0] == "160000":
            gitlinks[rel] = fields[1]
    recursed = _cloned_recursively(work) if gitlinks else set()
    for rel, sha in gitlinks.items():
        if rel not in recursed:
            log.write(f"submodule {rel}: a recursive clone skips it, left empty\n")
            continue
        mine, into = source / rel, work / rel
        # a commit a remote of that clone has (what a recursive clone fetches), not one made
        # here and never pushed: a fresh clone cannot fetch that one; of the remote the tree's
        # .gitmodules names, where one of the clone's is it (not a fork pushed to alone)
        remotes = [f"refs/remotes/{r}/" for r in _remotes_at(source, work, rel, mine)]
        known = subprocess.run(
            [
                "git",
                "-C",
                str(mine),
                "for-each-ref",
                "--contains",
                sha,
                *(remotes or ["refs/remotes"]),
            ],
            env=envcache.clean_environ(None),
            capture_output=True,
            text=True,
        )
        if not (mine / ".git").exists() or known.returncode != 0 or not known.stdout.strip():
            log.write(f"submodule {rel}: no remote of its clone here has {sha}, left empty\n")
            continue
        hooks = ("-c", f"core.hooksPath={no_hooks}")  # and no hook samples in the clone
        clone = ("clone", "-q", "--shared", "--no-checkout", "--template", str(no_hooks))
        _git(work, *hooks, *clone, str(mine), str(into), log=log)
        _git(into, *hooks, "checkout", "-q", "--detach", sha, log=log)
        _submodules(mine, into, no_hooks, log)


def _remotes_at(source: Path, work: Path, rel: str, mine: Path) -> list[str]:
    """The remotes of ``mine`` (the clone of submodule ``rel`` here) whose URL is the one the
    tree's ``.gitmodules`` gives it, resolved as git resolves a relative one (against the URL
    of ``source``'s ``origin``); none where none is (then any remote counts)."""
    try:
        remotes = _git(mine, "config", "-z", "--get-regexp", r"^remote\..*\.url$")
    except envcache.StepFailed:
        return []
    values = _gitmodules(work)
    names = [
        k[len("submodule.") : -len(".path")]
        for k, v in values.items()
        if k.endswith(".path") and v == rel
    ]
    url = values.get(f"submodule.{names[0]}.url", "") if names else ""
    if url.startswith(("./", "../")):
        try:
            base = _git(source, "config", "--get", "remote.origin.url").strip()
        except envcache.StepFailed:
            return []
        url = _relative_url(base, url)
    wanted = _same_url(url)
    found = []
    for entry in remotes.split("\0"):
        key, _, value = entry.partition("\n")
        if key and _same_url(value) == wanted and wanted:
            found.append(key[len("remote.") : -len(".url")])
    return found


def _relative_url(base: str, url: str) -> str:
    """``url`` (``../lib.git``, ``./lib``) taken from ``base``, as git takes a submodule's."""
    base = base.rstrip("/")
    while True:
        if url.startswith("./"):
            url = url[2:]
        elif url.startswith("../"):
            url = url[3:]
            cut = max(base.rfind("/"), base.rfind(":"))
            base = base[:cut] if cut > 0 else base
        else:
            return f"{base}/{url}"


def _same_url(url: str) -> str:
    """``url`` as compared: no trailing ``/`` or ``.git``; a local folder by its real path."""
    url = url.strip().rstrip("/").removesuffix(".git").rstrip("/")
    if url.startswith("file://"):
        url = url[len("file://") :]
    if url and "://" not in url and ":" not in url.split("/")[0]:
        url = os.path.realpath(url).removesuffix(".git")
    return url


def _gitmodules(work: Path) -> dict[str, str]:
    """The settings of the tree's ``.gitmodules`` in ``work`` (``submodule.NAME.path`` ->
    value), as git reads them; none where it has none or git cannot read it."""
    gitmodules = work / ".gitmodules"
    if not gitmodules.is_file():
        return {}
    try:
        listed = _git(work, "config", "-z", "--file", str(gitmodules), "--list")
    except envcache.StepFailed:
        return {}
    return dict(entry.partition("\n")[::2] for entry in listed.split("\0") if entry)


def _cloned_recursively(work: Path) -> set[str]:
    """The submodule paths ``git clone --recurse-submodules`` checks out: those the tree's
    ``.gitmodules`` names, less those it sets ``update = none`` (``active`` is a setting of the
    repository's own config, which a clone takes from no ``.gitmodules``)."""
    values = _gitmodules(work)
    paths = set()
    for key, value in values.items():
        if key.startswith("submodule.") and key.endswith(".path"):
            name = key[len("submodule.") : -len(".path")]
            if values.get(f"submodule.{name}.update", "").lower() != "none":
                paths.add(value)
    return paths


def _not_sparse(work: Path, log: IO[str]) -> None:
    """The new worktree ``work`` without the sparse-checkout settings it was given: its own
    patterns file, and its own config's keys where the repository keeps config per worktree
    (else they are the repository's: the checkout sets them aside on its command line)."""
    patterns = Path(_git(work, "rev-parse", "--path-format=absolute", "--git-path",
                         "info/sparse-checkout"))  # fmt: skip
    patterns.unlink(missing_ok=True)
    shared = subprocess.run(
        ["git", "config", "--bool", "extensions.worktreeConfig"],
        cwd=work,
        env=envcache.clean_environ(None),
        capture_output=True,
        text=True,
    )
    if shared.stdout.strip() == "true":
        for key in ("core.sparseCheckout", "core.sparseCheckoutCone"):
            with contextlib.suppress(envcache.StepFailed):  # (5: no such key)
                _git(work, "config", "--worktree", "--unset-all", key, log=log)


def remove_checkout(checkout: Checkout, tmp: Path, work: Path | None) -> None:
    if work is not None:
        with contextlib.suppress(envcache.StepFailed):  # its entry alone removed below else
            _git(
                checkout.workdir,
                *_its(checkout),
                "worktree",
                "remove",
                "--force",
                "--force",
                str(work),
            )
    shutil.rmtree(tmp, ignore_errors=True)
    if work is not None:
        _forget_worktree(checkout, work)


def _forget_worktree(checkout: Checkout, work: Path) -> None:
    """git's record of the clean checkout at ``work``, where `git worktree remove` left it:
    that one entry, as `git worktree prune` would remove it, never another worktree's (a
    prune removes every entry whose folder is missing now: a worktree moved for a moment, or
    on a drive not mounted, would lose its HEAD, index and refs)."""
    admin = common_gitdir(checkout.gitdir) / "worktrees"
    mine = os.path.realpath(work / ".git")
    for entry in admin.glob("*/gitdir") if admin.is_dir() else ():
        try:
            named = entry.read_text(encoding="utf-8", errors="replace").strip()
        except OSError:
            continue
        if os.path.realpath(named) == mine:
            shutil.rmtree(entry.parent, ignore_errors=True)


# -- the run ------------------------------------------------------------------------------------


KEPT_LOGS = 10  # the newest clean runs whose step logs are kept


def _run_logs(logs: Path) -> Path:
    """A folder of this run's own for its step logs, under ``logs``: a clean run started beside
    it (another terminal, another rev) neither removes nor overwrites the log its error names.
    The ``KEPT_LOGS`` newest runs' folders are kept (names sort by start time), and the loose
    logs an earlier genstamp wrote are removed."""
    logs.mkdir(parents=True, exist_ok=True)
    for loose in logs.glob("*.log"):
        loose.unlink(missing_ok=True)
    runs = sorted(p for p in logs.iterdir() if p.is_dir() and not p.is_symlink())
    for old in runs[: max(0, len(runs) - (KEPT_LOGS - 1))]:
        shutil.rmtree(old, ignore_errors=True)
    stamp = time.strftime("%Y%m%dT%H%M%S", time.gmtime())
    return Path(tempfile.mkdtemp(prefix=f"{stamp}-", dir=logs))


class _Steps:
    """Times each step, keeps its log, and turns a failure into one line naming the step."""

    def __init__(self, logs: Path, progress: Progress) -> None:
        self.logs = _run_logs(logs)
        self.progress = progress
        self.done: list[StepTime] = []

    @contextmanager
    def step(self, name: str) -> Iterator[IO[str]]:
        path = self.logs / f"{name}.log"
        start = time.monotonic()
        self.progress(name, "start", 0.0)
        with open(path, "w", encoding="utf-8", errors="replace") as log:
            try:
                yield log
            except envcache.StepFailed as exc:
                self.progress(name, "failed", time.monotonic() - start)
                raise GenstampError(
                    f"clean-run: the {name} step failed: {exc}; its log: {path}",
                    REMEDY[name],
                    EXIT_USAGE,
                ) from None
            except BaseException:
                self.progress(name, "failed", time.monotonic() - start)
                raise
        seconds = time.monotonic() - start
        self.done.append(StepTime(name, seconds, str(path)))
        self.progress(name, "done", seconds)


@contextlib.contextmanager
def _terminated_as_interrupted() -> Iterator[None]:
    """A SIGTERM (a CI job cancelled, `timeout`) ends the clean run as Ctrl-C does: its step's
    process ends, the clean checkout and its worktree entry go. Left as it was where this is
    no main thread, or the signal has a handler of someone else's."""
    import signal

    def interrupt(signum: int, frame: object) -> None:
        raise KeyboardInterrupt

    taken = signal.getsignal(signal.SIGTERM) is signal.SIG_DFL
    if taken:
        try:
            signal.signal(signal.SIGTERM, interrupt)
        except ValueError:  # not the main thread
            taken = False
    try:
        yield
    finally:
        if taken:
            signal.signal(signal.SIGTERM, signal.SIG_DFL)


def clean_run(
    checkout: Checkout,
    *,
    rev: str | None = None,
    pytest_args: Sequence[str] = (),
    keep: bool = False,
    installer: str = "auto",
    progress: Progress | None = None,
) -> CleanRun:
    """Test the judged tree (the work tree's identity, or ``rev``'s) in a clean checkout and a
    clean environment; keep and return its clean-room record."""
    steps = _Steps(logs_folder(checkout), progress or (lambda step, event, seconds: None))
    chosen = envcache.find_installer(installer)
    with contextlib.ExitStack() as stack:
        stack.enter_context(_terminated_as_interrupted())
        with steps.step("checkout") as log:
            commit, tree = judged_commit(checkout, rev, log)
            work = stack.enter_context(linked_checkout(checkout, commit, log, keep))
        args = _install_args(work, rev)
        home = _project_home(work, args)  # the top, or the suite's folder below it
        environ = envcache.clean_environ(None)
        digest = envcache.key(home, args, chosen, environ)
        cache = env_cache(checkout)
        with envcache.locked(cache, digest):
            with steps.step("environment") as log:

                def deps() -> list[str]:  # written only for an environment made anew
                    wheel = selfwheel.write()  # the running genstamp (the same plugin)
                    stack.callback(shutil.rmtree, wheel.parent, True)
                    return [str(wheel), "pytest"]

                build = build_requirements(home)
                if chosen.tool == "pip":
                    build.append("wheel")  # setuptools before 70.1 builds wheels with it
                project = roots.project_name(home) or ""
                env = envcache.prepare(cache, digest, chosen, deps, environ, log, project, build)
            with steps.step("install") as log:
                if not _install(env, chosen, args, work, log, checkout.workdir):
                    log.write("a new environment\n")
                    envcache.discard(env.path)
                    env = envcache.prepare(
                        cache, digest, chosen, deps, environ, log, project, build
                    )
                    _install(env, chosen, args, work, log, checkout.workdir)
                envcache.remember_contents(env.path, project)
                installed = _with_install_products(work, tree, log)
            with steps.step("run") as log:
                verdict, outcomes = _run(
                    env, work, pytest_args, log, checkout.workdir, _installed_whole(args)
                )
        install_line = f"{chosen.tool}: {' '.join(args) or '(nothing to install)'}"
        record = cleanrecord.new(
            tree,
            verdict,
            outcomes,
            narrowed=bool(pytest_args),
            install=install_line,
            installed=installed,
        )
        path = cleanrecord.write(checkout.gitdir, record)
    return CleanRun(
        record, path, tuple(steps.done), chosen.tool, env.reused, work if keep else None
    )


def _install_args(work: Path, rev: str | None) -> list[str]:
    try:
        settings = config.load(work)
    except GenstampError as exc:  # named as the judged tree's, not the gone clean checkout's
        whose = f"{rev}'s " if rev is not None else "the judged tree's "
        raise GenstampError(
            exc.message.replace(f"{work}{os.sep}", whose), exc.remedy, exc.code
        ) from None
    if settings.clean_install is not None:
        return list(settings.clean_install)
    args = default_install(work)
    if not args:
        # a top that is no project: the projects of the folders its tests run in (`_run`),
        # each installed from its folder, as `cd sub && pip install .` does: the one
        # configured folder below a top with no configuration of its own, or each of the
        # declared suites (a monorepo of projects)
        folders = list(settings.suites) or [f for f in [_suite_folder(work)] if f]
        for root in dict.fromkeys(filter(None, (_project_above(work, f) for f in folders))):
            args += [f"./{root}{a[1:]}" for a in default_install(work / root)]
    return args


def _project_above(work: Path, folder: str) -> str:
    """The nearest folder at or above ``folder`` (below the top ``work``) that holds an
    installable project (a suite declared as its tests' folder, `a/tests`, is `a`'s), "" when
    none does."""
    parts = [p for p in folder.split("/") if p not in ("", ".")]
    while parts:
        if default_install(work.joinpath(*parts)):
            return "/".join(parts)
        parts.pop()
    return ""


def _project_home(work: Path, args: Sequence[str]) -> Path:
    """Where the project the install arguments name lives: the top, or the folder below it
    they install (`./sub[test]`, a top that is no project): what building it needs, and the
    environment's key, are read there."""
    if project_args(args):
        return work
    for arg in args:
        target = arg.split("[", 1)[0]
        if target.startswith("./") and len(target) > 2:
            folder = work / target
            if (folder / "pyproject.toml").is_file() or (folder / "setup.py").is_file():
                return folder
    return work


def _suite_folder(work: Path) -> str:
    """The folder the gate takes the clean checkout's suite from, where it is not the top."""
    import pygit2

    from genstamp.facts import tree_suites

    try:
        repo = open_checkout(work).repo
        found = tree_suites(repo, str(repo.revparse_single("HEAD").peel(pygit2.Tree).id), ())
    except (GenstampError, pygit2.GitError, KeyError, ValueError):
        return ""
    roots = [s.root for s in found or () if s.root]
    return roots[0] if len(roots) == 1 else ""


def _with_install_products(work: Path, tree: str, log: IO[str]) -> str | None:
    """The tree of the clean checkout once the install step wrote into it: the judged tree
    with the files it made there that git does not ignore (a fresh checkout held none), and
    those of the tree it rewrote or removed (a stale ``*.egg-info`` the tree holds, its
    ``SOURCES.txt`` written again). None when it changed none. Built in an index of its own:
    the repository's index is not touched."""
    listing = ["ls-files", "-z", "--others", "--exclude-standard", "--modified"]
    made = list(dict.fromkeys(m for m in _git(work, *listing, log=log).split("\0") if m))
    if not made:
        return None
    log.write(f"the install wrote into the checkout: {', '.join(made[:10])}\n")
    with tempfile.TemporaryDirectory(prefix="genstamp-index-") as tmp:
        env = {**envcache.clean_environ(None), "GIT_INDEX_FILE": str(Path(tmp, "index"))}
        listed = Path(tmp, "made")
        listed.write_bytes(os.fsencode("\0".join(made)))
        _git(work, "read-tree", tree, env=env, log=log)
        add = ["add", "--all", "--force", f"--pathspec-from-file={listed}", "--pathspec-file-nul"]
        _git(work, *add, env=env, log=log)
        return _git(work, "write-tree", env=env, log=log)


def _install(
    env: envcache.Env,
    chosen: envcache.Installer,
    args: Sequence[str],
    work: Path,
    log: IO[str],
    warm: Path,
) -> bool:
    """A new environment gets the install arguments whole (dependencies and project); a
    reused one what was installed from the checkout, again, from this checkout (the project,
    and a folder of it a requirements file names: no index needed). False when that states
    other requirements than when the environment was made (``setup.py`` read them from a
    file the environment's key does not cover): the environment is not this tree's. A
    variable naming the ``warm`` checkout names the clean one for the build too
    (``CFLAGS=-I$PWD/gen``: a fresh clone's build has no warm checkout's headers)."""
    if not args:
        return True  # not an installable project: its tests import it from the checkout
    if not env.reused:
        # as a fresh clone's `pip install`: the index is at hand, the build isolated (with its
        # requirements on the path, pip would count them installed and leave out a dependency
        # the build backend brings too: pathspec, through hatchling)
        environ = moved_in(envcache.clean_environ(env.path), warm, work, log)
        envcache.install(env.path, chosen, list(args), environ, log, work)
        envcache.remember_local(env.path, work)
        return True
    environ = moved_in(envcache.build_environ(env.path), warm, work, log)
    kept = envcache.remembered_local(env.path)
    if kept is None:
        return False
    project = project_args(args)
    named = bool(project)
    for local in kept.values():
        if local.path == "." and named:
            continue  # the arguments install it again themselves
        # (the project itself too where only a requirements file names it: `-r dev.txt`
        # holding `.`; a folder or an archive outside the checkout as it is now)
        outside = os.path.isabs(local.path)
        target = local.path if outside or local.path == "." else f"./{local.path}"
        if not (work / local.path).exists():  # (an absolute path joins as itself)
            log.write(f"{target}, installed as the environment was made, is gone\n")
            return False  # (a fresh install of the same requirements fails as a clean clone's)
        project += ["-e", target] if local.editable else [target]
    if not project:
        return True
    again = "--reinstall" if chosen.tool == "uv" else "--force-reinstall"
    try:
        envcache.install(
            env.path,
            chosen,
            ["--no-deps", "--no-build-isolation", again, *project],
            environ,
            log,
            work,
        )
    except envcache.StepFailed as exc:
        # a build that needs more than the project's [build-system] requires: a local
        # project of another backend (hatchling for `./libs/helper`), or what the backend
        # asks for as it builds (hatchling's `editables` for an editable install): built
        # isolated, as a fresh clone's install builds it
        log.write(f"{exc}: built again with its own build requirements, isolated\n")
        isolated = moved_in(envcache.clean_environ(env.path), warm, work)
        # what was installed from them goes first: pip's isolated build still runs the import
        # hooks the environment's .pth files install (an editable install's finder), which a
        # fresh clone's build, before they are installed, does not have
        envcache.uninstall(env.path, chosen, sorted(kept), isolated, log, work)
        envcache.install(env.path, chosen, ["--no-deps", again, *project], isolated, log, work)
    now = envcache.local_distributions(env.path, work)
    changed = sorted(
        n
        for n in {*kept, *now}
        if (n in kept) != (n in now) or (kept[n].requires != now[n].requires)
    )
    if changed:
        log.write(f"the requirements of {', '.join(changed)} differ from the environment's\n")
    return not changed


def _installed_whole(args: Sequence[str]) -> bool:
    """Whether the install arguments install the checkout itself, not editable (``.``,
    ``.[test]``): its tests are then to import what was installed, not the checkout's folder."""
    mine = project_args(args)
    if not mine:  # the project of the suite's folder below a top with none: `./sub[test]`
        items = list(args)
        below = [i for i, a in enumerate(items) if a.startswith("./") and len(a) > 2]
        if any(i and items[i - 1] in ("-e", "--editable") for i in below):
            return False
        mine = [items[i] for i in below]
    editable = any(a in ("-e", "--editable") or a.startswith(("-e.", "--editable=")) for a in mine)
    return bool(mine) and not editable


def _run(
    env: envcache.Env,
    work: Path,
    pytest_args: Sequence[str],
    log: IO[str],
    warm: Path,
    installed: bool = False,
) -> tuple[dict[str, Any], dict[str, str]]:
    """Stamp the clean checkout, run the suite with the plugin in the clean environment (each
    declared suite from its folder, as its configuration is found there: parts of one run),
    and let the clean checkout's own gate judge the run: (its verdict as ``verify --json``
    gives it, each test's outcome from its evidence). Stamp and gate run here, in this
    process: the environment holds a copy of this very genstamp (its digest is in the
    environment's key), and two interpreter start-ups are saved. ``installed``: the project
    was installed whole, so pytest runs as the ``pytest`` command, which does not put the
    checkout's folder first on the import path as ``python -m`` does: a module the wheel
    leaves out fails, as in a clean runner's install."""
    from genstamp import restamp
    from genstamp.verify import verify

    clean = open_checkout(work)
    # the bytecode a build wrote into the checkout as it installed the project (setuptools
    # importing the package for an `attr:` version) goes, as a checkout's hook scrubs before a
    # generation begins (scrub keeps tracked files)
    restamp.begin(clean, trigger="ci", why="genstamp clean-run")
    environ = moved_in(envcache.clean_environ(env.path), warm, work, log)
    pytest_args = args_moved_in(pytest_args, warm, work, log)
    script = env.python.parent / "pytest"
    if installed and script.is_file() and os.name != "nt":
        # the console script's file, by the environment's own interpreter (its first line
        # names the interpreter of the folder it was made in, which may have moved since)
        command = [str(env.python), str(script), *pytest_args]
    else:
        command = [str(env.python), "-m", "pytest", *pytest_args]
    try:
        suites = config.load(work).suites
    except GenstampError:
        suites = ()
    if not suites:  # the project's folder, where the top has no configuration of its own (and
        # every test is below one configured folder: `cd sub && pytest`), as the gate has it
        below = _suite_folder(work)
        suites = (below,) if below else ()
    code = 0
    for folder in [work / s for s in suites] if suites else [work]:
        ran = envcache.call(command, environ, log, folder)
        if ran == USAGE_ERROR:  # its arguments or configuration: no run to judge (A26 04)
            raise envcache.StepFailed(
                ["python", "-m", "pytest", *pytest_args], ran, "a usage error"
            )
        code = code or ran
    verdict = verify(clean, others=False).to_json()  # its own run alone: not the warm one's
    leaks = links_into(work, warm)
    if leaks:
        # a committed link naming the warm checkout's path: the clean run read the warm
        # checkout through it (its ignored files: a data file no clone has), as no clone
        # elsewhere can (A26 07)
        shown = ", ".join(f"{rel} -> {target}" for rel, target in leaks[:3])
        more = f" and {len(leaks) - 3} more" if len(leaks) > 3 else ""
        failure = {
            "rule": "tree-mismatch",  # what the clean run read is not the tree's alone
            "message": "the clean checkout reaches the warm one through symbolic links the tree"
            f" holds: {shown}{more}; a clone elsewhere has links that lead nowhere",
            "remedy": "commit what they lead to, or make them relative links inside the tree",
        }
        verdict = {**verdict, "ok": False, "failures": [*verdict["failures"], failure]}
    if code != 0 and verdict["ok"]:
        # pytest failed where its evidence is green: a hook after the tests (a conftest's
        # session finish, an unconfigure) raised, or a plugin failed the session. The clean
        # checkout's run failed, whatever the evidence bound before that says.
        failure = {
            "rule": "tests-failed",
            "message": f"pytest exited with {code} in the clean checkout after its evidence was"
            " bound green (a hook after the tests failed, or a plugin failed the session)",
            "remedy": "read the clean run's log, fix what fails in a clean checkout, then rerun",
        }
        verdict = {**verdict, "ok": False, "failures": [*verdict["failures"], failure]}
    log.write(f"pytest exited with {code}; the clean checkout's gate:\n")
    log.write(json.dumps(verdict, indent=2, sort_keys=True) + "\n")
    return verdict, _outcomes(clean)


def links_into(clean: Path, warm: Path) -> list[tuple[str, str]]:
    """(path, where it leads) for each symbolic link the clean checkout's tree holds that
    leads into the warm work tree (an absolute link naming the warm checkout's path)."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "-s"], cwd=clean, capture_output=True, check=False
    )
    links = [
        entry.partition(b"\t")[2].decode("utf-8", "surrogateescape")
        for entry in listed.stdout.split(b"\0")
        if entry.startswith(b"120000 ")
    ]
    roots = list(dict.fromkeys([str(warm), os.path.realpath(warm)]))
    own = os.path.realpath(clean)
    out = []
    for rel in links:
        target = os.path.realpath(clean / rel)
        if inside(target, own):
            continue
        # into the warm work tree (not a folder that holds it, `/`, `/tmp`, `/home`: a
        # fixture's link there is every clone's too)
        if any(inside(target, root) for root in roots):
            out.append((rel, target))
    return out


def moved_in(
    environ: Mapping[str, str], warm: Path, clean: Path, log: IO[str] | None = None
) -> dict[str, str]:
    """``environ`` with every path it names in the warm work tree (a variable your shell sets
    to the checkout, `export DATA_DIR=$PWD/data`) named at the same place of the clean
    checkout, as a fresh clone's run with the same settings has it: the clean run never reads
    the warm checkout's files through them (A26 07). Wherever the path stands in the value: a
    list of paths (``os.pathsep``, commas), an option (``--data-dir=PATH``), a ``file://``
    URL, the rest of the value kept as it is; and a path that reaches the work tree through a
    symbolic link (`cd` through a link, then `$PWD/data`). Not one in its git dir (``.git``:
    the clean room's own environments lie there), which the clean checkout has none of."""
    roots = _warm_roots(warm, environ)
    out = dict(environ)
    for name, value in environ.items():
        moved = _moved(value, roots, clean)
        if moved != value:
            out[name] = moved
            if log is not None:
                log.write(f"{name}: {value} -> {moved} (named the warm checkout)\n")
    return out


def args_moved_in(
    args: Sequence[str], warm: Path, clean: Path, log: IO[str] | None = None
) -> list[str]:
    """The pytest arguments, each path into the warm work tree that the clean checkout holds
    too named at that place of the clean checkout, as ``moved_in`` names the environment's (a
    test file's absolute path, copied from a traceback or an editor; a node id; ``--rootdir``,
    ``-c``): the clean run collects the clean checkout's files, and binds its own evidence,
    never the warm checkout's. A path the clean checkout does not hold is an output the run
    writes (``--junitxml=$PWD/reports/junit.xml``, ``--cov-report=xml:…``): it stays, as the
    clean checkout is removed once the run is done."""
    roots = _warm_roots(warm, os.environ)
    out = []
    for arg in args:
        moved = _moved(arg, roots, clean)
        named = moved.partition("=")[2] if moved.startswith("-") else moved
        if moved != arg and not os.path.lexists(named.split("::", 1)[0]):
            moved = arg
        if moved != arg and log is not None:
            log.write(f"pytest argument {arg} -> {moved} (named the warm checkout)\n")
        out.append(moved)
    return out


def _warm_roots(warm: Path, environ: Mapping[str, str]) -> list[str]:
    """The spellings of the warm work tree: its path, its real path, and the shell's."""
    roots = list(dict.fromkeys([str(warm), os.path.realpath(warm)]))
    return list(dict.fromkeys([*roots, *_spellings(environ, roots)]))


def _moved(value: str, roots: Sequence[str], clean: Path) -> str:
    moved = _named_in(value, roots, str(clean))
    if moved == value:  # a path through a link to the work tree, given whole
        parts = value.split(os.pathsep)
        moved = os.pathsep.join(_linked(part, roots, str(clean)) for part in parts)
    return moved


def _spellings(environ: Mapping[str, str], roots: Sequence[str]) -> list[str]:
    """The other ways a value may name the work tree: the shell's (``PWD``, a folder reached
    through a symbolic link: `cd ~/code/proj`, where `code` leads elsewhere, then
    `file://$PWD/data`), and below the home folder, `~/proj` (a test expands it itself)."""
    out: list[str] = []
    shown = environ.get("PWD", "").rstrip(os.sep)
    if os.path.isabs(shown):
        real = os.path.realpath(shown)
        for root in roots:
            if inside(real, root):
                rel = os.path.relpath(real, root)
                if rel == ".":
                    out.append(shown)
                elif shown.endswith(os.sep + rel):
                    out.append(shown[: -len(rel) - 1])
    home = environ.get("HOME", "").rstrip(os.sep)
    if os.path.isabs(home) and home != os.sep:
        for root in [*roots, *out]:
            if root.startswith(home + os.sep):
                out.append("~" + root[len(home) :])
    return out


def _named_in(value: str, roots: Sequence[str], clean: str) -> str:
    """``value`` with each path in it that begins with one of ``roots`` (at the value's start,
    after a character no file name holds, or after a URL's ``scheme://``) and ends there or
    goes on below it named below ``clean`` instead."""
    for root in roots:
        root = root.rstrip(os.sep)
        at = value.find(root)
        while at >= 0:
            end = at + len(root)
            before, rest = value[:at], value[end:]
            starts = not before or not _in_a_name(before[-1]) or before.rstrip("/").endswith(":")
            # (not where the name goes on: a sibling folder `proj 2` beside `proj`; nor a path
            # that leads out of the work tree again: `$PWD/../shared`)
            ends = not rest or rest[0] == os.sep or not _in_a_name(rest[0])
            if ends and rest and rest[0] != os.sep:
                ends = not os.path.lexists(root + rest.split(os.sep, 1)[0])
            if ends and rest.startswith(os.sep):
                path = root + re.split(r"[,;:\"'\s]", rest, maxsplit=1)[0]
                ends = inside(os.path.normpath(path), root)
            git_dir = rest.startswith(os.sep + ".git") and (
                len(rest) == 5 or not _in_a_name(rest[5]) or rest[5] == os.sep
            )
            if starts and ends and not git_dir:
                value = before + clean + rest
                end = at + len(clean)
            at = value.find(root, end)
    return value


def _in_a_name(char: str) -> bool:
    """Whether ``char`` may be part of a path (a file's name, or the separator)."""
    return char.isalnum() or char in "._-+~@/" or char == os.sep


def _linked(part: str, roots: Sequence[str], clean: str) -> str:
    """``part``, an absolute path that reaches the work tree through a symbolic link, named
    below ``clean`` (any other part as it is)."""
    if not os.path.isabs(part) or part.startswith("//"):
        return part
    real = os.path.realpath(part)
    for root in roots:
        if real == root or real.startswith(root.rstrip(os.sep) + os.sep):
            rest = real[len(root.rstrip(os.sep)) :]
            if rest.split(os.sep)[1:2] == [".git"]:
                return part  # the warm checkout's git dir: no file of the clean one
            return clean + rest
    return part


def _outcomes(clean: Checkout) -> dict[str, str]:
    """Each test's outcome as the clean run's evidence records it, of every part the run kept
    (a run of each declared suite), the newest last (empty when it has none)."""
    from genstamp import generation, parts

    paths = [evidence.location(clean, config.load(clean.workdir).evidence)]
    try:
        gen = generation.stored(clean)
    except GenstampError:
        gen = None
    if gen is not None:
        paths = [*parts.listing(clean.state, gen.id), *paths]
    out: dict[str, str] = {}
    for path in paths:
        try:
            report = evidence.read_report(path)
        except (OSError, GenstampError):
            continue
        recorded, _ = rules.read_coverage(report.properties)
        if recorded is not None:
            out.update(recorded.outcomes)
    # the clean checkout's own folder, in node ids that name it, as CHECKOUT (the warm
    # checkout's, in the same tests' ids, is another)
    for here in cleanrecord.spellings(str(clean.workdir)):
        out = {n.replace(here, cleanrecord.CHECKOUT): o for n, o in out.items()}
    return out
