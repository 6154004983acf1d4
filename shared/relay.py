"""`agents-context-shared [FLAGS]`: the stdio command a client starts, relaying to one server that
every session started with the same flags, in the same folder, shares.

A client that can only start a stdio server (or a user who would rather not run a server of their
own) gets one process per session: five sessions, five indexes. This command is small (the
standard library, no MCP SDK, no index): it finds the shared server published in the state folder,
starts it when none answers, and copies the client's stdio to it and back, byte for byte, over a
local TCP connection. Before a byte of the session is sent, the server and the relay each prove
that they hold the token the state file names (`HANDSHAKE`), without sending it. The server is
`agents-context` itself, started detached; it serves every connection as a session of its own and
ends once none has been open for `$AGENTS_CONTEXT_SHARED_IDLE` seconds (default 300).
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import json
import os
import re
import secrets
import socket
import stat
import subprocess
import sys
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from writes.atomic import write_atomic
from writes.locks import LockTimeout, locked
from writes.state import STATE_ENV, state_dir

SHARED_ENV = "AGENTS_CONTEXT_SHARED"
"""Set on the server this command starts: the file it publishes its port and token in."""
IDLE_ENV = "AGENTS_CONTEXT_SHARED_IDLE"
"""Seconds the shared server stays up with no session open (default `IDLE_S`)."""
IDLE_S = 300.0
SERVED_BY = ("AGENTS_CONTEXT_ROOT", "AGENTS_CONTEXT_CACHE_DIR")
"""The variables that change what a server serves: `corpus.roots.ENV_ROOT` and `live.cache.ENV`,
named here rather than imported, since this process stays small (those modules load YAML and
numpy)."""
START_S = 120.0
"""How long a start may take before this command gives up (a cold start of a large --docs root
serves long before its index is whole)."""
HANDSHAKE_S = 3.0
"""How long a server has to connect and prove itself; one that has not is taken for none."""
HANDSHAKE = b"agents-context-shared/2"
"""The first word of every line of the handshake, which goes (one line each, `nonce`s of 32 hex
digits, `mac`s the hex HMAC-SHA256 under the token of `HANDSHAKE role relay-nonce server-nonce`):

    relay:  agents-context-shared/2 hello RELAY-NONCE
    server: agents-context-shared/2 server SERVER-NONCE MAC(server)
    relay:  agents-context-shared/2 relay MAC(relay)
    server: agents-context-shared/2 ok

The relay sends its proof only once the server's holds, and the session only after `ok`."""
LINE_MAX = 200
"""The longest line of the handshake either side reads (each is at most 124 bytes)."""
WELCOME = HANDSHAKE + b" ok\n"
_STATE_MAX = 4096
_NONCE = re.compile(rb"[0-9a-f]{32}")
_WITHDRAW_S = 2.0


class ShareError(Exception):
    """Why no shared server could be reached, in one sentence for the client's log."""


@dataclass(frozen=True, slots=True)
class Published:
    """What a shared server writes in its state file."""

    port: int
    token: str
    pid: int


def idle_s(env: Mapping[str, str] | None = None) -> float:
    """The idle time `$AGENTS_CONTEXT_SHARED_IDLE` asks for (seconds), else `IDLE_S`."""
    given = (os.environ if env is None else env).get(IDLE_ENV, "").strip()
    try:
        seconds = float(given) if given else IDLE_S
    except ValueError:
        raise ShareError(f"{IDLE_ENV}={given!r} is not a number of seconds.") from None
    if not seconds > 0:
        raise ShareError(f"{IDLE_ENV}={given!r}: the idle time must be more than 0 seconds.")
    return seconds


def state_file(argv: Sequence[str], cwd: Path, env: Mapping[str, str]) -> Path:
    """The state file of the server these flags, this folder and these settings share: one per
    installed code, interpreter, folder, flags and value of each variable the server reads, so a
    session never joins a server that serves something else. Named after the folder."""
    named = [env.get(name, "") for name in SERVED_BY]
    blob = json.dumps([_installed(), sys.executable, str(cwd), list(argv), named])
    digest = hashlib.sha256(blob.encode("utf-8", "surrogatepass")).hexdigest()[:16]
    name = re.sub(r"[^a-z0-9]+", "-", cwd.name.casefold()).strip("-")[:40] or "root"
    folder = Path(env[STATE_ENV]) if env.get(STATE_ENV) else state_dir()
    return folder / "shared" / f"{name}-{digest}.json"


