"""Small JSON files genstamp keeps in the git dir, each with a format name and a version.

Light to import (``matches`` is asked where a process starts: a hook, a followed child): what
reading a file needs is imported when one is read."""

from __future__ import annotations

from genstamp.errors import GenstampError

TYPE_CHECKING = False  # not typing's: typing imports re
if TYPE_CHECKING:
    from pathlib import Path
    from typing import Any


def matches(found: object, *versions: object) -> bool:
    """Whether ``found`` (a file's version field) is one of ``versions``, of its very type: to
    Python, JSON's ``true`` equals 1 and ``3.0`` equals 3, and neither is a version written."""
    return any(type(found) is type(version) and found == version for version in versions)


def parse(raw: bytes, path: Path, fmt: str, version: int, what: str, remedy: str) -> dict[str, Any]:
    """The fields of the file ``path`` held as ``raw``, when it is ``fmt`` at ``version``; an
    error naming both versions when it is another one."""
    import json

    try:
        data = json.loads(raw)
    except (UnicodeDecodeError, ValueError):
        raise GenstampError(f"{path} is not a genstamp {what} (not JSON)", remedy) from None
    if not isinstance(data, dict) or data.get("format") != fmt:
        raise GenstampError(f"{path} is not a genstamp {what}", remedy)
    if not matches(data.get("version"), version):
        raise GenstampError(
            f"{path} is {fmt} version {data.get('version')!r}; this genstamp reads "
            f"version {version}",
            "use one genstamp version in pre-commit and the test env, or " + remedy,
        )
    return data


def read(path: Path, fmt: str, version: int, what: str, remedy: str) -> dict[str, Any] | None:
    """``parse`` of the file ``path``; None when there is none, an error when it cannot be
    read (the rules judge versions and read nothing: the file's I/O is imported here)."""
    from genstamp.atomic import read_kept

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
