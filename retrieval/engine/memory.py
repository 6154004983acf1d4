"""Giving freed memory back to the operating system after a large build.

A bulk build allocates and frees many small objects (token lists, counters); glibc keeps the
freed pages in its arenas, so the process looks twice its size until they are reused.
`malloc_trim(0)` returns them, and `map_large_blocks` keeps large arrays out of glibc's heaps in
the first place. Elsewhere (macOS, Windows, musl) this does nothing: their allocators return
memory on their own terms and there is nothing portable to call.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import sys
from functools import cache


@cache
def _glibc() -> ctypes.CDLL | None:
    """The C library, if this is Linux with glibc (the only allocator these calls are for)."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
    except OSError:
        return None
    return libc if hasattr(libc, "malloc_trim") and hasattr(libc, "mallopt") else None  # else not glibc


def release_free_memory() -> bool:
    """Return the allocator's free pages to the OS; True if the platform could."""
    libc = _glibc()
    if libc is None:
        return False
    libc.malloc_trim(0)
    return True


_M_MMAP_THRESHOLD = -3


def map_large_blocks(threshold: int = 1 << 20) -> bool:
    """Have glibc map every block of at least `threshold` bytes on its own, returned to the OS the
    moment it is freed; True if the platform could. Otherwise glibc raises that threshold after
    each large block freed (up to 32 MB) and serves the next ones from its heaps, where what is
    freed stays resident until a trim reaches it, and the freed top of a thread's heap never
    does: tldr's server kept 25-35 MB of a cold build's arrays that way. A server call: the
    workers of a build are left to glibc's default (their scratch comes and goes with them)."""
    libc = _glibc()
    return libc is not None and bool(libc.mallopt(_M_MMAP_THRESHOLD, threshold))
