"""A client's config file, found, read, edited in memory and rendered back: our server entry and
our hook handlers merged in or taken out, everything of the user's kept.

A file is found through its links (inside the project), read up to a bound, parsed, changed in
memory and compared before it is rendered. A file that does not parse, holds the wrong kind of
value where ours go, or could not be written back as it was read (NaN, a duplicate key, a lone
surrogate, deep nesting) is refused before anything is written. A file whose meaning would not
change is left byte for byte; a rewritten one keeps its byte order mark and CRLF line endings, and
must read back as meaning exactly what was meant. Ours are the server entry named `agents-context`
and the hook handlers whose command holds `agents-context-hook`; taking them out also takes what
this leaves empty (not a TOML table with a header of its own, nor a file reached through a link).

Light on purpose: the standard library, and tomlkit only when a TOML file is edited.
"""

from __future__ import annotations

import copy
import json
import math
import os
import re
import stat
from collections import Counter
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


# --- one file's change: found, read, parsed, changed in memory, checked ---------------------------


@dataclass(frozen=True, slots=True)
class Change:
    path: Path
    relative: str
    before: str | None
    after: str | None
    """None: the file is not there (before) or is deleted (after)."""
    real: Path
    """The file itself: `path` with its links followed (a link is edited where it leads, and kept)."""

    @property
    def changed(self) -> bool:
        return self.before != self.after


def file_change(project: Path, file: ConfigFile, remove: bool) -> Change:
    """The file's text before and after ours go in (or come out); raises `Refused`, writing nothing."""
    path = project / file.relative
    real, plain_path = located(project, path)
    before = read(real, path)
    if before is None and remove:
        return Change(path, file.relative, None, None, real)
    doc = parse(path, before or "", file.toml)
    original = copy.deepcopy(plain(doc))
    try:
        for part in file.parts:
            (part.remove if remove else part.add)(doc)
    except Refused as exc:
        raise Refused(f"{path} cannot take our entries: {exc}, so nothing was written") from None
    wanted = plain(doc)
    if same(wanted, original):
        return Change(path, file.relative, before, before, real)
    nothing = not render(doc, True) if file.toml else any(same(wanted, e) for e in file.empty)
    if remove and nothing and real == plain_path:  # a file reached through a link is kept, emptied
        return Change(path, file.relative, before, None, real)
    return Change(path, file.relative, before, written(path, before, doc, file, remove), real)


def written(path: Path, before: str | None, doc: Doc, file: ConfigFile, remove: bool) -> str:
    """The text to write: `doc` rendered (for TOML tomlkit cannot lay out, `before` with our table
    appended), with the byte order mark and line endings `before` had, and only if it reads back
    as meaning exactly `doc`; else refused. tomlkit cannot place a table after dotted keys such as
    `mcp_servers.x.command = ...`: such a layout gets our table as text at its end."""
    texts = [render(doc, file.toml)]
    if file.toml and file.appended is not None and not remove:
        import tomlkit

        body = (before or "").removeprefix(BOM)
        texts.append((body.rstrip() + "\n\n" if body.strip() else "") + tomlkit.dumps(file.appended))
    for text in texts:
        text = dressed(text, before)
        if reads_as(path, text, plain(doc), file.toml):
            return text
    raise Refused(
        f"{path} is laid out in a way agents-context cannot edit without changing its meaning, so nothing was written"
    )


def dressed(text: str, before: str | None) -> str:
    """`text` with the byte order mark of `before` and, when its first line ends in CRLF, CRLF line endings."""
    if not before or not text:
        return text
    if (end := before.find("\n")) > 0 and before[end - 1] == "\r":
        text = re.sub(r"(?<!\r)\n", "\r\n", text)
    return BOM + text if before.startswith(BOM) else text


def reads_as(path: Path, text: str, wanted: Any, toml: bool) -> bool:
    """Whether `text`, read as setup reads a file, means exactly `wanted`."""
    try:
        text.encode("utf-8")
        return same(plain(parse(path, text, toml)), wanted)
    except (Refused, UnicodeEncodeError):
        return False


def same(a: Any, b: Any) -> bool:
    """Whether two plain documents mean the same: equal values of the same types, so that 1, 1.0
    and true differ (Python's == holds them equal) and NaN is itself."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(map(same, a, b))
    return bool(a == b or (a != a and b != b))  # NaN


# --- where a file is, and reading it -------------------------------------------------------------

LIMIT = 4_000_000
"""The most bytes read of a config file: more than any client's config, less than a mistake."""
BOM = "\ufeff"
_READ = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_BINARY", 0)
_KINDS = ((stat.S_ISDIR, "a folder"), (stat.S_ISFIFO, "a named pipe"), (stat.S_ISSOCK, "a socket"))


