"""Side-by-side speed benchmark: our BM25 engine against the engines users would pick instead.

    uv run python bench/speed.py                  # the full run (manual; tens of minutes)
    uv run python bench/speed.py --smoke          # tiny corpora, every engine (CI runs this)
    uv run python bench/speed.py --corpus tldr --engines ours,sqlite-fts5 --json out.json

Every engine gets the same sections, the same tokens (our chunker and tokenizer) and the same
queries, in one run, one engine at a time, each in a fresh process so imports, memory and caches
do not bleed from one to the next. Per engine and corpus: import time (apart), cold build, one-file
update (median over several files), query p50/p95 at k=10 (each query timed `--repeats` times, its
median kept), retained and peak RSS over the worker's baseline, and the top-10 agreement with ours.
Then the server itself: a search tool call over real stdio against a no-op tool on the same
connection (the protocol floor), and start-up to first answer with tldr as a `--docs` root.
"""

from __future__ import annotations

import argparse
import gc
import json
import math
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

HERE = Path(__file__).resolve().parent
Mode = Literal["legacy", "auto"]
RANK_BM25_MAX_SECTIONS = 150_000
"""rank-bm25 is skipped above this many sections unless `--all-rank-bm25` (hours of queries, GBs)."""


# --- the worker: one engine, one corpus, a fresh process --------------------------------------------


def worker(spec: dict[str, Any]) -> dict[str, Any]:
    from bench.engines import ENGINES, K, import_seconds

    engine = ENGINES[spec["engine"]]()
    imports_s = import_seconds(engine.modules)

    from bench.corpora import ALL, Prepared, edited
    from bench.measure import malloc_trim, median, peak_rss_bytes, percentile, reset_peak_rss, rss_bytes

    p = Prepared.load(Path(spec["corpus_dir"]))
    sections = p.section_tokens()
    engine.ingest(p, sections)
    queries = p.queries
    if spec.get("max_per_kind"):
        kept: dict[str, int] = {}
        capped = []
        for q in queries:
            if kept.get(q.kind, 0) < spec["max_per_kind"]:
                kept[q.kind] = kept.get(q.kind, 0) + 1
                capped.append(q)
        queries = capped

    gc.collect()
    # The prepared corpus (every section's token list) is the harness's data, not the engine's:
    # out of the collector's reach, so no engine's build pays for full collections walking it.
    gc.freeze()
    malloc_trim()
    reset_peak_rss()
    rss0 = rss_bytes() or 0
    t0 = time.perf_counter()
    engine.build()
    build_s = time.perf_counter() - t0
    build_peak = (peak_rss_bytes() or 0) - rss0
    gc.collect()
    retained = (rss_bytes() or 0) - rss0
    retained_trimmed = (rss_bytes() or 0) - rss0 if malloc_trim() else None

    for q in queries[: spec["warmup"]]:
        engine.query(q.terms, K)
    times: list[list[float]] = [[] for _ in queries]
    top: list[list[int]] = []
    for r in range(spec["repeats"]):
        for i, q in enumerate(queries):
            t = time.perf_counter()
            ids = engine.query(q.terms, K)
            times[i].append(time.perf_counter() - t)
            if r == 0:
                top.append(ids)
    per_query = [median(ts) for ts in times]
    kinds: dict[str, list[float]] = {ALL: per_query}
    for q, s in zip(queries, per_query, strict=True):
        if q.kind != ALL:
            kinds.setdefault(q.kind, []).append(s)
    summary = {
        kind: {"n": len(v), "p50": median(v), "p95": percentile(v, 95), "max": max(v)} for kind, v in kinds.items()
    }

    update_s: list[float] = []
    if engine.update is not None:
        slices = p.group_slices()
        for group, word in zip(p.update_groups, p.update_words, strict=True):
            _, a, b = slices[group]
            docs = edited(sections[a:b], word)
            t = time.perf_counter()
            engine.update(group, docs)
            update_s.append(time.perf_counter() - t)
    result: dict[str, Any] = {
        "engine": engine.name,
        "note": engine.note,
        "corpus": p.name,
        "import_s": imports_s,
        "build_s": build_s,
        "update_p50": median(update_s) if update_s else None,
        "update_max": max(update_s) if update_s else None,
        "updates": len(update_s),
        "queries": summary,
        "top": top,
        "rss_retained": retained,
        "rss_retained_trimmed": retained_trimmed,
        "rss_build_peak": build_peak,
        "rss_peak_all": (peak_rss_bytes() or 0) - rss0,
        "text_bytes": p.text_bytes,
    }
    if spec["engine"] == "ours" and spec.get("anatomy"):
        from bench.anatomy import index_memory, postings_count

        result["anatomy"] = index_memory(engine.index)  # type: ignore[attr-defined]
        result["postings"] = postings_count(engine.index)  # type: ignore[attr-defined]
    return result


