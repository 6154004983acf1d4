"""What a client's config file holds of ours, as parts that add themselves to a parsed file and
take themselves out: our server entry (`server_part`) and our hook handlers (`grouped_hooks`,
`flat_hooks`). Each client's module (`clients/*.py`) lists its files with these; `cli.configs`
finds, reads, edits and renders the files.

Light on purpose: the standard library, and tomlkit only when a TOML file is edited.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

SERVER = "agents-context"
"""Our console script, and the name of our server entry."""
HOOK = "agents-context-hook"
"""Our hook's console script: a handler whose command holds it is ours."""
SHARED = "agents-context-shared"
"""The console script that relays a session to one server all sessions share (`shared.relay`)."""

Doc = Any
"""A parsed file: a JSON object (dict) or a tomlkit document (a dict too)."""


class Refused(Exception):
    """A file setup will not change, said in one sentence; nothing has been written."""


# --- merging: our entries in and out of a parsed file --------------------------------------------


@dataclass(frozen=True, slots=True)
class Part:
    """One thing of ours in a file: `add` puts it into a parsed file, `remove` takes it out, in place."""

    add: Callable[[Doc], None]
    remove: Callable[[Doc], None]


@dataclass(frozen=True, slots=True)
class ConfigFile:
    """One of a client's config files, relative to the project, and the parts of ours it holds."""

    relative: str
    parts: tuple[Part, ...]
    toml: bool = False
    empty: tuple[dict[str, Any], ...] = ({},)
    """What the file holds when nothing but ours was in it (JSON)."""
    appended: dict[str, Any] | None = None
    """TOML: our table, appended as text where tomlkit cannot place it."""


def kind(value: object) -> str:
    """How a value is named in a refusal: `an object`, `a list`, `a number`."""
    names = {dict: "an object", list: "a list", str: "a string", bool: "a boolean", type(None): "null"}
    return next((name for t, name in names.items() if isinstance(value, t)), "a number")


def _child(parent: dict[str, Any], key: str, make: Callable[[], Any] = dict) -> Any:
    value = parent.get(key)
    if value is None:
        parent[key] = value = make()
    if not isinstance(value, dict):
        raise Refused(f'"{key}" is {kind(value)}, not an object')
    return value


def _list(parent: dict[str, Any], key: str) -> list[Any]:
    value = parent.setdefault(key, [])
    if not isinstance(value, list):
        raise Refused(f'"{key}" is {kind(value)}, not a list')
    return value


STARTED = ("command", "args", "env", "cwd", "env_vars")
"""The keys of a server the client starts: they mean nothing to (or break, in Codex) a URL's entry."""
REACHED = ("url", "httpUrl", "type", "headers", "http_headers", "env_http_headers", "bearer_token_env_var")
"""The keys of a server the client reaches at a URL."""


def server_part(key: str, entry: dict[str, Any], make: Callable[[], Any] = dict) -> Part:
    """Our entry under `key` (`mcpServers`, `servers`, `mcp_servers`); a user's own keys in it are
    kept, but for those of the other transport (`STARTED` once a URL is set up, `REACHED` once a
    command is)."""

    def add(doc: Doc) -> None:
        servers = _child(doc, key, make)
        current = servers.get(SERVER)
        if not isinstance(current, dict):
            servers[SERVER] = _fresh(servers, entry)
            return
        other = REACHED if "command" in entry else STARTED
        for name in [k for k in other if k in current and k not in entry]:
            del current[name]
        for name, value in entry.items():
            if plain(current.get(name)) != value:
                current[name] = value

    def remove(doc: Doc) -> None:
        servers = doc.get(key)
        if isinstance(servers, dict) and SERVER in servers:
            del servers[SERVER]
            if not servers and _implicit(servers):
                del doc[key]

    return Part(add, remove)


def _implicit(servers: Any) -> bool:
    """Whether a container left empty goes with our entry. JSON cannot tell an empty object the user
    wrote from one setup made: both go. TOML can: setup writes no `[mcp_servers]` header, so a table
    with one (or an inline table) is the user's and stays, with its comments."""
    if not hasattr(servers, "as_string"):
        return True
    is_super_table = getattr(servers, "is_super_table", None)
    return bool(is_super_table and is_super_table())


