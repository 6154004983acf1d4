"""Splitting a file into heading sections (the unit of `context_search`).

markdown-it-py finds the structure, so a `#` inside a fenced code block, an HTML block or a
block quote never starts a section, and setext headings (`Title` over `=====`) do. YAML front
matter is left out of every section; line numbers are always those of the original file.
Text before the first heading is the `(intro)` section. A file with no heading, and any file that
is not markdown, is one section.

MDX (`.mdx`) is read as MDX reads markdown, not as CommonMark: a JSX element is not an HTML block
(the markdown inside it is markdown: a fence inside `<Tabs>` is a fence, so a shell comment in it
is not a heading, and a heading after it is one), and indentation never makes code, so a fence is
a fence however deep it is indented.

A heading may end in an attribute block, as MkDocs (attr_list) and Pandoc write them:
`## Use CORSMiddleware { #use-corsmiddleware }`, `{#id}`, `{: #id .class key=val }`, `{.class}`,
`{-}`. The block is never part of the heading's name; its `#id`, when it has one, is the
section's anchor (see `retrieval.chunks.anchors.anchors`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING

from corpus.markdown import fences_blanked, front_matter_end, split_lines

if TYPE_CHECKING:
    from markdown_it import MarkdownIt
    from markdown_it.token import Token

INTRO = "(intro)"


@cache
def markdown(jsx: bool = False) -> MarkdownIt:
    """The CommonMark parser, made on first use: a restart whose files are unchanged never parses
    one, so it never loads markdown-it. With `jsx`, MDX's reading: no HTML blocks, no indented code."""
    from markdown_it import MarkdownIt

    parser = MarkdownIt("commonmark")
    return parser.disable(["html_block", "code"]) if jsx else parser


_ATTRIBUTE = r"""#[^\s{}]+|\.[^\s{}]+|-|[\w-]+=(?:"[^"]*"|'[^']*'|[^\s{}"']*)"""
"""One attribute of a heading's block: `#id`, `.class`, `-` (Pandoc's `.unnumbered`), `key=val`."""
_ATTRIBUTES = re.compile(rf"\{{:?\s*((?:{_ATTRIBUTE})(?:\s+(?:{_ATTRIBUTE}))*)\s*\}}")
"""A heading's attribute block (matched whole from its `{`): attributes apart, `{:` as attr_list
allows."""
_MARKUP = str.maketrans("", "", "`*_~")


def heading_attributes(text: str) -> tuple[str, str | None]:
    """A heading's name (whitespace collapsed, a trailing attribute block dropped) and the id its
    block gives, if any: `Use CORSMiddleware { #use-corsmiddleware .x }` is
    (`Use CORSMiddleware`, `use-corsmiddleware`); `Setup {.unnumbered}` is (`Setup`, None). Braces
    that hold anything else (`Options {json}`) are part of the name."""
    name = " ".join(text.split())
    opening = name.rfind("{") if name.endswith("}") else -1
    block = _ATTRIBUTES.fullmatch(name, opening) if opening >= 0 else None
    if block is None:
        return name, None
    ids = [a[1:] for a in re.findall(_ATTRIBUTE, block.group(1)) if a.startswith("#")]
    return name[:opening].rstrip(), ids[0] if ids else None


def plain_heading(text: str) -> str:
    """A heading as a section shows it: whitespace collapsed, an attribute block dropped."""
    return heading_attributes(text)[0]


def folded_heading(text: str) -> str:
    """A heading as a reader may write it, for comparing: inline markup gone (code spans,
    emphasis, links and images as their text, HTML tags), then any `` ` ``, `*`, `_` or `~` left,
    whitespace collapsed, case folded. `` Use `CORSMiddleware` `` and `use corsmiddleware` fold
    alike."""
    parts: list[str] = []
    for token in (c for t in markdown().parseInline(plain_heading(text)) for c in t.children or ()):
        if token.type in ("text", "code_inline", "image"):
            parts.append(token.content)
        elif token.type in ("softbreak", "hardbreak"):
            parts.append(" ")
    return " ".join("".join(parts).translate(_MARKUP).split()).casefold()


@dataclass(frozen=True, slots=True)
class SectionSpan:
    heading: str
    trail: tuple[str, ...]
    """Headings from the outermost ancestor down to this one."""
    level: int
    """1-6 for a heading, 0 for the intro."""
    start_line: int
    """1-based, inclusive; the heading line itself for a heading section."""
    end_line: int
    """1-based, inclusive; trailing blank lines are not part of a section."""
    anchor_id: str | None = None
    """The id the heading's attribute block gives (`{#id}`), if any."""


