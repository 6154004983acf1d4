"""One way to write a file: whole or not at all, keeping the mode of the file it replaces.

The text goes to a new file beside the target (created without following a link, readable by
this user alone while it is written), is flushed to the disk, takes the mode the target had (or
the one asked for a new file), and is renamed over the target in one step; on any failure the
new file is removed and the target is left as it was. The cache's entries, the hook's session
records, the shared servers' state files and the client configs `setup` edits are all written
here.
"""

from __future__ import annotations

import contextlib
import os
import stat
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO

TEMP = ".tmp"
"""The end of a file being written: `.NAME.XXXXXXXX.tmp` beside its target."""

_CREATE = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_BINARY", 0)


def temporary_name(target: Path) -> Path:
    """A new name beside `target` for the file that will replace it."""
    return target.with_name(f".{target.name}.{os.urandom(4).hex()}{TEMP}")  # `secrets` costs 3 ms of import


def write_atomic(target: Path, data: bytes, *, mode: int | None = None) -> None:
    """Replace `target` with `data` (see `replacing`)."""
    with replacing(target, mode=mode) as out:
        out.write(data)


@contextlib.contextmanager
def replacing(target: Path, *, mode: int | None = None) -> Iterator[BinaryIO]:
    """A file to write that replaces `target` once the block ends without an error.

    `target` is replaced as named: a link there is replaced, not followed (a caller that edits
    through a link resolves it first). A file there keeps its permission bits, and its owner and
    group where this process may set them (where the group cannot be kept, the group's bits are
    dropped rather than given to another group). A new file takes `mode`, else what `open` would
    give it (0o666 less the umask)."""
    try:
        before: os.stat_result | None = target.lstat()
    except FileNotFoundError:
        before = None
    if before is not None and not stat.S_ISREG(before.st_mode):
        before = None  # a link or something else: replaced as a new file
    temp = temporary_name(target)
    private = before is not None or mode is not None
    fd = os.open(temp, _CREATE, 0o600 if private else 0o666)
    try:
        with os.fdopen(fd, "wb") as out:
            yield out
            out.flush()
            os.fsync(out.fileno())
        if before is not None:
            _keep_owner_and_mode(temp, before)
        elif mode is not None:
            temp.chmod(mode)
        temp.replace(target)
    except BaseException:
        with contextlib.suppress(OSError):
            temp.unlink()
        raise
    _sync_folder(target.parent)


def _keep_owner_and_mode(temp: Path, before: os.stat_result) -> None:
    bits = stat.S_IMODE(before.st_mode)
    chown = getattr(os, "chown", None)
    if chown is not None:
        mine = temp.stat()
        if (mine.st_uid, mine.st_gid) != (before.st_uid, before.st_gid):
            try:
                chown(temp, before.st_uid, before.st_gid)
            except OSError:
                try:
                    chown(temp, -1, before.st_gid)  # a group of ours, without the owner
                except OSError:
                    bits &= ~0o070  # another group would read what the file's group read
    temp.chmod(bits)


def _sync_folder(folder: Path) -> None:
    """Flush the folder's entry of the rename too (POSIX; Windows has no handle on a folder)."""
    if sys.platform == "win32":
        return
    with contextlib.suppress(OSError):
        fd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
