"""Both indexes over a corpus: sections of the searchable `.AGENTS` files, windows of every file.

A file is one group in each index, so changing, adding or removing a file touches only its own
units. Updates come in two steps: `prepare` (chunk and tokenize one file, no shared state, so it
can run outside any lock) and `apply` (a batch of prepared files and removals, as one coalesced
update of each index).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from corpus.catalog import Corpus
from retrieval.index import BM25Index, Doc
from retrieval.retriever import BM25Retriever
from retrieval.tokenize import tokenize as default_tokenize
from retrieval.units import Unit, section_units, window_units


@dataclass(frozen=True, slots=True)
class Prepared:
    """One file's units with their terms, ready to apply."""

    sections: list[Doc[Unit]]
    windows: list[Doc[Unit]]


class Library:
    def __init__(self, tokenize: Callable[[str], Sequence[str]] = default_tokenize) -> None:
        self.tokenize = tokenize
        self.sections: BM25Index[Unit] = BM25Index()
        self.windows: BM25Index[Unit] = BM25Index()
        self.section_retriever = BM25Retriever(self.sections, tokenize)
        self.window_retriever = BM25Retriever(self.windows, tokenize)

    def prepare(self, path: str, uri: str, text: str, searchable: bool, meta: str = "") -> Prepared:
        """Chunk and tokenize one file; `searchable` files also get sections. `meta` (front matter
        title, description, tags) is indexed with the file's first section and first window."""
        sections = section_units(path, uri, text) if searchable else []
        extra = list(self.tokenize(meta)) if meta else []
        return Prepared(
            sections=[self._doc(u, extra if i == 0 else []) for i, u in enumerate(sections)],
            windows=[
                self._doc(u, extra if i == 0 else []) for i, u in enumerate(window_units(path, uri, text))
            ],
        )

    def apply(self, changes: Mapping[str, Prepared | None]) -> None:
        """Index prepared files and remove those mapped to None, as one update per index."""
        self.sections.update({p: c.sections if c else [] for p, c in changes.items()})
        self.windows.update({p: c.windows if c else [] for p, c in changes.items()})

    def update(self, path: str, uri: str, text: str, searchable: bool) -> None:
        self.apply({path: self.prepare(path, uri, text, searchable)})

    def remove(self, path: str) -> None:
        self.apply({path: None})

    def _doc(self, unit: Unit, extra: Sequence[str] = ()) -> Doc[Unit]:
        terms = self.tokenize(unit.text)
        return Doc(unit, [*terms, *extra] if extra else terms, (unit.path, unit.start_line))


def index_corpus(corpus: Corpus, library: Library | None = None) -> Library:
    """A library holding every file of `corpus`."""
    library = library or Library()
    library.apply(
        {
            f.path: library.prepare(f.path, f.uri, f.text, f.searchable, f.meta.text)
            for f in corpus.files.values()
        }
    )
    return library
