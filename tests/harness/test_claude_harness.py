"""The Claude Code harness works: Claude Code, run with our server over a small project, calls
context_search when the scripted model says so, and the search's answer reaches the model."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from tests.conftest import write_tree
from tests.harness import claude
from tests.harness.standin import Say, ToolCall, Turn
from tests.helpers import SERVER

pytestmark = pytest.mark.skipif(claude.available() is not None, reason=str(claude.available()))


def test_the_search_result_reaches_the_model(tmp_path: Path) -> None:
    project = write_tree(
        tmp_path / "project",
        {
            ".AGENTS/deploy.md": "# Deploy\n\n## Rollback\n\nRoll back with the zebra switch.\n",
            "AGENTS.md": "# Agents\n\nUse uv.\n",
        },
    )
    turns: list[Turn] = [
        [ToolCall(claude.tool_name("context_search"), {"query": "rollback"})],
        Say("Use the zebra switch."),
    ]

    run = claude.run(project, turns, server=[sys.executable, SERVER, "--project", str(project), "--no-cache"])

    assert run.returncode == 0, run.stderr
    assert json.loads(run.stdout)["result"] == "Use the zebra switch."
    assert len(run.requests) == 2
    [output] = claude.tool_outputs(run)  # the text, or the structured content as JSON: either cites
    assert ".AGENTS/deploy.md" in output
    assert "Roll back with the zebra switch." in output
    assert "zebra switch" in claude.context_text(run, 1)
    assert "zebra switch" not in claude.context_text(run, 0)
