"""OpenAI's Codex CLI, run for real (`codex exec`) against the Responses API stand-in
(`openai_api`), with our server as its only MCP server.

`run` returns the main loop's requests as recorded, so a test reads exactly what reached the model
(`context_text`, `tool_outputs`). Nothing of the user's is read or written: Codex gets a temporary
HOME, CODEX_HOME (with the run's config.toml), XDG folders and TMPDIR, removed afterwards, and an
environment of its own. It has no network but loopback: it runs in `sandbox`, as Claude Code does.

How Codex offers our tools depends on the model's metadata (see `openai_api`): for `gpt-5.5`, the
default here, it lists only the namespace `mcp__agents_context` (with our instructions' first line)
and the model loads its tools with `tool_search`, which the script does by itself before the first
call of a tool not loaded yet; a model Codex has no metadata for gets the namespace with every tool
up front; its own default model (`gpt-6.1-sol`) reaches tools only from JavaScript, through `exec`.
"""

from __future__ import annotations

import functools
import json
import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from tests.harness import sandbox
from tests.harness.openai_api import DEFAULT_MODEL, Script
from tests.harness.standin import Run, StandIn, Turn

ROOT = Path(__file__).resolve().parents[2]
BIN = ROOT / "tests" / "e2e" / "node_modules" / ".bin" / "codex"
SERVER = "agents-context"
NAMESPACE = "mcp__agents_context"
"""Codex lists an MCP server's tools in one `namespace` tool: `mcp__` and the server's name with
anything but letters, digits and `_` made `_`. The server's instructions are its description."""
INSIDE_PORT = 8080
"""The stand-in's port as Codex sees it: any port is free on the namespace's own loopback."""
PASSED_ENV = ("PATH", "LANG", "LC_ALL")
"""The only variables of ours Codex inherits (it passes an MCP server a few of its own)."""
CACHE_ENV = "AGENTS_CONTEXT_CACHE_DIR"
"""Passed on to our server when set (the tests' own cache folder)."""


def tool_name(tool: str) -> str:
    """How the scripted model names one of our server's tools: namespace and name, which the
    stand-in sends as a function call's `namespace` and `name` (a flat `mcp__agents_context__x`
    is "unsupported call" to Codex)."""
    return f"{NAMESPACE}__{tool}"


@functools.cache
def available() -> str | None:
    """None when Codex can run here, else why not, in one sentence."""
    if not os.access(BIN, os.X_OK):
        return f"Codex CLI is not installed at {BIN} (run npm ci in tests/e2e)."
    if (reason := sandbox.unavailable()) is not None:
        return f"Codex CLI: {reason}"
    version = subprocess.run([BIN, "--version"], capture_output=True, text=True, timeout=60, check=False)
    if version.returncode != 0 or not version.stdout.startswith("codex-cli"):
        return f"Codex CLI at {BIN} does not run: {version.stderr.strip() or version.returncode}."
    return None


def _toml(value: str | Sequence[str] | dict[str, str]) -> str:
    """A TOML string, array of strings or inline table (JSON's string escapes are TOML's)."""
    if isinstance(value, str):
        return json.dumps(value)
    if isinstance(value, dict):
        return "{" + ", ".join(f"{json.dumps(k)} = {json.dumps(v)}" for k, v in value.items()) + "}"
    return "[" + ", ".join(json.dumps(item) for item in value) + "]"


def config(url: str, server: Sequence[str], model: str = DEFAULT_MODEL, entry: dict[str, Any] | None = None) -> str:
    """The run's config.toml: the stand-in as the only model provider, no retries, no update
    check, no analytics, no plugins (their sync would reach github.com and chatgpt.com; nothing of
    them reaches the model here), and our server as a required MCP server: Codex waits for a
    required server's tools before the first request, while an optional one that takes more than
    about a second to list its tools is missing from the whole `exec` turn. `entry` (a URL's, as
    `setup codex --url` writes it) replaces how the server is started."""
    env = {CACHE_ENV: os.environ[CACHE_ENV]} if CACHE_ENV in os.environ else {}
    how = f"command = {_toml(server[0])}\nargs = {_toml(list(server[1:]))}\nenv = {_toml(env)}"
    if entry is not None:
        how = "\n".join(f"{key} = {_toml(value)}" for key, value in entry.items() if key != "required")
    return f"""\
model = {_toml(model)}
model_provider = "standin"
approval_policy = "never"
sandbox_mode = "read-only"
check_for_update_on_startup = false

[analytics]
enabled = false

[features]
plugins = false

[model_providers.standin]
name = "Stand-in"
base_url = {_toml(url + "/v1")}
wire_api = "responses"
env_key = "STANDIN_API_KEY"
request_max_retries = 0
stream_max_retries = 0

[mcp_servers.{SERVER}]
{how}
required = true
startup_timeout_sec = 60
"""


