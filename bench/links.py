"""What crediting links to the pages they point to costs a `search_docs` query, on the development
sets' documentation trees: the tool's ranking with and without it, in the same process, each
question asked alternately by both, timed several times with its median kept.

    uv run python -m bench.links               # every documentation tree (about a minute)
    uv run python -m bench.links --only nextjs # one tree
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Sequence

from bench.devsets import indexed, load_sets
from bench.measure import median, percentile
from retrieval.engine.ranking import DEFAULT
from retrieval.search.policy import Policy
from retrieval.search.request import WINDOWS, SearchRequest

REPEATS = 5


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="bench.links", description=__doc__.split("\n")[0])
    parser.add_argument("--only", action="append", metavar="SET", help="only this set (repeatable)")
    args = parser.parse_args(argv)
    sets = [s for s in load_sets() if not s.agents and (not args.only or s.name in args.only)]
    print("| tree | pages | links | questions | p50 without | p50 with | p95 without | p95 with | p50 ratio |")
    print("|---|---|---|---|---|---|---|---|---|")
    for devset in sets:
        corpus, library = indexed(devset, DEFAULT)
        with_links = Policy(library)
        _, unlinked = indexed(devset, DEFAULT.but(link_weight=0.0))
        without = Policy(unlinked)
        times: dict[str, list[float]] = {"without": [], "with": []}
        for q in devset.questions:
            request = SearchRequest(query=q.text, kind=WINDOWS, k=10, deadline_s=60.0)
            runs: dict[str, list[float]] = {"without": [], "with": []}
            for _ in range(REPEATS):
                for name, policy in (("without", without), ("with", with_links)):
                    started = time.perf_counter()
                    policy.rank(request, corpus)
                    runs[name].append(time.perf_counter() - started)
            for name, taken in runs.items():
                times[name].append(median(taken))
        ms = {name: [t * 1000 for t in taken] for name, taken in times.items()}
        p50 = {name: median(taken) for name, taken in ms.items()}
        p95 = {name: percentile(taken, 95) for name, taken in ms.items()}
        print(
            f"| {devset.name} | {len(corpus.files)} | {library.links.n_docs} | {len(devset.questions)} "
            f"| {p50['without']:.2f} ms | {p50['with']:.2f} ms | {p95['without']:.2f} ms | {p95['with']:.2f} ms "
            f"| {p50['with'] / p50['without']:.2f}x |",
            flush=True,
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
