"""The hook, as each host runs it: the pinned files at a session's start, less what the client
loads itself; the rules for a touched file, each once per session, forgotten on a compaction;
nothing for a file no rule matches, for another host's payload, or for anything that goes wrong,
which is logged instead; never an exit status but 0."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

from bench import monorepo
from clients.payloads import shell_paths
from hook.main import respond
from hook.sessions import record_path
from tests.conftest import write_tree
from tests.helpers import REPO
from writes.locks import locked
from writes.state import STATE_ENV

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
    out = respond("claude-code", claude(project, "SessionStart", source="startup"))
    assert json.loads(out)["hookSpecificOutput"]["hookEventName"] == "SessionStart"
    text = context(out)
    assert "OVERVIEW-MARK" in text
    assert "AGENTS-MARK" not in text  # CLAUDE.md imports it: Claude Code loaded it
    assert "Claude Code loaded shop/AGENTS.md itself" in text


def test_at_the_start_codex_gets_what_it_does_not_load(project: Path) -> None:
    text = context(respond("codex", claude(project, "SessionStart", source="startup")))
    assert "OVERVIEW-MARK" in text and "AGENTS-MARK" not in text


def test_a_touched_file_gets_its_rules_once_most_specific_first(project: Path) -> None:
    edit = claude(project, "PreToolUse", tool_name="Edit", tool_input={"file_path": str(project / "src/api/auth.ts")})
    first = context(respond("claude-code", edit))
    assert first.startswith(
        "agents-context: the project's agent files have rules for src/api/auth.ts:\n\n<context path="
    )
    assert first.index("CLAUDE-API-MARK") < first.index("NESTED-AGENTS-MARK")  # globs before folders
    assert "CURSOR-TS-MARK" in first
    assert respond("claude-code", edit) == ""  # once per session
    other = claude(
        project, "PostToolUse", tool_name="Write", tool_input={"file_path": str(project / "src/api/users.ts")}
    )
    assert respond("claude-code", other) == ""  # the same rules: already given
    assert "CLAUDE-API-MARK" in context(respond("claude-code", {**edit, "session_id": "s2"}))  # another session


def test_a_compaction_or_a_clear_forgets_what_was_given(project: Path) -> None:
    edit = claude(project, "PreToolUse", tool_name="Edit", tool_input={"file_path": str(project / "src/api/auth.ts")})
    assert context(respond("claude-code", edit))
    assert respond("claude-code", claude(project, "SessionStart", source="resume")) != ""
    assert respond("claude-code", edit) == ""  # a resumed session keeps what it was given
    respond("claude-code", claude(project, "SessionStart", source="compact"))
    assert "CLAUDE-API-MARK" in context(respond("claude-code", edit))


def test_what_claude_code_adds_itself_on_a_read_is_left_out(project: Path) -> None:
    read = claude(project, "PreToolUse", tool_name="Read", tool_input={"file_path": str(project / "src/api/auth.ts")})
    text = context(respond("claude-code", read))
    assert "CLAUDE-API-MARK" not in text  # Claude Code adds .claude/rules with matching paths: on a read
    assert "CURSOR-TS-MARK" in text and "NESTED-AGENTS-MARK" in text


def test_nothing_for_a_file_no_rule_matches(project: Path) -> None:
    read = claude(project, "PreToolUse", tool_name="Read", tool_input={"file_path": str(project / "docs/readme.txt")})
    assert respond("claude-code", read) == ""


def test_paths_in_shell_commands_and_patches(project: Path) -> None:
    assert list(shell_paths("cat src/api/auth.ts | head -5 > out.md", project)) == [
        str(project / "src/api/auth.ts"),
        str(project / "out.md"),
    ]
    assert list(shell_paths("ls -la 'unclosed", project)) == []
    patch = "*** Begin Patch\n*** Update File: src/api/auth.ts\n@@\n-x\n+y\n*** End Patch\n"
    out = respond("codex", claude(project, "PreToolUse", tool_name="apply_patch", tool_input={"command": patch}))
    assert "CLAUDE-API-MARK" in context(out)
    bash = claude(project, "PreToolUse", tool_name="Bash", tool_input={"command": "sed -n 1p src/api/users.ts"})
    assert "CURSOR-TS-MARK" in context(respond("claude-code", bash))


def test_gemini_cli_read_many_files_counts_the_files_it_names(project: Path) -> None:
    payload = claude(
        project, "AfterTool", tool_name="read_many_files", tool_input={"include": ["src/api/users.ts", "**/*.md"]}
    )
    out = json.loads(respond("gemini-cli", payload))
    assert "CURSOR-TS-MARK" in out["hookSpecificOutput"]["additionalContext"]


def test_gemini_cli_after_a_tool(project: Path) -> None:
    payload = claude(project, "AfterTool", tool_name="read_file", tool_input={"file_path": "src/api/auth.ts"})
    out = json.loads(respond("gemini-cli", payload))
    assert out["hookSpecificOutput"]["hookEventName"] == "AfterTool"
    assert "NESTED-AGENTS-MARK" in out["hookSpecificOutput"]["additionalContext"]


def test_cline_at_the_start_and_before_a_tool(project: Path) -> None:
    roots = {"clineVersion": "3.40.0", "taskId": "task-1", "workspaceRoots": [str(project)]}
    start = json.loads(respond("cline", {**roots, "hookName": "TaskStart", "taskStart": {"task": "fix auth"}}))
    assert start["cancel"] is False and "OVERVIEW-MARK" in start["contextModification"]
    tool = {"toolName": "read_file", "parameters": {"path": "src/api/auth.ts"}}
    before = json.loads(respond("cline", {**roots, "hookName": "PreToolUse", "preToolUse": tool}))
    assert "CLAUDE-API-MARK" in before["contextModification"]
    assert respond("cline", {**roots, "hookName": "PreToolUse", "preToolUse": tool}) == ""  # once


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
    assert respond("claude-code", payload) == ""


def test_over_the_hosts_limit_rules_are_named_with_how_to_read_them(tmp_path: Path) -> None:
    big = {
        f".claude/rules/r{i}.md": f"---\npaths: src/**\ndescription: rule {i}\n---\n# Rule {i}\n\n" + "word " * 900
        for i in range(6)
    }
    folder = write_tree(tmp_path / "big", {"AGENTS.md": "# A\n", **big, "src/a.py": "x = 1\n"})
    edit = claude(folder, "PreToolUse", tool_name="Edit", tool_input={"file_path": str(folder / "src/a.py")})
    text = context(respond("claude-code", edit))
    assert len(text) <= 9_500
    # Each file named once, with why it applies and its description; what fits whole, the rest by name.
    for i in range(6):
        assert text.count(f'path="big/.claude/rules/r{i}.md"') == 1
    assert text.count('applies="claude paths: src/**"') == 6
    assert text.count("</context>") == 1 and text.count(" />") == 5
    assert (
        '<context path="big/.claude/rules/r5.md" applies="claude paths: src/**" lines="7" description="rule 5" />'
        in text
    )
    assert text.endswith(
        "Named without text, for lack of room here: read them with the agents-context read_context tool "
        "(path and section) or your file tool."
    )
    # The next touch of a file they apply to gives the ones only named, and nothing given before.
    again = claude(folder, "PreToolUse", tool_name="Edit", tool_input={"file_path": str(folder / "src/a.py")})
    then = context(respond("claude-code", again))
    assert then.count("</context>") == 1 and then.count(" />") == 4
    whole = {
        i
        for i in range(6)
        if f'path="big/.claude/rules/r{i}.md" applies="claude paths: src/**" lines="7" description="rule {i}">' in text
    }
    assert len(whole) == 1 and not any(f"r{i}.md" in then for i in whole)


def hook_command() -> list[str]:
    script = Path(sys.executable).with_name("agents-context-hook")
    return [str(script)] if script.exists() else [sys.executable, "-m", "hook.main"]


def run_hook(
    args: Sequence[str | bytes], stdin: str | bytes, env: dict[str, str], timeout: float = 60, cwd: Path = REPO
) -> subprocess.CompletedProcess[str]:
    """The hook as a host runs it: a new process, the payload on stdin, its answer on stdout."""
    data = stdin.encode("utf-8") if isinstance(stdin, str) else stdin
    done = subprocess.run(
        [*hook_command(), *args], input=data, capture_output=True, timeout=timeout, cwd=cwd, env=env, check=False
    )
    out, err = done.stdout.decode("utf-8"), done.stderr.decode("utf-8", "replace")
    return subprocess.CompletedProcess(done.args, done.returncode, out, err)


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


# --- hostile input: whatever a payload holds, an answer soon, exit 0, nothing on stderr ---------


def env_of(state: Path, **more: str) -> dict[str, str]:
    return {**os.environ, STATE_ENV: str(state), **more}


def logged(state: Path) -> str:
    log = state / "hook.log"
    return log.read_text(encoding="utf-8") if log.exists() else ""


def quiet(done: subprocess.CompletedProcess[str], out: str = "") -> None:
    """Exit 0, `out` on stdout, and no traceback nor anything else on stderr."""
    assert (done.returncode, done.stdout, done.stderr) == (0, out, "")


def edit(project: Path, path: str, session: str = "s1") -> str:
    return json.dumps(claude(project, "PreToolUse", tool_name="Edit", tool_input={"file_path": path}, session=session))


DEEP_GLOB = "**/a/**/b/**/c/**/d/**/e/**/*.ts"


def test_a_path_of_many_folders_is_answered_at_once(tmp_path: Path, state: Path) -> None:
    """A rule whose glob has six `**` and a path of 250 names and 4,000 characters that it does
    not match: pathspec's backtracking took minutes; hosts stop a hook after 10 s."""
    folder = write_tree(
        tmp_path / "deep",
        {
            "AGENTS.md": "# A\n",
            ".claude/rules/deep.md": f"---\npaths: '{DEEP_GLOB}'\n---\n# Deep\n\nDEEP-MARK.\n",
            ".cursor/rules/py.mdc": "---\nglobs: '**/*.py'\n---\n# Python\n\nPY-MARK.\n",
        },
    )
    fill = (4000 - len(str(folder)) - 480) // 251
    path = str(folder / ("a/b/c/d/e/" * 47 + "/".join(["y" * 250] * fill) + "/x.py"))
    assert len(path) <= 4096 and len(path.split("/")) <= 256 and fill >= 10
    done = run_hook(["claude-code"], edit(folder, path), env_of(state))
    assert done.returncode == 0, done.stderr
    assert "PY-MARK" in context(done.stdout) and "DEEP-MARK" not in done.stdout


