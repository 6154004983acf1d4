"""Section anchors as GitHub makes them, line-range fragments, and citations."""

from __future__ import annotations

import pytest

from retrieval.chunks.anchors import INTRO_ANCHOR, anchors, citation, line_range, slug


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
    ],
)
def test_a_line_range_fragment_gives_its_lines(fragment: str, lines: tuple[int, int]) -> None:
    assert line_range(fragment) == lines


@pytest.mark.parametrize(
    "fragment",
    ["secrets", "", "L", "l12", "L12-", "12-30", "L12-L30x", "L12:30", "L-12", "xL12", "L12-L", "L 12"],
)
def test_anything_else_is_not_a_line_range(fragment: str) -> None:
    assert line_range(fragment) is None


def test_a_citation_names_the_file_the_lines_and_the_trail() -> None:
    assert citation(".AGENTS/security.md", 12, 30, ("Security", "Secrets")) == (
        ".AGENTS/security.md:12-30 (Security > Secrets)"
    )
    assert citation("docs/guide.md", 3, 3, ("Guide",)) == "docs/guide.md:3-3 (Guide)"


def test_a_citation_without_a_trail_is_just_the_file_and_lines() -> None:
    assert citation(".AGENTS/security.md", 12, 30) == ".AGENTS/security.md:12-30"
    assert citation(".AGENTS/security.md", 12, 30, ()) == ".AGENTS/security.md:12-30"
