"""The files an install of the checkout's project copied outside its packages.

An install puts a project's scripts in the environment's ``bin/`` and its data files under its
prefix (``share/``), by copy, even an editable install: hatchling's ``shared-scripts`` and
``shared-data``, setuptools' ``script-files`` and ``data-files``, pdm-backend's
``wheel-data``, flit's ``external-data``. Tests that run or read such a file use what the tree
held when it was installed: once a commit changes the tree's file, until a reinstall, they test
a past version of it, which a clean clone's install does not hold.

Told by content, not by each backend's mapping: a file the project's distribution lists in its
``RECORD`` (so its install put it there) whose bytes are no tracked file's of its name now,
but were one's in a commit (an installer rewrites a script's ``#!`` line: the rest is
compared), is a past version of that file. A file the build makes matches no commit's."""

from __future__ import annotations

import csv
import itertools
import os
import posixpath
import re
from collections.abc import Iterable, Sequence
from pathlib import Path

from genstamp.paths import environment
from genstamp.typedtuple import NamedTuple


class Stale(NamedTuple):
    path: str  # the environment's file the tests read or ran
    shown: str  # that file, below the environment's folder (``bin/calc-add``)
    source: str  # the tree's file it is a past version of (work-tree relative)
    distribution: str  # the distribution whose install copied it


_HISTORY = 400  # commits that changed a candidate file, newest first, asked for its past bytes
_CANDIDATES = 16  # tracked files of one name compared at most (more: a name too common to tell)
_LARGEST = 16 << 20  # bytes of a copied file read at most (a larger one is not compared)


class Owner(NamedTuple):
    """The project's distribution that installed a file, and the work-tree folder of the
    project it was installed from ("" for the top, or where the installer did not say)."""

    name: str
    project: str


def stale(found: Iterable[tuple[str, str]], root: Path, project: str | None) -> list[Stale]:
    """Of the environment's files the tests read or ran (``found``: each path with its
    modification time then, in ns), those a distribution of ``project`` (or one its installer
    recorded as installed from a folder of ``root``, PEP 610) installed that hold a past
    version of a tracked file (a file changed since is left alone: its bytes then are gone)."""
    owners: dict[str, dict[str, Owner]] = {}  # an environment's folder -> its files' owners
    by_name: dict[str, list[str]] | None = None  # tracked files by their name
    known: set[str] = set()
    mappings: dict[str, dict[str, dict[str, str]]] = {}  # a project -> its hatch tables
    result = []
    for path, mtime in dict.fromkeys(found):
        prefix = _prefix(path)
        if prefix is None:
            continue
        if prefix not in owners:
            owners[prefix] = _installed_by(prefix, root, project)
        owner = owners[prefix].get(os.path.normpath(path))
        if owner is None:
            continue
        if by_name is None:
            by_name = {}
            for rel in _tracked(root):
                by_name.setdefault(rel.rpartition("/")[2], []).append(rel)
                known.add(rel)
        shown = os.path.relpath(path, prefix).replace(os.sep, "/")
        candidates = list(by_name.get(os.path.basename(path), ()))
        if len(candidates) > _CANDIDATES:
            candidates = []
        if owner.project not in mappings:
            mappings[owner.project] = _hatch_tables(root, owner.project)
        mapped = _mapped(mappings[owner.project], owner.project, shown)
        candidates += [m for m in mapped if m in known and m not in candidates]
        if not candidates:
            continue
        try:
            if str(os.stat(path).st_mtime_ns) != mtime or os.path.getsize(path) > _LARGEST:
                continue
            with open(path, "rb") as fh:
                data = fh.read()
        except OSError:
            continue
        source = _past_version(root, data, candidates)
        if source is not None:
            result.append(Stale(path, shown, source, owner.name))
    return result


def _hatch_tables(root: Path, project: str) -> dict[str, dict[str, str]]:
    """hatchling's ``shared-scripts`` and ``shared-data`` tables of the wheel target, in the
    ``pyproject.toml`` of the project in the work-tree folder ``project``."""
    from genstamp.atomic import read_kept
    from genstamp.roots import _table, _toml

    try:
        data = _toml(read_kept(root / project / "pyproject.toml"))
    except (OSError, ValueError):  # (TOMLDecodeError, UnicodeDecodeError are ValueErrors)
        return {}
    wheel = _table(data.get("tool"))
    for key in ("hatch", "build", "targets", "wheel"):
        wheel = _table(wheel.get(key))
    return {
        table: {k: v for k, v in _table(wheel.get(table)).items() if isinstance(v, str)}
        for table in ("shared-scripts", "shared-data")
    }


