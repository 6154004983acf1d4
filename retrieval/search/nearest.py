"""The headings and files nearest to a query that matched nothing (the `outline` method,
docs/retrieval.md, "Methods"): chosen by fuzzy match on their text, so a miss is never a dead end."""

from __future__ import annotations

import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from corpus.files import CorpusFile
from retrieval.chunks.sections import INTRO
from retrieval.chunks.units import Unit


# A heading or a file close to a query, for the `outline` fallback, as the tools' output schema
# shows it too (`SearchResult.nearest`; no class docstring: it would become the schema's description).
@dataclass(frozen=True, slots=True)
class Nearest:
    path: str
    uri: str
    heading: str | None
    start_line: int | None
    end_line: int | None
    similarity: float


SHORTLIST = 256
"""Above this many candidates, only those sharing the most character trigrams with the query are
compared in full (~5 µs a comparison: 38k docs files would take 0.2 s)."""
BUDGET_S = 0.1
"""Past this long, the shortlist is taken from the candidates looked at so far."""


Candidate = tuple[str, str, str, "str | CorpusFile", "int | None", "int | None", bool]
"""(folded text, text, display path, URI (a file's is made only if it is among the nearest), start
line, end line, is a heading): plain tuples, since a docs root has tens of thousands and only the
few nearest become `Nearest`."""


def candidates(units: Iterable[Unit], files: Iterable[CorpusFile]) -> list[Candidate]:
    """What a nearest list is chosen from: every heading trail of `units`, then every file path."""
    found: list[Candidate] = []
    for u in units:
        if u.heading and u.heading != INTRO:
            text = " > ".join(u.trail)
            found.append((text.casefold(), text, u.path, u.section_uri, u.start_line, u.end_line, True))
    found.extend((f.rel.casefold(), f.rel, f.path, f, None, None, False) for f in files)
    return found


def nearest(query: str, pool: Sequence[Candidate], limit: int = 5, budget_s: float = BUDGET_S) -> list[Nearest]:
    """The `limit` candidates most similar to `query`. Above `SHORTLIST` candidates, only those
    sharing the most character trigrams with the query are compared in full; past `budget_s`,
    from the candidates looked at so far."""
    q = query.casefold().strip()
    started = time.monotonic()
    if len(pool) > SHORTLIST:
        grams = {q[i : i + 3] for i in range(len(q) - 2)} or {q}
        overlap: list[int] = []
        for start in range(0, len(pool), 4096):
            if start and time.monotonic() - started > budget_s:
                break
            overlap.extend(sum(g in c[0] for g in grams) for c in pool[start : start + 4096])
        best = sorted(range(len(overlap)), key=lambda i: -overlap[i])[:SHORTLIST]
        pool = [pool[i] for i in sorted(best) if overlap[i]] or list(pool[:SHORTLIST])
    from rapidfuzz import fuzz  # loaded on the first miss

    # Indel similarity (difflib's ratio, on the longest common subsequence) blended with the best
    # alignment of the query inside the text: a short query that appears inside a long heading
    # ranks above an unrelated short heading.
    scored = [((fuzz.ratio(q, c[0]) + fuzz.partial_ratio(q, c[0])) / 200, c) for c in pool]
    scored.sort(key=lambda sc: (-sc[0], sc[1][2], sc[1][4] or 0))
    return [
        Nearest(c[2], c[3] if isinstance(c[3], str) else c[3].uri, c[1] if c[6] else None, c[4], c[5], round(score, 3))
        for score, c in scored[:limit]
        if score > 0
    ]
