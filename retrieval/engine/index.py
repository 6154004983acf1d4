"""The BM25 engine: BM25F scores over the postings store (`retrieval.engine.postings`), exact after any
sequence of updates because N, df and lengths are integers and scores are computed at query time.

Scoring is BM25F (Robertson, Zaragoza and Taylor, "Simple BM25 extension to multiple weighted
fields", 2004) with the Lucene idf `ln(1 + (N - df + 0.5) / (df + 0.5))`, which is never 0 or
negative, disjunctive over the query terms. Each field f has a weight w_f and its own length
normalisation b_f; a term's frequencies in the fields are combined before saturation:

    tf~ = sum_f w_f * tf_f / (1 - b_f + b_f * len_f / avglen_f)
    score = sum over query terms of  qw * idf * tf~ * (k1 + 1) / (tf~ + k1)

df counts documents with the term in any field. With one field of weight 1 this is exactly BM25
(`tf * (k1 + 1) / (tf + k1 * (1 - b + b * len / avglen))`). Query cost grows with the postings of
the query terms: scores are accumulated only for documents that contain one of them.
"""

from __future__ import annotations

import math
import weakref
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any, Generic, TypeVar

import numpy as np
import numpy.typing as npt

from retrieval.engine.postings import Doc, Postings
from retrieval.engine.segments import I32, Frequencies, IntArray, gather

__all__ = ["K1", "B", "BM25Index", "Doc", "Field", "Scored"]

K1 = 1.5
B = 0.75

T = TypeVar("T")
FloatArray = npt.NDArray[np.float64]

_CACHED_POSTINGS = 1 << 19
"""Up to this many postings (4 MB of float64), each posting's whole contribution (idf times
saturated tf) is computed once per generation, by the second query of the generation (up to about
12 ms), and later queries only add up their terms' rows: about half the time on small corpora. The
first query after a change computes its own terms' contributions, so a corpus that changes between
every two queries never pays for the cache. Above this size a query always computes its own: every
edit changes N and the average length, and with them every contribution (tldr's 1.4M postings
would take about 70 ms to recompute)."""

_Cached = tuple[npt.NDArray[np.float64], list[int] | npt.NDArray[np.int64], dict[int, int] | None]
"""A segment's cached contributions, row pointers, and row of each term id: as a list and a dict
for a segment of at most a few thousand terms (a query reads them in Python), else the segment's
own arrays (a list and a dict of tldr's 107k terms were 10 MB of small objects, made again after
each chunk of a cold build while calls came in: they left 20 MB on the peak)."""

_DENSE_FRACTION = 0.125
"""Sum contributions into a dense array of every slot when a query's postings exceed this share of
the slots; below it, sorting the matched slots (np.unique) is cheaper."""


@dataclass(frozen=True, slots=True)
class Field:
    """One field of a document: its weight in the combined term frequency and its length
    normalisation (0: none, 1: full)."""

    name: str
    weight: float = 1.0
    b: float = B


@dataclass(slots=True)  # not frozen: a frozen dataclass takes 3x as long to build, k of them a query
class Scored(Generic[T]):
    payload: T
    score: float
    slot: int
    """Where the document sits in its index (for `text`/`occurrences`; valid until the next update)."""


def _row(frequencies: dict[str, list[list[int]]], i: int, term: str) -> list[int]:
    return frequencies[term][i]


