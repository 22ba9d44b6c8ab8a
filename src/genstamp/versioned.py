"""Small JSON files genstamp keeps in the git dir, each with a format name and a version."""

from __future__ import annotations

import errno
import json
import os
import stat
from pathlib import Path
from typing import Any

from genstamp.errors import GenstampError

# No file genstamp keeps comes near this; a larger one is none of its files.
KEPT_MOST = 64 << 20


def read_kept(path: str | os.PathLike[str], most: int = KEPT_MOST) -> bytes:
    """The bytes of a file genstamp keeps, read without waiting on anything: a FIFO, a device
    or a socket in its place (or a link to one) is none of its files, nor is one larger than
    ``most`` (an OSError saying so). FileNotFoundError when there is none."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    with open(fd, "rb") as fh:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise OSError(errno.EINVAL, "not a regular file", os.fspath(path))
        raw = fh.read(most + 1)
    if len(raw) > most:
        raise OSError(errno.EFBIG, f"larger than {most} bytes", os.fspath(path))
    return raw


def parse(raw: bytes, path: Path, fmt: str, version: int, what: str, remedy: str) -> dict[str, Any]:
    """The fields of the file ``path`` held as ``raw``, when it is ``fmt`` at ``version``; an
    error naming both versions when it is another one."""
    try:
        data = json.loads(raw)
    except (UnicodeDecodeError, ValueError):
        raise GenstampError(f"{path} is not a genstamp {what} (not JSON)", remedy) from None
    if not isinstance(data, dict) or data.get("format") != fmt:
        raise GenstampError(f"{path} is not a genstamp {what}", remedy)
    if data.get("version") != version:
        raise GenstampError(
            f"{path} is {fmt} version {data.get('version')!r}; this genstamp reads "
            f"version {version}",
            "use one genstamp version in pre-commit and the test env, or " + remedy,
        )
    return data


def read(path: Path, fmt: str, version: int, what: str, remedy: str) -> dict[str, Any] | None:
    """``parse`` of the file ``path``; None when there is none, an error when it cannot be
    read."""
    try:
        raw = read_kept(path)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise GenstampError(f"cannot read {path}: {exc.strerror or exc}") from exc
    return parse(raw, path, fmt, version, what, remedy)


def tree_times(data: dict[str, Any], path: Path, remedy: str) -> dict[str, int]:
    """The ``trees`` list of such a file (``[tree id, when]`` pairs, oldest first) as a dict;
    an error when it is malformed."""
    entries = data.get("trees")
    if not isinstance(entries, list) or not all(
        isinstance(e, list)
        and len(e) == 2
        and isinstance(e[0], str)
        and len(e[0]) in (40, 64)
        and isinstance(e[1], int)
        for e in entries
    ):
        raise GenstampError(f"{path} has a malformed list of trees", remedy)
    return {tree: when for tree, when in entries}
