"""How fast the server exits when its client goes away: stdin EOF, and SIGTERM (POSIX).

    uv run python bench/shutdown.py [--runs 10]

Each run starts `python server.py` on this repository's .AGENTS/, completes the MCP handshake and
one tool call, then closes stdin (or sends SIGTERM) and times the exit. Target: under 1 s. The
servers' cache goes to a temporary folder ($AGENTS_CONTEXT_CACHE_DIR), removed at the end: the
user's cache is never written.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from live.cache import ENV  # noqa: E402

INIT = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "bench", "version": "0"}}


def line(message: dict[str, object]) -> bytes:
    return (json.dumps(message) + "\n").encode()


def one(how: str, cache: Path) -> float:
    proc = subprocess.Popen(
        [sys.executable, str(REPO / "server.py"), "--root", str(REPO / ".AGENTS")],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env={**os.environ, ENV: str(cache)},
    )
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write(line({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": INIT}))
    proc.stdin.write(line({"jsonrpc": "2.0", "method": "notifications/initialized"}))
    proc.stdin.write(
        line(
            {
                "jsonrpc": "2.0",
                "id": 2,
                "method": "tools/call",
                "params": {"name": "context_search", "arguments": {"query": "secrets"}},
            }
        )
    )
    proc.stdin.flush()
    for _ in range(2):
        proc.stdout.readline()
    started = time.perf_counter()
    if how == "eof":
        proc.stdin.close()
    else:
        proc.send_signal(signal.SIGTERM)
    proc.wait(timeout=30)
    elapsed = time.perf_counter() - started
    proc.stdout.close()
    if not proc.stdin.closed:
        proc.stdin.close()
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=10)
    args = parser.parse_args()
    kinds = ["eof"] + (["sigterm"] if os.name == "posix" else [])
    for how in kinds:
        with tempfile.TemporaryDirectory(prefix="ac-shutdown-cache-") as cache:
            times = [one(how, Path(cache)) for _ in range(args.runs)]
        print(
            f"{how:8} exit: median {statistics.median(times) * 1000:.0f} ms, "
            f"max {max(times) * 1000:.0f} ms over {len(times)} runs (target < 1000 ms)"
        )


if __name__ == "__main__":
    main()
