"""`agents-context setup CLIENT`: our server and hooks merged into a project's own files, for each
client, on real files: a fresh project, files with other entries, twice, a dry run, removal, a file
that does not parse, and removal where nothing was set up."""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path
from typing import Any

import pytest
import tomlkit

from cli import setup
from cli.flags import parse
from clients.known import SET_UP
from tests.helpers import REPO, cli

CLIENTS = list(SET_UP)
SERVERS = {  # where each client's server entry lives: file, key
    "claude-code": (".mcp.json", "mcpServers"),
    "codex": (".codex/config.toml", "mcp_servers"),
    "cursor": (".cursor/mcp.json", "mcpServers"),
    "gemini-cli": (".gemini/settings.json", "mcpServers"),
    "vscode": (".vscode/mcp.json", "servers"),
}
HOOKS = {
    "claude-code": ".claude/settings.json",
    "codex": ".codex/hooks.json",
    "cursor": ".cursor/hooks.json",
    "gemini-cli": ".gemini/settings.json",
}
THEIR_HOOK = {"type": "command", "command": "their-linter --fix", "timeout": 5}
THEIR_SERVER = {"command": "their-server", "args": ["--stdio"]}


def run_setup(project: Path, client: str, *flags: str) -> int:
    return setup.run(parse(["setup", client, "--project", str(project), "--command", "agents-context", *flags]))


def load(path: Path) -> Any:
    text = path.read_text(encoding="utf-8")
    return tomlkit.parse(text).unwrap() if path.suffix == ".toml" else json.loads(text)


def snapshot(project: Path) -> dict[str, bytes]:
    return {p.relative_to(project).as_posix(): p.read_bytes() for p in sorted(project.rglob("*")) if p.is_file()}


def hook_commands(doc: dict[str, Any]) -> list[str]:
    """Every hook command of a file, nested in matcher groups or flat (Cursor)."""
    found = []
    for entries in doc.get("hooks", {}).values():
        for entry in entries:
            found += [h["command"] for h in entry.get("hooks", [entry])]
    return found


def their_files(client: str) -> dict[str, str]:
    """The files a user already has: another server, another hook, an unrelated setting."""
    server_file, key = SERVERS[client]
    if client == "codex":
        config = '# my Codex settings\nmodel = "o3"  # the model\n\n[mcp_servers.theirs]\ncommand = "their-server"\n'
        codex = {"hooks": {"PreToolUse": [{"matcher": "^(Bash|apply_patch)$", "hooks": [THEIR_HOOK]}]}}
        return {server_file: config, HOOKS[client]: json.dumps(codex, indent=2) + "\n"}
    files: dict[str, dict[str, Any]] = {server_file: {"zeta": 1, key: {"theirs": THEIR_SERVER}, "alpha": True}}
    if client == "cursor":
        files[HOOKS[client]] = {"version": 1, "hooks": {"postToolUse": [{"command": "their-linter"}]}}
    elif client in HOOKS:
        matcher = "Read|Edit|Write|NotebookEdit|Bash" if client == "claude-code" else "write_file"
        event = "PreToolUse" if client == "claude-code" else "AfterTool"
        hooks: dict[str, Any] = {"hooks": {event: [{"matcher": matcher, "hooks": [THEIR_HOOK]}]}, "theme": "dark"}
        files[HOOKS[client]] = {**files.get(HOOKS[client], {}), **hooks}
    return {name: json.dumps(doc, indent=2) + "\n" for name, doc in files.items()}


