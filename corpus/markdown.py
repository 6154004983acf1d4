"""What a corpus file's text looks like as markdown: which names are markdown, its lines as the file
has them, and where its YAML front matter ends. Shared by the front matter reader here and the
section chunker in `retrieval`; nothing here parses more than that."""

from __future__ import annotations

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
