"""The command line for people: see what the agent will see, and lint the corpus.

Every command runs the functions the MCP tools run (`live.answering`, `retrieval.render`,
`live.status`, `cli.doctor`, `cli.evaluate`; `cache` runs `live.cache`'s); none has an
implementation of its own. Each returns an `Output`: plain text (what is printed when stdout is
not a terminal), a pydantic model (`--json`; its JSON Schema is `--json-schema`), an exit
status, and a richer rendering for a terminal. `run` is the entry point for every command but
`serve`.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field
from rich.console import Console
from rich.markup import escape
from rich.panel import Panel
from rich.syntax import Syntax
from rich.table import Table
from rich.text import Text
from rich.tree import Tree

from cli import doctor as lint
from cli import evaluate as evaluation
from cli.settings import DEFAULTS, Settings, configure_logging, open_index
from corpus.errors import CorpusError
from live import answering, cache, status
from live.index import LiveIndex
from retrieval.render import outline as outlines
from retrieval.render.excerpt import render_excerpt
from retrieval.render.hits import DEFAULT_MAX_TOKENS, Page, budget, render_context, render_docs
from retrieval.render.schema import SearchResult
from retrieval.search.answer import SECTIONS, WINDOWS, Scope

log = logging.getLogger("agents_context")


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


class CacheEntry(BaseModel):
    name: str = Field(description="File name in the cache folder: <key>.index (a root's index), .lock or .tmp.")
    bytes: int


class CacheReport(BaseModel):
    directory: str = Field(description="The cache folder.")
    action: Literal["show", "clear"]
    files: int = Field(description="How many files the folder holds (show) or held and were removed (clear).")
    bytes: int = Field(description="Their total size.")
    entries: list[CacheEntry] = Field(description="Those files: what the folder holds, or what was removed.")


SCHEMAS: dict[str, type[BaseModel]] = {
    "search": SearchResult,
    "read": ReadResult,
    "outline": outlines.Outline,
    "status": status.StatusReport,
    "doctor": lint.Report,
    "eval": evaluation.EvalReport,
    "cache": CacheReport,
}
"""The `--json` model of each command (README, "Command line")."""


def run_search(
    live: LiveIndex,
    query: str,
    docs: bool = False,
    k: int | None = None,
    detail: str = "sections",
    max_tokens: int = DEFAULT_MAX_TOKENS,
    path_prefix: str | None = None,
    root: str | None = None,
    offset: int = 0,
    deadline_s: float = DEFAULTS.deadline_s,
) -> Output:
    kind = WINDOWS if docs else SECTIONS
    roots = live.roots if docs else live.agents_roots
    found = answering.search(live, query, kind.clamp_k(k), offset, Scope(kind, path_prefix, root), roots, deadline_s)
    page = Page(detail, budget(max_tokens), offset, tokenize=live.library.tokenize)
    rendered = render_docs(query, found, page) if docs else render_context(query, found, page)

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
    live: LiveIndex, path: str, start: int | None = None, end: int | None = None, max_tokens: int = DEFAULT_MAX_TOKENS
) -> Output:
    excerpt = answering.read(live, path, None, start, end)
    text = render_excerpt(excerpt, budget(max_tokens), answering.now(live, live.roots))
    model = ReadResult(
        path=excerpt.file.path,
        uri=excerpt.file.uri,
        section=excerpt.section.heading if excerpt.section else None,
        start_line=excerpt.start_line,
        end_line=excerpt.end_line,
        text=excerpt.text,
    )

    def show(console: Console) -> None:
        block, _, status_line = text.rpartition("\n\n")
        shown = block.partition("\n")[2].removesuffix("</context>").rstrip("\n")  # within --max-tokens
        where = f"{excerpt.file.path}:{excerpt.start_line}-{excerpt.end_line}"
        title = f"{where} ({model.section})" if model.section else where
        body = Syntax(shown, "markdown", line_numbers=True, start_line=excerpt.start_line, word_wrap=True)
        console.print(Panel(body, title=Text(title), title_align="left", border_style="cyan"))
        console.print(Text(status_line, style="dim"))

    return Output(text, model, 0, show)


def run_outline(live: LiveIndex) -> Output:
    with live.view() as view:
        out = outlines.outline(view.corpus)

    def show(console: Console) -> None:
        tree = Tree("outline")
        for f in out.files:
            branch = tree.add(
                f"[bold]{escape(f.path)}[/bold] ~{f.tokens} tokens" + (" [magenta]pinned[/magenta]" if f.pinned else "")
            )
            for s in f.sections:
                indent = "  " * max(len(s.trail) - 1, 0)
                branch.add(
                    f"{indent}{escape(s.heading)} [dim]lines {s.start_line}-{s.end_line}, #{escape(s.anchor)}[/dim]"
                )
        for r in out.roots:
            if r.kind != "agents":
                tree.add(f"[bold]{escape(r.label)}/[/bold] docs root: {r.files} files")
        console.print(tree)

    return Output(outlines.render_outline(out), out, 0, show)


def run_status(live: LiveIndex) -> Output:
    report = status.report(live, None, time.time())

    def show(console: Console) -> None:
        table = Table(title="agents-context status", title_justify="left")
        for column in ("root", "kind", "files", "pinned", "sections", "windows", "skipped", "path"):
            table.add_column(column)
        for r in report.roots:
            table.add_row(
                Text(r.label),
                r.kind,
                str(r.files),
                str(r.pinned),
                str(r.sections),
                str(r.windows),
                str(len(r.skipped)),
                Text(r.path),
            )
        console.print(table)
        for r in report.roots:
            for s in r.skipped:
                console.print(f"[yellow]skipped[/yellow] {escape(s.path)}: {escape(s.reason)}")

    return Output(status.render(report), report, 0, show)


_MARKS = {"error": "red", "warning": "yellow", "note": "blue"}


def run_doctor(live: LiveIndex, pinned_budget: int, instructions_budget: int) -> Output:
    """Every text here comes from the report, whose credentials doctor has masked."""
    with live.view() as view:
        report = lint.diagnose(view.corpus, view.library, pinned_budget, instructions_budget)
    lines = [f"{f.severity}: {f.path}{_lines(f)} [{f.check}] {f.message}\n    fix: {f.fix}" for f in report.findings]
    totals = f"{report.files} files, {report.sections} sections: {report.errors} errors, {report.warnings} warnings" + (
        f", {report.notes} notes" if report.notes else ""
    )
    lines.append(f"\n{totals}.")
    seen = f"What a model in Claude Code sees of the instructions ({report.instructions_chars} characters)"
    lines.append(f"\n{seen}:\n")
    lines.append(report.instructions)

    def show(console: Console) -> None:
        table = Table(title="agents-context doctor", title_justify="left", show_lines=True)
        for column in ("", "where", "check", "finding", "fix"):
            table.add_column(column, overflow="fold")
        for f in report.findings:
            mark = Text("warn" if f.severity == "warning" else f.severity, style=_MARKS.get(f.severity, ""))
            table.add_row(mark, Text(f"{f.path}{_lines(f)}"), f.check, Text(f.message), Text(f.fix))
        if report.findings:
            console.print(table)
        style = "red" if report.errors else "yellow" if report.warnings else "green"
        console.print(Text(totals, style=style))
        console.print(Panel(Text(report.instructions), title=seen.lower(), title_align="left"))

    return Output("\n".join(lines), report, 1 if report.errors else 0, show)


def run_eval(live: LiveIndex, questions: Path, k: int = 3) -> Output:
    label = live.agents_roots[0].label if live.agents_roots else ""
    asked = evaluation.read_questions(questions, label)
    with live.view() as view:
        report = evaluation.evaluate_report(view.library, view.corpus, asked, max(1, k))

    def show(console: Console) -> None:
        scores = Table(title=f"agents-context eval: {report.questions} questions", title_justify="left")
        for column in ("hit@1", f"hit@{report.k}", f"MRR@{evaluation.DEPTH}"):
            scores.add_column(column, justify="right")
        scores.add_row(*(f"{x:.3f}" for x in (report.hit_at_1, report.hit_at_k, report.mrr_at_10)))
        console.print(scores)
        if not report.misses:
            console.print(Text(f"every answer is in the top {report.k}", style="green"))
            return
        misses = Table(title=f"not in the top {report.k} ({len(report.misses)})", title_justify="left", show_lines=True)
        for column in ("question", "answer wanted", "rank", "came first instead"):
            misses.add_column(column, overflow="fold")
        for m in report.misses:
            want = Text(f"{m.want_path} > {m.want_heading or '(any section)'}")
            if m.note:
                want.append(f"\n{m.note}", style="dim")
            rank = str(m.rank) if m.rank else f"> {evaluation.DEPTH}"
            top = "\n".join(f"{i}. {t}" for i, t in enumerate(m.top, start=1))
            misses.add_row(Text(m.question), want, Text(rank, style="yellow"), Text(top))
        console.print(misses)

    return Output(evaluation.render(report), report, 0, show)


def run_cache(directory: Path | None, action: Literal["show", "clear"] = "show") -> Output:
    """`agents-context cache [show|clear]`: where the persistent index lives and what it holds
    (`live.cache`'s own listing), or remove it."""
    store = cache.IndexCache((directory or cache.default_dir()).expanduser(), "")
    held = [(p, _size(p)) for p in store.entries()]
    if action == "clear":
        removed = set(store.clear())
        held = [(p, size) for p, size in held if p in removed]
    entries = [CacheEntry(name=p.name, bytes=size) for p, size in held]
    report = CacheReport(
        directory=str(store.directory),
        action=action,
        files=len(entries),
        bytes=sum(e.bytes for e in entries),
        entries=entries,
    )
    if action == "clear":
        text = f"removed {report.files} files from {report.directory}"
    else:
        text = "\n".join(
            [f"{report.directory}: {report.files} files, {report.bytes / 1e6:.1f} MB"]
            + [f"  {e.name}  {e.bytes / 1e6:.1f} MB" for e in entries]
        )

    def show(console: Console) -> None:
        if action == "clear" or not entries:
            console.print(Text(text, style="green" if action == "clear" else "dim"))
            return
        table = Table(title=f"{report.directory}: {report.files} files", title_justify="left")
        table.add_column("entry")
        table.add_column("size", justify="right")
        for e in entries:
            table.add_row(Text(e.name), f"{e.bytes / 1e6:.1f} MB")
        table.add_row(Text("total", style="bold"), f"{report.bytes / 1e6:.1f} MB")
        console.print(table)

    return Output(text, report, 0, show)


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:  # removed by another process meanwhile
        return 0


def _lines(f: lint.Finding) -> str:
    if f.start_line is None:
        return ""
    return f":{f.start_line}" if f.end_line in (None, f.start_line) else f":{f.start_line}-{f.end_line}"


# --- the entry point ------------------------------------------------------------------------


def run(args: argparse.Namespace) -> int:
    """A command for people: the same functions the tools use, readable on a terminal, plain when
    piped, JSON with --json. Returns the exit status."""
    try:
        return _run(args)
    except BrokenPipeError:  # `agents-context outline | head`: the reader left, which is fine
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0


def _run(args: argparse.Namespace) -> int:
    if args.json_schema:
        print(json.dumps(SCHEMAS[args.command].model_json_schema(), indent=2))  # noqa: T201 - a CLI command
        return 0
    configure_logging(args.log_level or "WARNING", args.log_file)
    try:
        if args.command == "cache":
            output = run_cache(args.cache_dir, args.action)
        else:
            logging.getLogger("agents_context.progress").setLevel(logging.INFO)  # progress on a large tree
            settings = Settings.from_args(args)
            output = _dispatch(args, settings, open_index(settings))
    except (CorpusError, evaluation.QuestionError, OSError) as exc:
        log.error("%s", exc)
        return 2
    if args.json:
        print(output.model.model_dump_json(indent=2))  # noqa: T201 - a CLI command
    elif sys.stdout.isatty() and output.show is not None:
        output.show(Console())
    else:
        print(output.text)  # noqa: T201 - a CLI command
    return output.code


def _dispatch(args: argparse.Namespace, settings: Settings, live: LiveIndex) -> Output:
    if args.command == "search":
        return run_search(
            live,
            args.query,
            bool(args.docs),
            args.k,
            args.detail,
            args.max_tokens,
            args.path_prefix,
            args.in_root,
            args.offset,
            settings.deadline_s,
        )
    if args.command == "read":
        return run_read(live, args.path, args.start_line, args.end_line, args.max_tokens)
    if args.command == "outline":
        return run_outline(live)
    if args.command == "status":
        return run_status(live)
    if args.command == "eval":
        return run_eval(live, args.questions, args.k)
    return run_doctor(live, settings.pinned_budget, settings.instructions_budget)
