"""Walking a root: the candidate files, and everything skipped with its reason (a `Refusal`: the
reason and its `SkipKind`).

The walk only stats; reading is `corpus.read`. Symlinks are followed only while their target
stays inside the root (a linked folder is walked once, so loops end), and a link is refused as its
target would be (`notes.md -> .env` is a secret). Deep trees use an explicit stack, never
recursion. Folder listings are remembered between walks (`corpus.listing`), and a
root limited to some patterns (the conventional root) drops other files by name, unstat'd.
"""

from __future__ import annotations

import fnmatch
import os
import re
import stat
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from corpus.globs import Globs
from corpus.ignore import IGNORE_FILES, IgnoreRules, names_in
from corpus.listing import DIR, FILE, LINK, FolderStamp, Listing, Listings, listings_for, settled, stamp_of
from corpus.names import printable
from corpus.read import Refusal, SkipKind, Skipped, Stamp, kind_of, resolve_inside
from corpus.roots import Root
from corpus.rules import is_editor_temp, is_ignored_dir, is_secret

if TYPE_CHECKING:
    pass

SECRET = "looks like a secret (denylist)"
EDITOR_TEMP = "editor temporary file"
BACKSLASH = "name holds a backslash, a folder separator on Windows: rename it to serve it"


@dataclass(frozen=True, slots=True)
class FileRef:
    root: Root
    rel: str
    """Relative POSIX path inside the root, as named in the root (not the link target)."""
    where: str
    """Where the file is on disk (`path`, as a string: a sweep of a large root finds tens of
    thousands of files it will not read, and making a `Path` of each was a third of the walk)."""
    size: int
    mtime_ns: int
    ctime_ns: int
    identity: tuple[int, int] | None = None
    """(st_dev, st_ino) when the walk reached the file without following a link (lets the reader
    skip resolving the path again); None for links and where the OS does not say."""

    @property
    def path(self) -> Path:
        return Path(self.where)

    @property
    def stamp(self) -> Stamp:
        return (self.size, self.mtime_ns, self.ctime_ns)


@dataclass(frozen=True, slots=True)
class SkippedFile:
    root: Root
    rel: str
    refusal: Refusal

    @property
    def reason(self) -> str:
        """Why it is skipped, as a person reads it (status, logs, doctor)."""
        return self.refusal.reason

    @property
    def kind(self) -> SkipKind:
        return self.refusal.kind


class Known(Protocol):
    """The files as the index last read them: what a walk compares a file's stamp with."""

    def stamp_of(self, rel: str) -> Stamp | None:
        """The stamp the file at `rel` was read with; None for a file the index does not have."""


@dataclass(frozen=True, slots=True)
class Walk:
    files: list[FileRef]
    skipped: list[SkippedFile]
    same: set[str] = field(default_factory=set)
    """Files found as `known` had them, by `rel` (no `FileRef` is made for them)."""


def check_name(rel: str) -> Refusal | None:
    """Why a relative path is refused by name alone (ignored folder, secret), or None."""
    parts = rel.split("/")
    if any(is_ignored_dir(p) for p in parts[:-1]):
        return Refusal(SkipKind.IGNORED, "inside an ignored folder")
    if is_secret(rel):
        return Refusal(SkipKind.SECRET, SECRET)
    if is_editor_temp(parts[-1]):
        return Refusal(SkipKind.EDITOR_TEMP, EDITOR_TEMP)
    if parts[-1] in IGNORE_FILES:
        return Refusal(SkipKind.NAME, "an ignore file")
    return None


@lru_cache(maxsize=16)
def _include_spec(patterns: tuple[str, ...]) -> Globs:
    """The conventional files' own patterns, matched as gitignore reads them (`corpus.globs`): no
    pathspec unless the root has ignore files."""
    return Globs.of(patterns)


def included(root: Root, rel: str) -> bool:
    """Whether `rel` can belong to `root` at all (a conventional root takes only its patterns)."""
    return not root.include or _include_spec(root.include).match(rel)


