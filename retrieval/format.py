"""Text results in the BODY + STATUS grammar (README, "Output grammar"), within a token budget.

A text result is BODY, a blank line, then one STATUS line `[agents-context key=value ...]`.
STATUS is the only place new fields appear; a value with spaces or quotes is a JSON string.
The whole text result stays within `max_tokens` (tokens = characters / 4): whole hits are dropped
from the end before any hit is cut, and STATUS says `truncated=1 omitted=N next_offset=K`.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from retrieval.policy import MISS_NO_MATCH, Answer
from retrieval.reader import Excerpt
from retrieval.results import Freshness, Hit, LinkTo, MatchedTerm, Nearest, SearchResult
from retrieval.retriever import RetrievedDocument

CONTEXT_MISS = "no matching context for: {query}"
DOCS_MISS = "(no results)"
CONTEXT_PAST_END = "no more matching context for: {query} ({why})"
DOCS_PAST_END = "(no more results: {why})"
ECHO_CHARS = 200
"""A query quoted back in a miss line is cut to this many characters (the budget must hold)."""
DEFAULT_MAX_TOKENS = 4000
MIN_MAX_TOKENS, MAX_MAX_TOKENS = 200, 10_000
SNIPPET_CHARS = 320
_LINE_CHARS = 160
_MAX_ATTRIBUTE_CHARS = 512
_NEAR_HEADING_CHARS = 160


@dataclass(frozen=True, slots=True)
class Options:
    detail: str = "sections"
    max_tokens: int = DEFAULT_MAX_TOKENS
    offset: int = 0
    freshness: Freshness | None = None
    gen_changed: bool = False
    """The caller paged with a generation that is no longer current."""
    terms: frozenset[str] = frozenset()
    """The query's terms, to pick snippet lines."""
    tokenize: Callable[[str], Sequence[str]] | None = None
    dropped: tuple[str, ...] = field(default=())
    """Quoted phrases a `bm25-relaxed` answer searched without their quotes."""
    explain: Callable[[RetrievedDocument], list[MatchedTerm]] | None = None
    """Why a hit matched (per term: contribution and fields), for the structured result."""
    links: Callable[[RetrievedDocument], list[LinkTo]] | None = None
    """The corpus sections a hit links to."""
    applies: Mapping[str, str] | None = None
    """context_for_path: why each unit (by id) applies; shown as an `applies` attribute."""
    miss: str | None = None
    """The miss line, when not the search one."""

    @property
    def limit(self) -> int:
        return self.max_tokens * 4


@dataclass(frozen=True, slots=True)
class Rendered:
    text: str
    result: SearchResult


def status_line(fields: Mapping[str, object]) -> str:
    return "[agents-context " + " ".join(f"{k}={_value(v)}" for k, v in fields.items()) + "]"


def _value(value: object) -> str:
    text = str(value)
    return json.dumps(text, ensure_ascii=False) if (not text or any(c in text for c in ' "=]\n')) else text


def with_status(body: str, fields: Mapping[str, object]) -> str:
    return f"{body}\n\n{status_line(fields)}"


def escape_attribute(value: str, limit: int | None = None) -> str:
    """XML-escaped; `limit` (characters once escaped) shortens free text (a heading), never a
    path or URI."""
    escaped = _escape(value)
    if limit is None or len(escaped) <= limit:
        return escaped
    kept: list[str] = []
    used = 0
    for c in value:
        e = _escape(c)
        if used + len(e) > limit - 1:
            break
        kept.append(e)
        used += len(e)
    return "".join(kept) + "…"


def _escape(value: str) -> str:
    return value.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace('"', "&quot;")


def echo(query: str) -> str:
    """The query as quoted back in a miss line: at most `ECHO_CHARS` characters."""
    return shorten(query, ECHO_CHARS)


def shorten(text: str, limit: int) -> str:
    """`text`, or its first `limit - 1` characters and `…`."""
    return text if len(text) <= limit else text[: max(limit - 1, 0)] + "…"


# --- what each hit shows ------------------------------------------------------------------------


