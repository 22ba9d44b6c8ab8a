"""genstamp: bind test evidence to a workspace generation and the exact tree it tested.

PYTEST_DONT_REWRITE: a run's child processes import this module at start-up, before pytest
would rewrite it (it asserts nothing)
"""

TYPE_CHECKING = False  # not typing's: a run's child processes import this package at start-up
if TYPE_CHECKING:
    from genstamp.errors import GenstampError

__version__ = "0.2.0"

__all__ = ["GenstampError", "__version__"]


def __getattr__(name: str) -> object:
    # GenstampError on first use: the child processes of a run import this package at start-up
    # and never raise it.
    if name == "GenstampError":
        from genstamp.errors import GenstampError

        return GenstampError
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
