"""The suite: the test files the project's own pytest configuration, in the tree, would collect
when pytest runs from the suite's folder (the repository root, or each declared suite).

Pure on purpose: the caller hands over the tree's file listing and a reader of the tree's
files (the gate reads the tested tree from the object store; the plugin reads the work tree),
so the suite follows from the tree alone, never from how a run was started. Configuration is
found as pytest finds it from that folder (``pytest.ini``, ``.pytest.ini``, ``pyproject.toml``,
``tox.ini``, ``setup.cfg``); conftest ``collect_ignore``/``collect_ignore_glob`` are read with
``ast`` and never executed.
"""

from __future__ import annotations

import ast
import fnmatch
import posixpath
import re
import sys
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from genstamp import binding, stdlib
from genstamp.typedtuple import NamedTuple

if sys.version_info < (3, 11):  # pragma: no cover
    import tomli as tomllib  # type: ignore[import-not-found,unused-ignore]
elif TYPE_CHECKING:
    import tomllib
else:  # the standard library's, whatever the checkout under test names its own
    tomllib = stdlib.module("tomllib")
if TYPE_CHECKING:
    import shlex
else:
    shlex = stdlib.module("shlex")

Reader = Callable[[str], "bytes | None"]  # a tree path ("a/b.py") -> its bytes, None if absent

DEFAULT_FILES = ("test_*.py", "*_test.py")
DEFAULT_NORECURSE = (
    "*.egg",
    ".*",
    "_darcs",
    "build",
    "CVS",
    "dist",
    "node_modules",
    "venv",
    "{arch}",
)
DEFAULT_DOCTEST_GLOBS = ("test*.txt",)
# what turns pytest's doctest plugin off: xdoctest's own flags (its plugin unregisters it)
_NO_DOCTEST = ("--xdoctest", "--xdoc", "--xdoctest-modules")
# xdoctest's text files (its --xdoctest-glob, alone: pytest's --doctest-glob is then unused)
_XDOCTEST_GLOBS = ("--xdoctest-glob", "--xdoc-glob")
SHOWN = 5  # files named in a reason before a count
# the stand-in for the checkout's absolute path that pytest matches a path pattern against
# (``python_files``, ``norecursedirs``, ``--doctest-glob`` holding a ``/``): four folders deep,
# named so that no pattern names them (``*/_*`` would take a folder named ``_``)
_PLACE = "/\u2400/\u2400/\u2400/\u2400"
# The files pytest takes its configuration from, in its order (pytest 9 added the TOML ones).
CONFIG_NAMES = (
    "pytest.toml",
    ".pytest.toml",
    "pytest.ini",
    ".pytest.ini",
    "pyproject.toml",
    "tox.ini",
    "setup.cfg",
)
# Options (pytest's and common plugins') whose value is the next argument: an addopts word
# after one of these is its value, not a path to collect.
_VALUED = """-p -k -m -c -o -W -n -r --deselect --ignore --ignore-glob --rootdir --confcutdir
    --basetemp --junitxml --junit-xml --junit-prefix --tb --maxfail --durations
    --durations-min --capture --color --code-highlight --import-mode --log-level --log-format
    --log-date-format --log-cli-level --log-cli-format --log-cli-date-format --log-file
    --log-file-level --log-file-format --log-file-date-format --log-file-mode --pastebin
    --override-ini --config-file --doctest-glob --doctest-report --cov-report
    --cov-config --cov-fail-under --cov-context --dist --numprocesses --maxprocesses
    --max-worker-restart --tx --rsyncdir --timeout --timeout-method --reruns --reruns-delay
    --only-rerun --randomly-seed --hypothesis-seed --hypothesis-profile --splits --group
    --splitting-algorithm --durations-path --asyncio-mode --html --css --ds --dc
    --pythonwarnings --show-capture --verbosity --report-log --last-failed-no-failures --lfnf
    --benchmark-storage --benchmark-save --benchmark-json --mpl-baseline-path
    --typeguard-packages --cov-append-to --env --envfile --dist-load --tb-style --log-disable
    --log-auto-indent --junitprefix --pdbcls --assert --report-chars --max-warnings
    --xdoctest-glob --xdoc-glob"""
VALUED = frozenset(_VALUED.split())
# Options whose value is optional (argparse's ``nargs="?"``): the next word is their value
# unless it is an option itself (``--cov -m "not slow"``: ``--cov`` takes no value there).
OPTIONAL = frozenset({"--cov", "--debug", "--cache-show"})
# Options (pytest's and common plugins') that take no value: the word after one is a path.
_FLAGS = """--cache-clear --co --collect-in-virtualenv --collect-only --collectonly
    --continue-on-collection-errors --disable-plugin-autoload --disable-pytest-warnings
    --disable-warnings --doctest-continue-on-failure --doctest-ignore-import-errors
    --doctest-modules --exitfirst --failed-first --ff --fixtures --fixtures-per-test
    --force-short-summary --full-trace --fulltrace --funcargs --help --keep-duplicates
    --keepduplicates --last-failed --lf --markers --new-first --nf --no-fold-skipped --no-header
    --no-showlocals --no-summary --noconftest --pdb --pyargs --quiet --runxfail --setup-only
    --setup-plan --setup-show --setuponly --setupplan --setupshow --showlocals --stepwise
    --stepwise-reset --stepwise-skip --strict --strict-config --strict-markers --sw --sw-reset
    --sw-skip --trace --trace-config --traceconfig --verbose --version --xfail-tb --no-cov
    --no-cov-on-fail --cov-branch --looponfail --boxed --forked --mypy --flake8 --black --isort
    --ruff --ruff-format --doctest-plus --doctest-rst --benchmark-skip --benchmark-disable
    --benchmark-only --hypothesis-show-statistics --reuse-db --create-db --nomigrations
    --no-migrations --instafail --randomly-dont-reorganize --randomly-dont-reset-seed
    --typeguard-collection-check-strategy --allow-hosts --disable-socket --run-slow --runslow
    --integration --slow --no-xdist --sugar --emoji --picked --testmon --no-testmon --xdoctest
    --xdoc --xdoctest-modules"""
FLAGS = frozenset(_FLAGS.split())
# Short flags argparse lets a bundle begin with (``-qm "not slow"`` is ``-q -m "not slow"``).
BARE_SHORT = "qvsxlhV"
# the flags of addopts that change what the suite is
_TAKEN_FLAGS = frozenset(
    {"--doctest-modules", "--pyargs", "--noconftest", "--collect-in-virtualenv"}
    | {"--xdoctest", "--xdoc", "--xdoctest-modules", "--doctest-rst", "--doctest-plus"}
)
# pytest's flags that set a setting, as ``-o setting=true`` does
STRICT_FLAGS = {
    "--strict": "strict",
    "--strict-markers": "strict_markers",
    "--strict-config": "strict_config",
}


