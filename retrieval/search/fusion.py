"""Several ways of asking one question, answered as one list: each query's ranked list fused by
reciprocal rank (a hit's fused score is the sum of `1 / (RRF_K + rank)` over the lists it is in).

Agents write good variants of their own question; a hit that several of them find high rises, and a
hit only one of them finds still has a place. Ranks, not scores, are fused: one query's BM25
scores do not compare with another's (a query of rare words scores higher)."""

from __future__ import annotations

from collections.abc import Sequence

from retrieval.search.retriever import Found, RetrievedDocument

RRF_K = 60
"""The rank offset of reciprocal rank fusion (Cormack, Clarke and Büttcher, 2009): large enough that
the first few ranks of each list weigh about the same."""
MAX_QUERIES = 5
"""Queries in one search (`query` and up to four `queries`)."""


def fuse(found: Sequence[Found], k: int, pages: bool = False) -> Found:
    """The first `k` documents of the lists fused by reciprocal rank. Each document is shown as the
    list that ranked it best found it (its score and explanation are that query's); ties keep the
    order of the queries. How many units matched is the most any one query matched.

    With `pages` (windows, `search_docs`), each page's first window in that order is placed by its
    page's fused score instead: the sum over the lists of `1 / (RRF_K + the page's rank among that
    list's pages)`. A page's windows are different units, so variants that find one page by
    different windows added nothing up: a page every variant finds ranked below a window two of
    them happen to share. Its other windows keep their own score."""
    fused: dict[str, float] = {}
    shown: dict[str, tuple[int, RetrievedDocument]] = {}
    by_page: dict[str, float] = {}
    for result in found:
        seen: dict[str, int] = {}
        for rank, doc in enumerate(result.docs, start=1):
            fused[doc.id] = fused.get(doc.id, 0.0) + 1.0 / (RRF_K + rank)
            best = shown.get(doc.id)
            if best is None or rank < best[0]:
                shown[doc.id] = (rank, doc)
            if pages and doc.unit.path not in seen:
                seen[doc.unit.path] = len(seen) + 1
                by_page[doc.unit.path] = by_page.get(doc.unit.path, 0.0) + 1.0 / (RRF_K + len(seen))
    order = sorted(fused, key=lambda i: -fused[i])  # stable: equal sums keep first-seen order
    if pages:
        first: dict[str, str] = {}
        for i in order:
            first.setdefault(shown[i][1].unit.path, i)
        placed = {i: by_page[path] for path, i in first.items()}
        order = sorted(order, key=lambda i: -placed.get(i, fused[i]))
    return Found(
        [shown[i][1] for i in order[:k]],
        max((r.candidates for r in found), default=0),
        partial=any(r.partial for r in found),
    )


def variants(query: str, more: Sequence[str]) -> tuple[str, ...]:
    """`query` and each of `more` not already asked (compared ignoring case and spacing)."""
    seen: set[str] = set()
    kept: list[str] = []
    for text in (query, *more):
        key = " ".join(text.split()).casefold()
        if key and key not in seen:
            seen.add(key)
            kept.append(text)
    return tuple(kept)
