"""What the run's own options and settings do to the suite: ``overrides``.

The suite is what its configuration defines (``suite``): its ``addopts``, its settings, its
conftests and plugins. A run's command line, ``PYTEST_ADDOPTS``, ``-o`` and ``-p`` may change
which tests the collected files yield, or how strictly a test is judged (fewer retries or
more, a coverage threshold dropped, a warning the suite makes an error made lenient, a plugin
whose markers the tests carry left unloaded). ``overrides`` names each such change, as
``selection.Facts.overrides``: the gate refuses the run as partial (``partial-run``). The
options are read as pytest and its plugins read them: the last of an option given twice
wins, ``PYTEST_ADDOPTS`` before the command line, an ``@FILE`` of arguments as pytest 8.2
reads it.
"""

from __future__ import annotations

import ast
import contextlib
import functools
import json
import os
import posixpath
import re
import sys
from pathlib import Path
from types import MappingProxyType, ModuleType
from typing import TYPE_CHECKING, Any

from genstamp.paths import inside, installed
from genstamp.typedtuple import NamedTuple

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator, Mapping, Sequence

    import pytest

    from genstamp.pytest_plugin import Tally


def configuration(cfg: pytest.Config) -> tuple[str | None, list[str]]:
    """pytest's configuration file, and the ``conftest.py`` files it loaded."""
    ini = getattr(cfg, "inipath", None)
    conftests = [
        str(getattr(plugin, "__file__", ""))
        for plugin in cfg.pluginmanager.get_plugins()
        if isinstance(plugin, ModuleType)
        and os.path.basename(str(getattr(plugin, "__file__", ""))) == "conftest.py"
    ]
    return (str(ini) if ini else None), conftests


# argparse actions that take no value
_FLAG_ACTIONS = frozenset({"store_true", "store_false", "store_const", "count", "help", "version"})


def options_in_addopts(config: pytest.Config) -> str:
    """``binding.P_OPTIONS``: the options in the configuration's ``addopts`` that the suite's
    tables do not know, each with how this run's pytest (its plugins', its conftests') takes
    it, as a JSON object; "" when every option there is in the tables."""
    from genstamp.suite import FLAGS, OPTIONAL, VALUED

    try:
        words = [str(w) for w in config.getini("addopts")]
    except (ValueError, TypeError):
        return ""
    tables = VALUED | FLAGS | OPTIONAL
    unknown = {w for w in words if w.startswith("-") and "=" not in w and w not in tables}
    if not unknown:
        return ""
    parser = config._parser
    takes: dict[str, str] = {}
    try:
        for group in [*parser._groups, parser._anonymous]:
            for option in group.options:
                attrs = option.attrs()
                if attrs.get("action") in _FLAG_ACTIONS or attrs.get("nargs") == 0:
                    kind = "flag"
                else:
                    kind = "optional" if attrs.get("nargs") == "?" else "value"
                for name in option.names():
                    takes[name] = kind
    except AttributeError:  # a pytest whose parser is built otherwise: the tables alone
        return ""
    return json.dumps({o: takes[o] for o in sorted(unknown) if o in takes})


# ini options that decide which tests a collected file yields, and pytest's plugins that collect
# tests or decide their outcome (skip and xfail markers)
SHAPING_INI = ("python_classes", "python_functions")
COLLECTING = ("python", "unittest", "skipping")
# the options of installed plugins that run a failing test again until it passes: how many
# times (pytest-rerunfailures' --reruns, and its setting; --force-reruns, over each test's
# marker), and flaky's, that retries every test (--max-runs times)
RERUNS = "--reruns"
FORCED_RERUNS = "--force-reruns"
FORCE_FLAKY, MAX_RUNS = "--force-flaky", "--max-runs"
# ... that skip tests a run of the suite runs (pytest-benchmark's: the benchmarks alone, or all
# but them), and where the suite's coverage has a threshold, pytest-cov's that turn it off
SKIPPING = ("--benchmark-only", "--benchmark-skip")
UNCOVERED = "--no-cov"
# ... that weaken what a test checks: a hypothesis profile of the run's choosing (fewer
# examples), pytest-django's database built from the models (a forgotten migration unseen),
# syrupy's unused snapshots a warning or not checked, or snapshot files of some kinds not read
# at all (a session that fails passes)
WEAKENING: tuple[str, ...] = ("--nomigrations", "--no-migrations", "--snapshot-warn-unused")
WEAKENING += ("--snapshot-disable-unused", "--snapshot-ignore-file-extensions")
WEAKENING += ("--envfile",)  # pytest-env's: the environment of another file than the suite's
PROFILES = ("--hypothesis-profile",)
# command-line options that set a setting (the level a logger records at: what caplog sees)
SETTING_FLAGS = {
    "--log-level": "log_level",
    "--log-cli-level": "log_cli_level",
    "--log-file-level": "log_file_level",
}
# the kinds of setting that hold a list (a flag of the same name only shows it: --markers)
_LIST_INI = frozenset({"linelist", "args", "paths", "pathlist"})
# ... a list of folders or flags (xdist's rsyncdirs, doctest_optionflags): read where it counts
_FOLDERS_INI = frozenset({"args", "paths", "pathlist"})


class Setting(NamedTuple):
    """A command-line option that sets a setting: pytest's ``--log-level`` (``log_level``),
    pytest-timeout's ``--timeout`` (``timeout``), pytest-asyncio's ``--asyncio-mode``."""

    key: str  # the ini key: the option's destination
    bare: str | None  # what a flag that takes no value stores, as text (None: it takes one)


def _reads_args_files() -> bool:
    """Whether this pytest reads arguments from an @FILE (pytest 8.2 and later)."""
    import pytest  # the plugin's: imported already (this module imports without it)

    return tuple(int(p) for p in pytest.__version__.split(".")[:2] if p.isdigit()) >= (8, 2)


# options whose destination is not their setting's name: pytest-django's `--ds`, `--dc`
_DEST_SETTINGS = {"ds": "DJANGO_SETTINGS_MODULE", "dc": "DJANGO_CONFIGURATION"}


def _setting_options(cfg: pytest.Config) -> dict[str, Setting]:
    """Each option of this run's parser (pytest's and its plugins') whose destination is a
    setting of the same name, by each of its option strings: plugins read such an option
    before the setting, so the option given for a run overrides the configured setting."""
    parser = getattr(cfg, "_parser", None)
    known = getattr(parser, "_inidict", None)
    if not isinstance(known, dict):
        return {}
    out: dict[str, Setting] = {}
    for group in [*getattr(parser, "_groups", ()), getattr(parser, "_anonymous", None)]:
        for option in getattr(group, "options", ()):
            with contextlib.suppress(Exception):  # pytest's private shapes, across versions
                attrs = option.attrs()
                key = attrs.get("dest")
                key = _DEST_SETTINGS.get(key, key) if isinstance(key, str) else key
                entry = known.get(key)
                kinds = entry[1] if isinstance(entry, tuple) and len(entry) > 1 else None
                kinds = kinds if isinstance(kinds, tuple) else (kinds,)
                if entry is None or key in SHOWING_INI or _LIST_INI.intersection(kinds):
                    continue
                action, nargs = attrs.get("action"), attrs.get("nargs")
                if action in ("store_true", "store_false") or nargs == 0:
                    const = attrs.get("const") if nargs == 0 else action == "store_true"
                    if isinstance(const, (bool, str, int, float)):
                        stored = str(const).lower() if isinstance(const, bool) else str(const)
                        out.update((n, Setting(key, stored)) for n in option.names())
                elif nargs in (None, "?") and action in (None, "store"):
                    out.update((n, Setting(key, None)) for n in option.names())
    return out


def _setting_variables(cfg: pytest.Config) -> dict[str, str]:
    """The environment variables that may hold a setting, each with the setting's key:
    ``PYTEST_KEY`` for each setting of one value, and the setting's own name where it is all
    capitals (``DJANGO_SETTINGS_MODULE``)."""
    known = getattr(getattr(cfg, "_parser", None), "_inidict", None)
    out: dict[str, str] = {}
    for key, entry in known.items() if isinstance(known, dict) else ():
        kinds = entry[1] if isinstance(entry, tuple) and len(entry) > 1 else None
        kinds = kinds if isinstance(kinds, tuple) else (kinds,)
        if not isinstance(key, str) or key in SHOWING_INI or _LIST_INI.intersection(kinds):
            continue
        out[f"PYTEST_{key.upper()}"] = key
        if key.isupper():
            out[key] = key
    return out


