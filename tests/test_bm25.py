"""The engine's scores against an oracle, the defect we avoid, ties, and exact updates."""

from __future__ import annotations

import math
import random
from collections.abc import Sequence

import pytest
from hypothesis import given
from hypothesis import strategies as st
from rank_bm25 import BM25Okapi

from retrieval.index import BM25Index, Doc


class LuceneIdfOkapi(BM25Okapi):  # type: ignore[misc]
    """rank-bm25's Okapi scoring with the Lucene idf: the formula we claim to implement."""

    def _calc_idf(self, nd: dict[str, int]) -> None:
        self.idf = {w: math.log(1 + (self.corpus_size - df + 0.5) / (df + 0.5)) for w, df in nd.items()}


def build(corpus: Sequence[Sequence[str]]) -> BM25Index[int]:
    index: BM25Index[int] = BM25Index()
    for i, terms in enumerate(corpus):
        index.replace(f"doc{i:04d}", [Doc(i, list(terms), (f"doc{i:04d}", 1))])
    return index


def our_scores(index: BM25Index[int], query: Sequence[str], n: int) -> list[float]:
    scores = [0.0] * n
    for hit in index.search(query, n):
        scores[hit.payload] = hit.score
    return scores


FIXTURE = [
    ["security", "secrets", "never", "print", "env", "files"],
    ["deploy", "pipeline", "runs", "tests", "then", "deploy"],
    ["glossary", "retriever", "bm25", "index", "section"],
    ["security", "review", "every", "deploy"],
    [],
    ["bm25", "bm25", "bm25", "lucene", "idf"],
]


@pytest.mark.parametrize(
    "query",
    [["security"], ["deploy", "security"], ["bm25", "idf"], ["missing"], ["deploy", "deploy"], []],
)
def test_scores_equal_the_lucene_idf_oracle_on_a_fixture(query: list[str]) -> None:
    expected = list(LuceneIdfOkapi(FIXTURE, k1=1.5, b=0.75).get_scores(query))
    assert our_scores(build(FIXTURE), query, len(FIXTURE)) == pytest.approx(expected, rel=1e-12, abs=1e-12)


def test_scores_equal_the_oracle_on_a_random_corpus() -> None:
    rng = random.Random(7)
    vocab = [f"t{i}" for i in range(300)]
    weights = [1 / (i + 1) for i in range(len(vocab))]  # Zipf-like, so df varies widely
    corpus = [rng.choices(vocab, weights, k=rng.randint(0, 80)) for _ in range(400)]
    index = build(corpus)
    oracle = LuceneIdfOkapi(corpus, k1=1.5, b=0.75)
    for _ in range(50):
        query = rng.choices(vocab, k=rng.randint(1, 5))
        expected = list(oracle.get_scores(query))
        assert our_scores(index, query, len(corpus)) == pytest.approx(expected, rel=1e-12, abs=1e-12)


def test_rank_bm25_okapi_scores_a_matching_document_zero_on_a_small_corpus() -> None:
    """The defect that rules BM25Okapi out for ranking: its idf floor makes a match worthless."""
    corpus = [["apple", "pie"], ["banana", "split"]]
    assert list(BM25Okapi(corpus).get_scores(["apple"])) == [0.0, 0.0]
    hits = build(corpus).search(["apple"], 5)
    assert [h.payload for h in hits] == [0]
    assert hits[0].score > 0


def test_zero_scores_are_never_returned() -> None:
    index = build([["alpha"], ["beta"], ["gamma"]])
    assert [h.payload for h in index.search(["alpha", "nothing"], 10)] == [0]
    assert index.search(["nothing"], 10) == []
    assert index.search([], 10) == []


def test_ties_break_by_path_then_start_line() -> None:
    index: BM25Index[str] = BM25Index()
    index.replace("b.md", [Doc("b.md:9", ["same"], ("b.md", 9)), Doc("b.md:2", ["same"], ("b.md", 2))])
    index.replace("a.md", [Doc("a.md:5", ["same"], ("a.md", 5))])
    assert [h.payload for h in index.search(["same"], 3)] == ["a.md:5", "b.md:2", "b.md:9"]
    assert [h.payload for h in index.search(["same"], 2)] == ["a.md:5", "b.md:2"]


Corpus = dict[str, list[list[str]]]

corpora = st.dictionaries(
    st.sampled_from([f"f{i}.md" for i in range(12)]),
    st.lists(st.lists(st.sampled_from("ab cd ef gh ij kl mn op".split()), max_size=12), max_size=4),
    max_size=12,
)


def fresh(files: Corpus) -> BM25Index[str]:
    index: BM25Index[str] = BM25Index()
    for name in sorted(files):
        index.replace(name, [Doc(f"{name}:{i}", t, (name, i)) for i, t in enumerate(files[name])])
    return index


@given(st.lists(corpora, min_size=1, max_size=6))
def test_any_sequence_of_file_updates_scores_exactly_like_a_fresh_build(states: list[Corpus]) -> None:
    live: BM25Index[str] = BM25Index()
    current: Corpus = {}
    for state in states:
        for name in set(current) - set(state):
            live.remove(name)
        for name, docs in state.items():
            live.replace(name, [Doc(f"{name}:{i}", t, (name, i)) for i, t in enumerate(docs)])
        current = state
    rebuilt = fresh(current)
    assert live.n_docs == rebuilt.n_docs
    for query in (["ab"], ["cd", "ef"], ["gh", "gh", "ij"], "ab cd ef gh ij kl mn op".split()):
        ours = [(h.payload, h.score) for h in live.search(query, 100)]
        theirs = [(h.payload, h.score) for h in rebuilt.search(query, 100)]
        assert ours == theirs  # exact: same floats, same order


def test_many_small_updates_keep_few_segments_and_reclaim_dead_slots() -> None:
    index: BM25Index[int] = BM25Index()
    for i in range(2000):
        index.replace(f"f{i % 50}", [Doc(i, ["word", f"u{i}"], (f"f{i % 50}", 1))])
    assert index.n_docs == 50
    assert index.n_segments <= 12
    assert len(index._payloads) < 400  # dead slots are renumbered away
    assert sorted(h.payload for h in index.search(["word"], 100)) == list(range(1950, 2000))
