"""The words of links to a page, credited to it when a query is asked: part of `search_docs`' page
bonus (`retrieval.search.retriever`; the links are `retrieval.chunks.links`).

Only the pages already among a search's best hits are credited, as the page bonus reorders only
those. Each wording counts once for a page: a page linked a hundred times as "configuration" is
not a hundred times as much about configuration. Links that match the query alike (its same words,
as often, in links as long: one score) count once.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from retrieval.chunks.links import Pages
from retrieval.chunks.units import Unit
from retrieval.engine.index import Apart, BM25Index, apart

READ = 256
"""The best-scoring links read for a query: a common word matches thousands in a large tree, and
the links past these add little to any page."""


@dataclass(frozen=True, slots=True)
class Linked:
    """Each credited page's score from the words of links to it (links matching alike counted
    once), and what explains it."""

    scores: dict[str, float] = field(default_factory=dict)
    credited: dict[str, list[int]] = field(default_factory=dict)
    """Each credited page's links, as slots of `found`."""
    found: Apart | None = None

    @property
    def best(self) -> float:
        return max(self.scores.values(), default=0.0)

    def shares(self, page: str) -> dict[str, float]:
        """Each query term's share of the page's score."""
        out: dict[str, float] = {}
        found = self.found
        if found is None:
            return out
        for slot in self.credited.get(page, ()):
            for term, share in found.explain(slot):
                out[term] = out.get(term, 0.0) + share
        return out


def linked(links: BM25Index[Unit], query: Sequence[str], pages: Sequence[str]) -> Linked:
    """What the words of links pointing to each of `pages` (display paths) from other files of its
    root score for `query`, BM25 over the links as a corpus of their own."""
    found = apart(links, query, 0) if pages and links.n_docs else None
    if found is None or not len(found.slots):
        return Linked()
    by_root: dict[str, dict[str, str]] = {}  # root label -> page path inside it -> display path
    for page in pages:
        label, _, rel = page.partition("/")
        by_root.setdefault(label, {})[rel] = page
    named = {label: (Pages(rels), rels) for label, rels in by_root.items()}
    best: dict[str, dict[float, int]] = {}  # page -> a wording's score -> a link of that wording
    slots, values = found.slots, found.scores
    if len(slots) > READ:
        kept = np.sort(np.argpartition(values, len(values) - READ)[-READ:])
        slots, values = slots[kept], values[kept]
    scores = dict(zip(slots.tolist(), values.tolist(), strict=True))
    targets: dict[tuple[str, str], list[str]] = {}  # (root, link target) -> the pages it names
    for slot, score in scores.items():
        link = links.payload(slot)
        label, _, source = link.path.partition("/")
        if link.anchor is None or label not in named:
            continue
        finder, rels = named[label]
        key = (label, link.anchor)
        if key not in targets:
            targets[key] = finder.named(link.anchor)
        for rel in targets[key]:
            if rel != source:
                best.setdefault(rels[rel], {}).setdefault(score, slot)
    credited = {page: list(wordings.values()) for page, wordings in best.items()}
    return Linked({page: sum(scores[slot] for slot in chosen) for page, chosen in credited.items()}, credited, found)
