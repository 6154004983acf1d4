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

Finding what changed is `live.changes`, reading it `live.settle`, writing the cache
`live.persist`. Files are read and tokenized outside the index lock; each batch is then applied
as one coalesced update, one generation, under the lock, so every answer comes from one complete
generation. Updates to one root are serialised, so a slow read can never overwrite a newer one.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import as_completed
from contextlib import contextmanager
from functools import partial
from pathlib import Path

from corpus.catalog import Change, CorpusFile
from corpus.identity import split_display
from corpus.ignore import IgnoreRules
from corpus.read import DEFAULT_MAX_BYTES, FileText, stamp
from corpus.roots import Root, RootKind, root_present
from corpus.rules import PinSet
from corpus.scan import FileRef, SkippedFile
from live import codec, workers
from live.cache import IndexCache
from live.changes import Batch, Pass, fs_path, holds_text, refreshed, relative, swept
from live.persist import SAVE_ON_EXIT_FILES, IdleSaves, freeze_chunk, without_collections
from live.settle import SETTLE_S, Settler
from live.store import CHANGING, Phase, Progress, Store
from retrieval.chunks.units import Unit
from retrieval.engine.memory import release_free_memory
from retrieval.engine.ranking import DEFAULT, Ranking

log = logging.getLogger("agents_context.index")

