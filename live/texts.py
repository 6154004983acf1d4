"""The one owner of a docs file's text once it is indexed: the live index holds no docs file's
text (see `live.changes.holds_text`), so a hit's lines are read here, from the file, and kept only
if the file still has the content it was indexed with. Retrieval never reads a file: it ranks
positions and term ids, and gets its hits' text from here (`held`) before it renders them.

Every answer reads its hits' files again and checks their bytes, once a file: an index entry whose
stat still matches the disk can hold text the disk no longer has (two files written in one tick of
the file system's clock share size and times), and a text kept from an earlier answer would show
it as current.
"""

from __future__ import annotations

import os

from corpus.errors import Moved, NotHeld
from corpus.files import CorpusFile
from corpus.read import read_again
from retrieval.chunks.units import Unit
from retrieval.search.request import Answer, Held

Read = dict[tuple[str, str], str | None]
"""The texts one answer has read, by display path and digest (None: the file no longer has that
content), so the hits of one answer read each file once."""


def content(f: CorpusFile, read: Read | None = None) -> str:
    """The file's text as indexed: its `text`, or, for a file not `held`, read from disk and
    checked against the digest it was indexed with (`Moved` when the file no longer has that
    content); with `read`, each file once."""
    if f.held:
        return f.text
    key = (f.path, f.digest)
    if read is not None and key in read:
        text = read[key]
    else:
        text = read_again(os.path.join(f.root.path, *f.rel.split("/")), f.size, f.digest)  # noqa: PTH118
        if read is not None:
            read[key] = text
    if text is None:
        raise Moved(f"{f.path} changed since it was indexed")
    return text


def held(unit: Unit, read: Read | None = None) -> Unit | None:
    """`unit` holding its own text (read now if the index does not hold it), or None if its file
    no longer has the content it was indexed with; `read` as for `content`."""
    if isinstance(unit.source, str):
        return unit
    try:
        text = content(unit.source, read)
    except Moved:
        return None
    source = text if unit.end < 0 else text[unit.at : unit.end]
    return unit._replace(source=source, at=0, end=-1)


def in_memory(found: Answer) -> Held:
    """`found` as held, when every hit's text is in memory (the units of `.AGENTS` roots, whose
    text the index holds: `context_for_path`'s); `NotHeld` if one is not, which is a bug of the
    caller: such an answer goes through `live.answers.holding`."""
    for doc in found.docs:
        if not isinstance(doc.unit.source, str):
            raise NotHeld(f"{doc.unit.path}: a hit whose text is not in memory must be read (live.answers.holding)")
    return Held(found)
