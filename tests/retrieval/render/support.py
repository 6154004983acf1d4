"""Hits and answers made by hand, for the rendering tests."""

from __future__ import annotations

from retrieval.chunks.units import Unit
from retrieval.search.request import Answer, Method
from retrieval.search.retriever import RetrievedDocument


def section(path: str, heading: str, text: str, score: float, start: int = 1) -> RetrievedDocument:
    end = start + text.count("\n")
    anchor = heading.lower().replace(" ", "-")
    unit = Unit(
        path=path,
        uri="agents://" + path.split("/", 1)[1],
        source=text,
        start_line=start,
        end_line=end,
        heading=heading,
        trail=(heading,),
        anchor=anchor,
    )
    return RetrievedDocument(unit, score)


def bm25(*docs: RetrievedDocument) -> Answer:
    return Answer(docs=list(docs), method=Method.BM25, candidates=len(docs))
