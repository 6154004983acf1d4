"""Keeping watch over the roots, and keeping the watcher itself alive.

`watchfiles.awatch` raises at once on a missing folder, and after a folder is deleted and
recreated it silently watches nothing. So a supervisor runs it: while a root is missing it polls
for it (about once a second, not recursively); whenever the watcher ends, fails, or a root vanishes
or comes back, it asks for a full rescan and starts a fresh watcher.
"""

from __future__ import annotations

import logging
import os
import re
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass

import anyio
from watchfiles import Change, awatch

from corpus.roots import Root
from corpus.rules import is_ignored_dir

log = logging.getLogger("agents_context.watch")

Changes = set[tuple[Change, str]]
OnChange = Callable[[Changes | None], Awaitable[None]]
"""Called with the batch of changes, or None when everything must be rescanned."""

_EDITOR_NOISE = re.compile(r"(~|\.sw[a-p]|\.tmp|^4913|^\.#.*|^#.*#)$")


def watch_filter(change: Change, path: str) -> bool:
    """Ignore ignored folders and editor scratch files (vim swap and backup, emacs locks)."""
    parts = path.replace("\\", "/").split("/")
    if any(is_ignored_dir(p) for p in parts[:-1]):
        return False
    return not _EDITOR_NOISE.search(parts[-1])


def root_present(root: Root) -> bool:
    """The root folder exists at its start-up real path, and is not now a link elsewhere."""
    try:
        return root.path.is_dir() and os.path.realpath(root.path) == str(root.path)
    except OSError:
        return False


@dataclass(slots=True)
class WatchOptions:
    debounce_ms: int = 200
    step_ms: int = 50
    poll_interval_s: float = 1.0
    force_polling: bool | None = None


async def supervise(
    roots: Sequence[Root], on_change: OnChange, stop: anyio.Event, options: WatchOptions | None = None
) -> None:
    """Watch `roots` until `stop` is set, calling `on_change` for every batch."""
    options = options or WatchOptions()
    present = [r for r in roots if root_present(r)]
    settled = False
    while not stop.is_set():
        if not present:
            await _sleep_or_stop(stop, options.poll_interval_s)
            now = [r for r in roots if root_present(r)]
            if now:
                present = now
                await on_change(None)
            continue
        try:
            async for changes in awatch(
                *(r.path for r in present),
                watch_filter=watch_filter,
                debounce=options.debounce_ms,
                step=options.step_ms,
                stop_event=stop,
                rust_timeout=int(options.poll_interval_s * 1000),
                yield_on_timeout=True,
                force_polling=options.force_polling,
            ):
                if not settled:
                    # The watcher is surely running by its first yield; rescan once so that edits
                    # made between the start-up index and now are not missed.
                    settled = True
                    await on_change(None)
                elif changes:
                    await on_change(changes)
                if [r for r in roots if root_present(r)] != present:
                    break
        except Exception as exc:  # the watcher died: note it, wait a beat, start afresh
            log.warning("file watcher stopped (%s); restarting", exc)
            await _sleep_or_stop(stop, options.poll_interval_s)
        if stop.is_set():
            return
        now = [r for r in roots if root_present(r)]
        if now != present:
            log.info("roots present now: %s", ", ".join(r.label for r in now) or "none")
        present = now
        await on_change(None)


async def _sleep_or_stop(stop: anyio.Event, seconds: float) -> None:
    with anyio.move_on_after(seconds):
        await stop.wait()