def _unread_settings(
    cfg: pytest.Config, values: Mapping[str, str], words: list[str]
) -> Iterator[str]:
    """Installed plugins this run does not load (``-p no:NAME``, ``PYTEST_DISABLE_PLUGIN_
    AUTOLOAD``) of which the suite's configuration sets a setting: a run of the suite loads
    them, and reads it (pytest-timeout's ``timeout``)."""
    known = getattr(getattr(cfg, "_parser", None), "_inidict", None)
    if not isinstance(known, dict):
        return
    unread = {
        key: value
        for key, value in values.items()
        if _canonical(cfg, key) not in known and key not in SHOWING_INI
    }
    if not unread:  # every setting configured is read: the usual run pays nothing here
        return
    blocked = {v[len("no:") :] for f, v in valued(words) if f == "-p" and v.startswith("no:")}
    for name, load in _unloaded_plugins(cfg):
        defaults = _plugin_settings(cfg, load)
        for key, value in unread.items():
            if key in defaults and not _same_or_stricter(key, value, defaults[key] or ""):
                value = " ".join(value.split())
                if name in blocked or f"pytest_{name}" in blocked:
                    why = f"-p no:{name}"
                elif os.environ.get("PYTEST_DISABLE_PLUGIN_AUTOLOAD"):
                    why = f"PYTEST_DISABLE_PLUGIN_AUTOLOAD (the plugin {name} not loaded)"
                else:
                    why = f"the plugin {name} not loaded"
                yield f"{why}: its setting {key} = {value} unread"


def _autoload_unloaded(
    cfg: pytest.Config, tally: Tally, values: Mapping[str, str], words: list[str]
) -> Iterator[str]:
    """Installed plugins a run of the suite loads that this one did not, its autoloading
    turned off (``PYTEST_DISABLE_PLUGIN_AUTOLOAD``, ``--disable-plugin-autoload``), which the
    tests use through their markers (pytest-timeout's ``timeout``: it decides nothing) or the
    project configures in a table of the plugin's own (pytest-env's ``[tool.pytest_env]``:
    the variables are not set). (Their ini settings: ``_unread_settings``; a plugin the run
    turned off by ``-p no:NAME``: ``overrides``.)"""
    flag = "--disable-plugin-autoload"
    if flag in _addopts(values):
        return  # the suite's own: a run of the suite loads none either
    if os.environ.get("PYTEST_DISABLE_PLUGIN_AUTOLOAD"):
        why = "PYTEST_DISABLE_PLUGIN_AUTOLOAD"
    elif flag in words:
        why = flag
    else:
        return  # (the usual run pays nothing here)
    for name, _ in _unloaded_plugins(cfg, entry_points_only=True):
        if cfg.pluginmanager.is_blocked(name):
            continue  # the run's -p no:NAME, said as such
        if used := _used_markers(cfg, tally, name, values):
            yield f"{why} (the plugin {name} not loaded, the tests' marker {', '.join(used)})"
        elif table := _plugin_table(cfg, name):
            yield f"{why} (the plugin {name} not loaded, its settings [tool.{table}] unread)"


def _plugin_table(cfg: pytest.Config, name: str) -> str | None:
    """The table of ``[tool]`` in the project's pyproject.toml that the installed plugin
    whose ``pytest11`` entry point ``-p no:NAME`` blocks reads, named after its distribution
    or its module, and named in the plugin module's source beside ``"tool"`` (pytest-env's
    ``[tool.pytest_env]``; not a table of the library the plugin comes with, logfire's
    ``[tool.logfire]``, which the library reads whether the plugin loads or not), when the
    project sets one: None when it sets none."""
    from importlib.metadata import entry_points

    from genstamp.roots import _toml

    names: set[str] = set()
    with contextlib.suppress(Exception):  # an installed distribution's metadata: whatever
        for ep in entry_points(group="pytest11"):
            if ep.name in (name, f"pytest_{name}"):
                dist = re.sub(r"[-_.]+", "_", ep.dist.name.lower()) if ep.dist else ""
                named = {dist, dist.replace("_", "-"), ep.module.partition(".")[0]} - {""}
                names.update(named & _strings_of(ep.module, "tool"))
    if not names:
        return None
    try:
        tool = _toml((cfg.rootpath / "pyproject.toml").read_bytes()).get("tool")
    except (OSError, ValueError):
        return None
    if not isinstance(tool, dict):
        return None
    return next((n for n in sorted(names) if isinstance(tool.get(n), dict) and tool[n]), None)


def _strings_of(module: str, *needed: str) -> set[str]:
    """The string constants of the source of the installed module ``module``, where it holds
    each of ``needed`` (none otherwise, or where it cannot be read)."""
    where = _module_file(module)
    try:
        with open(where, "rb") as fh:
            tree = ast.parse(fh.read())
    except (OSError, SyntaxError, ValueError):
        return set()
    found = {n.value for n in ast.walk(tree) if isinstance(n, ast.Constant)}
    return {s for s in found if isinstance(s, str)} if set(needed) <= found else set()


def _unloaded_plugins(
    cfg: pytest.Config, entry_points_only: bool = False
) -> Iterator[tuple[str, Callable[[], object]]]:
    """(name, loader) of each installed plugin (a ``pytest11`` entry point) and each of
    pytest's own (unless ``entry_points_only``) that this run did not load: one loaded by
    another name (``-p pytest_timeout`` of the entry point ``timeout``) is loaded."""
    import importlib
    from importlib import metadata

    manager = cfg.pluginmanager
    with contextlib.suppress(Exception):
        for point in metadata.entry_points(group="pytest11"):
            if manager.get_plugin(point.name) is None and not _registered(manager, point.load):
                yield point.name, point.load
    if entry_points_only:
        return
    from _pytest.config import default_plugins

    for name in default_plugins:
        if manager.is_blocked(name):
            yield name, functools.partial(importlib.import_module, f"_pytest.{name}")


def _registered(manager: pytest.PytestPluginManager, load: Callable[[], object]) -> bool:
    """Whether the plugin ``load`` imports is registered, under any name."""
    try:
        return manager.is_registered(load())
    except Exception:  # a plugin's own code: whatever it raises
        return False


def _plugin_settings(cfg: pytest.Config, load: Callable[[], object]) -> dict[str, str | None]:
    """The settings a plugin registers (its ``pytest_addoption`` given a parser of its own),
    each with its default as text (None: unknown); empty when it cannot be asked."""
    import inspect

    from _pytest.config.argparsing import Parser

    with contextlib.suppress(Exception):  # a plugin's own code: whatever it raises
        hook = getattr(load(), "pytest_addoption", None)
        if hook is None:
            return {}
        parser = Parser(_ispytest=True)
        given = {"parser": parser, "pluginmanager": cfg.pluginmanager}
        hook(**{p: given[p] for p in inspect.signature(hook).parameters if p in given})
        out = {}
        for key, entry in parser._inidict.items():
            kinds = entry[1] if isinstance(entry, tuple) and len(entry) > 1 else None
            if _FOLDERS_INI.intersection(kinds if isinstance(kinds, tuple) else (kinds,)):
                continue  # lines (pytest-env's env) decide what the tests see
            out[key] = _as_text(entry[2] if isinstance(entry, tuple) and len(entry) > 2 else None)
        return out
    return {}


def _as_text(default: object) -> str | None:
    if isinstance(default, bool):
        return "true" if default else "false"
    if isinstance(default, (list, tuple)):
        return " ".join(str(d) for d in default)
    return str(default) if isinstance(default, (str, int, float)) else None


# pytest's plugins that report what a test leaves behind as a warning (an error where the
# suite's filters make it one), and that warning's category
UNHANDLED = {
    "threadexception": "pytest.PytestUnhandledThreadExceptionWarning",
    "unraisableexception": "pytest.PytestUnraisableExceptionWarning",
}
# ini options that change only what the run shows or keeps, never an outcome (and those the
# suite itself follows: the files it names)
SHOWING_INI = frozenset(
    {
        "cache_dir",
        "console_output_style",
        "junit_family",
        "junit_suite_name",
        "junit_logging",
        "junit_log_passing_tests",
        "junit_duration_report",
        "log_cli",
        "log_cli_format",
        "log_cli_date_format",
        "log_file",
        "log_file_format",
        "log_file_date_format",
        "log_file_mode",
        "verbosity_assertions",
        "verbosity_test_cases",
        "verbosity_subtests",
        "truncation_limit_lines",
        "truncation_limit_chars",
        "tmp_path_retention_count",
        "tmp_path_retention_policy",
        "faulthandler_timeout",
        "minversion",
        "required_plugins",
        "testpaths",
        "python_files",
        "norecursedirs",
    }
)


