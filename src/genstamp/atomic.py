"""Whole files genstamp keeps: written so that a reader sees the old file or the new one, never
a torn one, and read without waiting on what is no such file.

Written with ``os`` alone (no ``tempfile``, ``pathlib`` or ``contextlib``): the post-* hooks
write the generation stamp with it, in a process that must start fast (issue 16)."""

from __future__ import annotations

import errno
import os
import stat


def write_atomic(path: str | os.PathLike[str], data: bytes, *, sync: bool = True) -> None:
    """Replace ``path`` by a file holding ``data``. ``sync``: on disk before it replaces the old
    file (``fsync``), so a crash leaves the old file or the new one, never an empty one."""
    folder, name = os.path.split(os.fspath(path))
    os.makedirs(folder or ".", exist_ok=True)
    fd, tmp = new_file(folder, f".{name}.", ".tmp")
    try:
        with os.fdopen(fd, "wb") as fh:  # owns the descriptor from here: closed on any error
            os.fchmod(fh.fileno(), _mode_for(path))
            fh.write(data)
            fh.flush()
            if sync:
                os.fsync(fh.fileno())
        try:
            os.replace(tmp, path)
        except OSError as exc:  # named by the file it was to replace, not the temporary one
            raise OSError(exc.errno, exc.strerror, os.fspath(path)) from None
    except BaseException:
        try:  # noqa: SIM105 - contextlib.suppress: one import more on the hook's path
            os.unlink(tmp)
        except OSError:
            pass
        raise


def new_file(folder: str, prefix: str, suffix: str = "") -> tuple[int, str]:
    """A new, empty file in ``folder``, opened for writing, and its path: what
    ``tempfile.mkstemp`` makes (a random name, created exclusively, mode 0600)."""
    for _ in range(100):
        path = os.path.join(folder, f"{prefix}{os.urandom(6).hex()}{suffix}")
        try:
            return os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600), path
        except FileExistsError:
            continue
    raise FileExistsError(f"no free name for {prefix}*{suffix} in {folder}")


def _mode_for(path: str | os.PathLike[str]) -> int:
    """The mode the file has, or the one ``open()`` would give a new file (the temporary file
    is created 0600)."""
    try:
        return os.stat(path).st_mode & 0o7777
    except OSError:
        umask = os.umask(0)
        os.umask(umask)
        return 0o666 & ~umask


# No file genstamp keeps comes near this; a larger one is none of its files.
KEPT_MOST = 64 << 20


def read_kept(path: str | os.PathLike[str], most: int = KEPT_MOST) -> bytes:
    """The bytes of a file genstamp keeps, read without waiting on anything: a FIFO, a device
    or a socket in its place (or a link to one) is none of its files, nor is one larger than
    ``most`` (an OSError saying so). FileNotFoundError when there is none."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    with open(fd, "rb") as fh:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise OSError(errno.EINVAL, "not a regular file", os.fspath(path))
        raw = fh.read(most + 1)
    if len(raw) > most:
        raise OSError(errno.EFBIG, f"larger than {most} bytes", os.fspath(path))
    return raw
