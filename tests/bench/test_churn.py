"""The churn benchmark in smoke mode, so it cannot rot (it asserts no timings)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.helpers import REPO


def test_churn_benchmark_smoke_runs_and_times_every_call(tmp_path: Path) -> None:
    out = tmp_path / "churn.json"
    done = subprocess.run(
        [sys.executable, str(REPO / "bench" / "churn.py"), "--smoke", "--json", str(out)],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert "## churn 0 ops/s" in done.stdout
    assert "## churn 100 ops/s" in done.stdout
    rows = json.loads(out.read_text())["rows"]
    assert len(rows) == 2
    for row in rows:
        text = json.dumps(row)
        for call in ("resources/list", "resources/read", "context_search", "search_docs", "context_status"):
            assert call in text
