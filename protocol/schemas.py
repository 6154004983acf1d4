"""Each tool's schemas as `tools/list` gives them: what clients validate, without what only costs
bytes, so that `tools/list` stays under 16 KB. pydantic writes them (`Lean`, `Bare`): the input
schema without titles (each repeats its property's name) or null defaults; the output schema as
clients validate structured content, types, `required` and every constraint, without annotations
(every field is documented in docs/contracts.md). Then each subschema of an output schema is
written once (`inline_defs`, `shared_defs`), which pydantic does not do. Nothing a validator
reads is lost, nor a description a model reads; a nullable value stays an `anyOf` with null (a
`type` list is legal JSON Schema but less portable: the Inspector's --strict flags it)."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Collection, Iterator, Mapping
from functools import lru_cache
from typing import Any

from mcp.server.mcpserver import MCPServer
from pydantic import BaseModel, TypeAdapter
from pydantic.json_schema import GenerateJsonSchema, JsonSchemaMode, JsonSchemaValue
from pydantic_core import CoreSchema, core_schema

_SUBSCHEMAS = ("items", "additionalProperties", "not", "if", "then", "else", "contains", "propertyNames")
_SCHEMA_LISTS = ("anyOf", "oneOf", "allOf", "prefixItems")
_SCHEMA_MAPS = ("properties", "patternProperties", "$defs", "definitions")
_NOTES = ("title", "description", "default", "examples")
"""Annotations: what a schema says about a value without constraining it."""
_DEFS = "#/$defs/"


class Lean(GenerateJsonSchema):
    """An input schema: no title, and no null default (a null default says nothing)."""

    dropped: tuple[str, ...] = ("title",)

    def field_title_should_be_set(self, schema: Any) -> bool:
        return False

    def default_schema(self, schema: core_schema.WithDefaultSchema) -> JsonSchemaValue:
        found = super().default_schema(schema)
        return {k: v for k, v in found.items() if k != "default" or v is not None}

    def model_schema(self, schema: core_schema.ModelSchema) -> JsonSchemaValue:
        return {k: v for k, v in super().model_schema(schema).items() if k not in self.dropped}

    def dataclass_schema(self, schema: core_schema.DataclassSchema) -> JsonSchemaValue:
        return {k: v for k, v in super().dataclass_schema(schema).items() if k not in self.dropped}

    def generate(self, schema: CoreSchema, mode: JsonSchemaMode = "validation") -> JsonSchemaValue:
        return {k: v for k, v in super().generate(schema, mode).items() if k not in self.dropped}


class Bare(Lean):
    """An output schema: no annotation anywhere."""

    dropped = _NOTES

    def generate_inner(self, schema: Any) -> JsonSchemaValue:
        return {k: v for k, v in super().generate_inner(schema).items() if k not in _NOTES}


def input_schema(arguments: type[BaseModel]) -> dict[str, Any]:
    """A tool's input schema, from the model of its arguments, as `tools/list` gives it."""
    return arguments.model_json_schema(by_alias=True, schema_generator=Lean)


@lru_cache(maxsize=16)  # the same few result types for every server
def output_schema(output: Any) -> dict[str, Any]:
    """A tool's output schema, from the type of its structured content, as `tools/list` gives it."""
    return shared_defs(inline_defs(TypeAdapter(output).json_schema(schema_generator=Bare)))


def inline_defs(schema: dict[str, Any]) -> dict[str, Any]:
    """`schema` with each `$defs` entry that is used once, and refers to no definition itself,
    written where it is used, until none is left (a recursive definition stays)."""
    while True:
        defs: dict[str, Any] = schema.get("$defs", {})
        uses: dict[str, int] = {}
        _count_refs(schema, uses)
        name = next((n for n in defs if uses.get(n) == 1 and not _has_ref(defs[n])), None)
        if name is None:
            return schema
        rest = {k: v for k, v in defs.items() if k != name}
        body = {k: v for k, v in schema.items() if k != "$defs"}
        schema = _replace_ref(body, _DEFS + name, defs[name])
        if rest:
            schema["$defs"] = {k: _replace_ref(v, _DEFS + name, defs[name]) for k, v in rest.items()}


