"""Segment upkeep for the postings store: when and how segments are merged, and how their slots
and terms are renumbered once much of the index is dead.

Only the layout changes: every live slot keeps the same postings (terms and field frequencies),
so scores, which depend on integers none of this touches, are unchanged. The functions take the
segments and the slots' liveness (`alive[s]`) and return new segments; the caller records which
segment holds each slot (a new segment's `slots`) and keeps the list of segments.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import numpy.typing as npt

from retrieval.engine.segments import I32, I64, Frequencies, Segment, csr, gather

Alive = npt.NDArray[np.bool_]

_MERGE_FACTOR = 2
"""Merge the newest segment into the one before while that one holds at most this many times as
many live documents: segment sizes then fall geometrically, so there are O(log N) segments and
each posting is merged O(log N) times over its life."""
_COMPACT_DEAD_FRACTION = 0.25


def needs_renumbering(n_slots: int, n_live: int) -> bool:
    """Whether so many slots are dead (a quarter of the live ones, or more) that slots and
    vocabulary should be renumbered, so that memory follows the live corpus."""
    return n_slots - n_live > _COMPACT_DEAD_FRACTION * max(n_live, 256)


def merges_next(segments: Sequence[Segment], n_live: int) -> bool:
    """Whether the newest segment should merge into the one before it (see `_MERGE_FACTOR`)."""
    return len(segments) >= 2 and (
        segments[-2].live <= _MERGE_FACTOR * segments[-1].live
        # A segment holding a quarter of the corpus or more is left alone (no latency spikes);
        # renumbering compacts it once enough of it is dead.
        and 4 * segments[-2].live < n_live
    )


def live_postings(segment: Segment, alive: Alive) -> tuple[I32, I32, Frequencies]:
    """The segment's postings of live slots (terms, slots, field frequencies), in its order."""
    terms, docs, tfs = segment.posting_terms(), segment.docs, segment.tfs
    if segment.live < len(segment.slots):
        keep = alive[docs]
        terms, docs, tfs = terms[keep], docs[keep], tfs[keep]
    return terms, docs, tfs


def merge(older: Segment, newer: Segment, alive: Alive, seg_id: int) -> Segment:
    """The live postings of two segments as one. Every slot of `older` is below every slot of
    `newer`, so a linear merge (two `searchsorted`) keeps each term's slots ascending."""
    a_terms, a_docs, a_tfs = live_postings(older, alive)
    b_terms, b_docs, b_tfs = live_postings(newer, alive)
    n = len(a_terms) + len(b_terms)
    dest_a = np.arange(len(a_terms)) + np.searchsorted(b_terms, a_terms, side="left")
    dest_b = np.arange(len(b_terms)) + np.searchsorted(a_terms, b_terms, side="right")
    terms = np.empty(n, dtype=np.int32)
    docs = np.empty(n, dtype=np.int32)
    tfs = np.empty((n, a_tfs.shape[1]), dtype=np.result_type(a_tfs, b_tfs))
    terms[dest_a], docs[dest_a], tfs[dest_a] = a_terms, a_docs, a_tfs
    terms[dest_b], docs[dest_b], tfs[dest_b] = b_terms, b_docs, b_tfs
    slots = np.concatenate([older.slots[alive[older.slots]], newer.slots[alive[newer.slots]]])
    return Segment(seg_id, *csr(terms), docs, tfs, slots)


def merge_all(segments: Sequence[Segment], alive: Alive, seg_id: int) -> Segment:
    """The live postings of every segment (in slot order, as they are kept) as one: the layout
    of a bulk build. Segments hold ascending slot ranges, so a term's postings are its runs in
    each segment, one after the other: each run is copied straight to its place (a cursor per
    term), with no sort (one stable sort of all postings by term made six arrays the size of all
    of them: tldr's cold build peaked there, 35 MB over the index)."""
    kept = [_live_rows(s, alive) for s in segments]
    n_terms = max((int(s.term_ids[-1]) + 1 for s in segments if len(s.term_ids)), default=0)
    counts = np.zeros(n_terms, dtype=np.int64)
    for segment, (rows, _) in zip(segments, kept, strict=True):
        counts[segment.term_ids] += np.diff(rows)  # a segment's term ids are unique
    term_ids = np.flatnonzero(counts).astype(np.int32)
    indptr = np.zeros(len(term_ids) + 1, dtype=np.int64)
    np.cumsum(counts[term_ids], out=indptr[1:])
    cursor = np.zeros(n_terms, dtype=np.int64)
    cursor[term_ids] = indptr[:-1]
    total = int(indptr[-1])
    width = segments[0].tfs.shape[1] if segments else 1
    docs = np.empty(total, dtype=np.int32)
    tfs = np.empty((total, width), dtype=np.result_type(*(s.tfs for s in segments)) if segments else np.uint8)
    for segment, (rows, keep) in zip(segments, kept, strict=True):
        lengths = np.diff(rows)
        to = gather(cursor[segment.term_ids], lengths)
        docs[to] = segment.docs if keep is None else segment.docs[keep]
        tfs[to] = segment.tfs if keep is None else segment.tfs[keep]
        cursor[segment.term_ids] += lengths
    slots = np.concatenate([s.slots[alive[s.slots]] for s in segments])
    return Segment(seg_id, term_ids, indptr, docs, tfs, slots)


def _live_rows(segment: Segment, alive: Alive) -> tuple[I64, npt.NDArray[np.bool_] | None]:
    """The segment's row pointers counting live slots only, and which postings those are (None:
    every one)."""
    if segment.live == len(segment.slots):
        return segment.indptr, None
    keep = alive[segment.docs]
    live = np.zeros(len(keep) + 1, dtype=np.int64)  # live postings before each one
    np.cumsum(keep, out=live[1:])
    return live[segment.indptr], keep


def renumbered(
    segments: Sequence[Segment],
    alive: Alive,
    new_slot: I64,
    new_term: I32,
    n_live: int,
    new_id: Callable[[], int],
) -> tuple[list[Segment], I32]:
    """The segments over renumbered slots and terms (`new_slot[s]`, from 0 to `n_live - 1` for
    the live slots, and `new_term[t]`; both keep their relative order, so every segment stays
    sorted without a sort), each with a fresh id from `new_id`, and the id of the segment that
    holds each renumbered slot."""
    seg_of = np.zeros(n_live, dtype=np.int32)
    fresh_segments: list[Segment] = []
    for segment in segments:
        terms, docs, tfs = live_postings(segment, alive)
        slots = new_slot[segment.slots[alive[segment.slots]]].astype(np.int32)
        fresh = Segment(new_id(), *csr(new_term[terms]), new_slot[docs].astype(np.int32), tfs, slots)
        seg_of[slots] = fresh.id
        fresh_segments.append(fresh)
    return fresh_segments, seg_of
