"""Term ids, from 0 in order of first sight, in little memory.

A dictionary of strings to ids is what indexing wants (every token is looked up, in C), and what a
large vocabulary cannot afford to keep: tldr's 107k terms held 13.5 MB as one (its table, the key
strings, the id integers). So a `Vocabulary` keeps the terms that come in bulk (a restored cache
entry, the chunks of a build, a renumbering, a bulk update) frozen: their UTF-8 in one blob and their hashes
sorted, about 30 bytes a term, looked up by bisection (about a microsecond). A dictionary holds
only the terms added since, and the frozen terms indexing looked up since (a term's id never
changes), so that indexing still looks every token up in C. Freezing more terms (a merge, the end
of a build) extends the blob and looks the new ones up in bulk: the frozen terms are never decoded
into strings again, which would leave holes in the heap when dropped.
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
_BITS = (1 << 64) - 1
_FNV_OFFSET = 0xCBF29CE484222325
_FNV_PRIME = 0x100000001B3


def _hash(term: str) -> int:
    """How terms are hashed for lookups (a test makes them collide): 64-bit FNV-1a over the term's
    UTF-8 bytes, as a signed integer (as numpy keeps it); `_hashes` gives the same for a blob of
    terms without a string each. Not Python's string hash: that needs a string made for every
    restored term (tldr's 107k, dropped at once, left 4 MB of holes in the heap), and it reads
    code units as stored, so "dk" (two bytes) and "此" (U+6B64, the bytes 64 6B) hash alike."""
    h = _FNV_OFFSET
    for byte in term.encode("utf-8", "surrogatepass"):
        h = ((h ^ byte) * _FNV_PRIME) & _BITS
    return h - (1 << 64) if h >> 63 else h


def _hashes(blob: bytes) -> npt.NDArray[np.int64]:
    """`_hash` of every term of a blob (each followed by a NUL), in numpy: one byte position at a
    time over all the terms at once, the longest first (those still going are a prefix)."""
    data = np.frombuffer(blob, dtype=np.uint8)
    ends = np.flatnonzero(data == 0)
    starts = np.concatenate(([0], ends[:-1] + 1))[: len(ends)]  # none for an empty blob
    order = np.argsort(starts - ends, kind="stable")  # longest first
    starts, lengths = starts[order], (ends - starts)[order]
    going = np.searchsorted(-lengths, -np.arange(int(lengths[0]) if len(lengths) else 0), side="left")
    h = np.full(len(order), _FNV_OFFSET, dtype=np.uint64)
    prime = np.uint64(_FNV_PRIME)
    for position, n in enumerate(going.tolist()):
        part = h[:n]
        part ^= data[starts[:n] + position]
        part *= prime
    hashes = np.empty(len(order), dtype=np.uint64)
    hashes[order] = h
    return hashes.view(np.int64)


_SEEN = 4096
"""Frozen terms `get` remembers, at most (then it starts again)."""
_FEW = 4096
"""A merge of fewer terms than this (and than an eighth of the vocabulary) puts them in the
dictionary rather than freeze the whole again."""
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
        if isinstance(words, Terms):
            return words
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
        hashes = _hashes(terms.blob)
        self._set(terms.blob, len(terms), hashes, np.arange(len(terms), dtype=np.int32))

    def _set(self, blob: bytes, n: int, hashes: npt.NDArray[np.int64], ids: npt.NDArray[np.int32]) -> None:
        """Terms `blob`, and the hash of each id in `ids` (in any order)."""
        self.n, self._blob = n, blob
        ends = np.flatnonzero(np.frombuffer(blob, dtype=np.uint8) == 0)
        self._starts = array("q", np.concatenate(([0], ends + 1)).astype(np.int64).tobytes())
        order = np.argsort(hashes, kind="stable")
        self._hashes = array("q", hashes[order].tobytes())
        self._ids = array("i", ids[order].tobytes())

    def extended(self, words: Sequence[str]) -> _Frozen:
        """These terms and `words` (new ones, ids on from `n`), without decoding these (each
        term a string made and dropped would leave holes in the heap)."""
        if not words:
            return self
        more = _Frozen.__new__(_Frozen)
        n = self.n + len(words)
        blob = Terms.of(words).blob
        more._set(
            self._blob + blob,
            n,
            np.concatenate((np.frombuffer(self._hashes, dtype=np.int64), _hashes(blob))),
            np.concatenate((np.frombuffer(self._ids, dtype=np.int32), np.arange(self.n, n, dtype=np.int32))),
        )
        return more

    def word(self, term_id: int) -> str:
        start, end = self._starts[term_id], self._starts[term_id + 1] - 1
        return self._blob[start:end].decode("utf-8", "surrogatepass")

    def find(self, term: str) -> int | None:
        h = _hash(term)
        i = bisect_left(self._hashes, h)
        while i < self.n and self._hashes[i] == h:  # equal hashes: compare the terms
            if self.word(self._ids[i]) == term:
                return self._ids[i]
            i += 1
        return None

    def find_all(self, words: Sequence[str]) -> npt.NDArray[np.int32]:
        """The id of each of `words`, -1 for a term not here: `find` in bulk, in numpy."""
        found = np.full(len(words), -1, dtype=np.int32)
        if not self.n or not words:
            return found
        hashes = _hashes(Terms.of(words).blob)
        sorted_ = np.frombuffer(self._hashes, dtype=np.int64)
        at = np.minimum(np.searchsorted(sorted_, hashes), self.n - 1)
        hit = np.flatnonzero(sorted_[at] == hashes)
        ids = np.frombuffer(self._ids, dtype=np.int32)[at[hit]]
        # The first term of each hash is the one asked for, unless two terms share a hash: the
        # bytes of all the candidates, compared at once, say so (then each is looked up alone).
        if self.gathered(ids.astype(np.int64)) == Terms.of([words[i] for i in hit.tolist()]).blob:
            found[hit] = ids
        else:
            found[:] = [-1 if (i := self.find(w)) is None else i for w in words]
        return found

    def gathered(self, ids: npt.NDArray[np.int64]) -> bytes:
        """The terms `ids` (each followed by its NUL), in that order, as one blob: no string made."""
        starts = np.frombuffer(self._starts, dtype=np.int64)
        return _gather(self._blob, starts[ids], starts[ids + 1] - starts[ids])

    def subset(self, ids: npt.NDArray[np.int64]) -> bytes:
        """`gathered` for ascending `ids`, through a mask of the blob's bytes (an index per byte
        would take eight times the blob)."""
        chosen = np.zeros(self.n, dtype=np.bool_)
        chosen[ids] = True
        starts = np.frombuffer(self._starts, dtype=np.int64)
        lengths = starts[1:] - starts[:-1]
        return np.frombuffer(self._blob, dtype=np.uint8)[np.repeat(chosen, lengths)].tobytes()

    def words(self) -> list[str]:
        return Terms(self._blob).decoded()


def _gather(blob: bytes, starts: npt.NDArray[np.int64], lengths: npt.NDArray[np.int64]) -> bytes:
    """The spans of `blob` at `starts`, `lengths` long, one after another."""
    at = np.repeat(starts - np.cumsum(lengths) + lengths, lengths) + np.arange(int(lengths.sum()))
    return np.frombuffer(blob, dtype=np.uint8)[at].tobytes()


class Vocabulary:
    """Term ids: `adding(terms)` gives the function indexing looks tokens up with (a term it
    lacks gets the next id), `get` only looks up. Iterating gives every term in id order; `len`
    counts them all."""

    __slots__ = ("_cached", "_frozen", "_ids", "_new", "_seen")

    def __init__(self, words: Sequence[str] = (), frozen: _Frozen | None = None) -> None:
        """A vocabulary of `words` (unique), frozen, ids in their order (or of `frozen`)."""
        self._frozen = frozen if frozen is not None else _Frozen(words)
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
            unknown = list(set(terms).difference(ids))
            for term, found in zip(unknown, self._frozen.find_all(unknown).tolist(), strict=True):
                if found >= 0:
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

    def terms(self, ids: npt.NDArray[np.int64]) -> Terms:
        """The terms with these ids (ascending), as a blob: a cache entry's words, packed without
        decoding the frozen ones (tldr's save made and dropped 107k strings for it)."""
        n = self._frozen.n
        cut = int(np.searchsorted(ids, n))
        added = self._added()
        rest = [added[i] for i in (ids[cut:] - n).tolist()]
        return Terms(self._frozen.subset(ids[:cut]) + Terms.of(rest).blob)

    def frozen(self) -> Vocabulary:
        """A new vocabulary of these terms, the same ids, all frozen (after a bulk build)."""
        return Vocabulary(frozen=self._frozen.extended(self._added()))

    def merged(self, words: Sequence[str]) -> tuple[Vocabulary, npt.NDArray[np.int32]]:
        """A new vocabulary of these terms and `words` (unique), and the ids of `words` in it
        (this one stays as it is, for whoever reads it meanwhile). Frozen whole, `words` looked up
        in bulk (a cold build merges each chunk it reads); unless they are a few beside many: then
        they join its dictionary (a small root restored after a large one need not copy the large
        one's frozen arrays)."""
        if not len(self):
            return Vocabulary(words), np.arange(len(words), dtype=np.int32)
        listed = words.decoded() if isinstance(words, Terms) else list(words)
        if len(listed) < min(len(self) // 8, _FEW):
            more = self._copy()
            return more, np.fromiter(map(more.adding(listed), listed), dtype=np.int32, count=len(listed))
        ids = self._frozen.find_all(listed)
        if self._ids:  # and the terms added since it was frozen
            added = np.fromiter(map(self._ids.get, listed, repeat(-1)), dtype=np.int32, count=len(listed))
            ids = np.maximum(ids, added)
        fresh = ids < 0
        n = len(self)
        ids[fresh] = np.arange(n, n + int(fresh.sum()), dtype=np.int32)
        return Vocabulary(frozen=self._frozen.extended(self._added() + list(compress(listed, fresh.tolist())))), ids

    def _copy(self) -> Vocabulary:
        """The same terms, the frozen ones shared, the dictionary copied."""
        copy = Vocabulary()
        copy._frozen, copy._cached = self._frozen, self._cached
        copy._ids = defaultdict(count(len(self)).__next__, self._ids)
        return copy
