"""Giving freed memory back to the operating system after a large build."""

from __future__ import annotations

import platform
import sys

import pytest

from retrieval.engine.memory import release_free_memory

GLIBC = sys.platform.startswith("linux") and platform.libc_ver()[0] == "glibc"


def test_releasing_free_memory_says_whether_the_platform_could() -> None:
    assert isinstance(release_free_memory(), bool)


@pytest.mark.skipif(not GLIBC, reason="malloc_trim is glibc's")
def test_linux_with_glibc_releases_free_memory() -> None:
    assert release_free_memory() is True


@pytest.mark.skipif(sys.platform.startswith("linux"), reason="elsewhere than Linux")
def test_elsewhere_than_linux_nothing_is_released() -> None:
    assert release_free_memory() is False


def test_it_can_be_called_again_and_again_with_the_same_answer() -> None:
    first = release_free_memory()
    assert [release_free_memory() for _ in range(5)] == [first] * 5
