"""What changed in a root since the index last saw it, found by stat, as a `Batch` to read and apply.

- `swept`: every file of a root, stat'd (read-your-writes for `.AGENTS` before every answer, a
  full rescan after a watcher restart): what is new, gone, newly skipped, or whose stamp moved;
- `refreshed`: only the paths a watcher batch names (files or folders, present or gone);
- `Pass`: a sweep of a large docs root spread over many small steps (the patrol).

A file whose stamp did not move is never read again. Nothing here reads a file's content or
touches the index: reading is `live.settle`, and the update as a whole `live.sync`.
"""

from __future__ import annotations

import bisect
import time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from corpus.catalog import Change
from corpus.files import CorpusFile, FileTable
from corpus.ignore import IGNORE_FILES, IgnoreRules
from corpus.read import Refusal, SkipKind
from corpus.roots import Root, RootKind
from corpus.scan import FileRef, SkippedFile, Walk, check_name, included, refused, walk, walk_folders
from retrieval.engine.library import Prepared


def holds_text(root: Root) -> bool:
    """Whether the live index holds the text of a root's files: an `.AGENTS` root's, yes (small,
    and the instructions, the rules and the pinned files read them whole); a docs root's, no (a
    hit's lines are read from its file when an answer shows them: tldr's text is 24 MB as Python
    strings, a tenth of the server)."""
    return root.kind is not RootKind.DOCS


PATROL_READS = 50
"""Files one patrol step reads at most (a bulk change is read over several calls)."""


@dataclass(slots=True)
class Batch:
    """One update of one root: the files read, their prepared units, and what went or was skipped."""

    files: dict[str, CorpusFile] = field(default_factory=dict)
    """By relative path."""
    prepared: dict[str, Prepared] = field(default_factory=dict)
    """By display path: each read file's units with their terms (`Library.prepare`), for the
    files whose content changed."""
    removed: set[str] = field(default_factory=set)
    skipped: dict[str, SkippedFile] = field(default_factory=dict)
    unskipped: set[str] = field(default_factory=set)

    def __bool__(self) -> bool:
        return bool(self.files or self.removed or self.skipped or self.unskipped)


def swept(
    root: Root, known: FileTable, skipped: dict[str, SkippedFile], rules: IgnoreRules
) -> tuple[list[FileRef], Batch]:
    """A whole walk of `root`: the files to read (new, or whose stamp moved) and a batch holding
    what went and what is skipped now."""
    found = walk(root, rules=rules, known=known)
    batch = Batch(unskipped=set(skipped), skipped={s.rel: s for s in found.skipped})
    here = found.same
    here.update(ref.rel for ref in found.files)
    batch.removed = {rel for rel in known if rel not in here}
    return [ref for ref in found.files if differs(known.get(ref.rel), ref)], batch


def refreshed(
    root: Root,
    paths: Iterable[str | Path],
    known: Mapping[str, CorpusFile],
    skipped: dict[str, SkippedFile],
    rules: IgnoreRules,
) -> tuple[list[FileRef], Batch] | None:
    """Just these absolute paths of `root`: the files to read and a batch of what went or is
    skipped; None when only a whole sweep will do (the root itself changed, or an ignore file)."""
    batch = Batch()
    candidates: list[FileRef] = []
    listing: list[str] | None = None
    for rel in sorted({r for p in paths if (r := relative(root, p)) is not None}):
        if rel == "" or rel.rsplit("/", 1)[-1] in IGNORE_FILES:
            return None  # the root itself, or rules that may change many files
        path = fs_path(root, rel)
        if rel in known:
            under: list[str] = []  # a known file is not a folder
        else:  # maybe a folder that held known files: find them by prefix
            listing = listing if listing is not None else sorted({*known, *skipped})
            under = _with_prefix(listing, rel + "/")
        batch.unskipped.update([rel, *under])
        is_dir = path.is_dir() and not path.is_symlink()
        refusal = refused(root, rel, rules) if not is_dir else _folder_refused(rel, rules)
        if refusal:
            if included(root, rel) or is_dir:
                batch.skipped[rel] = SkippedFile(root, rel, refusal)
            batch.removed.update(k for k in (rel, *under) if k in known)
        elif is_dir:
            found = walk(root, under=rel, rules=rules)
            batch.skipped.update({s.rel: s for s in found.skipped})
            inside = {ref.rel for ref in found.files}
            batch.removed.update(k for k in under if k in known and k not in inside)
            candidates.extend(ref for ref in found.files if differs(known.get(ref.rel), ref))
        elif path.exists() or path.is_symlink():
            candidates.append(ref_of(root, rel, path))
        else:
            batch.removed.update(k for k in (rel, *under) if k in known)
    return candidates, batch


