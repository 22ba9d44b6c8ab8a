"""The version fields of genstamp's own files: only the very values written are read."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from genstamp import audit, coverage, versioned
from genstamp.errors import GenstampError


@pytest.mark.parametrize(
    ("found", "versions", "expected"),
    [
        (1, (1,), True),
        (2, (1, 2), True),
        ("1", ("1",), True),
        (True, (1,), False),  # JSON's true: equal to 1 in Python
        (False, (0,), False),
        (1.0, (1,), False),
        ("1", (1,), False),
        (None, (1,), False),
        (3, (1, 2), False),
    ],
)
def test_matches_is_the_value_and_its_type(
    found: object, versions: tuple[object, ...], expected: bool
) -> None:
    assert versioned.matches(found, *versions) is expected


@pytest.mark.parametrize("version", [True, 1.0, "1"])
def test_a_small_file_of_another_version_type_is_refused(tmp_path: Path, version: object) -> None:
    """B26 11: a checkout-id (read through ``versioned.parse``) holding ``"version": true`` was
    read as version 1."""
    path = tmp_path / "f.json"
    path.write_text(json.dumps({"format": "genstamp-x", "version": version}))
    with pytest.raises(GenstampError) as caught:
        versioned.read(path, "genstamp-x", 1, "record", "remove it")
    assert f"genstamp-x version {version!r}; this genstamp reads version 1" in caught.value.message
    path.write_text(json.dumps({"format": "genstamp-x", "version": 1}))
    assert versioned.read(path, "genstamp-x", 1, "record", "remove it") == {
        "format": "genstamp-x",
        "version": 1,
    }


def test_records_in_the_evidence_of_a_version_true_are_unreadable() -> None:
    """The audit and coverage records refuse ``true`` as a version (the gate then refuses the
    evidence as unbound, naming both versions)."""
    record = json.loads(audit.Audit(("calc",), {}, ()).to_json())
    audit.from_json(json.dumps(record))
    with pytest.raises(ValueError):
        audit.from_json(json.dumps({**record, "version": True}))
    with pytest.raises(ValueError, match="coverage format True"):
        coverage.from_json(json.dumps({"version": True, "outcomes": "", "files": []}))
