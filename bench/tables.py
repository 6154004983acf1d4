"""Markdown tables for docs/speed.md from a `bench/speed.py --json` file.

uv run python bench/tables.py results.json
"""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.measure import fmt_bytes, fmt_seconds

ENGINES = ["ours", "rank-bm25", "bm25s", "tantivy", "sqlite-fts5"]


def cell(r: dict[str, Any] | None, kind: str) -> str:
    if r is None or "queries" not in r or kind not in r["queries"]:
        return "-"
    q = r["queries"][kind]
    return f"{fmt_seconds(q['p50'])} / {fmt_seconds(q['p95'])}"


def main(path: str) -> None:
    report = json.loads(Path(path).read_text())
    corpora: dict[str, Any] = report["corpora"]
    engines = [e for e in ENGINES if any(e in {r["engine"] for r in c["results"]} for c in corpora.values())]

    print("Query latency, k=10, p50 / p95:\n")
    print("| corpus | queries | " + " | ".join(engines) + " |")
    print("|---|---|" + "---|" * len(engines))
    for name, c in corpora.items():
        by = {r["engine"]: r for r in c["results"]}
        kinds = [k for k in ("all", "with-top1%", "no-top1%") if any(k in r.get("queries", {}) for r in by.values())]
        for kind in kinds:
            n = next((r["queries"][kind]["n"] for r in by.values() if kind in r.get("queries", {})), 0)
            label = kind if kind != "all" else ("all" if len(kinds) == 1 else "both kinds")
            row = [name, f"{label} ({n})"] + [cell(by.get(e), kind) for e in engines]
            print("| " + " | ".join(row) + " |")

    print("\nCold build (import time apart) and one-file update (median):\n")
    print("| corpus | sections | " + " | ".join(engines) + " |")
    print("|---|---|" + "---|" * len(engines))
    for name, c in corpora.items():
        by = {r["engine"]: r for r in c["results"]}
        cells = []
        for e in engines:
            r = by.get(e)
            if r is None or "build_s" not in r:
                cells.append("-" if r is None else "skipped")
                continue
            update = fmt_seconds(r["update_p50"]) if r["update_p50"] is not None else "rebuild"
            cells.append(f"{fmt_seconds(r['build_s'])} / {update}")
        print(f"| {name} | {c['meta']['sections']:,} | " + " | ".join(cells) + " |")

    print("\nImport time (median over corpora, fresh process):\n")
    imports = []
    for e in engines:
        times = sorted(
            r["import_s"] for c in corpora.values() for r in c["results"] if r["engine"] == e and "import_s" in r
        )
        imports.append(f"{e} {fmt_seconds(times[len(times) // 2]) if times else '-'}")
    print(", ".join(imports))

    print("\nMemory over the worker's baseline: RSS kept after build / after malloc_trim / peak during build:\n")
    print("| corpus | text | " + " | ".join(engines) + " |")
    print("|---|---|" + "---|" * len(engines))
    for name, c in corpora.items():
        if c["meta"]["sections"] < 10_000:
            continue
        by = {r["engine"]: r for r in c["results"]}
        cells = []
        for e in engines:
            r = by.get(e)
            if r is None or "rss_retained" not in r:
                cells.append("-")
                continue
            cells.append(
                f"{fmt_bytes(r['rss_retained'])} / {fmt_bytes(r['rss_retained_trimmed'])} / "
                f"{fmt_bytes(r['rss_build_peak'])}"
            )
        print(f"| {name} | {fmt_bytes(c['meta']['text_bytes'])} | " + " | ".join(cells) + " |")

    print("\nRatios (same run):\n")
    print(
        "| corpus | engine | rank-bm25 p50 / ours | bm25s p50 / ours | bm25s p95 / ours "
        "| ours p50 / tantivy | build ours / FTS5 |"
    )
    print("|---|---|---|---|---|---|---|")
    for name, per in report["ratios"].items():
        for base, r in per.items():
            vals = [
                r["rank_bm25_p50_over_ours"],
                r["bm25s_p50_over_ours"],
                r["bm25s_p95_over_ours"],
                r["ours_p50_over_tantivy"],
                r["ours_build_over_fts5"],
            ]
            print(f"| {name} | {base} | " + " | ".join("-" if math.isnan(v) else f"{v:.2f}x" for v in vals) + " |")


if __name__ == "__main__":
    main(sys.argv[1])
