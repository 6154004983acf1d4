"""The guard in front of the SDK's stdin reader: every line a client writes on stdio gets the
answer JSON-RPC 2.0 asks for.

The pinned SDK silently drops a line it cannot read (invalid JSON, a value that is not a request
object, a batch, a string with a lone surrogate), so a client waiting on that id hangs. Here each
line is read once, by the SDK's own parser, and handed on as it parsed it; only a line the SDK
refuses (or reads as a notification although it carries an id) is parsed again with `json` to say
why, and answered. docs/contracts.md, "Frames", is the contract.
"""

from __future__ import annotations

import io
import json
import logging
import os
import re
from collections.abc import AsyncIterable
from dataclasses import dataclass
from typing import Any, Protocol

import anyio
from mcp.server.mcpserver import MCPServer
from mcp.server.stdio import stdio_server
from mcp.shared.message import SessionMessage
from mcp.types import (
    INTERNAL_ERROR,
    INVALID_PARAMS,
    INVALID_REQUEST,
    PARSE_ERROR,
    ErrorData,
    JSONRPCError,
    JSONRPCMessage,
    JSONRPCNotification,
    RequestId,
    jsonrpc_message_adapter,
)
from pydantic import ValidationError

log = logging.getLogger("agents_context.frames")

BATCH = "Invalid Request: batches are not supported (MCP removed them in 2025-06-18); send one message per line."
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]|[\ud800-\udfff]")
_SURROGATE = re.compile("[\ud800-\udfff]")  # after json.loads, every surrogate left is a lone one


@dataclass(frozen=True, slots=True)
class Refusal:
    """Why a message is refused, and the answer: `answered` is False for a notification or a
    response, which JSON-RPC never answers."""

    code: int
    message: str
    id: RequestId | None = None
    answered: bool = True

    def answer(self) -> SessionMessage:
        error = ErrorData(code=self.code, message=self.message)
        return SessionMessage(JSONRPCError(jsonrpc="2.0", id=self.id, error=error))


def read(line: str) -> JSONRPCMessage | list[Refusal]:
    """One line as the SDK reads it, or why it cannot be served (a batch: one refusal per element)."""
    try:
        message = jsonrpc_message_adapter.validate_json(line, by_name=False)
    except ValidationError:
        return _reread(line)
    if isinstance(message, JSONRPCNotification) and ('"id"' in line or "\\u" in line):
        return _reread(line)  # the SDK reads a request with a float, boolean or null id as a notification
    return message


def _reread(line: str) -> JSONRPCMessage | list[Refusal]:
    try:
        value = json.loads(line)
    except json.JSONDecodeError as exc:
        where = f"the fault is at character {exc.pos + 1}"
        return [Refusal(PARSE_ERROR, f"Parse error: the line is not valid JSON ({where}).")]
    except RecursionError:
        return [Refusal(PARSE_ERROR, "Parse error: the line nests too deeply to be read.")]
    except ValueError:  # an integer past Python's digit limit
        return [Refusal(PARSE_ERROR, "Parse error: the line holds a number too long to be read.")]
    repaired = 0
    if _SURROGATE_ESCAPE.search(line):  # a lone surrogate cannot be UTF-8 encoded: U+FFFD instead
        line, repaired = _SURROGATE.subn("\ufffd", json.dumps(value, ensure_ascii=False))
        value = json.loads(line)
    if isinstance(value, list):
        if not value:
            return [Refusal(INVALID_REQUEST, "Invalid Request: the message is an empty array, not a request object.")]
        return [Refusal(INVALID_REQUEST, BATCH, *_who(element)) for element in value]
    refusal = _envelope(value)
    if refusal is not None:
        return [refusal]
    try:
        message = jsonrpc_message_adapter.validate_json(line, by_name=False)
    except ValidationError as exc:
        deep = any("recursion" in error["msg"] for error in exc.errors())
        why = "nests too deeply for the server to read" if deep else "cannot be read by the server"
        return [Refusal(INVALID_REQUEST, f"Invalid Request: the message {why}.", *_who(value))]
    if repaired:
        log.warning("replaced %d lone surrogate(s) with U+FFFD in %s", repaired, _name(message))
    return message


