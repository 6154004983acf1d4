"""What decides a score: the tokenizer, the fields a unit is indexed under, and BM25's constants.

A unit is indexed in three fields, combined by BM25F (see `retrieval.engine.index`):
- `body`: the unit's text (a section's text includes its heading line);
- `heading`: the heading trail, outermost first (`Security > Secrets`); for a window, the trail
  of the section it starts in; and the file's front matter tags (a front matter title already
  heads the trail);
- `path`: the file's path inside its root, without the extension (`guides/integration/docker`).

The best BM25F hits then gain a term proximity bonus (`retrieval.engine.proximity`), at query time,
and `search_docs`' hits a page bonus: a file's first window also holds a fourth field, `page` (the
file's distinct headings, front matter tags and path, `page_terms`), of weight 0 in BM25F and scored
apart, page against page; a window gains a share of the best hit's score by how well its page
matches the query (`page_weight`; see `retrieval.search.retriever`).

`DEFAULT` is what the server ships; `PLAIN` is single-field BM25 with the plain tokenizer and no
proximity stage, the configuration the engine is checked against rank-bm25 with.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from retrieval.chunks.sections import INTRO
from retrieval.chunks.units import Unit
from retrieval.engine.index import K1, B, Field
from retrieval.text.query import Tokenize
from retrieval.text.tokenize import PLAIN as PLAIN_TOKENIZER
from retrieval.text.tokenize import tokenize


@dataclass(frozen=True, slots=True, kw_only=True)
class Ranking:
    tokenize: Tokenize = tokenize
    k1: float = K1
    body_b: float = 0.5
    heading_weight: float = 4.0
    heading_b: float = B
    path_weight: float = 1.0
    path_b: float = 0.0
    redundancy: float | None = 0.9
    """Skip overlapping units of a file and near copies (Jaccard of term sets at least this) with
    the same heading; None: show whatever ranks."""
    proximity: float = 0.5
    """Weight of the term proximity bonus (`retrieval.engine.proximity`, BM25TP) given to the
    `rerank_depth` best BM25F hits for query words found close together (0: off)."""
    rerank_depth: int = 30
    """How many of the best BM25F hits the proximity stage re-scores (from their stored terms)."""
    page_weight: float = 0.25
    """How much a page's headings and path weigh beside its windows' text (`search_docs`): the best
    window of the page whose headings and path match the query best gains this fraction of the best
    hit's score, other pages' best windows in proportion to their match (0: off)."""
    link_weight: float = 0.25
    """How much the words of links to a page weigh beside its own headings and path in the page
    bonus (`search_docs`; `retrieval.chunks.links`): the page most linked to with the query's words
    gains this fraction of the best hit's score (0: off, and no links are indexed). Only with a
    page bonus (`page_weight`)."""
    score_floor: float = 0.3
    """Drop hits scoring below this fraction of the best hit's score (0: keep every positive)."""
    feedback: bool = False
    """Pseudo-relevance feedback (RM3, `--feedback`): expand the query with the top hits' terms."""

    @property
    def fields(self) -> tuple[Field, ...]:
        fields = [Field("body", 1.0, self.body_b)]
        if self.heading_weight or self.path_weight:
            fields.append(Field("heading", self.heading_weight, self.heading_b))
            fields.append(Field("path", self.path_weight, self.path_b))
        return tuple(fields)

    @property
    def window_fields(self) -> tuple[Field, ...]:
        """The fields of a window: a section's, and with a page bonus the `page` field, which only
        a file's first window holds (`page_terms`) and BM25F never weighs (it is scored apart)."""
        return (*self.fields, Field(PAGE, 0.0, B)) if self.page_weight else self.fields

    @property
    def link_fields(self) -> tuple[Field, ...]:
        """The one field of a link: its words."""
        return (Field("words", 1.0, self.body_b),)

    @property
    def fingerprint(self) -> str:
        """What decides the stored terms of a unit: the tokenizer and the fields (the weights and
        constants do not: scores are computed at query time)."""
        tokenizer = getattr(self.tokenize, "fingerprint", None)
        if not isinstance(tokenizer, str):
            tokenizer = f"callable@{id(self.tokenize)}"  # a custom tokenizer: never matches a stored index
        fields = ",".join(f.name for f in self.fields)
        windows = ",".join(f.name for f in self.window_fields) + ("+names" if self.page_weight else "")
        return f"{tokenizer} fields={fields} windows={windows}" + (" links" if self.link_weight else "")

    def terms(self, unit: Unit) -> list[Sequence[str]]:
        """The unit's terms per field, in `fields` order."""
        body = self.tokenize(unit.text)
        if len(self.fields) == 1:
            return [body]
        trail = [h for h in unit.trail if h != INTRO]
        return [body, self.tokenize(" ".join([*trail, *unit.tags])), self.tokenize(path_words(unit.path))]

    def page_terms(self, path: str, heads: Sequence[Unit], tags: Sequence[str] = ()) -> list[str]:
        """A file's `page` field: each distinct heading of its sections (`heads`) once, its front
        matter tags, and its path's words; and its names that are a stop word (`names`): its file
        name or a heading that is that one word (`after.md`, `` `after()` ``), otherwise found by
        no term. A heading of several stop words ("What it is") is prose, not a name."""
        headings = dict.fromkeys(h for u in heads for h in u.trail if h != INTRO)
        stem = path_words(path).rsplit("/", 1)[-1]
        named = [
            name
            for text in (*headings, stem)
            if " " not in text.strip() and len(found := self.names(text)) == 1 and not self.tokenize(text)
            for name in found
        ]
        return [*self.tokenize(" ".join([*headings, *tags, path_words(path)])), *named]

    def names(self, text: str) -> list[str]:
        """The stop words `text` writes as words (`Tokenizer.names`; none for a tokenizer that has
        no such list)."""
        names = getattr(self.tokenize, "names", None)
        return list(names(text)) if callable(names) else []

    def but(self, **changes: object) -> Ranking:
        """A copy with some settings changed (for ablations)."""
        return replace(self, **changes)  # type: ignore[arg-type]


PAGE = "page"
"""The name of the windows' page field (`Ranking.window_fields`)."""


def path_words(display_path: str) -> str:
    """`docs/guides/integration/docker.md` -> `guides/integration/docker`: the root label and the
    extension say nothing about the content."""
    rel = display_path.split("/", 1)[1] if "/" in display_path else display_path
    stem, dot, suffix = rel.rpartition(".")
    return stem if dot and "/" not in suffix else rel


DEFAULT = Ranking()
PLAIN = Ranking(
    tokenize=PLAIN_TOKENIZER,
    body_b=B,
    heading_weight=0.0,
    path_weight=0.0,
    redundancy=None,
    proximity=0.0,
    page_weight=0.0,
    link_weight=0.0,
    score_floor=0.0,
)
