"""A live index's roots to and from the persistent cache: when an entry is restored and written,
and the collector tuning that large restores and builds need. What an entry holds is
`live.codec`; where it lives, `live.cache`.

A root's entry is restored at start-up, rewritten once the root has been left alone for
`SAVE_IDLE_S` (a background timer, so a burst of edits is one write and no search waits for it),
and written at exit for roots small enough to write at once.
"""

from __future__ import annotations

import gc
import logging
import threading
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
    """Load the root's cache entry into `store` (it is checked against the files next); False
    when there is none to be had."""
    started = time.perf_counter()
    restored = cache.load(root, cache_key(store, cache, root))
    if restored is None:
        return False
    state = store.state[root.label]
    seed(root.path, root.include, restored.listings)
    with store.writing():
        state.files.adopt(restored.files)
        store.library.unpack((restored.sections, restored.windows, restored.links))
    n_files = len(restored.files)
    del restored
    # What reading the entry made and dropped (tldr's columns of 38k paths, a few hundred KB each)
    # sits in glibc's heap under what the index keeps: given back, 1.4 MB a warm server held.
    release_free_memory()
    state.dirty = False
    log.info(
        "%s: %d files from the cache in %.0f ms; checking them against the disk",
        root.label,
        n_files,
        (time.perf_counter() - started) * 1000,
    )
    return True


def save(store: Store, cache: IndexCache, root: Root) -> None:
    """Write the root's cache entry if it changed since the last one (never while its first
    indexing runs: a half-read root is not worth keeping)."""
    state = store.state[root.label]
    if not state.dirty or state.progress is not None or not state.present or store.last_error is not None:
        return
    started = time.perf_counter()
    if _write(store, cache, root):
        # Packing a large root makes and drops copies of all of it (tldr: 110 MB); all of it is
        # dropped by now (given back while `_write` still held it, tldr's stayed: 17-29 MB).
        release_free_memory()
        log.info("%s: cache written in %.0f ms", root.label, (time.perf_counter() - started) * 1000)


def _write(store: Store, cache: IndexCache, root: Root) -> bool:
    """Pack the root and write its entry; False (the root dirty again) if it could not be written."""
    state = store.state[root.label]
    key = cache_key(store, cache, root)
    listings = kept(root.path, root.include)
    with store.writing():
        state.dirty = False  # a change from now on makes it dirty again
        files = sorted(state.files.values(), key=lambda f: f.rel)
        paths = [f.path for f in files]
        # Laid out before the index can change: a pack makes its units as they are read, and
        # shares the index's arrays where it can (`Postings.pack`).
        arrays = codec.arrays(root, key, Saved(files, *store.library.pack(paths), listings))
    try:
        cache.save(root, key, arrays)
    except Exception as exc:  # a full disk, a read-only cache, anything: serve on, uncached
        state.dirty = True
        log.warning("could not write the cache for %s: %s", root.label, exc)
        return False
    return True


class IdleSaves:
    """One timer per root that changed: it calls `save(root)` once the root has been left alone
    for `SAVE_IDLE_S`, and re-arms itself while the root keeps changing."""

    def __init__(self, save: Callable[[Root], None], stopping: threading.Event) -> None:
        self._save = save
        self._stopping = stopping
        self._timers: dict[str, threading.Timer] = {}
        self._changed_at: dict[str, float] = {}

    def changed(self, root: Root) -> None:
        """The root changed now: write its entry once it has been idle for `SAVE_IDLE_S`."""
        self._changed_at[root.label] = time.time()
        self._schedule(root)

    def _schedule(self, root: Root) -> None:
        if self._stopping.is_set():
            return
        pending = self._timers.get(root.label)
        if pending is not None and pending.is_alive():
            return  # it re-checks how long the root has been idle before writing
        timer = threading.Timer(SAVE_IDLE_S, self._when_idle, args=(root,))
        timer.daemon = True
        self._timers[root.label] = timer
        timer.start()

    def _when_idle(self, root: Root) -> None:
        if self._stopping.is_set():
            return
        if time.time() - self._changed_at.get(root.label, 0.0) < SAVE_IDLE_S:
            self._timers.pop(root.label, None)
            self._schedule(root)
            return
        self._save(root)

    def cancel(self) -> None:
        for timer in self._timers.values():
            timer.cancel()


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
