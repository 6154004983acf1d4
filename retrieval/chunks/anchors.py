"""Section anchors (GitHub-style heading slugs) and citations.

`## Secrets` is `#secrets`; a second `## Secrets` in the same file is `#secrets-1`, a third
`#secrets-2` (a `## Secrets 1` after the second is then `#secrets-1-1`: anchors never collide); the
text before the first heading is `#intro`. A heading that gives its own id
(`## Use CORSMiddleware { #use-corsmiddleware }`, as MkDocs and Pandoc write it) has that id as
its anchor, and the slugs of the other headings step around it. Lines are `#L12` or `#L12-L30`,
read by the one rule of `lines_within`. A citation names the file, the lines and the heading trail:
`.AGENTS/security.md:12-30 (Security > Secrets)`.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Sequence

from corpus.errors import NotInCorpus

INTRO_ANCHOR = "intro"
_LINK = re.compile(r"!?\[([^\]]*)\]\([^)]*\)")
_LINE_RANGE = re.compile(r"L([0-9]+)(?:-L?([0-9]+))?")
_GIVEN_ID = re.compile(r"[\w.:-]+")
LINE_FORMS = "#L12 or #L12-L30"
"""How a fragment names lines, for messages."""


def slug(heading: str) -> str:
    """GitHub's slug: lower case; letters, marks, digits, `_`, `-` and spaces kept; spaces to `-`."""
    text = _LINK.sub(r"\1", heading).lower()
    kept = "".join(
        c for c in text if c in " -" or unicodedata.category(c)[0] in "LMN" or unicodedata.category(c) == "Pc"
    )
    return kept.replace(" ", "-") or "section"


def anchors(headings: Iterable[str | None], given: Sequence[str | None] = ()) -> list[str]:
    """One anchor per section of a file, in order (None: the intro), each unique in the file, as
    GitHub's slugger makes them: a taken slug gets `-1`, `-2`, ... until the result is free, and
    the result is taken in turn (`Setup`, `Setup`, `Setup 1` give `setup`, `setup-1`, `setup-1-1`).

    `given` holds, section by section, the id a heading gives itself (`{#id}`; None, or a shorter
    sequence, for none). Given ids are taken first, as MkDocs' toc does, so a link to one always
    lands on its heading and the slugs step around them; an id given twice is counted up like a
    slug, and one that cannot be an anchor (`L12`, which names lines, or one holding a character
    other than a letter, digit, `-`, `_`, `.` or `:`) is replaced by the heading's slug. Anchors
    are unique ignoring case (`{#Setup}` and `## Setup` give `Setup` and `setup-1`)."""
    bases: list[str] = []
    fixed: list[bool] = []  # the intro's anchor and the given ids: taken first, first come first served
    for i, heading in enumerate(headings):
        wanted = given[i] if i < len(given) else None
        if heading is None:
            bases.append(INTRO_ANCHOR)
        elif wanted is not None and _usable_id(wanted):
            bases.append(wanted)
        else:
            bases.append(slug(heading))
        fixed.append(heading is None or bases[-1] == wanted)
    counts: dict[str, int] = {}
    out: list[str | None] = [None] * len(bases)
    for i, base in enumerate(bases):
        if fixed[i] and base.lower() not in counts:
            counts[base.lower()] = 0
            out[i] = base
    for i, base in enumerate(bases):
        if out[i] is not None:
            continue
        key = base.lower()
        anchor = base
        while anchor.lower() in counts:
            counts[key] = counts.get(key, 0) + 1
            anchor = f"{base}-{counts[key]}"
        counts[anchor.lower()] = 0
        out[i] = anchor
    return [a for a in out if a is not None]


def _usable_id(given: str) -> bool:
    """Whether an id a heading gives can be its anchor: what `read_context` and a URI take as a
    section's name, never as lines."""
    return bool(_GIVEN_ID.fullmatch(given)) and line_range(given) is None


def line_range(fragment: str) -> tuple[int, int] | None:
    """`L12-L30` (or `L12-30`, `L12`) as (12, 30), the whole fragment and nothing else (no space,
    no newline); None for any other fragment, a section's anchor. The numbers are as written
    (`L0` is (0, 0), `L30-L12` is (30, 12)): `lines_within` says whether they name lines."""
    match = _LINE_RANGE.fullmatch(fragment)
    if not match:
        return None
    start = int(match.group(1))
    return start, int(match.group(2) or start)


def lines_within(
    path: str, count: int, start: int | None, end: int | None, fragment: str | None = None
) -> tuple[int, int]:
    """The lines (first, last) to read of the file `path` of `count` lines, by the one rule of
    line ranges: `start`..`end` from the `start_line`/`end_line` arguments (either may be absent:
    the file's first or last line), or from a `#L12-L30` `fragment` (its `line_range`).

    A fragment that names no line at all (`#L0`, `#L30-L12`) is an error, as are arguments whose
    start is after their end; an argument below 1 is 1 (numbers out of range are clamped). A
    range that starts past the file's end is an error naming its line count; one that ends past
    it ends at its last line. With no range at all, the whole file (an empty one too).
    `NotInCorpus` says what was wrong and what is accepted."""
    if fragment is not None and (start is None or end is None or not 1 <= start <= end):
        raise NotInCorpus(
            f"#{fragment} names no lines of {path}: lines are {LINE_FORMS}, counted from 1, "
            "the first not after the last"
        )
    if start is None and end is None:
        return 1, count
    first, last = max(1, start or 1), max(1, count if end is None else end)
    if start is not None and end is not None and first > last:
        raise NotInCorpus(f"start_line {start} is after end_line {end}: pass start_line <= end_line")
    if first > count:
        named = "start_line" if start is not None else "line"
        asked = f"#{fragment} starts" if fragment is not None else f"{named} {first} is"
        raise NotInCorpus(f"{path} has {count} lines; {asked} past its end")
    return first, min(last, count)


def citation(path: str, start: int, end: int, trail: tuple[str, ...] = ()) -> str:
    where = f"{path}:{start}-{end}"
    return f"{where} ({' > '.join(trail)})" if trail else where