def _envelope(value: object) -> Refusal | None:
    """What is wrong with the message's JSON-RPC envelope, if anything."""
    if not isinstance(value, dict):
        return Refusal(INVALID_REQUEST, f"Invalid Request: the message is {_kind(value)}, not a request object.")
    ident, answered = _who(value)
    if value.get("jsonrpc") != "2.0":
        return Refusal(INVALID_REQUEST, 'Invalid Request: "jsonrpc" must be "2.0".', ident, answered)
    if "method" not in value:
        why = "is a response the server cannot read" if not answered else 'has no "method"'
        return Refusal(INVALID_REQUEST, f"Invalid Request: the message {why}.", ident, answered)
    if not isinstance(value["method"], str):
        return Refusal(INVALID_REQUEST, 'Invalid Request: "method" must be a string.', ident, answered)
    if "id" in value and ident is None:
        return Refusal(INVALID_REQUEST, 'Invalid Request: "id" must be a string or an integer.')
    params = value.get("params")
    if isinstance(params, list):
        why = 'Invalid params: MCP methods take "params" as an object of named values, not an array.'
        return Refusal(INVALID_PARAMS, why, ident, answered)
    if params is not None and not isinstance(params, dict):
        why = f'Invalid Request: "params" must be an object, not {_kind(params)}.'
        return Refusal(INVALID_REQUEST, why, ident, answered)
    return None


def _who(value: object) -> tuple[RequestId | None, bool]:
    """The id to answer with (None when missing or unusable) and whether to answer at all."""
    if not isinstance(value, dict):
        return None, True
    ident = value.get("id")
    usable = isinstance(ident, str) or (isinstance(ident, int) and not isinstance(ident, bool))
    notification = "id" not in value and isinstance(value.get("method"), str)
    response = "method" not in value and ("result" in value or "error" in value)
    return (ident if usable else None), not (notification or response)


def _kind(value: object) -> str:
    names = {bool: "a boolean", int: "a number", float: "a number", str: "a string", list: "an array"}
    return "null" if value is None else names.get(type(value), "an object")


def _name(message: JSONRPCMessage) -> str:
    method = getattr(message, "method", "a response")
    ident = getattr(message, "id", None)
    return f"{method} (id {ident!r})" if ident is not None else str(method)


def _told(refused: list[Refusal], answered: int) -> str:
    """What was refused and who was told, for the log: a batch, a request, or a notification."""
    if refused[0].message == BATCH:
        return f"a batch of {len(refused)} messages ({answered} answered)"
    if not answered:
        return "a notification or response (JSON-RPC answers neither)"
    return f"a message (answered with {refused[0].code}, id {refused[0].id!r})"


class Sink(Protocol):
    """Where messages go: the SDK's write stream (answers) or its read stream (requests)."""

    async def send(self, item: SessionMessage, /) -> None: ...
    async def aclose(self) -> None: ...


async def guard(lines: AsyncIterable[str], inbound: Sink, outbound: Sink) -> None:
    """The stdin reader: each line the SDK can read goes to it, the others are answered and logged."""
    try:
        async for line in lines:
            if not line or line.isspace():
                continue  # an empty frame carries no message
            try:
                frame = read(line)
            except Exception:  # a bug here must cost one line, never the server
                log.exception("could not read a line of %d characters", len(line))
                frame = [Refusal(INTERNAL_ERROR, "Internal error: the server could not read this message.")]
            if not isinstance(frame, list):
                await inbound.send(SessionMessage(frame))
                continue
            answers = [refusal.answer() for refusal in frame if refusal.answered]
            log.warning("refused %s: %s", _told(frame, len(answers)), frame[0].message)
            for answer in answers:
                await outbound.send(answer)
    except (anyio.ClosedResourceError, anyio.BrokenResourceError):
        log.debug("the server stopped reading")
    finally:
        await inbound.aclose()
        await outbound.aclose()


async def serve_stdio(server: MCPServer[Any]) -> None:
    """`MCPServer.run_stdio_async` with `guard` reading stdin. The SDK's transport still claims
    stdout and writes every message; its own stdin reader is given an empty file, so fd 0 is not
    pointed at the null device while serving (nothing here reads stdin or starts a process). Runs
    the low-level server itself, as `run_stdio_async` does (`_lowlevel_server`: an SDK internal)."""
    lowlevel = server._lowlevel_server
    stdin = anyio.wrap_file(os.fdopen(0, "r", encoding="utf-8", errors="replace", closefd=False))
    sender, inbound = anyio.create_memory_object_stream[SessionMessage | Exception](0)
    async with stdio_server(stdin=anyio.wrap_file(io.StringIO())) as (unused, outbound):
        await unused.aclose()
        async with anyio.create_task_group() as tg:
            tg.start_soon(guard, stdin, sender, outbound.clone())
            await lowlevel.run(inbound, outbound, lowlevel.create_initialization_options())
