"""A served file (`CorpusFile`) and the maps that hold them: a root's files by relative path
(`FileTable`), made of columns restored from cache entries (`FileColumns`) and of the files read
since; and every root's, by display path (`Files`).

A warm start of tldr kept 38k `CorpusFile`s, each a tuple with its own strings and integers
(about 500 bytes a file, 19 MB). A restored root's files stay in columns instead (about 190 bytes
a file, with the map from display path to row), and a `CorpusFile` is made when one is asked for.
"""

from __future__ import annotations

from array import array
from collections.abc import Callable, ItemsView, Iterable, Iterator, Mapping, MutableMapping, Sequence, ValuesView
from itertools import chain
from typing import NamedTuple, overload

from corpus.errors import NotHeld
from corpus.frontmatter import EMPTY, FrontMatter
from corpus.identity import file_uri, split_display
from corpus.read import Stamp
from corpus.roots import Root, RootKind

DIGEST_BYTES = 16
"""Bytes of a digest (`corpus.read`: blake2b of 16 bytes, shown as 32 hex digits)."""
_ROW = 32
"""A row in `FileTable._where`: its base's number above these bits, its row below."""


class CorpusFile(NamedTuple):
    """One served file and its text. A named tuple (immutable, hashable, and built four to five times
    faster than a frozen dataclass: a warm restart of a 38k-file root makes 38k of them)."""

    root: Root
    rel: str
    path: str
    """Display path: `<root label>/<rel>`."""
    pinned: bool
    """Pinned by name (`--pin`, the root's defaults) or because its front matter (or its
    convention, see `corpus.conventions`) says it applies to every task."""
    text: str
    """The file's text; empty when it is not `held`."""
    size: int
    mtime_ns: int
    ctime_ns: int
    digest: str
    meta: FrontMatter = EMPTY
    """YAML front matter: title, description, tags, and when the file applies."""
    held: bool = True
    """Whether `text` is the file's text. The live index holds no docs file's text (see
    `without_text`): it is read from disk when asked for (`content`)."""

    def content(self) -> str:
        """The file's text, for a file that holds it (`held`). The live index holds no docs file's
        text: `live.texts.content` reads it from the file, checked against its digest; here it
        raises `NotHeld`, so no caller reads the disk without knowing it."""
        if not self.held:
            raise NotHeld(f"{self.path}: the index does not hold this file's text (live.texts reads it)")
        return self.text

    def without_text(self) -> CorpusFile:
        """This file, not holding its text (`content` reads it when asked for)."""
        return self._replace(text="", held=False)

    @property
    def uri(self) -> str:
        """Made when asked for, not kept: a string a file was 3.5 MB for tldr's 38k."""
        return file_uri(self.root, self.rel)

    @property
    def title(self) -> str | None:
        return self.meta.title

    @property
    def stamp(self) -> Stamp:
        return (self.size, self.mtime_ns, self.ctime_ns)

    @property
    def searchable(self) -> bool:
        """The sections of every `.AGENTS` file are what `context_search` searches, pinned ones
        included (the model may no longer hold the pinned text; their hits say `pinned="true"`)."""
        return self.root.kind is RootKind.AGENTS


