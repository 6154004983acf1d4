"""The engine's storage: growable arrays, CSR helpers, and postings segments found by dict or dense array."""

from __future__ import annotations

import random

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from retrieval.engine.segments import I32, I64, Grow, Segment, csr, gather, is_new, run_starts


def test_extending_past_the_capacity_keeps_every_earlier_value() -> None:
    grow = Grow(np.int64, capacity=4)
    grow.extend([1, 2, 3])
    grow.extend(range(4, 1001))
    assert grow.view().tolist() == list(range(1, 1001))
    assert grow.n == 1000


@settings(deadline=None)
@given(st.lists(st.lists(st.integers(-(2**31), 2**31 - 1), max_size=300), max_size=20), st.integers(1, 64))
def test_the_view_is_exactly_the_values_appended_in_order(chunks: list[list[int]], capacity: int) -> None:
    grow = Grow(np.int32, capacity=capacity)
    for chunk in chunks:
        grow.extend(chunk)
    assert grow.view().tolist() == [v for chunk in chunks for v in chunk]
    assert grow.view().dtype == np.int32


def test_an_empty_grow_views_nothing() -> None:
    grow = Grow(np.float64)
    assert grow.view().tolist() == []
    grow.extend([])
    assert len(grow.view()) == 0


def test_reset_replaces_the_values_and_later_extends_append_to_them() -> None:
    grow = Grow(np.int32, capacity=2)
    grow.extend(range(100))
    grow.reset([7, 8, 9])
    assert grow.view().tolist() == [7, 8, 9]
    grow.extend(range(10, 600))
    assert grow.view().tolist() == [7, 8, 9, *range(10, 600)]
    grow.reset([])
    assert grow.view().tolist() == []


def test_vector_rows_keep_their_width_through_growth_and_reset() -> None:
    grow = Grow(np.int32, width=3, capacity=1)
    rows = [[i, i * 10, i * 100] for i in range(500)]
    grow.extend(rows[:1])
    grow.extend(rows[1:])
    assert grow.view().shape == (500, 3)
    assert grow.view().tolist() == rows
    grow.reset([[1, 2, 3], [4, 5, 6]])
    assert grow.view().tolist() == [[1, 2, 3], [4, 5, 6]]
    grow.extend([[7, 8, 9]])
    assert grow.view().tolist() == [[1, 2, 3], [4, 5, 6], [7, 8, 9]]


def test_csr_gives_the_distinct_terms_and_where_each_ones_postings_start() -> None:
    terms, indptr = csr(np.array([2, 2, 5, 7, 7, 7], dtype=np.int32))
    assert terms.tolist() == [2, 5, 7]
    assert indptr.tolist() == [0, 2, 3, 6]
    assert terms.dtype == np.int32 and indptr.dtype == np.int64


def test_csr_of_no_postings_is_no_terms_and_one_row_pointer() -> None:
    terms, indptr = csr(np.zeros(0, dtype=np.int32))
    assert terms.tolist() == []
    assert indptr.tolist() == [0]


@settings(deadline=None)
@given(st.lists(st.integers(0, 50)))
def test_csr_rows_cover_every_posting_of_their_term(values: list[int]) -> None:
    ordered = sorted(values)
    terms, indptr = csr(np.array(ordered, dtype=np.int32))
    assert terms.tolist() == sorted(set(values))
    for row, term in enumerate(terms.tolist()):
        assert ordered[indptr[row] : indptr[row + 1]] == [term] * values.count(term)
    assert indptr[-1] == len(values)


def test_is_new_marks_the_first_key_of_each_run() -> None:
    keys = np.array([1, 1, 2, 3, 3, 3, 9], dtype=np.int64)
    assert is_new(keys).tolist() == [True, False, True, True, False, False, True]
    assert run_starts(keys).tolist() == [0, 2, 3, 6]


def test_an_empty_key_array_has_no_runs() -> None:
    empty = np.zeros(0, dtype=np.int32)
    assert is_new(empty).tolist() == []
    assert run_starts(empty).tolist() == []


def test_a_single_key_is_one_run() -> None:
    assert is_new(np.array([4], dtype=np.int32)).tolist() == [True]
    assert run_starts(np.array([4], dtype=np.int32)).tolist() == [0]


def test_gather_concatenates_the_ranges_skipping_empty_ones() -> None:
    starts = np.array([10, 0, 5, 3], dtype=np.int64)
    lengths = np.array([2, 0, 3, 0], dtype=np.int64)
    assert gather(starts, lengths).tolist() == [10, 11, 5, 6, 7]


def test_gather_of_only_empty_ranges_or_none_is_empty() -> None:
    assert gather(np.array([4, 9], dtype=np.int64), np.array([0, 0], dtype=np.int64)).tolist() == []
    assert gather(np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)).tolist() == []


@settings(deadline=None)
@given(st.lists(st.tuples(st.integers(0, 1000), st.integers(0, 20)), max_size=30))
def test_gather_equals_the_ranges_written_out(ranges: list[tuple[int, int]]) -> None:
    starts = np.array([s for s, _ in ranges], dtype=np.int64)
    lengths = np.array([n for _, n in ranges], dtype=np.int64)
    assert gather(starts, lengths).tolist() == [i for s, n in ranges for i in range(s, s + n)]


Postings = dict[int, list[tuple[int, list[int]]]]
"""term id -> [(slot, field frequencies)], slots ascending: what a segment should answer."""


