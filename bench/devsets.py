"""The development sets (`bench/devsets/`): questions an agent asks mid-task over real documentation
trees and real repositories' agent files, each asked as the tools ask it (the retrieval policy, the
shipped ranking) and scored against its judged pages and sections, beside the shipped ranking asked with
each question's variants as the tools' `queries` (written by a language model from the question alone,
`variants.jsonl`), without the words of links to a page, without its page bonus (and so without links),
and plain BM25, in the same run.

    uv run python -m bench.devsets              # the table, and a question's time (two minutes)
    uv run python -m bench.devsets --misses     # and every question whose answer is not in the top 3

Documentation sets: `search_docs` ranks windows, and a page's rank is where its first window is
(MRR over the top 10 windows, Hit@1, Hit@3); `context_search` ranks sections (section hit@3). Agent
files sets (`agents-*`, served as a project's agent files): sections (hit@1, hit@3, MRR) and files.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from bench.datasets import read_jsonl
from bench.devsets_archive import ARCHIVE, unpacked
from corpus.catalog import Corpus, load
from corpus.identity import split_display
from corpus.roots import make_roots
from corpus.rules import PinSet
from retrieval.engine.library import Library, index_corpus
from retrieval.engine.ranking import DEFAULT, PLAIN, Ranking
from retrieval.search.policy import Policy
from retrieval.search.request import SECTIONS, WINDOWS, SearchKind, SearchRequest

DEVSETS = Path(__file__).resolve().parent / "devsets"
KINDS = ("lookup", "how-to", "conceptual", "comparison", "troubleshooting")
DEPTH = 10
"""How deep each answer is read: a page or section ranked below this counts as not found."""
Hit = tuple[str, str | None]
"""A hit as the sets judge it: its path in the set's files and its heading."""


@dataclass(frozen=True, slots=True)
class Judged:
    """One question and what answers it: sections as (path in the set's files, heading)."""

    text: str
    kind: str
    sections: frozenset[tuple[str, str]]
    variants: tuple[str, ...] = ()
    """Other ways of asking it, as an agent sends them in the tools' `queries` (`variants.jsonl`)."""

    @property
    def pages(self) -> frozenset[str]:
        return frozenset(path for path, _ in self.sections)


@dataclass(frozen=True, slots=True)
class DevSet:
    name: str
    archive: Path
    """Its documents, packed (`bench/devsets/<set>/files.tar.xz`)."""
    agents: bool
    """Agent files of a repository (served as a project's agent files), not a documentation tree."""
    questions: tuple[Judged, ...]

    @property
    def files(self) -> Path:
        """The folder of its documents, unpacked into the cache on first use (`unpacked`)."""
        return unpacked(self.archive)


@dataclass(frozen=True, slots=True)
class Ranker:
    """One column of runs: a ranking, asked with or without the questions' variants."""

    who: str
    ranking: Ranking
    queries: bool = False
    """Each question asked with its variants as the tools' `queries`."""


def load_sets(folder: Path = DEVSETS) -> list[DevSet]:
    """Every set under `folder`: a sub-folder holding `questions.jsonl` and its documents' archive,
    `files.tar.xz` (and, if it has them, the questions' variants in `variants.jsonl`). Nothing is
    unpacked until a set's `files` is read."""
    sets = []
    for path in sorted(p for p in folder.iterdir() if (p / "questions.jsonl").is_file()):
        variants = path / "variants.jsonl"
        more = {row["question"]: tuple(row["queries"]) for row in read_jsonl(variants)} if variants.is_file() else {}
        questions = []
        for row in read_jsonl(path / "questions.jsonl"):
            answers = frozenset((a["path"], a["heading"]) for a in row["answers"])
            questions.append(Judged(row["question"], row["kind"], answers, more.get(row["question"], ())))
        sets.append(DevSet(path.name, path / ARCHIVE, path.name.startswith("agents-"), tuple(questions)))
    return sets


def missing(sets: Iterable[DevSet]) -> list[str]:
    """The sets whose documents are not here (an sdist leaves the archives out)."""
    return [s.name for s in sets if not s.archive.is_file()]


def indexed(devset: DevSet, ranking: Ranking) -> tuple[Corpus, Library]:
    """The set's files as the server indexes them: a documentation tree as a folder of its own, a
    repository's agent files as a project's (`--conventional`), nothing pinned."""
    roots = make_roots([], conventional=devset.files) if devset.agents else make_roots([devset.files])
    corpus = load(roots, PinSet([]))
    return corpus, index_corpus(corpus, Library(ranking))


def ranked(policy: Policy, corpus: Corpus, query: str, kind: SearchKind, queries: Sequence[str] = ()) -> list[Hit]:
    """(path in the set's files, heading) of each hit, best first, as the tool answers it."""
    request = SearchRequest(query=query, kind=kind, k=DEPTH, deadline_s=60.0, variants=tuple(queries))
    return [(split_display(d.unit.path)[1], d.unit.heading) for d in policy.rank(request, corpus).docs]


def first(found: Iterable[object], wanted: frozenset[object]) -> int | None:
    """1-based rank of the first item of `found` in `wanted`."""
    return next((i for i, item in enumerate(found, start=1) if item in wanted), None)


