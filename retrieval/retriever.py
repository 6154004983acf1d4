"""The retriever contract (seed 004): one method, ranked documents, empty is success.

We deviate from seed 004 on one point, on purpose: the request carries a per-call `k`, because
our tools take `k` per call. Errors raise; they are never encoded in the result.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol

from retrieval.index import BM25Index
from retrieval.units import Unit


@dataclass(frozen=True, slots=True)
class RetrievalRequest:
    query: str
    k: int = 3


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


class Retriever(Protocol):
    """Given a request, the relevant documents, best first (possibly none)."""

    def retrieve(self, request: RetrievalRequest) -> list[RetrievedDocument]: ...


class BM25Retriever:
    """A retriever over one `BM25Index` of units."""

    def __init__(self, index: BM25Index[Unit], tokenize: Callable[[str], Sequence[str]]) -> None:
        self.index = index
        self.tokenize = tokenize

    def retrieve(self, request: RetrievalRequest) -> list[RetrievedDocument]:
        terms = self.tokenize(request.query)
        return [RetrievedDocument(s.payload, s.score) for s in self.index.search(terms, request.k)]
