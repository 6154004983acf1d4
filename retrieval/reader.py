"""Reading a file, a section or a line range, by any name an agent might use for it.

`read_context` (the tool) and `resources/read` with a `#fragment` both come here, so a model that
never reads resources (Claude Desktop's) and one that does get exactly the same text.
"""

from __future__ import annotations

from dataclasses import dataclass
from difflib import get_close_matches

from corpus.catalog import Corpus, CorpusFile
from corpus.errors import NotInCorpus
from corpus.identity import AGENTS_SCHEME, DOCS_SCHEME, file_uri, split_fragment
from corpus.roots import RootKind
from retrieval.anchors import INTRO_ANCHOR, line_range
from retrieval.sections import INTRO, split_lines
from retrieval.units import Unit, sections_of


@dataclass(frozen=True, slots=True)
class Excerpt:
    file: CorpusFile
    text: str
    start_line: int
    end_line: int
    section: Unit | None = None
    others: tuple[Unit, ...] = ()
    """Other sections with the same heading (the first one is returned)."""


def resolve_uri(corpus: Corpus, name: str) -> str:
    """The file URI for a display path, a URI (fragment dropped) or a root-relative path, or
    `NotInCorpus` listing the closest known paths ("did you mean")."""
    name = name.strip().replace("\\", "/")
    if name.startswith((f"{AGENTS_SCHEME}://", f"{DOCS_SCHEME}://")):
        return split_fragment(name)[0]
    name = name.removeprefix("./")
    label, _, rest = name.partition("/")
    for root in corpus.roots:
        if rest and label == root.label:
            return file_uri(root, rest)
    for root in sorted(corpus.roots, key=lambda r: r.kind is not RootKind.AGENTS):  # .AGENTS roots first
        if f"{root.label}/{name}" in corpus.files:
            return file_uri(root, name)
    agents = corpus.agents_root
    if agents is not None:
        return file_uri(agents, name)  # not indexed (yet?): let the read say why
    raise NotInCorpus(_unknown(corpus, name))


def read(
    corpus: Corpus, name: str, section: str | None = None, start: int | None = None, end: int | None = None
) -> Excerpt:
    """The file `name` names, fresh from disk; then one section of it, or a line range."""
    fragment: str | None = None
    if "://" in name:
        fragment = split_fragment(name)[1]
    elif "#" in name and not _names_a_file(corpus, name):
        name, _, fragment = name.rpartition("#")  # `security.md#secrets`; `C#.md` stays a name
    uri = resolve_uri(corpus, name)
    try:
        f = corpus.read_uri(uri)
    except NotInCorpus as exc:
        if "no file at" in str(exc):
            raise NotInCorpus(_unknown(corpus, name)) from None
        raise
    if fragment and section is None and start is None and end is None:
        lines = line_range(fragment)
        if lines:
            start, end = lines
        else:
            section = fragment
    if section is not None:
        return _section(f, section)
    lines_of = split_lines(f.text)
    first = max(1, start or 1)
    last = min(len(lines_of), end or len(lines_of))
    if first > last:
        raise NotInCorpus(f"{f.path} has {len(lines_of)} lines; lines {start}-{end} are outside it")
    return Excerpt(f, "\n".join(lines_of[first - 1 : last]), first, last)


def _names_a_file(corpus: Corpus, name: str) -> bool:
    try:
        uri = resolve_uri(corpus, name)
    except NotInCorpus:
        return False
    return any(f.uri == uri for f in corpus.files.values())


def _section(f: CorpusFile, wanted: str) -> Excerpt:
    units = sections_of(f)
    key = wanted.strip().lstrip("#").casefold()
    matches = [
        u
        for u in units
        if key
        in (
            (u.anchor or "").casefold(),
            (u.heading or "").casefold(),
            " > ".join(u.trail).casefold(),
            ">".join(t.strip() for t in u.trail).casefold(),
        )
        or (key in (INTRO_ANCHOR, INTRO) and u.heading == INTRO)
    ]
    if not matches:
        known = ", ".join(f"{u.heading} (#{u.anchor})" for u in units) or "none"
        raise NotInCorpus(f"{f.path} has no section {wanted!r}; its sections: {known}")
    first = matches[0]
    return Excerpt(f, first.text, first.start_line, first.end_line, first, tuple(matches[1:]))


def _unknown(corpus: Corpus, name: str) -> str:
    paths = list(corpus.files)
    rels = {p.split("/", 1)[1]: p for p in paths}
    close = get_close_matches(name, paths, n=3, cutoff=0.5) or [
        rels[r] for r in get_close_matches(name, list(rels), n=3, cutoff=0.5)
    ]
    agents = [p for p, f in corpus.files.items() if f.root.kind is RootKind.AGENTS]
    hint = (
        f"did you mean {', '.join(close)}?"
        if close
        else f"known .AGENTS files: {', '.join(sorted(agents)[:10]) or 'none'}"
    )
    return f"no file named {name!r}; {hint}"
