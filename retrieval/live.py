"""The live index: the corpus and its library, kept equal to what is on disk, one file at a time.

- `sweep(root)` stats every file of a root and re-reads only those whose size or mtime moved
  (read-your-writes for `.AGENTS`, before every tool call; a full rescan after a watcher restart).
- `refresh(root, paths)` updates just the paths a watcher batch names (large `--docs` roots).
- `verify(units)` re-checks the files behind a set of hits, so a deleted or edited file is never
  served from the index.

A file whose bytes did not change (a `touch`) is never re-tokenized. Files are read and tokenized
outside the index lock; each batch is then applied as one coalesced update, one generation, under
the lock, so every answer comes from one complete generation. Updates to one root are serialised,
so a slow read can never overwrite a newer one. A file caught mid-save is retried and, if still
changing, left as it was until it settles.
"""

from __future__ import annotations

import bisect
import logging
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from corpus.catalog import Corpus, CorpusFile
from corpus.errors import NotInCorpus
from corpus.ignore import IGNORE_FILES, IgnoreRules
from corpus.read import DEFAULT_MAX_BYTES, Changing, FileText, Skipped, read_text, stamp
from corpus.roots import Root, RootKind, root_present
from corpus.rules import PinSet
from corpus.scan import FileRef, SkippedFile, check_name, included, refused, walk
from corpus.watch import watched_root
from retrieval.library import Library, Prepared
from retrieval.ranking import DEFAULT, Ranking
from retrieval.units import Unit

log = logging.getLogger("agents_context.index")

PROGRESS_EVERY = 2000
_RETRY_DELAYS = (0.02, 0.08, 0.2)
"""Seconds to wait before re-reading a file that changed while it was read."""
SETTLE_S = 0.03
"""A file modified less than this long ago may still be mid-save: a batch waits (once) until its
newest file is this old before reading, so a save in progress is rarely read half-written."""


@dataclass(frozen=True, slots=True)
class Change:
    """What one update changed: display paths added, changed (content) and removed."""

    added: frozenset[str] = frozenset()
    changed: frozenset[str] = frozenset()
    removed: frozenset[str] = frozenset()
    at: float = 0.0
    """`time.time()` when it was applied."""

    @property
    def count(self) -> int:
        return len(self.added) + len(self.changed) + len(self.removed)


@dataclass(frozen=True, slots=True)
class View:
    """A consistent look at one generation (valid while the `view()` block holds the lock)."""

    corpus: Corpus
    library: Library
    generation: int
    last_change: Change | None


Listener = Callable[[Root, Change], None]


@dataclass(slots=True)
class _Batch:
    """Files read for one update of one root, before it is applied."""

    files: dict[str, CorpusFile] = field(default_factory=dict)
    prepared: dict[str, Prepared] = field(default_factory=dict)
    removed: set[str] = field(default_factory=set)
    skipped: dict[str, SkippedFile] = field(default_factory=dict)
    unskipped: set[str] = field(default_factory=set)


