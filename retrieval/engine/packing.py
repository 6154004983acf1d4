"""The persistent form of some groups of a postings store (`Packed`): how the persistent cache
moves a root's files, their documents and postings, from one index to another.

`pack` takes groups out of an index, self-contained (their own vocabulary, slots from 0), and
`restored` lays packed postings out as one new segment of an index that has mapped the packed
vocabulary to its own term ids; `Postings.pack` and `Postings.unpack` are the store's side of it.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Generic, TypeVar, overload

import numpy as np
import numpy.typing as npt

from retrieval.engine.segments import I32, I64, Frequencies, Places, Segment, csr, gather, narrow
from retrieval.engine.slots import Slots
from retrieval.engine.vocabulary import Vocabulary

T = TypeVar("T")


@dataclass(frozen=True, slots=True, kw_only=True)
class Packed(Generic[T]):
    """Some groups of an index, self-contained: their documents in slot order (slots from 0) and
    their postings as CSR over their own vocabulary `words`."""

    groups: Sequence[tuple[Hashable, int]]
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
    text: Places
    """The first field's terms in text order, each as its place in the document's run of `fwd`,
    document after document (`lengths[s, 0]` of them for document s)."""


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
    self-contained, the groups in slot order. The payloads and tie-break keys are made as they
    are read; the arrays are views of the index's own when they can be (`_whole`), so a pack
    is read before the index changes (under its write lock, as the cache and the workers do)."""
    mask = np.zeros(slots.alive.n, dtype=np.bool_)
    for first, count, _ in spans:
        mask[first : first + count] = True
    kept_slots = np.flatnonzero(mask)
    whole = _whole(segments, kept_slots, len(vocab))
    if whole is not None:  # the whole index, one segment, every term used (after a build)
        indptr, docs, tfs = whole.indptr, whole.docs, whole.tfs
        fwd = _rows(slots.fwd.view(), slots.fwd_len.view(), kept_slots, mask)
        used = np.arange(len(vocab), dtype=np.int64)
    else:
        indptr, docs, tfs, used, renamed = _postings(segments, mask, len(vocab), n_fields)
        fwd = renamed[_rows(slots.fwd.view(), slots.fwd_len.view(), kept_slots, mask)]
    text = _rows(slots.text.view(), slots.length.view()[:, 0], kept_slots, mask)  # places: no renaming
    return Packed(
        groups=[(g, n) for _, n, g in spans],
        payloads=_Picked(slots.payload, kept_slots),
        orders=_Picked(slots.order, kept_slots),
        words=vocab.terms(used),
        indptr=indptr,
        docs=docs.astype(np.int32, copy=False),
        tfs=tfs,
        fwd=fwd,
        counts=slots.fwd_len.view()[kept_slots].copy(),
        lengths=slots.length.view()[kept_slots].copy(),
        text=text,
    )


def _whole(segments: Sequence[Segment], kept: npt.NDArray[np.int64], n_terms: int) -> Segment | None:
    """The one segment, when it holds exactly the packed slots, numbered from 0, and every term of
    the vocabulary: then its arrays and the slots' are the pack's as they are, not copies (a cache
    write of a freshly built tldr made six copies of 5-10 MB each, the server's peak)."""
    if len(segments) != 1 or len(kept) == 0:
        return None
    segment = segments[0]
    if len(segment.slots) != len(kept) or int(kept[-1]) != len(kept) - 1:
        return None  # kept is ascending and unique: 0 .. n - 1 exactly
    if not np.array_equal(segment.slots, kept) or len(segment.term_ids) != n_terms:
        return None
    if n_terms and (int(segment.term_ids[0]) != 0 or int(segment.term_ids[-1]) != n_terms - 1):
        return None  # term ids ascend, unique: 0 .. n_terms - 1 exactly
    return segment


def _postings(
    segments: Sequence[Segment], mask: npt.NDArray[np.bool_], n_terms: int, n_fields: int
) -> tuple[I64, I32, Frequencies, npt.NDArray[np.int64], I32]:
    """The postings of the `mask`ed slots, over their own terms and slots from 0: row pointers,
    documents, frequencies, the terms used (ascending) and the map to their numbers in the pack.
    Each segment's postings are in (term, slot) order already and slots ascend from one segment
    to the next: one segment is kept as it is, several take one stable sort by term; terms are
    renamed through a mask, not searched (a cache write of tldr packs all of it)."""
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
    used_terms = np.zeros(max(n_terms, 1), dtype=np.bool_)
    used_terms[terms] = True
    used = np.flatnonzero(used_terms)
    renamed = np.cumsum(used_terms, dtype=np.int32) - 1  # a used term's number in the pack
    indptr = csr(renamed[terms])[1] if len(used) and len(terms) else np.zeros(1, dtype=np.int64)
    return indptr, docs, tfs, used, renamed


class _Picked(Sequence[T]):
    """What `get` gives for each of these slots, made when asked for: a pack is read once, in
    order, by whoever writes it (tldr's 38.5k units and their files, made all at once, were
    30 MB of a cache write's peak)."""

    __slots__ = ("_get", "_slots")

    def __init__(self, get: Callable[[int], T], slots: npt.NDArray[np.int64]) -> None:
        self._get, self._slots = get, slots

    def __len__(self) -> int:
        return len(self._slots)

    @overload
    def __getitem__(self, i: int) -> T: ...
    @overload
    def __getitem__(self, i: slice) -> list[T]: ...
    def __getitem__(self, i: int | slice) -> T | list[T]:
        if isinstance(i, slice):
            return [self._get(s) for s in self._slots[i].tolist()]
        return self._get(int(self._slots[i]))

    def __iter__(self) -> Iterator[T]:
        return map(self._get, self._slots.tolist())


def restored(packed: Packed[T], ids: I32, first: int, seg_id: int) -> tuple[Segment, I32, Places]:
    """The packed postings as segment `seg_id` of an index where `ids[r]` is the term id of
    `packed.words[r]` and the packed documents take the slots from `first`; their distinct terms
    in those term ids, and their text (places among those, which no term id changes)."""
    slots = np.arange(first, first + len(packed.lengths), dtype=np.int32)  # one row per document
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
    return segment, packed.fwd if same else ids[packed.fwd], packed.text


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