class BM25Index(Postings[T]):
    """BM25F over documents grouped by file (`group`), updatable one group at a time."""

    def __init__(self, k1: float = K1, b: float = B, fields: Sequence[Field] | None = None) -> None:
        self.k1 = k1
        self.fields: tuple[Field, ...] = tuple(fields) if fields else (Field("text", 1.0, b),)
        self.b = self.fields[0].b
        super().__init__(len(self.fields))
        self._norms: list[FloatArray | None] = []
        self._norms_generation = -1
        self._weights: tuple[int, dict[int, _Cached]] = (-1, {})
        """(generation, each segment's contributions, row pointers and rows by segment id): see
        `_CACHED_POSTINGS`."""
        self._queried = -1
        """The generation of the last query that found no cache (the next one builds it)."""

    # --- search -----------------------------------------------------------------------------

    def occurrences(self, slots: Sequence[int], term_ids: Sequence[int]) -> list[tuple[list[int], list[int], int]]:
        """For each slot: where any of `term_ids` occurs in its first field (0-based token
        positions, ascending), which term it is there, and the field's length. One vectorised pass
        over all the slots' text instead of re-tokenizing it."""
        if not slots or not term_ids:
            return [([], [], int(self._slots.length.data[s, 0])) for s in slots]
        text, sizes = self._slots.first_fields(np.asarray(slots, dtype=np.int64))
        match = text == term_ids[0]  # a few comparisons beat np.isin's set machinery for a query
        for term_id in term_ids[1:]:
            match |= text == term_id
        found = np.flatnonzero(match)
        starts = np.cumsum(sizes) - sizes
        cuts = np.searchsorted(found, starts + sizes).tolist()
        positions, ids = found.tolist(), text[found].tolist()
        out, lo = [], 0
        for start, hi, size in zip(starts.tolist(), cuts, sizes.tolist(), strict=True):
            out.append(([p - start for p in positions[lo:hi]], ids[lo:hi], size))
            lo = hi
        return out

    def containing_all(self, terms: Sequence[str]) -> IntArray:
        """Live slots that contain every one of `terms`, in any field (sorted)."""
        found: IntArray | None = None
        alive = self._slots.alive.view()
        for term in dict.fromkeys(terms):
            term_id = self._vocab.get(term)
            if term_id is None or self._df.data[term_id] == 0:
                return np.zeros(0, dtype=np.int64)
            # Segments hold ascending slot ranges and each term's slots ascend: already sorted.
            parts = [p[0] for s in self._segments if (p := s.postings(term_id)) is not None]
            docs = np.concatenate(parts).astype(np.int64)
            docs = docs[alive[docs]]
            found = docs if found is None else np.intersect1d(found, docs, assume_unique=True)
        return np.zeros(0, dtype=np.int64) if found is None else found

    def idf(self, term: str) -> float:
        return self._idfs([self.df(term)])[0]

    def score_all(self, terms: Sequence[str], weights: Sequence[float] | None = None) -> tuple[IntArray, FloatArray]:
        """Slots with a positive score, and their scores (slot order).

        `weights` (one per term, default 1) scale each query term's contribution.
        """
        entries: list[tuple[int, float]] = []  # (term id, query weight)
        for i, term in enumerate(terms):
            term_id = self._vocab.get(term)
            if term_id is not None and self._df.data[term_id] > 0:
                entries.append((term_id, 1.0 if weights is None else weights[i]))
        if not entries:
            return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float64)
        cached = self._cached_weights()
        norms = self._field_norms()
        alive = self._slots.alive.view()
        parts_docs: list[I32] = []
        parts_scores: list[FloatArray] = []
        # One gather per segment for all the query's terms, in query order: a slot lives in one
        # segment, so its contributions arrive in query-term order whatever the layout.
        for segment in self._segments:
            if cached is not None:  # slices of the cached rows (a dead slot's contributions are 0)
                contributions_of, bounds, rows = cached[segment.id]
                if rows is not None:
                    spans = [(bounds[r], bounds[r + 1], w) for t, w in entries if (r := rows.get(t)) is not None]
                else:
                    spans = [(int(bounds[r]), int(bounds[r + 1]), w) for t, w in entries if (r := segment.row(t)) >= 0]
                if not spans:
                    continue
                docs = np.concatenate([segment.docs[a:b] for a, b, _ in spans])
                contributions = np.concatenate([contributions_of[a:b] for a, b, _ in spans])
                scale = None
                if weights is not None:
                    scale = np.repeat(np.array([w for _, _, w in spans]), [b - a for a, b, _ in spans])
            else:
                picked = [(term_id, row, w) for term_id, w in entries if (row := segment.row(term_id)) >= 0]
                if not picked:
                    continue
                at_rows = np.array([row for _, row, _ in picked], dtype=np.int64)
                starts = segment.indptr[at_rows]
                lengths = segment.indptr[at_rows + 1] - starts
                at = gather(starts, lengths)
                docs = segment.docs[at]
                scale = None if weights is None else np.repeat(np.array([w for _, _, w in picked]), lengths)
                df = self._df.data
                idfs = np.repeat(np.array(self._idfs([int(df[term_id]) for term_id, _, _ in picked])), lengths)
                tfs = segment.tfs[at]
                if segment.live < len(segment.slots):
                    live = alive[docs]
                    docs, tfs, idfs = docs[live], tfs[live], idfs[live]
                    scale = None if scale is None else scale[live]
                contributions = self._contributions(idfs, self._combined_tf(docs, tfs, norms))
            if scale is not None:
                contributions = contributions * scale
            parts_docs.append(docs)
            parts_scores.append(contributions)
        if not parts_docs:
            return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float64)
        all_docs = np.concatenate(parts_docs)
        contributions = np.concatenate(parts_scores)
        # bincount adds each slot's contributions in input order (query-term order) on both
        # paths, so the floats are those of a fresh build. Dense when the postings are many (no
        # sort); sparse through np.unique otherwise.
        if len(all_docs) > _DENSE_FRACTION * len(alive):
            dense: FloatArray = np.bincount(all_docs, contributions, len(alive)).astype(np.float64, copy=False)
            slots = np.flatnonzero(dense > 0)
            return slots, dense[slots]
        docs_u, inverse = np.unique(all_docs, return_inverse=True)
        scores: FloatArray = np.bincount(inverse, contributions, len(docs_u)).astype(np.float64, copy=False)
        positive = scores > 0
        return docs_u[positive].astype(np.int64), scores[positive]

    def _cached_weights(self) -> dict[int, _Cached] | None:
        """By segment id, every posting's contribution `idf * tf~ (k1 + 1) / (tf~ + k1)` (0 for a
        dead slot), the row pointers as a list and each term's row in a dict (a query slices its
        rows: no gather, no call into the segment), for this generation; None for the
        generation's first query and above `_CACHED_POSTINGS`. The same elementwise floats as
        computing them at query time."""
        generation, cached = self._weights
        if generation == self.generation:
            return cached
        if self._queried != self.generation:  # the first query of this generation: no cache yet
            self._queried = self.generation
            return None
        if sum(len(segment.docs) for segment in self._segments) > _CACHED_POSTINGS:
            self._weights = (-1, {})  # grown past the bound: let an older cache go
            return None
        norms = self._field_norms()
        alive = self._slots.alive.view()
        cached = {}
        for segment in self._segments:
            # One float at a time, not a list of each term's df and idf: made for every term of the
            # index whenever it changed, those lists left holes in the heap that the resident set kept.
            dfs = map(int, self._df.data[segment.term_ids])
            each = np.fromiter(map(self._idf_of, dfs), np.float64, len(segment.term_ids))
            idfs = np.repeat(each, np.diff(segment.indptr))
            weights = self._contributions(idfs, self._combined_tf(segment.docs, segment.tfs, norms))
            if segment.live < len(segment.slots):
                weights[~alive[segment.docs]] = 0.0
            rows = segment.rows
            if isinstance(rows, dict):
                cached[segment.id] = (weights, segment.indptr.tolist(), rows)
            else:
                cached[segment.id] = (weights, segment.indptr, None)
        self._weights = (self.generation, cached)
        return cached

    def _idfs(self, dfs: Sequence[int]) -> list[float]:
        """The idf of terms with these document frequencies, as `idf` computes it."""
        return [self._idf_of(df) for df in dfs]

    def _idf_of(self, df: int) -> float:
        """The idf of a term with this document frequency (math.log: one formula for the cached
        and the query-time paths, and the explanations)."""
        return math.log(1.0 + (self._n - df + 0.5) / (df + 0.5))

    def _contributions(self, idfs: FloatArray, tf: FloatArray) -> FloatArray:
        """A posting's share of the score, before the query term's weight: the one formula of
        both the cached and the query-time paths, so their floats are the same."""
        k1 = self.k1
        contributions: FloatArray = idfs * (tf * (k1 + 1.0)) / (tf + k1)
        return contributions

    def _field_norms(self) -> list[FloatArray | None]:
        """Per field, every slot's length norm `1 - b + b * len / avglen` (None for a field no
        live document has, or of weight 0), computed once per generation. Elementwise, so the
        floats are those of computing it for the matched slots alone."""
        if self._norms_generation != self.generation:
            avgs = self.avg_lengths()
            lengths = self._slots.length.view()
            self._norms = [
                None if field.weight == 0 or avgs[f] == 0 else 1.0 - field.b + field.b * lengths[:, f] / avgs[f]
                for f, field in enumerate(self.fields)
            ]
            self._norms_generation = self.generation
        return self._norms

    def _combined_tf(self, docs: I32, tfs: Frequencies, norms: Sequence[FloatArray | None]) -> FloatArray:
        """BM25F's tf~: each field's frequency over its length norm, weighted, summed in field order."""
        total: FloatArray = np.zeros(len(docs), dtype=np.float64)
        for f, field in enumerate(self.fields):
            norm = norms[f]
            if norm is not None:  # a field no live document has cannot hold the term
                total += field.weight * tfs[:, f] / norm[docs]
        return total

    def explain_slots(
        self, terms: Sequence[str], slots: Sequence[int], weights: Sequence[float] | None = None
    ) -> list[list[tuple[str, float, list[str]]]]:
        """Each query term's share of the score of each of these indexed documents (live slots),
        and the fields it occurs in (in query order; a repeated query term counts again, as in
        scoring), read from their postings: no text tokenized again. One lookup per query term
        and segment for all the slots."""
        picked = np.asarray(slots, dtype=np.int64)
        seg_of = self._slots.seg_of.data[picked]
        holding = [(s, mine) for s in self._segments if len(mine := np.flatnonzero(seg_of == s.id))]
        frequencies: dict[str, list[list[int]]] = {}
        for term in dict.fromkeys(terms):
            table = np.zeros((len(picked), len(self.fields)), dtype=np.int64)
            term_id = self._vocab.get(term)
            for segment, mine in holding:
                found = None if term_id is None else segment.postings(term_id)
                if found is None:
                    continue
                docs, tfs = found
                at = np.minimum(np.searchsorted(docs, picked[mine]), len(docs) - 1)
                held = docs[at] == picked[mine]
                table[mine[held]] = tfs[at[held]]
            frequencies[term] = table.tolist()
        lengths = self._slots.length.data[picked].tolist()
        return [self._shares(terms, partial(_row, frequencies, i), lengths[i], weights) for i in range(len(picked))]

    def _shares(
        self,
        terms: Sequence[str],
        frequencies: Callable[[str], list[int]],
        lengths: list[int],
        weights: Sequence[float] | None,
    ) -> list[tuple[str, float, list[str]]]:
        avgs = self.avg_lengths()
        shares = []
        for i, term in enumerate(terms):
            if not self.df(term):
                continue
            tf = 0.0
            where = []
            for f, (field, n) in enumerate(zip(self.fields, frequencies(term), strict=True)):
                if n and field.weight and avgs[f]:
                    tf += field.weight * n / (1.0 - field.b + field.b * lengths[f] / avgs[f])
                    where.append(field.name)
            if tf:
                weight = 1.0 if weights is None else weights[i]
                shares.append((term, self.idf(term) * weight * (tf * (self.k1 + 1.0)) / (tf + self.k1), where))
        return shares

    def search(
        self,
        terms: Sequence[str],
        k: int,
        weights: Sequence[float] | None = None,
        required: Sequence[str] = (),
        keep: Callable[[T], bool] | None = None,
    ) -> list[Scored[T]]:
        """The best `k` documents: score desc, then display path and start line ascending."""
        return self.ranked(terms, k, weights, required, keep)[0]

    def ranked(
        self,
        terms: Sequence[str],
        k: int,
        weights: Sequence[float] | None = None,
        required: Sequence[str] = (),
        keep: Callable[[T], bool] | None = None,
        scored: tuple[IntArray, FloatArray] | None = None,
    ) -> tuple[list[Scored[T]], int]:
        """The best `k` documents, and how many matched: among those with a positive score (by
        `terms`, or as `scored` gives them), only those holding every `required` term and
        accepted by `keep`."""
        docs, scores = scored if scored is not None else self.score_all(terms, weights)
        if required:
            inside = np.isin(docs, self.containing_all(required), assume_unique=True)
            docs, scores = docs[inside], scores[inside]
        payload, order = self._slots.payload, self._slots.order
        if keep is not None and len(docs):
            kept = np.fromiter((keep(payload(s)) for s in docs.tolist()), dtype=bool, count=len(docs))
            docs, scores = docs[kept], scores[kept]
        candidates = len(docs)
        if k <= 0:
            return [], candidates
        if len(docs) > k:
            kth = np.partition(scores, len(scores) - k)[len(scores) - k]
            top = scores >= kth
            docs, scores = docs[top], scores[top]
        ranked = sorted(
            zip(docs.tolist(), scores.tolist(), strict=True),
            key=lambda pair: (-pair[1], order(pair[0])),
        )[:k]
        return [Scored(payload(slot), score, slot) for slot, score in ranked], candidates


