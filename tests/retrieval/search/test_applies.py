"""Path-scoped rules (context_for_path): globs, nested AGENTS.md, names; most specific first, each saying why."""

from __future__ import annotations

from pathlib import Path

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
