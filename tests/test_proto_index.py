"""The speed prototype (`bench/proto_index.py`) keeps the engine's exactness.

A proposal is only valid if, after any sequence of updates, it scores `==` a fresh build; these
tests also pin it to today's engine (same order; scores to 1e-12: today's engine is BM25F, whose
expression rounds differently from plain BM25's).
"""

from __future__ import annotations

import math
import random
from collections.abc import Mapping, Sequence

from hypothesis import given
from hypothesis import strategies as st

from bench.proto_index import BM25Index as Proto
from retrieval.index import BM25Index, Doc

Corpus = Mapping[str, Sequence[Sequence[str]]]
WORDS = "ab cd ef gh ij kl mn op".split()
QUERIES: tuple[list[str], ...] = (["ab"], ["cd", "ef"], ["gh", "gh", "ij"], ["zz"], [], WORDS)

corpora = st.dictionaries(
    st.sampled_from([f"f{i}.md" for i in range(12)]),
    st.lists(st.lists(st.sampled_from(WORDS), max_size=12), max_size=4),
    max_size=12,
)


def docs(name: str, sections: Sequence[Sequence[str]]) -> list[Doc[str]]:
    return [Doc(f"{name}:{i}", [list(t)], (name, i)) for i, t in enumerate(sections)]


def results(index: BM25Index[str] | Proto[str], query: Sequence[str]) -> list[tuple[str, float]]:
    return [(h.payload, h.score) for h in index.search(query, 1000)]


def assert_same(live: Proto[str], files: Corpus) -> None:
    bulk: Proto[str] = Proto()
    bulk.replace_many((name, docs(name, files[name])) for name in sorted(files))
    today: BM25Index[str] = BM25Index()
    for name in sorted(files):
        today.replace(name, docs(name, files[name]))
    assert live.n_docs == bulk.n_docs == today.n_docs
    for term in WORDS:
        assert live.df(term) == bulk.df(term) == today.df(term)
    for query in QUERIES:
        assert results(live, query) == results(bulk, query)  # same floats
        assert_close(results(live, query), results(today, query))


def assert_close(ours: list[tuple[str, float]], theirs: list[tuple[str, float]]) -> None:
    assert [p for p, _ in ours] == [p for p, _ in theirs]
    assert all(math.isclose(a, b, rel_tol=1e-12) for (_, a), (_, b) in zip(ours, theirs, strict=True))


@given(st.lists(corpora, min_size=1, max_size=6), st.randoms(use_true_random=False))
def test_any_sequence_of_updates_scores_exactly_like_a_fresh_build_and_like_today(
    states: list[Corpus], rng: random.Random
) -> None:
    live: Proto[str] = Proto()
    current: Corpus = {}
    for state in states:
        for name in set(current) - set(state):
            live.remove(name)
        changed = [(name, docs(name, sections)) for name, sections in state.items()]
        if rng.random() < 0.5:
            live.replace_many(changed)
        else:
            for name, new in changed:
                live.replace(name, new)
        current = state
        assert_same(live, current)


def test_a_larger_random_corpus_through_merges_and_renumbering() -> None:
    rng = random.Random(7)
    vocab = [f"w{i}" for i in range(300)]
    weights = [1 / (i + 1) for i in range(300)]
    files = {f"f{i:03d}.md": [rng.choices(vocab, weights, k=rng.randint(0, 40)) for _ in range(3)] for i in range(200)}
    live: Proto[str] = Proto()
    live.replace_many((name, docs(name, s)) for name, s in files.items())
    for step in range(600):
        name = f"f{rng.randrange(260):03d}.md"
        if rng.random() < 0.15:
            files.pop(name, None)
            live.remove(name)
        else:
            files[name] = [rng.choices(vocab, weights, k=rng.randint(0, 40)) for _ in range(rng.randint(1, 4))]
            live.replace(name, docs(name, files[name]))
        if step % 100 == 0:
            assert_same(live, files)
    assert_same(live, files)
    assert live.n_segments <= 12
    assert len(live._payloads) < 2 * live.n_docs + 256  # dead slots are renumbered away
    for query in (["w0"], ["w0", "w1", "w250"], ["w299"]):
        today: BM25Index[str] = BM25Index()
        for name in sorted(files):
            today.replace(name, docs(name, files[name]))
        assert_close(results(live, query), results(today, query))


def test_pruned_queries_skip_frequent_postings_and_still_equal_today() -> None:
    rng = random.Random(11)
    vocab = [f"w{i}" for i in range(2000)]
    weights = [1 / (i + 1) ** 1.1 for i in range(2000)]
    files = {f"f{i:04d}.md": [rng.choices(vocab, weights, k=rng.randint(5, 60))] for i in range(1500)}
    live: Proto[str] = Proto()
    live.replace_many((name, docs(name, s)) for name, s in files.items())
    for i in range(0, 1500, 7):  # some dead slots and small segments too
        name = f"f{i:04d}.md"
        files[name] = [rng.choices(vocab, weights, k=rng.randint(5, 60))]
        live.replace(name, docs(name, files[name]))
    today: BM25Index[str] = BM25Index()
    for name in sorted(files):
        today.replace(name, docs(name, files[name]))
    pruned = 0
    for _ in range(300):
        query = [rng.choice(vocab[:20]), rng.choice(vocab[:20]), rng.choice(vocab[20:400])]
        for k in (1, 3, 10):
            pruned += live._pruned(live._entries(query), k) is not None
            assert_close(
                [(h.payload, h.score) for h in live.search(query, k)],
                [(h.payload, h.score) for h in today.search(query, k)],
            )
    assert pruned > 100  # the pruned path is really taken
