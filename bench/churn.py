"""Answers under churn: how long each call takes while files keep changing in its roots.

    uv run python bench/churn.py                        # rates 0, 100, 1,000, 5,000 and max (a few minutes)
    uv run python bench/churn.py --smoke                # seconds: rates 0 and 100
    uv run python bench/churn.py --rates 0,1000 --seconds 20 --json out.json

The real server runs over stdio (`python server.py --root .AGENTS --docs docs`) on a temporary
project: a copy of this repository's `.AGENTS/`, 300 docs pages, and a pool of churned names in
each root (`churn/c<i>.md`, about half of them present at any moment). A writer process creates,
rewrites (in place or by temp file and rename), renames and deletes those files at a fixed rate
(`max`: as fast as it can), and meanwhile one client calls `resources/list`, `resources/read`,
`context_search`, `search_docs` and `context_status` back to back, each timed from request to
answer. Per rate it prints the rate the writer achieved, p50, p95 and the worst call per tool, how
many answers said they were not fresh (`partial=1` on a search, a root marked changing in
status), and, once the writer stops, how long until the server's answers equal the disk (every
`.AGENTS` file listed, and the file counts of both roots). It asserts no timings.

Everything is written to a temporary folder, removed at the end; the server's cache too.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import random
import shutil
import sys
import tempfile
import time
from multiprocessing.sharedctypes import Synchronized
from multiprocessing.synchronize import Event as EventType
from pathlib import Path
from typing import Any

import anyio
from mcp import Client, StdioServerParameters
from mcp.types import TextContent

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from bench.measure import fmt_seconds, machine, median, percentile  # noqa: E402

TOOLS = ("resources/list", "resources/read", "context_search", "search_docs", "context_status")
WORDS = "deploy rollback secrets tokens review tests logging errors cache index watcher budget churn".split()
POOL = 200
"""Churned names per root (`churn/c0.md` ...)."""
DOCS_PAGES = 300
RATES = ("0", "100", "1000", "5000", "max")


# --- the writer -------------------------------------------------------------------------------------


def page(rng: random.Random, i: int) -> str:
    return f"# Churn {i}\n\n## Notes\n\n{' '.join(rng.choices(WORDS, k=rng.randint(60, 240)))}\n"


def write(folders: list[str], rate: float, seed: int, stop: EventType, done: Synchronized[int]) -> None:
    """Create, rewrite, rename and delete files of `folders`' churn pools at `rate` operations a
    second (0: as fast as possible) until `stop`; `done` counts the operations made."""
    rng = random.Random(seed)
    pools = [Path(f) / "churn" for f in folders]
    present = [{p.name for p in pool.glob("*.md")} for pool in pools]
    started = time.perf_counter()
    ops = 0
    while not stop.is_set():
        if rate and ops >= (time.perf_counter() - started) * rate:
            time.sleep(0.001)
            continue
        which = rng.randrange(len(pools))
        pool, names = pools[which], present[which]
        name = f"c{rng.randrange(POOL)}.md"
        path = pool / name
        roll = rng.random()
        try:
            if name not in names:  # create
                path.write_text(page(rng, ops))
                names.add(name)
            elif roll < 0.3:  # rewrite in place (an editor that truncates and writes)
                path.write_text(page(rng, ops))
            elif roll < 0.55:  # rewrite by temp file and rename (an atomic save)
                temp = pool / f"{name}.tmp"
                temp.write_text(page(rng, ops))
                temp.replace(path)
            elif roll < 0.8:  # rename to a free name
                other = f"c{rng.randrange(POOL)}.md"
                if other not in names:
                    path.replace(pool / other)
                    names.discard(name)
                    names.add(other)
            else:  # delete
                path.unlink()
                names.discard(name)
        except FileNotFoundError:
            names.discard(name)
        ops += 1
        done.value = ops


# --- the client -------------------------------------------------------------------------------------


def project(tmp: Path, seed: int) -> tuple[Path, Path]:
    rng = random.Random(seed)
    agents = tmp / "project" / ".AGENTS"
    shutil.copytree(REPO / ".AGENTS", agents)
    docs = tmp / "project" / "docs"
    for i in range(DOCS_PAGES):
        folder = docs / f"d{i // 50}"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"page{i}.md").write_text(page(rng, i))
    for root in (agents, docs):
        (root / "churn").mkdir()
        for i in range(0, POOL, 2):
            (root / "churn" / f"c{i}.md").write_text(page(rng, i))
    return agents, docs


def on_disk(root: Path) -> set[str]:
    return {p.relative_to(root).as_posix() for p in root.rglob("*.md") if p.is_file()}


async def timed_round(client: Client, uri: str, times: dict[str, list[float]], flagged: dict[str, int]) -> None:
    t = time.perf_counter()
    await client.list_resources()
    times["resources/list"].append(time.perf_counter() - t)
    t = time.perf_counter()
    await client.read_resource(uri)
    times["resources/read"].append(time.perf_counter() - t)
    for tool, query in (("context_search", "deploy rollback churn"), ("search_docs", "churn watcher budget")):
        t = time.perf_counter()
        result = await client.call_tool(tool, {"query": query, "k": 5})
        times[tool].append(time.perf_counter() - t)
        block = result.content[0]
        if isinstance(block, TextContent) and "partial=1" in block.text.rsplit("\n", 1)[-1]:
            flagged[tool] += 1
    t = time.perf_counter()
    status = await client.call_tool("context_status", {})
    times["context_status"].append(time.perf_counter() - t)
    report = status.structured_content or {}
    if any(r.get("indexing") for r in report.get("roots", [])):
        flagged["context_status"] += 1


async def equal_to_disk(client: Client, agents: Path, docs: Path) -> bool:
    """Every `.AGENTS` markdown file listed (no more), and both roots' file counts as on disk."""
    listed = {
        str(r.uri).removeprefix("agents://")
        for r in (await client.list_resources()).resources
        if str(r.uri).startswith("agents://")
    }
    report = (await client.call_tool("context_status", {})).structured_content or {}
    files = {r["label"]: r["files"] for r in report.get("roots", [])}
    return listed == on_disk(agents) and files.get("docs") == len(on_disk(docs))


