"""`agents-context-shared [FLAGS]`: the stdio command a client starts, relaying to one server that
every session started with the same flags, in the same folder, shares.

A client that can only start a stdio server (or a user who would rather not run a server of their
own) gets one process per session: five sessions, five indexes. This command is small (the
standard library, no MCP SDK, no index): it finds the shared server published in the state folder,
starts it when none answers, and copies the client's stdio to it and back, byte for byte, over a
local TCP connection that only a process holding the published token may use. The server is
`agents-context` itself, started detached; it serves every connection as a session of its own and
ends once none has been open for `$AGENTS_CONTEXT_SHARED_IDLE` seconds (default 300).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import IO, Any

from cli.state import STATE_ENV, state_dir
from writes.atomic import write_atomic
from writes.locks import LockTimeout, locked

SHARED_ENV = "AGENTS_CONTEXT_SHARED"
"""Set on the server this command starts: the file it publishes its port and token in."""
IDLE_ENV = "AGENTS_CONTEXT_SHARED_IDLE"
"""Seconds the shared server stays up with no session open (default `IDLE_S`)."""
IDLE_S = 300.0
SERVED_BY = ("AGENTS_CONTEXT_ROOT", "AGENTS_CONTEXT_CACHE_DIR")
"""The variables that change what a server serves: `corpus.roots.ENV_ROOT` and `live.cache.ENV`,
named here rather than imported, since this process stays small (those modules load YAML and
numpy)."""
GREETING = b"agents-context shared\n"
"""What the server answers a connection that gave the token, before the first MCP message."""
START_S = 120.0
"""How long a start may take before this command gives up (a cold start of a large --docs root
serves long before its index is whole)."""
_CONNECT_S = 5.0
_PATIENT_S = 30.0


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
        stat = (Path(__file__).resolve().parents[1] / "server.py").stat()
    except OSError:
        return []
    return [stat.st_size, stat.st_mtime_ns]


def publish(path: Path, port: int, token: str) -> None:
    """Write the state file (the shared server, once it listens): readable by this user only,
    written whole and then renamed into place, so a reader never sees half of it."""
    path.parent.mkdir(parents=True, exist_ok=True)
    text = json.dumps({"port": port, "token": token, "pid": os.getpid()})
    write_atomic(path, text.encode("utf-8"), mode=0o600)


def serving() -> tuple[bytes, float, Callable[[int, str], None], Callable[[], None]] | None:
    """For the server this command started (None in any other): what `protocol.shared`
    `serve_sockets` takes after the server, namely the greeting, the idle time, and how to publish
    and withdraw the state file."""
    named = os.environ.pop(SHARED_ENV, None)
    if named is None:
        return None
    return GREETING, idle_s(), partial(publish, Path(named)), partial(withdraw, Path(named))


def withdraw(path: Path) -> None:
    """Remove the state file if it is still this process's (the shared server, as it ends)."""
    found = published(path)
    if found is not None and found.pid == os.getpid():
        with contextlib.suppress(OSError):
            path.unlink()


def published(path: Path) -> Published | None:
    """What the state file says, or None when there is none or it cannot be read."""
    try:
        value = json.loads(path.read_text(encoding="utf-8"))
        return Published(int(value["port"]), str(value["token"]), int(value["pid"]))
    except (OSError, ValueError, KeyError, TypeError):
        return None


def connect(path: Path, patience_s: float = _CONNECT_S) -> socket.socket | None:
    """A connection to the published server, past its greeting (waited for up to `patience_s`);
    None when none answers."""
    found = published(path)
    if found is None:
        return None
    try:
        sock = socket.create_connection(("127.0.0.1", found.port), timeout=_CONNECT_S)
        sock.settimeout(patience_s)
    except OSError:
        return None
    try:
        sock.sendall(found.token.encode("ascii") + b"\n")
        greeting = b""
        while not greeting.endswith(b"\n") and len(greeting) < len(GREETING):
            chunk = sock.recv(len(GREETING) - len(greeting))
            if not chunk:
                break
            greeting += chunk
    except (OSError, UnicodeError):
        greeting = b""
    if greeting != GREETING:
        sock.close()
        return None
    sock.settimeout(None)
    return sock


