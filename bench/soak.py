"""Soak: random tool calls and file operations against one server process for a long time, with its
memory sampled. Manual (10 minutes by default):

    uv run python bench/soak.py                 # 600 s
    uv run python bench/soak.py --seconds 30    # a quick look

Reports operations done, errors, and the server's RSS at start (after a warm-up), at the end and at
its highest; growth beyond noise would show a leak. Linux only (RSS from /proc).
"""

from __future__ import annotations

import argparse
import random
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

import anyio
from mcp import Client, StdioServerParameters

REPO = Path(__file__).resolve().parents[1]
WORDS = "deploy rollback secrets tokens review tests logging errors cache index watcher budget".split()


def rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


def server_pid(marker: str) -> int:
    for proc in Path("/proc").iterdir():
        if proc.name.isdigit():
            try:
                cmdline = (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode()
            except OSError:
                continue
            if marker in cmdline and "server.py" in cmdline:
                return int(proc.name)
    raise RuntimeError("server process not found")


async def soak(seconds: float, seed: int) -> dict[str, object]:
    rng = random.Random(seed)
    tmp = Path(tempfile.mkdtemp(prefix="ac-soak-"))
    agents = tmp / ".AGENTS"
    shutil.copytree(REPO / ".AGENTS", agents)
    docs = tmp / "docs"
    for i in range(500):
        (docs / f"d{i // 50}").mkdir(parents=True, exist_ok=True)
        (docs / f"d{i // 50}" / f"page{i}.md").write_text(f"# Page {i}\n\n{' '.join(rng.choices(WORDS, k=200))}\n")
    params = StdioServerParameters(
        command=sys.executable, args=[str(REPO / "server.py"), "--root", str(agents), "--docs", str(docs)]
    )
    ops = errors = 0
    samples: list[tuple[float, int]] = []
    try:
        async with Client(params, mode="legacy") as client:
            pid = server_pid(str(agents))
            started = time.monotonic()
            warm_until = started + min(30.0, seconds / 5)
            next_sample = started
            while time.monotonic() - started < seconds:
                kind = rng.random()
                try:
                    if kind < 0.5:
                        tool = rng.choice(["context_search", "search_docs"])
                        query = " ".join(rng.choices(WORDS, k=rng.randint(1, 4)))
                        result = await client.call_tool(tool, {"query": query, "k": rng.randint(1, 10)})
                    elif kind < 0.6:
                        result = await client.call_tool(rng.choice(["pinned_context", "context_status"]), {})
                    elif kind < 0.65:
                        result = await client.call_tool("read_context", {"path": "security.md", "section": "Secrets"})
                    else:
                        target = agents / f"soak{rng.randrange(30)}.md"
                        page = docs / f"d{rng.randrange(10)}" / f"page{rng.randrange(500)}.md"
                        choice = rng.random()
                        if choice < 0.6:
                            target.write_text(f"# Soak\n\n{' '.join(rng.choices(WORDS, k=80))}\n")
                        elif choice < 0.8:
                            target.unlink(missing_ok=True)
                        else:
                            page.write_text(f"# Page\n\n{' '.join(rng.choices(WORDS, k=200))}\n")
                        result = None
                    errors += bool(result and result.is_error)
                except Exception:
                    errors += 1
                ops += 1
                now = time.monotonic()
                if now >= next_sample:
                    if now >= warm_until:
                        samples.append((now - started, rss_kib(pid)))
                    next_sample = now + 10
                await anyio.sleep(0.002)
            samples.append((time.monotonic() - started, rss_kib(pid)))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    rss = [r for _, r in samples]
    first, last = rss[:3], rss[-3:]
    return {
        "seconds": seconds,
        "operations": ops,
        "errors": errors,
        "rss_start_mib": statistics.median(first) / 1024,
        "rss_end_mib": statistics.median(last) / 1024,
        "rss_max_mib": max(rss) / 1024,
        "samples": len(rss),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=600)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    result = anyio.run(soak, args.seconds, args.seed)
    print(f"# soak: {result['seconds']:.0f} s, {result['operations']} operations, {result['errors']} errors")
    print(
        f"server RSS: start {result['rss_start_mib']:.1f} MiB, end {result['rss_end_mib']:.1f} MiB, "
        f"max {result['rss_max_mib']:.1f} MiB ({result['samples']} samples)"
    )


if __name__ == "__main__":
    main()
