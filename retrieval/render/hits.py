"""Search answers as text and as structured content, both from one `Answer`, within a budget.

`context_search` hits are `<context path section score>` blocks; `search_docs` hits are
`--- path#chunk (score=...) ---` blocks with a cost footer (docs/contracts.md, "Output grammar").
The whole text result stays within `max_tokens` (tokens = characters / 4): whole hits are dropped
from the end before any hit is cut, and STATUS says `truncated=1 omitted=N next_offset=K`. The
STATUS line and the structured result are both written from one `Status` record. BODY shows the
hits' text through `neutralise` and their paths through `inline` (grammar.py); the structured
result holds them exactly.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from corpus.names import shorten
from retrieval.render.grammar import (
    MAX_ATTRIBUTE_CHARS,
    Rendered,
    condition_words,
    conditions_field,
    echo,
    escape_attribute,
    freshness_fields,
    inline,
    neutralise,
    rendered,
    status_echo,
    status_line,
    utc,
    with_status,
)
from retrieval.render.schema import Hit, LastUpdate, MatchedTerm, SearchResult
from retrieval.search.request import (
    DEFAULT_DETAIL,
    DEFAULT_MAX_TOKENS,
    Answer,
    Detail,
    Freshness,
    Held,
    Method,
    Miss,
    RootCondition,
    SearchRequest,
    clamp,
)
from retrieval.search.retriever import RetrievedDocument
from retrieval.text.query import Tokenize

CONTEXT_MISS = "no matching context for: {query}"
DOCS_MISS = "(no results)"
CONTEXT_PAST_END = "no more matching context for: {query} ({why})"
DOCS_PAST_END = "(no more results: {why})"
MIN_MAX_TOKENS, MAX_MAX_TOKENS = 200, 10_000
SNIPPET_CHARS = 320
SCORE_DIGITS = 4
"""Decimals of a structured hit's score (the text shows two): enough to order, not fifteen."""
_LINE_CHARS = 160
_NEAR_HEADING_CHARS = 160


def budget(max_tokens: int) -> int:
    """A `max_tokens` argument within `MIN_MAX_TOKENS` and `MAX_MAX_TOKENS`."""
    return clamp(max_tokens, MIN_MAX_TOKENS, MAX_MAX_TOKENS)


@dataclass(frozen=True, slots=True, kw_only=True)
class Page:
    """How an answer is shown: what each hit shows, the budget, where the page starts."""

    detail: Detail = DEFAULT_DETAIL
    max_tokens: int = DEFAULT_MAX_TOKENS
    offset: int = 0
    gen_changed: bool = False
    """The caller paged with a generation that is no longer current."""
    tokenize: Tokenize | None = None
    """The index's tokenizer, to find the query's terms in a hit's lines (snippets)."""
    miss: str | None = None
    """The miss line, when not the search one (`context_for_path`)."""
    explain: bool = False
    """The structured result says why each hit matched (its terms and their shares of the score)."""

    @classmethod
    def of(cls, request: SearchRequest, found: Answer, tokenize: Tokenize | None) -> Page:
        """How `request` shows what was `found`: its detail, its budget (within `MIN_MAX_TOKENS`
        and `MAX_MAX_TOKENS`), its offset, and whether the generation it paged from moved on."""
        fresh = found.freshness
        moved = request.generation is not None and fresh is not None and request.generation != fresh.generation
        return cls(
            detail=request.detail,
            max_tokens=budget(request.max_tokens),
            offset=request.offset,
            gen_changed=moved,
            tokenize=tokenize,
            explain=request.explain,
        )

    @property
    def limit(self) -> int:
        return self.max_tokens * 4


