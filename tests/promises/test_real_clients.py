"""What reaches the model, through real clients: Claude Code, Codex and Gemini CLI, each run
against a scripted stand-in for its model API (`tests/harness`), with our server started as a
user starts it, in a project with the agent files of several tools. Each test reads the requests
the client sent its model.

- a search answer reaches the model as its documented text (within 1.1x its characters), never
  as scores and term contributions unless the call asks to explain;
- no file reaches the model twice: what the client loads itself is named, not sent again;
- the instructions reach the model whole, within 2,048 characters, first line first.

Each client skips, saying why, where it cannot run (no npm, no user namespaces).
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
import tomlkit
from mcp import Client
from mcp.types import TextContent

from live.cache import ENV as CACHE_ENV
from shared import relay
from tests.conftest import write_tree
from tests.harness import claude, codex, gemini, record
from tests.harness.standin import Say, ToolCall, Turn
from tests.helpers import SERVER, cli
from tests.projects import parse, serve
from writes.state import STATE_ENV

RELAY = Path(sys.executable).with_name("agents-context-shared")
"""The stdio command that shares one server (`shared.relay`)."""

OVERVIEW = "# Overview\n\nOVERVIEW-MARK. The shop sells tea.\n\n" + "Background on the shop and its history. " * 60
AGENTS = "# Agent guide\n\nAGENTS-MARK. Run `make test` before every commit.\n\n" + "Keep modules small. " * 40
PROJECT: dict[str, str | bytes] = {
    "AGENTS.md": AGENTS,
    "CLAUDE.md": "# Claude\n\n@AGENTS.md\n\nCLAUDE-MARK. Prefer the Read tool.\n",
    "GEMINI.md": "# Gemini\n\nGEMINI-MARK. Answer in English.\n",
    ".claude/rules/style.md": "# Style\n\nCLAUDE-RULE-MARK. Two spaces in YAML.\n",
    ".cursor/rules/always.mdc": "---\nalwaysApply: true\n---\n# Always\n\nCURSOR-MARK. No default exports.\n",
    ".AGENTS/overview.md": OVERVIEW,
    ".AGENTS/conventions.md": "# Conventions\n\nCONVENTIONS-MARK. snake_case modules.\n",
    ".AGENTS/deploy.md": (
        "# Deploy\n\nDeploys go through the pipeline.\n\n## Rollback\n\nRoll back with the zebra switch, then "
        "page the on-call engineer.\n\n## Canary\n\nA canary takes five percent of traffic for an hour.\n"
    ),
    ".AGENTS/security.md": (
        "# Security\n\n## Secrets\n\nNever print tokens; rotate the deploy token monthly.\n\n"
        "## Logging\n\nLogs never hold secrets or customer e-mail addresses.\n"
    ),
}
"""A project with the agent files of several tools, each holding a mark to count where it went;
the pinned files are too large to go inline in the instructions, so they are asked for."""


@dataclass(frozen=True)
class Harness:
    """One client: its runner module and how a tool's output reads as text."""

    name: str
    module: ModuleType
    text: Callable[[str], str]
    reads_structured: bool
    loads: tuple[str, ...]
    """The marks of the files the client loads itself, in this project."""


def _codex_text(output: str) -> str:
    """Codex's own framing (`Wall time: 0.0055 seconds`, `Output:`) removed: what the server sent."""
    return re.sub(r"\AWall time: [0-9.]+ seconds\nOutput:\n", "", output)


def _gemini_text(output: str) -> str:
    response: dict[str, Any] = json.loads(output).get("response", {})
    return str(response.get("output", ""))


HARNESSES = {
    "Claude Code": Harness("Claude Code", claude, str, True, ("AGENTS-MARK", "CLAUDE-MARK", "CLAUDE-RULE-MARK")),
    "Codex": Harness("Codex", codex, _codex_text, True, ("AGENTS-MARK",)),
    "Gemini CLI": Harness("Gemini CLI", gemini, _gemini_text, False, ("GEMINI-MARK",)),
}


@pytest.fixture(params=list(HARNESSES))
def harness(request: pytest.FixtureRequest) -> Harness:
    chosen = HARNESSES[request.param]
    reason = chosen.module.available()
    if reason is not None:
        pytest.skip(reason)
    return chosen


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return write_tree(tmp_path / "shop", PROJECT)


def command(project: Path) -> list[str]:
    """Our server, as the README's client snippets start it."""
    return [sys.executable, SERVER, "--project", str(project), "--no-cache"]


