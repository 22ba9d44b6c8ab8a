"""genstamp: bind test evidence to a workspace generation and the exact tree it tested.

PYTEST_DONT_REWRITE: a run's child processes import this module at start-up, before pytest
would rewrite it (it asserts nothing)
"""

from __future__ import annotations

from genstamp.errors import GenstampError

__version__ = "0.1.0"

__all__ = ["GenstampError", "__version__"]
