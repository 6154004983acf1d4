"""Tool arguments as models send them, and every refusal as one plain sentence naming the
argument, what was given and what is accepted (never pydantic's text).

`canonical` names the arguments before the SDK reads them: the names models commonly use are
taken for the canonical ones (`ALIASES`); an unknown name (the SDK would ignore it) and the same
argument twice are refused. pydantic reads the values, through the parameter types of
`protocol.descriptions` and the readers here: one rule for every number of every tool (`Whole`),
an enum's choice in any case (`choice`), true or false also written as text (`flag`), a list of
strings also sent as one string (`strings`). `refusal` says what it refused."""

from __future__ import annotations

import json
import math
import re
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import BeforeValidator, GetCoreSchemaHandler, GetJsonSchemaHandler, ValidationError
from pydantic.json_schema import JsonSchemaValue
from pydantic_core import CoreSchema, PydanticCustomError, core_schema

ALIASES = {"q": "query", "text": "query", "limit": "k", "top_k": "k", "n": "k"}
"""Argument names models commonly use, accepted for the canonical ones."""
_WHOLE = re.compile(r"[+-]?[0-9]+(?:\.0+)?")
"""A whole number written as a string: `"7"`, `"-3"`, `"7.0"` (not `"1e1"`, `"7.5"`, `"seven"`)."""
_REFUSED = "refused"
"""The type of a reader's error: its message says what is accepted (`a whole number`)."""


class Refused(ValueError):
    """Arguments not taken: the message is the one sentence that says why."""


def canonical(tool: str, accepted: Collection[str], arguments: Mapping[str, Any]) -> dict[str, Any]:
    """The arguments under their canonical names, in the order sent; `Refused` for a name `tool`
    does not take, or the same argument twice."""
    named: dict[str, Any] = {}
    for key, value in arguments.items():
        name = key if key in accepted else ALIASES.get(key, key)
        if name not in accepted:
            takes = ", ".join(sorted(accepted)) or "no arguments"
            raise Refused(f"unknown argument {key!r} for {tool}; it takes: {takes}")
        if name in named:
            raise Refused(f"{key!r} and {name!r} are the same argument for {tool}: pass one")
        named[name] = value
    return named


def refusal(error: ValidationError, arguments: Mapping[str, Any]) -> str:
    """One sentence for what pydantic refused of `arguments` (as `canonical` named them): the
    first wrong value in the order sent, else the first argument missing (every required argument
    is a string), shown as it was sent. The SDK reads text sent for a parameter that is not a
    plain string as JSON when it is a list or an object (`"[1]"`): that is said too."""
    order = list(arguments)
    errors = error.errors(include_url=False)
    first = min(errors, key=lambda e: (e["type"] == "missing", _index(order, e["loc"][0] if e["loc"] else "")))
    name = str(first["loc"][0]) if first["loc"] else "arguments"
    if first["type"] == "missing":
        return f"{name} is required: pass a non-empty {name!r} string"
    read = first.get("input")
    sent = arguments.get(name, read)
    if first["type"] == _REFUSED:
        return f"{name} must be {first['msg']}, not {_shown(sent)}"
    if isinstance(sent, str) and not isinstance(read, str):
        return f"{name} cannot be {_shown(sent)}: the server reads that text as JSON {_shown(read)}; pass other text"
    if first["type"] == "string_type":
        return f"{name} must be a string, not {_shown(sent)}"
    reason = str(first.get("msg", "not accepted")).splitlines()[0].rstrip(".")
    return f"{name} cannot be {_shown(sent)}: {reason[:1].lower()}{reason[1:]}"


@dataclass(frozen=True, slots=True)
class Whole:
    """A number argument, by the one rule of every tool: its schema advertises its range as
    `minimum` and `maximum` (what a model should send), and a whole number (`7`, `7.0` or `"7"`)
    out of it is clamped to the nearest end, never refused. NaN, infinities, fractions,
    booleans (pydantic would read them as 1 and 0), other strings, lists, objects, and null where
    the argument cannot be null, are refused."""

    low: int
    high: int | None = None

    def __get_pydantic_core_schema__(self, source: Any, handler: GetCoreSchemaHandler) -> CoreSchema:
        return core_schema.no_info_before_validator_function(self.read, handler(source))

    def __get_pydantic_json_schema__(self, schema: CoreSchema, handler: GetJsonSchemaHandler) -> JsonSchemaValue:
        bounds = {"minimum": self.low} if self.high is None else {"minimum": self.low, "maximum": self.high}
        return {**handler(schema), **bounds}

    def read(self, value: object) -> int:
        number = whole_number(value)
        if number is None:
            raise PydanticCustomError(_REFUSED, "a whole number")
        number = max(number, self.low)
        return number if self.high is None else min(number, self.high)


def whole_number(value: object) -> int | None:
    """`value` as a whole number, or None when it is none."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and math.isfinite(value) and value.is_integer():
        return int(value)
    if isinstance(value, str) and _WHOLE.fullmatch(value.strip()):
        try:
            return int(value.strip().split(".")[0])
        except ValueError:  # more digits than Python reads from a string (4,300)
            return None
    return None


def choice(choices: Sequence[str]) -> BeforeValidator:
    """An enum argument: one of `choices`, in any case."""

    def read(value: object) -> str:
        wanted = value.strip().casefold() if isinstance(value, str) else None
        for option in choices:
            if option.casefold() == wanted:
                return option
        raise PydanticCustomError(_REFUSED, f"{_one_of(choices)} (any case)")

    return BeforeValidator(read)


def _flag(value: object) -> bool:
    if isinstance(value, str) and value.strip().casefold() in ("true", "false"):
        return value.strip().casefold() == "true"  # as models often write it
    if isinstance(value, bool):
        return value
    raise PydanticCustomError(_REFUSED, "true or false")


flag = BeforeValidator(_flag)
"""A true-or-false argument: `true`, `false`, or either written as text in any case."""


def strings(most: int) -> BeforeValidator:
    """A list of at most `most` strings: a list, a JSON list written as a string, or one string
    (taken as a list of it, as models often send it)."""

    def read(value: object) -> list[str]:
        taken = value
        if isinstance(value, str):
            try:
                taken = json.loads(value) if value.lstrip().startswith("[") else [value]
            except ValueError:
                taken = [value]
        if isinstance(taken, list) and all(isinstance(v, str) for v in taken) and len(taken) <= most:
            return taken
        raise PydanticCustomError(_REFUSED, f"a list of at most {most} strings")

    return BeforeValidator(read)


def _index(order: list[str], name: object) -> int:
    return order.index(name) if name in order else len(order)


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
