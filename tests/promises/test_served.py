"""What is served and what is skipped (docs/corpus.md), as a client of the server sees it, through
a real MCP client on real files: a symlink is refused exactly as its target would be, by every
tool, resource and the doctor, and the text it points at never reaches the client;
`.agentsignore` and `.gitignore` keep files out, reading one is refused with the reason, and an
edit to an ignore file applies at the next call."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest
from mcp import Client, MCPError

from cli.settings import Settings
from corpus.roots import make_roots
from live.index import LiveIndex
from server import create_server
from tests.helpers import DENYLISTED, MARKER, call, linked_tree

pytestmark = pytest.mark.anyio

POSIX = os.name == "posix"


@pytest.mark.anyio
@pytest.mark.skipif(not POSIX, reason="symlinks need privileges on Windows")
async def test_an_mcp_client_never_gets_what_a_symlink_points_at(make_tree: Callable[..., Path]) -> None:
    """resources/list and /read, read_context, every search tool, pinned context, the status and
    the doctor, through a real client: the secret's text never, the reason in context_status."""
    from mcp import Client, MCPError

    from cli.doctor import diagnose
    from tests.helpers import make_server, text_of

    root = linked_tree(make_tree)
    server = make_server(root)
    outputs: list[str] = []
    async with Client(server, mode="legacy") as client:
        listed = sorted(r.uri for r in (await client.list_resources()).resources if r.uri.startswith("agents://"))
        for uri in ("agents://notes.md", "agents://notes.md#env", "agents://overview.md", "agents://pub/draft.md"):
            with pytest.raises(MCPError, match="symlink to") as refused:
                await client.read_resource(uri)
            outputs.append(str(refused.value))
        for path in ("notes.md", ".AGENTS/overview.md", "agents://chain.md#L1", "linkdir/pkg/readme.md"):
            result = await client.call_tool("read_context", {"path": path})
            assert result.is_error and "symlink" in text_of(result)
            outputs.append(text_of(result))
        hit = await client.call_tool("context_search", {"query": "notes api real"})
        outputs.append(text_of(hit))
        links = [link["path"] for h in (hit.structured_content or {})["hits"] for link in h["links"]]
        assert links == [".AGENTS/ok.md"]  # the links to notes.md and api.md lead nowhere served
        for tool, args in (
            ("context_search", {"query": "token private draft hidden key modules scratch rules"}),
            ("search_docs", {"query": "token private draft hidden key modules scratch rules"}),
            ("context_for_path", {"path": "src/api/auth.py"}),
            ("pinned_context", {}),
        ):
            outputs.append(text_of(await client.call_tool(tool, args)))
        outputs.append(str(await client.get_prompt("pinned_context")))
        status = text_of(await client.call_tool("context_status", {}))
        outputs.append(status)
        web = text_of(await client.call_tool("context_for_path", {"path": "src/web/app.ts"}))
    assert listed == ["agents://ok.md", "agents://plans/open.md", "agents://real.md", "agents://web.md"]
    assert f"skipped .AGENTS/notes.md: {DENYLISTED}" in status
    assert f"skipped .AGENTS/overview.md: {DENYLISTED}" in status
    assert "The web rules." in web
    with server.app.live.view() as view:
        report = diagnose(view.corpus, view.library)
    assert {(f.path, f.message) for f in report.findings if f.check == "skipped"} >= {
        (".AGENTS/notes.md", f"not served: {DENYLISTED}"),
        (".AGENTS/linkdir/", "not served: symlink to an ignored folder node_modules/"),
    }
    outputs.append(report.model_dump_json())
    assert not [out for out in outputs if MARKER in out]


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
