"""The live index: the corpus and its library, rebuilt as the files change.

A rebuild builds a complete new snapshot off to the side and then swaps it in, so no search ever
sees a half-built index; a rebuild that fails keeps the last good snapshot and says why.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass

from corpus.catalog import Corpus, load
from corpus.read import DEFAULT_MAX_BYTES
from corpus.roots import Root, RootKind
from corpus.rules import PinSet
from retrieval.library import Library, index_corpus
from retrieval.ranking import DEFAULT, Ranking

log = logging.getLogger("agents_context.index")


@dataclass(frozen=True, slots=True)
class Snapshot:
    corpus: Corpus
    library: Library
    generation: int
    built_at: float
    """`time.time()` when the snapshot was complete."""

    def agents_files(self) -> set[str]:
        return {p for p, f in self.corpus.files.items() if f.root.kind is RootKind.AGENTS}


@dataclass(frozen=True, slots=True)
class Change:
    """What a rebuild changed: display paths added, changed (content) and removed."""

    added: frozenset[str]
    changed: frozenset[str]
    removed: frozenset[str]

    @property
    def count(self) -> int:
        return len(self.added) + len(self.changed) + len(self.removed)


class LiveIndex:
    def __init__(
        self,
        roots: Sequence[Root],
        pins: PinSet | None = None,
        max_bytes: int = DEFAULT_MAX_BYTES,
        ranking: Ranking = DEFAULT,
    ) -> None:
        self.roots = list(roots)
        self.ranking = ranking
        self.pins = PinSet() if pins is None else pins
        self.max_bytes = max_bytes
        self.last_error: str | None = None
        self._lock = threading.Lock()
        self.snapshot = self._build(generation=1)

    def _build(self, generation: int) -> Snapshot:
        corpus = load(self.roots, self.pins, self.max_bytes)
        return Snapshot(corpus, index_corpus(corpus, Library(self.ranking)), generation, time.time())

    def rebuild(self) -> Change | None:
        """Rebuild from disk and swap the result in; None (and the old snapshot kept) on failure."""
        with self._lock:
            old = self.snapshot
            try:
                new = self._build(old.generation + 1)
            except Exception as exc:  # keep serving the last good index, whatever went wrong
                self.last_error = f"{type(exc).__name__}: {exc}"
                log.exception("rebuild failed; still serving generation %d", old.generation)
                return None
            self.snapshot = new
            self.last_error = None
        before, after = old.corpus.files, new.corpus.files
        return Change(
            added=frozenset(after.keys() - before.keys()),
            changed=frozenset(p for p in after.keys() & before.keys() if after[p].digest != before[p].digest),
            removed=frozenset(before.keys() - after.keys()),
        )
