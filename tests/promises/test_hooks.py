"""Context that arrives without being asked, through a real Claude Code, Codex and Gemini CLI:
`agents-context setup CLIENT` in a project with the agent files of several tools, then a scripted
session reads, edits and writes files. The hook adds each rule once, after the first touch; never
a rule the client added itself; nothing for a file no rule matches; the pinned files from the
first request."""

from __future__ import annotations

import html
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
import tomlkit

from bench import monorepo
from tests.conftest import write_tree
from tests.harness import claude, codex, gemini
from tests.harness.standin import Say, ToolCall, Turn
from tests.helpers import REPO, SERVER

HOOK = Path(sys.executable).with_name("agents-context-hook")

pytestmark = pytest.mark.skipif(not HOOK.exists(), reason=f"{HOOK} is not installed (uv sync installs it)")

MONOREPO: dict[str, str | bytes] = {
    "AGENTS.md": "# Agents\n\nAGENTS-MARK. Run make test before every commit.\n",
    "CLAUDE.md": "# Claude\n\n@AGENTS.md\n",
    ".AGENTS/overview.md": "# Overview\n\nOVERVIEW-MARK. A monorepo for a tea shop.\n",
    ".cursor/rules/always.mdc": "---\nalwaysApply: true\n---\n# Always\n\nCURSOR-ALWAYS-MARK. English only.\n",
    ".cursor/rules/ts.mdc": "---\nglobs: '**/*.ts'\n---\n# TypeScript\n\nCURSOR-TS-MARK. No default exports.\n",
    ".claude/rules/api.md": "---\npaths: apps/api/**\n---\n# API\n\nCLAUDE-API-MARK. Validate every input.\n",
    "apps/api/src/auth.ts": "export const auth = 1;\n",
    "apps/api/src/users.ts": "export const users = 2;\n",
    "apps/web/CLAUDE.md": "# Web\n\nWEB-CLAUDE-MARK. Server components only.\n",
    "apps/web/page.tsx": "export default function Page() {}\n",
    "notes/todo.txt": "nothing here\n",
}


@pytest.mark.skipif(claude.available() is not None, reason=str(claude.available()))
def test_each_rule_reaches_the_model_once_after_the_first_touch(tmp_path: Path) -> None:
    project = write_tree(tmp_path / "monorepo", MONOREPO)
    setup = subprocess.run(
        [sys.executable, SERVER, "setup", "claude-code", "--project", str(project), "--command", str(HOOK.parent / "agents-context")],
        capture_output=True, text=True, timeout=120, cwd=REPO, check=False,
    )  # fmt: skip
    assert setup.returncode == 0, setup.stderr
    auth, users = project / "apps/api/src/auth.ts", project / "apps/api/src/users.ts"
    turns: list[Turn] = [
        [ToolCall("Read", {"file_path": str(auth)})],
        [ToolCall("Edit", {"file_path": str(auth), "old_string": "= 1", "new_string": "= 10"})],
        [ToolCall("Read", {"file_path": str(users)})],
        [ToolCall("Write", {"file_path": str(project / "notes/done.txt"), "content": "done\n"})],
        [ToolCall("Read", {"file_path": str(project / "apps/web/page.tsx")})],
        Say("done"),
    ]
    allow = {"permissions": {"allow": ["Read", "Edit", "Write"]}}
    entry = json.loads((project / ".mcp.json").read_text(encoding="utf-8"))["mcpServers"]["agents-context"]
    run = claude.run(project, turns, server=[entry["command"], *entry["args"]], settings=allow)  # as setup wrote it
    assert run.returncode == 0, run.stderr[-2000:]
    first, last = claude.context_text(run, 0), claude.context_text(run, len(run.requests) - 1)
    # The pinned files the client does not load itself, from the first request; AGENTS.md once.
    assert "OVERVIEW-MARK" in first and "CURSOR-ALWAYS-MARK" in first
    assert first.count("AGENTS-MARK") == 1
    # Each rule once, after the first touch of a file it matches.
    assert "CURSOR-TS-MARK" not in claude.context_text(run, 1).split("Read")[0]
    assert last.count("CURSOR-TS-MARK") == 1
    assert last.count("CLAUDE-API-MARK") == 1  # Claude Code added it on the read: not again
    assert last.count("WEB-CLAUDE-MARK") == 1  # the nested CLAUDE.md, by Claude Code itself
    assert last.count("OVERVIEW-MARK") == 1
    # Nothing for a file no rule matches, nor for one whose only rule Claude Code added itself.
    told = re.findall(r"agents-context: the project's agent files have rules for ([^:]+):", last)
    assert told == ["apps/api/src/auth.ts"], told