def play(
    harness: Harness, project: Path, *calls: tuple[str, dict[str, Any]], server: list[str] | None = None
) -> tuple[Any, list[str]]:
    """Run the client once; the model calls each of `calls` in turn, then answers. The run, and
    the text of each call's output as the model read it."""
    turns: list[Turn] = [[ToolCall(harness.module.tool_name(tool), args)] for tool, args in calls]
    run = harness.module.run(project, [*turns, Say("done")], server=server or command(project))
    outputs = harness.module.tool_outputs(run)
    assert len(outputs) == len(calls), (run.returncode, run.stderr[-2000:])
    return run, [harness.text(output) for output in outputs]


async def documented(project: Path, tool: str, args: dict[str, Any]) -> str:
    """The tool's documented text for the same call: what an unknown client gets as text."""
    async with Client(serve(*parse(["--project", str(project)], cwd=project))) as client:
        result = await client.call_tool(tool, args)
    (block,) = result.content
    assert isinstance(block, TextContent)
    return block.text


SEARCHES: list[tuple[str, dict[str, Any]]] = [
    ("context_search", {"query": "rollback canary deploy"}),
    ("search_docs", {"query": "secrets logging"}),
    ("context_status", {}),
]


@pytest.mark.anyio
async def test_a_search_answer_reaches_the_model_as_its_text(harness: Harness, project: Path) -> None:
    _, outputs = play(harness, project, *SEARCHES)
    for (tool, args), seen in zip(SEARCHES, outputs, strict=True):
        text = await documented(project, tool, args)
        assert "contribution" not in seen and "matched_terms" not in seen, (harness.name, tool, seen[:300])
        assert not seen.lstrip().startswith("{"), (harness.name, tool, seen[:300])
        first_line = text.split("\n", 1)[0]
        assert first_line in seen, (harness.name, tool, seen[:300])
        if harness.reads_structured:  # the target for Claude Code and Codex
            assert len(seen) <= 1.1 * len(text), (harness.name, tool, len(seen), len(text))
    assert '<context path=".AGENTS/deploy.md" section="Rollback"' in outputs[0], outputs[0][:300]
    assert "Roll back with the zebra switch" in outputs[0]


def test_asked_to_explain_the_model_gets_each_hits_terms(harness: Harness, project: Path) -> None:
    _, (seen,) = play(harness, project, ("context_search", {"query": "rollback zebra", "explain": True}))
    if harness.reads_structured:
        result = json.loads(seen[seen.index("{") :])
        terms = {m["term"] for hit in result["hits"] for m in hit["matched_terms"]}
        assert {"rollback", "zebra"} <= terms
    else:  # Gemini CLI passes a result's text alone: the explanation goes nowhere, the text still does
        assert "zebra switch" in seen


def test_a_model_that_asks_several_ways_at_once_gets_one_fused_answer(harness: Harness, project: Path) -> None:
    """The model's own variants, in `queries` as the client passes the list: the first way of
    asking alone matches nothing; with the variants the answer leads with the section they relay."""
    calls: list[tuple[str, dict[str, Any]]] = [
        ("context_search", {"query": "undo a bad release"}),
        ("context_search", {"query": "undo a bad release", "queries": ["roll back the deploy", "zebra switch"]}),
    ]
    _, (alone, fused) = play(harness, project, *calls)
    assert "<context " not in alone and "method=outline" in alone, (harness.name, alone[:300])
    first_hit = fused[fused.index("<context ") :].split("\n", 1)[0]
    assert first_hit.startswith('<context path=".AGENTS/deploy.md" section="Rollback"'), (harness.name, fused[:300])
    assert "method=bm25" in fused


def test_no_file_reaches_the_model_twice(harness: Harness, project: Path) -> None:
    run, (pinned,) = play(harness, project, ("pinned_context", {}))
    first = harness.module.context_text(run, 0)
    last = harness.module.context_text(run, len(run.requests) - 1)
    for mark in harness.loads:  # the client loaded it: it is named in the answer, not sent again
        assert first.count(mark) == 1, (harness.name, mark)
        assert last.count(mark) == 1, (harness.name, mark)
    assert f"Already in your context, loaded by {harness.name} itself:" in pinned
    for mark in ("OVERVIEW-MARK", "CONVENTIONS-MARK"):  # not loaded by any client: sent once, whole
        assert mark not in first, (harness.name, mark)
        assert last.count(mark) == 1, (harness.name, mark)
    assert "Background on the shop and its history." in pinned


