"""agents-context: an MCP server for a project's `.AGENTS/` folder and agent files. Wiring only:
the six tools, four resources (`protocol.resources`) and one prompt, each tool's request answered
by `live.answers`; the lifespan that keeps the index live while a client is connected; `main`.
`docs/architecture.md` is the map."""

from __future__ import annotations

import logging
import sys
import time
from collections.abc import AsyncIterator, Callable, Iterable, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from functools import partial
from typing import Annotated, Any

import anyio
from mcp.server.lowlevel.helper_types import ReadResourceContents
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.subscriptions import InMemorySubscriptionBus
from mcp.types import CallToolResult, InputRequiredResult, Resource, ToolAnnotations
from pydantic import AnyUrl, ValidationError
from watchfiles import awatch

from cli.flags import serving, version
from cli.settings import Settings, announce, open_index, prepare_process
from clients.client import Client, Loaded
from clients.known import loaded_by
from corpus.catalog import Corpus
from corpus.errors import CorpusError
from live import answers, status
from live.index import LiveIndex
from live.status import StatusReport
from live.watch import Watcher, WatchFactory
from protocol import descriptions as d
from protocol import resources, schemas
from protocol.arguments import Refused, canonical, refusal
from protocol.clients import name_of, resolve, shaping
from protocol.frames import serve_stdio
from protocol.http import serve_http
from protocol.legacy import Clients, add_subscriptions, advertise_list_changed, capture
from protocol.notify import notifying
from protocol.results import error_result, tool_result
from retrieval.render.schema import SearchResult
from retrieval.search.request import (
    DEFAULT_DETAIL,
    DEFAULT_MAX_TOKENS,
    SECTIONS,
    WINDOWS,
    PathRequest,
    PinnedRequest,
    ReadRequest,
    SearchRequest,
)
from shared.sessions import serve_sockets

log = logging.getLogger("agents_context")

NAME = "agents-context"
READ_ONLY = ToolAnnotations(read_only_hint=True, open_world_hint=False)
"""Read-only, and reaching nothing but the project's files (the destructive and idempotent hints
mean something only for a tool that writes, so they are not sent)."""
TEXT_ONLY: dict[str, Any] = {"annotations": READ_ONLY, "structured_output": False}
"""A read-only tool whose result is text alone (no output schema)."""


@dataclass(slots=True)
class App:
    """Everything one server holds, which every tool, resource and the lifespan reach: its settings,
    the live index, the watcher, the clients to notify (docs/architecture.md, "What `App` does not hold")."""

    settings: Settings
    live: LiveIndex
    watcher: Watcher
    bus: InMemorySubscriptionBus = field(default_factory=InMemorySubscriptionBus)
    clients: Clients = field(default_factory=Clients)
    started: float = field(default_factory=time.time)

    def catch_up(self) -> None:
        """Read-your-writes before every answer (see `LiveIndex.catch_up`)."""
        self.live.catch_up(self.watcher.covers)

    def status(self) -> StatusReport:
        return status.report(self.live, self.watcher, self.started)

    def client_of(self, session: object) -> Client | None:
        """The client a connection is treated as (`--client`, else the name it gave)."""
        return resolve(self.settings.client, name_of(session))

    def loads(self, client: Client | None) -> Callable[[Corpus], Loaded]:
        """What `client` puts into the model's context itself, in a corpus (`clients.known.loaded_by`)."""
        return partial(loaded_by, client, hooked=self.settings.hooked)

    def instructions(self, client: Client | None) -> str:
        """The server instructions for `client`, from the index as it is now."""
        name = client.name if client else ""
        return answers.instructions(self.live, self.settings.instructions_budget, name, self.loads(client))


