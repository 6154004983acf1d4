"""Gemini CLI: what it loads itself (`GEMINI.md` with `@` imports; a nested one when a file tool
touches its folder), the hook it runs, and `.gemini/settings.json`."""

from __future__ import annotations

from pathlib import Path, PurePosixPath
from typing import Any

from clients.claude_code import TIMEOUT_S, handler
from clients.client import Client, Hook, Loaded, Setup
from clients.entries import SERVER, ConfigFile, grouped_hooks, server_part
from clients.loading import top, with_imports
from clients.payloads import (
    MAX_WORDS,
    Event,
    command,
    first,
    is_file,
    one,
    shaped,
    shell_paths,
    specific_output,
)  # fmt: skip
from corpus.catalog import Corpus
from corpus.files import CorpusFile

TOOLS = "read_file|read_many_files|write_file|replace|run_shell_command"


def loads(corpus: Corpus) -> Loaded:
    """GEMINI.md at the project's top, with its `@` imports (AGENTS.md only if its settings name
    it, which the server cannot see)."""
    memory = [f for f in corpus.files.agents() if top(f, "GEMINI.md")]
    return with_imports(corpus, memory, {f.path: "context file" for f in memory})


def paths(tool: str, given: dict[str, Any], cwd: Path) -> tuple[str, ...] | None:
    if tool in ("read_file", "write_file", "replace"):
        return one(given.get("file_path") or given.get("absolute_path"))
    if tool == "read_many_files":  # its `include` holds paths and globs: the paths count
        include = given.get("include") or given.get("paths") or []
        named = [p for p in include[:MAX_WORDS] if isinstance(p, str)] if isinstance(include, list) else []
        return tuple(first(str(cwd / p) for p in named if "\0" not in p and is_file(cwd / p)))
    if tool == "run_shell_command":
        return tuple(shell_paths(command(given), cwd))
    return None


def read(payload: dict[str, Any]) -> Event | None:
    return shaped(payload, "GEMINI_PROJECT_DIR", ("AfterTool",), ("startup", "clear"), paths)


def adds(event: Event, f: CorpusFile) -> bool:
    """Gemini CLI adds a nested GEMINI.md when one of its file tools touches its folder (its
    "just in time" context: read_file, read_many_files, write_file, replace, list_directory), not
    when run_shell_command does."""
    return event.tool != "run_shell_command" and PurePosixPath(f.rel).name == "GEMINI.md"


def files(server: dict[str, Any], hook: str) -> list[ConfigFile]:
    hooked = {"name": SERVER, **handler(hook), "timeout": TIMEOUT_S * 1000}  # milliseconds
    parts = (
        server_part("mcpServers", {**server, "trust": True}),
        grouped_hooks((("SessionStart", ""), ("AfterTool", TOOLS)), hooked),
    )
    return [ConfigFile(".gemini/settings.json", parts)]


CLIENT = Client(
    "gemini-cli",
    "Gemini CLI",
    ("gemini-cli-mcp-client", "gemini-cli"),
    False,
    loads,
    Hook(read, specific_output, limit=9_500, adds=adds),
    Setup(files, lambda url: {"httpUrl": url}),  # Gemini CLI's `url` is the older SSE transport
)
