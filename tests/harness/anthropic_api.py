"""A stand-in for Anthropic's Messages API (`POST /v1/messages`), streamed or not, as Claude Code
calls it: scripted turns for the session's main loop, a short text for the client's side requests
(titles), a summary when the client compacts the conversation, and every request recorded."""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from tests.harness.standin import Reply, Request, Say, StandIn, Turn, json_reply, sse

SUMMARY = "<analysis>The user asked about the project.</analysis>\n<summary>1. Primary Request: the project's rules.</summary>"
"""What the model answers a compaction with: a summary that names none of the files' words."""


@dataclass
class Script:
    """The main loop's turns in order; once they are spent the model says "done". A request is
    the main loop's when it offers the client's own tools (side requests offer none) and is not a
    compaction (its last message asks for a summary, text only: answered with `SUMMARY`)."""

    turns: list[Turn]
    main: list[Request] = field(default_factory=list)
    compactions: list[Request] = field(default_factory=list)
    _ids: Iterator[int] = field(default_factory=itertools.count)

    def __call__(self, request: Request, stand_in: StandIn) -> Reply:
        if request.method != "POST" or not request.path.split("?")[0].endswith("/v1/messages"):
            return json_reply({})
        body = request.body if isinstance(request.body, dict) else {}
        if len(body.get("tools") or ()) < 2:
            return self._reply(body, [{"type": "text", "text": "Agents context session"}], "end_turn")
        if _compaction(body):
            self.compactions.append(request)
            return self._reply(body, [{"type": "text", "text": SUMMARY}], "end_turn")
        self.main.append(request)
        turn: Turn = self.turns[len(self.main) - 1] if len(self.main) <= len(self.turns) else Say("done")
        if isinstance(turn, Say):
            return self._reply(body, [{"type": "text", "text": turn.text}], "end_turn")
        blocks = [
            {"type": "tool_use", "id": f"toolu_{next(self._ids):04d}", "name": call.name, "input": call.input}
            for call in turn
        ]
        return self._reply(body, blocks, "tool_use")

    def _reply(self, body: dict[str, Any], blocks: list[dict[str, Any]], stop: str) -> Reply:
        message = {
            "id": f"msg_{next(self._ids):04d}",
            "type": "message",
            "role": "assistant",
            "model": body.get("model", "claude-sonnet-4-5"),
            "stop_reason": stop,
            "stop_sequence": None,
            "usage": {"input_tokens": 100, "output_tokens": 10},
        }
        if not body.get("stream"):
            return json_reply({**message, "content": blocks})
        return Reply(200, "text/event-stream", list(sse(_events(message, blocks, stop))))


def _compaction(body: dict[str, Any]) -> bool:
    """Whether the request asks for the conversation's summary (Claude Code's `/compact` and its
    automatic compaction send the conversation, then this request, tools offered but refused)."""
    messages = body.get("messages") or [{}]
    last = json.dumps(messages[-1].get("content"))
    return "Do NOT call any tools" in last and "<summary>" in last


def _events(message: dict[str, Any], blocks: list[dict[str, Any]], stop: str) -> Iterator[tuple[str, Any]]:
    yield "message_start", {"type": "message_start", "message": {**message, "content": [], "stop_reason": None}}
    for i, block in enumerate(blocks):
        if block["type"] == "text":
            yield (
                "content_block_start",
                {"type": "content_block_start", "index": i, "content_block": {"type": "text", "text": ""}},
            )
            delta = {"type": "text_delta", "text": block["text"]}
        else:
            start = {**block, "input": {}}
            yield "content_block_start", {"type": "content_block_start", "index": i, "content_block": start}
            delta = {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}
        yield "content_block_delta", {"type": "content_block_delta", "index": i, "delta": delta}
        yield "content_block_stop", {"type": "content_block_stop", "index": i}
    yield (
        "message_delta",
        {
            "type": "message_delta",
            "delta": {"stop_reason": stop, "stop_sequence": None},
            "usage": {"output_tokens": 10},
        },
    )
    yield "message_stop", {"type": "message_stop"}
