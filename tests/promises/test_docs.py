"""Everything users can call is documented on the page that owns it, and the documentation holds
together: the README stays a short entry point that links every page, and every relative link in
it and in `docs/` leads to a file and heading that exist.

Where each contract lives: tools in the README's table; flags and commands in
`docs/configuration.md` (commands in the README too); resources, URI templates, the prompt and
every field of the structured result in `docs/contracts.md`."""

from __future__ import annotations

import argparse
import dataclasses
import re
from pathlib import Path

import pytest
from pydantic import BaseModel

from cli.flags import build_parser
from retrieval.render.schema import Hit, LastUpdate, MatchedTerm, SearchResult
from retrieval.search.links import LinkTo
from retrieval.search.nearest import Nearest
from tests.helpers import REPO, make_server

DOCS = REPO / "docs"
README_PATH = REPO / "README.md"
README = README_PATH.read_text(encoding="utf-8")
CONFIGURATION = (DOCS / "configuration.md").read_text(encoding="utf-8")
CONTRACTS = (DOCS / "contracts.md").read_text(encoding="utf-8")
README_MAX_LINES = 250
WORDS_MAX = 25_000
"""README.md, CHANGELOG.md and docs/ together: an afternoon's reading. A new feature adds a row to
a table, not a page."""
PAGE_MAX_LINES = 300
LONGER_PAGES = {"architecture.md": 430}
"""A page allowed past PAGE_MAX_LINES, and its own limit: the map of the code is being rewritten
(issue 52 leaves it to that rewrite)."""

FENCE = re.compile(r"^(```|~~~).*?^\1[^\S\n]*$", re.MULTILINE | re.DOTALL)
COMMENT = re.compile(r"<!--.*?-->", re.DOTALL)
CODE_SPAN = re.compile(r"`[^`\n]*`")
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")


def pages() -> list[Path]:
    return [README_PATH, *sorted(DOCS.glob("*.md"))]


def parsers() -> list[argparse.ArgumentParser]:
    top = build_parser()
    subs = [a for a in top._actions if isinstance(a, argparse._SubParsersAction)]
    return [top, *(p for sub in subs for p in sub.choices.values())]


def flags() -> list[str]:
    return sorted({o for p in parsers() for a in p._actions for o in a.option_strings if o.startswith("--")})


def subcommands() -> list[str]:
    top = build_parser()
    return sorted(name for a in top._actions if isinstance(a, argparse._SubParsersAction) for name in a.choices)


def section(text: str, heading: str) -> str:
    """The text under `## heading`, up to the next heading of the same or a higher level (code
    blocks left out: a `# comment` in one is not a heading)."""
    match = re.search(
        rf"^## {re.escape(heading)}\n(.*?)(?=^#{{1,2}} |\Z)", FENCE.sub("", text), re.MULTILINE | re.DOTALL
    )
    assert match, f"no '## {heading}' section"
    return match.group(1)


@pytest.mark.parametrize("flag", flags())
def test_every_flag_is_documented_in_the_configuration_page(flag: str) -> None:
    assert re.search(rf"(?<![\w-]){re.escape(flag)}\b", CONFIGURATION), f"{flag} is missing from docs/configuration.md"


def test_every_flag_has_help() -> None:
    for parser in parsers():
        for action in parser._actions:
            assert action.help, f"{parser.prog} {action.option_strings or action.dest} has no help text"


@pytest.mark.parametrize("subcommand", subcommands())
def test_every_subcommand_is_in_the_readme_and_the_configuration_page(subcommand: str) -> None:
    assert f"agents-context {subcommand}" in README, f"{subcommand} is missing from the README"
    assert f"agents-context {subcommand}" in CONFIGURATION, f"{subcommand} is missing from docs/configuration.md"


@pytest.mark.anyio
async def test_the_readme_table_lists_exactly_the_tools(tmp_path: Path) -> None:
    (tmp_path / ".AGENTS").mkdir()
    server = make_server(tmp_path / ".AGENTS")
    tools = {t.name for t in await server.list_tools()}
    rows = re.findall(r"^\| `([a-z_]+)` \|", section(README, "The tools"), re.MULTILINE)
    assert sorted(rows) == sorted(tools), "the README's tools table and the server's tools differ"


