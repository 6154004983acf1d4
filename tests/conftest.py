"""Shared fixtures: real folders in `tmp_path`, built from a {relative path: content} dict."""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from pathlib import Path

import pytest
from hypothesis import settings

settings.register_profile("ci", derandomize=True, deadline=None, max_examples=60, print_blob=True)
settings.register_profile("dev", deadline=None, max_examples=100)
settings.load_profile("ci" if os.environ.get("CI") else "dev")

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
