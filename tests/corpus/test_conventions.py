"""Each convention's files and front matter, read as its own tool means them: always, path-scoped
or searchable; a condition a tool does not have, or front matter that does not parse, leaves the
file to its convention's default and says why, with the line."""

from __future__ import annotations

from pathlib import Path

import pytest

from corpus.catalog import load
from corpus.conventions import convention_of, expand_braces, matches
from corpus.frontmatter import parse
from corpus.roots import make_roots
from live.codec import Saved, arrays, restore
from retrieval.engine.library import Library
from tests.conftest import write_tree
from tests.projects import EVERY_CONVENTION


@pytest.mark.parametrize(
    ("rel", "key"),
    [
        ("AGENTS.md", "AGENTS.md"),
        ("services/api/AGENTS.md", "AGENTS.md"),
        ("GEMINI.md", "GEMINI.md"),
        ("pkg/GEMINI.md", "GEMINI.md"),
        (".claude/rules/api.md", "claude"),
        (".claude/rules/backend/db.md", "claude"),
        (".claude/skills/pdf/SKILL.md", "skill"),
        (".claude/skills/pdf/references/forms.md", "skill"),
        (".agents/skills/notes/SKILL.md", "skill"),
        ("web/.cursor/rules/react.mdc", "cursor"),
        (".github/instructions/ts.instructions.md", "copilot"),
        (".windsurf/rules/sql.md", "windsurf"),
        (".windsurfrules", "windsurf"),
        (".devin/rules/infra.md", "devin"),
        (".clinerules", "cline"),
        (".clinerules/deep/go.md", "cline"),
        (".kiro/steering/product.md", "kiro"),
        # Not theirs: Kiro reads its folder flat, a skill is one folder deep, Cline reads markdown,
        # the one-file rules are at the project's top.
        (".kiro/steering/old/product.md", None),
        (".claude/skills/SKILL.md", None),
        (".claude/skills/pdf/scripts/run.md", None),
        (".clinerules/notes.txt", None),
        ("sub/.windsurfrules", None),
        ("docs/rules/api.md", None),
    ],
)
def test_each_file_belongs_to_its_convention(rel: str, key: str | None) -> None:
    found = convention_of(rel)
    assert (found.key if found else None) == key


@pytest.mark.parametrize(
    ("rel", "text", "always", "globs", "search_only"),
    [
        (".claude/rules/a.md", "# A\n", True, (), False),
        (".claude/rules/a.md", "---\npaths: src/api/**\n---\n", False, ("src/api/**",), False),
        (
            ".claude/rules/a.md",
            '---\npaths:\n  - "src/**/*.{ts,tsx}"\n  - lib/**\n---\n',
            False,
            ("src/**/*.{ts,tsx}", "lib/**"),
            False,
        ),
        (".clinerules/a.md", "---\npaths: [src/**]\n---\n", False, ("src/**",), False),
        (".clinerules/a.md", "# Always\n", True, (), False),
        (".windsurf/rules/a.md", "---\ntrigger: always_on\n---\n", True, (), False),
        (".windsurf/rules/a.md", "---\ntrigger: glob\nglobs: '*.sql, db/**'\n---\n", False, ("*.sql", "db/**"), False),
        (".windsurf/rules/a.md", "---\ntrigger: model_decision\ndescription: x\nglobs: db/**\n---\n", False, (), True),
        (".windsurf/rules/a.md", "---\ntrigger: manual\n---\n", False, (), True),
        (".windsurf/rules/a.md", "---\nglobs: db/**\n---\n", False, ("db/**",), False),  # as Devin infers it
        (".windsurf/rules/a.md", "# No front matter\n", False, (), True),
        (".windsurfrules", "# Legacy\n", True, (), False),
        (".devin/rules/a.md", "---\ntrigger: glob\nglobs: [infra/**]\n---\n", False, ("infra/**",), False),
        (".kiro/steering/a.md", "# Default\n", True, (), False),
        (".kiro/steering/a.md", "---\ninclusion: always\n---\n", True, (), False),
        (
            ".kiro/steering/a.md",
            "---\ninclusion: fileMatch\nfileMatchPattern: ['*.css', 'ui/**']\n---\n",
            False,
            ("*.css", "ui/**"),
            False,
        ),
        (".kiro/steering/a.md", "---\ninclusion: manual\n---\n", False, (), True),
        (".kiro/steering/a.md", "---\ninclusion: auto\nname: api\ndescription: x\n---\n", False, (), True),
        (".claude/skills/pdf/SKILL.md", "---\nname: pdf\ndescription: Read PDFs\n---\n", False, (), True),
        (
            ".cursor/rules/a.mdc",
            "---\nglobs: **/*.tsx, src/**\nalwaysApply: false\n---\n",
            False,
            ("**/*.tsx", "src/**"),
            False,
        ),
        (".cursor/rules/a.mdc", "---\nalwaysApply: true\nglobs: src/**\n---\n", True, (), False),
        (
            ".github/instructions/a.instructions.md",
            '---\napplyTo: "**/*.ts,**/*.tsx"\n---\n',
            False,
            ("**/*.ts", "**/*.tsx"),
            False,
        ),
        ("AGENTS.md", "# Guide\n", False, (), False),
    ],
)
def test_front_matter_means_what_its_tool_means(
    rel: str, text: str, always: bool, globs: tuple[str, ...], search_only: bool
) -> None:
    meta = parse(rel, text, convention_of(rel))
    assert (meta.always_apply, meta.globs, meta.search_only) == (always, globs, search_only)
    assert meta.problem is None


