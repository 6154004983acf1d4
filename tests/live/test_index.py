"""The live index: any sequence of file operations ends exactly like a fresh index; updates coalesce; hits are verified against the disk."""

from __future__ import annotations

import os
import shutil
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from corpus.catalog import Change
from corpus.read import SkipKind
from corpus.roots import make_roots
from live import changes as live_module
from live import sync as reading
from live.changes import swept
from live.index import LiveIndex
from live.settle import Came
from retrieval.search.policy import served
from retrieval.search.request import WINDOWS
from retrieval.search.retriever import RetrievalRequest
from tests.live.support import (
    QUERIES,
    WORDS,
    assert_like_fresh,
    big_docs_tree,
    changing,
    doc,
    indexing,
    open_live,
    ranked,
)


def assert_same_as_fresh(live: LiveIndex, root: Path) -> None:
    fresh = LiveIndex(make_roots([root]))
    assert sorted(live.corpus.files) == sorted(fresh.corpus.files)
    for query in QUERIES:
        assert ranked(live, query) == ranked(fresh, query)  # exact: same floats, same order


operations = st.lists(
    st.tuples(
        st.sampled_from(["add", "edit", "rename", "delete", "touch", "mkdir-move"]),
        st.integers(0, 9),
        st.integers(0, 9),
        st.lists(st.sampled_from(WORDS), min_size=0, max_size=30),
    ),
    min_size=20,
    max_size=60,
)


@settings(max_examples=25, deadline=None)
@given(operations, st.booleans())
def test_any_sequence_of_file_operations_ends_exactly_like_a_fresh_index(
    tmp_path_factory: pytest.TempPathFactory, ops: list[tuple[str, int, int, list[str]]], by_events: bool
) -> None:
    base = tmp_path_factory.mktemp("ops")
    root = base / ".AGENTS"
    root.mkdir()
    try:
        (root / "seed.md").write_text(doc(WORDS[:3], "seed"))
        live = LiveIndex(make_roots([root]), settle_s=0)
        (r,) = live.roots
        for op, a, b, words in ops:
            src, dst = root / f"f{a}.md", root / f"f{b}.md"
            touched: list[Path] = [src, dst]
            if op in ("add", "edit"):
                src.write_text(doc(words, f"h{a}"))
            elif op == "rename" and src.exists():
                src.replace(dst)
            elif op == "delete" and src.exists():
                src.unlink()
            elif op == "touch" and src.exists():
                os.utime(src, ns=(time.time_ns(), time.time_ns() + 1_000_000))
            elif op == "mkdir-move" and src.exists():
                (root / f"d{b}").mkdir(exist_ok=True)
                src.replace(root / f"d{b}" / src.name)
                touched.append(root / f"d{b}")
            if by_events:
                live.refresh(r, touched)
            else:
                live.sweep(r)
        assert_same_as_fresh(live, root)
    finally:
        shutil.rmtree(base)


def test_unchanged_files_are_never_re_tokenized(make_tree: Callable[..., Path]) -> None:
    root = make_tree({f"f{i}.md": doc(WORDS[i : i + 3], f"h{i}") for i in range(8)})
    live = LiveIndex(make_roots([root]))
    seen: list[str] = []
    tokenize = live.library.ranking.tokenize

    def counting(text: str) -> Sequence[str]:
        seen.append(text)
        return tokenize(text)

    live.library.ranking = live.library.ranking.but(tokenize=counting)
    (r,) = live.roots
    os.utime(root / "f1.md", ns=(time.time_ns(), time.time_ns() + 5_000_000))
    assert live.sweep(r).count == 0
    assert seen == []  # a touch re-reads and hashes, but does not re-tokenize
    (root / "f2.md").write_text(doc(["kappa"], "edited"))
    change = live.sweep(r)
    assert change.changed == {".AGENTS/f2.md"} and not change.added and not change.removed
    assert seen and all("edited" in text or "kappa" in text or text == "f2" for text in seen)  # f2's text and path


def test_a_bulk_change_is_one_coalesced_update(make_tree: Callable[..., Path]) -> None:
    root = make_tree({"a.md": "# A\n\nalpha\n"})
    live = LiveIndex(make_roots([root]))
    calls: list[Change] = []
    live.listeners.append(lambda _root, change: calls.append(change))
    generation = live.generation
    for i in range(300):  # a `git checkout` touching hundreds of files
        (root / f"bulk{i:03}.md").write_text(f"# Bulk {i}\n\nbeta {i}\n")
    (root / "a.md").unlink()
    change = live.sweep(live.roots[0])
    assert live.generation == generation + 1
    assert len(calls) == 1 and calls[0] == change
    assert len(change.added) == 300 and change.removed == {".AGENTS/a.md"}
    assert len(ranked(live, "beta")) == 600  # 300 sections and 300 windows


