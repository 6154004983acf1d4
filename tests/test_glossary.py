"""Glossary expansion: a query naming a term also finds the sections that use its other names."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from corpus.catalog import load
from corpus.roots import make_roots
from retrieval.cache import IndexCache
from retrieval.glossary import Glossary
from retrieval.library import Library, index_corpus
from retrieval.live import LiveIndex
from retrieval.ranking import DEFAULT, Ranking
from retrieval.retriever import RetrievalRequest

ON = DEFAULT.but(glossary=True, score_floor=0.0)
OFF = DEFAULT.but(score_floor=0.0)

GLOSSARY = """# Glossary

## Tenant

A customer organisation, also called a workspace.

## Pull request (PR)

A proposed change to the main branch.
"""

AGENTS = {
    "glossary.md": GLOSSARY,
    "billing.md": "# Storage quotas\n\nEvery tenant gets 10 GB of storage, billed monthly.\n",
    "review.md": "# Pull request checks\n\nEvery pull request runs the linters before merge.\n",
    "ui.md": "# Settings page\n\nThe settings page lists the colour themes.\n",
}


def paths(library: Library, query: str, k: int = 10) -> list[str]:
    return [d.source for d in library.section_retriever.retrieve(RetrievalRequest(query, k))]


def live_paths(live: LiveIndex, query: str) -> list[str]:
    with live.view() as view:
        return paths(view.library, query)


def test_a_glossary_synonym_finds_the_section_that_uses_only_the_canonical_term(
    make_tree: Callable[..., Path],
) -> None:
    corpus = load(make_roots([make_tree(AGENTS)]))
    plain, expanded = index_corpus(corpus, Library(OFF)), index_corpus(corpus, Library(ON))

    assert paths(plain, "workspace") == [".AGENTS/glossary.md"]  # only the glossary says "workspace"
    assert paths(expanded, "workspace") == [".AGENTS/glossary.md", ".AGENTS/billing.md"]
    # the abbreviation in the heading works both ways
    assert ".AGENTS/review.md" not in paths(plain, "PR")
    assert ".AGENTS/review.md" in paths(expanded, "PR")
    assert paths(expanded, "settings page") == paths(plain, "settings page")  # no term named: unchanged


def test_the_query_s_own_word_outranks_its_synonym(make_tree: Callable[..., Path]) -> None:
    agents = make_tree(
        {
            "glossary.md": GLOSSARY,
            "a.md": "# Notes\n\nThe tenant is billed monthly.\n",
            "b.md": "# Notes\n\nThe workspace is billed monthly.\n",
        }
    )
    expanded = index_corpus(load(make_roots([agents])), Library(ON))
    found = paths(expanded, "workspace billed")
    assert found.index(".AGENTS/b.md") < found.index(".AGENTS/a.md")


def test_without_glossary_text_the_scores_are_exactly_those_without_the_feature(
    make_tree: Callable[..., Path],
) -> None:
    # Bold terms and "also called" outside a glossary are not glossary text.
    agents = make_tree(
        {
            "billing.md": "# Storage quotas\n\n**Tenant**: a customer, also called a workspace.\n\nTenants pay.\n",
            "review.md": "# Pull request (PR)\n\nEvery pull request runs the linters.\n",
            "notes/terms.md": "# Terms\n\n- Workspace: a tenant\n\n| Term | Aliases |\n|---|---|\n| PR | pull request |\n",
        },
    )
    docs = make_tree({"glossary.md": "# Glossary\n\n**Tenant** (aka workspace): a customer.\n"}, name="docs")
    corpus = load(make_roots([agents], [docs]))
    plain, expanded = index_corpus(corpus, Library(OFF)), index_corpus(corpus, Library(ON))
    assert Glossary(expanded.sections, expanded.tokenize).entries() == []  # a --docs glossary is not read
    for query in ["workspace", "tenant quotas", "PR", "pull request linters", "customer", "terms aliases", "zzz"]:
        for mine, theirs in (
            (plain.section_retriever, expanded.section_retriever),
            (plain.window_retriever, expanded.window_retriever),
        ):
            want = [(d.id, d.score) for d in mine.retrieve(RetrievalRequest(query, 20))]
            assert [(d.id, d.score) for d in theirs.retrieve(RetrievalRequest(query, 20))] == want


def test_the_glossary_follows_edits_to_glossary_md(make_tree: Callable[..., Path]) -> None:
    root = make_tree(AGENTS)
    live = LiveIndex(make_roots([root]), settle_s=0, ranking=ON)
    assert ".AGENTS/billing.md" in live_paths(live, "workspace")
    assert ".AGENTS/billing.md" not in live_paths(live, "org")

    (root / "glossary.md").write_text(GLOSSARY.replace("a workspace", "an org"), encoding="utf-8")
    live.sweep(live.roots[0])
    assert ".AGENTS/billing.md" in live_paths(live, "org")
    assert ".AGENTS/billing.md" not in live_paths(live, "workspace")

    (root / "glossary.md").unlink()
    live.sweep(live.roots[0])
    assert live_paths(live, "org") == []

    # A "Glossary" section in any .AGENTS file counts too.
    (root / "conventions" / "words.md").parent.mkdir()
    (root / "conventions" / "words.md").write_text(
        "# Words\n\nHow we talk.\n\n## Glossary\n\n- **Tenant** (aka org): a customer.\n", encoding="utf-8"
    )
    live.sweep(live.roots[0])
    assert ".AGENTS/billing.md" in live_paths(live, "org")


def test_the_glossary_survives_a_restart_from_the_index_cache(make_tree: Callable[..., Path], tmp_path: Path) -> None:
    root = make_tree(AGENTS)

    def start() -> LiveIndex:
        return LiveIndex(
            make_roots([root]), settle_s=0, ranking=ON, cache=IndexCache(tmp_path / "cache", ON.fingerprint)
        )

    start().close()
    assert list((tmp_path / "cache").glob("*.index"))
    restarted = start()  # every file restored from the cache, none re-read
    assert ".AGENTS/billing.md" in live_paths(restarted, "workspace")


def test_glossary_entries_are_read_from_the_ways_authors_write_them(make_tree: Callable[..., Path]) -> None:
    glossary = """---
