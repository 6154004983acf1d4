"""The linters, the type checker, the import contracts (`[tool.importlinter]` in pyproject.toml:
imports flow one way, from the surfaces down to the disk) and the size of modules and classes are
part of the test suite, so `uv run pytest` gates them too."""

from __future__ import annotations

import ast
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


MODULE_LINES = 500
CLASS_LINES = 300


def test_no_module_or_class_outgrows_a_reader() -> None:
    """No module over 500 lines and no class over 300 outside `tests/` and `bench/`: past that, a
    part has more than one role (split it along a seam, as `live/reading.py` left `live/index.py`)."""
    too_long: list[str] = []
    for path in sorted(ROOT.glob("**/*.py")):
        rel = path.relative_to(ROOT).as_posix()
        if rel.split("/")[0] in {"tests", "bench", ".venv", "node_modules"} or "/." in f"/{rel}":
            continue
        text = path.read_text(encoding="utf-8")
        if (lines := len(text.splitlines())) > MODULE_LINES:
            too_long.append(f"{rel}: {lines} lines")
        classes = [node for node in ast.walk(ast.parse(text)) if isinstance(node, ast.ClassDef)]
        sizes = [(node.name, (node.end_lineno or 0) - node.lineno + 1) for node in classes]
        too_long += [f"{rel}: class {name}, {size} lines" for name, size in sizes if size > CLASS_LINES]
    assert not too_long, too_long
