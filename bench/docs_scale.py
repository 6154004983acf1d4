"""A large `--docs` root as a user meets it: the real server over real stdio, one tree, one run.

    uv run python bench/docs_scale.py                       # tldr (38,430 files): about two minutes
    uv run python bench/docs_scale.py --smoke               # 7,000 generated pages (the test suite runs it)
    uv run python bench/docs_scale.py --docs DIR --json out.json

Each start is `python server.py --root .AGENTS --docs DIR` with a cache folder of the run's own,
driven by a bare JSON-RPC client (one request line written, one response line read):

- cold (an empty cache folder): from spawn, `search_docs` calls one after another (a 10 ms pause
  between) until an answer no longer says `partial=1`; that moment is "complete", and the calls
  made before it are the latencies while the first index is built;
- settled: the same server left alone 5 s, then `--calls` searches: p50 / p95;
- warm: a second server on the same cache folder, timed the same way to its first whole answer;
  then settled again.

With `--qmd FOLDER` (a folder where `npm install --ignore-scripts @tobilu/qmd bun` was run), qmd
is measured on the same files in the same run: `qmd collection add` (its BM25 index; embeddings
need models from the internet and are left out), then `qmd mcp` over stdio, its `query` tool with
one `lex` sub-query and no rerank.

With `--basic-memory VENV` (a virtualenv where `pip install basic-memory` was run; it needs Python
3.12+), basic-memory is measured on a smaller tree, as it indexes about ten files a second: the
first `--basic-memory-files` markdown files of the tree, copied (it writes front matter into the
files it indexes), `basic-memory project add` (its index, timed with its memory), then
`basic-memory mcp` over stdio, its `search_notes` tool; ours cold on the same copy beside it.

Memory is sampled every 20 ms from /proc (Linux only): the server's resident set settled (after
the settled calls) and its peak (VmHWM), and the peak of the server and its worker processes
together, as their resident sets summed and as their PSS summed (below: the libraries they all
map count once). Then `--servers N` servers (5; 2 with `--smoke`) start warm on the same cache at once,
as N client sessions each starting their own would: each is timed to its whole answer, then left
alone 5 s and called; their proportional set sizes (PSS, from /proc/PID/smaps_rollup: a page
shared by k processes counts 1/k in each) are summed and set beside one warm server's alone.
The same N sessions then go through `agents-context-shared` instead: the first starts the one
shared server, the others join it; their relays' PSS and the server's are summed the same way.
Beside it, in the same run, SQLite FTS5 indexes the same files in this process (read,
insert, `bm25()` queries), the engine behind qmd, basic-memory and docs-mcp-server: its cold
build and its query p50 / p95 (in process: no transport).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import random
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from bench.measure import fmt_bytes, fmt_seconds, machine, median, percentile  # noqa: E402

TLDR = REPO.parent / "shared" / "corpora" / "tldr"
QUERIES = [
    "extract tar archive",
    "list open ports",
    "git rebase interactive",
    "docker remove container",
    "convert image to png",
    "show disk usage",
    "kill process by name",
    "download file with curl",
    "create symbolic link",
    "compress directory zip",
]


class Memory:
    """Samples a process's resident set, and that of it and its children together, every 20 ms."""

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self.tree_peak = 0
        self.tree_pss_peak = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.wait(0.02):
            tree = (self.pid, *_children(self.pid))
            self.tree_peak = max(self.tree_peak, sum(_kb(p, "VmRSS") for p in tree) * 1024)
            # Each process's own pages and its share of those it maps with the others (the
            # interpreter's, numpy's): what the tree takes from the machine, where the sum of
            # resident sets counts the shared pages once per process.
            self.tree_pss_peak = max(self.tree_pss_peak, sum(_kb(p, "Pss", "smaps_rollup") for p in tree) * 1024)

    def now(self) -> int:
        return _kb(self.pid, "VmRSS") * 1024

    def peak(self) -> int:
        return _kb(self.pid, "VmHWM") * 1024

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()


