"""The import guard: the checkout's modules load from their source as it is now.

CPython trusts a ``__pycache__`` pyc whose source kept its mtime and size. While the plugin runs,
the checkout's modules are imported through a loader that reads bytecode only from genstamp's
cache (in the state folder), and only a checked-hash pyc (PEP 552) of the current source; pytest's
assertion-rewritten test modules are cached there too, in a folder named by the source's hash.
Every other module (the standard library, site-packages) keeps its own bytecode.

PYTEST_DONT_REWRITE: a run's child processes import this module at start-up, before pytest
would rewrite it (it asserts nothing)
"""

# Kept light: a child process of a run imports this module at start-up (``loads.start``).
import marshal
import os
import sys

# importlib.machinery's names, from the frozen module every process already holds (importing
# importlib.machinery imports importlib and warnings too)
from _frozen_importlib_external import (
    BYTECODE_SUFFIXES,
    EXTENSION_SUFFIXES,
    SOURCE_SUFFIXES,
    ExtensionFileLoader,
    FileFinder,
    SourceFileLoader,
    SourcelessFileLoader,
)

from genstamp import bytecode, loads
from genstamp.loads import RealPaths, real_path
from genstamp.paths import inside, installed

TYPE_CHECKING = False  # not typing's (see ``loads``)
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Mapping
    from importlib.machinery import ModuleSpec
    from pathlib import Path
    from types import CodeType, ModuleType
    from typing import Any, ClassVar, NamedTuple
else:
    CodeType = type((lambda: 0).__code__)  # types' own definition, without importing types

PYCACHE_ENV = "PYTHONPYCACHEPREFIX"
CACHE = "pycache"  # in the state folder: bytecode of the checkout's modules
# Its folders for genstamp's loader and for pytest's assertion rewriter. Version 2 holds only
# code whose compilation issued no warning (``_warns``); version 1's may hold any, and is never
# read (a genstamp of another version, in pre-commit's environment, may still write it).
COMPILED = "compiled-v2"
REWRITTEN = "rewritten-v2"


if TYPE_CHECKING:

    class Guard(NamedTuple):
        """An installed guard: its cache (the audit trusts bytecode found there) and its undo."""

        cache_dir: str
        undo: Callable[[], None]

else:  # the same record, without importing typing or collections (see ``records``)
    from genstamp.records import record

    Guard = record("Guard", "cache_dir undo", (), __name__)


def guard(workdir: "Path", state: "Path") -> Guard | None:
    """Import the checkout's modules through ``CheckoutLoader`` until ``undo``; None when the
    user chose a pycache prefix (the audit checks what came from it)."""
    if sys.pycache_prefix is not None or os.environ.get(PYCACHE_ENV):
        return None
    cache_dir = str(state / CACHE)
    where = str(workdir)
    hook = install_loader(where, os.path.join(cache_dir, COMPILED))
    unroute = route_rewrite_cache(where, cache_dir)

    def undo() -> None:
        uninstall_loader(hook, where)
        if unroute is not None:
            unroute()

    return Guard(cache_dir, undo)


