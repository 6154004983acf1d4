"""One rule for every number argument of every tool, and one for line ranges, through a real
client (docs/contracts.md, "Numbers and line ranges", and docs/retrieval.md, "Citations and navigation").

Numbers: a whole number (`7`, `7.0`, `"7"`) outside its range is clamped to the nearest end of it;
NaN, infinities, fractions, booleans, null (where the argument cannot be null), other strings,
lists and objects are refused with one sentence naming the argument. Lines: `#L12` or
`#L12-L30`, from 1, the first not after the last; a range that starts past the file's end is an
error naming its line count, one that ends past it ends at its last line."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from mcp import Client, MCPError

from server import AgentsServer
from tests.helpers import SERVER, make_server, split_status, text_of
from tests.tally import tried

pytestmark = pytest.mark.anyio

LINES = 12
NOTES = "".join(f"line {i} of the notes\n" for i in range(1, LINES + 1))
BASE: dict[str, dict[str, Any]] = {
    "context_search": {"query": "shared word"},
    "search_docs": {"query": "shared word"},
    "context_for_path": {"path": "src/api/auth.py"},
    "read_context": {"path": "notes.md"},
}
"""The other arguments of each tool's calls."""

NUMBERS: dict[tuple[str, str], tuple[int, int | None]] = {
    ("context_search", "k"): (1, 20),
    ("context_search", "max_tokens"): (200, 10_000),
    ("context_search", "offset"): (0, None),
    ("context_search", "generation"): (0, None),
    ("search_docs", "k"): (1, 10),
    ("search_docs", "max_tokens"): (200, 10_000),
    ("search_docs", "offset"): (0, None),
    ("search_docs", "generation"): (0, None),
    ("context_for_path", "max_tokens"): (200, 10_000),
    ("read_context", "start_line"): (1, None),
    ("read_context", "end_line"): (1, None),
    ("read_context", "max_tokens"): (200, 10_000),
}
"""Every number argument of every tool, with its range (None: no upper end)."""

NULLABLE = {"generation", "start_line", "end_line"}
"""Arguments whose null means "not given"."""

HUGE = 10**12


@pytest.fixture
def server(make_tree: Callable[..., Path]) -> AgentsServer:
    many = {f"topic-{i:02d}.md": f"# Topic {i}\n\nshared word, then {'filler ' * i}\n" for i in range(30)}
    return make_server(make_tree({**many, "notes.md": NOTES, "api.md": "---\nglobs: src/api/**\n---\n# API\n"}))


def clamped(value: int, low: int, high: int | None) -> int:
    return max(low, value) if high is None else min(high, max(low, value))


def comparable(text: str) -> str:
    """A tool's text without what differs from call to call (the time of the answer)."""
    return re.sub(r" fresh_as_of=\S+?(?=[ \]])", "", text)


async def answer(client: Client, tool: str, **args: Any) -> tuple[bool, str]:
    result = await client.call_tool(tool, {**BASE[tool], **args})
    return bool(result.is_error), comparable(text_of(result))


async def test_every_number_argument_is_covered_and_advertises_its_range(server: AgentsServer) -> None:
    async with Client(server) as client:
        schemas = {t.name: t.input_schema for t in (await client.list_tools()).tools}
    found = {
        (tool, name): (number.get("minimum"), number.get("maximum"))
        for tool, schema in schemas.items()
        for name, p in schema["properties"].items()
        if "integer" in json.dumps(p)
        # a nullable number has its bounds in its number branch (strict validators want them there)
        for number in [next((o for o in p.get("anyOf", []) if o.get("type") == "integer"), p)]
    }
    assert found == NUMBERS  # a new number argument must join this suite
    for tool, name in NUMBERS:
        description = schemas[tool]["properties"][name]["description"]
        assert "(clamped)" in description, (tool, name, description)


@pytest.mark.parametrize(("tool", "name"), list(NUMBERS))
async def test_a_whole_number_out_of_range_is_clamped(server: AgentsServer, tool: str, name: str) -> None:
    low, high = NUMBERS[tool, name]
    async with Client(server) as client:
        for value in (-1, 0, HUGE, -HUGE, "7", " 7 ", "-1", "7.0", 7.0, float(HUGE)):
            whole = int(float(value))
            expected = await answer(client, tool, **{name: clamped(whole, low, high)})
            assert await answer(client, tool, **{name: value}) == expected, (name, value)
            tried("number clamped")


