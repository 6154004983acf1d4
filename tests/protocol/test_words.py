"""What a model reads in its first hour, through a real client on real files: the instructions
and the tool descriptions name what is really served; `tools/list` stays small without losing what
clients validate; every invalid argument gets one plain sentence; a read past the end or outside
the folders says so in the caller's own words."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from mcp import Client
from mcp.types import Tool

from server import AgentsServer
from tests.helpers import MODES, SERVER, TOOLS, make_server, text_of
from tests.promises.test_inspector import INSPECTOR

pytestmark = pytest.mark.anyio

TOOLS_LIST_LIMIT = 16_000
"""`tools/list` as the wire carries it (compact JSON), in bytes: under 16 KB however it is counted."""

RULES = "# Rules\n\nAlways run the linters.\n\n## Naming\n\nsnake_case for modules.\n"
SECURITY = "# Security\n\n## Secrets\n\nNever print tokens.\n\n## Logging\n\nNo secrets in logs.\n"
DEPLOY = "# Deploy\n\n## Rollback\n\nRoll back with the switch.\n"


@pytest.fixture
def agents(make_tree: Callable[..., Path]) -> Path:
    """A project's folder as it is on disk: `.agents`, lower case, with its own pinned file."""
    return make_tree({"rules.md": RULES, "security.md": SECURITY, "deploy.md": DEPLOY}, name=".agents")


GUIDE = "# Guide\n\n" + "Long reference text. " * 200
API = {"a.md": "# A\n\nalpha\n", "b.md": "# B\n\nbeta\n", "c.md": "# C\n\ngamma\n"}
DOCS_NAMED = (
    f"handbook (1 file, {len(GUIDE) / 1024:.1f} KB) and api-reference (3 files, {sum(map(len, API.values()))} bytes)"
)
"""How the two docs roots below are named: by label, with their size."""


@pytest.fixture
def docs(make_tree: Callable[..., Path]) -> list[Path]:
    return [make_tree({"guide.md": GUIDE}, name="handbook"), make_tree(API, name="api-reference")]


@pytest.fixture
def server(agents: Path, docs: list[Path]) -> AgentsServer:
    return make_server(agents, docs, pins=["rules.md"])


async def listed(server: AgentsServer, mode: str = "auto") -> tuple[list[Tool], int]:
    """The tools, and the size of `tools/list` as the server sends it."""
    async with Client(server, mode=mode) as client:
        result = await client.list_tools()
    return result.tools, len(result.model_dump_json(by_alias=True, exclude_none=True).encode())


# --- what is really there --------------------------------------------------------------------


async def test_the_instructions_name_the_folder_as_on_disk_the_pinned_files_and_each_docs_root(
    server: AgentsServer,
) -> None:
    async with Client(server) as client:
        instructions = client.instructions or ""
    assert len(instructions) <= 2048
    assert instructions.startswith("agents-context: call context_search before guessing about a project rule")
    assert "It serves this project's .agents/ folder, what the team wants" in instructions
    assert ".AGENTS" not in instructions
    assert "(overview, conventions" not in instructions
    assert '<context path=".agents/rules.md">' in instructions  # the pin this server has, inline
    assert f"call search_docs: it also searches {DOCS_NAMED}." in instructions


async def test_a_pinned_file_too_large_to_inline_is_named_as_it_is(make_tree: Callable[..., Path]) -> None:
    agents = make_tree({"house-rules.md": "# House rules\n\n" + "Rule. " * 600, "a.md": "# A\n\nx\n"}, name=".agents")
    async with Client(make_server(agents, pins=["house-rules.md"])) as client:
        instructions = client.instructions or ""
    assert "call pinned_context once: it returns the pinned files (.agents/house-rules.md)" in instructions
    assert "search_docs" not in instructions  # no docs roots: nothing to send it to


async def test_the_tool_descriptions_name_what_is_served(server: AgentsServer) -> None:
    tools = {t.name: t.description or "" for t in (await listed(server))[0]}
    assert all(len(d) < 2048 for d in tools.values())
    search = tools["context_search"]
    assert search.startswith("Search this project's .agents/ folder")
    assert 'pinned="true": from a pinned file' in search
    assert "not searched here" not in search
    assert f"and the documentation roots {DOCS_NAMED} in passages" in tools["search_docs"]
    assert "(Claude Code, Cursor, Windsurf, Copilot, Kiro, Cline, applies_to)" in tools["context_for_path"]
    assert "Cursor's globs/applies_to" not in tools["context_for_path"]
    assert "(.agents/security.md)" in tools["read_context"]
    assert tools["pinned_context"].startswith("Return the pinned files (.agents/rules.md:")
    assert not any(".AGENTS" in d or "overview, conventions" in d for d in tools.values())


