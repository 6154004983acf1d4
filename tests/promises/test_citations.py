"""Citations and navigation (docs/retrieval.md, "Citations and navigation"), through a real
client: every citation and section URI reads exactly its lines, even where slugs collide;
`#fragment` reads give one section or those lines; read_context reads files, sections and lines
by any name, says when a heading repeats, suggests close paths, refuses escapes and cuts within
its budget saying where to continue; a section is found by its heading however its markup is
written (a MkDocs / Pandoc attribute id is its anchor); the outline resource maps every file with
its sections; a hit lists the sections it links to."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from mcp import Client, MCPError

from cli.settings import Settings
from corpus.roots import make_roots
from live.index import LiveIndex
from server import AgentsServer, create_server
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


CORS = (
    "# Middleware {#middleware}\n\nHow requests pass through.\n\n"
    "## Use `CORSMiddleware` { #use-corsmiddleware }\n\nAllow the front end's origin only.\n\n"
    "## The *trusted* [hosts](https://example.com/hosts) list {.note}\n\nName every host.\n\n"
    "## Setup\n\nInstall it.\n\n## Setup\n\nAgain.\n"
)


async def test_a_section_is_found_by_its_heading_however_markup_is_written(tmp_path: Path) -> None:
    agents = tmp_path / ".AGENTS"
    agents.mkdir()
    (agents / "overview.md").write_text("# Overview\n\nThe service.\n")
    (agents / "middleware.md").write_text(CORS)
    server = make_server(agents)
    async with Client(server) as client:
        read: dict[str, str] = {}
        for section in (
            "Use CORSMiddleware",
            "use corsmiddleware",
            "## Use `CORSMiddleware`",
            "Use `CORSMiddleware`",
            "use-corsmiddleware",
            "Middleware > Use CORSMiddleware",
            "Use `CORSMiddleware` { #use-corsmiddleware }",
        ):
            body, status, _ = await call(client, "read_context", path="middleware.md", section=section)
            read[section] = body.split("\n")[1]
            assert status["lines"] == "5-7", section
        body, _, _ = await call(client, "read_context", path="middleware.md", section="the trusted hosts list")
        exact, status, _ = await call(client, "read_context", path="middleware.md", section="Setup")
        by_uri = await client.read_resource("agents://middleware.md#use-corsmiddleware")
        missing = await client.call_tool("read_context", {"path": "middleware.md", "section": "Use CORS"})
        outline = json.loads(getattr((await client.read_resource("agents-context://outline")).contents[0], "text", ""))
        _, _, found = await call(client, "context_search", query="CORSMiddleware origin")
    assert set(read.values()) == {"## Use `CORSMiddleware` { #use-corsmiddleware }"}
    assert body.split("\n")[1].startswith("## The *trusted* [hosts]")
    assert exact.split("\n")[1] == "## Setup" and status["other_sections"] == "#setup-1"
    assert getattr(by_uri.contents[0], "text", "").startswith("## Use `CORSMiddleware` { #use-corsmiddleware }")
    assert missing.is_error and "Use `CORSMiddleware` (#use-corsmiddleware)" in text_of(missing)
    (sections_,) = [f["sections"] for f in outline["files"] if f["path"] == ".AGENTS/middleware.md"]
    assert [(s["heading"], s["anchor"]) for s in sections_] == [
        ("Middleware", "middleware"),
        ("Use `CORSMiddleware`", "use-corsmiddleware"),
        ("The *trusted* [hosts](https://example.com/hosts) list", "the-trusted-hosts-list"),
        ("Setup", "setup"),
        ("Setup", "setup-1"),
    ]
    hit = found["hits"][0]
    assert hit["heading"] == "Use `CORSMiddleware`"
    assert hit["section_uri"] == "agents://middleware.md#use-corsmiddleware"
    assert "#use-corsmiddleware--use-corsmiddleware-" not in json.dumps(found)


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


async def test_hits_list_the_sections_they_link_to(make_tree: Callable[..., Path]) -> None:
    agents = make_tree(
        {
            "deploy.md": "# Deploy\n\nBefore shipping read [the secrets rule](security.md#secrets), "
            "[logging](ops/logging.md), [outside](../README.md) and [the web](https://example.com).\n",
            "security.md": "# Security\n\n## Secrets\n\nNever print tokens.\n",
            "ops/logging.md": "# Logging\n\nStructured logs.\n",
        }
    )
    live = LiveIndex(make_roots([agents]))
    server = create_server(live, Settings(agents=(agents,)))
    async with Client(server) as client:
        _, _, found = await call(client, "context_search", query="shipping", k=1)
    assert [(link["text"], link["uri"]) for link in found["hits"][0]["links"]] == [
        ("the secrets rule", "agents://security.md#secrets"),
        ("logging", "agents://ops/logging.md"),
    ]
