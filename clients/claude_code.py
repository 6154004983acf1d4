"""Claude Code: what it loads itself (its `CLAUDE.md` chain with `@` imports, else `AGENTS.md`;
`.claude/rules` without `paths:`), the hook it runs (`.claude/settings.json`), and `.mcp.json`."""

from __future__ import annotations

from pathlib import Path, PurePosixPath
from typing import Any

from clients.client import Client, Hook, Loaded, Setup
from clients.entries import ConfigFile, grouped_hooks, server_part
from clients.loading import always, top, with_imports
from clients.payloads import RESETS, TOOL_EVENTS, Event, command, one, shaped, shell_paths, specific_output
from corpus.catalog import Corpus
from corpus.files import CorpusFile

SESSION = "startup|resume|clear|compact"
"""The `SessionStart` sources the hook runs for (a compaction included: it drops what was given)."""
TOOLS = "Read|Edit|Write|NotebookEdit|Bash"
TIMEOUT_S = 10
INSTRUCTIONS_CUT = (4_096, "2.1.328", 2_048)
"""Claude Code cuts server instructions at 4,096 characters from 2.1.328 on, at 2,048 before."""
INSTRUCTIONS_CUTS = (
    f"Claude Code {INSTRUCTIONS_CUT[1]} and later cut server instructions at {INSTRUCTIONS_CUT[0]:,} characters, "
    f"earlier versions at {INSTRUCTIONS_CUT[2]:,}"
)


def loads(corpus: Corpus) -> Loaded:
    """CLAUDE.md at the project's top (or in .claude/) with its `@` imports, else AGENTS.md at
    the top; and the `.claude/rules` files without `paths:`."""
    files = list(corpus.files.agents())
    memory = [f for f in files if top(f, "CLAUDE.md", ".claude/CLAUDE.md")]
    loaded = {f.path: "project instructions" for f in memory}
    if not memory:  # Claude Code reads AGENTS.md only where there is no CLAUDE.md
        memory = [f for f in files if top(f, "AGENTS.md")]
        loaded = {f.path: "project instructions, as there is no CLAUDE.md" for f in memory}
    loaded.update({f.path: "a rule without paths" for f in files if always(f, "claude")})
    return with_imports(corpus, memory, loaded)


def paths(tool: str, given: dict[str, Any], cwd: Path) -> tuple[str, ...] | None:
    if tool in ("Read", "Edit", "Write", "NotebookEdit"):
        return one(given.get("file_path") or given.get("notebook_path"))
    if tool in ("Bash", "PowerShell"):
        return tuple(shell_paths(command(given), cwd))
    return None


def read(payload: dict[str, Any]) -> Event | None:
    return shaped(payload, "CLAUDE_PROJECT_DIR", TOOL_EVENTS, RESETS, paths)


def adds(event: Event, f: CorpusFile) -> bool:
    """Claude Code adds a nested CLAUDE.md and the `.claude/rules` whose `paths:` match when the
    model reads a file (not when it writes one, nor through Bash)."""
    if event.tool != "Read":
        return False
    return f.meta.convention == "claude" or PurePosixPath(f.rel).name in ("CLAUDE.md", "CLAUDE.local.md")


def handler(hook: str) -> dict[str, Any]:
    """A hook handler as Claude Code and Codex write one."""
    return {"type": "command", "command": hook, "timeout": TIMEOUT_S}


def files(server: dict[str, Any], hook: str) -> list[ConfigFile]:
    events = (("SessionStart", SESSION), ("PreToolUse", TOOLS), ("PostToolUse", TOOLS))
    return [
        ConfigFile(".mcp.json", (server_part("mcpServers", server),)),
        ConfigFile(".claude/settings.json", (grouped_hooks(events, handler(hook)),)),
    ]


HOOK = Hook(read, specific_output, limit=9_500, adds=adds, takes=10_000)
CLIENT = Client(
    "claude-code",
    "Claude Code",
    ("claude-code",),
    True,
    loads,
    HOOK,
    Setup(files, lambda url: {"type": "http", "url": url}),
)
