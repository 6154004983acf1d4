"""agents-context: an MCP server for a project's `.AGENTS/` folder. Wiring only.

CLI flags, the MCPServer with its tools, resources and prompt, and the lifespan that keeps the
index live. Everything it serves comes from `corpus/` and `retrieval/`.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import logging
import mimetypes
import os
import sys
import time
import weakref
from collections.abc import AsyncIterator, Iterable, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Annotated, Any, Literal

import anyio
from mcp import MCPError, types
from mcp.server import NotificationOptions
from mcp.server.lowlevel.helper_types import ReadResourceContents
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ResourceNotFoundError
from mcp.server.session import ServerSession
from mcp.server.subscriptions import InMemorySubscriptionBus, ResourcesListChanged, ResourceUpdated
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
from rich.console import Console
from watchfiles import Change as FileChange
from watchfiles import awatch

from corpus.catalog import CorpusFile
from corpus.errors import CorpusError, RootNotFound
from corpus.identity import AGENTS_SCHEME, DOCS_SCHEME, SERVER_SCHEME, file_uri, parse_file_uri
from corpus.read import DEFAULT_MAX_BYTES
from corpus.roots import Root, RootKind, find_agents_roots, make_roots
from corpus.rules import PinSet
from corpus.watch import Changes, WatchFactory, WatchOptions, WatchStatus, supervise
from retrieval import briefing, cache, commands, evaluate, policy, reader, status
from retrieval.answering import clamp, freshness, options_for, search
from retrieval.applies import applicable
from retrieval.format import (
    DEFAULT_MAX_TOKENS,
    MAX_MAX_TOKENS,
    MIN_MAX_TOKENS,
    Options,
    Rendered,
    render_context,
    render_docs,
    render_excerpt,
)
from retrieval.links import links
from retrieval.live import Change, LiveIndex
from retrieval.outline import outline
from retrieval.policy import Answer, Scope
from retrieval.ranking import DEFAULT as DEFAULT_RANKING
from retrieval.results import LinkTo, SearchResult
from retrieval.retriever import RetrievedDocument
from retrieval.sections import is_markdown
from retrieval.status import StatusReport
from retrieval.units import sections_of

log = logging.getLogger("agents_context")

NAME = "agents-context"
STATUS_URI = f"{SERVER_SCHEME}://status"
OUTLINE_URI = f"{SERVER_SCHEME}://outline"
ALIASES = {"q": "query", "text": "query", "limit": "k", "top_k": "k", "n": "k"}
"""Argument names models commonly use, accepted for the canonical ones."""
EMPTY_QUERY = "query is required: pass a non-empty 'query' string"
READ_ONLY = ToolAnnotations(read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False)

CONTEXT_SEARCH_DESCRIPTION = """\
Search this project's .AGENTS/ documentation (rules, security policy, architecture, glossary, \
per-service notes) and get the best-matching sections, each in a <context path="..." \
section="..." score="..."> block you can quote; the structured result adds a citation \
(path:lines (heading trail)) and a section URI for each hit.

Call it before guessing about a project rule, convention, term or design decision. Use a few \
specific words ("secrets policy", "deploy rollback"); put "exact phrases" in double quotes; a file \
name (security.md) returns that file's sections. If nothing matches you get the nearest headings \
and files instead: try the words the documentation would use. The pinned files (overview, \
conventions) are not searched here: call pinned_context for them.

Cost: k (default 3, 1-20) is the most sections returned; each is usually 50-500 words. \
max_tokens (default 4000) caps the whole answer; detail="paths" (where each hit is) or "snippets" \
(its best lines) costs far less than "sections". If hits were left out, the status line says \
next_offset=K: call again with offset=K and generation=<gen> for the next page. The last line is \
a status line [agents-context method=... hits=... gen=... fresh_as_of=...]."""

SEARCH_DOCS_DESCRIPTION = """\
Search all of this project's documentation in overlapping passages of about 500 words: every \
.AGENTS/ file (pinned ones included) and any documentation folders the server was started with \
(--docs). Each hit starts with "--- <path>#<chunk> (score=...) ---"; a footer says what the \
answer cost, e.g. [3 hits, ~9000 chars (~2250 tokens)].

