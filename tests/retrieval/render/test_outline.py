"""The outline resource: every .AGENTS file with its sections."""

from __future__ import annotations

import json

import pytest
from mcp import Client

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
