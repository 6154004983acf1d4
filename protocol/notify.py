"""Index updates as resource notifications: any update that adds or removes `.AGENTS` files says
`resources/list_changed`, and every changed file's URI gets `resources/updated`, to both protocol
eras: on the subscription bus (2026-07-28 clients, `subscriptions/listen`) and on each handshake-era
connection (its subscribed URIs only). Updates are applied in any thread; they reach the event
loop through `call_soon_threadsafe` and a memory stream, in order, and are sent from there."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import anyio
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
from mcp.server.subscriptions import InMemorySubscriptionBus, ResourcesListChanged, ResourceUpdated

from corpus.catalog import Change
from corpus.identity import file_uri, split_display
from corpus.roots import Root, RootKind
from live.store import Listener
from protocol.legacy import Clients

QUEUED = 10_000
"""Updates waiting to be announced, at most (past that, the newest are dropped)."""

Update = tuple[Root, Change]


@asynccontextmanager
async def notifying(listeners: list[Listener], bus: InMemorySubscriptionBus, clients: Clients) -> AsyncIterator[None]:
    """While inside, every update the listeners hear of is announced."""
    send, receive = anyio.create_memory_object_stream[Update](max_buffer_size=QUEUED)
    loop = asyncio.get_running_loop()

    def on_update(root: Root, change: Change) -> None:  # any thread: hand over to the loop
        with contextlib.suppress(RuntimeError):  # the loop is closing
            loop.call_soon_threadsafe(_offer, send, (root, change))

    listeners.append(on_update)
    async with anyio.create_task_group() as tg:
        tg.start_soon(_announce, receive, bus, clients)
        try:
            yield
        finally:
            listeners.remove(on_update)
            send.close()
            tg.cancel_scope.cancel()


def _offer(send: MemoryObjectSendStream[Update], item: Update) -> None:
    with contextlib.suppress(anyio.WouldBlock, anyio.ClosedResourceError, anyio.BrokenResourceError):
        send.send_nowait(item)


async def _announce(receive: MemoryObjectReceiveStream[Update], bus: InMemorySubscriptionBus, clients: Clients) -> None:
    """Send each update's notifications once per connection, to both protocol eras."""
    async with receive:
        async for root, change in receive:
            await announce(root, change, bus, clients)


async def announce(root: Root, change: Change, bus: InMemorySubscriptionBus, clients: Clients) -> None:
    connected = list(clients)
    if root.kind is RootKind.AGENTS and (change.added or change.removed):
        await bus.publish(ResourcesListChanged())
        for client in connected:
            await client.session.send_resource_list_changed()
    for path in sorted(change.added | change.changed | change.removed):
        uri = file_uri(root, split_display(path)[1])
        await bus.publish(ResourceUpdated(uri=uri))
        for client in connected:
            if uri in client.uris:
                await client.session.send_resource_updated(uri)
