"""Keeping watch over the roots, keeping the watcher itself alive, and knowing which roots it
covers now (where a tool call need not patrol).

`watchfiles.awatch` raises at once on a missing folder, and after a folder is deleted and
recreated it silently watches nothing. So a supervisor runs it: while a root is missing it polls
for it (about once a second, not recursively); whenever the watcher ends, fails, or a root vanishes
or comes back, it asks for a full rescan and starts a fresh watcher. When native watching fails
(the inotify watch limit, a network drive), it falls back to polling by itself; `--poll` forces
polling from the start.

A root is watched recursively: neither watchfiles nor the notify library below it can leave
folders out of a recursive watch (`watch_filter` only drops events, after every folder got its
inotify watch). So when every root is a conventional root (the project folder, of which only the
agent files are served), the watcher is given just the folders the last walk reached, each on
its own, and ignored folders (`node_modules`, `.git`, `.venv`, gitignored ones) cost no watch; a
folder that comes or goes restarts it with the new set. Polling such roots is the server's own
walk once a poll interval (it lists only changed folders), not the library's poller (which
stats every file of every watched folder).
"""

from __future__ import annotations

import logging
import time
from collections.abc import AsyncIterator, Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

import anyio
from watchfiles import Change, awatch

from corpus.names import printable
from corpus.roots import FolderId, Root, RootKind, folder_id, root_present
from corpus.rules import is_editor_temp, is_ignored_dir
from corpus.scan import walked
from live.index import LiveIndex

log = logging.getLogger("agents_context.watch")

Changes = set[tuple[Change, str]]
"""One watcher batch: (what happened, absolute path)."""

WatchFactory = Callable[..., AsyncIterator[Changes]]
"""`watchfiles.awatch` or anything with its signature (tests inject failures through this)."""


def watch_filter(change: Change, path: str) -> bool:
    """Ignore ignored folders and editor scratch files (vim swap and backup, emacs locks)."""
    parts = path.replace("\\", "/").split("/")
    if any(is_ignored_dir(p) for p in parts[:-1]):
        return False
    return not is_editor_temp(parts[-1])


def watch_plan(roots: Sequence[Root]) -> tuple[tuple[str, ...], bool]:
    """What to watch, and whether recursively: each root, unless every root is a conventional
    root already walked; then the folders its walk reached, each on its own."""
    if roots and all(r.include for r in roots):
        folders = [walked(r) for r in roots]
        if all(folders):
            return tuple(sorted({f for found in folders if found for f in found})), False
    return tuple(str(r.path) for r in roots), True


@dataclass(frozen=True, slots=True)
class WatchOptions:
    debounce_ms: int
    """How long a burst of changes may settle before it is reported (`--debounce-ms`)."""
    poll_interval_s: float
    """How often the watcher reports in even when nothing changed; the polling period."""
    force_polling: bool
    """Poll from the start (`--poll`) instead of OS events."""
    step_ms: int = 50
    poll_delay_ms: int = 300


