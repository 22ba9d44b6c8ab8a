"""Which genstamp this is: its version names a release, the digest of its modules the build.

Builds between releases (a commit pre-commit pins, a clone installed editable) share a version
and differ in their rules: what one build decided is not another's to reuse."""

from __future__ import annotations

import functools
import hashlib
from pathlib import Path

from genstamp import __version__


def label() -> str:
    """``0.2.0 (build 0123456789ab)``: the version, and the build by the first 12 hex digits
    of its digest (what ``genstamp --version`` says, and ``doctor`` compares)."""
    return f"{__version__} (build {digest()[:12]})"


@functools.cache
def digest() -> str:
    """genstamp's version and the digest of its own modules (sha256, hex)."""
    here = Path(__file__).resolve().parent
    h = hashlib.sha256(__version__.encode())
    for path in sorted(here.glob("*.py")):
        if path.name.startswith("."):  # no module: an editor's lock link (`.#rules.py`)
            continue
        try:
            data = path.read_bytes()
        except OSError:  # no module Python could import either
            continue
        h.update(path.name.encode() + b"\0" + data)
    return h.hexdigest()
