"""The postings store under the BM25 engine: documents grouped by file, updatable exactly.

Postings live in immutable int32 CSR segments (per term: document slots and per-field term
frequencies). Each update (one saved file, or a whole corpus at start-up) becomes one segment, laid
out by one stable sort; removing a file marks its slots dead. Small segments merge linearly into
their neighbour, and when a quarter of the slots are dead, slots and vocabulary are renumbered
(`retrieval.engine.upkeep`). N, document frequencies and per-field lengths are integers kept
current on every change, so scores computed from them (`retrieval.engine.index`) are those of a
fresh build after any sequence of changes. What each slot holds besides its postings is kept by
`retrieval.engine.slots`; `pack`/`unpack` move some files' postings between indexes (the
persistent cache, `retrieval.engine.packing`).
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from itertools import chain
from typing import Generic, TypeVar

import numpy as np

from retrieval.engine import packing, upkeep
from retrieval.engine.memory import release_free_memory
from retrieval.engine.packing import Packed
from retrieval.engine.segments import I32, I64, Grow, Places, Segment, is_new, run_starts
from retrieval.engine.slots import Slots, pair_columns
from retrieval.engine.vocabulary import Vocabulary

T = TypeVar("T")

_ADD_CHUNK = 4096
"""Documents counted per vectorised pass while adding (bounds the scratch arrays)."""
_BULK_DOCS = 10_000
"""An update this large is a bulk build: afterwards, free memory goes back to the OS."""


@dataclass(frozen=True, slots=True)
class Doc(Generic[T]):
    """One unit to index: its payload, its terms per field, and the key that breaks score ties."""

    payload: T
    fields: Sequence[Sequence[str]]
    """Terms of each field, in the index's field order (missing trailing fields are empty)."""
    order: tuple[str, int]
    """(display path, start line): ties break by score desc, then this, ascending."""


