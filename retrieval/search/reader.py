"""Reading a file, a section or a line range, by any name an agent might use for it.

`read_context` (the tool) and `resources/read` with a `#fragment` both come here, so a model that
never reads resources (Claude Desktop's) and one that does get exactly the same text. Everything
here works on the corpus snapshot and on a file's text; the caller reads the file from disk
between `target` and `excerpt`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from difflib import get_close_matches
from pathlib import Path
from urllib.parse import unquote

from corpus.catalog import Corpus
from corpus.errors import NotInCorpus
from corpus.files import CorpusFile
from corpus.identity import AGENTS_SCHEME, DOCS_SCHEME, file_uri, parse_file_uri, split_display, split_fragment
from corpus.markdown import split_lines
from corpus.names import printable, too_long
from corpus.roots import RootKind
from retrieval.chunks.anchors import INTRO_ANCHOR, line_range, lines_within
from retrieval.chunks.sections import INTRO, folded_heading
from retrieval.chunks.units import Unit, sections_of

_DRIVE = re.compile(r"[A-Za-z]:/")
"""How an absolute Windows path starts (once its backslashes are slashes)."""


@dataclass(frozen=True, slots=True)
class Target:
    """What a name asks to read: the file's URI, a fragment (`secrets`, `L12-L30`), and the name
    as given (fragment dropped), for messages."""

    uri: str
    fragment: str | None
    name: str


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
    given = name
    name = name.strip().replace("\\", "/")
    if name.startswith((f"{AGENTS_SCHEME}://", f"{DOCS_SCHEME}://")):
        return split_fragment(name)[0]
    name = name.removeprefix("./")
    if not name:
        raise NotInCorpus(f"path is required: pass {accepted(corpus)}")
    if ".." in name.split("/"):
        raise NotInCorpus(outside(corpus, given, "has a '..' segment, which would leave"))
    if name.startswith("/") or _DRIVE.match(name):  # an absolute path: served only inside a root
        for root in corpus.roots:
            if Path(name).is_relative_to(root.path) and Path(name) != root.path:
                return file_uri(root, Path(name).relative_to(root.path).as_posix())
        known = _known(corpus, name.lstrip("/"))  # `/.AGENTS/a.md` or `/a.md`: a display or root path
        if known is None:
            raise NotInCorpus(outside(corpus, given))
        return known
    if {"", "."} & set(name.split("/")):
        raise NotInCorpus(f"{printable(given)!r} has an empty or '.' path segment: pass {accepted(corpus)}")
    label, rest = split_display(name)
    for root in corpus.roots:
        if rest and label == root.label:
            return file_uri(root, rest)
    known = _known(corpus, name)
    if known is not None:
        return known
    agents = corpus.agents_root
    if agents is not None:
        return file_uri(agents, name)  # not indexed (yet?): let the read say why
    raise NotInCorpus(unknown(corpus, name))


def _known(corpus: Corpus, name: str) -> str | None:
    """The URI of the file `name` names as a display path or a path inside a root (`.AGENTS`
    roots first), if the corpus has it."""
    if name in corpus.files:
        return corpus.files[name].uri
    for root in sorted(corpus.roots, key=lambda r: r.kind is not RootKind.AGENTS):
        if f"{root.label}/{name}" in corpus.files:
            return file_uri(root, name)
    return None


def target(corpus: Corpus, name: str) -> Target:
    """The file and fragment `name` names: a URI (`agents://security.md#secrets`), a display or
    root-relative path, `security.md#secrets` (while `C#.md` stays a file's name)."""
    why = too_long(unquote(name) if "://" in name else name)
    if why:
        raise NotInCorpus(why)
    fragment: str | None = None
    if "://" in name:
        fragment = split_fragment(name)[1]
    elif "#" in name and not _names_a_file(corpus, name):
        name, _, fragment = name.rpartition("#")
    return Target(resolve_uri(corpus, name), fragment, name)


def excerpt(
    f: CorpusFile,
    fragment: str | None = None,
    section: str | None = None,
    start: int | None = None,
    end: int | None = None,
) -> Excerpt:
    """One section of the file (by heading, trail or anchor), a line range, or all of it."""
    asked = None  # a fragment naming lines: `lines_within` holds it to the line-range rule
    if fragment and section is None and start is None and end is None:
        lines = line_range(fragment)
        if lines:
            (start, end), asked = lines, fragment
        else:
            section = fragment
    if section is not None:
        return _section(f, section)
    lines_of = split_lines(f.text)
    first, last = lines_within(f.path, len(lines_of), start, end, asked)
    return Excerpt(f, "\n".join(lines_of[first - 1 : last]), first, last)


def _names_a_file(corpus: Corpus, name: str) -> bool:
    try:
        uri = resolve_uri(corpus, name)
    except NotInCorpus:
        return False
    try:
        root, rel = parse_file_uri(uri, corpus.roots)
    except NotInCorpus:
        return False
    f = corpus.files.of(root.label).get(rel)
    return f is not None and f.uri == uri


def _section(f: CorpusFile, wanted: str) -> Excerpt:
    """The section `wanted` names: its anchor, heading or trail as written (case aside), else its
    heading or trail however the caller writes inline markup, spacing and case
    (`Use CORSMiddleware` finds ``Use `CORSMiddleware` ``; `folded_heading`)."""
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
        matches = _loosely(units, wanted)
    if not matches:
        known = ", ".join(f"{u.heading} (#{u.anchor})" for u in units) or "none"
        raise NotInCorpus(f"{f.path} has no section {wanted!r}; its sections: {known}")
    first = matches[0]
    return Excerpt(f, first.text, first.start_line, first.end_line, first, tuple(matches[1:]))


def _loosely(units: list[Unit], wanted: str) -> list[Unit]:
    """The sections whose heading, or whole trail, `wanted` names once both are folded."""
    name = wanted.strip().lstrip("#")
    heading = folded_heading(name)
    trail = tuple(folded_heading(part) for part in name.split(">"))
    if not heading:
        return []
    return [
        u
        for u in units
        if u.heading != INTRO
        and (
            folded_heading(u.heading or "") == heading
            or (len(trail) > 1 and tuple(folded_heading(t) for t in u.trail) == trail)
        )
    ]


def accepted(corpus: Corpus) -> str:
    """The names a read takes, with examples in this corpus's own labels."""
    agents = corpus.agents_root
    label = agents.label if agents is not None else ".AGENTS"
    example = file_uri(agents, "security.md") if agents is not None else "agents://security.md"
    return f"a display path ({label}/security.md), a path inside {label}/ (security.md) or a URI ({example})"


def outside(corpus: Corpus, name: str, why: str = "is not inside") -> str:
    """Why `name`, an absolute path outside every root or a path with a `..` segment, names
    nothing this server reads, and what it takes instead."""
    folders = ", ".join(printable(str(r.path)) for r in corpus.roots[:3]) + (", ..." if len(corpus.roots) > 3 else "")
    return (
        f"{printable(name)!r} {why} the folders this server reads ({folders}): pass {accepted(corpus)}, "
        "or an absolute path inside one of those folders"
    )


def unknown(corpus: Corpus, name: str) -> str:
    """Why `name` names no file, with the closest known paths ("did you mean")."""
    paths = list(corpus.files)
    rels = {split_display(p)[1]: p for p in paths}
    close = get_close_matches(name, paths, n=3, cutoff=0.5) or [
        rels[r] for r in get_close_matches(name, list(rels), n=3, cutoff=0.5)
    ]
    agents = [f.path for f in corpus.files.agents()]
    hint = (
        f"did you mean {', '.join(close)}?"
        if close
        else f"known .AGENTS files: {', '.join(sorted(agents)[:10]) or 'none'}"
    )
    return f"no file named {name!r}; {hint}"