def snippet(doc: RetrievedDocument, options: Options) -> str:
    """The lines of the hit that hold the most query terms, with their line numbers, in order,
    within a few hundred characters."""
    u = doc.unit
    lines = u.text.split("\n")
    tokenize = options.tokenize
    scored = []
    for i, line in enumerate(lines):
        hits = len(options.terms & set(tokenize(line))) if tokenize else 0
        if hits:
            scored.append((-hits, i))
    chosen: list[int] = []
    used = 0
    for _, i in sorted(scored) or [(0, 0)]:
        shown = _line(u.start_line + i, lines[i])
        if chosen and used + len(shown) + 1 > SNIPPET_CHARS:
            break
        chosen.append(i)
        used += len(shown) + 1
    return "\n".join(_line(u.start_line + i, lines[i]) for i in sorted(chosen))


def _line(number: int, text: str) -> str:
    text = text.strip()
    return f"{number}: {text if len(text) <= _LINE_CHARS else text[: _LINE_CHARS - 1] + '…'}"


def _shown(doc: RetrievedDocument, options: Options) -> str:
    if options.detail == "paths":
        return ""
    if options.detail == "snippets":
        return snippet(doc, options)
    return doc.unit.text


# --- context_search ---------------------------------------------------------------------------


def _context_open(doc: RetrievedDocument, options: Options, closed: bool = False) -> str:
    u = doc.unit
    heading = escape_attribute(u.heading or "", _MAX_ATTRIBUTE_CHARS)
    attrs = f'path="{escape_attribute(u.path)}" section="{heading}"'
    attrs += f' score="{doc.score:.2f}"'
    if options.detail != "sections" or options.applies is not None:
        attrs += f' lines="{u.start_line}-{u.end_line}"'
    if options.applies is not None:
        attrs += f' applies="{escape_attribute(options.applies.get(u.id, ""))}"'
    if options.detail == "paths":
        attrs += f' uri="{escape_attribute(u.section_uri)}"'
    return f"<context {attrs}{' /' if closed else ''}>"


def context_block(doc: RetrievedDocument, options: Options, text: str | None = None) -> str:
    if options.detail == "paths":
        return _context_open(doc, options, closed=True)
    shown = _shown(doc, options) if text is None else text
    return f"{_context_open(doc, options)}\n{shown}\n</context>"


def render_context(query: str, answer: Answer, options: Options | None = None) -> Rendered:
    options = options or Options()
    if answer.past_end is not None:
        return _miss(CONTEXT_PAST_END.format(query=echo(query), why=_past_end(answer, options)), answer, options)
    if not answer.docs:
        return _miss(options.miss or CONTEXT_MISS.format(query=echo(query)), answer, options)
    joiner = "\n" if options.detail == "paths" else "\n\n"

    def body(blocks: Sequence[str], left_out: int) -> str:
        text = joiner.join(blocks)
        note = f"[{left_out} more hits left out]" if left_out else ""
        return f"{text}\n\n{note}" if text and note else text or note

    return _fit(answer, options, lambda d, t=None: context_block(d, options, t), body)


# --- search_docs ----------------------------------------------------------------------------


def docs_block(doc: RetrievedDocument, options: Options, text: str | None = None) -> str:
    u = doc.unit
    head = f"--- {u.path}#{u.chunk_id} (score={doc.score:.2f})"
    if options.detail != "sections":
        head += f" lines {u.start_line}-{u.end_line}"
    head += " ---"
    shown = _shown(doc, options) if text is None else text
    return head if options.detail == "paths" else f"{head}\n{shown}"


def render_docs(query: str, answer: Answer, options: Options | None = None) -> Rendered:
    """Seed 001's blocks and cost footer `[N hits, ~C chars (~T tokens)]`, C = hit text chars."""
    options = options or Options()
    if answer.past_end is not None:
        return _miss(DOCS_PAST_END.format(why=_past_end(answer, options)), answer, options)
    if not answer.docs:
        return _miss(DOCS_MISS, answer, options)
    joiner = "\n" if options.detail == "paths" else "\n\n"

    def body(blocks: Sequence[str], left_out: int) -> str:
        chars = sum(_text_chars(b, options) for b in blocks)
        footer = f"[{len(blocks)} hits, ~{chars} chars (~{chars // 4} tokens)]"
        return joiner.join(blocks) + "\n\n" + footer if blocks else footer

    return _fit(answer, options, lambda d, t=None: docs_block(d, options, t), body)


