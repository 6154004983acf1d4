"""Which sections of a long rule best fit the file an agent touches: the hook hands those first
when a whole rule does not fit in what a host takes.

A section fits by the words of the touched file's path (its folders and its name, split at
`-`, `_`, `.` and case changes: `cleanup-sessions.ts` says `cleanup` and `sessions`), its
extension (`ts`), and the tool: writing a new file asks for how one is made (`create`, `new`,
`define`, `example`, ...), which a read of an old one does not. A word in the section's heading
counts three times a word in its text; the rule's introduction (the text before its first
heading, or under its title) comes first, as it says what the whole rule is for. Ties keep the
file's order. Nothing here reads a file: the sections come with their text.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from pathlib import PurePosixPath

from retrieval.chunks.sections import INTRO
from retrieval.chunks.units import Unit
from retrieval.search.applies import specific

HEADING_WEIGHT = 3
"""What a word of the path in a section's heading counts, against 1 in its text."""
CREATING = frozenset({"create", "creating", "new", "define", "defining", "add", "adding", "scaffold", "template"})
"""The words of a section about making a file: they count when the tool writes a new one."""
CREATES = frozenset({"Write", "write_file", "write_to_file", "create_file"})
"""The hosts' tools that write a file whole (Claude Code, Gemini CLI, Cline, Cursor)."""

_WORD = re.compile(r"[A-Za-z][a-z]+|[A-Z]+(?![a-z])|\d+")


def words(text: str) -> set[str]:
    """The words of `text`, case folded, split at case changes (`sendWelcome`: send, welcome)."""
    return {w.casefold() for w in _WORD.findall(text)}


def path_words(path: str) -> set[str]:
    """The words of a touched file's path that can tie a section to it: each folder's and the
    name's words that are `specific` (not `src`, `lib`, `tests`, ...), and its extension."""
    pure = PurePosixPath(path.replace("\\", "/"))
    found = {w for part in (*pure.parent.parts, pure.stem) for w in words(part) if specific(w)}
    if pure.suffix:
        found.add(pure.suffix[1:].casefold())
    return found


def fit(unit: Unit, wanted: set[str], creating: bool) -> int:
    """How well a section fits: the wanted words in its heading (weighted) and its text, and the
    words of making a file when `creating`."""
    heading = words(unit.heading or "") if unit.heading != INTRO else set()
    body = words(unit.text)
    score = HEADING_WEIGHT * len(wanted & heading) + len(wanted & body)
    if creating:
        score += HEADING_WEIGHT * len(CREATING & heading) + len(CREATING & body)
    return score


def names_the_file(unit: Unit, touched: Iterable[str]) -> bool:
    """Whether a section's heading says a word of a touched file's folders or name (`Sessions
    cleanup jobs` for `.../cleanup-sessions.ts`): what a rule given in part earlier in a session
    still has to say about this file."""
    heading = words(unit.heading or "") if unit.heading != INTRO else set()
    return any(heading & (path_words(p) - {PurePosixPath(p).suffix[1:].casefold()}) for p in touched)


def best_first(units: Sequence[Unit], touched: Iterable[str], tool: str = "") -> list[Unit]:
    """`units` (one rule's sections, in file order) with the best fit for the touched files
    first: the introduction, then by `fit`, ties in file order."""
    wanted = set().union(*(path_words(p) for p in touched))
    creating = tool in CREATES
    first = _introduction(units)
    ranked = sorted(
        (u for u in units if u is not first),
        key=lambda u: -fit(u, wanted, creating),
    )
    return [first, *ranked] if first is not None else ranked


def _introduction(units: Sequence[Unit]) -> Unit | None:
    """The text before the first heading, else a title's own text when every other section is
    under it (`# Trigger.dev tasks` over the rule)."""
    if not units:
        return None
    head = units[0]
    if head.heading == INTRO:
        return head
    depth = len(head.trail)
    rest = units[1:]
    if rest and all(len(u.trail) > depth and u.trail[:depth] == head.trail for u in rest):
        return head
    return None
