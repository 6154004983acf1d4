"""Cline: what it loads itself (its `.clinerules` without `paths:`) and the hooks it runs
(executables named after their event in `.clinerules/hooks/`, which `setup` does not write)."""

from __future__ import annotations

import json
from typing import Any

from clients.client import Client, Hook, Loaded
from clients.loading import always
from clients.payloads import Event, command, first_root, shell_paths
from corpus.catalog import Corpus

STARTS = ("TaskStart", "TaskResume")


def loads(corpus: Corpus) -> Loaded:
    """Its `.clinerules` rules without `paths:`."""
    return {f.path: "a rule without paths" for f in corpus.files.agents() if always(f, "cline")}


def read(payload: dict[str, Any]) -> Event | None:
    """Cline's hooks are executables named after their event (`.clinerules/hooks/PreToolUse`);
    the payload names it in `hookName`, with the task's id and the workspace's roots."""
    session, name = payload.get("taskId"), payload.get("hookName")
    if not isinstance(session, str) or name not in (*STARTS, "PreToolUse", "PostToolUse"):
        return None
    cwd = first_root(payload.get("workspaceRoots"))
    if name in STARTS:
        return Event(True, session, cwd, cwd, name == "TaskStart", name=str(name))
    tool = payload.get("preToolUse") or payload.get("postToolUse")
    tool = tool if isinstance(tool, dict) else {}
    parameters = tool.get("parameters")
    given: dict[str, Any] = parameters if isinstance(parameters, dict) else {}
    path = given.get("path")
    paths = (path,) if isinstance(path, str) else tuple(shell_paths(command(given), cwd))
    return Event(False, session, cwd, cwd, paths=paths, tool=str(tool.get("toolName", "")), name=str(name))


def write(event: Event, text: str) -> str:
    return json.dumps({"cancel": False, "contextModification": text, "errorMessage": ""})


CLIENT = Client(
    "cline",
    "Cline",
    (),
    False,
    loads,
    Hook(read, write, limit=9_500, silent='{"cancel": false}', takes=50_000),  # the hook keeps to 9,500
)
