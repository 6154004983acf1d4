"""The persistent index: each root's files and postings, kept in the user's cache directory.

A restart then reads nothing but this file: every file's size, mtime, ctime and content digest
come back with its units and postings, and the start-up sweep re-reads only the files whose stat
moved (and re-indexes only those whose digest changed), listing again only the folders whose stat
moved (the last walk's listings come back too). The cache is a hint, never the truth.

- Where: `platformdirs.user_cache_dir("agents-context")`, or `$AGENTS_CONTEXT_CACHE_DIR`, or
  `--cache-dir`; never inside a corpus root (the server does not write to the user's project).
- One entry per root, named after the root and a hash of everything that decides its content:
  `<slug>-<hash>.index`, the slug made of the root's label and the folder above it
  (`docs-tldr-3f2a9c1e5b7d0a64.index`), the hash of the root's real path and kind, its include
  patterns and pins, the file size limit, the tokenizer and fields, the package and this format's
  version. Another configuration simply has another entry. Beside it, `<slug>-<hash>.json` says
  which root it is (its real path, label and kind) for `agents-context cache show`, and
  `<slug>-<hash>.lock` is its lock file.
- Format: one `live.arrayfile` of numpy arrays (integers only, nothing in it can run code; a
  CRC catches torn or flipped bytes), laid out by `live.codec`. Anything unexpected while loading
  (damaged, truncated, another version, arrays that disagree) discards the entry: the root is
  indexed from the files as if there were no cache.
- Last use: an entry's mtime, set when it is written and touched when it is read.
- Pruning (`IndexCache.prune`, at start-up and after every write): entries unused for 30 days
  are deleted, then the least recently used ones until the entries add up to no more than the
  cap (`--cache-max-mb`, 1024 MB by default; 0: no cap). Never an entry this process uses, nor
  one whose lock another server holds (it is writing it); nothing but this module's own files
  (their names, and their first bytes, say so), and nothing outside the cache folder.
- Files are readable by the user only (they hold corpus text): the folder is 0700, entries are
  written 0600 through a temporary file and an atomic rename, under a lock file so two servers
  indexing the same tree never write the same entry at once (the second one skips its write).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import re
import threading
import time
import unicodedata
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from importlib.metadata import version
from pathlib import Path
from typing import Any

import numpy.typing as npt
import platformdirs

from corpus.names import printable
from corpus.roots import Root
from live import arrayfile, codec
from live.codec import Saved
from writes.atomic import TEMP, replacing
from writes.locks import LockTimeout, locked

log = logging.getLogger("agents_context.cache")

ENV = "AGENTS_CONTEXT_CACHE_DIR"
SUFFIX = ".index"
"""An entry: one root's index."""
ABOUT = ".json"
"""Beside an entry: which root it is, for people (`cache show`); never read to restore."""
LOCK = ".lock"
STALE_AFTER_S = 30 * 24 * 3600
"""An entry neither read nor written for this long is deleted."""
MB = 1_000_000
MAX_MB = 1024
"""The default cap on the entries' total size, in MB (`--cache-max-mb`; 0: no cap)."""
TEMP_STALE_S = 3600.0
"""A temporary file left this long is a write that died (a write takes seconds): deleted."""
SLUG_PART_CHARS = 24
HASH_CHARS = 16

_MARK = b'{"agents-context": 1, '
"""How an entry's `.json` begins: it is ours."""
_KEY = r"(?:[a-z0-9]+(?:-[a-z0-9]+)*-[0-9a-f]{16}|[0-9a-f]{32})"
"""`<slug>-<hash>`, or the hash alone that earlier versions named entries by."""
_NAME = re.compile(
    rf"(?P<key>{_KEY})(?P<part>\.index|\.json|\.lock|\.?[a-z0-9_]{{8}}\.tmp)"  # an entry, or an older write's file
    rf"|\.(?P<written>{_KEY})\.(?:index|json)\.[0-9a-f]{{8}}\.tmp"  # a file being written (`writes.atomic`)
)


