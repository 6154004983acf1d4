"""Hostile input: every parameter that names a file, files that are not normal, secrets, and tool
arguments of every shape. Nothing outside the roots leaks; nothing crashes. The suite counts the
cases it tried and pytest prints the tally at the end (see conftest.py)."""

from __future__ import annotations

import os
import shutil
import socket
import sys
import tempfile
import unicodedata
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from mcp import Client, MCPError

from corpus.roots import make_roots
from retrieval.live import LiveIndex
from server import AgentsServer
from tests.helpers import make_server, split_status, text_of
from tests.tally import tried

pytestmark = pytest.mark.anyio
OUTSIDE = "TOP-SECRET-OUTSIDE-THE-ROOT"
POSIX = os.name == "posix"


@pytest.fixture
def hostile(tmp_path: Path) -> tuple[Path, AgentsServer]:
    project = tmp_path / "project"
    agents = project / ".AGENTS"
    agents.mkdir(parents=True)
    (tmp_path / "outside.md").write_text(f"# Outside\n\n{OUTSIDE}\n")
    (project / "sibling.md").write_text(f"# Sibling\n\n{OUTSIDE}\n")
    (agents / "rules.md").write_text("# Rules\n\n## Secrets\n\nNever print tokens.\n")
    (agents / ".env").write_text(f"TOKEN={OUTSIDE}\n")
    (agents / "sub").mkdir()
    (agents / "sub" / "deep.md").write_text("# Deep\n\ninside\n")
    return agents, make_server(agents)


TRAVERSALS = [
    "../outside.md",
    "../../outside.md",
    "..\\outside.md",
    "..\\..\\outside.md",
    "sub/../../outside.md",
    "sub/../../../outside.md",
    "%2e%2e/outside.md",
    "%2E%2E/%2E%2E/outside.md",
    "%252e%252e/outside.md",
    "..%2foutside.md",
    "..%2Foutside.md",
    "..%5coutside.md",
    ".%2e/outside.md",
    "%2e./outside.md",
    "．．/outside.md",  # fullwidth full stops
    "．．／outside.md",  # fullwidth solidus
    "‥/outside.md",  # two-dot leader
    "..∕outside.md",  # division slash
    "..／outside.md",
    "../outside.md\x00.md",
    "rules.md\x00../../outside.md",
    "/etc/passwd",
    "//etc/passwd",
    "C:\\Windows\\win.ini",
    "C:/Windows/win.ini",
    "\\\\server\\share\\outside.md",
    "file:///etc/passwd",
    "agents://../outside.md",
    "agents://%2e%2e/outside.md",
    "agents:///etc/passwd",
    "agents://sub/../../outside.md",
    "agents://..%2Foutside.md",
    "agents-docs://docs/../outside.md",
    "agents-context://../outside.md",
    "../project/sibling.md",
    ".AGENTS/../sibling.md",
    "~/outside.md",
    "$HOME/outside.md",
]


@pytest.mark.parametrize("name", TRAVERSALS)
async def test_no_spelling_of_a_path_leaves_the_root(hostile: tuple[Path, AgentsServer], name: str) -> None:
    _, server = hostile
    async with Client(server) as client:
        read = await client.call_tool("read_context", {"path": name})
        assert OUTSIDE not in text_of(read)
        tried("path spelling (read_context)")
        uri = name if "://" in name else f"agents://{name}"
        try:
            got = await client.read_resource(uri)
            assert all(OUTSIDE not in getattr(c, "text", "") for c in got.contents)
        except MCPError:
            pass
        tried("path spelling (resources/read)")
        applies = await client.call_tool("context_for_path", {"path": name})
        assert OUTSIDE not in text_of(applies)
        tried("path spelling (context_for_path)")


