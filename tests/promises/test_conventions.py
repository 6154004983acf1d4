"""Every agent's rules in one project: the server started in it as a client starts it, over real
stdio, pins what always applies, scopes what applies to paths, lists the skills, and finds a
skill's reference; doctor reports what each tool would misread."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
from mcp import Client, StdioServerParameters

from tests.conftest import write_tree
from tests.helpers import SERVER, call, cli
from tests.projects import EVERY_CONVENTION

pytestmark = pytest.mark.anyio

ALWAYS = [
    "AGENTS.md",
    "GEMINI.md",
    ".claude/rules/general.md",
    ".windsurf/rules/always.md",
    ".windsurfrules",
    ".clinerules/always.md",
    ".kiro/steering/product.md",
    ".kiro/steering/broken.md",
]
SCOPED = [
    ".claude/rules/api.md",
    ".claude/rules/legacy.md",
    ".cursor/rules/web.mdc",
    ".github/instructions/python.instructions.md",
    ".windsurf/rules/sql.md",
    ".devin/rules/infra.md",
    ".clinerules/go.md",
    ".kiro/steering/components.md",
]
SEARCH_ONLY = [".windsurf/rules/deploy.md", ".windsurf/rules/manual.md", ".kiro/steering/manual.md"]


def _stdio(project: Path) -> StdioServerParameters:
    """No flags, in the project folder: the project is what is served."""
    return StdioServerParameters(command=sys.executable, args=[SERVER, "--no-cache"], cwd=str(project))


async def _applying(client: Client, path: str) -> dict[str, str]:
    """context_for_path's hits, file by file: the first block's `applies` for each."""
    _, _, found = await call(client, "context_for_path", path=path)
    applies: dict[str, str] = {}
    for hit in found["hits"]:
        applies.setdefault(hit["path"].split("/", 1)[1], hit["applies"])
    return applies


async def test_one_server_reads_every_agents_rules_as_each_tool_means_them(tmp_path: Path) -> None:
    project = write_tree(tmp_path / "booking", EVERY_CONVENTION)
    async with Client(_stdio(project)) as client:
        instructions = client.instructions or ""
        pinned, _, _ = await call(client, "pinned_context")
        api = await _applying(client, "src/api/users.ts")
        button = await _applying(client, "src/web/components/Button.tsx")
        sql = await _applying(client, "db/migrations/001.sql")
        infra = await _applying(client, "infra/main.tf")
        go = await _applying(client, "src/main.go")
        invoice = await _applying(client, "services/billing/invoice.py")
        elsewhere = await _applying(client, "README.md")
        _, _, reference = await call(client, "context_search", query="acroform checkbox export values")
        resources = {r.uri for r in (await client.list_resources()).resources}

    blocks = {line.split('"')[1] for line in pinned.split("\n") if line.startswith("<context path=")}
    assert blocks == {f"booking/{rel}" for rel in ALWAYS}
    assert "agent instruction files (AGENTS.md, CLAUDE.md, GEMINI.md, Claude Code rules, skills, Cursor" in instructions

    # Path-scoped rules apply through their own condition, named with their convention.
    assert api[".claude/rules/api.md"] == "claude paths: src/api/**/*.{ts,tsx}"
    assert button[".kiro/steering/components.md"] == "kiro fileMatchPattern: src/web/components/**/*.tsx"
    assert button[".cursor/rules/web.mdc"] == "cursor globs: src/web/**/*.tsx"
    assert list(button)[:2] == [".kiro/steering/components.md", ".cursor/rules/web.mdc"]  # most specific first
    assert sql == {".windsurf/rules/sql.md": "windsurf globs: db/**/*.sql"}
    assert infra == {".devin/rules/infra.md": "devin globs: infra/**"}
    assert go == {".clinerules/go.md": "cline paths: src/**/*.go"}
    assert invoice == {
        ".github/instructions/python.instructions.md": "copilot applyTo: **/*.py",
        "services/billing/GEMINI.md": "GEMINI.md in services/billing/",
    }
    # ...and never where their condition does not match, nor when it is not a path at all.
    for answer in (api, button, sql, infra, go, invoice, elsewhere):
        assert not set(answer) & {*ALWAYS, *SEARCH_ONLY}
    assert not set(elsewhere) & set(SCOPED)
    assert ".claude/rules/legacy.md" not in {rel for answer in (api, button, sql, infra, go, invoice) for rel in answer}

    # Skills: in the manifest with their descriptions, whichever folder holds them.
    assert "- booking/.claude/skills/pdf-forms/SKILL.md (skill pdf-forms: Fill in PDF forms and read their fields)" in (
        pinned
    )
    assert "- .agents/skills/release-notes/SKILL.md (skill release-notes: Write release notes from the changelog)" in (
        pinned
    )
    assert "booking/.agents/" not in pinned  # the .agents folder is a root of its own, served once
    assert reference["hits"][0]["path"] == "booking/.claude/skills/pdf-forms/references/fields.md"
    # Display paths are the files' own paths in the project.
    assert "agents://.kiro/steering/components.md" in resources or any(
        uri.endswith("/.kiro/steering/components.md") for uri in resources
    )


def _doctor(project: Path, *flags: str) -> list[dict[str, Any]]:
    done = cli("doctor", "--json", *flags, cwd=project)
    assert done.returncode in (0, 1), done.stderr
    findings: list[dict[str, Any]] = json.loads(done.stdout)["findings"]
    return findings


def test_doctor_reports_what_each_tool_would_misread(tmp_path: Path) -> None:
    project = write_tree(tmp_path / "booking", EVERY_CONVENTION)
    found = {(f["check"], f["path"]): f for f in _doctor(project, "--instructions-budget", "300")}

    broken = found["front-matter", "booking/.kiro/steering/broken.md"]
    assert (broken["start_line"], broken["end_line"]) == (2, 2)
    assert broken["message"].startswith("not valid YAML")
    assert broken["message"].endswith("served as a rule for every task (pinned)")

    never = found["never-applies", "booking/.claude/rules/legacy.md"]
    assert never["message"].startswith("paths: old/**/*.rb matches no file in ")
    assert not [key for key in found if key[0] == "never-applies" and key[1] != "booking/.claude/rules/legacy.md"]

    twice = found["duplicate-rule", "booking/CLAUDE.md"]
    assert twice["message"].startswith("the same text as booking/.github/copilot-instructions.md (copilot)")

    over = found["always-on-budget", "(always-on rules)"]
    assert "always-on files" in over["message"]
    assert "over the 300-character instructions" in over["message"]
    assert ("always-on-budget", "(always-on rules)") not in {
        (f["check"], f["path"]) for f in _doctor(project, "--instructions-budget", "4000")
    }


def test_doctor_leaves_imports_shared_packages_and_unknown_projects_alone(tmp_path: Path) -> None:
    skill = "---\nname: notes\ndescription: Take notes\n---\n# Notes\n\nWrite down every decision with its date and owner.\n"
    project = write_tree(
        tmp_path / "app",
        {
            "AGENTS.md": "# Guide\n\nRun the whole test suite before every single commit, please.\n",
            "CLAUDE.md": "@AGENTS.md\n",
            "GEMINI.md": "@AGENTS.md\n",
            ".claude/skills/notes/SKILL.md": skill,
            ".agents/skills/notes/SKILL.md": skill,
        },
    )
    found = {(f["check"], f["path"]) for f in _doctor(project)}
    assert not [key for key in found if key[0] == "duplicate-rule" and key[1] != "app/.claude/skills/notes/SKILL.md"]
    assert ("duplicate-rule", "app/.claude/skills/notes/SKILL.md") in found  # one skill kept in two folders

    loose = write_tree(tmp_path / "shared" / ".AGENTS", {"api.md": "---\nglobs: [src/api/**]\n---\n# API\n\nx\n"})
    assert not [f for f in _doctor(project, "--root", str(loose)) if f["check"] == "never-applies"]
