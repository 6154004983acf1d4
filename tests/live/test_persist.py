"""When entries are written: once a root is idle, at exit for small roots, never half-written."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from corpus.roots import make_roots
from live import index as live_module
from live import persist
from live.cache import IndexCache
from live.index import LiveIndex
from live.settle import Settler
from retrieval.engine.ranking import DEFAULT
from tests.live.support import (
    assert_like_fresh,
    big_docs_tree,
    held_after_first_chunk,
    open_live,
    ranked,
)


def test_a_root_saved_while_it_changes_is_never_half_written(trees: tuple[Path, Path], cache_dir: Path) -> None:
    """Entries are replaced by an atomic rename: a reader sees the old entry or the new one."""
    agents, docs = trees
    live = open_live(agents, docs, cache_dir)
    live.close()
    for i in range(5):
        (docs / f"page{i:02d}.md").write_text(f"# Page {i}\n\nnu{i} xi\n")
        live.refresh(live.roots[1], [docs / f"page{i:02d}.md"])
        live.save(live.roots[1])
        assert not list(cache_dir.glob("*.tmp"))
        assert_like_fresh(open_live(agents, docs, cache_dir), agents, docs)


def test_a_root_changed_while_serving_is_written_again_once_idle(
    trees: tuple[Path, Path], cache_dir: Path, monkeypatch: pytest.MonkeyPatch, reads: list[str]
) -> None:
    monkeypatch.setattr(persist, "SAVE_IDLE_S", 0.2)
    agents, docs = trees
    live = open_live(agents, docs, cache_dir)
    entry = max(cache_dir.glob("*.index"), key=lambda p: p.stat().st_size)
    written = entry.stat().st_mtime_ns
    (docs / "page05.md").write_text("# Page 5\n\nrho changed while serving\n")
    live.refresh(live.roots[1], [docs / "page05.md"])
    deadline = time.monotonic() + 30
    while entry.stat().st_mtime_ns == written and time.monotonic() < deadline:
        time.sleep(0.05)
    assert entry.stat().st_mtime_ns != written  # rewritten in the background, without a close()
    reads.clear()
    restarted = open_live(agents, docs, cache_dir)
    assert reads == []  # the new entry already holds the edit
    assert [u for u, _, _ in ranked(restarted, "rho")] == ["docs/page05.md#0"]
    live.close()


def test_exit_writes_only_small_roots_and_stops_a_background_read_promptly(
    make_tree: Callable[..., Path], cache_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(live_module, "SAVE_ON_EXIT_FILES", 10)
    agents, docs, _ = big_docs_tree(make_tree)
    at_boundary, release = threading.Event(), threading.Event()
    live = open_live(agents, docs, cache_dir, background=True, progress=held_after_first_chunk(at_boundary, release))
    assert at_boundary.wait(60)
    (agents / "rules.md").write_text("# Rules\n\nomega rules\n")
    live.refresh(live.roots[0], [agents / "rules.md"])
    closing = threading.Thread(target=live.close)
    closing.start()
    release.set()
    closing.join(60)
    assert not closing.is_alive()
    assert live.indexer is not None and not live.indexer.is_alive()
    assert live.syncs["big"].progress is not None  # the read was cut short, not finished...
    assert len(list(cache_dir.glob("*.index"))) == 1  # ...and not cached; the changed .AGENTS root is

    def spoiled(self: Settler, root: Any, ref: Any) -> Any:
        raise AssertionError(f"{ref.rel} was read again")

    monkeypatch.setattr(Settler, "_read_settled", spoiled)
    restarted = LiveIndex(make_roots([agents]), cache=IndexCache(cache_dir, DEFAULT.fingerprint))
    assert ranked(restarted, "omega")  # from the entry written at exit
