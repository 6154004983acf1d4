"""Seed 002's policy through the tools: methods and fallbacks, budgets and paging, aliases,
filters, citations, read_context, the outline and the deadline."""

from __future__ import annotations

import itertools
import json
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from mcp import Client, MCPError

from cli.flags import build_parser
from cli.settings import Settings, open_index
from corpus.catalog import Change, Corpus, load
from corpus.roots import make_roots
from retrieval.chunks.units import Unit
from retrieval.engine.index import BM25Index
from retrieval.engine.library import Library, index_corpus
from retrieval.engine.segments import I32
from retrieval.render.hits import Page, render_context, render_docs
from retrieval.search.answer import SECTIONS, WINDOWS, Freshness, Scope
from retrieval.search.policy import Policy
from retrieval.text.tokenize import tokenize
from server import AgentsServer, create_server
from tests.helpers import make_server, split_status, text_of

pytestmark = pytest.mark.anyio

SECURITY = """# Security

The security policy.

## Secrets

Never print the .env file. Rotate the watch filter token monthly.

## Setup

First setup: install the hooks.

## Logging

Logs never hold secrets.

## Setup

Second setup: configure the filter watch list.
"""
DEPLOY = "# Deploy\n\n## Rollback\n\nRoll back with the zebra switch.\n"


@pytest.fixture
def agents(make_tree: Callable[..., Path]) -> Path:
    return make_tree(
        {
            "overview.md": "# Overview\n\nPolicy tests.\n",
            "security.md": SECURITY,
            "services/deploy.md": DEPLOY,
            "services/api.md": "# API\n\n## Errors\n\nReturn problem+json errors.\n",
        }
    )


@pytest.fixture
def server(agents: Path) -> AgentsServer:
    return make_server(agents)


async def call(client: Client, tool: str, **args: object) -> tuple[str, dict[str, str], dict[str, Any]]:
    result = await client.call_tool(tool, args)
    assert not result.is_error, text_of(result)
    body, status = split_status(text_of(result))
    return body, status, result.structured_content or {}


# --- methods and fallbacks ------------------------------------------------------------------


async def test_bm25_is_the_default_method(server: AgentsServer) -> None:
    async with Client(server) as client:
        _, status, result = await call(client, "context_search", query="zebra rollback")
    assert status["method"] == "bm25" and result["fallback_reason"] is None
    assert result["candidates"] == 1 and result["elapsed_ms"] >= 0


async def test_quoted_phrases_must_match_as_written(server: AgentsServer) -> None:
    async with Client(server) as client:
        body, status, result = await call(client, "context_search", query='"watch filter"', k=5)
    assert status["method"] == "phrase"
    assert [h["heading"] for h in result["hits"]] == ["Secrets"]  # "filter watch" in Setup does not count
    assert "Rotate the watch filter token" in body


async def test_a_phrase_that_matches_nothing_is_relaxed_and_says_which(server: AgentsServer) -> None:
    async with Client(server) as client:
        _, status, result = await call(client, "context_search", query='"filter token monthly watch"', k=5)
    assert status["method"] == "bm25-relaxed"
    assert status["dropped"] == "filter token monthly watch"
    assert "filter token monthly watch" in str(result["fallback_reason"])
    assert {h["heading"] for h in result["hits"]} >= {"Secrets", "Setup"}


async def test_a_query_that_names_a_file_returns_that_file(server: AgentsServer) -> None:
    async with Client(server) as client:
        _, status, result = await call(client, "context_search", query="services/deploy.md", k=5)
        _, by_name, named = await call(client, "context_search", query="security.md", k=2)
    assert status["method"] == "path"
    assert [(h["heading"], h["start_line"]) for h in result["hits"]] == [("Deploy", 1), ("Rollback", 3)]
    assert by_name["method"] == "path" and named["candidates"] == 5
    assert [h["heading"] for h in named["hits"]] == ["Security", "Secrets"]


