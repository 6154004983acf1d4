"""Section anchors as GitHub makes them, line-range fragments, and citations."""

from __future__ import annotations

import pytest

from corpus.errors import NotInCorpus
from retrieval.chunks.anchors import INTRO_ANCHOR, anchors, citation, line_range, lines_within, slug


@pytest.mark.parametrize(
    ("heading", "expected"),
    [
        ("Secrets", "secrets"),
        ("API Errors", "api-errors"),
        ("What is this?", "what-is-this"),
        ("Setup & Install", "setup--install"),
        ("C++ (and C#) rules", "c-and-c-rules"),
        ("v1.2: release notes", "v12-release-notes"),
        ("snake_case names", "snake_case-names"),
        ("pre-commit hooks", "pre-commit-hooks"),
        ("See [the guide](docs/guide.md)", "see-the-guide"),
        ("![logo](logo.png) Branding", "logo-branding"),
        ("Über Straße", "über-straße"),
        ("Café déjà vu", "café-déjà-vu"),
        ("東京 タワー", "東京-タワー"),
        ("Step 2", "step-2"),
    ],
)
def test_slug_is_githubs(heading: str, expected: str) -> None:
    assert slug(heading) == expected


@pytest.mark.parametrize("heading", ["?!", "***", "()[]{}", ""])
def test_a_heading_of_nothing_but_punctuation_is_section(heading: str) -> None:
    assert slug(heading) == "section"


def test_repeated_headings_count_up_and_never_collide() -> None:
    assert anchors(["Setup", "Setup", "Setup 1"]) == ["setup", "setup-1", "setup-1-1"]
    assert anchors(["Secrets", "Secrets", "Secrets"]) == ["secrets", "secrets-1", "secrets-2"]


def test_a_numbered_heading_first_pushes_the_repeat_past_it() -> None:
    assert anchors(["Setup 1", "Setup", "Setup"]) == ["setup-1", "setup", "setup-2"]


def test_the_intro_is_intro_and_a_heading_called_intro_does_not_take_it() -> None:
    assert anchors([None, "Security", "Intro"]) == [INTRO_ANCHOR, "security", "intro-1"]
    assert INTRO_ANCHOR == "intro"


def test_headings_that_slug_alike_get_distinct_anchors() -> None:
    assert anchors(["API", "api", "A.P.I."]) == ["api", "api-1", "api-2"]


def test_anchors_are_one_per_section_and_unique() -> None:
    headings: list[str | None] = [None, "A", "A", "A 1", "A-1", "a 2", "A", "?", "!"]
    found = anchors(headings)
    assert len(found) == len(headings)
    assert len(set(found)) == len(found)
    assert found[-2:] == ["section", "section-1"]


def test_no_headings_give_no_anchors() -> None:
    assert anchors([]) == []


@pytest.mark.parametrize(
    ("fragment", "lines"),
    [
        ("L12-L30", (12, 30)),
        ("L12-30", (12, 30)),
        ("L12", (12, 12)),
        ("L1", (1, 1)),
        ("L007-L010", (7, 10)),
        ("L0", (0, 0)),  # the numbers as written: `lines_within` refuses them
        ("L30-L12", (30, 12)),
    ],
)
def test_a_line_range_fragment_gives_its_lines(fragment: str, lines: tuple[int, int]) -> None:
    assert line_range(fragment) == lines


@pytest.mark.parametrize(
    "fragment",
    [
        "secrets",
        "",
        "L",
        "l12",
        "L12-",
        "12-30",
        "L12-L30x",
        "L12:30",
        "L-12",
        "xL12",
        "L12-L",
        "L 12",
        "L12\n",
        "L12-L30\n",
        " L12",
        "L12 ",
        "L１２",  # fullwidth digits
    ],
)
def test_anything_else_is_not_a_line_range(fragment: str) -> None:
    assert line_range(fragment) is None


@pytest.mark.parametrize(
    ("start", "end", "fragment", "lines"),
    [
        (None, None, None, (1, 12)),
        (3, None, None, (3, 12)),
        (None, 4, None, (1, 4)),
        (3, 5, None, (3, 5)),
        (0, 0, None, (1, 1)),  # an argument below 1 is clamped to 1
        (-5, 2, None, (1, 2)),
        (10, 99, None, (10, 12)),  # ends past the end: at the last line
        (12, 12, None, (12, 12)),
        (2, 4, "L2-L4", (2, 4)),
        (10, 10**12, "L10-L1000000000000", (10, 12)),
    ],
)
def test_lines_within_a_file(start: int | None, end: int | None, fragment: str | None, lines: tuple[int, int]) -> None:
    assert lines_within("a.md", 12, start, end, fragment) == lines


def test_an_empty_file_reads_whole_and_has_no_line_one() -> None:
    assert lines_within("a.md", 0, None, None) == (1, 0)
    with pytest.raises(NotInCorpus, match=r"^a\.md has 0 lines; start_line 1 is past its end$"):
        lines_within("a.md", 0, 1, None)
    with pytest.raises(NotInCorpus, match=r"^a\.md has 0 lines; line 1 is past its end$"):
        lines_within("a.md", 0, None, 3)


@pytest.mark.parametrize(
    ("start", "end", "fragment", "message"),
    [
        (
            0,
            0,
            "L0",
            "#L0 names no lines of a.md: lines are #L12 or #L12-L30, counted from 1, the first not after the last",
        ),
        (
            5,
            2,
            "L5-L2",
            "#L5-L2 names no lines of a.md: lines are #L12 or #L12-L30, counted from 1, the first not after the last",
        ),
        (
            0,
            3,
            "L0-L3",
            "#L0-L3 names no lines of a.md: lines are #L12 or #L12-L30, counted from 1, the first not after the last",
        ),
        (13, 13, "L13", "a.md has 12 lines; #L13 starts past its end"),
        (13, 20, "L13-L20", "a.md has 12 lines; #L13-L20 starts past its end"),
        (13, None, None, "a.md has 12 lines; start_line 13 is past its end"),
        (5, 2, None, "start_line 5 is after end_line 2: pass start_line <= end_line"),
    ],
)
def test_impossible_lines_are_an_error_saying_what_is_accepted(
    start: int | None, end: int | None, fragment: str | None, message: str
) -> None:
    with pytest.raises(NotInCorpus) as caught:
        lines_within("a.md", 12, start, end, fragment)
    assert str(caught.value) == message


def test_a_citation_names_the_file_the_lines_and_the_trail() -> None:
    assert citation(".AGENTS/security.md", 12, 30, ("Security", "Secrets")) == (
        ".AGENTS/security.md:12-30 (Security > Secrets)"
    )
    assert citation("docs/guide.md", 3, 3, ("Guide",)) == "docs/guide.md:3-3 (Guide)"


def test_a_citation_without_a_trail_is_just_the_file_and_lines() -> None:
    assert citation(".AGENTS/security.md", 12, 30) == ".AGENTS/security.md:12-30"
    assert citation(".AGENTS/security.md", 12, 30, ()) == ".AGENTS/security.md:12-30"