@dataclass(frozen=True, slots=True, kw_only=True)
class Status:
    """What the STATUS line says about a rendered answer; the structured result says the same."""

    method: Method
    hits: int
    truncated: bool
    omitted: int
    next_offset: int | None
    partial: bool
    dropped: tuple[str, ...] = ()
    indexing: tuple[RootCondition, ...] = ()
    clipped: bool = False
    freshness: Freshness | None = None
    gen_changed: bool = False

    @classmethod
    def of(cls, answer: Answer, page: Page, shown: int, cut: bool = False) -> Status:
        omitted = len(answer.docs) - shown
        indexing = answer.freshness.indexing if answer.freshness else ()
        return cls(
            method=answer.method,
            hits=shown,
            truncated=bool(omitted or cut),  # hits dropped, or the one shown cut short
            omitted=omitted,
            # A hit too large for any budget is skipped, so paging never stands still.
            next_offset=page.offset + max(shown, 1) if omitted or answer.more else None,
            partial=answer.partial or bool(indexing),
            dropped=answer.dropped,
            indexing=indexing,
            clipped=answer.clipped,
            freshness=answer.freshness,
            gen_changed=page.gen_changed,
        )

    def fields(self) -> dict[str, object]:
        fields: dict[str, object] = {"method": self.method.value, "hits": self.hits}
        if self.dropped:
            fields["dropped"] = status_echo("; ".join(self.dropped))
        if self.truncated:
            fields["truncated"] = 1
        if self.omitted:
            fields["omitted"] = self.omitted
        if self.next_offset is not None:
            fields["next_offset"] = self.next_offset
        if self.partial:
            fields["partial"] = 1
        if self.indexing:
            fields["indexing"] = conditions_field(self.indexing)
        if self.clipped:
            fields["clipped"] = 1
        if self.freshness:
            fields.update(freshness_fields(self.freshness))
        if self.gen_changed:
            fields["gen_changed"] = 1
        return fields

    def line(self) -> str:
        return status_line(self.fields())


# --- what each hit shows ------------------------------------------------------------------------


def snippet(doc: RetrievedDocument, answer: Answer, page: Page) -> str:
    """The lines of the hit that hold the most query terms, with their line numbers, in order,
    within a few hundred characters."""
    u = doc.unit
    lines = u.text.split("\n")
    tokenize = page.tokenize
    terms = frozenset(answer.query.terms) if answer.query is not None else frozenset()
    scored = []
    for i, line in enumerate(lines):
        hits = len(terms & set(tokenize(line))) if tokenize else 0
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


def _shown(doc: RetrievedDocument, answer: Answer, page: Page) -> str:
    if page.detail == "paths":
        return ""
    if page.detail == "snippets":
        return snippet(doc, answer, page)
    return doc.unit.text


def fit_lines(lines: Sequence[str], room: int) -> list[str]:
    """The longest prefix of `lines` whose text, newline-joined, fits in `room` characters."""
    kept: list[str] = []
    used = 0
    for line in lines:
        if used + len(line) + 1 > room:
            break
        kept.append(line)
        used += len(line) + 1
    return kept


# --- context_search -----------------------------------------------------------------------------


def _context_open(doc: RetrievedDocument, answer: Answer, page: Page, closed: bool = False) -> str:
    u = doc.unit
    heading = escape_attribute(u.heading or "", MAX_ATTRIBUTE_CHARS)
    attrs = f'path="{escape_attribute(u.path)}" section="{heading}"'
    attrs += f' score="{doc.score:.2f}"'
    if u.path in answer.pinned:
        attrs += ' pinned="true"'
    if page.detail != "sections" or answer.reasons is not None:
        attrs += f' lines="{u.start_line}-{u.end_line}"'
    if answer.reasons is not None:
        attrs += f' applies="{escape_attribute(answer.reasons.get(u.id, ""))}"'
    if page.detail == "paths":
        attrs += f' uri="{escape_attribute(u.section_uri)}"'
    return f"<context {attrs}{' /' if closed else ''}>"


def render_context(query: str, answer: Held, page: Page | None = None) -> Rendered[SearchResult]:
    page = page or Page()
    if answer.past_end is not None:
        return _miss(CONTEXT_PAST_END.format(query=echo(query), why=_past_end(answer, page)), answer, page)
    if not answer.docs:
        return _miss(page.miss or CONTEXT_MISS.format(query=echo(query)), answer, page)
    joiner = "\n" if page.detail == "paths" else "\n\n"

    def block(doc: RetrievedDocument, text: str | None = None) -> str:
        if page.detail == "paths":
            return _context_open(doc, answer, page, closed=True)
        shown = neutralise(_shown(doc, answer, page)) if text is None else text
        return f"{_context_open(doc, answer, page)}\n{shown}\n</context>"

    def body(blocks: Sequence[str], left_out: int) -> str:
        text = joiner.join(blocks)
        note = f"[{left_out} more hits left out]" if left_out else ""
        return f"{text}\n\n{note}" if text and note else text or note

    return _fit(answer, page, block, body)


