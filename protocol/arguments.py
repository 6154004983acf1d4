"""Tool arguments as models send them: the names they commonly use, checked before the SDK reads
them, so a wrong one gets a sentence naming it instead of being silently ignored."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

ALIASES = {"q": "query", "text": "query", "limit": "k", "top_k": "k", "n": "k"}
"""Argument names models commonly use, accepted for the canonical ones."""
EMPTY_QUERY = "query is required: pass a non-empty 'query' string"


def normalise(tool: str, schema: Mapping[str, Any], arguments: Mapping[str, Any]) -> dict[str, Any] | str:
    """The arguments under their canonical names, or why they cannot be taken: an unknown name
    (the SDK would ignore it), the same argument twice, or `true`/`false` where a number is meant
    (pydantic would read them as 1 and 0). A number given as a string ("7") is left to pydantic,
    which accepts it."""
    properties = schema.get("properties", {})
    fixed: dict[str, Any] = {}
    for key, value in arguments.items():
        canonical = key if key in properties else ALIASES.get(key, key)
        if canonical not in properties:
            accepted = ", ".join(sorted(properties)) or "no arguments"
            return f"unknown argument {key!r} for {tool}; it takes: {accepted}"
        if canonical in fixed:
            return f"{key!r} and {canonical!r} are the same argument for {tool}: pass one"
        if isinstance(value, bool) and _integer(properties[canonical]):
            return f"{canonical} must be a whole number, not {str(value).lower()}"
        fixed[canonical] = value
    return fixed


def _integer(schema: Mapping[str, Any]) -> bool:
    types = [schema.get("type")] + [option.get("type") for option in schema.get("anyOf", [])]
    return "integer" in types