def refused(root: Root, rel: str, rules: IgnoreRules | None = None) -> Refusal | None:
    """Why `rel` is not served from `root` by its name, the root's rules, or (when a symlink is
    on its way) the name and rules of where it really leads; or None."""
    by_name = check_name(rel)
    if by_name:
        return by_name
    if not included(root, rel):
        return Refusal(SkipKind.NAME, "not one of the conventional agent files")
    rules = rules or IgnoreRules(root.path)
    ignored = rules.ignored(rel)
    if ignored:
        return Refusal(SkipKind.IGNORED, ignored)
    leads = _leads_to_refused(root, rel, rules)
    return Refusal(SkipKind.LINK, leads) if leads else None


def target_refused(root: Root, target: str, is_dir: bool, rules: IgnoreRules) -> str | None:
    """Why a symlink whose real target is `target` (relative to the root, "" for the root itself)
    is refused: every part of the target's path is checked by name and by the ignore rules, as if
    the target were named directly (`symlink to a denylisted file .env`); or None. A refusal of
    kind `SkipKind.LINK`. The include patterns of a conventional root are not applied: an
    `AGENTS.md` may link to any served file."""
    if not target:
        return None
    parts = target.split("/")
    shown = target + "/" if is_dir else target
    if any(is_ignored_dir(p) for p in parts[:-1]):
        return f"symlink into an ignored folder ({shown})"
    if is_dir and is_ignored_dir(parts[-1]):
        return f"symlink to an ignored folder {shown}"
    if not is_dir and is_secret(target):
        return f"symlink to a denylisted file {shown}"
    if not is_dir and is_editor_temp(parts[-1]):
        return f"symlink to an editor temporary file {shown}"
    if not is_dir and parts[-1] in IGNORE_FILES:
        return f"symlink to an ignore file {shown}"
    reason = rules.ignored(target, is_dir)
    return f"symlink to {shown}, {reason}" if reason else None


def linked_folder(target: str) -> str:
    """Why a link to a folder inside the root is skipped (kind `SkipKind.LINK`): its files are
    served under their real path only, so no file has two names and no link can loop (a link to a
    file is served)."""
    return f"link to a folder inside the root ({target}/): its files are served under their real path"


def _leads_to_refused(root: Root, rel: str, rules: IgnoreRules) -> str | None:
    """`target_refused` for the real path of `rel`, when a symlink on its way moves it elsewhere
    inside the root, or `linked_folder` when that symlink is a folder's (a target outside the
    root, or none, is the reader's to refuse)."""
    path = os.path.join(root.path, *rel.split("/"))  # noqa: PTH118 - compared as strings
    real = os.path.realpath(path)
    if real == path:
        return None
    target = _relative(str(root.path), real)
    if target is None:
        return None
    reason = target_refused(root, target, Path(real).is_dir(), rules)
    folder = os.path.dirname(path)  # noqa: PTH120 - compared as strings
    real_folder = os.path.realpath(folder)
    if reason is None and real_folder != folder and (inside := _relative(str(root.path), real_folder)) is not None:
        reason = linked_folder(inside)
    return reason


def _relative(root: str, real: str) -> str | None:
    """`real` (a real path) relative to `root` in POSIX form, "" for the root, None if outside."""
    if real == root:
        return ""
    try:
        inside = os.path.relpath(real, root)
    except ValueError:  # another drive
        return None
    if inside == os.pardir or inside.startswith(os.pardir + os.sep):
        return None
    return inside.replace(os.sep, "/")