Prefer context_search for project rules and conventions: its sections are smaller. Use \
search_docs for longer explanations and reference documentation. One passage is ~500 words, \
about 700 tokens: prefer k=3 or 5 (default 5, 1-10), or detail="snippets" / "paths", and \
synthesise rather than search again. root= and path_prefix= narrow the search; "quoted phrases" \
must match as written; offset= pages (see next_offset in the status line). A miss says \
"(no results)" and lists the nearest files. The last line is a status line [agents-context ...]."""

CONTEXT_FOR_PATH_DESCRIPTION = """\
Get the project rules that apply to one source file before you edit it: sections of rule files \
whose front matter globs match it (Cursor's globs/applies_to), AGENTS.md files in its folders, \
the package rules of a monorepo package that contains it, and sections whose headings or file \
names name its folders, most specific first. Each block says why it applies \
(applies="globs: src/api/**"). One call replaces several searches when you start work on a \
file; max_tokens (default 4000) caps the answer and detail="paths" lists them cheaply."""

READ_CONTEXT_DESCRIPTION = """\
Read a documentation file, one section of it, or a range of its lines: exactly the text on disk \
now. path is a display path from a search answer (.AGENTS/security.md), a URI \
(agents://security.md, or agents://security.md#secrets for one section) or a path inside \
.AGENTS; section is a heading, a heading trail ("Security > Secrets") or an anchor; start_line \
and end_line pick lines. Use it to read more around a search hit or a heading from the \
instructions' list. max_tokens (default 4000) caps the answer; a cut says where to continue \
(start_line=). An unknown path answers with the closest existing paths."""

PINNED_CONTEXT_DESCRIPTION = """\
Return the project's pinned .AGENTS/ files (overview and conventions: the rules that apply to \
every task) in full, then the list of searchable files and their section headings. Call it once \
at the start of a task unless the server instructions already contain the pinned text; it is \
always current, while the instructions are a start-up snapshot. Costs the size of the pinned \
files (at most 32 KB)."""


CONTEXT_STATUS_DESCRIPTION = """\
Check the index before relying on it (or when answers look stale or empty): whether search is \
enabled and healthy, each root's files, sections and windows, skipped files and why, the file \
watcher's mode and health, the last error, the index generation and how fresh it is. Cheap; no \
arguments. Every search answer's status line already carries gen= and fresh_as_of=."""


@dataclass(frozen=True, slots=True)
class Config:
    agents: list[Path]
    docs: list[Path] = field(default_factory=list)
    conventional: Path | None = None
    pins: list[str] | None = None
    max_file_bytes: int = DEFAULT_MAX_BYTES
    pinned_budget: int = briefing.PINNED_BUDGET_BYTES
    instructions_budget: int = briefing.INSTRUCTIONS_BUDGET_CHARS
    debounce_ms: int = 200
    poll_interval: float = 1.0
    poll: bool = False
    deadline_s: float = policy.DEADLINE_S


@dataclass(slots=True)
class LegacyClient:
    """A handshake-era connection: its session (to notify it) and the URIs it subscribed to."""

    session: ServerSession
    uris: set[str] = field(default_factory=set)


@dataclass(slots=True)
class AppState:
    """What one lifespan (one stdio process, one in-memory client) shares across its requests."""

    live: LiveIndex
    clients: weakref.WeakKeyDictionary[object, LegacyClient] = field(default_factory=weakref.WeakKeyDictionary)
    """Handshake-era clients by connection. A `ServerSession` is a per-request proxy that keeps
    working after its request; the connection object lives exactly as long as the client."""


class AgentsServer(MCPServer[AppState]):
    """MCPServer whose resource list and reads follow the live corpus, read-your-writes."""

    def __init__(self, live: LiveIndex, config: Config, **kwargs: Any) -> None:
        self.live = live
        self.config = config
        self.bus = InMemorySubscriptionBus()
        self.watch_status = WatchStatus()
        self.watched: dict[str, tuple[int, int] | None] = {}
        """Each root's folder (device, inode) when the watcher last (re)started on it."""
        self.lost: set[str] = set()
        """Roots whose folder the watcher reported deleted since then: its watch on them is gone."""
        self.started = time.time()
        super().__init__(subscriptions=self.bus, **kwargs)

    def catch_up(self) -> None:
        """Read-your-writes: bring the `.AGENTS` roots up to date by stat before answering. Docs
        roots rely on the watcher where it covers them; elsewhere each call asks for one bounded
        step of their patrol (a stat sweep spread over calls), made in the background."""
        for root in self.live.agents_roots:
            self.live.sweep(root)
        docs = [r for r in self.live.roots if r.kind is RootKind.DOCS]
        if docs:
            current = self.watcher_current()
            self.live.patrol_soon(r for r in docs if not (current and self.watches(r)))

    def watcher_current(self) -> bool:
        """The watcher runs and reported in lately (it reports at least once a poll interval, even
        when nothing changed): not dead, not hung, and not stuck applying a long batch (its queue
        is not drained then: calls ask for patrol steps, which stand aside while it applies)."""
        status, config = self.watch_status, self.config
        if not status.healthy or status.last_tick is None:
            return False
        overdue = 2 * config.poll_interval + config.debounce_ms / 1000 + 1.0
        return time.time() - status.last_tick < overdue

    def watches(self, root: Root) -> bool:
        """Whether the running watcher still watches this root's folder: not reported deleted since
        it started on it, and not another folder by now (an inode number can be reused at once,
        hence both)."""
        return root.label not in self.lost and folder_id(root) == self.watched.get(root.label)

    async def list_resources(self) -> list[Resource]:
        await anyio.to_thread.run_sync(self.catch_up)
        listed = await super().list_resources()
        with self.live.view() as view:
            files = sorted(
                (f for f in view.corpus.files.values() if f.root.kind is RootKind.AGENTS),
                key=lambda f: f.path,
            )
        for f in files:
            listed.append(
                Resource(
                    uri=f.uri,
                    name=f.path if f.root.scoped else f.rel,
                    title=f.title or next(iter(briefing.headings(f)), None),
                    mime_type=mime_type(f.rel),
                    size=f.size,
                    annotations=Annotations(priority=1.0 if f.pinned else 0.5),
                )
            )
        return listed

    async def read_resource(
        self, uri: AnyUrl | str, context: Context[AppState, Any] | None = None
    ) -> Iterable[ReadResourceContents] | InputRequiredResult:
        await anyio.to_thread.run_sync(self.catch_up)
        text = str(uri)
        if not text.startswith((f"{AGENTS_SCHEME}://", f"{DOCS_SCHEME}://")):
            return await super().read_resource(uri, context)
        if "#" in text:  # URI templates cannot match a fragment: one section, or a line range
            excerpt = await anyio.to_thread.run_sync(read_excerpt, self.live, text)
            return [ReadResourceContents(content=excerpt.text, mime_type=mime_type(excerpt.file.rel))]
        f = await anyio.to_thread.run_sync(read_file, self.live, text)
        return [ReadResourceContents(content=f.text, mime_type=mime_type(f.rel))]

    async def call_tool(
        self, name: str, arguments: dict[str, Any], context: Context[AppState, Any] | None = None
    ) -> CallToolResult | InputRequiredResult:
        """Accept the argument names models commonly use; refuse unknown ones by name (the SDK
        would silently ignore them), and `true`/`false` where a number is meant (pydantic would
        read them as 1 and 0). A number given as a string ("7") is accepted, as pydantic does."""
        tool = self._tool_manager.get_tool(name)
        if tool is not None:
            properties = tool.parameters.get("properties", {})
            fixed: dict[str, Any] = {}
            for key, value in arguments.items():
                canonical = key if key in properties else ALIASES.get(key, key)
                if canonical not in properties:
                    accepted = ", ".join(sorted(properties)) or "no arguments"
                    return error_result(f"unknown argument {key!r} for {name}; it takes: {accepted}")
                if canonical in fixed:
                    return error_result(f"{key!r} and {canonical!r} are the same argument for {name}: pass one")
                if isinstance(value, bool) and _integer(properties[canonical]):
                    return error_result(f"{canonical} must be a whole number, not {str(value).lower()}")
                fixed[canonical] = value
            arguments = fixed
        return await super().call_tool(name, arguments, context)

    def status(self) -> StatusReport:
        return status.report(self.live, self.watch_status, self.started)


def folder_id(root: Root) -> tuple[int, int] | None:
    """A root folder's (device, inode): another one means the folder was deleted and recreated."""
    try:
        st = root.path.stat()
    except OSError:
        return None
    return (st.st_dev, st.st_ino)


def _integer(schema: dict[str, Any]) -> bool:
    types = [schema.get("type")] + [option.get("type") for option in schema.get("anyOf", [])]
    return "integer" in types


def read_excerpt(live: LiveIndex, uri: str) -> reader.Excerpt:
    try:
        return reader.read(live.corpus, uri)
    except CorpusError as exc:
        raise ResourceNotFoundError(str(exc)) from None


def read_file(live: LiveIndex, uri: str) -> CorpusFile:
    try:
        return live.corpus.read_uri(uri)
    except CorpusError as exc:
        raise ResourceNotFoundError(str(exc)) from None


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


Query = Annotated[
    str,
    Field(description='A few specific words. "Quoted phrases" must match as written; a file name returns that file.'),
]
MaxTokens = Annotated[
    int,
    Field(
        description="Budget for the whole answer in tokens (characters / 4), 200-10000 (clamped).",
        json_schema_extra={"minimum": MIN_MAX_TOKENS, "maximum": MAX_MAX_TOKENS},
    ),
]
Detail = Annotated[
    Literal["paths", "snippets", "sections"],
    Field(description="paths: where each hit is (cheapest); snippets: its best lines; sections: its whole text."),
]
Offset = Annotated[int, Field(description="Skip this many hits (from next_offset in the last STATUS line).", ge=0)]
Generation = Annotated[
    int | None,
    Field(description="The gen= of the page you are continuing; the answer says if the index changed since."),
]
PathPrefix = Annotated[
    str | None, Field(description="Only files under this path, e.g. 'services/' or '.AGENTS/services/'.")
]


def create_server(live: LiveIndex, config: Config, watch_factory: WatchFactory = awatch) -> AgentsServer:
    has_docs = any(r.kind is RootKind.DOCS for r in live.roots)
    agents_roots = [r for r in live.roots if r.kind is RootKind.AGENTS]
    with live.view() as view:
        instructions = briefing.instructions(
            view.corpus, config.instructions_budget, has_docs, view.library.sections.n_docs
        )
    server = AgentsServer(
        live,
        config,
        name=NAME,
        title="agents-context",
        version=version(),
        instructions=instructions,
        lifespan=make_lifespan(live, config, watch_factory),
        middleware=[capture_legacy_session],
    )
    advertise_list_changed(server)
    add_subscriptions(server)

    @server.tool(
        name="context_search",
        title="Search project context",
        annotations=READ_ONLY,
        description=CONTEXT_SEARCH_DESCRIPTION,
    )
    def context_search(
        query: Query,
        k: Annotated[
            int,
            Field(
                description="Most sections to return, 1-20 (clamped).",
                json_schema_extra={"minimum": 1, "maximum": 20},
            ),
        ] = 3,
        max_tokens: MaxTokens = DEFAULT_MAX_TOKENS,
        detail: Detail = "sections",
        offset: Offset = 0,
        generation: Generation = None,
        path_prefix: PathPrefix = None,
        root: Annotated[
            str | None, Field(description="Only this .AGENTS root, by label (several roots: a monorepo).")
        ] = None,
    ) -> Annotated[CallToolResult, SearchResult]:
        if not query.strip():
            return error_result(EMPTY_QUERY)
        if root is not None and root not in {r.label for r in agents_roots}:
            return error_result(f"unknown root {root!r}; .AGENTS roots: {', '.join(r.label for r in agents_roots)}")
        server.catch_up()
        scope = Scope("sections", path_prefix, root)
        found, fresh = search(live, query, clamp(k, 1, 20), offset, scope, agents_roots, config.deadline_s)
        options = options_for(live, "sections", query, found, fresh, detail, max_tokens, offset, generation)
        return tool_result(render_context(query, found, options))

    @server.tool(
        name="search_docs",
        title="Search documentation passages",
        annotations=READ_ONLY,
        description=SEARCH_DOCS_DESCRIPTION,
    )
    def search_docs(
        query: Query,
        k: Annotated[
            int,
            Field(
                description="Most passages to return, 1-10 (clamped).",
                json_schema_extra={"minimum": 1, "maximum": 10},
            ),
        ] = 5,
        max_tokens: MaxTokens = DEFAULT_MAX_TOKENS,
        detail: Detail = "sections",
        offset: Offset = 0,
        generation: Generation = None,
        path_prefix: PathPrefix = None,
        root: Annotated[
            str | None, Field(description="Only this root, by label: '.AGENTS' or a docs root's name.")
        ] = None,
    ) -> Annotated[CallToolResult, SearchResult]:
        if not query.strip():
            return error_result(EMPTY_QUERY)
        if root is not None and root not in {r.label for r in live.roots}:
            return error_result(f"unknown root {root!r}; roots: {', '.join(r.label for r in live.roots)}")
        server.catch_up()
        scope = Scope("windows", path_prefix, root)
        found, fresh = search(live, query, clamp(k, 1, 10), offset, scope, live.roots, config.deadline_s)
        options = options_for(live, "windows", query, found, fresh, detail, max_tokens, offset, generation)
        return tool_result(render_docs(query, found, options))

    @server.tool(
        name="context_for_path",
        title="Rules for a source file",
        annotations=READ_ONLY,
        description=CONTEXT_FOR_PATH_DESCRIPTION,
    )
    def context_for_path(
        path: Annotated[
            str,
            Field(description="The source file you are about to edit, relative to the project: src/api/auth.py."),
        ],
        max_tokens: MaxTokens = DEFAULT_MAX_TOKENS,
        detail: Detail = "sections",
    ) -> Annotated[CallToolResult, SearchResult]:
        if not path.strip():
            return error_result("path is required: pass the source file's path, e.g. 'src/api/auth.py'")
        server.catch_up()
        with live.view() as view:
            items = applicable(view.corpus, sections_of, path)
            fresh = freshness(live, view, agents_roots)
        found = Answer([RetrievedDocument(a.unit, a.specificity) for a in items], "applies", None, len(items))
        options = Options(
            detail=detail,
            max_tokens=clamp(max_tokens, MIN_MAX_TOKENS, MAX_MAX_TOKENS),
            freshness=fresh,
            applies={a.unit.id: a.reason for a in items},
            miss=f"no context applies to: {path} (add globs: front matter to a rule, an AGENTS.md in "
            "its folder, or a heading that names its folder)",
            links=lambda doc: [LinkTo(text=x.text, path=x.path, uri=x.uri) for x in links(doc.unit, live.corpus)],
        )
        return tool_result(render_context(path, found, options))

    @server.tool(
        name="read_context",
        title="Read a file or section",
        annotations=READ_ONLY,
        description=READ_CONTEXT_DESCRIPTION,
        structured_output=False,
    )
    def read_context(
        path: Annotated[
            str,
            Field(
                description="A display path (.AGENTS/security.md), a URI (agents://security.md#secrets) "
                "or a path inside .AGENTS."
            ),
        ],
        section: Annotated[
            str | None, Field(description="A heading, a trail ('Security > Secrets') or an anchor.")
        ] = None,
        start_line: Annotated[int | None, Field(description="First line to return (1-based).", ge=1)] = None,
        end_line: Annotated[int | None, Field(description="Last line to return (inclusive).", ge=1)] = None,
        max_tokens: MaxTokens = DEFAULT_MAX_TOKENS,
    ) -> CallToolResult:
        server.catch_up()
        try:
            excerpt = reader.read(live.corpus, path, section, start_line, end_line)
        except CorpusError as exc:
            return error_result(str(exc))
        with live.view() as view:
            fields = freshness(live, view, live.roots).status()
        return CallToolResult(
            content=[
                TextContent(
                    type="text",
                    text=render_excerpt(excerpt, clamp(max_tokens, MIN_MAX_TOKENS, MAX_MAX_TOKENS), fields),
                )
            ]
        )

    def pinned_text() -> str:
        server.catch_up()
        with live.view() as view:
            fields = freshness(live, view, agents_roots).status()
            return briefing.pinned_context(view.corpus, config.pinned_budget, fields, view.library.sections.n_docs)

    @server.tool(
        name="pinned_context",
        title="Pinned project context",
        annotations=READ_ONLY,
        description=PINNED_CONTEXT_DESCRIPTION,
        structured_output=False,
    )
    def pinned_context_tool() -> str:
        return pinned_text()

    @server.prompt(name="pinned_context", title="Pinned project context")
    async def pinned_context_prompt() -> str:
        """The project's pinned .AGENTS/ files and the list of searchable sections."""
        return await anyio.to_thread.run_sync(pinned_text)

    @server.tool(
        name="context_status",
        title="Index status",
        annotations=READ_ONLY,
        description=CONTEXT_STATUS_DESCRIPTION,
    )
    def context_status() -> Annotated[CallToolResult, StatusReport]:
        server.catch_up()
        report = server.status()
        return CallToolResult(
            content=[TextContent(type="text", text=status.render(report))],
            structured_content=report.model_dump(mode="json"),
        )

    @server.resource(
        STATUS_URI,
        name="status",
        title="Index status",
        mime_type="application/json",
        description="The same report as the context_status tool, as JSON.",
    )
    def status_resource() -> str:
        return server.status().model_dump_json(indent=2)

    @server.resource(
        OUTLINE_URI,
        name="outline",
        title="Outline",
        mime_type="application/json",
        description="Every .AGENTS file with its sections: headings, anchors, line ranges, estimated tokens.",
    )
    def outline_resource() -> str:
        with live.view() as view:
            return outline(view.corpus).model_dump_json(indent=1)

    @server.resource(
        f"{AGENTS_SCHEME}://{{+path}}",
        name="agents-file",
        mime_type="text/markdown",
        description="A file of the .AGENTS folder; resources/list names every one.",
    )
    def agents_file(path: str) -> str:
        return read_file(live, f"{AGENTS_SCHEME}://{path}").text

    @server.resource(
        f"{DOCS_SCHEME}://{{label}}/{{+path}}",
        name="docs-file",
        mime_type="text/markdown",
        description="A file of a --docs root, by root label and relative path (not listed).",
    )
    def docs_file(label: str, path: str) -> str:
        return read_file(live, f"{DOCS_SCHEME}://{label}/{path}").text

    return server


def advertise_list_changed(server: MCPServer[Any]) -> None:
    """Advertise `resources.listChanged` to handshake-era clients on every transport.

    `MCPServer.run()` and the in-memory client build their initialize result with default
    NotificationOptions, which say `listChanged: false`; the low-level server has no setting
    for it, so we wrap its options factory (an SDK internal: see README, "Dependencies").
    """
    lowlevel = server._lowlevel_server
    build = lowlevel.create_initialization_options

    def with_list_changed(notification_options: NotificationOptions | None = None, *args: Any, **kwargs: Any) -> Any:
        options = notification_options or NotificationOptions(resources_changed=True)
        return build(options, *args, **kwargs)

    lowlevel.create_initialization_options = with_list_changed  # type: ignore[method-assign]


def add_subscriptions(server: AgentsServer) -> None:
    """`resources/subscribe` and `unsubscribe` for handshake-era clients (MCPServer serves only the
    2026-07-28 `subscriptions/listen`); the capability follows from the handlers being there."""

    def client_of(ctx: Any) -> LegacyClient:
        state: AppState = ctx.lifespan_context
        key = ctx.session._connection
        if key not in state.clients:
            state.clients[key] = LegacyClient(ctx.session)
        return state.clients[key]

    async def subscribe(ctx: Any, params: types.SubscribeRequestParams) -> types.EmptyResult:
        uri = str(params.uri)
        try:
            parse_file_uri(uri, server.live.roots)
        except CorpusError as exc:
            raise MCPError(code=types.INVALID_PARAMS, message=str(exc)) from None
        client_of(ctx).uris.add(uri)
        return types.EmptyResult()

    async def unsubscribe(ctx: Any, params: types.UnsubscribeRequestParams) -> types.EmptyResult:
        client_of(ctx).uris.discard(str(params.uri))
        return types.EmptyResult()

    lowlevel = server._lowlevel_server
    lowlevel.add_request_handler("resources/subscribe", types.SubscribeRequestParams, subscribe)
    lowlevel.add_request_handler("resources/unsubscribe", types.UnsubscribeRequestParams, unsubscribe)


async def capture_legacy_session(ctx: Any, call_next: Any) -> Any:
    """Remember each handshake-era connection once, so change notifications can reach it."""
    result = await call_next(ctx)
    if ctx.method == "notifications/initialized" and ctx.protocol_version not in MODERN_PROTOCOL_VERSIONS:
        state = ctx.lifespan_context
        if isinstance(state, AppState) and ctx.session._connection not in state.clients:
            state.clients[ctx.session._connection] = LegacyClient(ctx.session)
    return result


def make_lifespan(live: LiveIndex, config: Config, watch_factory: WatchFactory) -> Any:
    @asynccontextmanager
    async def lifespan(mcp: MCPServer[AppState]) -> AsyncIterator[AppState]:
        assert isinstance(mcp, AgentsServer)
        server = mcp
        state = AppState(live)
        stop = anyio.Event()
        options = WatchOptions(
            debounce_ms=config.debounce_ms, poll_interval_s=config.poll_interval, force_polling=config.poll
        )
        send, receive = anyio.create_memory_object_stream[tuple[Root, Change]](max_buffer_size=10_000)
        loop = asyncio.get_running_loop()

        def on_update(root: Root, change: Change) -> None:  # any thread: hand over to the loop
            with contextlib.suppress(RuntimeError):  # the loop is closing
                loop.call_soon_threadsafe(_offer, send, (root, change))

        async def on_change(changes: Changes | None) -> None:
            if changes is None:  # a full rescan: the watcher (re)starts on the roots as they are now
                server.watched, server.lost = {r.label: folder_id(r) for r in live.roots}, set()
            else:  # a watch follows its folder: once that is deleted, a new one there goes unseen
                server.lost.update(r.label for r in live.roots if (FileChange.deleted, str(r.path)) in changes)
            try:
                await anyio.to_thread.run_sync(live.route, changes)
            finally:
                server.watch_status.last_tick = time.time()  # reported and applied: current again

        live.listeners.append(on_update)
        async with anyio.create_task_group() as tg:
            tg.start_soon(notifier, server, state, receive)
            tg.start_soon(supervise, live.roots, on_change, stop, options, server.watch_status, watch_factory)
            try:
                yield state
            finally:
                live.listeners.remove(on_update)
                send.close()
                stop.set()
                tg.cancel_scope.cancel()

    return lifespan


def _offer(send: Any, item: tuple[Root, Change]) -> None:
    with contextlib.suppress(anyio.WouldBlock, anyio.ClosedResourceError, anyio.BrokenResourceError):
        send.send_nowait(item)


async def notifier(server: AgentsServer, state: AppState, receive: Any) -> None:
    """Send each update's notifications once per connection, to both protocol eras."""
    async with receive:
        async for root, change in receive:
            await notify(server, state, root, change)


async def notify(server: AgentsServer, state: AppState, root: Root, change: Change) -> None:
    clients = list(state.clients.values())
    if root.kind is RootKind.AGENTS and (change.added or change.removed):
        await server.bus.publish(ResourcesListChanged())
        for client in clients:
            await client.session.send_resource_list_changed()
    for path in sorted(change.added | change.changed | change.removed):
        uri = file_uri(root, path.split("/", 1)[1])
        await server.bus.publish(ResourceUpdated(uri=uri))
        for client in clients:
            if uri in client.uris:
                await client.session.send_resource_updated(uri)


# --- start-up -------------------------------------------------------------------------------


def version() -> str:
    try:
        return metadata.version("agents-context")
    except metadata.PackageNotFoundError:
        return "0+unknown"


SWITCH_INTERVAL_S = 0.0005
"""The interpreter's thread switch interval while serving (see `main`)."""

COMMANDS = ("serve", "search", "read", "outline", "status", "eval", "doctor", "cache")


def _corpus_flags() -> argparse.ArgumentParser:
    """The flags every command shares: which corpus, read how."""
    flags = argparse.ArgumentParser(add_help=False)
    group = flags.add_argument_group("corpus")
    group.add_argument(
        "--root",
        metavar="DIR",
        action="append",
        help="a .AGENTS folder; repeat it for a monorepo with one per package (default: "
        "$AGENTS_CONTEXT_ROOT, else ./.AGENTS or ./.agents)",
    )
    group.add_argument(
        "--conventional",
        metavar="DIR",
        nargs="?",
        const=True,
        default=None,
        help="also serve the agent files the project already has: AGENTS.md (root and nested), "
        "CLAUDE.md, .cursor/rules/*.mdc, .github/copilot-instructions.md, .github/instructions/*.md "
        "(DIR: the project folder; default: the parent of the first --root, else the current "
        "folder). On by itself when there is no .AGENTS folder; the root AGENTS.md is pinned",
    )
    group.add_argument(
        "--docs",
        metavar="DIR",
        action="append",
        nargs="?",
        const="",
        default=[],
        help="a documentation folder searched by search_docs only (repeatable); for 'search', "
        "--docs alone means search passages as search_docs does",
    )
    group.add_argument(
        "--pin",
        metavar="REL",
        action="append",
        help="pin this path of the .AGENTS folder instead of overview.md and "
        "conventions.md (repeatable; --pin '' pins nothing)",
    )
    group.add_argument(
        "--max-file-bytes",
        type=int,
        default=DEFAULT_MAX_BYTES,
        metavar="N",
        help="skip larger files (default: 1 MiB)",
    )
    group.add_argument(
        "--score-floor",
        type=float,
        default=DEFAULT_RANKING.score_floor,
        metavar="F",
        help="drop search hits scoring below F times the best hit's score, 0 to 1 "
        f"(default: {DEFAULT_RANKING.score_floor})",
    )
    group.add_argument(
        "--feedback",
        action="store_true",
        help="expand each query with the words of its best hits (RM3 pseudo-relevance feedback): "
        "better on abstract-like collections (Cranfield nDCG@10 0.404 -> 0.434), worse on markdown "
        "documentation (section hit@3 0.80 -> 0.74), hence off by default",
    )
    group.add_argument(
        "--cache-dir",
        metavar="DIR",
        type=Path,
        help="where the persistent index lives (default: $AGENTS_CONTEXT_CACHE_DIR, else the user "
        f"cache folder, here {cache.default_dir()}); never inside a corpus root",
    )
    group.add_argument(
        "--no-cache", action="store_true", help="index from the files every time; read and write no cache"
    )
    _log_flags(group, "default: INFO for serve, WARNING for the other commands")
    return flags


def _log_flags(group: argparse._ActionsContainer, level_help: str) -> None:
    group.add_argument(
        "--log-level", default=None, choices=["DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"], help=level_help
    )
    group.add_argument("--log-file", metavar="PATH", help="also write the log to this file")


def _budget_flags() -> argparse.ArgumentParser:
    flags = argparse.ArgumentParser(add_help=False)
    flags.add_argument(
        "--pinned-budget",
        type=int,
        default=briefing.PINNED_BUDGET_BYTES,
        metavar="BYTES",
        help="most bytes of pinned text pinned_context returns (default: 32768)",
    )
    flags.add_argument(
        "--instructions-budget",
        type=int,
        default=briefing.INSTRUCTIONS_BUDGET_CHARS,
        metavar="CHARS",
        help="most characters of server instructions (default: 2048, Claude Code's limit)",
    )
    return flags


def _output_flags() -> argparse.ArgumentParser:
    flags = argparse.ArgumentParser(add_help=False)
    flags.add_argument("--json", action="store_true", help="print the result as JSON (schema: --json-schema)")
    flags.add_argument("--json-schema", action="store_true", help="print the JSON Schema of --json and exit")
    return flags


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="agents-context",
        description="An MCP server for a project's .AGENTS/ folder (pinned context, BM25 section "
        "search, resources, a live index), and a command line to see what agents see. Without a "
        "command, or with 'serve', it runs the server.",
        epilog="Run 'agents-context COMMAND --help' for a command's flags.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {version()}")
    commands = parser.add_subparsers(
        dest="command", metavar="COMMAND", help="serve (default), search, read, outline, status, eval, doctor or cache"
    )
    corpus, budgets, output = _corpus_flags(), _budget_flags(), _output_flags()
    serve = commands.add_parser("serve", parents=[corpus, budgets], help="run the MCP server (the default)")
    serve.add_argument(
        "--debounce-ms",
        type=int,
        default=200,
        metavar="MS",
        help="wait this long for a burst of file changes to settle (default: 200)",
    )
    serve.add_argument(
        "--deadline-ms",
        type=int,
        default=int(policy.DEADLINE_S * 1000),
        metavar="MS",
        help="a search still running after this long returns its best results so far, marked partial=1 (default: 5000)",
    )
    serve.add_argument(
        "--poll",
        action="store_true",
        help="watch by polling instead of OS events (network drives, containers); the server "
        "also falls back to polling by itself when OS events fail",
    )
    serve.add_argument(
        "--transport",
        choices=["stdio", "http"],
        default="stdio",
        help="stdio (default; what desktop clients launch) or http (streamable HTTP, for clients "
        "that prefer it and for one server shared by several clients)",
    )
    serve.add_argument(
        "--host",
        default="127.0.0.1",
        help="with --transport http: the address to listen on (default: 127.0.0.1)",
    )
    serve.add_argument("--port", type=int, default=8000, help="with --transport http: the port (default: 8000)")

    search_cmd = commands.add_parser(
        "search", parents=[corpus, output], help="search as context_search does (or search_docs, with --docs)"
    )
    search_cmd.add_argument("query", help="what to search for")
    search_cmd.add_argument("-k", type=int, default=None, help="most hits (default: 3; 5 with --docs)")
    search_cmd.add_argument(
        "--detail", choices=["paths", "snippets", "sections"], default="sections", help="what each hit shows"
    )
    search_cmd.add_argument("--max-tokens", type=int, default=4000, help="budget for the answer (default: 4000)")
    search_cmd.add_argument("--path-prefix", help="only files under this path")
    search_cmd.add_argument("--in", dest="in_root", metavar="LABEL", help="only this root, by label")
    search_cmd.add_argument("--offset", type=int, default=0, help="skip this many hits")

    read_cmd = commands.add_parser(
        "read", parents=[corpus, output], help="read a file, a section or lines, as read_context does"
    )
    read_cmd.add_argument(
        "path", metavar="PATH[#section]", help="a display path, URI or path in .AGENTS; #anchor or #L1-L9"
    )
    read_cmd.add_argument("--start-line", type=int, help="first line")
    read_cmd.add_argument("--end-line", type=int, help="last line")
    read_cmd.add_argument("--max-tokens", type=int, default=4000, help="budget for the answer (default: 4000)")

    commands.add_parser("outline", parents=[corpus, output], help="every .AGENTS file with its sections")
    commands.add_parser("status", parents=[corpus, output], help="what the index holds and what was skipped")
    eval_cmd = commands.add_parser(
        "eval", parents=[corpus, output], help="score context_search on questions with known answers"
    )
    eval_cmd.add_argument("questions", type=Path, metavar="QUESTIONS.jsonl", help="one JSON question a line")
    eval_cmd.add_argument("-k", type=int, default=3, help="a hit must be in the top k (default: 3)")
    cache_cmd = commands.add_parser(
        "cache", parents=[output], help="show or clear the persistent index (the cache folder)"
    )
    cache_cmd.add_argument(
        "action", nargs="?", choices=["show", "clear"], default="show", help="show (default) or clear"
    )
    cache_cmd.add_argument("--cache-dir", metavar="DIR", type=Path, help="the cache folder (default: as for serve)")
    _log_flags(cache_cmd, "default: WARNING")
    commands.add_parser(
        "doctor", parents=[corpus, budgets, output], help="lint the corpus; exit 1 on errors (use it in CI)"
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
    corpus = live.corpus
    for f in briefing.pinned(corpus):
        log.info("# pinned %s (%dB)", f.path, f.size)
    files = briefing.searchable(corpus)
    log.info("# searchable %d sections across %d files", live.library.sections.n_docs, len(files))
    for root in live.roots:
        if root.kind is RootKind.DOCS:
            n_files = len(corpus.in_root(root))
            building = live.building.get(root.label)
            if building is None:
                log.info("# docs %s (%s): %d files", root.label, root.path, n_files)
            elif building.phase == "checking":
                log.info(
                    "# docs %s (%s): %d files from the cache, checked in the background", root.label, root.path, n_files
                )
            else:
                log.info(
                    "# docs %s (%s): indexing in the background; answers are partial until done", root.label, root.path
                )
    for s in corpus.skipped:
        log.info("# skipped %s/%s: %s", s.root.label, s.rel, s.reason)


def load_config(args: argparse.Namespace, cwd: Path | None = None) -> tuple[Config, list[Root]]:
    """The roots: every `--root` (else `$AGENTS_CONTEXT_ROOT`, `./.AGENTS`, `./.agents`), plus the
    conventional files of the project folder with `--conventional`, or when there is no `.AGENTS`."""
    cwd = cwd or Path.cwd()
    agents = find_agents_roots(args.root or [], cwd=cwd)
    conventional: Path | None = None
    if args.conventional:
        conventional = (
            Path(args.conventional) if isinstance(args.conventional, str) else (agents[0].parent if agents else cwd)
        )
    elif not agents:
        if not has_conventional_files(cwd):
            raise RootNotFound(
                f"no .AGENTS folder and no AGENTS.md, CLAUDE.md, .cursor/rules or "
                f".github/copilot-instructions.md in {cwd}: create .AGENTS/, run from the project "
                "folder, or pass --root DIR"
            )
        conventional = cwd
    config = Config(
        agents=agents,
        conventional=conventional,
        docs=[Path(d) for d in args.docs if d],
        pins=args.pin,
        max_file_bytes=args.max_file_bytes,
        pinned_budget=getattr(args, "pinned_budget", briefing.PINNED_BUDGET_BYTES),
        instructions_budget=getattr(args, "instructions_budget", briefing.INSTRUCTIONS_BUDGET_CHARS),
        debounce_ms=getattr(args, "debounce_ms", 200),
        poll=getattr(args, "poll", False),
        deadline_s=getattr(args, "deadline_ms", policy.DEADLINE_S * 1000) / 1000,
    )
    return config, make_roots(agents, config.docs, conventional)


def has_conventional_files(folder: Path) -> bool:
    candidates = (
        "AGENTS.md",
        "CLAUDE.md",
        ".cursor/rules",
        ".github/copilot-instructions.md",
        ".github/instructions",
    )
    return any((folder / c).exists() for c in candidates)


def main(argv: Sequence[str] | None = None) -> None:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv in (["-h"], ["--help"]):  # the commands, then every flag of the default one
        parser = build_parser()
        serve = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction)).choices["serve"]
        print(parser.format_help() + "\n" + serve.format_help())  # noqa: T201 - the help text
        raise SystemExit(0)
    if not argv or (argv[0] not in COMMANDS and argv[0] != "--version"):
        argv = ["serve", *argv]
    args = build_parser().parse_args(argv)
    if args.command != "serve":
        raise SystemExit(run_command(args))
    configure_logging(args.log_level or "INFO", args.log_file)
    # Searches are CPU-bound, sweeps and reads wait on the disk: with the default 5 ms switch
    # interval a sweep's thread waits that long for the interpreter after each stat while a search
    # runs, and a 38k-file rescan took 40x its time under back-to-back calls. 0.5 ms bounds that.
    sys.setswitchinterval(SWITCH_INTERVAL_S)
    live, config = open_index(args, background=True)
    announce(live)
    server = create_server(live, config)
    try:
        if args.transport == "http":
            anyio.run(run_http, server, args.host, args.port)
        else:
            log.info("# waiting for an MCP client on stdin")
            anyio.run(server.run_stdio_async)
    finally:
        live.close()  # the cache entries of roots that changed since start-up


