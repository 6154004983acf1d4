"""`writes.atomic`: a file is replaced whole or not at all, and keeps its mode and owner."""

from __future__ import annotations

import os
import stat
import sys
from pathlib import Path

import pytest

from writes.atomic import replacing, write_atomic

posix = pytest.mark.skipif(sys.platform == "win32", reason="POSIX permission bits")


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@posix
def test_a_private_file_stays_private(tmp_path: Path) -> None:
    config = tmp_path / ".mcp.json"
    config.write_text('{"DB_PASSWORD": "x"}\n')
    config.chmod(0o600)
    write_atomic(config, b'{"DB_PASSWORD": "x", "more": 1}\n')
    assert _mode(config) == 0o600
    assert config.read_bytes() == b'{"DB_PASSWORD": "x", "more": 1}\n'


@posix
def test_an_odd_mode_is_kept_too(tmp_path: Path) -> None:
    shared = tmp_path / "settings.json"
    shared.write_text("{}\n")
    shared.chmod(0o640)
    write_atomic(shared, b"{}\n\n")
    assert _mode(shared) == 0o640


@posix
def test_a_new_file_takes_the_mode_asked_for_else_the_umask(tmp_path: Path) -> None:
    write_atomic(tmp_path / "record.json", b"{}", mode=0o600)
    assert _mode(tmp_path / "record.json") == 0o600
    old = os.umask(0o027)
    try:
        write_atomic(tmp_path / "config.json", b"{}")
    finally:
        os.umask(old)
    assert _mode(tmp_path / "config.json") == 0o640


def test_a_failed_write_leaves_the_target_as_it_was_and_nothing_beside_it(tmp_path: Path) -> None:
    target = tmp_path / "config.json"
    target.write_text("before\n")
    with pytest.raises(RuntimeError), replacing(target) as out:
        out.write(b"half of the new")
        raise RuntimeError("the disk is full")
    assert target.read_text() == "before\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["config.json"]


@posix
def test_a_link_at_the_target_is_replaced_not_followed(tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere.txt"
    elsewhere.write_text("the user's own file\n")
    link = tmp_path / "hook.json"
    link.symlink_to(elsewhere)
    write_atomic(link, b"ours\n", mode=0o600)
    assert elsewhere.read_text() == "the user's own file\n"
    assert not link.is_symlink() and link.read_text() == "ours\n"


@posix
def test_a_file_planted_at_the_temporary_name_is_never_written_through(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The new file is created exclusively: a name already taken (or a link) is an error, never
    a file opened and truncated."""
    victim = tmp_path / "victim"
    victim.write_text("keep me\n")
    from writes import atomic

    planted = tmp_path / ".target.planted.tmp"
    planted.symlink_to(victim)
    monkeypatch.setattr(atomic, "temporary_name", lambda target: planted)
    with pytest.raises(OSError):
        write_atomic(tmp_path / "target", b"x")
    assert victim.read_text() == "keep me\n"


@posix
@pytest.mark.skipif(not hasattr(os, "getgroups") or os.geteuid() != 0, reason="needs to own files as another user")
def test_the_owner_and_group_are_kept_where_they_may_be_set(tmp_path: Path) -> None:
    target = tmp_path / "theirs.json"
    target.write_text("{}\n")
    os.chown(target, 12345, 23456)
    target.chmod(0o640)
    write_atomic(target, b"{ }\n")
    found = target.stat()
    assert (found.st_uid, found.st_gid, _mode(target)) == (12345, 23456, 0o640)