class PytestConfig(NamedTuple):
    """What the suite's configuration says about collection and selection."""

    source: str  # the file it came from ("" when none: pytest's defaults)
    testpaths: tuple[str, ...] = ()
    python_files: tuple[str, ...] = DEFAULT_FILES
    norecursedirs: tuple[str, ...] = DEFAULT_NORECURSE
    ignore: tuple[str, ...] = ()  # --ignore in addopts, relative to the suite's folder
    ignore_glob: tuple[str, ...] = ()
    markexpr: str = ""  # the -m its addopts give (the last one, as pytest takes it)
    keyword: str = ""  # the -k its addopts give
    problems: tuple[str, ...] = ()
    paths: tuple[str, ...] = ()  # the files and folders its addopts name (testpaths then idle)
    # words after an option in addopts that neither genstamp nor a run's pytest (when its
    # record is at hand) knows: a path, or that option's value (both are read)
    maybe: tuple[str, ...] = ()
    deselect: tuple[str, ...] = ()  # --deselect in addopts: node id prefixes, from its folder
    # the warning categories its filterwarnings make errors ("Warning": every one)
    warning_errors: tuple[str, ...] = ()
    # pytest's doctest plugin: the text files it collects (``--doctest-glob``, default
    # ``test*.txt``; none with ``-p no:doctest``), and whether every module is a test file
    # (``--doctest-modules``)
    doctest_globs: tuple[str, ...] = DEFAULT_DOCTEST_GLOBS
    doctest_modules: bool = False
    pyargs: bool = False  # ``--pyargs`` in addopts: testpaths are module names
    pythonpath: tuple[str, ...] = ()  # folders pytest puts on the import path
    # conftests its addopts keep from loading: all (--noconftest), or those above a folder
    noconftest: bool = False
    confcutdir: str = ""
    collect_in_virtualenv: bool = False  # --collect-in-virtualenv: environments are entered
    import_mode: str = "prepend"  # its addopts' --import-mode
    # the ini options the file sets, each value as text (never mutated)
    values: dict[str, str] = {}  # noqa: RUF012

    def starts(self) -> tuple[str, ...]:
        """Its testpaths as paths: under ``--pyargs`` a dotted name is a package (or module)
        at the top of the suite's folder or in its ``src/``, as the import finds it there.
        An absolute path (a container's ``/srv/app/tests``) names no folder of the tree: pytest
        collects there, outside the checkout, or nothing when there is nothing."""
        testpaths = tuple(p for p in self.testpaths if not p.startswith("/"))
        if not self.pyargs:
            return testpaths
        out: list[str] = []
        bases = ["", "src/", *(p.strip("/") + "/" for p in self.pythonpath if p.strip("/"))]
        for path in testpaths:
            if "/" in path or path.startswith("."):
                out.append(path)
                continue
            below = path.replace(".", "/")
            out += [f"{base}{below}{end}" for base in dict.fromkeys(bases) for end in ("", ".py")]
        return tuple(out)

    def named(self, words: Sequence[str]) -> list[str]:
        """The paths (from its folder) that the addopts ``words`` may name, each word's node
        id part dropped: under ``--pyargs`` a dotted name names the package (or module) where
        ``starts`` looks for a testpath's, and a word the import does not find is a path
        (pytest takes it so)."""
        out: list[str] = []
        for word in words:
            path = word.partition("::")[0]
            out.append(path)
            if self.pyargs and "/" not in path and not path.startswith("."):
                out += self._replace(testpaths=(path,)).starts()
        return list(dict.fromkeys(out))

    def dotted(self, words: Sequence[str]) -> list[str]:
        """The module names among the addopts ``words`` under ``--pyargs`` (none without)."""
        if not self.pyargs:
            return []
        names = (w.partition("::")[0] for w in words)
        return [n for n in names if n and "/" not in n and not n.startswith(".")]


class Suite(NamedTuple):
    root: str  # the suite's folder in the tree ("" for the repository root)
    config: PytestConfig
    files: tuple[str, ...]  # tree paths, sorted
    problems: tuple[str, ...]  # what could not be read statically (the files stay in)
    # Files of the suite a conftest may ignore, as statements under a condition leave its
    # lists (``conftest_ignores``), each with the folder pytest starts from there: a run whose
    # conftests did (``observed_ignored``) was right to leave them out.
    maybe: tuple[tuple[str, str], ...] = ()
    conftests: tuple[str, ...] = ()  # the folders whose conftest.py pytest loads for it
    # test files one run cannot import together under pytest's prepend (or append) import
    # mode: each a top-level name, and the files of each place it is (``clashing``)
    clashes: tuple[tuple[str, tuple[tuple[str, ...], ...]], ...] = ()
    # Files below a conftest that collects files of its own (``pytest_collect_file``: a YAML
    # spec, a notebook), the suite's files aside: which it makes tests of is known only as a
    # run offers them to it, and a run of the whole suite offers it each
    # (``coverage.Coverage.offered``).
    offered: tuple[str, ...] = ()
    # the same below a conftest that defines its collector under a condition (an optional
    # import's): each with that conftest's folder, offered only where a run had the collector
    offered_if: tuple[tuple[str, str], ...] = ()

    @property
    def digest(self) -> str:
        return binding.digest(self.files)

    @property
    def label(self) -> str:
        return self.root or "."


def join(root: str, rel: str) -> str:
    joined = posixpath.normpath(posixpath.join(root, rel)) if rel else (root or ".")
    return "" if joined == "." else joined


def read_config(
    read: Reader, root: str = "", known: Mapping[str, str] | None = None
) -> PytestConfig:
    """The pytest configuration pytest would find in ``root`` (a tree folder): its own, else,
    as pytest run there looks for one, the nearest folder's above it (a monorepo's top
    ``pytest.ini`` for a suite folder that has none), whose ``testpaths`` pytest run from
    ``root`` does not take (they name the tests of its own folder)."""
    folder = root
    while True:
        for name in CONFIG_NAMES:
            path = join(folder, name)
            data = read(path)
            if data is None:
                continue
            try:
                found = _parse(name, data.decode("utf-8-sig"))  # iniconfig: a BOM is no text
            except ValueError as exc:  # not UTF-8, not TOML, not an ini file (``_parse``)
                return PytestConfig(path, problems=(f"{path} cannot be read ({exc})",))
            if found is not None:
                settings = _settings(path, found, known, _args_file(read, root, folder))
                return settings if folder == root else settings._replace(testpaths=())
        if not folder:
            return PytestConfig("")
        folder = posixpath.dirname(folder)


def _pyproject_above(read: Reader, root: str) -> str:
    """Where no configuration file is found, the folder of the nearest ``pyproject.toml`` at
    or above ``root``, which pytest (8.1 and later) takes for its rootdir and configuration
    file all the same (``root`` where there is none)."""
    folder = root
    while True:
        if read(join(folder, "pyproject.toml")) is not None:
            return folder
        if not folder:
            return root
        folder = posixpath.dirname(folder)


def _parse(name: str, text: str) -> dict[str, Any] | None:
    """The ini options a file holds, or None when pytest would pass over it; ValueError when
    it cannot be parsed."""
    if name in ("pytest.toml", ".pytest.toml"):
        table = tomllib.loads(text).get("pytest")  # counts even without it, as pytest.ini
        return table if isinstance(table, dict) else {}
    if name == "pyproject.toml":
        tool = tomllib.loads(text).get("tool", {})
        pytest_table = tool.get("pytest") if isinstance(tool, dict) else None
        if not isinstance(pytest_table, dict):
            return None
        options = pytest_table.get("ini_options")
        native = {k: v for k, v in pytest_table.items() if k != "ini_options"}
        if native or not isinstance(options, dict):
            # an empty [tool.pytest] table, without ini_options, is none: pytest passes over it
            return native or None
        return options
    from genstamp import ini

    sections = ini.parse(text)  # ValueError where pytest stops
    section = {"setup.cfg": "tool:pytest"}.get(name, "pytest")
    if section not in sections:
        # pytest.ini counts even without its section (pytest takes its folder as rootdir)
        return {} if name in ("pytest.ini", ".pytest.ini") else None
    return sections[section]


def _args(value: object) -> list[str]:
    if isinstance(value, list):
        return [str(v) for v in value]
    return shlex.split(str(value))


def _args_file(read: Reader, *folders: str) -> Callable[[str], list[str] | None]:
    """The arguments of an ``@FILE`` word of addopts as pytest 8.2 reads them (argparse: one
    a line, and an ``@FILE`` among them read in turn), the file read from the tree where the
    suite's run starts (``folders``: its own folder, else its configuration's); None when the
    tree holds no such file."""

    def expand(name: str, depth: int = 0) -> list[str] | None:
        data = None
        for folder in dict.fromkeys(folders):
            data = read(join(folder, name))
            if data is not None:
                break
        if data is None or depth > 8:
            return None
        out: list[str] = []
        for line in data.decode("utf-8", "replace").splitlines():
            inner = expand(line[1:], depth + 1) if line.startswith("@") and len(line) > 1 else None
            out += inner if inner is not None else [line]
        return out

    return expand


def _settings(
    source: str,
    options: dict[str, Any],
    known: Mapping[str, str] | None = None,
    args_file: Callable[[str], list[str] | None] | None = None,
) -> PytestConfig:
    problems: list[str] = []
    try:
        addopts = _args(options.get("addopts", ""))
    except ValueError as exc:
        addopts = []
        problems.append(f"{source}: addopts cannot be split ({exc})")
    if args_file is not None:  # `addopts = @pytest-args.txt`: the file's arguments
        expanded: list[str] = []
        for word in addopts:
            held = args_file(word[1:]) if word.startswith("@") and len(word) > 1 else None
            expanded += held if held is not None else [word]
        addopts = expanded
    taken = _options(addopts, known)
    # ``-o name=value`` in addopts: pytest takes it over the file's own value of ``name``
    overrides = dict(o.partition("=")[::2] for o in taken.get("-o", []) if "=" in o)
    options = {**options, **{k.strip(): v for k, v in overrides.items() if k.strip()}}
    for flag, key in STRICT_FLAGS.items():  # a flag of addopts that sets a setting
        if flag in taken.get("flags", []):
            options[key] = "true"
    plain = "no:warnings" not in taken.get("-p", [])  # else no filter applies at all
    warning_filters = [*_lines(options.get("filterwarnings")), *taken.get("-W", [])]
    return PytestConfig(
        source=source,
        testpaths=tuple(_args(options.get("testpaths", ""))),
        python_files=tuple(_args(options["python_files"]))
        if "python_files" in options
        else DEFAULT_FILES,
        norecursedirs=(
            tuple(_args(options["norecursedirs"]))
            if "norecursedirs" in options
            else DEFAULT_NORECURSE
        ),
        ignore=tuple(taken.get("--ignore", [])),
        ignore_glob=tuple(taken.get("--ignore-glob", [])),
        markexpr=(taken.get("-m") or [""])[-1],
        keyword=(taken.get("-k") or [""])[-1],
        problems=tuple(problems),
        paths=tuple(taken.get("", [])),
        maybe=tuple(taken.get("maybe", [])),
        deselect=tuple(taken.get("--deselect", [])),
        warning_errors=tuple(
            warning_category(line) for line in warning_filters if plain and is_error(line)
        ),
        doctest_globs=_doctest_globs(taken, options),
        doctest_modules=_doctest_modules(taken),
        pyargs="--pyargs" in taken.get("flags", []),
        noconftest="--noconftest" in taken.get("flags", []),
        confcutdir=(taken.get("--confcutdir") or [""])[-1],
        collect_in_virtualenv="--collect-in-virtualenv" in taken.get("flags", []),
        pythonpath=tuple(_args(options.get("pythonpath", ""))),
        import_mode=(taken.get("--import-mode") or ["prepend"])[-1],
        values={k: _text(v, k) for k, v in options.items()},
    )


