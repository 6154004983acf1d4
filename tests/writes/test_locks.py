"""`writes.locks`: one process at a time, never through a link, never truncating."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests.helpers import REPO
from writes.locks import LockTimeout, locked


def test_a_second_process_waits_for_the_first(tmp_path: Path) -> None:
    lock = tmp_path / "record.lock"
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            textwrap.dedent(f"""
                import sys
                from pathlib import Path
                from writes.locks import locked
                with locked(Path({str(lock)!r})):
                    print("locked", flush=True)
                    sys.stdin.read()
            """),
        ],
        cwd=REPO,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "locked"
        with pytest.raises(LockTimeout), locked(lock, timeout=0.2):
            pass
    finally:
        holder.communicate(timeout=30)
    with locked(lock, timeout=5):
        pass


@pytest.mark.skipif(sys.platform == "win32", reason="symbolic links need privileges on Windows")
def test_a_link_planted_where_the_lock_goes_is_refused_and_its_target_untouched(tmp_path: Path) -> None:
    victim = tmp_path / "bashrc"
    victim.write_text("export PATH=...\n")
    planted = tmp_path / "record.lock"
    planted.symlink_to(victim)
    with pytest.raises(OSError), locked(planted):
        pass
    assert victim.read_text() == "export PATH=...\n"


def test_a_lock_file_is_never_truncated(tmp_path: Path) -> None:
    lock = tmp_path / "x.lock"
    lock.write_text("someone's text\n")
    with locked(lock):
        pass
    assert lock.read_text() == "someone's text\n"


def test_a_folder_where_the_lock_goes_is_refused(tmp_path: Path) -> None:
    (tmp_path / "x.lock").mkdir()
    with pytest.raises(OSError), locked(tmp_path / "x.lock"):
        pass
