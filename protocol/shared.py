"""One server for many sessions on this machine: each local TCP connection is one MCP session,
framed as stdio frames it (one JSON-RPC message a line, every line read by `frames.guard`), so a
relay can copy a client's stdio to it byte for byte (`agents-context-shared`, see `cli.share`).

A connection is served only once its first line is the token the server was given (published in a
file only its user can read); anything else is closed unanswered. The lifespan is entered once,
and every session runs the SDK's loop for both protocol eras on it, as `Server.run` does for
stdio (`serve_dual_era_loop`: an SDK internal). The server ends once no session has been open
for `idle_s`.
"""

from __future__ import annotations

import hmac
import logging
import secrets
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import anyio
from anyio.abc import SocketAttribute, SocketStream, TaskGroup
from anyio.streams.buffered import BufferedByteReceiveStream
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
from mcp.server.mcpserver import MCPServer
from mcp.server.runner import serve_dual_era_loop
from mcp.shared.message import SessionMessage
from mcp.types import JSONRPCError, JSONRPCRequest, JSONRPCResponse, RequestId

from protocol.frames import guard

log = logging.getLogger("agents_context.shared")

MAX_LINE = 64 << 20
"""The longest message a session may send (64 MiB); a longer line ends the session."""
_TOKEN_S = 10.0
"""How long a new connection has to give the token."""
_DRAIN_S = 30.0
"""How long a session whose input ended still answers the requests it sent before."""
_LISTEN = "subscriptions/listen"


async def serve_sockets(
    server: MCPServer[Any],
    greeting: bytes,
    idle_s: float,
    publish: Callable[[int, str], None],
    withdraw: Callable[[], None],
) -> None:
    """Listen on a free port of 127.0.0.1, `publish(port, token)` (a new random token), and serve
    each connection that gives the token as a session, until none has been open for `idle_s`
    seconds; `withdraw()` before it stops accepting, and however it ends."""
    token = secrets.token_hex(16)
    lowlevel = server._lowlevel_server
    options = lowlevel.create_initialization_options()
    listener = await anyio.create_tcp_listener(local_host="127.0.0.1", local_port=0)
    sessions = _Sessions(anyio.current_time())

    async def session(stream: SocketStream) -> None:
        with sessions.one():
            try:
                async with stream:
                    buffered = BufferedByteReceiveStream(stream)
                    if await _admitted(buffered, token.encode("ascii")):
                        log.info("# a session joined (%d open)", sessions.open)
                        await stream.send(greeting)
                        await _serve(stream, buffered, lowlevel, state, options)
            except (anyio.BrokenResourceError, anyio.ClosedResourceError, OSError):
                log.info("a session's connection broke")

    accepting = anyio.CancelScope()

    async def accept(tg: TaskGroup) -> None:
        with accepting:
            async with listener:
                await listener.serve(session, tg)

    try:
        async with lowlevel.lifespan(lowlevel) as state, anyio.create_task_group() as tg:
            tg.start_soon(accept, tg)
            port = listener.extra(SocketAttribute.local_port)
            publish(port, token)
            log.info("# serving the sessions of agents-context-shared on 127.0.0.1:%d", port)
            while not sessions.idle_for(idle_s):
                await anyio.sleep(min(idle_s, 1.0))
            withdraw()  # first, so that no one finds this server once it stops accepting
            accepting.cancel()
            while sessions.open:  # one accepted just before the listener closed is served to its end
                await anyio.sleep(0.05)
            log.info("# no session for %.0f s: the shared server stops", idle_s)
            tg.cancel_scope.cancel()
    finally:
        withdraw()  # however it ended


@dataclass(slots=True)
class _Sessions:
    """How many sessions are open, and since when none has been."""

    quiet_since: float
    open: int = 0

    @contextmanager
    def one(self) -> Iterator[None]:
        self.open += 1
        try:
            yield
        finally:
            self.open -= 1
            self.quiet_since = anyio.current_time()

    def idle_for(self, seconds: float) -> bool:
        return not self.open and anyio.current_time() - self.quiet_since >= seconds


async def _admitted(buffered: BufferedByteReceiveStream, token: bytes) -> bool:
    with anyio.move_on_after(_TOKEN_S):
        try:
            given = await buffered.receive_until(b"\n", len(token) + 2)
        except (anyio.IncompleteRead, anyio.DelimiterNotFound, anyio.EndOfStream):
            given = b""
        if hmac.compare_digest(given.strip(), token):
            return True
    log.warning("closed a connection that did not give the token")
    return False


async def _serve(
    stream: SocketStream, buffered: BufferedByteReceiveStream, lowlevel: Any, state: Any, options: Any
) -> None:
    """One session: lines in through `guard`, the SDK's loop, messages out one a line."""
    inbound, read_stream = anyio.create_memory_object_stream[SessionMessage | Exception](0)
    write_stream, outbound = anyio.create_memory_object_stream[SessionMessage](0)
    waiting = _Waiting(inbound)
    async with anyio.create_task_group() as tg:
        tg.start_soon(guard, _lines(buffered), waiting, write_stream.clone())
        tg.start_soon(_send_each, outbound, stream, waiting)
        async with write_stream:  # either era, as `Server.run` serves stdio
            await serve_dual_era_loop(lowlevel, read_stream, write_stream, lifespan_state=state, init_options=options)


async def _lines(buffered: BufferedByteReceiveStream) -> AsyncIterator[str]:
    while True:
        try:
            line = await buffered.receive_until(b"\n", MAX_LINE)
        except (anyio.EndOfStream, anyio.IncompleteRead, anyio.BrokenResourceError, OSError):
            return
        except anyio.DelimiterNotFound:
            log.warning("ended a session that sent a line of more than %d bytes", MAX_LINE)
            return
        yield line.decode("utf-8", errors="replace")


class _Waiting:
    """The session's requests not answered yet, in front of the SDK's read stream: at the end of
    the input, the stream closes once they are answered (within `_DRAIN_S`). A client may send a
    request and close its side at once; the SDK's loop ends when its input does, dropping what is
    in flight. A subscription (`subscriptions/listen`) lasts as long as the session: not waited for."""

    def __init__(self, inbound: MemoryObjectSendStream[SessionMessage | Exception]) -> None:
        self._inbound = inbound
        self._ids: set[RequestId] = set()

    async def send(self, item: SessionMessage, /) -> None:
        if isinstance(item.message, JSONRPCRequest) and item.message.method != _LISTEN:
            self._ids.add(item.message.id)
        await self._inbound.send(item)

    def sent(self, item: SessionMessage) -> None:
        if isinstance(item.message, JSONRPCResponse | JSONRPCError):
            self._ids.discard(item.message.id)

    async def aclose(self) -> None:
        with anyio.move_on_after(_DRAIN_S):
            while self._ids:
                await anyio.sleep(0.01)
        await self._inbound.aclose()


async def _send_each(
    outbound: MemoryObjectReceiveStream[SessionMessage], stream: SocketStream, waiting: _Waiting
) -> None:
    """Each message as one line; once the connection is gone the rest are dropped (the loop must
    never wait on a session nobody reads)."""
    gone = False
    async with outbound:
        async for message in outbound:
            waiting.sent(message)
            if gone:
                continue
            line = message.message.model_dump_json(by_alias=True, exclude_unset=True) + "\n"
            try:
                await stream.send(line.encode("utf-8"))
            except (anyio.BrokenResourceError, anyio.ClosedResourceError, OSError):
                gone = True
