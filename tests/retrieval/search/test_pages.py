"""`search_docs`' page bonus: a page whose headings and path say what the query asks rises over pages
that only use its words often, and the bonus is explained term by term."""

from __future__ import annotations

import math
from collections.abc import Callable
from pathlib import Path

import pytest

from corpus.catalog import load
from corpus.identity import split_display
from corpus.roots import make_roots
from retrieval.chunks.units import section_units
from retrieval.engine.index import BM25Index, Doc, Field, apart
from retrieval.engine.library import Library, index_corpus
from retrieval.engine.ranking import DEFAULT, PAGE, PLAIN
from retrieval.search.policy import served
from retrieval.search.request import SECTIONS, WINDOWS
from retrieval.search.retriever import RetrievalRequest

QUERY = "rate limit retry"


def files() -> dict[str, str]:
    """A reference page says what the query asks in its headings, deep in the page; a guide's text
    holds the query's words as often and is shorter, so by their text alone the guide leads."""
    filler = " ".join(f"word{i}" for i in range(60))
    unrelated = {f"misc/page{i}.md": f"# Page {i}\n\nNothing about it, topic {i}.\n" for i in range(20)}
    return {
        "reference/http.md": f"# HTTP reference\n\n{filler}\n\n## Rate limits\n\nPast the limit the API answers "
        "429.\n\n### Retry\n\nWait the seconds its header names, then retry.\n",
        "guides/client.md": "# Writing a client\n\n"
        + " ".join(f"note{i}" for i in range(40))
        + " The client waits on a rate limit and tries a retry later.\n",
        **unrelated,
    }


def pages(library: Library, query: str = QUERY) -> list[str]:
    found = served(library, WINDOWS).search(RetrievalRequest(query, k=5)).docs
    return list(dict.fromkeys(split_display(d.unit.path)[1] for d in found))


def test_a_page_whose_headings_say_what_is_asked_rises_over_one_that_only_uses_its_words(
    make_tree: Callable[..., Path],
) -> None:
    corpus = load(make_roots([], [make_tree(files())]))
    without = index_corpus(corpus, Library(DEFAULT.but(page_weight=0.0, score_floor=0.0)))
    assert pages(without)[:2] == ["guides/client.md", "reference/http.md"]
    shipped = index_corpus(corpus, Library(DEFAULT.but(score_floor=0.0)))
    assert pages(shipped)[:2] == ["reference/http.md", "guides/client.md"]


def test_a_files_first_window_holds_its_page_field_and_the_others_none(make_tree: Callable[..., Path]) -> None:
    tree = {**files(), "long.md": "# Long\n\n" + "\n\n".join(f"## Part {i}\n\n" + "word " * 300 for i in range(4))}
    corpus = load(make_roots([], [make_tree(tree)]))
    library = index_corpus(corpus, Library(DEFAULT))
    assert [f.name for f in library.windows.fields] == ["body", "heading", "path", PAGE]
    assert library.windows.fields[-1].weight == 0.0 and library.sections.fields == DEFAULT.fields
    [path] = [f.path for f in corpus.files.values() if f.rel == "long.md"]
    first, count = library.windows.span(path)
    assert count > 1
    # Every window of the page holds "part" (its text) and "long" (its path); only the first, in its page field.
    assert apart(library.windows, library.tokenize("long part"), 3).slots.tolist() == [first]
    assert DEFAULT.page_terms("docs/reference/http.md", [], ("ops",)) == ["op", "refer", "http"]


def test_the_bonus_is_explained_and_the_explanation_adds_up(make_tree: Callable[..., Path]) -> None:
    library = index_corpus(load(make_roots([], [make_tree(files())])), Library(DEFAULT.but(score_floor=0.0)))
    found = served(library, WINDOWS).search(RetrievalRequest(QUERY, k=5)).docs
    assert any(d.page for d in found)
    # The page matching best gains the page weight times the best score before any page bonus.
    best = max(sum(s for _, s in d.page) for d in found)
    lead = max(d.score - sum(s for _, s in d.page) for d in found)
    assert best == pytest.approx(DEFAULT.page_weight * lead, rel=1e-9)
    for doc in found:
        bm25f = sum(s for _, s, _ in doc.matched or ())
        bonuses = sum(s for _, s in doc.proximity) + sum(s for _, s in doc.page)
        assert bm25f + bonuses == pytest.approx(doc.score, rel=1e-9)
    assert [d.score for d in found] == sorted((d.score for d in found), reverse=True)


