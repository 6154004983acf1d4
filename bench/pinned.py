"""Does searching pinned files cost ranking quality? markdown-dev with a team's pins, searched as
context_search searched before pinned files were searchable, and as it searches now.

    uv run python -m bench.pinned            # the dev set (../shared/eval/markdown-dev)
    uv run python -m bench.pinned --smoke    # uv's docs only, a few questions

The dev set's folders pin nothing by themselves, so each is given the pins a team would choose:
the files at its top and every folder's index page (`index.md`, `index.mdx`, `README.md`), the
overview pages a team keeps short and always on. Both runs index the same files; before, the
pinned files' sections are left out of the section index (as `CorpusFile.searchable` did), now
they are in it. Questions are split by whether their answer lies in a pinned file: the others
must not lose rank to the pinned sections that now compete with them.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from bench.datasets import DEFAULT_DATA, Question, markdown_dev
from bench.quality import section_rank
from corpus.catalog import Corpus, load
from corpus.roots import make_roots
from corpus.rules import PinSet
from retrieval.engine.library import Library
from retrieval.engine.ranking import DEFAULT
from retrieval.search.policy import served
from retrieval.search.request import SECTIONS
from retrieval.search.retriever import RetrievalRequest

INDEX_PAGES = ("index.md", "index.mdx", "readme.md")
DEPTH = 10


def team_pins(root: Path) -> list[str]:
    """The files at the top of the folder and every folder's index page, relative paths."""
    found = []
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root).as_posix()
        if path.is_file() and path.suffix in (".md", ".mdx") and ("/" not in rel or path.name.lower() in INDEX_PAGES):
            found.append(rel)
    return found


def library(corpus: Corpus, pinned_searched: bool) -> Library:
    built = Library(DEFAULT)
    built.apply(
        {
            f.path: built.prepare(f.path, f.uri, f.text, pinned_searched or not f.pinned, f.meta.title, f.meta.tags)
            for f in corpus.files.values()
        }
    )
    return built


def scores(ranks: Sequence[int | None]) -> str:
    n = len(ranks) or 1
    hit1 = sum(r == 1 for r in ranks) / n
    hit3 = sum(r is not None and r <= 3 for r in ranks) / n
    mrr = sum(1 / r for r in ranks if r) / n
    return f"{len(ranks):>3} | {hit1:.3f} | {hit3:.3f} | {mrr:.3f}"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="bench.pinned", description=__doc__.split("\n")[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA, help="the eval folder (../shared/eval)")
    parser.add_argument("--smoke", action="store_true", help="uv's docs and ten questions: seconds")
    args = parser.parse_args(argv)
    if not (args.data / "markdown-dev").is_dir():
        print(f"no markdown-dev under {args.data}: pass --data", file=sys.stderr)
        return 2
    dev = markdown_dev(args.data)
    roots = {"uv": dev.roots["uv"]} if args.smoke else dev.roots
    rows: dict[tuple[str, str], list[int | None]] = {}
    n_pinned = 0
    for name, root in roots.items():
        pins = team_pins(root)
        corpus = load(make_roots([root]), PinSet(pins))
        pinned = {f.path for f in corpus.files.values() if f.pinned}
        n_pinned += len(pinned)
        questions: list[Question] = [q for q in dev.questions if q.corpus == name][: 10 if args.smoke else None]
        for label, searched in (("before (pinned not searched)", False), ("now (pinned searched)", True)):
            retriever = served(library(corpus, searched), SECTIONS)
            for q in questions:
                found = [d.unit for d in retriever.search(RetrievalRequest(q.text, DEPTH)).docs]
                group = "answer in a pinned file" if q.expected[0] in pinned else "answer in another file"
                rows.setdefault((label, group), []).append(section_rank(found, q))
                rows.setdefault((label, "all"), []).append(section_rank(found, q))
    print(f"markdown-dev, {n_pinned} files pinned (each folder's top files and index pages)\n")
    print("| run | questions | n | section hit@1 | section hit@3 | MRR@10 |")
    print("|---|---|---|---|---|---|")
    for (label, group), ranks in sorted(rows.items(), key=lambda kv: (kv[0][1], kv[0][0])):
        print(f"| {label} | {group} | {scores(ranks)} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
