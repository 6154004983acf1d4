"""Tool arguments as models send them: the names they commonly use, checked before the SDK reads
them, so a wrong one gets a sentence naming it instead of being silently ignored; and numbers,
read by one rule for every numeric argument of every tool (see `whole_number`)."""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from typing import Any

ALIASES = {"q": "query", "text": "query", "limit": "k", "top_k": "k", "n": "k"}
"""Argument names models commonly use, accepted for the canonical ones."""
EMPTY_QUERY = "query is required: pass a non-empty 'query' string"
_WHOLE = re.compile(r"[+-]?[0-9]+(?:\.0+)?")
"""A whole number written as a string: `"7"`, `"-3"`, `"7.0"` (not `"1e1"`, `"7.5"`, `"seven"`)."""


def normalise(tool: str, schema: Mapping[str, Any], arguments: Mapping[str, Any]) -> dict[str, Any] | str:
    """The arguments under their canonical names, numbers read by `whole_number`, or why they
    cannot be taken: an unknown name (the SDK would ignore it), the same argument twice, or a
    number argument that is no whole number."""
    properties = schema.get("properties", {})
    fixed: dict[str, Any] = {}
    for key, value in arguments.items():
        canonical = key if key in properties else ALIASES.get(key, key)
        if canonical not in properties:
            accepted = ", ".join(sorted(properties)) or "no arguments"
            return f"unknown argument {key!r} for {tool}; it takes: {accepted}"
        if canonical in fixed:
            return f"{key!r} and {canonical!r} are the same argument for {tool}: pass one"
        if _integer(properties[canonical]):
            value = whole_number(canonical, properties[canonical], value)
            if isinstance(value, str):
                return value
        fixed[canonical] = value
    return fixed


def whole_number(name: str, schema: Mapping[str, Any], value: object) -> int | str | None:
    """A numeric argument by the one rule of every tool: a whole number (`7`, `7.0` or `"7"`) out
    of the range its schema advertises (`minimum`, `maximum`) is clamped to the nearest end of it;
    NaN, infinities, fractions, booleans, other strings, lists, objects, and null where the
    argument cannot be null, are refused. Returns the number (None: a null the argument takes),
    or the sentence that refuses it (`k must be a whole number, not 2.5`)."""
    if value is None and _nullable(schema):
        return None
    number: int | None = None
    if isinstance(value, bool):
        number = None  # pydantic would read true and false as 1 and 0
    elif isinstance(value, int):
        number = value
    elif isinstance(value, float) and math.isfinite(value) and value.is_integer():
        number = int(value)
    elif isinstance(value, str) and _WHOLE.fullmatch(value.strip()):
        number = _parse(value.strip())
    if number is None:
        return f"{name} must be a whole number, not {_shown(value)}"
    low, high = schema.get("minimum"), schema.get("maximum")
    if low is not None:
        number = max(number, low)
    if high is not None:
        number = min(number, high)
    return number


def _parse(text: str) -> int | None:
    try:
        return int(text.split(".")[0])
    except ValueError:  # more digits than Python reads from a string (4,300)
        return None


def _shown(value: object) -> str:
    """A refused value as JSON writes it (`true`, `null`, `NaN`, `2.5`, `"seven"`), cut short."""
    try:
        text = json.dumps(value)
    except (TypeError, ValueError):
        text = type(value).__name__
    return text if len(text) <= 40 else text[:37] + "..."


def _integer(schema: Mapping[str, Any]) -> bool:
    return "integer" in _types(schema)


def _nullable(schema: Mapping[str, Any]) -> bool:
    return "null" in _types(schema)


def _types(schema: Mapping[str, Any]) -> list[object]:
    return [schema.get("type")] + [option.get("type") for option in schema.get("anyOf", [])]
