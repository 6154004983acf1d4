"""Who is asking, and answers shaped for what that client's model reads.

A client names itself in `initialize` (`clientInfo.name`; on 2026-07-28 in each request's
envelope). `clients` says what each known client does by itself; here the server acts on
it, in one middleware:

- `initialize` and `server/discover` answer with instructions written for that client at that
  moment (the pinned files it loaded itself named, not repeated; indexing as it stands);
- for a client whose model reads structured content instead of text (Claude Code, Codex),
  `tools/list` carries no output schemas and a tool result carries its text alone, unless the
  call asked for `explain`: the model then reads the documented text, not a JSON dump.

`--client NAME` overrides the name a client gives (`other`: treat it as unknown).
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import Any

import anyio

from clients.client import Client
from clients.known import BY_KEY, UNKNOWN, identify

log = logging.getLogger("agents_context")

Instructions = Callable[[Client | None], str]
"""The server instructions for a client (None: unknown)."""


def resolve(override: str | None, name: str | None) -> Client | None:
    """The client a connection is treated as: `override` (`--client`) if given, else the one
    `name` (`clientInfo.name`) identifies; None for an unknown client."""
    if override == UNKNOWN:
        return None
    if override:
        return BY_KEY[override]
    return identify(name)


def name_of(session: Any) -> str | None:
    """The `clientInfo.name` a connection's client gave, if any."""
    params = getattr(session, "client_params", None)
    return params.client_info.name if params is not None else None


def explained(params: object) -> bool:
    """Whether a `tools/call` asked for explanations (`explain: true`)."""
    arguments = params.get("arguments") if isinstance(params, dict) else None
    value = arguments.get("explain") if isinstance(arguments, dict) else None
    return value is True or (isinstance(value, str) and value.strip().casefold() == "true")


def shaping(override: str | None, instructions: Instructions) -> Callable[[Any, Any], Awaitable[Any]]:
    """The middleware that shapes answers for the client (see the module's docstring)."""

    async def shape(ctx: Any, call_next: Any) -> Any:
        result = await call_next(ctx)
        if not isinstance(result, dict):
            return result
        if ctx.method == "initialize":
            info = (ctx.params or {}).get("clientInfo")
            name = info.get("name") if isinstance(info, dict) else None
            client = resolve(override, name if isinstance(name, str) else None)
            log.info("# client: %s (says %r)", client.name if client else "unknown", name)
            result["instructions"] = await anyio.to_thread.run_sync(instructions, client)
            return result
        client = resolve(override, name_of(ctx.session))
        if ctx.method == "server/discover":
            result["instructions"] = await anyio.to_thread.run_sync(instructions, client)
        elif client is not None and client.reads_structured:
            if ctx.method == "tools/list":
                for tool in result.get("tools") or ():
                    if isinstance(tool, dict):
                        tool.pop("outputSchema", None)
            elif ctx.method == "tools/call" and not explained(ctx.params):
                result.pop("structuredContent", None)
        return result

    return shape
