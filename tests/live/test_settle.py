"""Settled reads: a save in progress is never indexed half-written; an emptied file is indexed empty once it stays so."""

from __future__ import annotations

import re
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from corpus.roots import make_roots
from live import changes as live_module
from live import settle
from live.changes import swept
from live.index import LiveIndex
from tests.live.support import changing, ranked

WRITER = """
import os, sys, time
path, stop = sys.argv[1], sys.argv[2]
n = 0
while not os.path.exists(stop):
    n += 1
    with open(path, "w") as out:  # truncate, then write in pieces: torn states sit on disk
        out.write(f"# Big\\n\\nBEGIN {n}\\n")
        for i in range(200):
            out.write(f"line {i} of version {n} " * 5 + "\\n")
            if i % 50 == 0:
                out.flush()
                time.sleep(0.001)
        out.write(f"END {n}\\n")
    time.sleep(0.002 if n % 2 else 0.06)  # a save right after the last one, then a rest
print(n)
"""


def test_a_file_caught_mid_save_is_never_indexed_torn(make_tree: Callable[..., Path]) -> None:
    """Sweeps run while another process saves a file over and over, in pieces: each sweep's
    index holds a whole version of it (never a torn one), and the last version once it is done."""
    root = make_tree({"big.md": "# Big\n\nBEGIN 0\nEND 0\n"})
    live = LiveIndex(make_roots([root]))
    (r,) = live.roots

    def indexed() -> str:
        text = live.corpus.files[".AGENTS/big.md"].text
        begin = re.search(r"^BEGIN (\d+)$", text, re.MULTILINE)
        assert begin is not None and text.endswith(f"\nEND {begin[1]}\n"), f"torn read indexed: {text[-60:]!r}"
        return begin[1]

    versions: set[str] = set()
    stop = root.parent / "stop"
    writer = subprocess.Popen([sys.executable, "-c", WRITER, str(root / "big.md"), str(stop)], stdout=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 120  # the writer saves until told: as many sweeps as a busy machine needs
        while len(versions) < 4 and time.monotonic() < deadline:
            live.sweep(r)
            versions.add(indexed())
        stop.touch()
        while writer.poll() is None:
            live.sweep(r)
            versions.add(indexed())
        last, _ = writer.communicate(timeout=60)
    finally:
        writer.kill()
        writer.wait()
    assert writer.returncode == 0
    assert len(versions - {"0"}) >= 3, "no sweep indexed the file while it was being saved"
    # The writer is done. A sweep that found the file changing left it `pending`, and a pending
    # file rewritten since is not waited for (a writer's loop would hold the root's lock): the
    # sweep right after a save that close is not the one to read it. Once the last save has held
    # still for `SETTLE_S`, the next sweep reads it (as the watcher's quiet tick or a call would).
    time.sleep(settle.SETTLE_S)
    live.sweep(r)
    assert indexed() == last.decode().strip()


def test_a_file_emptied_on_purpose_is_indexed_empty_once_it_stays_so(make_tree: Callable[..., Path]) -> None:
    """An empty read of a file that had text is held back (a save may have just truncated it) only
    until the file has stayed empty for a moment: then the empty file is what is indexed."""
    root = make_tree({"notes.md": "# Notes\n\nthe wombat paragraph\n"})
    live = LiveIndex(make_roots([root]))
    (r,) = live.roots
    (root / "notes.md").write_text("")
    live.sweep(r)
    assert live.corpus.files[".AGENTS/notes.md"].text.startswith("# Notes")  # maybe a save in progress
    deadline = time.monotonic() + 10
    while live.corpus.files[".AGENTS/notes.md"].text and time.monotonic() < deadline:
        time.sleep(0.05)
        live.sweep(r)
    assert live.corpus.files[".AGENTS/notes.md"].text == ""
    assert ranked(live, "wombat") == []


def test_files_changed_since_their_stat_are_read_again_after_one_pause_for_all(
    make_tree: Callable[..., Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Under churn nearly every file of a batch changed between the walk and its read. They are
    read again together, after one pause per retry round: a pause each made a batch of N files
    wait N times (40 files, 1.2 s; hundreds under thousands of operations a second, and a call's
    read-your-writes waited for batch after batch of them)."""
    root = make_tree({f"f{i:02}.md": f"# F{i}\n\nold words\n" for i in range(40)})
    live = LiveIndex(make_roots([root]))
    (r,) = live.roots
    for path in root.glob("*.md"):
        path.write_text(path.read_text() + "edited\n")
    real = swept  # what `live.index` calls

    def walk_then_write(*args: Any) -> Any:
        stale, batch = real(*args)
        for ref in stale:  # each file changes again after the walk stat'd it
            ref.path.write_text(ref.path.read_text() + "newer words\n")
        return stale, batch

    pauses: list[float] = []
    monkeypatch.setattr(live_module, "swept", walk_then_write)
    monkeypatch.setattr(settle, "time", SimpleNamespace(time=time.time, monotonic=time.monotonic, sleep=pauses.append))
    assert len(live.sweep(r).changed) == 40
    assert all(f.text.endswith("edited\nnewer words\n") for f in live.corpus.files.values())
    assert len(pauses) <= 2, pauses  # the settle wait, then one retry round for all 40
    assert changing(live, live.roots) == []


def test_no_retry_round_pauses_holding_a_root_someone_waits_for(
    make_tree: Callable[..., Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A retry round pauses (up to 0.2 s) holding the root's update lock. While a call or the
    watcher waits for that lock, the files that changed under the reads are left pending instead
    (their root says it is changing) and read by the next event or call: 20 sessions under a
    writer queued behind those pauses until their budgets ran out."""
    root = make_tree({"a.md": "# A\n\nold words\n"})
    live = LiveIndex(make_roots([root]))
    (r,) = live.roots
    (root / "a.md").write_text("# A\n\nedited\n")
    real = swept

    def walk_then_write(*args: Any) -> Any:
        stale, batch = real(*args)
        for ref in stale:  # changes again after the walk stat'd it
            ref.path.write_text(ref.path.read_text() + "newer words\n")
        return stale, batch

    pauses: list[float] = []
    monkeypatch.setattr(live_module, "swept", walk_then_write)
    monkeypatch.setattr(settle, "time", SimpleNamespace(time=time.time, monotonic=time.monotonic, sleep=pauses.append))
    live.syncs[r.label].lock.waiting = 1  # someone waits for the root's lock
    live.sweep(r)
    assert live.corpus.files[".AGENTS/a.md"].text == "# A\n\nold words\n"
    assert live.syncs[r.label].pending == {"a.md"} and changing(live, live.roots) == [".AGENTS:changing"]
    assert len(pauses) <= 1, pauses  # the settle wait at most, no retry round
    live.syncs[r.label].lock.waiting = 0
    monkeypatch.undo()
    live.sweep(r)
    assert live.corpus.files[".AGENTS/a.md"].text == "# A\n\nedited\nnewer words\n"
    assert changing(live, live.roots) == []


def test_a_file_rewritten_again_since_it_was_found_changing_is_not_waited_for(make_tree: Callable[..., Path]) -> None:
    """A file being rewritten faster than it settles (a writer's loop, a log) was found changing;
    rewritten again since, nobody waits for it holding the root's lock: it stays pending (its
    root says it is changing) and as indexed, until it holds still."""
    root = make_tree({"log.md": "# Log\n\nfirst entry\n"})
    live = LiveIndex(make_roots([root]), settle_s=2.0)  # "rewritten since" = within the last 2 s here
    (r,) = live.roots
    state = live.syncs[r.label]
    (root / "log.md").write_text("# Log\n\nsecond entry\n")
    state.pending.add("log.md")  # the last attempt found it changing
    live.sweep(r)
    assert live.corpus.files[".AGENTS/log.md"].text == "# Log\n\nfirst entry\n"
    assert state.pending == {"log.md"} and changing(live, [r]) == [".AGENTS:changing"]
    state.pending.discard("log.md")  # not found changing before: a save is waited for and read
    live.sweep(r)
    assert live.corpus.files[".AGENTS/log.md"].text == "# Log\n\nsecond entry\n" and not state.pending