def test_the_instructions_reach_the_model_whole_and_first_line_first(harness: Harness, project: Path) -> None:
    run, _ = play(harness, project, ("context_status", {}))
    seen = harness.module.context_text(run, 0)
    first_line = "agents-context: call context_search before guessing about a project rule, convention"
    assert first_line in seen, harness.name
    assert "It serves this project's .AGENTS/ folder and its agent instruction files" in seen, harness.name
    if harness.module is codex:  # deferred: the model reads the first line until it looks the tools up
        return
    start = seen.index("agents-context: call")
    assert "call pinned_context once" in seen[start : start + 2048]
    assert "a variant or two in queries" in seen[start : start + 2048]  # what to send, before any schema
    assert "being indexed" not in seen


LONG = "a-package-of-this-monorepo-with-a-long-descriptive-folder-name"
CLIENT_INFO = "io.modelcontextprotocol/clientInfo"
"""Where a 2026-07-28 client names itself: every request's `_meta` (it sends no `initialize`)."""


def client_info(params: dict[str, Any]) -> dict[str, Any]:
    """The `clientInfo` a request carries: `initialize`'s, or a 2026-07-28 request's `_meta`."""
    found = params.get("clientInfo") or (params.get("_meta") or {}).get(CLIENT_INFO) or {}
    return found if isinstance(found, dict) and "name" in found else {}


NAMES = {"Claude Code": "claude-code", "Codex": "codex-mcp-client", "Gemini CLI": "gemini-cli-mcp-client"}


def test_tools_list_as_the_client_receives_it_is_under_16_kb(harness: Harness, tmp_path: Path) -> None:
    """A project with many long pinned names and docs roots; the protocol the client spoke with the
    server is recorded line by line on its way (`tests/harness/record.py`)."""
    pins = {f".AGENTS/{LONG}-{i}.md": f"# Rule {i}\n\nPinned rule {i}.\n" for i in range(12)}
    rules = {f".cursor/rules/{LONG}-{i}.mdc": "---\nalwaysApply: true\n---\n# Always\n" for i in range(12)}
    docs = {f"{LONG}-docs-{i}/guide.md": "# Guide\n\nReference text.\n" for i in range(6)}
    project = write_tree(tmp_path / LONG, {**PROJECT, **pins, **rules, **docs})
    log = tmp_path / "protocol.log"
    flags = ["--pin", *(f"{LONG}-{i}.md" for i in range(12))]
    flags = [f for pin in flags[1:] for f in ("--pin", pin)]
    flags += [f for i in range(6) for f in ("--docs", str(project / f"{LONG}-docs-{i}"))]
    recorder = [sys.executable, str(Path(record.__file__)), str(log), *command(project), *flags]
    play(harness, project, ("context_status", {}), server=recorder)
    sent = [json.loads(line[2:]) for line in log.read_bytes().splitlines() if line.startswith(b"< {")]
    received = [json.loads(line[2:]) for line in log.read_bytes().splitlines() if line.startswith(b"> {")]
    listed = [line for line in log.read_bytes().splitlines() if line.startswith(b"< ") and b'"tools":[' in line]
    assert listed, harness.name
    for line in listed:
        assert len(line) - 2 < 16_000, (harness.name, len(line))
    assert any(m.get("result", {}).get("tools") for m in sent)
    said = {str(info["name"]) for m in received if (info := client_info(m.get("params") or {}))}
    assert said == {NAMES[harness.name]}, said


SETUP_NAMES = {"Claude Code": "claude-code", "Codex": "codex", "Gemini CLI": "gemini-cli"}


def written_entry(harness: Harness, project: Path) -> dict[str, Any]:
    """Our server entry as `setup` wrote it into the client's own file."""
    if harness.name == "Codex":
        config = tomlkit.parse((project / ".codex" / "config.toml").read_text()).unwrap()
        return dict(config["mcp_servers"]["agents-context"])
    name = ".mcp.json" if harness.name == "Claude Code" else ".gemini/settings.json"
    return dict(json.loads((project / name).read_text())["mcpServers"]["agents-context"])


