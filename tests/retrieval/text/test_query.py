"""Reading a query: its terms, its quoted phrases, its limits, and whether it names a file."""

from __future__ import annotations

import pytest

from retrieval.text.query import MAX_QUERY_CHARS, MAX_QUERY_TERMS, contains, looks_like_path, parse
from retrieval.text.tokenize import tokenize


def test_a_straight_quoted_phrase_is_a_phrase_and_its_words_are_terms_in_order() -> None:
    query = parse('deploy "watch filter" rollback', tokenize)
    assert query.phrases == (("watch", "filter"),)
    assert query.quoted == ("watch filter",)
    assert query.terms == ("deploy", "watch", "filter", "rollback")
    assert query.raw == 'deploy "watch filter" rollback'


def test_curly_quotes_make_phrases_too() -> None:
    query = parse("rollback “zebra switch” now", tokenize)
    assert query.phrases == (("zebra", "switch"),)
    assert query.quoted == ("zebra switch",)
    assert query.terms == ("rollback", "zebra", "switch")


def test_several_phrases_are_kept_in_the_order_typed() -> None:
    query = parse('"zebra switch" and “watch filter list”', tokenize)
    assert query.phrases == (("zebra", "switch"), ("watch", "filter", "list"))
    assert query.quoted == ("zebra switch", "watch filter list")


def test_phrase_words_are_stemmed_like_every_other_term() -> None:
    query = parse('"caching layers"', tokenize)
    assert query.phrases == ((tuple(tokenize("caching layers"))),)
    assert query.phrases[0] == ("cach", "layer")


@pytest.mark.parametrize("raw", ['"zebra" switch', "“zebra” switch", '"the zebra"', '"a"', '""'])
def test_a_quote_of_fewer_than_two_terms_is_not_a_phrase(raw: str) -> None:
    query = parse(raw, tokenize)
    assert query.phrases == ()
    assert query.quoted == ()


def test_an_unclosed_quote_is_not_a_phrase_but_its_words_are_terms() -> None:
    query = parse('deploy "zebra switch', tokenize)
    assert query.phrases == ()
    assert query.terms == ("deploy", "zebra", "switch")


def test_a_short_query_is_not_clipped() -> None:
    query = parse("how do I roll back a deploy", tokenize)
    assert not query.clipped
    assert query.terms == ("roll", "back", "deploy")


def test_a_query_longer_than_the_limit_is_cut_and_marked_clipped() -> None:
    raw = "zebra " * MAX_QUERY_CHARS
    query = parse(raw, tokenize)
    assert query.clipped
    assert query.raw == raw[:MAX_QUERY_CHARS]
    assert len(query.terms) == MAX_QUERY_TERMS


def test_a_query_of_exactly_the_character_limit_is_not_clipped() -> None:
    raw = "zebra " + "x" * (MAX_QUERY_CHARS - 6)
    assert len(raw) == MAX_QUERY_CHARS
    query = parse(raw, tokenize)
    assert not query.clipped
    assert query.raw == raw


def test_more_terms_than_the_limit_are_cut_to_the_limit_and_marked_clipped() -> None:
    words = [f"word{i}" for i in range(MAX_QUERY_TERMS + 1)]
    query = parse(" ".join(words), tokenize)
    assert len(" ".join(words)) < MAX_QUERY_CHARS
    assert query.clipped
    assert query.terms == tuple(words[:MAX_QUERY_TERMS])


def test_exactly_the_term_limit_is_not_clipped() -> None:
    words = [f"word{i}" for i in range(MAX_QUERY_TERMS)]
    query = parse(" ".join(words), tokenize)
    assert not query.clipped
    assert query.terms == tuple(words)


def test_a_phrase_is_found_only_as_a_contiguous_run_in_order() -> None:
    tokens = ["roll", "back", "the", "zebra", "switch"]
    assert contains(tokens, ["zebra", "switch"])
    assert contains(tokens, ["roll", "back"])
    assert contains(tokens, tokens)
    assert not contains(tokens, ["roll", "zebra"])  # both there, not adjacent
    assert not contains(tokens, ["switch", "zebra"])  # adjacent, wrong order
    assert not contains(tokens, ["zebra", "switch", "off"])  # runs past the end
    assert not contains(["zebra"], ["zebra", "switch"])


def test_contains_works_on_term_ids_as_well_as_words() -> None:
    assert contains((4, 8, 15, 16), (8, 15))
    assert not contains((4, 8, 15, 16), (4, 15))


@pytest.mark.parametrize(
    "raw",
    [
        "security.md",
        ".AGENTS/services/api.md",
        "docs/guide/",
        "services/api",
        "  `security.md`  ",
        '"CLAUDE.md"',
        "pyproject.toml",
    ],
)
def test_a_file_or_folder_name_looks_like_a_path(raw: str) -> None:
    assert looks_like_path(raw)


@pytest.mark.parametrize(
    "raw",
    ["deploy rollback", "what is this?", "", "   ", "``", "roll back/forward plan", "end of sentence.", "security md"],
)
def test_words_do_not_look_like_a_path(raw: str) -> None:
    assert not looks_like_path(raw)