class Postings(Generic[T]):
    """Documents grouped by file (`group`), their postings, and the integers BM25 needs."""

    def __init__(self, n_fields: int = 1) -> None:
        self._n_fields = n_fields
        self.generation = 0
        self._vocab = Vocabulary()
        """Term ids, in order of first sight; looking a missing term up gives it the next id."""
        self._df = Grow(np.int64, capacity=1024)
        self._slots: Slots[T] = Slots(n_fields)
        """Everything kept per document slot besides its postings (payloads, lengths, liveness,
        segment, forward index, text)."""
        self._groups: dict[Hashable, int] = {}
        """Each group's first slot and number of slots (a group's documents hold contiguous
        slots), as one integer (`_span`): a tuple of two took 64 bytes more a group (tldr's 38k
        files: 2.5 MB)."""
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
        return self._slots.alive.n

    def df(self, term: str) -> int:
        term_id = self._vocab.get(term)
        return 0 if term_id is None else int(self._df.data[term_id])

    def groups(self) -> list[Hashable]:
        return list(self._groups)

    def group_size(self, group: Hashable) -> int:
        return _span(self._groups.get(group, 0))[1]

    def span(self, group: Hashable) -> tuple[int, int]:
        """The group's first slot and number of slots ((0, 0): no such group)."""
        return _span(self._groups.get(group, 0))

    def payloads(self, group: Hashable) -> list[T]:
        first, count = self.span(group)
        return self._slots.live_payloads(first, count)

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
            self._vocab = self._vocab.frozen()  # its terms out of the dictionary
            release_free_memory()  # the build's scratch (counters, C arrays) back to the OS

    def _add(self, items: Sequence[tuple[Hashable, Sequence[Doc[T]]]]) -> None:
        """Index new groups as one segment. Vectorised, `_ADD_CHUNK` documents at a time (so the
        scratch arrays stay small): each field's terms are mapped to ids in one pass (in C), then
        one `np.unique` over (document, term) keys counts the term frequencies of every field. The
        integers are those a document-by-document count gives, so scores are unchanged."""
        first = slot = self._slots.n
        docs: list[Doc[T]] = []
        for group, group_docs in items:
            self._groups[group] = _spanning(slot, len(group_docs))
            slot += len(group_docs)
            docs.extend(group_docs)
        for doc in docs:
            if len(doc.fields) > self._n_fields or any(isinstance(f, str) for f in doc.fields):
                raise ValueError(f"a document needs at most {self._n_fields} fields, each a list of terms")
        parts = [
            _count(docs[i : i + _ADD_CHUNK], first + i, self._vocab, self._n_fields)
            for i in range(0, len(docs), _ADD_CHUNK)
        ]
        terms = np.concatenate([p[0] for p in parts]) if parts else np.zeros(0, dtype=np.int32)
        posting_slots = np.concatenate([p[1] for p in parts]) if parts else np.zeros(0, dtype=np.int32)
        tfs = np.concatenate([p[2] for p in parts]) if parts else np.zeros((0, self._n_fields), dtype=np.int32)
        counts = np.concatenate([p[3] for p in parts]) if parts else np.zeros(0, dtype=np.int64)
        lengths = np.concatenate([p[4] for p in parts]) if parts else np.zeros((0, self._n_fields), dtype=np.int32)
        text = np.concatenate([p[5] for p in parts]) if parts else np.zeros(0, dtype=np.uint16)
        slots = np.arange(first, slot, dtype=np.int32)
        segment = Segment.from_postings(self._new_id(), terms, posting_slots, tfs, slots)
        payloads, orders = (doc.payload for doc in docs), [doc.order for doc in docs]
        self._append(segment, payloads, orders, terms, counts, lengths, text)

    def _append(
        self,
        segment: Segment,
        payloads: Iterable[T],
        orders: Sequence[tuple[str, int]],
        fwd: I32,
        counts: I64,
        lengths: I32,
        text: Places,
    ) -> None:
        """Account for a new segment of new slots: df, the slots' arrays, N and total lengths."""
        if len(self._vocab) > self._df.n:
            self._df.extend(np.zeros(len(self._vocab) - self._df.n, dtype=np.int64))
        self._df.data[: self._df.n] += np.bincount(fwd, minlength=self._df.n)
        self._slots.append(segment.id, payloads, orders, fwd, counts, lengths, text)
        self._segments.append(segment)
        self._n += len(segment.slots)
        for f, total in enumerate(lengths.sum(axis=0, dtype=np.int64).tolist()):
            self._total_length[f] += total

    # --- packing (the persistent cache) -------------------------------------------------------

    def pack(self, groups: Sequence[Hashable]) -> Packed[T]:
        """These groups' documents and postings, self-contained (own vocabulary, slots from 0, the
        groups in slot order), to be restored with `unpack` into this or another index with the
        same fields (see `packing.pack`)."""
        spans = sorted((*_span(self._groups[g]), g) for g in groups if g in self._groups)
        return packing.pack(spans, self._slots, self._segments, self._vocab, self._n_fields)

    def unpack(self, packed: Packed[T]) -> None:
        """Add packed groups (none of them may be here already) as one segment, one generation."""
        if packed.tfs.ndim != 2 or packed.tfs.shape[1] != self._n_fields:
            raise ValueError(f"packed postings have {packed.tfs.shape[1:]} fields; this index has {self._n_fields}")
        groups, sizes = pair_columns(packed.groups)
        if not self._groups.keys().isdisjoint(groups):
            raise ValueError("unpack adds groups; remove the ones it replaces first")
        first = self._slots.n
        self._groups.update(zip(groups, _spans(first, sizes).tolist(), strict=True))
        self._vocab, ids = self._vocab.merged(packed.words)
        segment, fwd, text = packing.restored(packed, ids, first, self._new_id())
        counts = packed.counts.astype(np.int64)
        self._append(segment, packed.payloads, packed.orders, fwd, counts, packed.lengths, text)
        self.generation += 1
        # No merge: a restored root is one large segment, and merging a small one before it would
        # copy all of its postings for nothing (a later small update never merges into it either).
        self._tidy(merge=False)

    # --- upkeep -------------------------------------------------------------------------------

    def _new_id(self) -> int:
        self._seg_ids += 1
        return self._seg_ids

    def _remove(self, group: Hashable) -> None:
        found = self._groups.pop(group, None)
        if found is None:
            return
        first, count = _span(found)
        terms, by_segment, totals = self._slots.remove(first, count)
        np.subtract.at(self._df.data, terms, 1)
        for segment in self._segments:
            segment.live -= by_segment.get(segment.id, 0)
        self._n -= count
        for f, total in enumerate(totals):
            self._total_length[f] -= total

    def _tidy(self, merge: bool = True) -> None:
        """Drop dead segments, merge small ones, renumber when much is dead.

        Only the layout changes: scores depend on integers that none of this touches.
        """
        self._segments = [s for s in self._segments if s.live]
        if upkeep.needs_renumbering(self._slots.n, self._n):
            self._renumber()
        while merge and upkeep.merges_next(self._segments, self._n):
            newer = self._segments.pop()
            merged = upkeep.merge(self._segments[-1], newer, self._slots.alive.view(), self._new_id())
            self._segments[-1] = self._holding(merged)

    def merge_all(self) -> None:
        """Merge every segment into one: the layout of a bulk build. A root indexed in chunks (so
        that it answers while it is read) ends with several, and a query pays per segment (about
        2.5x on tldr's windows for 7 segments against 1). Only the layout changes; a new
        generation all the same, so nothing keyed by segment outlives it."""
        if len(self._segments) < 2:
            return
        merged = upkeep.merge_all(self._segments, self._slots.alive.view(), self._new_id())
        self._segments = [self._holding(merged)]
        self.generation += 1

    def _holding(self, segment: Segment) -> Segment:
        """`segment`, now recorded as the one that holds its slots."""
        self._slots.seg_of.data[segment.slots] = segment.id
        return segment

    def _renumber(self) -> None:
        """Drop dead slots and the terms no live document has, so memory follows the live corpus.

        Ids keep their relative order, so every segment stays sorted without a sort.
        """
        alive = self._slots.alive.view()
        live = np.flatnonzero(alive)
        new_slot = np.full(len(alive), -1, dtype=np.int64)
        new_slot[live] = np.arange(len(live))
        df = self._df.view()
        kept_terms = np.flatnonzero(df > 0)
        new_term = np.full(len(df), -1, dtype=np.int32)
        new_term[kept_terms] = np.arange(len(kept_terms), dtype=np.int32)
        words = list(self._vocab)
        self._vocab = Vocabulary([words[i] for i in kept_terms.tolist()])
        self._df.reset(df[kept_terms])
        self._slots.compact(live, new_term)
        spans = ((g, *_span(v)) for g, v in self._groups.items())
        self._groups = {g: _spanning(int(new_slot[first]), count) for g, first, count in spans}
        self._segments, seg_of = upkeep.renumbered(self._segments, alive, new_slot, new_term, len(live), self._new_id)
        self._slots.restart(seg_of)

    # --- text ---------------------------------------------------------------------------------

    def term_id(self, term: str) -> int | None:
        """The term's id in this generation's vocabulary (None: no document ever had it)."""
        return self._vocab.get(term)

    def payload(self, slot: int) -> T:
        """The document of a live slot (valid until the next update)."""
        return self._slots.payload(slot)

    def text(self, slot: int) -> I32:
        """The first field's term ids of a live slot, in text order (ids valid until the next update)."""
        return self._slots.first_field(slot)

    def words(self, slot: int) -> list[str]:
        """The first field's terms of a live slot, in text order: what its text tokenizes to, with
        no text read."""
        word = self._vocab.word
        return [word(t) for t in self.text(slot).tolist()]


