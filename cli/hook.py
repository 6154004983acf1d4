"""`agents-context-hook CLIENT` (also `agents-context hook CLIENT`): run by a coding agent's host
as a hook, it adds to the model's context what the host would not: at a session's start (and
after a compaction) the pinned files the client does not load itself; when a file is touched,
the rules that apply to it as `context_for_path` decides, less what the client adds itself, each
rule once per session. It reads the host's JSON on stdin and prints the host's way of adding
context (`HOSTS`).

Never in the way: it always exits 0; on any problem it prints nothing and logs why to
`hook.log` in the user's state folder; it never writes into the project. A payload of another
host (several hosts run `.claude/settings.json` hooks) is recognised and ignored.

Import-light, as it runs before every file the agent touches: no MCP SDK, pydantic or numpy.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shlex
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

from cli.state import state_dir
from corpus.catalog import Corpus, load
from corpus.clients import BY_KEY, Client, loaded_by
from corpus.files import CorpusFile
from corpus.roots import DEFAULT_ROOT_NAMES, has_conventional_files, make_roots, relative_source
from retrieval.search.applies import Applicable, applicable
from writes.atomic import write_atomic
from writes.locks import locked

SESSION_DAYS = 7
"""A session's record unused this long is removed."""


@dataclass(frozen=True, slots=True)
class Event:
    """What happened, read from a host's payload."""

    start: bool
    """A session started (or resumed, or was cleared or compacted); else a file was touched."""
    session: str
    project: Path
    cwd: Path
    reset: bool = False
    """Forget what this session was given (a new session, a clear, a compaction)."""
    paths: tuple[str, ...] = ()
    tool: str = ""
    name: str = ""
    """The host's event name, echoed in its output."""


@dataclass(frozen=True, slots=True)
class Host:
    client: str
    """The key of `corpus.clients.BY_KEY`."""
    read: Callable[[dict[str, Any]], Event | None]
    write: Callable[[Event, str], str]
    limit: int
    """The most characters of context the host takes whole in one output."""
    adds: Callable[[Event, CorpusFile], bool] = lambda event, f: False
    """Whether the host adds this rule file itself when this event's file is touched."""
    silent: str = ""
    """What it prints when it has nothing to add (Cursor and Cline want a JSON object)."""


# --- reading payloads --------------------------------------------------------------------------


def _common(payload: dict[str, Any], project_env: str) -> tuple[str, Path, Path] | None:
    """Session id, project and working folder of a Claude-Code-shaped payload (`session_id`,
    `hook_event_name`, `cwd`), or None for another host's."""
    session, cwd = payload.get("session_id"), payload.get("cwd")
    if not isinstance(session, str) or not isinstance(payload.get("hook_event_name"), str):
        return None
    folder = Path(cwd) if isinstance(cwd, str) and cwd else Path.cwd()
    project = Path(os.environ.get(project_env) or folder)
    agent = payload.get("agent_id")
    return (f"{session}.{agent}" if isinstance(agent, str) and agent else session), project, folder


Paths = Callable[[str, dict[str, Any], Path], "tuple[str, ...] | None"]
"""The files a tool call names (None: a tool the hook does not follow)."""


def _shaped(
    payload: dict[str, Any], project_env: str, touches: tuple[str, ...], resets: tuple[str, ...], paths_of: Paths
) -> Event | None:
    """An event of a host whose payloads are Claude Code's shape (Claude Code, Codex, Gemini
    CLI): `SessionStart` (a reset for the sources in `resets`), or one of the `touches` events."""
    found = _common(payload, project_env)
    if found is None:
        return None
    session, project, cwd = found
    name = str(payload["hook_event_name"])
    if name == "SessionStart":
        return Event(True, session, project, cwd, payload.get("source") in resets, name=name)
    if name not in touches:
        return None
    tool, given = str(payload.get("tool_name", "")), payload.get("tool_input")
    paths = paths_of(tool, given if isinstance(given, dict) else {}, cwd)
    return None if paths is None else Event(False, session, project, cwd, paths=paths, tool=tool, name=name)


def _one(path: object) -> tuple[str, ...]:
    return (path,) if isinstance(path, str) else ()


def _claude_paths(tool: str, given: dict[str, Any], cwd: Path) -> tuple[str, ...] | None:
    if tool in ("Read", "Edit", "Write", "NotebookEdit"):
        return _one(given.get("file_path") or given.get("notebook_path"))
    if tool in ("Bash", "PowerShell"):
        return tuple(shell_paths(str(given.get("command", "")), cwd))
    return None


_PATCH = re.compile(r"^\*\*\* (?:(?:Add|Update|Delete) File|Move to): (.+?)\s*$", re.MULTILINE)


