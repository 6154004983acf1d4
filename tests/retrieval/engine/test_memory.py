"""Giving freed memory back to the operating system after a large build."""

from __future__ import annotations

import platform
import subprocess
import sys

import pytest

from retrieval.engine.memory import map_large_blocks, release_free_memory
from tests.helpers import REPO

GLIBC = sys.platform.startswith("linux") and platform.libc_ver()[0] == "glibc"


FREED_THEN_RELEASED = """
import os
from retrieval.engine.memory import release_free_memory
def resident(): return int(open("/proc/self/statm").read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
size = 1000  # above pymalloc's 512 bytes: each block is glibc's, from its heap
blocks = [b"x" * size for _ in range(60_000)]  # 60 MB, written to, so resident
pin = b"y" * size  # above them: the heap's top is not free, so freeing them returns nothing by itself
del blocks
freed = resident()
release_free_memory()
print(freed - resident())
"""


@pytest.mark.skipif(not GLIBC, reason="malloc_trim is glibc's")
def test_memory_freed_inside_the_heap_leaves_the_process_when_released() -> None:
    """In a process of its own, so that nothing else of the tests' heap is measured."""
    ran = subprocess.run(
        [sys.executable, "-c", FREED_THEN_RELEASED], capture_output=True, text=True, check=True, cwd=REPO, timeout=60
    )
    assert int(ran.stdout) > 40_000_000


@pytest.mark.skipif(not GLIBC, reason="malloc_trim is glibc's")
def test_linux_with_glibc_releases_free_memory() -> None:
    assert release_free_memory() is True


@pytest.mark.skipif(sys.platform.startswith("linux"), reason="elsewhere than Linux")
def test_elsewhere_than_linux_nothing_is_released() -> None:
    assert release_free_memory() is False


def test_it_can_be_called_again_and_again_with_the_same_answer() -> None:
    first = release_free_memory()
    assert [release_free_memory() for _ in range(5)] == [first] * 5


LARGE_BLOCK = """
import sys
import numpy as np
from retrieval.engine.memory import map_large_blocks
mapped = map_large_blocks() if sys.argv[1] == "mapped" else None
big = np.ones(4_000_000)  # 32 MB, freed: glibc would serve blocks up to this size from its heap
del big
block = np.ones(250_000)  # 2 MB
at = block.ctypes.data
regions = [line.split() for line in open("/proc/self/maps")]
print(mapped, next(r[-1] if len(r) > 5 else "anonymous" for r in regions if int(r[0].split("-")[0], 16) <= at < int(r[0].split("-")[1], 16)))
"""


@pytest.mark.skipif(not GLIBC, reason="mallopt is glibc's")
@pytest.mark.parametrize(("mode", "where"), [("mapped", "True anonymous"), ("default", "None [heap]")])
def test_a_large_block_made_after_a_larger_one_was_freed_is_mapped_on_its_own(mode: str, where: str) -> None:
    """By default glibc serves it from its heap (where it stays resident once freed)."""
    ran = subprocess.run(
        [sys.executable, "-c", LARGE_BLOCK, mode], capture_output=True, text=True, check=True, cwd=REPO, timeout=60
    )
    assert ran.stdout.strip() == where


def test_mapping_large_blocks_says_whether_the_platform_could() -> None:
    assert map_large_blocks() is GLIBC
