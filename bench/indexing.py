"""What the tokenizer costs at indexing time: the plain tokenizer, ours without stemming, ours.

    uv run python -m bench.indexing [--repeat 3]

Builds the whole library (sections and windows, every field) of both markdown-dev folders, and
the SciFact corpus as units, with a fresh tokenizer each time (a cold word cache, as at start-up),
and prints the best CPU time of each, runs interleaved. Issue 5 allows stemming to cost at most about 1.3x.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from pathlib import Path

from bench.datasets import DEFAULT_DATA, beir, collection_library, markdown_dev, markdown_library
from retrieval.engine.ranking import DEFAULT, PLAIN, Ranking
from retrieval.text.stopwords import LUCENE
from retrieval.text.tokenize import Tokenizer


def plain_tokenizer() -> Tokenizer:
    return Tokenizer(stem=False, stop_words=LUCENE, identifiers=False, fold=False, cjk=False)


def configurations() -> list[tuple[str, Callable[[], Ranking]]]:
    """Each builds its ranking, with a new tokenizer (a cold word cache), when called."""
    return [
        ("plain tokenizer, one field", lambda: PLAIN.but(tokenize=plain_tokenizer())),
        ("plain tokenizer, default fields", lambda: DEFAULT.but(tokenize=plain_tokenizer())),
        ("default without stemming", lambda: DEFAULT.but(tokenize=Tokenizer(stem=False))),
        ("default (stemming)", lambda: DEFAULT.but(tokenize=Tokenizer())),
    ]


def cpu_time(build: Callable[[], object]) -> float:
    """CPU seconds of this process: steadier than wall time on a shared machine."""
    start = time.process_time()
    build()
    return time.process_time() - start


def main() -> None:
    parser = argparse.ArgumentParser(prog="bench.indexing", description=__doc__.split("\n")[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    dev = markdown_dev(args.data)
    scifact = beir(args.data, "scifact")
    print("| configuration | markdown-dev (CPU s) | SciFact (CPU s) | vs without stemming |")
    print("|---|---|---|---|")
    configs = configurations()
    best: dict[str, list[float]] = {name: [float("inf"), float("inf")] for name, _ in configs}
    for _ in range(args.repeat):  # interleaved, so a busy spell hits every configuration alike
        for name, ranking in configs:

            def build_markdown(make: Callable[[], Ranking] = ranking) -> object:
                return [markdown_library(root, make()) for root in dev.roots.values()]

            def build_scifact(make: Callable[[], Ranking] = ranking) -> object:
                return collection_library(scifact, make())

            best[name][0] = min(best[name][0], cpu_time(build_markdown))
            best[name][1] = min(best[name][1], cpu_time(build_scifact))
    md0, sf0 = best["default without stemming"]
    for name, (md, sf) in best.items():
        print(f"| {name} | {md:.2f} | {sf:.2f} | {md / md0:.2f}x / {sf / sf0:.2f}x |")


if __name__ == "__main__":
    main()
