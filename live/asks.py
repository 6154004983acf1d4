"""Patrol steps asked for by calls, made in one background thread so that no call waits for them.

A docs root the watcher does not cover is kept current by a stat sweep spread over calls (a
`patrol` step of `live.index`): each call asks for one step of such a root and returns at once.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable


class Asks:
    """One background thread making the steps asked for: `step(labels)` makes one step of each
    root named. Asks made while a step runs add up to one more step per root, not one per ask."""

    def __init__(self, step: Callable[[set[str]], None], stopping: threading.Event) -> None:
        self._step = step
        self._stopping = stopping
        self._guard = threading.Lock()
        self._wanted: set[str] = set()
        self._thread: threading.Thread | None = None

    def ask(self, labels: Iterable[str]) -> None:
        """Ask for one step of each root named, and return at once."""
        with self._guard:
            self._wanted.update(labels)
            if self._wanted and not self._stopping.is_set() and (self._thread is None or not self._thread.is_alive()):
                self._thread = threading.Thread(target=self._run, name="patrol", daemon=True)
                self._thread.start()

    def join(self, timeout: float) -> None:
        """Wait (at most `timeout`) for the step under way, once `stopping` is set."""
        with self._guard:
            thread = self._thread
        if thread is not None:
            thread.join(timeout=timeout)

    def _run(self) -> None:
        while not self._stopping.is_set():
            with self._guard:
                labels, self._wanted = self._wanted, set()
                if not labels:
                    self._thread = None
                    return
            self._step(labels)
