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
import csv
import hashlib
import io
import re
import shutil
import tempfile
import zipfile
from importlib import metadata
from pathlib import Path

import genstamp
from genstamp import __version__
from genstamp.errors import GenstampError
from genstamp.typedtuple import NamedTuple

WHEEL = (
    "Wheel-Version: 1.0\nGenerator: genstamp {version}\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
)

_STAMP = (1980, 1, 1, 0, 0, 0)  # zip's earliest date: the same files make the same wheel
_MODE = 0o100644 << 16  # a regular file, rw-r--r--


class Installed(NamedTuple):
    """What the installed distribution of genstamp says, as a wheel's metadata needs it."""

    metadata: str  # a METADATA text: name, this version, Requires-Python, requirements
    entry_points: str  # entry_points.txt (the console script, the pytest11 plugin)


def package_files(top: Path | None = None) -> list[tuple[str, Path]]:
    """The modules of the imported genstamp package (or of the folder ``top``) and its
    ``py.typed``, by their name in the wheel (what its build ships: not bytecode, nor an
    editor's files beside them, a backup or a lock link ``.#rules.py``)."""
    top = Path(genstamp.__file__).resolve().parent if top is None else top
    found: list[tuple[str, Path]] = []
    for path in sorted(top.rglob("*")):
        rel = path.relative_to(top)
        if any(p.startswith(".") or p == "__pycache__" for p in rel.parts):
            continue
        if not (path.suffix == ".py" or path.name == "py.typed") or not path.is_file():
            continue
        name = f"genstamp/{rel.as_posix()}"
        try:
            name.encode("utf-8")
        except UnicodeEncodeError:  # no name Python would import a module by
            continue
        found.append((name, path))
    return found


def installed() -> Installed:
    """The installed genstamp's requirements and entry points, from its distribution's
    metadata, whether a wheel's (``.dist-info``) or setuptools' development one
    (``.egg-info`` beside the package: a clone's ``src/`` on ``PYTHONPATH``)."""
    for dist in metadata.distributions(name="genstamp"):
        points = dist.read_text("entry_points.txt")
        if dist.metadata is None or not points:
            continue
        lines = ["Metadata-Version: 2.1", "Name: genstamp", f"Version: {__version__}"]
        python = dist.metadata["Requires-Python"]
        if python:
            lines.append(f"Requires-Python: {python}")
        requires = dist.requires or []
        extras = dict.fromkeys(
            m.group(1) for r in requires if (m := re.search(r"extra\s*==\s*[\"']([^\"']+)", r))
        )
        lines += [f"Provides-Extra: {e}" for e in extras]
        lines += [f"Requires-Dist: {r}" for r in requires]
        return Installed("\n".join([*lines, ""]), points)
    raise GenstampError(
        "clean-run: this genstamp has no installed metadata (no genstamp distribution on the"
        " import path): the clean environment cannot be given the same genstamp",
        "install genstamp into this environment (pip install genstamp, or pip install -e"
        " YOUR-CLONE)",
    )


def identity() -> str:
    """The digest of what the wheel holds besides the modules (``build.digest`` has those):
    the requirements and entry points, which a reinstall of the same code may change."""
    found = installed()
    return hashlib.sha256(f"{found.metadata}\0{found.entry_points}".encode()).hexdigest()


def write(folder: Path | None = None) -> Path:
    """The wheel of the running genstamp, written in ``folder``, or in a new temporary folder
    (``TMPDIR``) that the caller removes."""
    found = installed()
    version = __version__.replace("-", "_")  # PEP 427's escape (a local `+x` stays)
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
    entries.append((f"{info}/METADATA", found.metadata.encode()))
    entries.append((f"{info}/entry_points.txt", found.entry_points.encode()))
    entries.append((f"{info}/WHEEL", WHEEL.format(version=__version__).encode()))
    record = io.StringIO()
    rows = csv.writer(record, lineterminator="\n")
    rows.writerows((name, _hash(data), len(data)) for name, data in entries)
    rows.writerow((f"{info}/RECORD", "", ""))
    entries.append((f"{info}/RECORD", record.getvalue().encode()))
    name = f"genstamp-{version}-py3-none-any.whl"
    where = str(folder) if folder is not None else tempfile.gettempdir()
    made: Path | None = None
    try:
        if folder is None:
            folder = made = Path(tempfile.mkdtemp(prefix="genstamp-wheel-"))
        path = folder / name
        with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as wheel:
            for name, data in entries:
                item = zipfile.ZipInfo(name, _STAMP)
                item.external_attr = _MODE
                item.compress_type = zipfile.ZIP_DEFLATED
                wheel.writestr(item, data)
    except OSError as exc:
        if made is not None:
            shutil.rmtree(made, ignore_errors=True)
        raise GenstampError(
            f"clean-run: cannot write genstamp's wheel for the clean environment in {where}:"
            f" {exc.strerror or exc}",
            "free space there, or set TMPDIR to a folder with room",
        ) from exc
    return path


def _hash(data: bytes) -> str:
    digest = hashlib.sha256(data).digest()
    return "sha256=" + base64.urlsafe_b64encode(digest).rstrip(b"=").decode()
