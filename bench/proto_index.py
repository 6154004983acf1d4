"""A prototype of `retrieval.index.BM25Index` with the speed analysis' proposals, to measure them.

Not used by the server. Same interface (`replace`, `remove`, `search`, `score_all`, `df`, `idf`,
...) plus `replace_many` for a bulk build, and the same exactness: N, df and lengths are integers,
scores are computed at query time with the same float expression and summed in query-term order,
so after any sequence of updates the index scores `==` a fresh build, and `==` today's engine
(`tests/test_proto_index.py` checks both).

What changes, each measured in the README's "Speed" section:
1. Bulk build: `replace_many` indexes many files as ONE segment: a `Counter` per section, one
   vocabulary lookup per distinct term of a section, in C (`map` over a `defaultdict` whose factory
   is its own `__len__`, so a new term gets the next id), then one stable argsort by term to lay
   out the CSR. No per-file segments, no merge cascade.
2. Growable arrays (capacity doubling) for lengths, liveness, slot-to-segment and the forward
   index, instead of `np.concatenate` of the whole array on every file (quadratic in files).
3. Linear merges: segments hold ascending slot ranges, so two sorted CSR segments merge with two
   `searchsorted` calls instead of a fresh `lexsort` of both.
4. int32 postings and a flat int32 forward index (the terms of each section, to decrement df on
   removal) instead of int64 postings and one numpy array object per section.
5. Query: BM25 length norms cached per generation; contributions accumulated with a dense
   `bincount` when the postings are many (no `np.unique` sort); the sparse path as before otherwise.
6. df as a numpy array, groups as (first slot, count): a file's sections always hold contiguous
   slots, renumbering included.
"""

from __future__ import annotations

import math
from array import array
from collections import Counter, defaultdict
from collections.abc import Hashable, Iterable, Sequence
from typing import Any, Generic, TypeVar

import numpy as np
import numpy.typing as npt

from retrieval.index import K1, B, Doc, Scored

__all__ = ["BM25Index", "Doc", "Scored"]

T = TypeVar("T")
I32 = npt.NDArray[np.int32]
I64 = npt.NDArray[np.int64]
F64 = npt.NDArray[np.float64]

_MERGE_FACTOR = 2
_COMPACT_DEAD_FRACTION = 0.25
_DICT_ROWS = 4096
_DENSE_FRACTION = 0.125
"""Accumulate into a dense array of every slot when the query's postings exceed this share of the
slots; below it, the sparse `np.unique` path is cheaper."""
_PRUNE_FRACTION = 1 / 32
"""A query term is "frequent" (its postings are skipped when provably unneeded) above this df share."""
_PRUNE_TRIES = 2
_LOOKUP_COST = 6
"""Looking a candidate up in a non-essential term's postings (`searchsorted`) costs about this many
times scoring one posting: a split is tried only when the essential postings, plus these lookups,
are fewer than all the query's postings."""
PRUNE = True
"""MaxScore pruning in `search` (a switch so the benchmark can measure with and without)."""


class _Grow:
    """A numpy array that grows by doubling: appends are amortised O(1) per element."""

    __slots__ = ("data", "n")

    def __init__(self, dtype: type, capacity: int = 256) -> None:
        self.data: npt.NDArray[Any] = np.zeros(capacity, dtype=dtype)
        self.n = 0

    def extend(self, values: npt.ArrayLike) -> None:
        arr = np.asarray(values, dtype=self.data.dtype)
        need = self.n + len(arr)
        if need > len(self.data):
            grown = np.zeros(max(need, 2 * len(self.data)), dtype=self.data.dtype)
            grown[: self.n] = self.data[: self.n]
            self.data = grown
        self.data[self.n : need] = arr
        self.n = need

    def view(self) -> npt.NDArray[Any]:
        return self.data[: self.n]

    def reset(self, values: npt.ArrayLike) -> None:
        arr = np.asarray(values, dtype=self.data.dtype)
        self.data = np.zeros(max(256, 2 * len(arr)), dtype=self.data.dtype)
        self.data[: len(arr)] = arr
        self.n = len(arr)


