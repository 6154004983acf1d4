"""The one owner of a docs file's text once it is indexed: the live index holds no docs file's
text (see `live.changes.holds_text`), so a hit's lines are read here, from the file, and kept only
if the file still has the content it was indexed with. Retrieval never reads a file: it ranks
positions and term ids, and gets its hits' text from here (`held`) before it renders them.
"""

from __future__ import annotations

import os
import threading
from collections import OrderedDict

from corpus.catalog import CorpusFile
from corpus.errors import Moved
from corpus.read import read_again
from retrieval.chunks.units import Unit

RECENT_CHARS = 1 << 20
"""The texts read last are kept up to this many characters, so the hits of one answer read each
file once."""


class _Recent:
    """The texts of the docs files read last, by where the file is and its digest: a text is only
    ever the one its digest names."""

    def __init__(self, chars: int) -> None:
        self.chars = chars
        self.held = 0
        self.texts: OrderedDict[tuple[str, str, str], str] = OrderedDict()
        self.lock = threading.Lock()

    def read(self, f: CorpusFile) -> str:
        key = (str(f.root.path), f.rel, f.digest)
        with self.lock:
            text = self.texts.get(key)
            if text is not None:
                self.texts.move_to_end(key)
                return text
        text = read_again(os.path.join(f.root.path, *f.rel.split("/")), f.size, f.digest)  # noqa: PTH118
        if text is None:
            raise Moved(f"{f.path} changed since it was indexed")
        with self.lock:
            if len(text) <= self.chars and key not in self.texts:
                self.texts[key] = text
                self.held += len(text)
                while self.held > self.chars:
                    self.held -= len(self.texts.popitem(last=False)[1])
        return text


_recent = _Recent(RECENT_CHARS)


def content(f: CorpusFile) -> str:
    """The file's text as indexed: its `text`, or, for a file not `held`, read from disk and
    checked against the digest it was indexed with (`Moved` when the file no longer has that
    content). A text read again soon is not read from disk again: it is the text indexed,
    whatever the file holds by now (an answer re-checks its hits' files by stat)."""
    return f.text if f.held else _recent.read(f)


def held(unit: Unit) -> Unit | None:
    """`unit` holding its own text (read now if the index does not hold it), or None if its file
    no longer has the content it was indexed with."""
    if isinstance(unit.source, str):
        return unit
    try:
        text = content(unit.source)
    except Moved:
        return None
    source = text if unit.end < 0 else text[unit.at : unit.end]
    return unit._replace(source=source, at=0, end=-1)
