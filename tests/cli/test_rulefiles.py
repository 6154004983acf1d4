"""doctor's checks of the rule files, on real projects: front matter a tool would misread (at its
line, saying how the file is served instead), globs that match no file of the project, one rule
kept for two agents, always-on rules larger than the instructions, what Codex cuts of each
AGENTS.md chain (root first, mid-line, without a word), and what the hook cannot send Claude Code
whole. The same checks through `agents-context doctor` are tests/cli/test_doctor.py and
tests/promises/test_conventions.py."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from cli import rulefiles
from cli.findings import INSTRUCTIONS_CUTS, Finding
from clients import claude_code
from corpus.catalog import Corpus, load
from corpus.markdown import split_lines
from corpus.roots import make_roots
from tests.conftest import Tree, write_tree

LINE = "Keep the build green and the tests fast.\n"
"""41 bytes: a rule line to fill files to a size."""
RULE = "# Rules\n\nRun the whole test suite before every single commit, please.\n"
"""A rule of more than a few words."""


def filled(head: str, size: int) -> str:
    """`head`, then rule lines, to exactly `size` bytes."""
    body = (LINE * (size // len(LINE) + 1))[: size - len(head) - 1]
    return head + body + "\n"


def project(tmp_path: Path, files: Tree, name: str = "proj") -> Corpus:
    """What `--project` serves for this folder: its `.AGENTS/` or `.agents/` and its agent files."""
    folder = write_tree(tmp_path / name, files)
    agents = [folder / n for n in (".AGENTS", ".agents") if (folder / n).is_dir()][:1]
    return load(make_roots(agents, conventional=folder))


def by_path(findings: list[Finding]) -> dict[str, Finding]:
    found = {f.path: f for f in findings}
    assert len(found) == len(findings), findings  # one finding per file
    return found


# --- front matter -----------------------------------------------------------------------------------


def test_front_matter_a_tool_would_misread_is_reported_at_its_line_with_how_the_file_is_served(
    tmp_path: Path,
) -> None:
    corpus = project(
        tmp_path,
        {
            ".kiro/steering/broken.md": "---\ninclusion: [always\n---\n# Broken\n\nPrefer UTC.\n",
            ".clinerules/api.md": "---\npaths: src/**\n---\n# API\n\nValidate input.\n",
            ".windsurf/rules/sql.md": "---\ntrigger: sometimes\n---\n# SQL\n\nReversible migrations.\n",
            ".AGENTS/notes.md": "---\ntitle: Notes\ntags: [a\n---\n# Notes\n\nx\n",
            ".AGENTS/fine.md": "---\ntitle: Fine\nglobs: src/**\n---\n# Fine\n\nx\n",
            "AGENTS.md": RULE,
        },
    )
    found = by_path(rulefiles.front_matter(sorted(corpus.files.values(), key=lambda f: f.path)))
    assert set(found) == {
        "proj/.kiro/steering/broken.md",
        "proj/.clinerules/api.md",
        "proj/.windsurf/rules/sql.md",
        ".AGENTS/notes.md",
    }
    assert all(f.severity == "warning" and f.check == "front-matter" for f in found.values())
    kiro = found["proj/.kiro/steering/broken.md"]
    assert (kiro.start_line, kiro.end_line) == (2, 2)
    assert kiro.message.startswith("not valid YAML (")
    assert kiro.message.endswith("; served as a rule for every task (pinned)")
    cline = found["proj/.clinerules/api.md"]
    assert cline.message == (
        "paths: Cline rules read only a YAML list (as a string, the rule applies to every file); "
        "served as a rule for the files its globs match"
    )
    assert found["proj/.windsurf/rules/sql.md"].message == (
        "trigger: sometimes is not one of always_on, glob, model_decision, manual; "
        "served as a file reached only by searching"
    )
    notes = found[".AGENTS/notes.md"]
    assert (notes.start_line, notes.message.endswith("; served as a searchable file")) == (3, True)
    assert "docs/conventions.md" in notes.fix


# --- globs that match nothing -----------------------------------------------------------------------


def test_a_glob_that_matches_no_file_of_the_project_never_applies(tmp_path: Path) -> None:
    corpus = project(
        tmp_path,
        {
            ".git/HEAD": "ref: refs/heads/main\n",
            "src/app.py": "",
            ".AGENTS/api.md": "---\nglobs: src/**\n---\n# API\n\nx\n",
            ".AGENTS/ruby.md": "---\ntitle: Ruby\nglobs: lib/**/*.rb\n---\n# Ruby\n\nx\n",
            ".claude/rules/legacy.md": '---\npaths: ["old/**/*.rb"]\n---\n# Legacy\n\nx\n',
        },
    )
    found = by_path(rulefiles.never_apply(corpus))
    assert set(found) == {".AGENTS/ruby.md", "proj/.claude/rules/legacy.md"}
    ruby = found[".AGENTS/ruby.md"]
    assert ruby.message == (
        f"globs: lib/**/*.rb matches no file in {tmp_path / 'proj'}, so this rule never applies through it"
    )
    assert (ruby.start_line, ruby.end_line) == (3, 3)  # the front matter line that holds the glob
    assert ruby.fix == "write the glob from the project's top (src/api/**), or drop it"
    assert found["proj/.claude/rules/legacy.md"].message.startswith("paths: old/**/*.rb matches no file in ")


def test_files_in_folders_never_walked_do_not_make_a_glob_apply(tmp_path: Path) -> None:
    corpus = project(
        tmp_path,
        {
            "pyproject.toml": "",
            "node_modules/gem/lib/x.rb": "",
            ".git/hooks/y.rb": "",
            ".AGENTS/ruby.md": "---\nglobs: '**/*.rb'\n---\n# Ruby\n\nx\n",
        },
    )
    assert [f.path for f in rulefiles.never_apply(corpus)] == [".AGENTS/ruby.md"]


def test_an_agents_folder_outside_any_known_project_is_not_checked(tmp_path: Path) -> None:
    """Its parent has no `.git`, `pyproject.toml`, ...: which files its globs are about is unknown."""
    loose = write_tree(tmp_path / "shared" / ".AGENTS", {"api.md": "---\nglobs: [src/api/**]\n---\n# API\n\nx\n"})
    assert rulefiles.never_apply(load(make_roots([loose]))) == []
    (tmp_path / "shared" / ".git").mkdir()
    assert [f.path for f in rulefiles.never_apply(load(make_roots([loose])))] == [".AGENTS/api.md"]


def test_project_files_are_relative_posix_paths_outside_the_folders_never_walked(tmp_path: Path) -> None:
    folder = write_tree(
        tmp_path / "proj",
        {"src/api/app.py": "", "README.md": "", ".git/HEAD": "", "node_modules/x/index.js": "", "docs/a b.md": ""},
    )
    assert sorted(rulefiles.project_files(folder) or []) == ["README.md", "docs/a b.md", "src/api/app.py"]


# --- one rule kept for two agents --------------------------------------------------------------------


def test_the_same_rule_kept_for_two_agents_is_reported_once_naming_the_other_file(tmp_path: Path) -> None:
    corpus = project(
        tmp_path,
        {
            "AGENTS.md": RULE,
            "GEMINI.md": "---\ndescription: for Gemini\n---\n" + RULE,  # front matter aside, the same text
            "CLAUDE.md": "@AGENTS.md\n",  # an import: the way to share it
            ".github/copilot-instructions.md": "# Short\n\nSee AGENTS.md.\n",
        },
    )
    (found,) = rulefiles.duplicates(corpus)
    assert (found.path, found.check, found.severity) == ("proj/GEMINI.md", "duplicate-rule", "warning")
    assert found.message == (
        "the same text as proj/AGENTS.md (AGENTS.md): an agent that reads both reads it twice, "
        "and an edit to one leaves the other behind"
    )
    assert "@AGENTS.md" in found.fix


def test_a_few_words_said_twice_are_not_a_duplicate_rule(tmp_path: Path) -> None:
    short = "# Rules\n\nSee the docs folder.\n"  # fewer than eight words
    assert rulefiles.duplicates(project(tmp_path, {"AGENTS.md": short, "GEMINI.md": short})) == []


def test_two_packages_sharing_a_rule_and_two_rules_of_one_tool_are_not_reported(tmp_path: Path) -> None:
    api = write_tree(tmp_path / "packages" / "api" / ".AGENTS", {"style.md": RULE})
    web = write_tree(tmp_path / "packages" / "web" / ".AGENTS", {"style.md": RULE})
    assert rulefiles.duplicates(load(make_roots([api, web]))) == []
    cursor = project(tmp_path, {".cursor/rules/a.mdc": RULE, ".cursor/rules/b.mdc": RULE}, name="cursor")
    assert rulefiles.duplicates(cursor) == []


def test_documentation_that_repeats_a_rule_is_not_a_rule_kept_twice(tmp_path: Path) -> None:
    folder = write_tree(tmp_path / "proj", {"AGENTS.md": RULE, "handbook/rules.md": RULE})
    corpus = load(make_roots([], [folder / "handbook"], conventional=folder))
    assert {"proj/AGENTS.md", "handbook/rules.md"} <= set(corpus.files)
    assert rulefiles.duplicates(corpus) == []


@pytest.mark.skipif(os.name != "posix", reason="symlinks need privileges on Windows")
def test_a_link_to_the_same_file_is_not_a_duplicate(tmp_path: Path) -> None:
    folder = write_tree(tmp_path / "proj", {"AGENTS.md": RULE})
    (folder / "GEMINI.md").symlink_to("AGENTS.md")
    corpus = load(make_roots([], conventional=folder))
    assert {"proj/AGENTS.md", "proj/GEMINI.md"} <= set(corpus.files)
    assert rulefiles.duplicates(corpus) == []


# --- always-on rules and the instructions ------------------------------------------------------------


def test_always_on_rules_over_the_instructions_budget_get_one_note(tmp_path: Path) -> None:
    corpus = project(tmp_path, {"AGENTS.md": RULE, "GEMINI.md": "# Gemini\n\nUse the gemini model.\n"})
    chars = sum(len(f.text) for f in corpus.files.values())
    assert rulefiles.always_on(corpus, chars) == []
    (found,) = rulefiles.always_on(corpus, chars - 1)
    assert (found.severity, found.check, found.path) == ("note", "always-on-budget", "(always-on rules)")
    assert found.message.startswith(
        f"the 2 always-on files (proj/AGENTS.md and proj/GEMINI.md) hold {chars} characters, "
        f"over the {chars - 1}-character instructions"
    )
    assert INSTRUCTIONS_CUTS in found.message
    assert found.message.endswith("the model sees them only once it calls pinned_context")


@pytest.mark.parametrize(("files", "folder"), [({".agents/a.md": RULE}, ".agents/"), ({"AGENTS.md": RULE}, ".AGENTS/")])
def test_fixes_send_text_to_the_agents_folder_as_it_is_named_on_disk(tmp_path: Path, files: Tree, folder: str) -> None:
    assert rulefiles.searched_folder(project(tmp_path, files)) == folder


# --- what Codex cuts of the AGENTS.md chain ---------------------------------------------------------


def test_codex_cuts_each_chain_over_its_budget_root_first_and_mid_line(tmp_path: Path) -> None:
    """200 bytes in all, root first: pkg/ is cut 40 bytes short, pkg/deep/ is left out entirely
    (the budget is used up before it), lib/ is within the budget and nothing is said of it."""
    nested = filled("# Package rules\n\n", 120)
    corpus = project(
        tmp_path,
        {
            "AGENTS.md": filled("# Project rules\n\n", 120),
            "pkg/AGENTS.md": nested,
            "pkg/deep/AGENTS.md": filled("# Deep\n\n", 30),
            "lib/AGENTS.md": filled("# Library\n\n", 50),
        },
    )
    found = by_path(rulefiles.codex_chain(corpus, budget=200))
    assert set(found) == {"proj/pkg/AGENTS.md", "proj/pkg/deep/AGENTS.md"}
    cut = found["proj/pkg/AGENTS.md"]
    assert (cut.severity, cut.check) == ("warning", "codex-chain")
    line = nested.encode()[:80].count(b"\n") + 1
    assert (cut.start_line, cut.end_line) == (line, len(split_lines(nested)))
    kept, whole = nested[:80].rpartition("\n")[2], split_lines(nested)[line - 1]
    assert whole.startswith(kept) and 0 < len(kept) < len(whole)  # mid-line: part of the line is kept
    assert cut.message == (
        "working in pkg/ (or below), Codex reads the AGENTS.md chain proj/AGENTS.md (120 bytes) and "
        "proj/pkg/AGENTS.md (120 bytes): 240 bytes, over the 200 it reads (project_doc_max_bytes), root first, "
        f"cutting the rest without a word: it cuts this file in line {line}, mid-line, after 80 of its 120 bytes: "
        "40 bytes lost"
    )
    assert cut.fix.startswith("move at least 40 bytes of what not every task in pkg/ needs")
    assert "into .AGENTS/ files, which are searched instead of loaded whole" in cut.fix
    out = found["proj/pkg/deep/AGENTS.md"]
    assert (out.start_line, out.end_line) == (None, None)
    assert out.message.endswith(
        "the files before it use up the budget; proj/pkg/AGENTS.md is cut after 80 of its 120 bytes, "
        "so this file (30 bytes) is left out entirely"
    )


def test_a_top_agents_md_over_the_budget_alone_is_reported_once(tmp_path: Path) -> None:
    corpus = project(
        tmp_path,
        {
            "AGENTS.md": filled("# Project rules\n\n", 120),
            "pkg/AGENTS.md": filled("# Package\n\n", 60),
            "empty/AGENTS.md": "\n",  # Codex skips an empty one
        },
    )
    (found,) = rulefiles.codex_chain(corpus, budget=100)
    assert found.path == "proj/AGENTS.md"
    assert "this file alone has 120: Codex cuts it in line " in found.message
    assert "mid-line and without a word, losing its last 20 bytes" in found.message
    assert found.message.endswith("and leaves out every nested AGENTS.md (proj/pkg/AGENTS.md (60 bytes))")
    assert found.fix.startswith("move at least 20 bytes")


def test_chains_within_codexs_budget_get_nothing(tmp_path: Path) -> None:
    corpus = project(tmp_path, {"AGENTS.md": RULE, "pkg/AGENTS.md": RULE, "pkg/deep/AGENTS.md": RULE})
    assert rulefiles.codex_chain(corpus) == []
    assert rulefiles.codex_chain(corpus, budget=3 * len(RULE)) == []
    assert [f.path for f in rulefiles.codex_chain(corpus, budget=3 * len(RULE) - 1)] == ["proj/pkg/deep/AGENTS.md"]


# --- what the hook cannot send Claude Code whole ----------------------------------------------------


def test_pinned_files_over_the_hooks_limit_are_named_instead_of_sent(tmp_path: Path) -> None:
    """The project's AGENTS.md, which Claude Code loads itself, does not count."""
    limit = claude_code.HOOK.limit
    corpus = project(
        tmp_path,
        {
            "AGENTS.md": filled("# Project rules\n\n", 9_000),
            ".AGENTS/overview.md": filled("# Overview\n\n", 6_000),
            ".AGENTS/conventions.md": filled("# Conventions\n\n", 5_000),
        },
    )
    (found,) = rulefiles.hook_budget(corpus)
    assert (found.path, found.check, found.severity) == (".AGENTS/overview.md", "hook-pinned-budget", "warning")
    assert found.message.startswith(
        f"Claude Code takes at most 10,000 characters of a hook's added context, and the agents-context hook "
        f"sends at most {limit:,}: the 2 pinned files Claude Code does not load itself "
        "(.AGENTS/overview.md and .AGENTS/conventions.md) hold 10,998 characters"
    )
    assert found.message.endswith("the hook sends .AGENTS/overview.md in part or by name only")
    assert "proj/AGENTS.md" not in found.message
    assert "(the largest is this one, 6,000 characters)" in found.fix and f"fit in {limit:,}" in found.fix


