"""Answers as MCP results: text and structured content, errors a model reads, MIME types."""

from __future__ import annotations

import pytest
from mcp.types import TextContent

from protocol.results import error_result, mime_type, tool_result
from retrieval.render.schema import LastUpdate


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("security.md", "text/markdown"),
        ("rules/api.MDC", "text/markdown"),
        ("guide.markdown", "text/markdown"),
        ("notes.txt", "text/plain"),
        ("page.html", "text/html"),
        ("data.json", "text/plain"),  # not a text/ type: served as plain text
        ("Makefile", "text/plain"),
    ],
)
def test_a_served_file_is_markdown_or_text(name: str, expected: str) -> None:
    assert mime_type(name) == expected


def test_an_error_result_is_the_message_alone_flagged_as_an_error() -> None:
    result = error_result("unknown root 'x'; roots: .AGENTS")
    assert result.is_error is True
    assert result.content == [TextContent(type="text", text="unknown root 'x'; roots: .AGENTS")]


def test_a_tool_result_carries_the_text_and_the_structured_content_as_json() -> None:
    update = LastUpdate(at="2026-11-24T10:00:00.000Z", added=["a"], changed=[], removed=[])
    result = tool_result("the text", update)
    assert not result.is_error
    assert result.content == [TextContent(type="text", text="the text")]
    assert result.structured_content == {"at": "2026-11-24T10:00:00.000Z", "added": ["a"], "changed": [], "removed": []}
    assert tool_result("only text").structured_content is None