async def run(rates: list[str], seconds: float, seed: int, tmp: Path) -> list[dict[str, Any]]:
    agents, docs = project(tmp, seed)
    args = [str(REPO / "server.py"), "--root", str(agents), "--docs", str(docs)]
    args += ["--cache-dir", str(tmp / "cache"), "--log-level", "WARNING"]
    rows: list[dict[str, Any]] = []
    ctx = mp.get_context("spawn")
    async with Client(StdioServerParameters(command=sys.executable, args=args), mode="legacy") as client:
        uri = next(str(r.uri) for r in (await client.list_resources()).resources if "overview.md" in str(r.uri))
        for _ in range(3):  # warm up
            await timed_round(client, uri, {t: [] for t in TOOLS}, dict.fromkeys(TOOLS, 0))
        for n, label in enumerate(rates):
            rate = 0.0 if label == "max" else float(label)
            stop, done = ctx.Event(), ctx.Value("q", 0)
            writer = None
            if label != "0":
                writer = ctx.Process(target=write, args=([str(agents), str(docs)], rate, seed + n, stop, done))
                writer.start()
                await anyio.sleep(1.0)  # the churn under way before the first timed call
            times: dict[str, list[float]] = {t: [] for t in TOOLS}
            flagged = dict.fromkeys(TOOLS, 0)
            ops_before, started = done.value, time.perf_counter()
            while time.perf_counter() - started < seconds:
                await timed_round(client, uri, times, flagged)
            elapsed = time.perf_counter() - started
            achieved = (done.value - ops_before) / elapsed
            stop.set()
            if writer is not None:
                writer.join()
            quiet = time.perf_counter()
            with anyio.fail_after(120):
                while not await equal_to_disk(client, agents, docs):
                    await anyio.sleep(0.05)
            rows.append(
                {
                    "rate": label,
                    "achieved_ops_s": achieved,
                    "seconds": elapsed,
                    "rounds": len(times["context_status"]),
                    "tools": {
                        t: {
                            "n": len(v),
                            "p50_s": median(v),
                            "p95_s": percentile(v, 95),
                            "max_s": max(v),
                            "not_fresh": flagged[t],
                        }
                        for t, v in times.items()
                    },
                    "quiet_to_equal_s": time.perf_counter() - quiet,
                }
            )
            print_row(rows[-1])
    return rows


def print_row(row: dict[str, Any]) -> None:
    target = "as fast as it can" if row["rate"] == "max" else f"{int(row['rate']):,} ops/s"
    print(
        f"\n## churn {target}: achieved {row['achieved_ops_s']:,.0f} ops/s over {row['seconds']:.1f} s, "
        f"{row['rounds']} rounds; once the writer stopped, answers equal the disk after "
        f"{fmt_seconds(row['quiet_to_equal_s'])}"
    )
    print("| call | n | p50 | p95 | worst | answers not fresh |")
    print("|---|---|---|---|---|---|")
    for tool, s in row["tools"].items():
        flag = str(s["not_fresh"]) if tool in ("context_search", "search_docs", "context_status") else "-"
        print(
            f"| {tool} | {s['n']} | {fmt_seconds(s['p50_s'])} | {fmt_seconds(s['p95_s'])} | "
            f"{fmt_seconds(s['max_s'])} | {flag} |"
        )
    sys.stdout.flush()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--smoke", action="store_true", help="rates 0 and 100, 2 s each")
    parser.add_argument("--rates", default=None, help=f"comma-separated ops/s, or max (default {','.join(RATES)})")
    parser.add_argument("--seconds", type=float, default=None, help="timed calls per rate (default 15)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--json", type=Path, help="also write the raw results here")
    args = parser.parse_args()
    rates = (args.rates or ("0,100" if args.smoke else ",".join(RATES))).split(",")
    seconds = args.seconds or (2.0 if args.smoke else 15.0)
    info = machine()
    print(
        f"# agents-context under churn\nmachine: {info['cpu']} x{info['cores']}, {info['platform']}, "
        f"Python {info['python']}; {POOL} churned names per root, {seconds:.0f} s of calls per rate"
    )
    tmp = Path(tempfile.mkdtemp(prefix="ac-churn-"))
    try:
        rows = anyio.run(run, rates, seconds, args.seed, tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    if args.json:
        args.json.write_text(json.dumps({"machine": info, "rows": rows}, indent=2))


if __name__ == "__main__":
    main()
