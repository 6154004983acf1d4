"""Tool arguments as models send them, checked before the SDK reads them: the names they commonly
use, and every value against the type its schema advertises, so that whatever is wrong gets one
plain sentence naming the argument, what was given and what is accepted (never pydantic's text).
Numbers are read by one rule for every numeric argument of every tool (see `whole_number`); the
choices of an enum are matched in any case."""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError

ALIASES = {"q": "query", "text": "query", "limit": "k", "top_k": "k", "n": "k"}
"""Argument names models commonly use, accepted for the canonical ones."""
EMPTY_QUERY = "query is required: pass a non-empty 'query' string"
_WHOLE = re.compile(r"[+-]?[0-9]+(?:\.0+)?")
"""A whole number written as a string: `"7"`, `"-3"`, `"7.0"` (not `"1e1"`, `"7.5"`, `"seven"`)."""


@dataclass(frozen=True, slots=True)
class Refused:
    """Why an argument's value is not taken: one sentence."""

    sentence: str


def normalise(tool: str, schema: Mapping[str, Any], arguments: Mapping[str, Any]) -> dict[str, Any] | str:
    """The arguments under their canonical names, each value as its schema takes it (numbers read
    by `whole_number`, an enum's choice in its own case), or the one sentence that says why they
    cannot be taken: an unknown name (the SDK would ignore it), the same argument twice, a value of
    the wrong type, or a required argument missing."""
    properties: Mapping[str, Any] = schema.get("properties", {})
    fixed: dict[str, Any] = {}
    for key, value in arguments.items():
        canonical = key if key in properties else ALIASES.get(key, key)
        if canonical not in properties:
            accepted = ", ".join(sorted(properties)) or "no arguments"
            return f"unknown argument {key!r} for {tool}; it takes: {accepted}"
        if canonical in fixed:
            return f"{key!r} and {canonical!r} are the same argument for {tool}: pass one"
        taken = check(canonical, properties[canonical], value)
        if isinstance(taken, Refused):
            return taken.sentence
        fixed[canonical] = taken
    for name in schema.get("required", ()):
        if name not in fixed:
            return missing(name, properties.get(name, {}))
    return fixed


def check(name: str, schema: Mapping[str, Any], value: object) -> object:
    """`value` as the argument `name` takes it, or the `Refused` sentence: a null only where the
    schema allows one, a whole number (`whole_number`), one of an enum's choices in any case, a
    string, true or false (also written as a string); anything the schema does not type is taken as it is."""
    types = _types(schema)
    if value is None and "null" in types:
        return None
    choices = _choices(schema)
    if choices:
        if isinstance(value, str):
            wanted = value.strip().casefold()
            for choice in choices:
                if isinstance(choice, str) and choice.casefold() == wanted:
                    return choice
        return Refused(f"{name} must be {_one_of(choices)} (any case), not {_shown(value)}")
    if "integer" in types:
        number = whole_number(name, schema, value)
        return Refused(number) if isinstance(number, str) else number
    if "string" in types:
        return value if isinstance(value, str) else Refused(f"{name} must be a string, not {_shown(value)}")
    if "array" in types:
        return strings(name, schema, value)
    if "boolean" in types:
        if isinstance(value, str) and value.strip().casefold() in ("true", "false"):
            return value.strip().casefold() == "true"  # as models often write it
        return value if isinstance(value, bool) else Refused(f"{name} must be true or false, not {_shown(value)}")
    return value


def strings(name: str, schema: Mapping[str, Any], value: object) -> object:
    """A list of strings argument: a list, a JSON list written as a string, or one string (taken
    as a list of it, as models often send it), of at most its `maxItems` strings."""
    most = next((o["maxItems"] for o in [schema, *schema.get("anyOf", [])] if "maxItems" in o), None)
    read = value
    if isinstance(value, str):
        try:
            read = json.loads(value) if value.lstrip().startswith("[") else [value]
        except ValueError:
            read = [value]
    if isinstance(read, list) and all(isinstance(v, str) for v in read) and (most is None or len(read) <= most):
        return read
    wanted = "a list of strings" if most is None else f"a list of at most {most} strings"
    return Refused(f"{name} must be {wanted}, not {_shown(value)}")


def missing(name: str, schema: Mapping[str, Any]) -> str:
    """The sentence for a required argument that was not given."""
    if "string" in _types(schema):
        return f"{name} is required: pass a non-empty {name!r} string"
    return f"{name} is required"


def refusal(error: ValidationError, arguments: Mapping[str, Any]) -> str:
    """One sentence for what the SDK's own validation refused after `normalise` took the arguments
    (the SDK reads a string that is JSON, such as `"[1]"`, as the JSON value when the parameter is
    not a plain string): the argument, the value as it was sent, and pydantic's short reason,
    without its link or its repetition of the input."""
    first = error.errors(include_url=False)[0]
    name = str((first.get("loc") or ("arguments",))[0])
    if first.get("type") == "missing":
        return missing(name, {})
    read = first.get("input")
    sent = arguments.get(name, read)
    if isinstance(sent, str) and not isinstance(read, str):
        return f"{name} cannot be {_shown(sent)}: the server reads that text as JSON {_shown(read)}; pass other text"
    reason = str(first.get("msg", "not accepted")).splitlines()[0].rstrip(".")
    return f"{name} cannot be {_shown(sent)}: {reason[:1].lower()}{reason[1:]}"


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


def _one_of(choices: Sequence[object]) -> str:
    shown = [json.dumps(c) for c in choices]
    return shown[0] if len(shown) == 1 else f"one of {', '.join(shown[:-1])} or {shown[-1]}"


def _choices(schema: Mapping[str, Any]) -> list[object]:
    """An enum's choices, of the schema or of one of its `anyOf` options (a nullable enum)."""
    for option in [schema, *schema.get("anyOf", [])]:
        if "enum" in option:
            return list(option["enum"])
    return []


def _nullable(schema: Mapping[str, Any]) -> bool:
    return "null" in _types(schema)


def _types(schema: Mapping[str, Any]) -> list[object]:
    found: list[object] = []
    for option in [schema, *schema.get("anyOf", [])]:
        kind = option.get("type")
        found += kind if isinstance(kind, list) else [kind]
    return found
