"""The hook, as each host runs it: the pinned files at a session's start, less what the client
loads itself; the rules for a touched file, each once per session, forgotten on a compaction;
nothing for a file no rule matches, for another host's payload, or for anything that goes wrong,
which is logged instead; never an exit status but 0."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from cli.hook import answer, shell_paths
from cli.state import STATE_ENV
from tests.conftest import write_tree
from tests.helpers import REPO

PROJECT: dict[str, str | bytes] = {
    "AGENTS.md": "# Agents\n\nAGENTS-MARK. Run make test.\n",
    "CLAUDE.md": "# Claude\n\n@AGENTS.md\n",
    ".AGENTS/overview.md": "# Overview\n\nOVERVIEW-MARK. A tea shop.\n",
    ".claude/rules/api.md": "---\npaths: src/api/**\n---\n# API rules\n\nCLAUDE-API-MARK. Validate every input.\n",
    ".cursor/rules/ts.mdc": "---\nglobs: '**/*.ts'\n---\n# TypeScript\n\nCURSOR-TS-MARK. No default exports.\n",
    "src/api/AGENTS.md": "# API agents\n\nNESTED-AGENTS-MARK. The API is versioned.\n",
    "src/api/auth.ts": "export const x = 1;\n",
    "src/api/users.ts": "export const y = 2;\n",
    "docs/readme.txt": "plain\n",
}


@pytest.fixture(autouse=True)
def state(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    folder = tmp_path / "state"
    monkeypatch.setenv(STATE_ENV, str(folder))
    for name in ("CLAUDE_PROJECT_DIR", "CODEX_PROJECT_DIR", "GEMINI_PROJECT_DIR", "CURSOR_PROJECT_DIR"):
        monkeypatch.delenv(name, raising=False)
    yield folder


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return write_tree(tmp_path / "shop", PROJECT)


def claude(project: Path, event: str, session: str = "s1", **fields: Any) -> dict[str, Any]:
    return {"session_id": session, "hook_event_name": event, "cwd": str(project), **fields}


def context(out: str) -> str:
    """The context a Claude-Code-shaped output adds ('' for none)."""
    return str(json.loads(out)["hookSpecificOutput"]["additionalContext"]) if out else ""


def test_at_the_start_the_pinned_files_claude_code_does_not_load(project: Path) -> None:
    out = answer("claude-code", claude(project, "SessionStart", source="startup"))
    assert json.loads(out)["hookSpecificOutput"]["hookEventName"] == "SessionStart"
    text = context(out)
    assert "OVERVIEW-MARK" in text
    assert "AGENTS-MARK" not in text  # CLAUDE.md imports it: Claude Code loaded it
    assert "Claude Code loaded shop/AGENTS.md itself" in text


def test_at_the_start_codex_gets_what_it_does_not_load(project: Path) -> None:
    text = context(answer("codex", claude(project, "SessionStart", source="startup")))
    assert "OVERVIEW-MARK" in text and "AGENTS-MARK" not in text


def test_a_touched_file_gets_its_rules_once_most_specific_first(project: Path) -> None:
    edit = claude(project, "PreToolUse", tool_name="Edit", tool_input={"file_path": str(project / "src/api/auth.ts")})
    first = context(answer("claude-code", edit))
    assert first.startswith("agents-context: the project's agent files have rules for src/api/auth.ts: ")
    assert first.index("CLAUDE-API-MARK") < first.index("NESTED-AGENTS-MARK")  # globs before folders
    assert "CURSOR-TS-MARK" in first
    assert answer("claude-code", edit) == ""  # once per session
    other = claude(
        project, "PostToolUse", tool_name="Write", tool_input={"file_path": str(project / "src/api/users.ts")}
    )
    assert answer("claude-code", other) == ""  # the same rules: already given
    assert "CLAUDE-API-MARK" in context(answer("claude-code", {**edit, "session_id": "s2"}))  # another session


def test_a_compaction_or_a_clear_forgets_what_was_given(project: Path) -> None:
    edit = claude(project, "PreToolUse", tool_name="Edit", tool_input={"file_path": str(project / "src/api/auth.ts")})
    assert context(answer("claude-code", edit))
    assert answer("claude-code", claude(project, "SessionStart", source="resume")) != ""
    assert answer("claude-code", edit) == ""  # a resumed session keeps what it was given
    answer("claude-code", claude(project, "SessionStart", source="compact"))
    assert "CLAUDE-API-MARK" in context(answer("claude-code", edit))


def test_what_claude_code_adds_itself_on_a_read_is_left_out(project: Path) -> None:
    read = claude(project, "PreToolUse", tool_name="Read", tool_input={"file_path": str(project / "src/api/auth.ts")})
    text = context(answer("claude-code", read))
    assert "CLAUDE-API-MARK" not in text  # Claude Code adds .claude/rules with matching paths: on a read
    assert "CURSOR-TS-MARK" in text and "NESTED-AGENTS-MARK" in text


def test_nothing_for_a_file_no_rule_matches(project: Path) -> None:
    read = claude(project, "PreToolUse", tool_name="Read", tool_input={"file_path": str(project / "docs/readme.txt")})
    assert answer("claude-code", read) == ""


def test_paths_in_shell_commands_and_patches(project: Path) -> None:
    assert list(shell_paths("cat src/api/auth.ts | head -5 > out.md", project)) == [
        str(project / "src/api/auth.ts"),
        str(project / "out.md"),
    ]
    assert list(shell_paths("ls -la 'unclosed", project)) == []
    patch = "*** Begin Patch\n*** Update File: src/api/auth.ts\n@@\n-x\n+y\n*** End Patch\n"
    out = answer("codex", claude(project, "PreToolUse", tool_name="apply_patch", tool_input={"command": patch}))
    assert "CLAUDE-API-MARK" in context(out)
    bash = claude(project, "PreToolUse", tool_name="Bash", tool_input={"command": "sed -n 1p src/api/users.ts"})
    assert "CURSOR-TS-MARK" in context(answer("claude-code", bash))


def test_gemini_cli_read_many_files_counts_the_files_it_names(project: Path) -> None:
    payload = claude(
        project, "AfterTool", tool_name="read_many_files", tool_input={"include": ["src/api/users.ts", "**/*.md"]}
    )
    out = json.loads(answer("gemini-cli", payload))
    assert "CURSOR-TS-MARK" in out["hookSpecificOutput"]["additionalContext"]


def test_gemini_cli_after_a_tool(project: Path) -> None:
    payload = claude(project, "AfterTool", tool_name="read_file", tool_input={"file_path": "src/api/auth.ts"})
    out = json.loads(answer("gemini-cli", payload))
    assert out["hookSpecificOutput"]["hookEventName"] == "AfterTool"
    assert "NESTED-AGENTS-MARK" in out["hookSpecificOutput"]["additionalContext"]


def test_cline_at_the_start_and_before_a_tool(project: Path) -> None:
    roots = {"clineVersion": "3.40.0", "taskId": "task-1", "workspaceRoots": [str(project)]}
    start = json.loads(answer("cline", {**roots, "hookName": "TaskStart", "taskStart": {"task": "fix auth"}}))
    assert start["cancel"] is False and "OVERVIEW-MARK" in start["contextModification"]
    tool = {"toolName": "read_file", "parameters": {"path": "src/api/auth.ts"}}
    before = json.loads(answer("cline", {**roots, "hookName": "PreToolUse", "preToolUse": tool}))
    assert "CLAUDE-API-MARK" in before["contextModification"]
    assert answer("cline", {**roots, "hookName": "PreToolUse", "preToolUse": tool}) == ""  # once


def test_cline_and_cursor_get_a_json_object_even_when_there_is_nothing_to_add(project: Path, state: Path) -> None:
    env = {**os.environ, STATE_ENV: str(state)}
    assert json.loads(run_hook(["cline"], "{}", env).stdout) == {"cancel": False}
    assert json.loads(run_hook(["cursor"], "{not json", env).stdout) == {}


@pytest.mark.parametrize(
    "payload",
    [
        {"sessionId": "v", "hookEventName": "PreToolUse", "tool_name": "editFiles", "tool_input": {"filePath": "x"}},
        {"conversation_id": "c", "hook_event_name": "preToolUse", "tool_name": "Read"},
        {"agent_action_name": "pre_read_code", "trajectory_id": "t"},
        {"taskId": "t", "preToolUse": {"toolName": "read_file"}},
        [],
        None,
        "text",
    ],
)
def test_another_hosts_payload_is_ignored(project: Path, payload: object) -> None:
    assert answer("claude-code", payload) == ""


def test_over_the_hosts_limit_rules_are_named_with_how_to_read_them(tmp_path: Path) -> None:
    big = {f".claude/rules/r{i}.md": f"---\npaths: src/**\n---\n# Rule {i}\n\n" + "word " * 900 for i in range(6)}
    folder = write_tree(tmp_path / "big", {"AGENTS.md": "# A\n", **big, "src/a.py": "x = 1\n"})
    edit = claude(folder, "PreToolUse", tool_name="Edit", tool_input={"file_path": str(folder / "src/a.py")})
    text = context(answer("claude-code", edit))
    assert len(text) <= 9_500
    assert "Not shown here, over this hook's 9,500 characters (read them with your file tool" in text
    assert all(f"big/.claude/rules/r{i}.md" in text.split("\n")[0] for i in range(6))  # the first line names all


def run_hook(args: list[str], stdin: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    script = Path(sys.executable).with_name("agents-context-hook")
    command = [str(script)] if script.exists() else [sys.executable, "-m", "cli.hook"]
    return subprocess.run(
        [*command, *args], input=stdin, capture_output=True, text=True, timeout=60, cwd=REPO, env=env, check=False
    )


@pytest.mark.parametrize(
    ("args", "stdin"),
    [(["claude-code"], "{not json"), (["nobody"], "{}"), ([], "{}"), (["claude-code"], "")],
)
def test_anything_wrong_prints_nothing_exits_0_and_is_logged(
    project: Path, state: Path, args: list[str], stdin: str
) -> None:
    done = run_hook(args, stdin, {**os.environ, STATE_ENV: str(state)})
    assert (done.returncode, done.stdout) == (0, "")
    if stdin != "":
        assert (state / "hook.log").read_text(encoding="utf-8").strip()


def test_the_command_answers_a_real_payload(project: Path, state: Path) -> None:
    payload = claude(
        project, "PreToolUse", tool_name="Edit", tool_input={"file_path": str(project / "src/api/auth.ts")}
    )
    done = run_hook(["claude-code"], json.dumps(payload), {**os.environ, STATE_ENV: str(state)})
    assert done.returncode == 0, done.stderr
    assert "CLAUDE-API-MARK" in context(done.stdout)
    assert not any(p.name.startswith(".") for p in project.iterdir() if p.name not in {".AGENTS", ".claude", ".cursor"})