@pytest.mark.parametrize(
    ("rel", "text", "always", "problem"),
    [
        (".kiro/steering/a.md", "---\ninclusion: [always\n---\n# A\n", True, "line 2: not valid YAML ("),
        (
            ".claude/rules/a.md",
            "---\ntitle: x\npaths: {src: 1}\n---\n",
            True,
            "line 3: paths: expected a glob or a list",
        ),
        (
            ".windsurf/rules/a.md",
            "---\ndescription: d\ntrigger: sometimes\n---\n",
            False,
            "line 3: trigger: sometimes is not one of always_on, glob, model_decision, manual",
        ),
        (
            ".windsurf/rules/a.md",
            "---\ntrigger: glob\n---\n",
            False,
            "line 2: trigger: glob needs globs with the paths",
        ),
        (
            ".kiro/steering/a.md",
            "---\ninclusion: fileMatch\n---\n",
            True,
            "line 2: inclusion: fileMatch needs fileMatchPattern",
        ),
        (".cursor/rules/a.mdc", "---\n- a list\n---\n", False, "line 2: front matter is not `key: value` lines"),
    ],
)
def test_a_condition_that_cannot_be_used_leaves_the_default_and_says_why(
    rel: str, text: str, always: bool, problem: str
) -> None:
    meta = parse(rel, text, convention_of(rel))
    assert meta.always_apply is always and meta.globs == ()
    assert meta.problem is not None and meta.problem.startswith(problem), meta.problem


def test_cline_paths_as_a_string_are_honoured_with_a_note_that_cline_reads_only_lists() -> None:
    meta = parse(".clinerules/a.md", "---\npaths: src/**/*.go\n---\n", convention_of(".clinerules/a.md"))
    assert meta.globs == ("src/**/*.go",) and not meta.always_apply
    assert (
        meta.problem == "line 2: paths: Cline rules read only a YAML list (as a string, the rule applies to every file)"
    )


def test_cursor_globs_unquoted_are_not_a_problem() -> None:
    meta = parse(".cursor/rules/a.mdc", "---\nglobs: **/*.tsx\n---\n", convention_of(".cursor/rules/a.mdc"))
    assert meta.globs == ("**/*.tsx",) and meta.problem is None


@pytest.mark.parametrize(
    ("glob", "expanded"),
    [
        ("src/**/*.{ts,tsx}", ["src/**/*.ts", "src/**/*.tsx"]),
        ("{a,b}/{c,d}", ["a/c", "a/d", "b/c", "b/d"]),
        ("x.{a,{b,c}}", ["x.a", "x.b", "x.c"]),
        ("no-braces/**", ["no-braces/**"]),
        ("unclosed{a,b", ["unclosed{a,b"]),
    ],
)
def test_braces_expand_as_claude_code_and_kiro_write_them(glob: str, expanded: list[str]) -> None:
    assert expand_braces(glob) == expanded


def test_globs_match_paths_from_the_projects_top() -> None:
    assert matches("src/**/*.{ts,tsx}", "src/api/users.tsx")
    assert not matches("src/**/*.{ts,tsx}", "lib/src/users.ts")
    assert matches("*.py", "deep/down/x.py")  # gitignore syntax: a name alone matches at any depth


