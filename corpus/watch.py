"""Keeping watch over the roots, and keeping the watcher itself alive.

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
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import anyio
from watchfiles import Change, awatch

from corpus.roots import Root, root_present
from corpus.rules import is_editor_temp, is_ignored_dir
from corpus.scan import walked

log = logging.getLogger("agents_context.watch")

Changes = set[tuple[Change, str]]
OnChange = Callable[[Changes | None], Awaitable[None]]
"""Called with each batch of changes, an empty set on a quiet tick (nothing pending), or None
when everything must be rescanned."""

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


@dataclass(slots=True)
class WatchOptions:
    debounce_ms: int = 200
    step_ms: int = 50
    poll_interval_s: float = 1.0
    force_polling: bool = False
    poll_delay_ms: int = 300


@dataclass(slots=True)
class WatchStatus:
    """What `context_status` reports about the watcher."""

    mode: str = "starting"
    """`native`, `polling` (forced with --poll), `polling (fallback)` after native watching
    failed, `waiting for roots`, or `stopped`."""
    healthy: bool = False
    restarts: int = 0
    last_error: str | None = None
    last_tick: float | None = None
    """When the watcher last reported in (a batch, or a quiet timeout)."""


async def supervise(
    roots: Sequence[Root],
    on_change: OnChange,
    stop: anyio.Event,
    options: WatchOptions | None = None,
    status: WatchStatus | None = None,
    watch_factory: WatchFactory = awatch,
) -> None:
    """Watch `roots` until `stop` is set, calling `on_change` for every batch and quiet tick."""
    options = options or WatchOptions()
    status = status or WatchStatus()
    polling = options.force_polling
    present = [r for r in roots if root_present(r)]
    settled = False
    try:
        while not stop.is_set():
            if not present:
                status.mode, status.healthy = "waiting for roots", False
                await _sleep_or_stop(stop, options.poll_interval_s)
                present = [r for r in roots if root_present(r)]
                if present:
                    await on_change(None)
                continue
            status.mode = _mode(options.force_polling, polling)
            paths, recursive = watch_plan(present)
            replanned = False
            identities = _identities(present)
            try:
                if polling and not recursive:
                    await _sweep_poll(roots, present, on_change, stop, options, status)
                else:
                    async for changes in watch_factory(
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
                        status.healthy, status.last_tick = True, time.time()
                        if not settled:
                            # The watcher is surely running by its first yield; rescan once so that
                            # edits made between the start-up index and now are not missed.
                            settled = True
                            await on_change(None)
                        else:
                            await on_change(changes)
                        if [r for r in roots if root_present(r)] != present:
                            break
                        # A root deleted and recreated between two checks is "present" both times,
                        # while the watcher still follows the deleted folder: restart on the root's
                        # own deletion event, or on a new identity (inode numbers can be reused, so
                        # the event is what catches a quick `rm -rf docs && mkdir docs`).
                        if _root_deleted(changes, present) or _identities(present) != identities:
                            break
                        if not recursive and watch_plan(present)[0] != paths:
                            replanned, settled = True, False  # a folder came or went: watch the new set
                            break
            except Exception as exc:  # the watcher died: say so, fall back to polling, start afresh
                if not recursive and isinstance(exc, FileNotFoundError):
                    await on_change(None)  # a folder went before its watch began: walk, then replan
                    if watch_plan(present)[0] != paths:
                        replanned, settled = True, False
                        continue
                status.healthy, status.last_error = False, f"{type(exc).__name__}: {exc}"
                if not polling:
                    log.warning("native file watching failed (%s); falling back to polling", exc)
                    polling = True
                else:
                    log.warning("file watcher stopped (%s); restarting", exc)
                await _sleep_or_stop(stop, options.poll_interval_s)
            if stop.is_set():
                return
            if replanned:
                continue  # the new watcher's first report rescans (`settled`)
            status.restarts += 1
            status.healthy = False
            now = [r for r in roots if root_present(r)]
            if now != present:
                log.info("roots present now: %s", ", ".join(r.label for r in now) or "none")
            present = now
            await on_change(None)
    finally:
        status.mode, status.healthy = "stopped", False


def _identities(roots: Sequence[Root]) -> list[tuple[int, int] | None]:
    return [_identity(r) for r in roots]


def _identity(root: Root) -> tuple[int, int] | None:
    try:
        st = root.path.stat()
    except OSError:
        return None
    return st.st_dev, st.st_ino


def _root_deleted(changes: set[tuple[Change, str]] | None, roots: Sequence[Root]) -> bool:
    if not changes:
        return False
    gone = {Path(path) for change, path in changes if change == Change.deleted}
    return any(r.path in gone for r in roots)


async def _sweep_poll(
    roots: Sequence[Root],
    present: list[Root],
    on_change: OnChange,
    stop: anyio.Event,
    options: WatchOptions,
    status: WatchStatus,
) -> None:
    """Poll conventional roots by walking them (a change reported at the root has it re-swept),
    until `stop` or until a root comes or goes."""
    while not stop.is_set():
        await on_change({(Change.modified, str(r.path)) for r in present})
        status.healthy, status.last_tick = True, time.time()
        await _sleep_or_stop(stop, options.poll_interval_s)
        if [r for r in roots if root_present(r)] != present:
            return


def _mode(forced: bool, polling: bool) -> str:
    if forced:
        return "polling"
    return "polling (fallback)" if polling else "native"


def watched_root(roots: Sequence[Root], path: str) -> Root | None:
    """The root a changed path belongs to."""
    p = Path(path)
    return next((r for r in roots if p == r.path or p.is_relative_to(r.path)), None)


async def _sleep_or_stop(stop: anyio.Event, seconds: float) -> None:
    with anyio.move_on_after(seconds):
        await stop.wait()