async def test_nothing_matched_answers_with_the_nearest_headings_and_files(server: AgentsServer) -> None:
    async with Client(server) as client:
        body, status, result = await call(client, "context_search", query="rolback")
        docs_body, docs_status, _ = await call(client, "search_docs", query="deploymnt")
    assert status["method"] == "outline"
    assert body.startswith("no matching context for: rolback\n\nNearest headings and files")
    assert "- .AGENTS/services/deploy.md:3-5 (Deploy > Rollback) agents://services/deploy.md#rollback" in body
    assert result["nearest"][0]["heading"] == "Deploy > Rollback"
    assert "none of the query's words occur" in str(result["fallback_reason"])
    assert docs_status["method"] == "outline" and docs_body.startswith("(no results)\n\nNearest")
    assert ".AGENTS/services/deploy.md" in docs_body


async def test_a_query_of_stop_words_says_why_it_found_nothing(server: AgentsServer) -> None:
    async with Client(server) as client:
        _, status, result = await call(client, "context_search", query="the of and")
    assert status["method"] == "outline"
    assert "no searchable words" in str(result["fallback_reason"])


# --- filters, paging, budgets -------------------------------------------------------------


async def test_path_prefix_and_root_filter_before_ranking(
    server: AgentsServer, agents: Path, make_tree: Callable[..., Path]
) -> None:
    docs = make_tree({"errors.md": "# Errors\n\nerrors errors errors\n"}, name="docs")
    filtered = make_server(agents, [docs])
    async with Client(filtered) as client:
        _, _, inside = await call(client, "context_search", query="errors secrets", path_prefix="services/")
        _, _, display = await call(client, "context_search", query="errors secrets", path_prefix=".AGENTS/services/")
        _, _, only_docs = await call(client, "search_docs", query="errors", root="docs")
        bad = await client.call_tool("search_docs", {"query": "errors", "root": "nope"})
    assert [h["path"] for h in inside["hits"]] == [".AGENTS/services/api.md"]
    assert display["hits"] == inside["hits"]
    assert [h["path"] for h in only_docs["hits"]] == ["docs/errors.md"]
    assert bad.is_error and "unknown root 'nope'" in text_of(bad)


async def test_offset_pages_and_says_when_the_index_changed(server: AgentsServer, agents: Path) -> None:
    async with Client(server) as client:
        _, first, page1 = await call(client, "context_search", query="setup secrets logs", k=2)
        assert first["next_offset"] == "2"
        _, second, page2 = await call(
            client, "context_search", query="setup secrets logs", k=2, offset=2, generation=int(first["gen"])
        )
        assert [h["rank"] for h in page2["hits"]] == [3, 4]
        assert not {h["citation"] for h in page1["hits"]} & {h["citation"] for h in page2["hits"]}
        assert "gen_changed" not in second
        (agents / "new.md").write_text("# New\n\nsetup again\n")
        _, third, _ = await call(
            client, "context_search", query="setup secrets logs", k=2, offset=2, generation=int(first["gen"])
        )
        assert third["gen_changed"] == "1"


async def test_max_tokens_is_clamped_and_drops_whole_hits_first(agents: Path) -> None:
    for i in range(6):
        (agents / f"big{i}.md").write_text(f"# Big {i}\n\n" + "bulky words here\n" * 120)
    server = make_server(agents)
    async with Client(server) as client:
        result = await client.call_tool("context_search", {"query": "bulky", "k": 6, "max_tokens": 5})
        text = text_of(result)
        _, status = split_status(text)
    assert len(text) <= 200 * 4  # clamped up to 200 tokens
    assert status["truncated"] == "1" and int(status["omitted"]) >= 5


async def test_a_single_hit_cut_to_the_budget_says_truncated(agents: Path) -> None:
    (agents / "big.md").write_text("# Big\n\n" + "".join(f"bulky line {i}\n" for i in range(400)))
    server = make_server(agents)
    async with Client(server) as client:
        result = await client.call_tool("context_search", {"query": "bulky", "k": 1, "max_tokens": 200})
    body, status = split_status(text_of(result))
    assert "[... cut at line " in body and status["hits"] == "1"
    assert status["truncated"] == "1" and "omitted" not in status
    assert result.structured_content is not None and result.structured_content["truncated"] is True


