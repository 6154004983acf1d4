"""Display paths and URIs: the table in docs/contracts.md, round trips, and refusals."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from corpus.catalog import load, read_uri
from corpus.errors import NotInCorpus
from corpus.identity import display_path, file_uri, parse_file_uri
from corpus.read import Skipped
from corpus.roots import Root, make_roots


@pytest.fixture
def roots(tmp_path: Path) -> list[Root]:
    for d in ("proj/.AGENTS", "proj/docs", "other/docs"):
        (tmp_path / d).mkdir(parents=True)
    return make_roots([tmp_path / "proj/.AGENTS"], [tmp_path / "proj/docs", tmp_path / "other/docs"])


@pytest.mark.parametrize(
    ("root_index", "rel", "shown", "uri"),
    [
        (0, "security.md", ".AGENTS/security.md", "agents://security.md"),
        (0, "services/api.md", ".AGENTS/services/api.md", "agents://services/api.md"),
        (0, "C#.md", ".AGENTS/C#.md", "agents://C%23.md"),
        (0, "with space.md", ".AGENTS/with space.md", "agents://with%20space.md"),
        (0, "!.md", ".AGENTS/!.md", "agents://%21.md"),
        (0, "100%.md", ".AGENTS/100%.md", "agents://100%25.md"),
        (0, "q?.md", ".AGENTS/q?.md", "agents://q%3F.md"),
        (0, "ünï.md", ".AGENTS/ünï.md", "agents://%C3%BCn%C3%AF.md"),
        (1, "guide/intro.md", "proj/guide/intro.md", "agents-docs://proj/guide/intro.md"),
        (2, "a b/c#d.md", "other/a b/c#d.md", "agents-docs://other/a%20b/c%23d.md"),
    ],
)
def test_path_and_uri_table_round_trips(roots: list[Root], root_index: int, rel: str, shown: str, uri: str) -> None:
    root = roots[root_index]
    assert display_path(root, rel) == shown
    assert file_uri(root, rel) == uri
    assert parse_file_uri(uri, roots) == (root, rel)


def test_a_fragment_is_not_part_of_the_path(roots: list[Root]) -> None:
    assert parse_file_uri("agents://security.md#secrets", roots) == (roots[0], "security.md")
    assert parse_file_uri("agents://C%23.md", roots) == (roots[0], "C#.md")


@pytest.mark.parametrize(
    ("uri", "why"),
    [
        ("agents://../etc/passwd", "'..'"),
        ("agents://a/../../x.md", "'..'"),
        ("agents://%2e%2e/x.md", "'..'"),
        ("agents://./x.md", "'.'"),
        ("agents://a//b.md", "empty"),
        ("agents://", "empty"),
        ("agents://..%2Fetc%2Fpasswd", "encoded separator"),
        ("agents://..%5Cwindows", "encoded separator"),
        ("agents://x%00.md", "NUL"),
        ("agents://%ff.md", "not UTF-8"),
        ("file:///etc/passwd", "unknown URI scheme"),
        ("agents-docs://nope/x.md", "no docs root labelled 'nope'"),
        ("security.md", "not a corpus URI"),
    ],
)
def test_malformed_or_escaping_uris_are_refused(roots: list[Root], uri: str, why: str) -> None:
    with pytest.raises(NotInCorpus, match=why):
        parse_file_uri(uri, roots)


def test_reading_by_uri_serves_files_and_refuses_the_rest(make_tree: Callable[..., Path], tmp_path: Path) -> None:
    root = make_tree(
        {
            "C#.md": "# sharp\n",
            ".env": "SECRET=1\n",
            "node_modules/x.md": "ignored\n",
            "bin.md": b"\x00\x01",
        }
    )
    (tmp_path / "outside.md").write_text("outside\n")
    corpus = load(make_roots([root]))
    assert read_uri(corpus, "agents://C%23.md").text == "# sharp\n"
    with pytest.raises(Skipped, match="looks like a secret"):
        read_uri(corpus, "agents://.env")
    with pytest.raises(Skipped, match="ignored folder"):
        read_uri(corpus, "agents://node_modules/x.md")
    with pytest.raises(Skipped, match="binary"):
        read_uri(corpus, "agents://bin.md")
    with pytest.raises(NotInCorpus, match="no file at"):
        read_uri(corpus, "agents://missing.md")
    with pytest.raises(NotInCorpus):
        read_uri(corpus, "agents://../outside.md")