def _kb(pid: int, key: str, table: str = "status") -> int:
    try:
        for line in Path(f"/proc/{pid}/{table}").read_text().splitlines():
            if line.startswith(key + ":"):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


def _children(pid: int) -> list[int]:
    found = []
    for task in Path(f"/proc/{pid}/task").glob("*/children"):
        with contextlib.suppress(OSError):
            found += [int(p) for p in task.read_text().split()]
    return found


class Server:
    """An MCP server on stdio, with a bare JSON-RPC client, and the tool call it is timed by."""

    def __init__(
        self, args: list[str], tool: str, arguments: Callable[[str], dict[str, Any]], env: dict[str, str] | None = None
    ) -> None:
        self.spawned = time.perf_counter()
        self.tool, self.arguments = tool, arguments
        self.proc = subprocess.Popen(
            args, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env
        )
        self.memory = Memory(self.proc.pid)
        self._ids = iter(range(1, 10**9))
        self.rpc("initialize", {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "bench"}})
        self._send(b'{"jsonrpc": "2.0", "method": "notifications/initialized"}\n')

    @classmethod
    def ours(cls, docs: Path, cache: Path) -> Server:
        args = [sys.executable, str(REPO / "server.py"), "--root", str(REPO / ".AGENTS"), "--docs", str(docs)]
        return cls([*args, "--cache-dir", str(cache), "--log-level", "WARNING"], "search_docs", lambda q: {"query": q})

    def _send(self, line: bytes) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(line)
        self.proc.stdin.flush()

    def rpc(self, method: str, params: dict[str, Any]) -> bytes:
        number = next(self._ids)
        self._send(json.dumps({"jsonrpc": "2.0", "id": number, "method": method, "params": params}).encode() + b"\n")
        assert self.proc.stdout is not None
        while True:
            line = self.proc.stdout.readline()
            if not line:
                raise RuntimeError("the server closed stdout")
            if f'"id":{number}'.encode() in line.replace(b" ", b""):
                return line

    def search(self, query: str) -> tuple[float, bool]:
        """One search call: its time, and whether the answer was whole (not `partial=1`)."""
        t = time.perf_counter()
        answer = self.rpc("tools/call", {"name": self.tool, "arguments": self.arguments(query)})
        took = time.perf_counter() - t
        if b'"isError":true' in answer.replace(b" ", b""):
            raise RuntimeError(f"{self.tool} answered an error: {answer[:300]!r}")
        return took, b"partial=1" not in answer

    def until_whole(self, limit_s: float = 600) -> tuple[float, list[float]]:
        """Search until an answer is whole: seconds from spawn, and the calls' times before it."""
        times: list[float] = []
        for i in range(10**9):
            took, whole = self.search(QUERIES[i % len(QUERIES)])
            if whole:
                return time.perf_counter() - self.spawned, times
            times.append(took)
            if time.perf_counter() - self.spawned > limit_s:
                raise RuntimeError(f"no whole answer within {limit_s:.0f} s")
            time.sleep(0.01)
        raise AssertionError

    def settled(self, calls: int, pause_s: float = 5.0) -> list[float]:
        time.sleep(pause_s)
        return [self.search(QUERIES[i % len(QUERIES)])[0] for i in range(calls)]

    def close(self) -> None:
        self.memory.stop()
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        self.proc.wait(timeout=60)


