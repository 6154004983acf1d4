"""Handshake-era clients: the listChanged advert, resources/subscribe, one record per connection."""

from __future__ import annotations

from pathlib import Path

import pytest
from mcp import Client, MCPError, types

from server import AgentsServer
from tests.helpers import make_server

pytestmark = pytest.mark.anyio


async def test_a_handshake_client_is_told_it_may_subscribe_and_hear_list_changes(server: AgentsServer) -> None:
    async with Client(server, mode="legacy") as client:
        capabilities = client.server_capabilities
        assert capabilities is not None and capabilities.resources is not None
        assert capabilities.resources.list_changed is True
        assert capabilities.resources.subscribe is True


async def test_each_connection_is_remembered_once_with_its_subscriptions(server: AgentsServer) -> None:
    async with Client(server, mode="legacy") as client:
        with pytest.warns(Warning):  # the SDK marks subscribe as deprecated (2026-07-28 uses listen)
            await client.subscribe_resource("agents://security.md")
            await client.subscribe_resource("agents://services/deploy.md")
            await client.unsubscribe_resource("agents://services/deploy.md")
        await client.call_tool("context_search", {"query": "zebra"})  # more requests: still one record
        (remembered,) = list(server.app.clients)
        assert remembered.uris == {"agents://security.md"}
    async with Client(server, mode="legacy") as again:
        await again.list_tools()  # the server has seen this connection's initialized notification by now
        assert set() in [c.uris for c in server.app.clients]  # a new connection: its own record, no subscriptions


async def test_a_modern_client_is_not_recorded_as_a_handshake_one(agents: Path) -> None:
    server = make_server(agents)
    async with Client(server, mode="auto") as client:
        await client.call_tool("context_search", {"query": "zebra"})
        assert list(server.app.clients) == []


async def test_subscribing_to_a_uri_that_names_nothing_served_is_an_invalid_params_error(server: AgentsServer) -> None:
    async with Client(server, mode="legacy") as client:
        with pytest.raises(MCPError) as refused, pytest.warns(Warning):
            await client.subscribe_resource("agents-docs://nowhere/x.md")
    assert refused.value.error.code == types.INVALID_PARAMS
    assert "no docs root labelled 'nowhere'" in refused.value.error.message
