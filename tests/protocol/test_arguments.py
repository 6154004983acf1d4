"""Argument names as models send them: aliases accepted, unknown and doubled ones refused by name;
numbers read by one rule: whole numbers clamped into their range, anything else refused."""

from __future__ import annotations

from typing import Annotated, Any

import pytest
from mcp import Client
from pydantic import Field, TypeAdapter, ValidationError, create_model

from protocol.arguments import Refused, Whole, canonical, refusal
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


K = Annotated[int, Whole(1, 20)]
LINE = Annotated[Annotated[int, Whole(1)] | None, Field()]


def read(kind: Any, value: object) -> object:
    """`value` as an argument `n` of the type `kind` takes it, or the sentence that refuses it."""
    model = create_model("Arguments", n=(kind, ...))
    try:
        return model.model_validate({"n": value}).model_dump()["n"]
    except ValidationError as error:
        return refusal(error, {"n": value})


@pytest.mark.parametrize(
    ("kind", "value", "number"),
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
    kind: Any, value: object, number: int | None
) -> None:
    assert read(kind, value) == number


def test_the_range_is_advertised_in_the_schema_of_the_number_itself() -> None:
    assert TypeAdapter(K).json_schema() == {"type": "integer", "minimum": 1, "maximum": 20}
    assert TypeAdapter(LINE).json_schema() == {"anyOf": [{"type": "integer", "minimum": 1}, {"type": "null"}]}


@pytest.mark.parametrize(
    ("kind", "value", "shown"),
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
def test_anything_else_is_refused_with_a_sentence_naming_the_argument(kind: Any, value: object, shown: str) -> None:
    assert read(kind, value) == f"n must be a whole number, not {shown}"


def test_names_are_made_canonical_in_the_order_sent_and_values_left_to_pydantic() -> None:
    accepted = ("query", "k", "start_line")
    assert canonical("t", accepted, {"limit": "-4", "q": "7", "start_line": None}) == {
        "k": "-4",
        "query": "7",
        "start_line": None,
    }
    with pytest.raises(Refused) as refused:
        canonical("t", accepted, {"x": 1})
    assert str(refused.value) == "unknown argument 'x' for t; it takes: k, query, start_line"


def test_the_first_wrong_value_as_sent_is_said_before_a_missing_argument() -> None:
    model = create_model("Arguments", query=(str, ...), k=(K, 3), start_line=(LINE, None))
    sent = {"start_line": 1.5, "k": "x"}
    with pytest.raises(ValidationError) as refused:
        model.model_validate(sent)
    assert refusal(refused.value, sent) == "start_line must be a whole number, not 1.5"
