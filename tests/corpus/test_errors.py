"""The ways a corpus request fails: every message can be written as UTF-8 and JSON whatever name it
quotes (a byte that is not UTF-8 shows as `\\xNN`), and the kinds nest as their callers catch them:
a missing file is one kind of path the corpus does not serve; a file that changed since it was
indexed is not (it is re-indexed and asked again); each is a `CorpusError`, which the server
answers with the message."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from corpus.errors import CorpusError, Missing, Moved, NotInCorpus, RootNotFound
from corpus.roots import make_roots

ODD = b"notes\xff.md".decode("utf-8", "surrogateescape")
"""A file name that is not UTF-8, as Python carries it (`os.fsdecode` on a UTF-8 system)."""

KINDS = [CorpusError, RootNotFound, NotInCorpus, Missing, Moved]


@pytest.mark.parametrize("kind", KINDS)
def test_a_name_that_is_not_utf8_is_quoted_escaped_in_every_kind_of_error(kind: type[CorpusError]) -> None:
    error = kind(f"no file at agents://{ODD}")
    assert str(error) == "no file at agents://notes\\xff.md"
    assert json.loads(json.dumps({"error": str(error)}, ensure_ascii=False).encode("utf-8")) == {"error": str(error)}


@pytest.mark.parametrize("kind", KINDS)
def test_a_printable_message_is_kept_as_written(kind: type[CorpusError]) -> None:
    message = ".agents/数据.md has 3 lines; start_line 9 is past its end"
    assert str(kind(message)) == message


def test_an_error_without_a_message_says_nothing() -> None:
    assert str(CorpusError()) == ""


def test_a_missing_file_is_caught_where_a_path_the_corpus_does_not_serve_is() -> None:
    with pytest.raises(NotInCorpus) as caught:
        raise Missing("no file at agents://gone.md")
    assert isinstance(caught.value, Missing) and str(caught.value) == "no file at agents://gone.md"


def test_a_file_that_changed_since_it_was_indexed_is_not_a_path_outside_the_corpus() -> None:
    """Callers that answer "not served" for `NotInCorpus` must not say it of a file that only changed."""
    moved = Moved(".docs/guide.md changed since it was indexed")
    assert not isinstance(moved, NotInCorpus)
    assert isinstance(moved, CorpusError)


@pytest.mark.parametrize("kind", [RootNotFound, NotInCorpus, Missing, Moved])
def test_every_kind_is_caught_as_a_corpus_error(kind: type[CorpusError]) -> None:
    with pytest.raises(CorpusError):
        raise kind("x")


@pytest.mark.skipif(os.name != "posix", reason="a POSIX file name is bytes; Windows names are UTF-16")
def test_a_root_not_found_at_a_name_that_is_not_utf8_says_so_printably(tmp_path: Path) -> None:
    gone = tmp_path / b"gone\xff".decode("utf-8", "surrogateescape")
    with pytest.raises(RootNotFound) as caught:
        make_roots([gone])
    message = str(caught.value)
    assert message.endswith("gone\\xff does not exist"), message
    message.encode("utf-8")  # the unescaped name would make this raise
