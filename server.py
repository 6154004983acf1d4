"""agents-context: an MCP server for a project's `.AGENTS/` folder and agent files. Wiring only.

The MCPServer with its six tools, four resources and one prompt, the lifespan that keeps the
index live while a client is connected, and `main`, the command line's entry point. What the tools
answer comes from `live/` (the index kept equal to the disk) and `retrieval/` (search and
rendering); the MCP edge beyond the SDK's public API is `protocol/`; the flags and the other
commands are `cli/`. `docs/architecture.md` is the map.
"""

from __future__ import annotations

import logging
import sys
import time
from collections.abc import AsyncIterator, Callable, Iterable, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Annotated, Any

import anyio
from mcp.server.lowlevel.helper_types import ReadResourceContents
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ResourceNotFoundError, ToolError
from mcp.server.subscriptions import InMemorySubscriptionBus
from mcp.types import Annotations, CallToolResult, InputRequiredResult, Resource, ToolAnnotations
from pydantic import AnyUrl, ValidationError
from watchfiles import awatch

from cli.flags import COMMANDS, parse, show_help, version
from cli.settings import Settings, announce, configure_logging, open_index
from clients.client import Client
from clients.known import loaded_by
from corpus.catalog import read_uri
from corpus.errors import CorpusError
from corpus.files import CorpusFile
from corpus.identity import AGENTS_SCHEME, DOCS_SCHEME, SERVER_SCHEME
from corpus.roots import RootKind
from live import answers, status
from live.index import LiveIndex
from live.status import StatusReport
from live.watch import Watcher, WatchFactory
from protocol import descriptions as d
from protocol import schemas
from protocol.arguments import Refused, canonical, refusal
from protocol.clients import name_of, resolve, shaping
from protocol.frames import serve_stdio
from protocol.legacy import Clients, add_subscriptions, advertise_list_changed, capture
from protocol.notify import notifying
from protocol.results import error_result, mime_type, tool_result
from retrieval.engine.memory import map_large_blocks
from retrieval.render import briefing
from retrieval.render.outline import outline
from retrieval.render.schema import SearchResult
from retrieval.search.reader import Excerpt
from retrieval.search.request import (
    DEFAULT_DETAIL,
    DEFAULT_MAX_TOKENS,
    SECTIONS,
    WINDOWS,
    PathRequest,
    Phase,
    PinnedRequest,
    ReadRequest,
    SearchRequest,
)
from shared.sessions import serve_sockets

log = logging.getLogger("agents_context")

NAME = "agents-context"
STATUS_URI = f"{SERVER_SCHEME}://status"
OUTLINE_URI = f"{SERVER_SCHEME}://outline"
READ_ONLY = ToolAnnotations(read_only_hint=True, open_world_hint=False)
"""Read-only, and reaching nothing but the project's files (the destructive and idempotent hints
mean something only for a tool that writes, so they are not sent)."""
SWITCH_INTERVAL_S = 0.0005
"""The interpreter's thread switch interval while serving (see `serve`)."""


@dataclass(slots=True)
class App:
    """Everything one server holds: its settings, the live index, the watcher, and the clients
    to notify. Every tool, resource and the lifespan reach the state through it. Only a few
    process-wide caches live outside it, each keyed by what it was computed from or checked
    before use (docs/architecture.md, "What `App` does not hold")."""

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

    def instructions(self, client: Client | None) -> str:
        """The server instructions for `client`, from the index as it is now."""
        live = self.live
        has_docs = any(r.kind is RootKind.DOCS for r in live.roots)
        with live.view() as view:
            loaded = loaded_by(client, view.corpus, self.settings.hooked)
            return briefing.instructions(
                view.corpus,
                self.settings.instructions_budget,
                has_docs,
                view.library,
                indexing(live),
                loaded,
                client.name if client else "",
            )

    def read(self, uri: str) -> CorpusFile:
        """A file by URI, read now; `ResourceNotFoundError` (a JSON-RPC error) with why if not served."""
        try:
            return read_uri(self.live.corpus, uri)
        except CorpusError as exc:
            raise ResourceNotFoundError(str(exc)) from None


