"""The navigation layer that always works (seed 002's agentic TOC): an outline of every file's
headings, and the headings and files nearest to a query that matched nothing."""

from __future__ import annotations

import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from difflib import SequenceMatcher

from pydantic import BaseModel, Field

from corpus.catalog import Corpus, CorpusFile
from corpus.roots import RootKind
from retrieval.sections import INTRO
from retrieval.units import Unit, sections_of


@dataclass(frozen=True, slots=True)
class Nearby:
    """A heading or a file close to a query, for the `outline` fallback."""

    path: str
    uri: str
    heading: str | None
    start_line: int | None
    end_line: int | None
    similarity: float


SHORTLIST = 256
"""Above this many candidates, only those sharing the most character trigrams with the query are
compared in full (difflib is ~20 µs a comparison: 38k docs files would take most of a second)."""
BUDGET_S = 0.1
"""Past this long, the shortlist is taken from the candidates looked at so far."""


Candidate = tuple[str, str, str, str, "int | None", "int | None", bool]
"""(folded text, text, display path, URI, start line, end line, is a heading): plain tuples, since
a docs root has tens of thousands and only the few nearest become `Nearby`."""


def candidates(units: Iterable[Unit], files: Iterable[CorpusFile]) -> list[Candidate]:
    """What a nearest list is chosen from: every heading trail of `units`, then every file path."""
    found: list[Candidate] = []
    for u in units:
        if u.heading and u.heading != INTRO:
            text = " > ".join(u.trail)
            found.append((text.casefold(), text, u.path, u.section_uri, u.start_line, u.end_line, True))
    found.extend((f.rel.casefold(), f.rel, f.path, f.uri, None, None, False) for f in files)
    return found


def nearest(query: str, pool: Sequence[Candidate], limit: int = 5, budget_s: float = BUDGET_S) -> list[Nearby]:
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
    scored = [(_similar(q, c[1]), c) for c in pool]
    scored.sort(key=lambda sc: (-sc[0], sc[1][2], sc[1][4] or 0))
    return [
        Nearby(c[2], c[3], c[1] if c[6] else None, c[4], c[5], round(score, 3))
        for score, c in scored[:limit]
        if score > 0
    ]


def _similar(query: str, text: str) -> float:
    folded = text.casefold()
    matcher = SequenceMatcher(None, query, folded, autojunk=False)
    if matcher.real_quick_ratio() < 0.2:
        return 0.0
    # Longest common stretch as a share of the query, blended with the overall ratio: a short
    # query that appears inside a long heading should rank above an unrelated short heading.
    block = max((m.size for m in matcher.get_matching_blocks()), default=0)
    return 0.5 * matcher.ratio() + 0.5 * (block / max(len(query), 1))


# --- the outline resource ---------------------------------------------------------------------


class OutlineSection(BaseModel):
    heading: str
    trail: list[str]
    anchor: str
    uri: str
    start_line: int
    end_line: int
    tokens: int = Field(description="Estimated tokens: characters / 4.")


class OutlineFile(BaseModel):
    path: str
    uri: str
    pinned: bool
    tokens: int
    sections: list[OutlineSection]


class OutlineRoot(BaseModel):
    label: str
    kind: str
    files: int
    tokens: int


class Outline(BaseModel):
    files: list[OutlineFile] = Field(description="Every .AGENTS file with its sections.")
    roots: list[OutlineRoot] = Field(description="Every root with its size (docs roots are not itemised).")


def outline(corpus: Corpus) -> Outline:
    agents = sorted((f for f in corpus.files.values() if f.root.kind is RootKind.AGENTS), key=lambda f: f.rel)
    files = [
        OutlineFile(
            path=f.path,
            uri=f.uri,
            pinned=f.pinned,
            tokens=len(f.text) // 4,
            sections=[
                OutlineSection(
                    heading=u.heading or INTRO,
                    trail=list(u.trail),
                    anchor=u.anchor or "",
                    uri=u.section_uri,
                    start_line=u.start_line,
                    end_line=u.end_line,
                    tokens=len(u.text) // 4,
                )
                for u in sections_of(f)
            ],
        )
        for f in agents
    ]
    roots = []
    for root in corpus.roots:
        mine = [f for f in corpus.files.values() if f.root is root]
        roots.append(
            OutlineRoot(
                label=root.label,
                kind=root.kind.value,
                files=len(mine),
                tokens=sum(len(f.text) for f in mine) // 4,
            )
        )
    return Outline(files=files, roots=roots)


def render_outline(out: Outline) -> str:
    lines = []
    for f in out.files:
        lines.append(f"{f.path} (~{f.tokens} tokens{', pinned' if f.pinned else ''})")
        for s in f.sections:
            indent = "  " * max(len(s.trail), 1)
            lines.append(f"{indent}{s.heading}  [lines {s.start_line}-{s.end_line}, ~{s.tokens} tokens] {s.uri}")
    lines.extend(
        f"{r.label}/ (docs root: {r.files} files, ~{r.tokens} tokens; search it with search_docs)"
        for r in out.roots
        if r.kind != RootKind.AGENTS.value
    )
    return "\n".join(lines)
