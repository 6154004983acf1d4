"""What reaches the model, through real clients: for each client that runs here (Claude Code,
Codex, Gemini CLI; see `tests/harness`), the characters its model read for a fixed set of calls,
with this checkout's server and with an earlier revision's, in the same run.

    uv run python -m bench.clients                   # against b4c29eb, before answers were shaped per client
    uv run python -m bench.clients --baseline REV    # against another revision
    uv run python -m bench.clients --smoke           # Claude Code only, no baseline (the test suite)

Three projects: this repository's own `.AGENTS/` (sections, a path's rules, the pinned files,
the status), the same with this repository's `docs/` as a docs root (`search_docs`), and a
project whose `CLAUDE.md` imports its `AGENTS.md` (this repository's README) and whose
`GEMINI.md` says a line, as many projects keep them (`pinned_context`: what a client loaded
itself is not sent again). The baseline is checked out with `git worktree` into a temporary
folder and removed afterwards. "documented" is the tool's text as an unknown client gets it.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

import anyio
from mcp import Client
from mcp.types import TextContent

from cli.flags import parse
from cli.settings import Settings, open_index
from server import create_server
from tests.harness import claude, codex, gemini
from tests.harness.standin import Say, ToolCall, Turn

REPO = Path(__file__).resolve().parents[1]
BASELINE = "b4c29eb"
"""The last revision before the answers were shaped for their clients."""

Call = tuple[str, dict[str, Any]]


@dataclass(frozen=True)
class Scenario:
    name: str
    files: Callable[[Path], Path]
    """Writes the project into a folder and returns it."""
    args: Callable[[Path], list[str]]
    """The server's flags for that project."""
    calls: tuple[Call, ...]


def _this_repository(where: Path) -> Path:
    shutil.copytree(REPO / ".AGENTS", where / ".AGENTS")
    return where


def _with_docs(where: Path) -> Path:
    _this_repository(where)
    shutil.copytree(REPO / "docs", where / "docs")
    return where


def _claude_md_imports_agents_md(where: Path) -> Path:
    _this_repository(where)
    (where / "AGENTS.md").write_text((REPO / "README.md").read_text(encoding="utf-8"), encoding="utf-8")
    (where / "CLAUDE.md").write_text("# Claude\n\n@AGENTS.md\n", encoding="utf-8")
    (where / "GEMINI.md").write_text("# Gemini\n\nSee AGENTS.md for the rules.\n", encoding="utf-8")
    return where


SCENARIOS = (
    Scenario(
        ".AGENTS",
        _this_repository,
        lambda p: ["--project", str(p)],
        (
            ("context_search", {"query": "stdout logging"}),
            ("context_search", {"query": "freshness watcher catch up"}),
            ("context_for_path", {"path": "server.py"}),
            ("pinned_context", {}),
            ("context_status", {}),
        ),
    ),
    Scenario(
        ".AGENTS + docs/",
        _with_docs,
        lambda p: ["--project", str(p), "--docs", str(p / "docs")],
        (
            ("search_docs", {"query": "cache entry format"}),
            ("search_docs", {"query": "tools/list size output schema", "k": 3}),
        ),
    ),
    Scenario(
        "CLAUDE.md imports AGENTS.md",
        _claude_md_imports_agents_md,
        lambda p: ["--project", str(p)],
        (("pinned_context", {}),),
    ),
)


@dataclass(frozen=True)
class Harness:
    name: str
    module: ModuleType


HARNESSES = (Harness("Claude Code", claude), Harness("Codex", codex), Harness("Gemini CLI", gemini))


def seen_by_model(harness: Harness, server: Sequence[str], project: Path, calls: Sequence[Call]) -> list[int]:
    """The characters of each call's output the client's model read (with the client's framing)."""
    turns: list[Turn] = [[ToolCall(harness.module.tool_name(tool), args)] for tool, args in calls]
    run = harness.module.run(project, [*turns, Say("done")], server=list(server))
    outputs: list[str] = harness.module.tool_outputs(run)
    if len(outputs) != len(calls):
        raise RuntimeError(f"{harness.name}: {len(outputs)} outputs for {len(calls)} calls: {run.stderr[-500:]}")
    return [len(output) for output in outputs]


async def _documented(args: list[str], calls: Sequence[Call]) -> list[int]:
    settings = Settings.from_args(parse(["serve", *args, "--no-cache"]))
    async with Client(create_server(open_index(settings), settings)) as client:
        sizes = []
        for tool, arguments in calls:
            result = await client.call_tool(tool, arguments)
            sizes.append(sum(len(b.text) for b in result.content if isinstance(b, TextContent)))
        return sizes


def documented(args: list[str], calls: Sequence[Call]) -> list[int]:
    """The characters of each call's text as an unknown client gets it (this checkout)."""
    return anyio.run(_documented, args, calls)


@contextlib.contextmanager
def checkout(revision: str) -> Iterator[Path]:
    """`revision` of this repository in a temporary worktree."""
    where = Path(tempfile.mkdtemp(prefix="agents-context-baseline-")) / "tree"
    subprocess.run(
        ["git", "worktree", "add", "--detach", str(where), revision], cwd=REPO, check=True, capture_output=True
    )
    try:
        yield where
    finally:
        subprocess.run(["git", "worktree", "remove", "--force", str(where)], cwd=REPO, check=False, capture_output=True)
        shutil.rmtree(where.parent, ignore_errors=True)


def table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    """A Markdown table."""
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    return "\n".join(lines + ["| " + " | ".join(row) + " |" for row in rows])


def call_name(call: Call) -> str:
    tool, args = call
    shown = ", ".join(f"{k}={json.dumps(v)}" for k, v in args.items())
    return f"{tool}({shown})"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--baseline", default=BASELINE, help=f"the revision to compare with (default: {BASELINE})")
    parser.add_argument("--smoke", action="store_true", help="Claude Code only, the first project, no baseline")
    args = parser.parse_args(argv)
    harnesses = [h for h in HARNESSES if h.module.available() is None]
    for h in HARNESSES:
        if h not in harnesses:
            print(f"# {h.name}: not measured: {h.module.available()}")
    if args.smoke:
        harnesses = [h for h in harnesses if h.module is claude]
    scenarios = SCENARIOS[:1] if args.smoke else SCENARIOS
    with contextlib.ExitStack() as stack:
        servers = {"now": str(REPO / "server.py")}
        if not args.smoke:
            servers[f"before ({args.baseline})"] = str(stack.enter_context(checkout(args.baseline)) / "server.py")
        for scenario in scenarios:
            work = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="agents-context-bench-")))
            project = scenario.files(work / "project")
            flags = [*scenario.args(project), "--no-cache"]
            text = documented(flags, scenario.calls)
            rows = [[call_name(c), str(n)] for c, n in zip(scenario.calls, text, strict=True)]
            header = ["call", "documented"]
            for harness in harnesses:
                for label, server in servers.items():
                    seen = seen_by_model(harness, [sys.executable, server, *flags], project, scenario.calls)
                    header.append(f"{harness.name} {label}")
                    for row, n in zip(rows, seen, strict=True):
                        row.append(str(n))
            totals = ["total", *[str(sum(int(r[i]) for r in rows)) for i in range(1, len(header))]]
            print(f"\n## {scenario.name}: characters that reached the model\n")
            print(table(header, [*rows, totals]))
            now = [i for i, h in enumerate(header) if h.endswith(" now")]
            for i in now:
                ratio = int(totals[i]) / max(int(totals[1]), 1)
                print(f"- {header[i]}: {ratio:.2f}x the documented text")
    return 0


if __name__ == "__main__":
    sys.exit(main())