def _past_end(answer: Answer, options: Options) -> str:
    if answer.partial:
        return f"the deadline passed before the search reached offset {options.offset}"
    return f"offset {options.offset} is past the end: {answer.past_end} hits in all"


def _text_chars(block: str, options: Options) -> int:
    """Characters of the hit text in a search_docs block (the header line is not hit text)."""
    return 0 if options.detail == "paths" else len(block.split("\n", 1)[1]) if "\n" in block else 0


# --- fitting the budget -------------------------------------------------------------------------


Block = Callable[..., str]
Body = Callable[[Sequence[str], int], str]


def _fit(answer: Answer, options: Options, block: Block, body: Body) -> Rendered:
    docs = answer.docs
    blocks = [block(d) for d in docs]
    for n in range(len(docs), 0, -1):
        text = with_status(body(blocks[:n], len(docs) - n), _status(answer, options, n))
        if len(text) <= options.limit:
            return Rendered(text, _result(answer, options, [_shown(d, options) for d in docs[:n]]))
    cut = _cut(docs[0], answer, options, block, body)
    text = with_status(body([block(docs[0], cut)], len(docs) - 1), _status(answer, options, 1, cut=True))
    if len(text) <= options.limit:
        return Rendered(text, _result(answer, options, [cut], cut=True))
    # Even the first hit's path and heading alone exceed the budget: show none, skip past it.
    return Rendered(with_status(body([], len(docs)), _status(answer, options, 0)), _result(answer, options, []))


def _cut(doc: RetrievedDocument, answer: Answer, options: Options, block: Block, body: Body) -> str:
    """The longest prefix of whole lines of the hit's text (or, for one huge line, of characters)
    that keeps the whole result within the budget, ending with `[... cut at line N of A-B]`."""
    u = doc.unit
    lines = _shown(doc, options).split("\n")

    def candidate(kept: list[str], last_line: int) -> str:
        return "\n".join([*kept, f"[... cut at line {last_line} of {u.start_line}-{u.end_line}]"])

    # Sized with the widest marker and footer, so the result never exceeds the budget.
    bare = with_status(
        body([block(doc, candidate([], u.end_line))], len(answer.docs) - 1), _status(answer, options, 1, cut=True)
    )
    room = options.limit - len(bare) - 12
    kept: list[str] = []
    used = 0
    for line in lines:
        if used + len(line) + 1 > room:
            break
        kept.append(line)
        used += len(line) + 1
    if not kept:
        return candidate([lines[0][: max(room - 1, 0)]] if room > 1 else [], u.start_line)
    return candidate(kept, u.start_line + len(kept) - 1)


def _status(answer: Answer, options: Options, shown: int, cut: bool = False) -> dict[str, object]:
    fields: dict[str, object] = {"method": answer.method, "hits": shown}
    if options.dropped:
        fields["dropped"] = shorten("; ".join(options.dropped), ECHO_CHARS)
    omitted = len(answer.docs) - shown
    if omitted or cut:  # hits dropped, or the one shown cut short
        fields["truncated"] = 1
    if omitted:
        fields["omitted"] = omitted
    if omitted or answer.more:
        # A hit too large for any budget is skipped, so paging never stands still.
        fields["next_offset"] = options.offset + max(shown, 1)
    indexing = options.freshness.indexing if options.freshness else ()
    if answer.partial or indexing:
        fields["partial"] = 1
    if indexing:
        fields["indexing"] = ",".join(indexing)
    if answer.clipped:
        fields["clipped"] = 1
    if options.freshness:
        fields.update(options.freshness.status())
    if options.gen_changed:
        fields["gen_changed"] = 1
    return fields


