"""`agents-context eval` with a questions file it cannot use: one line on stderr naming the file,
the line and what is wrong with it (the key missing, the value of the wrong type), exit status 2,
no traceback; through the real command."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from tests.helpers import cli

SHAPE = '{"question": "...", "expected_path": "..."} (with "expected_heading" and "also_acceptable" optional)'


@pytest.fixture
def agents(make_tree: Callable[..., Path]) -> Path:
    return make_tree({"deploy.md": "# Deploy\n\n## Rollback\n\nUse the rollback switch.\n"})


GOOD = '{"question": "rollback switch", "expected_path": "deploy.md"}\n'


@pytest.mark.parametrize(
    ("line", "why"),
    [
        ('{"question": "x"}', 'missing "expected_path"'),
        ('{"expected_path": "deploy.md"}', 'missing "question"'),
        ("not json", "not JSON (Expecting value: line 1 column 1 (char 0))"),
        ("[1, 2]", "a JSON list, not an object"),
        ('"just a string"', "a JSON string, not an object"),
        ('{"question": 7, "expected_path": "deploy.md"}', '"question" must be a non-empty string, not 7'),
        ('{"question": " ", "expected_path": "deploy.md"}', '"question" must be a non-empty string, not " "'),
        ('{"question": "x", "expected_path": null}', '"expected_path" must be a non-empty string, not null'),
        (
            '{"question": "x", "expected_path": "deploy.md", "expected_heading": 5}',
            '"expected_heading" must be a string, not 5',
        ),
        (
            '{"question": "x", "expected_path": "deploy.md", "also_acceptable": "a.md"}',
            '"also_acceptable" is a JSON string, not a list of objects',
        ),
        (
            '{"question": "x", "expected_path": "deploy.md", "also_acceptable": [3]}',
            'also_acceptable item 1 is a JSON number, not an object with "path" and "heading"',
        ),
        (
            '{"question": "x", "expected_path": "deploy.md", "also_acceptable": [{"heading": "Undo"}]}',
            'also_acceptable item 1 is missing "path"',
        ),
        (
            '{"question": "x", "expected_path": "deploy.md", "also_acceptable": [{"path": "a.md", "heading": []}]}',
            '"heading" of also_acceptable item 1 must be a string, not []',
        ),
    ],
)
def test_a_malformed_line_is_named_by_number_with_what_is_wrong(
    agents: Path, tmp_path: Path, line: str, why: str
) -> None:
    questions = tmp_path / "q.jsonl"
    questions.write_text(GOOD + "\n" + line + "\n", encoding="utf-8")  # the bad line is line 3
    done = cli("eval", str(questions), "--root", str(agents))
    assert done.returncode == 2, done.stderr
    assert done.stdout == ""
    (message,) = [m for m in done.stderr.splitlines() if not m.startswith("agents_context.progress")]
    assert message == f"agents_context: {questions}:3: {why}; each line is {SHAPE}"
    assert "Traceback" not in done.stderr and "KeyError" not in done.stderr and "pydantic" not in done.stderr


@pytest.mark.parametrize(
    ("content", "why"),
    [(b"\xff\xfe not utf-8\n", "it is not UTF-8 text"), (None, "No such file or directory")],
)
def test_a_questions_file_that_cannot_be_read_is_one_line(
    agents: Path, tmp_path: Path, content: bytes | None, why: str
) -> None:
    questions = tmp_path / "q.jsonl"
    if content is not None:
        questions.write_bytes(content)
    done = cli("eval", str(questions), "--root", str(agents))
    assert done.returncode == 2
    assert f"agents_context: {questions}: cannot read the questions file: {why}" in done.stderr.splitlines()
    assert "Traceback" not in done.stderr


def test_a_good_file_still_scores(agents: Path, tmp_path: Path) -> None:
    questions = tmp_path / "q.jsonl"
    questions.write_text(GOOD + "\n", encoding="utf-8")
    done = cli("eval", str(questions), "--root", str(agents))
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[0] == "questions: 1  hit@1: 1.000  hit@3: 1.000  MRR@10: 1.000"
