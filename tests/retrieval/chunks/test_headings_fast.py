"""The headings read straight from the lines (a file with no fence, HTML block, link reference,
setext underline or indented `#`) are exactly those markdown-it-py's block parser finds."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from corpus.markdown import front_matter_end, split_lines
from retrieval.chunks import sections as chunking

TLDR = Path(__file__).resolve().parents[4] / "shared" / "corpora" / "tldr"

lines_without_triggers = st.lists(
    st.one_of(
        st.sampled_from(
            [
                "# H1",
                "## H2 ##",
                "### H3 #",
                "#\tTab #\t",
                "#",
                "##",
                "## ##",
                "# #",
                "# a #b",
                "# a\\#",
                "####### seven",
                "#hashtag",
                "# x { #given-id }",
                "# trailing   ",
                "#  # ",
                "> # quoted",
                "> quote",
                "- item",
                "- # in a list",
                "1. one",
                "* star",
                "  continued",
                "text",
                "",
                "    # indented code",
                "`code`",
                "# ü ☃ 中文",
                "#\u00a0nbsp #",
                "# x \u3000#",
            ]
        ),
        st.text(alphabet=st.characters(blacklist_characters="\r\n\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"), max_size=12),
    ),
    max_size=30,
)


def parsed(lines: list[str], body_start: int) -> list[tuple[int, int, str, str | None]]:
    """The headings as markdown-it-py's block parser finds them, whatever the lines hold."""

    class Always:
        def search(self, _: str) -> bool:
            return True

    saved = chunking._NEEDS_PARSER
    chunking._NEEDS_PARSER = Always()  # type: ignore[assignment]
    try:
        return chunking._headings(lines, body_start)
    finally:
        chunking._NEEDS_PARSER = saved


@settings(max_examples=400)
@given(lines_without_triggers)
def test_read_from_the_lines_as_the_parser_reads_them(lines: list[str]) -> None:
    assert chunking._headings(lines, 0) == parsed(lines, 0)


def test_lines_that_need_the_parser_go_to_it() -> None:
    setext = ["Title", "====="]
    fenced = ["```", "# not a heading", "```"]
    html = ["<div>", "# inside an HTML block", "</div>"]
    assert chunking._headings(setext, 0) == [(0, 1, "Title", None)]
    assert chunking._headings(fenced, 0) == []
    assert chunking._headings(html, 0) == parsed(html, 0)


@pytest.mark.skipif(not TLDR.is_dir(), reason="needs ../shared/corpora/tldr")
def test_every_tldr_page_reads_the_same() -> None:
    pages = sorted(TLDR.rglob("*.md"))
    assert len(pages) > 30_000
    fast = 0
    for page in pages:
        lines = split_lines(page.read_text(encoding="utf-8", errors="replace"))
        start = front_matter_end(lines)
        fast += chunking._NEEDS_PARSER.search("\n".join(lines[start:])) is None
        assert chunking._headings(lines, start) == parsed(lines, start), page
    assert fast > 0.99 * len(pages)  # the point of the fast path: nearly every page takes it
