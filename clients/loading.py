"""What a client loads by itself, the helpers each client's `loads` is written with: a file at
the project's top, an always-on rule of a convention, and `@path` imports, as Claude Code and
Gemini CLI follow them."""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import PurePosixPath

from clients.client import Loaded
from corpus.catalog import Corpus
from corpus.files import CorpusFile
from corpus.markdown import fences_blanked


def top(f: CorpusFile, *names: str) -> bool:
    """A file of the project's conventional files, at the project's top, named one of `names`."""
    return bool(f.root.include) and f.rel.casefold() in {n.casefold() for n in names}


def always(f: CorpusFile, convention: str) -> bool:
    """A rule of `convention` that applies to every task (no path condition of its own)."""
    return f.meta.convention == convention and f.pinned and not f.meta.globs


_IMPORT = re.compile(r"(?<![\w`@])@((?:\.{0,2}/)?[\w.-][\w./-]*)")
"""An `@path` import as Claude Code and Gemini CLI read them in CLAUDE.md and GEMINI.md."""
MAX_IMPORT_HOPS = 5
"""Claude Code follows imports this deep (its memory documentation)."""


def imports(f: CorpusFile, corpus: Corpus) -> list[CorpusFile]:
    """The corpus files `f` imports with `@path` (relative to `f`'s folder), outside code
    fences and code spans, in the order written."""
    by_place = {(g.root.path / g.rel).as_posix(): g for g in corpus.files.agents() if g.held}
    found: list[CorpusFile] = []
    for line in fences_blanked(f.text.split("\n")):
        for match in _IMPORT.finditer(re.sub(r"`[^`]*`", "", line)):
            target = PurePosixPath(f.rel).parent / match.group(1).rstrip(".")
            place = _normal(f.root.path.as_posix() + "/" + target.as_posix())
            if place in by_place and by_place[place] not in found:
                found.append(by_place[place])
    return found


def _normal(path: str) -> str:
    parts: list[str] = []
    for part in path.split("/"):
        if part == "..":
            if parts:
                parts.pop()
        elif part not in ("", "."):
            parts.append(part)
    return ("/" if path.startswith("/") else "") + "/".join(parts)


def with_imports(corpus: Corpus, first: Iterable[CorpusFile], loaded: Loaded) -> Loaded:
    """`loaded`, and every file the files of `first` import, hop by hop."""
    todo = [(f, 0) for f in first]
    while todo:
        f, hops = todo.pop(0)
        if hops >= MAX_IMPORT_HOPS:
            continue
        for g in imports(f, corpus):
            if g.path not in loaded:
                loaded[g.path] = f"imported by {f.rel}"
                todo.append((g, hops + 1))
    return loaded