def set_up_claude_code(project: Path) -> list[str]:
    """`agents-context setup claude-code` in `project`; the server's command line as it wrote it."""
    setup = subprocess.run(
        [sys.executable, SERVER, "setup", "claude-code", "--project", str(project), "--command", str(HOOK.parent / "agents-context")],
        capture_output=True, text=True, timeout=120, cwd=REPO, check=False,
    )  # fmt: skip
    assert setup.returncode == 0, setup.stderr
    entry = json.loads((project / ".mcp.json").read_text(encoding="utf-8"))["mcpServers"]["agents-context"]
    return [entry["command"], *entry["args"]]


@pytest.mark.skipif(claude.available() is not None, reason=str(claude.available()))
def test_after_a_compaction_the_pinned_files_are_back(tmp_path: Path) -> None:
    """A session, then `/compact` in it, then one more turn, through a real Claude Code: the
    summary replaces the conversation, so pinned files given at the start are gone; the hook
    Claude Code runs for `SessionStart` with `source: compact` puts the ones it does not load
    itself back into what the model reads next."""
    project = write_tree(tmp_path / "monorepo", MONOREPO)
    server = set_up_claude_code(project)
    settings_file = project / ".claude" / "settings.json"
    written = json.loads(settings_file.read_text(encoding="utf-8"))
    assert written["hooks"]["SessionStart"][0]["matcher"] == "startup|resume|clear|compact"

    def after_compaction(sources: str) -> str:
        """What the model reads first after a compaction, the hook run at session start for `sources`."""
        hooks = json.loads(json.dumps(written))
        hooks["hooks"]["SessionStart"][0]["matcher"] = sources
        settings_file.write_text(json.dumps(hooks), encoding="utf-8")
        home = tmp_path / f"home-{sources}"
        first = claude.run(project, [Say("done")], server=server, home=home)
        assert first.returncode == 0, first.stderr[-2000:]
        assert ("OVERVIEW-MARK" in claude.context_text(first, 0)) == ("startup" in sources)
        session = json.loads(first.stdout)["session_id"]
        compacted = claude.run(project, [], server=server, home=home, resume=session, prompt="/compact")
        assert compacted.returncode == 0 and compacted.compactions == 1, compacted.stderr[-2000:]
        then = claude.run(project, [Say("done")], server=server, home=home, resume=session, prompt="Go on.")
        assert then.returncode == 0, then.stderr[-2000:]
        text = claude.context_text(then, 0)
        assert "1. Primary Request: the project's rules." in text  # the summary stands for the conversation
        return text

    # The hook at a session's start only: the compaction drops what it gave.
    unhooked = after_compaction("startup")
    assert "OVERVIEW-MARK" not in unhooked and "CURSOR-ALWAYS-MARK" not in unhooked
    assert unhooked.count("AGENTS-MARK") == 1  # Claude Code loads CLAUDE.md and its import again itself
    # The hook after a compaction only (not at the start, not on resume): what follows has them.
    hooked = after_compaction("compact")
    assert hooked.count("OVERVIEW-MARK") == 1 and hooked.count("CURSOR-ALWAYS-MARK") == 1
    assert hooked.count("AGENTS-MARK") == 1


POLYGLOT: dict[str, str | bytes] = {
    **MONOREPO,
    "GEMINI.md": "# Gemini\n\nGEMINI-TOP-MARK. Answer briefly.\n",
    "apps/api/GEMINI.md": "# API for Gemini\n\nAPI-GEM-MARK. Log every request.\n",
    "apps/web/AGENTS.md": "# Web\n\nWEB-NESTED-MARK. Use pnpm.\n",
    "apps/web/GEMINI.md": "# Web for Gemini\n\nWEB-GEM-MARK. Tabs, not spaces.\n",
}
"""MONOREPO with Gemini CLI's files and nested AGENTS.md and GEMINI.md (no mark is part of another)."""
RULES = ("CURSOR-TS-MARK", "CLAUDE-API-MARK", "API-GEM-MARK", "WEB-NESTED-MARK", "WEB-CLAUDE-MARK", "WEB-GEM-MARK")
"""The marks of the rules that apply to some files and not others."""
TOLD = r"agents-context: the project's agent files have rules for ([^:]+):"


