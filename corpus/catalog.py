"""The corpus as one snapshot: every served file with its text (or, for a docs file the live
index does not hold the text of, where to read it), every skipped one with why, and what one
update of it changed. `read_uri` reads one file fresh from disk, as the snapshot would hold it;
`load` walks and reads whole roots once."""

from __future__ import annotations

from collections.abc import ItemsView, Iterable, Iterator, Mapping, Sequence, ValuesView
from dataclasses import dataclass, field
from itertools import chain
from pathlib import Path
from typing import NamedTuple

from corpus import frontmatter
from corpus.conventions import Convention, convention_of
from corpus.errors import Missing, NotHeld, NotInCorpus
from corpus.frontmatter import EMPTY, FrontMatter
from corpus.identity import display_path, file_uri, parse_file_uri, split_display
from corpus.read import DEFAULT_MAX_BYTES, FileText, Skipped, Stamp, read_text
from corpus.roots import Root, RootKind
from corpus.rules import PinSet
from corpus.scan import FileRef, SkippedFile, refused, walk


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


class Files(Mapping[str, CorpusFile]):
    """Every served file by display path, root by root: one map, made of each root's files by
    relative path (`of`), which the live index changes in place."""

    def __init__(self, labels: Iterable[str]) -> None:
        self._roots: dict[str, dict[str, CorpusFile]] = {label: {} for label in labels}

    def of(self, label: str) -> dict[str, CorpusFile]:
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
        return (f.path for f in self._all())

    def __len__(self) -> int:
        return sum(len(files) for files in self._roots.values())

    def values(self) -> ValuesView[CorpusFile]:
        return _Values(self)

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


@dataclass(slots=True)
class Corpus:
    roots: list[Root]
    pins: PinSet
    max_bytes: int = DEFAULT_MAX_BYTES
    explicit_pins: bool = False
    """`--pin` was given: it replaces every root's default pins."""
    files: Files = field(init=False)
    """By display path, root by root (each root's in the order its files were indexed)."""
    skipped: list[SkippedFile] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.files = Files(r.label for r in self.roots)

    @property
    def agents_root(self) -> Root | None:
        return next((r for r in self.roots if r.kind is RootKind.AGENTS), None)

    @property
    def agents_roots(self) -> list[Root]:
        return [r for r in self.roots if r.kind is RootKind.AGENTS]

    def unmatched_pins(self) -> list[str]:
        """Each `--pin` that names no file of any `.AGENTS` root (so it pins nothing)."""
        if not self.explicit_pins:
            return []
        have = {f.rel.casefold() for f in self.files.values() if f.root.kind is RootKind.AGENTS}
        return [p for p in self.pins if p not in have]

    def pins_of(self, root: Root) -> PinSet:
        """`--pin` when given, else the root's own defaults (the conventional root pins AGENTS.md)."""
        return self.pins if self.explicit_pins or root.pins is None else PinSet(root.pins)

    def in_root(self, root: Root) -> list[CorpusFile]:
        return list(self.files.of(root.label).values())

    def corpus_file(self, ref: FileRef, text: FileText) -> CorpusFile:
        meta = frontmatter.parse(ref.rel, text.text, _convention(ref))
        agents = ref.root.kind is RootKind.AGENTS
        pinned = agents and (ref.rel in self.pins_of(ref.root) or meta.always_apply)
        return CorpusFile(
            root=ref.root,
            rel=ref.rel,
            path=display_path(ref.root, ref.rel),
            pinned=pinned,
            text=text.text,
            size=text.size,
            mtime_ns=text.mtime_ns,
            ctime_ns=text.ctime_ns,
            digest=text.digest,
            meta=meta,
        )


def _convention(ref: FileRef) -> Convention | None:
    """The convention of a file of the conventional root; in an `.agents` folder, skills
    (`.agents/skills/<name>/SKILL.md`), the one convention that lives there."""
    if ref.root.include:
        return convention_of(ref.rel)
    parts = ref.rel.split("/")
    skill = len(parts) >= 3 and parts[0] == "skills" and (parts[2] == "references" or parts[2:] == ["SKILL.md"])
    if skill and ref.root.kind is RootKind.AGENTS and ref.root.path.name.casefold() == ".agents":
        found = convention_of(f".agents/{ref.rel}")  # only now: a plain `.AGENTS` file needs no pathspec
        return found if found is not None and found.key == "skill" else None
    return None


def load(roots: Sequence[Root], pins: PinSet | None = None, max_bytes: int = DEFAULT_MAX_BYTES) -> Corpus:
    """Walk and read every root."""
    corpus = Corpus(list(roots), PinSet() if pins is None else pins, max_bytes, explicit_pins=pins is not None)
    for root in roots:
        found = walk(root)
        corpus.skipped.extend(found.skipped)
        for ref in found.files:
            try:
                text = read_text(root.path, ref.path, max_bytes)
            except Skipped as exc:
                corpus.skipped.append(SkippedFile(root, ref.rel, exc.refusal))
                continue
            except NotInCorpus:
                continue  # vanished between the walk and the read
            corpus.files.add(corpus.corpus_file(ref, text))
    return corpus


def read_uri(corpus: Corpus, uri: str) -> CorpusFile:
    """The file a URI names, read from disk now; `NotInCorpus` (with why) if it is not served."""
    root, rel = parse_file_uri(uri, corpus.roots)
    refusal = refused(root, rel)
    if refusal:
        raise Skipped(refusal.kind, f"{uri} is not served: {refusal.reason}")
    path = Path(root.path, *rel.split("/"))
    try:
        text = read_text(root.path, path, corpus.max_bytes)
    except Skipped as exc:
        raise Skipped(exc.kind, f"{uri} is not served: {exc.reason}") from None
    except NotInCorpus:
        raise Missing(f"no file at {uri}") from None
    ref = FileRef(root, rel, str(path), *text.stamp)
    return corpus.corpus_file(ref, text)
