"""Term ids, from 0 in order of first sight, in little memory.

A dictionary of strings to ids is what indexing wants (every token is looked up, in C), and what a
large vocabulary cannot afford to keep: tldr's 107k terms held 13.5 MB as one (its table, the key
strings, the id integers). So a `Vocabulary` keeps the terms that come in bulk (a restored cache
entry, the chunks of a build, a renumbering, a bulk update) frozen: their UTF-8 in one blob and their hashes
sorted, about 30 bytes a term, looked up by bisection (about a microsecond). A dictionary holds
only the terms added since, and the frozen terms indexing looked up since (a term's id never
changes), so that indexing still looks every token up in C.
"""

from __future__ import annotations

from array import array
from bisect import bisect_left
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator, Sequence
from itertools import chain, compress, count, repeat
from typing import TypeVar, overload

import numpy as np
import numpy.typing as npt

_T = TypeVar("_T")
_SEEN = 4096
"""Frozen terms `get` remembers, at most (then it starts again)."""
_SEP = "\0"
"""Between two terms in the blob: no term holds it (a file with a NUL byte is binary, and skipped;
the tokenizer keeps word characters only)."""


class Terms(Sequence[str]):
    """Terms as one blob, each UTF-8 encoded and followed by a NUL byte: how a cache entry keeps
    an index's vocabulary, read into a `Vocabulary` without a string per term on the way (strings
    made early and dropped leave holes in the heap that the resident set keeps). A sequence for
    `len` and one pass: an index decodes the whole blob."""

    __slots__ = ("blob", "n")

    def __init__(self, blob: bytes) -> None:
        if blob and not blob.endswith(b"\0"):
            raise ValueError("a term blob ends with a NUL byte")
        self.blob = blob
        self.n = blob.count(0)

    @classmethod
    def of(cls, words: Sequence[str]) -> Terms:
        return cls((_SEP.join(words) + _SEP).encode("utf-8", "surrogatepass") if words else b"")

    def __len__(self) -> int:
        return self.n

    @overload
    def __getitem__(self, i: int) -> str: ...
    @overload
    def __getitem__(self, i: slice) -> list[str]: ...
    def __getitem__(self, i: int | slice) -> str | list[str]:
        return self.decoded()[i]

    def __iter__(self) -> Iterator[str]:
        return iter(self.decoded())

    def decoded(self) -> list[str]:
        return self.blob.decode("utf-8", "surrogatepass").split(_SEP)[:-1] if self.n else []


class _Frozen:
    """Terms in id order, as one UTF-8 blob, with their hashes sorted for lookups."""

    __slots__ = ("_blob", "_hashes", "_ids", "_starts", "n")

    def __init__(self, words: Sequence[str]) -> None:
        terms = words if isinstance(words, Terms) else Terms.of(words)
        self.n = len(terms)
        self._blob = terms.blob
        ends = np.flatnonzero(np.frombuffer(self._blob, dtype=np.uint8) == 0)
        self._starts = array("q", np.concatenate(([0], ends + 1)).astype(np.int64).tobytes())
        hashes = np.fromiter(map(hash, terms.decoded()), dtype=np.int64, count=self.n)
        order = np.argsort(hashes, kind="stable")
        self._hashes = array("q", hashes[order].tobytes())
        self._ids = array("i", order.astype(np.int32).tobytes())

    def word(self, term_id: int) -> str:
        start, end = self._starts[term_id], self._starts[term_id + 1] - 1
        return self._blob[start:end].decode("utf-8", "surrogatepass")

    def find(self, term: str) -> int | None:
        h = hash(term)
        i = bisect_left(self._hashes, h)
        while i < self.n and self._hashes[i] == h:  # equal hashes: compare the terms
            if self.word(self._ids[i]) == term:
                return self._ids[i]
            i += 1
        return None

    def words(self) -> list[str]:
        return Terms(self._blob).decoded()


