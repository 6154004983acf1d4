"""Overlapping windows over whole lines (the unit of `search_docs`, seed 001).

A window gathers whole lines until it holds about `size` words, and the next window starts
about `overlap` words before the previous one ended. Its text is exactly the original lines it
spans, newlines kept, so a hit can be cited by line range. Chunk ids count from 0 per file.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from retrieval.sections import front_matter_end, sections, split_lines

WINDOW_WORDS = 500
OVERLAP_WORDS = 50
SECTION_FILL = 0.2
PARAGRAPH_FILL = 0.5


@dataclass(frozen=True, slots=True)
class WindowSpan:
    chunk_id: int
    start_line: int
    """1-based, inclusive."""
    end_line: int
    """1-based, inclusive."""


def windows(
    text: str, markdown: bool = True, size: int = WINDOW_WORDS, overlap: int = OVERLAP_WORDS
) -> list[WindowSpan]:
    lines = split_lines(text)
    start = front_matter_end(lines) if markdown else 0
    return _cut(lines, start, size, overlap, lambda line, words: False, lambda line: False)


def structured_windows(
    text: str, markdown: bool = True, size: int = WINDOW_WORDS, overlap: int = OVERLAP_WORDS
) -> list[WindowSpan]:
    """Windows of about `size` words that follow the document's structure.

    A window starts at a heading whenever the next section would not fit in the current one and
    the current one already holds a fifth of `size` (so tiny sections are merged, and a section
    that fits in a window is never cut); it ends at a paragraph break rather than mid-paragraph
    once it is half full; a section longer than `size` is split, and the next window then starts
    about `overlap` words back. Fenced code never breaks a paragraph. Text and lines are the
    original ones, as in `windows`.
    """
    lines = split_lines(text)
    counts = [len(line.split()) for line in lines]
    n = len(lines)
    body = front_matter_end(lines) if markdown else 0
    heads = sorted({s.start_line - 1 for s in sections(text, markdown)} - {body})
    section_end = dict(zip(heads, [*heads[1:], n], strict=False))  # empty when there is no heading
    block_end = _next_break(_paragraph_starts(lines, body) | set(heads), n)

    def stops(line: int, words: int) -> bool:
        return _stops(line, words, size, counts, section_end, block_end)

    return _cut(lines, body, size, overlap, stops, lambda line: line in section_end)


def _cut(
    lines: list[str],
    start: int,
    size: int,
    overlap: int,
    stops: Callable[[int, int], bool],
    clean: Callable[[int], bool],
) -> list[WindowSpan]:
    """Windows of whole lines from `start`: each gathers lines until it holds `size` words or
    `stops(line, words)` says to end before `line`; the next starts `overlap` words back, or
    right at the next non-blank line when `clean(line)` says that is a clean cut."""
    counts = [len(line.split()) for line in lines]
    n = len(lines)
    spans: list[WindowSpan] = []
    while True:
        while start < n and counts[start] == 0:
            start += 1
        if start >= n:
            return spans
        end, words = start, 0
        while end < n and (words < size or end == start):
            if end > start and stops(end, words):
                break
            words += counts[end]
            end += 1
        last = end
        while last > start + 1 and not lines[last - 1].strip():
            last -= 1
        spans.append(WindowSpan(len(spans), start + 1, last))
        if end >= n:
            return spans
        nxt = end
        while nxt < n and counts[nxt] == 0:
            nxt += 1
        if clean(nxt):
            start = nxt  # a clean cut at a heading needs no overlap
            continue
        back = 0
        while end > start + 1 and back < overlap:
            end -= 1
            back += counts[end]
        start = end


def _stops(
    line: int,
    words: int,
    size: int,
    counts: list[int],
    section_end: dict[int, int],
    block_end: dict[int, int],
) -> bool:
    """Whether a window holding `words` ends before `line`: at a heading whose section would not
    fit and once a fifth full; at a paragraph that would not fit and once half full."""
    if line in section_end and words >= size * SECTION_FILL:
        return words + sum(counts[line : section_end[line]]) > size
    if line in block_end and words >= size * PARAGRAPH_FILL:
        return words + sum(counts[line : block_end[line]]) > size
    return False


def _paragraph_starts(lines: list[str], body: int) -> set[int]:
    """Lines that start a paragraph: non-blank after a blank line, outside fenced code."""
    starts: set[int] = set()
    fence: str | None = None
    blank = True
    for i in range(body, len(lines)):
        stripped = lines[i].strip()
        marker = stripped[:3]
        if fence is None and marker in ("```", "~~~"):
            if blank:
                starts.add(i)
            fence, blank = marker, False
            continue
        if fence is not None:
            if stripped.startswith(fence):
                fence = None
            continue
        if stripped and blank:
            starts.add(i)
        blank = not stripped
    return starts


def _next_break(breaks: set[int], n: int) -> dict[int, int]:
    """For each break, the next break after it (or the end of the file)."""
    ordered = sorted(breaks)
    return dict(zip(ordered, [*ordered[1:], n], strict=False))
