"""Whether a package is compiled from source at every start (no bytecode written or installed),
and what to say then: the server says it at its start, and `setup` after writing a client's
configuration. Light: `setup` imports it, and loads no package it asks about."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

SDK = "mcp"
"""The package whose import is most of a start (0.6-1.1 s with its bytecode cached, 2-3 s without)."""


def uncompiled(package: str = SDK) -> list[str]:
    """What to say when `package` is compiled from source at every start (the server's and each
    hook event's): Python is told to write no bytecode (`PYTHONDONTWRITEBYTECODE`, `-B`: common in
    containers) and the installer wrote none (uv does not, unless asked)."""
    if not sys.dont_write_bytecode:
        return []
    try:
        spec = importlib.util.find_spec(package)  # found, not imported (setup may not have imported it)
        source = spec.origin if spec is not None else None
        if not source or not source.endswith(".py"):
            return []
        cached = importlib.util.cache_from_source(source)  # under PYTHONPYCACHEPREFIX when it is set
    except (ImportError, ValueError, NotImplementedError):  # not to be found, or no bytecode cache at all
        return []
    if Path(cached).exists():
        return []
    return [
        f"every start compiles the {package} package from source (seconds): Python writes no bytecode here "
        "(PYTHONDONTWRITEBYTECODE or -B) and none was installed; install it compiled once: "
        "`uv sync --compile-bytecode` in a clone, `uv tool install --compile-bytecode agents-context`, "
        "or UV_COMPILE_BYTECODE=1"
    ]
