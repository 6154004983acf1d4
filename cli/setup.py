"""`agents-context setup CLIENT`: our MCP server and our hooks, written into a project's own
configuration files for one client, merged with what is there.

Each client's files are parsed, changed in memory, compared and only then written, so a file that
does not parse (or holds the wrong kind of value where ours go) is refused before anything is
written. A file whose meaning would not change is left byte for byte as it is, so a second run
changes nothing. `--remove` takes out our server entry (named `agents-context`) and our hook
handlers (their command holds `agents-context-hook`), then the groups, keys and files that this
leaves empty, and nothing else. JSON is written with a 2-space indent, the user's key order kept; TOML
is edited with tomlkit, the user's comments and layout kept.

Light on purpose: the standard library, and tomlkit only when a TOML file is edited; no MCP SDK,
no pydantic, no index.
"""

from __future__ import annotations

import argparse
import copy
import difflib
import json
import shlex
import sys
from collections.abc import Callable
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Any
from urllib.parse import urlparse
from urllib.request import url2pathname

from corpus.clients import HOOK_CLIENTS

SERVER = "agents-context"
HOOK = "agents-context-hook"
CLIENTS = {
    "claude-code": "Claude Code",
    "codex": "Codex",
    "cursor": "Cursor",
    "gemini-cli": "Gemini CLI",
    "vscode": "VS Code",
}
SESSION = "startup|resume|clear|compact"
TIMEOUT_S = 10
VSCODE_HOOKS = (
    "VS Code runs the hooks Claude Code reads from .claude/settings.json: "
    "`agents-context setup claude-code` writes them."
)

Doc = Any
"""A parsed file: a JSON object (dict) or a tomlkit document (a dict too)."""


class Refused(Exception):
    """A file setup will not change, said in one sentence; nothing has been written."""


# --- how the server and the hook are started ---------------------------------------------------


@dataclass(frozen=True, slots=True)
class Launch:
    command: str
    prefix: tuple[str, ...]
    """The arguments before ours (`--from CHECKOUT agents-context` for uvx)."""
    hook: str
    """The hook's command line, without the client's name."""

    def args(self, project: Path, hooked: bool = False) -> list[str]:
        """The server's arguments; `hooked`: the client runs our hook (`--hooked`)."""
        return [*self.prefix, "--project", str(project), *(["--hooked"] if hooked else [])]


def launch(command: str | None = None) -> Launch:
    """`--command CMD`; else this console script's absolute path; else uvx from this checkout."""
    if command is not None:
        return Launch(command, (), _hook_beside(Path(command)))
    script = console_script()
    if script is not None:
        return Launch(str(script), (), _hook_beside(script))
    source = checkout()
    if source is not None:
        return Launch("uvx", ("--from", str(source), SERVER), _words("uvx", "--from", str(source), HOOK))
    return Launch(SERVER, (), HOOK)


def console_script() -> Path | None:
    """The `agents-context` script this process runs from, resolved, unless it lives in uv's cache
    (a `uvx` run's environment, which `uv cache prune` may remove)."""
    argv0 = Path(sys.argv[0])
    if argv0.stem != SERVER or argv0.suffix not in ("", ".exe"):
        return None
    for candidate in (argv0, argv0.with_name(argv0.name + ".exe")):  # Windows strips .exe from argv[0]
        if candidate.is_file():
            resolved = candidate.resolve()
            return None if any(part.startswith("archive-v") for part in resolved.parts) else resolved
    return None


def checkout() -> Path | None:
    """The source folder of this agents-context: this tree, or the local folder it was installed from."""
    here = Path(__file__).resolve().parents[1]
    if (here / "pyproject.toml").is_file() and (here / "server.py").is_file():
        return here
    try:
        direct = json.loads(metadata.distribution(SERVER).read_text("direct_url.json") or "{}")
    except (metadata.PackageNotFoundError, ValueError):
        return None
    url = direct.get("url", "") if isinstance(direct, dict) else ""
    if not url.startswith("file:") or "dir_info" not in direct:
        return None
    return Path(url2pathname(urlparse(url).path))


def _hook_beside(command: Path) -> str:
    if command.is_absolute() and command.stem == SERVER:
        return _words(str(command.with_name(HOOK + command.suffix)))
    return HOOK


def _words(*words: str) -> str:
    return " ".join(shlex.quote(w) for w in words)


# --- merging: our entries in and out of a parsed file --------------------------------------------