def _mapped(tables: dict[str, dict[str, str]], project: str, shown: str) -> list[str]:
    """The work-tree files hatchling's tables (``_hatch_tables``) map to the environment's
    file ``shown`` under another name: ``shared-scripts`` (a file or folder of the project to
    a name in ``bin/``) and ``shared-data`` (to a path below the environment). Paths as
    hatchling normalises them (``./scripts/run.py``)."""
    wanted = [("shared-data", shown)]
    if shown.startswith("bin/"):
        wanted.append(("shared-scripts", shown.removeprefix("bin/")))
    found = []
    for table, target in wanted:
        for source, to in tables.get(table, {}).items():
            to = posixpath.normpath(to).strip("/")
            to = "" if to == "." else to
            where = posixpath.normpath(posixpath.join(project or ".", source))
            if target == to:
                found.append(where)
            elif not to or target.startswith(f"{to}/"):
                found.append(posixpath.join(where, target[len(to) :].lstrip("/")))
    return found


def _prefix(path: str) -> str | None:
    """The Python environment (or installation) folder holding ``path``, or the user's base
    (``pip install --user``: ``~/.local``); None if none does."""
    import site

    user = os.path.realpath(site.getuserbase())
    folder = os.path.dirname(path)
    while True:
        parent = os.path.dirname(folder)
        if parent == folder:
            return None
        if environment(folder) or folder == user:
            return folder
        folder = parent


def _installed_by(prefix: str, root: Path, project: str | None) -> dict[str, Owner]:
    """The files outside site-packages that a distribution of the project installed into the
    environment ``prefix`` (by ``RECORD``), each with its owner. The site-packages looked in
    are the environment's, and a system Python's ``local/`` ones (Debian's ``dist-packages``
    too: ``pip install`` there puts scripts in ``/usr/local/bin``)."""
    owned: dict[str, Owner] = {}
    for lib in ("lib", "lib64", "local/lib", "local/lib64"):
        try:
            versions = sorted(os.listdir(os.path.join(prefix, lib)))
        except OSError:
            continue
        for version, packages in itertools.product(versions, ("site-packages", "dist-packages")):
            site = os.path.join(prefix, lib, version, packages)
            try:
                infos = [e for e in os.scandir(site) if e.name.endswith(".dist-info")]
            except OSError:
                continue
            for info in infos:
                owner = _ours(info.path, root, project)
                if owner is not None:
                    for rel in _record(info.path):
                        full = os.path.normpath(os.path.join(site, rel))
                        if not full.startswith(os.path.join(site, "")):
                            owned[full] = owner
    return owned


def _ours(info: str, root: Path, project: str | None) -> Owner | None:
    """The owner when ``info`` (a ``.dist-info`` folder) is the project's distribution: of
    its name, or installed from a folder (or an archive) in the work tree, as its installer
    recorded (PEP 610: the project's folder is the nearest holding a ``pyproject.toml``)."""
    import json

    name = re.sub(r"[-_.]+", "-", os.path.basename(info).partition("-")[0]).lower()
    try:
        with open(os.path.join(info, "direct_url.json"), "rb") as fh:
            url = json.loads(fh.read()).get("url", "")
    except (OSError, ValueError, AttributeError):
        url = ""
    top = os.path.realpath(root)
    if isinstance(url, str) and url.startswith("file://"):
        from urllib.parse import unquote, urlparse

        from genstamp.paths import inside

        source = os.path.realpath(unquote(urlparse(url).path))
        if inside(source, top):
            folder = source if os.path.isdir(source) else os.path.dirname(source)
            while folder != top and not os.path.isfile(os.path.join(folder, "pyproject.toml")):
                folder = os.path.dirname(folder)
            rel = os.path.relpath(folder, top).replace(os.sep, "/")
            return Owner(name, "" if rel == "." else rel)
    return Owner(name, "") if project is not None and name == project else None


