"""Helpers for tests that drive the server through a real MCP client, or its command line, and what
the tests of more than one package share: a root whose names link to what is never served, a slow
stored text for the deadline."""

from __future__ import annotations

import inspect
import json
import re
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import anyio
from mcp import Client
from mcp.types import CallToolResult, TextContent

from cli.settings import Settings, open_index
from corpus.catalog import Corpus, load
from corpus.roots import make_roots
from retrieval.chunks.units import Unit
from retrieval.engine.index import BM25Index
from retrieval.engine.library import Library, index_corpus
from retrieval.engine.segments import I32
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


def as_json(*args: str) -> dict[str, Any]:
    """`agents-context ARGS --json`, which must succeed: what it printed, parsed."""
    done = cli(*args, "--json")
    assert done.returncode == 0, done.stderr
    result: dict[str, Any] = json.loads(done.stdout)
    return result


ENTRY = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*-[0-9a-f]{16}\.index")
"""The name of a cache entry: its root's slug and a 16-digit hex key."""


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


class SlowText:
    """The index's stored text of a unit (what the phrase check reads), but slow."""

    def __init__(self, index: BM25Index[Unit], seconds: float = 0.3) -> None:
        self.read = index.text
        self.seconds = seconds
        self.calls = 0

    def __call__(self, slot: int) -> I32:
        self.calls += 1
        time.sleep(self.seconds)
        return self.read(slot)


MARKER = "xyzzy"
"""In every file a link must not serve; plain words, so no output masks it as a credential."""


DENYLISTED = "symlink to a denylisted file .env"
"""Why a link to `.env` is skipped."""


REAL = "# Real\n\nSee [the notes](notes.md), [the api](api.md) and [ok](ok.md).\n"


LINKED: dict[str, str] = {
    "notes.md": ".env",
    "overview.md": ".env",  # pinned by name
    "api.md": ".env",  # context_for_path would pick it for src/api/...
    "chain.md": "sub/hop.md",  # a link to a link to the secret
    "sub/hop.md": "../.env",
    "key.md": "keys/id_rsa",
    "linkdir": "node_modules",
    "into.md": "node_modules/pkg/readme.md",
    "viadir.md": "linkdir/pkg/readme.md",  # through a linked folder
    "pub": "private",
    "draft.md": "private/draft.md",
    "alias": "plans",  # sorts before plans/: still, plans/ is served under its own name only
    "scratch.md": "notes.md~",
    "rules.md": ".agentsignore",
    "ok.md": "real.md",
}


def linked_tree(make_tree: Callable[..., Path]) -> Path:
    """A `.AGENTS` root whose innocent names link to what the root never serves."""
    root = make_tree(
        {
            ".env": f"# Env\n\n{MARKER} token do not serve\n",
            "keys/id_rsa": f"{MARKER} private key\n",
            "node_modules/pkg/readme.md": f"# Pkg\n\n{MARKER} from node modules\n",
            "private/draft.md": f"# Draft\n\n{MARKER} private draft\n",
            "plans/hidden.md": f"# Hidden\n\n{MARKER} hidden plan\n",
            "plans/open.md": "# Open plan\n\nThe shared plan.\n",
            "notes.md~": f"{MARKER} editor scratch\n",
            ".gitignore": "private/\nplans/hidden.md\n",
            ".agentsignore": f"# {MARKER} rules\n",
            "real.md": REAL,
            "web.md": "# Web\n\nThe web rules.\n",
        }
    )
    (root / "sub").mkdir()
    for rel, target in LINKED.items():
        (root / rel).symlink_to(target)
    return root
