"""Units: sections and windows of a file, with their text, trails and front matter."""

from __future__ import annotations

from retrieval.chunks.units import section_units, window_units
from retrieval.text.tokenize import tokenize


def test_front_matter_is_left_out_and_lines_stay_original() -> None:
    text = "---\ntitle: Deploy\ntags: [ops]\n---\n\n# Deploy\nSteps.\n"
    (only,) = section_units(".AGENTS/d.md", "agents://d.md", text)
    assert (only.heading, only.start_line, only.end_line) == ("Deploy", 6, 7)
    assert only.text == "# Deploy\nSteps."
    assert "title" not in tokenize(only.text)


def test_section_units_keep_text_verbatim_with_the_heading_line() -> None:
    text = "# A\r\n".replace("\r\n", "\n") + "  indented  \n\n# B\nlast"
    units = section_units(".AGENTS/x.md", "agents://x.md", text)
    assert [u.text for u in units] == ["# A\n  indented  ", "# B\nlast"]


def test_window_units_carry_the_trail_of_the_section_they_start_in() -> None:
    text = "# Guide\n\n## Install\n\n" + ("word " * 10 + "\n\n") * 60
    units = window_units("docs/g.md", "u", text)
    assert units[0].trail == ("Guide",) and units[-1].trail == ("Guide", "Install")