class Vocabulary:
    """Term ids: `adding(terms)` gives the function indexing looks tokens up with (a term it
    lacks gets the next id), `get` only looks up. Iterating gives every term in id order; `len`
    counts them all."""

    __slots__ = ("_cached", "_frozen", "_ids", "_new", "_seen")

    def __init__(self, words: Sequence[str] = ()) -> None:
        """A vocabulary of `words` (unique), frozen, ids in their order."""
        self._frozen = _Frozen(words)
        self._ids: defaultdict[str, int] = defaultdict(count(self._frozen.n).__next__)
        """The terms added since, each given the next id in C on its first lookup; and the
        frozen terms indexing looked up since (`_cached` of them)."""
        self._cached = 0
        self._seen: dict[str, int] = {}
        """Frozen terms searches looked up lately (a search does so several times a term)."""
        self._new: tuple[int, list[str]] = (0, [])
        """The added terms in id order, as of the dict's size then (for `word`)."""

    def adding(self, terms: Iterable[str]) -> Callable[[str], int]:
        """The term -> id function to index these terms with, all in C: the frozen ones among
        them are looked up first (and kept in the dict, ids being for ever), so that a term the
        dict lacks is a new one."""
        if self._frozen.n:
            ids = self._ids
            for term in set(terms).difference(ids):
                found = self._frozen.find(term)
                if found is not None:
                    ids[term] = found
                    self._cached += 1
        return self._ids.__getitem__

    @overload
    def get(self, term: str, default: None = None, /) -> int | None: ...
    @overload
    def get(self, term: str, default: int, /) -> int: ...
    @overload
    def get(self, term: str, default: _T, /) -> int | _T: ...
    def get(self, term: str, default: object = None, /) -> object:
        found = self._ids.get(term)
        if found is None:
            found = self._seen.get(term)
        if found is None:
            found = self._frozen.find(term)
            if found is not None:
                if len(self._seen) >= _SEEN:
                    self._seen.clear()
                self._seen[term] = found
        return default if found is None else found

    def __contains__(self, term: object) -> bool:
        return isinstance(term, str) and self.get(term) is not None

    def __len__(self) -> int:
        return self._frozen.n + len(self._ids) - self._cached

    def __iter__(self) -> Iterator[str]:
        return chain(self._frozen.words(), self._added())

    def _added(self) -> list[str]:
        size, added = self._new
        if size != len(self._ids):
            n = self._frozen.n
            added = [term for term, i in list(self._ids.items()) if i >= n]  # inserted in id order
            self._new = (len(self._ids), added)
        return added

    def word(self, term_id: int) -> str:
        """The term with this id."""
        frozen = self._frozen.n
        return self._frozen.word(term_id) if term_id < frozen else self._added()[term_id - frozen]

    def frozen(self) -> Vocabulary:
        """A new vocabulary of these terms, the same ids, all frozen (after a bulk build)."""
        return Vocabulary(list(self))

    def merged(self, words: Sequence[str]) -> tuple[Vocabulary, npt.NDArray[np.int32]]:
        """A new vocabulary of these terms and `words` (unique), and the ids of `words` in it
        (this one stays as it is, for whoever reads it meanwhile). Frozen whole, unless `words`
        are few beside it: then they join its dictionary (a small root restored after a large one
        need not freeze the large one's terms again)."""
        listed = words.decoded() if isinstance(words, Terms) else list(words)
        if not len(self):
            return Vocabulary(listed), np.arange(len(listed), dtype=np.int32)
        if len(listed) < len(self) // 8:
            more = self._copy()
            return more, np.fromiter(map(more.adding(listed), listed), dtype=np.int32, count=len(listed))
        old = list(self)
        found = map({w: i for i, w in enumerate(old)}.get, listed, repeat(-1))  # in C
        ids = np.fromiter(found, dtype=np.int32, count=len(listed))
        fresh = ids < 0
        ids[fresh] = np.arange(len(old), len(old) + int(fresh.sum()), dtype=np.int32)
        return Vocabulary(old + list(compress(listed, fresh.tolist()))), ids

    def _copy(self) -> Vocabulary:
        """The same terms, the frozen ones shared, the dictionary copied."""
        copy = Vocabulary()
        copy._frozen, copy._cached = self._frozen, self._cached
        copy._ids = defaultdict(count(len(self)).__next__, self._ids)
        return copy
