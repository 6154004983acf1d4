"""How many hostile cases the suite tried, by kind; printed at the end of the run."""

from __future__ import annotations

from collections import Counter

CASES: Counter[str] = Counter()


def tried(kind: str, n: int = 1) -> None:
    CASES[kind] += n
