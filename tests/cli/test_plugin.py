"""The Claude Code plugin at the repository's root: valid JSON, our server and our hook command, the
version of the package, and the same hook events and matchers `agents-context setup claude-code` writes."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import tomlkit

from cli import setup
from clients import claude_code
from tests.helpers import REPO

MANIFEST = REPO / ".claude-plugin" / "plugin.json"
HOOKS = REPO / "hooks" / "hooks.json"


def load(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


def test_the_manifest_names_us_with_the_packages_version() -> None:
    manifest = load(MANIFEST)
    project = tomlkit.parse((REPO / "pyproject.toml").read_text(encoding="utf-8")).unwrap()["project"]
    assert manifest["name"] == "agents-context" and manifest["description"]
    assert manifest["version"] == project["version"]


def test_the_plugin_starts_our_server_from_the_plugin_root_on_the_project() -> None:
    server = load(MANIFEST)["mcpServers"]["agents-context"]
    assert server["command"] == "uvx"
    args = ["--from", "${CLAUDE_PLUGIN_ROOT}", "agents-context", "--project", "${CLAUDE_PROJECT_DIR}", "--hooked"]
    assert server["args"] == args


def test_no_project_mcp_json_at_the_root() -> None:
    """Claude Code would read a root `.mcp.json` as this repository's own project servers, with
    `${CLAUDE_PLUGIN_ROOT}` unset: the plugin's server is in its manifest instead."""
    assert not (REPO / ".mcp.json").exists()


def test_the_plugin_hooks_run_our_hook_command_as_setup_does() -> None:
    hooks = load(HOOKS)["hooks"]
    commands = {h["command"] for groups in hooks.values() for g in groups for h in g["hooks"]}
    assert commands == {'uvx --from "${CLAUDE_PLUGIN_ROOT}" agents-context-hook claude-code'}
    files = setup.files("claude-code", REPO, setup.launch("agents-context"))
    settings = next(f for f in files if f.relative == ".claude/settings.json")
    written: dict[str, Any] = {}
    for part in settings.parts:
        part.add(written)
    assert {e: [g["matcher"] for g in gs] for e, gs in hooks.items()} == {
        e: [g["matcher"] for g in gs] for e, gs in written["hooks"].items()
    }
    assert all(h["timeout"] == claude_code.TIMEOUT_S for gs in hooks.values() for g in gs for h in g["hooks"])
