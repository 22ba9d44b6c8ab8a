"""The load log: every module of the checkout recorded as it loads, in every process of a run.

A run (``Run``) is a work tree, its import roots and a folder: each process appends one line per
load (tab-separated fields) to the run's log ``<folder>/loads.log`` as it happens (an unbuffered
append, one ``write`` a line: a crash or an ``os._exit`` loses nothing recorded, and the lines
of processes writing at once do not mix). The process that opens the run makes that file:
creating a file costs a process several times what opening one does (``<folder>/<pid>.log``
where it is missing). Loads are recorded where the bytes are known
(the checkout's loader, pytest's assertion rewriter), by a meta path finder for the checkout's
import roots wherever they load from, and by an audit hook (``sys.addaudithook``) that sees
every module body executed, whatever finder, ``sys.modules`` reset or ``importlib.reload``
brought it there. The audit hook cannot be removed: it does nothing, and holds nothing, while
no run is active.

CPython 3.10-3.13 raise, for a module compiled from source, ``compile`` (with the source bytes)
then ``exec`` (the module's code object); for one loaded from bytecode, ``open`` of the
``.pyc``, ``marshal.loads``, then ``exec``. The hook pairs each ``exec`` with what preceded it
in the same thread.

PYTEST_DONT_REWRITE: a run's child processes import this module at start-up, before pytest
would rewrite it (it asserts nothing)
"""

# Kept light on purpose: every Python process a run starts imports this module at start-up.
import _thread
import sys

# importlib.machinery's class, from the frozen module every process already holds (importing
# importlib.machinery imports importlib and warnings too)
from _frozen_importlib_external import ExtensionFileLoader, SourceFileLoader, cache_from_source

from genstamp.paths import environment, inside, installed, site_relative
from genstamp.realos import io, os  # as they were: a test may patch them (``realos``)

TYPE_CHECKING = False  # not typing's: importing typing costs every child process ~5 ms
if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence
    from importlib.machinery import ModuleSpec
    from types import CodeType, FrameType, ModuleType
    from typing import Any, NamedTuple
else:
    CodeType = type((lambda: 0).__code__)  # types' own definition, without importing types
    ModuleType = type(sys)  # and types' own ModuleType

RUN_ENV = "GENSTAMP_RUN"  # the run folders (os.pathsep-separated) a process records into
RUN_FILE = "run.txt"
LOG_FILE = "loads.log"  # every process's loads (``record``), made by ``child.open_run``
ASIDE = ".aside"  # a load the log could not take, as a symbolic link's target (``_set_aside``)
CUT = ".cut"  # the part of such a load that the log took: blanked out where it is read
LOST = ".lost"  # a folder: a process whose loads neither the log nor a link could take
RUN_VERSION = "1"

SOURCE = "source"  # compiled from the bytes whose blob is recorded
BYTECODE = "bytecode"  # executed from a pyc; ``detail`` says why it is not the source's, if so
SOURCELESS = "sourceless"  # executed from a pyc with no source beside it
EXTENSION = "extension"  # a .so/.pyd; ``detail`` is its mtime in ns
NAMESPACE = "namespace"  # a namespace package's folder
# A module loaded from a plain folder outside the checkout, of a name that a folder of the work
# tree on the import path gives (``detail``: that file of the work tree)
SHADOW = "shadow"
# A module loaded from a plain folder outside the checkout, of a name that no folder of the work
# tree on the import path gives now (``detail``: those folders, os.pathsep-separated): one the
# tree dropped, perhaps, that an old copy still serves (``audit.judge`` asks git's history).
GONE = "gone"
# Code outside the checkout, in another git work tree (``detail``: that work tree), of a module
# that is none of the checkout's roots: another clone's, perhaps (``audit.judge`` asks git).
ELSEWHERE = "elsewhere"
# A Python source outside the checkout, in no git work tree and no environment, run under no
# name the tree gives (``python /elsewhere/pkg/tool.py``, ``runpy.run_path``, a module beside
# such a script): the audit asks git whether its bytes are a version of a file of the tree (a
# copy of this project that is no work tree: an export, an unpacked sdist), current or past.
RAN = "ran"
# A file of the work tree a process started as a program (``subprocess.run(["scripts/t.py"])``,
# a shell's first word), its executable bit set: the audit asks whether git records the bit
# (``core.fileMode=false`` keeps git from seeing it, and a clone cannot run the file).
EXECUTED = "executed"
READ = "read"  # a file of the work tree (not code) opened to read
# A Python source of the work tree opened to write (or renamed into place), and one whose
# times were set: the gate tells code the run wrote from code it only touched (``Path.touch``).
# Other files are not recorded (a test writing data costs nothing more).
WROTE = "wrote"
TOUCHED = "touched"
# A folder of the work tree that held no file when the tests used it, and was there before
# the run: they wrote a file into it, made a folder in it (a plain mkdir, which needs it), or
# listed it or the folder holding it (the tests' own listing, not pytest's collection).
FOLDER = "folder"
MKDIR = "mkdir"  # a folder a process of the run made (or asked to make: makedirs(exist_ok))
# A folder whose change time was after the run began when a process first used it: made by the
# run (a shell's `mkdir -p`), unless another process found it there before (``FOLDER``)
NEW = "new"
THERE = "there"  # a MKDIR's detail: the folder was there already
# A file of the process's own Python environment outside its library folders (``bin/``,
# ``share/``: where an install puts a project's scripts and data files), read or run as its
# script (``detail``: its modification time): an installer's copy of a file of the work tree,
# perhaps, which the audit compares with the tree's where the project's distribution installed it
COPIED = "copied"
# A submodule of an import root that no finder found, in an installed copy of its package
# (``path``: the package's folder there): the tree may hold it, a stale install lack it, and
# the code fall back (``try: from pkg import _fast`` ... ``except ImportError``)
MISSING = "missing"


if TYPE_CHECKING:

    class Load(NamedTuple):
        path: str  # absolute, resolved: the file (or folder) the module came from
        blob: str  # git blob id of the bytes compiled ("" when there are none)
        module: str  # the module's name, when known
        via: str  # SOURCE, BYTECODE, SOURCELESS, EXTENSION or NAMESPACE
        detail: str = ""

    class Run(NamedTuple):
        """What every process of one run needs to record its loads."""

        folder: str  # where the processes' logs go
        workdir: str
        roots: dict[str, str]  # import root name -> the folder of the checkout holding it
        cache_root: str | None  # genstamp's bytecode cache (None: the user's pycache prefix)
        generation_ns: int | None

else:  # the same records, without importing typing or collections (see ``records``)
    from genstamp.records import record

    Load = record("Load", "path blob module via detail", ("",), __name__)
    Run = record("Run", "folder workdir roots cache_root generation_ns", (), __name__)


def run_text(run: Run) -> str:
    """Tab-separated fields, one record a line (no json: a child reads it at start-up)."""
    lines = [
        ("version", RUN_VERSION),
        ("folder", run.folder),
        ("workdir", run.workdir),
        ("cache", run.cache_root or ""),
        ("generation", "" if run.generation_ns is None else str(run.generation_ns)),
        *(("root", name, folder) for name, folder in sorted(run.roots.items())),
    ]
    return "".join("\t".join(_escape(f) for f in fields) + "\n" for fields in lines)


def read_run(folder: str) -> Run | None:
    try:
        # (a path that is no UTF-8 as the OS gave it: surrogate-escaped both ways)
        with io.open(
            os.path.join(folder, RUN_FILE), encoding="utf-8", errors="surrogateescape"
        ) as fh:
            lines = [[_unescape(f) for f in line.rstrip("\n").split("\t")] for line in fh]
        values = {k[0]: k[1] for k in lines if len(k) == 2}
        if values.get("version") != RUN_VERSION:
            return None
        roots = {k[1]: k[2] for k in lines if k[0] == "root" and len(k) == 3}
        gen = values["generation"]
        return Run(
            values["folder"],
            values["workdir"],
            roots,
            values["cache"] or None,
            int(gen) if gen else None,
        )
    except (OSError, ValueError, KeyError, IndexError):
        return None


def _escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace("\t", "\\t").replace("\n", "\\n")


def _unescape(text: str) -> str:
    if "\\" not in text:
        return text  # most fields: read by every child at start-up
    out, i = [], 0
    while i < len(text):
        c = text[i]
        if c == "\\" and i + 1 < len(text):
            nxt = text[i + 1]
            out.append({"t": "\t", "n": "\n"}.get(nxt, nxt))
            i += 2
        else:
            out.append(c)
            i += 1
    return "".join(out)


def blob_of(data: bytes) -> str:
    """The id git gives ``data`` as a blob (no filters)."""
    sha1 = _SHA1[0] if _SHA1 else _load_sha1()
    digest: str = sha1(b"blob %d\0" % len(data) + data).hexdigest()
    return digest


_SHA1: "list[Any]" = []  # sha1's constructor, once imported (``_sha1``)


def _load_sha1() -> "Any":
    """sha1's constructor: imported when a run begins recording (``activate``), for code a
    process runs as it ends (a ``__del__`` at finalisation) can import nothing."""
    try:
        import _sha1  # type: ignore[import-not-found,unused-ignore]  # what hashlib gives, without importing OpenSSL at start-up

        made = _sha1.sha1
    except ImportError:  # pragma: no cover
        import hashlib

        made = hashlib.sha1
    _SHA1[:] = [made]
    return made


# -- the active runs of this process -----------------------------------------------------------


class _Active:
    __slots__ = ("fds", "run")

    def __init__(self, run: Run) -> None:
        self.run = run
        # pid -> the log's descriptor, with the log's device and inode (a forked child opens
        # its own; a process that closed it, ``os.closerange``, may hold the number for a file
        # of its own now)
        self.fds: dict[int, tuple[int, int, int]] = {}


_RUNS: list[_Active] = []
# The import guard's loader class for each guarded work tree (``loader.install_loader``): a
# module of the checkout that another finder (setuptools' editable finder) would load with a
# plain SourceFileLoader loads through it instead, never from a stale ``__pycache__``.
GUARDED: "dict[str, type]" = {}
_LOCK = _thread.allocate_lock()
_STATE = _thread._local()
_HOOKED = False
# what the audit hook and the extension loader call while a run is active: ``_hook`` and
# ``_extension_created``
_TARGET: "list[Any]" = [None, None]
_real_cache: dict[str, str] = {}  # a path -> real_path's answer, for the active runs


def active(folder: str | None = None) -> list[Run]:
    return [a.run for a in _RUNS if folder is None or a.run.folder == folder]


