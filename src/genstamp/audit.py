"""The loaded-code audit: where each of the checkout's modules was really loaded from."""

from __future__ import annotations

import hashlib
import importlib.util
import marshal
import os
import sys
from collections.abc import Iterable, Mapping
from pathlib import Path
from types import ModuleType
from typing import Any, NamedTuple

from genstamp import bytecode

FOREIGN = "foreign-origin"  # a checkout module loaded from outside the checkout
SOURCELESS = "sourceless"  # loaded from a .pyc with no source
STALE = "stale-bytecode"  # loaded from bytecode older than the generation, or not its source's

# 2: ``loaded`` holds every distinct blob a path was loaded with (a reload, another process).
AUDIT_VERSION = 2


class Flag(NamedTuple):
    kind: str
    module: str
    path: str
    detail: str


class Audit(NamedTuple):
    packages: tuple[str, ...]
    # work-tree-relative posix path -> the git blob ids of the source bytes loaded, in order
    loaded: dict[str, tuple[str, ...]]
    flags: tuple[Flag, ...]

    def to_json(self) -> str:
        return json_dumps(
            {
                "version": AUDIT_VERSION,
                "packages": list(self.packages),
                "loaded": {path: list(blobs) for path, blobs in sorted(self.loaded.items())},
                "flags": [f._asdict() for f in self.flags],
            }
        )


def json_dumps(data: Any) -> str:
    import json

    return json.dumps(data, sort_keys=True, separators=(",", ":"))


def from_json(text: str) -> Audit:
    import json

    data = json.loads(text)
    if not isinstance(data, dict) or data.get("version") != AUDIT_VERSION:
        raise ValueError(f"audit format {data.get('version') if isinstance(data, dict) else '?'}")
    return Audit(
        tuple(data["packages"]),
        {str(k): tuple(str(b) for b in v) for k, v in data["loaded"].items()},
        tuple(Flag(**f) for f in data["flags"]),
    )


def merge(audits: Iterable[Audit]) -> Audit:
    packages: set[str] = set()
    loaded: dict[str, dict[str, None]] = {}
    flags: dict[Flag, None] = {}
    for a in audits:
        packages.update(a.packages)
        for path, blobs in a.loaded.items():
            loaded.setdefault(path, {}).update(dict.fromkeys(blobs))
        flags.update(dict.fromkeys(a.flags))
    return Audit(tuple(sorted(packages)), {p: tuple(b) for p, b in loaded.items()}, tuple(flags))


def checkout_packages(root: Path) -> tuple[str, ...]:
    """Top-level packages and modules of the checkout: at its root and under ``src/``."""
    found: set[str] = set()
    for base in (root, root / "src"):
        try:
            entries = list(os.scandir(base))
        except OSError:
            continue
        for e in entries:
            name = e.name
            if name.startswith(".") or name in ("setup.py", "conftest.py", "noxfile.py"):
                continue
            if e.is_dir(follow_symlinks=False) and name.isidentifier():
                if os.path.exists(os.path.join(e.path, "__init__.py")):
                    found.add(name)
            elif name.endswith(".py") and name[:-3].isidentifier():
                found.add(name[:-3])
    return tuple(sorted(found))


