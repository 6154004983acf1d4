"""The retriever contract (seed 004): one method, ranked documents, empty is success.

We deviate from seed 004 on one point, on purpose: the request carries per-call options (`k`, a
deadline, filters, phrases that must match), because our tools are per-call. Errors raise; they are
never encoded in the result. A retriever that runs out of time raises `Partial` with the best
results it has (seed 002: on timeout, return partial results rather than fail).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Protocol

from retrieval.index import BM25Index, Scored
from retrieval.query import MAX_QUERY_TERMS, clip, contains
from retrieval.units import Unit


@dataclass(frozen=True, slots=True)
class RetrievalRequest:
    query: str
    k: int = 3
    deadline: float | None = None
    """A `time.monotonic()` moment after which to stop and return what is ready."""
    allow: Callable[[Unit], bool] | None = None
    """Only units this accepts (path and root filters)."""
    phrases: tuple[tuple[str, ...], ...] = ()
    """Term sequences every returned unit must contain as written."""

    def expired(self) -> bool:
        return self.deadline is not None and time.monotonic() >= self.deadline


@dataclass(frozen=True, slots=True)
class RetrievedDocument:
    unit: Unit
    score: float

    @property
    def id(self) -> str:
        return self.unit.id

    @property
    def content(self) -> str:
        return self.unit.text

    @property
    def source(self) -> str:
        return self.unit.path


class Partial(Exception):
    """The deadline passed: these are the best results so far."""

    def __init__(self, docs: list[RetrievedDocument]) -> None:
        super().__init__(f"deadline passed with {len(docs)} results")
        self.docs = docs


class Retriever(Protocol):
    """Given a request, the relevant documents, best first (possibly none)."""

    def retrieve(self, request: RetrievalRequest) -> list[RetrievedDocument]: ...


Expander = Callable[[BM25Index[Unit], Sequence[str]], tuple[Sequence[str], Sequence[float]]]
"""Query expansion: (index, query terms) -> (terms, weights)."""


class BM25Retriever:
    """A retriever over one `BM25Index` of units; filters and phrases apply inside the engine, so
    a selective filter never starves the top k.

    It never returns the same text twice (seed 001, 10.6: the model would read it twice): a unit
    that overlaps a better one of the same file, or is a near copy of a better one with the same
    heading (term sets at least `redundancy` alike by Jaccard, as versioned copies of a page
    are), is skipped and the next one takes its place. With a `score_floor`, hits below that
    fraction of the best hit's score are dropped (seed 001's distractor mitigation); the best hit
    always stays.
    """

    def __init__(
        self,
        index: BM25Index[Unit],
        tokenize: Callable[[str], Sequence[str]],
        score_floor: float = 0.0,
        expand: Expander | None = None,
        redundancy: float | None = 0.9,
    ) -> None:
        self.redundancy = redundancy
        self.index = index
        self.tokenize = tokenize
        self.score_floor = score_floor
        self.expand = expand
        self._tokens = lru_cache(maxsize=4096)(lambda text: tuple(tokenize(text)))

    def retrieve(self, request: RetrievalRequest) -> list[RetrievedDocument]:
        return self.search(request)[0]

    def search(self, request: RetrievalRequest) -> tuple[list[RetrievedDocument], int]:
        """The documents, and how many units matched before `k` cut them (for explanations)."""
        terms: Sequence[str] = list(self.tokenize(clip(request.query)))[:MAX_QUERY_TERMS]
        weights: Sequence[float] | None = None
        if self.expand is not None:
            terms, weights = self.expand(self.index, terms)
        required = [t for phrase in request.phrases for t in phrase]
        keep = self._keep(request) if request.allow or request.phrases else None
        if self.redundancy is None:
            hits, candidates = self.index.ranked(terms, request.k, weights, required, keep)
        else:
            hits, candidates = self._distinct(terms, weights, request.k, self.redundancy, required, keep)
        if hits and self.score_floor > 0:
            floor = hits[0].score * self.score_floor
            hits = [h for h in hits if h.score >= floor]
        return [RetrievedDocument(s.payload, s.score) for s in hits], candidates

    def _keep(self, request: RetrievalRequest) -> Callable[[Unit], bool]:
        allow, phrases = request.allow, request.phrases

        def keep(unit: Unit) -> bool:
            if allow is not None and not allow(unit):
                return False
            tokens = self._tokens(unit.text) if phrases else ()
            return all(contains(tokens, p) for p in phrases)

        return keep

    def _distinct(
        self,
        terms: Sequence[str],
        weights: Sequence[float] | None,
        k: int,
        redundancy: float,
        required: Sequence[str],
        keep: Callable[[Unit], bool] | None,
    ) -> tuple[list[Scored[Unit]], int]:
        """The best `k` hits without redundancy: fetch more while some were skipped."""
        want = k
        while True:
            found, candidates = self.index.ranked(terms, want, weights, required, keep)
            kept: list[Scored[Unit]] = []
            by_path: dict[str, list[Unit]] = {}
            by_heading: dict[str | None, list[frozenset[str]]] = {}
            for hit in found:
                unit = hit.payload
                if any(overlaps(unit, other) for other in by_path.get(unit.path, ())):
                    continue
                words = frozenset(self._tokens(unit.text))
                alike = by_heading.setdefault(unit.heading, [])
                if any(similar(words, other, redundancy) for other in alike):
                    continue
                alike.append(words)
                by_path.setdefault(unit.path, []).append(unit)
                kept.append(hit)
                if len(kept) == k:
                    return kept, candidates
            if len(found) < want:
                return kept, candidates
            want *= 2


def similar(a: frozenset[str], b: frozenset[str], threshold: float) -> bool:
    """Jaccard similarity of two term sets at least `threshold` (identical sets always are)."""
    if a == b:
        return True
    return len(a & b) >= threshold * len(a | b)


def overlaps(a: Unit, b: Unit) -> bool:
    return a.path == b.path and a.start_line <= b.end_line and b.start_line <= a.end_line