class CheckoutLoader(SourceFileLoader):
    """Loads a module of the checkout. Bytecode is read only from ``cache_root`` and only when
    it is a checked-hash pyc (PEP 552) of the source as it is now; otherwise the source is
    compiled, and the bytecode kept there for the next run."""

    workdir: "ClassVar[str]" = ""
    cache_root: "ClassVar[str]" = ""

    def create_module(self, spec: "ModuleSpec") -> "ModuleType | None":
        if spec.origin:
            spec.cached = self.cache_path(spec.origin)  # what the audit sees as its bytecode
        return None

    @classmethod
    def cache_path(cls, source: str) -> str | None:
        tag = sys.implementation.cache_tag
        real = real_path(source)
        if tag is None or not inside(real, cls.workdir):
            return None
        folder = os.path.relpath(os.path.dirname(real), cls.workdir)
        opt = f".opt-{sys.flags.optimize}" if sys.flags.optimize else ""
        stem = os.path.splitext(os.path.basename(real))[0]
        return os.path.normpath(os.path.join(cls.cache_root, folder, f"{stem}.{tag}{opt}.pyc"))

    def get_code(self, fullname: str) -> CodeType:
        source_path = self.get_filename(fullname)
        source = self.get_data(source_path)
        cached = self.cache_path(source_path)
        header = bytecode.checked_header(source)
        if cached is not None:
            try:
                with open(cached, "rb") as fh:
                    data = fh.read()
                if data[: bytecode.HEADER_SIZE] == header:
                    code = marshal.loads(data[bytecode.HEADER_SIZE :])
                    if isinstance(code, CodeType) and code.co_filename == source_path:
                        loads.loaded_source(source_path, source, fullname, code=code)
                        return code
            except (OSError, EOFError, ValueError, TypeError):
                pass  # no usable bytecode: compile
        quiet = _quietly(lambda: self.source_to_code(source, source_path), source_path)
        # One that warns is compiled again under the filters in force, which see its warnings
        # as a plain import's (and may make them errors), and never kept: bytecode read from
        # the cache would compile nothing, and a clean clone's run would warn where this did not.
        code = quiet if quiet is not None else self.source_to_code(source, source_path)
        loads.loaded_source(source_path, source, fullname, code=code)
        if cached is not None and quiet is not None and not sys.dont_write_bytecode:
            write_pyc(cached, header + marshal.dumps(code))
        return code


def _quietly(compile_: "Callable[[], CodeType]", path: str) -> "CodeType | None":
    """``compile_()``'s code when compiling ``path`` issues no warning (an invalid escape
    sequence, ``is`` with a literal, an assert that is always true); None when it warns or
    fails. For that one compile, a first filter makes an error of every warning the compiler
    attributes to ``path`` (it names the module by the file's path without ``.py``), and of no
    other: a warning another thread issues meanwhile meets the filters as before. It goes in
    the list the interpreter reads, so a followed child that never imported the warnings
    module does not import it here."""
    import _warnings

    module_name = path[:-3] if path.endswith(".py") else path
    mutated = getattr(_warnings, "_filters_mutated", None)  # 3.10-3.12
    if mutated is None:
        from genstamp.stdlib import module  # the standard library's, whatever sys.path holds

        warnings = module("warnings")
        with warnings.catch_warnings():
            warnings.filterwarnings("error", module=_escaped(module_name) + r"\Z")
            try:
                return compile_()
            except (SyntaxError, ValueError, Warning):
                return None
    warnings_module = sys.modules.get("warnings")
    filters = getattr(warnings_module, "filters", None)  # what the interpreter reads then
    if not isinstance(filters, list):
        filters = _warnings.filters
    entry = ("error", None, Warning, module_name, 0)  # a plain text module: matched exactly
    filters.insert(0, entry)
    mutated()
    try:
        return compile_()
    except (SyntaxError, ValueError, Warning):
        return None
    finally:
        try:  # noqa: SIM105 (contextlib costs a child's start-up)
            filters.remove(entry)
        except ValueError:
            pass
        mutated()


def _escaped(text: str) -> str:
    from genstamp.stdlib import module

    return str(module("re").escape(text))


def _warns(source: bytes, path: str) -> bool:
    """Whether compiling ``source`` issues a warning or fails (``_quietly``): such a module's
    bytecode is never kept, so that each run compiles it and its warnings meet the filters in
    force then."""
    return _quietly(lambda: compile(source, path, "exec", dont_inherit=True), path) is None


