"""One generation of the corpus and its library, behind one lock: what every answer reads
(`view`) and the one place it changes (`apply`, a batch of one root as one generation; `adopt`,
files packed by a worker process).

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
from dataclasses import dataclass, field

from corpus.catalog import Change, Corpus
from corpus.files import FileTable
from corpus.identity import split_display
from corpus.ignore import IgnoreRules
from corpus.roots import Root
from corpus.rules import PinSet
from corpus.scan import SkippedFile
from live.changes import Batch, Pass
from live.codec import Saved
from retrieval.engine.library import Library
from retrieval.engine.ranking import Ranking
from retrieval.search.answer import Phase, RootCondition
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


@dataclass(slots=True)
class Progress:
    """A root's first indexing (or the check of its cached index), while it runs."""

    done: int = 0
    total: int = 0
    """Files read and to read, once the files to read are known (0 until then)."""
    phase: Phase = Phase.INDEXING

    @property
    def counted(self) -> bool:
        """Whether the files to read are known, so it says how far it got (`done/total`)."""
        return self.total > 0


@dataclass(slots=True)
class RootState:
    """What the live index knows of one root."""

    files: FileTable
    """By relative path: the corpus's own map of the root's files (`Files.of`), changed only by
    `Store` (under its lock), read under the root's lock."""
    skipped: dict[str, SkippedFile] = field(default_factory=dict)
    present: bool = True
    fresh_as_of: float = 0.0
    dirty: bool = True
    """Changed since the root's cache entry was written (or there is none)."""
    progress: Progress | None = None
    """How far the root's first indexing (background) has got; None once it is done."""
    rules: IgnoreRules | None = None
    lock: threading.Lock = field(default_factory=threading.Lock)
    """Held by a sweep, refresh or patrol step of the root: updates to one root are serialised."""
    waiting: int = 0
    """Sweeps and refreshes waiting for `lock` (patrol steps give way to them)."""
    missed: float = 0.0
    """When a call last answered without bringing the root up to date (see `Store.missed`)."""
    pending: set[str] = field(default_factory=set)
    """Relative paths still being written at the last attempt to read them: left as indexed until
    the next event or call reads them (`live.settle`)."""
    later: set[str] = field(default_factory=set)
    """Relative paths saved after the call whose sweep found them came, and still settling then:
    left as indexed, not waited for (`Reader.now_or_later`), unlike `pending` never found changing."""
    swept: float = 0.0
    """When the last whole stat sweep of the root began (`time.monotonic()`): a call that came
    before it needs no sweep of its own (`LiveIndex.sweep`)..."""
    seen_ns: int = 0
    """...if every file saved before the call came was read by it (or is `pending`, `later`): the
    sweep's look (`time.time_ns()`), before which it left no file for later."""
    patrol: Pass | None = None
    _guard: threading.Lock = field(default_factory=threading.Lock)
    """Guards `waiting`."""

    @contextmanager
    def updating(self, deadline: float | None = None) -> Iterator[bool]:
        """The update lock: True once held; False when it stayed busy until `deadline` (a
        `time.monotonic()` moment; None waits as long as it takes). Patrol steps stand aside while
        one of these waits (a step takes the lock only when nobody is waiting for it), so a
        watcher's rescan is never starved by steps asked for by back-to-back calls."""
        with self._guard:
            self.waiting += 1
        try:
            held = self.lock.acquire(timeout=-1 if deadline is None else max(0.0, deadline - time.monotonic()))
        finally:
            with self._guard:
                self.waiting -= 1
        if not held:
            yield False
            return
        try:
            yield True
        finally:
            self.lock.release()

    @property
    def changing(self) -> bool:
        """Files still being written, or a call answered without catching up since the root was
        last fresh (see `Store.missed`)."""
        return bool(self.pending or self.later) or self.missed > self.fresh_as_of