class FileColumns(Sequence[CorpusFile]):
    """Files of one root as columns, never changed: a restored cache entry's (or a worker's
    chunk's), in its order. Each `CorpusFile` is made when asked for, equal to the one the entry
    was packed from; `paths` are the strings the index keys its groups and tie-breaks by, kept
    once here."""

    __slots__ = ("__weakref__", "_cut", "_digests", "_meta", "_pinned", "_stat", "_texts", "paths", "root")

    def __init__(
        self,
        root: Root,
        paths: list[str],
        stat: array[int],
        digests: bytes,
        pinned: bytes,
        texts: list[str] | None = None,
        meta: dict[int, FrontMatter] | None = None,
    ) -> None:
        """`stat` holds (size, mtime_ns, ctime_ns) a file, `digests` 16 bytes a file, `pinned` a byte
        a file; `texts` each file's text for a root whose text the index holds, else None; `meta`
        the front matter of the files that have any, by row."""
        n = len(paths)
        if (
            len(stat) != 3 * n
            or len(digests) != DIGEST_BYTES * n
            or len(pinned) != n
            or (texts is not None and len(texts) != n)
        ):
            raise ValueError("the files' columns disagree")
        self.root, self.paths = root, paths
        self._cut = len(root.label) + 1
        self._stat, self._digests, self._pinned, self._texts = stat, digests, pinned, texts
        self._meta = meta or {}

    @classmethod
    def of(cls, root: Root, files: Iterable[CorpusFile]) -> FileColumns:
        """These files of `root`, in this order, as columns."""
        ordered = list(files)
        held = [f.held for f in ordered]
        if any(held) and not all(held):
            raise ValueError("files of one root either all hold their text or none does")
        return cls(
            root,
            [f.path for f in ordered],
            array("q", [n for f in ordered for n in f.stamp]),
            bytes.fromhex("".join(f.digest for f in ordered)),
            bytes(f.pinned for f in ordered),
            [f.text for f in ordered] if ordered and all(held) else None,
            {i: f.meta for i, f in enumerate(ordered) if f.meta != EMPTY},
        )

    def __len__(self) -> int:
        return len(self.paths)

    @overload
    def __getitem__(self, i: int) -> CorpusFile: ...
    @overload
    def __getitem__(self, i: slice) -> list[CorpusFile]: ...
    def __getitem__(self, i: int | slice) -> CorpusFile | list[CorpusFile]:
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(len(self)))]
        i = range(len(self.paths))[i]  # a negative index counts from the end; out of range raises
        path, texts = self.paths[i], self._texts
        size, mtime, ctime = self.stamp(i)
        return CorpusFile(
            self.root,
            path[self._cut :],
            path,
            self._pinned[i] != 0,
            "" if texts is None else texts[i],
            size,
            mtime,
            ctime,
            self._digests[DIGEST_BYTES * i : DIGEST_BYTES * (i + 1)].hex(),
            self._meta.get(i, EMPTY),
            texts is not None,
        )

    def sizes(self) -> array[int]:
        """Each file's size in bytes."""
        return self._stat[0::3]

    def stamp(self, i: int) -> Stamp:
        s = 3 * i
        return (self._stat[s], self._stat[s + 1], self._stat[s + 2])


class FileTable(MutableMapping[str, CorpusFile]):
    """A root's files by relative path: the rows of the columns it adopted (`adopt`, a restored
    entry or a worker's chunk) and, in a small dict over them, each file read or changed since.
    A file is in one of the two, never both."""

    __slots__ = ("_bases", "_over", "_prefix", "_where", "root")

    def __init__(self, root: Root) -> None:
        self.root = root
        self._prefix = root.label + "/"
        self._bases: list[FileColumns | None] = []
        self._where: dict[str, int] = {}
        """A base's file by display path (its string in the base): the base's number and its row."""
        self._over: dict[str, CorpusFile] = {}

    def adopt(self, files: Sequence[CorpusFile]) -> Sequence[str]:
        """Take these files (restored, or read elsewhere) in, as columns, replacing any with the
        same path; their display paths."""
        if not files:
            return []
        base = files if isinstance(files, FileColumns) else FileColumns.of(files[0].root, files)
        number = len(self._bases)
        self._bases.append(base)
        if self._over:
            cut = len(self._prefix)
            for path in base.paths:
                self._over.pop(path[cut:], None)
        first = number << _ROW
        self._where.update(zip(base.paths, range(first, first + len(base.paths)), strict=True))
        if number:  # a first base replaces nothing
            self._drop_unused()
        return base.paths

    def _drop_unused(self) -> None:
        """Let go of the bases no file is in any more (their units may still hold them)."""
        used = {at >> _ROW for at in self._where.values()} if self._where else set()
        self._bases = [b if i in used else None for i, b in enumerate(self._bases)]

    def _row(self, rel: str) -> tuple[FileColumns, int] | None:
        at = self._where.get(self._prefix + rel)
        if at is None:
            return None
        base = self._bases[at >> _ROW]
        assert base is not None, "a base a file is in is kept"
        return base, at & ((1 << _ROW) - 1)

    def __getitem__(self, rel: str) -> CorpusFile:
        f = self._over.get(rel)
        if f is not None:
            return f
        found = self._row(rel)
        if found is None:
            raise KeyError(rel)
        return found[0][found[1]]

    def __contains__(self, rel: object) -> bool:
        return isinstance(rel, str) and (rel in self._over or self._prefix + rel in self._where)

    def __setitem__(self, rel: str, f: CorpusFile) -> None:
        self._where.pop(self._prefix + rel, None)
        self._over[rel] = f

    def __delitem__(self, rel: str) -> None:
        if self._over.pop(rel, None) is None:
            del self._where[self._prefix + rel]

    def __iter__(self) -> Iterator[str]:
        cut = len(self._prefix)
        return chain((path[cut:] for path in self._where), self._over)

    def __len__(self) -> int:
        return len(self._where) + len(self._over)

    def values(self) -> ValuesView[CorpusFile]:
        return _TableValues(self)

    def _files(self) -> Iterator[CorpusFile]:
        return self.where(_every)

    def paths(self) -> Iterator[str]:
        """Every file's display path, no record made."""
        return chain(self._where, (f.path for f in self._over.values()))

    def where(self, keep: Callable[[str], bool]) -> Iterator[CorpusFile]:
        """The files whose display path `keep` keeps, a record made only for them."""
        bases, mask = self._bases, (1 << _ROW) - 1
        for path, at in self._where.items():
            if keep(path):
                base = bases[at >> _ROW]
                assert base is not None
                yield base[at & mask]
        yield from (f for f in self._over.values() if keep(f.path))

    def total_size(self) -> int:
        """The files' sizes in bytes, summed."""
        bases, mask = self._bases, (1 << _ROW) - 1
        if len(self._where) == sum(len(b) for b in bases if b is not None):  # every row of each base
            in_bases = sum(sum(b.sizes()) for b in bases if b is not None)  # (tldr: 15 ms a row at a time)
        else:
            in_bases = sum(b.stamp(at & mask)[0] for at in self._where.values() if (b := bases[at >> _ROW]) is not None)
        return in_bases + sum(f.size for f in self._over.values())

    def stamp_of(self, rel: str) -> Stamp | None:
        """The stamp the file was read with, without making its record (a walk's check)."""
        f = self._over.get(rel)
        if f is not None:
            return f.stamp
        found = self._row(rel)
        return None if found is None else found[0].stamp(found[1])