def run(
    project: Path,
    turns: Sequence[Turn],
    *,
    server: Sequence[str],
    prompt: str = "What are this project's rules?",
    timeout: float = 180,
    model: str = DEFAULT_MODEL,
    overrides: Sequence[str] = (),
    trust_project_hooks: bool = False,
    entry: dict[str, Any] | None = None,
    relayed: Sequence[int] = (),
) -> Run:
    """Run `codex exec` once in `project`, the model answering with `turns` (then "done"), with
    `server` (a command line) as its only MCP server. `model` decides how Codex offers MCP tools;
    each of `overrides` is a `key=value` passed as `-c` (`project_doc_max_bytes=1024`).
    `trust_project_hooks` loads the project's own `.codex/` layer (its config.toml and hooks.json)
    and runs its hooks: Codex ignores an untrusted project's layer, and runs a project hook only
    once someone has reviewed it in `/hooks`, which `exec` cannot do; so this passes `--trust`
    (saved in the run's throwaway CODEX_HOME) and `--dangerously-bypass-hook-trust`, Codex's
    switch for automation that vets hook sources itself. Off by default. `entry` and `relayed`:
    a server reached at a URL instead, and the ports of this host the run may reach. Raises
    `TimeoutExpired` after `timeout` seconds, once every process of the run has ended."""
    script = Script(list(turns))
    scratch = Path(tempfile.mkdtemp(prefix="codex-run-"))
    try:
        home, codex_home, tmp = scratch / "home", scratch / "codex-home", scratch / "tmp"
        for folder in (home, codex_home, tmp):
            folder.mkdir(parents=True)
        url = f"http://127.0.0.1:{INSIDE_PORT}"
        (codex_home / "config.toml").write_text(config(url, server, model, entry), encoding="utf-8")
        options = [arg for override in overrides for arg in ("-c", override)]
        if trust_project_hooks:  # the test wrote the hooks itself (see the docstring)
            options += ["--trust", "--dangerously-bypass-hook-trust"]
        command = [str(BIN), "exec", "--json", "--skip-git-repo-check", *options, "-C", str(project), prompt]
        env = {name: os.environ[name] for name in PASSED_ENV if name in os.environ}
        env |= {
            "HOME": str(home),
            "CODEX_HOME": str(codex_home),
            "XDG_CONFIG_HOME": str(home / ".config"),
            "XDG_CACHE_HOME": str(home / ".cache"),
            "XDG_DATA_HOME": str(home / ".local" / "share"),
            "XDG_STATE_HOME": str(home / ".local" / "state"),
            "TMPDIR": str(tmp),
            "STANDIN_API_KEY": "sk-test",
            "NO_COLOR": "1",
        }
        with StandIn(script) as stand_in:
            code, stdout, stderr = sandbox.run(
                command,
                api=stand_in.url,
                socket_path=scratch / "api.sock",
                cwd=project,
                env=env,
                timeout=timeout,
                port=INSIDE_PORT,
                relayed=relayed,
            )
        return Run([dict(request.body) for request in script.main], code, stdout, stderr)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def _items(body: dict[str, Any]) -> list[dict[str, Any]]:
    return [item for item in body.get("input") or () if isinstance(item, dict)]


def output_text(output: Any) -> str:
    """A tool call output as the model reads it: the string, or its content items' texts joined
    by newlines (Codex sends `Wall time: ... Output:` and each text block as items)."""
    if isinstance(output, str):
        return output
    if isinstance(output, list):
        return "\n".join(str(part.get("text", "")) for part in output if isinstance(part, dict))
    return json.dumps(output)


def tool_outputs(run: Run) -> list[str]:
    """For each tool call of the run in order (function and custom tool calls; not the tool
    searches the script makes by itself), exactly the text the model got back for it."""
    calls: list[str] = []
    outputs: dict[str, str] = {}
    for body in run.requests:
        for item in _items(body):
            call_id = str(item.get("call_id", ""))
            if item.get("type") in ("function_call", "custom_tool_call") and call_id not in calls:
                calls.append(call_id)
            elif item.get("type") in ("function_call_output", "custom_tool_call_output"):
                outputs.setdefault(call_id, output_text(item.get("output")))
    return [outputs[call_id] for call_id in calls if call_id in outputs]


def _tool_texts(tools: Sequence[Any]) -> Iterator[str]:
    for tool in tools:
        if not isinstance(tool, dict):
            continue
        yield f"[tool {tool.get('name', tool.get('type'))}]\n{tool.get('description', '')}"
        if "parameters" in tool:
            yield json.dumps(tool["parameters"], indent=1, ensure_ascii=False)
        yield from _tool_texts(tool.get("tools") or ())


def context_text(run: Run, index: int = 0) -> str:
    """Everything the model reads in main request `index`, flattened: the instructions (Codex
    sends none: its prompt is a developer message), each input item (messages, calls and their
    outputs, the tools a tool search or `additional_tools` item adds), then each tool's name,
    description and parameters."""
    body = run.requests[index]
    parts: list[str] = [str(body["instructions"])] if body.get("instructions") else []
    for item in _items(body):
        kind = item.get("type")
        if kind == "message":
            content = item.get("content")
            texts = (
                [content]
                if isinstance(content, str)
                else [str(c.get("text", "")) for c in content or () if isinstance(c, dict)]
            )
            parts.extend(f"[{item.get('role')}]\n{text}" for text in texts)
        elif kind in ("function_call", "custom_tool_call"):
            name = f"{item['namespace']}.{item.get('name')}" if item.get("namespace") else item.get("name")
            parts.append(f"[call {name}] {item.get('arguments', item.get('input', ''))}")
        elif kind == "tool_search_call":
            parts.append(f"[call tool_search] {json.dumps(item.get('arguments'))}")
        elif kind in ("function_call_output", "custom_tool_call_output"):
            parts.append(f"[output]\n{output_text(item.get('output'))}")
        elif kind in ("additional_tools", "tool_search_output"):
            parts.extend(_tool_texts(item.get("tools") or ()))
    parts.extend(_tool_texts(body.get("tools") or ()))
    return "\n\n".join(part for part in parts if part)
