"""The retriever: BM25F, the proximity rerank of the best hits, phrases, copies, the score floor and the deadline."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from itertools import pairwise
from pathlib import Path

import pytest

from corpus.catalog import load
from corpus.roots import make_roots
from retrieval.engine.library import Library, index_corpus
from retrieval.engine.ranking import DEFAULT, PLAIN
from retrieval.search.policy import served
from retrieval.search.request import SECTIONS, WINDOWS
from retrieval.search.retriever import BM25Retriever, RetrievalRequest
from tests.retrieval.engine.support import explained_from_text

FILLER = "alpha beta gamma delta epsilon zeta theta iota kappa lambda"


def reference_bm25tp(tokens: Sequence[str], idf: dict[str, float], k1: float, norm: float) -> float:
    """BM25TP written out from the paper: the query-term occurrences in text order; each pair of
    neighbours that differ adds the other's idf over the squared distance to both terms."""
    hits = [(at, t) for at, t in enumerate(tokens) if t in idf]
    acc = dict.fromkeys(idf, 0.0)
    for (at1, t1), (at2, t2) in pairwise(hits):
        if t1 != t2:
            acc[t1] += idf[t2] / (at2 - at1) ** 2
            acc[t2] += idf[t1] / (at2 - at1) ** 2
    big_k = k1 * norm
    return sum(min(1.0, idf[t]) * a * (k1 + 1) / (a + big_k) for t, a in acc.items())


def corpus_files() -> dict[str, str]:
    """Four files holding the query's words, and unrelated ones that give those words an idf."""
    unrelated = {f"unrelated{i}.md": f"# Page {i}\n\nNothing about it, page {i}.\n" for i in range(20)}
    return {
        "near.md": f"# Notes\n\n{FILLER} The server does not exit on its own. {FILLER}\n",
        "far.md": f"# Memo\n\nThe server {FILLER} does not {FILLER} exit.\n",
        "other.md": "# Shutdown\n\nClose stdin and wait for the server to exit.\n",
        "more.md": f"# Misc\n\n{FILLER} exit codes {FILLER} server logs.\n",
        **unrelated,
    }


def test_scores_are_bm25f_plus_the_reference_bonus_on_the_top_hits(make_tree: Callable[..., Path]) -> None:
    library = index_corpus(load(make_roots([make_tree(corpus_files())])), Library(DEFAULT.but(score_floor=0.0)))
    index, query = library.sections, "server does not exit"
    terms = library.tokenize(query)
    first = {h.payload.id: h.score for h in index.search(terms, 10)}
    idf = {t: index.idf(t) for t in dict.fromkeys(terms)}
    body = index.fields[0]
    found = served(library, SECTIONS).search(RetrievalRequest(query, k=10)).docs
    assert len(found) == len(first) == 4
    for doc in found:
        tokens = library.tokenize(doc.content)
        norm = 1 - body.b + body.b * len(tokens) / index.avg_lengths()[0]
        bonus = DEFAULT.proximity * reference_bm25tp(tokens, idf, index.k1, norm)
        assert doc.score == pytest.approx(first[doc.id] + bonus, rel=1e-12)
        assert sum(s for _, s in doc.proximity) == pytest.approx(bonus, rel=1e-12)
        # What an explanation shows: BM25F's per-term shares plus the bonus add up to the score.
        shares = sum(s for _, s, _ in explained_from_text(index, terms, library.ranking.terms(doc.unit)))
        assert shares + sum(s for _, s in doc.proximity) == pytest.approx(doc.score, rel=1e-9)
    assert [d.score for d in found] == sorted((d.score for d in found), reverse=True)


