"""The retriever contract: one method, ranked documents, empty is success (docs/retrieval.md,
"One retriever").

The request carries per-call options (`k`, a deadline, filters, phrases that must match), because
our tools are per-call. Errors raise; they are never encoded in the result. A retriever that runs
out of time returns the best results it has, with `Found.partial` set: on a timeout the tools
answer with partial results (`partial=1`) rather than fail (docs/retrieval.md, "The deadline").
"""

from __future__ import annotations

import time
from collections.abc import Callable, Hashable, Sequence
from dataclasses import KW_ONLY, dataclass, field
from typing import Protocol

from retrieval.chunks.units import Unit
from retrieval.engine.index import Apart, BM25Index, Scored, apart
from retrieval.engine.proximity import occurrence_shares
from retrieval.engine.ranking import PAGE
from retrieval.search.linked import Linked, linked
from retrieval.text.query import MAX_QUERY_TERMS, clip, contains

Shares = tuple[tuple[str, float], ...]
"""(query term, its share of a score), in query order."""


@dataclass(frozen=True, slots=True)
class RetrievalRequest:
    query: str
    k: int = 3
    _: KW_ONLY
    deadline: float | None = None
    """A `time.monotonic()` moment after which to stop and return what is ready."""
    allow: Callable[[Unit], bool] | None = None
    """Only units this accepts (path and root filters)."""
    phrases: tuple[tuple[str, ...], ...] = ()
    """Term sequences every returned unit must contain as written."""
    terms: tuple[str, ...] | None = None
    """The query's terms, when the caller parsed it already (else the retriever tokenizes `query`)."""
    explain: bool = True
    """Explain each hit term by term (`RetrievedDocument.matched` and `page`); a search not asked
    to skips that work."""

    def expired(self) -> bool:
        return self.deadline is not None and time.monotonic() >= self.deadline


@dataclass(frozen=True, slots=True)
class RetrievedDocument:
    unit: Unit
    score: float
    proximity: Shares = ()
    """Each query term's share of the proximity bonus included in `score` (`retrieval.engine.proximity`;
    empty when there is none), so an explanation can still add up to the score."""
    matched: tuple[tuple[str, float, list[str]], ...] | None = None
    """Each query term's share of the BM25 score and the fields it occurs in, as the index that
    ranked it explains it (`BM25Index.explain`); None from a retriever that does not explain."""
    from_line: int | None = None
    """Show the unit from this line of it on (the lines before are shown by the hit above it):
    applied when the unit gets its text (`live.texts.held`, `starting_at`)."""
    page: Shares = ()
    """Each query term's share of the page bonus included in `score` (its page's headings and path
    matched it; empty when there is none)."""

    @property
    def id(self) -> str:
        return self.unit.id

    @property
    def content(self) -> str:
        return self.unit.text

    @property
    def source(self) -> str:
        return self.unit.path


Expander = Callable[[BM25Index[Unit], Sequence[str]], tuple[Sequence[str], Sequence[float]]]
"""Query expansion: (index, query terms) -> (terms, weights)."""


@dataclass(frozen=True, slots=True)
class Found:
    """What `BM25Retriever.search` found: the documents, how many units matched before `k` cut
    them (for explanations), and whether the deadline stopped the search early."""

    docs: list[RetrievedDocument]
    candidates: int
    partial: bool = False


class Retriever(Protocol):
    """What the policy searches one index through: given a request, the relevant documents, best
    first (possibly none), and whether the deadline cut the search short. `BM25Retriever` is the
    one the tools use; another kind (embeddings, a remote engine) would plug in here."""

    def search(self, request: RetrievalRequest) -> Found: ...


@dataclass(frozen=True, slots=True)
class _Paged:
    """What a search's page bonus was made of: the pages' scores, the factor from a page's score to
    its bonus, and the hits that carry one (unit id -> its page's slot)."""

    pages: Apart
    scale: float
    carriers: dict[str, int]
    linked: Linked = field(default_factory=Linked)
    link_scale: float = 0.0
    """The factor from the words of links to a page (`linked`) to its bonus."""


