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


BUDGET_CHECKS = {"codex-chain", "hook-pinned-budget", "hook-rule-budget", "pinned-budget"}
LINE = "Keep the build green and the tests fast.\n"
"""41 bytes: a rule line to fill files to a size."""


def _filled(head: str, size: int) -> str:
    """`head`, then rule lines, to exactly `size` bytes."""
    body = (LINE * (size // len(LINE) + 1))[: size - len(head) - 1]
    return head + body + "\n"


def _write(project: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        (project / rel).parent.mkdir(parents=True, exist_ok=True)
        (project / rel).write_text(text, encoding="utf-8")
    return project


def _budget_findings(project: Path, *args: str) -> dict[tuple[str, str], dict[str, object]]:
    report = as_json("doctor", "--project", str(project), *args)
    return {(f["check"], f["path"]): f for f in report["findings"] if f["check"] in BUDGET_CHECKS}


def test_doctor_reports_what_codex_cuts_of_each_agents_md_chain(tmp_path: Path) -> None:
    """32 KiB in all, root first: pkg/ is cut 232 bytes short, pkg/deep/ is left out entirely
    (the budget is used up before it), lib/ is within the budget and nothing is said of it."""
    project = _write(
        tmp_path / "proj",
        {
            "AGENTS.md": _filled("# Project rules\n\n", 22_000),
            "pkg/AGENTS.md": _filled("# Package rules\n\n", 11_000),
            "pkg/deep/AGENTS.md": "# Deep rules\n\nThe deep package's rules.\n",
            "lib/AGENTS.md": _filled("# Library rules\n\n", 10_000),
        },
    )
    found = _budget_findings(project)
    assert {key for key in found if key[0] == "codex-chain"} == {
        ("codex-chain", "proj/pkg/AGENTS.md"),
        ("codex-chain", "proj/pkg/deep/AGENTS.md"),
    }
    cut = found["codex-chain", "proj/pkg/AGENTS.md"]
    assert cut["severity"] == "warning"
    assert "proj/AGENTS.md (22,000 bytes) and proj/pkg/AGENTS.md (11,000 bytes): 33,000 bytes" in str(cut["message"])
    assert "after 10,768 of its 11,000 bytes: 232 bytes lost" in str(cut["message"])
    assert "move at least 232 bytes" in str(cut["fix"]) and ".AGENTS/" in str(cut["fix"])
    assert isinstance(cut["start_line"], int) and cut["start_line"] > 1
    out = found["codex-chain", "proj/pkg/deep/AGENTS.md"]
    assert "is left out entirely" in str(out["message"])
    assert "proj/pkg/AGENTS.md is cut after 10,768 of its 11,000 bytes" in str(out["message"])

    # Budget used up exactly by the files before it: nothing of them is cut, the nested one is left out.
    (project / "pkg/AGENTS.md").write_text(_filled("# Package rules\n\n", 32 * 1024 - 22_000))
    found = _budget_findings(project)
    assert {key for key in found if key[0] == "codex-chain"} == {("codex-chain", "proj/pkg/deep/AGENTS.md")}
    message = str(found["codex-chain", "proj/pkg/deep/AGENTS.md"]["message"])
    assert "the files before it use up the budget, so this file" in message and "left out entirely" in message


def test_doctor_reports_a_top_agents_md_over_codexs_budget_once(tmp_path: Path) -> None:
    project = _write(
        tmp_path / "proj",
        {
            "AGENTS.md": _filled("# Project rules\n\n", 40_000),
            "pkg/AGENTS.md": "# Package rules\n\nThe package's rules.\n",
        },
    )
    found = _budget_findings(project, "--pinned-budget", "100000")
    assert [key for key in found if key[0] == "codex-chain"] == [("codex-chain", "proj/AGENTS.md")]
    message = str(found["codex-chain", "proj/AGENTS.md"]["message"])
    assert "this file alone has 40,000" in message and "losing its last 7,232 bytes" in message
    assert "leaves out every nested AGENTS.md (proj/pkg/AGENTS.md" in message


def test_doctor_reports_what_the_claude_code_hook_cannot_send(tmp_path: Path) -> None:
    """Pinned files Claude Code does not load itself over the hook's 9,500 characters (the project's
    AGENTS.md it loads itself does not count), and a path-scoped rule over them."""
    project = _write(
        tmp_path / "proj",
        {
            "AGENTS.md": _filled("# Project rules\n\n", 9_000),  # Claude Code loads it itself
            ".AGENTS/overview.md": _filled("# Overview\n\n", 6_000),
            ".AGENTS/conventions.md": _filled("# Conventions\n\n", 5_000),
            ".AGENTS/api.md": "---\nglobs: src/**\n---\n" + _filled("# API rules\n\n", 9_800),
            "src/app.py": "",
        },
    )
    found = _budget_findings(project)
    pinned = found["hook-pinned-budget", ".AGENTS/overview.md"]
    assert pinned["severity"] == "warning"
    assert "(.AGENTS/overview.md and .AGENTS/conventions.md) hold 10,998 characters" in str(pinned["message"])
    assert "the hook sends .AGENTS/overview.md in part or by name only" in str(pinned["message"])
    assert "proj/AGENTS.md" not in str(pinned["message"])
    assert ".AGENTS/ files that are not pinned" in str(pinned["fix"])
    rule = found["hook-rule-budget", ".AGENTS/api.md"]
    assert "this path-scoped rule has 9,82" in str(rule["message"])
    assert ("pinned-budget", ".AGENTS/overview.md") not in found  # 20,000 bytes: within 32 KiB

    (project / ".AGENTS/conventions.md").write_text(_filled("# Conventions\n\n", 1_000))
    assert ("hook-pinned-budget", ".AGENTS/overview.md") not in _budget_findings(project)


def test_doctor_names_the_largest_pinned_file_over_the_pinned_budget(tmp_path: Path) -> None:
    project = _write(
        tmp_path / "proj",
        {
            "AGENTS.md": "# Project rules\n\nAgents follow the project's rules.\n",
            ".AGENTS/overview.md": _filled("# Overview\n\n", 20_000),
            ".AGENTS/conventions.md": _filled("# Conventions\n\n", 15_000),
        },
    )
    found = _budget_findings(project)
    over = found["pinned-budget", ".AGENTS/overview.md"]
    assert over["severity"] == "error"
    assert "hold 35,0" in str(over["message"]) and "over the 32,768 of --pinned-budget" in str(over["message"])
    assert "the largest: .AGENTS/overview.md (19,999 bytes), .AGENTS/conventions.md" in str(over["message"])
    assert "from .AGENTS/overview.md into .AGENTS/ files that are not pinned" in str(over["fix"])


def test_a_small_project_gets_no_budget_findings(tmp_path: Path) -> None:
    project = _write(
        tmp_path / "proj",
        {
            "AGENTS.md": "# Project rules\n\nAgents follow the project's rules.\n",
            "pkg/AGENTS.md": "# Package rules\n\nThe package's rules for agents.\n",
            ".AGENTS/overview.md": "# Overview\n\nWhat the project is about.\n",
            ".AGENTS/api.md": "---\nglobs: src/**\n---\n# API rules\n\nHandlers validate their input.\n",
            "src/app.py": "",
        },
    )
    assert _budget_findings(project) == {}