def test_an_atomic_save_replaces_the_file_and_is_reported_as_a_change(make_tree: Callable[..., Path]) -> None:
    root = make_tree({"notes.md": "# Notes\n\nold words\n"})
    live = LiveIndex(make_roots([root]))
    tmp = root / ".notes.md.tmp"
    tmp.write_text("# Notes\n\nnew words\n")
    tmp.replace(root / "notes.md")  # temp file + rename: watchers report `added` for an existing path
    change = live.refresh(live.roots[0], [tmp, root / "notes.md"])
    assert change.changed == {".AGENTS/notes.md"}
    assert [i for i, _, _ in ranked(live, "new")] == [".AGENTS/notes.md:1", ".AGENTS/notes.md#0"]
    assert ranked(live, "old") == []


def test_vim_backup_and_swap_files_are_never_indexed(make_tree: Callable[..., Path]) -> None:
    root = make_tree({"rules.md": "# Rules\n\nfirst version\n"})
    live = LiveIndex(make_roots([root]))
    (r,) = live.roots
    swap = root / ".rules.md.swp"
    swap.write_bytes(b"b0VIM 9.0\x00\x00binary swap")
    (root / "rules.md").replace(root / "rules.md~")  # vim's backup, then the new file
    (root / "rules.md").write_text("# Rules\n\nsecond version\n")
    (root / "4913").write_text("")  # vim's write test
    live.sweep(r)
    assert sorted(live.corpus.files) == [".AGENTS/rules.md"]
    assert {s.rel: s.reason for s in live.corpus.skipped} == {
        ".rules.md.swp": "editor temporary file",
        "4913": "editor temporary file",
        "rules.md~": "editor temporary file",
    }
    (root / "rules.md~").unlink()
    swap.unlink()
    (root / "4913").unlink()
    live.sweep(r)
    assert live.corpus.skipped == []
    assert ranked(live, "first") == [] and ranked(live, "second")


def test_paths_a_refresh_names_are_skipped_with_the_kind_of_their_reason(make_tree: Callable[..., Path]) -> None:
    """A watcher batch's paths are refused as a walk refuses them: each skip with its reason and
    the kind code decides on (what is ignored on purpose is `IGNORED`, whatever the sentence)."""
    root = make_tree({"rules.md": "# Rules\n\nthe rules\n", ".gitignore": "build/\n"})
    live = LiveIndex(make_roots([root]))
    (r,) = live.roots
    (root / "build").mkdir()
    (root / "build" / "a.md").write_text("# A\n")
    (root / "node_modules" / "pkg").mkdir(parents=True)
    (root / ".env").write_text("TOKEN=x\n")
    (root / "bin.md").write_bytes(b"a\0b")
    live.refresh(r, [root / "build", root / "node_modules" / "pkg", root / ".env", root / "bin.md"])
    assert {s.rel: (s.kind, s.reason) for s in live.corpus.skipped} == {
        "build": (SkipKind.IGNORED, "ignored by .gitignore"),
        "node_modules/pkg": (SkipKind.IGNORED, "inside an ignored folder"),
        ".env": (SkipKind.SECRET, "looks like a secret (denylist)"),
        "bin.md": (SkipKind.NOT_TEXT, "binary (contains NUL bytes)"),
    }


def test_a_root_that_disappears_empties_the_index_until_it_returns(make_tree: Callable[..., Path]) -> None:
    root = make_tree({"a.md": "# A\n\nalpha\n"})
    live = LiveIndex(make_roots([root]))
    (r,) = live.roots
    shutil.rmtree(root)
    assert live.sweep(r).removed == {".AGENTS/a.md"}
    assert live.syncs[".AGENTS"].present is False and ranked(live, "alpha") == []
    root.mkdir()
    (root / "b.md").write_text("# B\n\nalpha again\n")
    assert live.sweep(r).added == {".AGENTS/b.md"}
    assert live.syncs[".AGENTS"].present is True