@dataclass(slots=True)
class Ranks:
    """Where each question's answer came: its first page (in windows) and first section."""

    page: list[int | None]
    section: list[int | None]
    file: list[int | None]
    seconds: float = 0.0
    """How long the questions took to answer, both tools (`run`)."""

    def add(self, q: Judged, sections: Sequence[Hit], windows: Sequence[Hit]) -> None:
        """One question's ranks, from its sections and windows as (path, heading), best first."""
        self.section.append(first(sections, q.sections))
        self.file.append(first(dict.fromkeys(p for p, _ in sections), q.pages))
        self.page.append(first(dict.fromkeys(p for p, _ in windows), q.pages))


def run(devset: DevSet, ranker: Ranker) -> Ranks:
    corpus, library = indexed(devset, ranker.ranking)
    policy = Policy(library)
    ranks = Ranks([], [], [])
    for q in devset.questions:
        more = q.variants if ranker.queries else ()
        started = time.perf_counter()
        sections = ranked(policy, corpus, q.text, SECTIONS, more)
        windows = ranked(policy, corpus, q.text, WINDOWS, more)
        ranks.seconds += time.perf_counter() - started
        ranks.add(q, sections, windows)
    return ranks


def mrr(ranks: Sequence[int | None]) -> float:
    return sum(1.0 / r for r in ranks if r) / len(ranks) if ranks else 0.0


def hit(ranks: Sequence[int | None], k: int) -> float:
    return sum(1 for r in ranks if r and r <= k) / len(ranks) if ranks else 0.0


HEADER = [
    "| set | questions | ranker | page MRR | page Hit@1 | page Hit@3 | section Hit@1 | section Hit@3 "
    "| section MRR | file Hit@3 |",
    "|---|---|---|---|---|---|---|---|---|---|",
]


def row(label: str, who: str, ranks: Ranks) -> str:
    n = len(ranks.section)
    cells = [mrr(ranks.page), hit(ranks.page, 1), hit(ranks.page, 3)]
    cells += [hit(ranks.section, 1), hit(ranks.section, 3), mrr(ranks.section), hit(ranks.file, 3)]
    return f"| {label} | {n} | {who} | " + " | ".join(f"{c:.3f}" for c in cells) + " |"


def joined(parts: Iterable[Ranks]) -> Ranks:
    out = Ranks([], [], [])
    for r in parts:
        out.page += r.page
        out.section += r.section
        out.file += r.file
        out.seconds += r.seconds
    return out


def report(sets: Sequence[DevSet], rankers: Sequence[Ranker], misses: bool = False) -> list[str]:
    """The table: each set, the documentation sets together, the agent files sets together, all,
    and each kind of question, for each ranker; then the misses of the first ranker."""
    out = [*HEADER]
    runs = {r.who: {s.name: run(s, r) for s in sets} for r in rankers}
    groups = [(s.name, [s]) for s in sets]
    groups += [
        ("documentation", [s for s in sets if not s.agents]),
        ("agent files", [s for s in sets if s.agents]),
        ("all", list(sets)),
    ]
    for label, members in groups:
        if members:
            out += [row(label, who, joined(by_set[s.name] for s in members)) for who, by_set in runs.items()]
    for kind in KINDS:
        for who, by_set in runs.items():
            picked = [
                Ranks([r.page[i]], [r.section[i]], [r.file[i]])
                for s in sets
                for i, q in enumerate(s.questions)
                if q.kind == kind
                for r in (by_set[s.name],)
            ]
            if picked:
                out.append(row(f"kind: {kind}", who, joined(picked)))
    out += ["", "A question's time, both tools, in this process (the index built, the policy as the tools run it):"]
    for who, by_set in runs.items():
        together = joined(by_set.values())
        out.append(f"- {who}: {1000 * together.seconds / max(len(together.section), 1):.1f} ms")
    if misses:
        out += ["", "Not in the top 3 (sections; pages for documentation):", ""]
        who, by_set = next(iter(runs.items()))
        for s in sets:
            r = by_set[s.name]
            for i, q in enumerate(s.questions):
                rank = r.section[i] if s.agents else r.page[i]
                if not rank or rank > 3:
                    want = "; ".join(f"{p} > {h}" for p, h in sorted(q.sections))
                    out.append(f"- [{s.name}, {q.kind}] {q.text} (rank {rank}; want {want})")
    return out


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="bench.devsets", description=__doc__.split("\n")[0])
    parser.add_argument("--misses", action="store_true", help="list the questions not answered in the top 3")
    parser.add_argument("--only", action="append", metavar="SET", help="only this set (repeatable)")
    args = parser.parse_args(argv)
    sets = [s for s in load_sets() if not args.only or s.name in args.only]
    if absent := missing(sets):
        parser.error(f"no documents for {', '.join(absent)}: their {ARCHIVE} is in a clone, not in the sdist")
    rankers = [
        Ranker("ours", DEFAULT),
        Ranker("ours, with queries", DEFAULT, queries=True),
        Ranker("ours, no links", DEFAULT.but(link_weight=0.0)),
        Ranker("ours, no page bonus", DEFAULT.but(page_weight=0.0)),
        Ranker("plain BM25", PLAIN),
    ]
    print("\n".join(report(sets, rankers, args.misses)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