def _codex_paths(tool: str, given: dict[str, Any], cwd: Path) -> tuple[str, ...] | None:
    command = str(given.get("command", ""))  # Bash and apply_patch both carry their text here
    if tool == "apply_patch":
        return tuple(_PATCH.findall(command))
    if tool == "Bash":
        return tuple(shell_paths(command, cwd))
    return None


def _gemini_paths(tool: str, given: dict[str, Any], cwd: Path) -> tuple[str, ...] | None:
    if tool in ("read_file", "write_file", "replace"):
        return _one(given.get("file_path") or given.get("absolute_path"))
    if tool == "read_many_files":  # its `include` holds paths and globs: the paths count
        include = given.get("include") or given.get("paths") or []
        named = [p for p in include if isinstance(p, str)] if isinstance(include, list) else []
        return tuple(str(cwd / p) for p in named if (cwd / p).is_file())
    if tool == "run_shell_command":
        return tuple(shell_paths(str(given.get("command", "")), cwd))
    return None


_TOOL_EVENTS = ("PreToolUse", "PostToolUse")
_RESETS = ("startup", "clear", "compact")


def _claude_code(payload: dict[str, Any]) -> Event | None:
    return _shaped(payload, "CLAUDE_PROJECT_DIR", _TOOL_EVENTS, _RESETS, _claude_paths)


def _codex(payload: dict[str, Any]) -> Event | None:
    return _shaped(payload, "CODEX_PROJECT_DIR", _TOOL_EVENTS, _RESETS, _codex_paths)


def _gemini_cli(payload: dict[str, Any]) -> Event | None:
    return _shaped(payload, "GEMINI_PROJECT_DIR", ("AfterTool",), ("startup", "clear"), _gemini_paths)


_CLINE_STARTS = ("TaskStart", "TaskResume")


def _cline(payload: dict[str, Any]) -> Event | None:
    """Cline's hooks are executables named after their event (`.clinerules/hooks/PreToolUse`);
    the payload names it in `hookName`, with the task's id and the workspace's roots."""
    session, name = payload.get("taskId"), payload.get("hookName")
    if not isinstance(session, str) or name not in (*_CLINE_STARTS, "PreToolUse", "PostToolUse"):
        return None
    roots = payload.get("workspaceRoots")
    cwd = Path(roots[0]) if isinstance(roots, list) and roots and isinstance(roots[0], str) else Path.cwd()
    if name in _CLINE_STARTS:
        return Event(True, session, cwd, cwd, name == "TaskStart", name=str(name))
    tool = payload.get("preToolUse") or payload.get("postToolUse")
    tool = tool if isinstance(tool, dict) else {}
    parameters = tool.get("parameters")
    given: dict[str, Any] = parameters if isinstance(parameters, dict) else {}
    path, command = given.get("path"), given.get("command")
    paths = (path,) if isinstance(path, str) else tuple(shell_paths(command, cwd)) if isinstance(command, str) else ()
    return Event(False, session, cwd, cwd, paths=paths, tool=str(tool.get("toolName", "")), name=str(name))


def _cursor(payload: dict[str, Any]) -> Event | None:
    session = payload.get("conversation_id")
    name = payload.get("hook_event_name")
    if not isinstance(session, str) or name not in ("sessionStart", "postToolUse"):
        return None
    roots = payload.get("workspace_roots")
    cwd = Path(roots[0]) if isinstance(roots, list) and roots and isinstance(roots[0], str) else Path.cwd()
    project = Path(os.environ.get("CURSOR_PROJECT_DIR") or cwd)
    if name == "sessionStart":
        return Event(True, session, project, cwd, True, name=name)
    given = payload.get("tool_input")
    given = given if isinstance(given, dict) else {}
    path = given.get("file_path") or given.get("path")
    paths = (path,) if isinstance(path, str) else tuple(shell_paths(str(given.get("command", "")), cwd))
    return Event(False, session, project, cwd, paths=paths, tool=str(payload.get("tool_name", "")), name=name)


_REDIRECT = re.compile(r"^\d*[<>]+&?")


def shell_paths(command: str, cwd: Path, most: int = 20) -> Iterator[str]:
    """The files a shell command names: each word that is an existing file (from `cwd`), or the
    target of a redirection (`> notes.md`), at most `most`."""
    try:
        words = shlex.split(command, posix=True)
    except ValueError:
        words = command.split()
    found = 0
    after_redirect = False
    for word in words:
        target = _REDIRECT.sub("", word)
        if target != word and not target:
            after_redirect = True
            continue
        candidate = target if target != word else word
        if candidate.startswith("-") or not candidate or found >= most:
            after_redirect = False
            continue
        path = Path(candidate) if Path(candidate).is_absolute() else cwd / candidate
        if after_redirect or target != word or path.is_file():
            found += 1
            yield str(path)
        after_redirect = False