def audit_modules(
    root: Path,
    packages: Iterable[str],
    generation_ns: int | None,
    modules: Mapping[str, ModuleType] | None = None,
    trusted_cache: str | None = None,
) -> Audit:
    """``trusted_cache``: a pycache prefix keyed by the tested tree, whose bytecode can only
    have been compiled from that tree's sources.

    Audits every module of ``packages``, and every module loaded from inside ``root``.
    """
    wanted = set(packages)
    root_s = str(root)
    loaded: dict[str, tuple[str, ...]] = {}
    flags: list[Flag] = []
    for name, module in list((modules if modules is not None else sys.modules).items()):
        if module is None:
            continue
        top = name.partition(".")[0]
        spec = getattr(module, "__spec__", None)
        origin = getattr(spec, "origin", None) or getattr(module, "__file__", None)
        if not isinstance(origin, str) or origin in ("built-in", "frozen"):
            if top in wanted and spec is not None and spec.submodule_search_locations:
                for location in spec.submodule_search_locations:
                    if not inside(os.path.realpath(location), root_s):
                        flags.append(
                            Flag(FOREIGN, name, location, "namespace outside the checkout")
                        )
            continue
        real = os.path.realpath(origin)
        if not inside(real, root_s):
            if top in wanted:
                copy = _identical_copy(name, real, root)
                cached = getattr(spec, "cached", None)
                if copy is None:
                    flags.append(Flag(FOREIGN, name, real, "loaded from outside the checkout"))
                elif isinstance(cached, str) and _stale_cache(real, cached, root_s, None):
                    flags.append(Flag(STALE, name, real, f"bytecode not compiled from {copy[0]}"))
                else:
                    loaded[copy[0]] = (copy[1],)  # an installed copy, byte for byte the checkout's
            continue
        rel = os.path.relpath(real, root_s).replace(os.sep, "/")
        if real.endswith((".pyc", ".pyo")):
            flags.append(Flag(SOURCELESS, name, rel, "loaded from bytecode with no source"))
            continue
        if not real.endswith(".py"):
            continue  # an extension module: no source to bind
        try:
            loaded[rel] = (blob_id(real),)
        except OSError:
            continue
        cached = getattr(spec, "cached", None)
        if isinstance(cached, str) and not (trusted_cache and inside(cached, trusted_cache)):
            stale = _stale_cache(real, cached, root_s, generation_ns)
            if stale:
                flags.append(Flag(STALE, name, rel, stale))
    return Audit(tuple(sorted(wanted)), loaded, tuple(flags))


def _identical_copy(name: str, real: str, root: Path) -> tuple[str, str] | None:
    """(path in the checkout, blob id) when ``real`` is a byte-identical installed copy of the
    checkout's own source for module ``name`` (``pip install .`` rather than ``-e``)."""
    if not real.endswith(".py"):
        return None
    parts = name.split(".")
    if os.path.basename(real) == "__init__.py":
        tail = [*parts, "__init__.py"]
    else:
        tail = [*parts[:-1], parts[-1] + ".py"]
    for base in (root, root / "src"):
        candidate = base.joinpath(*tail)
        try:
            ours, theirs = blob_id(str(candidate)), blob_id(real)
        except OSError:
            continue
        if ours == theirs:
            return candidate.relative_to(root).as_posix(), ours
    return None


def blob_id(path: str) -> str:
    """The id git gives the file's bytes as a blob (``git hash-object``, no filters), in pure
    Python: the pytest process never needs libgit2 for it."""
    with open(path, "rb") as fh:
        data = fh.read()
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def inside(path: str, root: str) -> bool:
    """``path`` is ``root`` or below it (both absolute, normalised)."""
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


def _stale_cache(source: str, cached: str, root: str, generation_ns: int | None) -> str | None:
    """Why the bytecode CPython would have used for ``source`` is not that source's, if it is."""
    try:
        with open(cached, "rb") as fh:
            data = fh.read()
        st = os.stat(source)
        cst = os.stat(cached)
    except OSError:
        return None
    header = bytecode.parse_header(data)
    if header is None:
        return None
    if header.hash_based:
        if header.checked:
            return None  # CPython ran it only if it hashes to the source (or recompiled)
        try:
            with open(source, "rb") as fh:
                matches = importlib.util.source_hash(fh.read()) == header.source_hash
        except OSError:
            return None
        if not matches:
            return f"loaded from {cached}, an unchecked pyc not compiled from the current source"
        return None
    if not bytecode.matches_stat(header, st.st_mtime, st.st_size):
        return None  # CPython would have recompiled from the source
    # CPython would have loaded this bytecode. Is it the source's own?
    if inside(os.path.realpath(cached), root) and generation_ns is not None:
        if cst.st_mtime_ns < generation_ns:
            return f"loaded from {os.path.relpath(cached, root)}, older than the generation"
    try:
        with open(source, "rb") as fh:
            code = compile(fh.read(), source, "exec", dont_inherit=True)
        if marshal.loads(data[bytecode.HEADER_SIZE :]) != code:
            return f"loaded from {cached}, which was not compiled from the current source"
    except (SyntaxError, ValueError, EOFError, TypeError):
        return f"loaded from {cached}, which was not compiled from the current source"
    return None