def set_up(client: str, project: Path) -> None:
    setup = subprocess.run(
        [sys.executable, SERVER, "setup", client, "--project", str(project), "--command", str(HOOK.parent / "agents-context")],
        capture_output=True, text=True, timeout=120, cwd=REPO, check=False,
    )  # fmt: skip
    assert setup.returncode == 0, setup.stderr


@pytest.mark.skipif(codex.available() is not None, reason=str(codex.available()))
def test_codex_gets_each_rule_once_as_developer_context(tmp_path: Path) -> None:
    """Codex has no file-reading tool: it reads through the shell and writes with apply_patch. The
    hook's context arrives as a developer message: at the start after the AGENTS.md Codex loads
    itself, for a tool call between the call and its output."""
    project = write_tree(tmp_path / "monorepo", POLYGLOT)
    set_up("codex", project)
    patch = "*** Begin Patch\n*** Update File: apps/api/src/auth.ts\n@@\n-export const auth = 1;\n+export const auth = 10;\n*** End Patch\n"
    turns: list[Turn] = [
        [ToolCall("apply_patch", {"input": patch})],
        [ToolCall("exec_command", {"cmd": "cat apps/api/src/users.ts"})],
        [ToolCall("exec_command", {"cmd": "cat apps/web/page.tsx"})],
        [ToolCall("apply_patch", {"input": "*** Begin Patch\n*** Add File: notes/done.txt\n+done\n*** End Patch\n"})],
        [ToolCall("exec_command", {"cmd": "cat notes/todo.txt"})],
        Say("done"),
    ]
    entry = tomlkit.parse((project / ".codex/config.toml").read_text(encoding="utf-8")).unwrap()["mcp_servers"][
        "agents-context"
    ]
    run = codex.run(
        project, turns, server=[entry["command"], *entry["args"]],  # as setup wrote it
        # Codex's own sandbox does not get apply_patch through inside the test's namespace (it
        # hangs); that namespace, without network, is the sandbox here.
        overrides=['sandbox_mode="danger-full-access"'],
        trust_project_hooks=True,  # `exec` cannot review the project's hooks: Codex's bypass
    )  # fmt: skip
    assert run.returncode == 0, run.stderr[-2000:]
    assert (project / "notes/done.txt").is_file() and "auth = 10" in (project / "apps/api/src/auth.ts").read_text()
    first, last = codex.context_text(run, 0), codex.context_text(run, len(run.requests) - 1)
    # The pinned files Codex does not load itself, from the first request; AGENTS.md once (Codex's).
    assert "[developer]\nagents-context: the project's pinned agent files" in first
    assert "OVERVIEW-MARK" in first and "CURSOR-ALWAYS-MARK" in first and "GEMINI-TOP-MARK" in first
    assert first.count("AGENTS-MARK") == 1 and "(Codex loaded monorepo/AGENTS.md itself.)" in first
    assert not any(mark in first for mark in RULES)
    # The patch's rules, between the call and its output, as a developer message.
    patched = codex.context_text(run, 1)
    call, told, output = (
        patched.index(text) for text in ("[call apply_patch]", "CURSOR-TS-MARK", "[output]\nExit code: 0")
    )
    assert call < told < output
    assert re.search(
        r"\[developer\]\nagents-context: the project's agent files have rules for apps/api/src/auth\.ts:", patched
    )
    # Each rule once, the nested AGENTS.md, CLAUDE.md and GEMINI.md on the first `cat` in their folder.
    for mark in (*RULES, "OVERVIEW-MARK", "CURSOR-ALWAYS-MARK", "AGENTS-MARK", "GEMINI-TOP-MARK"):
        assert last.count(mark) == 1, mark
    assert re.findall(TOLD, last) == ["apps/api/src/auth.ts", "apps/web/page.tsx"]
    outputs = codex.tool_outputs(run)
    assert len(outputs) == 5 and not any("agents-context" in output for output in outputs)


