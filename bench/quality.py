"""Ranking quality on public test collections: ours against rank-bm25's BM25Okapi and published BM25.

    uv run python -m bench.quality              # the table, shipped defaults (a few minutes)
    uv run python -m bench.quality --ablation   # every step on the tuning splits only
    uv run python -m bench.quality --smoke      # a few queries, seconds (tests/test_bench.py)
    uv run python -m bench.quality --ablation --only markdown-dev --only cranfield   # a subset
    uv run python -m bench.quality --ablation --step proximity     # only the steps naming proximity
    uv run python -m bench.quality --only devsets                  # only our development sets

Everything runs through the server's own pipeline (see `bench/datasets.py`). IR metrics are
computed by ir-measures with its pytrec_eval provider, i.e. trec_eval's definitions (nDCG@10 with
gains = relevance, R@100, MAP over the top 1000). Tuning data: markdown-dev, all of Cranfield,
SciFact's odd query ids; SciFact's even ids are held out and reported, never tuned on.

`devsets` is our own development sets (`bench/devsets/`, 522 questions over nine documentation
trees and seven repositories' agent files), summed up by group, each question asked alone and with
its variants as `queries`; `bench.devsets` prints them by set and by kind of question, and lists the
misses.
"""

from __future__ import annotations

import argparse
import math
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

import ir_measures
import numpy as np
from ir_measures import AP, R, nDCG
from rank_bm25 import BM25Okapi

from bench import devsets, results
from bench.datasets import (
    DEFAULT_DATA,
    Collection,
    MarkdownDev,
    Question,
    beir,
    collection_library,
    markdown_dev,
    markdown_library,
)
from retrieval.chunks.units import Unit
from retrieval.engine.library import Library
from retrieval.engine.ranking import DEFAULT, PLAIN, Ranking
from retrieval.search.policy import served
from retrieval.search.request import SECTIONS, WINDOWS
from retrieval.search.retriever import RetrievalRequest

MEASURES = [nDCG @ 10, R @ 100, AP]
COLLECTIONS = frozenset({"markdown-dev", "scifact", "cranfield", "devsets"})
DISTRACTOR_FLOORS = (0.0, 0.2, 0.3, 0.5)
SMOKE_DEVSETS = ("httpx", "agents-ruff")
RUN_DEPTH = 1000
SECTION_DEPTH = 10

PUBLISHED = {
    "scifact": "nDCG@10: BEIR 0.665; Anserini flat 0.679, multifield 0.665; PyTerrier 0.684; "
    "Lucene(1.5,0.75) 0.687; Elasticsearch 0.690",
    "cranfield": "no authoritative figure; plain BM25 without stemming (0.9, 0.4) about nDCG@10 0.36, MAP 0.28",
    "markdown-dev": "plain BM25 over sections: section hit@3 0.62 (with also_acceptable), file hit@3 0.80",
}

Ranked = list[Unit]


# --- markdown-dev ----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class MarkdownScores:
    hit1: float
    hit3: float
    mrr: float
    file_hit3: float
    window_hit3: float


def section_rank(ranked: Sequence[Unit], q: Question) -> int | None:
    """1-based rank of the first acceptable section, or None."""
    for i, u in enumerate(ranked, start=1):
        if (u.path, u.heading) in q.acceptable:
            return i
    return None


def file_hit(ranked: Sequence[Unit], q: Question, k: int) -> bool:
    files = {path for path, _ in q.acceptable}
    return any(u.path in files for u in ranked[:k])


def window_hit(ranked: Sequence[Unit], q: Question, sections: dict[tuple[str, str], Unit], k: int) -> bool:
    """A window answers when it overlaps an acceptable section by at least half of the shorter
    of the two (in lines): it holds most of a short answer, or is mostly a long one."""
    for w in ranked[:k]:
        for key in q.acceptable:
            s = sections.get(key)
            if s is None or s.path != w.path:
                continue
            common = min(w.end_line, s.end_line) - max(w.start_line, s.start_line) + 1
            shorter = min(w.end_line - w.start_line, s.end_line - s.start_line) + 1
            if common * 2 >= shorter:
                return True
    return False