async def test_what_a_clamped_number_means(server: AgentsServer) -> None:
    async with Client(server) as client:
        hits = {k: split_status((await answer(client, "context_search", k=k))[1])[1]["hits"] for k in (-1, 0, HUGE)}
        assert hits == {-1: "1", 0: "1", HUGE: "20"}  # 30 sections match
        assert split_status((await answer(client, "search_docs", k=HUGE))[1])[1]["hits"] == "10"
        small = (await answer(client, "context_search", k=20, max_tokens=-1))[1]
        assert len(small) <= 200 * 4 and "truncated=1" in small
        past = (await answer(client, "context_search", offset=HUGE))[1]
        assert past.startswith(f"no more matching context for: shared word (offset {HUGE} is past the end: 30 hits")
        first = (await answer(client, "context_search", offset=-1))[1]
        assert first == (await answer(client, "context_search"))[1]
        changed = split_status((await answer(client, "context_search", generation=-1))[1])[1]
        assert changed["gen_changed"] == "1"
        error, text = await answer(client, "read_context", start_line=0, end_line=2)
        assert not error and "\nline 1 of the notes\nline 2 of the notes\n" in text
        error, text = await answer(client, "read_context", start_line=LINES - 1, end_line=HUGE)
        assert not error and f"lines={LINES - 1}-{LINES} " in text
        error, text = await answer(client, "read_context", start_line=HUGE)
        assert error and text == f".AGENTS/notes.md has {LINES} lines; start_line {HUGE} is past its end"


REFUSED: list[tuple[object, str]] = [
    (1.5, "1.5"),
    (-0.5, "-0.5"),
    (True, "true"),
    (False, "false"),
    ("seven", '"seven"'),
    ("1e1", '"1e1"'),
    ("7.5", '"7.5"'),
    ("NaN", '"NaN"'),
    ("", '""'),
    ([7], "[7]"),
    ({"n": 7}, '{"n": 7}'),
]


@pytest.mark.parametrize(("tool", "name"), list(NUMBERS))
async def test_what_is_no_whole_number_is_refused_with_one_sentence(server: AgentsServer, tool: str, name: str) -> None:
    async with Client(server) as client:
        for value, shown in REFUSED:
            error, text = await answer(client, tool, **{name: value})
            assert error and text == f"{name} must be a whole number, not {shown}", (value, text)
            tried("number refused")


@pytest.mark.parametrize(("tool", "name"), list(NUMBERS))
async def test_nan_and_infinities_from_the_sdk_client_arrive_as_null(
    server: AgentsServer, tool: str, name: str
) -> None:
    """The SDK's client writes NaN and infinities as JSON null (pydantic's default): a null is
    "not given" where the argument can be null, and refused where it cannot."""
    async with Client(server) as client:
        for value in (float("nan"), float("inf"), float("-inf")):
            error, text = await answer(client, tool, **{name: value})
            if name in NULLABLE:
                assert (error, text) == await answer(client, tool)
            else:
                assert error and text == f"{name} must be a whole number, not null"
            tried("number refused")