class BM25Retriever:
    """A retriever over one `BM25Index` of units; filters apply inside the engine, so a selective
    filter never starves the top k.

    Quoted phrases: the engine keeps only units holding every word of every phrase (postings, no
    positions), then this checks the phrases themselves against the candidates' stored terms
    (`BM25Index.text`), in score order and only as far as the `k` it needs, and stops at the
    request's deadline with what it has (`Found.partial`). The postings hold no positions on
    purpose: they would roughly double the index's memory for a feature few queries use.

    It never returns the same text twice (the model would read, and pay for, it twice): a unit
    that overlaps a better one of the same file, or is a near copy of a better one with the same
    heading (term sets at least `redundancy` alike by Jaccard, as versioned copies of a page
    are), is skipped and the next one takes its place. With a `score_floor`, hits below that
    fraction of the best hit's score are dropped (how the floor was chosen, and what it does
    against another folder's pages, is in docs/quality.md, "What the defaults are, and why"); the
    best hit always stays.

    With a `proximity` weight, the `depth` best units of the engine's ranking gain a bonus for
    query words that occur close together (`retrieval.engine.proximity`), read from their stored
    terms (`BM25Index.occurrences`), before copies are skipped and the floor applies; the query's
    own words count, not those an `expand` added.

    With a `page_weight` and an index with a page field (`Ranking.window_fields`: a file's headings
    and path, on its first window), each file's best unit among those `depth` then gains a page
    bonus: `page_weight` times the best hit's score, times how well its file's page field matches
    the query against the best match of any file, that field scored apart
    (`retrieval.engine.index.apart`). A page
    titled with what the query asks about rises over pages that only mention its words often;
    measured in docs/quality.md. The page field also holds a page's names that are one stop word
    (`Ranking.page_terms`), which `names` finds in the query: `after()` finds `after.md`. With
    `links` and a `link_weight`, the bonus also holds `link_weight` times the best hit's score,
    times how well the links pointing to the page match the query against the best such match
    among those pages (`retrieval.search.linked`).
    """

    def __init__(
        self,
        index: BM25Index[Unit],
        tokenize: Callable[[str], Sequence[str]],
        score_floor: float = 0.0,
        expand: Expander | None = None,
        redundancy: float | None = 0.9,
        proximity: float = 0.0,
        depth: int = 30,
        page_weight: float = 0.0,
        names: Callable[[str], Sequence[str]] | None = None,
        links: BM25Index[Unit] | None = None,
        link_weight: float = 0.0,
    ) -> None:
        self.redundancy = redundancy
        self.proximity = proximity
        fields = [f.name for f in index.fields]
        self.page = fields.index(PAGE) if page_weight and PAGE in fields else None
        """The index's page field, scored apart for the page bonus (None: no bonus)."""
        self.page_weight = page_weight
        self.links = links if self.page is not None and link_weight else None
        """The links of the indexed files, whose words count for the pages they point to."""
        self.link_weight = link_weight
        self.names = names or (lambda _: ())
        """The query's stop words, matched against the page field alone (`Ranking.names`)."""
        self.depth = depth
        self.index = index
        self.tokenize = tokenize
        self.score_floor = score_floor
        self.expand = expand

    def search(self, request: RetrievalRequest) -> Found:
        """The documents, how many units matched, and whether the deadline cut the search short.

        `candidates` counts the units holding the query's words (every word of its phrases, for
        a phrase query) within the filter, before phrases are checked, copies skipped and `k`."""
        query: Sequence[str] = (
            request.terms if request.terms is not None else list(self.tokenize(clip(request.query)))[:MAX_QUERY_TERMS]
        )
        terms, weights = query, None
        if self.expand is not None:
            terms, weights = self.expand(self.index, query)
        required = [t for phrase in request.phrases for t in phrase]
        names = list(self.names(request.query)) if self.page is not None else []
        want = request.k
        while True:
            fetch = max(want, self.depth) if self.proximity or self.page is not None else want
            if query or not names:
                ranked, candidates = self.index.ranked(terms, fetch, weights, required, request.allow)
                ranked, shares = self._rerank(query, ranked, request)
                ranked, pages = self._page_bonus([*query, *names], ranked)
            else:
                ranked, candidates, pages = self._named(names, fetch, request)
                shares = {}
            hits, partial = self._walk(ranked, request)
            if partial or len(hits) >= request.k or len(ranked) < fetch:
                break
            want *= 2  # phrases failed or copies were skipped: look further down the ranking
        if hits and self.score_floor > 0:
            floor = hits[0].score * self.score_floor
            hits = [h for h in hits if h.score >= floor]
        if not request.explain:
            return Found(
                [RetrievedDocument(h.payload, h.score, shares.get(h.payload.id, ())) for h in hits], candidates, partial
            )
        # Explained here, while the hits' slots are valid: from the postings, with no text re-read.
        explained = self.index.explain_slots(query, [h.slot for h in hits])
        page = self._page_shares(hits, pages)
        docs = [
            RetrievedDocument(
                h.payload, h.score, shares.get(h.payload.id, ()), tuple(why), page=page.get(h.payload.id, ())
            )
            for h, why in zip(hits, explained, strict=True)
        ]
        return Found(docs, candidates, partial)

    def _page_bonus(self, query: Sequence[str], ranked: list[Scored[Unit]]) -> tuple[list[Scored[Unit]], _Paged | None]:
        """The first `depth` hits with the page bonus added and re-sorted, the rest as they were;
        and what the bonus was made of (None: no bonus). Each page's best hit alone carries its
        page's bonus, so a page that matches lifts one window, not all of them over other pages.
        A bonus is never negative, so the re-scored hits stay above the rest."""
        if self.page is None or not ranked:
            return ranked, None
        top = ranked[: self.depth]
        pages = apart(self.index, query, self.page)  # the query's names too (see `names`)
        links = linked(self.links, query, [h.payload.path for h in top]) if self.links is not None else Linked()
        if pages.best <= 0.0 and links.best <= 0.0:
            return ranked, None
        scale = self.page_weight * top[0].score / pages.best if pages.best > 0.0 else 0.0
        link_scale = self.link_weight * top[0].score / links.best if links.best > 0.0 else 0.0
        carriers: dict[str, int] = {}  # unit id -> its page's slot in `pages`
        seen: set[str] = set()
        done = []
        for h in top:
            bonus = 0.0
            if h.payload.path not in seen:
                seen.add(h.payload.path)
                slot = self.index.span(h.payload.path)[0]
                carriers[h.payload.id] = slot
                bonus = scale * pages.score(slot) + link_scale * links.scores.get(h.payload.path, 0.0)
            done.append(Scored(h.payload, h.score + bonus, h.slot))
        done.sort(key=lambda h: -h.score)  # stable: ties keep the order before the bonus
        return done + ranked[len(top) :], _Paged(pages, scale, carriers, links, link_scale)

    def _named(self, names: Sequence[str], k: int, request: RetrievalRequest) -> tuple[list[Scored[Unit]], int, _Paged]:
        """A query of stop words alone (`after`): pages ranked by the names their page field holds,
        each by its first window, scored and explained as a page bonus of weight 1."""
        assert self.page is not None
        pages = apart(self.index, names, self.page)
        ranked, candidates = self.index.ranked((), k, keep=request.allow, scored=(pages.slots, pages.scores))
        return ranked, candidates, _Paged(pages, 1.0, {h.payload.id: h.slot for h in ranked})

    def _page_shares(self, hits: Sequence[Scored[Unit]], paged: _Paged | None) -> dict[str, Shares]:
        """The page bonus of each shown hit that carries one, by query term (a repeated term's
        shares summed), by unit id."""
        if paged is None:
            return {}
        out: dict[str, Shares] = {}
        for h in hits:
            slot = paged.carriers.get(h.payload.id)
            if slot is None:
                continue
            summed: dict[str, float] = {}
            for term, share in paged.pages.explain(slot):
                summed[term] = summed.get(term, 0.0) + paged.scale * share
            for term, share in paged.linked.shares(h.payload.path).items():
                summed[term] = summed.get(term, 0.0) + paged.link_scale * share
            out[h.payload.id] = tuple(summed.items())
        return out

    def _rerank(
        self, query: Sequence[str], ranked: list[Scored[Unit]], request: RetrievalRequest
    ) -> tuple[list[Scored[Unit]], dict[str, Shares]]:
        """The first `depth` hits re-scored with the proximity bonus (`retrieval.engine.proximity`) and
        re-sorted, the rest as they were; and each re-scored unit's per-term bonus, by unit id.
        At the deadline it stops: what it has not reached keeps its first-stage score (the list
        stays in score order, and the walk that follows reports the search partial)."""
        index = self.index
        names: dict[int, str] = {}  # query term id -> the term, for the terms some document has
        for term in dict.fromkeys(query):
            term_id = index.term_id(term)
            if term_id is not None and index.df(term):
                names[term_id] = term
        idf = {term_id: index.idf(term) for term_id, term in names.items()}
        if not self.proximity or len(idf) < 2:
            return ranked, {}
        body = index.fields[0]
        average = index.avg_lengths()[0] or 1.0
        done: list[Scored[Unit]] = []
        shares: dict[str, Shares] = {}
        top = ranked[: self.depth]
        # The index keeps each unit's body terms in text order: the query terms' positions in all
        # `depth` hits come from one vectorised pass, with no text tokenized again.
        found = index.occurrences([h.slot for h in top], list(idf))
        for hit, (positions, terms, length) in zip(top, found, strict=True):
            if request.expired():
                break
            if not terms or terms.count(terms[0]) == len(terms):  # one query term alone earns no bonus
                done.append(hit)
                continue
            norm = 1.0 - body.b + body.b * length / average
            share = occurrence_shares(positions, terms, idf, index.k1, norm)
            bonus = [(names[t], self.proximity * s) for t, s in share.items()]
            shares[hit.payload.id] = tuple(bonus)
            done.append(Scored(hit.payload, hit.score + sum(s for _, s in bonus), hit.slot))
        done.sort(key=lambda h: -h.score)  # stable: ties keep the first stage's order
        return done + ranked[len(done) :], shares

    def _walk(self, ranked: Sequence[Scored[Unit]], request: RetrievalRequest) -> tuple[list[Scored[Unit]], bool]:
        """The first `k` hits, best first, that hold the phrases and repeat no better hit; and
        whether the deadline passed before the walk ended."""
        kept: list[Scored[Unit]] = []
        index = self.index
        # A phrase term the index has never seen cannot occur: id -1 matches nothing.
        phrases = [[-1 if (i := index.term_id(t)) is None else i for t in p] for p in request.phrases]
        by_path: dict[str, list[Unit]] = {}
        by_heading: dict[str | None, list[int]] = {}  # heading -> slots of the hits kept under it
        term_sets: dict[int, frozenset[int]] = {}

        def terms_of(slot: int, tokens: list[int] | None = None) -> frozenset[int]:
            """A hit's distinct body terms, made only when a kept hit shares its heading."""
            if slot not in term_sets:
                term_sets[slot] = frozenset(index.text(slot).tolist() if tokens is None else tokens)
            return term_sets[slot]

        for hit in ranked:
            if request.expired():
                return kept, True
            unit = hit.payload
            tokens = index.text(hit.slot).tolist() if phrases else None
            if tokens is not None and not all(contains(tokens, p) for p in phrases):
                continue
            if self.redundancy is not None:
                if any(overlaps(unit, other) for other in by_path.get(unit.path, ())):
                    continue
                alike = by_heading.setdefault(unit.heading, [])
                if any(similar(terms_of(hit.slot, tokens), terms_of(other), self.redundancy) for other in alike):
                    continue
                alike.append(hit.slot)
                by_path.setdefault(unit.path, []).append(unit)
            kept.append(hit)
            if len(kept) == request.k:
                break
        return kept, False


def similar(a: frozenset[Hashable], b: frozenset[Hashable], threshold: float) -> bool:
    """Jaccard similarity of two term sets at least `threshold` (identical sets always are)."""
    if a == b:
        return True
    if min(len(a), len(b)) < threshold * max(len(a), len(b)):
        return False  # the overlap is at most the smaller set, the union at least the larger
    shared = len(a & b)
    return shared >= threshold * (len(a) + len(b) - shared)  # the union's size, without making it


def overlaps(a: Unit, b: Unit) -> bool:
    return a.path == b.path and a.start_line <= b.end_line and b.start_line <= a.end_line
