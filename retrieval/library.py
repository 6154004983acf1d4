"""Both indexes over a corpus: sections of the searchable `.AGENTS` files, windows of every file.

A file is updated as one group, so changing, adding or removing a file touches only its own
units (`update`), and the two retrievers always see complete files.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from corpus.catalog import Corpus
from retrieval.index import BM25Index, Doc
from retrieval.retriever import BM25Retriever
from retrieval.tokenize import tokenize as default_tokenize
from retrieval.units import Unit, section_units, window_units


class Library:
    def __init__(self, tokenize: Callable[[str], Sequence[str]] = default_tokenize) -> None:
        self.tokenize = tokenize
        self.sections: BM25Index[Unit] = BM25Index()
        self.windows: BM25Index[Unit] = BM25Index()
        self.section_retriever = BM25Retriever(self.sections, tokenize)
        self.window_retriever = BM25Retriever(self.windows, tokenize)

    def update(self, path: str, uri: str, text: str, searchable: bool) -> None:
        """Index (or re-index) one file; `searchable` files also get sections."""
        sections = section_units(path, uri, text) if searchable else []
        self.sections.replace(path, [self._doc(u) for u in sections])
        self.windows.replace(path, [self._doc(u) for u in window_units(path, uri, text)])

    def remove(self, path: str) -> None:
        self.sections.remove(path)
        self.windows.remove(path)

    def _doc(self, unit: Unit) -> Doc[Unit]:
        return Doc(unit, self.tokenize(unit.text), (unit.path, unit.start_line))


def index_corpus(corpus: Corpus, library: Library | None = None) -> Library:
    """A library holding every file of `corpus`."""
    library = library or Library()
    for f in corpus.files.values():
        library.update(f.path, f.uri, f.text, f.searchable)
    return library
