"""Which client is asking, by the name it gives, and which of a project's agent files it loads
itself: so that the server names those files instead of sending them again."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from clients.codex import PROJECT_DOC_BYTES as CODEX_PROJECT_DOC_BYTES
from clients.known import BY_KEY, CLIENTS, identify, loaded_by
from clients.loading import imports
from corpus.catalog import Corpus, load
from corpus.roots import make_roots
from tests.conftest import write_tree
from tests.helpers import REPO


def project(tmp_path: Path, files: dict[str, str | bytes]) -> Corpus:
    """The corpus `--project` serves: the `.AGENTS` folder (if any) and the agent files."""
    folder = write_tree(tmp_path / "shop", files)
    agents = [folder / ".AGENTS"] if (folder / ".AGENTS").is_dir() else []
    return load(make_roots(agents, conventional=folder))


@pytest.mark.parametrize(
    ("name", "key"),
    [
        ("claude-code", "claude-code"),
        ("Claude-Code", "claude-code"),
        (" claude-code ", "claude-code"),
        ("codex-mcp-client", "codex"),
        ("gemini-cli-mcp-client", "gemini-cli"),
        ("cursor-vscode", "cursor"),
        ("Visual Studio Code", "vscode"),
        ("claude-ai", "claude-desktop"),
    ],
)
def test_a_known_client_is_told_by_the_name_it_gives(name: str, key: str) -> None:
    client = identify(name)
    assert client is not None and client.key == key


@pytest.mark.parametrize("name", ["mcp", "inspector-cli", "", None, "claude", "my-claude-code-fork"])
def test_any_other_name_is_an_unknown_client(name: str | None) -> None:
    assert identify(name) is None


def test_only_the_clients_that_show_their_model_structured_content_get_text_alone() -> None:
    assert {c.key for c in BY_KEY.values() if c.reads_structured} == {"claude-code", "codex"}


AGENTS = "# Agents\n\nRun the tests.\n"
OVERVIEW = "# Overview\n\nA tea shop.\n"


def test_claude_code_loads_claude_md_its_imports_and_the_rules_without_paths(tmp_path: Path) -> None:
    corpus = project(
        tmp_path,
        {
            "CLAUDE.md": (
                "# Claude\n\n@AGENTS.md and @.AGENTS/overview.md\n\n"
                "```\n@.AGENTS/fenced.md\n```\n\n`@.AGENTS/spanned.md` mail me at a@example.com\n"
            ),
            "AGENTS.md": "# Agents\n\nSee @docs/style.md (not served).\n\n@.AGENTS/deep.md\n",
            ".AGENTS/overview.md": OVERVIEW,
            ".AGENTS/conventions.md": "# Conventions\n",
            ".AGENTS/fenced.md": "# Fenced\n",
            ".AGENTS/spanned.md": "# Spanned\n",
            ".AGENTS/deep.md": "# Deep\n",
            ".claude/rules/always.md": "# Always\n",
            ".claude/rules/api.md": "---\npaths: src/api/**\n---\n# API\n",
        },
    )
    loaded = loaded_by(BY_KEY["claude-code"], corpus)
    assert loaded == {
        "shop/CLAUDE.md": "project instructions",
        "shop/AGENTS.md": "imported by CLAUDE.md",
        ".AGENTS/overview.md": "imported by CLAUDE.md",
        ".AGENTS/deep.md": "imported by AGENTS.md",
        "shop/.claude/rules/always.md": "a rule without paths",
    }


def test_claude_code_loads_agents_md_only_where_there_is_no_claude_md(tmp_path: Path) -> None:
    alone = project(tmp_path / "a", {"AGENTS.md": AGENTS})
    beside = project(tmp_path / "b", {"AGENTS.md": AGENTS, "CLAUDE.md": "# Claude\n\nNo import.\n"})
    assert loaded_by(BY_KEY["claude-code"], alone) == {
        "shop/AGENTS.md": "project instructions, as there is no CLAUDE.md"
    }
    assert "shop/AGENTS.md" not in loaded_by(BY_KEY["claude-code"], beside)


def test_an_import_that_leaves_the_project_or_loops_stops(tmp_path: Path) -> None:
    corpus = project(
        tmp_path,
        {"CLAUDE.md": "@AGENTS.md @../../etc/passwd\n", "AGENTS.md": "@CLAUDE.md\n\n# Agents\n"},
    )
    assert [f.rel for f in imports(corpus.files["shop/CLAUDE.md"], corpus)] == ["AGENTS.md"]
    assert set(loaded_by(BY_KEY["claude-code"], corpus)) == {"shop/CLAUDE.md", "shop/AGENTS.md"}


def test_codex_loads_agents_md_when_it_reads_it_whole(tmp_path: Path) -> None:
    small = project(tmp_path / "a", {"AGENTS.md": AGENTS, "CLAUDE.md": "# Claude\n"})
    large = project(tmp_path / "b", {"AGENTS.md": "# Agents\n\n" + "x" * CODEX_PROJECT_DOC_BYTES})
    assert loaded_by(BY_KEY["codex"], small) == {"shop/AGENTS.md": "project instructions"}
    assert loaded_by(BY_KEY["codex"], large) == {}  # Codex cuts it at 32 KiB: the server sends it whole


def test_gemini_cli_loads_gemini_md_and_its_imports_not_agents_md(tmp_path: Path) -> None:
    corpus = project(
        tmp_path,
        {"GEMINI.md": "# Gemini\n\n@.AGENTS/overview.md\n", "AGENTS.md": AGENTS, ".AGENTS/overview.md": OVERVIEW},
    )
    assert loaded_by(BY_KEY["gemini-cli"], corpus) == {
        "shop/GEMINI.md": "context file",
        ".AGENTS/overview.md": "imported by GEMINI.md",
    }


def test_cursor_loads_agents_md_and_its_always_rules_not_its_glob_rules(tmp_path: Path) -> None:
    corpus = project(
        tmp_path,
        {
            "AGENTS.md": AGENTS,
            ".cursor/rules/always.mdc": "---\nalwaysApply: true\n---\n# Always\n",
            ".cursor/rules/react.mdc": "---\nglobs: src/**/*.tsx\n---\n# React\n",
        },
    )
    assert set(loaded_by(BY_KEY["cursor"], corpus)) == {"shop/AGENTS.md", "shop/.cursor/rules/always.mdc"}


def test_a_nested_agent_file_is_not_loaded_at_the_start(tmp_path: Path) -> None:
    corpus = project(tmp_path, {"AGENTS.md": AGENTS, "web/AGENTS.md": AGENTS, "web/CLAUDE.md": "# Web\n"})
    for client in BY_KEY.values():
        assert not {p for p in loaded_by(client, corpus) if "/web/" in p}, client.key


def test_an_unknown_client_loads_nothing(tmp_path: Path) -> None:
    corpus = project(tmp_path, {"AGENTS.md": AGENTS, "CLAUDE.md": "@AGENTS.md\n"})
    assert loaded_by(None, corpus) == {}


PRODUCTION = ("server.py", "protocol", "cli", "clients", "live", "retrieval", "corpus", "writes")
CONVENTIONS = "corpus/conventions.py"
"""The table of file conventions: it may name the rule formats a client reads (`cursor`, `cline`)."""


def strings_of(path: Path) -> list[str]:
    """The string constants of a module's code: a string standing alone (a docstring, an
    attribute's) and comments are documentation."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    said = {
        id(node.value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)
    }
    return [
        node.value
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in said
    ]


def mentions(strings: list[str], said: str) -> bool:
    """Whether a string says `said` as a whole name (not `codex` in the check `codex-chain`, nor
    `cline` in `.clinerules`), other than in a list of rule formats (`Cursor and Copilot rules`,
    `globs match it (Claude Code, Cursor, ...)`): those name file conventions, not the client."""
    pattern = re.compile(rf"(?<![\w.-]){re.escape(said)}(?![\w-])")
    return any(pattern.search(s) and not re.search(r"\brules\b|\bglobs\b", s) for s in strings)


def test_each_clients_name_is_written_in_its_own_module_alone() -> None:
    modules = [
        p for name in PRODUCTION for p in ([REPO / name] if name.endswith(".py") else (REPO / name).rglob("*.py"))
    ]
    texts = {p.relative_to(REPO).as_posix(): strings_of(p) for p in modules}
    for client in CLIENTS:
        own = f"clients/{client.key.replace('-', '_')}.py"
        for said in (client.key, client.name):
            found = {m for m, strings in texts.items() if mentions(strings, said)} - {CONVENTIONS}
            assert found == {own}, (said, sorted(found))