def run_worker(spec: dict[str, Any], timeout: float | None) -> dict[str, Any]:
    cmd = [sys.executable, str(Path(__file__).resolve()), "--worker", json.dumps(spec)]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, check=False)
    if done.returncode != 0:
        tail = (done.stderr or done.stdout).strip().splitlines()[-5:]
        return {"engine": spec["engine"], "error": " | ".join(tail) or f"exit {done.returncode}"}
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


# --- the orchestrator ------------------------------------------------------------------------------


def agreement(ours: list[list[int]], other: list[list[int]]) -> float:
    """Mean share of ours' top-10 that the other engine also returns in its top 10."""
    shares = [len(set(a) & set(b)) / len(a) for a, b in zip(ours, other, strict=False) if a]
    return sum(shares) / len(shares) if shares else math.nan


def print_corpus(name: str, meta: dict[str, Any], results: list[dict[str, Any]]) -> None:
    from bench.corpora import ALL, NO_TOP, WITH_TOP
    from bench.measure import fmt_bytes, fmt_seconds

    print(
        f"\n== {name}: {meta['sections']:,} sections, {meta['tokens']:,} tokens, {meta['terms']:,} terms, "
        f"{fmt_bytes(meta['text_bytes'])} text, {meta['files']:,} files; prepared in {meta['prepare_s']:.1f}s"
    )
    ours = next((r for r in results if r.get("engine") == "ours" and "error" not in r), None)
    kinds = [k for k in (ALL, WITH_TOP, NO_TOP) if any(k in r.get("queries", {}) for r in results)]
    head = f"{'engine':<12} {'import':>8} {'build':>8} {'update':>9}"
    for k in kinds:
        head += f" {k + ' p50':>17} {'p95':>8}"
    head += f" {'mem kept':>9} {'trimmed':>9} {'mem peak':>9} {'top10=ours':>10}"
    print(head)
    for r in results:
        if "error" in r or "skipped" in r:
            print(f"{r['engine']:<12} {r.get('skipped') or 'ERROR ' + r['error']}")
            continue
        update = fmt_seconds(r["update_p50"]) if r["update_p50"] is not None else "rebuild"
        row = f"{r['engine']:<12} {fmt_seconds(r['import_s']):>8} {fmt_seconds(r['build_s']):>8} {update:>9}"
        for k in kinds:
            q = r["queries"].get(k)
            row += f" {fmt_seconds(q['p50']) if q else '-':>17} {fmt_seconds(q['p95']) if q else '-':>8}"
        agree = agreement(ours["top"], r["top"]) if ours else math.nan
        row += (
            f" {fmt_bytes(r['rss_retained']):>9} {fmt_bytes(r['rss_retained_trimmed']):>9}"
            f" {fmt_bytes(r['rss_build_peak']):>9} {agree:>10.2f}"
        )
        print(row)
    for r in results:
        if "anatomy" in r:
            a = r["anatomy"]
            text = r["text_bytes"]
            parts = ", ".join(f"{k} {fmt_bytes(v)}" for k, v in a.items() if k != "total")
            print(
                f"  {r['engine']} deep size {fmt_bytes(a['total'])} = {a['total'] / text:.2f}x text "
                f"(RSS kept {r['rss_retained'] / text:.2f}x, after malloc_trim "
                f"{(r['rss_retained_trimmed'] or 0) / text:.2f}x; {r['postings']:,} postings): {parts}"
            )