def score_markdown(
    questions: Sequence[Question],
    sections: Callable[[Question], Ranked],
    windows: Callable[[Question], Ranked],
    section_of: dict[tuple[str, str], Unit],
) -> tuple[MarkdownScores, list[tuple[Question, Ranked]]]:
    hit1 = hit3 = mrr = fhit = whit = 0.0
    misses: list[tuple[Question, Ranked]] = []
    for q in questions:
        ranked = sections(q)
        rank = section_rank(ranked, q)
        hit1 += rank == 1
        hit3 += rank is not None and rank <= 3
        mrr += 1.0 / rank if rank else 0.0
        fhit += file_hit(ranked, q, 3)
        whit += window_hit(windows(q), q, section_of, 3)
        if rank is None or rank > 3:
            misses.append((q, ranked))
    n = len(questions) or 1
    return MarkdownScores(hit1 / n, hit3 / n, mrr / n, fhit / n, whit / n), misses


class Okapi:
    """rank-bm25's BM25Okapi (its defaults: k1 1.5, b 0.75, Robertson idf with its floor) over the
    same units and the same tokens as ours, one flat field."""

    def __init__(self, units: Sequence[Unit], tokenize: Callable[[str], Sequence[str]]) -> None:
        self.units = list(units)
        self.tokenize = tokenize
        self.model = BM25Okapi([list(tokenize(u.text)) or [""] for u in self.units])
        self.order = sorted(range(len(self.units)), key=lambda i: (self.units[i].path, self.units[i].start_line))
        self.rank_of = np.empty(len(self.units), dtype=np.int64)
        self.rank_of[self.order] = np.arange(len(self.units))

    def search(self, query: str, k: int) -> list[tuple[Unit, float]]:
        terms = list(self.tokenize(query))
        if not terms:
            return []
        scores = np.asarray(self.model.get_scores(terms), dtype=np.float64)
        matched = np.flatnonzero(scores > 0)
        best = sorted(matched.tolist(), key=lambda i: (-scores[i], self.rank_of[i]))[:k]
        return [(self.units[i], float(scores[i])) for i in best]


def all_units(library: Library, windows: bool = False) -> list[Unit]:
    index = library.windows if windows else library.sections
    return [u for g in index.groups() for u in index.payloads(g)]


@dataclass(slots=True)
class MarkdownRuns:
    """Per question: our sections and windows, and BM25Okapi's, best first."""

    ours_sections: dict[str, Ranked]
    ours_windows: dict[str, Ranked]
    okapi_sections: dict[str, Ranked]
    okapi_windows: dict[str, Ranked]
    section_of: dict[tuple[str, str], Unit]

    def scores(self, questions: Sequence[Question], okapi: bool = False) -> MarkdownScores:
        sections = self.okapi_sections if okapi else self.ours_sections
        windows = self.okapi_windows if okapi else self.ours_windows
        return score_markdown(questions, lambda q: sections[q.text], lambda q: windows[q.text], self.section_of)[0]

    def misses(self, questions: Sequence[Question]) -> list[tuple[Question, Ranked]]:
        return score_markdown(questions, lambda q: self.ours_sections[q.text], lambda q: [], self.section_of)[1]


def run_markdown(dev: MarkdownDev, ranking: Ranking, questions: Sequence[Question]) -> MarkdownRuns:
    runs = MarkdownRuns({}, {}, {}, {}, {})
    for name, root in dev.roots.items():
        asked = [q for q in questions if q.corpus == name]
        if not asked:
            continue
        library = markdown_library(root, ranking)
        sections, windows = all_units(library), all_units(library, windows=True)
        runs.section_of.update({(u.path, u.heading or ""): u for u in sections})
        okapi_s, okapi_w = Okapi(sections, ranking.tokenize), Okapi(windows, ranking.tokenize)
        for q in asked:
            found = served(library, SECTIONS).search(RetrievalRequest(q.text, SECTION_DEPTH)).docs
            runs.ours_sections[q.text] = [d.unit for d in found]
            found = served(library, WINDOWS).search(RetrievalRequest(q.text, 3)).docs
            runs.ours_windows[q.text] = [d.unit for d in found]
            runs.okapi_sections[q.text] = [u for u, _ in okapi_s.search(q.text, SECTION_DEPTH)]
            runs.okapi_windows[q.text] = [u for u, _ in okapi_w.search(q.text, 3)]
    return runs


def distractors(dev: MarkdownDev, ranking: Ranking, floors: Sequence[float]) -> list[str]:
    """The distractor test: both docs folders in one index; for each question, how many
    of the top 3 come from the other folder, and what a relative score floor does about it."""
    library = markdown_library(list(dev.roots.values()), ranking.but(score_floor=0.0))
    found = {q.text: served(library, SECTIONS).search(RetrievalRequest(q.text, 3)).docs for q in dev.questions}
    rows = [
        "| score floor | section hit@3 | hits shown per question | from the other folder |",
        "|---|---|---|---|",
    ]
    for floor in floors:
        hits = shown = foreign = 0
        for q in dev.questions:
            docs = found[q.text]
            kept = [d for d in docs if d.score >= floor * docs[0].score] if docs else []
            hits += any((d.unit.path, d.unit.heading) in q.acceptable for d in kept)
            shown += len(kept)
            foreign += sum(not d.unit.path.startswith(f"{q.corpus}/") for d in kept)
        n = len(dev.questions) or 1
        rows.append(f"| {floor:.2f} | {hits / n:.3f} | {shown / n:.2f} | {foreign / max(shown, 1):.3f} |")
    return rows


