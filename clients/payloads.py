"""A hook's payload read into an `Event`, with the helpers each client's reader is written with.
Every reader takes whatever JSON it is given: a field of the wrong type is absent, a payload of
another client is None, and the paths it names are bounded (`MAX_PATHS`, and a shell command is
read up to `MAX_COMMAND` characters and `MAX_WORDS` words), so no payload makes the hook slow.
"""

from __future__ import annotations

import json
import os
import re
import shlex
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

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


# --- reading payloads ---------------------------------------------------------------------------


def common(payload: dict[str, Any], project_env: str) -> tuple[str, Path, Path] | None:
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


def shaped(
    payload: dict[str, Any], project_env: str, touches: tuple[str, ...], resets: tuple[str, ...], paths_of: Paths
) -> Event | None:
    """An event of a host whose payloads are Claude Code's shape (Claude Code, Codex, Gemini
    CLI): `SessionStart` (a reset for the sources in `resets`), or one of the `touches` events."""
    found = common(payload, project_env)
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


def one(path: object) -> tuple[str, ...]:
    return (path,) if isinstance(path, str) else ()


def command(given: dict[str, Any]) -> str:
    command = given.get("command")
    return command if isinstance(command, str) else ""


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


TOOL_EVENTS = ("PreToolUse", "PostToolUse")
RESETS = ("startup", "clear", "compact")
"""The `SessionStart` sources that begin a session afresh (a resume keeps what it was given)."""


def first_root(roots: object) -> Path:
    return Path(roots[0]) if isinstance(roots, list) and roots and isinstance(roots[0], str) else Path.cwd()


def first(paths: Iterable[str]) -> Iterator[str]:
    for count, path in enumerate(paths, start=1):
        yield path
        if count == MAX_PATHS:
            return


def is_file(path: Path) -> bool:
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
        if after_redirect or target != word or is_file(path):
            found += 1
            yield str(path)
        after_redirect = False


def specific_output(event: Event, text: str) -> str:
    """Claude Code's, Codex's and Gemini CLI's way: `hookSpecificOutput.additionalContext`."""
    return json.dumps({"hookSpecificOutput": {"hookEventName": event.name, "additionalContext": text}})