def _installed() -> list[int]:
    """The installed code, as the size and time of its `server.py`: an upgrade or a reinstall
    writes it anew (read so rather than by `importlib.metadata`, which costs this small process
    a third more memory)."""
    try:
        stat_ = (Path(__file__).resolve().parents[1] / "server.py").stat()
    except OSError:
        return []
    return [stat_.st_size, stat_.st_mtime_ns]


def _mac(token: str, role: bytes, relay_nonce: bytes, server_nonce: bytes) -> bytes:
    message = b" ".join((HANDSHAKE, role, relay_nonce, server_nonce))
    return hmac.new(token.encode("utf-8"), message, hashlib.sha256).hexdigest().encode("ascii")


@dataclass(frozen=True, slots=True)
class Serving:
    """The server this command started, as `shared.sessions.serve_sockets` serves it: its state
    file, idle time and token, and its side of the handshake."""

    path: Path
    idle_s: float
    token: str = field(default_factory=lambda: secrets.token_hex(16), repr=False)

    @property
    def welcome(self) -> bytes:
        return WELCOME

    def answer(self, hello: bytes) -> tuple[bytes, bytes] | None:
        """The server's proof for a relay's `hello` line, and the proof that relay must then send;
        None when `hello` is not a relay's."""
        words = hello.split()
        if len(words) != 3 or words[:2] != [HANDSHAKE, b"hello"] or not _NONCE.fullmatch(words[2]):
            return None
        theirs, ours = words[2], secrets.token_hex(16).encode("ascii")
        proof = b" ".join((HANDSHAKE, b"server", ours, _mac(self.token, b"server", theirs, ours)))
        expected = b" ".join((HANDSHAKE, b"relay", _mac(self.token, b"relay", theirs, ours)))
        return proof + b"\n", expected

    def publish(self, port: int) -> None:
        """Write the state file (once the server listens): readable by this user only, written
        whole and then renamed into place, so a reader never sees half of it. A file already
        there is removed first, so that its mode (were it readable by others) is not kept."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.path.unlink(missing_ok=True)
        text = json.dumps({"port": port, "token": self.token, "pid": os.getpid()})
        write_atomic(self.path, text.encode("utf-8"), mode=0o600)

    def withdraw(self) -> None:
        """Remove the state file if it is still this process's (as the server ends), under the
        lock a relay holds while it starts another server, so that one is never removed."""
        with contextlib.suppress(OSError, LockTimeout), locked(_lock(self.path), timeout=_WITHDRAW_S):
            found = published(self.path)
            if found is not None and found.pid == os.getpid():
                self.path.unlink()


def serving() -> Serving | None:
    """For the server this command started (None in any other): what `shared.sessions`
    `serve_sockets` serves. Read once, into the server's settings (`Settings.relayed`), and taken
    out of the environment, so that no process the server starts takes itself for relayed."""
    named = os.environ.pop(SHARED_ENV, None)
    if named is None:
        return None
    return Serving(Path(named), idle_s())


def published(path: Path) -> Published | None:
    """What the state file says, or None when there is none, or none to trust."""
    found = _read_state(path)
    return found if isinstance(found, Published) else None


_OPEN = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0)


def _read_state(path: Path) -> Published | str | None:
    """The state file's server; None when there is no file; why it is not trusted otherwise: a
    link, not a plain file of this user's readable by no one else, too long, or not a state."""
    try:
        if sys.platform == "win32" and path.is_symlink():  # no O_NOFOLLOW there
            return "it is a link"
        fd = os.open(path, _OPEN)
    except FileNotFoundError:
        return None
    except OSError as exc:
        return "it is a link" if path.is_symlink() else f"it cannot be read ({exc.strerror or exc})"
    with os.fdopen(fd, "rb") as file:
        found = os.fstat(file.fileno())
        if not stat.S_ISREG(found.st_mode):
            return "it is not a plain file"
        if hasattr(os, "geteuid") and (found.st_uid != os.geteuid() or found.st_nlink != 1):
            return "it belongs to another user" if found.st_uid != os.geteuid() else "it has other names"
        if hasattr(os, "geteuid") and found.st_mode & 0o077:
            return "others may read it"
        data = file.read(_STATE_MAX + 1)
    try:
        value = json.loads(data)
        port, token, pid = value["port"], value["token"], value["pid"]
    except (ValueError, KeyError, TypeError, RecursionError):
        port = token = pid = None
    if len(data) > _STATE_MAX or not _valid(port, token, pid):
        return "it is not a state file of agents-context-shared"
    return Published(int(port), str(token), int(pid))


