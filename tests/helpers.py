"""Helpers for tests that drive the server through a real MCP client."""

from __future__ import annotations

import inspect
import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import anyio
from mcp import Client
from mcp.types import CallToolResult, TextContent

from cli.settings import Settings, open_index
from server import AgentsServer, create_server

T = TypeVar("T")

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
