"""The live index: a store (`live.store`) and one `RootSync` per root (`live.sync`), which keeps its
root equal to what is on disk, one file at a time.

- `sweep(root)` stats every file of a root and re-reads only those whose size or mtime moved
  (read-your-writes for `.AGENTS`, before every tool call; a full rescan after a watcher restart).
- `refresh(root, paths)` updates just the paths a watcher batch names (large `--docs` roots).
- `verify(units)` re-checks the files behind a set of hits, so a deleted or edited file is never
  served from the index.
- `patrol(root)` advances a stat sweep of a `--docs` root by a bounded step; `patrol_soon(roots)`
  asks for one step in the background (`live.asks`), so new files are still found where the
  watcher does not cover a root, and no call waits for it. `catch_up` decides which of the two a
  call needs.

A call never waits long for files that keep changing: its read-your-writes (`catch_up`) and its
re-check of the hits wait for a root's update lock, and pause for files to hold still, only until
`CATCH_UP_S` has passed. Past that it answers from the index as it is (one complete generation),
and the root's `RootCondition` says it is `changing` until an update finds it quiet;
`fresh_as_of` never moves past a change left unread.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from contextlib import AbstractContextManager
from pathlib import Path

from corpus.catalog import Change, Corpus
from corpus.files import CorpusFile, FileTable
from corpus.identity import split_display
from corpus.read import DEFAULT_MAX_BYTES, stamp
from corpus.roots import Root, RootKind
from corpus.rules import PinSet
from live import workers
from live.asks import Asks
from live.cache import IndexCache
from live.changes import fs_path, merged, relative
from live.persist import SAVE_ON_EXIT_FILES, without_collections
from live.settle import SETTLE_S, Came, Settler
from live.store import Listener, Store, View
from live.sync import PATROL_S, Progress, RootSync
from retrieval.chunks.units import Unit
from retrieval.engine.library import Library
from retrieval.engine.ranking import DEFAULT, Ranking
from retrieval.search.request import Phase, RootCondition

log = logging.getLogger("agents_context.index")

CATCH_UP_S = 0.25
"""How long a call's read-your-writes (and, apart, its re-check of the hits) may wait for a root's
update lock (held by the watcher's update, under churn nearly always), pause for files to hold
still, and go on reading once files have been seen changing under its reads (`Settler.settle`): a
bulk change that has landed, nothing changing under the reads, is read whole. Without this bound,
a call under thousands of file operations a second waited for one update after another, each
pausing for the files that changed under it: tens of seconds."""


class LiveIndex:
    """A `Store` kept equal to the disk, one `RootSync` per root."""

    def __init__(
        self,
        roots: Sequence[Root],
        pins: PinSet | None = None,
        max_bytes: int = DEFAULT_MAX_BYTES,
        settle_s: float = SETTLE_S,
        ranking: Ranking = DEFAULT,
        progress: Callable[[str], None] | None = None,
        cache: IndexCache | None = None,
        background: bool = False,
        parallel_files: int = workers.PARALLEL_FILES,
    ) -> None:
        """Index every root: from its cache entry when there is one, then by a stat sweep that
        re-reads only what changed. With `background`, `--docs` roots are indexed in a thread
        (answers meanwhile come from what is ready; see `conditions`); `.AGENTS` roots always
        before returning, since the instructions are built from them."""
        self.store = Store(roots, pins, max_bytes, ranking)
        self.roots = self.store.roots
        self.progress = progress
        """Told when a root's first indexing is done, for people watching stderr."""
        self._stopping = threading.Event()
        settler = Settler(max_bytes, settle_s, self._stopping)
        self.syncs = {
            r.label: RootSync(r, self.store, settler, self._stopping, cache, progress, parallel_files)
            for r in self.roots
        }
        self._asks = Asks(self._stopping)
        # Largest first (docs roots): restored into an empty index, their postings need no re-sorting.
        by_size = sorted(self.roots, key=lambda r: r.kind is not RootKind.DOCS)
        restored = dict.fromkeys(self.syncs, False)
        if cache is not None:
            restored = without_collections(lambda: {r.label: self.syncs[r.label].restore() for r in by_size})
        self._restored = restored
        later = [r for r in self.roots if background and r.kind is RootKind.DOCS]
        for root in later:
            self.syncs[root.label].progress = Progress(phase=Phase.CHECKING if restored[root.label] else Phase.INDEXING)
        for root in self.roots:
            if root not in later:
                self._first_sweep(root)
        self.store.last_change = None  # the start-up build is not an update anyone needs told about
        self.indexer: threading.Thread | None = None
        if later:
            self.indexer = threading.Thread(target=self._index_later, args=(later,), name="indexer", daemon=True)
            self.indexer.start()

    # --- the store, as everyone reads it ----------------------------------------------------------

    def view(self) -> AbstractContextManager[View]:
        return self.store.view()

    @property
    def corpus(self) -> Corpus:
        return self.store.corpus

    @property
    def library(self) -> Library:
        return self.store.library

    @property
    def generation(self) -> int:
        return self.store.generation

    @property
    def last_change(self) -> Change | None:
        return self.store.last_change

    @property
    def last_error(self) -> str | None:
        return self.store.last_error

    @property
    def warnings(self) -> list[str]:
        return self.store.warnings

    @property
    def listeners(self) -> list[Listener]:
        return self.store.listeners

    @property
    def agents_roots(self) -> list[Root]:
        return self.store.agents_roots

    def root_of(self, path: str) -> Root | None:
        return self.store.root_of(path)

    def files_of(self, root: Root) -> FileTable:
        return self.store.files_of(root)

    # --- each root's condition ------------------------------------------------------------------

    def building(self, root: Root) -> bool:
        """Whether the root's first indexing (in the background) is still running."""
        return self.syncs[root.label].building

    def condition(self, root: Root) -> RootCondition | None:
        return self.syncs[root.label].condition()

    def conditions(self, roots: Iterable[Root]) -> tuple[RootCondition, ...]:
        """The condition of each of these roots whose answers are partial: those still being
        indexed first, then those whose files are still changing."""
        found = [c for r in roots if (c := self.condition(r)) is not None]
        return tuple(sorted(found, key=lambda c: not c.building))

    def fresh_since(self, roots: Iterable[Root]) -> float | None:
        """The moment up to which every change in `roots` is reflected (the oldest root's), among
        the roots indexed once; None while none of them is (never the epoch)."""
        moments = [self.syncs[r.label].fresh_as_of for r in roots]
        if not moments:
            return time.time()
        indexed = [m for m in moments if m > 0]
        return min(indexed) if indexed else None

    def mark_fresh(self, root: Root, moment: float) -> None:
        self.syncs[root.label].mark_fresh(moment)

    def missed(self, root: Root, moment: float) -> None:
        self.syncs[root.label].missed(moment)

    # --- start-up, the cache, shutdown ------------------------------------------------------------

    def _first_sweep(self, root: Root) -> None:
        sync = self.syncs[root.label]
        started = time.time()
        change = sync.sweep()
        if self._stopping.is_set():
            return  # cut short by shutdown: a half-read root is neither fresh nor worth caching
        sync.progress = None
        log.info(
            "%s: up to date with the disk %.0f ms after its %s began; files changed: %d",
            root.label,
            (time.time() - started) * 1000,
            "check" if self._restored[root.label] else "indexing",
            change.count,
        )
        if self.store.last_error is None:
            sync.mark_fresh(started)
        if change.count and self.progress is not None:
            self.progress(f"{root.label}: {len(sync.files)} files indexed")
        sync.save()

    def _index_later(self, roots: Sequence[Root]) -> None:
        for root in roots:
            if self._stopping.is_set():
                return
            self._first_sweep(root)

    def save(self, root: Root) -> None:
        """Write the root's cache entry if it changed since the last one (see `RootSync.save`)."""
        self.syncs[root.label].save()

    def close(self) -> None:
        """Stop background indexing, patrol steps and the save timers, and write the cache
        entries of the small roots that changed since their last write (a large docs root's
        entry takes a second or more to write: exit stays prompt, and the next start re-reads
        only what changed since)."""
        self._stopping.set()
        for sync in self.syncs.values():
            sync.close()
        if self.indexer is not None:
            self.indexer.join(timeout=5.0)
        self._asks.join(timeout=5.0)
        for sync in self.syncs.values():
            if len(sync.files) <= SAVE_ON_EXIT_FILES:
                sync.save()

    # --- keeping up with the disk ---------------------------------------------------------------

    def catch_up(self, covered: Callable[[Root], bool], budget_s: float = CATCH_UP_S) -> None:
        """Read-your-writes before answering: the `.AGENTS` roots are brought up to date by stat,
        waiting for their update locks and for files to hold still at most `budget_s` (see
        `CATCH_UP_S`; a root left behind says it is `changing`). Docs roots rely on the watcher
        where it `covered` them; elsewhere each call asks for one bounded step of their patrol (a
        stat sweep spread over calls), made in the background."""
        came = Came.now(outside=True)
        for root in self.agents_roots:
            self.syncs[root.label].sweep(came.at + budget_s, came)
        self.patrol_soon(r for r in self.roots if r.kind is RootKind.DOCS and not covered(r))

    def sweep(self, root: Root, deadline: float | None = None, came: Came | None = None) -> Change:
        """See `RootSync.sweep`."""
        return self.syncs[root.label].sweep(deadline, came)

    def refresh(self, root: Root, paths: Iterable[str | Path], deadline: float | None = None) -> Change:
        """See `RootSync.refresh`."""
        change = self.syncs[root.label].refresh(paths, deadline)
        return Change() if change is None else change

    def reread(self, path: str, deadline: float | None = None) -> None:
        """Read one file again now, by display path (a docs file found not to hold the content
        it was indexed with); not while its root's first indexing runs (answers then are partial)."""
        root = self.root_of(path)
        if root is not None and not self.building(root):
            self.refresh(root, [fs_path(root, split_display(path)[1])], deadline)

    def rebuild(self) -> Change:
        """Sweep every root; the changes of all of them together."""
        return merged([sync.sweep() for sync in self.syncs.values()])

    def retry_pending(self) -> None:
        """Re-read files that were still being written at the last attempt."""
        for sync in self.syncs.values():
            sync.retry_pending()

    def patrol_soon(self, roots: Iterable[Root]) -> None:
        """Ask for one patrol step of each of `roots` in a background thread, and return at once."""
        self._asks.ask(self.syncs[r.label] for r in roots)

    def patrol(self, root: Root, budget_s: float = PATROL_S) -> Change:
        """See `RootSync.patrol`."""
        return self.syncs[root.label].patrol(budget_s)

    def verify(self, units: Iterable[Unit], generation: int | None = None, deadline: float | None = None) -> bool:
        """Re-check the files behind `units`; update any that changed. True if anything did, or
        if any of them changed after `generation` (the one the units were found in: another
        update may have come in between), or is still being written, or could not be updated
        because its root's update lock stayed busy until `deadline` (see `sweep`)."""
        paths = {u.path for u in units}
        stale: dict[str, list[Path]] = {}
        with self.store.writing():
            for path in paths:
                f = self.corpus.files.get(path)
                if f is None or _moved(f):
                    root = f.root if f else self.root_of(path)
                    if root is not None:
                        stale.setdefault(root.label, []).append(fs_path(root, split_display(path)[1]))
        changed = False
        for label, sync in self.syncs.items():
            if label in stale and not sync.building:  # partial answers: never wait
                change = sync.refresh(stale[label], deadline)
                changed |= change is None or change.count > 0
                # A file caught mid-save is left as indexed until it settles: its hit is stale
                # all the same, so the caller searches again rather than serve it.
                changed |= any(relative(sync.root, path) in sync.pending for path in stale[label])
        # Checked last: another thread (the watcher, a patrol step) may have applied the change
        # while this one waited for the root, and then this refresh found nothing left to do.
        return changed or (generation is not None and self.store.changed_after(paths, generation))


def _moved(f: CorpusFile) -> bool:
    try:  # a string path: every hit of every search is re-checked, and making a Path costs more than the stat
        st = os.stat(os.path.join(f.root.path, *f.rel.split("/")))  # noqa: PTH116, PTH118
    except OSError:
        return True
    return stamp(st) != f.stamp
