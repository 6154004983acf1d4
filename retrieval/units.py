"""The searchable units of a file: heading sections and line windows."""

from __future__ import annotations

from dataclasses import dataclass

from retrieval.sections import is_markdown, sections, split_lines
from retrieval.windows import windows


@dataclass(frozen=True, slots=True)
class Unit:
    """A section (with `heading`) or a window (with `chunk_id`) of one file."""

    path: str
    """Display path, `<root label>/<relative path>`."""
    uri: str
    text: str
    """The original lines `start_line`..`end_line`, joined by newlines."""
    start_line: int
    end_line: int
    heading: str | None = None
    trail: tuple[str, ...] = ()
    chunk_id: int | None = None

    @property
    def id(self) -> str:
        """Unique within an index: `path#chunk_id` for windows, `path:start_line` for sections."""
        if self.chunk_id is not None:
            return f"{self.path}#{self.chunk_id}"
        return f"{self.path}:{self.start_line}"


def section_units(path: str, uri: str, text: str) -> list[Unit]:
    lines = split_lines(text)
    return [
        Unit(
            path=path,
            uri=uri,
            text="\n".join(lines[s.start_line - 1 : s.end_line]),
            start_line=s.start_line,
            end_line=s.end_line,
            heading=s.heading,
            trail=s.trail,
        )
        for s in sections(text, markdown=is_markdown(path))
    ]


def window_units(path: str, uri: str, text: str) -> list[Unit]:
    lines = split_lines(text)
    return [
        Unit(
            path=path,
            uri=uri,
            text="\n".join(lines[w.start_line - 1 : w.end_line]),
            start_line=w.start_line,
            end_line=w.end_line,
            chunk_id=w.chunk_id,
        )
        for w in windows(text, markdown=is_markdown(path))
    ]
