"""The persistent index on a real filesystem: a restart reads the cache instead of the files, the
cache is never trusted over the disk, a damaged entry is discarded, and nothing is written where
it must not be (the corpus, the user's real cache)."""

from __future__ import annotations

import logging
import os
import stat
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import anyio
import numpy as np
import pytest
from mcp import Client

from cli.settings import Settings
from corpus.read import DEFAULT_MAX_BYTES
from corpus.roots import make_roots
from live import arrayfile, persist
from live import index as live_module
from live.cache import ENV, IndexCache, default_dir
from live.codec import FORMAT
from live.index import LiveIndex
from live.settle import Settler
from retrieval.engine.ranking import DEFAULT
from server import create_server
from tests.conftest import TEST_CACHE
from tests.helpers import eventually, search, split_status, text_of
from tests.test_cli import cli
from tests.test_live import QUERIES, ranked

AGENTS = {
    "overview.md": "# Overview\n\nPinned text about alpha.\n",
    "security.md": "# Security\n\nalpha beta rules.\n\n## Secrets\n\ngamma delta secrets.\n",
    "notes/deploy.md": "---\ntitle: Deploy notes\n---\n# Deploy\n\nbeta epsilon deploy.\n",
    "C#.md": "# Sharp\n\nzeta eta theta.\n",
    "plain.txt": "iota kappa plain text\nwithout headings\n",
}
DOCS = {f"page{i:02d}.md": f"# Page {i}\n\nalpha {'beta ' * (i % 4)}gamma{i} heading\n" for i in range(30)}


@pytest.fixture
def cache_dir(tmp_path: Path) -> Path:
    return tmp_path / "cache"