def activate(run: Run) -> None:
    """Record this process's loads into ``run`` from now on (once per run)."""
    global _HOOKED
    with _LOCK:
        if any(a.run.folder == run.folder for a in _RUNS):
            return
        _RUNS.append(_Active(run))
        _real_cache.clear()
        _RESOLVE.forget()
        _READ.clear()  # what an earlier run in this process saw is not this one's
        _COPIES.clear()
        _ENTRIES[:] = [(), False, "", None]
        _WRITTEN.clear()
        _TOUCHED.clear()
        _SEEN_FOLDERS.clear()
        _LISTED.clear()
        _CODE_IN_TREE.clear()
        _WORK_TREES.clear()
        _TEXTS.clear()
        _TARGET[0] = _hook
        _TARGET[1] = _extension_created
        if not _SHA1:
            _load_sha1()
        if not _HOOKED:
            sys.addaudithook(_AUDIT)
            # an extension module runs no module code the audit hook sees: its loader says it
            ExtensionFileLoader.create_module = _function(  # type: ignore[method-assign]
                _create_module.__code__,
                {},
                "create_module",
                (ExtensionFileLoader.create_module, _TARGET),
            )
            _HOOKED = True
        if not any(isinstance(f, RootFinder) for f in sys.meta_path):
            sys.meta_path.insert(0, RootFinder())


def replace(run: Run) -> None:
    """The active run in ``run``'s folder records as ``run`` says from now on."""
    with _LOCK:
        for a in _RUNS:
            if a.run.folder == run.folder:
                a.run = run


def deactivate(folder: str) -> None:
    with _LOCK:
        for a in [a for a in _RUNS if a.run.folder == folder]:
            _RUNS.remove(a)
            for kept in a.fds.values():
                if _still_the_log(kept):  # never the user's file under the log's number
                    try:  # noqa: SIM105 (contextlib costs a child's start-up)
                        os.close(kept[0])
                    except OSError:
                        pass
        if not _RUNS:
            sys.meta_path[:] = [f for f in sys.meta_path if not isinstance(f, RootFinder)]
            _TARGET[0] = _TARGET[1] = None


def record(load: Load) -> None:
    """Append ``load`` to the log of every active run it concerns."""
    line = ("\t".join(_escape(field) for field in load) + "\n").encode("utf-8", "surrogateescape")
    pid = os.getpid()
    for a in list(_RUNS):
        if not _concerns(a.run, load.path, load.module, load.via):
            continue
        kept = a.fds.get(pid)
        try:
            if kept is None or not _still_the_log(kept):
                fd = _open_log(a.run.folder, pid)
                st = os.fstat(fd)
                kept = (fd, st.st_dev, st.st_ino)
                a.fds.clear()  # a forked child opens the log anew (its own where it is its own)
                a.fds[pid] = kept
            written = os.write(kept[0], line)
            if written < len(line):  # the limit on the file's size fell inside the line
                end = os.lseek(kept[0], 0, os.SEEK_CUR)
                cut = f"{kept[2]} {end - written} {end}".encode()
                _set_aside(a.run.folder, pid, line, cut)
        except OSError:
            _set_aside(a.run.folder, pid, line)


_ASIDE = [0]  # the links this process made (``_link_aside``)


def _set_aside(folder: str, pid: int, line: bytes, cut: bytes = b"") -> None:
    """A load's line that the log could not take, through a limit the tests set on this process
    (on the size of the files it writes, ``RLIMIT_FSIZE``; on its descriptors), kept as the
    target of a symbolic link in the run's folder, which neither limit stops (``read_logs``
    reads it back); ``cut``: the part of it that did reach the log (its inode, where it begins
    and ends), which ``read_logs`` blanks out; where even that fails, a folder says that the
    process's loads are lost."""
    was = hush(True)
    try:
        kept = _link_aside(folder, pid, line, ASIDE)
        if kept and cut:
            kept = _link_aside(folder, pid, cut, CUT)
        if not kept:
            _lost(folder, pid)
    finally:
        hush(was)


def _link_aside(folder: str, pid: int, target: bytes, suffix: str) -> bool:
    while True:
        _ASIDE[0] += 1
        try:
            os.symlink(target, os.fsencode(os.path.join(folder, f"{pid}.{_ASIDE[0]}{suffix}")))
            return True
        except FileExistsError:
            continue  # a name this process took before it ran another program (os.exec*)
        except OSError:
            return False


def _lost(folder: str, pid: int) -> None:
    try:
        os.mkdir(os.path.join(folder, f"{pid}{LOST}"))
    except OSError:
        return


def _still_the_log(kept: "tuple[int, int, int]") -> bool:
    """Whether the descriptor kept for the log still is the log's: a process may close every
    descriptor it inherited (a daemon's start, ``os.closerange``) and reuse the number for a
    file of its own, which a load's line must never reach."""
    try:
        st = os.fstat(kept[0])
    except OSError:
        return False
    return (st.st_dev, st.st_ino) == kept[1:]


def _open_log(folder: str, pid: int) -> int:
    """The run's log, opened to append; this process's own where the run has none (a run
    folder of another genstamp)."""
    try:
        return os.open(os.path.join(folder, LOG_FILE), os.O_WRONLY | os.O_APPEND)
    except FileNotFoundError:
        return os.open(
            os.path.join(folder, f"{pid}.log"), os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600
        )


def _concerns(run: Run, path: str, module: str, via: str) -> bool:
    if inside(path, run.workdir) and not installed(path):
        return True
    if via in (ELSEWHERE, SHADOW, GONE, COPIED, RAN):
        return True
    return bool(module) and module.partition(".")[0] in run.roots


# The standard library's folder (never a checkout). Not the environment's prefix: pip's
# editable install from git clones into ``<venv>/src/<name>``, a checkout like any other.
_SYSTEM = os.path.join(os.path.dirname(os.path.realpath(os.__file__)), "")
_PACKAGES = f"-packages{os.sep}"  # site-packages, dist-packages
# genstamp's own source (a checkout of genstamp, when it is installed editable): not the code
# under test, whoever's clone it is.
_OWN = os.path.join(os.path.dirname(os.path.dirname(os.path.realpath(__file__))), "")
_WORK_TREES: dict[str, str] = {}  # a folder -> the git work tree holding it ("": none)


def work_tree_of(path: str) -> str:
    """The git work tree holding the file ``path`` (real, absolute): the nearest folder above
    it with a ``.git``; "" when none does, or when it is installed code (in a virtual
    environment, even one kept inside a checkout), the standard library or genstamp's own."""
    if installed(path) or path.startswith(_SYSTEM) or path.startswith(_OWN):
        return ""
    folder = os.path.dirname(path)
    seen: list[str] = []
    found = ""
    while True:
        known = _WORK_TREES.get(folder)
        if known is not None:
            found = known
            break
        seen.append(folder)
        if os.path.lexists(os.path.join(folder, "pyvenv.cfg")):
            break  # a virtual environment's (a console script of one kept in a checkout)
        if os.path.lexists(os.path.join(folder, ".git")):
            found = folder
            break
        parent = os.path.dirname(folder)
        if parent == folder:
            break
        folder = parent
    for folder in seen:
        _WORK_TREES[folder] = found
    return found


def _kept_clone(path: str) -> str:
    """The git work tree holding ``path`` when that is another than a run's own, kept inside
    a Python environment of its work tree (pip's ``.venv/src/NAME`` of an editable install
    from a repository, another clone of this one perhaps): its code is that clone's, as if it
    lay outside. "" otherwise (a submodule's code is the work tree's own)."""
    for a in _RUNS:
        workdir = a.run.workdir
        if not inside(path, workdir) or installed(path):
            continue
        tree = work_tree_of(path)
        if tree and tree != workdir and inside(tree, workdir):
            folder = os.path.dirname(tree)
            while folder != workdir and inside(folder, workdir):
                if environment(folder):
                    return tree
                folder = os.path.dirname(folder)
    return ""


def _named_like_a_root(path: str) -> bool:
    """Some folder of ``path``, or its file's stem, is named like an import root of a run (a
    cheap test before the module's name is looked up)."""
    parts = path.split(os.sep)
    parts[-1] = parts[-1].partition(".")[0]
    # asked of every module a process runs: one set operation a run, not one test a part
    return any(not a.run.roots.keys().isdisjoint(parts) for a in _RUNS)


def _module_executing(filename: str) -> str:
    """The name of the module whose body is about to run from ``filename``: every loader
    executes it from ``exec_module(module)`` (importlib's, pytest's, a custom one), a few frames
    above this hook; runpy (``python -m pkg.cli``, ``runpy.run_module``) executes it into the
    ``run_globals`` of its ``_run_code``, whose ``__spec__`` names the module run as
    ``__main__``. Code run from a path (``runpy.run_path``) of installed code is named by
    where it lies below ``site-packages``."""
    frame: FrameType | None = sys._getframe(2)
    for _ in range(8):
        if frame is None:
            break
        f_locals = frame.f_locals
        module = f_locals.get("module")
        if module is not None and getattr(module, "__file__", None) == filename:
            name = getattr(module, "__name__", "")
            return name if isinstance(name, str) else ""
        run_globals = f_locals.get("run_globals")
        if isinstance(run_globals, dict) and run_globals.get("__file__") == filename:
            name = getattr(run_globals.get("__spec__"), "name", None)
            if isinstance(name, str):
                return name
            break
        frame = frame.f_back
    rel = site_relative(filename)
    if rel is not None and rel.endswith(_SOURCES) and "-" not in rel:
        parts = rel.rpartition(".")[0].split("/")
        if parts[-1] == "__init__":
            parts.pop()
        if parts and all(p.isidentifier() for p in parts):
            return ".".join(parts)
    return ""


_SOURCES = (".py", ".pyw")


def _holds(path: str, data: bytes) -> bool:
    """Whether ``data`` is the text of the file at ``path``: its bytes, or its text as read in
    text mode (``compile(path.read_text(), path, "exec")``: universal newlines, no BOM)."""
    try:
        with io.open(path, "rb") as fh:
            raw = fh.read()
    except OSError:
        return False
    if raw == data:
        return True
    text = raw.removeprefix(b"\xef\xbb\xbf").replace(b"\r\n", b"\n").replace(b"\r", b"\n")
    return text == data.removeprefix(b"\xef\xbb\xbf").replace(b"\r\n", b"\n")


def _holding_as_text(path: str, data: bytes) -> bytes | None:
    """The bytes of the Python source at ``path`` when ``data`` (compiled under its name) is
    an example of one of its strings that a tool runs, padded with blank lines to where it
    stands (Sybil's ``PythonCodeBlockParser``, there, or a line above for an escape in the
    string before it; pytest-markdown-docs, a line below; no further):
    each line the line of a string of the source at that place, as written or as its value
    reads (an escape: ``\\n`` is ``\n``), its indentation aside. That is the file's own
    text; None for any other (a stale copy of its code begins at the first line, whether the
    file holds it in a string or not; changed text)."""
    import ast
    import io
    import tokenize

    raw = _bytes(path)
    owner: dict[int, int] = {}  # a line a string of the source spans -> which string
    held: dict[int, set[bytes]] = {}  # -> that line as written, and as the value reads
    try:
        for i, token in enumerate(tokenize.tokenize(io.BytesIO(raw).readline)):
            if token.type != tokenize.STRING:
                continue
            first = token.start[0]
            written = token.string.splitlines()
            try:
                value = ast.literal_eval(token.string)
            except (SyntaxError, ValueError):  # (an f-string: as written)
                value = ""
            read = value.splitlines() if isinstance(value, str) else []
            for k in range(len(written)):
                owner[first + k] = i
                held[first + k] = {written[k].strip().encode()}
                if k < len(read):
                    held[first + k].add(read[k].strip().encode())
    except (tokenize.TokenError, SyntaxError, UnicodeDecodeError):
        return None
    ran = [(n, line.strip()) for n, line in enumerate(data.splitlines(), 1) if line.strip()]
    if not ran or ran[0][0] == 1:
        return None  # not padded to a place in the file
    for below in (0, 1, -1):  # (Sybil's lines come one above after an escape in the string)
        strings = [owner.get(n - below) for n, _ in ran]
        if (
            strings[0] is not None
            and all(h == strings[0] for h in strings)
            and all(line in held[n - below] for n, line in ran)
        ):
            return raw
    return None