def default_dir(env: Mapping[str, str] | None = None) -> Path:
    env = os.environ if env is None else env
    return Path(env[ENV]) if env.get(ENV) else Path(platformdirs.user_cache_dir("agents-context", appauthor=False))


def slug(root: Root) -> str:
    """A root's part of its entry's name: its label and the name of the folder above it, in
    lowercase ASCII letters, digits and `-` (`docs` in `.../tldr/docs`: `docs-tldr`; the
    `.AGENTS` of `myproj`: `agents-myproj`), at most 49 characters; `root` when nothing is left."""
    label = _slug(root.label)
    above = root.path.parent
    if _slug(above.name) == label and above.parent != above:  # packages/api/.AGENTS, labelled api
        above = above.parent
    return "-".join(part for part in (label, _slug(above.name)) if part) or "root"


def _slug(name: str) -> str:
    ascii_name = unicodedata.normalize("NFKD", name).encode("ascii", "ignore").decode().lower()
    return re.sub(r"[^a-z0-9]+", "-", ascii_name).strip("-")[:SLUG_PART_CHARS].strip("-")


@dataclass(frozen=True, slots=True)
class Entry:
    """One entry of the cache folder."""

    key: str
    path: Path
    bytes: int
    """The entry and its `.json`."""
    last_used: float
    """When a server last read or wrote it (the entry's mtime), in seconds since the epoch."""
    root: str | None = None
    """The real path of the root it indexes (printable), when its `.json` says."""
    label: str | None = None
    kind: str | None = None

    @property
    def name(self) -> str:
        return self.path.name


@dataclass(frozen=True, slots=True)
class Listing:
    """What the cache folder holds of ours: its entries, most recently used first, and the other
    files (locks, temporary files, a `.json` whose entry is gone)."""

    entries: list[Entry] = field(default_factory=list)
    others: list[Path] = field(default_factory=list)