def open_index(args: argparse.Namespace, background: bool = False) -> tuple[LiveIndex, Config]:
    """The corpus the flags name, indexed (`--docs` roots in a background thread with
    `background`); exit status 2 with the reason if it cannot be."""
    try:
        config, roots = load_config(args)
    except CorpusError as exc:
        log.error("%s", exc)
        raise SystemExit(2) from None
    if not 0.0 <= args.score_floor <= 1.0:
        log.error("--score-floor must be between 0 and 1, not %s", args.score_floor)
        raise SystemExit(2)
    ranking = DEFAULT_RANKING.but(score_floor=args.score_floor, feedback=args.feedback)
    pins = PinSet(config.pins) if config.pins is not None else None
    index_cache = None
    if not args.no_cache:
        directory = (args.cache_dir or cache.default_dir()).expanduser().resolve()
        inside = next((r for r in roots if directory.is_relative_to(r.path)), None)
        if inside is not None:
            log.error(
                "the cache folder %s is inside the corpus root %s, and the server never writes to "
                "the corpus: pass --cache-dir elsewhere, or --no-cache",
                directory,
                inside.path,
            )
            raise SystemExit(2)
        index_cache = cache.IndexCache(directory, ranking.fingerprint)
    live = LiveIndex(
        roots,
        pins,
        config.max_file_bytes,
        ranking=ranking,
        progress=progress,
        cache=index_cache,
        background=background,
    )
    return live, config