def raw_calls(agents: Path, calls: list[tuple[str, str]]) -> list[dict[str, Any]]:
    """Tool calls written as raw JSON-RPC lines to `python server.py` over stdio, arguments as
    given (`NaN`, `Infinity`: JSON has no such numbers, but Python writes them and the server's
    parser reads them); the responses, in order."""
    proc = subprocess.Popen(
        [sys.executable, SERVER, "--root", str(agents)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    assert proc.stdin is not None and proc.stdout is not None
    lines: list[bytes] = []
    reader = threading.Thread(target=lambda: lines.extend(iter(proc.stdout.readline, b"")), daemon=True)  # type: ignore[union-attr]
    reader.start()
    init = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}}
    out = [json.dumps({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": init})]
    out.append(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}))
    for i, (tool, arguments) in enumerate(calls, 1):
        out.append(
            f'{{"jsonrpc": "2.0", "id": {i}, "method": "tools/call", '
            f'"params": {{"name": "{tool}", "arguments": {arguments}}}}}'
        )
    try:
        proc.stdin.write(("\n".join(out) + "\n").encode())
        proc.stdin.flush()
        deadline = time.monotonic() + 60
        while len(lines) < len(calls) + 1 and time.monotonic() < deadline:
            time.sleep(0.05)
        proc.stdin.close()
        proc.wait(timeout=10)
        reader.join(timeout=10)
    finally:
        proc.kill()
        proc.wait()
        proc.stdout.close()
    by_id = {m["id"]: m for m in map(json.loads, lines) if "id" in m}
    return [by_id[i] for i in range(1, len(calls) + 1)]


def test_nan_and_infinities_written_as_json_are_refused_by_name(make_tree: Callable[..., Path]) -> None:
    agents = make_tree({"notes.md": NOTES})
    calls: list[tuple[str, str]] = []
    expected: list[str] = []
    for tool, name in NUMBERS:
        base = json.dumps(BASE[tool])[1:-1]
        for literal in ("NaN", "Infinity", "-Infinity"):
            calls.append((tool, f'{{{base}, "{name}": {literal}}}'))
            expected.append(f"{name} must be a whole number, not {literal}")
    responses = raw_calls(agents, calls)
    for response, sentence in zip(responses, expected, strict=True):
        result = response["result"]
        assert result["isError"] is True and result["content"][0]["text"] == sentence
        tried("number refused (raw JSON)")


# --- line ranges ----------------------------------------------------------------------------------

WHOLE = NOTES.rstrip("\n")


def lines(first: int, last: int) -> str:
    return "\n".join(f"line {i} of the notes" for i in range(first, last + 1))


IMPOSSIBLE = ["L0", "L0-L3", "L5-L2", "L5-3", "L00"]
"""Fragments of the line form that name no line of any file."""


@pytest.mark.parametrize("fragment", IMPOSSIBLE)
async def test_an_impossible_line_range_is_an_error_saying_what_is_accepted(
    server: AgentsServer, fragment: str
) -> None:
    sentence = (
        f"#{fragment} names no lines of .AGENTS/notes.md: lines are #L12 or #L12-L30, counted from 1, "
        "the first not after the last"
    )
    async with Client(server) as client:
        with pytest.raises(MCPError) as caught:
            await client.read_resource(f"agents://notes.md#{fragment}")
        assert str(caught.value) == sentence
        for path in (f"agents://notes.md#{fragment}", f"notes.md#{fragment}", f".AGENTS/notes.md#{fragment}"):
            result = await client.call_tool("read_context", {"path": path})
            assert result.is_error and text_of(result) == sentence
    tried("line range refused")


@pytest.mark.parametrize(
    ("fragment", "expected"),
    [
        ("L1", lines(1, 1)),
        ("L3", lines(3, 3)),
        ("L2-L4", lines(2, 4)),
        ("L2-4", lines(2, 4)),
        ("L007-L009", lines(7, 9)),
        (f"L{LINES}", lines(LINES, LINES)),
        (f"L10-L{LINES + 5}", lines(10, LINES)),  # ends past the end: at the last line
        ("L1-L999999999999", WHOLE),
    ],
)
async def test_a_line_range_reads_those_lines_and_ends_at_the_files_end(
    server: AgentsServer, fragment: str, expected: str
) -> None:
    async with Client(server) as client:
        read = await client.read_resource(f"agents://notes.md#{fragment}")
        assert getattr(read.contents[0], "text", None) == expected
        result = await client.call_tool("read_context", {"path": f"notes.md#{fragment}"})
        assert not result.is_error and f"\n{expected}\n</context>" in text_of(result)
    tried("line range read")


@pytest.mark.parametrize("fragment", [f"L{LINES + 1}", f"L{LINES + 1}-L{LINES + 9}", "L999999999999"])
async def test_a_range_starting_past_the_end_is_an_error_naming_the_line_count(
    server: AgentsServer, fragment: str
) -> None:
    sentence = f".AGENTS/notes.md has {LINES} lines; #{fragment} starts past its end"
    async with Client(server) as client:
        with pytest.raises(MCPError) as caught:
            await client.read_resource(f"agents://notes.md#{fragment}")
        assert str(caught.value) == sentence
        result = await client.call_tool("read_context", {"path": f"notes.md#{fragment}"})
        assert result.is_error and text_of(result) == sentence
    tried("line range refused")


@pytest.mark.parametrize("fragment", ["L2\n", "L2 ", " L2", "L2-", "L2-L", "l2", "L2:4", "L-2"])
async def test_a_fragment_not_exactly_of_the_line_form_is_no_line_range(server: AgentsServer, fragment: str) -> None:
    """Not `#L12` or `#L12-L30` exactly: a section's name, and notes.md has no such section."""
    async with Client(server) as client:
        with pytest.raises(MCPError, match="has no section"):
            await client.read_resource(f"agents://notes.md#{fragment}")
        result = await client.call_tool("read_context", {"path": f"agents://notes.md#{fragment}"})
        assert result.is_error and "has no section" in text_of(result)
    tried("line range refused")


async def test_start_line_after_end_line_is_an_error(server: AgentsServer) -> None:
    async with Client(server) as client:
        error, text = await answer(client, "read_context", start_line=5, end_line=3)
        assert error and text == "start_line 5 is after end_line 3: pass start_line <= end_line"
        error, text = await answer(client, "read_context", start_line=LINES + 1)
        assert error and text == f".AGENTS/notes.md has {LINES} lines; start_line {LINES + 1} is past its end"
        error, text = await answer(client, "read_context", end_line=3)
        assert not error and f"\n{lines(1, 3)}\n</context>" in text
        error, text = await answer(client, "read_context", start_line=3, end_line=3)
        assert not error and f"\n{lines(3, 3)}\n</context>" in text


async def test_an_empty_file_reads_whole_as_resources_read_gives_it(make_tree: Callable[..., Path]) -> None:
    server = make_server(make_tree({"empty.md": "", "a.md": "# A\n"}))
    async with Client(server) as client:
        read = await client.read_resource("agents://empty.md")
        assert getattr(read.contents[0], "text", None) == ""
        whole = await client.call_tool("read_context", {"path": "empty.md"})
        assert not whole.is_error
        assert (
            split_status(text_of(whole))[0] == '<context path=".AGENTS/empty.md" section="" lines="1-0">\n\n</context>'
        )
        lines = await client.call_tool("read_context", {"path": "empty.md#L1"})
        assert lines.is_error and text_of(lines) == ".AGENTS/empty.md has 0 lines; #L1 starts past its end"
