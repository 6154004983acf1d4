"""Reading files only once they hold still, so a save in progress is never indexed half-written.

A batch waits (once) until its newest file is `SETTLE_S` old, and keeps a read only if the file is
still as it was stat'd before the wait; the files that changed meanwhile are read again together
after a pause (a few rounds, one pause each for all of them, so a batch's pauses are bounded
whatever its size), and a file still changing is left as indexed (`pending`) until the next event
or call; a call's read-your-writes stops pausing at its deadline. A
file that had text and is now empty is taken as emptied only once it has been seen empty,
unchanged, for `EMPTIED_S` (a save that truncates first shows an empty file for a moment).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from corpus.errors import NotInCorpus
from corpus.files import CorpusFile
from corpus.read import Changing, FileText, Skipped, Stamp, read_text, stamp
from corpus.roots import Root
from corpus.scan import FileRef, SkippedFile

SETTLE_S = 0.03
"""A file modified less than this long ago may still be mid-save: a batch waits (once) until its
newest file is this old before reading, and keeps a read only if the file is still as it was
stat'd before the wait (else it retries), so a save in progress is never read half-written."""
EMPTIED_S = 0.5
"""How long a file that had text must be seen empty, unchanged, before it is indexed empty."""
_RETRY_DELAYS = (0.03, 0.08, 0.2)
"""The pauses of the retry rounds, before re-reading the files that changed while they were read
(all of a batch's together): each read is kept only if its file held still across the pause, so
none is shorter than `SETTLE_S`. A batch pauses at most their sum, whatever its size."""


@dataclass(slots=True)
class Settled:
    """What one `Settler.settle` found: the files read whole and settled, and those refused."""

    texts: list[tuple[FileRef, FileText]] = field(default_factory=list)
    skipped: dict[str, SkippedFile] = field(default_factory=dict)
    """Files not served now, with why (by relative path)."""
    gone: set[str] = field(default_factory=set)
    """Files indexed before, gone or refused now (relative paths)."""
    cut: bool = False
    """Some were left unread (`pending`) because the call's deadline came."""


@dataclass(slots=True)
class _Run:
    """One `Settler.settle`: where its reads go."""

    root: Root
    known: Mapping[str, CorpusFile]
    """The root's files as indexed."""
    pending: set[str]
    """The root's files still being written (see `RootSync.pending`)."""
    found: Settled = field(default_factory=Settled)
    empty: list[tuple[FileRef, FileText]] = field(default_factory=list)
    """Files read empty, kept once they held still for a pause."""


