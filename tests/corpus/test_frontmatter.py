"""Front matter as the conventions write it: titles, descriptions, Cursor globs unquoted, Copilot's applyTo."""

from __future__ import annotations

from pathlib import Path

import pytest
from mcp import Client

from tests.conftest import write_tree
from tests.helpers import call, text_of
from tests.projects import CURSOR_AND_COPILOT, REPO_FILES, parse, serve

pytestmark = pytest.mark.anyio


async def test_front_matter_gives_titles_and_descriptions(tmp_path: Path) -> None:
    repo = write_tree(tmp_path / "shop", REPO_FILES)
    server = serve(*parse([], cwd=repo))
    async with Client(server) as client:
        resources = {r.uri: r for r in (await client.list_resources()).resources}
        pinned = text_of(await client.call_tool("pinned_context", {}))
    assert resources["agents://.cursor/rules/style.mdc"].annotations.priority == 1.0  # type: ignore[union-attr]
    assert resources["agents://.cursor/rules/api.mdc"].title == "API rules"
    assert "- shop/.cursor/rules/api.mdc (How the HTTP API is built): API rules" in pinned


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
    assert button["hits"][0]["applies"] == "cursor globs: src/components/**"
    assert all(h["path"] != "web/.cursor/rules/react.mdc" for h in script["hits"])


async def test_copilot_apply_to_scopes_its_instructions(tmp_path: Path) -> None:
    repo = write_tree(tmp_path / "web", CURSOR_AND_COPILOT)
    server = serve(*parse([], cwd=repo))
    async with Client(server) as client:
        _, _, ts = await call(client, "context_for_path", path="src/api/client.ts")
        _, _, migration = await call(client, "context_for_path", path="db/migrations/0042_users.sql")
        pinned = text_of(await client.call_tool("pinned_context", {}))
    applies = {h["path"]: h["applies"] for h in ts["hits"]}
    assert applies["web/.github/instructions/typescript.instructions.md"] == "copilot applyTo: **/*.ts"
    assert "web/.github/instructions/migrations.instructions.md" not in applies
    assert [h["path"] for h in migration["hits"]][:1] == ["web/.github/instructions/migrations.instructions.md"]
    assert "(Writing migrations)" in pinned
