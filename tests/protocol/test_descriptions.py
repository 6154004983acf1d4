"""What each tool tells a model before its first call, built from what the server serves: the
folder as it is named on disk, the pinned files in pin order (160 characters of names at most, the
rest counted), each docs root with its size or that it is still being indexed, the pinned budget.
The same words through a real client are tests/protocol/test_words.py."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import pytest

from corpus.catalog import Corpus, load
from corpus.roots import make_roots
from corpus.rules import PinSet
from protocol.descriptions import NAMES_CHARS, describe
from tests.conftest import write_tree

RULES = "# Rules\n\nAlways run the linters.\n"
SECURITY = "# Security\n\n## Secrets\n\nNever print tokens.\n"
DEPLOY = "# Deploy\n\n## Rollback\n\nRoll back with the switch.\n"


@pytest.fixture
def agents(make_tree: Callable[..., Path]) -> Path:
    """A project's folder as it is on disk: `.agents`, lower case."""
    return make_tree({"rules.md": RULES, "security.md": SECURITY, "deploy.md": DEPLOY}, name=".agents")


def corpus_of(agents: list[Path], docs: list[Path] | None = None, pins: list[str] | None = None) -> Corpus:
    return load(make_roots(agents, docs or []), PinSet(pins) if pins is not None else None)


def pinned_list(description: str) -> str:
    """The names in `Return the pinned files (NAMES: the rules for every task)`."""
    found = re.match(r"Return the pinned files \((.*): the rules for every task\)", description)
    assert found, description
    return found.group(1)


# --- context_search: what it searches, and when to call it ------------------------------------------


def test_context_search_names_the_folder_as_on_disk_and_says_when_to_call_it(agents: Path) -> None:
    text = describe(corpus_of([agents], pins=["rules.md"])).context_search
    first, _, rest = text.partition("\n")
    assert first.startswith("Search this project's .agents/ folder for the sections that best match a query")
    assert ".AGENTS" not in text
    assert "\n\nCall it before guessing about a project rule, convention, term or design decision." in text
    assert "retry with the words the documentation would use" in rest
    assert text.endswith("The last line is the status line [agents-context method=... hits=... gen=...].")


def test_hits_of_pinned_files_are_said_to_be_marked_only_when_a_file_is_pinned(agents: Path) -> None:
    pinned = describe(corpus_of([agents], pins=["rules.md"]))
    none = describe(corpus_of([agents], pins=[]))
    assert '(pinned="true": from a pinned file)' in pinned.context_search
    assert "pinned=" not in none.context_search


# --- pinned_context: which files, and what they cost -----------------------------------------------


def test_pinned_context_names_the_pinned_files_in_pin_order(agents: Path) -> None:
    text = describe(corpus_of([agents], pins=["security.md", "rules.md"])).pinned_context
    assert pinned_list(text) == ".agents/security.md and .agents/rules.md"
    assert "Call it at the start of a task unless the server instructions hold the pinned text" in text


def test_pinned_context_says_when_nothing_was_pinned(agents: Path) -> None:
    text = describe(corpus_of([agents], pins=[])).pinned_context
    assert text.startswith("No file was pinned at start-up. Return any pinned files in full, then the searchable files")
    assert "the rules for every task" not in text


@pytest.mark.parametrize(("budget", "said"), [(32 * 1024, "at most 32 KB"), (8 * 1024, "at most 8 KB")])
def test_pinned_context_states_the_pinned_budget_in_kb(agents: Path, budget: int, said: str) -> None:
    text = describe(corpus_of([agents], pins=["rules.md"]), pinned_budget=budget).pinned_context
    assert text.endswith(f"Costs the pinned files' size ({said}).")


def test_many_pinned_files_are_named_within_160_characters_and_the_rest_counted(tmp_path: Path) -> None:
    names = [f"a-rather-long-name-for-a-pinned-rule-file-{i:02}.md" for i in range(20)]
    agents = write_tree(tmp_path / ".agents", dict.fromkeys(names, RULES))
    text = describe(corpus_of([agents], pins=names)).pinned_context
    shown, _, more = pinned_list(text).rpartition(" and ")
    assert re.fullmatch(r"\d+ more", more), more
    assert len(shown) <= NAMES_CHARS
    listed_names = shown.split(", ")
    assert listed_names == [f".agents/{n}" for n in names[: len(listed_names)]]  # the first ones, in pin order
    assert len(listed_names) + int(more.split()[0]) == len(names)


