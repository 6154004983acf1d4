"""The retrieval policy (docs/retrieval.md, "The retrieval policy"), through a real client: the
method that answers and its fallbacks, a miss that always says why and where to look next,
filters, paging, explanations term by term, the deadline, the score floor, the budget (whole hits
dropped before one is cut); and what ranks: a front matter title heads the trail, tags rank a
file for its topics."""

from __future__ import annotations

import itertools
from collections.abc import Callable
from pathlib import Path

import pytest
from mcp import Client

from cli.flags import build_parser
from cli.settings import Settings, open_index
from corpus.roots import make_roots
from live.index import LiveIndex
from server import AgentsServer, create_server
from tests.helpers import SlowText, call, make_server, split_status, text_of

pytestmark = pytest.mark.anyio


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


async def test_each_hit_explains_its_score_term_by_term_when_asked(server: AgentsServer) -> None:
    async with Client(server) as client:
        _, _, plain = await call(client, "context_search", query="rollback zebra switch", k=1)
        _, _, result = await call(client, "context_search", query="rollback zebra switch", k=1, explain=True)
        _, _, docs = await call(client, "search_docs", query="deploy rollback", k=1, explain="true")
    assert plain["hits"][0]["matched_terms"] == []  # not asked: no term contributions
    (hit,) = result["hits"]
    terms = {m["term"]: m for m in hit["matched_terms"]}
    assert set(terms) == {"rollback", "zebra", "switch"}
    assert sum(m["contribution"] for m in hit["matched_terms"]) == pytest.approx(hit["score"], abs=1e-3)
    assert set(terms["rollback"]["fields"]) == {"heading", "body"}
    assert terms["zebra"]["fields"] == ["body"]
    (window_hit,) = docs["hits"]
    assert {m["term"] for m in window_hit["matched_terms"]} == {"deploy", "rollback"}
    assert "path" in {f for m in window_hit["matched_terms"] for f in m["fields"]}  # deploy.md
    # search_docs adds the page bonus (its page's headings and path), and says so term by term.
    assert "page" in {f for m in window_hit["matched_terms"] for f in m["fields"]}
    assert sum(m["contribution"] for m in window_hit["matched_terms"]) == pytest.approx(window_hit["score"], abs=1e-3)


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


async def test_a_front_matter_title_heads_the_trail_and_ranks(make_tree: Callable[..., Path]) -> None:
    agents = make_tree(
        {
            "oncall.md": "---\ntitle: Incident runbook\ndescription: Outage steps\n---\n## Paging\n\nCall the engineer.\n",
            "style.md": "# Style\n\nFour spaces, and call things by their names.\n",
        }
    )
    server = create_server(LiveIndex(make_roots([agents])), Settings(agents=(agents,)))
    async with Client(server) as client:
        _, _, by_title = await call(client, "context_search", query="runbook")
        _, _, by_description = await call(client, "context_search", query="outage")
    assert by_title["hits"][0]["path"].endswith("oncall.md")
    assert "(Incident runbook > Paging)" in by_title["hits"][0]["citation"]
    assert by_description["hits"] == []  # descriptions are shown, not indexed: they cost ranking quality


async def test_front_matter_tags_rank_a_file_for_its_topics(make_tree: Callable[..., Path]) -> None:
    agents = make_tree(
        {
            "deploy.md": "---\ntitle: Shipping\ntags: [kubernetes, helm]\n---\n# Releases\n\nTag the commit, then run the pipeline.\n",
            "style.md": "# Style\n\nFour spaces.\n",
        }
    )
    server = create_server(LiveIndex(make_roots([agents])), Settings(agents=(agents,)))
    async with Client(server) as client:
        _, _, found = await call(client, "context_search", query="kubernetes")
    (hit,) = found["hits"]
    assert hit["path"] == ".AGENTS/deploy.md"
    assert "kubernetes" not in hit["text"]  # found by its tag alone; the tag is not shown as a heading
    assert "(Shipping > Releases)" in hit["citation"]


async def test_several_ways_of_asking_are_searched_and_fused_in_one_call(server: AgentsServer) -> None:
    """A query that alone misses the answer finds it when a variant names it; the hit both
    variants rank comes first; the status line is one answer's."""
    async with Client(server) as client:
        _, alone, only = await call(client, "context_search", query="undo a bad release", k=3)
        body, status, fused = await call(
            client, "context_search", query="undo a bad release", queries=["roll back the deploy", "zebra switch"], k=3
        )
        _, _, docs = await call(client, "search_docs", query="monthly token", queries="rotate secrets", k=2)
    assert alone["method"] == "outline" and not only["hits"]  # no word of the first query is in the corpus
    assert status["method"] == "bm25" and fused["hits"][0]["heading"] == "Rollback" and "zebra switch" in body
    assert docs["hits"] and docs["hits"][0]["path"] == ".AGENTS/security.md"  # one string: a list of one


async def test_search_docs_puts_first_the_page_every_way_of_asking_ranks_first(
    make_tree: Callable[..., Path],
) -> None:
    """Each query alone ranks the cache page first, by a different passage of it, and the notes
    page second by its one passage: fused, the cache page leads (by passage the notes would, as
    the one passage both queries found)."""

    def filler(tag: str) -> str:
        return " ".join(f"{tag}{i % 37}" for i in range(420))

    warm = "Warming fills cache entries before traffic arrives. " * 12 + filler("alpha")
    evict = "Eviction drops cache entries when memory runs short. " * 12 + filler("beta")
    docs = make_tree(
        {
            "guide/cache.md": f"# Cache\n\n## Warming\n\n{warm}\n\n## Eviction\n\n{evict}\n",
            "notes.md": "# Notes\n\nMentions warming once and eviction once, among words about cache entries.\n",
        },
        name="docs",
    )
    server = make_server(make_tree({"overview.md": "# Overview\n\nThe project.\n"}), docs=[docs])
    async with Client(server) as client:
        lists = [
            (await call(client, "search_docs", query=q, detail="paths"))[2] for q in ("cache warming", "cache eviction")
        ]
        _, _, fused = await call(
            client, "search_docs", query="cache warming", queries=["cache eviction"], detail="paths"
        )
    alone = [[(h["path"], h["chunk_id"]) for h in found["hits"]][:2] for found in lists]
    assert alone[0][0][0] == alone[1][0][0] == "docs/guide/cache.md" and alone[0][0] != alone[1][0]
    assert alone[0][1] == alone[1][1] == ("docs/notes.md", 0)
    assert [h["path"] for h in fused["hits"]][:2] == ["docs/guide/cache.md", "docs/notes.md"]


async def test_too_many_queries_or_not_strings_get_one_sentence(server: AgentsServer) -> None:
    async with Client(server) as client:
        many = await client.call_tool("context_search", {"query": "deploy", "queries": ["a", "b", "c", "d", "e"]})
        wrong = await client.call_tool("search_docs", {"query": "deploy", "queries": [1, 2]})
        listed = {t.name: t.input_schema for t in (await client.list_tools()).tools}
    assert (
        many.is_error and text_of(many) == 'queries must be a list of at most 4 strings, not ["a", "b", "c", "d", "e"]'
    )
    assert wrong.is_error and text_of(wrong) == "queries must be a list of at most 4 strings, not [1, 2]"
    assert listed["context_search"]["properties"]["queries"]["maxItems"] == 4