@pytest.mark.parametrize(
    ("path", "why"),
    [
        ("d/" * 2000 + "x.py", "path has too many names"),
        ("src/" + "x" * 4100, "path too long"),
        ("src/a\x00.ts", "a path with a NUL character names no file"),
    ],
)
def test_a_path_that_cannot_be_a_projects_file_is_ignored_and_logged(
    project: Path, state: Path, path: str, why: str
) -> None:
    quiet(run_hook(["claude-code"], edit(project, str(project / path)), env_of(state)))
    assert why in logged(state)


@pytest.mark.parametrize("path", ["src/../../etc/passwd", "src/api/../../../shop2/src/api/auth.ts", "../shop/../x.ts"])
def test_a_path_that_leaves_the_project_gets_nothing(project: Path, state: Path, path: str) -> None:
    """A path is resolved before it is placed in the project: `src/../../etc/passwd` is not under
    `src/`, whatever a host sends (a relative path, from the payload's `cwd`)."""
    (project.parent / "shop2/src/api").mkdir(parents=True)
    quiet(run_hook(["claude-code"], edit(project, path), env_of(state)))
    gemini = claude(project, "AfterTool", tool_name="read_file", tool_input={"file_path": path})
    quiet(run_hook(["gemini-cli"], json.dumps(gemini), env_of(state)))


