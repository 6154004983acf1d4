"""Many client sessions on one server over streamable HTTP: calls a second and latency, with and
without a writer changing a file every 20 ms, beside the no-op tool on the same server (the floor).

    uv run python -m bench.sessions             # 20 sessions, 6 s a scenario (this repo's .AGENTS)
    uv run python -m bench.sessions --smoke     # 4 sessions, 1 s a scenario (tests/bench/test_sessions.py)

The server is `bench/stdio_server.py` (the real server plus a `noop` tool) with `--transport http`;
each session is the SDK's `Client` on its own connection, calling in a loop. Under the writer,
every answer must come without error, and a word written just before a call must be in its
answer (read-your-writes), unless the answer says its root is still changing (`partial=1`):
"stale" counts the answers that missed it and did not say so.
"""

from __future__ import annotations

import argparse
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import anyio

from bench.measure import percentile

ROOT = Path(__file__).resolve().parents[1]
LAUNCHER = str(ROOT / "bench" / "stdio_server.py")
QUERIES = ["watcher freshness", "pinned files", "output grammar", "cache format", "release checklist"]
WRITE_EVERY_S = 0.02


@dataclass(slots=True)
class Run:
    latencies: list[float] = field(default_factory=list)
    errors: int = 0
    changing: int = 0
    """Answers marked partial (a root still changing): they say they may miss a write."""
    stale: int = 0
    """Answers that missed a write made before the call and did not say so."""
    seconds: float = 0.0

    def row(self, name: str, sessions: int) -> str:
        n = len(self.latencies)
        rate = n / self.seconds if self.seconds else 0.0
        p50, p95 = percentile(self.latencies, 50) * 1000, percentile(self.latencies, 95) * 1000
        cells = f"{n} | {rate:.0f} | {p50:.1f} | {p95:.1f} | {self.errors} | {self.changing} | {self.stale}"
        return f"| {name} | {sessions} | {cells} |"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextmanager
def server(agents: Path, cache: Path) -> Iterator[str]:
    """The real server over streamable HTTP on a free port; its URL."""
    port = free_port()
    args = [LAUNCHER, "--root", str(agents), "--transport", "http", "--port", str(port)]
    args += ["--cache-dir", str(cache), "--log-level", "WARNING", "--debounce-ms", "50"]
    proc = subprocess.Popen([sys.executable, *args], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                if time.monotonic() > deadline or proc.poll() is not None:
                    raise RuntimeError("the server did not start") from None
                time.sleep(0.1)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        proc.terminate()
        proc.wait(timeout=10)


class Writer:
    """Rewrites one `.AGENTS` file every `WRITE_EVERY_S` with a new word; `last` is the word on disk."""

    def __init__(self, path: Path) -> None:
        self.path, self.n, self.stop = path, 0, threading.Event()
        self.lock = threading.Lock()
        self.thread = threading.Thread(target=self._run, daemon=True)

    @property
    def last(self) -> str:
        return f"churnword{self.n:06d}"

    def write_next(self) -> str:
        with self.lock:
            self.n += 1
            self.path.write_text(f"# Churn\n\nThe latest churn word is {self.last}.\n")
            return self.last

    def _run(self) -> None:
        while not self.stop.wait(WRITE_EVERY_S):
            self.write_next()


async def scenario(url: str, sessions: int, seconds: float, tool: str, writer: Writer | None) -> Run:
    from mcp import Client

    run = Run()

    async def session(i: int) -> None:
        async with Client(url) as client:
            await client.call_tool(tool, {} if tool == "noop" else {"query": QUERIES[0]})  # warm
            end = time.monotonic() + seconds
            k = i
            while time.monotonic() < end:
                k += 1
                word = None
                if writer is not None and k % 10 == 0:  # this session's own file: nobody else writes it
                    word = f"checkword{i:02d}x{k:06d}"
                    (writer.path.parent / f"check-{i:02d}.md").write_text(f"# Check\n\nThe word is {word}.\n")
                args = {} if tool == "noop" else {"query": word or QUERIES[k % len(QUERIES)]}
                started = time.perf_counter()
                result = await client.call_tool(tool, args)
                run.latencies.append(time.perf_counter() - started)
                text = "".join(getattr(block, "text", "") for block in result.content)
                run.errors += bool(result.is_error)
                partial = "partial=1" in text.rsplit("\n", 1)[-1]
                run.changing += partial
                run.stale += word is not None and word not in text and not partial

    if writer is not None:
        writer.thread.start()
    started = time.perf_counter()
    try:
        async with anyio.create_task_group() as group:
            for i in range(sessions):
                group.start_soon(session, i)
    finally:
        if writer is not None:
            writer.stop.set()
            writer.thread.join()
    run.seconds = time.perf_counter() - started
    return run


HEADER = [
    "| scenario | sessions | calls | calls/s | p50 ms | p95 ms | errors | marked changing | stale |",
    "|---|---|---|---|---|---|---|---|---|",
]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="bench.sessions", description=__doc__.split("\n")[0])
    parser.add_argument("--sessions", type=int, default=20)
    parser.add_argument("--seconds", type=float, default=6.0, help="how long each scenario runs")
    parser.add_argument("--smoke", action="store_true", help="4 sessions, 1 s a scenario")
    args = parser.parse_args(argv)
    sessions, seconds = (4, 1.0) if args.smoke else (args.sessions, args.seconds)
    with tempfile.TemporaryDirectory(prefix="agents-context-sessions-") as scratch:
        agents = Path(scratch) / "project" / ".AGENTS"
        shutil.copytree(ROOT / ".AGENTS", agents)
        churn = agents / "churn.md"
        Writer(churn).write_next()
        with server(agents, Path(scratch) / "cache") as url:
            print("\n".join(HEADER), flush=True)
            for name, tool, writing in (
                ("no-op tool (floor)", "noop", False),
                ("context_search", "context_search", False),
                ("context_search, writer every 20 ms", "context_search", True),
            ):
                writer = Writer(churn) if writing else None
                run = anyio.run(scenario, url, sessions, seconds, tool, writer)
                print(run.row(name, sessions), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
