"""The persistent index: a restart reads the cache, not the files; entries are private, checked, discarded when damaged, pruned, and written by one server at a time."""

from __future__ import annotations

import logging
import os
import stat
import subprocess
import sys
import textwrap
import time
from collections import OrderedDict
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import platformdirs
import pytest
from mcp.client.stdio import get_default_environment

from corpus import listing, scan
from corpus.read import DEFAULT_MAX_BYTES
from corpus.roots import make_roots
from live import arrayfile, texts
from live.cache import ENV, IndexCache, default_dir
from live.codec import FORMAT
from retrieval.engine.ranking import DEFAULT
from tests.conftest import TEST_CACHE
from tests.helpers import cli
from tests.live.support import AGENTS, DOCS, assert_like_fresh, open_live, ranked


def test_a_restart_reads_the_cache_not_the_files_and_answers_exactly_like_a_fresh_build(
    trees: tuple[Path, Path], cache_dir: Path, reads: list[str]
) -> None:
    agents, docs = trees
    first = open_live(agents, docs, cache_dir)
    first.close()
    assert len(reads) == len(AGENTS) + len(DOCS)
    entries = sorted(cache_dir.glob("*.index"))
    assert len(entries) == 2  # one entry per root
    reads.clear()

    second = open_live(agents, docs, cache_dir)
    assert reads == []  # every file's stat matched: nothing re-read, nothing re-tokenized
    assert second.last_change is None
    reads.clear()
    assert_like_fresh(second, agents, docs)


def test_the_cache_is_readable_by_the_user_only(trees: tuple[Path, Path], cache_dir: Path) -> None:
    if os.name != "posix":
        pytest.skip("permission bits are POSIX")
    open_live(*trees, cache_dir).close()
    assert stat.S_IMODE(cache_dir.stat().st_mode) == 0o700
    for entry in cache_dir.iterdir():
        assert stat.S_IMODE(entry.stat().st_mode) == 0o600, entry.name


def test_changes_made_while_no_server_ran_are_found_on_restart(
    trees: tuple[Path, Path], cache_dir: Path, reads: list[str]
) -> None:
    agents, docs = trees
    open_live(agents, docs, cache_dir).close()
    (agents / "security.md").write_text("# Security\n\nomega rules now.\n")
    (agents / "C#.md").unlink()
    (agents / "new.md").write_text("# New\n\nlambda arrived.\n")
    (docs / "page03.md").write_text("# Page 3\n\nrewritten mu\n")
    reads.clear()

    live = open_live(agents, docs, cache_dir)
    assert sorted(reads) == ["new.md", "page03.md", "security.md"]  # only what moved
    assert [u for u, _, _ in ranked(live, "omega")] == [".AGENTS/security.md:1", ".AGENTS/security.md#0"]
    assert not any(unit_id.startswith(".AGENTS/C#.md") for unit_id, _, _ in ranked(live, "zeta"))
    assert_like_fresh(live, agents, docs)


def test_same_size_and_mtime_but_new_content_is_not_trusted_to_the_cache(
    trees: tuple[Path, Path], cache_dir: Path
) -> None:
    """An editor or a checkout can restore the mtime of a file it rewrote with as many bytes: the
    change time (and then the content digest) still catch it."""
    agents, docs = trees
    path = agents / "security.md"
    before = path.stat()
    open_live(agents, docs, cache_dir).close()
    text = path.read_text()
    path.write_text(text.replace("alpha beta", "omega pipe"))
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert path.stat().st_size == before.st_size

    live = open_live(agents, docs, cache_dir)
    assert [u for u, _, _ in ranked(live, "omega pipe")] == [".AGENTS/security.md:1", ".AGENTS/security.md#0"]
    assert_like_fresh(live, agents, docs)


