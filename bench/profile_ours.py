"""Where our engine's build, query, update time and memory go, on a synthetic corpus.

    uv run python bench/profile_ours.py --sections 100000 [--cache DIR]

cProfile over the build, the queries (split by query kind) and one-file updates, the top
functions by own time, and the deep size of each structure of the index. `--cache DIR` keeps the
prepared corpus between runs (it takes a while to draw 300k sections).
"""

from __future__ import annotations

import argparse
import cProfile
import gc
import io
import pstats
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench import corpora
from bench.anatomy import index_memory, postings_count
from bench.engines import ENGINES, K
from bench.measure import fmt_bytes, fmt_seconds, median, percentile


def top_functions(profile: cProfile.Profile, n: int) -> str:
    out = io.StringIO()
    stats = pstats.Stats(profile, stream=out)
    stats.sort_stats("tottime").print_stats(n)
    lines = out.getvalue().splitlines()
    start = next(i for i, line in enumerate(lines) if line.strip().startswith("ncalls"))
    return "\n".join(lines[start : start + n + 1])


def profiled(label: str, fn: Any, n: int) -> Any:
    gc.collect()
    profile = cProfile.Profile()
    t0 = time.perf_counter()
    profile.enable()
    result = fn()
    profile.disable()
    print(f"\n--- {label}: {fmt_seconds(time.perf_counter() - t0)} under cProfile")
    print(top_functions(profile, n))
    return result


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sections", type=int, default=100_000)
    parser.add_argument("--engine", default="ours")
    parser.add_argument("--cache", type=Path)
    parser.add_argument("--queries", type=int, default=100)
    parser.add_argument("--top", type=int, default=18)
    args = parser.parse_args()

    name = f"synthetic-{args.sections}"
    folder = args.cache / name if args.cache else None
    if folder and (folder / "side.json").exists():
        p = corpora.Prepared.load(folder)
    else:
        p = corpora.prepare(name, args.queries, 20)
        if folder:
            p.save(folder)
    sections = p.section_tokens()
    print(
        f"{name}: {p.n_sections:,} sections, {p.n_tokens:,} tokens, {len(p.vocab):,} terms, "
        f"{fmt_bytes(p.text_bytes)} text"
    )

    engine = ENGINES[args.engine]()
    engine.ingest(p, sections)
    t0 = time.perf_counter()
    engine.build()
    print(f"build without profiler: {fmt_seconds(time.perf_counter() - t0)}")
    for kind in (corpora.WITH_TOP, corpora.NO_TOP):
        qs = [q.terms for q in p.queries if q.kind == kind]
        for q in qs[:5]:
            engine.query(q, K)
        times = []
        for q in qs:
            t = time.perf_counter()
            engine.query(q, K)
            times.append(time.perf_counter() - t)
        print(f"queries {kind}: p50 {fmt_seconds(median(times))} p95 {fmt_seconds(percentile(times, 95))}")

    index: Any = engine.index  # type: ignore[attr-defined]
    mem = index_memory(index)
    postings = postings_count(index)
    print(
        f"\nmemory: deep size {fmt_bytes(mem['total'])} = {mem['total'] / p.text_bytes:.2f}x text, "
        f"{postings:,} postings, {mem['total'] / postings:.1f} B/posting"
    )
    for k, v in sorted(mem.items(), key=lambda kv: -kv[1]):
        if k != "total" and v > 0.005 * mem["total"]:
            print(f"  {k:<14} {fmt_bytes(v):>9}  {v / postings:5.1f} B/posting")
    print(f"  segments: {index.n_segments}")

    fresh = ENGINES[args.engine]()
    fresh.ingest(p, sections)
    profiled("build", fresh.build, args.top)
    del fresh
    for kind in (corpora.WITH_TOP, corpora.NO_TOP):
        qs = [q.terms for q in p.queries if q.kind == kind]
        profiled(f"{len(qs)} queries {kind}", lambda qs=qs: [engine.query(q, K) for q in qs], args.top)
    slices = p.group_slices()

    def updates() -> None:
        for group, word in zip(p.update_groups, p.update_words, strict=True):
            _, a, b = slices[group]
            assert engine.update is not None
            engine.update(group, corpora.edited(sections[a:b], word))

    profiled(f"{len(p.update_groups)} one-file updates", updates, args.top)


if __name__ == "__main__":
    main()