def ratios(results: list[dict[str, Any]], base: str = "ours") -> dict[str, float]:
    """The issue's targets as ratios, from the same run (NaN when an engine is missing)."""
    by = {r["engine"]: r for r in results if "error" not in r and "skipped" not in r}

    def q(engine: str, stat: str) -> float:
        r = by.get(engine)
        return r["queries"]["all"][stat] if r else math.nan

    def build(engine: str) -> float:
        r = by.get(engine)
        return r["build_s"] if r else math.nan

    return {
        "rank_bm25_p50_over_ours": q("rank-bm25", "p50") / q(base, "p50"),
        "bm25s_p50_over_ours": q("bm25s", "p50") / q(base, "p50"),
        "bm25s_p95_over_ours": q("bm25s", "p95") / q(base, "p95"),
        "ours_p50_over_tantivy": q(base, "p50") / q("tantivy", "p50"),
        "ours_build_over_fts5": build(base) / build("sqlite-fts5"),
    }


def print_ratios(table: dict[str, dict[str, dict[str, float]]]) -> None:
    cols: list[tuple[str, str, str, Callable[[float], bool]]] = [
        ("rank_bm25_p50_over_ours", "vs rank-bm25 p50", ">= 50x faster", lambda v: v >= 50),
        ("bm25s_p50_over_ours", "vs bm25s p50", ">= 1x", lambda v: v >= 1),
        ("bm25s_p95_over_ours", "vs bm25s p95", "> 1x", lambda v: v > 1),
        ("ours_p50_over_tantivy", "p50 / tantivy", "<= 2x (stretch)", lambda v: v <= 2),
        ("ours_build_over_fts5", "build / FTS5", "<= 2x (tldr)", lambda v: v <= 2),
    ]
    print("\n== Ratios (same run; speed-ups are other/ours, so > 1 means ours is faster)")
    print(f"{'corpus':<16} {'engine':<6} " + " ".join(f"{label:>17}" for _, label, _, _ in cols))
    print(f"{'':<16} {'target':<6} " + " ".join(f"{goal:>17}" for _, _, goal, _ in cols))
    for corpus, per_base in table.items():
        for base, r in per_base.items():
            cells = []
            for key, _, _, ok in cols:
                v = r[key]
                cells.append(f"{'-' if math.isnan(v) else f'{v:.2f}x ' + ('ok' if ok(v) else 'MISS'):>17}")
            print(f"{corpus:<16} {base:<6} " + " ".join(cells))


def run_startup(docs: list[str], query: str, start: str, cache_dir: Path | None = None) -> dict[str, Any]:
    cmd = [sys.executable, str(HERE / "startup.py"), "--query", query, "--start", start]
    for d in docs:
        cmd += ["--docs", d]
    if cache_dir is not None:
        cmd += ["--cache-dir", str(cache_dir)]
    done = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        return {"start": start, "error": done.stderr.strip().splitlines()[-1:]}
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def run_startups(docs: list[str], query: str, repeats: int) -> list[dict[str, Any]]:
    """Cold starts, one start that writes the cache, then warm restarts from it (a fresh folder)."""
    runs = [run_startup(docs, query, "cold") for _ in range(repeats)]
    with tempfile.TemporaryDirectory(prefix="agents-context-bench-cache-") as cache_dir:
        runs.append(run_startup(docs, query, "prime", Path(cache_dir)))
        runs += [run_startup(docs, query, "warm", Path(cache_dir)) for _ in range(repeats)]
    return runs


