"""The hook benchmark runs end to end, so it cannot rot."""

from __future__ import annotations

import subprocess
import sys

from tests.helpers import REPO


def test_the_hook_benchmark_times_every_case() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "bench.hook", "--runs", "2"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    for row in ("| python -c pass |", "| hook: session start |", "| hook: this repository as it is, Edit server.py |"):
        assert row in done.stdout
