"""When a live index writes its roots to the persistent cache, and the collector tuning that large
restores and builds need. What an entry holds is `live.codec`; where it lives, `live.cache`.

A root's entry is restored at start-up, rewritten once the root has been left alone for
`SAVE_IDLE_S` (a background timer, so a burst of edits is one write and no search waits for it),
and written at exit for roots small enough to write at once.
"""

from __future__ import annotations

import gc
import threading
import time
from collections.abc import Callable

from corpus.roots import Root

SAVE_IDLE_S = 30.0
"""A root's cache entry is rewritten once the root has had no change for this long."""
SAVE_ON_EXIT_FILES = 2000
"""At exit, entries are written only for roots this small (a few milliseconds each)."""


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
