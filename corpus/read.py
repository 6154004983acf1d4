"""Safe reads: a file is served only if it is a regular UTF-8 text file inside its root.

Every refusal is a `Skipped` with a reason a person can act on and a `SkipKind` code can act on
(together, a `Refusal`). FIFOs, sockets and devices are never opened (and the open is
non-blocking anyway, in case one is swapped in after the check).
The server is read-only: nothing here writes, moves or deletes.
"""

from __future__ import annotations

import errno
import hashlib
import os
import stat
import time
from dataclasses import dataclass
from enum import Enum
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


_AGAIN_FLAGS = _OPEN_FLAGS & ~getattr(os, "O_NOFOLLOW", 0)
"""`read_again` follows a link the walk followed to the file (its bytes are checked)."""
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_DIR_FLAGS = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_CLOEXEC", 0)
_CONFINED = os.open in os.supports_dir_fd and _NOFOLLOW != 0
"""Opens can walk from the root with no-follow at each step (Linux, macOS, the BSDs)."""
_PREAD = hasattr(os, "pread")
_MOVED = {errno.ELOOP, errno.ENOTDIR, getattr(errno, "EMLINK", errno.ELOOP)}
"""What an open without following links says when it meets a link (FreeBSD says EMLINK)."""

QUIET_NS = 30_000_000
"""How long a file must have been still before it is read (see `_quiet`): well over the tick of
a Linux or Windows file system clock (4-16 ms)."""
RECENT_NS = 2_000_000_000
"""A file changed less than this long ago is read twice (see `_read_settled`): two seconds cover
the coarsest clocks of common file systems (FAT's two, HFS+'s one)."""


class Changing(CorpusError):
    """The file changed while it was being read (a save in progress): read it again later."""


class SkipKind(Enum):
    """What kind of refusal keeps a file out of the corpus: what code decides on (`doctor` tells
    the corpus working as meant from what an author should fix); the reason, said to a person,
    goes beside it (`Refusal`)."""

    IGNORED = "ignored"
    """In an ignored folder (`.git/`, `node_modules/`), or left out by `.gitignore` or `.agentsignore`."""
    EDITOR_TEMP = "editor-temp"
    """An editor's scratch or backup file."""
    SECRET = "secret"
    """A name on the secrets denylist."""
    NAME = "name"
    """A name never served: not UTF-8, holding a backslash, an ignore file, not one of the
    conventional agent files (in the conventional root)."""
    LINK = "link"
    """A symlink that is broken, leaves the root, leads to something refused, or to a folder
    inside the root (its files are served under their real path)."""
    NOT_REGULAR = "not-regular"
    """A FIFO, socket or device."""
    TOO_LARGE = "too-large"
    """Over the size limit (`--max-bytes`)."""
    NOT_TEXT = "not-text"
    """Binary, or not UTF-8."""
    UNREADABLE = "unreadable"
    """The file, a folder on its way, or its path could not be read."""


@dataclass(frozen=True, slots=True)
class Refusal:
    """Why a file is not served: its kind, and the reason as a person reads it."""

    kind: SkipKind
    reason: str


class Skipped(NotInCorpus):
    """A file the corpus does not serve, with the reason (kept for status) and its kind."""

    def __init__(self, kind: SkipKind, reason: str) -> None:
        super().__init__(reason)
        self.reason = str(self)
        self.kind = kind

    @property
    def refusal(self) -> Refusal:
        return Refusal(self.kind, self.reason)


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
        if _is_link(path):
            raise Skipped(SkipKind.LINK, "broken symlink") from None
        raise NotInCorpus(f"no such file: {path.name}") from None
    except (OSError, RuntimeError) as exc:  # loops raise RuntimeError on 3.10-3.12
        raise Skipped(SkipKind.UNREADABLE, f"unresolvable path ({_why(exc)})") from None
    if real != root and not real.is_relative_to(root):
        raise Skipped(SkipKind.LINK, "symlink target leaves the root")
    return real


def _is_link(path: Path) -> bool:
    try:
        return path.is_symlink()
    except OSError:  # a name too long, a folder on the way unreadable: not a link we can see
        return False


