"""The BM25 engine: an inverted index that can be updated one file at a time, exactly.

Postings live in immutable CSR segments (per term: document slots and per-field term
frequencies). Adding a file appends a small segment; removing one marks its slots dead. N,
document frequencies and per-field lengths are integers kept current on every change, and scores
are computed at query time from them, so after any sequence of changes the index scores exactly
(`==`) like a fresh build.

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
from collections import Counter
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass
from itertools import chain
from typing import Generic, TypeVar

import numpy as np
import numpy.typing as npt

from retrieval.segments import IntArray, Segment

K1 = 1.5
B = 0.75

T = TypeVar("T")
FloatArray = npt.NDArray[np.float64]

_MERGE_FACTOR = 2
"""Merge the newest segment into the one before while that one holds at most this many times as
many live documents: segment sizes then fall geometrically, so there are O(log N) segments and
each posting is merged O(log N) times over its life."""
_COMPACT_DEAD_FRACTION = 0.25


@dataclass(frozen=True, slots=True)
class Field:
    """One field of a document: its weight in the combined term frequency and its length
    normalisation (0: none, 1: full)."""

    name: str
    weight: float = 1.0
    b: float = B


PLAIN_FIELDS: tuple[Field, ...] = (Field("text"),)
"""One field, weight 1: plain BM25."""


@dataclass(frozen=True, slots=True)
class Doc(Generic[T]):
    """One unit to index: its payload, its terms per field, and the key that breaks score ties."""

    payload: T
    fields: Sequence[Sequence[str]]
    """Terms of each field, in the index's field order (missing trailing fields are empty)."""
    order: tuple[str, int]
    """(display path, start line): ties break by score desc, then this, ascending."""


@dataclass(frozen=True, slots=True)
class Scored(Generic[T]):
    payload: T
    score: float


