"""Freshness benchmark: how long from a save on disk to an answer that reflects it.

    uv run python bench/fresh.py            # full run (copies tldr: a few minutes)
    uv run python bench/fresh.py --smoke    # seconds; what CI runs (tests/test_bench_fresh.py)

1. Save-to-searchable latency over real stdio (`python server.py`): write a file containing a
   new unique word, then search until an answer returns it; p50/p95 over N edits. Deletions:
   delete such a file, search until no answer holds it, and count answers after the deletion that
   still name it (must be zero). On this repository's `.AGENTS/` (context_search), and with
   `../shared/corpora/tldr/` as a `--docs` root (search_docs).
2. One-file update against a full rebuild at 1k, 10k and 100k sections, in the same run.
3. The read-your-writes stat sweep's cost on `.AGENTS` folders of several sizes.

Everything runs on copies in a temporary folder: the benchmark never writes to the repository
or to `../shared`.
"""

from __future__ import annotations

import argparse
import json
import platform
import random
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
from mcp import Client, StdioServerParameters
from mcp.types import TextContent

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from corpus.roots import make_roots  # noqa: E402
from live.index import LiveIndex  # noqa: E402

TLDR = REPO.parent / "shared" / "corpora" / "tldr"
VOCAB = [f"w{i}" for i in range(5000)]


def percentiles(samples: list[float]) -> dict[str, float]:
    ordered = sorted(samples)
    p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
    return {
        "n": len(ordered),
        "p50_ms": statistics.median(ordered) * 1000,
        "p95_ms": p95 * 1000,
        "max_ms": ordered[-1] * 1000,
    }


# --- 1. save to searchable, over real stdio -----------------------------------------------------


async def call(client: Client, tool: str, query: str) -> str:
    result = await client.call_tool(tool, {"query": query, "k": 3})
    block = result.content[0]
    assert isinstance(block, TextContent)
    return block.text


async def status(client: Client) -> str:
    block = (await client.call_tool("context_status", {})).content[0]
    assert isinstance(block, TextContent)
    return block.text


async def latencies(
    folder: Path, server_args: list[str], tool: str, edits: int, seed: int, pick_dir: Callable[[int], Path]
) -> dict[str, Any]:
    rng = random.Random(seed)
    # A cache folder of the run's own (the SDK starts servers with a filtered environment, and the
    # user's real cache is never touched), empty: the start-up is a cold one.
    cache = folder.parent / "bench-cache"
    args = [str(REPO / "server.py"), *server_args, "--cache-dir", str(cache)]
    params = StdioServerParameters(command=sys.executable, args=args)
    saves: list[float] = []
    deletes: list[float] = []
    stale_answers = 0
    calls = 0
    started = time.perf_counter()
    async with Client(params, mode="legacy") as client:
        handshake = time.perf_counter() - started
        # A large --docs root is indexed in the background: edits are timed once it is whole.
        while "INDEXING" in await status(client):
            await anyio.sleep(0.1)
        ready = time.perf_counter() - started
        await call(client, tool, "warm up")
        created: list[tuple[Path, str]] = []
        for i in range(edits):
            word = f"fresh{seed}x{i}q{rng.randrange(10**9)}"
            target = pick_dir(i) / f"bench-fresh-{i}.md"
            target.write_text(f"# Benchmark note {i}\n\nThe unique word is {word}.\n")
            t0 = time.perf_counter()
            while target.name not in await call(client, tool, word):  # a hit from this file
                calls += 1
            saves.append(time.perf_counter() - t0)
            created.append((target, word))
        for target, word in created:
            target.unlink()
            t0 = time.perf_counter()
            gone = False
            while not gone:
                text = await call(client, tool, word)
                calls += 1
                gone = target.name not in text  # (a miss echoes the query, not the file)
                stale_answers += 0 if gone else 1
            deletes.append(time.perf_counter() - t0)
    return {
        "handshake_s": handshake,
        "startup_s": ready,
        "save": percentiles(saves),
        "delete": percentiles(deletes),
        "stale_answers_after_delete": stale_answers,
        "tool_calls": calls,
        "folder": str(folder),
    }