class AgentsServer(MCPServer[App]):
    """MCPServer whose resource list and reads follow the live corpus, read-your-writes, and whose
    tools take the argument names models commonly use."""

    def __init__(self, app: App, **kwargs: Any) -> None:
        self.app = app
        super().__init__(subscriptions=app.bus, **kwargs)

    async def list_resources(self) -> list[Resource]:
        await anyio.to_thread.run_sync(self.app.catch_up)
        listed = await super().list_resources()
        with self.app.live.view() as view:
            files = sorted(view.corpus.files.agents(), key=lambda f: f.path)
        for f in files:
            title = f.title or next(iter(briefing.headings(f)), None)
            name = f.path if f.root.scoped else f.rel
            priority = Annotations(priority=1.0 if f.pinned else 0.5)
            listed.append(
                Resource(
                    uri=f.uri, name=name, title=title, mime_type=mime_type(f.rel), size=f.size, annotations=priority
                )
            )
        return listed

    async def read_resource(
        self, uri: AnyUrl | str, context: Context[App, Any] | None = None
    ) -> Iterable[ReadResourceContents] | InputRequiredResult:
        await anyio.to_thread.run_sync(self.app.catch_up)
        text = str(uri)
        if not text.startswith((f"{AGENTS_SCHEME}://", f"{DOCS_SCHEME}://")):
            return await super().read_resource(uri, context)
        if "#" in text:  # URI templates cannot match a fragment: one section, or a line range
            excerpt = await anyio.to_thread.run_sync(self._excerpt, text)
            return [ReadResourceContents(content=excerpt.text, mime_type=mime_type(excerpt.file.rel))]
        f = await anyio.to_thread.run_sync(self.app.read, text)
        return [ReadResourceContents(content=f.text, mime_type=mime_type(f.rel))]

    def _excerpt(self, uri: str) -> Excerpt:
        try:
            return answers.read(self.app.live, uri)
        except CorpusError as exc:
            raise ResourceNotFoundError(str(exc)) from None

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
    _schemas(server)
    _resources(server, app)
    return server


def _schemas(server: AgentsServer) -> None:
    """Each tool's schemas as `tools/list` gives them, without what only costs bytes (`protocol.schemas`)."""
    for tool in server._tool_manager.list_tools():  # an SDK internal: docs/development.md, "Dependencies"
        tool.parameters = schemas.input_schema(tool.fn_metadata.arg_model)
        if tool.fn_metadata.output_model is not None:
            tool.fn_metadata.output_schema = schemas.output_schema(tool.fn_metadata.output_model)


def indexing(live: LiveIndex) -> set[str]:
    """Labels of the roots whose first indexing is still reading files (a cached index being
    checked already knows its files)."""
    return {r.label for r in live.roots if (c := live.condition(r)) is not None and c.phase is Phase.INDEXING}


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
        texts = d.describe(view.corpus, indexing(live), app.settings.pinned_budget)
    deadline = app.settings.deadline_s

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
        asked = SearchRequest(
            query=query, kind=SECTIONS, k=k, offset=offset, path_prefix=path_prefix, root=root, detail=detail,
            max_tokens=max_tokens, generation=generation, explain=explain, variants=tuple(queries), deadline_s=deadline,
        )  # fmt: skip
        return _answer(app, asked)

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
        asked = SearchRequest(
            query=query, kind=WINDOWS, k=k, offset=offset, path_prefix=path_prefix, root=root, detail=detail,
            max_tokens=max_tokens, generation=generation, explain=explain, variants=tuple(queries), deadline_s=deadline,
        )  # fmt: skip
        return _answer(app, asked)

    @server.tool(title="Rules for a source file", annotations=READ_ONLY, description=texts.context_for_path)
    def context_for_path(
        path: d.SourcePath, max_tokens: d.MaxTokens = DEFAULT_MAX_TOKENS, detail: d.Detail = DEFAULT_DETAIL
    ) -> Annotated[CallToolResult, SearchResult]:
        return _answer(app, PathRequest(path=path, detail=detail, max_tokens=max_tokens))

    @server.tool(
        title="Read a file or section", annotations=READ_ONLY, description=texts.read_context, structured_output=False
    )
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
        hooked = app.settings.hooked
        asked = PinnedRequest(
            budget=app.settings.pinned_budget,
            client=client.name if client else "",
            loaded=lambda corpus: loaded_by(client, corpus, hooked),
        )
        return answers.respond(live, asked).text

    @server.tool(
        name="pinned_context",
        title="Pinned project context",
        annotations=READ_ONLY,
        description=texts.pinned_context,
        structured_output=False,
    )
    def pinned_context_tool(ctx: Context) -> str:
        return pinned(app.client_of(ctx.session))

    @server.prompt(name="pinned_context", title="Pinned project context")
    async def pinned_context_prompt(ctx: Context) -> str:
        """The project's pinned files in full, then the searchable files and their section headings."""
        return await anyio.to_thread.run_sync(pinned, app.client_of(ctx.session))

    @server.tool(title="Index status", annotations=READ_ONLY, description=texts.context_status)
    def context_status() -> Annotated[CallToolResult, StatusReport]:
        app.catch_up()
        report = app.status()
        return tool_result(status.render(report), report)


