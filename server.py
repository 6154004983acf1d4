"""agents-context: an MCP server for a project's `.AGENTS/` folder. Wiring only.

CLI flags, the MCPServer with its tools, resources and prompt, and the lifespan that keeps the
index live. Everything it serves comes from `corpus/` and `retrieval/`.
"""

from __future__ import annotations

import argparse
import logging
import mimetypes
import sys
import weakref
from collections.abc import AsyncIterator, Iterable, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Annotated, Any

import anyio
from mcp.server import NotificationOptions
from mcp.server.lowlevel.helper_types import ReadResourceContents
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ResourceNotFoundError
from mcp.server.session import ServerSession
from mcp.server.subscriptions import InMemorySubscriptionBus, ResourcesListChanged
from mcp.types import (
    Annotations,
    CallToolResult,
    InputRequiredResult,
    Resource,
    TextContent,
    ToolAnnotations,
)
from mcp_types.version import MODERN_PROTOCOL_VERSIONS
from pydantic import AnyUrl, Field

from corpus.errors import CorpusError
from corpus.identity import AGENTS_SCHEME, DOCS_SCHEME
from corpus.read import DEFAULT_MAX_BYTES
from corpus.roots import Root, RootKind, find_agents_root, make_roots
from corpus.rules import PinSet
from corpus.watch import Changes, WatchOptions, supervise
from retrieval import briefing
from retrieval.format import Rendered, SearchResult, render_context, render_docs
from retrieval.live import LiveIndex
from retrieval.ranking import DEFAULT as DEFAULT_RANKING
from retrieval.retriever import RetrievalRequest
from retrieval.sections import is_markdown

log = logging.getLogger("agents_context")

NAME = "agents-context"
EMPTY_QUERY = "query is required: pass a non-empty 'query' string"
READ_ONLY = ToolAnnotations(
    read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False
)

CONTEXT_SEARCH_DESCRIPTION = """\
Search this project's .AGENTS/ documentation (rules, security policy, architecture, glossary, \
per-service notes) and get the best-matching sections, each in a <context path="..." \
section="..." score="..."> block you can quote and cite by path and heading.

Call it before guessing about a project rule, convention, term or design decision, and whenever \
the task touches an area the server instructions list as searchable. Use a few specific words \
("secrets policy", "deploy rollback", "error handling"), not a whole sentence; if nothing useful \
comes back, try the words the documentation would use. The pinned files (overview, conventions) \
are not searched here: call pinned_context for them.

Cost: each section is usually 50-500 words; k (default 3, 1-20) is the most sections returned, so \
a larger k costs more context. The result is capped at 16 KB. A miss says \
"no matching context for: ..." and is a fact about the documentation, not an error. The last line \
is a status line [agents-context ...]."""

SEARCH_DOCS_DESCRIPTION = """\
Search all of this project's documentation in overlapping passages of about 500 words: every \
.AGENTS/ file (pinned ones included) and any documentation folders the server was started with \
(--docs). Each hit starts with "--- <path>#<chunk> (score=...) ---"; a footer says what the \
answer cost, e.g. [3 hits, ~9000 chars (~2250 tokens)].

Prefer context_search for project rules and conventions: its sections are smaller. Use \
search_docs for longer explanations and reference documentation. One passage is ~500 words, \
about 700 tokens: prefer k=3 or 5 (default 5, 1-10) and synthesise rather than search again. A \
miss says "(no results)". The last line is a status line [agents-context ...]."""

PINNED_CONTEXT_DESCRIPTION = """\
Return the project's pinned .AGENTS/ files (overview and conventions: the rules that apply to \
every task) in full, then the list of searchable files and their section headings. Call it once \
at the start of a task unless the server instructions already contain the pinned text; it is \
always current, while the instructions are a start-up snapshot. Costs the size of the pinned \
files (at most 32 KB)."""


@dataclass(frozen=True, slots=True)
class Config:
    agents: Path
    docs: list[Path] = field(default_factory=list)
    pins: list[str] | None = None
    max_file_bytes: int = DEFAULT_MAX_BYTES
    pinned_budget: int = briefing.PINNED_BUDGET_BYTES
    instructions_budget: int = briefing.INSTRUCTIONS_BUDGET_CHARS
    debounce_ms: int = 200
    poll_interval: float = 1.0


@dataclass(slots=True)
class AppState:
    """What one lifespan (one stdio process, one in-memory client) shares across its requests."""

    live: LiveIndex
    legacy_sessions: weakref.WeakKeyDictionary[object, ServerSession] = field(
        default_factory=weakref.WeakKeyDictionary
    )
    """Handshake-era sessions by connection. A `ServerSession` is a per-request proxy that keeps
    working after its request; the connection object lives exactly as long as the client."""