def test_two_sessions_whose_ids_read_alike_are_two_sessions(project: Path, state: Path) -> None:
    """`coll/1` and `coll_1` (and two ids with the same first 120 characters) once shared one
    record, and the second was never given the rules the first was."""
    auth = str(project / "src/api/auth.ts")
    for session in ("coll/1", "coll_1", "x" * 120 + "-a", "x" * 120 + "-b"):
        done = run_hook(["claude-code"], edit(project, auth, session), env_of(state))
        assert "CLAUDE-API-MARK" in context(done.stdout), session
    assert run_hook(["claude-code"], edit(project, auth, "coll/1"), env_of(state)).stdout == ""  # once each


HOSTILE_PAYLOADS: dict[str, bytes] = {
    "not UTF-8": b'{"session_id": "\xff\xfe", "hook_event_name": "SessionStart"}',
    "over 4 MiB": b'{"session_id": "s", "hook_event_name": "SessionStart", "pad": "' + b"x" * (5 << 20) + b'"}',
    "nested 100,000 deep": b"[" * 100_000 + b"]" * 100_000,
    "a lone surrogate": b'{"session_id": "\\udcff", "hook_event_name": "PreToolUse", "tool_name": "Edit"}',
    "numbers for strings": b'{"session_id": 1, "hook_event_name": ["PreToolUse"], "cwd": {}}',
}


