"""Names as they come in and go out: a path longer than 4,096 characters, or with one name longer
than 255, is refused by its length alone with the reason; a name that is not UTF-8 is shown with
each odd byte written `\\xNN` (any other lone surrogate `\\uNNNN`), so it can always be written as
UTF-8 and JSON, and any other text is shown as it is. The server's answers to such paths are
tests/promises/test_names.py."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from corpus.names import MAX_NAME_CHARS, MAX_PATH_CHARS, printable, too_long

# --- too_long ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "path",
    [
        "security.md",
        "services/api/errors.md",
        "/".join(["a"] * 2048) + "b",  # 4,096 characters: at the limit
        "/".join(["n" * MAX_NAME_CHARS] * 16),  # 4,095 characters, each name at its limit
    ],
)
def test_a_path_within_both_limits_is_not_refused(path: str) -> None:
    assert len(path) <= MAX_PATH_CHARS
    assert too_long(path) is None


def test_a_path_one_character_over_4096_is_refused_with_its_length() -> None:
    path = "/".join(["a"] * 2048) + "/b"
    assert len(path) == MAX_PATH_CHARS + 1
    assert too_long(path) == "path too long (4,097 characters): at most 4,096"


def test_a_path_of_thousands_of_segments_is_refused_by_its_length() -> None:
    assert too_long("../" * 5000) == "path too long (15,000 characters): at most 4,096"


def test_a_name_of_255_characters_is_fine_and_one_of_256_is_refused_with_its_length() -> None:
    assert too_long("docs/" + "x" * MAX_NAME_CHARS + "/a.md") is None
    assert too_long("docs/" + "x" * (MAX_NAME_CHARS + 1) + "/a.md") == (
        "a name in the path is too long (256 characters): at most 255 per file or folder"
    )


def test_the_longest_name_is_the_one_reported() -> None:
    path = "/".join(["a" * 300, "b" * 1000, "c" * 400])
    assert too_long(path) == "a name in the path is too long (1,000 characters): at most 255 per file or folder"


def test_backslashes_separate_names_as_slashes_do() -> None:
    """A Windows path's names are counted one by one, not as one long name."""
    windows = "C:\\" + "\\".join(["folder"] * 50) + "\\rules.md"
    assert too_long(windows) is None
    assert too_long("C:\\Users\\" + "y" * 300) == (
        "a name in the path is too long (300 characters): at most 255 per file or folder"
    )


def test_a_path_too_long_in_both_ways_is_refused_for_its_whole_length() -> None:
    assert too_long("z" * 5000) == "path too long (5,000 characters): at most 4,096"


# --- printable --------------------------------------------------------------------------------------


@pytest.mark.parametrize("text", ["security.md", "", "ünï/数据/文档.md", "emoji \U0001f600.md", "tab\there"])
def test_text_that_is_already_printable_is_shown_as_it_is(text: str) -> None:
    assert printable(text) == text


def test_a_name_that_is_not_utf8_shows_each_odd_byte_as_backslash_x() -> None:
    name = b"odd\xff".decode("utf-8", "surrogateescape")  # as os.fsdecode carries it
    assert printable(name) == "odd\\xff"
    assert list(printable(name)) == ["o", "d", "d", "\\", "x", "f", "f"]  # a backslash, never the byte


def test_every_undecodable_byte_is_written_as_its_own_value() -> None:
    for byte in range(0x80, 0x100):
        carried = bytes([byte]).decode("utf-8", "surrogateescape")
        assert printable(carried) == f"\\x{byte:02x}", byte


def test_a_lone_surrogate_that_is_no_byte_is_written_as_its_code_point() -> None:
    assert printable("a\ud800b") == "a\\ud800b"
    assert printable("\udfff") == "\\udfff"
    assert printable("\udc7f") == "\\udc7f"  # just below the 128 surrogates that carry a byte


def test_only_the_odd_characters_change_in_a_mixed_name() -> None:
    name = "数据/" + b"caf\xe9".decode("utf-8", "surrogateescape") + "/ünï.md"  # Latin-1 bytes in a UTF-8 tree
    assert printable(name) == "数据/caf\\xe9/ünï.md"


@given(st.text(alphabet=st.one_of(st.characters(), st.integers(0xD800, 0xDFFF).map(chr))))  # and lone surrogates
def test_whatever_a_name_holds_what_is_shown_can_be_written_as_utf8_and_json(text: str) -> None:
    shown = printable(text)
    shown.encode("utf-8")  # a lone surrogate would make this raise
    assert json.loads(json.dumps(shown, ensure_ascii=False)) == shown
    if not any(0xD800 <= ord(c) <= 0xDFFF for c in text):
        assert shown == text
    else:
        assert shown != text