@dataclass(frozen=True, slots=True)
class Part:
    add: Callable[[Doc], None]
    remove: Callable[[Doc], None]


@dataclass(frozen=True, slots=True)
class ConfigFile:
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


def server_part(key: str, entry: dict[str, Any], make: Callable[[], Any] = dict) -> Part:
    """Our entry under `key` (`mcpServers`, `servers`, `mcp_servers`); a user's own keys in it are kept."""

    def add(doc: Doc) -> None:
        servers = _child(doc, key, make)
        current = servers.get(SERVER)
        if not isinstance(current, dict):
            servers[SERVER] = _fresh(servers, entry)
            return
        for name, value in entry.items():
            if _plain(current.get(name)) != value:
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


# --- each client's files -------------------------------------------------------------------------


def files(client: str, project: Path, how: Launch) -> list[ConfigFile]:
    """The files `setup CLIENT` writes, each with what goes into it."""
    server = {"command": how.command, "args": how.args(project, hooked=client in HOOK_CLIENTS)}
    return _CLIENT_FILES[client](server, f"{how.hook} {client}")


def _handler(hook: str) -> dict[str, Any]:
    return {"type": "command", "command": hook, "timeout": TIMEOUT_S}


def _claude_code(server: dict[str, Any], hook: str) -> list[ConfigFile]:
    tools = "Read|Edit|Write|NotebookEdit|Bash"
    events = (("SessionStart", SESSION), ("PreToolUse", tools), ("PostToolUse", tools))
    return [
        ConfigFile(".mcp.json", (server_part("mcpServers", server),)),
        ConfigFile(".claude/settings.json", (grouped_hooks(events, _handler(hook)),)),
    ]


def _codex(server: dict[str, Any], hook: str) -> list[ConfigFile]:
    tools = "^(Bash|apply_patch)$"
    events = (("SessionStart", SESSION), ("PreToolUse", tools), ("PostToolUse", tools))
    entry = {**server, "required": True}  # `codex exec` waits only for a required server's tools
    config = (server_part("mcp_servers", entry, _tables),)
    return [
        ConfigFile(".codex/config.toml", config, toml=True, appended={"mcp_servers": {SERVER: entry}}),
        ConfigFile(".codex/hooks.json", (grouped_hooks(events, _handler(hook)),)),
    ]


def _cursor(server: dict[str, Any], hook: str) -> list[ConfigFile]:
    start = {"command": hook, "timeout": TIMEOUT_S}
    after = {"command": hook, "matcher": "Read|Write|Shell", "timeout": TIMEOUT_S}
    hooks = (flat_hooks((("sessionStart", start), ("postToolUse", after))),)
    return [
        ConfigFile(".cursor/mcp.json", (server_part("mcpServers", server),)),
        ConfigFile(".cursor/hooks.json", hooks, empty=({}, {"version": 1})),
    ]


def _gemini_cli(server: dict[str, Any], hook: str) -> list[ConfigFile]:
    handler = {"name": SERVER, **_handler(hook), "timeout": TIMEOUT_S * 1000}  # milliseconds
    tools = "read_file|read_many_files|write_file|replace|run_shell_command"
    parts = (
        server_part("mcpServers", {**server, "trust": True}),
        grouped_hooks((("SessionStart", ""), ("AfterTool", tools)), handler),
    )
    return [ConfigFile(".gemini/settings.json", parts)]


def _vscode(server: dict[str, Any], hook: str) -> list[ConfigFile]:
    """The server only: VS Code runs the hooks of Claude Code's `.claude/settings.json`."""
    return [ConfigFile(".vscode/mcp.json", (server_part("servers", {"type": "stdio", **server}),))]


_CLIENT_FILES: dict[str, Callable[[dict[str, Any], str], list[ConfigFile]]] = {
    "claude-code": _claude_code,
    "codex": _codex,
    "cursor": _cursor,
    "gemini-cli": _gemini_cli,
    "vscode": _vscode,
}


def _tables() -> Any:
    import tomlkit

    return tomlkit.table(is_super_table=True)


# --- planning: parse, change in memory, compare --------------------------------------------------


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


def plan(client: str, project: Path, how: Launch, remove: bool = False) -> list[Change]:
    """Every file's change; raises `Refused` before anything is written."""
    return [_change(project, f, remove) for f in files(client, project, how)]


