"""The retrieval policy (docs/retrieval.md): which method answers a query, never a silent empty answer.

In order:
- `path`: the query names a file (`security.md`, `.AGENTS/services/api.md`): that file's units;
- `phrase`: the query has "quoted phrases": only units containing them as written, ranked by BM25;
- `bm25-relaxed`: the phrases matched nothing, so their words are searched without the quotes
  (the answer says which phrase was dropped);
- `bm25`: ranked keyword search, any query word may match;
- `outline`: nothing matched at all: the nearest headings and files, by fuzzy match on their
  text (the navigation layer that always works).
Other ways of saying the query (`queries`) each run through phrase, bm25-relaxed and bm25 too,
and their lists are fused by rank (`retrieval.search.fusion`); the first query's method is the
answer's. Every answer says which method ran and why a fallback happened, how many units
matched, and whether the deadline cut it short; `next_offset` only when a next page exists, and an
offset past the end says so.
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import replace

from corpus.catalog import Corpus
from corpus.files import CorpusFile
from corpus.names import shorten
from retrieval.chunks.sections import INTRO
from retrieval.chunks.units import Unit
from retrieval.engine.index import BM25Index
from retrieval.engine.library import Library
from retrieval.search.applies import applicable
from retrieval.search.feedback import expansion
from retrieval.search.fusion import fuse, variants
from retrieval.search.links import LinkTo, links
from retrieval.search.nearest import Candidate, Nearest, candidates, nearest
from retrieval.search.request import SECTIONS, Answer, Method, Miss, Scope, SearchKind, SearchRequest
from retrieval.search.retriever import BM25Retriever, Found, RetrievalRequest, RetrievedDocument, Retriever
from retrieval.text.query import Query, looks_like_path, parse

SHOWN_CHARS = 200
"""Queries and phrases quoted back in messages are cut to this many characters (the budget must hold)."""
_POOLS_KEPT = 4
FUSED_DEPTH = 10
"""How deep each query's list goes at least when several are fused: a hit ranked low by one query
and high by another needs to be in both lists to rise, but no deeper. Fusion weighs ranks gently
(`1 / (60 + rank)`), so hits that every variant ranks twentieth outscore one a variant ranks first:
on the development sets, 30 deep gave documentation page MRR 0.945, 15 deep 0.947, 10 deep 0.952
(section hit@3 0.939, 0.941, 0.949), and each list costs less to walk."""


def served(library: Library, kind: SearchKind) -> BM25Retriever:
    """The retriever the tools search `kind` with: the library's index under its ranking (score
    floor, feedback, copies, proximity; for windows, the page bonus), exactly as `agents-context
    eval` and the benchmarks use it."""
    r = library.ranking
    expand = expansion(r)
    if kind is SECTIONS:
        return BM25Retriever(
            library.sections, library.tokenize, r.score_floor, expand, r.redundancy, r.proximity, r.rerank_depth
        )
    return BM25Retriever(
        library.windows,
        library.tokenize,
        r.score_floor,
        expand,
        r.redundancy,
        r.proximity,
        r.rerank_depth,
        page_weight=r.page_weight,
        names=r.names,
        links=library.links,
        link_weight=r.link_weight,
    )


class Policy:
    """The retrieval policy over one library. Its callers hold the live index's view lock, so
    one policy answers one search at a time."""

    def __init__(self, library: Library) -> None:
        self.library = library
        self.retrievers: dict[SearchKind, Retriever] = {kind: served(library, kind) for kind in SearchKind}
        self._pools: dict[tuple[object, ...], list[Candidate]] = {}
        """Nearest-list candidates by scope and index generations: built once after a change,
        not on every miss (on a 38k-file docs root building them is most of a second of CPU, and
        a search that hogs the interpreter slows the watcher's sweeps in other threads)."""

    def rank(self, request: SearchRequest, corpus: Corpus) -> Answer:
        """Answer one search within its deadline: a page of hits with their links, or the
        nearest headings and files."""
        started = time.monotonic()
        query_text, k, offset, scope = request.query, request.page_size, request.offset, request.scope
        library = self.library
        index = library.sections if scope.kind is SECTIONS else library.windows
        query = parse(query_text, library.tokenize)
        query_text = query.raw
        if scope.filtered and next(_files(corpus, scope), None) is None:
            near = self._nearest(query_text, Scope(scope.kind), corpus)
            excluded = Answer(
                docs=[],
                method=Method.OUTLINE,
                fallback_reason=_filter_reason(scope),
                nearest=near,
                miss=Miss.FILTER,
            )
            return _done(excluded, started, query)
        want = offset + k
        found = _by_path(query_text, scope, index, corpus, want + 1)
        if found is not None:
            docs, candidates = found
            page = _page(docs, offset, k, Method.PATH, None, candidates, partial=False)
            return _done(page, started, query, corpus)
        allow = scope.allows if scope.filtered else None
        retriever = self.retrievers[scope.kind]
        deadline = started + request.deadline_s
        more = [parse(v, library.tokenize) for v in variants(query_text, request.variants)[1:]]
        # One more than the page, to know whether a next page exists after copies and the floor.
        depth = max(want + 1, FUSED_DEPTH) if more else want + 1
        asked = RetrievalRequest("", depth, deadline=deadline, allow=allow, explain=request.explain)
        result, method, reason = _ranked(retriever, query, scope, asked)
        if more:
            lists = [result, *(_ranked(retriever, q, scope, asked)[0] for q in more)]
            result = fuse(lists, want + 1, pages=scope.kind is SearchKind.WINDOWS)
            query = _joined(query, more)
        if result.docs:
            page = _page(result.docs, offset, k, method, reason, result.candidates, partial=result.partial)
            return _done(page, started, query, corpus)
        near = self._nearest(query_text, scope, corpus)
        miss = Miss.DEADLINE if result.partial else Miss.NO_WORDS if not query.terms else Miss.NO_MATCH
        reason = _miss_reason(miss, scope)
        if miss is Miss.NO_MATCH and scope.filtered:
            miss = Miss.NO_MATCH_FILTERED
        outline = Answer(
            docs=[],
            method=Method.OUTLINE,
            fallback_reason=reason,
            partial=result.partial,
            nearest=near,
            miss=miss,
        )
        return _done(outline, started, query)

    def _nearest(self, query_text: str, scope: Scope, corpus: Corpus) -> list[Nearest]:
        """The headings and files closest to the query. A file's headings are its sections when
        it has them (the searchable `.AGENTS` files); otherwise (`search_docs` over docs roots
        and pinned files) the heading trails its windows start under, with the lines of those
        windows, which costs no parsing at query time."""
        library = self.library
        key = (scope, library.sections.generation, library.windows.generation)
        pool = self._pools.get(key)
        if pool is None:
            files = list(_files(corpus, scope))
            units: list[Unit] = []
            for f in files:
                if library.sections.group_size(f.path) or scope.kind is SECTIONS:
                    units.extend(library.sections.payloads(f.path))
                else:
                    units.extend(_window_headings(library.windows.payloads(f.path)))
            pool = self._pools[key] = candidates(units, files)
            while len(self._pools) > _POOLS_KEPT:
                del self._pools[next(iter(self._pools))]
        return nearest(query_text, pool)


def _ranked(
    retriever: Retriever, query: Query, scope: Scope, asked: RetrievalRequest
) -> tuple[Found, Method, str | None]:
    """One query's ranked list: its quoted phrases as written (`phrase`), their words without the
    quotes when that matched nothing (`bm25-relaxed`, and why), or its words (`bm25`)."""
    asked = replace(asked, query=query.raw, phrases=query.phrases, terms=query.terms)
    result = retriever.search(asked)
    if not result.docs and query.phrases and not result.partial:
        return retriever.search(replace(asked, phrases=())), Method.BM25_RELAXED, _relaxed_reason(query, scope)
    return result, Method.PHRASE if query.phrases else Method.BM25, None


def _joined(query: Query, more: Sequence[Query]) -> Query:
    """`query` with the terms of every query fused with it: they pick the hits' snippet lines."""
    terms = tuple(dict.fromkeys(t for q in (query, *more) for t in q.terms))
    return replace(query, terms=terms, clipped=query.clipped or any(q.clipped for q in more))


def with_links(docs: Sequence[RetrievedDocument], corpus: Corpus) -> dict[str, tuple[LinkTo, ...]]:
    """The corpus sections each document links to, by unit id."""
    return {d.unit.id: links(d.unit, corpus) for d in docs}


def pinned_among(docs: Sequence[RetrievedDocument], corpus: Corpus) -> frozenset[str]:
    """The display paths of these documents' files that are pinned."""
    return frozenset(d.unit.path for d in docs if (f := corpus.files.get(d.unit.path)) is not None and f.pinned)


def _page(
    docs: list[RetrievedDocument],
    offset: int,
    k: int,
    method: Method,
    reason: str | None,
    candidates: int,
    *,
    partial: bool,
) -> Answer:
    """Hits `offset` to `offset + k` of `docs` (which holds one more when a next page exists)."""
    if offset and offset >= len(docs):
        reason = (
            f"the deadline passed before the search reached offset {offset}"
            if partial
            else f"offset {offset} is past the end: {len(docs)} hits in all; start again from offset 0"
        )
        return Answer(
            docs=[],
            method=method,
            fallback_reason=reason,
            candidates=candidates,
            partial=partial,
            past_end=len(docs),
        )
    return Answer(
        docs=docs[offset : offset + k],
        method=method,
        fallback_reason=reason,
        candidates=candidates,
        partial=partial,
        more=len(docs) > offset + k,
    )


def _done(result: Answer, started: float, query: Query, corpus: Corpus | None = None) -> Answer:
    """The answer with its query, its time, and (given the corpus) which hits are pinned. Its
    hits' links are found once they hold their text (`live.answers.holding`)."""
    elapsed = round((time.monotonic() - started) * 1000, 2)
    pinned = pinned_among(result.docs, corpus) if corpus is not None else frozenset()
    return replace(result, elapsed_ms=elapsed, clipped=query.clipped, query=query, pinned=pinned)


def _window_headings(windows: Sequence[Unit]) -> list[Unit]:
    """One pseudo-section per heading trail of a file's windows: the trail, and the lines of the
    windows that start under it (its URI names those lines: nothing is parsed at query time)."""
    spans: dict[tuple[str, ...], Unit] = {}
    for w in windows:
        if not w.trail or w.trail[-1] == INTRO:
            continue
        seen = spans.get(w.trail)
        start, end = (seen.start_line, max(seen.end_line, w.end_line)) if seen else (w.start_line, w.end_line)
        spans[w.trail] = Unit(w.path, w.uri, "", start, end, heading=w.trail[-1], trail=w.trail)
    return list(spans.values())


def _by_path(
    query_text: str, scope: Scope, index: BM25Index[Unit], corpus: Corpus, want: int
) -> tuple[list[RetrievedDocument], int] | None:
    """The units of the files a path-like query names, in file and line order (score 1), each
    line once: a window that overlaps the one before it (windows overlap by design) starts after it."""
    if not looks_like_path(query_text):
        return None
    wanted = query_text.strip().strip("`'\"").replace("\\", "/").removeprefix("./").casefold()
    matches = [f for f in _files(corpus, scope) if _names(f, wanted)]
    if not matches:
        return None
    units = [u for f in sorted(matches, key=lambda f: f.path) for u in index.payloads(f.path)]
    units.sort(key=lambda u: (u.path, u.start_line))
    distinct: list[RetrievedDocument] = []
    for u in units:
        last = distinct[-1].unit if distinct and distinct[-1].unit.path == u.path else None
        if last is not None and u.start_line <= last.end_line:
            if u.end_line <= last.end_line:
                continue
            if isinstance(u.source, str):  # it holds its text: cut it now
                distinct.append(RetrievedDocument(u.starting_at(last.end_line + 1), 1.0))
            else:  # cut once the answer has read its text (`live.texts.held`)
                distinct.append(RetrievedDocument(u, 1.0, from_line=last.end_line + 1))
            continue
        distinct.append(RetrievedDocument(u, 1.0))
    return distinct[:want], len(distinct)


def _names(f: CorpusFile, wanted: str) -> bool:
    """Whether `wanted` (case-folded) names this file: its display or relative path, its name,
    a trailing part of its path, or (ending in `/`) a folder it is in."""
    display, rel = f.path.casefold(), f.rel.casefold()
    if wanted.endswith("/"):
        return display.startswith(wanted) or rel.startswith(wanted)
    return wanted in (display, rel) or rel.endswith("/" + wanted) or rel.rsplit("/", 1)[-1] == wanted


def _files(corpus: Corpus, scope: Scope) -> Iterator[CorpusFile]:
    """The files `scope` allows, a record made only for them (a docs root's are columns)."""
    files = corpus.files.agents() if scope.kind is SECTIONS else corpus.files.where(scope.allows_path)
    return (f for f in files if scope.allows_file(f))


def _relaxed_reason(query: Query, scope: Scope) -> str:
    what = "section" if scope.kind is SECTIONS else "passage"
    return f"no {what} contains {shown_phrases(query.quoted)} as written; searched the words without the quotes"


def shown_phrases(quoted: Sequence[str]) -> str:
    """The phrases as quoted back to the user, at most `SHOWN_CHARS` characters."""
    return shorten(", ".join(f'"{q}"' for q in quoted), SHOWN_CHARS)


def _miss_reason(miss: Miss, scope: Scope) -> str:
    if miss is Miss.DEADLINE:
        return "the deadline passed before anything matched"
    if miss is Miss.NO_WORDS:
        return "the query has no searchable words (stop words and single letters are not indexed)"
    where = "the searchable .AGENTS sections" if scope.kind is SECTIONS else "the documentation passages"
    if scope.filtered:
        where += " within the filter"
    return f"none of the query's words occur in {where}; these headings and files are the closest by name"


def _filter_reason(scope: Scope) -> str:
    parts = [f"path_prefix={scope.path_prefix!r}"] if scope.path_prefix else []
    if scope.root is not None:
        parts.append(f"root={scope.root!r}")
    what = "searchable .AGENTS file" if scope.kind is SECTIONS else "file"
    return (
        f"the filter excluded everything: no {what} matches {' '.join(parts)}; "
        "these headings and files, from everywhere, are the closest by name"
    )


def path_answer(corpus: Corpus, where: Mapping[str, str]) -> Answer:
    """`context_for_path`'s answer: the sections that apply (`applies.applicable`) as hits (score:
    their specificity), each with why it applies and what it links to."""
    items = applicable(corpus, where)
    docs = [RetrievedDocument(a.unit, a.specificity) for a in items]
    reasons = {a.unit.id: a.reason for a in items}
    return Answer(
        docs=docs,
        method=Method.APPLIES,
        candidates=len(items),
        links=with_links(docs, corpus),
        reasons=reasons,
        pinned=pinned_among(docs, corpus),
    )
