"""The watcher: a project is watched folder by folder, ignored folders unwatched, polling walks it."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from live.index import LiveIndex
from server import create_server
from tests.conftest import write_tree
from tests.helpers import eventually
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