@dataclass(slots=True)
class Pass:
    """One pass of the patrol of a docs root over all its folders, spread over many steps."""

    started: float
    folders: Iterator[tuple[str, Walk]]
    rules: IgnoreRules
    by_folder: dict[str, list[str]]
    """The display paths of the root's known files by folder prefix when the pass began (to find
    what went)."""
    cut: int
    """Characters of a display path before its relative path."""
    stepped: float = 0.0
    visited: set[str] = field(default_factory=set)
    skipped: set[str] = field(default_factory=set)
    to_read: list[FileRef] = field(default_factory=list)
    walked: bool = False

    @classmethod
    def begin(cls, root: Root, known: FileTable) -> Pass:
        rules = IgnoreRules(root.path)
        by_folder: dict[str, list[str]] = {}
        cut = len(root.label) + 1
        for path in known.paths():  # the table's own strings: a pass keeps no copy of each name
            by_folder.setdefault(_parent(path[cut:]), []).append(path)
        return cls(time.time(), walk_folders(root, rules), rules, by_folder, cut)

    def step(
        self, root: Root, known: FileTable, skipped: dict[str, SkippedFile], budget_s: float
    ) -> tuple[list[FileRef], Batch]:
        """Folders for about `budget_s` (at least one), and at most `PATROL_READS` files to read:
        those files (stat'd again: they may have changed since an earlier step found them) and
        a batch of what went or is skipped. Once the pass has seen every folder (`done`), the
        batch also removes what it did not see and unskips what is no longer skipped."""
        self.stepped = time.time()
        batch = Batch()
        deadline = time.perf_counter() + budget_s
        while not self.walked and len(self.to_read) < PATROL_READS:
            step = next(self.folders, None)
            if step is None:
                self.walked = True
                break
            prefix, found = step
            self.visited.add(prefix)
            here = {ref.rel for ref in found.files}
            went = (p[self.cut :] for p in self.by_folder.get(prefix, ()))
            batch.removed.update(r for r in went if r in known and r not in here)
            self.skipped.update(s.rel for s in found.skipped)
            batch.skipped.update({s.rel: s for s in found.skipped if skipped.get(s.rel) != s})
            self.to_read.extend(ref for ref in found.files if known.stamp_of(ref.rel) != ref.stamp)
            if time.perf_counter() >= deadline:
                break
        reading = [ref_of(root, ref.rel, ref.path) for ref in self.to_read[:PATROL_READS]]
        del self.to_read[:PATROL_READS]
        if self.done:  # what the pass did not see went with its folder (or its folder is now ignored)
            for rel in known:
                if _parent(rel) not in self.visited:
                    path = fs_path(root, rel)
                    if not (path.exists() or path.is_symlink()) or refused(root, rel, self.rules):
                        batch.removed.add(rel)
            batch.unskipped = set(skipped) - self.skipped
        return reading, batch

    @property
    def done(self) -> bool:
        return self.walked and not self.to_read


def _folder_refused(rel: str, rules: IgnoreRules) -> Refusal | None:
    """Why the folder `rel` is not walked: in an ignored folder, or ignored by the rules; or None."""
    inside = check_name(rel + "/x")
    if inside:
        return inside
    ignored = rules.ignored(rel, True)
    return Refusal(SkipKind.IGNORED, ignored) if ignored else None


def differs(old: CorpusFile | None, ref: FileRef) -> bool:
    return old is None or old.stamp != ref.stamp


def ref_of(root: Root, rel: str, path: Path) -> FileRef:
    """A file as it is now (stamp -1 when it cannot be stat'd: the read will say why)."""
    try:
        st = path.stat()
    except OSError:
        return FileRef(root, rel, str(path), -1, -1, -1)
    return FileRef(root, rel, str(path), st.st_size, st.st_mtime_ns, st.st_ctime_ns)


def fs_path(root: Root, rel: str) -> Path:
    return Path(root.path, *rel.split("/"))


def relative(root: Root, path: str | Path) -> str | None:
    """`path` relative to the root in POSIX form ("" for the root itself), None if outside it."""
    try:
        rel = Path(path).relative_to(root.path)
    except ValueError:
        return None
    return rel.as_posix() if rel.parts else ""


def _with_prefix(ordered: list[str], prefix: str) -> list[str]:
    start = bisect.bisect_left(ordered, prefix)
    end = bisect.bisect_left(ordered, prefix + "\U0010ffff")
    return ordered[start:end]


def _parent(rel: str) -> str:
    """The folder prefix of a relative path (`""` at the top, else ending in `/`)."""
    return rel[: rel.rfind("/") + 1]


def merged(changes: Sequence[Change]) -> Change:
    """Several updates' changes as one."""
    if len(changes) == 1:
        return changes[0]
    return Change(
        added=frozenset().union(*(c.added for c in changes)),
        changed=frozenset().union(*(c.changed for c in changes)),
        removed=frozenset().union(*(c.removed for c in changes)),
        at=time.time(),
    )
