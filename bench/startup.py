"""Start-up to first answer, in a fresh process, timed from after the imports.

`python bench/startup.py --docs DIR --query TEXT [--start NAME]` prints one JSON line.

There is no persistent index yet, so the only starter is `cold`: read every root, chunk,
tokenize and index (what `LiveIndex` does today). When the cached index lands, add its starter to
`STARTERS` (a function from roots to a ready `LiveIndex`) and `bench/speed.py --start warm`
measures the warm restart with everything else unchanged.
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

REPO = Path(__file__).resolve().parents[1]


def main(argv: Sequence[str] | None = None) -> None:
    import argparse

    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--root", default=str(REPO / ".AGENTS"))
    parser.add_argument("--docs", action="append", default=[])
    parser.add_argument("--query", required=True)
    parser.add_argument("--start", default="cold")
    args = parser.parse_args(argv)

    t0 = time.perf_counter()
    import server  # everything the server imports: the MCP SDK, corpus/, retrieval/

    imports_s = time.perf_counter() - t0
    from bench.measure import rss_bytes
    from corpus.catalog import load
    from corpus.roots import make_roots
    from retrieval.format import render_docs
    from retrieval.library import index_corpus
    from retrieval.live import LiveIndex
    from retrieval.policy import Answer
    from retrieval.retriever import RetrievalRequest

    def cold(roots: list[object]) -> LiveIndex:
        return LiveIndex(roots)  # type: ignore[arg-type]

    starters: dict[str, Callable[[list[object]], object]] = {"cold": cold, **STARTERS}
    start = starters[args.start]
    rss0 = rss_bytes() or 0

    t0 = time.perf_counter()
    roots = make_roots([Path(args.root)], [Path(d) for d in args.docs])
    live = start(roots)  # type: ignore[arg-type]
    assert isinstance(live, LiveIndex)
    t1 = time.perf_counter()
    config = server.Config(agents=[Path(args.root)], docs=[Path(d) for d in args.docs])
    server.create_server(live, config)
    t2 = time.perf_counter()
    with live.view() as view:
        retriever = view.library.window_retriever
        answer = render_docs(args.query, Answer(retriever.retrieve(RetrievalRequest(args.query, 5)), "bm25"))
    t3 = time.perf_counter()
    rss1 = rss_bytes() or 0
    corpus = live.corpus
    text_bytes = sum(len(f.text.encode()) for f in corpus.files.values())

    # The same work split in two, for the breakdown (a second pass: the OS file cache is warm).
    t4 = time.perf_counter()
    corpus2 = load(roots)
    t5 = time.perf_counter()
    index_corpus(corpus2)
    t6 = time.perf_counter()
    print(
        json.dumps(
            {
                "start": args.start,
                "imports_s": imports_s,
                "index_s": t1 - t0,
                "create_server_s": t2 - t1,
                "first_query_s": t3 - t2,
                "first_answer_s": t3 - t0,
                "answer_hits": len(answer.result.hits),
                "files": len(corpus.files),
                "windows": live.library.windows.n_docs,
                "sections": live.library.sections.n_docs,
                "text_bytes": text_bytes,
                "rss_delta": rss1 - rss0,
                "breakdown_load_s": t5 - t4,
                "breakdown_index_s": t6 - t5,
            }
        )
    )


STARTERS: dict[str, Callable[[list[object]], object]] = {}
"""Extra starters by name (the lead's cached index goes here): roots -> a ready `LiveIndex`."""


if __name__ == "__main__":
    main()
