"""The counted reads and the trees the live index tests share (the cache folder, `cache_dir`, is
in tests/conftest.py: a promise test uses it too)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from live.settle import Settler
from tests.live.support import AGENTS, DOCS


@pytest.fixture
def reads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The files the live index reads from disk (the real reader, counted)."""
    seen: list[str] = []
    real = Settler._read_settled

    def counted(self: Settler, root: Any, ref: Any) -> Any:
        seen.append(ref.rel)
        return real(self, root, ref)

    monkeypatch.setattr(Settler, "_read_settled", counted)
    return seen


@pytest.fixture
def trees(make_tree: Callable[..., Path]) -> tuple[Path, Path]:
    return make_tree(AGENTS), make_tree(DOCS, name="docs")
