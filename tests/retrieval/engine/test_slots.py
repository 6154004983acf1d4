"""The per-slot arrays: appended slots read back as given, removal kills exactly a group's slots and
reports what the store must subtract, and compaction keeps the live slots in order, renamed."""

from __future__ import annotations

from typing import overload

import numpy as np

from retrieval.engine.slots import Rows, Slots


def filled() -> Slots[str]:
    """Five slots in two segments: a, b (segment 1), c, d, e (segment 2); two fields."""
    slots: Slots[str] = Slots(2)
    slots.append(
        1,
        ["a", "b"],
        [("a.md", 1), ("b.md", 1)],
        fwd=np.array([3, 5, 5], dtype=np.int32),  # a has terms 3 and 5, b has 5
        counts=np.array([2, 1], dtype=np.int64),
        lengths=np.array([[3, 1], [1, 0]], dtype=np.int32),
        text=np.array([0, 1, 0, 0], dtype=np.uint16),  # places in each slot's run of fwd: a 3 5 3, b 5
    )
    slots.append(
        2,
        ["c", "d", "e"],
        [("c.md", 1), ("c.md", 9), ("e.md", 1)],
        fwd=np.array([0, 7, 7, 1], dtype=np.int32),
        counts=np.array([1, 1, 2], dtype=np.int64),
        lengths=np.array([[2, 2], [1, 0], [2, 1]], dtype=np.int32),
        text=np.array([0, 0, 0, 0, 1], dtype=np.uint16),  # c 0 0, d 7, e 7 1
    )
    return slots


def test_appended_slots_read_back_as_given() -> None:
    slots = filled()
    assert slots.n == slots.alive.n == 5
    assert [slots.payload(s) for s in range(5)] == ["a", "b", "c", "d", "e"]
    assert slots.order(3) == ("c.md", 9)
    assert [slots.first_field(s).tolist() for s in range(5)] == [[3, 5, 3], [5], [0, 0], [7], [7, 1]]
    assert slots.seg_of.view().tolist() == [1, 1, 2, 2, 2]
    assert slots.alive.view().all()
    assert slots.length.view().tolist() == [[3, 1], [1, 0], [2, 2], [1, 0], [2, 1]]


def test_a_slot_of_more_distinct_terms_than_two_bytes_count_widens_the_text() -> None:
    slots = filled()
    many = 70_000
    slots.append(
        3,
        ["f"],
        [("f.md", 1)],
        fwd=np.arange(many, dtype=np.int32),
        counts=np.array([many], dtype=np.int64),
        lengths=np.array([[3, 0]], dtype=np.int32),
        text=np.array([69_999, 65_536, 2], dtype=np.int32),
    )
    assert slots.text.data.dtype == np.int32
    assert slots.first_field(5).tolist() == [69_999, 65_536, 2]
    assert [slots.first_field(s).tolist() for s in range(5)] == [[3, 5, 3], [5], [0, 0], [7], [7, 1]]


def test_removing_slots_kills_them_and_reports_their_terms_segments_and_lengths() -> None:
    slots = filled()
    terms, by_segment, totals = slots.remove(1, 3)  # b, c, d
    assert sorted(terms.tolist()) == [0, 5, 7]
    assert by_segment == {1: 1, 2: 2}
    assert totals == [4, 2]
    assert slots.alive.view().tolist() == [True, False, False, False, True]
    assert slots.payloads == ["a", None, None, None, "e"]
    assert slots.n == 5  # dead slots stay until compaction


def test_compaction_keeps_the_live_slots_in_order_with_renamed_terms() -> None:
    slots = filled()
    slots.remove(1, 3)
    live = np.flatnonzero(slots.alive.view())
    new_term = np.array([-1, 0, -1, 1, -1, 2, -1, 3], dtype=np.int32)  # the live slots' terms: 1, 3, 5, 7
    slots.compact(live, new_term)
    slots.restart(np.array([9, 9], dtype=np.int32))
    assert slots.n == slots.alive.n == 2 and slots.alive.view().all()
    assert slots.payloads == ["a", "e"] and [slots.order(s) for s in range(slots.n)] == [("a.md", 1), ("e.md", 1)]
    assert slots.length.view().tolist() == [[3, 1], [2, 1]]
    assert slots.fwd.view().tolist() == [1, 2, 3, 0]  # a: 3, 5; e: 7, 1
    assert slots.fwd_ptr.view().tolist() == [0, 2] and slots.fwd_len.view().tolist() == [2, 2]
    assert [slots.first_field(s).tolist() for s in range(2)] == [[1, 2, 1], [3, 0]]
    assert slots.seg_of.view().tolist() == [9, 9]


class Made(Rows[str]):
    """Rows that count the payloads they make."""

    __slots__ = ("items", "made")

    def __init__(self, items: list[str]) -> None:
        self.items, self.made = items, 0

    def __len__(self) -> int:
        return len(self.items)

    @overload
    def __getitem__(self, i: int) -> str: ...
    @overload
    def __getitem__(self, i: slice) -> list[str]: ...
    def __getitem__(self, i: int | slice) -> str | list[str]:
        self.made += 1
        return self.items[i]


def test_rows_make_each_payload_when_asked_for_and_follow_removal_and_compaction() -> None:
    slots = filled()  # a .. e, as a list
    rows = Made(["f", "g", "h", "i"])
    ones = np.ones(4, dtype=np.int64)
    slots.append(
        3,
        rows,
        [("f.md", 1), ("g.md", 1), ("h.md", 1), ("i.md", 1)],
        np.arange(4, dtype=np.int32),
        ones,
        np.ones((4, 2), dtype=np.int32),
        np.arange(4, dtype=np.int32),
    )
    assert rows.made == 0  # nothing made until asked for
    assert [slots.payload(s) for s in range(9)] == ["a", "b", "c", "d", "e", "f", "g", "h", "i"]
    assert rows.made == 4 and slots.order(6) == ("g.md", 1)
    slots.remove(1, 2)  # b, c
    slots.remove(6, 2)  # g, h
    assert slots.live_payloads(0, 9) == ["a", "d", "e", "f", "i"]
    live = np.flatnonzero(slots.alive.view())
    slots.compact(live, np.arange(8, dtype=np.int32))
    assert [slots.payload(s) for s in range(slots.n)] == ["a", "d", "e", "f", "i"]
    slots.remove(3, 1)  # f
    slots.compact(np.array([0, 1, 2, 4]), np.arange(8, dtype=np.int32))
    assert [slots.payload(s) for s in range(slots.n)] == ["a", "d", "e", "i"]  # twice renumbered