async def test_without_docs_roots_search_docs_says_so(agents: Path) -> None:
    tools = {t.name: t.description or "" for t in (await listed(make_server(agents)))[0]}
    assert "no documentation roots (--docs): prefer context_search" in tools["search_docs"]


# --- tools/list --------------------------------------------------------------------------------


@pytest.mark.parametrize("mode", MODES)
async def test_tools_list_is_under_16_kb(server: AgentsServer, agents: Path, mode: str) -> None:
    tools, size = await listed(server, mode)
    assert [t.name for t in tools] == TOOLS
    assert size < TOOLS_LIST_LIMIT, size
    _, plain = await listed(make_server(agents), mode)
    assert plain < TOOLS_LIST_LIMIT, plain


LONG = "a-rather-long-folder-name-for-one-package-of-this-monorepo-" + "x" * 40
"""A folder name near the longest a project has (names in descriptions are listed within a budget)."""


def configuration(tmp_path: Path, roots: int, docs: int, pins: int, conventional: bool) -> AgentsServer:
    """A server over `roots` .AGENTS folders with long names, each with `pins` pinned files of long
    names, `docs` docs roots, and (with `conventional`) a project's agent files of every kind."""
    from cli.settings import Settings, open_index
    from server import create_server
    from tests.conftest import write_tree

    pinned = [f"{LONG}-{j}.md" for j in range(pins)]
    agents = tuple(
        write_tree(tmp_path / f"{LONG}-{i}" / ".AGENTS", {"overview.md": RULES, **dict.fromkeys(pinned, SECURITY)})
        for i in range(roots)
    )
    documentation = tuple(write_tree(tmp_path / f"{LONG}-docs-{i}", {"a.md": GUIDE}) for i in range(docs))
    project = None
    if conventional:
        rules = {f".cursor/rules/{LONG}-{j}.mdc": "---\nalwaysApply: true\n---\n# R\n" for j in range(pins)}
        files = {"AGENTS.md": RULES, "CLAUDE.md": "@AGENTS.md\n", "GEMINI.md": RULES, ".claude/rules/a.md": RULES}
        project = write_tree(tmp_path / LONG, {**files, **rules})
    settings = Settings(
        agents=agents, docs=documentation, conventional=project, pins=tuple(pinned) or None, no_cache=True
    )
    return create_server(open_index(settings), settings)


CONFIGURATIONS = {
    "one small folder": (1, 0, 0, False),
    "two package folders, pins and docs": (2, 2, 3, True),
    "twelve folders, eight docs roots, eight long pins each": (12, 8, 8, True),
    "a project's agent files only": (0, 0, 8, True),
}


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("client", ["mcp", "claude-code", "gemini-cli-mcp-client"])
@pytest.mark.parametrize("shape", list(CONFIGURATIONS))
async def test_tools_list_is_under_16_kb_in_every_configuration(
    tmp_path: Path, shape: str, client: str, mode: str
) -> None:
    """Whatever the project holds, however many folders, pins and docs roots with whatever names,
    and whichever client asks: every name beyond a small budget is counted, not listed."""
    from mcp.types import Implementation

    server = configuration(tmp_path, *CONFIGURATIONS[shape])
    async with Client(server, mode=mode, client_info=Implementation(name=client, version="1")) as session:
        result = await session.list_tools()
    size = len(result.model_dump_json(by_alias=True, exclude_none=True).encode())
    assert [t.name for t in result.tools] == TOOLS
    assert size < TOOLS_LIST_LIMIT, (shape, client, size)
    for tool in result.tools:
        assert len(tool.description or "") <= 2048, tool.name  # Claude Code cuts longer ones