async def test_paging_follows_next_offset_to_the_end_and_never_loops(make_tree: Callable[..., Path]) -> None:
    page = "# Shutdown\n\nClose stdin, then send SIGTERM.\n"
    agents = make_tree({"v1/stdio.md": page, "v2/stdio.md": page, "other.md": "# Other\n\nSIGTERM once.\n"})
    server = make_server(agents)
    seen: list[str] = []
    offsets: list[int] = []
    async with Client(server) as client:
        offset: int | None = 0
        while offset is not None:
            assert offset not in offsets and len(offsets) < 10
            offsets.append(offset)
            body, status, result = await call(client, "context_search", query="sigterm", k=1, offset=offset)
            assert result["hits"], body  # every page a next_offset leads to has a hit
            seen += [h["citation"] for h in result["hits"]]
            offset = result["next_offset"]
            assert ("next_offset" in status) == (offset is not None)
        body, status, result = await call(client, "context_search", query="sigterm", k=1, offset=5)
        docs_body, _, _ = await call(client, "search_docs", query="sigterm", k=1, offset=9)
    # The two copies are one hit; with the other file, two pages in all.
    assert sorted(seen) == [".AGENTS/other.md:1-3 (Other)", ".AGENTS/v1/stdio.md:1-3 (Shutdown)"]
    assert body == "no more matching context for: sigterm (offset 5 is past the end: 2 hits in all)"
    assert status["method"] == "bm25" and status["hits"] == "0" and "next_offset" not in status
    assert result["fallback_reason"] == "offset 5 is past the end: 2 hits in all; start again from offset 0"
    assert docs_body.startswith("(no more results: offset 9 is past the end: ")


async def test_the_score_floor_flag_applies_to_the_tools(make_tree: Callable[..., Path]) -> None:
    agents = make_tree(
        {
            "a.md": "# Rollback\n\nRollback the deploy with the rollback switch; rollback is instant.\n",
            "b.md": "# Notes\n\n" + "Unrelated words about many other things. " * 20 + "A rollback once.\n",
        }
    )

    async def hits(*flags: str) -> tuple[list[str], list[str]]:
        args = build_parser().parse_args(["serve", "--root", str(agents), "--no-cache", *flags])
        settings = Settings.from_args(args)
        async with Client(create_server(open_index(settings), settings)) as client:
            _, _, sections = await call(client, "context_search", query="rollback switch", k=5)
            _, _, windows = await call(client, "search_docs", query="rollback switch", k=5)
        return [h["path"] for h in sections["hits"]], [h["path"] for h in windows["hits"]]

    assert await hits("--score-floor", "0") == ([".AGENTS/a.md", ".AGENTS/b.md"], [".AGENTS/a.md", ".AGENTS/b.md"])
    assert await hits() == ([".AGENTS/a.md"], [".AGENTS/a.md"])  # the default floor, 0.3
    assert await hits("--score-floor", "0.3") == ([".AGENTS/a.md"], [".AGENTS/a.md"])


async def test_a_filter_that_excludes_everything_says_so(server: AgentsServer) -> None:
    async with Client(server) as client:
        body, status, result = await call(client, "context_search", query="rollback", path_prefix="nowhere/")
        docs_body, _, docs = await call(client, "search_docs", query="rollback", path_prefix="nowhere/")
        inside, _, _ = await call(client, "context_search", query="rollback", path_prefix="services/api.md")
    assert status["method"] == "outline"
    assert str(result["fallback_reason"]).startswith("the filter excluded everything: no searchable .AGENTS file")
    assert "path_prefix='nowhere/'" in str(result["fallback_reason"])
    assert "Nearest headings and files (the filter excluded everything; these are from all files;" in body
    assert "no word of the query matched" not in body
    assert "(Deploy > Rollback)" in body  # the nearest come from everywhere
    assert str(docs["fallback_reason"]).startswith("the filter excluded everything: no file")
    assert docs_body.startswith("(no results)\n\nNearest headings and files (the filter excluded everything")
    # A filter that keeps files, none of which match, says that instead.
    assert "(no word of the query matched within the filter; read one with read_context)" in inside


