"""The conventions teams already have: conventional files, front matter, monorepos, ignore files,
path-scoped rules and links, on real-world-shaped fixtures."""

from __future__ import annotations

import argparse
import dataclasses
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from mcp import Client, MCPError

from cli.flags import build_parser
from cli.settings import Settings
from corpus.catalog import Corpus, load
from corpus.errors import RootNotFound
from corpus.roots import Root, make_roots, relative_source
from live.index import LiveIndex
from retrieval.search.applies import Applicable, applicable
from server import AgentsServer, create_server
from tests.conftest import write_tree
from tests.helpers import eventually, split_status, text_of

pytestmark = pytest.mark.anyio

REPO_FILES: dict[str, str | bytes] = {
    "AGENTS.md": "# Agent guide\n\nRun `make test` before committing.\n",
    "CLAUDE.md": "# Claude notes\n\nPrefer small diffs.\n",
    "README.md": "# The product README\n\nNot an agent file.\n",
    ".cursor/rules/api.mdc": (
        "---\ndescription: How the HTTP API is built\nglobs: src/api/**/*.py\nalwaysApply: false\n---\n"
        "# API rules\n\nValidate every request body with pydantic.\n"
    ),
    ".cursor/rules/style.mdc": "---\ndescription: Code style\nalwaysApply: true\n---\n# Style\n\nFour spaces.\n",
    ".github/copilot-instructions.md": "# Copilot\n\nUse the project's logger.\n",
    ".github/instructions/tests.instructions.md": (
        "---\napplies_to: ['tests/**']\n---\n# Tests\n\nUse pytest fixtures, not setUp.\n"
    ),
    "src/api/AGENTS.md": "# API folder\n\nAuth lives in auth.py; never log tokens.\n",
    "src/api/auth.py": "def login(): ...\n",
    "docs/api.md": "# Public docs\n\nnot included\n",
}


def parse(argv: list[str], cwd: Path) -> tuple[Settings, list[Root]]:
    settings = Settings.from_args(build_parser().parse_args(["serve", *argv]), cwd=cwd)
    return settings, settings.roots()


def serve(settings: Settings, roots: list[Root]) -> AgentsServer:
    from corpus.rules import PinSet

    live = LiveIndex(roots, PinSet(settings.pins) if settings.pins is not None else None)
    return create_server(live, dataclasses.replace(settings, debounce_ms=50, poll_interval_s=0.2))


def applying(corpus: Corpus, source: str, base: Path) -> list[Applicable]:
    """What `context_for_path` finds for `source`, given from the folder `base`."""
    where = {r.label: rel for r in corpus.agents_roots if (rel := relative_source(r, source, base)) is not None}
    return applicable(corpus, where)


async def call(client: Client, tool: str, **args: object) -> tuple[str, dict[str, str], dict[str, Any]]:
    result = await client.call_tool(tool, args)
    assert not result.is_error, text_of(result)
    body, status = split_status(text_of(result))
    return body, status, result.structured_content or {}


# --- conventional files and front matter ----------------------------------------------------


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
    with pytest.raises(RootNotFound, match=r"no \.AGENTS folder and no AGENTS\.md"):
        parse([], cwd=tmp_path)


def test_conventional_alongside_an_agents_folder_is_a_second_root(tmp_path: Path) -> None:
    repo = write_tree(tmp_path / "shop", {**REPO_FILES, ".AGENTS/security.md": "# Security\n\nsecrets\n"})
    _, roots = parse(["--conventional"], cwd=repo)
    assert [(r.label, r.scoped) for r in roots] == [(".AGENTS", True), ("shop", True)]
    corpus = load(roots)
    assert corpus.files[".AGENTS/security.md"].uri == "agents://.AGENTS/security.md"
    assert corpus.files["shop/AGENTS.md"].uri == "agents://shop/AGENTS.md"


async def test_front_matter_gives_titles_and_descriptions(tmp_path: Path) -> None:
    repo = write_tree(tmp_path / "shop", REPO_FILES)
    server = serve(*parse([], cwd=repo))
    async with Client(server) as client:
        resources = {r.uri: r for r in (await client.list_resources()).resources}
        pinned = text_of(await client.call_tool("pinned_context", {}))
    assert resources["agents://.cursor/rules/style.mdc"].annotations.priority == 1.0  # type: ignore[union-attr]
    assert resources["agents://.cursor/rules/api.mdc"].title == "API rules"
    assert "- shop/.cursor/rules/api.mdc (How the HTTP API is built): API rules" in pinned