def _record(info: str) -> list[str]:
    try:
        with open(os.path.join(info, "RECORD"), encoding="utf-8", newline="") as fh:
            return [row[0] for row in csv.reader(fh) if row]
    except (OSError, UnicodeDecodeError, csv.Error):
        return []


def _tracked(root: Path) -> list[str]:
    proc = _git(root, "ls-files", "-z", "--full-name")
    return [p for p in proc.decode("utf-8", "surrogateescape").split("\0") if p]


def _git(root: Path, *args: str, stdin: bytes | None = None) -> bytes:
    """git's output in ``root``; b"" when it fails."""
    from genstamp.changed import git_output

    return git_output(root, *args, stdin=stdin) or b""


def _body(data: bytes) -> bytes:
    """``data`` as an install may have rewritten it, undone: without a Python ``#!`` line (an
    installer writes its own interpreter there; where that path cannot stand in a ``#!``
    line, a space in it or too long, uv and distlib write a three-line ``/bin/sh`` preamble
    instead), in LF line endings (setuptools' ``build_scripts`` writes a script in text
    mode: a CRLF script is installed LF). Another program's ``#!`` line (``#!/bin/sh -e``)
    is no installer's: it is compared."""
    if data.startswith(_SH_PREAMBLE):
        lines = data.split(b"\n", 3)
        if len(lines) == 4 and lines[2].startswith(b"' '''"):
            data = lines[3]
    elif _PYTHON_LINE.match(data):
        data = data.partition(b"\n")[2]
    return data.replace(b"\r\n", b"\n")


_SH_PREAMBLE = b"#!/bin/sh\n'''exec' "
# the first line installers rewrite: setuptools' build_scripts and distlib (pip, uv) take a
# `#!` line naming python (`#!python`, `#!/usr/bin/env python3`, `#!/venv/bin/python3.11 -u`)
_PYTHON_LINE = re.compile(rb"#![^\n]*python[^\n/]*(\n|$)")


def _past_version(root: Path, data: bytes, candidates: Sequence[str]) -> str | None:
    """The candidate whose past version ``data`` (an installed file's bytes) is; None when it
    is any candidate's now (in the work tree, or as git stores it: a checkout may convert its
    line endings), or none a commit held."""
    from genstamp.loads import blob_of

    blob, mine = blob_of(data), _body(data)
    for rel in candidates:
        try:
            theirs = (root / rel).read_bytes()
        except OSError:
            continue
        if theirs == data or _body(theirs) == mine:
            return None  # the tree's file as it is now, but for what an install rewrites
    now = _git(root, "ls-files", "-s", "-z", "--", *(f":(literal){c}" for c in candidates))
    current = {e.split()[1].decode() for e in now.split(b"\0") if len(e.split()) > 2}
    if blob in current or any(_body(b) == mine for b in _contents(root, sorted(current))):
        return None
    for rel in candidates:
        past = _past_blobs(root, rel) - current
        if blob in past or any(_body(old) == mine for old in _contents(root, sorted(past))):
            return rel
    return None


def _past_blobs(root: Path, rel: str) -> set[str]:
    """The blobs commits held at ``rel`` (any branch or tag), newest ``_HISTORY`` changes."""
    out = _git(
        root,
        "log",
        "--all",
        f"-n{_HISTORY}",
        "--format=",
        "--raw",
        "--no-abbrev",
        "--no-renames",
        "--",
        f":(literal){rel}",
    )
    blobs: set[str] = set()
    for line in out.decode("ascii", "replace").splitlines():
        if line.startswith(":"):
            fields = line.split()
            blobs.update(b for b in fields[2:4] if b.strip("0"))
    return blobs


def _contents(root: Path, blobs: Sequence[str]) -> list[bytes]:
    """The bytes of ``blobs`` (``git cat-file --batch``); those git cannot give are left out."""
    if not blobs:
        return []
    out = _git(root, "cat-file", "--batch", stdin="".join(f"{b}\n" for b in blobs).encode())
    found = []
    at = 0
    while at < len(out):
        end = out.find(b"\n", at)
        if end < 0:
            break
        header = out[at:end].split()
        at = end + 1
        if len(header) != 3 or header[1] != b"blob":
            continue
        size = int(header[2])
        found.append(out[at : at + size])
        at += size + 1
    return found