def test_what_a_convention_says_survives_the_cache(tmp_path: Path) -> None:
    """A restart from the cache serves each file as its convention says, problems included."""
    project = write_tree(tmp_path / "booking", EVERY_CONVENTION)
    root = next(r for r in make_roots([project / ".agents"], conventional=project) if r.include)
    corpus = load([root])
    files = sorted(corpus.in_root(root), key=lambda f: f.rel)
    library = Library()
    library.apply(
        {f.path: library.prepare(f.path, f.uri, f.text, f.searchable, f.meta.title, f.meta.tags) for f in files}
    )
    paths = [f.path for f in files]
    packed = arrays(root, "k", Saved(files, *library.pack(paths)))
    restored = {f.rel: f for f in restore(root, "k", packed).files}
    assert {rel: f.meta for rel, f in restored.items()} == {f.rel: f.meta for f in files}
    assert restored[".kiro/steering/broken.md"].meta.problem is not None
    assert restored[".windsurf/rules/manual.md"].meta.search_only
    assert ".agents/skills/release-notes/SKILL.md" not in restored  # the .agents folder is its own root


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("---\nx: !!int abc\npaths: [src/**]\n---\n", "line 2: not valid YAML (invalid literal for int()"),
        ("---\npaths: " + "[" * 5000 + "\n---\n", "line 2: not valid YAML ("),
        ("---\nx: !!python/object:os.system ls\n---\n", "line 2: not valid YAML (could not determine a constructor"),
    ],
)
def test_front_matter_pyyaml_refuses_leaves_the_file_served_with_its_default(text: str, problem: str) -> None:
    meta = parse(".claude/rules/r.md", text, convention_of(".claude/rules/r.md"))
    assert meta.always_apply and meta.globs == ()
    assert meta.problem is not None and meta.problem.startswith(problem), meta.problem


def test_dates_stay_text_and_unquoted_list_items_are_globs() -> None:
    rel = ".claude/rules/r.md"
    dated = parse(rel, "---\nupdated: 2024-02-30\ndescription: 2024-01-01\npaths: [src/**]\n---\n", convention_of(rel))
    assert (dated.description, dated.globs, dated.problem) == ("2024-01-01", ("src/**",), None)
    listed = parse(rel, "---\npaths:\n  - **/*.ts\n  - src/**\n---\n", convention_of(rel))
    assert (listed.globs, listed.always_apply, listed.problem) == (("**/*.ts", "src/**"), False, None)


def test_a_glob_that_cannot_be_matched_is_left_out_and_said() -> None:
    rel = ".cursor/rules/a.mdc"
    meta = parse(rel, '---\nglobs: ["src\\\\", "src/**"]\n---\n', convention_of(rel))
    assert meta.globs == ("src/**",)
    assert meta.problem == "line 2: globs: src\\ is not a glob this server can match, so it is left out"
    assert not matches("src\\", "src") and not matches("{a,b}" * 20, "a")  # never raises


def test_a_file_in_another_agents_folder_is_that_agents_rule() -> None:
    for rel, key in [
        (".clinerules/AGENTS.md", "cline"),
        (".claude/rules/CLAUDE.md", "claude"),
        (".kiro/steering/GEMINI.md", "kiro"),
    ]:
        found = convention_of(rel)
        assert found is not None and found.key == key, rel


def test_always_apply_pins_only_where_the_convention_has_it() -> None:
    text = "---\nalwaysApply: true\npaths: [src/**]\n---\n"
    assert not parse(".claude/rules/r.md", text, convention_of(".claude/rules/r.md")).always_apply
    skill = ".claude/skills/x/SKILL.md"
    assert not parse(skill, "---\nalwaysApply: true\n---\n", convention_of(skill)).always_apply
    assert parse(
        ".cursor/rules/r.mdc", "---\nalwaysApply: true\n---\n", convention_of(".cursor/rules/r.mdc")
    ).always_apply


def test_a_plain_agents_folder_reads_without_the_glob_library(tmp_path: Path) -> None:
    """Start-up stays light: an `.AGENTS` folder of plain files never needs pathspec."""
    import subprocess
    import sys

    write_tree(tmp_path / ".AGENTS", {"overview.md": "# Overview\n\nx\n", "skills/notes.md": "# Notes\n\ny\n"})
    code = (
        "import sys; from corpus.catalog import load; from corpus.roots import make_roots; "
        f"load(make_roots([__import__('pathlib').Path({str(tmp_path / '.AGENTS')!r})])); "
        "print('pathspec' in sys.modules)"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=Path(__file__).parents[2]
    )
    assert done.stdout.strip() == "False"
