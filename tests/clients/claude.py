"""Claude Code, run for real against the Messages API stand-in (`anthropic_api`).

`run` starts `claude -p` non-interactively in a project with our server as its only MCP server,
and returns the main loop's requests as recorded, so a test reads exactly what reached the model
(`context_text`, `tool_outputs`). Nothing of the user's is read or written: Claude Code gets a
temporary HOME, config folder and TMPDIR, removed afterwards, and an environment of its own. It
has no network but loopback: it runs in new user, network and PID namespaces (`unshare`), where a
relay on the namespace's loopback carries its API requests over a Unix socket to the stand-in; when
the namespace's first process ends, the kernel ends every process left in it (the MCP server too).
"""

from __future__ import annotations

import contextlib
import fcntl
import functools
import json
import os
import shutil
import socket
import struct
import subprocess
import sys
import tempfile
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NoReturn

from tests.clients.anthropic_api import Script
from tests.clients.standin import StandIn, Turn

ROOT = Path(__file__).resolve().parents[2]
BIN = ROOT / "tests" / "e2e" / "node_modules" / ".bin" / "claude"
SERVER = "agents-context"
"""The name our server is configured under: Claude Code lists its tools as `mcp__<name>__<tool>`."""
PASSED_ENV = ("PATH", "LANG", "LC_ALL", "AGENTS_CONTEXT_CACHE_DIR")
"""The only variables of ours Claude Code (and so the MCP server it starts) inherits."""
UNSHARE = ("unshare", "--user", "--map-root-user", "--net", "--pid", "--fork", "--kill-child")


def tool_name(tool: str) -> str:
    """The name Claude Code gives the model for one of our server's tools."""
    return f"mcp__{SERVER}__{tool}"


@dataclass
class Run:
    """One run: the main loop's request bodies in order, and how Claude Code ended."""

    requests: list[dict[str, Any]]
    returncode: int
    stdout: str
    stderr: str


@functools.cache
def available() -> str | None:
    """None when Claude Code can run here, else why not, in one sentence."""
    if not os.access(BIN, os.X_OK):
        return f"Claude Code is not installed at {BIN} (run npm ci in tests/e2e)."
    if not sys.platform.startswith("linux") or shutil.which("unshare") is None:
        return "Claude Code runs without network in Linux namespaces, and unshare is not available here."
    probe = subprocess.run(
        [*UNSHARE, *_inside_command("--probe")], capture_output=True, text=True, timeout=30, check=False
    )
    if probe.returncode != 0:
        reason = (probe.stderr.strip().splitlines() or ["no reason given"])[-1]
        return f"Claude Code runs without network in a user and network namespace, which failed here: {reason}"
    version = subprocess.run([BIN, "--version"], capture_output=True, text=True, timeout=60, check=False)
    if version.returncode != 0:
        return f"Claude Code at {BIN} does not run: {version.stderr.strip() or version.returncode}."
    return None


