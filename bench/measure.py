"""Small measuring helpers shared by the benchmark scripts: clocks, percentiles, memory."""

from __future__ import annotations

import math
import platform
import re
import statistics
import sys
from collections.abc import Sequence
from pathlib import Path

_STATUS = Path("/proc/self/status")


def percentile(values: Sequence[float], q: float) -> float:
    """Nearest-rank percentile (q in 0..100) of a non-empty sequence; NaN when empty."""
    if not values:
        return math.nan
    ordered = sorted(values)
    rank = max(1, math.ceil(q / 100 * len(ordered)))
    return ordered[rank - 1]


def median(values: Sequence[float]) -> float:
    return statistics.median(values) if values else math.nan


def _status_kb(key: str) -> int | None:
    try:
        text = _STATUS.read_text()
    except OSError:
        return None
    found = re.search(rf"^{key}:\s+(\d+) kB", text, re.MULTILINE)
    return int(found.group(1)) if found else None


def rss_bytes() -> int | None:
    """Resident set size now (Linux); None elsewhere."""
    kb = _status_kb("VmRSS")
    return None if kb is None else kb * 1024


def peak_rss_bytes() -> int | None:
    """High-water mark of the resident set since start or the last `reset_peak_rss` (Linux)."""
    kb = _status_kb("VmHWM")
    return None if kb is None else kb * 1024


def reset_peak_rss() -> bool:
    """Reset VmHWM to the current RSS (Linux >= 4.0, `echo 5 > /proc/self/clear_refs`)."""
    try:
        Path("/proc/self/clear_refs").write_text("5")
    except OSError:
        return False
    return True


def malloc_trim() -> bool:
    """Give freed heap memory back to the OS (glibc), so RSS shows what is still in use."""
    try:
        import ctypes

        return bool(ctypes.CDLL("libc.so.6").malloc_trim(0) or True)
    except (OSError, AttributeError):
        return False


def machine() -> dict[str, str | int | float]:
    """CPU model, cores, RAM, Python: what docs/speed.md records next to the figures."""
    cpu = platform.processor() or platform.machine()
    try:
        info = Path("/proc/cpuinfo").read_text()
        found = re.search(r"^model name\s*:\s*(.+)$", info, re.MULTILINE)
        if found:
            cpu = found.group(1).strip()
    except OSError:
        pass
    ram = 0
    try:
        found = re.search(r"^MemTotal:\s+(\d+) kB", Path("/proc/meminfo").read_text(), re.MULTILINE)
        ram = int(found.group(1)) * 1024 if found else 0
    except OSError:
        pass
    import os

    return {
        "cpu": cpu,
        "cores": os.cpu_count() or 0,
        "ram_gib": round(ram / 2**30, 1),
        "python": sys.version.split()[0],
        "platform": platform.platform(),
    }


def fmt_seconds(s: float | None) -> str:
    """Human figures: µs under 1 ms, ms under 1 s, else seconds."""
    if s is None or (isinstance(s, float) and math.isnan(s)):
        return "-"
    if s < 1e-3:
        return f"{s * 1e6:.0f}µs"
    if s < 1:
        return f"{s * 1e3:.2f}ms" if s < 0.01 else f"{s * 1e3:.1f}ms"
    return f"{s:.2f}s"


def fmt_bytes(n: float | None) -> str:
    if n is None or (isinstance(n, float) and math.isnan(n)):
        return "-"
    for unit, size in (("GB", 2**30), ("MB", 2**20), ("KB", 2**10)):
        if abs(n) >= size:
            return f"{n / size:.1f}{unit}"
    return f"{n:.0f}B"
