"""Answering from the live index: one generation per search, hits checked against the disk, reads fresh from disk."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from corpus.errors import NotInCorpus
from corpus.roots import RootKind, make_roots
from live import texts
from live.answers import now, read, search
from live.index import LiveIndex
from retrieval.search.request import WINDOWS, Answer, RootCondition, SearchRequest
from tests.conftest import DEPLOY, SECURITY

TREE = {
    "overview.md": "# Overview\n\nPolicy tests.\n",
    "security.md": SECURITY,
    "services/deploy.md": DEPLOY,
    "services/api.md": "# API\n\n## Errors\n\nReturn problem+json errors.\n",
}


@pytest.fixture
def agents(make_tree: Callable[..., Path]) -> Path:
    return make_tree(TREE)


@pytest.fixture
def live(agents: Path) -> LiveIndex:
    return LiveIndex(make_roots([agents]), settle_s=0)


def ask(live: LiveIndex, query: str, k: int = 5) -> Answer:
    return search(live, SearchRequest(query=query, k=k))


def hits(answer: Answer) -> list[str]:
    return [d.unit.id for d in answer.docs]


def test_an_answer_carries_the_generation_it_was_found_in(live: LiveIndex) -> None:
    answer = ask(live, "token")
    assert answer.method == "bm25" and hits(answer) == [".AGENTS/security.md:5"]
    assert answer.freshness is not None
    assert answer.freshness.generation == live.generation
    assert answer.freshness.fresh_as_of == live.fresh_since(live.roots)
    assert answer.freshness.last is None and answer.freshness.indexing == ()


def test_an_answer_after_an_update_carries_the_new_generation_and_its_change(live: LiveIndex, agents: Path) -> None:
    (agents / "services" / "deploy.md").write_text("# Deploy\n\n## Rollback\n\nRoll back with the walrus lever.\n")
    change = live.sweep(live.roots[0])
    answer = ask(live, "walrus")
    assert hits(answer) == [".AGENTS/services/deploy.md:3"]
    assert answer.freshness is not None
    assert answer.freshness.generation == live.generation == 2
    assert answer.freshness.last == change


def test_a_file_edited_after_indexing_is_never_served_stale(live: LiveIndex, agents: Path) -> None:
    generation = live.generation
    path = agents / "security.md"
    path.write_text(path.read_text().replace("token monthly", "credential monthly"))  # no sweep
    answer = ask(live, "token")
    assert hits(answer) == []  # the old hit was re-checked, and the search run again
    assert answer.freshness is not None and answer.freshness.generation == live.generation > generation
    assert hits(ask(live, "credential")) == [".AGENTS/security.md:5"]


def test_a_hit_from_an_edited_file_shows_the_new_text(live: LiveIndex, agents: Path) -> None:
    path = agents / "security.md"
    path.write_text(path.read_text().replace("token monthly", "token weekly"))  # no sweep
    answer = ask(live, "token")
    assert hits(answer) == [".AGENTS/security.md:5"]
    assert "token weekly" in answer.docs[0].unit.text and "monthly" not in answer.docs[0].unit.text


def test_a_deleted_files_hit_is_not_served(live: LiveIndex, agents: Path) -> None:
    assert hits(ask(live, "zebra")) == [".AGENTS/services/deploy.md:3"]
    (agents / "services" / "deploy.md").unlink()  # no sweep
    answer = ask(live, "zebra")
    assert hits(answer) == []
    assert ".AGENTS/services/deploy.md" not in live.corpus.files


def test_a_deleted_files_hit_gives_way_to_the_hits_that_remain(live: LiveIndex, agents: Path) -> None:
    answer = search(live, SearchRequest(query="setup", kind=WINDOWS, k=5))
    assert [d.unit.path for d in answer.docs] == [".AGENTS/security.md"]
    (agents / "api-setup.md").write_text("# API setup\n\nsetup setup\n")
    live.sweep(live.roots[0])
    (agents / "security.md").unlink()
    answer = search(live, SearchRequest(query="setup", kind=WINDOWS, k=5))
    assert [d.unit.path for d in answer.docs] == [".AGENTS/api-setup.md"]


def test_read_gives_a_section_by_its_anchor(live: LiveIndex) -> None:
    excerpt = read(live, "security.md#secrets")
    assert excerpt.text == "## Secrets\n\nNever print the .env file. Rotate the watch filter token monthly."
    assert (excerpt.start_line, excerpt.end_line) == (5, 7)
    assert excerpt.file.path == ".AGENTS/security.md"


def test_read_gives_a_line_range(live: LiveIndex) -> None:
    excerpt = read(live, "security.md#L1-L3")
    assert excerpt.text == "# Security\n\nThe security policy."
    assert (excerpt.start_line, excerpt.end_line) == (1, 3)


def test_read_takes_the_file_from_disk_now_not_from_the_index(live: LiveIndex, agents: Path) -> None:
    path = agents / "security.md"
    path.write_text(path.read_text().replace("token monthly", "token hourly"))  # no sweep
    assert read(live, "security.md#secrets").text.endswith("Rotate the watch filter token hourly.")
    assert "token hourly" in read(live, ".AGENTS/security.md").text


def test_reading_an_unknown_name_suggests_the_closest_known_path(live: LiveIndex) -> None:
    with pytest.raises(NotInCorpus, match=r"did you mean \.AGENTS/security\.md\?"):
        read(live, "securty.md")


def test_reading_a_file_deleted_since_indexing_is_refused(live: LiveIndex, agents: Path) -> None:
    (agents / "services" / "api.md").unlink()  # no sweep
    with pytest.raises(NotInCorpus, match="no file named"):
        read(live, "services/api.md")


def test_now_says_how_current_the_index_is(live: LiveIndex, agents: Path) -> None:
    fresh = now(live, live.roots)
    assert fresh.generation == live.generation and fresh.last is None
    assert fresh.fresh_as_of == live.fresh_since(live.roots)
    (agents / "new.md").write_text("# New\n")
    change = live.sweep(live.roots[0])
    fresh = now(live, live.roots)
    assert fresh.generation == live.generation == 2 and fresh.last == change


def test_hits_whose_file_cannot_be_updated_in_time_are_answered_and_marked_changing(
    live: LiveIndex, agents: Path
) -> None:
    """The file behind a hit changed, and its root's update is held up (the watcher's update,
    under churn): the search answers after its budget from the last complete generation, with the
    root marked changing, instead of waiting; once an update catches up the mark goes."""
    (agents / "services" / "deploy.md").write_text(DEPLOY + "\nThe zebra switch moved.\n")
    with live.syncs[".AGENTS"].lock:
        answer = ask(live, "zebra")
    assert hits(answer) == [".AGENTS/services/deploy.md:3"]
    assert answer.freshness is not None and answer.freshness.indexing == (RootCondition(".AGENTS", changing=True),)
    live.sweep(live.roots[0])
    answer = ask(live, "zebra")
    assert answer.freshness is not None and answer.freshness.indexing == ()
    assert "moved" in live.corpus.files[".AGENTS/services/deploy.md"].text


@pytest.fixture
def with_docs(agents: Path, make_tree: Callable[..., Path]) -> tuple[LiveIndex, Path]:
    docs = make_tree(
        {
            "guide.md": "# Guide\n\n## Walrus\n\nThe walrus lever opens the gate.\n",
            "other.md": "# Other\n\nNothing about that animal.\n",
        },
        name="docs",
    )
    return LiveIndex(make_roots([agents], [docs]), settle_s=0), docs


def ask_docs(live: LiveIndex, query: str) -> Answer:
    return search(live, SearchRequest(query=query, kind=WINDOWS, k=5))


def test_the_index_holds_no_docs_text_and_answers_hold_the_lines_read_from_the_file(
    with_docs: tuple[LiveIndex, Path],
) -> None:
    live, _ = with_docs
    guide = live.corpus.files["docs/guide.md"]
    assert not guide.held and guide.text == ""
    assert all(f.held and f.text for f in live.corpus.files.values() if f.root.kind is RootKind.AGENTS)
    with live.view() as view:
        assert all(u.source is guide for u in view.library.windows.payloads("docs/guide.md"))
    answer = ask_docs(live, "walrus lever")
    top = answer.docs[0].unit
    assert top.path == "docs/guide.md" and isinstance(top.source, str)
    assert top.text == "# Guide\n\n## Walrus\n\nThe walrus lever opens the gate."


def test_a_docs_file_edited_since_it_was_indexed_is_read_again_before_it_is_shown(
    with_docs: tuple[LiveIndex, Path],
) -> None:
    live, docs = with_docs
    generation = live.generation
    (docs / "guide.md").write_text("# Guide\n\n## Walrus\n\nThe walrus lever now closes the gate.\n")
    answer = ask_docs(live, "walrus lever")  # no sweep, no watcher: the answer finds out itself
    assert answer.docs[0].unit.text.endswith("The walrus lever now closes the gate.")
    assert live.generation > generation and texts.content(live.corpus.files["docs/guide.md"]).endswith(
        "closes the gate.\n"
    )


def test_a_docs_file_deleted_since_it_was_indexed_is_left_out_of_the_answer(
    with_docs: tuple[LiveIndex, Path],
) -> None:
    live, docs = with_docs
    (docs / "guide.md").unlink()
    answer = ask_docs(live, "walrus lever")
    assert [d.unit.path for d in answer.docs] == []
    assert "docs/guide.md" not in live.corpus.files
