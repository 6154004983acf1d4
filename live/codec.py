"""What a cache entry holds and how: one root's files, units and packed postings, and the folder
listings of its last walk, as named integer arrays (`live.arrayfile`), and back. Nothing in an
entry can run code; anything unexpected while restoring (damaged, truncated, another version,
arrays that disagree) raises, and the entry is discarded.

Strings are interned into a table stored as NUL-separated UTF-8 blobs. Those that are unique and
many have blobs of their own: an index's words (`Terms`) and the files' paths; digests are bytes.
Restoring makes no Python object it drops in bulk (see `Table`). A unit's text is an offset into
its file's text. A file the index does not hold the text of (a docs file, see `CorpusFile.held`)
is stored without it, and restored so: its units read their lines from it.
"""

from __future__ import annotations

import codecs
import json
import sys
import time
from array import array
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import chain, islice
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from corpus.files import DIGEST_BYTES, CorpusFile, FileColumns
from corpus.frontmatter import FrontMatter
from corpus.identity import display_path
from corpus.listing import DIR, FILE, LINK, FolderStamp, Kept, Listing
from corpus.read import Refusal, SkipKind
from corpus.roots import Root
from live.changes import holds_text
from live.units import Groups, Units
from retrieval.chunks.units import Unit
from retrieval.engine.packing import Packed
from retrieval.engine.vocabulary import Terms

FORMAT = 19
"""Bump when the layout below, or what a unit or a posting means, changes."""


@dataclass(slots=True)
class Saved:
    """One root as a cache entry holds it (written, restored, or sent by a worker): its files,
    per index its packed units, and its folder listings."""

    files: Sequence[CorpusFile]
    sections: Packed[Unit]
    windows: Packed[Unit]
    links: Packed[Unit]
    listings: list[Kept] = field(default_factory=list)
    """The folder listings its last walk kept, so a restart's first walk need not list again."""


@dataclass(slots=True)
class _Strings:
    """Strings interned into one table, stored as one UTF-8 blob separated by NUL characters (no
    corpus string holds one: a file with a NUL byte is binary, and is skipped), which loads with
    one `decode` and one `split`, both in C."""

    table: list[str] = field(default_factory=list)
    index: dict[str, int] = field(default_factory=dict)

    def add(self, value: str | None) -> int:
        if value is None:
            return -1
        found = self.index.get(value)
        if found is None:
            found = self.index[value] = len(self.table)
            self.table.append(value)
        return found

    def arrays(self) -> dict[str, npt.NDArray[Any]]:
        """The table as `parts` blobs of up to `_PART` strings each: encoded part by part, and
        never joined (a text join would make the whole table four bytes a character once one
        string is beyond Latin-1, as tldr's pages in 40 languages are; a bytes join would hold
        it twice: either was the peak of a cache write)."""
        parts: dict[str, npt.NDArray[Any]] = {}
        for at in range(0, len(self.table), _PART):
            strings = self.table[at : at + _PART]
            blob = "\0".join(strings).encode("utf-8", "surrogatepass")
            if blob.count(b"\0") != len(strings) - 1:
                raise ValueError("a string to cache holds a NUL character")
            parts[f"blob{len(parts)}"] = np.frombuffer(blob, dtype=np.uint8)
        return parts | {
            "parts": np.array([len(parts)], dtype=np.int64),
            "count": np.array([len(self.table)], dtype=np.int64),
        }


_PART = 4096
"""Strings per blob of the string table."""


def _joined(values: Iterable[str]) -> npt.NDArray[np.uint8]:
    """Strings as one UTF-8 blob, each followed by a NUL (none holds one: see `_Strings`)."""
    listed = list(values)
    blob = "".join(f"{v}\0" for v in listed).encode("utf-8", "surrogatepass")
    if blob.count(b"\0") != len(listed):
        raise ValueError("a string to cache holds a NUL character")
    return np.frombuffer(blob, dtype=np.uint8)


def _digests(files: Sequence[CorpusFile]) -> npt.NDArray[np.uint8]:
    """The files' digests as bytes, 16 a file (`corpus.read` shows them as hex)."""
    try:
        digests = bytes.fromhex("".join(f.digest for f in files))
    except ValueError:
        digests = b""
    if len(digests) != DIGEST_BYTES * len(files):
        raise ValueError(f"a file's digest is not {DIGEST_BYTES} bytes in hex")
    return np.frombuffer(digests, dtype=np.uint8)