class Settler:
    """Reads the files of a batch once they hold still."""

    def __init__(self, max_bytes: int, settle_s: float, stopping: threading.Event) -> None:
        self.max_bytes = max_bytes
        self.settle_s = settle_s
        self.stopping = stopping
        self._emptied: dict[Path, tuple[Stamp, float]] = {}
        """Files found empty: their stamp and when it was first seen so."""

    def settle(
        self,
        root: Root,
        refs: list[FileRef],
        known: Mapping[str, CorpusFile],
        pending: set[str],
        deadline: float | None = None,
        busy: Callable[[], bool] = lambda: False,
    ) -> Settled:
        """`refs` read once they hold still: their texts; a file skipped now is said to be
        skipped, and gone if it was indexed; a file still changing is left as it was (its
        relative path added to `pending`).

        Files that changed since they were stat'd are read again together, after one pause per
        round for all of them (not one per file: under churn nearly every file of a batch is in
        that case, and a pause each made a batch of N files wait N times). With `deadline` (a
        `time.monotonic()` moment, a call's read-your-writes), no round starts that would end
        after it: what is still changing then stays `pending`. And once files have been seen
        changing under the reads, none is read past the deadline: that is churn, and reading
        could go on as long as the writer does (without a file changing under them, reads go on:
        a bulk change that has landed is read whole). No read waits at all for a file that was
        still changing at the last attempt and has changed again since (it is rewritten faster
        than it settles: a writer's loop, a log): it stays `pending`, and answers say its root is
        changing. The files the deadline left unread are `pending` too (then `cut`).
        While someone waits for the root's lock (`busy`), no retry round pauses holding it: the
        files that changed under the reads stay `pending` for the next event or call."""
        run = _Run(root, known, pending)
        # Rewritten again since it was last found changing: rewritten faster than it settles (a
        # writer's loop, a log). Nobody waits for it, holding the root's lock the while; the next
        # event or call finds it still, and the watcher's quiet tick retries it (`retry_pending`).
        churning = {ref.rel for ref in refs if ref.rel in pending and not still(ref, self.settle_s)}
        refs = [ref for ref in refs if ref.rel not in churning]
        hold_still(refs, self.settle_s)
        changing: list[FileRef] = []
        for i, ref in enumerate(refs):
            if self.stopping.is_set():
                break  # shutting down: stop reading (what was read is applied as usual)
            if changing and deadline is not None and time.monotonic() > deadline:
                pending.update(r.rel for r in refs[i:])  # churn: the watcher or the next call reads them
                run.found.cut = True
                break
            pending.discard(ref.rel)
            try:
                text = self._read_settled(root, ref)
            except Changing:
                changing.append(ref)
                continue
            except NotInCorpus as exc:
                _refused(run, ref, exc)
                continue
            self._keep(run, ref, text)
        for delay in _RETRY_DELAYS:
            if not changing or self.stopping.is_set():
                break
            if (deadline is not None and time.monotonic() + delay > deadline) or busy():
                break
            changing = self._read_again(run, changing, delay, deadline)
        pending.update(ref.rel for ref in changing)  # keep what is indexed; the next event or call retries
        if run.empty:
            time.sleep(self.settle_s)
            for ref, text in run.empty:
                if stamp_at(ref.path) == text.stamp:
                    run.found.texts.append((ref, text))
                else:
                    pending.add(ref.rel)
        return run.found

    def _keep(self, run: _Run, ref: FileRef, text: FileText) -> None:
        """A settled read: into the batch, unless it reads empty (see `EMPTIED_S`)."""
        if text.size == 0 and self.settle_s:
            seen = self._emptied.get(ref.path)
            if seen is None or seen[0] != text.stamp:
                seen = self._emptied[ref.path] = (text.stamp, time.monotonic())
            if ref.rel in run.known and run.known[ref.rel].size and time.monotonic() - seen[1] < EMPTIED_S:
                # A save that truncates first shows an empty file, and a busy machine can
                # hold the writer there longer than any short pause: a file that had text is
                # taken as emptied only once reads have found it empty, unchanged, for
                # `EMPTIED_S` (until then its last text stays; the next event or call retries).
                run.pending.add(ref.rel)
                return
            # A new empty file is kept once it held still for a pause (one per batch).
            run.empty.append((ref, text))
            return
        self._emptied.pop(ref.path, None)
        run.found.texts.append((ref, text))

    def _read_settled(self, root: Root, ref: FileRef) -> FileText:
        """`read_text`, kept only if the file is still as `ref` saw it (a read in a pause of a
        save in progress passes `read_text`'s own check, not this one); else `Changing`, and the
        file is read again after a pause (`_read_again`)."""
        text = read_text(root.path, ref.path, self.max_bytes, ref.identity)
        if text.stamp != ref.stamp:
            raise Changing(f"{ref.path.name} changed since it was stat'd")
        return text

    def _read_again(self, run: _Run, refs: list[FileRef], delay: float, deadline: float | None) -> list[FileRef]:
        """One retry round: every file of `refs` is stat'd, then one pause of `delay` for all of
        them, then each is read again (resolving the path afresh, in case it was replaced) and the
        read kept only if the file held still across the pause; none is read past `deadline`.
        The files still changing (or left unread)."""
        before = [stamp_at(ref.path) for ref in refs]
        time.sleep(delay)
        still: list[FileRef] = []
        for ref, stamped in zip(refs, before, strict=True):
            if self.stopping.is_set() or (deadline is not None and time.monotonic() > deadline):
                still.append(ref)
                continue
            try:
                text = read_text(run.root.path, ref.path, self.max_bytes)
            except Changing:
                still.append(ref)
                continue
            except NotInCorpus as exc:
                _refused(run, ref, exc)
                continue
            if text.stamp != stamped:
                still.append(ref)
                continue
            self._keep(run, ref, text)
        return still