def _change(project: Path, file: ConfigFile, remove: bool) -> Change:
    path = project / file.relative
    before = _read(path)
    if before is None and remove:
        return Change(path, file.relative, None, None)
    doc = _parse(path, before or "", file.toml)
    original = copy.deepcopy(_plain(doc))
    try:
        for part in file.parts:
            (part.remove if remove else part.add)(doc)
    except Refused as exc:
        raise Refused(f"{path} cannot take our entries: {exc}, so nothing was written") from None
    if _plain(doc) == original:
        return Change(path, file.relative, before, before)
    after = _render(doc, file.toml)
    if file.toml:
        after = _checked_toml(path, before or "", after, _plain(doc), None if remove else file.appended)
    if remove and (_plain(doc) in file.empty if not file.toml else not after):
        return Change(path, file.relative, before, None)
    return Change(path, file.relative, before, after)


def _checked_toml(path: Path, before: str, after: str, wanted: Any, appended: dict[str, Any] | None) -> str:
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
        return bool(_plain(tomlkit.parse(text)) == wanted)
    except ParseError:
        return False


def _read(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    except UnicodeDecodeError:
        raise Refused(f"{path} is not UTF-8 text, so nothing was written") from None
    except OSError as exc:
        raise Refused(f"{path} cannot be read ({exc.strerror}), so nothing was written") from None


def _parse(path: Path, text: str, toml: bool) -> Doc:
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


def _plain(value: Any) -> Any:
    """Plain Python values (a tomlkit item unwrapped), to compare meaning rather than layout."""
    return value.unwrap() if hasattr(value, "unwrap") else value


def _render(doc: Doc, toml: bool) -> str:
    if not toml:
        return json.dumps(doc, indent=2, ensure_ascii=False) + "\n"
    import tomlkit

    text = tomlkit.dumps(doc).rstrip()
    return text + "\n" if text else ""


# --- writing and telling -------------------------------------------------------------------------


def apply(changes: list[Change], project: Path) -> None:
    for change in changes:
        if not change.changed:
            continue
        if change.after is None:
            change.path.unlink()
            folder = change.path.parent
            if folder != project and not any(folder.iterdir()):
                folder.rmdir()  # the folder setup made for it
            continue
        change.path.parent.mkdir(parents=True, exist_ok=True)
        temporary = change.path.with_name(f".{change.path.name}.agents-context-setup")
        with temporary.open("w", encoding="utf-8", newline="\n") as out:
            out.write(change.after)
        temporary.replace(change.path)


def diff(change: Change) -> str:
    before = [] if change.before is None else change.before.splitlines(keepends=True)
    after = [] if change.after is None else change.after.splitlines(keepends=True)
    old = "/dev/null" if change.before is None else f"a/{change.relative}"
    new = "/dev/null" if change.after is None else f"b/{change.relative}"
    return "".join(difflib.unified_diff(before, after, old, new))


def _verb(change: Change) -> str:
    if change.before is None:
        return "created"
    return "deleted" if change.after is None else "updated"


def report(client: str, project: Path, changes: list[Change], remove: bool, dry_run: bool) -> str:
    name, done = CLIENTS[client], [c for c in changes if c.changed]
    lines = [diff(c).rstrip("\n") for c in done] if dry_run else [f"{_verb(c)} {c.path}" for c in done]
    if not done:
        lines.append(
            f"agents-context is not set up for {name} in {project}: nothing to remove."
            if remove
            else f"agents-context is already set up for {name} in {project}: nothing changed."
        )
    elif dry_run:
        lines.append(f"Dry run: {len(done)} file(s) would change; nothing was written.")
    else:
        lines.append(
            f"agents-context is removed from {name}'s files in {project}."
            if remove
            else f"agents-context is set up for {name} in {project}; restart {name} to load it."
        )
    if client == "vscode" and not remove:
        lines.append(VSCODE_HOOKS)
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    """`agents-context setup CLIENT [--project DIR] [--dry-run] [--remove] [--command CMD]`."""
    project = (args.project or Path.cwd()).expanduser().resolve()
    try:
        if not project.is_dir():
            raise Refused(f"{project} is not a folder, so nothing was written")
        changes = plan(args.client, project, launch(args.server_command), args.remove)
        if not args.dry_run:
            apply(changes, project)
    except (Refused, OSError) as exc:
        print(f"agents-context setup: {exc}", file=sys.stderr)  # noqa: T201 - a CLI command
        return 2
    print(report(args.client, project, changes, args.remove, args.dry_run))  # noqa: T201 - a CLI command
    return 0