def _every(_path: str) -> bool:
    return True


class _TableValues(ValuesView[CorpusFile]):
    _mapping: FileTable

    def __iter__(self) -> Iterator[CorpusFile]:
        return self._mapping._files()


class Files(Mapping[str, CorpusFile]):
    """Every served file by display path, root by root: one map, made of each root's files by
    relative path (`of`), which the live index changes in place."""

    def __init__(self, roots: Iterable[Root]) -> None:
        self._roots: dict[str, FileTable] = {r.label: FileTable(r) for r in roots}

    def of(self, label: str) -> FileTable:
        """The files of the root with this label, by relative path (the map itself, not a copy)."""
        return self._roots[label]

    def add(self, f: CorpusFile) -> None:
        self._roots[f.root.label][f.rel] = f

    def __getitem__(self, path: str) -> CorpusFile:
        label, rel = split_display(path)
        files = self._roots.get(label)
        if files is None or rel not in files:
            raise KeyError(path)
        return files[rel]

    def __contains__(self, path: object) -> bool:
        if not isinstance(path, str):
            return False
        label, rel = split_display(path)
        return rel in self._roots.get(label, ())

    def __iter__(self) -> Iterator[str]:
        return chain.from_iterable(files.paths() for files in self._roots.values())

    def __len__(self) -> int:
        return sum(len(files) for files in self._roots.values())

    def values(self) -> ValuesView[CorpusFile]:
        return _Values(self)

    def agents(self) -> Iterator[CorpusFile]:
        """The files of the `.AGENTS` roots (and of the conventional one): no docs file's record
        is made for the many callers that look only at these."""
        return chain.from_iterable(t.values() for t in self._roots.values() if t.root.kind is RootKind.AGENTS)

    def where(self, keep: Callable[[str], bool]) -> Iterator[CorpusFile]:
        """The files whose display path `keep` keeps, a record made only for them."""
        return chain.from_iterable(t.where(keep) for t in self._roots.values())

    def items(self) -> ItemsView[str, CorpusFile]:
        return _Items(self)

    def _all(self) -> Iterator[CorpusFile]:
        return chain.from_iterable(files.values() for files in self._roots.values())


class _Values(ValuesView[CorpusFile]):
    _mapping: Files

    def __iter__(self) -> Iterator[CorpusFile]:
        return self._mapping._all()


class _Items(ItemsView[str, CorpusFile]):
    _mapping: Files

    def __iter__(self) -> Iterator[tuple[str, CorpusFile]]:
        return ((f.path, f) for f in self._mapping._all())
