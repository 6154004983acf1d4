"""The public test collections of `../shared/eval/`, read into the server's own pipeline.

- markdown-dev: each docs folder is loaded exactly as the server loads a `.AGENTS` root
  (`corpus.roots.make_roots`, `corpus.catalog.load`) and indexed by `retrieval.engine.library`.
- SciFact and Cranfield (BEIR layout): each document becomes a `Unit` whose heading is the title
  and whose text is the title line then the text, indexed through the same `Library` (same
  tokenizer, fields and engine), and searched through `Retriever.retrieve`.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from corpus.catalog import load
from corpus.roots import make_roots
from corpus.rules import PinSet
from retrieval.chunks.units import Unit
from retrieval.engine.library import Library, index_corpus
from retrieval.engine.ranking import Ranking

DEFAULT_DATA = Path(__file__).resolve().parents[1].parent / "shared" / "eval"


@dataclass(frozen=True, slots=True)
class Question:
    corpus: str
    text: str
    expected: tuple[str, str]
    """(display path, heading)."""
    acceptable: tuple[tuple[str, str], ...]
    """The expected section and every `also_acceptable` one."""
    paraphrased: bool


@dataclass(slots=True)
class MarkdownDev:
    questions: list[Question]
    roots: dict[str, Path] = field(default_factory=dict)
    """Corpus name -> its folder."""


def read_jsonl(path: Path) -> Iterator[dict[str, Any]]:
    """A JSON lines file's rows, blank lines skipped."""
    with path.open(encoding="utf-8") as lines:
        for line in lines:
            if line.strip():
                yield json.loads(line)


def markdown_dev(data: Path) -> MarkdownDev:
    base = data / "markdown-dev"
    dev = MarkdownDev([])
    for row in read_jsonl(base / "questions.jsonl"):
        name = str(row["corpus"])
        dev.roots[name] = base / str(row["corpus_root"])
        expected = (f"{name}/{row['expected_path']}", str(row["expected_heading"]))
        also = row.get("also_acceptable") or []
        assert isinstance(also, list)
        acceptable = (expected, *((f"{name}/{a['path']}", str(a["heading"])) for a in also))
        dev.questions.append(Question(name, str(row["question"]), expected, acceptable, bool(row["paraphrased"])))
    return dev


def markdown_library(root: Path | list[Path], ranking: Ranking) -> Library:
    """The folder (or folders) as `.AGENTS` roots, pinning nothing (the folders have no
    overview.md or conventions.md at their top anyway), indexed like the server indexes it."""
    corpus = load(make_roots(root if isinstance(root, list) else [root]), PinSet([]))
    return index_corpus(corpus, Library(ranking))


@dataclass(slots=True)
class Collection:
    name: str
    docs: dict[str, tuple[str, str]]
    """Document id -> (title, text)."""
    queries: dict[str, str]
    qrels: dict[str, dict[str, int]]


def beir(data: Path, name: str, qrels_file: str = "qrels.tsv") -> Collection:
    base = data / name
    docs = {
        str(r["id"]): (str(r.get("title") or ""), str(r.get("text") or "")) for r in read_jsonl(base / "corpus.jsonl")
    }
    queries = {str(r["id"]): str(r["text"]) for r in read_jsonl(base / "queries.jsonl")}
    qrels: dict[str, dict[str, int]] = {}
    for line in (base / qrels_file).read_text(encoding="utf-8").splitlines():
        if line.strip():
            qid, doc, rel = line.split("\t")
            qrels.setdefault(qid, {})[doc] = int(rel)
    return Collection(name, docs, {q: t for q, t in queries.items() if q in qrels}, qrels)


def doc_unit(collection: str, doc_id: str, title: str, text: str) -> Unit:
    """A document as a section: the title is its heading, the text its body. Its path is
    `<collection>/d<id>`, so the path field holds no bare number a query could meet by chance."""
    return Unit(
        path=f"{collection}/d{doc_id}",
        uri=doc_id,
        source=f"{title}\n{text}",
        start_line=1,
        end_line=2,
        heading=title,
        trail=(title,),
    )


def collection_library(collection: Collection, ranking: Ranking) -> Library:
    library = Library(ranking)
    units = [doc_unit(collection.name, d, title, text) for d, (title, text) in collection.docs.items()]
    library.sections.replace(collection.name, library.docs(units))
    return library