class LiveIndex:
    def __init__(
        self,
        roots: Sequence[Root],
        pins: PinSet | None = None,
        max_bytes: int = DEFAULT_MAX_BYTES,
        settle_s: float = SETTLE_S,
        ranking: Ranking = DEFAULT,
        progress: Callable[[str], None] | None = None,
    ) -> None:
        self.roots = list(roots)
        self.progress = progress
        """Told how a large read goes (every `PROGRESS_EVERY` files), for people watching stderr."""
        self.settle_s = settle_s
        self.ranking = ranking
        self.corpus = Corpus(self.roots, PinSet() if pins is None else pins, max_bytes, explicit_pins=pins is not None)
        self.library = Library(ranking)
        self.generation = 0
        self.last_change: Change | None = None
        self.last_error: str | None = None
        self.fresh_as_of: dict[str, float] = {r.label: 0.0 for r in self.roots}
        self.present: dict[str, bool] = {r.label: True for r in self.roots}
        self.listeners: list[Listener] = []
        self._lock = threading.Lock()
        self._root_locks = {r.label: threading.Lock() for r in self.roots}
        self._files: dict[str, dict[str, CorpusFile]] = {r.label: {} for r in self.roots}
        """Per root, by relative path; changed only in `_apply`, read under the root's lock."""
        self._skipped: dict[str, dict[str, SkippedFile]] = {r.label: {} for r in self.roots}
        self._pending: dict[str, set[str]] = {r.label: set() for r in self.roots}
        self._rules: dict[str, IgnoreRules] = {}
        for root in self.roots:
            self.sweep(root)
        self.last_change = None  # the start-up build is not an update anyone needs told about

    @property
    def agents_roots(self) -> list[Root]:
        return self.corpus.agents_roots

    @contextmanager
    def view(self) -> Iterator[View]:
        with self._lock:
            yield View(self.corpus, self.library, self.generation, self.last_change)

    def fresh_since(self, roots: Iterable[Root]) -> float:
        """The moment up to which every change in `roots` is reflected (the oldest root's)."""
        return min((self.fresh_as_of[r.label] for r in roots), default=time.time())

    def mark_fresh(self, root: Root, moment: float) -> None:
        self.fresh_as_of[root.label] = max(self.fresh_as_of[root.label], moment)

    # --- updates ----------------------------------------------------------------------------

    def sweep(self, root: Root) -> Change:
        """Bring `root` up to date by stat: only files whose size or mtime moved are re-read."""
        with self._root_locks[root.label]:
            started = time.time()
            try:
                change = self._sweep(root)
            except Exception as exc:  # keep serving the last good index, whatever went wrong
                return self._failed(root, exc)
            self.mark_fresh(root, started)
            return change

    def refresh(self, root: Root, paths: Iterable[str | Path]) -> Change:
        """Update just these absolute paths of `root` (files or folders, present or gone)."""
        with self._root_locks[root.label]:
            try:
                return self._refresh(root, paths)
            except Exception as exc:
                return self._failed(root, exc)

    def retry_pending(self) -> None:
        """Re-read files that were still being written at the last attempt."""
        for root in self.roots:
            if self._pending[root.label]:
                self.refresh(root, [_fs_path(root, rel) for rel in self._pending[root.label]])

    def verify(self, units: Iterable[Unit]) -> bool:
        """Re-check the files behind `units`; update any that changed. True if anything did."""
        stale: dict[str, list[Path]] = {}
        with self._lock:
            for path in {u.path for u in units}:
                f = self.corpus.files.get(path)
                if f is None or _moved(f):
                    root = f.root if f else self._root_of(path)
                    if root is not None:
                        stale.setdefault(root.label, []).append(_fs_path(root, path.split("/", 1)[1]))
        changed = False
        for root in self.roots:
            if root.label in stale:
                changed |= self.refresh(root, stale[root.label]).count > 0
        return changed

    def route(self, changes: Iterable[tuple[object, str]] | None) -> None:
        """Apply one watcher report: a full stat sweep (None), a batch of (change, path), or a
        quiet tick (empty: every docs root is fresh as of now)."""
        if changes is None:
            self.rebuild()
            return
        seen = time.time()
        by_root: dict[str, list[str]] = {}
        for _, path in changes:
            root = watched_root(self.roots, path)
            if root is not None:
                by_root.setdefault(root.label, []).append(path)
        for root in self.roots:
            if root.label in by_root:
                if root.kind is RootKind.AGENTS:
                    self.sweep(root)  # small: a stat sweep also catches what events miss
                else:
                    self.refresh(root, by_root[root.label])
            elif root.kind is RootKind.DOCS:
                self.mark_fresh(root, seen)
        self.retry_pending()

    def rebuild(self) -> Change:
        """Sweep every root; the changes of all of them together."""
        changes = [self.sweep(root) for root in self.roots]
        return Change(
            added=frozenset().union(*(c.added for c in changes)),
            changed=frozenset().union(*(c.changed for c in changes)),
            removed=frozenset().union(*(c.removed for c in changes)),
            at=time.time(),
        )

    def _sweep(self, root: Root) -> Change:
        known = self._files[root.label]
        batch = _Batch()
        if not root_present(root):
            if self.present[root.label]:
                log.warning("root %s is gone (%s); serving nothing from it until it returns", root.label, root.path)
            self.present[root.label] = False
            batch.removed = set(known)
            batch.unskipped = set(self._skipped[root.label])
            return self._apply(root, batch)
        if not self.present[root.label]:
            log.info("root %s is back", root.label)
        self.present[root.label] = True
        self._rules[root.label] = IgnoreRules(root.path)
        found = walk(root, rules=self._rules[root.label])
        batch.unskipped = set(self._skipped[root.label])
        batch.skipped = {s.rel: s for s in found.skipped}
        current = {ref.rel: ref for ref in found.files}
        batch.removed = set(known) - set(current)
        self._read(root, [ref for rel, ref in current.items() if _differs(known.get(rel), ref)], known, batch)
        return self._apply(root, batch)

    def _refresh(self, root: Root, paths: Iterable[str | Path]) -> Change:
        if not root_present(root):
            return self._sweep(root)
        known = self._files[root.label]
        batch = _Batch()
        candidates: list[FileRef] = []
        listing: list[str] | None = None
        rules = self._rules.setdefault(root.label, IgnoreRules(root.path))
        for rel in sorted({r for p in paths if (r := _relative(root, p)) is not None}):
            if rel == "" or rel.rsplit("/", 1)[-1] in IGNORE_FILES:
                return self._sweep(root)  # the root itself, or rules that may change many files
            path = _fs_path(root, rel)
            if rel in known:
                under: list[str] = []  # a known file is not a folder
            else:  # maybe a folder that held known files: find them by prefix
                listing = listing if listing is not None else sorted({*known, *self._skipped[root.label]})
                under = _with_prefix(listing, rel + "/")
            batch.unskipped.update([rel, *under])
            is_dir = path.is_dir() and not path.is_symlink()
            reason = refused(root, rel, rules) if not is_dir else check_name(rel + "/x") or rules.ignored(rel, True)
            if reason:
                if included(root, rel) or is_dir:
                    batch.skipped[rel] = SkippedFile(root, rel, reason)
                batch.removed.update(k for k in (rel, *under) if k in known)
            elif is_dir:
                found = walk(root, under=rel, rules=rules)
                batch.skipped.update({s.rel: s for s in found.skipped})
                inside = {ref.rel for ref in found.files}
                batch.removed.update(k for k in under if k in known and k not in inside)
                candidates.extend(ref for ref in found.files if _differs(known.get(ref.rel), ref))
            elif path.exists() or path.is_symlink():
                candidates.append(_ref(root, rel, path))
            else:
                batch.removed.update(k for k in (rel, *under) if k in known)
        self._read(root, candidates, known, batch)
        return self._apply(root, batch)

    def _read(self, root: Root, refs: list[FileRef], known: dict[str, CorpusFile], batch: _Batch) -> None:
        pending = self._pending[root.label]
        newest = max((ref.mtime_ns for ref in refs), default=0) / 1e9
        wait = self.settle_s - (time.time() - newest)
        if refs and wait > 0:
            time.sleep(min(wait, self.settle_s))
        for done, ref in enumerate(refs, start=1):
            if self.progress is not None and len(refs) >= PROGRESS_EVERY and done % PROGRESS_EVERY == 0:
                self.progress(f"indexing {root.label}: {done}/{len(refs)} files read")
            pending.discard(ref.rel)
            try:
                text = _read_settled(root, ref, self.corpus.max_bytes)
            except Changing:
                pending.add(ref.rel)  # keep what is indexed; the next event or tick retries
                continue
            except Skipped as exc:
                batch.skipped[ref.rel] = SkippedFile(root, ref.rel, exc.reason)
                if ref.rel in known:
                    batch.removed.add(ref.rel)
                continue
            except NotInCorpus:
                if ref.rel in known:
                    batch.removed.add(ref.rel)
                continue
            f = self.corpus.corpus_file(ref, text)
            batch.files[ref.rel] = f
            old = known.get(ref.rel)
            if old is None or old.digest != f.digest:
                batch.prepared[f.path] = self.library.prepare(f.path, f.uri, f.text, f.searchable, f.meta.title)

    def _apply(self, root: Root, batch: _Batch) -> Change:
        with self._lock:
            files, mine = self.corpus.files, self._files[root.label]
            before = {rel for rel in batch.files if rel in mine}
            for rel in batch.removed:
                files.pop(_display(root, rel), None)
                mine.pop(rel, None)
            for f in batch.files.values():
                files[f.path] = mine[f.rel] = f
            removed = {_display(root, rel) for rel in batch.removed}
            if batch.prepared or removed:
                self.library.apply({**batch.prepared, **dict.fromkeys(removed)})
            skipped = self._skipped[root.label]
            for rel in batch.unskipped:
                skipped.pop(rel, None)
            skipped.update(batch.skipped)
            self.corpus.skipped = sorted(
                (s for r in self.roots for s in self._skipped[r.label].values()),
                key=lambda s: (s.root.label, s.rel),
            )
            change = Change(
                added=frozenset(p for p in batch.prepared if p.split("/", 1)[1] not in before),
                changed=frozenset(p for p in batch.prepared if p.split("/", 1)[1] in before),
                removed=frozenset(removed),
                at=time.time(),
            )
            if change.count:
                self.generation += 1
                self.last_change = change
            self.last_error = None
        if change.count:
            for listener in list(self.listeners):
                listener(root, change)
        return change

    def _failed(self, root: Root, exc: Exception) -> Change:
        self.last_error = f"{type(exc).__name__}: {exc}"
        log.exception("updating %s failed; still serving generation %d", root.label, self.generation)
        return Change()

    def _root_of(self, path: str) -> Root | None:
        label = path.split("/", 1)[0]
        return next((r for r in self.roots if r.label == label), None)