def _text(value: object, key: str = "") -> str:
    """An option's value as an ini file writes it (a TOML list one item a line; ``addopts``'
    items quoted as the shell quotes them, so that splitting them gives each back whole, as
    pytest takes them: `["--only-rerun", "AssertionError: transient"]`)."""
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, list) and key == "addopts":
        return shlex.join(str(v) for v in value)
    if isinstance(value, list):
        return "\n".join(str(v) for v in value)
    return str(value)


def is_error(spec: str) -> bool:
    """Whether a warnings filter's action is ``error`` (or a prefix of it, as Python takes)."""
    action = spec.strip().partition(":")[0].strip().lower()
    return bool(action) and "error".startswith(action)


def warning_category(spec: str) -> str:
    """The category of a warnings filter (``action:message:category:module:lineno``)."""
    fields = spec.strip().split(":")
    return (fields[2].strip() if len(fields) > 2 else "") or "Warning"


def _lines(value: object) -> list[str]:
    """An ini "linelist" (one per line) or a TOML list."""
    if isinstance(value, list):
        return [str(v) for v in value]
    return str(value or "").splitlines()


def _options(args: Sequence[str], known: Mapping[str, str] | None = None) -> dict[str, list[str]]:
    """The values of ``-m``, ``-k``, ``-p``, ``--ignore``, ``--ignore-glob``, ``--deselect``
    and ``--doctest-glob`` in ``args``, under "flags" ``--doctest-modules``, under "" the
    words that are no option's value (paths to collect), and under "maybe" the word after an
    option that neither genstamp's tables nor ``known`` know (the options of a run's addopts,
    each "value", "optional" or "flag" as its pytest, with its plugins and conftests, takes
    them)."""
    known = known or {}
    out: dict[str, list[str]] = {}
    wanted = [
        "--ignore-glob",
        "--ignore",
        "--deselect",
        "--doctest-glob",
        *_XDOCTEST_GLOBS,
        "--confcutdir",
        "--import-mode",
        "-m",
        "-k",
        "-p",
        "-o",
        "-W",
    ]
    # long spellings of the short options taken: their values go under the short name
    aliases = {"--override-ini": "-o", "--pythonwarnings": "-W"}
    i = 0
    while i < len(args):
        arg = args[i]
        if arg == "--":  # argparse takes every word after it for a path
            out.setdefault("", []).extend(args[i + 1 :])
            break
        bundled = False
        if len(arg) > 2 and arg[0] == "-" and arg[1] in BARE_SHORT:
            # bundled short flags: what follows the bare ones is an option of its own
            rest = arg[1:].lstrip(BARE_SHORT)
            arg = f"-{rest}" if rest else "-q"
            bundled = bool(rest)
            if arg[:2] == "-p":  # the plugin manager reads no bundled -p (argparse takes it)
                i += 1 if len(arg) > 2 else 2
                continue
        flag, eq, value = arg.partition("=")
        if eq and len(flag) == 2 and flag in wanted and flag != "-p" and not bundled:
            arg = flag + value  # argparse's own split of -m=EXPR: the value after "="
            flag, eq, value = arg.partition("=")
        if flag in aliases:
            arg = aliases[flag] if not eq else f"{aliases[flag]}{value}"
            flag, eq, value = arg, "", ""
        nxt = args[i + 1] if i + 1 < len(args) else None
        if not arg.startswith("-"):
            out.setdefault("", []).append(arg)
        elif arg in VALUED or known.get(arg) == "value":
            if nxt is not None and arg in wanted:
                out.setdefault(arg, []).append(nxt)
            i += 1  # its value
        elif arg in OPTIONAL or known.get(arg) == "optional":
            if nxt is not None and not nxt.startswith("-"):
                i += 1  # its value, as argparse takes an optional one
        elif eq and flag in wanted and flag.startswith("--"):
            out.setdefault(flag, []).append(value)
        elif arg[:2] in ("-m", "-k", "-p", "-o", "-W") and len(arg) > 2:
            out.setdefault(arg[:2], []).append(arg[2:])
        elif arg in _TAKEN_FLAGS or arg in STRICT_FLAGS:
            out.setdefault("flags", []).append(arg)
        elif (
            (arg.startswith("--") or (len(arg) == 2 and arg[1] not in BARE_SHORT))
            and not eq
            and arg not in FLAGS
            and arg not in known
            and nxt is not None
            and not nxt.startswith("-")
        ):
            out.setdefault("maybe", []).append(nxt)
            i += 1
        i += 1
    return out


class _Ignores(NamedTuple):
    paths: tuple[str, ...]  # tree paths: a file, or a folder and all below it
    globs: tuple[str, ...]  # tree-path patterns
    problems: tuple[str, ...]
    # the names the conftest sets at all (an empty list too: it hides a farther conftest's)
    defines: frozenset[str] = frozenset()
    # what it may hold, as statements under a condition leave it: ignored where the run's
    # conftest held it (``observed_ignored``); the names it may set (hiding a farther one's)
    maybe_paths: tuple[str, ...] = ()
    maybe_globs: tuple[str, ...] = ()
    maybe_defines: frozenset[str] = frozenset()


def conftest_ignores(read: Reader, conftest: str) -> _Ignores:
    """``collect_ignore``/``collect_ignore_glob`` a conftest sets to plain literals (read with
    ``ast``, never run), as its module-level statements leave them, in order: an assignment
    replaces the list, ``+=``/``append``/``extend``/``insert`` add to it, ``remove`` of a
    literal takes that entry out, and any other removal (``pop``, ``clear``, ``del``,
    ``remove`` of a computed value) every entry before it. A computed value is a problem, and
    ignores nothing. A function's or class's own names are not the module's. A statement in
    a block (``if``, ``try``, ``with``, a loop, a ``match`` case) may not run: what it sets or
    adds may be there, what it removes or replaces may be gone (``maybe_paths``,
    ``maybe_globs``; a name it sets, ``maybe_defines``), and a run that observed its conftest
    ignoring a file was right to leave it out (``Suite.maybe``), as pytest's own skips are."""
    data = read(conftest)
    if data is None:
        return _Ignores((), (), ())
    try:
        module = ast.parse(data)
    except (SyntaxError, ValueError):
        return _Ignores((), (), (f"{conftest} cannot be parsed",))
    found: dict[str, dict[str, None]] = {"collect_ignore": {}, "collect_ignore_glob": {}}
    maybe: dict[str, dict[str, None]] = {"collect_ignore": {}, "collect_ignore_glob": {}}
    problems: list[str] = []
    defines: set[str] = set()
    maybe_defines: set[str] = set()
    read_names: set[int] = set()  # the names in the statements read here
    for node, conditional in _module_level(module.body):
        for target, value, how in _assignments(node):
            if target not in found:
                continue
            read_names.update(id(n) for n in ast.walk(node) if isinstance(n, ast.Name))
            certain, possible = found[target], maybe[target]
            if how == "remove" and _literal_names(value) is None:
                how = "unread"  # (pop(), del name[i], remove() of a computed value)
            if not conditional:
                defines.add(target)
                if how == "set":
                    possible.clear()
                elif how == "unread":  # which it takes out is not read: any may be gone
                    possible.update(certain)
                    certain.clear()
                    continue
                elif how in ("remove", "clear"):  # (gone from what may be there too)
                    how = "remove"
                    _ignored_by(conftest, target, value, how, possible, [])
                _ignored_by(conftest, target, value, how, certain, problems)
                continue
            if how == "set":  # it may replace the list: what it held may be gone
                maybe_defines.add(target)
                possible.update(certain)
                certain.clear()
                _ignored_by(conftest, target, value, "add", possible, problems)
            elif how == "add":
                _ignored_by(conftest, target, value, how, possible, problems)
            else:  # what it removes may be gone
                kept = dict(certain)
                _ignored_by(conftest, target, value, "remove", kept, [])
                for entry in [e for e in certain if e not in kept]:
                    del certain[entry]
                    possible[entry] = None
    for target in _named_otherwise(module, found, read_names):
        # named by a statement read as none of the above (``collect_ignore[:] = []``, an alias,
        # a function that changes it, ``*= 0``): what it held may be gone
        maybe[target].update(found[target])
        found[target].clear()
    here = posixpath.dirname(conftest)
    return _Ignores(
        tuple(join(here, p) for p in found["collect_ignore"]),
        tuple(join(here, p) for p in found["collect_ignore_glob"]),
        tuple(dict.fromkeys(problems)),
        frozenset(defines),
        tuple(join(here, p) for p in maybe["collect_ignore"]),
        tuple(join(here, p) for p in maybe["collect_ignore_glob"]),
        frozenset(maybe_defines - defines),
    )


