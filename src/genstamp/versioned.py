"""Small JSON files genstamp keeps in the git dir, each with a format name and a version."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from genstamp.errors import GenstampError


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