class AgentsServer(MCPServer[AppState]):
    """MCPServer with a resource list and reads that follow the live corpus."""

    def __init__(self, live: LiveIndex, config: Config, **kwargs: Any) -> None:
        self.live = live
        self.config = config
        self.bus = InMemorySubscriptionBus()
        super().__init__(subscriptions=self.bus, **kwargs)

    async def list_resources(self) -> list[Resource]:
        listed = await super().list_resources()
        for f in self.live.snapshot.corpus.files.values():
            if f.root.kind is not RootKind.AGENTS:
                continue
            first = next(iter(briefing.headings(f)), None)
            listed.append(
                Resource(
                    uri=f.uri,
                    name=f.rel,
                    title=first,
                    mime_type=mime_type(f.rel),
                    size=f.size,
                    annotations=Annotations(priority=1.0 if f.pinned else 0.5),
                )
            )
        return listed

    async def read_resource(
        self, uri: AnyUrl | str, context: Context[AppState, Any] | None = None
    ) -> Iterable[ReadResourceContents] | InputRequiredResult:
        text = str(uri)
        if not text.startswith((f"{AGENTS_SCHEME}://", f"{DOCS_SCHEME}://")):
            return await super().read_resource(uri, context)
        try:
            f = self.live.snapshot.corpus.read_uri(text)
        except CorpusError as exc:
            raise ResourceNotFoundError(str(exc)) from None
        return [ReadResourceContents(content=f.text, mime_type=mime_type(f.rel))]


def mime_type(name: str) -> str:
    if is_markdown(name):
        return "text/markdown"
    guessed, _ = mimetypes.guess_type(name, strict=False)
    return guessed if guessed and guessed.startswith("text/") else "text/plain"


def tool_result(rendered: Rendered) -> CallToolResult:
    return CallToolResult(
        content=[TextContent(type="text", text=rendered.text)],
        structured_content=rendered.result.model_dump(mode="json"),
    )


def error_result(message: str) -> CallToolResult:
    return CallToolResult(content=[TextContent(type="text", text=message)], is_error=True)


def clamp(value: int, low: int, high: int) -> int:
    return max(low, min(high, value))


def create_server(live: LiveIndex, config: Config) -> AgentsServer:
    snapshot = live.snapshot
    has_docs = any(r.kind is RootKind.DOCS for r in live.roots)
    server = AgentsServer(
        live,
        config,
        name=NAME,
        title="agents-context",
        version=version(),
        instructions=briefing.instructions(snapshot.corpus, config.instructions_budget, has_docs),
        lifespan=make_lifespan(live, config),
        middleware=[capture_legacy_session],
    )
    advertise_list_changed(server)

    @server.tool(
        name="context_search",
        title="Search project context",
        annotations=READ_ONLY,
        description=CONTEXT_SEARCH_DESCRIPTION,
    )
    def context_search(
        query: Annotated[str, Field(description="A few specific words: what you need to know.")],
        k: Annotated[
            int,
            Field(
                description="Most sections to return, 1-20 (clamped).",
                json_schema_extra={"minimum": 1, "maximum": 20},
            ),
        ] = 3,
    ) -> Annotated[CallToolResult, SearchResult]:
        if not query.strip():
            return error_result(EMPTY_QUERY)
        docs = live.snapshot.library.section_retriever.retrieve(RetrievalRequest(query, clamp(k, 1, 20)))
        return tool_result(render_context(query, docs, {"method": "bm25"}))

    @server.tool(
        name="search_docs",
        title="Search documentation passages",
        annotations=READ_ONLY,
        description=SEARCH_DOCS_DESCRIPTION,
    )
    def search_docs(
        query: Annotated[str, Field(description="Keywords or a short sentence.")],
        k: Annotated[
            int,
            Field(
                description="Most passages to return, 1-10 (clamped).",
                json_schema_extra={"minimum": 1, "maximum": 10},
            ),
        ] = 5,
    ) -> Annotated[CallToolResult, SearchResult]:
        if not query.strip():
            return error_result(EMPTY_QUERY)
        docs = live.snapshot.library.window_retriever.retrieve(RetrievalRequest(query, clamp(k, 1, 10)))
        return tool_result(render_docs(docs, {"method": "bm25"}))

    @server.tool(
        name="pinned_context",
        title="Pinned project context",
        annotations=READ_ONLY,
        description=PINNED_CONTEXT_DESCRIPTION,
        structured_output=False,
    )
    def pinned_context_tool() -> str:
        return briefing.pinned_context(live.snapshot.corpus, config.pinned_budget)

    @server.prompt(name="pinned_context", title="Pinned project context")
    def pinned_context_prompt() -> str:
        """The project's pinned .AGENTS/ files and the list of searchable sections."""
        return briefing.pinned_context(live.snapshot.corpus, config.pinned_budget)

    @server.resource(
        f"{AGENTS_SCHEME}://{{+path}}",
        name="agents-file",
        mime_type="text/markdown",
        description="A file of the .AGENTS folder; resources/list names every one.",
    )
    def agents_file(path: str) -> str:
        return read_text(live, f"{AGENTS_SCHEME}://{path}")

    @server.resource(
        f"{DOCS_SCHEME}://{{label}}/{{+path}}",
        name="docs-file",
        mime_type="text/markdown",
        description="A file of a --docs root, by root label and relative path (not listed).",
    )
    def docs_file(label: str, path: str) -> str:
        return read_text(live, f"{DOCS_SCHEME}://{label}/{path}")

    return server


