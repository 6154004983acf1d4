"""The corpus as one snapshot: every served file with its text, and every skipped one with why."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from corpus.errors import NotInCorpus
from corpus.identity import display_path, file_uri, parse_file_uri
from corpus.read import DEFAULT_MAX_BYTES, FileText, Skipped, read_text
from corpus.roots import Root, RootKind
from corpus.rules import PinSet
from corpus.scan import FileRef, SkippedFile, check_name, walk


@dataclass(frozen=True, slots=True)
class CorpusFile:
    root: Root
    rel: str
    path: str
    """Display path: `<root label>/<rel>`."""
    uri: str
    pinned: bool
    text: str
    size: int
    mtime_ns: int
    ctime_ns: int
    digest: str

    @property
    def searchable(self) -> bool:
        """Sections of `.AGENTS` files that are not pinned are what `context_search` searches."""
        return self.root.kind is RootKind.AGENTS and not self.pinned


@dataclass(slots=True)
class Corpus:
    roots: list[Root]
    pins: PinSet
    max_bytes: int = DEFAULT_MAX_BYTES
    files: dict[str, CorpusFile] = field(default_factory=dict)
    """By display path, in walk order (root by root, paths sorted)."""
    skipped: list[SkippedFile] = field(default_factory=list)

    @property
    def agents_root(self) -> Root | None:
        return next((r for r in self.roots if r.kind is RootKind.AGENTS), None)

    def in_root(self, root: Root) -> list[CorpusFile]:
        return [f for f in self.files.values() if f.root is root]

    def corpus_file(self, ref: FileRef, text: FileText) -> CorpusFile:
        pinned = ref.root.kind is RootKind.AGENTS and ref.rel in self.pins
        return CorpusFile(
            root=ref.root,
            rel=ref.rel,
            path=display_path(ref.root, ref.rel),
            uri=file_uri(ref.root, ref.rel),
            pinned=pinned,
            text=text.text,
            size=text.size,
            mtime_ns=text.mtime_ns,
            ctime_ns=text.ctime_ns,
            digest=text.digest,
        )

    def read_uri(self, uri: str) -> CorpusFile:
        """The file a URI names, read from disk now; `NotInCorpus` (with why) if it is not served."""
        root, rel = parse_file_uri(uri, self.roots)
        refused = check_name(rel)
        if refused:
            raise Skipped(f"{uri} is not served: {refused}")
        path = Path(root.path, *rel.split("/"))
        try:
            text = read_text(root.path, path, self.max_bytes)
        except Skipped as exc:
            raise Skipped(f"{uri} is not served: {exc.reason}") from None
        except NotInCorpus:
            raise NotInCorpus(f"no file at {uri}") from None
        ref = FileRef(root, rel, path, text.size, text.mtime_ns, text.ctime_ns)
        return self.corpus_file(ref, text)


def load(roots: Sequence[Root], pins: PinSet | None = None, max_bytes: int = DEFAULT_MAX_BYTES) -> Corpus:
    """Walk and read every root."""
    corpus = Corpus(list(roots), PinSet() if pins is None else pins, max_bytes)
    for root in roots:
        found = walk(root)
        corpus.skipped.extend(found.skipped)
        for ref in found.files:
            try:
                text = read_text(root.path, ref.path, max_bytes)
            except Skipped as exc:
                corpus.skipped.append(SkippedFile(root, ref.rel, exc.reason))
                continue
            except NotInCorpus:
                continue  # vanished between the walk and the read
            cf = corpus.corpus_file(ref, text)
            corpus.files[cf.path] = cf
    return corpus