def start(server: Server, calls: int) -> dict[str, Any]:
    try:
        complete_s, while_indexing = server.until_whole()
        peak_while_building = server.memory.peak()
        settled = server.settled(calls)
        return {
            "complete_s": complete_s,
            "calls_while_indexing": len(while_indexing),
            "indexing_p50_ms": median(while_indexing) * 1000 if while_indexing else None,
            "indexing_p95_ms": percentile(while_indexing, 95) * 1000 if while_indexing else None,
            "settled_p50_ms": median(settled) * 1000,
            "settled_p95_ms": percentile(settled, 95) * 1000,
            "rss_settled": server.memory.now(),
            "rss_peak_server": max(peak_while_building, server.memory.peak()),
            "rss_peak_with_workers": server.memory.tree_peak,
            "pss_peak_with_workers": server.memory.tree_pss_peak,
            "pss_settled": _kb(server.proc.pid, "Pss", "smaps_rollup") * 1024,
        }
    finally:
        server.close()


def sharing(docs: Path, cache: Path, servers: int, calls: int) -> dict[str, Any]:
    """`servers` servers started at once, warm, on the same cache: spawn to each one's whole
    answer, and their PSS once settled and called (what they hold together)."""
    started = [Server.ours(docs, cache) for _ in range(servers)]
    try:
        whole = [server.until_whole()[0] for server in started]
        time.sleep(5.0)
        for server in started:
            for i in range(calls):
                server.search(QUERIES[i % len(QUERIES)])
        pss = [_kb(server.proc.pid, "Pss", "smaps_rollup") * 1024 for server in started]
        rss = [server.memory.now() for server in started]
    finally:
        for server in started:
            server.close()
    return {"servers": servers, "complete_s": whole, "pss": pss, "rss": rss}


def relayed(docs: Path, cache: Path, scratch: Path, sessions: int, calls: int) -> dict[str, Any]:
    """`sessions` sessions through `agents-context-shared` on the same cache: the first starts the
    shared server (timed from its spawn to its whole answer), the others then start at once and
    join it (each timed the same way); then the PSS of every relay and of the one server, once
    settled and called."""
    env = {**os.environ, "AGENTS_CONTEXT_STATE_DIR": str(scratch / "state"), "AGENTS_CONTEXT_SHARED_IDLE": "30"}
    args = ["--root", str(REPO / ".AGENTS"), "--docs", str(docs), "--cache-dir", str(cache), "--log-level", "WARNING"]
    relay = [str(Path(sys.executable).with_name("agents-context-shared")), *args]
    started, server = [Server(relay, "search_docs", lambda q: {"query": q}, env)], 0
    try:
        first = started[0].until_whole()[0]
        started += [Server(relay, "search_docs", lambda q: {"query": q}, env) for _ in range(sessions - 1)]
        joined = [session.until_whole()[0] for session in started[1:]]
        time.sleep(5.0)
        for session in started:
            for i in range(calls):
                session.search(QUERIES[i % len(QUERIES)])
        (state,) = (scratch / "state" / "shared").glob("*.json")
        server = json.loads(state.read_text())["pid"]
        relays = [_kb(session.proc.pid, "Pss", "smaps_rollup") * 1024 for session in started]
        pss = _kb(server, "Pss", "smaps_rollup") * 1024
        rss = _kb(server, "VmRSS")
    finally:
        for session in started:
            session.close()
        if server:
            with contextlib.suppress(OSError):
                os.kill(server, signal.SIGTERM)  # now rather than after its idle time
    return {
        "sessions": sessions,
        "first_s": first,
        "joined_s": joined,
        "relays_pss": relays,
        "server_pss": pss,
        "server_rss": rss * 1024,
    }