def test_sessions_of_a_real_client_share_the_server_setup_pointed_them_at(harness: Harness, project: Path) -> None:
    """One server for many sessions: `setup CLIENT --url` writes the entry the client reads for a
    streamable HTTP server; two sessions of the client, one after the other, are answered by the
    one server already running there (the entry starts none), the second after a file changed."""
    port = free_port()
    url = f"http://127.0.0.1:{port}/mcp"
    shared = [
        sys.executable,
        SERVER,
        "--project",
        str(project),
        "--no-cache",
        "--transport",
        "http",
        "--port",
        str(port),
    ]
    server = subprocess.Popen(shared, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    client = SETUP_NAMES[harness.name]
    try:
        wait_for_port(port, server)
        done = cli("setup", client, "--project", str(project), "--url", url)
        assert done.returncode == 0 and "setup does not start it" in done.stdout, done.stderr
        entry = written_entry(harness, project)
        assert "command" not in entry and url in entry.values(), entry
        assert cli("setup", client, "--project", str(project), "--remove").returncode == 0  # not its hooks
        call: list[Turn] = [[ToolCall(harness.module.tool_name("context_search"), {"query": "rollback canary"})]]
        outputs = []
        for _ in range(2):
            if harness.name == "Gemini CLI":
                settings = {"mcpServers": {"agents-context": entry}}
                run = gemini.run(project, [*call, Say("done")], server=["false"], settings=settings)
            else:
                run = harness.module.run(project, [*call, Say("done")], server=["false"], entry=entry, relayed=[port])
            outputs.append([harness.text(o) for o in harness.module.tool_outputs(run)])
            (project / ".AGENTS" / "deploy.md").write_text(
                "# Deploy\n\n## Rollback\n\nRoll back with the okapi lever.\n"
            )
        assert server.poll() is None, "the shared server stopped"
    finally:
        server.terminate()
        _, err = server.communicate(timeout=30)
    first, second = outputs
    assert len(first) == 1 and "Roll back with the zebra switch" in first[0], (harness.name, first, err[-2000:])
    assert len(second) == 1 and "Roll back with the okapi lever" in second[0], (harness.name, second, err[-2000:])


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def wait_for_port(port: int, process: subprocess.Popen[bytes], timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while not listening(port):
        assert process.poll() is None and time.monotonic() < deadline, "the server did not start listening"
        time.sleep(0.1)


def listening(port: int) -> bool:
    try:
        socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
    except OSError:
        return False
    return True


def test_sessions_of_a_real_client_share_the_server_agents_context_shared_runs(
    harness: Harness, project: Path, tmp_path: Path
) -> None:
    """One server for clients set up with a stdio command: each session's `agents-context-shared`
    relays to the server the first one started. Here the first is a session outside the client
    (whose sandbox ends every process it started, so it cannot start the server itself); two runs
    of the client are answered by that server, the second after a file changed."""
    env = {STATE_ENV: str(tmp_path / "state"), CACHE_ENV: os.environ[CACHE_ENV], relay.IDLE_ENV: "60"}
    args = ["--project", str(project), "--no-cache"]
    state = relay.state_file(args, project, {**os.environ, **env})
    first = subprocess.Popen(
        [str(RELAY), *args], cwd=project, env={**os.environ, **env}, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL
    )
    deadline = time.monotonic() + 120
    while (started := relay.published(state)) is None:
        assert first.poll() is None and time.monotonic() < deadline, "the shared server did not start"
        time.sleep(0.1)
    try:
        entry = {"command": str(RELAY), "args": args, "env": env}
        call: list[Turn] = [[ToolCall(harness.module.tool_name("context_search"), {"query": "rollback canary"})]]
        outputs = []
        for _ in range(2):
            if harness.name == "Gemini CLI":
                run = gemini.run(
                    project,
                    [*call, Say("done")],
                    server=["false"],
                    settings={"mcpServers": {"agents-context": {**entry, "trust": True}}},
                )
            else:
                run = harness.module.run(
                    project, [*call, Say("done")], server=["false"], entry=entry, relayed=[started.port]
                )
            outputs.append([harness.text(o) for o in harness.module.tool_outputs(run)])
            (project / ".AGENTS" / "deploy.md").write_text(
                "# Deploy\n\n## Rollback\n\nRoll back with the okapi lever.\n"
            )
        assert relay.published(state) == started, "a second server was started"
    finally:
        assert first.stdin is not None
        first.stdin.close()
        first.wait(timeout=30)
        with contextlib.suppress(OSError):
            os.kill(started.pid, signal.SIGTERM)
    log = state.with_suffix(".log").read_text(encoding="utf-8")
    assert log.count("# a session joined") == 3, log[-2000:]  # the first, then the client's two
    first_out, second_out = outputs
    assert len(first_out) == 1 and "Roll back with the zebra switch" in first_out[0], (harness.name, first_out)
    assert len(second_out) == 1 and "Roll back with the okapi lever" in second_out[0], (harness.name, second_out)
