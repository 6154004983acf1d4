"""What a corpus file's text looks like as markdown, line by line: which names are markdown, its
lines as the file has them, where its YAML front matter ends, and which lines are inside code
fences. The one line scanner of the project: the front matter reader and `clients`' imports here,
the chunkers and the link finder in `retrieval`. A real CommonMark parse (headings, a hit's links)
is markdown-it's, in `retrieval.chunks.sections`."""

from __future__ import annotations

import re

MARKDOWN_SUFFIXES = (".md", ".markdown", ".mdx", ".mdc", ".windsurfrules", ".clinerules")
"""By the end of the name: the last two are the one-file rules of Windsurf and Cline, markdown
without an extension."""


def is_markdown(name: str) -> bool:
    return name.casefold().endswith(MARKDOWN_SUFFIXES)


def is_mdx(name: str) -> bool:
    """MDX: markdown with JSX, whose elements hold markdown (read apart from CommonMark's HTML blocks)."""
    return name.casefold().endswith(".mdx")


def split_lines(text: str) -> list[str]:
    """Lines as the file has them: `a\\nb\\n` is two lines, `a\\nb` too, `` is none."""
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return lines


def front_matter_end(lines: list[str]) -> int:
    """Number of leading lines that are YAML front matter (`---` ... `---` or `...`), or 0."""
    if not lines or lines[0].rstrip() != "---":
        return 0
    for i in range(1, len(lines)):
        if lines[i].rstrip() in ("---", "..."):
            return i + 1
    return 0


_FENCE = re.compile(r"[ \t]*(`{3,}|~{3,})")


def fences_blanked(lines: list[str]) -> list[str]:
    """The lines with every fenced code block blank, its fences found at any indentation (as MDX
    finds them inside JSX and list items): nothing in a fence is a heading of an MDX file, a link,
    or an `@` import. A fence closes at a line holding only a run of its character at least as
    long."""
    out: list[str] = []
    fence = ""
    for line in lines:
        match = _FENCE.match(line)
        run, rest = (match.group(1), line[match.end() :]) if match else ("", "")
        if not fence:
            if run and not (run[0] == "`" and "`" in rest):  # a backtick fence's info has no backtick
                fence = run
            out.append("" if fence else line)
            continue
        out.append("")
        if run[:1] == fence[0] and len(run) >= len(fence) and not rest.strip():
            fence = ""
    return out
