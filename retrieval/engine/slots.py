"""What the postings store keeps per document slot besides the postings themselves.

A slot is a document's number in its index, given in the order documents are added. For each
slot: its payload, its tie-break key, its field lengths, whether it is alive, which segment holds
its postings, its distinct terms (the forward index, read to decrement document frequencies when
it is removed) and its first field's terms in text order (read by proximity, the copy check and
phrases instead of tokenizing again), each as its place among the slot's distinct terms: two
bytes a token where a term id takes four (tldr's 2.5M tokens: 5 MB), and unchanged when term ids
are. A removed document's slot stays, dead, until the store renumbers its slots
(`Slots.compact`). The arrays grow in place (`Grow`) and are kept in step: one entry (or one run,
for the forward index and the text) per slot in each. Payloads that come as `Rows` (a restored
cache entry's units) are made only when a slot's payload is asked for.
"""

from __future__ import annotations

from abc import abstractmethod
from bisect import bisect_right
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from itertools import repeat
from typing import Generic, TypeVar

import numpy as np

from retrieval.engine.segments import I32, I64, Grow, IntArray, Places, gather

T = TypeVar("T")
K = TypeVar("K")


class Rows(Sequence[T]):
    """Payloads made one at a time, when asked for: `Slots.append` keeps the sequence, not its
    items (a warm start of tldr made 38.5k units, 5.8 MB kept for the few that searches show)."""

    __slots__ = ()


class Pairs(Sequence[tuple[K, int]]):
    """(key, number) pairs kept as two columns (a restored entry's tie-break keys and groups):
    `Slots.append` and `Postings.unpack` take the columns whole (`pair_columns`), not pair by pair
    (tldr's 38k, a pair at a time, took about 20 ms of a warm start)."""

    __slots__ = ()

    @abstractmethod
    def columns(self) -> tuple[list[K], I64]:
        """The keys, and the numbers as one array."""

    def __iter__(self) -> Iterator[tuple[K, int]]:
        keys, numbers = self.columns()
        return zip(keys, numbers.tolist(), strict=True)


def pair_columns(pairs: Sequence[tuple[K, int]]) -> tuple[list[K], I64]:
    """`pairs` as their keys and their numbers: the columns of `Pairs` as they are, others read."""
    if isinstance(pairs, Pairs):
        return pairs.columns()
    return [key for key, _ in pairs], np.fromiter((n for _, n in pairs), dtype=np.int64, count=len(pairs))


class _Later:
    """The payload of a slot whose `Rows` make it when it is asked for."""

    __slots__ = ()


_LATER = _Later()


@dataclass(frozen=True, slots=True)
class _Run(Generic[T]):
    """Slots whose payloads `rows` make: from slot `first`, one a row, in order, or (once slots
    were dropped) the rows `index` names."""

    first: int
    rows: Rows[T]
    index: I64 | None = None

    def row(self, slot: int) -> int:
        return slot - self.first if self.index is None else int(self.index[slot - self.first])

    def kept(self, live: I64) -> _Run[T] | None:
        """This run after `Slots.compact` keeps only the `live` slots; None if none of its are."""
        span = len(self.rows) if self.index is None else len(self.index)
        low, high = np.searchsorted(live, (self.first, self.first + span)).tolist()
        if low == high:
            return None
        rows = live[low:high] - self.first
        return _Run(low, self.rows, rows if self.index is None else self.index[rows])