def _named_otherwise(module: ast.Module, names: Iterable[str], read: set[int]) -> list[str]:
    """Of ``names``, those a statement of ``module`` names that ``conftest_ignores`` did not
    read (``read``: the ids of the name nodes of those it did), anywhere: at module level, in
    a function or class body (one a hook or the module calls), as ``global``, as an attribute
    (``sys.modules[__name__].collect_ignore``) or a string (``globals()["collect_ignore"]``,
    ``setattr(module, "collect_ignore", …)``)."""
    wanted = set(names)
    found: dict[str, None] = {}
    for node in ast.walk(module):
        if isinstance(node, ast.Name) and node.id in wanted and id(node) not in read:
            found[node.id] = None
        elif isinstance(node, ast.Attribute) and node.attr in wanted:
            found[node.attr] = None
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            if node.value in wanted:
                found[node.value] = None
        elif isinstance(node, ast.Global | ast.Nonlocal):
            found.update(dict.fromkeys(n for n in node.names if n in wanted))
    return list(found)


def _literal_names(value: ast.expr | None) -> list[str] | None:
    """The names a removal's literal value gives (one string, or a list of them), else None."""
    try:
        items = ast.literal_eval(value) if value is not None else None
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return None
    if isinstance(items, str):
        return [items]
    if isinstance(items, (list, tuple)) and all(isinstance(i, str) for i in items):
        return list(items)
    return None


def _assignments(node: ast.AST) -> Iterator[tuple[str, ast.expr | None, str]]:
    """``_assignment`` of ``node``, and of each name of an unpacking (``a, b = [..], [..]``);
    a name an import binds (``from ignores import collect_ignore``) is set to what no literal
    gives ("computed")."""
    if isinstance(node, ast.Assign) and len(node.targets) == 1:
        target, value = node.targets[0], node.value
        if isinstance(target, ast.Tuple | ast.List):
            pairs = isinstance(value, ast.Tuple | ast.List) and len(target.elts) == len(value.elts)
            for n, t in enumerate(target.elts):
                v = value.elts[n] if pairs else ast.Name("computed")  # type: ignore[attr-defined]
                for name in (x for x in ast.walk(t) if isinstance(x, ast.Name)):
                    yield name.id, v if isinstance(t, ast.Name) else ast.Name("computed"), "set"
            return
    if isinstance(node, ast.Import | ast.ImportFrom):
        for alias in node.names:
            yield (alias.asname or alias.name).partition(".")[0], ast.Name("imported"), "set"
        return
    yield _assignment(node)


def _ignored_by(
    conftest: str,
    target: str,
    value: ast.expr | None,
    how: str,
    entries: dict[str, None],
    problems: list[str],
) -> None:
    """``entries`` (a conftest's ``collect_ignore`` or ``collect_ignore_glob``, ``target``)
    as the statement setting it (``how``) to ``value`` leaves them; ``problems`` gets what
    cannot be read."""
    try:
        items = ast.literal_eval(value) if value is not None else None
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        items = None
    if isinstance(items, str) and how == "remove":
        items = [items]
    elif isinstance(items, str):
        # set or added, a string is iterated: each character a name, as pytest reads it
        # (`collect_ignore = "x.py"` ignores no x.py)
        items = list(items)
        problems.append(
            f"{conftest} gives {target} a string, which pytest reads one character at"
            ' a time (write a list: ["name"])'
        )
    names: list[str] | None = None
    if isinstance(items, (list, tuple)) and all(isinstance(i, str) for i in items):
        names = list(items)
    if how == "remove":
        for item in names or ():
            entries.pop(item, None)
        if not names:
            entries.clear()
        return
    if how == "set":
        entries.clear()
    if names is None:
        problems.append(
            f"{conftest} computes {target}: its files are taken as in the suite"
            f" (genstamp reads {target} as a list of literal strings: write it so, or"
            " ignore those files with --ignore in the configuration's addopts)"
        )
        return
    entries.update(dict.fromkeys(names))


def _module_level(
    body: Sequence[ast.stmt], conditional: bool = False
) -> Iterator[tuple[ast.AST, bool]]:
    """The statements a module runs itself, in order, each with whether it may not run: those
    of its ``if``, ``try``, ``with``, loop and ``match`` blocks too, not a function's or a
    class's body; a call statement as its call. A statement in a block may not run (a ``try``
    body's after an import that fails, a ``with contextlib.suppress(…)``'s)."""
    for stmt in body:
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        yield (stmt.value if isinstance(stmt, ast.Expr) else stmt), conditional
        for name in ("body", "orelse", "finalbody"):
            inner = getattr(stmt, name, None)
            if isinstance(inner, list):
                yield from _module_level(inner, True)
        for handler in getattr(stmt, "handlers", ()):
            yield from _module_level(handler.body, True)
        for case in getattr(stmt, "cases", ()):
            yield from _module_level(case.body, True)


def _assignment(node: ast.AST) -> tuple[str, ast.expr | None, str]:
    """(name, value, how) for ``name = v`` ("set"), ``name += v``, ``name.append(v)``,
    ``name.extend(v)``, ``name.insert(i, v)`` ("add"), ``name.remove(v)``, ``name.pop()``,
    ``del name[...]`` ("remove"; value None when it is not one literal), ``name.clear()``,
    ``del name`` ("clear"); ("", None, "") for any other statement."""
    if isinstance(node, ast.Assign):
        names = [t.id for t in node.targets if isinstance(t, ast.Name)]
        if names:
            return names[0], node.value, "set"
    if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
        return node.target.id, node.value, "set"
    if (
        isinstance(node, ast.AugAssign)
        and isinstance(node.target, ast.Name)
        and isinstance(node.op, ast.Add)
    ):
        return node.target.id, node.value, "add"
    if isinstance(node, ast.Delete) and len(node.targets) == 1:
        target = node.targets[0]
        if isinstance(target, ast.Subscript) and isinstance(target.value, ast.Name):
            return target.value.id, None, "remove"
        if isinstance(target, ast.Name):
            return target.id, None, "clear"
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and isinstance(node.func.value, ast.Name)
    ):
        name, method = node.func.value.id, node.func.attr
        if method in ("append", "extend", "insert") and node.args:
            arg = node.args[-1]
            if method != "extend":
                arg = ast.List(elts=[arg], ctx=ast.Load())
            return name, arg, "add"
        if method == "remove" and len(node.args) == 1:
            return name, node.args[0], "remove"
        if method == "clear" and not node.args:
            return name, None, "clear"
        if method in ("pop", "remove", "__delitem__"):
            return name, None, "remove"
    return "", None, ""


def _under(path: str, folder: str) -> bool:
    return not folder or path == folder or path.startswith(folder + "/")


def confcut(root: str, confcutdir: str) -> str:
    """The folder (from the top) of a ``--confcutdir`` given relative to ``root``; "" where it
    names none below the top (unset, the top itself, a folder above it, an absolute path)."""
    cut = join(root, confcutdir) if confcutdir else ""
    return "" if cut.startswith(("../", "/")) or cut == ".." else cut


def conftest_loads(folder: str, cut: str) -> bool:
    """Whether pytest loads the ``conftest.py`` of ``folder`` under ``--confcutdir`` at ``cut``
    (``confcut``): each but those of the folders above it (pytest's ``_is_in_confcutdir``: a
    conftest of a folder beside it, ``other/`` beside ``tests/``, loads)."""
    return not cut or not (folder == "" or cut.startswith(folder + "/"))