def _count(
    docs: Sequence[Doc[T]], first: int, vocab: Vocabulary, n_fields: int
) -> tuple[I32, I32, I32, I64, I32, Places]:
    """Postings of consecutive documents from slot `first`, in slot then term order: terms,
    slots, per-field frequencies; per document its number of distinct terms and lengths; and
    the first field's terms in text order, as places among the document's distinct terms (its
    run of the terms returned). Term ids come from `vocab` (a term it lacks gets the next id)."""
    n_docs = len(docs)
    term_id = vocab.adding(chain.from_iterable(chain.from_iterable(doc.fields for doc in docs)))
    lengths = np.zeros((n_docs, n_fields), dtype=np.int32)
    ids: list[I64] = []
    for f in range(n_fields):
        per_doc = [doc.fields[f] if f < len(doc.fields) else () for doc in docs]
        lengths[:, f] = np.fromiter(map(len, per_doc), dtype=np.int32, count=n_docs)
        ids.append(
            np.fromiter(map(term_id, chain.from_iterable(per_doc)), dtype=np.int64, count=int(lengths[:, f].sum()))
        )
    n_terms = max(len(vocab), 1)
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
    body_docs = np.repeat(doc_index, lengths[:, 0])
    places = np.searchsorted(unique, body_docs * n_terms + ids[0]) - (np.cumsum(counts) - counts)[body_docs]
    text: Places = (
        places.astype(np.uint16) if not len(places) or int(places.max()) <= 0xFFFF else places.astype(np.int32)
    )
    return terms, (posting_docs + first).astype(np.int32), tfs, counts, lengths, text


_COUNT_BITS = 32
_COUNT = (1 << _COUNT_BITS) - 1


def _spans(first: int, counts: I64) -> I64:
    """`_spanning` of groups of `counts` documents, one after another from slot `first`."""
    if len(counts) and not 0 <= int(counts.min()) <= int(counts.max()) <= _COUNT:
        raise ValueError("a group's count of documents is out of range")
    return (first + np.cumsum(counts) - counts) << _COUNT_BITS | counts


def _spanning(first: int, count: int) -> int:
    """A group's first slot and number of slots, as one integer."""
    if not 0 <= count <= _COUNT:
        raise ValueError(f"a group of {count} documents")
    return first << _COUNT_BITS | count


def _span(value: int) -> tuple[int, int]:
    """(first slot, number of slots) of a group's `_spanning` value; (0, 0) for 0, no group."""
    return value >> _COUNT_BITS, value & _COUNT