async def test_a_search_docs_miss_lists_headings_and_files(agents: Path, make_tree: Callable[..., Path]) -> None:
    words = " ".join(f"filler{i}" for i in range(600))
    docs = make_tree({"guide.md": f"# Guide\n\n{words}\n\n## Kubernetes operators\n\n{words}\n"}, name="docs")
    server = make_server(agents, [docs])
    async with Client(server) as client:
        body, status, result = await call(client, "search_docs", query="rolback")
        first = result["nearest"][0]
        read = await client.read_resource(first["uri"])
        _, _, in_docs = await call(client, "search_docs", query="kuberntes", root="docs")
        docs_first = in_docs["nearest"][0]
        window = await client.read_resource(docs_first["uri"])
    assert status["method"] == "outline"
    assert (first["heading"], first["uri"]) == ("Deploy > Rollback", "agents://services/deploy.md#rollback")
    assert "- .AGENTS/services/deploy.md:3-5 (Deploy > Rollback) agents://services/deploy.md#rollback" in body
    assert getattr(read.contents[0], "text", "") == "## Rollback\n\nRoll back with the zebra switch."
    # A docs file has no sections in the index: the heading trails its windows start under.
    assert docs_first["heading"] == "Guide > Kubernetes operators"
    assert docs_first["uri"].startswith("agents-docs://docs/guide.md#L") or "#L" in docs_first["uri"]
    assert "## Kubernetes operators" in getattr(window.contents[0], "text", "")


async def test_a_named_file_never_shows_a_line_twice(make_tree: Callable[..., Path]) -> None:
    text = "".join(f"line {i} " + " ".join(f"w{i}_{j}" for j in range(10)) + "\n" for i in range(1, 121))
    agents = make_tree({"long.txt": text, "index.md": "# Index\n"})
    server = make_server(agents)
    async with Client(server) as client:
        _, status, result = await call(client, "search_docs", query="long.txt", k=10)
    assert status["method"] == "path"
    spans = [(h["start_line"], h["end_line"]) for h in result["hits"]]
    assert len(spans) >= 2 and spans[0][0] == 1 and spans[-1][1] == 120
    assert all(b[0] == a[1] + 1 for a, b in itertools.pairwise(spans))  # contiguous, no overlap
    lines = text.split("\n")
    assert all(h["text"] == "\n".join(lines[h["start_line"] - 1 : h["end_line"]]) for h in result["hits"])


# --- aliases and unknown arguments ----------------------------------------------------------


@pytest.mark.parametrize(("alias", "value"), [("q", "zebra"), ("text", "zebra")])
async def test_query_aliases_are_accepted(server: AgentsServer, alias: str, value: str) -> None:
    async with Client(server) as client:
        result = await client.call_tool("context_search", {alias: value})
    assert not result.is_error and "zebra" in text_of(result)


@pytest.mark.parametrize("alias", ["limit", "top_k", "n"])
async def test_k_aliases_are_accepted(server: AgentsServer, alias: str) -> None:
    async with Client(server) as client:
        result = await client.call_tool("context_search", {"query": "setup secrets logs", alias: 1})
    assert split_status(text_of(result))[1]["hits"] == "1"


async def test_unknown_and_doubled_arguments_are_errors_naming_them(server: AgentsServer) -> None:
    async with Client(server) as client:
        unknown = await client.call_tool("context_search", {"query": "x", "limt": 3})
        doubled = await client.call_tool("search_docs", {"query": "x", "q": "y"})
        no_args = await client.call_tool("pinned_context", {"verbose": True})
    assert unknown.is_error and "unknown argument 'limt' for context_search" in text_of(unknown)
    assert "k, max_tokens, offset" in text_of(unknown) or "detail" in text_of(unknown)
    assert doubled.is_error and "'q' and 'query' are the same argument" in text_of(doubled)
    assert no_args.is_error and "unknown argument 'verbose' for pinned_context; it takes: no arguments" in text_of(
        no_args
    )


# --- citations, sections and read_context ---------------------------------------------------


async def test_citations_and_section_uris_resolve_to_the_exact_lines(server: AgentsServer, agents: Path) -> None:
    lines = SECURITY.split("\n")
    async with Client(server) as client:
        _, _, result = await call(client, "context_search", query="setup", k=5)
        for hit in result["hits"]:
            expected = "\n".join(lines[hit["start_line"] - 1 : hit["end_line"]])
            read = await client.read_resource(hit["section_uri"])
            assert getattr(read.contents[0], "text", None) == expected == hit["text"]
    setups = [h for h in result["hits"] if h["heading"] == "Setup"]
    assert [h["section_uri"] for h in setups] == [
        "agents://security.md#setup",
        "agents://security.md#setup-1",
    ]
    assert setups[0]["citation"] == ".AGENTS/security.md:9-11 (Security > Setup)"


