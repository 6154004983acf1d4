"""The watcher: a project is watched folder by folder, ignored folders unwatched, polling walks it."""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from mcp import Client
from watchfiles import Change

from cli.settings import Settings, open_index
from corpus.roots import RootKind
from live import sync
from live.index import LiveIndex
from server import create_server
from tests.conftest import write_tree
from tests.helpers import eventually, make_server
from tests.projects import REPO_FILES, parse

pytestmark = pytest.mark.anyio


PROJECT: dict[str, str | bytes] = {
    **REPO_FILES,
    ".gitignore": "build/\n",
    "node_modules/left-pad/index.js": "module.exports = 1\n",
    "node_modules/left-pad/AGENTS.md": "# Not ours\n",
    ".git/HEAD": "ref: refs/heads/main\n",
    "build/out/AGENTS.md": "# Generated\n",
    "src/web/app.ts": "export {}\n",
}


async def test_the_project_watcher_leaves_ignored_folders_unwatched(tmp_path: Path) -> None:
    from watchfiles import awatch

    repo = write_tree(tmp_path / "shop", PROJECT)
    watched: list[tuple[tuple[str, ...], bool]] = []

    def recording(*paths: str, **kwargs: Any) -> Any:  # the real watcher, its arguments noted
        watched.append((paths, kwargs["recursive"]))
        return awatch(*paths, **kwargs)

    config, roots = parse([], cwd=repo)
    server = create_server(
        LiveIndex(roots), dataclasses.replace(config, debounce_ms=50, poll_interval_s=0.2), recording
    )
    async with Client(server):
        await eventually(lambda: server.app.watcher.healthy)
        paths, recursive = watched[0]
        assert not recursive
        assert {Path(p).relative_to(repo).as_posix() for p in paths} == {
            ".",
            ".cursor",
            ".cursor/rules",
            ".github",
            ".github/instructions",
            "docs",
            "src",
            "src/api",
            "src/web",
        }
        (repo / "src/web/AGENTS.md").write_text("# Web folder\n\nNo inline styles.\n")  # no tool call
        await eventually(lambda: "shop/src/web/AGENTS.md" in server.app.live.corpus.files)
        (repo / "src/jobs").mkdir()  # a new folder: watched from now on
        await eventually(lambda: any(str(repo / "src/jobs") in p for p, _ in watched))
        (repo / "src/jobs/AGENTS.md").write_text("# Jobs\n\nIdempotent.\n")
        await eventually(lambda: "shop/src/jobs/AGENTS.md" in server.app.live.corpus.files)
        assert server.app.watcher.restarts == 0  # a new folder is no failure
    assert "shop/node_modules/left-pad/AGENTS.md" not in server.app.live.corpus.files
    assert "shop/build/out/AGENTS.md" not in server.app.live.corpus.files


async def test_a_polled_project_is_walked_not_polled_file_by_file(tmp_path: Path) -> None:
    from watchfiles import awatch

    repo = write_tree(tmp_path / "shop", PROJECT)
    started: list[tuple[str, ...]] = []

    def recording(*paths: str, **kwargs: Any) -> Any:  # the library's poller would stat every file
        started.append(paths)
        return awatch(*paths, **kwargs)

    config, roots = parse(["--poll"], cwd=repo)
    server = create_server(
        LiveIndex(roots), dataclasses.replace(config, debounce_ms=50, poll_interval_s=0.2), recording
    )
    async with Client(server):
        await eventually(lambda: server.app.watcher.healthy)
        assert server.app.watcher.mode == "polling"
        (repo / "src/web/AGENTS.md").write_text("# Web folder\n\nNo inline styles.\n")  # no tool call
        await eventually(lambda: "shop/src/web/AGENTS.md" in server.app.live.corpus.files)
        (repo / "CLAUDE.md").unlink()
        await eventually(lambda: "shop/CLAUDE.md" not in server.app.live.corpus.files)
    assert started == []


async def test_a_file_written_as_a_restarted_watcher_starts_is_found(tmp_path: Path) -> None:
    """The watcher dies and is restarted; a file is written after the restart's rescan but before
    the new watch begins, so it sends no event: the new watcher's first report rescans, and finds it."""
    from watchfiles import awatch

    agents = write_tree(tmp_path / ".AGENTS", {"overview.md": "# Overview\n\nthe project\n"})
    docs = write_tree(tmp_path / "docs", {"guide.md": "# Guide\n\nthe okapi manual\n"})
    starts: list[tuple[str, ...]] = []

    async def dies_once(*paths: str, **kwargs: Any) -> AsyncIterator[set[tuple[Change, str]]]:
        starts.append(paths)
        if len(starts) == 1:
            async for changes in awatch(*paths, **kwargs):
                yield changes
                raise RuntimeError("the watcher died")
        (docs / "between.md").write_text("# Between\n\nthe quokka, written as the watch begins\n")
        async for changes in awatch(*paths, **kwargs):
            yield changes

    server = make_server(agents, [docs], watch_factory=dies_once)

    def indexed() -> set[str]:
        with server.app.live.view() as view:
            return set(view.corpus.files)

    async with Client(server):
        await eventually(lambda: len(starts) == 2 and server.app.watcher.healthy, timeout=30)
        await eventually(lambda: "docs/between.md" in indexed())
        assert server.app.watcher.restarts == 1


async def test_the_watch_begins_once_the_first_indexing_is_done_and_misses_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Creating the OS watch of a large tree holds the interpreter's lock for its whole walk, which
    the first indexing (or a warm start's check) waited for. So the watch of a server whose docs
    are indexed in the background begins once that is done, and a file written meanwhile is still
    found: the watcher's first report rescans."""
    from watchfiles import awatch

    agents = write_tree(tmp_path / ".AGENTS", {"overview.md": "# Overview\n\nthe project\n"})
    docs = write_tree(tmp_path / "docs", {"guide.md": "# Guide\n\nthe okapi manual\n"})
    starts: list[tuple[str, ...]] = []
    indexing = threading.Event()
    go_on = threading.Event()
    in_chunks = sync.RootSync._in_chunks

    def held(self: sync.RootSync, *args: Any, **kwargs: Any) -> Any:
        if self.root.kind is RootKind.DOCS and not go_on.is_set():
            indexing.set()
            go_on.wait(timeout=60)
        return in_chunks(self, *args, **kwargs)

    def recording(*paths: str, **kwargs: Any) -> Any:
        starts.append(paths)
        return awatch(*paths, **kwargs)

    monkeypatch.setattr(sync.RootSync, "_in_chunks", held)
    settings = Settings(agents=(agents,), docs=(docs,), no_cache=True, debounce_ms=50, poll_interval_s=0.2)
    server = create_server(open_index(settings, background=True), settings, recording)
    async with Client(server) as client:
        await eventually(indexing.is_set)
        await client.call_tool("context_status", {})  # the server is up and answering meanwhile
        assert not starts and server.app.watcher.mode == "starting"
        (docs / "meanwhile.md").write_text("# Meanwhile\n\nthe quokka, written during the indexing\n")
        go_on.set()
        await eventually(lambda: starts and server.app.watcher.healthy, timeout=30)
        await eventually(lambda: "docs/meanwhile.md" in server.app.live.corpus.files)
