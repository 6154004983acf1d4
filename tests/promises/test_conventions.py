"""Every agent's rules in one project: the server started in it as a client starts it, over real
stdio, pins what always applies, scopes what applies to paths, lists the skills, and finds a
skill's reference; doctor reports what each tool would misread. Through the SDK's client, on
projects as teams keep them: front matter as each tool writes it (titles, descriptions, Cursor
globs unquoted, Copilot's applyTo) describes, pins and scopes; context_for_path says why each
section applies, and returns little else (the cases reported from real projects); the
instructions name what is served."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
from mcp import Client, StdioServerParameters

from tests.conftest import write_tree
from tests.helpers import SERVER, call, cli, text_of
from tests.projects import CURSOR_AND_COPILOT, EVERY_CONVENTION, REPO_FILES, parse, serve

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


async def test_front_matter_gives_titles_and_descriptions(tmp_path: Path) -> None:
    repo = write_tree(tmp_path / "shop", REPO_FILES)
    server = serve(*parse([], cwd=repo))
    async with Client(server) as client:
        resources = {r.uri: r for r in (await client.list_resources()).resources}
        pinned = text_of(await client.call_tool("pinned_context", {}))
    assert resources["agents://.cursor/rules/style.mdc"].annotations.priority == 1.0  # type: ignore[union-attr]
    assert resources["agents://.cursor/rules/api.mdc"].title == "API rules"
    assert "- shop/.cursor/rules/api.mdc (How the HTTP API is built): API rules" in pinned


async def test_cursor_rules_as_cursor_writes_them_keep_their_front_matter(tmp_path: Path) -> None:
    repo = write_tree(tmp_path / "web", CURSOR_AND_COPILOT)
    server = serve(*parse([], cwd=repo))
    async with Client(server) as client:
        pinned = text_of(await client.call_tool("pinned_context", {}))
        _, _, button = await call(client, "context_for_path", path="src/components/Button.tsx")
        _, _, script = await call(client, "context_for_path", path="tools/gen.py")
    assert '<context path="web/.cursor/rules/python.mdc">' in pinned  # alwaysApply: true pins it
    assert '<context path="web/.cursor/rules/always.mdc">' in pinned
    assert '<context path="web/.cursor/rules/react.mdc">' not in pinned
    assert "(React component conventions)" in pinned  # its description reaches the manifest
    assert button["hits"][0]["path"] == "web/.cursor/rules/react.mdc"
    assert button["hits"][0]["applies"] == "cursor globs: src/components/**"
    assert all(h["path"] != "web/.cursor/rules/react.mdc" for h in script["hits"])


async def test_copilot_apply_to_scopes_its_instructions(tmp_path: Path) -> None:
    repo = write_tree(tmp_path / "web", CURSOR_AND_COPILOT)
    server = serve(*parse([], cwd=repo))
    async with Client(server) as client:
        _, _, ts = await call(client, "context_for_path", path="src/api/client.ts")
        _, _, migration = await call(client, "context_for_path", path="db/migrations/0042_users.sql")
        pinned = text_of(await client.call_tool("pinned_context", {}))
    applies = {h["path"]: h["applies"] for h in ts["hits"]}
    assert applies["web/.github/instructions/typescript.instructions.md"] == "copilot applyTo: **/*.ts"
    assert "web/.github/instructions/migrations.instructions.md" not in applies
    assert [h["path"] for h in migration["hits"]][:1] == ["web/.github/instructions/migrations.instructions.md"]
    assert "(Writing migrations)" in pinned


async def test_context_for_path_tool_says_why_each_section_applies(tmp_path: Path) -> None:
    repo = write_tree(tmp_path / "shop", REPO_FILES)
    server = serve(*parse([], cwd=repo))
    async with Client(server) as client:
        body, status, result = await call(client, "context_for_path", path="src/api/auth.py")
        _, _, none = await call(client, "context_for_path", path="scripts/build.sh")
    assert status["method"] == "applies"
    assert body.startswith('<context path="shop/.cursor/rules/api.mdc" section="API rules" score=')
    assert 'applies="cursor globs: src/api/**/*.py"' in body.split("\n")[0]
    assert result["hits"][0]["applies"] == "cursor globs: src/api/**/*.py"
    assert none["hits"] == [] and none["method"] == "applies"


# As microsoft/vscode keeps it: one title over many sections, none of them about `vs`.
VSCODE_SECTIONS = [
    ("##", "Project Overview", "Visual Studio Code is built with a layered architecture."),
    ("###", "Root Folders", "- `src/`: Main TypeScript source code\n- `build/`: Build scripts"),
    ("###", "Core Architecture (`src/` folder)", "- `src/vs/base/` - Foundation utilities"),
    ("###", "Built-in Extensions (`extensions/` folder)", "First-party extensions that ship with VS Code."),
    ("###", "Finding Related Code", "Semantic search first."),
    ("##", "Validating TypeScript changes", "Always check for compilation errors first."),
    ("###", "TypeScript compilation steps", "Check the watch task output."),
    ("###", "TypeScript validation steps", "Use `scripts/test.sh` for unit tests."),
    ("##", "Coding Guidelines", "House rules."),
    ("###", "Indentation", "We use tabs, not spaces."),
    ("###", "Naming Conventions", "PascalCase for type names."),
    ("###", "Types", "Do not export types unless needed."),
    ("###", "Comments", "JSDoc style comments."),
    ("###", "Strings", "Externalize user-visible strings."),
    ("###", "UI labels", "Title-style capitalization."),
    ("###", "Style", "Arrow functions over anonymous functions."),
    ("###", "Code Quality", "Every file has the Microsoft copyright header."),
    ("##", "Learnings", "Minimize the number of assertions in tests."),
]
VSCODE: dict[str, str | bytes] = {
    "package.json": "{}\n",
    ".github/copilot-instructions.md": "# VS Code Copilot Instructions\n\n"
    + "".join(f"{level} {heading}\n\n{body}\n\n" for level, heading, body in VSCODE_SECTIONS),
    ".github/instructions/observables.instructions.md": (
        "---\ndescription: Observables\napplyTo: src/vs/**/*.ts\n---\n# Observables\n\nUse derived().\n"
    ),
    ".github/instructions/notebook.instructions.md": (
        "---\napplyTo: '**/notebook/**'\n---\n# Notebook\n\nCells are models.\n"
    ),
}


# A web app with a Python API: Cursor rules as Cursor's editor saves them.
SHOP: dict[str, str | bytes] = {
    "pyproject.toml": "[project]\nname = 'shop'\n",
    ".cursor/rules/react.mdc": (
        "---\ndescription: React components\nglobs: **/*.tsx, src/components/**\nalwaysApply: false\n---\n"
        "# React and tests\n\nOne component per file.\n\n## Hooks\n\nHooks at the top.\n\n"
        "## Tests\n\nRender with Testing Library; tests live in `tests/`.\n"
    ),
    ".cursor/rules/python-tests.mdc": (
        "---\ndescription: Python tests\nglobs: tests/**/*.py\nalwaysApply: false\n---\n# Pytest\n\nFixtures, not setUp.\n"
    ),
    ".cursor/rules/api.mdc": "---\nglobs: [src/api/**]\n---\n# API\n\nValidate every body.\n",
    "CLAUDE.md": "# Shop\n\n## Tests\n\nRun `make test`.\n\n## The api\n\nFastAPI.\n",
    "src/web/CLAUDE.md": "# Web package\n\n## Tests and api calls\n\nMock the api.\n",
    "src/api/AGENTS.md": "# API folder\n\nNever log tokens.\n",
}


def titled(hits: list[dict[str, Any]]) -> list[tuple[str, str, str]]:
    return [(h["path"].split("/", 1)[1], h["heading"], h["applies"]) for h in hits]


async def test_a_title_over_every_section_no_longer_makes_them_all_apply(tmp_path: Path) -> None:
    """Before: any file under src/vs/ got all 19 sections, each `applies="heading names vs"`."""
    repo = write_tree(tmp_path / "vscode", VSCODE)
    server = serve(*parse([], cwd=repo))
    async with Client(server) as client:
        _, _, editor = await call(client, "context_for_path", path="src/vs/editor/browser/widget.ts")
        _, _, notebook = await call(client, "context_for_path", path="src/vs/workbench/contrib/notebook/cell.ts")
        _, _, git = await call(client, "context_for_path", path="extensions/git/src/git.ts")
        _, _, css = await call(client, "context_for_path", path="src/vs/base/browser/ui/list.css")
    core = (".github/copilot-instructions.md", "Core Architecture (`src/` folder)", "heading names src/")
    assert titled(editor["hits"]) == [
        (".github/instructions/observables.instructions.md", "Observables", "copilot applyTo: src/vs/**/*.ts"),
        core,  # the one section whose own heading names a folder of the file, `src/`
    ]
    assert titled(notebook["hits"]) == [  # the glob with more literal characters first
        (".github/instructions/observables.instructions.md", "Observables", "copilot applyTo: src/vs/**/*.ts"),
        (".github/instructions/notebook.instructions.md", "Notebook", "copilot applyTo: **/notebook/**"),
        core,
    ]
    assert titled(git["hits"]) == [
        (".github/copilot-instructions.md", "Built-in Extensions (`extensions/` folder)", "heading names extensions/")
    ]
    assert titled(css["hits"]) == [core]  # `vs`, `base`, `browser` name nothing; no glob holds a .css file


async def test_a_rule_whose_globs_miss_the_file_never_applies(tmp_path: Path) -> None:
    """Before: a Python test file got the React `.tsx` rules, through their `## Tests` heading."""
    repo = write_tree(tmp_path / "shop", SHOP)
    server = serve(*parse([], cwd=repo))
    async with Client(server) as client:
        _, _, test = await call(client, "context_for_path", path="tests/test_orders.py")
        _, _, button = await call(client, "context_for_path", path="src/web/components/Button.tsx")
        _, _, route = await call(client, "context_for_path", path="src/api/orders.py")
    assert titled(test["hits"]) == [(".cursor/rules/python-tests.mdc", "Pytest", "cursor globs: tests/**/*.py")]
    assert titled(button["hits"]) == [
        (".cursor/rules/react.mdc", "React and tests", "cursor globs: **/*.tsx"),
        (".cursor/rules/react.mdc", "Hooks", "cursor globs: **/*.tsx"),
        (".cursor/rules/react.mdc", "Tests", "cursor globs: **/*.tsx"),
        ("src/web/CLAUDE.md", "Web package", "CLAUDE.md in src/web/"),
        ("src/web/CLAUDE.md", "Tests and api calls", "CLAUDE.md in src/web/"),
    ]
    assert titled(route["hits"]) == [
        (".cursor/rules/api.mdc", "API", "cursor globs: src/api/**"),
        ("src/api/AGENTS.md", "API folder", "AGENTS.md in src/api/"),
        ("CLAUDE.md", "The api", "heading names api"),
    ]  # not src/web/CLAUDE.md, whose heading says "api": its folder is its scope


async def test_the_instructions_name_what_is_served(tmp_path: Path) -> None:
    repo = write_tree(tmp_path / "web", CURSOR_AND_COPILOT)
    async with Client(serve(*parse([], cwd=repo))) as client:
        conventional = client.instructions or ""
    write_tree(repo, {".AGENTS/overview.md": "# Overview\n\nA web shop.\n"})
    async with Client(serve(*parse(["--conventional"], cwd=repo))) as client:
        both = client.instructions or ""
    assert conventional.startswith("agents-context: call context_search before guessing about a project rule")
    assert (
        "It serves this project's agent instruction files (AGENTS.md, Cursor rules and "
        "Copilot instructions), what the team wants coding agents to know." in conventional
    )
    assert ".AGENTS/" not in conventional.split("\n")[0]
    assert "It serves this project's .AGENTS/ folder and its agent instruction files" in both


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
