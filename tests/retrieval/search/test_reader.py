"""read_context and #fragment reads: files, sections and lines by any name, citations that resolve."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from mcp import Client, MCPError

from server import AgentsServer
from tests.conftest import SECURITY
from tests.helpers import call, make_server, split_status, text_of

pytestmark = pytest.mark.anyio


async def test_citations_and_section_uris_resolve_to_the_exact_lines(server: AgentsServer, agents: Path) -> None:
    lines = SECURITY.split("\n")
    async with Client(server) as client:
        _, _, result = await call(client, "context_search", query="setup", k=5)
        for hit in result["hits"]:
            expected = "\n".join(lines[hit["start_line"] - 1 : hit["end_line"]])
            read = await client.read_resource(hit["section_uri"])
            assert getattr(read.contents[0], "text", None) == expected == hit["text"]
    setups = [h for h in result["hits"] if h["heading"] == "Setup"]
    assert [h["section_uri"] for h in setups] == [
        "agents://security.md#setup",
        "agents://security.md#setup-1",
    ]
    assert setups[0]["citation"] == ".AGENTS/security.md:9-11 (Security > Setup)"


async def test_every_section_uri_reads_its_own_section_even_when_slugs_collide(agents: Path) -> None:
    headings = ["Setup", "Setup", "Setup 1", "Setup-1", "Intro", "Setup"]
    text = "Before any heading.\n\n" + "".join(f"## {h}\n\nBody {i}.\n\n" for i, h in enumerate(headings))
    (agents / "dupes.md").write_text(text)
    server = make_server(agents)
    async with Client(server) as client:
        read = await client.read_resource("agents-context://outline")
        outline = json.loads(getattr(read.contents[0], "text", "{}"))
        (sections,) = [f["sections"] for f in outline["files"] if f["path"] == ".AGENTS/dupes.md"]
        texts = [getattr((await client.read_resource(s["uri"])).contents[0], "text", None) for s in sections]
    anchors = [s["anchor"] for s in sections]
    assert anchors == ["intro", "setup", "setup-1", "setup-1-1", "setup-1-2", "intro-1", "setup-2"]
    assert texts == ["Before any heading."] + [f"## {h}\n\nBody {i}." for i, h in enumerate(headings)]


async def test_raw_fragment_uris_read_one_section_or_lines(server: AgentsServer, agents: Path) -> None:
    (agents / "notes.md").write_text("Text before any heading.\n\n# Notes\n\nbody\n")
    async with Client(server) as client:
        intro = await client.read_resource("agents://notes.md#intro")
        secrets = await client.read_resource("agents://security.md#secrets")
        window = await client.read_resource("agents://security.md#L5-L7")
        with pytest.raises(MCPError, match="no section 'nope'"):
            await client.read_resource("agents://security.md#nope")
    assert (
        getattr(secrets.contents[0], "text", None)
        == "## Secrets\n\nNever print the .env file. Rotate the watch filter token monthly."
    )
    assert (
        getattr(window.contents[0], "text", None)
        == "## Secrets\n\nNever print the .env file. Rotate the watch filter token monthly."
    )
    assert getattr(intro.contents[0], "text", "") == "Text before any heading."


@pytest.mark.parametrize(
    ("args", "lines", "first"),
    [
        ({"path": ".AGENTS/security.md", "section": "Secrets"}, "5-7", "## Secrets"),
        ({"path": "agents://security.md#logging"}, "13-15", "## Logging"),
        ({"path": "security.md", "section": "Security > Setup"}, "9-11", "## Setup"),
        ({"path": "security.md", "section": "setup-1"}, "17-19", "## Setup"),
        ({"path": "services/deploy.md", "start_line": 3, "end_line": 4}, "3-4", "## Rollback"),
    ],
)
async def test_read_context_reads_files_sections_and_lines(
    server: AgentsServer, args: dict[str, object], lines: str, first: str
) -> None:
    async with Client(server) as client:
        body, status, _ = await call(client, "read_context", **args)
    assert status["method"] == "read" and status["lines"] == lines
    assert body.split("\n")[1] == first and body.endswith("</context>")


async def test_read_context_says_when_a_heading_repeats(server: AgentsServer) -> None:
    async with Client(server) as client:
        _, status, _ = await call(client, "read_context", path="security.md", section="Setup")
    assert status["other_sections"] == "#setup-1"


async def test_read_context_suggests_close_paths_and_refuses_escapes(server: AgentsServer) -> None:
    async with Client(server) as client:
        unknown = await client.call_tool("read_context", {"path": "securty.md"})
        escape = await client.call_tool("read_context", {"path": "../../etc/passwd"})
        secret = await client.call_tool("read_context", {"path": "agents://.env"})
    assert unknown.is_error and "did you mean .AGENTS/security.md" in text_of(unknown)
    assert escape.is_error and "'..'" in text_of(escape)
    assert secret.is_error and "looks like a secret" in text_of(secret)


async def test_read_context_cuts_within_the_budget_and_says_where_to_continue(agents: Path) -> None:
    (agents / "long.md").write_text("# Long\n\n" + "".join(f"line {i} {'w' * 70}\n" for i in range(300)))
    server = make_server(agents)
    async with Client(server) as client:
        result = await client.call_tool("read_context", {"path": "long.md", "max_tokens": 500})
        text = text_of(result)
        _, status = split_status(text)
        again = await client.call_tool(
            "read_context", {"path": "long.md", "start_line": int(status["next_line"]), "max_tokens": 500}
        )
    assert len(text) <= 2000 and status["truncated"] == "1"
    assert f"continue with start_line={status['next_line']}]" in text
    assert text_of(again).split("\n")[1].startswith(f"line {int(status['next_line']) - 3} ")
