"""The BODY + STATUS grammar: status values, escaped attributes."""

from __future__ import annotations

from retrieval.render.grammar import status_line
from retrieval.render.hits import render_context
from tests.retrieval.render.support import bm25, section


def test_attribute_values_are_xml_escaped() -> None:
    doc = section('.AGENTS/a&b "q".md', '<Tags> & "quotes"', "# x", 1.0)
    first_line = render_context("x", bm25(doc)).text.split("\n")[0]
    assert first_line == (
        '<context path=".AGENTS/a&amp;b &quot;q&quot;.md" section="&lt;Tags&gt; &amp; &quot;quotes&quot;" score="1.00">'
    )


def test_status_values_with_spaces_or_quotes_are_json_strings() -> None:
    assert status_line({"method": "bm25-relaxed", "dropped": 'watch "filter"', "hits": 0}) == (
        '[agents-context method=bm25-relaxed dropped="watch \\"filter\\"" hits=0]'
    )


def test_a_heading_full_of_escapes_is_cut_after_escaping() -> None:
    doc = section(".AGENTS/a.md", '"' * 2000, "# x", 1.0)
    first_line = render_context("x", bm25(doc)).text.split("\n")[0]
    shown = first_line.split('section="')[1].split('" score=')[0]
    assert len(shown) <= 512 and shown.endswith("&quot;…")
