"""The context_for_path precision benchmark in smoke mode, so it cannot rot (no figure is asserted
but the ones the built-in labels fix)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.helpers import REPO


def test_applies_benchmark_smoke_scores_two_checkouts(tmp_path: Path) -> None:
    out = tmp_path / "applies.json"
    done = subprocess.run(
        [sys.executable, str(REPO / "bench" / "applies.py"), "--smoke", "--before", str(REPO), "--json", str(out)],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert "| vscode-like | before | 8 |" in done.stdout
    assert "| vscode-like | after | 8 |" in done.stdout
    figures = json.loads(out.read_text())
    assert set(figures["checkouts"]) == {"before", "after"}
    for run in figures["projects"]["vscode-like"].values():
        assert run["sources"] == 8 and run["relevant"] == 42
        assert 0.0 <= run["precision"] <= 1.0 and 0.0 <= run["recall"] <= 1.0