async def test_every_section_uri_reads_its_own_section_even_when_slugs_collide(agents: Path) -> None:
    headings = ["Setup", "Setup", "Setup 1", "Setup-1", "Intro", "Setup"]
    text = "Before any heading.\n\n" + "".join(f"## {h}\n\nBody {i}.\n\n" for i, h in enumerate(headings))
    (agents / "dupes.md").write_text(text)
    server = make_server(agents)
    async with Client(server) as client:
        read = await client.read_resource("agents-context://outline")
        outline = json.loads(getattr(read.contents[0], "text", "{}"))
        (sections,) = [f["sections"] for f in outline["files"] if f["path"] == ".AGENTS/dupes.md"]
        texts = [getattr((await client.read_resource(s["uri"])).contents[0], "text", None) for s in sections]
    anchors = [s["anchor"] for s in sections]
    assert anchors == ["intro", "setup", "setup-1", "setup-1-1", "setup-1-2", "intro-1", "setup-2"]
    assert texts == ["Before any heading."] + [f"## {h}\n\nBody {i}." for i, h in enumerate(headings)]


async def test_raw_fragment_uris_read_one_section_or_lines(server: AgentsServer, agents: Path) -> None:
    (agents / "notes.md").write_text("Text before any heading.\n\n# Notes\n\nbody\n")
    async with Client(server) as client:
        intro = await client.read_resource("agents://notes.md#intro")
        secrets = await client.read_resource("agents://security.md#secrets")
        window = await client.read_resource("agents://security.md#L5-L7")
        with pytest.raises(MCPError, match="no section 'nope'"):
            await client.read_resource("agents://security.md#nope")
    assert (
        getattr(secrets.contents[0], "text", None)
        == "## Secrets\n\nNever print the .env file. Rotate the watch filter token monthly."
    )
    assert (
        getattr(window.contents[0], "text", None)
        == "## Secrets\n\nNever print the .env file. Rotate the watch filter token monthly."
    )
    assert getattr(intro.contents[0], "text", "") == "Text before any heading."


@pytest.mark.parametrize(
    ("args", "lines", "first"),
    [
        ({"path": ".AGENTS/security.md", "section": "Secrets"}, "5-7", "## Secrets"),
        ({"path": "agents://security.md#logging"}, "13-15", "## Logging"),
        ({"path": "security.md", "section": "Security > Setup"}, "9-11", "## Setup"),
        ({"path": "security.md", "section": "setup-1"}, "17-19", "## Setup"),
        ({"path": "services/deploy.md", "start_line": 3, "end_line": 4}, "3-4", "## Rollback"),
    ],
)
async def test_read_context_reads_files_sections_and_lines(
    server: AgentsServer, args: dict[str, object], lines: str, first: str
) -> None:
    async with Client(server) as client:
        body, status, _ = await call(client, "read_context", **args)
    assert status["method"] == "read" and status["lines"] == lines
    assert body.split("\n")[1] == first and body.endswith("</context>")


async def test_read_context_says_when_a_heading_repeats(server: AgentsServer) -> None:
    async with Client(server) as client:
        _, status, _ = await call(client, "read_context", path="security.md", section="Setup")
    assert status["other_sections"] == "#setup-1"


async def test_read_context_suggests_close_paths_and_refuses_escapes(server: AgentsServer) -> None:
    async with Client(server) as client:
        unknown = await client.call_tool("read_context", {"path": "securty.md"})
        escape = await client.call_tool("read_context", {"path": "../../etc/passwd"})
        secret = await client.call_tool("read_context", {"path": "agents://.env"})
    assert unknown.is_error and "did you mean .AGENTS/security.md" in text_of(unknown)
    assert escape.is_error and "'..'" in text_of(escape)
    assert secret.is_error and "looks like a secret" in text_of(secret)