def overrides(cfg: pytest.Config, tally: Tally, coverage_left: bool = True) -> tuple[str, ...]:
    """The run's own options (its command line and ``PYTEST_ADDOPTS``; the configuration's
    ``addopts`` are the suite's) that change which tests the collected files yield, or make
    lenient a warning that the configuration's ``filterwarnings`` make an error.
    ``coverage_left``: whether coverage data of an earlier run was there as the run began
    (``earlier_coverage``), which ``--cov-append`` counts."""
    words = run_words(cfg)
    rel = tally.tree_path(cfg.rootpath)
    own = None if rel is None else tally.config_at("" if rel == "." else rel)
    suite = tally.suite_config("" if rel in (None, ".") else rel)
    # the configuration the run's rootdir would have, or (a rootdir outside the work tree: `-c`
    # of a file there, `--rootdir`) the one the suite is judged by
    expected = own if own is not None else suite
    errors = _warning_errors(cfg, expected.warning_errors)
    # whether the run's filters make a warning lenient that the suite's make an error, asked
    # as Python applies them (None: a filter pytest cannot read; its categories are compared)
    loosened = _lenient_warnings(cfg, expected.values, words)
    # a marker's filters apply after every other (pytest's catch_warnings_for_item): only
    # turning the warnings plugin off makes its error lenient
    marked = [*errors, *tally.all_marked_errors()]
    out: list[str] = []
    # PYTEST_PLUGINS: plugins the run loads, as -p does; and those a runner script gives
    # pytest.main (``plugins=["pkg.mod"]`` as -p; a module or an object of the checkout's)
    for plugin in os.environ.get("PYTEST_PLUGINS", "").split(","):
        words += ["-p", plugin.strip()] if plugin.strip() else []
    for given in cfg.invocation_params.plugins or ():
        if isinstance(given, str):
            words += ["-p", given]
        elif (where := _defined_in(given)) and _of_the_checkout(tally, where):
            out.append(f"pytest.main(plugins=[...]) of {os.path.basename(where)}")
    # a command-line option that sets a setting is an -o of it, and the suite's addopts set
    # what its configuration sets: `addopts = --timeout 5` over `timeout = 1`
    settings = {**{f: Setting(k, None) for f, k in SETTING_FLAGS.items()}, **_setting_options(cfg)}
    set_by_suite = {
        settings[f].key: v for f, v in valued(_addopts(suite.values), settings) if f in settings
    }
    pairs, said = [], {}
    for f, v in valued(words, settings):
        if f in settings:
            said["-o", f"{settings[f].key}={v}"] = f"{f} {v}"
        pairs.append(("-o", f"{settings[f].key}={v}") if f in settings else (f, v))
    for flag, value in pairs:
        if flag == "-c":
            # another configuration than the suite's (the one pytest finds by itself), or than
            # that of a declared suite whose files the run collected (`-c a/pytest.ini a b`)
            chosen = tally.tree_path(cfg.invocation_params.dir / value)
            collected = {tally.suite_root(f) for f in tally.all_files()} if tally.suites else set()
            owned = {tally.config_at(r).source for r in collected}
            if chosen != expected.source or any(o != chosen for o in owned):
                out.append(f"-c {value}")
        elif flag == "-o":
            key = _canonical(cfg, value.partition("=")[0].strip())
            given = value.partition("=")[2]
            if key == "filterwarnings":
                if loosened if loosened is not None else _lenient(given, errors):
                    out.append(f"-o {value}")
            elif key == "python_files":
                configured = _runs_with(cfg, suite.values, set_by_suite, key)
                if configured is None or _files_shaped_otherwise(tally, given, configured):
                    out.append(f"-o {value}")
            elif key in SHAPING_INI:
                configured = _runs_with(cfg, suite.values, set_by_suite, key)
                # the same patterns the suite collects with (pytest's default where it sets
                # none), in any order, change nothing
                if configured is None or set(_ini_args(given)) != set(_ini_args(configured)):
                    out.append(f"-o {value}")
            elif key not in SHOWING_INI and key != "reruns":  # (with the other retries)
                configured = _runs_with(cfg, suite.values, set_by_suite, key)
                # unknown (a plugin's setting with no default): not taken for an override
                if configured is not None and not _same_or_stricter(key, given, configured):
                    # not what the suite's configuration runs with
                    out.append(said.get((flag, value), f"-o {value}"))
        elif flag == "-p" and value.startswith("no:"):
            name = value[len("no:") :]
            lenient = (name == "warnings" and marked) or (
                name in UNHANDLED and any(_overlap(UNHANDLED[name], e) for e in marked)
            )
            if name == "assertion":
                # as --assert=plain (a failing assert's message is another), where it takes
                # effect: pytest installs its rewriting before it reads a -p of the addopts or
                # PYTEST_ADDOPTS, so only one on the command line turns it off, whatever the
                # suite's addopts say
                if value in _command_line_plugins(cfg) and "--assert=plain" not in _spelled(
                    _addopts(suite.values), "--assert"
                ):
                    out.append(f"-p {value}")
            elif _in_addopts(suite.values, (flag, value)):
                pass  # the suite's own: a clean run goes without the plugin too
            elif (
                name in COLLECTING
                or lenient
                or _checkout_plugin(cfg, tally, name, _in_addopts(suite.values, ("-p", name)))
            ):
                out.append(f"-p {value}")
            elif used := _used_markers(cfg, tally, name, suite.values):
                # an installed plugin the tests use through its markers (pytest-timeout's
                # `timeout`): without it, the marker decides nothing
                out.append(f"-p {value} (the tests' marker {', '.join(used)})")
            elif table := _plugin_table(cfg, name):
                out.append(f"-p {value} (its settings [tool.{table}] unread)")
        elif flag == "-p" and not _in_addopts(suite.values, ("-p", value)):
            if _adds_to_the_suite(cfg, tally, value):
                out.append(f"-p {value}")  # a plugin a run of the suite does not load
        elif flag == "--log-disable" and not _in_addopts(suite.values, (flag, value)):
            out.append(f"{flag}={value}")  # the logger's records: caplog sees none
        elif flag == "--import-mode" and not _in_addopts(suite.values, (flag, value)):
            if value != _default_import_mode(suite.values):
                out.append(f"--import-mode={value}")
        elif flag == "-W":
            from genstamp.suite import is_error, warning_category

            if not is_error(value) and (
                loosened
                if loosened is not None
                else any(_overlap(warning_category(value), e) for e in errors)
            ):
                out.append(f"-W {value}")
    # a plugin's environment variable for its setting (pytest-timeout's PYTEST_TIMEOUT, which
    # it reads before the setting; pytest-django's DJANGO_SETTINGS_MODULE)
    for variable, key in _setting_variables(cfg).items():
        held = os.environ.get(variable)
        if held is None or key == "addopts":
            continue
        configured = _runs_with(cfg, suite.values, set_by_suite, key)
        if configured is not None and not _same_or_stricter(key, held, configured):
            out.append(f"{variable}={held}")
    out += _unread_settings(cfg, suite.values, words)
    out += _autoload_unloaded(cfg, tally, suite.values, words)
    run_flags = _spelled(words, "--assert")
    suite_flags = _spelled(_addopts(suite.values), "--assert")
    for flag in ("--runxfail", "--doctest-ignore-import-errors", "--assert=plain"):
        if flag in run_flags and flag not in suite_flags:
            out.append(flag)  # (plain asserts: a failing assert's message is another)
    suite_opts = _addopts(suite.values)
    out += _retries_added(words, suite_opts, suite.values)
    for flag in SKIPPING:
        if flag in words and flag not in suite_opts:
            out.append(flag)  # a skip counts as run: the tests it skipped would not
    out += [flag for flag in WEAKENING if _given(words, flag) and not _given(suite_opts, flag)]
    for flag in PROFILES:
        chosen = _last_value([*suite_opts, *words], flag)
        if chosen is not None and chosen != _last_value(suite_opts, flag):
            # the profile a run of the suite takes (its conftest may load one) as this run had it
            # before hypothesis loaded the one chosen: a profile at least as strict is no laxer
            if not _as_strict(chosen, tally.hypothesis_settings):
                out.append(f"{flag}={chosen}")
    sources = getattr(cfg.option, "cov_source", None)  # pytest-cov's, as the run took them
    invoked = cfg.invocation_params.dir
    out += _coverage_lowered(words, suite_opts, cfg.rootpath, coverage_left, sources, invoked)
    if sys.flags.optimize:  # the asserts of the code under test are gone
        out.append("python -" + "O" * sys.flags.optimize)
    if not any(flag == "-c" for flag, _ in pairs):
        ran = _configuration_file(cfg, tally)
        # the suite's configuration file, and that of each declared suite whose files the run
        # collected (a suite with no configuration file of its own takes the one its tests keep)
        collected = {tally.suite_root(f) for f in tally.all_files()} if tally.suites else set()
        sources = {suite.source, *(tally.config_at(r).source for r in collected)}
        for source in sorted(s for s in sources if s):
            if ran is not None and ran != source:
                out.append(f"the configuration {ran or '(none)'}, not {source}")
        if ran and not any(sources):
            # a subproject's own file, where the suite has none (pytest's defaults at the top
            # of a monorepo that declares no suites): its settings are no run of the suite
            out.append(f"the configuration {ran}, not pytest's defaults (the suite's)")
    out += [f"{c} not loaded" for c in tally.unloaded_conftests(conftest_paths(cfg))]
    return tuple(out)


