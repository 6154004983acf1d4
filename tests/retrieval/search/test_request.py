"""What a search is asked (kinds, their k limits, scopes by path prefix and root) and what a relaxed answer dropped."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from corpus.catalog import Corpus, load
from corpus.roots import make_roots
from retrieval.chunks.units import Unit
from retrieval.search.request import SECTIONS, WINDOWS, Answer, Method, Scope, SearchKind
from retrieval.text.query import parse
from retrieval.text.tokenize import tokenize


def unit(path: str) -> Unit:
    return Unit(path=path, uri="agents://x.md", source="text", start_line=1, end_line=1)


def test_the_section_search_returns_3_hits_by_default_and_at_most_20() -> None:
    assert SearchKind("sections") is SECTIONS
    assert (SECTIONS.default_k, SECTIONS.max_k) == (3, 20)


def test_the_window_search_returns_5_hits_by_default_and_at_most_10() -> None:
    assert SearchKind("windows") is WINDOWS
    assert (WINDOWS.default_k, WINDOWS.max_k) == (5, 10)


@pytest.mark.parametrize(
    ("kind", "k", "expected"),
    [
        (SECTIONS, None, 3),
        (WINDOWS, None, 5),
        (SECTIONS, 0, 1),
        (WINDOWS, 0, 1),
        (SECTIONS, -4, 1),
        (SECTIONS, 7, 7),
        (WINDOWS, 7, 7),
        (SECTIONS, 20, 20),
        (SECTIONS, 21, 20),
        (WINDOWS, 11, 10),
        (WINDOWS, 10_000, 10),
    ],
)
def test_k_is_clamped_between_one_and_the_kinds_maximum(kind: SearchKind, k: int | None, expected: int) -> None:
    assert kind.clamp_k(k) == expected


def test_an_unfiltered_scope_allows_every_unit() -> None:
    scope = Scope(SECTIONS)
    assert not scope.filtered
    assert all(scope.allows(unit(p)) for p in (".AGENTS/a.md", ".AGENTS/services/api.md", "docs/guide.md"))


def test_a_scope_is_filtered_by_a_prefix_or_a_root_but_not_by_an_empty_prefix() -> None:
    assert Scope(SECTIONS, "services/").filtered
    assert Scope(WINDOWS, root="docs").filtered
    assert not Scope(SECTIONS, "").filtered
    assert not Scope(WINDOWS).filtered


def test_a_root_label_filter_allows_only_that_roots_units() -> None:
    scope = Scope(WINDOWS, root="docs")
    assert scope.allows(unit("docs/guide.md"))
    assert not scope.allows(unit(".AGENTS/guide.md"))
    assert not scope.allows(unit("docs-2/guide.md"))


@pytest.mark.parametrize(
    "prefix",
    ["services/", "services", ".AGENTS/services/", "./services/", "services\\", ".\\services\\", "services/api"],
)
def test_a_path_prefix_matches_as_a_display_path_or_as_a_path_inside_the_root(prefix: str) -> None:
    scope = Scope(SECTIONS, prefix)
    assert scope.allows(unit(".AGENTS/services/api.md"))
    assert not scope.allows(unit(".AGENTS/security.md"))
    assert not scope.allows(unit(".AGENTS/guides/services.md"))


def test_a_prefix_naming_a_root_allows_every_file_of_that_root() -> None:
    scope = Scope(WINDOWS, "docs/")
    assert scope.allows(unit("docs/guide.md"))
    assert scope.allows(unit("docs/deep/er.md"))
    assert not scope.allows(unit(".AGENTS/guide.md"))


def test_a_root_and_a_prefix_must_both_hold() -> None:
    scope = Scope(WINDOWS, "guide", root="docs")
    assert scope.allows(unit("docs/guide.md"))
    assert not scope.allows(unit(".AGENTS/guide.md"))
    assert not scope.allows(unit("docs/other.md"))


@pytest.fixture
def corpus(make_tree: Callable[..., Path]) -> Corpus:
    agents = make_tree(
        {
            "overview.md": "# Overview\n\nPinned: every task starts with it.\n",
            "security.md": "# Security\n\n## Secrets\n\nNever print the .env file.\n",
            "services/api.md": "# API\n\nReturn problem+json errors.\n",
        }
    )
    docs = make_tree({"guide/setup.md": "# Setup\n\nInstall it.\n"}, name="docs")
    return load(make_roots([agents], docs=[docs]))


def test_the_corpus_is_as_the_scope_tests_expect(corpus: Corpus) -> None:
    files = corpus.files
    assert sorted(files) == [
        ".AGENTS/overview.md",
        ".AGENTS/security.md",
        ".AGENTS/services/api.md",
        "docs/guide/setup.md",
    ]
    assert files[".AGENTS/overview.md"].pinned
    assert [p for p, f in files.items() if f.searchable] == [
        ".AGENTS/overview.md",
        ".AGENTS/security.md",
        ".AGENTS/services/api.md",
    ]


def test_a_sections_scope_refuses_docs_files_a_windows_scope_allows_them(corpus: Corpus) -> None:
    sections, windows = Scope(SECTIONS), Scope(WINDOWS)
    allowed = {p for p, f in corpus.files.items() if sections.allows_file(f)}
    assert allowed == {".AGENTS/overview.md", ".AGENTS/security.md", ".AGENTS/services/api.md"}
    assert all(windows.allows_file(f) for f in corpus.files.values())


def test_a_pinned_file_is_in_either_scope_when_the_prefix_names_it(corpus: Corpus) -> None:
    overview = corpus.files[".AGENTS/overview.md"]
    assert Scope(SECTIONS, "overview").allows_file(overview)
    assert Scope(WINDOWS, "overview").allows_file(overview)
    assert not Scope(SECTIONS, "security").allows_file(overview)


def test_file_scopes_filter_by_prefix_and_root_like_unit_scopes(corpus: Corpus) -> None:
    def allowed(scope: Scope) -> list[str]:
        return [p for p, f in corpus.files.items() if scope.allows_file(f)]

    assert allowed(Scope(WINDOWS, "./services")) == [".AGENTS/services/api.md"]
    assert allowed(Scope(WINDOWS, ".AGENTS\\services\\")) == [".AGENTS/services/api.md"]
    assert allowed(Scope(WINDOWS, "guide/")) == ["docs/guide/setup.md"]
    assert allowed(Scope(WINDOWS, root="docs")) == ["docs/guide/setup.md"]
    assert allowed(Scope(SECTIONS, root="docs")) == []
    assert allowed(Scope(WINDOWS, root=".AGENTS")) == [
        ".AGENTS/overview.md",
        ".AGENTS/security.md",
        ".AGENTS/services/api.md",
    ]


def test_a_relaxed_answer_lists_the_quoted_phrases_it_dropped() -> None:
    query = parse('"rate limits" deploy “watch filter”', tokenize)
    assert Answer(docs=[], method=Method.BM25_RELAXED, query=query).dropped == ("rate limits", "watch filter")


def test_a_one_word_quote_is_no_phrase_so_nothing_was_dropped_for_it() -> None:
    query = parse('"zebra" "rate limits"', tokenize)
    assert Answer(docs=[], method=Method.BM25_RELAXED, query=query).dropped == ("rate limits",)


@pytest.mark.parametrize("method", [m for m in Method if m is not Method.BM25_RELAXED])
def test_only_a_relaxed_answer_dropped_anything(method: Method) -> None:
    query = parse('"rate limits" deploy', tokenize)
    assert Answer(docs=[], method=method, query=query).dropped == ()


def test_a_relaxed_answer_without_its_query_dropped_nothing_it_can_name() -> None:
    assert Answer(docs=[], method=Method.BM25_RELAXED).dropped == ()
