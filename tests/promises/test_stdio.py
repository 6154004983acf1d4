"""The server as a real process: `python server.py --root DIR` over stdio; the worker processes
that read a large docs root under it never reach the protocol's stdout, and once they are done
the answers are whole."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client, StdioServerParameters
from mcp.types import ServerNotification

from live import workers
from tests.conftest import TEST_ENV, write_tree
from tests.helpers import MODES, SERVER, TOOLS, eventually, search, split_status, text_of

pytestmark = pytest.mark.anyio


@pytest.fixture
def agents(make_tree: Callable[..., Path]) -> Path:
    return make_tree(
        {
            "overview.md": "# Overview\n\nA test project.\n",
            "security.md": "# Security\n\n## Secrets\n\nNever print tokens.\n",
            "C#.md": "# Sharp\n\nhash names\n",
        }
    )


def params(agents: Path, *extra: str) -> StdioServerParameters:
    return StdioServerParameters(
        command=sys.executable, args=[SERVER, "--root", str(agents), "--debounce-ms", "50", *extra], env=TEST_ENV
    )


@pytest.mark.parametrize("mode", MODES)
async def test_a_round_trip_over_real_stdio(agents: Path, mode: str) -> None:
    async with Client(params(agents), mode=mode) as client:
        assert client.server_capabilities is not None and client.server_capabilities.resources is not None
        assert client.server_capabilities.resources.list_changed is True
        assert "pinned_context" in (client.instructions or "")
        assert [t.name for t in (await client.list_tools()).tools] == TOOLS
        hit = await search(client, "secrets")
        assert hit.startswith('<context path=".AGENTS/security.md" section="Secrets"')
        read = await client.read_resource("agents://C%23.md")
        assert getattr(read.contents[0], "text", None) == "# Sharp\n\nhash names\n"


async def test_list_changed_reaches_a_handshake_client_over_stdio(agents: Path) -> None:
    changed = anyio.Event()

    async def on_message(message: Any) -> None:
        if isinstance(message, ServerNotification) and message.method == "notifications/resources/list_changed":
            changed.set()

    async with Client(params(agents), mode="legacy", message_handler=on_message) as client:

        async def watching() -> bool:
            report = (await client.call_tool("context_status", {})).structured_content
            return bool(report and report["watcher"]["healthy"])

        await eventually(watching)  # from here on no call is made: the write must reach the watcher
        (agents / "added.md").write_text("# Added\n\nokapi\n")
        with anyio.fail_after(10):
            await changed.wait()

        async def found() -> bool:
            return "added.md" in text_of(await client.call_tool("context_search", {"query": "okapi"}))

        await eventually(found)


def rpc(method: str, id_: int | None, params: dict[str, Any] | None = None) -> bytes:
    message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
    if id_ is not None:
        message["id"] = id_
    if params is not None:
        message["params"] = params
    return (json.dumps(message) + "\n").encode()


def test_stdout_carries_only_json_rpc_and_eof_ends_the_process(agents: Path) -> None:
    proc = subprocess.Popen(
        [sys.executable, SERVER, "--root", str(agents)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert proc.stdin is not None and proc.stdout is not None
    lines: list[bytes] = []
    reader = threading.Thread(target=lambda: lines.extend(iter(proc.stdout.readline, b"")), daemon=True)  # type: ignore[union-attr]
    reader.start()
    init = {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "raw", "version": "0"},
    }
    proc.stdin.write(rpc("initialize", 1, init))
    proc.stdin.write(rpc("notifications/initialized", None))
    proc.stdin.write(rpc("tools/call", 2, {"name": "context_search", "arguments": {"query": "secrets"}}))
    proc.stdin.write(rpc("resources/read", 3, {"uri": "agents://../etc/passwd"}))
    proc.stdin.write(rpc("tools/call", 4, {"name": "pinned_context", "arguments": {}}))
    proc.stdin.flush()
    try:
        deadline = time.monotonic() + 20
        while len(lines) < 4 and time.monotonic() < deadline:
            time.sleep(0.05)
        proc.stdin.close()  # EOF: the server must exit by itself
        proc.wait(timeout=10)
        reader.join(timeout=10)
        err = proc.stderr.read().decode() if proc.stderr else ""
    finally:
        proc.kill()
        proc.wait()
        for stream in (proc.stdout, proc.stderr):
            if stream:
                stream.close()
    assert proc.returncode == 0, err
    messages = [json.loads(line) for line in lines]  # every line is JSON...
    assert all(m.get("jsonrpc") == "2.0" for m in messages)  # ...and JSON-RPC
    by_id = {m["id"]: m for m in messages if "id" in m}
    assert sorted(by_id) == [1, 2, 3, 4]
    assert "Secrets" in by_id[2]["result"]["content"][0]["text"]
    assert by_id[3]["error"]["code"] == -32602
    assert "overview.md" in by_id[4]["result"]["content"][0]["text"]
    assert "# pinned .AGENTS/overview.md (" in err
    assert "# searchable 4 sections across 3 files (1 pinned)" in err
    assert "# waiting for an MCP client on stdin" in err


async def test_a_large_docs_root_read_by_workers_answers_whole_over_stdio(tmp_path: Path) -> None:
    """Real worker processes under the real server: nothing they do reaches the protocol's stdout,
    and once the first read is done answers are whole and find every file."""
    count = workers.PARALLEL_FILES + 50
    docs = tmp_path / "docs"
    docs.mkdir()
    for i in range(count):
        (docs / f"p{i:05d}.md").write_text(f"# Page {i}\n\nword{i} shared\n", encoding="utf-8")
    agents = write_tree(tmp_path / ".AGENTS", {"overview.md": "# Overview\n\nhi\n"})
    params = StdioServerParameters(
        command=sys.executable, args=[SERVER, "--root", str(agents), "--docs", str(docs), "--no-cache"], env=TEST_ENV
    )
    async with Client(params) as client:
        deadline = time.monotonic() + 120
        while True:
            fields = split_status(text_of(await client.call_tool("context_status", {})))[1]
            if "indexing" not in fields or time.monotonic() > deadline:
                break
            await anyio.sleep(0.2)
        assert "indexing" not in fields, fields
        last = text_of(await client.call_tool("search_docs", {"query": f"word{count - 1}", "k": 1}))
    assert f"p{count - 1:05d}.md" in last and "partial=1" not in last


def test_a_missing_root_is_a_clear_error_at_start(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, SERVER, "--root", str(tmp_path / "nope")],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 2
    assert done.stdout == ""
    assert "does not exist" in done.stderr


async def test_the_repository_serves_its_own_agents_folder() -> None:
    """`uv run server.py` in a fresh clone: no flags, this repository's .AGENTS/."""
    repo = Path(SERVER).parent
    async with Client(
        StdioServerParameters(command=sys.executable, args=[SERVER], cwd=str(repo), env=TEST_ENV)
    ) as client:
        pinned = text_of(await client.call_tool("pinned_context", {}))
        assert pinned.index('<context path=".AGENTS/overview.md">') < pinned.index(
            '<context path=".AGENTS/conventions.md">'
        )
        hit = await search(client, "symlinks that leave the root")
        assert hit.startswith('<context path=".AGENTS/security.md" section="Confinement to the roots"')