def sections(text: str, markdown: bool = True, jsx: bool = False) -> list[SectionSpan]:
    """The file's sections, in order; `jsx`: the text is MDX (see the module's docstring)."""
    lines = split_lines(text)
    body_start = front_matter_end(lines) if markdown else 0
    headings = _headings(lines, body_start, jsx) if markdown else []
    spans: list[SectionSpan] = []
    first_heading = headings[0][0] if headings else len(lines)
    intro = _trim(lines, body_start, first_heading)
    if intro:
        spans.append(SectionSpan(INTRO, (INTRO,), 0, intro[0] + 1, intro[1] + 1))
    stack: list[tuple[int, str]] = []
    for i, (start, level, heading, given) in enumerate(headings):
        end = headings[i + 1][0] if i + 1 < len(headings) else len(lines)
        while stack and stack[-1][0] >= level:
            stack.pop()
        stack.append((level, heading))
        trimmed = _trim(lines, start, end)
        last = trimmed[1] if trimmed else start
        spans.append(SectionSpan(heading, tuple(h for _, h in stack), level, start + 1, last + 1, given))
    return spans


_NEEDS_PARSER = re.compile(r"```|~~~|[\r\0]|^[ \t]+#|^[ \t>*+\-\d.)]*(?:<|\[|=+[ \t]*$|-+[ \t]*$)", re.MULTILINE)
"""What may make a line that starts with `#` something other than a top-level heading, or make a
heading of another line: a fence, an HTML block or a link reference definition (possibly inside
a list item or a block quote), a setext underline, an indented `#`, a CR or NUL. A file without
any of them (nearly every tldr page) has exactly its ATX lines as top-level headings: a heading
interrupts a paragraph and ends a list item or block quote it is not indented into, since only
paragraph text continues one lazily."""
_ATX = re.compile(r"(#{1,6})(?:[ \t]|$)")


def _headings(lines: list[str], body_start: int, jsx: bool = False) -> list[tuple[int, int, str, str | None]]:
    """(0-based start line, level, heading text, the id it gives) of every top-level heading:
    CommonMark's (markdown-it-py's block parser), or the same read from the lines directly when
    nothing in them needs the parser (`_NEEDS_PARSER`: nearly every tldr page, read in half the time)."""
    body = lines[body_start:]
    if _NEEDS_PARSER.search("\n".join(body)) is None:
        return _atx_headings(body, body_start)
    if jsx:
        body = fences_blanked(body)
    source = "\n" * body_start + "\n".join(body)
    tokens: list[Token] = []
    md = markdown(jsx)
    md.block.parse(source, md, {}, tokens)
    found: list[tuple[int, int, str, str | None]] = []
    for i, token in enumerate(tokens):
        if token.type != "heading_open" or token.level != 0 or token.map is None:
            continue
        content = tokens[i + 1].content if i + 1 < len(tokens) else ""
        heading, given = heading_attributes(content)
        found.append((token.map[0], int(token.tag[1]), heading or "(untitled)", given))
    return found


def _atx_headings(body: list[str], body_start: int) -> list[tuple[int, int, str, str | None]]:
    """The ATX headings of lines that hold nothing else that could make or unmake a heading,
    exactly as markdown-it-py reads them: the level, then the text without a closing run of `#`
    that follows a space or tab."""
    found: list[tuple[int, int, str, str | None]] = []
    for i, line in enumerate(body):
        match = _ATX.match(line) if line.startswith("#") else None
        if match is None:
            continue
        start = match.end(1)
        end = len(line.rstrip(" \t"))
        closing = len(line[start:end].rstrip("#")) + start
        if closing > start and line[closing - 1] in " \t":
            end = closing
        heading, given = heading_attributes(line[start:end])
        found.append((body_start + i, len(match.group(1)), heading or "(untitled)", given))
    return found


def _trim(lines: list[str], start: int, end: int) -> tuple[int, int] | None:
    """First and last non-blank 0-based line in [start, end), or None if all blank."""
    while start < end and not lines[start].strip():
        start += 1
    while end > start and not lines[end - 1].strip():
        end -= 1
    return (start, end - 1) if start < end else None
