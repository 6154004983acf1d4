"""Storage for the BM25 engine: growable arrays and immutable CSR postings segments.

A segment holds the postings of a contiguous range of document slots grouped by term (CSR): for
each term a slice of slots, ascending, and per slot the term's frequency in each field (one
column per field). Slots are int32; field frequencies take the narrowest unsigned type that holds
the segment's largest (one byte each almost always: tldr's largest is 168), as their integers are
all that scoring reads.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

I32 = npt.NDArray[np.int32]
Frequencies = npt.NDArray[np.uint8] | npt.NDArray[np.uint16] | npt.NDArray[np.int32]
"""Field frequencies, one row per posting: see `narrow`."""
I64 = npt.NDArray[np.int64]
IntArray = I64
Places = npt.NDArray[np.uint16] | npt.NDArray[np.int32]
"""A document's first-field terms as places in its run of the forward index (`slots.Slots.text`):
two bytes each, four for a document of more than 65,536 distinct terms."""

_DICT_ROWS = 4096
"""Segments with at most this many terms find a term's row through a dict; larger ones through a
dense array indexed by term id (one int32 per vocabulary entry, faster than hashing), unless
they hold fewer than one id in `_SPARSE`: then by bisection (a cold build's chunks, each a
fraction of the vocabulary, held 0.4 MB each that way, 8 MB for tldr's 19)."""
_SPARSE = 4


class Grow:
    """A numpy array that grows geometrically, by a quarter (appends are amortised O(1) per
    element, and at most a quarter of it is slack). Rows may be scalars or vectors (`width`)."""

    __slots__ = ("data", "n")

    def __init__(self, dtype: type, width: int | None = None, capacity: int = 256) -> None:
        self.data: npt.NDArray[Any] = np.zeros((capacity,) if width is None else (capacity, width), dtype=dtype)
        self.n = 0

    def extend(self, values: npt.ArrayLike) -> None:
        arr = np.asarray(values, dtype=self.data.dtype)
        need = self.n + len(arr)
        if need > len(self.data):
            # Geometric, by a quarter; but an extend larger than the array so far (a restored or
            # first-built root) gets a thirty-second more than it needs: enough for the small
            # updates after it, without a quarter of tldr's stored text (2.5 MB) held for nothing.
            bulk = len(arr) > len(self.data)
            capacity = (
                need + need // 32 if bulk else max(need + need // 4, len(self.data) + len(self.data) // 4)
            ) + 256
            grown = np.zeros((capacity, *self.data.shape[1:]), dtype=self.data.dtype)
            grown[: self.n] = self.data[: self.n]
            self.data = grown
        self.data[self.n : need] = arr
        self.n = need

    def view(self) -> npt.NDArray[Any]:
        return self.data[: self.n]

    def reset(self, values: npt.ArrayLike) -> None:
        arr = np.asarray(values, dtype=self.data.dtype)
        self.data = np.zeros((len(arr) + len(arr) // 4 + 256, *self.data.shape[1:]), dtype=self.data.dtype)
        self.data[: len(arr)] = arr
        self.n = len(arr)


class Segment:
    """CSR postings of a range of slots, and how many of its documents are still alive."""

    __slots__ = ("docs", "id", "indptr", "live", "rows", "slots", "term_ids", "tfs")

    def __init__(self, seg_id: int, term_ids: I32, indptr: I64, docs: I32, tfs: Frequencies, slots: I32) -> None:
        """Term `term_ids[r]` occurs in slots `docs[indptr[r]:indptr[r + 1]]` with field
        frequencies `tfs[...]` (one row each); `slots` lists every document of the segment,
        including those without any term."""
        self.id = seg_id
        self.term_ids, self.indptr, self.docs, self.slots = term_ids, indptr, docs, slots
        self.tfs = narrow(tfs)
        self.live = len(slots)
        self.rows: dict[int, int] | I32 | None
        """A term's row by term id: a dict, a dense array, or None (bisect `term_ids`)."""
        if len(term_ids) <= _DICT_ROWS:
            self.rows = dict(zip(term_ids.tolist(), range(len(term_ids)), strict=True))
        elif len(term_ids) * _SPARSE < int(term_ids[-1]) + 1:
            self.rows = None
        else:
            self.rows = np.full(int(term_ids[-1]) + 1, -1, dtype=np.int32)
            self.rows[term_ids] = np.arange(len(term_ids), dtype=np.int32)

    @classmethod
    def from_postings(cls, seg_id: int, terms: I32, docs: I32, tfs: Frequencies, slots: I32) -> Segment:
        """From postings in slot order (any term order within a slot): one stable sort by term
        keeps each term's slots ascending."""
        order = np.argsort(terms, kind="stable")
        return cls(seg_id, *csr(terms[order]), docs[order], tfs[order], slots)

    def row(self, term_id: int) -> int:
        """The term's row, or -1 when the segment does not have it."""
        if isinstance(self.rows, dict):
            return self.rows.get(term_id, -1)
        if self.rows is None:
            row = int(np.searchsorted(self.term_ids, term_id))
            return row if row < len(self.term_ids) and int(self.term_ids[row]) == term_id else -1
        return int(self.rows[term_id]) if term_id < len(self.rows) else -1

    def postings(self, term_id: int) -> tuple[I32, Frequencies] | None:
        """Slots and their field frequencies (rows) for one term, or None."""
        row = self.row(term_id)
        if row < 0:
            return None
        lo, hi = int(self.indptr[row]), int(self.indptr[row + 1])
        return self.docs[lo:hi], self.tfs[lo:hi]

    def posting_terms(self) -> I32:
        """The term of every posting (CSR expanded)."""
        return np.repeat(self.term_ids, np.diff(self.indptr))


def narrow(tfs: npt.NDArray[Any]) -> Frequencies:
    """Field frequencies in the narrowest of uint8, uint16 and int32 that holds them all (the same
    integers: a posting's share of the score is computed in float64 from them either way)."""
    top = int(tfs.max()) if tfs.size else 0
    dtype = np.uint8 if top <= 0xFF else np.uint16 if top <= 0xFFFF else np.int32
    narrowed: Frequencies = tfs if tfs.dtype == dtype else tfs.astype(dtype)
    return narrowed


def csr(sorted_terms: I32) -> tuple[I32, I64]:
    """Distinct terms and row pointers of postings already sorted by term."""
    if len(sorted_terms) == 0:
        return np.zeros(0, dtype=np.int32), np.zeros(1, dtype=np.int64)
    starts = run_starts(sorted_terms)
    return sorted_terms[starts], np.append(starts, len(sorted_terms)).astype(np.int64)


def is_new(sorted_keys: I32 | I64) -> npt.NDArray[np.bool_]:
    """Whether each key of a sorted array differs from the one before it (the first always does)."""
    new = np.empty(len(sorted_keys), dtype=np.bool_)
    if len(sorted_keys):
        new[0] = True
        np.not_equal(sorted_keys[1:], sorted_keys[:-1], out=new[1:])
    return new


def run_starts(sorted_keys: I32 | I64) -> I64:
    """Where each run of equal keys of a sorted array begins."""
    return np.flatnonzero(is_new(sorted_keys))


def gather(starts: I64, lengths: I64) -> I64:
    """The indices `starts[i] .. starts[i] + lengths[i] - 1` of every range, concatenated."""
    total = int(lengths.sum())
    return np.repeat(starts - (np.cumsum(lengths) - lengths), lengths) + np.arange(total)
