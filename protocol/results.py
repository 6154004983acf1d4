"""Answers as MCP results: a tool's text and structured content, an error a model can read, and
the MIME type of a served file."""

from __future__ import annotations

import mimetypes

from mcp.types import CallToolResult, TextContent
from pydantic import BaseModel

from corpus.markdown import is_markdown


def tool_result(text: str, structured: BaseModel | None = None) -> CallToolResult:
    """The text result, and the structured content when the tool has an output schema."""
    return CallToolResult(
        content=[TextContent(type="text", text=text)],
        structured_content=structured.model_dump(mode="json") if structured is not None else None,
    )


def error_result(message: str) -> CallToolResult:
    """An error the model reads: the message alone (the SDK's `ToolError` would prefix it)."""
    return CallToolResult(content=[TextContent(type="text", text=message)], is_error=True)


def mime_type(name: str) -> str:
    if is_markdown(name):
        return "text/markdown"
    guessed, _ = mimetypes.guess_type(name, strict=False)
    return guessed if guessed and guessed.startswith("text/") else "text/plain"
