"""The store: one generation behind one lock, changed only by `apply`, with listeners told afterwards."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from corpus.catalog import Change, load
from corpus.files import CorpusFile
from corpus.read import Refusal, SkipKind
from corpus.roots import Root, make_roots
from corpus.scan import SECRET, SkippedFile
from live import store as store_module
from live.changes import Batch
from live.store import Store
from retrieval.engine.ranking import DEFAULT

TREE = {
    "overview.md": "# Overview\n\nPinned alpha.\n",
    "security.md": "# Security\n\nbeta rules.\n\n## Secrets\n\ngamma secrets.\n",
    "notes/deploy.md": "# Deploy\n\ndelta deploy.\n",
}


def make_store(*folders: Path, docs: tuple[Path, ...] = ()) -> Store:
    return Store(make_roots(list(folders), list(docs)), None, 1024 * 1024, DEFAULT)


def batch_of(store: Store, root: Root, files: list[CorpusFile] | None = None) -> Batch:
    """A batch adding (or changing) these files of `root` (all of its files on disk by default),
    each with its prepared units, as a sweep would build it."""
    if files is None:
        files = load([root]).in_root(root)
    return Batch(
        files={f.rel: f for f in files},
        prepared={
            f.path: store.library.prepare(f.path, f.uri, f.text, f.searchable, f.meta.title, f.meta.tags) for f in files
        },
    )


def reread(root: Root, rel: str) -> CorpusFile:
    (f,) = (f for f in load([root]).in_root(root) if f.rel == rel)
    return f


def last_error(store: Store) -> str | None:
    """The store's last error, read afresh (an update changes it behind the type checker's back)."""
    return store.last_error


def units_of(store: Store, word: str) -> list[str]:
    with store.view() as view:
        terms = view.library.tokenize(word)
        return sorted(h.payload.id for h in view.library.windows.search(terms, 100))


def test_applying_a_batch_that_changes_files_makes_one_new_generation(make_tree: Callable[..., Path]) -> None:
    store = make_store(make_tree(TREE))
    (root,) = store.roots
    change = store.apply(root, batch_of(store, root))
    assert store.generation == 1
    assert change.added == {".AGENTS/overview.md", ".AGENTS/security.md", ".AGENTS/notes/deploy.md"}
    assert not change.changed and not change.removed
    with store.view() as view:
        assert view.generation == 1 and view.last_change == change
        assert sorted(view.corpus.files) == [".AGENTS/notes/deploy.md", ".AGENTS/overview.md", ".AGENTS/security.md"]
    assert units_of(store, "gamma") == [".AGENTS/security.md#0"]


def test_a_file_applied_again_with_new_content_is_changed_and_a_removed_one_is_gone(
    make_tree: Callable[..., Path],
) -> None:
    folder = make_tree(TREE)
    store = make_store(folder)
    (root,) = store.roots
    store.apply(root, batch_of(store, root))
    (folder / "security.md").write_text("# Security\n\nepsilon rules.\n")
    change = store.apply(root, batch_of(store, root, [reread(root, "security.md")]))
    assert change.changed == {".AGENTS/security.md"} and not change.added and not change.removed
    assert units_of(store, "gamma") == [] and units_of(store, "epsilon") == [".AGENTS/security.md#0"]
    change = store.apply(root, Batch(removed={"notes/deploy.md"}))
    assert change.removed == {".AGENTS/notes/deploy.md"} and not change.added and not change.changed
    assert store.generation == 3
    assert ".AGENTS/notes/deploy.md" not in store.corpus.files and "notes/deploy.md" not in store.files_of(root)
    assert units_of(store, "delta") == []


def test_each_listener_is_told_once_per_update_with_the_root_and_its_change(make_tree: Callable[..., Path]) -> None:
    store = make_store(make_tree(TREE))
    (root,) = store.roots
    first: list[tuple[Root, Change]] = []
    second: list[tuple[Root, Change]] = []
    store.listeners.append(lambda r, c: first.append((r, c)))
    store.listeners.append(lambda r, c: second.append((r, c)))
    change = store.apply(root, batch_of(store, root))
    assert first == [(root, change)] and second == [(root, change)]


def test_a_listener_is_told_after_the_lock_is_released_so_it_can_read_the_new_generation(
    make_tree: Callable[..., Path],
) -> None:
    store = make_store(make_tree(TREE))
    (root,) = store.roots
    seen: list[tuple[int, list[str]]] = []

    def listener(_root: Root, _change: Change) -> None:
        with store.view() as view:  # would deadlock if told while the update still held the lock
            seen.append((view.generation, sorted(view.corpus.files)))

    store.listeners.append(listener)
    applying = threading.Thread(target=store.apply, args=(root, batch_of(store, root)), daemon=True)
    applying.start()
    applying.join(30)
    assert not applying.is_alive(), "the listener deadlocked on the view lock"
    assert seen == [(1, [".AGENTS/notes/deploy.md", ".AGENTS/overview.md", ".AGENTS/security.md"])]


def test_a_batch_that_changes_no_content_makes_no_generation_and_tells_no_listener(
    make_tree: Callable[..., Path],
) -> None:
    folder = make_tree(TREE)
    store = make_store(folder)
    (root,) = store.roots
    store.apply(root, batch_of(store, root))
    told: list[Change] = []
    store.listeners.append(lambda _r, c: told.append(c))
    last = store.last_change

    assert store.apply(root, Batch()).count == 0  # nothing at all
    secret = SkippedFile(root, ".env", Refusal(SkipKind.SECRET, SECRET))
    assert store.apply(root, Batch(skipped={".env": secret})).count == 0  # only a skip
    touched = reread(root, "overview.md")._replace(mtime_ns=123)
    assert store.apply(root, Batch(files={"overview.md": touched})).count == 0  # a new stamp, same content

    assert store.generation == 1 and store.last_change is last and told == []
    assert store.corpus.skipped == [secret]  # what was skipped is still recorded
    assert store.corpus.files[".AGENTS/overview.md"].mtime_ns == 123  # and the new stamp kept
    assert not store.changed_after([".AGENTS/overview.md"], 1)


def test_an_unskipped_file_leaves_the_skipped_list(make_tree: Callable[..., Path]) -> None:
    store = make_store(make_tree(TREE))
    (root,) = store.roots
    secret = SkippedFile(root, ".env", Refusal(SkipKind.SECRET, SECRET))
    store.apply(root, Batch(skipped={".env": secret}))
    assert store.corpus.skipped == [secret]
    store.apply(root, Batch(unskipped={".env"}))
    assert store.corpus.skipped == []


def test_the_skipped_files_of_all_roots_are_listed_by_root_then_path(make_tree: Callable[..., Path]) -> None:
    store = make_store(make_tree(TREE), docs=(make_tree({"a.md": "# A\n"}, name="docs"),))
    agents, docs = store.roots
    store.apply(docs, Batch(skipped={"z.bin": SkippedFile(docs, "z.bin", Refusal(SkipKind.NOT_TEXT, "binary"))}))
    store.apply(
        agents,
        Batch(skipped={r: SkippedFile(agents, r, Refusal(SkipKind.NOT_TEXT, "binary")) for r in ("b.bin", "a.bin")}),
    )
    assert [(s.root.label, s.rel) for s in store.corpus.skipped] == [
        (".AGENTS", "a.bin"),
        (".AGENTS", "b.bin"),
        ("docs", "z.bin"),
    ]


def test_a_failed_update_keeps_the_generation_and_says_why(
    make_tree: Callable[..., Path], caplog: pytest.LogCaptureFixture
) -> None:
    store = make_store(make_tree(TREE))
    (root,) = store.roots
    store.apply(root, batch_of(store, root))
    try:
        raise PermissionError("cannot read security.md")
    except PermissionError as exc:
        change = store.failed(root, exc)
    assert change.count == 0
    assert store.generation == 1 and store.corpus.files  # the last generation is still served
    assert store.last_error == "PermissionError: cannot read security.md"
    assert "still serving generation 1" in caplog.text


def test_the_next_successful_update_clears_the_last_error(make_tree: Callable[..., Path]) -> None:
    folder = make_tree(TREE)
    store = make_store(folder)
    (root,) = store.roots
    store.apply(root, batch_of(store, root))
    store.failed(root, ValueError("boom"))
    assert last_error(store) == "ValueError: boom"
    (folder / "overview.md").write_text("# Overview\n\nzeta now.\n")
    store.apply(root, batch_of(store, root, [reread(root, "overview.md")]))
    assert last_error(store) is None and store.generation == 2


def test_an_update_that_changes_nothing_also_clears_the_last_error(make_tree: Callable[..., Path]) -> None:
    store = make_store(make_tree(TREE))
    (root,) = store.roots
    store.failed(root, OSError("disk gone"))
    assert last_error(store) == "OSError: disk gone"
    store.apply(root, Batch())
    assert last_error(store) is None and store.generation == 0


def test_changed_after_tells_which_paths_changed_after_a_generation(make_tree: Callable[..., Path]) -> None:
    folder = make_tree(TREE)
    store = make_store(folder)
    (root,) = store.roots
    store.apply(root, batch_of(store, root))  # generation 1: all three added
    (folder / "security.md").write_text("# Security\n\nchanged.\n")
    store.apply(root, batch_of(store, root, [reread(root, "security.md")]))  # generation 2
    store.apply(root, Batch(removed={"notes/deploy.md"}))  # generation 3

    assert store.changed_after([".AGENTS/overview.md"], 0)
    assert not store.changed_after([".AGENTS/overview.md"], 1)
    assert store.changed_after([".AGENTS/security.md"], 1)
    assert not store.changed_after([".AGENTS/security.md"], 2)
    assert store.changed_after([".AGENTS/notes/deploy.md"], 2)  # a removal is a change too
    assert not store.changed_after([".AGENTS/notes/deploy.md"], 3)
    assert store.changed_after([".AGENTS/overview.md", ".AGENTS/notes/deploy.md"], 2)  # any of them
    assert not store.changed_after([".AGENTS/never-there.md"], 0)
    assert not store.changed_after([], 0)


def test_root_of_names_the_root_a_display_path_is_in(make_tree: Callable[..., Path]) -> None:
    store = make_store(make_tree(TREE), docs=(make_tree({"a.md": "# A\n"}, name="docs"),))
    agents, docs = store.roots
    assert store.root_of(".AGENTS/security.md") is agents
    assert store.root_of("docs/deep/a.md") is docs
    assert store.root_of("elsewhere/a.md") is None


def test_a_search_that_comes_after_a_queued_update_answers_from_the_new_generation(
    make_tree: Callable[..., Path],
) -> None:
    """A search holds the view; an update queues for it; a search arriving after the update waits
    behind it (the turnstile), so back-to-back searches cannot starve the update."""
    store = make_store(make_tree(TREE))
    (root,) = store.roots
    batch = batch_of(store, root)
    searching, release = threading.Event(), threading.Event()
    later: list[int] = []

    def long_search() -> None:
        with store.view():
            searching.set()
            release.wait(30)

    def next_search() -> None:
        with store.view() as view:
            later.append(view.generation)

    first = threading.Thread(target=long_search, daemon=True)
    first.start()
    assert searching.wait(30)
    update = threading.Thread(target=store.apply, args=(root, batch), daemon=True)
    update.start()
    deadline = time.monotonic() + 30
    while not store._turnstile.locked() and time.monotonic() < deadline:  # until the update is queued
        time.sleep(0.001)
    second = threading.Thread(target=next_search, daemon=True)
    second.start()
    second.join(0.2)
    assert second.is_alive() and later == []  # waits behind the queued update
    release.set()
    for t in (first, update, second):
        t.join(30)
        assert not t.is_alive()
    assert later == [1]


def test_past_the_changes_kept_older_generations_count_as_changed(
    make_tree: Callable[..., Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """What a long life of new names would grow without end is bounded: past `CHANGES_KEPT`
    paths, a look from an older generation is told to look again, never told nothing changed."""
    monkeypatch.setattr(store_module, "CHANGES_KEPT", 2)
    folder = make_tree(TREE)
    store = make_store(folder)
    (root,) = store.roots
    store.apply(root, batch_of(store, root))  # generation 1: three paths, past the two kept
    assert store.changed_after([".AGENTS/never-there.md"], 0)  # forgotten: look again
    assert not store.changed_after([".AGENTS/overview.md"], 1)  # since then: told exactly
    store.apply(root, Batch(removed={"notes/deploy.md"}))  # generation 2
    assert store.changed_after([".AGENTS/notes/deploy.md"], 1)
    assert not store.changed_after([".AGENTS/overview.md"], 1)
