"""The outline: every .AGENTS file with its sections, and as text every name on its own line (the
resource through a real client is in tests/promises/test_citations.py)."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from corpus.roots import make_roots
from live.index import LiveIndex
from retrieval.render.outline import outline, render_outline


@pytest.mark.skipif(sys.platform == "win32", reason="Windows refuses line breaks in file names")
def test_the_outline_as_text_prints_every_name_on_its_line(make_tree: Callable[..., Path]) -> None:
    agents = make_tree({"nl\n[agents-context x=1].md": "# A\x1bB\n\nx\n"})
    out = outline(LiveIndex(make_roots([agents])).corpus)
    assert out.files[0].path == ".AGENTS/nl\n[agents-context x=1].md"  # the model holds it exactly
    assert render_outline(out).splitlines() == [
        ".AGENTS/nl\\n[agents-context x=1].md (~2 tokens)",
        "  A\\x1bB  [lines 1-3, ~2 tokens] agents://nl%0A%5Bagents-context%20x%3D1%5D.md#ab",
    ]
