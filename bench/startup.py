"""Start-up to first answer, in a fresh process, timed from after the imports.

    python bench/startup.py --docs DIR --query TEXT --start cold|prime|warm [--cache-dir DIR]

Prints one JSON line. Each start builds the index the way `agents-context serve` does:

- `cold`: no cache; every root read, chunked, tokenized and indexed before the first answer.
- `prime`: a cold start that also writes the cache entries (`--cache-dir`): what a first run costs.
- `warm`: a restart with the cache entries of a previous run (`--cache-dir`), as the server does it:
  the entries are loaded, `--docs` roots are then checked against the disk (stat) in the
  background. The first answer comes from the restored index, marked `partial=1` while the check
  runs; `checked_s` is when the check finished (every answer after it is whole).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

REPO = Path(__file__).resolve().parents[1]


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--root", default=str(REPO / ".AGENTS"))
    parser.add_argument("--docs", action="append", default=[])
    parser.add_argument("--query", required=True)
    parser.add_argument("--start", choices=["cold", "prime", "warm"], default="cold")
    parser.add_argument("--cache-dir", type=Path, help="the cache folder (prime and warm)")
    args = parser.parse_args(argv)
    if args.start != "cold" and args.cache_dir is None:
        parser.error(f"--start {args.start} needs --cache-dir")

    t0 = time.perf_counter()
    import server  # everything the server imports: the MCP SDK, corpus/, retrieval/

    imports_s = time.perf_counter() - t0
    from bench.measure import rss_bytes
    from cli.settings import Settings
    from corpus.roots import make_roots
    from live import answers
    from live.cache import IndexCache
    from live.index import LiveIndex
    from retrieval.engine.ranking import DEFAULT
    from retrieval.render.hits import render_docs
    from retrieval.search.request import WINDOWS, Answer, Method
    from retrieval.search.retriever import RetrievalRequest

    rss0 = rss_bytes() or 0
    t0 = time.perf_counter()
    roots = make_roots([Path(args.root)], [Path(d) for d in args.docs])
    store = None if args.start == "cold" else IndexCache(args.cache_dir, DEFAULT.fingerprint)
    live = LiveIndex(roots, cache=store, background=args.start == "warm")
    t1 = time.perf_counter()
    settings = Settings(agents=(Path(args.root),), docs=tuple(Path(d) for d in args.docs))
    server.create_server(live, settings)
    t2 = time.perf_counter()
    with live.view() as view:
        retriever = view.policy.retrievers[WINDOWS]
        found = Answer(docs=retriever.search(RetrievalRequest(args.query, 5)).docs, method=Method.BM25)
        answer = render_docs(args.query, answers.holding(found, view.corpus)[0])  # a docs hit's text is read
    t3 = time.perf_counter()
    partial = any(live.building(r) for r in live.roots)
    if live.indexer is not None:
        live.indexer.join()
    t4 = time.perf_counter()
    rss1 = rss_bytes() or 0
    live.close()
    corpus = live.corpus
    print(
        json.dumps(
            {
                "start": args.start,
                "imports_s": imports_s,
                "index_s": t1 - t0,
                "create_server_s": t2 - t1,
                "first_query_s": t3 - t2,
                "first_answer_s": t3 - t0,
                "first_answer_partial": partial,
                "checked_s": t4 - t0,
                "answer_hits": len(answer.result.hits),
                "files": len(corpus.files),
                "windows": live.library.windows.n_docs,
                "sections": live.library.sections.n_docs,
                "text_bytes": sum(len(f.text.encode()) for f in corpus.files.values()),
                "rss_delta": rss1 - rss0,
            }
        )
    )


if __name__ == "__main__":
    main()
