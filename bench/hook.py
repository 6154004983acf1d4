"""How long the hook takes, as a host runs it, and how much of what it injects is the rules'
own text: a new process per event, in this repository and in a monorepo's agent files
(`bench.monorepo`: a 1,011-line rule for task files among 26), in the same run as Python's own
start and `agents-context search` (the command line, which loads the server); with `--before`,
against another revision's hook in the same run.

    uv run python -m bench.hook                       # 30 runs of each
    uv run python -m bench.hook --runs 5              # quicker
    uv run python -m bench.hook --before --runs 15    # and 05ca762's hook, alternating
    uv run python -m bench.hook --before REV          # another revision
    uv run python -m bench.hook --before --results bench/results   # and keep the table

Each event is timed as a whole process, stdin to exit, in a copy of this repository's `.AGENTS/`
and `live/` with a `.claude/rules` file and an `AGENTS.md` beside them (so that the project's
agent files are walked and front matter is read, as in most projects): a session's start (the
pinned files), a touched file with rules, the same file again (given already: nothing to add),
a file no rule matches; then an edit of `server.py` in this repository as it is, and an edit of a
file 200 folders deep (a long path: its work once grew with the square of the path's length).
In the monorepo: a session's start, a Read of a task file (the long rule and the `.ts` rule
apply), the Write of a new task file in another session, and an Edit of an API file. The rule
share is the part of the injected characters on lines of the rules themselves
(`bench.monorepo.rule_share`).

`--before REV` checks REV out in a temporary git worktree, gives it an environment of its own
(`uv sync --frozen --compile-bytecode`, else this interpreter with the worktree first on its
path), and times its hook on the same events, each run alternating which goes first; both write
their bytecode on a first, untimed run of each event. It prints the median and p95 of both and
their ratio. The worktree is removed at the end.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

from bench import monorepo, results
from bench.measure import machine, percentile

REPO = Path(__file__).resolve().parents[1]
BEFORE = "05ca762"
"""The revision `--before` times by default: the hook before it handed rule files (issue 50)."""


def hook_command() -> list[str]:
    script = Path(sys.executable).with_name("agents-context-hook")
    return [str(script)] if script.exists() else [sys.executable, "-m", "hook.main"]


def timed(command: Sequence[str], stdin: str, env: dict[str, str], cwd: Path) -> tuple[float, str]:
    """Milliseconds from start to exit, and the context it added (`additionalContext`, '' if none)."""
    started = time.perf_counter()
    done = subprocess.run(list(command), input=stdin, capture_output=True, text=True, env=env, cwd=cwd, check=True)
    elapsed = (time.perf_counter() - started) * 1000
    try:
        added = json.loads(done.stdout)["hookSpecificOutput"]["additionalContext"] if done.stdout.strip() else ""
    except (ValueError, KeyError, TypeError):
        added = ""
    return elapsed, added


def project(where: Path) -> Path:
    """This repository's `.AGENTS/`, with rules for its source files beside it."""
    shutil.copytree(REPO / ".AGENTS", where / ".AGENTS")
    shutil.copytree(REPO / "live", where / "live")
    rules = where / ".claude" / "rules"
    rules.mkdir(parents=True)
    (rules / "live.md").write_text("---\npaths: live/**\n---\n# The live index\n\nEvery thread lives here.\n")
    (where / "AGENTS.md").write_text("# Agents\n\nRun uv run pytest before every commit.\n")
    (where / "CLAUDE.md").write_text("@AGENTS.md\n")
    monorepo.write(where.parent / MONOREPO)
    return where


Case = tuple[str, Callable[[int], str]]
"""A row: its name, and the payload of run `i`."""


