"""The command line for people: see what the agent will see, and lint the corpus.

Every command runs the functions the MCP tools run (`live.answers`, `retrieval.render`,
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
from datetime import datetime, timezone
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
from cli import setup as client_setup
from cli.findings import Finding
from cli.settings import DEFAULTS, Settings, configure_logging, open_index
from clients import claude_code
from corpus.errors import CorpusError, NotInCorpus
from live import answers, cache, status
from live.index import LiveIndex
from retrieval.render import outline as outlines
from retrieval.render.schema import SearchResult
from retrieval.search.request import DEFAULT_MAX_TOKENS, SECTIONS, WINDOWS, ReadRequest, SearchRequest

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
    name: str = Field(description="The entry's file in the cache folder: <root slug>-<hash>.index.")
    root: str = Field(
        description="The root it indexes: its real path; when the entry does not say, the root part of its "
        "name, or ? for an entry an earlier version named by a hash alone."
    )
    label: str | None = Field(description="The root's label (the first segment of its display paths), when known.")
    kind: str | None = Field(description="agents or docs, when known.")
    bytes: int = Field(description="Its size on disk (with the small .json beside it that names its root).")
    last_used: datetime = Field(description="When a server last read or wrote it (UTC).")


class CacheReport(BaseModel):
    directory: str = Field(description="The cache folder.")
    action: Literal["show", "prune", "clear"]
    files: int = Field(description="How many entries the folder holds (show), or were removed (prune, clear).")
    bytes: int = Field(description="Their total size.")
    entries: list[CacheEntry] = Field(description="Those entries, most recently used first.")
    left: int = Field(description="Entries in the folder after the action (for show, the same as files).")
    left_bytes: int = Field(description="Their total size.")
    other_files: int = Field(
        description="Lock and temporary files in the folder after the action: not entries, in no count above."
    )
    cap_bytes: int = Field(
        description="The cap on the entries' total size (--cache-max-mb): above it, the least recently used "
        "are pruned; 0: no cap."
    )
    stale_after_days: int = Field(description="Entries unused for this many days are pruned.")


SCHEMAS: dict[str, type[BaseModel]] = {
    "search": SearchResult,
    "read": ReadResult,
    "outline": outlines.Outline,
    "status": status.StatusReport,
    "doctor": lint.Report,
    "eval": evaluation.EvalReport,
    "cache": CacheReport,
}
"""The `--json` model of each command (docs/configuration.md, "Command line")."""


def run_search(live: LiveIndex, request: SearchRequest) -> Output:
    """`agents-context search`: the request answered as its tool answers it."""
    if (why := answers.unknown_root(live, request)) is not None:
        raise NotInCorpus(why)
    rendered = answers.respond(live, request)

    def show(console: Console) -> None:
        if not rendered.result.hits:
            console.print(Text(rendered.body, style="yellow"))
        for hit in rendered.result.hits:
            title = f"{hit.citation}  score {hit.score:.2f}"
            console.print(
                Panel(Text(hit.text or hit.section_uri), title=title, title_align="left", border_style="cyan")
            )
        console.print(Text(rendered.status, style="dim"))

    return Output(rendered.text, rendered.result, 0, show)


def run_read(
    live: LiveIndex, path: str, start: int | None = None, end: int | None = None, max_tokens: int = DEFAULT_MAX_TOKENS
) -> Output:
    rendered = answers.respond(live, ReadRequest(name=path, start=start, end=end, max_tokens=max_tokens))
    excerpt = rendered.result
    model = ReadResult(
        path=excerpt.file.path,
        uri=excerpt.file.uri,
        section=excerpt.section.heading if excerpt.section else None,
        start_line=excerpt.start_line,
        end_line=excerpt.end_line,
        text=excerpt.text,
    )

    def show(console: Console) -> None:
        shown = rendered.body.partition("\n")[2].removesuffix("</context>").rstrip("\n")  # within --max-tokens
        where = f"{excerpt.file.path}:{excerpt.start_line}-{excerpt.end_line}"
        title = f"{where} ({model.section})" if model.section else where
        body = Syntax(shown, "markdown", line_numbers=True, start_line=excerpt.start_line, word_wrap=True)
        console.print(Panel(body, title=Text(title), title_align="left", border_style="cyan"))
        console.print(Text(rendered.status, style="dim"))

    return Output(rendered.text, model, 0, show)


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
        report = lint.diagnose(view.corpus, view.library, pinned_budget, instructions_budget, live.warnings)
    lines = [f"{f.severity}: {f.path}{_lines(f)} [{f.check}] {f.message}\n    fix: {f.fix}" for f in report.findings]
    totals = f"{report.files} files, {report.sections} sections: {report.errors} errors, {report.warnings} warnings" + (
        f", {report.notes} notes" if report.notes else ""
    )
    lines.append(f"\n{totals}.")
    seen = (
        f"What a model in {claude_code.CLIENT.name} sees of the instructions ({report.instructions_chars} characters)"
    )
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
    report = evaluation.evaluate_report(live, asked, max(1, k))

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


def run_cache(
    directory: Path | None, action: Literal["show", "prune", "clear"] = "show", cap_mb: int = DEFAULTS.cache_max_mb
) -> Output:
    """`agents-context cache [show|prune|clear]`: where the persistent index lives and what it
    holds (`live.cache`'s own listing: each entry's root, size and last use), or prune it as a
    server does at start-up, or remove it."""
    store = cache.IndexCache((directory or cache.default_dir()).expanduser(), "", cap_mb * cache.MB)
    now = time.time()
    held = store.listing(describe=True)
    if action == "show":
        done = held.entries
    else:
        described = {e.key: e for e in held.entries}
        removed = store.prune(now) if action == "prune" else store.clear()
        done = [described.get(e.key, e) for e in removed]
        held = store.listing()
    entries = [
        CacheEntry(
            name=e.name,
            root=e.root or (e.key.rpartition("-")[0] or "?"),
            label=e.label,
            kind=e.kind,
            bytes=e.bytes,
            last_used=datetime.fromtimestamp(e.last_used, timezone.utc),
        )
        for e in done
    ]
    report = CacheReport(
        directory=str(store.directory),
        action=action,
        files=len(entries),
        bytes=sum(e.bytes for e in entries),
        entries=entries,
        left=len(held.entries),
        left_bytes=sum(e.bytes for e in held.entries),
        other_files=len(held.others),
        cap_bytes=store.cap_bytes,
        stale_after_days=cache.STALE_AFTER_S // 86400,
    )
    cap = f"cap {cap_mb} MB" if cap_mb else "no cap"
    rules = f"{cap}; unused for {report.stale_after_days} days: removed"
    if action == "show":
        lines = [f"{report.directory}: {_entries(report.files)}, {_mb(report.bytes)} ({rules})"]
        lines += [f"  {e.root}  {_mb(e.bytes)}  used {_ago(now, e.last_used)}  {e.name}" for e in entries]
        if report.other_files:
            lines.append(f"  and {report.other_files} lock or temporary file{'s' if report.other_files > 1 else ''}")
        text = "\n".join(lines)
    else:
        text = f"removed {_entries(report.files)} ({_mb(report.bytes)}) from {report.directory}"
        text += f"; {_entries(report.left)} ({_mb(report.left_bytes)}) left"
        text += f" ({rules})" if action == "prune" else " (another server was writing them)" if report.left else ""

    def show(console: Console) -> None:
        if action != "show" or not entries:
            console.print(Text(text, style="green" if action != "show" else "dim"))
            return
        table = Table(title=f"{report.directory}: {_entries(report.files)} ({rules})", title_justify="left")
        for column in ("root", "size", "last used", "entry"):
            table.add_column(column, justify="right" if column == "size" else "left")
        for e in entries:
            table.add_row(Text(e.root), _mb(e.bytes), _ago(now, e.last_used), Text(e.name, style="dim"))
        table.add_row(Text("total", style="bold"), _mb(report.bytes), "", "")
        console.print(table)
        if report.other_files:
            console.print(Text(text.rpartition("\n")[2].strip(), style="dim"))

    return Output(text, report, 0, show)


def _entries(n: int) -> str:
    return f"{n} entry" if n == 1 else f"{n} entries"


def _mb(size: int) -> str:
    return f"{size / cache.MB:.1f} MB" if size >= cache.MB else f"{size / 1000:.0f} kB"


def _ago(now: float, then: datetime) -> str:
    seconds = now - then.timestamp()
    if seconds < 60:
        return "just now"
    if seconds < 3600:
        return f"{seconds // 60:.0f} min ago"
    if seconds < 2 * 86400:
        return f"{seconds // 3600:.0f} h ago"
    return f"{seconds // 86400:.0f} days ago"


def _lines(f: Finding) -> str:
    if f.start_line is None:
        return ""
    return f":{f.start_line}" if f.end_line in (None, f.start_line) else f":{f.start_line}-{f.end_line}"


# --- the entry point ------------------------------------------------------------------------


def run(args: argparse.Namespace) -> int:
    """A command for people: the same functions the tools use, readable on a terminal, plain when
    piped, JSON with --json. Returns the exit status."""
    if args.command == "setup":  # writes client configuration; opens no index
        return client_setup.run(args)
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
            output = run_cache(args.cache_dir, args.action, args.cache_max_mb)
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
        request = SearchRequest(
            query=args.query,
            kind=WINDOWS if args.docs else SECTIONS,
            k=args.k,
            offset=args.offset,
            path_prefix=args.path_prefix,
            root=args.in_root,
            detail=args.detail,
            max_tokens=args.max_tokens,
            deadline_s=settings.deadline_s,
            variants=tuple(args.variants),
        )
        return run_search(live, request)
    if args.command == "read":
        return run_read(live, args.path, args.start_line, args.end_line, args.max_tokens)
    if args.command == "outline":
        return run_outline(live)
    if args.command == "status":
        return run_status(live)
    if args.command == "eval":
        return run_eval(live, args.questions, args.k)
    return run_doctor(live, settings.pinned_budget, settings.instructions_budget)
