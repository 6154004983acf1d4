"""The BM25 engine: an inverted index that can be updated one file at a time, exactly.

Postings live in immutable CSR segments (per term: document slots and term frequencies). Adding
a file appends a small segment; removing one marks its slots dead. N, document frequencies and
lengths are integers kept current on every change, and scores are computed at query time from
them, so after any sequence of changes the index scores exactly (`==`) like a fresh build.

Scoring is BM25 with the Lucene idf `ln(1 + (N - df + 0.5) / (df + 0.5))`, which is never 0 or
negative, disjunctive over the query terms. Query cost grows with the postings of the query
terms: scores are accumulated only for documents that contain one of them.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import Generic, TypeVar

import numpy as np
import numpy.typing as npt

K1 = 1.5
B = 0.75

T = TypeVar("T")
IntArray = npt.NDArray[np.int64]
FloatArray = npt.NDArray[np.float64]

_MERGE_FACTOR = 2
"""Merge the newest segment into the one before while that one holds at most this many times as
many live documents: segment sizes then fall geometrically, so there are O(log N) segments and
each posting is merged O(log N) times over its life."""
_COMPACT_DEAD_FRACTION = 0.25
_DICT_ROWS = 4096


@dataclass(frozen=True, slots=True)
class Doc(Generic[T]):
    """One unit to index: its payload, its terms, and the key that breaks score ties."""

    payload: T
    terms: Sequence[str]
    order: tuple[str, int]
    """(display path, start line): ties break by score desc, then this, ascending."""


@dataclass(frozen=True, slots=True)
class Scored(Generic[T]):
    payload: T
    score: float


class _Segment:
    """Postings of a batch of documents, grouped by term (CSR), and how many are still alive."""

    __slots__ = ("docs", "indptr", "live", "rows", "slots", "term_ids", "tfs")

    def __init__(self, term_ids: IntArray, slots: IntArray, tfs: IntArray, doc_slots: IntArray) -> None:
        self.slots = doc_slots
        """Every document slot of the segment, including those without any term."""
        order = np.lexsort((slots, term_ids))
        term_ids, self.docs, self.tfs = term_ids[order], slots[order], tfs[order]
        unique, starts = np.unique(term_ids, return_index=True)
        self.term_ids = unique
        self.indptr = np.append(starts, len(term_ids)).astype(np.int64)
        self.rows: dict[int, int] | IntArray
        if len(unique) <= _DICT_ROWS:
            self.rows = dict(zip(unique.tolist(), range(len(unique)), strict=True))
        else:
            self.rows = np.full(int(unique[-1]) + 1, -1, dtype=np.int64)
            self.rows[unique] = np.arange(len(unique))
        self.live = len(doc_slots)

    def postings(self, term_id: int) -> tuple[IntArray, IntArray] | None:
        if isinstance(self.rows, dict):
            row = self.rows.get(term_id, -1)
        else:
            row = int(self.rows[term_id]) if term_id < len(self.rows) else -1
        if row < 0:
            return None
        lo, hi = int(self.indptr[row]), int(self.indptr[row + 1])
        return self.docs[lo:hi], self.tfs[lo:hi]

    def triples(self) -> tuple[IntArray, IntArray, IntArray]:
        return np.repeat(self.term_ids, np.diff(self.indptr)), self.docs, self.tfs


class BM25Index(Generic[T]):
    """BM25 over documents grouped by file (`group`), updatable one group at a time."""

    def __init__(self, k1: float = K1, b: float = B) -> None:
        self.k1, self.b = k1, b
        self.generation = 0
        self._vocab: dict[str, int] = {}
        self._df: list[int] = []
        self._payloads: list[T | None] = []
        self._order: list[tuple[str, int]] = []
        self._terms_of: list[IntArray | None] = []
        self._segment_of: list[_Segment | None] = []
        self._length: IntArray = np.zeros(0, dtype=np.int64)
        self._alive: npt.NDArray[np.bool_] = np.zeros(0, dtype=bool)
        self._groups: dict[Hashable, list[int]] = {}
        self._segments: list[_Segment] = []
        self._n = 0
        self._total_length = 0

    # --- size -------------------------------------------------------------------------------

    @property
    def n_docs(self) -> int:
        return self._n

    @property
    def avg_length(self) -> float:
        return self._total_length / self._n if self._n else 0.0

    @property
    def n_segments(self) -> int:
        return len(self._segments)

    def df(self, term: str) -> int:
        term_id = self._vocab.get(term)
        return 0 if term_id is None else self._df[term_id]

    def groups(self) -> list[Hashable]:
        return list(self._groups)

    def group_size(self, group: Hashable) -> int:
        return len(self._groups.get(group, ()))

    def payloads(self, group: Hashable) -> list[T]:
        return [p for s in self._groups.get(group, []) if (p := self._payloads[s]) is not None]

    # --- updates ----------------------------------------------------------------------------

    def replace(self, group: Hashable, docs: Sequence[Doc[T]]) -> None:
        """Make `group` hold exactly `docs` (none: the group is removed)."""
        self._remove(group)
        if docs:
            self._add(group, docs)
        self.generation += 1
        self._tidy()

    def remove(self, group: Hashable) -> None:
        self.replace(group, ())

    def update(self, changes: Mapping[Hashable, Sequence[Doc[T]]]) -> None:
        """Apply many group changes as one coalesced update (one new segment, one generation).

        A group mapped to no documents is removed.
        """
        for group in changes:
            self._remove(group)
        present = [(group, docs) for group, docs in changes.items() if docs]
        if present:
            batch: Hashable = object()
            self._add(batch, [doc for _, docs in present for doc in docs])
            slots = iter(self._groups.pop(batch))
            for group, docs in present:
                self._groups[group] = [next(slots) for _ in docs]
        self.generation += 1
        self._tidy()

    def _add(self, group: Hashable, docs: Sequence[Doc[T]]) -> None:
        first = len(self._payloads)
        term_ids: list[int] = []
        slot_ids: list[int] = []
        tfs: list[int] = []
        lengths: list[int] = []
        for offset, doc in enumerate(docs):
            counts = Counter(self._term_id(t) for t in doc.terms)
            for term_id in counts:
                self._df[term_id] += 1
            term_ids.extend(counts.keys())
            tfs.extend(counts.values())
            slot_ids.extend([first + offset] * len(counts))
            self._payloads.append(doc.payload)
            self._order.append(doc.order)
            self._terms_of.append(np.fromiter(counts.keys(), dtype=np.int64, count=len(counts)))
            lengths.append(len(doc.terms))
        segment = _Segment(
            np.asarray(term_ids, dtype=np.int64),
            np.asarray(slot_ids, dtype=np.int64),
            np.asarray(tfs, dtype=np.int64),
            np.arange(first, first + len(docs), dtype=np.int64),
        )
        self._segment_of.extend([segment] * len(docs))
        self._segments.append(segment)
        self._length = np.concatenate([self._length, np.asarray(lengths, dtype=np.int64)])
        self._alive = np.concatenate([self._alive, np.ones(len(docs), dtype=bool)])
        self._groups[group] = list(range(first, first + len(docs)))
        self._n += len(docs)
        self._total_length += sum(lengths)

    def _remove(self, group: Hashable) -> None:
        for slot in self._groups.pop(group, ()):
            terms, segment = self._terms_of[slot], self._segment_of[slot]
            assert terms is not None and segment is not None, "a grouped slot is alive"
            for term_id in terms.tolist():
                self._df[term_id] -= 1
            segment.live -= 1
            self._alive[slot] = False
            self._payloads[slot] = self._terms_of[slot] = self._segment_of[slot] = None
            self._n -= 1
            self._total_length -= int(self._length[slot])

    def _term_id(self, term: str) -> int:
        term_id = self._vocab.get(term)
        if term_id is None:
            term_id = self._vocab[term] = len(self._df)
            self._df.append(0)
        return term_id

    def _tidy(self) -> None:
        """Drop dead segments, merge small ones, renumber when much is dead.

        Only the layout changes: scores depend on integers that none of this touches.
        """
        self._segments = [s for s in self._segments if s.live]
        dead = len(self._payloads) - self._n
        if dead > _COMPACT_DEAD_FRACTION * max(self._n, 256):
            self._renumber()
        while len(self._segments) >= 2 and (
            self._segments[-2].live <= _MERGE_FACTOR * self._segments[-1].live
            # A segment holding a quarter of the corpus or more is left alone (no latency
            # spikes); renumbering compacts it once enough of it is dead.
            and 4 * self._segments[-2].live < self._n
        ):
            newer = self._segments.pop()
            self._segments[-1] = self._merge(self._segments[-1], newer)

    def _merge(self, older: _Segment, newer: _Segment) -> _Segment:
        parts = [older.triples(), newer.triples()]
        term_ids = np.concatenate([p[0] for p in parts])
        slots = np.concatenate([p[1] for p in parts])
        tfs = np.concatenate([p[2] for p in parts])
        keep = self._alive[slots]
        doc_slots = np.concatenate([older.slots, newer.slots])
        merged = _Segment(term_ids[keep], slots[keep], tfs[keep], doc_slots[self._alive[doc_slots]])
        for slot in merged.slots.tolist():
            self._segment_of[slot] = merged
        return merged

    def _renumber(self) -> None:
        """Drop dead slots entirely, so memory follows the live corpus."""
        live = np.flatnonzero(self._alive)
        new_of_old = np.full(len(self._payloads), -1, dtype=np.int64)
        new_of_old[live] = np.arange(len(live))
        live_list = live.tolist()
        self._payloads = [self._payloads[i] for i in live_list]
        self._order = [self._order[i] for i in live_list]
        self._terms_of = [self._terms_of[i] for i in live_list]
        self._length = self._length[live]
        self._groups = {g: [int(new_of_old[s]) for s in slots] for g, slots in self._groups.items()}
        self._segment_of = [None] * len(live)
        renumbered: list[_Segment] = []
        for segment in self._segments:
            term_ids, slots, tfs = segment.triples()
            keep = self._alive[slots]
            doc_slots = new_of_old[segment.slots[self._alive[segment.slots]]]
            fresh = _Segment(term_ids[keep], new_of_old[slots[keep]], tfs[keep], doc_slots)
            for slot in fresh.slots.tolist():
                self._segment_of[slot] = fresh
            renumbered.append(fresh)
        self._segments = renumbered
        self._alive = np.ones(len(live), dtype=bool)

    # --- search -----------------------------------------------------------------------------

    def idf(self, term: str) -> float:
        df = self.df(term)
        return math.log(1.0 + (self._n - df + 0.5) / (df + 0.5))

    def score_all(self, terms: Sequence[str]) -> tuple[IntArray, FloatArray]:
        """Slots with a positive score, and their scores (slot order)."""
        parts_docs: list[IntArray] = []
        parts_scores: list[FloatArray] = []
        avg = self.avg_length
        for term in terms:
            term_id = self._vocab.get(term)
            if term_id is None or self._df[term_id] == 0:
                continue
            idf = self.idf(term)
            for segment in self._segments:
                found = segment.postings(term_id)
                if found is None:
                    continue
                docs, tfs = found
                live = self._alive[docs]
                if not live.all():
                    docs, tfs = docs[live], tfs[live]
                tf = tfs.astype(np.float64)
                norm = self.k1 * (1.0 - self.b + self.b * self._length[docs] / avg)
                parts_docs.append(docs)
                parts_scores.append(idf * (tf * (self.k1 + 1.0)) / (tf + norm))
        if not parts_docs:
            return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float64)
        # Each document's contributions are summed in query-term order whatever the segment
        # layout, so the float result is the same as a fresh build's.
        docs, inverse = np.unique(np.concatenate(parts_docs), return_inverse=True)
        scores: FloatArray = np.bincount(
            inverse, weights=np.concatenate(parts_scores), minlength=len(docs)
        ).astype(np.float64, copy=False)
        positive = scores > 0
        return docs[positive], scores[positive]

    def explain(self, terms: Sequence[str], doc_terms: Sequence[str]) -> list[tuple[str, float]]:
        """Each query term's share of the score of a document whose terms are `doc_terms`
        (in query order; repeated query terms count again, as in scoring)."""
        counts = Counter(doc_terms)
        avg, length = self.avg_length, len(doc_terms)
        shares = []
        for term in terms:
            tf = counts.get(term, 0)
            if tf and self.df(term):
                norm = self.k1 * (1.0 - self.b + self.b * length / avg)
                shares.append((term, self.idf(term) * (tf * (self.k1 + 1.0)) / (tf + norm)))
        return shares

    def containing_all(self, terms: Sequence[str]) -> IntArray:
        """Live slots that contain every one of `terms` (sorted)."""
        found: IntArray | None = None
        for term in dict.fromkeys(terms):
            term_id = self._vocab.get(term)
            if term_id is None or self._df[term_id] == 0:
                return np.zeros(0, dtype=np.int64)
            parts = [p[0] for s in self._segments if (p := s.postings(term_id)) is not None]
            docs = np.unique(np.concatenate(parts))
            docs = docs[self._alive[docs]]
            found = docs if found is None else np.intersect1d(found, docs, assume_unique=True)
        return np.zeros(0, dtype=np.int64) if found is None else found

    def search(
        self,
        terms: Sequence[str],
        k: int,
        required: Sequence[str] = (),
        keep: Callable[[T], bool] | None = None,
    ) -> list[Scored[T]]:
        """The best `k` documents: score desc, then display path and start line ascending."""
        return self.ranked(terms, k, required, keep)[0]

    def ranked(
        self,
        terms: Sequence[str],
        k: int,
        required: Sequence[str] = (),
        keep: Callable[[T], bool] | None = None,
    ) -> tuple[list[Scored[T]], int]:
        """The best `k` documents, and how many matched: among those with a positive score, only
        those containing every `required` term and accepted by `keep`."""
        docs, scores = self.score_all(terms)
        if required:
            inside = np.isin(docs, self.containing_all(required), assume_unique=True)
            docs, scores = docs[inside], scores[inside]
        if keep is not None and len(docs):
            kept = np.fromiter((keep(self._payload(s)) for s in docs.tolist()), dtype=bool, count=len(docs))
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
            key=lambda pair: (-pair[1], self._order[pair[0]]),
        )[:k]
        return [Scored(self._payload(slot), score) for slot, score in ranked], candidates

    def _payload(self, slot: int) -> T:
        payload = self._payloads[slot]
        assert payload is not None, "a live slot always has its payload"
        return payload
