"""Argument names as models send them: aliases accepted, unknown and doubled ones refused by name."""

from __future__ import annotations

import pytest
from mcp import Client

from server import AgentsServer
from tests.helpers import split_status, text_of

pytestmark = pytest.mark.anyio


@pytest.mark.parametrize(("alias", "value"), [("q", "zebra"), ("text", "zebra")])
async def test_query_aliases_are_accepted(server: AgentsServer, alias: str, value: str) -> None:
    async with Client(server) as client:
        result = await client.call_tool("context_search", {alias: value})
    assert not result.is_error and "zebra" in text_of(result)


@pytest.mark.parametrize("alias", ["limit", "top_k", "n"])
async def test_k_aliases_are_accepted(server: AgentsServer, alias: str) -> None:
    async with Client(server) as client:
        result = await client.call_tool("context_search", {"query": "setup secrets logs", alias: 1})
    assert split_status(text_of(result))[1]["hits"] == "1"


async def test_unknown_and_doubled_arguments_are_errors_naming_them(server: AgentsServer) -> None:
    async with Client(server) as client:
        unknown = await client.call_tool("context_search", {"query": "x", "limt": 3})
        doubled = await client.call_tool("search_docs", {"query": "x", "q": "y"})
        no_args = await client.call_tool("pinned_context", {"verbose": True})
    assert unknown.is_error and "unknown argument 'limt' for context_search" in text_of(unknown)
    assert "k, max_tokens, offset" in text_of(unknown) or "detail" in text_of(unknown)
    assert doubled.is_error and "'q' and 'query' are the same argument" in text_of(doubled)
    assert no_args.is_error and "unknown argument 'verbose' for pinned_context; it takes: no arguments" in text_of(
        no_args
    )