# the hooks by which a conftest collects files of its own, and ignores what it chooses
COLLECTS = "pytest_collect_file"
IGNORES = "pytest_ignore_collect"


def defines_hooks(read: Reader, conftest: str) -> dict[str, bool]:
    """Which of ``COLLECTS`` and ``IGNORES`` a conftest defines (read with ``ast``, never run):
    a function of the name, an assignment or an import of it, in the module's own statements,
    not in a function's or a class's body; each with whether it does so for certain (True),
    or only in an ``if``, ``try`` or other block, which may not run (False)."""
    data = read(conftest)
    if data is None:
        return {}
    try:
        module = ast.parse(data)
    except (SyntaxError, ValueError):
        return {}
    names: dict[str, bool] = {}
    stack: list[tuple[ast.stmt, bool]] = [(stmt, True) for stmt in module.body]
    while stack:
        stmt, certain = stack.pop()
        found: set[str] = set()
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            found.add(stmt.name)
        if isinstance(stmt, (ast.Import, ast.ImportFrom)):
            found.update((a.asname or a.name).partition(".")[0] for a in stmt.names)
        for target in getattr(stmt, "targets", None) or [getattr(stmt, "target", None)]:
            if isinstance(target, ast.AST):
                found.update(n.id for n in ast.walk(target) if isinstance(n, ast.Name))
        for name in found & {COLLECTS, IGNORES}:
            names[name] = names.get(name, False) or certain
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        inner = [getattr(stmt, n, None) for n in ("body", "orelse", "finalbody")]
        inner += [h.body for h in getattr(stmt, "handlers", ())]
        inner += [c.body for c in getattr(stmt, "cases", ())]
        stack.extend((s, False) for block in inner if isinstance(block, list) for s in block)
    return names


def collect(
    listing: Sequence[str],
    read: Reader,
    root: str = "",
    known: Mapping[str, str] | None = None,
) -> Suite:
    """The suite in ``root``: the files of ``listing`` (every file in the tree, sorted) that
    pytest, run from ``root`` with the configuration found there, would collect. A word of its
    addopts that may be a path or an option's value (``PytestConfig.maybe``) is read both
    ways: the suite is what either reading collects."""
    config = read_config(read, root, known)
    inside = [p for p in listing if _under(p, root)]
    starts, explicit = _reach(config, config.paths, inside, root, read)
    if config.maybe:
        more = _reach(config, (*config.paths, *config.maybe), inside, root, read)
        starts = [*starts, *(s for s in more[0] if s not in starts)]
        explicit |= more[1]
    # the environments pytest does not enter (its ``_in_venv``), unless told to
    venvs = (
        set()
        if config.collect_in_virtualenv
        else {p.rpartition(m)[0] for p in inside for m in _ENVIRONMENT if p.endswith(m)}
    )
    ignored = [join(root, p) for p in config.ignore]
    globs = [join(root, p) for p in config.ignore_glob]
    problems = list(config.problems)
    conftests: dict[str, _Ignores] = {}
    # the conftests pytest loads: none with --noconftest, none above --confcutdir's folder
    # with that (a folder above the top, `--confcutdir=..`: every conftest of the tree loads)
    cut = confcut(root, config.confcutdir)
    # pytest's rootdir is its configuration's folder, one above the suite's where that has
    # none of its own (`cd svc_b && pytest` finding the top's): the conftests of the folders
    # from there down to the suite's load too
    home = posixpath.dirname(config.source) if config.source else _pyproject_above(read, root)
    home = home if root and home != root and _under(root, home) else root
    above: list[str] = []
    folder = root
    while folder != home:
        folder = posixpath.dirname(folder)
        if read(join(folder, "conftest.py")) is not None:
            above.append(join(folder, "conftest.py"))
    for p in [*above, *inside]:
        if config.noconftest or not (p == "conftest.py" or p.endswith("/conftest.py")):
            continue
        if conftest_loads(p.rpartition("/")[0], cut):
            conftests[p.rpartition("/")[0]] = found = conftest_ignores(read, p)
            problems.extend(found.problems)
    # the folders of the conftests that collect files of their own: every file of them pytest
    # reaches is offered to it, unless a conftest's own hook ignored it (``unreached``); below
    # a conftest that ignores what it chooses, a test file may be ignored (``maybe``)
    hooks = {f: defines_hooks(read, join(f, "conftest.py")) for f in conftests}
    opened = [f for f, h in hooks.items() if COLLECTS in h]
    choosing = [f for f, h in hooks.items() if IGNORES in h]
    # (what a conftest's computed list ignores is not known: none of its files is asked for)
    computed = [f for f, c in conftests.items() if c.problems]
    offered: list[tuple[str, str]] = []
    maybe: list[tuple[str, str]] = []  # files a conftest may ignore (``_conftest_judged``)
    pruned = any_of([p for p in [*config.norecursedirs, "__pycache__"] if "/" not in p])
    pruned_paths = [p for p in config.norecursedirs if "/" in p]
    by_name = any_of([p for p in config.python_files if "/" not in p])
    by_path = [p for p in config.python_files if "/" in p]
    texts = config.doctest_globs
    # a file named as a path is collected when it is Python, or (doctest on) a text file
    # pytest's doctest takes named (`.txt`, `.rst`) or globbed (`--doctest-glob='*.md'`)
    # A file given inside a folder also given is no argument of its own (pytest drops such a
    # duplicate: `tests/**` gives `tests` and all below it): collected as that folder's walk
    # finds it, by its name, unless the walk prunes or ignores it.
    given = {
        p
        for p in explicit
        if p.endswith(".py")
        or (texts and p.endswith((".txt", ".rst")))
        or any(_matches(p, p.rpartition("/")[2], pat) for pat in texts)
    }
    walked = {p for p in given if any(_under(p, s) for s in starts)}
    chosen: list[str] = [p for p in inside if p in given and p not in walked]
    for path in inside:
        if path in explicit and path not in walked:
            continue
        name = path.rpartition("/")[2]
        # the name first: it rules out nearly every file, cheaply
        if path.endswith(".py"):
            tested = (
                by_name(name)
                or any(_matches(path, name, pat) for pat in by_path)
                or (config.doctest_modules and _doctest_module(path, read))
            )
        else:
            tested = any(_matches(path, name, pat) for pat in texts)
        # (a package's own __init__.py pytest 7 collects with its package, offering it none)
        own = bool(opened) and name != "__init__.py" and any(_under(path, f) for f in opened)
        if not tested and not own:
            continue
        start = next((s for s in starts if _under(path, s)), None)
        if start is None or _pruned(path, start, pruned, venvs, pruned_paths):
            continue
        # pytest asks whether to ignore what it finds below where it starts, never the start
        # itself or a folder above it (`pytest tests/legacy` with `--ignore=tests/legacy`, or
        # a conftest's `collect_ignore = ["legacy"]`, collects it; a testpaths glob too)
        if any(_under(path, i) and i != start and _under(i, start) for i in ignored):
            continue
        if _glob_ignored(path, start, globs):
            continue
        judged = _conftest_judged(path, conftests, start, home)
        if judged is True:
            continue
        chooses = any(_under(path, f) for f in choosing)
        if not tested:
            if judged is False and not any(_under(path, f) for f in computed):
                # the nearest conftest that collects: for certain, or under a condition
                nearest = max((f for f in opened if _under(path, f)), key=len)
                offered.append((path, "" if hooks[nearest][COLLECTS] else nearest or "."))
            continue
        if judged is False and chooses:
            judged = None  # a conftest's hook may ignore it (``observed_ignored``: whether it did)
        chosen.append(path)
        if judged is None:
            maybe.append((path, start))
    files = tuple(sorted(set(chosen)))
    held = tuple(sorted(conftests)) if maybe else ()
    clashes = clashing(files, read) if config.import_mode in ("prepend", "append") else ()
    return Suite(
        root,
        config,
        files,
        tuple(dict.fromkeys(problems)),
        tuple(sorted(maybe)),
        held,
        clashes,
        tuple(sorted({p for p, f in offered if not f} - set(files))),
        tuple(sorted((p, "" if f == "." else f) for p, f in set(offered) if f and p not in files)),
    )


