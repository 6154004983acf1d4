"""The live index: the corpus and its library, kept equal to what is on disk, one file at a time.

- `sweep(root)` stats every file of a root and re-reads only those whose size or mtime moved
  (read-your-writes for `.AGENTS`, before every tool call; a full rescan after a watcher restart).
- `refresh(root, paths)` updates just the paths a watcher batch names (large `--docs` roots).
- `verify(units)` re-checks the files behind a set of hits, so a deleted or edited file is never
  served from the index.
- `patrol(root)` advances a stat sweep of a `--docs` root by a bounded step; `patrol_soon(roots)`
  asks for one step in the background (once per tool call while the watcher is not running or
  not reporting in), so new files are still found and no call waits for it.

A file whose bytes did not change (a `touch`) is never re-tokenized. Files are read and tokenized
outside the index lock; each batch is then applied as one coalesced update, one generation, under
the lock, so every answer comes from one complete generation. Updates to one root are serialised,
so a slow read can never overwrite a newer one. A file is indexed only if it held still: a read
during which it changed, or that finds it changed since it was stat'd, is retried after a pause
and, if still changing, left as it was until it settles (a save in progress is never indexed).
"""

from __future__ import annotations

import bisect
import gc
import logging
import os
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from corpus.catalog import Corpus, CorpusFile
from corpus.errors import NotInCorpus
from corpus.ignore import IGNORE_FILES, IgnoreRules
from corpus.read import DEFAULT_MAX_BYTES, Changing, FileText, Skipped, read_text, stamp
from corpus.roots import Root, RootKind, root_present
from corpus.rules import PinSet
from corpus.scan import FileRef, SkippedFile, Walk, check_name, included, refused, walk, walk_folders
from corpus.watch import watched_root
from retrieval.cache import IndexCache
from retrieval.library import Library, Prepared
from retrieval.ranking import DEFAULT, Ranking
from retrieval.units import Unit

log = logging.getLogger("agents_context.index")

CHUNK = 2000
"""A large sweep reads and applies this many files at a time, so answers (marked partial) come
from what is ready while the rest is read, and progress can be told."""
EMPTIED_S = 0.5
"""How long a file that had text must be seen empty, unchanged, before it is indexed empty."""
SAVE_IDLE_S = 30.0
"""A root's cache entry is rewritten once the root has had no change for this long."""
SAVE_ON_EXIT_FILES = 2000
"""At exit, entries are written only for roots this small (a few milliseconds each)."""
_RETRY_DELAYS = (0.03, 0.08, 0.2)
"""Seconds to wait before re-reading a file that changed while it was read: each retry is kept
only if the file held still across its pause, so none is shorter than `SETTLE_S`."""
SETTLE_S = 0.03
"""A file modified less than this long ago may still be mid-save: a batch waits (once) until its
newest file is this old before reading, and keeps a read only if the file is still as it was
stat'd before the wait (else it retries), so a save in progress is never read half-written."""
PATROL_S = 0.01
"""The work one patrol step of a docs root does (see `patrol`): folders are walked until this
much time has passed (at least one folder per step)."""
PATROL_READS = 50
"""Files one patrol step reads at most (a bulk change is read over several calls)."""
PATROL_IDLE_S = 10.0
"""A patrol pass left alone this long (the watcher was reporting meanwhile) starts afresh."""


@dataclass(frozen=True, slots=True)
class Change:
    """What one update changed: display paths added, changed (content) and removed."""

    added: frozenset[str] = frozenset()
    changed: frozenset[str] = frozenset()
    removed: frozenset[str] = frozenset()
    at: float = 0.0
    """`time.time()` when it was applied."""

    @property
    def count(self) -> int:
        return len(self.added) + len(self.changed) + len(self.removed)


@dataclass(frozen=True, slots=True)
class View:
    """A consistent look at one generation (valid while the `view()` block holds the lock)."""

    corpus: Corpus
    library: Library
    generation: int
    last_change: Change | None


Listener = Callable[[Root, Change], None]