def progress(message: str) -> None:
    logging.getLogger("agents_context.progress").info("# %s", message)


def run_command(args: argparse.Namespace) -> int:
    """A command for people: the same functions the tools use, readable on a terminal, plain when
    piped, JSON with --json."""
    try:
        return _run_command(args)
    except BrokenPipeError:  # `agents-context outline | head`: the reader left, which is fine
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0


def _run_command(args: argparse.Namespace) -> int:
    if args.json_schema:
        print(json.dumps(commands.SCHEMAS[args.command].model_json_schema(), indent=2))  # noqa: T201 - a CLI command
        return 0
    configure_logging(args.log_level or "WARNING", args.log_file)
    try:
        if args.command == "cache":
            output = commands.run_cache(args.cache_dir, args.action)
        else:
            logging.getLogger("agents_context.progress").setLevel(logging.INFO)  # progress on a large tree
            live, _ = open_index(args)
            output = _dispatch(args, live)
    except (CorpusError, evaluate.QuestionError, OSError) as exc:
        log.error("%s", exc)
        return 2
    if args.json:
        print(output.model.model_dump_json(indent=2))  # noqa: T201 - a CLI command
    elif sys.stdout.isatty() and output.show is not None:
        output.show(Console())
    else:
        print(output.text)  # noqa: T201 - a CLI command
    return output.code