async def test_a_front_matter_title_heads_the_trail_and_ranks(make_tree: Callable[..., Path]) -> None:
    agents = make_tree(
        {
            "oncall.md": "---\ntitle: Incident runbook\ndescription: Outage steps\n---\n## Paging\n\nCall the engineer.\n",
            "style.md": "# Style\n\nFour spaces, and call things by their names.\n",
        }
    )
    server = create_server(LiveIndex(make_roots([agents])), Settings(agents=(agents,)))
    async with Client(server) as client:
        _, _, by_title = await call(client, "context_search", query="runbook")
        _, _, by_description = await call(client, "context_search", query="outage")
    assert by_title["hits"][0]["path"].endswith("oncall.md")
    assert "(Incident runbook > Paging)" in by_title["hits"][0]["citation"]
    assert by_description["hits"] == []  # descriptions are shown, not indexed: they cost ranking quality


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


# --- monorepos ------------------------------------------------------------------------------


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
    assert [r.label for r in roots] == [".AGENTS", ".AGENTS-2"]
    server = serve(config, roots)
    async with Client(server) as client:
        _, _, both = await call(client, "context_search", query="errors", k=5)
        _, _, web = await call(client, "context_search", query="errors", root=".AGENTS-2")
        read = await client.read_resource("agents://.AGENTS-2/errors.md")
        names = sorted(r.name for r in (await client.list_resources()).resources if r.uri.startswith("agents://"))
        bad = await client.call_tool("context_search", {"query": "errors", "root": "nope"})
        _, _, rules = await call(client, "context_for_path", path=str(repo / "packages/web/src/app.tsx"))
    assert {h["path"] for h in both["hits"]} == {".AGENTS/errors.md", ".AGENTS-2/errors.md"}
    assert [h["path"] for h in web["hits"]] == [".AGENTS-2/errors.md"]
    assert [h["uri"] for h in web["hits"]] == ["agents://.AGENTS-2/errors.md"]
    assert getattr(read.contents[0], "text", "").startswith("# Errors\n\nShow a toast")
    assert names == [
        ".AGENTS-2/errors.md",
        ".AGENTS-2/overview.md",
        ".AGENTS/errors.md",
        ".AGENTS/overview.md",
    ]
    assert bad.is_error and "unknown root 'nope'" in text_of(bad)
    assert [h["path"] for h in rules["hits"]] == [".AGENTS-2/overview.md"]  # the web package's rules only


# --- ignore rules -------------------------------------------------------------------------------


async def test_agentsignore_and_gitignore_keep_files_out(make_tree: Callable[..., Path]) -> None:
    agents = make_tree(
        {
            ".agentsignore": "drafts/\n*.scratch.md\n",
            "keep.md": "# Keep\n\nkept words\n",
            "idea.scratch.md": "# Idea\n\nkept words\n",
            "drafts/wip.md": "# WIP\n\nkept words\n",
            "team/.gitignore": "private.md\n!public.md\n*.md\n!notes.md\n",
            "team/private.md": "# Private\n\nkept words\n",
            "team/notes.md": "# Notes\n\nkept words\n",
        }
    )
    live = LiveIndex(make_roots([agents]))
    assert sorted(live.corpus.files) == [".AGENTS/keep.md", ".AGENTS/team/notes.md"]
    assert {s.rel: s.reason for s in live.corpus.skipped} == {
        "drafts/": "ignored by .agentsignore",
        "idea.scratch.md": "ignored by .agentsignore",
        "team/private.md": "ignored by .gitignore",
    }
    server = create_server(live, Settings(agents=(agents,), debounce_ms=50, poll_interval_s=0.2))
    async with Client(server) as client:
        with pytest.raises(MCPError, match=r"ignored by \.agentsignore"):
            await client.read_resource("agents://drafts/wip.md")
        (agents / ".agentsignore").write_text("*.scratch.md\n")  # drafts/ is back
        _, _, found = await call(client, "context_search", query="kept words", k=10)
    assert sorted(h["path"] for h in found["hits"]) == [
        ".AGENTS/drafts/wip.md",
        ".AGENTS/keep.md",
        ".AGENTS/team/notes.md",
    ]


