"""Index terms: identifiers, Unicode normalisation, CJK bigrams, stemming, stop words."""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from retrieval.text.stopwords import LUCENE
from retrieval.text.tokenize import PLAIN, Tokenizer, bigrams, fold_accents, split_case, tokenize


@pytest.mark.parametrize("spelling", ["watch_filter", "watchFilter", "watch-filter", "watch.filter", "WatchFilter"])
def test_every_identifier_spelling_meets_the_words_and_the_other_spellings(spelling: str) -> None:
    terms = tokenize(spelling)
    assert {"watch", "filter"} <= set(terms)  # meets the query `watch filter`
    assert set(tokenize("watch_filter")) == set(terms)  # and each other, whole
    assert len(terms) == 3  # the whole form once, then each part


def test_identifier_parts_follow_case_changes_but_not_digits() -> None:
    assert split_case("HTTPServer") == ["HTTP", "Server"]
    assert split_case("getHTTPResponse") == ["get", "HTTP", "Response"]
    assert split_case("utf8Decode") == ["utf8", "Decode"]
    assert split_case("lower") == ["lower"]
    assert tokenize("pyproject.toml") == ["pyprojecttoml", "pyproject", "toml"]


def test_a_sentence_end_is_not_an_identifier() -> None:
    assert tokenize("Use the cache. Then restart.") == ["use", "cach", "restart"]


def test_nfkc_casefold_and_accents_are_folded() -> None:
    assert tokenize("ＷＡＴＣＨ") == tokenize("watch")  # full-width letters
    assert tokenize("ﬁlter") == tokenize("filter")  # ligature
    assert tokenize("Café CRÈME") == tokenize("cafe creme")
    assert tokenize("Straße") == tokenize("strasse")
    assert fold_accents("Crème Brûlée") == "Creme Brulee"


def test_kana_voicing_marks_are_kept_because_they_are_letters_there() -> None:
    assert tokenize("がっこう") != tokenize("かっこう")


def test_cjk_runs_become_bigrams_so_part_of_a_run_matches() -> None:
    assert tokenize("東京タワー") == ["東京", "京タ", "タワ", "ワー"]
    assert tokenize("東京") == ["東京"]
    assert tokenize("東") == ["東"]  # a lone ideograph is a word
    assert set(tokenize("東京")) <= set(tokenize("東京タワーに行く"))
    assert set(tokenize("안녕")) <= set(tokenize("안녕하세요 세계"))
    assert tokenize("MCP服务器") == ["mcp", "服务", "务器"]
    assert bigrams("ab") == ["ab"] and bigrams("abc") == ["ab", "bc"]


def test_english_words_are_stemmed_and_stop_words_dropped() -> None:
    assert tokenize("caching cached caches") == ["cach"] * 3
    assert tokenize("Configuring the configuration") == ["configur", "configur"]
    assert tokenize("how do I run it?") == ["run"]
    assert tokenize("a b c") == []


def test_the_plain_tokenizer_is_the_tokenizer_before_issue_5() -> None:
    text = "The watch_filter, WatchFilter & Straße: v2.0! Ünïcode café 東京タワー İstanbul"
    legacy = [t for t in re.findall(r"[^\W_]+", text.casefold()) if len(t) > 1 and t not in LUCENE]
    assert PLAIN(text) == legacy


def test_options_switch_each_step_off() -> None:
    assert Tokenizer(stem=False)("caching") == ["caching"]
    assert Tokenizer(identifiers=False)("watchFilter") == ["watchfilt"]
    assert Tokenizer(cjk=False)("東京タワー") == ["東京タワー"]
    assert Tokenizer(fold=False)("café") == ["café"]


def test_a_lone_surrogate_does_not_break_stemming() -> None:
    assert tokenize("caching\ud800cached") == ["cach", "cach"]
    assert tokenize("ab\ud800") == ["ab"]


@given(st.text(st.characters(codec=None, categories=None)))
def test_the_tokenizer_never_raises_and_terms_are_folded(text: str) -> None:
    for term in tokenize(text):
        assert term and term == term.casefold()