def run(
    project: Path,
    turns: Sequence[Turn],
    *,
    server: Sequence[str],
    prompt: str = "What are this project's rules?",
    timeout: float = 180,
    settings: dict[str, Any] | None = None,
) -> Run:
    """Run Claude Code once in `project`, the model answering with `turns` (then "done"), with
    `server` (a command line) as its only MCP server and that server's tools allowed; `settings`,
    if given, are passed as Claude Code settings (`--settings`). Raises `TimeoutExpired` after
    `timeout` seconds, once every process of the run has ended."""
    script = Script(list(turns))
    scratch = Path(tempfile.mkdtemp(prefix="claude-run-"))
    try:
        home, tmp = scratch / "home", scratch / "tmp"
        for folder in (home / ".claude", tmp):
            folder.mkdir(parents=True)
        config = scratch / "mcp.json"
        config.write_text(json.dumps({"mcpServers": {SERVER: {"command": server[0], "args": list(server[1:])}}}))
        command = [
            str(BIN), "-p", prompt,
            "--mcp-config", str(config), "--strict-mcp-config",
            "--allowedTools", f"mcp__{SERVER}",
            "--output-format", "json",
        ]  # fmt: skip
        if settings is not None:
            (scratch / "settings.json").write_text(json.dumps(settings))
            command += ["--settings", str(scratch / "settings.json")]
        env = {name: os.environ[name] for name in PASSED_ENV if name in os.environ}
        env |= {
            "HOME": str(home),
            "CLAUDE_CONFIG_DIR": str(home / ".claude"),
            "XDG_CONFIG_HOME": str(home / ".config"),
            "XDG_CACHE_HOME": str(home / ".cache"),
            "XDG_DATA_HOME": str(home / ".local" / "share"),
            "XDG_STATE_HOME": str(home / ".local" / "state"),
            "TMPDIR": str(tmp),
            "ANTHROPIC_API_KEY": "sk-test",
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
            "DISABLE_AUTOUPDATER": "1",
            "DISABLE_TELEMETRY": "1",
            "DISABLE_ERROR_REPORTING": "1",
        }
        with StandIn(script) as stand_in, socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as api:
            api.bind(str(scratch / "api.sock"))
            api.listen()
            host, port = stand_in.url.removeprefix("http://").rsplit(":", 1)
            threading.Thread(
                target=_relay, args=(api, lambda: socket.create_connection((host, int(port)))), daemon=True
            ).start()
            process = subprocess.Popen(
                [*UNSHARE, *_inside_command(str(scratch / "api.sock"), "--", *command)],
                cwd=project,
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
            try:
                stdout, stderr = process.communicate(timeout=timeout)
            except subprocess.TimeoutExpired:
                process.kill()  # unshare: --kill-child ends the namespace's first process, and so all
                stdout, stderr = process.communicate()
                raise subprocess.TimeoutExpired(command, timeout, stdout, stderr) from None
            finally:
                api.shutdown(socket.SHUT_RDWR)  # wakes the relay's accept, which then ends it
                api.close()
        return Run([request.body for request in script.main], process.returncode, stdout, stderr)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def tool_outputs(run: Run) -> list[str]:
    """For each tool call of the run in order, exactly the text the model got back for it."""
    results: dict[str, str] = {}
    calls: list[str] = []
    for body in run.requests:
        for message in body.get("messages", ()):
            for block in _blocks(message.get("content")):
                if block.get("type") == "tool_result":
                    results.setdefault(block["tool_use_id"], _text(block.get("content")))
                elif block.get("type") == "tool_use" and block["id"] not in calls:
                    calls.append(block["id"])
    return [results[call] for call in calls if call in results]


def context_text(run: Run, index: int = 0) -> str:
    """Everything the model reads in main request `index`, flattened: the system blocks, every
    message's text (tool calls and their results included), then each tool's name, description
    and input schema. A deferred tool (`defer_loading`, as Claude Code sends MCP tools) counts
    only once a ToolSearch result has referenced it: until then the model sees only its name, in
    a message."""
    body = run.requests[index]
    parts = [_text(body.get("system"))]
    referenced: set[str] = set()
    for message in body.get("messages", ()):
        parts.append(f"[{message.get('role')}]")
        parts.append(_text(message.get("content")))
        for block in _blocks(message.get("content")):
            if block.get("type") == "tool_result":
                referenced.update(
                    str(ref.get("tool_name"))
                    for ref in _blocks(block.get("content"))
                    if ref.get("type") == "tool_reference"
                )
    for tool in body.get("tools", ()):
        if tool.get("defer_loading") and tool.get("name") not in referenced:
            continue
        parts.append(f"[tool {tool.get('name')}]")
        parts.append(str(tool.get("description", "")))
        parts.append(json.dumps(tool.get("input_schema", {}), indent=1))
    return "\n\n".join(part for part in parts if part)


def _blocks(content: Any) -> list[dict[str, Any]]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return [block for block in content or () if isinstance(block, dict)]


def _text(content: Any) -> str:
    """Content as the model reads it: a string, or blocks (text, tool calls, tool results and
    anything else, the latter as JSON) joined by blank lines."""
    parts: list[str] = []
    for block in _blocks(content):
        kind = block.get("type")
        if kind == "text":
            parts.append(str(block.get("text", "")))
        elif kind == "tool_use":
            parts.append(f"{block.get('name')} {json.dumps(block.get('input'))}")
        elif kind == "tool_result":
            parts.append(_text(block.get("content")))
        else:
            parts.append(json.dumps(block))
    return "\n\n".join(parts)


# Inside the namespaces.


def _inside_command(*args: str) -> list[str]:
    """A command line that runs `_inside(args)` with this interpreter, importing nothing from the
    working directory."""
    code = f"import sys; sys.path.insert(0, {str(ROOT)!r}); from tests.clients.claude import _inside; _inside(sys.argv[1:])"
    return [sys.executable, "-I", "-c", code, *args]


def _inside(args: list[str]) -> NoReturn:
    """The namespace's first process: brings its loopback up, relays a port on it to the Unix
    socket `args[0]`, and runs the command after `--` with `ANTHROPIC_BASE_URL` at that port
    (`--probe`: only checks that this much works)."""
    _loopback_up()
    with socket.create_server(("127.0.0.1", 0)) as listener:
        if args[0] == "--probe":
            sys.exit(0)
        path, command = args[0], args[2:]

        def connect() -> socket.socket:
            upstream = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            upstream.connect(path)
            return upstream

        threading.Thread(target=_relay, args=(listener, connect), daemon=True).start()
        env = {**os.environ, "ANTHROPIC_BASE_URL": f"http://127.0.0.1:{listener.getsockname()[1]}"}
        sys.exit(subprocess.run(command, env=env, check=False).returncode)


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
