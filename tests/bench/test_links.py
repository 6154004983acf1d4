"""The links benchmark runs end to end on one small tree, so it cannot rot (no timing is asserted)."""

from __future__ import annotations

import subprocess
import sys

from tests.helpers import REPO


def test_the_links_benchmark_prints_a_row_for_the_tree_asked() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "bench.links", "--only", "httpx"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    [row] = [line for line in done.stdout.splitlines() if line.startswith("| httpx |")]
    cells = [c.strip() for c in row.strip("|").split("|")]
    assert cells[1] == "23" and int(cells[2]) > 0 and cells[-1].endswith("x")
