"""A stand-in for OpenAI's Responses API (`POST .../responses`), streamed as server-sent events
the way Codex CLI reads them: scripted turns for the session's main loop, a short text for any
other request, and every request recorded.

Codex reads `response.output_item.done` (each finished output item), `response.output_text.delta`,
`response.created` and `response.completed` (whose `response.id` it requires: a stream that ends
without it is an error); the other events are sent too, as the real API sends them.

How a scripted `ToolCall` becomes an output item depends on how the request offers the tool:
- a `function` tool at the top: a `function_call` with that name;
- a tool inside a `namespace` tool (Codex's MCP servers: `mcp__<server>`): a `function_call`
  with `namespace` and the bare name (Codex answers a flat `mcp__server__tool` name with
  "unsupported call"), so a scripted call may name it `mcp__agents_context__context_search`;
- a `custom` (freeform) tool such as `apply_patch` or code mode's `exec`: a `custom_tool_call`
  whose text is the call's `input` entry;
- `tool_search`: a `tool_search_call` with the call's input as its arguments.
Namespaces may be listed in the request's `tools`, in an `additional_tools` input item, or in the
`tool_search_output` of an earlier search. When a model supports tool search Codex defers MCP
tools: it lists only the namespaces, and their tools come from a `tool_search` call. So when a
scripted call names a tool that is not offered yet and the request offers `tool_search`, the
script first searches for it, as a real model would, and makes the call on the next request."""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from tests.harness.standin import Reply, Request, Say, StandIn, ToolCall, Turn, json_reply, sse

DEFAULT_MODEL = "gpt-5.5"


def offered_tools(body: dict[str, Any]) -> list[dict[str, Any]]:
    """The tools a request offers the model: its `tools`, then those its input adds
    (`additional_tools` items and earlier `tool_search_output` results)."""
    tools = [t for t in body.get("tools") or [] if isinstance(t, dict)]
    for item in body.get("input") or []:
        if isinstance(item, dict) and item.get("type") in ("additional_tools", "tool_search_output"):
            tools.extend(t for t in item.get("tools") or [] if isinstance(t, dict))
    return tools


def find_tool(name: str, tools: list[dict[str, Any]]) -> tuple[str | None, dict[str, Any]] | None:
    """The namespace (None at the top) and the spec of the tool a call names, by its bare name or
    its qualified one (`<namespace>__<tool>`); None when no offered tool has that name."""
    for tool in tools:
        if tool.get("name") == name and tool.get("type") != "namespace":
            return None, tool
    for tool in tools:
        if tool.get("type") != "namespace":
            continue
        namespace = str(tool.get("name", ""))
        bare = name.removeprefix(f"{namespace}__")
        for inner in tool.get("tools") or []:
            if isinstance(inner, dict) and inner.get("name") == bare:
                return namespace, inner
    return None


def is_main(body: dict[str, Any]) -> bool:
    """A request of the session's main loop: it offers the client's own tools."""
    return len(offered_tools(body)) >= 2