def test_verify_catches_edits_and_deletions_behind_hits(make_tree: Callable[..., Path]) -> None:
    docs = make_tree({"guide.md": "# Guide\n\nunique-word here\n", "other.md": "# Other\n\nunique-word too\n"}, "docs")
    agents = make_tree({"a.md": "# A\n"})
    live = LiveIndex(make_roots([agents], [docs]))
    with live.view() as view:
        hits = served(view.library, WINDOWS).search(RetrievalRequest("unique word", 5)).docs
    (docs / "guide.md").unlink()
    (docs / "other.md").write_text("# Other\n\nreplaced\n")
    assert live.verify(d.unit for d in hits) is True
    assert ranked(live, "unique word") == []
    assert live.verify(d.unit for d in hits) is False  # nothing left to fix


def test_verify_tells_hits_whose_file_another_update_changed_meanwhile(make_tree: Callable[..., Path]) -> None:
    docs = make_tree({"guide.md": "# Guide\n\nunique-word here\n"}, "docs")
    live = LiveIndex(make_roots([make_tree({"a.md": "# A\n"})], [docs]))
    with live.view() as view:
        hits = served(view.library, WINDOWS).search(RetrievalRequest("unique word", 5)).docs
        generation = view.generation
    (docs / "guide.md").write_text("# Guide\n\nreplaced\n")
    live.sweep(live.roots[1])  # the watcher, say, between the search and its check
    assert live.verify((d.unit for d in hits), generation) is True  # the disk agrees now, the hits do not
    assert live.verify((d.unit for d in hits), live.generation) is False


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
        assert indexing(live, live.roots) == [f"big:{reading.CHUNK}/{n}"]
        assert len(live.corpus.in_root(live.roots[1])) == reading.CHUNK  # the first chunk is searchable
        assert [u for u, _, _ in ranked(live, "rules")] == [".AGENTS/rules.md:1", ".AGENTS/rules.md#0"]
        assert len(list(cache_dir.glob("*.index"))) == 1  # the .AGENTS entry: a half-read root is not cached
    finally:
        release.set()
    assert live.indexer is not None
    live.indexer.join(60)
    assert indexing(live, live.roots) == []
    assert len(live.corpus.in_root(live.roots[1])) == n
    assert f"indexing big: {n}/{n} files read" in messages
    # Read in two chunks, then merged: one segment per index, as a bulk build has.
    assert live.library.windows.n_segments == 1 and live.library.sections.n_segments == 1
    assert_like_fresh(live, agents, docs)
    live.close()
    assert len(list(cache_dir.glob("*.index"))) == 2  # the whole root is cached once read


def rewritten_after_the_stat(monkeypatch: pytest.MonkeyPatch, finder: str, text: str) -> None:
    """Every file the next sweep (`swept`) or refresh (`refreshed`) finds to read is written
    again right after it was stat'd: a save still under way when the read comes."""
    real = getattr(live_module, finder)

    def find_then_write(*args: Any) -> Any:
        found = real(*args)
        for ref in found[0]:
            ref.path.write_text(text)
        return found

    monkeypatch.setattr(live_module, finder, find_then_write)


