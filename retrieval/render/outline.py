"""The `agents-context://outline` resource (and `agents-context outline`): every `.AGENTS` file
with its sections, headings, anchors, line ranges and estimated tokens, and every root's size.
The text form prints names through `inline` (grammar.py); the model holds them exactly."""

from __future__ import annotations

from pydantic import BaseModel, Field

from corpus.catalog import Corpus
from corpus.roots import RootKind
from retrieval.chunks.sections import INTRO
from retrieval.chunks.units import sections_of
from retrieval.render.grammar import inline


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
    """Characters / 4; for a docs root, whose text the index does not hold, bytes / 4."""


class Outline(BaseModel):
    files: list[OutlineFile] = Field(description="Every .AGENTS file with its sections.")
    roots: list[OutlineRoot] = Field(description="Every root with its size (docs roots are not itemised).")


def outline(corpus: Corpus) -> Outline:
    agents = sorted(corpus.files.agents(), key=lambda f: f.rel)
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
        mine = corpus.in_root(root)
        roots.append(
            OutlineRoot(
                label=root.label,
                kind=root.kind.value,
                files=len(mine),
                tokens=sum(len(f.text) if f.held else f.size for f in mine) // 4,
            )
        )
    return Outline(files=files, roots=roots)


def render_outline(out: Outline) -> str:
    lines = []
    for f in out.files:
        lines.append(f"{inline(f.path)} (~{f.tokens} tokens{', pinned' if f.pinned else ''})")
        for s in f.sections:
            indent = "  " * max(len(s.trail), 1)
            lines.append(
                f"{indent}{inline(s.heading)}  [lines {s.start_line}-{s.end_line}, ~{s.tokens} tokens] {inline(s.uri)}"
            )
    lines.extend(
        f"{inline(r.label)}/ (docs root: {r.files} files, ~{r.tokens} tokens; search it with search_docs)"
        for r in out.roots
        if r.kind != RootKind.AGENTS.value
    )
    return "\n".join(lines)
