"""The command line through its real entry point: every command, --json against its schema, terminal output."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path

from cli import commands
from corpus.roots import make_roots
from live.index import LiveIndex
from retrieval.search.request import SearchRequest
from tests.cli.support import as_json, screen
from tests.helpers import cli


def test_search_prints_what_context_search_answers(agents: Path) -> None:
    done = cli("search", "zebra rollback", "--root", str(agents), "-k", "1")
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith('<context path=".AGENTS/deploy.md" section="Rollback" score="')
    assert "\x1b[" not in done.stdout  # plain when piped
    assert "[agents-context method=bm25 hits=1" in done.stdout
    data = as_json("search", "zebra rollback", "--root", str(agents))
    assert data["hits"][0]["citation"] == ".AGENTS/deploy.md:5-7 (Deploy > Rollback)"


def test_search_takes_other_ways_to_say_the_query(agents: Path) -> None:
    alone = as_json("search", "undo a bad release", "--root", str(agents))
    data = as_json("search", "undo a bad release", "--or", "roll back", "--or", "zebra", "--root", str(agents))
    assert not alone["hits"] and data["hits"][0]["citation"] == ".AGENTS/deploy.md:5-7 (Deploy > Rollback)"
    many = cli("search", "deploy", *[arg for q in "abcde" for arg in ("--or", q)], "--root", str(agents))
    assert many.returncode == 2 and "--or takes at most 4 other ways to say the query, not 5" in many.stderr


def test_search_docs_mode_and_paths_detail(agents: Path, make_tree: Callable[..., Path]) -> None:
    docs = make_tree({"guide.md": "# Guide\n\nzebra crossing\n"}, name="docs")
    done = cli("search", "zebra", "--docs", "--root", str(agents), "--docs", str(docs), "--detail", "paths")
    assert done.returncode == 0, done.stderr
    assert "--- docs/guide.md#0 (score=" in done.stdout and " lines 1-3 ---" in done.stdout
    data = as_json("search", "zebra", "--docs", "--root", str(agents), "--docs", str(docs))
    assert {h["path"] for h in data["hits"]} == {"docs/guide.md", ".AGENTS/deploy.md"}


def test_read_outline_and_status(agents: Path) -> None:
    read = cli("read", "security.md#secrets", "--root", str(agents))
    assert read.returncode == 0, read.stderr
    assert read.stdout.startswith('<context path=".AGENTS/security.md" section="Secrets" lines="5-7">\n## Secrets\n')
    assert as_json("read", "agents://deploy.md#L5-L7", "--root", str(agents))["text"].startswith("## Rollback")
    outline = as_json("outline", "--root", str(agents))
    assert [f["path"] for f in outline["files"]] == [".AGENTS/deploy.md", ".AGENTS/overview.md", ".AGENTS/security.md"]
    status = as_json("status", "--root", str(agents))
    assert status["roots"][0]["skipped"] == [{"path": ".AGENTS/.env", "reason": "looks like a secret (denylist)"}]
    assert "skipped .AGENTS/.env" in cli("status", "--root", str(agents)).stdout


def test_eval_scores_questions(agents: Path, tmp_path: Path) -> None:
    questions = tmp_path / "q.jsonl"
    questions.write_text(
        json.dumps({"question": "zebra switch", "expected_path": "deploy.md", "expected_heading": "Rollback"})
        + "\n"
        + json.dumps({"question": "kubernetes", "expected_path": "deploy.md"})
        + "\n"
    )
    report = as_json("eval", str(questions), "--root", str(agents))
    assert (report["questions"], report["hit_at_1"]) == (2, 0.5)
    assert report["misses"][0]["question"] == "kubernetes"
    assert "hit@1: 0.500" in cli("eval", str(questions), "--root", str(agents)).stdout


def test_unusable_input_exits_2_with_the_reason(agents: Path, tmp_path: Path) -> None:
    missing = cli("status", "--root", str(tmp_path / "nope"))
    assert missing.returncode == 2 and "does not exist" in missing.stderr and missing.stdout == ""
    unknown = cli("read", "nosuch.md", "--root", str(agents))
    assert unknown.returncode == 2 and "no file named 'nosuch.md'" in unknown.stderr


def test_progress_goes_to_stderr_on_a_large_tree(agents: Path, tmp_path: Path) -> None:
    big = tmp_path / "big"
    big.mkdir()
    for i in range(2100):
        (big / f"p{i}.md").write_text(f"# Page {i}\n")
    done = cli("status", "--root", str(agents), "--docs", str(big), "--json")
    assert done.returncode == 0
    assert "indexing big: 2000/2100 files read" in done.stderr
    assert json.loads(done.stdout)["roots"][1]["files"] == 2100


def seen(output: commands.Output) -> str:
    """What a person reads on the terminal: the styled screen without its escape codes."""
    return re.sub(r"\x1b\[[0-9;]*m", "", screen(output, 240))


def test_terminal_rendering_is_rich(agents: Path, tmp_path: Path) -> None:
    questions = tmp_path / "q.jsonl"
    questions.write_text(json.dumps({"question": "kubernetes", "expected_path": "deploy.md"}) + "\n")
    live = LiveIndex(make_roots([agents]))
    outputs = {
        "search": commands.run_search(live, SearchRequest(query="zebra")),
        "read": commands.run_read(live, "deploy.md#rollback"),
        "outline": commands.run_outline(live),
        "status": commands.run_status(live),
        "eval": commands.run_eval(live, questions),
        "doctor": commands.run_doctor(live, 32768, 2048),
        "cache": commands.run_cache(tmp_path / "no-cache-here"),
    }
    for name, output in outputs.items():
        assert "\x1b[" in screen(output), name  # styled on a terminal
    read = seen(outputs["read"])
    assert "Roll back with the zebra switch." in read and ".AGENTS/deploy.md:5-7 (Rollback)" in read
    assert " 7 " in read  # numbered with the file's own lines
    assert "kubernetes" in seen(outputs["eval"]) and "hit@1" in seen(outputs["eval"])


def test_terminal_rendering_keeps_brackets_as_text(make_tree: Callable[..., Path]) -> None:
    """A heading or link in rich's markup syntax is text: shown as written, never a crash."""
    agents = make_tree({"a.md": "# Use [bold] and [/x] tags\n\nSee [the guide](missing.md) about tags here.\n"})
    live = LiveIndex(make_roots([agents]))
    assert "Use [bold] and [/x] tags" in seen(commands.run_outline(live))
    assert "[the guide](missing.md)" in seen(commands.run_doctor(live, 32768, 2048))


