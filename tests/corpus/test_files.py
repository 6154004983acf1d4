"""A root's files as columns: each file made when asked for, equal to the one put in, and the
table over them that the live index changes in place."""

from __future__ import annotations

import weakref
from array import array
from collections.abc import Callable
from pathlib import Path

import pytest

from corpus.catalog import load
from corpus.files import CorpusFile, FileColumns, FileTable
from corpus.roots import make_roots

ALWAYS = "---\ntitle: Style\nalwaysApply: true\n---\n# Style\n\nUse tabs.\n"


def files_of(tree: Path, docs: bool = False) -> list[CorpusFile]:
    roots = make_roots([], [tree]) if docs else make_roots([tree])
    return sorted(load(roots).files.values(), key=lambda f: f.rel)


def test_columns_give_back_each_file_as_it_was_put_in(make_tree: Callable[..., Path]) -> None:
    files = files_of(make_tree({"style.md": ALWAYS, "b.md": "# B\n", "sub/c.md": "# C\n\ntext\n"}))
    columns = FileColumns.of(files[0].root, files)
    assert list(columns) == files and columns[-1] == files[-1] and columns[1:] == files[1:]
    assert [f.text for f in columns] == [f.text for f in files] and all(f.held for f in columns)
    assert next(f for f in columns if f.rel == "style.md").pinned and columns[0].meta.title is None
    assert [columns.stamp(i) for i in range(len(files))] == [f.stamp for f in files]
    assert columns.paths == [f.path for f in files]


def test_a_docs_roots_columns_hold_no_text(make_tree: Callable[..., Path]) -> None:
    files = [f.without_text() for f in files_of(make_tree({"a.md": "# A\n", "b.md": "# B\n"}, name="docs"), True)]
    columns = FileColumns.of(files[0].root, files)
    assert list(columns) == files and not any(f.held for f in columns)
    with pytest.raises(ValueError, match="either all hold their text or none"):
        FileColumns.of(files[0].root, [files[0], files_of(make_tree({"c.md": "# C\n"}, name="docs"), True)[0]])


def test_columns_that_disagree_are_refused(make_tree: Callable[..., Path]) -> None:
    (f,) = files_of(make_tree({"a.md": "# A\n"}))
    with pytest.raises(ValueError, match="the files' columns disagree"):  # two paths, one file's stamp
        FileColumns(f.root, [f.path, f.path], array("q", f.stamp), bytes(16), bytes(1))


def test_the_table_keeps_one_file_per_path_whether_adopted_or_set(make_tree: Callable[..., Path]) -> None:
    first = files_of(make_tree({"a.md": "# A\n", "b.md": "# B\n", "c.md": "# C\n"}))
    root = first[0].root
    table = FileTable(root)
    table.adopt(FileColumns.of(root, first))
    assert dict(table) == {f.rel: f for f in first} and len(table) == 3 and "a.md" in table
    changed = first[1]._replace(size=99, digest="0" * 32)
    table["b.md"] = changed  # the watcher read it again: the dict over the columns holds it
    table["d.md"] = first[0]._replace(rel="d.md", path=f"{root.label}/d.md")
    del table["c.md"]
    assert sorted(table) == ["a.md", "b.md", "d.md"] and table["b.md"] == changed and "c.md" not in table
    assert table.stamp_of("b.md") == (99, changed.mtime_ns, changed.ctime_ns)
    assert table.stamp_of("a.md") == first[0].stamp and table.stamp_of("c.md") is None
    with pytest.raises(KeyError):
        del table["c.md"]
    table.adopt([changed._replace(size=7), first[2]])  # a later chunk: its files replace any there
    assert len(table) == 4 and table["b.md"].size == 7 and table["c.md"] == first[2]
    assert sorted(f.rel for f in table.values()) == ["a.md", "b.md", "c.md", "d.md"]


def test_a_table_lets_go_of_columns_no_file_is_in(make_tree: Callable[..., Path]) -> None:
    files = files_of(make_tree({"a.md": "# A\n", "b.md": "# B\n"}))
    table = FileTable(files[0].root)
    first = FileColumns.of(files[0].root, files)
    table.adopt(first)
    gone = weakref.ref(first)
    del first
    table.adopt(files)  # every file again, in new columns: the first are freed
    assert gone() is None and dict(table) == {f.rel: f for f in files}


def test_files_give_the_agents_files_and_those_a_path_keeps_without_the_others(make_tree: Callable[..., Path]) -> None:
    agents = make_tree({"overview.md": "# O\n"})
    docs = make_tree({"a.md": "# A\n", "sub/b.md": "# B\n\nmore\n"}, name="docs")
    corpus = load(make_roots([agents], [docs]))
    label = corpus.roots[1].label
    table = corpus.files.of(label)
    table.adopt([f.without_text() for f in table.values()])  # as a restored docs root holds them
    assert [f.rel for f in corpus.files.agents()] == ["overview.md"]
    assert [f.path for f in corpus.files.where(lambda p: p.startswith(f"{label}/sub/"))] == [f"{label}/sub/b.md"]
    assert sorted(corpus.files) == sorted(
        [f"{corpus.roots[0].label}/overview.md", f"{label}/a.md", f"{label}/sub/b.md"]
    )
    a_size, b_size = (docs / "a.md").stat().st_size, (docs / "sub" / "b.md").stat().st_size
    assert table.total_size() == a_size + b_size
    table["a.md"] = table["a.md"]  # read again: its record over the base's row
    assert table.total_size() == a_size + b_size
    del table["sub/b.md"]  # deleted: its row in the base no longer counts
    assert table.total_size() == a_size