def _valid(port: object, token: object, pid: object) -> bool:
    def whole(n: object, below: int) -> bool:
        return isinstance(n, int) and not isinstance(n, bool) and 0 < n < below

    return whole(port, 1 << 16) and whole(pid, 1 << 63) and isinstance(token, str) and 0 < len(token) <= 256


def _lock(path: Path) -> Path:
    return path.with_suffix(".lock")


def _own_folder(folder: Path) -> None:
    """Make the state folder, and see that it is this user's and no one else may write in it
    (made so; an older one is made so): a state file is trusted for what it names."""
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    if not hasattr(os, "geteuid"):  # Windows: the folder is in the user's profile
        return
    found = folder.stat()
    if found.st_uid != os.geteuid():
        raise ShareError(f"the state folder {folder} belongs to another user, so what it says is not trusted")
    if found.st_mode & 0o077:
        folder.chmod(0o700)


@dataclass(slots=True)
class Connection:
    """A connection to the shared server past the handshake, and what the server sent after it."""

    sock: socket.socket
    first: bytes


def connect(found: Published, within: float = HANDSHAKE_S) -> Connection | None:
    """A connection to the server `found` names, once it proved it holds the token and this
    relay proved it too; None when nothing answers, or something that could not prove it, within
    `within` seconds in all."""
    deadline = time.monotonic() + within
    try:
        sock = socket.create_connection(("127.0.0.1", found.port), timeout=within)
    except OSError:
        return None
    try:
        ours = secrets.token_hex(16).encode("ascii")
        sock.sendall(b" ".join((HANDSHAKE, b"hello", ours)) + b"\n")
        buffer = bytearray()
        theirs = _proved(_line(sock, buffer, deadline), found.token, ours)
        if theirs is not None:
            sock.sendall(b" ".join((HANDSHAKE, b"relay", _mac(found.token, b"relay", ours, theirs))) + b"\n")
            if _line(sock, buffer, deadline) == WELCOME.rstrip(b"\n"):
                sock.settimeout(None)
                return Connection(sock, bytes(buffer))
    except OSError:
        pass
    sock.close()
    return None


def _proved(line: bytes | None, token: str, ours: bytes) -> bytes | None:
    """The server's nonce, when `line` proves the server holds `token`; else None."""
    words = (line or b"").split()
    if len(words) != 4 or words[:2] != [HANDSHAKE, b"server"] or not _NONCE.fullmatch(words[2]):
        return None
    return words[2] if hmac.compare_digest(words[3], _mac(token, b"server", ours, words[2])) else None


def _line(sock: socket.socket, buffer: bytearray, deadline: float) -> bytes | None:
    """The next line from `sock` (`buffer` holds what came after it), or None: the connection
    ended, or no whole line of at most `LINE_MAX` bytes came before `deadline`."""
    while b"\n" not in buffer:
        left = deadline - time.monotonic()
        if len(buffer) > LINE_MAX or left <= 0:
            return None
        sock.settimeout(left)
        chunk = sock.recv(LINE_MAX + 1 - len(buffer))
        if not chunk:
            return None
        buffer += chunk
    line, _, rest = bytes(buffer).partition(b"\n")
    buffer[:] = rest
    return line if len(line) <= LINE_MAX else None


def reach(argv: Sequence[str], cwd: Path, env: Mapping[str, str]) -> Connection:
    """A connection to the shared server for these flags, started first if none answers. One
    process starts it; the others wait on the state file's lock and then connect."""
    path = state_file(argv, cwd, env)
    idle_s(env)  # a bad value is said here, not in the detached server's log
    _own_folder(path.parent)
    first = _trusted(path)
    joined = connect(first) if first is not None else None
    if joined is not None:
        return joined
    try:
        with locked(_lock(path), timeout=START_S + 2 * HANDSHAKE_S):
            again = published(path)  # another session may have started one meanwhile
            if again is not None and again != first and (joined := connect(again)) is not None:
                return joined
            return _start(path, argv, cwd, env)
    except LockTimeout:
        raise ShareError(f"another session has been starting the shared server for {START_S:.0f} s") from None


def _trusted(path: Path) -> Published | None:
    found = _read_state(path)
    if isinstance(found, str):
        _say(f"not using {path}: {found}; a new shared server replaces it")
        return None
    return found


