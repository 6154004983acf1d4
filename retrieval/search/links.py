"""Links between corpus files: a hit lists the sections its relative markdown links point to."""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from urllib.parse import unquote, urlsplit

from corpus.catalog import Corpus
from corpus.identity import split_display
from retrieval.chunks.links import within
from retrieval.chunks.sections import markdown as commonmark
from retrieval.chunks.units import Unit


# A link from a hit to a corpus file or section, as the tools' output schema shows it too
# (`Hit.links`): its field docstrings are the field descriptions there, and it has no class
# docstring because that would become the schema's description.
@dataclass(frozen=True, slots=True)
class LinkTo:
    text: str
    """The link text."""
    path: str
    """Display path of the linked file."""
    uri: str
    """URI of the linked section (#anchor) or file."""

    __pydantic_config__ = {"use_attribute_docstrings": True}  # noqa: RUF012 - read by pydantic, never mutated


def links(unit: Unit, corpus: Corpus) -> tuple[LinkTo, ...]:
    """Relative links in `unit` that land on a file of the same root (anchors kept); none from a
    unit that does not hold its text (a docs hit before `live.texts.held` gave it its lines: the
    answer finds its links once it has)."""
    if not isinstance(unit.source, str):
        return ()
    label, rel = split_display(unit.path)
    found: list[LinkTo] = []
    seen: set[str] = set()
    for text, href in hrefs(unit.text):
        parts = urlsplit(href)
        if parts.scheme or parts.netloc:
            continue  # http:, mailto:, agents:... are not relative links
        target = rel if not parts.path else within(rel, unquote(parts.path))
        if target is None:
            continue  # leaves the root
        f = corpus.files.get(f"{label}/{target}")
        if f is None:
            continue
        uri = f"{f.uri}#{parts.fragment}" if parts.fragment else f.uri
        if uri not in seen:
            seen.add(uri)
            found.append(LinkTo(text, f.path, uri))
    return tuple(found)


def hrefs(markdown: str) -> tuple[tuple[str, str], ...]:
    """(text, href) of every markdown link in `markdown`. Parsed once per text (every hit of every
    answer lists its links); a text without `[` has none (autolinks carry a scheme, so they are
    never relative links)."""
    return _hrefs(markdown) if "[" in markdown else ()


@lru_cache(maxsize=1024)  # keyed by the text: a bound in texts kept alive, too
def _hrefs(markdown: str) -> tuple[tuple[str, str], ...]:
    pairs: list[tuple[str, str]] = []
    for block in commonmark().parse(markdown):
        for i, token in enumerate(block.children or []):
            if token.type == "link_open":
                href = str(token.attrs.get("href", ""))
                text = ""
                for inner in (block.children or [])[i + 1 :]:
                    if inner.type == "link_close":
                        break
                    text += inner.content
                pairs.append((text, href))
    return tuple(pairs)