def _coverage_lowered(
    words: list[str],
    suite_opts: list[str],
    folder: Path,
    coverage_left: bool = True,
    sources: list[str | bool] | None = None,
    cwd: Path | None = None,
) -> list[str]:
    """The run's own pytest-cov options (``words``) that turn off or lower the coverage
    threshold a run of the suite fails under: its addopts' ``--cov-fail-under``, or, where
    they measure coverage (``--cov``), coverage's ``fail_under`` in the configuration file it
    reads in ``folder`` (the addopts' ``--cov-config``, else ``COVERAGE_RCFILE``, else the first
    of coverage's own files that has its settings). A session that fails under it is a
    failure (pytest exits 1); so is one whose threshold the run's ``--cov-fail-under``,
    ``--cov-config`` or ``COVERAGE_RCFILE`` set lower, that measured nothing (``--no-cov``,
    ``--cov-reset``), or that counts what an earlier run covered (``--cov-append``: the
    coverage data an earlier run left, of tests a clean clone may no longer hold, where
    ``coverage_left`` says some was there as the run began); and one whose total is taken over
    other code than the suite's: another configuration file that measures otherwise (its
    ``omit``, ``source``, ``exclude_lines``...), or more of the code (``--cov=tests`` beside the
    suite's ``--cov=src``: ``sources``, the ``--cov`` values the run took), its branches too
    (``--cov-branch``, where the suite measures statements alone), or rounded to fewer digits
    before it is compared (a lower ``--cov-precision`` than the suite's)."""
    options: tuple[str, ...] = ("--no-cov", "--cov-reset", "--cov-append", "--cov-fail-under")
    options += ("--cov-config", "--cov-branch", "--cov-precision")
    if not os.environ.get("COVERAGE_RCFILE") and not any(
        w.partition("=")[0] in (*options, "--cov") for w in words
    ):
        return []  # (the usual run: no file of coverage's is read for it)
    measured = any(w == "--cov" or w.startswith("--cov=") for w in suite_opts)
    suite_rc = _rcfile(_last_value(suite_opts, "--cov-config"))
    limit = _number(_last_value(suite_opts, "--cov-fail-under"))
    if limit is None and measured:
        limit = _configured_fail_under(folder, suite_rc)  # (COVERAGE_RCFILE is the run's)
    if not limit or limit <= 0:
        return []
    lowering = (UNCOVERED, "--cov-reset", *(["--cov-append"] if coverage_left else []))
    out = [flag for flag in lowering if flag in words and flag not in suite_opts]
    given = _last_value(words, "--cov-fail-under")
    if given is not None and (_number(given) or 0.0) < limit:
        out.append(f"--cov-fail-under={given}")
    rc = _rcfile(_last_value(words, "--cov-config"))
    via = f"--cov-config={rc}" if rc is not None else ""
    if rc is None and suite_rc is None and os.environ.get("COVERAGE_RCFILE"):
        rc = os.environ["COVERAGE_RCFILE"]
        via = f"COVERAGE_RCFILE={rc}"
    if rc is not None and rc != suite_rc:
        # the threshold is the configuration file's: another file read instead sets its own;
        # and whichever file's it is, another that measures otherwise takes another total
        own = given is None and _last_value(suite_opts, "--cov-fail-under") is None
        lower = own and (_configured_fail_under(folder, rc) or 0.0) < limit
        if lower or _measures_otherwise(folder, rc, suite_rc):
            out.append(via)
    added = _sources_added(suite_opts, sources, cwd or folder)
    out += [f"--cov={s}" if s else "--cov" for s in added]
    if "--cov-branch" in words and "--cov-branch" not in suite_opts:
        # the total of statements and branches, where the suite's is of statements alone
        branch = _coverage_setting(folder, suite_rc, "run", "branch") or ""
        if branch.strip().lower() not in ("1", "yes", "true", "on"):
            out.append("--cov-branch")
    precision = _last_value(words, "--cov-precision")
    if precision is not None:
        # the total is rounded to it before it is compared: fewer digits round 89.6 up to 90
        suite_precision = _last_value(suite_opts, "--cov-precision")
        if suite_precision is None:
            suite_precision = _coverage_setting(folder, suite_rc, "report", "precision")
        # (coverage 7.7 on rounds to at least the digits the threshold has: 89.55 to two)
        digits = _decimals(limit) if _rounds_to_the_threshold() else 0
        rounded = max(_number(precision) or 0.0, digits)
        if rounded < max(_number(suite_precision) or 0.0, digits):
            out.append(f"--cov-precision={precision}")
    return out


def _rounds_to_the_threshold() -> bool:
    """Whether the coverage this run has keeps the threshold's own digits as it rounds the
    total (``coverage.results._fail_under_precision``); False where it cannot tell."""
    try:
        import coverage.results
    except Exception:  # no coverage here: the older rounding, the stricter reading
        return False
    return hasattr(coverage.results, "_fail_under_precision")


def _decimals(number: float) -> int:
    """The digits after the point that ``number`` needs (``89.55``: 2; ``90``: 0)."""
    text = repr(number)
    return 0 if number == int(number) or "e" in text else len(text.partition(".")[2])


def _rcfile(given: str | None) -> str | None:
    """The configuration file a ``--cov-config`` value makes coverage read: None for its own
    search (``.coveragerc``, pytest-cov's default, is taken as none given: then
    ``COVERAGE_RCFILE`` is read first)."""
    return None if given in (None, ".coveragerc") else given


# coverage's settings that decide what its total is taken over, and how
_MEASURED = (
    *(("run", k) for k in ("source", "source_pkgs", "source_dirs", "omit", "include", "branch")),
    *(("run", k) for k in ("plugins", "cover_pylib")),
    *(("report", k) for k in ("omit", "include", "precision", "exclude_lines", "exclude_also")),
    *(("report", k) for k in ("partial_branches", "partial_also")),
)


def _measures_otherwise(folder: Path, rcfile: str, suite_rc: str | None) -> bool:
    """Whether coverage reading ``rcfile`` (in ``folder``) measures otherwise than reading
    the suite's file: a setting of ``_MEASURED`` differs."""
    return any(
        _coverage_setting(folder, rcfile, section, key)
        != _coverage_setting(folder, suite_rc, section, key)
        for section, key in _MEASURED
    )


def _sources_added(suite_opts: list[str], sources: list[str | bool] | None, cwd: Path) -> list[str]:
    """The code the run's ``--cov`` measures (``sources``, as pytest-cov took them: the
    addopts' values first) that the suite's addopts do not (a bare ``--cov`` measures all).
    A value naming a folder (from ``cwd``, where coverage takes it from) is that folder,
    however spelled (``src``, ``./src/``, ``$PWD/src``); another is a package's name."""

    def source(value: str) -> str:
        path = os.path.join(cwd, value)
        return os.path.realpath(path) if os.path.isdir(path) else value

    suite: set[str | bool] = set()
    for n, word in enumerate(suite_opts):
        if word == "--cov-reset":
            suite.clear()
        elif word.startswith("--cov="):
            suite.add(source(word[len("--cov=") :]))
        elif word == "--cov":  # argparse takes the next word as its value, unless an option
            after = suite_opts[n + 1] if n + 1 < len(suite_opts) else "-"
            suite.add(True if after.startswith("-") else source(after))
    if True in suite or not sources:
        return []
    added = [s for s in sources if (s is True or source(str(s)) not in suite) and s not in suite]
    return sorted(dict.fromkeys("" if s is True else str(s) for s in added))