@pytest.mark.skipif(not POSIX, reason="symlinks need privileges on Windows")
async def test_symlinks_out_and_loops_are_refused(hostile: tuple[Path, AgentsServer], tmp_path: Path) -> None:
    agents, _ = hostile
    (agents / "out.md").symlink_to(tmp_path / "outside.md")
    (agents / "outdir").symlink_to(tmp_path)
    (agents / "loop").symlink_to(agents / "loop")
    (agents / "a").symlink_to(agents / "b")
    (agents / "b").symlink_to(agents / "a")
    server = make_server(agents)
    async with Client(server) as client:
        for name in ("out.md", "outdir/outside.md", "loop", "a", "loop/x.md"):
            result = await client.call_tool("read_context", {"path": name})
            assert result.is_error and OUTSIDE not in text_of(result)
            tried("symlink")
        found = await client.call_tool("search_docs", {"query": OUTSIDE.lower().replace("-", " ")})
        assert OUTSIDE not in text_of(found)
        report = (await client.call_tool("context_status", {})).structured_content
    assert report is not None
    reasons = {s["path"]: s["reason"] for s in report["roots"][0]["skipped"]}
    assert reasons[".AGENTS/out.md"] == "symlink target leaves the root"
    assert reasons[".AGENTS/outdir"] == "symlink target leaves the root"
    assert reasons[".AGENTS/loop"].startswith("unresolvable path")


@pytest.mark.skipif(not POSIX, reason="symlinks need privileges on Windows")
async def test_a_root_replaced_by_a_symlink_is_reported_gone(tmp_path: Path) -> None:
    agents = tmp_path / ".AGENTS"
    agents.mkdir()
    (agents / "rules.md").write_text("# Rules\n\nthe original\n")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "rules.md").write_text(f"# Rules\n\n{OUTSIDE}\n")
    server = make_server(agents)
    async with Client(server) as client:
        shutil.rmtree(agents)
        agents.symlink_to(elsewhere)  # same path, now a link elsewhere: never followed
        text = text_of(await client.call_tool("search_docs", {"query": "rules"}))
        report = (await client.call_tool("context_status", {})).structured_content
        read = await client.call_tool("read_context", {"path": "rules.md"})
    assert OUTSIDE not in text and OUTSIDE not in text_of(read)
    assert report is not None and report["roots"][0]["present"] is False
    tried("root replaced by a symlink")


# --- files that are not normal ----------------------------------------------------------------------


@pytest.mark.skipif(not POSIX, reason="FIFOs and unix sockets are POSIX")
async def test_fifos_sockets_and_devices_never_block(tmp_path: Path) -> None:
    agents = Path(tempfile.mkdtemp(prefix="ac")) / ".AGENTS"
    agents.mkdir()
    (agents / "ok.md").write_text("# Ok\n\nfine\n")
    os.mkfifo(agents / "pipe.md")
    sock = socket.socket(socket.AF_UNIX)
    sock.bind(str(agents / "sock.md"))
    (agents / "null.md").symlink_to("/dev/null") if Path("/dev/null").exists() else None
    try:
        server = make_server(agents)
        async with Client(server) as client:
            for name in ("pipe.md", "sock.md"):
                result = await client.call_tool("read_context", {"path": name})
                assert result.is_error and "not a regular file" in text_of(result)
                tried("special file")
            with pytest.raises(MCPError):
                await client.read_resource("agents://pipe.md")
            assert "ok.md" in text_of(await client.call_tool("context_search", {"query": "fine"}))
    finally:
        sock.close()
        shutil.rmtree(agents.parent)


async def test_a_10_mb_single_line_is_skipped_or_served_within_budget(make_tree: Callable[..., Path]) -> None:
    line = "word " * 2_000_000  # 10 MB, one line
    agents = make_tree({"huge.md": line, "ok.md": "# Ok\n\nword\n"})
    default = make_server(agents)
    async with Client(default) as client:
        report = (await client.call_tool("context_status", {})).structured_content
        assert report is not None
        assert any(s["reason"].startswith("too large") for s in report["roots"][0]["skipped"])
    raised = make_server(agents, max_file_bytes=20_000_000)
    raised.live.__init__(raised.live.roots, max_bytes=20_000_000)  # type: ignore[misc]
    async with Client(raised) as client:
        for tool in ("context_search", "search_docs"):
            text = text_of(await client.call_tool(tool, {"query": "word", "max_tokens": 1000}))
            assert len(text) <= 4000
            tried("10 MB single line")
        read = text_of(await client.call_tool("read_context", {"path": "huge.md", "max_tokens": 500}))
        assert len(read) <= 2000


