"""Segment upkeep: merged and renumbered segments hold exactly the live postings, and many small
updates keep few segments while renumbering reclaims dead slots and terms, term ids consistent."""

from __future__ import annotations

import random
from itertools import count

import numpy as np
import pytest

from retrieval.engine import upkeep
from retrieval.engine.index import BM25Index, Doc
from retrieval.engine.segments import Segment

Postings = set[tuple[int, int, tuple[int, ...]]]
"""(term, slot, field frequencies) of every posting."""


def segment(rng: random.Random, seg_id: int, slots: range, n_terms: int) -> tuple[Segment, Postings]:
    """A segment over consecutive slots, each with a few random terms of two fields."""
    postings: Postings = {
        (term, slot, (rng.randint(0, 3), rng.randint(1, 300)))
        for slot in slots
        for term in rng.sample(range(n_terms), rng.randint(0, 5))
    }
    ordered = sorted(postings, key=lambda p: (p[1], p[0]))
    built = Segment.from_postings(
        seg_id,
        np.array([t for t, _, _ in ordered], dtype=np.int32),
        np.array([s for _, s, _ in ordered], dtype=np.int32),
        np.array([f for _, _, f in ordered], dtype=np.int32).reshape(-1, 2),
        np.arange(slots.start, slots.stop, dtype=np.int32),
    )
    return built, postings


def held(seg: Segment) -> Postings:
    terms = seg.posting_terms().tolist()
    return {(t, s, tuple(f)) for t, s, f in zip(terms, seg.docs.tolist(), seg.tfs.tolist(), strict=True)}


def assert_well_formed(seg: Segment) -> None:
    """Terms ascend, and each term's slots ascend."""
    assert np.all(np.diff(seg.term_ids) > 0)
    for row in range(len(seg.term_ids)):
        assert np.all(np.diff(seg.docs[seg.indptr[row] : seg.indptr[row + 1]]) > 0)


@pytest.mark.parametrize("seed", range(20))
def test_merged_segments_hold_exactly_the_live_postings_in_order(seed: int) -> None:
    rng = random.Random(seed)
    bounds = sorted(rng.sample(range(1, 60), 3))
    parts = [segment(rng, i, range(a, b), 12) for i, (a, b) in enumerate(zip([0, *bounds], bounds, strict=False))]
    alive = np.array([rng.random() < 0.7 for _ in range(bounds[-1])], dtype=np.bool_)
    for seg, _ in parts:
        seg.live = int(alive[seg.slots].sum())
    live = [{p for p in postings if alive[p[1]]} for _, postings in parts]
    pair = upkeep.merge(parts[0][0], parts[1][0], alive, 100)
    assert held(pair) == live[0] | live[1]
    assert pair.id == 100 and pair.slots.tolist() == [s for s in range(bounds[1]) if alive[s]]
    whole = upkeep.merge_all([seg for seg, _ in parts], alive, 101)
    assert held(whole) == live[0] | live[1] | live[2]
    assert whole.slots.tolist() == np.flatnonzero(alive).tolist()
    assert_well_formed(pair)
    assert_well_formed(whole)


@pytest.mark.parametrize("seed", range(20))
def test_renumbered_segments_hold_the_live_postings_under_the_new_numbers(seed: int) -> None:
    rng = random.Random(seed)
    parts = [segment(rng, 1, range(0, 20), 30), segment(rng, 2, range(20, 45), 30)]
    alive = np.array([rng.random() < 0.6 for _ in range(45)], dtype=np.bool_)
    for seg, _ in parts:
        seg.live = int(alive[seg.slots].sum())
    live_slots = np.flatnonzero(alive)
    new_slot = np.full(45, -1, dtype=np.int64)
    new_slot[live_slots] = np.arange(len(live_slots))
    # Every term a live slot has is kept (as renumbering keeps the terms of df > 0), and some others.
    kept = sorted({t for _, postings in parts for t, s, _ in postings if alive[s]} | set(rng.sample(range(30), 5)))
    new_term = np.full(30, -1, dtype=np.int32)
    new_term[kept] = np.arange(len(kept), dtype=np.int32)
    ids = count(10)
    fresh, seg_of = upkeep.renumbered(
        [seg for seg, _ in parts], alive, new_slot, new_term, len(live_slots), ids.__next__
    )
    assert [seg.id for seg in fresh] == [10, 11]
    for seg, (_, postings) in zip(fresh, parts, strict=True):
        assert held(seg) == {(int(new_term[t]), int(new_slot[s]), f) for t, s, f in postings if alive[s]}
        assert_well_formed(seg)
        assert seg_of[seg.slots].tolist() == [seg.id] * len(seg.slots)
    assert sorted(s for seg in fresh for s in seg.slots.tolist()) == list(range(len(live_slots)))


def with_live(*lives: int) -> list[Segment]:
    """Segments without postings holding these many live slots."""
    empty = np.zeros(0, dtype=np.int32)
    tfs = np.zeros((0, 1), dtype=np.int32)
    return [Segment(0, empty, np.zeros(1, dtype=np.int64), empty, tfs, np.zeros(n, dtype=np.int32)) for n in lives]


def test_when_to_merge_and_when_to_renumber() -> None:
    assert upkeep.merges_next(with_live(10, 5), 1000)  # at most twice the newest: merge
    assert not upkeep.merges_next(with_live(11, 5), 1000)
    assert not upkeep.merges_next(with_live(250, 200), 1000)  # a quarter of the corpus: left alone
    assert not upkeep.merges_next(with_live(5), 1000)
    assert not upkeep.needs_renumbering(256 + 64, 256) and upkeep.needs_renumbering(256 + 65, 256)
    assert not upkeep.needs_renumbering(10 + 64, 10)  # below 256 live, up to 64 dead slots stay
    assert upkeep.needs_renumbering(4000 + 1001, 4000)


def test_vocabulary_compaction_keeps_term_ids_consistent() -> None:
    index: BM25Index[int] = BM25Index()
    for i in range(600):
        index.replace("churn", [Doc(i, [[f"gone{i}", "kept"]], ("churn", 1))])
        index.replace(f"still{i % 3}", [Doc(10_000 + i, [[f"stay{i % 3}", "kept"]], (f"still{i % 3}", 1))])
    assert index.df("gone0") == 0 and index.df("gone599") == 1 and index.df("kept") == 4
    assert [h.payload for h in index.search(["gone599"], 5)] == [599]
    assert [h.payload for h in index.search(["stay1"], 5)] == [10_000 + 598]
    assert index.n_terms < 300


def test_many_small_updates_keep_few_segments_and_reclaim_dead_slots() -> None:
    index: BM25Index[int] = BM25Index()
    for i in range(2000):
        index.replace(f"f{i % 50}", [Doc(i, [["word", f"u{i}"]], (f"f{i % 50}", 1))])
    assert index.n_docs == 50
    assert index.n_segments <= 12
    assert index.n_slots < 400  # dead slots are renumbered away
    assert index.n_terms < 400  # and so are the terms only dead documents had
    assert sorted(h.payload for h in index.search(["word"], 100)) == list(range(1950, 2000))
