"""BM25F scores against an oracle (rank-bm25 with the Lucene idf, a reference BM25F), the defect we avoid, ties, and explanations from the postings."""

from __future__ import annotations

import math
import random
from collections import Counter
from collections.abc import Sequence
from itertools import chain

import pytest
from hypothesis import given
from hypothesis import strategies as st
from rank_bm25 import BM25Okapi

from retrieval.engine.index import BM25Index, Doc, Field
from retrieval.engine.ranking import DEFAULT
from tests.retrieval.engine.support import (
    FIELD_SETS,
    WORDS,
    Corpus,
    build,
    corpora,
    explained_from_text,
    fresh,
    stored_texts,
)


class LuceneIdfOkapi(BM25Okapi):  # type: ignore[misc]
    """rank-bm25's Okapi scoring with the Lucene idf: the formula we claim to implement."""

    def _calc_idf(self, nd: dict[str, int]) -> None:
        self.idf = {w: math.log(1 + (self.corpus_size - df + 0.5) / (df + 0.5)) for w, df in nd.items()}


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


@pytest.mark.parametrize(("repeats", "dtype"), [(3, "uint8"), (300, "uint16"), (70_000, "int32")])
def test_frequencies_are_stored_narrow_and_score_exactly_whatever_their_size(repeats: int, dtype: str) -> None:
    corpus = [["flood"] * repeats + ["rare"], ["flood", "dry"], ["dry", "rare", "rare"]]
    index = build(corpus)
    widths = {str(s.tfs.dtype) for s in index._segments}
    assert dtype in widths and widths <= {dtype, "uint8"}  # each segment as narrow as its own largest
    oracle = LuceneIdfOkapi(corpus, k1=1.5, b=0.75)
    for query in (["flood"], ["rare", "flood"], ["dry"]):
        expected = list(oracle.get_scores(query))
        assert our_scores(index, query, len(corpus)) == pytest.approx(expected, rel=1e-12, abs=1e-12)
    index.replace("doc0001", [Doc(1, [["flood"] * 2], ("doc0001", 1))])
    index.merge_all()  # segments of two widths in one
    assert [str(s.tfs.dtype) for s in index._segments] == [dtype]
    corpus[1] = ["flood"] * 2
    oracle = LuceneIdfOkapi(corpus, k1=1.5, b=0.75)
    assert our_scores(index, ["flood"], len(corpus)) == pytest.approx(list(oracle.get_scores(["flood"])), rel=1e-12)


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
    index.replace("b.md", [Doc("b.md:9", [["same"]], ("b.md", 9)), Doc("b.md:2", [["same"]], ("b.md", 2))])
    index.replace("a.md", [Doc("a.md:5", [["same"]], ("a.md", 5))])
    assert [h.payload for h in index.search(["same"], 3)] == ["a.md:5", "b.md:2", "b.md:9"]
    assert [h.payload for h in index.search(["same"], 2)] == ["a.md:5", "b.md:2"]


def reference_bm25f(
    corpus: Sequence[Sequence[Sequence[str]]],
    fields: Sequence[Field],
    k1: float,
    query: Sequence[str],
    weights: Sequence[float] | None = None,
) -> list[float]:
    """BM25F written out term by term, independently of the engine (Robertson et al. 2004, with
    the Lucene idf): per field tf / (1 - b + b * len / avglen), weighted, summed, saturated."""
    n = len(corpus)
    avg = [sum(len(doc[f]) for doc in corpus) / n for f in range(len(fields))]
    df = Counter(t for doc in corpus for t in set(chain.from_iterable(doc)))
    scores = []
    for doc in corpus:
        score = 0.0
        for i, term in enumerate(query):
            if not df[term]:
                continue
            idf = math.log(1 + (n - df[term] + 0.5) / (df[term] + 0.5))
            tf = sum(
                field.weight * list(doc[f]).count(term) / (1 - field.b + field.b * len(doc[f]) / avg[f])
                for f, field in enumerate(fields)
                if avg[f] > 0
            )
            score += (1.0 if weights is None else weights[i]) * idf * tf * (k1 + 1) / (tf + k1)
        scores.append(score)
    return scores