def write(project: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        (project / name).parent.mkdir(parents=True, exist_ok=True)
        (project / name).write_text(text, encoding="utf-8")


def our_server(project: Path, client: str) -> dict[str, Any]:
    name, key = SERVERS[client]
    entry: dict[str, Any] = load(project / name)[key]["agents-context"]
    return entry


@pytest.mark.parametrize("client", CLIENTS)
def test_a_fresh_project_gets_the_server_and_the_hooks(
    tmp_path: Path, client: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run_setup(tmp_path, client) == 0
    entry = our_server(tmp_path, client)
    assert entry["command"] == "agents-context"
    hooked = ["--hooked"] if client in HOOKS else []  # the hook adds the pinned files: the server names them
    assert entry["args"] == ["--project", str(tmp_path.resolve()), *hooked]
    if client in HOOKS:
        commands = hook_commands(load(tmp_path / HOOKS[client]))
        assert commands and set(commands) == {f"agents-context-hook {client}"}
    assert "is set up for" in capsys.readouterr().out


@pytest.mark.parametrize("client", CLIENTS)
def test_each_client_gets_its_own_shape(tmp_path: Path, client: str) -> None:
    run_setup(tmp_path, client)
    entry = our_server(tmp_path, client)
    extra = {"codex": {"required": True}, "gemini-cli": {"trust": True}, "vscode": {"type": "stdio"}}
    assert {k: v for k, v in entry.items() if k not in ("command", "args")} == extra.get(client, {})


def test_claude_code_hooks_match_its_tools(tmp_path: Path) -> None:
    run_setup(tmp_path, "claude-code")
    hooks = load(tmp_path / ".claude/settings.json")["hooks"]
    assert [(e, g["matcher"]) for e, (g,) in hooks.items()] == [
        ("SessionStart", "startup|resume|clear|compact"),
        ("PreToolUse", "Read|Edit|Write|NotebookEdit|Bash"),
        ("PostToolUse", "Read|Edit|Write|NotebookEdit|Bash"),
    ]
    assert hooks["PreToolUse"][0]["hooks"] == [
        {"type": "command", "command": "agents-context-hook claude-code", "timeout": 10}
    ]


def test_codex_hooks_match_its_tools(tmp_path: Path) -> None:
    run_setup(tmp_path, "codex")
    hooks = load(tmp_path / ".codex/hooks.json")["hooks"]
    assert {e: g["matcher"] for e, (g,) in hooks.items()} == {
        "SessionStart": "startup|resume|clear|compact",
        "PreToolUse": "^(Bash|apply_patch)$",
        "PostToolUse": "^(Bash|apply_patch)$",
    }


def test_cursor_hooks_are_flat_with_a_version(tmp_path: Path) -> None:
    run_setup(tmp_path, "cursor")
    assert load(tmp_path / ".cursor/hooks.json") == {
        "version": 1,
        "hooks": {
            "sessionStart": [{"command": "agents-context-hook cursor", "timeout": 10}],
            "postToolUse": [{"command": "agents-context-hook cursor", "matcher": "Read|Write|Shell", "timeout": 10}],
        },
    }


def test_gemini_cli_hooks_are_named_and_in_milliseconds(tmp_path: Path) -> None:
    run_setup(tmp_path, "gemini-cli")
    hooks = load(tmp_path / ".gemini/settings.json")["hooks"]
    assert [(e, g["matcher"]) for e, (g,) in hooks.items()] == [
        ("SessionStart", ""),
        ("AfterTool", "read_file|read_many_files|write_file|replace|run_shell_command"),
    ]
    handler = {
        "name": "agents-context",
        "type": "command",
        "command": "agents-context-hook gemini-cli",
        "timeout": 10000,
    }
    assert hooks["AfterTool"][0]["hooks"] == [handler]


@pytest.mark.parametrize("client", CLIENTS)
def test_merging_keeps_every_key_of_the_users(tmp_path: Path, client: str) -> None:
    theirs = their_files(client)
    write(tmp_path, theirs)
    assert run_setup(tmp_path, client) == 0
    for name, text in theirs.items():
        before = tomlkit.parse(text).unwrap() if name.endswith(".toml") else json.loads(text)
        assert_kept(before, load(tmp_path / name))
    assert our_server(tmp_path, client)["command"] == "agents-context"
    if client in HOOKS:
        assert "agents-context-hook " + client in hook_commands(load(tmp_path / HOOKS[client]))


def assert_kept(before: Any, after: Any) -> None:
    """Everything of `before` is still in `after`: keys with their values, list items in order."""
    if isinstance(before, dict):
        assert list(before) == [k for k in after if k in before], "the user's key order changed"
        for key, value in before.items():
            assert_kept(value, after[key])
    elif isinstance(before, list):
        assert after[: len(before)] == before or all(item in after for item in before)
    else:
        assert before == after


@pytest.mark.parametrize("client", CLIENTS)
def test_twice_changes_nothing(tmp_path: Path, client: str, capsys: pytest.CaptureFixture[str]) -> None:
    write(tmp_path, their_files(client))
    run_setup(tmp_path, client)
    first = snapshot(tmp_path)
    capsys.readouterr()
    assert run_setup(tmp_path, client) == 0
    assert snapshot(tmp_path) == first
    assert "already set up" in capsys.readouterr().out


@pytest.mark.parametrize("client", CLIENTS)
def test_a_dry_run_prints_the_diff_and_writes_nothing(
    tmp_path: Path, client: str, capsys: pytest.CaptureFixture[str]
) -> None:
    write(tmp_path, their_files(client))
    before = snapshot(tmp_path)
    assert run_setup(tmp_path, client, "--dry-run") == 0
    assert snapshot(tmp_path) == before
    out = capsys.readouterr().out
    assert f"+++ b/{SERVERS[client][0]}" in out and "+" in out and "agents-context" in out
    assert "nothing was written" in out


def test_a_dry_run_of_a_new_file_diffs_from_nothing(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run_setup(tmp_path, "cursor", "--dry-run")
    assert "--- /dev/null\n+++ b/.cursor/mcp.json" in capsys.readouterr().out
    assert not any(tmp_path.iterdir())


@pytest.mark.parametrize("client", CLIENTS)
def test_remove_takes_out_exactly_what_setup_added(tmp_path: Path, client: str) -> None:
    theirs = their_files(client)
    write(tmp_path, theirs)
    run_setup(tmp_path, client)
    assert run_setup(tmp_path, client, "--remove") == 0
    assert snapshot(tmp_path) == {name: text.encode() for name, text in theirs.items()}


@pytest.mark.parametrize("client", CLIENTS)
def test_remove_on_a_fresh_setup_leaves_no_file_or_folder(tmp_path: Path, client: str) -> None:
    run_setup(tmp_path, client)
    assert run_setup(tmp_path, client, "--remove") == 0
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("client", CLIENTS)
def test_remove_where_nothing_was_set_up_changes_nothing(
    tmp_path: Path, client: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run_setup(tmp_path, client, "--remove") == 0
    assert list(tmp_path.iterdir()) == []
    write(tmp_path, their_files(client))
    before = snapshot(tmp_path)
    assert run_setup(tmp_path, client, "--remove") == 0
    assert snapshot(tmp_path) == before
    assert "nothing to remove" in capsys.readouterr().out


@pytest.mark.parametrize("client", CLIENTS)
@pytest.mark.parametrize("remove", [False, True])
def test_a_file_that_does_not_parse_is_refused(
    tmp_path: Path, client: str, remove: bool, capsys: pytest.CaptureFixture[str]
) -> None:
    broken = SERVERS[client][0]
    write(tmp_path, {broken: "[mcp_servers\nx = \n" if broken.endswith(".toml") else '{"mcpServers": {,}\n'})
    before = snapshot(tmp_path)
    assert run_setup(tmp_path, client, *(["--remove"] if remove else [])) == 2
    assert snapshot(tmp_path) == before
    err = capsys.readouterr().err
    assert str(tmp_path / broken) in err and "nothing was written" in err
    assert err.count("\n") == 1, "one sentence on one line"


def test_a_refused_file_stops_the_others_too(tmp_path: Path) -> None:
    write(tmp_path, {".claude/settings.json": "{ not json"})
    assert run_setup(tmp_path, "claude-code") == 2
    assert not (tmp_path / ".mcp.json").exists()


def test_a_wrong_kind_of_value_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write(tmp_path, {".mcp.json": '{"mcpServers": ["theirs"]}\n'})
    assert run_setup(tmp_path, "claude-code") == 2
    assert '"mcpServers" is a list, not an object' in capsys.readouterr().err
    write(tmp_path, {".mcp.json": "[]\n"})
    assert run_setup(tmp_path, "claude-code") == 2


def test_comments_are_named_as_the_reason(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write(tmp_path, {".vscode/mcp.json": '{\n  // my servers\n  "servers": {}\n}\n'})
    assert run_setup(tmp_path, "vscode") == 2
    assert "comments are not JSON" in capsys.readouterr().err


def test_codex_keeps_the_users_toml_comments_and_layout(tmp_path: Path) -> None:
    config = (
        '# top\nmodel = "o3"  # the model\n\n[mcp_servers.theirs]\ncommand = "x"\n\n[profiles.fast]\nmodel = "mini"\n'
    )
    write(tmp_path, {".codex/config.toml": config})
    run_setup(tmp_path, "codex")
    text = (tmp_path / ".codex/config.toml").read_text(encoding="utf-8")
    assert text.startswith(config.split("[profiles")[0])
    assert '[mcp_servers.agents-context]\ncommand = "agents-context"' in text and "required = true\n\n[profiles" in text
    run_setup(tmp_path, "codex", "--remove")
    assert (tmp_path / ".codex/config.toml").read_text(encoding="utf-8") == config


@pytest.mark.parametrize(
    "config",
    [
        'mcp_servers.theirs.command = "x"\nmodel = "m"\n',
        'mcp_servers = { theirs = { command = "x" } }\nmodel = "m"\n',
        '[mcp_servers.a]\ncommand = "a"\n\n[profiles.x]\nm = 1\n\n[mcp_servers.b]\ncommand = "b"\n',
    ],
    ids=["dotted-keys", "inline-table", "out-of-order-tables"],
)
def test_codex_toml_layouts_keep_their_meaning(tmp_path: Path, config: str) -> None:
    write(tmp_path, {".codex/config.toml": config})
    assert run_setup(tmp_path, "codex") == 0
    merged = load(tmp_path / ".codex/config.toml")
    assert merged["mcp_servers"].pop("agents-context")["required"] is True
    assert merged == tomlkit.parse(config).unwrap()
    first = snapshot(tmp_path)
    run_setup(tmp_path, "codex")
    assert snapshot(tmp_path) == first
    run_setup(tmp_path, "codex", "--remove")
    assert (tmp_path / ".codex/config.toml").read_text(encoding="utf-8") == config


def test_json_is_two_space_indented_with_a_final_newline(tmp_path: Path) -> None:
    run_setup(tmp_path, "claude-code")
    text = (tmp_path / ".mcp.json").read_text(encoding="utf-8")
    assert text.startswith('{\n  "mcpServers": {\n    "agents-context": {') and text.endswith("}\n")


def test_a_users_keys_in_our_entry_are_kept_and_ours_updated(tmp_path: Path) -> None:
    old = {"mcpServers": {"agents-context": {"command": "old", "args": [], "env": {"A": "1"}}}}
    write(tmp_path, {".mcp.json": json.dumps(old)})
    run_setup(tmp_path, "claude-code")
    entry = our_server(tmp_path, "claude-code")
    args = ["--project", str(tmp_path.resolve()), "--hooked"]
    assert entry == {"command": "agents-context", "args": args, "env": {"A": "1"}}


def test_an_older_hook_of_ours_is_replaced_not_doubled(tmp_path: Path) -> None:
    stale = {"type": "command", "command": "/old/bin/agents-context-hook claude-code", "timeout": 3}
    groups = [{"matcher": "Bash", "hooks": [stale, THEIR_HOOK]}]
    write(tmp_path, {".claude/settings.json": json.dumps({"hooks": {"PreToolUse": groups}})})
    run_setup(tmp_path, "claude-code")
    pre = load(tmp_path / ".claude/settings.json")["hooks"]["PreToolUse"]
    assert pre[0] == {"matcher": "Bash", "hooks": [THEIR_HOOK]}
    assert pre[1]["hooks"][0]["command"] == "agents-context-hook claude-code" and len(pre) == 2


def test_vscode_says_its_hooks_are_claude_codes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run_setup(tmp_path, "vscode", "--dry-run")
    assert ".claude/settings.json" in capsys.readouterr().out


def test_a_project_that_is_not_a_folder_is_refused(tmp_path: Path) -> None:
    assert run_setup(tmp_path / "missing", "cursor") == 2


def test_the_command_is_this_console_script_and_the_hook_beside_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    script = tmp_path / "bin" / "agents-context"
    script.parent.mkdir()
    script.write_text("#!/bin/sh\n")
    monkeypatch.setattr(sys, "argv", [str(script), "setup"])
    assert setup.launch() == setup.Launch(
        str(script.resolve()), (), str(script.resolve().with_name("agents-context-hook"))
    )


@pytest.mark.parametrize("client", CLIENTS)
def test_shared_starts_each_session_through_the_relay_beside_the_script(
    tmp_path: Path, client: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    script = tmp_path / "bin" / "agents-context"
    script.parent.mkdir()
    script.write_text("#!/bin/sh\n")
    monkeypatch.setattr(sys, "argv", [str(script), "setup"])
    project = tmp_path / "project"
    project.mkdir()
    assert setup.run(parse(["setup", client, "--project", str(project), "--shared"])) == 0
    entry = our_server(project, client)
    assert entry["command"] == str(script.resolve().with_name("agents-context-shared"))
    assert entry["args"][:2] == ["--project", str(project)]
    if client in HOOKS:  # the hook is the same command, whoever serves
        assert set(hook_commands(load(project / HOOKS[client]))) == {
            f"{script.resolve().with_name('agents-context-hook')} {client}"
        }
    assert "joins one shared server: the first starts it; it stops 5 minutes after the last" in capsys.readouterr().out
    assert setup.launch(shared=True).shared and not setup.launch().shared


def test_shared_from_a_checkout_runs_the_relay_with_uvx(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "argv", [str(REPO / "server.py"), "setup"])
    how = setup.launch(shared=True)
    assert (how.command, how.prefix) == ("uvx", ("--from", str(REPO), "agents-context-shared"))


def test_shared_and_a_url_or_a_command_are_refused_together(tmp_path: Path) -> None:
    for other in (["--url", URL], ["--command", "x"]):
        done = cli("setup", "cursor", "--project", str(tmp_path), "--shared", *other)
        assert done.returncode == 2 and "not allowed with argument" in done.stderr, done.stderr


def test_without_a_console_script_it_runs_uvx_from_this_checkout(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "argv", [str(REPO / "server.py"), "setup"])
    how = setup.launch()
    assert (how.command, how.prefix) == ("uvx", ("--from", str(REPO), "agents-context"))
    assert how.hook.endswith("agents-context-hook") and how.args(Path("/p")) == [*how.prefix, "--project", "/p"]


def test_command_overrides_and_names_the_hook_beside_an_absolute_script(tmp_path: Path) -> None:
    assert setup.launch("agents-context").hook == "agents-context-hook"
    script = tmp_path / "my tools" / "agents-context"
    assert setup.launch(str(script)).hook == shlex.quote(str(script.with_name("agents-context-hook")))
    assert " " in setup.launch(str(script)).hook and setup.launch(str(script)).hook.startswith("'")
    assert setup.launch(str(tmp_path / "python3")).hook == "agents-context-hook"


def test_the_command_line_runs_setup(tmp_path: Path) -> None:
    done = cli("setup", "cursor", "--project", str(tmp_path), "--dry-run")
    assert done.returncode == 0, done.stderr
    assert "+++ b/.cursor/hooks.json" in done.stdout and not any(tmp_path.iterdir())
    assert cli("setup", "nope").returncode == 2


URL = "http://127.0.0.1:8765/mcp"
URL_ENTRIES: dict[str, dict[str, Any]] = {  # each client's name for a streamable HTTP server
    "claude-code": {"type": "http", "url": URL},
    "codex": {"url": URL, "required": True},
    "cursor": {"url": URL},
    "gemini-cli": {"httpUrl": URL, "trust": True},
    "vscode": {"type": "http", "url": URL},
}


@pytest.mark.parametrize("client", CLIENTS)
def test_a_url_points_every_session_at_one_running_server(
    tmp_path: Path, client: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert setup.run(parse(["setup", client, "--project", str(tmp_path), "--url", URL])) == 0
    assert our_server(tmp_path, client) == URL_ENTRIES[client]
    if client in HOOKS:  # the hooks are processes of their own, whatever the server's transport
        assert set(hook_commands(load(tmp_path / HOOKS[client]))) == {f"{setup.launch().hook} {client}"}
    out = capsys.readouterr().out
    hooked = " --hooked" if client in HOOKS else ""
    assert f"--transport http --host 127.0.0.1 --port 8765{hooked}" in out and "setup does not start it" in out


@pytest.mark.parametrize("client", CLIENTS)
def test_switching_between_a_command_and_a_url_leaves_no_mixed_entry(tmp_path: Path, client: str) -> None:
    name, key = SERVERS[client]
    run_setup(tmp_path, client)
    doc = load(tmp_path / name)
    doc[key]["agents-context"]["env"] = {"A": "1"}  # a key of the user's in our entry
    (tmp_path / name).write_text(tomlkit.dumps(doc) if name.endswith(".toml") else json.dumps(doc))
    doc[key]["agents-context"]["timeout"] = 30  # and one that means the same whatever the transport
    (tmp_path / name).write_text(tomlkit.dumps(doc) if name.endswith(".toml") else json.dumps(doc))
    assert setup.run(parse(["setup", client, "--project", str(tmp_path), "--url", URL])) == 0
    assert our_server(tmp_path, client) == {**URL_ENTRIES[client], "timeout": 30}  # env: a started server's
    doc = load(tmp_path / name)
    doc[key]["agents-context"]["headers"] = {"X-Team": "a"}  # a key of a reached server
    (tmp_path / name).write_text(tomlkit.dumps(doc) if name.endswith(".toml") else json.dumps(doc))
    run_setup(tmp_path, client)  # and back to a command
    entry = our_server(tmp_path, client)
    assert not {"url", "httpUrl", "headers"} & set(entry) and entry["command"] == "agents-context"
    assert entry["timeout"] == 30 and entry.get("type", "stdio") == "stdio"


@pytest.mark.parametrize("url", ["127.0.0.1:8000/mcp", "ftp://host/mcp", "http:///mcp", "stdio"])
def test_a_url_that_is_no_http_address_is_refused(tmp_path: Path, url: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert setup.run(parse(["setup", "claude-code", "--project", str(tmp_path), "--url", url])) == 2
    assert "is not an http:// or https:// address" in capsys.readouterr().err and not any(tmp_path.iterdir())


def test_a_url_and_a_command_together_are_refused(tmp_path: Path) -> None:
    done = cli("setup", "cursor", "--project", str(tmp_path), "--url", URL, "--command", "x")
    assert done.returncode == 2 and "not allowed with argument" in done.stderr and not any(tmp_path.iterdir())


@pytest.mark.parametrize("written", [False, True], ids=["no-bytecode-written", "bytecode-written"])
def test_setup_says_when_the_server_and_hook_would_compile_from_source_at_every_start(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], written: bool
) -> None:
    """The server and every hook event run from the installation setup runs from. Where Python
    writes no bytecode (PYTHONDONTWRITEBYTECODE, -B) and none is cached, each of them compiles the
    MCP SDK and our modules again: setup says so once, with how to install it compiled."""
    monkeypatch.setattr(sys, "dont_write_bytecode", not written)
    monkeypatch.setattr(sys, "pycache_prefix", str(tmp_path / "bytecode"))  # where none is cached
    project = tmp_path / "project"
    project.mkdir()
    assert run_setup(project, "claude-code") == 0
    out = capsys.readouterr().out
    assert ("Note: every start compiles the mcp package from source" in out) is not written, out
    if not written:
        assert "uv tool install --compile-bytecode agents-context" in out
    assert run_setup(project, "claude-code", "--remove") == 0
    assert "Note:" not in capsys.readouterr().out  # nothing will run from it any more