def test_cache_shows_and_clears_with_json(agents: Path, tmp_path: Path) -> None:
    where = tmp_path / "cache-folder"
    assert cli("outline", "--root", str(agents), "--cache-dir", str(where)).returncode == 0
    shown = as_json("cache", "--cache-dir", str(where))
    saved = sorted(p.name for p in where.glob("*.index"))  # beside each: its .json and its lock file
    assert shown["action"] == "show" and shown["directory"] == str(where)
    assert [e["name"] for e in shown["entries"]] == saved and shown["files"] == len(saved) >= 1
    assert shown["bytes"] == sum(p.stat().st_size for p in where.iterdir()) > 0
    assert [e["root"] for e in shown["entries"]] == [str(agents.resolve())] and shown["other_files"] == 1
    cleared = as_json("cache", "clear", "--cache-dir", str(where))
    assert cleared["action"] == "clear" and [e["name"] for e in cleared["entries"]] == saved
    assert list(where.iterdir()) == []
    assert as_json("cache", "--cache-dir", str(where))["files"] == 0


def test_feedback_expands_each_query_with_its_best_hits_words(make_tree: Callable[..., Path]) -> None:
    agents = make_tree(
        {
            "a.md": "# Rollback\n\nRollback uses the kill switch.\n",
            "b.md": "# Rollback again\n\nA rollback flips the kill switch.\n",
            "c.md": "# Emergency\n\nThe kill switch stops everything.\n",
            "d.md": "# Unrelated\n\nNothing here.\n",
        },
        name="feedback",
    )
    flags = ("--root", str(agents), "-k", "5", "--score-floor", "0")
    plain = as_json("search", "rollback", *flags)
    expanded = as_json("search", "rollback", *flags, "--feedback")
    assert [h["path"] for h in plain["hits"]] == ["feedback/a.md", "feedback/b.md"]
    # "kill switch" came from the first two hits; the query's own words still lead.
    assert [h["path"] for h in expanded["hits"]] == ["feedback/a.md", "feedback/b.md", "feedback/c.md"]
