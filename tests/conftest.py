"""Shared fixtures: real folders in `tmp_path`, built from a {relative path: content} dict; and
`agents`/`server`, a small `.AGENTS` folder and a server over it, for tests of the tools (a test
module with a corpus of its own defines its own `agents`); `cache_dir`, a cache folder of the test's own."""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path

import pytest
from hypothesis import settings
from mcp.client.stdio import DEFAULT_INHERITED_ENV_VARS

from live.cache import ENV
from server import AgentsServer
from tests.helpers import make_server

settings.register_profile("ci", derandomize=True, deadline=None, max_examples=60, print_blob=True)
settings.register_profile("dev", deadline=None, max_examples=100)
settings.load_profile("ci" if os.environ.get("CI") else "dev")

TEST_CACHE: Path
"""This session's cache folder, in pytest's temporary folder (made by `pytest_configure`)."""
TEST_ENV: dict[str, str]
"""The cache's variable, for a server started with an `env` of its own."""


@pytest.hookimpl(trylast=True)  # after pytest's own, which sets up its temporary folder
def pytest_configure(config: pytest.Config) -> None:
    """Tests never touch the user's real cache, by construction, whatever else runs on the machine:
    before any test module is imported or any process started, the environment names this
    session's own cache folder, so every index the tests build uses it: in process
    (`default_dir`), in a process they start (which inherits the environment), in a server the MCP
    SDK starts (it passes on only the variables it lists: the cache's is added to them). The folder
    is in pytest's temporary folder, so even a session killed before its end leaves nothing pytest
    does not remove later (it keeps the last three)."""
    global TEST_CACHE, TEST_ENV
    factory: pytest.TempPathFactory = config._tmp_path_factory  # type: ignore[attr-defined]
    TEST_CACHE = factory.mktemp("agents-context-cache", numbered=False)
    TEST_ENV = {ENV: str(TEST_CACHE)}
    os.environ[ENV] = str(TEST_CACHE)
    if ENV not in DEFAULT_INHERITED_ENV_VARS:
        DEFAULT_INHERITED_ENV_VARS.append(ENV)


@pytest.fixture(scope="session", autouse=True)
def private_cache() -> Iterator[Path]:
    """This session's cache folder (`TEST_CACHE`), named by the environment for the whole session
    and removed with what it holds at the end."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(ENV, str(TEST_CACHE))
        yield TEST_CACHE
    shutil.rmtree(TEST_CACHE, ignore_errors=True)


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
def cache_dir(tmp_path: Path) -> Path:
    """A cache folder of the test's own (not made yet), for a live index or a server that caches."""
    return tmp_path / "cache"


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
