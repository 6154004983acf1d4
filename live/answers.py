"""Every request of every surface answered from the live index: `context_search`, `search_docs`,
`context_for_path`, `read_context` and `pinned_context` (the tools, the prompt) and the commands
`search` and `read` all come to `respond`, so a tool and its command can never drift apart, and
`eval` ranks through `search`. A request is first checked (`refusal`); then one generation is
searched or read under the view lock, the hits hold their text and are checked against the disk,
and the answer carries how fresh it is (each root still being indexed, or whose files are still
changing, with its `RootCondition`: the answer is partial). It comes back rendered, its BODY,
STATUS and structured content apart (`Rendered`).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import overload

from corpus.catalog import Corpus, read_uri
from corpus.errors import Missing, NotInCorpus
from corpus.names import too_deep, too_long
from corpus.roots import Root, RootKind, relative_sources
from live import texts
from live.index import CATCH_UP_S, LiveIndex
from live.store import View
from retrieval.render import briefing
from retrieval.render.excerpt import render_excerpt
from retrieval.render.grammar import Rendered, freshness_fields
from retrieval.render.hits import Page, budget, render_context, render_docs
from retrieval.render.schema import SearchResult
from retrieval.search import applies, reader
from retrieval.search.policy import path_answer, with_links
from retrieval.search.request import (
    EMPTY_PATH,
    EMPTY_QUERY,
    SECTIONS,
    Answer,
    Freshness,
    Held,
    PathRequest,
    Phase,
    PinnedRequest,
    ReadRequest,
    SearchKind,
    SearchRequest,
)

Request = SearchRequest | PathRequest | ReadRequest | PinnedRequest
"""What a surface asks: one type a question."""

VERIFY_ROUNDS = 3
"""A search whose hits come from files that changed since they were indexed runs again, at most
this many times in all."""


def roots_of(live: LiveIndex, kind: SearchKind) -> list[Root]:
    """The roots a search of `kind` covers: the `.AGENTS` roots for sections, every root for windows."""
    return live.agents_roots if kind is SECTIONS else live.roots


def unknown_root(live: LiveIndex, request: SearchRequest) -> str | None:
    """Why the request's `root` cannot be searched (a label that names none of the roots it
    covers), in one sentence; None when it can."""
    roots = roots_of(live, request.kind)
    if request.root is None or request.root in {r.label for r in roots}:
        return None
    which = ".AGENTS roots" if request.kind is SECTIONS else "roots"
    return f"unknown root {request.root!r}; {which}: {', '.join(r.label for r in roots)}"


def indexing(live: LiveIndex) -> set[str]:
    """Labels of the roots whose first indexing is still reading files (a cached index being
    checked already knows its files)."""
    return {r.label for r in live.roots if (c := live.condition(r)) is not None and c.phase is Phase.INDEXING}


def instructions(live: LiveIndex, budget: int, client: str, loaded: Callable[[Corpus], Mapping[str, str]]) -> str:
    """The server instructions for a client (`client`: its name; `loaded`: as `PinnedRequest`
    says), from the index as it is now."""
    has_docs = any(r.kind is RootKind.DOCS for r in live.roots)
    with live.view() as view:
        corpus = view.corpus
        return briefing.instructions(corpus, budget, has_docs, view.library, indexing(live), loaded(corpus), client)


def refusal(live: LiveIndex, request: Request) -> str | None:
    """Why the tools refuse `request` before reading anything, in one sentence (a blank query or
    path, an unknown root, a path too long to name a file); None when it is answered."""
    if isinstance(request, SearchRequest):
        return EMPTY_QUERY if not request.query.strip() else unknown_root(live, request)
    if isinstance(request, PathRequest):
        return EMPTY_PATH if not request.path.strip() else too_long(request.path) or too_deep(request.path)
    return None


@overload
def respond(live: LiveIndex, request: SearchRequest | PathRequest) -> Rendered[SearchResult]: ...
@overload
def respond(live: LiveIndex, request: ReadRequest) -> Rendered[reader.Excerpt]: ...
@overload
def respond(live: LiveIndex, request: PinnedRequest) -> Rendered[None]: ...
def respond(live: LiveIndex, request: Request) -> Rendered[SearchResult] | Rendered[reader.Excerpt] | Rendered[None]:
    """`request` answered from the index as it is now and rendered within its budget: what every
    surface shows. A read's result is the `Excerpt` read (`NotInCorpus`, with why, when there is
    nothing to read by that name)."""
    if isinstance(request, SearchRequest):
        found = search(live, request)
        page = Page.of(request, found, live.library.tokenize)
        return (render_context if request.kind is SECTIONS else render_docs)(request.query, found, page)
    if isinstance(request, PathRequest):
        return _for_path(live, request)
    if isinstance(request, ReadRequest):
        excerpt = read(live, request.name, request.section, request.start, request.end)
        shown = render_excerpt(excerpt, budget(request.max_tokens), now(live, live.roots))
        return Rendered(shown.body, shown.status, excerpt)
    with live.view() as view:
        fields = freshness_fields(freshness(live, view, live.agents_roots))
        loaded = request.loaded(view.corpus)
        return briefing.pinned_context(view.corpus, request.budget, fields, view.library, loaded, request.client)


def _for_path(live: LiveIndex, request: PathRequest) -> Rendered[SearchResult]:
    """The sections that apply to the request's source file (`policy.path_answer`), as hits."""
    where = relative_sources(live.agents_roots, request.path)
    with live.view() as view:
        found = replace(path_answer(view.corpus, where), freshness=freshness(live, view, live.agents_roots))
    miss = applies.OUTSIDE if live.agents_roots and not where else applies.MISS
    page = Page(detail=request.detail, max_tokens=budget(request.max_tokens), miss=miss.format(path=request.path))
    return render_context(request.path, texts.in_memory(found), page)


