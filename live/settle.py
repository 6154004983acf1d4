"""Reading files only once they hold still, so a save in progress is never indexed half-written.

A batch waits (once) until its newest file is `SETTLE_S` old, and keeps a read only if the file is
still as it was stat'd before the wait; a read during which the file changed is retried after a
pause, and a file still changing is left as indexed (`pending`) until the next event or call. A
file that had text and is now empty is taken as emptied only once it has been seen empty,
unchanged, for `EMPTIED_S` (a save that truncates first shows an empty file for a moment).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from pathlib import Path

from corpus.catalog import CorpusFile
from corpus.errors import NotInCorpus
from corpus.read import Changing, FileText, Skipped, Stamp, read_text, stamp
from corpus.roots import Root
from corpus.scan import FileRef, SkippedFile
from live.changes import Batch

SETTLE_S = 0.03
"""A file modified less than this long ago may still be mid-save: a batch waits (once) until its
newest file is this old before reading, and keeps a read only if the file is still as it was
stat'd before the wait (else it retries), so a save in progress is never read half-written."""
EMPTIED_S = 0.5
"""How long a file that had text must be seen empty, unchanged, before it is indexed empty."""
_RETRY_DELAYS = (0.03, 0.08, 0.2)
"""Seconds to wait before re-reading a file that changed while it was read: each retry is kept
only if the file held still across its pause, so none is shorter than `SETTLE_S`."""

Take = Callable[[FileRef, FileText, dict[str, CorpusFile], Batch], None]
"""What to do with a file read whole and settled: add it (and its units) to the batch."""


class Settler:
    """Reads the files of a batch once they hold still; remembers which are still being written."""

    def __init__(self, roots: list[Root], max_bytes: int, settle_s: float, stopping: threading.Event) -> None:
        self.max_bytes = max_bytes
        self.settle_s = settle_s
        self.stopping = stopping
        self.pending: dict[str, set[str]] = {r.label: set() for r in roots}
        """Per root, the relative paths still being written at the last attempt."""
        self._emptied: dict[Path, tuple[Stamp, float]] = {}
        """Files found empty: their stamp and when it was first seen so."""

    def read(self, root: Root, refs: list[FileRef], known: dict[str, CorpusFile], batch: Batch, take: Take) -> None:
        """Read `refs` into `batch` (through `take`); a file skipped now is recorded as skipped, and
        removed if it was indexed; a file still changing is left as it was (`pending`)."""
        pending = self.pending[root.label]
        newest = max((ref.mtime_ns for ref in refs), default=0) / 1e9
        wait = self.settle_s - (time.time() - newest)
        if refs and wait > 0:
            time.sleep(min(wait, self.settle_s))
        empty: list[tuple[FileRef, FileText]] = []
        for ref in refs:
            if self.stopping.is_set():
                break  # shutting down: stop reading (what was read is applied as usual)
            pending.discard(ref.rel)
            try:
                text = self._read_settled(root, ref)
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
                seen = self._emptied.get(ref.path)
                if seen is None or seen[0] != text.stamp:
                    seen = self._emptied[ref.path] = (text.stamp, time.monotonic())
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
            take(ref, text, known, batch)
        if empty:
            time.sleep(self.settle_s)
            for ref, text in empty:
                if stamp_at(ref.path) == text.stamp:
                    take(ref, text, known, batch)
                else:
                    pending.add(ref.rel)

    def _read_settled(self, root: Root, ref: FileRef) -> FileText:
        """`read_text`, kept only if the file is still as `ref` saw it (a read in a pause of a
        save in progress passes `read_text`'s own check, not this one). Otherwise it is retried a
        few times, each read kept only if the file held still for the pause before it (retries
        resolve the path afresh, in case the file was replaced); then `Changing`."""
        try:
            text = read_text(root.path, ref.path, self.max_bytes, ref.identity)
            if text.stamp == ref.stamp:
                return text
        except Changing:
            pass
        for delay in _RETRY_DELAYS:
            before = stamp_at(ref.path)
            time.sleep(delay)
            try:
                text = read_text(root.path, ref.path, self.max_bytes)
            except Changing:
                continue
            if text.stamp == before:
                return text
        raise Changing(f"{ref.path.name} is still being written")


def stamp_at(path: Path) -> Stamp | None:
    try:
        return stamp(path.stat())
    except OSError:
        return None
