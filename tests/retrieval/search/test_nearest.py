"""The nearest headings and files to a query that matched nothing: what they are chosen from and how they rank."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from corpus.catalog import load
from corpus.files import CorpusFile
from corpus.roots import make_roots
from retrieval.chunks.units import Unit, section_units
from retrieval.search.nearest import SHORTLIST, Nearest, candidates, nearest

SECURITY = "Intro text.\n\n# Security\n\nThe policy.\n\n## Secrets\n\nNever print.\n\n## Rate limiting\n\nSlow down.\n"


def security_units() -> list[Unit]:
    return section_units(".AGENTS/security.md", "agents://security.md", SECURITY)


@pytest.fixture
def files(make_tree: Callable[..., Path]) -> list[CorpusFile]:
    agents = make_tree({"security.md": SECURITY, "services/Deploy.md": "# Deploy\n\nShip it.\n"})
    return list(load(make_roots([agents])).files.values())


def test_candidates_are_heading_trails_then_file_paths(files: list[CorpusFile]) -> None:
    found = candidates(security_units(), files)
    assert all(isinstance(c[3], str) == c[6] for c in found)  # a file's URI is made only if it is shown
    assert [(*c[:3], c[3] if isinstance(c[3], str) else c[3].uri, *c[4:]) for c in found] == [
        ("security", "Security", ".AGENTS/security.md", "agents://security.md#security", 3, 5, True),
        ("security > secrets", "Security > Secrets", ".AGENTS/security.md", "agents://security.md#secrets", 7, 9, True),
        (
            "security > rate limiting",
            "Security > Rate limiting",
            ".AGENTS/security.md",
            "agents://security.md#rate-limiting",
            11,
            13,
            True,
        ),
        ("security.md", "security.md", ".AGENTS/security.md", "agents://security.md", None, None, False),
        (
            "services/deploy.md",
            "services/Deploy.md",
            ".AGENTS/services/Deploy.md",
            "agents://services/Deploy.md",
            None,
            None,
            False,
        ),
    ]


def test_the_intro_and_units_without_a_heading_are_never_candidates() -> None:
    window = Unit(".AGENTS/a.md", "agents://a.md", "some words", 1, 1, trail=("A",), chunk_id=0)
    intro_only = section_units(".AGENTS/b.md", "agents://b.md", "No heading at all.\n")
    assert [u.heading for u in intro_only] == ["(intro)"]
    assert candidates([window, *intro_only], []) == []


def test_a_heading_that_contains_the_query_ranks_above_an_unrelated_one() -> None:
    found = nearest("rate limits", candidates(security_units(), []))
    assert found[0] == Nearest(
        ".AGENTS/security.md",
        "agents://security.md#rate-limiting",
        "Security > Rate limiting",
        11,
        13,
        found[0].similarity,
    )
    assert found[0].similarity > found[1].similarity > 0
    assert [n.similarity for n in found] == sorted((n.similarity for n in found), reverse=True)


def test_the_query_is_matched_regardless_of_case() -> None:
    pool = candidates(security_units(), [])
    assert nearest("SECRETS", pool) == nearest("secrets", pool)
    assert nearest("SECRETS", pool)[0].heading == "Security > Secrets"


def test_a_file_path_is_a_nearest_entry_without_a_heading(files: list[CorpusFile]) -> None:
    (first, *_) = nearest("deploy.md", candidates([], files))
    assert first == Nearest(
        ".AGENTS/services/Deploy.md", "agents://services/Deploy.md", None, None, None, first.similarity
    )
    assert 0 < first.similarity <= 1


def test_at_most_limit_entries_are_returned() -> None:
    pool = candidates(security_units(), [])
    assert len(nearest("security", pool)) == 3
    assert len(nearest("security", pool, limit=2)) == 2
    assert nearest("security", pool, limit=1) == nearest("security", pool)[:1]
    assert nearest("security", pool, limit=0) == []


def test_candidates_with_nothing_in_common_with_the_query_are_left_out() -> None:
    pool = candidates(security_units(), [])
    assert nearest("qqq", pool) == []  # no letter of it occurs in any heading
    assert nearest("secrets", []) == []


def test_equal_headings_are_listed_by_path_then_line() -> None:
    text = "# Setup\n\nOne.\n\n# Setup\n\nTwo.\n"
    pool = candidates(
        [*section_units(".AGENTS/b.md", "agents://b.md", text), *section_units(".AGENTS/a.md", "agents://a.md", text)],
        [],
    )
    found = nearest("setup", pool)
    assert [(n.path, n.start_line) for n in found] == [
        (".AGENTS/a.md", 1),
        (".AGENTS/a.md", 5),
        (".AGENTS/b.md", 1),
        (".AGENTS/b.md", 5),
    ]
    assert len({n.similarity for n in found}) == 1


def test_among_thousands_of_candidates_the_right_one_is_still_found() -> None:
    filler = "".join(f"## Deploy rates {i} and their limits\n\nBody {i}.\n\n" for i in range(3000))
    units = section_units(
        ".AGENTS/big.md", "agents://big.md", filler + "## Rate limiting for the public API\n\nSlow.\n"
    )
    pool = candidates(units, [])
    assert len(pool) > 10 * SHORTLIST
    assert pool[-1][1] == "Rate limiting for the public API"  # last: not among the first SHORTLIST
    found = nearest("rate limiting", pool)
    assert found[0].heading == "Rate limiting for the public API"
    assert found[0].uri == "agents://big.md#rate-limiting-for-the-public-api"
    assert len(found) == 5
