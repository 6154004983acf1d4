"""Folder listings remembered between walks, so a walk of an unchanged tree lists no folder.

A folder is listed again only when its stat moved (adding, removing or renaming an entry moves
its mtime and ctime, a chmod its ctime, a replaced folder has another inode) or when it was
listed less than `RACY_NS` after it last changed: a change in the same timestamp tick as the
listing would not move the stat (git's "racy" rule). Files are stat'd on every walk anyway (an
in-place edit moves only the file's own stat), and links are resolved on every walk. How a
listing sorted its entries depends on the ignore files, so any change to one of those (or one
changed too recently to tell) forgets every listing of the root.
"""

from __future__ import annotations

import os
import threading
import time
from collections import OrderedDict
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path

from corpus.read import Refusal

RACY_NS = 2_000_000_000
"""A folder or ignore file changed less than this long before it was looked at may change
again without its stat moving (timestamps are coarse on some file systems: 2 s on FAT)."""

DIR, FILE, LINK = "dir", "file", "link"
"""What a listing does with an entry on every walk: descend into it, stat it, resolve it."""

FolderStamp = tuple[int, int, int, int]
"""(mtime_ns, ctime_ns, inode, size) of a folder or an ignore file."""


def stamp_of(st: os.stat_result) -> FolderStamp:
    return (st.st_mtime_ns, st.st_ctime_ns, st.st_ino, st.st_size)


def settled(stamp: FolderStamp, looked_ns: int) -> bool:
    """Whether anything that changes it after `looked_ns` must move `stamp`."""
    return looked_ns - max(stamp[0], stamp[1]) > RACY_NS


@dataclass(frozen=True, slots=True)
class Listing:
    """One folder, as a walk sorted its entries."""

    path: str
    """The folder as the walk reached it (a linked folder by its real path)."""
    stamp: FolderStamp
    trusted: bool
    """Listed long enough after its last change that its stamp tells every later change."""
    names: tuple[str, ...]
    """The entries to act on every walk, in name order..."""
    kinds: tuple[str, ...]
    """...and what each is: DIR, FILE or LINK (two tuples, not one of pairs: a pair was 56 bytes
    an entry, 2.2 MB for tldr's 38k)."""
    refused: tuple[tuple[str, Refusal], ...]
    """(rel, why): entries refused by name or by the ignore rules."""
    ignore_files: frozenset[str]
    """The ignore files in this folder (`.gitignore`, and `.agentsignore` at the top)."""

    @property
    def entries(self) -> Iterator[tuple[str, str]]:
        """(name, kind) of each entry to act on every walk."""
        return zip(self.names, self.kinds, strict=True)


@dataclass(slots=True)
class Listings:
    """The remembered listings of one root, by folder prefix (`""`, `"src/"`, `"src/api/"`)."""

    lock: threading.Lock = field(default_factory=threading.Lock)
    folders: dict[str, Listing] = field(default_factory=dict)
    ignores: dict[str, tuple[tuple[str, FolderStamp | None], ...]] = field(default_factory=dict)
    """Per folder prefix, its ignore files' paths and stamps (None: unreadable)."""
    walked: tuple[str, ...] | None = None
    """The folders the last whole walk listed or checked (None: not walked yet)."""

    def check_ignores(self) -> None:
        """Forget everything if any ignore file changed, or changed too recently to tell."""
        now = time.time_ns()
        for files in self.ignores.values():
            for path, seen in files:
                current = _stamp(path)
                if current != seen or (current is not None and not settled(current, now)):
                    self.clear()
                    return

    def valid(self, prefix: str, stamp: FolderStamp) -> Listing | None:
        listing = self.folders.get(prefix)
        return listing if listing is not None and listing.trusted and listing.stamp == stamp else None

    def keep(self, prefixes: set[str]) -> None:
        """After a whole walk: forget the folders it did not reach (gone, or now ignored), and
        remember the ones it did."""
        for gone in [k for k in self.folders if k not in prefixes]:
            del self.folders[gone]
            self.ignores.pop(gone, None)
        self.walked = tuple(sorted(listing.path for listing in self.folders.values()))

    def put(self, prefix: str, listing: Listing) -> None:
        """Remember `listing`; a folder whose ignore files came or went forgets its subfolders,
        which were sorted by the old rules."""
        old = self.folders.get(prefix)
        if old is not None and old.ignore_files != listing.ignore_files:
            self.forget_below(prefix)
        self.folders[prefix] = listing
        files = tuple((p, _stamp(p)) for p in (str(Path(listing.path, n)) for n in sorted(listing.ignore_files)))
        if files:
            self.ignores[prefix] = files
        else:
            self.ignores.pop(prefix, None)

    def forget(self, prefix: str) -> None:
        self.folders.pop(prefix, None)

    def distrust(self, prefix: str) -> None:
        """List the folder again next time (it changed under the walk)."""
        listing = self.folders.get(prefix)
        if listing is not None:
            self.folders[prefix] = replace(listing, trusted=False)

    def forget_below(self, prefix: str) -> None:
        for key in [k for k in self.folders if k.startswith(prefix) and k != prefix]:
            del self.folders[key]
            self.ignores.pop(key, None)

    def clear(self) -> None:
        self.folders.clear()
        self.ignores.clear()


@dataclass(frozen=True, slots=True)
class Kept:
    """One remembered listing as the persistent cache keeps it: its folder prefix, the listing,
    and the stamps its ignore files had when it was listed (None: unreadable)."""

    prefix: str
    listing: Listing
    ignores: tuple[tuple[str, FolderStamp | None], ...]


def kept(root: Path, include: tuple[str, ...]) -> list[Kept]:
    """The trusted listings remembered for a root, by prefix: what a restart may start from."""
    listings = listings_for(root, include)
    with listings.lock:
        return [
            Kept(prefix, listing, listings.ignores.get(prefix, ()))
            for prefix, listing in sorted(listings.folders.items())
            if listing.trusted
        ]


def seed(root: Path, include: tuple[str, ...], restored: list[Kept]) -> None:
    """Remember `restored` listings for a root not walked yet in this process (a restart): its
    first walk lists only the folders whose stamp moved since, as any later walk would, after
    checking the ignore files against the stamps they had (`check_ignores`)."""
    listings = listings_for(root, include)
    with listings.lock:
        if listings.folders or listings.walked is not None:
            return  # walked here already: what this process saw is newer
        for item in restored:
            listings.folders[item.prefix] = item.listing
            if item.ignores:
                listings.ignores[item.prefix] = item.ignores


def _stamp(path: str) -> FolderStamp | None:
    try:
        return stamp_of(Path(path).stat())
    except OSError:
        return None


_KEEP = 64
_store: OrderedDict[tuple[Path, tuple[str, ...]], Listings] = OrderedDict()
_store_lock = threading.Lock()


def listings_for(root: Path, include: tuple[str, ...]) -> Listings:
    """The remembered listings of a root (the few most recently walked roots are kept). Whoever
    walks the root next may use them: they are checked against the disk before each use."""
    key = (root, include)
    with _store_lock:
        found = _store.get(key)
        if found is None:
            found = _store[key] = Listings()
            while len(_store) > _KEEP:
                _store.popitem(last=False)
        _store.move_to_end(key)
        return found
