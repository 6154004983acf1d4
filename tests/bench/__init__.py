"""What the benchmarks' tests share: whether the development sets' documents are here."""

from __future__ import annotations

import pytest

from bench.devsets import load_sets, missing
from bench.devsets_archive import ARCHIVE

needs_documents = pytest.mark.skipif(
    bool(missing(load_sets())),
    reason=f"the development sets' documents (bench/devsets/<set>/{ARCHIVE}) are in a clone, not in the sdist",
)
"""For a test that reads the sets' documents: skipped where they are not (an sdist)."""
