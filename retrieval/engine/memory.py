"""Giving freed memory back to the operating system after a large build.

A bulk build allocates and frees many small objects (token lists, counters); glibc keeps the
freed pages in its arenas, so the process looks twice its size until they are reused.
`malloc_trim(0)` returns them. Elsewhere (macOS, Windows, musl) this does nothing: their
allocators return memory on their own terms and there is nothing portable to call.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import sys
from collections.abc import Callable
from functools import cache


@cache
def _malloc_trim() -> Callable[[int], int] | None:
    if not sys.platform.startswith("linux"):
        return None
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        trim: Callable[[int], int] = libc.malloc_trim
    except (OSError, AttributeError):
        return None  # not glibc
    return trim


def release_free_memory() -> bool:
    """Return the allocator's free pages to the OS; True if the platform could."""
    trim = _malloc_trim()
    if trim is None:
        return False
    trim(0)
    return True
