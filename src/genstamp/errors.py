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


# An index extension git writes that libgit2 cannot read, and what makes git write a plain
# index again.
_EXTENSIONS = {
    "link": "`git config core.splitIndex false`, then `git status`",
    "sdir": "`git sparse-checkout init --no-sparse-index`",
}


def unreadable_index(exc: BaseException) -> str:
    """The remedy when libgit2 failed on an index extension it cannot read (a split or sparse
    index: git reads it, libgit2 does not); "" for any other failure."""
    text = str(exc)
    if "unsupported mandatory extension" not in text:
        return ""
    found = [fix for ext, fix in _EXTENSIONS.items() if f"'{ext}'" in text]
    fixes = " and ".join(found or _EXTENSIONS.values())
    return f"the index uses an extension libgit2 cannot read: {fixes} writes a plain index"


def cannot_write(exc: OSError, folder: str) -> str:
    """The remedy when genstamp cannot write its state in ``folder``, by what the system
    said: a full disk, a read-only file system, permissions ("" for another failure)."""
    import errno  # only on this path: every child process of a run imports this module

    code = exc.errno
    if code in (errno.ENOSPC, getattr(errno, "EDQUOT", errno.ENOSPC)):
        return f"free space on the disk that holds {folder} (it is full), then rerun"
    if code == errno.EROFS:
        return (
            f"{folder} is on a read-only file system: run genstamp where it can write its git dir"
        )
    if code in (errno.EACCES, errno.EPERM):
        return f"make {folder} writable for this user (check its permissions and owner)"
    return ""
