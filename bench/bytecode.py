"""What a start costs when Python compiles the MCP SDK from source each time.

    uv run python bench/bytecode.py            # 5 starts of each kind, alternating
    uv run python bench/bytecode.py --starts 9

Each start is `python server.py --root .AGENTS` (this repository's own), timed from spawn to the
answer to `initialize`, then closed. Two kinds, alternating, each with a bytecode folder of its own
(`PYTHONPYCACHEPREFIX`), so the installation's own caches play no part:

- cached: Python writes bytecode as it does by default (one start first fills the folder);
- from source: `PYTHONDONTWRITEBYTECODE=1`, as many container images set it, and no bytecode
  installed: every start compiles every module it imports.

The server says so on stderr in the second case (docs/configuration.md, "What the server prints").
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from bench.measure import median  # noqa: E402 - after the repository is on the path, as `python bench/bytecode.py` runs

INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "bench", "version": "0"}},
}


def start(env: dict[str, str]) -> float:
    """Seconds from spawn to the answer to `initialize`."""
    started = time.perf_counter()
    proc = subprocess.Popen(
        [sys.executable, str(REPO / "server.py"), "--root", str(REPO / ".AGENTS"), "--no-cache"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=env,
        cwd=REPO,
    )
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write(json.dumps(INITIALIZE).encode() + b"\n")
    proc.stdin.flush()
    answer = proc.stdout.readline()
    elapsed = time.perf_counter() - started
    proc.stdin.close()
    proc.wait(timeout=30)
    proc.stdout.close()
    if b'"result"' not in answer:
        raise SystemExit(f"the server did not answer initialize: {answer[:200]!r}")
    return elapsed


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--starts", type=int, default=5, help="starts of each kind (default 5)")
    args = parser.parse_args(argv)
    base = {k: v for k, v in os.environ.items() if k not in ("PYTHONDONTWRITEBYTECODE", "PYTHONPYCACHEPREFIX")}
    with tempfile.TemporaryDirectory() as folder:
        cached = {**base, "PYTHONPYCACHEPREFIX": str(Path(folder, "cached"))}
        source = {**base, "PYTHONPYCACHEPREFIX": str(Path(folder, "none")), "PYTHONDONTWRITEBYTECODE": "1"}
        start(cached)  # fills the cached kind's folder
        times: dict[str, list[float]] = {"cached": [], "from source": []}
        for _ in range(args.starts):
            times["cached"].append(start(cached))
            times["from source"].append(start(source))
    print("| start | spawn to the answer to initialize, median | all |")
    print("|---|---|---|")
    for kind, seconds in times.items():
        print(f"| {kind} | {median(seconds):.2f} s | {' '.join(f'{s:.2f}' for s in sorted(seconds))} |")
    ratio = median(times["from source"]) / median(times["cached"])
    print(f"\nfrom source / cached: {ratio:.2f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
