"""The docs-scale benchmark in smoke mode, so it cannot rot (it asserts no timings)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers import REPO


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="memory is sampled from /proc (Linux)")
def test_docs_scale_smoke_runs_and_reports_every_figure(tmp_path: Path) -> None:
    out = tmp_path / "scale.json"
    done = subprocess.run(
        [sys.executable, str(REPO / "bench" / "docs_scale.py"), "--smoke", "--json", str(out)],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert "| spawn to a whole answer (index complete) |" in done.stdout
    results = json.loads(out.read_text())
    assert results["files"] == 7000
    for start in ("cold", "warm"):
        figures = results[start]
        assert figures["complete_s"] > 0 and figures["rss_settled"] > 0
        assert figures["settled_p95_ms"] >= figures["settled_p50_ms"] > 0
    assert results["cold"]["rss_peak_with_workers"] > 0 and results["cold"]["rss_peak_server"] > 0
    assert 0 < results["cold"]["pss_peak_with_workers"] <= results["cold"]["rss_peak_with_workers"]
    assert results["fts5"]["build_s"] > 0
    shared = results["sharing"]
    assert shared["servers"] == 2 and len(shared["pss"]) == 2 and all(p > 0 for p in shared["pss"])
    assert results["warm"]["pss_settled"] > 0 and "servers started at once on that cache" in done.stdout
    relayed = results["relayed"]
    assert relayed["sessions"] == 2 and len(relayed["joined_s"]) == 1 and relayed["first_s"] > 0
    assert relayed["server_pss"] > 0 and all(p > 0 for p in relayed["relays_pss"])
    assert "sessions through agents-context-shared on that cache" in done.stdout
