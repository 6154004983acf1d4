"""The corpus as one snapshot: every served file with its text (or, for a docs file the live
index does not hold the text of, where to read it), every skipped one with why, and what one
update of it changed. `read_uri` reads one file fresh from disk, as the snapshot would hold it;
`load` walks and reads whole roots once."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from corpus import frontmatter
from corpus.conventions import Convention, convention_of
from corpus.errors import Missing, NotInCorpus
from corpus.files import CorpusFile, Files
from corpus.frontmatter import FrontMatter
from corpus.identity import display_path, parse_file_uri
from corpus.read import DEFAULT_MAX_BYTES, FileText, Skipped, read_text
from corpus.roots import Root, RootKind
from corpus.rules import PinSet
from corpus.scan import FileRef, SkippedFile, refused, walk

FrontMatterOf = Callable[[str, FileText, Convention | None], FrontMatter]
"""How a file's front matter is found from its relative path, text and convention:
`frontmatter.parse` by default; the hook keeps what it found between events (`hook.memo`)."""


def parse_front_matter(rel: str, text: FileText, convention: Convention | None) -> FrontMatter:
    return frontmatter.parse(rel, text.text, convention)


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
        self.files = Files(self.roots)

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
        have = {f.rel.casefold() for f in self.files.agents()}
        return [p for p in self.pins if p not in have]

    def pins_of(self, root: Root) -> PinSet:
        """`--pin` when given, else the root's own defaults (the conventional root pins AGENTS.md)."""
        return self.pins if self.explicit_pins or root.pins is None else PinSet(root.pins)

    def in_root(self, root: Root) -> list[CorpusFile]:
        return list(self.files.of(root.label).values())

    def corpus_file(self, ref: FileRef, text: FileText, front_matter: FrontMatterOf = parse_front_matter) -> CorpusFile:
        meta = front_matter(ref.rel, text, _convention(ref))
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


def load(
    roots: Sequence[Root],
    pins: PinSet | None = None,
    max_bytes: int = DEFAULT_MAX_BYTES,
    front_matter: FrontMatterOf = parse_front_matter,
) -> Corpus:
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
            corpus.files.add(corpus.corpus_file(ref, text, front_matter))
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
