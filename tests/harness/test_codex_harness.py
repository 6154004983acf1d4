"""The Codex harness works: Codex CLI, run with our server over a small project, calls
context_search when the scripted model says so (after the tool search that loads our deferred
tools), and the search's answer reaches the model."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from tests.conftest import write_tree
from tests.harness import codex
from tests.harness.standin import Say, ToolCall, Turn
from tests.helpers import SERVER

pytestmark = pytest.mark.skipif(codex.available() is not None, reason=str(codex.available()))


def test_the_search_result_reaches_the_model(tmp_path: Path) -> None:
    project = write_tree(
        tmp_path / "project",
        {
            ".AGENTS/overview.md": "# Overview\n\nThe service ships nightly.\n",
            ".AGENTS/deploy.md": "# Deploy\n\n## Rollback\n\nRoll back with the zebra switch.\n",
            "AGENTS.md": "# Agents\n\nUse uv.\n",
        },
    )
    turns: list[Turn] = [
        [ToolCall(codex.tool_name("context_search"), {"query": "rollback"})],
        Say("Use the zebra switch."),
    ]

    run = codex.run(project, turns, server=[sys.executable, SERVER, "--project", str(project), "--no-cache"])

    assert run.returncode == 0, run.stderr
    assert '"text":"Use the zebra switch."' in run.stdout
    assert len(run.requests) == 3  # the tool search, the call, the answer
    [output] = codex.tool_outputs(run)
    assert output.startswith("Wall time: ")
    assert ".AGENTS/deploy.md" in output
    assert "Roll back with the zebra switch." in output
    assert "Use uv." in codex.context_text(run, 0)  # Codex loads the top AGENTS.md by itself
    assert f"{codex.NAMESPACE}: agents-context: call context_search" in codex.context_text(run, 0)
    assert "zebra switch" not in codex.context_text(run, 1)
    assert "Roll back with the zebra switch." in codex.context_text(run, 2)
