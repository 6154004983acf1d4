"""Composing retrievers: reciprocal rank fusion (seed 004's hybrid, seed 002's rank merge).

`ReciprocalRankFusion([bm25, embeddings])` is itself a retriever, so an embedding retriever can be
added behind the same tools without touching them. Sub-retrievers run in parallel; one that is
still running at the request's deadline is left behind and the fused results of the others are
raised as `Partial` (seed 002: parallel with timeouts, then rank merge).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor, wait
from dataclasses import replace

from retrieval.retriever import Partial, RetrievalRequest, RetrievedDocument, Retriever

RRF_K = 60
"""The constant of Cormack et al. (2009): score = sum over retrievers of 1 / (RRF_K + rank)."""


class ReciprocalRankFusion:
    def __init__(self, retrievers: Sequence[Retriever], depth: int = 50, k: int = RRF_K) -> None:
        self.retrievers = list(retrievers)
        self.depth = depth
        """How deep each sub-retriever's list is fused (at least the request's k)."""
        self.k = k
        self._pool = ThreadPoolExecutor(max_workers=max(2, len(self.retrievers)), thread_name_prefix="rrf")

    def retrieve(self, request: RetrievalRequest) -> list[RetrievedDocument]:
        sub = replace(request, k=max(self.depth, request.k))
        futures = [self._pool.submit(r.retrieve, sub) for r in self.retrievers]
        timeout = None if request.deadline is None else max(0.0, request.deadline - time.monotonic())
        done, _ = wait(futures, timeout=timeout)
        lists: list[list[RetrievedDocument]] = []
        partial = False
        for future in futures:
            if future not in done:
                partial = True
                continue
            try:
                lists.append(future.result())
            except Partial as exc:
                lists.append(exc.docs)
                partial = True
        fused = fuse(lists, self.k)[: request.k]
        if partial:
            raise Partial(fused)
        return fused


def fuse(lists: Sequence[Sequence[RetrievedDocument]], k: int = RRF_K) -> list[RetrievedDocument]:
    """Documents by summed 1 / (k + rank); ties by display path and start line. A document's
    score becomes its fused score."""
    scores: dict[str, float] = {}
    first: dict[str, RetrievedDocument] = {}
    for docs in lists:
        for rank, doc in enumerate(docs, start=1):
            scores[doc.id] = scores.get(doc.id, 0.0) + 1.0 / (k + rank)
            first.setdefault(doc.id, doc)
    order = sorted(scores, key=lambda i: (-scores[i], first[i].unit.path, first[i].unit.start_line))
    return [RetrievedDocument(first[i].unit, scores[i]) for i in order]