def freshness(live: LiveIndex, view: View, roots: Sequence[Root]) -> Freshness:
    """How current an answer from `view` is, for a search of `roots`: `indexing` holds the
    condition of the roots still being indexed and of those whose files are still changing."""
    return Freshness(
        generation=view.generation,
        fresh_as_of=live.fresh_since(roots),
        last=view.last_change,
        indexing=live.conditions(roots),
    )


def search(live: LiveIndex, request: SearchRequest) -> Held:
    """The request's page of hits from one generation, then make sure no hit comes from a file that changed since
    it was indexed (a deleted or edited file is re-checked and the search run again). The re-checks
    wait for updates and pause for files to hold still at most `CATCH_UP_S` in all: files that
    keep changing are answered from the last generation searched, their roots marked changing.

    The hits hold their text when answered: a docs file's lines are read from it (the index does
    not hold them) and checked against the digest it was indexed with; a hit whose file no longer
    has that content is left out, the file indexed again, and the search run again."""
    roots = roots_of(live, request.kind)
    until = time.monotonic() + CATCH_UP_S
    for _ in range(VERIFY_ROUNDS):
        with live.view() as view:
            found, moved = holding(view.policy.rank(request, view.corpus), view.corpus)
            found = replace(found, freshness=freshness(live, view, roots))
        for path in moved:
            live.reread(path, until)
        stale = live.verify((d.unit for d in found.docs), view.generation, until) or bool(moved)
        if not stale or time.monotonic() >= until:
            break
    if stale and found.freshness is not None:
        moment = time.time()
        for path in [*(d.unit.path for d in found.docs), *moved]:
            if (root := live.root_of(path)) is not None:
                live.missed(root, moment)
        fresh = found.freshness
        changing = tuple(c for c in live.conditions(roots) if c.changing and c not in fresh.indexing)
        found = replace(found, freshness=replace(fresh, indexing=(*fresh.indexing, *changing)))
    return found


def holding(found: Answer, corpus: Corpus) -> tuple[Held, list[str]]:
    """The answer with every hit holding its text (`texts.held`: a docs hit's lines are read from
    its file), each cut to the line the policy asked (`from_line`), and the links of each hit read
    from that text; but for the hits whose file no longer has the content it was indexed with:
    those are left out, and their files' display paths returned."""
    read: texts.Read = {}
    held = [(d, texts.held(d.unit, read)) for d in found.docs]
    docs = [
        replace(d, unit=unit if d.from_line is None else unit.starting_at(d.from_line), from_line=None)
        for d, unit in held
        if unit is not None
    ]
    answer = Held(replace(found, docs=docs, links=with_links(docs, corpus)))
    return answer, [d.unit.path for d, unit in held if unit is None]


def read(
    live: LiveIndex, name: str, section: str | None = None, start: int | None = None, end: int | None = None
) -> reader.Excerpt:
    """The file `name` names, read from disk now; then one section of it, or a line range.
    `NotInCorpus`, with why, when there is nothing to read."""
    with live.view() as view:
        target = reader.target(view.corpus, name)
    try:
        f = read_uri(live.corpus, target.uri)
    except Missing:
        with live.view() as view:
            raise NotInCorpus(reader.unknown(view.corpus, target.name)) from None
    return reader.excerpt(f, target.fragment, section, start, end)


def now(live: LiveIndex, roots: Sequence[Root]) -> Freshness:
    """How current the index is now, for an answer about `roots` that is no search."""
    with live.view() as view:
        return freshness(live, view, roots)
