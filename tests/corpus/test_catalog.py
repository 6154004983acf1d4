"""The corpus snapshot: what `load` serves and skips, pins, changes, and fresh reads by URI."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from corpus.catalog import Change, load, read_uri
from corpus.errors import Missing, NotHeld, NotInCorpus
from corpus.read import Skipped
from corpus.roots import RootKind, make_roots
from corpus.rules import PinSet
from corpus.scan import SECRET

ALWAYS = "---\ntitle: Style rule\nalwaysApply: true\n---\n# Style\n\nUse tabs.\n"


@pytest.fixture
def agents(make_tree: Callable[..., Path]) -> Path:
    return make_tree(
        {
            "overview.md": "# Overview\n\nWhat this is.\n",
            "conventions.md": "# Conventions\n\nNames.\n",
            "security.md": "# Security\n\nNever print secrets.\n",
            "services/api.md": "# API\n\nErrors are problem+json.\n",
            ".env": "SECRET=1\n",
            "logo.md": b"\x89PNG\x00\x01",
        }
    )


@pytest.fixture
def docs(make_tree: Callable[..., Path]) -> Path:
    return make_tree({"guide.md": "# Guide\n\nRead me.\n", "overview.md": "# Docs overview\n"}, name="docs")


def test_load_serves_every_root_by_display_path_in_walk_order(agents: Path, docs: Path) -> None:
    corpus = load(make_roots([agents], [docs]))
    assert list(corpus.files) == [
        ".AGENTS/conventions.md",
        ".AGENTS/overview.md",
        ".AGENTS/security.md",
        ".AGENTS/services/api.md",
        "docs/guide.md",
        "docs/overview.md",
    ]
    api = corpus.files[".AGENTS/services/api.md"]
    assert (api.rel, api.uri, api.text) == (
        "services/api.md",
        "agents://services/api.md",
        "# API\n\nErrors are problem+json.\n",
    )
    guide = corpus.files["docs/guide.md"]
    assert (guide.uri, guide.text, guide.root.kind) == (
        "agents-docs://docs/guide.md",
        "# Guide\n\nRead me.\n",
        RootKind.DOCS,
    )


def test_load_lists_skipped_files_with_their_reasons(agents: Path, docs: Path) -> None:
    corpus = load(make_roots([agents], [docs]))
    reasons = {s.rel: s.reason for s in corpus.skipped}
    assert reasons == {".env": SECRET, "logo.md": "binary (contains NUL bytes)"}
    assert ".AGENTS/.env" not in corpus.files
    assert ".AGENTS/logo.md" not in corpus.files


def test_a_file_knows_its_size_in_bytes_its_title_and_its_content_digest(make_tree: Callable[..., Path]) -> None:
    root = make_tree(
        {
            "a.md": "---\ntitle: Café rules\n---\nbody\n",
            "b.md": "---\ntitle: Café rules\n---\nbody\n",
            "c.md": "---\ntitle: Café rules\n---\nbody!\n",
        }
    )
    files = load(make_roots([root])).files
    a, b, c = files[".AGENTS/a.md"], files[".AGENTS/b.md"], files[".AGENTS/c.md"]
    assert a.size == len(a.text.encode("utf-8")) == len(a.text) + 1  # the é is two bytes
    assert a.title == "Café rules"
    assert a.digest == b.digest != c.digest


def test_overview_and_conventions_are_pinned_by_default_and_searched_like_the_others(agents: Path) -> None:
    files = load(make_roots([agents])).files
    pinned = {path for path, f in files.items() if f.pinned}
    assert pinned == {".AGENTS/overview.md", ".AGENTS/conventions.md"}
    assert all(f.searchable for f in files.values())


def test_default_pins_match_any_case_but_only_at_the_top_of_the_root(make_tree: Callable[..., Path]) -> None:
    root = make_tree({"Overview.md": "# O\n", "services/conventions.md": "# C\n"})
    files = load(make_roots([root])).files
    assert files[".AGENTS/Overview.md"].pinned
    assert not files[".AGENTS/services/conventions.md"].pinned
    assert files[".AGENTS/services/conventions.md"].searchable


def test_always_apply_front_matter_pins_a_file(make_tree: Callable[..., Path]) -> None:
    root = make_tree({"style.md": ALWAYS, "other.md": ALWAYS.replace("true", "false")})
    files = load(make_roots([root])).files
    assert files[".AGENTS/style.md"].pinned
    assert files[".AGENTS/style.md"].searchable
    assert not files[".AGENTS/other.md"].pinned
    assert files[".AGENTS/other.md"].searchable


def test_docs_files_are_never_pinned_nor_searched_even_by_pinned_names(
    agents: Path, make_tree: Callable[..., Path]
) -> None:
    docs = make_tree({"overview.md": "# Docs\n", "style.md": ALWAYS}, name="docs")
    files = load(make_roots([agents], [docs])).files
    for path in ("docs/overview.md", "docs/style.md"):
        assert not files[path].pinned
        assert not files[path].searchable


def test_explicit_pins_replace_the_defaults(agents: Path) -> None:
    corpus = load(make_roots([agents]), PinSet(["security.md", "services/api.md"]))
    pinned = {path for path, f in corpus.files.items() if f.pinned}
    assert pinned == {".AGENTS/security.md", ".AGENTS/services/api.md"}
    assert "security.md" in corpus.pins_of(corpus.roots[0])
    assert "overview.md" not in corpus.pins_of(corpus.roots[0])


def test_an_empty_pin_pins_nothing_but_always_apply_still_does(make_tree: Callable[..., Path]) -> None:
    root = make_tree({"overview.md": "# O\n", "style.md": ALWAYS})
    files = load(make_roots([root]), PinSet([""])).files
    assert not files[".AGENTS/overview.md"].pinned
    assert files[".AGENTS/style.md"].pinned


def test_the_conventional_root_pins_agents_md_unless_pins_are_given(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    (project / "AGENTS.md").write_text("# Agents\n")
    (project / "CLAUDE.md").write_text("# Claude\n")
    roots = make_roots([], conventional=project)

    corpus = load(roots)
    assert list(corpus.pins_of(roots[0])) == ["agents.md", "gemini.md"]
    assert {f.rel for f in corpus.files.values() if f.pinned} == {"AGENTS.md"}

    pinned = load(roots, PinSet(["CLAUDE.md"]))
    assert list(pinned.pins_of(roots[0])) == ["claude.md"]
    assert {f.rel for f in pinned.files.values() if f.pinned} == {"CLAUDE.md"}


def test_a_change_counts_every_path_it_names() -> None:
    assert Change().count == 0
    change = Change(added=frozenset({"a.md"}), changed=frozenset({"b.md", "c.md"}), removed=frozenset({"d.md"}))
    assert change.count == 4


def test_reading_a_uri_reads_the_file_as_it_is_now(agents: Path) -> None:
    corpus = load(make_roots([agents]))
    (agents / "security.md").write_text("# Security\n\nRotate keys.\n", encoding="utf-8")
    fresh = read_uri(corpus, "agents://security.md")
    assert fresh.text == "# Security\n\nRotate keys.\n"
    assert fresh.path == ".AGENTS/security.md"
    assert fresh.digest != corpus.files[".AGENTS/security.md"].digest


def test_reading_a_uri_serves_a_file_added_after_load_with_its_pin(agents: Path) -> None:
    corpus = load(make_roots([agents]))
    (agents / "style.md").write_text(ALWAYS, encoding="utf-8")
    added = read_uri(corpus, "agents://style.md")
    assert added.text == ALWAYS
    assert added.pinned
    assert read_uri(corpus, "agents://overview.md").pinned
    assert not read_uri(corpus, "agents://security.md").pinned


def test_reading_a_deleted_file_raises_missing(agents: Path) -> None:
    corpus = load(make_roots([agents]))
    (agents / "security.md").unlink()
    with pytest.raises(Missing) as caught:
        read_uri(corpus, "agents://security.md")
    assert str(caught.value) == "no file at agents://security.md"
    assert isinstance(caught.value, NotInCorpus)


def test_reading_a_secret_raises_skipped_with_the_reason(agents: Path) -> None:
    corpus = load(make_roots([agents]))
    with pytest.raises(Skipped) as caught:
        read_uri(corpus, "agents://.env")
    assert SECRET in caught.value.reason
    assert "agents://.env" in caught.value.reason


def test_reading_a_file_that_became_binary_raises_skipped(agents: Path) -> None:
    corpus = load(make_roots([agents]))
    (agents / "security.md").write_bytes(b"\x00\x01\x02")
    with pytest.raises(Skipped, match="binary"):
        read_uri(corpus, "agents://security.md")


def test_a_file_without_its_text_does_not_read_the_disk_for_it(make_tree: Callable[..., Path]) -> None:
    """`content()` of a file the index does not hold the text of refuses: reading it is the live
    index's (`live.texts`), so nothing reads the disk without knowing it."""
    docs = make_tree({"guide.md": "# Guide\n\nStep one.\r\nStep two.\n"}, name="docs")
    f = load(make_roots([], [docs])).files["docs/guide.md"]
    kept = f.without_text()
    assert f.held and f.content() == f.text
    assert not kept.held and kept.text == "" and kept.digest == f.digest
    with pytest.raises(NotHeld, match=r"docs/guide\.md: the index does not hold this file's text"):
        kept.content()


def test_the_files_by_display_path_are_each_roots_own_map(make_tree: Callable[..., Path]) -> None:
    """One map: a file put in a root's map (as the live index does) is the corpus's by display
    path at once, and gone from both when removed there."""
    agents = make_tree({"a.md": "# A\n"})
    corpus = load(make_roots([agents]))
    files = corpus.files
    (root,) = corpus.roots
    mine = files.of(root.label)
    assert list(files) == [".AGENTS/a.md"] and files[".AGENTS/a.md"] is mine["a.md"]
    mine["b.md"] = mine["a.md"]._replace(rel="b.md", path=".AGENTS/b.md")
    assert ".AGENTS/b.md" in files and len(files) == 2
    assert [p for p, _ in files.items()] == [".AGENTS/a.md", ".AGENTS/b.md"]
    del mine["a.md"]
    assert ".AGENTS/a.md" not in files and files.get(".AGENTS/a.md") is None
    assert [f.rel for f in files.values()] == ["b.md"] and "nolabel" not in files