def _retries_added(words: list[str], suite_opts: list[str], values: Mapping[str, str]) -> list[str]:
    """The run's own options (``words``) that run a failing test again more often than a run of
    the suite does (its ``addopts``, ``suite_opts``, and settings, ``values``): a pass its
    configuration does not give it. Each option is read as argparse reads it (the last one
    given; the suite's addopts come first), pytest-rerunfailures' ``--reruns`` over its
    ``reruns`` setting (the run's ``-o`` over the configuration's)."""
    out = []
    ordered = [*suite_opts, *words]

    def setting(opts: list[str]) -> str:  # its `reruns`, as the last -o of ``opts`` sets it
        set_ = [v.partition("=") for f, v in valued(opts) if f == "-o"]
        return ([values.get("reruns", "")] + [v for k, _, v in set_ if k.strip() == "reruns"])[-1]

    suite_reruns = _last_value(suite_opts, RERUNS)
    run_reruns = _last_value(ordered, RERUNS)
    suite_n = _number(suite_reruns if suite_reruns is not None else setting(suite_opts)) or 0.0
    given = run_reruns if run_reruns is not None else setting(ordered)
    if (_number(given) or 0.0) > suite_n:
        out.append(f"{RERUNS} {given}" if run_reruns is not None else f"-o reruns={given}")
    flags = [FORCED_RERUNS] + ([MAX_RUNS] if FORCE_FLAKY in suite_opts else [])
    for flag in flags:
        value = _last_value(ordered, flag)
        if (_number(value) or 0.0) > (_number(_last_value(suite_opts, flag)) or 0.0):
            out.append(f"{flag} {value}")
    if FORCE_FLAKY in words and FORCE_FLAKY not in suite_opts:
        out.append(FORCE_FLAKY)
    # pytest-rerunfailures' --reruns-mode=append adds the configured reruns to a test's own
    # `flaky(reruns=N)`, where the default (strict) takes the marker's alone
    mode = _last_value(ordered, "--reruns-mode")
    if mode == "append" and _last_value(suite_opts, "--reruns-mode") != "append":
        out.append("--reruns-mode=append")
    # its --only-rerun and --rerun-except replace the configuration's lists of the same names
    # (where given at all): a failure the suite never reruns may be rerun then
    for flag, key in (("--only-rerun", "only_rerun"), ("--rerun-except", "rerun_except")):
        run = _all_values(ordered, flag)
        listed = {line.strip() for line in values.get(key, "").splitlines()} - {""}  # linelist
        configured = set(_all_values(suite_opts, flag)) or listed
        # fewer to rerun (a part of only_rerun's, more of rerun_except's) is stricter
        held = set(run) <= configured if key == "only_rerun" else set(run) >= configured
        if run and configured and not held:
            out.append(f"{flag} {' '.join(run)}")
    return out


def _given(words: list[str], flag: str) -> bool:
    """Whether ``flag`` is among ``words``, alone or with a value (``flag=VALUE``)."""
    return any(w == flag or w.startswith(flag + "=") for w in words)


def _as_strict(profile: str, suite: Any) -> bool:
    """Whether hypothesis' settings profile ``profile`` (as the run's conftests registered it)
    checks at least as much as ``suite``, the settings a run of the suite takes (None when they
    are not known): as many examples and stateful steps or more, every phase, a deadline no
    longer, no more health checks suppressed, no randomness taken away, the same backend."""
    hypothesis = sys.modules.get("hypothesis")
    if suite is None or hypothesis is None:
        return False
    try:
        run = hypothesis.settings.get_profile(profile)
        deadline, theirs = run.deadline, suite.deadline
        return bool(
            run.max_examples >= suite.max_examples
            and run.stateful_step_count >= suite.stateful_step_count
            and set(run.phases) >= set(suite.phases)
            and set(run.suppress_health_check) <= set(suite.suppress_health_check)
            and (theirs is None or (deadline is not None and deadline <= theirs))
            and (suite.derandomize or not run.derandomize)
            and getattr(run, "backend", None) == getattr(suite, "backend", None)
        )
    except Exception:  # a profile not registered, another hypothesis: not known
        return False


def _all_values(words: list[str], flag: str) -> list[str]:
    """The values of every ``flag VALUE`` or ``flag=VALUE`` of ``words`` (an option argparse
    appends to a list)."""
    out = []
    for n, word in enumerate(words):
        if word == flag and n + 1 < len(words):
            out.append(words[n + 1])
        elif word.startswith(flag + "="):
            out.append(word[len(flag) + 1 :])
    return out


def _last_value(words: list[str], flag: str) -> str | None:
    """The value of the last ``flag VALUE`` or ``flag=VALUE`` of ``words``; None without."""
    found = None
    for n, word in enumerate(words):
        if word == flag and n + 1 < len(words):
            found = words[n + 1]
        elif word.startswith(flag + "="):
            found = word[len(flag) + 1 :]
    return found


def _number(text: str | None) -> float | None:
    try:
        return float(text) if text is not None else None
    except ValueError:
        return None


def _configured_fail_under(folder: Path, rcfile: str | None = None) -> float | None:
    """coverage's ``fail_under`` as the configuration file it reads sets it."""
    return _number(_coverage_setting(folder, rcfile, "report", "fail_under"))


def _coverage_setting(folder: Path, rcfile: str | None, section: str, key: str) -> str | None:
    """A setting of coverage's (``[section] key``) as the configuration file it reads sets it:
    ``rcfile`` (its ``--cov-config``), else the first of ``.coveragerc`` (read whatever it
    holds), ``.coveragerc.toml``, ``setup.cfg``, ``tox.ini`` (their ``[coverage:…]``
    sections) and ``pyproject.toml`` (``[tool.coverage]``) that holds coverage's settings, as
    coverage reads them; its ``$VAR`` and ``${VAR}`` taken from the environment."""
    import configparser

    names = [rcfile] if rcfile else [".coveragerc"]
    names += [".coveragerc.toml", "setup.cfg", "tox.ini", "pyproject.toml"]
    for name in names:
        path = folder / name
        ours = name in (rcfile, ".coveragerc", ".coveragerc.toml")
        try:
            data = path.read_bytes()
        except OSError:
            if name == rcfile:
                return None  # (coverage stops at a file it was given and cannot read)
            continue
        try:
            if name.endswith(".toml"):
                from genstamp.roots import _toml

                whole = _toml(data)
                table = whole.get("tool", {}).get("coverage")
                if not isinstance(table, dict):
                    table = whole if ours else None  # (its own file: [run] at the top too)
                if not isinstance(table, dict) or not table:
                    if ours and name != ".coveragerc.toml":
                        return None
                    continue
                part = table.get(section)
                value = part.get(key) if isinstance(part, dict) else None
                return _expanded(str(value)) if value is not None else None
            parser = configparser.RawConfigParser()
            parser.read_string(data.decode("utf-8", "replace"))
        except (ValueError, configparser.Error):
            return None
        plain = ours and os.path.basename(name) not in ("setup.cfg", "tox.ini")
        sections = [f"coverage:{section}", *([section] if plain else [])]
        if not ours and not any(s.startswith("coverage:") for s in parser.sections()):
            continue  # no settings of coverage's here: the next file
        for header in sections:
            if parser.has_option(header, key):
                return _expanded(parser.get(header, key))
        return None
    return None


def _expanded(text: str) -> str:
    """``text`` with coverage's ``$VAR``, ``${VAR}``, ``${VAR-default}`` and ``$$`` put in."""

    def value(match: re.Match[str]) -> str:
        word = match["dollar"] or match["word1"] or match["word2"]
        if word == "$":
            return "$"
        return os.environ.get(word, match["default"] or "")

    pattern = r"\$(?:(?P<dollar>\$)|(?P<word1>\w+)|\{(?P<word2>\w+)(?:\?|-(?P<default>[^}]*))?\})"
    return re.sub(pattern, value, text)