def _may_concern(filename: str) -> bool:
    """A cheap first test, before the frames are looked at: code named as a file of a run's
    work tree, or of one of its import roots (every other module a process runs passes here,
    the standard library's and the installed packages')."""
    return any(inside(filename, a.run.workdir) for a in _RUNS) or _named_like_a_root(filename)


def _of_another_work_tree(filename: str, ran: str) -> bool:
    """Whether bytecode run from ``ran``, outside every run's work tree, was compiled from a file
    of another git work tree (its code names ``filename`` there): that clone's code, judged as
    its file is (``ELSEWHERE``), where the .pyc itself is no one's (D26 13)."""
    if _may_concern(_where(ran)):
        return False
    other = work_tree_of(_where(filename))
    return bool(other) and not any(inside(other, a.run.workdir) for a in _RUNS)


def _bytecode_origin(filename: str) -> "tuple[str, str] | None":
    """Where the module about to run ``filename``'s code was loaded from, and its name, when
    that is a file other than ``filename`` and no Python source (``module.__file__`` names a
    member of an archive, or a ``.pyc``): its loader executes it from ``exec_module(module)``,
    a few frames above this hook. None otherwise."""
    frame: FrameType | None = sys._getframe(3)
    for _ in range(8):
        if frame is None:
            break
        module = frame.f_locals.get("module")
        if module is not None and isinstance(getattr(module, "__name__", None), str):
            file = getattr(module, "__file__", None)
            if isinstance(file, str) and file != filename and not file.endswith(".py"):
                return file, module.__name__
            return None
        frame = frame.f_back
    return None


def read_logs(folder: str, since: "dict[str, int] | None" = None) -> list[Load]:
    """Every process's loads, in the order each recorded them (those set aside last); lines cut
    by a crash are skipped. ``since``: only those recorded after it (``log_sizes``)."""
    loads: list[Load] = []
    try:
        names = sorted(os.listdir(folder))
    except OSError:
        return loads
    aside = sorted(
        (n for n in names if n.endswith(ASIDE) and (since is None or n not in since)),
        key=lambda n: [int(p) if p.isdigit() else 0 for p in n.split(".")[:2]],
    )
    cuts = _cuts(folder, [n for n in names if n.endswith(CUT)])
    for name in [n for n in names if n.endswith(".log")] + aside:
        try:
            if name.endswith(ASIDE):
                lines = [os.fsdecode(os.readlink(os.path.join(folder, name))).rstrip("\n")]
            else:
                with io.open(os.path.join(folder, name), "rb") as fh:
                    start = (since or {}).get(name, 0)
                    fh.seek(start)
                    data = bytearray(fh.read())
                    for begin, end in cuts.get(os.fstat(fh.fileno()).st_ino, ()):
                        begin, end = max(begin - start, 0), max(end - start, 0)
                        data[begin:end] = b"\n" * len(data[begin:end])  # (the same length)
                    lines = data.decode("utf-8", "surrogateescape").split("\n")
        except OSError:
            continue
        for line in lines:
            fields = line.split("\t")
            if len(fields) == len(Load._fields):
                loads.append(Load(*(_unescape(f) for f in fields)))
    return loads


def _cuts(folder: str, names: "Iterable[str]") -> "dict[int, list[tuple[int, int]]]":
    """The parts of lines that a log took short (``_set_aside``), by the log's inode."""
    cuts: dict[int, list[tuple[int, int]]] = {}
    for name in names:
        try:
            inode, begin, end = map(int, os.readlink(os.path.join(folder, name)).split())
        except (OSError, ValueError):
            continue
        cuts.setdefault(inode, []).append((begin, end))
    return cuts


def log_sizes(folder: str) -> dict[str, int]:
    """How much each process's log of the run in ``folder`` holds now (``read_logs``)."""
    sizes = {}
    try:
        for entry in os.scandir(folder):
            if entry.name.endswith(".log"):
                sizes[entry.name] = entry.stat().st_size
            elif entry.name.endswith(ASIDE):
                sizes[entry.name] = 0  # read already
    except OSError:
        pass
    return sizes


def lost(folder: str) -> list[str]:
    """The processes of the run in ``folder`` (their pids) whose loads are lost (``_set_aside``)."""
    try:
        return sorted(n.removesuffix(LOST) for n in os.listdir(folder) if n.endswith(LOST))
    except OSError:
        return []


# -- where the bytes are known: the loaders ------------------------------------------------------

_expected: dict[str, int] = {}  # filename -> loads its loader recorded, not yet executed
# the code objects genstamp's loader recorded, not yet executed: id -> code (kept alive)
_EXPECTED_CODE: "dict[int, CodeType]" = {}


def loaded_source(
    path: str, data: bytes, module: str, detail: str = "", code: "CodeType | None" = None
) -> None:
    """A loader compiled ``data`` (or ran bytecode checked against it) for ``path``: ``code``,
    when it says which code that made (only that code's execution is then this load's; a
    ``get_code`` that is never executed leaves no credit to another code of that name)."""
    if not _RUNS:
        return
    real = _where(path)
    clone = _kept_clone(real)
    if clone:
        record(Load(real, blob_of(data), module, ELSEWHERE, clone))
    else:
        record(Load(real, blob_of(data), module, SOURCE, detail or _made(real)))
    if code is not None:
        _EXPECTED_CODE[id(code)] = code
    else:
        _expected[path] = _expected.get(path, 0) + 1


MADE = "made"  # a SOURCE load's detail: the file was made (written) after the run began
# A SOURCE load's detail: the file changed after the run began (its ctime), but not its mtime:
# a chmod, or bytes written with their old time put back (`cp -p`). Made by the run only where
# one of its processes opened it to write (``WROTE``).
CHANGED = "changed"
# A SOURCE load's detail: module code of an import root that a loader ran from text compiled
# under a name of no file that does not name the module (``<string>``, a path of no file):
# the module's body unless its file, or text named as it, ran in the run (``audit.judge``)
UNNAMED = "unnamed"


def _made(real: str) -> str:
    """``MADE`` when the file at ``real`` was written after the run began (the tests made it:
    generated code, a pytester project), ``CHANGED`` when only its change time says so, else
    ""."""
    st: os.stat_result | None
    try:
        st = os.stat(real)
    except OSError:
        # a member of an archive on the import path (zipimport: ``build/app.zip/pkg/m.py``)
        # was made when the archive was
        st = _archive_stat(real)
    if st is None:
        return ""
    began = _began()
    if began <= 0 or st.st_ctime_ns < began:
        return ""
    return MADE if st.st_mtime_ns >= began else CHANGED


def _archive_stat(path: str) -> "os.stat_result | None":
    """The status of the file that holds ``path`` as an archive's member (the nearest folder
    above it that is a file), None when there is none."""
    folder = os.path.dirname(path)
    while folder != os.path.dirname(folder):
        try:
            st = os.stat(folder)
        except OSError:
            folder = os.path.dirname(folder)
            continue
        return st if st.st_mode & 0o170000 == 0o100000 else None  # S_ISREG
    return None


# -- everything else: the audit hook and the meta path finder ------------------------------------


def hush(on: bool) -> bool:
    """Hush the hook in this thread (``on``), or let it record again; whether it was hushed.
    genstamp's own loading (``stdlib.module``) is none of the tests' doing."""
    was = bool(getattr(_STATE, "busy", False))
    _STATE.busy = on
    return was


def _hook(event: str, args: "tuple[Any, ...]") -> None:
    """One of ``_EVENTS`` (``_AUDIT`` passes no other)."""
    if not _RUNS or getattr(_STATE, "busy", False):
        return
    _STATE.busy = True  # what the hook itself imports or opens is not the tests' doing
    try:
        if event == "exec":
            code = args[0]
            if isinstance(code, CodeType) and code.co_name == "<module>":
                _executed(code)
        elif event == _RUN_FILE:
            _main_file(args[0])
        elif event == "compile":
            source, filename = args[0], args[1]
            if isinstance(filename, str) and (
                _no_file(filename) or (os.path.isabs(filename) and not os.path.lexists(filename))
            ):
                _keep_text(filename, source)  # a custom loader's text (``_pseudo_module``)
            if isinstance(source, bytes) and isinstance(filename, str):
                _STATE.compiled = (filename, source)
                _STATE.pyc = None
                _STATE.tree = False
                if not filename.startswith("<"):  # kept until code of that name runs
                    stack = _STATE.__dict__.setdefault("stack", [])
                    stack.append([filename, source, False])
                    del stack[:-_PENDING]
            elif not isinstance(source, (bytes, str)):
                _STATE.tree = True  # a syntax tree compiled (an import hook's, changed or not)
                stack = getattr(_STATE, "stack", None)
                if stack:  # of the text parsed last (what it imported meanwhile has run)
                    stack[-1][2] = True
        elif event in _PLACED:  # os.rename, os.replace, os.link: (src, dst, ..., dst_dir_fd);
            dst = args[1]  # os.symlink: (src, dst, dir_fd)
            if isinstance(dst, (str, bytes, os.PathLike)) and args[-1] in (None, -1):
                name = os.fsdecode(os.fspath(dst))
                if name.endswith(_SOURCES) and event == "os.rename":
                    _changed(name, WROTE)  # written elsewhere, put in place now
                _used(os.path.dirname(os.path.abspath(name)))  # a file put in that folder
        elif event == "open":
            path = args[0]
            if not isinstance(path, (str, bytes, int)) and hasattr(path, "__fspath__"):
                path = os.fspath(path)  # io.FileIO(Path(...)) raises it with the path object
            if isinstance(path, str) and path.endswith(".pyc"):
                _STATE.pyc = path
                _STATE.compiled = None
            elif isinstance(path, (str, bytes)):
                name = os.fsdecode(path)
                writing = _writing(args[1], args[2])
                if name.endswith(_SOURCES) and not writing:
                    _STATE.source = name  # a source read: an import hook may compile its AST
                if writing:
                    _within(_WRITTEN, name)
                    _used(os.path.dirname(os.path.abspath(name)))
                if name.endswith(_SOURCES) and writing:
                    _changed(name, WROTE)
                if not name.endswith(_CODE):
                    _opened(name, args[1], args[2])
                elif name.endswith(".pth") and not writing:
                    if _read_by_site():
                        _path_file(name)
                    else:  # data named so (PyTorch's weights): a file the tests read
                        _opened(name, args[1], args[2])
        elif event in _SET:  # os.utime: (path, times, ns, dir_fd)
            path = args[0]
            if isinstance(path, (str, bytes, os.PathLike)) and args[-1] in (None, -1):
                name = os.fsdecode(os.fspath(path))
                _within(_TOUCHED, name)
                if name.endswith(_SOURCES):
                    _changed(name, TOUCHED)
        elif event in _SPAWNS:
            _spawned(event, args)
        elif event in _FOLDERS:  # os.listdir, os.scandir: (path,); os.mkdir: (path, mode, fd)
            path = args[0]
            if path is None:
                path = "."
            elif isinstance(path, int):  # a folder's descriptor: os.fwalk, os.scandir(fd)
                path = os.readlink(f"/proc/self/fd/{path}")
            at = args[2] if len(args) > 2 else None  # mkdir's dir_fd
            if isinstance(path, (str, bytes, os.PathLike)) and at in (None, -1):
                name = os.path.abspath(os.fsdecode(os.fspath(path)))
                if event == "os.mkdir":
                    _made_folder(name)
                elif name not in _LISTED and _the_tests_listing():
                    _listed(name)
        else:  # ctypes.dlopen: native code loaded by path, as an extension module is
            name = args[0]  # as the caller gave it: str, bytes, (3.11) a path object or None
            if name is not None and not isinstance(name, str):
                name = os.fsdecode(os.fspath(name))
            if isinstance(name, str) and os.sep in name:
                _library(name)
    except Exception:  # an audit hook that raises breaks the code under test
        pass
    finally:
        _STATE.busy = False


