"""The text grammar every answer shares (the contract is in docs/contracts.md, "Output grammar").

A text result is BODY, a blank line, then one STATUS line `[agents-context key=value ...]`.
STATUS is the only place new fields appear; a value with spaces or quotes is a JSON string.
Attribute values in `<context ...>` tags are XML-escaped.

The grammar cannot be forged, and this module is the one place that makes sure (docs/contracts.md, "Output
grammar", "What is escaped"): corpus text goes through `neutralise` (a line that would read as a
delimiter of the grammar or as a STATUS line gets a backslash before its first visible character)
and every path, heading or other value printed inside a line goes through `inline` (control,
invisible format and line-separator characters become visible escapes such as `\\n`). The
structured content is never escaped.
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Generic, TypeVar

from corpus.names import shorten

if TYPE_CHECKING:
    from retrieval.search.request import Freshness, RootCondition

ECHO_CHARS = 200
"""A query quoted back in a miss line is cut to this many characters (the budget must hold)."""
MAX_ATTRIBUTE_CHARS = 512
"""A heading shown as an attribute is cut to this many characters, once escaped."""


def utc(moment: float) -> str:
    """`2026-11-22T06:45:12.345Z`."""
    stamp = datetime.fromtimestamp(moment, tz=timezone.utc).isoformat(timespec="milliseconds")
    return stamp.replace("+00:00", "Z")


def status_line(fields: Mapping[str, object]) -> str:
    return "[agents-context " + " ".join(f"{k}={_value(v)}" for k, v in fields.items()) + "]"


def _value(value: object) -> str:
    """The value as is, or a JSON string when it holds a space, `"`, `=`, `]` or a character that
    is not printable (escaped as JSON does, `\\u2028`, so the STATUS line stays one line)."""
    text = str(value)
    if text and text.isprintable() and not any(c in text for c in ' "=]'):
        return text
    return "".join(c if c.isprintable() else json.dumps(c)[1:-1] for c in json.dumps(text, ensure_ascii=False))


R = TypeVar("R")


@dataclass(frozen=True, slots=True)
class Rendered(Generic[R]):
    """An answer as a client reads it: its BODY and its STATUS line apart, so no caller parses
    them back out of the text, and its structured content (`result`; None for a text answer)."""

    body: str
    status: str
    result: R

    @property
    def text(self) -> str:
        """BODY, a blank line, STATUS: the text result."""
        return f"{self.body}\n\n{self.status}"


def rendered(body: str, fields: Mapping[str, object], result: R) -> Rendered[R]:
    """BODY and STATUS. A BODY line that would read as a STATUS line is neutralised here too,
    whoever wrote the BODY, so every answer has exactly one STATUS line: its last."""
    return Rendered(_neutralise(body, _STATUS_LOOKALIKE), status_line(fields), result)


def with_status(body: str, fields: Mapping[str, object]) -> str:
    """BODY, a blank line, STATUS (`rendered`'s text)."""
    return rendered(body, fields, None).text


# --- what keeps the grammar unforgeable ---------------------------------------------------------

_LINE_BREAK = re.compile(r"(\r\n|[\n\r\v\f\x1c\x1d\x1e\x85\u2028\u2029])")
"""Every line boundary `str.splitlines` knows: a model or a client may break a line at any of them."""
_STATUS_LOOKALIKE = re.compile(r"\[agents-context", re.IGNORECASE)
_LOOKALIKE = re.compile(
    r"""
      </?context(?![\w.:-])        # a <context ...>, <context ... /> or </context> tag
    | \[agents-context              # a STATUS line
    | \[(?:\.\.\.|…)               # a cut marker: [... cut at line N of A-B]
    | \[\d+\ (?:more\ )?hits?\b     # search_docs' footer [N hits, ...], or [N more hits left out]
    | -{3,}[\ \t]+[^\s|:-]         # a search_docs header: --- path#chunk (score=...) ---
    """,
    re.IGNORECASE | re.VERBOSE,
)
"""What a line may not start with (after blanks) in BODY, unless the grammar itself wrote it.
A markdown rule (`---`), a table row (`--- | ---`) and a mention of `<context>` mid-line do not match."""
_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}
_INVISIBLE = frozenset(("Cc", "Cf", "Zl", "Zp"))
"""Control, format (zero-width, bidirectional, tag) and line or paragraph separator characters."""


