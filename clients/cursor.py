"""Cursor: what it loads itself (`AGENTS.md`, its `alwaysApply` rules; its glob rules when a file
matches), the hook it runs (`.cursor/hooks.json`), and `.cursor/mcp.json`."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from clients.claude_code import TIMEOUT_S
from clients.client import Client, Hook, Loaded, Setup
from clients.entries import ConfigFile, flat_hooks, server_part
from clients.loading import always, top
from clients.payloads import Event, command, first_root, shell_paths
from corpus.catalog import Corpus
from corpus.files import CorpusFile


def loads(corpus: Corpus) -> Loaded:
    """AGENTS.md at the project's top and the Cursor rules with `alwaysApply: true`."""
    files = list(corpus.files.agents())
    loaded = {f.path: "project instructions" for f in files if top(f, "AGENTS.md")}
    loaded.update({f.path: "an alwaysApply rule" for f in files if always(f, "cursor")})
    return loaded


def read(payload: dict[str, Any]) -> Event | None:
    session = payload.get("conversation_id")
    name = payload.get("hook_event_name")
    if not isinstance(session, str) or name not in ("sessionStart", "postToolUse"):
        return None
    cwd = first_root(payload.get("workspace_roots"))
    project = Path(os.environ.get("CURSOR_PROJECT_DIR") or cwd)
    if name == "sessionStart":
        return Event(True, session, project, cwd, True, name=name)
    given = payload.get("tool_input")
    given = given if isinstance(given, dict) else {}
    path = given.get("file_path") or given.get("path")
    paths = (path,) if isinstance(path, str) else tuple(shell_paths(command(given), cwd))
    return Event(False, session, project, cwd, paths=paths, tool=str(payload.get("tool_name", "")), name=name)


def write(event: Event, text: str) -> str:
    return json.dumps({"additional_context": text})


def adds(event: Event, f: CorpusFile) -> bool:
    """Cursor attaches its own rules whose globs match."""
    return f.meta.convention == "cursor"


def files(server: dict[str, Any], hook: str) -> list[ConfigFile]:
    start = {"command": hook, "timeout": TIMEOUT_S}
    after = {"command": hook, "matcher": "Read|Write|Shell", "timeout": TIMEOUT_S}
    hooks = (flat_hooks((("sessionStart", start), ("postToolUse", after))),)
    return [
        ConfigFile(".cursor/mcp.json", (server_part("mcpServers", server),)),
        ConfigFile(".cursor/hooks.json", hooks, empty=({}, {"version": 1})),
    ]


CLIENT = Client(
    "cursor",
    "Cursor",
    ("cursor-vscode", "cursor"),
    False,
    loads,
    Hook(read, write, limit=9_500, adds=adds, silent="{}"),
    Setup(files, lambda url: {"url": url}),
)
