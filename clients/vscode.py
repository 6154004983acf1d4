"""VS Code: what it loads itself (`AGENTS.md`, Copilot's instructions) and `.vscode/mcp.json`; it
runs the hooks of Claude Code's `.claude/settings.json`, so it has none of its own."""

from __future__ import annotations

from typing import Any

from clients import claude_code
from clients.client import Client, Loaded, Setup
from clients.entries import ConfigFile, server_part
from clients.loading import top
from corpus.catalog import Corpus


def loads(corpus: Corpus) -> Loaded:
    """AGENTS.md at the project's top and `.github/copilot-instructions.md`."""
    return {
        f.path: "workspace instructions"
        for f in corpus.files.agents()
        if top(f, "AGENTS.md", ".github/copilot-instructions.md")
    }


def files(server: dict[str, Any], hook: str) -> list[ConfigFile]:
    """The server only. A URL's entry brings its own `type` (http)."""
    return [ConfigFile(".vscode/mcp.json", (server_part("servers", {"type": "stdio", **server}),))]


CLIENT = Client(
    "vscode",
    "VS Code",
    ("visual studio code", "visual studio code - insiders"),
    False,
    loads,
    setup=Setup(
        files,
        lambda url: {"type": "http", "url": url},
        note=f"VS Code runs the hooks {claude_code.CLIENT.name} reads from .claude/settings.json: "
        f"`agents-context setup {claude_code.CLIENT.key}` writes them.",
    ),
)
