"""Answering a search the way the tools do, for the MCP server and the command line alike.

One generation is searched under the index lock, the hits are checked against the disk, and the
options that shape the text result (budget, detail, explanations, links) are assembled here, so
`context_search` and `agents-context search` can never drift apart.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from corpus.roots import Root
from retrieval import policy
from retrieval.format import MAX_MAX_TOKENS, MIN_MAX_TOKENS, Options
from retrieval.links import links
from retrieval.live import LiveIndex, View
from retrieval.policy import Answer, Scope
from retrieval.query import parse
from retrieval.results import Freshness, LinkTo, MatchedTerm
from retrieval.retriever import RetrievedDocument


def clamp(value: int, low: int, high: int) -> int:
    return max(low, min(high, value))


def freshness(live: LiveIndex, view: View, roots: Sequence[Root]) -> Freshness:
    change = view.last_change
    return Freshness(
        generation=view.generation,
        fresh_as_of=live.fresh_since(roots),
        added=change.added if change else frozenset(),
        changed=change.changed if change else frozenset(),
        removed=change.removed if change else frozenset(),
        changed_at=change.at if change else None,
        indexing=tuple(live.indexing(roots)),
    )


def search(
    live: LiveIndex,
    query: str,
    k: int,
    offset: int,
    scope: Scope,
    roots: Sequence[Root],
    deadline_s: float,
) -> tuple[Answer, Freshness]:
    """Answer from one generation, then make sure no hit comes from a file that changed since
    it was indexed (a deleted or edited file is re-checked and the search run again)."""
    for _ in range(3):
        with live.view() as view:
            # The library's own retriever (`policy.served`): the ranking's score floor and
            # feedback apply here exactly as in `agents-context eval` and the benchmarks.
            found = policy.answer(query, k, offset, scope, view.library, view.corpus, deadline_s=deadline_s)
            fresh = freshness(live, view, roots)
        if not live.verify((d.unit for d in found.docs), view.generation):
            break
    return found, fresh


def explainer(live: LiveIndex, kind: str, terms: Sequence[str]) -> Callable[[RetrievedDocument], list[MatchedTerm]]:
    """Per hit: each query term's contribution to its score, and the fields it occurs in."""

    def explain(doc: RetrievedDocument) -> list[MatchedTerm]:
        shares = doc.matched or ()  # the retriever explains its hits as it finds them
        proximity = dict(doc.proximity)  # a term's proximity bonus counts once, with its first occurrence
        return [
            MatchedTerm(term=term, contribution=round(share + proximity.pop(term, 0.0), 4), fields=where)
            for term, share, where in shares
        ]

    return explain


def options_for(
    live: LiveIndex,
    kind: str,
    query: str,
    found: Answer,
    fresh: Freshness,
    detail: str,
    max_tokens: int,
    offset: int,
    generation: int | None,
) -> Options:
    parsed = parse(query, live.library.tokenize)
    return Options(
        detail=detail,
        max_tokens=clamp(max_tokens, MIN_MAX_TOKENS, MAX_MAX_TOKENS),
        offset=offset,
        freshness=fresh,
        gen_changed=generation is not None and generation != fresh.generation,
        terms=frozenset(parsed.terms),
        tokenize=live.library.tokenize,
        dropped=parsed.quoted if found.method == "bm25-relaxed" else (),
        explain=explainer(live, kind, parsed.terms),
        links=lambda doc: [LinkTo(text=x.text, path=x.path, uri=x.uri) for x in links(doc.unit, live.corpus)],
    )
