"""Units: sections and windows of a file, with their text, trails and front matter."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from corpus.catalog import load
from corpus.errors import NotHeld
from corpus.roots import make_roots
from retrieval.chunks.units import Unit, section_units, window_units
from retrieval.engine.library import Library
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


def test_every_unit_is_a_view_of_its_files_text_not_a_copy_of_its_lines() -> None:
    text = "# A\r\none\r\n\r\n# B\ntwo\nthree"  # CRLF lines keep their \r; the last has no newline
    units = [*section_units("docs/x.md", "u", text), *window_units("docs/x.md", "u", text)]
    for u in units:
        assert u.source is text
        assert u.text == "\n".join(text.split("\n")[u.start_line - 1 : u.end_line])
    assert [u.text for u in units] == ["# A\r\none\r", "# B\ntwo\nthree", text]


def test_a_unit_starting_at_a_later_line_keeps_only_its_lines_from_there() -> None:
    text = "# A\nl2\nl3\nl4\n"
    (unit,) = section_units("docs/a.md", "u", text)
    later = unit.starting_at(3)
    assert (later.start_line, later.end_line, later.text, later.source) == (3, 4, "l3\nl4", text)
    own = Unit("docs/a.md", "u", "l1\nl2\nl3", 1, 3)  # a unit holding its own text
    assert (own.text, own.starting_at(2).text, own.starting_at(3).text) == ("l1\nl2\nl3", "l2\nl3", "l3")


def test_units_of_a_file_not_held_share_the_file_and_never_read_it(make_tree: Callable[..., Path]) -> None:
    """A docs file's units point at the file, not at its text: asking one for its text refuses
    (`live.texts.held` reads it), and their terms are those of the held units."""
    text = "# Guide\n\n## Install\n\nRun it.\nThen check.\n\n## Use\n\nCall it.\n"
    docs = make_tree({"guide.md": text}, name="docs")
    f = load(make_roots([], [docs])).files["docs/guide.md"]
    held_file, held = Library().prepare_file(f)
    kept, shed = Library().prepare_file(f, hold=False)
    assert held_file is f and not kept.held and kept.text == ""
    assert all(d.payload.source is kept for d in shed.windows + shed.sections)
    assert [d.fields for d in shed.windows] == [d.fields for d in held.windows]
    with pytest.raises(NotHeld):
        _ = shed.windows[0].payload.text
