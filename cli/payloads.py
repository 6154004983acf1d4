"""What the hook knows of each host: how to read its payload (`Event`) and how to answer it
(`HOSTS`). Every reader takes whatever JSON it is given: a field of the wrong type is absent, a
payload of another host is None, and the paths it names are bounded (`MAX_PATHS`, and a shell
command is read up to `MAX_COMMAND` characters and `MAX_WORDS` words), so no payload makes the
hook slow.
"""

from __future__ import annotations

import json
import os
import re
import shlex
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

from corpus.files import CorpusFile

MAX_PATHS = 20
"""The most files one event's rules are looked up for (a shell command, a patch, a list)."""
MAX_COMMAND = 65_536
"""The characters of a shell command read for the files it names (Python's shell lexer takes
time that grows with the square of a word's length: 13 s for one word of a million)."""
MAX_WORDS = 1_000
"""The words of a shell command looked at (each one that could be a file is a `stat`)."""


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
    agent = payload.get("agent_id")  # a subagent's own session: after a NUL, which no id holds
    return (f"{session}\0{agent}" if isinstance(agent, str) and agent else session), project, folder


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


def _command(given: dict[str, Any]) -> str:
    command = given.get("command")
    return command if isinstance(command, str) else ""


def _claude_paths(tool: str, given: dict[str, Any], cwd: Path) -> tuple[str, ...] | None:
    if tool in ("Read", "Edit", "Write", "NotebookEdit"):
        return _one(given.get("file_path") or given.get("notebook_path"))
    if tool in ("Bash", "PowerShell"):
        return tuple(shell_paths(_command(given), cwd))
    return None


_PATCH_HEADS = ("*** Add File: ", "*** Update File: ", "*** Delete File: ", "*** Move to: ")


def patch_paths(patch: str) -> tuple[str, ...]:
    """The files an `apply_patch` text names in its headers, line by line (a regular expression
    over the whole text took seconds on one line of spaces)."""
    found: list[str] = []
    for line in patch.splitlines():
        head = next((h for h in _PATCH_HEADS if line.startswith(h)), None)
        if head is not None and (path := line[len(head) :].strip()):
            found.append(path)
            if len(found) == MAX_PATHS:
                break
    return tuple(found)


def _codex_paths(tool: str, given: dict[str, Any], cwd: Path) -> tuple[str, ...] | None:
    command = _command(given)  # Bash and apply_patch both carry their text here
    if tool == "apply_patch":
        return patch_paths(command)
    if tool == "Bash":
        return tuple(shell_paths(command, cwd))
    return None


def _gemini_paths(tool: str, given: dict[str, Any], cwd: Path) -> tuple[str, ...] | None:
    if tool in ("read_file", "write_file", "replace"):
        return _one(given.get("file_path") or given.get("absolute_path"))
    if tool == "read_many_files":  # its `include` holds paths and globs: the paths count
        include = given.get("include") or given.get("paths") or []
        named = [p for p in include[:MAX_WORDS] if isinstance(p, str)] if isinstance(include, list) else []
        return tuple(_first(str(cwd / p) for p in named if "\0" not in p and _is_file(cwd / p)))
    if tool == "run_shell_command":
        return tuple(shell_paths(_command(given), cwd))
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


def _first_root(roots: object) -> Path:
    return Path(roots[0]) if isinstance(roots, list) and roots and isinstance(roots[0], str) else Path.cwd()


def _cline(payload: dict[str, Any]) -> Event | None:
    """Cline's hooks are executables named after their event (`.clinerules/hooks/PreToolUse`);
    the payload names it in `hookName`, with the task's id and the workspace's roots."""
    session, name = payload.get("taskId"), payload.get("hookName")
    if not isinstance(session, str) or name not in (*_CLINE_STARTS, "PreToolUse", "PostToolUse"):
        return None
    cwd = _first_root(payload.get("workspaceRoots"))
    if name in _CLINE_STARTS:
        return Event(True, session, cwd, cwd, name == "TaskStart", name=str(name))
    tool = payload.get("preToolUse") or payload.get("postToolUse")
    tool = tool if isinstance(tool, dict) else {}
    parameters = tool.get("parameters")
    given: dict[str, Any] = parameters if isinstance(parameters, dict) else {}
    path = given.get("path")
    paths = (path,) if isinstance(path, str) else tuple(shell_paths(_command(given), cwd))
    return Event(False, session, cwd, cwd, paths=paths, tool=str(tool.get("toolName", "")), name=str(name))


def _cursor(payload: dict[str, Any]) -> Event | None:
    session = payload.get("conversation_id")
    name = payload.get("hook_event_name")
    if not isinstance(session, str) or name not in ("sessionStart", "postToolUse"):
        return None
    cwd = _first_root(payload.get("workspace_roots"))
    project = Path(os.environ.get("CURSOR_PROJECT_DIR") or cwd)
    if name == "sessionStart":
        return Event(True, session, project, cwd, True, name=name)
    given = payload.get("tool_input")
    given = given if isinstance(given, dict) else {}
    path = given.get("file_path") or given.get("path")
    paths = (path,) if isinstance(path, str) else tuple(shell_paths(_command(given), cwd))
    return Event(False, session, project, cwd, paths=paths, tool=str(payload.get("tool_name", "")), name=name)


def _first(paths: Iterable[str]) -> Iterator[str]:
    for count, path in enumerate(paths, start=1):
        yield path
        if count == MAX_PATHS:
            return


def _is_file(path: Path) -> bool:
    """A `stat`, never an open: a FIFO or a device is not a file, and is never read."""
    try:
        return path.is_file()
    except (OSError, ValueError):
        return False


_REDIRECT = re.compile(r"^\d*[<>]+&?")


def shell_paths(command: str, cwd: Path, most: int = MAX_PATHS) -> Iterator[str]:
    """The files a shell command names: each word that is an existing file (from `cwd`), or the
    target of a redirection (`> notes.md`), at most `most`, among its first `MAX_WORDS` words and
    `MAX_COMMAND` characters (the start of a longer command, to its last whole word)."""
    if len(command) > MAX_COMMAND:
        command = command[:MAX_COMMAND].rsplit(None, 1)[0]
    try:
        words = shlex.split(command, posix=True)
    except ValueError:
        words = command.split()
    found = 0
    after_redirect = False
    for word in words[:MAX_WORDS]:
        target = _REDIRECT.sub("", word)
        if target != word and not target:
            after_redirect = True
            continue
        candidate = target if target != word else word
        if candidate.startswith("-") or not candidate or "\0" in candidate or found >= most:
            after_redirect = False
            continue
        path = Path(candidate) if Path(candidate).is_absolute() else cwd / candidate
        if after_redirect or target != word or _is_file(path):
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