_PENDING = 8  # compiles a thread keeps until code of their name runs (an import hook's nest)
_SET = frozenset({"os.utime"})  # a time set: a touch (a mode set keeps the mtime: ``_made``)
_FOLDERS = frozenset({"os.listdir", "os.scandir", "os.mkdir"})
_PLACED = frozenset({"os.rename", "os.link", "os.symlink"})  # a file put in place by name
_RUN_FILE = "cpython.run_file"  # the script a process runs: a .pyc runs with no ``exec``
_SPAWNS = frozenset({"subprocess.Popen", "os.exec", "os.posix_spawn", "os.system"})
_EVENTS = frozenset(
    {"exec", "compile", "open", "ctypes.dlopen", _RUN_FILE, *_PLACED, *_SET, *_FOLDERS, *_SPAWNS}
)
# Opened to be loaded (the import system opens every source it imports: the loads say those;
# a source read as data is not told apart).
_CODE = (".py", ".so", ".pyd", ".pth")
_READ: set[str] = set()  # the paths of the work tree this process opened to read, once each


def _writing(mode: object, flags: object) -> bool:
    """Whether an ``open`` event's file is opened to write (``builtins.open``'s mode, or
    ``os.open``'s flags)."""
    if isinstance(mode, str):
        return any(c in mode for c in "wax+")
    return isinstance(flags, int) and flags & os.O_ACCMODE != os.O_RDONLY


_CHANGED: set[tuple[str, str]] = set()  # (path, WROTE or TOUCHED) this process recorded


def _changed(path: str, via: str) -> None:
    """A source of the work tree opened to write or renamed into place (``WROTE``), or its
    times set (``TOUCHED``): recorded once each, where the work tree holds it."""
    full = os.path.abspath(path)
    if (full, via) in _CHANGED:
        return
    _CHANGED.add((full, via))
    for where in dict.fromkeys((full, _where(full))):
        if any(inside(where, a.run.workdir) and not installed(where) for a in _RUNS):
            parts = where.split(os.sep)
            if ".git" not in parts and "__pycache__" not in parts:
                record(Load(where, "", "", via))


def _opened(path: str, mode: object, flags: object) -> None:
    """A file opened: one of the work tree's opened to read is recorded once (a data file the
    tests read: the gate asks whether git sees what it held)."""
    if isinstance(mode, str):
        if "r" not in mode and "+" not in mode:
            return
    elif isinstance(flags, int) and flags & os.O_ACCMODE == os.O_WRONLY:
        return
    full = os.path.abspath(path)
    # the standard library's files are nobody's data; site-packages inside its folder (an
    # installation that is no virtual environment: conda, the `python` Docker image) is
    if full in _READ or (full.startswith(_SYSTEM) and _PACKAGES not in full):
        return
    _READ.add(full)
    real = _where(full)
    for where in dict.fromkeys((full, real)):  # a link into an installer's cache: the link's
        if _environment_file(where):
            _copied(where)
    if real != full:  # read through a link: a folder's link of the work tree was read too
        for link in _links_along(full):  # (`data -> v2/`: its flag is on the link's entry)
            record(Load(link, "", "", READ))
    # the path as opened (a link of the work tree: its flag is on the link) and where it leads
    for where in dict.fromkeys((full, real)):
        if not any(inside(where, a.run.workdir) and not installed(where) for a in _RUNS):
            _installed_read(where)
            continue
        parts = where.split(os.sep)
        if ".git" in parts or "__pycache__" in parts:
            continue
        try:  # a file the run itself wrote (after it began) is no checkout's
            # new times, and not written here: another process of the run wrote it, or only
            # set its times (a shell's `touch`): this one cannot tell which, so it is read
            if _written_in_the_run(full, where, os.stat(where)) and {full, where} & _WRITTEN:
                continue
        except OSError:
            continue
        record(Load(where, "", "", READ))


def read_before(paths: "Iterable[str]") -> None:
    """Files read before the recording began, by what loaded first (coverage's configuration,
    which pytest-cov reads as pytest starts): recorded as the tests' reads are."""
    for path in paths:
        _opened(os.path.abspath(path), "r", None)


def _links_along(full: str) -> list[str]:
    """The folders of an active run's work tree along the path ``full`` that are symbolic
    links (``data`` of ``data/x.json``)."""
    out = []
    for a in _RUNS:
        top = a.run.workdir
        if not inside(full, top) or full == top:
            continue
        here = top
        for part in os.path.relpath(full, top).split(os.sep)[:-1]:
            here = os.path.join(here, part)
            if os.path.islink(here):
                out.append(here)
    return out


def _read_by_site() -> bool:
    """Whether the file being opened is opened by ``site`` to run its lines (``addpackage``, a
    few frames above this hook)."""
    frame: FrameType | None = sys._getframe(2)
    for _ in range(3):
        if frame is None:
            return False
        if frame.f_code.co_name == "addpackage" and frame.f_globals.get("__name__") == "site":
            return True
        frame = frame.f_back
    return False


def _path_file(path: str) -> None:
    """A ``.pth`` file opened to read (by ``site``, for a folder ``site.addsitedir`` adds): its
    lines put folders on the import path and its ``import`` lines run as code. One of the work
    tree is code the tests ran, judged as a module's source is (the tree's blob, ignored,
    hidden from git); an installed one (a virtual environment's) is the installer's."""
    full = os.path.abspath(path)
    real = _where(full)
    if any(inside(real, a.run.workdir) and not installed(real) for a in _RUNS):
        try:
            with io.open(real, "rb") as fh:
                data = fh.read()
        except OSError:
            return
        # each text site runs, once (not once a path: read as data first, or changed since)
        blob = blob_of(data)
        if (real, blob) not in _PTH_RUN:
            _PTH_RUN.add((real, blob))
            record(Load(real, blob, "", SOURCE, _made(real)))


_PTH_RUN: set[tuple[str, str]] = set()  # the .pth files site ran, and the blob of each text


_SEEN_FOLDERS: set[str] = set()  # the folders written into or listed, once each
_LISTED: set[str] = set()  # the folders the tests listed, once each


def _used(folder: str, listed: bool = False) -> None:
    """A folder of the work tree that the tests used (wrote a file into, made a folder in, or
    ``listed`` it or the folder holding it): recorded (``FOLDER``) when it holds no file
    (``listed``: nothing at all) and was there before the run began, as ``NEW`` when it is
    newer than that."""
    if folder in _SEEN_FOLDERS:
        return
    _SEEN_FOLDERS.add(folder)
    if not any(inside(folder, a.run.workdir) for a in _RUNS) or installed(folder):
        return
    parts = folder.split(os.sep)
    if ".git" in parts or "__pycache__" in parts:
        return
    try:
        st = os.stat(folder)
    except OSError:
        return
    if st.st_mtime_ns >= _began():
        # made (or an entry added or removed) since the run began: the run's doing, by a
        # process that is no Python one perhaps (`mkdir -p` in a shell); not a chmod's
        record(Load(folder, "", "", NEW))
    elif _holds_nothing(folder) if listed else holds_no_file(folder):
        # as the tests found it, to tell one an earlier run left (``madefolders``)
        record(Load(folder, "", "", FOLDER, folder_stamp(st)))


def _listed(folder: str) -> None:
    """A folder the tests listed: it, and each folder it holds, used as the listing shows it."""
    _LISTED.add(folder)
    if not any(inside(folder, a.run.workdir) for a in _RUNS):
        return
    try:
        with os.scandir(folder) as listing:
            held = [e.path for e in listing if e.is_dir(follow_symlinks=False)]
    except OSError:
        return
    # a listing shows what a folder holds: one holding nothing at all counts (not one holding
    # bytecode alone, as `git stash` or `reset --hard` leave a package's folder: most listings
    # look for files, and a clean clone differs there in a folder nobody asks for)
    for path in [folder, *held]:
        if not path.endswith(f"{os.sep}__pycache__"):
            _used(path, listed=True)


def _made_folder(folder: str) -> None:
    """A folder a process of the run made (``MKDIR``); a plain mkdir needs the folder above
    it, which is then used as a file written into it uses it."""
    if any(inside(folder, a.run.workdir) for a in _RUNS) and not installed(folder):
        # asked to make where it is there already (makedirs(exist_ok=True)): this run makes it
        # where it is missing, as a clean clone's does; no later run's, for that (``THERE``)
        record(Load(folder, "", "", MKDIR, THERE if os.path.isdir(folder) else ""))
        if not _makes_parents():
            _used(os.path.dirname(folder))


def _makes_parents() -> bool:
    """Whether the os.mkdir being made is one of ``os.makedirs`` or ``Path.mkdir(parents=
    True)``, which make the folders above too where they are missing."""
    frame: FrameType | None = sys._getframe(4)  # os.mkdir's caller (past these, _audit)
    if frame is None:
        return False
    module, function = frame.f_globals.get("__name__"), frame.f_code.co_name
    if module == "os" and function == "makedirs":
        return True
    return module == "pathlib" and function == "mkdir" and bool(frame.f_locals.get("parents"))


def folder_stamp(st: os.stat_result) -> str:
    """What tells a folder apart from one made again in its place, or changed since."""
    return f"{st.st_ino}:{st.st_ctime_ns}"


def _holds_nothing(folder: str) -> bool:
    try:
        with os.scandir(folder) as listing:
            return next(listing, None) is None
    except OSError:
        return False


