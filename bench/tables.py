"""The docs' figures, made from `bench/results/`: each `<!-- bench:NAME -->` block of a docs page
holds the newest table called NAME, rendered here, so the figures cannot drift from the data.

    uv run python -m bench.tables            # rewrite the blocks in docs/*.md
    uv run python -m bench.tables --check    # exit 1, naming the blocks, if any is out of date
    uv run python -m bench.tables RUN.json   # the tables of a saved `bench/speed.py --json` run
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.measure import fmt_bytes, fmt_seconds
from bench.results import RESULTS, Table, latest, table

DOCS = Path(__file__).resolve().parents[1] / "docs"
BLOCK = re.compile(r"^<!-- bench:(?P<name>[a-z0-9-]+) -->\n(?P<body>.*?)^<!-- /bench:(?P=name) -->$", re.M | re.S)
ENGINES = ["ours", "rank-bm25", "bm25s", "tantivy", "sqlite-fts5"]


# --- rendering ------------------------------------------------------------------------------------


def render(t: Table, path: Path, record: dict[str, Any], page: Path) -> str:
    """A table as markdown, its note, and the file it comes from (linked from `page`)."""
    lines = [
        "| " + " | ".join(t["columns"]) + " |",
        "|" + "---|" * len(t["columns"]),
        *("| " + " | ".join(row) + " |" for row in t["rows"]),
        "",
    ]
    if t.get("note"):
        lines += [t["note"], ""]
    rel = Path(os.path.relpath(path, page.parent)).as_posix()
    lines.append(f"Run of {record['date']}: [{path.name}]({rel}).")
    return "\n".join(lines) + "\n"


def generate(text: str, page: Path, folder: Path = RESULTS) -> str:
    """`text` with every bench block filled from the newest results in `folder`."""
    newest = latest(folder)

    def fill(m: re.Match[str]) -> str:
        name = m["name"]
        if name not in newest:
            raise KeyError(f"{page.name}: no table {name!r} in {folder}")
        path, record, t = newest[name]
        return f"<!-- bench:{name} -->\n{render(t, path, record, page)}<!-- /bench:{name} -->"

    return BLOCK.sub(fill, text)


def blocks(text: str) -> list[str]:
    return [m["name"] for m in BLOCK.finditer(text)]


def stale(folder: Path = RESULTS, docs: Path = DOCS) -> list[str]:
    """The pages whose blocks differ from what `generate` makes."""
    return [
        page.name
        for page in sorted(docs.glob("*.md"))
        if (text := page.read_text(encoding="utf-8")) != generate(text, page, folder)
    ]


# --- speed.py's tables ----------------------------------------------------------------------------


def speed_tables(report: dict[str, Any]) -> dict[str, Table]:
    """The tables of one `bench/speed.py` run, named as docs/speed.md's blocks name them."""
    corpora: dict[str, Any] = report["corpora"]
    engines = [e for e in ENGINES if any(e in {r["engine"] for r in c["results"]} for c in corpora.values())]
    out: dict[str, Table] = {}

    def cell(r: dict[str, Any] | None, kind: str) -> str:
        if r is None or "queries" not in r or kind not in r["queries"]:
            return "-"
        q = r["queries"][kind]
        return f"{fmt_seconds(q['p50'])} / {fmt_seconds(q['p95'])}"

    rows = []
    for name, c in corpora.items():
        by = {r["engine"]: r for r in c["results"]}
        kinds = [k for k in ("all", "with-top1%", "no-top1%") if any(k in r.get("queries", {}) for r in by.values())]
        for kind in kinds:
            n = next((r["queries"][kind]["n"] for r in by.values() if kind in r.get("queries", {})), 0)
            label = kind if kind != "all" else ("all" if len(kinds) == 1 else "both kinds")
            rows.append([name, f"{label} ({n})", *(cell(by.get(e), kind) for e in engines)])
    out["speed-query"] = table(["corpus", "queries", *engines], rows, "k = 10, p50 / p95.")

    rows = []
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
        rows.append([name, f"{c['meta']['sections']:,}", *cells])
    imports = []
    for e in engines:
        times = sorted(
            r["import_s"] for c in corpora.values() for r in c["results"] if r["engine"] == e and "import_s" in r
        )
        imports.append(f"{e} {fmt_seconds(times[len(times) // 2]) if times else '-'}")
    note = "Cold build (import apart) / one-file update, median. Import, median: " + ", ".join(imports) + "."
    out["speed-build"] = table(["corpus", "sections", *engines], rows, note)

    rows = []
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
            trimmed = fmt_bytes(r["rss_retained_trimmed"]) if r["rss_retained_trimmed"] is not None else "-"
            cells.append(f"{fmt_bytes(r['rss_retained'])} / {trimmed} / {fmt_bytes(r['rss_build_peak'])}")
        rows.append([name, fmt_bytes(c["meta"]["text_bytes"]), *cells])
    note = "RSS over the worker's baseline: kept after build / after `malloc_trim` / peak during build."
    out["speed-memory"] = table(["corpus", "text", *engines], rows, note)

    rows = []
    for name, per in report.get("ratios", {}).items():
        for base, r in per.items():
            vals = [
                r["rank_bm25_p50_over_ours"],
                r["bm25s_p50_over_ours"],
                r["bm25s_p95_over_ours"],
                r["ours_p50_over_tantivy"],
                r["ours_build_over_fts5"],
            ]
            rows.append([name, base, *("-" if math.isnan(v) else f"{v:.2f}x" for v in vals)])
    columns = ["corpus", "engine", "rank-bm25 p50 / ours", "bm25s p50 / ours", "bm25s p95 / ours"]
    out["speed-ratios"] = table([*columns, "ours p50 / tantivy", "build ours / FTS5"], rows)

    stdio = [s for s in report.get("stdio", []) if "error" not in s]
    if stdio:
        rows = []
        for s in stdio:
            replay = ""
            if "replay_p50" in s:
                ratio = s["replay_p50"] / s["replay_noop_p50"]
                replay = f"{fmt_seconds(s['replay_p50'])} ({fmt_seconds(s['replay_noop_p50'])}): {ratio:.2f}x"
            rows.append(
                [
                    f"`{s['tool']}`",
                    s["mode"],
                    f"{fmt_seconds(s['search_p50'])} / {fmt_seconds(s['search_p95'])}",
                    f"{fmt_seconds(s['noop_p50'])} / {fmt_seconds(s['noop_p95'])}",
                    f"{s['search_p50'] / s['noop_p50']:.2f}x",
                    replay,
                ]
            )
        columns = ["tool", "client", "search p50 / p95", "no-op p50 / p95", "ratio p50", "replay p50 (its no-op)"]
        out["speed-stdio"] = table(columns, rows)

    starts = [r for r in report.get("startup", []) if "error" not in r]
    if starts:
        rows = []
        for start in ("cold", "prime", "warm"):
            ok = sorted((r for r in starts if r.get("start") == start), key=lambda r: r["first_answer_s"])
            if ok:
                mid = ok[len(ok) // 2]
                first = fmt_seconds(mid["first_answer_s"]) + (" (partial)" if mid["first_answer_partial"] else "")
                rows.append([start, first, fmt_seconds(mid["index_s"]), fmt_seconds(mid["checked_s"])])
        out["speed-startup"] = table(["start", "first answer", "index ready", "whole (checked)"], rows)
    return out


def print_run(path: str) -> None:
    for name, t in speed_tables(json.loads(Path(path).read_text())).items():
        lines = ["| " + " | ".join(t["columns"]) + " |", "|" + "---|" * len(t["columns"])]
        lines += ["| " + " | ".join(row) + " |" for row in t["rows"]]
        print(f"\n{name}: {t.get('note', '')}\n" + "\n".join(lines))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="bench.tables", description=__doc__.split("\n")[0])
    parser.add_argument("run", nargs="?", help="a `bench/speed.py --json` file: print its tables")
    parser.add_argument("--check", action="store_true", help="change nothing; exit 1 if a page is out of date")
    args = parser.parse_args(argv)
    if args.run:
        print_run(args.run)
        return 0
    if args.check:
        pages = stale()
        if pages:
            print(f"out of date: {', '.join(pages)}; run `uv run python -m bench.tables`", file=sys.stderr)
        return 1 if pages else 0
    for page in sorted(DOCS.glob("*.md")):
        text = page.read_text(encoding="utf-8")
        made = generate(text, page)
        if made != text:
            page.write_text(made, encoding="utf-8")
            print(f"wrote {page.relative_to(DOCS.parent)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
