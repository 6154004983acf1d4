"""Text that looks like a credential: found for `doctor`'s `credential` check, and masked in
everything `doctor` prints (messages, fixes, the instructions preview, `--json`).

A credential is never echoed in full: a mask keeps its first four characters and says how long
it was (`ghp_… (40 characters, not shown)`); a private key block keeps its `BEGIN` line only.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence

PATTERNS: Sequence[tuple[str, re.Pattern[str]]] = (
    ("AWS access key", re.compile(r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b")),
    ("GitHub token", re.compile(r"\bgh[pousr]_[A-Za-z0-9]{30,}\b")),
    ("Slack token", re.compile(r"\bxox[abprs]-[A-Za-z0-9-]{10,}\b")),
    ("private key", re.compile(r"-----BEGIN [A-Z ]*PRIVATE KEY-----")),
    ("OpenAI or Anthropic key", re.compile(r"\bsk-(?:ant-)?[A-Za-z0-9_-]{20,}\b")),
    ("JSON web token", re.compile(r"\beyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}\b")),
    (
        "assigned secret",
        re.compile(r"(?i)\b(?:api[_-]?key|secret|token|password|passwd)\s*[:=]\s*['\"]?([A-Za-z0-9+/_\-]{16,})"),
    ),
)
"""Each kind with its pattern; where the pattern has a group, the group is the secret."""

_KEY_BLOCK = re.compile(r"-----BEGIN [A-Z ]*PRIVATE KEY-----(.*?(?:-----END [A-Z ]*PRIVATE KEY-----|\Z))", re.S)
"""A private key's body, up to its END line (or the end of the text, when it is cut)."""


def find(line: str) -> tuple[str, str] | None:
    """The first credential on `line`: its kind and its value, or None."""
    for kind, pattern in PATTERNS:
        match = pattern.search(line)
        if match:
            return kind, match.group(match.lastindex or 0)
    return None


def mask(value: str) -> str:
    return f"{value[:4]}… ({len(value)} characters, not shown)"


def _spans(text: str) -> Iterator[tuple[int, int, bool]]:
    """(start, end, keep_prefix) of every credential in `text`."""
    for kind, pattern in PATTERNS:
        if kind == "private key":
            continue  # its BEGIN line says what it is and stays; _KEY_BLOCK masks the key
        for match in pattern.finditer(text):
            group = match.lastindex or 0
            yield match.start(group), match.end(group), True
    for match in _KEY_BLOCK.finditer(text):
        if match.end(1) > match.start(1):
            yield match.start(1), match.end(1), False


def redact(text: str, limit: int | None = None) -> str:
    """`text` (cut to its first `limit` characters) with every credential masked. The
    credentials are found in the whole text, so one that the cut halves is masked too."""
    merged: list[tuple[int, int, bool]] = []
    for start, end, keep in sorted(_spans(text)):
        if merged and start <= merged[-1][1]:
            first, last, kept = merged[-1]
            merged[-1] = (first, max(last, end), kept and keep)
        else:
            merged.append((start, end, keep))
    cut = len(text) if limit is None else limit
    out: list[str] = []
    position = 0
    for start, end, keep in merged:
        if start >= cut:
            break
        value = text[start:end]
        out += [text[position:start], mask(value) if keep else f"… ({len(value)} characters, not shown)"]
        position = end
    if position < cut:
        out.append(text[position:cut])
    return "".join(out)
