"""The structured result of the search tools: their output schema, the one place a search's
typed `Answer` meets pydantic. `Nearest` and `LinkTo` are the search layer's own dataclasses,
embedded as they are."""

from __future__ import annotations

from pydantic import BaseModel, Field

from corpus.catalog import Change
from retrieval.render.grammar import utc
from retrieval.search.links import LinkTo
from retrieval.search.nearest import Nearest


class MatchedTerm(BaseModel):
    term: str = Field(description="The query term as indexed (case-folded).")
    contribution: float = Field(description="Its share of the hit's score.")
    fields: list[str] = Field(
        description="Where it occurs in the hit: heading, path, body; "
        "page: its page's headings, path or links to it (search_docs)."
    )


class Hit(BaseModel):
    rank: int = Field(description="1-based position in the whole ranking (offset included).")
    path: str = Field(description="Display path: <root label>/<relative path>.")
    heading: str | None = Field(default=None, description="Section heading (context_search).")
    chunk_id: int | None = Field(default=None, description="Window number in its file, from 0 (search_docs).")
    score: float = Field(description="BM25 score; higher is better.")
    start_line: int = Field(description="First line of the hit in its file, 1-based.")
    end_line: int = Field(description="Last line of the hit in its file, inclusive.")
    text: str = Field(
        description="The hit's text as shown in the text result (per the detail level), exactly: never escaped."
    )
    uri: str = Field(description="Resource URI of the file, readable with resources/read.")
    section_uri: str = Field(description="URI of exactly this section (#anchor) or these lines (#L12-L30).")
    citation: str = Field(description="What to quote as the source: path:lines (heading trail).")
    matched_terms: list[MatchedTerm] = Field(default_factory=list, description="Why it matched (explain=true).")
    links: list[LinkTo] = Field(default_factory=list, description="Corpus sections this hit links to.")
    applies: str | None = Field(default=None, description="context_for_path: why this section applies.")
    pinned: bool = Field(default=False, description="From a pinned file (also in the instructions).")


class LastUpdate(BaseModel):
    at: str = Field(description="When the update was applied (UTC, ISO 8601).")
    added: list[str] = Field(description="Display paths of files that appeared.")
    changed: list[str] = Field(description="Display paths of files whose text changed.")
    removed: list[str] = Field(description="Display paths of files that are gone.")

    @classmethod
    def of(cls, change: Change) -> LastUpdate:
        return cls(
            at=utc(change.at),
            added=sorted(change.added),
            changed=sorted(change.changed),
            removed=sorted(change.removed),
        )


class SearchResult(BaseModel):
    method: str = Field(description="bm25, phrase, bm25-relaxed, path or outline (docs/retrieval.md).")
    fallback_reason: str | None = Field(default=None, description="Why a fallback method answered.")
    hits: list[Hit]
    nearest: list[Nearest] = Field(default_factory=list, description="method=outline: the closest headings and files.")
    candidates: int = Field(default=0, description="Units that matched, before k, offset and the budget.")
    truncated: bool = Field(default=False, description="The token budget dropped or cut hits.")
    omitted: int = Field(default=0, description="Hits dropped by the budget.")
    next_offset: int | None = Field(default=None, description="Pass as offset (with generation) for the next page.")
    partial: bool = Field(
        default=False, description="Best results so far: the deadline passed, or a root is still being indexed."
    )
    indexing: list[str] = Field(
        default_factory=list, description="label:done/total of each searched root still being indexed."
    )
    elapsed_ms: float = 0.0
    generation: int | None = Field(default=None, description="Index generation the answer comes from.")
    fresh_as_of: str | None = Field(
        default=None, description="Every change on disk before this moment (UTC) is reflected."
    )
    changed: int | None = Field(default=None, description="Files changed by the last index update.")
    last_update: LastUpdate | None = Field(default=None, description="What the last index update changed.")
