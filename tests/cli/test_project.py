"""Pointing the server at a project: `--project`, no flags inside a project, `--root NAME=DIR`,
`--conventional DIR`, and the set-up mistakes that are reported rather than swallowed."""

from __future__ import annotations

import dataclasses
import sys
from pathlib import Path

import pytest
from mcp import Client, StdioServerParameters

from cli.settings import open_index
from corpus.catalog import load
from server import create_server
from tests.conftest import TEST_ENV, write_tree
from tests.helpers import SERVER, call, cli, split_status, text_of
from tests.projects import parse

pytestmark = pytest.mark.anyio

SHOP = {
    ".agents/overview.md": "# Shop\n\nA web shop.\n",
    ".agents/payments.md": "# Payments\n\nRefunds go through the ledger.\n",
    "AGENTS.md": "# Agent guide\n\nRun make check.\n",
    "src/api/AGENTS.md": "# API\n\nValidate input.\n",
    ".cursor/rules/endpoints.mdc": "---\nalwaysApply: true\n---\n# Endpoints\n\nPaginate with a cursor.\n",
    ".github/copilot-instructions.md": "# Copilot\n\nUse the logger.\n",
    "pyproject.toml": "[project]\nname = 'shop'\n",
}
SERVED = [
    ".agents/overview.md",
    ".agents/payments.md",
    "shop/.cursor/rules/endpoints.mdc",
    "shop/.github/copilot-instructions.md",
    "shop/AGENTS.md",
    "shop/src/api/AGENTS.md",
]


def served(argv: list[str], cwd: Path) -> list[str]:
    _, roots = parse(argv, cwd)
    return sorted(load(roots).files)


def test_project_serves_its_agents_folder_and_its_agent_files_from_any_folder(tmp_path: Path) -> None:
    shop = write_tree(tmp_path / "shop", SHOP)
    elsewhere = write_tree(tmp_path / "clone", {".AGENTS/overview.md": "# Not this one\n"})
    assert served(["--project", str(shop)], cwd=elsewhere) == SERVED
    assert served([], cwd=shop) == SERVED  # no flags inside the project: the same


def test_conventional_with_a_folder_serves_only_that_folder(tmp_path: Path) -> None:
    shop = write_tree(tmp_path / "shop", SHOP)
    clone = write_tree(tmp_path / "clone", {".AGENTS/overview.md": "# The clone's own\n"})
    assert served(["--conventional", str(shop)], cwd=clone) == [p for p in SERVED if p.startswith("shop/")]


def test_root_serves_only_the_folders_named(tmp_path: Path) -> None:
    shop = write_tree(tmp_path / "shop", SHOP)
    assert served(["--root", str(shop / ".agents")], cwd=shop) == SERVED[:2]


def test_a_project_with_nothing_to_serve_says_what_it_looked_for(tmp_path: Path) -> None:
    empty = write_tree(tmp_path / "empty", {"README.md": "# Hi\n"})
    done = cli("status", "--project", str(empty), cwd=tmp_path)
    assert done.returncode == 2
    assert (
        f"no .AGENTS folder and no agent files (AGENTS.md, CLAUDE.md, GEMINI.md, .claude/rules, .claude/skills, "
        f".cursor/rules, .github/copilot-instructions.md, .github/instructions, .windsurf/rules, .windsurfrules, "
        f".devin/rules, .clinerules or .kiro/steering) in {empty}" in (done.stderr)
    )
    assert "Traceback" not in done.stderr


async def test_roots_are_labelled_by_name_or_by_the_folder_that_tells_them_apart(tmp_path: Path) -> None:
    mono = write_tree(
        tmp_path / "mono",
        {
            "packages/api/.AGENTS/errors.md": "# Errors\n\nProblem JSON.\n",
            "packages/web/.AGENTS/errors.md": "# Errors\n\nA toast.\n",
        },
    )
    _, roots = parse(["--root", "packages/api/.AGENTS", "--root", "packages/web/.AGENTS"], cwd=mono)
    assert [r.label for r in roots] == ["api", "web"]
    config, roots = parse(["--root", "server=packages/api/.AGENTS", "--root", "packages/web/.AGENTS"], cwd=mono)
    assert [r.label for r in roots] == ["server", ".AGENTS"]
    async with Client(create_server(open_index(dataclasses.replace(config, no_cache=True)), config)) as client:
        _, _, found = await call(client, "context_search", query="problem json")
    assert [h["path"] for h in found["hits"]] == ["server/errors.md"]
    assert [h["uri"] for h in found["hits"]] == ["agents://server/errors.md"]


async def test_set_up_mistakes_are_said_at_start_in_status_and_in_doctor(tmp_path: Path) -> None:
    shop = write_tree(tmp_path / "shop", SHOP)
    argv = ["--root", str(shop), "--pin", ".agents/overview.md", "--pin", "nowhere.md", "--no-cache"]
    config, _ = parse(argv, cwd=tmp_path)
    (project_warning,) = config.warnings()
    assert f"--root {shop} looks like a whole project (it has pyproject.toml)" in project_warning
    assert f"--project {shop} was probably meant" in project_warning
    async with Client(create_server(open_index(config), config)) as client:
        status = text_of(await client.call_tool("context_status", {}))
        _, _, report = await call(client, "context_status")
    assert report["warnings"] == [project_warning, "--pin nowhere.md matches no file, so it pins nothing"]
    assert f"Warning: {project_warning}." in status
    assert "Warning: --pin nowhere.md matches no file, so it pins nothing." in status
    assert split_status(status)[1]["healthy"] == "1"  # a warning is not a failure

    doctor = cli("doctor", *argv, cwd=tmp_path)
    assert "[pin] --pin nowhere.md matches no file of the .AGENTS folders" in doctor.stdout
    assert "looks like a whole project" in doctor.stdout
    started = cli("status", *argv, "--log-level", "WARNING", cwd=tmp_path)
    assert "--pin nowhere.md matches no file" in started.stderr or "--pin nowhere.md" in started.stdout


def test_search_docs_takes_the_query_after_a_bare_docs_flag(tmp_path: Path) -> None:
    files = {
        **SHOP,
        ".agents/deploy.md": "# Deploy\n\nCanary first.\n",
        "manual/deploy.md": "# Deploy\n\nA canary release.\n",
    }
    shop = write_tree(tmp_path / "shop", files)
    done = cli("search", "--docs", "canary release", cwd=shop)  # passages of what is served
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("--- .agents/deploy.md#0 (score=")
    with_folder = cli("search", "--docs", "manual", "canary release", cwd=shop)
    assert with_folder.returncode == 0, with_folder.stderr
    assert with_folder.stdout.startswith("--- manual/deploy.md#0 (score=")
    missing = cli("search", "--docs", cwd=shop)
    assert missing.returncode == 2 and "search needs a query" in missing.stderr


async def test_status_right_after_start_is_not_unhealthy(tmp_path: Path) -> None:
    """Clients call context_status first thing (its description says to when in doubt): starting is
    not a failure, and the first line says which state the server is in."""
    shop = write_tree(tmp_path / "shop", SHOP)
    params = StdioServerParameters(command=sys.executable, args=[SERVER, "--project", str(shop)], env=TEST_ENV)
    async with Client(params) as client:
        status = text_of(await client.call_tool("context_status", {}))
    first = status.split("\n", 1)[0]
    assert first in (
        "agents-context is starting (the file watcher is not running yet); BM25 search enabled.",
        "agents-context is healthy; BM25 search enabled.",
    ), first
    assert split_status(status)[1]["healthy"] == "1" and "1970" not in status
