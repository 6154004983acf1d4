"""The corpus indexed end to end, through the retriever interface (seed 004)."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

import pytest

from corpus.catalog import load
from corpus.roots import make_roots
from retrieval.engine.library import Library, index_corpus
from retrieval.engine.ranking import DEFAULT
from retrieval.search.answer import SECTIONS, WINDOWS
from retrieval.search.policy import served
from retrieval.search.retriever import BM25Retriever, Partial, RetrievalRequest, Retriever


def test_sections_search_only_unpinned_agents_files_and_windows_search_everything(
    make_tree: Callable[..., Path],
) -> None:
    agents = make_tree(
        {
            "overview.md": "# Overview\nThe deploy pipeline is described elsewhere.\n",
            "deploy.md": "# Deploy\nThe deploy pipeline runs on green builds.\n\n# Rollback\nRevert.\n",
        }
    )
    docs = make_tree({"guide.md": "# Guide\nA deploy walkthrough.\n"}, name="docs")
    library = index_corpus(load(make_roots([agents], [docs])))
    sections: Retriever = served(library, SECTIONS)
    windows: Retriever = served(library, WINDOWS)

    found = sections.retrieve(RetrievalRequest("deploy pipeline", k=5))
    assert [(d.source, d.unit.heading) for d in found] == [(".AGENTS/deploy.md", "Deploy")]
    assert found[0].content == "# Deploy\nThe deploy pipeline runs on green builds."

    paths = [d.source for d in windows.retrieve(RetrievalRequest("deploy", k=5))]
    assert sorted(paths) == [".AGENTS/deploy.md", ".AGENTS/overview.md", "docs/guide.md"]
    assert windows.retrieve(RetrievalRequest("deploy", k=5))[0].id.endswith("#0")


def test_an_empty_answer_is_success_not_an_error(make_tree: Callable[..., Path]) -> None:
    library = index_corpus(load(make_roots([make_tree({"a.md": "# A\nalpha\n"})])))
    assert served(library, SECTIONS).retrieve(RetrievalRequest("zeta", k=3)) == []
    assert served(library, SECTIONS).retrieve(RetrievalRequest("the of and", k=3)) == []


def test_updating_a_file_replaces_its_units(make_tree: Callable[..., Path]) -> None:
    library = index_corpus(load(make_roots([make_tree({"a.md": "# A\nalpha\n"})])))
    library.apply({".AGENTS/a.md": library.prepare(".AGENTS/a.md", "agents://a.md", "# A\nomega\n", True)})
    assert served(library, SECTIONS).retrieve(RetrievalRequest("alpha")) == []
    assert len(served(library, SECTIONS).retrieve(RetrievalRequest("omega"))) == 1
    library.apply({".AGENTS/a.md": None})
    assert served(library, WINDOWS).retrieve(RetrievalRequest("omega")) == []


def numbered_lines(n_lines: int, marked: set[int]) -> str:
    return "".join(
        ("zebra " if i in marked else "") + " ".join(f"w{i}_{j}" for j in range(10)) + "\n" for i in range(n_lines)
    )


def test_search_docs_never_returns_two_overlapping_windows(make_tree: Callable[..., Path]) -> None:
    # Plain windows of this file are lines 1-50, 46-95, 91-100: "zebra" sits in the overlap of the first two.
    library = index_corpus(load(make_roots([make_tree({"a.md": numbered_lines(100, {46, 47, 48})})])))
    raw = library.windows.search(library.tokenize("zebra"), 5)
    assert [h.payload.chunk_id for h in raw] == [0, 1]  # both windows match...
    found = served(library, WINDOWS).retrieve(RetrievalRequest("zebra", k=5))
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
    found = served(library, SECTIONS).retrieve(RetrievalRequest("sigterm sigkill", k=5))
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
        return [(d.source, d.score) for d in retriever.retrieve(RetrievalRequest("rollback switch", k=5))]

    scores = {floor: search(floor) for floor in (0.0, 0.3, 1.0)}
    (best, top), (weak, low) = scores[0.0]
    assert best == ".AGENTS/a.md" and weak == ".AGENTS/b.md" and low < 0.3 * top
    assert scores[0.3] == [(best, top)]
    assert scores[1.0] == [(best, top)]
    assert DEFAULT.score_floor == 0.3


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
    assert [d.source for d in served(plain, SECTIONS).retrieve(RetrievalRequest("rollback", k=5))] == [
        ".AGENTS/a.md",
        ".AGENTS/b.md",
    ]
    found = [d.source for d in served(expanded, SECTIONS).retrieve(RetrievalRequest("rollback", k=5))]
    assert found[:2] == [".AGENTS/a.md", ".AGENTS/b.md"]  # the original terms still lead
    assert found[2:] == [".AGENTS/c.md"]  # "kill switch" came from the first two hits


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
    with pytest.raises(Partial) as caught:
        retriever.retrieve(expired)
    assert caught.value.docs == []
