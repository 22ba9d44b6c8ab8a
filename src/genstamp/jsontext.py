"""JSON text in and out for a process that must start fast (the post-* hooks, issue 16).

``json``'s decoder and encoder import ``re``, and ``re`` imports ``enum``: together about a
third of a hook process's start-up. CPython's own accelerator, ``_json`` (what ``json`` uses
underneath), does the same work without them: ``loads`` parses with its scanner, ``dumps``
escapes strings with its encoder and lays the text out as ``json.dumps(value, indent=2,
sort_keys=True)`` does, byte for byte (a property test holds both against ``json``). Where
``_json`` is missing (another Python), ``json`` itself is used.
"""

from __future__ import annotations

TYPE_CHECKING = False  # not typing's: typing imports re
if TYPE_CHECKING:
    from typing import Any

try:
    import _json
except ImportError:  # pragma: no cover - CPython always has it
    _json = None  # type: ignore[assignment]

_WHITESPACE = " \t\n\r"  # what JSON allows around a value (json's WHITESPACE)
_CONSTANTS = {"NaN": float("nan"), "Infinity": float("inf"), "-Infinity": float("-inf")}


class _Context:
    """The settings ``_json.make_scanner`` reads: those of ``json.loads`` without hooks."""

    strict = True
    object_hook = None
    object_pairs_hook = None
    parse_float = float
    parse_int = int
    parse_constant = _CONSTANTS.__getitem__


# typeshed types the context as a scanner; any object with these attributes is what C reads
_scan = None if _json is None else _json.make_scanner(_Context)  # type: ignore[arg-type]


def loads(text: str) -> Any:
    """The value of the JSON ``text``; ValueError when it is not one JSON value (as
    ``json.loads``, whose ``JSONDecodeError`` is a ValueError)."""
    if _scan is None:  # pragma: no cover
        import json

        return json.loads(text)
    start = len(text) - len(text.lstrip(_WHITESPACE))
    try:
        value, end = _scan(text, start)
    except StopIteration as exc:
        raise ValueError(f"Expecting value: char {exc.value}") from None
    if text[end:].strip(_WHITESPACE):
        raise ValueError(f"Extra data: char {end}")
    return value


def dumps(value: Any) -> str:
    """``json.dumps(value, indent=2, sort_keys=True)``, for values made of dicts with string
    keys, lists, tuples, strings, ints, floats, booleans and None."""
    out: list[str] = []
    _emit(value, "\n", out)
    return "".join(out)


def _emit(value: Any, newline: str, out: list[str]) -> None:
    if isinstance(value, str):
        out.append(_string(value))
    elif value is None:
        out.append("null")
    elif value is True:
        out.append("true")
    elif value is False:
        out.append("false")
    elif isinstance(value, int):
        out.append(int.__repr__(value))
    elif isinstance(value, float):
        out.append(_float(value))
    elif isinstance(value, dict):
        if not value:
            out.append("{}")
            return
        inner = newline + "  "
        first = True
        for key, item in sorted(value.items()):
            if not isinstance(key, str):
                raise TypeError(f"keys must be str, not {type(key).__name__}")
            out.append(("{" if first else ",") + inner + _string(key) + ": ")
            _emit(item, inner, out)
            first = False
        out.append(newline + "}")
    elif isinstance(value, (list, tuple)):
        if not value:
            out.append("[]")
            return
        inner = newline + "  "
        for i, item in enumerate(value):
            out.append(("[" if i == 0 else ",") + inner)
            _emit(item, inner, out)
        out.append(newline + "]")
    else:
        raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")


def _string(text: str) -> str:
    if _json is None:  # pragma: no cover
        import json

        return json.dumps(text)
    result: str = _json.encode_basestring_ascii(text)
    return result


def _float(number: float) -> str:
    if number != number:
        return "NaN"
    if number in (float("inf"), float("-inf")):
        return "Infinity" if number > 0 else "-Infinity"
    return float.__repr__(number)
