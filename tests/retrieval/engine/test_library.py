"""The library: sections of the searchable .AGENTS files, windows of every file, one group per file."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from corpus.catalog import load
from corpus.roots import make_roots
from retrieval.engine.library import index_corpus
from retrieval.search.policy import served
from retrieval.search.request import SECTIONS, WINDOWS
from retrieval.search.retriever import RetrievalRequest, Retriever


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

    found = sections.search(RetrievalRequest("deploy pipeline", k=5)).docs
    assert [(d.source, d.unit.heading) for d in found] == [
        (".AGENTS/deploy.md", "Deploy"),
        (".AGENTS/overview.md", "Overview"),
    ]
    assert found[0].content == "# Deploy\nThe deploy pipeline runs on green builds."

    paths = [d.source for d in windows.search(RetrievalRequest("deploy", k=5)).docs]
    assert sorted(paths) == [".AGENTS/deploy.md", ".AGENTS/overview.md", "docs/guide.md"]
    assert windows.search(RetrievalRequest("deploy", k=5)).docs[0].id.endswith("#0")


def test_updating_a_file_replaces_its_units(make_tree: Callable[..., Path]) -> None:
    library = index_corpus(load(make_roots([make_tree({"a.md": "# A\nalpha\n"})])))
    library.apply({".AGENTS/a.md": library.prepare(".AGENTS/a.md", "agents://a.md", "# A\nomega\n", True)})
    assert served(library, SECTIONS).search(RetrievalRequest("alpha")).docs == []
    assert len(served(library, SECTIONS).search(RetrievalRequest("omega")).docs) == 1
    library.apply({".AGENTS/a.md": None})
    assert served(library, WINDOWS).search(RetrievalRequest("omega")).docs == []
