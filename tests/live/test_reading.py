"""Reading an update's files into the store: a large read is applied `CHUNK` files at a time, one
generation each (what is ready is searchable while the rest is read), then merged into one
segment; a file is indexed with its units only when its content changed."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from corpus.roots import make_roots
from corpus.scan import walk
from live import reading
from live.changes import Batch
from live.reading import Reader
from live.settle import Settler
from live.store import Store
from retrieval.engine.ranking import DEFAULT
from tests.conftest import write_tree


def reader_for(docs: Path) -> tuple[Store, Reader, list[str]]:
    store = Store(make_roots([], [docs]), None, 100_000, DEFAULT)
    told: list[str] = []
    stopping = threading.Event()
    return store, Reader(store, Settler(100_000, 0, stopping), stopping, told.append, 0), told


def test_a_large_read_is_applied_a_chunk_at_a_time_then_merged(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(reading, "CHUNK", 4)
    docs = write_tree(tmp_path / "docs", {f"d{i}.md": f"# Page {i}\n\nalpha word{i}\n" for i in range(10)})
    store, reader, told = reader_for(docs)
    root = store.roots[0]
    generations: list[int] = []
    store.listeners.append(lambda r, change: generations.append(store.generation))
    change = reader.read_apply(root, walk(root).files, Batch())
    assert len(change.added) == 10 and len(store.state[root.label].files) == 10
    assert generations == [1, 2, 3]  # 4 + 4 + 2 files: three generations, each searchable
    assert told == [f"indexing {root.label}: {n}/10 files read" for n in (4, 8, 10)]
    with store.view() as view:
        assert len(view.library.windows._segments) == 1  # merged: a query pays for one segment


def test_a_file_read_again_with_the_same_content_is_not_indexed_again(tmp_path: Path) -> None:
    docs = write_tree(tmp_path / "docs", {"a.md": "# A\n\nalpha\n"})
    store, reader, _ = reader_for(docs)
    root = store.roots[0]
    reader.read_apply(root, walk(root).files, Batch())
    again = Batch()
    reader.read(root, walk(root).files, again)
    assert list(again.files) == ["a.md"] and not again.prepared  # same digest: no units made again
    (docs / "a.md").write_text("# A\n\nbeta\n")
    changed = Batch()
    reader.read(root, walk(root).files, changed)
    assert list(changed.prepared) == [f"{root.label}/a.md"]
