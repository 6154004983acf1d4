"""The live index on a real filesystem: exact incremental updates and editor reality."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from corpus.catalog import Change
from corpus.roots import Root, make_roots
from live.index import PATROL_S, LiveIndex
from retrieval.search.answer import WINDOWS
from retrieval.search.policy import served
from retrieval.search.retriever import RetrievalRequest

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


WRITER = """
import sys, time
path, versions = sys.argv[1], int(sys.argv[2])
for n in range(1, versions + 1):
    with open(path, "w") as out:  # truncate, then write in pieces: torn states sit on disk
        out.write(f"# Big\\n\\nBEGIN {n}\\n")
        for i in range(200):
            out.write(f"line {i} of version {n} " * 5 + "\\n")
            if i % 50 == 0:
                out.flush()
                time.sleep(0.001)
        out.write(f"END {n}\\n")
    time.sleep(0.002 if n % 2 else 0.06)  # a save right after the last one, then a rest
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
    writer = subprocess.Popen([sys.executable, "-c", WRITER, str(root / "big.md"), "80"])
    try:
        while writer.poll() is None:
            live.sweep(r)
            versions.add(indexed())
    finally:
        writer.kill()
        writer.wait()
    assert writer.returncode == 0
    assert len(versions) >= 3, "no sweep indexed the file while it was being saved"
    live.sweep(r)  # the writer is done: its last version settles now
    assert indexed() == "80"


def test_a_root_that_disappears_empties_the_index_until_it_returns(make_tree: Callable[..., Path]) -> None:
    root = make_tree({"a.md": "# A\n\nalpha\n"})
    live = LiveIndex(make_roots([root]))
    (r,) = live.roots
    shutil.rmtree(root)
    assert live.sweep(r).removed == {".AGENTS/a.md"}
    assert live.state[".AGENTS"].present is False and ranked(live, "alpha") == []
    root.mkdir()
    (root / "b.md").write_text("# B\n\nalpha again\n")
    assert live.sweep(r).added == {".AGENTS/b.md"}
    assert live.state[".AGENTS"].present is True


def test_verify_catches_edits_and_deletions_behind_hits(make_tree: Callable[..., Path]) -> None:
    docs = make_tree({"guide.md": "# Guide\n\nunique-word here\n", "other.md": "# Other\n\nunique-word too\n"}, "docs")
    agents = make_tree({"a.md": "# A\n"})
    live = LiveIndex(make_roots([agents], [docs]))
    with live.view() as view:
        hits = served(view.library, WINDOWS).retrieve(RetrievalRequest("unique word", 5))
    (docs / "guide.md").unlink()
    (docs / "other.md").write_text("# Other\n\nreplaced\n")
    assert live.verify(d.unit for d in hits) is True
    assert ranked(live, "unique word") == []
    assert live.verify(d.unit for d in hits) is False  # nothing left to fix


def test_verify_tells_hits_whose_file_another_update_changed_meanwhile(make_tree: Callable[..., Path]) -> None:
    docs = make_tree({"guide.md": "# Guide\n\nunique-word here\n"}, "docs")
    live = LiveIndex(make_roots([make_tree({"a.md": "# A\n"})], [docs]))
    with live.view() as view:
        hits = served(view.library, WINDOWS).retrieve(RetrievalRequest("unique word", 5))
        generation = view.generation
    (docs / "guide.md").write_text("# Guide\n\nreplaced\n")
    live.sweep(live.roots[1])  # the watcher, say, between the search and its check
    assert live.verify((d.unit for d in hits), generation) is True  # the disk agrees now, the hits do not
    assert live.verify((d.unit for d in hits), live.generation) is False


def one_pass(live: LiveIndex, root: Root, budget_s: float = PATROL_S) -> int:
    """Patrol steps until the root's fresh_as_of moves (a pass is complete); how many it took."""
    started = live.state[root.label].fresh_as_of
    for steps in range(1, 100):
        live.patrol(root, budget_s)
        if live.state[root.label].fresh_as_of != started:
            return steps
    raise AssertionError("the patrol pass never ended")


def test_a_patrol_pass_finds_new_changed_and_deleted_docs_a_folder_at_a_time(make_tree: Callable[..., Path]) -> None:
    agents = make_tree({"a.md": "# A\n\nalpha\n"})
    docs = make_tree({f"d{i}/f{j}.md": doc(WORDS[i : i + 3], f"h{i}{j}") for i in range(4) for j in range(3)}, "docs")
    live = LiveIndex(make_roots([agents], [docs]))
    root = live.roots[1]
    (docs / "d0" / "f0.md").write_text(doc(["kappa", "kappa"], "edited"))
    shutil.rmtree(docs / "d1")
    (docs / "new" / "deeper").mkdir(parents=True)
    (docs / "new" / "deeper" / "found.md").write_text(doc(["iota", "kappa"], "found"))
    (docs / "d2" / ".env").write_text("TOKEN=x\n")
    assert one_pass(live, root, budget_s=0) >= 6  # the top, d0, d2, d3, new, new/deeper: a step each
    fresh = LiveIndex(make_roots([agents], [docs]))
    assert sorted(live.corpus.files) == sorted(fresh.corpus.files)
    assert [(s.root.label, s.rel, s.reason) for s in live.corpus.skipped] == [
        ("docs", "d2/.env", "looks like a secret (denylist)")
    ]
    for query in [*QUERIES, "kappa", "found edited"]:
        assert ranked(live, query) == ranked(fresh, query)
    (docs / "d2" / ".env").unlink()
    shutil.rmtree(docs / "new")
    one_pass(live, root)
    assert live.corpus.skipped == []
    assert not any(p.startswith("docs/new/") for p in live.corpus.files)


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
