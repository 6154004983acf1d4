"""Index updates as resource notifications: what each update announces, once, in order, from any thread."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import anyio
import pytest
from mcp.server.subscriptions import InMemorySubscriptionBus, ResourcesListChanged, ResourceUpdated

from corpus.roots import make_roots
from live.index import LiveIndex
from protocol.legacy import Clients
from protocol.notify import notifying
from tests.helpers import eventually

pytestmark = pytest.mark.anyio


def recorded(bus: InMemorySubscriptionBus) -> list[str]:
    """What the bus publishes, as `list_changed` and `updated <uri>` lines."""
    seen: list[str] = []

    def record(event: object) -> None:
        if isinstance(event, ResourcesListChanged):
            seen.append("list_changed")
        elif isinstance(event, ResourceUpdated):
            seen.append(f"updated {event.uri}")

    bus.subscribe(record)
    return seen


async def test_each_update_is_announced_once_in_order_from_another_thread(make_tree: Callable[..., Path]) -> None:
    agents = make_tree({"overview.md": "# Overview\n\nhello\n", "rules.md": "# Rules\n\none\n"})
    docs = make_tree({"guide.md": "# Guide\n\nread me\n"}, name="docs")
    live = LiveIndex(make_roots([agents], [docs]), settle_s=0)
    bus = InMemorySubscriptionBus()
    seen = recorded(bus)
    agents_root, docs_root = live.roots
    async with notifying(live.listeners, bus, Clients()):
        (agents / "new.md").write_text("# New\n\nadded\n")
        await anyio.to_thread.run_sync(live.sweep, agents_root)  # updates are applied in worker threads
        (agents / "rules.md").write_text("# Rules\n\ntwo\n")
        await anyio.to_thread.run_sync(live.sweep, agents_root)
        (docs / "guide.md").write_text("# Guide\n\nread me again\n")
        await anyio.to_thread.run_sync(live.sweep, docs_root)
        await eventually(lambda: len(seen) == 4)
    assert seen == [
        "list_changed",  # a .AGENTS file came: the resource list changed
        "updated agents://new.md",
        "updated agents://rules.md",  # an edit: only its own URI
        "updated agents-docs://docs/guide.md",  # docs files are not listed: no list_changed
    ]


async def test_nothing_is_announced_once_the_context_is_left(make_tree: Callable[..., Path]) -> None:
    agents = make_tree({"overview.md": "# Overview\n\nhello\n"})
    live = LiveIndex(make_roots([agents]), settle_s=0)
    bus = InMemorySubscriptionBus()
    seen = recorded(bus)
    async with notifying(live.listeners, bus, Clients()):
        assert len(live.listeners) == 1
    assert live.listeners == []
    (agents / "overview.md").write_text("# Overview\n\nchanged\n")
    live.sweep(live.roots[0])
    await anyio.sleep(0.1)
    assert seen == []


async def test_a_removed_file_says_the_list_changed_and_names_the_file(make_tree: Callable[..., Path]) -> None:
    agents = make_tree({"overview.md": "# Overview\n\nhello\n", "gone.md": "# Gone\n\nsoon\n"})
    live = LiveIndex(make_roots([agents]), settle_s=0)
    bus = InMemorySubscriptionBus()
    seen = recorded(bus)
    async with notifying(live.listeners, bus, Clients()):
        (agents / "gone.md").unlink()
        await anyio.to_thread.run_sync(live.sweep, live.roots[0])
        await eventually(lambda: len(seen) == 2)
    assert seen == ["list_changed", "updated agents://gone.md"]
