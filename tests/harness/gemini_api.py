"""A stand-in for the Gemini API (`POST /v1beta/models/{model}:streamGenerateContent?alt=sse`,
`:generateContent`, `:countTokens`) as Gemini CLI calls it with an API key: scripted turns for
the session's main loop, a harmless answer for the client's side requests (the model router's
complexity score, next-speaker checks, summaries), and every request recorded."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from tests.harness.standin import Reply, Request, Say, StandIn, Turn, json_reply, sse

USAGE = {"promptTokenCount": 100, "candidatesTokenCount": 10, "totalTokenCount": 110}


def method(request: Request) -> str:
    """The API method a request calls: `streamGenerateContent`, `generateContent`, `countTokens`
    (the part of the path after the model's `:`), or "" for anything else."""
    path = request.path.split("?")[0]
    head, _, name = path.rpartition(":")
    return name if request.method == "POST" and "/models/" in head else ""


def is_main(request: Request) -> bool:
    """A request is the main loop's when it generates with the client's tools declared (side
    requests declare none)."""
    body = request.body if isinstance(request.body, dict) else {}
    declared = [f for tool in body.get("tools") or () for f in tool.get("functionDeclarations") or ()]
    return method(request) in ("streamGenerateContent", "generateContent") and len(declared) >= 2


@dataclass
class Script:
    """The main loop's turns in order; once they are spent the model says "done"."""

    turns: list[Turn]
    main: list[Request] = field(default_factory=list)

    def __call__(self, request: Request, stand_in: StandIn) -> Reply:
        name = method(request)
        body = request.body if isinstance(request.body, dict) else {}
        if name == "countTokens":
            return json_reply({"totalTokens": 100})
        if name not in ("streamGenerateContent", "generateContent"):
            return json_reply({})
        if not is_main(request):
            return _reply(name, [{"text": _side_answer(body)}])
        self.main.append(request)
        turn: Turn = self.turns[len(self.main) - 1] if len(self.main) <= len(self.turns) else Say("done")
        if isinstance(turn, Say):
            return _reply(name, [{"text": turn.text}])
        return _reply(name, [{"functionCall": {"name": call.name, "args": call.input}} for call in turn])


def _reply(name: str, parts: list[dict[str, Any]]) -> Reply:
    response = {
        "candidates": [{"content": {"role": "model", "parts": parts}, "finishReason": "STOP", "index": 0}],
        "usageMetadata": USAGE,
        "modelVersion": "stand-in",
    }
    if name == "generateContent":
        return json_reply(response)
    return Reply(200, "text/event-stream", list(sse([(None, response)])))


def _side_answer(body: dict[str, Any]) -> str:
    """Plain text, or when the request asks for JSON, the smallest value its schema accepts."""
    config = body.get("generationConfig") or {}
    if config.get("responseMimeType") != "application/json":
        return "Agents context session"
    return json.dumps(_fill(config.get("responseJsonSchema") or config.get("responseSchema") or {}))


def _fill(schema: dict[str, Any]) -> Any:
    """The smallest value a (Gemini or JSON) schema accepts: required properties, enums' first
    member, empty arrays, 1 for numbers (scores are usually ranges starting at 1)."""
    if schema.get("enum"):
        return schema["enum"][0]
    kind = str(schema.get("type", "object")).lower()
    if kind == "object":
        properties: dict[str, Any] = schema.get("properties") or {}
        return {key: _fill(properties.get(key) or {}) for key in schema.get("required") or properties}
    return {"string": "user", "integer": 1, "number": 1, "boolean": False, "array": []}.get(kind)
