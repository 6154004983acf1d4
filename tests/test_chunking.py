"""Tokens, heading sections and line windows."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from corpus.markdown import split_lines
from retrieval.chunks.sections import INTRO, SectionSpan, sections
from retrieval.chunks.units import section_units, window_units
from retrieval.chunks.windows import windows
from retrieval.text.tokenize import tokenize

# --- sections -------------------------------------------------------------------------------


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


def test_front_matter_is_left_out_and_lines_stay_original() -> None:
    text = "---\ntitle: Deploy\ntags: [ops]\n---\n\n# Deploy\nSteps.\n"
    (only,) = section_units(".AGENTS/d.md", "agents://d.md", text)
    assert (only.heading, only.start_line, only.end_line) == ("Deploy", 6, 7)
    assert only.text == "# Deploy\nSteps."
    assert "title" not in tokenize(only.text)


def test_no_heading_or_not_markdown_is_one_section() -> None:
    assert spans("just text\nmore\n") == [(INTRO, (INTRO,), 1, 2)]
    assert spans("# not a heading in a .txt\nline\n", markdown=False) == [(INTRO, (INTRO,), 1, 2)]


def test_empty_and_blank_files_have_no_sections() -> None:
    assert spans("") == []
    assert spans("\n\n   \n") == []


def test_headings_in_quotes_and_lists_do_not_split_and_anchors_are_dropped() -> None:
    text = "# Top {#top}\n> # quoted\n- # listed\n## Next ##\n"
    assert spans(text) == [("Top", ("Top",), 1, 3), ("Next", ("Top", "Next"), 4, 4)]


def test_section_units_keep_text_verbatim_with_the_heading_line() -> None:
    text = "# A\r\n".replace("\r\n", "\n") + "  indented  \n\n# B\nlast"
    units = section_units(".AGENTS/x.md", "agents://x.md", text)
    assert [u.text for u in units] == ["# A\n  indented  ", "# B\nlast"]


markdownish = st.lists(
    st.one_of(
        st.sampled_from(["# H1", "## H2", "### H3", "```", "~~~", "---", "===", "", "   ", "> # q"]),
        st.text(alphabet=st.characters(blacklist_characters="\r\n\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029")),
    ),
    max_size=40,
).map("\n".join)


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


# --- windows --------------------------------------------------------------------------------


def numbered(n_lines: int, words_per_line: int) -> str:
    return "\n".join(" ".join(f"w{i}_{j}" for j in range(words_per_line)) for i in range(n_lines)) + "\n"


def test_windows_are_about_500_words_with_50_of_overlap() -> None:
    text = numbered(200, 10)  # 2,000 words
    found = windows(text)
    assert [(w.chunk_id, w.start_line, w.end_line) for w in found] == [
        (0, 1, 50),
        (1, 46, 95),
        (2, 91, 140),
        (3, 136, 185),
        (4, 181, 200),
    ]


def test_window_text_is_the_original_lines() -> None:
    text = "---\nk: v\n---\n\n  first line  \n\n\tsecond\n"
    (only,) = window_units("docs/a.md", "agents-docs://docs/a.md", text)
    assert (only.start_line, only.end_line, only.chunk_id) == (5, 7, 0)
    assert only.text == "  first line  \n\n\tsecond"


def test_one_huge_line_is_one_window_and_empty_text_none() -> None:
    assert [(w.start_line, w.end_line) for w in windows("word " * 2000)] == [(1, 1)]
    assert windows("") == []
    assert windows("\n \n") == []


@given(markdownish, st.integers(min_value=1, max_value=30), st.integers(min_value=0, max_value=10))
def test_windows_cover_every_line_and_keep_it_verbatim(text: str, size: int, overlap: int) -> None:
    lines = split_lines(text)
    found = windows(text, markdown=False, size=size, overlap=overlap)
    assert [w.chunk_id for w in found] == list(range(len(found)))
    covered = {n for w in found for n in range(w.start_line, w.end_line + 1)}
    for n, line in enumerate(lines, start=1):
        if line.strip():
            assert n in covered
    starts = [w.start_line for w in found]
    assert starts == sorted(set(starts)), "windows must move forward"
    for unit in window_units("d/x.txt", "u", text):
        assert unit.text == "\n".join(lines[unit.start_line - 1 : unit.end_line])


def test_window_units_carry_the_trail_of_the_section_they_start_in() -> None:
    text = "# Guide\n\n## Install\n\n" + ("word " * 10 + "\n\n") * 60
    units = window_units("docs/g.md", "u", text)
    assert units[0].trail == ("Guide",) and units[-1].trail == ("Guide", "Install")