class AgentsServer(MCPServer[App]):
    """MCPServer whose resource list and reads follow the live corpus, read-your-writes, and whose
    tools take the argument names models commonly use."""

    def __init__(self, app: App, **kwargs: Any) -> None:
        self.app = app
        super().__init__(subscriptions=app.bus, **kwargs)

    async def list_resources(self) -> list[Resource]:
        await anyio.to_thread.run_sync(self.app.catch_up)
        return [*(await super().list_resources()), *resources.listed(self.app.live)]

    async def read_resource(
        self, uri: AnyUrl | str, context: Context[App, Any] | None = None
    ) -> Iterable[ReadResourceContents] | InputRequiredResult:
        await anyio.to_thread.run_sync(self.app.catch_up)
        if not str(uri).startswith(resources.FILE_SCHEMES):
            return await super().read_resource(uri, context)
        return [await anyio.to_thread.run_sync(resources.contents, self.app.live, str(uri))]

    async def call_tool(
        self, name: str, arguments: dict[str, Any], context: Context[App, Any] | None = None
    ) -> CallToolResult | InputRequiredResult:
        tool = self._tool_manager.get_tool(name)  # an SDK internal: docs/development.md, "Dependencies"
        try:
            if tool is not None:
                arguments = canonical(name, tool.parameters.get("properties", {}), arguments)
            return await super().call_tool(name, arguments, context)
        except Refused as exc:
            return error_result(str(exc))
        except ToolError as exc:  # what the arguments' validation refused: one sentence, not pydantic's text
            if isinstance(exc.__cause__, ValidationError):
                return error_result(refusal(exc.__cause__, arguments))
            raise


def create_server(live: LiveIndex, settings: Settings, watch_factory: WatchFactory = awatch) -> AgentsServer:
    """The server over `live`: its instructions are computed now, from the index as it is."""
    app = App(settings, live, Watcher(live, settings.watching, watch_factory))
    server = AgentsServer(
        app,
        name=NAME,
        title="agents-context",
        version=version(),
        instructions=app.instructions(None),  # replaced per client when it connects (`shaping`)
        lifespan=_lifespan(app),
        middleware=[capture(app.clients), shaping(settings.client, app.instructions)],
    )
    advertise_list_changed(server)
    add_subscriptions(server, app.clients, live.roots)
    _tools(server, app)
    schemas.lean_schemas(server)
    resources.add_resources(server, live, app.status)
    return server


def _answer(app: App, request: answers.Request) -> CallToolResult:
    """A tool's request answered by `live.answers`, read-your-writes; a refusal, or a name that
    reads nothing, as an error the model reads."""
    if (why := answers.refusal(app.live, request)) is not None:
        return error_result(why)
    app.catch_up()
    try:
        out = answers.respond(app.live, request)
    except CorpusError as exc:
        return error_result(str(exc))
    return tool_result(out.text, out.result if isinstance(out.result, SearchResult) else None)


