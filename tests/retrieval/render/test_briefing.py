"""What reaches the model before any search, on real files: pinned blocks are well-formed
whatever the pinned file is called."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from mcp import Client

from corpus.roots import make_roots
from corpus.rules import PinSet
from live.index import LiveIndex
from retrieval.render import briefing
from tests.conftest import write_tree
from tests.projects import CURSOR_AND_COPILOT, parse, serve


def test_a_pinned_path_with_markup_characters_is_escaped_in_every_block(make_tree: Callable[..., Path]) -> None:
    name = 'pin&"<x>.md'
    agents = make_tree({name: "# Pinned\n\nKeep <this> & that.\n", "rules.md": "# Rules\n\nx\n"})
    live = LiveIndex(make_roots([agents]), PinSet([name]))
    expected = '<context path=".AGENTS/pin&amp;&quot;&lt;x&gt;.md">\n# Pinned\n\nKeep <this> & that.\n</context>'
    assert briefing.pinned_blocks(live.corpus) == [expected]
    assert expected in briefing.pinned_context(live.corpus)
    assert '.AGENTS/pin&"<x>.md">' not in briefing.instructions(live.corpus, budget_chars=10_000)
    assert expected in briefing.instructions(live.corpus, budget_chars=10_000)


pytestmark = pytest.mark.anyio


async def test_the_instructions_name_what_is_served(tmp_path: Path) -> None:
    repo = write_tree(tmp_path / "web", CURSOR_AND_COPILOT)
    async with Client(serve(*parse([], cwd=repo))) as client:
        conventional = client.instructions or ""
    write_tree(repo, {".AGENTS/overview.md": "# Overview\n\nA web shop.\n"})
    async with Client(serve(*parse(["--conventional"], cwd=repo))) as client:
        both = client.instructions or ""
    assert conventional.startswith(
        "agents-context serves this project's agent instruction files (AGENTS.md, CLAUDE.md, Cursor rules, "
        "Copilot instructions): what the team wants coding agents to know."
    )
    assert ".AGENTS/" not in conventional.split("\n")[0]
    assert both.startswith("agents-context serves this project's .AGENTS/ folder and its agent instruction files")