# --- SciFact and Cranfield -------------------------------------------------------------------


Run = dict[str, dict[str, float]]


def run_collection(collection: Collection, ranking: Ranking, qids: Sequence[str]) -> tuple[Run, Run]:
    """Our run and BM25Okapi's, over the same units and tokens, top `RUN_DEPTH` each."""
    library = collection_library(collection, ranking)
    okapi = Okapi(all_units(library), ranking.tokenize)
    ours: Run = {}
    theirs: Run = {}
    for qid in qids:
        text = collection.queries[qid]
        found = served(library, SECTIONS).search(RetrievalRequest(text, RUN_DEPTH)).docs
        ours[qid] = {d.unit.uri: d.score for d in found}
        theirs[qid] = {u.uri: s for u, s in okapi.search(text, RUN_DEPTH)}
    return ours, theirs


def evaluate(qrels: dict[str, dict[str, int]], run: Run, qids: Sequence[str]) -> dict[str, float]:
    """trec_eval's measures (pytrec_eval through ir-measures); a query with no hit scores 0."""
    subset = {q: qrels[q] for q in qids}
    filled = {q: run.get(q) or {"__none__": 0.0} for q in qids}
    result = ir_measures.pytrec_eval.calc_aggregate(MEASURES, subset, filled)
    return {str(m): float(result[m]) for m in MEASURES}


def parity(qids: Sequence[str], odd: bool) -> list[str]:
    return [q for q in qids if int(q) % 2 == (1 if odd else 0)]


# --- the table -------------------------------------------------------------------------------


def fmt(x: float) -> str:
    return "-" if math.isnan(x) else f"{x:.3f}"


def markdown_rows(label: str, runs: MarkdownRuns, questions: Sequence[Question]) -> list[str]:
    rows = []
    for name, okapi in (("ours", False), ("BM25Okapi", True)):
        s = runs.scores(questions, okapi)
        rows.append(
            f"| {label} | {name} | {fmt(s.hit1)} | {fmt(s.hit3)} | {fmt(s.mrr)} | {fmt(s.file_hit3)} "
            f"| {fmt(s.window_hit3)} |"
        )
    return rows


MARKDOWN_HEADER = [
    "| markdown-dev | ranker | section hit@1 | section hit@3 | MRR@10 | file hit@3 | window hit@3 |",
    "|---|---|---|---|---|---|---|",
]
IR_HEADER = ["| collection | split | ranker | nDCG@10 | R@100 | MAP |", "|---|---|---|---|---|---|"]


def ir_row(collection: str, split: str, who: str, m: dict[str, float]) -> str:
    return f"| {collection} | {split} | {who} | {fmt(m['nDCG@10'])} | {fmt(m['R@100'])} | {fmt(m['AP'])} |"


@dataclass(slots=True)
class Data:
    dev: MarkdownDev
    scifact: Collection
    cranfield: Collection
    devsets: list[devsets.DevSet]


def load_data(root: Path, smoke: bool) -> Data:
    dev = markdown_dev(root)
    scifact = beir(root, "scifact")
    cranfield = beir(root, "cranfield", "qrels_binary.tsv")
    sets = devsets.load_sets()
    if smoke:
        sets = [replace(s, questions=s.questions[:4]) for s in sets if s.name in SMOKE_DEVSETS]
        dev.questions = [q for q in dev.questions if q.corpus == "uv"][:5]
        dev.roots = {"uv": dev.roots["uv"]}
        for c in (scifact, cranfield):
            keep = sorted(c.queries, key=int)[:8]
            c.queries = {q: c.queries[q] for q in keep}
            judged = {d for q in keep for d in c.qrels[q]}
            c.docs = {d: t for i, (d, t) in enumerate(c.docs.items()) if i < 300 or d in judged}
    return Data(dev, scifact, cranfield, sets)