def neutralise(text: str) -> str:
    """Corpus text as BODY shows it: verbatim, except that each line that would read as a
    delimiter of the grammar (a `<context>` tag, a search_docs header, a footer or cut marker) or
    as a STATUS line gets a backslash before its first visible character (the markdown escape)."""
    return _neutralise(text, _LOOKALIKE)


def _neutralise(text: str, lookalike: re.Pattern[str]) -> str:
    if not lookalike.search(text):  # a cheap first look, anywhere: most text has nothing to do
        return text
    parts = _LINE_BREAK.split(text)  # lines at even indexes, the line breaks between them
    for i in range(0, len(parts), 2):
        line = parts[i]
        start = 0
        while start < len(line) and (line[start].isspace() or unicodedata.category(line[start]) == "Cf"):
            start += 1
        if lookalike.match(line, start):
            parts[i] = f"{line[:start]}\\{line[start:]}"
    return "".join(parts)


def inline(value: str) -> str:
    """A value printed inside a line (a path, a heading, a query): control, invisible format and
    line-separator characters become visible escapes (`\\n`, `\\r`, `\\t`, `\\x1b`, `\\u2028`,
    `\\U000e0041`), so the value stays on its line and shows every character it has."""
    if value.isprintable():
        return value
    return "".join(_visible(c) if unicodedata.category(c) in _INVISIBLE else c for c in value)


def _visible(c: str) -> str:
    code = ord(c)
    if c in _NAMED:
        return _NAMED[c]
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"


def freshness_fields(fresh: Freshness) -> dict[str, object]:
    """The STATUS fields that say how current an answer is: `gen`, `fresh_as_of` and `changed`."""
    fields: dict[str, object] = {"gen": fresh.generation}
    if fresh.fresh_as_of is not None:  # None: no searched root is indexed yet (`indexing` says so)
        fields["fresh_as_of"] = utc(fresh.fresh_as_of)
    if fresh.last is not None:
        fields["changed"] = fresh.last.count
    return fields


def condition_words(condition: RootCondition) -> str:
    """How far a root's first indexing got (`12/30` once the files to read are known, else its
    phase: `indexing`, `checking`), or `changing`: the STATUS `indexing` value after its label,
    and `context_status`'s `indexing`."""
    if condition.phase is not None:
        return f"{condition.done}/{condition.total}" if condition.counted else condition.phase.value
    return "changing"


def conditions_field(conditions: tuple[RootCondition, ...]) -> str:
    """The STATUS `indexing` value: `label:12/30,label:changing`."""
    return ",".join(f"{c.label}:{condition_words(c)}" for c in conditions)


def escape_attribute(value: str, limit: int | None = None) -> str:
    """`inline`, then XML-escaped; `limit` (characters once escaped) shortens free text (a
    heading), never a path or URI."""
    escaped = _escape(inline(value))
    if limit is None or len(escaped) <= limit:
        return escaped
    kept: list[str] = []
    used = 0
    for c in value:
        e = _escape(inline(c))
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


def status_echo(text: str) -> str:
    """`text` shortened (ending `…`) so that as a STATUS value, escapes and quotes included, it
    takes at most `ECHO_CHARS` characters: a value of astral or control characters escapes to up to
    12 characters each, and shortened by characters alone it could outgrow the whole budget."""
    keep = ECHO_CHARS
    shown = shorten(text, keep)
    while len(_value(shown)) > ECHO_CHARS:
        keep -= max(1, (len(_value(shown)) - ECHO_CHARS) // 12)
        shown = shorten(text, keep)
    return shown