# --- writing outputs ---------------------------------------------------------------------------


def _specific(event: Event, text: str) -> str:
    """Claude Code's, Codex's and Gemini CLI's way: `hookSpecificOutput.additionalContext`."""
    return json.dumps({"hookSpecificOutput": {"hookEventName": event.name, "additionalContext": text}})


def _cursor_output(event: Event, text: str) -> str:
    return json.dumps({"additional_context": text})


def _cline_output(event: Event, text: str) -> str:
    return json.dumps({"cancel": False, "contextModification": text, "errorMessage": ""})


def _claude_adds(event: Event, f: CorpusFile) -> bool:
    """Claude Code adds a nested CLAUDE.md and the `.claude/rules` whose `paths:` match when the
    model reads a file (not when it writes one, nor through Bash)."""
    if event.tool != "Read":
        return False
    return f.meta.convention == "claude" or PurePosixPath(f.rel).name in ("CLAUDE.md", "CLAUDE.local.md")


def _gemini_adds(event: Event, f: CorpusFile) -> bool:
    """Gemini CLI adds a nested GEMINI.md when one of its file tools touches its folder (its
    "just in time" context: read_file, read_many_files, write_file, replace, list_directory), not
    when run_shell_command does."""
    return event.tool != "run_shell_command" and PurePosixPath(f.rel).name == "GEMINI.md"


def _cursor_adds(event: Event, f: CorpusFile) -> bool:
    """Cursor attaches its own rules whose globs match."""
    return f.meta.convention == "cursor"


HOSTS: dict[str, Host] = {
    "claude-code": Host("claude-code", _claude_code, _specific, 9_500, _claude_adds),
    "codex": Host("codex", _codex, _specific, 9_000),
    "gemini-cli": Host("gemini-cli", _gemini_cli, _specific, 9_500, _gemini_adds),
    "cursor": Host("cursor", _cursor, _cursor_output, 9_500, _cursor_adds, silent="{}"),
    "cline": Host("cline", _cline, _cline_output, 9_500, silent='{"cancel": false}'),
}
"""Every host the hook speaks to, by the `--client` name. Claude Code takes 10,000 characters of
`additionalContext` whole; Codex 2,500 approximate tokens (10,000 characters arrived whole); Cline
50,000 characters (the hook keeps to 9,500 there too: no model needs more at once)."""


# --- what to add -------------------------------------------------------------------------------


def corpus_of(project: Path) -> Corpus:
    """What `--project` serves for this folder: its `.AGENTS/` and its conventional agent files."""
    agents = [project / name for name in DEFAULT_ROOT_NAMES if (project / name).is_dir()][:1]
    return load(make_roots(agents, conventional=project if has_conventional_files(project) else None))


@dataclass
class Session:
    """What one session was given: rule keys (`path#anchor`), in a JSON file of the state folder."""

    where: Path
    given: set[str] = field(default_factory=set)

    @classmethod
    @contextlib.contextmanager
    def held(cls, client: str, session: str, reset: bool) -> Iterator[Session]:
        """The session's record, locked while the hook reads and extends it (a host runs hooks of
        parallel tool calls at once), written back when the block ends without an error."""
        safe = re.sub(r"[^A-Za-z0-9_.-]", "_", session)[:120]
        where = state_dir() / "sessions" / f"{client}-{safe}.json"
        where.parent.mkdir(parents=True, exist_ok=True)
        with locked(where.with_suffix(".lock")):
            given: set[str] = set()
            if not reset and where.is_file():
                given = set(json.loads(where.read_text(encoding="utf-8")).get("given", []))
            record = cls(where, given)
            yield record
            write_atomic(where, json.dumps({"given": sorted(record.given)}).encode("utf-8"), mode=0o600)


def sweep(days: int = SESSION_DAYS) -> None:
    """Removes the records of sessions unused for `days`."""
    cutoff = time.time() - days * 86_400
    for old in (state_dir() / "sessions").glob("*"):
        with contextlib.suppress(OSError):
            if old.stat().st_mtime < cutoff:
                old.unlink()


def at_start(event: Event, client: Client, corpus: Corpus, limit: int) -> str:
    """The pinned files the client does not load itself, whole within `limit`, the rest named."""
    loaded = loaded_by(client, corpus)
    files = sorted((f for f in corpus.files.values() if f.pinned), key=lambda f: (f.root.label, f.rel))
    sent = [f for f in files if f.path not in loaded]
    if not sent:
        return ""
    names = _names([f.path for f in sent])
    head = f"agents-context: the project's pinned agent files, which apply to every task: {names}."
    itself = [f.path for f in files if f.path in loaded]
    if itself:
        head += f" ({client.name} loaded {_names(itself)} itself.)"
    blocks = [(f.path, f"From {f.path}:\n{f.content().strip()}") for f in sent]
    return fit(head, blocks, limit, "read them with your file tool or the agents-context pinned_context tool")


