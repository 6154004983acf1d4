"""The persistent form of some groups of a postings store (`Packed`): how the persistent cache
moves a root's files, their documents and postings, from one index to another.

`pack` takes groups out of an index, self-contained (their own vocabulary, slots from 0), and
`restored` lays packed postings out as one new segment of an index that has mapped the packed
vocabulary to its own term ids; `Postings.pack` and `Postings.unpack` are the store's side of it.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

import numpy as np
import numpy.typing as npt

from retrieval.engine.segments import I32, I64, Frequencies, Segment, csr, gather, narrow
from retrieval.engine.slots import Slots
from retrieval.engine.vocabulary import Vocabulary

T = TypeVar("T")


@dataclass(frozen=True, slots=True, kw_only=True)
class Packed(Generic[T]):
    """Some groups of an index, self-contained: their documents in slot order (slots from 0) and
    their postings as CSR over their own vocabulary `words`."""

    groups: list[tuple[Hashable, int]]
    """(group, number of documents), in slot order."""
    payloads: Sequence[T]
    """A list, or `Rows` that make each when asked for (a restored entry's)."""
    orders: Sequence[tuple[str, int]]
    words: Sequence[str]
    indptr: I64
    """Postings of `words[r]`: `docs[indptr[r]:indptr[r + 1]]`, ascending."""
    docs: I32
    tfs: Frequencies
    """One row per posting, one column per field."""
    fwd: I32
    """The distinct terms (indices into `words`) of each document, in slot order..."""
    counts: I32
    """...`counts[s]` of them for document s."""
    lengths: I32
    """Field lengths, one row per document."""
    text: I32
    """The first field's terms (indices into `words`) in text order, document after document
    (`lengths[s, 0]` of them for document s)."""


def owned(a: npt.NDArray[Any]) -> npt.NDArray[Any]:
    """`a` itself if it owns its memory, else a copy of it."""
    return a if a.base is None else a.copy()


def pack(
    spans: Sequence[tuple[int, int, Hashable]],
    slots: Slots[T],
    segments: Sequence[Segment],
    vocab: Vocabulary,
    n_fields: int,
) -> Packed[T]:
    """The groups `spans` names ((first slot, count, group), by first slot) of an index with
    these slots, segments (ascending slot ranges) and vocabulary (terms in id order, from 0),
    self-contained, the groups in slot order. Each segment's postings are in (term, slot) order
    already and slots ascend from one segment to the next: one segment (the layout after a
    build) is kept as it is, several take one stable sort by term; terms are renamed through a
    mask, not searched (a cache write of tldr packs all of it, and its peak was the server's)."""
    mask = np.zeros(slots.alive.n, dtype=np.bool_)
    for first, count, _ in spans:
        mask[first : first + count] = True
    local = np.cumsum(mask, dtype=np.int32) - 1  # a kept slot's number in the pack
    terms_parts, docs_parts, tfs_parts = [], [], []
    for segment in segments:
        kept = mask[segment.docs]
        terms_parts.append(segment.posting_terms()[kept])
        docs_parts.append(local[segment.docs[kept]])
        tfs_parts.append(segment.tfs[kept])
    del local
    tfs: Frequencies
    if len(terms_parts) > 1:  # ties keep segment order, that is slot order
        terms = np.concatenate(terms_parts)
        order = np.argsort(terms, kind="stable")
        terms = terms[order]
        docs = np.concatenate(docs_parts)[order]
        tfs = narrow(np.concatenate(tfs_parts)[order])
    elif terms_parts:  # no copy of the one segment's arrays (each copy was the peak's)
        terms, docs, tfs = terms_parts[0], docs_parts[0], tfs_parts[0]
    else:
        terms, docs = np.zeros(0, dtype=np.int32), np.zeros(0, dtype=np.int32)
        tfs = np.zeros((0, n_fields), dtype=np.uint8)
    del terms_parts, docs_parts, tfs_parts
    used_terms = np.zeros(max(len(vocab), 1), dtype=np.bool_)
    used_terms[terms] = True
    used = np.flatnonzero(used_terms)
    renamed = np.cumsum(used_terms, dtype=np.int32) - 1  # a used term's number in the pack
    indptr = csr(renamed[terms])[1] if len(used) and len(terms) else np.zeros(1, dtype=np.int64)
    del terms
    kept_slots = np.flatnonzero(mask)
    # One at a time, each selection gone once renamed: together they were a cache write's peak.
    fwd = renamed[_rows(slots.fwd.view(), slots.fwd_len.view(), kept_slots, mask)]
    text = renamed[_rows(slots.text.view(), slots.length.view()[:, 0], kept_slots, mask)]
    return Packed(
        groups=[(g, n) for _, n, g in spans],
        payloads=[slots.payload(s) for s in kept_slots.tolist()],
        orders=[slots.order(s) for s in kept_slots.tolist()],
        words=vocab.terms(used),
        indptr=indptr,
        docs=docs.astype(np.int32, copy=False),
        tfs=tfs,
        fwd=fwd,
        counts=slots.fwd_len.view()[kept_slots].copy(),
        lengths=slots.length.view()[kept_slots].copy(),
        text=text,
    )


def restored(packed: Packed[T], ids: I32, first: int, seg_id: int) -> tuple[Segment, I32, I32]:
    """The packed postings as segment `seg_id` of an index where `ids[r]` is the term id of
    `packed.words[r]` and the packed documents take the slots from `first`; and their distinct
    terms and text in those term ids."""
    slots = np.arange(first, first + sum(count for _, count in packed.groups), dtype=np.int32)
    ascending = bool(np.all(ids[1:] > ids[:-1]))
    if ascending:  # the rows are in this index's term order already (an empty index)
        # Copies, not views: a view would keep the whole buffer the packed arrays were read
        # from alive (a cache entry: 74 MB for tldr, for 20 MB of postings).
        indptr, tfs = owned(packed.indptr), owned(packed.tfs)
        segment = Segment(seg_id, ids, indptr, packed.docs + np.int32(first), tfs, slots)
    else:
        by_id = np.argsort(ids, kind="stable")  # rows in this index's term order
        starts, lengths = packed.indptr[:-1][by_id], np.diff(packed.indptr)[by_id]
        at = gather(starts, lengths)
        segment = Segment(
            seg_id,
            ids[by_id],
            np.concatenate(([0], np.cumsum(lengths))).astype(np.int64),
            (packed.docs[at] + first).astype(np.int32),
            packed.tfs[at],
            slots,
        )
    # Into an empty index the packed term numbers are this index's own: nothing to map.
    same = len(ids) == 0 or (ascending and int(ids[0]) == 0 and int(ids[-1]) == len(ids) - 1)
    fwd, text = (packed.fwd, packed.text) if same else (ids[packed.fwd], ids[packed.text])
    return segment, fwd, text


def _rows(
    values: npt.NDArray[Any], lengths: npt.NDArray[Any], slots: npt.NDArray[Any], mask: npt.NDArray[Any]
) -> npt.NDArray[Any]:
    """The runs of `values` (one run of `lengths[i]` per slot, in slot order) of these `slots`
    (`mask` marks them): a view when they are consecutive slots, as one root's files are."""
    if len(slots) and int(slots[-1]) - int(slots[0]) + 1 == len(slots):
        first, last = int(slots[0]), int(slots[-1])
        start = int(lengths[:first].sum(dtype=np.int64))
        end = start + int(lengths[first : last + 1].sum(dtype=np.int64))
        run: npt.NDArray[Any] = values[start:end]
        return run
    picked: npt.NDArray[Any] = values[np.repeat(mask, lengths)]
    return picked
