"""One root kept equal to the disk (`RootSync`): what the live index knows of it, and its one
update pipeline, which every sweep, refresh and patrol step of the root runs:

    find (`live.changes`) -> settle (`live.settle`) -> prepare (`Library.prepare_file`) -> `Store.apply`

Each update ends in one `Change`.

What a `RootSync` knows of its root:

- `files`, `skipped`: the root's files as indexed (the corpus's own table, `Store.files_of`) and
  those not served, changed only by `Store.apply` and `Store.adopt`, read under the update lock;
- `present`; `fresh_as_of`, up to when every change is reflected; `missed_at`, when a call last
  answered without bringing the root up to date (then it is `changing` until fresh again);
- `dirty`: changed since its cache entry was written (or there is none), which is written once
  the root has been idle for `SAVE_IDLE_S`;
- `progress`: how far its first indexing (background) has got, None once it is done;
- `pending`: files still being written at the last attempt to read them, left as indexed until
  the next event or call reads them; `later`: files saved after the call whose sweep found them
  came, still settling then, not waited for (`settle.young`);
- `swept`: when the last whole stat sweep began (`time.monotonic()`): a call that came before it
  needs no sweep of its own if every file saved before it came was read (or is `pending`,
  `later`), that is, the sweep looked (`seen_ns`, `time.time_ns()`) after the call came;
- `patrolling`: the patrol's pass; `told` is told how a large read goes (every `CHUNK` files), for
  people watching stderr; a docs root's read of `parallel_files` new files or more goes to
  worker processes (0: never). A large first read of a docs root has worker processes find,
settle and prepare its files (`live.workers`); each chunk they pack goes in through `Store.adopt`,
as the root's cache entry does at start-up (`live.persist`). Updates of one root are serialised
by its update lock, so a slow read can never overwrite a newer one. Files are read and prepared
outside the store's lock; only `Store.apply` and `Store.adopt` take it.
"""

from __future__ import annotations

import logging
import math
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from corpus.catalog import Change
from corpus.files import FileTable
from corpus.ignore import IgnoreRules
from corpus.read import FileText
from corpus.roots import Root, RootKind, root_present
from corpus.scan import FileRef
from live import changes, persist, workers
from live.cache import IndexCache
from live.changes import Batch, Pass, fs_path, holds_text, merged, relative
from live.persist import freeze_chunk
from live.settle import Came, Later, Settler, young
from live.store import Store
from retrieval.engine.memory import release_free_memory
from retrieval.search.request import Phase, RootCondition

log = logging.getLogger("agents_context.index")

CHUNK = 2000
"""A large sweep reads and applies this many files at a time, so answers (marked partial) come
from what is ready while the rest is read, and progress can be told."""
PATROL_S = 0.01
"""The work one patrol step of a docs root does (see `patrol`): folders are walked until this
much time has passed (at least one folder per step)."""
PATROL_IDLE_S = 10.0
"""A patrol pass left alone this long (the watcher was reporting meanwhile) starts afresh."""


@dataclass(slots=True)
class Progress:
    """A root's first indexing (or the check of its cached index), while it runs."""

    done: int = 0
    total: int = 0
    """Files read and to read, once the files to read are known (0 until then)."""
    phase: Phase = Phase.INDEXING