CHUNK = 2000
"""A large sweep reads and applies this many files at a time, so answers (marked partial) come
from what is ready while the rest is read, and progress can be told."""
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
        """Told how a large read goes (every `CHUNK` files), for people watching stderr."""
        self.cache = cache
        self.parallel_files = parallel_files
        """A docs root's read of at least this many new files goes to worker processes (0: never)."""
        self._stopping = threading.Event()
        self._settler = Settler(self.roots, max_bytes, settle_s, self._stopping)
        self._saves = IdleSaves(self.save, self._stopping) if cache is not None else None
        if self._saves is not None:
            self.on_change = self._saves.changed
        self._patrol_guard = threading.Lock()
        self._patrol_wanted: set[str] = set()
        self._patroller: threading.Thread | None = None
        # Largest first (docs roots): restored into an empty index, their postings need no re-sorting.
        by_size = sorted(self.roots, key=lambda r: r.kind is not RootKind.DOCS)
        restored = without_collections(lambda: {r.label: self._restore(r) for r in by_size}) if cache else {}
        self._restored = restored
        later = [r for r in self.roots if background and r.kind is RootKind.DOCS]
        for root in later:
            self.building[root.label] = Progress(phase=Phase.CHECKING if restored.get(root.label) else Phase.INDEXING)
        for root in self.roots:
            if root not in later:
                self._first_sweep(root)
        self.last_change = None  # the start-up build is not an update anyone needs told about
        self.indexer: threading.Thread | None = None
        if later:
            self.indexer = threading.Thread(target=self._index_later, args=(later,), name="indexer", daemon=True)
            self.indexer.start()

    # --- start-up and the cache ---------------------------------------------------------------

    def _cache_key(self, root: Root) -> str:
        assert self.cache is not None
        pins = [] if root.kind is RootKind.DOCS else list(self.corpus.pins_of(root))
        return self.cache.key(root, pins, self.corpus.max_bytes)

    def _restore(self, root: Root) -> bool:
        """Load the root's cache entry into the index (it is checked against the files next)."""
        assert self.cache is not None
        started = time.perf_counter()
        restored = self.cache.load(root, self._cache_key(root))
        if restored is None:
            return False
        with self.writing():
            self.corpus.files.update(zip([f.path for f in restored.files], restored.files, strict=True))
            self.state[root.label].files.update(zip([f.rel for f in restored.files], restored.files, strict=True))
            self.library.sections.unpack(restored.sections)
            self.library.windows.unpack(restored.windows)
        self.state[root.label].dirty = False
        log.info(
            "%s: %d files from the cache in %.0f ms; checking them against the disk",
            root.label,
            len(restored.files),
            (time.perf_counter() - started) * 1000,
        )
        return True

    def _first_sweep(self, root: Root) -> None:
        started = time.time()
        change = self.sweep(root)
        if self._stopping.is_set():
            return  # cut short by shutdown: a half-read root is neither fresh nor worth caching
        self.building.pop(root.label, None)
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
        """Write the root's cache entry if it changed since the last one (never while its first
        indexing runs: a half-read root is not worth keeping)."""
        state = self.state[root.label]
        if self.cache is None or not state.dirty or root.label in self.building:
            return
        if not state.present or self.last_error is not None:
            return
        started = time.perf_counter()
        with self.writing():
            state.dirty = False  # a change from now on makes it dirty again
            files = sorted(state.files.values(), key=lambda f: f.rel)
            paths = [f.path for f in files]
            sections, windows = self.library.sections.pack(paths), self.library.windows.pack(paths)
        try:
            self.cache.save(root, self._cache_key(root), files, sections, windows)
        except Exception as exc:  # a full disk, a read-only cache, anything: serve on, uncached
            state.dirty = True
            log.warning("could not write the cache for %s: %s", root.label, exc)
            return
        release_free_memory()  # packing a large root makes and drops copies of all of it (tldr: 110 MB)
        log.info("%s: cache written in %.0f ms", root.label, (time.perf_counter() - started) * 1000)

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
        with self._patrol_guard:
            patroller = self._patroller
        if patroller is not None:
            patroller.join(timeout=5.0)
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
        deadline = time.monotonic() + budget_s
        for root in self.agents_roots:
            self.sweep(root, deadline)
        docs = [r for r in self.roots if r.kind is RootKind.DOCS]
        if docs:
            self.patrol_soon(r for r in docs if not covered(r))

    @contextmanager
    def _updating(self, root: Root, deadline: float | None = None) -> Iterator[bool]:
        """The root's update lock, for a sweep or refresh: True once held; False when it stayed
        busy until `deadline` (a `time.monotonic()` moment; None waits as long as it takes).
        Patrol steps stand aside while one of these waits (a step takes the lock only when nobody
        is waiting for it), so a watcher's rescan is never starved by steps asked for by
        back-to-back calls."""
        state = self.state[root.label]
        with self._patrol_guard:
            state.waiting += 1
        try:
            held = state.lock.acquire(timeout=-1 if deadline is None else max(0.0, deadline - time.monotonic()))
        finally:
            with self._patrol_guard:
                state.waiting -= 1
        if not held:
            yield False
            return
        try:
            yield True
        finally:
            state.lock.release()

    def _update(self, root: Root, work: Callable[[], Change], deadline: float | None) -> Change | None:
        """`work` under the root's update lock; None when the lock stayed busy until `deadline`
        (then the root is `missed`: it says it is changing until an update catches up)."""
        asked = time.time()
        with self._updating(root, deadline) as held:
            if not held:
                self.missed(root, asked)
                return None
            try:
                return work()
            except Exception as exc:  # keep serving the last good index, whatever went wrong
                return self.failed(root, exc)

    def sweep(self, root: Root, deadline: float | None = None) -> Change:
        """Bring `root` up to date by stat: only files whose size or mtime moved are re-read. With
        `deadline` (a call's, see `catch_up`), it waits for the lock and pauses for files to hold
        still only until then; reads of files that hold still are made all the same."""

        def work() -> Change:
            started = time.time()
            change = self._sweep(root, deadline)
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
        if root is not None and root.label not in self.building:
            self.refresh(root, [fs_path(root, split_display(path)[1])], deadline)

    def mark_fresh(self, root: Root, moment: float) -> None:
        """As `Store.mark_fresh`, but never while a file of the root was left as it was because
        it was still being written (`pending`): a change not read is not reflected."""
        if not self._settler.pending[root.label]:
            super().mark_fresh(root, moment)

    def missed(self, root: Root, moment: float) -> None:
        """A call at `moment` answered without bringing `root` up to date (its update lock stayed
        busy, or the files behind its hits kept changing): the root is `changing` until it is
        fresh as of a later moment."""
        state = self.state[root.label]
        state.missed = max(state.missed, moment)

    def changing(self, roots: Iterable[Root]) -> list[str]:
        """`label:changing` for each of these roots whose files are still changing: a file left as
        it was because it was being written, or a call that answered without catching up (see
        `missed`). Answers from them are the freshest complete generation, marked partial."""
        return [
            f"{r.label}:{CHANGING}"
            for r in roots
            if r.label not in self.building
            and (self._settler.pending[r.label] or self.state[r.label].missed > self.state[r.label].fresh_as_of)
        ]

    def rebuild(self) -> Change:
        """Sweep every root; the changes of all of them together."""
        return merged([self.sweep(root) for root in self.roots])

    def retry_pending(self) -> None:
        """Re-read files that were still being written at the last attempt."""
        for root in self.roots:
            pending = sorted(self._settler.pending[root.label])  # a copy: other threads change the set
            if pending:
                self.refresh(root, [fs_path(root, rel) for rel in pending])

    def patrol_soon(self, roots: Iterable[Root]) -> None:
        """Ask for one patrol step of each of `roots` in a background thread, and return at once.
        Asks made while a step runs add up to one more step per root, not one per ask."""
        with self._patrol_guard:
            self._patrol_wanted.update(r.label for r in roots)
            if (
                self._patrol_wanted
                and not self._stopping.is_set()
                and (self._patroller is None or not self._patroller.is_alive())
            ):
                self._patroller = threading.Thread(target=self._patrol_asked, name="patrol", daemon=True)
                self._patroller.start()

    def _patrol_asked(self) -> None:
        while not self._stopping.is_set():
            with self._patrol_guard:
                labels, self._patrol_wanted = self._patrol_wanted, set()
                if not labels:
                    self._patroller = None
                    return
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
        if root.label in self.building or state.waiting or not state.lock.acquire(blocking=False):
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
            if root.label in stale and root.label not in self.building:  # partial answers: never wait
                change = self._update(root, partial(self._refresh, root, stale[root.label], deadline), deadline)
                changed |= change is None or change.count > 0
                # A file caught mid-save is left as indexed until it settles: its hit is stale
                # all the same, so the caller searches again rather than serve it.
                pending = self._settler.pending[root.label]
                changed |= any(relative(root, path) in pending for path in stale[root.label])
        # Checked last: another thread (the watcher, a patrol step) may have applied the change
        # while this one waited for the root, and then this refresh found nothing left to do.
        return changed or (generation is not None and self.changed_after(paths, generation))

    # --- one update: find, read, apply --------------------------------------------------------

    def _sweep(self, root: Root, deadline: float | None = None) -> Change:
        state = self.state[root.label]
        pending = self._settler.pending[root.label]
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
        if not stale and not batch.removed and batch.skipped == state.skipped and self.last_error is None:
            return Change()  # nothing moved (the case before almost every answer): no update to apply
        return self._read_apply(root, stale, batch, deadline)

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
        self._settler.pending[root.label].difference_update(asked - {ref.rel for ref in candidates})
        self._settler.read(root, candidates, state.files, batch, self._take, deadline)
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
        self._settler.read(root, reading, state.files, batch, self._take)
        if run.done:
            state.rules = run.rules
            state.patrol = None
            pending = self._settler.pending[root.label]
            pending.difference_update([rel for rel in pending if not fs_path(root, rel).exists()])
        change = self.apply(root, batch) if batch else Change()
        if run.done:
            self.mark_fresh(root, run.started)
        return change

    def _read_apply(
        self, root: Root, refs: list[FileRef], batch: Batch, deadline: float | None = None, beside: bool = True
    ) -> Change:
        """Read and apply `refs` `CHUNK` files at a time (the first batch also carries the
        removals and skips), so a large root is searchable while it is read. A large read of a
        docs root's new files goes to worker processes (`live.workers`)."""
        known = self.state[root.label].files
        if beside and root.kind is RootKind.DOCS and deadline is None and self.parallel_files:
            fresh = [ref for ref in refs if ref.rel not in known]
            if len(fresh) >= self.parallel_files:
                first = self.apply(root, batch) if batch else Change()
                by_workers, unread = self._read_beside(root, fresh)
                given = {ref.rel for ref in fresh} - unread
                later = [ref for ref in refs if ref.rel not in given]
                rest = self._read_apply(root, later, Batch(), deadline, beside=False)
                return merged([first, by_workers, rest])
        progress = self.building.get(root.label)
        if progress is not None:
            progress.total = len(refs)
        changes = []
        for start in range(0, max(len(refs), 1), CHUNK):
            if start and self._stopping.is_set():
                break
            part = refs[start : start + CHUNK]
            cut = self._settler.read(root, part, known, batch, self._take, deadline)
            changes.append(self.apply(root, batch))
            if cut:  # a call out of time under churn: the rest is left to the watcher and the next call
                self._settler.pending[root.label].update(ref.rel for ref in refs[start + CHUNK :])
                break
            batch = Batch()
            if len(refs) > CHUNK:
                freeze_chunk()
            if progress is not None:
                progress.done = start + len(part)
            if self.progress is not None and len(refs) > CHUNK:
                self.progress(f"indexing {root.label}: {start + len(part)}/{len(refs)} files read")
        if len(changes) > 1:
            self._merge_chunks(root)
        return merged(changes)

    def _merge_chunks(self, root: Root) -> None:
        """After a read in chunks: one segment per chunk, which every query would pay for, merged
        into one; and the memory the read freed given back to the system (after tldr's first
        read the server held 350 MB, 220 MB once given back: what a warm restart holds)."""
        started = time.perf_counter()
        with self.writing():
            self.library.merge_all()
        release_free_memory()
        log.info("%s: index segments merged in %.0f ms", root.label, (time.perf_counter() - started) * 1000)

    def _read_beside(self, root: Root, refs: list[FileRef]) -> tuple[Change, set[str]]:
        """Have worker processes read `refs` (none of them indexed yet) `CHUNK` files at a time,
        and add each chunk as it comes back; the relative paths they left to this process (files
        changing or empty, chunks whose worker failed)."""
        progress = self.building.get(root.label)
        if progress is not None:
            progress.total = len(refs)
        parts = [refs[start : start + CHUNK] for start in range(0, len(refs), CHUNK)]
        unread: set[str] = set()
        changes, done = [], 0
        started = time.perf_counter()
        settings = (self.corpus.max_bytes, self._settler.settle_s, self.library.ranking)
        pool = workers.pool(min(workers.workers(), len(parts)))
        try:
            asked = {pool.submit(workers.read_part, root, part, *settings): part for part in parts}
        except Exception as exc:  # no processes to be had (or a setting that cannot be sent): read here
            pool.shutdown(wait=False, cancel_futures=True)
            log.warning("could not start worker processes (%s); reading %s here", exc, root.label)
            return Change(), {ref.rel for ref in refs}
        with pool:
            for future in as_completed(asked):
                # Popped: a future keeps its result, so a chunk held here would stay alive until
                # the whole read is done (tldr: every chunk's packed arrays, ~90 MB at the peak).
                part = asked.pop(future)
                if self._stopping.is_set():
                    pool.shutdown(wait=False, cancel_futures=True)
                    break
                try:
                    read = future.result()
                    restored = codec.restore(root, workers.PART, read.arrays)
                except Exception as exc:  # a worker that died or sent something unusable: read its chunk here
                    log.warning("a worker failed on %d files of %s (%s); reading them here", len(part), root.label, exc)
                    unread.update(ref.rel for ref in part)
                    continue
                unread.update(read.unread)
                skipped = [SkippedFile(root, rel, refusal) for rel, refusal in read.skipped]
                changes.append(self.adopt(root, restored, skipped))
                freeze_chunk()
                done += len(part)
                if progress is not None:
                    progress.done = done
                if self.progress is not None:
                    self.progress(f"indexing {root.label}: {done}/{len(refs)} files read")
        if len(changes) > 1:
            self._merge_chunks(root)
        log.info(
            "%s: %d files read by worker processes in %.0f ms", root.label, done, (time.perf_counter() - started) * 1000
        )
        return merged(changes) if changes else Change(), unread

    def _take(self, ref: FileRef, text: FileText, known: dict[str, CorpusFile], batch: Batch) -> None:
        """A file read whole: into the batch, with its units when its content changed."""
        f = self.corpus.corpus_file(ref, text)
        old = known.get(ref.rel)
        if old is None or old.digest != f.digest:
            f, units = self.library.prepare_file(f, holds_text(ref.root))
            batch.prepared[f.path] = units
        elif not holds_text(ref.root):
            f = f.without_text()
        batch.files[ref.rel] = f


def merged(changes: Sequence[Change]) -> Change:
    """Several updates' changes as one."""
    if len(changes) == 1:
        return changes[0]
    return Change(
        added=frozenset().union(*(c.added for c in changes)),
        changed=frozenset().union(*(c.changed for c in changes)),
        removed=frozenset().union(*(c.removed for c in changes)),
        at=time.time(),
    )


def _moved(f: CorpusFile) -> bool:
    try:  # a string path: every hit of every search is re-checked, and making a Path costs more than the stat
        st = os.stat(os.path.join(f.root.path, *f.rel.split("/")))  # noqa: PTH116, PTH118
    except OSError:
        return True
    return stamp(st) != f.stamp
