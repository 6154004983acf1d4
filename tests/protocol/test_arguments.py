"""Argument names as models send them: aliases accepted, unknown and doubled ones refused by name;
numbers read by one rule: whole numbers clamped into their range, anything else refused."""

from __future__ import annotations

from typing import Any

import pytest
from mcp import Client

from protocol.arguments import normalise, whole_number
from server import AgentsServer
from tests.helpers import split_status, text_of

pytestmark = pytest.mark.anyio


@pytest.mark.parametrize(("alias", "value"), [("q", "zebra"), ("text", "zebra")])
async def test_query_aliases_are_accepted(server: AgentsServer, alias: str, value: str) -> None:
    async with Client(server) as client:
        result = await client.call_tool("context_search", {alias: value})
    assert not result.is_error and "zebra" in text_of(result)


@pytest.mark.parametrize("alias", ["limit", "top_k", "n"])
async def test_k_aliases_are_accepted(server: AgentsServer, alias: str) -> None:
    async with Client(server) as client:
        result = await client.call_tool("context_search", {"query": "setup secrets logs", alias: 1})
    assert split_status(text_of(result))[1]["hits"] == "1"


async def test_unknown_and_doubled_arguments_are_errors_naming_them(server: AgentsServer) -> None:
    async with Client(server) as client:
        unknown = await client.call_tool("context_search", {"query": "x", "limt": 3})
        doubled = await client.call_tool("search_docs", {"query": "x", "q": "y"})
        no_args = await client.call_tool("pinned_context", {"verbose": True})
    assert unknown.is_error and "unknown argument 'limt' for context_search" in text_of(unknown)
    assert "k, max_tokens, offset" in text_of(unknown) or "detail" in text_of(unknown)
    assert doubled.is_error and "'q' and 'query' are the same argument" in text_of(doubled)
    assert no_args.is_error and "unknown argument 'verbose' for pinned_context; it takes: no arguments" in text_of(
        no_args
    )


K = {"type": "integer", "minimum": 1, "maximum": 20}
LINE = {"anyOf": [{"type": "integer"}, {"type": "null"}], "minimum": 1}


@pytest.mark.parametrize(
    ("schema", "value", "number"),
    [
        (K, 7, 7),
        (K, 7.0, 7),
        (K, "7", 7),
        (K, " -3 ", 1),
        (K, "7.00", 7),
        (K, 0, 1),
        (K, -(10**30), 1),
        (K, 10**30, 20),
        (K, 1e300, 20),
        (LINE, None, None),
        (LINE, 0, 1),
        (LINE, 10**30, 10**30),
        (LINE, "12", 12),
    ],
)
def test_a_whole_number_is_clamped_into_the_range_its_schema_advertises(
    schema: dict[str, Any], value: object, number: int | None
) -> None:
    assert whole_number("n", schema, value) == number


@pytest.mark.parametrize(
    ("schema", "value", "shown"),
    [
        (K, None, "null"),
        (K, True, "true"),
        (LINE, False, "false"),
        (K, 2.5, "2.5"),
        (K, float("nan"), "NaN"),
        (LINE, float("inf"), "Infinity"),
        (K, float("-inf"), "-Infinity"),
        (K, "1e1", '"1e1"'),
        (K, "seven", '"seven"'),
        (K, "\uff17", '"\\uff17"'),  # a fullwidth 7: not a number JSON or Python writes
        (K, "9" * 5000, '"' + "9" * 36 + "..."),
        (K, [7], "[7]"),
        (K, {"k": 7}, '{"k": 7}'),
        (K, object(), "object"),
    ],
)
def test_anything_else_is_refused_with_a_sentence_naming_the_argument(
    schema: dict[str, Any], value: object, shown: str
) -> None:
    assert whole_number("n", schema, value) == f"n must be a whole number, not {shown}"


def test_normalise_reads_every_integer_argument_and_leaves_the_others() -> None:
    schema = {"properties": {"query": {"type": "string"}, "k": K, "start_line": LINE}}
    assert normalise("t", schema, {"q": "7", "limit": "-4", "start_line": None}) == {
        "query": "7",
        "k": 1,
        "start_line": None,
    }
    assert normalise("t", schema, {"query": "x", "start_line": 1.5}) == "start_line must be a whole number, not 1.5"
