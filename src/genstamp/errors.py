"""The one expected-failure type; only ``cli.main`` turns it into an exit code.

PYTEST_DONT_REWRITE: a run's child processes import this module at start-up, before pytest
would rewrite it (it asserts nothing)
"""

EXIT_OK = 0
EXIT_REFUSED = 1
EXIT_USAGE = 2


class GenstampError(Exception):
    """An expected failure, told to the user as one line with the remedy."""

    def __init__(self, message: str, remedy: str = "", code: int = EXIT_USAGE) -> None:
        super().__init__(message)
        self.message = message
        self.remedy = remedy
        self.code = code

    def __str__(self) -> str:
        if self.remedy:
            return f"{self.message} (hint: {self.remedy})"
        return self.message
