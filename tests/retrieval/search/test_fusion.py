"""Reciprocal rank fusion of several queries' lists, and which queries are asked."""

from __future__ import annotations

from retrieval.chunks.units import Unit
from retrieval.search.fusion import RRF_K, fuse, variants
from retrieval.search.retriever import Found, RetrievedDocument


def doc(name: str, score: float) -> RetrievedDocument:
    return RetrievedDocument(Unit(f".AGENTS/{name}.md", f"agents://{name}.md", "", 1, 2, heading=name), score)


def test_a_hit_that_several_queries_rank_high_comes_first() -> None:
    first = Found([doc("a", 9.0), doc("b", 8.0), doc("c", 7.0)], candidates=3)
    second = Found([doc("c", 2.0), doc("d", 1.5)], candidates=5)
    fused = fuse([first, second], 3)
    assert [d.unit.heading for d in fused.docs] == ["c", "a", "b"]  # c: 1/63 + 1/61 > a: 1/61 > b: 1/62
    assert fused.candidates == 5 and not fused.partial
    assert 1 / (RRF_K + 3) + 1 / (RRF_K + 1) > 1 / (RRF_K + 1) > 1 / (RRF_K + 2) == 1 / (RRF_K + 2)


def test_each_hit_is_shown_as_the_query_that_ranked_it_best_found_it() -> None:
    fused = fuse([Found([doc("a", 9.0), doc("b", 8.0)], 2), Found([doc("b", 1.5)], 1, partial=True)], 5)
    assert [(d.unit.heading, d.score) for d in fused.docs] == [("b", 1.5), ("a", 9.0)]
    assert fused.partial  # one query stopped at the deadline: the whole answer is partial


def test_equal_fused_scores_keep_the_order_of_the_queries() -> None:
    fused = fuse([Found([doc("a", 1.0)], 1), Found([doc("b", 5.0)], 1)], 1)
    assert [d.unit.heading for d in fused.docs] == ["a"]


def test_the_same_query_said_twice_is_asked_once() -> None:
    assert variants("Deploy  rollback", ["deploy rollback", " ", "rollback window", "Rollback Window"]) == (
        "Deploy  rollback",
        "rollback window",
    )
