"""One server for many sessions on this machine: each local TCP connection is one MCP session,
framed as stdio frames it (one JSON-RPC message a line, every line read by `frames.guard`), so a
relay can copy a client's stdio to it byte for byte (`agents-context-shared`, see `shared.relay`).

A connection is served only once it proved, in the handshake `shared.relay.HANDSHAKE` describes,
that it holds the token the server was given (published in a file only its user can read); a
connection that did not within `_HANDSHAKE_S` is closed, and never counts as a session. At most
`_PENDING` connections are in their handshake at once: a new one ends the oldest, so a flood of
connections that never speak costs a few file descriptors and no session. The lifespan is entered
once, and every session runs the SDK's loop for both protocol eras on it, as `Server.run` does for
stdio (`serve_dual_era_loop`: an SDK internal). The server ends once no session has been open
for the idle time.
"""

from __future__ import annotations

import hmac
import logging
import math
from collections import deque
from collections.abc import AsyncIterator, Callable, Coroutine, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Protocol, cast

import anyio
from anyio.abc import Listener, SocketAttribute, SocketListener, SocketStream, TaskGroup
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
_HANDSHAKE_S = 5.0
"""How long a new connection has to prove it holds the token."""
_HANDSHAKE_LINE = 256
"""The longest line of the handshake read (each is at most 124 bytes)."""
_PENDING = 64
"""The most connections in their handshake at once."""
_REFUSED_EVERY_S = 60.0
"""The log says the connections it closed unproven (or could not accept) at most this often."""
_DRAIN_S = 30.0
"""How long a session whose input ended still answers the requests it sent before."""
_LISTEN = "subscriptions/listen"


class Sharing(Protocol):
    """The server `agents-context-shared` started (`shared.relay.Serving`): its idle time, its side
    of the handshake, and how to publish and withdraw its state file."""

    @property
    def idle_s(self) -> float: ...

    @property
    def welcome(self) -> bytes: ...

    def answer(self, hello: bytes) -> tuple[bytes, bytes] | None: ...

    def publish(self, port: int) -> None: ...

    def withdraw(self) -> None: ...


async def serve_sockets(server: MCPServer[Any], sharing: Sharing) -> None:
    """Listen on a free port of 127.0.0.1, `publish` it, and serve each connection that completes
    the handshake as a session, until none has been open for `idle_s` seconds; `withdraw()`
    before it stops accepting, and however it ends."""
    lowlevel = server._lowlevel_server
    options = lowlevel.create_initialization_options()
    listener = await anyio.create_tcp_listener(local_host="127.0.0.1", local_port=0)
    sessions = _Sessions(anyio.current_time())
    pending = _Pending()

    async def session(stream: SocketStream) -> None:
        try:
            async with stream:
                buffered = BufferedByteReceiveStream(stream)
                if not await pending.admitted(buffered, stream, sharing):
                    return
                with sessions.one():
                    log.info("# a session joined (%d open)", sessions.open)
                    await _serve(stream, buffered, lowlevel, state, options)
        except (anyio.BrokenResourceError, anyio.ClosedResourceError, OSError):
            log.info("a session's connection broke")

    accepting = anyio.CancelScope()

    async def accept(tg: TaskGroup) -> None:
        with accepting:
            async with listener:
                await _accept_each(listener.listeners, session, tg)

    idle_s = sharing.idle_s
    try:
        async with lowlevel.lifespan(lowlevel) as state, anyio.create_task_group() as tg:
            tg.start_soon(accept, tg)
            port = listener.extra(SocketAttribute.local_port)
            sharing.publish(port)
            log.info("# serving the sessions of agents-context-shared on 127.0.0.1:%d", port)
            while not sessions.idle_for(idle_s):
                await anyio.sleep(min(idle_s, 1.0))
            sharing.withdraw()  # first, so that no one finds this server once it stops accepting
            accepting.cancel()
            while sessions.open:  # one admitted just before the listener closed is served to its end
                await anyio.sleep(0.05)
            log.info("# no session for %.0f s: the shared server stops", idle_s)
            tg.cancel_scope.cancel()
    finally:
        sharing.withdraw()  # however it ended


async def _accept_each(
    listeners: Sequence[Listener[SocketStream]],
    session: Callable[[SocketStream], Coroutine[Any, Any, None]],
    tg: TaskGroup,
) -> None:
    """Each connection to its own task; an error accepting one (a connection reset before it was
    accepted, no file descriptor left) is logged and waited out, never the server's end."""
    (listening,) = listeners  # 127.0.0.1: one socket
    one, said_at = cast(SocketListener, listening), -math.inf
    while True:
        try:
            stream = await one.accept()
        except (OSError, anyio.BrokenResourceError) as exc:
            if anyio.current_time() - said_at >= _REFUSED_EVERY_S:
                log.warning("could not accept a connection: %s", exc)
                said_at = anyio.current_time()
            await anyio.sleep(0.1)
            continue
        tg.start_soon(session, stream)


@dataclass(slots=True)
class _Sessions:
    """How many sessions are open (past the handshake), and since when none has been."""

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


class _Pending:
    """The connections in their handshake: at most `_PENDING`, each for `_HANDSHAKE_S` at most;
    the connections closed unproven, said in the log at most every `_REFUSED_EVERY_S`."""

    def __init__(self) -> None:
        self._scopes: deque[anyio.CancelScope] = deque()
        self._refused = 0
        self._said_at = -math.inf

    async def admitted(self, buffered: BufferedByteReceiveStream, stream: SocketStream, sharing: Sharing) -> bool:
        """Whether the connection proved it holds the token (and was told so)."""
        if len(self._scopes) >= _PENDING:
            self._scopes.popleft().cancel()  # the oldest, most likely one that never speaks
        admitted = False
        with anyio.CancelScope(deadline=anyio.current_time() + _HANDSHAKE_S) as scope:
            self._scopes.append(scope)
            try:
                admitted = await _handshake(buffered, stream, sharing)
            finally:
                if scope in self._scopes:  # else ended as the oldest
                    self._scopes.remove(scope)
        if not admitted:
            self._refuse()
        return admitted

    def _refuse(self) -> None:
        self._refused += 1
        now = anyio.current_time()
        if now - self._said_at >= _REFUSED_EVERY_S:
            what = "a connection" if self._refused == 1 else f"{self._refused} connections"
            log.warning("closed %s that did not prove it holds the token", what)
            self._refused, self._said_at = 0, now


async def _handshake(buffered: BufferedByteReceiveStream, stream: SocketStream, sharing: Sharing) -> bool:
    """The server's side of `shared.relay.HANDSHAKE`: each line bounded, the relay's proof checked
    in constant time."""
    try:
        answer = sharing.answer(await buffered.receive_until(b"\n", _HANDSHAKE_LINE))
        if answer is None:
            return False
        proof, expected = answer
        await stream.send(proof)
        if not hmac.compare_digest(await buffered.receive_until(b"\n", _HANDSHAKE_LINE), expected):
            return False
        await stream.send(sharing.welcome)
    except (anyio.IncompleteRead, anyio.DelimiterNotFound, anyio.EndOfStream, anyio.BrokenResourceError, OSError):
        return False
    return True


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
