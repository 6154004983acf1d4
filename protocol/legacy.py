"""Handshake-era clients (protocol 2025-11-25 and before: Claude Desktop, the Inspector): what
MCPServer does not give them by itself. Most of the SDK internals the server uses are here
(`MCPServer._lowlevel_server`, `ServerSession._connection`); the others are `_tool_manager` in
`server.py` and `_lowlevel_server` again in `protocol/frames.py` (docs/development.md,
"Dependencies", lists them all).

- `resources.listChanged` is advertised (the SDK's initialize result says false);
- `resources/subscribe` and `unsubscribe` are served (MCPServer serves only the 2026-07-28
  `subscriptions/listen`);
- each connection is remembered once (`Clients`), so change notifications can reach it.
"""

from __future__ import annotations

import weakref
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from mcp import MCPError, types
from mcp.server import NotificationOptions
from mcp.server.mcpserver import MCPServer
from mcp.server.session import ServerSession
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from corpus.errors import CorpusError
from corpus.identity import parse_file_uri
from corpus.roots import Root


@dataclass(slots=True)
class LegacyClient:
    """A handshake-era connection: its session (to notify it) and the URIs it subscribed to."""

    session: ServerSession
    uris: set[str] = field(default_factory=set)


class Clients:
    """The handshake-era connections of a server, each once. A `ServerSession` is a per-request
    proxy that keeps working after its request; the connection object (an SDK internal, the one
    stable key) lives exactly as long as the client, so a closed one drops out by itself."""

    def __init__(self) -> None:
        self._by_connection: weakref.WeakKeyDictionary[object, LegacyClient] = weakref.WeakKeyDictionary()

    def of(self, session: ServerSession) -> LegacyClient:
        key = session._connection
        if key not in self._by_connection:
            self._by_connection[key] = LegacyClient(session)
        return self._by_connection[key]

    def __iter__(self) -> Iterator[LegacyClient]:
        return iter(list(self._by_connection.values()))


def capture(clients: Clients) -> Callable[[Any, Any], Awaitable[Any]]:
    """Middleware that remembers each handshake-era connection once it is initialized."""

    async def capture_session(ctx: Any, call_next: Any) -> Any:
        result = await call_next(ctx)
        if ctx.method == "notifications/initialized" and ctx.protocol_version not in MODERN_PROTOCOL_VERSIONS:
            clients.of(ctx.session)
        return result

    return capture_session


def advertise_list_changed(server: MCPServer[Any]) -> None:
    """Advertise `resources.listChanged` to handshake-era clients on every transport.

    `MCPServer.run()` and the in-memory client build their initialize result with default
    NotificationOptions, which say `listChanged: false`; the low-level server has no setting
    for it, so we wrap its options factory (an SDK internal: docs/development.md, "Dependencies").
    """
    lowlevel = server._lowlevel_server
    build = lowlevel.create_initialization_options

    def with_list_changed(notification_options: NotificationOptions | None = None, *args: Any, **kwargs: Any) -> Any:
        options = notification_options or NotificationOptions(resources_changed=True)
        return build(options, *args, **kwargs)

    lowlevel.create_initialization_options = with_list_changed  # type: ignore[method-assign]


def add_subscriptions(server: MCPServer[Any], clients: Clients, roots: list[Root]) -> None:
    """`resources/subscribe` and `unsubscribe`, for URIs of files of `roots`; the capability
    follows from the handlers being there."""

    async def subscribe(ctx: Any, params: types.SubscribeRequestParams) -> types.EmptyResult:
        uri = str(params.uri)
        try:
            parse_file_uri(uri, roots)
        except CorpusError as exc:
            raise MCPError(code=types.INVALID_PARAMS, message=str(exc)) from None
        clients.of(ctx.session).uris.add(uri)
        return types.EmptyResult()

    async def unsubscribe(ctx: Any, params: types.UnsubscribeRequestParams) -> types.EmptyResult:
        clients.of(ctx.session).uris.discard(str(params.uri))
        return types.EmptyResult()

    lowlevel = server._lowlevel_server
    lowlevel.add_request_handler("resources/subscribe", types.SubscribeRequestParams, subscribe)
    lowlevel.add_request_handler("resources/unsubscribe", types.UnsubscribeRequestParams, unsubscribe)
