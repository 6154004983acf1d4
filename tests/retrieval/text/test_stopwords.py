"""Stop lists: Lucene's classic set, and the English list that keeps words meaning something in tech text."""

from __future__ import annotations

import pytest

from retrieval.text.stopwords import ENGLISH, LUCENE
from retrieval.text.tokenize import PLAIN, tokenize

LUCENE_CLASSIC = {
    *("a", "an", "and", "are", "as", "at", "be", "but", "by", "for", "if", "in", "into", "is", "it"),
    *("no", "not", "of", "on", "or", "such", "that", "the", "their", "then", "there", "these"),
    *("they", "this", "to", "was", "will", "with"),
}
"""Written out from Lucene's `EnglishAnalyzer.ENGLISH_STOP_WORDS_SET`."""

MEANINGFUL = ("not", "no", "only", "same", "all", "any")


def test_lucene_is_the_classic_thirty_three_word_set() -> None:
    assert len(LUCENE) == 33
    assert set(LUCENE) == LUCENE_CLASSIC


@pytest.mark.parametrize("word", MEANINGFUL)
def test_english_keeps_words_that_carry_meaning_in_technical_text(word: str) -> None:
    assert word not in ENGLISH


@pytest.mark.parametrize("word", ["the", "and", "of", "is", "a", "to", "with", "which", "doesn't"])
def test_english_drops_common_words(word: str) -> None:
    assert word in ENGLISH


def test_stop_lists_are_lower_case_single_words() -> None:
    for word in LUCENE | ENGLISH:
        assert word == word.casefold()
        assert word.split() == [word]


def test_the_shipped_tokenizer_indexes_negations_and_only_but_not_the() -> None:
    assert tokenize("not") == ["not"]
    assert tokenize("no") == ["no"]
    assert tokenize("only") == tokenize("Only") != []
    assert tokenize("the") == []
    assert tokenize("Do NOT retry the deploy") == ["not", "retri", "deploy"]


def test_a_query_for_a_negation_differs_from_the_plain_statement() -> None:
    assert tokenize("cache is not shared") != tokenize("cache is shared")
    assert tokenize("only admins") != tokenize("admins")


def test_the_plain_tokenizer_drops_what_lucene_drops() -> None:
    assert PLAIN("not the only way") == ["only", "way"]
