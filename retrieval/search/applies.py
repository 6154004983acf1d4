"""Path-scoped rules: which sections apply to a source file (`context_for_path`).

For `src/api/auth.py`, most specific first:
1. files whose front matter `globs` / `applies_to` match it (Cursor's convention), the glob with
   the most literal characters first;
2. `AGENTS.md` files in its folders (the conventional root) and the pinned files of a monorepo
   package's `.AGENTS` that contains it, nearest folder first;
3. sections whose heading, or files whose path, name one of its folders (or its own name), the
   deepest folder first.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import PurePosixPath

from pathspec import GitIgnoreSpec

from corpus.catalog import Corpus
from retrieval.chunks.sections import INTRO
from retrieval.chunks.units import Unit, sections_of
from retrieval.search.answer import Answer
from retrieval.search.policy import with_links
from retrieval.search.retriever import RetrievedDocument

_WILDCARDS = set("*?[]!")
MISS = (
    "no context applies to: {path} (add globs: front matter to a rule, an AGENTS.md in its folder, "
    "or a heading that names its folder)"
)


@dataclass(frozen=True, slots=True)
class Applicable:
    unit: Unit
    reason: str
    tier: int
    specificity: float

    @property
    def order(self) -> tuple[int, float, str, int]:
        return (-self.tier, -self.specificity, self.unit.path, self.unit.start_line)


def applicable(corpus: Corpus, where: Mapping[str, str]) -> list[Applicable]:
    """The sections that apply to a source file, most specific first; `where` gives the file's
    path relative to each `.AGENTS` root's project, by root label (`corpus.roots.relative_source`:
    a root whose project does not hold the file is left out)."""
    found: dict[str, Applicable] = {}

    def offer(item: Applicable) -> None:
        best = found.get(item.unit.id)
        if best is None or item.order < best.order:
            found[item.unit.id] = item

    several = len(corpus.agents_roots) > 1
    for root in corpus.agents_roots:
        rel = where.get(root.label)
        if rel is None:
            continue
        parts = rel.split("/")
        folders = parts[:-1]
        names = [(f.casefold(), depth + 1) for depth, f in enumerate(folders)]
        names.append((PurePosixPath(parts[-1]).stem.casefold(), len(parts)))
        for f in (f for f in corpus.files.values() if f.root is root):
            units = sections_of(f)
            for glob in f.meta.globs:
                if GitIgnoreSpec.from_lines([glob]).match_file(rel):
                    literal = sum(c not in _WILDCARDS for c in glob)
                    for u in units:
                        offer(Applicable(u, f"globs: {glob}", 3, literal))
            folder = str(PurePosixPath(f.rel).parent)
            if f.rel.rsplit("/", 1)[-1] == "AGENTS.md" and not f.pinned and (rel + "/").startswith(folder + "/"):
                for u in units:
                    offer(Applicable(u, f"AGENTS.md in {folder}/", 2, folder.count("/") + 1))
            if several and f.pinned and not root.include:
                for u in units:
                    offer(Applicable(u, f"package rules of {root.label}", 2, 0.5))
            if f.pinned:
                continue
            stems = [s.casefold() for s in PurePosixPath(f.rel).with_suffix("").parts]
            for name, depth in names:
                prefix = "/".join(parts[:depth]).casefold()
                if name in stems:
                    for u in units:
                        offer(Applicable(u, f"file path names {name}", 1, depth))
                for u in units:
                    heading = " > ".join(u.trail).casefold() if u.heading and u.heading != INTRO else ""
                    if "/" in prefix and prefix in heading:
                        offer(Applicable(u, f"heading names {prefix}", 1, depth + 0.5))
                    elif name in heading.replace("/", " ").replace("`", " ").split():
                        offer(Applicable(u, f"heading names {name}", 1, depth + 0.25))
    return sorted(found.values(), key=lambda a: a.order)


def answer(corpus: Corpus, where: Mapping[str, str]) -> Answer:
    """`context_for_path`'s answer: the applicable sections as hits (score: their specificity),
    each with why it applies and what it links to."""
    items = applicable(corpus, where)
    docs = [RetrievedDocument(a.unit, a.specificity) for a in items]
    reasons = {a.unit.id: a.reason for a in items}
    return Answer(docs, "applies", None, len(items), links=with_links(docs, corpus), reasons=reasons)
