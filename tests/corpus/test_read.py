"""Safe reads: BOM and CRLF tolerated; binary, invalid UTF-8 and oversized files skipped."""

from __future__ import annotations

import os
from collections.abc import Callable
from functools import partial
from pathlib import Path

import pytest

import corpus.read
from corpus.read import Changing, read_again, read_text
from tests.corpus.support import corpus_of, reasons
from tests.tally import tried


def test_bom_and_crlf_are_tolerated(make_tree: Callable[..., Path]) -> None:
    root = make_tree({"a.md": b"\xef\xbb\xbf# Title\r\nline two\r\nold mac\rend\r\n"})
    text = corpus_of(root).files[".AGENTS/a.md"].text
    assert text == "# Title\nline two\nold mac\nend\n"


def test_binary_invalid_utf8_and_too_large_are_skipped(make_tree: Callable[..., Path]) -> None:
    root = make_tree(
        {
            "binary.md": b"# looks like text\x00but has a NUL\n",
            "latin1.md": "café\n".encode("latin-1"),
            "big.md": "x" * 2000,
            "small.md": "fine\n",
        }
    )
    got = reasons(corpus_of(root, max_bytes=1000))
    assert got["binary.md"].startswith("binary")
    assert got["latin1.md"].startswith("not UTF-8 text")
    assert got["big.md"] == "too large (2000 bytes, limit 1000)"
    assert "small.md" not in got
    tried("binary, not UTF-8 or too large (scan)", 3)


def test_a_file_read_again_is_returned_only_while_it_holds_the_bytes_read_before(tmp_path: Path) -> None:
    path = tmp_path / "page.md"
    path.write_bytes(b"\xef\xbb\xbf# Page\r\n\r\nSame bytes.\r\n")
    first = read_text(tmp_path, path)
    again = partial(read_again, str(path), first.size, first.digest)
    assert again() == first.text == "# Page\n\nSame bytes.\n"
    path.write_bytes(b"\xef\xbb\xbf# Page\r\n\r\nSome bytes.\r\n")  # same size, other bytes
    assert again() is None
    path.unlink()
    assert again() is None
    path.mkdir()
    assert again() is None
    path.rmdir()
    if hasattr(os, "mkfifo"):  # a FIFO in its place is never waited on
        os.mkfifo(path)
        assert again() is None


def test_a_file_replaced_while_it_is_read_is_never_taken_for_the_new_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A writer renames another file onto the path just after the read opened it: the bytes read
    are the old file's, which no longer exists; taken as the path's text, they would stay in the
    index for good whenever the new file has the same size and times (one tick of the clock)."""
    page, other = tmp_path / "page.md", tmp_path / "other.md"
    page.write_text("# Page\n\nold words\n")
    other.write_text("# Page\n\nnew words\n")
    opened = corpus.read.open_confined

    def open_then_replace(root: Path, real: Path) -> int:
        fd = opened(root, real)
        other.replace(page)
        return fd

    monkeypatch.setattr(corpus.read, "open_confined", open_then_replace)
    with pytest.raises(Changing, match="replaced"):
        read_text(tmp_path, page)
    monkeypatch.undo()
    assert read_text(tmp_path, page).text == "# Page\n\nnew words\n"


def test_a_file_renamed_away_while_it_is_read_is_never_taken_for_the_one_now_there(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The writer renames the file away just after the read opened it, and writes a new one of
    the same size at its path: the bytes read live on elsewhere (still linked), and are not what
    the path holds."""
    page = tmp_path / "page.md"
    page.write_text("# Page\n\nold words\n")
    opened = corpus.read.open_confined

    def open_then_move(root: Path, real: Path) -> int:
        fd = opened(root, real)
        page.rename(tmp_path / "moved.md")
        page.write_text("# Page\n\nnew words\n")
        return fd

    monkeypatch.setattr(corpus.read, "open_confined", open_then_move)
    with pytest.raises(Changing, match="replaced"):
        read_text(tmp_path, page)
    monkeypatch.undo()
    assert read_text(tmp_path, page).text == "# Page\n\nnew words\n"