def damage(entry: Path) -> Iterator[tuple[str, Callable[[], None]]]:
    original = entry.read_bytes()

    def truncate() -> None:
        entry.write_bytes(original[: len(original) // 2])

    def flip() -> None:
        data = bytearray(original)
        data[len(data) // 2] ^= 0xFF
        entry.write_bytes(bytes(data))

    def garbage() -> None:
        entry.write_bytes(b"not a cache at all")

    def foreign_array() -> None:  # intact bytes, arrays that disagree: a posting names no document
        arrays = dict(arrayfile.read(entry))
        arrays["w_docs"] = np.full_like(arrays["w_docs"], 10**9)
        with entry.open("wb") as out:
            arrayfile.write(out, arrays)

    def negative_frequency() -> None:  # a frequency no text can have (stored narrow, it would wrap)
        arrays = dict(arrayfile.read(entry))
        tfs = arrays["w_tfs"].astype(np.int32)
        tfs[0, 0] = -3
        arrays["w_tfs"] = tfs
        with entry.open("wb") as out:
            arrayfile.write(out, arrays)

    def short_column() -> None:  # one unit's heading missing: found at restore, not when it is shown
        arrays = dict(arrayfile.read(entry))
        arrays["w_heading"] = arrays["w_heading"][:-1]
        with entry.open("wb") as out:
            arrayfile.write(out, arrays)

    def short_file_column() -> None:  # one file's stamp missing: the files' columns disagree
        arrays = dict(arrayfile.read(entry))
        arrays["f_stat"] = arrays["f_stat"][:-1]
        with entry.open("wb") as out:
            arrayfile.write(out, arrays)

    yield from (
        ("truncated", truncate),
        ("a short column", short_column),
        ("a short file column", short_file_column),
        ("a flipped byte", flip),
        ("garbage", garbage),
        ("foreign", foreign_array),
        ("negative", negative_frequency),
    )


def test_a_damaged_entry_is_discarded_and_rebuilt_never_trusted(
    trees: tuple[Path, Path], cache_dir: Path, caplog: pytest.LogCaptureFixture
) -> None:
    agents, docs = trees
    open_live(agents, docs, cache_dir).close()
    entry = max(cache_dir.glob("*.index"), key=lambda p: p.stat().st_size)  # the docs root's
    pristine = entry.read_bytes()
    for name, spoil in damage(entry):
        entry.write_bytes(pristine)
        spoil()
        caplog.clear()
        live = open_live(agents, docs, cache_dir)
        assert "discarding the cache for docs" in caplog.text, name
        assert_like_fresh(live, agents, docs)
        live.close()
        assert entry.exists(), f"{name}: rebuilt and written again"
        pristine = entry.read_bytes()


@pytest.mark.skipif(sys.platform == "win32", reason="links and pipes of POSIX")
def test_a_link_or_a_pipe_planted_as_an_entry_is_never_read(
    trees: tuple[Path, Path], cache_dir: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A pipe would hang the start for ever; a link would read a file of anyone's choosing."""
    agents, docs = trees
    open_live(agents, docs, cache_dir).close()
    entry = max(cache_dir.glob("*.index"), key=lambda p: p.stat().st_size)  # the docs root's
    real = tmp_path / "real.index"
    entry.replace(real)
    for name in ("link", "pipe"):
        if name == "link":
            entry.symlink_to(real)
        else:
            os.mkfifo(entry)
        caplog.clear()
        live = open_live(agents, docs, cache_dir)
        assert "discarding the cache for docs" in caplog.text, name
        assert_like_fresh(live, agents, docs)
        live.close()
        assert entry.is_file() and not entry.is_symlink(), f"{name}: replaced by an entry of its own"
        entry.unlink()
    assert real.is_file()


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="needs to give files to another user")
def test_a_cache_folder_or_entry_of_another_user_is_never_trusted(
    trees: tuple[Path, Path], cache_dir: Path, caplog: pytest.LogCaptureFixture
) -> None:
    agents, docs = trees
    open_live(agents, docs, cache_dir).close()
    entries = sorted(cache_dir.glob("*.index"))
    os.chown(entries[0], 12345, 12345)
    caplog.clear()
    live = open_live(agents, docs, cache_dir)
    assert "discarding the cache" in caplog.text
    assert_like_fresh(live, agents, docs)
    live.close()
    os.chown(cache_dir, 12345, 12345)
    before = {p.name: p.stat().st_mtime_ns for p in cache_dir.iterdir()}
    caplog.clear()
    live = open_live(agents, docs, cache_dir)
    assert "belongs to another user" in caplog.text
    assert_like_fresh(live, agents, docs)
    live.close()
    assert {p.name: p.stat().st_mtime_ns for p in cache_dir.iterdir()} == before, "read, written or pruned"


def test_an_entry_written_for_another_root_or_format_is_not_used(
    make_tree: Callable[..., Path], cache_dir: Path, caplog: pytest.LogCaptureFixture
) -> None:
    one = make_tree({"a.md": "# A\n\nonly in one\n"}, name="one/.AGENTS")
    two = make_tree({"a.md": "# A\n\nonly in two\n"}, name="two/.AGENTS")
    store = IndexCache(cache_dir, DEFAULT.fingerprint)
    open_live(one, None, cache_dir).close()
    (entry,) = cache_dir.glob("*.index")
    (root_two,) = make_roots([two])
    key_two = store.key(root_two, ["conventions.md", "overview.md"], DEFAULT_MAX_BYTES)
    entry.rename(store.path(key_two))  # as if one root's entry sat under the other's name
    live = open_live(two, None, cache_dir)
    assert "written for another format or root" in caplog.text
    assert ranked(live, "two") and not ranked(live, "one")
    # A new format, tokenizer or ranking field set names another entry: the old one is never read.
    assert IndexCache(cache_dir, "other tokenizer").key(root_two, [], 1) != store.key(root_two, [], 1)
    assert FORMAT >= 2


def test_entries_nobody_wrote_for_a_month_are_pruned(make_tree: Callable[..., Path], cache_dir: Path) -> None:
    one = make_tree({"a.md": "# A\n\none\n"}, name="one/.AGENTS")
    two = make_tree({"a.md": "# A\n\ntwo\n"}, name="two/.AGENTS")
    open_live(one, None, cache_dir).close()
    (old,) = cache_dir.glob("*.index")
    month_ago = time.time() - 31 * 24 * 3600
    for path in cache_dir.iterdir():
        os.utime(path, (month_ago, month_ago))
    open_live(two, None, cache_dir).close()
    assert not old.exists()  # another root's entry, untouched for a month
    assert len(list(cache_dir.glob("*.index"))) == 1


def test_a_second_server_writing_the_same_entry_leaves_it_to_the_first(
    trees: tuple[Path, Path], cache_dir: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, "agents_context")
    agents, docs = trees
    store = IndexCache(cache_dir, DEFAULT.fingerprint)
    root = make_roots([agents], [docs])[1]
    lock = cache_dir / f"{store.key(root, [], DEFAULT_MAX_BYTES)}.lock"
    cache_dir.mkdir()
    holder = subprocess.Popen(  # another process holds the entry's lock, as a server writing it would
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
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "locked"
        live = open_live(agents, docs, cache_dir)
        assert "another server is writing the cache for docs" in caplog.text
        assert len(list(cache_dir.glob("*.index"))) == 1  # the .AGENTS entry only
        assert_like_fresh(live, agents, docs)  # serving is not affected
    finally:
        holder.communicate("", timeout=30)
    open_live(agents, docs, cache_dir).close()
    assert len(list(cache_dir.glob("*.index"))) == 2  # once the lock is free, the entry is written


def test_an_unwritable_cache_folder_only_costs_the_cache(
    trees: tuple[Path, Path], tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    live = open_live(*trees, blocker / "cache")
    assert "could not write the cache" in caplog.text
    assert_like_fresh(live, *trees)


def test_tests_use_a_cache_folder_of_their_own_by_construction(
    make_tree: Callable[..., Path], tmp_path_factory: pytest.TempPathFactory
) -> None:
    """No test can reach the user's real cache, whatever else runs on the machine: the environment
    names the session's own folder (in pytest's temporary folder) before anything starts,
    `default_dir` honours it, and every way the tests start a server passes it on."""
    assert os.environ[ENV] == str(TEST_CACHE)
    assert TEST_CACHE.is_dir() and TEST_CACHE.parent == tmp_path_factory.getbasetemp()
    assert default_dir() == TEST_CACHE
    assert default_dir({}) == Path(platformdirs.user_cache_dir("agents-context", appauthor=False)) != TEST_CACHE
    assert get_default_environment()[ENV] == str(TEST_CACHE)  # a server the MCP SDK starts, without env=
    agents = make_tree({"overview.md": "# Overview\n\nisolated\n"}, name="isolated-project/.AGENTS")
    done = cli("outline", "--root", str(agents))  # a real process, as the tests start them: no --cache-dir
    assert done.returncode == 0, done.stderr
    (entry,) = TEST_CACHE.glob("*isolated-project*.index")  # in the session's folder
    for made in TEST_CACHE.glob(f"{entry.stem}.*"):
        made.unlink()


def test_cache_flags_and_subcommand_through_the_real_entry_point(trees: tuple[Path, Path], tmp_path: Path) -> None:
    agents, docs = trees
    where = tmp_path / "cli-cache"
    done = cli("search", "alpha", "--root", str(agents), "--docs", str(docs), "--cache-dir", str(where))
    assert done.returncode == 0, done.stderr
    assert len(list(where.glob("*.index"))) == 2
    shown = cli("cache", "--cache-dir", str(where))
    assert shown.returncode == 0 and f"{where}: 2 entries" in shown.stdout  # the lock files are no entries
    assert str(agents) in shown.stdout and str(docs) in shown.stdout
    cleared = cli("cache", "clear", "--cache-dir", str(where))
    assert cleared.returncode == 0 and "removed 2 entries" in cleared.stdout
    assert list(where.iterdir()) == []

    none = tmp_path / "no-cache"
    done = cli("search", "alpha", "--root", str(agents), "--no-cache", "--cache-dir", str(none))
    assert done.returncode == 0 and not none.exists()

    inside = cli("search", "alpha", "--root", str(agents), "--cache-dir", str(agents / "cache"))
    assert inside.returncode == 2
    assert "is inside the corpus root" in inside.stderr and "--no-cache" in inside.stderr
    assert not (agents / "cache").exists()  # the server never writes to the corpus


def test_a_docs_roots_entry_holds_none_of_its_text_and_restores_it_from_the_files(
    trees: tuple[Path, Path], cache_dir: Path
) -> None:
    agents, docs = trees
    open_live(agents, docs, cache_dir).close()
    entries = {e.read_bytes().count(b"Pinned text about alpha.") > 0: e for e in cache_dir.glob("*.index")}
    assert set(entries) == {True, False}  # the .AGENTS entry holds its text
    docs_entry = entries[False].read_bytes()
    assert all(text.encode() not in docs_entry for text in DOCS.values())
    second = open_live(agents, docs, cache_dir)
    page = second.corpus.files["docs/page07.md"]
    assert not page.held and texts.content(page) == DOCS["page07.md"]
    assert all(f.held for f in second.corpus.files.values() if f.path.startswith(".AGENTS/"))


def test_the_log_says_when_each_root_is_up_to_date_with_the_disk(
    trees: tuple[Path, Path], cache_dir: Path, caplog: pytest.LogCaptureFixture
) -> None:
    agents, docs = trees
    with caplog.at_level(logging.INFO, logger="agents_context.index"):
        open_live(agents, docs, cache_dir).close()
        assert "docs: up to date with the disk" in caplog.text
        assert f"after its indexing began; files changed: {len(DOCS)}" in caplog.text
        caplog.clear()
        (docs / "page03.md").write_text("# Page 3\n\nrewritten while no server ran\n")
        open_live(agents, docs, cache_dir).close()
    lines = [r.getMessage() for r in caplog.records if "up to date with the disk" in r.getMessage()]
    assert sorted(line.split(":")[0] for line in lines) == [".AGENTS", "docs"]
    assert any(line.startswith("docs:") and line.endswith("after its check began; files changed: 1") for line in lines)


def test_a_restart_lists_again_only_the_folders_that_changed_while_no_server_ran(
    make_tree: Callable[..., Path], cache_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The cache keeps the folder listings of the last walk: a restart's first check lists no
    folder whose stamp held (a warm start of tldr listed 401 folders and sorted 38k names again),
    yet finds a file added meanwhile (its folder's stamp moved), and lists everything again when
    an ignore file changed."""
    monkeypatch.setattr(listing, "RACY_NS", 0)  # folders made a moment ago count as settled
    docs = make_tree({"a/one.md": "# One\n\nalpha\n", "b/two.md": "# Two\n\nbeta\n", "c/three.md": "# Three\n"}, "docs")
    agents = make_tree({"overview.md": "# Overview\n"})
    open_live(agents, docs, cache_dir).close()
    listed: list[str] = []
    real = scan._Walker._list

    def counted(self: Any, folder: str, prefix: str, stamp: Any) -> Any:
        if self.root.path == docs:
            listed.append(prefix)
        return real(self, folder, prefix, stamp)

    monkeypatch.setattr(scan._Walker, "_list", counted)
    monkeypatch.setattr(listing, "_store", OrderedDict())  # a new process: nothing walked yet
    live = open_live(agents, docs, cache_dir)
    assert listed == []
    assert_like_fresh(live, agents, docs)
    live.close()

    (docs / "b" / "new.md").write_text("# New\n\ngamma\n")
    monkeypatch.setattr(listing, "_store", OrderedDict())
    live = open_live(agents, docs, cache_dir)
    assert listed == ["b/"] and ranked(live, "gamma")
    live.close()

    listed.clear()
    (docs / ".gitignore").write_text("c/\n")
    monkeypatch.setattr(listing, "_store", OrderedDict())
    live = open_live(agents, docs, cache_dir)
    assert sorted(listed) == ["", "a/", "b/"]  # all again; c/ is ignored now, so not listed
    assert "docs/c/three.md" not in live.corpus.files and "docs/b/new.md" in live.corpus.files


def test_damaged_listings_discard_the_entry(
    trees: tuple[Path, Path], cache_dir: Path, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(listing, "RACY_NS", 0)  # folders made a moment ago count as settled
    agents, docs = trees
    open_live(agents, docs, cache_dir).close()
    entry = max(cache_dir.glob("*.index"), key=lambda p: p.stat().st_size)
    arrays = dict(arrayfile.read(entry))
    assert len(arrays["l_prefix"]) and len(arrays["l_entry"])  # listings are kept
    for name, spoil in (("l_entry", -5), ("l_entry_kind", 7), ("l_counts", 10**6)):
        broken = dict(arrays)
        broken[name] = np.full_like(arrays[name], spoil)
        with entry.open("wb") as out:
            arrayfile.write(out, broken)
        caplog.clear()
        live = open_live(agents, docs, cache_dir)
        assert "discarding the cache for docs" in caplog.text, name
        assert_like_fresh(live, agents, docs)
        live.close()