# --- context_for_path and links -----------------------------------------------------------------


def test_context_for_path_orders_globs_then_nested_agents_then_names(tmp_path: Path) -> None:
    repo = write_tree(
        tmp_path / "shop",
        {**REPO_FILES, ".cursor/rules/auth.mdc": "# Auth\n\n## Tokens in api\n\nRotate them.\n"},
    )
    corpus = load(make_roots([], conventional=repo))
    found = applying(corpus, "src/api/auth.py", repo)
    order = [(a.unit.path, a.reason) for a in found]
    assert order[0] == ("shop/.cursor/rules/api.mdc", "globs: src/api/**/*.py")
    assert order[1] == ("shop/src/api/AGENTS.md", "AGENTS.md in src/api/")
    assert order[2:4] == [("shop/.cursor/rules/auth.mdc", "heading names auth")] * 2  # its name is the file's
    assert all(not a.unit.path.endswith("style.mdc") for a in found)  # pinned: already in context
    tests = applying(corpus, "tests/test_x.py", repo)
    assert [a.reason for a in tests][:1] == ["globs: tests/**"]


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


async def test_context_for_path_tool_says_why_each_section_applies(tmp_path: Path) -> None:
    repo = write_tree(tmp_path / "shop", REPO_FILES)
    server = serve(*parse([], cwd=repo))
    async with Client(server) as client:
        body, status, result = await call(client, "context_for_path", path="src/api/auth.py")
        _, _, none = await call(client, "context_for_path", path="scripts/build.sh")
    assert status["method"] == "applies"
    assert body.startswith('<context path="shop/.cursor/rules/api.mdc" section="API rules" score=')
    assert 'applies="globs: src/api/**/*.py"' in body.split("\n")[0]
    assert result["hits"][0]["applies"] == "globs: src/api/**/*.py"
    assert none["hits"] == [] and none["method"] == "applies"


async def test_hits_list_the_sections_they_link_to(make_tree: Callable[..., Path]) -> None:
    agents = make_tree(
        {
            "deploy.md": "# Deploy\n\nBefore shipping read [the secrets rule](security.md#secrets), "
            "[logging](ops/logging.md), [outside](../README.md) and [the web](https://example.com).\n",
            "security.md": "# Security\n\n## Secrets\n\nNever print tokens.\n",
            "ops/logging.md": "# Logging\n\nStructured logs.\n",
        }
    )
    live = LiveIndex(make_roots([agents]))
    server = create_server(live, Settings(agents=(agents,)))
    async with Client(server) as client:
        _, _, found = await call(client, "context_search", query="shipping", k=1)
    assert [(link["text"], link["uri"]) for link in found["hits"][0]["links"]] == [
        ("the secrets rule", "agents://security.md#secrets"),
        ("logging", "agents://ops/logging.md"),
    ]


def test_the_conventional_flag_takes_a_folder(tmp_path: Path) -> None:
    repo = write_tree(tmp_path / "shop", REPO_FILES)
    args = build_parser().parse_args(["serve", "--conventional", str(repo)])
    assert isinstance(args, argparse.Namespace)
    config = Settings.from_args(args, cwd=tmp_path)
    assert config.conventional == repo and [r.label for r in config.roots()] == ["shop"]


# --- front matter as the tools write it -----------------------------------------------------------

CURSOR_AND_COPILOT: dict[str, str | bytes] = {
    "AGENTS.md": "# Agent guide\n\nRun the tests.\n",
    # As Cursor's rule editor saves them: globs unquoted, comma-separated (not valid YAML).
    ".cursor/rules/react.mdc": (
        "---\ndescription: React component conventions\nglobs: **/*.tsx, src/components/**\nalwaysApply: false\n---\n"
        "# React\n\nOne component per file; hooks at the top.\n"
    ),
    ".cursor/rules/python.mdc": (
        "---\ndescription: Python style\nglobs: *.py\nalwaysApply: true\n---\n# Python\n\nType hints everywhere.\n"
    ),
    ".cursor/rules/always.mdc": "---\ndescription:\nglobs:\nalwaysApply: true\n---\n# Always\n\nBe brief.\n",
    # As VS Code's "New instruction file" writes them.
    ".github/instructions/typescript.instructions.md": (
        '---\napplyTo: "**/*.ts,**/*.tsx"\n---\n# TypeScript\n\nPrefer `unknown` to `any`.\n'
    ),
    ".github/instructions/migrations.instructions.md": (
        "---\napplyTo: db/migrations/**\ndescription: Writing migrations\n---\n# Migrations\n\nNever edit an applied one.\n"
    ),
}


