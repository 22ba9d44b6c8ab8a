"""Where a path lies: inside a folder, or in installed code. Pure, and light: the gate's rules
and every child process of a run use it.

PYTEST_DONT_REWRITE: a run's child processes import this module at start-up, before pytest
would rewrite it (it asserts nothing)
"""

import os


def inside(path: str, root: str) -> bool:
    """``path`` is ``root`` or below it (both absolute, normalised)."""
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


def installed(path: str) -> bool:
    """Installed code (a site-packages, even inside the work tree) is the installer's."""
    parts = path.split(os.sep)
    return "site-packages" in parts or "dist-packages" in parts