def shared_defs(schema: dict[str, Any]) -> dict[str, Any]:
    """`schema` with each subschema it repeats, where a reference is shorter than the copies,
    written once in `$defs` and referred to, the biggest saving first, until none is left:
    `{"anyOf": [{"type": "string"}, {"type": "null"}]}`, written five times, becomes the
    definition `nstr` and five references to it."""
    defs: dict[str, Any] = dict(schema.get("$defs", {}))
    body = {k: v for k, v in schema.items() if k != "$defs"}
    while True:
        counts: Counter[str] = Counter()
        for tree in (body, *defs.values()):
            for node in _subschemas(tree):
                if "$ref" not in node:
                    counts[_canonical(node)] += 1
        best: tuple[int, str, str] = (0, "", "")
        for text, n in counts.items():
            name = _name(json.loads(text), defs)
            saving = n * (len(text) - len(_canonical({"$ref": _DEFS + name}))) - len(text) - len(name) - 4
            if n > 1 and saving > best[0]:
                best = (saving, text, name)
        _, text, name = best
        if not text:
            break
        node = json.loads(text)
        body = _replace_node(body, node, {"$ref": _DEFS + name})
        defs = {k: _replace_node(v, node, {"$ref": _DEFS + name}) for k, v in defs.items()}
        defs[name] = node
    return {**body, "$defs": defs} if defs else body


_SHORT = {"integer": "int", "string": "str", "number": "num", "boolean": "bool", "object": "obj", "array": "list"}


def _name(node: Mapping[str, Any], taken: Collection[str]) -> str:
    """A short name saying what a shared subschema is: `nint` (an integer or null), `strs` (a list
    of strings), else `def`; numbered when taken."""
    options = node.get("anyOf")
    kind = node.get("type")
    base = "def"
    if isinstance(options, list) and len(options) == 2 and options[1] == {"type": "null"}:
        first = options[0]
        if isinstance(first, dict) and set(first) == {"type"} and first["type"] in _SHORT:
            base = f"n{_SHORT[first['type']]}"
    elif kind == "array" and set(node) == {"type", "items"}:
        items = node["items"]
        if isinstance(items, dict) and set(items) == {"type"} and items["type"] in _SHORT:
            base = f"{_SHORT[items['type']]}s"
    name, n = base, 1
    while name in taken:
        n += 1
        name = f"{base}{n}"
    return name


def _subschemas(node: Mapping[str, Any]) -> Iterator[Mapping[str, Any]]:
    """Every schema inside `node` (not `node` itself), in the places a schema goes."""
    for key, value in node.items():
        inner: list[object] = []
        if key in _SUBSCHEMAS:
            inner = [value]
        elif key in _SCHEMA_LISTS and isinstance(value, list):
            inner = list(value)
        elif key in _SCHEMA_MAPS and key not in ("$defs", "definitions") and isinstance(value, Mapping):
            inner = list(value.values())
        for sub in inner:
            if isinstance(sub, Mapping):
                yield sub
                yield from _subschemas(sub)


def _replace_node(node: Mapping[str, Any], old: object, new: dict[str, Any]) -> dict[str, Any]:
    """`node` with every subschema equal to `old` (not `node` itself) replaced by `new`."""
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key in _SUBSCHEMAS and isinstance(value, Mapping):
            out[key] = new if value == old else _replace_node(value, old, new)
        elif key in _SCHEMA_LISTS and isinstance(value, list):
            out[key] = [new if v == old else _replace_node(v, old, new) if isinstance(v, Mapping) else v for v in value]
        elif key in _SCHEMA_MAPS and key not in ("$defs", "definitions") and isinstance(value, Mapping):
            out[key] = {
                n: new if v == old else _replace_node(v, old, new) if isinstance(v, Mapping) else v
                for n, v in value.items()
            }
        else:
            out[key] = value
    return out


def _canonical(node: object) -> str:
    return json.dumps(node, sort_keys=True, separators=(",", ":"))


def _count_refs(node: object, uses: dict[str, int]) -> None:
    if isinstance(node, dict):
        ref = node.get("$ref")
        if isinstance(ref, str) and ref.startswith(_DEFS):
            uses[ref.removeprefix(_DEFS)] = uses.get(ref.removeprefix(_DEFS), 0) + 1
        for value in node.values():
            _count_refs(value, uses)
    elif isinstance(node, list):
        for value in node:
            _count_refs(value, uses)


def _has_ref(node: object) -> bool:
    if isinstance(node, dict):
        return "$ref" in node or any(_has_ref(v) for v in node.values())
    return isinstance(node, list) and any(_has_ref(v) for v in node)


def _replace_ref(node: Any, ref: str, definition: dict[str, Any]) -> Any:
    if isinstance(node, dict):
        if node.get("$ref") == ref:
            return {**definition, **{k: v for k, v in node.items() if k != "$ref"}}
        return {k: _replace_ref(v, ref, definition) for k, v in node.items()}
    if isinstance(node, list):
        return [_replace_ref(v, ref, definition) for v in node]
    return node


def lean_schemas(server: MCPServer[Any]) -> None:
    """Each registered tool's schemas replaced by these (`input_schema`, `output_schema`)."""
    for tool in server._tool_manager.list_tools():  # an SDK internal: docs/development.md, "Dependencies"
        tool.parameters = input_schema(tool.fn_metadata.arg_model)
        if tool.fn_metadata.output_model is not None:
            tool.fn_metadata.output_schema = output_schema(tool.fn_metadata.output_model)