title: Team glossary
---
Words we use, and what else people call them.

- **Runner** (aka worker, agent): a machine that runs CI jobs.
- **Canary:** a small first release, sometimes called a pilot.
- Blue-green — two production environments, also known as red-black.
- **SLO**: service level objective.

**Deploy freeze**
: A period with no releases, same as a change freeze.

| Term | Also called | Meaning |
|---|---|---|
| Incident | outage, sev | something is broken for users |

```text
**Not**: an entry, aka code
```

## Tenant

A customer organisation (also called a workspace or an org).

## Release trains

- **Hotfix**: a release outside the train, short for hot fix release.
"""
    agents = make_tree(
        {"Docs/GLOSSARY.md": glossary, "other.md": "# Other\n\n**Tenant**: aka customer.\n"},
    )
    library = index_corpus(load(make_roots([agents])), Library(ON))
    names = [e.names for e in Glossary(library.sections, library.tokenize).entries()]
    assert names == [
        ("Runner", "worker", "agent"),
        ("Canary", "pilot"),
        ("Blue-green", "red-black"),
        ("SLO", "service level objective"),
        ("Deploy freeze", "change freeze"),
        ("Incident", "outage", "sev"),
        ("Tenant", "workspace", "org"),
        ("Hotfix", "hot fix release"),
    ]


def test_feedback_and_glossary_together_still_find_the_synonym(make_tree: Callable[..., Path]) -> None:
    both: Ranking = ON.but(feedback=True)
    expanded = index_corpus(load(make_roots([make_tree(AGENTS)])), Library(both))
    assert ".AGENTS/billing.md" in paths(expanded, "workspace")
