"""The running genstamp packed as a wheel for a clean environment (``selfwheel``)."""

from __future__ import annotations

import base64
import hashlib
import zipfile
from email.parser import Parser
from importlib import metadata
from pathlib import Path

import genstamp
from genstamp import __version__, selfwheel


def test_the_wheel_holds_the_imported_package_byte_for_byte(tmp_path: Path) -> None:
    wheel = selfwheel.write(tmp_path)
    assert wheel is not None and wheel.name == f"genstamp-{__version__}-py3-none-any.whl"
    top = Path(genstamp.__file__).resolve().parent
    with zipfile.ZipFile(wheel) as zf:
        names = set(zf.namelist())
        package = {n for n in names if n.startswith("genstamp/")}
        on_disk = {
            f"genstamp/{p.relative_to(top).as_posix()}"
            for p in top.rglob("*")
            if p.is_file() and "__pycache__" not in p.parts and not p.name.startswith(".")
        }
        assert package == on_disk and "genstamp/py.typed" in package
        for name in package:
            assert zf.read(name) == (top / name.removeprefix("genstamp/")).read_bytes()
        info = f"genstamp-{__version__}.dist-info"
        record = zf.read(f"{info}/RECORD").decode().splitlines()
        listed = {}
        for line in record:
            name, digest, size = line.rsplit(",", 2)
            listed[name] = (digest, size)
        assert set(listed) == names
        for name, (digest, size) in listed.items():
            if name == f"{info}/RECORD":
                assert (digest, size) == ("", "")
                continue
            data = zf.read(name)
            want = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=")
            assert digest == f"sha256={want.decode()}" and size == str(len(data))
        meta = Parser().parsestr(zf.read(f"{info}/METADATA").decode())
        installed = metadata.metadata("genstamp")
        assert meta["Name"] == "genstamp" and meta["Version"] == __version__
        assert meta.get_all("Requires-Dist") == installed.get_all("Requires-Dist")
        points = zf.read(f"{info}/entry_points.txt").decode()
        assert "[pytest11]" in points and "genstamp.pytest_plugin" in points
        assert "Root-Is-Purelib: true" in zf.read(f"{info}/WHEEL").decode()


def test_bytecode_and_an_editors_lock_link_stay_out(tmp_path: Path) -> None:
    """Every file below the package's folder (data, a subpackage), but its bytecode caches and
    dot names (`.#rules.py`, an editor's dangling lock link)."""
    top = tmp_path / "genstamp"
    (top / "__pycache__").mkdir(parents=True)
    (top / "sub").mkdir()
    for rel in ("__init__.py", "rules.py", "py.typed", "sub/__init__.py", "sub/table.json"):
        (top / rel).write_text("x")
    (top / "__pycache__" / "rules.cpython-311.pyc").write_bytes(b"pyc")
    (top / "stray.pyc").write_bytes(b"pyc")
    (top / ".#rules.py").symlink_to("root@host.123:1")
    (top / ".hidden").write_text("x")
    names = [name for name, _ in selfwheel.package_files(top)]
    assert names == [
        "genstamp/__init__.py",
        "genstamp/py.typed",
        "genstamp/rules.py",
        "genstamp/sub/__init__.py",
        "genstamp/sub/table.json",
    ]


def test_the_same_files_make_the_same_wheel(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    first, second = selfwheel.write(tmp_path / "a"), selfwheel.write(tmp_path / "b")
    assert first is not None and second is not None
    assert first.read_bytes() == second.read_bytes()
