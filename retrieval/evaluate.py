"""`agents-context eval QUESTIONS.jsonl --root DIR`: how well context_search finds what it should.

Each line of QUESTIONS.jsonl is a JSON object:

    {"question": "how do I roll back a deploy?", "expected_path": "deploy.md",
     "expected_heading": "Rollback", "also_acceptable": [{"path": "ops.md", "heading": "Undo"}]}

`expected_path` is relative to the root (or a display path such as `.AGENTS/deploy.md`);
`expected_heading` and `also_acceptable` are optional (without a heading, any section of the file
counts). The corpus is loaded and ranked exactly as the server does it. The report gives hit@1,
hit@3 and MRR@10, then every question whose answer is not in the top 3, with what came first
instead: the headings to rename, or the words to add, so the corpus says what people search for.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

from corpus.catalog import Corpus, load
from corpus.errors import CorpusError
from corpus.roots import find_agents_root, make_roots
from corpus.rules import PinSet
from retrieval.library import index_corpus
from retrieval.retriever import RetrievalRequest, RetrievedDocument

DEPTH = 10
_ANCHOR = re.compile(r"\s*\{#[^}]*\}\s*$")


@dataclass(frozen=True, slots=True)
class Target:
    path: str
    """Display path."""
    heading: str | None


@dataclass(frozen=True, slots=True)
class EvalQuestion:
    text: str
    targets: tuple[Target, ...]


class QuestionError(ValueError):
    """A line of the questions file that cannot be used, with its line number."""


def normal_heading(heading: str) -> str:
    return " ".join(_ANCHOR.sub("", heading).split()).casefold()


def read_questions(path: Path, label: str) -> list[EvalQuestion]:
    questions: list[EvalQuestion] = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
            text, expected = row["question"], row["expected_path"]
            if not isinstance(text, str) or not text.strip() or not isinstance(expected, str):
                raise TypeError("question and expected_path must be non-empty strings")
            targets = [Target(display(expected, label), row.get("expected_heading"))]
            targets += [
                Target(display(a["path"], label), a.get("heading")) for a in row.get("also_acceptable", [])
            ]
        except (ValueError, KeyError, TypeError) as exc:
            raise QuestionError(f"{path}:{number}: {type(exc).__name__}: {exc}") from None
        questions.append(EvalQuestion(text, tuple(targets)))
    return questions


def display(path: str, label: str) -> str:
    path = path.replace("\\", "/").lstrip("/")
    return path if path.startswith(f"{label}/") else f"{label}/{path}"


def is_hit(doc: RetrievedDocument, question: EvalQuestion) -> bool:
    for t in question.targets:
        if doc.unit.path == t.path and (
            t.heading is None or normal_heading(doc.unit.heading or "") == normal_heading(t.heading)
        ):
            return True
    return False


def evaluate(corpus: Corpus, questions: Sequence[EvalQuestion], out: TextIO, k: int = 3) -> float:
    """Print the report; return hit@k."""
    retriever = index_corpus(corpus).section_retriever
    pinned = {f.path for f in corpus.files.values() if f.pinned}
    hit1 = hitk = rr = 0.0
    misses: list[tuple[EvalQuestion, int | None, list[RetrievedDocument]]] = []
    for q in questions:
        found = retriever.retrieve(RetrievalRequest(q.text, max(DEPTH, k)))
        rank = next((i for i, d in enumerate(found, start=1) if is_hit(d, q)), None)
        hit1 += rank == 1
        hitk += rank is not None and rank <= k
        rr += 1.0 / rank if rank else 0.0
        if rank is None or rank > k:
            misses.append((q, rank, found))
    n = len(questions) or 1
    out.write(
        f"questions: {len(questions)}  hit@1: {hit1 / n:.3f}  hit@{k}: {hitk / n:.3f}  "
        f"MRR@{DEPTH}: {rr / n:.3f}\n"
    )
    if misses:
        out.write(f"\nnot in the top {k} ({len(misses)}):\n")
    for q, rank, found in misses:
        want = q.targets[0]
        where = f"rank {rank}" if rank else f"not in the top {DEPTH}"
        out.write(f"\n- {q.text}\n  want: {want.path} > {want.heading or '(any section)'} ({where})\n")
        if want.path in pinned:
            out.write("  note: that file is pinned; context_search does not search pinned files\n")
        elif want.path not in corpus.files:
            out.write("  note: no such file in the corpus\n")
        for i, d in enumerate(found[:k], start=1):
            out.write(f"  {i}. {d.unit.path} > {d.unit.heading} ({d.score:.2f})\n")
    return hitk / n


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="agents-context eval",
        description="Check that context_search finds the expected section for each question.",
    )
    parser.add_argument("questions", type=Path, metavar="QUESTIONS.jsonl")
    parser.add_argument("--root", metavar="DIR", help="the .AGENTS folder (default: as the server finds it)")
    parser.add_argument("--pin", metavar="REL", action="append", help="pinned paths, as for the server")
    parser.add_argument("-k", type=int, default=3, help="a hit must be in the top k (default: 3)")
    args = parser.parse_args(argv)
    try:
        roots = make_roots([find_agents_root(args.root)])
        questions = read_questions(args.questions, roots[0].label)
    except (CorpusError, QuestionError, OSError) as exc:
        sys.stderr.write(f"agents-context eval: {exc}\n")
        return 2
    corpus = load(roots, PinSet(args.pin) if args.pin is not None else None)
    evaluate(corpus, questions, sys.stdout, max(1, args.k))
    return 0