def cases(root: Path, tag: str) -> list[Case]:
    """The hook's events; `tag` keeps one hook's sessions apart from another's. `root` is this
    repository's copy; the monorepo is beside it (`MONOREPO`)."""

    def payload(session: str, event: str, fields: dict[str, object], cwd: Path = root) -> str:
        return json.dumps({"session_id": f"{tag}{session}", "hook_event_name": event, "cwd": str(cwd), **fields})

    def edit(path: Path) -> dict[str, object]:
        return {"tool_name": "Edit", "tool_input": {"file_path": str(path)}}

    start: dict[str, object] = {"source": "startup"}
    touch = edit(root / "live" / "index.py")
    none: dict[str, object] = {"tool_name": "Read", "tool_input": {"file_path": str(root / "README.md")}}
    deep = edit(root / "live" / Path(*["deep"] * 200) / "x.py")
    return [
        ("hook: session start", lambda i: payload(f"s{i}", "SessionStart", start)),
        ("hook: a file with rules, first touch", lambda i: payload(f"t{i}", "PreToolUse", touch)),
        ("hook: the same file again", lambda i: payload("again", "PreToolUse", touch)),
        ("hook: a file no rule matches", lambda i: payload(f"n{i}", "PreToolUse", none)),
        (
            "hook: this repository as it is, Edit server.py",
            lambda i: payload(f"r{i}", "PreToolUse", edit(REPO / "server.py"), REPO),
        ),
        ("hook: a file 200 folders deep", lambda i: payload(f"d{i}", "PreToolUse", deep)),
        *monorepo_cases(root.parent / MONOREPO, tag),
    ]


MONOREPO = "monorepo"


def monorepo_cases(mono: Path, tag: str) -> list[Case]:
    """The monorepo's events (in `mono`)."""

    def payload(session: str, event: str, fields: dict[str, object]) -> str:
        return json.dumps({"session_id": f"{tag}{session}", "hook_event_name": event, "cwd": str(mono), **fields})

    def tool(name: str, rel: str) -> dict[str, object]:
        return {"tool_name": name, "tool_input": {"file_path": str(mono / rel)}}

    new_task = "apps/jobs/src/trigger/emails/send-receipt.ts"
    return [
        ("monorepo: session start", lambda i: payload(f"ms{i}", "SessionStart", {"source": "startup"})),
        ("monorepo: Read a task file", lambda i: payload(f"mr{i}", "PreToolUse", tool("Read", monorepo.TASK_FILE))),
        ("monorepo: Write a new task file", lambda i: payload(f"mw{i}", "PreToolUse", tool("Write", new_task))),
        (
            "monorepo: Edit an API file",
            lambda i: payload(f"me{i}", "PreToolUse", tool("Edit", "apps/api/src/auth/login.ts")),
        ),
    ]


@contextlib.contextmanager
def checkout(rev: str, where: Path) -> Iterator[list[str]]:
    """`rev` in a temporary worktree at `where`, and the command that runs its hook; the worktree
    removed afterwards."""
    git = ["git", "-C", str(REPO), "worktree"]
    subprocess.run([*git, "add", "--detach", str(where), rev], check=True, capture_output=True)
    try:
        uv = shutil.which("uv")
        synced = (
            uv is not None
            and subprocess.run(
                [uv, "sync", "--frozen", "--quiet", "--compile-bytecode"], cwd=where, capture_output=True, check=False
            ).returncode
            == 0
        )
        script = where / ".venv" / ("Scripts" if os.name == "nt" else "bin") / "agents-context-hook"
        yield [str(script)] if synced and script.exists() else [sys.executable, "-m", "hook.main"]
    finally:
        subprocess.run([*git, "remove", "--force", str(where)], check=False, capture_output=True)


