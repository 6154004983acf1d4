"""A restored cache entry's units as columns, each unit made when it is asked for.

A warm start of tldr made 38.5k units before its first answer and kept them all (5.8 MB with
their integers), for the few that a search shows, an outline lists or a save packs. `Units` keeps
their fields in arrays (40 bytes a unit) and makes a `Unit` from them, equal to the one the
entry was packed from, whenever the index asks for a slot's payload (`retrieval.engine.slots`).
"""

from __future__ import annotations

from abc import abstractmethod
from array import array
from typing import Any, overload

import numpy as np
import numpy.typing as npt

from corpus.files import FileColumns
from retrieval.chunks.units import Unit
from retrieval.engine.slots import Pairs, Rows


def _column(values: npt.NDArray[Any]) -> array[int]:
    """Integers, one a unit: four bytes each when they fit (offsets and lines in a file do,
    below `--max-bytes` of 2 GB), else eight."""
    fits = not len(values) or (int(values.min()) >= -(2**31) and int(values.max()) < 2**31)
    return array("i" if fits else "q", np.ascontiguousarray(values, dtype=np.int32 if fits else np.int64).tobytes())


class Units(Rows[Unit]):
    """Units of `files`, one row each: the file it is in (`owner`, an index into `files`), its
    lines, its text's offset and length in the file's text (or, with `at` -1, its own text among
    `strings`), its heading, anchor and chunk, and its heading trail (an index into `trails`)."""

    __slots__ = (
        "_anchor",
        "_at",
        "_chunk",
        "_files",
        "_heading",
        "_length",
        "_lines",
        "_owner",
        "_strings",
        "_text",
        "_trail",
        "_trails",
    )

    def __init__(
        self,
        files: FileColumns,
        owner: npt.NDArray[Any],
        lines: npt.NDArray[Any],
        texts: tuple[npt.NDArray[Any], npt.NDArray[Any], npt.NDArray[Any]],
        names: tuple[npt.NDArray[Any], npt.NDArray[Any], npt.NDArray[Any]],
        strings: list[str],
        trails: tuple[npt.NDArray[Any], list[tuple[str, ...]]],
    ) -> None:
        """`texts` is (at, length, text) and `names` (heading, anchor, chunk): indices into
        `strings` (text, heading, anchor) or -1, one a unit; `trails` the index of each unit's
        trail and the distinct trails."""
        self._files = files
        self._owner = _column(owner)
        self._lines = _column(lines.reshape(-1))
        self._at, self._length, self._text = (_column(c) for c in texts)
        self._heading, self._anchor, self._chunk = (_column(c) for c in names)
        self._strings = strings
        self._trail, self._trails = _column(trails[0]), trails[1]

    def __len__(self) -> int:
        return len(self._owner)

    @overload
    def __getitem__(self, i: int) -> Unit: ...
    @overload
    def __getitem__(self, i: slice) -> list[Unit]: ...
    def __getitem__(self, i: int | slice) -> Unit | list[Unit]:
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(len(self)))]
        if i < 0:
            i += len(self)
        f = self._files[self._owner[i]]
        a, heading, anchor, chunk = self._at[i], self._heading[i], self._anchor[i], self._chunk[i]
        return Unit(
            f.path,
            f.uri,
            (f.text if f.held else f) if a >= 0 else self._strings[self._text[i]],
            self._lines[2 * i],
            self._lines[2 * i + 1],
            self._strings[heading] if heading >= 0 else None,
            self._trails[self._trail[i]],
            chunk if chunk >= 0 else None,
            self._strings[anchor] if anchor >= 0 else None,
            f.meta.tags,
            max(a, 0),
            a + self._length[i] if a >= 0 else -1,
        )

    def order(self, i: int) -> tuple[str, int]:
        """Unit `i`'s tie-break key, (display path, start line), without making the unit."""
        return self._files.paths[self._owner[i]], self._lines[2 * i]

    def order_columns(self) -> tuple[list[str], npt.NDArray[np.int64]]:
        """Every unit's `order` as two columns: display paths, start lines."""
        lines = np.frombuffer(self._lines, dtype=np.int32 if self._lines.typecode == "i" else np.int64)
        return list(map(self._files.paths.__getitem__, self._owner)), lines[0::2].astype(np.int64)

    def orders(self) -> Orders:
        return Orders(self)


class _Pairs(Pairs[str]):
    """(display path, number) pairs as columns (`columns`, read whole by the index), each pair also
    made when asked for (`_pair(i)`, 0 <= i < len)."""

    __slots__ = ()

    @abstractmethod
    def _pair(self, i: int) -> tuple[str, int]: ...

    @overload
    def __getitem__(self, i: int) -> tuple[str, int]: ...
    @overload
    def __getitem__(self, i: slice) -> list[tuple[str, int]]: ...
    def __getitem__(self, i: int | slice) -> tuple[str, int] | list[tuple[str, int]]:
        if isinstance(i, slice):
            return [self._pair(j) for j in range(*i.indices(len(self)))]
        if not -len(self) <= i < len(self):
            raise IndexError(i)
        return self._pair(i + len(self) if i < 0 else i)


class Orders(_Pairs):
    """Each unit's tie-break key, (display path, start line), made when asked for."""

    __slots__ = ("_units",)

    def __init__(self, units: Units) -> None:
        self._units = units

    def __len__(self) -> int:
        return len(self._units)

    def _pair(self, i: int) -> tuple[str, int]:
        return self._units.order(i)

    def columns(self) -> tuple[list[str], npt.NDArray[np.int64]]:
        return self._units.order_columns()


class Groups(_Pairs):
    """A restored index's groups: each file's display path and number of units, made when asked
    for (tldr's 38k pairs, made at once and dropped once the index had them, left holes in the
    heap that the server kept)."""

    __slots__ = ("_counts", "_paths", "_rows")

    def __init__(self, paths: list[str], rows: npt.NDArray[Any], counts: npt.NDArray[Any]) -> None:
        """Group `i` is file `rows[i]` of `paths`, with `counts[i]` units."""
        self._paths, self._rows, self._counts = paths, rows, counts

    def __len__(self) -> int:
        return len(self._rows)

    def _pair(self, i: int) -> tuple[str, int]:
        return self._paths[int(self._rows[i])], int(self._counts[i])

    def columns(self) -> tuple[list[str], npt.NDArray[np.int64]]:
        """The paths taken by an object array: no integer made per row."""
        paths = np.empty(len(self._paths), dtype=object)
        paths[:] = self._paths
        return paths[self._rows].tolist(), self._counts.astype(np.int64)