# --- search_docs --------------------------------------------------------------------------------


def render_docs(query: str, answer: Held, page: Page | None = None) -> Rendered[SearchResult]:
    """`--- path#chunk (score=...) ---` blocks and the cost footer `[N hits, ~C chars (~T tokens)]`,
    C = hit text chars (docs/contracts.md, "`search_docs` BODY")."""
    page = page or Page()
    if answer.past_end is not None:
        return _miss(DOCS_PAST_END.format(why=_past_end(answer, page)), answer, page)
    if not answer.docs:
        return _miss(DOCS_MISS, answer, page)
    joiner = "\n" if page.detail == "paths" else "\n\n"

    def block(doc: RetrievedDocument, text: str | None = None) -> str:
        u = doc.unit
        head = f"--- {inline(u.path)}#{u.chunk_id} (score={doc.score:.2f})"
        if page.detail != "sections":
            head += f" lines {u.start_line}-{u.end_line}"
        head += " ---"
        shown = neutralise(_shown(doc, answer, page)) if text is None else text
        return head if page.detail == "paths" else f"{head}\n{shown}"

    def body(blocks: Sequence[str], left_out: int) -> str:
        chars = sum(_text_chars(b, page) for b in blocks)
        footer = f"[{len(blocks)} hits, ~{chars} chars (~{chars // 4} tokens)]"
        return joiner.join(blocks) + "\n\n" + footer if blocks else footer

    return _fit(answer, page, block, body)


def _past_end(answer: Answer, page: Page) -> str:
    if answer.partial:
        return f"the deadline passed before the search reached offset {page.offset}"
    return f"offset {page.offset} is past the end: {answer.past_end} hits in all"


def _text_chars(block: str, page: Page) -> int:
    """Characters of the hit text in a search_docs block (the header line is not hit text)."""
    return 0 if page.detail == "paths" else len(block.split("\n", 1)[1]) if "\n" in block else 0


# --- fitting the budget -------------------------------------------------------------------------


Block = Callable[..., str]
"""A hit as BODY shows it: `block(doc)`, or `block(doc, text)` with text already neutralised."""
Body = Callable[[Sequence[str], int], str]


def _fit(answer: Answer, page: Page, block: Block, body: Body) -> Rendered[SearchResult]:
    docs = answer.docs
    blocks = [block(d) for d in docs]
    for n in range(len(docs), 0, -1):
        status = Status.of(answer, page, n)
        text = rendered(body(blocks[:n], len(docs) - n), status.fields(), None)
        if len(text.text) <= page.limit:
            return _with_result(text, _result(answer, page, status, [_shown(d, answer, page) for d in docs[:n]]))
    shown, cut = _cut(docs[0], answer, page, block, body)
    status = Status.of(answer, page, 1, cut=True)
    text = rendered(body([block(docs[0], shown)], len(docs) - 1), status.fields(), None)
    if len(text.text) <= page.limit:
        return _with_result(text, _result(answer, page, status, [cut]))
    # Even the first hit's path and heading alone exceed the budget: show none, skip past it.
    status = Status.of(answer, page, 0)
    return rendered(body([], len(docs)), status.fields(), _result(answer, page, status, []))


def _with_result(text: Rendered[None], result: SearchResult) -> Rendered[SearchResult]:
    return Rendered(text.body, text.status, result)


def _cut(doc: RetrievedDocument, answer: Answer, page: Page, block: Block, body: Body) -> tuple[str, str]:
    """The longest prefix of whole lines of the hit's text (or, for one huge line, of characters)
    that keeps the whole result within the budget, ending with `[... cut at line N of A-B]`: as
    BODY shows it (neutralised), and exactly (for the structured result)."""
    u = doc.unit
    lines = _shown(doc, answer, page).split("\n")

    def candidate(kept: list[str], last_line: int) -> str:
        return "\n".join([*kept, f"[... cut at line {last_line} of {u.start_line}-{u.end_line}]"])

    # Sized with the widest marker and footer, so the result never exceeds the budget.
    status = Status.of(answer, page, 1, cut=True)
    bare = with_status(body([block(doc, candidate([], u.end_line))], len(answer.docs) - 1), status.fields())
    room = page.limit - len(bare) - 12
    kept = fit_lines([neutralise(line) for line in lines], room)
    if kept:
        last = u.start_line + len(kept) - 1
        return candidate(kept, last), candidate(lines[: len(kept)], last)
    if room <= 1:
        return candidate([], u.start_line), candidate([], u.start_line)
    chars = room - 1
    while chars > 0 and (over := len(neutralise(lines[0][:chars])) - (room - 1)) > 0:
        chars -= over  # each escaped line adds one backslash: a few steps at most
    first = lines[0][:chars]
    return candidate([neutralise(first)], u.start_line), candidate([first], u.start_line)


