"""Claude Code, run for real against the Messages API stand-in (`anthropic_api`).

`run` starts `claude -p` non-interactively in a project with our server as its only MCP server,
and returns the main loop's requests as recorded, so a test reads exactly what reached the model
(`context_text`, `tool_outputs`). Nothing of the user's is read or written: Claude Code gets a
temporary HOME, config folder and TMPDIR, removed afterwards, and an environment of its own. It
has no network but loopback: it runs in `sandbox`'s namespaces, `ANTHROPIC_BASE_URL` naming the
relay to the stand-in.
"""

from __future__ import annotations

import functools
import json
import os
import shutil
import subprocess
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from tests.harness import sandbox
from tests.harness.anthropic_api import Script
from tests.harness.standin import Run, StandIn, Turn

ROOT = Path(__file__).resolve().parents[2]
BIN = ROOT / "tests" / "e2e" / "node_modules" / ".bin" / "claude"
SERVER = "agents-context"
"""The name our server is configured under: Claude Code lists its tools as `mcp__<name>__<tool>`."""
PASSED_ENV = ("PATH", "LANG", "LC_ALL", "AGENTS_CONTEXT_CACHE_DIR")
"""The only variables of ours Claude Code (and so the MCP server it starts) inherits."""


def tool_name(tool: str) -> str:
    """The name Claude Code gives the model for one of our server's tools."""
    return f"mcp__{SERVER}__{tool}"


@functools.cache
def available() -> str | None:
    """None when Claude Code can run here, else why not, in one sentence."""
    if not os.access(BIN, os.X_OK):
        return f"Claude Code is not installed at {BIN} (run npm ci in tests/e2e)."
    if (reason := sandbox.unavailable()) is not None:
        return f"Claude Code: {reason}"
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
    home: Path | None = None,
    resume: str | None = None,
    entry: dict[str, Any] | None = None,
    relayed: Sequence[int] = (),
) -> Run:
    """Run Claude Code once in `project`, the model answering with `turns` (then "done"), with
    `server` (a command line) as its only MCP server and that server's tools allowed; `settings`,
    if given, are passed as Claude Code settings (`--settings`). `home` (a folder the caller
    removes) keeps Claude Code's sessions from one run to the next, and `resume` names the session
    to go on with. `entry`, if given, is the server's entry instead (a URL's), and `relayed` the
    ports of this host the run may reach (such a server's). Raises `TimeoutExpired` after
    `timeout` seconds, once every process of the run has ended."""
    script = Script(list(turns))
    scratch = Path(tempfile.mkdtemp(prefix="claude-run-"))
    try:
        home, tmp = home or scratch / "home", scratch / "tmp"
        for folder in (home / ".claude", tmp):
            folder.mkdir(parents=True, exist_ok=True)
        config = scratch / "mcp.json"
        entry = entry or {"command": server[0], "args": list(server[1:])}
        config.write_text(json.dumps({"mcpServers": {SERVER: entry}}))
        command = [
            str(BIN), "-p", prompt,
            "--mcp-config", str(config), "--strict-mcp-config",
            "--allowedTools", f"mcp__{SERVER}",
            "--output-format", "json",
        ]  # fmt: skip
        if settings is not None:
            (scratch / "settings.json").write_text(json.dumps(settings))
            command += ["--settings", str(scratch / "settings.json")]
        if resume is not None:
            command += ["--resume", resume]
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
        with StandIn(script) as stand_in:
            code, stdout, stderr = sandbox.run(
                command,
                api=stand_in.url,
                socket_path=scratch / "api.sock",
                cwd=project,
                env=env,
                timeout=timeout,
                url_variable="ANTHROPIC_BASE_URL",
                relayed=relayed,
            )
        return Run([request.body for request in script.main], code, stdout, stderr, compactions=len(script.compactions))
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