class IndexCache:
    def __init__(self, directory: Path, fingerprint: str, cap_bytes: int = MAX_MB * MB) -> None:
        self.directory = directory
        self.fingerprint = fingerprint
        self.cap_bytes = cap_bytes
        """Prune the least recently used entries above this total (0: no cap)."""
        self._using: set[str] = set()
        """The entries this process read or wrote: never pruned by it."""
        self._guard = threading.Lock()
        self._warned = False

    def key(self, root: Root, pins: Sequence[str], max_bytes: int) -> str:
        identity = {
            "format": codec.FORMAT,
            "version": version("agents-context"),
            "root": str(root.path),
            "kind": root.kind.value,
            "label": root.label,
            "scoped": root.scoped,
            "include": list(root.include),
            "pins": sorted(pins),
            "max_bytes": max_bytes,
            "ranking": self.fingerprint,
        }
        digest = hashlib.sha256(json.dumps(identity, sort_keys=True).encode()).hexdigest()
        return f"{slug(root)}-{digest[:HASH_CHARS]}"

    def path(self, key: str) -> Path:
        return self.directory / f"{key}{SUFFIX}"

    def _about(self, key: str) -> Path:
        return self.directory / f"{key}{ABOUT}"

    def _lock(self, key: str) -> contextlib.AbstractContextManager[None]:
        return locked(self.directory / f"{key}{LOCK}", timeout=0)

    def _foreign(self) -> bool:
        """Whether the folder belongs to another user (POSIX): its entries are then neither read
        nor written, since that user could change what this server serves or read what it
        indexed. Said once in the log."""
        try:
            owner = self.directory.stat().st_uid
        except OSError:
            return False  # not there yet: save makes it, this user's
        if not hasattr(os, "geteuid") or owner == os.geteuid():
            return False
        if not self._warned:
            self._warned = True
            log.warning("not using the cache in %s: the folder belongs to another user", self.directory)
        return True

    def _use(self, key: str) -> None:
        with self._guard:
            self._using.add(key)

    # --- reading --------------------------------------------------------------------------

    def load(self, root: Root, key: str) -> Saved | None:
        """The saved root, or None (no entry, or one that cannot be trusted: it is deleted).
        Its last use is now."""
        self._use(key)
        if self._foreign():
            return None
        path = self.path(key)
        try:
            restored = codec.restore(root, key, arrayfile.read(path))
        except FileNotFoundError:
            return None
        except Exception as exc:  # corrupt, truncated, foreign: never trusted
            log.warning(
                "discarding the cache for %s (%s: %s); indexing from the files", root.label, type(exc).__name__, exc
            )
            for gone in (path, self._about(key)):
                with contextlib.suppress(OSError):
                    gone.unlink()
            return None
        with contextlib.suppress(OSError):
            os.utime(path)
        return restored

    # --- writing --------------------------------------------------------------------------

    def save(self, root: Root, key: str, arrays: Mapping[str, npt.NDArray[Any]]) -> bool:
        """Write the entry (laid out by `codec.arrays`) atomically, then prune; False if another
        process holds the entry's lock."""
        self._use(key)
        self.directory.mkdir(mode=0o700, parents=True, exist_ok=True)
        if self._foreign():
            return False
        with contextlib.suppress(OSError):
            self.directory.chmod(0o700)
        try:
            with self._lock(key):
                with replacing(self.path(key), mode=0o600) as out:
                    arrayfile.write(out, arrays)
                about = {"root": printable(str(root.path)), "label": printable(root.label), "kind": root.kind.value}
                with contextlib.suppress(OSError), replacing(self._about(key), mode=0o600) as out:  # for people only
                    out.write(json.dumps({"agents-context": 1, "format": codec.FORMAT, **about}).encode())
        except LockTimeout:
            log.info("another server is writing the cache for %s; leaving it to that one", root.label)
            return False
        self.prune()
        return True

    # --- what the folder holds, and pruning it ------------------------------------------------

    def listing(self, describe: bool = False) -> Listing:
        """This cache's entries, most recently used first (with `describe`, each with the root its
        `.json` names), and its other files. Only this module's names; never a link."""
        parts: dict[str, dict[str, os.stat_result]] = {}
        others: list[Path] = []
        try:
            with os.scandir(self.directory) as scan:
                for item in scan:
                    matched = _parts(item.name)
                    if matched is None:
                        continue
                    with contextlib.suppress(OSError):
                        if not item.is_file(follow_symlinks=False):
                            continue  # a link or a folder: not ours
                        key, part = matched
                        if part.endswith(TEMP) or part == LOCK:
                            others.append(Path(item.path))
                        else:
                            parts.setdefault(key, {})[part] = item.stat(follow_symlinks=False)
        except (FileNotFoundError, NotADirectoryError):
            return Listing()
        entries = []
        for key, found in parts.items():
            index, about = found.get(SUFFIX), found.get(ABOUT)
            if index is None:
                others.append(self._about(key))
                continue
            with contextlib.suppress(OSError):
                if not _ours(self.path(key), arrayfile.MAGIC):
                    continue  # named like an entry, but not one: not ours to count or delete
            entry = Entry(key, self.path(key), index.st_size + (about.st_size if about else 0), index.st_mtime)
            entries.append(_described(entry, self._about(key)) if describe and about else entry)
        entries.sort(key=lambda e: (-e.last_used, e.name))
        return Listing(entries, sorted(others))

    def prune(self, now: float | None = None) -> list[Entry]:
        """Delete the entries unused for `STALE_AFTER_S`, then the least recently used ones until
        the rest add up to `cap_bytes` at most; and leftovers (a lock or `.json` without its entry,
        a temporary file of a write that died). Never an entry this process uses or another holds
        the lock of; nothing in a folder of another user's. The entries deleted."""
        now = time.time() if now is None else now
        if self._foreign():
            return []
        try:
            held = self.listing()
        except OSError as exc:
            log.warning("could not prune the cache in %s: %s", self.directory, exc)
            return []
        with self._guard:
            using = set(self._using)
        total = sum(e.bytes for e in held.entries)
        removed = []
        for entry in reversed(held.entries):  # least recently used first
            stale = now - entry.last_used > STALE_AFTER_S
            if not stale and not (self.cap_bytes and total > self.cap_bytes):
                break
            if entry.key not in using and self._remove(entry):
                removed.append(entry)
                total -= entry.bytes
        self._tidy(held, now)
        if removed:
            log.info(
                "cache: removed %d entries (%.1f MB): unused for 30 days%s",
                len(removed),
                sum(e.bytes for e in removed) / MB,
                f", or the least recently used above the cap of {self.cap_bytes / MB:.0f} MB" if self.cap_bytes else "",
            )
        return removed

    def clear(self) -> list[Entry]:
        """Delete every entry of this cache but those another server is writing, and the
        leftovers; the entries deleted."""
        held = self.listing(describe=True)
        removed = [entry for entry in held.entries if self._remove(entry)]
        self._tidy(held, time.time())
        return removed

    def _remove(self, entry: Entry) -> bool:
        """Delete one entry, its `.json` and its lock file, holding its lock; False (and nothing
        deleted) if another server holds it, if the entry was used since it was listed, or if the
        file is not one of ours."""
        try:
            with self._lock(entry.key):
                if entry.path.stat(follow_symlinks=False).st_mtime != entry.last_used:
                    return False  # read or written meanwhile: no longer the one to remove
                if not _ours(entry.path, arrayfile.MAGIC):
                    return False
                entry.path.unlink()
                for gone in (self._about(entry.key), self.directory / f"{entry.key}{LOCK}"):
                    with contextlib.suppress(OSError):  # a lock file in use cannot go on Windows
                        if gone.suffix == LOCK or _ours(gone, _MARK):
                            gone.unlink()
        except (LockTimeout, OSError):
            return False
        return True

    def _tidy(self, held: Listing, now: float) -> None:
        """Delete what no entry needs: lock files nobody holds, whose entry is gone; a `.json`
        whose entry is gone; temporary files older than `TEMP_STALE_S`."""
        entries = {e.key for e in held.entries}
        for path in held.others:
            matched = _parts(path.name)
            if matched is None or (matched[0] in entries and path.suffix != TEMP):
                continue
            with contextlib.suppress(LockTimeout, OSError):
                if path.suffix == LOCK:
                    if path.stat().st_size:
                        continue  # not a lock file of ours: ours are empty
                    with self._lock(matched[0]):
                        if not self.path(matched[0]).exists():
                            path.unlink()
                elif path.suffix == ABOUT:
                    if not self.path(matched[0]).exists() and _ours(path, _MARK):
                        path.unlink()
                elif now - path.stat(follow_symlinks=False).st_mtime > TEMP_STALE_S and _ours(path, None):
                    path.unlink()


def _parts(name: str) -> tuple[str, str] | None:
    """The key of the entry a file of the cache folder belongs to, and which of its files it is
    (`.index`, `.json`, `.lock`, or a `.tmp` being written); None for a name not ours."""
    matched = _NAME.fullmatch(name)
    if matched is None:
        return None
    return (matched["written"], TEMP) if matched["written"] else (matched["key"], matched["part"])


def _ours(path: Path, mark: bytes | None) -> bool:
    """Whether the file begins as this module writes it: with `mark`, or (None, a temporary file)
    with the beginning of an entry or a `.json`, or of either so far."""
    with path.open("rb") as f:
        start = f.read(32)
    if mark is not None:
        return start.startswith(mark)
    return any(m.startswith(start[: len(m)]) for m in (arrayfile.MAGIC, _MARK))


def _described(entry: Entry, about: Path) -> Entry:
    """The entry, with the root its `.json` names (as it was, if that cannot be read)."""
    try:
        with about.open("rb") as f:
            said = json.loads(f.read(64 * 1024))
        return replace(entry, root=str(said["root"]), label=str(said["label"]), kind=str(said["kind"]))
    except (OSError, ValueError, KeyError, TypeError):
        return entry
