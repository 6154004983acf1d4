"""Immutable postings segments for the BM25 engine (CSR: per term, document slots and tfs).

A segment holds the postings of a batch of documents grouped by term: for each term a slice of
document slots and, per slot, the term's frequency in each field (one column per field).
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

IntArray = npt.NDArray[np.int64]

_DICT_ROWS = 4096


class Segment:
    """Postings of a batch of documents, grouped by term (CSR), and how many are still alive."""

    __slots__ = ("docs", "indptr", "live", "rows", "slots", "term_ids", "tfs")

    def __init__(self, term_ids: IntArray, slots: IntArray, tfs: IntArray, doc_slots: IntArray) -> None:
        """`term_ids[i]` occurs in document `slots[i]` with field frequencies `tfs[i]` (a row)."""
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
        """Document slots and their field frequencies (rows) for one term, or None."""
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
