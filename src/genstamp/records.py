"""Named tuples for the modules every child process of a run imports at start-up.

``typing.NamedTuple`` and ``collections.namedtuple`` import typing or collections (with
operator, keyword, reprlib), a few milliseconds in each process a test starts. A module kept
light declares its records as ``NamedTuple`` under ``TYPE_CHECKING`` (what mypy and readers
see) and builds the same tuple at run time with ``record``. Nor do these modules say
``from __future__ import annotations`` (that statement imports the ``__future__`` module too):
an annotation naming what only the type checker imports is written as a string.

PYTEST_DONT_REWRITE: a run's child processes import this module at start-up, before pytest
would rewrite it (it asserts nothing)
"""

TYPE_CHECKING = False  # not typing's (see the module's docstring)
if TYPE_CHECKING:
    from typing import Any


def record(name: str, fields: str, defaults: "tuple[Any, ...]" = (), module: str = "") -> type:
    """A tuple subclass with named, read-only fields, as ``namedtuple(name, fields,
    defaults=defaults)`` makes: positional construction, ``_fields``, a readable repr, equal
    to the plain tuple of its values, picklable when ``module`` names where it lives."""
    names = tuple(fields.split())

    def __new__(cls: type, *values: "Any") -> "Any":
        missing = len(names) - len(values)
        if 0 < missing <= len(defaults):
            values += defaults[len(defaults) - missing :]
        if len(values) != len(names):
            raise TypeError(f"{name}() takes {len(names)} fields, got {len(values)}")
        return tuple.__new__(cls, values)

    def __repr__(self: "tuple[Any, ...]") -> str:
        return f"{name}({', '.join(f'{n}={v!r}' for n, v in zip(names, self, strict=True))})"

    def __getnewargs__(self: "tuple[Any, ...]") -> "tuple[Any, ...]":
        return tuple(self)

    body: dict[str, Any] = {n: _field(i) for i, n in enumerate(names)}
    body.update(
        __slots__=(),
        _fields=names,
        __new__=__new__,
        __repr__=__repr__,
        __getnewargs__=__getnewargs__,
        __module__=module or __name__,
        __qualname__=name,
    )
    return type(name, (tuple,), body)


def _field(index: int) -> property:
    def get(self: "tuple[Any, ...]") -> "Any":
        return self[index]

    return property(get, doc=f"field {index}")
