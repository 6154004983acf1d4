"""A search tool call over real stdio against the no-op tool on the same server: the protocol floor.

The client is the SDK's `Client` launching `bench/stdio_server.py` as a subprocess. Calls
alternate between the search tool and `noop` on one connection, so both see the same process,
the same event loop and the same machine noise.
"""

from __future__ import annotations

import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal

from bench.measure import median, percentile

LAUNCHER = str(Path(__file__).resolve().parent / "stdio_server.py")


async def measure(
    server_args: list[str],
    tool: str,
    queries: list[str],
    calls: int,
    mode: Literal["legacy", "auto"] = "legacy",
    warmup: int = 5,
) -> dict[str, Any]:
    from mcp import Client, StdioServerParameters

    # The run's own cache folder (the SDK starts servers with a filtered environment, and the
    # user's real cache is never touched), removed afterwards.
    with tempfile.TemporaryDirectory(prefix="agents-context-bench-cache-") as cache:
        args = [LAUNCHER, "--log-level", "WARNING", "--cache-dir", cache, *server_args]
        params = StdioServerParameters(command=sys.executable, args=args)
        t0 = time.perf_counter()
        async with Client(params, mode=mode) as client:
            connected_s = time.perf_counter() - t0
            first = await client.call_tool(tool, {"query": queries[0]})
            first_answer_s = time.perf_counter() - t0
            assert not first.is_error, first
            for i in range(warmup):
                await client.call_tool("noop", {})
                await client.call_tool(tool, {"query": queries[i % len(queries)]})
            search_s: list[float] = []
            noop_s: list[float] = []
            for i in range(calls):
                query = queries[i % len(queries)]
                t = time.perf_counter()
                await client.call_tool("noop", {})
                noop_s.append(time.perf_counter() - t)
                t = time.perf_counter()
                await client.call_tool(tool, {"query": query})
                search_s.append(time.perf_counter() - t)
    return {
        "mode": mode,
        "tool": tool,
        "calls": calls,
        "spawn_to_connected_s": connected_s,
        "spawn_to_first_answer_s": first_answer_s,
        "search_p50": median(search_s),
        "search_p95": percentile(search_s, 95),
        "noop_p50": median(noop_s),
        "noop_p95": percentile(noop_s, 95),
    }


def measure_raw(
    server_args: list[str], tool: str, queries: list[str], calls: int, warmup: int = 5, settle_s: float | None = None
) -> dict[str, Any]:
    """The same alternation over the same stdio, with a bare JSON-RPC client: one request line
    written, one response line read, nothing parsed beyond finding it. This is the server and the
    transport alone; the SDK `Client` figure adds what a client spends checking the result
    against the tool's output schema (a search result is validated, the no-op's text is not).
    Then the same alternation with `replay` of each answer instead of the search: the same
    answers again with no search, so the gap between the no-op and a search splits into what the
    answer's size costs and what the search costs.

    By default the calls start as soon as the server answers (for a large `--docs` root, while
    its watcher is still setting up its watches). With `settle_s`, they start once
    `context_status` says the watcher is healthy and no root is indexing, and the server has then
    been left alone for `settle_s` seconds: the steady state of a long session."""
    import json
    import subprocess

    with tempfile.TemporaryDirectory(prefix="agents-context-bench-cache-") as cache:
        args = [sys.executable, LAUNCHER, "--log-level", "WARNING", "--cache-dir", cache, *server_args]
        proc = subprocess.Popen(args, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        assert proc.stdin is not None and proc.stdout is not None
        stdin, stdout = proc.stdin, proc.stdout
        ids = iter(range(1, 10**9))

        def rpc(method: str, params: dict[str, Any]) -> bytes:
            number = next(ids)
            stdin.write(json.dumps({"jsonrpc": "2.0", "id": number, "method": method, "params": params}).encode())
            stdin.write(b"\n")
            stdin.flush()
            while True:  # skip notifications; our answer carries our id
                line = stdout.readline()
                if not line:
                    raise RuntimeError("the server closed stdout")
                if f'"id":{number}'.encode() in line.replace(b" ", b""):
                    return line

        try:
            rpc("initialize", {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "raw"}})
            stdin.write(b'{"jsonrpc": "2.0", "method": "notifications/initialized"}\n')
            stdin.flush()
            if settle_s is not None:
                deadline = time.monotonic() + 600
                while time.monotonic() < deadline:
                    answer = json.loads(rpc("tools/call", {"name": "context_status", "arguments": {}}))
                    status = answer["result"]["structuredContent"]
                    if status["watcher"]["healthy"] and not any(r["indexing"] for r in status["roots"]):
                        break
                    time.sleep(0.5)
                time.sleep(settle_s)
            for i in range(warmup):
                rpc("tools/call", {"name": "noop", "arguments": {}})
                rpc("tools/call", {"name": tool, "arguments": {"query": queries[i % len(queries)]}})

            def alternate(name: str, arguments: Callable[[str], dict[str, Any]]) -> tuple[list[float], list[float]]:
                """`calls` pairs of a no-op call and a `name` call, timed apart."""
                noop_s: list[float] = []
                tool_s: list[float] = []
                for i in range(calls):
                    t = time.perf_counter()
                    rpc("tools/call", {"name": "noop", "arguments": {}})
                    noop_s.append(time.perf_counter() - t)
                    t = time.perf_counter()
                    answer = rpc("tools/call", {"name": name, "arguments": arguments(queries[i % len(queries)])})
                    tool_s.append(time.perf_counter() - t)
                    if b'"isError":true' in answer.replace(b" ", b""):
                        raise RuntimeError(f"{name} answered an error: {answer[:300]!r}")
                return noop_s, tool_s

            noop_s, search_s = alternate(tool, lambda query: {"query": query})
            # Then the same answers again, replayed: apart, so the searches above keep exactly the
            # neighbours they always had (a call in between changes what they find in the caches).
            replay_noop_s, replay_s = alternate("replay", lambda query: {"tool": tool, "query": query})
        finally:
            stdin.close()
            proc.wait(timeout=30)
    return {
        "mode": "raw" if settle_s is None else "settled",
        "tool": tool,
        "calls": calls,
        "search_p50": median(search_s),
        "search_p95": percentile(search_s, 95),
        "noop_p50": median(noop_s),
        "noop_p95": percentile(noop_s, 95),
        "replay_p50": median(replay_s),
        "replay_p95": percentile(replay_s, 95),
        "replay_noop_p50": median(replay_noop_s),
    }
