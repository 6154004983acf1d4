"""100,000 small files in one folder: start-up, searches and a one-file update, over real stdio.

    uv run python bench/bigfolder.py                  # 100,000 files as a --docs root (2-4 minutes)
    uv run python bench/bigfolder.py --root both      # and as the .AGENTS root (6 minutes more)
    uv run python bench/bigfolder.py --files 10000    # quicker

The files (a heading and a line with a word of their own each) are generated in one folder of a
temporary directory, which `python server.py` then serves as a `--docs` root (kept current by the
watcher alone) and, with `--root agents` or `both`, as the `.AGENTS` root (every call first brings
that root up to date by stat, so every call walks the folder). For each it measures the start-up
with no cache (spawn to the first complete answer: the status counts every file, and no indexing
is under way), a restart with the cache the first run wrote, search latency (20 searches for one
file's own word, each answered by that file) and one-file updates (write a file with a new word,
then search until an answer holds it). The cache goes to the temporary directory, never to the
user's; everything is removed at the end.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
from mcp import Client, StdioServerParameters
from mcp.types import TextContent

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from bench.soak import rss_kib, server_pid  # noqa: E402
from live.cache import ENV  # noqa: E402

LIMIT_S = 900.0
"""Longest wait for any one condition before the run is declared failed."""


def generate(folder: Path, files: int) -> None:
    folder.mkdir(parents=True)
    for i in range(files):
        (folder / f"f{i:06d}.md").write_text(f"# File {i}\n\nThe word of this file is w{i}x.\n")


async def text(client: Client, tool: str, args: dict[str, Any]) -> str:
    result = await client.call_tool(tool, args)
    block = result.content[0]
    assert isinstance(block, TextContent) and not result.is_error, block
    return block.text


async def until(probe: Callable[[], Awaitable[bool]], what: str) -> float:
    """Seconds until `probe` holds, polled as fast as the server answers."""
    started = time.perf_counter()
    while not await probe():
        if time.perf_counter() - started > LIMIT_S:
            raise TimeoutError(f"{what}: not within {LIMIT_S:.0f} s")
        await anyio.sleep(0.05)
    return time.perf_counter() - started


async def complete(client: Client, folder: Path, files: int) -> bool:
    result = await client.call_tool("context_status", {})
    report = result.structured_content or {}
    roots = [r for r in report.get("roots", []) if Path(r["path"]) == folder]
    return bool(roots) and roots[0]["files"] == files and roots[0]["indexing"] is None


def ms(samples: list[float]) -> str:
    ordered = sorted(samples)
    p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
    return f"p50 {statistics.median(ordered) * 1000:.0f} ms, p95 {p95 * 1000:.0f} ms (n={len(ordered)})"


async def serve(kind: str, folder: Path, files: int, tmp: Path, rng: random.Random) -> dict[str, Any]:
    if kind == "agents":
        args, tool = ["--root", str(folder)], "context_search"
    else:
        small = tmp / "small" / ".AGENTS"
        small.mkdir(parents=True, exist_ok=True)
        (small / "overview.md").write_text("# Overview\n\nA small root beside the big docs folder.\n")
        args, tool = ["--root", str(small), "--docs", str(folder)], "search_docs"
    params = StdioServerParameters(
        command=sys.executable,
        args=[str(REPO / "server.py"), *args],
        env={ENV: str(tmp / f"cache-{kind}")},  # never the user's cache
    )
    out: dict[str, Any] = {"root": kind, "tool": tool}
    for start in ("cold", "warm"):
        spawned = time.perf_counter()
        async with Client(params, mode="legacy") as client:
            out[f"{start}_handshake_s"] = time.perf_counter() - spawned

            async def ready(c: Client = client, n: int = files) -> bool:
                return await complete(c, folder, n)

            await until(ready, f"{start} start-up")
            out[f"{start}_complete_s"] = time.perf_counter() - spawned
            if start == "warm":
                break
            searches: list[float] = []
            for _ in range(20):
                i = rng.randrange(files)
                t0 = time.perf_counter()
                found = await text(client, tool, {"query": f"w{i}x", "k": 3})
                searches.append(time.perf_counter() - t0)
                assert f"f{i:06d}.md" in found, found[:300]
            out["search"] = ms(searches)
            updates: list[float] = []
            for n in range(5):
                word = f"fresh{n}q{rng.randrange(10**9)}"
                target = folder / (f"new{n}.md" if n % 2 else f"f{rng.randrange(files):06d}.md")
                target.write_text(f"# Changed {n}\n\nThe new word is {word}.\n")

                async def holds(c: Client = client, w: str = word, t: Path = target) -> bool:
                    return t.name in await text(c, tool, {"query": w, "k": 3})

                updates.append(await until(holds, "one-file update"))
                files += target.name.startswith("new")
            out["update"] = ms(updates)
            out["update_samples_ms"] = [round(u * 1000) for u in updates]
            out["server_rss_mib"] = rss_kib(server_pid(str(folder))) / 1024
            report = (await client.call_tool("context_status", {})).structured_content or {}
            out["watcher"] = report.get("watcher", {}).get("mode")
    return out


async def run(files: int, seed: int, kinds: list[str]) -> list[dict[str, Any]]:
    rng = random.Random(seed)
    tmp = Path(tempfile.mkdtemp(prefix="ac-bigfolder-")).resolve()
    try:
        folder = tmp / "crowd"
        t0 = time.perf_counter()
        generate(folder, files)
        print(f"# {files} files generated in one folder in {time.perf_counter() - t0:.1f} s", flush=True)
        print(f"# load average before serving: {' '.join(f'{x:.1f}' for x in os.getloadavg())}", flush=True)
        results = []
        for kind in kinds:
            result = await serve(kind, folder, files, tmp, rng)
            print(json.dumps(result), flush=True)
            results.append(result)
            for stray in folder.glob("new*.md"):
                stray.unlink()
        return results
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--files", type=int, default=100_000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--root", choices=["agents", "docs", "both"], default="docs")
    args = parser.parse_args()
    kinds = ["agents", "docs"] if args.root == "both" else [args.root]
    results = anyio.run(run, args.files, args.seed, kinds)
    print(f"# load average at the end: {' '.join(f'{x:.1f}' for x in os.getloadavg())} ({os.cpu_count()} CPUs)")
    print()
    print(f"| {args.files:,} files in one folder | `.AGENTS` root | `--docs` root |")
    print("|---|---|---|")
    by = {r["root"]: r for r in results}
    rows = [
        ("start-up, no cache (to a complete index)", "cold_complete_s", "{:.1f} s"),
        ("restart with the cache", "warm_complete_s", "{:.1f} s"),
        ("search (one file's own word)", "search", "{}"),
        ("one-file update to searchable", "update", "{}"),
        ("server RSS", "server_rss_mib", "{:.0f} MiB"),
    ]
    for label, key, fmt in rows:
        cells = [fmt.format(by[k][key]) if k in by else "" for k in ("agents", "docs")]
        print(f"| {label} | {cells[0]} | {cells[1]} |")


if __name__ == "__main__":
    main()
