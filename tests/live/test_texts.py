"""A docs file's text, owned by the live index: read from the file when a hit is shown, and only
while the file still has the content it was indexed with."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from corpus.catalog import load
from corpus.errors import Moved, NotHeld
from corpus.roots import make_roots
from live import texts
from retrieval.engine.library import Library


def test_a_file_without_its_text_reads_it_from_disk_as_indexed(make_tree: Callable[..., Path]) -> None:
    docs = make_tree({"guide.md": "# Guide\n\nStep one.\r\nStep two.\n"}, name="docs")
    f = load(make_roots([], [docs])).files["docs/guide.md"]
    kept = f.without_text()
    assert texts.content(f) == f.text
    assert texts.content(kept) == f.text == "# Guide\n\nStep one.\nStep two.\n"


@pytest.mark.parametrize(
    "change",
    [
        lambda p: p.write_text("# Guide\n\nStep one, rewritten.\n"),
        lambda p: p.write_text("# Guide\n\nStep one.\nStep two.\nStep three, which makes it larger.\n"),
        lambda p: p.write_text("# Guide\n\nStep 1.\nStep 2.\n"),  # same size
        lambda p: p.unlink(),
        lambda p: p.write_bytes(b"\xff\xfe binary now \x00"),
    ],
    ids=["rewritten", "grown", "same-size", "deleted", "binary"],
)
def test_a_file_without_its_text_that_changed_since_says_so(
    make_tree: Callable[..., Path], change: Callable[[Path], object]
) -> None:
    docs = make_tree({"guide.md": "# Guide\n\nStep one.\nStep two.\n"}, name="docs")
    kept = load(make_roots([], [docs])).files["docs/guide.md"].without_text()
    change(docs / "guide.md")
    with pytest.raises(Moved) as raised:
        texts.content(kept)
    assert str(raised.value) == "docs/guide.md changed since it was indexed"


def test_a_unit_of_a_file_not_held_gets_its_lines_from_the_file(make_tree: Callable[..., Path]) -> None:
    text = "# Guide\n\n## Install\n\nRun it.\nThen check.\n\n## Use\n\nCall it.\n"
    docs = make_tree({"guide.md": text}, name="docs")
    f = load(make_roots([], [docs])).files["docs/guide.md"]
    _, held = Library().prepare_file(f)
    _, shed = Library().prepare_file(f, hold=False)
    owns = [texts.held(d.payload) for d in shed.windows]
    assert [u.text if u else None for u in owns] == [d.payload.text for d in held.windows]
    own = owns[0]
    assert own is not None and isinstance(own.source, str)
    assert own.citation == held.windows[0].payload.citation
    assert own.starting_at(4).text == held.windows[0].payload.starting_at(4).text
    (docs / "guide.md").unlink()
    assert own.text.startswith("# Guide")  # a unit holding its text no longer needs the file


def test_a_unit_whose_file_changed_since_it_was_indexed_cannot_hold_its_text(
    make_tree: Callable[..., Path],
) -> None:
    docs = make_tree({"guide.md": "# Guide\n\nRun it.\n"}, name="docs")
    _, shed = Library().prepare_file(load(make_roots([], [docs])).files["docs/guide.md"], hold=False)
    (docs / "guide.md").write_text("# Guide\n\nRun it twice.\n")
    (unit,) = (d.payload for d in shed.windows)
    assert texts.held(unit) is None
    with pytest.raises(NotHeld):
        _ = unit.text  # the unit itself never reads the file


def test_each_answer_reads_its_hits_files_again(make_tree: Callable[..., Path]) -> None:
    """Within one answer a file is read once; the next answer reads it again, so a file that
    changed meanwhile (here keeping its size) is never shown as indexed from a text kept before."""
    docs = make_tree({"guide.md": "# Guide\n\nStep one.\n"}, name="docs")
    kept = load(make_roots([], [docs])).files["docs/guide.md"].without_text()
    one_answer: texts.Read = {}
    assert texts.content(kept, one_answer) == "# Guide\n\nStep one.\n"
    (docs / "guide.md").write_text("# Guide\n\nStep two.\n")
    assert texts.content(kept, one_answer) == "# Guide\n\nStep one.\n"  # the same answer: read once
    with pytest.raises(Moved):
        texts.content(kept, {})  # the next answer
    with pytest.raises(Moved):
        texts.content(kept)
