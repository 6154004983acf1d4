"""RM3 pseudo-relevance feedback (`--feedback`)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from corpus.catalog import load
from corpus.roots import make_roots
from retrieval.engine.library import Library, index_corpus
from retrieval.engine.ranking import DEFAULT
from retrieval.search.policy import served
from retrieval.search.request import SECTIONS
from retrieval.search.retriever import RetrievalRequest


def test_rm3_feedback_finds_a_section_through_its_neighbours_words(make_tree: Callable[..., Path]) -> None:
    agents = make_tree(
        {
            "a.md": "# Rollback\n\nRollback uses the kill switch.\n",
            "b.md": "# Rollback again\n\nA rollback flips the kill switch.\n",
            "c.md": "# Emergency\n\nThe kill switch stops everything.\n",
            "d.md": "# Unrelated\n\nNothing here.\n",
        }
    )
    corpus = load(make_roots([agents]))
    plain = index_corpus(corpus, Library(DEFAULT.but(score_floor=0.0)))
    expanded = index_corpus(corpus, Library(DEFAULT.but(score_floor=0.0, feedback=True)))
    assert [d.source for d in served(plain, SECTIONS).search(RetrievalRequest("rollback", k=5)).docs] == [
        ".AGENTS/a.md",
        ".AGENTS/b.md",
    ]
    found = [d.source for d in served(expanded, SECTIONS).search(RetrievalRequest("rollback", k=5)).docs]
    assert found[:2] == [".AGENTS/a.md", ".AGENTS/b.md"]  # the original terms still lead
    assert found[2:] == [".AGENTS/c.md"]  # "kill switch" came from the first two hits
