"""Links between pages: a link's words count for the page it points to in `search_docs`' page bonus,
found where the link points however the tree names its pages, and gone with the link."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from corpus.catalog import load
from corpus.identity import split_display
from corpus.roots import make_roots
from retrieval.chunks.links import Pages, link_units, target
from retrieval.engine.library import Library, index_corpus
from retrieval.engine.ranking import DEFAULT
from retrieval.search.links import hrefs
from retrieval.search.policy import served
from retrieval.search.request import WINDOWS
from retrieval.search.retriever import RetrievalRequest

QUERY = "keep old links working after pages move"


def files() -> dict[str, str]:
    """The redirects page says what it does in its own words; a guide about writing links uses the
    query's words more often. Other pages link to the redirects page with the query's words."""
    unrelated = {f"misc/page{i}.md": f"# Page {i}\n\nNothing about it, topic {i}.\n" for i in range(20)}
    return {
        "reference/redirects.md": "# Redirects\n\nWhen pages move, map each old address to its new one.\n",
        "guides/writing-links.md": "# Writing links\n\nA link should say where it leads, in words of its own.\n",
        "guides/deploy.md": "# Deploy\n\nBefore a release, [keep old links working](../reference/redirects.md).\n",
        "guides/moving.md": "# Moving content\n\nSee [keeping old links working](/docs/reference/redirects#rules).\n",
        **unrelated,
    }


def ranked_pages(library: Library, query: str = QUERY) -> list[str]:
    found = served(library, WINDOWS).search(RetrievalRequest(query, k=10)).docs
    return list(dict.fromkeys(split_display(d.unit.path)[1] for d in found))


def redirects_first(library: Library) -> bool:
    """Whether the redirects page ranks above the guide that uses the query's words itself."""
    pages = ranked_pages(library)
    return pages.index("reference/redirects.md") < pages.index("guides/writing-links.md")


def test_a_page_linked_to_with_the_querys_words_rises_over_one_that_uses_them_itself(
    make_tree: Callable[..., Path],
) -> None:
    corpus = load(make_roots([], [make_tree(files())]))
    assert not redirects_first(index_corpus(corpus, Library(DEFAULT.but(link_weight=0.0, score_floor=0.0))))
    assert redirects_first(index_corpus(corpus, Library(DEFAULT.but(score_floor=0.0))))


def test_the_links_share_is_explained_with_the_page_bonus_and_adds_up(make_tree: Callable[..., Path]) -> None:
    library = index_corpus(load(make_roots([], [make_tree(files())])), Library(DEFAULT.but(score_floor=0.0)))
    found = served(library, WINDOWS).search(RetrievalRequest(QUERY, k=5)).docs
    [redirects] = [d for d in found if d.unit.path.endswith("reference/redirects.md")]
    # Its own page field holds none of "keep", "old", "link", "work": their shares come from the links.
    assert {"keep", "old", "link", "work"} <= {term for term, _ in redirects.page}
    for doc in found:
        bm25f = sum(s for _, s, _ in doc.matched or ())
        bonuses = sum(s for _, s in doc.proximity) + sum(s for _, s in doc.page)
        assert bm25f + bonuses == pytest.approx(doc.score, rel=1e-9)


def test_a_link_removed_takes_its_words_from_the_page(make_tree: Callable[..., Path]) -> None:
    tree = files()
    root = make_tree(tree)
    corpus = load(make_roots([], [root]))
    library = index_corpus(corpus, Library(DEFAULT.but(score_floor=0.0)))
    assert redirects_first(library)
    for name in ("guides/deploy.md", "guides/moving.md"):
        (root / name).write_text(tree[name].split("[")[0] + "\n", encoding="utf-8")
    changed = [
        f for f in load(make_roots([], [root])).files.values() if f.rel in ("guides/deploy.md", "guides/moving.md")
    ]
    library.apply({f.path: library.prepare_file(f)[1] for f in changed})
    assert library.links.n_docs == 0
    assert not redirects_first(library)


def test_links_are_read_from_markdown_text_not_code_images_or_other_sites() -> None:
    text = (
        "# Page\n\n"
        "Read [the guide](guide.md#setup), ![a picture](img.png) and [a site](https://example.com/x.md).\n"
        "```\n[in a fence](fenced.md)\n```\n"
        'Also [this part](#here), [up and out](../../out.md) and [`config` options](<../ref/config.md> "title").\n'
    )
    links = link_units("docs/sub/page.md", "docs://sub/page.md", text)
    assert [(u.text, u.anchor, u.start_line) for u in links] == [
        ("the guide", "sub/guide.md", 3),
        ("`config` options", "ref/config.md", 7),
    ]
    assert link_units("docs/notes.txt", "docs://notes.txt", "[a](b.md)") == []


@pytest.mark.parametrize(
    ("source", "href", "expected"),
    [
        ("guides/a.md", "b.md", "guides/b.md"),
        ("guides/a.md", "../reference/b.mdx#part", "reference/b.mdx"),
        ("guides/a.md", "./b%20c.md?x=1", "guides/b c.md"),
        ("guides/a.md", "/docs/app/after/", "/docs/app/after"),
        ("guides/a.md", "a.md", None),  # itself
        ("a.md", "../b.md", None),  # out of the root
        ("a.md", "mailto:x@y.z", None),
        ("a.md", "//cdn.example.com/b.md", None),
        ("a.md", "#only-here", None),
    ],
)
def test_a_links_target_is_a_path_inside_its_root_or_a_site_path(source: str, href: str, expected: str | None) -> None:
    assert target(source, href) == expected


def test_a_target_names_its_page_however_the_tree_numbers_and_nests_its_pages() -> None:
    pages = Pages(
        [
            "01-app/03-api-reference/04-functions/after.md",
            "03-template-syntax/09-@attach.md",
            "src/content/docs/en/guides/routing.mdx",
            "guide/index.md",
            "guide/essentials/list.md",
            "api/list.md",
        ]
    )
    assert pages.named("/docs/app/api-reference/functions/after") == ["01-app/03-api-reference/04-functions/after.md"]
    assert pages.named("03-template-syntax/@attach") == ["03-template-syntax/09-@attach.md"]
    assert pages.named("/en/guides/routing") == ["src/content/docs/en/guides/routing.mdx"]
    assert pages.named("/guides/routing") == ["src/content/docs/en/guides/routing.mdx"]
    assert pages.named("guide") == ["guide/index.md"]
    assert pages.named("guide/essentials/list.md") == ["guide/essentials/list.md"]
    assert pages.named("essentials/list.md") == []  # a path inside the root names its page exactly
    assert pages.named("/routing") == []  # one folder names no deeper page
    assert sorted(pages.named("/list")) == []
    assert pages.named("/api/list") == ["api/list.md"]


def test_a_hits_links_are_found_as_the_index_finds_them() -> None:
    """One link finder: the words and href of each inline link outside fences, no image."""
    text = "See [the rule](rules.md#a) and ![logo](logo.png).\n```\n[code](x.md)\n```\n[b](b.md 'title')\n"
    assert hrefs(text) == (("the rule", "rules.md#a"), ("b", "b.md"))
    assert [u.anchor for u in link_units(".AGENTS/x.md", "agents://x.md", text)] == ["rules.md", "b.md"]