class BM25Index(Generic[T]):
    """BM25F over documents grouped by file (`group`), updatable one group at a time."""

    def __init__(self, k1: float = K1, b: float = B, fields: Sequence[Field] | None = None) -> None:
        self.k1 = k1
        self.fields: tuple[Field, ...] = tuple(fields) if fields else (Field("text", 1.0, b),)
        self.b = self.fields[0].b
        self.generation = 0
        n_fields = len(self.fields)
        self._vocab: dict[str, int] = {}
        self._df: list[int] = []
        self._payloads: list[T | None] = []
        self._order: list[tuple[str, int]] = []
        self._terms_of: list[IntArray | None] = []
        self._segment_of: list[Segment | None] = []
        self._length: IntArray = np.zeros((0, n_fields), dtype=np.int64)
        self._alive: npt.NDArray[np.bool_] = np.zeros(0, dtype=bool)
        self._groups: dict[Hashable, list[int]] = {}
        self._segments: list[Segment] = []
        self._n = 0
        self._total_length = [0] * n_fields

    # --- size -------------------------------------------------------------------------------

    @property
    def n_docs(self) -> int:
        return self._n

    @property
    def avg_length(self) -> float:
        """Average length of the first field."""
        return self._total_length[0] / self._n if self._n else 0.0

    def avg_lengths(self) -> list[float]:
        return [total / self._n if self._n else 0.0 for total in self._total_length]

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
        n_fields = len(self.fields)
        first = len(self._payloads)
        term_ids: list[int] = []
        slot_ids: list[int] = []
        tfs: list[list[int]] = []
        lengths: list[list[int]] = []
        for offset, doc in enumerate(docs):
            if len(doc.fields) > n_fields or any(isinstance(f, str) for f in doc.fields):
                raise ValueError(f"a document needs at most {n_fields} fields, each a list of terms")
            counts = [Counter(terms) for terms in doc.fields]
            counts += [Counter() for _ in range(n_fields - len(counts))]
            unique = list(dict.fromkeys(chain.from_iterable(counts)))
            ids = [self._term_id(t) for t in unique]
            for term_id in ids:
                self._df[term_id] += 1
            term_ids.extend(ids)
            tfs.extend([c[t] for c in counts] for t in unique)
            slot_ids.extend([first + offset] * len(ids))
            self._payloads.append(doc.payload)
            self._order.append(doc.order)
            self._terms_of.append(np.asarray(ids, dtype=np.int64))
            lengths.append([len(terms) for terms in doc.fields] + [0] * (n_fields - len(doc.fields)))
        segment = Segment(
            np.asarray(term_ids, dtype=np.int64),
            np.asarray(slot_ids, dtype=np.int64),
            np.asarray(tfs, dtype=np.int64).reshape(len(term_ids), n_fields),
            np.arange(first, first + len(docs), dtype=np.int64),
        )
        self._segment_of.extend([segment] * len(docs))
        self._segments.append(segment)
        self._length = np.concatenate([self._length, np.asarray(lengths, dtype=np.int64)])
        self._alive = np.concatenate([self._alive, np.ones(len(docs), dtype=bool)])
        self._groups[group] = list(range(first, first + len(docs)))
        self._n += len(docs)
        for f in range(n_fields):
            self._total_length[f] += sum(row[f] for row in lengths)

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
            for f, length in enumerate(self._length[slot].tolist()):
                self._total_length[f] -= length

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

    def _merge(self, older: Segment, newer: Segment) -> Segment:
        parts = [older.triples(), newer.triples()]
        term_ids = np.concatenate([p[0] for p in parts])
        slots = np.concatenate([p[1] for p in parts])
        tfs = np.concatenate([p[2] for p in parts])
        keep = self._alive[slots]
        doc_slots = np.concatenate([older.slots, newer.slots])
        merged = Segment(term_ids[keep], slots[keep], tfs[keep], doc_slots[self._alive[doc_slots]])
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
        renumbered: list[Segment] = []
        for segment in self._segments:
            term_ids, slots, tfs = segment.triples()
            keep = self._alive[slots]
            doc_slots = new_of_old[segment.slots[self._alive[segment.slots]]]
            fresh = Segment(term_ids[keep], new_of_old[slots[keep]], tfs[keep], doc_slots)
            for slot in fresh.slots.tolist():
                self._segment_of[slot] = fresh
            renumbered.append(fresh)
        self._segments = renumbered
        self._alive = np.ones(len(live), dtype=bool)

    # --- search -----------------------------------------------------------------------------

    def idf(self, term: str) -> float:
        df = self.df(term)
        return math.log(1.0 + (self._n - df + 0.5) / (df + 0.5))

    def score_all(self, terms: Sequence[str], weights: Sequence[float] | None = None) -> tuple[IntArray, FloatArray]:
        """Slots with a positive score, and their scores (slot order).

        `weights` (one per term, default 1) scale each query term's contribution.
        """
        parts_docs: list[IntArray] = []
        parts_scores: list[FloatArray] = []
        k1 = self.k1
        avgs = self.avg_lengths()
        for i, term in enumerate(terms):
            term_id = self._vocab.get(term)
            if term_id is None or self._df[term_id] == 0:
                continue
            weight = 1.0 if weights is None else weights[i]
            idf = self.idf(term) * weight
            for segment in self._segments:
                found = segment.postings(term_id)
                if found is None:
                    continue
                docs, tfs = found
                live = self._alive[docs]
                if not live.all():
                    docs, tfs = docs[live], tfs[live]
                tf = self._combined_tf(docs, tfs, avgs)
                parts_docs.append(docs)
                parts_scores.append(idf * (tf * (k1 + 1.0)) / (tf + k1))
        if not parts_docs:
            return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float64)
        # Each document's contributions are summed in query-term order whatever the segment
        # layout, so the float result is the same as a fresh build's.
        docs, inverse = np.unique(np.concatenate(parts_docs), return_inverse=True)
        scores: FloatArray = np.bincount(inverse, weights=np.concatenate(parts_scores), minlength=len(docs)).astype(
            np.float64, copy=False
        )
        positive = scores > 0
        return docs[positive], scores[positive]

    def _combined_tf(self, docs: IntArray, tfs: IntArray, avgs: Sequence[float]) -> FloatArray:
        """BM25F's tf~: each field's frequency over its length norm, weighted, summed in field order."""
        total: FloatArray = np.zeros(len(docs), dtype=np.float64)
        for f, field in enumerate(self.fields):
            if field.weight == 0 or avgs[f] == 0:
                continue  # a field no live document has cannot hold the term
            norm = 1.0 - field.b + field.b * self._length[docs, f] / avgs[f]
            total += field.weight * tfs[:, f] / norm
        return total

    def explain(
        self,
        terms: Sequence[str],
        doc_fields: Sequence[Sequence[str]],
        weights: Sequence[float] | None = None,
    ) -> list[tuple[str, float, list[str]]]:
        """Each query term's share of the score of a document with these terms per field, and the
        fields it occurs in (in query order; a repeated query term counts again, as in scoring)."""
        counts = [Counter(terms_of_field) for terms_of_field in doc_fields]
        lengths = [len(terms_of_field) for terms_of_field in doc_fields]
        avgs = self.avg_lengths()
        shares = []
        for i, term in enumerate(terms):
            if not self.df(term):
                continue
            tf = 0.0
            where = []
            for f, field in enumerate(self.fields):
                n = counts[f][term] if f < len(counts) else 0
                if n and field.weight and avgs[f]:
                    tf += field.weight * n / (1.0 - field.b + field.b * lengths[f] / avgs[f])
                    where.append(field.name)
            if tf:
                weight = 1.0 if weights is None else weights[i]
                shares.append((term, self.idf(term) * weight * (tf * (self.k1 + 1.0)) / (tf + self.k1), where))
        return shares

    def containing_all(self, terms: Sequence[str]) -> IntArray:
        """Live slots that contain every one of `terms`, in any field (sorted)."""
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
    ) -> tuple[list[Scored[T]], int]:
        """The best `k` documents, and how many matched: among those with a positive score, only
        those containing every `required` term and accepted by `keep`."""
        docs, scores = self.score_all(terms, weights)
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
