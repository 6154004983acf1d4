"""Walking a root: the candidate files, and everything skipped with its reason.

The walk only stats; reading is `corpus.read`. Symlinks are followed only while their target
stays inside the root (a linked folder is walked once, so loops end). Deep trees use an explicit
stack, never recursion.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from pathspec import GitIgnoreSpec

from corpus.ignore import IGNORE_FILES, IgnoreRules
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
    if parts[-1] in IGNORE_FILES:
        return "an ignore file"
    return None


@lru_cache(maxsize=16)
def _include_spec(patterns: tuple[str, ...]) -> GitIgnoreSpec:
    return GitIgnoreSpec.from_lines(patterns)


def included(root: Root, rel: str) -> bool:
    """Whether `rel` can belong to `root` at all (a conventional root takes only its patterns)."""
    return not root.include or _include_spec(root.include).match_file(rel)


def refused(root: Root, rel: str, rules: IgnoreRules | None = None) -> str | None:
    """Why `rel` is not served from `root` by its name or the root's rules, or None."""
    reason = check_name(rel)
    if reason:
        return reason
    if not included(root, rel):
        return "not one of the conventional agent files"
    return (rules or IgnoreRules(root.path)).ignored(rel)


def walk(root: Root, under: str = "", rules: IgnoreRules | None = None) -> Walk:
    """Every candidate file of `root` (or of its folder `under`, a relative path), by its rules:
    ignored folders, secrets, editor scratch files, `.agentsignore` and `.gitignore`, and (for the
    conventional root) only the conventional files."""
    rules = rules or IgnoreRules(root.path)
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
            skipped.append(SkippedFile(root, prefix.rstrip("/") or ".", f"unreadable folder ({exc.strerror})"))
            continue
        rules.load(prefix.rstrip("/"))
        for entry in entries:
            rel = prefix + _printable(entry.name)
            if _printable(entry.name) != entry.name:
                skipped.append(SkippedFile(root, rel, "name is not valid UTF-8"))
                continue
            if entry.name in IGNORE_FILES:
                continue
            try:
                _visit(root, entry, rel, files, skipped, stack, seen_dirs, rules)
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
    rules: IgnoreRules,
) -> None:
    path = Path(entry.path)
    if entry.is_symlink():
        real = resolve_inside(root.path, path)
        st = real.stat()
    else:
        real = path
        st = entry.stat(follow_symlinks=False)
    if stat.S_ISDIR(st.st_mode):
        ignored = "ignored folder" if is_ignored_dir(entry.name) else rules.ignored(rel, is_dir=True)
        if ignored:
            skipped.append(SkippedFile(root, rel + "/", ignored))
        elif real not in seen_dirs:
            seen_dirs.add(real)
            stack.append((real if entry.is_symlink() else path, rel + "/"))
        return
    if not included(root, rel):
        return  # not a conventional agent file: not part of this root at all
    ignored = rules.ignored(rel)
    if ignored:
        raise Skipped(ignored)
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
