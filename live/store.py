"""One generation of the corpus and its library, behind one lock: what every answer reads
(`view`) and the only two ways it changes (`apply`, a batch of one root as one generation;
`adopt`, files packed elsewhere: by a worker process, or a root's cache entry at start-up).

Readers take the view lock for the length of a search; an update waiting for it holds a
turnstile, so back-to-back searches cannot starve the watcher's updates. Listeners are told of
every update that changed something, after the lock is released.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass

from corpus.catalog import Change, Corpus
from corpus.files import FileTable
from corpus.identity import split_display
from corpus.roots import Root
from corpus.rules import PinSet
from corpus.scan import SkippedFile
from live.changes import Batch
from live.codec import Saved
from retrieval.engine.library import Library
from retrieval.engine.ranking import Ranking
from retrieval.search.policy import Policy

log = logging.getLogger("agents_context.index")


@dataclass(frozen=True, slots=True)
class View:
    """A consistent look at one generation (valid while the `view()` block holds the lock)."""

    corpus: Corpus
    library: Library
    policy: Policy
    generation: int
    last_change: Change | None


Listener = Callable[[Root, Change], None]


CHANGES_KEPT = 4096
"""Paths whose last change is told apart; past this many, the older changes are forgotten (a
cold build of tldr added 38k paths, 1.3 MB kept for good, as any stream of new names would)."""


class Store:
    """The corpus snapshot, its library and policy, the generation, and the listeners. What else
    is known of each root, and when it is updated, is `live.sync.RootSync`'s."""

    def __init__(self, roots: Sequence[Root], pins: PinSet | None, max_bytes: int, ranking: Ranking) -> None:
        self.roots = list(roots)
        self.corpus = Corpus(self.roots, PinSet() if pins is None else pins, max_bytes, explicit_pins=pins is not None)
        self.library = Library(ranking)
        self.policy = Policy(self.library)
        self.skipped: dict[str, dict[str, SkippedFile]] = {r.label: {} for r in self.roots}
        """Each root's files not served, with why, by relative path (`corpus.skipped` sorted)."""
        self.generation = 0
        self.last_change: Change | None = None
        self.last_error: str | None = None
        self.warnings: list[str] = []
        """Mistakes in how the server was set up, found at start (a `--root` that is a whole project)."""
        self.listeners: list[Listener] = []
        self._lock = threading.Lock()
        self._turnstile = threading.Lock()
        self._changed_in: dict[str, int] = {}
        """The generation in which each display path last changed (added, changed or removed),
        for the changes since generation `_forgotten`."""
        self._forgotten = 0

    @property
    def agents_roots(self) -> list[Root]:
        return self.corpus.agents_roots

    def files_of(self, root: Root) -> FileTable:
        """The root's indexed files by relative path: the corpus's own table, changed only here
        (under the lock, by an update holding the root's update lock)."""
        return self.corpus.files.of(root.label)

    @contextmanager
    def view(self) -> Iterator[View]:
        with self._turnstile:  # queue behind an update that is waiting (see `writing`)
            pass
        with self._lock:
            yield View(self.corpus, self.library, self.policy, self.generation, self.last_change)

    @contextmanager
    def writing(self) -> Iterator[None]:
        """The lock, for an update (or a short read of the live state). An update waiting for it
        holds the turnstile, so new `view()`s wait behind it: back-to-back searches (an agent
        polling, a slow miss) cannot starve the watcher's updates."""
        with self._turnstile, self._lock:
            yield

    def changed_after(self, paths: Iterable[str], generation: int) -> bool:
        """Whether any of these display paths changed in a generation after `generation`; always
        true for a generation before the changes still told apart (the caller looks again)."""
        return generation < self._forgotten or any(self._changed_in.get(p, 0) > generation for p in paths)

    def root_of(self, path: str) -> Root | None:
        label = split_display(path)[0]
        return next((r for r in self.roots if r.label == label), None)

    def apply(self, root: Root, batch: Batch) -> Change:
        """One batch of one root as one generation (none if it changed no file's content)."""
        skipped = self.skipped[root.label]
        with self.writing():
            mine = self.files_of(root)
            before = {rel for rel in batch.files if rel in mine}
            for rel in batch.removed:
                mine.pop(rel, None)
            mine.update(batch.files)
            removed = {f"{root.label}/{rel}" for rel in batch.removed}
            if batch.prepared or removed:
                self.library.apply({**batch.prepared, **dict.fromkeys(removed)})
            for rel in batch.unskipped:
                skipped.pop(rel, None)
            skipped.update(batch.skipped)
            change = Change(
                added=frozenset(p for p in batch.prepared if split_display(p)[1] not in before),
                changed=frozenset(p for p in batch.prepared if split_display(p)[1] in before),
                removed=frozenset(removed),
                at=time.time(),
            )
            self._changed(change)
        self._tell(root, change)
        return change

    def adopt(self, root: Root, saved: Saved, skipped: Iterable[SkippedFile] = (), counted: bool = True) -> Change:
        """Files not indexed yet, read, chunked and tokenized elsewhere (a worker process, see
        `live.workers`), packed: added as one generation, as `apply` adds files. Not `counted`:
        the cache entry a root starts from, before anyone asks (no new generation, nobody told)."""
        with self.writing():
            added = self.files_of(root).adopt(saved.files)  # no record made for each file
            self.library.unpack((saved.sections, saved.windows, saved.links))
            change = Change(added=frozenset(added), at=time.time())
            self.skipped[root.label].update({s.rel: s for s in skipped})
            if counted:
                self._changed(change)
        if counted:
            self._tell(root, change)
        return change

    def merge_segments(self) -> None:
        """After a read in chunks: one segment per chunk, which every query would pay for, merged into one."""
        with self.writing():
            self.library.merge_all()

    def _changed(self, change: Change) -> None:
        """Bookkeeping of an update (under the lock): skipped files, the generation, the last error."""
        self.corpus.skipped = sorted(
            (s for r in self.roots for s in self.skipped[r.label].values()), key=lambda s: (s.root.label, s.rel)
        )
        if change.count:
            self.generation += 1
            self.last_change = change
            self._changed_in.update(dict.fromkeys(change.added | change.changed | change.removed, self.generation))
            if len(self._changed_in) > CHANGES_KEPT:
                self._changed_in.clear()
                self._forgotten = self.generation
        self.last_error = None

    def _tell(self, root: Root, change: Change) -> None:
        """The listeners, of an update that changed something (after the lock is released)."""
        if change.count:
            for listener in list(self.listeners):
                listener(root, change)

    def failed(self, root: Root, exc: Exception) -> Change:
        """An update that raised: say so (`last_error`), and keep serving the last generation."""
        self.last_error = f"{type(exc).__name__}: {exc}"
        log.exception("updating %s failed; still serving generation %d", root.label, self.generation)
        return Change()
