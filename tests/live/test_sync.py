"""One root kept equal to the disk: when it is fresh, its condition, and when its cache entry is
written; a large read is applied `CHUNK` files at a time, one generation each, then merged; a
file is indexed with its units only when its content changed."""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path

import pytest

from corpus.roots import Root, make_roots
from corpus.scan import walk
from live import sync as sync_module
from live.cache import IndexCache
from live.changes import Batch
from live.index import LiveIndex
from live.settle import Settler
from live.store import Store
from live.sync import Progress, RootSync
from retrieval.engine.ranking import DEFAULT
from retrieval.search.request import Phase, RootCondition
from tests.conftest import write_tree

TREE = {"overview.md": "# Overview\n\nPinned alpha.\n", "security.md": "# Security\n\nbeta rules.\n"}


def sync_of(store: Store, root: Root, cache: IndexCache | None = None, told: list[str] | None = None) -> RootSync:
    stopping = threading.Event()
    return RootSync(
        root, store, Settler(100_000, 0, stopping), stopping, cache, told.append if told is not None else None, 0
    )


def one_root(folder: Path) -> tuple[Store, RootSync]:
    store = Store(make_roots([folder]), None, 1024 * 1024, DEFAULT)
    return store, sync_of(store, store.roots[0])


def test_mark_fresh_never_moves_fresh_as_of_backwards(make_tree: Callable[..., Path]) -> None:
    _, sync = one_root(make_tree(TREE))
    sync.mark_fresh(200.0)
    assert sync.fresh_as_of == 200.0
    sync.mark_fresh(100.0)  # a slow sweep that started earlier finishes later
    assert sync.fresh_as_of == 200.0
    sync.mark_fresh(300.0)
    assert sync.fresh_as_of == 300.0


def test_a_root_still_being_indexed_is_never_marked_fresh(make_tree: Callable[..., Path]) -> None:
    _, sync = one_root(make_tree(TREE))
    sync.progress = Progress(done=1, total=3)
    sync.mark_fresh(500.0)
    assert sync.fresh_as_of == 0.0
    sync.progress = None
    sync.mark_fresh(500.0)
    assert sync.fresh_as_of == 500.0


def test_fresh_since_is_the_oldest_roots_moment(make_tree: Callable[..., Path]) -> None:
    live = LiveIndex(make_roots([make_tree(TREE)], [make_tree({"a.md": "# A\n"}, name="docs")]))
    agents, docs = live.roots
    for sync in live.syncs.values():
        sync.fresh_as_of = 0.0
    live.mark_fresh(agents, 300.0)
    live.mark_fresh(docs, 100.0)
    assert live.fresh_since(live.roots) == 100.0
    assert live.fresh_since([agents]) == 300.0
    now = live.fresh_since([])
    assert now is not None and now >= 300.0  # no root to wait for: fresh as of now
    live.syncs[docs.label].fresh_as_of = 0.0  # never indexed yet: not fresh as of the epoch
    assert live.fresh_since(live.roots) == 300.0
    assert live.fresh_since([docs]) is None


def test_conditions_list_the_progress_of_the_given_roots_still_being_built(make_tree: Callable[..., Path]) -> None:
    live = LiveIndex(
        make_roots(
            [make_tree(TREE)], [make_tree({"a.md": "# A\n"}, name="docs"), make_tree({"b.md": "# B\n"}, name="more")]
        )
    )
    agents, docs, more = live.roots
    assert live.conditions(live.roots) == ()
    live.syncs["docs"].progress = Progress(done=40, total=120)
    live.syncs["more"].progress = Progress(phase=Phase.CHECKING)
    counted, checking = RootCondition("docs", Phase.INDEXING, 40, 120), RootCondition("more", Phase.CHECKING)
    assert live.conditions(live.roots) == (counted, checking)
    assert live.conditions([agents, docs]) == (counted,)  # only the roots asked about
    assert live.conditions([agents]) == ()
    assert live.conditions([more]) == (checking,)


def test_an_update_arms_the_idle_save_but_not_while_the_root_is_still_being_built(
    make_tree: Callable[..., Path], tmp_path: Path
) -> None:
    folder = make_tree(TREE)
    store = Store(make_roots([folder]), None, 1024 * 1024, DEFAULT)
    sync = sync_of(store, store.roots[0], IndexCache(tmp_path / "cache", DEFAULT.fingerprint))
    sync.progress = Progress()
    sync.sweep()
    assert sync.dirty and timer_of(sync) is None
    sync.progress = None
    (folder / "overview.md").write_text("# Overview\n\nnew.\n")
    sync.sweep()
    timer = timer_of(sync)
    assert timer is not None and timer.is_alive()
    sync.close()


def timer_of(sync: RootSync) -> threading.Timer | None:
    """The root's idle-save timer, read afresh."""
    return sync._timer


def docs_sync(docs: Path) -> tuple[Store, RootSync, list[str]]:
    store = Store(make_roots([], [docs]), None, 100_000, DEFAULT)
    told: list[str] = []
    return store, sync_of(store, store.roots[0], told=told), told


def test_a_large_read_is_applied_a_chunk_at_a_time_then_merged(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sync_module, "CHUNK", 4)
    docs = write_tree(tmp_path / "docs", {f"d{i}.md": f"# Page {i}\n\nalpha word{i}\n" for i in range(10)})
    store, sync, told = docs_sync(docs)
    root = store.roots[0]
    generations: list[int] = []
    store.listeners.append(lambda r, change: generations.append(store.generation))
    change = sync.sweep()
    assert len(change.added) == 10 and len(store.files_of(root)) == 10
    assert generations == [1, 2, 3]  # 4 + 4 + 2 files: three generations, each searchable
    assert told == [f"indexing {root.label}: {n}/10 files read" for n in (4, 8, 10)]
    with store.view() as view:
        assert len(view.library.windows._segments) == 1  # merged: a query pays for one segment


def test_a_file_read_again_with_the_same_content_is_not_indexed_again(tmp_path: Path) -> None:
    docs = write_tree(tmp_path / "docs", {"a.md": "# A\n\nalpha\n"})
    store, sync, _ = docs_sync(docs)
    root = store.roots[0]
    sync.sweep()
    again = Batch()
    sync._settle(walk(root).files, again)
    assert list(again.files) == ["a.md"] and not again.prepared  # same digest: no units made again
    (docs / "a.md").write_text("# A\n\nbeta\n")
    changed = Batch()
    sync._settle(walk(root).files, changed)
    assert list(changed.prepared) == [f"{root.label}/a.md"]