def directed(files: Iterable[str], observed: Iterable[str], root: str = "") -> list[str]:
    """``files`` as the runs found a folder's own collector decide them (a conftest's
    ``pytest_collect_directory``, which no reading of the tree can run: the runs' records,
    ``coverage.Coverage.ignored``): below a folder such a collector took (``directory``), the
    files it yielded (``yields``) and those below the folders it handed on (``within``, as
    their own collectors find them), not what pytest's own would have found there; of the
    folders below ``root`` (a suite's)."""
    custom: dict[str, tuple[set[str], set[str]]] = {}
    for record in observed:
        kind, _, rest = record.partition("\t")
        folder, _, entry = rest.partition("\t")
        if kind in ("directory", "yields", "within") and _under(folder, root):
            ys, within = custom.setdefault(folder, (set(), set()))
            if kind == "yields":
                ys.add(entry)
            elif kind == "within":
                within.add(entry)
    if not custom:
        return list(files)
    out = [
        f
        for f in files
        if not any(
            _under(f, d) and not any(_under(f, w) for w in within)
            for d, (_, within) in custom.items()
        )
    ]
    return out + sorted({y for ys, _ in custom.values() for y in ys} - set(out))


def unreached(found: Suite, reached: set[str], observed: Iterable[str]) -> list[str]:
    """The files of ``found.offered`` (and of ``offered_if``, where a run had that conftest's
    collector) that no run reached: ``reached`` holds those collected and those offered to
    the collectors; ``observed`` the runs' records (``coverage.Coverage.ignored``): the
    conftests that had a collector (``collects``), and what a conftest's own
    ``pytest_ignore_collect`` ignored (``hook``), which pytest offers nothing below."""
    collects: set[str] = set()
    hooked: list[str] = []
    for record in observed:
        kind, _, rest = record.partition("\t")
        folder, _, entry = rest.partition("\t")
        if kind == "collects":
            collects.add(folder)
        elif kind == "hook" and entry:
            hooked.append(entry)
    wanted = [*found.offered, *(p for p, f in found.offered_if if f in collects)]
    return [p for p in wanted if p not in reached and not any(_under(p, h) for h in hooked)]


def clashing(
    files: Sequence[str], read: Reader
) -> tuple[tuple[str, tuple[tuple[str, ...], ...]], ...]:
    """The test modules of ``files`` that one run cannot import together under pytest's
    prepend import mode, each group (the top-level name, its files...): pytest imports a file
    under the packages its folders are (each folder up to the first without an
    ``__init__.py``), and the top-level name is one module of ``sys.modules``: two files of one
    name in folders that are no packages, or two packages of one name (`svc_a/tests/` and
    `svc_b/tests/`, whatever their modules are called), and a run of them all fails to collect
    the second ("import file mismatch", or no such module). Each group: the name, and the
    files of each place it is (a module's file, or a package's folder)."""
    packages: dict[str, bool] = {}

    def package(folder: str) -> bool:
        if folder not in packages:
            packages[folder] = read(join(folder, "__init__.py")) is not None
        return packages[folder]

    tops: dict[str, dict[str, list[str]]] = {}  # top-level name -> where it is -> its files
    for path in files:
        folder, _, name = path.rpartition("/")
        if not name.endswith(".py") or name in _NO_TESTS:
            continue
        top, where = name[:-3], path
        # (pytest stops at a folder whose name is no Python name: `integration-tests/`)
        while folder and package(folder) and folder.rpartition("/")[2].isidentifier():
            where = folder
            folder, _, top = folder.rpartition("/")
        tops.setdefault(top, {}).setdefault(where, []).append(path)
    return tuple(
        (top, tuple(tuple(fs) for _, fs in sorted(places.items())))
        for top, places in sorted(tops.items())
        if len(places) > 1
    )


# what marks a folder as an environment pytest does not collect in (``_pytest.main._in_venv``)
_ENVIRONMENT = ("/pyvenv.cfg", "/conda-meta/history")


def _reach(
    config: PytestConfig, paths: Sequence[str], inside: Sequence[str], root: str, read: Reader
) -> tuple[list[str], set[str]]:
    """Where pytest starts collecting (folders) and the files it is given, for the addopts
    ``paths``: those that the tree holds, else the testpaths."""
    starts: list[str] = []
    explicit: set[str] = set()
    named = [join(root, p) for p in config.named(paths)]
    named = [p for p in named if p in inside or any(_under(q, p) for q in inside)]
    for name in config.dotted(paths):  # a package its build maps from a folder of its own
        usual = [join(root, p) for p in config.named([name])]
        if not any(p in inside or any(_under(q, p) for q in inside) for p in usual):
            for base in package_folders(read, root, name) or _nearest_package(name, root, inside):
                named += [p for p in (base, base + ".py") if p in inside]
                if any(_under(p, base) and p.endswith(".py") for p in inside):
                    named.append(base)
    if named:  # pytest collects what its arguments name, and then testpaths are not used
        explicit.update(p for p in named if p in inside)
        starts.extend(p for p in named if p not in inside)
    elif config.testpaths:
        folders = {p.rpartition("/")[0] for p in inside}
        for f in list(folders):
            while f:
                f = f.rpartition("/")[0]
                folders.add(f)
        for pattern in config.starts():
            full = join(root, pattern)
            # testpaths are globbed as pytest globs them: a ``*`` stays within one path part,
            # and a pattern ending in ``/`` matches folders only. A file matched is one pytest
            # is given, and collects whatever its name; a conftest or a package's
            # ``__init__.py`` that ``tests/*`` names too counts only when it defines a test
            # (a run of its folder, ``pytest tests``, collects neither).
            if not pattern.endswith("/"):
                explicit.update(
                    p
                    for p in inside
                    if _glob_match(full, p)
                    and (p.rpartition("/")[2] not in _NO_TESTS or _defines_tests(read(p)))
                )
            starts.extend(sorted(f for f in folders if f and _glob_match(full, f)))
        if config.pyargs:
            # a package the project maps from a folder of its own (setuptools' package-dir
            # `"" = "lib"`, installed editable), where the import finds it: one folder down,
            # for each name found nowhere else
            for name in (n for n in config.testpaths if "/" not in n):
                if _pyargs_found(config, name, root, inside, folders):
                    continue
                mapped = package_folders(read, root, name)  # where its build says it lies
                for base in mapped or _nearest_package(name, root, inside):
                    explicit.update(p for p in inside if p == base + ".py")
                    if any(_under(p, base) and p.endswith(".py") for p in inside):
                        starts.append(base)  # a package: not any folder so named
    if not starts and not explicit and not config.pyargs:
        # as pytest: testpaths that match nothing fall back to the folder (module names that
        # name nothing of the tree are an error of the run, or a package installed from
        # elsewhere: pytest searches no folder)
        starts = [root]
    # a folder given inside another given folder is walked as part of it, and pruned as the
    # walk prunes (pytest collects `tests tests/build` as `tests`: build is in norecursedirs)
    starts = [s for s in dict.fromkeys(starts) if not any(o != s and _under(s, o) for o in starts)]
    return starts, explicit


def package_folders(read: Reader, root: str, name: str) -> list[str]:
    """Where the project's build maps the package ``name`` (dotted) from, as its
    ``pyproject.toml`` in ``root`` says: setuptools' ``package-dir`` (``"" = "lib"``, or the
    package's own entry), poetry's ``packages`` (``from``), hatch's wheel ``packages``; paths
    of the tree, the package's own folder (or module, without ``.py``)."""
    data = read(join(root, "pyproject.toml"))
    try:
        tool = tomllib.loads(data.decode("utf-8")).get("tool", {}) if data else {}
    except (UnicodeDecodeError, tomllib.TOMLDecodeError, RecursionError):
        return []
    tool = tool if isinstance(tool, dict) else {}
    top, _, rest = name.partition(".")
    below = name.replace(".", "/")
    out: list[str] = []
    mapping = _dict(_dict(tool.get("setuptools")).get("package-dir"))
    if isinstance(mapping.get(top), str):
        out.append(posixpath.join(mapping[top], rest.replace(".", "/")).rstrip("/"))
    if isinstance(mapping.get(""), str):
        out.append(posixpath.join(mapping[""], below))
    for entry in _dict(tool.get("poetry")).get("packages") or []:
        if isinstance(entry, dict) and entry.get("include") == top and entry.get("from"):
            out.append(posixpath.join(str(entry["from"]), below))
    wheel = _dict(_dict(_dict(_dict(tool.get("hatch")).get("build")).get("targets")).get("wheel"))
    for entry in wheel.get("packages") or []:
        if isinstance(entry, str) and posixpath.basename(entry.rstrip("/")) == top:
            out.append(posixpath.join(entry.rstrip("/"), rest.replace(".", "/")).rstrip("/"))
    return [join(root, posixpath.normpath(o)) for o in dict.fromkeys(out)]