def earlier_coverage(cfg: pytest.Config) -> bool:
    """Whether coverage data an earlier run left is there, for a run given ``--cov-append`` to
    count with its own: coverage's data file (``COVERAGE_FILE``, else the ``[run] data_file``
    of the configuration file it reads, as coverage itself reads them where it is installed,
    from the folder pytest started in; else ``.coverage``) or a part of one (``.coverage.*``,
    which coverage combines). Asked as the run begins, before it writes its own; True where
    it cannot be told."""
    given = getattr(cfg.option, "cov_config", None)
    rc = None if given in (None, ".coveragerc") else str(given)
    here = cfg.invocation_params.dir
    try:
        name = _data_file(here, rc)
        path = Path(here, os.path.expanduser(name))
        return path.exists() or any(
            p.name.startswith(path.name + ".") for p in path.parent.iterdir()
        )
    except FileNotFoundError:  # (no folder for it: no data either)
        return False
    except Exception:  # (a configuration coverage refuses: the run fails on it anyway)
        return True


def _data_file(here: Path, rc: str | None) -> str:
    """coverage's data file for a run started in ``here`` with ``--cov-config`` ``rc``."""
    if os.path.realpath(os.getcwd()) == os.path.realpath(here):
        try:
            import coverage
        except ImportError:
            pass
        else:  # its own reading: the files it tries, its variables, COVERAGE_FILE
            found = coverage.Coverage(config_file=rc or True).get_option("run:data_file")
            return str(found or ".coverage")
    rc = rc or os.environ.get("COVERAGE_RCFILE") or None
    return (
        os.environ.get("COVERAGE_FILE")
        or _coverage_setting(here, rc, "run", "data_file")
        or ".coverage"
    )


def _lenient_warnings(
    cfg: pytest.Config, configured: Mapping[str, str], words: list[str]
) -> bool | None:
    """Whether the run's warnings filters (its ``filterwarnings``, which ``-o`` may replace,
    and every ``-W``) leave no error some warning the suite's make one (the configuration's
    ``filterwarnings`` and the ``-W`` of its ``addopts``; both with the lines conftests add),
    as pytest applies them: ``-W`` after the configuration's, each later one first. None when
    pytest cannot read a filter here."""
    from _pytest.config import parse_warning_filter

    from genstamp import warnfilters

    def lines(text: str) -> list[str]:  # an ini "linelist"
        return [t.strip() for t in text.split("\n") if t.strip()]

    try:
        applied = [str(f) for f in cfg.getini("filterwarnings")]
        run_cmdline = [str(w) for w in (cfg.option.pythonwarnings or [])]
    except (ValueError, TypeError, AttributeError):
        return None
    given = [
        v.partition("=")[2]
        for f, v in valued(words)
        if f == "-o" and _canonical(cfg, v.partition("=")[0].strip()) == "filterwarnings"
    ]
    suite_ini = lines(configured.get("filterwarnings", ""))
    run_ini = lines(given[-1]) if given else suite_ini
    added = applied[len(run_ini) :] if applied[: len(run_ini)] == run_ini else []
    suite_cmdline = [v for f, v in valued(_addopts(configured)) if f == "-W"]

    def parsed(config: list[str], cmdline: list[str]) -> list[warnfilters.Filter]:
        out = []
        for line, escape in [*((c, False) for c in config), *((c, True) for c in cmdline)]:
            try:
                out.append(warnfilters.Filter(*parse_warning_filter(line, escape=escape)))
            except ImportError:
                continue  # pytest applies no filter of a category it cannot import
        return out[::-1]  # the last applied comes first

    try:
        suite_filters = parsed([*suite_ini, *added], suite_cmdline)
        run_filters = parsed(applied, run_cmdline)
    except Exception:  # pytest's UsageError: a filter it refuses (the run said so)
        return None
    return bool(warnfilters.lenient(suite_filters, run_filters))


def _lenient(filters: str, errors: Sequence[str]) -> bool:
    """Whether the ``filterwarnings`` lines ``filters``, put in place of the configuration's,
    leave one of the categories ``errors`` no error (``Warning``: every category)."""
    from genstamp.suite import is_error, warning_category

    kept = {warning_category(f) for f in filters.splitlines() if is_error(f)}
    return any(e not in kept and "Warning" not in kept for e in errors)


# -o values that only make the run stricter than any configuration
STRICTER = {
    "strict_xfail": "true",
    "xfail_strict": "true",
    "strict": "true",
    "strict_markers": "true",
    "strict_config": "true",
    "strict_parametrization_ids": "true",
}


def _canonical(cfg: pytest.Config, key: str) -> str:
    """The setting ``key`` names (pytest 9 takes ``xfail_strict`` for ``strict_xfail``)."""
    aliases = getattr(getattr(cfg, "_parser", None), "_ini_aliases", None)
    found = aliases.get(key, key) if isinstance(aliases, dict) else key
    return str(found)


def _configured(cfg: pytest.Config, values: Mapping[str, str], key: str) -> str | None:
    """What the suite's configuration file sets ``key`` to, under any of its names."""
    for name, value in values.items():
        if _canonical(cfg, name) == key:
            return value
    return None


def _spelled(words: list[str], valued: str) -> list[str]:
    """``words`` with the option ``valued`` and its value as one word (``--assert plain`` as
    ``--assert=plain``)."""
    out = list(words)
    for n, word in enumerate(words[:-1]):
        if word == valued:
            out[n] = f"{word}={words[n + 1]}"
    return out


def _ini_args(value: str) -> list[str]:
    """A setting of pytest's ``args`` kind, split as pytest splits it (shell words)."""
    from genstamp import stdlib

    shlex = stdlib.module("shlex")  # not a checkout's shlex.py (pytest imports that one)
    try:
        return list(shlex.split(value))
    except ValueError:  # an unclosed quote: pytest itself stops on it
        return value.split()


def _files_shaped_otherwise(tally: Tally, given: str, configured: str) -> bool:
    """Whether ``python_files`` patterns ``given`` for the run take another of the files it
    collected for a test module than the suite's ``configured`` ones: one it collected for its
    doctests alone (``--doctest-modules``), or a module that is none of the suite's test files
    (a file neither collects is the suite's, not collected)."""
    from _pytest.pathlib import fnmatch_ex

    run_patterns, suite_patterns = _ini_args(given), _ini_args(configured)
    if tally.workdir is None or set(run_patterns) == set(suite_patterns):
        return False
    for rel in tally.all_files():
        if rel.endswith(".py"):
            path = tally.workdir / rel
            run = any(fnmatch_ex(p, path) for p in run_patterns)
            if run != any(fnmatch_ex(p, path) for p in suite_patterns):
                return True
    return False


def _runs_with(
    cfg: pytest.Config, values: Mapping[str, str], set_by_suite: Mapping[str, str], key: str
) -> str | None:
    """What a run of the suite takes the setting ``key`` to be, as text: what its ``addopts``
    give the setting's option, else its configuration file, else the default (None: unknown)."""
    configured = set_by_suite.get(key) or _configured(cfg, values, key)
    if configured is None and key.isupper():  # an environment variable pytest-env's `env` sets
        configured = _env_setting(values, key) or _env_table(cfg.rootpath, key)
    if configured is None and key in STRICTER and key != "strict":
        configured = _configured(cfg, values, "strict")  # pytest 9: unset, they follow `strict`
    return configured if configured is not None else _default(cfg, key)


def _env_setting(values: Mapping[str, str], key: str) -> str | None:
    """The value pytest-env's ``env`` setting gives the variable ``key`` (its lines
    ``KEY=VALUE``, flagged ``D:`` or ``R:``), None where it gives none."""
    for line in values.get("env", "").splitlines():
        line = line.strip()
        while line[:2] in ("D:", "R:"):
            line = line[2:]
        name, sep, value = line.partition("=")
        if sep and name.strip() == key:
            return value.strip()
    return None


def _env_table(folder: Path, key: str) -> str | None:
    """The value pytest-env's ``[tool.pytest_env]`` table of ``folder``'s ``pyproject.toml``
    gives the variable ``key`` (``KEY = "v"``, or ``KEY = {value = "v", ...}``)."""
    from genstamp.roots import _toml

    try:
        table = _toml((folder / "pyproject.toml").read_bytes()).get("tool", {}).get("pytest_env")
    except (OSError, ValueError, AttributeError):
        return None
    value = table.get(key) if isinstance(table, dict) else None
    if isinstance(value, dict):
        value = value.get("value")
    return str(value) if isinstance(value, (str, int, float)) else None


