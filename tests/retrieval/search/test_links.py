"""Links between corpus files: a hit lists the sections it links to."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from mcp import Client

from cli.settings import Settings
from corpus.roots import make_roots
from live.index import LiveIndex
from server import create_server
from tests.helpers import call

pytestmark = pytest.mark.anyio


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
