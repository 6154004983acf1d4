"""Runs Google's Gemini CLI (`gemini -p`, non-interactive) against the Gemini API stand-in with
one MCP server configured, in a throwaway HOME: what the model reads is in the recorded requests.

Auth is by API key (`GEMINI_API_KEY`, `security.auth.selectedType: "gemini-api-key"`) and the
SDK's base URL (`GOOGLE_GEMINI_BASE_URL`) points at the stand-in. The server is `trust: true`
(no confirmation, so its tools are offered in headless mode without `--yolo`); the folder trust
check, auto-update, usage statistics and telemetry are off; the system settings paths point into
the throwaway HOME, so nothing of the user's (or the machine's) configuration is read."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from tests.harness.gemini_api import Script
from tests.harness.standin import Run, StandIn, Turn

BIN = Path(__file__).resolve().parents[1] / "e2e" / "node_modules" / ".bin" / "gemini"
SERVER = "agents-context"
"""The name our server is configured under in `mcpServers`."""


def available() -> str | None:
    """None when Gemini CLI runs here, else why not (one sentence)."""
    if not BIN.exists():
        return f"Gemini CLI is not installed at {BIN} (npm install in tests/e2e)."
    if shutil.which("node") is None:
        return "Gemini CLI needs Node.js, and `node` is not on PATH."
    home = Path(tempfile.mkdtemp(prefix="gemini-home-"))  # even --version writes ~/.gemini/projects.json
    try:
        done = subprocess.run([str(BIN), "--version"], capture_output=True, text=True, timeout=60, env=_env(home))
    except (OSError, subprocess.TimeoutExpired) as error:
        return f"`gemini --version` failed: {error}."
    finally:
        shutil.rmtree(home, ignore_errors=True)
    if done.returncode != 0:
        return f"`gemini --version` exited {done.returncode}: {done.stderr.strip()[-200:]}."
    return None


def tool_name(tool: str) -> str:
    """How the model names our MCP tool in a functionCall: Gemini CLI declares MCP tools as
    `mcp_<server>_<tool>`."""
    return f"mcp_{SERVER}_{tool}"


def run(
    project: Path,
    turns: Sequence[Turn],
    *,
    server: Sequence[str],
    prompt: str = "Use the project's agent context to find the rules.",
    timeout: float = 180,
    settings: Mapping[str, Any] | None = None,
    args: Sequence[str] = (),
) -> Run:
    """Runs `gemini -p PROMPT` in `project` with `server` (command and arguments) configured as
    the MCP server `agents-context`, the model playing `turns`. `settings` are merged over the
    defaults at the top level of `~/.gemini/settings.json`; `args` are extra CLI arguments."""
    script = Script(list(turns))
    home = Path(tempfile.mkdtemp(prefix="gemini-home-"))
    try:
        (home / ".gemini").mkdir()
        config = _settings(server)
        for key, value in (settings or {}).items():
            merged = config.get(key)
            config[key] = {**merged, **value} if isinstance(merged, dict) and isinstance(value, dict) else value
        (home / ".gemini" / "settings.json").write_text(json.dumps(config, indent=2))
        with StandIn(script) as stand_in:
            env = {
                **_env(home),
                "GEMINI_API_KEY": "stand-in-key",
                "GOOGLE_GEMINI_BASE_URL": stand_in.url,
            }
            done = subprocess.run(
                [str(BIN), "-p", prompt, *args],
                cwd=project,
                env=env,
                stdin=subprocess.DEVNULL,
                capture_output=True,
                text=True,
                timeout=timeout,
            )
        bodies = [request.body if isinstance(request.body, dict) else {} for request in script.main]
        return Run(bodies, done.returncode, done.stdout, done.stderr, list(stand_in.requests))
    finally:
        shutil.rmtree(home, ignore_errors=True)


def _settings(server: Sequence[str]) -> dict[str, Any]:
    return {
        "mcpServers": {SERVER: {"command": server[0], "args": list(server[1:]), "trust": True}},
        "security": {"auth": {"selectedType": "gemini-api-key"}, "folderTrust": {"enabled": False}},
        "general": {"enableAutoUpdate": False, "enableAutoUpdateNotification": False},
        "privacy": {"usageStatisticsEnabled": False},
        "telemetry": {"enabled": False},
    }


def _env(home: Path) -> dict[str, str]:
    """PATH and the throwaway HOME (with XDG folders and system settings paths inside it):
    nothing else of the user's environment reaches the CLI or, through it, the server."""
    return {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(home),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "XDG_CACHE_HOME": str(home / ".cache"),
        "XDG_DATA_HOME": str(home / ".local" / "share"),
        "GEMINI_CLI_SYSTEM_SETTINGS_PATH": str(home / "system-settings.json"),
        "GEMINI_CLI_SYSTEM_DEFAULTS_PATH": str(home / "system-defaults.json"),
        "NO_COLOR": "1",
        "TERM": "dumb",
    }


def _tool_responses(body: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The functionResponse parts of the newest user turn in a request (the answers to the
    model's last tool calls), in order."""
    for content in reversed(body.get("contents") or []):
        parts = content.get("parts") or []
        responses = [part["functionResponse"] for part in parts if "functionResponse" in part]
        if content.get("role") == "user" and responses:
            return responses
        if content.get("role") == "model":
            return []
    return []


def tool_outputs(run: Run) -> list[str]:
    """For each tool call in order, exactly what the model got back: the functionResponse as
    the next main request carries it, serialised as JSON: its `name` and `response` (for an MCP
    tool `{"output": text}`, `{"error": text}` or `{}`), without the `id` the client echoes from
    the call (a timestamp)."""
    return [
        json.dumps({key: value for key, value in response.items() if key != "id"}, ensure_ascii=False)
        for body in run.requests[1:]
        for response in _tool_responses(body)
    ]


def _part_text(part: Mapping[str, Any]) -> str:
    if "text" in part:
        return str(part["text"])
    return json.dumps(dict(part), ensure_ascii=False)


def context_text(run: Run, index: int = 0) -> str:
    """Everything the model reads in main request `index`, flattened: the system instruction,
    each turn's parts (text as is, calls and responses as JSON), and the tool declarations."""
    body = run.requests[index]
    lines: list[str] = []
    system = body.get("systemInstruction") or {}
    lines += [_part_text(part) for part in system.get("parts") or []]
    for content in body.get("contents") or []:
        lines.append(f"[{content.get('role', '')}]")
        lines += [_part_text(part) for part in content.get("parts") or []]
    for tool in body.get("tools") or []:
        for declaration in tool.get("functionDeclarations") or []:
            lines.append(f"[tool {declaration.get('name', '')}] {declaration.get('description', '')}")
            schema = declaration.get("parametersJsonSchema") or declaration.get("parameters")
            if schema:
                lines.append(json.dumps(schema, ensure_ascii=False))
    return "\n".join(lines)
