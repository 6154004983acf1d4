"""Markdown text: which names are markdown, lines as the file has them, and where front matter ends."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from corpus.markdown import fences_blanked, front_matter_end, is_markdown, split_lines


@pytest.mark.parametrize(
    "name",
    ["guide.md", "GUIDE.MD", "page.mdx", "page.MDX", "notes.markdown", "Notes.MarkDown", "rule.mdc", "a/b/c.Mdc"],
)
def test_markdown_suffixes_are_recognised_in_any_case(name: str) -> None:
    assert is_markdown(name)


@pytest.mark.parametrize("name", ["notes.txt", "README", "guide.md.txt", "page.mdown", "data.json", "md"])
def test_other_names_are_not_markdown(name: str) -> None:
    assert not is_markdown(name)


@pytest.mark.parametrize(
    ("text", "lines"),
    [
        ("a\nb\n", ["a", "b"]),
        ("a\nb", ["a", "b"]),
        ("", []),
        ("\n", [""]),
        ("a\n\nb\n", ["a", "", "b"]),
        ("a\n\n", ["a", ""]),
    ],
)
def test_lines_are_as_the_file_has_them(text: str, lines: list[str]) -> None:
    assert split_lines(text) == lines


def test_a_final_newline_does_not_add_a_line() -> None:
    assert split_lines("a\nb\n") == split_lines("a\nb")
    assert len(split_lines("one line\n")) == 1


@settings(deadline=None)
@given(st.lists(st.text(alphabet=st.characters(exclude_characters="\n"))))
def test_lines_each_ended_by_a_newline_split_back_into_the_same_lines(lines: list[str]) -> None:
    assert split_lines("".join(line + "\n" for line in lines)) == lines


@pytest.mark.parametrize(
    ("text", "end"),
    [
        ("---\ntitle: Guide\n---\n# Guide\n", 3),
        ("---\ntitle: Guide\ntags: [a, b]\n...\nbody\n", 4),
        ("---\n---\nbody\n", 2),
        ("---  \ntitle: Guide\n---\t\nbody\n", 3),
        ("---\ntitle: Guide\n---\nbody\n---\nmore\n", 3),
    ],
)
def test_front_matter_ends_at_its_closing_line(text: str, end: int) -> None:
    assert front_matter_end(split_lines(text)) == end


def test_unterminated_front_matter_is_none() -> None:
    assert front_matter_end(split_lines("---\ntitle: Guide\n# Guide\nbody\n")) == 0
    assert front_matter_end(split_lines("---\n")) == 0


@pytest.mark.parametrize(
    "text",
    [
        "# Guide\n---\ntitle: Guide\n---\n",
        "\n---\ntitle: Guide\n---\n",
        " ---\ntitle: Guide\n---\n",
        "----\ntitle: Guide\n----\n",
        "...\ntitle: Guide\n...\n",
    ],
)
def test_a_fence_that_is_not_a_bare_dash_line_on_line_one_is_not_front_matter(text: str) -> None:
    assert front_matter_end(split_lines(text)) == 0


def test_no_lines_have_no_front_matter() -> None:
    assert front_matter_end([]) == 0


def test_a_fence_is_blank_to_its_closing_run_of_its_own_character_at_least_as_long() -> None:
    lines = ["a", "  ````md", "# not a heading", "```", "~~~~", "still code", "````", "b"]
    assert fences_blanked(lines) == ["a", "", "", "", "", "", "", "b"]


def test_a_backtick_run_with_a_backtick_after_it_is_code_not_a_fence() -> None:
    lines = ["```inline``` text", "# heading"]
    assert fences_blanked(lines) == lines


def test_an_unclosed_fence_runs_to_the_end() -> None:
    assert fences_blanked(["~~~", "x", "```"]) == ["", "", ""]