def read_text(
    root: Path, path: Path, max_bytes: int = DEFAULT_MAX_BYTES, identity: tuple[int, int] | None = None
) -> FileText:
    """Read one corpus file, or raise `Skipped` (or `NotInCorpus` when it does not exist).

    The path is resolved (it must stay inside `root`, a real path), then opened from the root one
    folder at a time without following any link (`open_confined`), so a folder swapped for a link
    after the check cannot lead the read outside. `identity` is the (st_dev, st_ino) a walk saw for
    `path` after reaching it from the root without following any link: then the path is not
    resolved again, and the file opened must be that very file (else `Changing`: it was replaced).
    A file changed during the read raises `Changing` too (see `_read_settled`).
    """
    if identity is None:
        real = resolve_inside(root, path)
        try:
            st = real.stat()
        except OSError as exc:
            raise Skipped(SkipKind.UNREADABLE, f"unreadable ({_why(exc)})") from None
        refused = kind_of(st.st_mode)  # never open a FIFO or a device
        if refused:
            raise Skipped(SkipKind.NOT_REGULAR, refused)
    else:
        real = path
    try:
        fd = open_confined(root, real)
    except FileNotFoundError:
        raise NotInCorpus(f"no such file: {path.name}") from None
    except OSError as exc:
        if exc.errno in _MOVED:
            raise Changing(f"{path.name} (or a folder on its way) became a symlink") from None
        raise Skipped(SkipKind.UNREADABLE, f"unreadable ({_why(exc)})") from None
    try:
        opened = os.fstat(fd)
        if identity is not None and (opened.st_dev, opened.st_ino) != identity:
            raise Changing(f"{path.name} was replaced")
        refused = kind_of(opened.st_mode)
        if refused:
            raise Skipped(SkipKind.NOT_REGULAR, refused)
        if opened.st_size > max_bytes:
            raise Skipped(SkipKind.TOO_LARGE, f"too large ({opened.st_size} bytes, limit {max_bytes})")
        opened = _quiet(fd, opened, path.name)
        data = _read_settled(fd, max_bytes, opened, path.name)
        _still_there(real, opened, path.name)
    except OSError as exc:
        raise Skipped(SkipKind.UNREADABLE, f"unreadable ({_why(exc)})") from None
    finally:
        os.close(fd)
    return FileText(
        text=decode(data),
        size=len(data),
        mtime_ns=opened.st_mtime_ns,
        ctime_ns=opened.st_ctime_ns,
        digest=hashlib.blake2b(data, digest_size=16).hexdigest(),
    )


def open_confined(root: Path, real: Path) -> int:
    """A read-only descriptor of `real` (a resolved path inside `root`), opened from the root one
    component at a time, each without following a link: a folder swapped for a link on the way
    raises `OSError` (ELOOP or ENOTDIR) instead of leaving the root. Where the platform has no
    `dir_fd` opens (Windows), the file is opened by path and must then still resolve, inside the
    root, to the file opened (a swap and a swap back between the two is not caught there)."""
    parts = real.relative_to(root).parts
    if not _CONFINED:
        fd = os.open(real, _OPEN_FLAGS)
        try:
            again = resolve_inside(root, real)
            now, opened = again.stat(), os.fstat(fd)
            if (now.st_dev, now.st_ino) != (opened.st_dev, opened.st_ino):
                raise OSError(errno.ELOOP, "moved while it was opened")
        except BaseException:
            os.close(fd)
            raise
        return fd
    fd = os.open(root, _DIR_FLAGS)
    try:
        for part in parts[:-1]:
            inner = os.open(part, _DIR_FLAGS | _NOFOLLOW, dir_fd=fd)
            os.close(fd)
            fd = inner
        if not parts:
            raise IsADirectoryError(errno.EISDIR, "a folder")
        return os.open(parts[-1], _OPEN_FLAGS, dir_fd=fd)
    finally:
        os.close(fd)


