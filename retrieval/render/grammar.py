"""The text grammar every answer shares (the contract is in the README, "Output grammar").

A text result is BODY, a blank line, then one STATUS line `[agents-context key=value ...]`.
STATUS is the only place new fields appear; a value with spaces or quotes is a JSON string.
Attribute values in `<context ...>` tags are XML-escaped.
"""

from __future__ import annotations

import json
from collections.abc import Mapping

from retrieval.render.schema import utc
from retrieval.search.answer import Freshness
from retrieval.search.policy import shorten

ECHO_CHARS = 200
"""A query quoted back in a miss line is cut to this many characters (the budget must hold)."""
MAX_ATTRIBUTE_CHARS = 512
"""A heading shown as an attribute is cut to this many characters, once escaped."""


def status_line(fields: Mapping[str, object]) -> str:
    return "[agents-context " + " ".join(f"{k}={_value(v)}" for k, v in fields.items()) + "]"


def _value(value: object) -> str:
    text = str(value)
    return json.dumps(text, ensure_ascii=False) if (not text or any(c in text for c in ' "=]\n')) else text


def with_status(body: str, fields: Mapping[str, object]) -> str:
    return f"{body}\n\n{status_line(fields)}"


def freshness_fields(fresh: Freshness) -> dict[str, object]:
    """The STATUS fields that say how current an answer is: `gen`, `fresh_as_of` and `changed`."""
    fields: dict[str, object] = {"gen": fresh.generation, "fresh_as_of": utc(fresh.fresh_as_of)}
    if fresh.last is not None:
        fields["changed"] = fresh.last.count
    return fields


def escape_attribute(value: str, limit: int | None = None) -> str:
    """XML-escaped; `limit` (characters once escaped) shortens free text (a heading), never a
    path or URI."""
    escaped = _escape(value)
    if limit is None or len(escaped) <= limit:
        return escaped
    kept: list[str] = []
    used = 0
    for c in value:
        e = _escape(c)
        if used + len(e) > limit - 1:
            break
        kept.append(e)
        used += len(e)
    return "".join(kept) + "…"


def _escape(value: str) -> str:
    return value.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace('"', "&quot;")


def echo(query: str) -> str:
    """The query as quoted back in a miss line: at most `ECHO_CHARS` characters."""
    return shorten(query, ECHO_CHARS)
