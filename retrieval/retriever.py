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

from retrieval.index import BM25Index
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


class BM25Retriever:
    """A retriever over one `BM25Index` of units; applies filters and phrases inside the engine,
    so a selective filter never starves the top k."""

    def __init__(self, index: BM25Index[Unit], tokenize: Callable[[str], Sequence[str]]) -> None:
        self.index = index
        self.tokenize = tokenize
        self._tokens = lru_cache(maxsize=4096)(lambda text: tuple(tokenize(text)))

    def retrieve(self, request: RetrievalRequest) -> list[RetrievedDocument]:
        return self.search(request)[0]

    def search(self, request: RetrievalRequest) -> tuple[list[RetrievedDocument], int]:
        """The documents, and how many units matched before `k` cut them (for explanations)."""
        terms = list(self.tokenize(clip(request.query)))[:MAX_QUERY_TERMS]
        required = [t for phrase in request.phrases for t in phrase]
        keep = self._keep(request) if request.allow or request.phrases else None
        scored, candidates = self.index.ranked(terms, request.k, required, keep)
        return [RetrievedDocument(s.payload, s.score) for s in scored], candidates

    def _keep(self, request: RetrievalRequest) -> Callable[[Unit], bool]:
        allow, phrases = request.allow, request.phrases

        def keep(unit: Unit) -> bool:
            if allow is not None and not allow(unit):
                return False
            tokens = self._tokens(unit.text) if phrases else ()
            return all(contains(tokens, p) for p in phrases)

        return keep