async def test_cursor_rules_as_cursor_writes_them_keep_their_front_matter(tmp_path: Path) -> None:
    repo = write_tree(tmp_path / "web", CURSOR_AND_COPILOT)
    server = serve(*parse([], cwd=repo))
    async with Client(server) as client:
        pinned = text_of(await client.call_tool("pinned_context", {}))
        _, _, button = await call(client, "context_for_path", path="src/components/Button.tsx")
        _, _, script = await call(client, "context_for_path", path="tools/gen.py")
    assert '<context path="web/.cursor/rules/python.mdc">' in pinned  # alwaysApply: true pins it
    assert '<context path="web/.cursor/rules/always.mdc">' in pinned
    assert '<context path="web/.cursor/rules/react.mdc">' not in pinned
    assert "(React component conventions)" in pinned  # its description reaches the manifest
    assert button["hits"][0]["path"] == "web/.cursor/rules/react.mdc"
    assert button["hits"][0]["applies"] == "globs: src/components/**"
    assert all(h["path"] != "web/.cursor/rules/react.mdc" for h in script["hits"])


async def test_copilot_apply_to_scopes_its_instructions(tmp_path: Path) -> None:
    repo = write_tree(tmp_path / "web", CURSOR_AND_COPILOT)
    server = serve(*parse([], cwd=repo))
    async with Client(server) as client:
        _, _, ts = await call(client, "context_for_path", path="src/api/client.ts")
        _, _, migration = await call(client, "context_for_path", path="db/migrations/0042_users.sql")
        pinned = text_of(await client.call_tool("pinned_context", {}))
    applies = {h["path"]: h["applies"] for h in ts["hits"]}
    assert applies["web/.github/instructions/typescript.instructions.md"] == "globs: **/*.ts"
    assert "web/.github/instructions/migrations.instructions.md" not in applies
    assert [h["path"] for h in migration["hits"]][:1] == ["web/.github/instructions/migrations.instructions.md"]
    assert "(Writing migrations)" in pinned


async def test_front_matter_tags_rank_a_file_for_its_topics(make_tree: Callable[..., Path]) -> None:
    agents = make_tree(
        {
            "deploy.md": "---\ntitle: Shipping\ntags: [kubernetes, helm]\n---\n# Releases\n\nTag the commit, then run the pipeline.\n",
            "style.md": "# Style\n\nFour spaces.\n",
        }
    )
    server = create_server(LiveIndex(make_roots([agents])), Settings(agents=(agents,)))
    async with Client(server) as client:
        _, _, found = await call(client, "context_search", query="kubernetes")
    (hit,) = found["hits"]
    assert hit["path"] == ".AGENTS/deploy.md"
    assert "kubernetes" not in hit["text"]  # found by its tag alone; the tag is not shown as a heading
    assert "(Shipping > Releases)" in hit["citation"]


async def test_the_instructions_name_what_is_served(tmp_path: Path) -> None:
    repo = write_tree(tmp_path / "web", CURSOR_AND_COPILOT)
    async with Client(serve(*parse([], cwd=repo))) as client:
        conventional = client.instructions or ""
    write_tree(repo, {".AGENTS/overview.md": "# Overview\n\nA web shop.\n"})
    async with Client(serve(*parse(["--conventional"], cwd=repo))) as client:
        both = client.instructions or ""
    assert conventional.startswith(
        "agents-context serves this project's agent instruction files (AGENTS.md, CLAUDE.md, Cursor rules, "
        "Copilot instructions): what the team wants coding agents to know."
    )
    assert ".AGENTS/" not in conventional.split("\n")[0]
    assert both.startswith("agents-context serves this project's .AGENTS/ folder and its agent instruction files")


# --- watching a whole project -------------------------------------------------------------------


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
