"""This genstamp as a wheel: what a clean environment installs to run the same plugin.

A clean run's tests are to be recorded by the code that runs here: the package this process
imported genstamp from (an installed copy, an editable install's folder, a copy on
``PYTHONPATH``), with the installed distribution's metadata (its requirements, its
``pytest11`` and console-script entry points). Not its source folder built again: a build of
a folder runs where it lies (setuptools writes ``build/`` and ``*.egg-info`` there, in the
user's clone of genstamp), two clean runs building it at once remove each other's files
(``build/bdist.*/wheel``), and the folder may hold other code by now than what was installed.
Nothing is built: the files are packed as they are (a pure-Python wheel, PEP 427)."""

from __future__ import annotations

import base64
import hashlib
import re
import zipfile
from importlib import metadata
from pathlib import Path

import genstamp
from genstamp import __version__
from genstamp.errors import GenstampError

WHEEL = (
    "Wheel-Version: 1.0\nGenerator: genstamp {version}\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
)

_STAMP = (1980, 1, 1, 0, 0, 0)  # zip's earliest date: the same files make the same wheel


def package_files(top: Path | None = None) -> list[tuple[str, Path]]:
    """The files of the imported genstamp package (or of the folder ``top``), by their name in
    the wheel: every regular file below its folder, but bytecode caches and names that begin
    with a dot (an editor's lock link ``.#rules.py``: no file of the package)."""
    top = Path(genstamp.__file__).resolve().parent if top is None else top
    found: list[tuple[str, Path]] = []
    for path in sorted(top.rglob("*")):
        rel = path.relative_to(top)
        if any(p.startswith(".") or p == "__pycache__" for p in rel.parts):
            continue
        if path.suffix == ".pyc" or not path.is_file():
            continue
        found.append((f"genstamp/{rel.as_posix()}", path))
    return found


def write(folder: Path) -> Path | None:
    """The wheel of the running genstamp, written in ``folder``; None when no distribution
    metadata of genstamp is installed (its requirements and entry points are then unknown)."""
    try:
        dist = metadata.distribution("genstamp")
    except metadata.PackageNotFoundError:
        return None
    meta = dist.read_text("METADATA")
    points = dist.read_text("entry_points.txt")
    if not meta or points is None:
        return None
    # the running code's version, where a copy on PYTHONPATH is another than the installed one
    meta = re.sub(r"(?m)^Version: .*$", f"Version: {__version__}", meta, count=1)
    version = re.sub(r"[^\w.]+", "_", __version__)
    info = f"genstamp-{version}.dist-info"
    entries: list[tuple[str, bytes]] = []
    try:
        for name, path in package_files():
            entries.append((name, path.read_bytes()))
    except OSError as exc:
        raise GenstampError(
            f"clean-run: cannot read genstamp's own module {exc.filename}: {exc.strerror}",
            "reinstall genstamp",
        ) from exc
    entries.append((f"{info}/METADATA", meta.encode()))
    entries.append((f"{info}/entry_points.txt", points.encode()))
    entries.append((f"{info}/WHEEL", WHEEL.format(version=__version__).encode()))
    record = [f"{name},{_hash(data)},{len(data)}" for name, data in entries]
    entries.append((f"{info}/RECORD", "\n".join([*record, f"{info}/RECORD,,", ""]).encode()))
    path = folder / f"genstamp-{version}-py3-none-any.whl"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as wheel:
        for name, data in entries:
            item = zipfile.ZipInfo(name, _STAMP)
            item.external_attr = 0o644 << 16
            item.compress_type = zipfile.ZIP_DEFLATED
            wheel.writestr(item, data)
    return path


def _hash(data: bytes) -> str:
    digest = hashlib.sha256(data).digest()
    return "sha256=" + base64.urlsafe_b64encode(digest).rstrip(b"=").decode()
