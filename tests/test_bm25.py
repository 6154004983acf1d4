"""The engine's scores against an oracle, the defect we avoid, ties, and exact updates."""

from __future__ import annotations

import math
import random
from collections import Counter
from collections.abc import Sequence
from itertools import chain, product
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from rank_bm25 import BM25Okapi

from retrieval.engine import index as index_module
from retrieval.engine.index import BM25Index, Doc, Field
from retrieval.engine.ranking import DEFAULT


class LuceneIdfOkapi(BM25Okapi):  # type: ignore[misc]
    """rank-bm25's Okapi scoring with the Lucene idf: the formula we claim to implement."""

    def _calc_idf(self, nd: dict[str, int]) -> None:
        self.idf = {w: math.log(1 + (self.corpus_size - df + 0.5) / (df + 0.5)) for w, df in nd.items()}


def build(corpus: Sequence[Sequence[str]]) -> BM25Index[int]:
    index: BM25Index[int] = BM25Index()
    for i, terms in enumerate(corpus):
        index.replace(f"doc{i:04d}", [Doc(i, [list(terms)], (f"doc{i:04d}", 1))])
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


Corpus = dict[str, list[list[list[str]]]]
"""File name -> its documents -> their fields -> terms."""

words = st.lists(st.sampled_from("ab cd ef gh ij kl mn op".split()), max_size=12)
corpora = st.dictionaries(
    st.sampled_from([f"f{i}.md" for i in range(12)]),
    st.lists(st.tuples(words, words, words).map(list), max_size=4),
    max_size=12,
)
WORDS = "ab cd ef gh ij kl mn op".split()
FIELD_SETS = {"plain": None, "default": DEFAULT.fields}


def docs_of(name: str, docs: list[list[list[str]]], fields: tuple[Field, ...] | None) -> list[Doc[str]]:
    return [Doc(f"{name}:{i}", d if fields else d[:1], (name, i)) for i, d in enumerate(docs)]


def fresh(files: Corpus, fields: tuple[Field, ...] | None) -> BM25Index[str]:
    """One bulk build, as at start-up."""
    index: BM25Index[str] = BM25Index(fields=fields)
    index.update({name: docs_of(name, files[name], fields) for name in sorted(files)})
    return index


def stored_texts(index: BM25Index[str], vocab: Sequence[str]) -> dict[str, list[str]]:
    """Every matched document's first field as the index stores it (for proximity, copies and
    phrases), read back through `occurrences` of the whole vocabulary."""
    words = {i: w for w in vocab if (i := index.term_id(w)) is not None}
    hits = index.search(vocab, 10**6)
    texts = {}
    for hit, (positions, ids, length) in zip(hits, index.occurrences([h.slot for h in hits], list(words)), strict=True):
        assert length == len(index.text(hit.slot))
        assert positions == list(range(length))  # every token is a vocabulary word
        texts[hit.payload] = [words[i] for i in ids]
    return texts


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


def explained_from_text(
    index: BM25Index[Any], terms: Sequence[str], doc_fields: Sequence[Sequence[str]]
) -> list[tuple[str, float, list[str]]]:
    """A document's explanation from its terms per field, counted from its text: what
    `explain_slots` reads from the postings must equal it."""
    counts = [Counter(field) for field in doc_fields]
    n = len(index.fields)
    return index._shares(
        terms,
        lambda term: [counts[f][term] if f < len(counts) else 0 for f in range(n)],
        [len(doc_fields[f]) if f < len(doc_fields) else 0 for f in range(n)],
        None,
    )


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
