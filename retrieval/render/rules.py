"""What the hook hands the model: rule files as `<context>` blocks within a host's budget, the
budget spent on the rules' own lines.

Each applicable rule file is named once, with why it applies, its size and its description (its
front matter reduced to that); never a label per section. Short rules come whole first; of a
rule too long for what is left, the sections the caller ranked best (`retrieval.search.fitting`)
as far as they fit, then that rule's other headings with how to read them; a rule with no room
left is still named, in a closed tag. The text goes through `neutralise` and every attribute
through `escape_attribute` (grammar.py), as every answer's does, so no rule can forge a block.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from retrieval.chunks.sections import INTRO
from retrieval.chunks.units import Unit
from retrieval.render.grammar import MAX_ATTRIBUTE_CHARS, escape_attribute, inline, neutralise

DESCRIPTION_CHARS = 200
"""A rule's description is cut to this many characters in its tag."""
OUTLINE_CHARS = 400
"""The most characters of a partly shown rule's other headings."""
NAMED_ONLY = "Named without text, for lack of room here: read {them} with {how}."


@dataclass(frozen=True, slots=True)
class RuleFile:
    """One rule file as the hook offers it: the sections not yet given in this session, in the
    order to hand them (the best fit first)."""

    path: str
    """Display path."""
    applies: str
    """Why it applies (`cursor globs: **/*.ts`, `AGENTS.md in apps/api/`); '' for a pinned file."""
    description: str
    lines: int
    """The file's length in lines."""
    sections: tuple[Unit, ...]
    total: int
    """How many of its sections apply, given before or not."""
    outlined: bool = False
    """Part of it, and its other headings, were given earlier in the session."""

    @property
    def chars(self) -> int:
        return sum(len(u.text) + 2 for u in self.sections)


@dataclass(frozen=True, slots=True)
class Handed:
    """The text, and what it gave: session keys (`Unit.id`, `PATH#outline`, `PATH#named`) and
    the files shown whole, in part, and by name only."""

    text: str
    given: frozenset[str]
    whole: tuple[str, ...]
    partly: tuple[str, ...]
    named: tuple[str, ...]


def hand(head: str, files: Sequence[RuleFile], limit: int, how: str) -> Handed:
    """`head`, then `files` within `limit` characters: whole while they fit (the shortest first,
    shown in the given order), then the best sections of the rest, each long rule an equal share
    of what is left; a file that gets no text is named. `how`: how to read what is not shown."""
    stubs = {f.path: _open(f, closed=True) for f in files}
    note = NAMED_ONLY.format(them="them", how=how)
    room = limit - len(head) - sum(len(s) + 2 for s in stubs.values()) - len(note) - 2
    blocks: dict[str, str] = {}
    given: set[str] = set()
    whole: list[str] = []
    for f in sorted(files, key=lambda f: f.chars):
        block = _block(f, _in_file_order(f.sections), "")
        if len(block) - len(stubs[f.path]) <= room:
            blocks[f.path] = block
            room -= len(block) - len(stubs[f.path])
            given.update(u.id for u in f.sections)
            whole.append(f.path)
    partly: list[str] = []
    longs = [f for f in files if f.path not in blocks]
    for i, f in enumerate(longs):
        share = room // (len(longs) - i) + len(stubs[f.path])
        shown, outline = _partial(f, share)
        if not shown:
            continue
        block = _block(f, shown, outline)
        blocks[f.path] = block
        room -= len(block) - len(stubs[f.path])
        given.update(u.id for u in shown)
        if outline:
            given.add(f"{f.path}#outline")
        partly.append(f.path)
    named = [f.path for f in files if f.path not in blocks]
    given.update(f"{path}#named" for path in named)
    order = [*(f.path for f in files if f.path in whole), *partly, *named]
    parts = [head, *(blocks.get(p, stubs[p]) for p in order)]
    if named:
        parts.append(NAMED_ONLY.format(them="it" if len(named) == 1 else "them", how=how))
    return Handed("\n\n".join(parts)[:limit], frozenset(given), tuple(whole), tuple(partly), tuple(named))


def _in_file_order(units: Sequence[Unit]) -> list[Unit]:
    return sorted(units, key=lambda u: u.start_line)


def _open(f: RuleFile, closed: bool = False, shown: int | None = None) -> str:
    attrs = f'path="{escape_attribute(f.path)}"'
    if f.applies:
        attrs += f' applies="{escape_attribute(f.applies, MAX_ATTRIBUTE_CHARS)}"'
    attrs += f' lines="{f.lines}"'
    if f.description and not f.outlined:  # said with the rule's first part in this session
        attrs += f' description="{escape_attribute(f.description, DESCRIPTION_CHARS)}"'
    if shown is not None:
        attrs += f' shown="{shown} of {f.total} sections"'
    return f"<context {attrs}{' /' if closed else ''}>"


def _block(f: RuleFile, shown: Sequence[Unit], outline: str) -> str:
    partial = len(shown) < f.total
    body = "\n\n".join(neutralise(u.text) for u in shown)
    tail = f"\n\n{outline}" if outline else ""
    return f"{_open(f, shown=len(shown) if partial else None)}\n{body}{tail}\n</context>"


def _partial(f: RuleFile, room: int) -> tuple[list[Unit], str]:
    """The best sections of `f` that fit in `room` characters with the line naming its other
    headings (unless they were named before in the session), in file order, and that line."""
    frame = len(_open(f, shown=f.total)) + len("\n\n</context>")
    reserve = 0 if f.outlined else min(OUTLINE_CHARS, len(_outline(f, list(f.sections), OUTLINE_CHARS * 4)))
    left = room - frame - reserve
    shown: list[Unit] = []
    for u in f.sections:
        cost = len(u.text) + 2
        if cost <= left:
            shown.append(u)
            left -= cost
    if not shown:
        return [], ""
    shown = _in_file_order(shown)
    rest = [u for u in f.sections if u not in shown]
    outline = "" if f.outlined or not rest else _outline(f, _in_file_order(rest), reserve + max(left, 0))
    return shown, outline


def _outline(f: RuleFile, rest: Sequence[Unit], chars: int) -> str:
    """`[Also in this file: A (12-30); B (31-40) ... and 3 more: read_context path="…" section="…"]`
    within `chars` characters."""
    ask = f'read one with read_context path="{inline(f.path)}" section="HEADING", or its lines with your file tool'
    named: list[str] = []
    used = len(ask) + 40
    for u in rest:
        heading = inline(u.heading if u.heading and u.heading != INTRO else "(introduction)")
        item = f"{heading} ({u.start_line}-{u.end_line})"
        if used + len(item) + 2 > chars:
            break
        named.append(item)
        used += len(item) + 2
    more = len(rest) - len(named)
    listed = "; ".join(named) + (f" and {more} more" if more and named else f"{more} more" if more else "")
    return f"[Also in this file: {listed}; {ask}]"
