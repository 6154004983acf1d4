"""Every client the server and its commands tell apart, and what is asked of them all: who a
connecting client is (`identify`), and which files it has in its model's context (`loaded_by`)."""

from __future__ import annotations

from collections.abc import Mapping

from clients import claude_code, claude_desktop, cline, codex, cursor, gemini_cli, vscode
from clients.client import Client, Loaded
from corpus.catalog import Corpus

CLIENTS: tuple[Client, ...] = (
    claude_code.CLIENT,
    codex.CLIENT,
    gemini_cli.CLIENT,
    cursor.CLIENT,
    vscode.CLIENT,
    claude_desktop.CLIENT,
    cline.CLIENT,
)
"""Every client the server tells apart; any other is unknown and gets everything."""

BY_KEY: Mapping[str, Client] = {c.key: c for c in CLIENTS}
HOOKED: Mapping[str, Client] = {c.key: c for c in CLIENTS if c.hook is not None}
"""The clients `agents-context-hook` speaks to, by the argument it is given."""
SET_UP: Mapping[str, Client] = {c.key: c for c in sorted(CLIENTS, key=lambda c: c.key) if c.setup is not None}
"""The clients `agents-context setup` writes configuration for."""
UNKNOWN = "other"
"""The `--client` value for a client treated as unknown, whatever it says it is."""
BY_HOOK = "added by the agents-context hook at the session's start"


def identify(client_name: str | None) -> Client | None:
    """The known client that introduces itself as `client_name` (`clientInfo.name`), or None."""
    folded = (client_name or "").strip().casefold()
    return next((c for c in CLIENTS if folded in c.ids), None)


def loaded_by(client: Client | None, corpus: Corpus, hooked: bool = False) -> Loaded:
    """The files `client` puts into the model's context itself, by display path (none for an
    unknown client); with `hooked` (the client runs our hook, `--hooked`), also every pinned file,
    which the hook adds at each session's start and after each compaction."""
    if client is None:
        return {}
    loaded = client.loads(corpus)
    if hooked and client.hook is not None:
        loaded.update({f.path: BY_HOOK for f in corpus.files.agents() if f.pinned and f.path not in loaded})
    return loaded