def _tools(server: AgentsServer, app: App) -> None:
    live = app.live
    with live.view() as view:  # named from what is served at start-up (docs roots still indexing: no size yet)
        texts = d.describe(view.corpus, answers.indexing(live), app.settings.pinned_budget)
    deadline, pinned_budget = app.settings.deadline_s, app.settings.pinned_budget

    @server.tool(title="Search project context", annotations=READ_ONLY, description=texts.context_search)
    def context_search(
        query: d.Query,
        k: d.SectionsK = SECTIONS.default_k,
        max_tokens: d.MaxTokens = DEFAULT_MAX_TOKENS,
        detail: d.Detail = DEFAULT_DETAIL,
        offset: d.Offset = 0,
        generation: d.Generation = None,
        path_prefix: d.PathPrefix = None,
        root: d.AgentsRoot = None,
        explain: d.Explain = False,
        queries: d.Queries = [],  # noqa: B006 - read, never changed
    ) -> Annotated[CallToolResult, SearchResult]:
        return _answer(app, SearchRequest(
            query=query, kind=SECTIONS, k=k, offset=offset, path_prefix=path_prefix, root=root, detail=detail,
            max_tokens=max_tokens, generation=generation, explain=explain, variants=tuple(queries), deadline_s=deadline,
        ))  # fmt: skip

    @server.tool(title="Search documentation passages", annotations=READ_ONLY, description=texts.search_docs)
    def search_docs(
        query: d.Query,
        k: d.WindowsK = WINDOWS.default_k,
        max_tokens: d.MaxTokens = DEFAULT_MAX_TOKENS,
        detail: d.Detail = DEFAULT_DETAIL,
        offset: d.Offset = 0,
        generation: d.Generation = None,
        path_prefix: d.PathPrefix = None,
        root: d.AnyRoot = None,
        explain: d.Explain = False,
        queries: d.Queries = [],  # noqa: B006 - read, never changed
    ) -> Annotated[CallToolResult, SearchResult]:
        return _answer(app, SearchRequest(
            query=query, kind=WINDOWS, k=k, offset=offset, path_prefix=path_prefix, root=root, detail=detail,
            max_tokens=max_tokens, generation=generation, explain=explain, variants=tuple(queries), deadline_s=deadline,
        ))  # fmt: skip

    @server.tool(title="Rules for a source file", annotations=READ_ONLY, description=texts.context_for_path)
    def context_for_path(
        path: d.SourcePath, max_tokens: d.MaxTokens = DEFAULT_MAX_TOKENS, detail: d.Detail = DEFAULT_DETAIL
    ) -> Annotated[CallToolResult, SearchResult]:
        return _answer(app, PathRequest(path=path, detail=detail, max_tokens=max_tokens))

    @server.tool(title="Read a file or section", description=texts.read_context, **TEXT_ONLY)
    def read_context(
        path: d.ReadPath,
        section: d.Section = None,
        start_line: d.StartLine = None,
        end_line: d.EndLine = None,
        max_tokens: d.MaxTokens = DEFAULT_MAX_TOKENS,
    ) -> CallToolResult:
        asked = ReadRequest(name=path, section=section, start=start_line, end=end_line, max_tokens=max_tokens)
        return _answer(app, asked)

    def pinned(client: Client | None) -> str:
        app.catch_up()
        name = client.name if client else ""
        return answers.respond(live, PinnedRequest(budget=pinned_budget, client=name, loaded=app.loads(client))).text

    pinned_title = "Pinned project context"

    @server.tool(name="pinned_context", title=pinned_title, description=texts.pinned_context, **TEXT_ONLY)
    def pinned_context_tool(ctx: Context) -> str:
        return pinned(app.client_of(ctx.session))

    @server.prompt(name="pinned_context", title=pinned_title)
    async def pinned_context_prompt(ctx: Context) -> str:
        """The project's pinned files in full, then the searchable files and their section headings."""
        return await anyio.to_thread.run_sync(pinned, app.client_of(ctx.session))

    @server.tool(title="Index status", annotations=READ_ONLY, description=texts.context_status)
    def context_status() -> Annotated[CallToolResult, StatusReport]:
        app.catch_up()
        report = app.status()
        return tool_result(status.render(report), report)


def _lifespan(app: App) -> Callable[[MCPServer[App]], Any]:
    @asynccontextmanager
    async def lifespan(_: MCPServer[App]) -> AsyncIterator[App]:
        """While a client is connected (stdio: the process; HTTP: the server): the watcher runs,
        and every index update is announced to the clients."""
        stop = anyio.Event()
        async with notifying(app.live.listeners, app.bus, app.clients), anyio.create_task_group() as tg:
            tg.start_soon(app.watcher.run, stop)
            try:
                yield app
            finally:
                stop.set()
                tg.cancel_scope.cancel()

    return lifespan


def serve(settings: Settings, prepare: Callable[[AgentsServer], None] | None = None, background: bool = True) -> None:
    """Index the roots (`--docs` roots in the background), say what is served on stderr, and serve
    on the settings' transport until the client leaves (or, started by `agents-context-shared`,
    its sessions until none is left); `prepare` may add to the server first."""
    prepare_process(settings)
    live = open_index(settings, background=background)
    announce(live)
    server = create_server(live, settings)
    if prepare is not None:
        prepare(server)
    try:
        if settings.transport == "http":
            anyio.run(serve_http, server, settings.host, settings.port)
        elif settings.relayed is not None:  # started by agents-context-shared
            anyio.run(serve_sockets, server, settings.relayed)
        else:
            log.info("# waiting for an MCP client on stdin")
            anyio.run(serve_stdio, server)  # the SDK's stdio, with every line answered
    finally:
        live.close()  # the cache entries of roots that changed since start-up


def main(argv: Sequence[str] | None = None) -> None:
    """`agents-context`: serve (the default command), or run another command of `cli`."""
    serve(serving(list(sys.argv[1:] if argv is None else argv)))


if __name__ == "__main__":
    main()