@pytest.mark.skipif(gemini.available() is not None, reason=str(gemini.available()))
def test_gemini_cli_gets_each_rule_once_with_the_tool_result(tmp_path: Path) -> None:
    """Gemini CLI appends the hook's context to the tool's result (`<hook_context>`) and the
    session start's as a part of the first user turn. It loads the top GEMINI.md itself, and a
    nested GEMINI.md when one of its file tools touches the folder (not through the shell)."""
    project = write_tree(tmp_path / "monorepo", POLYGLOT)
    set_up("gemini-cli", project)
    turns: list[Turn] = [
        [ToolCall("read_file", {"file_path": "apps/api/src/auth.ts"})],
        [
            ToolCall(
                "write_file",
                {"file_path": str(project / "apps/api/src/users.ts"), "content": "export const users = 3;\n"},
            )
        ],
        [ToolCall("run_shell_command", {"command": "cat apps/web/page.tsx"})],
        [ToolCall("write_file", {"file_path": "notes/done.txt", "content": "done\n"})],
        [ToolCall("run_shell_command", {"command": "cat notes/todo.txt"})],
        Say("done"),
    ]
    entry = json.loads((project / ".gemini/settings.json").read_text(encoding="utf-8"))["mcpServers"]["agents-context"]
    # Headless Gemini CLI offers no tool that asks for confirmation unless allowed. Its project
    # hooks need no trust switch: with folder trust off (as the runner sets it) it warns and runs them.
    allow = {"tools": {"allowed": ["write_file", "run_shell_command(cat)"]}}
    run = gemini.run(project, turns, server=[entry["command"], *entry["args"]], settings=allow)  # as setup wrote it
    assert run.returncode == 0, run.stderr[-2000:]
    assert (project / "notes/done.txt").is_file()
    first, last = gemini.context_text(run, 0), gemini.context_text(run, len(run.requests) - 1)
    # The pinned files Gemini CLI does not load itself (AGENTS.md among them) from the first request.
    assert "<hook_context>agents-context: the project's pinned agent files" in first
    assert "OVERVIEW-MARK" in first and "CURSOR-ALWAYS-MARK" in first and "AGENTS-MARK" in first
    assert first.count("GEMINI-TOP-MARK") == 1  # Gemini CLI's own
    assert not any(mark in first for mark in RULES)
    # Each rule once, appended to the result of the first tool that touched a file it matches.
    read, written, web, done, todo = outputs = gemini.tool_outputs(run)
    assert all('"output"' in output for output in outputs), outputs
    assert "<hook_context>" in read and "CURSOR-TS-MARK" in read and "CLAUDE-API-MARK" in read
    assert "API-GEM-MARK" in read.split("<hook_context>")[0]  # Gemini CLI's own, not the hook's
    assert "<hook_context>" in web and all(m in web for m in ("WEB-NESTED-MARK", "WEB-CLAUDE-MARK", "WEB-GEM-MARK"))
    assert not any("agents-context" in output for output in (written, done, todo))
    for mark in (*RULES, "OVERVIEW-MARK", "CURSOR-ALWAYS-MARK", "AGENTS-MARK", "GEMINI-TOP-MARK"):
        assert last.count(mark) == 1, mark
    assert re.findall(TOLD, last) == ["apps/api/src/auth.ts", "apps/web/page.tsx"]


# --- a monorepo's rules: files, not sections ---------------------------------------------------------

SECOND_TASK = "apps/jobs/src/trigger/emails/send-welcome.ts"


def injected(text: str, head: str = "agents-context: the project's agent files have rules for ") -> list[str]:
    """Each answer of the hook in `text` as the model reads it: its head line, then its blocks (a
    `<context ...>` to its `</context>`, or a closed tag) and the line naming what had no room."""
    found: list[str] = []
    at = text.find(head)
    while at >= 0:
        end = text.index("\n", at)
        while text.startswith("\n\n<context ", end):
            line_end = text.find("\n", end + 2)
            line_end = len(text) if line_end < 0 else line_end
            closed = text[end + 2 : line_end].endswith(" />")
            end = line_end if closed else text.index("\n</context>", end) + len("\n</context>")
        if text.startswith("\n\nNamed without text", end):
            end = text.index("\n", end + 2) if "\n" in text[end + 2 :] else len(text)
        found.append(text[at:end])
        at = text.find(head, end)
    return found


def assert_rules_reach_the_model(last: str, project: Path) -> None:
    """Both rules a task file gets, the rules' own lines at least 80% of what the hook added, and
    no line of a rule twice."""
    answers = injected(last)
    assert answers, last[-3000:]
    first = answers[0]
    assert "TRIGGER-INTRO-MARK" in first and "TS-RULE-MARK" in first, first[:2000]
    tags = re.findall(r'<context path="([^"]+)"', first)
    assert len(tags) == len(set(tags)) >= 2 and 'lines="1011"' in first  # a label per file, not per section
    lines = monorepo.rule_lines(project)
    assert monorepo.rule_share(first, lines) >= 0.8, (monorepo.rule_share(first, lines), first[:1500])
    whole = "\n".join(answers)  # and of all it added in the session
    assert monorepo.rule_share(whole, lines) >= 0.8, [(len(a), monorepo.rule_share(a, lines)) for a in answers]
    marks = ["TRIGGER-INTRO-MARK", "TS-RULE-MARK", *(f"TRIGGER-S{n:02d}-MARK" for n in range(1, 41))]
    assert all(last.count(mark) <= 1 for mark in marks), [m for m in marks if last.count(m) > 1]
    assert "TRIGGER-S30-MARK" in "".join(answers)  # "Sessions cleanup jobs": the section the path names


