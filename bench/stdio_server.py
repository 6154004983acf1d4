"""The real server on stdio, plus two floors for bench/speed.py: `noop` and `replay`.

Same flags as `server.py`. It serves stdio with `server.serve`, exactly as `server.main` does
(but for indexing every root before it answers), with two tools added:

- `noop` returns a constant string: a `context_search` call and a `noop` call over the same
  connection differ only by the search (the protocol floor);
- `replay(tool, query)` returns, again, the answer `tool` last gave for `query`, through the same
  output schema check: the same bytes through the same pipeline with none of the work, so a
  search's time splits into what the answer's size costs and what the search itself costs.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Annotated, Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from mcp.server.mcpserver import Context
from mcp.types import CallToolResult, InputRequiredResult, TextContent

from cli.flags import build_parser
from cli.settings import Settings
from retrieval.render.schema import SearchResult
from server import AgentsServer, serve


def main(argv: Sequence[str] | None = None) -> None:
    args = build_parser().parse_args(["serve", *(sys.argv[1:] if argv is None else argv)])
    serve(Settings.from_args(args), prepare=floors, background=False)


def floors(server: AgentsServer) -> None:
    """The two tools the benchmark times a search against."""

    @server.tool(name="noop", description="Returns a constant (benchmark floor).", structured_output=False)
    def noop() -> str:
        return "ok"

    answers: dict[tuple[str, str], CallToolResult] = {}
    call_tool = server.call_tool

    async def recording(
        name: str, arguments: dict[str, Any], context: Context[Any, Any] | None = None
    ) -> CallToolResult | InputRequiredResult:
        result = await call_tool(name, arguments, context)
        if isinstance(result, CallToolResult) and isinstance(arguments.get("query"), str) and name != "replay":
            answers[name, arguments["query"]] = result
        return result

    server.call_tool = recording  # type: ignore[method-assign]

    @server.tool(name="replay", description="The answer a tool last gave to a query, again (benchmark floor).")
    def replay(tool: str, query: str) -> Annotated[CallToolResult, SearchResult]:
        found = answers.get((tool, query))
        if found is None:
            return CallToolResult(content=[TextContent(type="text", text="no such answer yet")], is_error=True)
        return found


if __name__ == "__main__":
    main()