def random_postings(rng: random.Random, slots: list[int], vocab: list[int], extra: int) -> tuple[Segment, Postings]:
    """A segment of `slots` (ascending) holding every term of `vocab` at least once, each slot
    its distinct terms in random order, and the postings it should hold, written out."""
    held: dict[int, set[int]] = {slot: set(rng.sample(vocab, extra)) for slot in slots}
    for i, term in enumerate(vocab):
        held[slots[i % len(slots)]].add(term)
    terms: list[int] = []
    docs: list[int] = []
    tfs: list[list[int]] = []
    expected: Postings = {}
    for slot in slots:
        here = list(held[slot])
        rng.shuffle(here)  # any term order within a slot
        for term in here:
            tf = [rng.randint(0, 9), rng.randint(0, 9)]
            terms.append(term)
            docs.append(slot)
            tfs.append(tf)
            expected.setdefault(term, []).append((slot, tf))
    segment = Segment.from_postings(
        3,
        np.array(terms, dtype=np.int32),
        np.array(docs, dtype=np.int32),
        np.array(tfs, dtype=np.int32).reshape(len(tfs), 2),
        np.array(slots, dtype=np.int32),
    )
    return segment, expected


def assert_answers(segment: Segment, expected: Postings, absent: list[int]) -> None:
    for term, wanted in expected.items():
        found = segment.postings(term)
        assert found is not None
        docs, tfs = found
        assert docs.tolist() == [slot for slot, _ in wanted]  # ascending: slots came in order
        assert tfs.tolist() == [tf for _, tf in wanted]
        assert segment.term_ids[segment.row(term)] == term
    for term in absent:
        assert segment.row(term) == -1
        assert segment.postings(term) is None


@pytest.mark.parametrize(
    ("distinct", "spread", "kind"), [(40, 3, dict), (4096, 3, dict), (6000, 3, np.ndarray), (6000, 10, type(None))]
)
def test_a_segment_answers_the_same_through_its_dict_its_dense_array_or_bisection(
    distinct: int, spread: int, kind: type
) -> None:
    rng = random.Random(distinct * spread)
    vocab = rng.sample(range(spread * distinct), distinct)  # sparse ids: gaps inside the dense array
    slots = sorted(rng.sample(range(10, 5000), 400))
    segment, expected = random_postings(rng, slots, vocab, extra=20)
    assert len(segment.term_ids) == distinct
    assert isinstance(segment.rows, kind)  # the path this case is meant to take
    gaps = [t for t in range(spread * distinct) if t not in expected]
    beyond = [max(vocab) + 1, max(vocab) + 10_000]
    assert_answers(segment, expected, rng.sample(gaps, 50) + beyond)
    assert segment.slots.tolist() == slots and segment.live == len(slots)
    assert segment.posting_terms().tolist() == sorted(t for t, ps in expected.items() for _ in ps)


@settings(deadline=None)
@given(st.data())
def test_from_postings_keeps_each_terms_slots_ascending(data: st.DataObject) -> None:
    slots = sorted(data.draw(st.sets(st.integers(0, 200), max_size=25)))
    per_slot = {s: data.draw(st.lists(st.integers(0, 30), unique=True, max_size=8)) for s in slots}
    terms = [t for s in slots for t in per_slot[s]]
    docs = [s for s in slots for _ in per_slot[s]]
    tfs = [[s, t] for s in slots for t in per_slot[s]]  # each row says which posting it belongs to
    segment = Segment.from_postings(
        0,
        np.array(terms, dtype=np.int32),
        np.array(docs, dtype=np.int32),
        np.array(tfs, dtype=np.int32).reshape(len(tfs), 2),
        np.array(slots, dtype=np.int32),
    )
    assert segment.term_ids.tolist() == sorted(set(terms))
    for term in range(31):
        found = segment.postings(term)
        having = [s for s in slots if term in per_slot[s]]
        if not having:
            assert found is None and segment.row(term) == -1
            continue
        assert found is not None
        assert found[0].tolist() == having
        assert found[1].tolist() == [[s, term] for s in having]


def test_a_segment_without_postings_answers_none_for_every_term() -> None:
    empty_i32: I32 = np.zeros(0, dtype=np.int32)
    segment = Segment.from_postings(
        1, empty_i32, empty_i32, np.zeros((0, 1), dtype=np.int32), np.arange(3, dtype=np.int32)
    )
    assert segment.postings(0) is None and segment.row(5) == -1
    assert segment.live == 3
    assert segment.posting_terms().tolist() == []


def test_a_segment_built_directly_from_csr_finds_its_rows() -> None:
    term_ids: I32 = np.array([1, 4, 9], dtype=np.int32)
    indptr: I64 = np.array([0, 2, 3, 5], dtype=np.int64)
    docs: I32 = np.array([0, 2, 1, 0, 2], dtype=np.int32)
    tfs: I32 = np.array([[1], [2], [3], [4], [5]], dtype=np.int32)
    segment = Segment(7, term_ids, indptr, docs, tfs, np.arange(3, dtype=np.int32))
    assert [segment.row(t) for t in (1, 4, 9, 5)] == [0, 1, 2, -1]
    found = segment.postings(9)
    assert found is not None
    assert found[0].tolist() == [0, 2] and found[1].tolist() == [[4], [5]]
    assert segment.posting_terms().tolist() == [1, 1, 4, 9, 9]


def test_a_bulk_extend_holds_little_slack_and_small_ones_after_it_still_fit() -> None:
    grown = Grow(np.int32, capacity=256)
    grown.extend(np.arange(100_000))  # a restored root: far larger than the array so far
    assert len(grown.data) <= 100_000 + 100_000 // 32 + 256
    for i in range(50):  # the small updates after it: no copy of the whole array each
        before = grown.data
        grown.extend(np.arange(10) + i)
        assert grown.data is before
    assert grown.view()[:100_000].tolist() == list(range(100_000)) and len(grown.view()) == 100_500
