"""Corpora for the engine tests: random files of documents of fields of terms, fresh builds, the
comparison of an index with a fresh build, and explanations counted from the text (the oracle of
those read from the postings)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

from hypothesis import strategies as st

from retrieval.engine.index import BM25Index, Doc, Field
from retrieval.engine.ranking import DEFAULT


def build(corpus: Sequence[Sequence[str]]) -> BM25Index[int]:
    index: BM25Index[int] = BM25Index()
    for i, terms in enumerate(corpus):
        index.replace(f"doc{i:04d}", [Doc(i, [list(terms)], (f"doc{i:04d}", 1))])
    return index


Corpus = dict[str, list[list[list[str]]]]
"""File name -> its documents -> their fields -> terms."""


WORDS = "ab cd ef gh ij kl mn op".split()


words = st.lists(st.sampled_from(WORDS), max_size=12)


corpora = st.dictionaries(
    st.sampled_from([f"f{i}.md" for i in range(12)]),
    st.lists(st.tuples(words, words, words).map(list), max_size=4),
    max_size=12,
)


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
    """Same documents, the same hits with the same floats in the same order, the same
    explanations, the same stored text: what a fresh build of the same files gives."""
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