def on_touch(event: Event, host: Host, corpus: Corpus, session: Session, limit: int) -> str:
    """The rules that apply to the event's files and this session has not been given."""
    rules: list[Applicable] = []
    seen: set[str] = set()
    for path in event.paths:
        where = {r.label: rel for r in corpus.agents_roots if (rel := relative_source(r, path, event.cwd)) is not None}
        for item in applicable(corpus, where):
            f = corpus.files.get(item.unit.path)
            if f is None or f.pinned or item.unit.id in seen or item.unit.id in session.given:
                continue  # a pinned file came at the session's start
            if host.adds(event, f):  # the model has it from the host: given
                session.given.add(item.unit.id)
                continue
            seen.add(item.unit.id)
            rules.append(item)
    if not rules:
        return ""
    shown = [_relative(event, p) for p in event.paths]
    head = f"agents-context: the project's agent files have rules for {', '.join(shown)}: " + _names(
        [f"{a.unit.path}:{a.unit.start_line}-{a.unit.end_line} ({a.reason})" for a in rules]
    )
    blocks = [
        (
            a.unit.id,
            f"From {a.unit.path}, lines {a.unit.start_line}-{a.unit.end_line} ({a.reason}):\n{a.unit.text.strip()}",
        )
        for a in rules
    ]
    text = fit(head + ".", blocks, limit, "read them with your file tool or the agents-context read_context tool")
    session.given.update(a.unit.id for a in rules)
    return text


def fit(head: str, blocks: Sequence[tuple[str, str]], limit: int, how: str) -> str:
    """`head`, then each block whole while the text stays within `limit`; the blocks left out are
    named, with how to read them."""
    parts = [head]
    left: list[str] = []
    size = len(head)
    for name, block in blocks:
        if not left and size + 2 + len(block) <= limit - 300:
            parts.append(block)
            size += 2 + len(block)
        else:
            left.append(name)
    if left:
        parts.append(f"Not shown here, over this hook's {limit:,} characters ({how}): {_names(left)}.")
    return "\n\n".join(parts)[:limit]


def _names(names: Sequence[str]) -> str:
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def _relative(event: Event, path: str) -> str:
    try:
        return Path(path).resolve().relative_to(event.project.resolve()).as_posix()
    except (OSError, ValueError):
        return path


# --- the command ---------------------------------------------------------------------------------


def answer(client: str, payload: object) -> str:
    """What the hook prints for `payload` ('' for nothing)."""
    host = HOSTS[client]
    event = host.read(payload) if isinstance(payload, dict) else None
    if event is None or not event.project.is_dir():
        return ""
    corpus = corpus_of(event.project)
    with Session.held(client, event.session, event.reset) as session:
        if event.start:
            sweep()
            text = at_start(event, BY_KEY[client], corpus, host.limit)
        else:
            text = on_touch(event, host, corpus, session, host.limit)
    return host.write(event, text) if text else ""


def main(argv: Sequence[str] | None = None) -> int:
    """`agents-context-hook CLIENT`: always 0; the host's output on stdout, or nothing."""
    args = list(sys.argv[1:] if argv is None else argv)
    started = time.monotonic()
    try:
        if not args or args[0] not in HOSTS:
            raise ValueError(f"the first argument must be one of {', '.join(HOSTS)}, not {args[:1]}")
        out = answer(args[0], json.loads(sys.stdin.read() or "null")) or HOSTS[args[0]].silent
        if out:
            sys.stdout.write(out + "\n")
    except Exception as exc:  # never in the way: log and say nothing (or the host's "nothing")
        _log(f"{' '.join(args)}: {type(exc).__name__}: {exc}")
        if args and args[0] in HOSTS and HOSTS[args[0]].silent:
            sys.stdout.write(HOSTS[args[0]].silent + "\n")
    else:
        if os.environ.get("AGENTS_CONTEXT_HOOK_TIMING"):
            _log(f"{' '.join(args)}: {1000 * (time.monotonic() - started):.1f} ms")
    return 0


def _log(line: str) -> None:
    try:
        folder = state_dir()
        folder.mkdir(parents=True, exist_ok=True)
        with open(folder / "hook.log", "a", encoding="utf-8") as log:  # noqa: PTH123 - appending a line
            log.write(f"{time.strftime('%Y-%m-%dT%H:%M:%S')} {line}\n")
    except OSError:
        pass


if __name__ == "__main__":
    sys.exit(main())
