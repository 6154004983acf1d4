"""Overlapping windows over whole lines (the unit of `search_docs`).

A window gathers whole lines until it holds about `size` words, and the next window starts
about `overlap` words before the previous one ended. Its text is exactly the original lines it
spans, newlines kept, so a hit can be cited by line range. Chunk ids count from 0 per file.
"""

from __future__ import annotations

from dataclasses import dataclass

from corpus.markdown import front_matter_end, split_lines

WINDOW_WORDS = 500
OVERLAP_WORDS = 50


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
    """Windows of whole lines from the end of the front matter: each gathers lines until it holds
    `size` words; the next starts `overlap` words back."""
    lines = split_lines(text)
    counts = [len(line.split()) for line in lines]
    n = len(lines)
    start = front_matter_end(lines) if markdown else 0
    spans: list[WindowSpan] = []
    while True:
        while start < n and counts[start] == 0:
            start += 1
        if start >= n:
            return spans
        end, words = start, 0
        while end < n and (words < size or end == start):
            words += counts[end]
            end += 1
        last = end
        while last > start + 1 and not lines[last - 1].strip():
            last -= 1
        spans.append(WindowSpan(len(spans), start + 1, last))
        if end >= n:
            return spans
        back = 0
        while end > start + 1 and back < overlap:
            end -= 1
            back += counts[end]
        start = end