def _default(cfg: pytest.Config, key: str) -> str | None:
    """pytest's (or a plugin's) default for the setting ``key`` as text, None when unknown."""
    known = getattr(getattr(cfg, "_parser", None), "_inidict", None)
    entry = known.get(key) if isinstance(known, dict) else None
    if not isinstance(entry, tuple) or len(entry) < 3:
        return None
    default = entry[2]
    if default is None and key in STRICTER:
        default = False  # pytest 9's strict_* settings: unset, `strict`'s default
    if key in SETTING_FLAGS.values():
        return "" if default in (None, "") else _as_text(default)  # unset: the root logger's
    if default == "" and entry[1] in (None, "string"):
        return None  # a text setting registered with no default (pytest 9 gives it "")
    return _as_text(default)


def _same_or_stricter(key: str, given: str, configured: str) -> bool:
    """Whether ``-o key=given`` keeps what the configuration sets, or only makes it stricter."""
    norm = " ".join(given.split()).lower()
    with contextlib.suppress(ValueError):  # a number, however written: 1 and 1.0
        if float(given) == float(configured):
            return True
    return norm == " ".join(configured.split()).lower() or STRICTER.get(key) == norm


def run_words(cfg: pytest.Config) -> list[str]:
    """The run's own options: its command line and ``PYTEST_ADDOPTS`` (the configuration's
    ``addopts`` are the suite's)."""
    from genstamp import stdlib

    shlex = stdlib.module("shlex")  # not a checkout's shlex.py (pytest imports that one)

    words = []
    with contextlib.suppress(ValueError):  # pytest has refused it already
        # before the command line, as pytest reads them (the last of an option given twice wins)
        words += shlex.split(os.environ.get("PYTEST_ADDOPTS", ""))
    args_files = _reads_args_files()
    for arg in (str(a) for a in cfg.invocation_params.args):
        if arg.startswith("@") and len(arg) > 1 and args_files:  # pytest reads @FILE
            path = cfg.invocation_params.dir / arg[1:]
            with contextlib.suppress(OSError, UnicodeDecodeError):
                words += path.read_text(encoding="utf-8").splitlines()
                continue
        words.append(arg)
    return words


def _command_line_plugins(cfg: pytest.Config) -> set[str]:
    """The values of the ``-p`` options of the run's command line alone."""
    return {v for f, v in valued([str(a) for a in cfg.invocation_params.args]) if f == "-p"}


def warnings_off(cfg: pytest.Config) -> bool:
    """Whether the run turns pytest's warnings plugin off (``-p no:warnings``)."""
    return any(f == "-p" and v == "no:warnings" for f, v in valued(run_words(cfg)))


def _warning_errors(cfg: pytest.Config, configured: Sequence[str]) -> list[str]:
    """The warning categories the suite's filters make errors: its configuration's
    ``filterwarnings``, and the lines a conftest adds to them (``config.addinivalue_line``)."""
    from genstamp.suite import is_error, warning_category

    found = dict.fromkeys(configured)
    with contextlib.suppress(ValueError, TypeError):
        found.update(
            (warning_category(s), None) for s in cfg.getini("filterwarnings") if is_error(s)
        )
    return list(found)


def _configuration_file(cfg: pytest.Config, tally: Tally) -> str | None:
    """The configuration file the run took its settings from, as a tree path ("" when pytest
    found none: a ``pyproject.toml`` without pytest's table is only where it put its
    rootdir); None when it lies outside the work tree (the audit names that)."""
    inipath = getattr(cfg, "inipath", None)
    if not inipath:
        return ""
    ran = tally.tree_path(Path(inipath))
    if ran is None:
        return None
    folder = posixpath.dirname(ran)
    return ran if tally.config_at(folder).source == ran else ""


def conftest_paths(cfg: pytest.Config) -> list[str]:
    return configuration(cfg)[1]


def _in_addopts(values: Mapping[str, str], option: tuple[str, str]) -> bool:
    """Whether the suite's configuration gives ``option`` (a flag and its value) itself."""
    return option in valued(_addopts(values))


def _addopts(values: Mapping[str, str]) -> list[str]:
    from genstamp import stdlib

    shlex = stdlib.module("shlex")  # not a checkout's shlex.py (pytest imports that one)

    try:
        words: list[str] = shlex.split(values.get("addopts", ""))
    except ValueError:  # the suite names that problem
        return []
    return words


def _default_import_mode(values: Mapping[str, str]) -> str:
    """The import mode a run of the suite's configuration takes (pytest's default: prepend)."""
    modes = [v for f, v in valued(_addopts(values)) if f == "--import-mode"]
    return modes[-1] if modes else "prepend"


def _adds_to_the_suite(cfg: pytest.Config, tally: Tally, name: str) -> bool:
    """Whether ``-p name`` loads a plugin a run of the suite does not, one that can change
    its outcomes: a module of the checkout that no loaded ``conftest.py`` names, or one of
    pytest's own that it does not load by default (``pytester``). An installed plugin (an
    entry point, loaded with autoload off too; a runner's reporter such as an IDE's) is the
    environment's, not the checkout's."""
    from _pytest.config import builtin_plugins, default_plugins

    if name in ("genstamp", __name__):
        return False  # this plugin, loaded by name (with autoload off)
    if name in builtin_plugins:
        return name not in default_plugins
    return _checkout_module(tally, name) and not _named_by_conftest(cfg, name)


def _checkout_plugin(cfg: pytest.Config, tally: Tally, name: str, loaded: bool = False) -> bool:
    """Whether the plugin ``name`` (that ``-p no:NAME`` blocks) is the checkout's: a module of
    the work tree, one a loaded ``conftest.py`` names in its ``pytest_plugins``, or the
    project's own entry point. One the run's import path finds elsewhere in the work tree
    counts where a run of the suite loads it (``loaded``: its addopts' ``-p NAME``): blocking
    what nothing loads changes nothing."""
    return (
        _named_by_conftest(cfg, name)
        or _checkout_module(tally, name, on_path=loaded)
        or _checkout_entry_point(tally, name)
    )


def _checkout_entry_point(tally: Tally, name: str) -> bool:
    """Whether a ``pytest11`` entry point that ``-p no:NAME`` blocks (pytest blocks
    ``pytest_NAME`` too) is the checkout's: one of this project's distribution (by its name,
    installed from here or not), or whose module is a file of the work tree (an editable
    install of it); found without importing the module or its package."""
    if tally.workdir is None:
        return False
    from importlib.metadata import entry_points

    from genstamp.roots import normalised, project_name

    names = {name, f"pytest_{name}"}
    found = [ep for ep in entry_points(group="pytest11") if ep.name in names]
    if not found:
        return False
    own = project_name(tally.workdir)
    root = os.path.realpath(tally.workdir)
    for ep in found:
        dist = getattr(ep, "dist", None)
        if own is not None and dist is not None and normalised(dist.name or "") == own:
            return True
        # the module part of its value (`pkg.mod:attr`), read as pytest's loader would; one
        # that is no module name (`name = broken-value`) loads nothing of the tree
        module = str(ep.value).partition(":")[0].strip()
        where = _module_file(module) if module else ""
        if where and inside(where, root) and not installed(where):
            return True
    return False


def _used_markers(
    cfg: pytest.Config, tally: Tally, name: str, values: Mapping[str, str]
) -> list[str]:
    """The markers the collected tests carry that the installed plugin ``-p no:NAME`` blocks
    registers, and the suite's configuration does not register itself."""
    marks = tally.all_marks()
    if not marks:
        return []
    own = {line.strip().partition(":")[0].partition("(")[0] for line in _ini_lines(values)}
    return sorted((_plugin_markers(name) & marks) - own)


def _ini_lines(values: Mapping[str, str]) -> list[str]:
    return [line for line in values.get("markers", "").splitlines() if line.strip()]


def _plugin_markers(name: str) -> set[str]:
    """The markers the installed plugin whose ``pytest11`` entry point ``-p no:NAME`` blocks
    registers (``config.addinivalue_line("markers", "timeout(...)")``), read from the source
    of its module, and of the package's other modules, without running them."""
    from importlib.metadata import entry_points

    names = {name, f"pytest_{name}"}
    out: set[str] = set()
    for ep in entry_points(group="pytest11"):
        if ep.name not in names:
            continue
        where = _module_file(str(ep.value).partition(":")[0].strip())
        if not where:
            continue
        folder = Path(where).parent
        others = sorted(folder.glob("*.py")) if (folder / "__init__.py").is_file() else []
        modules = [Path(where), *(m for m in others if m != Path(where))]
        trees = {}
        for module in modules[:200]:
            with contextlib.suppress(OSError, SyntaxError, ValueError):
                trees[module] = ast.parse(module.read_bytes())
        out.update(_registered_markers(list(trees.values())))
    return out


