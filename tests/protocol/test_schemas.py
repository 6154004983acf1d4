"""Each tool's schemas as `tools/list` gives them: no titles, null defaults or annotations, bounds
inside the number branch, each subschema written once, and nothing a validator reads lost. The
sizes through a real client are tests/protocol/test_words.py."""

from __future__ import annotations

import json
from typing import Any

import jsonschema
import pytest
from pydantic import BaseModel, Field

from protocol.descriptions import Generation, PathPrefix, Query, SectionsK, StartLine
from protocol.schemas import input_schema, output_schema
from retrieval.search.request import SECTIONS


class Arguments(BaseModel):
    """Arguments built from the parameter types, as the tools' are."""

    query: Query
    k: SectionsK = 3
    generation: Generation = None
    path_prefix: PathPrefix = None
    start_line: StartLine = None


class Hit(BaseModel):
    path: str = Field(description="Display path.")
    heading: str | None = None
    anchor: str | None = None
    trail: list[str] = []


class Node(BaseModel):
    name: str
    children: list[Node] = []


class Page(BaseModel):
    """A page of hits."""

    hits: list[Hit]
    root: str | None = None
    note: str | None = None
    next_offset: int | None = None
    tree: Node | None = None


def keys(node: object) -> set[str]:
    """Every key anywhere in a JSON value."""
    if isinstance(node, dict):
        return set(node) | {k for value in node.values() for k in keys(value)}
    if isinstance(node, list):
        return {k for value in node for k in keys(value)}
    return set()


def test_listed_input_schemas_keep_descriptions_and_constraints_without_titles_or_null_defaults() -> None:
    schema = input_schema(Arguments)
    properties = schema["properties"]
    assert "title" not in keys(schema)
    assert schema["required"] == ["query"]
    assert properties["query"]["description"].startswith("One concept, in the docs' words")
    assert properties["k"] == {
        "default": 3,
        "description": "Most sections to return (clamped).",
        "maximum": SECTIONS.max_k,
        "minimum": 1,
        "type": "integer",
    }
    assert "default" not in properties["generation"] and "default" not in properties["path_prefix"]
    assert all(p.get("description") for p in properties.values())


def test_a_nullable_numbers_bounds_move_into_its_number_branch() -> None:
    properties = input_schema(Arguments)["properties"]
    assert properties["generation"]["anyOf"] == [{"type": "integer", "minimum": 0}, {"type": "null"}]
    assert properties["start_line"]["anyOf"] == [{"type": "integer", "minimum": 1}, {"type": "null"}]
    assert "minimum" not in properties["generation"] and "minimum" not in properties["start_line"]


def test_listed_output_schemas_drop_annotations_inline_single_uses_and_share_repeats() -> None:
    schema = output_schema(Page)
    assert schema is not None
    assert not {"title", "description", "default"} & keys(schema)
    hit = schema["properties"]["hits"]["items"]
    assert hit["required"] == ["path"]  # Hit, used once, written where it is used
    nullable = {"anyOf": [{"type": "string"}, {"type": "null"}]}
    assert schema["$defs"]["nstr"] == nullable  # written four times: once, then referred to
    assert [schema["properties"]["root"], hit["properties"]["heading"]] == [{"$ref": "#/$defs/nstr"}] * 2
    assert "Node" in schema["$defs"]  # recursive: it stays a definition
    assert json.dumps(schema).count('"anyOf": [{"type": "string"}, {"type": "null"}]') == 1


GOOD: list[dict[str, Any]] = [
    {"hits": []},
    {"hits": [{"path": "a.md", "heading": None, "trail": ["A", "B"]}], "root": "docs", "next_offset": 3},
    {"hits": [], "tree": {"name": "a", "children": [{"name": "b", "children": [{"name": "c"}]}]}},
]
BAD: list[dict[str, Any]] = [
    {},
    {"hits": [{"heading": "no path"}]},
    {"hits": [{"path": 1}]},
    {"hits": [], "root": 5},
    {"hits": [], "next_offset": "3"},
    {"hits": [{"path": "a.md", "trail": [1]}]},
    {"hits": [], "tree": {"name": "a", "children": [{"children": []}]}},
]


def test_the_listed_output_schema_accepts_and_refuses_what_the_full_one_does() -> None:
    full, lean = Page.model_json_schema(), output_schema(Page)
    assert full is not None and lean is not None
    for document in GOOD:
        jsonschema.validate(document, full)
        jsonschema.validate(document, lean)
    for document in BAD:
        for schema in (full, lean):
            with pytest.raises(jsonschema.ValidationError):
                jsonschema.validate(document, schema)
