"""The set-up as the README writes it: the Claude Desktop snippet, placeholders filled in, started
from an unrelated working folder as a client starts it, serves the named project and searches."""

from __future__ import annotations

import json
import os
import re
import shutil
import sys
from pathlib import Path

import pytest
from mcp import Client, StdioServerParameters

from tests.conftest import TEST_ENV, write_tree
from tests.helpers import REPO, search, text_of

pytestmark = pytest.mark.anyio

PROJECT = {
    ".agents/overview.md": "# Shop overview\n\nA small web shop.\n",
    ".agents/payments.md": "# Payments\n\n## Refunds\n\nRefunds go through the ledger service, never the card API.\n",
    "AGENTS.md": "# Agent guide\n\nRun `make check` before every commit.\n",
    "src/api/AGENTS.md": "# API folder\n\nEvery handler validates its input with pydantic.\n",
    ".cursor/rules/endpoints.mdc": (
        "---\ndescription: Endpoint rules\nalwaysApply: true\n---\n# Endpoints\n\n"
        "List endpoints paginate their results with a cursor, never with page numbers.\n"
    ),
}


PASSED_ON = ("UV_", "SSL_", "PIP_", "REQUESTS_CA", "CURL_CA", "HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "PYENV")
"""What a user's machine may need to reach the package index (certificates, proxies, uv's own
settings), passed on as the user's client passes on its environment."""


def claude_desktop_snippet() -> dict[str, object]:
    """The server entry of the README's Claude Desktop configuration."""
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    section = readme[readme.index("### Claude Desktop") :]
    block = re.search(r"```json\n(.*?)\n```", section, re.DOTALL)
    assert block, "the README's Claude Desktop section has no JSON configuration"
    config = json.loads(block.group(1))
    entry: dict[str, object] = config["mcpServers"]["agents-context"]
    return entry


def filled(args: list[str], project: Path) -> list[str]:
    return [a.replace("/abs/agents-context", str(REPO)).replace("/abs/project", str(project)) for a in args]


def command(name: str) -> list[str]:
    """`uvx` as the snippet says; where only uv's module is installed, the same command through it."""
    found = shutil.which(name)
    if found:
        return [found]
    if name == "uvx":
        uv = shutil.which("uv")
        return [uv, "tool", "run"] if uv else [sys.executable, "-m", "uv", "tool", "run"]
    pytest.fail(f"{name} is not installed")


async def test_the_claude_desktop_snippet_serves_the_named_project_from_any_folder(tmp_path: Path) -> None:
    entry = claude_desktop_snippet()
    assert entry["command"] == "uvx"
    args = entry["args"]
    assert isinstance(args, list) and "/abs/agents-context" in args and "/abs/project" in args
    project = write_tree(tmp_path / "shop", PROJECT)
    elsewhere = tmp_path / "client-home"  # clients start servers in their own folder
    elsewhere.mkdir()
    head, *rest = command("uvx")
    env = {**TEST_ENV, **{k: v for k, v in os.environ.items() if k.upper().startswith(PASSED_ON)}}
    params = StdioServerParameters(command=head, args=[*rest, *filled(args, project)], cwd=str(elsewhere), env=env)
    async with Client(params) as client:
        refunds = await search(client, "how are refunds made")
        assert refunds.startswith('<context path=".agents/payments.md" section="Refunds"')
        commit = await search(client, "what to run before a commit")
        assert '<context path="shop/AGENTS.md" section="Agent guide"' in commit
        paging = await search(client, "How should list endpoints paginate their results?")
        assert paging.startswith('<context path="shop/.cursor/rules/endpoints.mdc" section="Endpoints"')
        assert 'pinned="true"' in paging.split("\n", 1)[0]
        status = text_of(await client.call_tool("context_status", {}))
    assert f"(agents, {project.resolve() / '.agents'})" in status and f"(agents, {project.resolve()})" in status
    assert str(REPO) not in status  # the clone's own .AGENTS is not mixed in


def test_every_client_snippet_starts_the_same_command() -> None:
    """The seven clients' snippets all run what the Claude Desktop test above starts (VS Code names
    the project by its own variable)."""
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    section = readme[readme.index("## Connect your client") : readme.index("### Over HTTP")]
    want = ["--from", "/abs/agents-context", "agents-context", "--project"]
    commands: dict[str, list[str]] = {}
    for client, body in re.findall(r"### (.+?)\n(.*?)(?=\n### |\Z)", section, re.DOTALL):
        for lang, block in re.findall(r"```(json|toml|bash)\n(.*?)\n```", body, re.DOTALL):
            if lang == "json":
                servers = json.loads(block)
                (entry,) = next(iter(servers.values())).values()
                commands[client] = [entry["command"], *entry["args"]]
            elif lang == "toml":
                (args,) = re.findall(r"^args = (\[.*\])$", block, re.MULTILINE)
                assert re.search(r'^command = "uvx"$', block, re.MULTILINE)
                commands[client] = ["uvx", *json.loads(args)]
            else:
                commands[client] = block.splitlines()[0].split(" -- ", 1)[1].split()
    assert sorted(commands) == ["Claude Code", "Claude Desktop", "Codex", "Cursor", "Gemini CLI", "VS Code", "Zed"]
    for client, argv in commands.items():
        assert argv[0] == "uvx" and argv[1:-1] == want, client
        assert argv[-1] == ("${workspaceFolder}" if client == "VS Code" else "/abs/project"), client