@dataclass(slots=True)
class Progress:
    """A root's first indexing (or the check of its cached index), while it runs."""

    done: int = 0
    total: int = 0
    phase: str = "indexing"
    """`indexing` (reading the files) or `checking` (a cached index, against the files' stat)."""

    def __str__(self) -> str:
        return f"{self.done}/{self.total}" if self.total else self.phase


@dataclass(slots=True)
class _Pass:
    """One pass of the patrol of a docs root over all its folders, spread over many calls."""

    started: float
    folders: Iterator[tuple[str, Walk]]
    rules: IgnoreRules
    by_folder: dict[str, list[str]]
    """The root's known files by folder prefix when the pass began (to find what went)."""
    stepped: float = 0.0
    visited: set[str] = field(default_factory=set)
    skipped: set[str] = field(default_factory=set)
    to_read: list[FileRef] = field(default_factory=list)
    walked: bool = False


@dataclass(slots=True)
class _Batch:
    """Files read for one update of one root, before it is applied."""

    files: dict[str, CorpusFile] = field(default_factory=dict)
    prepared: dict[str, Prepared] = field(default_factory=dict)
    removed: set[str] = field(default_factory=set)
    skipped: dict[str, SkippedFile] = field(default_factory=dict)
    unskipped: set[str] = field(default_factory=set)


