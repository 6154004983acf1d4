"""A local HTTP server standing in for a model API: it records every request and answers each
with what the scripted turn says. One class for every client; each API's wire format is its own
module (`anthropic_api`, `openai_api`, `gemini_api`)."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass(frozen=True, slots=True)
class Request:
    """One request a client sent: its method, path, headers and body (parsed when JSON)."""

    method: str
    path: str
    headers: dict[str, str]
    body: Any


@dataclass(frozen=True, slots=True)
class Reply:
    """What the stand-in sends back: a status, a content type and the body, whole or as chunks
    (server-sent events are written and flushed chunk by chunk)."""

    status: int = 200
    content_type: str = "application/json"
    body: bytes | Iterable[bytes] = b"{}"


@dataclass(frozen=True, slots=True)
class ToolCall:
    """A scripted model turn's tool call, by the name the client lists the tool under."""

    name: str
    input: dict[str, Any]


@dataclass(frozen=True, slots=True)
class Say:
    """A scripted model turn that answers with text and ends the turn."""

    text: str


Turn = Sequence[ToolCall] | Say
"""One scripted model turn: tool calls (answered by the client, then the next turn), or text."""


@dataclass
class Run:
    """One run of a client: the main loop's request bodies in order, how the client ended, and
    (where the runner keeps them) every request it sent, side requests included."""

    requests: list[dict[str, Any]]
    returncode: int
    stdout: str
    stderr: str
    recorded: list[Request] = field(default_factory=list)
    compactions: int = 0
    """How many times the client asked the model to summarise the conversation."""


Answer = Callable[[Request, "StandIn"], Reply]
"""Decides the reply to a request; it may read what was recorded before."""


@dataclass
class StandIn:
    """A recording HTTP server on 127.0.0.1 and a free port; `answer` decides each reply."""

    answer: Answer
    requests: list[Request] = field(default_factory=list)
    _server: ThreadingHTTPServer | None = None
    _lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def url(self) -> str:
        assert self._server is not None
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    def __enter__(self) -> StandIn:
        stand_in = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                return

            def _handle(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                try:
                    body: Any = json.loads(raw) if raw else None
                except (json.JSONDecodeError, UnicodeDecodeError):
                    body = raw
                request = Request(self.command, self.path, {k.lower(): v for k, v in self.headers.items()}, body)
                with stand_in._lock:
                    stand_in.requests.append(request)
                    reply = stand_in.answer(request, stand_in)
                self.send_response(reply.status)
                self.send_header("Content-Type", reply.content_type)
                if isinstance(reply.body, bytes):
                    self.send_header("Content-Length", str(len(reply.body)))
                    self.end_headers()
                    self.wfile.write(reply.body)
                    return
                self.send_header("Cache-Control", "no-cache")
                self.send_header("Connection", "close")
                self.end_headers()
                for chunk in reply.body:
                    self.wfile.write(chunk)
                    self.wfile.flush()
                self.close_connection = True

            do_GET = do_POST = do_PUT = do_DELETE = do_HEAD = _handle

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        assert self._server is not None
        self._server.shutdown()
        self._server.server_close()


def sse(events: Iterable[tuple[str | None, Any]]) -> Iterator[bytes]:
    """Server-sent events: each (event name or None, data as JSON)."""
    for name, data in events:
        head = f"event: {name}\n" if name else ""
        yield f"{head}data: {json.dumps(data)}\n\n".encode()


def json_reply(data: Any, status: int = 200) -> Reply:
    return Reply(status, "application/json", json.dumps(data).encode())