async def test_deep_nesting_and_a_crowded_folder(tmp_path: Path) -> None:
    agents = tmp_path / ".AGENTS"
    deep = agents
    for i in range(200):
        deep = deep / f"d{i}"
    deep.mkdir(parents=True)
    (deep / "bottom.md").write_text("# Bottom\n\nthe abyss\n")
    crowd = agents / "crowd"
    crowd.mkdir()
    for i in range(10_000):
        (crowd / f"f{i:05d}.md").write_text(f"# File {i}\n\nnumber n{i}\n")
    live = LiveIndex(make_roots([agents]), settle_s=0)
    assert len(live.corpus.files) == 10_001
    server = make_server(agents)
    async with Client(server) as client:
        assert "bottom.md" in text_of(await client.call_tool("context_search", {"query": "abyss"}))
        assert "f09999.md" in text_of(await client.call_tool("context_search", {"query": "n9999"}))
    tried("deep nesting", 200)
    tried("files in one folder", 10_000)


@pytest.mark.skipif(sys.platform != "linux", reason="Linux allows these names")
async def test_odd_names_are_served_exactly_as_named(tmp_path: Path) -> None:
    agents = tmp_path / ".AGENTS"
    agents.mkdir()
    nfd = unicodedata.normalize("NFD", "café.md")
    names = {
        "line\nbreak.md": "newline",
        "CON": "reserved con",
        "NUL.md": "reserved nul",
        "aux.txt": "reserved aux",
        nfd: "decomposed accent",
        "Security.md": "upper case",
        "security.md": "lower case",
        " leading space.md": "spaces",
        "tab\tname.md": "tab",
    }
    for name, words in names.items():
        (agents / name).write_text(f"# {words}\n\n{words} marker\n")
    server = make_server(agents)
    async with Client(server) as client:
        listed = {r.name: r.uri for r in (await client.list_resources()).resources if r.uri.startswith("agents://")}
        for name, words in names.items():
            assert name in listed, name  # never normalized, never merged
            read = await client.read_resource(listed[name])
            assert words in getattr(read.contents[0], "text", "")
            tried("odd file name")
        nfc = unicodedata.normalize("NFC", "café.md")
        with pytest.raises(MCPError):  # the NFC spelling names no file: paths are never normalized
            await client.read_resource("agents://" + nfc)
        upper = text_of(await client.call_tool("context_search", {"query": "upper case", "k": 1}))
        assert ".AGENTS/Security.md" in upper


async def test_files_that_vanish_or_change_mid_read_are_not_fatal(make_tree: Callable[..., Path]) -> None:
    agents = make_tree({f"f{i}.md": f"# F{i}\n\nchurn {i}\n" for i in range(50)})
    live = LiveIndex(make_roots([agents]), settle_s=0)
    (r,) = live.roots
    for i in range(50):
        path = agents / f"f{i}.md"
        if i % 2:
            path.unlink()
        else:
            path.write_text(f"# F{i}\n\nchanged {i}\n" * (i + 1))
        live.refresh(r, [path])
        tried("vanish or change")
    assert len(live.corpus.files) == 25 and live.last_error is None


# --- secrets --------------------------------------------------------------------------------------


async def test_secrets_are_never_indexed_listed_linked_pinned_or_served(
    make_tree: Callable[..., Path],
) -> None:
    agents = make_tree(
        {
            ".env": f"TOKEN={OUTSIDE}\n",
            "id_rsa": f"-----BEGIN KEY-----{OUTSIDE}\n",
            "credentials-prod.json": f'{{"key": "{OUTSIDE}"}}\n',
            "rules.md": "# Rules\n\nSee [the env](.env) and [the key](id_rsa).\n",
        }
    )
    server = make_server(agents, pins=[".env", "rules.md"])
    async with Client(server) as client:
        uris = [r.uri for r in (await client.list_resources()).resources]
        pinned = text_of(await client.call_tool("pinned_context", {}))
        search = await client.call_tool("search_docs", {"query": "token key rules", "k": 10})
        outline = await client.read_resource("agents-context://outline")
        for name in (".env", "id_rsa", "credentials-prod.json"):
            assert f"agents://{name}" not in uris
            read = await client.call_tool("read_context", {"path": name})
            assert read.is_error and "looks like a secret" in text_of(read)
            with pytest.raises(MCPError):
                await client.read_resource(f"agents://{name}")
            tried("secret")
    everything = pinned + text_of(search) + getattr(outline.contents[0], "text", "")
    assert OUTSIDE not in everything
    assert search.structured_content is not None
    links = [link["uri"] for hit in search.structured_content["hits"] for link in hit["links"]]
    assert links == []


