"""Codex: what it loads itself (the `AGENTS.md` chain, within `PROJECT_DOC_BYTES`), the hook it
runs (`.codex/hooks.json`: `apply_patch` headers and shell commands), and `.codex/config.toml`."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from clients.claude_code import SESSION, handler
from clients.client import Client, Hook, Loaded, Setup
from clients.entries import SERVER, ConfigFile, grouped_hooks, server_part, toml_tables
from clients.loading import top
from clients.payloads import RESETS, TOOL_EVENTS, Event, command, patch_paths, shaped, shell_paths, specific_output
from corpus.catalog import Corpus

PROJECT_DOC_BYTES = 32 * 1024
"""Codex reads at most this much of the AGENTS.md chain (`project_doc_max_bytes`), root first."""
TOOLS = "^(Bash|apply_patch)$"


def loads(corpus: Corpus) -> Loaded:
    """AGENTS.md at the project's top, when Codex reads it whole (within its 32 KiB)."""
    return {
        f.path: "project instructions"
        for f in corpus.files.agents()
        if top(f, "AGENTS.md") and len(f.text.encode("utf-8")) <= PROJECT_DOC_BYTES
    }


def paths(tool: str, given: dict[str, Any], cwd: Path) -> tuple[str, ...] | None:
    text = command(given)  # Bash and apply_patch both carry their text here
    if tool == "apply_patch":
        return patch_paths(text)
    if tool == "Bash":
        return tuple(shell_paths(text, cwd))
    return None


def read(payload: dict[str, Any]) -> Event | None:
    return shaped(payload, "CODEX_PROJECT_DIR", TOOL_EVENTS, RESETS, paths)


def files(server: dict[str, Any], hook: str) -> list[ConfigFile]:
    events = (("SessionStart", SESSION), ("PreToolUse", TOOLS), ("PostToolUse", TOOLS))
    entry = {**server, "required": True}  # `codex exec` waits only for a required server's tools
    config = (server_part("mcp_servers", entry, toml_tables),)
    return [
        ConfigFile(".codex/config.toml", config, toml=True, appended={"mcp_servers": {SERVER: entry}}),
        ConfigFile(".codex/hooks.json", (grouped_hooks(events, handler(hook)),)),
    ]


CLIENT = Client(
    "codex",
    "Codex",
    ("codex-mcp-client", "codex"),
    True,
    loads,
    Hook(
        read, specific_output, limit=9_000, takes=10_000
    ),  # 2,500 approximate tokens arrived whole as 10,000 characters
    Setup(files, lambda url: {"url": url}),
)