def test_a_call_past_its_deadline_leaves_changing_files_as_indexed_and_says_so(
    make_tree: Callable[..., Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A call's sweep does not pause for files still being written once its deadline has passed:
    they stay as indexed, the root says it is changing and is not fresh as of the sweep; once the
    files hold still, the next sweep reads them and the root is fresh again."""
    root = make_tree({"a.md": "# A\n\nalpha\n", "b.md": "# B\n\nbeta\n"})
    live = LiveIndex(make_roots([root]))
    (r,) = live.roots
    fresh = live.syncs[r.label].fresh_as_of
    (root / "a.md").write_text("# A\n\ngamma gamma\n")
    rewritten_after_the_stat(monkeypatch, "swept", "# A\n\ndelta delta delta\n")
    live.sweep(r, time.monotonic())  # no time left to pause
    assert ranked(live, "alpha") and not ranked(live, "gamma") and not ranked(live, "delta")
    assert changing(live, live.roots) == [".AGENTS:changing"]
    assert live.syncs[r.label].fresh_as_of == fresh  # a change left unread: not fresh as of this sweep
    monkeypatch.undo()
    live.sweep(r)
    assert ranked(live, "delta") and not ranked(live, "alpha")
    assert changing(live, live.roots) == [] and live.syncs[r.label].fresh_as_of > fresh


def test_a_file_left_mid_write_that_goes_away_is_no_longer_changing(
    make_tree: Callable[..., Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    agents = make_tree({"a.md": "# A\n\nalpha\n"})
    docs = make_tree({"guide.md": "# Guide\n\nbeta\n"}, "docs")
    live = LiveIndex(make_roots([agents], [docs]))
    (root, docs_root) = live.roots
    (agents / "new.md").write_text("# New\n\ngamma\n")
    (docs / "new.md").write_text("# New\n\ngamma\n")
    rewritten_after_the_stat(monkeypatch, "swept", "# New\n\ngamma, still being written\n")
    rewritten_after_the_stat(monkeypatch, "refreshed", "# New\n\ngamma, still being written\n")
    live.sweep(root, time.monotonic())
    live.refresh(docs_root, [docs / "new.md"], time.monotonic())
    assert changing(live, live.roots) == [".AGENTS:changing", "docs:changing"]
    monkeypatch.undo()
    (agents / "new.md").unlink()  # the save never finished: the file went
    (docs / "new.md").unlink()
    live.sweep(root)
    live.retry_pending()  # what the watcher does after every batch
    assert changing(live, live.roots) == [] and not ranked(live, "gamma")


def test_a_call_waits_for_a_busy_root_only_until_its_budget_is_spent(make_tree: Callable[..., Path]) -> None:
    """The watcher's update of a root holds its lock for as long as it reads (under churn, one
    update after another): a call's read-your-writes waits for it at most its budget, then answers
    from the last complete generation, the root marked changing until an update catches up."""
    root = make_tree({"a.md": "# A\n\nalpha\n"})
    live = LiveIndex(make_roots([root]))
    (r,) = live.roots
    (root / "a.md").write_text("# A\n\nbeta beta\n")
    with live.syncs[r.label].lock:  # another update of the root, under way
        started = time.monotonic()
        live.catch_up(lambda _: True, budget_s=0.1)
        waited = time.monotonic() - started
        assert ranked(live, "alpha") and changing(live, live.roots) == [".AGENTS:changing"]
        with live.view() as view:
            hits = served(view.library, WINDOWS).search(RetrievalRequest("alpha", 5)).docs
        assert live.verify((d.unit for d in hits), live.generation, time.monotonic() + 0.1) is True  # stale, unfixed
    assert waited < 5.0  # generous: the budget is 0.1 s (it waited as long as the other update before)
    live.catch_up(lambda _: True)
    assert ranked(live, "beta") and not ranked(live, "alpha")
    assert changing(live, live.roots) == []


def test_past_its_deadline_a_call_reads_a_landed_bulk_change_whole_but_stops_under_churn(
    make_tree: Callable[..., Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A bulk change that has landed (nothing changes under the reads) is read whole by a call
    whatever its deadline: the answer after a `git checkout` holds all of it. Once a file has
    changed under a call's reads, though, it reads nothing more past its deadline (a writer could
    keep it reading forever): the rest stays as indexed, the root changing, until the next sweep."""
    root = make_tree({f"f{i:02}.md": f"# F{i}\n\nold words\n" for i in range(30)})
    live = LiveIndex(make_roots([root]))
    (r,) = live.roots
    for path in root.glob("*.md"):
        path.write_text(path.read_text() + "checked out\n")
    assert len(live.sweep(r, time.monotonic()).changed) == 30
    assert changing(live, live.roots) == []
    for path in root.glob("*.md"):
        path.write_text(path.read_text() + "churned\n")

    def first_rewritten(*args: Any) -> Any:
        stale, batch = swept(*args)
        first = min(stale, key=lambda ref: ref.rel)
        first.path.write_text(first.path.read_text() + "and again\n")
        stale.sort(key=lambda ref: ref.rel)
        return stale, batch

    monkeypatch.setattr(live_module, "swept", first_rewritten)
    live.sweep(r, time.monotonic())
    assert not any("churned" in f.text for f in live.corpus.files.values())  # f00 changing, the rest unread
    assert changing(live, live.roots) == [".AGENTS:changing"]
    monkeypatch.undo()
    assert len(live.sweep(r).changed) == 30
    assert changing(live, live.roots) == []


def test_calls_that_came_before_a_sweep_began_share_it(make_tree: Callable[..., Path]) -> None:
    """One catch-up for the calls queued behind another: a call needs the disk as it was when it
    came, which any sweep begun after that moment has seen."""
    root = make_tree({"a.md": "# A\n\nold words\n"})
    live = LiveIndex(make_roots([root]))
    (r,) = live.roots
    came = Came.now()
    live.sweep(r)  # someone's sweep, begun after the call came
    (root / "a.md").write_text("# A\n\nnew words\n")
    assert live.sweep(r, came=came).count == 0  # served by that sweep: none of its own
    assert live.corpus.files[".AGENTS/a.md"].text == "# A\n\nold words\n"
    assert live.sweep(r, came=Came.now()).count == 1  # a call that came after it sweeps
    assert live.corpus.files[".AGENTS/a.md"].text == "# A\n\nnew words\n"


def test_a_call_waits_for_its_files_to_settle_without_holding_the_root(make_tree: Callable[..., Path]) -> None:
    """A file saved just before a call is read once it holds still, and the call waits for that
    without the root's update lock: the watcher and the other calls go on meanwhile (they queued
    behind the pause before, one call after another)."""
    root = make_tree({"a.md": "# A\n\nalpha\n"})
    live = LiveIndex(make_roots([root]), settle_s=2.0)
    (r,) = live.roots
    (root / "a.md").write_text("# A\n\nbeta beta\n")
    call = threading.Thread(target=live.catch_up, args=(lambda _: True, 10.0))
    call.start()
    time.sleep(0.3)  # the call is pausing for the file now (2 s)
    with live.syncs[r.label].lock.held(time.monotonic() + 1.0) as held:
        assert held, "the call paused holding the root's lock"
    call.join(timeout=30)
    assert ranked(live, "beta") and not ranked(live, "alpha")  # read-your-writes all the same
    assert changing(live, live.roots) == []


def came_and_looked() -> Came:
    """A call that came and looked now, a clock tick before what the test saves next. A file's
    times come from the kernel's coarse clock, up to a tick (1-10 ms) behind `time.time_ns()`: a
    file saved right after the look could be dated before it, and be waited for as one saved
    before the call."""
    now = time.time_ns()
    time.sleep(0.02)
    return Came(time.monotonic(), now, look_ns=now)


def test_a_call_does_not_wait_for_a_file_saved_after_it_looked(make_tree: Callable[..., Path]) -> None:
    """A file saved after a call's sweep first looked (after the call came), and still settling,
    is no part of the disk that call must see: it is not waited for, when the sweep looks again.
    Whether it also changed before cannot be told, so it is left as indexed and the answer says
    its root is changing, until a sweep reads it once it is still."""
    root = make_tree({"a.md": "# A\n\nalpha\n", "b.md": "# B\n\nbravo\n"})
    live = LiveIndex(make_roots([root]), settle_s=2.0)
    (r,) = live.roots
    (root / "b.md").write_text("# B\n\nbefore the call\n")
    os.utime(root / "b.md", ns=(time.time_ns() - 10**10,) * 2)  # saved and settled before the call
    came = came_and_looked()  # came, looked, waited
    (root / "a.md").write_text("# A\n\nsaved after the call came\n")
    live.sweep(r, time.monotonic() + 30, came)
    assert live.corpus.files[".AGENTS/b.md"].text == "# B\n\nbefore the call\n"
    assert live.corpus.files[".AGENTS/a.md"].text == "# A\n\nalpha\n"
    assert changing(live, live.roots) == [".AGENTS:changing"]
    live.sweep(r)  # not a call's: waits for the file to hold still, and reads it
    assert live.corpus.files[".AGENTS/a.md"].text == "# A\n\nsaved after the call came\n"
    assert changing(live, live.roots) == []


def test_a_sweep_that_left_a_file_for_later_serves_no_call_that_came_after_it_was_saved(
    make_tree: Callable[..., Path],
) -> None:
    """Calls queued behind a sweep share it, but only if it read every file saved before they
    came: a call that came after a file the sweep left for later (saved after that sweep's call
    first looked) sweeps again, and reads it."""
    root = make_tree({"a.md": "# A\n\nalpha\n"})
    live = LiveIndex(make_roots([root]), settle_s=2.0)
    (r,) = live.roots
    first = came_and_looked()
    (root / "a.md").write_text("# A\n\nsaved between the two calls\n")
    second = Came.now()  # came after the file was saved: it must see it
    live.sweep(r, time.monotonic() + 30, first)
    assert live.corpus.files[".AGENTS/a.md"].text == "# A\n\nalpha\n"  # left for later
    live.sweep(r, time.monotonic() + 30, second)  # that sweep began after it came, all the same
    assert live.corpus.files[".AGENTS/a.md"].text == "# A\n\nsaved between the two calls\n"
    assert changing(live, live.roots) == []