@dataclass
class Script:
    """The main loop's turns in order; once they are spent the model says "done". `main` holds
    every main-loop request, those answered with a tool search included."""

    turns: list[Turn]
    search: bool = True
    main: list[Request] = field(default_factory=list)
    _turn: int = 0
    _searched: set[str] = field(default_factory=set)
    _ids: Iterator[int] = field(default_factory=itertools.count)

    def __call__(self, request: Request, stand_in: StandIn) -> Reply:
        path = request.path.split("?")[0]
        if request.method != "POST" or not path.endswith("/responses"):
            return json_reply({"object": "list", "data": [], "models": []} if path.endswith("/models") else {})
        body = request.body if isinstance(request.body, dict) else {}
        if not is_main(body):
            return self._reply(body, [self._message("Agents context session")])
        self.main.append(request)
        turn: Turn = self.turns[self._turn] if self._turn < len(self.turns) else Say("done")
        if isinstance(turn, Say):
            self._turn += 1
            return self._reply(body, [self._message(turn.text)])
        tools = offered_tools(body)
        missing = [c.name for c in turn if c.name != "tool_search" and find_tool(c.name, tools) is None]
        if self.search and any(t.get("type") == "tool_search" for t in tools):
            unsearched = [name for name in missing if name not in self._searched]
            if unsearched:
                self._searched.update(unsearched)
                return self._reply(body, [self._search(unsearched)])
        self._turn += 1
        return self._reply(body, [self._call(call, tools) for call in turn])

    def _message(self, text: str) -> dict[str, Any]:
        return {
            "type": "message",
            "id": f"msg_{next(self._ids):04d}",
            "status": "completed",
            "role": "assistant",
            "content": [{"type": "output_text", "text": text, "annotations": []}],
        }

    def _search(self, names: list[str]) -> dict[str, Any]:
        words = [name.rsplit("__", 1)[-1].replace("_", " ") for name in names]
        return self._call(ToolCall("tool_search", {"query": " ".join(words)}), [])

    def _call(self, call: ToolCall, tools: list[dict[str, Any]]) -> dict[str, Any]:
        n = next(self._ids)
        ids = {"status": "completed", "call_id": f"call_{n:04d}"}
        if call.name == "tool_search":
            return {
                "type": "tool_search_call",
                "id": f"ts_{n:04d}",
                **ids,
                "execution": "client",
                "arguments": call.input,
            }
        found = find_tool(call.name, tools)
        namespace, name = (found[0], str(found[1]["name"])) if found else (None, call.name)
        where = {"namespace": namespace} if namespace else {}
        if found and found[1].get("type") == "custom":
            text = call.input.get("input")
            return {
                "type": "custom_tool_call",
                "id": f"ctc_{n:04d}",
                **ids,
                **where,
                "name": name,
                "input": text if isinstance(text, str) else json.dumps(call.input),
            }
        return {
            "type": "function_call",
            "id": f"fc_{n:04d}",
            **ids,
            **where,
            "name": name,
            "arguments": json.dumps(call.input),
        }

    def _reply(self, body: dict[str, Any], output: list[dict[str, Any]]) -> Reply:
        response = {
            "id": f"resp_{next(self._ids):04d}",
            "object": "response",
            "created_at": 1700000000,
            "status": "completed",
            "model": body.get("model", DEFAULT_MODEL),
            "output": output,
            "usage": {
                "input_tokens": 100,
                "input_tokens_details": {"cached_tokens": 0},
                "output_tokens": 10,
                "output_tokens_details": {"reasoning_tokens": 0},
                "total_tokens": 110,
            },
        }
        if body.get("stream") is False:
            return json_reply(response)
        return Reply(200, "text/event-stream", list(sse(_events(response))))


def _events(response: dict[str, Any]) -> Iterator[tuple[str, Any]]:
    """The Responses API's stream for a finished response: created, in progress, each output item
    added, its content or arguments streamed, done, then completed."""
    seq = itertools.count()

    def event(kind: str, **fields: Any) -> tuple[str, Any]:
        return kind, {"type": kind, "sequence_number": next(seq), **fields}

    pending = {**response, "status": "in_progress", "output": [], "usage": None}
    yield event("response.created", response=pending)
    yield event("response.in_progress", response=pending)
    for index, item in enumerate(response["output"]):
        at = {"output_index": index, "item_id": item["id"]}
        if item["type"] == "message":
            yield event(
                "response.output_item.added", output_index=index, item={**item, "status": "in_progress", "content": []}
            )
            for part_index, part in enumerate(item["content"]):
                where = {**at, "content_index": part_index}
                yield event("response.content_part.added", **where, part={**part, "text": ""})
                yield event("response.output_text.delta", **where, delta=part["text"])
                yield event("response.output_text.done", **where, text=part["text"])
                yield event("response.content_part.done", **where, part=part)
        elif item["type"] == "function_call":
            yield event(
                "response.output_item.added",
                output_index=index,
                item={**item, "status": "in_progress", "arguments": ""},
            )
            yield event("response.function_call_arguments.delta", **at, delta=item["arguments"])
            yield event("response.function_call_arguments.done", **at, arguments=item["arguments"])
        elif item["type"] == "custom_tool_call":
            yield event(
                "response.output_item.added", output_index=index, item={**item, "status": "in_progress", "input": ""}
            )
            yield event("response.custom_tool_call_input.delta", **at, delta=item["input"])
            yield event("response.custom_tool_call_input.done", **at, input=item["input"])
        else:
            yield event("response.output_item.added", output_index=index, item={**item, "status": "in_progress"})
        yield event("response.output_item.done", output_index=index, item=item)
    yield event("response.completed", response=response)
