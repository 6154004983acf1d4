"""The retrieval policy (docs/retrieval.md) over a library built directly: the deadline returns the
best results so far, marked partial, or the outline when nothing is ready. The policy through the
tools (methods and fallbacks, filters, paging, the nearest headings, explanations, the deadline of
a served search) is in tests/promises/test_retrieval.py."""

from __future__ import annotations

from pathlib import Path

from retrieval.render.hits import render_context
from retrieval.search.policy import Policy
from retrieval.search.request import Held, SearchRequest
from tests.helpers import SlowText, library_for


def test_the_deadline_returns_the_best_results_so_far_marked_partial(agents: Path) -> None:
    corpus, library = library_for(agents)
    slow = SlowText(library.sections, seconds=0.6)
    library.sections.text = slow  # type: ignore[method-assign]
    found = Policy(library).rank(SearchRequest(query='"watch filter" token', k=5, deadline_s=0.5), corpus)
    # Two sections hold both words: the first checked holds the phrase, then the time was up.
    assert found.partial is True and found.method == "phrase"
    assert [d.unit.heading for d in found.docs] == ["Secrets"] and slow.calls == 1


def test_a_deadline_with_nothing_ready_still_answers_with_the_outline(agents: Path) -> None:
    corpus, library = library_for(agents)
    found = Policy(library).rank(SearchRequest(query="zebra rollback", k=3, deadline_s=0.0), corpus)
    assert (found.method, found.partial, found.docs) == ("outline", True, [])
    assert found.fallback_reason == "the deadline passed before anything matched"
    rendered = render_context("zebra", Held(found)).text
    assert "(the deadline passed before anything matched; read one with read_context)" in rendered
    assert "no word of the query matched" not in rendered
