"""What ranks: a front matter title heads the trail, tags rank with the heading."""

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


async def test_a_front_matter_title_heads_the_trail_and_ranks(make_tree: Callable[..., Path]) -> None:
    agents = make_tree(
        {
            "oncall.md": "---\ntitle: Incident runbook\ndescription: Outage steps\n---\n## Paging\n\nCall the engineer.\n",
            "style.md": "# Style\n\nFour spaces, and call things by their names.\n",
        }
    )
    server = create_server(LiveIndex(make_roots([agents])), Settings(agents=(agents,)))
    async with Client(server) as client:
        _, _, by_title = await call(client, "context_search", query="runbook")
        _, _, by_description = await call(client, "context_search", query="outage")
    assert by_title["hits"][0]["path"].endswith("oncall.md")
    assert "(Incident runbook > Paging)" in by_title["hits"][0]["citation"]
    assert by_description["hits"] == []  # descriptions are shown, not indexed: they cost ranking quality


async def test_front_matter_tags_rank_a_file_for_its_topics(make_tree: Callable[..., Path]) -> None:
    agents = make_tree(
        {
            "deploy.md": "---\ntitle: Shipping\ntags: [kubernetes, helm]\n---\n# Releases\n\nTag the commit, then run the pipeline.\n",
            "style.md": "# Style\n\nFour spaces.\n",
        }
    )
    server = create_server(LiveIndex(make_roots([agents])), Settings(agents=(agents,)))
    async with Client(server) as client:
        _, _, found = await call(client, "context_search", query="kubernetes")
    (hit,) = found["hits"]
    assert hit["path"] == ".AGENTS/deploy.md"
    assert "kubernetes" not in hit["text"]  # found by its tag alone; the tag is not shown as a heading
    assert "(Shipping > Releases)" in hit["citation"]
