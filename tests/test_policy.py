"""Seed 002's policy through the tools: methods and fallbacks, budgets and paging, aliases,
filters, citations, read_context, the outline, the deadline and fusion."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from mcp import Client, MCPError

from corpus.catalog import Corpus, load
from corpus.roots import make_roots
from retrieval.fusion import ReciprocalRankFusion, fuse
from retrieval.library import Library, index_corpus
from retrieval.policy import Scope, answer
from retrieval.retriever import Partial, RetrievalRequest, RetrievedDocument
from retrieval.tokenize import tokenize
from retrieval.units import Unit
from server import AgentsServer
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


# --- the deadline and fusion --------------------------------------------------------------------


class SlowRetriever:
    """Answers correctly, but far too late."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds

    def retrieve(self, request: RetrievalRequest) -> list[RetrievedDocument]:
        time.sleep(self.seconds)
        return []


def library_for(agents: Path) -> tuple[Corpus, Library]:
    corpus = load(make_roots([agents]))
    return corpus, index_corpus(corpus)


def test_the_deadline_returns_the_best_results_so_far_marked_partial(agents: Path) -> None:
    corpus, library = library_for(agents)
    fused = ReciprocalRankFusion([library.section_retriever, SlowRetriever(3.0)])
    started = time.monotonic()
    found = answer("zebra rollback", 3, 0, Scope("sections"), library.sections, corpus, tokenize, fused, deadline_s=0.3)
    assert time.monotonic() - started < 2.5
    assert found.partial is True and found.method == "bm25"
    assert [d.unit.heading for d in found.docs] == ["Rollback"]


def test_a_deadline_with_nothing_ready_still_answers_with_the_outline(agents: Path) -> None:
    corpus, library = library_for(agents)
    started = time.monotonic()
    found = answer(
        "zebra",
        3,
        0,
        Scope("sections"),
        library.sections,
        corpus,
        tokenize,
        SlowRetriever(3.0),
        deadline_s=0.2,
    )
    assert time.monotonic() - started < 2.5  # did not wait for the slow retriever
    assert (found.method, found.partial, found.docs) == ("outline", True, [])
    assert found.fallback_reason == "the deadline passed before anything matched"


def unit(name: str, line: int = 1) -> Unit:
    return Unit(
        path=f".AGENTS/{name}.md",
        uri=f"agents://{name}.md",
        text=name,
        start_line=line,
        end_line=line,
        heading=name,
    )


def test_rrf_orders_by_summed_reciprocal_ranks() -> None:
    a, b, c, d = (RetrievedDocument(unit(n), 1.0) for n in "abcd")
    fused = fuse([[a, b, c], [c, a, d]], k=60)
    assert [doc.unit.heading for doc in fused] == ["a", "c", "b", "d"]
    assert fused[0].score == pytest.approx(1 / 61 + 1 / 62)
    assert fused[2].score == pytest.approx(1 / 62)


class Fixed:
    def __init__(self, docs: list[RetrievedDocument]) -> None:
        self.docs = docs

    def retrieve(self, request: RetrievalRequest) -> list[RetrievedDocument]:
        return self.docs[: request.k]


def test_rrf_is_a_retriever_and_raises_partial_when_one_is_late() -> None:
    a, b = RetrievedDocument(unit("a"), 1.0), RetrievedDocument(unit("b"), 1.0)
    both = ReciprocalRankFusion([Fixed([a, b]), Fixed([b])])
    assert [d.unit.heading for d in both.retrieve(RetrievalRequest("q", k=2))] == ["b", "a"]
    late = ReciprocalRankFusion([Fixed([a]), SlowRetriever(2.0)])
    with pytest.raises(Partial) as caught:
        late.retrieve(RetrievalRequest("q", k=2, deadline=time.monotonic() + 0.2))
    assert [d.unit.heading for d in caught.value.docs] == ["a"]


# --- the budget, end to end, on random corpora -----------------------------------------------------

WORDS = "alpha beta gamma delta watch filter secrets deploy rollback setup".split()


@settings(max_examples=30, deadline=None)
@given(
    st.lists(st.lists(st.sampled_from(WORDS), min_size=1, max_size=400), min_size=1, max_size=12),
    st.lists(st.sampled_from(WORDS), min_size=1, max_size=4),
    st.integers(200, 3000),
    st.sampled_from(["paths", "snippets", "sections"]),
)
def test_no_answer_exceeds_its_budget(bodies: list[list[str]], query: list[str], max_tokens: int, detail: str) -> None:
    import tempfile

    from retrieval.format import Options, render_context, render_docs

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / ".AGENTS"
        root.mkdir()
        for i, words in enumerate(bodies):
            lines = [" ".join(words[j : j + 12]) for j in range(0, len(words), 12)]
            (root / f"f{i}.md").write_text(f"# File {i}\n\n" + "\n".join(lines) + "\n")
        corpus, library = library_for(root)
        q = " ".join(query)
        options = Options(detail=detail, max_tokens=max_tokens, terms=frozenset(query), tokenize=tokenize)
        for scope, render in ((Scope("sections"), render_context), (Scope("windows"), render_docs)):
            index = library.sections if scope.kind == "sections" else library.windows
            found = answer(q, 20, 0, scope, index, corpus, tokenize)
            assert len(render(q, found, options).text) <= max_tokens * 4


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
