"""The command line through its real entry point: every subcommand, --json against its schema, and
doctor on fixtures that show each finding (and clean on this repository's own .AGENTS/)."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from io import StringIO
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from rich.console import Console

from corpus.roots import make_roots
from retrieval import commands
from retrieval.live import LiveIndex

REPO = Path(__file__).resolve().parents[1]
SCRIPT = Path(sys.executable).with_name("agents-context")


def cli(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    command = [str(SCRIPT)] if SCRIPT.exists() else [sys.executable, str(REPO / "server.py")]
    return subprocess.run([*command, *args], capture_output=True, text=True, timeout=300, cwd=cwd, check=False)


def as_json(command: str, *args: str) -> Any:
    done = cli(command, *args, "--json")
    assert done.returncode in (0, 1), done.stderr
    data = json.loads(done.stdout)
    schema = json.loads(cli(command, *args, "--json-schema").stdout)
    jsonschema.validate(data, schema)  # --json is exactly what --json-schema documents
    return data


@pytest.fixture
def agents(make_tree: Callable[..., Path]) -> Path:
    return make_tree(
        {
            "overview.md": "# Overview\n\nCLI tests.\n",
            "security.md": "# Security\n\nThe security rules for secrets.\n\n## Secrets\n\nNever print secrets or tokens.\n",
            "deploy.md": "# Deploy\n\nHow a deploy ships.\n\n## Rollback\n\nRoll back with the zebra switch.\n",
            ".env": "TOKEN=x\n",
        }
    )


def test_search_prints_what_context_search_answers(agents: Path) -> None:
    done = cli("search", "zebra rollback", "--root", str(agents), "-k", "1")
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith('<context path=".AGENTS/deploy.md" section="Rollback" score="')
    assert "\x1b[" not in done.stdout  # plain when piped
    assert "[agents-context method=bm25 hits=1" in done.stdout
    data = as_json("search", "zebra rollback", "--root", str(agents))
    assert data["hits"][0]["citation"] == ".AGENTS/deploy.md:5-7 (Deploy > Rollback)"


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


def test_terminal_rendering_is_rich(agents: Path) -> None:
    live = LiveIndex(make_roots([agents]))
    for output in (commands.run_search(live, "zebra"), commands.run_outline(live), commands.run_status(live)):
        assert output.show is not None
        screen = StringIO()
        output.show(Console(file=screen, force_terminal=True, width=100))
        assert "\x1b[" in screen.getvalue()  # styled on a terminal


def test_help_explains_every_command() -> None:
    top = cli("--help")
    assert top.returncode == 0
    for name in ("serve", "search", "read", "outline", "status", "eval", "doctor"):
        assert name in top.stdout
        assert cli(name, "--help").returncode == 0


# --- doctor ----------------------------------------------------------------------------------

FINDINGS = {
    "split-rule.md": "# Deploys\n\nA deploy must pass these gates:\n\n## Gates\n\nTests and review.\n",
    "large.md": "# Large\n\n" + " ".join(["word"] * 900) + "\n",
    "small.md": "# Small\n\nToo short.\n\n## Tiny\n\nno\n",
    "vague.md": "# Notes\n\nNotes are a vague heading for text about caching strategies.\n",
    "dupes.md": "# Setup\n\nfirst setup steps here\n\n# Setup\n\nsecond setup steps here\n",
    "mismatch.md": "# Zebra crossings\n\n"
    + "Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor. " * 3
    + "\n",
    "links.md": "# Links\n\nSee [gone](missing.md) and [no anchor](large.md#nope) and [ok](large.md#large).\n",
    "creds.md": "# Creds\n\nThe key is AKIAABCDEFGHIJKLMNOP in prod.\n",
    "bin.md": b"\x00\x01\x02",
    "overview.md": "# Overview\n\n" + "x" * 400 + "\n",
}


def test_doctor_reports_each_finding_and_fails_on_errors(make_tree: Callable[..., Path]) -> None:
    agents = make_tree(FINDINGS)
    report = as_json("doctor", "--root", str(agents), "--pinned-budget", "100", "--instructions-budget", "300")
    checks = {(f["check"], f["path"]) for f in report["findings"]}
    for check, path in [
        ("split-rule", ".AGENTS/split-rule.md"),
        ("large-section", ".AGENTS/large.md"),
        ("small-section", ".AGENTS/small.md"),
        ("vague-heading", ".AGENTS/vague.md"),
        ("duplicate-heading", ".AGENTS/dupes.md"),
        ("heading-body-mismatch", ".AGENTS/mismatch.md"),
        ("broken-link", ".AGENTS/links.md"),
        ("credential", ".AGENTS/creds.md"),
        ("skipped", ".AGENTS/bin.md"),
        ("pinned-budget", ".AGENTS/overview.md"),
        ("manifest-budget", "(instructions)"),
        ("self-retrieval", ".AGENTS/dupes.md"),
    ]:
        assert (check, path) in checks, (check, path)
    links = [f["message"] for f in report["findings"] if f["check"] == "broken-link"]
    assert len(links) == 2 and any("has no section #nope" in m for m in links)
    credential = next(f for f in report["findings"] if f["check"] == "credential")
    assert "AKIAABCDEFGHIJKLMNOP" not in json.dumps(report) and credential["message"].startswith(
        "looks like a AWS access key: AKIA…"
    )
    assert credential["start_line"] == 3
    assert report["errors"] >= 4
    plain = cli("doctor", "--root", str(agents))
    assert plain.returncode == 1  # errors: usable as a CI gate
    assert "error: .AGENTS/creds.md:3 [credential]" in plain.stdout and "    fix: " in plain.stdout
    assert "What a model in Claude Code sees of the instructions" in plain.stdout


def test_doctor_passes_warnings_with_exit_0(make_tree: Callable[..., Path]) -> None:
    agents = make_tree({"notes.md": "# Notes\n\nSome notes about caching and the rest of it.\n"})
    done = cli("doctor", "--root", str(agents))
    assert done.returncode == 0 and "[vague-heading]" in done.stdout


def test_doctor_is_clean_on_this_repositorys_own_agents_folder() -> None:
    report = as_json("doctor", "--root", str(REPO / ".AGENTS"))
    assert report["findings"] == [] and report["errors"] == 0
    assert len(report["instructions"]) <= 2048