@pytest.mark.parametrize("written", [False, True], ids=["no-bytecode-written", "bytecode-written"])
async def test_a_start_that_compiles_the_sdk_from_source_says_how_to_stop_it(
    agents: Path, tmp_path: Path, written: bool
) -> None:
    """Where Python writes no bytecode (PYTHONDONTWRITEBYTECODE, as many container images set it)
    and uv installed none, every start compiles the MCP SDK again: seconds. The log says so and how
    to install it compiled; where Python may write it (here into a folder of the test's own), the
    next start is quick and nothing is said."""
    log_file = tmp_path / "server.log"
    env = {**TEST_ENV, "PYTHONPYCACHEPREFIX": str(tmp_path / "bytecode")}  # none there yet
    if not written:
        env["PYTHONDONTWRITEBYTECODE"] = "1"
    server = StdioServerParameters(
        command=sys.executable, args=[SERVER, "--root", str(agents), "--log-file", str(log_file)], env=env
    )
    async with Client(server) as client:
        assert "Secrets" in await search(client, "secrets")
    log = log_file.read_text()
    advice = "# every start compiles the mcp package from source (seconds)"
    assert (advice in log) is not written, log
    if not written:
        assert "`uv sync --compile-bytecode`" in log
    assert any((tmp_path / "bytecode").rglob("*.pyc")) is written


async def test_the_console_script_serves_and_logs_to_a_file(agents: Path, tmp_path: Path) -> None:
    script = Path(sys.executable).with_name("agents-context")
    if not script.exists():
        script = script.with_suffix(".exe")
    (agents / "id_rsa").write_text("-----BEGIN KEY-----\n")
    log_file = tmp_path / "server.log"
    server = StdioServerParameters(
        command=str(script), args=["serve", "--root", str(agents), "--log-file", str(log_file)], env=TEST_ENV
    )
    async with Client(server, mode="legacy") as client:
        assert "Secrets" in await search(client, "secrets")
    log = log_file.read_text()
    assert "# pinned .AGENTS/overview.md (" in log
    assert "# skipped .AGENTS/id_rsa: looks like a secret (denylist)" in log
    assert "# waiting for an MCP client on stdin" in log


def test_version_and_help_need_no_corpus(tmp_path: Path) -> None:
    for flag, expected in (("--version", "agents-context "), ("--help", "--instructions-budget")):
        done = subprocess.run(
            [sys.executable, SERVER, flag],
            capture_output=True,
            text=True,
            timeout=60,
            cwd=tmp_path,
            check=False,
        )
        assert done.returncode == 0 and expected in done.stdout