def holds_no_file(folder: str) -> bool:
    """Whether ``folder`` holds no file (nor a link), in it or below it (bytecode caches
    aside); False when it cannot be read or is no folder."""
    try:
        with os.scandir(folder) as listing:
            for entry in listing:
                if not entry.is_dir(follow_symlinks=False):
                    return False
                if entry.name != "__pycache__" and not holds_no_file(entry.path):
                    return False
    except OSError:
        return False
    return True


_CODE_IN_TREE: dict[str, bool] = {}  # a code object's file -> whether it is the work tree's


def _the_tests_listing() -> bool:
    """Whether the tests asked for a listing: code of the work tree (a test, a conftest, the
    project's module) is on the stack, directly or through a library it calls, and neither
    the import system's finders nor genstamp made it. pytest's collection, coverage's search
    for files it did not run and other installed code on their own are the environment's."""
    frame: FrameType | None = sys._getframe(3)  # os.listdir's caller (past _hook, _audit)
    while frame is not None:
        module = str(frame.f_globals.get("__name__", ""))
        if module.startswith(("importlib._bootstrap", "_frozen_importlib", "genstamp.")):
            return False
        name = frame.f_code.co_filename
        mine = _CODE_IN_TREE.get(name)
        if mine is None:
            where = os.path.abspath(name)
            mine = _CODE_IN_TREE[name] = not name.startswith("<") and (
                any(inside(where, a.run.workdir) for a in _RUNS) and not installed(where)
            )
        if mine:
            return True
        frame = frame.f_back
    return False


_WRITTEN: set[str] = set()  # the paths of a work tree this process opened to write
_TOUCHED: set[str] = set()  # ... and set the times of (os.utime, Path.touch)


def _within(paths: set[str], name: str) -> None:
    full = os.path.abspath(name)
    if any(inside(full, a.run.workdir) for a in _RUNS):
        paths.add(full)


def _written_in_the_run(full: str, where: str, st: os.stat_result) -> bool:
    """Whether the bytes of the file opened as ``full`` (at ``where``) were written after the
    run began: not only its mode set (a chmod moves its change time alone), nor only its times
    (a touch, here, of a file this process never wrote)."""
    began = _began()
    if st.st_ctime_ns < began or st.st_mtime_ns < began:
        return False
    if {full, where} & _TOUCHED:
        return bool({full, where} & _WRITTEN)
    return True


def _installed_read(path: str) -> None:
    """A data file of an installed copy of one of the checkout's import roots (``pip
    install .``: ``site-packages/pkg/cfg.json``), opened to read: recorded with the blob of
    its bytes, which the audit compares with the tree's file."""
    rel = site_relative(path)
    if rel is None or "/" not in rel:
        return
    top = rel.partition("/")[0]
    if not any(top in a.run.roots for a in _RUNS) or "__pycache__" in rel.split("/"):
        return
    try:
        st = os.stat(path)
        if _written_in_the_run(path, path, st):
            return  # installed during the run: the tests' own
        blob = ""  # too large to hash in the tests' time: recorded, not compared
        if st.st_size <= _HASHED_MOST:
            with io.open(path, "rb") as fh:
                blob = blob_of(fh.read())
    except OSError:
        return
    record(Load(path, blob, top, READ))


_HASHED_MOST = 16 << 20  # bytes of an installed data file hashed as the tests open it


_PREFIX: "list[tuple[str, tuple[str, ...]]]" = []  # environments: each folder, its libraries


def _environment_file(path: str) -> bool:
    """Whether ``path`` lies in this process's Python environment (``sys.prefix``), or in
    the user's base (``pip install --user``), outside its library folders: a script of its
    ``bin/``, a data file of its ``share/``."""
    if not _PREFIX:
        bases = [sys.prefix]
        site = sys.modules.get("site")
        if getattr(site, "ENABLE_USER_SITE", False) and getattr(site, "USER_BASE", None):
            bases.append(site.USER_BASE)  # type: ignore[union-attr]
        for base in bases:
            top = os.path.join(os.path.realpath(base), "")
            _PREFIX.append((top, tuple(os.path.join(top, f, "") for f in _LIBRARIES)))
    return any(path.startswith(top) and not path.startswith(libs) for top, libs in _PREFIX)


_LIBRARIES = ("lib", "lib64", "include")


def _spawned(event: str, args: "tuple[Any, ...]") -> None:
    """A program a process starts (``subprocess.Popen``, ``os.exec*``, ``os.posix_spawn``,
    ``os.system``): one of its environment's (a shell script an install copied into ``bin/``)
    is recorded as run, as a Python script records itself when it runs; and so is the first
    word of a command a shell is given (``shell=True``, ``os.system``, ``sh -c "…"``)."""
    env: object = None
    cwd: object = None
    programs: list[object]
    if event == "os.system":
        programs = list(_shell_words(args[0]))
    else:
        given = args[1]
        if isinstance(given, (str, bytes, os.PathLike)):
            argv: list[Any] = [given]
        else:
            argv = list(given) if isinstance(given, (list, tuple)) else []
        if event == "subprocess.Popen":
            cwd, env = args[2], args[3]
        else:  # os.exec: (path, args, env); os.posix_spawn: (path, argv, env)
            env = args[2]
        programs = [args[0] if args[0] is not None else (argv[0] if argv else None)]
        shell = argv[0] if argv else None
        if len(argv) >= 3 and argv[1] == "-c" and isinstance(shell, (str, bytes, os.PathLike)):
            if os.path.basename(os.fsdecode(os.fspath(shell))) in _SHELLS:
                programs += _shell_words(argv[2])
    for program in programs:
        _started(program, env, cwd)


_SHELLS = frozenset({"sh", "bash", "dash", "zsh", "ksh"})


def _shell_words(command: object) -> "list[str]":
    """The program a shell command line starts first (after any ``NAME=value`` words)."""
    if isinstance(command, bytes):
        command = os.fsdecode(command)
    if not isinstance(command, str):
        return []
    import shlex

    try:
        words = shlex.split(command)
    except ValueError:
        return []
    while words and words[0].partition("=")[0].isidentifier() and "=" in words[0]:
        del words[0]  # FOO=1 calc-add: an assignment for the command that follows
    return words[:1]


def _started(program: object, env: object, cwd: object) -> None:
    if not isinstance(program, (str, bytes, os.PathLike)):
        return
    name = os.fsdecode(os.fspath(program))
    base = os.fsdecode(os.fspath(cwd)) if isinstance(cwd, (str, bytes, os.PathLike)) else ""
    if os.sep not in name:  # found on PATH, as the exec* and spawn families look it up
        path = env.get("PATH") if isinstance(env, dict) else os.environ.get("PATH")
        for folder in (path if isinstance(path, str) else os.defpath).split(os.pathsep):
            found = os.path.join(base, folder or ".", name)
            if os.path.isfile(found) and os.access(found, os.X_OK):
                name = found
                break
        else:
            return
    full = os.path.abspath(os.path.join(base, name))
    for where in dict.fromkeys((full, _where(full))):
        if _environment_file(where):
            _copied(where)
        elif where not in _PROGRAMS and any(
            inside(where, a.run.workdir) and not installed(where) for a in _RUNS
        ):
            _PROGRAMS.add(where)
            try:
                st = os.stat(where)
            except OSError:
                continue
            if st.st_mode & 0o170000 == 0o100000 and st.st_mode & 0o111:
                record(Load(where, "", "", EXECUTED, ""))


_PROGRAMS: set[str] = set()  # the work tree's files this process started as programs


def _copied(path: str) -> None:
    """The environment's file ``path``, read or run: recorded with its modification time (the
    audit reads it at the session's end, if it is the project's, and that time still holds),
    unless written since the run began (a test's own install)."""
    if path in _COPIES:
        return
    _COPIES.add(path)
    try:
        st = os.stat(path)
    except OSError:
        return
    if not _written_in_the_run(path, path, st):
        record(Load(path, "", "", COPIED, str(st.st_mtime_ns)))


_COPIES: "set[str]" = set()  # the environment's files recorded (once each, read or run)


def _began() -> int:
    """When the earliest active run began (its run file was written); 0 when unknown."""
    found = []
    for a in _RUNS:
        try:
            found.append(os.stat(os.path.join(a.run.folder, RUN_FILE)).st_mtime_ns)
        except OSError:
            found.append(0)
    return min(found, default=0)


def _audit(
    event: str, args: "tuple[Any, ...]", target: "list[Any]" = _TARGET, events: "Any" = _EVENTS
) -> None:
    if event in events:
        hook = target[0]
        if hook is not None:
            hook(event, args)


# The audit hook itself: ``_audit``'s code with no globals, reaching ``_hook`` only through
# ``_TARGET``. The interpreter holds an audit hook until its very end; one that held this
# module's globals would hold every module reachable from them through the interpreter's
# finalisation, which then clears them one at a time (measured: 60-110 ms more at the exit of
# a pytest process of 1,000 tests). Once no run is active, the hook holds nothing. A followed
# child's run stays active to its very end (code that its exit handlers or its finalisation
# run is recorded): it pays that cost, for the few modules it holds.
_function: "Any" = type(_audit)
_AUDIT = _function(_audit.__code__, {}, "genstamp_audit", _audit.__defaults__)


def _create_module(self: "Any", spec: "Any", original: "Any" = None, target: "Any" = None) -> "Any":
    # ExtensionFileLoader.create_module while genstamp is loaded: the original's module, and
    # the load told to ``target[1]``; with no globals (as ``_AUDIT``), nothing held once done
    module = original(self, spec)
    told = target[1]
    if told is not None:
        told(spec)
    return module


def _extension_created(spec: "ModuleSpec") -> None:
    """An extension module loaded, whatever found it (``sys.path``, a folder a conftest added,
    ``spec_from_file_location``): recorded where it concerns a run (``record``: one of the
    work tree, or of the checkout's import roots wherever it lies)."""
    if getattr(_STATE, "busy", False) or not isinstance(spec.origin, str):
        return
    try:
        real = real_path(spec.origin)
        record(Load(real, "", spec.name, EXTENSION, str(os.stat(real).st_mtime_ns)))
    except Exception:  # never break an import
        pass


def _library(name: str) -> None:
    """A shared library ``ctypes`` loads by path: of the checkout, it is judged as an extension
    module is (built from the native sources now in the tree, or stale). One reached through a
    link in the work tree is judged where the work tree holds it, as code is (``_where``)."""
    real = _where(os.path.abspath(name))
    if any(inside(real, a.run.workdir) and not installed(real) for a in _RUNS):
        try:  # noqa: SIM105 (contextlib costs a child's start-up)
            record(Load(real, "", "", EXTENSION, str(os.stat(real).st_mtime_ns)))
        except OSError:
            pass


_LOADERS = frozenset({"exec_module", "load_module", "_exec", "_load_unlocked"})
_LOADER_DEPTH = 4  # frames from an exec up to the loader's method that holds the module


def _module_held(frame: "FrameType") -> str:
    """The name of the module a loader's frame holds ("" when none)."""
    for value in frame.f_locals.values():
        if isinstance(value, ModuleType) and isinstance(value.__name__, str):
            return value.__name__
    return ""


