"""context_for_path returns what applies and little else: globs and front matter are evidence, a
heading only through the section's own heading and only for names specific enough to mean
something. The two cases reported from real projects, on files written here, are checked through a
real client in tests/promises/test_conventions.py."""

from __future__ import annotations

from pathlib import Path

import pytest

from corpus.catalog import load
from corpus.roots import make_roots
from retrieval.search.applies import applicable, specific
from tests.conftest import write_tree


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
