"""Answers shaped for the client that asks: its instructions written when it connects, and, for
a client whose model reads structured content instead of text, the text alone unless the call
asks to explain. Through the SDK's own client, naming itself as each client does, in both
protocol eras."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from mcp import Client
from mcp.types import Implementation

from protocol.clients import explained, resolve
from server import AgentsServer
from tests.helpers import MODES, make_server, text_of
from tests.projects import parse, serve

pytestmark = pytest.mark.anyio

DEPLOY = "# Deploy\n\n## Rollback\n\nRoll back with the zebra switch.\n"


@pytest.fixture
def server(make_tree: Callable[..., Path]) -> AgentsServer:
    return make_server(make_tree({"deploy.md": DEPLOY, "overview.md": "# Overview\n\nA tea shop.\n"}))


def as_client(name: str) -> Implementation:
    return Implementation(name=name, version="1.0")


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("name", ["claude-code", "codex-mcp-client"])
async def test_a_client_whose_model_reads_structured_content_gets_the_text_alone(
    server: AgentsServer, name: str, mode: str
) -> None:
    async with Client(server, mode=mode, client_info=as_client(name)) as client:
        tools = (await client.list_tools()).tools
        plain = await client.call_tool("context_search", {"query": "rollback"})
        status = await client.call_tool("context_status", {})
        explained_result = await client.call_tool("context_search", {"query": "rollback", "explain": True})
    assert all(t.output_schema is None for t in tools)
    assert plain.structured_content is None and status.structured_content is None
    assert text_of(plain).startswith('<context path=".AGENTS/deploy.md" section="Rollback"')
    assert explained_result.structured_content is not None  # asked for: sent, with why each hit matched
    (hit,) = explained_result.structured_content["hits"]
    assert {m["term"] for m in hit["matched_terms"]} == {"rollback"}


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("name", ["mcp", "inspector-cli", "gemini-cli-mcp-client", "cursor-vscode"])
async def test_any_other_client_gets_text_and_structured_content_without_explanations(
    server: AgentsServer, name: str, mode: str
) -> None:
    async with Client(server, mode=mode, client_info=as_client(name)) as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
        result = await client.call_tool("context_search", {"query": "rollback"})
    assert tools["context_search"].output_schema is not None
    assert result.structured_content is not None
    (hit,) = result.structured_content["hits"]
    assert hit["matched_terms"] == []  # scores and term contributions only when asked
    assert hit["score"] == round(hit["score"], 4)


async def test_the_client_flag_overrides_the_name_a_client_gives(make_tree: Callable[..., Path]) -> None:
    agents = make_tree({"deploy.md": DEPLOY})
    as_claude = make_server(agents, client="claude-code")
    as_unknown = make_server(agents, client="other")
    async with Client(as_claude) as client:  # the SDK's client names itself "mcp"
        assert (await client.call_tool("context_search", {"query": "rollback"})).structured_content is None
    async with Client(as_unknown, client_info=as_client("claude-code")) as client:
        assert (await client.call_tool("context_search", {"query": "rollback"})).structured_content is not None


PROJECT: dict[str, str | bytes] = {
    "AGENTS.md": "# Agents\n\nAGENTS-MARK. Run the tests.\n",
    "CLAUDE.md": "# Claude\n\n@AGENTS.md\n",
    ".AGENTS/overview.md": "# Overview\n\nOVERVIEW-MARK. A tea shop.\n",
}


@pytest.mark.parametrize("mode", MODES)
async def test_the_instructions_and_pinned_context_name_what_the_client_loaded(
    make_tree: Callable[..., Path], mode: str
) -> None:
    folder = make_tree(PROJECT, name="shop")
    as_claude = serve(*parse(["--project", str(folder)], cwd=folder))
    async with Client(as_claude, mode=mode, client_info=as_client("claude-code")) as client:
        instructions = client.instructions or ""
        pinned = text_of(await client.call_tool("pinned_context", {}))
        prompt = await client.get_prompt("pinned_context")
    named = "Already in your context, loaded by Claude Code itself: shop/AGENTS.md (imported by CLAUDE.md)."
    assert named in instructions and "AGENTS-MARK" not in instructions
    assert "OVERVIEW-MARK" in instructions  # not loaded by Claude Code: sent (inline, it fits)
    assert pinned.startswith(named) and "AGENTS-MARK" not in pinned and "OVERVIEW-MARK" in pinned
    assert "AGENTS-MARK" not in str(prompt.messages)
    unknown = serve(*parse(["--project", str(folder)], cwd=folder))
    async with Client(unknown, mode=mode) as client:
        assert "AGENTS-MARK" in (client.instructions or "")
        assert "Already in your context" not in text_of(await client.call_tool("pinned_context", {}))


async def test_the_instructions_are_written_when_the_client_connects(make_tree: Callable[..., Path]) -> None:
    agents = make_tree({"deploy.md": DEPLOY})
    server = make_server(agents)
    (agents / "security.md").write_text("# Security\n\n## Secrets\n\nNever print tokens.\n")
    server.app.catch_up()
    async with Client(server, client_info=as_client("claude-code")) as client:
        assert ".AGENTS/security.md: Security; Secrets" in (client.instructions or "")


def test_resolve_and_explained() -> None:
    assert resolve(None, "claude-code") is not None
    assert resolve("other", "claude-code") is None
    assert resolve("codex", "mcp") is not None and resolve("codex", "mcp").key == "codex"  # type: ignore[union-attr]
    assert explained({"name": "context_search", "arguments": {"explain": True}})
    assert explained({"arguments": {"explain": " TRUE "}})
    assert not explained({"arguments": {"explain": "yes"}}) and not explained({"arguments": {}}) and not explained(None)
