"""A lock between processes on a file of ours: the cache's entries, the hook's session records,
the shared servers' state files.

The lock file is created readable by this user alone, never truncated, and never opened through
a link: a link planted where a lock file goes is refused, so no lock ever opens (let alone
changes) a file elsewhere. `flock` on POSIX, `msvcrt.locking` on Windows. Written here rather
than taken from filelock, whose import costs the hook and the relay 25 ms each.
"""

from __future__ import annotations

import contextlib
import os
import stat
import sys
import time
from collections.abc import Iterator
from pathlib import Path

_OPEN = os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_BINARY", 0)
_POLL_S = 0.02


class LockTimeout(Exception):
    """Another process held the lock for as long as the caller would wait."""


@contextlib.contextmanager
def locked(path: Path, timeout: float | None = None) -> Iterator[None]:
    """Hold an exclusive lock on `path` (made if missing) for the block; wait `timeout` seconds
    at most (None: as long as it takes; 0: not at all), else raise `LockTimeout`. Raises
    `OSError` when `path` is a link or anything but a plain file."""
    if sys.platform == "win32" and path.is_symlink():  # no O_NOFOLLOW there
        raise OSError(f"{path} is a link, not a lock file")
    fd = os.open(path, _OPEN, 0o600)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(f"{path} is not a plain file, so it is not used as a lock")
        _acquire(fd, path, timeout)
        try:
            yield
        finally:
            _release(fd)
    finally:
        os.close(fd)


def _acquire(fd: int, path: Path, timeout: float | None) -> None:
    deadline = None if timeout is None else time.monotonic() + timeout
    while not _try(fd, block=deadline is None):
        if deadline is not None and time.monotonic() >= deadline:
            raise LockTimeout(f"{path} is locked by another process")
        time.sleep(_POLL_S)


if sys.platform == "win32":
    import msvcrt

    def _try(fd: int, block: bool) -> bool:
        os.lseek(fd, 0, os.SEEK_SET)
        try:
            msvcrt.locking(fd, msvcrt.LK_NBLCK, 1)  # LK_LOCK gives up after 10 s: poll instead
        except OSError:
            return False
        return True

    def _release(fd: int) -> None:
        os.lseek(fd, 0, os.SEEK_SET)
        msvcrt.locking(fd, msvcrt.LK_UNLCK, 1)

else:
    import fcntl

    def _try(fd: int, block: bool) -> bool:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX if block else fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return False
        return True

    def _release(fd: int) -> None:
        fcntl.flock(fd, fcntl.LOCK_UN)