class Watcher:
    """The file watcher of a live index: it reports every batch to the index (`apply`), restarts
    when it fails or a root comes or goes, says how it is doing (`context_status`), and tells
    whether it covers a root now (`covers`)."""

    def __init__(self, index: LiveIndex, options: WatchOptions, factory: WatchFactory = awatch) -> None:
        self.index = index
        self.options = options
        self.factory = factory
        self.mode = "starting"
        """`native`, `polling` (forced with --poll), `polling (fallback)` after native watching
        failed, `waiting for roots`, or `stopped`."""
        self.healthy = False
        self.restarts = 0
        self.last_error: str | None = None
        self.last_tick: float | None = None
        """When the watcher last reported in (a batch, or a quiet timeout) and it was applied."""
        self._watched: dict[str, FolderId | None] = {}
        """Each root's folder (device, inode) when the watcher last (re)started on it."""
        self._lost: set[str] = set()
        """Roots whose folder the watcher reported deleted since then: its watch on them is gone."""
        self._settled = False
        """The running watcher has reported once (and so the rescan after its start is done)."""

    # --- what it covers ---------------------------------------------------------------------------

    def current(self) -> bool:
        """The watcher runs and reported in lately (it reports at least once a poll interval, even
        when nothing changed): not dead, not hung, and not stuck applying a long batch (its queue
        is not drained then: calls ask for patrol steps, which stand aside while it applies)."""
        if not self.healthy or self.last_tick is None:
            return False
        overdue = 2 * self.options.poll_interval_s + self.options.debounce_ms / 1000 + 1.0
        return time.time() - self.last_tick < overdue

    def covers(self, root: Root) -> bool:
        """Whether the running watcher covers this root now: it is current, and still watches the
        root's folder (not reported deleted since it started on it, and not another folder by
        now: an inode number can be reused at once, hence both)."""
        return self.current() and root.label not in self._lost and folder_id(root.path) == self._watched.get(root.label)

    def owner(self, path: str) -> Root | None:
        """The root a changed path belongs to."""
        p = Path(path)
        return next((r for r in self.index.roots if p == r.path or p.is_relative_to(r.path)), None)

    # --- what it reports --------------------------------------------------------------------------

    async def _report(self, changes: Changes | None) -> None:
        roots = self.index.roots
        if changes is None:  # a full rescan: the watcher (re)starts on the roots as they are now
            self._watched, self._lost = {r.label: folder_id(r.path) for r in roots}, set()
        else:  # a watch follows its folder: once that is deleted, a new one there goes unseen
            self._lost.update(r.label for r in roots if (Change.deleted, str(r.path)) in changes)
        try:
            await anyio.to_thread.run_sync(self.apply, changes)
        finally:
            self.last_tick = time.time()  # reported and applied: current again

    def apply(self, changes: Iterable[tuple[object, str]] | None) -> None:
        """Apply one report to the index: a full stat sweep (None), a batch of (change, path), or
        a quiet tick (empty: every docs root is fresh as of now)."""
        index = self.index
        if changes is None:
            index.rebuild()
            return
        seen = time.time()
        by_root: dict[str, list[str]] = {}
        for _, path in changes:
            root = self.owner(path)
            if root is not None:
                by_root.setdefault(root.label, []).append(path)
        for root in index.roots:
            if root.label in by_root:
                if root.kind is RootKind.AGENTS:
                    index.sweep(root)  # small: a stat sweep also catches what events miss
                else:
                    index.refresh(root, by_root[root.label])
            elif root.kind is RootKind.DOCS:
                index.mark_fresh(root, seen)
        index.retry_pending()

    # --- keeping it alive -------------------------------------------------------------------------

    async def run(self, stop: anyio.Event) -> None:
        """Watch the index's roots until `stop` is set, reporting every batch and quiet tick; when
        the watcher ends or fails, or a root comes or goes, rescan and start a fresh one."""
        polling = self.options.force_polling
        await self._after_first_indexing(stop)
        present = self._present()
        try:
            while not stop.is_set():
                if not present:
                    present = await self._wait_for_roots(stop)
                    continue
                paths, recursive = watch_plan(present)
                walking = not _watchable(paths)
                self.mode = (
                    "polling (walk: a path is not UTF-8)" if walking else _mode(self.options.force_polling, polling)
                )
                replanned = False
                try:
                    if walking or (polling and not recursive):
                        await self._walk_poll(present, stop)
                    else:
                        replanned = await self._follow(paths, recursive, present, polling, stop)
                except Exception as exc:
                    if not recursive and isinstance(exc, FileNotFoundError):
                        await self._report(None)  # a folder went before its watch began: walk, then replan
                        if watch_plan(present)[0] != paths:
                            continue
                    polling = await self._failed(exc, polling, stop)
                if stop.is_set():
                    return
                if replanned:
                    continue  # the new watcher's first report rescans (`_settled`)
                present = await self._restarted(present)
        finally:
            self.mode, self.healthy = "stopped", False

    async def _after_first_indexing(self, stop: anyio.Event) -> None:
        """Wait for the first indexing of the docs roots (a background thread) to end. Creating
        the OS watch of a large tree holds the interpreter's lock for all of its walk (tldr: 181
        ms), which every thread waited for, the first check of a warm start included. A change
        made meanwhile is not missed: a watcher's first report rescans every root."""
        indexer = self.index.indexer
        while indexer is not None and indexer.is_alive() and not stop.is_set():
            await _sleep_or_stop(stop, 0.02)

    async def _follow(
        self, paths: tuple[str, ...], recursive: bool, present: list[Root], polling: bool, stop: anyio.Event
    ) -> bool:
        """Run one watcher over `paths`, reporting its batches, until it must be restarted; True
        when only the set of folders to watch changed (a replan, no failure)."""
        identities = _identities(present)
        options = self.options
        # Every watcher, the first or one started after a restart or a replan, rescans at its first
        # report: a file written after the last rescan but before this watch began sends no event.
        self._settled = False
        async for changes in self.factory(
            *paths,
            watch_filter=watch_filter,
            debounce=options.debounce_ms,
            step=options.step_ms,
            stop_event=stop,
            rust_timeout=int(options.poll_interval_s * 1000),
            yield_on_timeout=True,
            force_polling=polling,
            poll_delay_ms=options.poll_delay_ms,
            recursive=recursive,
        ):
            self.healthy, self.last_tick = True, time.time()
            if not self._settled:
                # The watcher is surely running by its first yield; rescan once so that edits made
                # between the start-up index and now are not missed.
                self._settled = True
                await self._report(None)
            else:
                await self._report(changes)
            if self._present() != present:
                return False
            # A root deleted and recreated between two checks is "present" both times, while the
            # watcher still follows the deleted folder: restart on the root's own deletion event,
            # or on a new identity (inode numbers can be reused, so the event is what catches a
            # quick `rm -rf docs && mkdir docs`).
            if _root_deleted(changes, present) or _identities(present) != identities:
                return False
            if not recursive and watch_plan(present)[0] != paths:
                return True  # a folder came or went: watch the new set
        return False

    async def _walk_poll(self, present: list[Root], stop: anyio.Event) -> None:
        """Poll conventional roots by walking them (a change reported at the root has it re-swept),
        until `stop` or until a root comes or goes."""
        while not stop.is_set():
            await self._report({(Change.modified, str(r.path)) for r in present})
            self.healthy, self.last_tick = True, time.time()
            await _sleep_or_stop(stop, self.options.poll_interval_s)
            if self._present() != present:
                return

    async def _wait_for_roots(self, stop: anyio.Event) -> list[Root]:
        """While no root is there: check about once a poll interval; rescan once one is back."""
        self.mode, self.healthy = "waiting for roots", False
        await _sleep_or_stop(stop, self.options.poll_interval_s)
        present = self._present()
        if present:
            await self._report(None)
        return present

    async def _failed(self, exc: Exception, polling: bool, stop: anyio.Event) -> bool:
        """The watcher died: say so, fall back to polling (or restart it), pause; whether to poll now."""
        self.healthy, self.last_error = False, f"{type(exc).__name__}: {exc}"
        if not polling:
            log.warning("native file watching failed (%s); falling back to polling", exc)
        else:
            log.warning("file watcher stopped (%s); restarting", exc)
        await _sleep_or_stop(stop, self.options.poll_interval_s)
        return True

    async def _restarted(self, present: list[Root]) -> list[Root]:
        """A restart: count it, see which roots are there now, and rescan them."""
        self.restarts += 1
        self.healthy = False
        now = self._present()
        if now != present:
            log.info("roots present now: %s", ", ".join(r.label for r in now) or "none")
        await self._report(None)
        return now

    def _present(self) -> list[Root]:
        return [r for r in self.index.roots if root_present(r)]


def _watchable(paths: Sequence[str]) -> bool:
    """Whether the native watcher (and its poller) can take these paths: it needs them in UTF-8;
    a folder whose name is other bytes is walked by our own poll instead."""
    return all(printable(p) == p for p in paths)


def _identities(roots: Sequence[Root]) -> list[FolderId | None]:
    return [folder_id(r.path) for r in roots]


def _root_deleted(changes: set[tuple[Change, str]] | None, roots: Sequence[Root]) -> bool:
    if not changes:
        return False
    gone = {Path(path) for change, path in changes if change == Change.deleted}
    return any(r.path in gone for r in roots)


def _mode(forced: bool, polling: bool) -> str:
    if forced:
        return "polling"
    return "polling (fallback)" if polling else "native"


async def _sleep_or_stop(stop: anyio.Event, seconds: float) -> None:
    with anyio.move_on_after(seconds):
        await stop.wait()
