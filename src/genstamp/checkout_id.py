"""Which checkout ran the tests, in a form a move keeps and a copy does not.

A random id kept in the git dir (``genstamp/checkout-id``) travels with the checkout when it is
moved (``mv repo repo2``) and when it is copied (``cp -r``); the device and inode of the git dir
survive a move within one filesystem but not a copy. Together they name one checkout wherever
it is. Pure Python: the pytest plugin runs without libgit2.
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from pathlib import Path

from genstamp import versioned
from genstamp.atomic import read_kept
from genstamp.errors import GenstampError
from genstamp.repo import STATE_DIR

FILE = "checkout-id"
FORMAT = "genstamp-checkout"
VERSION = 1


def path_of(gitdir: Path) -> Path:
    return gitdir / STATE_DIR / FILE


def current(gitdir: Path, *, create: bool = False) -> str:
    """``<id>@<device>:<inode>`` of the checkout whose git dir is ``gitdir``; "" when it has no
    id yet (and ``create`` is false). A file of another version is an error naming both."""
    path = path_of(gitdir)
    try:
        raw = read_kept(path)
    except FileNotFoundError:
        if not create:
            return ""
        raw = _create(path)
    except OSError as exc:
        raise GenstampError(
            f"cannot read {path}: {exc.strerror or exc}",
            f"remove {path} (genstamp makes it anew; then rerun the tests)",
        ) from exc
    ident = parse(raw, path)
    try:
        st = os.stat(gitdir)
    except OSError as exc:
        raise GenstampError(f"cannot stat the git dir {gitdir}: {exc.strerror or exc}") from exc
    return f"{ident}@{st.st_dev}:{st.st_ino}"


def parse(raw: bytes, path: Path) -> str:
    remedy = f"delete {path}: the next test run writes a new one"
    data = versioned.parse(raw, path, FORMAT, VERSION, "checkout id", remedy)
    ident = data.get("id")
    if not isinstance(ident, str) or len(ident) != 32 or not ident.isalnum():
        raise GenstampError(f"{path} holds a malformed checkout id", remedy)
    return ident


def _create(path: Path) -> bytes:
    """Write a new id unless another process did first (a link never replaces a file): every
    process then reads the one id that was kept."""
    # secrets.token_hex, without importing secrets (hmac, hashlib) into every test run
    data = json.dumps({"format": FORMAT, "version": VERSION, "id": os.urandom(16).hex()})
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
        try:
            with os.fdopen(fd, "wb") as fh:
                fh.write(data.encode())
                fh.flush()
                os.fsync(fh.fileno())
            with contextlib.suppress(FileExistsError):
                os.link(tmp, path)
        finally:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
        return read_kept(path)
    except OSError as exc:
        raise GenstampError(f"cannot write {path}: {exc.strerror or exc}") from exc
