"""The index as MCP resources: `agents-context://status` and `agents-context://outline`, each
`.AGENTS` file listed (`listed`) and every served file read by URI (`contents`): a whole file, or,
with a `#fragment`, one section or a line range, read as `read_context` reads it. What is not
served is `ResourceNotFoundError`, a JSON-RPC error that says why."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from mcp.server.lowlevel.helper_types import ReadResourceContents
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ResourceNotFoundError
from mcp.types import Annotations, Resource

from corpus.catalog import read_uri
from corpus.errors import CorpusError
from corpus.files import CorpusFile
from corpus.identity import AGENTS_SCHEME, DOCS_SCHEME, SERVER_SCHEME
from live import answers
from live.index import LiveIndex
from live.status import StatusReport
from protocol.results import mime_type
from retrieval.render import briefing
from retrieval.render.outline import outline

STATUS_URI = f"{SERVER_SCHEME}://status"
OUTLINE_URI = f"{SERVER_SCHEME}://outline"
FILE_SCHEMES = (f"{AGENTS_SCHEME}://", f"{DOCS_SCHEME}://")
"""The URIs of served files; the server's own resources have the server's scheme."""


def listed(live: LiveIndex) -> list[Resource]:
    """Every `.AGENTS` file as `resources/list` names it, the pinned ones first in priority."""
    with live.view() as view:
        files = sorted(view.corpus.files.agents(), key=lambda f: f.path)
    return [
        Resource(
            uri=f.uri,
            name=f.path if f.root.scoped else f.rel,
            title=f.title or next(iter(briefing.headings(f)), None),
            mime_type=mime_type(f.rel),
            size=f.size,
            annotations=Annotations(priority=1.0 if f.pinned else 0.5),
        )
        for f in files
    ]


def file(live: LiveIndex, uri: str) -> CorpusFile:
    """A file by URI, read now."""
    try:
        return read_uri(live.corpus, uri)
    except CorpusError as exc:
        raise ResourceNotFoundError(str(exc)) from None


def contents(live: LiveIndex, uri: str) -> ReadResourceContents:
    """A served file's URI read now: the whole file, or one section or line range of it (URI
    templates cannot match a fragment, so these come here)."""
    if "#" not in uri:
        f = file(live, uri)
        return ReadResourceContents(content=f.text, mime_type=mime_type(f.rel))
    try:
        excerpt = answers.read(live, uri)
    except CorpusError as exc:
        raise ResourceNotFoundError(str(exc)) from None
    return ReadResourceContents(content=excerpt.text, mime_type=mime_type(excerpt.file.rel))


def add_resources(server: MCPServer[Any], live: LiveIndex, report: Callable[[], StatusReport]) -> None:
    """The four resources (`report`: the `context_status` report, as it is now)."""

    @server.resource(
        STATUS_URI,
        name="status",
        title="Index status",
        mime_type="application/json",
        description="The same report as the context_status tool, as JSON.",
    )
    def status_resource() -> str:
        return report().model_dump_json(indent=2)

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
        return file(live, f"{AGENTS_SCHEME}://{path}").text

    @server.resource(
        f"{DOCS_SCHEME}://{{label}}/{{+path}}",
        name="docs-file",
        mime_type="text/markdown",
        description="A file of a --docs root, by root label and relative path (not listed).",
    )
    def docs_file(label: str, path: str) -> str:
        return file(live, f"{DOCS_SCHEME}://{label}/{path}").text