def print_startups(runs: list[dict[str, Any]], label: str) -> None:
    from bench.measure import fmt_seconds

    print(f"\n== Start-up to first answer ({label}; fresh process each; times after imports)")
    for start in ("cold", "prime", "warm"):
        mine = [r for r in runs if r.get("start") == start]
        ok = [r for r in mine if "error" not in r]
        if not ok:
            print(f"{start:<6} ERROR {mine[0].get('error') if mine else 'not run'}")
            continue
        best = sorted(ok, key=lambda r: r["first_answer_s"])[len(ok) // 2]
        target = " (target < 0.5s)" if start == "warm" else ""
        print(
            f"{start:<6} first answer {fmt_seconds(best['first_answer_s'])}{target}"
            f"{' partial (still checking)' if best['first_answer_partial'] else ''} | index "
            f"{fmt_seconds(best['index_s'])} + create_server {fmt_seconds(best['create_server_s'])} + query "
            f"{fmt_seconds(best['first_query_s'])} | whole (checked) at {fmt_seconds(best['checked_s'])} | "
            f"imports {fmt_seconds(best['imports_s'])} | {best['files']:,} files, {best['windows']:,} windows, "
            f"RSS +{best['rss_delta'] / 2**20:.0f}MB for {best['text_bytes'] / 2**20:.1f}MB of text "
            f"(median of {len(ok)}: {', '.join(fmt_seconds(r['first_answer_s']) for r in ok)})"
        )


SETTLE_S = 10.0
"""How long a server is left alone, once its watcher is up and indexing is done, before the
settled stdio figure."""


def run_protocol(
    server_args: list[str], tool: str, queries: list[str], calls: int, modes: list[Mode], settled: bool = False
) -> list[Any]:
    import anyio

    from bench.protocol import measure, measure_raw

    def one(mode: Mode | Literal["raw", "settled"]) -> dict[str, Any]:
        try:
            if mode == "raw":
                return measure_raw(server_args, tool, queries, calls)
            if mode == "settled":
                return measure_raw(server_args, tool, queries, calls, settle_s=SETTLE_S)
            result: dict[str, Any] = anyio.run(measure, server_args, tool, queries, calls, mode)
        except Exception as exc:  # report and go on: one failed measurement must not lose the run
            return {"mode": mode, "tool": tool, "error": f"{type(exc).__name__}: {exc}"}
        return result

    # The bare JSON-RPC client first: the server and the transport alone (the target), from start
    # and, where asked, once settled; then the SDK's Client, which also validates each search
    # result against the tool's output schema.
    return [one("raw"), *([one("settled")] if settled else []), *(one(mode) for mode in modes)]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Side-by-side speed benchmark (see docs/speed.md).")
    parser.add_argument("--smoke", action="store_true", help="tiny corpora and few queries (CI)")
    parser.add_argument("--corpus", help="comma-separated corpora (default: all of the mode's)")
    parser.add_argument("--engines", help="comma-separated engines (default: ours and the four others)")
    parser.add_argument("--json", metavar="PATH", help="save the raw results")
    parser.add_argument(
        "--results",
        type=Path,
        metavar="DIR",
        help="write the run's tables as DIR/speed-<date>.json (default: bench/results/, not with --smoke)",
    )
    parser.add_argument("--queries", type=int, help="sampled queries per kind (default 100, smoke 8)")
    parser.add_argument("--repeats", type=int, help="timings per query, median kept (default 3, smoke 1)")
    parser.add_argument("--updates", type=int, help="files updated one at a time (default 20, smoke 3)")
    parser.add_argument("--all-rank-bm25", action="store_true", help="run rank-bm25 on every corpus size")
    parser.add_argument("--no-server", action="store_true", help="skip the stdio and start-up figures")
    parser.add_argument("--anatomy", action="store_true", help="deep size of our index per structure")
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)

    if args.worker:
        print(json.dumps(worker(json.loads(args.worker))))
        return 0

    from bench import corpora
    from bench.engines import DEFAULT, ENGINES
    from bench.measure import fmt_seconds, machine

    smoke = args.smoke
    names = args.corpus.split(",") if args.corpus else (corpora.SMOKE if smoke else corpora.FULL)
    engines = args.engines.split(",") if args.engines else DEFAULT
    unknown = [e for e in engines if e not in ENGINES]
    if unknown:
        parser.error(f"unknown engines {unknown}: choose from {', '.join(ENGINES)}")
    per_kind = args.queries or (8 if smoke else 100)
    repeats = args.repeats or (1 if smoke else 3)
    updates = args.updates or (3 if smoke else 20)
    anatomy = args.anatomy or not smoke

    info = machine()
    print(f"machine: {info['cpu']}, {info['cores']} cores, {info['ram_gib']} GiB, Python {info['python']}")
    print(f"engines: {', '.join(engines)}; k=10; {per_kind} sampled queries per kind; {repeats} timings per query")
    report: dict[str, Any] = {"machine": info, "args": vars(args), "corpora": {}, "ratios": {}}
    agents_queries: list[str] = []
    tldr_queries: list[str] = []
    with tempfile.TemporaryDirectory(prefix="agents-context-bench-") as tmp:
        for name in names:
            p = corpora.prepare(name, per_kind, updates)
            folder = Path(tmp) / name
            p.save(folder)
            texts = [q.text or " ".join(q.terms) for q in p.queries]
            if name == "agents":
                agents_queries = texts
            if name == "tldr":
                tldr_queries = texts
            meta = {
                "sections": p.n_sections,
                "tokens": p.n_tokens,
                "terms": len(p.vocab),
                "text_bytes": p.text_bytes,
                "files": len(p.group_names),
                "queries": len(p.queries),
                **p.meta,
            }
            n_sections = p.n_sections
            del p
            gc.collect()
            results = []
            for engine in engines:
                if engine == "rank-bm25" and n_sections > RANK_BM25_MAX_SECTIONS and not args.all_rank_bm25:
                    results.append({"engine": engine, "skipped": f"skipped above {RANK_BM25_MAX_SECTIONS:,} sections"})
                    continue
                big = n_sections >= 50_000
                spec = {
                    "engine": engine,
                    "corpus_dir": str(folder),
                    "repeats": 1 if engine == "rank-bm25" and n_sections >= 10_000 else repeats,
                    "warmup": 2 if smoke else 5,
                    "max_per_kind": 30 if engine == "rank-bm25" and big else None,
                    "anatomy": anatomy,
                }
                results.append(run_worker(spec, timeout=120 if smoke else None))
            print_corpus(name, meta, results)
            report["corpora"][name] = {"meta": meta, "results": results}
            report["ratios"][name] = {base: ratios(results, base) for base in ("ours",) if base in engines}
            sys.stdout.flush()

    print_ratios(report["ratios"])

    if not args.no_server:
        queries = agents_queries or ["secrets denylist", "watcher restart", "pinned files budget"]
        calls = 20 if smoke else 300
        modes: list[Mode] = ["legacy"] if smoke else ["legacy", "auto"]
        stdio = run_protocol(["--root", str(corpora.REPO / ".AGENTS")], "context_search", queries, calls, modes)
        if "tldr" in names:
            stdio += run_protocol(
                ["--root", str(corpora.REPO / ".AGENTS"), "--docs", str(corpora.TLDR)],
                "search_docs",
                tldr_queries,
                calls,
                ["legacy"],
                settled=not smoke,
            )
        report["stdio"] = stdio
        print("\n== A tool call over real stdio vs the no-op tool on the same server (protocol floor)")
        for s in stdio:
            if "error" in s:
                print(f"{s['tool']:<15} {s['mode']:<7} ERROR {s['error']}")
                continue
            print(
                f"{s['tool']:<15} {s['mode']:<7} search p50 {fmt_seconds(s['search_p50'])} "
                f"p95 {fmt_seconds(s['search_p95'])} | noop p50 {fmt_seconds(s['noop_p50'])} "
                f"p95 {fmt_seconds(s['noop_p95'])} | ratio p50 {s['search_p50'] / s['noop_p50']:.2f}x"
                + (
                    f" | replay p50 {fmt_seconds(s['replay_p50'])} ({s['replay_p50'] / s['replay_noop_p50']:.2f}x"
                    f" its no-op {fmt_seconds(s['replay_noop_p50'])})"
                    if "replay_p50" in s
                    else ""
                )
                + (
                    " (target <= 2x)"
                    if s["mode"] == "raw"
                    else f" (settled: watcher up, then {SETTLE_S:.0f} s idle)"
                    if s["mode"] == "settled"
                    else " (with the SDK client's schema check)"
                )
                + (
                    f" | spawn to first answer {fmt_seconds(s['spawn_to_first_answer_s'])}"
                    if "spawn_to_first_answer_s" in s
                    else ""
                )
                + f" ({s['calls']} calls)"
            )
        docs = [str(corpora.TLDR)] if "tldr" in names else []
        query = tldr_queries[0] if tldr_queries else queries[0]
        starts = run_startups(docs, query, 1 if smoke else 3)
        report["startup"] = starts
        print_startups(starts, "tldr as --docs" if docs else ".AGENTS only")

    if args.json:
        Path(args.json).write_text(json.dumps(report, indent=1, default=str))
        print(f"\nraw results: {args.json}")
    if args.results or not smoke:
        from bench import results as stored
        from bench.tables import speed_tables

        command = " ".join(["uv run python bench/speed.py", *(sys.argv[1:] if argv is None else argv)])
        saved = stored.save(
            "speed", speed_tables(report), machine=info, command=command.strip(), folder=args.results or stored.RESULTS
        )
        print(f"tables: {saved} (`uv run python -m bench.tables` puts them in the docs)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