def _display(root: Root, rel: str) -> str:
    return f"{root.label}/{rel}"


def _fs_path(root: Root, rel: str) -> Path:
    return Path(root.path, *rel.split("/"))


def _relative(root: Root, path: str | Path) -> str | None:
    try:
        rel = Path(path).relative_to(root.path)
    except ValueError:
        return None
    return rel.as_posix() if rel.parts else ""


def _with_prefix(ordered: list[str], prefix: str) -> list[str]:
    start = bisect.bisect_left(ordered, prefix)
    end = bisect.bisect_left(ordered, prefix + "\U0010ffff")
    return ordered[start:end]


def _ref(root: Root, rel: str, path: Path) -> FileRef:
    try:
        st = path.stat()
    except OSError:
        return FileRef(root, rel, path, -1, -1, -1)  # the read will say why
    return FileRef(root, rel, path, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


def _differs(old: CorpusFile | None, ref: FileRef) -> bool:
    return old is None or (old.size, old.mtime_ns, old.ctime_ns) != (ref.size, ref.mtime_ns, ref.ctime_ns)


def _moved(f: CorpusFile) -> bool:
    try:
        st = _fs_path(f.root, f.rel).stat()
    except OSError:
        return True
    return stamp(st) != (f.size, f.mtime_ns, f.ctime_ns)


def _read_settled(root: Root, ref: FileRef, max_bytes: int) -> FileText:
    """`read_text`, retried a few times while the file is still being written (retries resolve
    the path afresh, in case the file was replaced)."""
    try:
        return read_text(root.path, ref.path, max_bytes, ref.identity)
    except Changing:
        pass
    for delay in _RETRY_DELAYS:
        time.sleep(delay)
        try:
            return read_text(root.path, ref.path, max_bytes)
        except Changing:
            continue
    return read_text(root.path, ref.path, max_bytes)