def read_text(live: LiveIndex, uri: str) -> str:
    try:
        return live.snapshot.corpus.read_uri(uri).text
    except CorpusError as exc:
        raise ResourceNotFoundError(str(exc)) from None


def advertise_list_changed(server: MCPServer[Any]) -> None:
    """Advertise `resources.listChanged` to handshake-era clients on every transport.

    `MCPServer.run()` and the in-memory client build their initialize result with default
    NotificationOptions, which say `listChanged: false`; the low-level server has no setting
    for it, so we wrap its options factory (an SDK internal: see README, "Dependencies").
    """
    lowlevel = server._lowlevel_server
    build = lowlevel.create_initialization_options

    def with_list_changed(
        notification_options: NotificationOptions | None = None, *args: Any, **kwargs: Any
    ) -> Any:
        options = notification_options or NotificationOptions(resources_changed=True)
        return build(options, *args, **kwargs)

    lowlevel.create_initialization_options = with_list_changed  # type: ignore[method-assign]


async def capture_legacy_session(ctx: Any, call_next: Any) -> Any:
    """Remember each handshake-era connection once, so change notifications can reach it."""
    result = await call_next(ctx)
    if ctx.method == "notifications/initialized" and ctx.protocol_version not in MODERN_PROTOCOL_VERSIONS:
        state = ctx.lifespan_context
        if isinstance(state, AppState):
            state.legacy_sessions[ctx.session._connection] = ctx.session
    return result


def make_lifespan(live: LiveIndex, config: Config) -> Any:
    @asynccontextmanager
    async def lifespan(server: MCPServer[AppState]) -> AsyncIterator[AppState]:
        state = AppState(live)
        stop = anyio.Event()
        options = WatchOptions(debounce_ms=config.debounce_ms, poll_interval_s=config.poll_interval)

        async def on_change(changes: Changes | None) -> None:
            before = live.snapshot.agents_files()
            change = await anyio.to_thread.run_sync(live.rebuild)
            if change is None:
                return
            log.info("index generation %d: %d files changed", live.snapshot.generation, change.count)
            if live.snapshot.agents_files() != before:
                assert isinstance(server, AgentsServer)
                await notify_list_changed(server, state)

        async with anyio.create_task_group() as tg:
            tg.start_soon(supervise, live.roots, on_change, stop, options)
            try:
                yield state
            finally:
                stop.set()
                tg.cancel_scope.cancel()

    return lifespan


async def notify_list_changed(server: AgentsServer, state: AppState) -> None:
    """Both protocol eras: the subscription bus (2026-07-28) and each handshake-era session."""
    await server.bus.publish(ResourcesListChanged())
    for session in list(state.legacy_sessions.values()):
        await session.send_resource_list_changed()


# --- start-up -------------------------------------------------------------------------------


