"""pytest's ini files (pytest.ini, tox.ini, setup.cfg) read as pytest reads them.

pytest parses them with ``iniconfig``, not ``configparser``, and the two differ where it
matters to the suite: configparser hands every section the keys of a ``[DEFAULT]`` section
(an ``addopts`` there would narrow the suite pytest runs in genstamp's reading only), keeps
blank lines inside a value, and ends a value at a line iniconfig continues. The rules here are
iniconfig's, as pytest calls it (inline comments kept): a line whose first non-blank character
is ``#`` or ``;`` is a comment, ``[name]`` opens a section (a comment after it is dropped),
``name = value`` or ``name: value`` sets a name, a line that begins with white space continues
the last value, and a duplicate section or name is an error. It has no pytest import: the
gate reads the suite in an environment without pytest.
"""

from __future__ import annotations

_COMMENT = "#;"


def parse(text: str) -> dict[str, dict[str, str]]:
    """Section -> name -> value; ValueError (with the line number) where pytest would stop
    with a usage error."""
    sections: dict[str, dict[str, str]] = {}
    current: dict[str, str] | None = None
    last: str | None = None  # the name whose value a continuation line extends
    for number, raw in enumerate(text.removeprefix("\ufeff").splitlines(), 1):
        line = "" if raw.lstrip()[:1] in tuple(_COMMENT) else raw.rstrip()
        if not line:
            continue
        if line[0] == "[":
            head = line
            for c in _COMMENT:
                head = head.split(c)[0].rstrip()
            if head.endswith("]"):
                name = head[1:-1]
                if not name:
                    raise ValueError(f"line {number}: empty section name")
                if name in sections:
                    raise ValueError(f"line {number}: duplicate section {name!r}")
                current = sections[name] = {}
                last = None
                continue
            line = " " + line  # iniconfig takes it for a continuation
        if line[0].isspace():
            if current is None or last is None:
                raise ValueError(f"line {number}: unexpected value continuation")
            value = line.strip()
            current[last] = f"{current[last]}\n{value}" if current[last] else value
            continue
        key, eq, value = line.partition("=")
        if not eq or ":" in key:
            key, colon, value = line.partition(":")
            if not colon:
                raise ValueError(f"line {number}: unexpected line: {line!r}")
        if current is None:
            raise ValueError(f"line {number}: no section header defined")
        key = key.strip()
        if key in current:
            raise ValueError(f"line {number}: duplicate name {key!r}")
        current[key] = value.strip()
        last = key
    return sections
