"""Reading a query: its words, its quoted phrases, and whether it names a file."""

from __future__ import annotations

import re
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass

MAX_QUERY_CHARS = 4096
"""Longer queries are cut to this many characters (and a note in STATUS says so): a query is a few
words, and an 8 MB one must not cost seconds."""
MAX_QUERY_TERMS = 64

Tokenize = Callable[[str], Sequence[str]]
"""Text to index terms (`retrieval.text.tokenize.tokenize`, or another configured one)."""

_QUOTED = re.compile(r'"([^"]+)"|“([^”]+)”')
_FILENAME = re.compile(r"^[^\s\"']+\.[A-Za-z0-9]{1,10}$")


@dataclass(frozen=True, slots=True)
class Query:
    raw: str
    terms: tuple[str, ...]
    """Every indexed term of the query, phrase words included, in order."""
    phrases: tuple[tuple[str, ...], ...]
    """Quoted phrases of two or more terms: they must occur as written, term after term."""
    quoted: tuple[str, ...]
    """The phrases as the user typed them, for messages."""
    clipped: bool = False
    """The query was longer than `MAX_QUERY_CHARS` or had more than `MAX_QUERY_TERMS` terms, and was cut."""


def clip(raw: str) -> str:
    """The query as searched: at most `MAX_QUERY_CHARS` characters."""
    return raw[:MAX_QUERY_CHARS]


def parse(raw: str, tokenize: Tokenize) -> Query:
    """The query's terms and phrases, cut to `MAX_QUERY_CHARS` characters and `MAX_QUERY_TERMS` terms."""
    long = len(raw) > MAX_QUERY_CHARS
    raw = clip(raw)
    phrases: list[tuple[str, ...]] = []
    quoted: list[str] = []
    for match in _QUOTED.finditer(raw):
        text = match.group(1) or match.group(2) or ""
        words = tuple(tokenize(text))
        if len(words) >= 2:
            phrases.append(words)
            quoted.append(text)
    terms = tuple(tokenize(raw))
    clipped = long or len(terms) > MAX_QUERY_TERMS
    return Query(raw, terms[:MAX_QUERY_TERMS], tuple(phrases), tuple(quoted), clipped)


def contains(tokens: Sequence[Hashable], phrase: Sequence[Hashable]) -> bool:
    """`phrase` occurs in `tokens` as a contiguous run."""
    n = len(phrase)
    first = phrase[0]
    return any(tokens[i] == first and tuple(tokens[i : i + n]) == tuple(phrase) for i in range(len(tokens) - n + 1))


def looks_like_path(raw: str) -> bool:
    """`security.md`, `.AGENTS/services/api.md`, `docs/guide/`: a file or folder, not words."""
    text = raw.strip().strip("`'\"")
    return bool(text) and (("/" in text and " " not in text) or bool(_FILENAME.match(text)))