@pytest.mark.skipif(claude.available() is not None, reason=str(claude.available()))
def test_claude_code_gets_a_monorepos_rules_as_files_within_its_budget(tmp_path: Path) -> None:
    project = monorepo.write(tmp_path / "mono")
    server = set_up_claude_code(project)
    task, second = project / monorepo.TASK_FILE, project / SECOND_TASK
    turns: list[Turn] = [
        [ToolCall("Read", {"file_path": str(task)})],
        [ToolCall("Read", {"file_path": str(second)})],
        [ToolCall("Edit", {"file_path": str(task), "old_string": "= 1", "new_string": "= 2"})],
        Say("done"),
    ]
    allow = {"permissions": {"allow": ["Read", "Edit"]}}
    run = claude.run(project, turns, server=server, settings=allow)
    assert run.returncode == 0, run.stderr[-2000:]
    assert_rules_reach_the_model(claude.context_text(run, len(run.requests) - 1), project)


@pytest.mark.skipif(codex.available() is not None, reason=str(codex.available()))
def test_codex_gets_a_monorepos_rules_as_files_within_its_budget(tmp_path: Path) -> None:
    project = monorepo.write(tmp_path / "mono")
    set_up("codex", project)
    patch = (
        f"*** Begin Patch\n*** Update File: {monorepo.TASK_FILE}\n@@\n-export const cleanupSessions = 1;\n"
        "+export const cleanupSessions = 2;\n*** End Patch\n"
    )
    turns: list[Turn] = [
        [ToolCall("exec_command", {"cmd": f"cat {monorepo.TASK_FILE}"})],
        [ToolCall("exec_command", {"cmd": f"cat {SECOND_TASK}"})],
        [ToolCall("apply_patch", {"input": patch})],
        Say("done"),
    ]
    entry = tomlkit.parse((project / ".codex/config.toml").read_text(encoding="utf-8")).unwrap()["mcp_servers"][
        "agents-context"
    ]
    run = codex.run(
        project, turns, server=[entry["command"], *entry["args"]],
        overrides=['sandbox_mode="danger-full-access"'], trust_project_hooks=True,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr[-2000:]
    assert "cleanupSessions = 2" in (project / monorepo.TASK_FILE).read_text(encoding="utf-8")
    assert_rules_reach_the_model(codex.context_text(run, len(run.requests) - 1), project)


@pytest.mark.skipif(gemini.available() is not None, reason=str(gemini.available()))
def test_gemini_cli_gets_a_monorepos_rules_as_files_within_its_budget(tmp_path: Path) -> None:
    project = monorepo.write(tmp_path / "mono")
    set_up("gemini-cli", project)
    turns: list[Turn] = [
        [ToolCall("read_file", {"file_path": monorepo.TASK_FILE})],
        [ToolCall("read_file", {"file_path": SECOND_TASK})],
        [ToolCall("write_file", {"file_path": str(project / monorepo.TASK_FILE), "content": "export const c = 2;\n"})],
        Say("done"),
    ]
    entry = json.loads((project / ".gemini/settings.json").read_text(encoding="utf-8"))["mcpServers"]["agents-context"]
    allow = {"tools": {"allowed": ["write_file"]}}
    run = gemini.run(project, turns, server=[entry["command"], *entry["args"]], settings=allow)
    assert run.returncode == 0, run.stderr[-2000:]
    assert "c = 2" in (project / monorepo.TASK_FILE).read_text(encoding="utf-8")
    # Gemini CLI appends the hook's context to the tool's output, its < and > escaped as &lt; and
    # &gt; (the model reads `&lt;context path=...&gt;`): read back as the model reads through them.
    outputs = [json.loads(o)["response"].get("output", "") for o in gemini.tool_outputs(run)]
    assert "&lt;context path=" in outputs[0]
    assert_rules_reach_the_model(html.unescape("\n\n".join(outputs)), project)