def _miss(line: str, answer: Answer, options: Options) -> Rendered:
    """The miss line, then the nearest headings and files, as many as the budget holds."""
    status = status_line(_status(answer, options, 0))
    room = options.limit - len(status) - 2
    body = shorten(line, room)
    if answer.nearest:
        header = f"\n\nNearest headings and files ({answer.miss or MISS_NO_MATCH}; read one with read_context):"
        near = [
            f"- {n.path}:{n.start_line}-{n.end_line} ({shorten(n.heading, _NEAR_HEADING_CHARS)}) {n.uri}"
            if n.heading
            else f"- {n.path} {n.uri}"
            for n in answer.nearest
        ]
        shown = body + header
        for item in near:
            if len(shown) + 1 + len(item) > room:
                break
            shown += "\n" + item
        if shown != body + header:
            body = shown
    return Rendered(f"{body}\n\n{status}", _result(answer, options, []))


def _result(answer: Answer, options: Options, texts: Sequence[str], cut: bool = False) -> SearchResult:
    hits = [
        Hit(
            rank=options.offset + i + 1,
            path=d.unit.path,
            heading=d.unit.heading,
            chunk_id=d.unit.chunk_id,
            score=d.score,
            start_line=d.unit.start_line,
            end_line=d.unit.end_line,
            text=text,
            uri=d.unit.uri,
            section_uri=d.unit.section_uri,
            citation=d.unit.citation,
            matched_terms=options.explain(d) if options.explain and answer.method not in ("path", "applies") else [],
            links=options.links(d) if options.links else [],
            applies=options.applies.get(d.unit.id) if options.applies is not None else None,
        )
        for i, (d, text) in enumerate(zip(answer.docs, texts, strict=False))
    ]
    status = _status(answer, options, len(hits), cut)
    return SearchResult.model_validate(
        {
            "method": answer.method,
            "fallback_reason": answer.fallback_reason,
            "hits": hits,
            "nearest": [
                Nearest(
                    path=n.path,
                    uri=n.uri,
                    heading=n.heading,
                    start_line=n.start_line,
                    end_line=n.end_line,
                    similarity=n.similarity,
                )
                for n in answer.nearest
            ],
            "candidates": answer.candidates,
            "truncated": bool(status.get("truncated")),
            "omitted": int(str(status.get("omitted", 0))),
            "next_offset": status.get("next_offset"),
            "partial": bool(status.get("partial")),
            "indexing": list(options.freshness.indexing) if options.freshness else [],
            "elapsed_ms": answer.elapsed_ms,
            **(options.freshness.result() if options.freshness else {}),
        }
    )


# --- read_context ---------------------------------------------------------------------------


def render_excerpt(excerpt: Excerpt, max_tokens: int, freshness: Mapping[str, object]) -> str:
    """A `<context path section lines>` block of exactly what was asked for, within the budget;
    a cut says where to continue (`start_line=`)."""
    f, section = excerpt.file, excerpt.section
    heading = section.heading if section and section.heading else ""
    span = f"{excerpt.start_line}-{excerpt.end_line}"
    shown = escape_attribute(heading, _MAX_ATTRIBUTE_CHARS)
    head = f'<context path="{escape_attribute(f.path)}" section="{shown}" lines="{span}">'
    fields: dict[str, object] = {"method": "read", "lines": span}
    if excerpt.others:
        fields["other_sections"] = " ".join(f"#{u.anchor}" for u in excerpt.others)
    fields.update(freshness)
    text = with_status(f"{head}\n{excerpt.text}\n</context>", fields)
    limit = max_tokens * 4
    if len(text) <= limit:
        return text
    lines = excerpt.text.split("\n")
    fields = {**fields, "truncated": 1, "next_line": excerpt.end_line}
    widest = f"[... cut at line {excerpt.end_line} of {span}; continue with start_line={excerpt.end_line}]"
    bare = with_status(f"{head}\n{widest}\n</context>", fields)
    room = limit - len(bare) - 12
    kept: list[str] = []
    used = 0
    for line in lines:
        if used + len(line) + 1 > room:
            break
        kept.append(line)
        used += len(line) + 1
    if not kept:
        kept = [lines[0][: max(room, 1)]]
    last = excerpt.start_line + len(kept) - 1
    fields["next_line"] = last + 1
    marker = f"[... cut at line {last} of {span}; continue with start_line={last + 1}]"
    return with_status(f"{head}\n" + "\n".join(kept) + f"\n{marker}\n</context>", fields)