def _start(path: Path, argv: Sequence[str], cwd: Path, env: Mapping[str, str]) -> Connection:
    log = path.with_suffix(".log")  # the server's log: every start begins a new one, never through a link
    err = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_NOFOLLOW", 0), 0o600)
    try:
        process = subprocess.Popen(
            [sys.executable, "-c", "import sys; del sys.path[0]; from server import main; main()", *argv],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=err,
            cwd=cwd,
            env={**env, SHARED_ENV: str(path)},
            **_detached(),
        )
    finally:
        os.close(err)
    deadline = time.monotonic() + START_S
    while time.monotonic() < deadline:
        found = published(path)
        if found is not None and found.pid == process.pid and (joined := connect(found)) is not None:
            return joined
        if process.poll() is not None:
            raise ShareError(f"the shared server stopped as it started: {_last_line(log)}")
        time.sleep(0.05)
    raise ShareError(f"the shared server did not listen within {START_S:.0f} s (its log: {log})")


def _detached() -> dict[str, Any]:
    """Start the server in a session of its own, so that it outlives the client that started it
    and no signal meant for that client's group reaches it."""
    if sys.platform == "win32":
        flags = subprocess.CREATE_NEW_PROCESS_GROUP | subprocess.DETACHED_PROCESS
        return {"creationflags": flags}
    return {"start_new_session": True}


def _last_line(log: Path) -> str:
    try:
        lines = log.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        lines = []
    said = [line.strip() for line in lines if line.strip()]
    return said[-1] if said else f"it wrote nothing (its log: {log})"


def relay(joined: Connection, stdin: int = 0, stdout: int = 1) -> bool:
    """Copy what comes on the file descriptor `stdin` to the server, and what the server sends to
    `stdout`, until the server closes the connection; True when it did so after `stdin` ended
    (the client left) or the client stopped reading, False before (the server went away).

    Both sides read and write the descriptors themselves: a thread left blocked in a buffered
    `sys.stdin` when the process ends makes the interpreter abort."""
    ended = threading.Event()
    sock = joined.sock

    def upstream() -> None:
        try:
            while chunk := os.read(stdin, 1 << 16):
                sock.sendall(chunk)
        except OSError:
            pass
        finally:
            ended.set()
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_WR)  # the server reads the end of the session

    threading.Thread(target=upstream, name="stdin", daemon=True).start()
    chunk = joined.first
    try:
        while chunk or (chunk := sock.recv(1 << 16)):
            try:
                _write(stdout, chunk)
            except OSError:  # the client stopped reading: it is gone
                return True
            chunk = b""
    except OSError:
        pass
    finally:
        sock.close()
    return ended.is_set()


def _write(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def _say(line: str) -> None:
    """One line on stderr (nothing when there is no stderr)."""
    with contextlib.suppress(OSError):
        _write(2, f"agents-context-shared: {line}\n".encode("utf-8", "replace"))


HELP = """usage: agents-context-shared [FLAGS]

The stdio command for an MCP client, sharing one agents-context server between every session
started with the same FLAGS in the same folder: it starts that server when none runs, and relays
the session to it. FLAGS are those of `agents-context` (see agents-context --help).
The server stays up for $AGENTS_CONTEXT_SHARED_IDLE seconds (default 300) after its last session;
its state and log are in $AGENTS_CONTEXT_STATE_DIR/shared (default: the user's state folder)."""


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv in (["-h"], ["--help"]):
        _write(1, HELP.encode("utf-8") + b"\n")
        return 0
    if any(arg == "--transport" or arg.startswith("--transport=") for arg in argv):
        _say("it relays stdio to a server of its own; leave out --transport")
        return 2
    _hold_standard_descriptors()
    try:
        return _main(argv)
    except KeyboardInterrupt:  # the terminal's ^C: the session ends, the server stays
        return 130


def _hold_standard_descriptors() -> None:
    """Open the null device on each of stdin, stdout and stderr the client left closed: else the
    first file or socket opened takes its number, and the relay would read its own connection
    as the client's input."""
    for fd, flags in ((0, os.O_RDONLY), (1, os.O_WRONLY), (2, os.O_WRONLY)):
        if not _is_open(fd):
            opened = os.open(os.devnull, flags)
            if opened != fd:
                os.dup2(opened, fd)
                os.close(opened)


def _is_open(fd: int) -> bool:
    try:
        os.fstat(fd)
    except OSError:
        return False
    return True


def _main(argv: list[str]) -> int:
    try:
        cwd = Path.cwd()
    except OSError as exc:
        _say(f"cannot use the current folder: {exc.strerror or exc}")
        return 1
    try:
        joined = reach(argv, cwd, os.environ)
    except ShareError as exc:
        _say(str(exc))
        return 1
    except OSError as exc:  # the state folder cannot be made, or its files written
        where = f" ({exc.filename})" if exc.filename else ""
        _say(f"cannot use the state folder: {exc.strerror or exc}{where}")
        return 1
    if relay(joined):
        return 0
    _say("the shared server closed the session")
    return 1
