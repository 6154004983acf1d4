"""Soak: random tool calls and file operations against one server process for a long time, with its
memory sampled. Manual (10 minutes by default):

    uv run python bench/soak.py                 # 10 minutes
    uv run python bench/soak.py --minutes 2     # a shorter look

Reports operations done, errors, and the server's RSS one minute in, after a warm-up (a third of
the run, at most 3 minutes: the server's bounded caches, LRUs of 1,024 texts and parsed files,
fill with the soak's ever-new texts over the first minutes), at the end and at its highest, then a
verdict: growth from the first samples after the warm-up to the last ones beyond 10% (noise:
allocator pools) shows a leak, and the exit status is then 1 (also on any error); growth within
10% that has not levelled off (over 2.5% in the second half of the run) is "still growing": run
longer to tell. Linux only (RSS from /proc). The server's cache goes to a temporary folder
($AGENTS_CONTEXT_CACHE_DIR), removed at the end with the corpus copy: the user's cache is never
written.
"""

from __future__ import annotations

import argparse
import os
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
sys.path.insert(0, str(REPO))

from live.cache import ENV  # noqa: E402

NOISE = 0.10
"""RSS growth after the warm-up that still counts as noise."""
LEVEL = 0.025
"""Growth over the second half of the run below which RSS has levelled off."""
ALLOCATOR_ENV = ("MALLOC_", "PYTHONMALLOC")
WARM_UP_S = 180.0
"""The longest warm-up (a third of a shorter run)."""
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
        command=sys.executable,
        args=[str(REPO / "server.py"), "--root", str(agents), "--docs", str(docs)],
        # never the user's cache; allocator settings (MALLOC_*, PYTHONMALLOC) pass through, to compare
        env={ENV: str(tmp / "cache")} | {k: v for k, v in os.environ.items() if k.startswith(ALLOCATOR_ENV)},
    )
    files_start = sum(1 for f in agents.rglob("*") if f.is_file()) + 500
    ops = errors = 0
    first_error = ""
    samples: list[tuple[float, int]] = []
    every = min(10.0, max(2.0, seconds / 60))
    try:
        async with Client(params, mode="legacy") as client:
            pid = server_pid(str(agents))
            started = time.monotonic()
            warm_until = started + min(WARM_UP_S, seconds / 3)
            minute = 0
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
                        n = rng.randrange(500)  # an existing page: the corpus keeps its size
                        page = docs / f"d{n // 50}" / f"page{n}.md"
                        choice = rng.random()
                        if choice < 0.6:
                            target.write_text(f"# Soak\n\n{' '.join(rng.choices(WORDS, k=80))}\n")
                        elif choice < 0.8:
                            target.unlink(missing_ok=True)
                        else:
                            page.write_text(f"# Page\n\n{' '.join(rng.choices(WORDS, k=200))}\n")
                        result = None
                    if result and result.is_error:
                        errors += 1
                        first_error = first_error or str(result.content[0])[:200]
                except Exception as exc:
                    errors += 1
                    first_error = first_error or repr(exc)[:200]
                ops += 1
                now = time.monotonic()
                if now >= next_sample:
                    kib = rss_kib(pid)
                    if not minute and now - started >= 60:
                        minute = kib
                    if now >= warm_until:
                        samples.append((now - started, kib))
                    next_sample = now + every
                await anyio.sleep(0.002)
            samples.append((time.monotonic() - started, rss_kib(pid)))
            status = (await client.call_tool("context_status", {})).structured_content or {}
            files = sum(int(r.get("files", 0)) for r in status.get("roots", []))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    rss = [r for _, r in samples]
    start, end = statistics.median(rss[:3]), statistics.median(rss[-3:])
    middle = statistics.median(rss[max(0, len(rss) // 2 - 1) : len(rss) // 2 + 2])
    growth, late = (end - start) / start, (end - middle) / start
    half_minutes = (samples[-1][0] - samples[len(samples) // 2][0]) / 60 or 1.0
    return {
        "seconds": seconds,
        "operations": ops,
        "files": files,
        "files_start": files_start,
        "files_max": files_start + 30,  # the soak's own .AGENTS files: soak0.md .. soak29.md
        "errors": errors,
        "first_error": first_error,
        "rss_minute_mib": minute / 1024,
        "warm_up_s": min(WARM_UP_S, seconds / 3),
        "rss_start_mib": start / 1024,
        "rss_end_mib": end / 1024,
        "rss_max_mib": max(rss) / 1024,
        "growth": growth,
        "late_growth": late,
        "late_mib_per_minute": (end - middle) / 1024 / half_minutes,
        "samples": len(rss),
        "trend_mib": " ".join(f"{r / 1024:.1f}" for r in rss[:: max(1, len(rss) // 8)]),
        "verdict": "growth beyond noise: a leak?"
        if growth > NOISE
        else f"still growing (+{late:.1%} over the second half): run longer to tell"
        if late > LEVEL
        else "levelled off: no growth beyond noise",
        "leak": growth > NOISE,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--minutes", type=float, default=10, help="how long to run (10)")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    result = anyio.run(soak, args.minutes * 60, args.seed)
    print(
        f"# soak: {result['seconds']:.0f} s, {result['operations']} operations, {result['errors']} errors, "
        f"{result['files']} files served at the end ({result['files_start']} at the start, "
        f"at most {result['files_max']}: the soak edits, deletes and re-creates 30 files)"
    )
    if result["first_error"]:
        print(f"first error: {result['first_error']}")
    print(
        f"server RSS: one minute in {result['rss_minute_mib']:.1f} MiB, "
        f"after the warm-up ({result['warm_up_s']:.0f} s) {result['rss_start_mib']:.1f} MiB, "
        f"end {result['rss_end_mib']:.1f} MiB, "
        f"max {result['rss_max_mib']:.1f} MiB ({result['samples']} samples), growth {result['growth']:+.1%}"
    )
    print(f"RSS samples after the warm-up (MiB, evenly spaced): {result['trend_mib']}")
    print(f"second half: {result['late_growth']:+.1%}, {result['late_mib_per_minute']:+.1f} MiB/min")
    print(f"verdict: {result['verdict']} (noise: up to {NOISE:.0%} after the warm-up)")
    if result["leak"] or result["errors"]:
        raise SystemExit(1)


if __name__ == "__main__":
    main()