class UpdateLock:
    """Held by a sweep, refresh or patrol step of one root: its updates are serialised. Patrol
    steps stand aside while someone waits for it (`waiting`), so a watcher's rescan is never
    starved by steps asked for by back-to-back calls."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._guard = threading.Lock()  # guards `waiting`
        self.waiting = 0

    @contextmanager
    def held(self, deadline: float | None = None) -> Iterator[bool]:
        """True once held; False when it stayed busy until `deadline` (a `time.monotonic()`
        moment; None waits as long as it takes)."""
        with self._guard:
            self.waiting += 1
        try:
            held = self._lock.acquire(timeout=-1 if deadline is None else max(0.0, deadline - time.monotonic()))
        finally:
            with self._guard:
                self.waiting -= 1
        try:
            yield held
        finally:
            if held:
                self._lock.release()

    def take(self) -> bool:
        """Held at once, if nobody holds it or waits for it (a patrol step's way)."""
        return not self.waiting and self._lock.acquire(blocking=False)

    def release(self) -> None:
        self._lock.release()

    def __enter__(self) -> None:
        self._lock.acquire()

    def __exit__(self, *_: object) -> None:
        self._lock.release()


class RootSync:
    """One root: its files as indexed (the corpus's own table, `Store.files_of`), what is still
    being written, how far its first indexing got, its update lock, its patrol pass and its cache
    entry's idle timer; and every update of it, each ending in one `Change`."""

    def __init__(
        self,
        root: Root,
        store: Store,
        settler: Settler,
        stopping: threading.Event,
        cache: IndexCache | None = None,
        told: Callable[[str], None] | None = None,
        parallel_files: int = workers.PARALLEL_FILES,
    ) -> None:
        self.root, self.store, self.settler, self.stopping, self.cache = root, store, settler, stopping, cache
        self.told, self.parallel_files = told, parallel_files  # see the module's docstring for each
        self.files, self.skipped = store.files_of(root), store.skipped[root.label]
        self.present, self.fresh_as_of, self.dirty, self.missed_at = True, 0.0, True, 0.0
        self.progress: Progress | None = None
        self.rules: IgnoreRules | None = None
        self.lock = UpdateLock()
        self.pending: set[str] = set()
        self.later: set[str] = set()
        self.swept, self.seen_ns = 0.0, 0
        self.patrolling: Pass | None = None
        self._timer: threading.Timer | None = None
        self._changed_at = 0.0

    @property
    def label(self) -> str:
        return self.root.label

    @property
    def building(self) -> bool:
        """Whether the root's first indexing (in the background) is still running."""
        return self.progress is not None

    @property
    def changing(self) -> bool:
        """Files still being written, or a call answered without catching up since the root was
        last fresh (see `missed`)."""
        return bool(self.pending or self.later) or self.missed_at > self.fresh_as_of

    def condition(self) -> RootCondition | None:
        """Why answers from the root are partial now (its first indexing runs, or its files are
        still changing); None when they are not."""
        if (p := self.progress) is not None:  # one lookup: the indexer thread drops it when done
            return RootCondition(self.label, p.phase, p.done, p.total)
        return RootCondition(self.label, changing=True) if self.changing else None

    def mark_fresh(self, moment: float) -> None:
        """Every change before `moment` is reflected; never while its first indexing runs, nor
        while a file was left as it was because it was still being written (`pending`, `later`)."""
        if not self.building and not self.pending and not self.later:
            self.fresh_as_of = max(self.fresh_as_of, moment)

    def missed(self, moment: float) -> None:
        """A call at `moment` answered without bringing the root up to date (its update lock
        stayed busy, or the files behind its hits kept changing): the root is `changing` until it
        is fresh as of a later moment."""
        self.missed_at = max(self.missed_at, moment)

    @contextmanager
    def updating(self, deadline: float | None = None) -> Iterator[bool]:
        """The update lock (`UpdateLock.held`); when it stayed busy until `deadline`, the root is `missed`."""
        asked = time.time()
        with self.lock.held(deadline) as held:
            if not held:
                self.missed(asked)
            yield held

    def sweep(self, deadline: float | None = None, came: Came | None = None) -> Change:
        """Bring the root up to date by stat: only files whose size or mtime moved are re-read.
        With `deadline` (a call's), it waits for the lock and for files to hold still only until
        then. With `came` (when a call came), any sweep begun after it that left no file saved
        before it for later serves (calls queued behind one sweep share the next), and files saved
        after this sweep first looked are not waited for (`settle.young`). With `came.outside`,
        files still settling are waited for without the lock, and the root looked at again."""
        outcome = self._sweep(deadline, came)
        if isinstance(outcome, Later):  # the lock is free again: wait without it, then once more
            left = math.inf if deadline is None else deadline - time.monotonic()
            time.sleep(max(0.0, min(outcome.seconds, left)))
            outcome = self._sweep(deadline, outcome.came)
        return outcome if isinstance(outcome, Change) else Change()

    def _sweep(self, deadline: float | None, came: Came | None) -> Change | Later:
        with self.updating(deadline) as held:
            if not held or (came is not None and self.swept >= came.at and self.seen_ns >= came.at_ns):
                return Change()
            begun, started, look = time.monotonic(), time.time(), time.time_ns()
            look = look if came is None or came.look_ns is None else came.look_ns
            try:
                outcome = self._whole(deadline, came, look)
                if isinstance(outcome, Later):
                    return outcome
                self.swept, self.seen_ns = max(self.swept, begun), max(self.seen_ns, look)
                self.mark_fresh(started)
                return outcome
            except Exception as exc:  # keep serving the last good index, whatever went wrong
                return self.store.failed(self.root, exc)

    def refresh(self, paths: Iterable[str | Path], deadline: float | None = None) -> Change | None:
        """Update just these absolute paths of the root (files or folders, present or gone); with
        `deadline`, as for `sweep`. None when the lock stayed busy until `deadline`."""
        with self.updating(deadline) as held:
            if not held:
                return None
            try:
                return self._named(list(paths), deadline)
            except Exception as exc:
                return self.store.failed(self.root, exc)

    def retry_pending(self) -> None:
        """Re-read files that were still being written at the last attempt."""
        pending = sorted(self.pending)  # a copy: other threads change the set
        if pending:
            self.refresh([fs_path(self.root, rel) for rel in pending])

    def patrol(self, budget_s: float = PATROL_S) -> Change:
        """Advance a stat sweep of a docs root the watcher does not cover now by a bounded step
        (folders for about `budget_s`, at least one; at most `PATROL_READS` files read). A pass
        that covered every folder makes the root fresh as of its start. Never waits: a root
        being read or updated by someone else is left alone (that is progress too)."""
        if self.building or not self.lock.take():
            return Change()
        try:
            return self._step(budget_s)
        except Exception as exc:
            self.patrolling = None
            return self.store.failed(self.root, exc)
        finally:
            self.lock.release()

    def _whole(self, deadline: float | None = None, came: Came | None = None, look: int = 0) -> Change | Later:
        root = self.root
        if not root_present(root):
            if self.present:
                log.warning("root %s is gone (%s); serving nothing from it until it returns", root.label, root.path)
            self.present = False
            self.pending.clear()
            return self._apply(Batch(removed=set(self.files), unskipped=set(self.skipped)))
        if not self.present:
            log.info("root %s is back", root.label)
        self.present = True
        self.rules = IgnoreRules(root.path)
        stale, batch = changes.swept(root, self.files, self.skipped, self.rules)
        # A file left mid-write that is now gone, or back as indexed, is no longer being written.
        self.pending.intersection_update([ref.rel for ref in stale])
        if came is not None and stale:
            sorted_ = young(stale, self.settler.settle_s, look, self.pending)
            if came.outside and sorted_.wait > 0:  # wait for them without the lock
                return Later(sorted_.wait, Came(came.at, came.at_ns, outside=False, look_ns=look))
            self.later, stale = {ref.rel for ref in sorted_.later}, sorted_.ready
        else:
            self.later = set()
        if not stale and not batch.removed and batch.skipped == self.skipped and self.store.last_error is None:
            return Change()  # nothing moved (the case before almost every answer): no update to apply
        return self._in_chunks(stale, batch, deadline)

    def _named(self, paths: list[str | Path], deadline: float | None) -> Change:
        root = self.root
        found = None
        if root_present(root):
            if self.rules is None:
                self.rules = IgnoreRules(root.path)
            found = changes.refreshed(root, paths, self.files, self.skipped, self.rules)
        if found is None:  # the root gone or itself changed, or rules that may change many files
            outcome = self._whole(deadline)
            return outcome if isinstance(outcome, Change) else Change()
        candidates, batch = found
        asked = {rel for p in paths if (rel := relative(root, p))}
        self.pending.difference_update(asked - {ref.rel for ref in candidates})
        self._settle(candidates, batch, deadline)
        return self._apply(batch)

    def _step(self, budget_s: float) -> Change:
        run = self.patrolling
        if run is None or time.time() - run.stepped > PATROL_IDLE_S:
            if not root_present(self.root):  # cheap: serve nothing from it until it returns
                started = time.time()
                outcome = self._whole()
                self.mark_fresh(started)
                return outcome if isinstance(outcome, Change) else Change()
            run = self.patrolling = Pass.begin(self.root, self.files)
        reading, batch = run.step(self.root, self.files, self.skipped, budget_s)
        self._settle(reading, batch)
        if run.done:
            self.rules = run.rules
            self.patrolling = None
            self.pending.difference_update([rel for rel in self.pending if not fs_path(self.root, rel).exists()])
        change = self._apply(batch) if batch else Change()
        if run.done:
            self.mark_fresh(run.started)
        return change

    def _settle(self, refs: list[FileRef], batch: Batch, deadline: float | None = None) -> bool:
        """`refs` read once they hold still (`Settler.settle`) and prepared into `batch`; True
        when some were left unread (`pending`) because the call's `deadline` came."""
        self.later.difference_update(ref.rel for ref in refs)
        busy = lambda: self.lock.waiting > 0  # noqa: E731 - someone waits for the root's lock
        found = self.settler.settle(self.root, refs, self.files, self.pending, deadline, busy)
        batch.skipped.update(found.skipped)
        batch.removed.update(found.gone)
        for ref, text in found.texts:
            _prepare(self.store, self.files, ref, text, batch)
        return found.cut

    def _apply(self, batch: Batch) -> Change:
        return self._landed(self.store.apply(self.root, batch))

    def _landed(self, change: Change) -> Change:
        """After an update: the root's cache entry is written once the root has been idle."""
        if change.count:
            self.dirty = True
            if not self.building and self.cache is not None:
                self._changed_at = time.time()
                self._arm()
        return change

    def _in_chunks(self, refs: list[FileRef], batch: Batch, deadline: float | None, beside: bool = True) -> Change:
        """Settle, prepare and apply `refs` `CHUNK` files at a time (the first batch also carries
        the removals and skips), so a large root is searchable while it is read. A large read of
        a docs root's new files goes to worker processes first (`_shared`)."""
        if beside and self.root.kind is RootKind.DOCS and deadline is None and self.parallel_files:
            fresh = [ref for ref in refs if ref.rel not in self.files]
            if len(fresh) >= self.parallel_files:
                first = self._apply(batch) if batch else Change()
                known = [ref for ref in refs if ref.rel in self.files]
                refs.clear()  # the walk's records of the new files go chunk by chunk as they are read
                by_workers, unread = _shared(
                    self.store, self.root, fresh, self.settler.settle_s, self.stopping, self.progress, self.told
                )
                by_workers = self._landed(by_workers)
                return merged([first, by_workers, self._in_chunks(known + unread, Batch(), deadline, beside=False)])
        progress = self.progress
        if progress is not None:
            progress.total = len(refs)
        done = []
        for start in range(0, max(len(refs), 1), CHUNK):
            if start and self.stopping.is_set():
                break
            part = refs[start : start + CHUNK]
            cut = self._settle(part, batch, deadline)
            done.append(self._apply(batch))
            if cut:  # a call out of time under churn: the rest is left to the watcher and the next call
                self.pending.update(ref.rel for ref in refs[start + CHUNK :])
                break
            batch = Batch()
            if len(refs) > CHUNK:
                freeze_chunk()
            _so_far(self.label, start + len(part), len(refs), progress, self.told if len(refs) > CHUNK else None)
        if len(done) > 1:
            _merge(self.store, self.label)
        return merged(done)

    def restore(self) -> bool:
        """Start from the root's cache entry, when there is one (`persist.restore`)."""
        if self.cache is None or not persist.restore(self.store, self.cache, self.root):
            return False
        self.dirty = False
        return True

    def save(self) -> None:
        """Write the root's cache entry if it changed since the last one (never while its first
        indexing runs: a half-read root is not worth keeping)."""
        if self.cache is None or not self.dirty or self.building or not self.present or self.store.last_error:
            return
        self.dirty = False  # a change from now on makes it dirty again
        if not persist.save(self.store, self.cache, self.root):
            self.dirty = True

    def _arm(self) -> None:
        """Write the entry once the root has had no change for `SAVE_IDLE_S` (one timer, which
        re-arms itself while the root keeps changing)."""
        if self.stopping.is_set() or (self._timer is not None and self._timer.is_alive()):
            return
        self._timer = threading.Timer(persist.SAVE_IDLE_S, self._when_idle)
        self._timer.daemon = True
        self._timer.start()

    def _when_idle(self) -> None:
        if self.stopping.is_set():
            return
        if time.time() - self._changed_at < persist.SAVE_IDLE_S:
            self._timer = None
            self._arm()
            return
        self.save()

    def close(self) -> None:
        """Stop the idle timer."""
        if self._timer is not None:
            self._timer.cancel()


def _prepare(store: Store, known: FileTable, ref: FileRef, text: FileText, batch: Batch) -> None:
    """A file read whole: into the batch, with its units when its content changed."""
    f = store.corpus.corpus_file(ref, text)
    old = known.get(ref.rel)
    if old is None or old.digest != f.digest:
        f, units = store.library.prepare_file(f, holds_text(ref.root))
        batch.prepared[f.path] = units
    elif not holds_text(ref.root):
        f = f.without_text()
    batch.files[ref.rel] = f


def _merge(store: Store, label: str) -> None:
    """After a read in chunks: the chunks' segments merged into one, and the memory the read freed
    given back to the system (after tldr's first read the server held 350 MB, 220 MB once given
    back: what a warm restart holds)."""
    started = time.perf_counter()
    store.merge_segments()
    release_free_memory()
    log.info("%s: index segments merged in %.0f ms", label, (time.perf_counter() - started) * 1000)


def _shared(
    store: Store,
    root: Root,
    refs: list[FileRef],
    settle_s: float,
    stopping: threading.Event,
    progress: Progress | None,
    told: Callable[[str], None] | None,
) -> tuple[Change, list[FileRef]]:
    """`refs` (none of them indexed yet; the list is emptied) read by worker processes `CHUNK`
    files at a time, each chunk adopted as it comes back; the files they left to this process."""
    total, started = len(refs), time.perf_counter()
    if progress is not None:
        progress.total = total
    parts = [refs[start : start + CHUNK] for start in range(0, total, CHUNK)]
    refs.clear()  # each chunk's records now go with its part, once it is read
    unread: list[FileRef] = []
    done: list[Change] = []
    read = 0
    for packed in workers.shared(root, parts, store.corpus.max_bytes, settle_s, store.library.ranking):
        if stopping.is_set():
            break
        unread.extend(packed.unread)
        if packed.saved is None:
            continue
        done.append(store.adopt(root, packed.saved, packed.skipped))
        freeze_chunk()
        read += len(packed.refs)
        _so_far(root.label, read, total, progress, told)
    if len(done) > 1:
        _merge(store, root.label)
    took = (time.perf_counter() - started) * 1000
    log.info("%s: %d files read by worker processes in %.0f ms", root.label, read, took)
    return merged(done) if done else Change(), unread


def _so_far(label: str, done: int, total: int, progress: Progress | None, told: Callable[[str], None] | None) -> None:
    """How far a large read got: in the root's progress, and told to people watching stderr."""
    if progress is not None:
        progress.done = done
    if told is not None:
        told(f"indexing {label}: {done}/{total} files read")
