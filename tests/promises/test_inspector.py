"""End to end with the MCP Inspector CLI, a real client that speaks the 2025-11-25 handshake.

The Inspector is pinned in `tests/e2e/package.json` (with its lockfile). `.ci/run` installs it
once; when it is missing, the fixture installs it with `npm ci`, and the tests skip with the reason
when node, npm or the registry is unavailable.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import TEST_CACHE
from tests.helpers import REPO, SERVER, TOOLS

E2E = REPO / "tests" / "e2e"
INSPECTOR = E2E / "node_modules" / ".bin" / ("mcp-inspector.cmd" if os.name == "nt" else "mcp-inspector")


@pytest.fixture(scope="session")
def inspector() -> Path:
    if INSPECTOR.exists():
        return INSPECTOR
    npm = shutil.which("npm")
    if shutil.which("node") is None or npm is None:
        pytest.skip("node/npm not installed: the MCP Inspector CLI cannot run")
    done = subprocess.run(
        [npm, "ci", "--no-audit", "--no-fund", "--loglevel=error"],
        cwd=E2E,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    if done.returncode != 0 or not INSPECTOR.exists():
        reason = done.stderr.strip()[-300:]
        pytest.skip(f"could not install the MCP Inspector from the npm registry: {reason}")
    return INSPECTOR


@pytest.fixture
def agents(make_tree: Callable[..., Path]) -> Path:
    return make_tree(
        {
            "overview.md": "# Overview\n\nInspector test project.\n",
            "security.md": "# Security\n\n## Secrets\n\nNever print tokens.\n",
            "C#.md": "# Sharp\n\nhash names\n",
        }
    )


def run(inspector: Path, agents: Path, *args: str) -> tuple[int, Any, str]:
    done = subprocess.run(
        # The Inspector starts the server with a filtered environment: name the test cache explicitly.
        [str(inspector), "--cli", sys.executable, SERVER, "--root", str(agents), "--cache-dir", str(TEST_CACHE), *args],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env={**os.environ, "npm_config_loglevel": "error"},
    )
    try:
        parsed = json.loads(done.stdout)
    except json.JSONDecodeError:
        parsed = None
    return done.returncode, parsed, done.stderr


def test_inspector_lists_the_tools(inspector: Path, agents: Path) -> None:
    code, out, err = run(inspector, agents, "--method", "tools/list")
    assert code == 0, err
    assert [t["name"] for t in out["tools"]] == TOOLS
    assert out["tools"][0]["annotations"]["readOnlyHint"] is True


def test_inspector_calls_context_search(inspector: Path, agents: Path) -> None:
    code, out, err = run(
        inspector,
        agents,
        "--method",
        "tools/call",
        "--tool-name",
        "context_search",
        "--tool-arg",
        "query=secrets",
    )
    assert code == 0, err
    text = out["content"][0]["text"]
    assert text.startswith('<context path=".AGENTS/security.md" section="Secrets" score="')
    assert "\n\n[agents-context method=bm25 hits=1 gen=1 fresh_as_of=" in text
    assert out["structuredContent"]["hits"][0]["uri"] == "agents://security.md"


def test_inspector_sees_a_blank_query_as_a_tool_error(inspector: Path, agents: Path) -> None:
    code, out, _ = run(
        inspector, agents, "--method", "tools/call", "--tool-name", "context_search", "--tool-arg", "query= "
    )
    assert code == 5  # the Inspector's exit code for an isError result
    assert out["isError"] is True
    assert out["content"][0]["text"] == "query is required: pass a non-empty 'query' string"


def test_inspector_lists_and_reads_resources(inspector: Path, agents: Path) -> None:
    code, out, err = run(inspector, agents, "--method", "resources/list")
    assert code == 0, err
    assert sorted(r["uri"] for r in out["resources"]) == [
        "agents-context://outline",
        "agents-context://status",
        "agents://C%23.md",
        "agents://overview.md",
        "agents://security.md",
    ]
    code, out, err = run(inspector, agents, "--method", "resources/read", "--uri", "agents://C%23.md")
    assert code == 0, err
    assert out["contents"][0]["text"] == "# Sharp\n\nhash names\n"
    code, _, err = run(inspector, agents, "--method", "resources/read", "--uri", "agents://../x.md")
    assert code != 0
    assert "'..'" in err


def test_inspector_gets_the_pinned_prompt(inspector: Path, agents: Path) -> None:
    code, out, err = run(inspector, agents, "--method", "prompts/get", "--prompt-name", "pinned_context")
    assert code == 0, err
    text = out["messages"][0]["content"]["text"]
    assert '<context path=".AGENTS/overview.md">\n# Overview\n\nInspector test project.\n</context>' in text