def _fresh(servers: dict[str, Any], entry: dict[str, Any]) -> Any:
    """A new entry of the container's own kind (a TOML table, inline in an inline table)."""
    if not hasattr(servers, "as_string"):
        return dict(entry)
    import tomlkit
    from tomlkit.items import InlineTable

    table = tomlkit.inline_table() if isinstance(servers, InlineTable) else tomlkit.table()
    table.update(entry)
    if not isinstance(servers, InlineTable):
        table.add(tomlkit.nl())  # a blank line before whatever table follows
    return table


def _ours(handler: object) -> bool:
    return isinstance(handler, dict) and HOOK in str(handler.get("command", ""))


def _handlers(group: object) -> list[Any]:
    """A matcher group's handlers (Claude Code, Codex and Gemini CLI nest them)."""
    if isinstance(group, dict) and isinstance(group.get("hooks"), list):
        return group["hooks"]  # type: ignore[no-any-return]
    return []


def _strip_groups(groups: list[Any]) -> bool:
    """Takes our handlers out of each group, and the groups that left empty. Whether any was ours."""
    removed, kept = False, []
    for group in groups:
        handlers = _handlers(group)
        if any(_ours(h) for h in handlers):
            removed = True
            handlers[:] = [h for h in handlers if not _ours(h)]
            if not handlers:
                continue
        kept.append(group)
    groups[:] = kept
    return removed


def _strip_flat(handlers: list[Any]) -> bool:
    """Takes our handlers out of a flat list (Cursor's). Whether any was ours."""
    kept = [h for h in handlers if not _ours(h)]
    removed = len(kept) < len(handlers)
    handlers[:] = kept
    return removed


def _remove_hooks(strip: Callable[[list[Any]], bool]) -> Callable[[Doc], None]:
    def remove(doc: Doc) -> None:
        hooks = doc.get("hooks")
        if not isinstance(hooks, dict):
            return
        removed = False
        for event in list(hooks):
            if isinstance(hooks[event], list) and strip(hooks[event]):
                removed = True
                if not hooks[event]:
                    del hooks[event]
        if removed and not hooks:
            del doc["hooks"]

    return remove


def grouped_hooks(events: tuple[tuple[str, str], ...], handler: dict[str, Any]) -> Part:
    """`hooks.EVENT: [{"matcher": ..., "hooks": [handler]}]`, one group of ours per event."""

    def add(doc: Doc) -> None:
        hooks = _child(doc, "hooks")
        for event, matcher in events:
            groups = _list(hooks, event)
            found = [(g.get("matcher"), h) for g in groups for h in _handlers(g) if _ours(h)]
            if found != [(matcher, handler)]:
                _strip_groups(groups)
                groups.append({"matcher": matcher, "hooks": [dict(handler)]})

    return Part(add, _remove_hooks(_strip_groups))


def flat_hooks(events: tuple[tuple[str, dict[str, Any]], ...]) -> Part:
    """Cursor's `{"version": 1, "hooks": {"EVENT": [handler]}}`."""

    def add(doc: Doc) -> None:
        if not doc:
            doc["version"] = 1
        hooks = _child(doc, "hooks")
        for event, handler in events:
            handlers = _list(hooks, event)
            if [h for h in handlers if _ours(h)] != [handler]:
                _strip_flat(handlers)
                handlers.append(dict(handler))

    return Part(add, _remove_hooks(_strip_flat))


def toml_tables() -> Any:
    """An empty TOML table that holds only tables (`[mcp_servers.NAME]`), for `server_part`'s `make`."""
    import tomlkit

    return tomlkit.table(is_super_table=True)


def plain(value: Any) -> Any:
    """Plain Python values (a tomlkit item unwrapped), to compare meaning rather than layout."""
    return value.unwrap() if hasattr(value, "unwrap") else value