def reach(argv: Sequence[str], cwd: Path, env: Mapping[str, str]) -> socket.socket:
    """A connection to the shared server for these flags, started first if none answers. One
    process starts it; the others wait on the state file's lock and then connect."""
    path = state_file(argv, cwd, env)
    idle_s(env)  # a bad value is said here, not in the detached server's log
    sock = connect(path)
    if sock is not None:
        return sock
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        with locked(path.with_suffix(".lock"), timeout=START_S + _PATIENT_S):
            # a server busy past the first wait is waited for longer before another is started
            return connect(path, _PATIENT_S) or _start(path, argv, cwd, env)
    except LockTimeout:
        raise ShareError(f"another session has been starting the shared server for {START_S:.0f} s") from None


def _start(path: Path, argv: Sequence[str], cwd: Path, env: Mapping[str, str]) -> socket.socket:
    log = path.with_suffix(".log")
    with log.open("wb") as err:  # the server's log: every start begins a new one
        process = subprocess.Popen(
            [sys.executable, "-c", "import sys; del sys.path[0]; from server import main; main()", *argv],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=err,
            cwd=cwd,
            env={**env, SHARED_ENV: str(path)},
            **_detached(),
        )
    deadline = time.monotonic() + START_S
    while time.monotonic() < deadline:
        found = published(path)
        if found is not None and found.pid == process.pid:
            sock = connect(path)
            if sock is not None:
                return sock
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


def relay(sock: socket.socket, stdin: IO[bytes], stdout: IO[bytes]) -> bool:
    """Copy `stdin` to the server and what it sends to `stdout` until the server closes the
    connection; True when it did so after `stdin` ended (the client left), False before."""
    ended = threading.Event()

    def upstream() -> None:
        try:
            while chunk := _read(stdin):
                sock.sendall(chunk)
        except OSError:
            pass
        finally:
            ended.set()
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_WR)  # the server reads the end of the session

    threading.Thread(target=upstream, name="stdin", daemon=True).start()
    try:
        while chunk := sock.recv(1 << 16):
            stdout.write(chunk)
            stdout.flush()
    except OSError:
        pass
    finally:
        sock.close()
    return ended.is_set()


def _read(stream: IO[bytes]) -> bytes:
    read1 = getattr(stream, "read1", None)
    return bytes(read1(1 << 16)) if read1 is not None else stream.read(1 << 16)


HELP = """usage: agents-context-shared [FLAGS]

The stdio command for an MCP client, sharing one agents-context server between every session
started with the same FLAGS in the same folder: it starts that server when none runs, and relays
the session to it. FLAGS are those of `agents-context` (see agents-context --help).
The server stays up for $AGENTS_CONTEXT_SHARED_IDLE seconds (default 300) after its last session;
its state and log are in $AGENTS_CONTEXT_STATE_DIR/shared (default: the user's state folder)."""


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv in (["-h"], ["--help"]):
        sys.stdout.write(HELP + "\n")
        return 0
    if any(arg == "--transport" or arg.startswith("--transport=") for arg in argv):
        sys.stderr.write("agents-context-shared: it relays stdio to a server of its own; leave out --transport\n")
        return 2
    try:
        sock = reach(argv, Path.cwd(), os.environ)
    except ShareError as exc:
        sys.stderr.write(f"agents-context-shared: {exc}\n")
        return 1
    except OSError as exc:  # the state folder cannot be made, or its files written
        where = f" ({exc.filename})" if exc.filename else ""
        sys.stderr.write(f"agents-context-shared: cannot use the state folder: {exc.strerror or exc}{where}\n")
        return 1
    if relay(sock, sys.stdin.buffer, sys.stdout.buffer):
        return 0
    sys.stderr.write("agents-context-shared: the shared server closed the session\n")
    return 1
