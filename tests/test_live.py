"""The live index on a real filesystem: exact incremental updates and editor reality."""

from __future__ import annotations

import os
import shutil
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from corpus.roots import make_roots
from retrieval.live import Change, LiveIndex
from retrieval.retriever import RetrievalRequest

QUERIES = ["alpha", "beta gamma", "delta delta epsilon", "zeta eta theta iota", "heading"]
WORDS = "alpha beta gamma delta epsilon zeta eta theta iota kappa".split()


def ranked(live: LiveIndex, query: str) -> list[tuple[str, int | None, float]]:
    """Every unit that matches, straight from the engine (no redundancy filter, no floor)."""
    with live.view() as view:
        terms = view.library.tokenize(query)
        sections = view.library.sections.search(terms, 1000)
        windows = view.library.windows.search(terms, 1000)
    return [(h.payload.id, h.payload.chunk_id, h.score) for h in (*sections, *windows)]


def assert_same_as_fresh(live: LiveIndex, root: Path) -> None:
    fresh = LiveIndex(make_roots([root]))
    assert sorted(live.corpus.files) == sorted(fresh.corpus.files)
    for query in QUERIES:
        assert ranked(live, query) == ranked(fresh, query)  # exact: same floats, same order


def doc(rng_words: Sequence[str], heading: str) -> str:
    return f"# {heading}\n\n{' '.join(rng_words)}\n\n## Sub {heading}\n\n{' '.join(reversed(rng_words))}\n"


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
    ops: list[tuple[str, int, int, list[str]]], by_events: bool
) -> None:
    base = Path(tempfile.mkdtemp(prefix="ac-live"))
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


def test_a_file_caught_mid_save_is_never_indexed_torn(make_tree: Callable[..., Path]) -> None:
    root = make_tree({"big.md": "# Big\n\nBEGIN 0\nEND 0\n"})
    live = LiveIndex(make_roots([root]))
    (r,) = live.roots
    stop = threading.Event()

    def writer() -> None:  # rewrites the file in small chunks: torn states exist on disk
        n = 0
        while not stop.is_set():
            n += 1
            with (root / "big.md").open("w") as out:
                out.write(f"# Big\n\nBEGIN {n}\n")
                for i in range(200):
                    out.write(f"line {i} of version {n} " * 5 + "\n")
                    if i % 50 == 0:
                        out.flush()
                        time.sleep(0.001)
                out.write(f"END {n}\n")

    thread = threading.Thread(target=writer)
    thread.start()
    try:
        deadline = time.monotonic() + 2
        while time.monotonic() < deadline:
            live.sweep(r)
    finally:
        stop.set()
        thread.join()
    live.sweep(r)  # the writer is done: whatever was pending settles now
    text = live.corpus.files[".AGENTS/big.md"].text
    begin = text.split("BEGIN ", 1)[1].split("\n", 1)[0]
    assert text.rstrip().endswith(f"END {begin}"), "the final index holds a torn read"


def test_a_root_that_disappears_empties_the_index_until_it_returns(make_tree: Callable[..., Path]) -> None:
    root = make_tree({"a.md": "# A\n\nalpha\n"})
    live = LiveIndex(make_roots([root]))
    (r,) = live.roots
    shutil.rmtree(root)
    assert live.sweep(r).removed == {".AGENTS/a.md"}
    assert live.present[".AGENTS"] is False and ranked(live, "alpha") == []
    root.mkdir()
    (root / "b.md").write_text("# B\n\nalpha again\n")
    assert live.sweep(r).added == {".AGENTS/b.md"}
    assert live.present[".AGENTS"] is True


def test_verify_catches_edits_and_deletions_behind_hits(make_tree: Callable[..., Path]) -> None:
    docs = make_tree({"guide.md": "# Guide\n\nunique-word here\n", "other.md": "# Other\n\nunique-word too\n"}, "docs")
    agents = make_tree({"a.md": "# A\n"})
    live = LiveIndex(make_roots([agents], [docs]))
    with live.view() as view:
        hits = view.library.window_retriever.retrieve(RetrievalRequest("unique word", 5))
    (docs / "guide.md").unlink()
    (docs / "other.md").write_text("# Other\n\nreplaced\n")
    assert live.verify(d.unit for d in hits) is True
    assert ranked(live, "unique word") == []
    assert live.verify(d.unit for d in hits) is False  # nothing left to fix