async def test_input_schemas_keep_every_constraint_and_description(server: AgentsServer) -> None:
    schemas = {t.name: t.input_schema for t in (await listed(server))[0]}
    search = schemas["context_search"]
    assert search["required"] == ["query"] and search["type"] == "object"
    k = search["properties"]["k"]
    assert (k["type"], k["default"], k["minimum"], k["maximum"]) == ("integer", 3, 1, 20)
    assert search["properties"]["detail"]["enum"] == ["paths", "snippets", "sections"]
    assert search["properties"]["generation"]["anyOf"] == [{"type": "integer", "minimum": 0}, {"type": "null"}]
    assert "default" not in search["properties"]["generation"]  # a null default says nothing
    assert search["properties"]["queries"] == {
        "default": [],
        "description": "A variant or two: other words, the option's name.",
        "items": {"type": "string"},
        "maxItems": 4,
        "type": "array",
    }
    for schema in schemas.values():
        for name, prop in schema["properties"].items():
            assert prop.get("description"), name
            assert "title" not in prop


async def test_structured_content_validates_against_the_listed_output_schema(server: AgentsServer) -> None:
    calls: list[tuple[str, dict[str, Any]]] = [
        ("context_search", {"query": "secrets"}),
        ("context_search", {"query": "zzqx nothing matches"}),
        ("search_docs", {"query": "reference text"}),
        ("context_for_path", {"path": "src/app.py"}),
        ("context_status", {}),
    ]
    async with Client(server) as client:
        schemas = {t.name: t.output_schema for t in (await client.list_tools()).tools}
        for name, arguments in calls:
            result = await client.call_tool(name, arguments)
            assert not result.is_error, text_of(result)
            schema = schemas[name]
            assert schema is not None
            jsonschema.validate(result.structured_content, schema)


async def test_the_listed_output_schema_still_refuses_what_the_model_refuses(server: AgentsServer) -> None:
    schema = next(t.output_schema for t in (await listed(server))[0] if t.name == "context_search")
    assert schema is not None
    hit = {
        "rank": 1,
        "path": ".agents/a.md",
        "score": 1.0,
        "start_line": 1,
        "end_line": 2,
        "text": "x",
        "uri": "agents://a.md",
        "section_uri": "agents://a.md#a",
        "citation": ".agents/a.md:1-2",
    }
    good = {"method": "bm25", "hits": [hit], "last_update": None, "next_offset": None}
    jsonschema.validate(good, schema)
    bad = [
        {"hits": []},  # method is required
        {"method": 1, "hits": []},
        {"method": "bm25", "hits": [{**hit, "rank": "1"}]},
        {"method": "bm25", "hits": [{k: v for k, v in hit.items() if k != "path"}]},
        {"method": "bm25", "hits": [], "next_offset": "2"},
        {"method": "bm25", "hits": [], "last_update": {"at": "now"}},  # added, changed, removed are required
        {"method": "bm25", "hits": [{**hit, "matched_terms": [{"term": "x"}]}]},
    ]
    for document in bad:
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate(document, schema)


# --- one sentence for every invalid argument -----------------------------------------------------

BASE: dict[str, dict[str, Any]] = {
    "context_search": {"query": "secrets"},
    "search_docs": {"query": "secrets"},
    "context_for_path": {"path": "src/app.py"},
    "read_context": {"path": "security.md"},
    "pinned_context": {},
    "context_status": {},
}
"""A valid call of each tool, to which one bad argument is added."""

WRONG: dict[str, list[object]] = {
    "string": [5, 2.5, True, ["secrets"], {"q": "secrets"}],
    "integer": ["seven", 2.5, True, "", [7], {"k": 7}, "1e1"],
    "enum": ["bogus", "", 5, True, ["paths"], {"detail": "paths"}],
    "boolean": [5, 2.5, "yes", "", [True], {"explain": True}],
    "strings": [5, 2.5, True, [1], [["a"]], {"queries": ["a"]}, '["a", 1]', ["a", "b", "c", "d", "e"]],
}
"""Values of the wrong type for each kind of argument (null joins them where it is refused)."""


