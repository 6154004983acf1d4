"""The live index: the store (`live.store`) kept equal to what is on disk, one file at a time.

- `sweep(root)` stats every file of a root and re-reads only those whose size or mtime moved
  (read-your-writes for `.AGENTS`, before every tool call; a full rescan after a watcher restart).
- `refresh(root, paths)` updates just the paths a watcher batch names (large `--docs` roots).
- `verify(units)` re-checks the files behind a set of hits, so a deleted or edited file is never
  served from the index.
- `patrol(root)` advances a stat sweep of a `--docs` root by a bounded step; `patrol_soon(roots)`
  asks for one step in the background, so new files are still found where the watcher does not
  cover a root, and no call waits for it. `catch_up` decides which of the two a call needs.

A call never waits long for files that keep changing: its read-your-writes (`catch_up`) and its
re-check of the hits wait for a root's update lock, and pause for files to hold still, only until
`CATCH_UP_S` has passed. Past that it answers from the index as it is (one complete generation),
and the root says it is `changing` (in STATUS: `partial=1 indexing=<label>:changing`) until an
update finds it quiet; `fresh_as_of` never moves past a change left unread.

Finding what changed is `live.changes`; reading it `live.reading` (files that hold still:
`live.settle`); the cache `live.persist`; patrol steps in the background `live.asks`. Files are
read and tokenized outside the index lock; each batch is then applied as one coalesced update,
one generation, under the lock, so every answer comes from one complete generation. Updates to
one root are serialised, so a slow read can never overwrite a newer one.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from functools import partial
from pathlib import Path

from corpus.catalog import Change
from corpus.files import CorpusFile
from corpus.identity import split_display
from corpus.ignore import IgnoreRules
from corpus.read import DEFAULT_MAX_BYTES, stamp
from corpus.roots import Root, RootKind, root_present
from corpus.rules import PinSet
from live import persist, workers
from live.asks import Asks
from live.cache import IndexCache
from live.changes import Batch, Pass, fs_path, merged, refreshed, relative, swept
from live.persist import SAVE_ON_EXIT_FILES, IdleSaves, without_collections
from live.reading import Reader
from live.settle import SETTLE_S, Came, Later, Settler
from live.store import Progress, Store
from retrieval.chunks.units import Unit
from retrieval.engine.ranking import DEFAULT, Ranking
from retrieval.search.answer import Phase

log = logging.getLogger("agents_context.index")

PATROL_S = 0.01
"""The work one patrol step of a docs root does (see `patrol`): folders are walked until this
much time has passed (at least one folder per step)."""
PATROL_IDLE_S = 10.0
"""A patrol pass left alone this long (the watcher was reporting meanwhile) starts afresh."""
CATCH_UP_S = 0.25
"""How long a call's read-your-writes (and, apart, its re-check of the hits) may wait for a root's
update lock (held by the watcher's update, under churn nearly always), pause for files to hold
still, and go on reading once files have been seen changing under its reads (`Settler.read`): a
bulk change that has landed, nothing changing under the reads, is read whole. Without this bound,
a call under thousands of file operations a second waited for one update after another, each
pausing for the files that changed under it: tens of seconds."""


class LiveIndex(Store):
    """A `Store` kept equal to the disk."""

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
        (answers meanwhile come from what is ready; see `indexing`); `.AGENTS` roots always
        before returning, since the instructions are built from them."""
        super().__init__(roots, pins, max_bytes, ranking)
        self.progress = progress
        """Told when a root's first indexing is done, for people watching stderr."""
        self.cache = cache
        self._stopping = threading.Event()
        self._reader = Reader(
            self, Settler(max_bytes, settle_s, self._stopping), self._stopping, progress, parallel_files
        )
        self._saves = IdleSaves(self.save, self._stopping) if cache is not None else None
        if self._saves is not None:
            self.on_change = self._saves.changed
        self._asks = Asks(self._patrol_asked, self._stopping)
        # Largest first (docs roots): restored into an empty index, their postings need no re-sorting.
        by_size = sorted(self.roots, key=lambda r: r.kind is not RootKind.DOCS)
        restored = (
            without_collections(lambda: {r.label: persist.restore(self, cache, r) for r in by_size}) if cache else {}
        )
        self._restored = restored
        later = [r for r in self.roots if background and r.kind is RootKind.DOCS]
        for root in later:
            self.state[root.label].progress = Progress(
                phase=Phase.CHECKING if restored.get(root.label) else Phase.INDEXING
            )
        for root in self.roots:
            if root not in later:
                self._first_sweep(root)
        self.last_change = None  # the start-up build is not an update anyone needs told about
        self.indexer: threading.Thread | None = None
        if later:
            self.indexer = threading.Thread(target=self._index_later, args=(later,), name="indexer", daemon=True)
            self.indexer.start()

    # --- start-up and the cache ---------------------------------------------------------------

    def _first_sweep(self, root: Root) -> None:
        started = time.time()
        change = self.sweep(root)
        if self._stopping.is_set():
            return  # cut short by shutdown: a half-read root is neither fresh nor worth caching
        self.state[root.label].progress = None
        log.info(
            "%s: up to date with the disk %.0f ms after its %s began; files changed: %d",
            root.label,
            (time.time() - started) * 1000,
            "check" if self._restored.get(root.label) else "indexing",
            change.count,
        )
        if self.last_error is None:
            self.mark_fresh(root, started)
        if change.count and self.progress is not None:
            self.progress(f"{root.label}: {len(self.state[root.label].files)} files indexed")
        self.save(root)

    def _index_later(self, roots: Sequence[Root]) -> None:
        for root in roots:
            if self._stopping.is_set():
                return
            self._first_sweep(root)

    def save(self, root: Root) -> None:
        """Write the root's cache entry if it changed since the last one (see `persist.save`)."""
        if self.cache is not None:
            persist.save(self, self.cache, root)

    def close(self) -> None:
        """Stop background indexing, patrol steps and the save timers, and write the cache
        entries of the small roots that changed since their last write (a large docs root's
        entry takes a second or more to write: exit stays prompt, and the next start re-reads
        only what changed since)."""
        self._stopping.set()
        if self._saves is not None:
            self._saves.cancel()
        if self.indexer is not None:
            self.indexer.join(timeout=5.0)
        self._asks.join(timeout=5.0)
        for root in self.roots:
            if len(self.state[root.label].files) <= SAVE_ON_EXIT_FILES:
                self.save(root)

    # --- keeping up with the disk -------------------------------------------------------------

    def catch_up(self, covered: Callable[[Root], bool], budget_s: float = CATCH_UP_S) -> None:
        """Read-your-writes before answering: the `.AGENTS` roots are brought up to date by stat,
        waiting for their update locks and for files to hold still at most `budget_s` (see
        `CATCH_UP_S`; a root left behind says it is `changing`). Docs roots rely on the watcher
        where it `covered` them; elsewhere each call asks for one bounded step of their patrol (a
        stat sweep spread over calls), made in the background."""
        came = Came.now(outside=True)
        deadline = came.at + budget_s
        for root in self.agents_roots:
            try:
                self.sweep(root, deadline, came)
            except Later as later:  # noqa: PERF203 - the lock is free again: wait without it, then once more
                time.sleep(max(0.0, min(later.seconds, deadline - time.monotonic())))
                self.sweep(root, deadline, later.came)
        docs = [r for r in self.roots if r.kind is RootKind.DOCS]
        if docs:
            self.patrol_soon(r for r in docs if not covered(r))

    def _update(self, root: Root, work: Callable[[], Change], deadline: float | None) -> Change | None:
        """`work` under the root's update lock; None when the lock stayed busy until `deadline`
        (then the root is `missed`: it says it is changing until an update catches up)."""
        asked = time.time()
        with self.state[root.label].updating(deadline) as held:
            if not held:
                self.missed(root, asked)
                return None
            try:
                return work()
            except Later:
                raise
            except Exception as exc:  # keep serving the last good index, whatever went wrong
                return self.failed(root, exc)

    def sweep(self, root: Root, deadline: float | None = None, came: Came | None = None) -> Change:
        """Bring `root` up to date by stat: only files whose size or mtime moved are re-read. With
        `deadline` (a call's, see `catch_up`), it waits for the lock and for files to hold still
        only until then. With `came` (when a call came), any sweep begun after it that left no
        file saved before it for later serves (calls queued behind one sweep share the next), and
        files saved after this sweep first looked are not waited for (`Reader.now_or_later`)."""
        state = self.state[root.label]

        def work() -> Change:
            if came is not None and state.swept >= came.at and state.seen_ns >= came.at_ns:
                return Change()
            begun, started, look = time.monotonic(), time.time(), time.time_ns()
            look = look if came is None or came.look_ns is None else came.look_ns
            change = self._sweep(root, deadline, came, look)
            state.swept, state.seen_ns = max(state.swept, begun), max(state.seen_ns, look)
            self.mark_fresh(root, started)
            return change

        change = self._update(root, work, deadline)
        return Change() if change is None else change

    def refresh(self, root: Root, paths: Iterable[str | Path], deadline: float | None = None) -> Change:
        """Update just these absolute paths of `root` (files or folders, present or gone); with
        `deadline`, as for `sweep`."""
        change = self._update(root, lambda: self._refresh(root, paths, deadline), deadline)
        return Change() if change is None else change

    def reread(self, path: str, deadline: float | None = None) -> None:
        """Read one file again now, by display path (a docs file found not to hold the content
        it was indexed with); not while its root's first indexing runs (answers then are partial)."""
        root = self.root_of(path)
        if root is not None and not self.building(root):
            self.refresh(root, [fs_path(root, split_display(path)[1])], deadline)

    def mark_fresh(self, root: Root, moment: float) -> None:
        """As `Store.mark_fresh`, but never while a file of the root was left as it was because
        it was still being written (`pending`, `later`): a change not read is not reflected."""
        if not self.state[root.label].pending and not self.state[root.label].later:
            super().mark_fresh(root, moment)

    def rebuild(self) -> Change:
        """Sweep every root; the changes of all of them together."""
        return merged([self.sweep(root) for root in self.roots])

    def retry_pending(self) -> None:
        """Re-read files that were still being written at the last attempt."""
        for root in self.roots:
            pending = sorted(self.state[root.label].pending)  # a copy: other threads change the set
            if pending:
                self.refresh(root, [fs_path(root, rel) for rel in pending])

    def patrol_soon(self, roots: Iterable[Root]) -> None:
        """Ask for one patrol step of each of `roots` in a background thread, and return at once."""
        self._asks.ask(r.label for r in roots)

    def _patrol_asked(self, labels: set[str]) -> None:
        for root in self.roots:
            if root.label in labels:
                self.patrol(root)

    def patrol(self, root: Root, budget_s: float = PATROL_S) -> Change:
        """Advance a stat sweep of a docs root by a bounded step (folders for about `budget_s`,
        at least one, and at most `PATROL_READS` files read), for a root the watcher does not
        cover now (not running, not reporting in, or its watch on the folder lost): one step per
        tool call finds new, changed and deleted files within a bounded number of calls. When a
        pass has covered every folder, the root is fresh as of the pass's start and the next step
        begins another. Never waits: a root being read or updated by someone else is left alone
        (that is progress too)."""
        state = self.state[root.label]
        if state.progress is not None or state.waiting or not state.lock.acquire(blocking=False):
            return Change()
        try:
            return self._patrol(root, budget_s)
        except Exception as exc:
            state.patrol = None
            return self.failed(root, exc)
        finally:
            state.lock.release()

    def verify(self, units: Iterable[Unit], generation: int | None = None, deadline: float | None = None) -> bool:
        """Re-check the files behind `units`; update any that changed. True if anything did, or
        if any of them changed after `generation` (the one the units were found in: another
        update may have come in between), or is still being written, or could not be updated
        because its root's update lock stayed busy until `deadline` (see `sweep`)."""
        stale: dict[str, list[Path]] = {}
        paths = {u.path for u in units}
        with self.writing():
            for path in paths:
                f = self.corpus.files.get(path)
                if f is None or _moved(f):
                    root = f.root if f else self.root_of(path)
                    if root is not None:
                        stale.setdefault(root.label, []).append(fs_path(root, split_display(path)[1]))
        changed = False
        for root in self.roots:
            if root.label in stale and not self.building(root):  # partial answers: never wait
                change = self._update(root, partial(self._refresh, root, stale[root.label], deadline), deadline)
                changed |= change is None or change.count > 0
                # A file caught mid-save is left as indexed until it settles: its hit is stale
                # all the same, so the caller searches again rather than serve it.
                pending = self.state[root.label].pending
                changed |= any(relative(root, path) in pending for path in stale[root.label])
        # Checked last: another thread (the watcher, a patrol step) may have applied the change
        # while this one waited for the root, and then this refresh found nothing left to do.
        return changed or (generation is not None and self.changed_after(paths, generation))

    # --- one update: find, read, apply --------------------------------------------------------

    def _sweep(self, root: Root, deadline: float | None = None, came: Came | None = None, look: int = 0) -> Change:
        state = self.state[root.label]
        pending = self.state[root.label].pending
        if not root_present(root):
            if state.present:
                log.warning("root %s is gone (%s); serving nothing from it until it returns", root.label, root.path)
            state.present = False
            pending.clear()
            return self.apply(root, Batch(removed=set(state.files), unskipped=set(state.skipped)))
        if not state.present:
            log.info("root %s is back", root.label)
        state.present = True
        state.rules = IgnoreRules(root.path)
        stale, batch = swept(root, state.files, state.skipped, state.rules)
        # A file left mid-write that is now gone, or back as indexed, is no longer being written.
        pending.intersection_update([ref.rel for ref in stale])
        stale = self._reader.now_or_later(root, stale, came, look)
        if not stale and not batch.removed and batch.skipped == state.skipped and self.last_error is None:
            return Change()  # nothing moved (the case before almost every answer): no update to apply
        return self._reader.read_apply(root, stale, batch, deadline)

    def _refresh(self, root: Root, paths: Iterable[str | Path], deadline: float | None = None) -> Change:
        if not root_present(root):
            return self._sweep(root, deadline)
        state = self.state[root.label]
        if state.rules is None:
            state.rules = IgnoreRules(root.path)
        paths = list(paths)
        found = refreshed(root, paths, state.files, state.skipped, state.rules)
        if found is None:
            return self._sweep(root, deadline)
        candidates, batch = found
        asked = {rel for p in paths if (rel := relative(root, p))}
        self.state[root.label].pending.difference_update(asked - {ref.rel for ref in candidates})
        self._reader.read(root, candidates, batch, deadline)
        return self.apply(root, batch)

    def _patrol(self, root: Root, budget_s: float) -> Change:
        state = self.state[root.label]
        run = state.patrol
        if run is None or time.time() - run.stepped > PATROL_IDLE_S:
            if not root_present(root):  # cheap: serve nothing from it until it returns
                started = time.time()
                change = self._sweep(root)
                self.mark_fresh(root, started)
                return change
            run = state.patrol = Pass.begin(root, state.files)
        reading, batch = run.step(root, state.files, state.skipped, budget_s)
        self._reader.read(root, reading, batch)
        if run.done:
            state.rules = run.rules
            state.patrol = None
            pending = self.state[root.label].pending
            pending.difference_update([rel for rel in pending if not fs_path(root, rel).exists()])
        change = self.apply(root, batch) if batch else Change()
        if run.done:
            self.mark_fresh(root, run.started)
        return change


def _moved(f: CorpusFile) -> bool:
    try:  # a string path: every hit of every search is re-checked, and making a Path costs more than the stat
        st = os.stat(os.path.join(f.root.path, *f.rel.split("/")))  # noqa: PTH116, PTH118
    except OSError:
        return True
    return stamp(st) != f.stamp
