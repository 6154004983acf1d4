"""Query expansion by pseudo-relevance feedback (RM3), on with `--feedback`.

RM3: a first search takes the `docs` best units; each term of their text gets the weight
sum over those units of P(unit | query) * tf(term, unit) / |unit|, with P(unit | query) the
unit's share of the first-pass score. The `terms` heaviest terms join the query, the original
terms keeping `original` of the total weight (Lavrenko and Croft's relevance model, interpolated
as in Anserini's RM3), shared among them in proportion to their own weights (all 1 for a query as
typed). Weights are scaled so an original term alone weighs 1, which keeps scores on the scale of
an unexpanded query.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from retrieval.chunks.units import Unit
from retrieval.engine.index import BM25Index
from retrieval.engine.ranking import Ranking
from retrieval.search.retriever import Expander


def relevance_model(
    index: BM25Index[Unit],
    query: Sequence[str],
    query_weights: Sequence[float],
    docs: int = 10,
    terms: int = 10,
    original: float = 0.5,
) -> tuple[list[str], list[float]]:
    """RM3 over a weighted query (see the module's docstring)."""
    first = index.search(query, docs, query_weights)
    total_score = sum(h.score for h in first)
    if not query or not first or total_score <= 0:
        return list(query), list(query_weights)
    model: dict[str, float] = {}
    for hit in first:
        text_terms = Counter(index.words(hit.slot))  # its text's terms, as indexed: no file read
        length = sum(text_terms.values())
        if not length:
            continue
        share = hit.score / total_score
        for term, tf in text_terms.items():
            model[term] = model.get(term, 0.0) + share * tf / length
    top = sorted(model.items(), key=lambda pair: (-pair[1], pair[0]))[:terms]
    mass = sum(w for _, w in top)
    query_mass = sum(query_weights)
    weights: dict[str, float] = {}
    for term, qw in zip(query, query_weights, strict=True):
        weights[term] = weights.get(term, 0.0) + original * qw / query_mass
    for term, w in top:
        weights[term] = weights.get(term, 0.0) + (1.0 - original) * w / mass
    scale = query_mass / original
    return list(weights), [w * scale for w in weights.values()]


def rm3(docs: int = 10, terms: int = 10, original: float = 0.5) -> Expander:
    def expand(index: BM25Index[Unit], query: Sequence[str]) -> tuple[Sequence[str], Sequence[float]]:
        return relevance_model(index, query, [1.0] * len(query), docs, terms, original)

    return expand


def expansion(ranking: Ranking) -> Expander | None:
    """What `ranking` expands a query with (None: nothing)."""
    return rm3() if ranking.feedback else None
