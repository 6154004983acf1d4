"""What the hook keeps in the user's state folder (`writes.state`), never in a project: a record per
session of the rules it was given (`Session`), removed a week after its last use (`sweep`), and
`hook.log`, a line per problem (`log`).

Nothing there is trusted: a record that is not one (corrupt, too large, a list, a link, a FIFO) is
read as empty and logged; a link planted where a record, a lock or the log goes is never followed;
the sweep removes only the files named as the hook names them; the log is cut at `MAX_LOG` bytes.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import stat
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from corpus.names import printable
from writes.atomic import write_atomic
from writes.locks import LockTimeout, locked
from writes.state import state_dir

SESSION_DAYS = 7
"""A session's record unused this long is removed."""
LOCK_WAIT_S = 3.0
"""How long a hook waits for another hook of its session (hosts stop a hook after 10 s or more)."""
MAX_RECORD = 1 << 20
"""The largest session record read (a rule's key is about 60 bytes: some 16,000 rules)."""
MAX_LOG = 1 << 20
"""`hook.log` past this size is moved to `hook.log.1` (replacing the one before) and begun again."""
MAX_LOG_LINE = 2_000
"""The most characters of one line of the log."""

_RECORD = r"[a-z-]+-[A-Za-z0-9_.-]*"
_OWN = re.compile(rf"{_RECORD}\.(?:json|lock)|\.{_RECORD}\.json\.[0-9a-f]{{8}}\.tmp")
"""The files of the hook in `sessions/`: a record (`CLIENT-READABLE-DIGEST.json`, and before the
digest `CLIENT-SAFE-ID.json`), its lock (`.lock`) and what `write_atomic` leaves when stopped
(`writes.atomic.temporary_name`)."""
_READABLE = 40
"""The characters of a session's id kept in its file's name, for a person looking at the folder."""
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_NONBLOCK = getattr(os, "O_NONBLOCK", 0)


def sessions_dir() -> Path:
    """The folder of the session records: made if missing, refused if it is a link or not a
    folder, or if the state folder is a relative path (it would be the project's)."""
    base = state_dir()
    if not base.is_absolute():
        raise OSError(f"the state folder {base} is not an absolute path: nothing is written there")
    folder = base / "sessions"
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    if not stat.S_ISDIR(folder.lstat().st_mode):
        raise OSError(f"{folder} is not a folder (a link?): no session is recorded")
    return folder


def record_path(client: str, session: str) -> Path:
    """Where a session's record is: named by a digest of the client and the exact id (two ids
    that read alike, `a/1` and `a_1`, are two sessions), after the id's start as a name can hold it."""
    exact = f"{client}\0{session}".encode("utf-8", "surrogatepass")
    readable = re.sub(r"[^A-Za-z0-9_.-]", "_", session[:_READABLE])
    return sessions_dir() / f"{client}-{readable}-{hashlib.sha256(exact).hexdigest()[:32]}.json"


@dataclass
class Session:
    """What one session was given: rule keys (`path#anchor`), in a JSON file of the state folder."""

    where: Path
    given: set[str] = field(default_factory=set)

    @classmethod
    @contextlib.contextmanager
    def held(cls, client: str, session: str, reset: bool) -> Iterator[Session]:
        """The session's record, locked while the hook reads and extends it (a host runs hooks of
        parallel tool calls at once; one waits `LOCK_WAIT_S` at most), written back when the block
        ends without an error."""
        where = record_path(client, session)
        with locked(where.with_suffix(".lock"), timeout=LOCK_WAIT_S):
            read = None if reset else _given(where)
            record = cls(where, set(read or ()))
            yield record
            if record.given != read:  # written when it changed, was reset or was not a record
                write_atomic(where, json.dumps({"given": sorted(record.given)}).encode("utf-8"), mode=0o600)


