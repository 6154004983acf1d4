"""The quality benchmark runs end to end on a few queries, so it cannot rot (no figure is asserted)."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest

from tests.helpers import REPO

ROOT = REPO
DATA = ROOT.parent / "shared" / "eval"


@pytest.mark.skipif(not (DATA / "markdown-dev").is_dir(), reason=f"no eval data at {DATA}")
def test_the_quality_benchmark_smoke_run_prints_its_tables() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "bench.quality", "--smoke"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    out = done.stdout
    for row in (
        "| all | ours |",
        "| all | BM25Okapi |",
        "| scifact | even (held out) | ours |",
        "| cranfield | all | BM25Okapi |",
        "| documentation | 4 | ours |",
        "| agent files | 4 | plain BM25 |",
    ):
        assert row in out
    assert "ir-measures" in out
    figures = [float(x) for x in re.findall(r"\| (\d\.\d{3}) ", out)]
    assert len(figures) >= 80 and all(0.0 <= x <= 1.0 for x in figures)