async def test_read_context_cuts_within_the_budget_and_says_where_to_continue(agents: Path) -> None:
    (agents / "long.md").write_text("# Long\n\n" + "".join(f"line {i} {'w' * 70}\n" for i in range(300)))
    server = make_server(agents)
    async with Client(server) as client:
        result = await client.call_tool("read_context", {"path": "long.md", "max_tokens": 500})
        text = text_of(result)
        _, status = split_status(text)
        again = await client.call_tool(
            "read_context", {"path": "long.md", "start_line": int(status["next_line"]), "max_tokens": 500}
        )
    assert len(text) <= 2000 and status["truncated"] == "1"
    assert f"continue with start_line={status['next_line']}]" in text
    assert text_of(again).split("\n")[1].startswith(f"line {int(status['next_line']) - 3} ")


async def test_the_outline_resource_maps_every_file(server: AgentsServer) -> None:
    async with Client(server) as client:
        read = await client.read_resource("agents-context://outline")
    outline = json.loads(getattr(read.contents[0], "text", "{}"))
    files = {f["path"]: f for f in outline["files"]}
    assert sorted(files) == [
        ".AGENTS/overview.md",
        ".AGENTS/security.md",
        ".AGENTS/services/api.md",
        ".AGENTS/services/deploy.md",
    ]
    sections = files[".AGENTS/security.md"]["sections"]
    assert [(s["heading"], s["anchor"], s["start_line"], s["end_line"]) for s in sections] == [
        ("Security", "security", 1, 3),
        ("Secrets", "secrets", 5, 7),
        ("Setup", "setup", 9, 11),
        ("Logging", "logging", 13, 15),
        ("Setup", "setup-1", 17, 19),
    ]
    assert all(s["tokens"] > 0 for s in sections) and files[".AGENTS/overview.md"]["pinned"] is True


# --- the deadline --------------------------------------------------------------------------------


def library_for(agents: Path) -> tuple[Corpus, Library]:
    corpus = load(make_roots([agents]))
    return corpus, index_corpus(corpus)


class SlowText:
    """The index's stored text of a unit (what the phrase check reads), but slow."""

    def __init__(self, index: BM25Index[Unit], seconds: float = 0.3) -> None:
        self.read = index.text
        self.seconds = seconds
        self.calls = 0

    def __call__(self, slot: int) -> I32:
        self.calls += 1
        time.sleep(self.seconds)
        return self.read(slot)


def test_the_deadline_returns_the_best_results_so_far_marked_partial(agents: Path) -> None:
    corpus, library = library_for(agents)
    slow = SlowText(library.sections, seconds=0.6)
    library.sections.text = slow  # type: ignore[method-assign]
    found = Policy(library).answer('"watch filter" token', 5, 0, Scope(SECTIONS), corpus, deadline_s=0.5)
    # Two sections hold both words: the first checked holds the phrase, then the time was up.
    assert found.partial is True and found.method == "phrase"
    assert [d.unit.heading for d in found.docs] == ["Secrets"] and slow.calls == 1


def test_a_deadline_with_nothing_ready_still_answers_with_the_outline(agents: Path) -> None:
    corpus, library = library_for(agents)
    found = Policy(library).answer("zebra rollback", 3, 0, Scope(SECTIONS), corpus, deadline_s=0.0)
    assert (found.method, found.partial, found.docs) == ("outline", True, [])
    assert found.fallback_reason == "the deadline passed before anything matched"
    rendered = render_context("zebra", found).text
    assert "(the deadline passed before anything matched; read one with read_context)" in rendered
    assert "no word of the query matched" not in rendered


async def test_the_deadline_applies_to_the_served_search(agents: Path) -> None:
    server = make_server(agents, deadline_ms=0)
    async with Client(server) as client:
        body, status, result = await call(client, "context_search", query="zebra rollback")
    assert status["partial"] == "1" and result["partial"] is True
    assert status["method"] == "outline" and result["hits"] == []
    assert "the deadline passed before anything matched" in body


async def test_the_phrase_check_stops_at_the_deadline(agents: Path) -> None:
    server = make_server(agents, deadline_ms=100)
    sections = server.app.live.library.sections
    slow = SlowText(sections)
    sections.text = slow  # type: ignore[method-assign]
    async with Client(server) as client:
        _, status, result = await call(client, "context_search", query='"watch filter" setup', k=5)
    # Two sections hold both words; the check stopped at the deadline instead of reading both.
    assert status["partial"] == "1" and result["partial"] is True
    assert slow.calls <= 1 and len(result["hits"]) <= 1