def located(project: Path, path: Path) -> tuple[Path, Path]:
    """The file `path` is, its links followed, and where it would be without links. Refused: a link
    that leads nowhere (a missing target, a loop) or out of the project, a file where a folder
    goes, and anything but a regular file."""
    root = Path(os.path.realpath(project))
    relative = path.relative_to(project)
    for step in [*(project / p for p in reversed(relative.parents[:-1])), path]:
        if step.is_symlink() and not step.exists():
            raise Refused(f"{step} is a link that leads nowhere (a missing file or a loop), so nothing was written")
        if step != path and os.path.lexists(step) and not step.is_dir():
            raise Refused(f"{step} is a file where setup needs a folder, so nothing was written")
    real = Path(os.path.realpath(path))
    if not real.is_relative_to(root):
        raise Refused(f"{path} leads to {real}, outside the project, so nothing was written")
    try:
        mode = real.stat().st_mode
    except FileNotFoundError:
        return real, root / relative
    except OSError as exc:
        raise Refused(f"{path} cannot be read ({exc.strerror}), so nothing was written") from None
    if not stat.S_ISREG(mode):
        kind = next((name for test, name in _KINDS if test(mode)), "a device")
        raise Refused(f"{path} is {kind}, not a file, so nothing was written")
    return real, root / relative


def read(path: Path, name: Path | None = None) -> str | None:
    """The text of the regular file at `path` (named `name` in what is said); None when it is not
    there. Never follows a link, never waits on a pipe, reads at most `LIMIT` bytes."""
    name = name or path
    try:
        fd = os.open(path, _READ)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise Refused(f"{name} cannot be read ({exc.strerror}), so nothing was written") from None
    with os.fdopen(fd, "rb") as file:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise Refused(f"{name} is not a regular file, so nothing was written")
        data = file.read(LIMIT + 1)
    if len(data) > LIMIT:
        raise Refused(f"{name} is over {LIMIT // 1_000_000} MB, more than any client config, so nothing was written")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise Refused(f"{name} is not UTF-8 text, so nothing was written") from None


# --- parsing: only what can be written back as it was read ---------------------------------------

DEPTH = 100
"""The deepest nesting setup edits (a client's config nests five or six levels)."""


class _Unwritable(Exception):
    """JSON that parses, but that setup could not write back as it was (said after the file's name)."""


def parse(path: Path, text: str, toml: bool) -> Doc:
    """The file's text (a byte order mark aside) as a document to edit; empty JSON text is an empty
    object. Refused: text that does not parse, and what could not be written back as it was read."""
    text = text.removeprefix(BOM)
    try:
        doc = _parse_toml(path, text) if toml else _parse_json(path, text)
        _check_nesting(path, plain(doc))
    except RecursionError:
        raise Refused(f"{path} nests deeper than {DEPTH} levels, so nothing was written") from None
    return doc


def _parse_json(path: Path, text: str) -> Doc:
    if not text.strip():
        return {}
    try:
        doc = json.loads(text, object_pairs_hook=_object, parse_constant=_constant, parse_float=_float, parse_int=_int)
    except json.JSONDecodeError as exc:
        comments = " (comments are not JSON)" if "//" in text or "/*" in text else ""
        raise Refused(
            f"{path} is not valid JSON{comments}: {exc.msg} at line {exc.lineno}, column {exc.colno}, "
            "so nothing was written"
        ) from None
    except _Unwritable as exc:
        raise Refused(f"{path} {exc}, so nothing was written") from None
    if not isinstance(doc, dict):
        raise Refused(f"{path} holds {_kind(doc)}, not a JSON object, so nothing was written")
    return doc


def _object(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    doc = dict(pairs)
    if len(doc) < len(pairs):
        key = next(k for k, n in Counter(k for k, _ in pairs).items() if n > 1)
        raise _Unwritable(f'has the key "{key}" twice in one object, and setup would keep only the last')
    return doc


def _constant(name: str) -> float:
    raise _Unwritable(f"holds {name}, which is not JSON")


def _float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise _Unwritable(f"holds the number {text}, too large to write back")
    return value


def _int(text: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise _Unwritable(f"holds an integer of {len(text)} digits, too long to read") from None


def _check_nesting(path: Path, doc: Any) -> None:
    """Refuses nesting deeper than `DEPTH`, and strings that are not text (JSON's `\\ud800`)."""
    stack: list[tuple[Any, int]] = [(doc, 0)]
    while stack:
        value, depth = stack.pop()
        if depth > DEPTH:
            raise Refused(f"{path} nests deeper than {DEPTH} levels, so nothing was written")
        if isinstance(value, dict):
            texts, children = list(value), list(value.values())
        else:
            texts, children = ([value] if isinstance(value, str) else []), (value if isinstance(value, list) else [])
        if not all(map(is_text, texts)):
            raise Refused(f"{path} holds a lone surrogate such as \\ud800, which is not text, so nothing was written")
        stack += [(child, depth + 1) for child in children]


def is_text(text: str) -> bool:
    """Whether `text` can be written as UTF-8 (no lone surrogate, such as a file name's undecodable byte)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _parse_toml(path: Path, text: str) -> Doc:
    import tomlkit
    from tomlkit.exceptions import TOMLKitError

    try:
        return tomlkit.parse(text)
    except TOMLKitError as exc:
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
