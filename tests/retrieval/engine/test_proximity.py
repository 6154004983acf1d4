"""The BM25TP proximity bonus, worked by hand."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from retrieval.engine.proximity import occurrence_shares


def proximity_shares(tokens: Sequence[str], idf: dict[str, float], k1: float, norm: float) -> dict[str, float]:
    """The bonus of a whole token list, through the query terms' occurrences as the index finds them."""
    hits = [(at, t) for at, t in enumerate(tokens) if t in idf]
    return occurrence_shares([at for at, _ in hits], [t for _, t in hits], idf, k1, norm)


def test_the_bonus_of_a_small_text_worked_by_hand() -> None:
    # a at 0, b at 2: acc(a) = idf(b) / 2^2 = 0.75, acc(b) = idf(a) / 4 = 0.5; min(1, idf) = 1.
    shares = proximity_shares(["a", "x", "b"], {"a": 2.0, "b": 3.0}, k1=1.5, norm=1.0)
    assert shares == pytest.approx({"a": 0.75 * 2.5 / (0.75 + 1.5), "b": 0.5 * 2.5 / (0.5 + 1.5)})
    assert proximity_shares(["a", "a", "a"], {"a": 2.0, "b": 3.0}, 1.5, 1.0) == {}  # one term alone: nothing
    assert proximity_shares(["a", "b"], {"a": 2.0}, 1.5, 1.0) == {}  # a one-term query: nothing