class Store:
    """The corpus snapshot, its library and policy, the generation, and what is known of each root."""

    def __init__(self, roots: Sequence[Root], pins: PinSet | None, max_bytes: int, ranking: Ranking) -> None:
        self.roots = list(roots)
        self.corpus = Corpus(self.roots, PinSet() if pins is None else pins, max_bytes, explicit_pins=pins is not None)
        self.library = Library(ranking)
        self.policy = Policy(self.library)
        self.state = {r.label: RootState(self.corpus.files.of(r.label)) for r in self.roots}
        self.generation = 0
        self.last_change: Change | None = None
        self.last_error: str | None = None
        self.warnings: list[str] = []
        """Mistakes in how the server was set up, found at start (a `--root` that is a whole project)."""
        self.listeners: list[Listener] = []
        self.on_change: Callable[[Root], None] | None = None
        """Told of each root an update changed (after the start-up build): the idle cache saves."""
        self._lock = threading.Lock()
        self._turnstile = threading.Lock()
        self._changed_in: dict[str, int] = {}
        """The generation in which each display path last changed (added, changed or removed),
        for the changes since generation `_forgotten`."""
        self._forgotten = 0

    @property
    def agents_roots(self) -> list[Root]:
        return self.corpus.agents_roots

    def building(self, root: Root) -> bool:
        """Whether the root's first indexing (in the background) is still running."""
        return self.state[root.label].progress is not None

    def files_of(self, root: Root) -> FileTable:
        """The root's indexed files by relative path."""
        return self.state[root.label].files

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

    def condition(self, root: Root) -> RootCondition | None:
        """Why answers from `root` are partial now (its first indexing runs, or its files are
        still changing: see `missed`); None when they are not."""
        state = self.state[root.label]
        if (p := state.progress) is not None:  # one lookup: the indexer thread drops it when done
            return RootCondition(root.label, p.phase, p.done, p.total)
        return RootCondition(root.label, changing=True) if state.changing else None

    def conditions(self, roots: Iterable[Root]) -> tuple[RootCondition, ...]:
        """The condition of each of these roots whose answers are partial: those still being
        indexed first, then those whose files are still changing."""
        found = [c for r in roots if (c := self.condition(r)) is not None]
        return tuple(sorted(found, key=lambda c: not c.building))

    def fresh_since(self, roots: Iterable[Root]) -> float | None:
        """The moment up to which every change in `roots` is reflected (the oldest root's), among
        the roots indexed once; None while none of them is (never the epoch)."""
        moments = [self.state[r.label].fresh_as_of for r in roots]
        if not moments:
            return time.time()
        indexed = [m for m in moments if m > 0]
        return min(indexed) if indexed else None

    def mark_fresh(self, root: Root, moment: float) -> None:
        if not self.building(root):  # a root still being read is not fresh as of anything
            state = self.state[root.label]
            state.fresh_as_of = max(state.fresh_as_of, moment)

    def missed(self, root: Root, moment: float) -> None:
        """A call at `moment` answered without bringing `root` up to date (its update lock stayed
        busy, or the files behind its hits kept changing): the root is `changing` until it is
        fresh as of a later moment."""
        state = self.state[root.label]
        state.missed = max(state.missed, moment)

    def changed_after(self, paths: Iterable[str], generation: int) -> bool:
        """Whether any of these display paths changed in a generation after `generation`; always
        true for a generation before the changes still told apart (the caller looks again)."""
        return generation < self._forgotten or any(self._changed_in.get(p, 0) > generation for p in paths)

    def root_of(self, path: str) -> Root | None:
        label = split_display(path)[0]
        return next((r for r in self.roots if r.label == label), None)

    def apply(self, root: Root, batch: Batch) -> Change:
        """One batch of one root as one generation (none if it changed no file's content)."""
        state = self.state[root.label]
        with self.writing():
            mine = state.files
            before = {rel for rel in batch.files if rel in mine}
            for rel in batch.removed:
                mine.pop(rel, None)
            mine.update(batch.files)
            removed = {f"{root.label}/{rel}" for rel in batch.removed}
            if batch.prepared or removed:
                self.library.apply({**batch.prepared, **dict.fromkeys(removed)})
            for rel in batch.unskipped:
                state.skipped.pop(rel, None)
            state.skipped.update(batch.skipped)
            change = Change(
                added=frozenset(p for p in batch.prepared if split_display(p)[1] not in before),
                changed=frozenset(p for p in batch.prepared if split_display(p)[1] in before),
                removed=frozenset(removed),
                at=time.time(),
            )
            self._changed(root, change)
        if change.count:
            for listener in list(self.listeners):
                listener(root, change)
        return change

    def adopt(self, root: Root, restored: Saved, skipped: Iterable[SkippedFile] = ()) -> Change:
        """Files not indexed yet, read, chunked and tokenized elsewhere (a worker process, see
        `live.workers`), packed: added as one generation, as `apply` adds files."""
        state = self.state[root.label]
        with self.writing():
            added = state.files.adopt(restored.files)  # no record made for each file
            self.library.unpack((restored.sections, restored.windows, restored.links))
            change = Change(added=frozenset(added), at=time.time())
            state.skipped.update({s.rel: s for s in skipped})
            self._changed(root, change)
        if change.count:
            for listener in list(self.listeners):
                listener(root, change)
        return change

    def _changed(self, root: Root, change: Change) -> None:
        """Bookkeeping of an update (under the lock): skipped files, the generation, the last error."""
        state = self.state[root.label]
        self.corpus.skipped = sorted(
            (s for r in self.roots for s in self.state[r.label].skipped.values()),
            key=lambda s: (s.root.label, s.rel),
        )
        if change.count:
            self.generation += 1
            self.last_change = change
            self._changed_in.update(dict.fromkeys(change.added | change.changed | change.removed, self.generation))
            if len(self._changed_in) > CHANGES_KEPT:
                self._changed_in.clear()
                self._forgotten = self.generation
            state.dirty = True
            if not self.building(root) and self.on_change is not None:
                self.on_change(root)
        self.last_error = None

    def failed(self, root: Root, exc: Exception) -> Change:
        """An update that raised: say so (`last_error`), and keep serving the last generation."""
        self.last_error = f"{type(exc).__name__}: {exc}"
        log.exception("updating %s failed; still serving generation %d", root.label, self.generation)
        return Change()
