"""Hostile names: bytes that are not UTF-8, backslashes, folders linked inside a root, paths too
long to name anything, link loops. Each one answers with the file's one identity or one plain
sentence, and none takes the server down."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import anyio
import pytest
from mcp import Client, MCPError, StdioServerParameters

from tests.helpers import SERVER, eventually, make_server, text_of
from tests.tally import tried

pytestmark = pytest.mark.anyio
POSIX = os.name == "posix"
LINUX = sys.platform == "linux"  # macOS (APFS) and Windows refuse names that are not UTF-8


def _stdio(project: bytes) -> StdioServerParameters:
    """The server as a client starts it, in the project folder, over real stdio."""
    return StdioServerParameters(command=sys.executable, args=[SERVER, "--no-cache"], cwd=os.fsdecode(project))


@pytest.mark.skipif(not LINUX, reason="only Linux keeps file names that are not UTF-8")
async def test_names_that_are_not_utf8_are_shown_escaped_and_never_stop_the_server(tmp_path: Path) -> None:
    """A project folder `pro\\xffj` and a link `notes.md -> odd\\xff/.env`: read_context and
    context_status answer, with each odd byte written `\\xff`; the server keeps serving, and an
    edit made afterwards is found (the watcher polls by walking, as the native one needs UTF-8)."""
    project = os.fsencode(tmp_path) + b"/pro\xffj"
    agents = project + b"/.AGENTS"
    Path(os.fsdecode(agents + b"/odd\xff")).mkdir(parents=True)
    Path(os.fsdecode(agents + b"/odd\xff/.env")).write_text("TOKEN=do-not-serve\n")
    Path(os.fsdecode(agents + b"/rules.md")).write_text("# Rules\n\ndeploy on fridays never\n")
    Path(os.fsdecode(agents + b"/notes.md")).symlink_to(os.fsdecode(b"odd\xff/.env"))
    async with Client(_stdio(project)) as client:
        read = await client.call_tool("read_context", {"path": "notes.md"})
        assert read.is_error
        assert text_of(read) == "agents://notes.md is not served: symlink to a denylisted file odd\\xff/.env"
        status = text_of(await client.call_tool("context_status", {}))
        assert "pro\\xffj/.AGENTS" in status
        assert "skipped .AGENTS/odd\\xff: name is not valid UTF-8" in status
        assert "Watcher: polling (walk: a path is not UTF-8), healthy" in status
        Path(os.fsdecode(agents + b"/later.md")).write_text("# Later\n\nzebra crossing\n")

        async def found() -> bool:
            hits = text_of(await client.call_tool("context_search", {"query": "zebra"}))
            return ".AGENTS/later.md" in hits

        await eventually(found, timeout=20)
        status = text_of(await client.call_tool("context_status", {}))
        assert "0 restarts" in status
        resources = await client.list_resources()
        assert "TOKEN" not in str(resources)
    tried("names that are not UTF-8", 3)


@pytest.mark.skipif(not POSIX, reason="a backslash is a separator on Windows")
async def test_a_backslash_in_a_name_is_skipped_with_the_reason_and_every_listed_uri_reads(tmp_path: Path) -> None:
    agents = tmp_path / ".AGENTS"
    agents.mkdir()
    (agents / "back\\slash.md").write_text("# Back\n\nbackslash words\n")
    (agents / "fold\\er").mkdir()
    (agents / "fold\\er" / "in.md").write_text("# In\n\nbackslash words\n")
    for name in ("C#.md", "100%.md", "sp ace.md", "é.md", "q?.md", "semi;colon.md"):
        (agents / name).write_text(f"# {name}\n\nodd words\n")
    async with Client(make_server(agents)) as client:
        listed = [r.uri for r in (await client.list_resources()).resources if r.uri.startswith("agents://")]
        assert not [uri for uri in listed if "%5C" in uri]
        for uri in listed:  # every listed URI is readable
            contents = (await client.read_resource(uri)).contents
            assert contents
        assert len(listed) == 6
        status = text_of(await client.call_tool("context_status", {}))
        reason = "name holds a backslash, a folder separator on Windows: rename it to serve it"
        assert f"skipped .AGENTS/back\\slash.md: {reason}" in status
        assert f"skipped .AGENTS/fold\\er: {reason}" in status
        hits = text_of(await client.call_tool("context_search", {"query": "backslash"}))
        assert "hits=0" in hits
    tried("backslash names", 2)
    tried("odd names, each listed URI read back", 6)


@pytest.mark.skipif(not POSIX, reason="symlinks need privileges on Windows")
@pytest.mark.parametrize("link", ["alias", "zlink"])  # sorting before and after the real folder
async def test_a_file_is_listed_under_its_real_path_and_a_linked_folder_is_skipped(tmp_path: Path, link: str) -> None:
    agents = tmp_path / ".AGENTS"
    (agents / "real").mkdir(parents=True)
    (agents / "real" / "x.md").write_text("# X\n\nlinked folder words\n")
    (agents / link).symlink_to(agents / "real", target_is_directory=True)
    (agents / "note.md").symlink_to(agents / "real" / "x.md")  # a link to a file is served by its name
    (agents / "real" / "y.md").write_text("# Y\n\nanother linked folder text\n")
    async with Client(make_server(agents)) as client:
        listed = sorted(r.uri for r in (await client.list_resources()).resources if r.uri.startswith("agents://"))
        assert listed == ["agents://note.md", "agents://real/x.md", "agents://real/y.md"]
        why = "link to a folder inside the root (real/): its files are served under their real path"
        with pytest.raises(MCPError, match=r"is not served: link to a folder inside the root \(real/\)"):
            await client.read_resource(f"agents://{link}/x.md")
        status = text_of(await client.call_tool("context_status", {}))
        assert f"skipped .AGENTS/{link}/: {why}" in status
        hits = text_of(await client.call_tool("context_search", {"query": "another linked folder"}))
        assert f".AGENTS/{link}/" not in hits
        assert '<context path=".AGENTS/real/y.md"' in hits
    tried("a folder linked inside the root")


LONG = [
    ("read_context", {"path": "/".join(["a"] * 3000)}, "path too long (5,999 characters): at most 4,096"),
    ("read_context", {"path": "%2e%2e/" * 5000}, "path too long (35,000 characters): at most 4,096"),
    ("read_context", {"path": "x" * 300 + ".md"}, "a name in the path is too long (303 characters): at most 255"),
    ("read_context", {"path": "agents://" + "%2e%2e/" * 5000}, "path too long"),
    ("context_for_path", {"path": "/".join(["a"] * 3000)}, "path too long (5,999 characters): at most 4,096"),
    ("context_for_path", {"path": "src/" + "y" * 300}, "a name in the path is too long (300 characters)"),
]


@pytest.mark.parametrize(("tool", "args", "why"), LONG)
async def test_a_path_too_long_to_name_a_file_is_refused_with_the_reason(
    tmp_path: Path, tool: str, args: dict[str, str], why: str
) -> None:
    agents = tmp_path / ".AGENTS"
    agents.mkdir()
    (agents / "a.md").write_text("# A\n\nwords\n")
    async with Client(make_server(agents)) as client:
        result = await client.call_tool(tool, args)
    assert result.is_error
    assert why in text_of(result)
    assert "\n" not in text_of(result)
    tried("paths too long")


async def test_a_uri_too_long_is_refused_by_resources_read(tmp_path: Path) -> None:
    agents = tmp_path / ".AGENTS"
    agents.mkdir()
    (agents / "a.md").write_text("# A\n\nwords\n")
    async with Client(make_server(agents)) as client:
        with pytest.raises(MCPError, match=r"path too long \(\d[\d,]* characters\): at most 4,096"):
            await client.read_resource("agents://" + "/".join(["a"] * 3000))
    tried("paths too long")


@pytest.mark.skipif(not POSIX, reason="symlinks need privileges on Windows")
async def test_a_source_path_through_a_link_loop_still_gets_its_rules(tmp_path: Path) -> None:
    """context_for_path on `src/loop1/x.py` where `loop1 <-> loop2`: the rules that apply by the
    path's name, never an error without a reason."""
    project = tmp_path / "project"
    agents = project / ".AGENTS"
    agents.mkdir(parents=True)
    (agents / "src.md").write_text("---\napplies_to: ['src/**']\n---\n# Source rules\n\nTest every module.\n")
    (project / "src").mkdir()
    (project / "src" / "loop1").symlink_to(project / "src" / "loop2")
    (project / "src" / "loop2").symlink_to(project / "src" / "loop1")
    async with Client(make_server(agents)) as client:
        for path in ("src/loop1/x.py", str(project / "src" / "loop1" / "x.py")):
            result = await client.call_tool("context_for_path", {"path": path})
            assert not result.is_error, text_of(result)
            assert "Test every module." in text_of(result)
        read = await client.call_tool("read_context", {"path": "../src/loop1/x.py"})
        assert read.is_error and "Error executing tool" not in text_of(read)
    await anyio.sleep(0)
    tried("a path through a link loop", 3)