def _miss(line: str, answer: Answer, page: Page) -> Rendered[SearchResult]:
    """The miss line, then the nearest headings and files, as many as the budget holds."""
    status = Status.of(answer, page, 0)
    shown_status = status.line()
    room = page.limit - len(shown_status) - 2
    body = shorten(inline(line), room)
    if answer.nearest:
        header = f"\n\nNearest headings and files ({(answer.miss or Miss.NO_MATCH).value}; read one with read_context):"
        near = [
            f"- {inline(n.path)}:{n.start_line}-{n.end_line} ({shorten(inline(n.heading), _NEAR_HEADING_CHARS)})"
            f" {inline(n.uri)}"
            if n.heading
            else f"- {inline(n.path)} {inline(n.uri)}"
            for n in answer.nearest
        ]
        shown = body + header
        for item in near:
            if len(shown) + 1 + len(item) > room:
                break
            shown += "\n" + item
        if shown != body + header:
            body = shown
    return Rendered(body, shown_status, _result(answer, page, status, []))


# --- the structured result ----------------------------------------------------------------------


def matched_terms(doc: RetrievedDocument) -> list[MatchedTerm]:
    """Each query term's contribution to the hit's score (its BM25F share, plus its proximity and
    page bonuses, counted once with the term's first occurrence) and where it occurs: the hit's
    fields, and `page` when its page's headings or path, or links to it, matched it (`search_docs`'
    page bonus), which a term the hit's text lacks may have alone."""
    proximity, page = dict(doc.proximity), dict(doc.page)
    terms = []
    for term, share, where in doc.matched or ():
        bonus = page.pop(term, 0.0)
        shown = [*where, "page"] if bonus else where
        terms.append(
            MatchedTerm(term=term, contribution=round(share + proximity.pop(term, 0.0) + bonus, 4), fields=shown)
        )
    terms += [MatchedTerm(term=term, contribution=round(bonus, 4), fields=["page"]) for term, bonus in page.items()]
    return terms


def _result(answer: Answer, page: Page, status: Status, texts: Sequence[str]) -> SearchResult:
    explained = page.explain and answer.method not in (Method.PATH, Method.APPLIES)
    hits = [
        Hit(
            rank=page.offset + i + 1,
            path=d.unit.path,
            heading=d.unit.heading,
            chunk_id=d.unit.chunk_id,
            score=round(d.score, SCORE_DIGITS),
            start_line=d.unit.start_line,
            end_line=d.unit.end_line,
            text=text,
            uri=d.unit.uri,
            section_uri=d.unit.section_uri,
            citation=d.unit.citation,
            matched_terms=matched_terms(d) if explained else [],
            links=list(answer.links.get(d.unit.id, ())),
            applies=answer.reasons.get(d.unit.id) if answer.reasons is not None else None,
            pinned=d.unit.path in answer.pinned,
        )
        for i, (d, text) in enumerate(zip(answer.docs, texts, strict=False))
    ]
    fresh = answer.freshness
    last = fresh.last if fresh else None
    return SearchResult(
        method=answer.method.value,
        fallback_reason=answer.fallback_reason,
        hits=hits,
        nearest=answer.nearest,
        candidates=answer.candidates,
        truncated=status.truncated,
        omitted=status.omitted,
        next_offset=status.next_offset,
        partial=status.partial,
        indexing=[f"{c.label}:{condition_words(c)}" for c in status.indexing],
        elapsed_ms=answer.elapsed_ms,
        generation=fresh.generation if fresh else None,
        fresh_as_of=utc(fresh.fresh_as_of) if fresh and fresh.fresh_as_of is not None else None,
        changed=last.count if last else None,
        last_update=LastUpdate.of(last) if last else None,
    )
