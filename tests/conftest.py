"""Shared fixtures: real folders in `tmp_path`, built from a {relative path: content} dict; and
`agents`/`server`, a small `.AGENTS` folder and a server over it, for tests of the tools (a test
module with a corpus of its own defines its own `agents`)."""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path

import pytest
from hypothesis import settings

from live.cache import ENV, default_dir
from server import AgentsServer
from tests.helpers import make_server

settings.register_profile("ci", derandomize=True, deadline=None, max_examples=60, print_blob=True)
settings.register_profile("dev", deadline=None, max_examples=100)
settings.load_profile("ci" if os.environ.get("CI") else "dev")

# Tests never touch the user's real cache: every index they build, in process or in a server they
# start (which inherits the environment), uses this folder, removed at the end of the session.
TEST_CACHE = Path(tempfile.mkdtemp(prefix="agents-context-test-cache-"))
os.environ[ENV] = str(TEST_CACHE)
TEST_ENV = {ENV: str(TEST_CACHE)}
"""For servers the MCP SDK starts: it passes them only a few variables of ours, so name the cache."""

Tree = Mapping[str, "str | bytes"]


def write_tree(root: Path, files: Tree) -> Path:
    for rel, content in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content, encoding="utf-8", newline="")
    return root


@pytest.fixture
def make_tree(tmp_path: Path) -> Callable[..., Path]:
    """`make_tree({"a.md": "# A"}, name=".AGENTS")` -> the folder, written under tmp_path."""

    def make(files: Tree, name: str = ".AGENTS") -> Path:
        root = tmp_path / name
        root.mkdir(parents=True, exist_ok=True)
        return write_tree(root, files)

    return make


SECURITY = """# Security

The security policy.

## Secrets

Never print the .env file. Rotate the watch filter token monthly.

## Setup

First setup: install the hooks.

## Logging

Logs never hold secrets.

## Setup

Second setup: configure the filter watch list.
"""
DEPLOY = "# Deploy\n\n## Rollback\n\nRoll back with the zebra switch.\n"


@pytest.fixture
def agents(make_tree: Callable[..., Path]) -> Path:
    return make_tree(
        {
            "overview.md": "# Overview\n\nPolicy tests.\n",
            "security.md": SECURITY,
            "services/deploy.md": DEPLOY,
            "services/api.md": "# API\n\n## Errors\n\nReturn problem+json errors.\n",
        }
    )


@pytest.fixture
def server(agents: Path) -> AgentsServer:
    return make_server(agents)


@pytest.fixture
def short_tmp() -> Iterator[Path]:
    """A folder with a short path right under the system's temporary folder (a unix socket's path
    has a length limit, and an unprivileged user can reach it there), removed afterwards with
    whatever the test left in it, unreadable folders included."""
    top = Path(tempfile.mkdtemp(prefix="ac"))
    try:
        yield top
    finally:
        folders = [top]
        while folders:  # make every folder listable again, then remove the lot
            folder = folders.pop()
            folder.chmod(0o700)
            folders.extend(p for p in folder.iterdir() if p.is_dir() and not p.is_symlink())
        shutil.rmtree(top)


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    from tests.tally import CASES

    if CASES:
        terminalreporter.section("hostile input")
        for kind, n in sorted(CASES.items()):
            terminalreporter.write_line(f"{n:>7}  {kind}")
        terminalreporter.write_line(f"{sum(CASES.values()):>7}  cases tried in all")


def _real_cache() -> dict[str, int]:
    """The user's real cache folder: each file and its mtime (empty if there is none)."""
    real = default_dir({})
    return {p.name: p.stat().st_mtime_ns for p in real.iterdir()} if real.is_dir() else {}


REAL_CACHE_BEFORE = _real_cache()


def pytest_sessionfinish(session: pytest.Session) -> None:
    shutil.rmtree(TEST_CACHE, ignore_errors=True)
    if _real_cache() != REAL_CACHE_BEFORE:  # a server started without TEST_ENV wrote the user's cache
        session.exitstatus = pytest.ExitCode.TESTS_FAILED
        print(f"\nFAILED: the tests wrote to the user's real cache, {default_dir({})}")
