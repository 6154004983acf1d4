"""A client's config file, read, edited in memory and rendered back: our server entry and our hook
handlers merged in or taken out, everything of the user's kept.

A file is parsed, changed in memory and compared before it is rendered, so a file that does not
parse (or holds the wrong kind of value where ours go) is refused before anything is written. A
file whose meaning would not change is left byte for byte as it is. Ours are the server entry named
`agents-context` and the hook handlers whose command holds `agents-context-hook`; taking them out
also takes the groups, keys and files this leaves empty, and nothing else. JSON is rendered with a
2-space indent, the user's key order kept; TOML is edited with tomlkit, the user's comments and
layout kept, and must read back as meaning what was meant.

Light on purpose: the standard library, and tomlkit only when a TOML file is edited.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

SERVER = "agents-context"
"""Our console script, and the name of our server entry."""
HOOK = "agents-context-hook"
"""Our hook's console script: a handler whose command holds it is ours."""
SHARED = "agents-context-shared"
"""The console script that relays a session to one server all sessions share (`cli.share`)."""

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


def _kind(value: object) -> str:
    names = {dict: "an object", list: "a list", str: "a string", bool: "a boolean", type(None): "null"}
    return next((name for t, name in names.items() if isinstance(value, t)), "a number")


def _child(parent: dict[str, Any], key: str, make: Callable[[], Any] = dict) -> Any:
    value = parent.get(key)
    if value is None:
        parent[key] = value = make()
    if not isinstance(value, dict):
        raise Refused(f'"{key}" is {_kind(value)}, not an object')
    return value


def _list(parent: dict[str, Any], key: str) -> list[Any]:
    value = parent.setdefault(key, [])
    if not isinstance(value, list):
        raise Refused(f'"{key}" is {_kind(value)}, not a list')
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
            if not servers:
                del doc[key]

    return Part(add, remove)


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


# --- one file's change: parse, change in memory, compare -----------------------------------------


@dataclass(frozen=True, slots=True)
class Change:
    path: Path
    relative: str
    before: str | None
    after: str | None
    """None: the file is not there (before) or is deleted (after)."""

    @property
    def changed(self) -> bool:
        return self.before != self.after


def file_change(project: Path, file: ConfigFile, remove: bool) -> Change:
    """The file's text before and after ours go in (or come out); raises `Refused`, writing nothing."""
    path = project / file.relative
    before = read(path)
    if before is None and remove:
        return Change(path, file.relative, None, None)
    doc = parse(path, before or "", file.toml)
    original = copy.deepcopy(plain(doc))
    try:
        for part in file.parts:
            (part.remove if remove else part.add)(doc)
    except Refused as exc:
        raise Refused(f"{path} cannot take our entries: {exc}, so nothing was written") from None
    if plain(doc) == original:
        return Change(path, file.relative, before, before)
    after = render(doc, file.toml)
    if file.toml:
        after = checked_toml(path, before or "", after, plain(doc), None if remove else file.appended)
    if remove and (plain(doc) in file.empty if not file.toml else not after):
        return Change(path, file.relative, before, None)
    return Change(path, file.relative, before, after)


def checked_toml(path: Path, before: str, after: str, wanted: Any, appended: dict[str, Any] | None) -> str:
    """`after` if it reads back as meaning `wanted`; else `before` with our table appended as text
    (tomlkit cannot place a table after dotted keys such as `mcp_servers.x.command = ...`); else
    refused: a layout tomlkit would change the meaning of is never written."""
    if _reads_as(after, wanted):
        return after
    if appended is not None:
        import tomlkit

        text = (before.rstrip() + "\n\n" if before.strip() else "") + tomlkit.dumps(appended)
        if _reads_as(text, wanted):
            return text
    raise Refused(
        f"{path} is laid out in a way agents-context cannot edit without changing its meaning, so nothing was written"
    )


def _reads_as(text: str, wanted: Any) -> bool:
    import tomlkit
    from tomlkit.exceptions import ParseError

    try:
        return bool(plain(tomlkit.parse(text)) == wanted)
    except ParseError:
        return False


def read(path: Path) -> str | None:
    """The file's text; None when it is not there."""
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    except UnicodeDecodeError:
        raise Refused(f"{path} is not UTF-8 text, so nothing was written") from None
    except OSError as exc:
        raise Refused(f"{path} cannot be read ({exc.strerror}), so nothing was written") from None


def parse(path: Path, text: str, toml: bool) -> Doc:
    """The file's text as a document to edit (empty JSON text is an empty object)."""
    return _parse_toml(path, text) if toml else _parse_json(path, text)


def _parse_json(path: Path, text: str) -> Doc:
    if not text.strip():
        return {}
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        comments = " (comments are not JSON)" if "//" in text or "/*" in text else ""
        raise Refused(
            f"{path} is not valid JSON{comments}: {exc.msg} at line {exc.lineno}, column {exc.colno}, "
            "so nothing was written"
        ) from None
    if not isinstance(doc, dict):
        raise Refused(f"{path} holds {_kind(doc)}, not a JSON object, so nothing was written")
    return doc


def _parse_toml(path: Path, text: str) -> Doc:
    import tomlkit
    from tomlkit.exceptions import ParseError

    try:
        return tomlkit.parse(text)
    except ParseError as exc:
        raise Refused(f"{path} is not valid TOML: {exc}, so nothing was written") from None


def plain(value: Any) -> Any:
    """Plain Python values (a tomlkit item unwrapped), to compare meaning rather than layout."""
    return value.unwrap() if hasattr(value, "unwrap") else value


def render(doc: Doc, toml: bool) -> str:
    """The document as text: JSON with a 2-space indent, TOML as tomlkit lays it out; a final newline."""
    if not toml:
        return json.dumps(doc, indent=2, ensure_ascii=False) + "\n"
    import tomlkit

    text = tomlkit.dumps(doc).rstrip()
    return text + "\n" if text else ""
