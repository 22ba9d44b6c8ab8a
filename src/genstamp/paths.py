"""Where a path lies: inside a folder, or in installed code. Pure, and light: the gate's rules
and every child process of a run use it.

PYTEST_DONT_REWRITE: a run's child processes import this module at start-up, before pytest
would rewrite it (it asserts nothing)
"""

from genstamp.realos import os  # as it was: a test may patch it (``realos``)

TYPE_CHECKING = False  # not typing's: every child process of a run imports this module
if TYPE_CHECKING:
    import re
    from collections.abc import Sequence


def inside(path: str, root: str) -> bool:
    """``path`` is ``root`` or below it (both absolute, normalised)."""
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


PYPACKAGES = "__pypackages__"  # PEP 582: __pypackages__/3.11/lib is a site-packages


def installed(path: str) -> bool:
    """Installed code (a site-packages, even inside the work tree, or PEP 582's
    ``__pypackages__``, as pdm keeps one) is the installer's. (A Python environment inside the
    work tree is told by its folder: ``environment``.)"""
    parts = path.split(os.sep)
    return "site-packages" in parts or "dist-packages" in parts or PYPACKAGES in parts


def site_relative(path: str) -> str | None:
    """``path`` below the last ``site-packages`` (or ``dist-packages``, or ``lib`` of a PEP
    582 ``__pypackages__/X.Y``) folder holding it, ``/``-separated (``pkg/data/cfg.json``);
    None when it is not installed code."""
    parts = path.split(os.sep)
    for n in range(len(parts) - 1, -1, -1):
        if parts[n] in ("site-packages", "dist-packages"):
            return "/".join(parts[n + 1 :]) or None
        if parts[n] == PYPACKAGES:
            lib = parts[n + 2 : n + 3] == ["lib"]
            return ("/".join(parts[n + 3 :]) or None) if lib else None
    return None


def environment(folder: str) -> bool:
    """Whether ``folder`` is a Python environment's own: a virtual environment (it holds
    ``pyvenv.cfg``), a conda environment (``conda-meta/history``, as pytest tells one) or an
    installation's prefix (CPython's own landmark, ``lib/pythonX.Y/os.py``)."""
    if os.path.isfile(os.path.join(folder, "pyvenv.cfg")):
        return True
    if os.path.isfile(os.path.join(folder, "conda-meta", "history")):
        return True
    lib = os.path.join(folder, "lib")
    try:
        names = os.listdir(lib)
    except OSError:
        return False
    return any(
        n.startswith("python") and os.path.isfile(os.path.join(lib, n, "os.py")) for n in names
    )


def generated(path: str, globs: "Sequence[str]") -> bool:
    """Whether ``path`` (relative to the work tree, ``/``-separated) matches one of ``globs``
    (``*`` and ``?`` within a folder, ``**`` across folders), as ``[tool.genstamp] generated``
    names the files the build makes; a module loaded from inside a generated archive
    (``dist/app.pyz/app/main.py``) is generated with it."""
    parts = path.split("/")
    held = ["/".join(parts[:n]) for n in range(len(parts), 0, -1)]
    return any(_glob(g).fullmatch(p) for g in globs for p in held)


_GLOBS: "dict[str, re.Pattern[str]]" = {}  # pattern -> compiled, for every loaded path


def _glob(pattern: str) -> "re.Pattern[str]":
    compiled = _GLOBS.get(pattern)
    if compiled is None:
        import re  # not at start-up: every child process imports this module

        out = []
        for part in re.split(r"(\*\*/|\*\*|\*|\?)", pattern):
            out.append(
                {"**/": "(?:.*/)?", "**": ".*", "*": "[^/]*", "?": "[^/]"}.get(part)
                or re.escape(part)
            )
        compiled = _GLOBS[pattern] = re.compile("".join(out))
    return compiled


def config_path(value: str, workdir: str) -> str:
    """A file a git setting names (``core.excludesFile``): ``~`` expanded, and a relative one
    taken from the top of the work tree, where git runs, not from this process's folder."""
    path = os.path.expanduser(value)
    return path if os.path.isabs(path) else os.path.join(workdir, path)


def printable(text: str) -> str:
    """Text any output can carry on one line: bytes of a file or ref name that are not UTF-8
    (which pygit2 and os hand over surrogate-escaped) become ``\\xNN`` instead of failing a
    print, and control characters (a newline in a file name) become escapes, so that a name
    cannot split one line of output into two."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        text = text.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
    if any(c < " " or c == "\x7f" for c in text):
        text = "".join(repr(c)[1:-1] if c < " " or c == "\x7f" else c for c in text)
    return text


def gitfile_target(data: bytes) -> bytes | None:
    """The git dir a ``.git`` file names, read as git reads it (``read_gitfile_gently``): the
    whole file, trailing whitespace dropped, after ``gitdir: ``, so that a path holding a
    newline is whole; None when it names none."""
    text = data.rstrip(b" \t\n\v\f\r")
    return text[len(b"gitdir: ") :] if text.startswith(b"gitdir: ") else None
