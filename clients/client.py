"""The one type a client is (`Client`), with its hook (`Hook`) and its config files (`Setup`)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from clients.entries import ConfigFile
from clients.payloads import Event
from corpus.catalog import Corpus
from corpus.files import CorpusFile

Loaded = dict[str, str]
"""Display path of a file the client loaded -> how it loaded it (`imported by CLAUDE.md`)."""


def _adds_nothing(event: Event, f: CorpusFile) -> bool:
    return False


@dataclass(frozen=True, slots=True)
class Hook:
    """How the client runs `agents-context-hook`: its payloads read into an `Event` (None for a
    payload of another client), its way of adding context, and how much it takes."""

    read: Callable[[dict[str, Any]], Event | None]
    write: Callable[[Event, str], str]
    limit: int
    """The most characters the hook sends in one answer."""
    adds: Callable[[Event, CorpusFile], bool] = _adds_nothing
    """Whether the client adds this rule file itself when this event's file is touched."""
    silent: str = ""
    """What the hook prints when it has nothing to add (Cursor and Cline want a JSON object)."""
    takes: int | None = None
    """The most characters of a hook's added context the client passes on whole, where known."""


@dataclass(frozen=True, slots=True)
class Setup:
    """What `agents-context setup` writes for the client: its files, given our server's entry and
    the hook's command line, and the entry of a server reached at a URL."""

    files: Callable[[dict[str, Any], str], list[ConfigFile]]
    url_entry: Callable[[str], dict[str, Any]]
    note: str = ""
    """What setup says once it wrote them."""


@dataclass(frozen=True, slots=True)
class Client:
    key: str
    """The `--client` value, `setup`'s and the hook's argument: `claude-code`."""
    name: str
    """How answers name it: `Claude Code`."""
    ids: tuple[str, ...]
    """The `clientInfo.name` values it introduces itself with, case-folded."""
    reads_structured: bool
    """Given a tool result with text and structured content, its model reads the structured
    content (as JSON): the server then sends it the text alone, unless asked to explain."""
    loads: Callable[[Corpus], Loaded]
    """The corpus files it puts into the model's context itself at a session's start."""
    hook: Hook | None = None
    setup: Setup | None = None
