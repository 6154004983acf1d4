"""What the hook keeps of each rule's parse between events is never stale and never trusted: a
rule edited between two events is given as it is now (even with its size and times put back),
and a memo that is not one is parsed afresh and replaced."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from hook.main import respond
from tests.conftest import write_tree
from writes.state import STATE_ENV

RULE = "---\nglobs: '**/*.ts'\ndescription: TypeScript\n---\n# TypeScript\n\nOLD-RULE. No default exports.\n"


@pytest.fixture(autouse=True)
def state(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    folder = tmp_path / "state"
    monkeypatch.setenv(STATE_ENV, str(folder))
    monkeypatch.delenv("CLAUDE_PROJECT_DIR", raising=False)
    yield folder


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return write_tree(tmp_path / "shop", {".cursor/rules/ts.mdc": RULE, "AGENTS.md": "# A\n", "src/a.ts": "x\n"})


def edit(project: Path, session: str) -> dict[str, Any]:
    return {
        "session_id": session, "hook_event_name": "PreToolUse", "cwd": str(project),
        "tool_name": "Edit", "tool_input": {"file_path": str(project / "src/a.ts")},
    }  # fmt: skip


def added(out: str) -> str:
    return str(json.loads(out)["hookSpecificOutput"]["additionalContext"]) if out else ""


def memo_files(state: Path) -> list[Path]:
    return sorted((state / "parses").glob("*.json"))


def test_a_rule_edited_between_events_is_given_as_it_is_now(project: Path, state: Path) -> None:
    assert "OLD-RULE" in added(respond("claude-code", edit(project, "one")))
    (memo,) = memo_files(state)
    assert "OLD-RULE" not in memo.read_text(encoding="utf-8")  # what a parse found, not the text
    rule = project / ".cursor/rules/ts.mdc"
    before = rule.stat()
    rule.write_text(RULE.replace("OLD-RULE", "NEW-RULE").replace("globs: '**/*.ts'", "globs: '**/a.ts'"), "utf-8")
    os.utime(rule, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert rule.stat().st_size == before.st_size  # the same size and times as before: only the bytes tell
    text = added(respond("claude-code", edit(project, "two")))
    assert "NEW-RULE" in text and "OLD-RULE" not in text
    assert 'applies="cursor globs: **/a.ts"' in text  # its front matter read again too


def test_a_memo_that_is_not_one_is_parsed_afresh_and_replaced(project: Path, state: Path) -> None:
    respond("claude-code", edit(project, "one"))
    (memo,) = memo_files(state)
    for planted in ("{not json", json.dumps({"version": 1, "files": {"x": {"meta": [1, 2], "spans": "no"}}}), "[]"):
        memo.write_text(planted, encoding="utf-8")
        assert "OLD-RULE" in added(respond("claude-code", edit(project, f"s-{planted[:3]}")))
        assert json.loads(memo.read_text(encoding="utf-8"))["version"] == 1


def test_a_link_planted_where_the_memo_goes_is_never_followed(project: Path, state: Path, tmp_path: Path) -> None:
    respond("claude-code", edit(project, "one"))
    (memo,) = memo_files(state)
    target = tmp_path / "elsewhere.json"
    target.write_text('{"version": 1, "files": {}}', encoding="utf-8")
    memo.unlink()
    memo.symlink_to(target)
    assert "OLD-RULE" in added(respond("claude-code", edit(project, "two")))
    assert target.read_text(encoding="utf-8") == '{"version": 1, "files": {}}'  # not written through
    assert not memo.is_symlink()  # replaced by a file of its own
