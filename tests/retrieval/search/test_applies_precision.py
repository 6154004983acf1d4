"""context_for_path returns what applies and little else: globs and front matter are evidence, a
heading only through the section's own heading and only for names specific enough to mean
something (the two cases reported from real projects, on files written here)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from corpus.catalog import load
from corpus.roots import make_roots
from retrieval.search.applies import applicable, specific
from tests.conftest import write_tree
from tests.helpers import call
from tests.projects import parse, serve

pytestmark = pytest.mark.anyio

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


def test_a_heading_names_a_folder_only_as_a_whole_word_or_a_path(tmp_path: Path) -> None:
    repo = write_tree(
        tmp_path / "mono",
        {
            ".github/copilot-instructions.md": (
                "# Payments monorepo\n\nThe title: over every section, it names the file, not a folder.\n\n"
                "## Payments\n\nMoney.\n\n## Payments-legacy shims\n\nOld.\n\n## Repayments\n\nNo.\n\n"
                "## Code in `src/payments/v2`\n\nVersioned.\n\n## The `v2` API\n\nToo short to count.\n\n"
                "## `src/payments/v3` and `src/billing/`\n\nOther folders.\n\n## `v1/payments` and `payments/v1`\n\nSo are these.\n\n"
                "## The `src/` folder\n\nA top folder, written as one.\n\n## Code in src\n\nA generic word.\n\n"
                "## [Payments](docs/payments.md) guide\n\nLinked.\n\n## See [the guide](src/payments/README.md)\n\nA link.\n"
            )
        },
    )
    corpus = load(make_roots([], conventional=repo))
    found = applicable(corpus, {corpus.agents_roots[0].label: "src/payments/v2/charge.py"})
    assert [(a.unit.heading, a.reason) for a in found] == [
        ("Code in `src/payments/v2`", "heading names src/payments/v2"),
        ("Payments", "heading names payments"),
        ("[Payments](docs/payments.md) guide", "heading names payments"),
        ("The `src/` folder", "heading names src/"),
    ]


def test_a_title_over_the_file_is_no_evidence_but_a_lone_heading_is(tmp_path: Path) -> None:
    repo = write_tree(
        tmp_path / "app",
        {
            "CLAUDE.md": "# Billing service\n\n## Style\n\nTabs.\n",
            ".github/copilot-instructions.md": "# Billing\n\nInvoices are immutable.\n",
            ".github/instructions/ledger.instructions.md": "# Ledger\n\n## Billing\n\nDouble entry.\n\n# Other\n\nx\n",
        },
    )
    corpus = load(make_roots([], conventional=repo))
    found = applicable(corpus, {corpus.agents_roots[0].label: "billing/invoice.py"})
    assert [(a.unit.path.split("/", 1)[1], a.unit.heading, a.reason) for a in found] == [
        (".github/copilot-instructions.md", "Billing", "heading names billing"),  # its only section
        (".github/instructions/ledger.instructions.md", "Billing", "heading names billing"),  # not under a title
    ]


@pytest.mark.parametrize(
    ("name", "means"),
    [
        ("api", True),
        ("payments", True),
        ("extensions", True),
        ("vs", False),
        ("src", False),
        ("lib", False),
        ("tests", False),
        ("utils", False),
        ("common", False),
        ("core", False),
        ("docs", False),
        (".github", False),
        ("2024", False),
    ],
)
def test_specific_names(name: str, means: bool) -> None:
    assert specific(name) is means