def _resources(server: AgentsServer, app: App) -> None:
    @server.resource(
        STATUS_URI,
        name="status",
        title="Index status",
        mime_type="application/json",
        description="The same report as the context_status tool, as JSON.",
    )
    def status_resource() -> str:
        return app.status().model_dump_json(indent=2)

    @server.resource(
        OUTLINE_URI,
        name="outline",
        title="Outline",
        mime_type="application/json",
        description="Every .AGENTS file with its sections: headings, anchors, line ranges, estimated tokens.",
    )
    def outline_resource() -> str:
        with app.live.view() as view:
            return outline(view.corpus).model_dump_json(indent=1)

    @server.resource(
        f"{AGENTS_SCHEME}://{{+path}}",
        name="agents-file",
        mime_type="text/markdown",
        description="A file of the .AGENTS folder; resources/list names every one.",
    )
    def agents_file(path: str) -> str:
        return app.read(f"{AGENTS_SCHEME}://{path}").text

    @server.resource(
        f"{DOCS_SCHEME}://{{label}}/{{+path}}",
        name="docs-file",
        mime_type="text/markdown",
        description="A file of a --docs root, by root label and relative path (not listed).",
    )
    def docs_file(label: str, path: str) -> str:
        return app.read(f"{DOCS_SCHEME}://{label}/{path}").text


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


# --- start-up -------------------------------------------------------------------------------


def serve(settings: Settings, prepare: Callable[[AgentsServer], None] | None = None, background: bool = True) -> None:
    """Index the roots (`--docs` roots in the background), say what is served on stderr, and serve
    on the settings' transport until the client leaves (or, started by `agents-context-shared`,
    its sessions until none is left); `prepare` may add to the server first."""
    configure_logging(settings.log_level or "INFO", settings.log_file)
    # Searches are CPU-bound, sweeps and reads wait on the disk: with the default 5 ms switch
    # interval a sweep's thread waits that long for the interpreter after each stat while a search
    # runs, and a 38k-file rescan took 40x its time under back-to-back calls. 0.5 ms bounds that.
    sys.setswitchinterval(SWITCH_INTERVAL_S)
    map_large_blocks()  # what a large build drops goes back to the system (see its docstring)
    live = open_index(settings, background=background)
    announce(live)
    server = create_server(live, settings)
    if prepare is not None:
        prepare(server)
    try:
        if settings.transport == "http":
            anyio.run(_serve_http, server, settings.host, settings.port)
        elif settings.relayed is not None:  # started by agents-context-shared
            anyio.run(serve_sockets, server, settings.relayed)
        else:
            log.info("# waiting for an MCP client on stdin")
            anyio.run(serve_stdio, server)  # the SDK's stdio, with every line answered
    finally:
        live.close()  # the cache entries of roots that changed since start-up


async def _serve_http(server: AgentsServer, host: str, port: int) -> None:
    """Streamable HTTP at http://HOST:PORT/mcp. On localhost the SDK turns on DNS-rebinding
    protection (Host and Origin must be local); any other host is reachable from the network."""
    import uvicorn  # only this transport needs it

    if host not in ("127.0.0.1", "localhost", "::1"):
        log.warning("# listening on %s: reachable from the network, without DNS-rebinding protection", host)
    app = server.streamable_http_app(host=host)
    config = uvicorn.Config(app, host=host, port=port, log_config=None, log_level="warning")
    log.info("# serving MCP over streamable HTTP at http://%s:%d/mcp", host, port)
    await uvicorn.Server(config).serve()


def main(argv: Sequence[str] | None = None) -> None:
    """`agents-context`: serve (the default command), or run another command of `cli`."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["hook"]:  # as `agents-context-hook`, which starts faster (it loads no MCP SDK)
        from hook.main import main as hook

        raise SystemExit(hook(argv[1:]))
    if argv in (["-h"], ["--help"]):  # the commands, then every flag of the default one
        raise SystemExit(show_help())
    if not argv or (argv[0] not in COMMANDS and argv[0] != "--version"):
        argv = ["serve", *argv]
    args = parse(argv)
    if args.command != "serve":
        from cli import commands  # the terminal output (rich) loads only for these commands

        raise SystemExit(commands.run(args))
    try:
        settings = Settings.from_args(args)
    except CorpusError as exc:
        configure_logging(args.log_level or "INFO", args.log_file)
        log.error("%s", exc)
        raise SystemExit(2) from None
    serve(settings)


if __name__ == "__main__":
    main()
