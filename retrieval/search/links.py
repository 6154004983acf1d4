"""Links between corpus files: a hit lists the sections its relative markdown links point to."""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import unquote, urlsplit

from corpus.catalog import Corpus
from corpus.identity import split_display
from retrieval.chunks.links import within, written
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
    """(words, href) of every inline link of `markdown`, outside code fences (`written`)."""
    return tuple((match.group(1), match.group(2)) for _, match in written(markdown))
