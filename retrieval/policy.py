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
whether the deadline cut it short; `next_offset` only when a next page exists, and an offset past
the end says so.
"""

from __future__ import annotations

import threading
import time
import weakref
from collections.abc import Sequence
from dataclasses import dataclass, field, replace

from corpus.catalog import Corpus, CorpusFile
from retrieval.index import BM25Index
from retrieval.library import Library
from retrieval.outline import Candidate, Nearby, candidates, nearest
from retrieval.query import MAX_QUERY_CHARS, MAX_QUERY_TERMS, Query, looks_like_path, parse
from retrieval.retriever import RetrievalRequest, RetrievedDocument
from retrieval.sections import INTRO
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


MISS_NO_MATCH = "no word of the query matched"
MISS_NO_WORDS = "the query has no searchable words"
MISS_FILTER = "the filter excluded everything; these are from all files"
MISS_DEADLINE = "the deadline passed before anything matched"
"""Why an `outline` answer found nothing (`Answer.miss`), as its nearest-list header says it."""

_SHOWN_CHARS = 200
"""Phrases quoted back in messages are cut to this many characters (the budget must hold)."""


@dataclass(frozen=True, slots=True)
class Answer:
    docs: list[RetrievedDocument]
    """The page: hits `offset` to `offset + k`."""
    method: str
    fallback_reason: str | None = None
    candidates: int = 0
    """Units that matched (for a phrase query, that hold every phrase word), before `k` and
    `offset` cut the list."""
    partial: bool = False
    nearest: list[Nearby] = field(default_factory=list)
    elapsed_ms: float = 0.0
    clipped: bool = False
    """The query was longer than `MAX_QUERY_CHARS` or `MAX_QUERY_TERMS` and was cut."""
    more: bool = False
    """Hits exist after this page (counted after copies were skipped and the score floor)."""
    past_end: int | None = None
    """`offset` was past the last hit: how many hits there are in all."""
    miss: str | None = None
    """`outline` answers: why nothing matched, in a few words (`MISS_*`, or `MISS_NO_MATCH` plus
    " within the filter")."""


def answer(
    query_text: str,
    k: int,
    offset: int,
    scope: Scope,
    library: Library,
    corpus: Corpus,
    deadline_s: float = DEADLINE_S,
) -> Answer:
    """Answer one search of `scope` within `deadline_s`."""
    started = time.monotonic()
    index = library.sections if scope.kind == "sections" else library.windows
    tokenize = library.tokenize
    retriever = library.section_retriever if scope.kind == "sections" else library.window_retriever
    query = parse(query_text, tokenize)
    clipped = len(query_text) > MAX_QUERY_CHARS or len(tokenize(query.raw)) > MAX_QUERY_TERMS
    query_text = query.raw
    if scope.filtered and not any(scope.allows_file(f) for f in corpus.files.values()):
        near = _nearest(query_text, Scope(scope.kind), library, corpus)
        excluded = Answer([], "outline", _filter_reason(scope), 0, False, near, miss=MISS_FILTER)
        return _done(excluded, started, clipped)
    want = offset + k
    found = _by_path(query_text, scope, index, corpus, want + 1)
    if found is not None:
        docs, candidates = found
        return _done(_page(docs, offset, k, "path", None, candidates, False), started, clipped)
    allow = scope.allows if scope.filtered else None
    # One more than the page, to know whether a next page exists after copies and the floor.
    request = RetrievalRequest(query_text, want + 1, started + deadline_s, allow, query.phrases)
    method = "phrase" if query.phrases else "bm25"
    reason: str | None = None
    result = retriever.search(request)
    if not result.docs and query.phrases and not result.partial:
        method = "bm25-relaxed"
        reason = _relaxed_reason(query, scope)
        result = retriever.search(RetrievalRequest(query_text, want + 1, request.deadline, allow))
    if result.docs:
        return _done(_page(result.docs, offset, k, method, reason, result.candidates, result.partial), started, clipped)
    near = _nearest(query_text, scope, library, corpus)
    miss = MISS_DEADLINE if result.partial else MISS_NO_WORDS if not query.terms else MISS_NO_MATCH
    reason = _miss_reason(miss, scope)
    if miss == MISS_NO_MATCH and scope.filtered:
        miss += " within the filter"
    return _done(Answer([], "outline", reason, 0, result.partial, near, miss=miss), started, clipped)


def _page(
    docs: list[RetrievedDocument],
    offset: int,
    k: int,
    method: str,
    reason: str | None,
    candidates: int,
    partial: bool,
) -> Answer:
    """Hits `offset` to `offset + k` of `docs` (which holds one more when a next page exists)."""
    if offset and offset >= len(docs):
        reason = (
            f"the deadline passed before the search reached offset {offset}"
            if partial
            else f"offset {offset} is past the end: {len(docs)} hits in all; start again from offset 0"
        )
        return Answer([], method, reason, candidates, partial, past_end=len(docs))
    return Answer(docs[offset : offset + k], method, reason, candidates, partial, more=len(docs) > offset + k)


def _done(result: Answer, started: float, clipped: bool = False) -> Answer:
    elapsed = round((time.monotonic() - started) * 1000, 2)
    return replace(result, elapsed_ms=elapsed, clipped=clipped)


def _nearest(query_text: str, scope: Scope, library: Library, corpus: Corpus) -> list[Nearby]:
    """The headings and files closest to the query. A file's headings are its sections when it
    has them (the searchable `.AGENTS` files); otherwise (`search_docs` over docs roots and pinned
    files) the heading trails its windows start under, with the lines of those windows, which
    costs no parsing at query time."""
    key = (scope, library.sections.generation, library.windows.generation)
    with _POOLS_LOCK:
        pools = _POOLS.setdefault(library, {})
        pool = pools.get(key)
    if pool is None:
        files = _files(corpus, scope)
        units: list[Unit] = []
        for f in files:
            if library.sections.group_size(f.path) or scope.kind == "sections":
                units.extend(library.sections.payloads(f.path))
            else:
                units.extend(_window_headings(library.windows.payloads(f.path)))
        pool = candidates(units, files)
        with _POOLS_LOCK:
            pools[key] = pool
            while len(pools) > 4:
                del pools[next(iter(pools))]
    return nearest(query_text, pool)


_POOLS: weakref.WeakKeyDictionary[Library, dict[tuple[object, ...], list[Candidate]]] = weakref.WeakKeyDictionary()
"""Nearest-list candidates per library, scope and index generations: built once after a change,
not on every miss (on a 38k-file docs root building them is most of a second of CPU, and a
search that hogs the interpreter slows the watcher's sweeps in other threads)."""
_POOLS_LOCK = threading.Lock()


def _window_headings(windows: Sequence[Unit]) -> list[Unit]:
    """One pseudo-section per heading trail of a file's windows: the trail, and the lines of the
    windows that start under it (its URI names those lines: nothing is parsed at query time)."""
    spans: dict[tuple[str, ...], Unit] = {}
    for w in windows:
        if not w.trail or w.trail[-1] == INTRO:
            continue
        seen = spans.get(w.trail)
        start, end = (seen.start_line, max(seen.end_line, w.end_line)) if seen else (w.start_line, w.end_line)
        spans[w.trail] = Unit(w.path, w.uri, "", start, end, heading=w.trail[-1], trail=w.trail)
    return list(spans.values())


def _by_path(
    query_text: str, scope: Scope, index: BM25Index[Unit], corpus: Corpus, want: int
) -> tuple[list[RetrievedDocument], int] | None:
    """The units of the files a path-like query names, in file and line order (score 1), each
    line once: a window that overlaps the one before it (windows overlap by design) starts after it."""
    if not looks_like_path(query_text):
        return None
    wanted = query_text.strip().strip("`'\"").replace("\\", "/").removeprefix("./").casefold()
    matches = [f for f in _files(corpus, scope) if _names(f, wanted)]
    if not matches:
        return None
    units = [u for f in sorted(matches, key=lambda f: f.path) for u in index.payloads(f.path)]
    units.sort(key=lambda u: (u.path, u.start_line))
    distinct: list[Unit] = []
    for u in units:
        last = distinct[-1] if distinct and distinct[-1].path == u.path else None
        if last is not None and u.start_line <= last.end_line:
            if u.end_line <= last.end_line:
                continue
            lines = u.text.split("\n")[last.end_line + 1 - u.start_line :]
            u = u._replace(text="\n".join(lines), start_line=last.end_line + 1)
        distinct.append(u)
    return [RetrievedDocument(u, 1.0) for u in distinct[:want]], len(distinct)


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
    return f"no {what} contains {shown_phrases(query.quoted)} as written; searched the words without the quotes"


def shown_phrases(quoted: Sequence[str]) -> str:
    """The phrases as quoted back to the user, at most `_SHOWN_CHARS` characters."""
    text = ", ".join(f'"{q}"' for q in quoted)
    return text if len(text) <= _SHOWN_CHARS else text[: _SHOWN_CHARS - 1] + "…"


def _miss_reason(miss: str, scope: Scope) -> str:
    if miss == MISS_DEADLINE:
        return "the deadline passed before anything matched"
    if miss == MISS_NO_WORDS:
        return "the query has no searchable words (stop words and single letters are not indexed)"
    where = "the searchable .AGENTS sections" if scope.kind == "sections" else "the documentation passages"
    if scope.filtered:
        where += " within the filter"
    return f"none of the query's words occur in {where}; these headings and files are the closest by name"


def _filter_reason(scope: Scope) -> str:
    parts = [f"path_prefix={scope.path_prefix!r}"] if scope.path_prefix else []
    if scope.root is not None:
        parts.append(f"root={scope.root!r}")
    what = "searchable .AGENTS file" if scope.kind == "sections" else "file"
    return (
        f"the filter excluded everything: no {what} matches {' '.join(parts)}; "
        "these headings and files, from everywhere, are the closest by name"
    )


def _allowed(path: str, scope: Scope) -> bool:
    if scope.root is not None and path.split("/", 1)[0] != scope.root:
        return False
    if scope.path_prefix:
        prefix = scope.path_prefix.replace("\\", "/").removeprefix("./")
        rel = path.split("/", 1)[1] if "/" in path else path
        return path.startswith(prefix) or rel.startswith(prefix)
    return True
