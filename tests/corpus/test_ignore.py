""".agentsignore and .gitignore keep files out."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from mcp import Client, MCPError

from cli.settings import Settings
from corpus.roots import make_roots
from live.index import LiveIndex
from server import create_server
from tests.helpers import call

pytestmark = pytest.mark.anyio


async def test_agentsignore_and_gitignore_keep_files_out(make_tree: Callable[..., Path]) -> None:
    agents = make_tree(
        {
            ".agentsignore": "drafts/\n*.scratch.md\n",
            "keep.md": "# Keep\n\nkept words\n",
            "idea.scratch.md": "# Idea\n\nkept words\n",
            "drafts/wip.md": "# WIP\n\nkept words\n",
            "team/.gitignore": "private.md\n!public.md\n*.md\n!notes.md\n",
            "team/private.md": "# Private\n\nkept words\n",
            "team/notes.md": "# Notes\n\nkept words\n",
        }
    )
    live = LiveIndex(make_roots([agents]))
    assert sorted(live.corpus.files) == [".AGENTS/keep.md", ".AGENTS/team/notes.md"]
    assert {s.rel: s.reason for s in live.corpus.skipped} == {
        "drafts/": "ignored by .agentsignore",
        "idea.scratch.md": "ignored by .agentsignore",
        "team/private.md": "ignored by .gitignore",
    }
    server = create_server(live, Settings(agents=(agents,), debounce_ms=50, poll_interval_s=0.2))
    async with Client(server) as client:
        with pytest.raises(MCPError, match=r"ignored by \.agentsignore"):
            await client.read_resource("agents://drafts/wip.md")
        (agents / ".agentsignore").write_text("*.scratch.md\n")  # drafts/ is back
        _, _, found = await call(client, "context_search", query="kept words", k=10)
    assert sorted(h["path"] for h in found["hits"]) == [
        ".AGENTS/drafts/wip.md",
        ".AGENTS/keep.md",
        ".AGENTS/team/notes.md",
    ]
