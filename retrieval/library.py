"""Both indexes over a corpus: sections of the searchable `.AGENTS` files, windows of every file.

A file is updated as one group, so changing, adding or removing a file touches only its own
units (`update`), and the two retrievers always see complete files.
"""

from __future__ import annotations

from collections.abc import Sequence

from corpus.catalog import Corpus
from retrieval.feedback import rm3
from retrieval.index import BM25Index, Doc
from retrieval.ranking import DEFAULT, Ranking
from retrieval.retriever import BM25Retriever
from retrieval.sections import is_markdown
from retrieval.units import Unit, section_units, window_units


class Library:
    def __init__(self, ranking: Ranking = DEFAULT) -> None:
        self.ranking = ranking
        self.tokenize = ranking.tokenize
        self.sections: BM25Index[Unit] = BM25Index(ranking.k1, fields=ranking.fields)
        self.windows: BM25Index[Unit] = BM25Index(ranking.k1, fields=ranking.fields)
        expand = rm3(ranking) if ranking.feedback else None
        self.section_retriever = BM25Retriever(
            self.sections, self.tokenize, ranking.score_floor, expand, ranking.redundancy
        )
        self.window_retriever = BM25Retriever(
            self.windows, self.tokenize, ranking.score_floor, expand, ranking.redundancy
        )

    def update(self, path: str, uri: str, text: str, searchable: bool) -> None:
        """Index (or re-index) one file; `searchable` files also get sections."""
        heads = section_units(path, uri, text) if searchable or is_markdown(path) else []
        self.sections.replace(path, self.docs(heads if searchable else []))
        windows = window_units(path, uri, text, self.ranking.structured_windows, heads)
        self.windows.replace(path, self.docs(windows))

    def remove(self, path: str) -> None:
        self.sections.remove(path)
        self.windows.remove(path)

    def docs(self, units: Sequence[Unit]) -> list[Doc[Unit]]:
        """Units as documents of this library's indexes (its tokenizer, its fields)."""
        return [Doc(u, self.ranking.terms(u), (u.path, u.start_line)) for u in units]


def index_corpus(corpus: Corpus, library: Library | None = None) -> Library:
    """A library holding every file of `corpus`."""
    library = library or Library()
    for f in corpus.files.values():
        library.update(f.path, f.uri, f.text, f.searchable)
    return library
