"""Project folders as teams keep them (every convention at once), and settings and servers over them."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from cli.flags import build_parser
from cli.settings import Settings
from corpus.roots import Root
from live.index import LiveIndex
from server import AgentsServer, create_server

REPO_FILES: dict[str, str | bytes] = {
    "AGENTS.md": "# Agent guide\n\nRun `make test` before committing.\n",
    "CLAUDE.md": "# Claude notes\n\nPrefer small diffs.\n",
    "README.md": "# The product README\n\nNot an agent file.\n",
    ".cursor/rules/api.mdc": (
        "---\ndescription: How the HTTP API is built\nglobs: src/api/**/*.py\nalwaysApply: false\n---\n"
        "# API rules\n\nValidate every request body with pydantic.\n"
    ),
    ".cursor/rules/style.mdc": "---\ndescription: Code style\nalwaysApply: true\n---\n# Style\n\nFour spaces.\n",
    ".github/copilot-instructions.md": "# Copilot\n\nUse the project's logger.\n",
    ".github/instructions/tests.instructions.md": (
        "---\napplies_to: ['tests/**']\n---\n# Tests\n\nUse pytest fixtures, not setUp.\n"
    ),
    "src/api/AGENTS.md": "# API folder\n\nAuth lives in auth.py; never log tokens.\n",
    "src/api/auth.py": "def login(): ...\n",
    "docs/api.md": "# Public docs\n\nnot included\n",
}


def parse(argv: list[str], cwd: Path) -> tuple[Settings, list[Root]]:
    settings = Settings.from_args(build_parser().parse_args(["serve", *argv]), cwd=cwd)
    return settings, settings.roots()


def serve(settings: Settings, roots: list[Root]) -> AgentsServer:
    from corpus.rules import PinSet

    live = LiveIndex(roots, PinSet(settings.pins) if settings.pins is not None else None)
    return create_server(live, dataclasses.replace(settings, debounce_ms=50, poll_interval_s=0.2))


CURSOR_AND_COPILOT: dict[str, str | bytes] = {
    "AGENTS.md": "# Agent guide\n\nRun the tests.\n",
    # As Cursor's rule editor saves them: globs unquoted, comma-separated (not valid YAML).
    ".cursor/rules/react.mdc": (
        "---\ndescription: React component conventions\nglobs: **/*.tsx, src/components/**\nalwaysApply: false\n---\n"
        "# React\n\nOne component per file; hooks at the top.\n"
    ),
    ".cursor/rules/python.mdc": (
        "---\ndescription: Python style\nglobs: *.py\nalwaysApply: true\n---\n# Python\n\nType hints everywhere.\n"
    ),
    ".cursor/rules/always.mdc": "---\ndescription:\nglobs:\nalwaysApply: true\n---\n# Always\n\nBe brief.\n",
    # As VS Code's "New instruction file" writes them.
    ".github/instructions/typescript.instructions.md": (
        '---\napplyTo: "**/*.ts,**/*.tsx"\n---\n# TypeScript\n\nPrefer `unknown` to `any`.\n'
    ),
    ".github/instructions/migrations.instructions.md": (
        "---\napplyTo: db/migrations/**\ndescription: Writing migrations\n---\n# Migrations\n\nNever edit an applied one.\n"
    ),
}
