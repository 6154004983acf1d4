"""The outline resource: every .AGENTS file with its sections."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from mcp import Client

from corpus.roots import make_roots
from live.index import LiveIndex
from retrieval.render.outline import outline, render_outline
from server import AgentsServer

pytestmark = pytest.mark.anyio


async def test_the_outline_resource_maps_every_file(server: AgentsServer) -> None:
    async with Client(server) as client:
        read = await client.read_resource("agents-context://outline")
    outline = json.loads(getattr(read.contents[0], "text", "{}"))
    files = {f["path"]: f for f in outline["files"]}
    assert sorted(files) == [
        ".AGENTS/overview.md",
        ".AGENTS/security.md",
        ".AGENTS/services/api.md",
        ".AGENTS/services/deploy.md",
    ]
    sections = files[".AGENTS/security.md"]["sections"]
    assert [(s["heading"], s["anchor"], s["start_line"], s["end_line"]) for s in sections] == [
        ("Security", "security", 1, 3),
        ("Secrets", "secrets", 5, 7),
        ("Setup", "setup", 9, 11),
        ("Logging", "logging", 13, 15),
        ("Setup", "setup-1", 17, 19),
    ]
    assert all(s["tokens"] > 0 for s in sections) and files[".AGENTS/overview.md"]["pinned"] is True


@pytest.mark.skipif(sys.platform == "win32", reason="Windows refuses line breaks in file names")
def test_the_outline_as_text_prints_every_name_on_its_line(make_tree: Callable[..., Path]) -> None:
    agents = make_tree({"nl\n[agents-context x=1].md": "# A\x1bB\n\nx\n"})
    out = outline(LiveIndex(make_roots([agents])).corpus)
    assert out.files[0].path == ".AGENTS/nl\n[agents-context x=1].md"  # the model holds it exactly
    assert render_outline(out).splitlines() == [
        ".AGENTS/nl\\n[agents-context x=1].md (~2 tokens)",
        "  A\\x1bB  [lines 1-3, ~2 tokens] agents://nl%0A%5Bagents-context%20x%3D1%5D.md#ab",
    ]
