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


EVERY_CONVENTION: dict[str, str | bytes] = {
    # Always on: the root AGENTS.md and GEMINI.md, rules with no condition, and those that say so.
    "AGENTS.md": "# Agent guide\n\nRun make test before every commit.\n",
    "GEMINI.md": "# Gemini notes\n\nAnswer in British English.\n",
    ".claude/rules/general.md": "# General\n\nNever print a customer's email address.\n",
    ".windsurf/rules/always.md": "---\ntrigger: always_on\n---\n# Windsurf always\n\nKeep functions short.\n",
    ".windsurfrules": "# Legacy Windsurf\n\nUse tabs in Makefiles.\n",
    ".clinerules/always.md": "# Cline always\n\nExplain each shell command first.\n",
    ".kiro/steering/product.md": "# Product\n\nThe product is a ticket booking site.\n",
    # Malformed front matter: served with Kiro's default (always), reported by doctor with its line.
    ".kiro/steering/broken.md": "---\ninclusion: [always\n---\n# Broken steering\n\nPrefer UTC everywhere.\n",
    # Path-scoped, each under its own tool's key.
    ".claude/rules/api.md": '---\npaths:\n  - "src/api/**/*.{ts,tsx}"\n---\n# API handlers\n\nValidate every body with zod.\n',
    ".claude/rules/legacy.md": '---\npaths: ["old/**/*.rb"]\n---\n# Legacy Ruby\n\nFreeze string literals.\n',
    ".cursor/rules/web.mdc": "---\ndescription: Web UI\nglobs: src/web/**/*.tsx\nalwaysApply: false\n---\n"
    "# Web UI\n\nOne component per file.\n",
    ".github/instructions/python.instructions.md": '---\napplyTo: "**/*.py"\n---\n# Python\n\nType hints everywhere.\n',
    ".windsurf/rules/sql.md": "---\ntrigger: glob\nglobs: db/**/*.sql\n---\n# SQL\n\nEvery migration is reversible.\n",
    ".devin/rules/infra.md": '---\ntrigger: glob\nglobs: ["infra/**"]\n---\n# Infrastructure\n\nTag every resource.\n',
    ".clinerules/go.md": '---\npaths:\n  - "src/**/*.go"\n---\n# Go\n\nWrap every error.\n',
    ".kiro/steering/components.md": "---\ninclusion: fileMatch\nfileMatchPattern: src/web/components/**/*.tsx\n---\n"
    "# Components\n\nProps are readonly.\n",
    # Searchable only: their condition is not a path, whatever their headings say.
    ".windsurf/rules/deploy.md": "---\ntrigger: model_decision\ndescription: How to deploy\n---\n"
    "# src/api deploys\n\nDeploy with the blue-green script.\n",
    ".windsurf/rules/manual.md": "---\ntrigger: manual\n---\n# src/api manual steps\n\nRotate the signing keys by hand.\n",
    ".kiro/steering/manual.md": "---\ninclusion: manual\n---\n# src/api runbook\n\nPage the on-call first.\n",
    # Skills: listed in the manifest with their descriptions; their references are searchable.
    ".claude/skills/pdf-forms/SKILL.md": "---\nname: pdf-forms\ndescription: Fill in PDF forms and read their "
    "fields\n---\n# PDF forms\n\nSee references/fields.md for the field types.\n",
    ".claude/skills/pdf-forms/references/fields.md": "# Field types\n\nAcroform checkbox export values are "
    "case-sensitive.\n",
    ".agents/skills/release-notes/SKILL.md": "---\nname: release-notes\ndescription: Write release notes from the "
    "changelog\n---\n# Release notes\n\nGroup changes by audience.\n",
    # Nested files scoped by their folder; the same text kept for two agents.
    "services/billing/GEMINI.md": "# Billing\n\nAmounts are integer cents.\n",
    "CLAUDE.md": "# Claude notes\n\nPrefer small diffs that are easy to review.\n",
    ".github/copilot-instructions.md": "# Claude notes\n\nPrefer small diffs that are easy to review.\n",
    # The project's source files the rules are about.
    "src/api/users.ts": "export {}\n",
    "src/web/components/Button.tsx": "export {}\n",
    "src/main.go": "package main\n",
    "db/migrations/001.sql": "select 1;\n",
    "infra/main.tf": "",
    "services/billing/invoice.py": "",
}
"""A project that keeps rules for every agent at once: each convention's files, with each kind of
condition it has."""
