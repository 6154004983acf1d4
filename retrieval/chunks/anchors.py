"""Section anchors (GitHub-style heading slugs) and citations.

`## Secrets` is `#secrets`; a second `## Secrets` in the same file is `#secrets-1`, a third
`#secrets-2` (a `## Secrets 1` after the second is then `#secrets-1-1`: anchors never collide); the
text before the first heading is `#intro`. A citation names the file, the lines
and the heading trail: `.AGENTS/security.md:12-30 (Security > Secrets)`.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable

INTRO_ANCHOR = "intro"
_LINK = re.compile(r"!?\[([^\]]*)\]\([^)]*\)")
_LINE_RANGE = re.compile(r"^L(\d+)(?:-L?(\d+))?$")


def slug(heading: str) -> str:
    """GitHub's slug: lower case; letters, marks, digits, `_`, `-` and spaces kept; spaces to `-`."""
    text = _LINK.sub(r"\1", heading).lower()
    kept = "".join(
        c for c in text if c in " -" or unicodedata.category(c)[0] in "LMN" or unicodedata.category(c) == "Pc"
    )
    return kept.replace(" ", "-") or "section"


def anchors(headings: Iterable[str | None]) -> list[str]:
    """One anchor per section of a file, in order (None: the intro), each unique in the file, as
    GitHub's slugger makes them: a taken slug gets `-1`, `-2`, ... until the result is free, and
    the result is taken in turn (`Setup`, `Setup`, `Setup 1` give `setup`, `setup-1`, `setup-1-1`)."""
    counts: dict[str, int] = {}
    out: list[str] = []
    for heading in headings:
        base = INTRO_ANCHOR if heading is None else slug(heading)
        anchor = base
        while anchor in counts:
            counts[base] += 1
            anchor = f"{base}-{counts[base]}"
        counts[anchor] = 0
        out.append(anchor)
    return out


def line_range(fragment: str) -> tuple[int, int] | None:
    """`L12-L30` (or `L12-30`, `L12`) as (12, 30), else None."""
    match = _LINE_RANGE.match(fragment)
    if not match:
        return None
    start = int(match.group(1))
    return start, int(match.group(2) or start)


def citation(path: str, start: int, end: int, trail: tuple[str, ...] = ()) -> str:
    where = f"{path}:{start}-{end}"
    return f"{where} ({' > '.join(trail)})" if trail else where
