"""Turning text into index terms. It never raises, on any input.

The text is NFKC-normalised (full-width letters, ligatures and the like become plain ones), then
cut into words: runs of letters and digits, joined by `_`, `-` or `.` into one identifier
(`watch_filter`, `watch-filter`, `watch.filter`). An identifier is indexed whole and split at
those joiners and at case changes (`watchFilter`), so all four spellings meet the query
`watch filter`, and each also meets the others as one term. Each part is case-folded and, except
in Chinese, Japanese and Korean, stripped of accents (`café` meets `cafe`); stop words and single
characters are dropped; English words are stemmed (Snowball English, through PyStemmer), so
`caching` meets `cache`. Chinese, Japanese and Korean runs, written without spaces, become
overlapping character bigrams (`東京タワー`: `東京 京タ タワ ワー`), so a query matches part of
a longer run instead of nothing.

Index terms are what is folded: display paths and URIs are never normalised.

A word's terms are computed once and cached (words follow Zipf's law, so nearly every word after
the first few thousand is a cache hit), which keeps stemming and splitting cheap.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from collections.abc import Callable
from contextlib import suppress
from typing import Any

import Stemmer

from retrieval.text.stopwords import ENGLISH, LUCENE

STOP_WORDS = ENGLISH

_WORD = re.compile(r"[^\W_]+(?:[_.\-]+[^\W_]+)*")
_PLAIN_WORD = re.compile(r"[^\W_]+")
_JOINER = re.compile(r"[_.\-]+")
_CACHE_LIMIT = 200_000
"""Words remembered at most; past that the cache starts again (about 40 MB at worst)."""


def is_cjk(char: str) -> bool:
    """Han, kana and Hangul: scripts written without spaces between words (Hangul: between
    some), searched by character bigrams."""
    code = ord(char)
    return (
        0x3040 <= code <= 0x30FF  # hiragana, katakana
        or 0x31F0 <= code <= 0x31FF  # katakana extensions
        or 0x3400 <= code <= 0x4DBF  # CJK extension A
        or 0x4E00 <= code <= 0x9FFF  # CJK unified ideographs
        or 0xAC00 <= code <= 0xD7AF  # Hangul syllables
        or 0x1100 <= code <= 0x11FF  # Hangul jamo
        or 0x3130 <= code <= 0x318F  # Hangul compatibility jamo
        or 0xF900 <= code <= 0xFAFF  # CJK compatibility ideographs
        or 0x20000 <= code <= 0x3134F  # CJK extensions B-G
    )


def fold_accents(text: str) -> str:
    """`Crème Brûlée` -> `Creme Brulee`; CJK is left alone (kana voicing marks are letters there)."""
    if text.isascii():
        return text
    kept: list[str] = []
    for char in text:
        if is_cjk(char):
            kept.append(char)
        else:
            kept.extend(c for c in unicodedata.normalize("NFKD", char) if not unicodedata.combining(c))
    return unicodedata.normalize("NFC", "".join(kept))


def split_case(word: str) -> list[str]:
    """`watchFilter` -> `watch Filter`, `HTTPServer` -> `HTTP Server`; digits stay attached."""
    parts: list[str] = []
    start = 0
    for i in range(1, len(word)):
        prev, cur = word[i - 1], word[i]
        nxt = word[i + 1] if i + 1 < len(word) else ""
        if cur.isupper() and (prev.islower() or prev.isdigit() or (prev.isupper() and nxt.islower())):
            parts.append(word[start:i])
            start = i
    parts.append(word[start:])
    return parts


def cjk_runs(text: str) -> list[tuple[str, bool]]:
    """`abc東京` -> [(abc, False), (東京, True)]."""
    runs: list[tuple[str, bool]] = []
    start = 0
    for i in range(1, len(text) + 1):
        if i == len(text) or is_cjk(text[i]) != is_cjk(text[start]):
            runs.append((text[start:i], is_cjk(text[start])))
            start = i
    return runs


def bigrams(run: str) -> list[str]:
    return [run] if len(run) == 1 else [run[i : i + 2] for i in range(len(run) - 1)]


class Tokenizer:
    """A configurable tokenizer; `tokenize` below is the one the server ships.

    With every option off it is the plain tokenizer: case-folded runs of letters and digits, the
    Lucene stop list, single characters dropped.
    """

    def __init__(
        self,
        *,
        stem: bool = True,
        stop_words: frozenset[str] = STOP_WORDS,
        identifiers: bool = True,
        fold: bool = True,
        cjk: bool = True,
    ) -> None:
        self.stem, self.stop_words, self.identifiers, self.fold, self.cjk = (
            stem,
            stop_words,
            identifiers,
            fold,
            cjk,
        )
        # PyStemmer's own cache is off: ours (per word, before splitting) already covers it.
        self._stemmer = Stemmer.Stemmer("english", 0) if stem else None
        self._cache: dict[str, list[str]] = {}
        self._pattern = _WORD if identifiers else _PLAIN_WORD

    def __reduce__(self) -> tuple[Any, ...]:
        """Sent to another process (a worker reading files) as its settings: the stemmer is a C
        object, made again there."""
        return (_tokenizer, (self.stem, self.stop_words, self.identifiers, self.fold, self.cjk))

    @property
    def fingerprint(self) -> str:
        """Everything that decides the terms of a text (a persisted index is only valid with the
        same fingerprint)."""
        from importlib.metadata import version  # here: 6 MB of imports that a worker process never needs

        stop = hashlib.sha256(" ".join(sorted(self.stop_words)).encode()).hexdigest()[:16]
        stemmer = f"snowball-english-{version('pystemmer')}" if self.stem else "none"
        return f"stem={stemmer} stop={stop} identifiers={self.identifiers} fold={self.fold} cjk={self.cjk}"

    def __call__(self, text: str) -> list[str]:
        if self.fold:
            text = unicodedata.normalize("NFKC", text)
        if not self.identifiers:
            text = text.casefold()  # no case changes to split at: fold first, as Lucene does
        cache, out = self._cache, []
        for word in self._pattern.findall(text):
            terms = cache.get(word)
            if terms is None:
                if len(cache) >= _CACHE_LIMIT:
                    cache.clear()
                terms = cache[word] = self._terms(word)
            out.extend(terms)
        return out

    def names(self, text: str) -> list[str]:
        """The stop words `text` writes as words of their own, case-folded: what `__call__` drops.
        A name can be one (Next.js's `after()`, documented in `after.md`): a page named by one
        keeps it in its page field, and a query's are scored against that field alone
        (`Ranking.page_terms`, the page bonus)."""
        if self.fold:
            text = unicodedata.normalize("NFKC", text)
        found = []
        for word in _PLAIN_WORD.findall(text):
            folded = word.casefold()
            if self.fold:
                folded = fold_accents(folded)
            if folded in self.stop_words:
                found.append(folded)
        return found

    def _terms(self, word: str) -> list[str]:
        """The index terms of one word: its whole form (if it had parts), then its parts."""
        if not self.identifiers:
            return self._normal(word)
        parts = [p for chunk in _JOINER.split(word) for p in split_case(chunk) if p]
        if len(parts) == 1:
            return self._normal(parts[0])
        terms = [t for part in parts for t in self._normal(part)]
        whole = self._normal("".join(parts))
        return [t for t in whole if t not in terms] + terms

    def _normal(self, part: str) -> list[str]:
        part = part.casefold()
        if self.fold:
            part = fold_accents(part)
        if self.cjk and not part.isascii() and any(is_cjk(c) for c in part):
            terms: list[str] = []
            for run, cjk in cjk_runs(part):
                terms.extend(bigrams(run) if cjk else self._word(run))
            return terms
        return self._word(part)

    def _word(self, word: str) -> list[str]:
        if len(word) < 2 or word in self.stop_words:
            return []
        if self._stemmer is not None:
            with suppress(UnicodeError):  # a lone surrogate (possible in a JSON query) stays as it is
                word = self._stemmer.stemWord(word)
        return [word]


def _tokenizer(stem: bool, stop_words: frozenset[str], identifiers: bool, fold: bool, cjk: bool) -> Tokenizer:
    return Tokenizer(stem=stem, stop_words=stop_words, identifiers=identifiers, fold=fold, cjk=cjk)


PLAIN = Tokenizer(stem=False, stop_words=LUCENE, identifiers=False, fold=False, cjk=False)
"""The plain tokenizer (no stemming, no identifier splitting): what the plain configuration and
the BM25 oracle tests use."""

tokenize: Callable[[str], list[str]] = Tokenizer()