def _no_file(filename: str) -> bool:
    """Whether code compiled under ``filename`` names no file: ``<string>``, ``<gen x>``, or a
    relative name that names none from here (``"__main__.py"`` for text a test read from
    ``src/pkg/__main__.py``): what runs is the text compiled, as under ``<string>``."""
    return filename.startswith("<") or (
        not os.path.isabs(filename) and not os.path.lexists(filename)
    )


def _pseudo_module(code: CodeType, filename: str) -> bool:
    """Module code compiled under a name of no file (``<gen pkg.mod>``) that a loader runs as
    the body of a module of an import root (a custom finder that reads another clone's text):
    recorded under that name (in ``<…>``), with the blob of the text compiled, for the audit
    to compare with the tree's file of that module. Code that module code runs (an ``exec`` in
    a module's body, a namedtuple's, a loader's helper) is none: only an ``exec`` called by a
    loader's ``exec_module`` (or the import system's own frames) holding the module counts.
    Code whose name does not name that module (``pkg.mod`` or ``pkg/mod``) may be a loader's
    own scratch code or the module's body (a cache of its text run under ``<string>``): it is
    recorded as ``UNNAMED``, its body unless the module's file ran. Whether it was recorded."""
    frame: FrameType | None = sys._getframe(1)
    while frame is not None and (
        frame.f_code.co_filename == __file__ or frame.f_code.co_name == "_call_with_frames_removed"
    ):
        frame = frame.f_back  # this module's own frames (the hook's), importlib's trampoline
    if frame is None or frame.f_code.co_name == "<module>":
        return False  # exec's caller is module code (an exec in a module's body)
    name = ""
    # the loader's exec_module, or a method of its own it called (``self._run(module)``)
    for _ in range(_LOADER_DEPTH):
        if frame is None or frame.f_code.co_name == "<module>":
            return False
        if frame.f_code.co_name in _LOADERS:
            name = _module_held(frame)
            break
        frame = frame.f_back
    if not name or not any(name.partition(".")[0] in a.run.roots for a in _RUNS):
        return False
    named = name in filename or name.replace(".", "/") in filename
    data = None
    for text in reversed(_TEXTS.get(filename, ())):  # the newest text that compiles to it
        # a str compiled reaches the audit hook as its UTF-8 bytes, its coding cookie ignored
        if _compiles_to(code, text) or (
            isinstance(text, bytes) and _compiles_to(code, text.decode("utf-8", "replace"))
        ):
            data = text.encode("utf-8", "surrogateescape") if isinstance(text, str) else text
            break
    blob = blob_of(data) if data is not None else ""
    # as a name of no file (``<…>``): the audit judges it by its text, never as a path
    shown = filename if filename.startswith("<") else f"<{filename}>"
    record(Load(shown, blob, name, SOURCE, "" if named else UNNAMED))
    return True


# The texts last compiled under each name of no file (``_TEXTS_EACH`` of each, the newest last)
_TEXTS: "dict[str, list[str | bytes]]" = {}
_TEXTS_MOST = 64
_TEXTS_EACH = 8


def _keep_text(filename: str, source: object) -> None:
    """Keep the text compiled under ``filename`` (a name of no file), for the code of that name
    a loader runs later: right after, or kept and run again (``importlib.reload``), perhaps
    after other text was compiled under the same name (a loader's ``<string>``)."""
    if isinstance(source, (str, bytes)):
        kept = _TEXTS.pop(filename, [])
        if source in kept:
            kept.remove(source)
        kept.append(source)
        del kept[:-_TEXTS_EACH]
        _TEXTS[filename] = kept
        if len(_TEXTS) > _TEXTS_MOST:
            del _TEXTS[next(iter(_TEXTS))]


def _main_file(path: object) -> None:
    """The script a process runs (``python app.pyc``): CPython reads a compiled one's code
    itself, with no ``exec`` event, so it is judged here as an ``exec`` of that code after the
    file was opened would be (a source script runs through ``exec``, judged there)."""
    if not isinstance(path, str):
        return
    from _frozen_importlib_external import MAGIC_NUMBER

    try:
        if os.stat(path).st_mode & 0o170000 != 0o100000:  # S_ISREG
            return  # a pipe (`python /dev/stdin`): a read here would leave it empty
        with io.open(path, "rb") as fh:
            if fh.read(16)[:4] != MAGIC_NUMBER:
                return  # a source (or no bytecode of this Python: it will not run)
            import marshal

            code = marshal.loads(fh.read())
    except (OSError, ValueError, EOFError, TypeError):
        return
    if isinstance(code, CodeType):
        _STATE.pyc, _STATE.compiled = os.path.abspath(path), None
        _executed(code)


def _executed(code: CodeType) -> None:
    filename = code.co_filename
    compiled = getattr(_STATE, "compiled", None)
    pyc = getattr(_STATE, "pyc", None)
    source = getattr(_STATE, "source", None)
    tree = getattr(_STATE, "tree", False)
    _STATE.compiled = _STATE.pyc = _STATE.source = None
    _STATE.tree = False
    stack: list[list[Any]] = getattr(_STATE, "stack", None) or []
    for i in range(len(stack) - 1, -1, -1):
        if stack[i][0] == filename:  # compiled of this name, before other code ran
            name, data, made_from_tree = stack.pop(i)
            if pyc is None and (compiled is None or compiled[0] != filename):
                compiled, tree = (name, data), made_from_tree
            break
    if _EXPECTED_CODE.pop(id(code), None) is code:
        return
    pending = _expected.get(filename)
    if pending:
        if pending == 1:
            del _expected[filename]
        else:
            _expected[filename] = pending - 1
        return
    if pyc is None and not filename.startswith("<") and _no_file(filename):
        member = os.path.abspath(filename)
        if _archive_stat(member) is not None:
            # a member of an archive a relative entry of the import path names (zipimport:
            # ``vendor/dep.whl/dep.py``; ``runpy.run_path("tool.pyz")``): that file ran
            if compiled is not None and compiled[0] == filename:
                compiled = (member, compiled[1])
            filename = member
    if filename.startswith("<") or (pyc is None and _no_file(filename)):
        _pseudo_module(code, filename)
        return
    if (
        compiled is not None
        and compiled[0] == filename
        and not tree
        and not _by_the_import_system()
        and not compiled_from(code, compiled[1])
    ):
        compiled = None  # compiled here, but what runs is other code: judged as such below
    # (neither compiled nor read from a .pyc: bytecode of an archive's member, whatever file
    # its code names, ``/build/dep.py`` compiled on another machine; asked only then, not of
    # every module a process runs)
    concerns = compiled is None and _may_concern(filename)
    if compiled is None and (concerns or pyc is None):
        found = _bytecode_origin(filename)
        if found is not None and not concerns and not _may_concern(_where(found[0])):
            found = None
        if found is not None and not _of_another_work_tree(filename, found[0]):
            # Sourceless bytecode (a .pyc with no source beside it, a zipimported archive's):
            # its code names the file it was once compiled from, not what ran.
            origin, module = found
            record(Load(_where(origin), "", module, SOURCELESS, origin))
            return
    if compiled is not None and compiled[0] == filename and not filename.endswith(_SOURCES):
        if not _holds(filename, compiled[1]):
            # Code generated from a file that is no Python source (a Jinja2 template, compiled
            # under its name; Mako's, under a name of no file): what the tests used is that
            # file, recorded as they opened it to read, not the code made of it.
            return
    if pyc is not None and compiled is None and not os.path.isfile(filename):
        # Sourceless bytecode compiled elsewhere (its code names a file that is not here): it
        # ran from the .pyc just opened, which is where it is judged.
        placed = _where(pyc)
        if any(inside(placed, a.run.workdir) and not installed(placed) for a in _RUNS):
            record(Load(placed, "", _module_executing(pyc), SOURCELESS, pyc))
            return
        if _may_concern(_where(filename)):
            filename = pyc  # compiled from a file of the work tree not there now: ran outside
    elif pyc is not None and compiled is None:
        named = _where(filename)  # where the bytecode lies is asked only of code that concerns
        if (  # a run (most modules a process runs do not: the standard library, installed ones)
            _may_concern(named)
            and not (_cache_of(pyc, filename) or _cache_of(pyc, named))
            and not _may_concern(_where(pyc))
        ):
            # Bytecode alone outside the work tree whose code names a file of it (compiled
            # there, or under a relative name: py_compile's) ran instead of that file
            if not _of_another_work_tree(filename, pyc):
                filename = pyc
    real = _where(filename)
    if pyc is None and filename in _TEXTS and not os.path.lexists(real):
        # text compiled under a path where no file is (``/elsewhere/mod.py``): what a loader
        # runs from it is judged by that text, as under a name of no file
        if _pseudo_module(code, filename):
            return
    if _environment_file(real):  # a script of the environment's
        _copied(real)
    module = ""
    elsewhere = _kept_clone(real)
    if elsewhere:
        module = _module_executing(filename)
    elif not any(inside(real, a.run.workdir) and not installed(real) for a in _RUNS):
        # Outside the checkout: a module of one of its import roots concerns the run, and so
        # does any code of another git work tree (another clone of this one, perhaps), and a
        # module of a name a folder of the work tree on the import path gives (a test helper).
        plain = not (installed(real) or real.startswith(_SYSTEM) or real.startswith(_OWN))
        if plain or _named_like_a_root(real):
            module = _module_executing(filename)
            if not module and pyc is not None:  # sourceless: the module's file is the .pyc
                module = _module_executing(pyc)
        if not any(module.partition(".")[0] in a.run.roots for a in _RUNS):
            elsewhere = work_tree_of(real)
            here = any(a.run.workdir == elsewhere for a in _RUNS)
            nameless = module in ("", "__main__") or module.startswith("<")
            if plain and not nameless and not here:
                beside = _beside_the_script(real)  # the script's own module, not the tree's
                mine = _tree_module(module) if not beside else ""
                ran = real if os.path.isfile(real) or pyc is None else real_path(pyc)
                if beside and not elsewhere and _from_source(pyc, filename, real):
                    _ran_by_path(compiled, filename, real, module)
                elif beside or _made(ran) == MADE:  # a module the tests wrote is theirs
                    pass
                elif mine:
                    data = _ran_bytes(compiled, filename, real)
                    record(Load(ran, blob_of(data) if data else "", module, SHADOW, mine))
                    if not elsewhere:
                        return
                elif _ENTRIES[3] and not elsewhere:
                    # A name the tree gives nowhere now: had it once? (Code of another git
                    # work tree is judged as another clone's, or a library's: ELSEWHERE.)
                    record(Load(ran, "", module, GONE, os.pathsep.join(_ENTRIES[3])))
            elif plain and nameless and not elsewhere and _from_source(pyc, filename, real):
                _ran_by_path(compiled, filename, real, module)
            if not elsewhere or here:
                return
            module = module or _module_executing(filename)
    if elsewhere:
        data = _ran_bytes(compiled, filename, real)
        record(Load(real, blob_of(data) if data else "", module, ELSEWHERE, elsewhere))
        return
    if compiled is not None and compiled[0] == filename:
        made = _made(real)
        # a module the run made (a copy, a zip in build/): its name, to judge its bytes by
        module = module or (_module_executing(filename) if made else "")
        text: bytes = compiled[1]
        if filename.endswith(_SOURCES) and not _holds(real, text):
            text = _holding_as_text(real, text) or text
        record(Load(real, blob_of(text), module, SOURCE, made))
        return
    if pyc is None and filename.endswith(_SOURCES) and _an_expression(code):
        return  # an expression evaluated under the file's name: no module's body (the file's
        # own module is recorded as it loads)
    data = None
    try:
        with io.open(real, "rb") as fh:
            data = fh.read()
        current = blob_of(data)
    except OSError:
        current = ""
    if pyc is None and data is not None and filename.endswith(_SOURCES):
        # Neither compiled here from bytes of this name nor read from its bytecode: code kept
        # elsewhere (marshal'ed into a cache of a conftest's loader) or compiled from the AST
        # of some text. It is the file's when it is what compiling the file gives, or when an
        # import hook read the file just before compiling (typeguard's, beartype's AST).
        if not (tree and source in (filename, real)) and not compiled_from(code, data):
            record(Load(real, current, module, BYTECODE, NOT_COMPILED))
            return
    if pyc is not None and not (_cache_of(pyc, filename) or _cache_of(pyc, real)):
        # bytecode opened just before, kept elsewhere than the source's cache (a build's .pyc
        # that runpy ran): its code names the source, but nothing checked it against it
        record(Load(_where(pyc), "", module, SOURCELESS, pyc))
        return
    if pyc is not None and not _bytecode_of(pyc, real):
        pyc = None  # another module's cache, read for another reason: compiled some other way
    if pyc is not None:
        if not current:
            record(Load(real_path(pyc), "", module, SOURCELESS, pyc))
            return
        checked, hooked = _run_by_the_import_system()
        record(Load(real, current, module, BYTECODE, _stale_reason(real, pyc, hooked, checked)))
        return
    made = _made(real)
    module = module or (_module_executing(filename) if made else "")
    record(Load(real, current, module, SOURCE, made))