class _Segment:
    """CSR postings of a range of slots: `docs` and `tfs` grouped by ascending term, slots ascending."""

    __slots__ = ("docs", "id", "indptr", "live", "rows", "slots", "term_ids", "tfs")

    def __init__(self, seg_id: int, term_ids: I32, indptr: I64, docs: I32, tfs: I32, slots: I32) -> None:
        self.id = seg_id
        self.term_ids, self.indptr, self.docs, self.tfs, self.slots = term_ids, indptr, docs, tfs, slots
        self.live = len(slots)
        self.rows: dict[int, int] | I32
        if len(term_ids) <= _DICT_ROWS:
            self.rows = dict(zip(term_ids.tolist(), range(len(term_ids)), strict=True))
        else:
            self.rows = np.full(int(term_ids[-1]) + 1, -1, dtype=np.int32)
            self.rows[term_ids] = np.arange(len(term_ids), dtype=np.int32)

    @classmethod
    def from_pairs(cls, seg_id: int, terms: I32, slots_of: I32, tfs: I32, slots: I32) -> _Segment:
        """From postings in slot order (any term order within a slot): one stable sort by term."""
        order = np.argsort(terms, kind="stable")
        terms, docs, tfs = terms[order], slots_of[order], tfs[order]
        return cls(seg_id, *_csr(terms), docs, tfs, slots)

    def row(self, term_id: int) -> int:
        """The term's row in the CSR, or -1 when the segment does not have it."""
        if isinstance(self.rows, dict):
            return self.rows.get(term_id, -1)
        return int(self.rows[term_id]) if term_id < len(self.rows) else -1

    def postings(self, term_id: int) -> tuple[I32, I32] | None:
        row = self.row(term_id)
        if row < 0:
            return None
        lo, hi = int(self.indptr[row]), int(self.indptr[row + 1])
        return self.docs[lo:hi], self.tfs[lo:hi]

    def posting_terms(self) -> I32:
        return np.repeat(self.term_ids, np.diff(self.indptr))


def _csr(sorted_terms: I32) -> tuple[I32, I64]:
    """Distinct terms and row pointers of postings already sorted by term."""
    if len(sorted_terms) == 0:
        return np.zeros(0, dtype=np.int32), np.zeros(1, dtype=np.int64)
    starts = np.flatnonzero(np.concatenate(([True], sorted_terms[1:] != sorted_terms[:-1])))
    return sorted_terms[starts], np.append(starts, len(sorted_terms)).astype(np.int64)