def _dispatch(args: argparse.Namespace, live: LiveIndex) -> commands.Output:
    if args.command == "search":
        return commands.run_search(
            live,
            args.query,
            bool(args.docs),
            args.k,
            args.detail,
            args.max_tokens,
            args.path_prefix,
            args.in_root,
            args.offset,
        )
    if args.command == "read":
        return commands.run_read(live, args.path, args.start_line, args.end_line, args.max_tokens)
    if args.command == "outline":
        return commands.run_outline(live)
    if args.command == "status":
        return commands.run_status(live)
    if args.command == "eval":
        return commands.run_eval(live, args.questions, args.k)
    return commands.run_doctor(live, args.pinned_budget, args.instructions_budget)


async def run_http(server: AgentsServer, host: str, port: int) -> None:
    """Streamable HTTP at http://HOST:PORT/mcp. On localhost the SDK turns on DNS-rebinding
    protection (Host and Origin must be local); any other host is reachable from the network."""
    import uvicorn

    if host not in ("127.0.0.1", "localhost", "::1"):
        log.warning("# listening on %s: reachable from the network, without DNS-rebinding protection", host)
    app = server.streamable_http_app(host=host)
    config = uvicorn.Config(app, host=host, port=port, log_config=None, log_level="warning")
    log.info("# serving MCP over streamable HTTP at http://%s:%d/mcp", host, port)
    await uvicorn.Server(config).serve()


if __name__ == "__main__":
    main()
