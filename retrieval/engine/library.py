"""The indexes over a corpus: sections of the searchable `.AGENTS` files, windows of every file (a
file's first window also holding its page field: its headings and path, for `search_docs`' page
bonus), and the links of every markdown file (their words, credited to the pages they point to;
`retrieval.chunks.links`).

A file is one group in each index (a link is in the group of the file that holds it), so
changing, adding or removing a file touches only its own units. Updates come in two steps:
`prepare` (chunk and tokenize one file, no shared state, so it can run outside any lock) and
`apply` (a batch of prepared files and removals, as one coalesced update of each index).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from corpus.catalog import Corpus
from corpus.files import CorpusFile
from corpus.markdown import is_markdown
from retrieval.chunks.links import link_units
from retrieval.chunks.units import Unit, section_units, window_units
from retrieval.engine.index import BM25Index, Doc
from retrieval.engine.packing import Packed
from retrieval.engine.ranking import DEFAULT, Ranking


@dataclass(frozen=True, slots=True)
class Prepared:
    """One file's units with their terms, ready to apply."""

    sections: list[Doc[Unit]]
    windows: list[Doc[Unit]]
    links: list[Doc[Unit]]


class Library:
    def __init__(self, ranking: Ranking = DEFAULT) -> None:
        self.ranking = ranking
        self.tokenize = ranking.tokenize
        self.sections: BM25Index[Unit] = BM25Index(ranking.k1, fields=ranking.fields)
        self.windows: BM25Index[Unit] = BM25Index(ranking.k1, fields=ranking.window_fields)
        self.links: BM25Index[Unit] = BM25Index(ranking.k1, fields=ranking.link_fields)

    def prepare(
        self, path: str, uri: str, text: str, searchable: bool, title: str | None = None, tags: tuple[str, ...] = ()
    ) -> Prepared:
        """Chunk and tokenize one file; `searchable` files also get sections. A front matter
        `title` heads every heading trail, so it ranks as the file's top heading; its `tags` rank
        with the trail."""
        heads = section_units(path, uri, text, title, tags) if searchable or is_markdown(path) else []
        page = self.ranking.page_terms(path, heads, tags) if self.ranking.page_weight else None
        links = link_units(path, uri, text) if self.ranking.link_weight else []
        return Prepared(
            self.docs(heads if searchable else []),
            self.docs(window_units(path, uri, text, heads, tags), page),
            [Doc(u, [self.tokenize(u.text)], (u.path, u.start_line)) for u in links],
        )

    def prepare_file(self, f: CorpusFile, hold: bool = True) -> tuple[CorpusFile, Prepared]:
        """`prepare` for a corpus file read whole, and the file as the index keeps it: itself, or
        (`hold` False) without its text, which its units then read from the file when asked for
        (see `Unit.source`): the index holds none of it."""
        prepared = self.prepare(f.path, f.uri, f.content(), f.searchable, f.meta.title, f.meta.tags)
        if hold or not f.held:
            return f, prepared
        kept = f.without_text()
        parts = (prepared.sections, prepared.windows, prepared.links)
        return kept, Prepared(*([Doc(d.payload._replace(source=kept), d.fields, d.order) for d in ds] for ds in parts))

    def apply(self, changes: Mapping[str, Prepared | None]) -> None:
        """Index prepared files and remove those mapped to None, as one update per index."""
        self.sections.update({p: c.sections if c else [] for p, c in changes.items()})
        self.windows.update({p: c.windows if c else [] for p, c in changes.items()})
        self.links.update({p: c.links if c else [] for p, c in changes.items()})

    def merge_all(self) -> None:
        """Each index in one segment (after a build in chunks; see `Postings.merge_all`)."""
        for index in self.indexes:
            index.merge_all()

    @property
    def indexes(self) -> tuple[BM25Index[Unit], BM25Index[Unit], BM25Index[Unit]]:
        """Sections, windows and links, in the order a cache entry keeps them."""
        return self.sections, self.windows, self.links

    def pack(self, paths: Sequence[str]) -> tuple[Packed[Unit], Packed[Unit], Packed[Unit]]:
        """These files' units and postings in each index, as a cache entry keeps them."""
        return self.sections.pack(paths), self.windows.pack(paths), self.links.pack(paths)

    def unpack(self, packed: Sequence[Packed[Unit]]) -> None:
        """Add packed files (`pack`, from a cache entry or a worker) to each index."""
        for index, part in zip(self.indexes, packed, strict=True):
            index.unpack(part)

    def docs(self, units: Sequence[Unit], page: Sequence[str] | None = None) -> list[Doc[Unit]]:
        """Units as documents of this library's indexes (its tokenizer, its fields); with `page`,
        windows of one file, the first holding it as its page field, the others none."""
        if page is None:
            return [Doc(u, self.ranking.terms(u), (u.path, u.start_line)) for u in units]
        return [
            Doc(u, [*self.ranking.terms(u), page if i == 0 else ()], (u.path, u.start_line))
            for i, u in enumerate(units)
        ]


def index_corpus(corpus: Corpus, library: Library | None = None) -> Library:
    """A library holding every file of `corpus`."""
    library = library or Library()
    library.apply({f.path: library.prepare_file(f)[1] for f in corpus.files.values()})
    return library