def test_words_close_together_outrank_the_same_words_far_apart(make_tree: Callable[..., Path]) -> None:
    files = corpus_files()
    corpus = load(make_roots([make_tree({"far.md": files["far.md"], "near.md": files["near.md"]})]))

    def order(ranking_library: Library) -> list[str]:
        found = served(ranking_library, SECTIONS).search(RetrievalRequest("server does not exit", k=5)).docs
        return [d.source for d in found]

    # The same words in texts of the same length: BM25F ties them and breaks the tie by path.
    assert order(index_corpus(corpus, Library(DEFAULT.but(proximity=0.0, score_floor=0.0)))) == [
        ".AGENTS/far.md",
        ".AGENTS/near.md",
    ]
    assert order(index_corpus(corpus, Library(DEFAULT.but(score_floor=0.0)))) == [".AGENTS/near.md", ".AGENTS/far.md"]


def test_only_the_rerank_depth_is_rescored_and_the_ranking_stays_in_score_order(
    make_tree: Callable[..., Path],
) -> None:
    corpus = load(make_roots([make_tree(corpus_files())]))
    library = index_corpus(corpus, Library(DEFAULT.but(score_floor=0.0, rerank_depth=2)))
    first = library.sections.search(library.tokenize("server does not exit"), 10)
    found = served(library, SECTIONS).search(RetrievalRequest("server does not exit", k=10)).docs
    rescored = {h.payload.id for h in first[:2]}
    for doc in found:
        if doc.id not in rescored:
            assert doc.proximity == () and doc.score == next(h.score for h in first if h.payload.id == doc.id)
    assert [d.score for d in found] == sorted((d.score for d in found), reverse=True)
    assert {d.id for d in found[:2]} == rescored  # a bonus never lifts one above the other stage


def test_the_plain_configuration_has_no_proximity_stage(make_tree: Callable[..., Path]) -> None:
    library = index_corpus(load(make_roots([make_tree(corpus_files())])), Library(PLAIN))
    terms = library.tokenize("server does not exit")
    expected = [(h.payload.id, h.score) for h in library.sections.search(terms, 10)]
    found = served(library, SECTIONS).search(RetrievalRequest("server does not exit", k=10)).docs
    assert [(d.id, d.score) for d in found] == expected
    assert PLAIN.proximity == 0.0 and DEFAULT.proximity > 0


def test_the_rerank_stops_at_the_deadline(make_tree: Callable[..., Path]) -> None:
    library = index_corpus(load(make_roots([make_tree(corpus_files())])), Library(DEFAULT.but(score_floor=0.0)))
    seen: list[str] = []

    def counting(text: str) -> Sequence[str]:
        seen.append(text)
        return library.tokenize(text)

    retriever = BM25Retriever(library.sections, counting, proximity=DEFAULT.proximity, depth=DEFAULT.rerank_depth)
    expired = RetrievalRequest("server does not exit", k=3, deadline=time.monotonic() - 1)
    assert retriever.search(expired).partial
    assert seen == ["server does not exit"]  # the query only: no candidate was re-tokenized
    found = retriever.search(RetrievalRequest("server does not exit", k=3, deadline=time.monotonic() + 60)).docs
    assert len(found) == 3 and len(seen) > 1


def test_scores_do_not_depend_on_the_order_files_were_indexed(make_tree: Callable[..., Path]) -> None:
    corpus = load(make_roots([make_tree(corpus_files())]))
    one = index_corpus(corpus)
    two = Library()
    for path in sorted(corpus.files, reverse=True):
        f = corpus.files[path]
        two.apply({path: two.prepare(f.path, f.uri, f.text, f.searchable)})
    for query in ("server does not exit", "exit server", "stdin server exit"):
        a = served(one, SECTIONS).search(RetrievalRequest(query, k=5)).docs
        b = served(two, SECTIONS).search(RetrievalRequest(query, k=5)).docs
        assert [(d.id, d.score, d.proximity) for d in a] == [(d.id, d.score, d.proximity) for d in b]


def test_an_empty_answer_is_success_not_an_error(make_tree: Callable[..., Path]) -> None:
    library = index_corpus(load(make_roots([make_tree({"a.md": "# A\nalpha\n"})])))
    assert served(library, SECTIONS).search(RetrievalRequest("zeta", k=3)).docs == []
    assert served(library, SECTIONS).search(RetrievalRequest("the of and", k=3)).docs == []


