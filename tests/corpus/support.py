"""A root read once (`corpus_of`), and what it served and skipped, for the corpus tests."""

from __future__ import annotations

import os
from pathlib import Path

from corpus.catalog import Corpus, load
from corpus.roots import make_roots
from corpus.rules import PinSet

POSIX = os.name == "posix"


def corpus_of(root: Path, pins: PinSet | None = None, max_bytes: int = 1024 * 1024) -> Corpus:
    return load(make_roots([root]), pins, max_bytes)


def served(corpus: Corpus) -> list[str]:
    return sorted(f.rel for f in corpus.files.values())


def reasons(corpus: Corpus) -> dict[str, str]:
    return {s.rel: s.reason for s in corpus.skipped}