def build_fields(corpus: Sequence[Sequence[Sequence[str]]], fields: Sequence[Field], k1: float) -> BM25Index[int]:
    index: BM25Index[int] = BM25Index(k1, fields=fields)
    for i, doc in enumerate(corpus):
        index.replace(f"doc{i:04d}", [Doc(i, [list(f) for f in doc], (f"doc{i:04d}", 1))])
    return index


def test_the_default_fields_score_like_a_reference_bm25f() -> None:
    fields = DEFAULT.fields
    assert len(fields) == 3 and fields[1].weight > fields[0].weight  # headings above body
    rng = random.Random(11)
    vocab = [f"t{i}" for i in range(120)]
    weights = [1 / (i + 1) for i in range(len(vocab))]
    corpus = [
        [
            rng.choices(vocab, weights, k=rng.randint(0, 60)),
            rng.choices(vocab, k=rng.randint(0, 6)),
            rng.choices(vocab, k=rng.randint(0, 3)),
        ]
        for _ in range(300)
    ]
    index = build_fields(corpus, fields, DEFAULT.k1)
    for _ in range(40):
        query = rng.choices(vocab, k=rng.randint(1, 5))
        qw = [rng.uniform(0.1, 2.0) for _ in query]
        for w in (None, qw):
            expected = reference_bm25f(corpus, fields, DEFAULT.k1, query, w)
            ours = [0.0] * len(corpus)
            for hit in index.search(query, len(corpus), w):
                ours[hit.payload] = hit.score
            assert ours == pytest.approx(expected, rel=1e-12, abs=1e-12)


def test_a_heading_match_outranks_the_same_words_in_the_body() -> None:
    corpus = [[["deploy", "steps"], [], []], [["steps"], ["deploy"], []], [["other"], [], []]]
    hits = build_fields(corpus, DEFAULT.fields, DEFAULT.k1).search(["deploy"], 3)
    assert [h.payload for h in hits] == [1, 0]


def test_plain_fields_are_one_field_of_weight_one() -> None:
    index: BM25Index[int] = BM25Index()
    assert index.fields == (Field("text", 1.0, 0.75),)
    with pytest.raises(ValueError, match="list of terms"):
        index.replace("a", [Doc(0, ["not", "fields"], ("a", 1))])


@given(files=corpora, config=st.sampled_from(sorted(FIELD_SETS)))
def test_the_index_stores_each_documents_first_field_in_text_order_and_explains_from_postings(
    files: Corpus, config: str
) -> None:
    fields = FIELD_SETS[config]
    index = fresh(files, fields)
    expected = {f"{name}:{i}": d[0] for name, docs in files.items() for i, d in enumerate(docs)}
    texts = stored_texts(index, WORDS)  # the documents with any word in any field
    assert {p for p, t in expected.items() if t} <= set(texts)
    assert all(t == expected[p] for p, t in texts.items())
    some = {i: w for w in ("cd", "ef", "kl") if (i := index.term_id(w)) is not None}
    hits = index.search(WORDS, 100)
    for hit, (positions, ids, _) in zip(hits, index.occurrences([h.slot for h in hits], list(some)), strict=True):
        want = [(at, w) for at, w in enumerate(expected[hit.payload]) if w in some.values()]
        assert list(zip(positions, [some[i] for i in ids], strict=True)) == want
    docs = {f"{name}:{i}": d if fields else d[:1] for name, docs in files.items() for i, d in enumerate(docs)}
    for query in (["ab"], ["cd", "ef", "cd"], WORDS):  # the postings explain a hit as its terms do
        hits = index.search(query, 100)
        for hit, why in zip(hits, index.explain_slots(query, [h.slot for h in hits]), strict=True):
            assert why == explained_from_text(index, query, docs[hit.payload])
