"""Answering from the live index, for the MCP tools, the command line and `eval` alike: a
`SearchRequest` is answered (`search`) and rendered (`answer`). One generation is searched under
the view lock, its hits are checked against the disk, and the answer carries how
fresh it is (each root still being indexed, or whose files are still changing, with its
`RootCondition`: the answer is partial); reads resolve a name in the snapshot and read the file from disk now. So
`context_search` and `agents-context search` (and `read_context` and `agents-context read`) can
never drift apart.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import replace

from corpus.catalog import Corpus, read_uri
from corpus.errors import Missing, NotInCorpus
from corpus.roots import Root
from live import texts
from live.index import CATCH_UP_S, LiveIndex
from live.store import View
from retrieval.render.hits import Page, Rendered, render_context, render_docs
from retrieval.search import reader
from retrieval.search.policy import with_links
from retrieval.search.request import SECTIONS, Answer, Freshness, SearchKind, SearchRequest

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


def answer(live: LiveIndex, request: SearchRequest) -> Rendered:
    """The request searched (`search`) and rendered within its budget: what every surface shows."""
    found = search(live, request)
    page = Page.of(request, found, live.library.tokenize)
    return (render_context if request.kind is SECTIONS else render_docs)(request.query, found, page)


def freshness(live: LiveIndex, view: View, roots: Sequence[Root]) -> Freshness:
    """How current an answer from `view` is, for a search of `roots`: `indexing` holds the
    condition of the roots still being indexed and of those whose files are still changing."""
    return Freshness(
        generation=view.generation,
        fresh_as_of=live.fresh_since(roots),
        last=view.last_change,
        indexing=live.conditions(roots),
    )


def search(live: LiveIndex, request: SearchRequest) -> Answer:
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


def holding(found: Answer, corpus: Corpus) -> tuple[Answer, list[str]]:
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
    answer = replace(found, docs=docs, links=with_links(docs, corpus))
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