def walk(root: Root, under: str = "", rules: IgnoreRules | None = None, known: Known | None = None) -> Walk:
    """Every candidate file of `root` (or of its folder `under`, a relative path), by its rules:
    ignored folders, secrets, editor scratch files, `.agentsignore` and `.gitignore`, and (for the
    conventional root) only the conventional files. A regular file `known` has with the same
    stamp is only named in `same`: a check of a large root against its index then makes no
    record per file (tldr: 38k made and dropped, 0.1 s and megabytes left in the heap).

    A walk of the whole root lists again only the folders that changed since the last one
    (`corpus.listing`); it still stats every candidate file and every folder."""
    rules = rules or IgnoreRules(root.path)
    if under:
        return _Walker(root, rules, None, known).run(under)
    listings = listings_for(root.path, root.include)
    with listings.lock:
        listings.check_ignores()
        walker = _Walker(root, rules, listings, known)
        found = walker.run("")
        listings.keep(walker.visited)
        return found


def walk_folders(root: Root, rules: IgnoreRules) -> Iterator[tuple[str, Walk]]:
    """The walk of a whole root one folder at a time, for a sweep spread over many calls: each
    folder's prefix (`""`, `"src/"`) with the files and skipped entries directly in it (a folder
    that cannot be listed yields its own skipped entry). Listings are not remembered."""
    walker = _Walker(root, rules, None)
    walker.seen.add(str(root.path))
    walker.stack.append((str(root.path), ""))
    while walker.stack:
        folder, prefix = walker.stack.pop()
        walker._folder(folder, prefix)
        yield prefix, Walk(walker.files, walker.skipped)
        walker.files, walker.skipped = [], []


def walked(root: Root) -> tuple[str, ...] | None:
    """The folders the last whole walk of `root` listed or checked, each once (a linked folder
    by its real path); None if it was not walked (or is no longer remembered)."""
    return listings_for(root.path, root.include).walked


_BY_FOLDER = os.stat in os.supports_dir_fd and os.stat in os.supports_follow_symlinks
"""Whether a file can be stat'd by its name in an open folder (not on Windows)."""


