"""Walking a root: the candidate files, and everything skipped with its reason.

The walk only stats; reading is `corpus.read`. Symlinks are followed only while their target
stays inside the root (a linked folder is walked once, so loops end). Deep trees use an explicit
stack, never recursion.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from pathlib import Path

from corpus.read import Skipped, kind_of, resolve_inside
from corpus.roots import Root
from corpus.rules import is_editor_temp, is_ignored_dir, is_secret

SECRET = "looks like a secret (denylist)"
EDITOR_TEMP = "editor temporary file"


@dataclass(frozen=True, slots=True)
class FileRef:
    root: Root
    rel: str
    """Relative POSIX path inside the root, as named in the root (not the link target)."""
    path: Path
    size: int
    mtime_ns: int
    ctime_ns: int
    identity: tuple[int, int] | None = None
    """(st_dev, st_ino) when the walk reached the file without following a link (lets the reader
    skip resolving the path again); None for links and where the OS does not say."""


@dataclass(frozen=True, slots=True)
class SkippedFile:
    root: Root
    rel: str
    reason: str


@dataclass(frozen=True, slots=True)
class Walk:
    files: list[FileRef]
    skipped: list[SkippedFile]


def check_name(rel: str) -> str | None:
    """Why a relative path is refused by name alone (ignored folder, secret), or None."""
    parts = rel.split("/")
    if any(is_ignored_dir(p) for p in parts[:-1]):
        return "inside an ignored folder"
    if is_secret(parts[-1]):
        return SECRET
    if is_editor_temp(parts[-1]):
        return EDITOR_TEMP
    return None


def walk(root: Root, under: str = "") -> Walk:
    """Every candidate file of `root` (or of its folder `under`, a relative path)."""
    files: list[FileRef] = []
    skipped: list[SkippedFile] = []
    start = Path(root.path, *under.split("/")) if under else root.path
    seen_dirs: set[Path] = {start}
    stack: list[tuple[Path, str]] = [(start, f"{under}/" if under else "")]
    while stack:
        folder, prefix = stack.pop()
        try:
            with os.scandir(folder) as it:
                entries = sorted(it, key=lambda e: e.name)
        except OSError as exc:
            skipped.append(
                SkippedFile(root, prefix.rstrip("/") or ".", f"unreadable folder ({exc.strerror})")
            )
            continue
        for entry in entries:
            rel = prefix + _printable(entry.name)
            if _printable(entry.name) != entry.name:
                skipped.append(SkippedFile(root, rel, "name is not valid UTF-8"))
                continue
            try:
                _visit(root, entry, rel, files, skipped, stack, seen_dirs)
            except Skipped as exc:
                skipped.append(SkippedFile(root, rel, exc.reason))
            except OSError as exc:
                skipped.append(SkippedFile(root, rel, f"unreadable ({exc.strerror})"))
    files.sort(key=lambda f: f.rel)
    skipped.sort(key=lambda s: s.rel)
    return Walk(files, skipped)


def _visit(
    root: Root,
    entry: os.DirEntry[str],
    rel: str,
    files: list[FileRef],
    skipped: list[SkippedFile],
    stack: list[tuple[Path, str]],
    seen_dirs: set[Path],
) -> None:
    path = Path(entry.path)
    if entry.is_symlink():
        real = resolve_inside(root.path, path)
        st = real.stat()
    else:
        real = path
        st = entry.stat(follow_symlinks=False)
    if stat.S_ISDIR(st.st_mode):
        if is_ignored_dir(entry.name):
            skipped.append(SkippedFile(root, rel + "/", "ignored folder"))
        elif real not in seen_dirs:
            seen_dirs.add(real)
            stack.append((real if entry.is_symlink() else path, rel + "/"))
        return
    if is_secret(entry.name):
        raise Skipped(SECRET)
    if is_editor_temp(entry.name):
        raise Skipped(EDITOR_TEMP)
    refused = kind_of(st.st_mode)
    if refused:
        raise Skipped(refused)
    identity = (st.st_dev, st.st_ino) if st.st_ino and not entry.is_symlink() else None
    files.append(FileRef(root, rel, path, st.st_size, st.st_mtime_ns, st.st_ctime_ns, identity))


def _printable(name: str) -> str:
    """The name itself if it is valid UTF-8; otherwise a printable stand-in for messages."""
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return os.fsencode(name).decode("utf-8", "backslashreplace")
    return name