# A BYTECODE load's detail: code that ran under a source's name, compiled from no bytes it has
NOT_COMPILED = "code not compiled from the file (kept from an earlier version, or other text)"
_COMPILED: dict[int, CodeType] = {}  # code objects found to be what their file compiles to
# The compiler flags of every ``__future__`` feature (CPython 3.10-3.13; a test holds it to
# ``__future__``'s): a constant, as importing ``__future__`` when first needed fails in code a
# process runs while it ends (a ``__del__`` at finalisation: no import system), and the load
# would go unrecorded (C25 04).
_FUTURES = 0x1FE0010
# What compiling a file's bytes gave, by (name, bytes, flags, optimisation): code that is not
# the file's own, run again and again under its name, costs one compile of it, not one each.
_MADE: "dict[tuple[str, bytes | str, int, int], CodeType]" = {}
_MADE_KEPT = 8


def _an_expression(code: CodeType) -> bool:
    """Whether ``code`` is an expression's (``compile(..., "eval")``: executing's tests
    evaluate pieces of a test file's syntax tree under the file's name): it returns a value,
    where a module's body returns None. It is no module's code, so it is not judged as one
    (the expression ``None`` alone reads as a module's body: it returns what one returns)."""
    try:
        import dis  # only here: no process pays for it at start-up
    except ImportError:  # the process is ending (no import system): judged as a module's body
        return False

    previous = None
    for ins in dis.get_instructions(code):
        if ins.opname == "RETURN_CONST" and ins.argval is not None:
            return True
        if ins.opname == "RETURN_VALUE" and not (
            previous is not None and previous.opname == "LOAD_CONST" and previous.argval is None
        ):
            return True
        previous = ins
    return False


def compiled_from(code: CodeType, data: "bytes | str", optimize: int = -1) -> bool:
    """Whether compiling ``data`` gives ``code`` (code objects compare by their bytecode,
    constants, names and line table; not by the file name), under the code's own future
    flags and the interpreter's optimisation level (or ``optimize``), as the import system
    compiles."""
    if _COMPILED.get(id(code)) is code:
        return True
    same = _compiles_to(code, data, optimize)
    if same:
        _COMPILED[id(code)] = code  # kept alive: its id names no other code
    return same


def _compiles_to(code: CodeType, data: "bytes | str", optimize: int = -1) -> bool:
    """Whether compiling ``data`` gives ``code`` (``compiled_from``, for any text)."""
    try:
        flags = code.co_flags & _FUTURES
        key = (code.co_filename, data, flags, optimize)
        made = _MADE.get(key)
        if made is None:
            made = compile(data, code.co_filename, "exec", flags, True, optimize)
            while len(_MADE) >= _MADE_KEPT:
                del _MADE[next(iter(_MADE))]
            _MADE[key] = made
        return bool(made == code)
    except Exception:  # SyntaxError, ValueError: what ran is no compilation of the file
        return False


def _by_the_import_system() -> bool:
    """Whether the module code about to run is executed by the import system's own
    ``exec_module`` from the code its own ``get_code`` compiled (``SourceLoader``'s, not one a
    custom loader overrides): that code is what the bytes compiled just before gave."""
    return _import_system_loader() is not None


def _run_by_the_import_system() -> tuple[bool, bool]:
    """(``_by_the_import_system()``, and whether the bytecode about to run is then an AST
    import hook's own compile, which CPython cached for it under the standard name: the hook's
    ``exec_module`` runs it), from one look at the frames."""
    loader = _import_system_loader()
    if loader is None:
        return False, False
    return True, getattr(type(loader), "source_to_code", None) is not _SOURCE_TO_CODE


def _import_system_loader() -> object:
    """The loader whose ``exec_module`` (the import system's) executes the module code about
    to run, when its ``get_code`` is ``SourceLoader``'s; None otherwise. One that compiles in
    a way of its own (an AST import hook overriding ``source_to_code``) has CPython cache its
    compile in ``__pycache__`` under the standard name."""
    try:
        # exec's caller: past this, the asking function, _executed, _hook and _audit
        frame: FrameType | None = sys._getframe(5)
    except ValueError:  # executed from C (a script's own code): no loader's
        return None
    if frame is None or frame.f_code.co_name != "_call_with_frames_removed":
        return None
    frame = frame.f_back
    if frame is None or frame.f_code.co_name != "exec_module":
        return None
    loader = frame.f_locals.get("self")
    if getattr(type(loader), "get_code", None) is not _SOURCE_GET_CODE:
        return None
    return loader


_SOURCE_GET_CODE = SourceFileLoader.get_code  # SourceLoader's, which SourceFileLoader keeps
_SOURCE_TO_CODE = SourceFileLoader.source_to_code


def _beside_the_script(path: str) -> bool:
    """Whether ``path`` lies in the folder of the script this process runs (``python
    tool.py``, which puts that folder first on its path): its modules are the script's own."""
    main = getattr(sys.modules.get("__main__"), "__file__", None)
    return isinstance(main, str) and os.path.dirname(real_path(main)) == os.path.dirname(path)


def _ran_by_path(
    compiled: "tuple[str, bytes] | None", filename: str, real: str, module: str
) -> None:
    """A Python source outside the checkout, in no git work tree and no environment, that ran
    under no name of the tree's (a script run by its path, ``runpy.run_path``, or a module
    beside such a script, from its source or its cached bytecode): its blob, and whether the
    run made it (``_made``), for the audit to ask git whether a commit held those bytes
    (``RAN``). A script of the process's environment (``bin/``) is its installer's."""
    if not _environment_file(real):
        data = _ran_bytes(compiled, filename, real)
        if data:
            record(Load(real, blob_of(data), module, RAN, _made(real)))


def _from_source(pyc: "str | None", filename: str, real: str) -> bool:
    """Whether the code that ran is its source file's: compiled from it, or read from the
    bytecode the import system caches for it (``__pycache__``), not sourceless bytecode."""
    return pyc is None or _cache_of(pyc, filename) or _cache_of(pyc, real)


def _ran_bytes(compiled: "tuple[str, bytes] | None", filename: str, real: str) -> bytes:
    """The bytes the code of ``filename`` ran from, as known: those compiled under its name
    just before, else the file's now (b"" where it cannot be read)."""
    if compiled is not None and compiled[0] == filename:
        return compiled[1]
    return _bytes(real)


def _bytes(path: str) -> bytes:
    try:
        with io.open(path, "rb") as fh:
            return fh.read()
    except OSError:
        return b""


def _tree_module(module: str) -> str:
    """The file of the work tree that ``module`` is, found through an entry of ``sys.path``
    in an active run's work tree (``tests/`` holding ``helpers.py``); "" when none holds it."""
    if not _in_tree_entry(module.partition(".")[0], files=True):
        return ""
    rest = module.replace(".", os.sep)
    for entry in _ENTRIES[3]:
        for name in (rest + ".py", os.path.join(rest, "__init__.py")):
            found = os.path.join(entry, name)
            if os.path.isfile(found):
                return found
    return ""


def _bytecode_of(pyc: str, source: str) -> bool:
    """``pyc`` is named as bytecode of ``source`` (beside it, in ``__pycache__`` or a prefix)."""
    stem = os.path.splitext(os.path.basename(source))[0]
    name = os.path.basename(pyc)
    return name == stem + ".pyc" or name.startswith(stem + ".")


def _cache_of(pyc: str, source: str) -> bool:
    """Whether ``pyc`` lies where bytecode cached for ``source`` lies: its ``__pycache__`` (or
    ``sys.pycache_prefix``'s mirror of it), or genstamp's cache of an active run."""
    try:
        if os.path.dirname(pyc) == os.path.dirname(cache_from_source(source)):
            return True
    except (NotImplementedError, ValueError):
        pass
    return any(a.run.cache_root and inside(pyc, a.run.cache_root) for a in _RUNS)


def _stale_reason(source: str, pyc: str, hooked: bool = False, checked: bool = True) -> str:
    """Why bytecode ``pyc`` that ran for ``source`` is not that source's ("" when it is);
    ``checked``: the import system's own loader ran it, which compares its header with the
    source first (a ``SourcelessFileLoader``, ``runpy.run_path`` or ``marshal`` checks nothing)."""
    try:
        from genstamp import audit  # only when bytecode ran outside genstamp's loader
    except ImportError:  # the process is ending (no import system): it cannot be checked
        return "bytecode run as the process ended, not checked against its source"
    for a in _RUNS:
        if a.run.cache_root and inside(pyc, a.run.cache_root):
            return ""
    # an installed module's bytecode is the installer's, whenever it was written (a virtual
    # environment inside the work tree too): judged by its source alone, not by the generation
    mine = [a.run for a in _RUNS if inside(source, a.run.workdir) and not installed(source)]
    gen = next((r.generation_ns for r in mine), None)
    root = next((r.workdir for r in mine), "/")
    return audit._stale_cache(source, pyc, root, gen, transformed=hooked, checked=checked) or ""


