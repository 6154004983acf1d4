"""Reading a root's changed files into the store: settled (`live.settle`), `CHUNK` files at a time
so a large root is searchable while it is read, and a large read of a docs root's new files by
worker processes (`live.workers`). What to read is decided by the live index (`live.index`).
"""

from __future__ import annotations

import logging
import pickle
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import replace

from corpus.catalog import Change
from corpus.files import CorpusFile
from corpus.read import FileText
from corpus.roots import Root, RootKind
from corpus.scan import FileRef, SkippedFile
from live import codec, workers
from live.changes import Batch, holds_text, merged
from live.persist import freeze_chunk
from live.settle import Came, Later, Settler, young
from live.store import Store
from retrieval.engine.memory import release_free_memory

log = logging.getLogger("agents_context.index")

CHUNK = 2000
"""A large sweep reads and applies this many files at a time, so answers (marked partial) come
from what is ready while the rest is read, and progress can be told."""


class Reader:
    """Reads files of a root once they hold still and applies them to `store`, a batch at a time."""

    def __init__(
        self,
        store: Store,
        settler: Settler,
        stopping: threading.Event,
        progress: Callable[[str], None] | None,
        parallel_files: int,
    ) -> None:
        self.store = store
        self.settler = settler
        self.stopping = stopping
        self.progress = progress
        """Told how a large read goes (every `CHUNK` files), for people watching stderr."""
        self.parallel_files = parallel_files
        """A docs root's read of at least this many new files goes to worker processes (0: never)."""

    def read(self, root: Root, refs: list[FileRef], batch: Batch, deadline: float | None = None) -> bool:
        """Read `refs` into `batch` once they hold still (see `Settler.read`); True when some
        were left unread (`pending`) because the call's `deadline` came."""
        state = self.store.state[root.label]
        state.later.difference_update(ref.rel for ref in refs)
        busy = lambda: state.waiting > 0  # noqa: E731 - someone waits for the root's lock
        return self.settler.read(root, refs, state.files, state.pending, batch, self.take, deadline, busy)

    def now_or_later(self, root: Root, refs: list[FileRef], came: Came | None, look_ns: int) -> list[FileRef]:
        """The files of a whole sweep (that looked at `look_ns`) to read now. For a call (`came`),
        those saved after the look and still settling are left for later (`RootState.later`, see
        `settle.young`); with `came.outside`, `Later` is raised while the others are still
        settling, so that the caller waits for them without the root's lock."""
        state = self.store.state[root.label]
        if came is None or not refs:
            state.later = set()
            return refs
        sorted_ = young(refs, self.settler.settle_s, look_ns, state.pending)
        if came.outside and sorted_.wait > 0:
            raise Later(sorted_.wait, replace(came, outside=False, look_ns=look_ns))
        state.later = {ref.rel for ref in sorted_.later}
        return sorted_.ready

    def read_apply(
        self, root: Root, refs: list[FileRef], batch: Batch, deadline: float | None = None, beside: bool = True
    ) -> Change:
        """Read and apply `refs` `CHUNK` files at a time (the first batch also carries the
        removals and skips), so a large root is searchable while it is read. A large read of a
        docs root's new files goes to worker processes (`live.workers`); then `refs` is emptied,
        and the walk's records of those files go chunk by chunk as they are read (kept to the
        end, tldr's 38k left 12 MB of empty pages among the index's objects)."""
        store = self.store
        known = store.state[root.label].files
        if beside and root.kind is RootKind.DOCS and deadline is None and self.parallel_files:
            fresh = [ref for ref in refs if ref.rel not in known]
            if len(fresh) >= self.parallel_files:
                first = store.apply(root, batch) if batch else Change()
                later = [ref for ref in refs if ref.rel in known]
                refs.clear()
                by_workers, unread = self._read_beside(root, fresh)
                rest = self.read_apply(root, later + unread, Batch(), deadline, beside=False)
                return merged([first, by_workers, rest])
        progress = store.state[root.label].progress
        if progress is not None:
            progress.total = len(refs)
        changes = []
        for start in range(0, max(len(refs), 1), CHUNK):
            if start and self.stopping.is_set():
                break
            part = refs[start : start + CHUNK]
            cut = self.read(root, part, batch, deadline)
            changes.append(store.apply(root, batch))
            if cut:  # a call out of time under churn: the rest is left to the watcher and the next call
                store.state[root.label].pending.update(ref.rel for ref in refs[start + CHUNK :])
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

    def take(self, ref: FileRef, text: FileText, known: Mapping[str, CorpusFile], batch: Batch) -> None:
        """A file read whole: into the batch, with its units when its content changed."""
        f = self.store.corpus.corpus_file(ref, text)
        old = known.get(ref.rel)
        if old is None or old.digest != f.digest:
            f, units = self.store.library.prepare_file(f, holds_text(ref.root))
            batch.prepared[f.path] = units
        elif not holds_text(ref.root):
            f = f.without_text()
        batch.files[ref.rel] = f

    def _merge_chunks(self, root: Root) -> None:
        """After a read in chunks: one segment per chunk, which every query would pay for, merged
        into one; and the memory the read freed given back to the system (after tldr's first
        read the server held 350 MB, 220 MB once given back: what a warm restart holds)."""
        started = time.perf_counter()
        with self.store.writing():
            self.store.library.merge_all()
        release_free_memory()
        log.info("%s: index segments merged in %.0f ms", root.label, (time.perf_counter() - started) * 1000)

    def _read_beside(self, root: Root, refs: list[FileRef]) -> tuple[Change, list[FileRef]]:
        """Have worker processes read `refs` (none of them indexed yet; the list is emptied)
        `CHUNK` files at a time, and add each chunk as it comes back; the files they left to this
        process (changing or empty, or in a chunk whose worker failed)."""
        progress = self.store.state[root.label].progress
        total = len(refs)
        if progress is not None:
            progress.total = total
        parts = [refs[start : start + CHUNK] for start in range(0, total, CHUNK)]
        refs.clear()  # each chunk's records now go with its part, once it is read
        unread: list[FileRef] = []
        changes, done = [], 0
        trails: codec.Trails = {}  # one tuple per trail, shared by every chunk's units
        started = time.perf_counter()
        settings = (self.store.corpus.max_bytes, self.settler.settle_s, self.store.library.ranking)

        def call(part: list[FileRef]) -> bytes:
            return pickle.dumps((workers.read_part, (root, part, *settings)), protocol=pickle.HIGHEST_PROTOCOL)

        try:
            pool = workers.Pool(min(workers.workers(), len(parts)))
        except Exception as exc:  # no processes to be had (no interpreter to start, no room): read here
            log.warning("could not start worker processes (%s); reading %s here", exc, root.label)
            return Change(), [ref for part in parts for ref in part]
        with pool:
            # Each part (and the walk's records in it) goes once it is read: kept until the whole
            # read was done, tldr's chunks held ~90 MB of packed arrays at the peak.
            for part, read in pool.read(parts, call):
                if self.stopping.is_set():
                    break
                try:
                    if isinstance(read, workers.Failed):
                        raise read
                    restored = codec.restore(root, workers.PART, read.arrays, trails)
                except Exception as exc:  # a worker that failed or sent something unusable: read its chunk here
                    log.warning("a worker failed on %d files of %s (%s); reading them here", len(part), root.label, exc)
                    unread.extend(part)
                    continue
                left = set(read.unread)
                unread.extend(ref for ref in part if ref.rel in left)
                skipped = [SkippedFile(root, rel, refusal) for rel, refusal in read.skipped]
                changes.append(self.store.adopt(root, restored, skipped))
                freeze_chunk()
                done += len(part)
                if progress is not None:
                    progress.done = done
                if self.progress is not None:
                    self.progress(f"indexing {root.label}: {done}/{total} files read")
        if len(changes) > 1:
            self._merge_chunks(root)
        log.info(
            "%s: %d files read by worker processes in %.0f ms", root.label, done, (time.perf_counter() - started) * 1000
        )
        return merged(changes) if changes else Change(), unread