class BM25Index(Generic[T]):
    def __init__(self, k1: float = K1, b: float = B) -> None:
        self.k1, self.b = k1, b
        self.generation = 0
        self._vocab: defaultdict[str, int] = defaultdict()
        self._vocab.default_factory = self._vocab.__len__
        """Term ids; looking up a missing term inserts it with the next id (`len` before insertion)."""
        self._df = _Grow(np.int64, 1024)
        self._payloads: list[T | None] = []
        self._order: list[tuple[str, int]] = []
        self._length = _Grow(np.int64)
        self._alive = _Grow(np.bool_)
        self._seg_of = _Grow(np.int32)
        self._fwd = _Grow(np.int32, 4096)
        """Forward index: the distinct terms of every slot, in slot order (to decrement df)."""
        self._fwd_ptr = _Grow(np.int64)
        """Slot s's terms are _fwd[_fwd_ptr[s]:_fwd_ptr[s] + _fwd_len[s]]."""
        self._fwd_len = _Grow(np.int32)
        self._groups: dict[Hashable, tuple[int, int]] = {}
        self._segments: list[_Segment] = []
        self._seg_ids = 0
        self._n = 0
        self._total_length = 0
        self._norm: F64 | None = None
        self._norm_generation = -1

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
        return 0 if term_id is None else int(self._df.data[term_id])

    def groups(self) -> list[Hashable]:
        return list(self._groups)

    def payloads(self, group: Hashable) -> list[T]:
        first, count = self._groups.get(group, (0, 0))
        return [p for p in self._payloads[first : first + count] if p is not None]

    # --- updates ----------------------------------------------------------------------------

    def replace(self, group: Hashable, docs: Sequence[Doc[T]]) -> None:
        """Make `group` hold exactly `docs` (none: the group is removed)."""
        self.replace_many([(group, docs)])

    def remove(self, group: Hashable) -> None:
        self.replace_many([(group, ())])

    def replace_many(self, items: Iterable[tuple[Hashable, Sequence[Doc[T]]]]) -> None:
        """Replace many groups at once; their new documents form one segment (a bulk build)."""
        latest = dict(items)
        for group in latest:
            self._remove(group)
        adding = [(g, docs) for g, docs in latest.items() if docs]
        if adding:
            self._add(adding)
        self.generation += 1
        self._tidy()

    def _add(self, items: list[tuple[Hashable, Sequence[Doc[T]]]]) -> None:
        first = len(self._payloads)
        vocab = self._vocab
        term_id = vocab.__getitem__  # a missing term gets the next id, in C (see __init__)
        terms = array("i")  # C ints: 4 bytes a posting while building, not an 8-byte reference
        tfs = array("i")
        distinct: list[int] = []
        lengths: list[int] = []
        slot = first
        for group, docs in items:
            self._groups[group] = (slot, len(docs))
            slot += len(docs)
            for doc in docs:
                counts = Counter(doc.fields[0])
                terms.extend(map(term_id, counts))
                tfs.extend(counts.values())
                distinct.append(len(counts))
                lengths.append(len(doc.fields[0]))
                self._payloads.append(doc.payload)
                self._order.append(doc.order)
        n_new = slot - first
        if len(vocab) > self._df.n:
            self._df.extend(np.zeros(len(vocab) - self._df.n, dtype=np.int64))
        term_arr = np.frombuffer(terms, dtype=np.int32) if terms else np.zeros(0, dtype=np.int32)
        counts_arr = np.asarray(distinct, dtype=np.int64)
        if len(term_arr) > self._df.n // 8:
            self._df.data[: self._df.n] += np.bincount(term_arr, minlength=self._df.n)
        else:
            np.add.at(self._df.data, term_arr, 1)
        slots = np.arange(first, slot, dtype=np.int32)
        self._fwd_ptr.extend(self._fwd.n + np.concatenate(([0], np.cumsum(counts_arr)[:-1])))
        self._fwd_len.extend(counts_arr)
        self._fwd.extend(term_arr)
        segment = _Segment.from_pairs(
            self._new_id(),
            term_arr,
            np.repeat(slots, counts_arr),
            np.frombuffer(tfs, dtype=np.int32) if tfs else np.zeros(0, dtype=np.int32),
            slots,
        )
        self._segments.append(segment)
        self._seg_of.extend(np.full(n_new, segment.id, dtype=np.int32))
        self._length.extend(lengths)
        self._alive.extend(np.ones(n_new, dtype=np.bool_))
        self._n += n_new
        self._total_length += sum(lengths)

    def _new_id(self) -> int:
        self._seg_ids += 1
        return self._seg_ids

    def _remove(self, group: Hashable) -> None:
        found = self._groups.pop(group, None)
        if found is None:
            return
        first, count = found
        slots = np.arange(first, first + count)
        alive = self._alive.view()
        assert alive[slots].all(), "a grouped slot is alive"
        ptr, length = self._fwd_ptr.view()[slots], self._fwd_len.view()[slots]
        terms = self._fwd.view()[np.repeat(ptr - np.cumsum(length) + length, length) + np.arange(length.sum())]
        np.subtract.at(self._df.data, terms, 1)
        by_segment = Counter(self._seg_of.view()[slots].tolist())
        for segment in self._segments:
            segment.live -= by_segment.get(segment.id, 0)
        alive[slots] = False
        for s in range(first, first + count):
            self._payloads[s] = None
        self._n -= count
        self._total_length -= int(self._length.view()[slots].sum())

    def _tidy(self) -> None:
        self._segments = [s for s in self._segments if s.live]
        dead = len(self._payloads) - self._n
        if dead > _COMPACT_DEAD_FRACTION * max(self._n, 256):
            self._renumber()
        while len(self._segments) >= 2 and (self._segments[-2].live <= _MERGE_FACTOR * self._segments[-1].live):
            newer = self._segments.pop()
            self._segments[-1] = self._merge(self._segments[-1], newer)

    def _live_postings(self, segment: _Segment) -> tuple[I32, I32, I32]:
        terms, docs, tfs = segment.posting_terms(), segment.docs, segment.tfs
        if segment.live < len(segment.slots):
            keep = self._alive.view()[docs]
            terms, docs, tfs = terms[keep], docs[keep], tfs[keep]
        return terms, docs, tfs

    def _merge(self, older: _Segment, newer: _Segment) -> _Segment:
        """Every slot of `older` is below every slot of `newer`, so a linear merge keeps CSR order."""
        a_terms, a_docs, a_tfs = self._live_postings(older)
        b_terms, b_docs, b_tfs = self._live_postings(newer)
        n = len(a_terms) + len(b_terms)
        dest_a = np.arange(len(a_terms)) + np.searchsorted(b_terms, a_terms, side="left")
        dest_b = np.arange(len(b_terms)) + np.searchsorted(a_terms, b_terms, side="right")
        terms = np.empty(n, dtype=np.int32)
        docs = np.empty(n, dtype=np.int32)
        tfs = np.empty(n, dtype=np.int32)
        for dest, t, d, f in ((dest_a, a_terms, a_docs, a_tfs), (dest_b, b_terms, b_docs, b_tfs)):
            terms[dest], docs[dest], tfs[dest] = t, d, f
        alive = self._alive.view()
        slots = np.concatenate([older.slots[alive[older.slots]], newer.slots[alive[newer.slots]]])
        merged = _Segment(self._new_id(), *_csr(terms), docs, tfs, slots)
        self._seg_of.data[slots] = merged.id
        return merged

    def _renumber(self) -> None:
        """Drop dead slots entirely, so memory follows the live corpus."""
        alive = self._alive.view()
        live = np.flatnonzero(alive)
        new_of_old = np.full(len(alive), -1, dtype=np.int64)
        new_of_old[live] = np.arange(len(live))
        live_list = live.tolist()
        self._payloads = [self._payloads[i] for i in live_list]
        self._order = [self._order[i] for i in live_list]
        self._length.reset(self._length.view()[live])
        self._groups = {g: (int(new_of_old[first]), count) for g, (first, count) in self._groups.items()}
        ptr, length = self._fwd_ptr.view()[live], self._fwd_len.view()[live]
        starts = np.cumsum(length) - length
        self._fwd.reset(self._fwd.view()[np.repeat(ptr - starts, length) + np.arange(length.sum())])
        self._fwd_ptr.reset(starts)
        self._fwd_len.reset(length)
        renumbered: list[_Segment] = []
        seg_of = np.zeros(len(live), dtype=np.int32)
        for segment in self._segments:
            terms, docs, tfs = self._live_postings(segment)
            slots = new_of_old[segment.slots[alive[segment.slots]]].astype(np.int32)
            fresh = _Segment(self._new_id(), *_csr(terms), new_of_old[docs].astype(np.int32), tfs, slots)
            seg_of[slots] = fresh.id
            renumbered.append(fresh)
        self._segments = renumbered
        self._seg_of.reset(seg_of)
        self._alive.reset(np.ones(len(live), dtype=np.bool_))

    # --- search -----------------------------------------------------------------------------

    def idf(self, term: str) -> float:
        df = self.df(term)
        return math.log(1.0 + (self._n - df + 0.5) / (df + 0.5))

    def _norms(self) -> F64:
        """k1 * (1 - b + b * length / avg) for every slot, once per generation (elementwise, so the
        same floats as computing it for the matched slots only)."""
        if self._norm is None or self._norm_generation != self.generation:
            self._norm = self.k1 * (1.0 - self.b + self.b * self._length.view() / self.avg_length)
            self._norm_generation = self.generation
        return self._norm

    def _entries(self, terms: Sequence[str]) -> list[tuple[int, float, int]]:
        """(term id, idf, df) of each query term in the index, in query order (repeats kept)."""
        df = self._df.data
        n = self._n
        entries = []
        for term in terms:
            term_id = self._vocab.get(term)
            if term_id is not None and (d := int(df[term_id])) > 0:
                entries.append((term_id, math.log(1.0 + (n - d + 0.5) / (d + 0.5)), d))
        return entries

    def score_all(self, terms: Sequence[str]) -> tuple[I64, F64]:
        """Slots with a positive score, and their scores (slot order)."""
        return self._score(self._entries(terms))

    def _score(self, entries: list[tuple[int, float, int]]) -> tuple[I64, F64]:
        parts_docs: list[I32] = []
        parts_scores: list[F64] = []
        alive = self._alive.view()
        # One gather per segment for all the query's terms (not numpy calls per term): a slot
        # lives in one segment, so its contributions still arrive in query-term order.
        for segment in self._segments:
            picked = [(row, idf) for term_id, idf, _ in entries if (row := segment.row(term_id)) >= 0]
            if not picked:
                continue
            rows = np.array([row for row, _ in picked], dtype=np.int64)
            los = segment.indptr[rows]
            lens = segment.indptr[rows + 1] - los
            at = np.repeat(los - (np.cumsum(lens) - lens), lens) + np.arange(int(lens.sum()))
            docs, tfs = segment.docs[at], segment.tfs[at]
            idfs = np.repeat(np.array([idf for _, idf in picked], dtype=np.float64), lens)
            if segment.live < len(segment.slots):
                live = alive[docs]
                docs, tfs, idfs = docs[live], tfs[live], idfs[live]
            tf = tfs.astype(np.float64)
            parts_docs.append(docs)
            parts_scores.append(idfs * (tf * (self.k1 + 1.0)) / (tf + self._norms()[docs]))
        if not parts_docs:
            return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float64)
        all_docs = np.concatenate(parts_docs)
        weights = np.concatenate(parts_scores)
        # bincount sums each slot's contributions in input order, i.e. in query-term order, on
        # both paths, so the floats are those of a fresh build whatever the segment layout.
        if len(all_docs) > _DENSE_FRACTION * len(alive):
            dense: F64 = np.bincount(all_docs, weights=weights, minlength=len(alive)).astype(np.float64, copy=False)
            slots = np.flatnonzero(dense > 0)
            return slots, dense[slots]
        docs, inverse = np.unique(all_docs, return_inverse=True)
        scores: F64 = np.bincount(inverse, weights=weights, minlength=len(docs)).astype(np.float64, copy=False)
        positive = scores > 0
        return docs[positive].astype(np.int64), scores[positive]

    def _pruned(self, entries: list[tuple[int, float, int]], k: int) -> tuple[I64, F64] | None:
        """The top-k candidates without scanning the postings of frequent terms, when that is exact.

        MaxScore in array passes. Query terms are split into "non-essential" ones (the most
        frequent, lowest idf) and "essential" ones; every document matching an essential term is a
        candidate and gets its exact score: each term's contribution (a non-essential term's found
        by `searchsorted` in its postings), summed in query-term order, so the floats equal
        `score_all`'s. A document matching only non-essential terms scores at most the sum of
        their bounds idf * (k1 + 1) (as tf / (tf + norm) < 1); when that sum is below the k-th
        candidate score, no such document can enter the top k, ties included; otherwise the other
        documents are scored on the non-essential terms alone (exact too: they match nothing
        else). The split starts with every term above `_PRUNE_FRACTION` of the slots
        non-essential; while fewer than k documents are candidates, the rarest of them moves to
        the essential side (at most `_PRUNE_TRIES` splits). None: score everything.
        """
        limit = _PRUNE_FRACTION * self._alive.n
        split = min(len(entries) - 1, sum(1 for _, _, d in entries if d > limit))
        if split <= 0:
            return None
        by_bound = sorted(range(len(entries)), key=lambda i: entries[i][1])
        postings = sum(d for _, _, d in entries)
        for _ in range(_PRUNE_TRIES):
            if split <= 0:
                return None
            non_essential = set(by_bound[:split])
            split -= 1
            essential = sum(entries[i][2] for i in range(len(entries)) if i not in non_essential)
            if essential * (1 + _LOOKUP_COST * len(non_essential)) > postings:
                return None  # too little to skip: scoring everything is cheaper than the lookups
            found = [
                self._live_docs(segment, term_id)
                for i, (term_id, _, _) in enumerate(entries)
                if i not in non_essential
                for segment in self._segments
            ]
            candidates = np.unique(np.concatenate(found))
            if len(candidates) < k:
                continue  # too few to bound anything: move the next rarest term to the essentials
            norms = self._norms()[candidates]
            total = np.zeros(len(candidates), dtype=np.float64)
            for term_id, idf, _ in entries:
                contribution = np.zeros(len(candidates), dtype=np.float64)
                for segment in self._segments:
                    hit = segment.postings(term_id)
                    if hit is None:
                        continue
                    docs, tfs = hit
                    at = np.minimum(np.searchsorted(docs, candidates), len(docs) - 1)
                    match = docs[at] == candidates
                    tf = tfs[at[match]].astype(np.float64)
                    contribution[match] = idf * (tf * (self.k1 + 1.0)) / (tf + norms[match])
                total += contribution  # + 0.0 where absent: exact, so the sum is score_all's
            kth = np.partition(total, len(total) - k)[len(total) - k]
            bound = sum(entries[i][1] * (self.k1 + 1.0) for i in non_essential)
            positive = total > 0
            kept: I64 = candidates[positive].astype(np.int64)
            total = total[positive]
            if bound * (1 + 1e-9) < kth:
                return kept, total
            # The bound did not hold: every other document matches only non-essential terms, so
            # scoring just those terms (in query order) gives their exact scores; the candidates
            # keep theirs. The work on the candidates is not lost.
            rest, rest_scores = self._score([entries[i] for i in sorted(non_essential)])
            outside = ~np.isin(rest, kept, assume_unique=True)
            return np.concatenate([kept, rest[outside]]), np.concatenate([total, rest_scores[outside]])
        return None

    def _live_docs(self, segment: _Segment, term_id: int) -> I32:
        hit = segment.postings(term_id)
        if hit is None:
            return np.zeros(0, dtype=np.int32)
        docs: I32 = hit[0]
        if segment.live < len(segment.slots):
            docs = docs[self._alive.view()[docs]]
        return docs

    def search(self, terms: Sequence[str], k: int) -> list[Scored[T]]:
        """The best `k` documents: score desc, then display path and start line ascending."""
        if k <= 0:
            return []
        entries = self._entries(terms)
        pruned = self._pruned(entries, k) if PRUNE else None
        docs, scores = pruned if pruned is not None else self._score(entries)
        if len(docs) > k:
            kth = np.partition(scores, len(scores) - k)[len(scores) - k]
            keep = scores >= kth
            docs, scores = docs[keep], scores[keep]
        ranked = sorted(
            zip(docs.tolist(), scores.tolist(), strict=True),
            key=lambda pair: (-pair[1], self._order[pair[0]]),
        )[:k]
        return [Scored(self._payload(slot), score) for slot, score in ranked]

    def _payload(self, slot: int) -> T:
        payload = self._payloads[slot]
        assert payload is not None, "a live slot always has its payload"
        return payload