def _display_paths(root: Root, rels: npt.NDArray[np.uint8]) -> list[str]:
    """The display path of each relative path of a `_joined` blob, each string made once: no
    relative path made and dropped (tldr's 38k left holes in the heap, kept by the server)."""
    if not len(rels):
        return []
    if rels[-1] != 0:
        raise ValueError("the files' paths are damaged")
    joined = codecs.utf_8_decode(rels.data, "surrogatepass", True)[0]
    prefix = display_path(root, "")
    return (prefix + joined[:-1].replace("\0", "\0" + prefix)).split("\0")


Table = npt.NDArray[np.object_]
"""An entry's string table as an array of the strings: indexed by an array of ids, it gives them
(`table[ids].tolist()`) without an integer object made per id. Those made in bulk and dropped
while the index's own objects were being made left holes in the heap that the server kept."""


def _table(arrays: Mapping[str, npt.NDArray[Any]]) -> Table:
    """The string table of an entry's `str_` arrays."""
    count, parts = int(arrays["str_count"][0]), int(arrays["str_parts"][0])
    if parts != -(-count // _PART):
        raise ValueError("string table parts do not match its count")
    table: list[str] = []
    for i in range(parts):
        blob = codecs.utf_8_decode(arrays[f"str_blob{i}"].data, "surrogatepass", True)[0]  # no copy first
        table.extend(blob.split("\0"))
    if len(table) != count:
        raise ValueError("string table does not match its blobs")
    strings = np.empty(count, dtype=object)
    strings[:] = table
    return strings


def _meta(meta: FrontMatter) -> str | None:
    if meta == FrontMatter():
        return None
    return json.dumps(
        [
            meta.title,
            meta.description,
            list(meta.tags),
            list(meta.globs),
            meta.always_apply,
            meta.convention,
            meta.glob_key,
            meta.search_only,
            meta.problem,
        ]
    )


def arrays(root: Root, key: str, entry: Saved) -> dict[str, npt.NDArray[Any]]:
    files, listings = entry.files, entry.listings
    strings = _Strings()
    header = {"format": FORMAT, "key": key, "root": str(root.path), "saved_at": time.time(), "files": len(files)}
    number = {f.path: i for i, f in enumerate(files)}
    n = len(files)
    arrays: dict[str, npt.NDArray[Any]] = {
        "header": np.frombuffer(json.dumps(header).encode(), dtype=np.uint8),
        "f_rels": _joined(f.rel for f in files),
        "f_stat": _ints(chain.from_iterable(f.stamp for f in files), 3 * n).reshape(-1, 3),
        "f_digest": _digests(files),
        "f_text": _ints((strings.add(f.text if f.held else None) for f in files), n),
        "f_pinned": np.fromiter((f.pinned for f in files), dtype=np.bool_, count=n),
        "f_meta": _ints((strings.add(_meta(f.meta)) for f in files), n),
    }
    by_path = {f.path: f for f in files}
    for prefix, packed in (("s", entry.sections), ("w", entry.windows), ("k", entry.links)):
        groups = packed.groups
        arrays |= {
            f"{prefix}_groups": _ints((number[str(group)] for group, _ in groups), len(groups)),
            f"{prefix}_counts": _ints((count for _, count in groups), len(groups)),
            **_unit_arrays(prefix, packed.payloads, by_path, strings),
            f"{prefix}_vocab": np.frombuffer(Terms.of(packed.words).blob, dtype=np.uint8),
            f"{prefix}_indptr": packed.indptr,
            f"{prefix}_docs": packed.docs,
            f"{prefix}_tfs": packed.tfs,
            f"{prefix}_fwd": packed.fwd,
            f"{prefix}_fcounts": packed.counts,
            f"{prefix}_lengths": packed.lengths,
            f"{prefix}_body": packed.text,
        }
    arrays |= _listing_arrays(listings, strings)
    return arrays | {f"str_{name}": array for name, array in strings.arrays().items()}


_KINDS = (DIR, FILE, LINK)
_SKIPS = tuple(SkipKind)
_NO_STAMP = (-1, -1, -1, -1)


def _listing_arrays(listings: Sequence[Kept], strings: _Strings) -> dict[str, npt.NDArray[Any]]:
    """Each listing's prefix, folder, stamp, entries (name, kind), refusals (path, kind, reason)
    and ignore files (name, stamp when listed), run after run."""
    n = len(listings)
    names = [name for k in listings for name in k.listing.names]
    kinds = [kind for k in listings for kind in k.listing.kinds]
    refused = [r for k in listings for r in k.listing.refused]
    ignores = [(Path(path).name, stamp) for k in listings for path, stamp in k.ignores]
    return {
        "l_prefix": _ints((strings.add(k.prefix) for k in listings), n),
        "l_path": _ints((strings.add(k.listing.path) for k in listings), n),
        "l_stamp": _ints(chain.from_iterable(k.listing.stamp for k in listings), 4 * n).reshape(-1, 4),
        "l_counts": _ints(
            chain.from_iterable((len(k.listing.names), len(k.listing.refused), len(k.ignores)) for k in listings),
            3 * n,
        ).reshape(-1, 3),
        "l_entry": _ints((strings.add(name) for name in names), len(names)),
        "l_entry_kind": _ints((_KINDS.index(kind) for kind in kinds), len(kinds)),
        "l_refused": _ints(
            chain.from_iterable((strings.add(rel), _SKIPS.index(r.kind), strings.add(r.reason)) for rel, r in refused),
            3 * len(refused),
        ).reshape(-1, 3),
        "l_ignore": _ints((strings.add(name) for name, _ in ignores), len(ignores)),
        "l_ignore_stamp": _ints(
            chain.from_iterable(stamp or _NO_STAMP for _, stamp in ignores), 4 * len(ignores)
        ).reshape(-1, 4),
    }


def _listings(a: Mapping[str, npt.NDArray[Any]], s: Table) -> list[Kept]:
    """The listings `_listing_arrays` stored; `ValueError` if they do not add up."""
    counts, entry_kinds, refused = a["l_counts"], a["l_entry_kind"], a["l_refused"]
    named = [a["l_prefix"], a["l_path"], a["l_entry"], a["l_ignore"], refused[:, 0], refused[:, 2]]
    if any(len(ids) and (ids.min() < 0 or ids.max() >= len(s)) for ids in named):
        raise ValueError("a listing names no string")
    if counts.shape != (len(a["l_prefix"]), 3) or (counts.size and counts.min() < 0):
        raise ValueError("listing counts are damaged")
    if [int(n) for n in counts.sum(axis=0)] != [len(a["l_entry"]), len(refused), len(a["l_ignore"])]:
        raise ValueError("listing counts disagree with their entries")
    if len(entry_kinds) and (entry_kinds.min() < 0 or entry_kinds.max() >= len(_KINDS)):
        raise ValueError("a listed entry has no kind")
    if len(refused) and (refused[:, 1].min() < 0 or refused[:, 1].max() >= len(_SKIPS)):
        raise ValueError("a refusal has no kind")
    names = s[a["l_entry"]].tolist()
    kinds = [_KINDS[k] for k in entry_kinds.tolist()]
    refusals = [(s[rel], Refusal(_SKIPS[k], s[why])) for rel, k, why in refused.tolist()]
    ignores = [
        (s[n], None if tuple(st) == _NO_STAMP else _stamp4(st))
        for n, st in zip(a["l_ignore"].tolist(), a["l_ignore_stamp"].tolist(), strict=True)
    ]
    kept: list[Kept] = []
    e = r = i = 0
    for prefix, path, stamp, (ne, nr, ni) in zip(
        a["l_prefix"].tolist(), a["l_path"].tolist(), a["l_stamp"].tolist(), counts.tolist(), strict=True
    ):
        folder = s[path]
        files = ignores[i : i + ni]
        listing = Listing(
            folder,
            _stamp4(stamp),
            True,
            tuple(names[e : e + ne]),
            tuple(kinds[e : e + ne]),
            tuple(refusals[r : r + nr]),
            frozenset(name for name, _ in files),
        )
        kept.append(Kept(s[prefix], listing, tuple((str(Path(folder, name)), st) for name, st in files)))
        e, r, i = e + ne, r + nr, i + ni
    return kept


def _stamp4(values: Sequence[int]) -> FolderStamp:
    mtime, ctime, inode, size = values
    return (mtime, ctime, inode, size)


def _ints(values: Iterable[int], count: int) -> npt.NDArray[np.int64]:
    """An int64 array straight from an iterator (no list of Python ints first: a cache write of
    tldr made a dozen of them, at its peak)."""
    return np.fromiter(values, dtype=np.int64, count=count)


def _unit_arrays(
    prefix: str, units: Iterable[Unit], files: Mapping[str, CorpusFile], strings: _Strings
) -> dict[str, npt.NDArray[Any]]:
    """The units' columns, read in one pass: a pack makes each unit as it is read, and drops it
    (`Packed.payloads`). A unit's text is its lines of the file's text: stored as a character
    offset into it and a length, which keeps the entry about a third of the size of storing it
    again, and restored as a view of the restored file's text (see `Unit.source`); a unit whose
    text is not there stores its text."""
    lines, at, length, text, heading, anchor, chunk, trail_len, trail = (array("q") for _ in range(9))
    for u in units:
        offset = u.at if _in_file(u, files.get(u.path)) else -1
        lines.extend((u.start_line, u.end_line))
        at.append(offset)
        length.append(u.end - u.at if u.end >= 0 else len(u.text))
        text.append(-1 if offset >= 0 else strings.add(u.text))
        heading.append(strings.add(u.heading))
        anchor.append(strings.add(u.anchor))
        chunk.append(-1 if u.chunk_id is None else u.chunk_id)
        trail_len.append(len(u.trail))
        trail.extend(map(strings.add, u.trail))
    columns = {"at": at, "len": length, "text": text, "heading": heading, "anchor": anchor, "chunk": chunk}
    return {
        f"{prefix}_lines": np.frombuffer(lines, dtype=np.int64).reshape(-1, 2),
        **{f"{prefix}_{name}": np.frombuffer(c, dtype=np.int64) for name, c in columns.items()},
        f"{prefix}_trail_len": np.frombuffer(trail_len, dtype=np.int64),
        f"{prefix}_trail": np.frombuffer(trail, dtype=np.int64),
    }


def _in_file(u: Unit, f: CorpusFile | None) -> bool:
    """Whether the unit's text is its file's text from `u.at` (else the text itself is stored)."""
    source = u.source
    if f is None or u.end < 0:
        return False
    if isinstance(source, str):
        return f.held and (source is f.text or source == f.text)
    return not f.held and (source is f or source.digest == f.digest)


Trails = dict[tuple[str, ...], tuple[str, ...]]
"""One tuple per distinct heading trail, shared by the units that have it."""


def restore(root: Root, key: str, a: Mapping[str, npt.NDArray[Any]], trails: Trails | None = None) -> Saved:
    """The entry `a` laid out; `trails` keeps one tuple per heading trail across the entries
    restored with it (a cold build's chunks: tldr's 28k trail tuples, 7.3k shared)."""
    header = json.loads(a["header"].tobytes())
    if header.get("format") != FORMAT or header.get("key") != key or header.get("root") != str(root.path):
        raise ValueError("written for another format or root")
    s = _table(a)
    for name in ("s_trail", "w_trail"):
        if len(a[name]) and a[name].min() < 0:
            raise ValueError(f"{name} names no string")
    if len(a["f_text"]) and a["f_text"].min() < (0 if holds_text(root) else -1):
        raise ValueError("f_text names no string")
    n, text = len(a["f_stat"]), a["f_text"]
    paths = _display_paths(root, a["f_rels"])
    if any(len(a[name]) != n for name in ("f_text", "f_pinned", "f_meta")) or len(paths) != n:
        raise ValueError("the files' columns disagree")
    held = bool(n) and int(text.min()) >= 0
    if held != (n > 0 and int(text.max()) >= 0):
        raise ValueError("some files hold their text and some do not")
    texts = s[text].tolist() if held else None
    files = FileColumns(
        root,
        paths,
        array("q", np.ascontiguousarray(a["f_stat"], dtype=np.int64).tobytes()),
        a["f_digest"].tobytes(),
        np.ascontiguousarray(a["f_pinned"], dtype=np.bool_).tobytes(),
        texts,
        {i: _front_matter(s[m]) for i, m in enumerate(a["f_meta"].tolist()) if m >= 0},
    )
    # To check every unit's bounds at once: a text not held has at most as many characters as bytes.
    sizes = (
        np.array([len(t) for t in texts], dtype=np.int64)
        if texts is not None
        else np.array(files.sizes(), dtype=np.int64)
    )
    trails = {} if trails is None else trails  # one tuple per trail, shared by the units
    sections, windows, links = (_packed(a, prefix, s, files, sizes, trails) for prefix in ("s", "w", "k"))
    return Saved(files, sections, windows, links, _listings(a, s))


def _front_matter(raw: str) -> FrontMatter:
    title, description, tags, globs, always, convention, key, search_only, problem = json.loads(raw)
    return FrontMatter(
        title,
        description,
        tuple(tags),
        tuple(globs),
        bool(always),
        convention=str(convention),
        glob_key=str(key),
        search_only=bool(search_only),
        problem=problem,
    )


def _packed(
    a: Mapping[str, npt.NDArray[Any]],
    prefix: str,
    s: Table,
    files: FileColumns,
    sizes: npt.NDArray[np.int64],
    shared: Trails,
) -> Packed[Unit]:
    def get(name: str) -> npt.NDArray[Any]:
        return a[f"{prefix}_{name}"]

    groups_of, counts = get("groups"), get("counts")
    if len(groups_of) and (groups_of.min() < 0 or groups_of.max() >= len(files)):
        raise ValueError("a unit names no file")
    groups = Groups(files.paths, groups_of, counts)
    owner = np.repeat(groups_of, counts)
    at, length = get("at"), get("len")
    if len(owner) != len(at) or np.any((at >= 0) & ((length < 0) | (at + length > sizes[owner]))):
        raise ValueError("a unit lies outside its file's text")
    if np.any((at < 0) & ((get("text") < 0) | (get("text") >= len(s)))):
        raise ValueError("a unit names no text")
    heading, anchor, chunk, lines = get("heading"), get("anchor"), get("chunk"), get("lines")
    if any(len(c) != len(owner) for c in (heading, anchor, chunk, lines, get("trail_len"))) or lines.shape[1:] != (2,):
        raise ValueError("the units' columns disagree")  # each unit is made later, when asked for
    if any(len(ids) and ids.max() >= len(s) for ids in (heading, anchor)):
        raise ValueError("a unit names no string")
    text = np.where(at < 0, get("text"), -1)
    named = np.concatenate((heading, anchor, text))
    used = np.unique(named[named >= 0])  # the unit's own strings, not the whole table

    def local(ids: npt.NDArray[Any]) -> npt.NDArray[Any]:
        return np.where(ids >= 0, np.searchsorted(used, ids), -1)

    units = Units(
        files,
        owner,
        lines,
        (at, length, local(text)),
        (local(heading), local(anchor), chunk),
        s[used].tolist(),
        _trails(get("trail"), get("trail_len"), s, shared),
    )
    packed = Packed(
        groups=groups,
        payloads=units,
        orders=units.orders(),
        words=Terms(get("vocab").tobytes()),
        indptr=get("indptr"),
        docs=get("docs"),
        tfs=get("tfs"),
        fwd=get("fwd"),
        counts=get("fcounts"),
        lengths=get("lengths"),
        text=get("body"),
    )
    _check(packed)
    return packed


def _trails(
    ids: npt.NDArray[Any], lengths: npt.NDArray[Any], s: Table, shared: Trails
) -> tuple[npt.NDArray[np.int32], list[tuple[str, ...]]]:
    """Each unit's heading trail, as an index into the distinct trails. A file's windows mostly
    repeat the same few (tldr: 7.3k of 38.5k differ); the strings are interned, so a build's
    chunks, each with a string table of its own, share them too (28k strings, now 7.3k)."""
    if (len(lengths) and lengths.min() < 0) or len(ids) != int(lengths.sum()):
        raise ValueError("heading trails are damaged")
    strings = map(sys.intern, s[ids].tolist())
    distinct: dict[tuple[str, ...], int] = {}
    index = np.fromiter(
        (
            distinct.setdefault(shared.setdefault(t := tuple(islice(strings, n)), t), len(distinct))
            for n in lengths.tolist()
        ),
        dtype=np.int32,
        count=len(lengths),
    )
    return index, list(distinct)


def _check(p: Packed[Unit]) -> None:
    """Shapes and bounds, so a damaged entry fails here and not inside a search."""
    # The groups' counts add up to the units by construction (`_packed` repeats each group's file
    # as many times as its count): summing them here made a list of 38k paths for nothing.
    n_docs, n_words = len(p.payloads), len(p.words)
    if len(p.lengths) != n_docs or len(p.counts) != n_docs:
        raise ValueError("document counts disagree")
    if len(p.indptr) != n_words + 1 or int(p.indptr[-1]) != len(p.docs) or len(p.tfs) != len(p.docs):
        raise ValueError("postings disagree with the vocabulary")
    if np.any(np.diff(p.indptr) < 0) or int(p.counts.sum()) != len(p.fwd):
        raise ValueError("postings are out of order")
    if p.tfs.size and p.tfs.min() < 0:
        raise ValueError("a term frequency is negative")
    if len(p.docs) and (p.docs.min() < 0 or p.docs.max() >= n_docs):
        raise ValueError("a posting names no document")
    if len(p.fwd) and (p.fwd.min() < 0 or p.fwd.max() >= n_words):
        raise ValueError("a document names no term")
    if p.lengths.ndim != 2 or int(p.lengths[:, 0].sum()) != len(p.text):
        raise ValueError("the stored text disagrees with the lengths")
    body = p.lengths[:, 0].astype(np.int64)
    has = np.flatnonzero(body > 0)  # each document's greatest place is among its own terms
    if len(p.text) and (
        p.text.min() < 0 or np.any(np.maximum.reduceat(p.text, (np.cumsum(body) - body)[has]) >= p.counts[has])
    ):
        raise ValueError("the stored text names no term of its document")
