"""The bytecode vocabulary: names and pyc headers, checked against what CPython itself writes."""

from __future__ import annotations

import importlib.util
import py_compile
from pathlib import Path

import pytest

from genstamp import bytecode


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("pkg/__pycache__/m.cpython-311.pyc", True),
        ("pkg/__pycache__", True),
        ("pkg/__pycache__/", True),
        ("m.pyc", True),
        ("m.pyo", True),
        ("pkg/__pycache__/notes.txt", True),  # inside the folder: git should not track it
        ("pkg/m.py", False),
        ("my__pycache__/m.py", False),
        ("m.pyc.d/x", False),
        ("__pycache__.md", False),
    ],
)
def test_is_bytecode_path(path: str, expected: bool) -> None:
    assert bytecode.is_bytecode_path(path) is expected


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("m.cpython-311.pyc", True),
        ("m.pyo", True),
        ("m.cpython-311.pyc.140234", True),  # CPython's temporary, left by a killed process
        ("m.cpython-311.pyc.x1", False),
        ("notes.txt", False),
        ("m.py", False),
    ],
)
def test_is_bytecode_file(name: str, expected: bool) -> None:
    assert bytecode.is_bytecode_file(name) is expected


@pytest.mark.parametrize(
    ("mode", "hash_based", "checked"),
    [
        (py_compile.PycInvalidationMode.TIMESTAMP, False, False),
        (py_compile.PycInvalidationMode.CHECKED_HASH, True, True),
        (py_compile.PycInvalidationMode.UNCHECKED_HASH, True, False),
    ],
)
def test_parse_header_reads_what_cpython_wrote(
    tmp_path: Path, mode: py_compile.PycInvalidationMode, hash_based: bool, checked: bool
) -> None:
    source = tmp_path / "m.py"
    source.write_text("X = 1\n")
    pyc = Path(
        py_compile.compile(str(source), cfile=str(tmp_path / "m.pyc"), invalidation_mode=mode)
    )
    header = bytecode.parse_header(pyc.read_bytes())
    assert header is not None
    assert (header.hash_based, header.checked) == (hash_based, checked)
    st = source.stat()
    if hash_based:
        assert header.source_hash == importlib.util.source_hash(source.read_bytes())
    else:
        assert bytecode.matches_stat(header, st.st_mtime, st.st_size)
        assert not bytecode.matches_stat(header, st.st_mtime, st.st_size + 1)
        assert not bytecode.matches_stat(header, st.st_mtime + 1, st.st_size)


def test_checked_header_is_the_header_cpython_writes(tmp_path: Path) -> None:
    source = tmp_path / "m.py"
    source.write_text("X = 2\n")
    pyc = py_compile.compile(
        str(source),
        cfile=str(tmp_path / "m.pyc"),
        invalidation_mode=py_compile.PycInvalidationMode.CHECKED_HASH,
    )
    data = Path(pyc).read_bytes()
    assert data[: bytecode.HEADER_SIZE] == bytecode.checked_header(source.read_bytes())


@pytest.mark.parametrize("data", [b"", b"short", b"\x00" * 16])
def test_parse_header_refuses_what_is_not_this_pythons_pyc(data: bytes) -> None:
    assert bytecode.parse_header(data) is None