class Slots(Generic[T]):
    """The per-slot arrays of one postings store (see the module's docstring): the store appends,
    removes and renumbers slots through these methods, and reads the arrays directly."""

    def __init__(self, n_fields: int) -> None:
        self.payloads: list[T | _Later | None] = []
        """Each slot's payload (None once dead; one of `_runs` makes it when asked for)."""
        self._runs: list[_Run[T]] = []
        """Runs of slots whose payloads came as `Rows`, by first slot."""
        self.order_path: list[str] = []
        """Each slot's tie-break key (see `order`): its display path, the string its payload holds,
        and its start line in `order_line` (a tuple a slot was 70 bytes: tldr's 38k, 2.7 MB)."""
        self.order_line = Grow(np.int64)
        self.length = Grow(np.int32, width=n_fields)
        """Each slot's field lengths, one column per field."""
        self.alive = Grow(np.bool_)
        self.seg_of = Grow(np.int32)
        """The id of the segment that holds each slot's postings."""
        self.fwd = Grow(np.int32, capacity=4096)
        """Forward index: the distinct terms of every slot, in slot order (to decrement df)."""
        self.fwd_ptr = Grow(np.int64)
        self.fwd_len = Grow(np.int32)
        self.text = Grow(np.uint16, capacity=4096)
        """The first field's terms of every slot in text order (`length[s, 0]` of them from
        `text_at[s]`), each as its place in the slot's run of `fwd`: what proximity, copy
        detection and phrases read instead of tokenizing. Wider once a slot has more distinct
        terms than two bytes count."""
        self.text_at = Grow(np.int64)

    @property
    def n(self) -> int:
        """Slots, dead ones included: the number the next new slot gets."""
        return len(self.payloads)

    def append(
        self,
        seg_id: int,
        payloads: Iterable[T],
        orders: Sequence[tuple[str, int]],
        fwd: I32,
        counts: I64,
        lengths: I32,
        text: Places,
    ) -> None:
        """New slots after the last, alive, their postings in segment `seg_id`: one row of
        `lengths` each, `counts[s]` distinct terms of `fwd` each and `lengths[s, 0]` terms of
        `text` each (places in the slot's run of `fwd`), slot after slot. `Rows` are kept as
        they are, each payload made when asked for."""
        n_new = len(lengths)
        if isinstance(payloads, Rows):
            self._runs.append(_Run(self.n, payloads))
            self.payloads.extend(repeat(_LATER, n_new))
        else:
            self.payloads.extend(payloads)
        paths, lines = pair_columns(orders)
        self.order_path.extend(paths)
        self.order_line.extend(lines)
        self.fwd_ptr.extend(self.fwd.n + np.cumsum(counts) - counts)
        self.fwd_len.extend(counts)
        self.fwd.extend(fwd)
        body = lengths[:, 0].astype(np.int64)
        self.text_at.extend(self.text.n + np.cumsum(body) - body)
        if len(text) and int(text.max()) > np.iinfo(self.text.data.dtype).max:
            self.text.data = self.text.data.astype(np.int32)
        self.text.extend(text)
        self.seg_of.extend(np.full(n_new, seg_id, dtype=np.int32))
        self.length.extend(lengths)
        self.alive.extend(np.ones(n_new, dtype=np.bool_))

    def remove(self, first: int, count: int) -> tuple[I32, Counter[int], list[int]]:
        """Mark the live slots `first .. first + count - 1` dead and drop their payloads. Returns
        their distinct terms (a term once per slot that had it), how many of them each segment
        held (by segment id), and their total length in each field."""
        slots = np.arange(first, first + count)
        alive = self.alive.view()
        assert alive[slots].all(), "a grouped slot is alive"
        terms = self.fwd.view()[gather(self.fwd_ptr.view()[slots], self.fwd_len.view()[slots].astype(np.int64))]
        by_segment = Counter(self.seg_of.view()[slots].tolist())
        alive[slots] = False
        self.payloads[first : first + count] = [None] * count
        totals: list[int] = self.length.view()[slots].sum(axis=0, dtype=np.int64).tolist()
        return terms, by_segment, totals

    def compact(self, live: I64, new_term: I32) -> None:
        """Keep only the `live` slots (ascending), renumbered from 0 in the same order, their
        terms renamed through `new_term` (their places in the text stay). Liveness and segments
        are left to `restart`, which must follow: until then they still describe the slots as
        they were."""
        live_list = live.tolist()
        self.payloads = [self.payloads[i] for i in live_list]
        self._runs = [kept for run in self._runs if (kept := run.kept(live)) is not None]
        self.order_path = [self.order_path[i] for i in live_list]
        self.order_line.reset(self.order_line.view()[live])
        text = self.text.view()[self._text_of(live)]
        body = self.length.view()[live, 0].astype(np.int64)
        self.text.reset(text)
        self.text_at.reset(np.cumsum(body) - body)
        self.length.reset(self.length.view()[live])
        lengths = self.fwd_len.view()[live].astype(np.int64)
        self.fwd.reset(new_term[self.fwd.view()[gather(self.fwd_ptr.view()[live], lengths)]])
        self.fwd_ptr.reset(np.cumsum(lengths) - lengths)
        self.fwd_len.reset(lengths)

    def restart(self, seg_of: I32) -> None:
        """After `compact`: every slot alive, its postings in segment `seg_of[s]`."""
        self.seg_of.reset(seg_of)
        self.alive.reset(np.ones(len(seg_of), dtype=np.bool_))

    def _text_of(self, slots: IntArray) -> I64:
        """Indices into `text` of these slots' first-field terms, slot after slot."""
        return gather(self.text_at.view()[slots], self.length.view()[slots, 0].astype(np.int64))

    def first_field(self, slot: int) -> I32:
        """The first field's term ids of a live slot, in text order."""
        at, ptr = int(self.text_at.data[slot]), int(self.fwd_ptr.data[slot])
        places = self.text.data[at : at + int(self.length.data[slot, 0])]
        terms: I32 = self.fwd.data[ptr + places.astype(np.int64)]
        return terms

    def first_fields(self, slots: IntArray) -> tuple[I32, I64]:
        """The first field's term ids of these slots, in text order, slot after slot; and each
        slot's number of them."""
        sizes = self.length.view()[slots, 0].astype(np.int64)
        places = self.text.view()[gather(self.text_at.view()[slots], sizes)]
        terms: I32 = self.fwd.view()[np.repeat(self.fwd_ptr.view()[slots], sizes) + places]
        return terms, sizes

    def order(self, slot: int) -> tuple[str, int]:
        """A slot's (display path, start line), which breaks score ties."""
        return self.order_path[slot], int(self.order_line.data[slot])

    def payload(self, slot: int) -> T:
        payload = self.payloads[slot]
        if isinstance(payload, _Later):
            run = self._runs[bisect_right(self._runs, slot, key=lambda r: r.first) - 1]
            return run.rows[run.row(slot)]
        assert payload is not None, "a live slot always has its payload"
        return payload

    def live_payloads(self, first: int, count: int) -> list[T]:
        """The payloads of the live slots among `first .. first + count - 1`."""
        return [self.payload(s) for s in range(first, first + count) if self.payloads[s] is not None]