def test_one_window_a_page_carries_its_bonus(make_tree: Callable[..., Path]) -> None:
    """A long page whose headings match lifts its best window, not every window over other pages."""
    long = "# Rate limits\n\n" + "\n\n".join(
        f"## Retry {i}\n\n" + "\n".join(f"rate limit retry case{i}x{j}" for j in range(40)) for i in range(12)
    )
    library = index_corpus(load(make_roots([], [make_tree({**files(), "long.md": long})])), Library(DEFAULT))
    found = served(library, WINDOWS).search(RetrievalRequest(QUERY, k=10)).docs
    windows = [d for d in found if d.unit.path.endswith("/long.md")]
    assert len(windows) > 1
    assert [bool(d.page) for d in windows] == [True] + [False] * (len(windows) - 1)


def test_sections_and_the_plain_configuration_have_no_page_stage(make_tree: Callable[..., Path]) -> None:
    corpus = load(make_roots([make_tree(files())]))
    library = index_corpus(corpus, Library(DEFAULT))
    assert all(not d.page for d in served(library, SECTIONS).search(RetrievalRequest(QUERY, k=5)).docs)
    plain = index_corpus(corpus, Library(PLAIN))
    expected = [(h.payload.id, h.score) for h in plain.windows.search(plain.tokenize(QUERY), 5)]
    assert [(d.id, d.score) for d in served(plain, WINDOWS).search(RetrievalRequest(QUERY, k=5)).docs] == expected


def reference_bm25(docs: dict[str, list[str]], query: list[str], k1: float, b: float) -> dict[str, float]:
    """Lucene-idf BM25 written out over `docs` alone."""
    n = len(docs)
    average = sum(len(d) for d in docs.values()) / n
    scores: dict[str, float] = {}
    for name, terms in docs.items():
        score = 0.0
        for term in query:
            tf, df = terms.count(term), sum(term in d for d in docs.values())
            if tf:
                idf = math.log(1 + (n - df + 0.5) / (df + 0.5))
                norm = tf / (1 - b + b * len(terms) / average)
                score += idf * norm * (k1 + 1) / (norm + k1)
        if score:
            scores[name] = score
    return scores


def test_a_field_scored_apart_is_bm25_over_the_documents_holding_it_after_changes() -> None:
    fields = (Field("body", 1.0, 0.5), Field(PAGE, 0.0, 0.75))
    index: BM25Index[str] = BM25Index(1.5, fields=fields)

    def group(name: str, page: list[str], bodies: int = 2) -> list[Doc[str]]:
        return [Doc(f"{name}#{i}", [["body", "text"], page if i == 0 else []], (name, i)) for i in range(bodies)]

    index.replace("a.md", group("a.md", ["rate", "limit", "guide"]))
    index.replace("b.md", group("b.md", ["limit", "other", "limit"]))
    index.replace("c.md", group("c.md", ["unrelated"], 3))
    index.replace("a.md", group("a.md", ["rate", "limit", "reference", "rate"]))  # the old slots die
    index.replace("d.md", group("d.md", ["rate"], 1))
    pages = {"a.md#0": ["rate", "limit", "reference", "rate"], "b.md#0": ["limit", "other", "limit"]}
    pages |= {"c.md#0": ["unrelated"], "d.md#0": ["rate"]}
    query = ["rate", "limit", "rate"]
    want = reference_bm25(pages, query, 1.5, 0.75)
    found = apart(index, query, 1)
    by_slot = {index.span(name.split("#")[0])[0]: name for name in pages}
    assert {by_slot[s]: score for s, score in zip(found.slots.tolist(), found.scores.tolist(), strict=True)} == (
        pytest.approx(want, rel=1e-12)
    )
    assert found.best == pytest.approx(max(want.values()), rel=1e-12)
    slot = index.span("a.md")[0]
    assert sum(share for _, share in found.explain(slot)) == pytest.approx(found.score(slot), rel=1e-12)
    assert [t for t, _ in found.explain(slot)] == ["rate", "limit", "rate"]
    assert found.score(index.span("c.md")[0]) == 0.0
    assert index.search(["reference"], 5) == []  # BM25F never weighs the field apart
    # Counted again after a change: the corpus of pages is another one.
    index.replace("e.md", group("e.md", ["rate", "limit", "limit", "new", "words", "here"]))
    pages["e.md#0"] = ["rate", "limit", "limit", "new", "words", "here"]
    again = apart(index, query, 1)
    by_slot = {index.span(name.split("#")[0])[0]: name for name in pages}
    assert {by_slot[s]: x for s, x in zip(again.slots.tolist(), again.scores.tolist(), strict=True)} == (
        pytest.approx(reference_bm25(pages, query, 1.5, 0.75), rel=1e-12)
    )


