"""The postings store: any sequence of updates, merges and renumbering scores exactly like a fresh build."""

from __future__ import annotations

import math
import random
from itertools import product

import pytest
from hypothesis import given
from hypothesis import strategies as st

from retrieval.engine import index as index_module
from retrieval.engine import segments as segments_module
from retrieval.engine.index import BM25Index
from retrieval.engine.ranking import DEFAULT
from tests.retrieval.engine.support import (
    FIELD_SETS,
    WORDS,
    Corpus,
    assert_scores_like,
    corpora,
    docs_of,
    fresh,
)


@pytest.mark.parametrize("config", sorted(FIELD_SETS))
@given(states=st.lists(corpora, min_size=1, max_size=6), rng=st.randoms(use_true_random=False))
def test_any_sequence_of_file_updates_scores_exactly_like_a_fresh_build(
    config: str, states: list[Corpus], rng: random.Random
) -> None:
    fields = FIELD_SETS[config]
    live: BM25Index[str] = BM25Index(fields=fields)
    current: Corpus = {}
    for state in states:
        for name in set(current) - set(state):
            live.remove(name)
        if rng.random() < 0.5:  # one batch, as a watcher batch or a sweep applies it
            live.update({name: docs_of(name, docs, fields) for name, docs in state.items()})
        else:
            for name, docs in state.items():
                live.replace(name, docs_of(name, docs, fields))
        current = state
    assert_scores_like(live, fresh(current, fields), (["ab"], ["cd", "ef"], ["gh", "gh", "ij"], WORDS))


def test_a_larger_corpus_through_merges_renumbering_and_both_summing_paths(monkeypatch: pytest.MonkeyPatch) -> None:
    """Rare-term queries take the sparse path, frequent ones the dense one; hundreds of edits
    merge and renumber segments; scores stay those of a fresh build, whether the postings'
    contributions are cached for the generation (small indexes) or computed by the query."""
    rng = random.Random(7)
    vocab = [f"w{i}" for i in range(3000)]
    weights = [1 / (i + 1) for i in range(3000)]
    fields = DEFAULT.fields

    def file() -> list[list[list[str]]]:
        return [[rng.choices(vocab, weights, k=rng.randint(0, 40)), rng.choices(vocab[:50], k=2)] for _ in range(3)]

    files = {f"f{i:03d}.md": file() for i in range(400)}
    live: BM25Index[str] = BM25Index(fields=fields)
    live.update({name: docs_of(name, d, fields) for name, d in files.items()})
    queries = (["w0"], ["w0", "w1", "w2500"], ["w2999"], ["w1700", "w1800", "w1700"], ["w5", "zz"])
    for step in range(800):
        name = f"f{rng.randrange(460):03d}.md"
        if rng.random() < 0.15:
            files.pop(name, None)
            live.remove(name)
        else:
            files[name] = file()
            live.replace(name, docs_of(name, files[name], fields))
        if step % 200 == 0:
            assert_scores_like(live, fresh(files, fields), queries, vocab)
    assert_scores_like(live, fresh(files, fields), queries, vocab)
    rebuilt = fresh(files, fields)
    for query in queries:  # both ways of summing, with and without the cache, give the same floats
        weights = [1.0 + i / 3 for i in range(len(query))]
        by_path = []
        for fraction, cached in product((0.0, math.inf), (0, index_module._CACHED_POSTINGS)):
            monkeypatch.setattr(index_module, "_DENSE_FRACTION", fraction)
            monkeypatch.setattr(index_module, "_CACHED_POSTINGS", cached)
            live.generation += 1  # drop the caches of the other setting
            rebuilt.generation += 1
            # A generation's first query computes its own contributions, the next ones use the cache.
            for index, w in product((live, rebuilt), (None, weights, None, weights)):
                by_path.append([(h.payload, h.score) for h in index.ranked(query, 1000, w)[0]])
        assert all(hits == by_path[0] for hits in by_path[::2])
        assert all(hits == by_path[1] for hits in by_path[1::2])
        assert by_path[0] or query == ["w2999"]
    assert live.n_segments <= 12
    assert live.n_slots < 2 * live.n_docs + 256  # dead slots are renumbered away
    live.merge_all()
    assert live.n_segments == 1
    assert_scores_like(live, fresh(files, fields), queries, vocab)


@pytest.mark.parametrize("rows", [16, 1 << 20])  # segments find rows densely or by bisection; or by dict
def test_the_contributions_cache_gives_the_same_floats_however_segments_find_their_rows(
    rows: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(segments_module, "_DICT_ROWS", rows)
    rng = random.Random(7)
    vocab = [f"w{i}" for i in range(400)]
    fields = DEFAULT.fields
    files = {f"f{i:03d}.md": [[rng.choices(vocab, k=30), rng.choices(vocab[:20], k=2)]] for i in range(60)}
    index: BM25Index[str] = BM25Index(fields=fields)
    index.update({name: docs_of(name, d, fields) for name, d in list(files.items())[:40]})
    index.update({name: docs_of(name, d, fields) for name, d in list(files.items())[40:]})  # a sparse one
    for query in (["w0"], ["w3", "w399", "w17"], ["w250", "nothing"]):
        index.generation += 1
        first, second = (index.ranked(query, 100)[0] for _ in range(2))  # computed, then cached
        assert [(h.payload, h.score) for h in first] == [(h.payload, h.score) for h in second] != []
