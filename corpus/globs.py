"""A rule's glob matched against a file's path in time linear in the path's length.

The syntax is gitignore's, read as pathspec's `GitIgnoreSpec` reads it (`corpus.conventions.valid`
still asks pathspec whether a glob is one): a name alone matches at any depth, a leading `/`
anchors, `**` is any number of folders, a trailing `/` matches what a folder holds, `!` negates,
and a pattern that matches a folder matches what it holds. pathspec matches with one backtracking
regular expression per pattern, whose time grows with the path's length to the power of the
pattern's `**`s: `**/a/**/b/**/c/**/*.ts` took 13 s on a path of 1,500 characters. Here a pattern
is matched folder by folder (`_Pattern.match`): each of its segments is tried once on each of the
path's names, and a segment's `*`s on a name take one pass (`_Segment`).

Where pathspec's expressions let a bracket (`[!a]`) or a `*` cross a `/`, or a newline stop a
`**`, this follows git, which never does either.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Sequence

_FILE = 2
"""A pattern matched the path itself: it outranks one that matched a folder of it."""
_FOLDER = 1


class InvalidGlob(ValueError):
    """Not a gitignore pattern (nothing left once read, or a trailing escape)."""


class _Segment:
    """One segment of a pattern (`*.ts`, `api`, `v[0-9]`): fixed-length pieces between `*`s,
    each a regular expression of single characters. The first piece is matched at the start of
    a name, the last at its end and the others leftmost between them: one pass, however many
    `*`s (a single expression for `*a*a*a*b` backtracks for ever on a name of `a`s).

    The classes here are plain, not dataclasses: the hook imports this module, and each dataclass
    costs its start half a millisecond."""

    __slots__ = ("pieces", "sizes")

    def __init__(self, pieces: tuple[re.Pattern[str], ...], sizes: tuple[int, ...]) -> None:
        self.pieces = pieces
        self.sizes = sizes

    def match(self, name: str) -> bool:
        if len(self.pieces) == 1:
            return self.pieces[0].fullmatch(name) is not None
        start, end = self.sizes[0], len(name) - self.sizes[-1]
        if end < start or not self.pieces[0].match(name) or not self.pieces[-1].fullmatch(name, end):
            return False
        for piece in self.pieces[1:-1]:
            found = piece.search(name, start, end)
            if found is None:
                return False
            start = found.end()
        return True


class _RangeError(InvalidGlob):
    """An unclosed `[`: git drops such a pattern, and it matches nothing."""


def _segment(glob: str) -> _Segment:
    """A segment as pathspec translates it (`_translate_segment_glob`): `\\` escapes, `*`, `?`,
    and brackets (`[!...]` or `[^...]` negated, a `]` first is literal)."""
    pieces: list[list[str]] = [[]]
    i, end = 0, len(glob)
    while i < end:
        char = glob[i]
        i += 1
        if char == "\\":
            if i == end:
                raise InvalidGlob(f"a trailing escape: {glob!r}")
            pieces[-1].append(re.escape(glob[i]))
            i += 1
        elif char == "*":
            if pieces[-1] or len(pieces) == 1:
                pieces.append([])
        elif char == "?":
            pieces[-1].append(".")
        elif char == "[":
            j = i
            if j < end and glob[j] in "!^":
                j += 1
            if j < end and glob[j] == "]":
                j += 1
            while j < end and glob[j] != "]":
                j += 1
            if j >= end:
                raise _RangeError(f"an unclosed bracket: {glob!r}")
            negated = glob[i] in "!^"
            body = glob[i + 1 if negated else i : j + 1].replace("\\", "\\\\")
            pieces[-1].append("[" + ("^" if negated else "") + body)
            i = j + 1
        else:
            pieces[-1].append(re.escape(char))
    try:
        compiled = tuple(re.compile("".join(p), re.DOTALL) for p in pieces)
    except re.error as exc:  # a bracket Python's expressions cannot read (`[z-a]`)
        raise InvalidGlob(f"{glob!r}: {exc}") from None
    return _Segment(compiled, tuple(len(p) for p in pieces))


_ANY = "any"
"""Special patterns, as pathspec special-cases them: any path (`**`, `*`)..."""
_NESTED = "nested"
"""...or any path below the top (`*/`, `**/`)."""


class _Pattern:
    __slots__ = ("folder_only", "include", "segments", "special")

    def __init__(
        self, include: bool, segments: tuple[_Segment | None, ...], folder_only: bool, special: str = ""
    ) -> None:
        self.include = include
        self.segments = segments
        """None for `**`."""
        self.folder_only = folder_only
        """The pattern ended with `/`."""
        self.special = special

    def match(self, names: Sequence[str]) -> int:
        """0 if the pattern does not match the path of these names; `_FILE` if its first match
        (in the order pathspec's regular expression would find it) is the path, `_FOLDER` if it
        is a folder of the path."""
        n = len(names)
        if self.special == _ANY:
            return _FILE if n else 0
        if self.special == _NESTED:
            return (_FOLDER if self.folder_only else _FILE) if n > 1 else 0
        k = len(self.segments)
        # can[i][p]: segments i.. match from the path's name p on (one pass per segment).
        can = [[False] * (n + 1) for _ in range(k + 1)]
        for i in range(k - 1, -1, -1):
            segment, row, below = self.segments[i], can[i], can[i + 1]
            if segment is None and i == k - 1:  # a trailing `**`: there is something below
                for p in range(n):
                    row[p] = True
            elif segment is None:  # any number of folders, then the rest
                later = False
                for p in range(n, -1, -1):
                    later = later or below[p]
                    row[p] = later
            else:
                for p in range(n):
                    row[p] = (i == k - 1 or below[p + 1]) and segment.match(names[p])
        if not can[0][0]:
            return 0
        p = 0
        for i, segment in enumerate(self.segments):
            if segment is None and i == k - 1:
                return _FOLDER if self.folder_only else _FILE
            if segment is None:  # the longest run of folders first, as a greedy `.+` tries
                p = max(q for q in range(p, n + 1) if can[i + 1][q])
            elif i == k - 1:
                return _FILE if p == n - 1 else _FOLDER
            else:
                p += 1
        raise AssertionError("a pattern ends with a segment or `**`")


def _pattern(line: str) -> _Pattern | None:
    """One line of gitignore syntax, normalised as pathspec's `GitIgnoreSpecPattern` does; None
    for a line that matches nothing (blank, a comment, `/`, an unclosed bracket)."""
    if not line.endswith("\\ "):
        line = line.rstrip()
    if not line or line.startswith("#") or line == "/":
        return None
    include = not line.startswith("!")
    segments = line[0 if include else 1 :].split("/")
    folder_only = not segments[-1]
    if not segments[0]:
        del segments[0]
    elif (len(segments) == 1 or (len(segments) == 2 and not segments[1])) and segments[0] != "**":
        segments.insert(0, "**")
    if not segments:
        raise InvalidGlob(f"nothing to match in {line!r}")
    if not segments[-1]:
        segments[-1] = "**"
    segments = [s for i, s in enumerate(segments) if not (i and s == "**" and segments[i - 1] == "**")]
    if segments == ["**"] or segments == ["**", "*"]:
        return _Pattern(include, (), folder_only, _NESTED if folder_only and segments == ["**"] else _ANY)
    if segments == ["**", "*", "**"]:
        return _Pattern(include, (), folder_only, _NESTED)
    try:
        return _Pattern(include, tuple(None if s == "**" else _segment(s) for s in segments), folder_only)
    except _RangeError:
        return None


_SEPARATORS = [sep for sep in (os.sep, os.altsep) if sep and sep != "/"]


class Globs:
    """Lines of gitignore syntax, as one matcher."""

    __slots__ = ("patterns",)

    def __init__(self, patterns: tuple[_Pattern, ...]) -> None:
        self.patterns = patterns

    @classmethod
    def of(cls, lines: Iterable[str]) -> Globs:
        """Raises `InvalidGlob` for a line that is not gitignore syntax."""
        return cls(tuple(p for p in map(_pattern, lines) if p is not None))

    def match(self, rel: str) -> bool:
        """Whether the patterns take in `rel` (a path from the top, `/`-separated): the last
        pattern that matches the path itself decides, else the last that matches a folder of it."""
        for sep in _SEPARATORS:
            rel = rel.replace(sep, "/")
        rel = rel[1:] if rel.startswith("/") else rel[2:] if rel.startswith("./") else rel
        names = rel.split("/") if rel else []
        decided: bool | None = None
        for pattern in reversed(self.patterns):
            found = pattern.match(names)
            if found == _FILE:
                return pattern.include
            if found and decided is None:
                decided = pattern.include
        return bool(decided)