# --- tool arguments -------------------------------------------------------------------------------


ARGUMENTS: list[tuple[str, dict[str, Any], str]] = [
    ("context_search", {"query": "x" * 100_000}, "ok"),
    ("context_search", {"query": "\x00\x01\x02\x1b[31m\u202e\ufeff"}, "ok"),
    ("context_search", {"query": "🔥 secrets 🔥"}, "ok"),
    ("context_search", {"query": ""}, "error"),
    ("context_search", {}, "error"),
    ("context_search", {"query": None}, "error"),
    ("context_search", {"query": 7}, "error"),
    ("context_search", {"query": ["secrets"]}, "error"),
    ("context_search", {"query": "secrets", "k": -5}, "ok"),
    ("context_search", {"query": "secrets", "k": 10**12}, "ok"),
    ("context_search", {"query": "secrets", "k": "7"}, "ok"),  # a number as a string: coerced
    ("context_search", {"query": "secrets", "k": True}, "error"),  # a boolean: refused
    ("context_search", {"query": "secrets", "k": 2.5}, "error"),
    ("context_search", {"query": "secrets", "k": None}, "error"),
    ("context_search", {"query": "secrets", "max_tokens": -1}, "ok"),
    ("context_search", {"query": "secrets", "max_tokens": 10**9}, "ok"),
    ("context_search", {"query": "secrets", "offset": -1}, "error"),
    ("context_search", {"query": "secrets", "offset": 10**9}, "ok"),
    ("context_search", {"query": "secrets", "detail": "everything"}, "error"),
    ("context_search", {"query": "secrets", "path_prefix": "../"}, "ok"),
    ("context_search", {"query": "secrets", "bogus": 1}, "error"),
    ("search_docs", {"query": "secrets", "root": "../.."}, "error"),
    ("search_docs", {"query": "secrets", "k": "many"}, "error"),
    ("read_context", {"path": "rules.md", "start_line": 0}, "error"),
    ("read_context", {"path": "rules.md", "start_line": 10**9}, "error"),
    ("read_context", {"path": "rules.md", "section": "\x00"}, "error"),
    ("read_context", {"path": ""}, "error"),
    ("context_for_path", {"path": ""}, "error"),
    ("context_for_path", {"path": "\x00"}, "ok"),
    ("pinned_context", {"extra": 1}, "error"),
    ("context_status", {"verbose": True}, "error"),
    ("no_such_tool", {}, "error"),
]


@pytest.mark.parametrize(("tool", "args", "expected"), ARGUMENTS)
async def test_any_arguments_give_an_answer_or_a_clear_error(
    hostile: tuple[Path, AgentsServer], tool: str, args: dict[str, Any], expected: str
) -> None:
    _, server = hostile
    async with Client(server) as client:
        result = await client.call_tool(tool, args)
    text = text_of(result)
    assert result.is_error is (expected == "error"), text
    assert text.strip()
    if expected == "ok":
        assert split_status(text)[1]["method"]
    tried("tool arguments")


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    query=st.text(max_size=300),
    k=st.integers(-(10**6), 10**6),
    detail=st.sampled_from(["paths", "snippets", "sections"]),
)
async def test_any_query_in_any_unicode_category_is_answered(
    hostile: tuple[Path, AgentsServer], query: str, k: int, detail: str
) -> None:
    _, server = hostile
    async with Client(server) as client:
        for tool in ("context_search", "search_docs"):
            result = await client.call_tool(tool, {"query": query, "k": k, "detail": detail})
            text = text_of(result)
            if query.strip():
                assert not result.is_error, text
                assert OUTSIDE not in text
            else:
                assert result.is_error
            tried("random query")