def _dict(value: object) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _nearest_package(name: str, root: str, inside: Sequence[str]) -> list[str]:
    """The packages (or modules) the dotted ``name`` names below ``root``, up to three
    folders down, the nearest ones (``lib/pkg``, ``src/python/pkg``: a folder given to the
    import path), where no build setting says; not in a hidden folder."""
    below = name.replace(".", "/")
    found: dict[int, list[str]] = {}
    for path in inside:
        rel = "/" + (path[len(root) + 1 :] if root else path)
        if not rel.endswith(".py"):
            continue
        # a package (or a namespace portion) holding Python files, or the module itself
        module = rel.endswith(f"/{below}.py")
        at = len(rel) - len(below) - 4 if module else rel.find(f"/{below}/")
        if at <= 0:
            continue
        base = rel[1:at]
        depth = base.count("/") + 1
        if depth <= 3 and not any(part.startswith(".") for part in base.split("/")):
            found.setdefault(depth, []).append(join(root, f"{base}/{below}"))
    return list(dict.fromkeys(found[min(found)])) if found else []


def _pyargs_found(
    config: PytestConfig, name: str, root: str, inside: Sequence[str], folders: set[str]
) -> bool:
    """Whether the ``--pyargs`` module name ``name`` is found where ``PytestConfig.starts``
    looks (the top, ``src/``, the ``pythonpath`` folders)."""
    places = [join(root, s) for s in config._replace(testpaths=(name,)).starts()]
    return any(place in folders or place in inside for place in places)


def glob_bases(starts: Sequence[str]) -> list[str]:
    """For each testpath of ``starts`` that is a glob, the folder above its first wildcard:
    where its matches are listed from, every folder entered (pytest starts at each match; its
    norecursedirs prune below a start, not the folders the glob spans: `components/*/tests`
    reaches `components/build/tests`)."""
    out: list[str] = []
    for start in starts:
        parts = start.split("/")
        wild = next((i for i, p in enumerate(parts) if _MAGIC.search(p)), None)
        if wild is not None:
            out.append("/".join(parts[:wild]))
    return out


_MAGIC = re.compile(r"[*?[]")  # glob's own test for a pattern (``glob.has_magic``)
_NO_TESTS = ("conftest.py", "__init__.py")  # Python files that define no tests, as a rule
# a test function or class at the top of a module, as pytest's defaults name them
_DEFINES_TESTS = re.compile(rb"^(?:async\s+def|def)\s+test|^class\s+Test", re.M)


def _defines_tests(data: bytes | None) -> bool:
    return data is None or _DEFINES_TESTS.search(data) is not None


def kept_by_tests(found: Suite, read: Reader, listing: Sequence[str] = ()) -> str:
    """The folder whose configuration file the suite's tests keep when the suite's own folder
    (the repository's top) has none: every test file lies in that one folder, and it holds a
    pytest configuration (``tests/pytest.ini``, run as ``pytest tests`` or ``cd tests &&
    pytest``). Then that is the project's configuration, and the suite is that folder's. Where
    pytest's defaults collect no file of the tree (its tests are named as only that
    configuration's ``python_files`` says), the one folder at the top of ``listing`` that holds
    a configuration is that folder: otherwise the suite would be empty, and any run of it
    complete. "" when not so."""
    if found.root or found.config.source:
        return ""
    if not found.files:
        holding = [
            top
            for top in sorted({p.partition("/")[0] for p in listing if "/" in p})
            if read_config(read, top).source
        ]
        return holding[0] if len(holding) == 1 else ""
    tops = {f.partition("/")[0] for f in found.files}
    if len(tops) != 1 or any("/" not in f for f in found.files):
        return ""
    (top,) = tops
    return top if read_config(read, top).source else ""


def _doctest_globs(taken: dict[str, list[str]], options: dict[str, str]) -> tuple[str, ...]:
    """The text files the doctest plugins collect, as the configuration leaves them: pytest's
    ``--doctest-glob`` (``test*.txt`` where none is given); none of its own where the plugin
    is off (``-p no:doctest``). xdoctest's ``--xdoctest`` unregisters it and collects its own
    ``--xdoctest-glob`` files instead (no default). pytest-doctestplus, on (``--doctest-plus``,
    or ``doctest_plus = enabled`` where ``--doctest-modules`` is not given: that flag leaves
    the run to pytest's plugin), takes its place: the globs given, with ``*.rst`` for
    ``--doctest-rst`` (or ``doctest_rst``), and no default (measured with ``--co``,
    doctestplus 1.x)."""
    flags = taken.get("flags", [])
    if any(f in flags for f in _NO_DOCTEST):  # xdoctest's own globs
        return tuple(g for flag in _XDOCTEST_GLOBS for g in taken.get(flag, []))
    if not _doctest_on(taken):
        return ()
    globs = list(taken.get("--doctest-glob", []))
    # doctestplus's setting alone leaves --doctest-modules to pytest's plugin (its flag not)
    plus = "--doctest-plus" in flags or (
        options.get("doctest_plus", "").lower() == "enabled" and "--doctest-modules" not in flags
    )
    if not plus:
        return tuple(globs) or DEFAULT_DOCTEST_GLOBS
    if "--doctest-rst" in flags or options.get("doctest_rst", "").lower() in ("true", "1"):
        globs.append("*.rst")
    return tuple(globs)


def _doctest_modules(taken: dict[str, list[str]]) -> bool:
    """Whether every module is a test file: pytest's ``--doctest-modules``, or xdoctest's
    ``--xdoctest`` (which collects the doctests of every module in pytest's place)."""
    flags = taken.get("flags", [])
    if any(f in flags for f in _NO_DOCTEST):
        return True
    return "--doctest-modules" in flags and _doctest_on(taken)


def _doctest_on(taken: dict[str, list[str]]) -> bool:
    """Whether pytest's doctest plugin (or pytest-doctestplus in its place) collects: not
    with ``-p no:doctest``, nor with xdoctest's ``--xdoctest``, which unregisters it."""
    flags = taken.get("flags", [])
    return "no:doctest" not in taken.get("-p", []) and not any(f in flags for f in _NO_DOCTEST)


def _doctest_module(path: str, read: Reader) -> bool:
    """Whether pytest's ``--doctest-modules`` collects the module ``path``: every one but
    ``__main__.py`` and a ``setup.py`` of setuptools or distutils (as its doctest plugin)."""
    name = path.rpartition("/")[2]
    if name == "__main__.py":
        return False
    if name == "setup.py":
        data = read(path) or b""
        return b"setuptools" not in data and b"distutils" not in data
    return True


def settings_files(suites: Sequence[Suite]) -> set[str]:
    """The files that shape how each suite runs: pytest's configuration files in its folder,
    and each ``conftest.py`` that its test files' folders, or those above them, may hold."""
    out: set[str] = set()
    for found in suites:
        out.update(join(found.root, name) for name in CONFIG_NAMES)
        folders = {posixpath.dirname(f) for f in found.files}
        for folder in list(folders):
            while folder and folder != found.root:
                folder = posixpath.dirname(folder)
                folders.add(folder)
        out.update(join(f, "conftest.py") for f in folders)
    return out


def run_reads(
    configs: Iterable[str], conftest_at: Callable[[str], bool], loaded: Iterable[str]
) -> set[str]:
    """The files a run of the suite reads for the files the tests ``loaded``: the suite's
    configuration files (``configs``), and each ``conftest.py`` in their folders and those
    above them that the tree holds (``conftest_at``). A sparse checkout may leave them out:
    the run then goes without them, as a clean clone does not."""
    out = {c for c in configs if c}
    above: set[str] = set()
    for rel in loaded:
        folder = posixpath.dirname(rel)
        while folder not in above:
            above.add(folder)
            folder = posixpath.dirname(folder)
    out.update(c for c in (join(f, "conftest.py") for f in above) if conftest_at(c))
    return out


def any_of(patterns: Sequence[str]) -> Callable[[str], bool]:
    """One compiled test for several fnmatch patterns."""
    if not patterns:
        return lambda name: False
    regex = re.compile("|".join(f"(?:{fnmatch.translate(p)})" for p in patterns))
    return lambda name: regex.match(name) is not None


def _glob_match(pattern: str, path: str) -> bool:
    """As pytest globs testpaths (``glob(recursive=True)``): a ``*`` stays within one path
    part, a ``**`` part spans any number of folders, and neither matches a name that begins
    with ``.`` unless the pattern's part does."""
    return _parts_match(pattern.split("/"), path.split("/"))


def _parts_match(pats: Sequence[str], parts: Sequence[str]) -> bool:
    if not pats:
        return not parts
    if pats[0] == "**":
        return any(
            _parts_match(pats[1:], parts[i:])
            for i in range(len(parts) + 1)
            if not any(p.startswith(".") for p in parts[:i])
        )
    if not parts or (parts[0].startswith(".") and not pats[0].startswith(".")):
        return False
    return fnmatch.fnmatchcase(parts[0], pats[0]) and _parts_match(pats[1:], parts[1:])


