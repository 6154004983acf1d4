"""Safe reads: BOM and CRLF tolerated; binary, invalid UTF-8 and oversized files skipped."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

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