def _given(where: Path) -> set[str] | None:
    """The rule keys of a record: an empty set when there is none, None (and a line in the log)
    when it is not a record."""
    data = read_json(where, MAX_RECORD, "session record")
    if data is None or data is MISSING:
        return None if data is None else set()
    given = data.get("given") if isinstance(data, dict) else None
    if not isinstance(given, list):
        log(f'session record {where.name} holds no "given" list: taken as empty')
        return None
    if any(not isinstance(key, str) for key in given):
        log(f"session record {where.name} holds keys that are not strings: taken as empty")
        return None
    return set(given)


MISSING = object()
"""What `read_json` gives for a file that is not there."""


def read_json(where: Path, most: int, what: str) -> object:
    """The JSON of a plain file of at most `most` bytes, never through a link; `MISSING` when
    there is none, None (and a line in the log, naming it `what`) when it is not such a file."""
    try:
        fd = os.open(where, os.O_RDONLY | _NOFOLLOW | _NONBLOCK)
    except FileNotFoundError:
        return MISSING
    except OSError as exc:
        log(f"{what} {where.name} not read ({exc.strerror}): taken as empty")
        return None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_size > most:
            log(f"{what} {where.name} is not a file of at most {most:,} bytes: taken as empty")
            return None
        chunks: list[bytes] = []
        while chunk := os.read(fd, most + 1 - sum(map(len, chunks))):
            chunks.append(chunk)
        return json.loads(b"".join(chunks).decode("utf-8"))
    except (OSError, ValueError, RecursionError) as exc:
        log(f"{what} {where.name} is not JSON ({type(exc).__name__}): taken as empty")
        return None
    finally:
        os.close(fd)


def sweep(clients: frozenset[str], days: float = SESSION_DAYS) -> None:
    """Removes the records (and locks) of sessions unused for `days`, and what a hook stopped
    mid-write left: only plain files named as the hook names them, never a link, a folder or
    anything else. A record whose session's hook is running is left."""
    cutoff = time.time() - days * 86_400
    try:
        folder = sessions_dir()
        with os.scandir(folder) as entries:
            old = [e.name for e in entries if _ours(e.name, clients) and _old(folder / e.name, cutoff)]
    except OSError as exc:
        log(f"the sessions folder could not be swept: {exc}")
        return
    for name in old:
        path = folder / name
        with contextlib.suppress(OSError, LockTimeout):
            if name.endswith(".json"):  # under its session's lock, so no hook of it is mid-way
                with locked(path.with_suffix(".lock"), timeout=0):
                    if _old(path, cutoff):
                        path.unlink()
                        path.with_suffix(".lock").unlink()
            elif not name.endswith(".lock") or not path.with_suffix(".json").exists():
                path.unlink()


def _ours(name: str, clients: frozenset[str]) -> bool:
    if _OWN.fullmatch(name) is None:
        return False
    return any(name.removeprefix(".").startswith(f"{client}-") for client in clients)


def _old(path: Path, cutoff: float) -> bool:
    try:
        st = path.lstat()
    except OSError:
        return False
    return stat.S_ISREG(st.st_mode) and st.st_mtime < cutoff


def log(line: str) -> None:
    """One line in `hook.log` in the state folder, bytes that are not UTF-8 escaped; never through
    a link or into anything but a plain file, the file moved aside past `MAX_LOG` bytes. A log
    that cannot be written is done without."""
    text = printable(line)
    text = text if len(text) <= MAX_LOG_LINE else text[:MAX_LOG_LINE] + "..."
    with contextlib.suppress(OSError, ValueError):
        folder = state_dir()
        if not folder.is_absolute():
            return
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        path = folder / "hook.log"
        with contextlib.suppress(FileNotFoundError):
            st = path.lstat()
            if stat.S_ISREG(st.st_mode) and st.st_size > MAX_LOG:
                path.replace(folder / "hook.log.1")
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | _NOFOLLOW | _NONBLOCK, 0o600)
        try:
            if stat.S_ISREG(os.fstat(fd).st_mode):
                stamp = time.strftime("%Y-%m-%dT%H:%M:%S")
                os.write(fd, f"{stamp} {text}\n".encode("utf-8", "backslashreplace"))
        finally:
            os.close(fd)
