"""Settings from the flags: which roots are served, from where."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path

import pytest
from mcp import Client

from cli.flags import build_parser
from cli.settings import Settings
from corpus.catalog import load
from corpus.errors import RootNotFound
from corpus.roots import make_roots
from live.index import LiveIndex
from server import create_server
from tests.conftest import write_tree
from tests.helpers import call, text_of
from tests.projects import REPO_FILES, parse, serve

pytestmark = pytest.mark.anyio


def test_without_agents_folder_the_conventional_files_are_served(tmp_path: Path) -> None:
    repo = write_tree(tmp_path / "shop", REPO_FILES)
    config, roots = parse([], cwd=repo)
    assert config.conventional == repo and config.agents == ()
    corpus = load(roots)
    assert sorted(f.rel for f in corpus.files.values()) == [
        ".cursor/rules/api.mdc",
        ".cursor/rules/style.mdc",
        ".github/copilot-instructions.md",
        ".github/instructions/tests.instructions.md",
        "AGENTS.md",
        "CLAUDE.md",
        "src/api/AGENTS.md",
    ]
    pinned = sorted(f.path for f in corpus.files.values() if f.pinned)
    assert pinned == ["shop/.cursor/rules/style.mdc", "shop/AGENTS.md"]  # the root AGENTS.md and alwaysApply
    api = corpus.files["shop/.cursor/rules/api.mdc"]
    assert (api.meta.description, api.meta.globs, api.meta.always_apply) == (
        "How the HTTP API is built",
        ("src/api/**/*.py",),
        False,
    )
    assert corpus.files["shop/.github/instructions/tests.instructions.md"].meta.globs == ("tests/**",)


def test_no_agents_folder_and_no_agent_files_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(
        RootNotFound, match=r"no \.AGENTS folder and no agent files \(AGENTS\.md, CLAUDE\.md, GEMINI\.md"
    ):
        parse([], cwd=tmp_path)


def test_conventional_alongside_an_agents_folder_is_a_second_root(tmp_path: Path) -> None:
    repo = write_tree(tmp_path / "shop", {**REPO_FILES, ".AGENTS/security.md": "# Security\n\nsecrets\n"})
    _, roots = parse(["--conventional"], cwd=repo)
    assert [(r.label, r.scoped) for r in roots] == [(".AGENTS", True), ("shop", True)]
    corpus = load(roots)
    assert corpus.files[".AGENTS/security.md"].uri == "agents://.AGENTS/security.md"
    assert corpus.files["shop/AGENTS.md"].uri == "agents://shop/AGENTS.md"


async def test_skill_folders_in_a_lower_case_agents_root(make_tree: Callable[..., Path]) -> None:
    agents = make_tree(
        {
            "skills/deploy/SKILL.md": "---\nname: deploy\ndescription: Ship a release to production\n---\n# Deploy\n\nRun the release train.\n",
            "skills/review/SKILL.md": "---\nname: review\ndescription: Review a pull request\n---\n# Review\n\nCheck tests first.\n",
        },
        name=".agents",
    )
    live = LiveIndex(make_roots([agents]))
    server = create_server(live, Settings(agents=(agents,)))
    async with Client(server) as client:
        _, _, found = await call(client, "context_search", query="release production")
        titles = {r.uri: r.title for r in (await client.list_resources()).resources}
    assert found["hits"][0]["path"] == ".agents/skills/deploy/SKILL.md"
    assert titles["agents://skills/review/SKILL.md"] == "review"


async def test_a_monorepo_with_one_agents_folder_per_package(tmp_path: Path) -> None:
    repo = write_tree(
        tmp_path / "mono",
        {
            "packages/api/.AGENTS/overview.md": "# API package\n\nPython service.\n",
            "packages/api/.AGENTS/errors.md": "# Errors\n\nReturn problem json errors.\n",
            "packages/web/.AGENTS/overview.md": "# Web package\n\nTypeScript app.\n",
            "packages/web/.AGENTS/errors.md": "# Errors\n\nShow a toast for errors.\n",
        },
    )
    config, roots = parse(["--root", "packages/api/.AGENTS", "--root", "packages/web/.AGENTS"], cwd=repo)
    assert [r.label for r in roots] == ["api", "web"]  # the nearest folder that tells them apart
    server = serve(config, roots)
    async with Client(server) as client:
        _, _, both = await call(client, "context_search", query="errors", k=5)
        _, _, web = await call(client, "context_search", query="errors", root="web")
        read = await client.read_resource("agents://web/errors.md")
        names = sorted(r.name for r in (await client.list_resources()).resources if r.uri.startswith("agents://"))
        bad = await client.call_tool("context_search", {"query": "errors", "root": "nope"})
        _, _, rules = await call(client, "context_for_path", path=str(repo / "packages/web/src/app.tsx"))
    assert {h["path"] for h in both["hits"]} == {"api/errors.md", "web/errors.md"}
    assert [h["path"] for h in web["hits"]] == ["web/errors.md"]
    assert [h["uri"] for h in web["hits"]] == ["agents://web/errors.md"]
    assert getattr(read.contents[0], "text", "").startswith("# Errors\n\nShow a toast")
    assert names == [
        "api/errors.md",
        "api/overview.md",
        "web/errors.md",
        "web/overview.md",
    ]
    assert bad.is_error and "unknown root 'nope'" in text_of(bad)
    assert [h["path"] for h in rules["hits"]] == ["web/overview.md"]  # the web package's rules only


def test_the_conventional_flag_takes_a_folder(tmp_path: Path) -> None:
    repo = write_tree(tmp_path / "shop", REPO_FILES)
    args = build_parser().parse_args(["serve", "--conventional", str(repo)])
    assert isinstance(args, argparse.Namespace)
    config = Settings.from_args(args, cwd=tmp_path)
    assert config.conventional == repo and [r.label for r in config.roots()] == ["shop"]
