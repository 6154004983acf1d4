"""Claude Desktop: known by the name it connects with; it loads no project file itself."""

from __future__ import annotations

from clients.client import Client, Loaded
from corpus.catalog import Corpus


def loads(corpus: Corpus) -> Loaded:
    return {}


CLIENT = Client("claude-desktop", "Claude Desktop", ("claude-ai",), False, loads)
