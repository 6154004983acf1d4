"""Term proximity: a second look at the best first-stage hits, rewarding query words that occur
close together in a unit's text.

BM25 scores each query term on its own; a section where `same connection` or `interpreter on the
PATH` occur as the question puts them is more likely the answer than one holding the same words
pages apart. This is Büttcher, Clarke and Lushman's BM25TP ("Term proximity scoring for ad-hoc
retrieval on very large text collections", SIGIR 2006): walk the unit's tokens (stop words are
already gone, so `interpreter on the PATH` is two adjacent terms); whenever two consecutive
query-term occurrences are of different terms, d tokens apart, each term's accumulator gains the
other term's idf over d squared. Each term then adds

    min(1, idf) * acc * (k1 + 1) / (acc + k1 * (1 - b + b * len / avglen))

(the body field's b and length), saturated like a term frequency. The retriever multiplies the
sum by `Ranking.proximity` and adds it to the BM25F score of the `Ranking.rerank_depth` best
first-stage hits only, reading just the query terms' positions in those from the index's stored
text (`BM25Index.occurrences`), so the cost is bounded whatever the corpus size. The bonus is never
negative, so the re-scored hits stay above the rest of the ranking and the whole list stays in
score order.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from typing import TypeVar

K = TypeVar("K", bound=Hashable)


def occurrence_shares(
    positions: Sequence[int], terms: Sequence[K], idf: Mapping[K, float], k1: float, norm: float
) -> dict[K, float]:
    """Each query term's BM25TP bonus in a text where the query terms occur as `terms[i]` at token
    position `positions[i]`, ascending (every occurrence of every term of `idf`, and nothing
    else); terms with none are left out, the rest in the order of `idf` (query term -> its idf);
    `norm` is the text's length norm `1 - b + b * len / avglen`."""
    if len(idf) < 2:
        return {}
    acc: dict[K, float] = {}
    last: K | None = None
    last_at = 0
    for at, token in zip(positions, terms, strict=True):
        if last is not None and token != last:
            inverse = 1.0 / ((at - last_at) * (at - last_at))
            acc[last] = acc.get(last, 0.0) + idf[token] * inverse
            acc[token] = acc.get(token, 0.0) + idf[last] * inverse
        last, last_at = token, at
    saturation = k1 * norm
    return {t: min(1.0, w) * acc[t] * (k1 + 1.0) / (acc[t] + saturation) for t, w in idf.items() if t in acc}