@pytest.mark.parametrize("name", HOSTILE_PAYLOADS)
@pytest.mark.parametrize("client", ["claude-code", "cursor"])
def test_any_payload_gets_an_answer_or_nothing_and_exit_0(state: Path, name: str, client: str) -> None:
    done = run_hook([client], HOSTILE_PAYLOADS[name], env_of(state))
    quiet(done, "{}\n" if client == "cursor" else "")
    if name in ("not UTF-8", "over 4 MiB", "nested 100,000 deep"):
        assert f"{client}: a payload " in logged(state)


def test_arguments_that_are_not_utf8_are_logged_escaped(state: Path) -> None:
    """An argument of bytes that are not UTF-8 made the hook fail writing its own log line."""
    done = run_hook([b"claude-code\xff"], "{}", env_of(state))
    quiet(done)
    assert "claude-code\\xff" in logged(state)


def test_a_missing_folder_and_junk_in_the_environment_give_nothing(project: Path, state: Path) -> None:
    auth = str(project / "src/api/auth.ts")
    missing = json.loads(edit(project, auth))
    missing["cwd"] = str(project / "no/such/folder")
    quiet(run_hook(["claude-code"], json.dumps(missing), env_of(state, CLAUDE_PROJECT_DIR="\t\n junk")))
    quiet(run_hook(["claude-code"], edit(project, auth), env_of(state, CLAUDE_PROJECT_DIR=auth)))  # a file
    assert "is not a folder" in logged(state)


def test_the_home_folder_is_not_walked_as_a_project(project: Path, state: Path) -> None:
    """A session in the home folder (where `~/.claude/rules` marks agent files) would walk all of
    it on every event: the hook leaves it, and says so in its log."""
    quiet(run_hook(["claude-code"], edit(project, str(project / "src/api/auth.ts")), env_of(state, HOME=str(project))))
    assert "is the home folder or a file system's top" in logged(state)


def test_long_commands_and_patches_are_read_in_one_pass(project: Path, state: Path) -> None:
    """A shell command of one word of three million characters (Python's shell lexer: minutes), a
    patch header of 300,000 spaces (a regular expression: minutes), 100,000 words, and
    100,000 files for read_many_files: each answered at once, with the files it names first."""
    env = env_of(state)
    word = "sed -n 1p src/api/users.ts " + "y" * 3_000_000
    bash = claude(project, "PreToolUse", tool_name="Bash", tool_input={"command": word})
    assert "CURSOR-TS-MARK" in context(run_hook(["claude-code"], json.dumps(bash), env).stdout)
    patch = "*** Begin Patch\n*** Update File: src/api/auth.ts\n*** Add File: x" + " " * 300_000 + "y\n"
    codex = claude(project, "PreToolUse", tool_name="apply_patch", tool_input={"command": patch}, session="p")
    assert "CLAUDE-API-MARK" in context(run_hook(["codex"], json.dumps(codex), env).stdout)
    words = claude(project, "PreToolUse", tool_name="Bash", tool_input={"command": "ls " + "nope " * 100_000})
    quiet(run_hook(["claude-code"], json.dumps({**words, "session_id": "w"}), env))
    include = ["src/api/users.ts", *[f"nope{i}" for i in range(100_000)]]
    many = claude(project, "AfterTool", tool_name="read_many_files", tool_input={"include": include}, session="m")
    assert "CURSOR-TS-MARK" in context(run_hook(["gemini-cli"], json.dumps(many), env).stdout)


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
def test_a_fifo_or_a_device_as_the_file_never_blocks(project: Path, state: Path) -> None:
    os.mkfifo(project / "src/api/pipe.ts")
    done = run_hook(["claude-code"], edit(project, str(project / "src/api/pipe.ts")), env_of(state))
    assert "CLAUDE-API-MARK" in context(done.stdout)  # rules for its place; the FIFO never opened
    for device in ("/dev/zero", "/dev/stdin"):
        quiet(run_hook(["claude-code"], edit(project, device, session=device), env_of(state)))
    bash = claude(project, "PreToolUse", tool_name="Bash", tool_input={"command": "cat src/api/pipe.ts /dev/zero"})
    assert run_hook(["claude-code"], json.dumps({**bash, "session_id": "b"}), env_of(state)).returncode == 0


