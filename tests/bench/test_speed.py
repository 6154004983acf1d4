"""The speed benchmark's smoke mode runs end to end, so `bench/speed.py` cannot rot.

It checks that the run completes and prints a row for every engine; it never asserts timings
(performance lives in `bench/` scripts that print figures).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.helpers import REPO

ROOT = REPO
ENGINES = ["ours", "rank-bm25", "bm25s", "tantivy", "sqlite-fts5"]


def test_speed_smoke_prints_every_engine(tmp_path: Path) -> None:
    out = tmp_path / "speed.json"
    done = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "speed.py"), "--smoke", "--json", str(out)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    for corpus in ("agents", "synthetic-2k"):
        start = next(i for i, line in enumerate(lines) if line.startswith(f"== {corpus}:"))
        rows = {line.split()[0]: line for line in lines[start + 2 : start + 2 + len(ENGINES)]}
        assert sorted(rows) == sorted(ENGINES), done.stdout
        assert not [r for r in rows.values() if "ERROR" in r], done.stdout
    assert "== Ratios" in done.stdout
    assert "protocol floor" in done.stdout and "ERROR" not in done.stdout
    assert "Start-up to first answer" in done.stdout
    assert out.exists()