def _matches(path: str, name: str, pattern: str) -> bool:
    # As pytest's fnmatch_ex: a pattern without a slash matches the file's name.
    return _path_matches(path, pattern) if "/" in pattern else fnmatch.fnmatch(name, pattern)


def _path_matches(path: str, pattern: str) -> bool:
    """As pytest's ``fnmatch_ex`` for a pattern holding a ``/``: the pattern, made
    ``*/pattern`` unless it is absolute, against the absolute path (here under a stand-in
    for the checkout's own place, which the tree does not tell, as deep as most are:
    ``*/tests/test_*.py`` takes ``tests/test_a.py``, whose absolute path has a folder above
    ``tests``; ``/tests/legacy`` takes nothing, as it names no folder at the root)."""
    if pattern.startswith("/"):  # absolute: the whole path (which names no real folder here)
        return fnmatch.fnmatch(f"{_PLACE}/{path}", pattern)
    return fnmatch.fnmatch(f"{_PLACE}/{path}", "*/" + pattern)


def _pruned(
    path: str,
    start: str,
    pruned: Callable[[str], bool],
    venvs: set[str],
    path_patterns: Sequence[str] = (),
) -> bool:
    """Whether a folder between ``start`` and the file is one pytest does not enter: its name
    matches a pattern, or (as pytest's ``fnmatch_ex``, for a pattern holding a ``/``) its
    whole path does."""
    rel = path[len(start) + 1 :] if start else path
    folder = start
    for part in rel.split("/")[:-1]:
        folder = f"{folder}/{part}" if folder else part
        if folder in venvs or pruned(part):
            return True
        # as pytest: the pattern, made "*/pattern", against the folder's absolute path (here
        # under a stand-in for the checkout's own place, which the tree does not tell)
        if any(_path_matches(folder, p) for p in path_patterns):
            return True
    return False


def _glob_ignored(path: str, top: str, globs: Sequence[str]) -> bool:
    """Whether an ignore glob matches ``path`` or a folder it lies in below ``top``: pytest
    asks ``pytest_ignore_collect`` of every folder it enters, and an ignored one is pruned."""
    if not globs:
        return False
    while path and path != top:
        if any(fnmatch.fnmatch(path, g) for g in globs):
            return True
        path = posixpath.dirname(path)
    return False


def _conftest_ignored(
    path: str,
    root: str,
    conftests: dict[str, _Ignores],
    start: str | None = None,
    top: str | None = None,
) -> bool:
    """pytest asks ``pytest_ignore_collect`` of each folder it enters below where it starts
    (``start``, by default ``root``) and of the file: one is ignored when it is in the
    ``collect_ignore`` (or matches the ``collect_ignore_glob``) of the nearest conftest at or
    above its own folder that sets that name. A nearer conftest's list hides a farther one's,
    an empty list too (pytest's ``_rget_with_confmod``)."""
    if not conftests:
        return False
    start = root if start is None else start
    top = root if top is None else top  # the highest folder whose conftest loads
    part = path
    while part and part != start:
        folder = posixpath.dirname(part)
        paths = _nearest(conftests, folder, top, "collect_ignore")
        if paths is not None and part in paths.paths:
            return True
        globs = _nearest(conftests, folder, top, "collect_ignore_glob")
        if globs is not None and any(fnmatch.fnmatch(part, g) for g in globs.globs):
            return True
        part = folder
    return False


def _conftest_judged(
    path: str, conftests: dict[str, _Ignores], start: str, top: str
) -> bool | None:
    """``_conftest_ignored`` as statements under a condition leave the conftests' lists: True
    where ``path`` is ignored whichever ran, False where it is not, None where that depends
    on them (an entry one may add, or remove; a nearer conftest that may set the name and
    hide a farther one's list)."""
    if not conftests:
        return False
    if not any(c.maybe_paths or c.maybe_globs or c.maybe_defines for c in conftests.values()):
        return _conftest_ignored(path, start, conftests, start, top)
    out: bool | None = False
    part = path
    while part and part != start:
        folder = posixpath.dirname(part)
        for name in ("collect_ignore", "collect_ignore_glob"):
            found = _judged_by(part, folder, top, conftests, name)
            if found is True:
                return True
            if found is None:
                out = None
        part = folder
    return out


def _judged_by(
    part: str, folder: str, top: str, conftests: dict[str, _Ignores], name: str
) -> bool | None:
    """Whether the nearest conftest at or above ``folder`` that sets ``name`` ignores
    ``part`` (True, False), or whether that depends on statements under a condition (None)."""
    uncertain = maybe = False
    glob = name == "collect_ignore_glob"

    def holds(entries: Sequence[str]) -> bool:
        return any(fnmatch.fnmatch(part, e) for e in entries) if glob else part in entries

    while True:
        found = conftests.get(folder)
        if found is not None:
            maybe = maybe or holds(found.maybe_globs if glob else found.maybe_paths)
            if name in found.defines:
                if holds(found.globs if glob else found.paths):
                    return None if uncertain else True
                return None if maybe else False
            uncertain = uncertain or name in found.maybe_defines
        if folder == top or not folder:
            return None if maybe else False
        folder = posixpath.dirname(folder)


def observed_ignored(
    path: str, start: str, observed: Iterable[str], conftests: Sequence[str]
) -> bool:
    """Whether the run's conftests, as it observed their lists (records
    ``KIND\tFOLDER\tENTRY``, KIND ``loaded``, ``defines``, ``path`` or ``glob``) and their
    own ``pytest_ignore_collect`` (``hook``: a path the conftest's hook ignored), ignored
    ``path``, as pytest takes them: it enters each folder below where it starts (``start``),
    asking the nearest conftest above that sets a name whether to ignore it, then loads its
    conftest. Only where the run loaded each conftest of ``conftests`` (the suite's,
    ``Suite.conftests``) that pytest reached on the way: one it did not load, the lists are
    not known."""
    lists: dict[str, dict[str, set[str]]] = {}
    for record in observed:
        kind, _, rest = record.partition("\t")
        folder, _, entry = rest.partition("\t")
        lists.setdefault(
            folder, {"loaded": set(), "defines": set(), "path": set(), "glob": set(), "hook": set()}
        )
        if kind in lists[folder]:
            lists[folder][kind].add(entry)
    hooked = {e for held in lists.values() for e in held["hook"]}
    if any(_under(start, f) and f not in lists for f in conftests):
        return False  # (one where it starts, or above, loads before it collects)
    seen = {
        folder: _Ignores(
            tuple(sorted(held["path"])), tuple(sorted(held["glob"])), (), frozenset(held["defines"])
        )
        for folder, held in lists.items()
    }
    below = path[len(start) + 1 :] if start else path
    if not _under(path, start) or not below:
        return False
    part = start
    for name in below.split("/"):
        part = f"{part}/{name}" if part else name
        folder = posixpath.dirname(part)
        paths = _nearest(seen, folder, "", "collect_ignore")
        globs = _nearest(seen, folder, "", "collect_ignore_glob")
        if (
            (paths is not None and part in paths.paths)
            or (globs is not None and any(fnmatch.fnmatch(part, g) for g in globs.globs))
            or part in hooked
        ):
            return True
        if part != path and part in conftests and part not in lists:
            return False  # (entered, its conftest not loaded: what it holds is not known)
    return False


def _nearest(conftests: dict[str, _Ignores], folder: str, root: str, name: str) -> _Ignores | None:
    """The ignores of the nearest conftest at or above ``folder`` (up to ``root``) that sets
    ``name``."""
    while True:
        found = conftests.get(folder)
        if found is not None and name in found.defines:
            return found
        if folder == root or not folder:
            return None
        folder = posixpath.dirname(folder)


def collect_all(listing: Sequence[str], read: Reader, roots: Sequence[str]) -> tuple[Suite, ...]:
    """Every suite: the declared folders, or the repository root."""
    return tuple(collect(listing, read, r.strip("/")) for r in (roots or [""]))


def describe_missing(files: Sequence[str], shown: int = SHOWN) -> str:
    """``41 files: tests/integration (40 files), tests/test_x.py``: folders with their counts."""
    groups: dict[str, list[str]] = {}
    for f in files:
        groups.setdefault(posixpath.dirname(f), []).append(f)
    named: list[str] = []
    for folder, items in groups.items():
        # a few files are named; a folder of many gets its count
        named += items if len(items) <= 3 else [f"{folder or '.'} ({len(items)} files)"]
    more = len(named) - shown
    text = ", ".join(named[:shown]) + (f" and {more} more" if more > 0 else "")
    return f"{len(files)} {'file' if len(files) == 1 else 'files'}: {text}"
