"""A restored entry's units as columns: each made when asked for, equal to the unit packed."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from corpus.files import FileColumns
from corpus.roots import make_roots
from live.index import LiveIndex
from live.units import Groups, Units
from retrieval.engine.slots import pair_columns


def test_offsets_beyond_four_bytes_come_back_whole(make_tree: Callable[..., Path]) -> None:
    live = LiveIndex(make_roots([make_tree({"a.md": "# A\n\ntext\n"})]), settle_s=0)
    (f,) = live.files_of(live.roots[0]).values()
    far = 3_000_000_000  # an offset a file over 2 GB (`--max-bytes`) would have
    none = np.array([-1])
    units = Units(
        FileColumns.of(f.root, [f]),
        np.array([0]),
        np.array([[1, 2**31 + 5]]),
        (np.array([far]), np.array([7]), none),
        (none, none, np.array([4])),
        [],
        (np.array([0]), [("A",)]),
    )
    (unit,) = units
    assert (unit.at, unit.end, unit.start_line, unit.end_line, unit.chunk_id) == (far, far + 7, 1, 2**31 + 5, 4)
    assert unit.trail == ("A",) and unit.heading is None and units[-1] == unit == units[0:1][0]
    assert list(units.orders()) == [(f.path, 1)]
    live.close()


def test_groups_read_as_the_list_of_pairs_they_stand_for() -> None:
    paths = ["docs/a.md", "docs/b.md", "docs/c.md"]
    groups = Groups(paths, np.array([2, 0], dtype=np.int64), np.array([3, 1], dtype=np.int32))
    pairs = [("docs/c.md", 3), ("docs/a.md", 1)]
    assert list(groups) == pairs and len(groups) == 2
    assert [groups[0], groups[-1], groups[:1], groups[::-1]] == [pairs[0], pairs[1], pairs[:1], pairs[::-1]]
    assert ("docs/a.md", 1) in groups and ("docs/b.md", 1) not in groups
    with pytest.raises(IndexError):
        groups[2]


def test_orders_read_as_each_units_path_and_start_line(make_tree: Callable[..., Path]) -> None:
    live = LiveIndex(make_roots([make_tree({"a.md": "# A\n\ntext\n", "b.md": "# B\n\ntext\n"})]), settle_s=0)
    a, b = sorted(live.files_of(live.roots[0]).values(), key=lambda f: f.path)
    none = np.array([-1, -1, -1])
    units = Units(
        FileColumns.of(a.root, [a, b]),
        np.array([1, 0, 1]),
        np.array([[3, 4], [1, 2], [9, 9]]),
        (none, none, none),
        (none, none, none),
        [],
        (np.array([0, 0, 0]), [()]),
    )
    orders = units.orders()
    expected = [(b.path, 3), (a.path, 1), (b.path, 9)]
    assert list(orders) == expected == [orders[i] for i in range(3)] == [units.order(i) for i in range(3)]
    assert (orders[-1], orders[1:], len(orders)) == (expected[-1], expected[1:], 3)
    paths, lines = pair_columns(orders)  # as the index takes them: whole columns
    assert paths == [b.path, a.path, b.path] and lines.tolist() == [3, 1, 9]
    assert pair_columns(expected)[0] == paths and pair_columns(expected)[1].tolist() == [3, 1, 9]
    live.close()