def report(data: Data, ranking: Ranking, show_misses: bool, only: frozenset[str] = COLLECTIONS) -> list[str]:
    out = []
    if "markdown-dev" in only:
        out += markdown_report(data, ranking, show_misses)
    collections = [c for c in (data.scifact, data.cranfield) if c.name in only]
    if collections:
        out += ir_report(collections, ranking)
    if "devsets" in only:
        out += devsets_report(data.devsets, ranking)
    return out


def devsets_report(sets: Sequence[devsets.DevSet], ranking: Ranking) -> list[str]:
    """Our development sets by group (documentation, agent files, all), beside the same ranking asked
    with the questions' variants as `queries`, and plain BM25."""
    rankers = [
        devsets.Ranker("ours", ranking),
        devsets.Ranker("ours, with queries", ranking, queries=True),
        devsets.Ranker("plain BM25", PLAIN),
    ]
    rows = devsets.report(sets, rankers)
    groups = tuple(f"| {group} | " for group in ("documentation", "agent files", "all"))
    out = ["", "## Development sets (search_docs pages; context_search sections)", "", *rows[:2]]
    out += [line for line in rows[2:] if line.startswith(groups)]
    return [*out, "", "By set, by kind and the misses: `uv run python -m bench.devsets --misses`."]


def markdown_report(data: Data, ranking: Ranking, show_misses: bool) -> list[str]:
    out = ["## markdown-dev (context_search sections; search_docs windows)", "", *MARKDOWN_HEADER]
    questions = data.dev.questions
    md = run_markdown(data.dev, ranking, questions)
    for label, subset in (
        ("all", questions),
        ("uv", [q for q in questions if q.corpus == "uv"]),
        ("mcp", [q for q in questions if q.corpus == "mcp"]),
        ("paraphrased", [q for q in questions if q.paraphrased]),
        ("literal", [q for q in questions if not q.paraphrased]),
    ):
        if subset:
            out += markdown_rows(label, md, subset)
    out += ["", f"published: {PUBLISHED['markdown-dev']}", ""]
    if len(data.dev.roots) > 1:
        out += ["## Distractors (both folders in one index)", ""]
        out += [*distractors(data.dev, ranking, DISTRACTOR_FLOORS), ""]
    if show_misses:
        out += ["", "## markdown-dev misses (not in the top 3)", ""]
        for q, ranked in md.misses(questions):
            out.append(f"- {q.text}  [want {q.expected[0]} > {q.expected[1]}]")
            out += [f"    {i}. {u.path} > {u.heading}" for i, u in enumerate(ranked[:3], start=1)]
        out.append("")
    return out


def ir_report(collections: Sequence[Collection], ranking: Ranking) -> list[str]:
    out = ["## SciFact and Cranfield", "", *IR_HEADER]
    for collection in collections:
        ids = sorted(collection.queries, key=int)
        splits = [("all", ids)]
        if collection.name == "scifact":
            splits = [("odd (tuning)", parity(ids, True)), ("even (held out)", parity(ids, False)), *splits]
        ours, okapi = run_collection(collection, ranking, ids)
        uncut, _ = run_collection(collection, ranking.but(score_floor=0.0), ids)
        for split, split_ids in splits:
            for who, run in (("ours", ours), ("ours, no floor", uncut), ("BM25Okapi", okapi)):
                out.append(ir_row(collection.name, split, who, evaluate(collection.qrels, run, split_ids)))
    out += ["", *(f"published {c.name}: {PUBLISHED[c.name]}" for c in collections)]
    out.append("IR metrics: ir-measures (pytrec_eval provider: trec_eval definitions).")
    out.append(
        f"ours: the shipped defaults, score floor {ranking.score_floor} included (it cuts the deep "
        "ranking R@100 and MAP read; nDCG@10 barely moves); no floor: the same ranking uncut."
    )
    return out


# --- ablation --------------------------------------------------------------------------------


NOT_RUN = {str(m): math.nan for m in MEASURES}


def tuning_row(data: Data, name: str, ranking: Ranking, only: frozenset[str] = COLLECTIONS) -> str:
    """One ablation row; a collection not in `only` shows `-`."""
    nan = math.nan
    md = MarkdownScores(nan, nan, nan, nan, nan)
    if "markdown-dev" in only:
        md = run_markdown(data.dev, ranking, data.dev.questions).scores(data.dev.questions)
    sci, sci_m = data.scifact, NOT_RUN
    if "scifact" in only:
        odd = parity(sorted(sci.queries, key=int), True)
        sci_m = evaluate(sci.qrels, run_collection(sci, ranking, odd)[0], odd)
    cran, cran_m = data.cranfield, NOT_RUN
    if "cranfield" in only:
        cids = sorted(cran.queries, key=int)
        cran_m = evaluate(cran.qrels, run_collection(cran, ranking, cids)[0], cids)
    return (
        f"| {name} | {fmt(md.hit1)} | {fmt(md.hit3)} | {fmt(md.mrr)} | {fmt(md.file_hit3)} "
        f"| {fmt(md.window_hit3)} "
        f"| {fmt(sci_m['nDCG@10'])} | {fmt(sci_m['R@100'])} | {fmt(sci_m['AP'])} "
        f"| {fmt(cran_m['nDCG@10'])} | {fmt(cran_m['R@100'])} | {fmt(cran_m['AP'])} |"
    )