def _quiet(fd: int, opened: os.stat_result, name: str) -> os.stat_result:
    """The file's stat once it has been still for `QUIET_NS`: a file changed more recently waits
    (once) until it has, so that a write during the read lands in a later tick of the file
    system's clock and shows in the times; `Changing` if it changed again meanwhile."""
    age = time.time_ns() - max(opened.st_mtime_ns, opened.st_ctime_ns)
    if not 0 <= age < QUIET_NS:
        return opened
    time.sleep((QUIET_NS - age) / 1e9)
    now = os.fstat(fd)
    if stamp(now) != stamp(opened):
        raise Changing(f"{name} changed while it was read")
    return now


def _read_settled(fd: int, max_bytes: int, opened: os.stat_result, name: str) -> bytes:
    """The file's bytes, one version of them, or `Changing`.

    A write during the read shows in the size and times (`_quiet` made sure it lands in a later
    tick of the clock), except on file systems whose clock ticks by the second (FAT, HFS+). So a
    file changed in the last two seconds is read twice and must read the same both times. What no
    reader can tell is a writer stopped mid-write for longer than all this: the file is then, on
    disk, what was read."""
    data = _read_at_most(fd, max_bytes + 1, opened.st_size)
    if len(data) > max_bytes:
        raise Skipped(SkipKind.TOO_LARGE, f"too large (over {max_bytes} bytes)")
    after = os.fstat(fd)
    if stamp(after) != stamp(opened) or len(data) != after.st_size:
        raise Changing(f"{name} changed while it was read")
    if time.time_ns() - max(opened.st_mtime_ns, opened.st_ctime_ns) < RECENT_NS:
        again = os.pread(fd, len(data) + 1, 0) if _PREAD else _reread(fd, len(data) + 1)
        if again != data or stamp(os.fstat(fd)) != stamp(opened):
            raise Changing(f"{name} changed while it was read")
    return data


def _still_there(real: Path, opened: os.stat_result, name: str) -> None:
    """`Changing` unless the path still names the file that was read: renamed away or replaced
    since it was opened, its bytes are not what the path holds now, and the file now there can
    carry the very same size and times (both written in one tick of the file system's clock)."""
    try:
        now = real.lstat()
    except FileNotFoundError:
        raise Changing(f"{name} was replaced while it was read") from None
    if (now.st_dev, now.st_ino) != (opened.st_dev, opened.st_ino):
        raise Changing(f"{name} was replaced while it was read")


def _reread(fd: int, limit: int) -> bytes:
    os.lseek(fd, 0, os.SEEK_SET)
    return _read_at_most(fd, limit, limit - 1)


def read_again(path: str, size: int, digest: str) -> str | None:
    """The text of a file read before (by `read_text`) if it still holds exactly the bytes read
    then (`size` bytes with this `digest`), else None: what an answer checks before it shows a
    docs hit's lines (see `live.texts.content`), about five times cheaper than `read_text`. The
    path is not confined as `read_text` confines it, and need not be: nothing is returned unless
    it is those very bytes, which `read_text` read safely. Only a regular file of that size is
    opened, and never waited on (`O_NONBLOCK`: a FIFO swapped in reads nothing)."""
    try:
        st = os.stat(path)  # noqa: PTH116 - a str path: every hit of an answer is read so
        if not stat.S_ISREG(st.st_mode) or st.st_size != size:
            return None
        fd = os.open(path, _AGAIN_FLAGS)
        try:
            data = _read_at_most(fd, size + 1, size)
        finally:
            os.close(fd)
    except OSError:
        return None
    if len(data) != size or hashlib.blake2b(data, digest_size=16).hexdigest() != digest:
        return None
    return decode(data)


def stamp(st: os.stat_result) -> Stamp:
    return (st.st_size, st.st_mtime_ns, st.st_ctime_ns)


def decode(data: bytes) -> str:
    """UTF-8 text with the BOM dropped and CRLF/CR turned into LF, or `Skipped`."""
    if b"\0" in data:
        raise Skipped(SkipKind.NOT_TEXT, "binary (contains NUL bytes)")
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise Skipped(SkipKind.NOT_TEXT, f"not UTF-8 text (invalid byte at offset {exc.start})") from None
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