def version() -> str:
    try:
        return metadata.version("agents-context")
    except metadata.PackageNotFoundError:
        return "0+unknown"


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="agents-context",
        description="An MCP stdio server for a project's .AGENTS/ folder: pinned context, BM25 "
        "section search, resources, and a live index. 'agents-context serve' is the same command.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {version()}")
    parser.add_argument(
        "--root",
        metavar="DIR",
        help="the .AGENTS folder (default: $AGENTS_CONTEXT_ROOT, else ./.AGENTS or ./.agents)",
    )
    parser.add_argument(
        "--docs",
        metavar="DIR",
        action="append",
        default=[],
        help="a documentation folder searched by search_docs only (repeatable)",
    )
    parser.add_argument(
        "--pin",
        metavar="REL",
        action="append",
        help="pin this path of the .AGENTS folder instead of overview.md and "
        "conventions.md (repeatable; --pin '' pins nothing)",
    )
    parser.add_argument(
        "--max-file-bytes",
        type=int,
        default=DEFAULT_MAX_BYTES,
        metavar="N",
        help="skip files larger than this (default: 1 MiB)",
    )
    parser.add_argument(
        "--pinned-budget",
        type=int,
        default=briefing.PINNED_BUDGET_BYTES,
        metavar="BYTES",
        help="most bytes of pinned text pinned_context returns (default: 32768)",
    )
    parser.add_argument(
        "--instructions-budget",
        type=int,
        default=briefing.INSTRUCTIONS_BUDGET_CHARS,
        metavar="CHARS",
        help="most characters of server instructions (default: 2048, Claude Code's limit)",
    )
    parser.add_argument(
        "--debounce-ms",
        type=int,
        default=200,
        metavar="MS",
        help="wait this long for a burst of file changes to settle (default: 200)",
    )
    parser.add_argument(
        "--log-level",
        default="INFO",
        choices=["DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"],
        help="default: INFO",
    )
    parser.add_argument("--log-file", metavar="PATH", help="also write the log to this file")
    parser.add_argument(
        "--score-floor",
        type=float,
        default=DEFAULT_RANKING.score_floor,
        metavar="F",
        help="drop search hits scoring below F times the best hit's score, 0 to 1 "
        f"(default: {DEFAULT_RANKING.score_floor})",
    )
    return parser


def configure_logging(level: str, log_file: str | None) -> None:
    """Everything to stderr (stdout is the protocol), and to `log_file` too when given."""
    handlers: list[logging.Handler] = [logging.StreamHandler(sys.stderr)]
    if log_file:
        handlers.append(logging.FileHandler(log_file, encoding="utf-8"))
    for handler in handlers:
        handler.setFormatter(logging.Formatter("%(name)s: %(message)s"))
    logging.basicConfig(level=level, handlers=handlers, force=True)
    logging.getLogger("watchfiles").setLevel(logging.WARNING)


def announce(live: LiveIndex) -> None:
    """Seed 000's start-up summary: both halves of the context, on stderr."""
    corpus = live.snapshot.corpus
    for f in briefing.pinned(corpus):
        log.info("# pinned %s (%dB)", f.path, f.size)
    files = briefing.searchable(corpus)
    log.info("# searchable %d sections across %d files", live.snapshot.library.sections.n_docs, len(files))
    for root in live.roots:
        if root.kind is RootKind.DOCS:
            log.info("# docs %s (%s): %d files", root.label, root.path, len(corpus.in_root(root)))
    for s in corpus.skipped:
        log.info("# skipped %s/%s: %s", s.root.label, s.rel, s.reason)


def load_config(args: argparse.Namespace) -> tuple[Config, list[Root]]:
    agents = find_agents_root(args.root)
    config = Config(
        agents=agents,
        docs=[Path(d) for d in args.docs],
        pins=args.pin,
        max_file_bytes=args.max_file_bytes,
        pinned_budget=args.pinned_budget,
        instructions_budget=args.instructions_budget,
        debounce_ms=args.debounce_ms,
    )
    return config, make_roots([agents], config.docs)


def main(argv: Sequence[str] | None = None) -> None:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["eval"]:
        from retrieval.evaluate import main as evaluate

        raise SystemExit(evaluate(argv[1:]))
    if argv[:1] == ["serve"]:
        argv = argv[1:]
    args = build_parser().parse_args(argv)
    configure_logging(args.log_level, args.log_file)
    try:
        config, roots = load_config(args)
    except CorpusError as exc:
        log.error("%s", exc)
        raise SystemExit(2) from None
    if not 0.0 <= args.score_floor <= 1.0:
        log.error("--score-floor must be between 0 and 1, not %s", args.score_floor)
        raise SystemExit(2)
    ranking = DEFAULT_RANKING.but(score_floor=args.score_floor)
    pins = PinSet(config.pins) if config.pins is not None else None
    live = LiveIndex(roots, pins, config.max_file_bytes, ranking)
    announce(live)
    server = create_server(live, config)
    log.info("# waiting for an MCP client on stdin")
    anyio.run(server.run_stdio_async)


if __name__ == "__main__":
    main()
