"""Safe reads: a file is served only if it is a regular UTF-8 text file inside its root.

Every refusal is a `Skipped` with a reason a person can act on. FIFOs, sockets and devices are
never opened (and the open is non-blocking anyway, in case one is swapped in after the check).
The server is read-only: nothing here writes, moves or deletes.
"""

from __future__ import annotations

import errno
import hashlib
import os
import stat
from dataclasses import dataclass
from pathlib import Path

from corpus.errors import CorpusError, NotInCorpus

DEFAULT_MAX_BYTES = 1024 * 1024

Stamp = tuple[int, int, int]
"""What a stat sweep compares: (size, mtime_ns, ctime_ns); the ctime catches a chmod."""

_OPEN_FLAGS = (
    os.O_RDONLY
    | getattr(os, "O_NONBLOCK", 0)
    | getattr(os, "O_NOFOLLOW", 0)
    | getattr(os, "O_CLOEXEC", 0)
    | getattr(os, "O_BINARY", 0)
)


class Changing(CorpusError):
    """The file changed while it was being read (a save in progress): read it again later."""


class Skipped(NotInCorpus):
    """A file the corpus does not serve, with the reason (kept for status)."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


@dataclass(frozen=True, slots=True)
class FileText:
    text: str
    """Decoded text, BOM removed, line endings normalised to `\\n`."""
    size: int
    mtime_ns: int
    ctime_ns: int
    """Changes with permissions too, so a chmod is noticed by a stat sweep."""
    digest: str
    """BLAKE2b of the bytes: tells a real edit from a touch."""

    @property
    def stamp(self) -> Stamp:
        return (self.size, self.mtime_ns, self.ctime_ns)


def kind_of(mode: int) -> str | None:
    """Why a non-regular, non-directory file is refused, or None for a regular file."""
    if stat.S_ISREG(mode):
        return None
    if stat.S_ISFIFO(mode):
        return "not a regular file (FIFO)"
    if stat.S_ISSOCK(mode):
        return "not a regular file (socket)"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "not a regular file (device)"
    return "not a regular file"


def resolve_inside(root: Path, path: Path) -> Path:
    """The real path of `path`, which must stay inside `root` (itself a real path)."""
    try:
        real = path.resolve(strict=True)
    except FileNotFoundError:
        if path.is_symlink():
            raise Skipped("broken symlink") from None
        raise NotInCorpus(f"no such file: {path.name}") from None
    except (OSError, RuntimeError) as exc:  # loops raise RuntimeError on 3.10-3.12
        raise Skipped(f"unresolvable path ({_why(exc)})") from None
    if real != root and not real.is_relative_to(root):
        raise Skipped("symlink target leaves the root")
    return real


def read_text(
    root: Path, path: Path, max_bytes: int = DEFAULT_MAX_BYTES, identity: tuple[int, int] | None = None
) -> FileText:
    """Read one corpus file, or raise `Skipped` (or `NotInCorpus` when it does not exist).

    `identity` is the (st_dev, st_ino) a walk saw for `path` after reaching it from the root
    without following any link: then the path is not resolved again, the open refuses a final
    symlink, and the file opened must be that very file (else `Changing`: it was replaced).
    """
    if identity is None:
        real = resolve_inside(root, path)
        try:
            st = real.stat()
        except OSError as exc:
            raise Skipped(f"unreadable ({_why(exc)})") from None
        refused = kind_of(st.st_mode)  # never open a FIFO or a device
        if refused:
            raise Skipped(refused)
    else:
        real = path
    try:
        fd = os.open(real, _OPEN_FLAGS)
    except FileNotFoundError:
        raise NotInCorpus(f"no such file: {path.name}") from None
    except OSError as exc:
        if identity is not None and getattr(exc, "errno", None) == errno.ELOOP:
            raise Changing(f"{path.name} became a symlink") from None
        raise Skipped(f"unreadable ({_why(exc)})") from None
    try:
        opened = os.fstat(fd)
        if identity is not None and (opened.st_dev, opened.st_ino) != identity:
            raise Changing(f"{path.name} was replaced")
        refused = kind_of(opened.st_mode)
        if refused:
            raise Skipped(refused)
        if opened.st_size > max_bytes:
            raise Skipped(f"too large ({opened.st_size} bytes, limit {max_bytes})")
        data = _read_at_most(fd, max_bytes + 1, opened.st_size)
        after = os.fstat(fd)
    except OSError as exc:
        raise Skipped(f"unreadable ({_why(exc)})") from None
    finally:
        os.close(fd)
    if len(data) > max_bytes:
        raise Skipped(f"too large (over {max_bytes} bytes)")
    settled = stamp(after) == stamp(opened)
    if not settled or len(data) != after.st_size:
        raise Changing(f"{path.name} changed while it was read")
    return FileText(
        text=decode(data),
        size=len(data),
        mtime_ns=opened.st_mtime_ns,
        ctime_ns=opened.st_ctime_ns,
        digest=hashlib.blake2b(data, digest_size=16).hexdigest(),
    )


def stamp(st: os.stat_result) -> Stamp:
    return (st.st_size, st.st_mtime_ns, st.st_ctime_ns)


def decode(data: bytes) -> str:
    """UTF-8 text with the BOM dropped and CRLF/CR turned into LF, or `Skipped`."""
    if b"\0" in data:
        raise Skipped("binary (contains NUL bytes)")
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise Skipped(f"not UTF-8 text (invalid byte at offset {exc.start})") from None
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    return text


def _read_at_most(fd: int, limit: int, expected: int) -> bytes:
    """Up to `limit` bytes; one read when the file is `expected` bytes long, as it usually is
    (a file that grew meanwhile fails the stamp check after the read anyway)."""
    first = os.read(fd, min(limit, expected + 1))
    if len(first) <= expected:
        return first
    chunks: list[bytes] = [first]
    limit -= len(first)
    remaining = limit
    while remaining > 0:
        chunk = os.read(fd, min(remaining, 1 << 20))
        if not chunk:
            break
        chunks.append(chunk)
        remaining -= len(chunk)
    return b"".join(chunks)


def _why(exc: BaseException) -> str:
    if isinstance(exc, PermissionError):
        return "permission denied"
    if isinstance(exc, OSError) and exc.strerror:
        return exc.strerror.lower()
    return type(exc).__name__
