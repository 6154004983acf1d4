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

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from pydantic import BaseModel, Field

from live import answers
from live.index import LiveIndex
from retrieval.chunks.sections import plain_heading
from retrieval.search.request import SearchRequest
from retrieval.search.retriever import RetrievedDocument

DEPTH = 10


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
    return " ".join(plain_heading(heading).split()).casefold()


def read_questions(path: Path, label: str) -> list[EvalQuestion]:
    """The questions of a JSONL file, or `QuestionError` naming the file, the line and what is
    wrong with it in one sentence (a missing key, a value of the wrong type, a line that is no
    JSON object); a file that cannot be read, or is not UTF-8, is a `QuestionError` too."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        why = "it is not UTF-8 text" if isinstance(exc, UnicodeDecodeError) else exc.strerror or str(exc)
        raise QuestionError(f"{path}: cannot read the questions file: {why}") from None
    questions: list[EvalQuestion] = []
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            questions.append(_question(line, label))
        except ValueError as exc:
            raise QuestionError(f"{path}:{number}: {exc}; each line is {SHAPE}") from None
    return questions


SHAPE = '{"question": "...", "expected_path": "..."} (with "expected_heading" and "also_acceptable" optional)'
"""A line of the questions file, as error messages show it."""


def _question(line: str, label: str) -> EvalQuestion:
    """One line of the questions file, or `ValueError` saying what is wrong with it."""
    try:
        row = json.loads(line)
    except ValueError as exc:
        raise ValueError(f"not JSON ({exc})") from None
    if not isinstance(row, dict):
        raise ValueError(f"a JSON {_kind(row)}, not an object")
    text = _text(row, "question")
    targets = [Target(display(_text(row, "expected_path"), label), _heading(row, "expected_heading"))]
    others = row.get("also_acceptable", [])
    if not isinstance(others, list):
        raise ValueError(f'"also_acceptable" is a JSON {_kind(others)}, not a list of objects')
    for i, other in enumerate(others, start=1):
        where = f"also_acceptable item {i}"
        if not isinstance(other, dict):
            raise ValueError(f'{where} is a JSON {_kind(other)}, not an object with "path" and "heading"')
        targets.append(Target(display(_text(other, "path", where), label), _heading(other, "heading", where)))
    return EvalQuestion(text, tuple(targets))


def _text(row: dict[str, object], key: str, where: str = "") -> str:
    """The non-empty string under `key`, or `ValueError` naming the missing key or the wrong value
    (`where`: the part of the line the row is, when it is not the line itself)."""
    if key not in row:
        raise ValueError(f'{where} is missing "{key}"' if where else f'missing "{key}"')
    value = row[key]
    if not isinstance(value, str) or not value.strip():
        raise ValueError(f"{_of(key, where)} must be a non-empty string, not {_shown(value)}")
    return value


def _heading(row: dict[str, object], key: str, where: str = "") -> str | None:
    value = row.get(key)
    if value is not None and not isinstance(value, str):
        raise ValueError(f"{_of(key, where)} must be a string, not {_shown(value)}")
    return value


def _of(key: str, where: str) -> str:
    return f'"{key}" of {where}' if where else f'"{key}"'


def _shown(value: object) -> str:
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= 40 else text[:37] + "..."


def _kind(value: object) -> str:
    kinds: dict[type, str] = {list: "list", str: "string", bool: "boolean", type(None): "null", dict: "object"}
    return kinds.get(type(value), "number")


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


class Miss(BaseModel):
    question: str
    want_path: str
    want_heading: str | None
    rank: int | None = Field(description="Where the answer ranked (None: not in the top 10).")
    note: str | None = Field(default=None, description="Why it cannot be found, when known.")
    top: list[str] = Field(description="What came first instead: path > heading (score).")


class EvalReport(BaseModel):
    questions: int
    k: int
    hit_at_1: float
    hit_at_k: float
    mrr_at_10: float
    misses: list[Miss] = Field(description="Questions whose answer is not in the top k.")


def evaluate_report(live: LiveIndex, questions: Sequence[EvalQuestion], k: int = 3) -> EvalReport:
    """Ask every question as `context_search` is asked (the same request, policy and checks
    against the disk, `DEPTH` hits) and score where its answer lands."""
    with live.view() as view:
        files = set(view.corpus.files)
    hit1 = hitk = rr = 0.0
    misses: list[Miss] = []
    for q in questions:
        found = answers.search(live, SearchRequest(query=q.text, k=max(DEPTH, k))).docs
        rank = next((i for i, d in enumerate(found, start=1) if is_hit(d, q)), None)
        hit1 += rank == 1
        hitk += rank is not None and rank <= k
        rr += 1.0 / rank if rank else 0.0
        if rank is None or rank > k:
            want = q.targets[0]
            note = "no such file in the corpus" if want.path not in files else None
            top = [f"{d.unit.path} > {d.unit.heading} ({d.score:.2f})" for d in found[:k]]
            misses.append(
                Miss(
                    question=q.text,
                    want_path=want.path,
                    want_heading=want.heading,
                    rank=rank,
                    note=note,
                    top=top,
                )
            )
    n = len(questions) or 1
    return EvalReport(
        questions=len(questions),
        k=k,
        hit_at_1=round(hit1 / n, 4),
        hit_at_k=round(hitk / n, 4),
        mrr_at_10=round(rr / n, 4),
        misses=misses,
    )


def render(report: EvalReport) -> str:
    k = report.k
    lines = [
        f"questions: {report.questions}  hit@1: {report.hit_at_1:.3f}  hit@{k}: {report.hit_at_k:.3f}  "
        f"MRR@{DEPTH}: {report.mrr_at_10:.3f}"
    ]
    if report.misses:
        lines.append(f"\nnot in the top {k} ({len(report.misses)}):")
    for m in report.misses:
        where = f"rank {m.rank}" if m.rank else f"not in the top {DEPTH}"
        lines.append(f"\n- {m.question}\n  want: {m.want_path} > {m.want_heading or '(any section)'} ({where})")
        if m.note:
            lines.append(f"  note: {m.note}")
        lines.extend(f"  {i}. {top}" for i, top in enumerate(m.top, start=1))
    return "\n".join(lines)