def write_pyc(path: str, data: bytes) -> None:
    """Atomically, or not at all (a cache: a failed write costs a compile next time). With
    ``os`` alone: a module imported here, as a followed child compiles the checkout's first
    module, would be looked for on the child's ``sys.path``, whose first folder (its script's)
    may hold a module named like one of the standard library (``operator.py``)."""
    tmp = f"{path}.{os.getpid()}.{os.urandom(4).hex()}.tmp"
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    except OSError:
        return
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.replace(tmp, path)
    except OSError:
        _unlink(tmp)


def _unlink(path: str) -> None:
    try:
        os.unlink(path)
    except OSError:
        return


def install_loader(workdir: str, cache_root: str) -> "Callable[[str], Any]":
    """Put a path hook for folders inside ``workdir`` first, and forget the finders already
    made for them. Returns the hook (to uninstall it)."""
    loader = type(
        "CheckoutLoader", (CheckoutLoader,), {"workdir": workdir, "cache_root": cache_root}
    )
    details: list[tuple[Any, list[str]]] = [
        (ExtensionFileLoader, EXTENSION_SUFFIXES),
        (loader, SOURCE_SUFFIXES),
        (SourcelessFileLoader, BYTECODE_SUFFIXES),
    ]

    def checkout_hook(path: str) -> "Any":
        where = loads.absolute(path)
        real = real_path(where) if where else ""
        if not real or not inside(real, workdir) or installed(real) or not os.path.isdir(real):
            raise ImportError("not a folder of the checkout")
        theirs = _instrumenting_finder(checkout_hook, path)
        return theirs if theirs is not None else FileFinder(path, *details)

    sys.path_hooks.insert(0, checkout_hook)
    loads.GUARDED[workdir] = loader
    forget_finders(workdir)
    return checkout_hook


_STANDARD_LOADERS = (ExtensionFileLoader, SourceFileLoader, SourcelessFileLoader)


def _instrumenting_finder(mine: "Callable[[str], Any]", path: str) -> "Any | None":
    """The finder another path hook makes for ``path``, when a hook that instruments the code
    it loads stands behind genstamp's (beartype.claw puts its own just before the standard file
    finder's, where genstamp's would hide it: its runtime checks were silently off). Its
    loads are recorded as every load is; its bytecode is its own, judged by the audit. None
    when no such hook takes the folder."""
    hooks = sys.path_hooks
    try:
        after = hooks[hooks.index(mine) + 1 :]
    except ValueError:
        return None
    for hook in after:
        if _standard(hook) or getattr(hook, "__name__", "") == "zipimporter":
            continue
        try:
            return hook(path)
        except ImportError:
            continue
    return None


def _standard(hook: "Callable[[str], Any]") -> bool:
    """Whether ``hook`` is a file finder's path hook with only the standard loaders (CPython's
    own, or genstamp's stand-in for it)."""
    if getattr(hook, "__name__", "") != "path_hook_for_FileFinder":
        return False
    for cell in getattr(hook, "__closure__", None) or ():
        try:
            value = cell.cell_contents
        except ValueError:
            continue
        if isinstance(value, tuple) and value and all(isinstance(d, tuple) for d in value):
            return all(d and d[0] in _STANDARD_LOADERS for d in value)
    return False


def uninstall_loader(hook: "Callable[[str], Any]", workdir: str) -> None:
    if hook in sys.path_hooks:
        sys.path_hooks.remove(hook)
    loads.GUARDED.pop(workdir, None)
    forget_finders(workdir)


def forget_finders(workdir: str) -> None:
    realpath = RealPaths()
    for entry in list(sys.path_importer_cache):
        where = loads.absolute(entry)
        if where is not None and inside(realpath(where), workdir):
            sys.path_importer_cache.pop(entry, None)


# A folder no bytecode is read from or written to (a path below a file that is no folder).
NOWHERE_PATH = os.path.join(os.devnull, "genstamp-not-cached")


