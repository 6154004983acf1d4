"""Reciprocal rank fusion of several queries' lists, and which queries are asked."""

from __future__ import annotations

from retrieval.chunks.units import Unit
from retrieval.search.fusion import fuse, variants
from retrieval.search.retriever import Found, RetrievedDocument


def doc(name: str, score: float) -> RetrievedDocument:
    return RetrievedDocument(Unit(f".AGENTS/{name}.md", f"agents://{name}.md", "", 1, 2, heading=name), score)


def test_a_hit_that_several_queries_rank_high_comes_first() -> None:
    first = Found([doc("a", 9.0), doc("b", 8.0), doc("c", 7.0)], candidates=3)
    second = Found([doc("c", 2.0), doc("d", 1.5)], candidates=5)
    fused = fuse([first, second], 3)
    assert [d.unit.heading for d in fused.docs] == ["c", "a", "b"]  # c: 1/63 + 1/61 > a: 1/61 > b: 1/62
    assert fused.candidates == 5 and not fused.partial


def test_a_hit_every_query_finds_low_outranks_a_hit_one_query_ranks_first() -> None:
    """Agreement between queries counts for more than one query's first place: with RRF_K = 60,
    third in both lists (2/63) beats first in one (1/61), whatever the scores."""
    first = Found([doc("a", 90.0), doc("x", 8.0), doc("both", 0.1)], candidates=3)
    second = Found([doc("b", 50.0), doc("y", 4.0), doc("both", 0.2)], candidates=3)
    assert [d.unit.heading for d in fuse([first, second], 5).docs] == ["both", "a", "b", "x", "y"]


def test_each_hit_is_shown_as_the_query_that_ranked_it_best_found_it() -> None:
    fused = fuse([Found([doc("a", 9.0), doc("b", 8.0)], 2), Found([doc("b", 1.5)], 1, partial=True)], 5)
    assert [(d.unit.heading, d.score) for d in fused.docs] == [("b", 1.5), ("a", 9.0)]
    assert fused.partial  # one query stopped at the deadline: the whole answer is partial


def test_equal_fused_scores_keep_the_order_of_the_queries() -> None:
    fused = fuse([Found([doc("a", 1.0)], 1), Found([doc("b", 5.0)], 1)], 1)
    assert [d.unit.heading for d in fused.docs] == ["a"]


def window(page: str, chunk: int) -> RetrievedDocument:
    unit = Unit(
        f"docs/{page}.md", f"docs://{page}.md", "", chunk * 10 + 1, chunk * 10 + 9, heading=page, chunk_id=chunk
    )
    return RetrievedDocument(unit, 1.0)


def test_a_page_every_query_finds_by_other_windows_comes_before_a_window_they_share() -> None:
    """search_docs: each query ranks page A first, by a different window; both rank B's one window
    second. A's windows are different units, so by window B would lead (2/62 against 1/61); by
    page A leads (2/61), and its other window keeps its own place."""
    lists = [Found([window("a", 0), window("b", 0)], 2), Found([window("a", 1), window("b", 0)], 2)]
    by_window = fuse(lists, 3)
    by_page = fuse(lists, 3, pages=True)
    assert [d.id for d in by_window.docs] == ["docs/b.md#0", "docs/a.md#0", "docs/a.md#1"]
    assert [d.id for d in by_page.docs] == ["docs/a.md#0", "docs/b.md#0", "docs/a.md#1"]


def test_a_page_found_by_one_query_only_does_not_overtake_one_found_by_all() -> None:
    """B is found by both queries (by two windows), A and C by one each: B's best window leads, at
    its page's score; A, first in one list, comes next; B's other window is placed by its own."""
    lists = [Found([window("a", 0), window("b", 0)], 2), Found([window("b", 1), window("c", 0)], 2)]
    fused = [d.id for d in fuse(lists, 4, pages=True).docs]
    assert fused == ["docs/b.md#1", "docs/a.md#0", "docs/b.md#0", "docs/c.md#0"]


def test_the_same_query_said_twice_is_asked_once() -> None:
    assert variants("Deploy  rollback", ["deploy rollback", " ", "rollback window", "Rollback Window"]) == (
        "Deploy  rollback",
        "rollback window",
    )
