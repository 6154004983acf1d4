"""Finding roots and labelling them."""

from __future__ import annotations

from pathlib import Path

import pytest

from corpus.catalog import load
from corpus.errors import RootNotFound
from corpus.roots import RootKind, Wanted, find_agents_roots, make_roots, named, relative_source, resolve
from tests.corpus.support import POSIX


def test_root_from_flag_then_env_then_cwd(tmp_path: Path) -> None:
    (tmp_path / "flag").mkdir()
    (tmp_path / "env").mkdir()
    assert find_agents_roots(["flag"], {"AGENTS_CONTEXT_ROOT": "env"}, tmp_path) == [tmp_path / "flag"]
    assert find_agents_roots([], {"AGENTS_CONTEXT_ROOT": "env"}, tmp_path) == [tmp_path / "env"]
    assert find_agents_roots([], {}, tmp_path) == []
    (tmp_path / ".agents").mkdir()
    assert find_agents_roots([], {}, tmp_path) == [tmp_path / ".agents"]
    (tmp_path / ".AGENTS").mkdir()
    assert [p.name for p in find_agents_roots([], {}, tmp_path)] in ([".AGENTS"], [".agents"])
    with pytest.raises(RootNotFound, match="does not exist"):
        find_agents_roots(["missing"], {}, tmp_path)


@pytest.mark.skipif(not POSIX, reason="symlinks need privileges on Windows")
def test_a_symlinked_root_is_resolved_once(tmp_path: Path) -> None:
    real = tmp_path / "real-agents"
    real.mkdir()
    (real / "a.md").write_text("a\n")
    link = tmp_path / ".AGENTS"
    link.symlink_to(real)
    (root,) = make_roots([link])
    assert root.path == real.resolve()
    assert root.label == ".AGENTS"  # paths show the name the user knows, not the link's target
    assert [f.rel for f in load([root]).files.values()] == ["a.md"]


def test_labels_are_folder_names_told_apart_by_the_folders_above(tmp_path: Path) -> None:
    for d in ("a/.AGENTS", "a/docs", "b/docs", "c/Docs", "d/x/guide", "d/y/guide", "e/x/guide"):
        (tmp_path / d).mkdir(parents=True)
    docs = ["a/docs", "b/docs", "c/Docs", "d/x/guide", "d/y/guide", "e/x/guide"]
    roots = make_roots([tmp_path / "a/.AGENTS"], [tmp_path / d for d in docs])
    assert [(r.label, r.kind) for r in roots] == [
        (".AGENTS", RootKind.AGENTS),
        ("a", RootKind.DOCS),  # docs, docs and Docs (one name on macOS and Windows): their parents
        ("b", RootKind.DOCS),
        ("c", RootKind.DOCS),
        ("guide", RootKind.DOCS),  # no single folder above tells d/x from both d/y and e/x
        ("y", RootKind.DOCS),
        ("e", RootKind.DOCS),
    ]


def test_the_same_folder_twice_is_made_unique_with_a_number(tmp_path: Path) -> None:
    (tmp_path / "a/docs").mkdir(parents=True)
    roots = make_roots([], [tmp_path / "a/docs", tmp_path / "a/docs"])
    assert [r.label for r in roots] == ["docs", "docs-2"]


def test_a_root_can_be_named(tmp_path: Path) -> None:
    for d in ("packages/api/.AGENTS", "packages/web/.AGENTS"):
        (tmp_path / d).mkdir(parents=True)
    given = [named("server=" + str(tmp_path / "packages/api/.AGENTS")), named(str(tmp_path / "packages/web/.AGENTS"))]
    assert given[1][0] is None
    roots = resolve([Wanted(RootKind.AGENTS, Path(folder), name) for name, folder in given])
    assert [r.label for r in roots] == ["server", ".AGENTS"]
    (tmp_path / "a=b").mkdir()
    assert named(str(tmp_path / "a=b")) == (None, str(tmp_path / "a=b"))  # an existing folder is a folder
    assert named("no/slash=x") == (None, "no/slash=x")
    with pytest.raises(RootNotFound, match="same NAME"):
        resolve([Wanted(RootKind.AGENTS, tmp_path / "packages/api/.AGENTS", "x"), Wanted(RootKind.DOCS, tmp_path, "X")])


def test_a_source_path_is_resolved_before_it_is_placed_in_the_project(tmp_path: Path) -> None:
    """`src/../../etc/passwd` is outside the project, not under `src/`: a path is resolved first,
    from the working folder, else from the project; one that leaves it is nowhere."""
    project = tmp_path / "shop"
    (project / "src").mkdir(parents=True)
    (project / "AGENTS.md").write_text("# A\n")
    (root,) = make_roots([], conventional=project)
    assert relative_source(root, "src/api/auth.py", project) == "src/api/auth.py"
    assert relative_source(root, "src/api/auth.py", tmp_path / "elsewhere") == "src/api/auth.py"  # from the project
    assert relative_source(root, str(project / "src/./x/../auth.py")) == "src/auth.py"
    for outside in (
        "src/../../etc/passwd",
        "../shop2/x.py",
        "src/../..",
        str(project / "src/../../x.py"),
        "/etc/passwd",
    ):
        assert relative_source(root, outside, project) is None, outside
        assert relative_source(root, outside, tmp_path / "elsewhere") is None, outside
    assert relative_source(root, ".", project) is None  # the project itself is not a file of it


@pytest.mark.skipif(not POSIX, reason="symlinks need privileges on Windows")
def test_a_source_path_through_a_link_is_where_the_link_leads(tmp_path: Path) -> None:
    project = tmp_path / "shop"
    (project / "src").mkdir(parents=True)
    (tmp_path / "outside").mkdir()
    (project / "src" / "out").symlink_to(tmp_path / "outside")
    (project / "src" / "here").symlink_to(project / "src")
    (project / "loop").symlink_to(project / "loop")
    (root,) = make_roots([], conventional=project)
    assert relative_source(root, "src/out/x.py", project) is None
    assert relative_source(root, "src/here/x.py", project) == "src/x.py"
    assert relative_source(root, "loop/x.py", project) == "loop/x.py"  # a loop: as written
    assert relative_source(root, "loop/../../x.py", project) is None
