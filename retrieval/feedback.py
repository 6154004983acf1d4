"""Pseudo-relevance feedback (RM3): expand a query with the words of its own best hits.

A first search takes the `docs` best units; each term of their text gets the weight
sum over those units of P(unit | query) * tf(term, unit) / |unit|, with P(unit | query) the
unit's share of the first-pass score. The `terms` heaviest terms join the query, the original
terms keeping `original` of the total weight (Lavrenko and Croft's relevance model, interpolated
as in Anserini's RM3). Weights are scaled so an original term alone weighs 1, which keeps scores
on the scale of an unexpanded query.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from retrieval.index import BM25Index
from retrieval.ranking import Ranking
from retrieval.retriever import Expander
from retrieval.units import Unit


def rm3(ranking: Ranking, docs: int = 10, terms: int = 10, original: float = 0.5) -> Expander:
    def expand(index: BM25Index[Unit], query: Sequence[str]) -> tuple[Sequence[str], Sequence[float]]:
        unit_weight = [1.0] * len(query)
        first = index.search(query, docs)
        total_score = sum(h.score for h in first)
        if not query or not first or total_score <= 0:
            return query, unit_weight
        model: dict[str, float] = {}
        for hit in first:
            text_terms = Counter(ranking.tokenize(hit.payload.text))
            length = sum(text_terms.values())
            share = hit.score / total_score
            for term, tf in text_terms.items():
                model[term] = model.get(term, 0.0) + share * tf / length
        top = sorted(model.items(), key=lambda pair: (-pair[1], pair[0]))[:terms]
        mass = sum(w for _, w in top)
        weights: dict[str, float] = {}
        for term in query:
            weights[term] = weights.get(term, 0.0) + original / len(query)
        for term, w in top:
            weights[term] = weights.get(term, 0.0) + (1.0 - original) * w / mass
        scale = len(query) / original
        return list(weights), [w * scale for w in weights.values()]

    return expand
