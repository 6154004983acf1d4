"""One adapter per engine, all with the same tiny interface and all fed the same tokens.

`ingest` turns our token lists into what the engine's users hand it (untimed: strings joined by
spaces for tantivy and SQLite, token lists for the Python engines); `build` indexes them (timed);
`query` returns the ids of the best `k` sections; `update` re-indexes one file with new sections,
and is None for engines that can only rebuild.

Tokens: tantivy and FTS5 receive our tokens joined by single spaces, with a whitespace tokenizer
(tantivy's `whitespace`, FTS5's `ascii`, which keeps non-ASCII characters inside tokens and only
folds ASCII case, and our tokens are already case-folded), so every engine indexes exactly our
terms. Parameters: ours and bm25s use k1 = 1.5, b = 0.75 with the Lucene idf; rank-bm25's
`BM25Okapi` the same k1 and b with its Robertson idf; tantivy and FTS5 have fixed k1 = 1.2,
b = 0.75 (not configurable from Python).
"""

from __future__ import annotations

import importlib
import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:  # no numpy at import: workers time each engine's own import first
    from bench.corpora import Prepared

K = 10


class Engine(Protocol):
    @property
    def name(self) -> str: ...

    @property
    def modules(self) -> tuple[str, ...]:
        """What `import_seconds` imports, first thing in a fresh process."""

    @property
    def note(self) -> str: ...

    def ingest(self, p: Prepared, sections: list[list[str]]) -> None: ...

    def build(self) -> None: ...

    def query(self, terms: list[str], k: int) -> list[int]: ...

    @property
    def update(self) -> Callable[[int, list[list[str]]], None] | None:
        """Re-index one file (its group number, its new sections); None: the engine can only rebuild."""


def import_seconds(modules: Sequence[str]) -> float:
    t0 = time.perf_counter()
    for m in modules:
        importlib.import_module(m)
    return time.perf_counter() - t0


def _files(p: Prepared) -> list[tuple[str, int, int]]:
    """(file name, first section, end section) for every file."""
    return [(p.group_names[g], a, b) for g, a, b in p.group_slices()]


class Ours:
    """`retrieval.engine.index.BM25Index`, exactly as the server uses it: the start-up build is one
    `update` of every file (one segment), an edit one `replace` of that file."""

    name = "ours"
    modules: tuple[str, ...] = ("retrieval.engine.index",)
    note = "BM25Index; build = one update() of every file, update = replace() of one file"
    index_module = "retrieval.engine.index"

    def __init__(self) -> None:
        self.index: Any = None
        self.update = self._update

    def ingest(self, p: Prepared, sections: list[list[str]]) -> None:
        self.module: Any = importlib.import_module(self.index_module)
        self.sections = sections
        self.files = _files(p)
        self.starts = p.starts.tolist()

    def _docs(self, name: str, first: int, sections: Sequence[list[str]]) -> list[Any]:
        doc = self.module.Doc
        return [doc(first + j, [terms], (name, self.starts[first + j])) for j, terms in enumerate(sections)]

    def build(self) -> None:
        self.index = self.module.BM25Index()
        self.index.update({name: self._docs(name, a, self.sections[a:b]) for name, a, b in self.files})

    def query(self, terms: list[str], k: int) -> list[int]:
        return [s.payload for s in self.index.search(terms, k)]

    def _update(self, group: int, sections: list[list[str]]) -> None:
        name, a, _ = self.files[group]
        self.index.replace(name, self._docs(name, a, sections))


class RankBM25:
    name = "rank-bm25"
    modules = ("rank_bm25",)
    note = "BM25Okapi(k1=1.5, b=0.75), Robertson idf; get_scores + top-k; no update (rebuild)"

    update: Callable[[int, list[list[str]]], None] | None = None

    def ingest(self, p: Prepared, sections: list[list[str]]) -> None:
        self.sections = sections

    def build(self) -> None:
        from rank_bm25 import BM25Okapi

        self.bm = BM25Okapi(self.sections, k1=1.5, b=0.75)

    def query(self, terms: list[str], k: int) -> list[int]:
        import numpy as np

        scores = self.bm.get_scores(terms)
        k = min(k, len(scores))
        top = np.argpartition(-scores, k - 1)[:k]
        return [int(i) for i in top[np.argsort(-scores[top], kind="stable")]]


