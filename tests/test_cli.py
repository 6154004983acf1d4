"""The command line through its real entry point: every subcommand, --json against its schema, and
doctor on fixtures that show each finding (and clean on this repository's own .AGENTS/)."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections.abc import Callable
from io import StringIO
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from rich.console import Console

from cli import commands
from cli.credentials import redact
from corpus.roots import make_roots
from live.index import LiveIndex

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


def screen(output: commands.Output, width: int = 100) -> str:
    assert output.show is not None
    out = StringIO()
    output.show(Console(file=out, force_terminal=True, width=width))
    return out.getvalue()


def seen(output: commands.Output) -> str:
    """What a person reads on the terminal: the styled screen without its escape codes."""
    return re.sub(r"\x1b\[[0-9;]*m", "", screen(output, 240))


def test_terminal_rendering_is_rich(agents: Path, tmp_path: Path) -> None:
    questions = tmp_path / "q.jsonl"
    questions.write_text(json.dumps({"question": "kubernetes", "expected_path": "deploy.md"}) + "\n")
    live = LiveIndex(make_roots([agents]))
    outputs = {
        "search": commands.run_search(live, "zebra"),
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


def test_help_explains_every_command() -> None:
    top = cli("--help")
    assert top.returncode == 0
    for name in ("serve", "search", "read", "outline", "status", "eval", "doctor", "cache"):
        assert name in top.stdout
        assert cli(name, "--help").returncode == 0
    for name in ("search", "read", "outline", "status", "eval", "doctor", "cache"):
        helped = cli(name, "--help").stdout
        assert "--json " in helped and "--json-schema" in helped, name


def test_cache_shows_and_clears_with_json(agents: Path, tmp_path: Path) -> None:
    where = tmp_path / "cache-folder"
    assert cli("outline", "--root", str(agents), "--cache-dir", str(where)).returncode == 0
    shown = as_json("cache", "--cache-dir", str(where))
    saved = sorted(p.name for p in where.iterdir())
    assert shown["action"] == "show" and shown["directory"] == str(where)
    assert [e["name"] for e in shown["entries"]] == saved and shown["files"] == len(saved) >= 1
    assert shown["bytes"] == sum(p.stat().st_size for p in where.iterdir()) > 0
    cleared = as_json("cache", "clear", "--cache-dir", str(where))
    assert cleared["action"] == "clear" and [e["name"] for e in cleared["entries"]] == saved
    assert list(where.iterdir()) == []
    assert as_json("cache", "--cache-dir", str(where))["files"] == 0


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
    "links.md": "# Links\n\nSee [gone](missing.md) and [no anchor](large.md#nope) and [ok](large.md#large) and "
    "[lines](large.md#L1-L3) and [past the end](large.md#L2-L40).\n",
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
    assert len(links) == 3 and any("has no section #nope" in m for m in links)
    assert any(".AGENTS/large.md has 3 lines, not lines 2-40" in m for m in links)
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


def test_doctor_takes_links_out_of_the_root_and_line_anchors(make_tree: Callable[..., Path]) -> None:
    agents = make_tree(
        {
            "guide.md": "# Guide\n\nRead [the readme](../README.md), [the lines](guide.md#L1-L3), "
            "[one line](#L2), [security](security.md#secrets) and [the rules](../AGENTS.md#rules) about guides.\n",
            "security.md": "# Security\n\nThe security rules for guides.\n\n## Secrets\n\nNever print secrets.\n",
            "gone.md": "# Gone\n\nSee [nothing](../MISSING.md) and [past the end](guide.md#L3-L9) about gone.\n",
        }
    )
    (agents.parent / "README.md").write_text("# Readme\n")
    (agents.parent / "AGENTS.md").write_text("# Rules\n\nAgents follow the guides in [the guide](.AGENTS/guide.md).\n")
    report = as_json("doctor", "--root", str(agents), "--conventional")
    links = {(f["check"], f["severity"], f["path"]): f["message"] for f in report["findings"] if "link" in f["check"]}
    assert set(links) == {
        ("outside-link", "note", ".AGENTS/guide.md"),  # exists, but the server does not serve it
        ("broken-link", "error", ".AGENTS/gone.md"),
    }
    assert (
        "README.md, which exists but is not a file of the corpus" in links["outside-link", "note", ".AGENTS/guide.md"]
    )
    gone = [f["message"] for f in report["findings"] if f["path"] == ".AGENTS/gone.md" and f["check"] == "broken-link"]
    assert sorted(gone) == [
        "link [nothing](../MISSING.md) points to no file",
        "link [past the end](guide.md#L3-L9): .AGENTS/guide.md has 3 lines, not lines 3-9",
    ]
    (agents / "gone.md").unlink()
    fixed = cli("doctor", "--root", str(agents))
    assert fixed.returncode == 0, fixed.stdout  # a note is no error: it does not fail the user's CI
    assert "note: .AGENTS/guide.md:1-3 [outside-link]" in fixed.stdout


def test_doctor_does_not_report_ignored_folders(make_tree: Callable[..., Path]) -> None:
    agents = make_tree({"guide.md": "# Guide\n\nHow to write guides for the agents here.\n"})
    project = agents.parent
    for folder in (".git", "node_modules/pkg", "build"):
        (project / folder).mkdir(parents=True)
        (project / folder / "AGENTS.md").write_text("# Agents\n\nNot ours.\n")
    (project / ".gitignore").write_text("build/\n")
    (project / "AGENTS.md").write_text("# Project rules\n\nAgents follow these project rules.\n")
    (agents / "bad.md").write_bytes(b"\x00binary")
    report = as_json("doctor", "--root", str(agents), "--conventional")
    skipped = [f["path"] for f in report["findings"] if f["check"] == "skipped"]
    assert skipped == [".AGENTS/bad.md"]  # a real problem is still reported


SECRETS = {
    "aws": "AKIAQWERTYUIOPASDFGH",
    "github": "ghp_Zq8wX2cV4bN6mM1kL3jH5gF7dS9aP0oI2uY4",
    "generic": "s3cr3tV4lu3Zq8wX2cV4bN6m",
    "heading": "ghp_Hd8wX2cV4bN6mM1kL3jH5gF7dS9aP0oI2uY4",
}
KEY_BODY = [
    "MIIEowIBAAKCAQEAzq8wX2cV4bN6mM1kL3jH5gF7dS9aP0oI2uY4tR6eW8qZ",
    "Hx1yV3bN5mM7kL9jH1gF3dS5aP7oI9uY1tR3eW5qZ7xC9vB1nM3kL5jH7gF9",
]
PRIVATE_KEY = "-----BEGIN RSA PRIVATE KEY-----\n" + "\n".join(KEY_BODY) + "\n-----END RSA PRIVATE KEY-----"


def test_doctor_never_prints_a_credential_in_full(make_tree: Callable[..., Path]) -> None:
    """Wherever a key sits (a pinned file the instructions preview shows, a rule split after it, a
    heading that messages quote), doctor's output has it masked: terminal, plain and --json."""
    agents = make_tree(
        {
            "overview.md": f'# Overview\n\nThe AWS key {SECRETS["aws"]}.\nThe api_key = "{SECRETS["generic"]}".\n\n'
            f"{PRIVATE_KEY}\n",
            "deploy.md": f"# Deploy steps\n\nDeploy with the token {SECRETS['github']},\n\n## Then\n\n"
            "Continue the deploy steps.\n",
            "keys.md": f"# Key {SECRETS['heading']}\n\nx\n\n## Key {SECRETS['heading']}\n\nx\n",
            "links.md": "# Links\n\nSee [the keys](keys.md#nope) for links about keys.\n",
        }
    )
    leaks = [v[-12:] for v in SECRETS.values()] + [line[-12:] for line in KEY_BODY]
    plain = cli("doctor", "--root", str(agents))
    data = as_json("doctor", "--root", str(agents))
    live = LiveIndex(make_roots([agents]))
    shown = screen(commands.run_doctor(live, 32768, 2048))
    for out in (plain.stdout + plain.stderr, json.dumps(data), shown):
        assert not [leak for leak in leaks if leak in out]
    assert plain.returncode == 1
    found = {f["message"].partition(":")[0] for f in data["findings"] if f["check"] == "credential"}
    assert found == {
        "looks like a AWS access key",
        "looks like a GitHub token",
        "looks like a assigned secret",
        "looks like a private key",
    }
    assert "AKIA… (20 characters, not shown)" in data["instructions"]  # the pinned file, masked
    assert "-----BEGIN RSA PRIVATE KEY-----… (" in data["instructions"]
    split = next(f for f in data["findings"] if f["check"] == "split-rule")
    assert "ghp_… (40 characters, not shown)," in split["message"]
    assert any(f["check"] == "duplicate-heading" and "ghp_…" in f["message"] for f in data["findings"])


def test_a_credential_cut_by_the_instructions_limit_is_still_masked() -> None:
    text = "x " * 5 + SECRETS["github"] + " after"
    assert redact(text, 20) == "x " * 5 + "ghp_… (40 characters, not shown)"
    assert redact(text, 5) == "x x x" and redact(text) == "x " * 5 + "ghp_… (40 characters, not shown) after"


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
