"""The links a markdown file makes to other files of its root: their words, and where they point.

A link's words often name its target the way a reader asks for it ("keep old links working" for
a page about redirects). `search_docs` credits them to the page they point to, when a query is
asked (`retrieval.search.retriever`): a link is indexed with the file that holds it, so a change
to that file changes its own links and nothing of the pages they point to.

A link is a `Unit` of one line whose text is the link's words and whose `anchor` is its target
within the root (`target`): `guides/routing.md` for `[...](../guides/routing.md#redirects)` from
`reference/config.md`, `/docs/app/after` for a site path, which names a page by its last folders
(`Pages`). Links to other sites, to a place in the same file, images, and links in code fences are
not kept.
"""

from __future__ import annotations

import functools
import posixpath
import re
from collections.abc import Iterable, Iterator
from urllib.parse import unquote, urlsplit

from corpus.markdown import fences_blanked, is_markdown, split_lines
from retrieval.chunks.units import Unit, line_starts

_LINK = re.compile(r"(?<![!\\])\[([^\[\]\n]{1,200})\]\(\s*<?([^()\s<>]+)>?(?:\s+(?:\"[^\"]*\"|'[^']*'))?\s*\)")
_NUMBERED = re.compile(r"^\d+[-_.]")
_PAGE_SUFFIXES = (".md", ".mdx", ".markdown", ".html", ".htm")
_FOLDER_PAGES = ("index", "readme", "_index")


def written(text: str) -> Iterator[tuple[int, re.Match[str]]]:
    """Every inline link `[words](href)` of a markdown text outside code fences, in text order:
    the 1-based line it is on, and its match (group 1 the words, group 2 the href). Images and
    escaped brackets are not links. The project's one link finder: the index's link units here,
    a hit's links (`retrieval.search.links`) and `doctor`'s link checks."""
    if "](" not in text:
        return
    for number, line in enumerate(fences_blanked(split_lines(text)), start=1):
        if "](" in line:
            for match in _LINK.finditer(line):
                yield number, match


def link_units(path: str, uri: str, text: str) -> list[Unit]:
    """A markdown file's links to other files of its root, outside code fences, in text order."""
    if not is_markdown(path) or "](" not in text:
        return []
    rel = path.split("/", 1)[1] if "/" in path else path
    starts = line_starts(text)
    units: list[Unit] = []
    for number, match in written(text):
        key = target(rel, match.group(2))
        if key is None or not match.group(1).strip():
            continue
        at = starts[number - 1]
        units.append(
            Unit(
                path=path,
                uri=uri,
                source=text,
                start_line=number,
                end_line=number,
                chunk_id=len(units),
                anchor=key,
                at=at + match.start(1),
                end=at + match.end(1),
            )
        )
    return units


def target(rel: str, href: str) -> str | None:
    """Where `href`, written in the file at `rel` (a path inside its root), points: a path inside
    the root, or a site path starting with `/`; None for another site, a place in the same file,
    or a path that leaves the root."""
    parts = urlsplit(href)
    path = unquote(parts.path).replace("\\", "/")
    if parts.scheme or parts.netloc or not path:
        return None
    if path.startswith("/"):
        names = [p for p in path.split("/") if p not in ("", ".")]
        return "/" + "/".join(names) if names else None
    found = within(rel, path)
    return None if found == rel else found


def within(rel: str, path: str) -> str | None:
    """A relative `path`, written in the file at `rel`, as a path inside the root (None: it leaves
    the root)."""
    joined = posixpath.normpath(posixpath.join(posixpath.dirname(rel), path))
    return None if joined in (".", "..") or joined.startswith("../") else joined


@functools.lru_cache(maxsize=4096)
def page_key(path: str) -> tuple[str, ...]:
    """A page's path as links name it: folders and file name case-folded, without an extension,
    a numbered prefix (`01-app`, `09-@attach.md`) or a folder's own page (`guide/index.md` is
    `guide`)."""
    parts = [p for p in path.strip("/").split("/") if p]
    if parts:
        stem, suffix = posixpath.splitext(parts[-1])
        parts[-1] = stem if suffix.casefold() in _PAGE_SUFFIXES else parts[-1]
    names = [_NUMBERED.sub("", p).casefold() for p in parts]
    if names and names[-1] in _FOLDER_PAGES:
        names.pop()
    return tuple(n for n in names if n)


class Pages:
    """Pages of one root, found by the links that name them (`target`): a path inside the root
    names a page exactly; a site path names it by its last folders (`/docs/app/after` names
    `app/after`), or by all of its own when the page lies deeper (`/guides/routing` names
    `en/guides/routing`, two folders at least)."""

    def __init__(self, paths: Iterable[str]) -> None:
        self.exact: dict[tuple[str, ...], list[str]] = {}
        self.deeper: dict[tuple[str, ...], list[str]] = {}  # a page's last two folders or more
        for path in dict.fromkeys(paths):
            key = page_key(path)
            if not key:
                continue
            self.exact.setdefault(key, []).append(path)
            for start in range(1, len(key) - 1):
                self.deeper.setdefault(key[start:], []).append(path)

    def named(self, link: str) -> list[str]:
        """The pages `link` (a `target`) names."""
        linked = page_key(link)
        if not link.startswith("/"):
            return self.exact.get(linked, []) if linked else []
        found = [p for start in range(len(linked)) for p in self.exact.get(linked[start:], ())]
        return found + self.deeper.get(linked, []) if len(linked) >= 2 else found
