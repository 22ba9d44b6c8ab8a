"""The running genstamp packed as a wheel for a clean environment (``selfwheel``)."""

from __future__ import annotations

import base64
import csv
import hashlib
import io
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile
from email.parser import Parser
from importlib import metadata
from pathlib import Path

import pytest
from conftest import subprocess_env

import genstamp
from genstamp import __version__, selfwheel
from genstamp.errors import GenstampError


def test_the_wheel_holds_the_imported_package_byte_for_byte(tmp_path: Path) -> None:
    wheel = selfwheel.write(tmp_path)
    assert wheel.name == f"genstamp-{__version__}-py3-none-any.whl"
    top = Path(genstamp.__file__).resolve().parent
    with zipfile.ZipFile(wheel) as zf:
        names = set(zf.namelist())
        package = {n for n in names if n.startswith("genstamp/")}
        on_disk = {
            f"genstamp/{p.relative_to(top).as_posix()}"
            for p in top.rglob("*")
            if p.is_file()
            and "__pycache__" not in p.parts
            and not p.name.startswith(".")
            and (p.suffix == ".py" or p.name == "py.typed")
        }
        assert package == on_disk and "genstamp/py.typed" in package
        for name in package:
            assert zf.read(name) == (top / name.removeprefix("genstamp/")).read_bytes()
        info = f"genstamp-{__version__}.dist-info"
        rows = csv.reader(io.StringIO(zf.read(f"{info}/RECORD").decode()))
        listed = {name: (digest, size) for name, digest, size in rows}
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


def test_the_modules_and_py_typed_alone(tmp_path: Path) -> None:
    """What the build ships, in every folder below the package: its modules and ``py.typed``;
    not its bytecode caches, nor an editor's files beside them (`.#rules.py`, a dangling lock
    link; `notes, v2.txt`, whose comma a RECORD written by hand would split)."""
    top = tmp_path / "genstamp"
    (top / "__pycache__").mkdir(parents=True)
    (top / "sub").mkdir()
    for rel in ("__init__.py", "rules.py", "py.typed", "sub/__init__.py", "sub/table.json"):
        (top / rel).write_text("x")
    (top / "__pycache__" / "rules.cpython-311.pyc").write_bytes(b"pyc")
    (top / "stray.pyc").write_bytes(b"pyc")
    (top / ".#rules.py").symlink_to("root@host.123:1")
    (top / "notes, v2.txt").write_text("x")
    (top / "rules.py~").write_text("x")
    names = [name for name, _ in selfwheel.package_files(top)]
    assert names == [
        "genstamp/__init__.py",
        "genstamp/py.typed",
        "genstamp/rules.py",
        "genstamp/sub/__init__.py",
    ]


def test_a_local_version_keeps_its_plus_and_installs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A fork's or a distribution's build, ``0.2.0+corp.1``: the wheel's name keeps the ``+``
    (PEP 427 escapes ``-`` alone), and uv installs it."""
    monkeypatch.setattr(selfwheel, "__version__", "0.2.0+corp.1")
    wheel = selfwheel.write(tmp_path)
    assert wheel.name == "genstamp-0.2.0+corp.1-py3-none-any.whl"
    with zipfile.ZipFile(wheel) as zf:
        assert "genstamp-0.2.0+corp.1.dist-info/METADATA" in zf.namelist()
    uv = shutil.which("uv", path=os.path.dirname(sys.executable)) or shutil.which("uv")
    assert uv is not None
    env = subprocess_env()
    made = subprocess.run([uv, "venv", "-q", str(tmp_path / "v")], env=env, capture_output=True)
    assert made.returncode == 0, made.stderr
    python = str(tmp_path / "v" / "bin" / "python")
    done = subprocess.run(
        [uv, "pip", "install", "-q", "--python", python, "--no-deps", str(wheel)],
        env=env,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    shown = subprocess.run(
        [python, "-c", "from importlib import metadata; print(metadata.version('genstamp'))"],
        capture_output=True,
        text=True,
        env=env,
    )
    assert shown.stdout.strip() == "0.2.0+corp.1", shown.stderr


def test_a_clone_on_the_path_with_its_egg_info(tmp_path: Path) -> None:
    """A clone's ``src/`` on PYTHONPATH holds setuptools' development metadata beside the
    package (``genstamp.egg-info``: PKG-INFO, requires.txt, no METADATA): its requirements
    and entry points are read from there, as importlib finds it first."""
    src = tmp_path / "src"
    shutil.copytree(
        Path(genstamp.__file__).parent,
        src / "genstamp",
        ignore=shutil.ignore_patterns("__pycache__"),
    )
    info = src / "genstamp.egg-info"
    info.mkdir()
    (info / "PKG-INFO").write_text(
        "Metadata-Version: 2.1\nName: genstamp\nVersion: 0.2.0\nRequires-Python: >=3.10\n"
    )
    (info / "requires.txt").write_text("pygit2>=1.15\n\n[clean]\nuv>=0.4\n")
    (info / "entry_points.txt").write_text("[pytest11]\ngenstamp = genstamp.pytest_plugin\n")
    probe = "from genstamp import selfwheel; print(selfwheel.installed().metadata)"
    done = subprocess.run(
        [sys.executable, "-c", probe],
        capture_output=True,
        text=True,
        env=subprocess_env(PYTHONPATH=str(src)),
    )
    assert done.returncode == 0, done.stderr
    meta = Parser().parsestr(done.stdout)
    assert meta["Requires-Python"] == ">=3.10" and meta.get_all("Provides-Extra") == ["clean"]
    assert meta.get_all("Requires-Dist") == ["pygit2>=1.15", 'uv>=0.4; extra == "clean"']


def test_no_installed_metadata_is_one_line(tmp_path: Path) -> None:
    """With no genstamp distribution on the path (a bare copy, no site-packages), the clean
    environment cannot get this genstamp: one line, not an install of another build."""
    src = tmp_path / "src"
    shutil.copytree(
        Path(genstamp.__file__).parent,
        src / "genstamp",
        ignore=shutil.ignore_patterns("__pycache__"),
    )
    probe = (
        f"import sys; sys.path.insert(0, {str(src)!r})\n"
        "from genstamp import selfwheel\n"
        "from genstamp.errors import GenstampError\n"
        "try:\n    selfwheel.installed()\nexcept GenstampError as exc:\n    print(exc)\n"
    )
    done = subprocess.run(
        [sys.executable, "-S", "-c", probe], capture_output=True, text=True, env=subprocess_env()
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("clean-run: this genstamp has no installed metadata"), done.stdout
    assert "pip install genstamp" in done.stdout


def test_the_same_files_make_the_same_wheel(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    first, second = selfwheel.write(tmp_path / "a"), selfwheel.write(tmp_path / "b")
    assert first.read_bytes() == second.read_bytes()


def test_written_in_a_folder_of_its_own_or_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With no folder given, the wheel goes in a new folder under TMPDIR, which the caller
    removes; where none can be made there, one line names the folder (not the git dir's
    disk, as the top's catch-all for OSError says)."""
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    wheel = selfwheel.write()
    assert wheel.parent.parent == tmp_path and wheel.parent.name.startswith("genstamp-wheel-")
    not_a_folder = tmp_path / "file"
    not_a_folder.write_text("")
    monkeypatch.setattr(tempfile, "tempdir", str(not_a_folder))
    with pytest.raises(GenstampError) as caught:
        selfwheel.write()
    assert str(caught.value).startswith(
        f"clean-run: cannot write genstamp's wheel for the clean environment in {not_a_folder}:"
    )
    assert "set TMPDIR" in str(caught.value)