def bench_agents(tmp: Path, edits: int) -> dict[str, Any]:
    agents = tmp / "agents-copy" / ".AGENTS"
    shutil.copytree(REPO / ".AGENTS", agents)
    return anyio.run(latencies, agents, ["--root", str(agents)], "context_search", edits, 1, lambda i: agents)


def bench_tldr(tmp: Path, edits: int) -> dict[str, Any]:
    agents = tmp / "tldr-run" / ".AGENTS"
    shutil.copytree(REPO / ".AGENTS", agents)
    docs = tmp / "tldr-run" / "tldr"
    copy_started = time.perf_counter()
    shutil.copytree(TLDR, docs)
    copy_s = time.perf_counter() - copy_started
    folders = sorted(p for p in (docs / "pages").iterdir() if p.is_dir())
    result = anyio.run(
        latencies,
        docs,
        ["--root", str(agents), "--docs", str(docs)],
        "search_docs",
        edits,
        2,
        lambda i: folders[i % len(folders)],
    )
    result["copy_s"] = copy_s
    result["files"] = sum(1 for _ in docs.rglob("*.md"))
    return result


# --- 2. one-file update against a full rebuild -----------------------------------------------------


def synthetic(folder: Path, sections: int, per_file: int = 10, seed: int = 7) -> list[Path]:
    rng = random.Random(seed)
    weights = [1 / (i + 1) for i in range(len(VOCAB))]
    paths = []
    for f in range(sections // per_file):
        path = folder / f"d{f // 500:03d}" / f"file{f:06d}.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        parts = []
        for s in range(per_file):
            words = rng.choices(VOCAB, weights, k=rng.randint(40, 160))
            parts.append(f"## Section {f}.{s}\n\n{' '.join(words)}\n")
        path.write_text("\n".join(parts))
        paths.append(path)
    return paths


def bench_updates(tmp: Path, sizes: list[int], updates: int) -> list[dict[str, Any]]:
    rows = []
    for sections in sizes:
        root = tmp / f"synthetic-{sections}" / ".AGENTS"
        paths = synthetic(root, sections)
        t0 = time.perf_counter()
        live = LiveIndex(make_roots([root]), settle_s=0)
        rebuild = time.perf_counter() - t0
        (r,) = live.roots
        rng = random.Random(sections)
        refresh_times, sweep_times = [], []
        for i in range(updates):
            path = rng.choice(paths)
            path.write_text(path.read_text() + f"\n## Added {i}\n\nupdate{i} {' '.join(rng.choices(VOCAB, k=80))}\n")
            t0 = time.perf_counter()
            assert live.refresh(r, [path]).count == 1
            refresh_times.append(time.perf_counter() - t0)
        for _ in range(max(3, updates // 4)):
            t0 = time.perf_counter()
            live.sweep(r)
            sweep_times.append(time.perf_counter() - t0)
        rows.append(
            {
                "sections": live.library.sections.n_docs,
                "files": len(paths),
                "full_rebuild_s": rebuild,
                "one_file_update": percentiles(refresh_times),
                "stat_sweep_no_change": percentiles(sweep_times),
                "rebuild_over_update": rebuild / statistics.median(refresh_times),
            }
        )
        shutil.rmtree(root.parent)
    return rows


# --- 3. the read-your-writes sweep ------------------------------------------------------------------


def bench_sweep(tmp: Path, sizes: list[int], repeats: int) -> list[dict[str, Any]]:
    rows = []
    cases: list[tuple[str, Path]] = [("this repo's .AGENTS", REPO / ".AGENTS")]
    for files in sizes:
        root = tmp / f"sweep-{files}" / ".AGENTS"
        synthetic(root, files * 5, per_file=5)
        cases.append((f"{files} files", root))
    for name, root in cases:
        live = LiveIndex(make_roots([root]), settle_s=0)
        (r,) = live.roots
        times = []
        for _ in range(repeats):
            t0 = time.perf_counter()
            live.sweep(r)
            times.append(time.perf_counter() - t0)
        rows.append({"case": name, "files": len(live.corpus.files), "sweep": percentiles(times)})
    return rows


# --- report -------------------------------------------------------------------------------------


def machine() -> str:
    cpu = "unknown CPU"
    cpuinfo = Path("/proc/cpuinfo")
    if cpuinfo.exists():
        names = [
            line.split(":", 1)[1].strip() for line in cpuinfo.read_text().splitlines() if line.startswith("model name")
        ]
        cpu = f"{names[0]} x{len(names)}" if names else cpu
    return f"{cpu}, {platform.system()} {platform.release()}, Python {platform.python_version()}"


def fmt(p: dict[str, float]) -> str:
    return f"p50 {p['p50_ms']:.1f} ms, p95 {p['p95_ms']:.1f} ms, max {p['max_ms']:.1f} ms (n={p['n']})"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--smoke", action="store_true", help="a few edits, small corpora, no tldr")
    parser.add_argument("--edits", type=int, default=None, help="edits per latency run (default 50)")
    parser.add_argument("--no-tldr", action="store_true", help="skip the 38,430-file tldr run")
    parser.add_argument("--json", type=Path, help="also write the raw results here")
    args = parser.parse_args()
    edits = args.edits or (5 if args.smoke else 50)
    sizes = [1_000] if args.smoke else [1_000, 10_000, 100_000]
    results: dict[str, Any] = {"machine": machine(), "edits": edits}
    print(f"# agents-context freshness benchmark\nmachine: {results['machine']}\n")
    with tempfile.TemporaryDirectory(prefix="ac-fresh-") as tmp_name:
        tmp = Path(tmp_name)
        results["agents"] = bench_agents(tmp, edits)
        a = results["agents"]
        print("## save to searchable over stdio, this repo's .AGENTS/ (context_search)")
        print(f"save:   {fmt(a['save'])}")
        print(f"delete: {fmt(a['delete'])}; stale answers: {a['stale_answers_after_delete']}\n")
        if not args.smoke and not args.no_tldr and TLDR.exists():
            results["tldr"] = bench_tldr(tmp, edits)
            t = results["tldr"]
            print(f"## save to searchable over stdio, tldr as --docs ({t['files']} files; search_docs)")
            print(
                f"server start-up: handshake {t['handshake_s']:.1f} s, whole index (background) {t['startup_s']:.1f} s"
            )
            print(f"save:   {fmt(t['save'])}")
            print(f"delete: {fmt(t['delete'])}; stale answers: {t['stale_answers_after_delete']}\n")
        results["updates"] = bench_updates(tmp, sizes, 10 if args.smoke else 40)
        print("## one-file update against a full rebuild")
        print("| sections | files | full rebuild | one-file update p50 / p95 | ratio | stat sweep, no change |")
        print("|---|---|---|---|---|---|")
        for row in results["updates"]:
            u, s = row["one_file_update"], row["stat_sweep_no_change"]
            print(
                f"| {row['sections']:,} | {row['files']:,} | {row['full_rebuild_s']:.2f} s | "
                f"{u['p50_ms']:.1f} / {u['p95_ms']:.1f} ms | {row['rebuild_over_update']:.0f}x | "
                f"{s['p50_ms']:.1f} ms |"
            )
        results["sweep"] = bench_sweep(tmp, [20] if args.smoke else [100, 500], 20 if args.smoke else 200)
        print("\n## read-your-writes sweep (before every tool call), nothing changed")
        for row in results["sweep"]:
            print(f"- {row['case']} ({row['files']} files): {fmt(row['sweep'])}")
    if args.json:
        args.json.write_text(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
