"""Corpora and checks for the live index tests: what the engine ranks, a root equal to a fresh build,
and a docs tree large enough to be read in chunks."""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from corpus.roots import Root, make_roots
from live import sync, texts
from live.cache import IndexCache
from live.index import LiveIndex
from retrieval.engine.ranking import DEFAULT
from retrieval.render.grammar import condition_words

QUERIES = ["alpha", "beta gamma", "delta delta epsilon", "zeta eta theta iota", "heading"]


WORDS = "alpha beta gamma delta epsilon zeta eta theta iota kappa".split()


def ranked(live: LiveIndex, query: str) -> list[tuple[str, int | None, float]]:
    """Every unit that matches, straight from the engine (no redundancy filter, no floor)."""
    with live.view() as view:
        terms = view.library.tokenize(query)
        sections = view.library.sections.search(terms, 1000)
        windows = view.library.windows.search(terms, 1000)
    return [(h.payload.id, h.payload.chunk_id, h.score) for h in (*sections, *windows)]


def changing(live: LiveIndex, roots: Sequence[Root]) -> list[str]:
    """The roots whose files are still changing, as STATUS's `indexing` names them."""
    return [f"{c.label}:{condition_words(c)}" for c in live.conditions(roots) if c.changing]


def indexing(live: LiveIndex, roots: Sequence[Root]) -> list[str]:
    """The roots still being indexed, as STATUS's `indexing` says how far each got."""
    return [f"{c.label}:{condition_words(c)}" for c in live.conditions(roots) if c.building]


def doc(rng_words: Sequence[str], heading: str) -> str:
    return f"# {heading}\n\n{' '.join(rng_words)}\n\n## Sub {heading}\n\n{' '.join(reversed(rng_words))}\n"


AGENTS = {
    "overview.md": "# Overview\n\nPinned text about alpha.\n",
    "security.md": "# Security\n\nalpha beta rules.\n\n## Secrets\n\ngamma delta secrets.\n",
    "notes/deploy.md": "---\ntitle: Deploy notes\n---\n# Deploy\n\nbeta epsilon deploy.\n",
    "C#.md": "# Sharp\n\nzeta eta theta.\n",
    "plain.txt": "iota kappa plain text\nwithout headings\n",
}


DOCS = {f"page{i:02d}.md": f"# Page {i}\n\nalpha {'beta ' * (i % 4)}gamma{i} heading\n" for i in range(30)}


def open_live(agents: Path, docs: Path | None, cache_dir: Path | None, **kwargs: Any) -> LiveIndex:
    roots = make_roots([agents], [docs] if docs else [])
    store = IndexCache(cache_dir, DEFAULT.fingerprint) if cache_dir else None
    return LiveIndex(roots, cache=store, settle_s=0, **kwargs)


def assert_like_fresh(live: LiveIndex, agents: Path, docs: Path | None) -> None:
    fresh = open_live(agents, docs, None)
    assert sorted(live.corpus.files) == sorted(fresh.corpus.files)
    for path, f in fresh.corpus.files.items():
        assert texts.content(live.corpus.files[path]) == texts.content(f)
        assert live.corpus.files[path].held == f.held
        assert live.corpus.files[path].meta == f.meta
        assert live.corpus.files[path].pinned == f.pinned
    for query in [*QUERIES, "alpha beta", "secrets", "deploy notes", "sharp", "plain text", "gamma7"]:
        assert ranked(live, query) == ranked(fresh, query)  # exact: same units, floats and order
    with live.view() as view, fresh.view() as other:
        units = {u.id: u for p in live.corpus.files for u in view.library.sections.payloads(p)}
        expected = {u.id: u for p in fresh.corpus.files for u in other.library.sections.payloads(p)}
        assert units == expected  # text, lines, headings, trails and anchors restored exactly


def big_docs_tree(make_tree: Callable[..., Path]) -> tuple[Path, Path, int]:
    """A small .AGENTS and a docs root of one chunk and a bit more: read in two batches."""
    agents = make_tree({"overview.md": "# Overview\n\nhi\n", "rules.md": "# Rules\n\nalpha rules\n"})
    n = sync.CHUNK + 150
    docs = make_tree({f"d{i:05d}.md": f"# Doc {i}\n\nalpha word{i}\n" for i in range(n)}, name="big")
    return agents, docs, n


def held_after_first_chunk(at_boundary: threading.Event, release: threading.Event) -> Callable[[str], None]:
    """A progress hook that holds the background read after its first batch until `release`."""

    def progress(message: str) -> None:
        if "files read" in message and not at_boundary.is_set():
            at_boundary.set()
            release.wait(60)

    return progress
