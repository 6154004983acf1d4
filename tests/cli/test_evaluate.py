"""`agents-context eval`, through the installed console script, as a user runs it."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

SCRIPT = Path(sys.executable).with_name("agents-context")


def run_eval(*args: str) -> subprocess.CompletedProcess[str]:
    if not SCRIPT.exists():
        pytest.fail(f"the console script is missing at {SCRIPT}: run uv sync")
    return subprocess.run([str(SCRIPT), "eval", *args], capture_output=True, text=True, timeout=60, check=False)


def write_questions(path: Path, rows: list[dict[str, object]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


@pytest.fixture
def agents(make_tree: Callable[..., Path]) -> Path:
    return make_tree(
        {
            "overview.md": "# Overview\n\nThe pinned overview mentions zeppelins.\n",
            "deploy.md": "# Deploy\n\n## Rollback\n\nUse the rollback switch.\n\n"
            "## Canary\n\nShip to one host first.\n",
            "security.md": "# Security\n\n## Secrets\n\nNever print tokens.\n",
        }
    )


def test_eval_prints_hit_rates_and_each_miss_with_the_top_hits(agents: Path, tmp_path: Path) -> None:
    questions = write_questions(
        tmp_path / "q.jsonl",
        [
            {"question": "rollback switch", "expected_path": "deploy.md", "expected_heading": "Rollback"},
            {"question": "never print tokens", "expected_path": ".AGENTS/security.md"},  # any section
            {"question": "ship to one host", "expected_path": "deploy.md", "expected_heading": "Blue green"},
            {
                "question": "zeppelins",
                "expected_path": "overview.md",
                "expected_heading": "Overview",
            },  # pinned: found too
            {"question": "no such file", "expected_path": "gone.md"},
        ],
    )
    done = run_eval(str(questions), "--root", str(agents))
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == "questions: 5  hit@1: 0.600  hit@3: 0.600  MRR@10: 0.600"
    assert "not in the top 3 (2):" in lines
    miss = lines.index("- ship to one host")
    assert lines[miss + 1] == "  want: .AGENTS/deploy.md > Blue green (not in the top 10)"
    assert lines[miss + 2].startswith("  1. .AGENTS/deploy.md > Canary (")
    gone = lines.index("- no such file")
    assert "  note: no such file in the corpus" in lines[gone + 1 : gone + 4]


def test_also_acceptable_sections_count_as_hits(agents: Path, tmp_path: Path) -> None:
    row: dict[str, object] = {
        "question": "rollback switch",
        "expected_path": "security.md",
        "expected_heading": "Secrets",
        "also_acceptable": [{"path": "deploy.md", "heading": "rollback"}],  # headings match case-insensitively
    }
    done = run_eval(str(write_questions(tmp_path / "q.jsonl", [row])), "--root", str(agents))
    assert done.stdout.splitlines() == ["questions: 1  hit@1: 1.000  hit@3: 1.000  MRR@10: 1.000"]


@pytest.mark.parametrize(
    ("content", "why"),
    [
        ('{"question": "x"}\n', 'q.jsonl:1: missing "expected_path"'),
        ("not json\n", "q.jsonl:1: not JSON"),
        ('\n{"question": "", "expected_path": "a.md"}\n', 'q.jsonl:2: "question" must be a non-empty string'),
    ],
)
def test_a_bad_questions_file_is_a_clear_error(agents: Path, tmp_path: Path, content: str, why: str) -> None:
    path = tmp_path / "q.jsonl"
    path.write_text(content, encoding="utf-8")
    done = run_eval(str(path), "--root", str(agents))
    assert done.returncode == 2
    assert why in done.stderr and done.stdout == ""


def test_a_missing_root_is_a_clear_error(tmp_path: Path) -> None:
    done = run_eval(str(write_questions(tmp_path / "q.jsonl", [])), "--root", str(tmp_path / "nope"))
    assert done.returncode == 2
    assert "does not exist" in done.stderr


def test_a_score_floor_outside_0_to_1_is_refused_before_serving(agents: Path) -> None:
    done = subprocess.run(
        [str(SCRIPT), "--root", str(agents), "--score-floor", "1.5"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode == 2
    assert "--score-floor must be between 0 and 1, not 1.5" in done.stderr
    assert done.stdout == ""
