"""The postings store: any sequence of updates, merges, renumbering and packing scores exactly like a fresh build."""

from __future__ import annotations

import math
import random
from collections.abc import Sequence
from itertools import product

import pytest
from hypothesis import given
from hypothesis import strategies as st

from retrieval.engine import index as index_module
from retrieval.engine.index import BM25Index, Doc
from retrieval.engine.ranking import DEFAULT
from tests.retrieval.engine.support import (
    FIELD_SETS,
    WORDS,
    Corpus,
    corpora,
    docs_of,
    fresh,
    stored_texts,
)


def assert_scores_like(
    live: BM25Index[str], rebuilt: BM25Index[str], queries: Sequence[Sequence[str]], vocab: Sequence[str] = WORDS
) -> None:
    assert live.n_docs == rebuilt.n_docs
    for query in queries:
        ours = [(h.payload, h.score) for h in live.search(query, 1000)]
        theirs = [(h.payload, h.score) for h in rebuilt.search(query, 1000)]
        assert ours == theirs  # exact: same floats, same order
        explained = []
        for index in (live, rebuilt):
            hits = index.search(query, 50)
            why = index.explain_slots(query, [h.slot for h in hits])
            explained.append(list(zip([h.payload for h in hits], why, strict=True)))
        assert explained[0] == explained[1]
    assert stored_texts(live, vocab) == stored_texts(rebuilt, vocab)


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


@given(
    files=corpora,
    others=corpora,
    picked=st.lists(st.sampled_from([f"f{i}.md" for i in range(12)]), max_size=12),
    config=st.sampled_from(sorted(FIELD_SETS)),
)
def test_packed_groups_unpack_into_any_index_and_score_like_a_fresh_build(
    files: Corpus, others: Corpus, picked: list[str], config: str
) -> None:
    """What the persistent cache relies on: pack some files of one index, unpack them into an
    index that holds other files (other term ids), and every score is that of a fresh build."""
    fields = FIELD_SETS[config]
    source = fresh(files, fields)
    for name in list(files)[::2]:  # dead slots and several segments in the source
        source.replace(name, docs_of(name, files[name], fields))
    chosen = [n for n in dict.fromkeys(picked) if n in files]
    target = fresh({f"other/{n}": d for n, d in others.items()}, fields)
    target.unpack(source.pack(chosen))
    expected = fresh({**{n: files[n] for n in chosen}, **{f"other/{n}": d for n, d in others.items()}}, fields)
    assert sorted(map(str, target.groups())) == sorted(map(str, expected.groups()))
    for term in WORDS:
        assert target.df(term) == expected.df(term)
    assert_scores_like(target, expected, (["ab"], ["cd", "ef"], ["gh", "gh", "ij"], WORDS))
    for name in chosen:  # and removing an unpacked file later is exact too
        target.remove(name)
    assert_scores_like(target, fresh({f"other/{n}": d for n, d in others.items()}, fields), (WORDS,))
