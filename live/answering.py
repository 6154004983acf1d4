"""Answering from the live index, for the MCP tools and the command line alike: one generation is
searched under the view lock, its hits are checked against the disk, and the answer carries how
fresh it is; reads resolve a name in the snapshot and read the file from disk now. So
`context_search` and `agents-context search` (and `read_context` and `agents-context read`) can
never drift apart.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from corpus.catalog import read_uri
from corpus.errors import Missing, NotInCorpus
from corpus.roots import Root
from live.index import LiveIndex
from live.store import Store, View
from retrieval.search import reader
from retrieval.search.answer import Answer, Freshness, Scope
from retrieval.search.policy import DEADLINE_S

VERIFY_ROUNDS = 3
"""A search whose hits come from files that changed since they were indexed runs again, at most
this many times in all."""


def freshness(store: Store, view: View, roots: Sequence[Root]) -> Freshness:
    """How current an answer from `view` is, for a search of `roots`."""
    return Freshness(
        generation=view.generation,
        fresh_as_of=store.fresh_since(roots),
        last=view.last_change,
        indexing=tuple(store.indexing(roots)),
    )


def search(
    live: LiveIndex,
    query: str,
    k: int,
    offset: int,
    scope: Scope,
    roots: Sequence[Root],
    deadline_s: float = DEADLINE_S,
) -> Answer:
    """Answer from one generation, then make sure no hit comes from a file that changed since
    it was indexed (a deleted or edited file is re-checked and the search run again)."""
    for _ in range(VERIFY_ROUNDS):
        with live.view() as view:
            found = view.policy.answer(query, k, offset, scope, view.corpus, deadline_s)
            found = replace(found, freshness=freshness(live, view, roots))
        if not live.verify((d.unit for d in found.docs), view.generation):
            break
    return found


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