@pytest.mark.anyio
async def test_every_resource_template_and_prompt_is_in_the_contracts_page(tmp_path: Path) -> None:
    (tmp_path / ".AGENTS").mkdir()
    server = make_server(tmp_path / ".AGENTS")
    uris = [str(r.uri) for r in await server.list_resources()] + [
        t.uri_template for t in await server.list_resource_templates()
    ]
    for uri in uris:
        assert uri in CONTRACTS, f"{uri} is missing from docs/contracts.md"
    for prompt in await server.list_prompts():
        assert f"`{prompt.name}`" in CONTRACTS, f"the prompt {prompt.name} is missing from docs/contracts.md"
    for tool in await server.list_tools():
        assert f"`{tool.name}`" in CONTRACTS, f"{tool.name} is missing from docs/contracts.md"


def field_names(model: type) -> list[str]:
    if issubclass(model, BaseModel):
        return list(model.model_fields)
    assert dataclasses.is_dataclass(model), model
    return [f.name for f in dataclasses.fields(model)]


@pytest.mark.parametrize(
    "model", [SearchResult, Hit, MatchedTerm, LastUpdate, Nearest, LinkTo], ids=lambda m: m.__name__
)
def test_every_structured_result_field_is_in_the_contracts_page(model: type) -> None:
    grammar = section(CONTRACTS, "Output grammar")
    missing = [name for name in field_names(model) if f"`{name}`" not in grammar and f"`{name}[]`" not in grammar]
    assert not missing, f"{model.__name__} fields missing from docs/contracts.md, 'Output grammar': {missing}"


def test_the_readme_stays_short() -> None:
    lines = len(README.splitlines())
    assert lines <= README_MAX_LINES, f"the README has {lines} lines; move detail to docs/ (at most {README_MAX_LINES})"


WORDS_TODAY = 25_300
"""Where issue 52 left the count: the docs may shrink towards WORDS_MAX, never grow past this."""


def words_in_the_docs() -> tuple[int, str]:
    counted = [README_PATH, REPO / "CHANGELOG.md", *sorted(DOCS.glob("*.md"))]
    words = {p.name: len(p.read_text(encoding="utf-8").split()) for p in counted}
    largest = ", ".join(f"{name} {n:,}" for name, n in sorted(words.items(), key=lambda kv: -kv[1])[:3])
    return sum(words.values()), largest


def test_the_docs_do_not_grow() -> None:
    total, largest = words_in_the_docs()
    assert total <= WORDS_TODAY, (
        f"README, CHANGELOG and docs/ hold {total:,} words (at most {WORDS_TODAY:,}): {largest}"
    )


def test_the_docs_stay_within_their_word_budget() -> None:
    total, largest = words_in_the_docs()
    assert total <= WORDS_MAX, f"README, CHANGELOG and docs/ hold {total:,} words (at most {WORDS_MAX:,}): {largest}"


@pytest.mark.parametrize("page", sorted(DOCS.glob("*.md")), ids=lambda p: p.name)
def test_no_docs_page_is_longer_than_its_budget(page: Path) -> None:
    most = LONGER_PAGES.get(page.name, PAGE_MAX_LINES)
    lines = len(page.read_text(encoding="utf-8").splitlines())
    assert lines <= most, f"docs/{page.name} has {lines} lines (at most {most}): a table row, not a page"


def test_the_figures_on_the_docs_pages_are_the_newest_results() -> None:
    """Every `<!-- bench:NAME -->` block holds what `uv run python -m bench.tables` makes from
    bench/results/, and the speed and quality pages show their figures that way."""
    from bench.tables import blocks, stale

    assert stale() == [], "run `uv run python -m bench.tables`: these pages differ from bench/results/"
    for page in ("speed.md", "quality.md", "freshness.md"):
        assert blocks((DOCS / page).read_text(encoding="utf-8")), f"docs/{page} shows no generated table"


def test_the_generator_fills_a_block_from_the_newest_run(tmp_path: Path) -> None:
    from bench import results
    from bench.tables import generate

    page = tmp_path / "docs" / "page.md"
    older = results.table(["a", "b"], [["1", "2"]])
    newer = results.table(["a", "b"], [["3", "4"]], "A note.")
    folder = tmp_path / "results"
    import datetime

    results.save("x", {"t": older}, machine="m", command="c", folder=folder, date=datetime.date(2026, 1, 1))
    made = results.save("x", {"t": newer}, machine="m", command="c", folder=folder, date=datetime.date(2026, 1, 2))
    text = "Intro.\n\n<!-- bench:t -->\nold\n<!-- /bench:t -->\n"
    assert generate(text, page, folder) == (
        "Intro.\n\n<!-- bench:t -->\n| a | b |\n|---|---|\n| 3 | 4 |\n\nA note.\n\n"
        f"Run of 2026-01-02: [{made.name}](../results/{made.name}).\n<!-- /bench:t -->\n"
    )
    again = results.save("x", {"t": older}, machine="m", command="c", folder=folder, date=datetime.date(2026, 1, 2))
    assert again.name == "x-2026-01-02-2.json" and "| 1 | 2 |" in generate(text, page, folder)


