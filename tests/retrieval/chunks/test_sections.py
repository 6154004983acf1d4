"""Heading sections: where files split, and every line in exactly one section."""

from __future__ import annotations

from hypothesis import given

from corpus.markdown import split_lines
from retrieval.chunks.sections import INTRO, SectionSpan, sections
from tests.retrieval.chunks.support import markdownish


def spans(text: str, markdown: bool = True) -> list[tuple[str, tuple[str, ...], int, int]]:
    return [(s.heading, s.trail, s.start_line, s.end_line) for s in sections(text, markdown)]


def test_sections_split_at_headings_with_trails_and_lines() -> None:
    text = "intro line\n\n# Security\nbody\n\n## Secrets\nnever print\n\n# Deploy\nship\n"
    assert spans(text) == [
        (INTRO, (INTRO,), 1, 1),
        ("Security", ("Security",), 3, 4),
        ("Secrets", ("Security", "Secrets"), 6, 7),
        ("Deploy", ("Deploy",), 9, 10),
    ]


def test_a_heading_inside_a_fence_does_not_split() -> None:
    text = "# Real\n```sh\n# not a heading\n```\n~~~\n## nor this\n~~~\n"
    assert spans(text) == [("Real", ("Real",), 1, 7)]


def test_setext_headings_split_and_level_two_nests() -> None:
    text = "Title\n=====\ntext\n\nSub part\n--------\nmore\n"
    assert spans(text) == [
        ("Title", ("Title",), 1, 3),
        ("Sub part", ("Title", "Sub part"), 5, 7),
    ]


def test_no_heading_or_not_markdown_is_one_section() -> None:
    assert spans("just text\nmore\n") == [(INTRO, (INTRO,), 1, 2)]
    assert spans("# not a heading in a .txt\nline\n", markdown=False) == [(INTRO, (INTRO,), 1, 2)]


def test_empty_and_blank_files_have_no_sections() -> None:
    assert spans("") == []
    assert spans("\n\n   \n") == []


def test_headings_in_quotes_and_lists_do_not_split_and_anchors_are_dropped() -> None:
    text = "# Top {#top}\n> # quoted\n- # listed\n## Next ##\n"
    assert spans(text) == [("Top", ("Top",), 1, 3), ("Next", ("Top", "Next"), 4, 4)]


def front_matter_lines(lines: list[str]) -> int:
    """Written out apart from the chunker: the lines of a leading `---` ... `---` block."""
    if lines and lines[0].rstrip() == "---":
        closing = [i for i in range(1, len(lines)) if lines[i].rstrip() in ("---", "...")]
        return closing[0] + 1 if closing else 0
    return 0


def covered_lines(found: list[SectionSpan]) -> list[int]:
    return [n for s in found for n in range(s.start_line, s.end_line + 1)]


@given(markdownish)
def test_sections_cover_every_non_blank_line_once_in_order(text: str) -> None:
    lines = split_lines(text)
    found = sections(text)
    covered = covered_lines(found)
    assert covered == sorted(set(covered)), "sections overlap or are out of order"
    front = front_matter_lines(lines)
    for n, line in enumerate(lines, start=1):
        if n > front and line.strip():
            assert n in covered, f"line {n} {line!r} is in no section"


MDX_TABS = """# Install

<Tabs>
  <Fragment slot="npm">
  ```shell
  # create a project with npm
  npm create astro@latest

  # or from a template
  npm create astro@latest -- --template basics
  ```
  </Fragment>
  <Fragment slot="pnpm">
    ```shell
    # create a project with pnpm

    # build it for the testing API
    pnpm astro build --mode testing
    ```
  </Fragment>
</Tabs>

## Manual setup

    ```js
    # still code, however deep
    ```

    ### Inside a tab
"""


def test_mdx_is_read_as_mdx_reads_it_not_as_commonmark() -> None:
    """In MDX a JSX element holds markdown, so its fences are fences: a shell comment in one is no
    heading, and the heading after it is one; an indented heading is a heading. CommonMark ends the
    HTML block at the blank line and reads the comment as a heading, which `.md` files keep."""
    mdx = [s.heading for s in sections(MDX_TABS, jsx=True)]
    assert mdx == ["Install", "Manual setup", "Inside a tab"]
    commonmark = [s.heading for s in sections(MDX_TABS)]
    assert "or from a template" in commonmark and "Manual setup" not in commonmark


def test_a_section_unit_of_an_mdx_file_is_cut_as_mdx() -> None:
    from retrieval.chunks.units import section_units

    mdx = [u.heading for u in section_units("docs/install.mdx", "docs://docs/install.mdx", MDX_TABS)]
    md = [u.heading for u in section_units("docs/install.md", "docs://docs/install.md", MDX_TABS)]
    assert mdx == ["Install", "Manual setup", "Inside a tab"] and md != mdx
