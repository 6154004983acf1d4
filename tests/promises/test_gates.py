"""The linters, the type checker and the import contracts (`[tool.importlinter]` in pyproject.toml:
imports flow one way, from the surfaces down to the disk) are part of the test suite, so
`uv run pytest` gates them too."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests.helpers import REPO

ROOT = REPO


@pytest.mark.parametrize(
    "command",
    [
        ["ruff", "check", "."],
        ["ruff", "format", "--check", "."],
        ["mypy"],
        ["importlinter.cli", "--no-cache"],
    ],
    ids=["ruff-check", "ruff-format", "mypy", "import-contracts"],
)
def test_tool_is_clean(command: list[str]) -> None:
    if command[0] == "importlinter.cli":  # a package with no __main__: call its command
        command = ["-c", "from importlinter.cli import lint_imports_command; lint_imports_command()", *command[1:]]
    else:
        command = ["-m", *command]
    done = subprocess.run([sys.executable, *command], cwd=ROOT, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
