"""genstamp's ``NamedTuple``: typing's class syntax, built as ``collections.namedtuple``."""

from __future__ import annotations

import pickle

import pytest

from genstamp.typedtuple import NamedTuple


class Point(NamedTuple):
    """A point."""

    x: int
    y: int = 0
    label: str | None = None

    def moved(self, by: int) -> Point:
        return self._replace(x=self.x + by)


def test_a_record_is_the_namedtuple_typing_would_build() -> None:
    p = Point(1)
    assert p == (1, 0, None) and isinstance(p, tuple)
    assert Point._fields == ("x", "y", "label")
    assert Point._field_defaults == {"y": 0, "label": None}
    assert p.moved(2) == Point(3) and p._asdict() == {"x": 1, "y": 0, "label": None}
    assert repr(p) == "Point(x=1, y=0, label=None)"
    assert Point.__doc__ == "A point." and Point.__module__ == __name__
    assert pickle.loads(pickle.dumps(p)) == p
    assert Point.__annotations__ == {"x": "int", "y": "int", "label": "str | None"}


def test_a_field_without_a_default_after_one_with_it_is_refused_as_typing_does() -> None:
    with pytest.raises(TypeError, match="a field without a default follows one with it"):

        class Bad(NamedTuple):
            a: int = 1
            b: int

    with pytest.raises(TypeError, match="class syntax only"):
        NamedTuple("Bad", [("a", int)])  # type: ignore[misc]
