"""Path-scoped rules (context_for_path): globs, nested AGENTS.md, names; most specific first, each saying why."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from types import FrameType
from typing import Any

from corpus.catalog import Corpus, load
from corpus.roots import make_roots, relative_source
from retrieval.search.applies import Applicable, applicable
from tests.conftest import write_tree
from tests.projects import REPO_FILES


def applying(corpus: Corpus, source: str, base: Path) -> list[Applicable]:
    """What `context_for_path` finds for `source`, given from the folder `base`."""
    where = {r.label: rel for r in corpus.agents_roots if (rel := relative_source(r, source, base)) is not None}
    return applicable(corpus, where)


def test_context_for_path_orders_globs_then_nested_agents_then_names(tmp_path: Path) -> None:
    repo = write_tree(
        tmp_path / "shop",
        {**REPO_FILES, ".cursor/rules/auth.mdc": "# Auth\n\n## Tokens in api\n\nRotate them.\n"},
    )
    corpus = load(make_roots([], conventional=repo))
    found = applying(corpus, "src/api/auth.py", repo)
    order = [(a.unit.path, a.reason) for a in found]
    assert order[0] == ("shop/.cursor/rules/api.mdc", "cursor globs: src/api/**/*.py")
    assert order[1] == ("shop/src/api/AGENTS.md", "AGENTS.md in src/api/")
    assert order[2:4] == [("shop/.cursor/rules/auth.mdc", "file path names auth")] * 2  # its name is the file's
    assert all(not a.unit.path.endswith("style.mdc") for a in found)  # pinned: already in context
    tests = applying(corpus, "tests/test_x.py", repo)
    assert [a.reason for a in tests][:1] == ["copilot applies_to: tests/**"]


def test_nested_agents_md_files_apply_nearest_folder_first(tmp_path: Path) -> None:
    """Two AGENTS.md on the way to a file: the one in its own folder comes before its parent's,
    whatever their names' order; a sibling folder's never applies."""
    repo = write_tree(
        tmp_path / "shop",
        {
            **REPO_FILES,
            "src/AGENTS.md": "# Source tree\n\nEvery module has tests.\n",
            "src/api/v2/AGENTS.md": "# API v2\n\nVersioned routes only.\n",
            "src/web/AGENTS.md": "# Web\n\nNo inline styles.\n",
        },
    )
    corpus = load(make_roots([], conventional=repo))
    found = applying(corpus, "src/api/v2/routes.py", repo)
    nested = [(a.unit.path, a.reason) for a in found if a.reason.startswith("AGENTS.md in")]
    assert nested == [
        ("shop/src/api/v2/AGENTS.md", "AGENTS.md in src/api/v2/"),
        ("shop/src/api/AGENTS.md", "AGENTS.md in src/api/"),
        ("shop/src/AGENTS.md", "AGENTS.md in src/"),
    ]


def lines_run(work: Callable[[], object]) -> int:
    """How many lines of Python `work` runs: the work done, counted without a clock."""
    count = 0

    def tracer(frame: FrameType, event: str, arg: Any) -> Any:
        nonlocal count
        count += event == "line"
        return tracer

    sys.settrace(tracer)
    try:
        work()
    finally:
        sys.settrace(None)
    return count


DEEP_RULES: dict[str, str | bytes] = {
    **REPO_FILES,
    ".AGENTS/guide.md": "# Guide\n\n## The ddd layer\n\nOne.\n\n## src/ddd/ddd/\n\nTwo.\n\n## Deploying\n\nThree.\n",
    ".cursor/rules/src.mdc": "---\nglobs: src/**/*.py\n---\n# Source\n\nTyped.\n",
}


def test_the_work_grows_with_the_paths_length_not_its_square(tmp_path: Path) -> None:
    """A path of `ddd/` n times and 2n times: the second is about twice the work (a regular
    expression compiled for each of the path's folders was the square: 4.6 s for 2,000)."""
    repo = write_tree(tmp_path / "shop", DEEP_RULES)
    corpus = load(make_roots([repo / ".AGENTS"], conventional=repo))

    def path(folders: int) -> str:
        return "src/" + "ddd/" * folders + "x.py"

    found = applying(corpus, path(3), repo)  # compiled once, before counting
    assert {a.reason for a in found} >= {"cursor globs: src/**/*.py", "heading names src/ddd/ddd", "heading names ddd"}
    small = lines_run(lambda: applying(corpus, path(150), repo))
    large = lines_run(lambda: applying(corpus, path(300), repo))
    assert large < 2.3 * small, (small, large)


def test_a_heading_names_the_deepest_folder_it_writes(tmp_path: Path) -> None:
    """A heading's path of the file counts from the top and whole, deepest first; a name counts as
    a whole word; the deepest folder wins whichever way it is written."""
    repo = write_tree(
        tmp_path / "shop",
        {
            "AGENTS.md": "# A\n",
            ".AGENTS/notes.md": (
                "# Notes\n\n## Billing and `src/billing/` here\n\nB.\n\n## The invoices module\n\nI.\n\n"
                "## src/billing/invoices/pdf.py quirks\n\nP.\n\n## lib/billing\n\nnot from the top.\n\n"
                "## billing-tools\n\nanother name.\n"
            ),
        },
    )
    corpus = load(make_roots([repo / ".AGENTS"], conventional=repo))
    found = {a.unit.heading: a.reason for a in applying(corpus, "src/billing/invoices/pdf.py", repo)}
    assert found == {
        "Billing and `src/billing/` here": "heading names src/billing",
        "The invoices module": "heading names invoices",
        "src/billing/invoices/pdf.py quirks": "heading names src/billing/invoices/pdf.py",
    }
