"""doctor on fixtures that show each finding, never printing a credential, and clean on this repository's own .AGENTS/."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from cli import commands
from corpus.roots import make_roots
from live.index import LiveIndex
from tests.cli.support import SECRETS, as_json, screen
from tests.helpers import REPO, cli

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
