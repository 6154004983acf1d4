"""Where our index's memory goes: a deep size of each of its structures, shared objects counted once.

Deep sizes are `sys.getsizeof` summed over everything reachable (numpy arrays by their buffers),
so they include the vocabulary strings, which RSS deltas miss when those strings are shared with
the caller's token lists.
"""

from __future__ import annotations

import sys
from typing import Any

import numpy as np

_ORDER = (
    "vocab",
    "df",
    "segments",
    "fwd",
    "fwd_ptr",
    "fwd_len",
    "seg_of",
    "length",
    "alive",
    "payloads",
    "order",
    "groups",
)


def deep_size(obj: Any, seen: set[int]) -> int:
    total = 0
    stack = [obj]
    while stack:
        o = stack.pop()
        if id(o) in seen or o is None or isinstance(o, (bool, type)):
            continue
        seen.add(id(o))
        total += sys.getsizeof(o)
        if isinstance(o, np.ndarray):
            if o.base is not None:
                stack.append(o.base)
        elif isinstance(o, dict):
            stack.extend(o.keys())
            stack.extend(o.values())
        elif isinstance(o, (list, tuple, set, frozenset)):
            stack.extend(o)
        elif hasattr(o, "__slots__") and not isinstance(o, (str, bytes, int, float)):
            stack.extend(getattr(o, name) for name in o.__slots__ if hasattr(o, name))
        elif hasattr(o, "__dict__") and not isinstance(o, (str, bytes, int, float)):
            stack.append(o.__dict__)
    return total


def index_memory(index: Any) -> dict[str, int]:
    """Bytes per structure of a `BM25Index` (its private attributes, and each per-slot array of
    its `Slots` apart), and the total."""
    seen: set[int] = set()
    structures = {n.lstrip("_"): v for n, v in vars(index).items() if n.startswith("_") and n != "_slots"}
    structures.update(vars(index._slots))
    names = [n for n in _ORDER if n in structures]
    names += sorted(n for n in structures if n not in names)
    parts = {name: deep_size(structures[name], seen) for name in names}
    parts["total"] = sum(parts.values())
    return parts


def postings_count(index: Any) -> int:
    return int(sum(len(s.docs) for s in index._segments))
