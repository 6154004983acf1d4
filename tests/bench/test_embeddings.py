"""The embedding benchmark's arithmetic: how a similarity re-orders the tools' hits, and its
interval. The model itself is not a dependency, so it runs only where its packages are added."""

from __future__ import annotations

from bench.embeddings import interval, reranked


def test_a_close_hit_overtakes_a_better_scored_one_only_at_a_weight_that_allows_it() -> None:
    scores = [10.0, 9.0, 5.0]
    similar = [0.20, 0.60, 0.30]  # the second hit is the one closest to the question
    assert reranked(scores, similar, 0.05) == [0, 1, 2]
    assert reranked(scores, similar, 0.5) == [1, 0, 2]


def test_hits_alike_to_the_question_keep_the_tools_order() -> None:
    assert reranked([3.0, 3.0, 1.0], [0.4, 0.4, 0.4], 0.5) == [0, 1, 2]
    assert reranked([], [], 0.5) == []


def test_the_interval_holds_the_mean_difference_and_is_zero_without_one() -> None:
    assert interval([1.0, 0.0, 0.5], [1.0, 0.0, 0.5]) == (0.0, 0.0)
    low, high = interval([0.0] * 40, [1.0] * 20 + [0.0] * 20)
    assert 0.2 < low <= 0.5 <= high < 0.8