def _refused(run: _Run, ref: FileRef, exc: NotInCorpus) -> None:
    """A file not served now: skipped with its reason (`Skipped`), or gone; out of the index."""
    if isinstance(exc, Skipped):
        run.found.skipped[ref.rel] = SkippedFile(run.root, ref.rel, exc.refusal)
    if ref.rel in run.known:
        run.found.gone.add(ref.rel)


def still(ref: FileRef, settle_s: float) -> bool:
    """Whether the file was last modified at least `settle_s` before now."""
    return time.time() - max(ref.mtime_ns, ref.ctime_ns) / 1e9 >= settle_s


@dataclass(frozen=True, slots=True)
class Came:
    """When a call came, for its read-your-writes: a sweep serves it if it began after `at` and
    left no file saved before `at_ns` for later (`RootSync.seen_ns`)."""

    at: float
    """`time.monotonic()`."""
    at_ns: int
    """`time.time_ns()`, to compare with files' times."""
    outside: bool = False
    """Come back `Later` rather than pause for settling files while holding the root's lock."""
    look_ns: int | None = None
    """When the call's sweep first looked (under the root's lock): files saved before it are
    waited for, files saved after it and still settling are left for later (see `young`). Kept
    from one look to the next, so that a file saved meanwhile is no reason to pause again."""

    @classmethod
    def now(cls, outside: bool = False) -> Came:
        return cls(time.monotonic(), time.time_ns(), outside)


@dataclass(frozen=True, slots=True)
class Later:
    """A call's files are still settling: wait `seconds` without the root's lock, then look again
    (`came`: the call, its first look kept). What a call's sweep gives back instead of a change."""

    seconds: float
    came: Came


@dataclass(frozen=True, slots=True)
class Young:
    """A call's files to read, sorted by whether the call must wait for them (see `young`)."""

    ready: list[FileRef]
    """To read now, the ones saved before the call came included (`wait` says how long until
    they hold still)."""
    later: list[FileRef]
    """Saved after the call came and still settling: not the call's to wait for."""
    wait: float
    """Seconds until the newest of `ready` was saved `settle_s` ago (0: none is that young)."""


def young(refs: list[FileRef], settle_s: float, look_ns: int, pending: set[str]) -> Young:
    """Sort a call's files (its sweep first looked at `look_ns`, `time.time_ns()`, after the call
    came): a file saved after the look and still settling is no part of the disk the call must
    see, unless it also changed before, which cannot be told; it is left unread
    (`RootSync.later`: the answer says its root is changing, and the watcher or the next call
    reads it). The others are read, once settled, but for the `pending` ones rewritten since they
    were found changing, which nobody waits for (see `Settler.settle`). A file dated in the future
    is waited for at most `settle_s`."""
    now = time.time_ns()
    settle_ns = int(settle_s * 1e9)
    ready: list[FileRef] = []
    later: list[FileRef] = []
    newest = 0
    for ref in refs:
        saved = max(ref.mtime_ns, ref.ctime_ns)
        if look_ns < saved <= now and now - saved < settle_ns:
            later.append(ref)
        else:
            ready.append(ref)
            if ref.rel not in pending or now - saved >= settle_ns:
                newest = max(newest, ref.mtime_ns)  # as `hold_still` waits
    wait = min(settle_ns - (now - newest), settle_ns) / 1e9 if newest else 0.0
    return Young(ready, later, max(wait, 0.0))


def hold_still(refs: list[FileRef], settle_s: float) -> None:
    """Wait (once) until the newest of `refs` was modified `settle_s` ago: one saved this instant
    may be mid-save."""
    newest = max((ref.mtime_ns for ref in refs), default=0) / 1e9
    wait = settle_s - (time.time() - newest)
    if refs and wait > 0:
        time.sleep(min(wait, settle_s))


def stamp_at(path: Path) -> Stamp | None:
    try:
        return stamp(path.stat())
    except OSError:
        return None
