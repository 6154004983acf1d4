"""The streamable HTTP transport (`--transport http`): the SDK's ASGI app under uvicorn."""

from __future__ import annotations

import logging
from typing import Any

from mcp.server.mcpserver import MCPServer

log = logging.getLogger("agents_context")

LOCAL_HOSTS = ("127.0.0.1", "localhost", "::1")


async def serve_http(server: MCPServer[Any], host: str, port: int) -> None:
    """Streamable HTTP at http://HOST:PORT/mcp. On localhost the SDK turns on DNS-rebinding
    protection (Host and Origin must be local); any other host is reachable from the network."""
    import uvicorn  # only this transport needs it

    if host not in LOCAL_HOSTS:
        log.warning("# listening on %s: reachable from the network, without DNS-rebinding protection", host)
    app = server.streamable_http_app(host=host)
    config = uvicorn.Config(app, host=host, port=port, log_config=None, log_level="warning")
    log.info("# serving MCP over streamable HTTP at http://%s:%d/mcp", host, port)
    await uvicorn.Server(config).serve()
