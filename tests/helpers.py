"""Helpers for tests that drive the server through a real MCP client."""

from __future__ import annotations

import inspect
import json
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import anyio
from mcp import Client
from mcp.types import CallToolResult, TextContent

from cli.settings import Settings, open_index
from corpus.catalog import Corpus, load
from corpus.roots import make_roots
from retrieval.engine.library import Library, index_corpus
from server import AgentsServer, create_server

T = TypeVar("T")

REPO = Path(__file__).resolve().parents[1]
"""The checkout under test."""
SERVER = str(REPO / "server.py")
"""The server as `python server.py` starts it."""
SCRIPT = Path(sys.executable).with_name("agents-context")
"""The console script, when the checkout is installed in the running venv (as `uv run` does)."""

TOOLS = [
    "context_search",
    "search_docs",
    "context_for_path",
    "read_context",
    "pinned_context",
    "context_status",
]
"""Every tool, in the order the server lists them."""

MODES = ["legacy", "auto"]
"""Both protocol eras: the 2025-11-25 handshake (Claude Desktop, the Inspector) and 2026-07-28."""


def make_server(agents: Path, docs: list[Path] | None = None, **overrides: Any) -> AgentsServer:
    """A server over these roots, as `serve` builds it (no cache; a quick watcher), in process."""
    pins = overrides.pop("pins", None)
    factory = overrides.pop("watch_factory", None)
    settings = Settings(
        agents=(agents,),
        docs=tuple(docs or ()),
        pins=tuple(pins) if pins is not None else None,
        **{"no_cache": True, "debounce_ms": 50, "poll_interval_s": 0.2, **overrides},
    )
    live = open_index(settings)
    return create_server(live, settings, factory) if factory else create_server(live, settings)


def text_of(result: CallToolResult) -> str:
    (block,) = result.content
    assert isinstance(block, TextContent)
    return block.text


async def eventually(probe: Callable[[], Any], timeout: float = 10.0) -> Any:
    """Poll `probe` (sync or async) until it returns something truthy; fail after a generous timeout."""
    with anyio.fail_after(timeout):
        while True:
            value = probe()
            if inspect.isawaitable(value):
                value = await value
            if value:
                return value
            await anyio.sleep(0.05)


async def search(client: Client, query: str, tool: str = "context_search", **args: Any) -> str:
    return text_of(await client.call_tool(tool, {"query": query, **args}))


def split_status(text: str) -> tuple[str, dict[str, str]]:
    """BODY and the STATUS line's fields: `(body, {"method": "bm25", "hits": "2", ...})`."""
    body, _, line = text.rpartition("\n\n")
    assert line.startswith("[agents-context ") and line.endswith("]"), line
    fields = {
        key: json.loads(value) if value.startswith('"') else value
        for key, value in re.findall(r'(\w+)=("(?:[^"\\]|\\.)*"|[^ \]]+)', line)
    }
    return body, fields


def cli(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    """`agents-context ARGS` through its real entry point (the console script, else `python server.py`)."""
    command = [str(SCRIPT)] if SCRIPT.exists() else [sys.executable, SERVER]
    return subprocess.run([*command, *args], capture_output=True, text=True, timeout=300, cwd=cwd, check=False)


async def call(client: Client, tool: str, **args: object) -> tuple[str, dict[str, str], dict[str, Any]]:
    """A tool call that must succeed: its BODY, its STATUS fields and its structured content."""
    result = await client.call_tool(tool, args)
    assert not result.is_error, text_of(result)
    body, status = split_status(text_of(result))
    return body, status, result.structured_content or {}


def library_for(agents: Path) -> tuple[Corpus, Library]:
    """A `.AGENTS` folder read once and indexed, as the server would (no live index)."""
    corpus = load(make_roots([agents]))
    return corpus, index_corpus(corpus)
