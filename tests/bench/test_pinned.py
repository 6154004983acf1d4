"""The pinned-search benchmark runs end to end on a few questions, so it cannot rot."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests.helpers import REPO

DATA = REPO.parent / "shared" / "eval"


@pytest.mark.skipif(not (DATA / "markdown-dev").is_dir(), reason=f"no eval data at {DATA}")
def test_the_pinned_benchmark_smoke_run_compares_both_ways() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "bench.pinned", "--smoke"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    for row in ("| before (pinned not searched) | all |", "| now (pinned searched) | all |"):
        assert row in done.stdout
