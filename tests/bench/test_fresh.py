"""The freshness benchmark in smoke mode, so it cannot rot (it asserts no timings)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.helpers import REPO


def test_fresh_benchmark_smoke_runs_and_reports_every_part(tmp_path: Path) -> None:
    out = tmp_path / "fresh.json"
    done = subprocess.run(
        [sys.executable, str(REPO / "bench" / "fresh.py"), "--smoke", "--json", str(out)],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    for heading in (
        "## save to searchable",
        "## one-file update against a full rebuild",
        "## read-your-writes",
    ):
        assert heading in done.stdout
    results = json.loads(out.read_text())
    assert results["agents"]["save"]["n"] == 5
    assert results["agents"]["stale_answers_after_delete"] == 0
    assert results["updates"][0]["sections"] >= 1000
