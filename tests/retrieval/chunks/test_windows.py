"""Line windows: ~500 words with 50 of overlap, whole original lines, every line covered."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from corpus.markdown import split_lines
from retrieval.chunks.units import window_units
from retrieval.chunks.windows import windows
from tests.retrieval.chunks.support import markdownish


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