ABLATION_HEADER = [
    "| configuration | md hit@1 | md hit@3 | md MRR | md file@3 | md window@3 "
    "| sf-odd nDCG@10 | sf-odd R@100 "
    "| sf-odd MAP | cran nDCG@10 | cran R@100 | cran MAP |",
    "|---|---|---|---|---|---|---|---|---|---|---|---|",
]


RESULT_TABLES = {
    "## markdown-dev": "quality-markdown-dev",
    "## SciFact and Cranfield": "quality-ir",
    "## Development sets": "quality-devsets",
}
"""The report's sections whose first table goes to `bench/results/`, and the name docs/quality.md shows it by."""


def result_tables(lines: Sequence[str]) -> dict[str, results.Table]:
    """The tables of a printed report, named as docs/quality.md's blocks name them."""
    out: dict[str, results.Table] = {}
    heading, section = "", list[str]()
    for line in [*lines, "## end"]:
        if line.startswith("## "):
            name = next((n for h, n in RESULT_TABLES.items() if heading.startswith(h)), None)
            found = results.from_markdown(section)
            if name and found:
                out[name] = found[0]
            heading, section = line, []
        else:
            section.append(line)
    return out


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="bench.quality", description=__doc__.split("\n")[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA, help="the eval folder (../shared/eval)")
    parser.add_argument("--smoke", action="store_true", help="a few queries and documents: seconds")
    parser.add_argument("--ablation", action="store_true", help="each step, tuning splits only")
    parser.add_argument("--misses", action="store_true", help="list markdown-dev misses")
    parser.add_argument("--plain", action="store_true", help="the plain configuration instead of the default")
    parser.add_argument(
        "--step",
        action="append",
        metavar="TEXT",
        help="with --ablation: run only the steps whose name contains TEXT (repeatable)",
    )
    parser.add_argument(
        "--only",
        action="append",
        choices=sorted(COLLECTIONS),
        help="run only this collection (repeatable; default: all four)",
    )
    parser.add_argument(
        "--results",
        type=Path,
        metavar="DIR",
        help="write the tables as DIR/quality-<date>.json (default: bench/results/ for a full run)",
    )
    args = parser.parse_args(argv)
    only = frozenset(args.only or COLLECTIONS)
    if not (args.data / "markdown-dev" / "questions.jsonl").is_file():
        print(f"no eval data at {args.data}: pass --data DIR (../shared/eval)", file=sys.stderr)
        return 2
    if args.ablation and only == {"devsets"}:
        print("the ablation runs markdown-dev, scifact and cranfield; the dev sets: bench.devsets", file=sys.stderr)
        return 2
    data = load_data(args.data, args.smoke)
    if args.ablation:
        from bench.ablation import steps

        print("\n".join(ABLATION_HEADER), flush=True)
        rows = list(ABLATION_HEADER)
        for name, ranking in steps():
            if args.step and not any(text in name for text in args.step):
                continue
            rows.append(tuning_row(data, name, ranking, only))
            print(rows[-1], flush=True)
        whole = not (args.smoke or args.step or args.only)
        if args.results or whole:
            save("quality_ablation", {"quality-ablation": results.from_markdown(rows)[0]}, args, argv)
        return 0
    lines = report(data, PLAIN if args.plain else DEFAULT, args.misses, only)
    print("\n".join(lines))
    if args.results or not (args.smoke or args.plain or args.only):
        save("quality", result_tables(lines), args, argv)
    return 0


def save(bench: str, tables: dict[str, results.Table], args: argparse.Namespace, argv: Sequence[str] | None) -> None:
    from bench.measure import machine

    command = " ".join(["uv run python -m bench.quality", *(sys.argv[1:] if argv is None else argv)])
    saved = results.save(bench, tables, machine=machine(), command=command, folder=args.results or results.RESULTS)
    print(f"\ntables: {saved} (`uv run python -m bench.tables` puts them in the docs)")


if __name__ == "__main__":
    raise SystemExit(main())
