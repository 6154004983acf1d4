"""A live index's roots to and from the persistent cache (`restore`, `save`), and the collector
tuning that large restores and builds need. What an entry holds is `live.codec`; where it lives,
`live.cache`.

A root's entry is restored at start-up, rewritten once the root has been left alone for
`SAVE_IDLE_S` (a background timer of its `RootSync`, so a burst of edits is one write and no
search waits for it), and written at exit for roots small enough to write at once.
"""

from __future__ import annotations

import gc
import logging
import time
from collections.abc import Callable

from corpus.listing import kept, seed
from corpus.roots import Root, RootKind
from live import codec
from live.cache import IndexCache
from live.codec import Saved
from live.store import Store
from retrieval.engine.memory import release_free_memory

log = logging.getLogger("agents_context.index")

SAVE_IDLE_S = 30.0
"""A root's cache entry is rewritten once the root has had no change for this long."""
SAVE_ON_EXIT_FILES = 2000
"""At exit, entries are written only for roots this small (a few milliseconds each)."""


def cache_key(store: Store, cache: IndexCache, root: Root) -> str:
    """The key of the root's entry: what the entry was built with (pins, size limit, versions)."""
    pins = [] if root.kind is RootKind.DOCS else list(store.corpus.pins_of(root))
    return cache.key(root, pins, store.corpus.max_bytes)


def restore(store: Store, cache: IndexCache, root: Root) -> bool:
    """Load the root's cache entry into `store`, through `Store.adopt` (it is checked against the
    files next); False when there is none to be had."""
    started = time.perf_counter()
    restored = cache.load(root, cache_key(store, cache, root))
    if restored is None:
        return False
    seed(root.path, root.include, restored.listings)
    store.adopt(root, restored, counted=False)
    n_files = len(restored.files)
    del restored
    # What reading the entry made and dropped (tldr's columns of 38k paths, a few hundred KB each)
    # sits in glibc's heap under what the index keeps: given back, 1.4 MB a warm server held.
    release_free_memory()
    log.info(
        "%s: %d files from the cache in %.0f ms; checking them against the disk",
        root.label,
        n_files,
        (time.perf_counter() - started) * 1000,
    )
    return True


def save(store: Store, cache: IndexCache, root: Root) -> bool:
    """Pack the root and write its entry; False if it could not be written."""
    started = time.perf_counter()
    key = cache_key(store, cache, root)
    listings = kept(root.path, root.include)
    with store.writing():
        files = sorted(store.files_of(root).values(), key=lambda f: f.rel)
        paths = [f.path for f in files]
        # Laid out before the index can change: a pack makes its units as they are read, and
        # shares the index's arrays where it can (`Postings.pack`).
        arrays = codec.arrays(root, key, Saved(files, *store.library.pack(paths), listings))
    try:
        cache.save(root, key, arrays)
    except Exception as exc:  # a full disk, a read-only cache, anything: serve on, uncached
        log.warning("could not write the cache for %s: %s", root.label, exc)
        return False
    del arrays
    # Packing a large root makes and drops copies of all of it (tldr: 110 MB); all of it is
    # dropped by now (given back while the arrays were still held, tldr's stayed: 17-29 MB).
    release_free_memory()
    log.info("%s: cache written in %.0f ms", root.label, (time.perf_counter() - started) * 1000)
    return True


def without_collections(restore: Callable[[], dict[str, bool]]) -> dict[str, bool]:
    """Restoring a large root creates a few hundred thousand long-lived objects: the cyclic
    collector would scan them all, more than once, for nothing (none of them is in a cycle). So it
    is paused while they are made, and they are then moved out of its reach (`gc.freeze`); they
    are still freed by reference counting when a file changes."""
    collecting = gc.isenabled()
    gc.disable()
    try:
        return restore()
    finally:
        gc.freeze()
        if collecting:
            gc.enable()


def freeze_chunk() -> None:
    """A chunk of a large read now lives as long as the index: out of the cyclic collector's
    reach, as after a restore, or each full collection walks every chunk read so far again
    (tldr's cold build: 10 of them, 1.8 s of CPU; 4 and 0.3 s frozen). The young generations are
    collected first, so no fresh garbage cycle is frozen with it. (A restore runs with collection
    paused, so every restored object is young there: it freezes without collecting.)"""
    gc.collect(1)
    gc.freeze()
