"""Patrol steps asked for by calls, made in one background thread so that no call waits for them.

A docs root the watcher does not cover is kept current by a stat sweep spread over calls (a
`patrol` step of its `live.sync.RootSync`): each call asks for one step of such a root and
returns at once.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable
from typing import Protocol


class Patrolled(Protocol):
    """A root that takes patrol steps (`live.sync.RootSync`)."""

    @property
    def label(self) -> str: ...

    def patrol(self) -> object: ...


class Asks:
    """One background thread making the steps asked for: one `patrol()` of each root asked
    about. Asks made while a step runs add up to one more step per root, not one per ask."""

    def __init__(self, stopping: threading.Event) -> None:
        self._stopping = stopping
        self._guard = threading.Lock()
        self._wanted: dict[str, Patrolled] = {}
        self._thread: threading.Thread | None = None

    def ask(self, roots: Iterable[Patrolled]) -> None:
        """Ask for one step of each of `roots`, and return at once."""
        with self._guard:
            self._wanted.update({r.label: r for r in roots})
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
                wanted, self._wanted = self._wanted, {}
                if not wanted:
                    self._thread = None
                    return
            for root in wanted.values():
                root.patrol()
