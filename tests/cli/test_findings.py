"""One finding of `doctor`: how severe it is (an error fails the run, a warning does not, a note is
only worth knowing), the file by its display path or what else it is about, the lines (a section's,
a range, or none for the whole file), what is wrong and how to fix it; and what doctor says clients
do to long instructions. doctor's own checks are tests/cli/test_doctor.py."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from cli.findings import INSTRUCTIONS_CUTS, Finding, finding, note, warn
from corpus.files import CorpusFile
from retrieval.chunks.units import sections_of
from retrieval.render import briefing
from tests.corpus.support import corpus_of

SECURITY = "# Security\n\nThe security policy.\n\n## Secrets\n\nNever print tokens.\nRotate them monthly.\n\n## Logging\n\nNo secrets in logs.\n"


@pytest.fixture
def security(make_tree: Callable[..., Path]) -> CorpusFile:
    corpus = corpus_of(make_tree({"security.md": SECURITY}))
    return corpus.files[".AGENTS/security.md"]


def test_a_warning_about_a_file_names_it_by_its_display_path(security: CorpusFile) -> None:
    found = warn(security, "vague-heading", "the heading says little", "name what the section is about")
    assert (found.severity, found.check, found.path) == ("warning", "vague-heading", ".AGENTS/security.md")
    assert (found.message, found.fix) == ("the heading says little", "name what the section is about")


def test_a_warning_about_the_whole_file_has_no_lines(security: CorpusFile) -> None:
    found = warn(security, "duplicate-rule", "the same text as x.md", "keep it in one file")
    assert (found.start_line, found.end_line) == (None, None)


def test_an_error_is_a_warning_that_fails_the_run(security: CorpusFile) -> None:
    assert warn(security, "credential", "looks like a key", "remove it", error=True).severity == "error"


def test_a_note_is_only_worth_knowing(security: CorpusFile) -> None:
    assert note(security, "outside-link", "links out of the root", "nothing to do").severity == "note"


def test_a_finding_about_a_section_gives_the_sections_first_and_last_lines(security: CorpusFile) -> None:
    secrets = next(u for u in sections_of(security) if u.heading == "Secrets")
    found = warn(security, "small-section", "too short", "merge it", secrets)
    assert (found.start_line, found.end_line) == (5, 8)
    lines = SECURITY.split("\n")
    assert (lines[4], lines[7]) == ("## Secrets", "Rotate them monthly.")  # from its heading to its last line


def test_a_finding_about_lines_gives_them_as_asked(security: CorpusFile) -> None:
    found = note(security, "front-matter", "not valid YAML", "fix it", (2, 2))
    assert (found.start_line, found.end_line) == (2, 2)


def test_a_finding_about_no_one_file_is_named_by_what_it_is_about() -> None:
    found = warn("(flags)", "flags", "--pin x matches no file", "drop the --pin")
    assert (found.path, found.severity, found.start_line) == ("(flags)", "warning", None)


def test_finding_takes_any_severity_as_given(security: CorpusFile) -> None:
    assert finding("error", security, "broken-link", "points nowhere", "fix the link", None).severity == "error"


def test_a_finding_is_written_as_json_with_every_field(security: CorpusFile) -> None:
    found = warn(security, "large-section", "900 words", "split it", (3, 40))
    assert json.loads(found.model_dump_json()) == {
        "severity": "warning",
        "check": "large-section",
        "path": ".AGENTS/security.md",
        "start_line": 3,
        "end_line": 40,
        "message": "900 words",
        "fix": "split it",
    }
    documented = Finding.model_json_schema()["properties"]
    assert documented["severity"]["description"].startswith("error (exit status 1), warning, or note")
    assert all(documented[name].get("description") for name in ("check", "path", "message", "fix"))


def test_the_cuts_doctor_names_include_the_one_the_instructions_budget_is_set_by() -> None:
    """The default instructions budget is what the earlier Claude Code versions keep."""
    assert f"earlier versions at {briefing.INSTRUCTIONS_BUDGET_CHARS:,}" in INSTRUCTIONS_CUTS
    assert "cut server instructions at 4,096 characters" in INSTRUCTIONS_CUTS
