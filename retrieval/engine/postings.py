"""The postings store under the BM25 engine: documents grouped by file, updatable exactly.

Postings live in immutable int32 CSR segments (per term: document slots and per-field term
frequencies). Each update (one saved file, or a whole corpus at start-up) becomes one segment, laid
out by one stable sort; removing a file marks its slots dead. Small segments merge linearly into
their neighbour, and when a quarter of the slots are dead, slots and vocabulary are renumbered.
N, document frequencies and per-field lengths are integers kept current on every change, so
scores computed from them (`retrieval.engine.index`) are those of a fresh build after any sequence of
changes. `pack`/`unpack` move some files' postings between indexes (the persistent cache).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass
from itertools import chain
from typing import Any, Generic, TypeVar

import numpy as np
import numpy.typing as npt

from retrieval.engine.memory import release_free_memory
from retrieval.engine.segments import (
    I32,
    I64,
    Frequencies,
    Grow,
    IntArray,
    Segment,
    csr,
    gather,
    is_new,
    narrow,
    run_starts,
)

T = TypeVar("T")

_MERGE_FACTOR = 2
"""Merge the newest segment into the one before while that one holds at most this many times as
many live documents: segment sizes then fall geometrically, so there are O(log N) segments and
each posting is merged O(log N) times over its life."""
_COMPACT_DEAD_FRACTION = 0.25
_ADD_CHUNK = 4096
"""Documents counted per vectorised pass while adding (bounds the scratch arrays)."""
_BULK_DOCS = 10_000
"""An update this large is a bulk build: afterwards, free memory goes back to the OS."""


def owned(a: npt.NDArray[Any]) -> npt.NDArray[Any]:
    """`a` itself if it owns its memory, else a copy of it."""
    return a if a.base is None else a.copy()


@dataclass(frozen=True, slots=True)
class Doc(Generic[T]):
    """One unit to index: its payload, its terms per field, and the key that breaks score ties."""

    payload: T
    fields: Sequence[Sequence[str]]
    """Terms of each field, in the index's field order (missing trailing fields are empty)."""
    order: tuple[str, int]
    """(display path, start line): ties break by score desc, then this, ascending."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Packed(Generic[T]):
    """Some groups of an index, self-contained: their documents in slot order (slots from 0) and
    their postings as CSR over their own vocabulary `words`."""

    groups: list[tuple[Hashable, int]]
    """(group, number of documents), in slot order."""
    payloads: list[T]
    orders: list[tuple[str, int]]
    words: list[str]
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


class Postings(Generic[T]):
    """Documents grouped by file (`group`), their postings, and the integers BM25 needs."""

    def __init__(self, n_fields: int = 1) -> None:
        self._n_fields = n_fields
        self.generation = 0
        self._vocab: defaultdict[str, int] = _new_vocab()
        """Term ids, in order of first sight; looking a missing term up gives it the next id."""
        self._df = Grow(np.int64, capacity=1024)
        self._payloads: list[T | None] = []
        self._order: list[tuple[str, int]] = []
        self._length = Grow(np.int32, width=n_fields)
        self._alive = Grow(np.bool_)
        self._seg_of = Grow(np.int32)
        self._fwd = Grow(np.int32, capacity=4096)
        """Forward index: the distinct terms of every slot, in slot order (to decrement df)."""
        self._fwd_ptr = Grow(np.int64)
        self._fwd_len = Grow(np.int32)
        self._text = Grow(np.int32, capacity=4096)
        """The first field's term ids of every slot in text order (`_length[s, 0]` of them from
        `_text_at[s]`): what proximity, copy detection and phrases read instead of tokenizing."""
        self._text_at = Grow(np.int64)
        self._groups: dict[Hashable, tuple[int, int]] = {}
        """Each group's (first slot, count): a group's documents hold contiguous slots."""
        self._segments: list[Segment] = []
        self._seg_ids = 0
        self._n = 0
        self._total_length = [0] * n_fields

    # --- size -------------------------------------------------------------------------------

    @property
    def n_docs(self) -> int:
        return self._n

    def avg_lengths(self) -> list[float]:
        return [total / self._n if self._n else 0.0 for total in self._total_length]

    @property
    def n_segments(self) -> int:
        return len(self._segments)

    @property
    def n_terms(self) -> int:
        """Vocabulary entries, including terms no live document has any more (until compaction)."""
        return len(self._vocab)

    @property
    def n_slots(self) -> int:
        """Document slots, including dead ones (until renumbering)."""
        return self._alive.n

    def df(self, term: str) -> int:
        term_id = self._vocab.get(term)
        return 0 if term_id is None else int(self._df.data[term_id])

    def groups(self) -> list[Hashable]:
        return list(self._groups)

    def group_size(self, group: Hashable) -> int:
        return self._groups.get(group, (0, 0))[1]

    def payloads(self, group: Hashable) -> list[T]:
        first, count = self._groups.get(group, (0, 0))
        return [p for p in self._payloads[first : first + count] if p is not None]

    # --- updates ----------------------------------------------------------------------------

    def replace(self, group: Hashable, docs: Sequence[Doc[T]]) -> None:
        """Make `group` hold exactly `docs` (none: the group is removed)."""
        self.update({group: docs})

    def remove(self, group: Hashable) -> None:
        self.update({group: ()})

    def update(self, changes: Mapping[Hashable, Sequence[Doc[T]]]) -> None:
        """Apply many group changes as one update: one new segment (a bulk build when the index
        is empty), one generation. A group mapped to no documents is removed."""
        for group in changes:
            self._remove(group)
        present = [(group, docs) for group, docs in changes.items() if docs]
        if present:
            self._add(present)
        self.generation += 1
        self._tidy()
        if sum(len(docs) for _, docs in present) >= _BULK_DOCS:
            release_free_memory()  # the build's scratch (counters, C arrays) back to the OS

    def _add(self, items: Sequence[tuple[Hashable, Sequence[Doc[T]]]]) -> None:
        """Index new groups as one segment. Vectorised, `_ADD_CHUNK` documents at a time (so the
        scratch arrays stay small): each field's terms are mapped to ids in one pass (in C), then
        one `np.unique` over (document, term) keys counts the term frequencies of every field. The
        integers are those a document-by-document count gives, so scores are unchanged."""
        first = slot = len(self._payloads)
        docs: list[Doc[T]] = []
        for group, group_docs in items:
            self._groups[group] = (slot, len(group_docs))
            slot += len(group_docs)
            docs.extend(group_docs)
        for doc in docs:
            if len(doc.fields) > self._n_fields or any(isinstance(f, str) for f in doc.fields):
                raise ValueError(f"a document needs at most {self._n_fields} fields, each a list of terms")
        parts = [self._count(docs[i : i + _ADD_CHUNK], first + i) for i in range(0, len(docs), _ADD_CHUNK)]
        self._payloads.extend(doc.payload for doc in docs)
        self._order.extend(doc.order for doc in docs)
        terms = np.concatenate([p[0] for p in parts]) if parts else np.zeros(0, dtype=np.int32)
        posting_slots = np.concatenate([p[1] for p in parts]) if parts else np.zeros(0, dtype=np.int32)
        tfs = np.concatenate([p[2] for p in parts]) if parts else np.zeros((0, self._n_fields), dtype=np.int32)
        counts = np.concatenate([p[3] for p in parts]) if parts else np.zeros(0, dtype=np.int64)
        lengths = np.concatenate([p[4] for p in parts]) if parts else np.zeros((0, self._n_fields), dtype=np.int32)
        text = np.concatenate([p[5] for p in parts]) if parts else np.zeros(0, dtype=np.int32)
        slots = np.arange(first, slot, dtype=np.int32)
        segment = Segment.from_postings(self._new_id(), terms, posting_slots, tfs, slots)
        self._append(segment, terms, counts, lengths, text)

    def _count(self, docs: Sequence[Doc[T]], first: int) -> tuple[I32, I32, I32, I64, I32, I32]:
        """Postings of consecutive documents from slot `first`, in slot then term order: terms,
        slots, per-field frequencies; per document its number of distinct terms and lengths; and
        the first field's term ids in text order."""
        n_fields, n_docs = self._n_fields, len(docs)
        term_id = self._vocab.__getitem__  # a missing term gets the next id, in C
        lengths = np.zeros((n_docs, n_fields), dtype=np.int32)
        ids: list[I64] = []
        for f in range(n_fields):
            per_doc = [doc.fields[f] if f < len(doc.fields) else () for doc in docs]
            lengths[:, f] = np.fromiter(map(len, per_doc), dtype=np.int32, count=n_docs)
            ids.append(
                np.fromiter(map(term_id, chain.from_iterable(per_doc)), dtype=np.int64, count=int(lengths[:, f].sum()))
            )
        n_terms = max(len(self._vocab), 1)
        doc_index = np.arange(n_docs, dtype=np.int64)
        # One key per token, (document, term, field); sorted, each run of equal keys is one field
        # frequency (a plain sort: no permutation is needed, equal keys are interchangeable).
        keys = np.concatenate(
            [(np.repeat(doc_index, lengths[:, f]) * n_terms + ids[f]) * n_fields + f for f in range(n_fields)]
        )
        keys.sort()
        starts = run_starts(keys)
        run_keys = keys[starts]
        runs = np.diff(np.append(starts, len(keys)))
        pairs = run_keys // n_fields  # document * n_terms + term
        new_pair = is_new(pairs)
        unique = pairs[new_pair]  # by document, then term
        tfs = np.zeros((len(unique), n_fields), dtype=np.int32)
        tfs[np.cumsum(new_pair) - 1, run_keys % n_fields] = runs
        posting_docs = unique // n_terms
        counts = np.bincount(posting_docs, minlength=n_docs).astype(np.int64)
        terms = (unique % n_terms).astype(np.int32)
        return terms, (posting_docs + first).astype(np.int32), tfs, counts, lengths, ids[0].astype(np.int32)

    def _append(self, segment: Segment, fwd: I32, counts: I64, lengths: I32, text: I32) -> None:
        """Account for a new segment of new slots: df, forward index, text, lengths, liveness."""
        n_new = len(segment.slots)
        if len(self._vocab) > self._df.n:
            self._df.extend(np.zeros(len(self._vocab) - self._df.n, dtype=np.int64))
        self._df.data[: self._df.n] += np.bincount(fwd, minlength=self._df.n)
        self._fwd_ptr.extend(self._fwd.n + np.cumsum(counts) - counts)
        self._fwd_len.extend(counts)
        self._fwd.extend(fwd)
        body = lengths[:, 0].astype(np.int64)
        self._text_at.extend(self._text.n + np.cumsum(body) - body)
        self._text.extend(text)
        self._segments.append(segment)
        self._seg_of.extend(np.full(n_new, segment.id, dtype=np.int32))
        self._length.extend(lengths)
        self._alive.extend(np.ones(n_new, dtype=np.bool_))
        self._n += n_new
        for f, total in enumerate(lengths.sum(axis=0, dtype=np.int64).tolist()):
            self._total_length[f] += total

    # --- packing (the persistent cache) -------------------------------------------------------

    def pack(self, groups: Sequence[Hashable]) -> Packed[T]:
        """These groups' documents and postings, self-contained (own vocabulary, slots from 0, the
        groups in slot order), to be restored with `unpack` into this or another index with the
        same fields. Each segment's postings are in (term, slot) order already and slots ascend
        from one segment to the next: one segment (the layout after a build) is kept as it is,
        several take one stable sort by term; terms are renamed through a mask, not searched (a
        cache write of tldr packs all of it, and its peak was the server's)."""
        spans = sorted((self._groups[g][0], self._groups[g][1], g) for g in groups if g in self._groups)
        mask = np.zeros(self._alive.n, dtype=np.bool_)
        for first, count, _ in spans:
            mask[first : first + count] = True
        local = np.cumsum(mask, dtype=np.int32) - 1  # a kept slot's number in the pack
        terms_parts, docs_parts, tfs_parts = [], [], []
        for segment in self._segments:
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
            tfs = np.zeros((0, self._n_fields), dtype=np.uint8)
        del terms_parts, docs_parts, tfs_parts
        used_terms = np.zeros(max(len(self._vocab), 1), dtype=np.bool_)
        used_terms[terms] = True
        used = np.flatnonzero(used_terms)
        renamed = np.cumsum(used_terms, dtype=np.int32) - 1  # a used term's number in the pack
        indptr = csr(renamed[terms])[1] if len(used) and len(terms) else np.zeros(1, dtype=np.int64)
        del terms
        words = list(self._vocab)
        slots = np.flatnonzero(mask)
        # One at a time, each selection gone once renamed: together they were a cache write's peak.
        fwd = renamed[_rows(self._fwd.view(), self._fwd_len.view(), slots, mask)]
        text = renamed[_rows(self._text.view(), self._length.view()[:, 0], slots, mask)]
        return Packed(
            groups=[(g, n) for _, n, g in spans],
            payloads=[self._payload(s) for s in slots.tolist()],
            orders=[self._order[s] for s in slots.tolist()],
            words=[words[t] for t in used.tolist()],
            indptr=indptr,
            docs=docs.astype(np.int32, copy=False),
            tfs=tfs,
            fwd=fwd,
            counts=self._fwd_len.view()[slots].copy(),
            lengths=self._length.view()[slots].copy(),
            text=text,
        )

    def unpack(self, packed: Packed[T]) -> None:
        """Add packed groups (none of them may be here already) as one segment, one generation."""
        if packed.tfs.ndim != 2 or packed.tfs.shape[1] != self._n_fields:
            raise ValueError(f"packed postings have {packed.tfs.shape[1:]} fields; this index has {self._n_fields}")
        if any(g in self._groups for g, _ in packed.groups):
            raise ValueError("unpack adds groups; remove the ones it replaces first")
        first = slot = len(self._payloads)
        for group, count in packed.groups:
            self._groups[group] = (slot, count)
            slot += count
        self._payloads.extend(packed.payloads)
        self._order.extend(packed.orders)
        ids = np.fromiter(map(self._vocab.__getitem__, packed.words), dtype=np.int32, count=len(packed.words))
        slots = np.arange(first, slot, dtype=np.int32)
        ascending = bool(np.all(ids[1:] > ids[:-1]))
        if ascending:  # the rows are in this index's term order already (an empty index)
            # Copies, not views: a view would keep the whole buffer the packed arrays were read
            # from alive (a cache entry: 74 MB for tldr, for 20 MB of postings).
            indptr, tfs = owned(packed.indptr), owned(packed.tfs)
            segment = Segment(self._new_id(), ids, indptr, packed.docs + np.int32(first), tfs, slots)
        else:
            by_id = np.argsort(ids, kind="stable")  # rows in this index's term order
            starts, lengths = packed.indptr[:-1][by_id], np.diff(packed.indptr)[by_id]
            at = gather(starts, lengths)
            segment = Segment(
                self._new_id(),
                ids[by_id],
                np.concatenate(([0], np.cumsum(lengths))).astype(np.int64),
                (packed.docs[at] + first).astype(np.int32),
                packed.tfs[at],
                slots,
            )
        # Into an empty index the packed term numbers are this index's own: nothing to map.
        same = len(ids) == 0 or (ascending and int(ids[0]) == 0 and int(ids[-1]) == len(ids) - 1)
        fwd, text = (packed.fwd, packed.text) if same else (ids[packed.fwd], ids[packed.text])
        self._append(segment, fwd, packed.counts.astype(np.int64), packed.lengths, text)
        self.generation += 1
        # No merge: a restored root is one large segment, and merging a small one before it would
        # copy all of its postings for nothing (a later small update never merges into it either).
        self._tidy(merge=False)

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
        terms = self._fwd.view()[gather(self._fwd_ptr.view()[slots], self._fwd_len.view()[slots].astype(np.int64))]
        np.subtract.at(self._df.data, terms, 1)
        by_segment = Counter(self._seg_of.view()[slots].tolist())
        for segment in self._segments:
            segment.live -= by_segment.get(segment.id, 0)
        alive[slots] = False
        self._payloads[first : first + count] = [None] * count
        self._n -= count
        for f, total in enumerate(self._length.view()[slots].sum(axis=0, dtype=np.int64).tolist()):
            self._total_length[f] -= total

    def _tidy(self, merge: bool = True) -> None:
        """Drop dead segments, merge small ones, renumber when much is dead.

        Only the layout changes: scores depend on integers that none of this touches.
        """
        self._segments = [s for s in self._segments if s.live]
        dead = len(self._payloads) - self._n
        if dead > _COMPACT_DEAD_FRACTION * max(self._n, 256):
            self._renumber()
        while (
            merge
            and len(self._segments) >= 2
            and (
                self._segments[-2].live <= _MERGE_FACTOR * self._segments[-1].live
                # A segment holding a quarter of the corpus or more is left alone (no latency
                # spikes); renumbering compacts it once enough of it is dead.
                and 4 * self._segments[-2].live < self._n
            )
        ):
            newer = self._segments.pop()
            self._segments[-1] = self._merge(self._segments[-1], newer)

    def merge_all(self) -> None:
        """Merge every segment into one: the layout of a bulk build. A root indexed in chunks (so
        that it answers while it is read) ends with several, and a query pays per segment (about
        2.5x on tldr's windows for 7 segments against 1). Only the layout changes; a new
        generation all the same, so nothing keyed by segment outlives it."""
        if len(self._segments) < 2:
            return
        # Segments hold ascending slot ranges: concatenated, the postings are in slot order, and
        # one stable sort by term lays them out as a bulk build does (pairwise merges would copy
        # the growing segment once per segment).
        parts = [self._live_postings(s) for s in self._segments]
        terms = np.concatenate([p[0] for p in parts])
        order = np.argsort(terms, kind="stable")
        docs = np.concatenate([p[1] for p in parts])[order]
        tfs = np.concatenate([p[2] for p in parts])[order]
        alive = self._alive.view()
        slots = np.concatenate([s.slots[alive[s.slots]] for s in self._segments])
        merged = Segment(self._new_id(), *csr(terms[order]), docs, tfs, slots)
        self._seg_of.data[slots] = merged.id
        self._segments = [merged]
        self.generation += 1

    def _live_postings(self, segment: Segment) -> tuple[I32, I32, Frequencies]:
        terms, docs, tfs = segment.posting_terms(), segment.docs, segment.tfs
        if segment.live < len(segment.slots):
            keep = self._alive.view()[docs]
            terms, docs, tfs = terms[keep], docs[keep], tfs[keep]
        return terms, docs, tfs

    def _merge(self, older: Segment, newer: Segment) -> Segment:
        """Every slot of `older` is below every slot of `newer`, so a linear merge (two
        `searchsorted`) keeps each term's slots ascending."""
        a_terms, a_docs, a_tfs = self._live_postings(older)
        b_terms, b_docs, b_tfs = self._live_postings(newer)
        n = len(a_terms) + len(b_terms)
        dest_a = np.arange(len(a_terms)) + np.searchsorted(b_terms, a_terms, side="left")
        dest_b = np.arange(len(b_terms)) + np.searchsorted(a_terms, b_terms, side="right")
        terms = np.empty(n, dtype=np.int32)
        docs = np.empty(n, dtype=np.int32)
        tfs = np.empty((n, self._n_fields), dtype=np.result_type(a_tfs, b_tfs))
        terms[dest_a], docs[dest_a], tfs[dest_a] = a_terms, a_docs, a_tfs
        terms[dest_b], docs[dest_b], tfs[dest_b] = b_terms, b_docs, b_tfs
        alive = self._alive.view()
        slots = np.concatenate([older.slots[alive[older.slots]], newer.slots[alive[newer.slots]]])
        merged = Segment(self._new_id(), *csr(terms), docs, tfs, slots)
        self._seg_of.data[slots] = merged.id
        return merged

    def _renumber(self) -> None:
        """Drop dead slots and the terms no live document has, so memory follows the live corpus.

        Ids keep their relative order, so every segment stays sorted without a sort.
        """
        alive = self._alive.view()
        live = np.flatnonzero(alive)
        new_slot = np.full(len(alive), -1, dtype=np.int64)
        new_slot[live] = np.arange(len(live))
        df = self._df.view()
        kept_terms = np.flatnonzero(df > 0)
        new_term = np.full(len(df), -1, dtype=np.int32)
        new_term[kept_terms] = np.arange(len(kept_terms), dtype=np.int32)
        words = list(self._vocab)
        self._vocab = _new_vocab()
        self._vocab.update(zip([words[i] for i in kept_terms.tolist()], range(len(kept_terms)), strict=True))
        self._df.reset(df[kept_terms])
        live_list = live.tolist()
        self._payloads = [self._payloads[i] for i in live_list]
        self._order = [self._order[i] for i in live_list]
        text = self._text.view()[self._text_of(live)]
        body = self._length.view()[live, 0].astype(np.int64)
        self._text.reset(new_term[text])
        self._text_at.reset(np.cumsum(body) - body)
        self._length.reset(self._length.view()[live])
        self._groups = {g: (int(new_slot[first]), count) for g, (first, count) in self._groups.items()}
        lengths = self._fwd_len.view()[live].astype(np.int64)
        self._fwd.reset(new_term[self._fwd.view()[gather(self._fwd_ptr.view()[live], lengths)]])
        self._fwd_ptr.reset(np.cumsum(lengths) - lengths)
        self._fwd_len.reset(lengths)
        seg_of = np.zeros(len(live), dtype=np.int32)
        renumbered: list[Segment] = []
        for segment in self._segments:
            terms, docs, tfs = self._live_postings(segment)
            slots = new_slot[segment.slots[alive[segment.slots]]].astype(np.int32)
            fresh = Segment(self._new_id(), *csr(new_term[terms]), new_slot[docs].astype(np.int32), tfs, slots)
            seg_of[slots] = fresh.id
            renumbered.append(fresh)
        self._segments = renumbered
        self._seg_of.reset(seg_of)
        self._alive.reset(np.ones(len(live), dtype=np.bool_))

    # --- text ---------------------------------------------------------------------------------

    def _text_of(self, slots: IntArray) -> I64:
        """Indices into `_text` of these slots' first-field terms, slot after slot."""
        return gather(self._text_at.view()[slots], self._length.view()[slots, 0].astype(np.int64))

    def term_id(self, term: str) -> int | None:
        """The term's id in this generation's vocabulary (None: no document ever had it)."""
        return self._vocab.get(term)

    def text(self, slot: int) -> I32:
        """The first field's term ids of a live slot, in text order (ids valid until the next update)."""
        at = int(self._text_at.data[slot])
        return self._text.data[at : at + int(self._length.data[slot, 0])]

    def _payload(self, slot: int) -> T:
        payload = self._payloads[slot]
        assert payload is not None, "a live slot always has its payload"
        return payload


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


def _new_vocab() -> defaultdict[str, int]:
    """A term -> id map where looking up a missing term inserts it with the next id (its size
    before insertion), all in C."""
    vocab: defaultdict[str, int] = defaultdict()
    vocab.default_factory = vocab.__len__
    return vocab
