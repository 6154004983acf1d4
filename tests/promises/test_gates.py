"""The linters, the type checker, the import contracts (`[tool.importlinter]` in pyproject.toml:
imports flow one way, from the surfaces down to the disk) and the size of modules and classes are
part of the test suite, so `uv run pytest` gates them too."""

from __future__ import annotations

import ast
import builtins
import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from corpus.roots import make_roots
from live import answers
from live.index import LiveIndex
from retrieval.engine.ranking import DEFAULT
from retrieval.render.hits import Page, render_context, render_docs
from retrieval.search.request import DETAILS, SECTIONS, WINDOWS, SearchRequest
from tests.helpers import REPO

ROOT = REPO


@pytest.mark.parametrize(
    "command",
    [
        ["ruff", "check", "."],
        ["ruff", "format", "--check", "."],
        ["mypy"],
        ["importlinter.cli", "--no-cache"],
    ],
    ids=["ruff-check", "ruff-format", "mypy", "import-contracts"],
)
def test_tool_is_clean(command: list[str]) -> None:
    if command[0] == "importlinter.cli":  # a package with no __main__: call its command
        command = ["-c", "from importlinter.cli import lint_imports_command; lint_imports_command()", *command[1:]]
    else:
        command = ["-m", *command]
    done = subprocess.run([sys.executable, *command], cwd=ROOT, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stdout + done.stderr


MODULE_LINES = 500
CLASS_LINES = 300


def test_no_module_or_class_outgrows_a_reader() -> None:
    """No module over 500 lines and no class over 300 outside `tests/` and `bench/`: past that, a
    part has more than one role (split it along a seam, as `live/reading.py` left `live/index.py`)."""
    too_long: list[str] = []
    for path in sorted(ROOT.glob("**/*.py")):
        rel = path.relative_to(ROOT).as_posix()
        if rel.split("/")[0] in {"tests", "bench", ".venv", "node_modules"} or "/." in f"/{rel}":
            continue
        text = path.read_text(encoding="utf-8")
        if (lines := len(text.splitlines())) > MODULE_LINES:
            too_long.append(f"{rel}: {lines} lines")
        classes = [node for node in ast.walk(ast.parse(text)) if isinstance(node, ast.ClassDef)]
        sizes = [(node.name, (node.end_lineno or 0) - node.lineno + 1) for node in classes]
        too_long += [f"{rel}: class {name}, {size} lines" for name, size in sizes if size > CLASS_LINES]
    assert not too_long, too_long


@contextmanager
def no_disk() -> Iterator[list[str]]:
    """Every way Python opens, stats or lists a file fails (and is noted) while this holds."""
    touched: list[str] = []

    def refuse(name: str) -> Callable[..., Any]:
        def refused(*args: Any, **kwargs: Any) -> Any:
            touched.append(f"{name}{args[:1]}")
            raise AssertionError(f"retrieval touched the disk: {name}{args[:1]}")

        return refused

    names = ["stat", "lstat", "open", "scandir", "listdir", "fstat", "pread", "read"]
    saved = {name: getattr(os, name) for name in names}
    opened = builtins.open
    try:
        for name in names:
            setattr(os, name, refuse(f"os.{name}"))
        builtins.open = refuse("open")
        yield touched
    finally:
        for name, real in saved.items():
            setattr(os, name, real)
        builtins.open = opened


def test_retrieval_neither_opens_nor_stats_a_file(make_tree: Callable[..., Path]) -> None:
    """Ranking (with RM3 feedback, phrases, the path method, filters and misses) and rendering
    read no file: a docs hit's text comes from the live index (`live.texts`), loaded between
    the two, and nothing else in `retrieval/` reaches the disk."""
    agents = make_tree({"overview.md": "# Overview\n\nThe okapi project. See [the guide](guide.md).\n"})
    page = "\n".join(f"Step {i} of the okapi install, then [more](other.md#usage)." for i in range(400))
    docs = make_tree(
        {"guide.md": f"# Guide\n\n{page}\n", "other.md": "# Other\n\n## Usage\n\nUse the okapi.\n"}, name="docs"
    )
    live = LiveIndex(make_roots([agents], [docs]), ranking=DEFAULT.but(feedback=True))
    queries = ["okapi install", '"okapi install"', "guide.md", "docs/guide.md", "zebra", "usage"]
    requests = [
        SearchRequest(query=q, kind=kind, path_prefix=prefix, detail=detail)
        for q in queries
        for kind in (SECTIONS, WINDOWS)
        for prefix in (None, "docs/")
        for detail in DETAILS
    ]
    shown = 0
    for request in requests:
        with live.view() as view:
            with no_disk():
                found = view.policy.rank(request, view.corpus)
            held, moved = answers.holding(found, view.corpus)  # the live index reads the hits' text
            assert moved == []
            with no_disk():
                render = render_context if request.kind is SECTIONS else render_docs
                text = render(request.query, held, Page.of(request, held, view.library.tokenize)).text
        shown += "Step 1 of the okapi" in text
    assert shown  # docs windows were shown, their text read by the live index alone


def test_rendering_before_the_text_is_held_is_a_type_error(tmp_path: Path) -> None:
    """A ranked answer's docs hits do not hold their text: rendering one is refused by the type
    checker (`Held`), and an answer through `live.answers.holding` is taken."""
    snippet = tmp_path / "snippet.py"
    snippet.write_text(
        "from corpus.catalog import Corpus\n"
        "from live.answers import holding\n"
        "from retrieval.render.hits import render_context\n"
        "from retrieval.search.request import Answer\n\n\n"
        "def ranked(found: Answer, corpus: Corpus) -> None:\n"
        "    render_context('q', found)\n"
        "    render_context('q', holding(found, corpus)[0])\n",
        encoding="utf-8",
    )
    done = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--follow-imports=silent", str(snippet)],
        capture_output=True, text=True, cwd=REPO, timeout=300, check=False,
    )  # fmt: skip
    errors = [line for line in done.stdout.splitlines() if ": error:" in line]
    assert len(errors) == 1 and "snippet.py:8:" in errors[0] and 'expected "Held"' in errors[0], done.stdout