def _where(path: str) -> str:
    """The file ``path`` as the runs judge it: its real path, unless that lies outside every
    run's work tree while ``path`` itself lies inside one (reached through a symbolic link in
    the work tree, to a folder elsewhere): it is then judged where the work tree holds it."""
    real = real_path(path)
    if not any(inside(real, a.run.workdir) for a in _RUNS):
        linked = os.path.abspath(path)
        if any(inside(linked, a.run.workdir) and not installed(linked) for a in _RUNS):
            return linked
    return real


def real_path(path: str) -> str:
    """``os.path.realpath(path)``, each folder resolved once while the runs are active (a
    child resolves the same few folders for every module it loads)."""
    real = _real_cache.get(path)
    if real is None:
        real = _real_cache[path] = _RESOLVE(path)
    return real


class RealPaths:
    """``os.path.realpath`` for many files in few folders: each folder resolved once, from its
    parent's resolved path and one ``lstat`` (folders share most of their leading parts)."""

    def __init__(self) -> None:
        self._folders: dict[str, str] = {}

    def forget(self) -> None:
        self._folders.clear()

    def __call__(self, path: str) -> str:
        if ".." in path.split(os.sep):
            return os.path.realpath(path)  # ".." applies after a link is followed
        head, tail = os.path.split(os.path.abspath(path))
        if not tail:
            return head  # the root
        full = os.path.join(self._folder(head), tail)
        return os.path.realpath(full) if os.path.islink(full) else full

    def _folder(self, folder: str) -> str:
        known = self._folders.get(folder)
        if known is None:
            head, tail = os.path.split(folder)
            if not tail:
                known = os.path.realpath(folder)
            else:
                full = os.path.join(self._folder(head), tail)
                known = os.path.realpath(full) if os.path.islink(full) else full
            self._folders[folder] = known
        return known


_RESOLVE = RealPaths()


class RootFinder:
    """First on ``sys.meta_path``: for a module of the checkout's import roots, asks the rest
    of the meta path where it comes from, and records namespace packages and extension modules
    (whose loading executes no module code for the audit hook to see)."""

    _busy = _thread._local()

    def find_spec(
        self, name: str, path: "Sequence[str] | None", target: "ModuleType | None" = None
    ) -> "ModuleSpec | None":
        top = name.partition(".")[0]
        if getattr(self._busy, "on", False):
            return None
        if not any(top in a.run.roots for a in _RUNS):
            # a folder of the work tree that the tree defines no root for (empty, or holding
            # only ignored files) imports as a namespace package: one a clean clone lacks; so
            # does one inside a package of the work tree that is no root (`extras.sub`)
            if not (_in_tree_entry(name) if path is None else _in_tree_package(path)):
                return None
        self._busy.on = True
        try:
            spec = _find_rest(self, name, path, target)
        finally:
            self._busy.on = False
        if spec is not None:
            _spec_found(name, spec)
        elif path is not None and "." in name:
            _not_found(name, path)
        return spec

    def invalidate_caches(self) -> None:
        pass


# sys.path as last seen, whether it holds relative entries, the folder they were taken in, and
# its entries in a work tree
_ENTRIES: "list[Any]" = [(), False, "", None]


def cwd() -> "str | None":
    """The folder the process is in; None when it was removed (a tool left a temporary
    folder while in it): ``os.getcwd`` raises then."""
    try:
        return os.getcwd()
    except OSError:
        return None


def absolute(path: str) -> "str | None":
    """``path`` ("" the current folder) from the folder the process is in, where it is
    relative; None when that folder was removed (nothing is found there, as for the path
    finder)."""
    if os.path.isabs(path):
        return path
    here = cwd()
    return None if here is None else os.path.join(here, path)


def _in_tree_entry(name: str, files: bool = False) -> bool:
    """Whether an entry of ``sys.path`` in an active run's work tree holds ``name`` (as the
    path finder's listing of it has it, else as a folder; with ``files``, ``name.py`` too)."""
    seen = tuple(sys.path)
    if seen != _ENTRIES[0]:
        relative = any(not os.path.isabs(e) for e in seen if isinstance(e, str))
        _ENTRIES[:] = [seen, relative, "", None]
    # "" and relative entries: the folder the process is in now (none when it was removed:
    # then they find nothing, as for the path finder)
    here = cwd() if _ENTRIES[1] else ""
    if here != _ENTRIES[2] or _ENTRIES[3] is None:
        full = dict.fromkeys(
            os.path.abspath(e)
            for e in seen
            if isinstance(e, str) and (here is not None or os.path.isabs(e))
        )
        mine = [e for e in full if any(inside(e, a.run.workdir) for a in _RUNS)]
        _ENTRIES[2:] = [here, [e for e in mine if not installed(e)]]  # no .venv's site-packages
    for entry in _ENTRIES[3]:
        listed = getattr(sys.path_importer_cache.get(entry), "_path_cache", None)
        if listed:  # FileFinder's listing of the folder: no system call
            if name in listed or (files and name + ".py" in listed):
                return True
        elif os.path.isdir(os.path.join(entry, name)) or (
            files and os.path.isfile(os.path.join(entry, name + ".py"))
        ):
            return True
    return False


def _in_tree_package(path: "Sequence[str]") -> bool:
    """Whether a package's search locations (a submodule's ``path``) lie in a work tree."""
    for location in path:
        if isinstance(location, str) and any(inside(location, a.run.workdir) for a in _RUNS):
            if not installed(location):
                return True
    return False


def _find_rest(
    me: RootFinder, name: str, path: "Sequence[str] | None", target: "ModuleType | None"
) -> "ModuleSpec | None":
    for finder in list(sys.meta_path):
        if finder is me or isinstance(finder, RootFinder):
            continue
        find = getattr(finder, "find_spec", None)
        if find is None:
            continue
        spec = find(name, path, target)
        if spec is not None:
            return spec  # type: ignore[no-any-return]
    return None


def _not_found(name: str, path: "Sequence[str]") -> None:
    """A submodule of an import root that no finder found, its package an installed copy: in
    site-packages, or in the link tree of setuptools' strict editable install
    (``build/__editable__.calc-0.1-py3-none-any/calc``, a link to each file of the tree it
    held at the install, and none to a file added since)."""
    for location in path:
        if isinstance(location, str) and (installed(location) or _LINK_TREE in location):
            record(Load(real_path(location), "", name, MISSING, ""))
            return


_LINK_TREE = f"{os.sep}__editable__."


def _spec_found(name: str, spec: "ModuleSpec") -> None:
    if type(spec.loader) is SourceFileLoader and spec.origin and GUARDED:
        real = real_path(spec.origin)
        for workdir, guarded in GUARDED.items():
            if inside(real, workdir) and not installed(real):
                spec.loader = guarded(name, spec.origin)
                break
    if isinstance(spec.loader, ExtensionFileLoader):
        return  # recorded as its loader creates it (``_extension_created``)
    if spec.origin in (None, "namespace") and spec.submodule_search_locations:
        for location in spec.submodule_search_locations:
            # Outside the checkout it is foreign; inside, a folder the tested tree must hold
            # (one left behind holding no tracked file is in no clean clone). Not a name of
            # no folder: setuptools' editable finder puts a key for its path hook there
            # (``__editable__.NAME.finder.__path_hook__``), which no import reads files from.
            if isinstance(location, str) and os.path.isdir(location):
                record(Load(real_path(location), "", name, NAMESPACE))


STRANGERS = "strangers.txt"  # in a run's folder: the processes that found another genstamp


def follow(owner: int, started_at: str, folder: str, home: str) -> None:
    """What a process does at start-up while the run in ``folder`` is open (the ``.pth`` line
    of ``child.pth_line``, written by the genstamp in ``home``): record into the runs that
    ``GENSTAMP_RUN`` names (``start``), or, started without the variable, ``adopt`` the run.
    A genstamp other than ``home``'s (another copy first on the process's import path) notes
    itself in the run's folder: it records by its own rules, which the run cannot vouch for."""
    OWNERS[folder] = owner
    try:
        runs = os.environ.get(RUN_ENV)
        if runs:
            here = os.path.dirname(os.path.abspath(__file__))
            if here != home and folder in runs.split(os.pathsep) and not _same(here, home):
                with io.open(os.path.join(folder, STRANGERS), "a", encoding="ascii") as fh:
                    fh.write(f"{os.getpid()} {here!a}\n")
            start()
        elif runs is None:
            adopt(owner, started_at, folder)
    except Exception:  # never break the user's process
        pass


OWNERS: dict[str, int] = {}  # each open run's folder -> the pid of the process that opened it


def _same(a: str, b: str) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False


def adopt(owner: int, started_at: str, folder: str) -> None:
    """In a process started without ``GENSTAMP_RUN`` while the run in ``folder`` is open (its
    ``.pth`` hook): a test gave its child an environment of its own. The process is followed
    as one started with the variable is when it descends from ``owner``, the process that
    opened the run and started at ``started_at`` (``started``; a pid is reused), its
    environment left as the test gave it."""
    try:
        if _descends_from(owner, started_at):
            start([folder])
    except Exception:  # never break the user's process
        pass


def _stat(pid: int) -> "list[bytes]":
    """The fields of ``/proc/PID/stat`` after the command's name (which may hold spaces and
    parentheses): the state first, then the parent's pid, ...; [] where it cannot be read."""
    try:
        with io.open(f"/proc/{pid}/stat", "rb") as fh:
            return fh.read().rpartition(b")")[2].split()
    except OSError:
        return []


def started(pid: int) -> str:
    """When process ``pid`` started (clock ticks since boot), "" where it cannot be told: with
    the pid it names one process, where a pid alone may name a later one."""
    fields = _stat(pid)
    return fields[19].decode("ascii", "replace") if len(fields) > 19 else ""


def _descends_from(owner: int, started_at: str) -> bool:
    """Whether ``owner``, started at ``started_at``, is an ancestor of this process: its parent,
    or (where ``/proc`` tells a process's parent) any process above it."""
    pid = os.getppid()
    for _ in range(64):
        if pid == owner:
            return not started_at or started(pid) == started_at
        if pid <= 1:
            return False
        fields = _stat(pid)
        if len(fields) < 2 or not fields[1].isdigit():
            return False
        pid = int(fields[1])
    return False


def start(folders: "Sequence[str] | None" = None) -> None:
    """In a process started by a run's test (the ``.pth`` hook ``child`` writes): record into
    every run in ``folders`` (default: those ``GENSTAMP_RUN`` names), importing the checkout
    through genstamp's loader."""
    try:
        if folders is None:
            folders = os.environ.get(RUN_ENV, "").split(os.pathsep)
        for folder in folders:
            if not folder or active(folder):
                continue
            run = read_run(folder)
            if run is None:
                continue
            if run.cache_root is not None:
                from genstamp import loader

                loader.install_loader(run.workdir, os.path.join(run.cache_root, loader.COMPILED))
            activate(run)
    except Exception:  # never break the user's process
        pass