class LiveIndex:
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
    ) -> None:
        """Index every root: from its cache entry when there is one, then by a stat sweep that
        re-reads only what changed. With `background`, `--docs` roots are indexed in a thread
        (answers meanwhile come from what is ready; see `indexing`); `.AGENTS` roots always
        before returning, since the instructions are built from them."""
        self.roots = list(roots)
        self.progress = progress
        """Told how a large read goes (every `CHUNK` files), for people watching stderr."""
        self.cache = cache
        self.settle_s = settle_s
        self.ranking = ranking
        self.corpus = Corpus(self.roots, PinSet() if pins is None else pins, max_bytes, explicit_pins=pins is not None)
        self.library = Library(ranking)
        self.generation = 0
        self.last_change: Change | None = None
        self.last_error: str | None = None
        self.fresh_as_of: dict[str, float] = {r.label: 0.0 for r in self.roots}
        self.present: dict[str, bool] = {r.label: True for r in self.roots}
        self.listeners: list[Listener] = []
        self._lock = threading.Lock()
        self._turnstile = threading.Lock()
        self._root_locks = {r.label: threading.Lock() for r in self.roots}
        self._waiting = {r.label: 0 for r in self.roots}
        """Sweeps and refreshes waiting for each root's lock (patrol steps give way to them)."""
        self._files: dict[str, dict[str, CorpusFile]] = {r.label: {} for r in self.roots}
        """Per root, by relative path; changed only in `_apply`, read under the root's lock."""
        self._skipped: dict[str, dict[str, SkippedFile]] = {r.label: {} for r in self.roots}
        self._pending: dict[str, set[str]] = {r.label: set() for r in self.roots}
        self._rules: dict[str, IgnoreRules] = {}
        self.building: dict[str, Progress] = {}
        """Roots whose first indexing is still running (background), with how far it got."""
        self._dirty: dict[str, bool] = {r.label: True for r in self.roots}
        """Changed since the root's cache entry was written (or there is none)."""
        self._stopping = threading.Event()
        self._save_timers: dict[str, threading.Timer] = {}
        self._emptied: dict[Path, tuple[tuple[int, int, int], float]] = {}
        """Files found empty: their stamp and when it was first seen so (see `_read`)."""
        self._changed_at: dict[str, float] = {}
        self._passes: dict[str, _Pass] = {}
        self._changed_in: dict[str, int] = {}
        """The generation in which each display path last changed (added, changed or removed)."""
        self._patrol_guard = threading.Lock()
        self._patrol_wanted: set[str] = set()
        self._patroller: threading.Thread | None = None
        # Largest first (docs roots): restored into an empty index, their postings need no re-sorting.
        by_size = sorted(self.roots, key=lambda r: r.kind is not RootKind.DOCS)
        restored = _without_collections(lambda: {r.label: self._restore(r) for r in by_size}) if cache else {}
        later = [r for r in self.roots if background and r.kind is RootKind.DOCS]
        for root in later:
            self.building[root.label] = Progress(phase="checking" if restored.get(root.label) else "indexing")
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
        with self._writing():
            self.corpus.files.update(zip([f.path for f in restored.files], restored.files, strict=True))
            self._files[root.label].update(zip([f.rel for f in restored.files], restored.files, strict=True))
            self.library.sections.unpack(restored.sections)
            self.library.windows.unpack(restored.windows)
        self._dirty[root.label] = False
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
        if not self._stopping.is_set() and self.last_error is None:
            self.mark_fresh(root, started)
        if change.count and self.progress is not None:
            self.progress(f"{root.label}: {len(self._files[root.label])} files indexed")
        self.save(root)

    def _index_later(self, roots: Sequence[Root]) -> None:
        for root in roots:
            if self._stopping.is_set():
                return
            self._first_sweep(root)

    def save(self, root: Root) -> None:
        """Write the root's cache entry if it changed since the last one (never while its first
        indexing runs: a half-read root is not worth keeping)."""
        if self.cache is None or not self._dirty[root.label] or root.label in self.building:
            return
        if not self.present[root.label] or self.last_error is not None:
            return
        started = time.perf_counter()
        with self._writing():
            self._dirty[root.label] = False  # a change from now on makes it dirty again
            files = sorted(self._files[root.label].values(), key=lambda f: f.rel)
            paths = [f.path for f in files]
            sections, windows = self.library.sections.pack(paths), self.library.windows.pack(paths)
        try:
            self.cache.save(root, self._cache_key(root), files, sections, windows)
        except (OSError, ValueError) as exc:  # a full disk, a read-only cache...: serve on, uncached
            self._dirty[root.label] = True
            log.warning("could not write the cache for %s: %s", root.label, exc)
            return
        log.info("%s: cache written in %.0f ms", root.label, (time.perf_counter() - started) * 1000)

    def _schedule_save(self, root: Root) -> None:
        """Rewrite the root's cache entry once it has been left alone for `SAVE_IDLE_S` (a
        background timer, so a burst of edits is one write and no search waits for it)."""
        if self.cache is None or self._stopping.is_set():
            return
        pending = self._save_timers.get(root.label)
        if pending is not None and pending.is_alive():
            return  # it re-checks how long the root has been idle before writing
        timer = threading.Timer(SAVE_IDLE_S, self._save_when_idle, args=(root,))
        timer.daemon = True
        self._save_timers[root.label] = timer
        timer.start()

    def _save_when_idle(self, root: Root) -> None:
        if self._stopping.is_set():
            return
        if time.time() - self._changed_at.get(root.label, 0.0) < SAVE_IDLE_S:
            self._save_timers.pop(root.label, None)
            self._schedule_save(root)
            return
        self.save(root)

    def close(self) -> None:
        """Stop background indexing and the save timers, and write the cache entries of the small
        roots that changed since their last write (a large docs root's entry takes a second or
        more to write: exit stays prompt, and the next start re-reads only what changed since)."""
        self._stopping.set()
        for timer in self._save_timers.values():
            timer.cancel()
        if self.indexer is not None:
            self.indexer.join(timeout=5.0)
        with self._patrol_guard:
            patroller = self._patroller
        if patroller is not None:
            patroller.join(timeout=5.0)
        for root in self.roots:
            if len(self._files[root.label]) <= SAVE_ON_EXIT_FILES:
                self.save(root)

    def indexing(self, roots: Iterable[Root]) -> list[str]:
        """`label:done/total` for each of these roots whose first indexing is still running."""
        return [f"{r.label}:{p}" for r in roots if (p := self.building.get(r.label)) is not None]

    @property
    def agents_roots(self) -> list[Root]:
        return self.corpus.agents_roots

    @contextmanager
    def view(self) -> Iterator[View]:
        with self._turnstile:  # queue behind an update that is waiting (see `_writing`)
            pass
        with self._lock:
            yield View(self.corpus, self.library, self.generation, self.last_change)

    @contextmanager
    def _writing(self) -> Iterator[None]:
        """The lock, for an update (or a short read of the live state). An update waiting for it
        holds the turnstile, so new `view()`s wait behind it: back-to-back searches (an agent
        polling, a slow miss) cannot starve the watcher's updates."""
        with self._turnstile, self._lock:
            yield

    def fresh_since(self, roots: Iterable[Root]) -> float:
        """The moment up to which every change in `roots` is reflected (the oldest root's)."""
        return min((self.fresh_as_of[r.label] for r in roots), default=time.time())

    def mark_fresh(self, root: Root, moment: float) -> None:
        if root.label not in self.building:  # a root still being read is not fresh as of anything
            self.fresh_as_of[root.label] = max(self.fresh_as_of[root.label], moment)

    # --- updates ----------------------------------------------------------------------------

    @contextmanager
    def _updating(self, root: Root) -> Iterator[None]:
        """The root's update lock, for a sweep or refresh. Patrol steps stand aside while one of
        these waits (a step takes the lock only when nobody is waiting for it), so a watcher's
        rescan is never starved by steps asked for by back-to-back calls."""
        with self._patrol_guard:
            self._waiting[root.label] += 1
        with self._root_locks[root.label]:
            with self._patrol_guard:
                self._waiting[root.label] -= 1
            yield

    def sweep(self, root: Root) -> Change:
        """Bring `root` up to date by stat: only files whose size or mtime moved are re-read."""
        with self._updating(root):
            started = time.time()
            try:
                change = self._sweep(root)
            except Exception as exc:  # keep serving the last good index, whatever went wrong
                return self._failed(root, exc)
            self.mark_fresh(root, started)
            return change

    def refresh(self, root: Root, paths: Iterable[str | Path]) -> Change:
        """Update just these absolute paths of `root` (files or folders, present or gone)."""
        with self._updating(root):
            try:
                return self._refresh(root, paths)
            except Exception as exc:
                return self._failed(root, exc)

    def retry_pending(self) -> None:
        """Re-read files that were still being written at the last attempt."""
        for root in self.roots:
            if self._pending[root.label]:
                self.refresh(root, [_fs_path(root, rel) for rel in self._pending[root.label]])

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
        lock = self._root_locks[root.label]
        if root.label in self.building or self._waiting[root.label] or not lock.acquire(blocking=False):
            return Change()
        try:
            return self._patrol(root, budget_s)
        except Exception as exc:
            self._passes.pop(root.label, None)
            return self._failed(root, exc)
        finally:
            lock.release()

    def verify(self, units: Iterable[Unit], generation: int | None = None) -> bool:
        """Re-check the files behind `units`; update any that changed. True if anything did, or
        if any of them changed after `generation` (the one the units were found in: another
        update may have come in between)."""
        stale: dict[str, list[Path]] = {}
        paths = {u.path for u in units}
        with self._writing():
            for path in paths:
                f = self.corpus.files.get(path)
                if f is None or _moved(f):
                    root = f.root if f else self._root_of(path)
                    if root is not None:
                        stale.setdefault(root.label, []).append(_fs_path(root, path.split("/", 1)[1]))
        changed = False
        for root in self.roots:
            if root.label in stale and root.label not in self.building:  # partial answers: never wait
                changed |= self.refresh(root, stale[root.label]).count > 0
                # A file caught mid-save is left as indexed until it settles: its hit is stale
                # all the same, so the caller searches again rather than serve it.
                pending = self._pending[root.label]
                changed |= any(_relative(root, path) in pending for path in stale[root.label])
        # Checked last: another thread (the watcher, a patrol step) may have applied the change
        # while this one waited for the root, and then this refresh found nothing left to do.
        return changed or (generation is not None and any(self._changed_in.get(p, 0) > generation for p in paths))

    def route(self, changes: Iterable[tuple[object, str]] | None) -> None:
        """Apply one watcher report: a full stat sweep (None), a batch of (change, path), or a
        quiet tick (empty: every docs root is fresh as of now)."""
        if changes is None:
            self.rebuild()
            return
        seen = time.time()
        by_root: dict[str, list[str]] = {}
        for _, path in changes:
            root = watched_root(self.roots, path)
            if root is not None:
                by_root.setdefault(root.label, []).append(path)
        for root in self.roots:
            if root.label in by_root:
                if root.kind is RootKind.AGENTS:
                    self.sweep(root)  # small: a stat sweep also catches what events miss
                else:
                    self.refresh(root, by_root[root.label])
            elif root.kind is RootKind.DOCS:
                self.mark_fresh(root, seen)
        self.retry_pending()

    def rebuild(self) -> Change:
        """Sweep every root; the changes of all of them together."""
        return _merged([self.sweep(root) for root in self.roots])

    def _sweep(self, root: Root) -> Change:
        known = self._files[root.label]
        batch = _Batch()
        if not root_present(root):
            if self.present[root.label]:
                log.warning("root %s is gone (%s); serving nothing from it until it returns", root.label, root.path)
            self.present[root.label] = False
            batch.removed = set(known)
            batch.unskipped = set(self._skipped[root.label])
            return self._apply(root, batch)
        if not self.present[root.label]:
            log.info("root %s is back", root.label)
        self.present[root.label] = True
        self._rules[root.label] = IgnoreRules(root.path)
        found = walk(root, rules=self._rules[root.label])
        batch.unskipped = set(self._skipped[root.label])
        batch.skipped = {s.rel: s for s in found.skipped}
        current = {ref.rel: ref for ref in found.files}
        batch.removed = set(known) - set(current)
        stale = [ref for rel, ref in current.items() if _differs(known.get(rel), ref)]
        if not stale and not batch.removed and batch.skipped == self._skipped[root.label] and self.last_error is None:
            return Change()  # nothing moved (the case before almost every answer): no update to apply
        return self._read_apply(root, stale, known, batch)

    def _patrol(self, root: Root, budget_s: float) -> Change:
        label, known = root.label, self._files[root.label]
        run = self._passes.get(label)
        if run is None or time.time() - run.stepped > PATROL_IDLE_S:
            if not root_present(root):  # cheap: serve nothing from it until it returns
                started = time.time()
                change = self._sweep(root)
                self.mark_fresh(root, started)
                return change
            rules = IgnoreRules(root.path)
            by_folder: dict[str, list[str]] = {}
            for rel in known:
                by_folder.setdefault(_parent(rel), []).append(rel)
            run = self._passes[label] = _Pass(time.time(), walk_folders(root, rules), rules, by_folder)
        run.stepped = time.time()
        batch = _Batch()
        deadline = time.perf_counter() + budget_s
        while not run.walked and len(run.to_read) < PATROL_READS:
            step = next(run.folders, None)
            if step is None:
                run.walked = True
                break
            prefix, found = step
            run.visited.add(prefix)
            here = {ref.rel for ref in found.files}
            batch.removed.update(r for r in run.by_folder.get(prefix, ()) if r in known and r not in here)
            run.skipped.update(s.rel for s in found.skipped)
            batch.skipped.update({s.rel: s for s in found.skipped if self._skipped[label].get(s.rel) != s})
            run.to_read.extend(ref for ref in found.files if _differs(known.get(ref.rel), ref))
            if time.perf_counter() >= deadline:
                break
        # Stat again what an earlier step found: the file may have changed since.
        reading = [_ref(root, ref.rel, ref.path) for ref in run.to_read[:PATROL_READS]]
        del run.to_read[:PATROL_READS]
        self._read(root, reading, known, batch)
        done = run.walked and not run.to_read
        if done:  # what the pass did not see went with its folder (or its folder is now ignored)
            for rel in known:
                if _parent(rel) not in run.visited:
                    path = _fs_path(root, rel)
                    if not (path.exists() or path.is_symlink()) or refused(root, rel, run.rules):
                        batch.removed.add(rel)
            batch.unskipped = set(self._skipped[label]) - run.skipped
            self._rules[label] = run.rules
            del self._passes[label]
        change = self._apply(root, batch) if _any(batch) else Change()
        if done:
            self.mark_fresh(root, run.started)
        return change

    def _read_apply(self, root: Root, refs: list[FileRef], known: dict[str, CorpusFile], batch: _Batch) -> Change:
        """Read and apply `refs` `CHUNK` files at a time (the first batch also carries the
        removals and skips), so a large root is searchable while it is read."""
        progress = self.building.get(root.label)
        if progress is not None:
            progress.total = len(refs)
        changes = []
        for start in range(0, max(len(refs), 1), CHUNK):
            if start and self._stopping.is_set():
                break
            part = refs[start : start + CHUNK]
            self._read(root, part, known, batch)
            changes.append(self._apply(root, batch))
            batch = _Batch()
            if len(refs) > CHUNK:
                # The chunk's files and units now live as long as the index: out of the cyclic
                # collector's reach, as after a restore, or each full collection walks every chunk
                # read so far again (tldr's cold build: 10 of them, 1.8 s of CPU; 4 and 0.3 s
                # frozen). The young generations are collected first, so no fresh garbage
                # cycle is frozen with them.
                gc.collect(1)
                gc.freeze()
            if progress is not None:
                progress.done = start + len(part)
            if self.progress is not None and len(refs) > CHUNK:
                self.progress(f"indexing {root.label}: {start + len(part)}/{len(refs)} files read")
        if len(changes) > 1:  # read in chunks: one segment per chunk, which every query would pay for
            started = time.perf_counter()
            with self._writing():
                self.library.merge_all()
            log.info("%s: index segments merged in %.0f ms", root.label, (time.perf_counter() - started) * 1000)
        return _merged(changes)

    def _refresh(self, root: Root, paths: Iterable[str | Path]) -> Change:
        if not root_present(root):
            return self._sweep(root)
        known = self._files[root.label]
        batch = _Batch()
        candidates: list[FileRef] = []
        listing: list[str] | None = None
        rules = self._rules.setdefault(root.label, IgnoreRules(root.path))
        for rel in sorted({r for p in paths if (r := _relative(root, p)) is not None}):
            if rel == "" or rel.rsplit("/", 1)[-1] in IGNORE_FILES:
                return self._sweep(root)  # the root itself, or rules that may change many files
            path = _fs_path(root, rel)
            if rel in known:
                under: list[str] = []  # a known file is not a folder
            else:  # maybe a folder that held known files: find them by prefix
                listing = listing if listing is not None else sorted({*known, *self._skipped[root.label]})
                under = _with_prefix(listing, rel + "/")
            batch.unskipped.update([rel, *under])
            is_dir = path.is_dir() and not path.is_symlink()
            reason = refused(root, rel, rules) if not is_dir else check_name(rel + "/x") or rules.ignored(rel, True)
            if reason:
                if included(root, rel) or is_dir:
                    batch.skipped[rel] = SkippedFile(root, rel, reason)
                batch.removed.update(k for k in (rel, *under) if k in known)
            elif is_dir:
                found = walk(root, under=rel, rules=rules)
                batch.skipped.update({s.rel: s for s in found.skipped})
                inside = {ref.rel for ref in found.files}
                batch.removed.update(k for k in under if k in known and k not in inside)
                candidates.extend(ref for ref in found.files if _differs(known.get(ref.rel), ref))
            elif path.exists() or path.is_symlink():
                candidates.append(_ref(root, rel, path))
            else:
                batch.removed.update(k for k in (rel, *under) if k in known)
        self._read(root, candidates, known, batch)
        return self._apply(root, batch)

    def _read(self, root: Root, refs: list[FileRef], known: dict[str, CorpusFile], batch: _Batch) -> None:
        pending = self._pending[root.label]
        newest = max((ref.mtime_ns for ref in refs), default=0) / 1e9
        wait = self.settle_s - (time.time() - newest)
        if refs and wait > 0:
            time.sleep(min(wait, self.settle_s))
        empty: list[tuple[FileRef, FileText]] = []
        for ref in refs:
            if self._stopping.is_set():
                break  # shutting down: stop reading (what was read is applied as usual)
            pending.discard(ref.rel)
            try:
                text = _read_settled(root, ref, self.corpus.max_bytes)
            except Changing:
                pending.add(ref.rel)  # keep what is indexed; the next event or tick retries
                continue
            except Skipped as exc:
                batch.skipped[ref.rel] = SkippedFile(root, ref.rel, exc.reason)
                if ref.rel in known:
                    batch.removed.add(ref.rel)
                continue
            except NotInCorpus:
                if ref.rel in known:
                    batch.removed.add(ref.rel)
                continue
            if text.size == 0 and self.settle_s:
                stamp_now = (text.size, text.mtime_ns, text.ctime_ns)
                seen = self._emptied.get(ref.path)
                if seen is None or seen[0] != stamp_now:
                    seen = self._emptied[ref.path] = (stamp_now, time.monotonic())
                if ref.rel in known and known[ref.rel].size and time.monotonic() - seen[1] < EMPTIED_S:
                    # A save that truncates first shows an empty file, and a busy machine can
                    # hold the writer there longer than any short pause: a file that had text is
                    # taken as emptied only once reads have found it empty, unchanged, for
                    # `EMPTIED_S` (until then its last text stays; the next event or call retries).
                    pending.add(ref.rel)
                    continue
                # A new empty file is kept once it held still for a pause (one per batch).
                empty.append((ref, text))
                continue
            self._emptied.pop(ref.path, None)
            self._take(ref, text, known, batch)
        if empty:
            time.sleep(self.settle_s)
            for ref, text in empty:
                if _stamp_at(ref.path) == (text.size, text.mtime_ns, text.ctime_ns):
                    self._take(ref, text, known, batch)
                else:
                    pending.add(ref.rel)

    def _take(self, ref: FileRef, text: FileText, known: dict[str, CorpusFile], batch: _Batch) -> None:
        f = self.corpus.corpus_file(ref, text)
        batch.files[ref.rel] = f
        old = known.get(ref.rel)
        if old is None or old.digest != f.digest:
            batch.prepared[f.path] = self.library.prepare(
                f.path, f.uri, f.text, f.searchable, f.meta.title, f.meta.tags
            )

    def _apply(self, root: Root, batch: _Batch) -> Change:
        with self._writing():
            files, mine = self.corpus.files, self._files[root.label]
            before = {rel for rel in batch.files if rel in mine}
            for rel in batch.removed:
                files.pop(_display(root, rel), None)
                mine.pop(rel, None)
            for f in batch.files.values():
                files[f.path] = mine[f.rel] = f
            removed = {_display(root, rel) for rel in batch.removed}
            if batch.prepared or removed:
                self.library.apply({**batch.prepared, **dict.fromkeys(removed)})
            skipped = self._skipped[root.label]
            for rel in batch.unskipped:
                skipped.pop(rel, None)
            skipped.update(batch.skipped)
            self.corpus.skipped = sorted(
                (s for r in self.roots for s in self._skipped[r.label].values()),
                key=lambda s: (s.root.label, s.rel),
            )
            change = Change(
                added=frozenset(p for p in batch.prepared if p.split("/", 1)[1] not in before),
                changed=frozenset(p for p in batch.prepared if p.split("/", 1)[1] in before),
                removed=frozenset(removed),
                at=time.time(),
            )
            if change.count:
                self.generation += 1
                self.last_change = change
                self._changed_in.update(dict.fromkeys(change.added | change.changed | change.removed, self.generation))
                self._dirty[root.label] = True
                self._changed_at[root.label] = time.time()
                if root.label not in self.building:
                    self._schedule_save(root)
            self.last_error = None
        if change.count:
            for listener in list(self.listeners):
                listener(root, change)
        return change

    def _failed(self, root: Root, exc: Exception) -> Change:
        self.last_error = f"{type(exc).__name__}: {exc}"
        log.exception("updating %s failed; still serving generation %d", root.label, self.generation)
        return Change()

    def _root_of(self, path: str) -> Root | None:
        label = path.split("/", 1)[0]
        return next((r for r in self.roots if r.label == label), None)


