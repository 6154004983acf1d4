"""What the hook keeps in the user's state folder, against what may be planted there: a record that
is not one is read as empty, a link is never followed, the sweep removes only the hook's own files,
the log stays bounded; the hook still answers, exits 0 and says nothing on stderr."""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from hook.sessions import MAX_LOG, record_path
from tests.conftest import write_tree
from tests.hook.test_main import PROJECT, context, edit, env_of, logged, quiet, run_hook
from writes.atomic import temporary_name
from writes.state import STATE_ENV

POSIX = os.name == "posix"
links = pytest.mark.skipif(not POSIX, reason="symlinks need privileges on Windows")


@pytest.fixture(autouse=True)
def state(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    folder = tmp_path / "state"
    monkeypatch.setenv(STATE_ENV, str(folder))  # record_path, here, names what the hook uses
    monkeypatch.delenv("CLAUDE_PROJECT_DIR", raising=False)
    yield folder


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return write_tree(tmp_path / "shop", PROJECT)


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    target = tmp_path / "precious.txt"
    target.write_text("PRECIOUS\n", encoding="utf-8")
    return target


def auth_edit(project: Path, session: str = "s1") -> str:
    return edit(project, str(project / "src/api/auth.ts"), session)


def given_rules(project: Path, state: Path, session: str = "s1") -> bool:
    """Whether an edit of `src/api/auth.ts` in this session is given its rules now."""
    done = run_hook(["claude-code"], auth_edit(project, session), env_of(state))
    assert (done.returncode, done.stderr) == (0, ""), done.stderr
    return "CLAUDE-API-MARK" in context(done.stdout)


@links
def test_a_link_planted_at_a_sessions_lock_is_not_followed(project: Path, state: Path, outside: Path) -> None:
    lock = record_path("claude-code", "s1").with_suffix(".lock")
    lock.symlink_to(outside)
    before = outside.stat()
    quiet(run_hook(["claude-code"], auth_edit(project), env_of(state)))
    after = outside.stat()
    assert outside.read_text(encoding="utf-8") == "PRECIOUS\n"
    assert (after.st_mode, after.st_size, after.st_mtime_ns) == (before.st_mode, before.st_size, before.st_mtime_ns)
    assert lock.is_symlink() and lock.name in logged(state)


@links
def test_a_link_planted_at_a_record_is_neither_read_nor_written_through(
    project: Path, state: Path, outside: Path
) -> None:
    where = record_path("claude-code", "s1")
    where.symlink_to(outside)
    assert given_rules(project, state)
    assert outside.read_text(encoding="utf-8") == "PRECIOUS\n"
    assert not where.is_symlink() and json.loads(where.read_text(encoding="utf-8"))["given"]


@pytest.mark.parametrize(
    "record",
    [b"{not json", b"[1, 2]", b'{"given": 7}', b'{"given": [1, {}]}', b"\xff\xfe", b"[" * 100_000, b" " * (2 << 20)],
    ids=["corrupt", "a list", "no list", "not keys", "not UTF-8", "nested", "huge"],
)
def test_a_record_that_is_not_one_is_read_as_empty(project: Path, state: Path, record: bytes) -> None:
    """It stopped every later event of the session (each failed reading it) until the sweep."""
    record_path("claude-code", "s1").write_bytes(record)
    assert given_rules(project, state)
    assert not given_rules(project, state)  # written back as a record: once per session again
    assert "session record" in logged(state)


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
def test_a_fifo_where_a_record_or_the_log_goes_never_blocks(project: Path, state: Path) -> None:
    os.mkfifo(record_path("claude-code", "s1"))
    os.mkfifo(state / "hook.log")
    assert given_rules(project, state)
    quiet(run_hook(["claude-code"], "{not json", env_of(state)))  # a line for the log, which is a FIFO


def old(path: Path, days: float = 8) -> Path:
    when = time.time() - days * 86_400
    os.utime(path, (when, when), follow_symlinks=False)
    return path


@links
def test_the_sweep_removes_only_the_hooks_own_old_files(project: Path, state: Path, outside: Path) -> None:
    """It removed anything in `sessions/` older than a week, whatever it was."""
    sessions = record_path("claude-code", "old").parent
    mine = [
        record_path("claude-code", "old"),
        record_path("claude-code", "old").with_suffix(".lock"),
        sessions / "codex-before_the_digest.json",  # the name a record had before
        sessions / "cursor-orphan-0123.lock",
        temporary_name(sessions / "cline-x-0123.json"),  # a write stopped midway
    ]
    foreign = [sessions / "notes.txt", sessions / "claude-code-photo.png"]
    for path in (*mine, *foreign):
        path.write_bytes(b"{}")
        old(path)
    recent = record_path("claude-code", "recent")
    recent.write_bytes(b"{}")
    folder = sessions / "claude-code-folder.json"
    folder.mkdir()
    old(folder)
    link = sessions / "gemini-cli-link.json"
    link.symlink_to(outside)
    old(link)
    old(outside)
    start = json.dumps(
        {"session_id": "new", "hook_event_name": "SessionStart", "cwd": str(project), "source": "startup"}
    )
    assert run_hook(["claude-code"], start, env_of(state)).returncode == 0
    assert not any(p.exists() for p in mine)
    assert recent.exists() and folder.is_dir() and link.is_symlink() and all(p.exists() for p in foreign)
    assert outside.read_text(encoding="utf-8") == "PRECIOUS\n"


@links
def test_the_log_is_never_written_through_a_link(project: Path, state: Path, outside: Path) -> None:
    state.mkdir()
    (state / "hook.log").symlink_to(outside)
    quiet(run_hook(["claude-code"], "{not json", env_of(state)))
    assert outside.read_text(encoding="utf-8") == "PRECIOUS\n"


def test_the_log_is_moved_aside_past_a_mebibyte(state: Path) -> None:
    state.mkdir()
    (state / "hook.log").write_bytes(b"x" * (MAX_LOG + 1))
    quiet(run_hook(["claude-code"], "{not json", env_of(state)))
    assert (state / "hook.log.1").stat().st_size == MAX_LOG + 1
    assert "a payload that is not JSON" in logged(state) and (state / "hook.log").stat().st_size < 1_000


@pytest.mark.parametrize("client", ["claude-code", "cline"])
def test_a_state_folder_that_is_a_file_or_relative_is_done_without(project: Path, tmp_path: Path, client: str) -> None:
    """No record, no log: nothing printed (or the host's empty answer), exit 0; and a relative
    folder (which would be the project's) is never written to."""
    silent = '{"cancel": false}\n' if client == "cline" else ""
    payload = auth_edit(project) if client == "claude-code" else "{}"
    blocked = tmp_path / "a-file"
    blocked.write_text("not a folder\n", encoding="utf-8")
    quiet(run_hook([client], payload, env_of(blocked)), silent)
    assert blocked.read_text(encoding="utf-8") == "not a folder\n"
    relative = {**env_of(blocked), STATE_ENV: "relative-state"}
    quiet(run_hook([client], payload, relative, cwd=project), silent)
    assert not (project / "relative-state").exists()


@pytest.mark.skipif(not POSIX or os.geteuid() == 0, reason="root writes into a read-only folder")
def test_a_state_folder_that_cannot_be_written_is_done_without(project: Path, state: Path) -> None:
    state.mkdir(mode=0o500)
    try:
        quiet(run_hook(["claude-code"], auth_edit(project), env_of(state)))
    finally:
        state.chmod(0o700)
