"""The real-client benchmark runs end to end through Claude Code, so it cannot rot."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests.harness import claude
from tests.helpers import REPO


@pytest.mark.skipif(claude.available() is not None, reason=str(claude.available()))
def test_the_clients_benchmark_smoke_run_prints_what_reached_the_model() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "bench.clients", "--smoke"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert "| call | documented | Claude Code now |" in done.stdout
    assert "| pinned_context() |" in done.stdout
    assert "- Claude Code now: 1.00x the documented text" in done.stdout