@dataclass(frozen=True, slots=True)
class Apart:
    """One field scored apart from BM25F (a `Field` of weight 0, such as the windows' page field):
    BM25 over the live documents that hold it, as if they were a corpus of their own."""

    slots: IntArray
    """The documents with a positive score, ascending."""
    scores: FloatArray
    shares: list[tuple[str, IntArray, FloatArray]]
    """Each query term (a repeated one again): the documents holding it, ascending, and its share
    of their scores."""

    @property
    def best(self) -> float:
        return float(self.scores.max()) if len(self.scores) else 0.0

    def score(self, slot: int) -> float:
        at = int(np.searchsorted(self.slots, slot))
        return float(self.scores[at]) if at < len(self.slots) and self.slots[at] == slot else 0.0

    def explain(self, slot: int) -> list[tuple[str, float]]:
        """Each query term's share of the document's score (terms it lacks left out)."""
        out = []
        for term, docs, contributions in self.shares:
            at = int(np.searchsorted(docs, slot))
            if at < len(docs) and docs[at] == slot:
                out.append((term, float(contributions[at])))
        return out


_HOLDING: weakref.WeakKeyDictionary[BM25Index[Any], dict[int, tuple[int, int, float]]] = weakref.WeakKeyDictionary()
"""By index and field: (generation, live documents holding the field, their average length in it)."""