@pytest.fixture
def reads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The files the live index reads from disk (the real reader, counted)."""
    seen: list[str] = []
    real = Settler._read_settled

    def counted(self: Settler, root: Any, ref: Any) -> Any:
        seen.append(ref.rel)
        return real(self, root, ref)

    monkeypatch.setattr(Settler, "_read_settled", counted)
    return seen


def open_live(agents: Path, docs: Path | None, cache_dir: Path | None, **kwargs: Any) -> LiveIndex:
    roots = make_roots([agents], [docs] if docs else [])
    store = IndexCache(cache_dir, DEFAULT.fingerprint) if cache_dir else None
    return LiveIndex(roots, cache=store, settle_s=0, **kwargs)


def assert_like_fresh(live: LiveIndex, agents: Path, docs: Path | None) -> None:
    fresh = open_live(agents, docs, None)
    assert sorted(live.corpus.files) == sorted(fresh.corpus.files)
    for path, f in fresh.corpus.files.items():
        assert live.corpus.files[path].text == f.text
        assert live.corpus.files[path].meta == f.meta
        assert live.corpus.files[path].pinned == f.pinned
    for query in [*QUERIES, "alpha beta", "secrets", "deploy notes", "sharp", "plain text", "gamma7"]:
        assert ranked(live, query) == ranked(fresh, query)  # exact: same units, floats and order
    with live.view() as view, fresh.view() as other:
        units = {u.id: u for p in live.corpus.files for u in view.library.sections.payloads(p)}
        expected = {u.id: u for p in fresh.corpus.files for u in other.library.sections.payloads(p)}
        assert units == expected  # text, lines, headings, trails and anchors restored exactly


@pytest.fixture
def trees(make_tree: Callable[..., Path]) -> tuple[Path, Path]:
    return make_tree(AGENTS), make_tree(DOCS, name="docs")


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

    yield from (("truncated", truncate), ("a flipped byte", flip), ("garbage", garbage), ("foreign", foreign_array))


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
                from filelock import FileLock
                with FileLock({str(lock)!r}):
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


def big_docs_tree(make_tree: Callable[..., Path]) -> tuple[Path, Path, int]:
    """A small .AGENTS and a docs root of one chunk and a bit more: read in two batches."""
    agents = make_tree({"overview.md": "# Overview\n\nhi\n", "rules.md": "# Rules\n\nalpha rules\n"})
    n = live_module.CHUNK + 150
    docs = make_tree({f"d{i:05d}.md": f"# Doc {i}\n\nalpha word{i}\n" for i in range(n)}, name="big")
    return agents, docs, n


def held_after_first_chunk(at_boundary: threading.Event, release: threading.Event) -> Callable[[str], None]:
    """A progress hook that holds the background read after its first batch until `release`."""

    def progress(message: str) -> None:
        if "files read" in message and not at_boundary.is_set():
            at_boundary.set()
            release.wait(60)

    return progress


def test_background_indexing_answers_from_what_is_ready_marked_partial(
    make_tree: Callable[..., Path], cache_dir: Path
) -> None:
    """A large docs root is read in chunks in a background thread; until it is done, answers come
    from what is ready and say so. (The progress callback holds the indexer at a chunk boundary, so
    the test sees the partial state for certain.)"""
    agents, docs, n = big_docs_tree(make_tree)
    at_boundary, release = threading.Event(), threading.Event()
    messages: list[str] = []

    def progress(message: str) -> None:
        messages.append(message)
        if "files read" in message and not at_boundary.is_set():
            at_boundary.set()
            release.wait(60)

    live = open_live(agents, docs, cache_dir, background=True, progress=progress)
    try:
        assert at_boundary.wait(60)
        assert live.indexing(live.roots) == [f"big:{live_module.CHUNK}/{n}"]
        assert len(live.corpus.in_root(live.roots[1])) == live_module.CHUNK  # the first chunk is searchable
        assert [u for u, _, _ in ranked(live, "rules")] == [".AGENTS/rules.md:1", ".AGENTS/rules.md#0"]
        assert len(list(cache_dir.glob("*.index"))) == 1  # the .AGENTS entry: a half-read root is not cached
    finally:
        release.set()
    assert live.indexer is not None
    live.indexer.join(60)
    assert live.indexing(live.roots) == []
    assert len(live.corpus.in_root(live.roots[1])) == n
    assert f"indexing big: {n}/{n} files read" in messages
    # Read in two chunks, then merged: one segment per index, as a bulk build has.
    assert live.library.windows.n_segments == 1 and live.library.sections.n_segments == 1
    assert_like_fresh(live, agents, docs)
    live.close()
    assert len(list(cache_dir.glob("*.index"))) == 2  # the whole root is cached once read


def test_tests_never_touch_the_users_real_cache() -> None:
    assert os.environ[ENV] == str(TEST_CACHE)
    assert default_dir() == TEST_CACHE
    assert default_dir({}) != TEST_CACHE  # what a user gets: platformdirs' cache folder


def test_cache_flags_and_subcommand_through_the_real_entry_point(trees: tuple[Path, Path], tmp_path: Path) -> None:
    agents, docs = trees
    where = tmp_path / "cli-cache"
    done = cli("search", "alpha", "--root", str(agents), "--docs", str(docs), "--cache-dir", str(where))
    assert done.returncode == 0, done.stderr
    assert len(list(where.glob("*.index"))) == 2
    shown = cli("cache", "--cache-dir", str(where))
    assert shown.returncode == 0 and f"{where}: 4 files" in shown.stdout  # two entries, two lock files
    cleared = cli("cache", "clear", "--cache-dir", str(where))
    assert cleared.returncode == 0 and "removed 4 files" in cleared.stdout
    assert list(where.iterdir()) == []

    none = tmp_path / "no-cache"
    done = cli("search", "alpha", "--root", str(agents), "--no-cache", "--cache-dir", str(none))
    assert done.returncode == 0 and not none.exists()

    inside = cli("search", "alpha", "--root", str(agents), "--cache-dir", str(agents / "cache"))
    assert inside.returncode == 2
    assert "is inside the corpus root" in inside.stderr and "--no-cache" in inside.stderr
    assert not (agents / "cache").exists()  # the server never writes to the corpus


def test_a_root_saved_while_it_changes_is_never_half_written(trees: tuple[Path, Path], cache_dir: Path) -> None:
    """Entries are replaced by an atomic rename: a reader sees the old entry or the new one."""
    agents, docs = trees
    live = open_live(agents, docs, cache_dir)
    live.close()
    for i in range(5):
        (docs / f"page{i:02d}.md").write_text(f"# Page {i}\n\nnu{i} xi\n")
        live.refresh(live.roots[1], [docs / f"page{i:02d}.md"])
        live.save(live.roots[1])
        assert not list(cache_dir.glob("*.tmp"))
        assert_like_fresh(open_live(agents, docs, cache_dir), agents, docs)


@pytest.mark.anyio
async def test_while_a_docs_root_is_indexed_the_tools_answer_partial_with_the_progress(
    make_tree: Callable[..., Path], cache_dir: Path
) -> None:
    """Through a real MCP client: the server is up before a large docs root is read; search_docs
    answers from what is ready, marked `partial=1 indexing=label:done/total`, and
    context_status says INDEXING; once read, answers are whole again."""
    agents, docs, n = big_docs_tree(make_tree)
    at_boundary, release = threading.Event(), threading.Event()
    live = open_live(agents, docs, cache_dir, background=True, progress=held_after_first_chunk(at_boundary, release))
    server = create_server(live, Settings(agents=(agents,), docs=(docs,)))
    try:
        async with Client(server) as client:
            assert await anyio.to_thread.run_sync(at_boundary.wait, 60)
            _, fields = split_status(await search(client, "alpha", "search_docs"))
            assert fields["partial"] == "1" and fields["indexing"] == f"big:{live_module.CHUNK}/{n}"
            status = text_of(await client.call_tool("context_status", {}))
            assert f"INDEXING {live_module.CHUNK}/{n}" in status
            _, fields = split_status(await search(client, "alpha rules"))
            assert "partial" not in fields  # context_search reads .AGENTS only, which is whole
            release.set()
            await eventually(lambda: not live.building, timeout=60)
            _, fields = split_status(await search(client, f"word{n - 1}", "search_docs"))
            assert "partial" not in fields and "indexing" not in fields and fields["hits"] == "1"
    finally:
        release.set()
        live.close()


def test_a_root_changed_while_serving_is_written_again_once_idle(
    trees: tuple[Path, Path], cache_dir: Path, monkeypatch: pytest.MonkeyPatch, reads: list[str]
) -> None:
    monkeypatch.setattr(persist, "SAVE_IDLE_S", 0.2)
    agents, docs = trees
    live = open_live(agents, docs, cache_dir)
    entry = max(cache_dir.glob("*.index"), key=lambda p: p.stat().st_size)
    written = entry.stat().st_mtime_ns
    (docs / "page05.md").write_text("# Page 5\n\nrho changed while serving\n")
    live.refresh(live.roots[1], [docs / "page05.md"])
    deadline = time.monotonic() + 30
    while entry.stat().st_mtime_ns == written and time.monotonic() < deadline:
        time.sleep(0.05)
    assert entry.stat().st_mtime_ns != written  # rewritten in the background, without a close()
    reads.clear()
    restarted = open_live(agents, docs, cache_dir)
    assert reads == []  # the new entry already holds the edit
    assert [u for u, _, _ in ranked(restarted, "rho")] == ["docs/page05.md#0"]
    live.close()


def test_exit_writes_only_small_roots_and_stops_a_background_read_promptly(
    make_tree: Callable[..., Path], cache_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(live_module, "SAVE_ON_EXIT_FILES", 10)
    agents, docs, _ = big_docs_tree(make_tree)
    at_boundary, release = threading.Event(), threading.Event()
    live = open_live(agents, docs, cache_dir, background=True, progress=held_after_first_chunk(at_boundary, release))
    assert at_boundary.wait(60)
    (agents / "rules.md").write_text("# Rules\n\nomega rules\n")
    live.refresh(live.roots[0], [agents / "rules.md"])
    closing = threading.Thread(target=live.close)
    closing.start()
    release.set()
    closing.join(60)
    assert not closing.is_alive()
    assert live.indexer is not None and not live.indexer.is_alive()
    assert "big" in live.building  # the read was cut short, not finished...
    assert len(list(cache_dir.glob("*.index"))) == 1  # ...and not cached; the changed .AGENTS root is

    def spoiled(self: Settler, root: Any, ref: Any) -> Any:
        raise AssertionError(f"{ref.rel} was read again")

    monkeypatch.setattr(Settler, "_read_settled", spoiled)
    restarted = LiveIndex(make_roots([agents]), cache=IndexCache(cache_dir, DEFAULT.fingerprint))
    assert ranked(restarted, "omega")  # from the entry written at exit