def _without_collections(restore: Callable[[], dict[str, bool]]) -> dict[str, bool]:
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


def _any(batch: _Batch) -> bool:
    return bool(batch.files or batch.removed or batch.skipped or batch.unskipped)


def _merged(changes: Sequence[Change]) -> Change:
    if len(changes) == 1:
        return changes[0]
    return Change(
        added=frozenset().union(*(c.added for c in changes)),
        changed=frozenset().union(*(c.changed for c in changes)),
        removed=frozenset().union(*(c.removed for c in changes)),
        at=time.time(),
    )


def _display(root: Root, rel: str) -> str:
    return f"{root.label}/{rel}"


def _fs_path(root: Root, rel: str) -> Path:
    return Path(root.path, *rel.split("/"))


def _relative(root: Root, path: str | Path) -> str | None:
    try:
        rel = Path(path).relative_to(root.path)
    except ValueError:
        return None
    return rel.as_posix() if rel.parts else ""


def _with_prefix(ordered: list[str], prefix: str) -> list[str]:
    start = bisect.bisect_left(ordered, prefix)
    end = bisect.bisect_left(ordered, prefix + "\U0010ffff")
    return ordered[start:end]


def _ref(root: Root, rel: str, path: Path) -> FileRef:
    try:
        st = path.stat()
    except OSError:
        return FileRef(root, rel, path, -1, -1, -1)  # the read will say why
    return FileRef(root, rel, path, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


def _differs(old: CorpusFile | None, ref: FileRef) -> bool:
    return old is None or (old.size, old.mtime_ns, old.ctime_ns) != (ref.size, ref.mtime_ns, ref.ctime_ns)


def _moved(f: CorpusFile) -> bool:
    try:  # a string path: every hit of every search is re-checked, and making a Path costs more than the stat
        st = os.stat(os.path.join(f.root.path, *f.rel.split("/")))  # noqa: PTH116, PTH118
    except OSError:
        return True
    return stamp(st) != (f.size, f.mtime_ns, f.ctime_ns)


def _read_settled(root: Root, ref: FileRef, max_bytes: int) -> FileText:
    """`read_text`, kept only if the file is still as `ref` saw it (a read in a pause of a save
    in progress passes `read_text`'s own check, not this one). Otherwise it is retried a few
    times, each read kept only if the file held still for the pause before it (retries resolve
    the path afresh, in case the file was replaced); then `Changing`."""
    try:
        text = read_text(root.path, ref.path, max_bytes, ref.identity)
        if (text.size, text.mtime_ns, text.ctime_ns) == (ref.size, ref.mtime_ns, ref.ctime_ns):
            return text
    except Changing:
        pass
    for delay in _RETRY_DELAYS:
        before = _stamp_at(ref.path)
        time.sleep(delay)
        try:
            text = read_text(root.path, ref.path, max_bytes)
        except Changing:
            continue
        if (text.size, text.mtime_ns, text.ctime_ns) == before:
            return text
    raise Changing(f"{ref.path.name} is still being written")


def _stamp_at(path: Path) -> tuple[int, int, int] | None:
    try:
        return stamp(path.stat())
    except OSError:
        return None


def _parent(rel: str) -> str:
    """The folder prefix of a relative path (`""` at the top, else ending in `/`)."""
    return rel[: rel.rfind("/") + 1]
