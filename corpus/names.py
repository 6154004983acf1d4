"""Names as they come in and go out: a path too long to name any file is refused at once, and a
name that is not UTF-8 is shown escaped, never passed on raw.

A POSIX file name is bytes; Python carries the undecodable ones as lone surrogates, which no JSON
encoder can write. Every path that reaches an answer, a status report or a log line goes through
`printable`, so `odd\\xff` shows as those seven characters and the server never fails to say it.
"""

from __future__ import annotations

import re

_SURROGATE = re.compile("[\ud800-\udfff]")

MAX_PATH_CHARS = 4096
"""The longest path a tool argument or URI may name (Linux's PATH_MAX; Windows' is shorter)."""
MAX_NAME_CHARS = 255
"""The longest file or folder name in it (every common file system's limit)."""
MAX_PATH_NAMES = 256
"""The most folders and files a source path may name (`context_for_path`, the hook): deeper than
any project's tree, far fewer than the 2,048 that `MAX_PATH_CHARS` would allow."""


def too_long(path: str) -> str | None:
    """Why `path` cannot name a file by its length alone, or None: checked before any lookup, so
    a path of thousands of segments is refused at once, with a reason."""
    if len(path) > MAX_PATH_CHARS:
        return f"path too long ({len(path):,} characters): at most {MAX_PATH_CHARS:,}"
    longest = max(len(part) for part in path.replace("\\", "/").split("/"))
    if longest > MAX_NAME_CHARS:
        return f"a name in the path is too long ({longest:,} characters): at most {MAX_NAME_CHARS} per file or folder"
    return None


def too_deep(path: str) -> str | None:
    """Why `path` names too many folders to be a source file of a project, or None."""
    names = sum(1 for part in path.replace("\\", "/").split("/") if part)
    if names > MAX_PATH_NAMES:
        return f"path has too many names ({names:,}): at most {MAX_PATH_NAMES} folders and files"
    return None


def printable(text: str) -> str:
    """`text`, with each byte that was not UTF-8 written `\\xNN` (and any other lone surrogate `\\uNNNN`)."""
    if text.isascii():
        return text
    return _SURROGATE.sub(_escape, text)


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    if 0xDC80 <= code <= 0xDCFF:  # one undecodable byte, as os.fsdecode carries it
        return f"\\x{code - 0xDC00:02x}"
    return f"\\u{code:04x}"


def shorten(text: str, limit: int) -> str:
    """`text`, or its first `limit - 1` characters and `…`."""
    return text if len(text) <= limit else text[: max(limit - 1, 0)] + "…"
