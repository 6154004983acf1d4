"""Text results in the BODY + STATUS grammar, and the structured result beside them.

A text result is BODY, a blank line, then one STATUS line `[agents-context key=value ...]`.
STATUS is the only place new fields may appear; BODY is a contract (see the README).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timezone

from pydantic import BaseModel, Field

from retrieval.retriever import RetrievedDocument

CONTEXT_CAP_BYTES = 16 * 1024
CONTEXT_MISS = "no matching context for: {query}"
DOCS_MISS = "(no results)"
_MAX_ATTRIBUTE_CHARS = 512


class Hit(BaseModel):
    path: str = Field(description="Display path: <root label>/<relative path>.")
    heading: str | None = Field(default=None, description="Section heading (context_search).")
    chunk_id: int | None = Field(default=None, description="Window number in its file, from 0 (search_docs).")
    score: float = Field(description="BM25 score; higher is better.")
    start_line: int = Field(description="First line of the hit in its file, 1-based.")
    end_line: int = Field(description="Last line of the hit in its file, inclusive.")
    text: str = Field(description="The hit's text as shown in the text result.")
    uri: str = Field(description="Resource URI of the file, readable with resources/read.")


class LastUpdate(BaseModel):
    at: str = Field(description="When the update was applied (UTC, ISO 8601).")
    added: list[str] = Field(description="Display paths of files that appeared.")
    changed: list[str] = Field(description="Display paths of files whose text changed.")
    removed: list[str] = Field(description="Display paths of files that are gone.")


class SearchResult(BaseModel):
    method: str = Field(description="How the hits were found (bm25: ranked keyword search).")
    hits: list[Hit]
    generation: int | None = Field(default=None, description="Index generation the answer comes from.")
    fresh_as_of: str | None = Field(
        default=None, description="Every change on disk before this moment (UTC) is reflected."
    )
    changed: int | None = Field(default=None, description="Files changed by the last index update.")
    last_update: LastUpdate | None = Field(default=None, description="What the last index update changed.")


@dataclass(frozen=True, slots=True)
class Freshness:
    """How current an answer is: the STATUS fields `gen`, `fresh_as_of` and `changed`."""

    generation: int
    fresh_as_of: float
    added: frozenset[str] = frozenset()
    changed: frozenset[str] = frozenset()
    removed: frozenset[str] = frozenset()
    changed_at: float | None = None
    """When the last update was applied; None if nothing changed since start-up."""

    def status(self) -> dict[str, object]:
        fields: dict[str, object] = {"gen": self.generation, "fresh_as_of": utc(self.fresh_as_of)}
        if self.changed_at is not None:
            fields["changed"] = len(self.added) + len(self.changed) + len(self.removed)
        return fields

    def result(self) -> dict[str, object]:
        fields: dict[str, object] = {"generation": self.generation, "fresh_as_of": utc(self.fresh_as_of)}
        if self.changed_at is not None:
            fields["changed"] = len(self.added) + len(self.changed) + len(self.removed)
            fields["last_update"] = LastUpdate(
                at=utc(self.changed_at),
                added=sorted(self.added),
                changed=sorted(self.changed),
                removed=sorted(self.removed),
            )
        return fields


@dataclass(frozen=True, slots=True)
class Rendered:
    text: str
    result: SearchResult


def utc(moment: float) -> str:
    """`2026-11-22T06:45:12.345Z`."""
    return (
        datetime.fromtimestamp(moment, tz=timezone.utc)
        .isoformat(timespec="milliseconds")
        .replace("+00:00", "Z")
    )


def status_line(fields: Mapping[str, object]) -> str:
    return "[agents-context " + " ".join(f"{k}={v}" for k, v in fields.items()) + "]"


def with_status(body: str, fields: Mapping[str, object]) -> str:
    return f"{body}\n\n{status_line(fields)}"


def escape_attribute(value: str) -> str:
    if len(value) > _MAX_ATTRIBUTE_CHARS:
        value = value[: _MAX_ATTRIBUTE_CHARS - 1] + "…"
    return value.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace('"', "&quot;")


def _hit(doc: RetrievedDocument, text: str | None = None) -> Hit:
    u = doc.unit
    return Hit(
        path=u.path,
        heading=u.heading,
        chunk_id=u.chunk_id,
        score=doc.score,
        start_line=u.start_line,
        end_line=u.end_line,
        text=u.text if text is None else text,
        uri=u.uri,
    )


# --- context_search -------------------------------------------------------------------------


def _fields(method: str, hits: int, freshness: Freshness | None) -> dict[str, object]:
    return {"method": method, "hits": hits, **(freshness.status() if freshness else {})}


def _result(method: str, hits: list[Hit], freshness: Freshness | None) -> SearchResult:
    return SearchResult.model_validate(
        {"method": method, "hits": hits, **(freshness.result() if freshness else {})}
    )


def _context_open(doc: RetrievedDocument) -> str:
    u = doc.unit
    return (
        f'<context path="{escape_attribute(u.path)}" section="{escape_attribute(u.heading or "")}" '
        f'score="{doc.score:.2f}">'
    )


def context_block(doc: RetrievedDocument, text: str | None = None) -> str:
    return f"{_context_open(doc)}\n{doc.unit.text if text is None else text}\n</context>"


def render_context(
    query: str,
    docs: Sequence[RetrievedDocument],
    method: str = "bm25",
    freshness: Freshness | None = None,
    cap_bytes: int = CONTEXT_CAP_BYTES,
) -> Rendered:
    """`<context>` blocks within `cap_bytes` (whole result): whole hits are dropped from the end
    first; a first hit that alone is too large is cut at a line boundary."""
    if not docs:
        text = with_status(CONTEXT_MISS.format(query=query), _fields(method, 0, freshness))
        return Rendered(text, _result(method, [], freshness))
    blocks = [context_block(d) for d in docs]
    for n in range(len(docs), 0, -1):
        text = _context_text(blocks[:n], len(docs) - n, _fields(method, n, freshness))
        if _size(text) <= cap_bytes:
            return Rendered(text, _result(method, [_hit(d) for d in docs[:n]], freshness))
    fields = _fields(method, 1, freshness)
    cut = _cut_to_fit(docs[0], len(docs) - 1, fields, cap_bytes)
    text = _context_text([context_block(docs[0], cut)], len(docs) - 1, fields)
    return Rendered(text, _result(method, [_hit(docs[0], cut)], freshness))


def _context_text(blocks: Sequence[str], left_out: int, fields: Mapping[str, object]) -> str:
    body = "\n\n".join(blocks)
    if left_out:
        body += f"\n\n[{left_out} more hits left out]"
    return with_status(body, fields)


def _cut_to_fit(doc: RetrievedDocument, left_out: int, fields: Mapping[str, object], cap_bytes: int) -> str:
    """The longest prefix of whole lines (or, for one huge line, of characters) that fits."""
    u = doc.unit
    lines = u.text.split("\n")

    def candidate(kept: list[str], last_line: int) -> str:
        marker = f"[... cut at line {last_line} of {u.start_line}-{u.end_line}]"
        return "\n".join([*kept, marker])

    # Sized with the widest line number the marker can show, so the result never exceeds the cap.
    fixed = _size(_context_text([context_block(doc, candidate([], u.end_line))], left_out, fields))
    budget = cap_bytes - fixed
    kept: list[str] = []
    used = 0
    for line in lines:
        cost = _size(line) + 1
        if used + cost > budget:
            break
        kept.append(line)
        used += cost
    if not kept:
        head = lines[0].encode("utf-8")[: max(budget - 1, 0)].decode("utf-8", "ignore")
        return candidate([head] if head else [], u.start_line)
    return candidate(kept, u.start_line + len(kept) - 1)


def _size(text: str) -> int:
    return len(text.encode("utf-8"))


# --- search_docs ----------------------------------------------------------------------------


def docs_block(doc: RetrievedDocument) -> str:
    u = doc.unit
    return f"--- {u.path}#{u.chunk_id} (score={doc.score:.2f}) ---\n{u.text}"


def render_docs(
    docs: Sequence[RetrievedDocument], method: str = "bm25", freshness: Freshness | None = None
) -> Rendered:
    """Seed 001's blocks and cost footer `[N hits, ~C chars (~T tokens)]`, C = hit text chars."""
    fields = _fields(method, len(docs), freshness)
    if not docs:
        return Rendered(with_status(DOCS_MISS, fields), _result(method, [], freshness))
    chars = sum(len(d.unit.text) for d in docs)
    footer = f"[{len(docs)} hits, ~{chars} chars (~{chars // 4} tokens)]"
    body = "\n\n".join([*(docs_block(d) for d in docs), footer])
    return Rendered(with_status(body, fields), _result(method, [_hit(d) for d in docs], freshness))