def named_by_a_stop_word() -> dict[str, str]:
    """Next.js's `after()`: its page is named by a stop word, and other pages use the query's
    other words a little more."""
    use = "Call it inside a server function to schedule work"
    return {
        "functions/after.md": f"# after\n\n{use}.\n",
        **{f"functions/other{i}.md": f"# Helper {i}\n\n{use}, as any server function does.\n" for i in range(6)},
    }


def test_a_page_named_by_a_stop_word_is_found_by_that_name(make_tree: Callable[..., Path]) -> None:
    corpus = load(make_roots([], [make_tree(named_by_a_stop_word())]))
    library = index_corpus(corpus, Library(DEFAULT.but(score_floor=0.0)))
    assert pages(library, "after() server function")[0] == "functions/after.md"
    assert pages(library, "run work after the response with a server function")[0] == "functions/after.md"
    hit = served(library, WINDOWS).search(RetrievalRequest("after() function", k=3)).docs[0]
    assert dict(hit.page)["after"] > 0  # explained as the page match of the word the tokenizer drops elsewhere
    # Without the page bonus, the stop word reaches no field: the page ranks by its other words alone.
    plain = index_corpus(corpus, Library(DEFAULT.but(page_weight=0.0, score_floor=0.0)))
    assert pages(plain, "after() server function")[0] != "functions/after.md"


def test_only_a_name_that_is_one_stop_word_keeps_it(make_tree: Callable[..., Path]) -> None:
    assert DEFAULT.names("Run it after() the build, once") == ["it", "after", "the", "once"]
    assert DEFAULT.page_terms("docs/functions/after.md", [], ()) == ["function", "after"]
    assert "after" not in DEFAULT.page_terms("docs/guides/after-the-build.md", [], ())  # "build" names it
    tree = make_tree({"api.md": "# API\n\n## `once()`\n\nOnce.\n\n## What it is\n\nProse.\n"})
    library = Library(DEFAULT)
    [f] = load(make_roots([], [tree])).files.values()
    heads = section_units(f.path, f.uri, f.content())
    assert library.ranking.page_terms(f.path, heads) == ["api", "api", "once"]  # a heading of several is prose
    assert PLAIN.names("after the build") == ["the"]  # each tokenizer's own stop list
    assert DEFAULT.but(page_weight=0.0).fingerprint != DEFAULT.fingerprint


def test_a_query_of_stop_words_alone_finds_the_page_they_name(make_tree: Callable[..., Path]) -> None:
    library = index_corpus(load(make_roots([], [make_tree(named_by_a_stop_word())])), Library(DEFAULT))
    found = served(library, WINDOWS).search(RetrievalRequest("`after`", k=5)).docs
    assert [split_display(d.unit.path)[1] for d in found] == ["functions/after.md"]
    [hit] = found
    assert (
        dict(hit.page) == {"after": pytest.approx(hit.score, rel=1e-9)} and not hit.matched
    )  # the name's match, all of it
    assert served(library, WINDOWS).search(RetrievalRequest("the", k=5)).docs == []  # no page is named "the"
    assert served(library, SECTIONS).search(RetrievalRequest("after", k=5)).docs == []  # sections have no page field
