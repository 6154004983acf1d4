"""A client run with no network but a loopback: new user, network and PID namespaces (`unshare`),
where a relay on a port of the namespace's own loopback carries the client's API requests over a
Unix socket to the stand-in outside (and, where asked, other ports to servers outside, such as
one MCP server over HTTP shared by several runs). When the namespace's first process ends, the
kernel ends every process left in it (the MCP server the client started too). Claude Code and
Codex run so.
"""

from __future__ import annotations

import contextlib
import fcntl
import functools
import os
import shutil
import socket
import struct
import subprocess
import sys
import threading
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import NoReturn

ROOT = Path(__file__).resolve().parents[2]
UNSHARE = ("unshare", "--user", "--map-root-user", "--net", "--pid", "--fork", "--kill-child")


@functools.cache
def unavailable() -> str | None:
    """None when a client can run in the namespaces here, else why not, in one sentence."""
    if not sys.platform.startswith("linux") or shutil.which("unshare") is None:
        return "the clients run without network in Linux namespaces, and unshare is not available here."
    probe = subprocess.run(
        [*UNSHARE, *_inside_command("--probe")], capture_output=True, text=True, timeout=30, check=False
    )
    if probe.returncode != 0:
        reason = (probe.stderr.strip().splitlines() or ["no reason given"])[-1]
        return f"the clients run without network in a user and network namespace, which failed here: {reason}"
    return None


def run(
    command: Sequence[str],
    *,
    api: str,
    socket_path: Path,
    cwd: Path,
    env: Mapping[str, str],
    timeout: float,
    port: int = 0,
    url_variable: str | None = None,
    relayed: Sequence[int] = (),
) -> tuple[int, str, str]:
    """Runs `command` in `cwd` inside the namespaces, its API requests to `127.0.0.1:port` (0: a
    free port, named to the command in `url_variable`) carried to `api` (`http://host:port`)
    through a Unix socket at `socket_path`; each port of `relayed` on the namespace's loopback is
    carried to the same port of this host's. The exit status, stdout and stderr; raises
    `TimeoutExpired` after `timeout` seconds, once every process of the run has ended."""
    host, api_port = api.removeprefix("http://").rsplit(":", 1)
    targets = {str(socket_path): (host, int(api_port))}
    targets |= {str(socket_path.with_name(f"port-{p}.sock")): ("127.0.0.1", p) for p in relayed}
    with contextlib.ExitStack() as stack:
        relays = []
        for path, address in targets.items():
            relay = stack.enter_context(socket.socket(socket.AF_UNIX, socket.SOCK_STREAM))
            relay.bind(path)
            relay.listen()
            relays.append(relay)
            connect = functools.partial(socket.create_connection, address)
            threading.Thread(target=_relay, args=(relay, connect), daemon=True).start()
        extra = ",".join(f"{p}={socket_path.with_name(f'port-{p}.sock')}" for p in relayed) or "-"
        inside = _inside_command(str(socket_path), str(port), url_variable or "-", extra, "--", *command)
        process = subprocess.Popen(
            [*UNSHARE, *inside],
            cwd=cwd,
            env=dict(env),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        try:
            stdout, stderr = process.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            process.kill()  # unshare --kill-child: its first process gone, every process in it ends
            stdout, stderr = process.communicate()
            raise subprocess.TimeoutExpired(list(command), timeout, stdout, stderr) from None
        finally:
            for relay in relays:
                relay.shutdown(socket.SHUT_RDWR)  # wakes the relay's accept, which then ends it
    return process.returncode, stdout, stderr


def _inside_command(*args: str) -> list[str]:
    """A command line that runs `_inside(args)` with this interpreter, importing nothing from the
    working directory."""
    code = f"import sys; sys.path.insert(0, {str(ROOT)!r}); from tests.harness.sandbox import _inside; _inside(sys.argv[1:])"
    return [sys.executable, "-I", "-c", code, *args]


def _inside(args: list[str]) -> NoReturn:
    """The namespace's first process: brings its loopback up, relays a port on it to the Unix
    socket `args[0]` (and each `PORT=SOCKET` of `args[3]` unless `-`), and runs the command after
    `--`, `args[2]` (unless `-`) naming the first port's URL (`--probe`: only checks that this
    much works)."""
    _loopback_up()
    if args[0] == "--probe":
        with socket.create_server(("127.0.0.1", 0)):
            sys.exit(0)
    path, port, variable, command = args[0], int(args[1]), args[2], args[5:]
    extra = [item.split("=", 1) for item in args[3].split(",")] if args[3] != "-" else []
    for other, other_path in extra:
        server = socket.create_server(("127.0.0.1", int(other)))
        threading.Thread(target=_relay, args=(server, functools.partial(_unix, other_path)), daemon=True).start()
    with socket.create_server(("127.0.0.1", port)) as listener:
        threading.Thread(target=_relay, args=(listener, functools.partial(_unix, path)), daemon=True).start()
        env = dict(os.environ)
        if variable != "-":
            env[variable] = f"http://127.0.0.1:{listener.getsockname()[1]}"
        sys.exit(subprocess.run(command, env=env, check=False).returncode)


def _unix(path: str) -> socket.socket:
    upstream = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    upstream.connect(path)
    return upstream


def _loopback_up() -> None:
    """`ip link set lo up`, without needing `ip`: a new network namespace's loopback is down."""
    siocgifflags, siocsifflags, iff_up = 0x8913, 0x8914, 0x1
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        request = struct.pack("16sH22x", b"lo", 0)
        flags = struct.unpack("16sH22x", fcntl.ioctl(probe, siocgifflags, request))[1]
        fcntl.ioctl(probe, siocsifflags, struct.pack("16sH22x", b"lo", flags | iff_up))


def _relay(listener: socket.socket, connect: Callable[[], socket.socket]) -> None:
    """Carries each connection accepted on `listener` to a new one from `connect`, both ways,
    until the listener is closed."""
    while True:
        try:
            client, _ = listener.accept()
        except OSError:
            return
        threading.Thread(target=_carry, args=(client, connect), daemon=True).start()


def _carry(client: socket.socket, connect: Callable[[], socket.socket]) -> None:
    with client:
        try:
            upstream = connect()
        except OSError:
            return
        with upstream:
            back = threading.Thread(target=_pipe, args=(upstream, client), daemon=True)
            back.start()
            _pipe(client, upstream)
            back.join()


def _pipe(source: socket.socket, target: socket.socket) -> None:
    try:
        while data := source.recv(65536):
            target.sendall(data)
    except OSError:
        pass
    finally:
        with contextlib.suppress(OSError):
            target.shutdown(socket.SHUT_WR)
