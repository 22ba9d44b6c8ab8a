"""genstamp: bind test evidence to a workspace generation and the exact tree it tested."""

from __future__ import annotations

from genstamp.errors import GenstampError

__version__ = "0.1.0"

__all__ = ["GenstampError", "__version__"]
