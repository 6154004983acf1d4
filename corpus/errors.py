"""The few ways a corpus request can fail, each with a message that says what to do next."""

from __future__ import annotations

from corpus.names import printable


class CorpusError(Exception):
    """A corpus request that cannot be served; its message is always printable (see `printable`)."""

    def __init__(self, message: str = "") -> None:
        super().__init__(printable(message))


class RootNotFound(CorpusError):
    """No corpus root where one was asked for."""


class NotInCorpus(CorpusError):
    """A path or URI that names nothing the corpus serves (outside a root, skipped, unknown)."""


class Missing(NotInCorpus):
    """No file at a path the corpus would serve (never there, or deleted)."""


class Moved(CorpusError):
    """A docs file whose text the index does not hold (see `live.texts.content`) no longer has the
    content it was indexed with: it changed, or went, since. Re-index it and ask again."""


class NotHeld(CorpusError):
    """A file's text asked of a `CorpusFile` that does not hold it (a docs file in the live
    index): `live.texts.content` is what reads it."""