def test_the_readme_links_every_docs_page() -> None:
    listed = section(README, "Documentation")
    missing = [p.name for p in sorted(DOCS.glob("*.md")) if f"](docs/{p.name})" not in listed]
    assert not missing, f"docs pages not in the README's Documentation list: {missing}"


def prose(text: str) -> str:
    """Markdown without fenced code, HTML comments and code spans: where links are links."""
    return CODE_SPAN.sub("", COMMENT.sub("", FENCE.sub("", text)))


def anchors(text: str) -> set[str]:
    """The anchors GitHub gives the headings of a page (its slugger: lower case, only letters,
    digits, `_`, `-` and spaces kept, spaces to `-`, repeats numbered)."""
    seen: dict[str, int] = {}
    out: set[str] = set()
    for line in FENCE.sub("", text).splitlines():
        heading = re.match(r"^#{1,6} +(.*?)[ #]*$", line)
        if not heading:
            continue
        slug = re.sub(r"[^\w\- ]", "", heading.group(1).replace("`", "").lower()).replace(" ", "-")
        count = seen.get(slug, 0)
        seen[slug] = count + 1
        out.add(slug if count == 0 else f"{slug}-{count}")
    return out


def links() -> list[tuple[Path, str]]:
    return [(page, target) for page in pages() for target in LINK.findall(prose(page.read_text(encoding="utf-8")))]


@pytest.mark.parametrize(("page", "target"), links(), ids=lambda v: v.name if isinstance(v, Path) else str(v))
def test_every_relative_link_leads_to_a_file_and_heading_that_exist(page: Path, target: str) -> None:
    if re.match(r"^[a-z][a-z0-9+.-]*:", target):
        return  # https:, mailto: and the like are not checked
    path, _, anchor = target.partition("#")
    linked = (page.parent / path).resolve() if path else page
    assert linked.exists(), f"{page.relative_to(REPO)}: {target} leads to no file"
    if anchor and linked.suffix == ".md":
        assert anchor in anchors(linked.read_text(encoding="utf-8")), (
            f"{page.relative_to(REPO)}: {target}: {linked.name} has no heading with that anchor"
        )


def test_the_link_checker_sees_the_links() -> None:
    """The link test cannot pass by finding nothing: the README links every docs page."""
    from_readme = [t for p, t in links() if p == README_PATH]
    assert len(from_readme) >= len(list(DOCS.glob("*.md")))
    assert "what-is-escaped" in anchors(CONTRACTS)
    assert anchors("## `agents-context eval`: does it?\n## A\n## A\n") == {"agents-context-eval-does-it", "a", "a-1"}


def _package_sections() -> dict[str, str]:
    """docs/architecture.md's text about each package: from its `### `pkg/`` heading to the next
    heading of that level (the protocol/cli section holds both)."""
    text = (DOCS / "architecture.md").read_text(encoding="utf-8")
    parts = re.split(r"^### ", text, flags=re.MULTILINE)
    sections: dict[str, str] = {}
    for part in parts[1:]:
        for package in re.findall(r"`(\w+)/`", part.split("\n", 1)[0]):
            sections[package] = part
    return sections


@pytest.mark.parametrize(
    "package", ["corpus", "writes", "clients", "hook", "shared", "retrieval", "live", "protocol", "cli"]
)
def test_the_architecture_map_lists_every_module_of_a_package_and_no_other(package: str) -> None:
    """docs/architecture.md is the map: each package's section names every module the package
    has (retrieval's under their stage), and every module it names exists there."""
    section = _package_sections()[package]
    own = f"`{package}/`:\n"
    if own in section:  # a section of two packages: each has its table after its own name
        section = section.split(own, 1)[1].lstrip("\n").split("\n\n", 1)[0]
    table = "\n".join(line for line in section.splitlines() if line.startswith("|"))
    modules = {p.name for p in (REPO / package).rglob("*.py") if p.name != "__init__.py"}
    named = set(re.findall(r"`(\w+\.py)`", table)) - {"server.py"}
    assert modules - named == set(), f"modules of {package}/ not on the map"
    assert named - modules == set(), f"the map names modules {package}/ does not have"