# --- the budget, end to end, on random corpora -----------------------------------------------------

WORDS = "alpha beta gamma delta watch filter secrets deploy rollback setup".split()
MISSING = "zulu yankee xray whiskey".split()
"""Words no generated corpus holds: queries of them miss (method outline)."""


def query_for(data: st.DataObject, bodies: list[list[str]]) -> str:
    """Plain words, words that miss, quoted phrases (from a body, so some match; or made up, so
    they are relaxed), paths, and long queries (past the 4,096-character and 64-term limits)."""
    words = st.sampled_from(WORDS + MISSING)
    parts = data.draw(st.lists(words, min_size=1, max_size=6))
    for _ in range(data.draw(st.integers(0, 3))):
        body = data.draw(st.sampled_from(bodies))
        at = data.draw(st.integers(0, len(body) - 1))
        made_up = data.draw(st.lists(words, min_size=2, max_size=4))
        phrase = " ".join(body[at : at + 3]) if data.draw(st.booleans()) else " ".join(made_up)
        parts.insert(data.draw(st.integers(0, len(parts))), f'"{phrase}"')
    query = " ".join(parts)
    kind = data.draw(st.sampled_from(["plain", "long", "many phrases", "path"]))
    if kind == "long":
        query = " ".join([query] * data.draw(st.integers(10, 400)))
    elif kind == "many phrases":
        query = " ".join(f'"{w} {w}zz"' for w in data.draw(st.lists(words, min_size=20, max_size=200)))
    elif kind == "path":
        query = f"f{data.draw(st.integers(0, len(bodies)))}.md"
    return query


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.lists(st.sampled_from(WORDS), min_size=1, max_size=400), min_size=1, max_size=12),
    st.data(),
    st.integers(200, 3000),
    st.sampled_from(["paths", "snippets", "sections"]),
    st.integers(0, 3),
    st.sampled_from([None, None, "f1", "nowhere/"]),
)
def test_no_answer_exceeds_its_budget(
    bodies: list[list[str]], data: st.DataObject, max_tokens: int, detail: str, offset: int, prefix: str | None
) -> None:
    import tempfile

    q = query_for(data, bodies)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / ".AGENTS"
        root.mkdir()
        for i, words in enumerate(bodies):
            lines = [" ".join(words[j : j + 12]) for j in range(0, len(words), 12)]
            (root / f"f{i}.md").write_text(f"# File {i} {' '.join(words[:40])}\n\n" + "\n".join(lines) + "\n")
        corpus, library = library_for(root)
        fresh = Freshness(7, time.time(), Change(changed=frozenset({".AGENTS/f0.md"}), at=1.0))
        policy = Policy(library)
        for scope, render in ((Scope(SECTIONS, prefix), render_context), (Scope(WINDOWS, prefix), render_docs)):
            found = replace(policy.answer(q, 20, offset, scope, corpus), freshness=fresh)
            page = Page(detail=detail, max_tokens=max_tokens, offset=offset, gen_changed=True, tokenize=tokenize)
            text = render(q, found, page).text
            assert len(text) <= max_tokens * 4, (found.method, len(text))
            split_status(text)


async def test_each_hit_explains_its_score_term_by_term(server: AgentsServer) -> None:
    async with Client(server) as client:
        _, _, result = await call(client, "context_search", query="rollback zebra switch", k=1)
        _, _, docs = await call(client, "search_docs", query="deploy rollback", k=1)
    (hit,) = result["hits"]
    terms = {m["term"]: m for m in hit["matched_terms"]}
    assert set(terms) == {"rollback", "zebra", "switch"}
    assert sum(m["contribution"] for m in hit["matched_terms"]) == pytest.approx(hit["score"], abs=1e-3)
    assert set(terms["rollback"]["fields"]) == {"heading", "body"}
    assert terms["zebra"]["fields"] == ["body"]
    (window_hit,) = docs["hits"]
    assert {m["term"] for m in window_hit["matched_terms"]} == {"deploy", "rollback"}
    assert "path" in {f for m in window_hit["matched_terms"] for f in m["fields"]}  # deploy.md
