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


SLOW = (
    "tests/bench/",  # the benchmarks' smoke runs
    "tests/harness/",  # real clients, from here down
    "tests/promises/test_real_clients.py",
    "tests/promises/test_hooks.py",
    "tests/promises/test_inspector.py",
    "tests/protocol/test_words.py::test_the_inspector_",
    "tests/promises/test_gates.py",  # ruff, mypy and import-linter over the whole tree
    "tests/promises/test_wheel.py",  # a wheel installed into a fresh venv
    "tests/promises/test_stdio.py",  # servers and commands in processes of their own, from here down
    "tests/promises/test_http.py",
    "tests/promises/test_protocol.py",
    "tests/promises/test_numbers.py",
    "tests/promises/test_frames.py",
    "tests/promises/test_freshness.py",
    "tests/promises/test_races.py",
    "tests/promises/test_setup.py",
    "tests/shared/test_relay.py",
    "tests/shared/test_relay_hostile.py",
    "tests/cli/test_commands.py",
    "tests/cli/test_doctor.py",
    "tests/cli/test_eval_lines.py",
    "tests/cli/test_evaluate.py",
    "tests/cli/test_project.py",
    "tests/cli/test_flags.py::test_help_explains_every_command",
    "tests/live/test_cache_prune.py",
    "tests/live/test_cache.py::test_cache_flags_and_subcommand_through_the_real_entry_point",
    "tests/promises/test_cache.py::test_cache_show_lists_",
    "tests/promises/test_conventions.py::test_doctor_",
    "tests/cli/test_setup.py::test_the_command_line_runs_setup",
    "tests/cli/test_setup.py::test_shared_and_a_url_or_a_command_are_refused_together",
    "tests/hook/test_main.py::test_a_hook_waits_for_another_",  # seconds of waiting, from here down
    "tests/live/test_index.py::test_a_call_waits_for_its_files_to_settle_",
    "tests/live/test_index.py::test_a_call_does_not_wait_for_a_file_saved_",
    "tests/live/test_index.py::test_a_sweep_that_left_a_file_for_later_",
    "tests/live/test_settle.py::test_a_file_rewritten_again_since_",
    "tests/live/test_index.py::test_any_sequence_of_file_operations_",  # hypothesis, from here down
    "tests/retrieval/engine/test_postings.py::test_any_sequence_of_file_updates_",
    "tests/promises/test_hostile.py::test_any_query_in_any_unicode_category_",
    "tests/promises/test_hostile.py::test_read_context_with_any_arguments_",
    "tests/promises/test_hostile.py::test_context_for_path_with_any_arguments_",
    "tests/promises/test_hostile.py::test_a_10_mb_single_line_",  # big inputs, from here down
    "tests/promises/test_hostile.py::test_deep_nesting_and_a_crowded_folder",
    "tests/retrieval/chunks/test_headings_fast.py::test_every_tldr_page_reads_the_same",
    "tests/protocol/test_words.py::test_a_value_of_the_wrong_type_",  # a server for each of 194 bad values
)
"""Tests marked `slow`, by the start of their id (a module, or one test of it): `uv run pytest -m
"not slow"` is the quick loop, and plain `uv run pytest` still runs them all."""


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if item.nodeid.startswith(SLOW):
            item.add_marker(pytest.mark.slow)


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