def _registered_markers(trees: list[ast.Module]) -> set[str]:
    """The marker names the modules ``trees`` (a plugin's package) give
    ``config.addinivalue_line("markers", LINE)``: a string, or a name bound to one (``line =
    "order: …"``), or to a list of them it loops over (``for line in MARKERS``, a list another
    module of the package holds); the name is what the line begins with."""
    strings: dict[str, list[str]] = {}  # a name -> the strings bound to it, in any module
    loops: dict[str, str] = {}  # a loop's name -> the name it loops over
    calls: list[ast.expr] = []
    for tree in trees:
        for node in ast.walk(tree):
            if isinstance(node, ast.Assign | ast.AnnAssign):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                found = [
                    c.value
                    for c in ast.walk(node.value or ast.Constant(None))
                    if isinstance(c, ast.Constant) and isinstance(c.value, str)
                ]
                for target in targets:
                    if isinstance(target, ast.Name):
                        strings.setdefault(target.id, []).extend(found)
            elif isinstance(node, ast.For) and isinstance(node.target, ast.Name):
                if isinstance(node.iter, ast.Name):
                    loops[node.target.id] = node.iter.id
            elif (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr == "addinivalue_line"
                and len(node.args) == 2
                and isinstance(node.args[0], ast.Constant)
                and node.args[0].value == "markers"
            ):
                calls.append(node.args[1])
    lines: list[str] = []
    for arg in calls:
        if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
            lines.append(arg.value)
        elif isinstance(arg, ast.Name) and arg.id in loops:
            lines += strings.get(loops[arg.id], [])  # each line of the list it loops over
        elif isinstance(arg, ast.Name):
            lines += strings.get(arg.id, [])[:1]  # (the text begins with its first string)
        elif isinstance(arg, ast.BinOp | ast.JoinedStr):
            first = next((c for c in ast.walk(arg) if isinstance(c, ast.Constant)), None)
            lines += [first.value] if first is not None and isinstance(first.value, str) else []
    return {m.group(1) for line in lines if (m := _MARKER_NAME.match(line))}


_MARKER_NAME = re.compile(r"\s*([A-Za-z_]\w*)\s*[(:]")


def _defined_in(plugin: object) -> str:
    """The real path of the file that defines ``plugin`` (a module, a class or an instance
    given to ``pytest.main``), "" when none."""
    module = plugin if isinstance(plugin, ModuleType) else None
    if module is None:
        owner = plugin if isinstance(plugin, type) else type(plugin)
        module = sys.modules.get(owner.__module__)
    where = getattr(module, "__file__", None)
    return os.path.realpath(where) if isinstance(where, str) else ""


def _module_file(name: str) -> str:
    """The real path of the file module ``name`` loads from, as the import system finds it
    now, without running it or its packages ("" when none is found)."""
    import importlib.util

    parts = name.split(".")
    if not all(p.isidentifier() for p in parts):
        return ""
    try:
        spec = importlib.util.find_spec(parts[0])
        for i in range(1, len(parts)):
            where = spec.submodule_search_locations if spec is not None else None
            if where is None:
                return ""
            spec = importlib.machinery.PathFinder.find_spec(".".join(parts[: i + 1]), where)
    except (ImportError, ValueError):
        return ""
    if spec is None or not spec.has_location or not isinstance(spec.origin, str):
        return ""
    return os.path.realpath(spec.origin)


def _checkout_module(tally: Tally, name: str, *, on_path: bool = True) -> bool:
    """Whether the module ``name`` is a file of the work tree: at its top or in ``src/``, or
    (``on_path``) wherever the run's import path finds it (pytest's ``pythonpath =
    ["tests"]``, a ``PYTHONPATH`` naming ``lib/``), unless installed there or the standard
    library's (an environment kept in the work tree holds one)."""
    if tally.workdir is None:
        return False
    below = name.replace(".", "/")
    if any(
        (tally.workdir / base / f"{below}{end}").is_file()
        for base in ("", "src")
        for end in (".py", "/__init__.py")
    ):
        return True
    if not on_path or name.partition(".")[0] in sys.stdlib_module_names:
        return False
    found = _module_file(name)
    return bool(found) and _of_the_checkout(tally, found)


def _of_the_checkout(tally: Tally, path: str) -> bool:
    """Whether the file at ``path`` is the checkout's code: in the work tree, and in no
    environment kept there (a virtual environment's, a conda or pixi prefix's)."""
    from genstamp.audit import in_environment

    workdir = tally.workdir
    if workdir is None or not inside(path, top := os.path.realpath(workdir)) or installed(path):
        return False
    return not in_environment(path, top)


def _named_by_conftest(cfg: pytest.Config, name: str) -> bool:
    for plugin in cfg.pluginmanager.get_plugins():
        conftest = isinstance(plugin, ModuleType) and origin(plugin).endswith("conftest.py")
        listed = getattr(plugin, "pytest_plugins", None) if conftest else None
        if listed is not None and name in ([listed] if isinstance(listed, str) else listed):
            return True
    return False


def _overlap(one: str, other: str) -> bool:
    """Whether two warning categories (dotted names) can name the same warning: one is the
    other or a subclass of it, as far as they can be told without importing a module."""
    if "Warning" in (one, other) or one == other:
        return True
    first, second = _warning_class(one), _warning_class(other)
    if first is not None and second is not None:
        return issubclass(first, second) or issubclass(second, first)
    return one.rpartition(".")[2] == other.rpartition(".")[2]


def _warning_class(name: str) -> type | None:
    """The class a filter's category names: a builtin, or one of a module already imported
    (pytest imported it to apply the filter); None where it cannot be told without an import."""
    import builtins

    module, _, attr = name.rpartition(".")
    found = getattr(sys.modules.get(module) if module else builtins, attr, None)
    return found if isinstance(found, type) and issubclass(found, Warning) else None


_BARE_SHORT = frozenset("qvsxlhV")  # pytest's short flags that take no value: -q, -v, -s, -x, ...


def valued(
    words: list[str], settings: Mapping[str, Setting] = MappingProxyType({})
) -> Iterator[tuple[str, str]]:
    """(flag, value) for each ``-o``, ``-p``, ``-W``, ``-c``, ``--import-mode``, ``--log-disable``
    and option of
    ``settings`` (``_setting_options``) in ``words``, however written: as pytest's argument
    parser (argparse) reads them, and ``-p`` as pytest's plugin manager reads it before any
    parsing (``-p NAME`` or ``-pNAME``, anywhere). A flag that takes no value gives the value
    it stores."""
    names = {"-o": "-o", "--override-ini": "-o", "-p": "-p", "-W": "-W", "--pythonwarnings": "-W"}
    names |= {"-c": "-c", "--config-file": "-c", "--import-mode": "--import-mode"}
    names |= {"--log-disable": "--log-disable"}
    names |= {flag: flag for flag in SETTING_FLAGS}
    names |= {flag: flag for flag, setting in settings.items() if setting.bare is None}
    bare = {flag: setting.bare for flag, setting in settings.items() if setting.bare is not None}
    words = list(words)
    options = True  # argparse takes every word after ``--`` for a file
    bundled = False
    i = 0
    while i < len(words):
        word = words[i]
        if options and len(word) > 2 and word[0] == "-" and word[1] in _BARE_SHORT:
            words[i] = "-" + word[2:]  # short flags bundled, as argparse takes them: -qo K=V
            bundled = True
            if words[i][:2] == "-p":  # no plugin option to the plugin manager (-qp NAME)
                i += 1 if len(words[i]) > 2 else 2
                bundled = False
            continue
        if word == "--":
            options = False
        flag, eq, value = word.partition("=")
        short = word[:2]
        if options and word in bare:
            yield word, bare[word]
        elif word in names and i + 1 < len(words) and (options or word == "-p"):
            yield names[word], words[i + 1]
            i += 1
        elif eq and flag in names and options and flag != "-p" and not bundled:
            yield names[flag], value  # --override-ini=K=V, and -o=K=V (argparse's own split)
        elif short in ("-o", "-p", "-W", "-c") and len(word) > 2 and (options or short == "-p"):
            yield short, word[2:]  # -oK=V; -qo=K=V keeps its "=" (argparse); -p=X is "=X"
        bundled = False
        i += 1


def origin(module: Any) -> str:
    spec = getattr(module, "__spec__", None)
    origin = getattr(spec, "origin", None) or getattr(module, "__file__", None)
    return os.path.realpath(origin) if isinstance(origin, str) else ""