def test_a_path_scoped_rule_over_the_hooks_limit_is_reported(tmp_path: Path) -> None:
    corpus = project(
        tmp_path,
        {
            "AGENTS.md": RULE,
            ".AGENTS/api.md": "---\nglobs: src/**\n---\n" + filled("# API rules\n\n", 9_800),
            ".AGENTS/reference.md": filled("# Reference\n\n", 12_000),  # searched, never sent by the hook
            "pkg/AGENTS.md": filled("# Package\n\n", 9_600),  # applies to its folder
            "src/app.py": "",
        },
    )
    found = by_path(rulefiles.hook_budget(corpus))
    assert set(found) == {".AGENTS/api.md", "proj/pkg/AGENTS.md"}
    assert all(f.check == "hook-rule-budget" for f in found.values())
    assert "this path-scoped rule has 9,822 characters" in found[".AGENTS/api.md"].message
    assert "this path-scoped rule has 9,600 characters" in found["proj/pkg/AGENTS.md"].message
    assert "into .AGENTS/ files without paths" in found[".AGENTS/api.md"].fix


def test_a_small_project_gets_no_budget_findings(tmp_path: Path) -> None:
    corpus = project(
        tmp_path,
        {
            "AGENTS.md": RULE,
            "pkg/AGENTS.md": RULE,
            ".AGENTS/overview.md": "# Overview\n\nWhat the project is about.\n",
            ".AGENTS/api.md": "---\nglobs: src/**\n---\n# API rules\n\nHandlers validate their input.\n",
            "src/app.py": "",
        },
    )
    assert rulefiles.codex_chain(corpus) == [] and rulefiles.hook_budget(corpus) == []
    assert rulefiles.always_on(corpus, 2048) == []