def bad_calls() -> list[tuple[str, str, object]]:
    """Every argument of every tool with each value it refuses (from the schemas the server
    declares, so a new argument joins this test)."""
    from protocol import descriptions as d  # the parameter types the input schemas are built from

    kinds = {
        "query": ("string", False),
        "path": ("string", False),
        "k": ("integer", False),
        "max_tokens": ("integer", False),
        "offset": ("integer", False),
        "generation": ("integer", True),
        "start_line": ("integer", True),
        "end_line": ("integer", True),
        "detail": ("enum", False),
        "path_prefix": ("string", True),
        "root": ("string", True),
        "section": ("string", True),
        "explain": ("boolean", False),
        "queries": ("strings", False),
    }
    assert d.Detail is not None
    search = ["query", "k", "max_tokens", "detail", "offset", "generation", "path_prefix", "root", "explain", "queries"]
    arguments = {
        "context_search": search,
        "search_docs": search,
        "context_for_path": ["path", "max_tokens", "detail"],
        "read_context": ["path", "section", "start_line", "end_line", "max_tokens"],
    }
    calls: list[tuple[str, str, object]] = []
    for tool, names in arguments.items():
        for name in names:
            kind, nullable = kinds[name]
            values = WRONG[kind] + ([] if nullable else [None])
            calls += [(tool, name, value) for value in values]
    return calls


async def test_the_bad_calls_cover_every_argument_of_every_tool(server: AgentsServer) -> None:
    tools, _ = await listed(server)
    declared = {(t.name, name) for t in tools for name in t.input_schema["properties"]}
    assert {(tool, name) for tool, name, _ in bad_calls()} == declared


def assert_one_plain_sentence(text: str, name: str) -> None:
    assert "\n" not in text, text
    assert name in text, text
    assert "pydantic" not in text.lower() and "http" not in text.lower(), text
    assert "validation error" not in text and "Error executing tool" not in text, text


@pytest.mark.parametrize(("tool", "name", "value"), bad_calls())
async def test_a_value_of_the_wrong_type_gets_one_sentence_naming_the_argument_and_the_value(
    server: AgentsServer, tool: str, name: str, value: object
) -> None:
    async with Client(server) as client:
        result = await client.call_tool(tool, {**BASE[tool], name: value})
    text = text_of(result)
    assert result.is_error, text
    assert_one_plain_sentence(text, name)
    assert text.startswith(f"{name} must be "), text
    assert text.endswith(f", not {json.dumps(value)}"), text


@pytest.mark.parametrize(("tool", "name"), [(t, n) for t, args in BASE.items() for n in args])
async def test_a_missing_required_argument_gets_one_sentence_naming_it(
    server: AgentsServer, tool: str, name: str
) -> None:
    async with Client(server) as client:
        result = await client.call_tool(tool, {k: v for k, v in BASE[tool].items() if k != name})
    text = text_of(result)
    assert result.is_error and text == f"{name} is required: pass a non-empty {name!r} string"
    assert_one_plain_sentence(text, name)


@pytest.mark.parametrize("detail", ["PATHS", "Paths", " snippets ", "SECTIONS"])
async def test_an_enum_takes_any_case(server: AgentsServer, detail: str) -> None:
    async with Client(server) as client:
        given = await client.call_tool("context_search", {"query": "secrets", "detail": detail})
        canonical = await client.call_tool("context_search", {"query": "secrets", "detail": detail.strip().lower()})
    assert not given.is_error, text_of(given)
    assert given.structured_content is not None and canonical.structured_content is not None
    assert [h["text"] for h in given.structured_content["hits"]] == [
        h["text"] for h in canonical.structured_content["hits"]
    ]


@pytest.mark.parametrize("value", ['["a"]', '{"a": 1}', "[]"])
async def test_text_the_sdk_reads_as_json_still_gets_one_sentence(server: AgentsServer, value: str) -> None:
    """The SDK reads a string argument of a parameter that is not a plain string as JSON when it
    is a list or an object; what it then refuses is still one sentence."""
    async with Client(server) as client:
        result = await client.call_tool("read_context", {"path": "security.md", "section": value})
    text = text_of(result)
    assert result.is_error
    assert_one_plain_sentence(text, "section")
    assert text == f"section cannot be {json.dumps(value)}: the server reads that text as JSON {value}; pass other text"


# --- reads past the end and outside the folders ----------------------------------------------------


async def test_a_read_past_the_end_names_the_files_line_count(server: AgentsServer) -> None:
    lines = len(SECURITY.splitlines())
    async with Client(server) as client:
        result = await client.call_tool("read_context", {"path": "security.md", "start_line": 9999})
        fragment = await client.call_tool("read_context", {"path": "security.md#L9999"})
    assert (
        result.is_error and text_of(result) == f".agents/security.md has {lines} lines; start_line 9999 is past its end"
    )
    assert text_of(fragment) == f".agents/security.md has {lines} lines; #L9999 starts past its end"
    assert "None" not in text_of(result)