class BM25S:
    name = "bm25s"
    modules = ("bm25s",)
    note = 'bm25s BM25(method="lucene", k1=1.5, b=0.75), numpy backend; no update (rebuild)'

    update: Callable[[int, list[list[str]]], None] | None = None

    def ingest(self, p: Prepared, sections: list[list[str]]) -> None:
        self.sections = sections

    def build(self) -> None:
        import bm25s

        self.bm = bm25s.BM25(method="lucene", k1=1.5, b=0.75)
        self.bm.index(self.sections, show_progress=False)
        self.n = len(self.sections)

    def query(self, terms: list[str], k: int) -> list[int]:
        found = self.bm.retrieve([terms], k=min(k, self.n), show_progress=False, n_threads=0)
        return [int(i) for i in found.documents[0].tolist()]


class Tantivy:
    name = "tantivy"
    modules = ("tantivy",)
    note = "in-RAM index, whitespace tokenizer, freqs without positions, 1 indexing thread"

    def __init__(self) -> None:
        self.update = self._update

    def ingest(self, p: Prepared, sections: list[list[str]]) -> None:
        self.texts = [" ".join(s) for s in sections]
        self.files = _files(p)
        self.group_of = p.groups.tolist()

    def build(self) -> None:
        import tantivy

        builder = tantivy.SchemaBuilder()
        builder.add_text_field("body", stored=False, tokenizer_name="whitespace", index_option="freq")
        builder.add_unsigned_field("sid", stored=False, indexed=False, fast=True)
        builder.add_integer_field("grp", stored=False, indexed=True, fast=False)
        self.schema = builder.build()
        self.index = tantivy.Index(self.schema)
        self.writer = self.index.writer(heap_size=256_000_000, num_threads=1)
        for i, text in enumerate(self.texts):
            self.writer.add_document(self._doc(text, i, self.group_of[i]))
        self.writer.commit()
        self.writer.wait_merging_threads()
        self.writer = self.index.writer(heap_size=64_000_000, num_threads=1)
        self.index.reload()
        self.searcher = self.index.searcher()

    @staticmethod
    def _doc(text: str, sid: int, group: int) -> Any:
        import tantivy

        doc = tantivy.Document()
        doc.add_text("body", text)
        doc.add_unsigned("sid", sid)
        doc.add_integer("grp", group)
        return doc

    def query(self, terms: list[str], k: int) -> list[int]:
        import tantivy

        if not terms:
            return []
        should = tantivy.Occur.Should
        q = tantivy.Query.boolean_query(
            [(should, tantivy.Query.term_query(self.schema, "body", t, index_option="freq")) for t in terms]
        )
        hits = self.searcher.search(q, k, count=False).hits
        return [int(v) for v in self.searcher.fast_field_values("sid", [a for _, a in hits])]  # type: ignore[arg-type]

    def _update(self, group: int, sections: list[list[str]]) -> None:
        _, a, _ = self.files[group]
        self.writer.delete_documents_by_term("grp", group)
        for j, terms in enumerate(sections):
            self.writer.add_document(self._doc(" ".join(terms), a + j, group))
        self.writer.commit()
        self.index.reload()
        self.searcher = self.index.searcher()


class FTS5:
    name = "sqlite-fts5"
    modules = ("sqlite3",)
    note = "in-memory FTS5, ascii tokenizer, default detail=full (positions), ORDER BY bm25()"

    def __init__(self) -> None:
        self.update = self._update

    def ingest(self, p: Prepared, sections: list[list[str]]) -> None:
        self.texts = [" ".join(s) for s in sections]
        self.files = _files(p)

    def build(self) -> None:
        import sqlite3

        self.db = sqlite3.connect(":memory:")
        self.db.execute("CREATE VIRTUAL TABLE t USING fts5(body, tokenize = 'ascii')")
        self.db.executemany("INSERT INTO t(rowid, body) VALUES (?, ?)", enumerate(self.texts))
        self.db.commit()

    def query(self, terms: list[str], k: int) -> list[int]:
        if not terms:
            return []
        match = " OR ".join(f'"{t}"' for t in terms)
        rows = self.db.execute("SELECT rowid FROM t WHERE t MATCH ? ORDER BY rank LIMIT ?", (match, k))
        return [r[0] for r in rows]

    def _update(self, group: int, sections: list[list[str]]) -> None:
        _, a, b = self.files[group]
        self.db.execute("DELETE FROM t WHERE rowid >= ? AND rowid < ?", (a, b))
        self.db.executemany(
            "INSERT INTO t(rowid, body) VALUES (?, ?)", ((a + j, " ".join(s)) for j, s in enumerate(sections))
        )
        self.db.commit()


ENGINES: dict[str, Callable[[], Engine]] = {
    "ours": Ours,
    "rank-bm25": RankBM25,
    "bm25s": BM25S,
    "tantivy": Tantivy,
    "sqlite-fts5": FTS5,
}
DEFAULT = ["ours", "rank-bm25", "bm25s", "tantivy", "sqlite-fts5"]
