"""The searchable units of a file: heading sections and line windows."""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from typing import NamedTuple

from corpus.files import CorpusFile
from corpus.markdown import is_markdown, is_mdx, split_lines
from retrieval.chunks.anchors import anchors, citation
from retrieval.chunks.sections import INTRO, SectionSpan, sections
from retrieval.chunks.windows import windows


class Unit(NamedTuple):
    """A section (with `heading`) or a window (with `chunk_id`) of one file.

    A named tuple, not a frozen dataclass: as immutable and hashable, and built four to five times faster
    (a warm restart of a 38k-file root makes 38k of them before its first answer)."""

    path: str
    """Display path, `<root label>/<relative path>`."""
    uri: str
    source: str | CorpusFile
    """The file's text, which `text` is a slice of (`at`..`end`): shared by every unit of the file,
    so a unit costs no copy of its lines; or, with `end` -1, the unit's text itself; or the file,
    when the index does not hold its text (`live.texts.held` reads it: retrieval never does)."""
    start_line: int
    end_line: int
    heading: str | None = None
    trail: tuple[str, ...] = ()
    chunk_id: int | None = None
    anchor: str | None = None
    """GitHub-style slug of the heading, or the id it gives (`{#id}`), unique in the file (sections
    only)."""
    tags: tuple[str, ...] = ()
    """The file's front matter tags: ranked with the heading trail, never shown in it."""
    at: int = 0
    end: int = -1

    @property
    def text(self) -> str:
        """The original lines `start_line`..`end_line`, joined by newlines. A unit whose file's
        text the index does not hold raises `NotHeld`: `live.texts.held` gives it its text."""
        source = self.source if isinstance(self.source, str) else self.source.content()
        return source if self.end < 0 else source[self.at : self.end]

    def starting_at(self, line: int) -> Unit:
        """This unit without its lines before `line` (a line of it)."""
        text = self.text
        cut = 0
        for _ in range(line - self.start_line):
            cut = text.index("\n", cut) + 1
        end = self.end if self.end >= 0 else len(text)
        return self._replace(start_line=line, at=self.at + cut, end=end)

    @property
    def citation(self) -> str:
        """`.AGENTS/security.md:12-30 (Security > Secrets)`: what to quote as the source."""
        return citation(self.path, self.start_line, self.end_line, tuple(t for t in self.trail if t != INTRO))

    @property
    def section_uri(self) -> str:
        """The URI of exactly this section (`agents://security.md#secrets`), or of these lines."""
        return f"{self.uri}#{self.anchor}" if self.anchor else f"{self.uri}#L{self.start_line}-L{self.end_line}"

    @property
    def id(self) -> str:
        """Unique within an index: `path#chunk_id` for windows, `path:start_line` for sections."""
        if self.chunk_id is not None:
            return f"{self.path}#{self.chunk_id}"
        return f"{self.path}:{self.start_line}"


def section_units(
    path: str,
    uri: str,
    text: str,
    title: str | None = None,
    tags: tuple[str, ...] = (),
    spans: Sequence[SectionSpan] | None = None,
) -> list[Unit]:
    """The heading sections (`spans`, when they were found before, else found now); a front
    matter title heads every trail (it is the page's title), and its tags go with every unit."""
    starts = line_starts(text)
    markdown = is_markdown(path)
    root = (title,) if title and markdown else ()
    if spans is None:
        spans = sections(text, markdown=markdown, jsx=is_mdx(path))
    slugs = anchors((None if s.heading == INTRO else s.heading for s in spans), [s.anchor_id for s in spans])
    return [
        Unit(
            path=path,
            uri=uri,
            source=text,
            start_line=s.start_line,
            end_line=s.end_line,
            heading=s.heading,
            trail=root + s.trail,
            anchor=anchor,
            tags=tags,
            at=starts[s.start_line - 1],
            end=starts[s.end_line] - 1,
        )
        for s, anchor in zip(spans, slugs, strict=True)
    ]


def window_units(
    path: str,
    uri: str,
    text: str,
    heads: Sequence[Unit] | None = None,
    tags: tuple[str, ...] = (),
) -> list[Unit]:
    """The ~500-word windows of a file, each with the heading trail of the section it starts in
    (`heads`: the file's section units, if already made) and the file's front matter `tags`."""
    starts = line_starts(text)
    markdown = is_markdown(path)
    if heads is None:
        heads = section_units(path, uri, text) if markdown else []
    units: list[Unit] = []
    for w in windows(text, markdown=markdown):
        trail = next((h.trail for h in reversed(heads) if h.start_line <= w.start_line), ())
        units.append(
            Unit(
                path=path,
                uri=uri,
                source=text,
                start_line=w.start_line,
                end_line=w.end_line,
                trail=trail,
                chunk_id=w.chunk_id,
                tags=tags,
                at=starts[w.start_line - 1],
                end=starts[w.end_line] - 1,
            )
        )
    return units


def line_starts(text: str) -> list[int]:
    """Where each line of `text` (as `split_lines` counts them) begins, and one more entry: one
    past the end of the last line's newline, so line n spans `starts[n - 1]` to `starts[n] - 1`."""
    return [0, *itertools.accumulate(len(line) + 1 for line in split_lines(text))]


def sections_of(f: CorpusFile, spans: Sequence[SectionSpan] | None = None) -> list[Unit]:
    """A corpus file's sections (`spans`: as found before), its front matter title heading every trail."""
    return section_units(f.path, f.uri, f.content(), f.meta.title, f.meta.tags, spans)