@pytest.mark.parametrize("path", ["/etc/passwd", "C:\\Windows\\win.ini", "../../etc/passwd", "/tmp/../etc/passwd"])
async def test_a_path_outside_the_folders_is_refused_in_the_callers_words(
    server: AgentsServer, agents: Path, path: str
) -> None:
    async with Client(server) as client:
        result = await client.call_tool("read_context", {"path": path})
    text = text_of(result)
    assert result.is_error
    assert text.startswith(repr(path) + " "), text
    assert "agents://" + path.lstrip("/") not in text and "agents:///" not in text
    assert str(agents.resolve()) in text  # the folders it does read
    assert "a display path (.agents/security.md)" in text and "a URI (agents://security.md)" in text
    assert "\n" not in text


async def test_an_absolute_path_inside_a_folder_is_read(server: AgentsServer, agents: Path) -> None:
    async with Client(server) as client:
        absolute = await client.call_tool("read_context", {"path": str(agents.resolve() / "security.md")})
        display = await client.call_tool("read_context", {"path": ".agents/security.md"})
    assert not absolute.is_error, text_of(absolute)
    assert text_of(absolute).split("\n\n[agents-context")[0] == text_of(display).split("\n\n[agents-context")[0]


def type_lists(node: object) -> list[object]:
    """Every `type` written as a list, anywhere in `node`."""
    if isinstance(node, dict):
        found = [node["type"]] if isinstance(node.get("type"), list) else []
        return found + [t for value in node.values() for t in type_lists(value)]
    if isinstance(node, list):
        return [t for value in node for t in type_lists(value)]
    return []


async def test_the_listed_schemas_are_portable_and_carry_no_annotation_a_validator_ignores(
    server: AgentsServer,
) -> None:
    tools, _ = await listed(server)
    for tool in tools:
        assert type_lists(tool.input_schema) == [] and type_lists(tool.output_schema) == []
        if tool.output_schema is not None:
            text = json.dumps(tool.output_schema)
            assert '"title"' not in text and '"description"' not in text, tool.name


def test_the_inspector_finds_nothing_to_flag_in_tools_list(agents: Path) -> None:
    """The MCP Inspector's --strict checks each tool schema's portability (a `type` list, for one)."""
    if not INSPECTOR.exists():
        pytest.skip(
            "the pinned MCP Inspector is not installed: .ci/run and tests/promises/test_inspector.py install it"
        )
    command = [str(INSPECTOR), "--cli", sys.executable, SERVER, "--root", str(agents), "--no-cache"]
    done = subprocess.run(
        [*command, "--method", "tools/list", "--strict"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env={**os.environ, "npm_config_loglevel": "error"},
    )
    assert done.returncode == 0, done.stderr
    assert [t["name"] for t in json.loads(done.stdout)["tools"]] == TOOLS
    assert "Warning" not in done.stderr, done.stderr


@pytest.mark.parametrize("path", ["", " ", "a//b.md", "security.md/", "./../x.md", "/etc/passwd", "..\\x.md"])
async def test_a_path_that_names_nothing_is_answered_about_the_path_as_given(server: AgentsServer, path: str) -> None:
    async with Client(server) as client:
        result = await client.call_tool("read_context", {"path": path})
    text = text_of(result)
    assert result.is_error and "\n" not in text
    assert "'agents://" not in text, text  # never about a URI the caller did not write
    assert "a path inside .agents/ (security.md)" in text
    assert text.startswith("path is required: pass ") if not path.strip() else text.startswith(repr(path)), text


def test_a_docs_root_still_being_indexed_is_named_without_a_size(agents: Path, docs: list[Path]) -> None:
    """At start-up a `--docs` root without a cache entry is indexed in the background: the
    instructions and descriptions, fixed before the handshake, say so instead of a size."""
    from corpus.roots import make_roots
    from live.index import LiveIndex
    from protocol.descriptions import describe
    from retrieval.render import briefing

    corpus = LiveIndex(make_roots([agents], docs)).corpus
    instructions = briefing.instructions(corpus, has_docs=True, indexing={"handbook"})
    indexing = "handbook (indexing in the background; context_status shows how far)"
    assert f"it also searches {indexing} and api-reference (3 files, " in instructions
    assert f"the documentation roots {indexing} and api-reference" in describe(corpus, {"handbook"}).search_docs
    assert "being indexed" not in instructions
