"""A search tool call over real stdio against the no-op tool on the same server: the protocol floor.

The client is the SDK's `Client` launching `bench/stdio_server.py` as a subprocess. Calls
alternate between the search tool and `noop` on one connection, so both see the same process,
the same event loop and the same machine noise.
"""

from __future__ import annotations

import sys
import tempfile
import time
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