def _open_folder(folder: str) -> int | None:
    """`folder` held open for stat'ing its files by name, or None (Windows; or a folder that can
    be searched but not read, its files then stat'd by their whole paths). A whole path is
    joined and resolved by the system again for each file: tldr's 38k in 95-140 ms, by name 60."""
    if not _BY_FOLDER:
        return None
    try:
        return os.open(folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError:
        return None


class _Walker:
    def __init__(self, root: Root, rules: IgnoreRules, listings: Listings | None, known: Known | None = None) -> None:
        self.root = root
        self.known = known
        self.same: set[str] = set()
        self.root_str = str(root.path)
        self.rules = rules
        self.listings = listings
        self.names = _name_filter(root.include) if root.include else None
        self.files: list[FileRef] = []
        self.skipped: list[SkippedFile] = []
        self.stack: list[tuple[str, str]] = []
        self.seen: set[str] = set()
        self.visited: set[str] = set()
        """Prefixes of the folders listed or checked."""

    def run(self, under: str) -> Walk:
        start = str(Path(self.root.path, *under.split("/")))
        if under:  # a folder reached through a link is not walked (see `linked_folder`)
            real = os.path.realpath(start)
            target = _relative(self.root_str, real)
            if target is None:
                leaves = Refusal(SkipKind.LINK, "symlink target leaves the root")
                return Walk([], [SkippedFile(self.root, under + "/", leaves)])
            if target != under:
                refused = target_refused(self.root, target, True, self.rules) or linked_folder(target)
                return Walk([], [SkippedFile(self.root, under + "/", Refusal(SkipKind.LINK, refused))])
        self.seen.add(start)
        self.stack.append((start, f"{under}/" if under else ""))
        while self.stack:
            self._folder(*self.stack.pop())
        self.files.sort(key=lambda f: f.rel)
        self.skipped.sort(key=lambda s: s.rel)
        return Walk(self.files, self.skipped, self.same)

    def _folder(self, folder: str, prefix: str) -> None:
        try:
            stamp = stamp_of(os.stat(folder))  # noqa: PTH116 - str paths: the walk's hot loop
            listing = self.listings.valid(prefix, stamp) if self.listings else None
            if listing is None:
                listing = self._list(folder, prefix, stamp)
                if self.listings:
                    self.listings.put(prefix, listing)
        except OSError as exc:
            unreadable = Refusal(SkipKind.UNREADABLE, f"unreadable folder ({exc.strerror})")
            self.skipped.append(SkippedFile(self.root, prefix.rstrip("/") or ".", unreadable))
            if self.listings:
                self.listings.forget(prefix)
            return
        self.visited.add(prefix)
        self.skipped.extend(SkippedFile(self.root, rel, refusal) for rel, refusal in listing.refused)
        fd = _open_folder(folder) if any(kind == FILE for _, kind in listing.entries) else None
        try:
            for name, kind in listing.entries:
                rel = prefix + name
                if kind == DIR:
                    path = os.path.join(folder, name)  # noqa: PTH118 - hot loop
                    if path not in self.seen:
                        self.seen.add(path)
                        self.stack.append((path, rel + "/"))
                    continue
                try:
                    if kind == FILE:
                        self._file(folder, fd, name, rel, prefix)
                    else:
                        self._link(name, os.path.join(folder, name), rel)  # noqa: PTH118
                except Skipped as exc:
                    self.skipped.append(SkippedFile(self.root, rel, exc.refusal))
                except OSError as exc:
                    unreadable = Refusal(SkipKind.UNREADABLE, f"unreadable ({exc.strerror})")
                    self.skipped.append(SkippedFile(self.root, rel, unreadable))
        finally:
            if fd is not None:
                os.close(fd)

    def _list(self, folder: str, prefix: str, stamp: FolderStamp) -> Listing:
        """Sort a folder's entries: what to act on every walk, and what is refused for good (by
        name, or by rules that hold as long as the ignore files do). Files that cannot be part
        of the root are dropped here, without a stat."""
        looked = time.time_ns()
        with os.scandir(folder) as it:
            found = sorted(it, key=lambda e: e.name)
        here = prefix.rstrip("/")
        ignore_files = frozenset(names_in(here)) & {e.name for e in found}
        self.rules.load(here, ignore_files)
        real = _relative(self.root_str, folder)  # the folders walked are real paths
        # Reached through a linked folder: each entry is refused as its real path would be too.
        really = None if real is None or real == here else (real + "/" if real else "")
        names: list[str] = []
        kinds: list[str] = []
        refused: list[tuple[str, Refusal]] = []
        for entry in found:
            name = entry.name
            shown = printable(name)
            rel = prefix + shown
            if shown != name:
                refused.append((rel, Refusal(SkipKind.NAME, "name is not valid UTF-8")))
            elif "\\" in name:
                refused.append((rel, Refusal(SkipKind.NAME, BACKSLASH)))
            elif name in IGNORE_FILES:
                continue
            else:
                kind, refusal = self._sort(entry, rel)
                if kind and not refusal and really is not None:
                    linked = target_refused(self.root, really + name, kind == DIR, self.rules)
                    refusal = Refusal(SkipKind.LINK, linked) if linked else None
                if refusal:
                    refused.append((rel + "/" if kind == DIR else rel, refusal))
                elif kind:
                    # Interned: the same names recur from folder to folder (tldr's 38k files have
                    # 15k names), and a listing lives as long as its folder does not change.
                    names.append(sys.intern(name))
                    kinds.append(kind)
        return Listing(folder, stamp, settled(stamp, looked), tuple(names), tuple(kinds), tuple(refused), ignore_files)

    def _sort(self, entry: os.DirEntry[str], rel: str) -> tuple[str | None, Refusal | None]:
        """(kind, None) to act on the entry every walk, (kind, refusal) when it is refused, and
        (None, None) when it is no part of the root at all."""
        try:
            if entry.is_symlink():
                return LINK, None
            if entry.is_dir(follow_symlinks=False):
                ignored = "ignored folder" if is_ignored_dir(entry.name) else self.rules.ignored(rel, is_dir=True)
                return DIR, (Refusal(SkipKind.IGNORED, ignored) if ignored else None)
        except OSError:
            return LINK, None  # could not tell what it is: find out on every walk
        if self.names is not None and not self.names.match(entry.name):
            return None, None
        if not included(self.root, rel):
            return None, None
        ignored = self.rules.ignored(rel)
        if ignored is not None:
            return FILE, Refusal(SkipKind.IGNORED, ignored)
        if is_secret(rel):
            return FILE, Refusal(SkipKind.SECRET, SECRET)
        if is_editor_temp(entry.name):
            return FILE, Refusal(SkipKind.EDITOR_TEMP, EDITOR_TEMP)
        return FILE, None

    def _file(self, folder: str, fd: int | None, name: str, rel: str, prefix: str) -> None:
        """Stat one file of a listed folder (by name in the folder `fd` holds open, where the
        platform can); a file with the stamp `known` has is only named in `same`."""
        try:
            if fd is None:
                st = os.stat(os.path.join(folder, name), follow_symlinks=False)  # noqa: PTH116, PTH118
            else:
                st = os.stat(name, dir_fd=fd, follow_symlinks=False)
        except FileNotFoundError:  # gone since the folder was listed: list it again next time
            if self.listings:
                self.listings.distrust(prefix)
            return
        refused = kind_of(st.st_mode)
        if refused:
            raise Skipped(SkipKind.NOT_REGULAR, refused)
        if self.known is not None and self.known.stamp_of(rel) == (st.st_size, st.st_mtime_ns, st.st_ctime_ns):
            self.same.add(rel)
            return
        identity = (st.st_dev, st.st_ino) if st.st_ino else None
        path = os.path.join(folder, name)  # noqa: PTH118 - only for a file to read
        self.files.append(FileRef(self.root, rel, path, st.st_size, st.st_mtime_ns, st.st_ctime_ns, identity))

    def _link(self, name: str, path: str, rel: str) -> None:
        """A symlink (or an entry that could not be told): resolved on every walk, since its
        target can change without its folder changing."""
        real = resolve_inside(self.root.path, Path(path))
        st = real.stat()
        target = _relative(self.root_str, str(real)) or ""
        if stat.S_ISDIR(st.st_mode):
            ignored = "ignored folder" if is_ignored_dir(name) else self.rules.ignored(rel, is_dir=True)
            if ignored:
                refusal = Refusal(SkipKind.IGNORED, ignored)
            else:
                linked = target_refused(self.root, target, True, self.rules) or linked_folder(target)
                refusal = Refusal(SkipKind.LINK, linked)
            self.skipped.append(SkippedFile(self.root, rel + "/", refusal))
            return
        if not included(self.root, rel):
            return  # not a conventional agent file: not part of this root at all
        ignored = self.rules.ignored(rel)
        if ignored:
            raise Skipped(SkipKind.IGNORED, ignored)
        if is_secret(rel):
            raise Skipped(SkipKind.SECRET, SECRET)
        if is_editor_temp(name):
            raise Skipped(SkipKind.EDITOR_TEMP, EDITOR_TEMP)
        leads = target_refused(self.root, target, False, self.rules)
        if leads:
            raise Skipped(SkipKind.LINK, leads)
        refused = kind_of(st.st_mode)
        if refused:
            raise Skipped(SkipKind.NOT_REGULAR, refused)
        self.files.append(FileRef(self.root, rel, path, st.st_size, st.st_mtime_ns, st.st_ctime_ns))


@lru_cache(maxsize=16)
def _name_filter(patterns: tuple[str, ...]) -> re.Pattern[str] | None:
    """A test on a file's name alone that every file matching `patterns` passes (looser than the
    patterns, never stricter), so most files of a project are dropped without a stat; None when
    the patterns allow no such test (a pattern for a whole folder). A negation only leaves files
    out, so it is not needed for the test."""
    names: list[str] = []
    for pattern in patterns:
        if pattern.startswith("!"):
            continue
        last = pattern.rsplit("/", 1)[-1]
        if "\\" in pattern or not last or "**" in last:
            return None
        names.append(fnmatch.translate(last))
    return re.compile("|".join(names), re.IGNORECASE)