def qmd(docs: Path, folder: Path, scratch: Path, calls: int) -> dict[str, Any]:
    """qmd over the same files: `qmd collection add` (its index: BM25 in SQLite FTS5; no
    embeddings, which need models from the internet), timed with its memory; then `qmd mcp` on
    stdio, timed to its first answer and settled, its `query` tool with one `lex` sub-query and
    no rerank (BM25 only, as ours)."""
    bun = folder / "node_modules" / "@oven" / "bun-linux-x64" / "bin" / "bun"
    cli = folder / "node_modules" / "@tobilu" / "qmd" / "dist" / "cli" / "qmd.js"
    home = scratch / "qmd-home"
    env = {"PATH": os.environ.get("PATH", ""), "HOME": str(home)}
    env |= {"XDG_CACHE_HOME": str(home / ".cache"), "XDG_CONFIG_HOME": str(home / ".config")}
    t = time.perf_counter()
    indexing = subprocess.Popen(
        [str(bun), str(cli), "collection", "add", str(docs), "--name", "docs"],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    peak = _watch(indexing)
    index_s = time.perf_counter() - t
    if indexing.returncode:
        raise RuntimeError(f"qmd collection add exited {indexing.returncode}")
    lex = {"rerank": False, "limit": 5}
    server = Server(
        [str(bun), str(cli), "mcp"], "query", lambda q: {"searches": [{"type": "lex", "query": q}], **lex}, env
    )
    return {"index_s": index_s, "index_peak": peak} | start(server, calls)


def basic_memory(docs: Path, venv: Path, files: int, scratch: Path, calls: int) -> dict[str, Any]:
    """basic-memory over a copy of the first `files` markdown files of `docs` (it rewrites the
    files it indexes): `basic-memory project add` timed with its memory, then `basic-memory mcp`
    on stdio, timed to its first answer and settled; and ours cold and settled on the same copy."""
    copy = scratch / "bm-docs"
    for page in sorted(docs.rglob("*.md"))[:files]:
        target = copy / page.relative_to(docs)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(page, target)
    ours = start(Server.ours(copy, scratch / "bm-cache"), calls)
    cli = str(venv / ("Scripts" if os.name == "nt" else "bin") / "basic-memory")
    env = {"PATH": os.environ.get("PATH", ""), "HOME": str(scratch / "bm-home")}
    t = time.perf_counter()
    indexing = subprocess.Popen(
        [cli, "project", "add", "docs", str(copy)], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    peak = _watch(indexing)
    index_s = time.perf_counter() - t
    if indexing.returncode:
        raise RuntimeError(f"basic-memory project add exited {indexing.returncode}")
    server = Server([cli, "mcp", "--project", "docs"], "search_notes", lambda q: {"query": q, "project": "docs"}, env)
    return {"files": files, "index_s": index_s, "index_peak": peak, "ours": ours} | start(server, calls)


def _watch(proc: subprocess.Popen[bytes]) -> int:
    """Wait for `proc`; its peak resident memory."""
    memory = Memory(proc.pid)
    peak = 0
    while proc.poll() is None:
        peak = max(peak, memory.peak())
        time.sleep(0.05)
    memory.stop()
    return peak


def fts5(docs: Path, calls: int) -> dict[str, Any]:
    """SQLite FTS5 over the same files, in process: read them, insert, and query with `bm25()`."""
    t = time.perf_counter()
    db = sqlite3.connect(":memory:")
    db.execute("CREATE VIRTUAL TABLE docs USING fts5(path, body, tokenize='porter unicode61')")
    rows = (
        (str(p.relative_to(docs)), p.read_text(encoding="utf-8", errors="replace")) for p in sorted(docs.rglob("*.md"))
    )
    db.executemany("INSERT INTO docs VALUES (?, ?)", rows)
    db.commit()
    build_s = time.perf_counter() - t
    times = []
    for i in range(calls):
        terms = " OR ".join(QUERIES[i % len(QUERIES)].split())
        t = time.perf_counter()
        db.execute(
            "SELECT path, bm25(docs) FROM docs WHERE docs MATCH ? ORDER BY bm25(docs) LIMIT 5", (terms,)
        ).fetchall()
        times.append(time.perf_counter() - t)
    return {"build_s": build_s, "p50_ms": median(times) * 1000, "p95_ms": percentile(times, 95) * 1000}


def generated(folder: Path, pages: int) -> Path:
    """Tldr-like pages with words drawn from the queries and a fixed vocabulary (fixed seed)."""
    rng = random.Random(7)
    vocab = [w for q in QUERIES for w in q.split()] + [f"word{i}" for i in range(3000)]
    for i in range(pages):
        page = folder / f"section{i % 20:02d}" / f"page{i:05d}.md"
        page.parent.mkdir(parents=True, exist_ok=True)
        lines = [f"# page {i}", "", f"> {' '.join(rng.choices(vocab, k=8))}.", ""]
        for _ in range(rng.randint(3, 8)):
            lines += [f"- {' '.join(rng.choices(vocab, k=6))}:", "", f"`cmd {' '.join(rng.choices(vocab, k=3))}`", ""]
        page.write_text("\n".join(lines), encoding="utf-8")
    return folder


def report(results: dict[str, Any], out: Callable[[str], None] = print) -> None:
    cold, warm, peer = results["cold"], results["warm"], results["fts5"]

    def ms(v: float | None) -> str:
        return "-" if v is None else f"{v:.1f} ms"

    out(f"## {results['docs']} ({results['files']:,} files), {results['machine']['cores']} cores")
    out("")
    out("| figure | cold start | warm restart |")
    out("|---|---|---|")
    whole = f"{fmt_seconds(cold['complete_s'])} | {fmt_seconds(warm['complete_s'])}"
    out(f"| spawn to a whole answer (index complete) | {whole} |")
    for key, name in (("indexing", "search_docs while indexing"), ("settled", "search_docs settled")):
        out(
            f"| {name} p50 / p95 (calls) | {ms(cold[key + '_p50_ms'])} / {ms(cold[key + '_p95_ms'])}"
            f" ({cold['calls_while_indexing'] if key == 'indexing' else results['calls']})"
            f" | {ms(warm[key + '_p50_ms'])} / {ms(warm[key + '_p95_ms'])}"
            f" ({warm['calls_while_indexing'] if key == 'indexing' else results['calls']}) |"
        )
    out(f"| server resident, settled | {fmt_bytes(cold['rss_settled'])} | {fmt_bytes(warm['rss_settled'])} |")
    out(f"| server peak | {fmt_bytes(cold['rss_peak_server'])} | {fmt_bytes(warm['rss_peak_server'])} |")
    out(
        f"| peak with worker processes | {fmt_bytes(cold['rss_peak_with_workers'])}"
        f" | {fmt_bytes(warm['rss_peak_with_workers'])} |"
    )
    out(
        f"| peak with worker processes, PSS summed | {fmt_bytes(cold['pss_peak_with_workers'])}"
        f" | {fmt_bytes(warm['pss_peak_with_workers'])} |"
    )
    if "sharing" in results:
        shared, alone = results["sharing"], warm["pss_settled"]
        out(
            f"| {shared['servers']} servers started at once on that cache: spawn to whole (slowest),"
            f" sum of PSS, against one alone | | {fmt_seconds(max(shared['complete_s']))},"
            f" {fmt_bytes(sum(shared['pss']))} = {sum(shared['pss']) / max(alone, 1):.2f}x {fmt_bytes(alone)} |"
        )
    if "relayed" in results:
        r, alone = results["relayed"], warm["pss_settled"]
        together = sum(r["relays_pss"]) + r["server_pss"]
        out(
            f"| {r['sessions']} sessions through agents-context-shared on that cache: the first's spawn to whole"
            f" (it starts the server), the others' (slowest), sum of PSS (relays + server), against one alone"
            f" | | {fmt_seconds(r['first_s'])}, {fmt_seconds(max(r['joined_s'], default=0.0))},"
            f" {fmt_bytes(together)} ({fmt_bytes(sum(r['relays_pss']))} + {fmt_bytes(r['server_pss'])})"
            f" = {together / max(alone, 1):.2f}x {fmt_bytes(alone)} |"
        )
    out("")
    out(
        f"SQLite FTS5 in process, same files: build {fmt_seconds(peer['build_s'])}"
        f" (ours from spawn to complete: {cold['complete_s'] / peer['build_s']:.2f}x),"
        f" query p50 / p95 {ms(peer['p50_ms'])} / {ms(peer['p95_ms'])} (no transport)"
    )
    if "qmd" in results:
        q = results["qmd"]
        out("")
        out(
            f"qmd, same files: `collection add` {fmt_seconds(q['index_s'])} (peak {fmt_bytes(q['index_peak'])});"
            f" ours cold to complete {cold['complete_s'] / q['index_s']:.2f}x that."
            f" Its MCP server: spawn to first answer {fmt_seconds(q['complete_s'])},"
            f" settled p50 / p95 {ms(q['settled_p50_ms'])} / {ms(q['settled_p95_ms'])}"
            f" (ours warm {warm['settled_p50_ms'] / q['settled_p50_ms']:.2f}x its p50),"
            f" resident settled {fmt_bytes(q['rss_settled'])}, peak {fmt_bytes(q['rss_peak_server'])}"
        )
    if "basic_memory" in results:
        b = results["basic_memory"]
        o = b["ours"]
        out("")
        out(
            f"basic-memory, the first {b['files']:,} files (a copy): `project add` {fmt_seconds(b['index_s'])}"
            f" (peak {fmt_bytes(b['index_peak'])}); ours cold to complete on the same copy"
            f" {fmt_seconds(o['complete_s'])} ({b['index_s'] / o['complete_s']:.1f}x faster)."
            f" Its MCP server: spawn to first answer {fmt_seconds(b['complete_s'])},"
            f" settled p50 / p95 {ms(b['settled_p50_ms'])} / {ms(b['settled_p95_ms'])}"
            f" (ours on the copy {ms(o['settled_p50_ms'])} / {ms(o['settled_p95_ms'])}),"
            f" resident settled {fmt_bytes(b['rss_settled'])} (ours {fmt_bytes(o['rss_settled'])})"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--docs", type=Path, default=TLDR)
    parser.add_argument("--calls", type=int, default=200)
    parser.add_argument("--smoke", action="store_true", help="7,000 generated pages, 40 calls")
    parser.add_argument("--json", type=Path)
    parser.add_argument(
        "--qmd", type=Path, help="a folder where `npm install --ignore-scripts @tobilu/qmd bun` was run"
    )
    parser.add_argument("--basic-memory", type=Path, help="a virtualenv where `pip install basic-memory` was run")
    parser.add_argument("--basic-memory-files", type=int, default=500, help="how many files basic-memory indexes")
    parser.add_argument(
        "--servers", type=int, help="warm servers, then relayed sessions, at once on one cache (default 5; 0: none)"
    )
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="agents-context-docs-scale-") as scratch:
        docs = generated(Path(scratch, "docs"), 7000) if args.smoke else args.docs
        calls = 40 if args.smoke else args.calls
        cache = Path(scratch, "cache")
        results = {
            "docs": "generated" if args.smoke else str(args.docs),
            "files": sum(1 for _ in docs.rglob("*.md")),
            "calls": calls,
            "machine": machine(),
            "cold": start(Server.ours(docs, cache), calls),
            "warm": start(Server.ours(docs, cache), calls),
            "fts5": fts5(docs, calls),
        }
        servers = args.servers if args.servers is not None else 2 if args.smoke else 5
        if servers:
            results["sharing"] = sharing(docs, cache, servers, 10)
            results["relayed"] = relayed(docs, cache, Path(scratch), servers, 10)
        if args.qmd:
            results["qmd"] = qmd(docs, args.qmd, Path(scratch), calls)
        if args.basic_memory:
            wanted = args.basic_memory, args.basic_memory_files
            results["basic_memory"] = basic_memory(docs, *wanted, Path(scratch), calls)
    report(results)
    if args.json:
        args.json.write_text(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
