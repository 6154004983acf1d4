"""The many-sessions benchmark in smoke mode, so it cannot rot (it asserts no timings)."""

from __future__ import annotations

import re
import subprocess
import sys

from tests.helpers import REPO


def test_the_sessions_benchmark_smoke_run_prints_every_scenario_without_errors_or_stale_answers() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "bench.sessions", "--smoke"],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
        cwd=REPO,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    rows = {
        m[1]: (int(m[2]), int(m[3]), int(m[4]))
        for m in re.finditer(
            r"^\| ([^|]+?) \| 4 \| (\d+) \| \d+ \| [\d.]+ \| [\d.]+ \| (\d+) \| \d+ \| (\d+) \|$", done.stdout, re.M
        )
    }
    assert set(rows) == {"no-op tool (floor)", "context_search", "context_search, writer every 20 ms"}, done.stdout
    for calls, errors, stale in rows.values():
        assert calls > 0 and errors == 0 and stale == 0, done.stdout
