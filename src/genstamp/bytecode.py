"""Python bytecode as genstamp speaks of it: where CPython keeps it, what its files are named,
and what a pyc's header (PEP 552) says about the source it was compiled from.

Pure: no I/O but what a caller hands in (names, bytes), and the four first bytes of a file
``holds_bytecode`` reads.

PYTEST_DONT_REWRITE: a run's child processes import this module at start-up, before pytest
would rewrite it (it asserts nothing)
"""

import _imp

# importlib.util's MAGIC_NUMBER and source_hash, from the frozen module every process already
# holds: importing importlib.util (with contextlib and functools) costs each child of a run.
from _frozen_importlib_external import MAGIC_NUMBER

_RAW_MAGIC_NUMBER = int.from_bytes(MAGIC_NUMBER, "little")  # as importlib defines it

TYPE_CHECKING = False  # not typing's: a child process of a run imports this module at start-up
if TYPE_CHECKING:
    from typing import NamedTuple

PYCACHE = "__pycache__"
SUFFIXES = (".pyc", ".pyo")
HEADER_SIZE = 16  # magic, flags, then a source hash or the source's mtime and size

_HASH_BASED = 0b01
_CHECK_SOURCE = 0b10
CHECKED_HASH_FLAGS = (_HASH_BASED | _CHECK_SOURCE).to_bytes(4, "little")


def is_bytecode_path(path: str) -> bool:
    """A ``/``-separated path that is bytecode or lies in a ``__pycache__`` (git's view)."""
    name = path.rstrip("/").rsplit("/", 1)[-1]
    return name == PYCACHE or name.endswith(SUFFIXES) or f"/{PYCACHE}/" in f"/{path}"


def is_bytecode_file(name: str) -> bool:
    """A file name inside a ``__pycache__`` that is bytecode, including the
    ``<name>.pyc.<id>`` temporary CPython writes before renaming it (a killed process leaves
    it behind)."""
    if name.endswith(SUFFIXES):
        return True
    head, dot, tail = name.rpartition(".")
    return bool(dot) and tail.isdigit() and head.endswith(".pyc")


def holds_bytecode(path: str) -> bool:
    """Whether the file at ``path`` begins as bytecode does, of any Python (a magic number
    whose last two bytes are ``\\r\\n``): a legacy ``x.pyc`` outside ``__pycache__`` may be
    someone's data file of that name, which is no bytecode to remove or judge."""
    try:
        with open(path, "rb") as fh:
            head = fh.read(4)
    except OSError:
        return False
    return len(head) == 4 and head[2:] == b"\r\n"


def transformed(path: str) -> bool:
    """Whether the bytecode at ``path`` is an import hook's own compile of its source, cached
    under a tag CPython never writes (typeguard's ``mod.cpython-311.opt-typeguard461.pyc``,
    pytest's rewritten test modules): not what ``compile`` makes of the source, but its
    header is checked against the source as CPython checks its own."""
    name = path.replace("\\", "/").rsplit("/", 1)[-1]
    if "-pytest-" in name:
        return True  # pytest's assertion rewriting (``mod.cpython-311-pytest-9.2.0.pyc``)
    tag = name.rpartition(".opt-")[2] if ".opt-" in name else ""
    return bool(tag) and tag.rpartition(".")[0] not in ("1", "2")


if TYPE_CHECKING:

    class Header(NamedTuple):
        """What a pyc's first 16 bytes say (PEP 552)."""

        hash_based: bool
        checked: bool  # hash-based and checked against the source by CPython on every import
        source_hash: bytes  # hash-based only: ``importlib.util.source_hash`` of the source
        mtime: int  # timestamp-based only: the source's mtime (seconds, 32 bits) and size
        size: int

else:  # the same record, without importing typing or collections (see ``records``)
    from genstamp.records import record

    Header = record("Header", "hash_based checked source_hash mtime size", (), __name__)


def parse_header(data: bytes) -> Header | None:
    """The header of pyc ``data`` for this interpreter, or None when it is not one (too short,
    another Python's magic number)."""
    if len(data) < HEADER_SIZE or data[:4] != MAGIC_NUMBER:
        return None
    flags = int.from_bytes(data[4:8], "little")
    if flags & _HASH_BASED:
        return Header(True, bool(flags & _CHECK_SOURCE), data[8:16], 0, 0)
    mtime = int.from_bytes(data[8:12], "little")
    size = int.from_bytes(data[12:16], "little")
    return Header(False, False, b"", mtime, size)


def checked_header(source: bytes) -> bytes:
    """The header of a checked hash-based pyc of ``source``: CPython runs such bytecode only
    when the source hashes to it."""
    return MAGIC_NUMBER + CHECKED_HASH_FLAGS + _imp.source_hash(_RAW_MAGIC_NUMBER, source)


def matches_stat(header: Header, mtime: float, size: int) -> bool:
    """Whether CPython would take a timestamp-based pyc as current for a source of this mtime
    and size (it compares the low 32 bits of each)."""
    return header.mtime == (int(mtime) & 0xFFFFFFFF) and header.size == (size & 0xFFFFFFFF)