def route_rewrite_cache(workdir: str, cache_root: str) -> "Callable[[], None] | None":
    """pytest keeps the assertion-rewritten bytecode of test modules and conftests beside them,
    validated (before pytest 9.2) by mtime and size only. For the checkout's files, point it
    into genstamp's cache instead, in a folder named by the hash of the source: bytecode found
    there can only have been compiled from that very source, whatever pytest checks. Returns
    the undo, or None when this pytest has no such function to route."""
    import contextlib
    import importlib.util
    import shutil
    from pathlib import Path

    try:
        from _pytest.assertion import rewrite
    except ImportError:
        return None
    original = getattr(rewrite, "get_cache_dir", None)
    if not callable(original):
        return None
    base = os.path.join(cache_root, REWRITTEN)
    NOWHERE = Path(NOWHERE_PATH)
    realpath = RealPaths()  # test modules are imported before any test runs

    def get_cache_dir(file_path: "Path") -> "Path":
        real = realpath(os.fspath(file_path))
        if inside(real, workdir):
            try:
                data = Path(real).read_bytes()
            except OSError:
                pass
            else:
                digest = importlib.util.source_hash(data).hex()
                loads.loaded_source(os.fspath(file_path), data, "")
                folder = Path(base, os.path.relpath(real, workdir))
                kept = folder / digest
                if not kept.is_dir():  # made once the source is known to compile quietly
                    with contextlib.suppress(OSError):
                        for older in folder.iterdir():  # bytecode of the file's earlier texts
                            if older.name != digest:  # (another xdist worker's, just made)
                                shutil.rmtree(older, ignore_errors=True)
                    if _warns(data, os.fspath(file_path)):
                        return NOWHERE  # pytest can neither read nor write bytecode there
                    with contextlib.suppress(OSError):
                        kept.mkdir(parents=True, exist_ok=True)
                return kept
        return Path(original(file_path))

    setattr(rewrite, "get_cache_dir", get_cache_dir)  # noqa: B010

    def undo() -> None:
        if getattr(rewrite, "get_cache_dir", None) is get_cache_dir:
            setattr(rewrite, "get_cache_dir", original)  # noqa: B010

    return undo


def from_elsewhere(modules: "Mapping[str, ModuleType | None]", workdir: str) -> "list[Any]":
    """The modules of ``modules`` loaded from another git work tree than ``workdir`` (as
    ``loads.ELSEWHERE`` loads, judged as the recorder's are): those imported before the
    recording began, such as pytest plugins named by ``-p``, ``PYTEST_PLUGINS`` or an entry
    point."""
    out = []
    for name, module in list(modules.items()):
        spec = getattr(module, "__spec__", None)
        origin = getattr(spec, "origin", None) or getattr(module, "__file__", None)
        if not isinstance(origin, str) or not os.path.isabs(origin):
            continue
        real = real_path(origin)
        tree = loads.work_tree_of(real)
        if not tree or tree == workdir:
            continue
        try:
            with open(real, "rb") as fh:
                blob = loads.blob_of(fh.read())
        except OSError:
            blob = ""
        out.append(loads.Load(real, blob, name, loads.ELSEWHERE, tree))
    return out


def auditable(
    modules: "Mapping[str, ModuleType | None]", workdir: str, packages: "Iterable[str]"
) -> "dict[str, ModuleType]":
    """The modules ``audit.audit_modules`` has something to say about: those of the audited
    packages, and those loaded from inside the work tree. Every other module it passes over
    after resolving its path (each folder once, and kept for ``from_elsewhere``, which goes
    over the same modules at the end of a run)."""
    wanted = set(packages)
    real = real_path
    kept = {}
    for name, module in list(modules.items()):
        if module is None:
            continue
        if name.partition(".")[0] in wanted:
            kept[name] = module
            continue
        spec = getattr(module, "__spec__", None)
        origin = getattr(spec, "origin", None) or getattr(module, "__file__", None)
        if isinstance(origin, str) and origin not in ("built-in", "frozen"):
            if inside(real(origin), workdir):
                kept[name] = module
    return kept
