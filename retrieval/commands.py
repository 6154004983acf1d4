"""The command line for people: see what the agent will see, and lint the corpus.

Every command runs the functions the MCP tools run (`retrieval.answering`, `retrieval.reader`,
`retrieval.outline`, `retrieval.status`, `retrieval.doctor`, `retrieval.evaluate`); none has an
implementation of its own. Each returns an `Output`: plain text (what is printed when stdout is not
a terminal), a pydantic model (`--json`; its JSON Schema is `--json-schema`), an exit status, and a
richer rendering for a terminal.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from pydantic import BaseModel, Field
from rich.console import Console
from rich.panel import Panel
from rich.table import Table
from rich.text import Text
from rich.tree import Tree

from corpus.watch import WatchStatus
from retrieval import doctor as lint
from retrieval import evaluate as evaluation
from retrieval import outline as outlines
from retrieval import reader, status
from retrieval.answering import clamp, freshness, options_for, search
from retrieval.format import MAX_MAX_TOKENS, MIN_MAX_TOKENS, render_context, render_docs, render_excerpt
from retrieval.live import LiveIndex
from retrieval.policy import DEADLINE_S, Scope
from retrieval.results import SearchResult


@dataclass(frozen=True, slots=True)
class Output:
    text: str
    model: BaseModel
    code: int = 0
    show: Callable[[Console], None] | None = None
    """How to show it on a terminal (None: the plain text)."""


class ReadResult(BaseModel):
    path: str = Field(description="Display path of the file.")
    uri: str
    section: str | None = Field(description="The heading read, when a section was asked for.")
    start_line: int
    end_line: int
    text: str = Field(description="Exactly the lines read.")


SCHEMAS: dict[str, type[BaseModel]] = {
    "search": SearchResult,
    "read": ReadResult,
    "outline": outlines.Outline,
    "status": status.StatusReport,
    "doctor": lint.Report,
    "eval": evaluation.EvalReport,
}
"""The `--json` model of each command (README, "Command line")."""


def run_search(
    live: LiveIndex,
    query: str,
    docs: bool = False,
    k: int | None = None,
    detail: str = "sections",
    max_tokens: int = 4000,
    path_prefix: str | None = None,
    root: str | None = None,
    offset: int = 0,
) -> Output:
    kind = "windows" if docs else "sections"
    roots = live.roots if docs else live.agents_roots
    k = clamp(k if k is not None else (5 if docs else 3), 1, 10 if docs else 20)
    found, fresh = search(live, query, k, offset, Scope(kind, path_prefix, root), roots, DEADLINE_S)
    options = options_for(live, kind, query, found, fresh, detail, max_tokens, offset, None)
    rendered = render_docs(query, found, options) if docs else render_context(query, found, options)

    def show(console: Console) -> None:
        body, _, status_line = rendered.text.rpartition("\n\n")
        if not rendered.result.hits:
            console.print(Text(body, style="yellow"))
        for hit in rendered.result.hits:
            title = f"{hit.citation}  score {hit.score:.2f}"
            console.print(
                Panel(Text(hit.text or hit.section_uri), title=title, title_align="left", border_style="cyan")
            )
        console.print(Text(status_line, style="dim"))

    return Output(rendered.text, rendered.result, 0, show)


def run_read(
    live: LiveIndex, path: str, start: int | None = None, end: int | None = None, max_tokens: int = 4000
) -> Output:
    excerpt = reader.read(live.corpus, path, None, start, end)
    with live.view() as view:
        fields = freshness(live, view, live.roots).status()
    text = render_excerpt(excerpt, clamp(max_tokens, MIN_MAX_TOKENS, MAX_MAX_TOKENS), fields)
    model = ReadResult(
        path=excerpt.file.path,
        uri=excerpt.file.uri,
        section=excerpt.section.heading if excerpt.section else None,
        start_line=excerpt.start_line,
        end_line=excerpt.end_line,
        text=excerpt.text,
    )
    return Output(text, model)


def run_outline(live: LiveIndex) -> Output:
    with live.view() as view:
        out = outlines.outline(view.corpus)

    def show(console: Console) -> None:
        tree = Tree("outline")
        for f in out.files:
            branch = tree.add(
                f"[bold]{f.path}[/bold] ~{f.tokens} tokens" + (" [magenta]pinned[/magenta]" if f.pinned else "")
            )
            for s in f.sections:
                indent = "  " * max(len(s.trail) - 1, 0)
                branch.add(f"{indent}{s.heading} [dim]lines {s.start_line}-{s.end_line}, #{s.anchor}[/dim]")
        for r in out.roots:
            if r.kind != "agents":
                tree.add(f"[bold]{r.label}/[/bold] docs root: {r.files} files")
        console.print(tree)

    return Output(outlines.render_outline(out), out, 0, show)


def run_status(live: LiveIndex) -> Output:
    report = status.report(live, WatchStatus(mode="none (one-shot command)", healthy=True), time.time())

    def show(console: Console) -> None:
        table = Table(title="agents-context status", title_justify="left")
        for column in ("root", "kind", "files", "pinned", "sections", "windows", "skipped", "path"):
            table.add_column(column)
        for r in report.roots:
            table.add_row(
                r.label,
                r.kind,
                str(r.files),
                str(r.pinned),
                str(r.sections),
                str(r.windows),
                str(len(r.skipped)),
                r.path,
            )
        console.print(table)
        for r in report.roots:
            for s in r.skipped:
                console.print(f"[yellow]skipped[/yellow] {s.path}: {s.reason}")

    return Output(status.render(report), report, 0, show)


def run_doctor(live: LiveIndex, pinned_budget: int, instructions_budget: int) -> Output:
    with live.view() as view:
        report = lint.diagnose(view.corpus, view.library, pinned_budget, instructions_budget)
    lines = [f"{f.severity}: {f.path}{_lines(f)} [{f.check}] {f.message}\n    fix: {f.fix}" for f in report.findings]
    lines.append(
        f"\n{report.files} files, {report.sections} sections: {report.errors} errors, {report.warnings} warnings."
    )
    lines.append(f"\nWhat a model in Claude Code sees of the instructions ({len(report.instructions)} characters):\n")
    lines.append(report.instructions)

    def show(console: Console) -> None:
        table = Table(title="agents-context doctor", title_justify="left", show_lines=True)
        for column in ("", "where", "check", "finding", "fix"):
            table.add_column(column, overflow="fold")
        for f in report.findings:
            mark = "[red]error[/red]" if f.severity == "error" else "[yellow]warn[/yellow]"
            table.add_row(mark, f"{f.path}{_lines(f)}", f.check, f.message, f.fix)
        if report.findings:
            console.print(table)
        style = "red" if report.errors else "yellow" if report.warnings else "green"
        console.print(
            f"[{style}]{report.files} files, {report.sections} sections: "
            f"{report.errors} errors, {report.warnings} warnings[/{style}]"
        )
        console.print(Panel(report.instructions, title="what Claude Code sees of the instructions", title_align="left"))

    return Output("\n".join(lines), report, 1 if report.errors else 0, show)


def run_eval(live: LiveIndex, questions: Path, k: int = 3) -> Output:
    label = live.agents_roots[0].label if live.agents_roots else ""
    asked = evaluation.read_questions(questions, label)
    with live.view() as view:
        report = evaluation.evaluate_report(view.library, view.corpus, asked, max(1, k))
    return Output(evaluation.render(report), report)


def _lines(f: lint.Finding) -> str:
    if f.start_line is None:
        return ""
    return f":{f.start_line}" if f.end_line in (None, f.start_line) else f":{f.start_line}-{f.end_line}"