def numbered_lines(n_lines: int, marked: set[int]) -> str:
    return "".join(
        ("zebra " if i in marked else "") + " ".join(f"w{i}_{j}" for j in range(10)) + "\n" for i in range(n_lines)
    )


def test_search_docs_never_returns_two_overlapping_windows(make_tree: Callable[..., Path]) -> None:
    # Plain windows of this file are lines 1-50, 46-95, 91-100: "zebra" sits in the overlap of the first two.
    library = index_corpus(load(make_roots([make_tree({"a.md": numbered_lines(100, {46, 47, 48})})])))
    raw = library.windows.search(library.tokenize("zebra"), 5)
    assert [h.payload.chunk_id for h in raw] == [0, 1]  # both windows match...
    found = served(library, WINDOWS).search(RetrievalRequest("zebra", k=5)).docs
    assert [d.unit.chunk_id for d in found] == [0]  # ...but the same lines are shown once


def test_near_copies_with_the_same_heading_are_shown_once(make_tree: Callable[..., Path]) -> None:
    page = (
        "# Shutdown\n\nThe client closes stdin, waits for the server process to exit, then sends "
        "SIGTERM and, if the server still runs after a grace period, SIGKILL.\n"
    )
    agents = make_tree(
        {
            "v1/stdio.md": page,
            "v2/stdio.md": page.replace("waits", "waits briefly"),
            "x.md": page.replace("# Shutdown", "# Signals"),
        }
    )
    library = index_corpus(load(make_roots([agents])))
    assert len(library.sections.search(library.tokenize("sigterm sigkill"), 5)) == 3
    found = served(library, SECTIONS).search(RetrievalRequest("sigterm sigkill", k=5)).docs
    assert [(d.source, d.unit.heading) for d in found] == [
        (".AGENTS/v1/stdio.md", "Shutdown"),
        (".AGENTS/x.md", "Signals"),
    ]


def test_the_score_floor_drops_weak_hits_but_never_the_best(make_tree: Callable[..., Path]) -> None:
    agents = make_tree(
        {
            "a.md": "# Rollback\n\nRollback the deploy with the rollback switch; rollback is instant.\n",
            "b.md": "# Notes\n\n" + "Unrelated words about many other things. " * 20 + "A rollback once.\n",
        }
    )
    corpus = load(make_roots([agents]))

    def search(floor: float) -> list[tuple[str, float]]:
        retriever = served(index_corpus(corpus, Library(DEFAULT.but(score_floor=floor))), SECTIONS)
        return [(d.source, d.score) for d in retriever.search(RetrievalRequest("rollback switch", k=5)).docs]

    scores = {floor: search(floor) for floor in (0.0, 0.3, 1.0)}
    (best, top), (weak, low) = scores[0.0]
    assert best == ".AGENTS/a.md" and weak == ".AGENTS/b.md" and low < 0.3 * top
    assert scores[0.3] == [(best, top)]
    assert scores[1.0] == [(best, top)]
    assert DEFAULT.score_floor == 0.3


def test_phrases_are_checked_in_score_order_and_the_deadline_is_honoured(make_tree: Callable[..., Path]) -> None:
    agents = make_tree(
        {
            "a.md": "# A\n\nRotate the watch filter token.\n",
            "b.md": "# B\n\nThe filter watch list.\n",
        }
    )
    library = index_corpus(load(make_roots([agents])), Library(DEFAULT.but(score_floor=0.0)))
    retriever = BM25Retriever(library.sections, library.tokenize)
    phrase = tuple(library.tokenize("watch filter"))
    found = retriever.search(RetrievalRequest("watch filter", k=5, phrases=(phrase,)))
    assert [d.source for d in found.docs] == [".AGENTS/a.md"] and not found.partial
    assert found.candidates == 2  # both hold the words; only one holds the phrase
    expired = RetrievalRequest("watch filter", k=5, deadline=time.monotonic() - 1, phrases=(phrase,))
    cut = retriever.search(expired)
    assert cut.partial and cut.docs == []
