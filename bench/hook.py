"""How long the hook takes, as a host runs it: a new process per event, this repository as the
project, in the same run as Python's own start and `agents-context search` (the command line,
which loads the server).

    uv run python -m bench.hook              # 30 runs of each
    uv run python -m bench.hook --runs 5     # quicker

Each event is timed as a whole process, stdin to exit, in a copy of this repository's `.AGENTS/`
and `live/` with a `.claude/rules` file and an `AGENTS.md` beside them (so that the project's
agent files are walked and front matter is read, as in most projects): a session's start (the
pinned files), a touched file with rules, the same file again (given already: nothing to add),
a file no rule matches; then an edit of `server.py` in this repository as it is.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from bench.measure import percentile

REPO = Path(__file__).resolve().parents[1]


def hook_command() -> list[str]:
    script = Path(sys.executable).with_name("agents-context-hook")
    return [str(script)] if script.exists() else [sys.executable, "-m", "cli.hook"]


def timed(command: Sequence[str], stdin: str, env: dict[str, str], cwd: Path) -> float:
    started = time.perf_counter()
    subprocess.run(list(command), input=stdin, capture_output=True, text=True, env=env, cwd=cwd, check=True)
    return (time.perf_counter() - started) * 1000


def project(where: Path) -> Path:
    """This repository's `.AGENTS/`, with rules for its source files beside it."""
    shutil.copytree(REPO / ".AGENTS", where / ".AGENTS")
    shutil.copytree(REPO / "live", where / "live")
    rules = where / ".claude" / "rules"
    rules.mkdir(parents=True)
    (rules / "live.md").write_text("---\npaths: live/**\n---\n# The live index\n\nEvery thread lives here.\n")
    (where / "AGENTS.md").write_text("# Agents\n\nRun uv run pytest before every commit.\n")
    (where / "CLAUDE.md").write_text("@AGENTS.md\n")
    return where


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=30)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="agents-context-hook-bench-") as scratch:
        root = project(Path(scratch) / "repo")
        state = Path(scratch) / "state"
        env = {**os.environ, "AGENTS_CONTEXT_STATE_DIR": str(state)}

        def payload(session: str, event: str, **fields: object) -> str:
            return json.dumps({"session_id": session, "hook_event_name": event, "cwd": str(root), **fields})

        def as_is(session: str) -> str:
            edit = {"tool_name": "Edit", "tool_input": {"file_path": str(REPO / "server.py")}}
            return json.dumps({"session_id": session, "hook_event_name": "PreToolUse", "cwd": str(REPO), **edit})

        touch = {"tool_name": "Edit", "tool_input": {"file_path": str(root / "live" / "index.py")}}
        none = {"tool_name": "Read", "tool_input": {"file_path": str(root / "README.md")}}
        hook = [*hook_command(), "claude-code"]
        search = [sys.executable, str(REPO / "server.py"), "search", "threads", "--project", str(root), "--no-cache"]
        cases: list[tuple[str, list[str], Callable[[int], str]]] = [
            ("python -c pass", [sys.executable, "-c", "pass"], lambda i: ""),
            ("hook: session start", hook, lambda i: payload(f"s{i}", "SessionStart", source="startup")),
            ("hook: a file with rules, first touch", hook, lambda i: payload(f"t{i}", "PreToolUse", **touch)),
            ("hook: the same file again", hook, lambda i: payload("again", "PreToolUse", **touch)),
            ("hook: a file no rule matches", hook, lambda i: payload(f"n{i}", "PreToolUse", **none)),
            ("hook: this repository as it is, Edit server.py", hook, lambda i: as_is(f"r{i}")),
            ("agents-context search (the CLI)", search, lambda i: ""),
        ]
        rows = [
            (name, [timed(command, stdin(i), env, root) for i in range(args.runs)]) for name, command, stdin in cases
        ]
    print(f"| command ({args.runs} runs each, ms) | median | p95 | min |")
    print("|---|---|---|---|")
    for name, times in rows:
        print(f"| {name} | {percentile(times, 50):.0f} | {percentile(times, 95):.0f} | {min(times):.0f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
