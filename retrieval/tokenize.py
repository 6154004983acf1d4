"""Turning text into index terms.

Unicode-aware and case-folded; a term is a run of letters and digits (so `watch_filter` gives
`watch` and `filter`); a short stop list and single characters are dropped. It never raises, on
any input.
"""

from __future__ import annotations

import re

STOP_WORDS: frozenset[str] = frozenset(
    # Lucene's classic English stop set.
    "a an and are as at be but by for if in into is it no not of on or such "
    "that the their then there these they this to was will with".split()
)

_TERM = re.compile(r"[^\W_]+")


def tokenize(text: str) -> list[str]:
    return [term for term in _TERM.findall(text.casefold()) if len(term) > 1 and term not in STOP_WORDS]
