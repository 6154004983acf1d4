"""The retrieval policy (seed 002): which method answers a query, and never a silent empty answer.

In order:
- `path`: the query names a file (`security.md`, `.AGENTS/services/api.md`): that file's units;
- `phrase`: the query has "quoted phrases": only units containing them as written, ranked by BM25;
- `bm25-relaxed`: the phrases matched nothing, so their words are searched without the quotes
  (the answer says which phrase was dropped);
- `bm25`: ranked keyword search, any query word may match;
- `outline`: nothing matched at all: the nearest headings and files, by fuzzy match on their
  text (the navigation layer that always works).
Every answer says which method ran and why a fallback happened, how many units matched, and
whether the deadline cut it short.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass, field, replace

from corpus.catalog import Corpus, CorpusFile
from retrieval.index import BM25Index
from retrieval.outline import Nearby, nearest
from retrieval.query import MAX_QUERY_CHARS, MAX_QUERY_TERMS, Query, looks_like_path, parse
from retrieval.retriever import BM25Retriever, Partial, RetrievalRequest, RetrievedDocument, Retriever
from retrieval.units import Unit

DEADLINE_S = 5.0


@dataclass(frozen=True, slots=True)
class Scope:
    """What one tool searches: sections (`context_search`) or windows (`search_docs`), filtered."""

    kind: str
    """`sections` or `windows`."""
    path_prefix: str | None = None
    root: str | None = None

    def allows(self, unit: Unit) -> bool:
        return _allowed(unit.path, self)

    def allows_file(self, f: CorpusFile) -> bool:
        if self.kind == "sections" and not f.searchable:
            return False
        return _allowed(f.path, self)

    @property
    def filtered(self) -> bool:
        return bool(self.path_prefix or self.root)


@dataclass(frozen=True, slots=True)
class Answer:
    docs: list[RetrievedDocument]
    """The page: hits `offset` to `offset + k`."""
    method: str
    fallback_reason: str | None = None
    candidates: int = 0
    """Units that matched, before `k` and `offset` cut the list."""
    partial: bool = False
    nearest: list[Nearby] = field(default_factory=list)
    elapsed_ms: float = 0.0
    clipped: bool = False
    """The query was longer than `MAX_QUERY_CHARS` or `MAX_QUERY_TERMS` and was cut."""


def answer(
    query_text: str,
    k: int,
    offset: int,
    scope: Scope,
    index: BM25Index[Unit],
    corpus: Corpus,
    tokenize: Callable[[str], Sequence[str]],
    retriever: Retriever | None = None,
    deadline_s: float = DEADLINE_S,
) -> Answer:
    started = time.monotonic()
    retriever = retriever or BM25Retriever(index, tokenize)
    query = parse(query_text, tokenize)
    clipped = len(query_text) > MAX_QUERY_CHARS or len(tokenize(query.raw)) > MAX_QUERY_TERMS
    query_text = query.raw
    want = offset + k
    found = _by_path(query_text, scope, index, corpus, want)
    if found is not None:
        docs, candidates = found
        return _done(Answer(docs[offset:want], "path", None, candidates), started, clipped)
    allow = scope.allows if scope.filtered else None
    request = RetrievalRequest(query_text, want, started + deadline_s, allow, query.phrases)
    method, reason = ("phrase", None) if query.phrases else ("bm25", None)
    docs, candidates, partial = _run(retriever, request)
    if not docs and query.phrases and not partial:
        method = "bm25-relaxed"
        reason = _relaxed_reason(query, scope)
        docs, candidates, partial = _run(retriever, RetrievalRequest(query_text, want, request.deadline, allow))
    if docs:
        return _done(Answer(docs[offset:want], method, reason, candidates, partial), started, clipped)
    units = [u for f in _files(corpus, scope) for u in index.payloads(f.path)] if scope.kind == "sections" else []
    near = nearest(query_text, units, _files(corpus, scope))
    return _done(Answer([], "outline", _miss_reason(query, scope, partial), 0, partial, near), started, clipped)


_POOL = ThreadPoolExecutor(max_workers=4, thread_name_prefix="retriever")
_GRACE_S = 0.25


def _run(retriever: Retriever, request: RetrievalRequest) -> tuple[list[RetrievedDocument], int, bool]:
    """Run the retriever; one that is not ours (it may be slow) is waited for only until the
    deadline, and then the answer goes on without it, marked partial."""
    try:
        if isinstance(retriever, BM25Retriever):
            docs, candidates = retriever.search(request)
            return docs, candidates, False
        future = _POOL.submit(retriever.retrieve, request)
        # A little grace past the deadline, so a retriever that honours it (a fusion raising
        # `Partial` with what it has) is heard rather than abandoned.
        timeout = None if request.deadline is None else max(0.0, request.deadline - time.monotonic()) + _GRACE_S
        try:
            docs = future.result(timeout=timeout)
        except FutureTimeout:
            return [], 0, True
        return docs, len(docs), False
    except Partial as exc:
        return exc.docs, len(exc.docs), True


def _done(result: Answer, started: float, clipped: bool = False) -> Answer:
    elapsed = round((time.monotonic() - started) * 1000, 2)
    return replace(result, elapsed_ms=elapsed, clipped=clipped)


def _by_path(
    query_text: str, scope: Scope, index: BM25Index[Unit], corpus: Corpus, want: int
) -> tuple[list[RetrievedDocument], int] | None:
    """The units of the files a path-like query names, in file and line order (score 1)."""
    if not looks_like_path(query_text):
        return None
    wanted = query_text.strip().strip("`'\"").replace("\\", "/").removeprefix("./").casefold()
    matches = [f for f in _files(corpus, scope) if _names(f, wanted)]
    if not matches:
        return None
    units = [u for f in sorted(matches, key=lambda f: f.path) for u in index.payloads(f.path)]
    units.sort(key=lambda u: (u.path, u.start_line))
    return [RetrievedDocument(u, 1.0) for u in units[:want]], len(units)


def _names(f: CorpusFile, wanted: str) -> bool:
    """Whether `wanted` (case-folded) names this file: its display or relative path, its name,
    a trailing part of its path, or (ending in `/`) a folder it is in."""
    display, rel = f.path.casefold(), f.rel.casefold()
    if wanted.endswith("/"):
        return display.startswith(wanted) or rel.startswith(wanted)
    return wanted in (display, rel) or rel.endswith("/" + wanted) or rel.rsplit("/", 1)[-1] == wanted


def _files(corpus: Corpus, scope: Scope) -> list[CorpusFile]:
    return [f for f in corpus.files.values() if scope.allows_file(f)]


def _relaxed_reason(query: Query, scope: Scope) -> str:
    what = "section" if scope.kind == "sections" else "passage"
    phrases = ", ".join(f'"{q}"' for q in query.quoted)
    return f"no {what} contains {phrases} as written; searched the words without the quotes"


def _miss_reason(query: Query, scope: Scope, partial: bool) -> str:
    if partial:
        return "the deadline passed before anything matched"
    if not query.terms:
        return "the query has no searchable words (stop words and single letters are not indexed)"
    where = "the searchable .AGENTS sections" if scope.kind == "sections" else "the documentation passages"
    if scope.filtered:
        where += " within the filter"
    return f"none of the query's words occur in {where}; these headings and files are the closest by name"


def _allowed(path: str, scope: Scope) -> bool:
    if scope.root is not None and path.split("/", 1)[0] != scope.root:
        return False
    if scope.path_prefix:
        prefix = scope.path_prefix.replace("\\", "/").removeprefix("./")
        rel = path.split("/", 1)[1] if "/" in path else path
        return path.startswith(prefix) or rel.startswith(prefix)
    return True
