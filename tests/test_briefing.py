"""What reaches the model before any search, on real files: pinned blocks are well-formed
whatever the pinned file is called."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from corpus.roots import make_roots
from corpus.rules import PinSet
from live.index import LiveIndex
from retrieval.render import briefing


def test_a_pinned_path_with_markup_characters_is_escaped_in_every_block(make_tree: Callable[..., Path]) -> None:
    name = 'pin&"<x>.md'
    agents = make_tree({name: "# Pinned\n\nKeep <this> & that.\n", "rules.md": "# Rules\n\nx\n"})
    live = LiveIndex(make_roots([agents]), PinSet([name]))
    expected = '<context path=".AGENTS/pin&amp;&quot;&lt;x&gt;.md">\n# Pinned\n\nKeep <this> & that.\n</context>'
    assert briefing.pinned_blocks(live.corpus) == [expected]
    assert expected in briefing.pinned_context(live.corpus)
    assert '.AGENTS/pin&"<x>.md">' not in briefing.instructions(live.corpus, budget_chars=10_000)
    assert expected in briefing.instructions(live.corpus, budget_chars=10_000)