def _holding(index: BM25Index[T], field: int) -> tuple[int, float]:
    """How many live documents hold `field`, and their average length in it: counted once per
    generation (a pass over every slot, most of `apart`'s time on a 38k-file root), not per search."""
    cached = _HOLDING.setdefault(index, {}).get(field)
    if cached is not None and cached[0] == index.generation:
        return cached[1], cached[2]
    holding = index._slots.length.view()[:, field][index._slots.alive.view()]
    n = int(np.count_nonzero(holding))
    average = float(holding.sum()) / n if n else 0.0
    _HOLDING[index][field] = (index.generation, n, average)
    return n, average


def apart(index: BM25Index[T], terms: Sequence[str], field: int) -> Apart:
    """BM25 of `field` alone over the documents that hold it (their number is N, their average
    length the average, a term's df the documents holding it there), with the index's k1 and the
    field's b: the page bonus's page-against-page score."""
    alive = index._slots.alive.view()
    lengths = index._slots.length.view()[:, field]
    n, average = _holding(index, field)
    b, k1 = index.fields[field].b, index.k1
    shares: list[tuple[str, IntArray, FloatArray]] = []
    for term in terms:
        term_id = index._vocab.get(term)
        if term_id is None or not n:
            continue
        parts = []
        for segment in index._segments:
            row = segment.row(term_id)
            if row < 0:
                continue
            lo, hi = int(segment.indptr[row]), int(segment.indptr[row + 1])
            held, tfs = segment.docs[lo:hi].astype(np.int64), segment.tfs[lo:hi, field]
            keep = (tfs > 0) & alive[held]
            parts.append((held[keep], tfs[keep].astype(np.float64)))
        if not parts or not (df := sum(len(d) for d, _ in parts)):
            continue
        docs, tf = np.concatenate([d for d, _ in parts]), np.concatenate([t for _, t in parts])
        idf = math.log(1.0 + (n - df + 0.5) / (df + 0.5))
        normed = tf / (1.0 - b + b * lengths[docs] / average)
        shares.append((term, docs, idf * normed * (k1 + 1.0) / (normed + k1)))
    if not shares:
        return Apart(np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float64), [])
    every = np.concatenate([d for _, d, _ in shares])
    slots, inverse = np.unique(every, return_inverse=True)
    scores = np.bincount(inverse, np.concatenate([c for _, _, c in shares]), len(slots)).astype(np.float64)
    return Apart(slots, scores, shares)