def test_hooks_of_one_session_at_once_give_each_rule_once(project: Path, state: Path) -> None:
    payload = edit(project, str(project / "src/api/auth.ts"), "parallel").encode("utf-8")
    running = [
        subprocess.Popen(
            [*hook_command(), "claude-code"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env_of(state)
        )
        for _ in range(6)
    ]
    outs = [p.communicate(payload, timeout=60)[0].decode("utf-8") for p in running]
    assert [p.returncode for p in running] == [0] * 6
    assert sum("CLAUDE-API-MARK" in out for out in outs) == 1, outs


def test_a_host_that_closed_its_end_gets_no_error(project: Path, state: Path) -> None:
    """The answer written to a closed pipe: no traceback, no exit status of 120 at Python's exit."""
    hook = subprocess.Popen(
        [*hook_command(), "claude-code"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env_of(state),
    )  # fmt: skip
    assert hook.stdout is not None and hook.stdin is not None
    hook.stdout.close()
    _, err = hook.communicate(edit(project, str(project / "src/api/auth.ts")).encode("utf-8"), timeout=60)
    assert (hook.returncode, err) == (0, b"")
    assert "the answer could not be written" in logged(state)


def test_the_hook_loads_no_sdk_pydantic_numpy_anyio_or_watchfiles() -> None:
    heavy = ["mcp", "pydantic", "numpy", "anyio", "watchfiles"]
    code = f"import sys, hook.main; print([m for m in {heavy!r} if m in sys.modules])"
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, timeout=60, check=True
    )
    assert done.stdout.strip() == "[]"


def test_a_subagent_is_a_session_of_its_own_that_no_id_can_spell(project: Path, state: Path) -> None:
    """Session `s` with subagent `a` was the record of session `s.a`."""
    auth = str(project / "src/api/auth.ts")
    sub = json.loads(edit(project, auth, "s"))
    for payload in ({**sub, "agent_id": "a"}, json.loads(edit(project, auth, "s.a")), sub):
        assert "CLAUDE-API-MARK" in context(run_hook(["claude-code"], json.dumps(payload), env_of(state)).stdout)


def test_a_hook_waits_for_another_of_its_session_a_few_seconds_at_most(project: Path, state: Path) -> None:
    """A hook of the same session that never lets go (stopped, or hung) once held every later one
    until the host killed it."""
    lock = record_path("claude-code", "held").with_suffix(".lock")
    with locked(lock):
        quiet(run_hook(["claude-code"], edit(project, str(project / "src/api/auth.ts"), "held"), env_of(state)))
    assert "is locked by another process" in logged(state)


@pytest.mark.skipif(os.name != "posix", reason="symlinks need privileges on Windows")
def test_a_project_with_link_loops_is_answered(project: Path, state: Path) -> None:
    (project / "loop").symlink_to(project / "loop")
    (project / "src/a").symlink_to(project / "src/b")
    (project / "src/b").symlink_to(project / "src/a")
    (project / "src/api/up").symlink_to(project)
    for path in ("src/api/auth.ts", "loop/x.ts", "src/a/x.ts", "src/api/up/src/api/users.ts"):
        done = run_hook(["claude-code"], edit(project, str(project / path), path), env_of(state))
        assert (done.returncode, done.stderr) == (0, ""), path
    start = claude(project, "SessionStart", source="startup", session="loops")
    assert "OVERVIEW-MARK" in context(run_hook(["claude-code"], json.dumps(start), env_of(state)).stdout)


def test_a_long_rule_is_given_once_then_only_what_names_the_next_file(tmp_path: Path) -> None:
    project = monorepo.write(tmp_path / "mono")
    lines = monorepo.rule_lines(project)

    def read(rel: str, event: str = "PreToolUse") -> str:
        payload = claude(project, event, tool_name="Read", tool_input={"file_path": str(project / rel)})
        return context(respond("claude-code", payload))

    first = read(monorepo.TASK_FILE)
    assert len(first) <= 9_500 and monorepo.rule_share(first, lines) >= 0.8
    assert "TRIGGER-INTRO-MARK" in first and "TS-RULE-MARK" in first and "JOBS-AGENTS-MARK" in first
    assert "TRIGGER-S30-MARK" in first and "TRIGGER-S03-MARK" in first  # "Sessions cleanup jobs", "Scheduled tasks"
    assert 'shown="' in first and "[Also in this file: " in first
    assert read(monorepo.TASK_FILE, "PostToolUse") == ""  # the same read, after: nothing new
    welcome = read("apps/jobs/src/trigger/emails/send-welcome.ts")
    assert "TRIGGER-S31-MARK" in welcome and "TRIGGER-INTRO-MARK" not in welcome  # "Sending emails" alone
    assert "[Also in this file" not in welcome
    assert read("apps/jobs/src/trigger/emails/send-welcome.ts", "PostToolUse") == ""