# --- search_docs: the docs roots, with their size ------------------------------------------------


GUIDE = "# Guide\n\n" + "Long reference text. " * 200
API = {"a.md": "# A\n\nalpha\n", "b.md": "# B\n\nbeta\n", "c.md": "# C\n\ngamma\n"}


@pytest.fixture
def docs(make_tree: Callable[..., Path]) -> list[Path]:
    return [make_tree({"guide.md": GUIDE}, name="handbook"), make_tree(API, name="api-reference")]


def test_search_docs_names_each_docs_root_with_its_size(agents: Path, docs: list[Path]) -> None:
    text = describe(corpus_of([agents], docs)).search_docs
    sizes = f"handbook (1 file, {len(GUIDE) / 1024:.1f} KB) and api-reference (3 files, {sum(map(len, API.values()))} bytes)"
    assert text.startswith(
        f"Search this project's .agents/ folder (pinned files included) and the documentation roots {sizes} in passages"
    )
    assert "no documentation roots" not in text


def test_a_docs_root_still_being_indexed_is_said_to_be_indexing_instead_of_its_size(
    agents: Path, docs: list[Path]
) -> None:
    text = describe(corpus_of([agents], docs), indexing={"handbook"}).search_docs
    assert "the documentation roots handbook (indexing in the background; context_status shows how far) and " in text
    assert "api-reference (3 files, " in text


def test_without_docs_roots_search_docs_sends_the_model_to_context_search(agents: Path) -> None:
    text = describe(corpus_of([agents])).search_docs
    assert "documentation roots" not in text.partition(" in passages")[0]
    assert text.endswith("This server has no documentation roots (--docs): prefer context_search.")


# --- read_context: examples in the server's own paths ----------------------------------------------


def test_read_context_gives_examples_in_the_folders_own_paths(agents: Path) -> None:
    text = describe(corpus_of([agents])).read_context
    assert "a display path from an answer (.agents/security.md)" in text
    assert "a URI (agents://security.md#secrets for one section)" in text
    assert "a path inside .agents/." in text


def test_with_two_folders_the_example_uri_carries_the_folders_label(tmp_path: Path) -> None:
    api = write_tree(tmp_path / "packages" / "api" / ".AGENTS", {"security.md": SECURITY})
    web = write_tree(tmp_path / "packages" / "web" / ".AGENTS", {"deploy.md": DEPLOY})
    text = describe(corpus_of([api, web])).read_context
    assert "(api/security.md)" in text and "(agents://api/security.md#secrets for one section)" in text
    assert "a path inside api/." in text


def test_a_folder_name_too_long_to_repeat_is_replaced_by_agents_in_the_examples(tmp_path: Path) -> None:
    name = "team-rules-" + "x" * 40
    agents = write_tree(tmp_path / name, {"security.md": SECURITY})
    descriptions = describe(corpus_of([agents]))
    assert f"this project's {name}/ folder" in descriptions.context_search  # still named as on disk
    assert name not in descriptions.read_context
    assert (
        "(.AGENTS/security.md)" in descriptions.read_context
        and "(agents://security.md#secrets" in descriptions.read_context
    )


# --- whatever the project holds ---------------------------------------------------------------------


def test_every_description_stays_under_2048_characters_however_many_long_names(tmp_path: Path) -> None:
    """Claude Code cuts a longer description; lists of names are cut to a budget, never the text."""
    long = "a-rather-long-folder-name-for-one-package-of-this-monorepo-" + "x" * 40
    pins = [f"{long}-{j}.md" for j in range(8)]
    agents = [write_tree(tmp_path / f"{long}-{i}" / ".AGENTS", dict.fromkeys(pins, RULES)) for i in range(12)]
    docs = [write_tree(tmp_path / f"{long}-docs-{i}", {"a.md": GUIDE}) for i in range(8)]
    descriptions = describe(corpus_of(agents, docs, pins=pins))
    texts = [
        descriptions.context_search,
        descriptions.search_docs,
        descriptions.context_for_path,
        descriptions.read_context,
        descriptions.pinned_context,
        descriptions.context_status,
    ]
    assert all(len(text) < 2048 for text in texts), [len(text) for text in texts]
    assert "… and 95 more: the rules for every task" in descriptions.pinned_context  # 96 pins, one cut
    assert "(1 file, 4.1 KB) and 7 more in passages" in descriptions.search_docs
    assert "-0 and 11 more) for the sections" in descriptions.context_search
