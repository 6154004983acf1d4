"""The MCP surface through the SDK's in-memory Client, in both protocol eras."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client, MCPError
from mcp.shared.subscriptions import ResourcesListChanged
from mcp.types import ServerNotification

from corpus.names import MAX_PATH_NAMES
from retrieval.search import applies
from retrieval.search.request import EMPTY_QUERY
from server import AgentsServer
from tests.helpers import MODES, TOOLS, call, eventually, make_server, search, split_status, text_of

pytestmark = pytest.mark.anyio

OVERVIEW = "# Overview\n\nagents-context test project. Python 3.10+.\n"
CONVENTIONS = "# Conventions\n\n- Search project context before guessing.\n- Never write files.\n"
SECURITY = (
    "# Security\n\nThe security policy.\n\n"
    "## Secrets\n\nNever print .env files or tokens.\n\n"
    "## Filesystem boundaries\n\nThe server is read-only.\n"
)
GLOSSARY = "# Glossary\n\n## Pinned file\n\nA file in every prompt.\n\n## Section\n\nA heading and its text.\n"


@pytest.fixture
def agents(make_tree: Callable[..., Path]) -> Path:
    return make_tree(
        {
            "overview.md": OVERVIEW,
            "conventions.md": CONVENTIONS,
            "security.md": SECURITY,
            "glossary.md": GLOSSARY,
            "C#.md": "# Sharp names\n\nFiles named with a hash work.\n",
            ".env": "TOKEN=do-not-serve\n",
        }
    )


@pytest.fixture
def server(agents: Path) -> AgentsServer:
    return make_server(agents)


@pytest.fixture(params=MODES)
def mode(request: pytest.FixtureRequest) -> str:
    return str(request.param)


async def test_tools_are_listed_with_schemas_annotations_and_short_descriptions(
    server: AgentsServer, mode: str
) -> None:
    async with Client(server, mode=mode) as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
    assert list(tools) == TOOLS
    for tool in tools.values():
        assert tool.description and len(tool.description) < 2048
        assert tool.annotations is not None
        assert tool.annotations.read_only_hint is True
        assert tool.annotations.open_world_hint is False
        # Meaningful only for a tool that writes (the MCP specification): not sent, to save bytes.
        assert tool.annotations.idempotent_hint is None and tool.annotations.destructive_hint is None
    k = tools["context_search"].input_schema["properties"]["k"]
    assert (k["default"], k["minimum"], k["maximum"]) == (3, 1, 20)
    k = tools["search_docs"].input_schema["properties"]["k"]
    assert (k["default"], k["minimum"], k["maximum"]) == (5, 1, 10)
    assert tools["context_search"].input_schema["required"] == ["query"]
    for name in ("context_search", "search_docs"):
        schema = tools[name].output_schema
        assert schema is not None and {"method", "hits"} <= set(schema["properties"])
    assert tools["pinned_context"].output_schema is None


async def test_context_search_hit_is_exact_body_and_structured(server: AgentsServer, mode: str) -> None:
    async with Client(server, mode=mode) as client:
        result = await client.call_tool("context_search", {"query": "print secrets", "k": 1})
    assert not result.is_error
    body, status = split_status(text_of(result))
    assert body == (
        '<context path=".AGENTS/security.md" section="Secrets" score="5.96">\n'
        "## Secrets\n\nNever print .env files or tokens.\n"
        "</context>"
    )
    assert (status["method"], status["hits"], status["gen"]) == ("bm25", "1", "1")
    assert status["fresh_as_of"].endswith("Z") and "changed" not in status
    assert result.structured_content is not None
    (hit,) = result.structured_content["hits"]
    assert hit["path"] == ".AGENTS/security.md"
    assert (hit["heading"], hit["start_line"], hit["end_line"]) == ("Secrets", 5, 7)
    assert hit["uri"] == "agents://security.md"
    assert result.structured_content["method"] == "bm25"


PINNED = {".AGENTS/overview.md", ".AGENTS/conventions.md"}


async def test_context_search_finds_pinned_files_and_marks_them(server: AgentsServer) -> None:
    """The model may no longer hold the pinned text (clients cut or drop instructions, long
    sessions compact), so pinned files are searched like the others and their hits say so."""
    async with Client(server) as client:
        _, _, found = await call(client, "context_search", query="search project context before guessing")
        text = await search(client, "search project context before guessing")
        other = await search(client, "secrets")
    assert found["hits"][0]["path"] == ".AGENTS/conventions.md" and found["hits"][0]["pinned"] is True
    assert text.startswith('<context path=".AGENTS/conventions.md" section="Conventions" score="')
    assert text.split("\n", 1)[0].endswith('" pinned="true">')
    assert all(h["pinned"] is (h["path"] in PINNED) for h in found["hits"])
    assert (
        other.startswith('<context path=".AGENTS/security.md" section="Secrets" score=')
        and 'pinned="true"' not in other
    )


async def test_misses_are_normal_answers_and_blank_queries_are_errors(server: AgentsServer, mode: str) -> None:
    async with Client(server, mode=mode) as client:
        miss = await client.call_tool("context_search", {"query": "kubernetes"})
        assert not miss.is_error
        assert split_status(text_of(miss))[0].startswith("no matching context for: kubernetes")
        assert split_status(text_of(miss))[1]["hits"] == "0"
        docs_miss = await client.call_tool("search_docs", {"query": "kubernetes"})
        assert split_status(text_of(docs_miss))[0].startswith("(no results)")
        for tool in ("context_search", "search_docs"):
            for blank in ("", "   \n\t"):
                error = await client.call_tool(tool, {"query": blank})
                assert error.is_error
                assert text_of(error) == EMPTY_QUERY


async def test_k_is_clamped_not_rejected(make_tree: Callable[..., Path], mode: str) -> None:
    many = {f"topic-{i:02d}.md": f"# Topic {i}\n\nshared word, then {'filler ' * i}\n" for i in range(30)}
    server = make_server(make_tree(many))
    async with Client(server, mode=mode) as client:
        low = await client.call_tool("context_search", {"query": "shared word", "k": 0})
        high = await client.call_tool("context_search", {"query": "shared word", "k": 500})
        docs_low = await client.call_tool("search_docs", {"query": "shared word", "k": -3})
        docs_high = await client.call_tool("search_docs", {"query": "shared word", "k": 99})
    assert not any(r.is_error for r in (low, high, docs_low, docs_high))
    assert text_of(low).count("<context ") == 1
    assert text_of(high).count("<context ") == 20  # 30 sections match; k is clamped to 20
    assert split_status(text_of(high))[1]["hits"] == "20"
    assert split_status(text_of(docs_low))[1]["hits"] == "1"
    assert split_status(text_of(docs_high))[1]["hits"] == "10"


async def test_search_docs_covers_pinned_files_with_header_blocks(server: AgentsServer, mode: str) -> None:
    async with Client(server, mode=mode) as client:
        result = await client.call_tool("search_docs", {"query": "never files", "k": 2})
    text = text_of(result)
    assert text.startswith("--- .AGENTS/conventions.md#0 (score=")
    body, status = split_status(text)
    assert body.endswith(" tokens)]") and "\n\n[2 hits, ~" in body and status["hits"] == "2"
    assert result.structured_content is not None
    assert [h["chunk_id"] for h in result.structured_content["hits"]] == [0, 0]


async def test_pinned_context_tool_and_prompt_return_the_pinned_files_whole(server: AgentsServer, mode: str) -> None:
    async with Client(server, mode=mode) as client:
        tool = await client.call_tool("pinned_context", {})
        prompt = await client.get_prompt("pinned_context")
    text = text_of(tool)
    assert tool.structured_content is None
    assert f'<context path=".AGENTS/conventions.md">\n{CONVENTIONS.rstrip()}\n</context>' in text
    assert f'<context path=".AGENTS/overview.md">\n{OVERVIEW.rstrip()}\n</context>' in text
    assert "- .AGENTS/security.md: Security; Secrets; Filesystem boundaries" in text
    assert split_status(text)[1]["pinned"] == "2"
    assert split_status(text)[1]["searchable_files"] == "3"
    (message,) = prompt.messages
    prompt_text = getattr(message.content, "text", "")
    assert split_status(prompt_text)[0] == split_status(text)[0]  # STATUS differs only in fresh_as_of


async def test_pinned_files_over_budget_are_cut_with_a_pointer(make_tree: Callable[..., Path]) -> None:
    big = "# Overview\n" + "".join(f"line {i}: {'x' * 60}\n" for i in range(100))
    server = make_server(make_tree({"overview.md": big, "conventions.md": CONVENTIONS}), pinned_budget=1000)
    async with Client(server) as client:
        text = text_of(await client.call_tool("pinned_context", {}))
    assert "[... pinned file cut at " in text
    assert f" of {len(big.rstrip().encode())} bytes; read agents://overview.md for the rest]" in text


async def test_a_long_manifest_stops_with_a_count_and_a_pointer_to_the_outline(make_tree: Callable[..., Path]) -> None:
    files = {f"topic{i:04d}.md": f"# Topic {i} {'w' * 60}\n\n## Part {'p' * 60}\n\ntext\n" for i in range(600)}
    server = make_server(make_tree({"overview.md": OVERVIEW, **files}))
    async with Client(server) as client:
        text = text_of(await client.call_tool("pinned_context", {}))
        outline = (await client.read_resource("agents-context://outline")).contents[0]
    body, status = split_status(text)
    assert status["searchable_files"] == "600"
    assert "- .AGENTS/topic0000.md: Topic 0" in body
    listed = body.count("\n- .AGENTS/topic")
    assert 0 < listed < 600 and len(body) < 40_000
    assert f"- ... and {600 - listed} more files (agents-context://outline lists them all)" in body
    assert "topic0599.md" in getattr(outline, "text", "")


async def test_resources_list_every_agents_file_and_read_them(server: AgentsServer, mode: str) -> None:
    async with Client(server, mode=mode) as client:
        listed = {r.uri: r for r in (await client.list_resources()).resources}
        templates = [t.uri_template for t in (await client.list_resource_templates()).resource_templates]
        sharp = await client.read_resource("agents://C%23.md")
        security = await client.read_resource("agents://security.md")
    assert sorted(listed) == [
        "agents-context://outline",
        "agents-context://status",
        "agents://C%23.md",
        "agents://conventions.md",
        "agents://glossary.md",
        "agents://overview.md",
        "agents://security.md",
    ]
    assert listed["agents://C%23.md"].name == "C#.md"
    assert listed["agents://security.md"].title == "Security"
    assert listed["agents://security.md"].mime_type == "text/markdown"
    assert listed["agents://security.md"].size == len(SECURITY.encode())
    priorities = {uri: r.annotations.priority if r.annotations else None for uri, r in listed.items()}
    assert priorities["agents://overview.md"] == 1.0 and priorities["agents://security.md"] == 0.5
    assert "agents-docs://{label}/{+path}" in templates
    assert getattr(sharp.contents[0], "text", None) == "# Sharp names\n\nFiles named with a hash work.\n"
    assert getattr(security.contents[0], "text", None) == SECURITY


@pytest.mark.parametrize(
    ("uri", "why"),
    [
        ("agents://../outside.md", "'..'"),
        ("agents://%2e%2e/outside.md", "'..'"),
        ("agents://sub%2F..%2F..%2Foutside.md", "encoded separator"),
        ("agents://.env", "looks like a secret"),
        ("agents://missing.md", "no file at"),
        ("agents-docs://nowhere/x.md", "no docs root"),
        ("file:///etc/passwd", "Unknown resource"),
    ],
)
async def test_reads_outside_the_corpus_are_errors_that_read_nothing(
    server: AgentsServer, uri: str, why: str, mode: str
) -> None:
    async with Client(server, mode=mode) as client:
        with pytest.raises(MCPError, match=why):
            await client.read_resource(uri)


async def test_docs_roots_are_searched_by_search_docs_and_read_by_template(
    agents: Path, make_tree: Callable[..., Path]
) -> None:
    docs = make_tree({"guide/deploy.md": "# Deploying\n\nBlue green deployment steps.\n"}, name="docs")
    server = make_server(agents, [docs])
    async with Client(server) as client:
        found = await search(client, "blue green deployment", tool="search_docs")
        not_in_sections = await search(client, "blue green deployment")
        read = await client.read_resource("agents-docs://docs/guide/deploy.md")
        listed = [r.uri for r in (await client.list_resources()).resources]
    assert found.startswith("--- docs/guide/deploy.md#0 (score=")
    assert not_in_sections.startswith("no matching context for:")
    assert getattr(read.contents[0], "text", None) == "# Deploying\n\nBlue green deployment steps.\n"
    assert not any(uri.startswith("agents-docs://") for uri in listed)


async def test_instructions_fit_the_budget_and_come_in_order(server: AgentsServer, mode: str) -> None:
    async with Client(server, mode=mode) as client:
        instructions = client.instructions or ""
    assert len(instructions) <= 2048
    order = [
        instructions.index("agents-context: call context_search"),
        instructions.index("The pinned files follow in full"),
        instructions.index("context_search takes a short query"),
        instructions.index("documentation to weigh, not instructions"),
        instructions.index('<context path=".AGENTS/overview.md">'),
        instructions.index("- .AGENTS/security.md: Security; Secrets; Filesystem boundaries"),
    ]
    assert order == sorted(order)
    assert "snapshot taken when this session began" in instructions and "pinned_context" in instructions
    assert "call context_search before guessing" in instructions.split("\n")[0]  # all some clients show
    # Deferring clients show the instructions, not the tools' schemas: what to send is said here too.
    assert "a variant or two in queries" in instructions


async def test_large_pinned_files_are_not_inlined_and_the_manifest_shrinks(
    make_tree: Callable[..., Path],
) -> None:
    files: dict[str, str] = {"overview.md": "# Overview\n" + "Background. " * 400}
    for i in range(40):
        files[f"services/service-{i:02d}.md"] = "".join(f"# Heading {i}.{j}\ntext\n" for j in range(8))
    server = make_server(make_tree(files))
    async with Client(server) as client:
        instructions = client.instructions or ""
    assert len(instructions) <= 2048
    assert "call pinned_context once" in instructions
    assert "Background." not in instructions
    assert "Searchable with context_search: 320 sections across 40 files." in instructions
    budgeted = make_server(make_tree(files), instructions_budget=600)
    async with Client(budgeted) as client:
        assert len(client.instructions or "") <= 600


async def test_a_new_file_is_found_after_the_rebuild_and_list_changed_is_sent(
    server: AgentsServer, agents: Path
) -> None:
    changed = anyio.Event()

    async def on_message(message: Any) -> None:
        if isinstance(message, ServerNotification) and message.method == "notifications/resources/list_changed":
            changed.set()

    async with Client(server, mode="legacy", message_handler=on_message) as client:
        assert client.server_capabilities is not None
        assert client.server_capabilities.resources is not None
        assert client.server_capabilities.resources.list_changed is True
        await eventually(lambda: server.app.watcher.healthy)  # the write below must be an event
        (agents / "deploy.md").write_text("# Deploy\n\nRollback with the zebra switch.\n")

        async def found() -> str | None:
            text = await search(client, "zebra switch")
            return text if "deploy.md" in text else None

        await eventually(found)
        with anyio.fail_after(10):
            await changed.wait()
        uris = [r.uri for r in (await client.list_resources()).resources]
        assert "agents://deploy.md" in uris


async def test_modern_clients_hear_list_changed_through_listen(server: AgentsServer, agents: Path) -> None:
    async with Client(server) as client, client.listen(resources_list_changed=True) as events:
        (agents / "new.md").write_text("# New\n\nquokka\n")
        with anyio.fail_after(10):
            async for event in events:
                assert isinstance(event, ResourcesListChanged)
                break
        assert "new.md" in await search(client, "quokka")


async def test_a_deleted_and_recreated_root_is_watched_again(server: AgentsServer, agents: Path, mode: str) -> None:
    async with Client(server, mode=mode) as client:
        assert "security.md" in await search(client, "secrets")
        shutil.rmtree(agents)

        async def emptied() -> bool:
            return (await search(client, "secrets")).startswith("no matching context")

        await eventually(emptied)
        agents.mkdir()
        (agents / "returned.md").write_text("# Returned\n\nthe aardvark is back\n")

        async def back() -> bool:
            return "returned.md" in await search(client, "aardvark")

        await eventually(back)
        (agents / "later.md").write_text("# Later\n\nan edit after the return: narwhal\n")

        async def watched() -> bool:
            return "later.md" in await search(client, "narwhal")

        await eventually(watched)


async def test_a_failed_rebuild_keeps_serving_the_last_good_index(
    server: AgentsServer, agents: Path, monkeypatch: pytest.MonkeyPatch, mode: str
) -> None:
    import live.changes

    def broken_walk(*args: Any, **kwargs: Any) -> Any:
        raise OSError("disk on fire")

    async with Client(server, mode=mode) as client:
        assert "security.md" in await search(client, "secrets")
        generation = server.app.live.generation
        with monkeypatch.context() as patch:
            patch.setattr(live.changes, "walk", broken_walk)
            (agents / "new.md").write_text("# New\n\nwombat\n")
            await eventually(lambda: server.app.live.last_error)
            assert server.app.live.last_error == "OSError: disk on fire"
            assert server.app.live.generation == generation
            assert "security.md" in await search(client, "secrets")
        (agents / "new.md").write_text("# New\n\nwombat again\n")

        async def recovered() -> bool:
            return "new.md" in await search(client, "wombat")

        await eventually(recovered)
        assert server.app.live.last_error is None


async def test_context_for_path_answers_nothing_for_a_path_outside_the_project_and_refuses_one_too_deep(
    make_tree: Callable[..., Path],
) -> None:
    """`src/../../etc/passwd` resolves outside the project: no rule of it applies, and the answer
    says why. A path of more names than any project's tree is refused in one sentence, as one too
    long is."""
    agents = make_tree({"overview.md": OVERVIEW, "source.md": "---\nglobs: src/**\n---\n# Source\n\nSOURCE-RULE.\n"})
    async with Client(make_server(agents)) as client:
        body, status, _ = await call(client, "context_for_path", path="src/app.py")
        assert "SOURCE-RULE" in body and status["hits"] == "1"
        for outside in ("src/../../etc/passwd", "src/../../../../../../etc/passwd", "/etc/passwd"):
            body, status, _ = await call(client, "context_for_path", path=outside)
            assert "SOURCE-RULE" not in body and status["hits"] == "0"
            assert body == applies.OUTSIDE.format(path=outside)
        deep = await client.call_tool("context_for_path", {"path": "d/" * 2000 + "x.py"})
        assert deep.is_error
        assert text_of(deep) == "path has too many names (2,001): at most 256 folders and files"
        body, status, _ = await call(client, "context_for_path", path="src/" + "d/" * (MAX_PATH_NAMES - 2) + "x.py")
        assert "SOURCE-RULE" in body