def compare(rev: str, runs: int, scratch: Path, root: Path, save_to: Path | None = None) -> None:
    """This hook and `rev`'s on the same events, alternating, as one table."""
    with checkout(rev, scratch / "before") as before:
        common = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}  # warm runs write it
        envs = {
            "after": {**common, "AGENTS_CONTEXT_STATE_DIR": str(scratch / "state-after")},
            "before": {
                **common,
                "AGENTS_CONTEXT_STATE_DIR": str(scratch / "state-before"),
                **({"PYTHONPATH": str(scratch / "before")} if before[0] == sys.executable else {}),
            },
        }
        hooks = {"after": [*hook_command(), "claude-code"], "before": [*before, "claude-code"]}
        rows: dict[str, dict[str, list[float]]] = {which: {name: [] for name, _ in cases(root, "")} for which in hooks}
        added: dict[str, dict[str, list[str]]] = {which: {name: [] for name, _ in cases(root, "")} for which in hooks}
        for which in hooks:  # bytecode written once, as an installed package has it
            for _, stdin in cases(root, f"warm-{which}-"):
                timed(hooks[which], stdin(0), envs[which], root)
        for i in range(runs):
            order = ("after", "before") if i % 2 == 0 else ("before", "after")
            for which in order:
                for name, stdin in cases(root, f"{which}-"):
                    ms, text = timed(hooks[which], stdin(i), envs[which], root)
                    rows[which][name].append(ms)
                    added[which][name].append(text)
    lines = monorepo.rule_lines(root.parent / MONOREPO)
    columns = [f"event ({runs} runs each, alternating; ms)", "before median", "before p95", "after median"]
    columns += ["after p95", "after / before", "rule share before", "after"]
    table: list[list[str]] = []
    for name, _ in cases(root, ""):
        b, a = rows["before"][name], rows["after"][name]
        table.append(
            [
                name.removeprefix("hook: "),
                f"{percentile(b, 50):.0f}",
                f"{percentile(b, 95):.0f}",
                f"{percentile(a, 50):.0f}",
                f"{percentile(a, 95):.0f}",
                f"{percentile(a, 50) / percentile(b, 50):.2f}",
                share(name, added["before"][name], lines),
                share(name, added["after"][name], lines),
            ]
        )
    print("| " + " | ".join(columns) + " |")
    print("|" + "---|" * len(columns))
    for row in table:
        print("| " + " | ".join(row) + " |")
    if save_to is not None:
        command = f"uv run python -m bench.hook --before {rev} --runs {runs}"
        note = f"before: {rev}"
        saved = results.save(
            "hook", {"hook": results.table(columns, table, note)}, machine=machine(), command=command, folder=save_to
        )
        print(f"results: {saved}")


def share(name: str, texts: Sequence[str], lines: frozenset[str]) -> str:
    """The rule share of what a monorepo event added (the first run's: every run adds the same),
    with its size; '' for this repository's events."""
    if not name.startswith("monorepo") or not texts:
        return ""
    text = texts[0]
    return f"{monorepo.rule_share(text, lines):.0%} of {len(text):,}" if text else "nothing added"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument(
        "--before", nargs="?", const=BEFORE, metavar="REV", help=f"time REV's hook too (default {BEFORE})"
    )
    parser.add_argument(
        "--results", type=Path, metavar="DIR", help="with --before, write the table as a dated JSON there"
    )
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="agents-context-hook-bench-") as scratch:
        root = project(Path(scratch) / "repo")
        if args.before:
            compare(args.before, args.runs, Path(scratch), root, args.results)
            return 0
        env = {**os.environ, "AGENTS_CONTEXT_STATE_DIR": str(Path(scratch) / "state")}
        hook = [*hook_command(), "claude-code"]
        search = [sys.executable, str(REPO / "server.py"), "search", "threads", "--project", str(root), "--no-cache"]
        commands: list[tuple[str, list[str], Callable[[int], str]]] = [
            ("python -c pass", [sys.executable, "-c", "pass"], lambda i: ""),
            *[(name, hook, stdin) for name, stdin in cases(root, "")],
            ("agents-context search (the CLI)", search, lambda i: ""),
        ]
        rows: list[tuple[str, list[float], str]] = []
        for name, command, stdin in commands:
            runs = [timed(command, stdin(i), env, root) for i in range(args.runs)]
            lines = monorepo.rule_lines(root.parent / MONOREPO)
            rows.append((name, [ms for ms, _ in runs], share(name, [text for _, text in runs], lines)))
    print(f"| command ({args.runs} runs each, ms) | median | p95 | min | rule share |")
    print("|---|---|---|---|---|")
    for name, times, ruled in rows:
        print(f"| {name} | {percentile(times, 50):.0f} | {percentile(times, 95):.0f} | {min(times):.0f} | {ruled} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
