"""Gemini CLI with our server, against the Gemini API stand-in: the scripted model calls
`context_search`, and the search's answer is what the model reads next."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from tests.harness import gemini
from tests.harness.standin import Say, ToolCall, Turn

ROOT = Path(__file__).resolve().parents[2]
SERVER = [sys.executable, str(ROOT / "server.py")]

UNAVAILABLE = gemini.available()
pytestmark = pytest.mark.skipif(UNAVAILABLE is not None, reason=UNAVAILABLE or "")

OVERVIEW = """\
# Overview

The release train leaves on Thursdays: tag the build with `zanzibar-freeze` before noon.
"""


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / ".AGENTS").mkdir()
    (tmp_path / ".AGENTS" / "overview.md").write_text(OVERVIEW)
    (tmp_path / "GEMINI.md").write_text("# Gemini\n\nGEMINI-TOP-MARKER: read the .AGENTS folder first.\n")
    return tmp_path


def test_context_search_reaches_the_model(project: Path) -> None:
    turns: list[Turn] = [
        [ToolCall(gemini.tool_name("context_search"), {"query": "release train freeze tag"})],
        Say("done"),
    ]
    run = gemini.run(project, turns, server=[*SERVER, "--project", str(project), "--no-cache"])

    assert run.returncode == 0, run.stderr[-2000:]
    assert len(run.requests) == 2, [sorted(body) for body in run.requests]
    first = gemini.context_text(run, 0)
    assert "GEMINI-TOP-MARKER" in first  # the CLI's own agent file
    assert gemini.tool_name("context_search") in first  # our tool is declared
    outputs = gemini.tool_outputs(run)
    assert len(outputs) == 1
    response = json.loads(outputs[0])
    assert response["name"] == gemini.tool_name("context_search")
    assert "zanzibar-freeze" in response["response"]["output"]
    assert "zanzibar-freeze" in gemini.context_text(run, 1)
